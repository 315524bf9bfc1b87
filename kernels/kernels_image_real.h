/* kernels_image_real.h — grid_sample, its adjoints and affine_grid in one
 * float type, included twice by kernels_image.c: with REAL float (float16
 * and float32 data) and double (float64), RFN(name) naming each copy.  No
 * include guard, on purpose.
 *
 * The operation order is TOPI's (python/tvm/topi/image/grid_sample.py) so
 * the results agree bit for bit; min and max are TVM's selects
 * (max(a, b) = a > b ? a : b), so a NaN coordinate clips to 0.  The
 * integer division of the reflection by a zero size (an axis of one pixel
 * with align_corners) gives the corner itself. */

static REAL RFN(rmax)(REAL a, REAL b) { return a > b ? a : b; }
static REAL RFN(rmin)(REAL a, REAL b) { return a < b ? a : b; }

static REAL RFN(clip)(REAL x, int64_t size) { return RFN(rmin)(RFN(rmax)(x, 0), (REAL)(size - 1)); }

/* Reflection of x into [corner, size + corner] (TOPI's __refelection). */
static REAL RFN(reflect)(REAL x, int64_t size, REAL corner) {
  if (x >= corner && x <= (REAL)size + corner) return x;
  if (size == 0) return corner;
  REAL iac = (REAL)fabs((double)(corner - x));
  int64_t times = sat_i32((double)iac) / size;
  REAL extra = iac - (REAL)(times * size);
  return times % 2 == 0 ? extra + corner : (REAL)size - extra + corner;
}

static REAL RFN(reflect_axis)(const GridSpec *s, REAL x, int64_t size) {
  return s->align_corners ? RFN(reflect)(x, size - 1, 0) : RFN(reflect)(x, size, (REAL)-0.5);
}

/* A normalized grid coordinate g in [-1, 1] as a pixel coordinate. */
static REAL RFN(unnormalize)(const GridSpec *s, REAL g, int64_t size) {
  if (s->align_corners) return (g + 1) * (REAL)(size - 1) / 2;
  return (REAL)-0.5 + (g + 1) * (REAL)size / 2;
}

/* The source coordinate with the padding mode's clipping or reflection. */
static REAL RFN(source)(const GridSpec *s, REAL g, int64_t size) {
  REAL x = RFN(unnormalize)(s, g, size);
  if (s->padding == GRID_REFLECTION) return RFN(clip)(RFN(reflect_axis)(s, x, size), size);
  if (s->padding == GRID_BORDER) return RFN(clip)(x, size);
  return x;
}

/* One image (C planes of H x W, or D x H x W) and its dims. */
typedef struct RFN(Img) {
  const REAL *p;
  int64_t d, h, w;
} RFN(Img);

static REAL RFN(px)(const RFN(Img) * im, int64_t z, int64_t y, int64_t x) {
  if (z < 0 || y < 0 || x < 0 || z >= im->d || y >= im->h || x >= im->w) return 0;
  return im->p[(z * im->h + y) * im->w + x];
}

static REAL RFN(bilinear)(const GridSpec *s, const RFN(Img) * im, REAL gx, REAL gy) {
  REAL y = RFN(source)(s, gy, im->h), x = RFN(source)(s, gx, im->w);
  int64_t y0 = sat_i32(floor((double)y)), x0 = sat_i32(floor((double)x)), y1 = y0 + 1, x1 = x0 + 1;
  REAL dy = y - (REAL)y0, dx = x - (REAL)x0;
  return RFN(px)(im, 0, y0, x0) * ((REAL)1.0 - dy) * ((REAL)1.0 - dx) +
         RFN(px)(im, 0, y0, x1) * ((REAL)1.0 - dy) * dx +
         RFN(px)(im, 0, y1, x0) * dy * ((REAL)1.0 - dx) + RFN(px)(im, 0, y1, x1) * dy * dx;
}

static REAL RFN(cubic_w1)(REAL f) {
  const REAL a = (REAL)-0.75;
  return ((a + 2) * f - (a + 3)) * f * f + 1;
}

static REAL RFN(cubic_w2)(REAL f) {
  const REAL a = (REAL)-0.75;
  return ((a * f - 5 * a) * f + 8 * a) * f - 4 * a;
}

static REAL RFN(cubic_1d)(const REAL *p, REAL f) {
  return p[0] * RFN(cubic_w2)(f + 1) + p[1] * RFN(cubic_w1)(f) + p[2] * RFN(cubic_w1)(1 - f) +
         p[3] * RFN(cubic_w2)(2 - f);
}

/* A bicubic tap index with the padding mode applied to the integer tap. */
static int64_t RFN(cubic_tap)(const GridSpec *s, int64_t i, int64_t size) {
  if (s->padding == GRID_BORDER) return i < 0 ? 0 : i > size - 1 ? size - 1 : i;
  if (s->padding == GRID_REFLECTION)
    return sat_i32((double)RFN(clip)(RFN(reflect_axis)(s, (REAL)i, size), size));
  return i;
}

static REAL RFN(bicubic)(const GridSpec *s, const RFN(Img) * im, REAL gx, REAL gy) {
  REAL y = RFN(unnormalize)(s, gy, im->h), x = RFN(unnormalize)(s, gx, im->w);
  int64_t yf = sat_i32(floor((double)y)), xf = sat_i32(floor((double)x));
  REAL fy = y - (REAL)yf, fx = x - (REAL)xf, rows[4], p[4];
  for (int i = 0; i < 4; i++) {
    int64_t yi = RFN(cubic_tap)(s, yf - 1 + i, im->h);
    for (int j = 0; j < 4; j++) p[j] = RFN(px)(im, 0, yi, RFN(cubic_tap)(s, xf - 1 + j, im->w));
    rows[i] = RFN(cubic_1d)(p, fx);
  }
  return RFN(cubic_1d)(rows, fy);
}

/* The pixel nearest to grid point g (x, y[, z]) as an index into the
 * image, or -1 outside it. */
static int64_t RFN(nearest_at)(const GridSpec *s, const RFN(Img) * im, const REAL *g) {
  int64_t x = sat_i32(nearbyint((double)RFN(source)(s, g[0], im->w)));
  int64_t y = sat_i32(nearbyint((double)RFN(source)(s, g[1], im->h))), z = 0;
  if (s->nsp == 3) z = sat_i32(nearbyint((double)RFN(source)(s, g[2], im->d)));
  if (z < 0 || y < 0 || x < 0 || z >= im->d || y >= im->h || x >= im->w) return -1;
  return (z * im->h + y) * im->w + x;
}

static REAL RFN(nearest)(const GridSpec *s, const RFN(Img) * im, const REAL *g) {
  int64_t at = RFN(nearest_at)(s, im, g);
  return at < 0 ? 0 : im->p[at];
}

static REAL RFN(trilinear)(const GridSpec *s, const RFN(Img) * im, REAL gx, REAL gy, REAL gz) {
  REAL z = RFN(source)(s, gz, im->d), y = RFN(source)(s, gy, im->h), x = RFN(source)(s, gx, im->w);
  int64_t z0 = sat_i32(floor((double)z)), y0 = sat_i32(floor((double)y));
  int64_t x0 = sat_i32(floor((double)x)), z1 = z0 + 1, y1 = y0 + 1, x1 = x0 + 1;
  REAL dz = z - (REAL)z0, dy = y - (REAL)y0, dx = x - (REAL)x0;
  REAL ez = 1 - dz, ey = 1 - dy, ex = 1 - dx;
  return RFN(px)(im, z0, y0, x0) * ex * ey * ez + RFN(px)(im, z0, y0, x1) * dx * ey * ez +
         RFN(px)(im, z1, y1, x0) * ex * dy * dz + RFN(px)(im, z1, y1, x1) * dx * dy * dz +
         RFN(px)(im, z0, y1, x0) * ex * dy * ez + RFN(px)(im, z1, y0, x1) * dx * ey * dz +
         RFN(px)(im, z1, y0, x0) * ex * ey * dz + RFN(px)(im, z0, y1, x1) * dx * dy * ez;
}

/* ── grid_sample's adjoints (image.grid_sample_grad) ── */

/* d source / d g of RFN(source) at g, as torch's grid sampler has it:
 * the unnormalizing scale, the reflection's sign, and 0 where the clip
 * holds the coordinate (the borders count as clipped). */
static REAL RFN(source_slope)(const GridSpec *s, REAL g, int64_t size) {
  REAL x = RFN(unnormalize)(s, g, size);
  REAL m = s->align_corners ? (REAL)(size - 1) / 2 : (REAL)size / 2;
  if (s->padding == GRID_ZEROS) return m;
  if (s->padding == GRID_REFLECTION) {
    int64_t sz = s->align_corners ? size - 1 : size;
    REAL corner = s->align_corners ? 0 : (REAL)-0.5;
    if (sz == 0) return 0;
    if (x < corner || x > (REAL)sz + corner) {
      int64_t times = sat_i32(fabs((double)(corner - x))) / sz;
      m *= (x < corner ? -1 : 1) * (times % 2 == 0 ? 1 : -1);
    }
    x = RFN(reflect_axis)(s, x, size);
  }
  return x <= 0 || x >= (REAL)(size - 1) ? 0 : m;
}

/* One sample's adjoints: dy spread onto the image's adjoint dim (same
 * planes as im) by the corners' weights, and the grid coordinates'
 * adjoints into dg[0..nsp) (x, y, z): the weights' slopes times the
 * corners' values, times the source coordinates' slopes. */
static void RFN(linear_back)(const GridSpec *s, const RFN(Img) * im, REAL *dim, const REAL *g,
                             REAL dy, REAL *dg) {
  int64_t size[3] = {im->w, im->h, im->d}, i0[3] = {0, 0, 0};
  REAL t[3] = {0, 0, 0};
  for (int a = 0; a < s->nsp; a++) {
    REAL c = RFN(source)(s, g[a], size[a]);
    i0[a] = sat_i32(floor((double)c)), t[a] = c - (REAL)i0[a], dg[a] = 0;
  }
  for (int b = 0; b < 1 << s->nsp; b++) {
    int64_t p[3];
    REAL w = 1, part[3] = {1, 1, 1};
    for (int a = 0; a < s->nsp; a++) {
      int on = b >> a & 1;
      p[a] = i0[a] + on;
      REAL f = on ? t[a] : 1 - t[a];
      w *= f;
      for (int e = 0; e < s->nsp; e++) part[e] *= e == a ? (on ? 1 : -1) : f;
    }
    int64_t z = s->nsp == 3 ? p[2] : 0;
    if (z < 0 || p[1] < 0 || p[0] < 0 || z >= im->d || p[1] >= im->h || p[0] >= im->w) continue;
    int64_t at = (z * im->h + p[1]) * im->w + p[0];
    dim[at] += dy * w;
    for (int a = 0; a < s->nsp; a++) dg[a] += dy * part[a] * im->p[at];
  }
  for (int a = 0; a < s->nsp; a++) dg[a] *= RFN(source_slope)(s, g[a], size[a]);
}

/* What a walk over grid_sample's samples does: the forward result into
 * dst, or (dst NULL) the adjoints of x and the grid, dx and dg (zeros on
 * entry), for dy. */
typedef struct RFN(GridIo) {
  REAL *dst, *dx, *dg;
  const REAL *dy;
} RFN(GridIo);

static REAL RFN(sample)(const GridSpec *s, const RFN(Img) * im, const REAL *go) {
  if (s->method == GRID_NEAREST) return RFN(nearest)(s, im, go);
  if (s->nsp == 3) return RFN(trilinear)(s, im, go[0], go[1], go[2]);
  if (s->method == GRID_BICUBIC) return RFN(bicubic)(s, im, go[0], go[1]);
  return RFN(bilinear)(s, im, go[0], go[1]);
}

/* grid_sample of x (N, C, [D,] H, W) at grid g (N, nsp, [D',] H', W'),
 * the result (N, C, [D',] H', W') of shape os, forward or backward (io). */
static void RFN(grid_walk)(const GridSpec *s, const int64_t *xs, const REAL *x, const int64_t *os,
                           const REAL *g, const RFN(GridIo) * io) {
  int nsp = s->nsp;
  RFN(Img) im = {0, nsp == 3 ? xs[2] : 1, xs[nsp], xs[nsp + 1]};
  int64_t plane = im.d * im.h * im.w, opl = 1;
  for (int i = 2; i < 2 + nsp; i++) opl *= os[i];
  for (int64_t n = 0; n < os[0]; n++)
    for (int64_t c = 0; c < os[1]; c++) {
      im.p = x + (n * xs[1] + c) * plane;
      const REAL *gn = g + n * nsp * opl;
      for (int64_t o = 0; o < opl; o++) {
        REAL go[3] = {gn[o], gn[opl + o], nsp == 3 ? gn[2 * opl + o] : 0}, d[3];
        int64_t at = (n * os[1] + c) * opl + o;
        if (io->dst) {
          io->dst[at] = RFN(sample)(s, &im, go);
          continue;
        }
        REAL *dim = io->dx + (n * xs[1] + c) * plane;
        if (s->method == GRID_NEAREST) { /* dy to the pixel read; the grid gets none */
          int64_t p = RFN(nearest_at)(s, &im, go);
          if (p >= 0) dim[p] += io->dy[at];
          continue;
        }
        RFN(linear_back)(s, &im, dim, go, io->dy[at], d);
        for (int a = 0; a < nsp; a++) io->dg[(n * nsp + a) * opl + o] += d[a];
      }
    }
}

/* affine_grid: dst (B, 2, H, W) from theta (B, 2, 3); TOPI's steps are
 * (2 - 1e-7) / (size - 1) rounded to the type once. */
static void RFN(affine_grid)(const int64_t *os, const REAL *theta, REAL *dst) {
  int64_t h = os[2], w = os[3];
  REAL ys = (REAL)((2.0 - 1e-7) / (double)(h - 1)), xs = (REAL)((2.0 - 1e-7) / (double)(w - 1));
  for (int64_t n = 0; n < os[0]; n++)
    for (int64_t d = 0; d < 2; d++) {
      const REAL *t = theta + (n * 2 + d) * 3;
      for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++) {
          REAL y = (REAL)-1.0 + (REAL)i * ys, x = (REAL)-1.0 + (REAL)j * xs;
          dst[((n * 2 + d) * h + i) * w + j] = t[0] * x + t[1] * y + t[2];
        }
    }
}
