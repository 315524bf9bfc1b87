/* kernels_vision_real.h — roi_align, its adjoint and the IoU of non_max_suppression in
 * one float type, included twice by kernels_vision.c: with REAL float
 * (float16 and float32 data) and double (float64), REAL_MAX its largest
 * finite value, RFN(name) naming each copy.  No include guard, on purpose.
 *
 * The operation order is TOPI's (topi/vision/rcnn/roi_align.py,
 * topi/vision/nms.py); min and max are TVM's selects (max(a, b) = a > b ?
 * a : b). */

static REAL RFN(vmax)(REAL a, REAL b) { return a > b ? a : b; }
static REAL RFN(vmin)(REAL a, REAL b) { return a < b ? a : b; }

/* The IoU of boxes a and b (4 corner coordinates each, in either order). */
static REAL RFN(iou)(const double *a, const double *b) {
  REAL a0 = (REAL)a[0], a1 = (REAL)a[1], a2 = (REAL)a[2], a3 = (REAL)a[3];
  REAL b0 = (REAL)b[0], b1 = (REAL)b[1], b2 = (REAL)b[2], b3 = (REAL)b[3];
  REAL al = RFN(vmin)(a0, a2), at = RFN(vmin)(a1, a3), ar = RFN(vmax)(a0, a2),
       ab = RFN(vmax)(a1, a3);
  REAL bl = RFN(vmin)(b0, b2), bt = RFN(vmin)(b1, b3), br = RFN(vmax)(b0, b2),
       bb = RFN(vmax)(b1, b3);
  REAL w = RFN(vmax)(0, RFN(vmin)(ar, br) - RFN(vmax)(al, bl));
  REAL h = RFN(vmax)(0, RFN(vmin)(ab, bb) - RFN(vmax)(at, bt));
  REAL area = h * w;
  REAL u = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area;
  return u <= 0 ? 0 : area / u;
}

/* One ROI's sampling: its start, bin sizes and sampling grid. */
typedef struct RFN(Roi) {
  REAL start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
} RFN(Roi);

/* aligned (torchvision's, ONNX's half_pixel): the corners shifted by half a
 * pixel, and no 1x1 minimum. */
static RFN(Roi)
    RFN(roi_of)(const REAL *r, REAL scale, int64_t ph, int64_t pw, int64_t ratio, bool aligned) {
  RFN(Roi) o;
  REAL sw = r[1] * scale, sh = r[2] * scale, ew = r[3] * scale, eh = r[4] * scale;
  REAL rh = RFN(vmax)(eh - sh, (REAL)1.0), rw = RFN(vmax)(ew - sw, (REAL)1.0);
  if (aligned) {
    sw = sw - (REAL)0.5, sh = sh - (REAL)0.5, ew = ew - (REAL)0.5, eh = eh - (REAL)0.5;
    rh = eh - sh, rw = ew - sw;
  }
  o.start_h = sh, o.start_w = sw, o.bin_h = rh / (REAL)ph, o.bin_w = rw / (REAL)pw;
  o.grid_h = ratio > 0 ? ratio : sat_i32(ceil((double)(rh / (REAL)ph)));
  o.grid_w = ratio > 0 ? ratio : sat_i32(ceil((double)(rw / (REAL)pw)));
  if (o.grid_h < 0) o.grid_h = 0; /* an aligned, flipped ROI: no samples (the rule's */
  if (o.grid_w < 0) o.grid_w = 0; /* loops run no iteration) */
  return o;
}

/* A plane of an image: element (y, x) at p[y * sy + x * sx]. */
typedef struct RFN(Plane) {
  const REAL *p;
  int64_t h, w, sy, sx;
} RFN(Plane);

/* The four taps of TOPI's _bilinear with bilinear_sample_nchw at (y, x)
 * on a plane of h x w: their offsets (p[y * sy + x * sx]; -1 outside the
 * plane) and weights, in TOPI's order; false when (y, x) is outside
 * [-1, size] (the sample is 0). */
static bool RFN(roi_taps)(int64_t h, int64_t w, int64_t sy, int64_t sx, REAL y, REAL x, int64_t *at,
                          REAL *wt) {
  if (y < (REAL)-1.0 || x < (REAL)-1.0 || y > (REAL)h || x > (REAL)w) return false;
  y = RFN(vmin)(RFN(vmax)(y, (REAL)0.0), (REAL)(h - 1));
  x = RFN(vmin)(RFN(vmax)(x, (REAL)0.0), (REAL)(w - 1));
  int64_t y0 = sat_i32(floor((double)y)), x0 = sat_i32(floor((double)x));
  REAL wyh = y - (REAL)y0, wxh = x - (REAL)x0, wx[2] = {1 - wxh, wxh}, wy[2] = {1 - wyh, wyh};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      int64_t yp = y0 + j, xp = x0 + i;
      bool in = yp >= 0 && yp <= h - 1 && xp >= 0 && xp <= w - 1;
      at[2 * i + j] = in ? yp * sy + xp * sx : -1, wt[2 * i + j] = wx[i] * wy[j];
    }
  return true;
}

static REAL RFN(roi_sample)(const RFN(Plane) * pl, REAL y, REAL x) {
  int64_t at[4];
  REAL wt[4], val = 0;
  if (!RFN(roi_taps)(pl->h, pl->w, pl->sy, pl->sx, y, x, at, wt)) return 0;
  for (int t = 0; t < 4; t++) {
    REAL v = at[t] < 0 ? 0 : wt[t] * pl->p[at[t]];
    val = t == 0 ? v : val + v;
  }
  return val;
}

/* The sample (y, x) of bin (py, px) number q (row-major over the grid). */
static void RFN(roi_point)(const RFN(Roi) * r, int64_t py, int64_t px, int64_t q, REAL *y,
                           REAL *x) {
  REAL sh = r->start_h + (REAL)py * r->bin_h, sw = r->start_w + (REAL)px * r->bin_w;
  *y = sh + ((REAL)(q / r->grid_w) + (REAL)0.5) * r->bin_h / (REAL)r->grid_h;
  *x = sw + ((REAL)(q % r->grid_w) + (REAL)0.5) * r->bin_w / (REAL)r->grid_w;
}

/* One output bin (py, px) of a ROI: the average or maximum of its samples. */
static REAL RFN(roi_bin)(const RFN(Plane) * pl, const RFN(Roi) * r, int64_t py, int64_t px,
                         bool avg) {
  int64_t n = r->grid_h * r->grid_w;
  REAL count = (REAL)n, acc = avg ? 0 : -REAL_MAX, y, x;
  for (int64_t q = 0; q < n; q++) {
    RFN(roi_point)(r, py, px, q, &y, &x);
    REAL v = RFN(roi_sample)(pl, y, x);
    acc = avg ? acc + v / count : RFN(vmax)(acc, v);
  }
  return acc;
}

/* ── roi_align's adjoint (vision.roi_align_grad) ── */

/* An image plane's adjoint, laid out as RFN(Plane). */
typedef struct RFN(DPlane) {
  REAL *p;
  int64_t h, w, sy, sx;
} RFN(DPlane);

/* d added to the pixels RFN(roi_sample) reads at (y, x), by their weights. */
static void RFN(roi_sample_back)(const RFN(DPlane) * pl, REAL y, REAL x, REAL d) {
  int64_t at[4];
  REAL wt[4];
  if (!RFN(roi_taps)(pl->h, pl->w, pl->sy, pl->sx, y, x, at, wt)) return;
  for (int t = 0; t < 4; t++)
    if (at[t] >= 0) pl->p[at[t]] += wt[t] * d;
}

/* One bin's dy back onto the plane: an equal share to every sample (avg),
 * or all of it to the sample RFN(roi_bin) kept (max: the last of equal
 * maxima, as its select keeps). */
static void RFN(roi_bin_back)(const RFN(Plane) * pl, const RFN(DPlane) * dp, const RFN(Roi) * r,
                              int64_t py, int64_t px, bool avg, REAL d) {
  int64_t n = r->grid_h * r->grid_w, best = -1;
  REAL acc = -REAL_MAX, y, x;
  for (int64_t q = 0; q < n; q++) {
    RFN(roi_point)(r, py, px, q, &y, &x);
    if (avg) {
      RFN(roi_sample_back)(dp, y, x, d / (REAL)n);
      continue;
    }
    REAL v = RFN(roi_sample)(pl, y, x);
    if (!(acc > v)) acc = v, best = q;
  }
  if (best < 0) return;
  RFN(roi_point)(r, py, px, best, &y, &x);
  RFN(roi_sample_back)(dp, y, x, d);
}

/* What a walk over roi_align's bins does: the result into dst, or (dst
 * NULL) x's adjoint into dx (zeros on entry) for dy. */
typedef struct RFN(RoiIo) {
  REAL *dst, *dx;
  const REAL *dy;
} RFN(RoiIo);

/* roi_align of x (xd, as REAL) at rois (nr, 5), forward or backward (io);
 * false after kernel_fail (a batch index out of range, a huge sampling
 * grid). */
static bool RFN(roi_walk)(KernelCtx *kx, const RoiAlign *a, const RtTensor *x, const REAL *xd,
                          const REAL *rois, int64_t nr, const RFN(RoiIo) * io) {
  int64_t n = x->shape[0], c = a->nchw ? x->shape[1] : x->shape[3];
  int64_t h = a->nchw ? x->shape[2] : x->shape[1], w = a->nchw ? x->shape[3] : x->shape[2];
  for (int64_t r = 0; r < nr; r++) {
    const REAL *ro = rois + r * 5;
    int64_t bi = roi_batch(kx, (double)ro[0], r, n);
    RFN(Roi) g = RFN(roi_of)(ro, (REAL)a->scale, a->ph, a->pw, a->ratio, a->aligned);
    if (bi < 0 || !grid_ok(kx, g.grid_h, g.grid_w, r)) return false;
    for (int64_t ch = 0; ch < c; ch++) {
      int64_t off = bi * c * h * w + (a->nchw ? ch * h * w : ch);
      int64_t sy = a->nchw ? w : w * c, sx = a->nchw ? 1 : c;
      RFN(Plane) pl = {xd + off, h, w, sy, sx};
      RFN(DPlane) dp = {io->dx ? io->dx + off : NULL, h, w, sy, sx};
      for (int64_t py = 0; py < a->ph; py++)
        for (int64_t px = 0; px < a->pw; px++) {
          int64_t o = a->nchw ? ((r * c + ch) * a->ph + py) * a->pw + px
                              : ((r * a->ph + py) * a->pw + px) * c + ch;
          if (io->dst)
            io->dst[o] = RFN(roi_bin)(&pl, &g, py, px, a->avg);
          else
            RFN(roi_bin_back)(&pl, &dp, &g, py, px, a->avg, io->dy[o]);
        }
    }
  }
  return true;
}
