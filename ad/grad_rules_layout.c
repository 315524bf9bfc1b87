/* grad_rules_layout.c — gradient rules of the adaptive pools, the
 * nn_layout family (padding, resampling and moving elements between
 * axes), the image resizes, image.crop_and_resize and image.affine_grid.
 *
 * The adaptive pools' windows along a dim of n inputs and s outputs are
 * [floor(i n / s), ceil((i + 1) n / s)); the rules hold them in constant
 * matrices: the average's adjoint is A_h^T dy A_w (A: each window's 1 /
 * size on its inputs), the max's gives dy to the first element (in
 * row-major order) of each window equal to its maximum, as torch does.
 *
 * Padding folds its adjoint back axis by axis: the middle is x's; what a
 * constant pad added goes to its value, what edge padding added to the
 * edge element, and a mirrored border (reversed) onto the elements it
 * copies.  depth_to_space (DCR) and space_to_depth, space_to_batch_nd and
 * batch_to_space_nd are each other's inverses on the elements they keep;
 * CRD is DCR after a permutation of the channels.
 *
 * Resampling (image.resize1d/2d/3d, dyn.image.resize2d, nn.upsampling,
 * nn.upsampling3d) is linear and separable: y = A_d A_h A_w x along the
 * spatial axes.  Each A is read from the op itself, applied to an identity
 * (the channels enumerating the pixels of one axis, the other axes of size
 * 1), so the adjoint has exactly the op's weights (float32, as its kernel
 * computes them); dx = A^T dy along each axis. */
#include <string.h>

#include "ad/grad_rules.h"
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

/* The (oh, ow, H W) mask of each output cell's window. */
static Expr *window_mask(GradCx *G, int64_t oh, int64_t ow, int64_t H, int64_t W) {
  int64_t cells = oh * ow * H * W;
  double *m = ARENA_ARRAY(G->a, double, cells + 1);
  for (int64_t i = 0, q = 0; i < oh; i++)
    for (int64_t j = 0; j < ow; j++)
      for (int64_t a = 0; a < H; a++)
        for (int64_t b = 0; b < W; b++, q++)
          m[q] = a >= win_start(i, H, oh) && a < win_end(i, H, oh) && b >= win_start(j, W, ow) &&
                 b < win_end(j, W, ow);
  return grad_const(G, DT_BOOL, 3, (int64_t[]){oh, ow, H * W}, m);
}

/* hit where it holds for the first time along the last axis (a running
 * count of the hits is 1). */
static Expr *first_hits(GradCx *G, Expr *hit) {
  Attrs *ci = grad_attrs(G, 1), *cs = grad_attrs(G, 1);
  grad_attr_str(G, ci, 0, "dtype", "int32");
  grad_attr_int(G, cs, 0, "axis", rank_of(hit) - 1);
  Expr *seen = grad_op1(G, "cumsum", grad_op1(G, "cast", hit, ci), cs);
  return grad_op2(G, "logical_and", hit, grad_op2(G, "equal", seen, grad_scalar(G, DT_INT32, 1)));
}

/* Each window's first element equal to its maximum gets dy: x, y and dy
 * as (P, oh, ow, H W) against the windows' constant (oh, ow, H W) mask. */
static bool bw_adaptive_max_pool2d(GradCx *G, GradCall *c) {
  Adaptive p;
  if (!want(c, 0) || !adaptive_shape(G, c, &p)) return built(G);
  int h = p.pos[0], w = p.pos[1];
  int64_t H = p.xd[h], W = p.xd[w], oh = p.yd[h], ow = p.yd[w], P = 1;
  for (int i = 0; i < p.n; i++) P *= i == h || i == w ? 1 : p.xd[i];
  int64_t xs[4] = {P, 1, 1, H * W}, ys[4] = {P, oh, ow, 1}, back[TENSOR_MAX_RANK];
  Expr *x4 = gr_reshape_to(G, gr_transpose_to(G, X0, p.n, p.perm), 4, xs);
  Expr *y4 = gr_reshape_to(G, gr_transpose_to(G, c->y, p.n, p.perm), 4, ys);
  Expr *d4 = gr_reshape_to(G, gr_transpose_to(G, DY, p.n, p.perm), 4, ys);
  Expr *hit =
      grad_op2(G, "logical_and", grad_op2(G, "equal", x4, y4), window_mask(G, oh, ow, H, W));
  Attrs *sa = grad_attrs(G, 1);
  grad_attr_ints(G, sa, 0, "axis", 2, (int64_t[]){1, 2});
  Expr *dxf = grad_op1(G, "sum", masked(G, first_hits(G, hit), d4), sa); /* (P, H W) */
  for (int i = 0; i < p.n; i++) back[i] = p.xd[p.perm[i]];
  c->dx[0] = gr_transpose_to(G, gr_reshape_to(G, dxf, p.n, back), p.n, p.inv);
  return built(G);
}

/* ───────────────────────── padding ───────────────────────── */

static Expr *slice_axis(GradCx *G, Expr *e, int a, int64_t b, int64_t end) {
  int n = rank_of(e);
  int64_t bb[TENSOR_MAX_RANK] = {0}, ee[TENSOR_MAX_RANK];
  gr_static_dims(grad_tensor_of(e), ee);
  bb[a] = b, ee[a] = end;
  Attrs *at = grad_attrs(G, 2);
  grad_attr_ints(G, at, 0, "begin", n, bb);
  grad_attr_ints(G, at, 1, "end", n, ee);
  return grad_op1(G, "strided_slice", e, at);
}

static Expr *pad_axis(GradCx *G, Expr *e, int a, int64_t lo, int64_t hi) {
  int n = rank_of(e);
  int64_t pw[TENSOR_MAX_RANK][2] = {{0}};
  pw[a][0] = lo, pw[a][1] = hi;
  Attrs *at = grad_attrs(G, 1);
  grad_attr_pairs(G, at, 0, "pad_width", n, pw);
  Expr *args[2] = {e, k(G, e, 0)};
  return grad_op(G, "nn.pad", 2, args, at);
}

static Expr *reverse_axis(GradCx *G, Expr *e, int a) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_int(G, at, 0, "axis", a);
  return grad_op1(G, "reverse", e, at);
}

enum { FOLD_CONSTANT, FOLD_EDGE, FOLD_REFLECT, FOLD_SYMMETRIC };

/* A border of width w (taken at [b, b + w) of d along a) folded onto x's
 * n elements: `first` for the border before them. */
static Expr *fold_border(GradCx *G, Expr *d, int a, int64_t b, int64_t w, int64_t n, bool first,
                         int mode) {
  Expr *part = slice_axis(G, d, a, b, b + w);
  if (mode == FOLD_EDGE)
    return pad_axis(G, gr_reduce_keep(G, "sum", part, a), a, first ? 0 : n - 1, first ? n - 1 : 0);
  int64_t skip = mode == FOLD_REFLECT; /* the edge element is not copied */
  Expr *r = reverse_axis(G, part, a);
  return first ? pad_axis(G, r, a, skip, n - w - skip) : pad_axis(G, r, a, n - w - skip, skip);
}

/* d (x padded by pw[a] along axis a) folded back to x's size there. */
static Expr *fold_axis(GradCx *G, Expr *d, int a, const int64_t *pw, int64_t n, int mode) {
  Expr *mid = slice_axis(G, d, a, pw[0], pw[0] + n);
  if (mode == FOLD_CONSTANT) return mid;
  if (pw[0]) mid = add(G, mid, fold_border(G, d, a, 0, pw[0], n, true, mode));
  if (pw[1]) mid = add(G, mid, fold_border(G, d, a, pw[0] + n, pw[1], n, false, mode));
  return mid;
}

static bool pad_widths(GradCx *G, GradCall *c, int64_t (*pw)[2], int64_t *xd) {
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  int n = nn_attr_pairs(&cx, c->call->u.call.attrs, "pad_width", pw, NN_MAX_PAIRS);
  if (n != rank_of(X0))
    return grad_fail(G, "%s", cx.err[0] ? cx.err : "pad_width: one pair per axis");
  if (!gr_static_dims(grad_tensor_of(X0), xd))
    return grad_fail(G, "the gradient of %s needs x's shape static", c->call->u.call.fn->u.op.name);
  for (int i = 0; i < n; i++)
    if (pw[i][0] < 0 || pw[i][1] < 0)
      return grad_fail(G, "the gradient of %s takes non-negative pad widths",
                       c->call->u.call.fn->u.op.name);
  return true;
}

static Expr *fold_all(GradCx *G, GradCall *c, int64_t (*pw)[2], const int64_t *xd, int mode) {
  Expr *d = DY;
  for (int a = 0; a < rank_of(X0); a++)
    if (pw[a][0] || pw[a][1]) d = fold_axis(G, d, a, pw[a], xd[a], mode);
  return d;
}

/* nn.pad(x, value): modes constant (the value gets the sum of the
 * border's adjoint), edge and reflect. */
static bool bw_pad(GradCx *G, GradCall *c) {
  int64_t pw[NN_MAX_PAIRS][2], xd[TENSOR_MAX_RANK];
  if (!pad_widths(G, c, pw, xd)) return false;
  const char *m = op_attr_str(G->a, c->call, "pad_mode");
  int mode = !strcmp(m, "edge") ? FOLD_EDGE : !strcmp(m, "reflect") ? FOLD_REFLECT : FOLD_CONSTANT;
  Expr *dx = fold_all(G, c, pw, xd, mode);
  if (want(c, 0)) c->dx[0] = dx;
  if (mode == FOLD_CONSTANT && want(c, 1)) {
    Expr *border = sub(G, grad_op1(G, "sum", DY, NULL), grad_op1(G, "sum", dx, NULL));
    DType dt = grad_tensor_of(X1)->u.tensor.dtype;
    if (dt != grad_tensor_of(DY)->u.tensor.dtype) {
      Attrs *at = grad_attrs(G, 1);
      grad_attr_str(G, at, 0, "dtype", dtype_name(dt));
      border = grad_op1(G, "cast", border, at);
    }
    c->dx[1] = grad_op2(G, "reshape_like", border, X1);
  }
  return built(G);
}

/* dyn.nn.pad(x, pad_width, value) with constant widths: nn.pad's rule. */
static bool bw_dyn_pad(GradCx *G, GradCall *c) {
  int64_t v[2 * NN_MAX_PAIRS], pw[NN_MAX_PAIRS][2];
  int n = gr_const_ints(G, c, X1, v, 2 * NN_MAX_PAIRS);
  if (n < 0) return false;
  for (int i = 0; i < n / 2; i++) pw[i][0] = v[2 * i], pw[i][1] = v[2 * i + 1];
  Attrs *at = grad_attrs(G, 2);
  grad_attr_pairs(G, at, 0, "pad_width", n / 2, pw);
  grad_attr_str(G, at, 1, "pad_mode", op_attr_str(G->a, c->call, "pad_mode"));
  Expr *args[2] = {X0, c->x[2]};
  GradCall s =
      gr_static_form(G, c, "nn.pad", 2, args, (c->constant & 1) | (c->constant >> 1 & 2), at);
  if (!bw_pad(G, &s)) return false;
  c->dx[0] = s.dx[0], c->dx[2] = s.dx[1];
  return built(G);
}

static bool bw_mirror_pad(GradCx *G, GradCall *c) {
  int64_t pw[NN_MAX_PAIRS][2], xd[TENSOR_MAX_RANK];
  if (!want(c, 0) || !pad_widths(G, c, pw, xd)) return built(G);
  bool reflect = !strcmp(op_attr_str(G->a, c->call, "mode"), "REFLECT");
  c->dx[0] = fold_all(G, c, pw, xd, reflect ? FOLD_REFLECT : FOLD_SYMMETRIC);
  return built(G);
}

/* ───────────────────────── moving elements ───────────────────────── */

/* dy through `op` with the call's attributes but `drop` (NULL: none)
 * left out and `add_key` = add_val added (a string; NULL: none). */
static Expr *inverse(GradCx *G, GradCall *c, const char *op, const char *drop, const char *add_key,
                     const char *add_val) {
  const Attrs *at = c->call->u.call.attrs;
  Attrs *na = grad_attrs(G, (at ? at->n : 0) + 1);
  int m = 0;
  for (int i = 0; at && i < at->n; i++)
    if (!drop || strcmp(at->keys[i], drop)) na->keys[m] = at->keys[i], na->vals[m++] = at->vals[i];
  if (add_key) grad_attr_str(G, na, m++, add_key, add_val);
  na->n = m;
  return grad_op1(G, op, DY, na);
}

/* x's channels (axis pc) read as (a, b) and swapped to (b, a). */
static Expr *swap_channel_blocks(GradCx *G, Expr *x, int pc, int64_t a, int64_t b) {
  int n = rank_of(x);
  int64_t xd[TENSOR_MAX_RANK], split[TENSOR_MAX_RANK + 1], perm[TENSOR_MAX_RANK + 1];
  gr_static_dims(grad_tensor_of(x), xd);
  for (int i = 0, j = 0; i < n; i++) {
    if (i == pc) {
      perm[j] = j + 1, split[j++] = a;
      perm[j] = j - 1, split[j++] = b;
    } else {
      perm[j] = j, split[j++] = xd[i];
    }
  }
  Expr *t = gr_transpose_to(G, gr_reshape_to(G, x, n + 1, split), n + 1, perm);
  return gr_reshape_to(G, t, n, xd);
}

/* depth_to_space: space_to_depth gives back the DCR channels; CRD's
 * channel c bs^2 + off is DCR's off C' + c. */
static bool bw_depth_to_space(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr *d = inverse(G, c, "nn.space_to_depth", "mode", NULL, NULL);
  if (!strcmp(op_attr_str(G->a, c->call, "mode"), "CRD")) {
    RelCtx cx;
    int pos[4];
    nn_call_ctx(&cx, G->a, c->call);
    if (nn_layout_attr(&cx, c->call->u.call.attrs, "layout", "NCHW", pos) < 0)
      return grad_fail(G, "%s", cx.err);
    int64_t bs = op_attr_int(c->call, "block_size");
    int64_t oc = grad_tensor_of(c->y)->u.tensor.dims[pos[1]].value;
    d = swap_channel_blocks(G, d, pos[1], bs * bs, oc);
  }
  c->dx[0] = d;
  return built(G);
}

static bool bw_space_to_depth(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = inverse(G, c, "nn.depth_to_space", "mode", "mode", "DCR");
  return built(G);
}

/* space_to_batch_nd's padding is cropped by batch_to_space_nd, and
 * batch_to_space_nd's crops come back as zero padding. */
static bool bw_space_to_batch_nd(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  const Attrs *at = c->call->u.call.attrs;
  Attrs *na = grad_attrs(G, 2);
  na->keys[0] = "block_shape", na->vals[0] = (AttrValue *)attrs_get(at, "block_shape");
  na->keys[1] = "crops", na->vals[1] = (AttrValue *)attrs_get(at, "paddings");
  if (!na->vals[0]) na->n = 1, na->keys[0] = "crops", na->vals[0] = na->vals[1];
  c->dx[0] = grad_op1(G, "nn.batch_to_space_nd", DY, na);
  return built(G);
}

static bool bw_batch_to_space_nd(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  const Attrs *at = c->call->u.call.attrs;
  Attrs *na = grad_attrs(G, 2);
  na->keys[0] = "block_shape", na->vals[0] = (AttrValue *)attrs_get(at, "block_shape");
  na->keys[1] = "paddings", na->vals[1] = (AttrValue *)attrs_get(at, "crops");
  if (!na->vals[0]) na->n = 1, na->keys[0] = "paddings", na->vals[0] = na->vals[1];
  c->dx[0] = grad_op1(G, "nn.space_to_batch_nd", DY, na);
  return built(G);
}

/* dilate: x's elements are every strides-th of the result. */
static bool bw_dilate(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int n = rank_of(X0);
  int64_t st[TENSOR_MAX_RANK], b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK];
  op_attr_ints(c->call, "strides", st, TENSOR_MAX_RANK);
  if (!gr_static_dims(grad_tensor_of(c->y), e))
    return grad_fail(G, "the gradient of nn.dilate needs static shapes");
  Attrs *at = grad_attrs(G, 3);
  grad_attr_ints(G, at, 0, "begin", n, b);
  grad_attr_ints(G, at, 1, "end", n, e);
  grad_attr_ints(G, at, 2, "strides", n, st);
  c->dx[0] = grad_op1(G, "strided_slice", DY, at);
  return built(G);
}

/* ───────────────────────── resampling ───────────────────────── */

/* The op's layout positions of N, C and the S spatial axes. */
static bool resample_layout(GradCx *G, GradCall *c, int S, int *pos) {
  RelCtx cx;
  nn_call_ctx(&cx, G->a, c->call);
  const char *need = S == 1 ? "NCW" : S == 2 ? "NCHW" : "NCDHW";
  if (nn_layout_attr(&cx, c->call->u.call.attrs, "layout", need, pos) < 0)
    return grad_fail(G, "%s", cx.err);
  const AttrValue *ct = attrs_get(c->call->u.call.attrs, "coordinate_transformation_mode");
  if (ct && ct->kind == AV_STR && !strcmp(ct->u.s, "tf_crop_and_resize"))
    return grad_fail(G, "the gradient of %s is not defined for tf_crop_and_resize (not linear)",
                     c->call->u.call.fn->u.op.name);
  return true;
}

/* A^T (n, m) of spatial axis k (n pixels resized to m): the op applied to
 * E with E[c, i] = [c = i] (C = n, that axis n, the other spatial axes 1). */
static Expr *axis_weights(GradCx *G, GradCall *c, const int *pos, int S, int k) {
  int n = rank_of(X0), ax = pos[2 + k], ch = pos[1];
  int64_t xd[TENSOR_MAX_RANK], ed[TENSOR_MAX_RANK], rd[TENSOR_MAX_RANK], total = 1;
  gr_static_dims(grad_tensor_of(X0), xd);
  for (int i = 0; i < n; i++) ed[i] = i == ch || i == ax ? xd[ax] : 1, total *= ed[i];
  double *v = ARENA_ARRAY(G->a, double, total + 1);
  for (int64_t f = 0; f < total; f++) {
    int64_t r = f, ic = 0, ia = 0;
    for (int i = n - 1; i >= 0; i--) {
      if (i == ch) ic = r % ed[i];
      if (i == ax) ia = r % ed[i];
      r /= ed[i];
    }
    v[f] = ic == ia;
  }
  Expr **args = ARENA_ARRAY(G->a, Expr *, c->nx);
  args[0] = grad_const(G, grad_tensor_of(X0)->u.tensor.dtype, n, ed, v);
  for (int i = 1; i < c->nx; i++) args[i] = c->x[i];
  Expr *r = grad_op(G, c->call->u.call.fn->u.op.name, c->nx, args, c->call->u.call.attrs);
  if (!r || !gr_static_dims(grad_tensor_of(r), rd))
    return grad_fail(G, "resampling: static sizes"), NULL;
  int64_t b[TENSOR_MAX_RANK] = {0}, e[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++) e[i] = i == ch || i == ax ? rd[i] : 1;
  Attrs *sl = grad_attrs(G, 2);
  grad_attr_ints(G, sl, 0, "begin", n, b);
  grad_attr_ints(G, sl, 1, "end", n, e);
  r = grad_op1(G, "strided_slice", r, sl);
  if (ch < ax) return gr_reshape_to(G, r, 2, (int64_t[]){xd[ax], rd[ax]});
  return swap_last(G, gr_reshape_to(G, r, 2, (int64_t[]){rd[ax], xd[ax]}));
}

/* d with axis a (m long) mapped back by at = A^T (n, m): d A along a. */
static Expr *apply_along(GradCx *G, Expr *d, int a, Expr *at) {
  int n = rank_of(d);
  int64_t perm[TENSOR_MAX_RANK], inv[TENSOR_MAX_RANK];
  for (int i = 0, m = 0; i < n; i++)
    if (i != a) perm[m++] = i;
  perm[n - 1] = a;
  for (int i = 0; i < n; i++) inv[perm[i]] = i;
  Expr *t = gr_matmul(G, gr_transpose_to(G, d, n, perm), at, false, true);
  return gr_transpose_to(G, t, n, inv);
}

static bool resample(GradCx *G, GradCall *c, int S) {
  int pos[2 + NN_MAX_SPATIAL];
  int64_t xd[TENSOR_MAX_RANK];
  if (!want(c, 0) || !resample_layout(G, c, S, pos)) return built(G);
  if (!gr_static_dims(grad_tensor_of(X0), xd))
    return grad_fail(G, "the gradient of %s needs static shapes", c->call->u.call.fn->u.op.name);
  Expr *d = DY;
  for (int k = 0; k < S && d; k++) d = apply_along(G, d, pos[2 + k], axis_weights(G, c, pos, S, k));
  c->dx[0] = d;
  return built(G);
}

static bool bw_resize1d(GradCx *G, GradCall *c) { return resample(G, c, 1); }
static bool bw_resize2d(GradCx *G, GradCall *c) { return resample(G, c, 2); }
static bool bw_resize3d(GradCx *G, GradCall *c) { return resample(G, c, 3); }
static bool bw_upsampling(GradCx *G, GradCall *c) { return resample(G, c, 2); }
static bool bw_upsampling3d(GradCx *G, GradCall *c) { return resample(G, c, 3); }

/* The (B, out, n) weights of axis `ax` (n pixels, 2 or 3 of NCHW) of
 * image.crop_and_resize: the op on E (E[.., c, i] = [c = i] along that
 * axis, the other spatial axis 1) less the op on zeros (the extrapolation
 * value), read at channel c and output position o. */
static Expr *crop_weights(GradCx *G, GradCall *c, int ax) {
  int64_t xd[4], ed[4];
  gr_static_dims(grad_tensor_of(X0), xd);
  int64_t n = xd[ax];
  ed[0] = xd[0], ed[1] = n, ed[2] = ax == 2 ? n : 1, ed[3] = ax == 3 ? n : 1;
  double *v = ARENA_ARRAY(G->a, double, ed[0] * n * n + 1);
  for (int64_t b = 0, q = 0; b < ed[0]; b++)
    for (int64_t ch = 0; ch < n; ch++)
      for (int64_t i = 0; i < n; i++) v[q++] = ch == i;
  Expr *e = grad_const(G, grad_tensor_of(X0)->u.tensor.dtype, 4, ed, v);
  Expr *a1[3] = {e, X1, c->x[2]}, *a0[3] = {grad_op1(G, "zeros_like", e, NULL), X1, c->x[2]};
  const char *op = c->call->u.call.fn->u.op.name;
  const Attrs *at = c->call->u.call.attrs;
  Expr *r = sub(G, grad_op(G, op, 3, a1, (Attrs *)at), grad_op(G, op, 3, a0, (Attrs *)at));
  int64_t rd[4];
  if (!r || !gr_static_dims(grad_tensor_of(r), rd)) return NULL;
  int64_t end[4] = {rd[0], rd[1], ax == 2 ? rd[2] : 1, ax == 3 ? rd[3] : 1};
  Attrs *sl = grad_attrs(G, 2);
  grad_attr_ints(G, sl, 0, "begin", 4, (int64_t[]){0, 0, 0, 0});
  grad_attr_ints(G, sl, 1, "end", 4, end);
  Expr *w = gr_reshape_to(G, grad_op1(G, "strided_slice", r, sl), 3, (int64_t[]){rd[0], n, rd[ax]});
  return swap_last(G, w); /* (B, out, n) */
}

/* image.crop_and_resize(x, boxes, box_indices), NCHW, boxes constant:
 * linear in x per box, y_b = A_b x[i_b] B_b^T (plus the extrapolation
 * value), so dx[n] sums A_b^T dy_b B_b over the boxes of image n. */
static bool bw_crop_and_resize(GradCx *G, GradCall *c) {
  if (want(c, 1))
    return grad_fail(G, "the gradient of image.crop_and_resize is defined for constant boxes");
  if (!want(c, 0)) return built(G);
  int64_t xd[4], yd[4];
  if (strcmp(op_attr_str(G->a, c->call, "layout"), "NCHW") ||
      !gr_static_dims(grad_tensor_of(X0), xd) || !gr_static_dims(grad_tensor_of(c->y), yd))
    return grad_fail(G, "the gradient of image.crop_and_resize takes NCHW data of static shapes");
  Expr *ops[3] = {crop_weights(G, c, 2), DY, crop_weights(G, c, 3)};
  Attrs *eq = grad_attrs(G, 1);
  grad_attr_str(G, eq, 0, "equation", "boh,bcop,bpw->bchw");
  Expr *per_box = grad_op1(G, "einsum", grad_tuple(G, 3, ops), eq);
  Attrs *oh = grad_attrs(G, 2);
  grad_attr_int(G, oh, 0, "depth", xd[0]);
  grad_attr_str(G, oh, 1, "dtype", dtype_name(grad_tensor_of(X0)->u.tensor.dtype));
  Expr *hot_args[3] = {c->x[2], k(G, X0, 1), k(G, X0, 0)};
  Expr *hot = grad_op(G, "one_hot", 3, hot_args, oh); /* (B, N) */
  Expr *sum_ops[2] = {hot, per_box};
  Attrs *eq2 = grad_attrs(G, 1);
  grad_attr_str(G, eq2, 0, "equation", "bn,bchw->nchw");
  c->dx[0] = grad_op1(G, "einsum", grad_tuple(G, 2, sum_ops), eq2);
  return built(G);
}

/* image.affine_grid(theta (N, 2, 3)): y[n, r] = sum_j theta[n, r, j] B_j
 * with B = (x, y, 1) over the target grid, read from the op applied to the
 * three thetas whose first rows are unit vectors; dtheta = dy B^T. */
static bool bw_affine_grid(GradCx *G, GradCall *c) {
  int64_t yd[4];
  if (!want(c, 0) || !gr_static_dims(grad_tensor_of(c->y), yd)) return built(G);
  DType dt = grad_tensor_of(X0)->u.tensor.dtype;
  double unit[18] = {0};
  for (int j = 0; j < 3; j++) unit[j * 6 + j] = 1;
  Expr *e = grad_const(G, dt, 3, (int64_t[]){3, 2, 3}, unit);
  Expr *r = grad_op1(G, "image.affine_grid", e, c->call->u.call.attrs); /* (3, 2, H, W) */
  Attrs *sl = grad_attrs(G, 2);
  grad_attr_ints(G, sl, 0, "begin", 4, (int64_t[]){0, 0, 0, 0});
  grad_attr_ints(G, sl, 1, "end", 4, (int64_t[]){3, 1, yd[2], yd[3]});
  Expr *base =
      gr_reshape_to(G, grad_op1(G, "strided_slice", r, sl), 2, (int64_t[]){3, yd[2] * yd[3]});
  Expr *d = gr_reshape_to(G, DY, 2, (int64_t[]){yd[0] * 2, yd[2] * yd[3]});
  c->dx[0] = gr_reshape_to(G, gr_matmul(G, d, base, false, true), 3, (int64_t[]){yd[0], 2, 3});
  return built(G);
}

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_POOL(X) \
  X(adaptive_max_pool2d) X(adaptive_avg_pool2d)
#define GRAD_RULES_LAYOUT(X) \
  X(pad) X(mirror_pad) X(depth_to_space) X(space_to_depth) X(space_to_batch_nd) \
  X(batch_to_space_nd) X(dilate) X(resize1d) X(resize2d) X(resize3d) X(upsampling) \
  X(upsampling3d) X(affine_grid) X(dyn_pad) X(crop_and_resize)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_POOL(BACKWARD)
GRAD_RULES_LAYOUT(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_layout[] = {
    {"nn.adaptive_max_pool2d", &grad_adaptive_max_pool2d},
    {"nn.adaptive_avg_pool2d", &grad_adaptive_avg_pool2d},
    {"nn.pad", &grad_pad},
    {"nn.mirror_pad", &grad_mirror_pad},
    {"nn.upsampling", &grad_upsampling},
    {"nn.upsampling3d", &grad_upsampling3d},
    {"nn.depth_to_space", &grad_depth_to_space},
    {"nn.space_to_depth", &grad_space_to_depth},
    {"nn.space_to_batch_nd", &grad_space_to_batch_nd},
    {"nn.batch_to_space_nd", &grad_batch_to_space_nd},
    {"nn.dilate", &grad_dilate},
    {"dyn.nn.pad", &grad_dyn_pad},
    {"dyn.image.resize2d", &grad_resize2d},
    {"image.resize1d", &grad_resize1d},
    {"image.resize2d", &grad_resize2d},
    {"image.resize3d", &grad_resize3d},
    {"image.crop_and_resize", &grad_crop_and_resize},
    {"image.affine_grid", &grad_affine_grid},
    {NULL, NULL},
};
