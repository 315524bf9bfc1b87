/* grad_rules_nn.c — gradient rules of the nn family beyond dense, matmul,
 * bias_add, the activations, softmax and layer_norm (grad_rules.c):
 * batch_matmul and contrib_dense_pack, prelu, the normalizations
 * batch_norm (the inference form the op computes: the given moving
 * statistics, which get adjoints of their own), instance_norm, group_norm,
 * l2_normalize and lrn, and nll_loss.  Convolutions and pools are in
 * grad_rules_conv.c, the layout ops in grad_rules_layout.c. */
#include <string.h>

#include "ad/grad_rules.h"

/* op(x, axis=axes, keepdims=True) for a reduction op. */
static Expr *reduce_axes_keep(GradCx *G, const char *op, Expr *x, int m, const int64_t *axes) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "axis", m, axes);
  grad_attr_bool(G, at, 1, "keepdims", true);
  return grad_op1(G, op, x, at);
}

static Expr *cast_to(GradCx *G, Expr *x, DType dt) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(dt));
  return grad_op1(G, "cast", x, at);
}

static DType dtype_of(const Expr *e) { return grad_tensor_of(e)->u.tensor.dtype; }

/* ───────────────────────── products ───────────────────────── */

static Expr *batch_matmul(GradCx *G, Expr *a, Expr *b, bool ta, bool tb) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_bool(G, at, 0, "transpose_a", ta);
  grad_attr_bool(G, at, 1, "transpose_b", tb);
  Expr *args[2] = {a, b};
  return grad_op(G, "nn.batch_matmul", 2, args, at);
}

/* C = op(A) op(B) per batch (nn.matmul's rule), summed over the batch of
 * an operand that broadcasts (batch 1). */
static bool bw_batch_matmul(GradCx *G, GradCall *c) {
  bool ta = op_attr_bool(c->call, "transpose_a"), tb = op_attr_bool(c->call, "transpose_b");
  if (want(c, 0)) {
    Expr *d = ta ? batch_matmul(G, X1, DY, tb, true) : batch_matmul(G, DY, X1, false, !tb);
    c->dx[0] = grad_unbroadcast(G, d, X0);
  }
  if (want(c, 1)) {
    Expr *d = tb ? batch_matmul(G, DY, X0, true, ta) : batch_matmul(G, X0, DY, !ta, false);
    c->dx[1] = grad_unbroadcast(G, d, X1);
  }
  return built(G);
}

/* nn.contrib_dense_pack(x, w): w (NB, K, n) holds the weight (NB n, K) in
 * panels, W[b n + j, k] = w[b, k, j]; the rule is nn.dense's on W. */
static bool bw_dense_pack(GradCx *G, GradCall *c) {
  int64_t wd[3];
  if (rank_of(X0) != 2 || !gr_static_dims(grad_tensor_of(X1), wd))
    return grad_fail(G, "the gradient of nn.contrib_dense_pack takes 2-D data and a static weight");
  const int64_t swap[3] = {0, 2, 1};
  Expr *w = gr_reshape_to(G, gr_transpose_to(G, X1, 3, swap), 2, (int64_t[]){wd[0] * wd[2], wd[1]});
  if (grad_tensor_of(DY)->u.tensor.dims[1].value != wd[0] * wd[2])
    return grad_fail(G, "the gradient of nn.contrib_dense_pack needs units to fill the panels");
  if (want(c, 0)) c->dx[0] = gr_matmul(G, DY, w, false, false);
  if (want(c, 1)) {
    Expr *dw =
        gr_reshape_to(G, gr_matmul(G, DY, X0, true, false), 3, (int64_t[]){wd[0], wd[2], wd[1]});
    c->dx[1] = gr_transpose_to(G, dw, 3, swap);
  }
  return built(G);
}

/* ───────────────────────── prelu ───────────────────────── */

/* y = x where x > 0, alpha[c] x elsewhere. */
static bool bw_prelu(GradCx *G, GradCall *c) {
  int n = rank_of(X0), a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  Expr *pos = grad_op2(G, "greater", X0, k(G, X0, 0));
  if (want(c, 0)) {
    Expr *args[3] = {pos, DY, mul(G, DY, gr_along(G, X1, a, n))};
    c->dx[0] = grad_op(G, "where", 3, args, NULL);
  }
  if (want(c, 1)) {
    Expr *args[3] = {pos, k(G, DY, 0), mul(G, DY, X0)};
    c->dx[1] = gr_sum_but(G, grad_op(G, "where", 3, args, NULL), a);
  }
  return built(G);
}

/* ───────────────────────── normalizations ───────────────────────── */

/* A normalization over groups of x's elements: x reshaped to `gshape`
 * (rank gn), each group spanning the axes red[] of that shape; gamma and
 * beta along axis a of x. */
typedef struct Norm {
  int n, gn, m, a;
  int64_t xshape[TENSOR_MAX_RANK], gshape[TENSOR_MAX_RANK], red[TENSOR_MAX_RANK];
} Norm;

/* xhat = (x - mean) rstd and g = dy gamma (both in the grouped shape):
 * dx = rstd (g - mean(g) - xhat mean(g xhat)); dgamma, dbeta summed over
 * every axis but a. */
static bool norm_backward(GradCx *G, GradCall *c, const Norm *nm) {
  bool scale = op_attr_bool(c->call, "scale"), center = op_attr_bool(c->call, "center");
  Expr *xg = gr_reshape_to(G, X0, nm->gn, nm->gshape);
  Expr *mu = reduce_axes_keep(G, "mean", xg, nm->m, nm->red);
  Expr *var = reduce_axes_keep(G, "variance", xg, nm->m, nm->red);
  Expr *eps = k(G, X0, op_attr_float(c->call, "epsilon"));
  Expr *rstd = grad_op1(G, "rsqrt", add(G, var, eps), NULL);
  Expr *xhat = mul(G, sub(G, xg, mu), rstd);
  if (want(c, 0)) {
    Expr *g = scale ? mul(G, DY, gr_along(G, X1, nm->a, nm->n)) : DY;
    Expr *gg = gr_reshape_to(G, g, nm->gn, nm->gshape);
    Expr *t = mul(G, xhat, reduce_axes_keep(G, "mean", mul(G, gg, xhat), nm->m, nm->red));
    Expr *dxg =
        mul(G, rstd, sub(G, sub(G, gg, reduce_axes_keep(G, "mean", gg, nm->m, nm->red)), t));
    c->dx[0] = gr_reshape_to(G, dxg, nm->n, nm->xshape);
  }
  if (scale && want(c, 1))
    c->dx[1] = gr_sum_but(G, mul(G, DY, gr_reshape_to(G, xhat, nm->n, nm->xshape)), nm->a);
  if (center && want(c, 2)) c->dx[2] = gr_sum_but(G, DY, nm->a);
  return built(G);
}

static bool norm_shape(GradCx *G, GradCall *c, Norm *nm) {
  nm->n = rank_of(X0);
  nm->a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  if (!gr_static_dims(grad_tensor_of(X0), nm->xshape))
    return grad_fail(G, "the gradient of %s needs x's shape static", c->call->u.call.fn->u.op.name);
  return true;
}

/* instance_norm: a group per (batch index, channel): every other axis. */
static bool bw_instance_norm(GradCx *G, GradCall *c) {
  Norm nm;
  if (!norm_shape(G, c, &nm)) return false;
  nm.gn = nm.n, nm.m = 0;
  for (int i = 0; i < nm.n; i++) {
    nm.gshape[i] = nm.xshape[i];
    if (i != 0 && i != nm.a) nm.red[nm.m++] = i;
  }
  return norm_backward(G, c, &nm);
}

/* group_norm: the channel axis split into (groups, channels per group); a
 * group spans the channels of its group and every axis after them. */
static bool bw_group_norm(GradCx *G, GradCall *c) {
  Norm nm;
  if (!norm_shape(G, c, &nm)) return false;
  int64_t groups = op_attr_int(c->call, "num_groups");
  nm.gn = nm.n + 1, nm.m = 0;
  for (int i = 0, j = 0; i < nm.n; i++, j++) {
    if (i == nm.a) {
      nm.gshape[j++] = groups;
      nm.gshape[j] = nm.xshape[i] / groups;
    } else {
      nm.gshape[j] = nm.xshape[i];
    }
    if (i >= nm.a) nm.red[nm.m++] = j;
  }
  return norm_backward(G, c, &nm);
}

/* nn.batch_norm(x, gamma, beta, mean, var) -> (y, mean, var) with
 * y = (x - mean) s gamma + beta, s = rsqrt(var + eps), along axis a; the
 * statistics pass through, so their fields' adjoints join theirs. */
static bool bw_batch_norm(GradCx *G, GradCall *c) {
  int n = rank_of(X0), a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  bool scale = op_attr_bool(c->call, "scale"), center = op_attr_bool(c->call, "center");
  Expr *dy = c->dy[0], *eps = k(G, X0, op_attr_float(c->call, "epsilon"));
  Expr *s = grad_op1(G, "rsqrt", add(G, c->x[4], eps), NULL); /* per channel */
  Expr *gs = scale ? mul(G, X1, s) : s;
  Expr *xc = sub(G, X0, gr_along(G, c->x[3], a, n));
  Expr *dmean = c->dy[1], *dvar = c->dy[2];
  if (dy) {
    if (want(c, 0)) c->dx[0] = mul(G, dy, gr_along(G, gs, a, n));
    if (scale && want(c, 1)) c->dx[1] = mul(G, gr_sum_but(G, mul(G, dy, xc), a), s);
    if (center && want(c, 2)) c->dx[2] = gr_sum_but(G, dy, a);
    Expr *dm = neg(G, mul(G, gr_sum_but(G, dy, a), gs));
    /* d s / d var = -s^3 / 2 */
    Expr *ds = mul(G, gr_sum_but(G, mul(G, dy, xc), a), scale ? X1 : k(G, X0, 1));
    Expr *dv = mul(G, ds, mul(G, k(G, X0, -0.5), mul(G, s, mul(G, s, s))));
    dmean = dmean ? add(G, dmean, dm) : dm;
    dvar = dvar ? add(G, dvar, dv) : dv;
  }
  if (want(c, 3)) c->dx[3] = dmean;
  if (want(c, 4)) c->dx[4] = dvar;
  return built(G);
}

/* y = x r, r = rsqrt(max(s, eps)), s = sum(x^2) over the axes:
 * dx = r (dy - [s > eps] y sum(dy y)). */
static bool bw_l2_normalize(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int64_t axes[TENSOR_MAX_RANK];
  int m = op_attr_ints(c->call, "axis", axes, TENSOR_MAX_RANK);
  for (int i = 0; i < m; i++) axes[i] = gr_norm_axis(X0, axes[i]);
  Expr *ss = reduce_axes_keep(G, "sum", mul(G, X0, X0), m, axes);
  Expr *eps = k(G, X0, op_attr_float(c->call, "eps"));
  Expr *r = grad_op1(G, "rsqrt", grad_op2(G, "maximum", ss, eps), NULL);
  Expr *proj = mul(G, c->y, reduce_axes_keep(G, "sum", mul(G, DY, c->y), m, axes));
  c->dx[0] = mul(G, r, sub(G, DY, masked(G, grad_op2(G, "greater", ss, eps), proj)));
  return built(G);
}

/* t shifted along axis a by o (element i is t[i + o], 0 outside), for
 * each o in [from, to], summed. */
static Expr *window_sum(GradCx *G, Expr *t, int a, int64_t from, int64_t to) {
  int n = rank_of(t);
  int64_t size = grad_tensor_of(t)->u.tensor.dims[a].value, P = to > -from ? to : -from;
  int64_t pw[TENSOR_MAX_RANK][2] = {{0}};
  pw[a][0] = pw[a][1] = P;
  Attrs *pa = grad_attrs(G, 1);
  grad_attr_pairs(G, pa, 0, "pad_width", n, pw);
  Expr *args[2] = {t, k(G, t, 0)};
  Expr *padded = grad_op(G, "nn.pad", 2, args, pa), *sum = NULL;
  for (int64_t o = from; o <= to; o++) {
    int64_t b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK];
    gr_static_dims(grad_tensor_of(t), e);
    b[a] = P + o, e[a] = P + o + size;
    Attrs *sl = grad_attrs(G, 2);
    grad_attr_ints(G, sl, 0, "begin", n, b);
    grad_attr_ints(G, sl, 1, "end", n, e);
    Expr *s = grad_op1(G, "strided_slice", padded, sl);
    sum = sum ? add(G, sum, s) : s;
  }
  return sum;
}

/* y = x D^-beta, D = bias + alpha / size * S, S the sum of x^2 over the
 * window of channels [c - size/2, c - size/2 + size); x_j is in the
 * windows of the channels [j - (size - 1 - size/2), j + size/2]. */
static bool bw_lrn(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
  int64_t size = op_attr_int(c->call, "size"), half = size / 2;
  if (!gr_static_dims(grad_tensor_of(X0), (int64_t[TENSOR_MAX_RANK]){0}))
    return grad_fail(G, "the gradient of nn.lrn needs x's shape static");
  double alpha = op_attr_float(c->call, "alpha") / (double)size,
         beta = op_attr_float(c->call, "beta");
  Expr *S = window_sum(G, mul(G, X0, X0), a, -half, size - 1 - half);
  Expr *D = add(G, k(G, X0, op_attr_float(c->call, "bias")), mul(G, k(G, X0, alpha), S));
  Expr *Dp = grad_op2(G, "power", D, k(G, X0, -beta));
  Expr *t = divide(G, mul(G, mul(G, DY, X0), Dp), D);
  Expr *back = window_sum(G, t, a, -(size - 1 - half), half);
  c->dx[0] = sub(G, mul(G, DY, Dp), mul(G, k(G, X0, 2 * alpha * beta), mul(G, X0, back)));
  return built(G);
}

/* ───────────────────────── nll_loss ───────────────────────── */

/* nn.nll_loss(pred (N, C, d...), target (N, d...), w (C)): the loss of an
 * element is -pred[n, t] w[t] (0 when t is ignore_index); the reduction
 * none, sum, or mean (divided by W, the sum of the weights used).
 * With hot = the one-hot target (0 where ignored):
 * dpred = -hot w dy / W, dw_c = -(P_c + y n_c) dy / W for mean
 * (P_c: sum of pred where t = c, n_c: their count), -P_c dy otherwise. */
static bool bw_nll_loss(GradCx *G, GradCall *c) {
  int n = rank_of(X0);
  const Type *tp = grad_tensor_of(X0);
  DType dt = tp->u.tensor.dtype;
  const char *red = op_attr_str(G->a, c->call, "reduction");
  Attrs *oh = grad_attrs(G, 3);
  grad_attr_int(G, oh, 0, "depth", tp->u.tensor.dims[1].value);
  grad_attr_int(G, oh, 1, "axis", 1);
  grad_attr_str(G, oh, 2, "dtype", dtype_name(dt));
  Expr *args[3] = {X1, grad_scalar(G, dt, 1), grad_scalar(G, dt, 0)};
  Expr *ign = grad_scalar(G, dtype_of(X1), (double)op_attr_int(c->call, "ignore_index"));
  Expr *valid = cast_to(G, grad_op2(G, "not_equal", X1, ign), dt);
  Attrs *ax1 = grad_attrs(G, 1);
  grad_attr_int(G, ax1, 0, "axis", 1);
  Expr *hot = mul(G, grad_op(G, "one_hot", 3, args, oh), grad_op1(G, "expand_dims", valid, ax1));
  Expr *wt = mul(G, hot, gr_along(G, c->x[2], 1, n));
  Expr *d = strcmp(red, "none") == 0 ? grad_op1(G, "expand_dims", DY, ax1) : DY;
  bool mean = strcmp(red, "mean") == 0;
  if (mean) d = divide(G, d, grad_op1(G, "sum", wt, NULL));
  if (want(c, 0)) c->dx[0] = neg(G, mul(G, wt, d));
  if (want(c, 2)) {
    Expr *dw = neg(G, gr_sum_but(G, mul(G, mul(G, hot, X0), d), 1));
    if (mean) dw = sub(G, dw, mul(G, gr_sum_but(G, hot, 1), mul(G, c->y, d)));
    c->dx[2] = dw;
  }
  return built(G);
}

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_NN(X) \
  X(batch_matmul) X(dense_pack) X(prelu) X(instance_norm) X(group_norm) X(batch_norm) \
  X(l2_normalize) X(lrn) X(nll_loss)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_NN(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_nn[] = {
    {"nn.contrib_dense_pack", &grad_dense_pack},
    {"nn.batch_matmul", &grad_batch_matmul},
    {"nn.batch_norm", &grad_batch_norm},
    {"nn.instance_norm", &grad_instance_norm},
    {"nn.group_norm", &grad_group_norm},
    {"nn.l2_normalize", &grad_l2_normalize},
    {"nn.lrn", &grad_lrn},
    {"nn.prelu", &grad_prelu},
    {"nn.nll_loss", &grad_nll_loss},
    {NULL, NULL},
};
