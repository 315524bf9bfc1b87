/* compute_qnn_dot.c — qnn.dense as 4-way uint8 x int8 dot products
 * (TIR's dot_u8i8x4: vpdpbusd on AVX512-VNNI, exact widened code
 * elsewhere), called by compute_qnn.c's rule for the cases it takes:
 * 2-D data of uint8 or int8, a (N, K) int8 weight, known shapes, a
 * scalar data zero point, a scalar or per-channel weight zero point, an
 * int32 result, on a host with AVX512-VNNI (target_has_vnni: without it
 * the exact emulation of the dot products is slower than the widened
 * int32 product, which the other cases keep too).
 *
 *   sum_k (x - zx)(w - zw) = sum_k u w - zw sum_k x - (zx + 128 s) sum_k w
 *                            + K zx zw
 * with u = x + 128 s (s = 1 for int8 data: u is x as uint8 after the
 * +128 shift; 0 for uint8), so the product of the bytes needs neither
 * zero point.  Per call: the data's rows packed four bytes to an int32
 * word AP[i, k4] (K padded to a multiple of four with zero bytes) with
 * their sums RS[i]; per NR-column panel (the parallel tasks) the weight
 * packed WP[jo, k4, ji] (byte b of a word: w[j, 4 k4 + b]; columns past N
 * zero) with the column terms CC[jo, ji] = (zx + 128 s) sum_k w - K zx zw;
 * then MR x NR register tiles accumulate dot_u8i8x4 over k4 and store
 * acc - zw RS[i] - CC[j].
 *
 * Exactness: every step is int32 arithmetic, wrapping; the identity holds
 * modulo 2^32, and the reference kernel's int64 sum narrowed to int32 is
 * the same residue, so results are bit for bit the kernel's for every
 * size (no bound to check).  An int64 out_dtype would need the sum
 * unwrapped: that case is refused here and takes the widened product. */
#include "lower/compute/compute_qnn_dot.h"

#include "lower/compute/compute.h"

enum { NR = 32, MR = 6, XZ = 2, WZ = 3 };

typedef struct Dot {
  const LTensor *x, *w, *zx, *zw;
  int64_t M, N, K, K4, NB, MP;
  bool signed_x;
  Buffer *ap, *rs, *wp, *cc, *out;
} Dot;

static PrimExpr *i32(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_INT32, e); }
static PrimExpr *cst(LowerCx *L, int64_t v) { return lc_int(L, v); }

bool qnn_dense_dot_ok(const Expr *call, LTensor **in, int nin) {
  if (!target_has_vnni()) return false;
  if (nin != 6 || in[0]->ndim != 2 || in[1]->ndim != 2 || in[1]->dtype != DT_INT8) return false;
  if (in[0]->dtype != DT_UINT8 && in[0]->dtype != DT_INT8) return false;
  if (in[XZ]->dtype != DT_INT32 || in[XZ]->ndim != 0) return false;
  if (in[WZ]->dtype != DT_INT32 || in[WZ]->ndim > 1) return false;
  for (int d = 0; d < 2; d++)
    if (lc_const(in[0]->shape[d]) < 1 || lc_const(in[1]->shape[d]) < 1) return false;
  const Type *t = lc_result_type(call);
  return t && t->kind == TY_TENSOR && t->u.tensor.dtype == DT_INT32 &&
         lc_const(in[0]->shape[1]) == lc_const(in[1]->shape[1]);
}

/* The weight zero point of column j (clamped into range by the caller). */
static PrimExpr *zw_at(LowerCx *L, const Dot *d, PrimExpr *j) {
  return d->zw->ndim ? lc_at(L, d->zw, &j) : lc_at(L, d->zw, NULL);
}

PrimExpr *qnn_dot_word(LowerCx *L, PrimExpr *bytes[4]) {
  PrimExpr *w = bytes[0];
  for (int b = 1; b < 4; b++)
    w = lc_call(L, PI_BITOR, w, lc_call(L, PI_SHL, bytes[b], cst(L, 8 * b), NULL), NULL);
  return w;
}

/* Byte b of word k4 of data row i (as uint8, 0 past K). */
static PrimExpr *x_byte(LowerCx *L, const Dot *d, PrimExpr *i, PrimExpr *k4, int b) {
  PrimExpr *k = lc_plus(L, lc_times(L, k4, cst(L, 4)), cst(L, b));
  PrimExpr *idx[2] = {i, lc_call(L, PI_MIN, k, cst(L, d->K - 1), NULL)};
  PrimExpr *v = i32(L, lc_at(L, d->x, idx));
  if (d->signed_x) v = lc_plus(L, v, cst(L, 128));
  return lc_call(L, PI_SELECT, lc_bin(L, PB_LT, k, cst(L, d->K)), v, cst(L, 0));
}

/* Byte b of word k4 of weight row j (int8's bits, 0 past K). */
static PrimExpr *w_byte(LowerCx *L, const Dot *d, PrimExpr *j, PrimExpr *k4, int b) {
  PrimExpr *k = lc_plus(L, lc_times(L, k4, cst(L, 4)), cst(L, b));
  PrimExpr *idx[2] = {j, lc_call(L, PI_MIN, k, cst(L, d->K - 1), NULL)};
  PrimExpr *v = lc_call(L, PI_BITAND, i32(L, lc_at(L, d->w, idx)), cst(L, 255), NULL);
  return lc_call(L, PI_SELECT, lc_bin(L, PB_LT, k, cst(L, d->K)), v, cst(L, 0));
}

/* AP[i, k4] and RS[i] for every padded row i (rows past M repeat M - 1). */
static void pack_rows(LowerCx *L, const Dot *d) {
  TirVar *i = lc_tvar(L, "i", cst(L, d->MP)), *k4 = lc_tvar(L, "k", cst(L, d->K4)),
         *k = lc_tvar(L, "k", cst(L, d->K));
  PrimExpr *ic = lc_call(L, PI_MIN, lc_var(L, i), cst(L, d->M - 1), NULL), *iv = lc_var(L, i);
  lc_open(L); /* i */
  lc_open(L); /* k4 */
  PrimExpr *bytes[4], *ai[2] = {iv, lc_var(L, k4)};
  for (int b = 0; b < 4; b++) bytes[b] = x_byte(L, d, ic, lc_var(L, k4), b);
  lc_store(L, d->ap, 2, ai, qnn_dot_word(L, bytes));
  lc_for(L, LOOP_RANGE, k4, cst(L, d->K4), lc_close(L));
  lc_store(L, d->rs, 1, &iv, cst(L, 0));
  lc_open(L); /* k */
  PrimExpr *xi[2] = {ic, lc_var(L, k)};
  lc_store(L, d->rs, 1, &iv, lc_plus(L, lc_load(L, d->rs, 1, &iv), i32(L, lc_at(L, d->x, xi))));
  lc_for(L, LOOP_RANGE, k, cst(L, d->K), lc_close(L));
  lc_for(L, LOOP_PARALLEL, i, cst(L, d->MP), lc_close(L));
}

/* CC[jo, ji] = (zx + 128 s) sum_k w[j, k] - K zx zw[j] (j clamped). */
static void column_terms(LowerCx *L, const Dot *d, PrimExpr *jo, PrimExpr *j) {
  TirVar *k = lc_tvar(L, "k", cst(L, d->K));
  PrimExpr *ji = lc_minus(L, j, lc_times(L, jo, cst(L, NR)));
  PrimExpr *ci[2] = {jo, ji}, *jc = lc_call(L, PI_MIN, j, cst(L, d->N - 1), NULL);
  lc_store(L, d->cc, 2, ci, cst(L, 0));
  lc_open(L);
  PrimExpr *wi[2] = {jc, lc_var(L, k)};
  lc_store(L, d->cc, 2, ci, lc_plus(L, lc_load(L, d->cc, 2, ci), i32(L, lc_at(L, d->w, wi))));
  lc_for(L, LOOP_RANGE, k, cst(L, d->K), lc_close(L));
  PrimExpr *zx = lc_at(L, d->zx, NULL);
  PrimExpr *sx = d->signed_x ? lc_plus(L, zx, cst(L, 128)) : zx;
  PrimExpr *kz = lc_times(L, lc_times(L, cst(L, d->K), zx), zw_at(L, d, jc));
  PrimExpr *v = lc_minus(L, lc_times(L, lc_load(L, d->cc, 2, ci), sx), kz);
  lc_store(L, d->cc, 2, ci, lc_call(L, PI_SELECT, lc_bin(L, PB_LT, j, cst(L, d->N)), v, cst(L, 0)));
}

/* Panel jo of the weight: WP[jo, k4, ji] and its column terms. */
static void pack_panel(LowerCx *L, const Dot *d, PrimExpr *jo) {
  TirVar *ji = lc_tvar(L, "ji", cst(L, NR)), *k4 = lc_tvar(L, "k", cst(L, d->K4)),
         *jc = lc_tvar(L, "ji", cst(L, NR));
  PrimExpr *j = lc_plus(L, lc_times(L, jo, cst(L, NR)), lc_var(L, ji));
  PrimExpr *jin = lc_call(L, PI_MIN, j, cst(L, d->N - 1), NULL);
  lc_open(L); /* k4 */
  lc_open(L); /* ji */
  PrimExpr *bytes[4], *wi[3] = {jo, lc_var(L, k4), lc_var(L, ji)};
  for (int b = 0; b < 4; b++) bytes[b] = w_byte(L, d, jin, lc_var(L, k4), b);
  PrimExpr *in = lc_bin(L, PB_LT, j, cst(L, d->N));
  lc_store(L, d->wp, 3, wi, lc_call(L, PI_SELECT, in, qnn_dot_word(L, bytes), cst(L, 0)));
  lc_for(L, LOOP_RANGE, ji, cst(L, NR), lc_close(L));
  lc_for(L, LOOP_RANGE, k4, cst(L, d->K4), lc_close(L));
  lc_open(L);
  column_terms(L, d, jo, lc_plus(L, lc_times(L, jo, cst(L, NR)), lc_var(L, jc)));
  lc_for(L, LOOP_RANGE, jc, cst(L, NR), lc_close(L));
}

void qnn_dot_zero_acc(LowerCx *L, Buffer *acc, const char *rname, int rows, const char *lname,
                      int lanes) {
  TirVar *r = lc_tvar(L, rname, cst(L, rows)), *l = lc_tvar(L, lname, cst(L, lanes));
  PrimExpr *at[2] = {lc_var(L, r), lc_var(L, l)};
  lc_open(L);
  lc_open(L);
  lc_store(L, acc, 2, at, cst(L, 0));
  lc_for(L, LOOP_VECTORIZED, l, cst(L, lanes), lc_close(L));
  lc_for(L, LOOP_UNROLLED, r, cst(L, rows), lc_close(L));
}

/* for k4: acc[ii, ji] = dot_u8i8x4(acc[ii, ji], AP[i0 + ii, k4], WP[jo, k4, ji]) */
static void accumulate(LowerCx *L, const Dot *d, Buffer *acc, PrimExpr *i0, PrimExpr *jo) {
  TirVar *k4 = lc_tvar(L, "k", cst(L, d->K4)), *ii = lc_tvar(L, "ii", cst(L, MR)),
         *ji = lc_tvar(L, "ji", cst(L, NR));
  PrimExpr *a[2] = {lc_var(L, ii), lc_var(L, ji)};
  PrimExpr *ai[2] = {lc_plus(L, i0, lc_var(L, ii)), lc_var(L, k4)};
  PrimExpr *wi[3] = {jo, lc_var(L, k4), lc_var(L, ji)};
  for (int n = 0; n < 3; n++) lc_open(L);
  PrimExpr *v = lc_call(L, PI_DOT4, lc_load(L, acc, 2, a), lc_load(L, d->ap, 2, ai),
                        lc_load(L, d->wp, 3, wi));
  lc_store(L, acc, 2, a, v);
  lc_for(L, LOOP_VECTORIZED, ji, cst(L, NR), lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii, cst(L, MR), lc_close(L));
  lc_for(L, LOOP_RANGE, k4, cst(L, d->K4), lc_close(L));
}

/* out[i, j] = acc[ii, ji] - zw[j] RS[i] - CC[jo, ji] for the tile's rows
 * below M and columns below N. */
static void store_tile(LowerCx *L, const Dot *d, Buffer *acc, PrimExpr *i0, PrimExpr *jo) {
  TirVar *ii = lc_tvar(L, "ii", cst(L, MR)), *ji = lc_tvar(L, "ji", cst(L, NR));
  PrimExpr *i = lc_plus(L, i0, lc_var(L, ii));
  PrimExpr *j = lc_plus(L, lc_times(L, jo, cst(L, NR)), lc_var(L, ji));
  bool whole = d->N % NR == 0;
  PrimExpr *width = whole ? cst(L, NR)
                          : lc_call(L, PI_MIN, cst(L, NR),
                                    lc_minus(L, cst(L, d->N), lc_times(L, jo, cst(L, NR))), NULL);
  lc_open(L); /* ii */
  lc_open(L); /* if */
  lc_open(L); /* ji */
  PrimExpr *a[2] = {lc_var(L, ii), lc_var(L, ji)}, *ci[2] = {jo, lc_var(L, ji)}, *oi[2] = {i, j};
  PrimExpr *row = lc_times(L, zw_at(L, d, j), lc_load(L, d->rs, 1, &i));
  PrimExpr *v = lc_minus(L, lc_minus(L, lc_load(L, acc, 2, a), row), lc_load(L, d->cc, 2, ci));
  lc_store(L, d->out, 2, oi, v);
  lc_for(L, LOOP_VECTORIZED, ji, width, lc_close(L));
  lc_if(L, lc_bin(L, PB_LT, i, cst(L, d->M)), lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii, cst(L, MR), lc_close(L));
}

/* Panels in parallel: each packs its panel, then runs every row block. */
static void panels(LowerCx *L, const Dot *d) {
  TirVar *jo = lc_tvar(L, "jo", cst(L, d->NB)), *io = lc_tvar(L, "io", cst(L, d->MP / MR));
  PrimExpr *tshape[2] = {cst(L, MR), cst(L, NR)};
  lc_open(L); /* jo */
  pack_panel(L, d, lc_var(L, jo));
  lc_open(L); /* io */
  Buffer *acc = lc_alloc(L, "acc", DT_INT32, 2, tshape);
  PrimExpr *i0 = lc_times(L, lc_var(L, io), cst(L, MR));
  qnn_dot_zero_acc(L, acc, "ii", MR, "ji", NR);
  accumulate(L, d, acc, i0, lc_var(L, jo));
  store_tile(L, d, acc, i0, lc_var(L, jo));
  lc_for(L, LOOP_RANGE, io, cst(L, d->MP / MR), lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, cst(L, d->NB), lc_close(L));
}

/* The packed buffers (AP, RS, WP, CC) and the result. */
static bool alloc_all(LowerCx *L, const Expr *call, Dot *d) {
  PrimExpr *aps[2] = {cst(L, d->MP), cst(L, d->K4)}, *rss = cst(L, d->MP);
  PrimExpr *wps[3] = {cst(L, d->NB), cst(L, d->K4), cst(L, NR)},
           *ccs[2] = {cst(L, d->NB), cst(L, NR)};
  PrimExpr *os[2] = {cst(L, d->M), cst(L, d->N)};
  d->out = lc_result_buffer(L, call, DT_INT32, 2, os);
  d->ap = lc_alloc(L, "AP", DT_INT32, 2, aps), d->rs = lc_alloc(L, "RS", DT_INT32, 1, &rss);
  d->wp = lc_alloc(L, "WP", DT_INT32, 3, wps), d->cc = lc_alloc(L, "CC", DT_INT32, 2, ccs);
  return d->out && d->ap && d->rs && d->wp && d->cc;
}

LTensor *qnn_dense_dot(LowerCx *L, const Expr *call, LTensor **in) {
  Dot d = {.x = in[0], .w = in[1], .zx = in[XZ], .zw = in[WZ]};
  d.M = lc_const(in[0]->shape[0]), d.K = lc_const(in[0]->shape[1]), d.N = lc_const(in[1]->shape[0]);
  d.K4 = (d.K + 3) / 4, d.NB = (d.N + NR - 1) / NR, d.MP = (d.M + MR - 1) / MR * MR;
  d.signed_x = in[0]->dtype == DT_INT8;
  if (!alloc_all(L, call, &d)) return lc_fail(L, "qnn.dense: no buffers for the packed operands");
  lc_mark_total(L, d.out);
  pack_rows(L, &d);
  panels(L, &d);
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, d.out);
}
