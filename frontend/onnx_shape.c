/* onnx_shape.c — converters of the shape and data-movement ops: Flatten,
 * Reshape, Transpose, (Un)Squeeze, Concat, Split, Slice, Gather, Expand,
 * Tile, Pad, Shape, Size, ConstantOfShape, Range (rows in onnx_ops.c).
 *
 * ONNX passes shapes, axes, starts and pads as tensors (inputs) from
 * opset 10 to 18, attributes before; both are read into the Relay op's
 * attributes, so they must be known at import time: constants,
 * initializers, or shape arithmetic the builder folded (Shape of a static
 * shape is a constant).  Where ONNX's meaning differs from the Relay op's
 * it is resolved here: Reshape's 0 (copy the dim, unless allowzero),
 * Unsqueeze's axes counted in the output, Gather's negative indices,
 * Expand's two-way broadcast, Slice's out-of-range starts and ends. */
#include <string.h>

#include "frontend/onnx_int.h"

enum { MAXV = TENSOR_MAX_RANK * 8 };

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

static FeVal *reshape_to(OnnxCx *cx, FeVal *v, int n, const int64_t *shape) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, shape);
  return FE_OP(cx, "reshape", ab_done(&b), v);
}

/* Axes from an attribute (before `opset_input`) or the optional input 1;
 * their count, or -1 when none are given. */
static int axes_arg(OnnxCx *cx, int64_t opset_input, int64_t *axes) {
  if (cx->opset < opset_input) return oa_ints(cx, "axes", axes, TENSOR_MAX_RANK);
  if (cx->nin < 2 || !cx->in[1]) return -1;
  return fe_need_ints(cx, cx->in[1], "input 'axes'", axes, TENSOR_MAX_RANK);
}

/* ───────────────────────── Flatten, Reshape, Transpose ───────────────────────── */

bool onnx_convert_flatten(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int64_t axis = oa_int(cx, "axis", 1), shape[TENSOR_MAX_RANK];
  if (axis < -r || axis > r)
    return fe_fail(cx, "axis %lld is out of range for rank %d", (long long)axis, r);
  if (axis < 0) axis += r;
  if (axis == 1 && r >= 2) return set_out(cx, FE_OP(cx, "nn.batch_flatten", NULL, x));
  if (!fe_static_shape(x, shape))
    return fe_fail(cx, "Flatten at axis %lld needs a static input shape", (long long)axis);
  int64_t two[2] = {1, 1};
  for (int i = 0; i < r; i++) two[i >= axis] *= shape[i];
  return set_out(cx, reshape_to(cx, x, 2, two));
}

/* Reshape: with a static input the target shape is resolved here (0
 * copies the input's dim unless allowzero, one -1 is inferred); otherwise
 * 0 and -1 pass to reshape, which means the same; a shape known only at
 * run time gives dyn.reshape (TVM's way). */
bool onnx_convert_reshape(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int64_t ns[TENSOR_MAX_RANK], xs[TENSOR_MAX_RANK];
  bool allowzero = cx->opset >= 14 && oa_int(cx, "allowzero", 0);
  if (!cx->in[1]->value) { /* computed at run time (Shape → Gather → Concat): dyn.reshape */
    AttrB b = ab_new(cx);
    if (allowzero) ab_bool(&b, "allowzero", true);
    return set_out(cx, FE_OP(cx, "dyn.reshape", ab_done(&b), x, cx->in[1]));
  }
  int n = fe_need_ints(cx, cx->in[1], "input 'shape'", ns, TENSOR_MAX_RANK);
  if (n < 0) return false;
  if (!fe_static_shape(x, xs)) {
    AttrB b = ab_new(cx);
    ab_ints(&b, "newshape", n, ns);
    if (allowzero) ab_bool(&b, "allowzero", true);
    return set_out(cx, FE_OP(cx, "reshape", ab_done(&b), x));
  }
  int64_t total = 1, known = 1;
  int infer = -1;
  for (int i = 0; i < fe_rank(x); i++) total *= xs[i];
  for (int i = 0; i < n; i++) {
    if (ns[i] == 0 && !allowzero) {
      if (i >= fe_rank(x))
        return fe_fail(cx, "shape entry %d is 0 but the input has rank %d", i, fe_rank(x));
      ns[i] = xs[i];
    }
    if (ns[i] == -1) {
      if (infer >= 0) return fe_fail(cx, "the shape has more than one -1");
      infer = i;
    } else if (ns[i] < 0) {
      return fe_fail(cx, "shape entry %d is %lld", i, (long long)ns[i]);
    } else {
      known *= ns[i];
    }
  }
  if (infer >= 0) ns[infer] = known ? total / known : 0, known *= ns[infer];
  if (known != total)
    return fe_fail(cx, "cannot reshape %lld elements to %s", (long long)total, "the given shape");
  return set_out(cx, reshape_to(cx, x, n, ns));
}

bool onnx_convert_transpose(OnnxCx *cx) {
  int64_t perm[TENSOR_MAX_RANK];
  int n = oa_ints(cx, "perm", perm, TENSOR_MAX_RANK);
  AttrB b = ab_new(cx);
  if (n >= 0) ab_ints(&b, "axes", n, perm);
  return !cx->failed && set_out(cx, FE_OP(cx, "transpose", ab_done(&b), cx->in[0]));
}

/* ───────────────────────── Squeeze, Unsqueeze ───────────────────────── */

bool onnx_convert_squeeze(OnnxCx *cx) {
  int64_t axes[TENSOR_MAX_RANK];
  int n = axes_arg(cx, 13, axes);
  if (cx->failed) return false;
  AttrB b = ab_new(cx);
  if (n >= 0) ab_ints(&b, "axis", n, axes);
  return set_out(cx, FE_OP(cx, "squeeze", ab_done(&b), cx->in[0]));
}

/* Unsqueeze: axes index the output; inserted in increasing order, each
 * lands at its final place. */
bool onnx_convert_unsqueeze(OnnxCx *cx) {
  int64_t axes[TENSOR_MAX_RANK];
  int n = axes_arg(cx, 13, axes);
  if (cx->failed) return false;
  if (n <= 0) return fe_fail(cx, "no axes given");
  int out_rank = fe_rank(cx->in[0]) + n;
  if (out_rank > TENSOR_MAX_RANK) return fe_fail(cx, "the result would have rank %d", out_rank);
  bool at[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int a = fe_axis(cx, axes[i], out_rank, "axis");
    if (a < 0) return false;
    if (at[a]) return fe_fail(cx, "axis %d is given twice", a);
    at[a] = true;
  }
  FeVal *y = cx->in[0];
  for (int a = 0; a < out_rank && y; a++) {
    if (!at[a]) continue;
    AttrB b = ab_new(cx);
    ab_int(&b, "axis", a);
    y = FE_OP(cx, "expand_dims", ab_done(&b), y);
  }
  return set_out(cx, y);
}

/* ───────────────────────── Concat, Split ───────────────────────── */

bool onnx_convert_concat(OnnxCx *cx) {
  if (!oa_get(cx, "axis")) return fe_fail(cx, "attribute 'axis' is missing");
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", oa_int(cx, "axis", 0));
  for (int i = 0; i < cx->nin; i++)
    if (!cx->in[i]) return fe_fail(cx, "input %d is empty", i);
  return set_out(cx, fe_op(cx, "concatenate", cx->nin, cx->in, ab_done(&b)));
}

/* Split: sizes from the 'split' attribute (opset < 13) or input, else
 * equal parts, one per output (num_outputs at 18).  Relay's split takes
 * the indices where pieces begin. */
bool onnx_convert_split(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x), axis = fe_axis(cx, oa_int(cx, "axis", 0), r, "axis");
  if (axis < 0) return false;
  int64_t sizes[MAXV], idx[MAXV];
  int n = cx->opset < 13             ? oa_ints(cx, "split", sizes, MAXV)
          : cx->nin > 1 && cx->in[1] ? fe_need_ints(cx, cx->in[1], "input 'split'", sizes, MAXV)
                                     : -1;
  if (cx->failed) return false;
  AttrB b = ab_new(cx);
  if (n < 0) {
    n = cx->nout;
    ab_int(&b, "indices_or_sections", n);
  } else {
    if (n != cx->nout) return fe_fail(cx, "%d split sizes for %d outputs", n, cx->nout);
    for (int i = 0; i + 1 < n; i++) idx[i] = (i ? idx[i - 1] : 0) + sizes[i];
    ab_ints(&b, "indices_or_sections", n - 1, idx);
  }
  ab_int(&b, "axis", axis);
  if (n == 1) return set_out(cx, x);
  FeVal *t = FE_OP(cx, "split", ab_done(&b), x);
  for (int i = 0; t && i < cx->nout; i++) cx->out[i] = fe_get(cx, t, i);
  return t != NULL;
}

/* ───────────────────────── Slice ───────────────────────── */

/* Clamps a start or end so that it fits the attribute's int32 text and
 * means the same: past the end of a static dim is the end, before the
 * beginning is before it (numpy's rules, which strided_slice follows). */
static int64_t clamp_bound(int64_t v, Dim d) {
  int64_t hi = d.kind == DIM_CONST ? d.value : INT32_MAX,
          lo = d.kind == DIM_CONST ? -d.value - 1 : INT32_MIN;
  return v > hi ? hi : v < lo ? lo : v;
}

/* Slice with starts or ends computed at run time: dyn.strided_slice over
 * the leading axes, so the axes (if given) must be 0, 1, ... in order and
 * the steps known. */
static bool dynamic_slice(OnnxCx *cx) {
  int64_t ax[TENSOR_MAX_RANK];
  int na = cx->nin > 3 && cx->in[3]
               ? fe_need_ints(cx, cx->in[3], "input 'axes'", ax, TENSOR_MAX_RANK)
               : -1;
  for (int i = 0; i < na; i++)
    if (ax[i] != i)
      return fe_fail(
          cx, "starts or ends computed at run time need axes 0, 1, ... (got axis %lld at %d)",
          (long long)ax[i], i);
  if (cx->failed) return false;
  DType it = fe_dtype(cx->in[1]);
  FeVal *b = cx->in[1], *e = fe_cast(cx, cx->in[2], it);
  if (cx->nin > 4 && cx->in[4])
    return set_out(
        cx, FE_OP(cx, "dyn.strided_slice", NULL, cx->in[0], b, e, fe_cast(cx, cx->in[4], it)));
  return set_out(cx, e ? FE_OP(cx, "dyn.strided_slice", NULL, cx->in[0], b, e) : NULL);
}

/* Slice: starts, ends (and axes, steps) as attributes before opset 10,
 * inputs after; known values become strided_slice's attributes, with
 * ONNX's out-of-range values clamped (numpy's rules on both sides). */
bool onnx_convert_slice(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int64_t st[TENSOR_MAX_RANK], en[TENSOR_MAX_RANK], ax[TENSOR_MAX_RANK], sp[TENSOR_MAX_RANK];
  int ns, ne, na = -1, nsp = -1;
  if (cx->opset < 10) {
    ns = oa_ints(cx, "starts", st, TENSOR_MAX_RANK), ne = oa_ints(cx, "ends", en, TENSOR_MAX_RANK);
    na = oa_ints(cx, "axes", ax, TENSOR_MAX_RANK);
  } else {
    if (cx->nin < 3) return fe_fail(cx, "takes starts and ends as inputs 1 and 2");
    if (!cx->in[1]->value || !cx->in[2]->value) return dynamic_slice(cx);
    ns = fe_need_ints(cx, cx->in[1], "input 'starts'", st, TENSOR_MAX_RANK);
    ne = ns < 0 ? -1 : fe_need_ints(cx, cx->in[2], "input 'ends'", en, TENSOR_MAX_RANK);
    if (cx->nin > 3 && cx->in[3])
      na = fe_need_ints(cx, cx->in[3], "input 'axes'", ax, TENSOR_MAX_RANK);
    if (cx->nin > 4 && cx->in[4])
      nsp = fe_need_ints(cx, cx->in[4], "input 'steps'", sp, TENSOR_MAX_RANK);
  }
  if (cx->failed) return false;
  if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nsp >= 0 && nsp != ns))
    return fe_fail(cx, "starts, ends, axes and steps must have the same length");
  for (int i = 0; i < ns; i++) {
    int a = fe_axis(cx, na >= 0 ? ax[i] : i, r, "axis");
    if (a < 0) return false;
    ax[i] = a;
    if (nsp < 0) sp[i] = 1;
    if (sp[i] == 0) return fe_fail(cx, "step 0 on axis %d", a);
    st[i] = clamp_bound(st[i], fe_dim(x, a)), en[i] = clamp_bound(en[i], fe_dim(x, a));
  }
  AttrB b = ab_new(cx);
  ab_ints(&b, "begin", ns, st);
  ab_ints(&b, "end", ns, en);
  ab_ints(&b, "strides", ns, sp);
  ab_ints(&b, "axes", ns, ax);
  return set_out(cx, FE_OP(cx, "strided_slice", ab_done(&b), x));
}

/* ───────────────────────── Gather ───────────────────────── */

/* Gather is take along an axis.  Known indices are made non-negative here
 * (and checked); indices known only at run time take mode "wrap", which
 * gives ONNX's meaning to negative ones. */
bool onnx_convert_gather(OnnxCx *cx) {
  FeVal *x = cx->in[0], *ix = cx->in[1];
  int axis = fe_axis(cx, oa_int(cx, "axis", 0), fe_rank(x), "axis");
  if (axis < 0) return false;
  Dim d = fe_dim(x, axis);
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  if (ix->value && ix->expr->kind == EX_CONST && d.kind == DIM_CONST) {
    const Tensor *t = ix->value;
    Tensor *n = tensor_new(cx->a, t->dtype, t->ndim, t->shape);
    for (int64_t i = 0; i < t->numel; i++) {
      int64_t v = tensor_get_i64(t, i);
      if (v < -d.value || v >= d.value)
        return fe_fail(cx, "index %lld is out of range for axis %d of size %lld", (long long)v,
                       axis, (long long)d.value);
      tensor_set_i64(n, i, v < 0 ? v + d.value : v);
    }
    ix = fe_const(cx, n);
  } else {
    ab_str(&b, "mode", "wrap");
  }
  return set_out(cx, FE_OP(cx, "take", ab_done(&b), x, ix));
}

/* ───────────────────────── Expand, Tile, Pad ───────────────────────── */

/* Expand broadcasts both ways: the result's shape is the broadcast of the
 * input's and the given one (so a 1 in the given shape keeps the input's
 * dim). */
bool onnx_convert_expand(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int64_t to[TENSOR_MAX_RANK], out[TENSOR_MAX_RANK];
  int n = fe_need_ints(cx, cx->in[1], "input 'shape'", to, TENSOR_MAX_RANK);
  if (n < 0) return false;
  int r = fe_rank(x), m = n > r ? n : r;
  for (int i = 0; i < m; i++) {
    int ix = i - (m - r), it = i - (m - n);
    Dim dx = ix >= 0 ? fe_dim(x, ix) : dim_const(1);
    int64_t dt = it >= 0 ? to[it] : 1;
    if (dx.kind != DIM_CONST) {
      if (dt != 1) return fe_fail(cx, "input dim %d is not static", ix);
      return fe_fail(cx, "Expand of a dynamic dim is not supported");
    }
    if (dx.value != dt && dx.value != 1 && dt != 1)
      return fe_fail(cx, "shapes do not broadcast at dim %d (%lld and %lld)", i,
                     (long long)dx.value, (long long)dt);
    out[i] = dx.value == 1 ? dt : dx.value;
  }
  AttrB b = ab_new(cx);
  ab_ints(&b, "shape", m, out);
  return set_out(cx, FE_OP(cx, "broadcast_to", ab_done(&b), x));
}

bool onnx_convert_tile(OnnxCx *cx) {
  int64_t reps[TENSOR_MAX_RANK];
  int n = fe_need_ints(cx, cx->in[1], "input 'repeats'", reps, TENSOR_MAX_RANK);
  if (n < 0) return false;
  if (n != fe_rank(cx->in[0]))
    return fe_fail(cx, "%d repeats for an input of rank %d", n, fe_rank(cx->in[0]));
  AttrB b = ab_new(cx);
  ab_ints(&b, "reps", n, reps);
  return set_out(cx, FE_OP(cx, "tile", ab_done(&b), cx->in[0]));
}

/* pad_width=[[b0, e0], [b1, e1], ...] from ONNX's [b0, b1, ..., e0, e1, ...]. */
static void ab_pad_width(AttrB *b, int r, const int64_t *pads) {
  AttrValue *l = ARENA_NEW(b->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = r;
  l->u.list.items = ARENA_ARRAY(b->a, AttrValue *, r ? r : 1);
  for (int i = 0; i < r; i++) {
    AttrValue *p = ARENA_NEW(b->a, AttrValue);
    p->kind = AV_LIST;
    p->u.list.n = 2;
    p->u.list.items = ARENA_ARRAY(b->a, AttrValue *, 2);
    p->u.list.items[0] = attr_int(b->a, pads[i], DT_INT32);
    p->u.list.items[1] = attr_int(b->a, pads[r + i], DT_INT32);
    l->u.list.items[i] = p;
  }
  RLY_ASSERT(b->n < FE_MAX_ATTRS);
  b->keys[b->n] = "pad_width", b->vals[b->n++] = l;
}

/* Pad: pads (and the constant value) as attributes before opset 11,
 * inputs after; axes (opset 18) pick the padded axes. */
bool onnx_convert_pad(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int64_t pads[2 * TENSOR_MAX_RANK], full[2 * TENSOR_MAX_RANK] = {0}, axes[TENSOR_MAX_RANK];
  double value = 0;
  int n, na = -1;
  if (cx->opset < 11) {
    n = oa_ints(cx, "pads", pads, 2 * TENSOR_MAX_RANK);
    value = oa_float(cx, "value", 0);
  } else {
    n = cx->nin > 1 ? fe_need_ints(cx, cx->in[1], "input 'pads'", pads, 2 * TENSOR_MAX_RANK) : -1;
    if (cx->nin > 2 && cx->in[2] &&
        !fe_need_scalar(cx, cx->in[2], "input 'constant_value'", &value))
      return false;
    if (cx->nin > 3 && cx->in[3])
      na = fe_need_ints(cx, cx->in[3], "input 'axes'", axes, TENSOR_MAX_RANK);
  }
  if (cx->failed) return false;
  int k = na >= 0 ? na : r;
  if (n != 2 * k) return fe_fail(cx, "%d pads for %d axes", n, k);
  for (int i = 0; i < k; i++) {
    int a = na >= 0 ? fe_axis(cx, axes[i], r, "axis") : i;
    if (a < 0) return false;
    if (pads[i] < 0 || pads[k + i] < 0)
      return fe_fail(cx, "negative pads (cropping) are not supported");
    full[a] = pads[i], full[r + a] = pads[k + i];
  }
  const char *mode = oa_str(cx, "mode", "constant");
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
    return fe_fail(cx, "mode '%s' is not supported (constant, reflect, edge are)", mode);
  AttrB b = ab_new(cx);
  ab_pad_width(&b, r, full);
  ab_str(&b, "pad_mode", mode);
  return set_out(cx, FE_OP(cx, "nn.pad", ab_done(&b), x, fe_scalar(cx, fe_dtype(x), value)));
}

/* ───────────────────────── Shape, Size, ConstantOfShape, Range ───────────────────────── */

/* Shape (with start and end from opset 15): a constant when the input's
 * shape is static, else shape_of (and a slice of it). */
bool onnx_convert_shape(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int64_t start = cx->opset >= 15 ? oa_int(cx, "start", 0) : 0,
          end = cx->opset >= 15 ? oa_int(cx, "end", r) : r;
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start, end = end < start ? start : end > r ? r : end;
  int64_t shape[TENSOR_MAX_RANK];
  if (fe_static_shape(x, shape))
    return set_out(cx, fe_ints(cx, DT_INT64, (int)(end - start), shape + start));
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", "int64");
  FeVal *s = FE_OP(cx, "shape_of", ab_done(&b), x);
  if (!s || (start == 0 && end == r)) return set_out(cx, s);
  AttrB sl = ab_new(cx);
  ab_ints(&sl, "begin", 1, &start);
  ab_ints(&sl, "end", 1, &end);
  return set_out(cx, FE_OP(cx, "strided_slice", ab_done(&sl), s));
}

bool onnx_convert_size(OnnxCx *cx) {
  int64_t shape[TENSOR_MAX_RANK], n = 1;
  if (fe_static_shape(cx->in[0], shape)) {
    for (int i = 0; i < fe_rank(cx->in[0]); i++) n *= shape[i];
    return set_out(cx, fe_scalar(cx, DT_INT64, (double)n));
  }
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", "int64");
  return set_out(cx, FE_OP(cx, "ndarray_size", ab_done(&b), cx->in[0]));
}

/* ConstantOfShape: full(value, shape=...) (folded to a constant when the
 * shape is known), dyn.full with a shape computed at run time; the value
 * defaults to a float32 zero. */
bool onnx_convert_constant_of_shape(OnnxCx *cx) {
  int64_t shape[TENSOR_MAX_RANK];
  const Onnx__AttributeProto *at = oa_get(cx, "value");
  FeVal *v;
  if (at && at->t) {
    Tensor *t = onnx_tensor(cx, at->t, "attribute 'value'");
    if (!t) return false;
    if (t->numel != 1) return fe_fail(cx, "attribute 'value' must hold one value");
    Tensor *s = tensor_new(cx->a, t->dtype, 0, NULL);
    memcpy(s->data, t->data, (size_t)dtype_bytes(t->dtype));
    v = fe_const(cx, s);
  } else {
    v = fe_scalar(cx, DT_FLOAT32, 0);
  }
  AttrB b = ab_new(cx);
  if (!cx->in[0]->value) { /* a shape computed at run time */
    ab_str(&b, "dtype", dtype_name(fe_dtype(v)));
    return set_out(cx, FE_OP(cx, "dyn.full", ab_done(&b), v, cx->in[0]));
  }
  int n = fe_need_ints(cx, cx->in[0], "input 'shape'", shape, TENSOR_MAX_RANK);
  if (n < 0) return false;
  ab_ints(&b, "shape", n, shape);
  ab_str(&b, "dtype", dtype_name(fe_dtype(v)));
  return set_out(cx, FE_OP(cx, "full", ab_done(&b), v));
}

bool onnx_convert_range(OnnxCx *cx) {
  for (int i = 0; i < 3; i++)
    if (fe_rank(cx->in[i]) != 0) return fe_fail(cx, "input %d must be a scalar", i);
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", dtype_name(fe_dtype(cx->in[0])));
  return set_out(cx, FE_OP(cx, "arange", ab_done(&b), cx->in[0], cx->in[1], cx->in[2]));
}
