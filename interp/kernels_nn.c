/* kernels_nn.c — reference kernels of the nn family: dense, matmul,
 * batch_matmul, bias_add, relu, leaky_relu, softmax, log_softmax,
 * layer_norm, batch_flatten (a view), dropout (inference), conv2d
 * (NCHW/OIHW, padding, strides, dilation, groups), max/avg pooling.
 *
 * Products and windows accumulate in double for float outputs (so results
 * are at least as accurate as a float32 BLAS; they agree with numpy within
 * a tolerance, not bit for bit) and in wrapping 64-bit integers for integer
 * outputs (exact, narrowed to out_dtype).  Matrix products first lay both
 * operands out as rows of K contiguous values, then take row · row dot
 * products, which walks memory sequentially.
 *
 * relu(x) is x > 0 ? x : 0 except that NaN stays NaN (numpy's maximum);
 * relu(-0) is +0;
 * leaky_relu is x > 0 ? x : alpha * x in the tensor's lane.  Pool windows
 * follow TVM: padding is never a value (max ignores it; a window with no
 * input element gives the dtype's lowest finite value, TVM's pad value), avg divides by the
 * window's positions inside the input, or with count_include_pad inside the padded input (positions
 * past the bottom/right padding, made by ceil_mode, are never counted).  Integer averages truncate.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/kernels.h"

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

/* ───────────────────────────── windows ───────────────────────────── */

typedef struct Win {
  int64_t k[2], s[2], d[2], pad[4]; /* pad: top, left, bottom, right */
} Win;

static bool pair(KernelCtx *kx, const Attrs *attrs, const char *key, int64_t out[2]) {
  int64_t v[8];
  int n = kattr_ints(kx, attrs, key, v, 8);
  if (!kernel_attrs_ok(kx)) return false;
  if (n != 1 && n != 2) return kernel_fail(kx, "%s: `%s` must have 1 or 2 values", kx->op, key);
  out[0] = v[0], out[1] = v[n - 1];
  return true;
}

static bool window(KernelCtx *kx, const Attrs *attrs, Win *w) {
  int64_t v[8];
  if (!pair(kx, attrs, "strides", w->s) || !pair(kx, attrs, "dilation", w->d)) return false;
  int n = kattr_ints(kx, attrs, "padding", v, 8);
  if (!kernel_attrs_ok(kx)) return false;
  if (n != 1 && n != 2 && n != 4)
    return kernel_fail(kx, "%s: padding must have 1, 2 or 4 values, got %d", kx->op, n);
  for (int i = 0; i < 4; i++) w->pad[i] = n == 4 ? v[i] : n == 2 ? v[i % 2] : v[0];
  return true;
}

static bool check_layout(KernelCtx *kx, const Attrs *attrs, const char *key, const char *want) {
  const char *l = kattr_str(kx, attrs, key);
  if (!kernel_attrs_ok(kx)) return false;
  if (!l[0] || strcmp(l, want) == 0) return true;
  return kernel_fail(kx, "%s: layout %s is not supported by the reference kernel", kx->op, l);
}

/* The outputs o in [*lo, *hi) (within [0, n)) whose input position
 * o * s + off lies in [0, size). */
static void valid_range(int64_t off, int64_t s, int64_t size, int64_t n, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = size - 1 - off < 0 ? 0 : (size - 1 - off) / s + 1;
  if (*hi > n) *hi = n;
  if (*lo > *hi) *lo = *hi;
}

/* conv2d: for each image and output channel, accumulate weight-scaled
 * shifted input planes into an output plane (rows stay sequential). */
#define CONV_PLANE(T)                                                                     \
  {                                                                                       \
    const T *xv = xl, *wv = wl;                                                           \
    T *acc = accbuf;                                                                      \
    for (int64_t i = 0; i < OH * OW; i++) acc[i] = 0;                                     \
    for (int64_t ci = 0; ci < cg; ci++) {                                                 \
      const T *xp = xv + (n * C + g * cg + ci) * H * W;                                   \
      for (int64_t a = 0; a < KH; a++)                                                    \
        for (int64_t b = 0; b < KW; b++) {                                                \
          T wt = wv[((oc * cg + ci) * KH + a) * KW + b];                                  \
          int64_t off = b * w.d[1] - w.pad[1], lo, hi;                                    \
          valid_range(off, w.s[1], W, OW, &lo, &hi);                                      \
          for (int64_t oh = 0; oh < OH; oh++) {                                           \
            int64_t h = oh * w.s[0] - w.pad[0] + a * w.d[0];                              \
            if (h < 0 || h >= H) continue;                                                \
            int64_t base = h * W + off; /* may be negative: index, not pointer */         \
            T *arow = acc + oh * OW;                                                      \
            for (int64_t ow = lo; ow < hi; ow++) arow[ow] += wt * xp[base + ow * w.s[1]]; \
          }                                                                               \
        }                                                                                 \
    }                                                                                     \
  }

static bool k_conv2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  Win w;
  int64_t groups = kattr_int(kx, attrs, "groups");
  if (!window(kx, attrs, &w) || !check_layout(kx, attrs, "data_layout", "NCHW") ||
      !check_layout(kx, attrs, "kernel_layout", "OIHW") ||
      !check_layout(kx, attrs, "out_layout", "NCHW"))
    return false;
  const RtTensor *X = in[0], *K = in[1];
  RtTensor *Y = out[0];
  int64_t N = X->shape[0], C = X->shape[1], H = X->shape[2], W = X->shape[3];
  int64_t O = K->shape[0], KH = K->shape[2], KW = K->shape[3], OH = Y->shape[2], OW = Y->shape[3];
  int64_t cg = C / groups, og = O / groups;
  Lane l = acc_lane(Y->dtype);
  void *xl = lane_array(kx, X, l), *wl = xl ? lane_array(kx, K, l) : NULL;
  void *accbuf = wl ? kernel_alloc(kx, (size_t)(OH * OW != 0 ? OH * OW : 1) * 8) : NULL;
  if (!accbuf) return free(xl), free(wl), false;
  for (int64_t n = 0; n < N; n++)
    for (int64_t oc = 0; oc < O; oc++) {
      int64_t g = oc / og;
      if (l == LANE_F64)
        CONV_PLANE(double)
      else
        CONV_PLANE(uint64_t)
      lane_store(l, Y->dtype, accbuf, Y->data, (n * O + oc) * OH * OW, OH * OW);
    }
  free(xl), free(wl), free(accbuf);
  return true;
}

/* Valid window taps along one dim: [lo, hi) of tap indices whose position
 * is inside the input; *span counts taps inside the padded input. */
static void taps(int64_t o, int64_t k, int64_t s, int64_t d, int64_t pad_lo, int64_t pad_hi,
                 int64_t size, int64_t *lo, int64_t *hi, int64_t *span) {
  int64_t start = o * s - pad_lo;
  *lo = 0, *hi = 0, *span = 0;
  bool first = true;
  for (int64_t t = 0; t < k; t++) {
    int64_t p = start + t * d;
    if (p < size + pad_hi) ++*span;
    if (p < 0 || p >= size) continue;
    if (first) *lo = t, first = false;
    *hi = t + 1;
  }
}

typedef struct PoolArgs {
  Win w;
  bool is_max, include_pad;
} PoolArgs;

#define POOL_PLANE(T, LOWEST, MAX)                                                             \
  {                                                                                            \
    const T *xp = (const T *)xl + plane * H * W;                                               \
    T *op = (T *)ol;                                                                           \
    for (int64_t oh = 0; oh < OH; oh++) {                                                      \
      int64_t h0, h1, hs, w0, w1, ws;                                                          \
      taps(oh, p->w.k[0], p->w.s[0], p->w.d[0], p->w.pad[0], p->w.pad[2], H, &h0, &h1, &hs);   \
      for (int64_t ow = 0; ow < OW; ow++) {                                                    \
        taps(ow, p->w.k[1], p->w.s[1], p->w.d[1], p->w.pad[1], p->w.pad[3], W, &w0, &w1, &ws); \
        T acc = 0;                                                                             \
        int64_t cnt = 0;                                                                       \
        for (int64_t a = h0; a < h1; a++) {                                                    \
          int64_t h = oh * p->w.s[0] - p->w.pad[0] + a * p->w.d[0];                            \
          if (h < 0 || h >= H) continue;                                                       \
          for (int64_t b = w0; b < w1; b++) {                                                  \
            int64_t x = ow * p->w.s[1] - p->w.pad[1] + b * p->w.d[1];                          \
            if (x < 0 || x >= W) continue;                                                     \
            T v = xp[h * W + x];                                                               \
            cnt++;                                                                             \
            if (!p->is_max)                                                                    \
              acc += v;                                                                        \
            else                                                                               \
              acc = cnt == 1 ? v : MAX(acc, v);                                                \
          }                                                                                    \
        }                                                                                      \
        if (p->is_max && cnt == 0) acc = LOWEST;                                               \
        if (!p->is_max) {                                                                      \
          int64_t div = p->include_pad ? hs * ws : cnt;                                        \
          acc = div ? (T)(acc / (T)div) : 0;                                                   \
        }                                                                                      \
        op[oh * OW + ow] = acc;                                                                \
      }                                                                                        \
    }                                                                                          \
  }

#define FMAX(a, b) kernel_fmax(a, b)
#define IMAX(a, b) ((b) > (a) ? (b) : (a))

/* The dtype's lowest finite value (TVM's padding of max pools) in lane l. */
static LaneVal lowest_of(DType dt, Lane l) {
  LaneVal v;
  int bits = dtype_bytes(dt) * 8;
  if (l == LANE_I64)
    v.i = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  else if (l == LANE_U64)
    v.u = 0;
  else if (l == LANE_F32)
    v.f = dt == DT_FLOAT16 ? -65504.0f : -FLT_MAX;
  else
    v.d = -DBL_MAX;
  return v;
}

/* 2-D max or average pooling, one (batch, channel) plane at a time; an
 * average sums in a wide lane (double or int64) whatever the dtype. */
static bool pool(KernelCtx *kx, const RtTensor *X, RtTensor *Y, const PoolArgs *p) {
  int64_t H = X->shape[2], W = X->shape[3], OH = Y->shape[2], OW = Y->shape[3];
  int64_t planes = X->shape[0] * X->shape[1];
  Lane l = kernel_lane(X->dtype);
  if (!p->is_max) l = dtype_is_float(X->dtype) ? LANE_F64 : LANE_I64;
  LaneVal lowest = lowest_of(X->dtype, l);
  void *xl = lane_array(kx, X, l);
  void *ol = xl ? kernel_alloc(kx, (size_t)(OH * OW != 0 ? OH * OW : 1) * 8) : NULL;
  if (!ol) return free(xl), false;
  for (int64_t plane = 0; plane < planes; plane++) {
    switch (l) {
      case LANE_F32:
        POOL_PLANE(float, lowest.f, FMAX) break;
      case LANE_F64:
        POOL_PLANE(double, lowest.d, FMAX) break;
      case LANE_I64:
        POOL_PLANE(int64_t, lowest.i, IMAX) break;
      case LANE_U64:
        POOL_PLANE(uint64_t, lowest.u, IMAX) break;
    }
    lane_store(l, Y->dtype, ol, Y->data, plane * OH * OW, OH * OW);
  }
  free(xl), free(ol);
  return true;
}

static bool pool_attrs(KernelCtx *kx, const Attrs *attrs, PoolArgs *p) {
  return pair(kx, attrs, "pool_size", p->w.k) && window(kx, attrs, &p->w) &&
         check_layout(kx, attrs, "layout", "NCHW") && check_layout(kx, attrs, "out_layout", "NCHW");
}

static bool k_max_pool2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  PoolArgs p = {.is_max = true};
  return pool_attrs(kx, attrs, &p) && pool(kx, in[0], out[0], &p);
}

static bool k_avg_pool2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  PoolArgs p = {.is_max = false};
  p.include_pad = kattr_bool(kx, attrs, "count_include_pad");
  return pool_attrs(kx, attrs, &p) && pool(kx, in[0], out[0], &p);
}

const KernelDef kernels_family_nn[] = {
    {"nn.dense", k_dense},
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
    {"nn.conv2d", k_conv2d},
    {"nn.max_pool2d", k_max_pool2d},
    {"nn.avg_pool2d", k_avg_pool2d},
    {NULL, NULL},
};
