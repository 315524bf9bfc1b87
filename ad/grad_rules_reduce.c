/* grad_rules_reduce.c — gradient rules of the reductions beyond sum, mean,
 * max and min (those are in grad_rules.c): prod (without dividing by x, so
 * zeros are fine), logsumexp, variance (with or without the given mean),
 * std, mean_variance, and the scans cumsum and cumprod.
 *
 * A reduction's adjoint is built on dy broadcast back to x's shape
 * (gr_expand_back); a scan's is the reverse scan of dy. */
#include "ad/grad_rules.h"

/* ───────────────────────── prod ───────────────────────── */

/* x with its reduced axes moved last and flattened into (rows, K):
 * perm (the transpose), xt (x's dims in that order). */
typedef struct Folded {
  int n;
  int64_t perm[TENSOR_MAX_RANK], xt[TENSOR_MAX_RANK], rows, K;
} Folded;

static bool fold_reduced(GradCx *G, GradCall *c, Folded *f) {
  int64_t xd[TENSOR_MAX_RANK];
  bool red[TENSOR_MAX_RANK];
  f->n = rank_of(X0);
  if (!gr_static_dims(grad_tensor_of(X0), xd))
    return grad_fail(G, "the gradient of %s needs x's shape static", c->call->u.call.fn->u.op.name);
  gr_reduced_axes(c->call, f->n, red);
  int m = 0;
  f->rows = f->K = 1;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < f->n; i++)
      if (red[i] == (pass == 1)) {
        f->perm[m] = i, f->xt[m++] = xd[i];
        *(pass ? &f->K : &f->rows) *= xd[i];
      }
  return true;
}

static Expr *scan(GradCx *G, const char *op, Expr *x, int64_t axis, bool exclusive) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_int(G, at, 0, "axis", axis);
  grad_attr_bool(G, at, 1, "exclusive", exclusive);
  return grad_op1(G, op, x, at);
}

static Expr *reverse(GradCx *G, Expr *x, int64_t axis) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_int(G, at, 0, "axis", axis);
  return grad_op1(G, "reverse", x, at);
}

/* The product of the other elements of each row of x2 (rows, K): the
 * exclusive running products from the left times those from the right. */
static Expr *others(GradCx *G, Expr *x2) {
  Expr *left = scan(G, "cumprod", x2, 1, true);
  Expr *right = reverse(G, scan(G, "cumprod", reverse(G, x2, 1), 1, true), 1);
  return mul(G, left, right);
}

/* dx = dy * (the product of the other reduced elements). */
static bool bw_prod(GradCx *G, GradCall *c) {
  Folded f;
  if (!want(c, 0) || !fold_reduced(G, c, &f)) return built(G);
  int64_t inv[TENSOR_MAX_RANK];
  for (int i = 0; i < f.n; i++) inv[f.perm[i]] = i;
  Expr *x2 = gr_reshape_to(G, gr_transpose_to(G, X0, f.n, f.perm), 2, (int64_t[]){f.rows, f.K});
  Expr *d2 = gr_reshape_to(G, DY, 2, (int64_t[]){f.rows, 1});
  Expr *dt = gr_reshape_to(G, mul(G, others(G, x2), d2), f.n, f.xt);
  c->dx[0] = gr_transpose_to(G, dt, f.n, inv);
  return built(G);
}

/* ───────────────────────── logsumexp, variance ───────────────────────── */

/* dx = dy * exp(x - y). */
static bool bw_logsumexp(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *p = grad_op1(G, "exp", sub(G, X0, gr_expand_back(G, c, c->y)), NULL);
  c->dx[0] = mul(G, gr_expand_back(G, c, DY), p);
  return built(G);
}

/* The number of elements reduced into each result, as a scalar of x's
 * dtype (less one when unbiased); NULL after grad_fail. */
static Expr *divisor(GradCx *G, GradCall *c, bool unbiased) {
  int n = rank_of(X0);
  int64_t xd[TENSOR_MAX_RANK], cnt = 1;
  bool red[TENSOR_MAX_RANK];
  if (!gr_static_dims(grad_tensor_of(X0), xd))
    return grad_fail(G, "the gradient of %s needs x's shape static", c->call->u.call.fn->u.op.name),
           NULL;
  gr_reduced_axes(c->call, n, red);
  for (int i = 0; i < n; i++) cnt *= red[i] ? xd[i] : 1;
  return k(G, X0, (double)(cnt - (unbiased && op_attr_bool(c->call, "unbiased"))));
}

/* x - mean: the mean given as the second argument, or x's own over the
 * reduced axes. */
static Expr *centered(GradCx *G, GradCall *c) {
  if (c->nx > 1) return sub(G, X0, X1);
  int n = rank_of(X0), m = 0;
  bool red[TENSOR_MAX_RANK];
  int64_t axes[TENSOR_MAX_RANK];
  gr_reduced_axes(c->call, n, red);
  for (int i = 0; i < n; i++)
    if (red[i]) axes[m++] = i;
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "axis", m, axes);
  grad_attr_bool(G, at, 1, "keepdims", true);
  return sub(G, X0, grad_op1(G, "mean", X0, at));
}

/* variance's adjoint of x for dvar: 2 (x - mean) / (n - unbiased) dvar
 * (x's own mean moves with x, but the centered values sum to zero); the
 * given mean gets minus its sum. */
static Expr *variance_dx(GradCx *G, GradCall *c, Expr *dvar) {
  Expr *scale = divide(G, gr_expand_back(G, c, dvar), divisor(G, c, true));
  return mul(G, mul(G, k(G, X0, 2), centered(G, c)), scale);
}

static bool bw_variance(GradCx *G, GradCall *c) {
  Expr *d = variance_dx(G, c, DY);
  if (want(c, 0)) c->dx[0] = d;
  if (c->nx > 1 && want(c, 1)) c->dx[1] = grad_unbroadcast(G, neg(G, d), X1);
  return built(G);
}

/* std = sqrt(variance): dvar = dy / (2 std). */
static bool bw_std(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = variance_dx(G, c, divide(G, DY, mul(G, k(G, DY, 2), c->y)));
  return built(G);
}

/* (mean, variance): each field's adjoint, where it has one. */
static bool bw_mean_variance(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *dm = c->dy[0], *dv = c->dy[1], *d = NULL;
  if (dm) d = gr_expand_back(G, c, divide(G, dm, divisor(G, c, false)));
  if (dv) d = d ? add(G, d, variance_dx(G, c, dv)) : variance_dx(G, c, dv);
  c->dx[0] = d;
  return built(G);
}

/* ───────────────────────── scans ───────────────────────── */

/* The scan's axis (0 of the flattened data when None). */
static int scan_axis(GradCall *c) {
  return op_attr_is_none(c->call, "axis") ? 0 : gr_norm_axis(X0, op_attr_int(c->call, "axis"));
}

/* d summed back over the elements each result came from (the reverse
 * scan), along axis a of d's own shape. */
static Expr *reverse_scan(GradCx *G, GradCall *c, Expr *d, int a) {
  return reverse(G, scan(G, "cumsum", reverse(G, d, a), a, op_attr_bool(c->call, "exclusive")), a);
}

static Attrs *dtype_attr(GradCx *G, DType dt) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(dt));
  return at;
}

/* r (the scan's shape) as x's adjoint: reshaped to x and cast to its dtype. */
static Expr *as_x(GradCx *G, GradCall *c, Expr *r) {
  if (op_attr_is_none(c->call, "axis")) r = grad_op2(G, "reshape_like", r, X0);
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  if (r && grad_tensor_of(r)->u.tensor.dtype != dt) r = grad_op1(G, "cast", r, dtype_attr(G, dt));
  return r;
}

static bool bw_cumsum(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = as_x(G, c, reverse_scan(G, c, DY, scan_axis(c)));
  return built(G);
}

/* where(cond, a, b). */
static Expr *select(GradCx *G, Expr *cond, Expr *a, Expr *b) {
  Expr *args[3] = {cond, a, b};
  return grad_op(G, "where", 3, args, NULL);
}

/* y_i = prod of x_j for j <= i (j < i exclusive).  With z the first zero
 * of x along the axis: before z, dx_j = (reverse scan of dy y)_j / x_j
 * (x_j is not 0, and every y from z on is 0); at z, dx_z is the reverse
 * scan of dy times the scan of x with x_z read as 1 (the product of the
 * others); after z every product holds x_z besides x_j, so dx_j = 0.
 * Exact with zeros, as torch's cumprod_backward. */
static bool bw_cumprod(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int a = scan_axis(c);
  Expr *x = op_attr_is_none(c->call, "axis") ? gr_reshape_to(G, X0, 1, (int64_t[]){-1}) : X0;
  Expr *zero = grad_op2(G, "equal", x, k(G, x, 0));
  Attrs *at = grad_attrs(G, 2);
  grad_attr_int(G, at, 0, "axis", a);
  grad_attr_bool(G, at, 1, "exclusive", false);
  Expr *seen = grad_op1(
      G, "cumsum", grad_op1(G, "cast", zero, dtype_attr(G, grad_tensor_of(X0)->u.tensor.dtype)),
      at); /* zeros up to i */
  Expr *clean = grad_op2(G, "equal", seen, k(G, seen, 0));
  Expr *first = grad_op2(G, "logical_and", zero, grad_op2(G, "equal", seen, k(G, seen, 1)));
  Expr *safe = select(G, zero, k(G, x, 1), x);
  DType dt = grad_tensor_of(DY)->u.tensor.dtype; /* y's (cumprod's dtype attribute) */
  if (safe && grad_tensor_of(safe)->u.tensor.dtype != dt)
    safe = grad_op1(G, "cast", safe, dtype_attr(G, dt));
  Expr *before = divide(G, reverse_scan(G, c, mul(G, DY, c->y), a), safe);
  Expr *y1 = grad_op1(G, "cumprod", select(G, first, k(G, x, 1), x), c->call->u.call.attrs);
  Expr *at_z = masked(G, first, reverse_scan(G, c, mul(G, DY, y1), a));
  c->dx[0] = as_x(G, c, select(G, clean, before, at_z));
  return built(G);
}

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_REDUCE(X) \
  X(prod) X(logsumexp) X(variance) X(std) X(mean_variance) X(cumsum) X(cumprod)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_REDUCE(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_reduce[] = {
    {"prod", &grad_prod},
    {"logsumexp", &grad_logsumexp},
    {"variance", &grad_variance},
    {"std", &grad_std},
    {"mean_variance", &grad_mean_variance},
    {"cumsum", &grad_cumsum},
    {"cumprod", &grad_cumprod},
    {NULL, NULL},
};
