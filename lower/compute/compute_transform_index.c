/* compute_transform_index.c — compute rules (lower/compute/compute.h) of the
 * injective ops of transform_index.c that read by index: gather, gather_nd,
 * unravel_index, adv_index.
 *
 * Inline, as the reference kernels (kernels/kernels_transform_index.c)
 * compute: an index k along an axis of size n reads k + n when negative;
 * an index still outside the axis is an error in both modes (the kernels
 * say which index; compiled code fails its bounds check on the load).
 * unravel_index divides with floor semantics, and a zero in the shape is a
 * division by zero in both modes. */
#include <stdint.h>
#include <string.h>

#include "lower/compute/compute.h"

static PrimExpr *i64(LowerCx *L, PrimExpr *e) {
  return e->kind == PE_INT ? lc_int(L, e->u.i) : lc_cast(L, DT_INT64, e);
}

/* k + n when k < 0. */
static PrimExpr *wrap_negative(LowerCx *L, PrimExpr *k, PrimExpr *n) {
  k = i64(L, k);
  PrimExpr *neg = lc_bin(L, PB_LT, k, lc_int(L, 0));
  return lc_call(L, PI_SELECT, neg, lc_bin(L, PB_ADD, k, i64(L, n)), k);
}

static LTensor *index_op(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape,
                         LTensor **in, int nin, LAtFn at) {
  if (!lc_elem_dtype_ok(dt) || !dtype_is_int(in[1]->dtype))
    return lc_fail(L, "%s: dtypes", call->u.call.fn->u.op.name);
  LTensor *t = lc_tensor(L, call, dt, ndim, shape);
  t->in = in, t->nin = nin, t->at = at;
  return t;
}

/* ───────────────────────────── gather ───────────────────────────── */

static PrimExpr *at_gather(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int a = (int)t->aux[0];
  const LTensor *x = t->in[0];
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int d = 0; d < t->ndim; d++) sub[d] = idx[d];
  sub[a] = wrap_negative(L, lc_at(L, t->in[1], idx), x->shape[a]);
  return lc_at(L, x, sub);
}

static LTensor *compute_gather(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  if (op_attr_is_none(call, "axis") || in[1]->ndim != n) return lc_fail(L, "gather: axis");
  int64_t a = op_attr_int(call, "axis");
  if (a < 0) a += n;
  if (a < 0 || a >= n) return lc_fail(L, "gather: axis");
  LTensor *t = index_op(L, call, in[0]->dtype, n, in[1]->shape, in, nin, at_gather);
  if (t) t->aux[0] = a;
  return t;
}

/* ───────────────────────────── gather_nd ───────────────────────────── */

/* aux[0] = M (index tuple size), aux[1] = batch dims, aux[2] = K (index dims). */
static PrimExpr *at_gather_nd(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int m = (int)t->aux[0], b = (int)t->aux[1], k = (int)t->aux[2];
  const LTensor *x = t->in[0], *ix = t->in[1];
  PrimExpr *sub[TENSOR_MAX_RANK], *isub[TENSOR_MAX_RANK + 1];
  for (int d = 0; d < k; d++) isub[d + 1] = idx[d];
  for (int d = 0; d < b; d++) sub[d] = idx[d];
  for (int j = 0; j < m; j++) {
    isub[0] = lc_int(L, j);
    sub[b + j] = wrap_negative(L, lc_at(L, ix, isub), x->shape[b + j]);
  }
  for (int d = b + m; d < x->ndim; d++) sub[d] = idx[k + d - (b + m)];
  return lc_at(L, x, sub);
}

static LTensor *compute_gather_nd(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const LTensor *x = in[0], *ix = in[1];
  int64_t m = ix->ndim ? lc_const(ix->shape[0]) : -1, b = op_attr_int(call, "batch_dims");
  int k = ix->ndim - 1;
  if (m < 0 || b < 0 || b > k || m + b > x->ndim) return lc_fail(L, "gather_nd: shapes");
  PrimExpr *shape[TENSOR_MAX_RANK];
  int o = 0;
  for (int d = 1; d <= k; d++) shape[o++] = ix->shape[d];
  for (int d = (int)(m + b); d < x->ndim; d++) shape[o++] = x->shape[d];
  LTensor *t = index_op(L, call, x->dtype, o, shape, in, nin, at_gather_nd);
  if (t) t->aux[0] = m, t->aux[1] = b, t->aux[2] = k;
  return t;
}

/* ─────────────────────────── unravel_index ─────────────────────────── */

/* Floor division and remainder of a by b (b != 0), as Python's // and %. */
static PrimExpr *floor_mod(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  PrimExpr *r = lc_bin(L, PB_MOD, a, b), *zero = lc_int(L, 0);
  PrimExpr *fix = lc_bin(L, PB_AND, lc_bin(L, PB_NE, r, zero),
                         lc_bin(L, PB_NE, lc_bin(L, PB_LT, r, zero), lc_bin(L, PB_LT, b, zero)));
  return lc_call(L, PI_SELECT, fix, lc_bin(L, PB_ADD, r, b), r);
}

static PrimExpr *floor_div(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  return lc_bin(L, PB_DIV, lc_bin(L, PB_SUB, a, floor_mod(L, a, b)), b);
}

/* Coordinate i of index v: v floor-divided by the dims after i, then
 * floor-modulo dim i (TVM's order: innermost dim first). */
static PrimExpr *at_unravel(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *ix = t->in[0], *sh = t->in[1];
  int nd = (int)t->aux[0];
  PrimExpr *v = i64(L, lc_at(L, ix, ix->ndim ? &idx[1] : NULL)), *r = lc_int(L, 0);
  for (int d = nd - 1; d >= 0; d--) {
    PrimExpr *di = lc_int(L, d), *s = i64(L, lc_at(L, sh, &di));
    r = lc_call(L, PI_SELECT, lc_bin(L, PB_EQ, i64(L, idx[0]), di), floor_mod(L, v, s), r);
    if (d) v = floor_div(L, v, s);
  }
  return lc_cast(L, t->dtype, r);
}

static LTensor *compute_unravel_index(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t nd = lc_const(in[1]->shape[0]);
  if (nd < 0 || nd > 64 || in[0]->ndim > 1) return lc_fail(L, "unravel_index: a dynamic shape");
  PrimExpr *shape[2] = {in[1]->shape[0], in[0]->ndim ? in[0]->shape[0] : NULL};
  LTensor *t = index_op(L, call, in[0]->dtype, 1 + in[0]->ndim, shape, in, nin, at_unravel);
  if (t) t->aux[0] = nd;
  return t;
}

/* ───────────────────────────── adv_index ───────────────────────────── */

/* aux[0] = the indices' broadcast rank, aux[1] = how many indices. */
static PrimExpr *at_adv_index(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int nb = (int)t->aux[0], ni = (int)t->aux[1];
  const LTensor *x = t->in[0];
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int i = 0; i < ni; i++)
    sub[i] =
        wrap_negative(L, lc_bcast_at(L, t->in[i + 1], nb, (PrimExpr **)t->shape, idx), x->shape[i]);
  for (int d = ni; d < x->ndim; d++) sub[d] = idx[nb + d - ni];
  return lc_at(L, x, sub);
}

/* adv_index inline: the indices' broadcast shape, then the data dims they
 * do not index; each output element reads the data at the indices there. */
static LTensor *compute_adv_index(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int ni = nin - 1, nb = 0;
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (ni < 1 || ni > in[0]->ndim) return lc_fail(L, "adv_index: %d indices", ni);
  for (int i = 1; i < nin; i++)
    if (!dtype_is_int(in[i]->dtype)) return lc_fail(L, "adv_index: dtypes");
  if (!lc_broadcast(L, in + 1, ni, &nb, shape)) return NULL;
  if (nb + in[0]->ndim - ni > TENSOR_MAX_RANK) return lc_fail(L, "adv_index: rank");
  for (int d = ni; d < in[0]->ndim; d++) shape[nb + d - ni] = in[0]->shape[d];
  if (!lc_buffer_dtype_ok(in[0]->dtype)) /* a copy: any dtype */
    return lc_fail(L, "adv_index of %s", dtype_name(in[0]->dtype));
  LTensor *t = lc_tensor(L, call, in[0]->dtype, nb + in[0]->ndim - ni, shape);
  t->in = in, t->nin = nin, t->at = at_adv_index;
  t->aux[0] = nb, t->aux[1] = ni;
  return t;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_transform_index[] = {
    {"gather", compute_gather},
    {"gather_nd", compute_gather_nd},
    {"unravel_index", compute_unravel_index},
    {"adv_index", compute_adv_index},
    {NULL, NULL},
};
