/* kernels_image.c — reference kernels of the image ops: image.resize1d,
 * image.resize2d, image.resize3d, dyn.image.resize2d, image.crop_and_resize,
 * image.grid_sample, image.grid_sample_grad (its adjoints) and
 * image.affine_grid.
 *
 * Numerics are TVM 0.10's TOPI (python/tvm/topi/image):
 * - resize and crop_and_resize read pixels as float32 and compute in float32
 *   whatever the dtype, then convert to the output dtype (float to integer
 *   truncates and saturates, as `cast`).  Parts that TVM folds at compile
 *   time (W / T, (W - 1) / (T - 1), roi * (W - 1), ...) are computed in
 *   double and rounded once; everything involving an output coordinate is
 *   float32, in TOPI's operation order, so results agree bit for bit.
 *   Pixel indices are clamped into the image; "round" rounds half to even.
 * - Where TVM divides by zero (align_corners, or a crop, with one output
 *   pixel) the coordinate is the centre rule of tf_crop_and_resize for crops
 *   and 0 for align_corners.
 * - resize3d applies the 1-D rule per axis, as resize1d and resize2d do:
 *   roi is (start_d, start_h, start_w, end_d, end_h, end_w), cubic_exclude
 *   and the tf_crop_and_resize extrapolation apply on each axis.  (TOPI's
 *   resize3d reads the roi in reverse, takes the depth weights of cubic_exclude
 *   from the width axis and skips the depth test of the extrapolation.)
 * - grid_sample and affine_grid compute in the data's float type (float16
 *   in float32), in TOPI's order.
 * Float to int32 conversions of coordinates saturate and send NaN to 0 (as
 * the JIT's fptosi.sat), so no input makes a kernel read outside a tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/image.h"

/* ─────────────────────────── shared helpers ─────────────────────────── */

static int64_t sat_i32(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return 2147483647;
  if (v <= -2147483648.0) return -2147483647 - 1;
  return (int64_t)v;
}

static int64_t clamp_ix(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* Output element strides of a layout axis, and the input's. */
static void strides_of(const RtTensor *t, int64_t *st) { kernel_strides(t->ndim, t->shape, st); }

/* ───────────────────────────── resize taps ───────────────────────────── */

/* How one output coordinate of one axis reads the input: n taps (1, 2 or
 * 4) at clamped indices with weights, or `outside` the image (the
 * extrapolation value of tf_crop_and_resize). */
typedef struct Taps {
  int n;
  bool outside;
  int64_t idx[4];
  float w[4];
} Taps;

/* The input coordinate of output coordinate x of an axis of `in` pixels
 * resized to `out` (TOPI's get_inx).  With scales, the scale is 1 / scale
 * and align_corners and tf_crop_and_resize divide by in * scale - 1 rather
 * than out - 1 (ONNX's Resize). */
static float resize_coord(const ResizeSpec *s, int axis, int64_t x, int64_t in, int64_t out) {
  double sc = s->scales[axis];
  float fx = (float)x, scale = (float)(sc > 0 ? 1.0 / sc : (double)in / (double)out);
  double st = s->roi[axis], en = s->roi[s->nsp + axis];
  double ol = sc > 0 ? sc * (double)in : (double)out; /* ONNX: in * scale, unrounded */
  switch (s->coord) {
    case COORD_HALF_PIXEL:
      return (fx + 0.5f) * scale - 0.5f;
    case COORD_ALIGN_CORNERS:
      return out > 1 ? (float)((double)(in - 1) / (ol - 1)) * fx : 0.0f;
    case COORD_ASYMMETRIC:
      return scale * fx;
    case COORD_PYTORCH_HALF_PIXEL:
      return out > 1 ? (fx + 0.5f) * scale - 0.5f : 0.0f;
    case COORD_TF_HALF_PIXEL_FOR_NN:
      return (fx + 0.5f) * scale;
    case COORD_TF_CROP_AND_RESIZE:
      if (out <= 1) return (float)(0.5 * (st + en) * (double)(in - 1));
      return (float)(st * (double)(in - 1)) +
             fx * (float)(en - st) * (float)(in - 1) / (float)(ol - 1);
  }
  return 0.0f;
}

/* The nearest pixel of coordinate c (TOPI's get_closest_index). */
static int64_t closest(float c, Rounding r) {
  switch (r) {
    case ROUNDING_PREFER_FLOOR:
      return sat_i32(ceilf(c - 0.5f));
    case ROUNDING_PREFER_CEIL:
      return sat_i32(floorf(c + 0.5f));
    case ROUNDING_FLOOR:
      return sat_i32(floorf(c + (float)1e-5));
    case ROUNDING_CEIL:
      return sat_i32(ceilf(c - (float)1e-5));
    default:
      return sat_i32(nearbyintf(c));
  }
}

/* TOPI's cubic spline weights of fraction t; the sums of alpha are folded
 * constants (double, rounded once). */
static void cubic_weights(double alpha, float t, float *w) {
  float a = (float)alpha, t2 = t * t, t3 = t * t * t;
  w[0] = a * (t3 - 2.0f * t2 + t);
  w[1] = (float)(alpha + 2) * t3 - (float)(3 + alpha) * t2 + 1.0f;
  w[2] = (float)(-(alpha + 2)) * t3 + (float)(3 + 2 * alpha) * t2 - a * t;
  w[3] = (float)(-alpha) * t3 + a * t2;
}

/* The taps of input coordinate c on an axis of `in` pixels. */
static Taps taps_at(const ResizeSpec *s, float c, int64_t in) {
  Taps t = {0};
  t.outside = s->coord == COORD_TF_CROP_AND_RESIZE && (c < 0.0f || c > (float)(in - 1));
  if (s->method == RESIZE_NEAREST) {
    t.n = 1, t.idx[0] = clamp_ix(closest(c, s->rounding), in), t.w[0] = 1.0f;
    return t;
  }
  int64_t i0 = sat_i32(floorf(c));
  if (s->method == RESIZE_LINEAR) {
    float l = c - (float)i0;
    t.n = 2, t.w[0] = 1.0f - l, t.w[1] = l;
    for (int k = 0; k < 2; k++) t.idx[k] = clamp_ix(i0 + k, in);
    return t;
  }
  t.n = 4;
  cubic_weights(s->cubic_alpha, c - floorf(c), t.w);
  for (int k = 0; k < 4; k++) t.idx[k] = clamp_ix(i0 - 1 + k, in);
  if (s->cubic_exclude) {
    for (int k = 0; k < 4; k++)
      if (i0 - 1 + k < 0 || i0 + k > in) t.w[k] = 0.0f;
    float sum = t.w[0] + t.w[1] + t.w[2] + t.w[3];
    for (int k = 0; k < 4; k++) t.w[k] = t.w[k] / sum;
  }
  return t;
}

/* The crop coordinate of output x between box edges b0 and b1 (fractions
 * of the image): TOPI's boxes branch of _resize_2d. */
static float crop_coord(float b0, float b1, int64_t x, int64_t in, int64_t out) {
  float m = (float)(in - 1);
  if (out <= 1) return 0.5f * (b0 + b1) * m;
  float scale = m * (b1 - b0) / (float)(out - 1);
  return b0 * m + scale * (float)x;
}

/* ───────────────────────────── resampling ───────────────────────────── */

/* One resize job: the input as float32, where its axes are, and the taps
 * of every output coordinate of every spatial axis (per output batch entry
 * for crops: taps[axis] + b * out_size[axis]). */
typedef struct Resample {
  const ResizeSpec *s;
  const float *src;
  int64_t in_st[5];
  Taps *taps[IMAGE_MAX_SPATIAL];
  bool per_batch;
  const int64_t *batch_of; /* crops: the input image of each output batch entry */
} Resample;

/* The value at input offset `off` sampled over spatial axes level.. with
 * the taps of output coordinates o (inner axes first, as TOPI nests). */
static float sample(const Resample *r, int level, int64_t off, const Taps *const *t) {
  if (level == r->s->nsp) return r->src[off];
  const Taps *a = t[level];
  int64_t st = r->in_st[r->s->sp_axis[level]];
  float v[4];
  for (int k = 0; k < a->n; k++) v[k] = sample(r, level + 1, off + a->idx[k] * st, t);
  if (a->n == 1) return v[0];
  if (a->n == 2) return v[0] * a->w[0] + v[1] * a->w[1];
  return v[0] * a->w[0] + v[1] * a->w[1] + v[2] * a->w[2] + v[3] * a->w[3];
}

/* Fills dst (out's shape, contiguous) element by element. */
static void resample(const Resample *r, const RtTensor *out, float *dst) {
  const ResizeSpec *s = r->s;
  int rank = out->ndim;
  int64_t idx[5] = {0};
  for (int64_t e = 0; e < out->numel; e++) {
    int64_t b = idx[s->batch_axis];
    const Taps *t[IMAGE_MAX_SPATIAL];
    bool outside = false;
    for (int i = 0; i < s->nsp; i++) {
      int64_t n = out->shape[s->sp_axis[i]];
      t[i] = &r->taps[i][(r->per_batch ? b * n : 0) + idx[s->sp_axis[i]]];
      outside = outside || t[i]->outside;
    }
    int64_t src_b = r->batch_of ? r->batch_of[b] : b;
    int64_t off = src_b * r->in_st[s->batch_axis] + idx[s->chan_axis] * r->in_st[s->chan_axis];
    dst[e] = outside ? s->extrapolation : sample(r, 0, off, t);
    for (int d = rank - 1; d >= 0 && ++idx[d] == out->shape[d]; d--) idx[d] = 0;
  }
}

/* Runs a resample into out (through a float32 buffer). */
static bool resample_into(KernelCtx *kx, Resample *r, const RtTensor *x, RtTensor *out) {
  float *src = lane_array(kx, x, LANE_F32);
  float *dst = src ? kernel_alloc(kx, sizeof(float) * (size_t)out->numel) : NULL;
  if (dst) {
    r->src = src;
    strides_of(x, r->in_st);
    resample(r, out, dst);
    lane_store(LANE_F32, out->dtype, dst, out->data, 0, out->numel);
  }
  free(src), free(dst);
  return dst != NULL;
}

/* An output with elements needs pixels on every input spatial axis. */
static bool nonempty_input(KernelCtx *kx, const ResizeSpec *s, const RtTensor *x,
                           const RtTensor *out) {
  for (int i = 0; i < s->nsp && out->numel > 0; i++)
    if (x->shape[s->sp_axis[i]] == 0)
      return kernel_fail(kx, "%s: cannot resize an empty image axis to %lld pixels", kx->op,
                         (long long)out->shape[s->sp_axis[i]]);
  return true;
}

/* resize{nsp}d of in[0] into out[0] with the spec's coordinates; int_div:
 * TVM's integer form of static 2-D nearest "asymmetric" resizing. */
static bool resize(KernelCtx *kx, const ResizeSpec *s, const RtTensor *x, RtTensor *out,
                   bool int_div) {
  if (!nonempty_input(kx, s, x, out)) return false;
  Resample r = {.s = s};
  bool ok = true;
  for (int i = 0; i < s->nsp && ok; i++) {
    int64_t in = x->shape[s->sp_axis[i]], n = out->shape[s->sp_axis[i]];
    bool div = int_div && s->method == RESIZE_NEAREST && s->coord == COORD_ASYMMETRIC &&
               !(s->scales[i] > 0) && image_resize_int_div(in, n);
    ok = (r.taps[i] = kernel_alloc(kx, sizeof(Taps) * (size_t)(n ? n : 1))) != NULL;
    for (int64_t o = 0; ok && o < n; o++) {
      r.taps[i][o] = taps_at(s, resize_coord(s, i, o, in, n), in);
      if (div) r.taps[i][o].idx[0] = clamp_ix(o / (n / in), in);
    }
  }
  ok = ok && resample_into(kx, &r, x, out);
  for (int i = 0; i < s->nsp; i++) free(r.taps[i]);
  return ok;
}

static bool k_resize(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *const *out,
                     int nsp) {
  ResizeSpec s;
  if (!image_resize_spec(&kx->rel, attrs, nsp, &s) || !kernel_attrs_ok(kx)) return false;
  return resize(kx, &s, in[0], out[0], nsp == 2);
}

static bool k_resize1d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return k_resize(kx, in, attrs, out, 1);
}

static bool k_resize2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return k_resize(kx, in, attrs, out, 2);
}

static bool k_resize3d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return k_resize(kx, in, attrs, out, 3);
}

/* dyn.image.resize2d(x, size, roi[, scales]): the roi (and scales) tensors
 * replace the attributes;
 * the output size is out's (from the size tensor, by the relation).  The
 * sizes are not compile-time constants, so no integer-division form. */
static bool k_dyn_resize2d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  ResizeSpec s;
  if (!image_resize_spec(&kx->rel, attrs, 2, &s) || !kernel_attrs_ok(kx)) return false;
  if (in[2]->numel != 4) return kernel_fail(kx, "%s: roi must have 4 entries", kx->op);
  float roi[4];
  lane_load(LANE_F32, in[2]->dtype, in[2]->data, 0, 1, 4, roi);
  for (int i = 0; i < 4; i++) s.roi[i] = roi[i];
  if (nin > 3) {
    float sc[2];
    if (in[3]->numel != 2) return kernel_fail(kx, "%s: scales must have 2 entries", kx->op);
    lane_load(LANE_F32, in[3]->dtype, in[3]->data, 0, 1, 2, sc);
    for (int i = 0; i < 2; i++)
      if (!(sc[i] > 0)) return kernel_fail(kx, "%s: scales must be positive", kx->op);
    for (int i = 0; i < 2; i++) s.scales[i] = sc[i];
  }
  return resize(kx, &s, in[0], out[0], false);
}

/* The crop taps of every box: per axis, nbox * out entries. */
static bool crop_taps(KernelCtx *kx, const ResizeSpec *s, const RtTensor *x, const RtTensor *boxes,
                      const RtTensor *out, Resample *r) {
  int64_t nb = boxes->shape[0];
  float *b = lane_array(kx, boxes, LANE_F32);
  bool ok = b != NULL;
  for (int i = 0; i < 2 && ok; i++) {
    int64_t in = x->shape[s->sp_axis[i]], n = out->shape[s->sp_axis[i]];
    ok = (r->taps[i] = kernel_alloc(kx, sizeof(Taps) * (size_t)(nb * n > 0 ? nb * n : 1))) != NULL;
    for (int64_t k = 0; ok && k < nb; k++)
      for (int64_t o = 0; o < n; o++)
        r->taps[i][k * n + o] =
            taps_at(s, crop_coord(b[k * 4 + i], b[k * 4 + 2 + i], o, in, n), in);
  }
  free(b);
  return ok;
}

/* The input image of each box, checked against the batch size. */
static int64_t *box_batches(KernelCtx *kx, const RtTensor *ix, int64_t batch) {
  int64_t *v = lane_array(kx, ix, LANE_I64);
  for (int64_t k = 0; v && k < ix->numel; k++)
    if (v[k] < 0 || v[k] >= batch) {
      kernel_fail(kx, "%s: box %lld has box index %lld, out of range for a batch of %lld", kx->op,
                  (long long)k, (long long)v[k], (long long)batch);
      free(v);
      return NULL;
    }
  return v;
}

static bool k_crop_and_resize(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                              int nout, RtTensor *const *out) {
  ResizeSpec s;
  if (!image_crop_spec(&kx->rel, attrs, &s) || !kernel_attrs_ok(kx) ||
      !nonempty_input(kx, &s, in[0], out[0]))
    return false;
  Resample r = {.s = &s, .per_batch = true};
  int64_t *batch_of = box_batches(kx, in[2], in[0]->shape[s.batch_axis]);
  r.batch_of = batch_of;
  bool ok = batch_of && crop_taps(kx, &s, in[0], in[1], out[0], &r) &&
            resample_into(kx, &r, in[0], out[0]);
  for (int i = 0; i < 2; i++) free(r.taps[i]);
  free(batch_of);
  return ok;
}

/* ──────────────── grid_sample and affine_grid (float and double) ──────────────── */

#define REAL float
#define RFN(name) name##_f32
#include "kernels/kernels_image_real.h"
#undef REAL
#undef RFN
#define REAL double
#define RFN(name) name##_f64
#include "kernels/kernels_image_real.h"
#undef REAL
#undef RFN

/* float64 operands compute in double, others in float. */
static Lane real_lane(const RtTensor *a, const RtTensor *b) {
  return a->dtype == DT_FLOAT64 || (b && b->dtype == DT_FLOAT64) ? LANE_F64 : LANE_F32;
}

/* grid_sample in the lane of the float type (double for float64). */
static bool k_grid_sample(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  GridSpec s;
  if (!image_grid_spec(&kx->rel, attrs, in[0]->ndim, &s) || !kernel_attrs_ok(kx)) return false;
  Lane l = real_lane(in[0], in[1]);
  void *x = lane_array(kx, in[0], l), *g = x ? lane_array(kx, in[1], l) : NULL;
  void *dst = g ? kernel_alloc(kx, lane_bytes(l) * (size_t)out[0]->numel) : NULL;
  if (dst) {
    if (l == LANE_F64)
      grid_walk_f64(&s, in[0]->shape, x, out[0]->shape, g, &(GridIo_f64){.dst = dst});
    else
      grid_walk_f32(&s, in[0]->shape, x, out[0]->shape, g, &(GridIo_f32){.dst = dst});
    lane_store(l, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
  }
  free(x), free(g), free(dst);
  return dst != NULL;
}

/* grid_sample_grad(dy, x, grid) → (dx, dgrid), in the lane of x's float
 * type, accumulated into zeros. */
static bool k_grid_sample_grad(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  GridSpec s;
  if (!image_grid_spec(&kx->rel, attrs, in[1]->ndim, &s) || !kernel_attrs_ok(kx)) return false;
  Lane l = real_lane(in[1], in[2]);
  size_t b = lane_bytes(l);
  void *dy = lane_array(kx, in[0], l), *x = dy ? lane_array(kx, in[1], l) : NULL;
  void *g = x ? lane_array(kx, in[2], l) : NULL;
  char *dst = g ? kernel_alloc(kx, b * (size_t)(out[0]->numel + out[1]->numel)) : NULL;
  if (dst) {
    memset(dst, 0, b * (size_t)(out[0]->numel + out[1]->numel));
    void *dg = dst + b * (size_t)out[0]->numel;
    if (l == LANE_F64)
      grid_walk_f64(&s, in[1]->shape, x, in[0]->shape, g,
                    &(GridIo_f64){.dx = (double *)dst, .dg = dg, .dy = dy});
    else
      grid_walk_f32(&s, in[1]->shape, x, in[0]->shape, g,
                    &(GridIo_f32){.dx = (float *)dst, .dg = dg, .dy = dy});
    lane_store(l, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
    lane_store(l, out[1]->dtype, dg, out[1]->data, 0, out[1]->numel);
  }
  free(dy), free(x), free(g), free(dst);
  return dst != NULL;
}

static bool k_affine_grid(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  Lane l = real_lane(in[0], NULL);
  void *x = lane_array(kx, in[0], l);
  void *dst = x ? kernel_alloc(kx, lane_bytes(l) * (size_t)out[0]->numel) : NULL;
  if (dst) {
    if (l == LANE_F64)
      affine_grid_f64(out[0]->shape, x, dst);
    else
      affine_grid_f32(out[0]->shape, x, dst);
    lane_store(l, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
  }
  free(x), free(dst);
  return dst != NULL;
}

const KernelDef kernels_family_image[] = {
    {"image.resize1d", k_resize1d},
    {"image.resize2d", k_resize2d},
    {"image.resize3d", k_resize3d},
    {"dyn.image.resize2d", k_dyn_resize2d},
    {"image.crop_and_resize", k_crop_and_resize},
    {"image.grid_sample", k_grid_sample},
    {"image.grid_sample_grad", k_grid_sample_grad},
    {"image.affine_grid", k_affine_grid},
    {NULL, NULL},
};
