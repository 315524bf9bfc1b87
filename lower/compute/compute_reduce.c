/* compute_reduce.c — compute rules (lower/compute/compute.h) of sum, mean, prod,
 * max, min, all, any, argmax, argmin, logsumexp, variance, std and the
 * scans cumsum, cumprod (axis / keepdims / exclude as the type relation
 * reads them; argmax/argmin scan in order exactly as the reference does).
 *
 * Materialized: loops over the kept axes (the outermost parallel), an
 * accumulator buffer of LANES partial results allocated inside them, and
 * the reduced axes inside.  When the innermost input axis is reduced it is
 * split into LANES-wide vectorized chunks (partial sums, combined at the
 * end) plus a scalar tail, so the reduction vectorizes.  Float sums,
 * means and products accumulate in float64 (like the reference kernels;
 * the order differs, so results agree within rounding); max, min, all and
 * any are exact; integer sums wrap in the dtype as the reference's do, and
 * an integer mean divides that sum in 64 bits (unsigned for unsigned
 * dtypes); a float16 result is rounded through float32 as the kernels'
 * float lane stores it, and float16 max/min compare in float32.
 * logsumexp, variance and std make passes over the reduced axes in order
 * (max then the sum of exp(x - max); mean then the sum of squares of
 * x - mean), in float64 and in the reference kernels' order.  The scans
 * run along their axis in order, accumulating in the result dtype as the
 * kernels do.  The normalizations (layer_norm, instance_norm, group_norm,
 * l2_normalize) loop over their groups and make the kernels' passes per
 * group in float64, in the kernels' order. */
#include <math.h>
#include <stdint.h>

#include "lower/compute/compute.h"

enum { LANES = 8 };

typedef enum RedKind { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_ALL, R_ANY } RedKind;

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
  switch (R->k) {
    case R_SUM:
    case R_MEAN:
      return lc_lit(L, R->acc, 0);
    case R_PROD:
      return lc_lit(L, R->acc, 1);
    case R_MAX:
      return fl ? lc_lit(L, R->acc, -INFINITY) : int_lit(L, R->acc, lc_int_min(R->acc));
    case R_MIN:
      return fl ? lc_lit(L, R->acc, INFINITY) : int_lit(L, R->acc, lc_int_max(R->acc));
    case R_ALL:
    case R_ANY:
      return lc_lit(L, DT_BOOL, R->k == R_ALL);
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
    case R_ALL:
      return lc_bin(L, PB_AND, a, b);
    case R_ANY:
      return lc_bin(L, PB_OR, a, b);
  }
  RLY_UNREACHABLE();
}

/* An element as the accumulator takes it: all/any test x != 0 (NaN is
 * nonzero), the others convert to the accumulator's dtype. */
static PrimExpr *acc_input(LowerCx *L, const Red *R, PrimExpr *x) {
  if (R->k != R_ALL && R->k != R_ANY) return lc_cast(L, R->acc, x);
  return x->dtype == DT_BOOL ? x : lc_bin(L, PB_NE, x, lc_lit(L, x->dtype, 0));
}

/* acc[lane] = acc[lane] (op) x[index with the last axis = last]. */
static void accumulate(LowerCx *L, const Red *R, Buffer *acc, PrimExpr *lane, PrimExpr *last) {
  PrimExpr *idx[TENSOR_MAX_RANK];
  int n = R->x->ndim;
  for (int d = 0; d < n; d++) idx[d] = lc_var(L, R->v[d]);
  if (last) idx[n - 1] = last;
  PrimExpr *x = acc_input(L, R, lc_at(L, R->x, idx));
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
    /* an integer mean divides the wrapped sum in 64 bits, as the kernel */
    DType q = !dtype_is_int(R->acc) ? R->acc : dtype_class(R->acc) == 'u' ? DT_UINT64 : DT_INT64;
    total = lc_bin(L, PB_DIV, lc_cast(L, q, total), lc_cast(L, q, count));
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
  /* a float16 result goes through float, as the kernels' float lane stores it */
  PrimExpr *total = lc_cast(L, lc_lane_dtype(R->dt), finish(L, R, acc, vec));
  lc_store(L, out, no, oidx, lc_cast(L, R->dt, total));
}

/* The reduced axes of a rank-n input; `exclude`: whether the op has that
 * attribute (logsumexp has not). */
static bool reduced_axes(LowerCx *L, const Expr *call, int n, bool *red, bool exclude) {
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  for (int d = 0; d < n; d++) red[d] = na < 0;
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n) return lc_fail(L, "reduce: axis out of range"), false;
    red[a] = true;
  }
  if (na >= 0 && exclude && op_attr_bool(call, "exclude"))
    for (int d = 0; d < n; d++) red[d] = !red[d];
  return true;
}

/* The rule of sum, mean, prod, max, min, all, any: loops over the kept
 * axes around reduce_body.  max/min of an empty axis is refused, since the
 * reference reports it as an error at run time. */
static LTensor *reduce(LowerCx *L, const Expr *call, LTensor **in, int nin, RedKind k) {
  Red R = {.k = k, .x = in[0], .dt = in[0]->dtype};
  bool logical = k == R_ALL || k == R_ANY;
  if (nin != 1 || !lc_elem_dtype_ok(R.dt) || (R.dt == DT_BOOL && !logical))
    return lc_fail(L, "reduce of this dtype");
  bool extreme = k == R_MAX || k == R_MIN;
  R.acc = logical ? DT_BOOL : dtype_is_float(R.dt) && !extreme ? DT_FLOAT64 : lc_lane_dtype(R.dt);
  int n = in[0]->ndim;
  if (!reduced_axes(L, call, n, R.red, true)) return NULL;
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

/* One step of the reference's scan (kernels/kernels_reduce.c argext): the
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
  if (nin != 1 || !lc_elem_dtype_ok(R.dt) || R.dt == DT_BOOL)
    return lc_fail(L, "argmax of this dtype");
  int n = in[0]->ndim;
  if (!reduced_axes(L, call, n, R.red, true)) return NULL;
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

static LTensor *compute_argmax(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return argreduce(L, c, in, n, true);
}
static LTensor *compute_argmin(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return argreduce(L, c, in, n, false);
}

static LTensor *compute_sum(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_SUM);
}
static LTensor *compute_mean(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MEAN);
}
static LTensor *compute_prod(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_PROD);
}
static LTensor *compute_max(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MAX);
}
static LTensor *compute_min(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_MIN);
}
static LTensor *compute_all(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_ALL);
}
static LTensor *compute_any(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return reduce(L, c, in, n, R_ANY);
}

/* ───────────────────── logsumexp, variance, std ───────────────────── */

/* A pass over the reduced axes in order: fresh loop variables for them,
 * the kept axes at R->v; body(idx) emits the work at the input index idx. */
typedef void PassBody(LowerCx *L, const Red *R, PrimExpr **idx, void *u);

static void reduced_pass(LowerCx *L, const Red *R, PassBody *body, void *u) {
  int n = R->x->ndim;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    v[d] = R->red[d] ? lc_tvar(L, "k", R->x->shape[d]) : R->v[d];
    idx[d] = lc_var(L, v[d]);
    if (R->red[d]) lc_open(L);
  }
  body(L, R, idx, u);
  for (int d = n; d-- > 0;)
    if (R->red[d]) lc_for(L, LOOP_RANGE, v[d], R->x->shape[d], lc_close(L));
}

/* A one-element accumulator buffer, initialized to init. */
static Buffer *acc1(LowerCx *L, DType dt, PrimExpr *init) {
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0);
  Buffer *b = lc_alloc(L, "acc", dt, 1, &one);
  lc_store(L, b, 1, &zero, init);
  return b;
}

static PrimExpr *acc_get(LowerCx *L, Buffer *b) {
  PrimExpr *zero = lc_int(L, 0);
  return lc_load(L, b, 1, &zero);
}

static void acc_set(LowerCx *L, Buffer *b, PrimExpr *v) {
  PrimExpr *zero = lc_int(L, 0);
  lc_store(L, b, 1, &zero, v);
}

/* The product of the reduced dims less `minus`, at least 0, as int64
 * (folded when the dims are constants). */
static PrimExpr *reduced_count(LowerCx *L, const Red *R, int64_t minus) {
  PrimExpr *count = lc_int(L, 1);
  for (int d = 0; d < R->x->ndim; d++)
    if (R->red[d]) count = lc_mul(L, count, R->x->shape[d]);
  int64_t k = lc_const(count);
  if (k >= 0) return lc_lit(L, DT_INT64, (double)(k > minus ? k - minus : 0));
  count = lc_bin(L, PB_SUB, lc_cast(L, DT_INT64, count), lc_lit(L, DT_INT64, (double)minus));
  return lc_call(L, PI_MAX, count, lc_lit(L, DT_INT64, 0), NULL);
}

/* The accumulators and values the passes of the statistics share. */
typedef struct Stats {
  Buffer *acc;
  PrimExpr *center; /* max (logsumexp) or mean (variance), float64; NULL in the first pass */
  const LTensor *mean;
  PrimExpr **data_shape; /* what the mean broadcasts to */
} Stats;

static PrimExpr *x64(LowerCx *L, const Red *R, PrimExpr **idx) {
  return lc_cast(L, DT_FLOAT64, lc_at(L, R->x, idx));
}

/* The dtype logsumexp's max and result are in, as the kernels': a float
 * dtype's lane (float16 in float32), float64 for integers. */
static DType lse_dtype(DType dt) { return dtype_is_float(dt) ? lc_lane_dtype(dt) : DT_FLOAT64; }

/* logsumexp's passes: max in lse_dtype (NaN wins), then sum of exp. */
static void lse_max(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  PrimExpr *x = lc_cast(L, lse_dtype(R->dt), lc_at(L, R->x, idx));
  acc_set(L, S->acc, lc_call(L, PI_MAX, acc_get(L, S->acc), x, NULL));
}

static void lse_sum(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  PrimExpr *e = lc_call(L, PI_EXP, lc_bin(L, PB_SUB, x64(L, R, idx), S->center), NULL, NULL);
  acc_set(L, S->acc, lc_bin(L, PB_ADD, acc_get(L, S->acc), e));
}

/* variance's passes: the sum of x (when no mean is given), then the sum
 * of (x - mean)^2. */
static void var_sum(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  acc_set(L, S->acc, lc_bin(L, PB_ADD, acc_get(L, S->acc), x64(L, R, idx)));
}

static void var_squares(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  PrimExpr *m = S->center;
  if (S->mean) m = lc_cast(L, DT_FLOAT64, lc_bcast_at(L, S->mean, R->x->ndim, S->data_shape, idx));
  PrimExpr *d = lc_bin(L, PB_SUB, x64(L, R, idx), m);
  acc_set(L, S->acc, lc_bin(L, PB_ADD, acc_get(L, S->acc), lc_bin(L, PB_MUL, d, d)));
}

/* ── integer variance ── */

/* The 64-bit lane integer statistics compute in (the kernel's): uint64
 * for unsigned dtypes (unsigned divisions), int64 for signed ones. */
static DType int_lane(DType dt) { return dtype_class(dt) == 'u' ? DT_UINT64 : DT_INT64; }

/* e wrapped in dtype dt and extended back to its lane. */
static PrimExpr *wrap_lane(LowerCx *L, DType dt, PrimExpr *e) {
  return lc_cast(L, int_lane(dt), lc_cast(L, dt, e));
}

static PrimExpr *xlane(LowerCx *L, const Red *R, PrimExpr **idx) {
  return lc_cast(L, int_lane(R->dt), lc_at(L, R->x, idx));
}

static void int_sum(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  acc_set(L, S->acc, lc_bin(L, PB_ADD, acc_get(L, S->acc), xlane(L, R, idx)));
}

/* The wrapped square of the wrapped difference from the mean. */
static void int_squares(LowerCx *L, const Red *R, PrimExpr **idx, void *u) {
  Stats *S = u;
  DType ln = int_lane(R->dt);
  PrimExpr *m = S->center;
  if (S->mean) m = lc_cast(L, ln, lc_bcast_at(L, S->mean, R->x->ndim, S->data_shape, idx));
  PrimExpr *d = wrap_lane(L, R->dt, lc_bin(L, PB_SUB, xlane(L, R, idx), m));
  PrimExpr *sq = wrap_lane(L, R->dt, lc_bin(L, PB_MUL, d, d));
  acc_set(L, S->acc, lc_bin(L, PB_ADD, acc_get(L, S->acc), sq));
}

/* TVM's integer variance as the kernel computes it in 64 bits (and
 * mean_variance's rule, compute_misc.c): the mean (given, or the sum
 * wrapped in the dtype over the count, truncating), the wrapped squares of
 * the wrapped differences, summed and wrapped, over the count less
 * `unbiased`; std: its square root in float64, converted back by the cast
 * rules.  A count of 0 is refused before (the kernel's error). */
static PrimExpr *int_var_value(LowerCx *L, const Red *R, const Expr *call, const LTensor *mean,
                               bool std) {
  DType ln = int_lane(R->dt);
  PrimExpr *zero = lc_lit(L, ln, 0);
  Stats S = {.mean = mean, .data_shape = (PrimExpr **)R->x->shape};
  if (!mean) {
    S.acc = acc1(L, ln, zero);
    reduced_pass(L, R, int_sum, &S);
    PrimExpr *n = lc_cast(L, ln, reduced_count(L, R, 0));
    S.center = lc_bin(L, PB_DIV, wrap_lane(L, R->dt, acc_get(L, S.acc)), n);
  }
  S.acc = acc1(L, ln, zero);
  reduced_pass(L, R, int_squares, &S);
  PrimExpr *dof = lc_cast(L, ln, reduced_count(L, R, op_attr_bool(call, "unbiased")));
  PrimExpr *v = lc_bin(L, PB_DIV, wrap_lane(L, R->dt, acc_get(L, S.acc)), dof);
  if (std) v = lc_call(L, PI_SQRT, lc_cast(L, DT_FLOAT64, v), NULL, NULL);
  return lc_cast(L, R->dt, v);
}

typedef enum StatKind { S_LSE, S_VAR, S_STD } StatKind;

/* Whether the mean's dims are each the constant 1 or the data's dim (a
 * `?` that is 1 only at run time cannot be lowered to fixed indexing). */
static bool mean_fits(const LTensor *m, const LTensor *x) {
  if (m->ndim != x->ndim) return false;
  for (int d = 0; d < x->ndim; d++)
    if (lc_const(m->shape[d]) != 1 && !lc_same_dim(m->shape[d], x->shape[d])) return false;
  return true;
}

/* logsumexp of the reduced elements at the kept index: m = max (NaN and
 * infinities are the result), else log(sum(exp(x - m))) + m in float64,
 * rounded to lse_dtype, then converted to the dtype (float16 rounds twice,
 * integers truncate and saturate: the kernels' steps). */
static PrimExpr *lse_value(LowerCx *L, const Red *R) {
  DType ld = lse_dtype(R->dt);
  Stats S = {.acc = acc1(L, ld, lc_lit(L, ld, -INFINITY))};
  reduced_pass(L, R, lse_max, &S);
  PrimExpr *m = acc_get(L, S.acc);
  S.center = lc_cast(L, DT_FLOAT64, m);
  S.acc = acc1(L, DT_FLOAT64, lc_lit(L, DT_FLOAT64, 0));
  reduced_pass(L, R, lse_sum, &S);
  PrimExpr *r = lc_bin(L, PB_ADD, lc_call(L, PI_LOG, acc_get(L, S.acc), NULL, NULL), S.center);
  PrimExpr *finite = lc_bin(L, PB_LT, lc_call(L, PI_ABS, m, NULL, NULL),
                            lc_lit(L, ld, INFINITY)); /* false for NaN */
  return lc_cast(L, R->dt, lc_call(L, PI_SELECT, finite, lc_cast(L, ld, r), m));
}

/* variance (or std) at the kept index: sum of squares of x - mean over
 * max(n - unbiased, 0), in float64. */
static PrimExpr *var_value(LowerCx *L, const Red *R, const Expr *call, const LTensor *mean,
                           bool std) {
  PrimExpr *n = reduced_count(L, R, 0), *zero = lc_lit(L, DT_FLOAT64, 0);
  Stats S = {.mean = mean, .data_shape = (PrimExpr **)R->x->shape};
  if (!mean) {
    S.acc = acc1(L, DT_FLOAT64, zero);
    reduced_pass(L, R, var_sum, &S);
    S.center = lc_bin(L, PB_DIV, acc_get(L, S.acc), lc_cast(L, DT_FLOAT64, n));
  }
  S.acc = acc1(L, DT_FLOAT64, zero);
  reduced_pass(L, R, var_squares, &S);
  PrimExpr *dof = reduced_count(L, R, op_attr_bool(call, "unbiased"));
  PrimExpr *v = lc_bin(L, PB_DIV, acc_get(L, S.acc), lc_cast(L, DT_FLOAT64, dof));
  return lc_cast(L, R->dt, std ? lc_call(L, PI_SQRT, v, NULL, NULL) : v);
}

/* The rule of logsumexp, variance and std: loops over the kept axes, the
 * passes inside, one store.  Every numeric dtype: floats in float64,
 * integer variances in the dtype (int_var_value), integer logsumexp
 * through float64, as the kernels compute them. */
static LTensor *stats(LowerCx *L, const Expr *call, LTensor **in, int nin, StatKind k) {
  Red R = {.x = in[0], .dt = in[0]->dtype};
  if (nin < 1 || !lc_elem_dtype_ok(R.dt) || R.dt == DT_BOOL)
    return lc_fail(L, "statistics of bool tensors");
  if (nin == 2 && !mean_fits(in[1], in[0]))
    return lc_fail(L, "variance: a mean not known to broadcast");
  int n = in[0]->ndim;
  if (!reduced_axes(L, call, n, R.red, k != S_LSE)) return NULL;
  bool int_var = k != S_LSE && !dtype_is_float(R.dt);
  if (int_var && lc_const(reduced_count(L, &R, op_attr_bool(call, "unbiased"))) == 0)
    return lc_fail(L, "%s: an integer division by zero (no element)", call->u.call.fn->u.op.name);
  bool keep = op_attr_bool(call, "keepdims");
  PrimExpr *oshape[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK];
  int no = 0, kept[TENSOR_MAX_RANK], nk = 0;
  for (int d = 0; d < n; d++) {
    R.v[d] = lc_tvar(L, "r", in[0]->shape[d]);
    if (!R.red[d])
      oidx[no] = lc_var(L, R.v[d]), oshape[no++] = in[0]->shape[d], kept[nk++] = d;
    else if (keep)
      oidx[no] = lc_int(L, 0), oshape[no++] = lc_int(L, 1);
  }
  Buffer *out = lc_result_buffer(L, call, R.dt, no, oshape);
  if (!out) return NULL;
  for (int i = 0; i < nk; i++) lc_open(L);
  const LTensor *mean = nin == 2 ? in[1] : NULL;
  PrimExpr *v = k == S_LSE ? lse_value(L, &R)
                : int_var  ? int_var_value(L, &R, call, mean, k == S_STD)
                           : var_value(L, &R, call, mean, k == S_STD);
  lc_store(L, out, no, oidx, v);
  for (int i = nk; i-- > 0;)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_GRID, R.v[kept[i]], in[0]->shape[kept[i]], lc_close(L));
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_logsumexp(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return stats(L, c, in, n, S_LSE);
}
LTensor *compute_variance(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return stats(L, c, in, n, S_VAR);
}
static LTensor *compute_std(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return stats(L, c, in, n, S_STD);
}

/* ───────────────────────────── cumsum, cumprod ───────────────────────────── */

/* One step of a scan at input index idx, writing output index oidx:
 * inclusive: acc = acc op x, out = acc; exclusive: out = acc, then
 * acc = acc op x.  x is converted to the result dtype first. */
static void scan_step(LowerCx *L, Buffer *acc, bool prod, bool exclusive, const LTensor *x,
                      PrimExpr **idx, Buffer *out, int no, PrimExpr **oidx) {
  PrimExpr *v = lc_cast(L, out->dtype, lc_at(L, x, idx));
  PrimExpr *next = lc_bin(L, prod ? PB_MUL : PB_ADD, acc_get(L, acc), v);
  if (exclusive) lc_store(L, out, no, oidx, acc_get(L, acc));
  acc_set(L, acc, next);
  if (!exclusive) lc_store(L, out, no, oidx, acc_get(L, acc));
}

/* Along an axis: the other axes in loops (the outermost parallel), an
 * accumulator inside them, the axis innermost in order. */
static void scan_axis(LowerCx *L, const LTensor *x, int axis, bool prod, bool exclusive,
                      Buffer *out) {
  int n = x->ndim, nl = 0;
  TirVar *v[TENSOR_MAX_RANK] = {0};
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    v[d] = lc_tvar(L, d == axis ? "k" : "i", x->shape[d]);
    idx[d] = lc_var(L, v[d]);
    if (d != axis) lc_open(L), nl++;
  }
  Buffer *acc = acc1(L, out->dtype, lc_lit(L, out->dtype, prod));
  lc_open(L);
  scan_step(L, acc, prod, exclusive, x, idx, out, n, idx);
  lc_for(L, LOOP_RANGE, v[axis], x->shape[axis], lc_close(L));
  for (int d = n; d-- > 0;)
    if (d != axis) lc_for(L, --nl == 0 ? LOOP_PARALLEL : LOOP_GRID, v[d], x->shape[d], lc_close(L));
}

/* Over the flattened data: every axis in order, the output index their
 * row-major position. */
static void scan_flat(LowerCx *L, const LTensor *x, bool prod, bool exclusive, Buffer *out) {
  int n = x->ndim;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK], *lin = lc_int(L, 0);
  Buffer *acc = acc1(L, out->dtype, lc_lit(L, out->dtype, prod));
  for (int d = 0; d < n; d++) {
    v[d] = lc_tvar(L, "k", x->shape[d]);
    idx[d] = lc_var(L, v[d]);
    lin = d == 0 ? idx[0] : lc_bin(L, PB_ADD, lc_bin(L, PB_MUL, lin, x->shape[d]), idx[d]);
    lc_open(L);
  }
  scan_step(L, acc, prod, exclusive, x, idx, out, 1, &lin);
  for (int d = n; d-- > 0;) lc_for(L, LOOP_RANGE, v[d], x->shape[d], lc_close(L));
}

/* The flattened length when one dim is symbolic and the others are 1 (as
 * the type relation gives it), else NULL. */
static PrimExpr *flat_len(const LTensor *x) {
  PrimExpr *len = NULL;
  for (int d = 0; d < x->ndim; d++)
    if (lc_const(x->shape[d]) != 1) {
      if (len) return NULL;
      len = x->shape[d];
    }
  return len;
}

/* The rule of cumsum and cumprod.  A bool result is the kernels' running
 * or / and: bool + and * are or and and in TIR.  Refused: a flattened scan
 * whose length is not a constant (a buffer's dims are constants or size
 * variables). */
static LTensor *scan(LowerCx *L, const Expr *call, LTensor **in, int nin, bool prod) {
  const Type *rt = lc_result_type(call);
  DType dt = rt->u.tensor.dtype;
  if (nin != 1 || !lc_elem_dtype_ok(in[0]->dtype) || !lc_elem_dtype_ok(dt))
    return lc_fail(L, "scan of this dtype");
  bool exclusive = op_attr_bool(call, "exclusive");
  const LTensor *x = in[0];
  if (op_attr_is_none(call, "axis")) {
    PrimExpr *len = lc_int(L, 1);
    for (int d = 0; d < x->ndim; d++) len = lc_mul(L, len, x->shape[d]);
    if (lc_const(len) < 0) len = flat_len(x);
    if (!len) return lc_fail(L, "flattened scan of a computed length");
    Buffer *out = lc_result_buffer(L, call, dt, 1, &len);
    if (!out) return NULL;
    scan_flat(L, x, prod, exclusive, out);
    return lc_from_buffer(L, call, out);
  }
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim) return lc_fail(L, "scan: axis out of range");
  Buffer *out = lc_result_buffer(L, call, dt, x->ndim, (PrimExpr **)x->shape);
  if (!out) return NULL;
  scan_axis(L, x, (int)axis, prod, exclusive, out);
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_cumsum(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return scan(L, c, in, n, false);
}
static LTensor *compute_cumprod(LowerCx *L, const Expr *c, LTensor **in, int n) {
  return scan(L, c, in, n, true);
}

/* ───────────── layer_norm, instance_norm, group_norm, l2_normalize ───────────── */

/* A normalization over groups of x's elements: loops over the key dims
 * (one group each) and, per group, passes over the reduced dims.  x's dim
 * d is indexed by key variable kv[ksrc[d]] times kmul[d] (when ksrc[d] >=
 * 0) plus reduced variable rv[rsrc[d]] (when rsrc[d] >= 0): group_norm's
 * channel is group * channels_per_group + channel within the group. */
typedef enum NormKind { N_LAYER, N_GROUPED, N_L2 } NormKind;

typedef struct Norm {
  NormKind k;
  const LTensor *x, *gamma, *beta; /* gamma, beta NULL when off */
  int axis;                        /* the channel axis of gamma and beta */
  double eps;
  int nk, nr;
  PrimExpr *kext[TENSOR_MAX_RANK + 1], *rext[TENSOR_MAX_RANK + 1];
  int ksrc[TENSOR_MAX_RANK], rsrc[TENSOR_MAX_RANK];
  int64_t kmul[TENSOR_MAX_RANK];
  PrimExpr *kv[TENSOR_MAX_RANK + 1];
} Norm;

typedef void NormBody(LowerCx *L, const Norm *N, PrimExpr **xi, void *u);

/* One pass over the reduced dims in order, body at each element's index. */
static void norm_pass(LowerCx *L, const Norm *N, NormBody *body, void *u) {
  TirVar *rv[TENSOR_MAX_RANK + 1];
  PrimExpr *xi[TENSOR_MAX_RANK];
  for (int r = 0; r < N->nr; r++) rv[r] = lc_tvar(L, "r", N->rext[r]), lc_open(L);
  for (int d = 0; d < N->x->ndim; d++) {
    PrimExpr *k = N->ksrc[d] < 0    ? NULL
                  : N->kmul[d] == 1 ? N->kv[N->ksrc[d]]
                                    : lc_bin(L, PB_MUL, N->kv[N->ksrc[d]], lc_int(L, N->kmul[d]));
    PrimExpr *r = N->rsrc[d] < 0 ? NULL : lc_var(L, rv[N->rsrc[d]]);
    xi[d] = k && r ? lc_bin(L, PB_ADD, k, r) : k ? k : r ? r : lc_int(L, 0);
  }
  body(L, N, xi, u);
  for (int r = N->nr; r-- > 0;) lc_for(L, LOOP_RANGE, rv[r], N->rext[r], lc_close(L));
}

typedef struct NormCx {
  Buffer *acc;          /* [sum, squares] in float64 */
  PrimExpr *mean, *den; /* layer: 1 / sqrt(var + eps); grouped: sqrt(var + eps); l2: the divisor */
  Buffer *out;
} NormCx;

static PrimExpr *f64(LowerCx *L, double v) { return lc_lit(L, DT_FLOAT64, v); }
static PrimExpr *acc_at(LowerCx *L, Buffer *b, int i) {
  PrimExpr *k = lc_int(L, i);
  return lc_load(L, b, 1, &k);
}
static void acc_put(LowerCx *L, Buffer *b, int i, PrimExpr *v) {
  PrimExpr *k = lc_int(L, i);
  lc_store(L, b, 1, &k, v);
}

static PrimExpr *norm_x(LowerCx *L, const Norm *N, PrimExpr **xi) {
  return lc_cast(L, DT_FLOAT64, lc_at(L, N->x, xi));
}

static void norm_sum(LowerCx *L, const Norm *N, PrimExpr **xi, void *u) {
  NormCx *c = u;
  PrimExpr *v = norm_x(L, N, xi);
  acc_put(L, c->acc, 0,
          lc_bin(L, PB_ADD, acc_at(L, c->acc, 0), N->k == N_L2 ? lc_bin(L, PB_MUL, v, v) : v));
}

static void norm_squares(LowerCx *L, const Norm *N, PrimExpr **xi, void *u) {
  NormCx *c = u;
  PrimExpr *d = lc_bin(L, PB_SUB, norm_x(L, N, xi), c->mean);
  acc_put(L, c->acc, 1, lc_bin(L, PB_ADD, acc_at(L, c->acc, 1), lc_bin(L, PB_MUL, d, d)));
}

/* The normalized element, in the kernels' order: layer_norm (x - mean) * r
 * then * gamma, + beta; instance/group norm (x - mean) / s, * gamma, + beta
 * (or + 0); l2 x / divisor. */
static void norm_write(LowerCx *L, const Norm *N, PrimExpr **xi, void *u) {
  NormCx *c = u;
  PrimExpr *v = norm_x(L, N, xi), *ch = xi[N->axis];
  if (N->k == N_L2) {
    v = lc_bin(L, PB_DIV, v, c->den);
  } else {
    PrimExpr *g = N->gamma ? lc_cast(L, DT_FLOAT64, lc_at(L, N->gamma, &ch)) : NULL;
    PrimExpr *b = N->beta ? lc_cast(L, DT_FLOAT64, lc_at(L, N->beta, &ch)) : NULL;
    v = lc_bin(L, N->k == N_LAYER ? PB_MUL : PB_DIV, lc_bin(L, PB_SUB, v, c->mean), c->den);
    if (g) v = lc_bin(L, PB_MUL, v, g);
    if (b || N->k == N_GROUPED) v = lc_bin(L, PB_ADD, v, b ? b : f64(L, 0));
  }
  lc_store(L, c->out, N->x->ndim, xi, lc_cast(L, N->x->dtype, v));
}

/* The statistics of one group and its normalized elements. */
static void norm_group(LowerCx *L, const Norm *N, Buffer *out) {
  PrimExpr *two = lc_int(L, 2), *cnt = f64(L, 1);
  NormCx c = {.acc = lc_alloc(L, "acc", DT_FLOAT64, 1, &two), .out = out};
  for (int r = 0; r < N->nr; r++) cnt = lc_bin(L, PB_MUL, cnt, lc_cast(L, DT_FLOAT64, N->rext[r]));
  acc_put(L, c.acc, 0, f64(L, 0));
  acc_put(L, c.acc, 1, f64(L, 0));
  norm_pass(L, N, norm_sum, &c);
  PrimExpr *s = acc_at(L, c.acc, 0), *eps = f64(L, N->eps);
  if (N->k == N_L2) {
    c.den =
        lc_call(L, PI_SQRT, lc_call(L, PI_SELECT, lc_bin(L, PB_GT, s, eps), s, eps), NULL, NULL);
  } else {
    c.mean = lc_bin(L, PB_DIV, s, cnt);
    if (N->k == N_GROUPED) /* an empty group: mean 0 */
      c.mean = lc_call(L, PI_SELECT, lc_bin(L, PB_NE, cnt, f64(L, 0)), c.mean, f64(L, 0));
    norm_pass(L, N, norm_squares, &c);
    PrimExpr *sd =
        lc_call(L, PI_SQRT, lc_bin(L, PB_ADD, lc_bin(L, PB_DIV, acc_at(L, c.acc, 1), cnt), eps),
                NULL, NULL);
    c.den = N->k == N_LAYER ? lc_bin(L, PB_DIV, f64(L, 1), sd) : sd;
  }
  norm_pass(L, N, norm_write, &c);
}

/* Emits the loops over the groups (the outermost parallel) around norm_group. */
static LTensor *norm_emit(LowerCx *L, const Expr *call, Norm *N) {
  const LTensor *x = N->x;
  if (!dtype_is_float(x->dtype)) /* float16 too: in float64, rounded once */
    return lc_fail(L, "%s of %s", call->u.call.fn->u.op.name, dtype_name(x->dtype));
  Buffer *out = lc_result_buffer(L, call, x->dtype, x->ndim, (PrimExpr **)x->shape);
  if (!out) return NULL;
  TirVar *kv[TENSOR_MAX_RANK + 1];
  for (int k = 0; k < N->nk; k++) kv[k] = lc_tvar(L, "i", N->kext[k]), N->kv[k] = lc_var(L, kv[k]);
  for (int k = 0; k < N->nk; k++) lc_open(L);
  norm_group(L, N, out);
  for (int k = N->nk; k-- > 0;)
    lc_for(L, k == 0 ? LOOP_PARALLEL : LOOP_RANGE, kv[k], N->kext[k], lc_close(L));
  return lc_from_buffer(L, call, out);
}

/* Plan: every dim a key dim of its own, except the reduced ones. */
static void norm_plan(Norm *N, const bool *red) {
  const LTensor *x = N->x;
  N->nk = N->nr = 0;
  for (int d = 0; d < x->ndim; d++) {
    N->kmul[d] = 1, N->ksrc[d] = N->rsrc[d] = -1;
    if (red[d])
      N->rsrc[d] = N->nr, N->rext[N->nr++] = x->shape[d];
    else
      N->ksrc[d] = N->nk, N->kext[N->nk++] = x->shape[d];
  }
}

static int norm_axis(LowerCx *L, const Expr *call, int n) {
  int64_t a = op_attr_int(call, "axis");
  if (a < 0) a += n;
  if (a < 0 || a >= n) return lc_fail(L, "%s: axis out of range", call->u.call.fn->u.op.name), -1;
  return (int)a;
}

static void norm_params(Norm *N, const Expr *call, LTensor **in) {
  N->gamma = op_attr_bool(call, "scale") ? in[1] : NULL;
  N->beta = op_attr_bool(call, "center") ? in[2] : NULL;
  N->eps = op_attr_float(call, "epsilon");
}

/* layer_norm: one group per line along the axis. */
static LTensor *compute_layer_norm(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Norm N = {.k = N_LAYER, .x = in[0]};
  bool red[TENSOR_MAX_RANK] = {0};
  if (nin != 3 || (N.axis = norm_axis(L, call, in[0]->ndim)) < 0) return NULL;
  red[N.axis] = true;
  norm_plan(&N, red);
  norm_params(&N, call, in);
  return norm_emit(L, call, &N);
}

/* instance_norm: one group per (batch index, channel): every other dim reduced. */
static LTensor *compute_instance_norm(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Norm N = {.k = N_GROUPED, .x = in[0]};
  bool red[TENSOR_MAX_RANK] = {0};
  if (nin != 3 || (N.axis = norm_axis(L, call, in[0]->ndim)) < 0) return NULL;
  for (int d = 1; d < in[0]->ndim; d++) red[d] = d != N.axis;
  norm_plan(&N, red);
  norm_params(&N, call, in);
  return norm_emit(L, call, &N);
}

/* group_norm: one group per (index over the dims before the axis, channel
 * group); the channel splits into the group (a key) and the channel
 * within it (reduced, first), the dims after the axis are reduced. */
static LTensor *compute_group_norm(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Norm N = {.k = N_GROUPED, .x = in[0]};
  const LTensor *x = in[0];
  if (nin != 3 || (N.axis = norm_axis(L, call, x->ndim)) < 0) return NULL;
  int64_t groups = op_attr_int(call, "num_groups"), ch = lc_const(x->shape[N.axis]);
  if (groups <= 0 || ch <= 0 || ch % groups)
    return lc_fail(L, "nn.group_norm: channels not known or not divisible by num_groups");
  for (int d = 0; d < x->ndim; d++) {
    N.kmul[d] = 1, N.ksrc[d] = N.rsrc[d] = -1;
    if (d < N.axis) N.ksrc[d] = N.nk, N.kext[N.nk++] = x->shape[d];
  }
  N.ksrc[N.axis] = N.nk, N.kmul[N.axis] = ch / groups, N.kext[N.nk++] = lc_int(L, groups);
  N.rsrc[N.axis] = N.nr, N.rext[N.nr++] = lc_int(L, ch / groups);
  for (int d = N.axis + 1; d < x->ndim; d++) N.rsrc[d] = N.nr, N.rext[N.nr++] = x->shape[d];
  norm_params(&N, call, in);
  return norm_emit(L, call, &N);
}

/* l2_normalize: the sum of squares over the axes, x / sqrt(max(sum, eps)). */
static LTensor *compute_l2_normalize(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Norm N = {.k = N_L2, .x = in[0]};
  bool red[TENSOR_MAX_RANK] = {0};
  int64_t ax[TENSOR_MAX_RANK];
  int n = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  if (nin != 1 || n < 0) return lc_fail(L, "nn.l2_normalize: axes");
  for (int i = 0; i < n; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + in[0]->ndim : ax[i];
    if (a < 0 || a >= in[0]->ndim) return lc_fail(L, "nn.l2_normalize: axis out of range");
    red[a] = true;
  }
  norm_plan(&N, red);
  N.eps = op_attr_float(call, "eps");
  return norm_emit(L, call, &N);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_reduce[] = {
    {"sum", compute_sum},
    {"mean", compute_mean},
    {"max", compute_max},
    {"min", compute_min},
    {"prod", compute_prod},
    {"argmax", compute_argmax},
    {"argmin", compute_argmin},
    {"all", compute_all},
    {"any", compute_any},
    {"logsumexp", compute_logsumexp},
    {"variance", compute_variance},
    {"std", compute_std},
    {"cumsum", compute_cumsum},
    {"cumprod", compute_cumprod},
    {"nn.layer_norm", compute_layer_norm},
    {"nn.instance_norm", compute_instance_norm},
    {"nn.group_norm", compute_group_norm},
    {"nn.l2_normalize", compute_l2_normalize},
    {NULL, NULL},
};
