/* grad_rules_conv.c — gradient rules of the windowed nn ops: convolutions
 * of 1 to 3 spatial dims (any layout nn_conv_axes reads, any groups), the
 * transposed convolutions, and the max and average pools (strides,
 * padding, dilation, ceil_mode, count_include_pad, any layout).
 * nn.contrib_conv2d_NCHWc through its plain form (layout_transform).
 * nn.conv2d with NCHW data, OIHW weights and one group keeps its own rule
 * (grad_rules.c), which comes here for the other cases.
 *
 * Convolutions, in the plain layout (data N, C, spatial; weight O, C/g,
 * spatial), y[n, o, u] = sum x[n, c, u s - lo + k d] w[o, c, k]:
 *   dx = conv(dilate(dy, s) padded, w flipped, its channels swapped per
 *        group; dilation d) — the transposed convolution as a plain one;
 *   dw = conv(x with batch and channels swapped, dy likewise, strides d,
 *        dilation s, groups g), cut to the kernel's size.
 * A transposed convolution is the adjoint of the convolution with its
 * weight read as (C, O/g, k): that convolution of dy is dx, and the
 * same weight gradient with the operands' roles exchanged is dw.
 *
 * Pools: x padded (with -inf for max) and, for each offset k of the
 * window, the strided slice of every window's element k; its adjoint is
 * put back with nn.dilate and nn.pad and the padding cut off.  Max gives
 * dy to the first element of a window equal to its maximum (as torch does);
 * average gives each element of the window dy times the weight the op
 * gave it (avg_pool of ones over the window's count of input elements,
 * which follows count_include_pad). */
#include <math.h>
#include <string.h>

#include "ad/grad_rules.h"
#include "ops/nn_int.h"

static const char *const conv_ops[] = {NULL, "nn.conv1d", "nn.conv2d", "nn.conv3d"};

/* A convolution's window and its groups, in the plain layout. */
typedef struct ConvG {
  int S;
  NnWindow w;
  int64_t groups;
} ConvG;

static int64_t dim_at(const Expr *e, int i) { return grad_tensor_of(e)->u.tensor.dims[i].value; }

static Expr *conv(GradCx *G, const ConvG *cv, Expr *x, Expr *w, const int64_t *st,
                  const int64_t *dil, const int64_t *lo, const int64_t *hi) {
  int S = cv->S;
  int64_t pad[2 * NN_MAX_SPATIAL];
  for (int i = 0; i < S; i++) pad[i] = lo[i], pad[S + i] = hi[i];
  Attrs *at = grad_attrs(G, 4);
  grad_attr_ints(G, at, 0, "strides", S, st);
  grad_attr_ints(G, at, 1, "dilation", S, dil);
  grad_attr_ints(G, at, 2, "padding", 2 * S, pad);
  grad_attr_int(G, at, 3, "groups", cv->groups);
  Expr *args[2] = {x, w};
  return grad_op(G, conv_ops[S], 2, args, at);
}

/* e (rank n) sliced to [b, e) with steps st (NULL: 1) along every axis. */
static Expr *slice(GradCx *G, Expr *e, int n, const int64_t *b, const int64_t *end,
                   const int64_t *st) {
  Attrs *at = grad_attrs(G, st ? 3 : 2);
  grad_attr_ints(G, at, 0, "begin", n, b);
  grad_attr_ints(G, at, 1, "end", n, end);
  if (st) grad_attr_ints(G, at, 2, "strides", n, st);
  return grad_op1(G, "strided_slice", e, at);
}

/* e padded by pw (rank n) with `fill`; e itself when pw is all 0. */
static Expr *pad(GradCx *G, Expr *e, int n, int64_t (*pw)[2], double fill) {
  bool any = false;
  for (int i = 0; i < n; i++) any |= pw[i][0] || pw[i][1];
  if (!any) return e;
  Attrs *at = grad_attrs(G, 1);
  grad_attr_pairs(G, at, 0, "pad_width", n, pw);
  Expr *args[2] = {e, k(G, e, fill)};
  return grad_op(G, "nn.pad", 2, args, at);
}

/* e with st[i] - 1 zeros between its elements along each axis. */
static Expr *dilate(GradCx *G, Expr *e, int n, const int64_t *st) {
  bool any = false;
  for (int i = 0; i < n; i++) any |= st[i] != 1;
  if (!any) return e;
  Attrs *at = grad_attrs(G, 1);
  grad_attr_ints(G, at, 0, "strides", n, st);
  return grad_op1(G, "nn.dilate", e, at);
}

/* A weight (O, C/g, k...) as (C, O/g, k...): its channels swapped within
 * each group. */
static Expr *swap_groups(GradCx *G, Expr *w, int64_t g) {
  int n = rank_of(w);
  int64_t d[TENSOR_MAX_RANK], split[TENSOR_MAX_RANK + 1], perm[TENSOR_MAX_RANK + 1];
  gr_static_dims(grad_tensor_of(w), d);
  split[0] = g, split[1] = d[0] / g, split[2] = d[1];
  perm[0] = 0, perm[1] = 2, perm[2] = 1;
  for (int i = 2; i < n; i++) split[i + 1] = d[i], perm[i + 1] = i + 1;
  Expr *t = gr_transpose_to(G, gr_reshape_to(G, w, n + 1, split), n + 1, perm);
  int64_t out[TENSOR_MAX_RANK];
  out[0] = d[1] * g, out[1] = d[0] / g;
  for (int i = 2; i < n; i++) out[i] = d[i];
  return gr_reshape_to(G, t, n, out);
}

/* The adjoint of the convolution of an input of spatial sizes X with w
 * (O, C/g, k...), at its result's adjoint d (N, O, U...). */
static Expr *conv_input_adjoint(GradCx *G, const ConvG *cv, Expr *d, Expr *w, const int64_t *X) {
  int S = cv->S, n = S + 2;
  const NnWindow *win = &cv->w;
  Expr *wf = swap_groups(G, w, cv->groups);
  for (int i = 0; i < S; i++) {
    Attrs *at = grad_attrs(G, 1);
    grad_attr_int(G, at, 0, "axis", 2 + i);
    wf = grad_op1(G, "reverse", wf, at);
  }
  int64_t st[TENSOR_MAX_RANK] = {1, 1}, pw[TENSOR_MAX_RANK][2] = {{0}};
  int64_t b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK], one[NN_MAX_SPATIAL], zero[NN_MAX_SPATIAL];
  for (int i = 0; i < S; i++) st[2 + i] = win->stride[i], one[i] = 1, zero[i] = 0;
  Expr *dd = dilate(G, d, n, st);
  gr_static_dims(grad_tensor_of(dd), e);
  bool crop = false;
  for (int i = 0; i < S; i++) {
    int64_t reach = win->dil[i] * (win->k[i] - 1), L = e[2 + i];
    int64_t left = reach - win->lo[i], right = X[i] + reach - left - L;
    pw[2 + i][0] = left > 0 ? left : 0, pw[2 + i][1] = right > 0 ? right : 0;
    b[2 + i] = left < 0 ? -left : 0;
    e[2 + i] = b[2 + i] + X[i] + reach;
    crop |= left < 0 || right < 0;
  }
  Expr *p = pad(G, dd, n, pw, 0);
  if (crop) p = slice(G, p, n, b, e, NULL);
  return conv(G, cv, p, wf, one, win->dil, zero, zero);
}

/* The weight gradient (O, C/g, k...) of the convolution of in (N, C, X...)
 * whose result's adjoint is d (N, O, U...). */
static Expr *conv_weight_adjoint(GradCx *G, const ConvG *cv, Expr *in, Expr *d) {
  int S = cv->S, n = S + 2;
  int64_t g = cv->groups, xd[TENSOR_MAX_RANK], dd[TENSOR_MAX_RANK];
  gr_static_dims(grad_tensor_of(in), xd);
  gr_static_dims(grad_tensor_of(d), dd);
  /* in (N, g, C/g, X...) -> (C/g, g, N, X...) -> (C/g, g N, X...) */
  int64_t s5[TENSOR_MAX_RANK + 1] = {xd[0], g, xd[1] / g}, p5[TENSOR_MAX_RANK + 1] = {2, 1, 0};
  int64_t s4[TENSOR_MAX_RANK] = {xd[1] / g, g * xd[0]};
  for (int i = 0; i < S; i++) s5[3 + i] = xd[2 + i], p5[3 + i] = 3 + i, s4[2 + i] = xd[2 + i];
  Expr *xi =
      gr_reshape_to(G, gr_transpose_to(G, gr_reshape_to(G, in, n + 1, s5), n + 1, p5), n, s4);
  /* d (N, g, O/g, U...) -> (g, O/g, N, U...) -> (O, N, U...) */
  int64_t t5[TENSOR_MAX_RANK + 1] = {dd[0], g, dd[1] / g}, q5[TENSOR_MAX_RANK + 1] = {1, 2, 0};
  int64_t t4[TENSOR_MAX_RANK] = {dd[1], dd[0]};
  for (int i = 0; i < S; i++) t5[3 + i] = dd[2 + i], q5[3 + i] = 3 + i, t4[2 + i] = dd[2 + i];
  Expr *dk = gr_reshape_to(G, gr_transpose_to(G, gr_reshape_to(G, d, n + 1, t5), n + 1, q5), n, t4);
  Expr *r = conv(G, cv, xi, dk, cv->w.dil, cv->w.stride, cv->w.lo, cv->w.hi);
  int64_t perm[TENSOR_MAX_RANK] = {1, 0}, b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK];
  for (int i = 0; i < S; i++) perm[2 + i] = 2 + i;
  r = gr_transpose_to(G, r, n, perm); /* (O, C/g, k'...) */
  gr_static_dims(grad_tensor_of(r), e);
  bool cut = false;
  for (int i = 0; i < S; i++) cut |= e[2 + i] != cv->w.k[i], e[2 + i] = cv->w.k[i];
  return cut ? slice(G, r, n, b, e, NULL) : r;
}

/* Reads a convolution's window (k from the weight's spatial axes w_sp). */
static bool conv_window(GradCx *G, GradCall *c, ConvG *cv, Expr *w) {
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  const Attrs *at = c->call->u.call.attrs;
  cv->w.S = cv->S;
  cv->groups = op_attr_int(c->call, "groups");
  if (!nn_window_attrs(&cx, at, &cv->w)) return grad_fail(G, "%s", cx.err);
  for (int i = 0; i < cv->S; i++) cv->w.k[i] = dim_at(w, 2 + i);
  return true;
}

static bool all_static(GradCx *G, GradCall *c) {
  int64_t d[TENSOR_MAX_RANK];
  if (gr_static_dims(grad_tensor_of(X0), d) && gr_static_dims(grad_tensor_of(X1), d) &&
      gr_static_dims(grad_tensor_of(c->y), d))
    return true;
  return grad_fail(G, "the gradient of %s needs static shapes", c->call->u.call.fn->u.op.name);
}

/* The axes permutation taking `to` positions to the plain order, and back. */
static void plain_perm(const int *pos, int n, int64_t *to, int64_t *back) {
  for (int i = 0; i < n; i++) to[i] = pos[i], back[pos[i]] = i;
}

bool gr_conv_backward(GradCx *G, GradCall *c) {
  ConvG cv = {.S = rank_of(X0) - 2};
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  NnConvAxes ax;
  if (!all_static(G, c)) return false;
  if (!nn_conv_axes(&cx, c->call->u.call.attrs, cv.S, &ax)) return grad_fail(G, "%s", cx.err);
  int n = cv.S + 2;
  int64_t xto[TENSOR_MAX_RANK], xback[TENSOR_MAX_RANK], wto[TENSOR_MAX_RANK],
      wback[TENSOR_MAX_RANK];
  plain_perm(ax.x, n, xto, xback);
  plain_perm(ax.w, n, wto, wback);
  bool plain = nn_conv_axes_plain(&ax, cv.S);
  Expr *x = plain ? X0 : gr_transpose_to(G, X0, n, xto);
  Expr *w = plain ? X1 : gr_transpose_to(G, X1, n, wto);
  Expr *d = plain ? DY : gr_transpose_to(G, DY, n, xto);
  if (!conv_window(G, c, &cv, w)) return false;
  int64_t X[NN_MAX_SPATIAL];
  for (int i = 0; i < cv.S; i++) X[i] = dim_at(x, 2 + i);
  if (want(c, 0)) {
    Expr *dx = conv_input_adjoint(G, &cv, d, w, X);
    c->dx[0] = plain ? dx : gr_transpose_to(G, dx, n, xback);
  }
  if (want(c, 1)) {
    Expr *dw = conv_weight_adjoint(G, &cv, x, d);
    c->dx[1] = plain ? dw : gr_transpose_to(G, dw, n, wback);
  }
  return built(G);
}

static Expr *relayout(GradCx *G, Expr *e, const char *src, const char *dst) {
  Attrs *at = grad_attrs(G, 2);
  grad_attr_str(G, at, 0, "src_layout", src);
  grad_attr_str(G, at, 1, "dst_layout", dst);
  return grad_op1(G, "layout_transform", e, at);
}

/* nn.contrib_conv2d_NCHWc: the plain convolution's rule on the operands
 * unpacked to NCHW and OIHW, the adjoints packed again. */
static bool bw_conv2d_nchwc(GradCx *G, GradCall *c) {
  ConvG cv = {.S = 2};
  if (!all_static(G, c)) return false;
  const char *dl = op_attr_str(G->a, c->call, "data_layout");
  const char *kl = op_attr_str(G->a, c->call, "kernel_layout");
  const char *ol = arena_printf(G->a, "NCHW%lldc", (long long)dim_at(c->y, 4));
  Expr *x = relayout(G, X0, dl, "NCHW"), *w = relayout(G, X1, kl, "OIHW");
  Expr *d = relayout(G, DY, ol, "NCHW");
  if (!built(G) || !conv_window(G, c, &cv, w)) return false;
  int64_t X[2] = {dim_at(x, 2), dim_at(x, 3)};
  if (want(c, 0)) c->dx[0] = relayout(G, conv_input_adjoint(G, &cv, d, w, X), "NCHW", dl);
  if (want(c, 1)) c->dx[1] = relayout(G, conv_weight_adjoint(G, &cv, x, d), "OIHW", kl);
  return built(G);
}

static bool bw_conv1d(GradCx *G, GradCall *c) { return gr_conv_backward(G, c); }
static bool bw_conv3d(GradCx *G, GradCall *c) { return gr_conv_backward(G, c); }

/* Transposed: the weight read as (C, O/g, k...) (kernel layouts IO...,
 * and conv1d_transpose's OIW) is the plain convolution's weight from y's
 * space to x's. */
static bool bw_conv_transpose(GradCx *G, GradCall *c) {
  ConvG cv = {.S = rank_of(X0) - 2};
  int n = cv.S + 2;
  if (!all_static(G, c)) return false;
  const char *kl = op_attr_str(G->a, c->call, "kernel_layout");
  bool swapped = cv.S == 2 ? kl[0] == 'O' : kl[0] == 'I'; /* (O/g, C, k...) */
  int64_t perm[TENSOR_MAX_RANK] = {1, 0};
  for (int i = 2; i < n; i++) perm[i] = i;
  Expr *w = swapped ? gr_transpose_to(G, X1, n, perm) : X1;
  if (!conv_window(G, c, &cv, w)) return false;
  if (want(c, 0)) c->dx[0] = conv(G, &cv, DY, w, cv.w.stride, cv.w.dil, cv.w.lo, cv.w.hi);
  if (want(c, 1)) {
    Expr *dw = conv_weight_adjoint(G, &cv, DY, X0);
    c->dx[1] = swapped ? gr_transpose_to(G, dw, n, perm) : dw;
  }
  return built(G);
}

static bool bw_conv1d_transpose(GradCx *G, GradCall *c) { return bw_conv_transpose(G, c); }
static bool bw_conv2d_transpose(GradCx *G, GradCall *c) { return bw_conv_transpose(G, c); }

/* ───────────────────────── pools ───────────────────────── */

/* A pool's window over the layout's pooled axes pos[S] of a rank-n x. */
typedef struct PoolG {
  int S, n, pos[NN_MAX_SPATIAL];
  NnWindow w;
  int64_t xd[TENSOR_MAX_RANK], yd[TENSOR_MAX_RANK];
  int64_t pw[TENSOR_MAX_RANK][2]; /* x's padding, ceil_mode's included */
} PoolG;

static bool pool_window(GradCx *G, GradCall *c, PoolG *p, int S) {
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  const Attrs *at = c->call->u.call.attrs;
  memset(p, 0, sizeof *p);
  p->S = p->w.S = S, p->n = rank_of(X0);
  p->w.ceil_mode = op_attr_bool(c->call, "ceil_mode");
  if (nn_layout_attr(&cx, at, "layout", &"DHW"[NN_MAX_SPATIAL - S], p -> pos) < 0 ||
      !nn_spatial_ints(&cx, at, "pool_size", S, 1, p->w.k) || !nn_window_attrs(&cx, at, &p->w))
    return grad_fail(G, "%s", cx.err);
  if (!gr_static_dims(grad_tensor_of(X0), p->xd) || !gr_static_dims(grad_tensor_of(c->y), p->yd))
    return grad_fail(G, "the gradient of %s needs static shapes", c->call->u.call.fn->u.op.name);
  for (int i = 0; i < S; i++) {
    int a = p->pos[i];
    int64_t need = (p->yd[a] - 1) * p->w.stride[i] + p->w.dil[i] * (p->w.k[i] - 1) + 1;
    int64_t hi = need - p->xd[a] - p->w.lo[i];
    p->pw[a][0] = p->w.lo[i], p->pw[a][1] = hi > p->w.hi[i] ? hi : p->w.hi[i];
  }
  return true;
}

/* The offset of window element `flat` (row-major over the window) along
 * pooled dim i. */
static int64_t offset_of(const PoolG *p, int64_t flat, int i) {
  for (int j = p->S - 1; j > i; j--) flat /= p->w.k[j];
  return flat % p->w.k[i] * p->w.dil[i];
}

static int64_t window_count(const PoolG *p) {
  int64_t m = 1;
  for (int i = 0; i < p->S; i++) m *= p->w.k[i];
  return m;
}

/* Every window's element `flat` of the padded tensor xp: a strided slice
 * of y's shape. */
static Expr *window_slice(GradCx *G, const PoolG *p, Expr *xp, int64_t flat) {
  int64_t b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK];
  for (int a = 0; a < p->n; a++) e[a] = p->xd[a], st[a] = 1;
  for (int i = 0; i < p->S; i++) {
    int a = p->pos[i];
    b[a] = offset_of(p, flat, i);
    e[a] = b[a] + (p->yd[a] - 1) * p->w.stride[i] + 1;
    st[a] = p->w.stride[i];
  }
  return slice(G, xp, p->n, b, e, st);
}

/* The adjoint of window_slice at d, in the padded shape. */
static Expr *window_place(GradCx *G, const PoolG *p, Expr *d, int64_t flat) {
  int64_t st[TENSOR_MAX_RANK], pw[TENSOR_MAX_RANK][2] = {{0}};
  for (int a = 0; a < p->n; a++) st[a] = 1;
  for (int i = 0; i < p->S; i++) {
    int a = p->pos[i];
    int64_t off = offset_of(p, flat, i), len = (p->yd[a] - 1) * p->w.stride[i] + 1;
    st[a] = p->w.stride[i];
    pw[a][0] = off, pw[a][1] = p->xd[a] + p->pw[a][0] + p->pw[a][1] - off - len;
  }
  return pad(G, dilate(G, d, p->n, st), p->n, pw, 0);
}

/* The padded-shape adjoint acc cut back to x's shape. */
static Expr *unpad(GradCx *G, const PoolG *p, Expr *acc) {
  int64_t b[TENSOR_MAX_RANK], e[TENSOR_MAX_RANK];
  for (int a = 0; a < p->n; a++) b[a] = p->pw[a][0], e[a] = b[a] + p->xd[a];
  return slice(G, acc, p->n, b, e, NULL);
}

static bool max_pool(GradCx *G, GradCall *c, int S) {
  PoolG p;
  if (!want(c, 0) || !pool_window(G, c, &p, S)) return built(G);
  Expr *xp = pad(G, X0, p.n, p.pw, -INFINITY), *taken = NULL, *acc = NULL;
  for (int64_t f = 0; f < window_count(&p); f++) {
    Expr *hit = grad_op2(G, "equal", window_slice(G, &p, xp, f), c->y);
    Expr *first =
        taken ? grad_op2(G, "logical_and", hit, grad_op1(G, "logical_not", taken, NULL)) : hit;
    taken = taken ? grad_op2(G, "logical_or", taken, hit) : hit;
    Expr *placed = window_place(G, &p, masked(G, first, DY), f);
    acc = acc ? add(G, acc, placed) : placed;
  }
  c->dx[0] = unpad(G, &p, acc);
  return built(G);
}

static bool avg_pool(GradCx *G, GradCall *c, int S) {
  PoolG p;
  if (!want(c, 0) || !pool_window(G, c, &p, S)) return built(G);
  Expr *ones = grad_op1(G, "ones_like", X0, NULL);
  Expr *op = pad(G, ones, p.n, p.pw, 0), *cnt = NULL, *acc = NULL;
  for (int64_t f = 0; f < window_count(&p); f++) {
    Expr *s = window_slice(G, &p, op, f);
    cnt = cnt ? add(G, cnt, s) : s;
  }
  Expr *avg1 = grad_op1(G, c->call->u.call.fn->u.op.name, ones, c->call->u.call.attrs);
  Expr *d = mul(G, DY, divide(G, avg1, grad_op2(G, "maximum", cnt, k(G, cnt, 1))));
  for (int64_t f = 0; f < window_count(&p); f++) {
    Expr *placed = window_place(G, &p, d, f);
    acc = acc ? add(G, acc, placed) : placed;
  }
  c->dx[0] = unpad(G, &p, acc);
  return built(G);
}

static bool bw_max_pool1d(GradCx *G, GradCall *c) { return max_pool(G, c, 1); }
static bool bw_max_pool2d(GradCx *G, GradCall *c) { return max_pool(G, c, 2); }
static bool bw_max_pool3d(GradCx *G, GradCall *c) { return max_pool(G, c, 3); }
static bool bw_avg_pool1d(GradCx *G, GradCall *c) { return avg_pool(G, c, 1); }
static bool bw_avg_pool2d(GradCx *G, GradCall *c) { return avg_pool(G, c, 2); }
static bool bw_avg_pool3d(GradCx *G, GradCall *c) { return avg_pool(G, c, 3); }

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_CONV(X) \
  X(conv1d) X(conv3d) X(conv1d_transpose) X(conv2d_transpose) X(max_pool1d) X(max_pool2d) \
  X(max_pool3d) X(avg_pool1d) X(avg_pool2d) X(avg_pool3d) X(conv2d_nchwc)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_CONV(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_conv[] = {
    {"nn.conv1d", &grad_conv1d},
    {"nn.conv3d", &grad_conv3d},
    {"nn.conv1d_transpose", &grad_conv1d_transpose},
    {"nn.conv2d_transpose", &grad_conv2d_transpose},
    {"nn.contrib_conv2d_NCHWc", &grad_conv2d_nchwc},
    {"nn.max_pool1d", &grad_max_pool1d},
    {"nn.avg_pool1d", &grad_avg_pool1d},
    {"nn.max_pool2d", &grad_max_pool2d},
    {"nn.avg_pool2d", &grad_avg_pool2d},
    {"nn.max_pool3d", &grad_max_pool3d},
    {"nn.avg_pool3d", &grad_avg_pool3d},
    {NULL, NULL},
};
