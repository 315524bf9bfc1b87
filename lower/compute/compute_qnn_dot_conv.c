/* compute_qnn_dot_conv.c — qnn.conv2d as 4-way uint8 x int8 dot products
 * (dot_u8i8x4: vpdpbusd), called by compute_qnn.c's rule for the cases it
 * takes: NCHW uint8 or int8 data, an OIHW int8 weight, groups 1, known
 * shapes, a scalar data zero point (a constant within the data's range
 * when there is padding), a scalar or per-channel weight zero point, an
 * int32 NCHW result, on a host with AVX512-VNNI.  Grouped and depthwise
 * convolutions, other layouts and the rest keep the widened int32 rule.
 *
 * As TVM's conv2d_NCHWc_int8: the data is packed per call four input
 * channels to an int32 word, XP[n, c4, hp, wp] over the padded image
 * (byte b: channel 4 c4 + b as uint8, +128 for int8 data; padding holds
 * the zero point's byte, so it contributes (zx - zx) w = 0 as the
 * kernel's zero padding of x - zx does; channels past C are 0), with the
 * channel sums S[n, hp, wp] of the padded data; the weight packed
 * WP[jo, (c4 KH + ky) KW + kx, ji] for NR-channel panels, with the column
 * terms CC as in compute_qnn_dot.c (K = C KH KW).  A register tile is MR
 * output columns of one output row by NR output channels (two vectors):
 * for each (c4, ky, kx) one word of XP per column, broadcast, against
 * the panel's word vector.  The result, acc - zw[o] RS - CC[o], RS the
 * window's sum of S, is exact modulo 2^32 like the dense case: bit for bit
 * the reference kernel's int32. */
#include <string.h>

#include "lower/compute/compute.h"
#include "lower/compute/compute_qnn_dot.h"
#include "ops/nn_int.h"

/* NR: output channels per panel in channel lanes; CL: output columns per
 * vector in column lanes, MO: output channels per such tile. */
enum { NR = 32, CL = 16, MO = 16, XZ = 2, WZ = 3 };

typedef struct Cv {
  const LTensor *x, *w, *zx, *zw;
  int64_t N, C, H, W, O, KH, KW, OH, OW, s[2], d[2], p[2], HP, WP, C4, K4, NB, MR, OWT;
  int64_t nr; /* the weight panels' width: NR, or MO with column lanes */
  int64_t WX; /* XP's and S's width: WP, or more for the last column vector's reads */
  bool cols;  /* column lanes (stride 1 along the width) */
  bool signed_x;
  Buffer *xp, *sum, *wp, *cc, *out;
} Cv;

static PrimExpr *i32(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_INT32, e); }
static PrimExpr *cst(LowerCx *L, int64_t v) { return lc_int(L, v); }
static PrimExpr *vmin(LowerCx *L, PrimExpr *a, int64_t b) {
  return lc_call(L, PI_MIN, a, cst(L, b), NULL);
}
static PrimExpr *lt(LowerCx *L, PrimExpr *a, int64_t b) { return lc_bin(L, PB_LT, a, cst(L, b)); }

/* The window: strides, dilation, padding (before, after) from the attributes. */
static bool window(LowerCx *L, const Expr *call, Cv *c, int64_t hi[2]) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow w = {.S = 2};
  NnConvAxes ax;
  if (!nn_window_attrs(&cx, call->u.call.attrs, &w) ||
      !nn_conv_axes(&cx, call->u.call.attrs, 2, &ax) || !nn_conv_axes_plain(&ax, 2))
    return false;
  for (int i = 0; i < 2; i++) c->s[i] = w.stride[i], c->d[i] = w.dil[i], c->p[i] = w.lo[i];
  hi[0] = w.hi[0], hi[1] = w.hi[1];
  const char *ol = op_attr_str(lc_arena(L), call, "out_layout");
  return op_attr_int(call, "groups") == 1 && (!ol[0] || strcmp(ol, "NCHW") == 0);
}

/* The zero point may pad the data: a constant of its range, or no padding. */
static bool pad_ok(const Cv *c, const int64_t hi[2], DType xd) {
  if (!c->p[0] && !c->p[1] && !hi[0] && !hi[1]) return true;
  const PrimExpr *z = c->zx->value;
  int64_t lo = xd == DT_INT8 ? -128 : 0;
  return z && z->kind == PE_INT && z->u.i >= lo && z->u.i <= lo + 255;
}

static bool shapes(Cv *c, LTensor **in, const int64_t hi[2]) {
  int64_t v[8];
  for (int d = 0; d < 4; d++)
    v[d] = lc_const(in[0]->shape[d]), v[4 + d] = lc_const(in[1]->shape[d]);
  for (int d = 0; d < 8; d++)
    if (v[d] < 1) return false;
  c->N = v[0], c->C = v[1], c->H = v[2], c->W = v[3], c->O = v[4], c->KH = v[6], c->KW = v[7];
  c->HP = c->H + c->p[0] + hi[0], c->WP = c->W + c->p[1] + hi[1];
  c->OH = (c->HP - c->d[0] * (c->KH - 1) - 1) / c->s[0] + 1;
  c->OW = (c->WP - c->d[1] * (c->KW - 1) - 1) / c->s[1] + 1;
  return v[5] == c->C && c->OH >= 1 && c->OW >= 1;
}

/* MR: the tile's columns, from 8 down to 4, the one wasting fewest. */
static int64_t tile_cols(int64_t ow) {
  int64_t best = 8, waste = (ow + 7) / 8 * 8 - ow;
  for (int64_t m = 7; m >= 4; m--)
    if ((ow + m - 1) / m * m - ow < waste) best = m, waste = (ow + m - 1) / m * m - ow;
  return best;
}

static bool setup(LowerCx *L, const Expr *call, LTensor **in, int nin, Cv *c) {
  if (!target_has_vnni() || nin != 6 || in[0]->ndim != 4 || in[1]->ndim != 4) return false;
  if ((in[0]->dtype != DT_UINT8 && in[0]->dtype != DT_INT8) || in[1]->dtype != DT_INT8)
    return false;
  if (in[XZ]->dtype != DT_INT32 || in[XZ]->ndim != 0 || in[WZ]->dtype != DT_INT32 ||
      in[WZ]->ndim > 1)
    return false;
  const Type *t = lc_result_type(call);
  if (!t || t->kind != TY_TENSOR || t->u.tensor.dtype != DT_INT32) return false;
  int64_t hi[2];
  *c = (Cv){.x = in[0], .w = in[1], .zx = in[XZ], .zw = in[WZ]};
  if (!window(L, call, c, hi) || !shapes(c, in, hi) || !pad_ok(c, hi, in[0]->dtype)) return false;
  c->signed_x = in[0]->dtype == DT_INT8;
  c->cols = c->s[1] == 1 && c->OW >= CL, c->nr = c->cols ? MO : NR;
  c->C4 = (c->C + 3) / 4, c->K4 = c->C4 * c->KH * c->KW, c->NB = (c->O + c->nr - 1) / c->nr;
  c->MR = tile_cols(c->OW), c->OWT = (c->OW + c->MR - 1) / c->MR;
  int64_t reach = (c->OW + CL - 1) / CL * CL + c->d[1] * (c->KW - 1);
  c->WX = c->cols && reach > c->WP ? reach : c->WP;
  return true;
}

bool qnn_conv2d_dot_ok(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Cv c;
  return setup(L, call, in, nin, &c);
}

static PrimExpr *zw_at(LowerCx *L, const Cv *c, PrimExpr *o) {
  return c->zw->ndim ? lc_at(L, c->zw, &o) : lc_at(L, c->zw, NULL);
}

/* Byte b of a word of channel block c4: the value v (uint8 after the
 * +128 shift of int8 data), 0 for a channel past C. */
static PrimExpr *data_byte(LowerCx *L, const Cv *c, PrimExpr *c4, int b, PrimExpr *v) {
  PrimExpr *u = c->signed_x ? lc_plus(L, v, cst(L, 128)) : v;
  u = lc_call(L, PI_BITAND, u, cst(L, 255), NULL);
  if (c->C % 4 == 0) return u;
  PrimExpr *chb = lc_plus(L, lc_times(L, c4, cst(L, 4)), cst(L, b));
  return lc_call(L, PI_SELECT, lt(L, chb, c->C), u, cst(L, 0));
}

/* Padded row (n, hp) filled as padding: words of the zero point's byte,
 * sums C zx. */
static void pad_row(LowerCx *L, const Cv *c, PrimExpr *nv, PrimExpr *hv) {
  TirVar *w0 = lc_tvar(L, "w", cst(L, c->WX)), *c4 = lc_tvar(L, "c", cst(L, c->C4)),
         *wp = lc_tvar(L, "w", cst(L, c->WX));
  PrimExpr *zx = lc_at(L, c->zx, NULL), *s0[3] = {nv, hv, lc_var(L, w0)}, *bytes[4];
  lc_open(L);
  lc_store(L, c->sum, 3, s0, lc_times(L, cst(L, c->C), zx));
  lc_for(L, LOOP_RANGE, w0, cst(L, c->WX), lc_close(L));
  lc_open(L);
  lc_open(L);
  PrimExpr *xi[4] = {nv, lc_var(L, c4), hv, lc_var(L, wp)};
  for (int b = 0; b < 4; b++) bytes[b] = data_byte(L, c, lc_var(L, c4), b, zx);
  lc_store(L, c->xp, 4, xi, qnn_dot_word(L, bytes));
  lc_for(L, LOOP_RANGE, wp, cst(L, c->WX), lc_close(L));
  lc_for(L, LOOP_RANGE, c4, cst(L, c->C4), lc_close(L));
}

/* The data's row h at padded row hp = h + top, columns from the left
 * padding on: its words and channel sums, no bounds to check. */
static void data_row(LowerCx *L, const Cv *c, PrimExpr *nv, PrimExpr *hv) {
  TirVar *c4 = lc_tvar(L, "c", cst(L, c->C4)), *w = lc_tvar(L, "w", cst(L, c->W)),
         *w0 = lc_tvar(L, "w", cst(L, c->W)), *ch = lc_tvar(L, "c", cst(L, c->C)),
         *w1 = lc_tvar(L, "w", cst(L, c->W));
  PrimExpr *h = lc_minus(L, hv, cst(L, c->p[0])), *bytes[4];
  PrimExpr *wp = lc_plus(L, lc_var(L, w), cst(L, c->p[1]));
  lc_open(L);
  lc_open(L);
  PrimExpr *xo[4] = {nv, lc_var(L, c4), hv, wp};
  for (int b = 0; b < 4; b++) {
    PrimExpr *chb = lc_plus(L, lc_times(L, lc_var(L, c4), cst(L, 4)), cst(L, b));
    PrimExpr *xi[4] = {nv, c->C % 4 ? vmin(L, chb, c->C - 1) : chb, h, lc_var(L, w)};
    bytes[b] = data_byte(L, c, lc_var(L, c4), b, i32(L, lc_at(L, c->x, xi)));
  }
  lc_store(L, c->xp, 4, xo, qnn_dot_word(L, bytes));
  lc_for(L, LOOP_RANGE, w, cst(L, c->W), lc_close(L));
  lc_for(L, LOOP_RANGE, c4, cst(L, c->C4), lc_close(L));
  PrimExpr *s0[3] = {nv, hv, lc_plus(L, lc_var(L, w0), cst(L, c->p[1]))};
  PrimExpr *s1[3] = {nv, hv, lc_plus(L, lc_var(L, w1), cst(L, c->p[1]))};
  lc_open(L);
  lc_store(L, c->sum, 3, s0, cst(L, 0));
  lc_for(L, LOOP_RANGE, w0, cst(L, c->W), lc_close(L));
  lc_open(L);
  lc_open(L);
  PrimExpr *xi[4] = {nv, lc_var(L, ch), h, lc_var(L, w1)};
  lc_store(L, c->sum, 3, s1, lc_plus(L, lc_load(L, c->sum, 3, s1), i32(L, lc_at(L, c->x, xi))));
  lc_for(L, LOOP_RANGE, w1, cst(L, c->W), lc_close(L));
  lc_for(L, LOOP_RANGE, ch, cst(L, c->C), lc_close(L));
}

/* XP[n, c4, hp, :] and S[n, hp, :]: padding, then the data's row over it
 * when hp is one. */
static void pack_row(LowerCx *L, const Cv *c, PrimExpr *nv, PrimExpr *hv) {
  pad_row(L, c, nv, hv);
  PrimExpr *h = lc_minus(L, hv, cst(L, c->p[0]));
  lc_open(L);
  data_row(L, c, nv, hv);
  lc_if(L, lc_bin(L, PB_AND, lc_bin(L, PB_GE, h, cst(L, 0)), lt(L, h, c->H)), lc_close(L));
}

/* The packed data, its padded rows (n, hp) in parallel. */
static void pack_data(LowerCx *L, const Cv *c) {
  TirVar *r = lc_tvar(L, "r", cst(L, c->N * c->HP));
  lc_open(L);
  pack_row(L, c, lc_bin(L, PB_DIV, lc_var(L, r), cst(L, c->HP)),
           lc_bin(L, PB_MOD, lc_var(L, r), cst(L, c->HP)));
  lc_for(L, LOOP_PARALLEL, r, cst(L, c->N * c->HP), lc_close(L));
}

/* WP[jo, k, ji] of output channel o = jo NR + ji, k = (c4 KH + ky) KW + kx. */
static void pack_weight(LowerCx *L, const Cv *c, PrimExpr *jo) {
  TirVar *c4 = lc_tvar(L, "c", cst(L, c->C4)), *ky = lc_tvar(L, "ky", cst(L, c->KH)),
         *kx = lc_tvar(L, "kx", cst(L, c->KW)), *ji = lc_tvar(L, "ji", cst(L, c->nr));
  PrimExpr *o = lc_plus(L, lc_times(L, jo, cst(L, c->nr)), lc_var(L, ji));
  PrimExpr *k =
      lc_plus(L,
              lc_times(L, lc_plus(L, lc_times(L, lc_var(L, c4), cst(L, c->KH)), lc_var(L, ky)),
                       cst(L, c->KW)),
              lc_var(L, kx));
  for (int i = 0; i < 4; i++) lc_open(L);
  PrimExpr *bytes[4], *wi[3] = {jo, k, lc_var(L, ji)};
  for (int b = 0; b < 4; b++) {
    PrimExpr *chb = lc_plus(L, lc_times(L, lc_var(L, c4), cst(L, 4)), cst(L, b));
    PrimExpr *idx[4] = {vmin(L, o, c->O - 1), vmin(L, chb, c->C - 1), lc_var(L, ky), lc_var(L, kx)};
    PrimExpr *v = lc_call(L, PI_BITAND, i32(L, lc_at(L, c->w, idx)), cst(L, 255), NULL);
    bytes[b] =
        lc_call(L, PI_SELECT, lc_bin(L, PB_AND, lt(L, chb, c->C), lt(L, o, c->O)), v, cst(L, 0));
  }
  lc_store(L, c->wp, 3, wi, qnn_dot_word(L, bytes));
  lc_for(L, LOOP_RANGE, ji, cst(L, c->nr), lc_close(L));
  lc_for(L, LOOP_RANGE, kx, cst(L, c->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, ky, cst(L, c->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, c4, cst(L, c->C4), lc_close(L));
}

/* CC[jo, ji] = (zx + 128 s) sum w[o] - C KH KW zx zw[o] (0 past O). */
static void column_terms(LowerCx *L, const Cv *c, PrimExpr *jo) {
  TirVar *ji = lc_tvar(L, "ji", cst(L, c->nr)), *ch = lc_tvar(L, "c", cst(L, c->C)),
         *ky = lc_tvar(L, "ky", cst(L, c->KH)), *kx = lc_tvar(L, "kx", cst(L, c->KW));
  PrimExpr *o = lc_plus(L, lc_times(L, jo, cst(L, c->nr)), lc_var(L, ji)),
           *oc = vmin(L, o, c->O - 1);
  PrimExpr *ci[2] = {jo, lc_var(L, ji)};
  lc_open(L); /* ji */
  lc_store(L, c->cc, 2, ci, cst(L, 0));
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *wi[4] = {oc, lc_var(L, ch), lc_var(L, ky), lc_var(L, kx)};
  lc_store(L, c->cc, 2, ci, lc_plus(L, lc_load(L, c->cc, 2, ci), i32(L, lc_at(L, c->w, wi))));
  lc_for(L, LOOP_RANGE, kx, cst(L, c->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, ky, cst(L, c->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, ch, cst(L, c->C), lc_close(L));
  PrimExpr *zx = lc_at(L, c->zx, NULL), *sx = c->signed_x ? lc_plus(L, zx, cst(L, 128)) : zx;
  PrimExpr *kz = lc_times(L, lc_times(L, cst(L, c->C * c->KH * c->KW), zx), zw_at(L, c, oc));
  PrimExpr *v = lc_minus(L, lc_times(L, lc_load(L, c->cc, 2, ci), sx), kz);
  lc_store(L, c->cc, 2, ci, lc_call(L, PI_SELECT, lt(L, o, c->O), v, cst(L, 0)));
  lc_for(L, LOOP_RANGE, ji, cst(L, c->nr), lc_close(L));
}

/* The weight's panels (in parallel). */
static void pack_panels(LowerCx *L, const Cv *c) {
  TirVar *jo = lc_tvar(L, "jo", cst(L, c->NB));
  lc_open(L);
  pack_weight(L, c, lc_var(L, jo));
  column_terms(L, c, lc_var(L, jo));
  lc_for(L, LOOP_PARALLEL, jo, cst(L, c->NB), lc_close(L));
}

typedef struct Tile {
  PrimExpr *n, *oy, *ox0, *jo;
  Buffer *acc, *rs;
} Tile;

/* The output column of tile column ii, clamped to the last. */
static PrimExpr *col(LowerCx *L, const Cv *c, const Tile *T, PrimExpr *ii) {
  return vmin(L, lc_plus(L, T->ox0, ii), c->OW - 1);
}

/* The reduction over a window: channel words c4, kernel rows ky and
 * columns kx; the padded data row of output row oy and the weight panel's
 * row k for the tap. */
typedef struct Taps {
  TirVar *c4, *ky, *kx;
  PrimExpr *hp, *k;
} Taps;

static Taps taps(LowerCx *L, const Cv *c, PrimExpr *oy) {
  Taps t = {lc_tvar(L, "c", cst(L, c->C4)), lc_tvar(L, "ky", cst(L, c->KH)),
            lc_tvar(L, "kx", cst(L, c->KW)), NULL, NULL};
  t.hp =
      lc_plus(L, lc_times(L, oy, cst(L, c->s[0])), lc_times(L, lc_var(L, t.ky), cst(L, c->d[0])));
  PrimExpr *row = lc_plus(L, lc_times(L, lc_var(L, t.c4), cst(L, c->KH)), lc_var(L, t.ky));
  t.k = lc_plus(L, lc_times(L, row, cst(L, c->KW)), lc_var(L, t.kx));
  return t;
}

/* The body acc[a] = dot(acc[a], XP[xi], WP[wi]) inside the tile's two
 * loops (rows unrolled, lanes vectorized) inside the taps' three. */
static void dot_taps(LowerCx *L, const Cv *c, const Taps *t, Buffer *acc, TirVar *r, int rows,
                     TirVar *l, int lanes, PrimExpr **xi, PrimExpr **wi) {
  PrimExpr *a[2] = {lc_var(L, r), lc_var(L, l)};
  for (int i = 0; i < 5; i++) lc_open(L);
  lc_store(L, acc, 2, a,
           lc_call(L, PI_DOT4, lc_load(L, acc, 2, a), lc_load(L, c->xp, 4, xi),
                   lc_load(L, c->wp, 3, wi)));
  lc_for(L, LOOP_VECTORIZED, l, cst(L, lanes), lc_close(L));
  lc_for(L, LOOP_UNROLLED, r, cst(L, rows), lc_close(L));
  lc_for(L, LOOP_RANGE, t->kx, cst(L, c->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, t->ky, cst(L, c->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, t->c4, cst(L, c->C4), lc_close(L));
}

/* acc = 0; for c4, ky, kx: acc[ii, ji] = dot(acc, XP word of column ii, WP[jo, k, ji]) */
static void accumulate(LowerCx *L, const Cv *c, const Tile *T) {
  qnn_dot_zero_acc(L, T->acc, "ii", c->MR, "ji", NR);
  Taps t = taps(L, c, T->oy);
  TirVar *ii = lc_tvar(L, "ii", cst(L, c->MR)), *ji = lc_tvar(L, "ji", cst(L, NR));
  PrimExpr *wp = lc_plus(L, lc_times(L, col(L, c, T, lc_var(L, ii)), cst(L, c->s[1])),
                         lc_times(L, lc_var(L, t.kx), cst(L, c->d[1])));
  PrimExpr *xi[4] = {T->n, lc_var(L, t.c4), t.hp, wp}, *wi[3] = {T->jo, t.k, lc_var(L, ji)};
  dot_taps(L, c, &t, T->acc, ii, c->MR, ji, NR, xi, wi);
}

/* rs[ii] = the window's sum of S for tile column ii. */
static void row_sums(LowerCx *L, const Cv *c, const Tile *T) {
  TirVar *ii = lc_tvar(L, "ii", cst(L, c->MR)), *ky = lc_tvar(L, "ky", cst(L, c->KH)),
         *kx = lc_tvar(L, "kx", cst(L, c->KW));
  PrimExpr *iv = lc_var(L, ii);
  lc_open(L);
  lc_store(L, T->rs, 1, &iv, cst(L, 0));
  lc_open(L);
  lc_open(L);
  PrimExpr *hp =
      lc_plus(L, lc_times(L, T->oy, cst(L, c->s[0])), lc_times(L, lc_var(L, ky), cst(L, c->d[0])));
  PrimExpr *wp = lc_plus(L, lc_times(L, col(L, c, T, iv), cst(L, c->s[1])),
                         lc_times(L, lc_var(L, kx), cst(L, c->d[1])));
  PrimExpr *si[3] = {T->n, hp, wp};
  lc_store(L, T->rs, 1, &iv, lc_plus(L, lc_load(L, T->rs, 1, &iv), lc_load(L, c->sum, 3, si)));
  lc_for(L, LOOP_RANGE, kx, cst(L, c->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, ky, cst(L, c->KH), lc_close(L));
  lc_for(L, LOOP_RANGE, ii, cst(L, c->MR), lc_close(L));
}

/* out[n, o, oy, ox] = acc - zw[o] rs - CC[o] for columns below OW, channels below O. */
static void store_tile(LowerCx *L, const Cv *c, const Tile *T) {
  TirVar *ii = lc_tvar(L, "ii", cst(L, c->MR)), *ji = lc_tvar(L, "ji", cst(L, NR));
  PrimExpr *ox = lc_plus(L, T->ox0, lc_var(L, ii)), *iv = lc_var(L, ii);
  PrimExpr *o = lc_plus(L, lc_times(L, T->jo, cst(L, NR)), lc_var(L, ji));
  PrimExpr *width = c->O % NR == 0
                        ? cst(L, NR)
                        : vmin(L, lc_minus(L, cst(L, c->O), lc_times(L, T->jo, cst(L, NR))), NR);
  lc_open(L); /* ii */
  lc_open(L); /* if */
  lc_open(L); /* ji */
  PrimExpr *a[2] = {iv, lc_var(L, ji)}, *ci[2] = {T->jo, lc_var(L, ji)};
  PrimExpr *oi[4] = {T->n, o, T->oy, ox};
  PrimExpr *v =
      lc_minus(L, lc_load(L, T->acc, 2, a), lc_times(L, zw_at(L, c, o), lc_load(L, T->rs, 1, &iv)));
  lc_store(L, c->out, 4, oi, lc_minus(L, v, lc_load(L, c->cc, 2, ci)));
  lc_for(L, LOOP_RANGE, ji, width, lc_close(L));
  lc_if(L, lt(L, ox, c->OW), lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii, cst(L, c->MR), lc_close(L));
}

/* Output rows (n, oy) in parallel; in each, every panel and column tile. */
static void tiles(LowerCx *L, const Cv *c) {
  TirVar *r = lc_tvar(L, "r", cst(L, c->N * c->OH)), *jo = lc_tvar(L, "jo", cst(L, c->NB)),
         *t = lc_tvar(L, "t", cst(L, c->OWT));
  PrimExpr *ts[2] = {cst(L, c->MR), cst(L, NR)}, *mr = cst(L, c->MR);
  lc_open(L); /* r */
  Tile T = {lc_bin(L, PB_DIV, lc_var(L, r), cst(L, c->OH)),
            lc_bin(L, PB_MOD, lc_var(L, r), cst(L, c->OH)),
            lc_times(L, lc_var(L, t), cst(L, c->MR)),
            lc_var(L, jo),
            lc_alloc(L, "acc", DT_INT32, 2, ts),
            lc_alloc(L, "rs", DT_INT32, 1, &mr)};
  lc_open(L); /* t */
  row_sums(L, c, &T);
  lc_open(L); /* jo */
  accumulate(L, c, &T);
  store_tile(L, c, &T);
  lc_for(L, LOOP_RANGE, jo, cst(L, c->NB), lc_close(L));
  lc_for(L, LOOP_RANGE, t, cst(L, c->OWT), lc_close(L));
  lc_for(L, LOOP_PARALLEL, r, cst(L, c->N * c->OH), lc_close(L));
}

/* ───────────────── column lanes (stride 1 along the width) ───────────────── */

/* A column tile: CL output columns from ox0 of row (n, oy), MO output
 * channels from ob MO. */
typedef struct CTile {
  PrimExpr *n, *oy, *ox0, *ob;
  Buffer *acc, *rs;
  bool full; /* all CL columns below OW: vector stores */
} CTile;

/* The padded column of lane l for window column kx. */
static PrimExpr *lane_col(LowerCx *L, const Cv *c, const CTile *T, PrimExpr *l, PrimExpr *kx) {
  return lc_plus(L, lc_plus(L, T->ox0, l), lc_times(L, kx, cst(L, c->d[1])));
}

/* rs[l] = the window's sum of S for column lane l. */
static void col_sums(LowerCx *L, const Cv *c, const CTile *T) {
  TirVar *l0 = lc_tvar(L, "l", cst(L, CL)), *ky = lc_tvar(L, "ky", cst(L, c->KH)),
         *kx = lc_tvar(L, "kx", cst(L, c->KW)), *l = lc_tvar(L, "l", cst(L, CL));
  PrimExpr *z = lc_var(L, l0), *lv = lc_var(L, l);
  lc_open(L);
  lc_store(L, T->rs, 1, &z, cst(L, 0));
  lc_for(L, LOOP_VECTORIZED, l0, cst(L, CL), lc_close(L));
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *hp =
      lc_plus(L, lc_times(L, T->oy, cst(L, c->s[0])), lc_times(L, lc_var(L, ky), cst(L, c->d[0])));
  PrimExpr *si[3] = {T->n, hp, lane_col(L, c, T, lv, lc_var(L, kx))};
  lc_store(L, T->rs, 1, &lv, lc_plus(L, lc_load(L, T->rs, 1, &lv), lc_load(L, c->sum, 3, si)));
  lc_for(L, LOOP_VECTORIZED, l, cst(L, CL), lc_close(L));
  lc_for(L, LOOP_RANGE, kx, cst(L, c->KW), lc_close(L));
  lc_for(L, LOOP_RANGE, ky, cst(L, c->KH), lc_close(L));
}

/* acc = 0; for c4, ky, kx: acc[oo, l] = dot(acc[oo, l], XP word of lane l, WP[ob, k, oo]) */
static void col_accumulate(LowerCx *L, const Cv *c, const CTile *T) {
  qnn_dot_zero_acc(L, T->acc, "oo", MO, "l", CL);
  Taps t = taps(L, c, T->oy);
  TirVar *oo = lc_tvar(L, "oo", cst(L, MO)), *l = lc_tvar(L, "l", cst(L, CL));
  PrimExpr *xi[4] = {T->n, lc_var(L, t.c4), t.hp, lane_col(L, c, T, lc_var(L, l), lc_var(L, t.kx))};
  PrimExpr *wi[3] = {T->ob, t.k, lc_var(L, oo)};
  dot_taps(L, c, &t, T->acc, oo, MO, l, CL, xi, wi);
}

/* out[n, o, oy, ox0 + l] = acc[oo, l] - zw[o] rs[l] - CC[ob, oo] for the
 * channels below O; a full tile's columns as one vector. */
static void col_store(LowerCx *L, const Cv *c, const CTile *T) {
  TirVar *oo = lc_tvar(L, "oo", cst(L, MO)), *l = lc_tvar(L, "l", cst(L, CL));
  PrimExpr *o = lc_plus(L, lc_times(L, T->ob, cst(L, MO)), lc_var(L, oo)), *lv = lc_var(L, l);
  PrimExpr *width = T->full ? cst(L, CL) : lc_minus(L, cst(L, c->OW), T->ox0);
  lc_open(L); /* oo */
  lc_open(L); /* if */
  lc_open(L); /* l */
  PrimExpr *a[2] = {lc_var(L, oo), lv}, *ci[2] = {T->ob, lc_var(L, oo)};
  PrimExpr *oi[4] = {T->n, o, T->oy, lc_plus(L, T->ox0, lv)};
  PrimExpr *v = lc_minus(L, lc_load(L, T->acc, 2, a),
                         lc_times(L, zw_at(L, c, vmin(L, o, c->O - 1)), lc_load(L, T->rs, 1, &lv)));
  lc_store(L, c->out, 4, oi, lc_minus(L, v, lc_load(L, c->cc, 2, ci)));
  lc_for(L, T->full ? LOOP_VECTORIZED : LOOP_RANGE, l, width, lc_close(L));
  lc_if(L, lt(L, o, c->O), lc_close(L));
  lc_for(L, LOOP_UNROLLED, oo, cst(L, MO), lc_close(L));
}

/* One column tile at ox0 against every channel block. */
static void col_tile(LowerCx *L, const Cv *c, CTile *T) {
  TirVar *ob = lc_tvar(L, "ob", cst(L, c->NB));
  T->ob = lc_var(L, ob);
  col_sums(L, c, T);
  lc_open(L);
  col_accumulate(L, c, T);
  col_store(L, c, T);
  lc_for(L, LOOP_RANGE, ob, cst(L, c->NB), lc_close(L));
}

/* Output rows (n, oy) in parallel; in each, the full column tiles, then
 * the last partial one. */
static void col_tiles(LowerCx *L, const Cv *c) {
  int64_t full = c->OW / CL;
  TirVar *r = lc_tvar(L, "r", cst(L, c->N * c->OH)), *t = lc_tvar(L, "t", cst(L, full));
  PrimExpr *ts[2] = {cst(L, MO), cst(L, CL)}, *cl = cst(L, CL);
  lc_open(L); /* r */
  CTile T = {lc_bin(L, PB_DIV, lc_var(L, r), cst(L, c->OH)),
             lc_bin(L, PB_MOD, lc_var(L, r), cst(L, c->OH)),
             lc_times(L, lc_var(L, t), cl),
             NULL,
             lc_alloc(L, "acc", DT_INT32, 2, ts),
             lc_alloc(L, "rs", DT_INT32, 1, &cl),
             true};
  lc_open(L); /* t */
  col_tile(L, c, &T);
  lc_for(L, LOOP_RANGE, t, cst(L, full), lc_close(L));
  if (c->OW % CL) {
    T.ox0 = cst(L, full * CL), T.full = false;
    col_tile(L, c, &T);
  }
  lc_for(L, LOOP_PARALLEL, r, cst(L, c->N * c->OH), lc_close(L));
}

LTensor *qnn_conv2d_dot(LowerCx *L, const Expr *call, LTensor **in) {
  Cv c;
  if (!setup(L, call, in, 6, &c)) return lc_fail(L, "qnn.conv2d: not a byte dot-product case");
  PrimExpr *os[4] = {cst(L, c.N), cst(L, c.O), cst(L, c.OH), cst(L, c.OW)};
  PrimExpr *xs[4] = {cst(L, c.N), cst(L, c.C4), cst(L, c.HP), cst(L, c.WX)};
  PrimExpr *ss[3] = {cst(L, c.N), cst(L, c.HP), cst(L, c.WX)};
  PrimExpr *ws[3] = {cst(L, c.NB), cst(L, c.K4), cst(L, c.nr)},
           *cs[2] = {cst(L, c.NB), cst(L, c.nr)};
  c.out = lc_result_buffer(L, call, DT_INT32, 4, os);
  c.xp = lc_alloc(L, "XP", DT_INT32, 4, xs), c.sum = lc_alloc(L, "S", DT_INT32, 3, ss);
  c.wp = lc_alloc(L, "WP", DT_INT32, 3, ws), c.cc = lc_alloc(L, "CC", DT_INT32, 2, cs);
  if (!c.out || !c.xp || !c.sum || !c.wp || !c.cc)
    return lc_fail(L, "qnn.conv2d: no buffers for the packed operands");
  lc_mark_total(L, c.out);
  pack_data(L, &c);
  pack_panels(L, &c);
  if (c.cols)
    col_tiles(L, &c);
  else
    tiles(L, &c);
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, c.out);
}
