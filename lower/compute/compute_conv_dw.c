/* compute_conv_dw.c — the row schedule of a depthwise nn.conv2d on NCHW
 * data (compute.h: lc_conv_depthwise_rows): groups = channels = outputs,
 * OIHW weights (O x 1 x KH x KW), any stride, dilation and padding.
 *
 * Each channel's plane is copied once into a zero-padded scratch plane
 * whose columns are split by the stride's phase,
 *
 *   XS[h + p0, q % s1, q / s1] = x[n, c, h, w]   (q = w + p1),
 *
 * so the taps of a row of outputs are contiguous vectors: output column ow
 * at tap (a, b) reads padded column s1 ow + d1 b, that is XS[oh s0 + d0 a,
 * (d1 b) % s1, ow + (d1 b) / s1].  A row's outputs are then summed over the
 * taps (unrolled) in vector registers and stored once, straight into the
 * NCHW result (an elementwise epilogue fuses into the stores).  The
 * blocked schedule (compute_conv.c) would pack the channels into blocks
 * and unpack the result, which for channel counts left NCHW (ShuffleNetV2's
 * 58 and 116) cost several times the products.  It applies where a row's
 * vectors are mostly full. */
#include "lower/compute/compute.h"

enum { COLS_MAX = 4 };

static int vec_lanes(DType dt) { return (int)(target_vector_bytes() / dtype_bytes(dt)); }

static int64_t tile_cols(int64_t ow, int vl) { return ow <= COLS_MAX * vl ? ow : COLS_MAX * vl; }

bool lc_depthwise_rows_applies(const DwRows *g) {
  int vl = vec_lanes(g->dt);
  if (g->C <= 0 || g->H <= 0 || g->W <= 0 || g->OH <= 0 || g->OW <= 0 || vl < 2) return false;
  for (int i = 0; i < 2; i++)
    if (g->s[i] < 1 || g->d[i] < 1 || g->p[i] < 0) return false;
  int64_t tw = tile_cols(g->OW, vl), regs = (tw + vl - 1) / vl;
  return tw * 4 >= regs * vl * 3;
}

typedef struct Dw {
  const DwRows *g;
  Buffer *xs, *acc, *out;
  PrimExpr *n, *c, *oh;
  int vl;
  int64_t hp, wq; /* XS's padded rows and columns per phase */
} Dw;

/* XS[h + p0, q % s1, q / s1] = x[n, c, h, w], q = w + p1, for the columns
 * of phase r: w = s1 j + r - p1 over the j that land inside the image. */
static void pack_phase(LowerCx *L, const Dw *t, int64_t r) {
  const DwRows *g = t->g;
  int64_t s = g->s[1], lo = 0, hi = t->wq; /* j in [lo, hi) */
  while (lo < hi && s * lo + r - g->p[1] < 0) lo++;
  while (hi > lo && s * (hi - 1) + r - g->p[1] >= g->W) hi--;
  if (lo >= hi) return;
  TirVar *h = lc_tvar(L, "h", lc_int(L, g->H)), *j = lc_tvar(L, "j", lc_int(L, hi - lo));
  PrimExpr *jj = lc_plus(L, lc_var(L, j), lc_int(L, lo));
  PrimExpr *xi[4] = {t->n, t->c, lc_var(L, h),
                     lc_plus(L, lc_times(L, jj, lc_int(L, s)), lc_int(L, r - g->p[1]))};
  PrimExpr *si[3] = {lc_plus(L, lc_var(L, h), lc_int(L, g->p[0])), lc_int(L, r), jj};
  lc_open(L);
  lc_open(L);
  lc_store(L, t->xs, 3, si, lc_at(L, g->x, xi));
  lc_for(L, s == 1 ? LOOP_VECTORIZED : LOOP_RANGE, j, lc_int(L, hi - lo), lc_close(L));
  lc_for(L, LOOP_RANGE, h, lc_int(L, g->H), lc_close(L));
}

typedef void LaneFn(LowerCx *L, const Dw *t, PrimExpr *j, PrimExpr *col, int64_t a, int64_t b);

/* f(column in the tile, column in the row) over cols columns from w0, in
 * vectorized loops of at most a register. */
static void lanes(LowerCx *L, const Dw *t, int64_t cols, PrimExpr *w0, int64_t a, int64_t b,
                  LaneFn *f) {
  for (int64_t off = 0; off < cols; off += t->vl) {
    int64_t w = cols - off < t->vl ? cols - off : t->vl;
    TirVar *l = lc_tvar(L, "l", lc_int(L, w));
    lc_open(L);
    PrimExpr *j = lc_plus(L, lc_int(L, off), lc_var(L, l));
    f(L, t, j, lc_plus(L, w0, j), a, b);
    lc_for(L, LOOP_VECTORIZED, l, lc_int(L, w), lc_close(L));
  }
}

static void zero_at(LowerCx *L, const Dw *t, PrimExpr *j, PrimExpr *col, int64_t a, int64_t b) {
  (void)col, (void)a, (void)b;
  lc_store(L, t->acc, 1, &j, lc_lit(L, t->g->dt, 0));
}

static void tap_at(LowerCx *L, const Dw *t, PrimExpr *j, PrimExpr *col, int64_t a, int64_t b) {
  const DwRows *g = t->g;
  int64_t q = g->d[1] * b;
  PrimExpr *h = lc_plus(L, lc_times(L, t->oh, lc_int(L, g->s[0])), lc_int(L, g->d[0] * a));
  PrimExpr *si[3] = {h, lc_int(L, q % g->s[1]), lc_plus(L, col, lc_int(L, q / g->s[1]))};
  PrimExpr *wi[4] = {t->c, lc_int(L, 0), lc_int(L, a), lc_int(L, b)};
  PrimExpr *prod = lc_times(L, lc_load(L, t->xs, 3, si), lc_at(L, g->w, wi));
  lc_store(L, t->acc, 1, &j, lc_plus(L, lc_load(L, t->acc, 1, &j), prod));
}

static void store_at(LowerCx *L, const Dw *t, PrimExpr *j, PrimExpr *col, int64_t a, int64_t b) {
  (void)a, (void)b;
  PrimExpr *oi[4] = {t->n, t->c, t->oh, col};
  lc_store(L, t->out, 4, oi, lc_load(L, t->acc, 1, &j));
}

/* One tile of cols outputs of row t->oh from column w0: zero, every tap,
 * store. */
static void tile(LowerCx *L, const Dw *t, int64_t cols, PrimExpr *w0) {
  lanes(L, t, cols, w0, 0, 0, zero_at);
  for (int64_t a = 0; a < t->g->KH; a++)
    for (int64_t b = 0; b < t->g->KW; b++) lanes(L, t, cols, w0, a, b, tap_at);
  lanes(L, t, cols, w0, 0, 0, store_at);
}

/* The rows of one channel: whole tiles along each, then a shorter one. */
static void rows(LowerCx *L, Dw *t) {
  int64_t tw = tile_cols(t->g->OW, t->vl), full = t->g->OW / tw, rest = t->g->OW % tw;
  TirVar *oh = lc_tvar(L, "oh", lc_int(L, t->g->OH)), *j = lc_tvar(L, "tw", lc_int(L, full));
  t->oh = lc_var(L, oh);
  lc_open(L);
  lc_open(L);
  tile(L, t, tw, lc_times(L, lc_var(L, j), lc_int(L, tw)));
  lc_for(L, LOOP_RANGE, j, lc_int(L, full), lc_close(L));
  if (rest) tile(L, t, rest, lc_int(L, full * tw));
  lc_for(L, LOOP_RANGE, oh, lc_int(L, t->g->OH), lc_close(L));
}

void lc_conv_depthwise_rows(LowerCx *L, const DwRows *g, Buffer *out) {
  Dw t = {.g = g, .out = out, .vl = vec_lanes(g->dt)};
  int64_t wp = (g->OW - 1) * g->s[1] + (g->KW - 1) * g->d[1] + 1;
  t.hp = (g->OH - 1) * g->s[0] + (g->KH - 1) * g->d[0] + 1;
  if (t.hp < g->H + g->p[0]) t.hp = g->H + g->p[0];
  if (wp < g->W + g->p[1]) wp = g->W + g->p[1];
  t.wq = (wp + g->s[1] - 1) / g->s[1];
  TirVar *n = lc_tvar(L, "n", g->N), *c = lc_tvar(L, "c", lc_int(L, g->C));
  t.n = lc_var(L, n), t.c = lc_var(L, c);
  lc_open(L); /* n */
  lc_open(L); /* c */
  PrimExpr *xshape[3] = {lc_int(L, t.hp), lc_int(L, g->s[1]), lc_int(L, t.wq)};
  t.xs = lc_alloc(L, "XS", g->dt, 3, xshape); /* zeros: the padding */
  PrimExpr *ashape[1] = {lc_int(L, tile_cols(g->OW, t.vl))};
  t.acc = lc_alloc(L, "acc", g->dt, 1, ashape);
  t.acc->no_init = true;
  for (int64_t r = 0; r < g->s[1]; r++) pack_phase(L, &t, r);
  rows(L, &t);
  lc_for(L, LOOP_PARALLEL, c, lc_int(L, g->C), lc_close(L));
  lc_for(L, LOOP_RANGE, n, g->N, lc_close(L));
}
