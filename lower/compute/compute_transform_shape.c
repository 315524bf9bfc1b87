/* compute_transform_shape.c — compute rules (lower/compute/compute.h) of the
 * elementwise, broadcast and injective ops of transform_shape.c: full_like,
 * cast_like, slice_like, layout_transform, tile, repeat, reverse,
 * reverse_sequence, sequence_mask, trilu, and the reduction
 * collapse_sum_like.  (reshape_like and broadcast_to_like use reshape's
 * and broadcast_to's rules.)
 *
 * All but collapse_sum_like are inline: an output index maps to one input
 * index, computed with the formulas of the reference kernels
 * (kernels/kernels_transform_shape.c), so results agree exactly.  Result
 * shapes are computed from the operands' shapes; when one is an expression
 * (a tile of a size variable) only the output buffer refuses it, and the
 * function stays with the kernels. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/transform_int.h"

static LTensor *inline_t(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape,
                         LTensor **in, int nin, LAtFn at) {
  if (!lc_elem_dtype_ok(dt))
    return lc_fail(L, "%s of %s", call->u.call.fn->u.op.name, dtype_name(dt));
  LTensor *t = lc_tensor(L, call, dt, ndim, shape);
  t->in = in, t->nin = nin, t->at = at;
  return t;
}

static PrimExpr *i64(LowerCx *L, PrimExpr *e) {
  return e->kind == PE_INT ? lc_int(L, e->u.i) : lc_cast(L, DT_INT64, e);
}

static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}

/* A double as a literal of dt, converted as the kernels' casts do: floats
 * round, integers truncate and saturate, NaN gives 0, bool is v != 0. */
static PrimExpr *const_of(LowerCx *L, DType dt, double v) {
  if (dtype_is_float(dt) || dt == DT_BOOL) return lc_lit(L, dt, dt == DT_BOOL ? v != 0 : v);
  double lo = dt == DT_INT32 ? INT32_MIN : (double)INT64_MIN;
  double hi = dt == DT_INT32 ? INT32_MAX : 9223372036854775807.0;
  if (isnan(v)) v = 0;
  if (v <= lo) return lc_lit(L, dt, lo);
  if (v >= hi) return lc_int(L, dt == DT_INT32 ? INT32_MAX : INT64_MAX);
  return lc_lit(L, dt, trunc(v));
}

/* ───────────────────── full_like, cast_like, slice_like ───────────────────── */

static PrimExpr *at_full_like(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  return lc_cast(L, t->dtype, lc_at(L, t->in[1], NULL));
}

static LTensor *compute_full_like(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[1]->ndim != 0) return lc_fail(L, "full_like: operands");
  return inline_t(L, call, in[0]->dtype, in[0]->ndim, in[0]->shape, in, nin, at_full_like);
}

static PrimExpr *at_cast_like(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  return lc_cast(L, t->dtype, lc_at(L, t->in[0], idx));
}

static LTensor *compute_cast_like(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return inline_t(L, call, in[1]->dtype, in[0]->ndim, in[0]->shape, in, nin, at_cast_like);
}

static PrimExpr *at_reinterpret(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  return lc_bitcast(L, t->dtype, lc_at(L, t->in[0], idx));
}

/* reinterpret: a bit cast per element (the relation checked the widths). */
static LTensor *compute_reinterpret(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  DType to = lc_result_type(call)->u.tensor.dtype;
  if (!lc_elem_dtype_ok(to) || !lc_elem_dtype_ok(in[0]->dtype))
    return lc_fail(L, "reinterpret of %s as %s", dtype_name(in[0]->dtype), dtype_name(to));
  return inline_t(L, call, to, in[0]->ndim, in[0]->shape, in, nin, at_reinterpret);
}

static PrimExpr *at_identity(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  return lc_at(L, t->in[0], idx);
}

/* The leading part of x: the sliced axes take shape_like's dims. */
static LTensor *compute_slice_like(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim, nl = in[1]->ndim;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int a = 0; a < n; a++) shape[a] = in[0]->shape[a];
  int64_t ax[TENSOR_MAX_RANK];
  int k = op_attr_ints(call, "axes", ax, TENSOR_MAX_RANK);
  for (int a = 0; k < 0 && a < n && a < nl; a++) shape[a] = in[1]->shape[a];
  for (int i = 0; i < k; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n || a >= nl) return lc_fail(L, "slice_like: axes");
    shape[a] = in[1]->shape[a];
  }
  return inline_t(L, call, in[0]->dtype, n, shape, in, nin, at_identity);
}

/* ───────────────────────────── layout_transform ───────────────────────────── */

/* The logical coordinate of letter i at a destination index. */
static PrimExpr *logical(LowerCx *L, const Layout *dst, int i, PrimExpr **idx) {
  PrimExpr *v = i64(L, idx[dst->primal[i]]);
  if (dst->sub[i] < 0) return v;
  v = lc_bin(L, PB_MUL, v, lc_int(L, dst->axes[dst->sub[i]].factor));
  return lc_bin(L, PB_ADD, v, i64(L, idx[dst->sub[i]]));
}

/* The source element of a destination index, or 0 in the padding (aux[0]:
 * a bit per letter whose split can leave padding; only those are tested). */
static PrimExpr *at_layout(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LayoutMap *m = (const LayoutMap *)(intptr_t)t->aux[1];
  const LTensor *x = t->in[0];
  PrimExpr *sub[TENSOR_MAX_RANK], *ok = NULL;
  for (int k = 0; k < m->src.n; k++) {
    int i = m->src.axes[k].letter - 'A';
    int64_t f = layout_factor(&m->src, i);
    PrimExpr *l = logical(L, &m->dst, i, idx);
    if (m->src.axes[k].factor) {
      sub[k] = lc_bin(L, PB_MOD, l, lc_int(L, f));
      continue;
    }
    sub[k] = f == 1 ? l : lc_bin(L, PB_DIV, l, lc_int(L, f));
    if (!(t->aux[0] >> i & 1)) continue;
    PrimExpr *in = lc_bin(L, PB_LT, sub[k], i64(L, x->shape[k]));
    ok = ok ? lc_bin(L, PB_AND, ok, in) : in;
  }
  PrimExpr *v = lc_at(L, x, sub);
  return ok ? sel(L, ok, v, lc_lit(L, t->dtype, 0)) : v;
}

/* Whether the destination's split of letter i leaves padding (the logical
 * size is not a known multiple of the factor). */
static bool layout_pads(const LayoutMap *m, const LTensor *x, int i) {
  int64_t fd = layout_factor(&m->dst, i), d = lc_const(x->shape[m->src.primal[i]]);
  return fd > 1 && (d < 0 || (d * layout_factor(&m->src, i)) % fd != 0);
}

/* The destination shape from the operand's (a split dim rounded up) and
 * an accessor through the logical coordinates; the letters whose split
 * can pad are recorded so only they are range-checked. */
static LTensor *compute_layout_transform(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  LayoutMap *m = ARENA_NEW(lc_arena(L), LayoutMap);
  char err[256];
  const char *src = op_attr_str(lc_arena(L), call, "src_layout");
  if (!layout_map(src, op_attr_str(lc_arena(L), call, "dst_layout"), m, err, sizeof err) ||
      m->src.n != in[0]->ndim)
    return lc_fail(L, "layout_transform: %s", err);
  PrimExpr *shape[TENSOR_MAX_RANK];
  int64_t pads = 0;
  for (int k = 0; k < m->dst.n; k++) {
    LayoutAxis ax = m->dst.axes[k];
    int i = ax.letter - 'A';
    if (ax.factor) {
      shape[k] = lc_int(L, ax.factor);
      continue;
    }
    PrimExpr *l = lc_mul(L, in[0]->shape[m->src.primal[i]], lc_int(L, layout_factor(&m->src, i)));
    int64_t fd = layout_factor(&m->dst, i);
    pads |= (int64_t)layout_pads(m, in[0], i) << i;
    shape[k] =
        fd == 1 ? l : lc_bin(L, PB_DIV, lc_bin(L, PB_ADD, l, lc_int(L, fd - 1)), lc_int(L, fd));
  }
  LTensor *t = inline_t(L, call, in[0]->dtype, m->dst.n, shape, in, nin, at_layout);
  if (t) t->aux[0] = pads, t->aux[1] = (int64_t)(intptr_t)m;
  return t;
}

/* ─────────────────────────── tile, repeat, reverse ─────────────────────────── */

/* tile: out index i reads x at i % dim (leading output dims x lacks are dropped). */
static PrimExpr *at_tile(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int j = 0; j < x->ndim; j++) {
    int o = t->ndim - x->ndim + j;
    sub[j] = t->aux[o] == 1 ? idx[o] : lc_bin(L, PB_MOD, idx[o], x->shape[j]);
  }
  return lc_at(L, x, sub);
}

static LTensor *compute_tile(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t reps[TENSOR_MAX_RANK];
  int r = op_attr_ints(call, "reps", reps, TENSOR_MAX_RANK), n = in[0]->ndim;
  if (r < 0 || n > TENSOR_MAX_RANK || r > TENSOR_MAX_RANK) return lc_fail(L, "tile: reps");
  int m = n > r ? n : r;
  PrimExpr *shape[TENSOR_MAX_RANK];
  int64_t rep[TENSOR_MAX_RANK];
  for (int i = 0; i < m; i++) {
    int j = i - (m - n), k = i - (m - r);
    rep[i] = k >= 0 ? reps[k] : 1;
    shape[i] = lc_mul(L, j >= 0 ? in[0]->shape[j] : lc_int(L, 1), lc_int(L, rep[i]));
  }
  LTensor *t = inline_t(L, call, in[0]->dtype, m, shape, in, nin, at_tile);
  if (t) memcpy(t->aux, rep, sizeof(int64_t) * (size_t)m);
  return t;
}

/* repeat / reverse: aux[0] is the axis, aux[1] the repeat count (0: reverse). */
static PrimExpr *at_axis_op(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *sub[TENSOR_MAX_RANK];
  int a = (int)t->aux[0];
  for (int d = 0; d < t->ndim; d++) sub[d] = idx[d];
  if (t->aux[1])
    sub[a] = lc_bin(L, PB_DIV, idx[a], lc_int(L, t->aux[1]));
  else
    sub[a] =
        lc_bin(L, PB_SUB, lc_bin(L, PB_SUB, i64(L, t->shape[a]), lc_int(L, 1)), i64(L, idx[a]));
  return lc_at(L, t->in[0], sub);
}

static LTensor *axis_op(LowerCx *L, const Expr *call, LTensor **in, int nin, int64_t reps) {
  int n = in[0]->ndim;
  int64_t a = op_attr_is_none(call, "axis") ? -n - 1 : op_attr_int(call, "axis");
  if (a < 0) a += n;
  if (a < 0 || a >= n || reps < 0) return lc_fail(L, "%s: axis", call->u.call.fn->u.op.name);
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) shape[d] = in[0]->shape[d];
  if (reps) shape[a] = lc_mul(L, shape[a], lc_int(L, reps));
  LTensor *t = inline_t(L, call, in[0]->dtype, n, shape, in, nin, at_axis_op);
  if (t) t->aux[0] = a, t->aux[1] = reps;
  return t;
}

static LTensor *compute_repeat(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t reps = op_attr_int(call, "repeats");
  return reps < 1 ? lc_fail(L, "repeat: repeats") : axis_op(L, call, in, nin, reps);
}

static LTensor *compute_reverse(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return axis_op(L, call, in, nin, 0);
}

/* ───────────────────── reverse_sequence, sequence_mask ───────────────────── */

/* The seq-axis index read for output index i with length len along a
 * seq axis of size n: i when len <= 1 or i >= len, else the mirror within
 * min(len, n). */
static PrimExpr *at_reverse_sequence(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int s = (int)t->aux[0], b = (int)t->aux[1];
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int d = 0; d < t->ndim; d++) sub[d] = idx[d];
  PrimExpr *len = i64(L, lc_at(L, t->in[1], &idx[b])), *i = i64(L, idx[s]);
  PrimExpr *n = i64(L, t->shape[s]), *one = lc_int(L, 1);
  PrimExpr *keep = lc_bin(L, PB_OR, lc_bin(L, PB_LE, len, one), lc_bin(L, PB_LE, len, i));
  PrimExpr *mirror =
      sel(L, lc_bin(L, PB_GT, len, n), lc_bin(L, PB_SUB, lc_bin(L, PB_SUB, n, one), i),
          lc_bin(L, PB_SUB, lc_bin(L, PB_SUB, len, one), i));
  sub[s] = sel(L, keep, i, mirror);
  return lc_at(L, t->in[0], sub);
}

static int64_t norm_axis(int64_t a, int n) { return a < 0 ? a + n : a; }

static LTensor *compute_reverse_sequence(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  int64_t s = norm_axis(op_attr_int(call, "seq_axis"), n);
  int64_t b = norm_axis(op_attr_int(call, "batch_axis"), n);
  if (s < 0 || s >= n || b < 0 || b >= n) return lc_fail(L, "reverse_sequence: axes");
  LTensor *t = inline_t(L, call, in[0]->dtype, n, in[0]->shape, in, nin, at_reverse_sequence);
  if (t) t->aux[0] = s, t->aux[1] = b;
  return t;
}

/* Positions at or past the length (compared in the length's dtype) read
 * mask_value (t->value holds it as a literal of the data's dtype). */
static PrimExpr *at_sequence_mask(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int a = (int)t->aux[0];
  const LTensor *len = t->in[1];
  PrimExpr *l = lc_at(L, len, &idx[1 - a]);
  PrimExpr *past = lc_bin(L, PB_GE, lc_cast(L, len->dtype, idx[a]), l);
  PrimExpr *mask = (PrimExpr *)(intptr_t)t->aux[1];
  return sel(L, past, mask, lc_at(L, t->in[0], idx));
}

static LTensor *compute_sequence_mask(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t a = op_attr_int(call, "axis");
  if ((a != 0 && a != 1) || in[0]->ndim < 2 || in[1]->dtype == DT_BOOL)
    return lc_fail(L, "sequence_mask: axis");
  LTensor *t =
      inline_t(L, call, in[0]->dtype, in[0]->ndim, in[0]->shape, in, nin, at_sequence_mask);
  if (!t) return NULL;
  t->aux[0] = a;
  t->aux[1] = (int64_t)(intptr_t)const_of(L, in[0]->dtype, op_attr_float(call, "mask_value"));
  return t;
}

/* ───────────────────────────── trilu ───────────────────────────── */

/* upper keeps col - row >= k, lower keeps col - row <= k; zeros elsewhere. */
static PrimExpr *at_trilu(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int n = t->ndim;
  PrimExpr *k = i64(L, lc_at(L, t->in[1], NULL));
  PrimExpr *diff = lc_bin(L, PB_SUB, i64(L, idx[n - 1]), i64(L, idx[n - 2]));
  PrimExpr *keep = lc_bin(L, t->aux[0] ? PB_GE : PB_LE, diff, k);
  return sel(L, keep, lc_at(L, t->in[0], idx), lc_lit(L, t->dtype, 0));
}

static LTensor *compute_trilu(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (in[0]->ndim < 2 || in[1]->ndim != 0 || !dtype_is_int(in[1]->dtype))
    return lc_fail(L, "trilu: operands");
  LTensor *t = inline_t(L, call, in[0]->dtype, in[0]->ndim, in[0]->shape, in, nin, at_trilu);
  if (t) t->aux[0] = op_attr_bool(call, "upper");
  return t;
}

/* ───────────────────────────── collapse_sum_like ───────────────────────────── */

/* Axis d of x is summed when like lacks it or has 1 there while x has not;
 * the other axes must be the same dims in both (no run-time broadcast). */
static bool collapse_axes(LowerCx *L, const LTensor *x, const LTensor *like, bool *red) {
  int nx = x->ndim, nl = like->ndim;
  for (int d = 0; d < nx; d++) {
    int j = d - (nx - nl);
    red[d] = j < 0 || (lc_const(like->shape[j]) == 1 && lc_const(x->shape[d]) != 1);
    if (!red[d] && !lc_same_dim(like->shape[j], x->shape[d]))
      return lc_fail(L, "collapse_sum_like: dims that match only at run time"), false;
  }
  return true;
}

/* Loops over like's (the output's) axes, the outermost parallel, around
 * the summed axes of x in order, accumulating in float64 (every float
 * dtype, float16 rounded once at the end) or
 * int64 (integers of every width, wrapping, then narrowed): the additions
 * of the reference kernel, in its order, so the results agree exactly. */
static LTensor *compute_collapse_sum_like(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const LTensor *x = in[0], *like = in[1];
  int nx = x->ndim, nl = like->ndim, nk = 0;
  bool red[TENSOR_MAX_RANK];
  if (!(dtype_is_int(x->dtype) || dtype_is_float(x->dtype)) || nl > nx)
    return lc_fail(L, "collapse_sum_like of this dtype");
  if (!collapse_axes(L, x, like, red)) return NULL;
  Buffer *out = lc_result_buffer(L, call, x->dtype, nl, (PrimExpr **)like->shape);
  if (!out) return NULL;
  DType acc_dt = dtype_is_float(x->dtype) ? DT_FLOAT64 : DT_INT64;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK], *zero = lc_int(L, 0), *one = lc_int(L, 1);
  for (int d = 0; d < nx; d++) {
    v[d] = lc_tvar(L, "r", x->shape[d]), idx[d] = lc_var(L, v[d]);
    if (d >= nx - nl) oidx[d - (nx - nl)] = red[d] ? zero : idx[d];
    if (!red[d]) lc_open(L), nk++;
  }
  Buffer *acc = lc_alloc(L, "acc", acc_dt, 1, &one);
  lc_store(L, acc, 1, &zero, lc_lit(L, acc_dt, 0));
  for (int d = 0; d < nx; d++)
    if (red[d]) lc_open(L);
  PrimExpr *sum =
      lc_bin(L, PB_ADD, lc_load(L, acc, 1, &zero), lc_cast(L, acc_dt, lc_at(L, x, idx)));
  lc_store(L, acc, 1, &zero, sum);
  for (int d = nx; d-- > 0;)
    if (red[d]) lc_for(L, LOOP_GRID, v[d], x->shape[d], lc_close(L));
  lc_store(L, out, nl, oidx, lc_cast(L, x->dtype, lc_load(L, acc, 1, &zero)));
  for (int d = nx; d-- > 0;)
    if (!red[d]) lc_for(L, --nk == 0 ? LOOP_PARALLEL : LOOP_GRID, v[d], x->shape[d], lc_close(L));
  return lc_from_buffer(L, call, out);
}

/* ───────────────────────────── meshgrid ───────────────────────────── */

/* Field i of meshgrid: its input read at the output axis aux[0] (a scalar
 * input at nothing). */
static PrimExpr *at_meshgrid(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *sub[1] = {idx[t->aux[0]]};
  return lc_at(L, t->in[0], sub);
}

/* meshgrid as a tuple of inline grids, one per operand, each of the shape
 * of the operands' lengths ("xy": the first two swapped), as the kernel. */
static LTensor *compute_meshgrid(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  bool xy = strcmp(op_attr_str(lc_arena(L), call, "indexing"), "xy") == 0;
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (nin < 1 || nin > TENSOR_MAX_RANK) return lc_fail(L, "meshgrid of %d tensors", nin);
  for (int i = 0; i < nin; i++) {
    int pos = xy && nin >= 2 && i < 2 ? 1 - i : i;
    shape[pos] = in[i]->ndim ? in[i]->shape[0] : lc_int(L, 1);
  }
  LTensor *r = lc_tuple(L, call, nin);
  for (int i = 0; i < nin; i++) {
    if (!lc_buffer_dtype_ok(in[i]->dtype)) /* a copy: any dtype */
      return lc_fail(L, "meshgrid of %s", dtype_name(in[i]->dtype));
    r->fields[i] = lc_tensor(L, call, in[i]->dtype, nin, shape);
    r->fields[i]->in = in + i, r->fields[i]->nin = 1, r->fields[i]->at = at_meshgrid;
    r->fields[i]->aux[0] = xy && nin >= 2 && i < 2 ? 1 - i : i;
  }
  return r;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_transform_shape[] = {
    {"collapse_sum_like", compute_collapse_sum_like},
    {"full_like", compute_full_like},
    {"slice_like", compute_slice_like},
    {"layout_transform", compute_layout_transform},
    {"tile", compute_tile},
    {"repeat", compute_repeat},
    {"reverse", compute_reverse},
    {"reverse_sequence", compute_reverse_sequence},
    {"sequence_mask", compute_sequence_mask},
    {"meshgrid", compute_meshgrid},
    {"trilu", compute_trilu},
    {"cast_like", compute_cast_like},
    {"reinterpret", compute_reinterpret},
    {NULL, NULL},
};
