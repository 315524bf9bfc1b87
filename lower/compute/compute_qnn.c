/* compute_qnn.c — compute rules (lower/compute/compute.h) of the qnn family
 * (ops/qnn.c).  Each mirrors its reference kernel's arithmetic step by
 * step (kernels/kernels_qnn.c), so compiled results agree with it bit for
 * bit:
 *
 *   fixed_point_multiply, qnn.quantize, qnn.dequantize, qnn.requantize
 *   (UPWARD and TONEAREST), qnn.add, qnn.mul   inline (elementwise or
 *       broadcast); quantization parameters are scalars or, along `axis`,
 *       one value per channel, constants or run-time tensors;
 *   qnn.dense and (NCHW, groups 1) qnn.conv2d of uint8 or int8 data by an
 *       int8 weight into int32   4-way byte dot products on AVX512-VNNI
 *       hosts (compute_qnn_dot.c, compute_qnn_dot_conv.c);
 *   qnn.conv2d, other qnn.dense   the nn rules (compute_conv2d, compute_dense) on
 *       inline operands less their zero points, in int32, accumulating in
 *       int32 (the kernels' wrapping sums narrowed to int32).
 *
 * Fixed-point products are TVM's q_multiply_shift in int64: x shifted left
 * by max(s, 0), times the significand m, plus 2^(r - 1) (one less for a
 * negative product when rounding TONEAREST), shifted right arithmetically
 * by r = min(31 + max(-s, 0), 63).  A scale ratio in_scale / out_scale
 * (float32 scales divided in float64) becomes m and s as the kernel's
 * frexp does, computed from the float64's bits: the 53-bit significand
 * rounded half away from zero to 31 bits, 2^31 carrying into the
 * exponent.  That is exact for every finite ratio a float32 quotient can
 * give (none is subnormal); the kernel's result is undefined (a float to
 * integer conversion out of range, a shift of 64 or more) for a ratio that
 * is infinite or NaN (a zero output scale) or of 2^63 or more, which no
 * rule can mirror: when the scales are scalar constants (as in imported
 * models) the rules refuse such a ratio (lc_fail: the op stays on its
 * kernel); scales known only at run time are taken as they come. */
#include <math.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "lower/compute/compute_qnn_dot.h"
#include "ops/nn_int.h"

/* Operand slots of the QNN ops' parameters (TVM's argument order). */
enum { RQ_IN_S = 1, RQ_IN_Z, RQ_OUT_S, RQ_OUT_Z };
enum { BIN_A_S = 2, BIN_A_Z, BIN_B_S, BIN_B_Z, BIN_OUT_S, BIN_OUT_Z };
enum { PROD_X_Z = 2, PROD_W_Z };

static PrimExpr *bin(LowerCx *L, PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  return lc_bin(L, op, a, b);
}
static PrimExpr *call2(LowerCx *L, PrimIntrinsic fn, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, fn, a, b, NULL);
}
static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}
static PrimExpr *i64(LowerCx *L, int64_t v) { return lc_cast(L, DT_INT64, lc_int(L, v)); }
static PrimExpr *i32(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_INT32, e); }

/* ───────────────────────── fixed-point arithmetic ───────────────────────── */

/* TVM's q_multiply_shift of x (int64) by m * 2^(s - 31), m and s int64
 * expressions, narrowed to int32 as the kernel narrows it. */
static PrimExpr *fixed_point(LowerCx *L, PrimExpr *x, PrimExpr *m, PrimExpr *s, bool nearest) {
  PrimExpr *zero = i64(L, 0);
  PrimExpr *ls = call2(L, PI_MAX, s, zero);
  PrimExpr *rs = call2(L, PI_MIN, bin(L, PB_ADD, call2(L, PI_MAX, lc_neg(L, s), zero), i64(L, 31)),
                       i64(L, 63));
  PrimExpr *v = bin(L, PB_MUL, call2(L, PI_SHL, x, ls), m);
  PrimExpr *round = call2(L, PI_SHL, i64(L, 1), bin(L, PB_SUB, rs, i64(L, 1)));
  if (nearest) round = sel(L, bin(L, PB_LT, v, zero), bin(L, PB_SUB, round, i64(L, 1)), round);
  return i32(L, call2(L, PI_SHR, bin(L, PB_ADD, v, round), rs));
}

/* The kernel's significand_shift of a float64 ratio r: r = f * 2^e with
 * |f| in [0.5, 1) (frexp), m = round(f * 2^31) half away from zero, and
 * a positive m of 2^31 halved with e + 1; zero gives m = s = 0.  From r's
 * bits: f * 2^31 is the 53-bit significand over 2^22. */
static void significand_shift(LowerCx *L, PrimExpr *r, PrimExpr **m, PrimExpr **s) {
  PrimExpr *bits = lc_bitcast(L, DT_INT64, r);
  PrimExpr *biased = call2(L, PI_BITAND, call2(L, PI_SHR, bits, i64(L, 52)), i64(L, 0x7ff));
  PrimExpr *frac = call2(L, PI_BITAND, bits, i64(L, ((int64_t)1 << 52) - 1));
  PrimExpr *sig = call2(L, PI_BITOR, frac, i64(L, (int64_t)1 << 52));
  PrimExpr *q = call2(L, PI_SHR, bin(L, PB_ADD, sig, i64(L, (int64_t)1 << 21)), i64(L, 22));
  PrimExpr *neg = bin(L, PB_LT, bits, i64(L, 0));
  PrimExpr *carry = bin(L, PB_AND, lc_not(L, neg), bin(L, PB_EQ, q, i64(L, (int64_t)1 << 31)));
  PrimExpr *e = bin(L, PB_SUB, biased, i64(L, 1022));
  PrimExpr *zero = bin(L, PB_EQ, r, lc_lit(L, DT_FLOAT64, 0));
  PrimExpr *mq = sel(L, neg, lc_neg(L, q), sel(L, carry, i64(L, (int64_t)1 << 30), q));
  *m = sel(L, zero, i64(L, 0), mq);
  *s = sel(L, zero, i64(L, 0), sel(L, carry, bin(L, PB_ADD, e, i64(L, 1)), e));
}

/* v (int32) clipped to the range of a quantized dtype (int32: as it is). */
static PrimExpr *clip_to(LowerCx *L, PrimExpr *v, DType out) {
  if (out == DT_INT32) return v;
  int bits = dtype_bytes(out) * 8;
  bool u = dtype_class(out) == 'u';
  int64_t lo = u ? 0 : -((int64_t)1 << (bits - 1));
  int64_t hi = u ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
  return call2(L, PI_MAX, call2(L, PI_MIN, v, lc_int(L, hi)), lc_int(L, lo));
}

/* The kernel's requantize_one: x (any integer) less in_zp in int32, the
 * fixed-point product by in_s / out_s (float32 scales divided in float64),
 * plus out_zp in int32, clipped to [lo, hi]; an int32 expression. */
static PrimExpr *requantize_one(LowerCx *L, PrimExpr *x, PrimExpr *in_s, PrimExpr *in_zp,
                                PrimExpr *out_s, PrimExpr *out_zp, bool nearest, DType out) {
  PrimExpr *ratio = bin(L, PB_DIV, lc_cast(L, DT_FLOAT64, in_s), lc_cast(L, DT_FLOAT64, out_s)), *m,
           *s;
  significand_shift(L, ratio, &m, &s);
  PrimExpr *d = bin(L, PB_SUB, i32(L, x), i32(L, in_zp));
  PrimExpr *v =
      bin(L, PB_ADD, fixed_point(L, lc_cast(L, DT_INT64, d), m, s, nearest), i32(L, out_zp));
  return clip_to(L, v, out);
}

/* ───────────────────────── parameters ───────────────────────── */

/* A quantization parameter's value for the element at idx of an n-dim
 * operand: a scalar's, or (1-D) that of the element's index along axis. */
static PrimExpr *param_at(LowerCx *L, const LTensor *p, int n, PrimExpr **idx, int axis) {
  if (p->ndim == 0) return lc_at(L, p, NULL);
  PrimExpr *c = n ? idx[axis] : lc_int(L, 0);
  return lc_at(L, p, &c);
}

/* A constant scale's value (a float32 scalar), or NAN when it is known
 * only at run time. */
static double const_scale(const LTensor *p) { return p->value ? p->value->u.f : NAN; }

/* Whether the ratio in_s / out_s (scales times `also`, a further factor
 * of in_s) is one the kernel defines: finite, under 2^62 (the shift stays
 * below 64); true when a scale is known only at run time, unless the
 * output scale is a constant 0. */
static bool ratio_ok(const LTensor *in_s, const LTensor *also, const LTensor *out_s) {
  double a = const_scale(in_s) * (also ? const_scale(also) : 1), o = const_scale(out_s);
  if (o == 0 || isinf(o)) return false;
  if (isnan(a) || isnan(o)) return true;
  double r = (double)(float)a / o;
  return isfinite(r) && fabs(r) < 0x1p62;
}

/* Whether the operands suit a rule: the data a buffer dtype, each
 * parameter from `first` on a scalar or a 1-D tensor of float32 scales and
 * int32 zero points alternating as `kinds` says ('f', 'i'). */
static bool operands_ok(LTensor **in, int nin, int want, int first, const char *kinds) {
  if (nin != want || !lc_quant_dtype_ok(in[0]->dtype)) return false;
  for (int i = first; i < nin; i++) {
    DType dt = kinds[i - first] == 'f' ? DT_FLOAT32 : DT_INT32;
    if (in[i]->dtype != dt || in[i]->ndim > 1) return false;
  }
  return true;
}

/* The elementwise result of a rule whose element function is `at`, with
 * the data's shape, the call's result dtype and its axis in aux[0]. */
static LTensor *elementwise(LowerCx *L, const Expr *call, LTensor **in, int nin, LAtFn at) {
  DType dt = lc_result_type(call)->u.tensor.dtype;
  if (!lc_quant_dtype_ok(dt))
    return lc_fail(L, "%s to %s", call->u.call.fn->u.op.name, dtype_name(dt));
  LTensor *t = lc_tensor(L, call, dt, in[0]->ndim, in[0]->shape);
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += in[0]->ndim;
  t->in = in, t->nin = nin, t->at = at, t->aux[0] = in[0]->ndim ? axis : 0;
  return t;
}

/* ───────────────────────── fixed_point_multiply ───────────────────────── */

/* The element at idx: the attributes are constants of the call. */
static PrimExpr *at_fpm(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int64_t m = op_attr_int(t->call, "multiplier"), s = op_attr_int(t->call, "shift");
  PrimExpr *x = lc_cast(L, DT_INT64, lc_at(L, t->in[0], idx));
  return fixed_point(L, x, i64(L, m), i64(L, s), false);
}

static LTensor *compute_fixed_point_multiply(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 1 || in[0]->dtype != DT_INT32)
    return lc_fail(L, "fixed_point_multiply on %s", nin == 1 ? dtype_name(in[0]->dtype) : "?");
  LTensor *t = lc_tensor(L, call, DT_INT32, in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_fpm;
  return t;
}

/* ───────────────────────── quantize, dequantize ───────────────────────── */

/* clip(nearbyint(x / scale) + zp): the quotient in float32, rounded half
 * to even, converted to int32 saturating with NaN as 0 (the kernel's
 * clamp), the zero point added in int32 (wrapping), clipped. */
static PrimExpr *at_quantize(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int n = t->ndim, axis = (int)t->aux[0];
  PrimExpr *x = lc_cast(L, DT_FLOAT32, lc_at(L, t->in[0], idx));
  PrimExpr *v = bin(L, PB_DIV, x, param_at(L, t->in[1], n, idx, axis));
  PrimExpr *r = i32(L, lc_call(L, PI_NEARBYINT, v, NULL, NULL));
  return clip_to(L, bin(L, PB_ADD, r, param_at(L, t->in[2], n, idx, axis)), t->dtype);
}

static LTensor *compute_quantize(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (!operands_ok(in, nin, 3, 1, "fi") || in[0]->dtype != DT_FLOAT32)
    return lc_fail(L, "qnn.quantize of these operands");
  return elementwise(L, call, in, nin, at_quantize);
}

/* float32(int32(x - zp)) * scale, the product in float32. */
static PrimExpr *at_dequantize(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int n = t->in[0]->ndim, axis = (int)t->aux[0];
  PrimExpr *d =
      bin(L, PB_SUB, i32(L, lc_at(L, t->in[0], idx)), param_at(L, t->in[2], n, idx, axis));
  return bin(L, PB_MUL, lc_cast(L, DT_FLOAT32, d), param_at(L, t->in[1], n, idx, axis));
}

static LTensor *compute_dequantize(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (!operands_ok(in, nin, 3, 1, "fi") || !dtype_is_int(in[0]->dtype))
    return lc_fail(L, "qnn.dequantize of these operands");
  return elementwise(L, call, in, nin, at_dequantize);
}

/* ───────────────────────── requantize ───────────────────────── */

/* aux[1]: rounding TONEAREST (else UPWARD). */
static PrimExpr *at_requantize(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int n = t->ndim, axis = (int)t->aux[0];
  PrimExpr *p[5];
  for (int i = RQ_IN_S; i <= RQ_OUT_Z; i++) p[i] = param_at(L, t->in[i], n, idx, axis);
  return requantize_one(L, lc_at(L, t->in[0], idx), p[RQ_IN_S], p[RQ_IN_Z], p[RQ_OUT_S],
                        p[RQ_OUT_Z], t->aux[1], t->dtype);
}

static LTensor *compute_requantize(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (!operands_ok(in, nin, 5, 1, "fifi") || !dtype_is_int(in[0]->dtype))
    return lc_fail(L, "qnn.requantize of these operands");
  if (!ratio_ok(in[RQ_IN_S], NULL, in[RQ_OUT_S]))
    return lc_fail(L, "qnn.requantize: a scale ratio the kernel leaves undefined");
  LTensor *t = elementwise(L, call, in, nin, at_requantize);
  if (t) t->aux[1] = strcmp(op_attr_str(lc_arena(L), call, "rounding"), "TONEAREST") == 0;
  return t;
}

/* ───────────────────────── add, mul ───────────────────────── */

/* qnn.add (aux[0] 0) and qnn.mul (1) at an index of the broadcast result
 * (aux[1] dims, shape[]), with the kernel's steps:
 *   add  requantize a and b to the output's parameters (not clipped),
 *        sum, less the output zero point, in int32, clipped;
 *   mul  (a - a_zp) * (b - b_zp) in int32, requantized from the scale
 *        a_s * b_s (a float32 product) to the output's. */
static PrimExpr *at_binary(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *a = lc_bcast_at(L, t->in[0], t->ndim, (PrimExpr **)t->shape, idx);
  PrimExpr *b = lc_bcast_at(L, t->in[1], t->ndim, (PrimExpr **)t->shape, idx);
  PrimExpr *p[BIN_OUT_Z + 1];
  for (int i = BIN_A_S; i <= BIN_OUT_Z; i++) p[i] = lc_at(L, t->in[i], NULL);
  if (t->aux[0]) {
    PrimExpr *da = bin(L, PB_SUB, i32(L, a), p[BIN_A_Z]),
             *db = bin(L, PB_SUB, i32(L, b), p[BIN_B_Z]);
    PrimExpr *scale = bin(L, PB_MUL, p[BIN_A_S], p[BIN_B_S]);
    return requantize_one(L, bin(L, PB_MUL, da, db), scale, lc_int(L, 0), p[BIN_OUT_S],
                          p[BIN_OUT_Z], false, t->dtype);
  }
  PrimExpr *ra =
      requantize_one(L, a, p[BIN_A_S], p[BIN_A_Z], p[BIN_OUT_S], p[BIN_OUT_Z], false, DT_INT32);
  PrimExpr *rb =
      requantize_one(L, b, p[BIN_B_S], p[BIN_B_Z], p[BIN_OUT_S], p[BIN_OUT_Z], false, DT_INT32);
  return clip_to(L, bin(L, PB_SUB, bin(L, PB_ADD, ra, rb), p[BIN_OUT_Z]), t->dtype);
}

static LTensor *binary(LowerCx *L, const Expr *call, LTensor **in, int nin, bool mul) {
  if (!operands_ok(in, nin, 8, 2, "fififi") || in[1]->dtype != in[0]->dtype)
    return lc_fail(L, "%s of these operands", call->u.call.fn->u.op.name);
  for (int i = 2; i < nin; i++)
    if (in[i]->ndim)
      return lc_fail(L, "%s: parameters that are not scalars", call->u.call.fn->u.op.name);
  bool defined = mul ? ratio_ok(in[BIN_A_S], in[BIN_B_S], in[BIN_OUT_S])
                     : ratio_ok(in[BIN_A_S], NULL, in[BIN_OUT_S]) &&
                           ratio_ok(in[BIN_B_S], NULL, in[BIN_OUT_S]);
  if (!defined)
    return lc_fail(L, "%s: a scale ratio the kernel leaves undefined", call->u.call.fn->u.op.name);
  int n;
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!lc_broadcast(L, in, 2, &n, shape)) return NULL;
  LTensor *t = lc_tensor(L, call, in[0]->dtype, n, shape);
  t->in = in, t->nin = nin, t->at = at_binary, t->aux[0] = mul;
  return t;
}

static LTensor *compute_qnn_add(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return binary(L, call, in, nin, false);
}

static LTensor *compute_qnn_mul(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return binary(L, call, in, nin, true);
}

/* ───────────────────────── conv2d, dense ───────────────────────── */

/* An operand less its zero point: int32(x) - zp, zp a scalar or one value
 * per index along axis aux[0] (the weight's output channels). */
static PrimExpr *at_shifted(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *zp = param_at(L, t->in[1], t->ndim, idx, (int)t->aux[0]);
  return bin(L, PB_SUB, i32(L, lc_at(L, t->in[0], idx)), zp);
}

static LTensor *shifted(LowerCx *L, LTensor *x, LTensor *zp, int axis) {
  LTensor *t = lc_tensor(L, x->call, DT_INT32, x->ndim, x->shape);
  LTensor **in = ARENA_ARRAY(lc_arena(L), LTensor *, 2);
  in[0] = x, in[1] = zp;
  t->in = in, t->nin = 2, t->at = at_shifted, t->aux[0] = axis;
  return t;
}

/* The operands of a quantized product less their zero points (the
 * weight's per output channel along w_axis), or NULL after lc_fail. */
static LTensor **product_operands(LowerCx *L, const Expr *call, LTensor **in, int nin, int w_axis) {
  if (nin != 6 || !dtype_is_int(in[0]->dtype) || !dtype_is_int(in[1]->dtype) ||
      in[PROD_X_Z]->dtype != DT_INT32 || in[PROD_W_Z]->dtype != DT_INT32 ||
      in[PROD_X_Z]->ndim > 1 || in[PROD_W_Z]->ndim > 1)
    return lc_fail(L, "%s of these operands", call->u.call.fn->u.op.name), NULL;
  LTensor **two = ARENA_ARRAY(lc_arena(L), LTensor *, 2);
  two[0] = shifted(L, in[0], in[PROD_X_Z], 0);
  two[1] = shifted(L, in[1], in[PROD_W_Z], w_axis);
  return two;
}

static LTensor *compute_qnn_conv2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (qnn_conv2d_dot_ok(L, call, in, nin)) return qnn_conv2d_dot(L, call, in);
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnConvAxes ax;
  if (!nn_conv_axes(&cx, call->u.call.attrs, 2, &ax)) return lc_fail(L, "qnn.conv2d: %s", cx.err);
  LTensor **two = product_operands(L, call, in, nin, ax.w[0]);
  return two ? compute_conv2d(L, call, two, 2) : NULL;
}

static LTensor *compute_qnn_dense(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (qnn_dense_dot_ok(call, in, nin)) return qnn_dense_dot(L, call, in);
  LTensor **two = product_operands(L, call, in, nin, 0);
  return two ? compute_dense(L, call, two, 2) : NULL;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_qnn[] = {
    {"fixed_point_multiply", compute_fixed_point_multiply},
    {"qnn.quantize", compute_quantize},
    {"qnn.dequantize", compute_dequantize},
    {"qnn.requantize", compute_requantize},
    {"qnn.conv2d", compute_qnn_conv2d},
    {"qnn.dense", compute_qnn_dense},
    {"qnn.add", compute_qnn_add},
    {"qnn.mul", compute_qnn_mul},
    {NULL, NULL},
};
