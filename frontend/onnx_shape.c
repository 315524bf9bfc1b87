/* onnx_shape.c — converters of the shape and data-movement ops: Flatten,
 * Reshape, Transpose, (Un)Squeeze, Concat, Split, Slice, Gather, Expand,
 * Tile, Pad, Shape, Size, ConstantOfShape, Range (rows in onnx_ops.c).
 *
 * ONNX passes shapes, axes, starts and pads as tensors (inputs) from
 * opset 10 to 18, attributes before.  Known ones (constants, initializers,
 * shape arithmetic the builder folded) become the Relay op's attributes.
 * Shapes computed at run time from dims the types name (a size variable
 * `seq` from a dim_param) are followed symbolically: Shape gives a value
 * whose elements are known to be (1, seq, 64), and Gather, Slice,
 * (Un)Squeeze, Concat, Cast and the arithmetic of onnx_math.c carry that
 * sym along (onnx_int.h); a value whose every element is static becomes a
 * constant, so the arithmetic on static dims folds, and Reshape to a
 * (1, seq, 4, 16) keeps `seq` in its type (sym_reshape).  What stays
 * unknown runs at run time: shape_of and the dyn ops (dyn.reshape,
 * dyn.strided_slice, dyn.broadcast_to, dyn.tile, dyn.nn.pad, dyn.full).
 * Where ONNX's meaning differs from the Relay op's it is resolved here:
 * Reshape's 0 (copy the dim, unless allowzero), Unsqueeze's axes counted
 * in the output, Gather's negative indices, Expand's two-way broadcast,
 * Slice's out-of-range starts and ends. */
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_int.h"

enum { MAXV = TENSOR_MAX_RANK * 8 };

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* A type as text in the arena, for messages. */
static const char *type_text(OnnxCx *cx, const Type *t) {
  char *p = print_type(t);
  const char *s = arena_strdup(cx->a, p);
  free(p);
  return s;
}

/* ───────────────────────── shape values followed symbolically ───────────────────────── */

/* A shape's dim as a sym element (what a metavariable stands for is not
 * known here). */
static Dim sym_of_dim(Dim d) { return d.kind == DIM_CONST || d.kind == DIM_VAR ? d : dim_any(); }

/* Whether v is a 0-D or 1-D integer tensor (whose elements a sym can
 * describe), and its element count. */
static int sym_len(const FeVal *v) {
  if (!fe_tensor_type(v) || fe_rank(v) > 1) return -1;
  if (!dtype_is_int(fe_dtype(v)) && fe_dtype(v) != DT_BOOL) return -1;
  if (fe_rank(v) == 0) return 1;
  Dim d = fe_dim(v, 0);
  return d.kind == DIM_CONST && d.value <= MAXV ? (int)d.value : -1;
}

int fe_sym_get(const FeVal *v, Dim *out, int max) {
  int n = sym_len(v);
  if (n < 0 || n > max || (!v->value && !v->sym)) return -1;
  for (int i = 0; i < n; i++)
    out[i] = v->value ? dim_const(tensor_get_i64(v->value, i)) : v->sym[i];
  return n;
}

FeVal *fe_sym_set(OnnxCx *cx, FeVal *v, int n, const Dim *sym) {
  if (!v || v->value || sym_len(v) != n) return v;
  int64_t vals[MAXV];
  bool known = true;
  for (int i = 0; i < n; i++) known = known && sym[i].kind == DIM_CONST, vals[i] = sym[i].value;
  if (known) /* every element is a static dim: the value is a constant */
    return fe_rank(v) == 0 ? fe_scalar(cx, fe_dtype(v), (double)vals[0])
                           : fe_ints(cx, fe_dtype(v), n, vals);
  FeVal *s = ARENA_NEW(cx->a, FeVal);
  *s = *v;
  Dim *d = ARENA_ARRAY(cx->a, Dim, n ? n : 1);
  memcpy(d, sym, sizeof(Dim) * (size_t)n);
  s->sym = d;
  return s;
}

/* y (computed from x by an op that keeps the elements in order: Cast,
 * (Un)Squeeze, Identity) with x's sym. */
static FeVal *sym_same(OnnxCx *cx, FeVal *y, const FeVal *x) {
  Dim s[MAXV];
  int n = x->value ? -1 : fe_sym_get(x, s, MAXV);
  return n >= 0 ? fe_sym_set(cx, y, n, s) : y;
}

static FeVal *reshape_to(OnnxCx *cx, FeVal *v, int n, const int64_t *shape) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, shape);
  return FE_OP(cx, "reshape", ab_done(&b), v);
}

/* The shape of x as an int64 value: a constant when static, else shape_of
 * (followed symbolically). */
static FeVal *shape_value(OnnxCx *cx, FeVal *x) {
  int64_t shape[TENSOR_MAX_RANK];
  int r = fe_rank(x);
  if (fe_static_shape(x, shape)) return fe_ints(cx, DT_INT64, r, shape);
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", "int64");
  Dim sym[TENSOR_MAX_RANK];
  for (int i = 0; i < r; i++) sym[i] = sym_of_dim(fe_dim(x, i));
  return fe_sym_set(cx, FE_OP(cx, "shape_of", ab_done(&b), x), r, sym);
}

/* A 1-D int64 shape value of n entries with m - n leading ones. */
static FeVal *lead_ones(OnnxCx *cx, FeVal *v, int n, int m) {
  if (!v || m <= n) return v;
  int64_t ones[TENSOR_MAX_RANK];
  for (int i = 0; i < m - n; i++) ones[i] = 1;
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 0);
  return FE_OP(cx, "concatenate", ab_done(&b), fe_ints(cx, DT_INT64, m - n, ones), v);
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

/* Reshape to a shape computed at run time whose elements are followed
 * symbolically (sym): a static reshape when every element is a constant,
 * the input's own dim at the same place (written 0: copy it), or, for one
 * element only, a size variable or `?` (written -1: inferred, which
 * reshape's relation resolves to the size variable when the others
 * cancel).  The result's type then keeps the size variables that
 * dyn.reshape would turn into `?`, and the op fuses.  False, with nothing
 * built, when the shape is not of that form. */
static bool sym_reshape(OnnxCx *cx, FeVal *x, FeVal *shape, bool allowzero) {
  Dim s[TENSOR_MAX_RANK];
  int64_t ns[TENSOR_MAX_RANK];
  int n = fe_sym_get(shape, s, TENSOR_MAX_RANK), r = fe_rank(x), infer = -1;
  if (n < 0 || fe_rank(shape) != 1) return false;
  for (int j = 0; j < n; j++) {
    Dim d = s[j];
    if (d.kind == DIM_CONST && d.value >= 0) { /* ONNX's 0 is reshape's 0 (cursor == j) */
      ns[j] = d.value;
      continue;
    }
    if (d.kind == DIM_CONST && d.value < -1) return false; /* dyn.reshape reports it */
    Dim xd = j < r ? fe_dim(x, j) : dim_any();
    if (!allowzero && d.kind == DIM_VAR && xd.kind == DIM_VAR && strcmp(xd.name, d.name) == 0) {
      ns[j] = 0;
      continue;
    }
    if (infer >= 0) return false;
    infer = j, ns[j] = -1;
  }
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, ns);
  if (allowzero) ab_bool(&b, "allowzero", true);
  set_out(cx, FE_OP(cx, "reshape", ab_done(&b), x));
  return true;
}

/* Reshape: with a static input the target shape is resolved here (0
 * copies the input's dim unless allowzero, one -1 is inferred); otherwise
 * 0 and -1 pass to reshape, which means the same; a shape known only at
 * run time is followed symbolically (sym_reshape) or else gives
 * dyn.reshape (TVM's way). */
static bool reshape_known(OnnxCx *cx, FeVal *x, int n, int64_t *ns, bool allowzero);

bool onnx_convert_reshape(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int64_t ns[TENSOR_MAX_RANK];
  bool allowzero = cx->opset >= 14 && oa_int(cx, "allowzero", 0);
  if (!cx->in[1]->value) { /* computed at run time (Shape → Gather → Concat) */
    if (sym_reshape(cx, x, cx->in[1], allowzero)) return !cx->failed;
    AttrB b = ab_new(cx);
    if (allowzero) ab_bool(&b, "allowzero", true);
    return set_out(cx, FE_OP(cx, "dyn.reshape", ab_done(&b), x, cx->in[1]));
  }
  int n = fe_need_ints(cx, cx->in[1], "input 'shape'", ns, TENSOR_MAX_RANK);
  return n >= 0 && reshape_known(cx, x, n, ns, allowzero);
}

/* Reshape before opset 5: the shape is attribute 'shape'. */
bool onnx_convert_reshape_v1(OnnxCx *cx) {
  int64_t ns[TENSOR_MAX_RANK];
  int n = oa_ints(cx, "shape", ns, TENSOR_MAX_RANK);
  if (cx->failed) return false;
  if (n < 0) return fe_fail(cx, "attribute 'shape' is missing");
  return reshape_known(cx, cx->in[0], n, ns, false);
}

/* Reshape to a known shape ns (n entries; ONNX's 0 and -1). */
static bool reshape_known(OnnxCx *cx, FeVal *x, int n, int64_t *ns, bool allowzero) {
  int64_t xs[TENSOR_MAX_RANK];
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
  bool same = n == fe_rank(x);
  for (int i = 0; same && i < n; i++) same = ns[i] == xs[i];
  if (same) return set_out(cx, x);                               /* to its own shape */
  return set_out(cx, sym_same(cx, reshape_to(cx, x, n, ns), x)); /* a shape value stays one */
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
  if (cx->opset >= 13 && cx->nin > 1 && cx->in[1] && !cx->in[1]->value)
    return onnx_convert_squeeze_dyn(cx);
  int64_t axes[TENSOR_MAX_RANK];
  int n = axes_arg(cx, 13, axes);
  if (cx->failed) return false;
  AttrB b = ab_new(cx);
  if (n >= 0) ab_ints(&b, "axis", n, axes);
  return set_out(cx, sym_same(cx, FE_OP(cx, "squeeze", ab_done(&b), cx->in[0]), cx->in[0]));
}

/* Unsqueeze: axes index the output; inserted in increasing order, each
 * lands at its final place. */
bool onnx_convert_unsqueeze(OnnxCx *cx) {
  if (cx->opset >= 13 && cx->nin > 1 && cx->in[1] && !cx->in[1]->value)
    return onnx_convert_unsqueeze_dyn(cx);
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
  return set_out(cx, sym_same(cx, y, cx->in[0]));
}

/* ───────────────────────── Concat, Split ───────────────────────── */

/* Concat: axis is required from opset 4, 1 by default before. */
bool onnx_convert_concat(OnnxCx *cx) {
  if (cx->opset >= 4 && !oa_get(cx, "axis")) return fe_fail(cx, "attribute 'axis' is missing");
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", oa_int(cx, "axis", 1));
  for (int i = 0; i < cx->nin; i++)
    if (!cx->in[i]) return fe_fail(cx, "input %d is empty", i);
  FeVal *y = fe_op(cx, "concatenate", cx->nin, cx->in, ab_done(&b));
  /* shape pieces: the result's elements are the pieces' */
  Dim s[MAXV];
  int n = 0;
  for (int i = 0; i < cx->nin && n >= 0; i++) {
    int k = fe_rank(cx->in[i]) == 1 ? fe_sym_get(cx->in[i], s + n, MAXV - n) : -1;
    n = k < 0 ? -1 : n + k;
  }
  return set_out(cx, n >= 0 ? fe_sym_set(cx, y, n, s) : y);
}

/* Split's sizes: the 'split' attribute (opset < 13; at opset 1, or input
 * 1), or input 1 (from 13); -1 when none are given. */
static int split_sizes(OnnxCx *cx, int64_t *sizes) {
  bool input = cx->opset >= 13 || (cx->opset < 2 && !oa_get(cx, "split"));
  if (!input) return oa_ints(cx, "split", sizes, MAXV);
  if (cx->nin < 2 || !cx->in[1]) return -1;
  return fe_need_ints(cx, cx->in[1], "input 'split'", sizes, MAXV);
}

/* Split: sizes given (split_sizes), else equal parts, one per output
 * (num_outputs at 18).  Relay's split takes the indices where pieces
 * begin. */
bool onnx_convert_split(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x), axis = fe_axis(cx, oa_int(cx, "axis", 0), r, "axis");
  if (axis < 0) return false;
  if (cx->opset >= 13 && cx->nin > 1 && cx->in[1] && !cx->in[1]->value)
    return onnx_convert_split_dyn(cx);
  int64_t sizes[MAXV], idx[MAXV];
  int n = split_sizes(cx, sizes);
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

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* y = x[b:e:step] of a 1-D shape value x followed symbolically (numpy's
 * rules for the bounds, as strided_slice has them). */
static FeVal *sym_slice(OnnxCx *cx, FeVal *y, FeVal *x, int64_t b, int64_t e, int64_t step) {
  Dim s[MAXV], out[MAXV];
  int n = x->value ? -1 : fe_sym_get(x, s, MAXV), k = 0;
  if (n < 0 || step == 0) return y;
  b += b < 0 ? n : 0, e += e < 0 ? n : 0;
  if (step > 0)
    for (int64_t i = clamp64(b, 0, n), end = clamp64(e, 0, n); i < end; i += step) out[k++] = s[i];
  else
    for (int64_t i = clamp64(b, -1, n - 1), end = clamp64(e, -1, n - 1); i > end; i += step)
      out[k++] = s[i];
  return fe_sym_set(cx, y, k, out);
}

/* One element of a 1-D value, as a 1-D value (followed symbolically). */
static FeVal *element(OnnxCx *cx, FeVal *v, int64_t k) {
  int64_t e = k + 1;
  AttrB b = ab_new(cx);
  ab_ints(&b, "begin", 1, &k);
  ab_ints(&b, "end", 1, &e);
  if (!v || (k == 0 && fe_dim(v, 0).kind == DIM_CONST && fe_dim(v, 0).value == 1)) return v;
  return sym_slice(cx, FE_OP(cx, "strided_slice", ab_done(&b), v), v, k, e, 1);
}

/* The static length of Slice's input i (1-D integers), or -1 after failing. */
static int bounds_len(OnnxCx *cx, int i, const char *what) {
  FeVal *v = cx->in[i];
  if (fe_rank(v) == 1 && dtype_is_int(fe_dtype(v)) && fe_dim(v, 0).kind == DIM_CONST &&
      fe_dim(v, 0).value <= TENSOR_MAX_RANK)
    return (int)fe_dim(v, 0).value;
  return fe_fail(cx, "input '%s' must be a 1-D integer tensor of known length, got %s", what,
                 type_text(cx, v->ty)),
         -1;
}

/* Slice with starts or ends computed at run time: dyn.strided_slice over
 * the axes up to the last one sliced, its begin, end and strides built
 * per axis: a sliced axis takes its start and end (known or computed) and
 * step, any other 0, its whole length and 1.  Axes and steps must be
 * known. */
static bool dynamic_slice(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x), n = bounds_len(cx, 1, "starts");
  int64_t ax[TENSOR_MAX_RANK], sp[TENSOR_MAX_RANK];
  if (n < 0 || bounds_len(cx, 2, "ends") != n)
    return cx->failed ? false : fe_fail(cx, "starts and ends must have the same length");
  int na = cx->nin > 3 && cx->in[3] ? fe_need_ints(cx, cx->in[3], "input 'axes'", ax, n) : n;
  int nsp = cx->nin > 4 && cx->in[4] ? fe_need_ints(cx, cx->in[4], "input 'steps'", sp, n) : n;
  if (cx->failed) return false;
  if (na != n || nsp != n)
    return fe_fail(cx, "starts, ends, axes and steps must have the same length");
  int at[TENSOR_MAX_RANK], last = 0;
  for (int a = 0; a < r; a++) at[a] = -1;
  for (int k = 0; k < n; k++) {
    int a = fe_axis(cx, cx->nin > 3 && cx->in[3] ? ax[k] : k, r, "axis");
    if (a < 0) return false;
    if (at[a] >= 0) return fe_fail(cx, "axis %d is sliced twice", a);
    if (cx->nin > 4 && cx->in[4] && sp[k] == 0) return fe_fail(cx, "step 0 on axis %d", a);
    at[a] = k, last = a + 1 > last ? a + 1 : last;
  }
  FeVal *st = fe_cast(cx, cx->in[1], DT_INT64), *en = fe_cast(cx, cx->in[2], DT_INT64);
  FeVal *shape = shape_value(cx, x), *b[TENSOR_MAX_RANK], *e[TENSOR_MAX_RANK];
  int64_t steps[TENSOR_MAX_RANK], zero = 0;
  for (int a = 0; a < last; a++) {
    int k = at[a];
    b[a] = k >= 0 ? element(cx, st, k) : fe_ints(cx, DT_INT64, 1, &zero);
    e[a] = element(cx, k >= 0 ? en : shape, k >= 0 ? k : a);
    steps[a] = k >= 0 && cx->nin > 4 && cx->in[4] ? sp[k] : 1;
  }
  AttrB cb = ab_new(cx), ce = ab_new(cx);
  ab_int(&cb, "axis", 0), ab_int(&ce, "axis", 0);
  FeVal *begin = fe_op(cx, "concatenate", last, b, ab_done(&cb));
  FeVal *end = begin ? fe_op(cx, "concatenate", last, e, ab_done(&ce)) : NULL;
  FeVal *strides = fe_ints(cx, DT_INT64, last, steps);
  return set_out(cx, end ? FE_OP(cx, "dyn.strided_slice", NULL, x, begin, end, strides) : NULL);
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
    if (onnx_slice_axes_at_run_time(cx)) return onnx_convert_slice_dyn(cx);
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
  FeVal *y = FE_OP(cx, "strided_slice", ab_done(&b), x);
  return set_out(cx, r == 1 && ns == 1 ? sym_slice(cx, y, x, st[0], en[0], sp[0]) : y);
}

/* ───────────────────────── Gather ───────────────────────── */

/* y = x[ix] of a 1-D shape value x followed symbolically. */
static FeVal *sym_gather(OnnxCx *cx, FeVal *y, FeVal *x, const Tensor *ix) {
  Dim s[MAXV], out[MAXV];
  int n = x->value ? -1 : fe_sym_get(x, s, MAXV);
  if (n < 0 || fe_rank(x) != 1 || ix->numel > MAXV) return y;
  for (int64_t i = 0; i < ix->numel; i++) {
    int64_t k = tensor_get_i64(ix, i);
    k += k < 0 ? n : 0;
    if (k < 0 || k >= n) return y;
    out[i] = s[k];
  }
  return fe_sym_set(cx, y, (int)ix->numel, out);
}

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
  FeVal *y = FE_OP(cx, "take", ab_done(&b), x, ix);
  return set_out(cx, ix->value ? sym_gather(cx, y, x, ix->value) : y);
}

/* ───────────────────────── Expand, Tile, Pad ───────────────────────── */

/* One dim of Expand's two-way broadcast (`?` when not known here); false
 * when two known sizes differ and neither is 1. */
static bool expand_dim(Dim dx, Dim dt, Dim *out) {
  bool cx1 = dx.kind == DIM_CONST && dx.value == 1, ct1 = dt.kind == DIM_CONST && dt.value == 1;
  if (ct1 || (dx.kind == DIM_CONST && dt.kind == DIM_CONST && dx.value == dt.value))
    *out = dx;
  else if (cx1)
    *out = dt;
  else if (dx.kind == DIM_VAR && dt.kind == DIM_VAR && strcmp(dx.name, dt.name) == 0)
    *out = dx;
  else if (dx.kind == DIM_CONST && dt.kind == DIM_CONST)
    return false;
  else
    *out = dim_any();
  return true;
}

/* Expand broadcasts both ways: the result's shape is the broadcast of the
 * input's and the given one (so a 1 in the given shape keeps the input's
 * dim).  When the result's shape is known here (the given shape a
 * constant, or shape arithmetic followed symbolically, against static or
 * matching dims) it is broadcast_to (or nothing, when it is the input's);
 * otherwise the shape is computed at run time, maximum(input's shape,
 * given shape) both padded to the longer with leading ones, for
 * dyn.broadcast_to. */
bool onnx_convert_expand(OnnxCx *cx) {
  FeVal *x = cx->in[0], *to = cx->in[1];
  Dim ts[TENSOR_MAX_RANK], res[TENSOR_MAX_RANK];
  int n = fe_sym_get(to, ts, TENSOR_MAX_RANK), r = fe_rank(x);
  if (n < 0) { /* nothing known of the values: their count from the type */
    if (fe_rank(to) != 1 || fe_dim(to, 0).kind != DIM_CONST || !dtype_is_int(fe_dtype(to)) ||
        fe_dim(to, 0).value > TENSOR_MAX_RANK)
      return fe_fail(cx, "input 'shape' must be a 1-D integer tensor of known length, got %s",
                     type_text(cx, to->ty));
    n = (int)fe_dim(to, 0).value;
    for (int i = 0; i < n; i++) ts[i] = dim_any();
  }
  int m = n > r ? n : r;
  bool known = true, same = m == r;
  int64_t out[TENSOR_MAX_RANK];
  for (int i = 0; i < m; i++) {
    int ix = i - (m - r), it = i - (m - n);
    Dim dx = ix >= 0 ? fe_dim(x, ix) : dim_const(1), dt = it >= 0 ? ts[it] : dim_const(1);
    if (!expand_dim(dx, dt, &res[i]))
      return fe_fail(cx, "shapes do not broadcast at dim %d (%lld and %lld)", i,
                     (long long)dx.value, (long long)dt.value);
    known = known && res[i].kind == DIM_CONST, out[i] = res[i].value;
    same = same && (dx.kind == DIM_CONST || dx.kind == DIM_VAR) && res[i].kind == dx.kind &&
           (dx.kind == DIM_CONST ? res[i].value == dx.value : strcmp(res[i].name, dx.name) == 0);
  }
  if (same) return set_out(cx, x);
  AttrB b = ab_new(cx);
  if (known) {
    ab_ints(&b, "shape", m, out);
    return set_out(cx, FE_OP(cx, "broadcast_to", ab_done(&b), x));
  }
  FeVal *xs = lead_ones(cx, shape_value(cx, x), r, m);
  FeVal *target = lead_ones(cx, fe_cast(cx, to, DT_INT64), n, m);
  target = xs && target ? FE_OP(cx, "maximum", NULL, xs, target) : NULL;
  return set_out(cx, target ? FE_OP(cx, "dyn.broadcast_to", NULL, x, target) : NULL);
}

/* Tile: known repeats give tile, repeats computed at run time dyn.tile. */
bool onnx_convert_tile(OnnxCx *cx) {
  FeVal *x = cx->in[0], *reps = cx->in[1];
  int64_t rv[TENSOR_MAX_RANK];
  if (!reps->value) {
    if (fe_rank(reps) != 1 || !dtype_is_int(fe_dtype(reps)))
      return fe_fail(cx, "input 'repeats' must be a 1-D integer tensor, got %s",
                     type_text(cx, reps->ty));
    Dim d = fe_dim(reps, 0);
    if (d.kind == DIM_CONST && d.value != fe_rank(x))
      return fe_fail(cx, "%lld repeats for an input of rank %d", (long long)d.value, fe_rank(x));
    return set_out(cx, FE_OP(cx, "dyn.tile", NULL, x, fe_cast(cx, reps, DT_INT64)));
  }
  int n = fe_need_ints(cx, reps, "input 'repeats'", rv, TENSOR_MAX_RANK);
  if (n < 0) return false;
  if (n != fe_rank(x)) return fe_fail(cx, "%d repeats for an input of rank %d", n, fe_rank(x));
  AttrB b = ab_new(cx);
  ab_ints(&b, "reps", n, rv);
  return set_out(cx, FE_OP(cx, "tile", ab_done(&b), x));
}

/* Tile before opset 6: `tiles` copies along `axis` (two scalar inputs). */
bool onnx_convert_tile_v1(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  double tiles, axis;
  if (!fe_need_scalar(cx, cx->in[1], "input 'tiles'", &tiles) ||
      !fe_need_scalar(cx, cx->in[2], "input 'axis'", &axis))
    return false;
  int r = fe_rank(x), a = fe_axis(cx, (int64_t)axis, r, "axis");
  if (a < 0) return false;
  if (tiles < 0) return fe_fail(cx, "%lld tiles", (long long)tiles);
  int64_t reps[TENSOR_MAX_RANK];
  for (int i = 0; i < r; i++) reps[i] = i == a ? (int64_t)tiles : 1;
  AttrB b = ab_new(cx);
  ab_ints(&b, "reps", r, reps);
  return set_out(cx, FE_OP(cx, "tile", ab_done(&b), x));
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

/* Pad's constant value as a scalar of x's dtype: the attribute (opset <
 * 11), else input 2 (known or computed at run time), else 0. */
static FeVal *pad_value(OnnxCx *cx, FeVal *x) {
  DType dt = fe_dtype(x);
  if (cx->opset < 11) return fe_scalar(cx, dt, oa_float(cx, "value", 0));
  FeVal *v = cx->nin > 2 ? cx->in[2] : NULL;
  if (!v) return fe_scalar(cx, dt, 0);
  if (v->value) {
    double d;
    return fe_need_scalar(cx, v, "input 'constant_value'", &d) ? fe_scalar(cx, dt, d) : NULL;
  }
  if (fe_rank(v) > 1 ||
      (fe_rank(v) == 1 && (fe_dim(v, 0).kind != DIM_CONST || fe_dim(v, 0).value != 1)))
    return FE_FAIL_NULL(cx, "input 'constant_value' must hold one value, got %s",
                        type_text(cx, v->ty));
  if (fe_rank(v) == 1) v = reshape_to(cx, v, 0, NULL);
  return v ? fe_cast(cx, v, dt) : NULL;
}

/* Pads computed at run time (over every axis): ONNX's [b0, b1, ..., e0,
 * e1, ...] reshaped to (2, rank) and transposed to dyn.nn.pad's (rank, 2). */
static FeVal *dynamic_pad(OnnxCx *cx, FeVal *x, FeVal *pads, FeVal *value, const char *mode) {
  int r = fe_rank(x);
  if (cx->nin > 3 && cx->in[3])
    return FE_FAIL_NULL(cx, "pads computed at run time are supported without input 'axes'");
  if (fe_rank(pads) != 1 || !dtype_is_int(fe_dtype(pads)) ||
      (fe_dim(pads, 0).kind == DIM_CONST && fe_dim(pads, 0).value != 2 * r))
    return FE_FAIL_NULL(cx, "input 'pads' must be %d integers for an input of rank %d, got %s",
                        2 * r, r, type_text(cx, pads->ty));
  int64_t two_r[2] = {2, r}, swap[2] = {1, 0};
  FeVal *pw = reshape_to(cx, fe_cast(cx, pads, DT_INT64), 2, two_r);
  AttrB t = ab_new(cx), b = ab_new(cx);
  ab_ints(&t, "axes", 2, swap);
  pw = pw ? FE_OP(cx, "transpose", ab_done(&t), pw) : NULL;
  ab_str(&b, "pad_mode", mode);
  return pw ? FE_OP(cx, "dyn.nn.pad", ab_done(&b), x, pw, value) : NULL;
}

/* Pad: pads (and the constant value) as attributes before opset 11,
 * inputs after; axes (opset 18) pick the padded axes.  Known pads give
 * nn.pad, pads computed at run time dyn.nn.pad; the constant value may be
 * computed at run time either way. */
bool onnx_convert_pad(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int64_t pads[2 * TENSOR_MAX_RANK], full[2 * TENSOR_MAX_RANK] = {0}, axes[TENSOR_MAX_RANK];
  const char *mode = oa_str(cx, "mode", "constant");
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
    return fe_fail(cx, "mode '%s' is not supported (constant, reflect, edge are)", mode);
  FeVal *value = pad_value(cx, x);
  if (!value) return false;
  int n, na = -1;
  if (cx->opset < 11) { /* named 'paddings' at opset 1 */
    n = oa_ints(cx, cx->opset < 2 ? "paddings" : "pads", pads, 2 * TENSOR_MAX_RANK);
  } else {
    if (cx->nin < 2 || !cx->in[1]) return fe_fail(cx, "input 'pads' is missing");
    if (!cx->in[1]->value) return set_out(cx, dynamic_pad(cx, x, cx->in[1], value, mode));
    n = fe_need_ints(cx, cx->in[1], "input 'pads'", pads, 2 * TENSOR_MAX_RANK);
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
  AttrB b = ab_new(cx);
  ab_pad_width(&b, r, full);
  ab_str(&b, "pad_mode", mode);
  return set_out(cx, FE_OP(cx, "nn.pad", ab_done(&b), x, value));
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
  if (s && (start != 0 || end != r)) {
    AttrB sl = ab_new(cx);
    ab_ints(&sl, "begin", 1, &start);
    ab_ints(&sl, "end", 1, &end);
    s = FE_OP(cx, "strided_slice", ab_done(&sl), s);
  }
  Dim sym[TENSOR_MAX_RANK]; /* the dims, as far as the types know them */
  for (int64_t i = start; i < end; i++) sym[i - start] = sym_of_dim(fe_dim(x, (int)i));
  return set_out(cx, fe_sym_set(cx, s, (int)(end - start), sym));
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
