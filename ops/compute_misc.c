/* compute_misc.c — compute rules (ops/compute.h) of one_hot and
 * dyn.one_hot (inline) and mean_variance (a tuple of two materialized
 * tensors).
 *
 * one_hot: the element whose index along the new axis is j is on_value
 * where the index tensor holds j there, else off_value (the values' bits,
 * as the kernel copies them; an index outside [0, depth) matches nothing).
 * dyn.one_hot is the same op with its depth a tensor: the rule applies when
 * the type knows the depth (a constant depth), and takes it from the type.
 *
 * mean_variance (floats): the mean field is the sum over the reduced axes
 * in order in float64 divided by their count, as the reference kernel's
 * variance computes its mean; the variance field is variance's own rule
 * (compute_reduce.c), which makes the same passes.  Integer data stays on
 * the kernel, as variance's does. */
#include "ops/compute.h"
#include "ops/families.h"

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

LTensor *compute_one_hot(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return nin == 3 ? one_hot(L, call, in) : lc_fail(L, "one_hot: operands");
}

LTensor *compute_dyn_one_hot(LowerCx *L, const Expr *call, LTensor **in, int nin) {
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

/* acc = the float64 sum of x over the reduced axes (kept ones at v[]), in
 * order; returns the sum over the count. */
static PrimExpr *mean_at(LowerCx *L, const LTensor *x, const bool *red, TirVar **v) {
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0), *count = lc_lit(L, DT_FLOAT64, 1);
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT64, 1, &one);
  lc_store(L, acc, 1, &zero, lc_lit(L, DT_FLOAT64, 0));
  TirVar *rv[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < x->ndim; d++) {
    rv[d] = red[d] ? lc_tvar(L, "k", x->shape[d]) : v[d];
    idx[d] = lc_var(L, rv[d]);
    if (red[d]) lc_open(L), count = lc_bin(L, PB_MUL, count, lc_cast(L, DT_FLOAT64, x->shape[d]));
  }
  PrimExpr *xv = lc_cast(L, DT_FLOAT64, lc_at(L, x, idx));
  lc_store(L, acc, 1, &zero, lc_bin(L, PB_ADD, lc_load(L, acc, 1, &zero), xv));
  for (int d = x->ndim; d-- > 0;)
    if (red[d]) lc_for(L, LOOP_RANGE, rv[d], x->shape[d], lc_close(L));
  return lc_bin(L, PB_DIV, lc_load(L, acc, 1, &zero), count);
}

/* The mean field: loops over the kept axes (the outermost parallel). */
static LTensor *mean_field(LowerCx *L, const Expr *call, const LTensor *x) {
  bool red[TENSOR_MAX_RANK], keep = op_attr_bool(call, "keepdims");
  int n = x->ndim, no = 0, kept[TENSOR_MAX_RANK], nk = 0;
  if (!reduced(L, call, n, red)) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *oshape[TENSOR_MAX_RANK], *oidx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) {
    v[d] = lc_tvar(L, "r", x->shape[d]);
    if (!red[d])
      oidx[no] = lc_var(L, v[d]), oshape[no++] = x->shape[d], kept[nk++] = d;
    else if (keep)
      oidx[no] = lc_int(L, 0), oshape[no++] = lc_int(L, 1);
  }
  Buffer *out = lc_alloc(L, "T", x->dtype, no, oshape);
  if (!out) return lc_fail(L, "mean_variance: an intermediate result has a computed shape");
  for (int i = 0; i < nk; i++) lc_open(L);
  lc_store(L, out, no, oidx, mean_at(L, x, red, v));
  for (int i = nk; i-- > 0;)
    lc_for(L, i == 0 ? LOOP_PARALLEL : LOOP_GRID, v[kept[i]], x->shape[kept[i]], lc_close(L));
  return lc_from_buffer(L, call, out);
}

LTensor *compute_mean_variance(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 1 || !dtype_is_float(in[0]->dtype) || !lc_dtype_ok(in[0]->dtype))
    return lc_fail(L, "mean_variance of %s", dtype_name(in[0]->dtype));
  LTensor *mean = mean_field(L, call, in[0]);
  LTensor *var = mean ? compute_variance(L, call, in, 1) : NULL;
  if (!var) return NULL;
  LTensor *r = lc_tuple(L, call, 2);
  r->fields[0] = mean, r->fields[1] = var;
  return r;
}
