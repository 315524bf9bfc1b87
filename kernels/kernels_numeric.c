/* kernels_numeric.c — reference kernels of the numeric family
 * (ops/numeric.c): det, by LU decomposition with partial pivoting in
 * float64, rounded once into the dtype. */
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

const KernelDef kernels_family_numeric[] = {
    {"det", k_det},
    {NULL, NULL},
};
