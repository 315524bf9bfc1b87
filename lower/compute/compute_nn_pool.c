/* compute_nn_pool.c — compute rules (lower/compute/compute.h) of the pools:
 * nn.max_pool1d/2d/3d, nn.avg_pool1d/2d/3d, nn.global_max_pool2d,
 * nn.global_avg_pool2d and the adaptive pools, all materialized: a loop nest over the output, and
 * per element a loop over the window's taps (or the whole plane) into a
 * small accumulator.  A tap is read only when it lies inside the input.
 *
 * Every numeric dtype.  Results equal the reference kernels'
 * (kernels/kernels_nn_pool.c) bit for bit: max, in the dtype's lane
 * (float16 in float32, exact), starts from -inf (an integer's minimum) and
 * keeps NaN and +0 over -0 (a window with no element gives the dtype's
 * lowest finite value); averages add the window's elements in row order in
 * float64 (int64 for integers, which truncate) starting from +0 and divide
 * by the count TVM uses. */
#include <math.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/nn_int.h"

static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}
static PrimExpr *and_(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  return a ? lc_bin(L, PB_AND, a, b) : b;
}

/* The dtype's lowest finite value (an empty max window). */
static PrimExpr *lowest(LowerCx *L, DType dt) {
  if (dt == DT_FLOAT16) return lc_lit(L, dt, -65504.0);
  if (dt == DT_BFLOAT16) return lc_lit(L, dt, -3.3895313892515355e38);
  if (dt == DT_FLOAT32) return lc_lit(L, dt, -3.4028234663852886e38);
  if (dt == DT_FLOAT64) return lc_lit(L, dt, -1.7976931348623157e308);
  PrimExpr *e = lc_lit(L, dt, 0);
  e->u.i = lc_int_min(dt);
  return e;
}

/* The dtypes a pool takes: every numeric one. */
static bool pool_dtype_ok(DType dt) { return lc_elem_dtype_ok(dt) && dt != DT_BOOL; }

/* The accumulator's dtype: max in the dtype's lane (float32 for float16,
 * exact), averages in float64 or int64 (the kernels' lanes). */
static DType acc_dtype(DType dt, bool is_max) {
  if (is_max) return lc_lane_dtype(dt);
  return dtype_is_float(dt) ? DT_FLOAT64 : DT_INT64;
}

typedef struct PoolRule {
  int S;
  int pos[NN_MAX_SPATIAL]; /* the pooled axes */
  NnWindow w;
  bool is_max, include_pad;
  DType at;          /* the accumulator's dtype */
  Buffer *acc, *cnt; /* [value, tap]; [taps inside, taps inside the padding] */
} PoolRule;

/* The accumulator's start: the dtype's lowest value for a max pool, 0 for
 * a sum. */
static PrimExpr *pool_init(LowerCx *L, const PoolRule *p) {
  if (!p->is_max) return lc_lit(L, p->at, 0);
  return dtype_is_float(p->at) ? lc_lit(L, p->at, -INFINITY) : lowest(L, p->at);
}

/* The accumulation of one tap at input position ix (valid: inside the
 * input; padded: inside the padded input). */
static void tap(LowerCx *L, const LTensor *x, const PoolRule *p, PrimExpr **ix, PrimExpr *valid,
                PrimExpr *padded) {
  PrimExpr *i0 = lc_int(L, 0), *i1 = lc_int(L, 1);
  PrimExpr *val = lc_load(L, p->acc, 1, &i0), *v = lc_load(L, p->acc, 1, &i1);
  PrimExpr *n0 = lc_load(L, p->cnt, 1, &i0), *n1 = lc_load(L, p->cnt, 1, &i1);
  lc_open(L);
  lc_store(L, p->acc, 1, &i1, lc_cast(L, p->at, lc_at(L, x, ix)));
  lc_store(L, p->acc, 1, &i0, p->is_max ? lc_extreme(L, val, v, true) : lc_plus(L, val, v));
  lc_store(L, p->cnt, 1, &i0, lc_plus(L, n0, lc_lit(L, DT_INT64, 1)));
  lc_if(L, valid, lc_close(L));
  if (!p->include_pad) return;
  lc_open(L);
  lc_store(L, p->cnt, 1, &i1, lc_plus(L, n1, lc_lit(L, DT_INT64, 1)));
  lc_if(L, padded, lc_close(L));
}

/* The window's taps along the pooled dims around output idx, opened as
 * loops (closed by the caller, innermost last); ix gets the input index,
 * *valid the tap inside the input, *padded inside the padded input. */
static void open_taps(LowerCx *L, const LTensor *x, const PoolRule *p, PrimExpr **idx,
                      PrimExpr **ix, TirVar **t, PrimExpr **valid, PrimExpr **padded) {
  *valid = *padded = NULL;
  for (int d = 0; d < x->ndim; d++) ix[d] = idx[d];
  for (int i = 0; i < p->S; i++) {
    int a = p->pos[i];
    PrimExpr *n = x->shape[a];
    t[i] = lc_tvar(L, "t", lc_int(L, p->w.k[i]));
    PrimExpr *q = lc_plus(L, lc_bin(L, PB_MUL, idx[a], lc_int(L, p->w.stride[i])),
                          lc_bin(L, PB_MUL, lc_var(L, t[i]), lc_int(L, p->w.dil[i])));
    q = lc_bin(L, PB_SUB, q, lc_int(L, p->w.lo[i]));
    *valid = and_(L, *valid,
                  lc_bin(L, PB_AND, lc_bin(L, PB_GE, q, lc_int(L, 0)), lc_bin(L, PB_LT, q, n)));
    *padded = and_(L, *padded, lc_bin(L, PB_LT, q, lc_plus(L, n, lc_int(L, p->w.hi[i]))));
    ix[a] = q;
    lc_open(L);
  }
}

/* The pooled value of accumulator val over n0 taps inside the input (n1
 * inside the padded input): max (lowest for an empty window) or the
 * average by the count TVM uses, in x's dtype. */
static PrimExpr *pool_result(LowerCx *L, const LTensor *x, const PoolRule *p, PrimExpr *val,
                             PrimExpr *n0, PrimExpr *n1) {
  PrimExpr *div = p->include_pad ? n1 : n0, *r;
  PrimExpr *some = lc_bin(L, PB_GT, p->is_max ? n0 : div, lc_lit(L, DT_INT64, 0));
  if (p->is_max)
    r = sel(L, some, val, lc_cast(L, p->at, lowest(L, x->dtype)));
  else
    r = sel(L, some,
            lc_bin(L, PB_DIV, val,
                   lc_cast(L, p->at, lc_call(L, PI_MAX, div, lc_lit(L, DT_INT64, 1), NULL))),
            lc_lit(L, p->at, 0));
  return lc_cast(L, x->dtype, r);
}

/* One output element at idx: init, a loop per pooled dim over its taps,
 * then the result (max, lowest for an empty window, or the average). */
static void pool_element(LowerCx *L, const LTensor *x, PoolRule *p, Buffer *out, PrimExpr **idx) {
  PrimExpr *two = lc_int(L, 2), *i0 = lc_int(L, 0), *i1 = lc_int(L, 1);
  p->acc = lc_alloc(L, "acc", p->at, 1, &two), p->cnt = lc_alloc(L, "cnt", DT_INT64, 1, &two);
  PrimExpr *init = pool_init(L, p);
  lc_store(L, p->acc, 1, &i0, init);
  lc_store(L, p->cnt, 1, &i0, lc_lit(L, DT_INT64, 0));
  lc_store(L, p->cnt, 1, &i1, lc_lit(L, DT_INT64, 0));
  PrimExpr *ix[TENSOR_MAX_RANK], *valid, *padded;
  TirVar *t[NN_MAX_SPATIAL];
  open_taps(L, x, p, idx, ix, t, &valid, &padded);
  tap(L, x, p, ix, valid, padded);
  for (int i = p->S; i-- > 0;) lc_for(L, LOOP_RANGE, t[i], lc_int(L, p->w.k[i]), lc_close(L));
  PrimExpr *val = lc_load(L, p->acc, 1, &i0), *n0 = lc_load(L, p->cnt, 1, &i0);
  PrimExpr *n1 = lc_load(L, p->cnt, 1, &i1);
  lc_store(L, out, x->ndim, idx, pool_result(L, x, p, val, n0, n1));
}

/* Whether the window of output idx lies inside the input (its first and
 * last taps along every pooled dim). */
static PrimExpr *window_inside(LowerCx *L, const LTensor *x, const PoolRule *p, PrimExpr **idx) {
  PrimExpr *all = NULL;
  for (int i = 0; i < p->S; i++) {
    int a = p->pos[i];
    PrimExpr *q0 = lc_bin(L, PB_SUB, lc_bin(L, PB_MUL, idx[a], lc_int(L, p->w.stride[i])),
                          lc_int(L, p->w.lo[i]));
    PrimExpr *q1 = lc_plus(L, q0, lc_int(L, (p->w.k[i] - 1) * p->w.dil[i]));
    all = and_(
        L, all,
        lc_bin(L, PB_AND, lc_bin(L, PB_GE, q0, lc_int(L, 0)), lc_bin(L, PB_LT, q1, x->shape[a])));
  }
  return all;
}

/* out[idx[0..n-1), lane] = r for every lane of the last axis (vectorized). */
static void store_lanes(LowerCx *L, Buffer *out, int n, PrimExpr **idx, TirVar *lane, PrimExpr *len,
                        PrimExpr *r) {
  PrimExpr *oi[TENSOR_MAX_RANK];
  for (int d = 0; d < n - 1; d++) oi[d] = idx[d];
  oi[n - 1] = lc_var(L, lane);
  lc_open(L);
  lc_store(L, out, n, oi, r);
  lc_for(L, LOOP_VECTORIZED, lane, len, lc_close(L));
}

/* pool_lanes for a window inside the input: the same taps in the same
 * order with no bounds tests or counts (the count is the window's size). */
static void pool_lanes_inside(LowerCx *L, const LTensor *x, PoolRule *p, Buffer *out,
                              PrimExpr **idx, TirVar *lane) {
  int n = x->ndim;
  PrimExpr *len = x->shape[n - 1];
  Buffer *acc = lc_alloc(L, "acc", p->at, 1, &len);
  acc->no_init = true;
  PrimExpr *init = pool_init(L, p);
  TirVar *l0 = lc_tvar(L, "l", len), *l2 = lc_tvar(L, "l", len);
  PrimExpr *l0i = lc_var(L, l0), *l2i = lc_var(L, l2), *li = lc_var(L, lane);
  lc_open(L);
  lc_store(L, acc, 1, &l0i, init);
  lc_for(L, LOOP_VECTORIZED, l0, len, lc_close(L));
  PrimExpr *ix[TENSOR_MAX_RANK], *valid, *padded;
  TirVar *t[NN_MAX_SPATIAL];
  open_taps(L, x, p, idx, ix, t, &valid, &padded);
  ix[n - 1] = l2i;
  PrimExpr *v = lc_cast(L, p->at, lc_at(L, x, ix)), *cur = lc_load(L, acc, 1, &l2i);
  lc_open(L);
  lc_store(L, acc, 1, &l2i, p->is_max ? lc_extreme(L, cur, v, true) : lc_plus(L, cur, v));
  lc_for(L, LOOP_VECTORIZED, l2, len, lc_close(L));
  int64_t taps = 1;
  for (int i = p->S; i-- > 0;) {
    taps *= p->w.k[i];
    lc_for(L, LOOP_RANGE, t[i], lc_int(L, p->w.k[i]), lc_close(L));
  }
  PrimExpr *cnt = lc_lit(L, DT_INT64, (double)taps);
  PrimExpr *r = pool_result(L, x, p, lc_load(L, acc, 1, &li), cnt, cnt);
  store_lanes(L, out, n, idx, lane, len, r);
}

/* A pool whose last axis is not pooled (NCHW16c, NHWC): per output
 * position, a vector of accumulators along that axis, each lane summing
 * or maxing its taps in the same order as pool_element (so results are
 * the same bit for bit); the window's bounds tests and counts are scalars
 * shared by the lanes.  A window inside the input (most of them) skips
 * both (pool_lanes_inside). */
static void pool_lanes_edge(LowerCx *L, const LTensor *x, PoolRule *p, Buffer *out, PrimExpr **idx,
                            TirVar *lane);
static void pool_lanes(LowerCx *L, const LTensor *x, PoolRule *p, Buffer *out, PrimExpr **idx,
                       TirVar *lane) {
  lc_open(L);
  pool_lanes_inside(L, x, p, out, idx, lane);
  Stmt *inside = lc_close(L);
  lc_open(L);
  pool_lanes_edge(L, x, p, out, idx, lc_tvar(L, "i", x->shape[x->ndim - 1]));
  lc_if_else(L, window_inside(L, x, p, idx), inside, lc_close(L));
}

static void pool_lanes_edge(LowerCx *L, const LTensor *x, PoolRule *p, Buffer *out, PrimExpr **idx,
                            TirVar *lane) {
  int n = x->ndim;
  PrimExpr *len = x->shape[n - 1], *two = lc_int(L, 2), *i0 = lc_int(L, 0), *i1 = lc_int(L, 1);
  Buffer *acc = lc_alloc(L, "acc", p->at, 1, &len);
  p->cnt = lc_alloc(L, "cnt", DT_INT64, 1, &two);
  PrimExpr *li = lc_var(L, lane), *a = lc_load(L, acc, 1, &li);
  PrimExpr *init = pool_init(L, p);
  TirVar *l0 = lc_tvar(L, "l", len);
  PrimExpr *l0i = lc_var(L, l0);
  lc_open(L);
  lc_store(L, acc, 1, &l0i, init);
  lc_for(L, LOOP_VECTORIZED, l0, len, lc_close(L));
  lc_store(L, p->cnt, 1, &i0, lc_lit(L, DT_INT64, 0));
  lc_store(L, p->cnt, 1, &i1, lc_lit(L, DT_INT64, 0));
  PrimExpr *ix[TENSOR_MAX_RANK], *valid, *padded;
  TirVar *t[NN_MAX_SPATIAL];
  open_taps(L, x, p, idx, ix, t, &valid, &padded);
  TirVar *l2 = lc_tvar(L, "l", len);
  ix[n - 1] = lc_var(L, l2);
  PrimExpr *l2i = lc_var(L, l2), *v = lc_cast(L, p->at, lc_at(L, x, ix));
  PrimExpr *cur = lc_load(L, acc, 1, &l2i);
  lc_open(L); /* if valid */
  lc_open(L);
  lc_store(L, acc, 1, &l2i, p->is_max ? lc_extreme(L, cur, v, true) : lc_plus(L, cur, v));
  lc_for(L, LOOP_VECTORIZED, l2, len, lc_close(L));
  PrimExpr *n0 = lc_load(L, p->cnt, 1, &i0), *n1 = lc_load(L, p->cnt, 1, &i1);
  lc_store(L, p->cnt, 1, &i0, lc_plus(L, n0, lc_lit(L, DT_INT64, 1)));
  lc_if(L, valid, lc_close(L));
  if (p->include_pad) {
    lc_open(L);
    lc_store(L, p->cnt, 1, &i1, lc_plus(L, n1, lc_lit(L, DT_INT64, 1)));
    lc_if(L, padded, lc_close(L));
  }
  for (int i = p->S; i-- > 0;) lc_for(L, LOOP_RANGE, t[i], lc_int(L, p->w.k[i]), lc_close(L));
  PrimExpr *r = pool_result(L, x, p, a, n0, n1);
  store_lanes(L, out, n, idx, lane, len, r);
}

/* The windowed pools, materialized: a loop nest over the output (the
 * outermost dim that is not 1 parallel), pool_element inside.  Attributes
 * through the relation's readers; the result's shape must be static or
 * size variables. */
static LTensor *pool_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, int S, bool is_max) {
  RelCtx cx;
  PoolRule p = {.S = S, .is_max = is_max, .w = {.S = S}};
  nn_call_ctx(&cx, lc_arena(L), call);
  const LTensor *x = in[0];
  if (nin != 1 || !pool_dtype_ok(x->dtype))
    return lc_fail(L, "%s on %s", cx.op_name, dtype_name(x->dtype));
  if (nn_layout_attr(&cx, call->u.call.attrs, "layout", &"DHW"[NN_MAX_SPATIAL - S], p.pos) < 0 ||
      !nn_spatial_ints(&cx, call->u.call.attrs, "pool_size", S, 1, p.w.k) ||
      !nn_window_attrs(&cx, call->u.call.attrs, &p.w))
    return lc_fail(L, "%s: %s", cx.op_name, cx.err);
  if (!is_max) p.include_pad = op_attr_bool(call, "count_include_pad");
  p.at = acc_dtype(x->dtype, is_max);
  const Type *ty = lc_result_type(call);
  int n = x->ndim;
  PrimExpr *shape[TENSOR_MAX_RANK], *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    Dim dm = ty->u.tensor.dims[d];
    if (dm.kind != DIM_CONST && dm.kind != DIM_VAR) return lc_fail(L, "%s: a `?` dim", cx.op_name);
    shape[d] = dm.kind == DIM_CONST ? lc_int(L, dm.value) : x->shape[d];
  }
  Buffer *out = lc_result_buffer(L, call, x->dtype, n, shape);
  if (!out) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  /* the last axis not pooled, more than one lane: vectors along it */
  bool lanes = p.pos[S - 1] != n - 1 && lc_const(shape[n - 1]) > 1;
  int loops = lanes ? n - 1 : n;
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0; d < loops; d++) lc_open(L);
  if (lanes)
    pool_lanes(L, x, &p, out, idx, v[n - 1]);
  else
    pool_element(L, x, &p, out, idx);
  int par = 0;
  while (par < loops - 1 && lc_const(shape[par]) == 1) par++;
  for (int d = loops; d-- > 0;)
    lc_for(L, d == par ? LOOP_PARALLEL : LOOP_RANGE, v[d], shape[d], lc_close(L));
  return lc_from_buffer(L, call, out);
}

#define POOL_RULE(name, S, is_max)                                            \
  static LTensor *name(LowerCx *L, const Expr *call, LTensor **in, int nin) { \
    return pool_rule(L, call, in, nin, S, is_max);                            \
  }
POOL_RULE(compute_max_pool1d, 1, true)
POOL_RULE(compute_avg_pool1d, 1, false)
POOL_RULE(compute_max_pool2d, 2, true)
POOL_RULE(compute_avg_pool2d, 2, false)
POOL_RULE(compute_max_pool3d, 3, true)
POOL_RULE(compute_avg_pool3d, 3, false)

/* ───────────────────────────── global pools ───────────────────────────── */

/* The one operand of a global or adaptive pool (a numeric tensor) and, in
 * pos, the axes of H and W its `layout` names; NULL after lc_fail. */
static const LTensor *plane_pool_operand(LowerCx *L, const Expr *call, LTensor **in, int nin,
                                         int pos[2]) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  const LTensor *x = nin == 1 ? in[0] : NULL;
  if (!x || !pool_dtype_ok(x->dtype) ||
      nn_layout_attr(&cx, call->u.call.attrs, "layout", "HW", pos) != x->ndim)
    return lc_fail(L, "%s on these operands", cx.op_name), NULL;
  return x;
}

/* A vectorized loop over the last axis (extent e) of `body` (a statement
 * already emitted inside lc_open). */
static void lanes_for(LowerCx *L, TirVar *c, PrimExpr *e) {
  lc_for(L, LOOP_VECTORIZED, c, e, lc_close(L));
}

/* A global pool of a blocked tensor (NCHW<c>c: an axis after H and W, of
 * static H and W): for each element of the outer axes (the last of them
 * in parallel) a row of accumulators over the lanes of the last axis sums
 * (or maxes) the plane in row order, vectorized across the lanes: each
 * lane's sum is the one-lane schedule's (the same float64 additions in the
 * same order, so the same bits), without its strided scalar chain (1.3
 * GFLOP/s on EfficientNet's squeeze-and-excite pools). */
static void global_pool_lanes(LowerCx *L, const LTensor *x, Buffer *out, const int pos[2],
                              bool is_max, DType at) {
  int n = x->ndim, last = n - 1;
  TirVar *v[TENSOR_MAX_RANK], *c[3];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", x->shape[d]);
  for (int k = 0; k < 3; k++) c[k] = lc_tvar(L, "c", x->shape[last]);
  for (int d = 0; d < last; d++)
    if (d != pos[0] && d != pos[1]) lc_open(L);
  PrimExpr *lanes = x->shape[last];
  Buffer *acc = lc_alloc(L, "acc", at, 1, &lanes);
  acc->no_init = true;
  PrimExpr *idx[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK], *ci[3];
  for (int k = 0; k < 3; k++) ci[k] = lc_var(L, c[k]);
  for (int d = 0; d < last; d++) {
    idx[d] = lc_var(L, v[d]);
    oidx[d] = d == pos[0] || d == pos[1] ? lc_int(L, 0) : idx[d];
  }
  lc_open(L);
  PrimExpr *init = !is_max              ? lc_lit(L, at, 0)
                   : dtype_is_float(at) ? lc_lit(L, at, -INFINITY)
                                        : lowest(L, at);
  lc_store(L, acc, 1, &ci[0], init);
  lanes_for(L, c[0], x->shape[last]);
  lc_open(L), lc_open(L), lc_open(L); /* h, w, c */
  idx[last] = ci[1];
  PrimExpr *val = lc_load(L, acc, 1, &ci[1]), *xv = lc_cast(L, at, lc_at(L, x, idx));
  lc_store(L, acc, 1, &ci[1], is_max ? lc_extreme(L, val, xv, true) : lc_plus(L, val, xv));
  lanes_for(L, c[1], x->shape[last]);
  lc_for(L, LOOP_RANGE, v[pos[1]], x->shape[pos[1]], lc_close(L));
  lc_for(L, LOOP_RANGE, v[pos[0]], x->shape[pos[0]], lc_close(L));
  lc_open(L);
  oidx[last] = ci[2];
  PrimExpr *r = lc_load(L, acc, 1, &ci[2]);
  PrimExpr *cnt = lc_cast(L, at, lc_mul(L, x->shape[pos[0]], x->shape[pos[1]]));
  lc_store(L, out, n, oidx, lc_cast(L, x->dtype, is_max ? r : lc_bin(L, PB_DIV, r, cnt)));
  lanes_for(L, c[2], x->shape[last]);
  bool first = true;
  for (int d = last; d-- > 0;) {
    if (d == pos[0] || d == pos[1]) continue;
    lc_for(L, first ? LOOP_PARALLEL : LOOP_RANGE, v[d], x->shape[d], lc_close(L));
    first = false;
  }
}

/* for each element of the other axes: acc = reduce over H, W; out = acc
 * (max, or lowest for an empty plane) or acc / (H * W). */
static LTensor *global_pool(LowerCx *L, const Expr *call, LTensor **in, int nin, bool is_max) {
  int pos[2];
  const LTensor *x = plane_pool_operand(L, call, in, nin, pos);
  if (!x) return NULL;
  int n = x->ndim;
  PrimExpr *oshape[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) oshape[d] = d == pos[0] || d == pos[1] ? lc_int(L, 1) : x->shape[d];
  Buffer *out = lc_result_buffer(L, call, x->dtype, n, oshape);
  if (!out) return NULL;
  DType at = acc_dtype(x->dtype, is_max);
  if (pos[0] < n - 1 && pos[1] < n - 1 && lc_const(x->shape[pos[0]]) > 0 &&
      lc_const(x->shape[pos[1]]) > 0) {
    global_pool_lanes(L, x, out, pos, is_max, at);
    return lc_from_buffer(L, call, out);
  }
  TirVar *v[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++)
    v[d] = lc_tvar(L, "i", d == pos[0] || d == pos[1] ? x->shape[d] : oshape[d]);
  int outer = 0;
  for (int d = 0; d < n; d++)
    if (d != pos[0] && d != pos[1]) lc_open(L), outer++;
  PrimExpr *two = lc_int(L, 2), *i0 = lc_int(L, 0), *i1 = lc_int(L, 1);
  Buffer *acc = lc_alloc(L, "acc", at, 1, &two); /* [value, any] */
  PrimExpr *val = lc_load(L, acc, 1, &i0);
  lc_store(
      L, acc, 1, &i0,
      is_max ? (dtype_is_float(at) ? lc_lit(L, at, -INFINITY) : lowest(L, at)) : lc_lit(L, at, 0));
  lc_store(L, acc, 1, &i1, lc_lit(L, at, 0));
  PrimExpr *idx[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    idx[d] = lc_var(L, v[d]);
    oidx[d] = d == pos[0] || d == pos[1] ? lc_int(L, 0) : idx[d];
  }
  lc_open(L);
  lc_open(L);
  PrimExpr *xv = lc_cast(L, at, lc_at(L, x, idx));
  lc_store(L, acc, 1, &i0, is_max ? lc_extreme(L, val, xv, true) : lc_plus(L, val, xv));
  lc_store(L, acc, 1, &i1, lc_lit(L, at, 1));
  lc_for(L, LOOP_RANGE, v[pos[1]], x->shape[pos[1]], lc_close(L));
  lc_for(L, LOOP_RANGE, v[pos[0]], x->shape[pos[0]], lc_close(L));
  PrimExpr *any = lc_bin(L, PB_NE, lc_load(L, acc, 1, &i1), lc_lit(L, at, 0));
  PrimExpr *cnt = lc_cast(L, at, lc_mul(L, x->shape[pos[0]], x->shape[pos[1]]));
  PrimExpr *r = is_max ? sel(L, any, val, lc_cast(L, at, lowest(L, x->dtype)))
                       : sel(L, any, lc_bin(L, PB_DIV, val, cnt), lc_lit(L, at, 0));
  lc_store(L, out, n, oidx, lc_cast(L, x->dtype, r));
  for (int d = n; d-- > 0;) {
    if (d == pos[0] || d == pos[1]) continue;
    lc_for(L, --outer == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[d], oshape[d], lc_close(L));
  }
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_global_max_pool2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return global_pool(L, call, in, nin, true);
}

static LTensor *compute_global_avg_pool2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return global_pool(L, call, in, nin, false);
}

/* ───────────────────────────── adaptive pools ───────────────────────────── */

/* Output o of m along an input dim of n: the window [o n / m, ceil((o + 1) n / m)). */
static void adaptive_window(LowerCx *L, PrimExpr *o, PrimExpr *n, PrimExpr *m, PrimExpr **start,
                            PrimExpr **len) {
  *start = lc_bin(L, PB_DIV, lc_bin(L, PB_MUL, o, n), m);
  PrimExpr *end = lc_bin(L, PB_MUL, lc_plus(L, o, lc_int(L, 1)), n);
  end = lc_bin(L, PB_DIV, lc_plus(L, end, lc_bin(L, PB_SUB, m, lc_int(L, 1))), m);
  *len = lc_bin(L, PB_SUB, end, *start);
}

/* The adaptive pools: per output element a loop over its window (whose
 * bounds depend on the output index) into an accumulator, as the kernel:
 * max from -inf (lowest for an empty window), the average summed in
 * float64 (int64 for integers, truncating) divided by the window's size. */
static LTensor *adaptive_pool(LowerCx *L, const Expr *call, LTensor **in, int nin, bool is_max) {
  int pos[2];
  const LTensor *x = plane_pool_operand(L, call, in, nin, pos);
  if (!x) return NULL;
  int n = x->ndim;
  const Type *ty = lc_result_type(call);
  PrimExpr *oshape[TENSOR_MAX_RANK], *idx[TENSOR_MAX_RANK], *ix[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    Dim dm = ty->u.tensor.dims[d];
    bool pooled = d == pos[0] || d == pos[1];
    if (pooled && dm.kind != DIM_CONST)
      return lc_fail(L, "%s: a computed output size", call->u.call.fn->u.op.name);
    oshape[d] = pooled ? lc_int(L, dm.value) : x->shape[d];
  }
  Buffer *out = lc_result_buffer(L, call, x->dtype, n, oshape);
  if (!out) return NULL;
  DType at = acc_dtype(x->dtype, is_max);
  TirVar *v[TENSOR_MAX_RANK], *t[2];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", oshape[d]), idx[d] = ix[d] = lc_var(L, v[d]);
  for (int d = 0; d < n; d++) lc_open(L);
  PrimExpr *two = lc_int(L, 2), *i0 = lc_int(L, 0), *i1 = lc_int(L, 1), *start[2], *len[2];
  Buffer *acc = lc_alloc(L, "acc", at, 1, &two); /* [value, any] */
  PrimExpr *val = lc_load(L, acc, 1, &i0);
  lc_store(
      L, acc, 1, &i0,
      is_max ? (dtype_is_float(at) ? lc_lit(L, at, -INFINITY) : lowest(L, at)) : lc_lit(L, at, 0));
  lc_store(L, acc, 1, &i1, lc_lit(L, at, 0));
  for (int k = 0; k < 2; k++) {
    int a = pos[k];
    adaptive_window(L, idx[a], x->shape[a], oshape[a], &start[k], &len[k]);
    t[k] = lc_tvar(L, "t", len[k]);
    ix[a] = lc_plus(L, start[k], lc_var(L, t[k]));
    lc_open(L);
  }
  PrimExpr *xv = lc_cast(L, at, lc_at(L, x, ix));
  lc_store(L, acc, 1, &i0, is_max ? lc_extreme(L, val, xv, true) : lc_plus(L, val, xv));
  lc_store(L, acc, 1, &i1, lc_lit(L, at, 1));
  for (int k = 2; k-- > 0;) lc_for(L, LOOP_RANGE, t[k], len[k], lc_close(L));
  PrimExpr *any = lc_bin(L, PB_NE, lc_load(L, acc, 1, &i1), lc_lit(L, at, 0));
  PrimExpr *cnt = lc_cast(L, at, lc_call(L, PI_MAX, lc_mul(L, len[0], len[1]), lc_int(L, 1), NULL));
  PrimExpr *r = is_max ? sel(L, any, val, lc_cast(L, at, lowest(L, x->dtype)))
                       : sel(L, any, lc_bin(L, PB_DIV, val, cnt), lc_lit(L, at, 0));
  lc_store(L, out, n, idx, lc_cast(L, x->dtype, r));
  int par = 0;
  while (par < n - 1 && lc_const(oshape[par]) == 1) par++;
  for (int d = n; d-- > 0;)
    lc_for(L, d == par ? LOOP_PARALLEL : LOOP_RANGE, v[d], oshape[d], lc_close(L));
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_adaptive_max_pool2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return adaptive_pool(L, call, in, nin, true);
}

static LTensor *compute_adaptive_avg_pool2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return adaptive_pool(L, call, in, nin, false);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_nn_pool[] = {
    {"nn.max_pool1d", compute_max_pool1d},
    {"nn.avg_pool1d", compute_avg_pool1d},
    {"nn.max_pool2d", compute_max_pool2d},
    {"nn.avg_pool2d", compute_avg_pool2d},
    {"nn.max_pool3d", compute_max_pool3d},
    {"nn.avg_pool3d", compute_avg_pool3d},
    {"nn.global_max_pool2d", compute_global_max_pool2d},
    {"nn.global_avg_pool2d", compute_global_avg_pool2d},
    {"nn.adaptive_max_pool2d", compute_adaptive_max_pool2d},
    {"nn.adaptive_avg_pool2d", compute_adaptive_avg_pool2d},
    {NULL, NULL},
};
