/* compute_nn_norm.c — compute rules (lower/compute/compute.h) of nn.batch_norm
 * (inline, a tuple) and nn.lrn (materialized).
 *
 * nn.batch_norm's result is the tuple (y, moving_mean, moving_var): y is
 * an inline tensor, per element (x - mean) / sqrt(var + eps), times gamma
 * (scale), plus beta (center) or plus 0, in float64 and rounded once, as
 * the reference kernel (kernels/kernels_nn.c) computes it; the other two
 * fields are the operands themselves.  FuseOps makes a node of each field
 * (README: ops with a tuple result fuse field by field), so y fuses with
 * the elementwise ops that read it.
 *
 * nn.lrn: per element the sum of squares over the `size` channels centred
 * at its own (those inside the axis), in float64 in the kernel's order,
 * then x / (bias + alpha * s / size)^beta.
 *
 * Both take every float dtype: float16 computes in float64 like the others
 * and rounds once, as the kernels do. */
#include "lower/compute/compute.h"

static PrimExpr *f64(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_FLOAT64, e); }
static PrimExpr *lit(LowerCx *L, double v) { return lc_lit(L, DT_FLOAT64, v); }

static int norm_axis(LowerCx *L, const Expr *call, int n) {
  int64_t a = op_attr_int(call, "axis");
  if (a < 0) a += n;
  if (a < 0 || a >= n) return lc_fail(L, "%s: axis out of range", call->u.call.fn->u.op.name), -1;
  return (int)a;
}

/* ───────────────────────────── batch_norm ───────────────────────────── */

/* aux: [0] axis, [1] scale, [2] center; in: x, gamma, beta, mean, var. */
static PrimExpr *at_batch_norm(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr **ch = &idx[t->aux[0]];
  const Expr *call = t->call;
  PrimExpr *x = f64(L, lc_at(L, t->in[0], idx));
  PrimExpr *mean = f64(L, lc_at(L, t->in[3], ch)), *var = f64(L, lc_at(L, t->in[4], ch));
  PrimExpr *sd = lc_call(L, PI_SQRT, lc_bin(L, PB_ADD, var, lit(L, op_attr_float(call, "epsilon"))),
                         NULL, NULL);
  PrimExpr *y = lc_bin(L, PB_DIV, lc_bin(L, PB_SUB, x, mean), sd);
  if (t->aux[1]) y = lc_bin(L, PB_MUL, y, f64(L, lc_at(L, t->in[1], ch)));
  y = lc_bin(L, PB_ADD, y, t->aux[2] ? f64(L, lc_at(L, t->in[2], ch)) : lit(L, 0));
  return lc_cast(L, t->dtype, y);
}

static LTensor *compute_batch_norm(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 5) return lc_fail(L, "nn.batch_norm: operands");
  const LTensor *x = in[0];
  for (int i = 0; i < nin; i++)
    if (!dtype_is_float(in[i]->dtype))
      return lc_fail(L, "nn.batch_norm of %s", dtype_name(in[i]->dtype));
  int axis = norm_axis(L, call, x->ndim);
  if (axis < 0) return NULL;
  LTensor *y = lc_tensor(L, call, x->dtype, x->ndim, (PrimExpr **)x->shape);
  y->in = in, y->nin = nin, y->at = at_batch_norm;
  y->aux[0] = axis, y->aux[1] = op_attr_bool(call, "scale"),
  y->aux[2] = op_attr_bool(call, "center");
  LTensor *r = lc_tuple(L, call, 3);
  r->fields[0] = y, r->fields[1] = in[3], r->fields[2] = in[4];
  return r;
}

/* ───────────────────────────── lrn ───────────────────────────── */

typedef struct Lrn {
  const LTensor *x;
  int axis;
  int64_t size;
  double bias, alpha, beta;
} Lrn;

/* The element at idx: s = the sum of squares over channels ch - size/2 ..
 * ch - size/2 + size - 1 inside the axis, then x / pow(bias + alpha * s /
 * size, beta). */
static void lrn_element(LowerCx *L, const Lrn *k, Buffer *out, PrimExpr **idx) {
  PrimExpr *one = lc_int(L, 1), *zero = lc_int(L, 0), *C = k->x->shape[k->axis];
  Buffer *acc = lc_alloc(L, "acc", DT_FLOAT64, 1, &one);
  lc_store(L, acc, 1, &zero, lit(L, 0));
  TirVar *j = lc_tvar(L, "j", lc_int(L, k->size));
  PrimExpr *c =
      lc_bin(L, PB_ADD, lc_bin(L, PB_SUB, idx[k->axis], lc_int(L, k->size / 2)), lc_var(L, j));
  PrimExpr *xi[TENSOR_MAX_RANK];
  for (int d = 0; d < k->x->ndim; d++) xi[d] = d == k->axis ? c : idx[d];
  PrimExpr *v = f64(L, lc_at(L, k->x, xi));
  lc_open(L);
  lc_open(L);
  lc_store(L, acc, 1, &zero, lc_bin(L, PB_ADD, lc_load(L, acc, 1, &zero), lc_bin(L, PB_MUL, v, v)));
  PrimExpr *inside = lc_bin(L, PB_AND, lc_bin(L, PB_GE, c, zero), lc_bin(L, PB_LT, c, C));
  lc_if(L, inside, lc_close(L));
  lc_for(L, LOOP_RANGE, j, lc_int(L, k->size), lc_close(L));
  PrimExpr *s = lc_load(L, acc, 1, &zero);
  PrimExpr *base =
      lc_bin(L, PB_ADD, lit(L, k->bias),
             lc_bin(L, PB_DIV, lc_bin(L, PB_MUL, lit(L, k->alpha), s), lit(L, (double)k->size)));
  PrimExpr *den = lc_call(L, PI_POW, base, lit(L, k->beta), NULL);
  lc_store(L, out, k->x->ndim, idx, lc_bin(L, PB_DIV, f64(L, lc_at(L, k->x, idx)), den));
}

static LTensor *compute_lrn(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Lrn k = {.x = in[0]};
  int n = k.x->ndim;
  if (nin != 1 || !dtype_is_float(k.x->dtype))
    return lc_fail(L, "nn.lrn of %s", dtype_name(k.x->dtype));
  if ((k.axis = norm_axis(L, call, n)) < 0) return NULL;
  k.size = op_attr_int(call, "size");
  k.bias = op_attr_float(call, "bias"), k.alpha = op_attr_float(call, "alpha");
  k.beta = op_attr_float(call, "beta");
  if (k.size < 1) return lc_fail(L, "nn.lrn: size");
  Buffer *out = lc_result_buffer(L, call, k.x->dtype, n, (PrimExpr **)k.x->shape);
  if (!out) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", k.x->shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0; d < n; d++) lc_open(L);
  lrn_element(L, &k, out, idx);
  for (int d = n; d-- > 0;)
    lc_for(L, d == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[d], k.x->shape[d], lc_close(L));
  lc_mark_total(L, out); /* each element stored once */
  return lc_from_buffer(L, call, out);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_nn_norm[] = {
    {"nn.batch_norm", compute_batch_norm},
    {"nn.lrn", compute_lrn},
    {NULL, NULL},
};
