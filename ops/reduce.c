/* reduce.c — op family "reduce": sum mean max min prod argmax argmin.
 *
 * Attributes follow TVM's ReduceAttrs / ArgReduceAttrs: axis (None = all
 * axes; an int or a list; negative counts from the end), keepdims (reduced
 * axes stay as 1), exclude (reduce the axes NOT listed).  An empty list
 * reduces nothing, as in TVM.  argmax/argmin give int32 indices.
 * Kernels and compute rules come later. */
#include "ops/families.h"

static const Span no_span;

/* Marks the reduced axes of a rank-`ndim` tensor; false after rel_fail. */
static bool reduced_axes(RelCtx *cx, const Attrs *attrs, int ndim, bool *red) {
  bool all = rel_attr_is_none(cx, attrs, "axis");
  for (int i = 0; i < ndim; i++) red[i] = all;
  if (all) return !cx->err[0];
  int64_t ax[TENSOR_MAX_RANK];
  int n = rel_attr_ints(cx, attrs, "axis", ax, TENSOR_MAX_RANK);
  if (n < 0) return false;
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, ax[i], ndim);
    if (a < 0) return false;
    if (red[a]) {
      rel_fail(cx, "%s: axis %d is listed twice", cx->op_name, a);
      return false;
    }
    red[a] = true;
  }
  if (rel_attr_bool(cx, attrs, "exclude"))
    for (int i = 0; i < ndim; i++) red[i] = !red[i];
  return !cx->err[0];
}

static Type *reduce(RelCtx *cx, Type **args, const Attrs *attrs, DType out) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int ndim = x->u.tensor.ndim, n = 0;
  bool red[TENSOR_MAX_RANK];
  if (!reduced_axes(cx, attrs, ndim, red)) return NULL;
  bool keep = rel_attr_bool(cx, attrs, "keepdims");
  Dim dims[TENSOR_MAX_RANK];
  for (int i = 0; i < ndim; i++) {
    if (!red[i])
      dims[n++] = x->u.tensor.dims[i];
    else if (keep)
      dims[n++] = dim_const(1);
  }
  if (cx->err[0]) return NULL;
  return type_tensor(cx->arena, out == DT_INVALID ? x->u.tensor.dtype : out, n, dims, no_span);
}

static Type *rel_reduce(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  return reduce(cx, args, attrs, DT_INVALID);
}

static Type *rel_argreduce(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  return reduce(cx, args, attrs, DT_INT32);
}

static const OpAttrSpec reduce_attrs[] = {
    {"axis", AV_LIST, "None"}, {"keepdims", AV_BOOL, "False"}, {"exclude", AV_BOOL, "False"}, {0}};
static const OpAttrSpec argreduce_attrs[] = {{"axis", AV_LIST, "None"},
                                             {"keepdims", AV_BOOL, "False"},
                                             {"select_last_index", AV_BOOL, "False"},
                                             {"exclude", AV_BOOL, "False"},
                                             {0}};

/* X(name, rel, attrs, compute rule, doc) */
#define REDUCE_OPS(X)                                                               \
  X("sum", rel_reduce, reduce_attrs, compute_sum, "sum over axes (axis=None: all)") \
  X("mean", rel_reduce, reduce_attrs, compute_mean, "arithmetic mean over axes")    \
  X("max", rel_reduce, reduce_attrs, compute_max, "maximum over axes")              \
  X("min", rel_reduce, reduce_attrs, compute_min, "minimum over axes")              \
  X("prod", rel_reduce, reduce_attrs, compute_prod, "product over axes")            \
  X("argmax", rel_argreduce, argreduce_attrs, compute_argmax,                       \
    "int32 index of the maximum along axes")                                        \
  X("argmin", rel_argreduce, argreduce_attrs, compute_argmin,                       \
    "int32 index of the minimum along axes")

#define ENTRY(n, r, a, c, d) {n, 1, 1, OPAT_COMM_REDUCE, a, r, d, false, .compute = c},

/* clang-format off */
const OpDef ops_family_reduce[] = {
    REDUCE_OPS(ENTRY)
    {0},
};
/* clang-format on */
