/* compute_dyn_index.c — compute rules (ops/compute.h) of the dyn ops whose
 * tensor arguments decide where elements are read from, in the cases the
 * result type alone decides it: dyn.tile and dyn.image.resize2d (inline).
 *
 * With a constant argument the relation (ops/dyn.c) gives the result real
 * dims, and these ops need nothing more: dyn.tile's repetitions are the
 * result's dims over the data's (a data dim of 0 gives a result dim of 0,
 * nothing to read), and dyn.image.resize2d's sizes are the result's H and
 * W; its roi tensor is read only by the tf_crop_and_resize coordinates,
 * which the rule leaves to the kernel.  The reference kernel of
 * dyn.image.resize2d never uses static resize2d's integer-division form
 * for nearest "asymmetric" (its sizes are not constants to TVM), and
 * neither does the rule.  dyn.strided_slice and dyn.nn.pad have no rule:
 * their begin and pad widths are not in any type. */
#include "ops/compute_image.h"
#include "ops/families.h"

/* ───────────────────────────── dyn.tile ───────────────────────────── */

/* Result index i reads the data at i % dim (aux[o]: 1 when the result dim
 * o is the data's own, so no remainder); leading result dims the data
 * lacks are dropped. */
static PrimExpr *at_dyn_tile(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int j = 0; j < x->ndim; j++) {
    int o = t->ndim - x->ndim + j;
    sub[j] = t->aux[o] ? idx[o] : lc_bin(L, PB_MOD, idx[o], x->shape[j]);
  }
  return lc_at(L, x, sub);
}

LTensor *compute_dyn_tile(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const Type *ty = lc_result_type(call);
  const LTensor *x = in[0];
  int m = ty->u.tensor.ndim;
  if (nin != 2 || x->ndim > m) return lc_fail(L, "dyn.tile: operands");
  PrimExpr *shape[TENSOR_MAX_RANK];
  int64_t same[TENSOR_MAX_RANK];
  for (int o = 0; o < m; o++) {
    Dim d = ty->u.tensor.dims[o];
    if (d.kind != DIM_CONST) return lc_fail(L, "dyn.tile: a result dim known only at run time");
    shape[o] = lc_int(L, d.value);
    int j = o - (m - x->ndim);
    int64_t xd = j >= 0 ? lc_const(x->shape[j]) : 1;
    if (j >= 0 && xd < 0) return lc_fail(L, "dyn.tile of a dynamic dim");
    same[o] = xd == d.value || xd == 0; /* 0: an empty result, never read */
  }
  LTensor *t = lc_tensor(L, call, x->dtype, m, shape);
  t->in = in, t->nin = nin, t->at = at_dyn_tile;
  for (int o = 0; o < m; o++) t->aux[o] = same[o];
  return t;
}

/* ─────────────────────────── dyn.image.resize2d ─────────────────────────── */

/* image.resize2d's rule on the dyn call (same attributes; the size is the
 * result type's), without the integer-division form. */
LTensor *compute_dyn_resize2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  RelCtx cx = {.arena = lc_arena(L), .op = ops_get(call->u.call.fn->u.op.index)};
  cx.op_name = cx.op->name;
  ResizeSpec s;
  if (nin != 3 || !image_resize_spec(&cx, call->u.call.attrs, 2, &s))
    return lc_fail(L, "dyn.image.resize2d: attributes");
  if (s.coord == COORD_TF_CROP_AND_RESIZE)
    return lc_fail(L, "dyn.image.resize2d: tf_crop_and_resize reads its roi tensor");
  return image_resize_rule(L, call, in, 1, 2, false);
}
