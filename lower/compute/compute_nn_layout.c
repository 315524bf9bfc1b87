/* compute_nn_layout.c — compute rules (lower/compute/compute.h) of the injective nn
 * ops of ops/nn_layout.c: nn.pad, nn.mirror_pad, nn.upsampling,
 * nn.upsampling3d, nn.depth_to_space, nn.space_to_depth,
 * nn.space_to_batch_nd, nn.batch_to_space_nd, nn.dilate.
 *
 * All inline: an output index maps to input indices (and for the
 * interpolating upsamplings to a few of them, weighted).  Every load's
 * index is clamped into the input even where a select then discards it,
 * since a select evaluates both sides; so an axis that is padded, mirrored
 * or read around must have a known, non-zero size, else the rule refuses
 * and the call stays with its reference kernel.  Result shapes come from
 * the result type (constants, or size variables of an operand; `?`
 * refuses).
 *
 * Upsampling follows TVM's resize in float32 step by step, as the
 * reference kernel does (kernels/kernels_nn_layout.c), so both pick the
 * same source pixels and weights: scale = in / out, asymmetric x * scale
 * (or integer division when out is a multiple of in), align_corners
 * (in - 1) / (out - 1) * x, half_pixel (x + 0.5) * scale - 0.5; nearest
 * takes floor(v + 1e-5) (round half to even for align_corners); bicubic
 * stays with the reference kernel. */
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/nn_int.h"

static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}

/* a + v for a literal v of any sign. */
static PrimExpr *plus(LowerCx *L, PrimExpr *a, int64_t v) {
  return v >= 0 ? lc_plus(L, a, lc_int(L, v)) : lc_minus(L, a, lc_int(L, -v));
}

/* max(0, min(e, n - 1)) */
static PrimExpr *clamp(LowerCx *L, PrimExpr *e, PrimExpr *n) {
  return lc_call(L, PI_MAX, lc_int(L, 0), lc_call(L, PI_MIN, e, lc_minus(L, n, lc_int(L, 1)), NULL),
                 NULL);
}

/* The result type's shape: literals, or size variables of an operand. */
static bool result_shape(LowerCx *L, const Expr *call, LTensor **in, int nin, PrimExpr **shape) {
  const Type *ty = lc_result_type(call);
  for (int d = 0; d < ty->u.tensor.ndim; d++) {
    Dim dm = ty->u.tensor.dims[d];
    shape[d] = dm.kind == DIM_CONST ? lc_int(L, dm.value) : NULL;
    for (int i = 0; dm.kind == DIM_VAR && i < nin; i++)
      for (int j = 0; j < in[i]->ndim; j++)
        if (in[i]->shape[j]->kind == PE_VAR && strcmp(in[i]->shape[j]->u.var->name, dm.name) == 0)
          shape[d] = in[i]->shape[j];
    if (!shape[d])
      return lc_fail(L, "%s: a result dim known only at run time", call->u.call.fn->u.op.name),
             false;
  }
  return true;
}

/* The rules here move elements (any dtype); linear upsampling and dilate,
 * which compute values, check their dtypes themselves. */
static bool operand_ok(LowerCx *L, const Expr *call, const LTensor *x) {
  if (lc_elem_dtype_ok(x->dtype)) return true;
  lc_fail(L, "%s on %s", call->u.call.fn->u.op.name, dtype_name(x->dtype));
  return false;
}

/* An inline result with the result type's shape. */
static LTensor *inline_result(LowerCx *L, const Expr *call, LTensor **in, int nin, LAtFn at) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!operand_ok(L, call, in[0]) || !result_shape(L, call, in, nin, shape)) return NULL;
  const Type *ty = lc_result_type(call);
  LTensor *t = lc_tensor(L, call, ty->u.tensor.dtype, ty->u.tensor.ndim, shape);
  t->in = in, t->nin = nin, t->at = at;
  return t;
}

/* The call's attributes read as its relation reads them. */
static RelCtx *ctx_of(LowerCx *L, const LTensor *t, RelCtx *cx) {
  nn_call_ctx(cx, lc_arena(L), t->call);
  return cx;
}

/* Whether every axis with pad[i] set has a known, non-zero size. */
static bool sized_axes(LowerCx *L, const Expr *call, const LTensor *x, const bool *need) {
  for (int i = 0; i < x->ndim; i++)
    if (need[i] && lc_const(x->shape[i]) < 1)
      return lc_fail(L, "%s: axis %d has no known size", call->u.call.fn->u.op.name, i), false;
  return true;
}

/* ───────────────────────────── pads ───────────────────────────── */

enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC };

/* The input index along one axis for output index o (p = o - before). */
static PrimExpr *pad_index(LowerCx *L, int mode, PrimExpr *o, int64_t before, PrimExpr *n) {
  PrimExpr *p = plus(L, o, -before), *last = lc_minus(L, n, lc_int(L, 1));
  PrimExpr *neg = lc_bin(L, PB_LT, p, lc_int(L, 0)), *past = lc_bin(L, PB_GT, p, last);
  if (mode == PAD_REFLECT) /* -p, 2 (n - 1) - p */
    p = sel(L, neg, lc_minus(L, lc_int(L, 0), p),
            sel(L, past, lc_minus(L, lc_plus(L, last, last), p), p));
  else if (mode == PAD_SYMMETRIC) /* -p - 1, 2 n - 1 - p */
    p = sel(L, neg, lc_minus(L, lc_int(L, -1 + 0), p),
            sel(L, past, lc_minus(L, lc_plus(L, last, n), p), p));
  return clamp(L, p, n);
}

/* aux[0] = the mode; the widths are read back from the call. */
static PrimExpr *at_pad(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  RelCtx cx;
  int64_t pw[NN_MAX_PAIRS][2];
  nn_attr_pairs(ctx_of(L, t, &cx), t->call->u.call.attrs, "pad_width", pw, NN_MAX_PAIRS);
  PrimExpr *sub_idx[TENSOR_MAX_RANK], *inside = NULL;
  for (int i = 0; i < x->ndim; i++) {
    if (!pw[i][0] && !pw[i][1]) {
      sub_idx[i] = idx[i];
      continue;
    }
    sub_idx[i] = pad_index(L, (int)t->aux[0], idx[i], pw[i][0], x->shape[i]);
    if (t->aux[0] != PAD_CONSTANT) continue;
    PrimExpr *p = plus(L, idx[i], -pw[i][0]);
    PrimExpr *in_i =
        lc_bin(L, PB_AND, lc_bin(L, PB_GE, p, lc_int(L, 0)), lc_bin(L, PB_LT, p, x->shape[i]));
    inside = inside ? lc_bin(L, PB_AND, inside, in_i) : in_i;
  }
  PrimExpr *v = lc_at(L, x, sub_idx);
  if (!inside) return v;
  return sel(L, inside, v, lc_cast(L, x->dtype, lc_at(L, t->in[1], NULL)));
}

/* Shared by pad and mirror_pad: the mode, and the sized padded axes. */
static LTensor *pad_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, int mode) {
  RelCtx cx;
  int64_t pw[NN_MAX_PAIRS][2];
  nn_call_ctx(&cx, lc_arena(L), call);
  int n = nn_attr_pairs(&cx, call->u.call.attrs, "pad_width", pw, NN_MAX_PAIRS);
  if (n != in[0]->ndim) return lc_fail(L, "%s: pad_width", call->u.call.fn->u.op.name);
  bool need[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) need[i] = pw[i][0] || pw[i][1];
  /* an empty input padded with a constant has no element to read */
  if (!sized_axes(L, call, in[0], need)) return NULL;
  if (mode == PAD_CONSTANT && (nin != 2 || in[1]->ndim != 0 || !lc_elem_dtype_ok(in[1]->dtype)))
    return lc_fail(L, "nn.pad: the pad value");
  LTensor *t = inline_result(L, call, in, nin, at_pad);
  if (t) t->aux[0] = mode;
  return t;
}

LTensor *compute_pad(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const char *m = op_attr_str(lc_arena(L), call, "pad_mode");
  int mode = !strcmp(m, "edge") ? PAD_EDGE : !strcmp(m, "reflect") ? PAD_REFLECT : PAD_CONSTANT;
  return pad_rule(L, call, in, nin, mode);
}

static LTensor *compute_mirror_pad(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const char *m = op_attr_str(lc_arena(L), call, "mode");
  return pad_rule(L, call, in, nin, !strcmp(m, "REFLECT") ? PAD_REFLECT : PAD_SYMMETRIC);
}

/* ───────────────────────────── upsampling ───────────────────────────── */

enum { UP_NEAREST, UP_LINEAR };
enum { CT_ASYMMETRIC, CT_ALIGN, CT_HALF };

static PrimExpr *F(LowerCx *L, double v) { return lc_lit(L, DT_FLOAT32, v); }
static PrimExpr *f32(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_FLOAT32, e); }

/* nearbyint in float32 (ties to even), from floor. */
static PrimExpr *round_even(LowerCx *L, PrimExpr *v) {
  PrimExpr *r = lc_call(L, PI_FLOOR, v, NULL, NULL), *d = lc_minus(L, v, r);
  PrimExpr *r1 = lc_plus(L, r, F(L, 1));
  PrimExpr *half =
      lc_times(L, lc_call(L, PI_FLOOR, lc_times(L, r, F(L, 0.5)), NULL, NULL), F(L, 2));
  PrimExpr *tie = sel(L, lc_bin(L, PB_EQ, half, r), r, r1);
  return sel(L, lc_bin(L, PB_GT, d, F(L, 0.5)), r1, sel(L, lc_bin(L, PB_LT, d, F(L, 0.5)), r, tie));
}

/* The source coordinate (float32) of output index o along a dim of n
 * inputs and m outputs. */
static PrimExpr *src_coord(LowerCx *L, int ct, PrimExpr *o, int64_t n, int64_t m) {
  float scale = (float)n / (float)m;
  if (ct == CT_ALIGN) {
    if (m == 1) return F(L, 0);
    return lc_times(L, F(L, (float)(n - 1) / (float)(m - 1)), f32(L, o));
  }
  if (ct == CT_HALF)
    return lc_minus(L, lc_times(L, lc_plus(L, f32(L, o), F(L, 0.5)), F(L, scale)), F(L, 0.5));
  return lc_times(L, F(L, scale), f32(L, o));
}

/* The nearest source index, clamped. */
static PrimExpr *nearest(LowerCx *L, int ct, PrimExpr *o, int64_t n, int64_t m) {
  if (ct == CT_ASYMMETRIC && m % n == 0 && (double)(m / n) <= 1 / (1e-5 * (double)n + 1e-5))
    return clamp(L, lc_bin(L, PB_DIV, o, lc_int(L, m / n)), lc_int(L, n));
  PrimExpr *v = src_coord(L, ct, o, n, m);
  v = ct == CT_ALIGN ? round_even(L, v)
                     : lc_call(L, PI_FLOOR, lc_plus(L, v, F(L, 1e-5)), NULL, NULL);
  return clamp(L, lc_cast(L, DT_INT64, v), lc_int(L, n));
}

typedef struct Up {
  int S, method, ct;
  int pos[5]; /* layout positions: N, C, then the spatial dims */
} Up;

/* The attributes of an upsampling call (aux holds them for at_up). */
static bool up_attrs(LowerCx *L, const Expr *call, int S, Up *u) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  u->S = S;
  if (nn_layout_attr(&cx, call->u.call.attrs, "layout", S == 2 ? "NCHW" : "NCDHW", u->pos) < 0)
    return lc_fail(L, "upsampling: layout"), false;
  const char *m = op_attr_str(lc_arena(L), call, "method");
  if (!strcmp(m, "nearest_neighbor"))
    u->method = UP_NEAREST;
  else if (!strcmp(m, "bilinear") || !strcmp(m, "trilinear"))
    u->method = UP_LINEAR;
  else
    return lc_fail(L, "upsampling: method %s", m), false;
  if (S == 2) {
    u->ct = op_attr_bool(call, "align_corners") ? CT_ALIGN : CT_ASYMMETRIC;
  } else {
    const char *c = op_attr_str(lc_arena(L), call, "coordinate_transformation_mode");
    u->ct = !strcmp(c, "align_corners") ? CT_ALIGN
            : !strcmp(c, "asymmetric")  ? CT_ASYMMETRIC
                                        : CT_HALF;
  }
  return true;
}

static void up_unpack(const LTensor *t, Up *u) {
  u->S = (int)t->aux[0], u->method = (int)t->aux[1], u->ct = (int)t->aux[2];
  for (int i = 0; i < 2 + u->S; i++) u->pos[i] = (int)t->aux[3 + i];
}

/* A pixel at the given source indices (clamped) along the spatial dims. */
static PrimExpr *up_pixel(LowerCx *L, const LTensor *x, const Up *u, PrimExpr **idx,
                          PrimExpr **src) {
  PrimExpr *ix[TENSOR_MAX_RANK];
  for (int d = 0; d < x->ndim; d++) ix[d] = idx[d];
  for (int i = 0; i < u->S; i++) ix[u->pos[2 + i]] = clamp(L, src[i], x->shape[u->pos[2 + i]]);
  return f32(L, lc_at(L, x, ix));
}

/* A * (1 - t) + B * t in float32. */
static PrimExpr *lerp(LowerCx *L, PrimExpr *a, PrimExpr *b, PrimExpr *t) {
  return lc_plus(L, lc_times(L, a, lc_minus(L, F(L, 1), t)), lc_times(L, b, t));
}

/* Linear interpolation over the spatial dims from `dim` on (the last one,
 * width, innermost as in TVM); cur holds the source indices chosen for the
 * dims before: floor or floor + 1. */
static PrimExpr *lerp_dims(LowerCx *L, const LTensor *x, const Up *u, PrimExpr **idx, PrimExpr **lo,
                           PrimExpr **frac, int dim, PrimExpr **cur) {
  if (dim == u->S) return up_pixel(L, x, u, idx, cur);
  cur[dim] = lo[dim];
  PrimExpr *a = lerp_dims(L, x, u, idx, lo, frac, dim + 1, cur);
  cur[dim] = lc_plus(L, lo[dim], lc_int(L, 1));
  PrimExpr *b = lerp_dims(L, x, u, idx, lo, frac, dim + 1, cur);
  return lerp(L, a, b, frac[dim]);
}

/* The element at idx: per spatial dim a source index (nearest) or a floor
 * and a fraction (linear), then the pixel or the interpolation. */
static PrimExpr *at_up(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  Up u;
  up_unpack(t, &u);
  PrimExpr *src[NN_MAX_SPATIAL], *frac[NN_MAX_SPATIAL], *cur[NN_MAX_SPATIAL];
  for (int i = 0; i < u.S; i++) {
    int p = u.pos[2 + i];
    int64_t n = lc_const(x->shape[p]), m = lc_const(t->shape[p]);
    if (u.method == UP_NEAREST) {
      src[i] = nearest(L, u.ct, idx[p], n, m);
      continue;
    }
    PrimExpr *v = src_coord(L, u.ct, idx[p], n, m), *fl = lc_call(L, PI_FLOOR, v, NULL, NULL);
    src[i] = lc_cast(L, DT_INT64, fl), frac[i] = lc_minus(L, v, fl);
  }
  PrimExpr *r = u.method == UP_NEAREST ? up_pixel(L, x, &u, idx, src)
                                       : lerp_dims(L, x, &u, idx, src, frac, 0, cur);
  return lc_cast(L, t->dtype, r);
}

/* Upsampling needs static spatial sizes (they fix the coordinate maps). */
static LTensor *up_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, int S) {
  Up u;
  if (!up_attrs(L, call, S, &u)) return NULL;
  if (u.method != UP_NEAREST && !lc_elem_dtype_ok(in[0]->dtype)) /* in float32, cast back */
    return lc_fail(L, "linear upsampling of %s", dtype_name(in[0]->dtype));
  bool need[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < S; i++) need[u.pos[2 + i]] = true;
  if (!sized_axes(L, call, in[0], need)) return NULL;
  LTensor *t = inline_result(L, call, in, nin, at_up);
  if (!t) return NULL;
  t->aux[0] = S, t->aux[1] = u.method, t->aux[2] = u.ct;
  for (int i = 0; i < 2 + S; i++) t->aux[3 + i] = u.pos[i];
  return t;
}

static LTensor *compute_upsampling(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return up_rule(L, call, in, nin, 2);
}

static LTensor *compute_upsampling3d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return up_rule(L, call, in, nin, 3);
}

/* ───────────────────────── depth / space ───────────────────────── */

/* aux: block size, to_space, CRD, then the positions of N, C, H, W. */
static PrimExpr *at_subpixel(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  int64_t bs = t->aux[0];
  int pc = (int)t->aux[3], ph = (int)t->aux[4], pw = (int)t->aux[5];
  PrimExpr *ix[4], *b = lc_int(L, bs), *c = idx[pc], *y = idx[ph], *xx = idx[pw];
  for (int d = 0; d < 4; d++) ix[d] = idx[d];
  if (t->aux[1]) { /* depth_to_space: output (c, y, x) reads channel ... at (y / bs, x / bs) */
    PrimExpr *off = lc_plus(L, lc_times(L, b, lc_bin(L, PB_MOD, y, b)), lc_bin(L, PB_MOD, xx, b));
    ix[pc] = t->aux[2] ? lc_plus(L, lc_times(L, c, lc_int(L, bs * bs)), off)
                       : lc_plus(L, lc_times(L, t->shape[pc], off), c);
    ix[ph] = lc_bin(L, PB_DIV, y, b), ix[pw] = lc_bin(L, PB_DIV, xx, b);
  } else { /* space_to_depth: output channel c = off * C + ci */
    PrimExpr *C = x->shape[pc], *off = lc_bin(L, PB_DIV, c, C);
    ix[pc] = lc_bin(L, PB_MOD, c, C);
    ix[ph] = lc_plus(L, lc_bin(L, PB_DIV, off, b), lc_times(L, y, b));
    ix[pw] = lc_plus(L, lc_bin(L, PB_MOD, off, b), lc_times(L, xx, b));
  }
  return lc_at(L, x, ix);
}

static LTensor *subpixel_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, bool to_space) {
  RelCtx cx;
  int pos[4];
  nn_call_ctx(&cx, lc_arena(L), call);
  if (nn_layout_attr(&cx, call->u.call.attrs, "layout", "NCHW", pos) != 4)
    return lc_fail(L, "%s: layout", call->u.call.fn->u.op.name);
  LTensor *t = inline_result(L, call, in, nin, at_subpixel);
  if (!t) return NULL;
  t->aux[0] = op_attr_int(call, "block_size"), t->aux[1] = to_space;
  t->aux[2] = strcmp(op_attr_str(lc_arena(L), call, "mode"), "CRD") == 0;
  for (int i = 1; i < 4; i++) t->aux[2 + i] = pos[i];
  return t;
}

static LTensor *compute_depth_to_space(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return subpixel_rule(L, call, in, nin, true);
}

static LTensor *compute_space_to_depth(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return subpixel_rule(L, call, in, nin, false);
}

/* ───────────────────────── batch / space ───────────────────────── */

typedef struct Blocks {
  int m;
  int64_t block[NN_MAX_PAIRS], pairs[NN_MAX_PAIRS][2];
} Blocks;

static bool read_blocks(RelCtx *cx, const Expr *call, const char *key, Blocks *b) {
  b->m = rel_attr_ints(cx, call->u.call.attrs, "block_shape", b->block, NN_MAX_PAIRS);
  return b->m >= 0 && nn_attr_pairs(cx, call->u.call.attrs, key, b->pairs, NN_MAX_PAIRS) == b->m;
}

/* space_to_batch_nd: output batch ob = off * N + n, off the block offset
 * (j1, ..., jM) row-major; spatial i_k reads padded i_k * B_k + j_k. */
static PrimExpr *at_space_to_batch(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  RelCtx cx;
  Blocks b;
  read_blocks(ctx_of(L, t, &cx), t->call, "paddings", &b);
  PrimExpr *ix[TENSOR_MAX_RANK], *inside = NULL, *N = x->shape[0];
  PrimExpr *off = lc_bin(L, PB_DIV, idx[0], N);
  int64_t inner = 1; /* the product of the block dims after k */
  for (int d = 0; d < x->ndim; d++) ix[d] = idx[d];
  ix[0] = lc_bin(L, PB_MOD, idx[0], N);
  for (int k = b.m; k-- > 0;) { /* the last block dim varies fastest */
    PrimExpr *j =
        lc_bin(L, PB_MOD, lc_bin(L, PB_DIV, off, lc_int(L, inner)), lc_int(L, b.block[k]));
    inner *= b.block[k];
    PrimExpr *p =
        plus(L, lc_plus(L, lc_times(L, idx[1 + k], lc_int(L, b.block[k])), j), -b.pairs[k][0]);
    PrimExpr *ok =
        lc_bin(L, PB_AND, lc_bin(L, PB_GE, p, lc_int(L, 0)), lc_bin(L, PB_LT, p, x->shape[1 + k]));
    inside = inside ? lc_bin(L, PB_AND, inside, ok) : ok;
    ix[1 + k] = clamp(L, p, x->shape[1 + k]);
  }
  PrimExpr *v = lc_at(L, x, ix);
  if (!inside) return v;
  return sel(L, inside, v, lc_lit(L, x->dtype, op_attr_float(t->call, "pad_value")));
}

/* batch_to_space_nd: output (n, y_k) reads batch off * N' + n at y_k /
 * B_k, off built from (y_k + crop_k) % B_k. */
static PrimExpr *at_batch_to_space(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  RelCtx cx;
  Blocks b;
  read_blocks(ctx_of(L, t, &cx), t->call, "crops", &b);
  PrimExpr *ix[TENSOR_MAX_RANK], *off = lc_int(L, 0);
  for (int d = 0; d < x->ndim; d++) ix[d] = idx[d];
  for (int k = 0; k < b.m; k++) {
    PrimExpr *y = plus(L, idx[1 + k], b.pairs[k][0]), *B = lc_int(L, b.block[k]);
    off = lc_plus(L, lc_times(L, off, B), lc_bin(L, PB_MOD, y, B));
    ix[1 + k] = lc_bin(L, PB_DIV, y, B);
  }
  ix[0] = lc_plus(L, lc_times(L, off, t->shape[0]), idx[0]);
  return lc_at(L, x, ix);
}

static LTensor *blocks_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, bool to_batch) {
  RelCtx cx;
  Blocks b;
  nn_call_ctx(&cx, lc_arena(L), call);
  if (!read_blocks(&cx, call, to_batch ? "paddings" : "crops", &b))
    return lc_fail(L, "%s: attributes", call->u.call.fn->u.op.name);
  bool need[TENSOR_MAX_RANK] = {0};
  for (int k = 0; to_batch && k < b.m; k++) need[1 + k] = b.pairs[k][0] || b.pairs[k][1];
  if (!sized_axes(L, call, in[0], need)) return NULL;
  return inline_result(L, call, in, nin, to_batch ? at_space_to_batch : at_batch_to_space);
}

static LTensor *compute_space_to_batch_nd(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return blocks_rule(L, call, in, nin, true);
}

static LTensor *compute_batch_to_space_nd(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return blocks_rule(L, call, in, nin, false);
}

/* ───────────────────────────── dilate ───────────────────────────── */

/* out[i] = x[i / s] where every i % s == 0, else dilation_value. */
static PrimExpr *at_dilate(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  int64_t s[TENSOR_MAX_RANK];
  int n = op_attr_ints(t->call, "strides", s, TENSOR_MAX_RANK);
  PrimExpr *ix[TENSOR_MAX_RANK], *on = NULL;
  for (int d = 0; d < x->ndim; d++) {
    ix[d] = idx[d];
    if (d >= n || s[d] == 1) continue;
    PrimExpr *S = lc_int(L, s[d]);
    PrimExpr *hit = lc_bin(L, PB_EQ, lc_bin(L, PB_MOD, idx[d], S), lc_int(L, 0));
    on = on ? lc_bin(L, PB_AND, on, hit) : hit;
    ix[d] = lc_bin(L, PB_DIV, idx[d], S);
  }
  PrimExpr *v = lc_at(L, x, ix);
  if (!on) return v;
  return sel(L, on, v, lc_lit(L, x->dtype, op_attr_float(t->call, "dilation_value")));
}

static LTensor *compute_dilate(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t s[TENSOR_MAX_RANK];
  if (op_attr_ints(call, "strides", s, TENSOR_MAX_RANK) != in[0]->ndim)
    return lc_fail(L, "nn.dilate: strides");
  if (!lc_elem_dtype_ok(in[0]->dtype)) /* a gather and a fill: any dtype */
    return lc_fail(L, "nn.dilate of %s", dtype_name(in[0]->dtype));
  return inline_result(L, call, in, nin, at_dilate);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_nn_layout[] = {
    {"nn.pad", compute_pad},
    {"nn.mirror_pad", compute_mirror_pad},
    {"nn.upsampling", compute_upsampling},
    {"nn.upsampling3d", compute_upsampling3d},
    {"nn.depth_to_space", compute_depth_to_space},
    {"nn.space_to_depth", compute_space_to_depth},
    {"nn.space_to_batch_nd", compute_space_to_batch_nd},
    {"nn.batch_to_space_nd", compute_batch_to_space_nd},
    {"nn.dilate", compute_dilate},
    {NULL, NULL},
};
