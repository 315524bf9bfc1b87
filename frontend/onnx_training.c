/* onnx_training.c — converters of the optimizers of the
 * ai.onnx.preview.training domain (rows in onnx_ops.c): Adagrad, Adam and
 * Momentum.  Each takes the learning rate R and the update count T
 * (scalars), then, for N optimized tensors, the N tensors X, their N
 * gradients G and their N-tensor groups of state (Adagrad: H; Momentum: V;
 * Adam: V, H), and gives the new X's and then each group of new state in
 * the same order; N comes from the input count.
 *
 * Everything is elementwise arithmetic with the elementwise Relay ops: the
 * scalar factors depending on R and T (the decayed or bias-corrected rate,
 * Momentum's first-step coefficient) are computed once, in float64 (1 -
 * beta^T loses digits in float32 when beta is near 1), and
 * cast to the tensors' dtype; a condition on T (T > 0) selects with `where`,
 * so T may be known only at run time.  Gradient, of the same domain, stays
 * refused: it has no row. */
#include <string.h>

#include "frontend/onnx_int.h"

static FeVal *num(OnnxCx *cx, const FeVal *like, double v) {
  return fe_scalar(cx, fe_dtype(like), v);
}

static FeVal *bin(OnnxCx *cx, const char *op, FeVal *a, FeVal *b) {
  return a && b ? FE_OP(cx, op, NULL, a, b) : NULL;
}

/* a * x + b * y (b == 1: a * x + y). */
static FeVal *axpby(OnnxCx *cx, double a, FeVal *x, double b, FeVal *y) {
  if (!x || !y) return NULL;
  FeVal *by = b == 1 ? y : bin(cx, "multiply", num(cx, y, b), y);
  return bin(cx, "add", bin(cx, "multiply", num(cx, x, a), x), by);
}

/* R and T are scalars, R and the tensors float; N tensors, each with
 * `per` inputs (X, G, state) and `outs` outputs, from the node's counts;
 * 0 after fe_fail. */
static int tensor_count(OnnxCx *cx, int per, int outs) {
  FeVal *r = cx->in[0], *t = cx->in[1];
  if (fe_rank(r) != 0 || fe_rank(t) != 0)
    return fe_fail(cx, "R and T must be scalars (ranks %d and %d)", fe_rank(r), fe_rank(t));
  if (!dtype_is_float(fe_dtype(r)) || fe_dtype(t) != DT_INT64)
    return fe_fail(cx, "R must be float and T int64 (got %s and %s)", dtype_name(fe_dtype(r)),
                   dtype_name(fe_dtype(t)));
  int n = (cx->nin - 2) / per;
  if (n < 1 || cx->nin != 2 + per * n)
    return fe_fail(cx, "takes R, T and %d inputs per optimized tensor, got %d inputs", per,
                   cx->nin);
  if (cx->nout > outs * n)
    return fe_fail(cx, "names %d outputs, more than the %d of %d tensors", cx->nout, outs * n, n);
  for (int i = 2; i < cx->nin; i++) {
    if (!cx->in[i]) return fe_fail(cx, "input %d is empty", i);
    if (!dtype_is_float(fe_dtype(cx->in[i])))
      return fe_fail(cx, "input %d must be float, got %s", i, dtype_name(fe_dtype(cx->in[i])));
  }
  return n;
}

/* Output k of the node, when it names one. */
static void set_out(OnnxCx *cx, int k, FeVal *v) {
  if (k < cx->nout) cx->out[k] = v;
}

/* T as float64. */
static FeVal *t_float(OnnxCx *cx) { return fe_cast(cx, cx->in[1], DT_FLOAT64); }

/* R as float64. */
static FeVal *r_float(OnnxCx *cx) { return fe_cast(cx, cx->in[0], DT_FLOAT64); }

/* T > 0 (a bool scalar). */
static FeVal *t_positive(OnnxCx *cx) {
  return bin(cx, "greater", cx->in[1], fe_scalar(cx, DT_INT64, 0));
}

/* A scalar (float64, or R) as x's dtype. */
static FeVal *like(OnnxCx *cx, FeVal *s, const FeVal *x) {
  return s ? fe_cast(cx, s, fe_dtype(x)) : NULL;
}

/* G + norm_coefficient * X, the gradient with L2 regularization. */
static FeVal *regularized(OnnxCx *cx, FeVal *x, FeVal *g) {
  double c = oa_float(cx, "norm_coefficient", 0);
  return c == 0 ? g : axpby(cx, c, x, 1, g);
}

/* ───────────────────────── Adagrad ───────────────────────── */

/* Adagrad: r = R / (1 + T * decay_factor); G' = G + c X; H' = H + G'^2;
 * X' = X - r G' / (sqrt(H') + epsilon). */
bool onnx_convert_adagrad(OnnxCx *cx) {
  int n = tensor_count(cx, 3, 2);
  if (!n) return false;
  FeVal *r = r_float(cx), *tf = t_float(cx);
  double decay = oa_float(cx, "decay_factor", 0), eps = oa_float(cx, "epsilon", 1e-6f);
  FeVal *rate = tf ? bin(cx, "divide", r, axpby(cx, decay, tf, 1, num(cx, r, 1))) : NULL;
  for (int i = 0; i < n && rate; i++) {
    FeVal *x = cx->in[2 + i], *g = regularized(cx, x, cx->in[2 + n + i]);
    FeVal *h = bin(cx, "add", cx->in[2 + 2 * n + i], bin(cx, "multiply", g, g));
    FeVal *root = h ? bin(cx, "add", FE_OP(cx, "sqrt", NULL, h), num(cx, x, eps)) : NULL;
    FeVal *step = bin(cx, "divide", bin(cx, "multiply", like(cx, rate, x), g), root);
    set_out(cx, i, bin(cx, "subtract", x, step));
    set_out(cx, n + i, h);
  }
  return !cx->failed;
}

/* ───────────────────────── Adam ───────────────────────── */

/* The bias-corrected rate: R sqrt(1 - beta^T) / (1 - alpha^T) when T > 0,
 * else R. */
static FeVal *adam_rate(OnnxCx *cx, double alpha, double beta) {
  FeVal *r = r_float(cx), *tf = t_float(cx);
  FeVal *pa = bin(cx, "power", num(cx, r, alpha), tf), *pb = bin(cx, "power", num(cx, r, beta), tf);
  FeVal *qb = bin(cx, "subtract", num(cx, r, 1), pb);
  FeVal *sb = qb ? FE_OP(cx, "sqrt", NULL, qb) : NULL;
  FeVal *adj =
      bin(cx, "divide", bin(cx, "multiply", r, sb), bin(cx, "subtract", num(cx, r, 1), pa));
  FeVal *pos = t_positive(cx);
  return adj && pos ? FE_OP(cx, "where", NULL, pos, adj, r) : NULL;
}

/* Adam: G' = G + c X; V' = alpha V + (1 - alpha) G'; H' = beta H + (1 -
 * beta) G'^2; X' = (1 - norm_coefficient_post) (X - r V' / (sqrt(H') +
 * epsilon)) with r the bias-corrected rate. */
bool onnx_convert_adam(OnnxCx *cx) {
  int n = tensor_count(cx, 4, 3);
  if (!n) return false;
  double alpha = oa_float(cx, "alpha", 0.9f), beta = oa_float(cx, "beta", 0.999f);
  double eps = oa_float(cx, "epsilon", 1e-6f), post = oa_float(cx, "norm_coefficient_post", 0);
  FeVal *rate = adam_rate(cx, alpha, beta);
  for (int i = 0; i < n && rate; i++) {
    FeVal *x = cx->in[2 + i], *g = regularized(cx, x, cx->in[2 + n + i]);
    FeVal *v = g ? axpby(cx, alpha, cx->in[2 + 2 * n + i], 1 - alpha, g) : NULL;
    FeVal *g2 = bin(cx, "multiply", g, g);
    FeVal *h = g2 ? axpby(cx, beta, cx->in[2 + 3 * n + i], 1 - beta, g2) : NULL;
    FeVal *root = h ? bin(cx, "add", FE_OP(cx, "sqrt", NULL, h), num(cx, x, eps)) : NULL;
    FeVal *step = bin(cx, "multiply", like(cx, rate, x), bin(cx, "divide", v, root));
    FeVal *xn = bin(cx, "subtract", x, step);
    set_out(cx, i, post == 0 || !xn ? xn : bin(cx, "multiply", num(cx, x, 1 - post), xn));
    set_out(cx, n + i, v);
    set_out(cx, 2 * n + i, h);
  }
  return !cx->failed;
}

/* ───────────────────────── Momentum ───────────────────────── */

/* A required float attribute into *out, or fails. */
static bool need_float(OnnxCx *cx, const char *name, double *out) {
  if (!oa_get(cx, name)) return fe_fail(cx, "attribute '%s' is required", name);
  *out = oa_float(cx, name, 0);
  return !cx->failed;
}

/* Momentum's first-step coefficient: beta when T > 0, else 1, as x's dtype. */
static FeVal *momentum_beta(OnnxCx *cx, double beta, const FeVal *x) {
  FeVal *pos = t_positive(cx);
  return pos ? FE_OP(cx, "where", NULL, pos, num(cx, x, beta), num(cx, x, 1)) : NULL;
}

/* Momentum: G' = G + c X; V' = alpha V + b G' with b = beta, or 1 at the
 * first update (T = 0); X' = X - R V' (mode "standard") or
 * X' = X - R (G' + alpha V') (mode "nesterov"). */
bool onnx_convert_momentum(OnnxCx *cx) {
  double alpha = 0, beta = 0, c = 0;
  if (!need_float(cx, "alpha", &alpha) || !need_float(cx, "beta", &beta) ||
      !need_float(cx, "norm_coefficient", &c))
    return false;
  if (!oa_get(cx, "mode")) return fe_fail(cx, "attribute 'mode' is required");
  const char *mode = oa_str(cx, "mode", "");
  bool nesterov = strcmp(mode, "nesterov") == 0;
  if (!nesterov && strcmp(mode, "standard") != 0)
    return fe_fail(cx, "attribute 'mode' must be standard or nesterov, got '%s'", mode);
  int n = tensor_count(cx, 3, 2);
  if (!n) return false;
  FeVal *b = momentum_beta(cx, beta, cx->in[2]); /* the tensors share one dtype */
  for (int i = 0; i < n && b; i++) {
    FeVal *x = cx->in[2 + i], *g = regularized(cx, x, cx->in[2 + n + i]);
    FeVal *bg = bin(cx, "multiply", b, g);
    FeVal *v = bin(cx, "add", bin(cx, "multiply", num(cx, x, alpha), cx->in[2 + 2 * n + i]), bg);
    FeVal *dir = nesterov && v ? axpby(cx, alpha, v, 1, g) : v;
    set_out(cx, i, bin(cx, "subtract", x, bin(cx, "multiply", like(cx, cx->in[0], x), dir)));
    set_out(cx, n + i, v);
  }
  return !cx->failed;
}
