/* numeric.c — op family "numeric": linear algebra and signal processing
 * ops that no other family holds: det (the determinant of square matrices,
 * batched over leading axes).  Their kernels are in
 * kernels/kernels_numeric.c; none has a compute rule, so both execution
 * modes run the reference kernel. */
#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

/* det: x [..., n, n] of a float dtype → [...]. */
static Type *rel_det(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim;
  if (!dtype_is_float(x->u.tensor.dtype) || n < 2)
    return rel_fail(cx, "det: x must be a float tensor of rank at least 2, got %s",
                    rel_type_str(cx, x));
  if (!rel_unify_dim(cx, x->u.tensor.dims[n - 2], x->u.tensor.dims[n - 1]))
    return rel_fail(cx, "det: the matrices must be square, got %s", rel_type_str(cx, x));
  return type_tensor(cx->arena, x->u.tensor.dtype, n - 2, x->u.tensor.dims, no_span);
}

const OpDef ops_family_numeric[] = {
    {"det", 1, 1, OPAT_OPAQUE, no_attrs, rel_det, "determinant of the last two axes' matrices",
     false, .args = "x",
     .rule = "x's dtype (a float), its shape without the last two axes, which must be equal",
     .example = "det([[1f, 2f], [3f, 4f]])"},
    {0},
};
