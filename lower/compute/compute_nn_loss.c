/* compute_nn_loss.c — compute rules (lower/compute/compute.h) of the losses
 * nn.cross_entropy, nn.cross_entropy_with_logits and nn.nll_loss
 * (materialized).
 *
 * Each sums in float64 in the reference kernels' order (interp/
 * kernels_nn.c) and rounds once, so the two modes agree bit for bit:
 *   cross_entropy   -sum(log(x) * y) / batch over (batch, classes) in order
 *                   (with_logits: x itself for log(x));
 *   nll_loss        per target t at (n, d...): -pred[n, t, d...] * w[t], or
 *                   0 where t is ignore_index; reduction "none" stores each,
 *                   "sum" their sum, "mean" the sum over the sum of the
 *                   weights of the targets not ignored.
 * A target outside the classes reads outside pred: compiled code fails
 * its bounds check there, as the kernel fails ("out of range"). */
#include <string.h>

#include "lower/compute/compute.h"

static PrimExpr *f64(LowerCx *L, PrimExpr *e) { return lc_cast(L, DT_FLOAT64, e); }
static PrimExpr *lit(LowerCx *L, double v) { return lc_lit(L, DT_FLOAT64, v); }

/* A float64 accumulator of n slots, all zero. */
static Buffer *zeros(LowerCx *L, int n) {
  PrimExpr *len = lc_int(L, n);
  Buffer *b = lc_alloc(L, "acc", DT_FLOAT64, 1, &len);
  for (int i = 0; i < n; i++) {
    PrimExpr *k = lc_int(L, i);
    lc_store(L, b, 1, &k, lit(L, 0));
  }
  return b;
}

static PrimExpr *slot(LowerCx *L, Buffer *b, int i) {
  PrimExpr *k = lc_int(L, i);
  return lc_load(L, b, 1, &k);
}

static void slot_add(LowerCx *L, Buffer *b, int i, PrimExpr *v) {
  PrimExpr *k = lc_int(L, i);
  lc_store(L, b, 1, &k, lc_plus(L, slot(L, b, i), v));
}

/* Every float dtype: float16 sums in float64 too and rounds once. */
static bool float_ok(DType dt) { return dtype_is_float(dt); }

/* ───────────────────────────── cross entropy ───────────────────────────── */

static LTensor *cross_entropy(LowerCx *L, const Expr *call, LTensor **in, int nin, bool logits) {
  const LTensor *x = in[0], *y = in[1];
  if (nin != 2 || x->ndim != 2 || !float_ok(x->dtype) || !float_ok(y->dtype))
    return lc_fail(L, "%s of these operands", call->u.call.fn->u.op.name);
  Buffer *out = lc_result_buffer(L, call, x->dtype, 0, NULL);
  if (!out) return NULL;
  Buffer *acc = zeros(L, 1);
  TirVar *i = lc_tvar(L, "i", x->shape[0]), *j = lc_tvar(L, "j", x->shape[1]);
  PrimExpr *idx[2] = {lc_var(L, i), lc_var(L, j)};
  PrimExpr *xv = f64(L, lc_at(L, x, idx));
  if (!logits) xv = lc_call(L, PI_LOG, xv, NULL, NULL);
  lc_open(L);
  lc_open(L);
  slot_add(L, acc, 0, lc_bin(L, PB_MUL, xv, f64(L, lc_at(L, y, idx))));
  lc_for(L, LOOP_RANGE, j, x->shape[1], lc_close(L));
  lc_for(L, LOOP_RANGE, i, x->shape[0], lc_close(L));
  PrimExpr *r = lc_bin(L, PB_DIV, lc_neg(L, slot(L, acc, 0)), f64(L, x->shape[0]));
  lc_store(L, out, 0, NULL, r);
  return lc_from_buffer(L, call, out);
}

static LTensor *compute_cross_entropy(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return cross_entropy(L, call, in, nin, false);
}

static LTensor *compute_cross_entropy_with_logits(LowerCx *L, const Expr *call, LTensor **in,
                                                  int nin) {
  return cross_entropy(L, call, in, nin, true);
}

/* ───────────────────────────── nll_loss ───────────────────────────── */

typedef struct Nll {
  const LTensor *p, *t, *w;
  int64_t ignore;
  bool none; /* reduction "none": a loss per target */
  Buffer *out, *acc;
} Nll;

/* The target at idx (int64), and the loss term -pred[n, t, d...] * w[t]. */
static PrimExpr *target(LowerCx *L, const Nll *k, PrimExpr **idx) {
  return lc_cast(L, DT_INT64, lc_at(L, k->t, idx));
}

static PrimExpr *term(LowerCx *L, const Nll *k, PrimExpr **idx, PrimExpr *t) {
  PrimExpr *pi[TENSOR_MAX_RANK];
  pi[0] = idx[0], pi[1] = t;
  for (int d = 1; d < k->t->ndim; d++) pi[d + 1] = idx[d];
  return lc_bin(L, PB_MUL, lc_neg(L, f64(L, lc_at(L, k->p, pi))), f64(L, lc_at(L, k->w, &t)));
}

/* One target: stored ("none"), or added to the sums of terms and weights
 * when not ignored. */
static void nll_target(LowerCx *L, const Nll *k, PrimExpr **idx) {
  PrimExpr *t = target(L, k, idx);
  PrimExpr *keep = lc_bin(L, PB_NE, t, lc_lit(L, DT_INT64, (double)k->ignore));
  if (k->none) { /* the select reads pred only where kept (codegen branches) */
    lc_store(L, k->out, k->t->ndim, idx,
             lc_call(L, PI_SELECT, keep, term(L, k, idx, t), lit(L, 0)));
    return;
  }
  lc_open(L);
  slot_add(L, k->acc, 0, term(L, k, idx, t));
  slot_add(L, k->acc, 1, f64(L, lc_at(L, k->w, &t)));
  lc_if(L, keep, lc_close(L));
}

/* Loops over the targets in order (parallel over the batch when each
 * target's loss is stored). */
static void nll_loops(LowerCx *L, const Nll *k) {
  int n = k->t->ndim;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", k->t->shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0; d < n; d++) lc_open(L);
  nll_target(L, k, idx);
  for (int d = n; d-- > 0;)
    lc_for(L, d == 0 && k->none ? LOOP_PARALLEL : LOOP_RANGE, v[d], k->t->shape[d], lc_close(L));
}

static LTensor *compute_nll_loss(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Nll k = {.p = in[0], .t = in[1], .w = in[2]};
  if (nin != 3 || !float_ok(k.p->dtype) || !float_ok(k.w->dtype) || !dtype_is_int(k.t->dtype) ||
      k.t->ndim != k.p->ndim - 1)
    return lc_fail(L, "nn.nll_loss of these operands");
  const char *red = op_attr_str(lc_arena(L), call, "reduction");
  k.ignore = op_attr_int(call, "ignore_index");
  k.none = strcmp(red, "none") == 0;
  DType dt = k.p->dtype;
  k.out = lc_result_buffer(L, call, dt, k.none ? k.t->ndim : 0, (PrimExpr **)k.t->shape);
  if (!k.out) return NULL;
  if (k.none) {
    nll_loops(L, &k);
    lc_mark_total(L, k.out); /* each target's loss stored once */
    return lc_from_buffer(L, call, k.out);
  }
  k.acc = zeros(L, 2);
  nll_loops(L, &k);
  PrimExpr *sum = slot(L, k.acc, 0);
  lc_store(L, k.out, 0, NULL,
           strcmp(red, "sum") == 0 ? sum : lc_bin(L, PB_DIV, sum, slot(L, k.acc, 1)));
  return lc_from_buffer(L, call, k.out);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_nn_loss[] = {
    {"nn.cross_entropy", compute_cross_entropy},
    {"nn.cross_entropy_with_logits", compute_cross_entropy_with_logits},
    {"nn.nll_loss", compute_nll_loss},
    {NULL, NULL},
};
