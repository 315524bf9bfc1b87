/* compute_dyn_index.c — compute rules (lower/compute/compute.h) of the dyn ops whose
 * tensor arguments decide where elements are read from: dyn.tile,
 * dyn.image.resize2d, dyn.strided_slice and dyn.nn.pad (inline).
 *
 * With a constant argument the relation (ops/dyn.c) gives the result real
 * dims.  dyn.tile and dyn.image.resize2d need nothing more: dyn.tile's
 * repetitions are the result's dims over the data's (a data dim of 0 gives
 * a result dim of 0, nothing to read), and dyn.image.resize2d's sizes are
 * the result's H and W; its roi tensor is read only by the
 * tf_crop_and_resize coordinates, which a constant roi gives, and its
 * scales tensor (a fourth argument) by the coordinates, as a constant.
 * The reference kernel of dyn.image.resize2d never uses static resize2d's
 * integer-division form for nearest "asymmetric" (its sizes are not
 * constants to TVM), and neither does the rule.
 *
 * dyn.strided_slice's begin, end and strides, dyn.nn.pad's widths and the
 * roi are in no type: those ops are flagged OP_VALUE_ARGS, so FuseOps keeps
 * their constant arguments in the fused body, and the rules read the values
 * (lc_const_value) into the static op's attributes, as the relation and
 * the kernel rebuild them, then apply the static op's rule. */
#include "lower/compute/compute_image.h"
#include "ops/dyn.h"
#include "ops/nn_int.h"

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

static LTensor *compute_dyn_tile(LowerCx *L, const Expr *call, LTensor **in, int nin) {
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

/* ──────────────────── static attributes from constants ──────────────────── */

/* A copy of call with the static op's attributes keys[i] = vals[i]. */
static Expr *with_static_attrs(LowerCx *L, RelCtx *cx, const Expr *call, int n, const char **keys,
                               AttrValue **vals) {
  Expr *c = expr_copy(lc_arena(L), call);
  c->u.call.attrs = dyn_with_attrs(cx, call->u.call.attrs, n, keys, vals);
  return c;
}

/* ─────────────────────────── dyn.image.resize2d ─────────────────────────── */

/* The roi tensor's 4 values as the attribute, rounded to float32 as the
 * kernel reads them. */
static AttrValue *roi_attr(LowerCx *L, const Tensor *v) {
  Arena *a = lc_arena(L);
  AttrValue *r = ARENA_NEW(a, AttrValue);
  r->kind = AV_LIST, r->u.list.n = (int)v->numel;
  r->u.list.items = ARENA_ARRAY(a, AttrValue *, v->numel + 1);
  for (int64_t i = 0; i < v->numel; i++)
    r->u.list.items[i] = attr_float(a, (double)(float)tensor_get_f64(v, i), DT_FLOAT32);
  return r;
}

/* image.resize2d's rule on the dyn call (same attributes; the size is the
 * result type's), without the integer-division form; tf_crop_and_resize
 * takes its roi from a constant roi tensor. */
static LTensor *compute_dyn_resize2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  ResizeSpec s;
  if (nin < 3 || nin > 4 || !image_resize_spec(&cx, call->u.call.attrs, 2, &s))
    return lc_fail(L, "dyn.image.resize2d: attributes");
  const char *keys[2];
  AttrValue *vals[2];
  int n = 0;
  if (s.coord == COORD_TF_CROP_AND_RESIZE) {
    const Tensor *roi = lc_const_value(in[2]);
    if (!roi || roi->numel != 4)
      return lc_fail(L, "dyn.image.resize2d: a roi known only at run time");
    keys[n] = "roi", vals[n++] = roi_attr(L, roi);
  }
  if (nin == 4) {
    const Tensor *sc = lc_const_value(in[3]);
    if (!sc || sc->numel != 2)
      return lc_fail(L, "dyn.image.resize2d: scales known only at run time");
    keys[n] = "scales", vals[n++] = roi_attr(L, sc);
  }
  if (!n) return image_resize_rule(L, call, in, 1, 2, false);
  return image_resize_rule(L, with_static_attrs(L, &cx, call, n, keys, vals), in, 1, 2, false);
}

/* ──────────────────── dyn.strided_slice, dyn.nn.pad ──────────────────── */

/* begin, end (and strides) from constants into strided_slice's rule. */
static LTensor *compute_dyn_strided_slice(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  static const char *keys[3] = {"begin", "end", "strides"};
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  AttrValue *vals[3];
  for (int i = 1; i < nin; i++) {
    const Tensor *v = lc_const_value(in[i]);
    if (!v) return lc_fail(L, "dyn.strided_slice: %s known only at run time", keys[i - 1]);
    vals[i - 1] = dyn_list_of(&cx, v);
  }
  return compute_strided_slice(L, with_static_attrs(L, &cx, call, nin - 1, keys, vals), in, 1);
}

/* pad_width from a constant into nn.pad's rule (data and pad value). */
static LTensor *compute_dyn_pad(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const char *key = "pad_width";
  const Tensor *v = nin == 3 ? lc_const_value(in[1]) : NULL;
  if (!v) return lc_fail(L, "dyn.nn.pad: pad_width known only at run time");
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  AttrValue *val = dyn_pairs_of(&cx, v);
  LTensor **sin = ARENA_ARRAY(lc_arena(L), LTensor *, 2); /* the rule keeps its operands */
  sin[0] = in[0], sin[1] = in[2];
  return compute_pad(L, with_static_attrs(L, &cx, call, 1, &key, &val), sin, 2);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_dyn_index[] = {
    {"dyn.strided_slice", compute_dyn_strided_slice},
    {"dyn.tile", compute_dyn_tile},
    {"dyn.nn.pad", compute_dyn_pad},
    {"dyn.image.resize2d", compute_dyn_resize2d},
    {NULL, NULL},
};
