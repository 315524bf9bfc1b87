/* onnx_layers.c — converters of the quantization ops of the ai.onnx domain
 * (rows in onnx_ops.c): QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv.
 *
 * ONNX quantizes as saturate(round_half_even(x / scale) + zero_point),
 * which is qnn.quantize's arithmetic (ops/qnn.c), and dequantizes as
 * (x - zero_point) * scale, qnn.dequantize's; both take a scale per
 * element of `axis` as well as a scalar one, and their parameters may be
 * computed at run time.  The integer products are MatMul and Conv of the
 * int32 operands less their zero points (the converters of onnx_nn.c on
 * those), and the QLinear ops requantize the int32 accumulator through
 * float32: round(acc * (a_scale * b_scale / y_scale)) + y_zero_point, as
 * ONNX Runtime computes it. */
#include <string.h>

#include "frontend/onnx_int.h"

/* A parameter of one element (shape [] or [1]) as a scalar; others as
 * they are. */
static FeVal *scalar_param(OnnxCx *cx, FeVal *v) {
  if (!v || fe_rank(v) != 1 || fe_dim(v, 0).kind != DIM_CONST || fe_dim(v, 0).value != 1) return v;
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", 0, NULL);
  return FE_OP(cx, "reshape", ab_done(&b), v);
}

/* Input i when the node names it, else NULL. */
static FeVal *opt_in(OnnxCx *cx, int i) { return i < cx->nin ? cx->in[i] : NULL; }

/* A zero point as an int32 scalar (or vector); an omitted one is 0. */
static FeVal *zero_point(OnnxCx *cx, FeVal *zp) {
  zp = scalar_param(cx, zp);
  return zp ? fe_cast(cx, zp, DT_INT32) : fe_scalar(cx, DT_INT32, 0);
}

/* qnn.quantize / qnn.dequantize of x with a scale and zero point along
 * `axis` (used only when the scale is a vector). */
static FeVal *qnn_call(OnnxCx *cx, const char *op, FeVal *x, FeVal *scale, FeVal *zp, int64_t axis,
                       DType out) {
  scale = scalar_param(cx, scale);
  FeVal *z = zero_point(cx, zp);
  if (!scale || !z) return NULL;
  AttrB b = ab_new(cx);
  int a = fe_rank(scale) == 1 ? fe_axis(cx, axis, fe_rank(x), "axis") : -1;
  if (fe_rank(scale) == 1 && a < 0) return NULL;
  ab_int(&b, "axis", a);
  if (out != DT_INVALID) ab_str(&b, "out_dtype", dtype_name(out));
  return FE_OP(cx, op, ab_done(&b), x, scale, z);
}

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* ───────────────────────── quantize, dequantize ───────────────────────── */

bool onnx_convert_quantize_linear(OnnxCx *cx) {
  FeVal *zp = opt_in(cx, 2);
  DType out = zp ? fe_dtype(zp) : DT_UINT8;
  if (out != DT_UINT8 && out != DT_INT8)
    return fe_fail(cx, "y_zero_point of dtype %s (uint8 and int8 are supported)", dtype_name(out));
  return set_out(
      cx, qnn_call(cx, "qnn.quantize", cx->in[0], cx->in[1], zp, oa_int(cx, "axis", 1), out));
}

bool onnx_convert_dequantize_linear(OnnxCx *cx) {
  return set_out(cx, qnn_call(cx, "qnn.dequantize", cx->in[0], cx->in[1], opt_in(cx, 2),
                              oa_int(cx, "axis", 1), DT_INVALID));
}

/* uint8 with the range [min(x, 0), max(x, 0)] over 255 steps: the scale,
 * the zero point round(-min / scale) saturated, and y. */
bool onnx_convert_dynamic_quantize_linear(OnnxCx *cx) {
  FeVal *x = cx->in[0], *zero = fe_scalar(cx, DT_FLOAT32, 0.0);
  FeVal *lo = FE_OP(cx, "minimum", NULL, FE_OP(cx, "min", NULL, x), zero);
  FeVal *hi = FE_OP(cx, "maximum", NULL, FE_OP(cx, "max", NULL, x), zero);
  FeVal *range = lo && hi ? FE_OP(cx, "subtract", NULL, hi, lo) : NULL;
  FeVal *scale = range ? FE_OP(cx, "divide", NULL, range, fe_scalar(cx, DT_FLOAT32, 255)) : NULL;
  FeVal *neg = lo ? FE_OP(cx, "negative", NULL, lo) : NULL;
  FeVal *zp = scale && neg ? qnn_call(cx, "qnn.quantize", neg, scale, NULL, -1, DT_UINT8) : NULL;
  FeVal *y = zp ? qnn_call(cx, "qnn.quantize", x, scale, zp, -1, DT_UINT8) : NULL;
  if (cx->nout > 1) cx->out[1] = scale;
  if (cx->nout > 2) cx->out[2] = zp;
  return set_out(cx, y);
}

/* ───────────────────────── integer products ───────────────────────── */

/* int32(v) - zp; a vector zero point of more than one value lies along
 * `axis` of v (A's rows, the weight's output channels): reshaped to
 * broadcast there. */
static FeVal *less_zero_point(OnnxCx *cx, FeVal *v, FeVal *zp, int axis) {
  FeVal *x = fe_cast(cx, v, DT_INT32);
  if (!zp || !x) return x;
  zp = zero_point(cx, zp);
  if (zp && fe_rank(zp) == 1) {
    int64_t shape[TENSOR_MAX_RANK];
    int r = fe_rank(v) - axis;
    for (int i = 0; i < r; i++) shape[i] = i ? 1 : -1;
    AttrB b = ab_new(cx);
    ab_ints(&b, "newshape", r, shape);
    zp = FE_OP(cx, "reshape", ab_done(&b), zp);
  }
  return zp ? FE_OP(cx, "subtract", NULL, x, zp) : NULL;
}

/* Runs another converter on the inputs `in` (n of them); its output. */
static FeVal *convert_with(OnnxCx *cx, OnnxConvertFn *fn, int n, FeVal **in) {
  FeVal **saved_in = cx->in, *out0 = cx->out[0];
  int saved_n = cx->nin;
  cx->in = in, cx->nin = n;
  bool ok = !cx->failed && in[0] && in[1] && fn(cx);
  FeVal *y = ok ? cx->out[0] : NULL;
  cx->in = saved_in, cx->nin = saved_n, cx->out[0] = out0;
  return y;
}

/* (A - a_zp) @ (B - b_zp) in int32: a_zp per row of A, b_zp per column. */
static FeVal *int_matmul(OnnxCx *cx, FeVal *a, FeVal *azp, FeVal *b, FeVal *bzp) {
  FeVal *in[2] = {less_zero_point(cx, a, azp, fe_rank(a) - 2),
                  less_zero_point(cx, b, bzp, fe_rank(b) - 1)};
  return convert_with(cx, onnx_convert_matmul, 2, in);
}

/* Conv of (x - x_zp) and (w - w_zp) in int32: w_zp per output channel. */
static FeVal *int_conv(OnnxCx *cx, FeVal *x, FeVal *xzp, FeVal *w, FeVal *wzp) {
  FeVal *in[2] = {less_zero_point(cx, x, xzp, 0), less_zero_point(cx, w, wzp, 0)};
  return convert_with(cx, onnx_convert_conv, 2, in);
}

bool onnx_convert_matmul_integer(OnnxCx *cx) {
  return set_out(cx, int_matmul(cx, cx->in[0], opt_in(cx, 2), cx->in[1], opt_in(cx, 3)));
}

bool onnx_convert_conv_integer(OnnxCx *cx) {
  return set_out(cx, int_conv(cx, cx->in[0], opt_in(cx, 2), cx->in[1], opt_in(cx, 3)));
}

/* A vector scale of more than one value along `axis` of a rank-r result,
 * reshaped to broadcast there. */
static FeVal *scale_along(OnnxCx *cx, FeVal *s, int axis, int r) {
  s = scalar_param(cx, s);
  if (!s || fe_rank(s) == 0) return s;
  int64_t shape[TENSOR_MAX_RANK];
  for (int i = 0; i < r - axis; i++) shape[i] = i ? 1 : -1;
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", r - axis, shape);
  return FE_OP(cx, "reshape", ab_done(&b), s);
}

/* round(float32(acc) * (sa * sb / sy)) + y_zp, saturated to y_zp's dtype. */
static FeVal *requantize(OnnxCx *cx, FeVal *acc, FeVal *sa, FeVal *sb, FeVal *sy, FeVal *yzp) {
  FeVal *m = sa && sb ? FE_OP(cx, "multiply", NULL, sa, sb) : NULL;
  sy = scalar_param(cx, sy);
  m = m && sy ? FE_OP(cx, "divide", NULL, m, sy) : NULL;
  FeVal *f = acc && m ? FE_OP(cx, "multiply", NULL, fe_cast(cx, acc, DT_FLOAT32), m) : NULL;
  DType out = yzp ? fe_dtype(yzp) : DT_UINT8;
  return f ? qnn_call(cx, "qnn.quantize", f, fe_scalar(cx, DT_FLOAT32, 1.0), yzp, -1, out) : NULL;
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp). */
bool onnx_convert_qlinear_matmul(OnnxCx *cx) {
  FeVal **in = cx->in;
  FeVal *acc = int_matmul(cx, in[0], in[2], in[3], in[5]);
  if (!acc) return false;
  int r = fe_rank(acc);
  FeVal *sa = scale_along(cx, in[1], r - 2, r), *sb = scalar_param(cx, in[4]);
  return set_out(cx, requantize(cx, acc, sa, sb, in[6], in[7]));
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
bool onnx_convert_qlinear_conv(OnnxCx *cx) {
  FeVal **in = cx->in, *bias = opt_in(cx, 8);
  FeVal *acc = int_conv(cx, in[0], in[2], in[3], in[5]);
  if (acc && bias) {
    AttrB b = ab_new(cx);
    ab_int(&b, "axis", 1);
    acc = FE_OP(cx, "nn.bias_add", ab_done(&b), acc, fe_cast(cx, bias, DT_INT32));
  }
  if (!acc) return false;
  FeVal *sx = scalar_param(cx, in[1]), *sw = scale_along(cx, in[4], 1, fe_rank(acc));
  return set_out(cx, requantize(cx, acc, sx, sw, in[6], in[7]));
}
