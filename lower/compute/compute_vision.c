/* compute_vision.c — the compute rule (lower/compute/compute.h) of vision.roi_align
 * (materialized).
 *
 * Operation for operation what the reference kernel computes
 * (kernels/kernels_vision_real.h, TOPI's order), in float32 (float64 when
 * the data or the rois are float64): per ROI its start, bin sizes and
 * sampling grid (sample_ratio, or ceil(roi size / pooled size) per axis),
 * then per output bin the average (each sample divided by the count, then
 * added) or the maximum (from -max) of bilinear samples, a sample being 0
 * outside [-1, size] and the taps beyond the last row or column 0; the
 * first tap's product starts the sum (0 + -0 would be +0).  So both modes
 * agree bit for bit without the JIT's contraction.
 *
 * The kernel fails on a ROI whose batch index is outside the batch or
 * whose grid exceeds 4096 x 4096, before it samples it; the rule reads the
 * data at the ROI's index (an index of -1 when the grid is too large)
 * before the ROI's bins, so compiled code fails its bounds check there
 * too.  The data's channels and spatial dims must be positive constants. */
#include <float.h>
#include <string.h>

#include "lower/compute/compute.h"

enum { GRID_MAX = 1 << 12 };

typedef struct Roi {
  const LTensor *x, *rois;
  DType rt; /* the computation's float type */
  bool nchw, avg, aligned;
  int64_t ph, pw, ratio, h, w;
  double scale;
  /* per ROI (expressions of its row r) */
  PrimExpr *r, *start_h, *start_w, *bin_h, *bin_w, *grid_h, *grid_w;
} Roi;

static PrimExpr *lit(LowerCx *L, const Roi *k, double v) { return lc_lit(L, k->rt, v); }
static PrimExpr *dvd(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_DIV, a, b); }
static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}
/* TVM's max / min: a > b ? a : b. */
static PrimExpr *vmax(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  return sel(L, lc_bin(L, PB_GT, a, b), a, b);
}
static PrimExpr *vmin(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  return sel(L, lc_bin(L, PB_LT, a, b), a, b);
}

/* Column j of ROI r, in the computation's type. */
static PrimExpr *roi_col(LowerCx *L, const Roi *k, int j) {
  PrimExpr *idx[2] = {k->r, lc_int(L, j)};
  return lc_cast(L, k->rt, lc_at(L, k->rois, idx));
}

/* The grid size of an axis: sample_ratio, or ceil(size / pooled) as int32. */
static PrimExpr *grid_of(LowerCx *L, const Roi *k, PrimExpr *size, int64_t pooled) {
  if (k->ratio > 0) return lc_int(L, k->ratio);
  PrimExpr *q = lc_cast(L, DT_FLOAT64, dvd(L, size, lit(L, k, (double)pooled)));
  return lc_cast(L, DT_INT32, lc_call(L, PI_CEIL, q, NULL, NULL));
}

/* The kernel's roi_of. */
static void roi_of(LowerCx *L, Roi *k) {
  PrimExpr *sc = lit(L, k, k->scale); /* (REAL)scale: lc_lit rounds to float32 */
  PrimExpr *sw = lc_times(L, roi_col(L, k, 1), sc), *sh = lc_times(L, roi_col(L, k, 2), sc);
  PrimExpr *ew = lc_times(L, roi_col(L, k, 3), sc), *eh = lc_times(L, roi_col(L, k, 4), sc);
  PrimExpr *rh = vmax(L, lc_minus(L, eh, sh), lit(L, k, 1)),
           *rw = vmax(L, lc_minus(L, ew, sw), lit(L, k, 1));
  if (k->aligned) {
    PrimExpr *half = lit(L, k, 0.5);
    sw = lc_minus(L, sw, half), sh = lc_minus(L, sh, half);
    ew = lc_minus(L, ew, half), eh = lc_minus(L, eh, half);
    rh = lc_minus(L, eh, sh), rw = lc_minus(L, ew, sw);
  }
  k->start_h = sh, k->start_w = sw;
  k->bin_h = dvd(L, rh, lit(L, k, (double)k->ph)), k->bin_w = dvd(L, rw, lit(L, k, (double)k->pw));
  k->grid_h = grid_of(L, k, rh, k->ph), k->grid_w = grid_of(L, k, rw, k->pw);
}

/* The data at (roi's image, channel c, row yi, column xi). */
static PrimExpr *pixel(LowerCx *L, const Roi *k, PrimExpr *b, PrimExpr *c, PrimExpr *yi,
                       PrimExpr *xi) {
  PrimExpr *idx[4] = {b, c, yi, xi};
  if (!k->nchw) idx[1] = yi, idx[2] = xi, idx[3] = c;
  return lc_cast(L, k->rt, lc_at(L, k->x, idx));
}

/* The kernel's roi_sample at (y, x): bilinear, 0 outside [-1, size]. */
static PrimExpr *sample(LowerCx *L, const Roi *k, PrimExpr *b, PrimExpr *c, PrimExpr *y,
                        PrimExpr *x) {
  PrimExpr *hm = lit(L, k, (double)(k->h - 1)), *wm = lit(L, k, (double)(k->w - 1));
  PrimExpr *out =
      lc_bin(L, PB_OR, lc_bin(L, PB_LT, y, lit(L, k, -1)), lc_bin(L, PB_LT, x, lit(L, k, -1)));
  out = lc_bin(L, PB_OR, out, lc_bin(L, PB_GT, y, lit(L, k, (double)k->h)));
  out = lc_bin(L, PB_OR, out, lc_bin(L, PB_GT, x, lit(L, k, (double)k->w)));
  PrimExpr *yc = vmin(L, vmax(L, y, lit(L, k, 0)), hm), *xc = vmin(L, vmax(L, x, lit(L, k, 0)), wm);
  PrimExpr *y0 = lc_cast(L, DT_INT32, lc_call(L, PI_FLOOR, yc, NULL, NULL));
  PrimExpr *x0 = lc_cast(L, DT_INT32, lc_call(L, PI_FLOOR, xc, NULL, NULL));
  PrimExpr *wyh = lc_minus(L, yc, lc_cast(L, k->rt, y0)),
           *wxh = lc_minus(L, xc, lc_cast(L, k->rt, x0));
  PrimExpr *wy[2] = {lc_minus(L, lit(L, k, 1), wyh), wyh},
           *wx[2] = {lc_minus(L, lit(L, k, 1), wxh), wxh};
  PrimExpr *val = NULL;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      PrimExpr *yp = lc_plus(L, y0, lc_int(L, j)), *xp = lc_plus(L, x0, lc_int(L, i));
      PrimExpr *in = lc_bin(L, PB_AND, lc_bin(L, PB_LE, yp, lc_int(L, k->h - 1)),
                            lc_bin(L, PB_LE, xp, lc_int(L, k->w - 1)));
      PrimExpr *yl = vmin(L, yp, lc_int(L, k->h - 1)), *xl = vmin(L, xp, lc_int(L, k->w - 1));
      PrimExpr *t = sel(L, in, lc_times(L, lc_times(L, wx[i], wy[j]), pixel(L, k, b, c, yl, xl)),
                        lit(L, k, 0));
      val = val ? lc_plus(L, val, t) : t;
    }
  return sel(L, out, lit(L, k, 0), val);
}

/* One output bin (py, px) of channel c: the samples' average or maximum,
 * into acc, then stored at oi. */
static void bin(LowerCx *L, const Roi *k, PrimExpr *b, PrimExpr *c, PrimExpr *py, PrimExpr *px,
                Buffer *out, PrimExpr **oi) {
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0);
  Buffer *acc = lc_alloc(L, "acc", k->rt, 1, &one);
  double lowest = k->rt == DT_FLOAT32 ? -(double)FLT_MAX : -DBL_MAX;
  lc_store(L, acc, 1, &zero, lit(L, k, k->avg ? 0 : lowest));
  PrimExpr *sh = lc_plus(L, k->start_h, lc_times(L, lc_cast(L, k->rt, py), k->bin_h));
  PrimExpr *sw = lc_plus(L, k->start_w, lc_times(L, lc_cast(L, k->rt, px), k->bin_w));
  PrimExpr *count = lc_cast(L, k->rt, lc_times(L, k->grid_h, k->grid_w));
  TirVar *iy = lc_tvar(L, "iy", k->grid_h), *ix = lc_tvar(L, "ix", k->grid_w);
  PrimExpr *half = lit(L, k, 0.5);
  PrimExpr *y =
      lc_plus(L, sh,
              dvd(L, lc_times(L, lc_plus(L, lc_cast(L, k->rt, lc_var(L, iy)), half), k->bin_h),
                  lc_cast(L, k->rt, k->grid_h)));
  PrimExpr *x =
      lc_plus(L, sw,
              dvd(L, lc_times(L, lc_plus(L, lc_cast(L, k->rt, lc_var(L, ix)), half), k->bin_w),
                  lc_cast(L, k->rt, k->grid_w)));
  PrimExpr *v = sample(L, k, b, c, y, x), *cur = lc_load(L, acc, 1, &zero);
  lc_open(L);
  lc_open(L);
  lc_store(L, acc, 1, &zero, k->avg ? lc_plus(L, cur, dvd(L, v, count)) : vmax(L, cur, v));
  lc_for(L, LOOP_RANGE, ix, k->grid_w, lc_close(L));
  lc_for(L, LOOP_RANGE, iy, k->grid_h, lc_close(L));
  lc_store(L, out, 4, oi, lc_load(L, acc, 1, &zero));
}

/* The ROI's image: its index (saturated to int32), or -1 when its grid is
 * too large; read once (element 0 of the image) so a bad ROI fails. */
static PrimExpr *roi_image(LowerCx *L, const Roi *k) {
  PrimExpr *bi = lc_cast(L, DT_INT32, lc_cast(L, DT_FLOAT64, roi_col(L, k, 0)));
  PrimExpr *g = lc_int(L, GRID_MAX);
  PrimExpr *ok = lc_bin(L, PB_AND, lc_bin(L, PB_LE, k->grid_h, g), lc_bin(L, PB_LE, k->grid_w, g));
  bi = sel(L, ok, bi, lc_int(L, -1));
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0);
  Buffer *chk = lc_alloc(L, "chk", k->rt, 1, &one);
  lc_store(L, chk, 1, &zero, pixel(L, k, bi, zero, zero, zero));
  return bi;
}

/* For ROI r (parallel): the check, then channels and bins in the output's order. */
static void roi_loops(LowerCx *L, Roi *k, Buffer *out, PrimExpr *nr, PrimExpr *C) {
  TirVar *r = lc_tvar(L, "r", nr), *c = lc_tvar(L, "c", C),
         *py = lc_tvar(L, "py", lc_int(L, k->ph)), *px = lc_tvar(L, "px", lc_int(L, k->pw));
  PrimExpr *PH = lc_int(L, k->ph), *PW = lc_int(L, k->pw);
  TirVar *order[3] = {c, py, px};
  PrimExpr *ext[3] = {C, PH, PW};
  if (!k->nchw) /* NHWC: the channel innermost */
    order[0] = py, order[1] = px, order[2] = c, ext[0] = PH, ext[1] = PW, ext[2] = C;
  k->r = lc_var(L, r);
  lc_open(L);
  roi_of(L, k);
  PrimExpr *b = roi_image(L, k);
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *oi[4] = {k->r, lc_var(L, c), lc_var(L, py), lc_var(L, px)};
  if (!k->nchw) oi[1] = lc_var(L, py), oi[2] = lc_var(L, px), oi[3] = lc_var(L, c);
  bin(L, k, b, lc_var(L, c), lc_var(L, py), lc_var(L, px), out, oi);
  for (int i = 3; i-- > 0;) lc_for(L, LOOP_RANGE, order[i], ext[i], lc_close(L));
  lc_for(L, LOOP_PARALLEL, r, nr, lc_close(L));
}

static bool roi_attrs(LowerCx *L, const Expr *call, Roi *k) {
  int64_t ps[2];
  if (op_attr_ints(call, "pooled_size", ps, 2) != 2)
    return lc_fail(L, "roi_align: pooled_size"), false;
  k->ph = ps[0], k->pw = ps[1], k->ratio = op_attr_int(call, "sample_ratio");
  k->scale = op_attr_float(call, "spatial_scale");
  k->avg = strcmp(op_attr_str(lc_arena(L), call, "mode"), "avg") == 0;
  k->nchw = strcmp(op_attr_str(lc_arena(L), call, "layout"), "NCHW") == 0;
  k->aligned = op_attr_bool(call, "aligned");
  return true;
}

static LTensor *compute_roi_align(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Roi k = {.x = in[0], .rois = in[1]};
  if (nin != 2 || k.x->ndim != 4 || !roi_attrs(L, call, &k)) return NULL;
  DType dt = k.x->dtype;
  if (!dtype_is_float(dt) || !lc_dtype_ok(dt) || !lc_dtype_ok(k.rois->dtype))
    return lc_fail(L, "vision.roi_align of %s", dtype_name(dt));
  k.rt = dt == DT_FLOAT64 || k.rois->dtype == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32;
  PrimExpr *C = k.x->shape[k.nchw ? 1 : 3];
  k.h = lc_const(k.x->shape[k.nchw ? 2 : 1]), k.w = lc_const(k.x->shape[k.nchw ? 3 : 2]);
  if (lc_const(C) <= 0 || k.h <= 0 || k.w <= 0)
    return lc_fail(L, "vision.roi_align of a dynamic or empty image");
  PrimExpr *nr = k.rois->shape[0];
  PrimExpr *shape[4] = {nr, C, lc_int(L, k.ph), lc_int(L, k.pw)};
  if (!k.nchw) shape[1] = lc_int(L, k.ph), shape[2] = lc_int(L, k.pw), shape[3] = C;
  Buffer *out = lc_result_buffer(L, call, dt, 4, shape);
  if (!out) return NULL;
  roi_loops(L, &k, out, nr, C);
  lc_mark_total(L, out); /* each element stored once */
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_vision[] = {
    {"vision.roi_align", compute_roi_align},
    {NULL, NULL},
};
