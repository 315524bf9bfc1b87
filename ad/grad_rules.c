/* grad_rules.c — gradient rules by op name (grad_rule;
 * ad/grad.h), after TVM's relay/op/_tensor_grad.py, written in rly ops so
 * the adjoint program fuses and compiles: the elementwise arithmetic and
 * math functions (broadcasting undone by collapse_sum_like; the remainders
 * as torch's fmod and remainder), the fills' values, qnn.dequantize's
 * scale, products, bias_add, nn.conv2d (NCHW, OIHW, one group; the other
 * convolutions are in grad_rules_conv.c), layer_norm, activations, softmax
 * and log_softmax, sum, mean, max and min, the global pools, shape ops,
 * take along any axis, concatenate and split, the losses, and dropout with
 * a key (its mask drawn once, in the forward step).  The other families'
 * rules are in grad_rules_<reduce, nn, conv, layout, transform>.c; the
 * helpers they share (gr_*, ad/grad_rules.h) are defined here. */
#include "ad/grad_rules.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/elemwise_table.h"

/* ───────────────────────── binary arithmetic ───────────────────────── */

static bool bw_add(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, DY, X0);
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, DY, X1);
  return built(G);
}

static bool bw_subtract(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, DY, X0);
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, neg(G, DY), X1);
  return built(G);
}

static bool bw_multiply(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, mul(G, DY, X1), X0);
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, mul(G, DY, X0), X1);
  return built(G);
}

/* y = a / b: da = dy / b, db = -dy * y / b. */
static bool bw_divide(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, divide(G, DY, X1), X0);
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, neg(G, divide(G, mul(G, DY, c->y), X1)), X1);
  return built(G);
}

/* y = x^p: dx = dy * p * x^(p-1), dp = dy * y * log(x). */
static bool bw_power(GradCx *G, GradCall *c) {
  if (want(c, 0)) {
    Expr *p1 = grad_op2(G, "power", X0, sub(G, X1, k(G, X1, 1)));
    c->dx[0] = grad_unbroadcast(G, mul(G, DY, mul(G, X1, p1)), X0);
  }
  if (want(c, 1))
    c->dx[1] = grad_unbroadcast(G, mul(G, DY, mul(G, c->y, grad_op1(G, "log", X0, NULL))), X1);
  return built(G);
}

/* maximum (ge) / minimum (le): the adjoint goes to the chosen side, x on ties. */
static bool extremum(GradCx *G, GradCall *c, const char *cmp) {
  Expr *first = grad_op2(G, cmp, X0, X1);
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, masked(G, first, DY), X0);
  if (want(c, 1)) {
    Expr *args[3] = {first, k(G, DY, 0), DY};
    c->dx[1] = grad_unbroadcast(G, grad_op(G, "where", 3, args, NULL), X1);
  }
  return built(G);
}

static bool bw_maximum(GradCx *G, GradCall *c) { return extremum(G, c, "greater_equal"); }
static bool bw_minimum(GradCx *G, GradCall *c) { return extremum(G, c, "less_equal"); }

/* The remainders a - q b, q = trunc(a / b) (mod, trunc_mod) or
 * floor(a / b) (floor_mod): da = dy, db = -dy q, as torch's fmod and
 * remainder have it (q is constant between its jumps). */
static bool remainder_rule(GradCx *G, GradCall *c, const char *quotient) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, DY, X0);
  if (want(c, 1))
    c->dx[1] = grad_unbroadcast(G, neg(G, mul(G, DY, grad_op2(G, quotient, X0, X1))), X1);
  return built(G);
}

static bool bw_mod(GradCx *G, GradCall *c) { return remainder_rule(G, c, "trunc_divide"); }
static bool bw_floor_mod(GradCx *G, GradCall *c) { return remainder_rule(G, c, "floor_divide"); }

/* where(cond, a, b): the adjoint to a where cond holds, to b elsewhere. */
static bool bw_where(GradCx *G, GradCall *c) {
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, masked(G, X0, DY), X1);
  if (want(c, 2)) {
    Expr *args[3] = {X0, k(G, DY, 0), DY};
    c->dx[2] = grad_unbroadcast(G, grad_op(G, "where", 3, args, NULL), c->x[2]);
  }
  return built(G);
}

/* ───────────────────────── unary math ───────────────────────── */

/* dx = dy * f where f is built from x and y by `expr`; the rule grad_<name>. */
#define UNARY_RULE(name, expr)                     \
  static bool bw_##name(GradCx *G, GradCall *c) {  \
    Expr *x = X0, *y = c->y;                       \
    (void)x, (void)y;                              \
    if (want(c, 0)) c->dx[0] = mul(G, DY, (expr)); \
    return built(G);                               \
  }                                                \
  static const OpGrad grad_##name = {bw_##name, NULL};

static Expr *one_minus(GradCx *G, Expr *v) { return sub(G, k(G, v, 1), v); }
static Expr *rsqrt_one_minus_sq(GradCx *G, Expr *x) {
  return grad_op1(G, "rsqrt", one_minus(G, mul(G, x, x)), NULL);
}

UNARY_RULE(exp, y)
UNARY_RULE(log, divide(G, k(G, x, 1), x))
UNARY_RULE(log2, divide(G, k(G, x, 1 / log(2.0)), x))
UNARY_RULE(log10, divide(G, k(G, x, 1 / log(10.0)), x))
UNARY_RULE(sqrt, divide(G, k(G, y, 0.5), y))
UNARY_RULE(rsqrt, mul(G, k(G, y, -0.5), divide(G, y, x)))
UNARY_RULE(tanh, one_minus(G, mul(G, y, y)))
UNARY_RULE(sigmoid, mul(G, y, one_minus(G, y)))
UNARY_RULE(abs, grad_op1(G, "sign", x, NULL))
UNARY_RULE(sin, grad_op1(G, "cos", x, NULL))
UNARY_RULE(cos, neg(G, grad_op1(G, "sin", x, NULL)))
UNARY_RULE(tan, add(G, k(G, y, 1), mul(G, y, y)))
UNARY_RULE(sinh, grad_op1(G, "cosh", x, NULL))
UNARY_RULE(cosh, grad_op1(G, "sinh", x, NULL))
UNARY_RULE(asin, rsqrt_one_minus_sq(G, x))
UNARY_RULE(acos, neg(G, rsqrt_one_minus_sq(G, x)))
UNARY_RULE(atan, divide(G, k(G, x, 1), add(G, k(G, x, 1), mul(G, x, x))))
UNARY_RULE(asinh, grad_op1(G, "rsqrt", add(G, mul(G, x, x), k(G, x, 1)), NULL))
UNARY_RULE(acosh, grad_op1(G, "rsqrt", sub(G, mul(G, x, x), k(G, x, 1)), NULL))
UNARY_RULE(atanh, divide(G, k(G, x, 1), one_minus(G, mul(G, x, x))))
UNARY_RULE(erf, mul(G, k(G, x, 2 / sqrt(M_PI)), grad_op1(G, "exp", neg(G, mul(G, x, x)), NULL)))

static bool bw_negative(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = neg(G, DY);
  return built(G);
}

static bool bw_identity(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = DY;
  return built(G);
}

/* Ops whose result does not change with their inputs almost everywhere
 * (floor, sign, ones_like, ...): no contribution. */
static bool bw_zero(GradCx *G, GradCall *c) {
  (void)c;
  return built(G);
}

/* full(fill, ...), full_like(x, fill), dyn.full(fill, shape): every
 * element is the fill value, so its adjoint is the sum of dy, in the
 * fill's dtype. */
static Expr *fill_adjoint(GradCx *G, GradCall *c, Expr *fill) {
  DType dt = grad_tensor_of(fill)->u.tensor.dtype;
  Expr *d = DY;
  if (grad_tensor_of(d)->u.tensor.dtype != dt) {
    Attrs *at = grad_attrs(G, 1);
    grad_attr_str(G, at, 0, "dtype", dtype_name(dt));
    d = grad_op1(G, "cast", d, at);
  }
  return grad_op2(G, "collapse_sum_like", d, fill);
}

static bool bw_full(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = fill_adjoint(G, c, X0);
  return built(G);
}

static bool bw_full_like(GradCx *G, GradCall *c) {
  if (want(c, 1)) c->dx[1] = fill_adjoint(G, c, X1);
  return built(G);
}

/* qnn.dequantize(q, scale, zero_point, axis): y = (q - zero_point) scale,
 * so the scale (one, or one per channel along axis) gets dy times the op's
 * result with a unit scale. */
static bool bw_dequantize(GradCx *G, GradCall *c) {
  if (!want(c, 1)) return built(G);
  Expr *args[3] = {X0, grad_op1(G, "ones_like", X1, NULL), c->x[2]};
  Expr *t = mul(G, DY, grad_op(G, "qnn.dequantize", 3, args, c->call->u.call.attrs));
  c->dx[1] = rank_of(X1) == 0 ? grad_op1(G, "sum", t, NULL)
                              : gr_sum_but(G, t, gr_norm_axis(X0, op_attr_int(c->call, "axis")));
  return built(G);
}

static bool bw_cast(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(grad_tensor_of(X0)->u.tensor.dtype));
  c->dx[0] = grad_op1(G, "cast", DY, at);
  return built(G);
}

static bool bw_relu(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = masked(G, grad_op2(G, "greater", X0, k(G, X0, 0)), DY);
  return built(G);
}

static bool bw_leaky_relu(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *slope = mul(G, DY, k(G, DY, op_attr_float(c->call, "alpha")));
  Expr *args[3] = {grad_op2(G, "greater", X0, k(G, X0, 0)), DY, slope};
  c->dx[0] = grad_op(G, "where", 3, args, NULL);
  return built(G);
}

static bool bw_clip(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *lo = grad_op2(G, "greater_equal", X0, k(G, X0, op_attr_float(c->call, "a_min")));
  Expr *hi = grad_op2(G, "less_equal", X0, k(G, X0, op_attr_float(c->call, "a_max")));
  c->dx[0] = masked(G, grad_op2(G, "logical_and", lo, hi), DY);
  return built(G);
}

/* ───────────────────────── products ───────────────────────── */

static Attrs *transposes(GradCx *G, bool ta, bool tb) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_bool(G, at, 0, "transpose_a", ta);
  grad_attr_bool(G, at, 1, "transpose_b", tb);
  return at;
}

Expr *gr_matmul(GradCx *G, Expr *a, Expr *b, bool ta, bool tb) {
  Expr *args[2] = {a, b};
  return grad_op(G, "nn.matmul", 2, args, transposes(G, ta, tb));
}

static bool rank2(GradCx *G, GradCall *c, const char *op) {
  const Type *a = grad_tensor_of(X0);
  if (a && a->u.tensor.ndim == 2) return true;
  return grad_fail(G, "the gradient of %s takes a 2-D first operand, got rank %d", op,
                   a ? a->u.tensor.ndim : -1);
}

/* y = x w^T: dx = dy w, dw = dy^T x. */
static bool bw_dense(GradCx *G, GradCall *c) {
  if (!rank2(G, c, "nn.dense")) return false;
  if (want(c, 0)) c->dx[0] = gr_matmul(G, DY, X1, false, false);
  if (want(c, 1)) c->dx[1] = gr_matmul(G, DY, X0, true, false);
  return built(G);
}

/* C = op(A) op(B), op a transpose when asked. */
static bool bw_matmul(GradCx *G, GradCall *c) {
  if (!rank2(G, c, "nn.matmul")) return false;
  bool ta = op_attr_bool(c->call, "transpose_a"), tb = op_attr_bool(c->call, "transpose_b");
  if (want(c, 0)) c->dx[0] = ta ? gr_matmul(G, X1, DY, tb, true) : gr_matmul(G, DY, X1, false, !tb);
  if (want(c, 1)) c->dx[1] = tb ? gr_matmul(G, DY, X0, true, ta) : gr_matmul(G, X0, DY, !ta, false);
  return built(G);
}

int gr_norm_axis(const Expr *x, int64_t axis) {
  const Type *t = grad_tensor_of(x);
  int n = t ? t->u.tensor.ndim : 0;
  return (int)(axis < 0 ? axis + n : axis);
}

/* sum(dy) over every axis but `axis` (the bias's). */
static bool bw_bias_add(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = DY;
  if (want(c, 1)) {
    int64_t axis = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
    Attrs *at = grad_attrs(G, 2);
    grad_attr_ints(G, at, 0, "axis", 1, &axis);
    grad_attr_bool(G, at, 1, "exclude", true);
    c->dx[1] = grad_op1(G, "sum", DY, at);
  }
  return built(G);
}

/* nn.conv2d, NCHW data and OIHW weight, groups 1 (TVM's conv2d_grad;
 * other layouts and groups: gr_conv_backward, grad_rules_conv.c):
 * dx = conv2d_transpose(dy, w) with the output padding that gives x's
 * size back; dw = conv2d of x and dy with batch and channels swapped
 * (strides and dilation exchanged), cut to the kernel's size.
 * conv_plain: whether the call has that form (false, no error, when
 * not), and its padding, strides and dilation. */
static bool conv_plain(GradCx *G, GradCall *c, int64_t *pad, int64_t *st, int64_t *dil) {
  char dl[16], kl[16];
  snprintf(dl, sizeof dl, "%s", op_attr_str(G->a, c->call, "data_layout"));
  snprintf(kl, sizeof kl, "%s", op_attr_str(G->a, c->call, "kernel_layout"));
  if (strcmp(dl, "NCHW") || strcmp(kl, "OIHW") || op_attr_int(c->call, "groups") != 1) return false;
  const Type *tx = grad_tensor_of(X0), *tw = grad_tensor_of(X1), *ty = grad_tensor_of(c->y);
  for (int i = 0; i < 4; i++)
    if (tx->u.tensor.dims[i].kind != DIM_CONST || tw->u.tensor.dims[i].kind != DIM_CONST ||
        ty->u.tensor.dims[i].kind != DIM_CONST)
      return grad_fail(G, "the gradient of nn.conv2d needs static shapes");
  int np = op_attr_ints(c->call, "padding", pad, 4);
  if (np == 1) pad[1] = pad[2] = pad[3] = pad[0];
  if (np == 2) pad[2] = pad[0], pad[3] = pad[1];
  if (op_attr_ints(c->call, "strides", st, 2) == 1) st[1] = st[0];
  if (op_attr_ints(c->call, "dilation", dil, 2) == 1) dil[1] = dil[0];
  return true;
}

static Expr *conv_dx(GradCx *G, GradCall *c, const int64_t *pad, const int64_t *st,
                     const int64_t *dil) {
  const Dim *x = grad_tensor_of(X0)->u.tensor.dims, *w = grad_tensor_of(X1)->u.tensor.dims;
  const Dim *y = grad_tensor_of(c->y)->u.tensor.dims;
  int64_t outpad[2];
  for (int i = 0; i < 2; i++)
    outpad[i] = x[2 + i].value - ((y[2 + i].value - 1) * st[i] - pad[i] - pad[2 + i] +
                                  dil[i] * (w[2 + i].value - 1) + 1);
  Attrs *at = grad_attrs(G, 7);
  grad_attr_ints(G, at, 0, "strides", 2, st);
  grad_attr_ints(G, at, 1, "padding", 4, pad);
  grad_attr_ints(G, at, 2, "dilation", 2, dil);
  grad_attr_ints(G, at, 3, "output_padding", 2, outpad);
  grad_attr_int(G, at, 4, "channels", x[1].value);
  grad_attr_ints(G, at, 5, "kernel_size", 2, (int64_t[]){w[2].value, w[3].value});
  grad_attr_str(G, at, 6, "kernel_layout", "IOHW");
  Expr *args[2] = {DY, X1};
  return grad_op(G, "nn.conv2d_transpose", 2, args, at);
}

Expr *gr_swap01(GradCx *G, Expr *e) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_ints(G, at, 0, "axes", 4, (int64_t[]){1, 0, 2, 3});
  return grad_op1(G, "transpose", e, at);
}

static Expr *conv_dw(GradCx *G, GradCall *c, const int64_t *pad, const int64_t *st,
                     const int64_t *dil) {
  const Dim *w = grad_tensor_of(X1)->u.tensor.dims;
  Attrs *at = grad_attrs(G, 3);
  grad_attr_ints(G, at, 0, "strides", 2, dil);
  grad_attr_ints(G, at, 1, "padding", 4, pad);
  grad_attr_ints(G, at, 2, "dilation", 2, st);
  Expr *args[2] = {gr_swap01(G, X0), gr_swap01(G, DY)};
  Expr *k = gr_swap01(G, grad_op(G, "nn.conv2d", 2, args, at));
  const Type *tk = grad_tensor_of(k);
  if (!tk || (tk->u.tensor.dims[2].value == w[2].value && tk->u.tensor.dims[3].value == w[3].value))
    return k;
  Attrs *sl = grad_attrs(G, 2);
  grad_attr_ints(G, sl, 0, "begin", 4, (int64_t[]){0, 0, 0, 0});
  grad_attr_ints(G, sl, 1, "end", 4, (int64_t[]){w[0].value, w[1].value, w[2].value, w[3].value});
  return grad_op1(G, "strided_slice", k, sl);
}

static bool bw_conv2d(GradCx *G, GradCall *c) {
  int64_t pad[4] = {0}, st[2] = {1, 1}, dil[2] = {1, 1};
  if (!conv_plain(G, c, pad, st, dil)) return built(G) && gr_conv_backward(G, c);
  if (want(c, 0)) c->dx[0] = conv_dx(G, c, pad, st, dil);
  if (want(c, 1)) c->dx[1] = conv_dw(G, c, pad, st, dil);
  return built(G);
}

/* ───────────────────────── softmax ───────────────────────── */

Expr *gr_sum_keep(GradCx *G, Expr *x, int64_t axis) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "axis", 1, &axis);
  grad_attr_bool(G, at, 1, "keepdims", true);
  return grad_op1(G, "sum", x, at);
}

/* dx = y * (dy - sum(dy * y, axis)). */
static bool bw_softmax(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int64_t axis = op_attr_int(c->call, "axis");
  c->dx[0] = mul(G, c->y, sub(G, DY, gr_sum_keep(G, mul(G, DY, c->y), axis)));
  return built(G);
}

/* dx = dy - exp(y) * sum(dy, axis). */
static bool bw_log_softmax(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int64_t axis = op_attr_int(c->call, "axis");
  Expr *p = grad_op1(G, "exp", c->y, NULL);
  c->dx[0] = sub(G, DY, mul(G, p, gr_sum_keep(G, DY, axis)));
  return built(G);
}

/* nn.layer_norm(x, gamma, beta, axis, epsilon, center, scale):
 * xhat = (x - mean) * rstd, y = xhat * gamma + beta along `axis`;
 * dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma. */
Expr *gr_reduce_keep(GradCx *G, const char *op, Expr *x, int64_t axis) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "axis", 1, &axis);
  grad_attr_bool(G, at, 1, "keepdims", true);
  return grad_op1(G, op, x, at);
}

Expr *gr_sum_but(GradCx *G, Expr *x, int64_t axis) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "axis", 1, &axis);
  grad_attr_bool(G, at, 1, "exclude", true);
  return grad_op1(G, "sum", x, at);
}

/* A per-channel vector v broadcast along axis a of a rank-n tensor. */
Expr *gr_along(GradCx *G, Expr *v, int a, int n) {
  if (a == n - 1) return v;
  Attrs *at = grad_attrs(G, 2);
  grad_attr_int(G, at, 0, "axis", 1);
  grad_attr_int(G, at, 1, "num_newaxis", n - 1 - a);
  return grad_op1(G, "expand_dims", v, at);
}

static bool bw_layer_norm(GradCx *G, GradCall *c) {
  int n = grad_tensor_of(X0)->u.tensor.ndim, a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  bool scale = op_attr_bool(c->call, "scale"), center = op_attr_bool(c->call, "center");
  Expr *mu = gr_reduce_keep(G, "mean", X0, a), *var = gr_reduce_keep(G, "variance", X0, a);
  Expr *rstd = grad_op1(G, "rsqrt", add(G, var, k(G, X0, op_attr_float(c->call, "epsilon"))), NULL);
  Expr *xhat = mul(G, sub(G, X0, mu), rstd);
  Expr *g = scale ? mul(G, DY, gr_along(G, X1, a, n)) : DY;
  if (want(c, 0)) {
    Expr *t = mul(G, xhat, gr_reduce_keep(G, "mean", mul(G, g, xhat), a));
    c->dx[0] = mul(G, rstd, sub(G, sub(G, g, gr_reduce_keep(G, "mean", g, a)), t));
  }
  if (scale && want(c, 1)) c->dx[1] = gr_sum_but(G, mul(G, DY, xhat), a);
  if (center && want(c, 2)) c->dx[2] = gr_sum_but(G, DY, a);
  return built(G);
}

/* ───────────────────────── reductions ───────────────────────── */

/* Which axes of x (rank n) the call reduces: red[i]. */
void gr_reduced_axes(const Expr *call, int n, bool *red) {
  int64_t ax[TENSOR_MAX_RANK];
  int m = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  const AttrValue *ex = attrs_get(call->u.call.attrs, "exclude"); /* logsumexp has none */
  bool exclude = ex && ex->kind == AV_BOOL && ex->u.b;
  for (int i = 0; i < n; i++) red[i] = m < 0;
  for (int i = 0; i < m; i++) red[ax[i] < 0 ? ax[i] + n : ax[i]] = true;
  if (m >= 0 && exclude)
    for (int i = 0; i < n; i++) red[i] = !red[i];
}

/* dy with the reduced axes back (size 1) and broadcast to x's shape. */
Expr *gr_expand_back(GradCx *G, GradCall *c, Expr *d) {
  const Type *t = grad_tensor_of(X0);
  int n = t->u.tensor.ndim;
  bool red[TENSOR_MAX_RANK];
  gr_reduced_axes(c->call, n, red);
  int nd = grad_tensor_of(d)->u.tensor.ndim;
  if (!op_attr_bool(c->call, "keepdims") && nd > 0 && nd < n) /* a scalar broadcasts as is */
    for (int i = 0; i < n && d; i++)
      if (red[i]) {
        Attrs *at = grad_attrs(G, 1);
        grad_attr_int(G, at, 0, "axis", i);
        d = grad_op1(G, "expand_dims", d, at);
      }
  return grad_op2(G, "broadcast_to_like", d, X0);
}

static bool bw_sum(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = gr_expand_back(G, c, DY);
  return built(G);
}

/* The number of elements of x per element of y, as a scalar of x's dtype. */
Expr *gr_count(GradCx *G, GradCall *c) {
  const Type *tx = grad_tensor_of(X0), *ty = grad_tensor_of(c->y);
  int64_t nx = 1, ny = 1;
  bool known = true;
  for (int i = 0; i < tx->u.tensor.ndim; i++) {
    known &= tx->u.tensor.dims[i].kind == DIM_CONST;
    nx *= tx->u.tensor.dims[i].value;
  }
  for (int i = 0; i < ty->u.tensor.ndim; i++) {
    known &= ty->u.tensor.dims[i].kind == DIM_CONST;
    ny *= ty->u.tensor.dims[i].value;
  }
  if (known) return k(G, X0, ny ? (double)nx / (double)ny : 1);
  Expr *q = grad_op2(G, "divide", grad_op1(G, "ndarray_size", X0, NULL),
                     grad_op1(G, "ndarray_size", c->y, NULL));
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(tx->u.tensor.dtype));
  return grad_op1(G, "cast", q, at);
}

static bool bw_mean(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = gr_expand_back(G, c, divide(G, DY, gr_count(G, c)));
  return built(G);
}

/* max / min: the adjoint to every element equal to the result. */
static bool bw_extreme(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *hit = grad_op2(G, "equal", X0, gr_expand_back(G, c, c->y));
  c->dx[0] = masked(G, hit, gr_expand_back(G, c, DY));
  return built(G);
}

/* The global pools: y has size 1 along the pooled axes, so dy broadcasts
 * back to x's shape in any layout. */
static bool bw_global_avg_pool2d(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_op2(G, "broadcast_to_like", divide(G, DY, gr_count(G, c)), X0);
  return built(G);
}

static bool bw_global_max_pool2d(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *hit = grad_op2(G, "equal", X0, grad_op2(G, "broadcast_to_like", c->y, X0));
  c->dx[0] = masked(G, hit, grad_op2(G, "broadcast_to_like", DY, X0));
  return built(G);
}

/* ───────────────────────── shapes ───────────────────────── */

static bool bw_reshape(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_op2(G, "reshape_like", DY, X0);
  return built(G);
}

static bool bw_transpose(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int64_t axes[TENSOR_MAX_RANK], inv[TENSOR_MAX_RANK];
  int n = op_attr_ints(c->call, "axes", axes, TENSOR_MAX_RANK);
  if (n <= 0) return (c->dx[0] = grad_op1(G, "transpose", DY, NULL)), built(G);
  for (int i = 0; i < n; i++) inv[axes[i] < 0 ? axes[i] + n : axes[i]] = i;
  Attrs *at = grad_attrs(G, 1);
  grad_attr_ints(G, at, 0, "axes", n, inv);
  c->dx[0] = grad_op1(G, "transpose", DY, at);
  return built(G);
}

/* Static dims of t (false when one is not a constant). */
bool gr_static_dims(const Type *t, int64_t *d) {
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    if (t->u.tensor.dims[i].kind != DIM_CONST) return false;
    d[i] = t->u.tensor.dims[i].value;
  }
  return true;
}

Expr *gr_transpose_to(GradCx *G, Expr *e, int n, const int64_t *axes) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_ints(G, at, 0, "axes", n, axes);
  return grad_op1(G, "transpose", e, at);
}

Expr *gr_reshape_to(GradCx *G, Expr *e, int n, const int64_t *dims) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_ints(G, at, 0, "newshape", n, dims);
  return grad_op1(G, "reshape", e, at);
}

/* The rows of x (its axis `a` moved first) that take gathered, summed back:
 * one_hot(idx)^T d, d being dy with the index dims first and flattened. */
static Expr *take_rows(GradCx *G, GradCall *c, Expr *d, int64_t rows, int64_t rest) {
  Attrs *oh = grad_attrs(G, 2);
  grad_attr_int(G, oh, 0, "depth", rows);
  grad_attr_str(G, oh, 1, "dtype", dtype_name(grad_tensor_of(X0)->u.tensor.dtype));
  Expr *args[3] = {X1, k(G, X0, 1), k(G, X0, 0)};
  Expr *hot = gr_reshape_to(G, grad_op(G, "one_hot", 3, args, oh), 2, (int64_t[]){-1, rows});
  return gr_matmul(G, hot, gr_reshape_to(G, d, 2, (int64_t[]){-1, rest}), true, false);
}

/* take(x, idx, axis=a): x's axis a moved first, dy's index dims moved
 * first, the rows summed by a product with one_hot(idx), and moved back;
 * axis=None takes from x flattened.  Indices out of range (mode "clip" or
 * "wrap") get no gradient. */
static bool bw_take(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  const Type *tx = grad_tensor_of(X0), *ti = grad_tensor_of(X1);
  int n = tx->u.tensor.ndim, ni = ti->u.tensor.ndim, ny = n - 1 + ni;
  int64_t xd[TENSOR_MAX_RANK], rows = 1, rest = 1;
  if (!gr_static_dims(tx, xd)) return grad_fail(G, "the gradient of take needs x's shape static");
  if (op_attr_int(c->call, "batch_dims") != 0)
    return grad_fail(G, "the gradient of take is defined for batch_dims=0");
  if (op_attr_is_none(c->call, "axis")) {
    for (int i = 0; i < n; i++) rows *= xd[i];
    c->dx[0] = grad_op2(G, "reshape_like", take_rows(G, c, DY, rows, 1), X0);
    return built(G);
  }
  int a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  int64_t perm[TENSOR_MAX_RANK], back[TENSOR_MAX_RANK], shape[TENSOR_MAX_RANK];
  int m = 0;
  for (int i = 0; i < ni; i++) perm[m++] = a + i;
  for (int i = 0; i < ny; i++)
    if (i < a || i >= a + ni) perm[m++] = i;
  shape[0] = rows = xd[a];
  for (int i = 0, s = 1; i < n; i++)
    if (i != a) rest *= shape[s++] = xd[i];
  for (int j = 0; j < n; j++) back[j] = j < a ? j + 1 : j == a ? 0 : j;
  Expr *d = a == 0 ? DY : gr_transpose_to(G, DY, ny, perm);
  Expr *r = gr_reshape_to(G, take_rows(G, c, d, rows, rest), n, shape);
  c->dx[0] = a == 0 ? r : gr_transpose_to(G, r, n, back);
  return built(G);
}

/* broadcast_to, broadcast_to_like: the adjoint summed back to x's shape. */
static bool bw_broadcast(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_unbroadcast(G, DY, X0);
  return built(G);
}

static bool bw_collapse_sum_like(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = grad_op2(G, "broadcast_to_like", DY, X0);
  return built(G);
}

/* concatenate((a, b, ...), axis): dy split at the same places. */
static bool bw_concatenate(GradCx *G, GradCall *c) {
  const Type *tup = X0->ty;
  if (!tup || tup->kind != TY_TUPLE || !grad_differentiable(tup)) return built(G);
  int n = tup->u.tuple.n;
  int axis = gr_norm_axis(DY, op_attr_int(c->call, "axis"));
  int64_t at[64], pos = 0;
  if (n > 64) return grad_fail(G, "the gradient of concatenate takes at most 64 tensors");
  for (int i = 0; i + 1 < n; i++) {
    const Dim *d = &tup->u.tuple.fields[i]->u.tensor.dims[axis];
    if (d->kind != DIM_CONST)
      return grad_fail(G, "the gradient of concatenate needs static sizes along the axis");
    at[i] = pos += d->value;
  }
  if (n == 1) return (c->dx[0] = grad_tuple(G, 1, &DY)), built(G);
  Attrs *as = grad_attrs(G, 2);
  grad_attr_ints(G, as, 0, "indices_or_sections", n - 1, at);
  grad_attr_int(G, as, 1, "axis", axis);
  c->dx[0] = grad_op1(G, "split", DY, as);
  return built(G);
}

/* split: the fields' adjoints (zeros where none) joined again. */
static bool bw_split(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int n = c->y->ty->u.tuple.n;
  Expr **f = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 0; i < n; i++)
    f[i] = c->dy[i] ? c->dy[i] : grad_op1(G, "zeros_like", grad_proj(G, c->y, i), NULL);
  Attrs *at = grad_attrs(G, 1);
  grad_attr_int(G, at, 0, "axis", op_attr_int(c->call, "axis"));
  c->dx[0] = grad_op1(G, "concatenate", grad_tuple(G, n, f), at);
  return built(G);
}

/* ───────────────────────── losses ───────────────────────── */

/* dy / batch, batch being x's first dim. */
static Expr *per_batch(GradCx *G, GradCall *c) {
  const Dim *b = &grad_tensor_of(X0)->u.tensor.dims[0];
  if (b->kind == DIM_CONST) return divide(G, DY, k(G, DY, (double)b->value));
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(grad_tensor_of(DY)->u.tensor.dtype));
  Attrs *t0 = grad_attrs(G, 1);
  grad_attr_int(G, t0, 0, "axis", 0);
  Expr *args[2] = {grad_op1(G, "shape_of", X0, NULL), grad_scalar(G, DT_INT32, 0)};
  return divide(G, DY, grad_op1(G, "cast", grad_op(G, "take", 2, args, t0), at));
}

/* y = -sum(log(x) * t) / batch. */
static bool bw_cross_entropy(GradCx *G, GradCall *c) {
  Expr *s = per_batch(G, c);
  if (want(c, 0)) c->dx[0] = neg(G, mul(G, divide(G, X1, X0), s));
  if (want(c, 1)) c->dx[1] = neg(G, mul(G, grad_op1(G, "log", X0, NULL), s));
  return built(G);
}

/* y = -sum(x * t) / batch. */
static bool bw_cross_entropy_with_logits(GradCx *G, GradCall *c) {
  Expr *s = per_batch(G, c);
  if (want(c, 0)) c->dx[0] = neg(G, mul(G, X1, s));
  if (want(c, 1)) c->dx[1] = neg(G, mul(G, X0, s));
  return built(G);
}

/* ───────────────────────── dropout ───────────────────────── */

/* The forward step draws the mask once from the call's key:
 * m = dropout(ones_like(x), key) is 1/keep where x is kept and 0 where it
 * is dropped, and y = where(m != 0, x / keep, 0) is what the op computes
 * (the same division, bit for bit).  The backward step reuses m. */
static Expr *dropout_with_mask(GradCx *G, GradCall *c, Expr *m) {
  double rate = op_attr_float(c->call, "rate");
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  double keep = dt == DT_FLOAT32 ? (double)(1.0f - (float)rate) : 1.0 - rate;
  c->saved[0] = m;
  Expr *kept = grad_op2(G, "not_equal", m, k(G, m, 0));
  return masked(G, kept, divide(G, X0, grad_scalar(G, dt, keep)));
}

static Expr *fw_dropout_train(GradCx *G, GradCall *c) {
  Expr *args[2] = {grad_op1(G, "ones_like", X0, NULL), X1};
  Expr *pair = grad_op(G, c->call->u.call.fn->u.op.name, 2, args, c->call->u.call.attrs);
  Expr *fields[2] = {dropout_with_mask(G, c, grad_proj(G, pair, 0)), grad_proj(G, pair, 1)};
  return built(G) ? grad_tuple(G, 2, fields) : NULL;
}

static Expr *fw_dropout(GradCx *G, GradCall *c) {
  if (c->nx != 2) return grad_fail(G, "nn.dropout is differentiated with a key only"), NULL;
  Expr *args[2] = {grad_op1(G, "ones_like", X0, NULL), X1};
  Expr *m = grad_op(G, "nn.dropout", 2, args, c->call->u.call.attrs);
  Expr *y = dropout_with_mask(G, c, m);
  return built(G) ? y : NULL;
}

static bool bw_dropout(GradCx *G, GradCall *c) {
  if (want(c, 0) && DY) c->dx[0] = mul(G, DY, c->saved[0]);
  return built(G);
}

/* ───────────────────────── dyn ops' static forms ───────────────────────── */

int gr_const_ints(GradCx *G, GradCall *c, const Expr *e, int64_t *out, int max) {
  if (e->kind != EX_CONST || e->u.konst.value->numel > max)
    return grad_fail(G, "the gradient of %s needs its shape arguments constant",
                     c->call->u.call.fn->u.op.name),
           -1;
  const Tensor *t = e->u.konst.value;
  for (int64_t i = 0; i < t->numel; i++) out[i] = tensor_get_i64(t, i);
  return (int)t->numel;
}

GradCall gr_static_form(GradCx *G, GradCall *c, const char *op, int n, Expr **args,
                        unsigned constant, Attrs *at) {
  GradCall s = *c;
  Expr **copy = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 0; i < n; i++) copy[i] = args[i];
  Expr *call = expr_call(G->a, ops_expr(G->a, ops_lookup(op), G->span), n, copy, at, G->span);
  call->ty = c->call->ty;
  s.call = call;
  s.nx = n, s.x = copy, s.constant = constant;
  s.dx = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 0; i < n; i++) s.dx[i] = NULL;
  return s;
}

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES(X) \
  X(add) X(subtract) X(multiply) X(divide) X(power) X(maximum) X(minimum) X(where) X(mod) \
  X(floor_mod) X(negative) X(full) X(full_like) X(dequantize) X(cast) X(relu) X(leaky_relu) \
  X(clip) X(dense) X(matmul) X(bias_add) X(conv2d) X(softmax) X(log_softmax) X(sum) X(mean) \
  X(reshape) X(transpose) X(take) X(concatenate) X(split) X(cross_entropy) \
  X(cross_entropy_with_logits) X(collapse_sum_like) X(global_avg_pool2d) X(global_max_pool2d) \
  X(layer_norm)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES(BACKWARD)
#undef BACKWARD
const OpGrad grad_zero = {bw_zero, NULL};
static const OpGrad grad_fast_exp = {bw_exp, NULL};
static const OpGrad grad_fast_tanh = {bw_tanh, NULL};
static const OpGrad grad_fast_erf = {bw_erf, NULL};
static const OpGrad grad_fast_softmax = {bw_softmax, NULL};
static const OpGrad grad_max = {bw_extreme, NULL};
static const OpGrad grad_min = {bw_extreme, NULL};
static const OpGrad grad_batch_flatten = {bw_reshape, NULL};
static const OpGrad grad_expand_dims = {bw_reshape, NULL};
static const OpGrad grad_squeeze = {bw_reshape, NULL};
static const OpGrad grad_copy = {bw_identity, NULL};
static const OpGrad grad_reshape_like = {bw_reshape, NULL};
static const OpGrad grad_broadcast_to = {bw_broadcast, NULL};
static const OpGrad grad_broadcast_to_like = {bw_broadcast, NULL};
static const OpGrad grad_dropout_train = {bw_dropout, fw_dropout_train};
static const OpGrad grad_dropout = {bw_dropout, fw_dropout};

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_core[] = {
#define X(name, CODE, row, kernel, cost, grad, doc) {#name, &grad_##grad},
    ELEMWISE_BINARY(X)
#undef X
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) {#name, &grad_##grad},
        ELEMWISE_UNARY(X)
#undef X
            {"where", &grad_where},
    {"cast", &grad_cast},
    {"clip", &grad_clip},
    {"sum", &grad_sum},
    {"mean", &grad_mean},
    {"max", &grad_max},
    {"min", &grad_min},
    {"argmax", &grad_zero},
    {"argmin", &grad_zero},
    {"all", &grad_zero},
    {"any", &grad_zero},
    {"nn.dense", &grad_dense},
    {"nn.matmul", &grad_matmul},
    {"nn.bias_add", &grad_bias_add},
    {"nn.relu", &grad_relu},
    {"nn.leaky_relu", &grad_leaky_relu},
    {"nn.softmax", &grad_softmax},
    {"nn.log_softmax", &grad_log_softmax},
    {"nn.batch_flatten", &grad_batch_flatten},
    {"nn.dropout", &grad_dropout},
    {"nn.dropout_train", &grad_dropout_train},
    {"nn.layer_norm", &grad_layer_norm},
    {"nn.fast_softmax", &grad_fast_softmax},
    {"nn.cross_entropy", &grad_cross_entropy},
    {"nn.cross_entropy_with_logits", &grad_cross_entropy_with_logits},
    {"nn.conv2d", &grad_conv2d},
    {"nn.global_max_pool2d", &grad_global_max_pool2d},
    {"nn.global_avg_pool2d", &grad_global_avg_pool2d},
    {"reshape", &grad_reshape},
    {"transpose", &grad_transpose},
    {"expand_dims", &grad_expand_dims},
    {"squeeze", &grad_squeeze},
    {"concatenate", &grad_concatenate},
    {"split", &grad_split},
    {"take", &grad_take},
    {"broadcast_to", &grad_broadcast_to},
    {"zeros", &grad_zero},
    {"ones", &grad_zero},
    {"full", &grad_full},
    {"zeros_like", &grad_zero},
    {"ones_like", &grad_zero},
    {"shape_of", &grad_zero},
    {"ndarray_size", &grad_zero},
    {"reshape_like", &grad_reshape_like},
    {"broadcast_to_like", &grad_broadcast_to_like},
    {"collapse_sum_like", &grad_collapse_sum_like},
    {"full_like", &grad_full_like},
    {"reinterpret", &grad_zero},
    {"unravel_index", &grad_zero},
    {"argwhere", &grad_zero},
    {"argsort", &grad_zero},
    {"searchsorted", &grad_zero},
    {"dyn.reshape", &grad_reshape_like},
    {"dyn.full", &grad_full},
    {"dyn.broadcast_to", &grad_broadcast_to},
    {"dyn.zeros", &grad_zero},
    {"dyn.ones", &grad_zero},
    {"dyn.squeeze", &grad_reshape_like},
    {"dyn.expand_dims", &grad_reshape_like},
    {"vision.multibox_prior", &grad_zero},
    {"vision.all_class_non_max_suppression", &grad_zero},
    {"tfidf_vectorizer", &grad_zero},
    {"fixed_point_multiply", &grad_zero},
    {"qnn.quantize", &grad_zero},
    {"qnn.dequantize", &grad_dequantize},
    {"qnn.requantize", &grad_zero},
    {"qnn.conv2d", &grad_zero},
    {"qnn.dense", &grad_zero},
    {"qnn.add", &grad_zero},
    {"qnn.mul", &grad_zero},
    {"random.key", &grad_zero},
    {"random.split", &grad_zero},
    {"random.fold_in", &grad_zero},
    {"random.bits", &grad_zero},
    {"random.uniform", &grad_zero},
    {"random.normal", &grad_zero},
    {"random.bernoulli", &grad_zero},
    {"random.key_data", &grad_zero},
    {"random.wrap_key", &grad_zero},
    {"on_device", &grad_copy},
    {"device_copy", &grad_copy},
    {NULL, NULL},
};
