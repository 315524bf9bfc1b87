/* grad_rules_vision.c — gradient rules of the resampling and detection
 * ops: image.grid_sample and vision.roi_align, whose adjoints are ops of
 * their own (image.grid_sample_grad: data and grid, bilinear, trilinear or
 * nearest, every padding mode, as torch's grid sampler has them;
 * vision.roi_align_grad: data; the rois get none, as in torchvision), and
 * vision.get_valid_counts and vision.non_max_suppression, whose float
 * results are rows of the boxes copied (or -1 rows): a row's adjoint goes
 * back to the box it was copied from by scatter_add, the scores with the
 * coordinates.  The integer results (counts, indices) carry none. */
#include <stdint.h>
#include <string.h>

#include "ad/grad_rules.h"

/* image.grid_sample(x, grid): both adjoints from one grid_sample_grad. */
static bool bw_grid_sample(GradCx *G, GradCall *c) {
  if (!want(c, 0) && !want(c, 1)) return built(G);
  if (!strcmp(op_attr_str(G->a, c->call, "method"), "bicubic"))
    return grad_fail(G,
                     "the gradient of image.grid_sample is defined for the methods bilinear "
                     "and nearest, not bicubic");
  Expr *args[3] = {DY, X0, X1};
  Expr *both = grad_op(G, "image.grid_sample_grad", 3, args, c->call->u.call.attrs);
  if (want(c, 0)) c->dx[0] = grad_proj(G, both, 0);
  if (want(c, 1)) c->dx[1] = grad_proj(G, both, 1);
  return built(G);
}

static bool bw_roi_align(GradCx *G, GradCall *c) {
  Expr *args[3] = {DY, X0, X1};
  if (want(c, 0)) c->dx[0] = grad_op(G, "vision.roi_align_grad", 3, args, c->call->u.call.attrs);
  return built(G);
}

/* The boxes' static shape (B, N, K) into xd, or false after grad_fail. */
static bool boxes_dims(GradCx *G, GradCall *c, int64_t *xd) {
  if (gr_static_dims(grad_tensor_of(X0), xd)) return true;
  return grad_fail(G, "the gradient of %s needs the boxes' shape static",
                   c->call->u.call.fn->u.op.name);
}

/* The adjoint of boxes x (xd: B, N, K) for rows d (B, N, K) copied from
 * the boxes at pos (B, N; -1: a row of -1s, copied from none). */
static Expr *rows_back(GradCx *G, Expr *x, const int64_t *xd, Expr *pos, Expr *d) {
  Attrs *ax = grad_attrs(G, 1), *sh = grad_attrs(G, 1), *a1 = grad_attrs(G, 1);
  grad_attr_int(G, ax, 0, "axis", 2);
  grad_attr_ints(G, sh, 0, "shape", 3, xd);
  grad_attr_int(G, a1, 0, "axis", 1);
  Expr *p = grad_op1(G, "expand_dims", pos, ax);
  Expr *has = grad_op2(G, "greater_equal", p, k(G, p, 0));
  Expr *at = grad_op1(G, "broadcast_to", masked(G, has, p), sh);
  Expr *args[3] = {grad_op1(G, "zeros_like", x, NULL), at, masked(G, has, d)};
  return grad_op(G, "scatter_add", 3, args, a1);
}

/* (valid_count, rows, indices): the rows came from the boxes at indices. */
static bool bw_get_valid_counts(GradCx *G, GradCall *c) {
  int64_t xd[3];
  if (want(c, 0) && c->dy[1] && boxes_dims(G, c, xd))
    c->dx[0] = rows_back(G, X0, xd, grad_proj(G, c->y, 2), c->dy[1]);
  return built(G);
}

/* The box each row of non_max_suppression's result was copied from: the
 * op run again on the boxes with their positions as one more column
 * (after the columns the attributes name, so it keeps and moves the same
 * rows), that column read back. */
static Expr *nms_sources(GradCx *G, GradCall *c, const int64_t *xd) {
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  int64_t exact = dt == DT_BFLOAT16  ? 1 << 8
                  : dt == DT_FLOAT16 ? 1 << 11
                  : dt == DT_FLOAT32 ? 1 << 24
                                     : INT64_MAX;
  if (xd[1] > exact) /* the positions are numbered in the boxes' dtype */
    return grad_fail(G, "the gradient of vision.non_max_suppression takes at most %lld %s boxes",
                     (long long)exact, dtype_name(dt)),
           NULL;
  Attrs *ad = grad_attrs(G, 1), *sh = grad_attrs(G, 1), *ax = grad_attrs(G, 1);
  grad_attr_str(G, ad, 0, "dtype", dtype_name(dt));
  grad_attr_ints(G, sh, 0, "shape", 3, (int64_t[]){xd[0], xd[1], 1});
  grad_attr_int(G, ax, 0, "axis", 2);
  Expr *lim[3] = {grad_scalar(G, dt, 0), grad_scalar(G, dt, (double)xd[1]), grad_scalar(G, dt, 1)};
  Expr *col = gr_reshape_to(G, grad_op(G, "arange", 3, lim, ad), 3, (int64_t[]){1, xd[1], 1});
  Expr *parts[2] = {X0, grad_op1(G, "broadcast_to", col, sh)};
  Expr *args[5] = {grad_op1(G, "concatenate", grad_tuple(G, 2, parts), ax), X1, c->x[2], c->x[3],
                   c->x[4]};
  Expr *rows = grad_op(G, "vision.non_max_suppression", 5, args, c->call->u.call.attrs);
  Expr *take[2] = {rows, grad_scalar(G, DT_INT32, (double)xd[2])};
  Attrs *it = grad_attrs(G, 1);
  grad_attr_str(G, it, 0, "dtype", "int32");
  return grad_op1(G, "cast", grad_op(G, "take", 2, take, ax), it);
}

/* The boxes kept (return_indices=False) are rows of x; with return_indices
 * the results are indices and counts only. */
static bool bw_non_max_suppression(GradCx *G, GradCall *c) {
  int64_t xd[3];
  if (!want(c, 0) || op_attr_bool(c->call, "return_indices") || !DY || !boxes_dims(G, c, xd))
    return built(G);
  c->dx[0] = rows_back(G, X0, xd, nms_sources(G, c, xd), DY);
  return built(G);
}

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_VISION(X) \
  X(grid_sample) X(roi_align) X(get_valid_counts) X(non_max_suppression)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_VISION(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_vision[] = {
    {"image.grid_sample", &grad_grid_sample},
    {"vision.get_valid_counts", &grad_get_valid_counts},
    {"vision.non_max_suppression", &grad_non_max_suppression},
    {"vision.roi_align", &grad_roi_align},
    {NULL, NULL},
};
