/* kernels_numeric.c — reference kernels of the numeric family
 * (ops/numeric.c): det, by LU decomposition with partial pivoting;
 * signal.stft, each frame's windowed DFT summed directly; and
 * signal.mel_weight_matrix as ONNX's reference computes it (mel-spaced
 * edges floored to DFT bins, triangles peaking at 1).  All compute in
 * float64 and round once into the dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* The determinant of the n x n matrix a (overwritten). */
static double lu_det(double *a, int64_t n) {
  double d = 1;
  for (int64_t c = 0; c < n; c++) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; r++)
      if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
    if (a[p * n + c] == 0) return 0;
    if (p != c) {
      d = -d;
      for (int64_t k = 0; k < n; k++) {
        double t = a[c * n + k];
        a[c * n + k] = a[p * n + k], a[p * n + k] = t;
      }
    }
    d *= a[c * n + c];
    for (int64_t r = c + 1; r < n; r++) {
      double f = a[r * n + c] / a[c * n + c];
      for (int64_t k = c; k < n; k++) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return d;
}

static bool k_det(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                  RtTensor *const *out) {
  const RtTensor *x = in[0];
  int64_t n = x->shape[x->ndim - 1], batch = out[0]->numel;
  if (n == 0) { /* the empty product */
    double one = 1;
    for (int64_t b = 0; b < batch; b++)
      lane_store(LANE_F64, out[0]->dtype, &one, out[0]->data, b, 1);
    return true;
  }
  if (batch == 0) return true;
  double *v = lane_array(kx, x, LANE_F64);
  double *o = v ? kernel_alloc(kx, (size_t)batch * sizeof(double)) : NULL;
  if (!o) return free(v), false;
  for (int64_t b = 0; b < batch; b++) o[b] = lu_det(v + b * n * n, n);
  lane_store(LANE_F64, out[0]->dtype, o, out[0]->data, 0, batch);
  free(v), free(o);
  return true;
}

/* ───────────────────────── signal.stft ───────────────────────── */

/* One frame's DFT: bins re/im into o[k * 2 + 0/1] for k < nk, of the
 * len samples x[(n) * c] (c components each) times window w. */
static void frame_dft(const double *x, int64_t c, const double *w, int64_t len, int64_t nk,
                      double *o) {
  for (int64_t k = 0; k < nk; k++) {
    double re = 0, im = 0;
    for (int64_t n = 0; n < len; n++) {
      double a = 2 * M_PI * (double)((k * n) % len) / (double)len, cs = cos(a), sn = sin(a);
      double xr = x[n * c] * w[n], xi = c == 2 ? x[n * c + 1] * w[n] : 0;
      re += xr * cs + xi * sn, im += xi * cs - xr * sn;
    }
    o[k * 2] = re, o[k * 2 + 1] = im;
  }
}

static bool k_stft(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  const RtTensor *x = in[0], *o = out[0];
  int64_t step = rt_get_i64(in[1], 0), t = x->shape[1], c = x->shape[2];
  int64_t nb = o->shape[0], nf = o->shape[1], nk = o->shape[2], len = in[2]->shape[0];
  if (o->numel == 0) return true;
  double *v = lane_array(kx, x, LANE_F64), *w = v ? lane_array(kx, in[2], LANE_F64) : NULL;
  double *r = w ? kernel_alloc(kx, (size_t)o->numel * sizeof(double)) : NULL;
  if (!r) return free(v), free(w), false;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t f = 0; f < nf; f++)
      frame_dft(v + (b * t + f * step) * c, c, w, len, nk, r + (b * nf + f) * nk * 2);
  lane_store(LANE_F64, o->dtype, r, o->data, 0, o->numel);
  free(v), free(w), free(r);
  return true;
}

/* ───────────────────────── signal.mel_weight_matrix ───────────────────────── */

/* The DFT bin of each of the nmel + 2 mel-spaced edges (ONNX's reference:
 * the mel range divided in nmel + 2 steps, floor((dft + 1) * hz / rate)). */
static void mel_edges(int64_t nmel, int64_t dft, int64_t rate, double lo, double hi,
                      int64_t *edge) {
  double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700);
  double step = (mhi - mlo) / (double)(nmel + 2);
  for (int64_t i = 0; i < nmel + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);
    edge[i] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
  }
}

/* Band i's triangle: rising from edge l to 1 at edge c, falling to edge h. */
static void mel_band(double *o, int64_t nmel, int64_t i, int64_t l, int64_t c, int64_t h) {
  if (c == l) o[c * nmel + i] = 1;
  for (int64_t j = l; c > l && j <= c; j++) o[j * nmel + i] = (double)(j - l) / (double)(c - l);
  for (int64_t j = c; j < h; j++) o[j * nmel + i] = (double)(h - j) / (double)(h - c);
}

static bool k_mel_weight_matrix(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  int64_t nmel = rt_get_i64(in[0], 0), dft = rt_get_i64(in[1], 0), nbins = dft / 2 + 1;
  double lo = rt_get_f64(in[3], 0), hi = rt_get_f64(in[4], 0);
  int64_t *edge = kernel_alloc(kx, (size_t)(nmel + 2) * sizeof(int64_t));
  double *o = edge ? kernel_alloc(kx, (size_t)(nbins * nmel) * sizeof(double)) : NULL;
  if (!o) return free(edge), false;
  mel_edges(nmel, dft, rt_get_i64(in[2], 0), lo, hi, edge);
  bool ok = true;
  for (int64_t i = 0; i < nmel + 2 && ok; i++) ok = edge[i] >= 0 && edge[i] < nbins;
  if (!ok)
    kernel_fail(kx,
                "signal.mel_weight_matrix: the edges %g to %g Hz fall outside the %lld "
                "bins of a %lld-point DFT",
                lo, hi, (long long)nbins, (long long)dft);
  memset(o, 0, (size_t)(nbins * nmel) * sizeof(double));
  for (int64_t i = 0; i < nmel && ok; i++) mel_band(o, nmel, i, edge[i], edge[i + 1], edge[i + 2]);
  if (ok) lane_store(LANE_F64, out[0]->dtype, o, out[0]->data, 0, nbins * nmel);
  free(edge), free(o);
  return ok;
}

const KernelDef kernels_family_numeric[] = {
    {"det", k_det},
    {"signal.stft", k_stft},
    {"signal.mel_weight_matrix", k_mel_weight_matrix},
    {NULL, NULL},
};
