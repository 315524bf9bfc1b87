/* kernels_vision.c — reference kernels of the vision ops:
 * vision.get_valid_counts, vision.non_max_suppression, vision.roi_align,
 * vision.roi_align_grad (its adjoint) and vision.multibox_prior.
 *
 * Semantics are TVM 0.10's CPU implementations (topi/vision):
 * - get_valid_counts keeps, in order, the boxes whose score is above the
 *   threshold and whose class id (when id_index >= 0) is not negative, and
 *   fills the rest with -1.
 * - non_max_suppression sorts the first valid_count boxes by score (a
 *   stable sort, descending), keeps top_k of them, and walks them in that
 *   order: a box with a positive score survives unless a surviving box
 *   before it (of its class, unless force_suppress) overlaps it with
 *   IoU >= iou_threshold; at most max_output_size survive (< 0: all); a box
 *   with a score <= 0 stays where it is without counting.  With
 *   iou_threshold <= 0 the boxes are kept in input order.  With
 *   return_indices the result is the survivors' `indices` entries moved to
 *   the front and their count; otherwise the boxes (invalid_to_bottom moves
 *   the rows whose column 0 is >= 0 to the top).  The IoU is computed in the
 *   data's float type, in TOPI's order.
 * - all_class_non_max_suppression is ONNX's NonMaxSuppression: per batch
 *   and class, the boxes with score > score_threshold in descending score
 *   order (ties: lower index first), each kept unless it overlaps a kept one
 *   by IoU > iou_threshold (in double; boxes of no area overlap nothing), at
 *   most max_output_boxes_per_class of them (<= 0: none); corners in either
 *   order, or centre and size with center_point_box.
 * - roi_align averages (or takes the maximum of) bilinear samples on a grid
 *   of each bin; a ROI is at least 1x1 pixels (but with aligned, whose
 *   corners move by -0.5 pixel: torchvision's aligned=True).
 * - multibox_prior computes in float32 with TVM's constant folding (the
 *   sizes times H / W in double, rounded once).
 * Inputs TVM would read out of bounds with (a valid_count above the number
 * of boxes, a ROI's batch index outside the batch) are run-time errors. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/image.h"

static int64_t sat_i32(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return 2147483647;
  if (v <= -2147483648.0) return -2147483647 - 1;
  return (int64_t)v;
}

typedef struct RoiAlign {
  int64_t ph, pw, ratio;
  double scale;
  bool avg, nchw, aligned;
} RoiAlign;

/* A ROI's batch index, checked; -1 after kernel_fail. */
static int64_t roi_batch(KernelCtx *kx, double v, int64_t r, int64_t batch) {
  int64_t bi = sat_i32(v);
  if (bi >= 0 && bi < batch) return bi;
  kernel_fail(kx, "%s: roi %lld has batch index %lld, out of range for a batch of %lld", kx->op,
              (long long)r, (long long)bi, (long long)batch);
  return -1;
}

/* A sampling grid bounded so that a kernel finishes. */
static bool grid_ok(KernelCtx *kx, int64_t gh, int64_t gw, int64_t r) {
  if (gh <= (1 << 12) && gw <= (1 << 12)) return true;
  return kernel_fail(
      kx, "%s: roi %lld needs a sampling grid of %lld x %lld per bin (at most 4096 x 4096)", kx->op,
      (long long)r, (long long)gh, (long long)gw);
}

#define REAL float
#define REAL_MAX FLT_MAX
#define RFN(name) name##_f32
#include "kernels/kernels_vision_real.h"
#undef REAL
#undef REAL_MAX
#undef RFN
#define REAL double
#define REAL_MAX DBL_MAX
#define RFN(name) name##_f64
#include "kernels/kernels_vision_real.h"
#undef REAL
#undef REAL_MAX
#undef RFN

/* ───────────────────────────── get_valid_counts ───────────────────────────── */

static void fill_row(double *row, int64_t k, double v) {
  for (int64_t i = 0; i < k; i++) row[i] = v;
}

/* TOPI's hybrid_get_valid_counts: rows copied in order (as double lanes,
 * which hold every float dtype exactly), the rest -1. */
static bool k_get_valid_counts(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  int64_t si = kattr_int(kx, attrs, "score_index"), ii = kattr_int(kx, attrs, "id_index");
  if (!kernel_attrs_ok(kx)) return false;
  const RtTensor *x = in[0];
  int64_t b = x->shape[0], n = x->shape[1], k = x->shape[2];
  double thr = rt_get_f64(in[1], 0);
  double *d = lane_array(kx, x, LANE_F64);
  double *o = d ? kernel_alloc(kx, sizeof(double) * (size_t)x->numel) : NULL;
  int64_t *cnt = o ? kernel_alloc(kx, sizeof(int64_t) * (size_t)(b + b * n)) : NULL;
  if (!cnt) return free(d), free(o), false;
  int64_t *ix = cnt + b;
  for (int64_t i = 0; i < b; i++) {
    int64_t vc = 0;
    for (int64_t j = 0; j < n; j++) {
      const double *row = d + (i * n + j) * k;
      if (row[si] > thr && (ii < 0 || row[ii] >= 0)) {
        memcpy(o + (i * n + vc) * k, row, sizeof(double) * (size_t)k);
        ix[i * n + vc++] = j;
      }
      if (j >= vc) fill_row(o + (i * n + j) * k, k, -1), ix[i * n + j] = -1;
    }
    cnt[i] = vc;
  }
  lane_store(LANE_I64, out[0]->dtype, cnt, out[0]->data, 0, b);
  lane_store(LANE_F64, out[1]->dtype, o, out[1]->data, 0, x->numel);
  lane_store(LANE_I64, out[2]->dtype, ix, out[2]->data, 0, b * n);
  free(d), free(o), free(cnt);
  return true;
}

/* ───────────────────────────── non_max_suppression ───────────────────────────── */

typedef struct Nms {
  int64_t n, k, cs, si, ii, top_k, max_out;
  bool force, f64;
  double iou_thr;
} Nms;

/* Sort keys: descending score, then ascending position (a stable sort);
 * NaN scores last. */
typedef struct ScoreKey {
  double s;
  int64_t j;
} ScoreKey;

static int by_score(const void *pa, const void *pb) {
  const ScoreKey *a = pa, *b = pb;
  bool na = a->s != a->s, nb = b->s != b->s;
  if (na != nb) return na ? 1 : -1;
  if (!na && a->s != b->s) return a->s > b->s ? -1 : 1;
  return a->j < b->j ? -1 : a->j > b->j;
}

/* The box order of one batch entry: the first vc sorted by score, then the
 * rest in place (TVM's argsort_nms). */
static void sort_boxes(const Nms *m, const double *d, int64_t vc, ScoreKey *keys, int64_t *order) {
  for (int64_t j = 0; j < vc; j++) keys[j].s = d[j * m->k + m->si], keys[j].j = j;
  qsort(keys, (size_t)vc, sizeof *keys, by_score);
  for (int64_t j = 0; j < m->n; j++) order[j] = j < vc ? keys[j].j : j;
}

static double iou(const Nms *m, const double *a, const double *b) {
  return m->f64 ? iou_f64(a + m->cs, b + m->cs) : (double)iou_f32(a + m->cs, b + m->cs);
}

/* Whether box j survives the boxes before it in o (rows of k values). */
static bool survives(const Nms *m, const double *o, int64_t j) {
  const double *a = o + j * m->k;
  for (int64_t q = 0; q < j; q++) {
    const double *b = o + q * m->k;
    if (!(b[m->si] > 0) || (m->ii >= 0 && !(b[m->ii] >= 0))) continue;
    if (!m->force && m->ii >= 0 && a[m->ii] != b[m->ii]) continue;
    if (iou(m, a, b) >= m->iou_thr) return false;
  }
  return true;
}

/* TOPI's hybrid_nms for one batch entry: d, o are (n, k) rows, bi the box
 * index of each output row (-1: none). */
static void nms_one(const Nms *m, const double *d, int64_t vc, ScoreKey *keys, int64_t *order,
                    double *o, int64_t *bi) {
  int64_t k = m->k;
  if (m->iou_thr > 0 && vc > 0) {
    sort_boxes(m, d, vc, keys, order);
    int64_t nkeep = m->top_k > 0 && m->top_k < vc ? m->top_k : vc;
    for (int64_t j = 0; j < vc; j++) {
      bool kept = j < nkeep;
      if (kept)
        memcpy(o + j * k, d + order[j] * k, sizeof(double) * (size_t)k);
      else
        fill_row(o + j * k, k, -1);
      bi[j] = kept ? order[j] : -1;
    }
    int64_t nvalid = 0;
    for (int64_t j = 0; j < vc; j++) {
      if (nvalid == m->max_out || (o[j * k + m->si] > 0 && !survives(m, o, j)))
        fill_row(o + j * k, k, -1), bi[j] = -1;
      else if (o[j * k + m->si] > 0)
        nvalid++;
    }
  } else if (!(m->iou_thr > 0)) {
    memcpy(o, d, sizeof(double) * (size_t)(vc * k));
    for (int64_t j = 0; j < vc; j++) bi[j] = j;
  }
  for (int64_t j = vc; j < m->n; j++) fill_row(o + j * k, k, -1), bi[j] = -1;
}

/* return_indices: the valid indices moved to the front (TOPI's
 * hybrid_rearrange_indices_out, whose odd rule for entries beyond ±n is
 * kept); *count gets their number. */
static void compact_indices(int64_t n, const int64_t *bi, int64_t *out, int64_t *count) {
  int64_t vi = 0;
  for (int64_t j = 0; j < n; j++) {
    if (bi[j] >= 0 && vi < n) out[vi++] = bi[j];
    if ((bi[j] > n || bi[j] < -n) && vi < n) out[vi++] = 0;
    if (j >= vi) out[j] = -1;
  }
  *count = vi;
}

/* invalid_to_bottom: rows whose column 0 is >= 0 moved to the top. */
static void compact_rows(int64_t n, int64_t k, const double *o, double *out) {
  int64_t vi = 0;
  for (int64_t j = 0; j < n; j++) {
    if (o[j * k] >= 0) memcpy(out + vi++ * k, o + j * k, sizeof(double) * (size_t)k);
    if (j >= vi) fill_row(out + j * k, k, -1);
  }
}

/* The attributes and scalar inputs; false after kernel_fail. */
static bool nms_params(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, Nms *m) {
  m->n = in[0]->shape[1], m->k = in[0]->shape[2];
  m->cs = kattr_int(kx, attrs, "coord_start"), m->si = kattr_int(kx, attrs, "score_index");
  m->ii = kattr_int(kx, attrs, "id_index"), m->top_k = kattr_int(kx, attrs, "top_k");
  m->force = kattr_bool(kx, attrs, "force_suppress");
  m->max_out = rt_get_i64(in[3], 0), m->iou_thr = rt_get_f64(in[4], 0);
  m->f64 = in[0]->dtype == DT_FLOAT64;
  return kernel_attrs_ok(kx);
}

/* Every valid count within [0, n]. */
static bool counts_ok(KernelCtx *kx, const int64_t *vc, int64_t b, int64_t n) {
  for (int64_t i = 0; i < b; i++)
    if (vc[i] < 0 || vc[i] > n)
      return kernel_fail(kx, "%s: valid_count %lld of batch entry %lld is outside [0, %lld]",
                         kx->op, (long long)vc[i], (long long)i, (long long)n);
  return true;
}

/* The outputs of non_max_suppression from the rows o and box indices bi. */
static void nms_outputs(KernelCtx *kx, const Nms *m, const Attrs *attrs, RtTensor *const *in,
                        int64_t b, double *o, int64_t *bi, RtTensor *const *out, int64_t *tmp) {
  int64_t n = m->n, k = m->k, *ix = lane_array(kx, in[2], LANE_I64);
  if (!ix) return;
  if (kattr_bool(kx, attrs, "return_indices")) {
    for (int64_t i = 0; i < b; i++) {
      for (int64_t j = 0; j < n; j++)
        if (bi[i * n + j] >= 0 && bi[i * n + j] < n) bi[i * n + j] = ix[i * n + bi[i * n + j]];
      compact_indices(n, bi + i * n, tmp + i * n, &tmp[b * n + i]);
    }
    lane_store(LANE_I64, out[0]->dtype, tmp, out[0]->data, 0, b * n);
    lane_store(LANE_I64, out[1]->dtype, tmp + b * n, out[1]->data, 0, b);
  } else {
    double *rows = o;
    if (kattr_bool(kx, attrs, "invalid_to_bottom")) {
      rows = (double *)(tmp + b * n + b);
      for (int64_t i = 0; i < b; i++) compact_rows(n, k, o + i * n * k, rows + i * n * k);
    }
    lane_store(LANE_F64, out[0]->dtype, rows, out[0]->data, 0, b * n * k);
  }
  free(ix);
}

/* non_max_suppression over the batch: one scratch buffer for the rows, box
 * indices, sort order and keys; the outputs then by return_indices. */
static bool k_nms(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                  RtTensor *const *out) {
  Nms m;
  if (!nms_params(kx, in, attrs, &m)) return false;
  int64_t b = in[0]->shape[0], n = m.n, k = m.k;
  double *d = lane_array(kx, in[0], LANE_F64);
  int64_t *vc = d ? lane_array(kx, in[1], LANE_I64) : NULL;
  size_t rows = sizeof(double) * (size_t)(b * n * k), ints = sizeof(int64_t) * (size_t)(b * n);
  char *buf = vc && counts_ok(kx, vc, b, n)
                  ? kernel_alloc(kx, 2 * rows + 3 * ints + sizeof(int64_t) * (size_t)b +
                                         sizeof(ScoreKey) * (size_t)n)
                  : NULL;
  if (buf) {
    double *o = (double *)buf;
    int64_t *bi = (int64_t *)(buf + rows), *order = bi + b * n, *tmp = order + b * n;
    ScoreKey *keys = (ScoreKey *)((char *)(tmp + b * n + b) + rows);
    for (int64_t i = 0; i < b; i++)
      nms_one(&m, d + i * n * k, vc[i], keys, order, o + i * n * k, bi + i * n);
    nms_outputs(kx, &m, attrs, in, b, o, bi, out, tmp);
  }
  free(d), free(vc), free(buf);
  return buf != NULL && !kx->err[0];
}

/* ───────────────────────────── roi_align ───────────────────────────── */

/* roi_align's attributes; false after kernel_fail. */
static bool roi_params(KernelCtx *kx, const Attrs *attrs, RoiAlign *a) {
  int64_t ps[2];
  kattr_ints(kx, attrs, "pooled_size", ps, 2);
  a->ph = ps[0], a->pw = ps[1], a->ratio = kattr_int(kx, attrs, "sample_ratio");
  a->scale = kattr_float(kx, attrs, "spatial_scale");
  a->avg = strcmp(kattr_str(kx, attrs, "mode"), "avg") == 0;
  a->nchw = strcmp(kattr_str(kx, attrs, "layout"), "NCHW") == 0;
  a->aligned = kattr_bool(kx, attrs, "aligned");
  return kernel_attrs_ok(kx);
}

/* The lane of data x and rois r: double when either is float64. */
static Lane roi_lane(const RtTensor *x, const RtTensor *r) {
  return x->dtype == DT_FLOAT64 || r->dtype == DT_FLOAT64 ? LANE_F64 : LANE_F32;
}

/* roi_align in the lane of the float type (double when data or rois are
 * float64). */
static bool k_roi_align(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  RoiAlign a;
  if (!roi_params(kx, attrs, &a)) return false;
  Lane l = roi_lane(in[0], in[1]);
  void *x = lane_array(kx, in[0], l), *r = x ? lane_array(kx, in[1], l) : NULL;
  void *dst = r ? kernel_alloc(kx, lane_bytes(l) * (size_t)out[0]->numel) : NULL;
  int64_t nr = in[1]->shape[0];
  bool ok =
      dst && (l == LANE_F64 ? roi_walk_f64(kx, &a, in[0], x, r, nr, &(RoiIo_f64){.dst = dst})
                            : roi_walk_f32(kx, &a, in[0], x, r, nr, &(RoiIo_f32){.dst = dst}));
  if (ok) lane_store(l, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
  free(x), free(r), free(dst);
  return ok;
}

/* roi_align_grad(dy, x, rois) → dx, accumulated into zeros in roi_align's
 * lane. */
static bool k_roi_align_grad(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                             int nout, RtTensor *const *out) {
  RoiAlign a;
  if (!roi_params(kx, attrs, &a)) return false;
  Lane l = roi_lane(in[1], in[2]);
  size_t bytes = lane_bytes(l) * (size_t)out[0]->numel;
  void *dy = lane_array(kx, in[0], l), *x = dy ? lane_array(kx, in[1], l) : NULL;
  void *r = x ? lane_array(kx, in[2], l) : NULL, *dst = r ? kernel_alloc(kx, bytes) : NULL;
  if (dst) memset(dst, 0, bytes);
  int64_t nr = in[2]->shape[0];
  bool ok = dst && (l == LANE_F64
                        ? roi_walk_f64(kx, &a, in[1], x, r, nr, &(RoiIo_f64){.dx = dst, .dy = dy})
                        : roi_walk_f32(kx, &a, in[1], x, r, nr, &(RoiIo_f32){.dx = dst, .dy = dy}));
  if (ok) lane_store(l, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
  free(dy), free(x), free(r), free(dst);
  return ok;
}

/* ───────────────────────────── multibox_prior ───────────────────────────── */

enum { MB_MAX = 64 };

/* The half width and height of anchor k: TVM folds the constant parts in
 * double (sizes times H / W) and computes the square roots in float32. */
static void anchor_half(const double *sz, int ns, const double *ra, int k, int64_t h, int64_t w,
                        float *hw, float *hh) {
  if (k < ns) {
    *hw = (float)(sz[k] * (double)h / (double)w / 2.0);
    *hh = (float)(sz[k] / 2.0);
    return;
  }
  float sq = sqrtf((float)ra[k - ns + 1]);
  *hw = (float)(sz[0] * (double)h / (double)w) * sq / 2.0f;
  *hh = (float)sz[0] / sq / 2.0f;
}

/* topi.clip(v, 0, 1): max(min(v, 1), 0) with TVM's selects. */
static float clip01(float v) {
  v = v < 1.0f ? v : 1.0f;
  return v > 0.0f ? v : 0.0f;
}

/* TOPI's hybrid_multibox_prior: sizes[k] for k < len(sizes), then the
 * other ratios with sizes[0]; centres at (i + offset) * step. */
static bool k_multibox_prior(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                             int nout, RtTensor *const *out) {
  double sz[MB_MAX], ra[MB_MAX], st[2], of[2];
  int ns = image_attr_floats(&kx->rel, attrs, "sizes", sz, MB_MAX);
  int nr = image_attr_floats(&kx->rel, attrs, "ratios", ra, MB_MAX);
  image_attr_floats(&kx->rel, attrs, "steps", st, 2),
      image_attr_floats(&kx->rel, attrs, "offsets", of, 2);
  bool clip = kattr_bool(kx, attrs, "clip");
  if (!kernel_attrs_ok(kx)) return false;
  int64_t h = in[0]->shape[2], w = in[0]->shape[3], na = ns + nr - 1;
  float sh = st[0] > 0 ? (float)st[0] : (float)(1.0 / (double)h);
  float sw = st[1] > 0 ? (float)st[1] : (float)(1.0 / (double)w);
  float *dst = kernel_alloc(kx, sizeof(float) * (size_t)out[0]->numel);
  if (!dst) return false;
  for (int64_t i = 0; i < h; i++)
    for (int64_t j = 0; j < w; j++)
      for (int k = 0; k < na; k++) {
        float cy = ((float)i + (float)of[0]) * sh, cx = ((float)j + (float)of[1]) * sw, hw, hh;
        anchor_half(sz, ns, ra, k, h, w, &hw, &hh);
        float box[4] = {cx - hw, cy - hh, cx + hw, cy + hh}, *o = dst + ((i * w + j) * na + k) * 4;
        for (int q = 0; q < 4; q++) o[q] = clip ? clip01(box[q]) : box[q];
      }
  lane_store(LANE_F32, out[0]->dtype, dst, out[0]->data, 0, out[0]->numel);
  free(dst);
  return true;
}

/* ───────────────────── all_class_non_max_suppression ───────────────────── */

typedef struct Box {
  double y0, x0, y1, x1;
} Box;

static Box read_box(const double *b, bool center) {
  if (center) return (Box){b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return (Box){fmin(b[0], b[2]), fmin(b[1], b[3]), fmax(b[0], b[2]), fmax(b[1], b[3])};
}

static bool overlaps(const Box *a, const Box *b, double thr) {
  double iw = fmin(a->x1, b->x1) - fmax(a->x0, b->x0), ih = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
  if (iw <= 0 || ih <= 0) return false;
  double aa = (a->x1 - a->x0) * (a->y1 - a->y0), ab = (b->x1 - b->x0) * (b->y1 - b->y0);
  double inter = iw * ih, uni = aa + ab - inter;
  if (aa <= 0 || ab <= 0 || uni <= 0) return false;
  return inter / uni > thr;
}

typedef struct Cand {
  double score;
  int64_t index;
} Cand;

/* Descending score; ties: lower index first. */
static int by_cand(const void *pa, const void *pb) {
  const Cand *a = pa, *b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* One batch entry and class: the kept boxes' indices into keep; count. */
static int64_t nms_class(const Box *boxes, const double *sc, int64_t n, int64_t maxo, double iou,
                         double sthr, Cand *cand, int64_t *keep) {
  int64_t m = 0, k = 0;
  for (int64_t i = 0; i < n; i++)
    if (sc[i] > sthr) cand[m++] = (Cand){sc[i], i};
  qsort(cand, (size_t)m, sizeof *cand, by_cand);
  for (int64_t i = 0; i < m && k < maxo; i++) {
    bool drop = false;
    for (int64_t j = 0; j < k && !drop; j++)
      drop = overlaps(&boxes[cand[i].index], &boxes[keep[j]], iou);
    if (!drop) keep[k++] = cand[i].index;
  }
  return k;
}

static bool k_all_class_nms(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  bool center = kattr_int(kx, attrs, "center_point_box") != 0;
  if (!kernel_attrs_ok(kx)) return false;
  int64_t nb = in[0]->shape[0], n = in[0]->shape[1], nc = in[1]->shape[1];
  double *bx = lane_array(kx, in[0], LANE_F64), *sc = lane_array(kx, in[1], LANE_F64);
  double *thr = lane_array(kx, in[3], LANE_F64), *sthr = lane_array(kx, in[4], LANE_F64);
  int64_t *maxo = lane_array(kx, in[2], LANE_I64);
  Box *boxes = malloc(sizeof(Box) * (size_t)(n ? n : 1));
  Cand *cand = malloc(sizeof(Cand) * (size_t)(n + 1));
  int64_t *keep = malloc(sizeof(int64_t) * (size_t)(n + 1)), *o = out[0]->data, total = 0;
  bool ok = bx && sc && thr && sthr && maxo && boxes && cand && keep;
  memset(o, 0, (size_t)rt_tensor_nbytes(out[0]));
  for (int64_t b = 0; ok && b < nb; b++) {
    for (int64_t i = 0; i < n; i++) boxes[i] = read_box(bx + (b * n + i) * 4, center);
    for (int64_t c = 0; c < nc; c++) {
      int64_t k = nms_class(boxes, sc + (b * nc + c) * n, n, *maxo, *thr, *sthr, cand, keep);
      for (int64_t j = 0; j < k; j++, total++)
        o[total * 3] = b, o[total * 3 + 1] = c, o[total * 3 + 2] = keep[j];
    }
  }
  if (ok) ((int64_t *)out[1]->data)[0] = total;
  free(bx), free(sc), free(thr), free(sthr), free(maxo), free(boxes), free(cand), free(keep);
  return ok || kernel_fail(kx, "%s: out of memory", kx->op);
}

const KernelDef kernels_family_vision[] = {
    {"vision.all_class_non_max_suppression", k_all_class_nms},
    {"vision.get_valid_counts", k_get_valid_counts},
    {"vision.non_max_suppression", k_nms},
    {"vision.roi_align", k_roi_align},
    {"vision.roi_align_grad", k_roi_align_grad},
    {"vision.multibox_prior", k_multibox_prior},
    {NULL, NULL},
};
