/* compute_image.c — compute rules (lower/compute/compute.h) of the injective image
 * ops: image.resize1d/2d/3d, image.grid_sample and image.affine_grid, all
 * inline (an output element is an expression of a few input elements).
 *
 * They build the expressions of the reference kernels
 * (kernels/kernels_image.c), operation for operation, so the TIR
 * interpreter and the JIT without contraction agree with the kernels bit
 * for bit: resize in float32 with the compile-time parts (W / T, roi
 * products) as float32 literals folded in double, rounding half to even
 * through floor (exact for every float), min and max as TVM's selects.
 * Under the JIT's default contraction a product and a sum may fuse, so a
 * coordinate can differ in its last bit.
 *
 * The rules need constant, non-empty spatial dims (the coordinate
 * constants depend on them, and a select reads both of its sides, so every
 * load index is clamped into the image); otherwise they fail and the call
 * runs on its kernel.  Resizes take every numeric dtype (image_dtypes_ok):
 * a uint8 image is read as float32 and its result truncated and saturated
 * back, as the kernels do.
 * The taps and the resampling are shared with image.crop_and_resize's
 * rule (compute_image_crop.c, through lower/compute/compute_image.h). */
#include "lower/compute/compute_image.h"

#include <string.h>

/* ───────────────────────────── expression helpers ───────────────────────────── */

static PrimExpr *lit(LowerCx *L, DType dt, double v) { return lc_lit(L, dt, v); }
static PrimExpr *dvd(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_DIV, a, b); }
static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}
static PrimExpr *lt(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_LT, a, b); }
static PrimExpr *gt(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_GT, a, b); }
static PrimExpr *or_(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_OR, a, b); }
static PrimExpr *flr(LowerCx *L, PrimExpr *a) { return lc_call(L, PI_FLOOR, a, NULL, NULL); }
static PrimExpr *cel(LowerCx *L, PrimExpr *a) { return lc_call(L, PI_CEIL, a, NULL, NULL); }
static PrimExpr *i32(LowerCx *L, PrimExpr *a) { return lc_cast(L, DT_INT32, a); }

/* TVM's max / min: a > b ? a : b (a NaN operand a gives b). */
static PrimExpr *tmax(LowerCx *L, PrimExpr *a, PrimExpr *b) { return sel(L, gt(L, a, b), a, b); }
static PrimExpr *tmin(LowerCx *L, PrimExpr *a, PrimExpr *b) { return sel(L, lt(L, a, b), a, b); }

/* An int32 index clamped into [0, n). */
static PrimExpr *clampi(LowerCx *L, PrimExpr *i, int64_t n) {
  PrimExpr *lo = sel(L, lt(L, i, lc_int(L, 0)), lc_int(L, 0), i);
  return sel(L, gt(L, lo, lc_int(L, n - 1)), lc_int(L, n - 1), lo);
}

/* floor(x) rounded to even on ties: r = floor(x), +1 when x - r > 0.5 or
 * (x - r == 0.5 and r is odd); x - r is exact, and floats this large are
 * even integers, so this is nearbyint. */
static PrimExpr *round_even(LowerCx *L, DType dt, PrimExpr *x) {
  PrimExpr *r = flr(L, x), *d = lc_minus(L, x, r), *half = lit(L, dt, 0.5);
  PrimExpr *odd =
      lc_bin(L, PB_NE, lc_minus(L, r, lc_times(L, lit(L, dt, 2), flr(L, lc_times(L, r, half)))),
             lit(L, dt, 0));
  PrimExpr *up = or_(L, gt(L, d, half), lc_bin(L, PB_AND, lc_bin(L, PB_EQ, d, half), odd));
  return sel(L, up, lc_plus(L, r, lit(L, dt, 1)), r);
}

/* The resolved spec of an image call (validated when it was type checked). */
static bool resize_spec(LowerCx *L, const Expr *call, int nsp, ResizeSpec *s) {
  RelCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.arena = lc_arena(L), cx.op = ops_get(call->u.call.fn->u.op.index), cx.op_name = cx.op->name;
  return image_resize_spec(&cx, call->u.call.attrs, nsp, s);
}

/* The result shape from the type: constants only. */
static bool const_shape(LowerCx *L, const Expr *call, PrimExpr **shape) {
  const Type *ty = lc_result_type(call);
  for (int d = 0; d < ty->u.tensor.ndim; d++) {
    if (ty->u.tensor.dims[d].kind != DIM_CONST)
      return lc_fail(L, "%s: a result dim known only at run time", call->u.call.fn->u.op.name),
             false;
    shape[d] = lc_int(L, ty->u.tensor.dims[d].value);
  }
  return true;
}

/* ───────────────────────────── resize ───────────────────────────── */

/* TOPI's get_inx at output index x (an integer expression). */
static PrimExpr *coord(LowerCx *L, const ResizeSpec *s, int axis, PrimExpr *x, int64_t in,
                       int64_t out) {
  double sc = s->scales[axis];
  PrimExpr *fx = lc_cast(L, DT_FLOAT32, x);
  PrimExpr *scale = lit(L, DT_FLOAT32, sc > 0 ? 1.0 / sc : (double)in / (double)out);
  PrimExpr *half = lit(L, DT_FLOAT32, 0.5);
  double st = s->roi[axis], en = s->roi[s->nsp + axis];
  double ol = sc > 0 ? sc * (double)in : (double)out; /* as the kernel's resize_coord */
  switch (s->coord) {
    case COORD_PYTORCH_HALF_PIXEL:
      if (out <= 1) return lit(L, DT_FLOAT32, 0);
      /* fall through */
    case COORD_HALF_PIXEL:
      return lc_minus(L, lc_times(L, lc_plus(L, fx, half), scale), half);
    case COORD_ALIGN_CORNERS:
      if (out <= 1) return lit(L, DT_FLOAT32, 0);
      return lc_times(L, lit(L, DT_FLOAT32, (double)(in - 1) / (ol - 1)), fx);
    case COORD_ASYMMETRIC:
      return lc_times(L, scale, fx);
    case COORD_TF_HALF_PIXEL_FOR_NN:
      return lc_times(L, lc_plus(L, fx, half), scale);
    case COORD_TF_CROP_AND_RESIZE:
      break;
  }
  if (out <= 1) return lit(L, DT_FLOAT32, 0.5 * (st + en) * (double)(in - 1));
  PrimExpr *span = lc_times(L, lc_times(L, fx, lit(L, DT_FLOAT32, en - st)),
                            lit(L, DT_FLOAT32, (double)(in - 1)));
  return lc_plus(L, lit(L, DT_FLOAT32, st * (double)(in - 1)),
                 dvd(L, span, lit(L, DT_FLOAT32, ol - 1)));
}

static PrimExpr *closest(LowerCx *L, PrimExpr *c, Rounding r) {
  PrimExpr *eps = lit(L, DT_FLOAT32, 1e-5), *half = lit(L, DT_FLOAT32, 0.5);
  switch (r) {
    case ROUNDING_PREFER_FLOOR:
      return i32(L, cel(L, lc_minus(L, c, half)));
    case ROUNDING_PREFER_CEIL:
      return i32(L, flr(L, lc_plus(L, c, half)));
    case ROUNDING_FLOOR:
      return i32(L, flr(L, lc_plus(L, c, eps)));
    case ROUNDING_CEIL:
      return i32(L, cel(L, lc_minus(L, c, eps)));
    default:
      return i32(L, round_even(L, DT_FLOAT32, c));
  }
}

/* TOPI's cubic spline weights of t, the alpha sums folded in double. */
static void cubic_weights(LowerCx *L, double alpha, PrimExpr *t, PrimExpr **w) {
  PrimExpr *a = lit(L, DT_FLOAT32, alpha), *t2 = lc_times(L, t, t),
           *t3 = lc_times(L, lc_times(L, t, t), t);
  w[0] = lc_times(L, a, lc_plus(L, lc_minus(L, t3, lc_times(L, lit(L, DT_FLOAT32, 2), t2)), t));
  w[1] = lc_plus(L,
                 lc_minus(L, lc_times(L, lit(L, DT_FLOAT32, alpha + 2), t3),
                          lc_times(L, lit(L, DT_FLOAT32, 3 + alpha), t2)),
                 lit(L, DT_FLOAT32, 1));
  w[2] = lc_minus(L,
                  lc_plus(L, lc_times(L, lit(L, DT_FLOAT32, -(alpha + 2)), t3),
                          lc_times(L, lit(L, DT_FLOAT32, 3 + 2 * alpha), t2)),
                  lc_times(L, a, t));
  w[3] = lc_plus(L, lc_times(L, lit(L, DT_FLOAT32, -alpha), t3), lc_times(L, a, t2));
}

/* cubic_exclude: weights of taps outside the image zeroed, the rest renormalized. */
static void exclude(LowerCx *L, PrimExpr *i0, int64_t in, PrimExpr **w) {
  for (int k = 0; k < 4; k++) {
    PrimExpr *lo = lt(L, lc_plus(L, i0, lc_int(L, k - 1)), lc_int(L, 0));
    PrimExpr *hi = gt(L, lc_plus(L, i0, lc_int(L, k)), lc_int(L, in));
    w[k] = sel(L, or_(L, lo, hi), lit(L, DT_FLOAT32, 0), w[k]);
  }
  PrimExpr *sum = lc_plus(L, lc_plus(L, lc_plus(L, w[0], w[1]), w[2]), w[3]);
  for (int k = 0; k < 4; k++) w[k] = dvd(L, w[k], sum);
}

/* The taps of coordinate c on an axis of `in` pixels (taps_at in the kernel). */
static ETaps taps(LowerCx *L, const ResizeSpec *s, PrimExpr *c, int64_t in) {
  ETaps t = {0};
  t.outside =
      s->coord == COORD_TF_CROP_AND_RESIZE
          ? or_(L, lt(L, c, lit(L, DT_FLOAT32, 0)), gt(L, c, lit(L, DT_FLOAT32, (double)(in - 1))))
          : NULL;
  if (s->method == RESIZE_NEAREST) {
    t.n = 1, t.idx[0] = clampi(L, closest(L, c, s->rounding), in);
    return t;
  }
  PrimExpr *i0 = i32(L, flr(L, c));
  if (s->method == RESIZE_LINEAR) {
    PrimExpr *l = lc_minus(L, c, lc_cast(L, DT_FLOAT32, i0));
    t.n = 2, t.w[0] = lc_minus(L, lit(L, DT_FLOAT32, 1), l), t.w[1] = l;
    for (int k = 0; k < 2; k++) t.idx[k] = clampi(L, lc_plus(L, i0, lc_int(L, k)), in);
    return t;
  }
  t.n = 4;
  cubic_weights(L, s->cubic_alpha, lc_minus(L, c, flr(L, c)), t.w);
  if (s->cubic_exclude) exclude(L, i0, in, t.w);
  for (int k = 0; k < 4; k++) t.idx[k] = clampi(L, lc_plus(L, i0, lc_int(L, k - 1)), in);
  return t;
}

/* The value sampled over spatial axes level.. at input index sub. */
static PrimExpr *resample(LowerCx *L, const LTensor *x, const ResizeSpec *s, const ETaps *t,
                          int level, PrimExpr **sub) {
  if (level == s->nsp) return lc_cast(L, DT_FLOAT32, lc_at(L, x, sub));
  const ETaps *a = &t[level];
  PrimExpr *v[4], *idx[TENSOR_MAX_RANK];
  for (int k = 0; k < a->n; k++) {
    memcpy(idx, sub, sizeof(PrimExpr *) * (size_t)x->ndim);
    idx[s->sp_axis[level]] = a->idx[k];
    v[k] = resample(L, x, s, t, level + 1, idx);
  }
  if (a->n == 1) return v[0];
  PrimExpr *acc = lc_times(L, v[0], a->w[0]);
  for (int k = 1; k < a->n; k++) acc = lc_plus(L, acc, lc_times(L, v[k], a->w[k]));
  return acc;
}

/* aux[0]: the number of spatial dims. */
static PrimExpr *at_resize(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0];
  ResizeSpec s;
  resize_spec(L, t->call, (int)t->aux[0], &s);
  ETaps tp[IMAGE_MAX_SPATIAL];
  PrimExpr *outside = NULL;
  for (int i = 0; i < s.nsp; i++) {
    int ax = s.sp_axis[i];
    int64_t in = lc_const(x->shape[ax]), out = lc_const(t->shape[ax]);
    tp[i] = taps(L, &s, coord(L, &s, i, idx[ax], in, out), in);
    if (s.nsp == 2 && s.method == RESIZE_NEAREST && s.coord == COORD_ASYMMETRIC && t->aux[1] &&
        !(s.scales[i] > 0) && image_resize_int_div(in, out))
      tp[i].idx[0] = clampi(L, dvd(L, i32(L, idx[ax]), lc_int(L, out / in)), in);
    if (tp[i].outside) outside = outside ? or_(L, outside, tp[i].outside) : tp[i].outside;
  }
  PrimExpr *v = resample(L, x, &s, tp, 0, idx);
  if (outside) v = sel(L, outside, lit(L, DT_FLOAT32, s.extrapolation), v);
  return lc_cast(L, t->dtype, v);
}

bool image_dtypes_ok(DType x, DType out) {
  return lc_elem_dtype_ok(x) && x != DT_BOOL && lc_elem_dtype_ok(out);
}

/* The rule of resize{nsp}d: constant, non-empty spatial dims. */
LTensor *image_resize_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, int nsp,
                           bool int_div) {
  ResizeSpec s;
  PrimExpr *shape[TENSOR_MAX_RANK];
  const Type *ty = lc_result_type(call);
  if (!resize_spec(L, call, nsp, &s))
    return lc_fail(L, "%s: bad attributes", call->u.call.fn->u.op.name);
  if (!const_shape(L, call, shape)) return NULL;
  if (!image_dtypes_ok(in[0]->dtype, ty->u.tensor.dtype))
    return lc_fail(L, "%s of %s", call->u.call.fn->u.op.name, dtype_name(in[0]->dtype));
  for (int i = 0; i < nsp; i++)
    if (lc_const(in[0]->shape[s.sp_axis[i]]) <= 0)
      return lc_fail(L, "%s of a dynamic or empty image size", call->u.call.fn->u.op.name);
  LTensor *t = lc_tensor(L, call, ty->u.tensor.dtype, ty->u.tensor.ndim, shape);
  t->in = in, t->nin = nin, t->at = at_resize;
  t->aux[0] = nsp, t->aux[1] = int_div;
  return t;
}

static LTensor *compute_resize1d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return image_resize_rule(L, call, in, nin, 1, false);
}

static LTensor *compute_resize2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return image_resize_rule(L, call, in, nin, 2, true); /* the static op's integer division */
}

static LTensor *compute_resize3d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return image_resize_rule(L, call, in, nin, 3, false);
}

/* ───────────────────────────── grid_sample ───────────────────────────── */

/* One grid_sample element: the type the kernel computes in, the data's
 * spatial dims and the output index's batch and channel. */
typedef struct GridAt {
  LowerCx *L;
  const LTensor *x;
  const GridSpec *s;
  DType dt;
  int64_t dims[3]; /* (D,) H, W */
  PrimExpr *n, *c;
} GridAt;

static PrimExpr *g_lit(const GridAt *g, double v) { return lit(g->L, g->dt, v); }

static PrimExpr *g_clip(const GridAt *g, PrimExpr *x, int64_t size) {
  return tmin(g->L, tmax(g->L, x, g_lit(g, 0)), g_lit(g, (double)(size - 1)));
}

/* Reflection into [corner, size + corner] (TOPI's __refelection). */
static PrimExpr *g_reflect(const GridAt *g, PrimExpr *x, int64_t size, double corner) {
  LowerCx *L = g->L;
  PrimExpr *cr = g_lit(g, corner), *fs = g_lit(g, (double)size);
  PrimExpr *in =
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, x, cr), lc_bin(L, PB_LE, x, lc_plus(L, fs, cr)));
  if (size == 0) return sel(L, in, x, cr);
  PrimExpr *iac = lc_call(L, PI_ABS, lc_minus(L, cr, x), NULL, NULL);
  PrimExpr *times = dvd(L, i32(L, iac), lc_int(L, size));
  PrimExpr *extra = lc_minus(L, iac, lc_cast(L, g->dt, lc_times(L, times, lc_int(L, size))));
  PrimExpr *even = lc_bin(L, PB_EQ, lc_bin(L, PB_MOD, times, lc_int(L, 2)), lc_int(L, 0));
  return sel(L, in, x, sel(L, even, lc_plus(L, extra, cr), lc_plus(L, lc_minus(L, fs, extra), cr)));
}

static PrimExpr *g_reflect_axis(const GridAt *g, PrimExpr *x, int64_t size) {
  return g->s->align_corners ? g_reflect(g, x, size - 1, 0) : g_reflect(g, x, size, -0.5);
}

static PrimExpr *g_unnormalize(const GridAt *g, PrimExpr *v, int64_t size) {
  LowerCx *L = g->L;
  PrimExpr *p1 = lc_plus(L, v, g_lit(g, 1)), *two = g_lit(g, 2);
  if (g->s->align_corners) return dvd(L, lc_times(L, p1, g_lit(g, (double)(size - 1))), two);
  return lc_plus(L, g_lit(g, -0.5), dvd(L, lc_times(L, p1, g_lit(g, (double)size)), two));
}

static PrimExpr *g_source(const GridAt *g, PrimExpr *v, int64_t size) {
  PrimExpr *x = g_unnormalize(g, v, size);
  if (g->s->padding == GRID_REFLECTION) return g_clip(g, g_reflect_axis(g, x, size), size);
  if (g->s->padding == GRID_BORDER) return g_clip(g, x, size);
  return x;
}

/* The data at int32 spatial indices p (one per spatial dim), 0 outside. */
static PrimExpr *g_px(const GridAt *g, PrimExpr *const *p) {
  LowerCx *L = g->L;
  int nsp = g->s->nsp;
  PrimExpr *idx[5] = {g->n, g->c}, *ok = NULL;
  for (int i = 0; i < nsp; i++) {
    PrimExpr *in =
        lc_bin(L, PB_AND, lc_bin(L, PB_GE, p[i], lc_int(L, 0)), lt(L, p[i], lc_int(L, g->dims[i])));
    ok = ok ? lc_bin(L, PB_AND, ok, in) : in;
    idx[2 + i] = clampi(L, p[i], g->dims[i]);
  }
  return sel(L, ok, lc_cast(L, g->dt, lc_at(L, g->x, idx)), g_lit(g, 0));
}

/* Bilinear (2-D) or trilinear (3-D) sampling at source coordinates src. */
static PrimExpr *g_linear(const GridAt *g, PrimExpr *const *src) {
  LowerCx *L = g->L;
  int nsp = g->s->nsp;
  PrimExpr *lo[3], *d[3], *e[3];
  for (int i = 0; i < nsp; i++) {
    lo[i] = i32(L, flr(L, src[i]));
    d[i] = lc_minus(L, src[i], lc_cast(L, g->dt, lo[i]));
    e[i] = lc_minus(L, g_lit(g, 1), d[i]);
  }
  /* the corners in TOPI's order: (y, x) offsets for 2-D, (z, y, x) for 3-D */
  static const int c2[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  static const int c3[8][3] = {{0, 0, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1},
                               {0, 1, 0}, {1, 0, 1}, {1, 0, 0}, {0, 1, 1}};
  PrimExpr *acc = NULL;
  for (int k = 0; k < (nsp == 2 ? 4 : 8); k++) {
    const int *o = nsp == 2 ? c2[k] : c3[k];
    PrimExpr *p[3], *term;
    for (int i = 0; i < nsp; i++) p[i] = lc_plus(L, lo[i], lc_int(L, o[i]));
    term = g_px(g, p);
    for (int j = 0; j < nsp; j++) { /* 2-D: y then x; 3-D: x, y, z (TOPI's orders) */
      int i = nsp == 2 ? j : nsp - 1 - j;
      term = lc_times(L, term, o[i] ? d[i] : e[i]);
    }
    acc = acc ? lc_plus(L, acc, term) : term;
  }
  return acc;
}

static PrimExpr *g_cubic_w1(const GridAt *g, PrimExpr *f) {
  LowerCx *L = g->L;
  PrimExpr *t = lc_minus(L, lc_times(L, g_lit(g, -0.75 + 2), f), g_lit(g, -0.75 + 3));
  return lc_plus(L, lc_times(L, lc_times(L, t, f), f), g_lit(g, 1));
}

static PrimExpr *g_cubic_w2(const GridAt *g, PrimExpr *f) {
  LowerCx *L = g->L;
  PrimExpr *t = lc_minus(L, lc_times(L, g_lit(g, -0.75), f), g_lit(g, 5 * -0.75));
  return lc_minus(L, lc_times(L, lc_plus(L, lc_times(L, t, f), g_lit(g, 8 * -0.75)), f),
                  g_lit(g, 4 * -0.75));
}

static PrimExpr *g_cubic_1d(const GridAt *g, PrimExpr *const *p, PrimExpr *f) {
  LowerCx *L = g->L;
  PrimExpr *one = g_lit(g, 1), *two = g_lit(g, 2);
  PrimExpr *acc = lc_times(L, p[0], g_cubic_w2(g, lc_plus(L, f, one)));
  acc = lc_plus(L, acc, lc_times(L, p[1], g_cubic_w1(g, f)));
  acc = lc_plus(L, acc, lc_times(L, p[2], g_cubic_w1(g, lc_minus(L, one, f))));
  return lc_plus(L, acc, lc_times(L, p[3], g_cubic_w2(g, lc_minus(L, two, f))));
}

/* A bicubic tap with the padding mode applied to the integer index. */
static PrimExpr *g_tap(const GridAt *g, PrimExpr *i, int64_t size) {
  if (g->s->padding == GRID_BORDER) return clampi(g->L, i, size);
  if (g->s->padding == GRID_REFLECTION)
    return i32(g->L, g_clip(g, g_reflect_axis(g, lc_cast(g->L, g->dt, i), size), size));
  return i;
}

/* TOPI's _bicubic_sample: 4 x 4 taps, the padding mode applied to each
 * integer tap, rows interpolated along x, then the rows along y. */
static PrimExpr *g_bicubic(const GridAt *g, PrimExpr *gx, PrimExpr *gy) {
  LowerCx *L = g->L;
  PrimExpr *y = g_unnormalize(g, gy, g->dims[0]), *x = g_unnormalize(g, gx, g->dims[1]);
  PrimExpr *yf = i32(L, flr(L, y)), *xf = i32(L, flr(L, x));
  PrimExpr *fy = lc_minus(L, y, lc_cast(L, g->dt, yf)), *fx = lc_minus(L, x, lc_cast(L, g->dt, xf));
  PrimExpr *rows[4], *p[4];
  for (int i = 0; i < 4; i++) {
    PrimExpr *q[2];
    q[0] = g_tap(g, lc_plus(L, yf, lc_int(L, i - 1)), g->dims[0]);
    for (int j = 0; j < 4; j++) {
      q[1] = g_tap(g, lc_plus(L, xf, lc_int(L, j - 1)), g->dims[1]);
      p[j] = g_px(g, q);
    }
    rows[i] = g_cubic_1d(g, p, fx);
  }
  return g_cubic_1d(g, rows, fy);
}

/* aux[0]: the number of spatial dims. */
static PrimExpr *at_grid_sample(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *x = t->in[0], *grid = t->in[1];
  GridSpec s;
  RelCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.arena = lc_arena(L), cx.op = ops_get(t->call->u.call.fn->u.op.index), cx.op_name = cx.op->name;
  image_grid_spec(&cx, t->call->u.call.attrs, x->ndim, &s);
  GridAt g = {L, x, &s, lc_lane_dtype(x->dtype), {0}, idx[0], idx[1]}; /* float16 in float32 */
  for (int i = 0; i < s.nsp; i++) g.dims[i] = lc_const(x->shape[2 + i]);
  PrimExpr *gi[5] = {idx[0], NULL, idx[2], idx[3], s.nsp == 3 ? idx[4] : NULL}, *gv[3], *src[3];
  for (int k = 0; k < s.nsp; k++) /* x, y[, z] */
    gi[1] = lc_int(L, k), gv[k] = lc_cast(L, g.dt, lc_at(L, grid, gi));
  if (s.method == GRID_BICUBIC) return lc_cast(L, t->dtype, g_bicubic(&g, gv[0], gv[1]));
  for (int i = 0; i < s.nsp; i++) src[i] = g_source(&g, gv[s.nsp - 1 - i], g.dims[i]);
  if (s.method == GRID_BILINEAR) return lc_cast(L, t->dtype, g_linear(&g, src));
  PrimExpr *p[3];
  for (int i = 0; i < s.nsp; i++) p[i] = i32(L, round_even(L, g.dt, src[i]));
  return lc_cast(L, t->dtype, g_px(&g, p));
}

static LTensor *compute_grid_sample(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!const_shape(L, call, shape)) return NULL;
  DType dt = in[0]->dtype;
  if (!dtype_is_float(dt) || in[1]->dtype != dt)
    return lc_fail(L, "image.grid_sample of %s at a %s grid", dtype_name(dt),
                   dtype_name(in[1]->dtype));
  for (int i = 2; i < in[0]->ndim; i++)
    if (lc_const(in[0]->shape[i]) <= 0)
      return lc_fail(L, "image.grid_sample of a dynamic or empty image");
  LTensor *t = lc_tensor(L, call, dt, in[0]->ndim, shape);
  t->in = in, t->nin = nin, t->at = at_grid_sample;
  return t;
}

/* ───────────────────────────── affine_grid ───────────────────────────── */

/* In the dtype's lane (float16 in float32), as the kernel. */
static PrimExpr *at_affine_grid(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  const LTensor *th = t->in[0];
  DType dt = lc_lane_dtype(t->dtype);
  int64_t h = lc_const(t->shape[2]), w = lc_const(t->shape[3]);
  PrimExpr *ys = lit(L, dt, (2.0 - 1e-7) / (double)(h - 1)),
           *xs = lit(L, dt, (2.0 - 1e-7) / (double)(w - 1));
  PrimExpr *y = lc_plus(L, lit(L, dt, -1), lc_times(L, lc_cast(L, dt, idx[2]), ys));
  PrimExpr *x = lc_plus(L, lit(L, dt, -1), lc_times(L, lc_cast(L, dt, idx[3]), xs));
  PrimExpr *e[3];
  for (int k = 0; k < 3; k++) {
    PrimExpr *ti[3] = {idx[0], idx[1], lc_int(L, k)};
    e[k] = lc_cast(L, dt, lc_at(L, th, ti));
  }
  return lc_cast(L, t->dtype,
                 lc_plus(L, lc_plus(L, lc_times(L, e[0], x), lc_times(L, e[1], y)), e[2]));
}

static LTensor *compute_affine_grid(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  if (!const_shape(L, call, shape)) return NULL;
  if (!dtype_is_float(in[0]->dtype))
    return lc_fail(L, "image.affine_grid of %s", dtype_name(in[0]->dtype));
  LTensor *t = lc_tensor(L, call, in[0]->dtype, 4, shape);
  t->in = in, t->nin = nin, t->at = at_affine_grid;
  return t;
}

/* ───────────────────────────── shared with crop_and_resize ───────────────────────────── */

ETaps image_taps(LowerCx *L, const ResizeSpec *s, PrimExpr *c, int64_t in) {
  return taps(L, s, c, in);
}

PrimExpr *image_resample(LowerCx *L, const LTensor *x, const ResizeSpec *s, const ETaps *t,
                         PrimExpr **idx) {
  return resample(L, x, s, t, 0, idx);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_image[] = {
    {"image.resize1d", compute_resize1d},       {"image.resize2d", compute_resize2d},
    {"image.resize3d", compute_resize3d},       {"image.grid_sample", compute_grid_sample},
    {"image.affine_grid", compute_affine_grid}, {NULL, NULL},
};
