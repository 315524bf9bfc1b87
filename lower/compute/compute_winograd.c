/* compute_winograd.c — the Winograd schedule F(2x2, 3x3) of a blocked
 * 3x3 convolution (stride 1, padding 1, float32): nn.contrib_conv2d_NCHWc's
 * rule (compute_conv.c) uses it for layers with more 2x2 output tiles than
 * input channels (ResNet's first two stages), where it needs 2.25 times
 * fewer multiplications than the direct schedule, and whose scratch
 * buffers V and M take at most 32 MiB each.
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

#include "lower/compute/compute.h"

enum { WG_TILE = 14 }; /* output tiles per register tile (AVX-512: 14 x 1 vector) */
#define WG_SCRATCH_MAX ((int64_t)32 << 20) /* bytes per scratch buffer (scratch_fits) */

static const int BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const float G[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
static const int AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

static PrimExpr *divi(LowerCx *L, PrimExpr *a, int64_t b) {
  return lc_bin(L, PB_DIV, a, lc_int(L, b));
}
static PrimExpr *modi(LowerCx *L, PrimExpr *a, int64_t b) {
  return lc_bin(L, PB_MOD, a, lc_int(L, b));
}

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
  PrimExpr *hc =
      lc_call(L, PI_MAX, lc_call(L, PI_MIN, h, lc_int(L, g->H - 1), NULL), lc_int(L, 0), NULL);
  PrimExpr *wc =
      lc_call(L, PI_MAX, lc_call(L, PI_MIN, w, lc_int(L, g->W - 1), NULL), lc_int(L, 0), NULL);
  PrimExpr *xi[5] = {n, cb, hc, wc, ci};
  PrimExpr *in = lc_bin(
      L, PB_AND,
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, h, lc_int(L, 0)), lc_bin(L, PB_LT, h, lc_int(L, g->H))),
      lc_bin(L, PB_AND, lc_bin(L, PB_GE, w, lc_int(L, 0)), lc_bin(L, PB_LT, w, lc_int(L, g->W))));
  return lc_call(L, PI_SELECT, in, lc_at(L, g->x, xi), lc_lit(L, DT_FLOAT32, 0));
}

/* V[p, tile, cb, ci] = (B^T d B)[p]: tiles (n, th) in parallel per block. */
static Buffer *input_transform(LowerCx *L, const Winograd *g, int64_t TH, int64_t TW) {
  int64_t T = g->N * TH * TW;
  PrimExpr *vs[4] = {lc_int(L, 16), lc_int(L, T), lc_int(L, g->CB), lc_int(L, g->cb)};
  Buffer *V = lc_alloc(L, "V", DT_FLOAT32, 4, vs);
  V->no_init = true; /* every element stored below */
  TirVar *q = lc_tvar(L, "q", lc_int(L, g->CB * g->N * TH)), *tw = lc_tvar(L, "tw", lc_int(L, TW)),
         *ci = lc_tvar(L, "ci", lc_int(L, g->cb));
  PrimExpr *cb = divi(L, lc_var(L, q), g->N * TH), *nth = modi(L, lc_var(L, q), g->N * TH);
  PrimExpr *n = divi(L, nth, TH), *th = modi(L, nth, TH);
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *d[4][4], *t[4][4];
  for (int r = 0; r < 4; r++)
    for (int s = 0; s < 4; s++)
      d[r][s] = x_at(L, g, n, cb, lc_plus(L, lc_times(L, th, lc_int(L, 2)), lc_int(L, r - 1)),
                     lc_plus(L, lc_times(L, lc_var(L, tw), lc_int(L, 2)), lc_int(L, s - 1)),
                     lc_var(L, ci));
  for (int xi = 0; xi < 4; xi++)
    for (int s = 0; s < 4; s++) {
      PrimExpr *col[4] = {d[0][s], d[1][s], d[2][s], d[3][s]};
      t[xi][s] = signed_sum(L, BT[xi], col, 4);
    }
  PrimExpr *tile = lc_plus(L, lc_times(L, nth, lc_int(L, TW)), lc_var(L, tw));
  for (int xi = 0; xi < 4; xi++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *vi[4] = {lc_int(L, xi * 4 + nu), tile, cb, lc_var(L, ci)};
      lc_store(L, V, 4, vi, signed_sum(L, BT[nu], t[xi], 4));
    }
  lc_for(L, LOOP_VECTORIZED, ci, lc_int(L, g->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, tw, lc_int(L, TW), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, lc_int(L, g->CB * g->N * TH), lc_close(L));
  return V;
}

/* U[p, cb, ci, ob, l] = (G g G^T)[p] of the weight w[ob, cb, 3, 3, ci, l]. */
static Buffer *weight_transform(LowerCx *L, const Winograd *g) {
  PrimExpr *us[5] = {lc_int(L, 16), lc_int(L, g->CB), lc_int(L, g->cb), lc_int(L, g->OB),
                     lc_int(L, g->ob)};
  Buffer *U = lc_alloc(L, "U", DT_FLOAT32, 5, us);
  U->no_init = true;
  TirVar *q = lc_tvar(L, "q", lc_int(L, g->OB * g->CB)), *ci = lc_tvar(L, "ci", lc_int(L, g->cb)),
         *l = lc_tvar(L, "l", lc_int(L, g->ob));
  PrimExpr *ob = divi(L, lc_var(L, q), g->CB), *cb = modi(L, lc_var(L, q), g->CB);
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *w[3][3], *gw[4][3];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      PrimExpr *wi[6] = {ob, cb, lc_int(L, a), lc_int(L, b), lc_var(L, ci), lc_var(L, l)};
      w[a][b] = lc_at(L, g->w, wi);
    }
  for (int xi = 0; xi < 4; xi++)
    for (int b = 0; b < 3; b++) {
      PrimExpr *s = NULL;
      for (int a = 0; a < 3; a++)
        if (G[xi][a] != 0) {
          PrimExpr *term = lc_times(L, lc_lit(L, DT_FLOAT32, G[xi][a]), w[a][b]);
          s = s ? lc_plus(L, s, term) : term;
        }
      gw[xi][b] = s;
    }
  for (int xi = 0; xi < 4; xi++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *s = NULL;
      for (int b = 0; b < 3; b++)
        if (G[nu][b] != 0) {
          PrimExpr *term = lc_times(L, lc_lit(L, DT_FLOAT32, G[nu][b]), gw[xi][b]);
          s = s ? lc_plus(L, s, term) : term;
        }
      PrimExpr *ui[5] = {lc_int(L, xi * 4 + nu), cb, lc_var(L, ci), ob, lc_var(L, l)};
      lc_store(L, U, 5, ui, s);
    }
  lc_for(L, LOOP_VECTORIZED, l, lc_int(L, g->ob), lc_close(L));
  lc_for(L, LOOP_RANGE, ci, lc_int(L, g->cb), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, lc_int(L, g->OB * g->CB), lc_close(L));
  return U;
}

/* One register tile of M: R tiles from t0 x the lanes of block ob at p. */
static void gemm_tile(LowerCx *L, const Winograd *g, Buffer *V, Buffer *U, Buffer *M, Buffer *acc,
                      int R, PrimExpr *p, PrimExpr *ob, PrimExpr *t0) {
  PrimExpr *lanes = lc_int(L, g->ob);
  TirVar *t = lc_tvar(L, "t", lc_int(L, R)), *l = lc_tvar(L, "l", lanes);
  PrimExpr *ai[2] = {lc_var(L, t), lc_var(L, l)};
  lc_open(L), lc_open(L);
  lc_store(L, acc, 2, ai, lc_lit(L, DT_FLOAT32, 0));
  lc_for(L, LOOP_VECTORIZED, l, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t, lc_int(L, R), lc_close(L));
  TirVar *cb = lc_tvar(L, "cb", lc_int(L, g->CB)), *ci = lc_tvar(L, "ci", lc_int(L, g->cb)),
         *t2 = lc_tvar(L, "t", lc_int(L, R)), *l2 = lc_tvar(L, "l", lanes);
  for (int i = 0; i < 4; i++) lc_open(L);
  PrimExpr *a2[2] = {lc_var(L, t2), lc_var(L, l2)};
  PrimExpr *vi[4] = {p, lc_plus(L, t0, lc_var(L, t2)), lc_var(L, cb), lc_var(L, ci)};
  PrimExpr *ui[5] = {p, lc_var(L, cb), lc_var(L, ci), ob, lc_var(L, l2)};
  PrimExpr *prod = lc_times(L, lc_load(L, V, 4, vi), lc_load(L, U, 5, ui));
  lc_store(L, acc, 2, a2, lc_plus(L, lc_load(L, acc, 2, a2), prod));
  lc_for(L, LOOP_VECTORIZED, l2, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t2, lc_int(L, R), lc_close(L));
  lc_for(L, LOOP_RANGE, ci, lc_int(L, g->cb), lc_close(L));
  lc_for(L, LOOP_RANGE, cb, lc_int(L, g->CB), lc_close(L));
  TirVar *t3 = lc_tvar(L, "t", lc_int(L, R)), *l3 = lc_tvar(L, "l", lanes);
  PrimExpr *a3[2] = {lc_var(L, t3), lc_var(L, l3)};
  PrimExpr *mi[4] = {p, lc_plus(L, t0, lc_var(L, t3)), ob, lc_var(L, l3)};
  lc_open(L), lc_open(L);
  lc_store(L, M, 4, mi, lc_load(L, acc, 2, a3));
  lc_for(L, LOOP_VECTORIZED, l3, lanes, lc_close(L));
  lc_for(L, LOOP_UNROLLED, t3, lc_int(L, R), lc_close(L));
}

/* M[p, tile, ob, l] = sum over channels of V[p, tile, c] U[p, c, ob, l]:
 * one parallel loop over (p, ob, group of R tiles), a shorter last tile. */
static Buffer *products(LowerCx *L, const Winograd *g, Buffer *V, Buffer *U, int64_t T) {
  PrimExpr *ms[4] = {lc_int(L, 16), lc_int(L, T), lc_int(L, g->OB), lc_int(L, g->ob)};
  Buffer *M = lc_alloc(L, "M", DT_FLOAT32, 4, ms);
  M->no_init = true;
  int64_t full = T / WG_TILE, rest = T % WG_TILE, groups = full + (rest != 0);
  TirVar *q = lc_tvar(L, "q", lc_int(L, 16 * g->OB * groups));
  PrimExpr *pob = divi(L, lc_var(L, q), groups), *grp = modi(L, lc_var(L, q), groups);
  PrimExpr *p = divi(L, pob, g->OB), *ob = modi(L, pob, g->OB);
  lc_open(L);
  PrimExpr *as[2] = {lc_int(L, WG_TILE), lc_int(L, g->ob)};
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT32, 2, as);
  acc->no_init = true; /* zeroed by each tile */
  PrimExpr *t0 = lc_times(L, grp, lc_int(L, WG_TILE));
  if (!rest) {
    gemm_tile(L, g, V, U, M, acc, WG_TILE, p, ob, t0);
  } else {
    lc_open(L);
    gemm_tile(L, g, V, U, M, acc, WG_TILE, p, ob, t0);
    Stmt *whole = lc_close(L);
    lc_open(L);
    gemm_tile(L, g, V, U, M, acc, (int)rest, p, ob, t0);
    lc_if_else(L, lc_bin(L, PB_LT, grp, lc_int(L, full)), whole, lc_close(L));
  }
  lc_for(L, LOOP_PARALLEL, q, lc_int(L, 16 * g->OB * groups), lc_close(L));
  return M;
}

/* out[n, ob, 2th + i, 2tw + j, l] = (A^T M A)[i, j]. */
static void output_transform(LowerCx *L, const Winograd *g, Buffer *M, Buffer *out, int64_t TH,
                             int64_t TW) {
  TirVar *q = lc_tvar(L, "q", lc_int(L, g->OB * g->N * TH)), *tw = lc_tvar(L, "tw", lc_int(L, TW)),
         *l = lc_tvar(L, "l", lc_int(L, g->ob));
  PrimExpr *ob = divi(L, lc_var(L, q), g->N * TH), *nth = modi(L, lc_var(L, q), g->N * TH);
  PrimExpr *n = divi(L, nth, TH), *th = modi(L, nth, TH);
  PrimExpr *tile = lc_plus(L, lc_times(L, nth, lc_int(L, TW)), lc_var(L, tw));
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *m[4][4], *r[2][4];
  for (int p = 0; p < 16; p++) {
    PrimExpr *mi[4] = {lc_int(L, p), tile, ob, lc_var(L, l)};
    m[p / 4][p % 4] = lc_load(L, M, 4, mi);
  }
  for (int i = 0; i < 2; i++)
    for (int nu = 0; nu < 4; nu++) {
      PrimExpr *col[4] = {m[0][nu], m[1][nu], m[2][nu], m[3][nu]};
      r[i][nu] = signed_sum(L, AT[i], col, 4);
    }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      PrimExpr *oi[5] = {n, ob, lc_plus(L, lc_times(L, th, lc_int(L, 2)), lc_int(L, i)),
                         lc_plus(L, lc_times(L, lc_var(L, tw), lc_int(L, 2)), lc_int(L, j)),
                         lc_var(L, l)};
      lc_store(L, out, 5, oi, signed_sum(L, AT[j], r[i], 4));
    }
  lc_for(L, LOOP_VECTORIZED, l, lc_int(L, g->ob), lc_close(L));
  lc_for(L, LOOP_RANGE, tw, lc_int(L, TW), lc_close(L));
  lc_for(L, LOOP_PARALLEL, q, lc_int(L, g->OB * g->N * TH), lc_close(L));
}

/* Whether the scratch buffers V[16, tiles, C] and M[16, tiles, O] stay
 * under WG_SCRATCH_MAX bytes each.  Larger ones (VGG's 224x224 layers: 51
 * MB) are allocated per call above glibc's largest mmap threshold (32 MiB),
 * so every call maps them afresh and page-faults through them: 10-50x
 * slower than the direct schedule there. */
static bool scratch_fits(const Winograd *g, int64_t tiles) {
  int64_t per_chan = 16 * g->N * tiles * dtype_bytes(DT_FLOAT32);
  int64_t chans = g->CB * g->cb > g->OB * g->ob ? g->CB * g->cb : g->OB * g->ob;
  return chans <= WG_SCRATCH_MAX / per_chan;
}

bool lc_winograd_applies(const Winograd *g) {
  int64_t tiles = (g->H / 2) * (g->W / 2);
  return g->dt == DT_FLOAT32 && g->H % 2 == 0 && g->W % 2 == 0 && g->H >= 4 && g->W >= 4 &&
         tiles >= g->CB * g->cb && g->cb * dtype_bytes(DT_FLOAT32) <= 64 &&
         g->ob * dtype_bytes(DT_FLOAT32) <= target_vector_bytes() && scratch_fits(g, tiles);
}

void lc_conv_winograd(LowerCx *L, const Winograd *g, Buffer *out) {
  int64_t TH = g->H / 2, TW = g->W / 2;
  Buffer *V = input_transform(L, g, TH, TW);
  Buffer *U = weight_transform(L, g);
  Buffer *M = products(L, g, V, U, g->N * TH * TW);
  output_transform(L, g, M, out, TH, TW);
}
