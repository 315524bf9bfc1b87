/* kernels_nn_layout.c — reference kernels of ops/nn_layout.c: nn.pad,
 * nn.mirror_pad, nn.upsampling, nn.upsampling3d, nn.depth_to_space,
 * nn.space_to_depth, nn.space_to_batch_nd, nn.batch_to_space_nd, nn.dilate.
 *
 * All but the interpolating upsamplings are gathers: each output element
 * is a copy of one input element (bytes, so every dtype is exact) or a fill
 * value; gather() walks the output and asks the op's index map.  Fill
 * values are converted to the data's dtype as `cast` does.
 *
 * Upsampling computes coordinates and weights in float32 step by step as
 * TVM's resize does (lower/compute/compute_nn_layout.c explains the rules, which the
 * compute rule shares): pixel values are read as float32, interpolated in
 * float32 and converted to the dtype (truncating for integers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/nn_int.h"

/* An index map: the input element (flat index) for the output element at
 * multi-index o, or -1 for the fill value. */
typedef int64_t (*IndexMap)(const int64_t *o, const void *user);

/* The value v (a scalar tensor) as dtype dt's bytes. */
static void scalar_bytes(const RtTensor *v, DType dt, void *bytes) {
  Lane l = dtype_is_float(dt) ? LANE_F64 : kernel_lane(dt);
  LaneVal lv;
  lane_load(l, v->dtype, v->data, 0, 1, 1, &lv);
  lane_store(l, dt, &lv, bytes, 0, 1);
}

static void double_bytes(double v, DType dt, void *bytes) {
  lane_store(LANE_F64, dt, &v, bytes, 0, 1);
}

/* out[o] = x[map(o)], or fill where the map gives -1. */
static void gather(const RtTensor *x, RtTensor *out, IndexMap map, const void *user,
                   const void *fill) {
  size_t es = (size_t)dtype_bytes(out->dtype);
  int64_t o[TENSOR_MAX_RANK] = {0};
  char *dst = out->data;
  const char *src = x->data;
  for (int64_t i = 0; i < out->numel; i++) {
    int64_t j = map(o, user);
    memcpy(dst + (size_t)i * es, j >= 0 ? src + (size_t)j * es : fill, es);
    for (int d = out->ndim - 1; d >= 0 && ++o[d] == out->shape[d]; d--) o[d] = 0;
  }
}

/* Row-major strides of x, for the maps. */
typedef struct Geo {
  const RtTensor *x;
  int64_t st[TENSOR_MAX_RANK];
} Geo;

static void geo_init(Geo *g, const RtTensor *x) {
  g->x = x;
  kernel_strides(x->ndim, x->shape, g->st);
}

/* ───────────────────────────── pads ───────────────────────────── */

enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_SYMMETRIC };

typedef struct PadMap {
  Geo g;
  int mode;
  int64_t pw[NN_MAX_PAIRS][2];
} PadMap;

/* One axis: the input index for output index o, or -1 (constant mode). */
static int64_t pad_axis(int mode, int64_t o, int64_t before, int64_t n) {
  int64_t p = o - before;
  if (p >= 0 && p < n) return p;
  switch (mode) {
    case PAD_EDGE:
      return p < 0 ? 0 : n - 1;
    case PAD_REFLECT:
      return p < 0 ? -p : 2 * (n - 1) - p;
    case PAD_SYMMETRIC:
      return p < 0 ? -p - 1 : 2 * n - 1 - p;
    default:
      return -1;
  }
}

static int64_t pad_map(const int64_t *o, const void *user) {
  const PadMap *m = user;
  int64_t j = 0;
  for (int d = 0; d < m->g.x->ndim; d++) {
    int64_t p = pad_axis(m->mode, o[d], m->pw[d][0], m->g.x->shape[d]);
    if (p < 0) return -1;
    j += p * m->g.st[d];
  }
  return j;
}

static bool pad_run(KernelCtx *kx, const RtTensor *x, RtTensor *out, const Attrs *attrs, int mode,
                    const void *fill) {
  PadMap m = {.mode = mode};
  geo_init(&m.g, x);
  if (nn_attr_pairs(&kx->rel, attrs, "pad_width", m.pw, NN_MAX_PAIRS) != x->ndim)
    return kernel_attrs_ok(kx) && kernel_fail(kx, "%s: pad_width does not match", kx->op);
  gather(x, out, pad_map, &m, fill);
  return true;
}

static bool k_pad(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                  RtTensor *const *out) {
  const char *m = kattr_str(kx, attrs, "pad_mode");
  if (!kernel_attrs_ok(kx)) return false;
  int mode = !strcmp(m, "edge") ? PAD_EDGE : !strcmp(m, "reflect") ? PAD_REFLECT : PAD_CONSTANT;
  uint64_t fill = 0;
  scalar_bytes(in[1], in[0]->dtype, &fill);
  return pad_run(kx, in[0], out[0], attrs, mode, &fill);
}

static bool k_mirror_pad(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  const char *m = kattr_str(kx, attrs, "mode");
  if (!kernel_attrs_ok(kx)) return false;
  return pad_run(kx, in[0], out[0], attrs, !strcmp(m, "REFLECT") ? PAD_REFLECT : PAD_SYMMETRIC,
                 NULL);
}

/* ───────────────────────── depth / space ───────────────────────── */

typedef struct SubMap {
  Geo g;
  int64_t bs, oc; /* block size; output channels */
  int pos[4];     /* N, C, H, W */
  bool to_space, crd;
} SubMap;

static int64_t subpixel_map(const int64_t *o, const void *user) {
  const SubMap *m = user;
  int pc = m->pos[1], ph = m->pos[2], pw = m->pos[3];
  int64_t i[4] = {o[0], o[1], o[2], o[3]}, bs = m->bs, c = o[pc], y = o[ph], x = o[pw];
  if (m->to_space) {
    int64_t off = bs * (y % bs) + x % bs;
    i[pc] = m->crd ? c * bs * bs + off : m->oc * off + c;
    i[ph] = y / bs, i[pw] = x / bs;
  } else {
    int64_t C = m->g.x->shape[pc], off = c / C;
    i[pc] = c % C, i[ph] = off / bs + y * bs, i[pw] = off % bs + x * bs;
  }
  return i[0] * m->g.st[0] + i[1] * m->g.st[1] + i[2] * m->g.st[2] + i[3] * m->g.st[3];
}

static bool subpixel(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                     bool to_space) {
  SubMap m = {.to_space = to_space};
  geo_init(&m.g, in[0]);
  m.bs = kattr_int(kx, attrs, "block_size");
  m.crd = strcmp(kattr_str(kx, attrs, "mode"), "CRD") == 0;
  if (!kernel_attrs_ok(kx) || nn_layout_attr(&kx->rel, attrs, "layout", "NCHW", m.pos) != 4 ||
      !kernel_attrs_ok(kx))
    return false;
  m.oc = out->shape[m.pos[1]];
  gather(in[0], out, subpixel_map, &m, NULL);
  return true;
}

static bool k_depth_to_space(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                             int nout, RtTensor *const *out) {
  return subpixel(kx, in, attrs, out[0], true);
}

static bool k_space_to_depth(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                             int nout, RtTensor *const *out) {
  return subpixel(kx, in, attrs, out[0], false);
}

/* ───────────────────────── batch / space ───────────────────────── */

typedef struct BlockMap {
  Geo g;
  int m;
  int64_t block[NN_MAX_PAIRS], pairs[NN_MAX_PAIRS][2], out_batch;
} BlockMap;

/* space_to_batch_nd: output batch = off * N + n (off row-major over the
 * block offsets), spatial i_k reads the padded position i_k * B_k + j_k. */
static int64_t to_batch_map(const int64_t *o, const void *user) {
  const BlockMap *m = user;
  const RtTensor *x = m->g.x;
  int64_t N = x->shape[0], off = o[0] / N, j = (o[0] % N) * m->g.st[0];
  for (int k = m->m - 1; k >= 0; k--) {
    int64_t p = o[1 + k] * m->block[k] + off % m->block[k] - m->pairs[k][0];
    off /= m->block[k];
    if (p < 0 || p >= x->shape[1 + k]) return -1;
    j += p * m->g.st[1 + k];
  }
  for (int d = 1 + m->m; d < x->ndim; d++) j += o[d] * m->g.st[d];
  return j;
}

/* batch_to_space_nd: output (n, y_k) reads batch off * N' + n at
 * (y_k + crop_k) / B_k, off from the (y_k + crop_k) % B_k. */
static int64_t to_space_map(const int64_t *o, const void *user) {
  const BlockMap *m = user;
  int64_t off = 0, j = 0;
  for (int k = 0; k < m->m; k++) {
    int64_t y = o[1 + k] + m->pairs[k][0];
    off = off * m->block[k] + y % m->block[k];
    j += (y / m->block[k]) * m->g.st[1 + k];
  }
  j += (off * m->out_batch + o[0]) * m->g.st[0];
  for (int d = 1 + m->m; d < m->g.x->ndim; d++) j += o[d] * m->g.st[d];
  return j;
}

static bool blocks(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RtTensor *out,
                   bool to_batch) {
  BlockMap m;
  geo_init(&m.g, x);
  m.m = kattr_ints(kx, attrs, "block_shape", m.block, NN_MAX_PAIRS);
  m.out_batch = out->shape[0];
  if (!kernel_attrs_ok(kx) ||
      nn_attr_pairs(&kx->rel, attrs, to_batch ? "paddings" : "crops", m.pairs, NN_MAX_PAIRS) != m.m)
    return kernel_attrs_ok(kx) && kernel_fail(kx, "%s: block attributes", kx->op);
  uint64_t fill = 0;
  if (to_batch) double_bytes(kattr_float(kx, attrs, "pad_value"), x->dtype, &fill);
  gather(x, out, to_batch ? to_batch_map : to_space_map, &m, &fill);
  return kernel_attrs_ok(kx);
}

static bool k_space_to_batch_nd(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  return blocks(kx, in[0], attrs, out[0], true);
}

static bool k_batch_to_space_nd(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  return blocks(kx, in[0], attrs, out[0], false);
}

/* ───────────────────────────── dilate ───────────────────────────── */

typedef struct DilateMap {
  Geo g;
  int64_t s[TENSOR_MAX_RANK];
} DilateMap;

static int64_t dilate_map(const int64_t *o, const void *user) {
  const DilateMap *m = user;
  int64_t j = 0;
  for (int d = 0; d < m->g.x->ndim; d++) {
    if (o[d] % m->s[d]) return -1;
    j += o[d] / m->s[d] * m->g.st[d];
  }
  return j;
}

static bool k_dilate(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  DilateMap m;
  geo_init(&m.g, in[0]);
  int n = kattr_ints(kx, attrs, "strides", m.s, TENSOR_MAX_RANK);
  double v = kattr_float(kx, attrs, "dilation_value");
  if (!kernel_attrs_ok(kx)) return false;
  if (n != in[0]->ndim) return kernel_fail(kx, "nn.dilate: strides do not match the rank");
  uint64_t fill = 0;
  double_bytes(v, in[0]->dtype, &fill);
  gather(in[0], out[0], dilate_map, &m, &fill);
  return true;
}

/* ───────────────────────────── upsampling ───────────────────────────── */

enum { UP_NEAREST, UP_LINEAR, UP_CUBIC };
enum { CT_ASYMMETRIC, CT_ALIGN, CT_HALF };

typedef struct Up {
  int S, method, ct;
  int pos[5]; /* N, C, spatial */
  int64_t in[NN_MAX_SPATIAL], out[NN_MAX_SPATIAL];
} Up;

/* float32 source coordinate of output index o along spatial dim i. */
static float src_coord(const Up *u, int i, int64_t o) {
  float n = (float)u->in[i], m = (float)u->out[i], scale = n / m;
  if (u->ct == CT_ALIGN) return u->out[i] == 1 ? 0.0f : (n - 1.0f) / (m - 1.0f) * (float)o;
  if (u->ct == CT_HALF) return ((float)o + 0.5f) * scale - 0.5f;
  return scale * (float)o;
}

static int64_t clampi(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

static int64_t nearest(const Up *u, int i, int64_t o) {
  int64_t n = u->in[i], m = u->out[i];
  if (u->ct == CT_ASYMMETRIC && m % n == 0 && (double)(m / n) <= 1 / (1e-5 * (double)n + 1e-5))
    return clampi(o / (m / n), n);
  float v = src_coord(u, i, o);
  float r = u->ct == CT_ALIGN ? nearbyintf(v) : floorf(v + 1e-5f);
  return clampi((int64_t)r, n);
}

/* TVM's cubic weights for the fraction t (alpha -0.5), in float32. */
static void cubic_weights(float t, float w[4]) {
  const float a = -0.5f;
  float t2 = t * t, t3 = t * t * t;
  w[0] = a * (t3 - 2.0f * t2 + t);
  w[1] = (a + 2.0f) * t3 - (3.0f + a) * t2 + 1.0f;
  w[2] = -(a + 2.0f) * t3 + (3.0f + 2.0f * a) * t2 - a * t;
  w[3] = -a * t3 + a * t2;
}

typedef struct UpCx {
  const Up *u;
  const RtTensor *x;
  const float *xv; /* x as float32 */
  int64_t st[TENSOR_MAX_RANK], base;
  int64_t lo[NN_MAX_SPATIAL];
  float frac[NN_MAX_SPATIAL];
} UpCx;

/* Interpolation over spatial dims dim..S-1 (width innermost), with the
 * source indices of the dims before folded into base. */
static float interp(const UpCx *c, int dim, int64_t base) {
  const Up *u = c->u;
  if (dim == u->S) return c->xv[base];
  int64_t p = u->pos[2 + dim], n = c->x->shape[p];
  if (u->method == UP_LINEAR) {
    float a = interp(c, dim + 1, base + clampi(c->lo[dim], n) * c->st[p]);
    float b = interp(c, dim + 1, base + clampi(c->lo[dim] + 1, n) * c->st[p]);
    return a * (1.0f - c->frac[dim]) + b * c->frac[dim];
  }
  float w[4], s = 0;
  cubic_weights(c->frac[dim], w);
  for (int k = 0; k < 4; k++) {
    float v = interp(c, dim + 1, base + clampi(c->lo[dim] - 1 + k, n) * c->st[p]);
    s = k ? s + v * w[k] : v * w[k];
  }
  return s;
}

/* The value of output element o (multi-index) as float32. */
static float up_value(UpCx *c, const int64_t *o) {
  const Up *u = c->u;
  int64_t base = 0;
  for (int d = 0; d < c->x->ndim; d++) base += o[d] * c->st[d];
  for (int i = 0; i < u->S; i++) { /* the spatial terms are replaced */
    int p = u->pos[2 + i];
    base -= o[p] * c->st[p];
    if (u->method == UP_NEAREST) {
      base += nearest(u, i, o[p]) * c->st[p];
      continue;
    }
    float v = src_coord(u, i, o[p]), fl = floorf(v);
    c->lo[i] = (int64_t)fl, c->frac[i] = v - fl;
  }
  return u->method == UP_NEAREST ? c->xv[base] : interp(c, 0, base);
}

/* upsampling and upsampling3d: the attributes, then every output element
 * in float32 (up_value), stored in the dtype. */
static bool upsample(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RtTensor *out, int S) {
  Up u = {.S = S};
  const char *m = kattr_str(kx, attrs, "method");
  u.method = !strcmp(m, "nearest_neighbor") ? UP_NEAREST
             : !strcmp(m, "bicubic")        ? UP_CUBIC
                                            : UP_LINEAR;
  if (S == 2) {
    u.ct = kattr_bool(kx, attrs, "align_corners") ? CT_ALIGN : CT_ASYMMETRIC;
  } else {
    const char *ct = kattr_str(kx, attrs, "coordinate_transformation_mode");
    u.ct = !strcmp(ct, "align_corners") ? CT_ALIGN
           : !strcmp(ct, "asymmetric")  ? CT_ASYMMETRIC
                                        : CT_HALF;
  }
  if (!kernel_attrs_ok(kx) ||
      nn_layout_attr(&kx->rel, attrs, "layout", S == 2 ? "NCHW" : "NCDHW", u.pos) < 0 ||
      !kernel_attrs_ok(kx))
    return false;
  for (int i = 0; i < S; i++) u.in[i] = x->shape[u.pos[2 + i]], u.out[i] = out->shape[u.pos[2 + i]];
  UpCx c = {.u = &u, .x = x};
  kernel_strides(x->ndim, x->shape, c.st);
  float *xv = lane_array(kx, x, LANE_F32), *ov = kernel_alloc(kx, (size_t)out->numel * 4 + 4);
  if (!xv || !ov) return free(xv), free(ov), false;
  c.xv = xv;
  int64_t o[TENSOR_MAX_RANK] = {0};
  for (int64_t i = 0; i < out->numel; i++) {
    ov[i] = up_value(&c, o);
    for (int d = out->ndim - 1; d >= 0 && ++o[d] == out->shape[d]; d--) o[d] = 0;
  }
  lane_store(LANE_F32, out->dtype, ov, out->data, 0, out->numel);
  free(xv), free(ov);
  return true;
}

static bool k_upsampling(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  return upsample(kx, in[0], attrs, out[0], 2);
}

static bool k_upsampling3d(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  return upsample(kx, in[0], attrs, out[0], 3);
}

const KernelDef kernels_family_nn_layout[] = {
    {"nn.pad", k_pad},
    {"nn.mirror_pad", k_mirror_pad},
    {"nn.upsampling", k_upsampling},
    {"nn.upsampling3d", k_upsampling3d},
    {"nn.depth_to_space", k_depth_to_space},
    {"nn.space_to_depth", k_space_to_depth},
    {"nn.space_to_batch_nd", k_space_to_batch_nd},
    {"nn.batch_to_space_nd", k_batch_to_space_nd},
    {"nn.dilate", k_dilate},
    {NULL, NULL},
};
