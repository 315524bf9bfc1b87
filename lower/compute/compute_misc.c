/* compute_misc.c — compute rules (lower/compute/compute.h) of one_hot and
 * dyn.one_hot (inline) and mean_variance (a tuple of two materialized
 * tensors).
 *
 * one_hot: the element whose index along the new axis is j is on_value
 * where the index tensor holds j there, else off_value (the values' bits,
 * as the kernel copies them; an index outside [0, depth) matches nothing).
 * dyn.one_hot is the same op with its depth a tensor: the rule applies when
 * the type knows the depth (a constant depth), and takes it from the type.
 *
 * mean_variance: of floats, the mean field is the sum over the reduced
 * axes in order in float64 divided by their count, as the reference
 * kernel's variance computes its mean, and the variance field is
 * variance's own rule (compute_reduce.c), which makes the same passes; of
 * integers, both fields come from TVM's integer arithmetic as the kernel
 * does it (wrapping in the dtype, truncating divisions).  Both fields are
 * computed wherever one is used (a fused function projects the one it
 * needs). */
#include "lower/compute/compute.h"

/* ───────────────────────────── one_hot ───────────────────────────── */

/* aux[0]: the new axis; in: indices, on_value, off_value. */
static PrimExpr *at_one_hot(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int at = (int)t->aux[0];
  PrimExpr *ii[TENSOR_MAX_RANK + 1];
  for (int d = 0, k = 0; d < t->ndim; d++)
    if (d != at) ii[k++] = idx[d];
  PrimExpr *ix = lc_cast(L, DT_INT64, lc_at(L, t->in[0], ii));
  PrimExpr *hot = lc_bin(L, PB_EQ, ix, lc_cast(L, DT_INT64, idx[at]));
  return lc_call(L, PI_SELECT, hot, lc_at(L, t->in[1], NULL), lc_at(L, t->in[2], NULL));
}

/* The one-hot tensor of in[0] with the depth the result type gives. */
static LTensor *one_hot(LowerCx *L, const Expr *call, LTensor **in) {
  const Type *ty = lc_result_type(call);
  DType dt = ty->u.tensor.dtype;
  const LTensor *ix = in[0];
  /* the values are only copied: any dtype a buffer may have */
  if (!lc_buffer_dtype_ok(dt) || !dtype_is_int(ix->dtype) || in[1]->ndim || in[2]->ndim)
    return lc_fail(L, "%s to %s", call->u.call.fn->u.op.name, dtype_name(dt));
  int64_t axis = op_attr_int(call, "axis");
  int at = axis < 0 ? ix->ndim : (int)axis;
  Dim depth = ty->u.tensor.dims[at];
  if (depth.kind != DIM_CONST) return lc_fail(L, "a result dim known only at run time");
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0, k = 0; d <= ix->ndim; d++)
    shape[d] = d == at ? lc_int(L, depth.value) : ix->shape[k++];
  LTensor *t = lc_tensor(L, call, dt, ix->ndim + 1, shape);
  t->in = in, t->nin = 3, t->at = at_one_hot, t->aux[0] = at;
  return t;
}

static LTensor *compute_one_hot(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return nin == 3 ? one_hot(L, call, in) : lc_fail(L, "one_hot: operands");
}

static LTensor *compute_dyn_one_hot(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return nin == 4 ? one_hot(L, call, in) : lc_fail(L, "dyn.one_hot: operands");
}

/* ───────────────────────────── mean_variance ───────────────────────────── */

/* The reduced axes as the relation reads axis (None: all) and exclude. */
static bool reduced(LowerCx *L, const Expr *call, int n, bool *red) {
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  for (int d = 0; d < n; d++) red[d] = na < 0;
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n) return lc_fail(L, "mean_variance: axis out of range"), false;
    red[a] = true;
  }
  if (na >= 0 && op_attr_bool(call, "exclude"))
    for (int d = 0; d < n; d++) red[d] = !red[d];
  return true;
}

/* The kept axes of the reduction: loop variables v[] for every input axis,
 * the result's shape and index (keepdims: 1 and 0 for a reduced axis), and
 * what the variance's count loses (unbiased). */
typedef struct Kept {
  const LTensor *x;
  bool red[TENSOR_MAX_RANK];
  TirVar *v[TENSOR_MAX_RANK];
  int no, nk, kept[TENSOR_MAX_RANK];
  PrimExpr *oshape[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK];
  int64_t ddof;
} Kept;

static bool kept_plan(LowerCx *L, const Expr *call, const LTensor *x, Kept *k) {
  bool keep = op_attr_bool(call, "keepdims");
  k->x = x, k->no = k->nk = 0, k->ddof = op_attr_bool(call, "unbiased");
  if (!reduced(L, call, x->ndim, k->red)) return false;
  for (int d = 0; d < x->ndim; d++) {
    k->v[d] = lc_tvar(L, "r", x->shape[d]);
    if (!k->red[d])
      k->oidx[k->no] = lc_var(L, k->v[d]), k->oshape[k->no++] = x->shape[d], k->kept[k->nk++] = d;
    else if (keep)
      k->oidx[k->no] = lc_int(L, 0), k->oshape[k->no++] = lc_int(L, 1);
  }
  return true;
}

/* A buffer of the kept shape (an intermediate: the fields are projected). */
static Buffer *kept_buffer(LowerCx *L, const Kept *k) {
  Buffer *b = lc_alloc(L, "T", k->x->dtype, k->no, (PrimExpr **)k->oshape);
  if (!b) lc_fail(L, "mean_variance: an intermediate result has a computed shape");
  return b;
}

/* Loops over the kept axes (the outermost parallel) around body. */
typedef void PosBody(LowerCx *L, const Kept *k, Buffer **outs);
static void kept_loops(LowerCx *L, const Kept *k, PosBody *body, Buffer **outs) {
  for (int i = 0; i < k->nk; i++) lc_open(L);
  body(L, k, outs);
  for (int i = k->nk; i-- > 0;)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_GRID, k->v[k->kept[i]], k->x->shape[k->kept[i]],
           lc_close(L));
}

/* One pass over the reduced axes in order: acc[slot] += f(element), the
 * element converted to acc's dtype. */
typedef PrimExpr *TermFn(LowerCx *L, PrimExpr *x, const void *u);
static void reduced_pass(LowerCx *L, const Kept *k, Buffer *acc, int slot, TermFn *f,
                         const void *u) {
  TirVar *rv[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK], *at = lc_int(L, slot);
  for (int d = 0; d < k->x->ndim; d++) {
    rv[d] = k->red[d] ? lc_tvar(L, "k", k->x->shape[d]) : k->v[d];
    idx[d] = lc_var(L, rv[d]);
    if (k->red[d]) lc_open(L);
  }
  PrimExpr *xv = lc_cast(L, acc->dtype, lc_at(L, k->x, idx));
  lc_store(L, acc, 1, &at, lc_bin(L, PB_ADD, lc_load(L, acc, 1, &at), f(L, xv, u)));
  for (int d = k->x->ndim; d-- > 0;)
    if (k->red[d]) lc_for(L, LOOP_RANGE, rv[d], k->x->shape[d], lc_close(L));
}

/* The product of the reduced dims less `minus`, at least 0, as int64 (a
 * literal when constant). */
static PrimExpr *reduced_count(LowerCx *L, const Kept *k, int64_t minus) {
  PrimExpr *n = lc_int(L, 1);
  for (int d = 0; d < k->x->ndim; d++)
    if (k->red[d]) n = lc_mul(L, n, k->x->shape[d]);
  int64_t c = lc_const(n);
  if (c >= 0) return lc_lit(L, DT_INT64, (double)(c > minus ? c - minus : 0));
  n = lc_bin(L, PB_SUB, lc_cast(L, DT_INT64, n), lc_lit(L, DT_INT64, (double)minus));
  return lc_call(L, PI_MAX, n, lc_lit(L, DT_INT64, 0), NULL);
}

/* A zeroed accumulator of n slots. */
static Buffer *zeroed(LowerCx *L, DType dt, int n) {
  PrimExpr *len = lc_int(L, n);
  Buffer *acc = lc_alloc(L, "acc", dt, 1, &len);
  for (int i = 0; i < n; i++) {
    PrimExpr *at = lc_int(L, i);
    lc_store(L, acc, 1, &at, lc_lit(L, dt, 0));
  }
  return acc;
}

static PrimExpr *slot(LowerCx *L, Buffer *acc, int i) {
  PrimExpr *at = lc_int(L, i);
  return lc_load(L, acc, 1, &at);
}

/* The element itself. */
static PrimExpr *term_x(LowerCx *L, PrimExpr *x, const void *u) {
  (void)L, (void)u;
  return x;
}

/* The float mean: the float64 sum in order over the count. */
static void float_mean(LowerCx *L, const Kept *k, Buffer **outs) {
  Buffer *acc = zeroed(L, DT_FLOAT64, 1);
  reduced_pass(L, k, acc, 0, term_x, NULL);
  PrimExpr *n = lc_cast(L, DT_FLOAT64, reduced_count(L, k, 0));
  lc_store(L, outs[0], k->no, (PrimExpr **)k->oidx, lc_bin(L, PB_DIV, slot(L, acc, 0), n));
}

/* The 64-bit lane of an integer dtype's statistics: uint64 for unsigned
 * dtypes (their divisions are unsigned, as the kernel's), int64 else. */
static DType lane64(DType dt) { return dtype_class(dt) == 'u' ? DT_UINT64 : DT_INT64; }

/* e wrapped in dtype dt and extended back to its lane (sign or zero). */
static PrimExpr *wrap(LowerCx *L, DType dt, PrimExpr *e) {
  return lc_cast(L, lane64(dt), lc_cast(L, dt, e));
}

typedef struct IntSq {
  DType dt;
  PrimExpr *mean;
} IntSq;

/* The square of an element's difference from the mean, each step wrapped. */
static PrimExpr *term_int_square(LowerCx *L, PrimExpr *x, const void *u) {
  const IntSq *q = u;
  PrimExpr *d = wrap(L, q->dt, lc_bin(L, PB_SUB, x, q->mean));
  return wrap(L, q->dt, lc_bin(L, PB_MUL, d, d));
}

/* TVM's integer mean and variance, as the kernel computes them in 64 bits:
 * the sum wrapped in the dtype over the count (truncating), then the
 * wrapped squares of the wrapped differences, summed and wrapped, over the
 * count less `unbiased`.  A count of 0 divides by zero: an error in
 * compiled code, as in the kernel. */
static void int_mean_variance(LowerCx *L, const Kept *k, Buffer **outs) {
  DType dt = k->x->dtype, ln = lane64(dt);
  Buffer *acc = zeroed(L, ln, 2);
  reduced_pass(L, k, acc, 0, term_x, NULL);
  PrimExpr *n = lc_cast(L, ln, reduced_count(L, k, 0));
  IntSq q = {dt, lc_bin(L, PB_DIV, wrap(L, dt, slot(L, acc, 0)), n)};
  reduced_pass(L, k, acc, 1, term_int_square, &q);
  PrimExpr *dof = lc_cast(L, ln, reduced_count(L, k, k->ddof));
  PrimExpr *var = lc_bin(L, PB_DIV, wrap(L, dt, slot(L, acc, 1)), dof);
  lc_store(L, outs[0], k->no, (PrimExpr **)k->oidx, q.mean);
  lc_store(L, outs[1], k->no, (PrimExpr **)k->oidx, var);
}

/* Floats: the mean field here, the variance field variance's own rule
 * (compute_reduce.c, the same passes); integers: both here. */
static LTensor *compute_mean_variance(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  const LTensor *x = in[0];
  bool fl = dtype_is_float(x->dtype);
  if (nin != 1 || !lc_buffer_dtype_ok(x->dtype) || x->dtype == DT_BOOL)
    return lc_fail(L, "mean_variance of %s", dtype_name(x->dtype));
  Kept k;
  Buffer *outs[2] = {NULL, NULL};
  if (!kept_plan(L, call, x, &k) || !(outs[0] = kept_buffer(L, &k))) return NULL;
  if (!fl && !(outs[1] = kept_buffer(L, &k))) return NULL;
  if (!fl && lc_const(reduced_count(L, &k, k.ddof)) == 0)
    return lc_fail(L, "mean_variance: an integer division by zero (no element)");
  kept_loops(L, &k, fl ? float_mean : int_mean_variance, outs);
  LTensor *r = lc_tuple(L, call, 2);
  r->fields[0] = lc_from_buffer(L, call, outs[0]);
  r->fields[1] = fl ? compute_variance(L, call, in, 1) : lc_from_buffer(L, call, outs[1]);
  return r->fields[1] ? r : NULL;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_misc[] = {
    {"mean_variance", compute_mean_variance},
    {"one_hot", compute_one_hot},
    {"dyn.one_hot", compute_dyn_one_hot},
    {NULL, NULL},
};
