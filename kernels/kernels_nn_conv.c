/* kernels_nn_conv.c — reference kernels of ops/nn_conv.c: nn.conv1d,
 * nn.conv2d, nn.conv3d, nn.conv1d_transpose, nn.conv2d_transpose,
 * nn.conv3d_transpose.
 *
 * Every convolution runs as a 3-D one: data (N, C, D, H, W), weight
 * (O, C / groups, KD, KH, KW), a 1-D or 2-D one with leading spatial dims
 * of size 1.  Products accumulate in double for float outputs and in
 * wrapping 64-bit integers for integer outputs (exact, narrowed to
 * out_dtype); each output element sums its terms in the order input
 * channel, then taps (depth, height, width), as the compute rule of conv2d
 * does (lower/compute/compute_conv.c), so float32 results agree with it bit for bit.
 *
 * A transposed convolution scatters: input element (c, i) adds
 * x * w(c, o, t) to output position i * stride - pad_before + t * dilation
 * of every output channel o of c's group.  Which weight axis holds the
 * input channels follows the relation (ops/nn_conv.c).
 *
 * nn.contrib_conv2d_NCHWc unblocks its operands, runs the NCHW kernel and
 * blocks the result (a reference, not a fast path); a convolution in other
 * layouts (NHWC, HWIO, ...) does the same with its axes' order. */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/nn_int.h"

/* Compute lane of a product: double or wrapping uint64. */
static Lane acc_lane(DType out) { return dtype_is_float(out) ? LANE_F64 : LANE_U64; }

typedef struct ConvK {
  int S;
  bool transpose;
  int64_t N, C, O, groups, cg, og; /* cg, og: input / output channels per group */
  int64_t in[3], k[3], out[3];     /* D, H, W (1 for missing dims) */
  NnWindow w;                      /* spatial attributes, 3 dims */
  int64_t wst_in, wst_out;         /* weight strides of the two channel axes */
} ConvK;

/* Lifts the S spatial dims into the last of 3 (the others size 1). */
static void lift(int S, const int64_t *src, int64_t *dst, int64_t fill) {
  for (int i = 0; i < 3; i++) dst[i] = i < 3 - S ? fill : src[i - (3 - S)];
}

/* The window attributes (read as the relation reads them) lifted to 3-D,
 * and the weight's channel axes. */
static bool conv_setup(KernelCtx *kx, const Attrs *attrs, const RtTensor *x, const RtTensor *wt,
                       const RtTensor *y, ConvK *c) {
  NnWindow w = {.S = c->S};
  c->groups = kattr_int(kx, attrs, "groups");
  const char *kl = kattr_str(kx, attrs, "kernel_layout");
  if (!kernel_attrs_ok(kx) || !nn_window_attrs(&kx->rel, attrs, &w) ||
      (c->transpose && !nn_spatial_ints(&kx->rel, attrs, "output_padding", c->S, 0, w.out_pad)) ||
      !kernel_attrs_ok(kx))
    return false;
  int S = c->S;
  c->w.S = 3;
  lift(S, w.stride, c->w.stride, 1), lift(S, w.dil, c->w.dil, 1), lift(S, w.lo, c->w.lo, 0);
  lift(S, x->shape + 2, c->in, 1), lift(S, wt->shape + 2, c->k, 1),
      lift(S, y->shape + 2, c->out, 1);
  c->N = x->shape[0], c->C = x->shape[1], c->O = y->shape[1];
  int64_t ks = c->k[0] * c->k[1] * c->k[2];
  /* the weight axis of the input channels (see ops/nn_conv.c) */
  bool io = kl[0] == 'I', in_first = c->transpose && (S == 1 ? !io : io);
  c->wst_in = in_first ? wt->shape[1] * ks : ks;
  c->wst_out = in_first ? ks : wt->shape[1] * ks;
  c->cg = c->C / c->groups, c->og = c->O / c->groups;
  return true;
}

/* One output plane (n, oc) of a convolution into acc (OD x OH x OW):
 * rows of the output are sequential in memory. */
#define CONV_PLANE(T)                                                                          \
  {                                                                                            \
    const T *xv = xl, *wv = wl;                                                                \
    T *acc = accbuf;                                                                           \
    for (int64_t i = 0; i < plane; i++) acc[i] = 0;                                            \
    for (int64_t ci = 0; ci < c->cg; ci++) {                                                   \
      const T *xp = xv + (n * c->C + g * c->cg + ci) * isz;                                    \
      const T *wp = wv + oc * c->wst_out + ci * c->wst_in;                                     \
      for (int64_t a = 0; a < c->k[0]; a++)                                                    \
        for (int64_t b = 0; b < c->k[1]; b++)                                                  \
          for (int64_t e = 0; e < c->k[2]; e++) {                                              \
            T wt = wp[(a * c->k[1] + b) * c->k[2] + e];                                        \
            int64_t off = e * w->dil[2] - w->lo[2], lo, hi;                                    \
            valid_range(off, w->stride[2], c->in[2], c->out[2], &lo, &hi);                     \
            for (int64_t od = 0; od < c->out[0]; od++) {                                       \
              int64_t z = od * w->stride[0] - w->lo[0] + a * w->dil[0];                        \
              if (z < 0 || z >= c->in[0]) continue;                                            \
              for (int64_t oh = 0; oh < c->out[1]; oh++) {                                     \
                int64_t h = oh * w->stride[1] - w->lo[1] + b * w->dil[1];                      \
                if (h < 0 || h >= c->in[1]) continue;                                          \
                int64_t base = (z * c->in[1] + h) * c->in[2] + off; /* an index: may be < 0 */ \
                T *arow = acc + (od * c->out[1] + oh) * c->out[2];                             \
                for (int64_t ow = lo; ow < hi; ow++)                                           \
                  arow[ow] += wt * xp[base + ow * w->stride[2]];                               \
              }                                                                                \
            }                                                                                  \
          }                                                                                    \
    }                                                                                          \
  }

/* The outputs o in [*lo, *hi) (within [0, n)) whose input position
 * o * s + off lies in [0, size). */
static void valid_range(int64_t off, int64_t s, int64_t size, int64_t n, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = size - 1 - off < 0 ? 0 : (size - 1 - off) / s + 1;
  if (*hi > n) *hi = n;
  if (*lo > *hi) *lo = *hi;
}

/* One output plane (n, oc) of a transposed convolution: every input
 * element of the group's channels scatters through every tap. */
#define TRANSPOSED_PLANE(T)                                                        \
  {                                                                                \
    const T *xv = xl, *wv = wl;                                                    \
    T *acc = accbuf;                                                               \
    for (int64_t i = 0; i < plane; i++) acc[i] = 0;                                \
    for (int64_t ci = 0; ci < c->cg; ci++) {                                       \
      const T *xp = xv + (n * c->C + g * c->cg + ci) * isz;                        \
      const T *wp = wv + (g * c->cg + ci) * c->wst_in + (oc % c->og) * c->wst_out; \
      for (int64_t a = 0; a < c->k[0]; a++)                                        \
        for (int64_t b = 0; b < c->k[1]; b++)                                      \
          for (int64_t e = 0; e < c->k[2]; e++) {                                  \
            T wt = wp[(a * c->k[1] + b) * c->k[2] + e];                            \
            for (int64_t iz = 0; iz < c->in[0]; iz++) {                            \
              int64_t z = iz * w->stride[0] - w->lo[0] + a * w->dil[0];            \
              if (z < 0 || z >= c->out[0]) continue;                               \
              for (int64_t ih = 0; ih < c->in[1]; ih++) {                          \
                int64_t h = ih * w->stride[1] - w->lo[1] + b * w->dil[1];          \
                if (h < 0 || h >= c->out[1]) continue;                             \
                const T *xrow = xp + (iz * c->in[1] + ih) * c->in[2];              \
                T *arow = acc + (z * c->out[1] + h) * c->out[2];                   \
                for (int64_t iw = 0; iw < c->in[2]; iw++) {                        \
                  int64_t x = iw * w->stride[2] - w->lo[2] + e * w->dil[2];        \
                  if (x >= 0 && x < c->out[2]) arow[x] += wt * xrow[iw];           \
                }                                                                  \
              }                                                                    \
            }                                                                      \
          }                                                                        \
    }                                                                              \
  }

/* Runs a convolution plane by plane, in double or wrapping uint64. */
static bool conv_run(KernelCtx *kx, const RtTensor *X, const RtTensor *K, RtTensor *Y,
                     const ConvK *c) {
  const NnWindow *w = &c->w;
  int64_t plane = c->out[0] * c->out[1] * c->out[2], isz = c->in[0] * c->in[1] * c->in[2];
  Lane l = acc_lane(Y->dtype);
  void *xl = lane_array(kx, X, l), *wl = xl ? lane_array(kx, K, l) : NULL;
  void *accbuf = wl ? kernel_alloc(kx, (size_t)(plane ? plane : 1) * 8) : NULL;
  if (!accbuf) return free(xl), free(wl), false;
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t oc = 0; oc < c->O; oc++) {
      int64_t g = oc / c->og;
      if (c->transpose && l == LANE_F64)
        TRANSPOSED_PLANE(double)
      else if (c->transpose)
        TRANSPOSED_PLANE(uint64_t)
      else if (l == LANE_F64)
        CONV_PLANE(double)
      else
        CONV_PLANE(uint64_t)
      lane_store(l, Y->dtype, accbuf, Y->data, (n * c->O + oc) * plane, plane);
    }
  free(xl), free(wl), free(accbuf);
  return true;
}

/* A copy of t with its axes in the order axes[] (axis j of the copy is
 * axis axes[j] of t): an operand in the plain order. */
static RtTensor *to_plain(KernelCtx *kx, const RtTensor *t, const int *axes) {
  int64_t shape[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  for (int j = 0; j < t->ndim; j++) shape[j] = t->shape[axes[j]];
  RtTensor *p = rt_tensor_new(t->dtype, t->ndim, shape, kx->err, sizeof kx->err);
  if (!p) return NULL;
  kernel_strides(t->ndim, t->shape, st);
  for (int j = 0; j < t->ndim; j++) istr[j] = st[axes[j]];
  kernel_view_copy(t, 0, istr, p);
  return p;
}

/* The plain-order result p copied into y, whose axis axes[j] is p's j. */
static void from_plain(const RtTensor *p, const int *axes, RtTensor *y) {
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(p->ndim, p->shape, st);
  for (int j = 0; j < p->ndim; j++) istr[axes[j]] = st[j];
  kernel_view_copy(p, 0, istr, y);
}

/* A convolution in other layouts (NHWC data, HWIO weight, ...): the
 * operands copied into the plain order, the plain kernel, the result
 * copied back (a reference, not a fast path). */
static bool conv_permuted(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                          const NnConvAxes *ax, ConvK *c) {
  int64_t shape[TENSOR_MAX_RANK];
  for (int j = 0; j < out->ndim; j++) shape[j] = out->shape[ax->x[j]];
  RtTensor *x = to_plain(kx, in[0], ax->x), *w = x ? to_plain(kx, in[1], ax->w) : NULL;
  RtTensor *y = w ? rt_tensor_new(out->dtype, out->ndim, shape, kx->err, sizeof kx->err) : NULL;
  bool ok = y && conv_setup(kx, attrs, x, w, y, c) && conv_run(kx, x, w, y, c);
  if (ok) from_plain(y, ax->x, out);
  rt_tensor_release(x), rt_tensor_release(w), rt_tensor_release(y);
  return ok;
}

static bool conv(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out, int S,
                 bool transpose) {
  ConvK c = {.S = S, .transpose = transpose};
  NnConvAxes ax;
  if (!transpose) {
    if (!nn_conv_axes(&kx->rel, attrs, S, &ax)) return kernel_attrs_ok(kx);
    if (!nn_conv_axes_plain(&ax, S)) return conv_permuted(kx, in, attrs, out, &ax, &c);
  }
  return conv_setup(kx, attrs, in[0], in[1], out, &c) && conv_run(kx, in[0], in[1], out, &c);
}

#define CONV_KERNEL(name, S, transpose)                                                       \
  static bool name(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout, \
                   RtTensor *const *out) {                                                    \
    return conv(kx, in, attrs, out[0], S, transpose);                                         \
  }
CONV_KERNEL(k_conv1d, 1, false)
CONV_KERNEL(k_conv2d, 2, false)
CONV_KERNEL(k_conv3d, 3, false)
CONV_KERNEL(k_conv1d_transpose, 1, true)
CONV_KERNEL(k_conv2d_transpose, 2, true)
CONV_KERNEL(k_conv3d_transpose, 3, true)

/* ───────────────────────── blocked layouts ───────────────────────── */

/* Copies between a plain tensor (N, C, H, W) or (O, I, H, W) and its
 * blocked form (N, C/c, H, W, c) or (O/o, I/i, H, W, i, o): to_plain
 * unblocks.  Elements are copied as bytes (same dtype). */
static void reblock(const RtTensor *plain, const RtTensor *blocked, int64_t ib, int64_t ob,
                    bool weight, bool to_plain) {
  size_t es = (size_t)dtype_bytes(plain->dtype);
  const int64_t *p = plain->shape;
  int64_t hw = p[2] * p[3];
  char *pd = plain->data, *bd = blocked->data;
  for (int64_t a = 0; a < p[0]; a++)
    for (int64_t c = 0; c < p[1]; c++)
      for (int64_t s = 0; s < hw; s++) {
        int64_t pi = (a * p[1] + c) * hw + s, bi;
        if (weight) /* [a/ob, c/ib, s, c%ib, a%ob] */
          bi = (((a / ob) * (p[1] / ib) + c / ib) * hw + s) * ib * ob + (c % ib) * ob + a % ob;
        else /* [a, c/ib, s, c%ib] */
          bi = ((a * (p[1] / ib) + c / ib) * hw + s) * ib + c % ib;
        if (to_plain)
          memcpy(pd + (size_t)pi * es, bd + (size_t)bi * es, es);
        else
          memcpy(bd + (size_t)bi * es, pd + (size_t)pi * es, es);
      }
}

/* nn.contrib_conv2d_NCHWc: the operands unblocked, the NCHW convolution
 * above, the result blocked again (the relation checked the layouts). */
static bool k_conv2d_nchwc(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  int64_t cb, ib, ob;
  if (!nn_layout_nchwc(kattr_str(kx, attrs, "data_layout"), &cb) ||
      !nn_layout_oihwio(kattr_str(kx, attrs, "kernel_layout"), &ib, &ob))
    return kernel_attrs_ok(kx) && kernel_fail(kx, "nn.contrib_conv2d_NCHWc: layouts");
  const int64_t *xs = in[0]->shape, *ws = in[1]->shape, *ys = out[0]->shape;
  int64_t xshape[4] = {xs[0], xs[1] * cb, xs[2], xs[3]};
  int64_t wshape[4] = {ws[0] * ob, ws[1] * ws[4], ws[2], ws[3]};
  int64_t yshape[4] = {ys[0], ys[1] * ob, ys[2], ys[3]};
  char err[128];
  RtTensor *x = rt_tensor_new(in[0]->dtype, 4, xshape, err, sizeof err);
  RtTensor *w = rt_tensor_new(in[1]->dtype, 4, wshape, err, sizeof err);
  RtTensor *y = rt_tensor_new(out[0]->dtype, 4, yshape, err, sizeof err);
  bool ok = x && w && y;
  if (ok) {
    reblock(x, in[0], cb, 0, false, true);
    reblock(w, in[1], ws[4], ob, true, true);
    ConvK c = {.S = 2};
    ok = conv_setup(kx, attrs, x, w, y, &c) && conv_run(kx, x, w, y, &c);
    if (ok) reblock(y, out[0], ob, 0, false, false);
  } else {
    kernel_fail(kx, "nn.contrib_conv2d_NCHWc: %s", err);
  }
  rt_tensor_release(x), rt_tensor_release(w), rt_tensor_release(y);
  return ok;
}

const KernelDef kernels_family_nn_conv[] = {
    {"nn.conv1d", k_conv1d},
    {"nn.conv2d", k_conv2d},
    {"nn.conv3d", k_conv3d},
    {"nn.conv1d_transpose", k_conv1d_transpose},
    {"nn.conv2d_transpose", k_conv2d_transpose},
    {"nn.conv3d_transpose", k_conv3d_transpose},
    {"nn.contrib_conv2d_NCHWc", k_conv2d_nchwc},
    {NULL, NULL},
};
