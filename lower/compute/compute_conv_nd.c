/* compute_conv_nd.c — compute rules (lower/compute/compute.h) of nn.conv1d,
 * nn.conv3d, nn.conv1d_transpose, nn.conv2d_transpose and nn.conv3d_transpose
 *
 * One direct schedule for all four, with S = 1 to 3 spatial dims: for each
 * batch, output channel (in parallel) and output position but the last
 * dim, an accumulator row as long as the last output dim sums, over the
 * group's input channels and the taps (depth, height, width), the product
 * of a weight and an input element, the row vectorized; then the row is
 * stored.  That is the reference kernel's order for every output element
 * (kernels/kernels_nn_conv.c: input channel, then taps), and the sums are
 * in float64 for float results and in the integer result's dtype,
 * wrapping, for integer ones (the kernel's wrapping 64-bit sum narrowed),
 * so the results agree with the kernel bit for bit.
 *
 * A tap reads the input position of an output position o and a tap t:
 *   convolution  p = o * stride - pad_before + t * dilation, valid in [0, in)
 *   transposed   p = (o + pad_before - t * dilation) / stride, valid when the
 *                numerator is a non-negative multiple of the stride and
 *                p < in (the gather form of the kernel's scatter).
 * Outer dims skip invalid taps with an `if`; along the row a select keeps
 * the sum, the load's index clamped into the input, except that a
 * transposed convolution scatters along its row as the kernel does (each
 * input column and tap adds to the output column it reaches), which tries
 * no tap that the stride drops.
 *
 * A float32/64 nn.conv3d with groups 1, static sizes and fast math on takes
 * the blocked 3-D schedule instead (conv3d_blocked, below), the 2-D blocked
 * schedule of compute_conv.c with a depth dim: the input packed per call
 * into a zero-padded, channels-last XP[n, d, h, w, c] (a dim of one tap,
 * stride s and no padding keeps only every s-th position); the weight read as
 * vectors of `lanes` output channels (one vector register: 16 float32 with
 * AVX-512, 8 with AVX2) from a DHWIO weight in place (AlterOpLayout's,
 * folded once into the constant) or else from WP[ob, kd, kh, kw, c, l]
 * packed per call; a register tile of T output positions (columns of a
 * row, or whole rows when they are narrow) x lanes channels summing
 * broadcast input elements times weight vectors over the taps and input
 * channels, in the operands' dtype (so it rounds as the 2-D blocked
 * schedule does, not bit for bit with the kernel); (block, depth, row)
 * triples in parallel; the blocked YB[n, ob, d, h, w, l] then unpacked to
 * the result's layout (the fused epilogue applied there).
 *
 * Layouts: a convolution takes the data and weight layouts nn_conv_axes
 * reads (NWC, NDHWC, WIO, ...; the result has the data's layout).  A
 * transposed convolution has NC... data and its weight's channel axes as
 * the relation reads them (ops/nn_conv.c): (C, O/groups, k...) for OIW and
 * IOHW, the other order for IOW and OIHW.  The output sizes must be
 * constants (they size the loops and the accumulator row). */
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/nn_int.h"

enum { MAX_AXES = 2 + NN_MAX_SPATIAL };

typedef struct ConvNd {
  int S;
  bool transpose;
  const LTensor *x, *w;
  DType acc; /* float64, or the integer result's dtype */
  int64_t s[NN_MAX_SPATIAL], d[NN_MAX_SPATIAL], lo[NN_MAX_SPATIAL];
  PrimExpr *in[NN_MAX_SPATIAL], *k[NN_MAX_SPATIAL], *out[NN_MAX_SPATIAL];
  PrimExpr *N, *O, *cg, *og; /* channels per group: input, output */
  int64_t groups;
  /* the data's N, C, spatial axes; the weight's axes of the output channel
   * (per group when transposed), the input channel, the taps */
  NnConvAxes ax;
} ConvNd;

/* Where one output row's terms come from. */
typedef struct Row {
  Buffer *acc;
  PrimExpr *n, *o, *ci;
  PrimExpr *opos[NN_MAX_SPATIAL]; /* output position (all but the last dim) */
  PrimExpr *ipos[NN_MAX_SPATIAL]; /* input position */
  PrimExpr *tap[NN_MAX_SPATIAL];
} Row;

static PrimExpr *and_(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_AND, a, b); }

/* The n indices idx (plain order) put on the axes of a layout. */
static PrimExpr **placed(PrimExpr **out, const int *axes, PrimExpr *const *idx, int n) {
  for (int j = 0; j < n; j++) out[axes[j]] = idx[j];
  return out;
}

/* The transposed ops' axes: NC... data; the weight's input-channel axis as
 * the relation reads it (see the comment at the top). */
static bool transposed_axes(LowerCx *L, const Expr *call, ConvNd *c) {
  const char *kl = op_attr_str(lc_arena(L), call, "kernel_layout");
  const char *dl = op_attr_str(lc_arena(L), call, "data_layout");
  if (strncmp(dl, "NC", 2) != 0 || (strncmp(kl, "OI", 2) != 0 && strncmp(kl, "IO", 2) != 0))
    return lc_fail(L, "%s: layouts %s, %s", call->u.call.fn->u.op.name, dl, kl), false;
  bool io = kl[0] == 'I', in_first = c->S == 1 ? !io : io;
  for (int i = 0; i < MAX_AXES; i++) c->ax.x[i] = c->ax.w[i] = i;
  c->ax.w[0] = in_first ? 1 : 0, c->ax.w[1] = in_first ? 0 : 1;
  return true;
}

/* Strides, dilation, the padding before, and the layouts' axes. */
static bool nd_attrs(LowerCx *L, const Expr *call, ConvNd *c) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow w = {.S = c->S};
  if (!nn_window_attrs(&cx, call->u.call.attrs, &w))
    return lc_fail(L, "%s: %s", cx.op_name, cx.err), false;
  for (int i = 0; i < c->S; i++) c->s[i] = w.stride[i], c->d[i] = w.dil[i], c->lo[i] = w.lo[i];
  if (c->transpose) return transposed_axes(L, call, c);
  if (!nn_conv_axes(&cx, call->u.call.attrs, c->S, &c->ax))
    return lc_fail(L, "%s: %s", cx.op_name, cx.err), false;
  return true;
}

/* Float operands and result of one dtype: float64 sums; integer operands
 * and result: sums in the result's dtype (lc_product_acc).  False when
 * neither. */
static bool nd_dtypes(const LTensor *x, const LTensor *w, DType out, DType *acc) {
  *acc = lc_product_acc(x->dtype, w->dtype, out);
  return *acc != DT_INVALID;
}

/* The sizes: batch, channels per group, spatial dims in and out (the
 * output's from the type: constants). */
static bool nd_sizes(LowerCx *L, const Expr *call, ConvNd *c, int64_t groups) {
  const Type *ty = lc_result_type(call);
  const int *xa = c->ax.x, *wa = c->ax.w;
  c->N = c->x->shape[xa[0]];
  for (int i = 0; i < c->S; i++) {
    Dim od = ty->u.tensor.dims[xa[2 + i]];
    if (od.kind != DIM_CONST) return lc_fail(L, "output size known only at run time"), false;
    c->out[i] = lc_int(L, od.value);
    c->in[i] = c->x->shape[xa[2 + i]], c->k[i] = c->w->shape[wa[2 + i]];
  }
  Dim od = ty->u.tensor.dims[xa[1]];
  if (od.kind != DIM_CONST) return lc_fail(L, "output channels known only at run time"), false;
  c->O = lc_int(L, od.value), c->og = lc_int(L, od.value / groups);
  c->cg = c->w->shape[wa[1]];
  if (c->transpose) {
    int64_t C = lc_const(c->x->shape[xa[1]]);
    if (C < 0) return lc_fail(L, "input channels known only at run time"), false;
    c->cg = lc_int(L, C / groups);
  }
  return true;
}

/* The (clamped) input position along dim i of output position o and tap
 * t, and when it is valid. */
static PrimExpr *src_pos(LowerCx *L, const ConvNd *c, int i, PrimExpr *o, PrimExpr *t,
                         PrimExpr **valid) {
  PrimExpr *zero = lc_int(L, 0), *p;
  if (!c->transpose) {
    p = lc_plus(L, lc_minus(L, lc_times(L, o, lc_int(L, c->s[i])), lc_int(L, c->lo[i])),
                lc_times(L, t, lc_int(L, c->d[i])));
    *valid = and_(L, lc_bin(L, PB_GE, p, zero), lc_bin(L, PB_LT, p, c->in[i]));
  } else {
    PrimExpr *num =
        lc_minus(L, lc_plus(L, o, lc_int(L, c->lo[i])), lc_times(L, t, lc_int(L, c->d[i])));
    p = lc_bin(L, PB_DIV, num, lc_int(L, c->s[i]));
    *valid = and_(L, lc_bin(L, PB_GE, num, zero), lc_bin(L, PB_LT, p, c->in[i]));
    if (c->s[i] > 1)
      *valid = and_(L, *valid, lc_bin(L, PB_EQ, lc_bin(L, PB_MOD, num, lc_int(L, c->s[i])), zero));
  }
  PrimExpr *hi = lc_minus(L, c->in[i], lc_int(L, 1));
  return lc_call(L, PI_MAX, zero, lc_call(L, PI_MIN, p, hi, NULL), NULL);
}

/* The product of the weight and input elements of r's taps, in the
 * accumulator's dtype. */
static PrimExpr *term(LowerCx *L, const ConvNd *c, const Row *r) {
  PrimExpr *g = c->groups == 1 ? lc_int(L, 0) : lc_bin(L, PB_DIV, r->o, c->og);
  PrimExpr *chan = lc_plus(L, lc_times(L, g, c->cg), r->ci);
  PrimExpr *xi[MAX_AXES] = {r->n, chan}, *wi[MAX_AXES] = {r->o, r->ci}, *xat[MAX_AXES],
           *wat[MAX_AXES];
  if (c->transpose) wi[0] = lc_bin(L, PB_MOD, r->o, c->og), wi[1] = chan;
  for (int i = 0; i < c->S; i++) xi[2 + i] = r->ipos[i], wi[2 + i] = r->tap[i];
  PrimExpr *wv = lc_at(L, c->w, placed(wat, c->ax.w, wi, 2 + c->S));
  PrimExpr *xv = lc_at(L, c->x, placed(xat, c->ax.x, xi, 2 + c->S));
  return lc_times(L, lc_cast(L, c->acc, wv), lc_cast(L, c->acc, xv));
}

/* A transposed convolution's last dim scatters, as the kernel does: for
 * each tap t and input column iw, acc[iw * stride - pad + t * dilation] +=
 * term where that column is inside the row (no tap is tried and dropped,
 * and each output element still adds its terms in the order input
 * channel, taps). */
static void last_taps_scatter(LowerCx *L, const ConvNd *c, Row *r) {
  int i = c->S - 1;
  TirVar *t = lc_tvar(L, "t", c->k[i]), *iw = lc_tvar(L, "iw", c->in[i]);
  PrimExpr *ox =
      lc_plus(L, lc_minus(L, lc_times(L, lc_var(L, iw), lc_int(L, c->s[i])), lc_int(L, c->lo[i])),
              lc_times(L, lc_var(L, t), lc_int(L, c->d[i])));
  r->ipos[i] = lc_var(L, iw), r->tap[i] = lc_var(L, t);
  PrimExpr *inside = and_(L, lc_bin(L, PB_GE, ox, lc_int(L, 0)), lc_bin(L, PB_LT, ox, c->out[i]));
  lc_open(L);
  lc_open(L);
  lc_open(L);
  lc_store(L, r->acc, 1, &ox, lc_plus(L, lc_load(L, r->acc, 1, &ox), term(L, c, r)));
  lc_if(L, inside, lc_close(L));
  lc_for(L, LOOP_RANGE, iw, c->in[i], lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* The last dim's taps: acc[ow] += term where the tap is inside. */
static void last_taps(LowerCx *L, const ConvNd *c, Row *r) {
  int i = c->S - 1;
  if (c->transpose) {
    last_taps_scatter(L, c, r);
    return;
  }
  TirVar *t = lc_tvar(L, "t", c->k[i]), *ow = lc_tvar(L, "ow", c->out[i]);
  PrimExpr *valid, *ai = lc_var(L, ow);
  r->ipos[i] = src_pos(L, c, i, lc_var(L, ow), lc_var(L, t), &valid);
  r->tap[i] = lc_var(L, t);
  PrimExpr *cur = lc_load(L, r->acc, 1, &ai);
  lc_open(L);
  lc_open(L);
  lc_store(L, r->acc, 1, &ai, lc_call(L, PI_SELECT, valid, lc_plus(L, cur, term(L, c, r)), cur));
  lc_for(L, LOOP_VECTORIZED, ow, c->out[i], lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* The taps of dims i.. (outer dims skip invalid taps with an if). */
static void taps(LowerCx *L, const ConvNd *c, Row *r, int i) {
  if (i == c->S - 1) {
    last_taps(L, c, r);
    return;
  }
  TirVar *t = lc_tvar(L, "t", c->k[i]);
  PrimExpr *valid;
  r->ipos[i] = src_pos(L, c, i, r->opos[i], lc_var(L, t), &valid);
  r->tap[i] = lc_var(L, t);
  lc_open(L);
  lc_open(L);
  taps(L, c, r, i + 1);
  lc_if(L, valid, lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* One output row: the sums into a zeroed accumulator row, then the row
 * stored into out. */
static void out_row(LowerCx *L, const ConvNd *c, Row *r, Buffer *out) {
  PrimExpr *len = c->out[c->S - 1];
  r->acc = lc_alloc(L, "acc", c->acc, 1, &len);
  TirVar *ci = lc_tvar(L, "c", c->cg), *ow = lc_tvar(L, "ow", len);
  r->ci = lc_var(L, ci);
  lc_open(L);
  taps(L, c, r, 0);
  lc_for(L, LOOP_RANGE, ci, c->cg, lc_close(L));
  PrimExpr *oi[MAX_AXES] = {r->n, r->o}, *ai = lc_var(L, ow), *at[MAX_AXES];
  for (int i = 0; i < c->S - 1; i++) oi[2 + i] = r->opos[i];
  oi[1 + c->S] = ai;
  lc_open(L);
  lc_store(L, out, 2 + c->S, placed(at, c->ax.x, oi, 2 + c->S), lc_load(L, r->acc, 1, &ai));
  lc_for(L, LOOP_VECTORIZED, ow, len, lc_close(L));
}

/* Loops over the output positions of dims i.. but the last, then a row. */
static void out_positions(LowerCx *L, const ConvNd *c, Row *r, Buffer *out, int i) {
  if (i == c->S - 1) {
    out_row(L, c, r, out);
    return;
  }
  TirVar *p = lc_tvar(L, "o", c->out[i]);
  r->opos[i] = lc_var(L, p);
  lc_open(L);
  out_positions(L, c, r, out, i + 1);
  lc_for(L, LOOP_RANGE, p, c->out[i], lc_close(L));
}

/* for n, o (parallel), positions: rows. */
static void nd_loops(LowerCx *L, const ConvNd *c, Buffer *out) {
  TirVar *n = lc_tvar(L, "n", c->N), *o = lc_tvar(L, "o", c->O);
  Row r = {.n = lc_var(L, n), .o = lc_var(L, o)};
  lc_open(L);
  lc_open(L);
  out_positions(L, c, &r, out, 0);
  lc_for(L, LOOP_PARALLEL, o, c->O, lc_close(L));
  lc_for(L, LOOP_RANGE, n, c->N, lc_close(L));
}

/* ───────────────────────── the blocked 3-D schedule ───────────────────────── */

/* Register tile widths (output columns) by vector width: AVX-512 has 32
 * vector registers, AVX2 16 (as compute_conv.c's). */
enum { TILE_WIDE = 14, TILE_NARROW = 12, TILE_MIN = 4 };

typedef struct Blk3 {
  const ConvNd *c;
  DType dt;
  PrimExpr *N;
  int64_t C, O, in[3], k[3], out[3], pad[3]; /* pad: the padded input's sizes */
  /* a dim of one tap, no padding and stride s is packed decimated: XP
   * holds every s-th input position (step s, extent out), read at stride 1
   * (xs); else step 1, extent in, read at the stride */
  int64_t step[3], ext[3], xs[3];
  int lanes, tile;
  int rows; /* output rows per tile: > 1 when whole rows are narrower than a tile */
  int64_t nob;
  bool wdirect; /* the weight read in place: DHWIO, O a multiple of lanes */
  Buffer *xp, *wp, *yb;
} Blk3;

/* The widest tile up to the register budget that divides ow, else the
 * budget itself. */
static int pick_tile(int64_t ow) {
  int max = target_vector_bytes() >= 64 ? TILE_WIDE : TILE_NARROW;
  for (int t = max; t >= TILE_MIN; t--)
    if (ow % t == 0) return t;
  return ow < max ? (int)ow : max;
}

static PrimExpr *ci(LowerCx *L, int64_t v) { return lc_int(L, v); }

static PrimExpr *both(LowerCx *L, PrimExpr *a, PrimExpr *b) { return a ? and_(L, a, b) : b; }

/* The channel loop of XP's position pi: every channel stored, from x at
 * xi's position or (xi NULL) zero. */
static void pack_channels(LowerCx *L, const Blk3 *k, Buffer *xp, PrimExpr **pi, PrimExpr **xi) {
  TirVar *ch = lc_tvar(L, "c", ci(L, k->C));
  PrimExpr *at[MAX_AXES], *p[5] = {pi[0], pi[1], pi[2], pi[3], lc_var(L, ch)};
  lc_open(L);
  if (xi) {
    xi[1] = lc_var(L, ch);
    lc_store(L, xp, 5, p, lc_at(L, k->c->x, placed(at, k->c->ax.x, xi, 5)));
  } else {
    lc_store(L, xp, 5, p, lc_lit(L, k->dt, 0));
  }
  lc_for(L, LOOP_VECTORIZED, ch, ci(L, k->C), lc_close(L));
}

/* XP[n, d, h, w, c] = x(n, c, d - lo0, h - lo1, w - lo2) inside the input,
 * 0 in the padding: channels last, so a tap's channels are contiguous and
 * the tiles' loads need no tests.  Every element is stored (no zero fill
 * of the whole buffer first). */
static Buffer *pack_input3(LowerCx *L, const Blk3 *k) {
  const ConvNd *c = k->c;
  PrimExpr *shape[5] = {k->N, ci(L, k->pad[0]), ci(L, k->pad[1]), ci(L, k->pad[2]), ci(L, k->C)};
  Buffer *xp = lc_alloc(L, "XP", k->dt, 5, shape);
  xp->no_init = true;
  TirVar *n = lc_tvar(L, "n", k->N), *v[3];
  PrimExpr *pi[5] = {lc_var(L, n)}, *xi[5] = {lc_var(L, n)}, *inside = NULL;
  for (int i = 0; i < 3; i++) {
    v[i] = lc_tvar(L, "p", shape[1 + i]), pi[1 + i] = lc_var(L, v[i]);
    xi[2 + i] = lc_times(L, lc_minus(L, pi[1 + i], ci(L, c->lo[i])), ci(L, k->step[i]));
    if (c->lo[i] > 0) inside = both(L, inside, lc_bin(L, PB_GE, pi[1 + i], ci(L, c->lo[i])));
    if (k->pad[i] > c->lo[i] + k->ext[i])
      inside = both(L, inside, lc_bin(L, PB_LT, pi[1 + i], ci(L, c->lo[i] + k->ext[i])));
  }
  for (int i = 0; i < 4; i++) lc_open(L);
  lc_open(L);
  pack_channels(L, k, xp, pi, xi);
  if (inside) {
    Stmt *in = lc_close(L);
    lc_open(L);
    pack_channels(L, k, xp, pi, NULL);
    lc_if_else(L, inside, in, lc_close(L));
  } else {
    lc_emit(L, lc_close(L));
  }
  for (int i = 2; i >= 0; i--)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[i], shape[1 + i], lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
  return xp;
}

/* WP[ob, a, b, e, c, l] = w(ob * lanes + l, c, a, b, e), zero past O: the
 * lanes of a block contiguous.  Not needed when the weight is DHWIO with
 * whole blocks (AlterOpLayout's, folded once at bind time). */
static Buffer *pack_weights3(LowerCx *L, const Blk3 *k) {
  const ConvNd *c = k->c;
  PrimExpr *lanes = ci(L, k->lanes);
  PrimExpr *shape[6] = {ci(L, k->nob),  ci(L, k->k[0]), ci(L, k->k[1]),
                        ci(L, k->k[2]), ci(L, k->C),    lanes};
  Buffer *wp = lc_alloc(L, "WP", k->dt, 6, shape);
  TirVar *v[6];
  for (int i = 0; i < 6; i++) v[i] = lc_tvar(L, "i", shape[i]);
  PrimExpr *pi[6], *at[MAX_AXES];
  for (int i = 0; i < 6; i++) pi[i] = lc_var(L, v[i]);
  PrimExpr *o = lc_plus(L, lc_times(L, pi[0], lanes), pi[5]);
  PrimExpr *wi[5] = {o, pi[4], pi[1], pi[2], pi[3]};
  for (int i = 0; i < 7; i++) lc_open(L);
  lc_store(L, wp, 6, pi, lc_at(L, c->w, placed(at, c->ax.w, wi, 5)));
  lc_if(L, lc_bin(L, PB_LT, o, ci(L, k->O)), lc_close(L));
  for (int i = 5; i >= 0; i--)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[i], shape[i], lc_close(L));
  return wp;
}

/* The weight vector element of block ob, taps tap[], input channel c,
 * lane l. */
static PrimExpr *w_elem(LowerCx *L, const Blk3 *k, PrimExpr *ob, PrimExpr **tap, PrimExpr *c,
                        PrimExpr *l) {
  if (!k->wdirect) {
    PrimExpr *wi[6] = {ob, tap[0], tap[1], tap[2], c, l};
    return lc_load(L, k->wp, 6, wi);
  }
  PrimExpr *o = lc_plus(L, lc_times(L, ob, ci(L, k->lanes)), l), *wi[5] = {o, c}, *at[MAX_AXES];
  for (int i = 0; i < 3; i++) wi[2 + i] = tap[i];
  return lc_at(L, k->c->w, placed(at, k->c->ax.w, wi, 5));
}

/* Where a tile is: batch, block, output depth and row, first column. */
typedef struct Tile3 {
  Buffer *acc;
  PrimExpr *n, *ob, *od, *oh, *ow0;
  int T, W; /* T positions: rows of W columns from (oh, ow0) */
} Tile3;

/* The output row and column of position tt of tile t (constants per
 * position once the tile's loop is unrolled). */
static void tile_pos(LowerCx *L, const Tile3 *t, PrimExpr *tt, PrimExpr **oh, PrimExpr **ow) {
  if (t->T == t->W) {
    *oh = t->oh, *ow = lc_plus(L, t->ow0, tt);
    return;
  }
  *oh = lc_plus(L, t->oh, lc_bin(L, PB_DIV, tt, ci(L, t->W)));
  *ow = lc_plus(L, t->ow0, lc_bin(L, PB_MOD, tt, ci(L, t->W)));
}

/* acc[t, l] += XP[n, od*s + a*d, oh*s + b*d, (ow0 + t)*s + e*d, c] * W,
 * over the taps (a, b, e) and input channels c, t unrolled, l vectorized. */
static void tile3_taps(LowerCx *L, const Blk3 *k, const Tile3 *t) {
  const ConvNd *c = k->c;
  TirVar *tv[3], *ch = lc_tvar(L, "c", ci(L, k->C)), *tt = lc_tvar(L, "t", ci(L, t->T)),
                 *l = lc_tvar(L, "l", ci(L, k->lanes));
  PrimExpr *tap[3], *o[3] = {t->od}, *xi[5] = {t->n};
  tile_pos(L, t, lc_var(L, tt), &o[1], &o[2]);
  for (int i = 0; i < 3; i++) {
    tv[i] = lc_tvar(L, "k", ci(L, k->k[i])), tap[i] = lc_var(L, tv[i]);
    xi[1 + i] = lc_plus(L, lc_times(L, o[i], ci(L, k->xs[i])), lc_times(L, tap[i], ci(L, c->d[i])));
  }
  xi[4] = lc_var(L, ch);
  PrimExpr *ai[2] = {lc_var(L, tt), lc_var(L, l)};
  PrimExpr *prod =
      lc_times(L, lc_load(L, k->xp, 5, xi), w_elem(L, k, t->ob, tap, lc_var(L, ch), lc_var(L, l)));
  for (int i = 0; i < 6; i++) lc_open(L);
  lc_store(L, t->acc, 2, ai, lc_plus(L, lc_load(L, t->acc, 2, ai), prod));
  lc_for(L, LOOP_VECTORIZED, l, ci(L, k->lanes), lc_close(L));
  lc_for(L, LOOP_UNROLLED, tt, ci(L, t->T), lc_close(L));
  lc_for(L, LOOP_RANGE, ch, ci(L, k->C), lc_close(L));
  for (int i = 2; i >= 0; i--) lc_for(L, LOOP_RANGE, tv[i], ci(L, k->k[i]), lc_close(L));
}

/* One register tile: T x lanes accumulators zeroed, summed, stored to
 * YB[n, ob, od, oh, ow0 + t, l]. */
static void tile3(LowerCx *L, const Blk3 *k, const Tile3 *t) {
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) tile3_taps(L, k, t);
    TirVar *tt = lc_tvar(L, "t", ci(L, t->T)), *l = lc_tvar(L, "l", ci(L, k->lanes));
    PrimExpr *ai[2] = {lc_var(L, tt), lc_var(L, l)};
    PrimExpr *yi[6] = {t->n, t->ob, t->od, NULL, NULL, ai[1]};
    tile_pos(L, t, lc_var(L, tt), &yi[3], &yi[4]);
    lc_open(L);
    lc_open(L);
    if (pass == 0)
      lc_store(L, t->acc, 2, ai, lc_lit(L, k->dt, 0));
    else
      lc_store(L, k->yb, 6, yi, lc_load(L, t->acc, 2, ai));
    lc_for(L, LOOP_VECTORIZED, l, ci(L, k->lanes), lc_close(L));
    lc_for(L, LOOP_UNROLLED, tt, ci(L, t->T), lc_close(L));
  }
}

/* n; in parallel the (block, depth, row) triples, block-major (a thread's
 * consecutive rows share their block's weights); whole tiles along the row,
 * then one shorter tile for what is left. */
static void blocked3_loops(LowerCx *L, const Blk3 *k) {
  int64_t OD = k->out[0], OH = k->out[1], OW = k->out[2], full = OW / k->tile;
  PrimExpr *rows = ci(L, k->nob * OD * OH);
  TirVar *n = lc_tvar(L, "n", k->N), *p = lc_tvar(L, "row", rows),
         *tw = lc_tvar(L, "tw", ci(L, full));
  PrimExpr *pv = lc_var(L, p), *tshape[2] = {ci(L, k->tile), ci(L, k->lanes)};
  Tile3 t = {.n = lc_var(L, n),
             .ob = lc_bin(L, PB_DIV, pv, ci(L, OD * OH)),
             .od = lc_bin(L, PB_MOD, lc_bin(L, PB_DIV, pv, ci(L, OH)), ci(L, OD)),
             .oh = lc_bin(L, PB_MOD, pv, ci(L, OH)),
             .T = k->tile,
             .W = k->tile};
  lc_open(L);
  lc_open(L);
  t.acc = lc_alloc(L, "acc", k->dt, 2, tshape);
  t.acc->no_init = true; /* each tile zeroes its accumulators */
  t.ow0 = lc_times(L, lc_var(L, tw), ci(L, k->tile));
  lc_open(L);
  tile3(L, k, &t);
  lc_for(L, LOOP_RANGE, tw, ci(L, full), lc_close(L));
  if (OW % k->tile) t.T = t.W = (int)(OW % k->tile), t.ow0 = ci(L, full * k->tile), tile3(L, k, &t);
  lc_for(L, LOOP_PARALLEL, p, rows, lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
}

/* Rows narrower than a tile (7 columns at the end of a video net): tiles of
 * k->rows whole rows, so a weight vector serves more columns; the last
 * chunk of rows may be shorter. */
static void blocked3_row_tiles(LowerCx *L, const Blk3 *k) {
  int64_t OD = k->out[0], OH = k->out[1], OW = k->out[2], R = k->rows;
  int64_t chunks = (OH + R - 1) / R, last = OH - (chunks - 1) * R;
  PrimExpr *nrows = ci(L, k->nob * OD * chunks);
  TirVar *n = lc_tvar(L, "n", k->N), *p = lc_tvar(L, "rows", nrows);
  PrimExpr *pv = lc_var(L, p), *q = lc_bin(L, PB_MOD, pv, ci(L, chunks));
  PrimExpr *tshape[2] = {ci(L, R * OW), ci(L, k->lanes)};
  Tile3 t = {.n = lc_var(L, n),
             .ob = lc_bin(L, PB_DIV, pv, ci(L, OD * chunks)),
             .od = lc_bin(L, PB_MOD, lc_bin(L, PB_DIV, pv, ci(L, chunks)), ci(L, OD)),
             .oh = lc_times(L, q, ci(L, R)),
             .ow0 = ci(L, 0),
             .T = (int)(R * OW),
             .W = (int)OW};
  lc_open(L);
  lc_open(L);
  t.acc = lc_alloc(L, "acc", k->dt, 2, tshape);
  t.acc->no_init = true;
  lc_open(L);
  tile3(L, k, &t);
  Stmt *whole = lc_close(L);
  if (last == R) {
    lc_emit(L, whole);
  } else {
    t.T = (int)(last * OW);
    lc_open(L);
    tile3(L, k, &t);
    lc_if_else(L, lc_bin(L, PB_LT, q, ci(L, chunks - 1)), whole, lc_close(L));
  }
  lc_for(L, LOOP_PARALLEL, p, nrows, lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
}

/* out(n, o, od, oh, ow) = YB[n, o / lanes, od, oh, ow, o % lanes]. */
static void unpack3(LowerCx *L, const Blk3 *k, Buffer *out) {
  TirVar *n = lc_tvar(L, "n", k->N), *o = lc_tvar(L, "o", ci(L, k->O)), *v[3];
  for (int i = 0; i < 3; i++) v[i] = lc_tvar(L, "q", ci(L, k->out[i]));
  PrimExpr *lanes = ci(L, k->lanes), *at[MAX_AXES];
  PrimExpr *yi[6] = {lc_var(L, n),    lc_bin(L, PB_DIV, lc_var(L, o), lanes),
                     lc_var(L, v[0]), lc_var(L, v[1]),
                     lc_var(L, v[2]), lc_bin(L, PB_MOD, lc_var(L, o), lanes)};
  PrimExpr *oi[5] = {lc_var(L, n), lc_var(L, o), yi[2], yi[3], yi[4]};
  for (int i = 0; i < 5; i++) lc_open(L);
  lc_store(L, out, 5, placed(at, k->c->ax.x, oi, 5), lc_load(L, k->yb, 6, yi));
  for (int i = 2; i >= 0; i--)
    lc_for(L, i == 2 ? LOOP_VECTORIZED : LOOP_RANGE, v[i], ci(L, k->out[i]), lc_close(L));
  lc_for(L, LOOP_PARALLEL, o, ci(L, k->O), lc_close(L));
  lc_for(L, LOOP_RANGE, n, k->N, lc_close(L));
}

/* The sizes as constants; false when one is known only at run time. */
static bool blocked3_sizes(const ConvNd *c, Blk3 *k) {
  k->C = lc_const(c->cg), k->O = lc_const(c->O);
  bool ok = k->C > 0 && k->O > 0 && lc_const(c->N) > 0;
  for (int i = 0; i < 3; i++) {
    k->in[i] = lc_const(c->in[i]), k->k[i] = lc_const(c->k[i]), k->out[i] = lc_const(c->out[i]);
    ok = ok && k->in[i] > 0 && k->k[i] > 0 && k->out[i] > 0;
    int64_t need = (k->out[i] - 1) * c->s[i] + (k->k[i] - 1) * c->d[i] + 1;
    k->pad[i] = need > k->in[i] + c->lo[i] ? need : k->in[i] + c->lo[i];
    bool dec = k->k[i] == 1 && c->lo[i] == 0 && c->s[i] > 1;
    k->step[i] = dec ? c->s[i] : 1, k->xs[i] = dec ? 1 : c->s[i];
    k->ext[i] = dec ? k->out[i] : k->in[i];
    if (dec) k->pad[i] = k->out[i];
  }
  return ok;
}

/* The blocked schedule of a float conv3d (fast math, groups 1, static
 * sizes): false, nothing emitted, when it does not apply.  Sums in the
 * operands' dtype. */
static bool conv3d_blocked(LowerCx *L, const ConvNd *c, DType dt, Buffer *out) {
  Blk3 k = {.c = c, .dt = dt, .N = c->N};
  if (c->S != 3 || c->transpose || c->groups != 1 || !lc_fast_math(L) || !dtype_is_float(dt) ||
      !lc_dtype_ok(dt) || dt == DT_FLOAT16 || c->x->dtype != dt || c->w->dtype != dt ||
      !blocked3_sizes(c, &k))
    return false;
  k.lanes = target_vector_bytes() / dtype_bytes(dt);
  k.nob = (k.O + k.lanes - 1) / k.lanes;
  k.tile = pick_tile(k.out[2]);
  int budget = target_vector_bytes() >= 64 ? TILE_WIDE : TILE_NARROW;
  k.rows = 2 * k.out[2] <= budget ? (int)(budget / k.out[2]) : 1;
  if (k.rows > k.out[1]) k.rows = (int)k.out[1];
  k.wdirect = c->ax.w[0] == 4 && k.O % k.lanes == 0;
  PrimExpr *yshape[6] = {
      k.N, ci(L, k.nob), ci(L, k.out[0]), ci(L, k.out[1]), ci(L, k.out[2]), ci(L, k.lanes)};
  k.xp = pack_input3(L, &k);
  k.wp = k.wdirect ? NULL : pack_weights3(L, &k);
  k.yb = lc_alloc(L, "YB", dt, 6, yshape);
  if (!k.xp || (!k.wdirect && !k.wp) || !k.yb) return false;
  k.yb->no_init = true; /* every tile stores all its lanes */
  if (k.rows > 1)
    blocked3_row_tiles(L, &k);
  else
    blocked3_loops(L, &k);
  unpack3(L, &k, out);
  return true;
}

static LTensor *conv_nd(LowerCx *L, const Expr *call, LTensor **in, int nin, int S,
                        bool transpose) {
  const char *name = call->u.call.fn->u.op.name;
  ConvNd c = {.S = S, .transpose = transpose};
  if (nin != 2 || in[0]->ndim != 2 + S || in[1]->ndim != 2 + S)
    return lc_fail(L, "%s of this rank", name);
  c.x = in[0], c.w = in[1];
  DType dt = lc_result_type(call)->u.tensor.dtype;
  if (!nd_dtypes(c.x, c.w, dt, &c.acc))
    return lc_fail(L, "%s of %s and %s to %s", name, dtype_name(c.x->dtype), dtype_name(c.w->dtype),
                   dtype_name(dt));
  int64_t groups = c.groups = op_attr_int(call, "groups");
  if (groups < 1 || !nd_attrs(L, call, &c) || !nd_sizes(L, call, &c, groups))
    return lc_failed(L) ? NULL : lc_fail(L, "%s: groups", name);
  PrimExpr *plain[MAX_AXES] = {c.N, c.O}, *shape[MAX_AXES];
  for (int i = 0; i < S; i++) plain[2 + i] = c.out[i];
  Buffer *out = lc_result_buffer(L, call, dt, 2 + S, placed(shape, c.ax.x, plain, 2 + S));
  if (!out) return NULL;
  if (!conv3d_blocked(L, &c, dt, out)) nd_loops(L, &c, out);
  lc_mark_total(L, out); /* each element stored once, from its row */
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

static LTensor *compute_conv1d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 1, false);
}

static LTensor *compute_conv3d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 3, false);
}

static LTensor *compute_conv1d_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 1, true);
}

static LTensor *compute_conv2d_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 2, true);
}

static LTensor *compute_conv3d_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 3, true);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_conv_nd[] = {
    {"nn.conv1d", compute_conv1d},
    {"nn.conv3d", compute_conv3d},
    {"nn.conv1d_transpose", compute_conv1d_transpose},
    {"nn.conv2d_transpose", compute_conv2d_transpose},
    {"nn.conv3d_transpose", compute_conv3d_transpose},
    {NULL, NULL},
};
