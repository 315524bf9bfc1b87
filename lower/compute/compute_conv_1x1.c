/* compute_conv_1x1.c — the pointwise schedule of nn.conv2d (compute.h:
 * lc_conv_pointwise): a 1x1 convolution of stride 1, no padding, groups 1,
 * on NCHW data and OIHW weights is a product per image row,
 *
 *   out[n, o, h, :] = sum over c of w[o, c, 0, 0] * x[n, c, h, :]
 *
 * computed in place: a register tile of R output channels by one row's
 * columns (TW of them, in vectors of at most a register) sums, over the
 * input channels, a vector of the input row times R broadcast weights, and
 * stores each result element once, straight into the NCHW result (so an
 * elementwise epilogue fuses into the stores).  Nothing is packed or
 * unpacked, unlike the blocked schedule (compute_conv.c), whose copies cost
 * more than the products for channel counts with no block near the vector
 * width (ShuffleNetV2's 58 and 116: 60-80 GFLOP/s there).
 *
 * The tile's accumulators are at most a budget of vector registers (24 of
 * AVX-512's 32, 12 of AVX2's 16): rows of at most COLS_MAX registers take
 * R = budget / registers per row output channels, at most ROWS_MAX (or
 * conv2d.pw_rows), evened out over the blocks the channels need (the last
 * block may be shorter); a wider row is cut into tiles of COLS_MAX
 * registers and one shorter tile.  It applies only where a row's vectors
 * are mostly full (narrow rows such as 7 columns in 16 lanes would waste
 * most of each product). */
#include "lower/compute/compute.h"

enum { COLS_MAX = 4, ROWS_MAX = 16 };

static int vec_lanes(DType dt) { return (int)(target_vector_bytes() / dtype_bytes(dt)); }

static int acc_budget(void) { return target_vector_bytes() >= 64 ? 24 : 12; }

/* The tile's columns: the whole row when it fits COLS_MAX registers, else
 * COLS_MAX registers. */
static int64_t tile_cols(int64_t W, int vl) { return W <= COLS_MAX * vl ? W : COLS_MAX * vl; }

bool lc_pointwise_applies(const Pointwise *p) {
  int vl = vec_lanes(p->dt);
  if (p->C <= 0 || p->O <= 0 || p->H <= 0 || p->W <= 0 || vl < 2) return false;
  int64_t tw = tile_cols(p->W, vl), regs = (tw + vl - 1) / vl;
  return tw * 4 >= regs * vl * 3; /* the row's registers at least 3/4 full */
}

typedef struct Pw {
  const Pointwise *p;
  Buffer *acc, *out;
  PrimExpr *n, *h, *o0; /* the tile's image, row, first output channel */
  int vl;
} Pw;

/* f(r, j, col, c): row r of the tile, its column j, the image's column. */
typedef void LaneFn(LowerCx *L, const Pw *t, PrimExpr *r, PrimExpr *j, PrimExpr *col, PrimExpr *c);

/* For r < rows (unrolled) and the cols columns from w0 in vectorized loops
 * of at most a register: f(r, column in the tile, column in the row, c). */
static void rows_lanes(LowerCx *L, const Pw *t, int rows, int64_t cols, PrimExpr *w0, PrimExpr *c,
                       LaneFn *f) {
  TirVar *r = lc_tvar(L, "r", lc_int(L, rows));
  lc_open(L);
  for (int64_t off = 0; off < cols; off += t->vl) {
    int64_t w = cols - off < t->vl ? cols - off : t->vl;
    TirVar *l = lc_tvar(L, "l", lc_int(L, w));
    lc_open(L);
    PrimExpr *j = lc_plus(L, lc_int(L, off), lc_var(L, l));
    f(L, t, lc_var(L, r), j, lc_plus(L, w0, j), c);
    lc_for(L, LOOP_VECTORIZED, l, lc_int(L, w), lc_close(L));
  }
  lc_for(L, LOOP_UNROLLED, r, lc_int(L, rows), lc_close(L));
}

static void zero_at(LowerCx *L, const Pw *t, PrimExpr *r, PrimExpr *j, PrimExpr *col, PrimExpr *c) {
  (void)col, (void)c;
  PrimExpr *ai[2] = {r, j};
  lc_store(L, t->acc, 2, ai, lc_lit(L, t->p->dt, 0));
}

static void step_at(LowerCx *L, const Pw *t, PrimExpr *r, PrimExpr *j, PrimExpr *col, PrimExpr *c) {
  PrimExpr *ai[2] = {r, j}, *xi[4] = {t->n, c, t->h, col};
  PrimExpr *wi[4] = {lc_plus(L, t->o0, r), c, lc_int(L, 0), lc_int(L, 0)};
  PrimExpr *prod = lc_times(L, lc_at(L, t->p->x, xi), lc_at(L, t->p->w, wi));
  lc_store(L, t->acc, 2, ai, lc_plus(L, lc_load(L, t->acc, 2, ai), prod));
}

static void store_at(LowerCx *L, const Pw *t, PrimExpr *r, PrimExpr *j, PrimExpr *col,
                     PrimExpr *c) {
  (void)c;
  PrimExpr *ai[2] = {r, j}, *oi[4] = {t->n, lc_plus(L, t->o0, r), t->h, col};
  lc_store(L, t->out, 4, oi, lc_load(L, t->acc, 2, ai));
}

/* One tile: rows output channels from t->o0, cols columns from w0. */
static void tile(LowerCx *L, const Pw *t, int rows, int64_t cols, PrimExpr *w0) {
  rows_lanes(L, t, rows, cols, w0, NULL, zero_at);
  TirVar *c = lc_tvar(L, "c", lc_int(L, t->p->C));
  lc_open(L);
  rows_lanes(L, t, rows, cols, w0, lc_var(L, c), step_at);
  lc_for(L, LOOP_RANGE, c, lc_int(L, t->p->C), lc_close(L));
  rows_lanes(L, t, rows, cols, w0, NULL, store_at);
}

/* The tiles of one row: whole ones along it, then a shorter one. */
static void row_tiles(LowerCx *L, const Pw *t, int rows) {
  int64_t tw = tile_cols(t->p->W, t->vl), full = t->p->W / tw, rest = t->p->W % tw;
  TirVar *j = lc_tvar(L, "tw", lc_int(L, full));
  lc_open(L);
  tile(L, t, rows, tw, lc_times(L, lc_var(L, j), lc_int(L, tw)));
  lc_for(L, LOOP_RANGE, j, lc_int(L, full), lc_close(L));
  if (rest) tile(L, t, rows, rest, lc_int(L, full * tw));
}

/* R output channels a tile: the budget's, at most the knob (0: ROWS_MAX),
 * evened out over the blocks the channels need. */
static int pick_rows(LowerCx *L, const Pointwise *p, int vl) {
  int64_t tw = tile_cols(p->W, vl), regs = (tw + vl - 1) / vl;
  int64_t r = acc_budget() / regs, knob = lc_knob(L, KNOB_CONV2D_PW_ROWS);
  int64_t cap = knob ? knob : ROWS_MAX;
  if (r > cap) r = cap;
  if (r < 1) r = 1;
  int64_t blocks = (p->O + r - 1) / r;
  return (int)((p->O + blocks - 1) / blocks);
}

void lc_conv_pointwise(LowerCx *L, const Pointwise *p, Buffer *out) {
  int vl = vec_lanes(p->dt), R = pick_rows(L, p, vl);
  int64_t full = p->O / R, last = p->O % R, nb = full + (last > 0);
  TirVar *n = lc_tvar(L, "n", p->N), *q = lc_tvar(L, "row", lc_int(L, nb * p->H));
  PrimExpr *ob = lc_bin(L, PB_DIV, lc_var(L, q), lc_int(L, p->H));
  Pw t = {p, NULL, out, lc_var(L, n), lc_bin(L, PB_MOD, lc_var(L, q), lc_int(L, p->H)), NULL, vl};
  lc_open(L); /* n */
  lc_open(L); /* q: (channel block, row) pairs, block-major */
  PrimExpr *shape[2] = {lc_int(L, R), lc_int(L, tile_cols(p->W, vl))};
  t.acc = lc_alloc(L, "acc", p->dt, 2, shape);
  t.acc->no_init = true; /* each tile zeroes its accumulators */
  if (full) {            /* o0 clamped to the whole blocks: provably in bounds */
    t.o0 = lc_times(L, lc_call(L, PI_MIN, ob, lc_int(L, full - 1), NULL), lc_int(L, R));
    lc_open(L);
    row_tiles(L, &t, R);
  }
  if (last) {
    Stmt *whole = full ? lc_close(L) : NULL;
    t.o0 = lc_int(L, full * R);
    lc_open(L);
    row_tiles(L, &t, (int)last);
    Stmt *part = lc_close(L);
    if (whole)
      lc_if_else(L, lc_bin(L, PB_LT, ob, lc_int(L, full)), whole, part);
    else
      lc_emit(L, part);
  } else {
    lc_emit(L, lc_close(L));
  }
  lc_for(L, LOOP_PARALLEL, q, lc_int(L, nb * p->H), lc_close(L));
  lc_for(L, LOOP_RANGE, n, p->N, lc_close(L));
}
