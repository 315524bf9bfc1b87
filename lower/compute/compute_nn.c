/* compute_nn.c — compute rules (lower/compute/compute.h) of nn.dense, nn.matmul,
 * nn.batch_matmul, nn.softmax and nn.log_softmax (all materialized).
 *
 * Products: out[b, i, j] = sum_k A(b, i, k) * B(b, j, k), whatever the
 * operands' layouts (transposes are folded into the accessors).  B is
 * packed once per call into WP[b, jo, k, ji] (NR-wide column panels, NR
 * two vector registers of the accumulator's dtype on the host,
 * contiguous along ji, zero padded, converted to the accumulator's dtype),
 * then a register tile of MR rows x NR columns accumulates over k (ii
 * unrolled, ji vectorized), row blocks parallel; leftover rows (all of them
 * when M < MR, e.g. batch 1) use a 1 x NR tile with the column panels
 * parallel.  Accumulators are in the operands' dtype (as in TVM and a
 * BLAS), and few rows (M <= 4) use dot products split into LANES partial
 * sums: results equal the reference kernels' (which add in float64) within
 * rounding.  With fast math off (EngineOptions.fast_math, RLY_FAST_MATH=0) the accumulators are
 * float64 and k is summed in order, exactly as the reference kernels do, so float32 results agree
 * bit for bit, at about half the speed; a column count known only at run time is lowered in the
 * fast mode only.  float16 products always take the float64 accumulators (bit for bit with the
 * kernels; their own dtype would round each step); bfloat16 operands into float32 widen
 * exactly and take float32's schedules but the few-rows dot products.  Integer operands of any
 * dtypes (int8 and uint8 into int32, the quantized pattern) with an integer out_dtype accumulate in
 * the result's dtype with the same schedules (the exact ones for few rows), wrapping as the
 * reference kernels' 64-bit sums narrowed to out_dtype do, so they agree exactly in any order
 * (lc_product_acc).
 *
 * Softmax works per line along the axis in float64, in the reference's
 * order (max, then the sum of exp(x - max), then exp(x - max) / sum, or
 * (x - max) - log(sum)), so it agrees with the reference exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/fast_math.h"
#include "ops/nn_int.h"

/* PANELS_PARALLEL: column panels enough to split among the threads (the
 * parallel loop of the blocked product is over panels from this many on). */
/* ABLK_MAX_BYTES: the largest copy of a block's rows of A (see
 * copy_block); the JIT keeps allocations up to this size on the stack, a
 * larger one on the heap would be slower than reading A in place. */
/* MR: the register tile's rows; a product of few known rows (at most
 * EXACT_ROWS_MAX) takes a height that wastes fewer rows (tile_rows: an
 * LSTM step's 16 rows are two tiles of 8, not three of 6 with two rows
 * thrown away). */
enum {
  LANES = 16,
  MR = 6,
  EXACT_ROWS_MAX = 64,
  PANEL_TILE_ROWS = 3,
  FEW_ROWS = 4,
  PANELS_PARALLEL = 4,
  ABLK_MAX_BYTES = 32768
};

/* The host's vector register width in bytes (AVX-512: 64, AVX2: 32). */
static int vector_bytes(void) { return target_vector_bytes(); }

typedef struct Mm {
  const LTensor *a, *b;
  bool ta, tb; /* a is (K, M); b is (N, K) (dense: always) */
  bool batched;
  DType dt, acc;           /* the result's dtype (the operands' when float); the accumulator's */
  int nr;                  /* panel width: two vector registers of acc */
  int mr;                  /* register tile rows (tile_rows) */
  PrimExpr *M, *N, *K, *B; /* B: batch count (1 when not batched) */
  bool a_bcast, b_bcast;   /* batch dim of size 1 broadcast */
  bool packed;             /* b is already in panels (NB, K, nr): nn.contrib_dense_pack */
  int lead;                /* an N-d a (matmul, dense): its leading dims are the rows */
  PrimExpr *lead_dims[TENSOR_MAX_RANK];
} Mm;

/* Row i of the product as the indices of the leading dims (last fastest). */
static int lead_index(LowerCx *L, const Mm *m, PrimExpr *i, PrimExpr **idx) {
  for (int d = m->lead - 1; d >= 0; d--) {
    idx[d] = d ? lc_bin(L, PB_MOD, i, m->lead_dims[d]) : i;
    if (d) i = lc_bin(L, PB_DIV, i, m->lead_dims[d]);
  }
  return m->lead;
}

static PrimExpr *a_at(LowerCx *L, const Mm *m, PrimExpr *b, PrimExpr *i, PrimExpr *k) {
  PrimExpr *idx[TENSOR_MAX_RANK];
  int n = 0;
  if (m->lead) {
    n = lead_index(L, m, i, idx);
    idx[n++] = k;
    return lc_at(L, m->a, idx);
  }
  if (m->batched) idx[n++] = m->a_bcast ? lc_int(L, 0) : b;
  idx[n++] = m->ta ? k : i;
  idx[n++] = m->ta ? i : k;
  return lc_at(L, m->a, idx);
}

static PrimExpr *b_at(LowerCx *L, const Mm *m, PrimExpr *b, PrimExpr *j, PrimExpr *k) {
  PrimExpr *idx[3];
  int n = 0;
  if (m->packed) {
    PrimExpr *nr = lc_int(L, m->nr);
    idx[0] = lc_bin(L, PB_DIV, j, nr), idx[1] = k, idx[2] = lc_bin(L, PB_MOD, j, nr);
    return lc_at(L, m->b, idx);
  }
  if (m->batched) idx[n++] = m->b_bcast ? lc_int(L, 0) : b;
  idx[n++] = m->tb ? j : k;
  idx[n++] = m->tb ? k : j;
  return lc_at(L, m->b, idx);
}

static void store_out(LowerCx *L, const Mm *m, Buffer *out, PrimExpr *b, PrimExpr *i, PrimExpr *j,
                      PrimExpr *v) {
  PrimExpr *idx[TENSOR_MAX_RANK];
  int n = 0;
  if (m->lead) {
    n = lead_index(L, m, i, idx);
    idx[n++] = j;
    lc_store(L, out, n, idx, v);
    return;
  }
  if (m->batched) idx[n++] = b;
  idx[n++] = i, idx[n++] = j;
  lc_store(L, out, n, idx, v);
}

/* Closes the batch loop: a loop, or (one batch) the body with b = 0. */
static void batch_loop(LowerCx *L, TirVar *b, PrimExpr *n) {
  Stmt *body = lc_close(L);
  if (lc_const(n) != 1) {
    lc_for(L, LOOP_RANGE, b, n, body);
    return;
  }
  Stmt *s = ARENA_NEW(lc_arena(L), Stmt);
  memset(s, 0, sizeof *s);
  s->kind = ST_LET;
  s->u.let.var = b, s->u.let.value = lc_int(L, 0);
  lc_emit(L, s);
  for (int i = 0; i < body->u.seq.n; i++) lc_emit(L, body->u.seq.items[i]);
}

/* ───────────────────────── few rows: dot products ───────────────────────── */

static PrimExpr *lanes_sum(LowerCx *L, Buffer *acc) {
  PrimExpr *p[LANES];
  for (int i = 0; i < LANES; i++) {
    PrimExpr *ix = lc_int(L, i);
    p[i] = lc_load(L, acc, 1, &ix);
  }
  for (int w = 1; w < LANES; w *= 2)
    for (int i = 0; i + w < LANES; i += 2 * w) p[i] = lc_plus(L, p[i], p[i + w]);
  return p[0];
}

/* acc[lane] += A(b, i, k) * B(b, j, k) */
static void dot_step(LowerCx *L, const Mm *m, Buffer *acc, PrimExpr *lane, PrimExpr *b, PrimExpr *i,
                     PrimExpr *j, PrimExpr *k) {
  PrimExpr *prod = lc_times(L, a_at(L, m, b, i, k), b_at(L, m, b, j, k));
  lc_store(L, acc, 1, &lane, lc_plus(L, lc_load(L, acc, 1, &lane), prod));
}

static void dot_body(LowerCx *L, const Mm *m, Buffer *out, PrimExpr *b, PrimExpr *i, PrimExpr *j) {
  PrimExpr *w = lc_int(L, LANES);
  Buffer *acc = lc_alloc(L, "acc", m->dt, 1, &w);
  PrimExpr *full = lc_bin(L, PB_DIV, m->K, w), *done = lc_times(L, full, w);
  TirVar *ko = lc_tvar(L, "k", full), *l = lc_tvar(L, "l", w), *t = lc_tvar(L, "k", full);
  lc_open(L);
  lc_open(L);
  dot_step(L, m, acc, lc_var(L, l), b, i, j,
           lc_plus(L, lc_times(L, lc_var(L, ko), w), lc_var(L, l)));
  lc_for(L, LOOP_VECTORIZED, l, w, lc_close(L));
  lc_for(L, LOOP_RANGE, ko, full, lc_close(L));
  lc_open(L);
  dot_step(L, m, acc, lc_int(L, 0), b, i, j, lc_plus(L, done, lc_var(L, t)));
  lc_for(L, LOOP_RANGE, t, lc_bin(L, PB_SUB, m->K, done), lc_close(L));
  store_out(L, m, out, b, i, j, lanes_sum(L, acc));
}

static void few_rows(LowerCx *L, const Mm *m, Buffer *out) {
  TirVar *bv = lc_tvar(L, "b", m->B), *jv = lc_tvar(L, "j", m->N), *iv = lc_tvar(L, "i", m->M);
  lc_open(L);
  lc_open(L);
  lc_open(L);
  dot_body(L, m, out, lc_var(L, bv), lc_var(L, iv), lc_var(L, jv));
  lc_for(L, LOOP_RANGE, iv, m->M, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jv, m->N, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* Few rows, exact: each output row in NR-wide column panels (parallel),
 * k in order, the panel's columns in vector lanes (strided loads of B when
 * it is (N, K), e.g. dense's weights: no packing, which would cost more
 * than the product for one row). */
static void few_rows_exact(LowerCx *L, const Mm *m, Buffer *out) {
  int NR = m->nr;
  PrimExpr *nr = lc_int(L, NR);
  PrimExpr *nb = lc_const(m->N) >= 0 ? lc_int(L, (lc_const(m->N) + NR - 1) / NR)
                                     : lc_bin(L, PB_DIV, lc_plus(L, m->N, lc_int(L, NR - 1)), nr);
  TirVar *bv = lc_tvar(L, "b", m->B), *jo = lc_tvar(L, "jo", nb), *iv = lc_tvar(L, "i", m->M),
         *k = lc_tvar(L, "k", m->K), *ji = lc_tvar(L, "ji", nr), *js = lc_tvar(L, "ji", nr);
  bool whole = lc_const(m->N) >= 0 && lc_const(m->N) % NR == 0;
  PrimExpr *width =
      whole ? nr
            : lc_call(L, PI_MIN, nr, lc_bin(L, PB_SUB, m->N, lc_times(L, lc_var(L, jo), nr)), NULL);
  lc_open(L); /* batch */
  lc_open(L); /* jo */
  lc_open(L); /* i */
  Buffer *acc = lc_alloc(L, "acc", m->acc, 1, &nr);
  PrimExpr *j = lc_plus(L, lc_times(L, lc_var(L, jo), nr), lc_var(L, ji)), *lane = lc_var(L, ji);
  lc_open(L);
  lc_open(L);
  PrimExpr *wi[3] = {lc_var(L, jo), lc_var(L, k),
                     lc_var(L, ji)}; /* a prepacked weight: its panel */
  PrimExpr *bv_at = m->packed ? lc_at(L, m->b, wi) : b_at(L, m, lc_var(L, bv), j, lc_var(L, k));
  PrimExpr *prod =
      lc_times(L, lc_cast(L, m->acc, a_at(L, m, lc_var(L, bv), lc_var(L, iv), lc_var(L, k))),
               lc_cast(L, m->acc, bv_at));
  lc_store(L, acc, 1, &lane, lc_plus(L, lc_load(L, acc, 1, &lane), prod));
  lc_for(L, LOOP_VECTORIZED, ji, width, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
  lc_open(L);
  PrimExpr *ls = lc_var(L, js);
  store_out(L, m, out, lc_var(L, bv), lc_var(L, iv), lc_plus(L, lc_times(L, lc_var(L, jo), nr), ls),
            lc_load(L, acc, 1, &ls));
  lc_for(L, LOOP_VECTORIZED, js, width, lc_close(L));
  lc_for(L, LOOP_RANGE, iv, m->M, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, nb, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* Few rows of a prepacked weight, fast math: each row against each panel
 * (panels in parallel) with KU independent accumulator vectors over
 * interleaved k (a chain of K dependent multiply-adds would wait on each
 * one's latency), summed at the end. */
enum { KU = 4 };
static void few_rows_packed(LowerCx *L, const Mm *m, Buffer *out) {
  PrimExpr *nr = lc_int(L, m->nr), *ku = lc_int(L, KU);
  int64_t K = lc_const(m->K), N = lc_const(m->N), nbc = (N + m->nr - 1) / m->nr;
  TirVar *jo = lc_tvar(L, "jo", lc_int(L, nbc)), *iv = lc_tvar(L, "i", m->M),
         *ko = lc_tvar(L, "k", lc_int(L, K / KU)), *u = lc_tvar(L, "u", ku),
         *ji = lc_tvar(L, "ji", nr), *kr = lc_tvar(L, "k", lc_int(L, KU)),
         *js = lc_tvar(L, "ji", nr), *z = lc_tvar(L, "u", ku), *jz = lc_tvar(L, "ji", nr);
  PrimExpr *width =
      N % m->nr == 0
          ? nr
          : lc_call(L, PI_MIN, nr, lc_bin(L, PB_SUB, m->N, lc_times(L, lc_var(L, jo), nr)), NULL);
  PrimExpr *ashape[2] = {ku, nr};
  lc_open(L); /* jo */
  lc_open(L); /* i */
  Buffer *acc = lc_alloc(L, "acc", m->acc, 2, ashape);
  PrimExpr *zi[2] = {lc_var(L, z), lc_var(L, jz)};
  for (int i = 0; i < 2; i++) lc_open(L);
  lc_store(L, acc, 2, zi, lc_lit(L, m->acc, 0));
  lc_for(L, LOOP_VECTORIZED, jz, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, z, ku, lc_close(L));
  /* acc[u, ji] += A(i, k) * W[jo, k, ji] over k = ko * KU + u, then the rest */
  PrimExpr *k = lc_plus(L, lc_times(L, lc_var(L, ko), ku), lc_var(L, u)),
           *ai[2] = {lc_var(L, u), lc_var(L, ji)};
  for (int i = 0; i < 3; i++) lc_open(L);
  PrimExpr *wi[3] = {lc_var(L, jo), k, lc_var(L, ji)};
  PrimExpr *prod = lc_times(L, a_at(L, m, lc_int(L, 0), lc_var(L, iv), k), lc_at(L, m->b, wi));
  lc_store(L, acc, 2, ai, lc_plus(L, lc_load(L, acc, 2, ai), prod));
  lc_for(L, LOOP_VECTORIZED, ji, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, u, ku, lc_close(L));
  lc_for(L, LOOP_RANGE, ko, lc_int(L, K / KU), lc_close(L));
  PrimExpr *k2 = lc_plus(L, lc_int(L, K / KU * KU), lc_var(L, kr));
  TirVar *ji2 = lc_tvar(L, "ji", nr);
  PrimExpr *a0b[2] = {lc_int(L, 0), lc_var(L, ji2)}, *wi2[3] = {lc_var(L, jo), k2, lc_var(L, ji2)};
  for (int i = 0; i < 2; i++) lc_open(L);
  PrimExpr *prod2 = lc_times(L, a_at(L, m, lc_int(L, 0), lc_var(L, iv), k2), lc_at(L, m->b, wi2));
  lc_store(L, acc, 2, a0b, lc_plus(L, lc_load(L, acc, 2, a0b), prod2));
  lc_for(L, LOOP_VECTORIZED, ji2, nr, lc_close(L));
  lc_for(L, LOOP_RANGE, kr, lc_int(L, K % KU), lc_close(L));
  /* out = (acc[0] + acc[1]) + (acc[2] + acc[3]) */
  lc_open(L);
  PrimExpr *s[KU];
  for (int q = 0; q < KU; q++) {
    PrimExpr *qi[2] = {lc_int(L, q), lc_var(L, js)};
    s[q] = lc_load(L, acc, 2, qi);
  }
  store_out(L, m, out, lc_int(L, 0), lc_var(L, iv),
            lc_plus(L, lc_times(L, lc_var(L, jo), nr), lc_var(L, js)),
            lc_plus(L, lc_plus(L, s[0], s[1]), lc_plus(L, s[2], s[3])));
  lc_for(L, LOOP_VECTORIZED, js, width, lc_close(L));
  lc_for(L, LOOP_RANGE, iv, m->M, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, lc_int(L, nbc), lc_close(L));
}

/* ───────────────────────── packed, register-tiled ───────────────────────── */

/* The packed panels' buffer WP[bw, jo, k, ji] (bw: 1 when B is shared by
 * every batch). */
static Buffer *alloc_wp(LowerCx *L, const Mm *m, PrimExpr *nb) {
  PrimExpr *bw = m->b_bcast || !m->batched ? lc_int(L, 1) : m->B;
  PrimExpr *shape[4] = {bw, nb, m->K, lc_int(L, m->nr)};
  return lc_alloc(L, "WP", m->acc, 4, shape);
}

/* Emits the packing of column panel jo of batch b (B's batch index) into
 * WP[wb, jo, :, :] = B(b, jo * nr + ji, k), zero beyond N.  k is the outer
 * loop: the writes are contiguous and the nr rows of B being read stay in
 * cache while k walks along them. */
static void pack_panel(LowerCx *L, const Mm *m, Buffer *wp, PrimExpr *b, PrimExpr *wb,
                       PrimExpr *jo) {
  PrimExpr *nr = lc_int(L, m->nr);
  TirVar *k = lc_tvar(L, "k", m->K), *ji = lc_tvar(L, "ji", nr);
  PrimExpr *j = lc_plus(L, lc_times(L, jo, nr), lc_var(L, ji));
  bool exact = lc_const(m->N) >= 0 && lc_const(m->N) % m->nr == 0;
  lc_open(L); /* k */
  lc_open(L); /* ji */
  PrimExpr *idx[4] = {wb, jo, lc_var(L, k), lc_var(L, ji)};
  lc_store(L, wp, 4, idx, lc_cast(L, m->acc, b_at(L, m, b, j, lc_var(L, k))));
  if (!exact) {
    Stmt *st = lc_close(L);
    lc_open(L);
    lc_if(L, lc_bin(L, PB_LT, j, m->N), st);
  }
  lc_for(L, LOOP_RANGE, ji, nr, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
}

typedef struct Tile {
  const Mm *m;
  Buffer *wp, *out, *acc;
  PrimExpr *b, *i0, *jo; /* batch, first row, column panel */
  int rows;              /* MR */
  Buffer *ablk;          /* the block's rows of A as ablk[k, ii], or NULL: read A */
} Tile;

/* The row of A a tile row reads: rows past M (the last block's) read row
 * M - 1 instead, so the block runs at the full tile's speed; their
 * results are not stored. */
static PrimExpr *tile_row(LowerCx *L, const Tile *T, PrimExpr *ii) {
  PrimExpr *last = lc_bin(L, PB_SUB, T->m->M, lc_int(L, 1));
  return lc_call(L, PI_MIN, lc_plus(L, T->i0, ii), last, NULL);
}

/* for ii, ji: acc[ii, ji] = 0; for k: acc += A * WP; for ii < M - i0, ji: out = acc */
static void tile_body(LowerCx *L, const Tile *T) {
  const Mm *m = T->m;
  PrimExpr *nr = lc_int(L, m->nr), *rows = lc_int(L, T->rows);
  PrimExpr *wb = m->b_bcast || !m->batched ? lc_int(L, 0) : T->b;
  TirVar *ii = lc_tvar(L, "ii", rows), *ji = lc_tvar(L, "ji", nr), *k = lc_tvar(L, "k", m->K);
  PrimExpr *aidx[2] = {lc_var(L, ii), lc_var(L, ji)};
  lc_open(L);
  lc_open(L);
  lc_store(L, T->acc, 2, aidx, lc_lit(L, m->acc, 0));
  lc_for(L, LOOP_VECTORIZED, ji, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii, rows, lc_close(L));
  TirVar *ii2 = lc_tvar(L, "ii", rows), *ji2 = lc_tvar(L, "ji", nr);
  PrimExpr *a2[2] = {lc_var(L, ii2), lc_var(L, ji2)};
  PrimExpr *wi[4] = {wb, T->jo, lc_var(L, k), lc_var(L, ji2)};
  lc_open(L);
  lc_open(L);
  lc_open(L);
  PrimExpr *ak[2] = {lc_var(L, k), lc_var(L, ii2)};
  PrimExpr *av =
      T->ablk ? lc_load(L, T->ablk, 2, ak)
              : lc_cast(L, m->acc, a_at(L, m, T->b, tile_row(L, T, lc_var(L, ii2)), lc_var(L, k)));
  /* a prepacked weight is WP itself without the batch index */
  PrimExpr *prod =
      lc_times(L, av, m->packed ? lc_load(L, T->wp, 3, wi + 1) : lc_load(L, T->wp, 4, wi));
  lc_store(L, T->acc, 2, a2, lc_plus(L, lc_load(L, T->acc, 2, a2), prod));
  lc_for(L, LOOP_VECTORIZED, ji2, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii2, rows, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
  TirVar *ii3 = lc_tvar(L, "ii", rows), *ji3 = lc_tvar(L, "ji", nr);
  PrimExpr *a3[2] = {lc_var(L, ii3), lc_var(L, ji3)};
  PrimExpr *j = lc_plus(L, lc_times(L, T->jo, nr), lc_var(L, ji3)),
           *i = lc_plus(L, T->i0, lc_var(L, ii3));
  lc_open(L);
  lc_open(L);
  lc_open(L);
  /* The last panel may be partial: a shorter loop, not a branch per lane. */
  bool exact = lc_const(m->N) >= 0 && lc_const(m->N) % m->nr == 0;
  PrimExpr *width =
      exact ? nr : lc_call(L, PI_MIN, nr, lc_bin(L, PB_SUB, m->N, lc_times(L, T->jo, nr)), NULL);
  store_out(L, m, T->out, T->b, i, j, lc_load(L, T->acc, 2, a3));
  lc_for(L, LOOP_VECTORIZED, ji3, width, lc_close(L));
  lc_if(L, lc_bin(L, PB_LT, i, m->M), lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii3, rows, lc_close(L));
}

/* Copies the tile's rows of A (clamped, converted) to T->ablk[k, ii]: with
 * a row count known only at run time the JIT cannot prove the rows of A in
 * bounds and would check every load of the product's inner loop; the
 * copy's loads are checked once per block instead. */
static void copy_block(LowerCx *L, Tile *T) {
  const Mm *m = T->m;
  PrimExpr *rows = lc_int(L, T->rows), *shape[2] = {m->K, rows};
  T->ablk = lc_alloc(L, "A", m->acc, 2, shape);
  if (!T->ablk) return;
  TirVar *k = lc_tvar(L, "k", m->K), *ii = lc_tvar(L, "ii", rows);
  PrimExpr *idx[2] = {lc_var(L, k), lc_var(L, ii)};
  lc_open(L);
  lc_open(L);
  lc_store(L, T->ablk, 2, idx,
           lc_cast(L, m->acc, a_at(L, m, T->b, tile_row(L, T, lc_var(L, ii)), lc_var(L, k))));
  lc_for(L, LOOP_UNROLLED, ii, rows, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
}

/* The register tile of row block io and column panel jo of batch b, its
 * accumulators allocated here. */
static Tile tile_at(LowerCx *L, const Mm *m, Buffer *wp, Buffer *out, TirVar *b, TirVar *io,
                    TirVar *jo) {
  PrimExpr *mr = lc_int(L, m->mr), *tshape[2] = {mr, lc_int(L, m->nr)};
  return (Tile){m,
                wp,
                out,
                lc_alloc(L, "acc", m->acc, 2, tshape),
                lc_var(L, b),
                lc_times(L, lc_var(L, io), mr),
                lc_var(L, jo),
                m->mr,
                NULL};
}

/* Panels in parallel: each task packs its column panel of B, then runs
 * every row block against it while the panel is in cache.  One parallel
 * loop per product (packing included), all rows at the register tile's
 * speed; balanced when the panels divide among the threads. */
static void by_panels(LowerCx *L, const Mm *m, Buffer *out, Buffer *wp, PrimExpr *nb) {
  PrimExpr *mr = lc_int(L, m->mr);
  PrimExpr *blocks = lc_bin(L, PB_DIV, lc_plus(L, m->M, lc_int(L, m->mr - 1)), mr);
  TirVar *bv = lc_tvar(L, "b", m->B), *jo = lc_tvar(L, "jo", nb), *io = lc_tvar(L, "io", blocks);
  PrimExpr *wb = m->b_bcast || !m->batched ? lc_int(L, 0) : lc_var(L, bv);
  lc_open(L); /* batch */
  lc_open(L); /* jo */
  if (!m->packed) pack_panel(L, m, wp, lc_var(L, bv), wb, lc_var(L, jo));
  Tile T = tile_at(L, m, wp, out, bv, io, jo);
  lc_open(L);
  tile_body(L, &T);
  lc_for(L, LOOP_RANGE, io, blocks, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, nb, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* Row blocks in parallel (few panels): B packed first (its panels in
 * parallel), then each task runs one block of MR rows against every panel. */
static void by_rows(LowerCx *L, const Mm *m, Buffer *out, Buffer *wp, PrimExpr *nb) {
  PrimExpr *bw = m->b_bcast || !m->batched ? lc_int(L, 1) : m->B;
  TirVar *pb = lc_tvar(L, "b", bw), *pj = lc_tvar(L, "jo", nb);
  if (!m->packed) {
    lc_open(L); /* b */
    lc_open(L); /* jo */
    pack_panel(L, m, wp, lc_var(L, pb), lc_var(L, pb), lc_var(L, pj));
    lc_for(L, LOOP_PARALLEL, pj, nb, lc_close(L));
    lc_for(L, LOOP_RANGE, pb, bw, lc_close(L));
  }
  PrimExpr *mr = lc_int(L, m->mr);
  PrimExpr *blocks = lc_bin(L, PB_DIV, lc_plus(L, m->M, lc_int(L, m->mr - 1)), mr);
  TirVar *bv = lc_tvar(L, "b", m->B), *io = lc_tvar(L, "io", blocks), *jo = lc_tvar(L, "jo", nb);
  lc_open(L); /* batch */
  lc_open(L); /* io */
  Tile T = tile_at(L, m, wp, out, bv, io, jo);
  int64_t kc = lc_const(m->K), blk = kc * m->mr * dtype_bytes(m->acc);
  if (lc_const(m->M) < 0 && kc >= 0 && blk <= ABLK_MAX_BYTES) copy_block(L, &T);
  lc_open(L);
  tile_body(L, &T);
  lc_for(L, LOOP_RANGE, jo, nb, lc_close(L));
  lc_for(L, LOOP_PARALLEL, io, blocks, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* The blocked product: B packed into NR-wide column panels, MR x NR
 * register tiles (the last row block clamped).  With PANELS_PARALLEL
 * panels or more and a known row count, the panels are the parallel tasks
 * (packing fused in); otherwise the row blocks are (each copying its rows
 * of A first when their count is known only at run time). */
static void tiled(LowerCx *L, const Mm *m, Buffer *out) {
  int NR = m->nr;
  PrimExpr *nb = lc_bin(L, PB_DIV, lc_plus(L, m->N, lc_int(L, NR - 1)), lc_int(L, NR));
  if (lc_const(m->N) >= 0) nb = lc_int(L, (lc_const(m->N) + NR - 1) / NR);
  Buffer *wp = m->packed ? m->b->buf : alloc_wp(L, m, nb);
  if (!wp) {
    lc_fail(L, "nn.dense: no buffer for the packed weights");
    return;
  }
  int split = lc_knob(L, KNOB_PRODUCT_SPLIT); /* 0: by the panel count */
  bool panels = split ? split == 2 : lc_const(nb) >= PANELS_PARALLEL;
  if (panels && lc_const(m->M) >= 0)
    by_panels(L, m, out, wp, nb);
  else
    by_rows(L, m, out, wp, nb);
}

/* ───────────────────────────── the rules ───────────────────────────── */

/* The result's and the accumulators' dtypes (m->dt, m->acc): floats of
 * one dtype and out_dtype accumulate in it (fast math, float32/64) or in
 * float64 (float16 always), bfloat16 operands with a float32 out_dtype as
 * float32 operands would; integer operands (of any two dtypes, e.g.
 * uint8 by int8) with an integer out_dtype accumulate in the result's
 * dtype, wrapping, which is bit for bit the reference kernels' wrapping
 * 64-bit sum narrowed to out_dtype, in any order. */
static bool product_dtypes(LowerCx *L, const Expr *call, Mm *m) {
  DType out = lc_result_type(call)->u.tensor.dtype;
  DType acc = lc_product_acc(m->a->dtype, m->b->dtype, out);
  if (m->a->dtype == DT_BFLOAT16 && m->b->dtype == DT_BFLOAT16 && out == DT_FLOAT32)
    acc = DT_FLOAT64; /* bfloat16 operands widen exactly; their products fit a float */
  if (acc == DT_INVALID) return false;
  m->dt = out;
  /* float16 and bfloat16 sum in float64 always: their own dtype would round each step */
  bool narrow = out == DT_FLOAT16 || out == DT_BFLOAT16;
  m->acc = dtype_is_float(out) && !narrow && lc_fast_math(L) ? out : acc;
  return true;
}

/* The register tile's rows for a product of `rows` rows (-1: known at run
 * time): MR unless another height of the choices, in order of preference,
 * wastes fewer rows; more than 6 rows of two-register accumulators need
 * 32 vector registers (AVX-512). */
static int tile_rows(int64_t rows) {
  static const int choices[] = {MR, 8, 5, 4, 7, 3};
  if (rows < 0 || rows > EXACT_ROWS_MAX) return MR;
  int best = MR;
  int64_t best_work = (rows + MR - 1) / MR * MR;
  for (size_t i = 1; i < sizeof choices / sizeof choices[0]; i++) {
    int r = choices[i];
    if (r > 6 && vector_bytes() < 64) continue;
    int64_t work = (rows + r - 1) / r * r;
    if (work < best_work) best = r, best_work = work;
  }
  return best;
}

/* Shared by the product ops: picks the accumulator (float64 unless fast
 * math) and the schedule by row count; with rows known only at run time
 * both schedules are emitted under an `if`. */
static LTensor *product(LowerCx *L, const Expr *call, Mm *m) {
  if (!product_dtypes(L, call, m))
    return lc_fail(L, "%s of %s and %s", call->u.call.fn->u.op.name, dtype_name(m->a->dtype),
                   dtype_name(m->b->dtype));
  /* a prepacked weight's panels are two registers wide (its layout's) */
  m->nr = (m->packed ? 2 : lc_knob(L, KNOB_PRODUCT_NR_REGS)) * vector_bytes() / dtype_bytes(m->acc);
  int mr = lc_knob(L, KNOB_PRODUCT_MR); /* 0: by the row count and the target */
  m->mr = mr ? mr : tile_rows(lc_const(m->M));
  PrimExpr *shape[TENSOR_MAX_RANK];
  int n = 0;
  if (m->batched) shape[n++] = m->B;
  for (int d = 0; d < m->lead; d++) shape[n++] = m->lead_dims[d];
  if (!m->lead) shape[n++] = m->M;
  shape[n++] = m->N;
  Buffer *out = lc_result_buffer(L, call, m->dt, n, shape);
  if (!out) return NULL;
  lc_mark_total(L, out); /* every schedule stores each element once */
  if (!m->batched) m->B = lc_int(L, 1);
  int64_t rows = lc_const(m->M);
  /* The packed panel buffer needs a known column count. */
  bool few = (rows >= 0 && rows <= FEW_ROWS) || lc_const(m->N) < 0;
  /* few_rows sums in the operands' dtype: floats with fast math only; a
   * prepacked weight is read by panels: the panel schedule for few rows */
  bool fast = lc_fast_math(L) && dtype_is_float(m->dt) && m->acc == m->dt && m->a->dtype == m->dt &&
              m->b->dtype == m->dt, /* not bfloat16 into float32 */
      dots = fast && !m->packed;
  bool panels = fast && m->packed && lc_const(m->K) >= 0 && lc_const(m->N) >= 0;
  /* prepacked panels: from PANEL_TILE_ROWS rows a register tile of all the
   * rows (tile_rows) beats a row at a time with k split */
  if (panels && rows >= PANEL_TILE_ROWS) few = false;
  if (few && panels) {
    few_rows_packed(L, m, out);
  } else if (few && dots) {
    few_rows(L, m, out);
  } else if (few) {
    few_rows_exact(L, m, out);
  } else if (rows < 0) { /* rows known at run time: both schedules */
    lc_open(L);
    if (panels)
      few_rows_packed(L, m, out);
    else if (dots)
      few_rows(L, m, out);
    else
      few_rows_exact(L, m, out);
    Stmt *then_ = lc_close(L);
    lc_open(L);
    tiled(L, m, out);
    lc_if_else(L, lc_bin(L, PB_LE, m->M, lc_int(L, FEW_ROWS)), then_, lc_close(L));
  } else {
    tiled(L, m, out);
  }
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

/* The product's rows: a's one row dim, or (an N-d a) its leading dims
 * flattened (m->lead of them). */
static void set_rows(LowerCx *L, Mm *m, const LTensor *a) {
  m->M = a->shape[0];
  if (a->ndim <= 2) return;
  m->lead = a->ndim - 1, m->M = lc_int(L, 1);
  for (int d = 0; d < m->lead; d++)
    m->lead_dims[d] = a->shape[d], m->M = lc_mul(L, m->M, a->shape[d]);
}

/* nn.dense: x (..., K) times w (N, K) transposed. */
LTensor *compute_dense(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim < 2 || in[1]->ndim != 2) return lc_fail(L, "nn.dense of this rank");
  Mm m = {.a = in[0], .b = in[1], .tb = true, .N = in[1]->shape[0]};
  m.K = in[0]->shape[in[0]->ndim - 1];
  set_rows(L, &m, in[0]);
  return product(L, call, &m);
}

/* nn.contrib_dense_pack: nn.dense on a weight already in the tiles'
 * panels (passes/alter_layout.c packs constant weights once), so the
 * product reads it in place instead of packing it on every call.  The
 * panel width must be the schedule's (two vector registers), and the
 * weight a buffer. */
static LTensor *compute_dense_pack(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim < 1 || in[1]->ndim != 3)
    return lc_fail(L, "nn.contrib_dense_pack of this rank");
  const LTensor *x = in[0], *w = in[1];
  Mm m = {.a = x, .b = w, .tb = true, .packed = true, .K = w->shape[1]};
  m.N = lc_result_type(call)->u.tensor.dims[x->ndim - 1].kind == DIM_CONST
            ? lc_int(L, lc_result_type(call)->u.tensor.dims[x->ndim - 1].value)
            : NULL;
  int64_t lanes = lc_const(w->shape[2]);
  if (!m.N || !w->buf || !lc_dtype_ok(w->dtype) ||
      lanes != 2 * vector_bytes() / dtype_bytes(w->dtype) || !lc_fast_math(L))
    return lc_fail(L, "nn.contrib_dense_pack: panels of another width, or not a buffer");
  set_rows(L, &m, x);
  return product(L, call, &m);
}

/* nn.matmul: 2-d operands, or an N-d a (not transposed) whose leading dims
 * are the product's rows (a (B, S, K) activation times a (K, N) weight). */
static LTensor *compute_matmul(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  bool ta = op_attr_bool(call, "transpose_a"), tb = op_attr_bool(call, "transpose_b");
  if (nin == 2 && in[0]->ndim > 2 && in[1]->ndim == 2 && !ta) {
    Mm m = {.a = in[0], .b = in[1], .tb = tb, .N = in[1]->shape[tb ? 0 : 1]};
    m.K = in[0]->shape[in[0]->ndim - 1];
    set_rows(L, &m, in[0]);
    return product(L, call, &m);
  }
  if (nin != 2 || in[0]->ndim != 2 || in[1]->ndim != 2) return lc_fail(L, "nn.matmul of rank != 2");
  Mm m = {.a = in[0],
          .b = in[1],
          .ta = ta,
          .tb = tb,
          .M = in[0]->shape[ta ? 1 : 0],
          .N = in[1]->shape[tb ? 0 : 1],
          .K = in[0]->shape[ta ? 0 : 1]};
  return product(L, call, &m);
}

static LTensor *compute_batch_matmul(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim != 3 || in[1]->ndim != 3)
    return lc_fail(L, "nn.batch_matmul of rank != 3");
  bool ta = op_attr_bool(call, "transpose_a"), tb = op_attr_bool(call, "transpose_b");
  PrimExpr *ba = in[0]->shape[0], *bb = in[1]->shape[0];
  Mm m = {.a = in[0],
          .b = in[1],
          .ta = ta,
          .tb = tb,
          .batched = true,
          .M = in[0]->shape[ta ? 2 : 1],
          .N = in[1]->shape[tb ? 1 : 2],
          .K = in[0]->shape[ta ? 1 : 2]};
  m.a_bcast = lc_const(ba) == 1 && lc_const(bb) != 1;
  m.b_bcast = lc_const(bb) == 1 && lc_const(ba) != 1;
  if (!m.a_bcast && !m.b_bcast && !lc_same_dim(ba, bb))
    return lc_fail(L, "nn.batch_matmul: batch dims that broadcast only at run time");
  m.B = m.a_bcast ? bb : ba;
  return product(L, call, &m);
}

/* ───────────────────────────── softmax ───────────────────────────── */

/* Closes the loops over x's dims other than axis (opened innermost last),
 * the outermost parallel. */
static void close_lines(LowerCx *L, const LTensor *x, int axis, TirVar **v) {
  for (int d = x->ndim; d-- > 0;) {
    if (d == axis) continue;
    int before = 0;
    for (int e = 0; e < d; e++) before += e != axis;
    lc_for(L, before == 0 ? LOOP_PARALLEL : LOOP_GRID, v[d], x->shape[d], lc_close(L));
  }
}

/* softmax / log_softmax: three passes along the axis in float64 (max, sum
 * of exp, result) in the reference's order so results agree exactly; a NaN
 * becomes the maximum, as in the reference. */
static LTensor *softmax(LowerCx *L, const Expr *call, LTensor **in, int nin, bool log_) {
  const LTensor *x = in[0];
  int n = x->ndim;
  if (nin != 1 || !dtype_is_float(x->dtype) || n == 0) /* float16 too: in float64 */
    return lc_fail(L, "softmax of this dtype or rank");
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += n;
  if (axis < 0 || axis >= n) return lc_fail(L, "softmax: axis out of range");
  Buffer *out = lc_result_buffer(L, call, x->dtype, n, (PrimExpr **)x->shape);
  if (!out) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", x->shape[d]);
  int nouter = 0;
  for (int d = 0; d < n; d++)
    if (d != axis) lc_open(L), nouter++;
  PrimExpr *two = lc_int(L, 2);
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT64, 1, &two);
  PrimExpr *i0 = lc_int(L, 0), *i1 = lc_int(L, 1);
  PrimExpr *m = lc_load(L, acc, 1, &i0), *s = lc_load(L, acc, 1, &i1);
  PrimExpr *idx[TENSOR_MAX_RANK];
  TirVar *k[3];
  for (int pass = 0; pass < 3; pass++) k[pass] = lc_tvar(L, "k", x->shape[axis]);
  lc_store(L, acc, 1, &i0, lc_lit(L, DT_FLOAT64, -INFINITY));
  for (int pass = 0; pass < 3; pass++) {
    for (int d = 0; d < n; d++) idx[d] = lc_var(L, d == axis ? k[pass] : v[d]);
    PrimExpr *xv = lc_cast(L, DT_FLOAT64, lc_at(L, x, idx));
    PrimExpr *e = lc_call(L, PI_EXP, lc_bin(L, PB_SUB, xv, m), NULL, NULL);
    lc_open(L);
    if (pass == 0) {
      PrimExpr *take = lc_bin(L, PB_OR, lc_bin(L, PB_GT, xv, m), lc_bin(L, PB_NE, xv, xv));
      lc_store(L, acc, 1, &i0, lc_call(L, PI_SELECT, take, xv, m));
    } else if (pass == 1) {
      lc_store(L, acc, 1, &i1, lc_bin(L, PB_ADD, s, e));
    } else {
      PrimExpr *r =
          log_ ? lc_bin(L, PB_SUB, lc_bin(L, PB_SUB, xv, m), lc_call(L, PI_LOG, s, NULL, NULL))
               : lc_bin(L, PB_DIV, e, s);
      lc_store(L, out, n, idx, r);
    }
    lc_for(L, LOOP_RANGE, k[pass], x->shape[axis], lc_close(L));
  }
  close_lines(L, x, axis, v);
  (void)nouter;
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return softmax(L, c, in, n, false);
}
static LTensor *compute_log_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return softmax(L, c, in, n, true);
}

/* ───────────────────────── fast_softmax, prelu ───────────────────────── */

/* One pass along the line of x at the outer indices v, k its variable:
 * out[line] = value(x[line], out[line]) for the fast softmax below. */
typedef PrimExpr *LinePassFn(LowerCx *L, PrimExpr *xv, PrimExpr *ov, PrimExpr *acc);

static void line_pass(LowerCx *L, const LTensor *x, Buffer *out, int axis, TirVar **v,
                      LoopKind kind, Buffer *acc, int slot, LinePassFn *f) {
  TirVar *k = lc_tvar(L, "k", x->shape[axis]);
  PrimExpr *idx[TENSOR_MAX_RANK], *a[2] = {lc_int(L, 0), lc_int(L, 1)};
  for (int d = 0; d < x->ndim; d++) idx[d] = lc_var(L, d == axis ? k : v[d]);
  PrimExpr *xv = lc_at(L, x, idx), *ov = lc_load(L, out, x->ndim, idx);
  lc_open(L);
  if (slot < 0)
    lc_store(L, out, x->ndim, idx, f(L, xv, ov, lc_load(L, acc, 1, &a[-slot - 1])));
  else
    lc_store(L, acc, 1, &a[slot], f(L, xv, ov, lc_load(L, acc, 1, &a[slot])));
  lc_for(L, kind, k, x->shape[axis], lc_close(L));
}

static PrimExpr *pass_max(LowerCx *L, PrimExpr *xv, PrimExpr *ov, PrimExpr *m) {
  (void)ov;
  PrimExpr *take = lc_bin(L, PB_OR, lc_bin(L, PB_GT, xv, m), lc_bin(L, PB_NE, xv, xv));
  return lc_call(L, PI_SELECT, take, xv, m);
}
static PrimExpr *pass_exp(LowerCx *L, PrimExpr *xv, PrimExpr *ov, PrimExpr *m) {
  (void)ov;
  return lc_fast_exp(L, lc_bin(L, PB_SUB, xv, m));
}
static PrimExpr *pass_sum(LowerCx *L, PrimExpr *xv, PrimExpr *ov, PrimExpr *s) {
  (void)xv;
  return lc_bin(L, PB_ADD, s, ov);
}
static PrimExpr *pass_div(LowerCx *L, PrimExpr *xv, PrimExpr *ov, PrimExpr *s) {
  (void)xv;
  return lc_bin(L, PB_DIV, ov, s);
}

/* A reduction along the line in SOFTMAX_LANES interleaved partials (lane j
 * takes the elements k = j mod lanes, in order; vectorized), combined in
 * lane order into acc[slot]: f(value, partial) accumulates, starting from
 * init.  The partials live at acc[2 + slot * lanes ...]. */
static void lane_reduce(LowerCx *L, const LTensor *x, Buffer *out, int axis, TirVar **v,
                        Buffer *acc, int slot, LinePassFn *f, bool of_out, float init) {
  int64_t P = SOFTMAX_LANES;
  PrimExpr *n = x->shape[axis], *lanes = lc_int(L, P);
  PrimExpr *groups = lc_bin(L, PB_DIV, n, lanes), *rest = lc_bin(L, PB_MOD, n, lanes);
  PrimExpr *sl = lc_int(L, slot), *iv = lc_lit(L, DT_FLOAT32, init);
  lc_store(L, acc, 1, &sl, iv);
  TirVar *j0 = lc_tvar(L, "j", lanes), *ko = lc_tvar(L, "ko", groups), *j = lc_tvar(L, "j", lanes),
         *r = lc_tvar(L, "r", rest), *jc = lc_tvar(L, "j", lanes);
  PrimExpr *base = lc_int(L, 2 + slot * P);
  PrimExpr *p0 = lc_bin(L, PB_ADD, base, lc_var(L, j0));
  lc_open(L);
  lc_store(L, acc, 1, &p0, iv);
  lc_for(L, LOOP_VECTORIZED, j0, lanes, lc_close(L));
  for (int part = 0; part < 2; part++) { /* whole groups of lanes, then the rest */
    PrimExpr *lane = lc_var(L, part ? r : j);
    PrimExpr *k = part ? lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, groups, lanes), lane)
                       : lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, lc_var(L, ko), lanes), lane);
    PrimExpr *idx[TENSOR_MAX_RANK], *pi = lc_bin(L, PB_ADD, base, lane);
    for (int d = 0; d < x->ndim; d++) idx[d] = d == axis ? k : lc_var(L, v[d]);
    PrimExpr *val = of_out ? lc_load(L, out, x->ndim, idx) : lc_at(L, x, idx);
    lc_open(L);
    if (!part) lc_open(L);
    lc_store(L, acc, 1, &pi, f(L, val, val, lc_load(L, acc, 1, &pi)));
    if (part) {
      lc_for(L, LOOP_RANGE, r, rest, lc_close(L));
    } else {
      lc_for(L, LOOP_VECTORIZED, j, lanes, lc_close(L));
      lc_for(L, LOOP_RANGE, ko, groups, lc_close(L));
    }
  }
  PrimExpr *pc = lc_bin(L, PB_ADD, base, lc_var(L, jc)), *pv = lc_load(L, acc, 1, &pc);
  lc_open(L);
  lc_store(L, acc, 1, &sl, f(L, pv, pv, lc_load(L, acc, 1, &sl)));
  lc_for(L, LOOP_RANGE, jc, lanes, lc_close(L));
}

/* nn.fast_softmax on float32, as TVM's: m = the maximum (a NaN wins), the
 * result holds e = fast_exp(x - m), s = their float32 sum, then e / s.
 * The maximum and the sum are taken in SOFTMAX_LANES interleaved partials
 * combined in lane order (lane_reduce), so they vectorize like the
 * exponentials and the division; the reference kernel
 * (kernels/kernels_nn.c) does the same operations in the same order.
 * Other dtypes: the exact softmax. */
static LTensor *compute_fast_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  const LTensor *x = in[0];
  if (n != 1 || x->dtype != DT_FLOAT32 || x->ndim == 0) return softmax(L, c, in, n, false);
  int axis = (int)op_attr_int(c, "axis");
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim) return lc_fail(L, "softmax: axis out of range");
  Buffer *out = lc_result_buffer(L, c, x->dtype, x->ndim, (PrimExpr **)x->shape);
  if (!out) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  for (int d = 0; d < x->ndim; d++) v[d] = lc_tvar(L, "i", x->shape[d]);
  for (int d = 0; d < x->ndim; d++)
    if (d != axis) lc_open(L);
  PrimExpr *size = lc_int(L, 2 + 2 * SOFTMAX_LANES);
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT32, 1, &size);
  lane_reduce(L, x, out, axis, v, acc, 0, pass_max, false, -INFINITY);
  line_pass(L, x, out, axis, v, LOOP_VECTORIZED, acc, -1, pass_exp);
  lane_reduce(L, x, out, axis, v, acc, 1, pass_sum, true, 0);
  line_pass(L, x, out, axis, v, LOOP_VECTORIZED, acc, -2, pass_div);
  close_lines(L, x, axis, v);
  return lc_from_buffer(L, c, out);
}

/* x > 0 ? x : x * alpha[c], c the index along the axis (NaN stays NaN). */
static PrimExpr *at_prelu(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *x = lc_at(L, t->in[0], idx), *j = idx[t->aux[0]];
  PrimExpr *pos = lc_bin(L, PB_GT, x, lc_lit(L, x->dtype, 0));
  return lc_call(L, PI_SELECT, pos, x, lc_times(L, x, lc_at(L, t->in[1], &j)));
}

static LTensor *compute_prelu(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->dtype != in[1]->dtype || !lc_elem_dtype_ok(in[0]->dtype) ||
      in[0]->dtype == DT_BOOL || in[1]->ndim != 1)
    return lc_fail(L, "nn.prelu on these operands");
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += in[0]->ndim;
  if (axis < 0 || axis >= in[0]->ndim) return lc_fail(L, "nn.prelu: axis out of range");
  LTensor *t = lc_tensor(L, call, in[0]->dtype, in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_prelu, t->aux[0] = axis;
  return t;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_nn[] = {
    {"nn.dense", compute_dense},
    {"nn.contrib_dense_pack", compute_dense_pack},
    {"nn.matmul", compute_matmul},
    {"nn.batch_matmul", compute_batch_matmul},
    {"nn.softmax", compute_softmax},
    {"nn.log_softmax", compute_log_softmax},
    {"nn.prelu", compute_prelu},
    {"nn.fast_softmax", compute_fast_softmax},
    {NULL, NULL},
};
