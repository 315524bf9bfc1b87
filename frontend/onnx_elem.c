/* onnx_elem.c — converters of the elementwise, math and signal ops (rows
 * in onnx_ops.c): Mod, BitShift, CastLike, IsInf, IsNaN, the inverse and
 * hyperbolic trigonometric functions, the activations without a Relay op of
 * their own (Shrink, ThresholdedRelu, Celu, Selu, Softsign), Trilu,
 * EyeLike, LRN, MeanVarianceNormalization, Det, the window functions
 * (Hann, Hamming, Blackman) and DFT; and the random ops, refused.
 *
 * Activations are written with the elementwise Relay ops as ONNX's own
 * function bodies write them.  Windows are computed from arange, so their
 * size may be known only at run time.  DFT multiplies by the DFT matrix
 * (a constant built here, its length known at import time). */
#include <math.h>
#include <string.h>

#include "frontend/onnx_int.h"

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

static const char *op_of(OnnxCx *cx, const char *const (*map)[2]) {
  for (int i = 0; map[i][0]; i++)
    if (strcmp(map[i][0], cx->node->op_type) == 0) return map[i][1];
  RLY_UNREACHABLE();
}

static FeVal *scalar_like(OnnxCx *cx, const FeVal *x, double v) {
  return fe_scalar(cx, fe_dtype(x), v);
}

/* ───────────────────────── arithmetic ───────────────────────── */

/* Mod: fmod=0 takes the divisor's sign (floor_mod, integers only, as the
 * spec says); fmod=1 is C's fmod, the dividend's sign (trunc_mod). */
bool onnx_convert_mod(OnnxCx *cx) {
  int64_t fmod_ = oa_int(cx, "fmod", 0);
  FeVal *a = cx->in[0], *b = cx->in[1];
  if (fe_dtype(a) != fe_dtype(b))
    return fe_fail(cx, "operands of different dtypes (%s, %s)", dtype_name(fe_dtype(a)),
                   dtype_name(fe_dtype(b)));
  if (!fmod_ && dtype_is_float(fe_dtype(a)))
    return fe_fail(cx, "fmod=0 on %s: the spec requires fmod=1 for floats",
                   dtype_name(fe_dtype(a)));
  return set_out(cx, FE_OP(cx, fmod_ ? "trunc_mod" : "floor_mod", NULL, a, b));
}

bool onnx_convert_bitshift(OnnxCx *cx) {
  const char *dir = oa_str(cx, "direction", "");
  bool left = strcmp(dir, "LEFT") == 0;
  if (!left && strcmp(dir, "RIGHT") != 0)
    return fe_fail(cx, "attribute 'direction' must be LEFT or RIGHT, got '%s'", dir);
  return set_out(cx, FE_OP(cx, left ? "left_shift" : "right_shift", NULL, cx->in[0], cx->in[1]));
}

bool onnx_convert_cast_like(OnnxCx *cx) {
  return set_out(cx, fe_cast(cx, cx->in[0], fe_dtype(cx->in[1])));
}

/* ───────────────────────── predicates, unary math ───────────────────────── */

/* IsInf: isinf(x), restricted to the signs asked for (x > 0, x < 0;
 * neither sign: x < 0 and x > 0, all false). */
bool onnx_convert_isinf(OnnxCx *cx) {
  FeVal *x = cx->in[0], *inf = FE_OP(cx, "isinf", NULL, x), *zero = scalar_like(cx, x, 0);
  bool pos = oa_int(cx, "detect_positive", 1) != 0, neg = oa_int(cx, "detect_negative", 1) != 0;
  if (pos && neg) return set_out(cx, inf);
  FeVal *side = FE_OP(cx, pos ? "greater" : "less", NULL, x, zero);
  if (!pos && !neg)
    side = FE_OP(cx, "logical_and", NULL, side, FE_OP(cx, "greater", NULL, x, zero));
  return set_out(cx, FE_OP(cx, "logical_and", NULL, inf, side));
}

bool onnx_convert_math(OnnxCx *cx) {
  static const char *const map[][2] = {{"IsNaN", "isnan"}, {"Tan", "tan"},     {"Asin", "asin"},
                                       {"Acos", "acos"},   {"Atan", "atan"},   {"Sinh", "sinh"},
                                       {"Cosh", "cosh"},   {"Asinh", "asinh"}, {"Acosh", "acosh"},
                                       {"Atanh", "atanh"}, {NULL, NULL}};
  return set_out(cx, FE_OP(cx, op_of(cx, map), NULL, cx->in[0]));
}

/* ───────────────────────── activations ───────────────────────── */

/* Shrink: x + bias below -lambd, x - bias above lambd, else 0. */
bool onnx_convert_shrink(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  double lambd = oa_float(cx, "lambd", 0.5), bias = oa_float(cx, "bias", 0);
  FeVal *lo = FE_OP(cx, "less", NULL, x, scalar_like(cx, x, -lambd));
  FeVal *hi = FE_OP(cx, "greater", NULL, x, scalar_like(cx, x, lambd));
  FeVal *up = FE_OP(cx, "add", NULL, x, scalar_like(cx, x, bias));
  FeVal *down = FE_OP(cx, "subtract", NULL, x, scalar_like(cx, x, bias));
  if (!lo || !hi || !up || !down) return false;
  FeVal *inner = FE_OP(cx, "where", NULL, hi, down, scalar_like(cx, x, 0));
  return set_out(cx, inner ? FE_OP(cx, "where", NULL, lo, up, inner) : NULL);
}

bool onnx_convert_thresholded_relu(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  FeVal *gt = FE_OP(cx, "greater", NULL, x, scalar_like(cx, x, oa_float(cx, "alpha", 1.0)));
  return set_out(cx, gt ? FE_OP(cx, "where", NULL, gt, x, scalar_like(cx, x, 0)) : NULL);
}

/* alpha * (exp(x / scale) - 1), the negative side of Celu and Selu. */
static FeVal *exp_m1(OnnxCx *cx, FeVal *x, double scale, double alpha) {
  FeVal *e = FE_OP(cx, "exp", NULL, FE_OP(cx, "divide", NULL, x, scalar_like(cx, x, scale)));
  FeVal *m = e ? FE_OP(cx, "subtract", NULL, e, scalar_like(cx, x, 1)) : NULL;
  return m ? FE_OP(cx, "multiply", NULL, m, scalar_like(cx, x, alpha)) : NULL;
}

/* Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)). */
bool onnx_convert_celu(OnnxCx *cx) {
  FeVal *x = cx->in[0], *zero = scalar_like(cx, x, 0);
  double alpha = oa_float(cx, "alpha", 1.0);
  FeVal *neg = exp_m1(cx, x, alpha, alpha), *pos = FE_OP(cx, "maximum", NULL, x, zero);
  FeVal *mn = neg ? FE_OP(cx, "minimum", NULL, neg, zero) : NULL;
  return set_out(cx, mn && pos ? FE_OP(cx, "add", NULL, pos, mn) : NULL);
}

/* Selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)). */
bool onnx_convert_selu(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  double alpha = oa_float(cx, "alpha", 1.67326319217681884765625);
  double gamma = oa_float(cx, "gamma", 1.05070102214813232421875);
  FeVal *neg = exp_m1(cx, x, 1.0, alpha);
  FeVal *gt = FE_OP(cx, "greater", NULL, x, scalar_like(cx, x, 0));
  FeVal *y = neg && gt ? FE_OP(cx, "where", NULL, gt, x, neg) : NULL;
  return set_out(cx, y ? FE_OP(cx, "multiply", NULL, y, scalar_like(cx, x, gamma)) : NULL);
}

/* Softsign: x / (1 + |x|). */
bool onnx_convert_softsign(OnnxCx *cx) {
  FeVal *x = cx->in[0], *ax = FE_OP(cx, "abs", NULL, x);
  FeVal *d = ax ? FE_OP(cx, "add", NULL, ax, scalar_like(cx, x, 1)) : NULL;
  return set_out(cx, d ? FE_OP(cx, "divide", NULL, x, d) : NULL);
}

/* ───────────────────────── matrices ───────────────────────── */

/* Trilu: k (an optional int64 scalar input, 0 when omitted) may be known
 * only at run time. */
bool onnx_convert_trilu(OnnxCx *cx) {
  FeVal *k = cx->nin > 1 && cx->in[1] ? cx->in[1] : fe_scalar(cx, DT_INT64, 0);
  if (fe_rank(k) != 0) return fe_fail(cx, "input 'k' must be a scalar");
  AttrB b = ab_new(cx);
  ab_bool(&b, "upper", oa_int(cx, "upper", 1) != 0);
  return set_out(cx, k ? FE_OP(cx, "trilu", ab_done(&b), cx->in[0], k) : NULL);
}

/* EyeLike: ones where column - row == k, of the input's (static 2-D)
 * shape, in `dtype` (default the input's). */
bool onnx_convert_eye_like(OnnxCx *cx) {
  int64_t shape[TENSOR_MAX_RANK];
  if (fe_rank(cx->in[0]) != 2 || !fe_static_shape(cx->in[0], shape))
    return fe_fail(cx, "the input must be 2-D with a shape known at import time");
  const char *tn = "";
  DType dt = fe_dtype(cx->in[0]);
  if (oa_get(cx, "dtype")) dt = onnx_dtype((int32_t)oa_int(cx, "dtype", 0), &tn);
  if (dt == DT_INVALID) return fe_fail(cx, "dtype %s is not supported", tn);
  int64_t k = oa_int(cx, "k", 0);
  Tensor *t = tensor_new(cx->a, dt, 2, shape);
  for (int64_t r = 0; r < shape[0]; r++)
    for (int64_t c = 0; c < shape[1]; c++) tensor_set_f64(t, r * shape[1] + c, c - r == k);
  return set_out(cx, fe_const(cx, t));
}

/* ───────────────────────── normalizations ───────────────────────── */

/* LRN over channels: the window [c - (size-1)/2, c + size/2] of nn.lrn,
 * ONNX's own for odd sizes. */
bool onnx_convert_lrn(OnnxCx *cx) {
  int64_t size = oa_int(cx, "size", 0);
  if (size < 1 || size % 2 == 0)
    return fe_fail(cx, "size %lld is not supported (a positive odd size is)", (long long)size);
  AttrB b = ab_new(cx);
  ab_int(&b, "size", size);
  ab_int(&b, "axis", 1);
  ab_float(&b, "bias", oa_float(cx, "bias", 1.0));
  ab_float(&b, "alpha", oa_float(cx, "alpha", 1e-4));
  ab_float(&b, "beta", oa_float(cx, "beta", 0.75));
  return set_out(cx, FE_OP(cx, "nn.lrn", ab_done(&b), cx->in[0]));
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over axes
 * (default 0, 2, 3), as the op's function body computes it (the variance
 * here the mean of (x - mean)^2, which cannot come out negative). */
bool onnx_convert_mvn(OnnxCx *cx) {
  int64_t axes[TENSOR_MAX_RANK] = {0, 2, 3};
  int n = oa_ints(cx, "axes", axes, TENSOR_MAX_RANK);
  if (n < 0) n = 3;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axis", n, axes);
  ab_bool(&b, "keepdims", true);
  Attrs *at = ab_done(&b);
  FeVal *x = cx->in[0], *mean = FE_OP(cx, "mean", at, x);
  FeVal *d = mean ? FE_OP(cx, "subtract", NULL, x, mean) : NULL;
  FeVal *var = d ? FE_OP(cx, "mean", at, FE_OP(cx, "multiply", NULL, d, d)) : NULL;
  FeVal *sd =
      var ? FE_OP(cx, "add", NULL, FE_OP(cx, "sqrt", NULL, var), scalar_like(cx, x, 1e-9)) : NULL;
  return set_out(cx, sd ? FE_OP(cx, "divide", NULL, d, sd) : NULL);
}

/* ───────────────────────── random ops ───────────────────────── */

/* Bernoulli, RandomUniformLike, ...: their draws cannot reproduce another
 * implementation's (ONNX's tests compare numpy's), so they are refused
 * rather than run with other draws. */
bool onnx_convert_random(OnnxCx *cx) {
  return fe_fail(cx,
                 "ai.onnx.%s (opset %lld) draws random numbers, which rly does not import "
                 "(its draws could not match another implementation's)",
                 cx->node->op_type, (long long)cx->opset);
}

/* ───────────────────────── windows ───────────────────────── */

static FeVal *f64(OnnxCx *cx, double v) { return fe_scalar(cx, DT_FLOAT64, v); }

/* a op b (fe_op refuses NULL operands, after the error that made them). */
static FeVal *bin(OnnxCx *cx, const char *op, FeVal *a, FeVal *b) {
  return FE_OP(cx, op, NULL, a, b);
}

/* 2 pi n / N in float64 for n in [0, size), N size (periodic) or size - 1
 * (symmetric). */
static FeVal *window_angles(OnnxCx *cx, FeVal *size) {
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", "float64");
  FeVal *n =
      FE_OP(cx, "arange", ab_done(&b), scalar_like(cx, size, 0), size, scalar_like(cx, size, 1));
  FeVal *len = fe_cast(cx, size, DT_FLOAT64);
  if (!oa_int(cx, "periodic", 1)) len = bin(cx, "subtract", len, f64(cx, 1));
  return bin(cx, "divide", bin(cx, "multiply", n, f64(cx, 2 * M_PI)), len);
}

/* a0 - a1 cos(t) + a2 cos(2 t) for the angles t of window_angles; size
 * may be known only at run time.  Computed in float64, then cast to
 * output_datatype. */
bool onnx_convert_window(OnnxCx *cx) {
  static const struct {
    const char *op;
    double a0, a1, a2;
  } win[] = {{"HannWindow", 0.5, 0.5, 0},
             {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0},
             {"BlackmanWindow", 0.42, 0.5, 0.08}};
  int w = 0;
  while (strcmp(win[w].op, cx->node->op_type) != 0) w++;
  const char *tn;
  DType dt = onnx_dtype((int32_t)oa_int(cx, "output_datatype", 1), &tn);
  if (dt == DT_INVALID || !dtype_is_float(dt))
    return fe_fail(cx, "output_datatype %s is not supported (a float type is)", tn);
  if (fe_rank(cx->in[0]) != 0 || !dtype_is_int(fe_dtype(cx->in[0])))
    return fe_fail(cx, "input 'size' must be an integer scalar");
  FeVal *t = window_angles(cx, cx->in[0]);
  FeVal *y = bin(cx, "subtract", f64(cx, win[w].a0),
                 bin(cx, "multiply", FE_OP(cx, "cos", NULL, t), f64(cx, win[w].a1)));
  if (win[w].a2 != 0) {
    FeVal *c2 = FE_OP(cx, "cos", NULL, bin(cx, "multiply", t, f64(cx, 2)));
    y = bin(cx, "add", y, bin(cx, "multiply", c2, f64(cx, win[w].a2)));
  }
  return set_out(cx, y ? fe_cast(cx, y, dt) : NULL);
}

/* ───────────────────────── linear algebra ───────────────────────── */

bool onnx_convert_det(OnnxCx *cx) { return set_out(cx, FE_OP(cx, "det", NULL, cx->in[0])); }

/* ───────────────────────── DFT ───────────────────────── */

/* Component i (0 real, 1 imaginary) of a [..., 2] or [..., 1] signal:
 * x[..., i] as [...]. */
static FeVal *component(OnnxCx *cx, FeVal *x, int i) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", -1);
  return FE_OP(cx, "take", ab_done(&b), x, fe_scalar(cx, DT_INT64, i));
}

/* v with axis `from` moved to position `to`. */
static FeVal *move_axis(OnnxCx *cx, FeVal *v, int from, int to) {
  if (!v || from == to) return v;
  int64_t perm[TENSOR_MAX_RANK];
  int r = fe_rank(v), k = 0;
  for (int i = 0; i < r; i++)
    if (i != from) perm[k++] = i;
  memmove(perm + to + 1, perm + to, sizeof(int64_t) * (size_t)(r - 1 - to));
  perm[to] = from;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axes", r, perm);
  return FE_OP(cx, "transpose", ab_done(&b), v);
}

/* The [k, n] matrix of cos (or sin) 2 pi k n / len, k < nk, n < nn (zero
 * where n >= len: the signal cut or zero-padded to len), times scale. */
static FeVal *dft_matrix(OnnxCx *cx, DType dt, int64_t nk, int64_t nn, int64_t len, bool sine,
                         double scale) {
  int64_t shape[2] = {nk, nn};
  Tensor *t = tensor_new(cx->a, dt, 2, shape);
  for (int64_t k = 0; k < nk; k++)
    for (int64_t n = 0; n < nn; n++) {
      double a = 2 * M_PI * (double)((k * n) % len) / (double)len;
      tensor_set_f64(t, k * nn + n, n < len ? scale * (sine ? sin(a) : cos(a)) : 0);
    }
  return fe_const(cx, t);
}

static FeVal *dense(OnnxCx *cx, FeVal *x, FeVal *w) { return FE_OP(cx, "nn.dense", NULL, x, w); }

/* The DFT's length: dft_length when given (known at import time), else
 * the signal's; false after fe_fail. */
static bool dft_len(OnnxCx *cx, int64_t n, int64_t *len) {
  *len = n;
  if (cx->nin < 2 || !cx->in[1]) return true;
  if (fe_need_ints(cx, cx->in[1], "input 'dft_length'", len, 1) != 1) return false;
  if (*len < 1) return fe_fail(cx, "dft_length must be positive, got %lld", (long long)*len);
  return true;
}

/* DFT's input [..., n, c] (c 1 or 2) and axis, checked: n and c into
 * *n, *c; false after fe_fail. */
static bool dft_input(OnnxCx *cx, const FeVal *x, int axis, int64_t *n, int64_t *c) {
  int r = fe_rank(x);
  Dim nd = fe_dim(x, axis), cd = fe_dim(x, r - 1);
  if (r < 2 || axis == r - 1 || cd.kind != DIM_CONST || cd.value < 1 || cd.value > 2)
    return fe_fail(cx, "the input must be [..., n, 1 or 2] with axis not the last");
  if (nd.kind != DIM_CONST) return fe_fail(cx, "the signal's length must be known at import time");
  if (!dtype_is_float(fe_dtype(x))) return fe_fail(cx, "the input must be a float tensor");
  *n = nd.value, *c = cd.value;
  return true;
}

/* [re, im] stacked on a new last axis. */
static FeVal *stack_complex(OnnxCx *cx, FeVal *re, FeVal *im, int r) {
  AttrB b = ab_new(cx), cb = ab_new(cx);
  ab_int(&b, "axis", r), ab_int(&cb, "axis", r);
  Attrs *ex = ab_done(&b);
  FeVal *y[2] = {FE_OP(cx, "expand_dims", ex, re), FE_OP(cx, "expand_dims", ex, im)};
  return fe_op(cx, "concatenate", 2, y, ab_done(&cb));
}

/* DFT (opset 17): the signal along `axis` times the DFT matrix, split into
 * real and imaginary parts: re = xr C + xi S, im = xi C - xr S, with S
 * negated and both scaled by 1/len for the inverse.  The signal's length
 * must be known at import time. */
bool onnx_convert_dft(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int r = fe_rank(x), axis = fe_axis(cx, oa_int(cx, "axis", 1), r, "axis");
  bool inv = oa_int(cx, "inverse", 0) != 0, one = oa_int(cx, "onesided", 0) != 0;
  int64_t n = 0, c = 0, len = 0;
  if (axis < 0 || !dft_input(cx, x, axis, &n, &c) || !dft_len(cx, n, &len)) return false;
  if (inv && one) return fe_fail(cx, "onesided with inverse is not supported");
  int64_t nk = one ? len / 2 + 1 : len;
  double sc = inv ? 1.0 / (double)len : 1.0;
  FeVal *cm = dft_matrix(cx, fe_dtype(x), nk, n, len, false, sc);
  FeVal *sm = dft_matrix(cx, fe_dtype(x), nk, n, len, true, inv ? -sc : sc);
  FeVal *xr = move_axis(cx, component(cx, x, 0), axis, r - 2);
  FeVal *xi = c == 2 ? move_axis(cx, component(cx, x, 1), axis, r - 2) : NULL;
  FeVal *re = xi ? bin(cx, "add", dense(cx, xr, cm), dense(cx, xi, sm)) : dense(cx, xr, cm);
  FeVal *im = xi ? bin(cx, "subtract", dense(cx, xi, cm), dense(cx, xr, sm))
                 : FE_OP(cx, "negative", NULL, dense(cx, xr, sm));
  re = move_axis(cx, re, r - 2, axis), im = move_axis(cx, im, r - 2, axis);
  return set_out(cx, stack_complex(cx, re, im, r - 1));
}

/* ───────────────────────── STFT, MelWeightMatrix ───────────────────────── */

/* STFT's window: the window input, else ones of frame_length (a run-time
 * value through dyn.ones); a frame_length beside a window must match it
 * when both are known at import time. */
static FeVal *stft_window(OnnxCx *cx) {
  FeVal *w = cx->nin > 2 ? cx->in[2] : NULL, *fl = cx->nin > 3 ? cx->in[3] : NULL;
  if (!w && !fl) return FE_FAIL_NULL(cx, "a window or a frame_length is required");
  if (fl && fe_rank(fl) != 0) return FE_FAIL_NULL(cx, "input 'frame_length' must be a scalar");
  Dim wd = w && fe_rank(w) == 1 ? fe_dim(w, 0) : dim_any();
  if (w && fl && fl->value && wd.kind == DIM_CONST && tensor_get_i64(fl->value, 0) != wd.value)
    return FE_FAIL_NULL(cx, "frame_length %lld differs from the window's length %lld",
                        (long long)tensor_get_i64(fl->value, 0), (long long)wd.value);
  if (w) return w;
  AttrB b = ab_new(cx), d = ab_new(cx);
  ab_int(&b, "axis", 0);
  ab_str(&d, "dtype", dtype_name(fe_dtype(cx->in[0])));
  FeVal *shape = FE_OP(cx, "expand_dims", ab_done(&b), fl);
  return shape ? FE_OP(cx, "dyn.ones", ab_done(&d), shape) : NULL;
}

/* STFT (opset 17) onto signal.stft; the frame step and length may be
 * known only at run time. */
bool onnx_convert_stft(OnnxCx *cx) {
  FeVal *w = stft_window(cx);
  AttrB b = ab_new(cx);
  ab_bool(&b, "onesided", oa_int(cx, "onesided", 1) != 0);
  return set_out(cx, w ? FE_OP(cx, "signal.stft", ab_done(&b), cx->in[0], cx->in[1], w) : NULL);
}

bool onnx_convert_mel_weight_matrix(OnnxCx *cx) {
  const char *tn;
  DType dt = onnx_dtype((int32_t)oa_int(cx, "output_datatype", 1), &tn);
  if (dt == DT_INVALID) return fe_fail(cx, "output_datatype %s is not supported", tn);
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", dtype_name(dt));
  return set_out(cx, fe_op(cx, "signal.mel_weight_matrix", 5, cx->in, ab_done(&b)));
}
