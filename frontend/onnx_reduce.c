/* onnx_reduce.c — converters of the losses, the reductions built from
 * Relay's sums (ReduceL1, ReduceL2, ReduceLogSumExp, ReduceSumSquare,
 * ReduceLogSum), the scans and selections (CumSum, Hardmax, TopK, Einsum),
 * and the forms of the shape converters whose axes, split sizes or k are
 * graph inputs computed at run time (onnx_shape.c and onnx_math.c fall back
 * here when such a value is not known at import time).
 *
 * A known argument becomes the static op's attribute; an unknown one is
 * passed to the dyn.* op that takes it as a tensor (dyn.sum, dyn.expand_dims,
 * dyn.squeeze, dyn.split, dyn.topk, dyn.cumsum), whose type has the rank
 * the argument's static length decides and `?` dims.  Slice with run-time
 * axes or steps scatters starts, ends and steps into full-rank begin, end
 * and strides (scatter: an axis out of range fails at run time). */
#include <math.h>
#include <string.h>

#include "frontend/onnx_int.h"

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* Input i when the node has it (an omitted optional input is NULL). */
static FeVal *input(OnnxCx *cx, int i) { return cx->nin > i ? cx->in[i] : NULL; }

static bool runtime(const FeVal *v) { return v && !v->value; }

/* The static length of a 1-D (or 0-D: 1) value, or -1. */
static int static_len(const FeVal *v) {
  if (fe_rank(v) == 0) return 1;
  if (fe_rank(v) != 1 || fe_dim(v, 0).kind != DIM_CONST) return -1;
  return (int)fe_dim(v, 0).value;
}

/* v as a 1-D int64 value (a scalar reshaped to one element). */
static FeVal *as_ints(OnnxCx *cx, FeVal *v) {
  v = fe_cast(cx, v, DT_INT64);
  if (!v || fe_rank(v) == 1) return v;
  AttrB b = ab_new(cx);
  int64_t one = 1;
  ab_ints(&b, "newshape", 1, &one);
  return FE_OP(cx, "reshape", ab_done(&b), v);
}

/* ───────────────────────── losses ───────────────────────── */

/* NegativeLogLikelihoodLoss on log-probabilities (N, C, d...): nn.nll_loss
 * with weights of ones when none are given, and an ignore_index no class
 * can have when the attribute is absent. */
static FeVal *nll(OnnxCx *cx, FeVal *logp, FeVal *target, FeVal *w) {
  if (!logp || fe_rank(logp) < 2) return FE_FAIL_NULL(cx, "the input must be (N, C, d...)");
  if (!w) {
    Dim c = fe_dim(logp, 1);
    if (c.kind != DIM_CONST) return FE_FAIL_NULL(cx, "the class count C must be static");
    int64_t shape[1] = {c.value};
    Tensor *t = tensor_new(cx->a, fe_dtype(logp), 1, shape);
    for (int64_t i = 0; i < c.value; i++) tensor_set_f64(t, i, 1);
    w = fe_const(cx, t);
  }
  const char *red = oa_str(cx, "reduction", "mean");
  if (strcmp(red, "mean") && strcmp(red, "sum") && strcmp(red, "none"))
    return FE_FAIL_NULL(cx, "reduction '%s' is not one of mean, sum, none", red);
  AttrB b = ab_new(cx);
  ab_str(&b, "reduction", red);
  ab_int(&b, "ignore_index",
         oa_get(cx, "ignore_index") ? oa_int(cx, "ignore_index", 0) : INT32_MIN);
  return FE_OP(cx, "nn.nll_loss", ab_done(&b), logp, target, w);
}

bool onnx_convert_nll_loss(OnnxCx *cx) {
  return set_out(cx, nll(cx, cx->in[0], cx->in[1], input(cx, 2)));
}

/* SoftmaxCrossEntropyLoss: log_softmax over the classes (axis 1), then the
 * NLL loss; the optional second output is the log-probabilities. */
bool onnx_convert_sce_loss(OnnxCx *cx) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 1);
  FeVal *logp = fe_rank(cx->in[0]) >= 2 ? FE_OP(cx, "nn.log_softmax", ab_done(&b), cx->in[0])
                                        : FE_FAIL_NULL(cx, "the scores must be (N, C, d...)");
  if (!logp) return false;
  if (cx->nout > 1) cx->out[1] = logp;
  return set_out(cx, nll(cx, logp, cx->in[1], input(cx, 2)));
}

/* ───────────────────────── reductions ───────────────────────── */

/* The axes of a reduction as the node gives them: an attribute before
 * `opset_input`, else input 1.  *known: the constant axes into axes (count
 * returned); a run-time value into *dyn (count: its static length).  -1:
 * none given (or an empty list). */
static int reduction_axes(OnnxCx *cx, int64_t opset_input, int64_t *axes, FeVal **dyn) {
  *dyn = NULL;
  if (cx->opset < opset_input) return oa_ints(cx, "axes", axes, TENSOR_MAX_RANK);
  FeVal *a = input(cx, 1);
  if (!a) return -1;
  if (!runtime(a)) {
    int n = fe_need_ints(cx, a, "input 'axes'", axes, TENSOR_MAX_RANK);
    return n == 0 ? -1 : n;
  }
  int n = static_len(a);
  if (n < 0) return fe_fail(cx, "input 'axes' must have a static length"), -1;
  if (n > 0) *dyn = as_ints(cx, a);
  return n == 0 ? -1 : n;
}

/* op (a Relay reduction: sum mean max min prod logsumexp) of x over the
 * node's axes, keepdims from the node; a run-time axes list goes to the
 * dyn.* form of op.  *noop: the node asked for no reduction. */
static FeVal *reduce_over(OnnxCx *cx, const char *op, FeVal *x, bool *noop) {
  int64_t axes[TENSOR_MAX_RANK];
  FeVal *dyn;
  bool sum13 = strcmp(cx->node->op_type, "ReduceSum") == 0;
  int n = reduction_axes(cx, sum13 ? 13 : 18, axes, &dyn);
  *noop = false;
  if (cx->failed || !x) return NULL;
  if (n < 0 && oa_int(cx, "noop_with_empty_axes", 0)) return *noop = true, x;
  AttrB b = ab_new(cx);
  ab_bool(&b, "keepdims", oa_int(cx, "keepdims", 1) != 0);
  if (!dyn) {
    if (n > 0) ab_ints(&b, "axis", n, axes);
    return FE_OP(cx, op, ab_done(&b), x);
  }
  char dop[32];
  snprintf(dop, sizeof dop, "dyn.%s", op);
  return FE_OP(cx, dop, ab_done(&b), x, dyn);
}

/* ReduceSum/Mean/Max/Min/Prod with axes computed at run time. */
bool onnx_convert_reduce_dyn(OnnxCx *cx) {
  static const char *const map[][2] = {{"ReduceMean", "mean"}, {"ReduceSum", "sum"},
                                       {"ReduceMax", "max"},   {"ReduceMin", "min"},
                                       {"ReduceProd", "prod"}, {NULL, NULL}};
  for (int i = 0; map[i][0]; i++)
    if (strcmp(map[i][0], cx->node->op_type) == 0) {
      bool noop;
      return set_out(cx, reduce_over(cx, map[i][1], cx->in[0], &noop));
    }
  return fe_fail(cx, "internal: not a reduction");
}

/* Whether a reduction's axes are an input whose value is known only at
 * run time (its converter then calls onnx_convert_reduce_dyn). */
bool onnx_reduce_axes_at_run_time(OnnxCx *cx) {
  bool sum13 = strcmp(cx->node->op_type, "ReduceSum") == 0;
  return cx->opset >= (sum13 ? 13 : 18) && runtime(input(cx, 1));
}

static FeVal *square(OnnxCx *cx, FeVal *x) { return FE_OP(cx, "multiply", NULL, x, x); }

/* ReduceL1 = sum |x|, ReduceL2 = sqrt(sum x²), ReduceSumSquare = sum x²,
 * ReduceLogSum = log(sum x), ReduceLogSumExp = logsumexp x (stable). */
bool onnx_convert_reduce_ext(OnnxCx *cx) {
  const char *t = cx->node->op_type;
  FeVal *x = cx->in[0];
  bool lse = !strcmp(t, "ReduceLogSumExp"), l1 = !strcmp(t, "ReduceL1");
  bool sq = !strcmp(t, "ReduceL2") || !strcmp(t, "ReduceSumSquare");
  if (!dtype_is_float(fe_dtype(x)) && !l1 && strcmp(t, "ReduceSumSquare"))
    return fe_fail(cx, "%s of %s is not supported (float tensors are)", t, dtype_name(fe_dtype(x)));
  FeVal *pre = l1 ? FE_OP(cx, "abs", NULL, x) : sq ? square(cx, x) : x;
  bool noop;
  FeVal *r = reduce_over(cx, lse ? "logsumexp" : "sum", pre, &noop);
  if (noop) return fe_fail(cx, "noop_with_empty_axes with no axes is not supported for %s", t);
  if (r && !strcmp(t, "ReduceL2")) r = FE_OP(cx, "sqrt", NULL, r);
  if (r && !strcmp(t, "ReduceLogSum")) r = FE_OP(cx, "log", NULL, r);
  return set_out(cx, r);
}

/* ───────────────────────── scans and selections ───────────────────────── */

/* CumSum(x, axis): exclusive starts at 0, reverse sums from the end (a
 * reverse, the scan, a reverse back); a run-time axis: dyn.cumsum. */
bool onnx_convert_cumsum(OnnxCx *cx) {
  FeVal *x = cx->in[0], *ax = cx->in[1];
  bool excl = oa_int(cx, "exclusive", 0) != 0, rev = oa_int(cx, "reverse", 0) != 0;
  AttrB b = ab_new(cx);
  ab_bool(&b, "exclusive", excl);
  if (runtime(ax)) {
    ab_bool(&b, "reverse", rev);
    return set_out(cx, FE_OP(cx, "dyn.cumsum", ab_done(&b), x, as_ints(cx, ax)));
  }
  double v;
  if (!fe_need_scalar(cx, ax, "input 'axis'", &v)) return false;
  if (!(fabs(v) <= TENSOR_MAX_RANK)) return fe_fail(cx, "axis %g is out of range", v);
  int a = fe_axis(cx, (int64_t)v, fe_rank(x), "axis");
  if (a < 0) return false;
  ab_int(&b, "axis", a);
  AttrB r1 = ab_new(cx), r2 = ab_new(cx);
  ab_int(&r1, "axis", a), ab_int(&r2, "axis", a);
  FeVal *y = rev ? FE_OP(cx, "reverse", ab_done(&r1), x) : x;
  y = y ? FE_OP(cx, "cumsum", ab_done(&b), y) : NULL;
  return set_out(cx, rev && y ? FE_OP(cx, "reverse", ab_done(&r2), y) : y);
}

/* Hardmax: 1 at the first maximum along the axis, else 0 (one_hot of
 * argmax).  Before opset 13 over the input flattened to 2-D at `axis`. */
bool onnx_convert_hardmax(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int axis = fe_axis(cx, oa_int(cx, "axis", cx->opset >= 13 ? -1 : 1), r, "axis");
  if (axis < 0) return false;
  int64_t shape[TENSOR_MAX_RANK], two[2] = {1, 1};
  bool flat = cx->opset < 13 && axis != r - 1;
  if (flat && !fe_static_shape(x, shape))
    return fe_fail(cx, "opset %lld's flattening Hardmax needs a static input shape",
                   (long long)cx->opset);
  for (int i = 0; flat && i < r; i++) two[i >= axis] *= shape[i];
  AttrB f = ab_new(cx), back = ab_new(cx), am = ab_new(cx), oh = ab_new(cx);
  ab_ints(&f, "newshape", 2, two), ab_ints(&back, "newshape", r, shape);
  FeVal *y = flat ? FE_OP(cx, "reshape", ab_done(&f), x) : x;
  int ax = flat ? 1 : axis;
  Dim d = y ? fe_dim(y, ax) : dim_const(0);
  if (y && d.kind != DIM_CONST) return fe_fail(cx, "the Hardmax axis must have a static size");
  int64_t one = ax;
  ab_ints(&am, "axis", 1, &one);
  y = y ? FE_OP(cx, "argmax", ab_done(&am), y) : NULL;
  ab_int(&oh, "depth", d.value), ab_int(&oh, "axis", ax);
  ab_str(&oh, "dtype", dtype_name(fe_dtype(x)));
  FeVal *on = fe_scalar(cx, fe_dtype(x), 1), *off = fe_scalar(cx, fe_dtype(x), 0);
  y = y ? FE_OP(cx, "one_hot", ab_done(&oh), y, on, off) : NULL;
  return set_out(cx, flat && y ? FE_OP(cx, "reshape", ab_done(&back), y) : y);
}

/* TopK: the k largest (largest=0: smallest) along axis, sorted, with int64
 * indices; k an attribute before opset 10, else input 1 (dyn.topk when it
 * is computed at run time). */
bool onnx_convert_topk(OnnxCx *cx) {
  FeVal *x = cx->in[0], *kv = input(cx, 1);
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", oa_int(cx, "axis", -1));
  ab_bool(&b, "is_ascend", oa_int(cx, "largest", 1) == 0);
  ab_str(&b, "dtype", "int64");
  FeVal *t;
  if (cx->opset >= 10 && runtime(kv)) {
    t = FE_OP(cx, "dyn.topk", ab_done(&b), x, fe_cast(cx, kv, DT_INT64));
  } else {
    double k = (double)oa_int(cx, "k", 0);
    if (cx->opset >= 10 && !fe_need_scalar(cx, kv, "input 'K'", &k)) return false;
    if (!(k >= 1 && k <= (double)INT64_MAX / 2)) return fe_fail(cx, "k %g must be at least 1", k);
    ab_int(&b, "k", (int64_t)k);
    t = FE_OP(cx, "topk", ab_done(&b), x);
  }
  if (!t) return false;
  cx->out[0] = fe_get(cx, t, 0);
  if (cx->nout > 1) cx->out[1] = fe_get(cx, t, 1);
  return true;
}

/* Einsum: Relay's einsum with the equation's spaces removed. */
bool onnx_convert_einsum(OnnxCx *cx) {
  const char *eq = oa_str(cx, "equation", NULL);
  if (!eq) return fe_fail(cx, "attribute 'equation' is missing");
  char *s = arena_strdup(cx->a, eq), *o = s;
  for (const char *p = eq; *p; p++)
    if (*p != ' ') *o++ = *p;
  *o = 0;
  for (int i = 0; i < cx->nin; i++)
    if (!cx->in[i]) return fe_fail(cx, "input %d is empty", i);
  AttrB b = ab_new(cx);
  ab_str(&b, "equation", s);
  return set_out(cx, fe_op(cx, "einsum", cx->nin, cx->in, ab_done(&b)));
}

/* ───────────────────────── shape arguments known at run time ───────────────────────── */

/* Squeeze with its axes computed at run time: dyn.squeeze. */
bool onnx_convert_squeeze_dyn(OnnxCx *cx) {
  if (static_len(cx->in[1]) < 0) return fe_fail(cx, "input 'axes' must have a static length");
  return set_out(cx, FE_OP(cx, "dyn.squeeze", NULL, cx->in[0], as_ints(cx, cx->in[1])));
}

/* Unsqueeze with its axes computed at run time: dyn.expand_dims. */
bool onnx_convert_unsqueeze_dyn(OnnxCx *cx) {
  if (static_len(cx->in[1]) < 0) return fe_fail(cx, "input 'axes' must have a static length");
  return set_out(cx, FE_OP(cx, "dyn.expand_dims", NULL, cx->in[0], as_ints(cx, cx->in[1])));
}

/* Split with its sizes computed at run time: dyn.split, one output per
 * size. */
bool onnx_convert_split_dyn(OnnxCx *cx) {
  FeVal *x = cx->in[0], *s = cx->in[1];
  int n = fe_rank(s) == 1 ? static_len(s) : -1;
  if (n < 0) return fe_fail(cx, "input 'split' must be 1-D of a static length");
  if (n != cx->nout) return fe_fail(cx, "%d split sizes for %d outputs", n, cx->nout);
  int axis = fe_axis(cx, oa_int(cx, "axis", 0), fe_rank(x), "axis");
  if (axis < 0) return false;
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  FeVal *t = FE_OP(cx, "dyn.split", ab_done(&b), x, fe_cast(cx, s, DT_INT64));
  for (int i = 0; t && i < cx->nout; i++) cx->out[i] = fe_get(cx, t, i);
  return t != NULL;
}

/* Whether Slice's axes or steps are computed at run time. */
bool onnx_slice_axes_at_run_time(OnnxCx *cx) {
  return runtime(input(cx, 3)) || runtime(input(cx, 4));
}

/* base with base[axes[k]] = v[k] (negative axes counted from the end, an
 * axis out of range an error at run time). */
static FeVal *scatter_axes(OnnxCx *cx, FeVal *base, FeVal *axes, FeVal *v) {
  return base && axes && v ? FE_OP(cx, "scatter", NULL, base, axes, v) : NULL;
}

/* Slice with axes or steps computed at run time: each of starts, ends and
 * steps scattered to the axes it names (negative ones counted from the
 * end; with an axis named twice the last wins), the other axes sliced
 * whole, then dyn.strided_slice. */
bool onnx_convert_slice_dyn(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x), n = static_len(cx->in[1]);
  if (n < 0 || static_len(cx->in[2]) != n)
    return fe_fail(cx, "starts and ends must be 1-D of one static length");
  int64_t iota[TENSOR_MAX_RANK], ones[TENSOR_MAX_RANK], zeros[TENSOR_MAX_RANK];
  for (int i = 0; i < TENSOR_MAX_RANK; i++) iota[i] = i, ones[i] = 1, zeros[i] = 0;
  FeVal *ax = input(cx, 3) ? as_ints(cx, cx->in[3]) : fe_ints(cx, DT_INT64, n, iota);
  FeVal *sp = input(cx, 4) ? as_ints(cx, cx->in[4]) : fe_ints(cx, DT_INT64, n, ones);
  if (static_len(ax) != n || static_len(sp) != n)
    return fe_fail(cx, "starts, ends, axes and steps must have the same length");
  AttrB sb = ab_new(cx);
  ab_str(&sb, "dtype", "int64");
  FeVal *shape = FE_OP(cx, "shape_of", ab_done(&sb), x);
  FeVal *b = scatter_axes(cx, fe_ints(cx, DT_INT64, r, zeros), ax, as_ints(cx, cx->in[1]));
  FeVal *e = scatter_axes(cx, shape, ax, as_ints(cx, cx->in[2]));
  FeVal *s = scatter_axes(cx, fe_ints(cx, DT_INT64, r, ones), ax, sp);
  return set_out(cx, b && e && s ? FE_OP(cx, "dyn.strided_slice", NULL, x, b, e, s) : NULL);
}
