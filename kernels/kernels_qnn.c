/* kernels_qnn.c — reference kernels of ops/qnn.c: fixed_point_multiply and
 * QNN's qnn.quantize, qnn.dequantize, qnn.requantize, qnn.conv2d,
 * qnn.dense, qnn.add, qnn.mul, computed as TVM's canonical lowering of each
 * (the formulas are in ops/qnn.c's header).
 *
 * Integer steps are in int64 with two's complement wrapping; a shift right
 * is arithmetic (rounds toward -inf, the rounding term making it round to
 * nearest).  A scale ratio becomes a 31-bit significand m and a shift s
 * (ratio = m * 2^(s - 31), m in [2^30, 2^31)), rounded as TVM rounds it.
 * The products run on the nn kernels after the zero points are subtracted
 * (padding then contributes zero, as TVM's padding with the zero point). */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/nn_int.h"

static int64_t get_i(const RtTensor *t, int64_t i) {
  int64_t v;
  lane_load(LANE_I64, t->dtype, t->data, i, 1, 1, &v);
  return v;
}

static double get_f(const RtTensor *t, int64_t i) {
  double v;
  lane_load(LANE_F64, t->dtype, t->data, i, 1, 1, &v);
  return v;
}

static void put_i(RtTensor *t, int64_t i, int64_t v) {
  lane_store(LANE_I64, t->dtype, &v, t->data, i, 1);
}

/* The value range of a quantized dtype. */
static void qrange(DType dt, int64_t *lo, int64_t *hi) {
  int bits = dtype_bytes(dt) * 8;
  bool u = dtype_class(dt) == 'u';
  *lo = u ? 0 : -((int64_t)1 << (bits - 1));
  *hi = u ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* TVM's q_multiply_shift: x * m * 2^(s - 31), ties upward or (nearest)
 * away from zero. */
static int64_t fixed_point(int64_t x, int64_t m, int64_t s, bool nearest) {
  int64_t ls = s > 0 ? s : 0, rs = (s > 0 ? 0 : -s) + 31;
  if (rs > 63) rs = 63;
  uint64_t v = ((uint64_t)x << ls) * (uint64_t)m;
  int64_t round = (int64_t)1 << (rs - 1);
  if (nearest && (int64_t)v < 0) round -= 1;
  return (int64_t)(v + (uint64_t)round) >> rs;
}

/* A ratio as a 31-bit significand and a shift (frexp, the significand
 * rounded half away from zero; 2^31 carries into the shift). */
static void significand_shift(double ratio, int64_t *m, int64_t *s) {
  int e = 0;
  if (ratio == 0) {
    *m = *s = 0;
    return;
  }
  double f = frexp(ratio, &e);
  int64_t q = (int64_t)round(f * 2147483648.0);
  if (q == ((int64_t)1 << 31)) q /= 2, e++;
  *m = q, *s = e;
}

/* A quantization parameter's value for element i of data x along `axis`
 * (a scalar, or one value per channel). */
typedef struct QAxis {
  int64_t inner, channels;
} QAxis;

static bool qaxis(KernelCtx *kx, const Attrs *attrs, const RtTensor *x, QAxis *q) {
  int axis = x->ndim ? kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim) : 0;
  if (!kernel_attrs_ok(kx) || axis < 0) return false;
  q->inner = 1, q->channels = x->ndim ? x->shape[axis] : 1;
  for (int d = axis + 1; d < x->ndim; d++) q->inner *= x->shape[d];
  return true;
}

static int64_t chan(const QAxis *q, const RtTensor *p, int64_t i) {
  return p->numel == 1 ? 0 : (i / q->inner) % q->channels;
}

static bool k_fixed_point_multiply(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                   int nout, RtTensor *const *out) {
  int64_t m = kattr_int(kx, attrs, "multiplier"), s = kattr_int(kx, attrs, "shift");
  if (!kernel_attrs_ok(kx)) return false;
  for (int64_t i = 0; i < in[0]->numel; i++)
    put_i(out[0], i, (int32_t)fixed_point(get_i(in[0], i), m, s, false));
  return true;
}

/* clip(round_half_even(float32(x) / scale) + zp): the quotient in float32,
 * held inside int32 before the zero point is added. */
static bool k_quantize(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  QAxis q;
  if (!qaxis(kx, attrs, in[0], &q)) return false;
  int64_t lo, hi;
  qrange(out[0]->dtype, &lo, &hi);
  for (int64_t i = 0; i < in[0]->numel; i++) {
    float v = (float)get_f(in[0], i) / (float)get_f(in[1], chan(&q, in[1], i));
    double r = nearbyint((double)v);
    r = isnan(r) ? 0 : r < INT32_MIN ? INT32_MIN : r > INT32_MAX ? INT32_MAX : r;
    int64_t z = (int32_t)((int64_t)r + get_i(in[2], chan(&q, in[2], i)));
    put_i(out[0], i, clamp(z, lo, hi));
  }
  return true;
}

/* float32(x - zp) * scale, the product in float32. */
static bool k_dequantize(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  QAxis q;
  if (!qaxis(kx, attrs, in[0], &q)) return false;
  float *y = out[0]->data;
  for (int64_t i = 0; i < in[0]->numel; i++) {
    int32_t d = (int32_t)(get_i(in[0], i) - get_i(in[2], chan(&q, in[2], i)));
    y[i] = (float)d * (float)get_f(in[1], chan(&q, in[1], i));
  }
  return true;
}

/* x (less its zero point) in the parameters out_scale, out_zp: the
 * fixed-point product by in_scale / out_scale (ratio of the float32
 * scales, in double), the output zero point added in int32, clipped. */
static int64_t requantize_one(int64_t x, float in_s, int64_t in_zp, float out_s, int64_t out_zp,
                              bool nearest, int64_t lo, int64_t hi) {
  int64_t m, s;
  significand_shift((double)in_s / (double)out_s, &m, &s);
  int32_t v = (int32_t)fixed_point((int32_t)(x - in_zp), m, s, nearest);
  return clamp((int32_t)((uint32_t)v + (uint32_t)out_zp), lo, hi);
}

static bool k_requantize(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  QAxis q;
  bool nearest = strcmp(kattr_str(kx, attrs, "rounding"), "TONEAREST") == 0;
  if (!qaxis(kx, attrs, in[0], &q)) return false;
  int64_t lo, hi;
  qrange(out[0]->dtype, &lo, &hi);
  for (int64_t i = 0; i < in[0]->numel; i++) {
    float is = (float)get_f(in[1], chan(&q, in[1], i)),
          os = (float)get_f(in[3], chan(&q, in[3], i));
    put_i(out[0], i,
          requantize_one(get_i(in[0], i), is, get_i(in[2], chan(&q, in[2], i)), os,
                         get_i(in[4], chan(&q, in[4], i)), nearest, lo, hi));
  }
  return true;
}

/* x - zp as a new int32 tensor; zp a scalar or one value per index of
 * axis `axis` of x. */
static RtTensor *shifted(KernelCtx *kx, const RtTensor *x, const RtTensor *zp, int axis) {
  RtTensor *t = rt_tensor_new(DT_INT32, x->ndim, x->shape, kx->err, sizeof kx->err);
  if (!t) return NULL;
  QAxis q = {1, x->ndim ? x->shape[axis] : 1};
  for (int d = axis + 1; d < x->ndim; d++) q.inner *= x->shape[d];
  for (int64_t i = 0; i < x->numel; i++) put_i(t, i, get_i(x, i) - get_i(zp, chan(&q, zp, i)));
  return t;
}

/* qnn.conv2d / qnn.dense: nn_op on the shifted operands (the weight's
 * zero point per output channel: axis w_axis), int32 result. */
static bool quantized_product(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                              const char *nn_op, int w_axis) {
  RtTensor *x = shifted(kx, in[0], in[2], 0), *w = x ? shifted(kx, in[1], in[3], w_axis) : NULL;
  RtTensor *ins[2] = {x, w};
  bool ok = w && kernels_run(kx, ops_lookup(nn_op), 2, ins, attrs, 1, &out);
  rt_tensor_release(x), rt_tensor_release(w);
  return ok;
}

static bool k_qnn_conv2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  NnConvAxes ax;
  if (!nn_conv_axes(&kx->rel, attrs, 2, &ax)) return kernel_attrs_ok(kx);
  return quantized_product(kx, in, attrs, out[0], "nn.conv2d", ax.w[0]);
}

static bool k_qnn_dense(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  return quantized_product(kx, in, attrs, out[0], "nn.dense", 0);
}

/* The offset in t (right-aligned, broadcast) of output element i. */
static int64_t bcast_offset(const RtTensor *t, const RtTensor *out, int64_t i) {
  int64_t off = 0, st = 1;
  for (int d = out->ndim - 1; d >= 0; d--) {
    int64_t k = i % out->shape[d];
    i /= out->shape[d];
    int j = d - (out->ndim - t->ndim);
    if (j < 0) break;
    if (t->shape[j] != 1) off += k * st;
    st *= t->shape[j];
  }
  return off;
}

/* qnn.add (mul false) and qnn.mul with scalar parameters. */
static bool qnn_binary(RtTensor *const *in, RtTensor *out, bool mul) {
  float as = (float)get_f(in[2], 0), bs = (float)get_f(in[4], 0), os = (float)get_f(in[6], 0);
  int64_t az = get_i(in[3], 0), bz = get_i(in[5], 0), oz = get_i(in[7], 0), lo, hi;
  qrange(out->dtype, &lo, &hi);
  for (int64_t i = 0; i < out->numel; i++) {
    int64_t a = get_i(in[0], bcast_offset(in[0], out, i)),
            b = get_i(in[1], bcast_offset(in[1], out, i));
    int64_t v;
    if (mul) {
      int32_t p = (int32_t)((uint32_t)(int32_t)(a - az) * (uint32_t)(int32_t)(b - bz));
      v = requantize_one(p, as * bs, 0, os, oz, false, lo, hi);
    } else {
      int64_t ra = requantize_one(a, as, az, os, oz, false, INT32_MIN, INT32_MAX);
      int64_t rb = requantize_one(b, bs, bz, os, oz, false, INT32_MIN, INT32_MAX);
      v = clamp((int32_t)((uint32_t)ra + (uint32_t)rb - (uint32_t)oz), lo, hi);
    }
    put_i(out, i, v);
  }
  return true;
}

static bool k_qnn_add(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  return qnn_binary(in, out[0], false);
}

static bool k_qnn_mul(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  return qnn_binary(in, out[0], true);
}

const KernelDef kernels_family_qnn[] = {
    {"fixed_point_multiply", k_fixed_point_multiply},
    {"qnn.quantize", k_quantize},
    {"qnn.dequantize", k_dequantize},
    {"qnn.requantize", k_requantize},
    {"qnn.conv2d", k_qnn_conv2d},
    {"qnn.dense", k_qnn_dense},
    {"qnn.add", k_qnn_add},
    {"qnn.mul", k_qnn_mul},
    {NULL, NULL},
};
