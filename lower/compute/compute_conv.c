/* compute_conv.c — compute rules (lower/compute/compute.h) of nn.conv2d (materialized).
 *
 * The fast schedule (fast math on, float32/float64, static shapes, any
 * groups) is a blocked direct convolution: the output channels are
 * cut into blocks of OB = one vector register of lanes (16 float32 lanes
 * with AVX-512, 8 with AVX2: target_vector_bytes), and a register tile of T
 * output columns x OB channels (T accumulators) sums, over input channels
 * and kernel taps, a broadcast input element times a vector of OB weights.
 * The operands are packed per call: the input into a zero-padded
 * XP[n, cb, hp, wp, ci] (padding becomes zeros, so the inner loops have no
 * tests), the weights into WP[ob, cb, kh, kw, ci, oi] (the OB output
 * channels of a block contiguous); depthwise convolutions (groups =
 * channels = outputs) pack channels into blocks of OB lanes and multiply
 * lanes by lanes.  A grouped convolution's output block holds whole groups
 * or part of one (the lanes a multiple or a divisor of the group's output
 * channels) and sums over the input channels of its groups only: its
 * weights are packed block-diagonal (zeros for the other groups' inputs),
 * or, for groups of at most conv2d.rotate_max channels in and out, each
 * lane reads its group's inputs rotated (rot_lane: a vector load and a
 * shuffle, no zero products).  Its block sizes are conv2d's group_* and
 * rotate_* knobs (compute_knobs.h).  Accumulators are in the operands' dtype (as dense's),
 * so results agree with the reference kernel (float64 sums) within
 * rounding.
 *
 * A blocked 3x3 convolution of stride 1 and padding 1 whose image has more
 * 2x2 tiles than it has input channels uses the Winograd F(2x2, 3x3)
 * schedule instead (compute_winograd.c; RLY_WINOGRAD=0: never).
 *
 * Everything else (sizes known at run time, fast math off, float16,
 * integers) uses the general rule: an accumulator row
 * per output row, vectorized over the row, output channels in parallel,
 * summing in the reference kernel's order, so it agrees with it bit for
 * bit: in float64 for floats (float16 rounded once at the store); for
 * integer operands of any dtypes with an integer out_dtype (int8 and uint8
 * into int32: the quantized convolutions) in the integer result's dtype,
 * wrapping, which equals the kernel's wrapping 64-bit sum narrowed to it
 * (lc_product_acc).
 *
 * Layouts other than NCHW / OIHW (NHWC data, HWIO / OHWI / HWOI weights)
 * change only which axis each index goes to (NnConvAxes): the loads of the
 * data and the weight, and the stores of the result, which has the data's
 * layout. */
#include <stdlib.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/nn_int.h"

/* Register tile widths (output columns) by vector width: AVX-512 has 32
 * vector registers, AVX2 16. */
enum { TILE_WIDE = 14, TILE_NARROW = 12, TILE_MIN = 4 };

/* The grouped schedule's block sizes are knobs (compute_knobs.h: conv2d's
 * group_cb, group_tile, rotate_max, rotate_tile); at most this many output
 * channels a block (0: one vector register). */
enum { GROUP_LANES = 0 };

typedef struct Conv {
  const LTensor *x, *w;
  DType acc;                /* the accumulators' dtype: float64, or an integer result's own */
  int64_t s[2], p[2], d[2]; /* p: the padding before (top, left); the rest sizes the output */
  PrimExpr *H, *W, *C, *KH, *KW, *OH, *OW;
  PrimExpr *cg, *og; /* channels per group: input (the weight's I), output */
  int64_t groups;
  NnConvAxes ax; /* the data's N, C, H, W axes and the weight's O, I, H, W axes */
} Conv;

/* The 4 indices idx (in the plain order N, C, H, W or O, I, H, W) put on
 * the axes of a layout: out[axes[j]] = idx[j]. */
static PrimExpr **placed(PrimExpr **out, const int *axes, PrimExpr *const *idx) {
  for (int j = 0; j < 4; j++) out[axes[j]] = idx[j];
  return out;
}

static void plain_axes(NnConvAxes *ax) {
  for (int j = 0; j < 4; j++) ax->x[j] = ax->w[j] = j;
}

/* The conv2d attributes through the relation's readers (ops/nn_int.h):
 * strides, dilation, the padding before each dim, and the layouts' axes. */
static bool conv_attrs(LowerCx *L, const Expr *call, Conv *c) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow w = {.S = 2};
  if (!nn_window_attrs(&cx, call->u.call.attrs, &w))
    return lc_fail(L, "nn.conv2d: %s", cx.err), false;
  for (int i = 0; i < 2; i++) c->s[i] = w.stride[i], c->d[i] = w.dil[i], c->p[i] = w.lo[i];
  if (!nn_conv_axes(&cx, call->u.call.attrs, 2, &c->ax))
    return lc_fail(L, "nn.conv2d: %s", cx.err), false;
  return true;
}

/* ───────────────────────── the blocked schedule ───────────────────────── */

typedef struct Blocked Blocked;
/* Writes one result element: output channel block ob, lane l (the channel
 * ob * OB + l), row oh, column ow. */
typedef void (*StoreFn)(LowerCx *L, const Blocked *k, PrimExpr *n, PrimExpr *ob, PrimExpr *l,
                        PrimExpr *oh, PrimExpr *ow, PrimExpr *v);

struct Blocked {
  const LTensor *x, *w;
  int64_t xblock; /* x is NCHW (0) or NCHW<xblock>c */
  bool wblocked;  /* w is OIHW<cb>i<lanes>o (else OIHW) */
  DType dt;
  PrimExpr *N;
  int64_t C, H, W, O, KH, KW, OH, OW, s[2], d[2], p[2];
  int lanes;        /* output channels per block (vector lanes) */
  int cb;           /* input channels per block of XP */
  int64_t nob, ncb; /* output and input channel blocks */
  int tile;         /* output columns per register tile */
  bool depthwise;   /* lanes x lanes products; XP's blocks are the output's */
  bool direct;      /* depthwise on a blocked input buffer: read in place, no XP */
  int64_t cg, og;   /* grouped (else 0): input and output channels per group */
  int64_t nxb;      /* XP's channel blocks (0: ncb) */
  int64_t wib;      /* a blocked weight's input channel block */
  bool rotate;      /* grouped, narrow groups: lanes read rotated inputs (rot_lane) */
  NnConvAxes ax;    /* the layouts' axes of a plain x, w and the result */
  Buffer *xp, *wp;
  StoreFn store;
  Buffer *out;
};

/* The widest tile up to the register budget that divides OW (no leftover
 * tile), else the budget itself. */
static int pick_tile(int64_t ow) {
  int max = target_vector_bytes() >= 64 ? TILE_WIDE : TILE_NARROW;
  for (int t = max; t >= TILE_MIN; t--)
    if (ow % t == 0) return t;
  return ow < max ? (int)ow : max;
}

/* How a tile reads the input: from the padded XP, or (direct) from x in
 * place at clamped positions, in the interior of the image or at its edge
 * (where a position outside reads 0). */
typedef enum TapMode { TAP_PADDED, TAP_INTERIOR, TAP_EDGE } TapMode;

static PrimExpr *clamp0(LowerCx *L, PrimExpr *v, int64_t n) {
  return lc_call(L, PI_MAX, lc_call(L, PI_MIN, v, lc_int(L, n - 1), NULL), lc_int(L, 0), NULL);
}

/* The input vector for tap (h, w) in padded coordinates. */
static PrimExpr *tap_load(LowerCx *L, const Blocked *k, TapMode mode, PrimExpr **xi) {
  if (mode == TAP_PADDED) return lc_load(L, k->xp, 5, xi);
  PrimExpr *h = lc_bin(L, PB_SUB, xi[2], lc_int(L, k->p[0]));
  PrimExpr *w = lc_bin(L, PB_SUB, xi[3], lc_int(L, k->p[1]));
  PrimExpr *ci[5] = {xi[0], xi[1], clamp0(L, h, k->H), clamp0(L, w, k->W), xi[4]};
  PrimExpr *v = lc_load(L, k->xp, 5, ci);
  if (mode == TAP_INTERIOR) return v;
  PrimExpr *in = lc_bin(
      L, PB_AND,
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, h, lc_int(L, 0)), lc_bin(L, PB_LT, h, lc_int(L, k->H))),
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, w, lc_int(L, 0)), lc_bin(L, PB_LT, w, lc_int(L, k->W))));
  return lc_call(L, PI_SELECT, in, v, lc_lit(L, k->dt, 0));
}

/* A block's lanes as vectorized loops of at most one vector register each
 * (24 float32 lanes with AVX-512: 16 and 8).  With one loop over all of
 * them LLVM splits the unrolled tile itself, badly once an epilogue is
 * fused (MobileNet's 96 -> 24 convolution and its bias: 41 GFLOP/s, 76
 * split here).  `body` emits the statements for lane index l. */
typedef void LaneBody(LowerCx *L, PrimExpr *l, void *u);
static void lane_loops(LowerCx *L, const Blocked *k, LaneBody *body, void *u) {
  int vl = target_vector_bytes() / dtype_bytes(k->dt);
  for (int off = 0; off < k->lanes; off += vl) {
    int w = k->lanes - off < vl ? k->lanes - off : vl;
    TirVar *l = lc_tvar(L, "l", lc_int(L, w));
    lc_open(L);
    body(L, off ? lc_plus(L, lc_int(L, off), lc_var(L, l)) : lc_var(L, l), u);
    lc_for(L, LOOP_VECTORIZED, l, lc_int(L, w), lc_close(L));
  }
}

/* A grouped convolution's output block ob reads K = ncb * cb input
 * channels, those of the groups its lanes belong to: one group's cg when a
 * group spans whole blocks (og a multiple of the lanes), else the lanes /
 * og groups' that share the block.  The first of them is (ob * lanes / og)
 * * cg; this is its XP block. */
static PrimExpr *group_first_block(LowerCx *L, const Blocked *k, PrimExpr *ob) {
  if (k->og >= k->lanes) {
    PrimExpr *g = lc_bin(L, PB_DIV, ob, lc_int(L, k->og / k->lanes));
    return lc_times(L, g, lc_int(L, k->cg / k->cb));
  }
  return lc_times(L, ob, lc_int(L, k->ncb));
}

typedef struct StepCx {
  const Blocked *k;
  Buffer *acc;
  PrimExpr *t, *n, *ob, *icb, *ci, *a, *b, *h, *w;
  TapMode mode;
  PrimExpr *xcb; /* the input's channel block: icb, or a grouped block's */
} StepCx;

/* A block of lanes / cg whole groups of cg = og channels, its inputs one
 * XP block: at step j lane l reads input lane l - l % cg + (l % cg + j) %
 * cg, its group's channels rotated by j, so the cg steps give each lane
 * each of its group's inputs once (the weights are packed in the same
 * order).  With j and l unrolled the lanes are constants: a vector load
 * and a shuffle, cg products per lane instead of the lanes of the
 * block-diagonal form. */
static PrimExpr *rot_lane(LowerCx *L, const Blocked *k, PrimExpr *l, PrimExpr *j) {
  PrimExpr *cg = lc_int(L, k->cg), *r = lc_bin(L, PB_MOD, l, cg);
  return lc_plus(L, lc_bin(L, PB_SUB, l, r), lc_bin(L, PB_MOD, lc_plus(L, r, j), cg));
}

static void step_lane(LowerCx *L, PrimExpr *l, void *u) {
  StepCx *c = u;
  const Blocked *k = c->k;
  PrimExpr *xi[5] = {c->n, c->xcb, c->h, c->w, k->depthwise ? l : c->ci};
  if (k->rotate) xi[4] = rot_lane(L, k, l, c->ci);
  PrimExpr *wi[6] = {c->ob, c->icb, c->a, c->b, c->ci, l};
  if (k->depthwise) wi[1] = wi[4] = lc_int(L, 0);
  PrimExpr *ai[2] = {c->t, l};
  PrimExpr *prod = lc_times(L, tap_load(L, k, c->mode, xi), lc_load(L, k->wp, 6, wi));
  lc_store(L, c->acc, 2, ai, lc_plus(L, lc_load(L, c->acc, 2, ai), prod));
}

/* acc[t, l] += XP(...) * WP(...) over the input channel ci of block icb at
 * tap (a, b), for the T columns of the tile starting at ow0. */
static void tile_step(LowerCx *L, const Blocked *k, Buffer *acc, int T, PrimExpr *n, PrimExpr *ob,
                      PrimExpr *oh, PrimExpr *ow0, PrimExpr *icb, PrimExpr *ci, PrimExpr *a,
                      PrimExpr *b, TapMode mode) {
  TirVar *t = lc_tvar(L, "t", lc_int(L, T));
  PrimExpr *h = lc_plus(L, lc_times(L, oh, lc_int(L, k->s[0])), lc_times(L, a, lc_int(L, k->d[0])));
  PrimExpr *w = lc_plus(L, lc_times(L, lc_plus(L, ow0, lc_var(L, t)), lc_int(L, k->s[1])),
                        lc_times(L, b, lc_int(L, k->d[1])));
  StepCx c = {k, acc, lc_var(L, t), n, ob, icb, ci, a, b, h, w, mode, icb};
  if (k->cg) c.xcb = lc_plus(L, group_first_block(L, k, ob), icb);
  lc_open(L);
  if (k->rotate) { /* lanes unrolled: constant rotations, for SLP's shuffles */
    TirVar *l = lc_tvar(L, "l", lc_int(L, k->lanes));
    lc_open(L);
    step_lane(L, lc_var(L, l), &c);
    lc_for(L, LOOP_UNROLLED, l, lc_int(L, k->lanes), lc_close(L));
  } else {
    lane_loops(L, k, step_lane, &c);
  }
  lc_for(L, LOOP_UNROLLED, t, lc_int(L, T), lc_close(L));
}

/* The sums over input channel blocks and taps into the tile's accumulators. */
static void tile_taps(LowerCx *L, const Blocked *k, Buffer *acc, int T, PrimExpr *n, PrimExpr *ob,
                      PrimExpr *oh, PrimExpr *ow0, TapMode mode) {
  int64_t nci = k->rotate ? k->cg : k->cb;
  TirVar *icb = lc_tvar(L, "cb", lc_int(L, k->ncb)), *a = lc_tvar(L, "a", lc_int(L, k->KH)),
         *b = lc_tvar(L, "b", lc_int(L, k->KW)), *ci = lc_tvar(L, "ci", lc_int(L, nci));
  bool dw = k->depthwise;
  for (int i = 0; i < (dw ? 2 : 4); i++) lc_open(L);
  tile_step(L, k, acc, T, n, ob, oh, ow0, dw ? ob : lc_var(L, icb), dw ? NULL : lc_var(L, ci),
            lc_var(L, a), lc_var(L, b), mode);
  if (!dw) lc_for(L, k->rotate ? LOOP_UNROLLED : LOOP_RANGE, ci, lc_int(L, nci), lc_close(L));
  lc_for(L, LOOP_RANGE, b, lc_int(L, k->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, a, lc_int(L, k->KH), lc_close(L));
  if (!dw) lc_for(L, LOOP_RANGE, icb, lc_int(L, k->ncb), lc_close(L));
}

/* Whether every tap of the tile at (oh, ow0) is inside the image. */
static PrimExpr *tile_inside(LowerCx *L, const Blocked *k, int T, PrimExpr *oh, PrimExpr *ow0) {
  PrimExpr *h0 = lc_bin(L, PB_SUB, lc_times(L, oh, lc_int(L, k->s[0])), lc_int(L, k->p[0]));
  PrimExpr *w0 = lc_bin(L, PB_SUB, lc_times(L, ow0, lc_int(L, k->s[1])), lc_int(L, k->p[1]));
  PrimExpr *h1 = lc_plus(L, h0, lc_int(L, (k->KH - 1) * k->d[0]));
  PrimExpr *w1 = lc_plus(L, w0, lc_int(L, (T - 1) * k->s[1] + (k->KW - 1) * k->d[1]));
  PrimExpr *rows =
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, h0, lc_int(L, 0)), lc_bin(L, PB_LT, h1, lc_int(L, k->H)));
  PrimExpr *cols =
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, w0, lc_int(L, 0)), lc_bin(L, PB_LT, w1, lc_int(L, k->W)));
  return lc_bin(L, PB_AND, rows, cols);
}

typedef struct ZeroCx {
  Buffer *acc;
  PrimExpr *t;
  DType dt;
} ZeroCx;

static void zero_lane(LowerCx *L, PrimExpr *l, void *u) {
  ZeroCx *z = u;
  PrimExpr *ai[2] = {z->t, l};
  lc_store(L, z->acc, 2, ai, lc_lit(L, z->dt, 0));
}

typedef struct StoreCx {
  const Blocked *k;
  Buffer *acc;
  PrimExpr *t, *n, *ob, *oh, *ow;
} StoreCx;

static void store_lane(LowerCx *L, PrimExpr *l, void *u) {
  StoreCx *c = u;
  PrimExpr *ai[2] = {c->t, l};
  c->k->store(L, c->k, c->n, c->ob, l, c->oh, c->ow, lc_load(L, c->acc, 2, ai));
}

/* One register tile: zero T x lanes accumulators, sum over the input
 * channels and taps (a direct tile: the interior's loads unguarded, an
 * edge tile's guarded), hand each sum to the store function. */
static void tile_body(LowerCx *L, const Blocked *k, Buffer *acc, int T, PrimExpr *n, PrimExpr *ob,
                      PrimExpr *oh, PrimExpr *ow0) {
  TirVar *t = lc_tvar(L, "t", lc_int(L, T));
  ZeroCx z = {acc, lc_var(L, t), k->dt};
  lc_open(L);
  lane_loops(L, k, zero_lane, &z);
  lc_for(L, LOOP_UNROLLED, t, lc_int(L, T), lc_close(L));
  if (!k->direct) {
    tile_taps(L, k, acc, T, n, ob, oh, ow0, TAP_PADDED);
  } else {
    lc_open(L);
    tile_taps(L, k, acc, T, n, ob, oh, ow0, TAP_INTERIOR);
    Stmt *inner = lc_close(L);
    lc_open(L);
    tile_taps(L, k, acc, T, n, ob, oh, ow0, TAP_EDGE);
    lc_if_else(L, tile_inside(L, k, T, oh, ow0), inner, lc_close(L));
  }
  /* every lane is stored, those past O too (zeros: WP's zero weights):
   * the result is blocked by whole lanes (an NCHW result's YB), which keeps
   * the stores whole vectors */
  TirVar *t2 = lc_tvar(L, "t", lc_int(L, T));
  StoreCx sc = {k, acc, lc_var(L, t2), n, ob, oh, lc_plus(L, ow0, lc_var(L, t2))};
  lc_open(L);
  lane_loops(L, k, store_lane, &sc);
  lc_for(L, LOOP_UNROLLED, t2, lc_int(L, T), lc_close(L));
}

/* The loops over the output: batch, channel blocks (parallel), rows, then
 * whole tiles along the row and one shorter tile for what is left. */
static void blocked_loops(LowerCx *L, const Blocked *k) {
  int T = k->tile;
  int64_t full = k->OW / T, rest = k->OW % T;
  /* one parallel loop over (channel block, row) pairs, block-major: a
   * network's thin layers (MobileNet's 16 to 32 channels: one or two
   * blocks) still give every thread rows, and a thread's consecutive rows
   * share their block's weights */
  PrimExpr *rows = lc_int(L, k->nob * k->OH);
  TirVar *n = lc_tvar(L, "n", k->N), *p = lc_tvar(L, "row", rows),
         *tw = lc_tvar(L, "tw", lc_int(L, full));
  PrimExpr *ob = lc_bin(L, PB_DIV, lc_var(L, p), lc_int(L, k->OH)),
           *oh = lc_bin(L, PB_MOD, lc_var(L, p), lc_int(L, k->OH));
  lc_open(L); /* n */
  lc_open(L); /* p */
  PrimExpr *tshape[2] = {lc_int(L, T), lc_int(L, k->lanes)};
  Buffer *acc = lc_alloc(L, "acc", k->dt, 2, tshape);
  acc->no_init = true; /* each tile zeroes its accumulators */
  lc_open(L);          /* tw */
  tile_body(L, k, acc, T, lc_var(L, n), ob, oh, lc_times(L, lc_var(L, tw), lc_int(L, T)));
  lc_for(L, LOOP_RANGE, tw, lc_int(L, full), lc_close(L));
  if (rest) tile_body(L, k, acc, (int)rest, lc_var(L, n), ob, oh, lc_int(L, full * T));
  lc_for(L, LOOP_PARALLEL, p, rows, lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
}

/* The input element (n, c, h, w) of x, NCHW or (xblock > 0) NCHW<xblock>c. */
static PrimExpr *x_at(LowerCx *L, const Blocked *k, PrimExpr *n, PrimExpr *c, PrimExpr *h,
                      PrimExpr *w) {
  PrimExpr *xi[5] = {n, c, h, w};
  if (k->xblock) {
    PrimExpr *f = lc_int(L, k->xblock);
    xi[1] = lc_bin(L, PB_DIV, c, f), xi[4] = lc_bin(L, PB_MOD, c, f);
    return lc_at(L, k->x, xi);
  }
  PrimExpr *at[4];
  return lc_at(L, k->x, placed(at, k->ax.x, xi));
}

/* XP[n, c / cb, h + p0, w + p1, c % cb] = x(n, c, h, w); the rest of XP
 * (padding, channels past C) keeps the alloc's zeros.  The channels of a
 * block are the innermost loop, so the stores (and the loads of an input
 * already blocked by cb) are contiguous vectors. */
static Buffer *pack_input(LowerCx *L, const Blocked *k) {
  int64_t hp = (k->OH - 1) * k->s[0] + (k->KH - 1) * k->d[0] + 1;
  int64_t wp = (k->OW - 1) * k->s[1] + (k->KW - 1) * k->d[1] + 1;
  if (hp < k->H + k->p[0]) hp = k->H + k->p[0];
  if (wp < k->W + k->p[1]) wp = k->W + k->p[1];
  int64_t nxb = k->nxb ? k->nxb : k->ncb;
  bool partial = nxb * k->cb != k->C;
  /* already in place: blocked by cb, a buffer, no padding needed */
  if (k->x->buf && k->xblock == k->cb && !partial && !k->p[0] && !k->p[1] && hp == k->H &&
      wp == k->W)
    return k->x->buf;
  PrimExpr *shape[5] = {k->N, lc_int(L, nxb), lc_int(L, hp), lc_int(L, wp), lc_int(L, k->cb)};
  Buffer *xp = lc_alloc(L, "XP", k->dt, 5, shape);
  TirVar *n = lc_tvar(L, "n", k->N), *h = lc_tvar(L, "h", lc_int(L, k->H)),
         *vb = lc_tvar(L, "cb", lc_int(L, nxb)), *w = lc_tvar(L, "w", lc_int(L, k->W)),
         *ci = lc_tvar(L, "ci", lc_int(L, k->cb));
  for (int i = 0; i < (partial ? 6 : 5); i++) lc_open(L); /* n, h, cb, w, ci, if */
  PrimExpr *pi[5] = {lc_var(L, n), lc_var(L, vb), lc_plus(L, lc_var(L, h), lc_int(L, k->p[0])),
                     lc_plus(L, lc_var(L, w), lc_int(L, k->p[1])), lc_var(L, ci)};
  PrimExpr *c = lc_plus(L, lc_times(L, lc_var(L, vb), lc_int(L, k->cb)), lc_var(L, ci));
  PrimExpr *xi[5] = {lc_var(L, n), lc_var(L, vb), lc_var(L, h), lc_var(L, w), lc_var(L, ci)};
  PrimExpr *v = k->xblock == k->cb ? lc_at(L, k->x, xi)
                                   : x_at(L, k, lc_var(L, n), c, lc_var(L, h), lc_var(L, w));
  lc_store(L, xp, 5, pi, v);
  if (partial) lc_if(L, lc_bin(L, PB_LT, c, lc_int(L, k->C)), lc_close(L));
  lc_for(L, LOOP_VECTORIZED, ci, lc_int(L, k->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, w, lc_int(L, k->W), lc_close(L));
  lc_for(L, LOOP_RANGE, vb, lc_int(L, nxb), lc_close(L));
  lc_for(L, LOOP_PARALLEL, h, lc_int(L, k->H), lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
  return xp;
}

/* The weight of output channel o and input channel j of its group at tap
 * (a, b): w plain (its layout's axes) or blocked (O/lanes, cg/wib, kh, kw,
 * wib, lanes). */
static PrimExpr *group_w_at(LowerCx *L, const Blocked *k, PrimExpr *o, PrimExpr *j, PrimExpr *a,
                            PrimExpr *b) {
  PrimExpr *wi[6] = {o, j, a, b}, *at[4];
  if (!k->wblocked) return lc_at(L, k->w, placed(at, k->ax.w, wi));
  PrimExpr *lanes = lc_int(L, k->lanes), *ib = lc_int(L, k->wib);
  PrimExpr *bi[6] = {lc_bin(L, PB_DIV, o, lanes), lc_bin(L, PB_DIV, j, ib),   a, b,
                     lc_bin(L, PB_MOD, j, ib),    lc_bin(L, PB_MOD, o, lanes)};
  return lc_at(L, k->w, bi);
}

/* A rotated grouped convolution's weights (rot_lane): WP[ob, 0, a, b, j, l]
 * = w[o, (l % cg + j) % cg, a, b] for output channel o = ob * lanes + l
 * (zero past O). */
static Buffer *pack_weights_rotated(LowerCx *L, const Blocked *k) {
  PrimExpr *lanes = lc_int(L, k->lanes), *cg = lc_int(L, k->cg);
  PrimExpr *shape[6] = {lc_int(L, k->nob), lc_int(L, 1), lc_int(L, k->KH),
                        lc_int(L, k->KW),  cg,           lanes};
  Buffer *wp = lc_alloc(L, "WP", k->dt, 6, shape);
  TirVar *ob = lc_tvar(L, "ob", lc_int(L, k->nob)), *l = lc_tvar(L, "l", lanes),
         *j = lc_tvar(L, "j", cg), *a = lc_tvar(L, "a", lc_int(L, k->KH)),
         *b = lc_tvar(L, "b", lc_int(L, k->KW));
  PrimExpr *o = lc_plus(L, lc_times(L, lc_var(L, ob), lanes), lc_var(L, l));
  PrimExpr *jj =
      lc_bin(L, PB_MOD, lc_plus(L, lc_bin(L, PB_MOD, lc_var(L, l), cg), lc_var(L, j)), cg);
  PrimExpr *pi[6] = {lc_var(L, ob), lc_int(L, 0), lc_var(L, a),
                     lc_var(L, b),  lc_var(L, j), lc_var(L, l)};
  for (int i = 0; i < 6; i++) lc_open(L); /* ob, a, b, j, l, if */
  lc_store(L, wp, 6, pi, group_w_at(L, k, o, jj, lc_var(L, a), lc_var(L, b)));
  lc_if(L, lc_bin(L, PB_LT, o, lc_int(L, k->O)), lc_close(L));
  lc_for(L, LOOP_RANGE, l, lanes, lc_close(L));
  lc_for(L, LOOP_RANGE, j, cg, lc_close(L));
  lc_for(L, LOOP_RANGE, b, lc_int(L, k->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, a, lc_int(L, k->KH), lc_close(L));
  lc_for(L, LOOP_PARALLEL, ob, lc_int(L, k->nob), lc_close(L));
  return wp;
}

/* A grouped convolution's weights block-diagonal: WP[ob, cb, a, b, ci, l]
 * = w[o, j, a, b] for output channel o = ob * lanes + l and input channel
 * c = its block's first (group_first_block) + cb * CB + ci when c is in
 * o's group (j = c - o / og * cg in [0, cg)), else zero (the alloc's):
 * the lanes of a block that spans several groups multiply the other
 * groups' inputs by zeros.  A blocked weight whose blocks are WP's (one
 * group per block, its input block CB) is used as it is. */
static Buffer *pack_weights_grouped(LowerCx *L, const Blocked *k) {
  if (k->rotate) return pack_weights_rotated(L, k);
  if (k->wblocked && k->w->buf && k->og % k->lanes == 0 && k->wib == k->cb) return k->w->buf;
  PrimExpr *lanes = lc_int(L, k->lanes);
  PrimExpr *shape[6] = {lc_int(L, k->nob), lc_int(L, k->ncb), lc_int(L, k->KH),
                        lc_int(L, k->KW),  lc_int(L, k->cb),  lanes};
  Buffer *wp = lc_alloc(L, "WP", k->dt, 6, shape);
  TirVar *ob = lc_tvar(L, "ob", lc_int(L, k->nob)), *l = lc_tvar(L, "l", lanes),
         *vb = lc_tvar(L, "cb", lc_int(L, k->ncb)), *ci = lc_tvar(L, "ci", lc_int(L, k->cb)),
         *a = lc_tvar(L, "a", lc_int(L, k->KH)), *b = lc_tvar(L, "b", lc_int(L, k->KW));
  PrimExpr *o = lc_plus(L, lc_times(L, lc_var(L, ob), lanes), lc_var(L, l));
  PrimExpr *blk = lc_plus(L, group_first_block(L, k, lc_var(L, ob)), lc_var(L, vb));
  PrimExpr *c = lc_plus(L, lc_times(L, blk, lc_int(L, k->cb)), lc_var(L, ci));
  PrimExpr *j =
      lc_bin(L, PB_SUB, c, lc_times(L, lc_bin(L, PB_DIV, o, lc_int(L, k->og)), lc_int(L, k->cg)));
  PrimExpr *in =
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, j, lc_int(L, 0)), lc_bin(L, PB_LT, j, lc_int(L, k->cg)));
  PrimExpr *pi[6] = {lc_var(L, ob), lc_var(L, vb), lc_var(L, a),
                     lc_var(L, b),  lc_var(L, ci), lc_var(L, l)};
  for (int i = 0; i < 7; i++) lc_open(L); /* ob, cb, a, b, ci, l, if */
  lc_store(L, wp, 6, pi, group_w_at(L, k, o, j, lc_var(L, a), lc_var(L, b)));
  lc_if(L, lc_bin(L, PB_AND, lc_bin(L, PB_LT, o, lc_int(L, k->O)), in), lc_close(L));
  lc_for(L, LOOP_RANGE, l, lanes, lc_close(L));
  lc_for(L, LOOP_RANGE, ci, lc_int(L, k->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, b, lc_int(L, k->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, a, lc_int(L, k->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, vb, lc_int(L, k->ncb), lc_close(L));
  lc_for(L, LOOP_PARALLEL, ob, lc_int(L, k->nob), lc_close(L));
  return wp;
}

/* WP[ob, cb, a, b, ci, l] = w[ob * lanes + l, cb * CB + ci, a, b] (zero
 * past O); depthwise: WP[ob, 0, a, b, 0, l] = w[ob * lanes + l, 0, a, b].
 * An OIHW weight is packed; a blocked one is used as it is. */
static Buffer *pack_weights(LowerCx *L, const Blocked *k) {
  if (k->cg) return pack_weights_grouped(L, k);
  if (k->wblocked && k->w->buf) return k->w->buf;
  PrimExpr *lanes = lc_int(L, k->lanes);
  int64_t ncb = k->depthwise ? 1 : k->ncb, cb = k->depthwise ? 1 : k->cb;
  PrimExpr *shape[6] = {lc_int(L, k->nob), lc_int(L, ncb), lc_int(L, k->KH),
                        lc_int(L, k->KW),  lc_int(L, cb),  lanes};
  Buffer *wp = lc_alloc(L, "WP", k->dt, 6, shape);
  TirVar *ob = lc_tvar(L, "ob", lc_int(L, k->nob)), *l = lc_tvar(L, "l", lanes),
         *vb = lc_tvar(L, "cb", lc_int(L, ncb)), *ci = lc_tvar(L, "ci", lc_int(L, cb)),
         *a = lc_tvar(L, "a", lc_int(L, k->KH)), *b = lc_tvar(L, "b", lc_int(L, k->KW));
  PrimExpr *o = lc_plus(L, lc_times(L, lc_var(L, ob), lanes), lc_var(L, l));
  PrimExpr *pi[6] = {lc_var(L, ob), lc_var(L, vb), lc_var(L, a),
                     lc_var(L, b),  lc_var(L, ci), lc_var(L, l)};
  PrimExpr *wi[6] = {o, lc_plus(L, lc_times(L, lc_var(L, vb), lc_int(L, cb)), lc_var(L, ci)),
                     lc_var(L, a), lc_var(L, b)};
  PrimExpr *at[4];
  if (k->wblocked) memcpy(wi, pi, sizeof wi); /* an inline blocked weight, copied */
  for (int i = 0; i < 7; i++) lc_open(L);     /* ob, cb, a, b, ci, l, if */
  lc_store(L, wp, 6, pi, lc_at(L, k->w, k->wblocked ? wi : placed(at, k->ax.w, wi)));
  lc_if(L, lc_bin(L, PB_LT, o, lc_int(L, k->O)), lc_close(L));
  lc_for(L, LOOP_RANGE, l, lanes, lc_close(L));
  lc_for(L, LOOP_RANGE, ci, lc_int(L, cb), lc_close(L));
  lc_for(L, LOOP_RANGE, b, lc_int(L, k->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, a, lc_int(L, k->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, vb, lc_int(L, ncb), lc_close(L));
  lc_for(L, LOOP_PARALLEL, ob, lc_int(L, k->nob), lc_close(L));
  return wp;
}

/* out[n, ob, oh, ow, l] = v (a blocked result: the tile's stores are
 * contiguous along the lanes, which keeps LLVM's SLP vectorizer on the
 * lane axis). */
static void store_blocked(LowerCx *L, const Blocked *k, PrimExpr *n, PrimExpr *ob, PrimExpr *l,
                          PrimExpr *oh, PrimExpr *ow, PrimExpr *v) {
  PrimExpr *oi[5] = {n, ob, oh, ow, l};
  lc_store(L, k->out, 5, oi, v);
}

/* out[n, o, oh, ow] = yb[n, o / lanes, oh, ow, o % lanes]: the blocked
 * result back to NCHW, rows in parallel. */
static void unpack_output(LowerCx *L, const Blocked *k, Buffer *yb, Buffer *out) {
  TirVar *n = lc_tvar(L, "n", k->N), *o = lc_tvar(L, "o", lc_int(L, k->O)),
         *oh = lc_tvar(L, "oh", lc_int(L, k->OH)), *ow = lc_tvar(L, "ow", lc_int(L, k->OW));
  for (int i = 0; i < 4; i++) lc_open(L);
  PrimExpr *lanes = lc_int(L, k->lanes);
  PrimExpr *yi[5] = {lc_var(L, n), lc_bin(L, PB_DIV, lc_var(L, o), lanes), lc_var(L, oh),
                     lc_var(L, ow), lc_bin(L, PB_MOD, lc_var(L, o), lanes)};
  PrimExpr *oi[4] = {lc_var(L, n), lc_var(L, o), lc_var(L, oh), lc_var(L, ow)}, *at[4];
  lc_store(L, out, 4, placed(at, k->ax.x, oi), lc_load(L, yb, 5, yi));
  lc_for(L, LOOP_VECTORIZED, ow, lc_int(L, k->OW), lc_close(L));
  lc_for(L, LOOP_RANGE, oh, lc_int(L, k->OH), lc_close(L));
  lc_for(L, LOOP_PARALLEL, o, lc_int(L, k->O), lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
}

/* The sizes and attributes shared by both ops' blocked schedules. */
static void blocked_init(LowerCx *L, Blocked *k, const Conv *c, DType dt) {
  k->x = c->x, k->w = c->w, k->dt = dt, k->N = c->x->shape[c->ax.x[0]];
  k->KH = lc_const(c->KH), k->KW = lc_const(c->KW);
  k->OH = lc_const(c->OH), k->OW = lc_const(c->OW);
  for (int i = 0; i < 2; i++) k->s[i] = c->s[i], k->d[i] = c->d[i], k->p[i] = c->p[i];
  int tile = lc_knob(L, KNOB_CONV2D_TILE); /* 0: by the width and the target */
  k->tile = tile ? tile : pick_tile(k->OW);
  k->ax = c->ax;
}

/* Emits the packing, the tiles and (NCHW results) the unpacking. */
static bool blocked_emit(LowerCx *L, Blocked *k, Buffer *out, bool nchw_out) {
  /* a depthwise convolution of a blocked input reads it in place: its
   * padded copy cost more than the convolution */
  k->direct = k->depthwise && k->x->buf && k->xblock == k->cb && (k->p[0] || k->p[1]);
  k->xp = k->direct ? k->x->buf : pack_input(L, k);
  k->wp = pack_weights(L, k);
  Buffer *yb = out;
  if (nchw_out) {
    PrimExpr *yshape[5] = {k->N, lc_int(L, k->nob), lc_int(L, k->OH), lc_int(L, k->OW),
                           lc_int(L, k->lanes)};
    yb = lc_alloc(L, "YB", k->dt, 5, yshape);
  }
  if (!k->xp || !k->wp || !yb) return false;
  k->store = store_blocked, k->out = yb;
  blocked_loops(L, k);
  if (nchw_out) unpack_output(L, k, yb, out);
  return true;
}

static void narrow_tile(Blocked *k, DType dt);
static bool env_off(const char *name) {
  const char *v = getenv(name);
  return v && strcmp(v, "0") == 0;
}

/* The lanes of a grouped block, at most max: whole groups (a multiple of
 * og) when a group is narrower than max, else a divisor of og (a group
 * spans whole blocks). */
static int group_lanes(int64_t og, int max) {
  if (GROUP_LANES > 0 && GROUP_LANES < max) max = GROUP_LANES;
  if (og < max) return (int)(og * (max / og));
  for (int b = max; b > 1; b--)
    if (og % b == 0) return b;
  return 1;
}

/* The grouped sizes of k (lanes and nob set): K input channels per output
 * block (group_first_block) in ncb blocks of cb (the preferred cb when it
 * divides K, else K's largest divisor up to conv2d.group_cb). */
static void group_init(LowerCx *L, Blocked *k, int64_t groups, int64_t cb) {
  k->cg = k->C / groups, k->og = k->O / groups;
  int64_t K = k->og >= k->lanes ? k->cg : k->cg * (k->lanes / k->og);
  k->rotate = k->og < k->lanes && k->cg == k->og && k->cg <= lc_knob(L, KNOB_CONV2D_ROTATE_MAX) &&
              !env_off("RLY_GROUP_ROTATE");
  if (k->rotate) cb = K; /* one XP block per output block */
  if (cb <= 0 || K % cb) {
    cb = 1;
    for (int64_t b = lc_knob(L, KNOB_CONV2D_GROUP_CB); b > 1 && cb == 1; b--)
      if (K % b == 0) cb = b;
  }
  k->cb = (int)cb, k->ncb = K / cb;
  k->nxb = k->og >= k->lanes ? k->C / cb : k->nob * K / cb;
  int tile = lc_knob(L, KNOB_CONV2D_GROUP_TILE);
  if (tile) k->tile = tile;
  if (k->rotate) k->tile = lc_knob(L, KNOB_CONV2D_ROTATE_TILE);
}

/* The blocked schedule of an NCHW / OIHW convolution with static sizes:
 * false (nothing emitted) when it does not apply. */
static bool conv2d_blocked(LowerCx *L, const Conv *c, DType dt, Buffer *out) {
  int64_t C = lc_const(c->C), H = lc_const(c->H), W = lc_const(c->W), O = lc_const(c->og);
  int64_t KH = lc_const(c->KH), KW = lc_const(c->KW), cg = lc_const(c->cg);
  if (!lc_fast_math(L) || !lc_dtype_ok(dt) || !dtype_is_float(dt) || C < 0 || H < 0 || W < 0 ||
      O < 0 || KH < 0 || KW < 0 || cg < 0)
    return false;
  bool dw = c->groups > 1 && cg == 1 && c->groups == C && O == 1;
  Blocked k = {.C = C, .H = H, .W = W, .O = O * c->groups, .depthwise = dw};
  blocked_init(L, &k, c, dt);
  int vl = target_vector_bytes() / dtype_bytes(dt);
  k.lanes =
      c->groups > 1 && !dw ? group_lanes(O, vl) : vl * (dw ? 1 : lc_knob(L, KNOB_CONV2D_OC_REGS));
  if (!lc_knob(L, KNOB_CONV2D_TILE)) narrow_tile(&k, dt);
  k.nob = (k.O + k.lanes - 1) / k.lanes;
  k.cb = dw ? k.lanes : (int)C, k.ncb = dw ? k.nob : 1;
  if (c->groups > 1 && !dw) group_init(L, &k, c->groups, 0);
  return blocked_emit(L, &k, out, true);
}

/* A 1x1 convolution of stride 1, no padding, groups 1, NCHW / OIHW, static
 * sizes: the pointwise schedule (compute_conv_1x1.c) when it applies. */
static bool conv2d_pointwise(LowerCx *L, const Conv *c, DType dt, Buffer *out) {
  Pointwise p = {.x = c->x, .w = c->w, .N = c->x->shape[0], .dt = dt};
  p.C = lc_const(c->C), p.H = lc_const(c->H), p.W = lc_const(c->W), p.O = lc_const(c->og);
  bool plain = true;
  for (int j = 0; j < 4; j++) plain = plain && c->ax.x[j] == j && c->ax.w[j] == j;
  if (!plain || !lc_fast_math(L) || !lc_dtype_ok(dt) || !dtype_is_float(dt) || c->groups != 1 ||
      c->x->dtype != dt || c->w->dtype != dt || lc_const(c->KH) != 1 || lc_const(c->KW) != 1 ||
      c->s[0] != 1 || c->s[1] != 1 || c->p[0] || c->p[1] || lc_const(c->OH) != p.H ||
      lc_const(c->OW) != p.W || !lc_pointwise_applies(&p))
    return false;
  lc_conv_pointwise(L, &p, out);
  return true;
}

/* A depthwise convolution (groups = channels = outputs), NCHW / OIHW,
 * static sizes: the row schedule (compute_conv_dw.c) when it applies. */
static bool conv2d_depthwise_rows(LowerCx *L, const Conv *c, DType dt, Buffer *out) {
  DwRows g = {.x = c->x, .w = c->w, .N = c->x->shape[0], .dt = dt};
  g.C = lc_const(c->C), g.H = lc_const(c->H), g.W = lc_const(c->W);
  g.KH = lc_const(c->KH), g.KW = lc_const(c->KW), g.OH = lc_const(c->OH), g.OW = lc_const(c->OW);
  for (int i = 0; i < 2; i++) g.s[i] = c->s[i], g.d[i] = c->d[i], g.p[i] = c->p[i];
  bool plain = true;
  for (int j = 0; j < 4; j++) plain = plain && c->ax.x[j] == j && c->ax.w[j] == j;
  if (!plain || !lc_fast_math(L) || !lc_dtype_ok(dt) || !dtype_is_float(dt) || c->x->dtype != dt ||
      c->w->dtype != dt || g.C < 1 || c->groups != g.C || lc_const(c->cg) != 1 ||
      lc_const(c->og) != 1 || g.KH < 1 || g.KW < 1 || !lc_depthwise_rows_applies(&g))
    return false;
  lc_conv_depthwise_rows(L, &g, out);
  return true;
}

/* ───────────────────────── the general rule ───────────────────────── */

/* Input position of output o and tap t along one dim. */
static PrimExpr *conv_pos(LowerCx *L, const Conv *c, int dim, PrimExpr *o, PrimExpr *t) {
  PrimExpr *p = lc_bin(L, PB_SUB, lc_times(L, o, lc_int(L, c->s[dim])), lc_int(L, c->p[dim]));
  return lc_plus(L, p, lc_times(L, t, lc_int(L, c->d[dim])));
}

static PrimExpr *inside(LowerCx *L, PrimExpr *p, PrimExpr *size) {
  return lc_bin(L, PB_AND, lc_bin(L, PB_GE, p, lc_int(L, 0)), lc_bin(L, PB_LT, p, size));
}

/* for ci, a (if the row is inside), b, ow: acc[ow] += w * x (skipping
 * columns outside), the reference's order for each output pixel; the
 * operands converted to the accumulator's dtype first. */
static void conv_row(LowerCx *L, const Conv *c, Buffer *acc, PrimExpr *n, PrimExpr *o,
                     PrimExpr *oh) {
  TirVar *ci = lc_tvar(L, "c", c->cg), *a = lc_tvar(L, "a", c->KH), *b = lc_tvar(L, "b", c->KW),
         *ow = lc_tvar(L, "ow", c->OW);
  PrimExpr *h = conv_pos(L, c, 0, oh, lc_var(L, a)),
           *wp = conv_pos(L, c, 1, lc_var(L, ow), lc_var(L, b));
  PrimExpr *wc = lc_call(L, PI_MAX, lc_int(L, 0),
                         lc_call(L, PI_MIN, wp, lc_bin(L, PB_SUB, c->W, lc_int(L, 1)), NULL), NULL);
  /* the input channel: the group's first (o / og * cg) plus ci */
  PrimExpr *first = c->groups == 1 ? lc_int(L, 0) : lc_times(L, lc_bin(L, PB_DIV, o, c->og), c->cg);
  PrimExpr *xi[4] = {n, lc_plus(L, first, lc_var(L, ci)), h, wc},
           *wi[4] = {o, lc_var(L, ci), lc_var(L, a), lc_var(L, b)};
  PrimExpr *ai = lc_var(L, ow), *cur = lc_load(L, acc, 1, &ai), *xat[4], *wat[4];
  PrimExpr *prod = lc_times(L, lc_cast(L, c->acc, lc_at(L, c->w, placed(wat, c->ax.w, wi))),
                            lc_cast(L, c->acc, lc_at(L, c->x, placed(xat, c->ax.x, xi))));
  for (int i = 0; i < 5; i++) lc_open(L); /* ci, a, if, b, ow */
  lc_store(L, acc, 1, &ai, lc_call(L, PI_SELECT, inside(L, wp, c->W), lc_plus(L, cur, prod), cur));
  lc_for(L, LOOP_VECTORIZED, ow, c->OW, lc_close(L));
  lc_for(L, LOOP_RANGE, b, c->KW, lc_close(L));
  lc_if(L, inside(L, h, c->H), lc_close(L));
  lc_for(L, LOOP_RANGE, a, c->KH, lc_close(L));
  lc_for(L, LOOP_RANGE, ci, c->cg, lc_close(L));
}

/* The general schedule: for each output row an accumulator row (float64,
 * or the integer result's dtype) is built by conv_row, then stored
 * vectorized; output channels in parallel. */
static void conv2d_general(LowerCx *L, const Conv *c, Buffer *out) {
  PrimExpr *N = c->x->shape[c->ax.x[0]], *O = c->w->shape[c->ax.w[0]];
  TirVar *n = lc_tvar(L, "n", N), *o = lc_tvar(L, "o", O), *oh = lc_tvar(L, "oh", c->OH),
         *ow = lc_tvar(L, "ow", c->OW);
  for (int i = 0; i < 3; i++) lc_open(L); /* n, o, oh */
  PrimExpr *row = c->OW;
  Buffer *acc = lc_alloc(L, "acc", c->acc, 1, &row);
  conv_row(L, c, acc, lc_var(L, n), lc_var(L, o), lc_var(L, oh));
  lc_open(L);
  PrimExpr *oi[4] = {lc_var(L, n), lc_var(L, o), lc_var(L, oh), lc_var(L, ow)}, *ai = lc_var(L, ow),
           *at[4];
  lc_store(L, out, 4, placed(at, c->ax.x, oi), lc_load(L, acc, 1, &ai));
  lc_for(L, LOOP_VECTORIZED, ow, c->OW, lc_close(L));
  lc_for(L, LOOP_RANGE, oh, c->OH, lc_close(L));
  lc_for(L, LOOP_PARALLEL, o, O, lc_close(L));
  lc_for(L, LOOP_RANGE, n, N, lc_close(L));
}

/* The result's dtype and the accumulators' (lc_product_acc: float64 for
 * floats, float16 included; an integer result's own dtype, wrapping, for
 * integer operands of any two dtypes, e.g. uint8 data and int8 weights).
 * DT_INVALID: neither. */
static DType conv_dtypes(const LTensor *x, const LTensor *w, const Type *ty, DType *acc) {
  DType out = ty->u.tensor.dtype;
  *acc = lc_product_acc(x->dtype, w->dtype, out);
  return *acc == DT_INVALID ? DT_INVALID : out;
}

/* nn.conv2d: the blocked schedule when it applies (floats), else the
 * general one.  The output size must be static (it sizes the
 * accumulators).  qnn.conv2d's rule (compute_qnn.c) calls this one with
 * its operands less their zero points. */
LTensor *compute_conv2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Conv c = {.x = in[0], .w = in[1]};
  if (nin != 2 || in[0]->ndim != 4 || in[1]->ndim != 4 || !conv_attrs(L, call, &c)) return NULL;
  const Type *ty = lc_result_type(call);
  DType dt = conv_dtypes(in[0], in[1], ty, &c.acc);
  if (dt == DT_INVALID)
    return lc_fail(L, "nn.conv2d of %s and %s", dtype_name(in[0]->dtype), dtype_name(in[1]->dtype));
  const int *xa = c.ax.x, *wa = c.ax.w;
  const Dim *od = ty->u.tensor.dims;
  if (od[xa[2]].kind != DIM_CONST || od[xa[3]].kind != DIM_CONST)
    return lc_fail(L, "nn.conv2d: output size known only at run time");
  c.C = in[0]->shape[xa[1]], c.H = in[0]->shape[xa[2]], c.W = in[0]->shape[xa[3]];
  c.KH = in[1]->shape[wa[2]], c.KW = in[1]->shape[wa[3]];
  c.groups = op_attr_int(call, "groups");
  c.cg = in[1]->shape[wa[1]];
  PrimExpr *O = in[1]->shape[wa[0]];
  c.og = lc_bin(L, PB_DIV, O, lc_int(L, c.groups));
  if (lc_const(O) >= 0) c.og = lc_int(L, lc_const(O) / c.groups);
  c.OH = lc_int(L, od[xa[2]].value), c.OW = lc_int(L, od[xa[3]].value);
  PrimExpr *plain[4] = {in[0]->shape[xa[0]], O, c.OH, c.OW}, *shape[4];
  Buffer *out = lc_result_buffer(L, call, dt, 4, placed(shape, xa, plain));
  if (!out) return NULL;
  /* the blocked schedule's unpacking stores each element once, last: an
   * elementwise epilogue (bias, relu) fuses into it (lower_epilogue.c) */
  if (conv2d_pointwise(L, &c, dt, out) || conv2d_depthwise_rows(L, &c, dt, out) ||
      conv2d_blocked(L, &c, dt, out))
    lc_mark_total(L, out);
  else
    conv2d_general(L, &c, out);
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

/* A 3x3 convolution, stride 1, padding 1 on every side (the output the
 * input's size), groups 1, the weight blocked by the data's channel block:
 * the Winograd schedule's shape (lower/compute/compute_winograd.c). */
static bool winograd_shape(const Blocked *k, const Conv *c, int64_t ib, int64_t cb) {
  return !k->depthwise && !k->cg && k->KH == 3 && k->KW == 3 && c->s[0] == 1 && c->s[1] == 1 &&
         c->d[0] == 1 && c->d[1] == 1 && c->p[0] == 1 && c->p[1] == 1 && k->OH == k->H &&
         k->OW == k->W && ib == cb && !env_off("RLY_WINOGRAD");
}

/* A block of more lanes than a vector register (24 float32 channels with
 * AVX-512) takes several registers per tile column: fewer columns, so the
 * accumulators still fit in the registers. */
static void narrow_tile(Blocked *k, DType dt) {
  int64_t vl = target_vector_bytes() / dtype_bytes(dt), regs = (k->lanes + vl - 1) / vl;
  if (regs > 1) k->tile = k->tile / (int)regs > 0 ? k->tile / (int)regs : 1;
}

/* The grouped sizes of a blocked convolution (group_init): its input block
 * the weight's (read in place) when a group spans whole blocks, else the
 * data's when it divides K.  A block that holds part of two groups has no
 * schedule (the op runs on its reference kernel). */
static bool nchwc_group_init(LowerCx *L, Blocked *k, int64_t groups) {
  int64_t og = k->O / groups;
  if (k->C % groups || k->O % groups || (og % k->lanes && k->lanes % og))
    return lc_fail(L, "nn.contrib_conv2d_NCHWc: %lld groups in blocks of %d", (long long)groups,
                   k->lanes),
           false;
  int64_t K = og >= k->lanes ? k->C / groups : k->C / groups * (k->lanes / og);
  group_init(L, k, groups, og >= k->lanes || K % k->xblock ? k->wib : k->xblock);
  return true;
}

/* nn.contrib_conv2d_NCHWc: the blocked schedule on blocked operands (the
 * data repacked only when it needs padding or another channel block, the
 * weight used as it is).  Fast math off or sizes known only at run time:
 * no rule (the op runs on its reference kernel). */
static LTensor *compute_conv2d_nchwc(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim != 5 || in[1]->ndim != 6)
    return lc_fail(L, "nn.contrib_conv2d_NCHWc of this rank");
  DType dt = in[0]->dtype;
  if (!dtype_is_float(dt) || !lc_dtype_ok(dt) || in[1]->dtype != dt || !lc_fast_math(L))
    return lc_fail(L, "nn.contrib_conv2d_NCHWc on %s (or exact math)", dtype_name(dt));
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow win = {.S = 2};
  int64_t cb, ib, ob;
  if (!nn_window_attrs(&cx, call->u.call.attrs, &win) ||
      !nn_layout_nchwc(op_attr_str(lc_arena(L), call, "data_layout"), &cb) ||
      !nn_layout_oihwio(op_attr_str(lc_arena(L), call, "kernel_layout"), &ib, &ob))
    return lc_fail(L, "nn.contrib_conv2d_NCHWc: attributes");
  const Type *ty = lc_result_type(call);
  int64_t d[9] = {lc_const(in[0]->shape[1]), lc_const(in[0]->shape[2]), lc_const(in[0]->shape[3]),
                  lc_const(in[1]->shape[0]), lc_const(in[1]->shape[1]), lc_const(in[1]->shape[2]),
                  lc_const(in[1]->shape[3])};
  for (int i = 0; i < 7; i++)
    if (d[i] < 0) return lc_fail(L, "nn.contrib_conv2d_NCHWc: sizes known only at run time");
  if (ty->u.tensor.dims[2].kind != DIM_CONST || ty->u.tensor.dims[3].kind != DIM_CONST)
    return lc_fail(L, "nn.contrib_conv2d_NCHWc: sizes known only at run time");
  int64_t groups = op_attr_int(call, "groups");
  Conv c = {.x = in[0], .w = in[1], .KH = in[1]->shape[2], .KW = in[1]->shape[3]};
  plain_axes(&c.ax);
  for (int i = 0; i < 2; i++) c.s[i] = win.stride[i], c.d[i] = win.dil[i], c.p[i] = win.lo[i];
  c.OH = lc_int(L, ty->u.tensor.dims[2].value), c.OW = lc_int(L, ty->u.tensor.dims[3].value);
  Blocked k = {.C = d[0] * cb, .H = d[1], .W = d[2], .O = d[3] * ob};
  k.depthwise = groups > 1 && groups == k.C && d[4] * ib == 1 && k.O == k.C && ob == cb;
  blocked_init(L, &k, &c, dt);
  k.xblock = cb, k.wblocked = true, k.lanes = (int)ob, k.nob = d[3], k.wib = ib;
  if (!lc_knob(L, KNOB_CONV2D_TILE)) narrow_tile(&k, dt);
  k.cb = (int)(k.depthwise ? ob : ib), k.ncb = k.depthwise ? d[3] : d[4];
  if (groups > 1 && !k.depthwise && !nchwc_group_init(L, &k, groups)) return NULL;
  PrimExpr *shape[5] = {in[0]->shape[0], in[1]->shape[0], c.OH, c.OW, lc_int(L, ob)};
  Buffer *out = lc_result_buffer(L, call, dt, 5, shape);
  if (!out) return lc_failed(L) ? NULL : lc_fail(L, "no buffer");
  Winograd wg = {.x = in[0],
                 .w = in[1],
                 .N = lc_const(in[0]->shape[0]),
                 .CB = d[0],
                 .cb = cb,
                 .OB = d[3],
                 .ob = ob,
                 .H = k.H,
                 .W = k.W,
                 .dt = dt};
  if (winograd_shape(&k, &c, ib, cb) && wg.N > 0 && lc_winograd_applies(&wg) &&
      lc_knob(L, KNOB_CONV2D_WINOGRAD)) {
    lc_conv_winograd(L, &wg, out);
    lc_mark_total(L, out);
    return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
  }
  if (!blocked_emit(L, &k, out, false)) return lc_failed(L) ? NULL : lc_fail(L, "no buffer");
  lc_mark_total(L, out); /* O = nob x lanes: every tile stores all its lanes */
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_conv[] = {
    {"nn.conv2d", compute_conv2d},
    {"nn.contrib_conv2d_NCHWc", compute_conv2d_nchwc},
    {NULL, NULL},
};
