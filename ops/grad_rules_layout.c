/* grad_rules_layout.c — gradient rules of the adaptive pools and the
 * nn_layout family (padding, resampling and moving elements between axes).
 *
 * The adaptive pools' windows along a dim of n inputs and s outputs are
 * [floor(i n / s), ceil((i + 1) n / s)); the rules hold them in constant
 * matrices: the average's adjoint is A_h^T dy A_w (A: each window's 1 /
 * size on its inputs), the max's gives dy to the first element (in
 * row-major order) of each window equal to its maximum, as torch does. */
#include <string.h>

#include "ops/grad_rules.h"
#include "ops/nn_int.h"

/* x's axes with the two given ones moved last (perm), and back (inv). */
static void move_last(int n, const int *pos, int64_t *perm, int64_t *inv) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (i != pos[0] && i != pos[1]) perm[m++] = i;
  perm[m++] = pos[0], perm[m] = pos[1];
  for (int i = 0; i < n; i++) inv[perm[i]] = i;
}

/* An adaptive pool's layout axes of H and W, and the static sizes. */
typedef struct Adaptive {
  int n, pos[2];
  int64_t xd[TENSOR_MAX_RANK], yd[TENSOR_MAX_RANK], perm[TENSOR_MAX_RANK], inv[TENSOR_MAX_RANK];
} Adaptive;

static bool adaptive_shape(GradCx *G, GradCall *c, Adaptive *p) {
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  p->n = rank_of(X0);
  if (nn_layout_attr(&cx, c->call->u.call.attrs, "layout", "HW", p->pos) < 0)
    return grad_fail(G, "%s", cx.err);
  if (!gr_static_dims(grad_tensor_of(X0), p->xd) || !gr_static_dims(grad_tensor_of(c->y), p->yd))
    return grad_fail(G, "the gradient of %s needs static shapes", c->call->u.call.fn->u.op.name);
  move_last(p->n, p->pos, p->perm, p->inv);
  return true;
}

static int64_t win_start(int64_t i, int64_t n, int64_t s) { return i * n / s; }
static int64_t win_end(int64_t i, int64_t n, int64_t s) { return ((i + 1) * n + s - 1) / s; }

/* The (s, n) matrix of window i's inputs: 1 / the window's size when
 * `mean`, else 1. */
static Expr *window_matrix(GradCx *G, DType dt, int64_t s, int64_t n, bool mean) {
  double *v = ARENA_ARRAY(G->a, double, s *n + 1);
  for (int64_t i = 0; i < s; i++) {
    int64_t b = win_start(i, n, s), e = win_end(i, n, s);
    for (int64_t j = 0; j < n; j++)
      v[i * n + j] = j >= b && j < e ? (mean ? 1.0 / (double)(e - b) : 1) : 0;
  }
  return grad_const(G, dt, 2, (int64_t[]){s, n}, v);
}

static Expr *swap_last(GradCx *G, Expr *e) {
  int n = rank_of(e);
  int64_t perm[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++) perm[i] = i;
  perm[n - 2] = n - 1, perm[n - 1] = n - 2;
  return gr_transpose_to(G, e, n, perm);
}

/* dx = A_h^T dy A_w with H and W moved last. */
static bool bw_adaptive_avg_pool2d(GradCx *G, GradCall *c) {
  Adaptive p;
  if (!want(c, 0) || !adaptive_shape(G, c, &p)) return built(G);
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  int h = p.pos[0], w = p.pos[1];
  Expr *aw = window_matrix(G, dt, p.yd[w], p.xd[w], true);
  Expr *ah = window_matrix(G, dt, p.yd[h], p.xd[h], true);
  Expr *t = gr_matmul(G, gr_transpose_to(G, DY, p.n, p.perm), aw, false, false); /* (.., oh, W) */
  Expr *u = swap_last(G, gr_matmul(G, swap_last(G, t), ah, false, false));       /* (.., H, W) */
  c->dx[0] = gr_transpose_to(G, u, p.n, p.inv);
  return built(G);
}

/* Each window's first element equal to its maximum gets dy: x, y and dy
 * as (P, oh, ow, H W) against the windows' constant (oh, ow, H W) mask;
 * a running count of the hits along H W keeps the first. */
static bool bw_adaptive_max_pool2d(GradCx *G, GradCall *c) {
  Adaptive p;
  if (!want(c, 0) || !adaptive_shape(G, c, &p)) return built(G);
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  int h = p.pos[0], w = p.pos[1];
  int64_t H = p.xd[h], W = p.xd[w], oh = p.yd[h], ow = p.yd[w], P = 1;
  for (int i = 0; i < p.n; i++) P *= i == h || i == w ? 1 : p.xd[i];
  double *m = ARENA_ARRAY(G->a, double, oh *ow *H *W + 1);
  for (int64_t i = 0, q = 0; i < oh; i++)
    for (int64_t j = 0; j < ow; j++)
      for (int64_t a = 0; a < H; a++)
        for (int64_t b = 0; b < W; b++, q++)
          m[q] = a >= win_start(i, H, oh) && a < win_end(i, H, oh) && b >= win_start(j, W, ow) &&
                 b < win_end(j, W, ow);
  Expr *mask = grad_const(G, DT_BOOL, 3, (int64_t[]){oh, ow, H * W}, m);
  int64_t xs[4] = {P, 1, 1, H * W}, ys[4] = {P, oh, ow, 1};
  Expr *x4 = gr_reshape_to(G, gr_transpose_to(G, X0, p.n, p.perm), 4, xs);
  Expr *y4 = gr_reshape_to(G, gr_transpose_to(G, c->y, p.n, p.perm), 4, ys);
  Expr *d4 = gr_reshape_to(G, gr_transpose_to(G, DY, p.n, p.perm), 4, ys);
  Expr *hit = grad_op2(G, "logical_and", grad_op2(G, "equal", x4, y4), mask);
  Attrs *ci = grad_attrs(G, 1), *cs = grad_attrs(G, 1);
  grad_attr_str(G, ci, 0, "dtype", "int32");
  grad_attr_int(G, cs, 0, "axis", 3);
  Expr *seen = grad_op1(G, "cumsum", grad_op1(G, "cast", hit, ci), cs);
  Expr *first =
      grad_op2(G, "logical_and", hit, grad_op2(G, "equal", seen, grad_scalar(G, DT_INT32, 1)));
  Expr *args[3] = {first, d4, grad_scalar(G, dt, 0)};
  Attrs *sa = grad_attrs(G, 1);
  grad_attr_ints(G, sa, 0, "axis", 2, (int64_t[]){1, 2});
  Expr *dxf = grad_op1(G, "sum", grad_op(G, "where", 3, args, NULL), sa); /* (P, H W) */
  int64_t back[TENSOR_MAX_RANK];
  for (int i = 0; i < p.n; i++) back[i] = p.xd[p.perm[i]];
  c->dx[0] = gr_transpose_to(G, gr_reshape_to(G, dxf, p.n, back), p.n, p.inv);
  return built(G);
}

/* ───────────────────────── the rules ───────────────────────── */

#define BACKWARD(name) const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_POOL(BACKWARD)
#undef BACKWARD
