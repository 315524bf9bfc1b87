/* compute_nn.c — compute rules (ops/compute.h) of nn.dense, nn.matmul,
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
 * fast mode only.
 *
 * Softmax works per line along the axis in float64, in the reference's
 * order (max, then the sum of exp(x - max), then exp(x - max) / sum, or
 * (x - max) - log(sum)), so it agrees with the reference exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/compute.h"
#include "ops/families.h"
#include "ops/nn_int.h"

enum { LANES = 16, MR = 6, FEW_ROWS = 4 };

/* The host's vector register width in bytes (AVX-512: 64, AVX2: 32). */
static int vector_bytes(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2")) return 32;
#endif
  return 16;
}

typedef struct Mm {
  const LTensor *a, *b;
  bool ta, tb; /* a is (K, M); b is (N, K) (dense: always) */
  bool batched;
  DType dt, acc;           /* the operands' dtype; the accumulator's */
  int nr;                  /* panel width: two vector registers of acc */
  PrimExpr *M, *N, *K, *B; /* B: batch count (1 when not batched) */
  bool a_bcast, b_bcast;   /* batch dim of size 1 broadcast */
} Mm;

static PrimExpr *V(LowerCx *L, TirVar *v) { return lc_var(L, v); }
static PrimExpr *add(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_ADD, a, b); }
static PrimExpr *mul(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_MUL, a, b); }

static PrimExpr *a_at(LowerCx *L, const Mm *m, PrimExpr *b, PrimExpr *i, PrimExpr *k) {
  PrimExpr *idx[3];
  int n = 0;
  if (m->batched) idx[n++] = m->a_bcast ? lc_int(L, 0) : b;
  idx[n++] = m->ta ? k : i;
  idx[n++] = m->ta ? i : k;
  return lc_at(L, m->a, idx);
}

static PrimExpr *b_at(LowerCx *L, const Mm *m, PrimExpr *b, PrimExpr *j, PrimExpr *k) {
  PrimExpr *idx[3];
  int n = 0;
  if (m->batched) idx[n++] = m->b_bcast ? lc_int(L, 0) : b;
  idx[n++] = m->tb ? j : k;
  idx[n++] = m->tb ? k : j;
  return lc_at(L, m->b, idx);
}

static void store_out(LowerCx *L, const Mm *m, Buffer *out, PrimExpr *b, PrimExpr *i, PrimExpr *j,
                      PrimExpr *v) {
  PrimExpr *idx[3];
  int n = 0;
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
    for (int i = 0; i + w < LANES; i += 2 * w) p[i] = add(L, p[i], p[i + w]);
  return p[0];
}

/* acc[lane] += A(b, i, k) * B(b, j, k) */
static void dot_step(LowerCx *L, const Mm *m, Buffer *acc, PrimExpr *lane, PrimExpr *b, PrimExpr *i,
                     PrimExpr *j, PrimExpr *k) {
  PrimExpr *prod = mul(L, a_at(L, m, b, i, k), b_at(L, m, b, j, k));
  lc_store(L, acc, 1, &lane, add(L, lc_load(L, acc, 1, &lane), prod));
}

static void dot_body(LowerCx *L, const Mm *m, Buffer *out, PrimExpr *b, PrimExpr *i, PrimExpr *j) {
  PrimExpr *w = lc_int(L, LANES);
  Buffer *acc = lc_alloc(L, "acc", m->dt, 1, &w);
  PrimExpr *full = lc_bin(L, PB_DIV, m->K, w), *done = mul(L, full, w);
  TirVar *ko = lc_tvar(L, "k", full), *l = lc_tvar(L, "l", w), *t = lc_tvar(L, "k", full);
  lc_open(L);
  lc_open(L);
  dot_step(L, m, acc, V(L, l), b, i, j, add(L, mul(L, V(L, ko), w), V(L, l)));
  lc_for(L, LOOP_VECTORIZED, l, w, lc_close(L));
  lc_for(L, LOOP_RANGE, ko, full, lc_close(L));
  lc_open(L);
  dot_step(L, m, acc, lc_int(L, 0), b, i, j, add(L, done, V(L, t)));
  lc_for(L, LOOP_RANGE, t, lc_bin(L, PB_SUB, m->K, done), lc_close(L));
  store_out(L, m, out, b, i, j, lanes_sum(L, acc));
}

static void few_rows(LowerCx *L, const Mm *m, Buffer *out) {
  TirVar *bv = lc_tvar(L, "b", m->B), *jv = lc_tvar(L, "j", m->N), *iv = lc_tvar(L, "i", m->M);
  lc_open(L);
  lc_open(L);
  lc_open(L);
  dot_body(L, m, out, V(L, bv), V(L, iv), V(L, jv));
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
                                     : lc_bin(L, PB_DIV, add(L, m->N, lc_int(L, NR - 1)), nr);
  TirVar *bv = lc_tvar(L, "b", m->B), *jo = lc_tvar(L, "jo", nb), *iv = lc_tvar(L, "i", m->M),
         *k = lc_tvar(L, "k", m->K), *ji = lc_tvar(L, "ji", nr), *js = lc_tvar(L, "ji", nr);
  bool whole = lc_const(m->N) >= 0 && lc_const(m->N) % NR == 0;
  PrimExpr *width =
      whole ? nr : lc_call(L, PI_MIN, nr, lc_bin(L, PB_SUB, m->N, mul(L, V(L, jo), nr)), NULL);
  lc_open(L); /* batch */
  lc_open(L); /* jo */
  lc_open(L); /* i */
  Buffer *acc = lc_alloc(L, "acc", m->acc, 1, &nr);
  PrimExpr *j = add(L, mul(L, V(L, jo), nr), V(L, ji)), *lane = V(L, ji);
  lc_open(L);
  lc_open(L);
  PrimExpr *prod = mul(L, lc_cast(L, m->acc, a_at(L, m, V(L, bv), V(L, iv), V(L, k))),
                       lc_cast(L, m->acc, b_at(L, m, V(L, bv), j, V(L, k))));
  lc_store(L, acc, 1, &lane, add(L, lc_load(L, acc, 1, &lane), prod));
  lc_for(L, LOOP_VECTORIZED, ji, width, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
  lc_open(L);
  PrimExpr *ls = V(L, js);
  store_out(L, m, out, V(L, bv), V(L, iv), add(L, mul(L, V(L, jo), nr), ls),
            lc_load(L, acc, 1, &ls));
  lc_for(L, LOOP_VECTORIZED, js, width, lc_close(L));
  lc_for(L, LOOP_RANGE, iv, m->M, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, nb, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* ───────────────────────── packed, register-tiled ───────────────────────── */

/* WP[bw, jo, k, ji] = B(bw, jo * nr + ji, k), zero beyond N. */
static Buffer *pack_b(LowerCx *L, const Mm *m, PrimExpr *nb) {
  PrimExpr *nr = lc_int(L, m->nr), *bw = m->b_bcast || !m->batched ? lc_int(L, 1) : m->B;
  PrimExpr *shape[4] = {bw, nb, m->K, nr};
  Buffer *wp = lc_alloc(L, "WP", m->acc, 4, shape);
  if (!wp) return NULL;
  TirVar *b = lc_tvar(L, "b", bw), *jo = lc_tvar(L, "jo", nb), *ji = lc_tvar(L, "ji", nr),
         *k = lc_tvar(L, "k", m->K);
  PrimExpr *j = add(L, mul(L, V(L, jo), nr), V(L, ji));
  for (int i = 0; i < 5; i++) lc_open(L); /* b, jo, ji, if, k */
  PrimExpr *idx[4] = {V(L, b), V(L, jo), V(L, k), V(L, ji)};
  lc_store(L, wp, 4, idx, lc_cast(L, m->acc, b_at(L, m, V(L, b), j, V(L, k))));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
  lc_if(L, lc_bin(L, PB_LT, j, m->N), lc_close(L));
  lc_for(L, LOOP_RANGE, ji, nr, lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo, nb, lc_close(L));
  lc_for(L, LOOP_RANGE, b, bw, lc_close(L));
  return wp;
}

typedef struct Tile {
  const Mm *m;
  Buffer *wp, *out, *acc;
  PrimExpr *b, *i0, *jo; /* batch, first row, column panel */
  int rows;              /* MR or 1 */
} Tile;

/* for ii, ji: acc[ii, ji] = 0; for k: acc += A * WP; for ii, ji: out = acc */
static void tile_body(LowerCx *L, const Tile *T) {
  const Mm *m = T->m;
  PrimExpr *nr = lc_int(L, m->nr), *rows = lc_int(L, T->rows);
  PrimExpr *wb = m->b_bcast || !m->batched ? lc_int(L, 0) : T->b;
  TirVar *ii = lc_tvar(L, "ii", rows), *ji = lc_tvar(L, "ji", nr), *k = lc_tvar(L, "k", m->K);
  PrimExpr *aidx[2] = {V(L, ii), V(L, ji)};
  lc_open(L);
  lc_open(L);
  lc_store(L, T->acc, 2, aidx, lc_lit(L, m->acc, 0));
  lc_for(L, LOOP_VECTORIZED, ji, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii, rows, lc_close(L));
  TirVar *ii2 = lc_tvar(L, "ii", rows), *ji2 = lc_tvar(L, "ji", nr);
  PrimExpr *a2[2] = {V(L, ii2), V(L, ji2)};
  PrimExpr *wi[4] = {wb, T->jo, V(L, k), V(L, ji2)};
  lc_open(L);
  lc_open(L);
  lc_open(L);
  PrimExpr *av = lc_cast(L, m->acc, a_at(L, m, T->b, add(L, T->i0, V(L, ii2)), V(L, k)));
  PrimExpr *prod = mul(L, av, lc_load(L, T->wp, 4, wi));
  lc_store(L, T->acc, 2, a2, add(L, lc_load(L, T->acc, 2, a2), prod));
  lc_for(L, LOOP_VECTORIZED, ji2, nr, lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii2, rows, lc_close(L));
  lc_for(L, LOOP_RANGE, k, m->K, lc_close(L));
  TirVar *ii3 = lc_tvar(L, "ii", rows), *ji3 = lc_tvar(L, "ji", nr);
  PrimExpr *a3[2] = {V(L, ii3), V(L, ji3)};
  PrimExpr *j = add(L, mul(L, T->jo, nr), V(L, ji3));
  lc_open(L);
  lc_open(L);
  /* The last panel may be partial: a shorter loop, not a branch per lane. */
  bool exact = lc_const(m->N) >= 0 && lc_const(m->N) % m->nr == 0;
  PrimExpr *width =
      exact ? nr : lc_call(L, PI_MIN, nr, lc_bin(L, PB_SUB, m->N, mul(L, T->jo, nr)), NULL);
  store_out(L, m, T->out, T->b, add(L, T->i0, V(L, ii3)), j, lc_load(L, T->acc, 2, a3));
  lc_for(L, LOOP_VECTORIZED, ji3, width, lc_close(L));
  lc_for(L, LOOP_UNROLLED, ii3, rows, lc_close(L));
}

/* The blocked product: B packed into column panels, MR x NR register
 * tiles over parallel row blocks, then the rows left over (M mod MR) with
 * 1 x NR tiles and the column panels in parallel. */
static void tiled(LowerCx *L, const Mm *m, Buffer *out) {
  int NR = m->nr;
  PrimExpr *nb = lc_bin(L, PB_DIV, add(L, m->N, lc_int(L, NR - 1)), lc_int(L, NR));
  if (lc_const(m->N) >= 0) nb = lc_int(L, (lc_const(m->N) + NR - 1) / NR);
  Buffer *wp = pack_b(L, m, nb);
  if (!wp) {
    lc_fail(L, "nn.dense: no buffer for the packed weights");
    return;
  }
  PrimExpr *mr = lc_int(L, MR), *nr = lc_int(L, NR);
  PrimExpr *blocks = lc_bin(L, PB_DIV, m->M, mr), *done = mul(L, blocks, mr);
  TirVar *bv = lc_tvar(L, "b", m->B), *io = lc_tvar(L, "io", blocks), *jo = lc_tvar(L, "jo", nb);
  lc_open(L); /* batch */
  lc_open(L); /* io */
  PrimExpr *tshape[2] = {mr, nr};
  Tile T = {
      m,        wp, out, lc_alloc(L, "acc", m->acc, 2, tshape), V(L, bv), mul(L, V(L, io), mr),
      V(L, jo), MR};
  lc_open(L);
  tile_body(L, &T);
  lc_for(L, LOOP_RANGE, jo, nb, lc_close(L));
  lc_for(L, LOOP_PARALLEL, io, blocks, lc_close(L));
  /* leftover rows: column panels in parallel */
  TirVar *jo2 = lc_tvar(L, "jo", nb), *r = lc_tvar(L, "r", m->M);
  lc_open(L);
  PrimExpr *one[2] = {lc_int(L, 1), nr};
  Tile T1 = {
      m,         wp, out, lc_alloc(L, "acc", m->acc, 2, one), V(L, bv), add(L, done, V(L, r)),
      V(L, jo2), 1};
  lc_open(L);
  tile_body(L, &T1);
  lc_for(L, LOOP_RANGE, r, lc_bin(L, PB_SUB, m->M, done), lc_close(L));
  lc_for(L, LOOP_PARALLEL, jo2, nb, lc_close(L));
  batch_loop(L, bv, m->B);
}

/* ───────────────────────────── the rules ───────────────────────────── */

/* Shared by the product ops: picks the accumulator (float64 unless fast
 * math) and the schedule by row count; with rows known only at run time
 * both schedules are emitted under an `if`. */
static LTensor *product(LowerCx *L, const Expr *call, Mm *m) {
  if (m->a->dtype != m->b->dtype || !dtype_is_float(m->a->dtype) || !lc_dtype_ok(m->a->dtype))
    return lc_fail(L, "%s on %s", call->u.call.fn->u.op.name, dtype_name(m->a->dtype));
  const char *od = op_attr_str(lc_arena(L), call, "out_dtype");
  if (od[0] && strcmp(od, dtype_name(m->a->dtype)) != 0) return lc_fail(L, "out_dtype differs");
  m->dt = m->a->dtype;
  m->acc = lc_fast_math(L) ? m->dt : DT_FLOAT64;
  m->nr = 2 * vector_bytes() / dtype_bytes(m->acc);
  PrimExpr *shape[3];
  int n = 0;
  if (m->batched) shape[n++] = m->B;
  shape[n++] = m->M, shape[n++] = m->N;
  Buffer *out = lc_result_buffer(L, call, m->dt, n, shape);
  if (!out) return NULL;
  if (!m->batched) m->B = lc_int(L, 1);
  int64_t rows = lc_const(m->M);
  /* The packed panel buffer needs a known column count. */
  bool few = (rows >= 0 && rows <= FEW_ROWS) || lc_const(m->N) < 0;
  if (few && lc_fast_math(L)) {
    few_rows(L, m, out);
  } else if (few) {
    few_rows_exact(L, m, out);
  } else if (rows < 0) { /* rows known at run time: both schedules */
    lc_open(L);
    if (lc_fast_math(L))
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

LTensor *compute_dense(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim != 2 || in[1]->ndim != 2) return lc_fail(L, "nn.dense of rank != 2");
  Mm m = {.a = in[0],
          .b = in[1],
          .tb = true,
          .M = in[0]->shape[0],
          .N = in[1]->shape[0],
          .K = in[0]->shape[1]};
  return product(L, call, &m);
}

LTensor *compute_matmul(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->ndim != 2 || in[1]->ndim != 2) return lc_fail(L, "nn.matmul of rank != 2");
  bool ta = op_attr_bool(call, "transpose_a"), tb = op_attr_bool(call, "transpose_b");
  Mm m = {.a = in[0],
          .b = in[1],
          .ta = ta,
          .tb = tb,
          .M = in[0]->shape[ta ? 1 : 0],
          .N = in[1]->shape[tb ? 0 : 1],
          .K = in[0]->shape[ta ? 0 : 1]};
  return product(L, call, &m);
}

LTensor *compute_batch_matmul(LowerCx *L, const Expr *call, LTensor **in, int nin) {
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

/* softmax / log_softmax: three passes along the axis in float64 (max, sum
 * of exp, result) in the reference's order so results agree exactly; a NaN
 * becomes the maximum, as in the reference. */
static LTensor *softmax(LowerCx *L, const Expr *call, LTensor **in, int nin, bool log_) {
  const LTensor *x = in[0];
  int n = x->ndim;
  if (nin != 1 || !dtype_is_float(x->dtype) || !lc_dtype_ok(x->dtype) || n == 0)
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
  bool first = true;
  for (int d = n; d-- > 0;) {
    if (d == axis) continue;
    int before = 0;
    for (int e = 0; e < d; e++) before += e != axis;
    first = before == 0;
    lc_for(L, first ? LOOP_PARALLEL : LOOP_GRID, v[d], x->shape[d], lc_close(L));
  }
  (void)nouter;
  return lc_from_buffer(L, call, out);
}

LTensor *compute_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return softmax(L, c, in, n, false);
}
LTensor *compute_log_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return softmax(L, c, in, n, true);
}

/* ───────────────────────────── conv2d ───────────────────────────── */

typedef struct Conv {
  const LTensor *x, *w;
  int64_t s[2], p[2], d[2]; /* p: the padding before (top, left); the rest sizes the output */
  PrimExpr *H, *W, *C, *KH, *KW, *OH, *OW;
  PrimExpr *cg, *og; /* channels per group: input (the weight's I), output */
  int64_t groups;
} Conv;

/* The conv2d attributes through the relation's readers (ops/nn_int.h):
 * strides, dilation, the padding before each dim, and the layouts, which
 * the relation allows only as NCHW / OIHW. */
static bool conv_attrs(LowerCx *L, const Expr *call, Conv *c) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow w = {.S = 2};
  if (!nn_window_attrs(&cx, call->u.call.attrs, &w))
    return lc_fail(L, "nn.conv2d: %s", cx.err), false;
  for (int i = 0; i < 2; i++) c->s[i] = w.stride[i], c->d[i] = w.dil[i], c->p[i] = w.lo[i];
  const char *dl = op_attr_str(lc_arena(L), call, "data_layout");
  const char *kl = op_attr_str(lc_arena(L), call, "kernel_layout");
  const char *ol = op_attr_str(lc_arena(L), call, "out_layout");
  if (strcmp(dl, "NCHW") || strcmp(kl, "OIHW") || (ol[0] && strcmp(ol, "NCHW")))
    return lc_fail(L, "nn.conv2d: layout"), false;
  return true;
}

/* Input position of output o and tap t along one dim. */
static PrimExpr *conv_pos(LowerCx *L, const Conv *c, int dim, PrimExpr *o, PrimExpr *t) {
  PrimExpr *p = lc_bin(L, PB_SUB, mul(L, o, lc_int(L, c->s[dim])), lc_int(L, c->p[dim]));
  return add(L, p, mul(L, t, lc_int(L, c->d[dim])));
}

static PrimExpr *inside(LowerCx *L, PrimExpr *p, PrimExpr *size) {
  return lc_bin(L, PB_AND, lc_bin(L, PB_GE, p, lc_int(L, 0)), lc_bin(L, PB_LT, p, size));
}

/* for ci, a (if the row is inside), b, ow: acc[ow] += w * x (skipping
 * columns outside), the reference's order for each output pixel. */
static void conv_row(LowerCx *L, const Conv *c, Buffer *acc, PrimExpr *n, PrimExpr *o,
                     PrimExpr *oh) {
  TirVar *ci = lc_tvar(L, "c", c->cg), *a = lc_tvar(L, "a", c->KH), *b = lc_tvar(L, "b", c->KW),
         *ow = lc_tvar(L, "ow", c->OW);
  PrimExpr *h = conv_pos(L, c, 0, oh, V(L, a)), *wp = conv_pos(L, c, 1, V(L, ow), V(L, b));
  PrimExpr *wc = lc_call(L, PI_MAX, lc_int(L, 0),
                         lc_call(L, PI_MIN, wp, lc_bin(L, PB_SUB, c->W, lc_int(L, 1)), NULL), NULL);
  /* the input channel: the group's first (o / og * cg) plus ci */
  PrimExpr *first = c->groups == 1 ? lc_int(L, 0) : mul(L, lc_bin(L, PB_DIV, o, c->og), c->cg);
  PrimExpr *xi[4] = {n, add(L, first, V(L, ci)), h, wc}, *wi[4] = {o, V(L, ci), V(L, a), V(L, b)};
  PrimExpr *ai = V(L, ow), *cur = lc_load(L, acc, 1, &ai);
  PrimExpr *prod = mul(L, lc_cast(L, DT_FLOAT64, lc_at(L, c->w, wi)),
                       lc_cast(L, DT_FLOAT64, lc_at(L, c->x, xi)));
  for (int i = 0; i < 5; i++) lc_open(L); /* ci, a, if, b, ow */
  lc_store(L, acc, 1, &ai, lc_call(L, PI_SELECT, inside(L, wp, c->W), add(L, cur, prod), cur));
  lc_for(L, LOOP_VECTORIZED, ow, c->OW, lc_close(L));
  lc_for(L, LOOP_RANGE, b, c->KW, lc_close(L));
  lc_if(L, inside(L, h, c->H), lc_close(L));
  lc_for(L, LOOP_RANGE, a, c->KH, lc_close(L));
  lc_for(L, LOOP_RANGE, ci, c->cg, lc_close(L));
}

/* nn.conv2d: for each output row a float64 accumulator row is built by
 * conv_row, then stored vectorized; output channels run in parallel.  The
 * output size must be static (it sizes the accumulator). */
LTensor *compute_conv2d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Conv c = {.x = in[0], .w = in[1]};
  if (nin != 2 || in[0]->ndim != 4 || in[1]->ndim != 4 || !conv_attrs(L, call, &c)) return NULL;
  DType dt = in[0]->dtype;
  if (!dtype_is_float(dt) || !lc_dtype_ok(dt) || in[1]->dtype != dt)
    return lc_fail(L, "nn.conv2d on %s", dtype_name(dt));
  const Type *ty = lc_result_type(call);
  if (ty->u.tensor.dims[2].kind != DIM_CONST || ty->u.tensor.dims[3].kind != DIM_CONST)
    return lc_fail(L, "nn.conv2d: output size known only at run time");
  c.C = in[0]->shape[1], c.H = in[0]->shape[2], c.W = in[0]->shape[3];
  c.KH = in[1]->shape[2], c.KW = in[1]->shape[3];
  c.groups = op_attr_int(call, "groups");
  c.cg = in[1]->shape[1];
  c.og = lc_bin(L, PB_DIV, in[1]->shape[0], lc_int(L, c.groups));
  c.OH = lc_int(L, ty->u.tensor.dims[2].value), c.OW = lc_int(L, ty->u.tensor.dims[3].value);
  PrimExpr *N = in[0]->shape[0], *O = in[1]->shape[0];
  PrimExpr *shape[4] = {N, O, c.OH, c.OW};
  Buffer *out = lc_result_buffer(L, call, dt, 4, shape);
  if (!out) return NULL;
  TirVar *n = lc_tvar(L, "n", N), *o = lc_tvar(L, "o", O), *oh = lc_tvar(L, "oh", c.OH),
         *ow = lc_tvar(L, "ow", c.OW);
  for (int i = 0; i < 3; i++) lc_open(L); /* n, o, oh */
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT64, 1, &c.OW);
  conv_row(L, &c, acc, V(L, n), V(L, o), V(L, oh));
  lc_open(L);
  PrimExpr *oi[4] = {V(L, n), V(L, o), V(L, oh), V(L, ow)}, *ai = V(L, ow);
  lc_store(L, out, 4, oi, lc_load(L, acc, 1, &ai));
  lc_for(L, LOOP_VECTORIZED, ow, c.OW, lc_close(L));
  lc_for(L, LOOP_RANGE, oh, c.OH, lc_close(L));
  lc_for(L, LOOP_PARALLEL, o, O, lc_close(L));
  lc_for(L, LOOP_RANGE, n, N, lc_close(L));
  return lc_from_buffer(L, call, out);
}

/* ───────────────────────── fast_softmax, prelu ───────────────────────── */

/* nn.fast_softmax: the softmax rule (the reference kernel computes an exact
 * softmax too). */
LTensor *compute_fast_softmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return softmax(L, c, in, n, false);
}

/* x > 0 ? x : x * alpha[c], c the index along the axis (NaN stays NaN). */
static PrimExpr *at_prelu(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *x = lc_at(L, t->in[0], idx), *j = idx[t->aux[0]];
  PrimExpr *pos = lc_bin(L, PB_GT, x, lc_lit(L, x->dtype, 0));
  return lc_call(L, PI_SELECT, pos, x, mul(L, x, lc_at(L, t->in[1], &j)));
}

LTensor *compute_prelu(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || in[0]->dtype != in[1]->dtype || !lc_dtype_ok(in[0]->dtype) ||
      in[0]->dtype == DT_BOOL || in[1]->ndim != 1)
    return lc_fail(L, "nn.prelu on these operands");
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += in[0]->ndim;
  if (axis < 0 || axis >= in[0]->ndim) return lc_fail(L, "nn.prelu: axis out of range");
  LTensor *t = lc_tensor(L, call, in[0]->dtype, in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_prelu, t->aux[0] = axis;
  return t;
}
