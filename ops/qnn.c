/* qnn.c — op family "qnn": quantized arithmetic.  fixed_point_multiply
 * (TVM's core op) and QNN's core ops qnn.quantize, qnn.dequantize,
 * qnn.requantize, qnn.conv2d, qnn.dense, qnn.add, qnn.mul, with TVM
 * v0.10's argument lists, attributes and defaults (relay/qnn/attrs.h).
 *
 * Quantization parameters are arguments: a scale (float32) and a zero
 * point (int32), each a scalar or, for quantize, dequantize, requantize and
 * the kernel of qnn.conv2d / qnn.dense, a 1-D tensor with one value per
 * channel of `axis` (the weight's output channels).  The arithmetic (the
 * reference kernels, kernels/kernels_qnn.c) is TVM's canonical lowering:
 *   fixed_point_multiply  round(x * multiplier * 2^(shift - 31)), int32,
 *                         ties upward (q_multiply_shift)
 *   quantize    clip(round_half_even(x / scale) + zp) in out_dtype
 *   dequantize  float32(x - zp) * scale
 *   requantize  clip(fixed_point(x - in_zp, in_scale / out_scale) + out_zp),
 *               the ratio as a 31-bit significand and a shift; rounding
 *               "UPWARD" (ties toward +inf; "None" means it) or
 *               "TONEAREST" (ties away from zero)
 *   conv2d, dense  the nn op of (x - x_zp) and (w - w_zp), in int32
 *   add         requantize both to the output's parameters, add, subtract
 *               the output zero point, clip
 *   mul         (a - a_zp) * (b - b_zp) requantized from scale a_s * b_s. */
#include <string.h>

#include "ops/families.h"
#include "ops/nn_int.h"

static const Span no_span;

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static bool is_quantized(DType t) {
  return t == DT_INT8 || t == DT_UINT8 || t == DT_INT16 || t == DT_INT32;
}

/* Argument i, a quantization parameter of dtype dt: a scalar, or (when
 * channels is given) a 1-D tensor of that many values. */
static bool qparam(RelCtx *cx, Type **args, int i, DType dt, const Dim *channels,
                   const char *what) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return false;
  int n = t->u.tensor.ndim;
  bool ok = t->u.tensor.dtype == dt &&
            (n == 0 || (n == 1 && channels && rel_unify_dim(cx, t->u.tensor.dims[0], *channels)));
  if (!ok)
    rel_fail(cx, "%s: %s must be a %s scalar%s, got %s", cx->op_name, what, dtype_name(dt),
             channels ? arena_printf(cx->arena, " or a 1-D tensor of %s values",
                                     rel_shape_str(cx, 1, channels))
                      : "",
             rel_type_str(cx, t));
  return ok;
}

/* Argument 0, a tensor whose dtype passes `ok` (named by `which`). */
static const Type *data_arg(RelCtx *cx, Type **args, bool (*ok)(DType), const char *which) {
  const Type *x = rel_tensor(cx, args, 0);
  if (x && !ok(x->u.tensor.dtype))
    return rel_fail(cx, "%s: data must be %s, got %s", cx->op_name, which, rel_type_str(cx, x)),
           NULL;
  return x;
}

static bool is_f32(DType t) { return t == DT_FLOAT32; }

/* out_dtype, which must be a quantized dtype. */
static DType quantized_out(RelCtx *cx, const Attrs *attrs) {
  DType dt = rel_attr_dtype(cx, attrs, "out_dtype", DT_INVALID);
  if (cx->err[0]) return DT_INVALID;
  if (!is_quantized(dt))
    rel_fail(cx, "%s: out_dtype must be int8, uint8, int16 or int32, got %s", cx->op_name,
             rel_attr_str(cx, attrs, "out_dtype"));
  return cx->err[0] ? DT_INVALID : dt;
}

/* The channel dim of `axis` (its parameters may be per channel). */
static bool axis_dim(RelCtx *cx, const Attrs *attrs, const Type *x, Dim *d) {
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim ? x->u.tensor.ndim : 1);
  if (axis < 0) return false;
  *d = x->u.tensor.ndim ? x->u.tensor.dims[axis] : dim_const(1);
  return true;
}

static Type *rel_fixed_point_multiply(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  if (x->u.tensor.dtype != DT_INT32)
    return rel_fail(cx, "fixed_point_multiply: data must be int32, got %s", rel_type_str(cx, x));
  int64_t m = rel_attr_int(cx, attrs, "multiplier"), s = rel_attr_int(cx, attrs, "shift");
  if (cx->err[0]) return NULL;
  if (m < INT32_MIN || m > INT32_MAX || s < -63 || s > 63)
    return rel_fail(cx, "fixed_point_multiply: multiplier %lld or shift %lld out of range",
                    (long long)m, (long long)s);
  return args[0];
}

/* qnn.quantize(data, output_scale, output_zero_point). */
static Type *rel_quantize(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *x = data_arg(cx, args, is_f32, "float32");
  Dim c;
  if (!x || !axis_dim(cx, attrs, x, &c) || !qparam(cx, args, 1, DT_FLOAT32, &c, "output_scale") ||
      !qparam(cx, args, 2, DT_INT32, &c, "output_zero_point"))
    return NULL;
  DType dt = quantized_out(cx, attrs);
  return cx->err[0] ? NULL : tensor_of(cx, dt, x->u.tensor.ndim, x->u.tensor.dims);
}

/* qnn.dequantize(data, input_scale, input_zero_point) → float32. */
static Type *rel_dequantize(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = data_arg(cx, args, is_quantized, "int8, uint8, int16 or int32");
  Dim c;
  if (!x || !axis_dim(cx, attrs, x, &c) || !qparam(cx, args, 1, DT_FLOAT32, &c, "input_scale") ||
      !qparam(cx, args, 2, DT_INT32, &c, "input_zero_point"))
    return NULL;
  return tensor_of(cx, DT_FLOAT32, x->u.tensor.ndim, x->u.tensor.dims);
}

/* rounding: "UPWARD", "TONEAREST" or "None" (UPWARD); compute_dtype: only
 * TVM's default and int64 (the integer arithmetic). */
static bool requantize_modes(RelCtx *cx, const Attrs *attrs) {
  const char *r = rel_attr_str(cx, attrs, "rounding");
  const char *c = cx->err[0] ? "" : rel_attr_str(cx, attrs, "compute_dtype");
  if (cx->err[0]) return false;
  if (strcmp(r, "UPWARD") && strcmp(r, "TONEAREST") && strcmp(r, "None"))
    return rel_fail(cx, "qnn.requantize: rounding must be UPWARD or TONEAREST, got %s", r), false;
  if (strcmp(c, "None") && strcmp(c, "int64"))
    return rel_fail(cx, "qnn.requantize: compute_dtype %s is not supported (int64 is)", c), false;
  return true;
}

/* qnn.requantize(data, input_scale, input_zero_point, output_scale,
 * output_zero_point). */
static Type *rel_requantize(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = data_arg(cx, args, is_quantized, "int8, uint8, int16 or int32");
  Dim c;
  if (!x || !axis_dim(cx, attrs, x, &c) || !qparam(cx, args, 1, DT_FLOAT32, &c, "input_scale") ||
      !qparam(cx, args, 2, DT_INT32, &c, "input_zero_point") ||
      !qparam(cx, args, 3, DT_FLOAT32, &c, "output_scale") ||
      !qparam(cx, args, 4, DT_INT32, &c, "output_zero_point") || !requantize_modes(cx, attrs))
    return NULL;
  DType dt = quantized_out(cx, attrs);
  return cx->err[0] ? NULL : tensor_of(cx, dt, x->u.tensor.ndim, x->u.tensor.dims);
}

/* qnn.conv2d / qnn.dense (data, weight, input_zero_point,
 * kernel_zero_point, input_scale, kernel_scale): the nn op's relation on
 * the first two arguments (result int32 when out_dtype is not given);
 * the kernel's parameters may have one value per output channel. */
static Type *quantized_product(RelCtx *cx, Type **args, const Attrs *attrs, const char *nn_op,
                               bool conv) {
  const Type *x = data_arg(cx, args, is_quantized, "int8, uint8, int16 or int32");
  const Type *w = x ? rel_tensor(cx, args, 1) : NULL;
  if (!w) return NULL;
  if (!is_quantized(w->u.tensor.dtype))
    return rel_fail(cx, "%s: weight must be int8, uint8, int16 or int32, got %s", cx->op_name,
                    rel_type_str(cx, w));
  int o_axis = 0;
  NnConvAxes ax;
  if (conv && w->u.tensor.ndim == 4) {
    if (!nn_conv_axes(cx, attrs, 2, &ax)) return NULL;
    o_axis = ax.w[0];
  }
  Dim o = w->u.tensor.ndim > o_axis ? w->u.tensor.dims[o_axis] : dim_any();
  if (!qparam(cx, args, 2, DT_INT32, NULL, "input_zero_point") ||
      !qparam(cx, args, 3, DT_INT32, &o, "kernel_zero_point") ||
      !qparam(cx, args, 4, DT_FLOAT32, NULL, "input_scale") ||
      !qparam(cx, args, 5, DT_FLOAT32, &o, "kernel_scale"))
    return NULL;
  Type *t = ops_get(ops_lookup(nn_op))->rel(cx, 2, args, NULL, attrs);
  if (!t || rel_attr_str(cx, attrs, "out_dtype")[0]) return t;
  return tensor_of(cx, DT_INT32, t->u.tensor.ndim, t->u.tensor.dims);
}

static Type *rel_qnn_conv2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  return quantized_product(cx, args, attrs, "nn.conv2d", true);
}

static Type *rel_qnn_dense(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  return quantized_product(cx, args, attrs, "nn.dense", false);
}

/* qnn.add / qnn.mul (lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale,
 * rhs_zero_point, output_scale, output_zero_point): operands of one
 * quantized dtype, broadcast; scalar parameters. */
static Type *rel_qnn_binary(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *a = data_arg(cx, args, is_quantized, "int8, uint8, int16 or int32");
  const Type *b = a ? rel_tensor(cx, args, 1) : NULL;
  if (!b) return NULL;
  if (a->u.tensor.dtype != b->u.tensor.dtype)
    return rel_fail(cx, "%s: dtypes %s and %s differ", cx->op_name, dtype_name(a->u.tensor.dtype),
                    dtype_name(b->u.tensor.dtype));
  static const char *names[6] = {"lhs_scale",      "lhs_zero_point", "rhs_scale",
                                 "rhs_zero_point", "output_scale",   "output_zero_point"};
  for (int i = 0; i < 6; i++)
    if (!qparam(cx, args, 2 + i, i % 2 ? DT_INT32 : DT_FLOAT32, NULL, names[i])) return NULL;
  int n;
  Dim *d;
  if (!rel_broadcast(cx, a->u.tensor.ndim, a->u.tensor.dims, b->u.tensor.ndim, b->u.tensor.dims, &n,
                     &d))
    return NULL;
  return tensor_of(cx, a->u.tensor.dtype, n, d);
}

/* ───────────────────────────── table ───────────────────────────── */

/* clang-format off */
static const OpAttrSpec fpm_attrs[] = {
    {"multiplier", AV_INT, NULL}, {"shift", AV_INT, NULL}, {0}};
static const OpAttrSpec quantize_attrs[] = {
    {"axis", AV_INT, "-1"}, {"out_dtype", AV_STR, "\"int8\""}, {0}};
static const OpAttrSpec dequantize_attrs[] = {{"axis", AV_INT, "-1"}, {0}};
static const OpAttrSpec requantize_attrs[] = {
    {"axis", AV_INT, "-1"}, {"rounding", AV_STR, "\"None\""},
    {"compute_dtype", AV_STR, "\"None\""}, {"out_dtype", AV_STR, "\"int8\""}, {0}};
static const OpAttrSpec qdense_attrs[] = {
    {"units", AV_NONE, "None"}, {"out_dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec qbinary_attrs[] = {
    {"lhs_axis", AV_INT, "-1"}, {"rhs_axis", AV_INT, "-1"}, {0}};
/* clang-format on */

const OpDef ops_family_qnn[] = {
    {"fixed_point_multiply", 1, 1, OPAT_ELEMWISE, fpm_attrs, rel_fixed_point_multiply,
     "round(x * multiplier * 2^(shift - 31)), "
     "int32, ties upward",
     false, .cost = OPCOST_ELEMWISE, .args = "x", .rule = "the result has x's type (int32)",
     .example = "fixed_point_multiply([100, -7], multiplier=1073741824, shift=0)"},
    {"qnn.quantize", 3, 3, OPAT_ELEMWISE, quantize_attrs, rel_quantize,
     "clip(round(x / scale) + "
     "zero_point)",
     false, .cost = OPCOST_ELEMWISE, .args = "x, scale, zero_point",
     .rule = "x's shape in out_dtype (int8 default); x float32; scale float32, zero_point int32, "
             "scalars or 1-D of x's `axis` size",
     .example = "qnn.quantize([0.5f, -1f, 2f], 0.5f, 0)"},
    {"qnn.dequantize", 3, 3, OPAT_ELEMWISE, dequantize_attrs, rel_dequantize,
     "(q - zero_point) * scale in float32", false, .cost = OPCOST_ELEMWISE,
     .args = "q, scale, zero_point",
     .rule =
         "q's shape in float32; scale float32, zero_point int32, scalars or 1-D of q's `axis` size",
     .example = "qnn.dequantize([1i8, -2i8, 4i8], 0.5f, 0)"},
    {"qnn.requantize", 5, 5, OPAT_ELEMWISE, requantize_attrs, rel_requantize,
     ""
     "q in other quantization parameters",
     false, .cost = OPCOST_ELEMWISE,
     .args = "q, in_scale, in_zero_point, out_scale, out_zero_point",
     .rule = "q's shape in out_dtype (int8 default); the scales float32, zero points int32, "
             "scalars or 1-D of q's `axis` size",
     .example = "qnn.requantize([4, -8], 0.5f, 0, 0.25f, 0)"},
    {"qnn.conv2d", 6, 6, OPAT_OUT_EWISE_FUSABLE, nn_conv2d_attrs, rel_qnn_conv2d,
     "int32 convolution of x - "
     "x_zp and w - w_zp",
     false, .cost = OPCOST_CONV2D,
     .args = "data, weight, data_zero_point, weight_zero_point, data_scale, weight_scale",
     .rule = "nn.conv2d's type in out_dtype (int32 when unset); data and weight "
             "int8/uint8/int16/int32, zero points int32, scales float32",
     .example = "qnn.conv2d(ones(shape=[1, 1, 3, 3], dtype=\"int8\"), ones(shape=[1, 1, 2, 2], "
                "dtype=\"int8\"), 0, 0, 0.5f, 0.5f, channels=1, kernel_size=[2, 2])"},
    {"qnn.dense", 6, 6, OPAT_OUT_EWISE_FUSABLE, qdense_attrs, rel_qnn_dense,
     "int32 product of x - "
     "x_zp and w - w_zp",
     false, .args = "data, weight, data_zero_point, weight_zero_point, data_scale, weight_scale",
     .rule = "nn.dense's type in out_dtype (int32 when unset); data and weight "
             "int8/uint8/int16/int32, zero points int32, scales float32",
     .example = "qnn.dense(ones(shape=[1, 2], dtype=\"int8\"), ones(shape=[3, 2], dtype=\"int8\"), "
                "0, 0, 0.5f, 0.5f, units=3)"},
    {"qnn.add", 8, 8, OPAT_BROADCAST, qbinary_attrs, rel_qnn_binary, "quantized a + b", false,
     .cost = OPCOST_ELEMWISE,
     .args = "a, b, a_scale, a_zero_point, b_scale, b_zero_point, out_scale, out_zero_point",
     .rule = "a and b (one quantized dtype) broadcast, in that dtype; the scales float32, zero "
             "points int32 scalars",
     .example = "qnn.add([1i8, 2i8], [3i8, 4i8], 0.5f, 0, 0.5f, 0, 0.5f, 0)"},
    {"qnn.mul", 8, 8, OPAT_BROADCAST, qbinary_attrs, rel_qnn_binary, "quantized a * b", false,
     .cost = OPCOST_ELEMWISE,
     .args = "a, b, a_scale, a_zero_point, b_scale, b_zero_point, out_scale, out_zero_point",
     .rule = "a and b (one quantized dtype) broadcast, in that dtype; the scales float32, zero "
             "points int32 scalars",
     .example = "qnn.mul([1i8, 2i8], [3i8, 4i8], 0.5f, 0, 0.5f, 0, 0.5f, 0)"},
    {0},
};
