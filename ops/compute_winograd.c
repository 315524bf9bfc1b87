/* compute_winograd.c — the Winograd schedule F(2x2, 3x3) of a blocked
 * 3x3 convolution (stride 1, padding 1, float32): nn.contrib_conv2d_NCHWc's
 * rule (compute_conv.c) uses it for layers with more 2x2 output tiles than
 * input channels (ResNet's first two stages), where it needs 2.25 times
 * fewer multiplications than the direct schedule.
 *
 * With the standard matrices (Lavin and Gray)
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 * the kernel computes, for every 2x2 output tile (its 4x4 input patch d at
 * rows 2th - 1 .., columns 2tw - 1 .., zeros outside the image) and every
 * channel, four stages over buffers allocated in the kernel:
 *   V[p, tile, c]   = (B^T d B)[p]          p = 4 xi + nu, c blocked (cb, ci)
 *   U[p, c, o]      = (G g G^T)[p]          the weights, per call
 *   M[p, tile, o]   = sum_c V[p, tile, c] U[p, c, o]
 *                     (register tiles of R tiles x one block of output lanes)
 *   out[.., 2th + i, 2tw + j, ..] = (A^T M A)[i, j]
 * The result is the convolution up to rounding (float32 sums in another
 * order than the direct schedule's, through the transforms' additions);
 * the kernel tests bound it as they bound the direct schedule. */
#include <string.h>

#include "ops/compute.h"

enum { WG_TILE = 14 }; /* output tiles per register tile (AVX-512: 14 x 1 vector) */

static const int BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const float G[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
static const int AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

static PrimExpr *I(LowerCx *L, int64_t v) { return lc_int(L, v); }
static PrimExpr *V_(LowerCx *L, TirVar *v) { return lc_var(L, v); }
static PrimExpr *add(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_ADD, a, b); }
static PrimExpr *mul(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_MUL, a, b); }
static PrimExpr *divi(LowerCx *L, PrimExpr *a, int64_t b) { return lc_bin(L, PB_DIV, a, I(L, b)); }
static PrimExpr *modi(LowerCx *L, PrimExpr *a, int64_t b) { return lc_bin(L, PB_MOD, a, I(L, b)); }

/* sum_k c[k] v[k] for small integer coefficients (terms with 0 dropped). */
static PrimExpr *signed_sum(LowerCx *L, const int *c, PrimExpr *const *v, int n) {
  PrimExpr *r = NULL;
  for (int k = 0; k < n; k++) {
    if (!c[k]) continue;
    if (!r)
      r = c[k] > 0 ? v[k] : lc_neg(L, v[k]);
    else
      r = lc_bin(L, c[k] > 0 ? PB_ADD : PB_SUB, r, v[k]);
  }
  return r ? r : lc_lit(L, DT_FLOAT32, 0);
}

/* The input element at (h, w), 0 outside the image (clamped load: no
 * bounds check, no branch). */
static PrimExpr *x_at(LowerCx *L, const Winograd *g, PrimExpr *n, PrimExpr *cb, PrimExpr *h,
                      PrimExpr *w, PrimExpr *ci) {
  PrimExpr *hc = lc_call(L, PI_MAX, lc_call(L, PI_MIN, h, I(L, g->H - 1), NULL), I(L, 0), NULL);
  PrimExpr *wc = lc_call(L, PI_MAX, lc_call(L, PI_MIN, w, I(L, g->W - 1), NULL), I(L, 0), NULL);
  PrimExpr *xi[5] = {n, cb, hc, wc, ci};
  PrimExpr *in = lc_bin(
      L, PB_AND, lc_bin(L, PB_AND, lc_bin(L, PB_GE, h, I(L, 0)), lc_bin(L, PB_LT, h, I(L, g->H))),
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, w, I(L, 0)), lc_bin(L, PB_LT, w, I(L, g->W))));
  return lc_call(L, PI_SELECT, in, lc_at(L, g->x, xi), lc_lit(L, DT_FLOAT32, 0));
}

/* V[p, tile, cb, ci] = (B^T d B)[p]: tiles (n, th) in parallel per block. */
static Buffer *input_transform(LowerCx *L, const Winograd *g, int64_t TH, int64_t TW) {
  int64_t T = g->N * TH * TW;
  PrimExpr *vs[4] = {I(L, 16), I(L, T), I(L, g->CB), I(L, g->cb)};
  Buffer *V = lc_alloc(L, "V", DT_FLOAT32, 4, vs);
  V->no_init = true; /* every element stored below */
  TirVar *q = lc_tvar(L, "q", I(L, g->CB * g->N * TH)), *tw = lc_tvar(L, "tw", I(L, TW)),
         *ci = lc_tvar(L, "ci", I(L, g->cb));
  PrimExpr *cb = divi(L, V_(L, q), g->N * TH), *nth = modi(L, V_(L, q), g->N * TH);
  PrimExpr *n = divi(L, nth, TH), *th = modi(L, nth, TH);
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *d[4][4], *t[4][4];
  for (int r = 0; r < 4; r++)
    for (int s = 0; s < 4; s++)
      d[r][s] = x_at(L, g, n, cb, add(L, mul(L, th, I(L, 2)), I(L, r - 1)),
                     add(L, mul(L, V_(L, tw), I(L, 2)), I(L, s - 1)), V_(L, ci));
  for (int xi = 0; xi < 4; xi++)
    for (int s = 0; s < 4; s++) {
      PrimExpr *col[4] = {d[0][s], d[1][s], d[2][s], d[3][s]};
      t[xi][s] = signed_sum(L, BT[xi], col, 4);
    }
  PrimExpr *tile = add(L, mul(L, nth, I(L, TW)), V_(L, tw));
  for (int xi = 0; xi < 4; xi++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *vi[4] = {I(L, xi * 4 + nu), tile, cb, V_(L, ci)};
      lc_store(L, V, 4, vi, signed_sum(L, BT[nu], t[xi], 4));
    }
  lc_for(L, LOOP_VECTORIZED, ci, I(L, g->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, tw, I(L, TW), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, I(L, g->CB * g->N * TH), lc_close(L));
  return V;
}

/* U[p, cb, ci, ob, l] = (G g G^T)[p] of the weight w[ob, cb, 3, 3, ci, l]. */
static Buffer *weight_transform(LowerCx *L, const Winograd *g) {
  PrimExpr *us[5] = {I(L, 16), I(L, g->CB), I(L, g->cb), I(L, g->OB), I(L, g->ob)};
  Buffer *U = lc_alloc(L, "U", DT_FLOAT32, 5, us);
  U->no_init = true;
  TirVar *q = lc_tvar(L, "q", I(L, g->OB * g->CB)), *ci = lc_tvar(L, "ci", I(L, g->cb)),
         *l = lc_tvar(L, "l", I(L, g->ob));
  PrimExpr *ob = divi(L, V_(L, q), g->CB), *cb = modi(L, V_(L, q), g->CB);
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *w[3][3], *gw[4][3];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      PrimExpr *wi[6] = {ob, cb, I(L, a), I(L, b), V_(L, ci), V_(L, l)};
      w[a][b] = lc_at(L, g->w, wi);
    }
  for (int xi = 0; xi < 4; xi++)
    for (int b = 0; b < 3; b++) {
      PrimExpr *s = NULL;
      for (int a = 0; a < 3; a++)
        if (G[xi][a] != 0) {
          PrimExpr *term = mul(L, lc_lit(L, DT_FLOAT32, G[xi][a]), w[a][b]);
          s = s ? add(L, s, term) : term;
        }
      gw[xi][b] = s;
    }
  for (int xi = 0; xi < 4; xi++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *s = NULL;
      for (int b = 0; b < 3; b++)
        if (G[nu][b] != 0) {
          PrimExpr *term = mul(L, lc_lit(L, DT_FLOAT32, G[nu][b]), gw[xi][b]);
          s = s ? add(L, s, term) : term;
        }
      PrimExpr *ui[5] = {I(L, xi * 4 + nu), cb, V_(L, ci), ob, V_(L, l)};
      lc_store(L, U, 5, ui, s);
    }
  lc_for(L, LOOP_VECTORIZED, l, I(L, g->ob), lc_close(L));
  lc_for(L, LOOP_RANGE, ci, I(L, g->cb), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, I(L, g->OB * g->CB), lc_close(L));
  return U;
}

/* One register tile of M: R tiles from t0 x the lanes of block ob at p. */
static void gemm_tile(LowerCx *L, const Winograd *g, Buffer *V, Buffer *U, Buffer *M, Buffer *acc,
                      int R, PrimExpr *p, PrimExpr *ob, PrimExpr *t0) {
  PrimExpr *lanes = I(L, g->ob);
  TirVar *t = lc_tvar(L, "t", I(L, R)), *l = lc_tvar(L, "l", lanes);
  PrimExpr *ai[2] = {V_(L, t), V_(L, l)};
  lc_open(L), lc_open(L);
  lc_store(L, acc, 2, ai, lc_lit(L, DT_FLOAT32, 0));
  lc_for(L, LOOP_VECTORIZED, l, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t, I(L, R), lc_close(L));
  TirVar *cb = lc_tvar(L, "cb", I(L, g->CB)), *ci = lc_tvar(L, "ci", I(L, g->cb)),
         *t2 = lc_tvar(L, "t", I(L, R)), *l2 = lc_tvar(L, "l", lanes);
  for (int i = 0; i < 4; i++) lc_open(L);
  PrimExpr *a2[2] = {V_(L, t2), V_(L, l2)};
  PrimExpr *vi[4] = {p, add(L, t0, V_(L, t2)), V_(L, cb), V_(L, ci)};
  PrimExpr *ui[5] = {p, V_(L, cb), V_(L, ci), ob, V_(L, l2)};
  PrimExpr *prod = mul(L, lc_load(L, V, 4, vi), lc_load(L, U, 5, ui));
  lc_store(L, acc, 2, a2, add(L, lc_load(L, acc, 2, a2), prod));
  lc_for(L, LOOP_VECTORIZED, l2, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t2, I(L, R), lc_close(L));
  lc_for(L, LOOP_RANGE, ci, I(L, g->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, cb, I(L, g->CB), lc_close(L));
  TirVar *t3 = lc_tvar(L, "t", I(L, R)), *l3 = lc_tvar(L, "l", lanes);
  PrimExpr *a3[2] = {V_(L, t3), V_(L, l3)};
  PrimExpr *mi[4] = {p, add(L, t0, V_(L, t3)), ob, V_(L, l3)};
  lc_open(L), lc_open(L);
  lc_store(L, M, 4, mi, lc_load(L, acc, 2, a3));
  lc_for(L, LOOP_VECTORIZED, l3, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t3, I(L, R), lc_close(L));
}

/* M[p, tile, ob, l] = sum over channels of V[p, tile, c] U[p, c, ob, l]:
 * one parallel loop over (p, ob, group of R tiles), a shorter last tile. */
static Buffer *products(LowerCx *L, const Winograd *g, Buffer *V, Buffer *U, int64_t T) {
  PrimExpr *ms[4] = {I(L, 16), I(L, T), I(L, g->OB), I(L, g->ob)};
  Buffer *M = lc_alloc(L, "M", DT_FLOAT32, 4, ms);
  M->no_init = true;
  int64_t full = T / WG_TILE, rest = T % WG_TILE, groups = full + (rest != 0);
  TirVar *q = lc_tvar(L, "q", I(L, 16 * g->OB * groups));
  PrimExpr *pob = divi(L, V_(L, q), groups), *grp = modi(L, V_(L, q), groups);
  PrimExpr *p = divi(L, pob, g->OB), *ob = modi(L, pob, g->OB);
  lc_open(L);
  PrimExpr *as[2] = {I(L, WG_TILE), I(L, g->ob)};
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT32, 2, as);
  acc->no_init = true; /* zeroed by each tile */
  PrimExpr *t0 = mul(L, grp, I(L, WG_TILE));
  if (!rest) {
    gemm_tile(L, g, V, U, M, acc, WG_TILE, p, ob, t0);
  } else {
    lc_open(L);
    gemm_tile(L, g, V, U, M, acc, WG_TILE, p, ob, t0);
    Stmt *whole = lc_close(L);
    lc_open(L);
    gemm_tile(L, g, V, U, M, acc, (int)rest, p, ob, t0);
    lc_if_else(L, lc_bin(L, PB_LT, grp, I(L, full)), whole, lc_close(L));
  }
  lc_for(L, LOOP_PARALLEL, q, I(L, 16 * g->OB * groups), lc_close(L));
  return M;
}

/* out[n, ob, 2th + i, 2tw + j, l] = (A^T M A)[i, j]. */
static void output_transform(LowerCx *L, const Winograd *g, Buffer *M, Buffer *out, int64_t TH,
                             int64_t TW) {
  TirVar *q = lc_tvar(L, "q", I(L, g->OB * g->N * TH)), *tw = lc_tvar(L, "tw", I(L, TW)),
         *l = lc_tvar(L, "l", I(L, g->ob));
  PrimExpr *ob = divi(L, V_(L, q), g->N * TH), *nth = modi(L, V_(L, q), g->N * TH);
  PrimExpr *n = divi(L, nth, TH), *th = modi(L, nth, TH);
  PrimExpr *tile = add(L, mul(L, nth, I(L, TW)), V_(L, tw));
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *m[4][4], *r[2][4];
  for (int p = 0; p < 16; p++) {
    PrimExpr *mi[4] = {I(L, p), tile, ob, V_(L, l)};
    m[p / 4][p % 4] = lc_load(L, M, 4, mi);
  }
  for (int i = 0; i < 2; i++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *col[4] = {m[0][nu], m[1][nu], m[2][nu], m[3][nu]};
      r[i][nu] = signed_sum(L, AT[i], col, 4);
    }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      PrimExpr *oi[5] = {n, ob, add(L, mul(L, th, I(L, 2)), I(L, i)),
                         add(L, mul(L, V_(L, tw), I(L, 2)), I(L, j)), V_(L, l)};
      lc_store(L, out, 5, oi, signed_sum(L, AT[j], r[i], 4));
    }
  lc_for(L, LOOP_VECTORIZED, l, I(L, g->ob), lc_close(L));
  lc_for(L, LOOP_RANGE, tw, I(L, TW), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, I(L, g->OB * g->N * TH), lc_close(L));
}

bool lc_winograd_applies(const Winograd *g) {
  int64_t tiles = (g->H / 2) * (g->W / 2);
  return g->dt == DT_FLOAT32 && g->H % 2 == 0 && g->W % 2 == 0 && g->H >= 4 && g->W >= 4 &&
         tiles >= g->CB * g->cb && g->cb * dtype_bytes(DT_FLOAT32) <= 64 &&
         g->ob * dtype_bytes(DT_FLOAT32) <= lc_vector_bytes();
}

void lc_conv_winograd(LowerCx *L, const Winograd *g, Buffer *out) {
  int64_t TH = g->H / 2, TW = g->W / 2;
  Buffer *V = input_transform(L, g, TH, TW);
  Buffer *U = weight_transform(L, g);
  Buffer *M = products(L, g, V, U, g->N * TH * TW);
  output_transform(L, g, M, out, TH, TW);
}
