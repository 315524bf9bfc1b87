/* kernels_dyn.c — reference kernels of the dyn family: the ops whose shape
 * arguments are integer tensors (dyn.reshape, dyn.strided_slice, dyn.full,
 * dyn.broadcast_to).  Their output shapes come from the relations, which
 * read the shape tensors' values; the kernels reuse the static ops' code. */
#include <stdlib.h>
#include <string.h>

#include "interp/kernels.h"

/* Reads a 1-D integer tensor into out (at most TENSOR_MAX_RANK values). */
static int ints_of(KernelCtx *kx, const RtTensor *t, const char *what, int64_t *out) {
  if (t->ndim != 1 || !dtype_is_int(t->dtype) || t->numel > TENSOR_MAX_RANK) {
    kernel_fail(kx, "%s: %s must be a 1-D integer tensor of at most %d values", kx->op, what,
                TENSOR_MAX_RANK);
    return -1;
  }
  lane_load(LANE_I64, t->dtype, t->data, 0, 1, t->numel, out);
  return (int)t->numel;
}

static bool k_dyn_strided_slice(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  SliceArgs sa;
  sa.nb = ints_of(kx, in[1], "begin", sa.b);
  sa.ne = sa.nb < 0 ? -1 : ints_of(kx, in[2], "end", sa.e);
  sa.ns = nin < 4 || sa.ne < 0 ? 0 : ints_of(kx, in[3], "strides", sa.s);
  if (sa.ns < 0 || sa.ne < 0) return false;
  sa.na = kattr_is_none(kx, attrs, "axes")
              ? -1
              : kattr_ints(kx, attrs, "axes", sa.axes, TENSOR_MAX_RANK);
  sa.size_mode = strcmp(kattr_str(kx, attrs, "slice_mode"), "size") == 0;
  if (!kernel_attrs_ok(kx)) return false;
  return kernel_strided_slice(kx, in[0], &sa, out[0]);
}

static bool k_dyn_full(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  if (in[0]->numel != 1) return kernel_fail(kx, "%s: fill_value must be a scalar", kx->op);
  kernel_fill(out[0], in[0]);
  return true;
}

static bool k_dyn_broadcast_to(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  const RtTensor *x = in[0];
  RtTensor *o = out[0];
  if (x->dtype != o->dtype) return kernel_fail(kx, "%s: dtype conversion is not supported", kx->op);
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  for (int i = 0; i < o->ndim; i++) {
    int j = i - (o->ndim - x->ndim);
    istr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
  }
  kernel_view_copy(x, 0, istr, o);
  return true;
}

const KernelDef kernels_family_dyn[] = {
    {"dyn.reshape", kernel_copy_view},
    {"dyn.strided_slice", k_dyn_strided_slice},
    {"dyn.full", k_dyn_full},
    {"dyn.broadcast_to", k_dyn_broadcast_to},
    {NULL, NULL},
};
