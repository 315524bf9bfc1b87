/* compute_transform.c — compute rules (lower/compute/compute.h) of injective ops:
 * reshape, nn.batch_flatten, expand_dims, squeeze, transpose,
 * broadcast_to, strided_slice, take (modes clip and wrap), and of the fills zeros, ones, full,
 * zeros_like, ones_like; concatenate and stack (their tuple's tensors are separate operands) write
 * each operand into its part of the result.  The others are inline: an output index maps to one
 * input index (reshape through the
 * row-major linear position).  Shapes are computed from the operand's shape when the op determines
 * them (batch_flatten, expand_dims, squeeze, transpose) and taken from the result type otherwise
 * (reshape, broadcast_to), where a `?` dim is refused. */
#include <stdint.h>
#include <string.h>

#include "lower/compute/compute.h"

static LTensor *inline_like(LowerCx *L, const Expr *call, LTensor **in, int nin, int ndim,
                            PrimExpr **shape, LAtFn at) {
  LTensor *t = lc_tensor(L, call, in[0]->dtype, ndim, shape);
  t->in = in, t->nin = nin, t->at = at;
  return t;
}

/* The result type's shape: literals, or size variables some operand dim uses. */
static bool type_shape(LowerCx *L, const Expr *call, LTensor **in, int nin, PrimExpr **shape) {
  const Type *ty = lc_result_type(call);
  for (int d = 0; d < ty->u.tensor.ndim; d++) {
    Dim dm = ty->u.tensor.dims[d];
    shape[d] = NULL;
    if (dm.kind == DIM_CONST) shape[d] = lc_int(L, dm.value);
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

/* ───────────────────────────── reshape ───────────────────────────── */

static PrimExpr *at_reshape(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  PrimExpr *lin = t->ndim ? idx[0] : lc_int(L, 0);
  for (int d = 1; d < t->ndim; d++)
    lin = lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, lin, (PrimExpr *)t->shape[d]), idx[d]);
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int j = x->ndim; j-- > 1;) {
    PrimExpr *dj = (PrimExpr *)x->shape[j];
    sub[j] = lc_const(dj) == 1 ? lc_int(L, 0) : lc_bin(L, PB_MOD, lin, dj);
    if (lc_const(dj) != 1) lin = lc_bin(L, PB_DIV, lin, dj);
  }
  if (x->ndim) sub[0] = lin;
  return lc_at(L, x, sub);
}

LTensor *compute_reshape(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!type_shape(L, call, in, nin, shape)) return NULL;
  return inline_like(L, call, in, nin, lc_result_type(call)->u.tensor.ndim, shape, at_reshape);
}

static LTensor *compute_batch_flatten(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (in[0]->ndim < 1) return lc_fail(L, "nn.batch_flatten of a scalar");
  PrimExpr *shape[2] = {in[0]->shape[0], lc_int(L, 1)};
  for (int j = 1; j < in[0]->ndim; j++) shape[1] = lc_mul(L, shape[1], in[0]->shape[j]);
  return inline_like(L, call, in, nin, 2, shape, at_reshape);
}

/* ───────────────────── expand_dims, squeeze, transpose ───────────────────── */

/* aux[d] = the input axis of output axis d, or -1 for a new axis of size 1. */
static PrimExpr *at_axis_map(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *sub[TENSOR_MAX_RANK];
  int n = t->in[0]->ndim;
  for (int j = 0; j < n; j++) sub[j] = lc_int(L, 0); /* squeezed axes */
  for (int d = 0; d < t->ndim; d++)
    if (t->aux[d] >= 0) sub[t->aux[d]] = idx[d];
  return lc_at(L, t->in[0], sub);
}

static LTensor *axis_map(LowerCx *L, const Expr *call, LTensor **in, int nin, int ndim,
                         const int64_t *map) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < ndim; d++) shape[d] = map[d] < 0 ? lc_int(L, 1) : in[0]->shape[map[d]];
  LTensor *t = inline_like(L, call, in, nin, ndim, shape, at_axis_map);
  for (int d = 0; d < ndim; d++) t->aux[d] = map[d];
  return t;
}

static LTensor *compute_expand_dims(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  int64_t axis = op_attr_int(call, "axis"), k = op_attr_int(call, "num_newaxis");
  if (axis < 0) axis += n + 1;
  if (axis < 0 || axis > n || k < 0 || n + k > TENSOR_MAX_RANK)
    return lc_fail(L, "expand_dims: unexpected attributes");
  int64_t map[TENSOR_MAX_RANK];
  int d = 0;
  for (int j = 0; j <= n; j++) {
    if (j == axis)
      for (int64_t i = 0; i < k; i++) map[d++] = -1;
    if (j < n) map[d++] = j;
  }
  return axis_map(L, call, in, nin, d, map);
}

/* squeeze as an axis map: the given axes, or without `axis` every dim of
 * size 1 (which must then be known statically). */
static LTensor *compute_squeeze(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  bool drop[TENSOR_MAX_RANK] = {0};
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  for (int j = 0; na < 0 && j < n; j++) {
    if (in[0]->shape[j]->kind != PE_INT) return lc_fail(L, "squeeze of a dynamic dim");
    drop[j] = lc_const(in[0]->shape[j]) == 1;
  }
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n) return lc_fail(L, "squeeze: axis out of range");
    drop[a] = true;
  }
  int64_t map[TENSOR_MAX_RANK];
  int d = 0;
  for (int j = 0; j < n; j++)
    if (!drop[j]) map[d++] = j;
  return axis_map(L, call, in, nin, d, map);
}

static LTensor *compute_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axes", ax, TENSOR_MAX_RANK);
  if (na < 0)
    for (int d = 0; d < n; d++) ax[d] = n - 1 - d;
  else if (na != n)
    return lc_fail(L, "transpose: axes do not match the rank");
  for (int d = 0; d < n; d++)
    if (ax[d] < 0) ax[d] += n;
  return axis_map(L, call, in, nin, n, ax);
}

/* ───────────────────────────── broadcast_to ───────────────────────────── */

static PrimExpr *at_broadcast_to(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  return lc_bcast_at(L, t->in[0], t->ndim, (PrimExpr **)t->shape, idx);
}

LTensor *compute_broadcast_to(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!type_shape(L, call, in, nin, shape)) return NULL;
  int n = lc_result_type(call)->u.tensor.ndim;
  for (int j = 0; j < in[0]->ndim; j++) {
    PrimExpr *d = in[0]->shape[j], *o = shape[n - in[0]->ndim + j];
    if (lc_const(d) != 1 && !lc_same_dim(d, o))
      return lc_fail(L, "broadcast_to: dims that broadcast only at run time");
  }
  return inline_like(L, call, in, nin, n, shape, at_broadcast_to);
}

/* ───────────────────────────── strided_slice ───────────────────────────── */

/* aux[2a] = first index read along axis a, aux[2a+1] = its step (numpy's
 * clamping, as kernels/kernels_transform.c slice_start). */
static PrimExpr *at_slice(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int a = 0; a < t->ndim; a++) {
    int64_t b = t->aux[2 * a], st = t->aux[2 * a + 1];
    sub[a] = st == 1 ? lc_bin(L, PB_ADD, idx[a], lc_int(L, b))
                     : lc_bin(L, PB_ADD, lc_int(L, b), lc_bin(L, PB_MUL, idx[a], lc_int(L, st)));
    if (b == 0 && st == 1) sub[a] = idx[a];
  }
  return lc_at(L, t->in[0], sub);
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* strided_slice as a lazy accessor: per axis a clamped start and a step in
 * aux (the output shape comes from the type); only static sliced axes. */
LTensor *compute_strided_slice(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int n = in[0]->ndim;
  if (n > (TENSOR_MAX_RANK + 2) / 2) return lc_fail(L, "strided_slice of a high rank");
  int64_t b[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], ax[TENSOR_MAX_RANK];
  int nb = op_attr_ints(call, "begin", b, TENSOR_MAX_RANK);
  int ns = op_attr_ints(call, "strides", st, TENSOR_MAX_RANK);
  int na = op_attr_ints(call, "axes", ax, TENSOR_MAX_RANK);
  if (strcmp(op_attr_str(lc_arena(L), call, "slice_mode"), "end") != 0 || nb < 0)
    return lc_fail(L, "strided_slice: slice_mode or begin");
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!type_shape(L, call, NULL, 0, shape)) return NULL;
  LTensor *t = lc_tensor(L, call, in[0]->dtype, n, shape);
  for (int a = 0; a < n; a++) t->aux[2 * a] = 0, t->aux[2 * a + 1] = 1;
  for (int i = 0; i < (na >= 0 ? na : nb); i++) {
    int64_t a = na >= 0 ? (ax[i] < 0 ? ax[i] + n : ax[i]) : i;
    int64_t dim = lc_const(in[0]->shape[a]);
    if (a < 0 || a >= n || dim < 0) return lc_fail(L, "strided_slice of a dynamic axis");
    int64_t s = ns == 1 ? st[0] : i < ns ? st[i] : 1;
    bool hb = i < nb;
    int64_t v = hb ? (b[i] < 0 ? b[i] + dim : b[i]) : 0;
    if (s == 0) return lc_fail(L, "strided_slice: stride 0");
    t->aux[2 * a] = s > 0 ? (hb ? clampi(v, 0, dim) : 0) : (hb ? clampi(v, -1, dim - 1) : dim - 1);
    t->aux[2 * a + 1] = s;
  }
  t->in = in, t->nin = nin, t->at = at_slice;
  return t;
}

/* ───────────────────────────── take ───────────────────────────── */

/* aux[0]: axis (-1: x flattened), aux[1]: 1 for mode "wrap" (else clip). */
static PrimExpr *at_take(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0], *ix = t->in[1];
  int axis = (int)t->aux[0], r = ix->ndim;
  int lead = axis < 0 ? 0 : axis;
  PrimExpr *n = axis < 0 ? lc_int(L, 1) : x->shape[axis];
  for (int d = 0; axis < 0 && d < x->ndim; d++) n = lc_mul(L, n, x->shape[d]);
  PrimExpr *k = lc_cast(L, DT_INT64, lc_at(L, ix, idx + lead));
  PrimExpr *nn = lc_cast(L, DT_INT64, n);
  if (t->aux[1])
    k = lc_bin(L, PB_MOD, lc_bin(L, PB_ADD, lc_bin(L, PB_MOD, k, nn), nn), nn);
  else
    k = lc_call(L, PI_MAX, lc_int(L, 0),
                lc_call(L, PI_MIN, k, lc_bin(L, PB_SUB, nn, lc_int(L, 1)), NULL), NULL);
  PrimExpr *sub[TENSOR_MAX_RANK];
  if (axis >= 0) {
    for (int d = 0; d < axis; d++) sub[d] = idx[d];
    sub[axis] = k;
    for (int d = axis + 1; d < x->ndim; d++) sub[d] = idx[d - 1 + r];
  } else {
    for (int d = x->ndim; d-- > 1;) {
      sub[d] = lc_bin(L, PB_MOD, k, lc_cast(L, DT_INT64, x->shape[d]));
      k = lc_bin(L, PB_DIV, k, lc_cast(L, DT_INT64, x->shape[d]));
    }
    if (x->ndim) sub[0] = k;
  }
  return lc_at(L, x, sub);
}

/* take with clip or wrap indices, as a lazy accessor.  The indexed axis
 * must have a known, non-zero size, since clipping into an empty axis is an
 * error in the reference. */
static LTensor *compute_take(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const char *mode = op_attr_str(lc_arena(L), call, "mode");
  if (nin != 2 || !dtype_is_int(in[1]->dtype) || op_attr_int(call, "batch_dims") != 0 ||
      (strcmp(mode, "clip") && strcmp(mode, "wrap")))
    return lc_fail(L, "take: mode, batch_dims or index dtype");
  int n = in[0]->ndim;
  int64_t axis = op_attr_is_none(call, "axis") ? INT64_MIN : op_attr_int(call, "axis");
  if (axis != INT64_MIN && axis < 0) axis += n;
  if (axis != INT64_MIN && (axis < 0 || axis >= n)) return lc_fail(L, "take: axis");
  int64_t size = 1; /* an empty axis is an error in the reference: only known sizes */
  for (int d = 0; d < n; d++)
    if (axis == INT64_MIN || d == axis) {
      if (lc_const(in[0]->shape[d]) < 0) return lc_fail(L, "take from a dynamic axis");
      size *= lc_const(in[0]->shape[d]);
    }
  if (size == 0) return lc_fail(L, "take from an empty axis");
  PrimExpr *shape[TENSOR_MAX_RANK];
  int o = 0;
  if (axis == INT64_MIN) {
    for (int d = 0; d < in[1]->ndim; d++) shape[o++] = in[1]->shape[d];
  } else {
    if (n - 1 + in[1]->ndim > TENSOR_MAX_RANK) return lc_fail(L, "take: rank");
    for (int d = 0; d < axis; d++) shape[o++] = in[0]->shape[d];
    for (int d = 0; d < in[1]->ndim; d++) shape[o++] = in[1]->shape[d];
    for (int d = (int)axis + 1; d < n; d++) shape[o++] = in[0]->shape[d];
  }
  LTensor *t = lc_tensor(L, call, in[0]->dtype, o, shape);
  t->in = in, t->nin = nin, t->at = at_take;
  t->aux[0] = axis == INT64_MIN ? -1 : axis, t->aux[1] = strcmp(mode, "wrap") == 0;
  return t;
}

/* ───────────────────── zeros, ones, full, *_like ───────────────────── */

/* aux[0]: the value for zeros/ones (0 or 1); full reads its scalar operand. */
static PrimExpr *at_fill(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  (void)idx;
  if (t->aux[1]) return lc_cast(L, t->dtype, lc_at(L, t->in[0], NULL));
  return lc_lit(L, t->dtype, (double)t->aux[0]);
}

static LTensor *fill(LowerCx *L, const Expr *call, LTensor **in, int nin, int64_t v, bool from_arg,
                     bool like) {
  DType dt = lc_result_type(call)->u.tensor.dtype;
  if (!lc_elem_dtype_ok(dt) ||
      (from_arg && (nin != 1 || in[0]->ndim != 0 || !lc_elem_dtype_ok(in[0]->dtype))))
    return lc_fail(L, "%s of this dtype", call->u.call.fn->u.op.name);
  PrimExpr *shape[TENSOR_MAX_RANK];
  int n = lc_result_type(call)->u.tensor.ndim;
  if (like)
    for (int d = 0; d < n; d++) shape[d] = in[0]->shape[d];
  else if (!type_shape(L, call, in, from_arg ? nin : 0, shape))
    return NULL;
  LTensor *t = lc_tensor(L, call, dt, n, shape);
  t->in = in, t->nin = nin, t->at = at_fill, t->aux[0] = v, t->aux[1] = from_arg;
  return t;
}

LTensor *compute_zeros(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return fill(L, c, in, n, 0, false, false);
}
LTensor *compute_ones(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return fill(L, c, in, n, 1, false, false);
}
LTensor *compute_full(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return fill(L, c, in, n, 0, true, false);
}
static LTensor *compute_zeros_like(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return fill(L, c, in, n, 0, false, true);
}
static LTensor *compute_ones_like(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return fill(L, c, in, n, 1, false, true);
}

/* ───────────────────────── concatenate, stack ───────────────────────── */

/* Writes operand x into dst, x's index idx going to dst's idx with axis
 * `axis` moved by `off` (concatenate) or a new axis `axis` at position
 * `off` inserted (stack); the outer loop parallel, the inner vectorized. */
static void store_part(LowerCx *L, const LTensor *x, Buffer *dst, int axis, PrimExpr *off,
                       bool insert) {
  int n = x->ndim;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK], *out[TENSOR_MAX_RANK + 1];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", x->shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0, o = 0; d <= n; d++) {
    if (insert && d == axis) out[o++] = off;
    if (d < n) out[o++] = !insert && d == axis ? lc_bin(L, PB_ADD, idx[d], off) : idx[d];
  }
  for (int d = 0; d < n; d++) lc_open(L);
  lc_store(L, dst, n + insert, out, lc_at(L, x, idx));
  for (int d = n; d-- > 0;)
    lc_for(L,
           d == n - 1 ? LOOP_VECTORIZED
           : d == 0   ? LOOP_PARALLEL
                      : LOOP_GRID,
           v[d], x->shape[d], lc_close(L));
}

/* The operands of a join: same dtype, supported, and the axis normalized
 * for a result of rank `rank`; false after lc_fail. */
static bool join_ok(LowerCx *L, const Expr *call, LTensor **in, int nin, int rank, int64_t *axis) {
  const char *name = call->u.call.fn->u.op.name;
  if (nin < 1) return lc_fail(L, "%s of no tensors", name), false;
  for (int i = 0; i < nin; i++)
    if (!lc_elem_dtype_ok(in[i]->dtype) || in[i]->dtype != in[0]->dtype)
      return lc_fail(L, "%s of %s", name, dtype_name(in[i]->dtype)), false;
  *axis = op_attr_int(call, "axis");
  if (*axis < 0) *axis += rank;
  if (*axis < 0 || *axis >= rank) return lc_fail(L, "%s: axis out of range", name), false;
  return true;
}

/* concatenate: each operand written into its slice of the result along
 * the axis (materialized: no select between operands, so no load outside
 * an operand, and empty operands write nothing). */
static LTensor *compute_concatenate(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t axis;
  if (!join_ok(L, call, in, nin, in[0]->ndim, &axis)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < in[0]->ndim; d++) shape[d] = in[0]->shape[d];
  for (int i = 1; i < nin; i++) shape[axis] = lc_bin(L, PB_ADD, shape[axis], in[i]->shape[axis]);
  Buffer *dst = lc_result_buffer(L, call, in[0]->dtype, in[0]->ndim, shape);
  if (!dst) return NULL;
  dst->no_init = true; /* the operands' slices cover it: no zero fill first */
  PrimExpr *off = lc_int(L, 0);
  for (int i = 0; i < nin; i++) {
    if (lc_const(in[i]->shape[axis]) != 0) store_part(L, in[i], dst, (int)axis, off, false);
    off = lc_bin(L, PB_ADD, off, in[i]->shape[axis]);
  }
  return lc_from_buffer(L, call, dst);
}

/* stack: operand i written at index i of the new axis. */
static LTensor *compute_stack(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  int64_t axis;
  int n = in[0]->ndim;
  if (n + 1 > TENSOR_MAX_RANK || !join_ok(L, call, in, nin, n + 1, &axis)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0, o = 0; d <= n; d++) {
    if (d == axis) shape[o++] = lc_int(L, nin);
    if (d < n) shape[o++] = in[0]->shape[d];
  }
  Buffer *dst = lc_result_buffer(L, call, in[0]->dtype, n + 1, shape);
  if (!dst) return NULL;
  for (int i = 0; i < nin; i++) store_part(L, in[i], dst, (int)axis, lc_int(L, i), true);
  return lc_from_buffer(L, call, dst);
}

/* ───────────────────────────── split ───────────────────────────── */

/* A field of split: the input read at an offset along the axis (aux[0]
 * the axis, aux[1] the offset). */
static PrimExpr *at_split(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *sub[TENSOR_MAX_RANK];
  int a = (int)t->aux[0];
  for (int d = 0; d < t->ndim; d++) sub[d] = idx[d];
  if (t->aux[1]) sub[a] = lc_bin(L, PB_ADD, idx[a], lc_int(L, t->aux[1]));
  return lc_at(L, t->in[0], sub);
}

/* split as a tuple of views: field i reads the input from the sum of the
 * sizes before it; the sizes come from the result type, so the split axis
 * must be static (a `?` piece is refused: the kernel checks at run time
 * that the pieces cover the axis). */
static LTensor *compute_split(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const Type *ty = call->ty;
  int n = in[0]->ndim;
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += n;
  if (!ty || ty->kind != TY_TUPLE || axis < 0 || axis >= n) return lc_fail(L, "split: axis");
  if (lc_const(in[0]->shape[axis]) < 0) return lc_fail(L, "split of a dynamic axis");
  LTensor *r = lc_tuple(L, call, ty->u.tuple.n);
  int64_t off = 0;
  for (int i = 0; i < ty->u.tuple.n; i++) {
    Dim d = ty->u.tuple.fields[i]->u.tensor.dims[axis];
    if (d.kind != DIM_CONST) return lc_fail(L, "split: a piece of unknown size");
    PrimExpr *shape[TENSOR_MAX_RANK];
    for (int k = 0; k < n; k++) shape[k] = k == axis ? lc_int(L, d.value) : in[0]->shape[k];
    LTensor *f = inline_like(L, call, in, nin, n, shape, at_split);
    f->aux[0] = axis, f->aux[1] = off;
    r->fields[i] = f, off += d.value;
  }
  if (off != lc_const(in[0]->shape[axis]))
    return lc_fail(L, "split: the pieces do not cover the axis");
  return r;
}

/* ───────────────────────────── ndarray_size ───────────────────────────── */

/* The product of the operand's dims (size variables too), in int64 and
 * converted to the result dtype as the kernel stores it. */
static LTensor *compute_ndarray_size(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const Type *ty = lc_result_type(call);
  DType dt = ty->u.tensor.dtype;
  if (!lc_elem_dtype_ok(dt)) return lc_fail(L, "ndarray_size to %s", dtype_name(dt));
  PrimExpr *n = lc_int(L, 1);
  for (int d = 0; d < in[0]->ndim; d++) n = lc_mul(L, n, in[0]->shape[d]);
  LTensor *t = lc_tensor(L, call, dt, 0, NULL);
  t->value = lc_cast(L, dt, n);
  return t;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_transform[] = {
    {"nn.batch_flatten", compute_batch_flatten},
    {"reshape", compute_reshape},
    {"transpose", compute_transpose},
    {"expand_dims", compute_expand_dims},
    {"squeeze", compute_squeeze},
    {"concatenate", compute_concatenate},
    {"stack", compute_stack},
    {"split", compute_split},
    {"strided_slice", compute_strided_slice},
    {"take", compute_take},
    {"broadcast_to", compute_broadcast_to},
    {"zeros", compute_zeros},
    {"ones", compute_ones},
    {"full", compute_full},
    {"zeros_like", compute_zeros_like},
    {"ones_like", compute_ones_like},
    {"ndarray_size", compute_ndarray_size},
    {"reshape_like", compute_reshape},
    {"broadcast_to_like", compute_broadcast_to},
    {NULL, NULL},
};
