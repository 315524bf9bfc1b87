/* compute_const.c — constant tensors as rule operands (lower/compute/compute.h):
 * the constant arguments FuseOps keeps in a fused body for an op whose rule
 * reads their values (OP_VALUE_ARGS: dyn.strided_slice's begin, dyn.nn.pad's
 * widths).  The rule reads the value (lc_const_value); an element read
 * through lc_at is a literal at a constant index, else a select over the
 * elements of a small constant (a larger one fails the rule). */
#include "lower/compute/compute.h"

enum { SELECT_MAX = 64 }; /* elements a non-constant index may select among */

/* The literal of element k (row-major). */
static PrimExpr *element(LowerCx *L, const Tensor *v, int64_t k) {
  if (dtype_is_float(v->dtype)) return lc_lit(L, v->dtype, tensor_get_f64(v, k));
  PrimExpr *e = lc_lit(L, v->dtype, 0);
  e->u.i = tensor_get_i64(v, k);
  return e;
}

static PrimExpr *at_const(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const Tensor *v = t->call->u.konst.value;
  int64_t k = 0;
  bool fixed = true;
  for (int d = 0; d < v->ndim && fixed; d++) {
    fixed = lc_const(idx[d]) >= 0;
    k = k * v->shape[d] + lc_const(idx[d]);
  }
  if (fixed) return element(L, v, k);
  if (v->numel > SELECT_MAX) {
    lc_fail(L, "a constant of %lld elements read at a computed index", (long long)v->numel);
    return element(L, v, 0);
  }
  PrimExpr *flat = lc_int(L, 0), *r = element(L, v, 0);
  for (int d = 0; d < v->ndim; d++)
    flat = lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, flat, lc_int(L, v->shape[d])), idx[d]);
  for (int64_t e = 1; e < v->numel; e++)
    r = lc_call(L, PI_SELECT, lc_bin(L, PB_EQ, flat, lc_int(L, e)), element(L, v, e), r);
  return r;
}

LTensor *lc_const_tensor(LowerCx *L, const Expr *konst) {
  const Tensor *v = konst->u.konst.value;
  if (!lc_buffer_dtype_ok(v->dtype)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < v->ndim; d++) shape[d] = lc_int(L, v->shape[d]);
  LTensor *t = lc_tensor(L, konst, v->dtype, v->ndim, shape);
  t->at = at_const;
  return t;
}

const Tensor *lc_const_value(const LTensor *t) {
  return t->call && t->call->kind == EX_CONST && t->at == at_const ? t->call->u.konst.value : NULL;
}
