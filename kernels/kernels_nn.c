/* kernels_nn.c — reference kernels of the nn family: dense, matmul,
 * batch_matmul, bias_add, relu, leaky_relu, prelu, softmax (and
 * fast_softmax, float32 as TVM's with fast_exp), log_softmax, layer_norm, batch_norm,
 * instance_norm, group_norm, l2_normalize, lrn, batch_flatten (a view),
 * dropout (inference), cross_entropy(_with_logits) and nll_loss.
 * Convolutions are in kernels_nn_conv.c, pools in kernels_nn_pool.c, pads
 * and layout moves in kernels_nn_layout.c.
 *
 * Products accumulate in double for float outputs (so results are at least
 * as accurate as a float32 BLAS; they agree with numpy within a tolerance,
 * not bit for bit) and in wrapping 64-bit integers for integer outputs
 * (exact, narrowed to out_dtype).  Matrix products first lay both operands
 * out as rows of K contiguous values, then take row · row dot products,
 * which walks memory sequentially.  Normalizations and losses compute in
 * double and round once.
 *
 * relu(x) is x > 0 ? x : 0 except that NaN stays NaN (numpy's maximum);
 * relu(-0) is +0; leaky_relu is x > 0 ? x : alpha * x and prelu
 * x > 0 ? x : x * alpha[c] in the tensor's lane.  Normalizations use the
 * biased variance, as TVM does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/fast_math.h"

enum { BLK = KBLK };

/* Compute lane of a product/window kernel: double or wrapping uint64. */
static Lane acc_lane(DType out) { return dtype_is_float(out) ? LANE_F64 : LANE_U64; }

/* ───────────────────────── matrix products ───────────────────────── */

/* Copies an (rows x cols) matrix held in lane l (8-byte elements) into its
 * transpose. */
static void transpose8(const uint64_t *src, int64_t rows, int64_t cols, uint64_t *dst) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
}

/* out[i, j] = sum_k a[i, k] * b[j, k] for a (m x k) and b (n x k).  Four
 * columns at a time: four independent sums (each still in k order, so the
 * result does not depend on the blocking) share each load of a's row. */
#define DOT_ROWS(T)                                                           \
  {                                                                           \
    const T *x = a, *w = b;                                                   \
    T *o = out;                                                               \
    for (int64_t i = 0; i < m; i++) {                                         \
      const T *xr = x + i * k;                                                \
      int64_t j = 0;                                                          \
      for (; j + 4 <= n; j += 4) {                                            \
        const T *w0 = w + j * k, *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;    \
        T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                     \
        for (int64_t q = 0; q < k; q++) {                                     \
          T v = xr[q];                                                        \
          s0 += v * w0[q], s1 += v * w1[q], s2 += v * w2[q], s3 += v * w3[q]; \
        }                                                                     \
        o[i * n + j] = s0, o[i * n + j + 1] = s1;                             \
        o[i * n + j + 2] = s2, o[i * n + j + 3] = s3;                         \
      }                                                                       \
      for (; j < n; j++) {                                                    \
        T s = 0;                                                              \
        for (int64_t q = 0; q < k; q++) s += xr[q] * w[j * k + q];            \
        o[i * n + j] = s;                                                     \
      }                                                                       \
    }                                                                         \
  }

static void dot_rows(Lane l, const void *a, const void *b, int64_t m, int64_t n, int64_t k,
                     void *out) {
  if (l == LANE_F64)
    DOT_ROWS(double)
  else
    DOT_ROWS(uint64_t)
}

/* Batched a (ba x m x k) · b (bb x n x k)ᵀ → out (max(ba, bb) x m x n);
 * a batch of 1 broadcasts. */
static bool batched_dot(KernelCtx *kx, Lane l, const uint64_t *a, int64_t ba, const uint64_t *b,
                        int64_t bb, int64_t m, int64_t n, int64_t k, RtTensor *out) {
  int64_t nb = ba > bb ? ba : bb;
  uint64_t *o = kernel_alloc(kx, (size_t)(m * n != 0 ? m * n : 1) * 8);
  if (!o) return false;
  for (int64_t t = 0; t < nb; t++) {
    dot_rows(l, a + (ba == 1 ? 0 : t) * m * k, b + (bb == 1 ? 0 : t) * n * k, m, n, k, o);
    lane_store(l, out->dtype, o, out->data, t * m * n, m * n);
  }
  free(o);
  return true;
}

/* Loads x as lane l; when `trans`, each of its `batch` trailing (r x c)
 * matrices is transposed, so the result always has K innermost. */
static uint64_t *operand(KernelCtx *kx, const RtTensor *x, Lane l, int64_t batch, int64_t r,
                         int64_t c, bool trans) {
  uint64_t *v = lane_array(kx, x, l);
  if (!v || !trans || r * c == 0) return v;
  uint64_t *t = kernel_alloc(kx, (size_t)x->numel * 8);
  if (t)
    for (int64_t i = 0; i < batch; i++) transpose8(v + i * r * c, r, c, t + i * r * c);
  free(v);
  return t;
}

static bool matmul_core(KernelCtx *kx, const RtTensor *a, const RtTensor *b, bool ta, bool tb,
                        int64_t ba, int64_t bb, RtTensor *out) {
  Lane l = acc_lane(out->dtype);
  int64_t ar = a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
  int64_t br = b->shape[b->ndim - 2], bc = b->shape[b->ndim - 1];
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  uint64_t *av = operand(kx, a, l, ba, ar, ac, ta);
  uint64_t *bv = av ? operand(kx, b, l, bb, br, bc, !tb) : NULL; /* b as (n x k) */
  bool ok = av && bv && batched_dot(kx, l, av, ba, bv, bb, m, n, k, out);
  free(av), free(bv);
  return ok;
}

static bool k_dense(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  const RtTensor *x = in[0], *w = in[1];
  int64_t k = x->shape[x->ndim - 1], m = k ? x->numel / k : 0;
  if (!k) m = out[0]->numel / (w->shape[0] ? w->shape[0] : 1);
  RtTensor x2 = *x; /* x as (m x k) */
  x2.ndim = 2, x2.shape[0] = m, x2.shape[1] = k;
  return matmul_core(kx, &x2, w, false, true, 1, 1, out[0]);
}

/* nn.contrib_dense_pack: the panels (NB, K, n) unpacked to a (units, K)
 * weight, then nn.dense's own product (the same sums in the same order). */
static bool k_dense_pack(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  const RtTensor *x = in[0], *w = in[1];
  int64_t k = w->shape[1], n = w->shape[2], units = out[0]->shape[out[0]->ndim - 1];
  size_t eb = (size_t)dtype_bytes(w->dtype);
  int64_t shape[2] = {units, k};
  RtTensor *wt = rt_tensor_new(w->dtype, 2, shape, kx->err, sizeof kx->err);
  if (!wt) return false;
  const char *src = w->data;
  char *dst = wt->data;
  for (int64_t j = 0; j < units; j++)
    for (int64_t q = 0; q < k; q++)
      memcpy(dst + (size_t)(j * k + q) * eb, src + (size_t)(((j / n) * k + q) * n + j % n) * eb,
             eb);
  int64_t m = k ? x->numel / k : out[0]->numel / (units ? units : 1);
  RtTensor x2 = *x; /* x as (m x k) */
  x2.ndim = 2, x2.shape[0] = m, x2.shape[1] = k;
  bool ok = matmul_core(kx, &x2, wt, false, true, 1, 1, out[0]);
  rt_tensor_release(wt);
  return ok;
}

static bool k_matmul(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  bool ta = kattr_bool(kx, attrs, "transpose_a"), tb = kattr_bool(kx, attrs, "transpose_b");
  if (!kernel_attrs_ok(kx)) return false;
  RtTensor a2 = *in[0];
  if (a2.ndim == 1) { /* a vector is one row */
    a2.ndim = 2, a2.shape[1] = a2.shape[0], a2.shape[0] = 1;
  }
  /* Leading dims of a are batch dims of a shared b: fold them into rows
   * unless a is transposed. */
  int64_t r = a2.shape[a2.ndim - 2], c = a2.shape[a2.ndim - 1],
          batch = r * c != 0 ? a2.numel / (r * c) : 0;
  if (!ta) {
    a2.shape[0] = batch * r, a2.shape[1] = c, a2.ndim = 2;
    return matmul_core(kx, &a2, in[1], false, tb, 1, 1, out[0]);
  }
  Lane l = acc_lane(out[0]->dtype);
  int64_t br = in[1]->shape[0], bc = in[1]->shape[1], n = tb ? br : bc;
  uint64_t *av = operand(kx, &a2, l, batch, r, c, true);
  uint64_t *bv = av ? operand(kx, in[1], l, 1, br, bc, !tb) : NULL;
  bool ok = av && bv;
  for (int64_t t = 0; ok && t < batch; t++) {
    RtTensor o = *out[0];
    o.data = (char *)out[0]->data + (size_t)(t * c * n) * (size_t)dtype_bytes(o.dtype);
    ok = batched_dot(kx, l, av + t * r * c, 1, bv, 1, c, n, r, &o);
  }
  free(av), free(bv);
  return ok;
}

static bool k_batch_matmul(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  bool ta = kattr_bool(kx, attrs, "transpose_a"), tb = kattr_bool(kx, attrs, "transpose_b");
  if (!kernel_attrs_ok(kx)) return false;
  return matmul_core(kx, in[0], in[1], ta, tb, in[0]->shape[0], in[1]->shape[0], out[0]);
}

/* ───────────────────────── elementwise-ish ───────────────────────── */

#define BIAS_ROW(T, M)                              \
  {                                                 \
    T bv = ((const T *)bias)[c];                    \
    for (int64_t i = 0; i < m; i++) buf.M[i] += bv; \
  }                                                 \
  break;

static bool k_bias_add(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  Lane l = kernel_lane(x->dtype);
  if (l == LANE_I64) l = LANE_U64; /* wrapping add */
  int64_t ch = x->shape[axis], inner = 1;
  LaneBlock buf;
  for (int i = axis + 1; i < x->ndim; i++) inner *= x->shape[i];
  void *bias = lane_array(kx, in[1], l);
  if (!bias) return false;
  for (int64_t base = 0; base < x->numel; base += inner) {
    int64_t c = (base / inner) % ch;
    for (int64_t j = 0; j < inner; j += BLK) {
      int64_t m = inner - j < BLK ? inner - j : BLK;
      lane_load(l, x->dtype, x->data, base + j, 1, m, &buf);
      switch (l) {
        case LANE_F32:
          BIAS_ROW(float, f)
        case LANE_F64:
          BIAS_ROW(double, d)
        default:
          BIAS_ROW(uint64_t, u)
      }
      lane_store(l, x->dtype, &buf, out[0]->data, base + j, m);
    }
  }
  free(bias);
  return true;
}

/* relu: x > 0 ? x : 0, NaN stays; leaky: x > 0 ? x : alpha * x. */
#define ACT_LOOP(T, M)                                                                            \
  {                                                                                               \
    T *v = buf.M;                                                                                 \
    for (int64_t i = 0; i < m; i++)                                                               \
      v[i] = leaky ? (v[i] > 0 ? v[i] : (T)alpha * v[i]) : (v[i] > 0 || v[i] != v[i] ? v[i] : 0); \
  }                                                                                               \
  break;

/* relu and leaky_relu in the dtype's lane.  alpha is first rounded to the
 * dtype (float16 included), so the result matches a multiply by a constant
 * of that dtype. */
static bool activation(KernelCtx *kx, const RtTensor *x, RtTensor *out, bool leaky, double alpha) {
  Lane l = kernel_lane(x->dtype);
  if (leaky && l != LANE_F32 && l != LANE_F64) l = LANE_F64;
  if (leaky && l == LANE_F32) { /* alpha as a constant of the dtype (float16 rounds it) */
    LaneVal bits, a;
    lane_store(LANE_F64, x->dtype, &alpha, &bits, 0, 1);
    lane_load(LANE_F32, x->dtype, &bits, 0, 1, 1, &a);
    alpha = a.f;
  }
  LaneBlock buf;
  for (int64_t j = 0; j < x->numel; j += BLK) {
    int64_t m = x->numel - j < BLK ? x->numel - j : BLK;
    lane_load(l, x->dtype, x->data, j, 1, m, &buf);
    switch (l) {
      case LANE_F32:
        ACT_LOOP(float, f)
      case LANE_F64:
        ACT_LOOP(double, d)
      case LANE_I64:
        ACT_LOOP(int64_t, i)
      case LANE_U64:
        break;
    }
    lane_store(l, out->dtype, &buf, out->data, j, m);
  }
  return true;
}

static bool k_relu(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  return activation(kx, in[0], out[0], false, 0);
}

static bool k_leaky_relu(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  double alpha = kattr_float(kx, attrs, "alpha");
  return kernel_attrs_ok(kx) && activation(kx, in[0], out[0], true, alpha);
}

/* ─────────────────────── softmax, layer_norm ─────────────────────── */

/* Calls f on every line of x along `axis`, loaded as doubles: the line has
 * n elements; f writes its n results back into the same array. */
typedef void (*LineFn)(double *v, int64_t n, const void *user);

static bool per_line(KernelCtx *kx, const RtTensor *x, int axis, RtTensor *out, LineFn f,
                     const void *user) {
  int64_t n = x->shape[axis], inner = 1;
  for (int i = axis + 1; i < x->ndim; i++) inner *= x->shape[i];
  int64_t outer = n * inner != 0 ? x->numel / (n * inner) : 0;
  double *v = kernel_alloc(kx, (size_t)(n ? n : 1) * sizeof(double));
  if (!v) return false;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i;
      lane_load(LANE_F64, x->dtype, x->data, base, inner, n, v);
      f(v, n, user);
      if (inner == 1)
        lane_store(LANE_F64, out->dtype, v, out->data, base, n);
      else
        for (int64_t j = 0; j < n; j++)
          lane_store(LANE_F64, out->dtype, &v[j], out->data, base + j * inner, 1);
    }
  free(v);
  return true;
}

static double line_max(const double *v, int64_t n) {
  double m = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (v[i] > m || isnan(v[i])) m = v[i];
  return m;
}

static void softmax_line(double *v, int64_t n, const void *user) {
  bool log_ = *(const bool *)user;
  double m = line_max(v, n), s = 0; /* an infinite max gives NaN, as x - max does in TVM */
  for (int64_t i = 0; i < n; i++) s += exp(v[i] - m);
  for (int64_t i = 0; i < n; i++) v[i] = log_ ? (v[i] - m) - log(s) : exp(v[i] - m) / s;
}

static bool softmax(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                    bool log_) {
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  return per_line(kx, in[0], axis, out, softmax_line, &log_);
}

static bool k_softmax(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  return softmax(kx, in, attrs, out[0], false);
}

/* nn.fast_softmax on float32 (lower/compute/compute_nn.c's rule, operation for
 * operation): the maximum and the float32 sum of e = fast_expf(x - max) in
 * SOFTMAX_LANES interleaved partials combined in order, then e / sum.
 * Values arrive as doubles holding float32s. */
static void fast_softmax_line(double *v, int64_t n, const void *user) {
  (void)user;
  float mp[SOFTMAX_LANES], sp[SOFTMAX_LANES], m = -INFINITY, s = 0;
  for (int j = 0; j < SOFTMAX_LANES; j++) mp[j] = -INFINITY, sp[j] = 0;
  for (int64_t i = 0; i < n; i++) {
    float x = (float)v[i], *p = &mp[i % SOFTMAX_LANES];
    if (x > *p || isnan(x)) *p = x;
  }
  for (int j = 0; j < SOFTMAX_LANES; j++)
    if (mp[j] > m || isnan(mp[j])) m = mp[j];
  for (int64_t i = 0; i < n; i++) v[i] = fast_expf((float)v[i] - m);
  for (int64_t i = 0; i < n; i++) sp[i % SOFTMAX_LANES] += (float)v[i];
  for (int j = 0; j < SOFTMAX_LANES; j++) s += sp[j];
  for (int64_t i = 0; i < n; i++) v[i] = (float)v[i] / s;
}

static bool k_fast_softmax(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  if (in[0]->dtype != DT_FLOAT32) return softmax(kx, in, attrs, out[0], false);
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  return per_line(kx, in[0], axis, out[0], fast_softmax_line, NULL);
}

static bool k_log_softmax(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  return softmax(kx, in, attrs, out[0], true);
}

typedef struct NormParams {
  double eps;
  const double *gamma, *beta; /* NULL when scale / center is off */
} NormParams;

static void norm_line(double *v, int64_t n, const void *user) {
  const NormParams *p = user;
  double mean = 0, var = 0;
  for (int64_t i = 0; i < n; i++) mean += v[i];
  mean /= (double)n;
  for (int64_t i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean);
  var /= (double)n;
  double r = 1 / sqrt(var + p->eps);
  for (int64_t i = 0; i < n; i++) {
    v[i] = (v[i] - mean) * r;
    if (p->gamma) v[i] *= p->gamma[i];
    if (p->beta) v[i] += p->beta[i];
  }
}

static bool k_layer_norm(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  NormParams p = {kattr_float(kx, attrs, "epsilon"), NULL, NULL};
  bool scale = kattr_bool(kx, attrs, "scale"), center = kattr_bool(kx, attrs, "center");
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  double *g = lane_array(kx, in[1], LANE_F64), *b = g ? lane_array(kx, in[2], LANE_F64) : NULL;
  bool ok = b != NULL;
  if (ok) {
    p.gamma = scale ? g : NULL, p.beta = center ? b : NULL;
    ok = per_line(kx, in[0], axis, out[0], norm_line, &p);
  }
  free(g), free(b);
  return ok;
}

/* ─────────────────────── views and dropout ─────────────────────── */

/* Inference dropout (one argument): y = x and a mask of ones. */
static bool k_dropout(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  if (nin != 1 || nout != 2)
    return kernel_fail(kx, "nn.dropout: only the one-argument (inference) form has a kernel here");
  if (in[0]->numel) memcpy(out[0]->data, in[0]->data, rt_tensor_nbytes(in[0]));
  double one = 1;
  uint64_t bits[1];
  lane_store(LANE_F64, out[1]->dtype, &one, bits, 0, 1);
  size_t es = (size_t)dtype_bytes(out[1]->dtype);
  for (int64_t i = 0; i < out[1]->numel; i++)
    memcpy((char *)out[1]->data + (size_t)i * es, bits, es);
  return true;
}

/* ─────────────────────── normalizations ─────────────────────── */

/* The channel (index along `axis`) of each element, walking x in order:
 * elements come in runs of `inner` with the same channel. */
typedef struct Chan {
  int64_t ch, inner;
} Chan;

static Chan chan_of(const RtTensor *x, int axis) {
  Chan c = {x->shape[axis], 1};
  for (int i = axis + 1; i < x->ndim; i++) c.inner *= x->shape[i];
  return c;
}

static int64_t chan_at(Chan c, int64_t i) { return c.ch ? i / c.inner % c.ch : 0; }

/* Loads the given 1-D parameters as doubles (NULL entries stay NULL). */
static bool load_params(KernelCtx *kx, RtTensor *const *in, int first, int n, double **out) {
  for (int i = 0; i < n; i++) out[i] = NULL;
  for (int i = 0; i < n; i++)
    if (!(out[i] = lane_array(kx, in[first + i], LANE_F64))) {
      for (int j = 0; j < i; j++) free(out[j]);
      return false;
    }
  return true;
}

/* Inference batch_norm: (x - mean) / sqrt(var + eps) * gamma + beta per
 * channel; the moving statistics are returned unchanged. */
static bool k_batch_norm(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  double eps = kattr_float(kx, attrs, "epsilon");
  bool center = kattr_bool(kx, attrs, "center"), scale = kattr_bool(kx, attrs, "scale");
  double *p[4]; /* gamma, beta, mean, var */
  if (axis < 0 || !kernel_attrs_ok(kx) || !load_params(kx, in, 1, 4, p)) return false;
  double *v = lane_array(kx, x, LANE_F64);
  if (v) {
    Chan c = chan_of(x, axis);
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t k = chan_at(c, i);
      double y = (v[i] - p[2][k]) / sqrt(p[3][k] + eps);
      v[i] = (scale ? y * p[0][k] : y) + (center ? p[1][k] : 0);
    }
    lane_store(LANE_F64, out[0]->dtype, v, out[0]->data, 0, x->numel);
    for (int j = 1; j <= 2; j++)
      if (in[2 + j]->numel) memcpy(out[j]->data, in[2 + j]->data, rt_tensor_nbytes(in[2 + j]));
  }
  for (int i = 0; i < 4; i++) free(p[i]);
  free(v);
  return v != NULL;
}

/* Normalizes the elements of x by groups: key(i) names the group of
 * element i (nkeys of them); each group gets its own mean and (biased)
 * variance, then y = (x - mean) / sqrt(var + eps), scaled by gamma and
 * shifted by beta of the element's channel when set. */
typedef int64_t (*KeyFn)(const int64_t *idx, const void *user);

typedef struct GroupNorm {
  KeyFn key;
  const void *user;
  int64_t nkeys;
  int axis;
  double eps;
  const double *gamma, *beta;
} GroupNorm;

/* The three passes: group sums and counts, means and squared deviations,
 * then the normalized, scaled and shifted values. */
static bool group_normalize(KernelCtx *kx, const RtTensor *x, RtTensor *y, const GroupNorm *g) {
  double *v = lane_array(kx, x, LANE_F64);
  double *st = v ? kernel_alloc(kx, (size_t)(g->nkeys ? g->nkeys : 1) * 3 * sizeof(double)) : NULL;
  int64_t *key = st ? kernel_alloc(kx, (size_t)(x->numel ? x->numel : 1) * sizeof(int64_t)) : NULL;
  if (!key) return free(v), free(st), false;
  double *sum = st, *sq = st + g->nkeys, *cnt = st + 2 * g->nkeys;
  memset(st, 0, (size_t)g->nkeys * 3 * sizeof(double));
  int64_t idx[TENSOR_MAX_RANK] = {0};
  for (int64_t i = 0; i < x->numel; i++) {
    key[i] = g->key(idx, g->user);
    sum[key[i]] += v[i], cnt[key[i]] += 1;
    for (int d = x->ndim - 1; d >= 0 && ++idx[d] == x->shape[d]; d--) idx[d] = 0;
  }
  for (int64_t k = 0; k < g->nkeys; k++) sum[k] = cnt[k] ? sum[k] / cnt[k] : 0;
  for (int64_t i = 0; i < x->numel; i++) sq[key[i]] += (v[i] - sum[key[i]]) * (v[i] - sum[key[i]]);
  Chan c = chan_of(x, g->axis);
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t k = key[i], ch = chan_at(c, i);
    double r = (v[i] - sum[k]) / sqrt(sq[k] / cnt[k] + g->eps);
    v[i] = (g->gamma ? r * g->gamma[ch] : r) + (g->beta ? g->beta[ch] : 0);
  }
  lane_store(LANE_F64, y->dtype, v, y->data, 0, x->numel);
  free(v), free(st), free(key);
  return true;
}

typedef struct NormKey {
  const RtTensor *x;
  int axis;
  int64_t per_group; /* group_norm: channels per group */
  int64_t groups;
} NormKey;

/* instance_norm: one group per (batch index, channel). */
static int64_t instance_key(const int64_t *idx, const void *user) {
  const NormKey *k = user;
  return k->axis == 0 ? idx[0] : idx[0] * k->x->shape[k->axis] + idx[k->axis];
}

/* group_norm: one group per (index over the axes before `axis`, channel group). */
static int64_t group_key(const int64_t *idx, const void *user) {
  const NormKey *k = user;
  int64_t outer = 0;
  for (int d = 0; d < k->axis; d++) outer = outer * k->x->shape[d] + idx[d];
  return outer * k->groups + idx[k->axis] / k->per_group;
}

/* instance_norm and group_norm: the attributes, gamma and beta, the keys. */
static bool norm_by_key(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                        bool groups) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  NormKey nk = {x, axis, 1, 1};
  GroupNorm g = {.axis = axis, .eps = kattr_float(kx, attrs, "epsilon"), .user = &nk};
  bool center = kattr_bool(kx, attrs, "center"), scale = kattr_bool(kx, attrs, "scale");
  if (groups) nk.groups = kattr_int(kx, attrs, "num_groups");
  double *p[2];
  if (axis < 0 || !kernel_attrs_ok(kx) || !load_params(kx, in, 1, 2, p)) return false;
  int64_t outer = 1;
  for (int d = 0; d < axis; d++) outer *= x->shape[d];
  if (groups) {
    nk.per_group = x->shape[axis] / nk.groups, g.key = group_key, g.nkeys = outer * nk.groups;
  } else {
    g.key = instance_key, g.nkeys = axis == 0 ? x->shape[0] : x->shape[0] * x->shape[axis];
  }
  g.gamma = scale ? p[0] : NULL, g.beta = center ? p[1] : NULL;
  bool ok = nk.per_group > 0 ? group_normalize(kx, x, out, &g) : true;
  free(p[0]), free(p[1]);
  return ok;
}

static bool k_instance_norm(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  return norm_by_key(kx, in, attrs, out[0], false);
}

static bool k_group_norm(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  return norm_by_key(kx, in, attrs, out[0], true);
}

/* l2_normalize: x / sqrt(max(sum of x * x over the axes, eps)); the sums
 * are keyed by the index over the other axes. */
static bool k_l2_normalize(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  const RtTensor *x = in[0];
  int64_t ax[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], kst[TENSOR_MAX_RANK];
  int n = kattr_ints(kx, attrs, "axis", ax, TENSOR_MAX_RANK);
  double eps = kattr_float(kx, attrs, "eps");
  bool reduced[TENSOR_MAX_RANK] = {0};
  if (!kernel_attrs_ok(kx)) return false;
  for (int i = 0; i < n; i++) {
    int a = kernel_axis(kx, ax[i], x->ndim);
    if (a < 0) return false;
    reduced[a] = true;
  }
  int64_t keep[TENSOR_MAX_RANK], nkeys = 1;
  for (int d = 0; d < x->ndim; d++) keep[d] = reduced[d] ? 1 : x->shape[d], nkeys *= keep[d];
  kernel_strides(x->ndim, keep, kst);
  for (int d = 0; d < x->ndim; d++) st[d] = reduced[d] ? 0 : kst[d];
  double *v = lane_array(kx, x, LANE_F64);
  double *sum = v ? kernel_alloc(kx, (size_t)(nkeys ? nkeys : 1) * sizeof(double)) : NULL;
  if (!sum) return free(v), false;
  memset(sum, 0, (size_t)nkeys * sizeof(double));
  for (int pass = 0; pass < 2; pass++) {
    int64_t idx[TENSOR_MAX_RANK] = {0};
    for (int64_t i = 0; i < x->numel; i++) {
      int64_t k = 0;
      for (int d = 0; d < x->ndim; d++) k += idx[d] * st[d];
      if (pass == 0)
        sum[k] += v[i] * v[i];
      else
        v[i] /= sqrt(sum[k] > eps ? sum[k] : eps);
      for (int d = x->ndim - 1; d >= 0 && ++idx[d] == x->shape[d]; d--) idx[d] = 0;
    }
  }
  lane_store(LANE_F64, out[0]->dtype, v, out[0]->data, 0, x->numel);
  free(v), free(sum);
  return true;
}

/* lrn: x / (bias + alpha * s / size)^beta, s the sum of squares over the
 * `size` channels centered at the element's (zero outside). */
static bool k_lrn(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                  RtTensor *const *out) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  int64_t size = kattr_int(kx, attrs, "size");
  double bias = kattr_float(kx, attrs, "bias"), alpha = kattr_float(kx, attrs, "alpha");
  double beta = kattr_float(kx, attrs, "beta");
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  double *v = lane_array(kx, x, LANE_F64);
  double *o = v ? kernel_alloc(kx, (size_t)(x->numel ? x->numel : 1) * sizeof(double)) : NULL;
  if (!o) return free(v), false;
  Chan c = chan_of(x, axis);
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t ch = chan_at(c, i), base = i - ch * c.inner;
    double s = 0;
    for (int64_t k = ch - size / 2; k < ch - size / 2 + size; k++)
      if (k >= 0 && k < c.ch) s += v[base + k * c.inner] * v[base + k * c.inner];
    o[i] = v[i] / pow(bias + alpha * s / (double)size, beta);
  }
  lane_store(LANE_F64, out[0]->dtype, o, out[0]->data, 0, x->numel);
  free(v), free(o);
  return true;
}

/* prelu: x > 0 ? x : x * alpha[c] in the dtype's lane (NaN stays NaN;
 * integer products wrap). */
#define PRELU_LOOP(T, M, MUL)                                \
  {                                                          \
    const T *a = al;                                         \
    for (int64_t i = 0; i < m; i++) {                        \
      T v = buf.M[i];                                        \
      if (!(v > 0)) buf.M[i] = MUL(v, a[chan_at(c, j + i)]); \
    }                                                        \
  }                                                          \
  break;
#define FMUL(a, b) ((a) * (b))
#define WRAP_MUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

static bool k_prelu(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  Lane l = kernel_lane(x->dtype);
  void *al = lane_array(kx, in[1], l);
  if (!al) return false;
  Chan c = chan_of(x, axis);
  LaneBlock buf;
  for (int64_t j = 0; j < x->numel; j += BLK) {
    int64_t m = x->numel - j < BLK ? x->numel - j : BLK;
    lane_load(l, x->dtype, x->data, j, 1, m, &buf);
    switch (l) {
      case LANE_F32:
        PRELU_LOOP(float, f, FMUL)
      case LANE_F64:
        PRELU_LOOP(double, d, FMUL)
      case LANE_I64:
        PRELU_LOOP(int64_t, i, WRAP_MUL)
      case LANE_U64:
        PRELU_LOOP(uint64_t, u, FMUL)
    }
    lane_store(l, x->dtype, &buf, out[0]->data, j, m);
  }
  free(al);
  return true;
}

/* ───────────────────────────── losses ───────────────────────────── */

/* -sum(f(x) * y) / batch, f = log or the identity, summed in double. */
static bool cross_entropy(KernelCtx *kx, RtTensor *const *in, RtTensor *out, bool logits) {
  double *x = lane_array(kx, in[0], LANE_F64), *y = x ? lane_array(kx, in[1], LANE_F64) : NULL;
  if (!y) return free(x), false;
  double s = 0;
  for (int64_t i = 0; i < in[0]->numel; i++) s += (logits ? x[i] : log(x[i])) * y[i];
  double r = -s / (double)in[0]->shape[0];
  lane_store(LANE_F64, out->dtype, &r, out->data, 0, 1);
  free(x), free(y);
  return true;
}

static bool k_cross_entropy(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  return cross_entropy(kx, in, out[0], false);
}

static bool k_cross_entropy_with_logits(KernelCtx *kx, int nin, RtTensor *const *in,
                                        const Attrs *attrs, int nout, RtTensor *const *out) {
  return cross_entropy(kx, in, out[0], true);
}

/* nll_loss: -pred[n, t, d...] * w[t] per target t (0 where t is
 * ignore_index), then none / sum / mean (the sum over the sum of the
 * weights used).  A target outside the classes is an error. */
static bool k_nll_loss(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  const RtTensor *p = in[0], *t = in[1];
  const char *red = kattr_str(kx, attrs, "reduction");
  int64_t ignore = kattr_int(kx, attrs, "ignore_index");
  if (!kernel_attrs_ok(kx)) return false;
  int64_t C = p->shape[1], inner = 1;
  for (int d = 2; d < p->ndim; d++) inner *= p->shape[d];
  double *pv = lane_array(kx, p, LANE_F64), *w = pv ? lane_array(kx, in[2], LANE_F64) : NULL;
  int64_t *tv = w ? lane_array(kx, t, LANE_I64) : NULL;
  double *o = tv ? kernel_alloc(kx, (size_t)(t->numel ? t->numel : 1) * sizeof(double)) : NULL;
  bool ok = o != NULL;
  double sum = 0, wsum = 0;
  for (int64_t i = 0; ok && i < t->numel; i++) {
    int64_t c = tv[i], n = i / (inner ? inner : 1), r = i - n * inner;
    o[i] = 0;
    if (c == ignore) continue;
    if (c < 0 || c >= C) {
      ok = kernel_fail(kx, "nn.nll_loss: target %lld is out of range for %lld classes",
                       (long long)c, (long long)C);
      break;
    }
    o[i] = -pv[(n * C + c) * inner + r] * w[c];
    sum += o[i], wsum += w[c];
  }
  if (ok && strcmp(red, "none") == 0) {
    lane_store(LANE_F64, out[0]->dtype, o, out[0]->data, 0, t->numel);
  } else if (ok) {
    double r = strcmp(red, "sum") == 0 ? sum : sum / wsum;
    lane_store(LANE_F64, out[0]->dtype, &r, out[0]->data, 0, 1);
  }
  free(pv), free(w), free(tv), free(o);
  return ok;
}

const KernelDef kernels_family_nn[] = {
    {"nn.dense", k_dense},
    {"nn.contrib_dense_pack", k_dense_pack},
    {"nn.matmul", k_matmul},
    {"nn.batch_matmul", k_batch_matmul},
    {"nn.bias_add", k_bias_add},
    {"nn.relu", k_relu},
    {"nn.leaky_relu", k_leaky_relu},
    {"nn.softmax", k_softmax},
    {"nn.log_softmax", k_log_softmax},
    {"nn.layer_norm", k_layer_norm},
    {"nn.batch_flatten", kernel_copy_view},
    {"nn.dropout", k_dropout},
    {"nn.batch_norm", k_batch_norm},
    {"nn.instance_norm", k_instance_norm},
    {"nn.group_norm", k_group_norm},
    {"nn.l2_normalize", k_l2_normalize},
    {"nn.lrn", k_lrn},
    {"nn.prelu", k_prelu},
    {"nn.fast_softmax", k_fast_softmax},
    {"nn.cross_entropy", k_cross_entropy},
    {"nn.cross_entropy_with_logits", k_cross_entropy_with_logits},
    {"nn.nll_loss", k_nll_loss},
    {NULL, NULL},
};
