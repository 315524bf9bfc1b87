/* compute_reduce.c — compute rules (ops/compute.h) of sum, mean, prod,
 * max, min, argmax, argmin (axis / keepdims / exclude as the type relation
 * reads them; argmax/argmin scan in order exactly as the reference does).
 *
 * Materialized: loops over the kept axes (the outermost parallel), an
 * accumulator buffer of LANES partial results allocated inside them, and
 * the reduced axes inside.  When the innermost input axis is reduced it is
 * split into LANES-wide vectorized chunks (partial sums, combined at the
 * end) plus a scalar tail, so the reduction vectorizes.  Float sums,
 * means and products accumulate in float64 (like the reference kernels;
 * the order differs, so results agree within rounding); max and min are
 * exact; integer sums wrap in the dtype as the reference's do. */
#include <math.h>
#include <stdint.h>

#include "ops/compute.h"
#include "ops/families.h"

enum { LANES = 8 };

typedef enum RedKind { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN } RedKind;

typedef struct Red {
  RedKind k;
  DType dt, acc;
  const LTensor *x;
  bool red[TENSOR_MAX_RANK];
  TirVar *v[TENSOR_MAX_RANK]; /* one loop variable per input axis */
} Red;

static PrimExpr *int_lit(LowerCx *L, DType dt, int64_t v) {
  PrimExpr *e = lc_lit(L, dt, 0);
  e->u.i = v;
  return e;
}

static PrimExpr *init_value(LowerCx *L, const Red *R) {
  bool fl = dtype_is_float(R->acc);
  bool i32 = R->acc == DT_INT32;
  switch (R->k) {
    case R_SUM:
    case R_MEAN:
      return lc_lit(L, R->acc, 0);
    case R_PROD:
      return lc_lit(L, R->acc, 1);
    case R_MAX:
      return fl ? lc_lit(L, R->acc, -INFINITY) : int_lit(L, R->acc, i32 ? INT32_MIN : INT64_MIN);
    case R_MIN:
      return fl ? lc_lit(L, R->acc, INFINITY) : int_lit(L, R->acc, i32 ? INT32_MAX : INT64_MAX);
  }
  RLY_UNREACHABLE();
}

static PrimExpr *combine(LowerCx *L, const Red *R, PrimExpr *a, PrimExpr *b) {
  switch (R->k) {
    case R_SUM:
    case R_MEAN:
      return lc_bin(L, PB_ADD, a, b);
    case R_PROD:
      return lc_bin(L, PB_MUL, a, b);
    case R_MAX:
      return lc_call(L, PI_MAX, a, b, NULL);
    case R_MIN:
      return lc_call(L, PI_MIN, a, b, NULL);
  }
  RLY_UNREACHABLE();
}

/* acc[lane] = acc[lane] (op) x[index with the last axis = last]. */
static void accumulate(LowerCx *L, const Red *R, Buffer *acc, PrimExpr *lane, PrimExpr *last) {
  PrimExpr *idx[TENSOR_MAX_RANK];
  int n = R->x->ndim;
  for (int d = 0; d < n; d++) idx[d] = lc_var(L, R->v[d]);
  if (last) idx[n - 1] = last;
  PrimExpr *x = lc_cast(L, R->acc, lc_at(L, R->x, idx));
  lc_store(L, acc, 1, &lane, combine(L, R, lc_load(L, acc, 1, &lane), x));
}

/* The innermost reduced axis when it is the input's last: LANES-wide
 * chunks, then the tail. */
static void reduce_last_vectorized(LowerCx *L, const Red *R, Buffer *acc) {
  int n = R->x->ndim;
  PrimExpr *ext = R->x->shape[n - 1], *w = lc_int(L, LANES);
  PrimExpr *full = lc_bin(L, PB_DIV, ext, w);
  TirVar *ko = lc_tvar(L, "k", full), *l = lc_tvar(L, "l", w), *t = lc_tvar(L, "k", full);
  lc_open(L);
  lc_open(L);
  PrimExpr *lane = lc_var(L, l);
  accumulate(L, R, acc, lane, lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, lc_var(L, ko), w), lane));
  lc_for(L, LOOP_VECTORIZED, l, w, lc_close(L));
  lc_for(L, LOOP_RANGE, ko, full, lc_close(L));
  PrimExpr *done = lc_bin(L, PB_MUL, full, w);
  lc_open(L);
  accumulate(L, R, acc, lc_int(L, 0), lc_bin(L, PB_ADD, done, lc_var(L, t)));
  lc_for(L, LOOP_RANGE, t, lc_bin(L, PB_SUB, ext, done), lc_close(L));
}

/* The reduced loops around the accumulation; true when vectorized. */
static bool reduce_loops(LowerCx *L, const Red *R, Buffer *acc) {
  int n = R->x->ndim, last = -1;
  for (int d = 0; d < n; d++)
    if (R->red[d]) last = d;
  bool vec = last == n - 1 && last >= 0;
  int nloops = 0;
  for (int d = 0; d < n; d++)
    if (R->red[d] && !(vec && d == last)) lc_open(L), nloops++;
  if (vec)
    reduce_last_vectorized(L, R, acc);
  else
    accumulate(L, R, acc, lc_int(L, 0), NULL);
  for (int d = n; d-- > 0;)
    if (R->red[d] && !(vec && d == last))
      lc_for(L, LOOP_GRID, R->v[d], R->x->shape[d], lc_close(L));
  (void)nloops;
  return vec;
}

/* Combines the partial results pairwise (a tree, in a fixed order) and
 * divides by the element count for a mean. */
static PrimExpr *finish(LowerCx *L, const Red *R, Buffer *acc, bool vec) {
  PrimExpr *parts[LANES];
  int np = vec ? LANES : 1;
  for (int i = 0; i < np; i++) {
    PrimExpr *ix = lc_int(L, i);
    parts[i] = lc_load(L, acc, 1, &ix);
  }
  for (int w = 1; w < np; w *= 2)
    for (int i = 0; i + w < np; i += 2 * w) parts[i] = combine(L, R, parts[i], parts[i + w]);
  PrimExpr *total = parts[0];
  if (R->k == R_MEAN) {
    PrimExpr *count = lc_int(L, 1);
    for (int d = 0; d < R->x->ndim; d++)
      if (R->red[d]) count = lc_mul(L, count, R->x->shape[d]);
    total = lc_bin(L, PB_DIV, total, lc_cast(L, R->acc, count));
  }
  return total;
}

/* The body inside the kept loops: allocate, initialize, reduce, store. */
static void reduce_body(LowerCx *L, const Red *R, Buffer *out, bool keep) {
  PrimExpr *w = lc_int(L, LANES);
  Buffer *acc = lc_alloc(L, "acc", R->acc, 1, &w);
  TirVar *l = lc_tvar(L, "l", w);
  lc_open(L);
  PrimExpr *lane = lc_var(L, l);
  lc_store(L, acc, 1, &lane, init_value(L, R));
  lc_for(L, LOOP_VECTORIZED, l, w, lc_close(L));
  bool vec = reduce_loops(L, R, acc);
  PrimExpr *oidx[TENSOR_MAX_RANK];
  int no = 0;
  for (int d = 0; d < R->x->ndim; d++)
    if (!R->red[d])
      oidx[no++] = lc_var(L, R->v[d]);
    else if (keep)
      oidx[no++] = lc_int(L, 0);
  lc_store(L, out, no, oidx, lc_cast(L, R->dt, finish(L, R, acc, vec)));
}

static bool reduced_axes(LowerCx *L, const Expr *call, int n, bool *red) {
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  for (int d = 0; d < n; d++) red[d] = na < 0;
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n) return lc_fail(L, "reduce: axis out of range"), false;
    red[a] = true;
  }
  if (na >= 0 && op_attr_bool(call, "exclude"))
    for (int d = 0; d < n; d++) red[d] = !red[d];
  return true;
}

/* The rule of sum, mean, prod, max, min: loops over the kept axes around
 * reduce_body.  max/min of an empty axis is refused, since the reference
 * reports it as an error at run time. */
static LTensor *reduce(LowerCx *L, const Expr *call, LTensor **in, int nin, RedKind k) {
  Red R = {.k = k, .x = in[0], .dt = in[0]->dtype};
  if (nin != 1 || !lc_dtype_ok(R.dt) || R.dt == DT_BOOL) return lc_fail(L, "reduce of this dtype");
  if (k == R_MEAN && !dtype_is_float(R.dt)) return lc_fail(L, "integer mean");
  R.acc = dtype_is_float(R.dt) && k != R_MAX && k != R_MIN ? DT_FLOAT64 : R.dt;
  int n = in[0]->ndim;
  if (!reduced_axes(L, call, n, R.red)) return NULL;
  bool keep = op_attr_bool(call, "keepdims");
  PrimExpr *oshape[TENSOR_MAX_RANK];
  int no = 0, kept[TENSOR_MAX_RANK], nk = 0;
  for (int d = 0; d < n; d++) {
    R.v[d] = lc_tvar(L, "r", in[0]->shape[d]);
    if (!R.red[d])
      oshape[no++] = in[0]->shape[d], kept[nk++] = d;
    else if (keep)
      oshape[no++] = lc_int(L, 1);
    if (R.red[d] && (k == R_MAX || k == R_MIN) && lc_const(in[0]->shape[d]) == 0)
      return lc_fail(L, "max/min over an empty axis");
  }
  Buffer *out = lc_result_buffer(L, call, R.dt, no, oshape);
  if (!out) return NULL;
  for (int i = 0; i < nk; i++) lc_open(L);
  reduce_body(L, &R, out, keep);
  for (int i = nk; i-- > 0;)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_GRID, R.v[kept[i]], in[0]->shape[kept[i]], lc_close(L));
  return lc_from_buffer(L, call, out);
}

/* ───────────────────────────── argmax, argmin ───────────────────────────── */

/* One step of the reference's scan (interp/kernels_reduce.c argext): the
 * best so far is (bv, b); v at flat position i replaces it when it is more
 * extreme, or equal with select_last_index, and NaN wins (the first NaN, or
 * the last with select_last_index). */
static PrimExpr *arg_takes(LowerCx *L, PrimExpr *v, PrimExpr *bv, bool want_max, bool last) {
  PrimExpr *better = lc_bin(L, want_max ? PB_GT : PB_LT, v, bv);
  if (last) better = lc_bin(L, PB_OR, better, lc_bin(L, PB_EQ, v, bv));
  if (!dtype_is_float(v->dtype)) return better;
  PrimExpr *vn = lc_bin(L, PB_NE, v, v), *bn = lc_bin(L, PB_NE, bv, bv);
  PrimExpr *nan_case = last ? vn : lc_bin(L, PB_AND, vn, lc_not(L, bn));
  PrimExpr *num_case = lc_bin(L, PB_AND, lc_not(L, vn), lc_bin(L, PB_AND, lc_not(L, bn), better));
  return lc_bin(L, PB_OR, nan_case, num_case);
}

/* argmax/argmin over the reduced axes in order, keeping the best value and
 * its flat index; the first element seeds both, so no sentinel is needed. */
static void arg_body(LowerCx *L, const Red *R, Buffer *out, bool keep, bool want_max, bool last) {
  int n = R->x->ndim;
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0);
  Buffer *bv = lc_alloc(L, "best", R->dt, 1, &one), *bi = lc_alloc(L, "at", DT_INT64, 1, &one);
  PrimExpr *idx[TENSOR_MAX_RANK], *lin = lc_int(L, 0);
  for (int d = 0; d < n; d++) idx[d] = R->red[d] ? zero : lc_var(L, R->v[d]);
  lc_store(L, bv, 1, &zero, lc_at(L, R->x, idx));
  for (int d = 0; d < n; d++) {
    idx[d] = lc_var(L, R->v[d]);
    if (R->red[d]) lin = lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, lin, R->x->shape[d]), idx[d]);
  }
  for (int d = 0; d < n; d++)
    if (R->red[d]) lc_open(L);
  PrimExpr *v = lc_at(L, R->x, idx), *b = lc_load(L, bv, 1, &zero);
  PrimExpr *take = arg_takes(L, v, b, want_max, last);
  lc_store(L, bi, 1, &zero,
           lc_call(L, PI_SELECT, take, lc_cast(L, DT_INT64, lin), lc_load(L, bi, 1, &zero)));
  lc_store(L, bv, 1, &zero, lc_call(L, PI_SELECT, take, v, b));
  for (int d = n; d-- > 0;)
    if (R->red[d]) lc_for(L, LOOP_GRID, R->v[d], R->x->shape[d], lc_close(L));
  PrimExpr *oidx[TENSOR_MAX_RANK];
  int no = 0;
  for (int d = 0; d < n; d++)
    if (!R->red[d])
      oidx[no++] = lc_var(L, R->v[d]);
    else if (keep)
      oidx[no++] = zero;
  lc_store(L, out, no, oidx, lc_cast(L, DT_INT32, lc_load(L, bi, 1, &zero)));
}

/* The rule of argmax/argmin.  Reduced axes must be known and non-empty:
 * an empty one is a run-time error in the reference, which the loops
 * could not reproduce. */
static LTensor *argreduce(LowerCx *L, const Expr *call, LTensor **in, int nin, bool want_max) {
  Red R = {.x = in[0], .dt = in[0]->dtype};
  if (nin != 1 || !lc_dtype_ok(R.dt) || R.dt == DT_BOOL) return lc_fail(L, "argmax of this dtype");
  int n = in[0]->ndim;
  if (!reduced_axes(L, call, n, R.red)) return NULL;
  bool keep = op_attr_bool(call, "keepdims");
  bool last = op_attr_bool(call, "select_last_index");
  PrimExpr *oshape[TENSOR_MAX_RANK];
  int no = 0, kept[TENSOR_MAX_RANK], nk = 0;
  for (int d = 0; d < n; d++) {
    R.v[d] = lc_tvar(L, "r", in[0]->shape[d]);
    if (!R.red[d])
      oshape[no++] = in[0]->shape[d], kept[nk++] = d;
    else if (keep)
      oshape[no++] = lc_int(L, 1);
    if (R.red[d] && lc_const(in[0]->shape[d]) != -1 && lc_const(in[0]->shape[d]) < 1)
      return lc_fail(L, "argmax over an empty axis");
    if (R.red[d] && lc_const(in[0]->shape[d]) == -1)
      return lc_fail(L, "argmax over an axis known at run time (empty is an error)");
  }
  Buffer *out = lc_result_buffer(L, call, DT_INT32, no, oshape);
  if (!out) return NULL;
  for (int i = 0; i < nk; i++) lc_open(L);
  arg_body(L, &R, out, keep, want_max, last);
  for (int i = nk; i-- > 0;)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_GRID, R.v[kept[i]], in[0]->shape[kept[i]], lc_close(L));
  return lc_from_buffer(L, call, out);
}

LTensor *compute_argmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return argreduce(L, c, in, n, true);
}
LTensor *compute_argmin(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return argreduce(L, c, in, n, false);
}

LTensor *compute_sum(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_SUM);
}
LTensor *compute_mean(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MEAN);
}
LTensor *compute_prod(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_PROD);
}
LTensor *compute_max(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MAX);
}
LTensor *compute_min(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MIN);
}
