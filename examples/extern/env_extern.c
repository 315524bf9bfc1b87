/* env_extern.c — external functions for rly's call_tir (seed 002's
 * "Register Runtime Functions"), as a shared library loaded with
 *
 *   :extern env.linear libenv_extern.so env_linear
 *   :extern env.relu   libenv_extern.so env_relu
 *
 * Each function follows interp/extern.h: DLPack tensors (dlpack/dlpack.h),
 * inputs first, then the outputs rly allocated (destination passing);
 * 0 on success, else non-zero with a message in err.  Tensors are
 * contiguous, row-major, on the CPU (strides NULL). */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>

int env_linear(DLTensor *args, int nargs, void *ctx, char *err, size_t errn);
int env_relu(DLTensor *args, int nargs, void *ctx, char *err, size_t errn);

static int is_f32(const DLTensor *t) {
  return t->device.device_type == kDLCPU && t->dtype.code == kDLFloat && t->dtype.bits == 32 &&
         t->dtype.lanes == 1;
}

static int64_t numel(const DLTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

/* out = x @ w.T + b: x (n, k), w (m, k), b (m), out (n, m); float32. */
int env_linear(DLTensor *a, int nargs, void *ctx, char *err, size_t errn) {
  (void)ctx;
  if (nargs != 4 || a[0].ndim != 2 || a[1].ndim != 2 || a[2].ndim != 1 || a[3].ndim != 2)
    return snprintf(err, errn, "env.linear wants x (n, k), w (m, k), b (m) and an output (n, m)"),
           1;
  for (int i = 0; i < 4; i++)
    if (!is_f32(&a[i])) return snprintf(err, errn, "env.linear: argument %d is not float32", i), 1;
  int64_t n = a[0].shape[0], k = a[0].shape[1], m = a[1].shape[0];
  if (a[1].shape[1] != k || a[2].shape[0] != m || a[3].shape[0] != n || a[3].shape[1] != m)
    return snprintf(err, errn, "env.linear: shapes do not agree"), 1;
  const float *x = a[0].data, *w = a[1].data, *b = a[2].data;
  float *out = a[3].data;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      float acc = 0;
      for (int64_t r = 0; r < k; r++) acc += x[i * k + r] * w[j * k + r];
      out[i * m + j] = acc + b[j];
    }
  return 0;
}

/* out = max(x, 0) elementwise; float32, any shape. */
int env_relu(DLTensor *a, int nargs, void *ctx, char *err, size_t errn) {
  (void)ctx;
  if (nargs != 2 || !is_f32(&a[0]) || !is_f32(&a[1]) || numel(&a[0]) != numel(&a[1]))
    return snprintf(err, errn, "env.relu wants a float32 x and an output of its size"), 1;
  const float *x = a[0].data;
  float *y = a[1].data;
  for (int64_t i = 0, n = numel(&a[0]); i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
