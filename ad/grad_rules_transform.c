/* grad_rules_transform.c — gradient rules of the transform, transform_shape,
 * transform_index and algorithm ops beyond those of grad_rules.c: stack,
 * strided_slice (end and size modes, negative strides), slice_like,
 * layout_transform, tile, repeat, reverse, reverse_sequence, sequence_mask,
 * trilu, cast_like, meshgrid, one_hot (its on and off values), gather,
 * gather_nd, adv_index, scatter, scatter_add, scatter_nd (data and
 * updates), sparse_to_dense, einsum, sort and topk, and dyn.tile,
 * dyn.one_hot, dyn.topk, dyn.strided_slice, arange (its start and step) and
 * unique (its values).
 *
 * An op that moves elements has the op putting them back as its adjoint:
 * a gather's is a scatter_add (scatter_nd with mode add) into zeros, a
 * slice's is nn.dilate and nn.pad, an involution (reverse,
 * reverse_sequence) or a mask (sequence_mask, trilu) is its own.  The
 * adjoint of an einsum operand is the einsum of dy with the other
 * operands. */
#include <string.h>

#include "ad/grad_rules.h"
#include "ops/transform_int.h"

static Expr *cast_to(GradCx *G, Expr *x, DType dt) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "dtype", dtype_name(dt));
  return grad_op1(G, "cast", x, at);
}

static DType dtype_of(const Expr *e) { return grad_tensor_of(e)->u.tensor.dtype; }

static Attrs *axis_attr(GradCx *G, const char *key, int64_t v) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_int(G, at, 0, key, v);
  return at;
}

static bool static_or_fail(GradCx *G, GradCall *c, const Expr *e, int64_t *d) {
  if (gr_static_dims(grad_tensor_of(e), d)) return true;
  return grad_fail(G, "the gradient of %s needs static shapes", c->call->u.call.fn->u.op.name);
}

/* ───────────────────────── stack, slices ───────────────────────── */

/* stack((a, b, ...), axis): dy split into n sections along the axis, each
 * without it. */
static bool bw_stack(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int n = X0->ty->u.tuple.n, axis = gr_norm_axis(DY, op_attr_int(c->call, "axis"));
  Attrs *as = grad_attrs(G, 2);
  grad_attr_int(G, as, 0, "indices_or_sections", n);
  grad_attr_int(G, as, 1, "axis", axis);
  Expr *parts = grad_op1(G, "split", DY, as);
  Expr **f = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 0; i < n; i++) {
    Attrs *sq = grad_attrs(G, 1);
    grad_attr_ints(G, sq, 0, "axis", 1, (int64_t[]){axis});
    f[i] = grad_op1(G, "squeeze", grad_proj(G, parts, i), sq);
  }
  c->dx[0] = grad_tuple(G, n, f);
  return built(G);
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The first element strided_slice takes along an axis of size dim (as
 * the op's relation and kernel clamp it). */
static int64_t slice_start(int64_t dim, bool has, int64_t b, int64_t s) {
  if (s > 0) return has ? clampi(b < 0 ? b + dim : b, 0, dim) : 0;
  return has ? clampi(b < 0 ? b + dim : b, -1, dim - 1) : dim - 1;
}

/* strided_slice's attributes, and where entry i of begin/end/strides
 * applies (its axis). */
typedef struct Slice {
  int nb, ns, na, m;
  int64_t b[TENSOR_MAX_RANK], s[TENSOR_MAX_RANK], axes[TENSOR_MAX_RANK];
  bool size_mode;
} Slice;

static void read_slice(GradCx *G, GradCall *c, Slice *sl) {
  int n = rank_of(X0);
  int64_t e[TENSOR_MAX_RANK];
  sl->nb = op_attr_ints(c->call, "begin", sl->b, TENSOR_MAX_RANK);
  sl->ns = op_attr_is_none(c->call, "strides") ? 0 : op_attr_ints(c->call, "strides", sl->s, n);
  sl->na = op_attr_is_none(c->call, "axes") ? -1 : op_attr_ints(c->call, "axes", sl->axes, n);
  sl->size_mode = !strcmp(op_attr_str(G->a, c->call, "slice_mode"), "size");
  int ne = op_attr_ints(c->call, "end", e, TENSOR_MAX_RANK);
  sl->m = sl->na >= 0 ? sl->na : sl->nb > ne ? sl->nb : ne;
}

/* strided_slice: dy reversed along the axes of negative strides, spread
 * by nn.dilate and placed by nn.pad at the elements the slice took. */
static bool bw_strided_slice(GradCx *G, GradCall *c) {
  int64_t xd[TENSOR_MAX_RANK], yd[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK];
  int64_t pw[TENSOR_MAX_RANK][2] = {{0}};
  if (!want(c, 0) || !static_or_fail(G, c, X0, xd) || !static_or_fail(G, c, c->y, yd))
    return built(G);
  Slice sl;
  read_slice(G, c, &sl);
  int n = rank_of(X0);
  Expr *d = DY;
  for (int a = 0; a < n; a++) st[a] = 1, pw[a][1] = xd[a] - yd[a];
  for (int i = 0; i < sl.m; i++) {
    int a = sl.na >= 0 ? gr_norm_axis(X0, sl.axes[i]) : i;
    int64_t step = sl.size_mode ? 1 : sl.ns == 1 ? sl.s[0] : i < sl.ns ? sl.s[i] : 1;
    int64_t first = slice_start(xd[a], i < sl.nb, i < sl.nb ? sl.b[i] : 0, step), cnt = yd[a];
    if (step < 0) {
      d = grad_op1(G, "reverse", d, axis_attr(G, "axis", a));
      first += (cnt - 1) * step, step = -step;
    }
    st[a] = step;
    pw[a][0] = cnt ? first : 0;
    pw[a][1] = xd[a] - pw[a][0] - (cnt ? (cnt - 1) * step + 1 : 0);
  }
  Attrs *dl = grad_attrs(G, 1), *pa = grad_attrs(G, 1);
  grad_attr_ints(G, dl, 0, "strides", n, st);
  grad_attr_pairs(G, pa, 0, "pad_width", n, pw);
  Expr *args[2] = {grad_op1(G, "nn.dilate", d, dl), k(G, DY, 0)};
  c->dx[0] = grad_op(G, "nn.pad", 2, args, pa);
  return built(G);
}

/* dyn.strided_slice(x, begin, end[, strides]) with constant arguments:
 * strided_slice's rule. */
static bool bw_dyn_strided_slice(GradCx *G, GradCall *c) {
  int64_t v[3][TENSOR_MAX_RANK];
  int nv[3];
  const char *keys[3] = {"begin", "end", "strides"};
  Attrs *at = grad_attrs(G, c->nx + 1);
  for (int i = 1; i < c->nx; i++) {
    if ((nv[i - 1] = gr_const_ints(G, c, c->x[i], v[i - 1], TENSOR_MAX_RANK)) < 0) return false;
    grad_attr_ints(G, at, i - 1, keys[i - 1], nv[i - 1], v[i - 1]);
  }
  grad_attr_str(G, at, c->nx - 1, "slice_mode", op_attr_str(G->a, c->call, "slice_mode"));
  const AttrValue *axes = attrs_get(c->call->u.call.attrs, "axes");
  at->n = c->nx;
  if (axes && axes->kind == AV_LIST)
    at->keys[at->n] = "axes", at->vals[at->n++] = (AttrValue *)axes;
  GradCall s = gr_static_form(G, c, "strided_slice", 1, c->x, c->constant & 1, at);
  if (!bw_strided_slice(G, &s)) return false;
  c->dx[0] = s.dx[0];
  return built(G);
}

/* slice_like: x's leading part, so dy padded with zeros at the end. */
static bool bw_slice_like(GradCx *G, GradCall *c) {
  int64_t xd[TENSOR_MAX_RANK], yd[TENSOR_MAX_RANK], pw[TENSOR_MAX_RANK][2] = {{0}};
  if (!want(c, 0) || !static_or_fail(G, c, X0, xd) || !static_or_fail(G, c, c->y, yd))
    return built(G);
  int n = rank_of(X0);
  for (int a = 0; a < n; a++) pw[a][1] = xd[a] - yd[a];
  Attrs *pa = grad_attrs(G, 1);
  grad_attr_pairs(G, pa, 0, "pad_width", n, pw);
  Expr *args[2] = {DY, k(G, DY, 0)};
  c->dx[0] = grad_op(G, "nn.pad", 2, args, pa);
  return built(G);
}

/* ───────────────────────── layouts, repetitions ───────────────────────── */

static bool bw_layout_transform(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Attrs *at = grad_attrs(G, 2);
  grad_attr_str(G, at, 0, "src_layout", op_attr_str(G->a, c->call, "dst_layout"));
  grad_attr_str(G, at, 1, "dst_layout", op_attr_str(G->a, c->call, "src_layout"));
  c->dx[0] = grad_op1(G, "layout_transform", DY, at);
  return built(G);
}

/* tile, dyn.tile: dy (r_i d_i per axis, x's shape led by 1s to dy's rank,
 * r_i the ratio of the dims) read as (r_0, d_0, r_1, d_1, ...) and summed
 * over the r axes. */
static bool bw_tile(GradCx *G, GradCall *c) {
  int64_t xd[TENSOR_MAX_RANK], yd[TENSOR_MAX_RANK], split[2 * TENSOR_MAX_RANK];
  int64_t sum_axes[TENSOR_MAX_RANK];
  if (!want(c, 0) || !static_or_fail(G, c, X0, xd) || !static_or_fail(G, c, c->y, yd))
    return built(G);
  int n = rank_of(X0), m = rank_of(c->y);
  if (2 * m > TENSOR_MAX_RANK)
    return grad_fail(G, "the gradient of tile takes rank %d at most", TENSOR_MAX_RANK / 2);
  for (int i = 0; i < m; i++) {
    int64_t d = i - (m - n) >= 0 ? xd[i - (m - n)] : 1;
    split[2 * i] = d ? yd[i] / d : 0, split[2 * i + 1] = d, sum_axes[i] = 2 * i;
  }
  Attrs *sa = grad_attrs(G, 1);
  grad_attr_ints(G, sa, 0, "axis", m, sum_axes);
  Expr *s = grad_op1(G, "sum", gr_reshape_to(G, DY, 2 * m, split), sa);
  c->dx[0] = grad_op2(G, "reshape_like", s, X0);
  return built(G);
}

/* repeat: the axis of n r elements read as (n, r), summed over r. */
static bool bw_repeat(GradCx *G, GradCall *c) {
  int64_t xd[TENSOR_MAX_RANK], split[TENSOR_MAX_RANK + 1];
  if (!want(c, 0) || !static_or_fail(G, c, X0, xd)) return built(G);
  int64_t r = op_attr_int(c->call, "repeats");
  int n = rank_of(X0), m = 0, a = 0;
  if (op_attr_is_none(c->call, "axis")) { /* the flattened x */
    int64_t total = 1;
    for (int i = 0; i < n; i++) total *= xd[i];
    split[m++] = total, split[m++] = r, a = 0;
  } else {
    a = gr_norm_axis(X0, op_attr_int(c->call, "axis"));
    for (int i = 0; i < n; i++) {
      split[m++] = xd[i];
      if (i == a) split[m++] = r;
    }
  }
  Attrs *sa = grad_attrs(G, 1);
  grad_attr_ints(G, sa, 0, "axis", 1, (int64_t[]){a + 1});
  Expr *s = grad_op1(G, "sum", gr_reshape_to(G, DY, m, split), sa);
  c->dx[0] = grad_op2(G, "reshape_like", s, X0);
  return built(G);
}

/* Ops whose adjoint is the op itself on dy with the same other operands
 * and attributes: reverse, reverse_sequence (involutions), trilu (a mask). */
static bool bw_self(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Expr **args = ARENA_ARRAY(G->a, Expr *, c->nx);
  args[0] = DY;
  for (int i = 1; i < c->nx; i++) args[i] = c->x[i];
  c->dx[0] = grad_op(G, c->call->u.call.fn->u.op.name, c->nx, args, c->call->u.call.attrs);
  return built(G);
}

static bool bw_reverse(GradCx *G, GradCall *c) { return bw_self(G, c); }
static bool bw_reverse_sequence(GradCx *G, GradCall *c) { return bw_self(G, c); }
static bool bw_trilu(GradCx *G, GradCall *c) { return bw_self(G, c); }

/* sequence_mask: dy where x was kept, 0 where mask_value was put. */
static bool bw_sequence_mask(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Attrs *at = grad_attrs(G, 2);
  grad_attr_float(G, at, 0, "mask_value", 0);
  grad_attr_int(G, at, 1, "axis", op_attr_int(c->call, "axis"));
  Expr *args[2] = {DY, X1};
  c->dx[0] = grad_op(G, "sequence_mask", 2, args, at);
  return built(G);
}

static bool bw_cast_like(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = cast_to(G, DY, dtype_of(X0));
  return built(G);
}

/* meshgrid((a, b, ...)): grid i holds input i along one axis (i with
 * indexing ij; xy swaps the first two), so its adjoint is dy_i summed over
 * the others. */
static bool bw_meshgrid(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int n = X0->ty->u.tuple.n;
  bool xy = !strcmp(op_attr_str(G->a, c->call, "indexing"), "xy") && n >= 2;
  Expr **f = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 0; i < n; i++) {
    int axis = xy && i < 2 ? 1 - i : i;
    Expr *xi = grad_proj(G, X0, i);
    f[i] = c->dy[i] ? grad_op2(G, "reshape_like", gr_sum_but(G, c->dy[i], axis), xi)
                    : grad_op1(G, "zeros_like", xi, NULL);
  }
  c->dx[0] = grad_tuple(G, n, f);
  return built(G);
}

/* one_hot(indices, on, off), dyn.one_hot(indices, on, off, depth): on gets
 * dy where the index is, off elsewhere. */
static bool bw_one_hot(GradCx *G, GradCall *c) {
  DType dt = dtype_of(c->y);
  Expr **args = ARENA_ARRAY(G->a, Expr *, c->nx);
  for (int i = 0; i < c->nx; i++) args[i] = c->x[i];
  args[1] = grad_scalar(G, dt, 1), args[2] = grad_scalar(G, dt, 0);
  Expr *on =
      mul(G, DY, grad_op(G, c->call->u.call.fn->u.op.name, c->nx, args, c->call->u.call.attrs));
  if (want(c, 1)) c->dx[1] = grad_unbroadcast(G, on, c->x[1]);
  if (want(c, 2)) c->dx[2] = grad_unbroadcast(G, sub(G, DY, on), c->x[2]);
  return built(G);
}

/* ───────────────────────── gathers and scatters ───────────────────────── */

static Expr *scatter_into(GradCx *G, const char *op, Expr *data, Expr *idx, Expr *upd, Attrs *at) {
  Expr *args[3] = {data, idx, upd};
  return grad_op(G, op, 3, args, at);
}

static Attrs *mode_attr(GradCx *G, const char *mode) {
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "mode", mode);
  return at;
}

/* gather(x, indices, axis): dy added back where it was read. */
static bool bw_gather(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int64_t axis = op_attr_is_none(c->call, "axis") ? 0 : op_attr_int(c->call, "axis");
  Expr *zero = grad_op1(G, "zeros_like", X0, NULL);
  c->dx[0] = scatter_into(G, "scatter_add", zero, X1, DY, axis_attr(G, "axis", axis));
  return built(G);
}

static bool bw_gather_nd(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  if (op_attr_int(c->call, "batch_dims") != 0)
    return grad_fail(G, "the gradient of gather_nd is defined for batch_dims=0");
  Expr *zero = grad_op1(G, "zeros_like", X0, NULL);
  c->dx[0] = scatter_into(G, "scatter_nd", zero, X1, DY, mode_attr(G, "add"));
  return built(G);
}

/* Which updates of a scatter that writes (the kernels write in the
 * updates' row-major order, so the last of several at one position stays):
 * each update's number from 1 (row-major), scattered the same way into
 * zeros and read back (`read`: gather or gather_nd) at its index, is its
 * own. */
static Expr *last_writes(GradCx *G, GradCall *c, const char *read, Attrs *at) {
  Expr *ones = cast_to(G, grad_op1(G, "ones_like", c->x[2], NULL), DT_INT64);
  Expr *ids = grad_op2(G, "reshape_like", grad_op1(G, "cumsum", ones, NULL), c->x[2]);
  Expr *zero = cast_to(G, grad_op1(G, "zeros_like", X0, NULL), DT_INT64);
  Expr *left = scatter_into(G, c->call->u.call.fn->u.op.name, zero, X1, ids, at);
  Expr *args[2] = {left, X1};
  return grad_op2(G, "equal", grad_op(G, read, 2, args, !strcmp(read, "gather") ? at : NULL), ids);
}

/* scatter / scatter_add(x, indices, updates, axis): the updates get dy
 * where they were written (scatter: only the update left there of several
 * at one position); x gets dy, but not where scatter wrote. */
static bool scatter_rule(GradCx *G, GradCall *c, bool overwrite) {
  Attrs *ax = axis_attr(G, "axis", op_attr_int(c->call, "axis"));
  if (want(c, 0))
    c->dx[0] =
        overwrite ? scatter_into(G, "scatter", DY, X1, grad_op1(G, "zeros_like", c->x[2], NULL), ax)
                  : DY;
  if (want(c, 2)) {
    Expr *args[2] = {DY, X1};
    Expr *d = grad_op(G, "gather", 2, args, ax);
    c->dx[2] = overwrite ? masked(G, last_writes(G, c, "gather", ax), d) : d;
  }
  return built(G);
}

static bool bw_scatter(GradCx *G, GradCall *c) { return scatter_rule(G, c, true); }
static bool bw_scatter_add(GradCx *G, GradCall *c) { return scatter_rule(G, c, false); }

/* scatter_nd: as scatter and scatter_add, an index tuple writing a slice. */
static bool bw_scatter_nd(GradCx *G, GradCall *c) {
  if (!strcmp(op_attr_str(G->a, c->call, "mode"), "mul"))
    return grad_fail(G, "the gradient of scatter_nd is defined for modes update and add");
  bool add_mode = !strcmp(op_attr_str(G->a, c->call, "mode"), "add");
  Attrs *up = mode_attr(G, "update");
  if (want(c, 0))
    c->dx[0] = add_mode ? DY
                        : scatter_into(G, "scatter_nd", DY, X1,
                                       grad_op1(G, "zeros_like", c->x[2], NULL), up);
  if (want(c, 2)) {
    Expr *d = grad_op2(G, "gather_nd", DY, X1);
    c->dx[2] = add_mode ? d : masked(G, last_writes(G, c, "gather_nd", up), d);
  }
  return built(G);
}

/* sparse_to_dense(indices, values, default): each value is read back at
 * its index (distinct indices, one coordinate per output axis), and the
 * default gets the rest of dy. */
static bool bw_sparse_to_dense(GradCx *G, GradCall *c) {
  int ni = rank_of(X0), r = rank_of(c->y);
  int64_t coords = ni == 2 ? grad_tensor_of(X0)->u.tensor.dims[1].value : 1;
  if (coords != r)
    return grad_fail(G, "the gradient of sparse_to_dense needs one index coordinate per axis");
  Expr *idx = ni == 2 ? gr_transpose_to(G, X0, 2, (int64_t[]){1, 0})
                      : gr_reshape_to(G, X0, 2, (int64_t[]){1, -1}); /* (axes, N) */
  Expr *g = grad_op2(G, "gather_nd", DY, idx);
  Expr *gs = grad_op1(G, "sum", g, NULL);
  if (want(c, 1)) c->dx[1] = rank_of(X1) == 0 ? gs : g;
  if (want(c, 2)) c->dx[2] = sub(G, grad_op1(G, "sum", DY, NULL), gs);
  return built(G);
}

/* adv_index((x, i0, i1, ...)): dy added into zeros at the index tuples
 * (the indices broadcast together and stacked); the indices get zeros. */
static bool bw_adv_index(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  int n = X0->ty->u.tuple.n, nb = rank_of(c->y) - (rank_of(grad_proj(G, X0, 0)) - (n - 1));
  int64_t yd[TENSOR_MAX_RANK];
  if (!static_or_fail(G, c, c->y, yd)) return false;
  Expr **idx = ARENA_ARRAY(G->a, Expr *, n), **f = ARENA_ARRAY(G->a, Expr *, n);
  for (int i = 1; i < n; i++) {
    Attrs *bt = grad_attrs(G, 1);
    grad_attr_ints(G, bt, 0, "shape", nb, yd);
    f[i] = grad_op1(G, "zeros_like", grad_proj(G, X0, i), NULL);
    idx[i - 1] = grad_op1(G, "broadcast_to", grad_proj(G, X0, i), bt);
  }
  Expr *stacked = grad_op1(G, "stack", grad_tuple(G, n - 1, idx), axis_attr(G, "axis", 0));
  Expr *zero = grad_op1(G, "zeros_like", grad_proj(G, X0, 0), NULL);
  f[0] = scatter_into(G, "scatter_nd", zero, stacked, DY, mode_attr(G, "add"));
  c->dx[0] = grad_tuple(G, n, f);
  return built(G);
}

/* ───────────────────────── einsum ───────────────────────── */

static char label_char(int l) { return (char)(l < 26 ? 'A' + l : 'a' + l - 26); }

static char *term_text(GradCx *G, const EinsumTerm *t) {
  char *s = ARENA_ARRAY(G->a, char, t->n + 1);
  for (int i = 0; i < t->n; i++) s[i] = label_char(t->lab[i]);
  s[t->n] = 0;
  return s;
}

static bool term_has(const EinsumTerm *t, int l) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == l) return true;
  return false;
}

/* Operand i's adjoint: einsum(dy, the other operands -> its labels);
 * a label of its own only (summed in the forward) is broadcast back. */
static Expr *einsum_operand(GradCx *G, GradCall *c, const EinsumSpec *sp, int i) {
  int n = sp->nin, m = 0;
  const EinsumTerm *ti = &sp->in[i];
  char out[TENSOR_MAX_RANK + 1];
  int64_t missing[TENSOR_MAX_RANK];
  int nm = 0;
  for (int p = 0; p < ti->n; p++) {
    bool seen = term_has(&sp->out, ti->lab[p]);
    for (int j = 0; j < n && !seen; j++) seen = j != i && term_has(&sp->in[j], ti->lab[p]);
    if (seen)
      out[m++] = label_char(ti->lab[p]);
    else
      missing[nm++] = p;
  }
  out[m] = 0;
  const char *eq = term_text(G, &sp->out);
  Expr **ops = ARENA_ARRAY(G->a, Expr *, n);
  ops[0] = DY;
  for (int j = 0, q = 1; j < n; j++)
    if (j != i)
      eq = arena_printf(G->a, "%s,%s", eq, term_text(G, &sp->in[j])),
      ops[q++] = grad_proj(G, X0, j);
  Attrs *at = grad_attrs(G, 1);
  grad_attr_str(G, at, 0, "equation", arena_printf(G->a, "%s->%s", eq, out));
  Expr *r = grad_op1(G, "einsum", grad_tuple(G, n, ops), at);
  Expr *xi = grad_proj(G, X0, i);
  for (int p = 0; p < nm; p++) r = grad_op1(G, "expand_dims", r, axis_attr(G, "axis", missing[p]));
  return nm ? grad_op2(G, "broadcast_to_like", r, xi) : r;
}

static bool einsum_spec(GradCx *G, GradCall *c, EinsumSpec *sp) {
  int n = X0->ty->u.tuple.n, ranks[EINSUM_MAX_IN];
  if (n > EINSUM_MAX_IN) return grad_fail(G, "einsum: too many operands");
  for (int i = 0; i < n; i++) ranks[i] = X0->ty->u.tuple.fields[i]->u.tensor.ndim;
  if (!einsum_parse(op_attr_str(G->a, c->call, "equation"), n, ranks, sp, G->err, sizeof G->err))
    return false;
  for (int i = 0; i < n; i++)
    for (int p = 0; p < sp->in[i].n; p++) {
      bool rep = false;
      for (int q = 0; q < p; q++) rep |= sp->in[i].lab[q] == sp->in[i].lab[p];
      if (sp->in[i].lab[p] == EINSUM_ELLIPSIS || rep)
        return grad_fail(G,
                         "the gradient of einsum takes no ellipsis and no repeated label in an "
                         "operand");
    }
  return true;
}

static bool bw_einsum(GradCx *G, GradCall *c) {
  EinsumSpec sp;
  if (!want(c, 0) || !einsum_spec(G, c, &sp)) return built(G);
  Expr **f = ARENA_ARRAY(G->a, Expr *, sp.nin);
  for (int i = 0; i < sp.nin; i++)
    f[i] = grad_differentiable(X0->ty->u.tuple.fields[i])
               ? einsum_operand(G, c, &sp, i)
               : grad_op1(G, "zeros_like", grad_proj(G, X0, i), NULL);
  c->dx[0] = grad_tuple(G, sp.nin, f);
  return built(G);
}

/* ───────────────────────── sort, topk ───────────────────────── */

/* The values are x gathered at the sorting indices: dy goes back there. */
static Expr *sorted_back(GradCx *G, GradCall *c, Expr *idx, int64_t axis) {
  Expr *zero = grad_op1(G, "zeros_like", X0, NULL);
  return scatter_into(G, "scatter_add", zero, idx, DY,
                      axis_attr(G, "axis", gr_norm_axis(X0, axis)));
}

static bool bw_sort(GradCx *G, GradCall *c) {
  if (!want(c, 0)) return built(G);
  Attrs *at = grad_attrs(G, 2);
  grad_attr_int(G, at, 0, "axis", op_attr_int(c->call, "axis"));
  grad_attr_bool(G, at, 1, "is_ascend", op_attr_bool(c->call, "is_ascend"));
  c->dx[0] = sorted_back(G, c, grad_op1(G, "argsort", X0, at), op_attr_int(c->call, "axis"));
  return built(G);
}

/* The call's attributes with `key` set to the string v. */
static Attrs *with_str(GradCx *G, const Expr *call, const char *key, const char *v) {
  const Attrs *at = call->u.call.attrs;
  Attrs *na = grad_attrs(G, (at ? at->n : 0) + 1);
  int m = 0;
  for (int i = 0; at && i < at->n; i++)
    if (strcmp(at->keys[i], key)) na->keys[m] = at->keys[i], na->vals[m++] = at->vals[i];
  grad_attr_str(G, na, m++, key, v);
  na->n = m;
  return na;
}

/* topk, dyn.topk's values (ret_type both or values): the indices are its
 * own second field, or the op's with ret_type indices. */
static bool bw_topk(GradCx *G, GradCall *c) {
  const char *rt = op_attr_str(G->a, c->call, "ret_type");
  if (!want(c, 0) || !strcmp(rt, "indices") || !DY) return built(G);
  Expr *idx = !strcmp(rt, "both") ? grad_proj(G, c->y, 1)
                                  : grad_op(G, c->call->u.call.fn->u.op.name, c->nx, c->x,
                                            with_str(G, c->call, "ret_type", "indices"));
  c->dx[0] = sorted_back(G, c, idx, op_attr_int(c->call, "axis"));
  return built(G);
}

/* ───────────────────────── arange, unique ───────────────────────── */

/* x's adjoint e, cast to x's dtype when it differs. */
static Expr *as_dtype_of(GradCx *G, Expr *e, const Expr *x) {
  return e && dtype_of(e) != dtype_of(x) ? cast_to(G, e, dtype_of(x)) : e;
}

/* arange(start, stop, step): y_i = start + i step, so dstart = sum(dy) and
 * dstep = sum(dy i); stop only sets the length (constant between its
 * jumps), so it gets none.  i is counted on dy (an exclusive cumsum of
 * ones), as the length is known at run time only. */
static bool bw_arange(GradCx *G, GradCall *c) {
  if (want(c, 0)) c->dx[0] = as_dtype_of(G, grad_op1(G, "sum", DY, NULL), X0);
  if (want(c, 2)) {
    Attrs *at = grad_attrs(G, 2);
    grad_attr_int(G, at, 0, "axis", 0);
    grad_attr_bool(G, at, 1, "exclusive", true);
    Expr *i = grad_op1(G, "cumsum", grad_op1(G, "ones_like", DY, NULL), at);
    c->dx[2] = as_dtype_of(G, grad_op1(G, "sum", mul(G, DY, i), NULL), c->x[2]);
  }
  return built(G);
}

/* unique(x): its values are x gathered at its indices result (each value's
 * first occurrence; the entries past num_unique are 0, their indices
 * len(x)), so dy goes back there by scatter_add, as a gather's.  A value
 * that x holds more than once moves apart as soon as its copies do, so
 * there the result is one-sided: the first occurrence takes all of dy (the
 * derivative when all copies move together).  The integer results carry
 * none. */
static bool bw_unique(GradCx *G, GradCall *c) {
  if (!want(c, 0) || !DY) return built(G);
  if (X0->ty && X0->ty->kind == TY_TENSOR && X0->ty->u.tensor.ndim != 1)
    return grad_fail(G, "the gradient of unique is defined for 1-D data");
  Expr *idx = grad_proj(G, c->y, 1);
  Attrs *it = grad_attrs(G, 1);
  grad_attr_str(G, it, 0, "dtype", dtype_name(dtype_of(idx)));
  Expr *has = grad_op2(G, "less", idx, grad_op1(G, "ndarray_size", X0, it));
  Expr *args[3] = {grad_op1(G, "zeros_like", X0, NULL), masked(G, has, idx), masked(G, has, DY)};
  c->dx[0] = grad_op(G, "scatter_add", 3, args, axis_attr(G, "axis", 0));
  return built(G);
}

/* ───────────────────────── the rules ───────────────────────── */

/* The rules of this file: grad_<name> differentiates with bw_<name>. */
/* clang-format off */
#define GRAD_RULES_TRANSFORM(X) \
  X(stack) X(strided_slice) X(slice_like) X(layout_transform) X(tile) X(repeat) X(reverse) \
  X(reverse_sequence) X(sequence_mask) X(trilu) X(cast_like) X(meshgrid) X(one_hot) X(gather) \
  X(gather_nd) X(scatter) X(scatter_add) X(scatter_nd) X(adv_index) X(einsum) X(sort) X(topk) \
  X(dyn_strided_slice) X(sparse_to_dense) X(arange) X(unique)
/* clang-format on */
#define BACKWARD(name) static const OpGrad grad_##name = {bw_##name, NULL};
GRAD_RULES_TRANSFORM(BACKWARD)
#undef BACKWARD

/* The rules of this file by op name (grad_rule, ad/grad.h). */
const GradDef grad_family_transform[] = {
    {"stack", &grad_stack},
    {"strided_slice", &grad_strided_slice},
    {"arange", &grad_arange},
    {"one_hot", &grad_one_hot},
    {"slice_like", &grad_slice_like},
    {"layout_transform", &grad_layout_transform},
    {"tile", &grad_tile},
    {"repeat", &grad_repeat},
    {"reverse", &grad_reverse},
    {"reverse_sequence", &grad_reverse_sequence},
    {"sequence_mask", &grad_sequence_mask},
    {"meshgrid", &grad_meshgrid},
    {"trilu", &grad_trilu},
    {"cast_like", &grad_cast_like},
    {"gather", &grad_gather},
    {"gather_nd", &grad_gather_nd},
    {"scatter", &grad_scatter},
    {"scatter_add", &grad_scatter_add},
    {"scatter_nd", &grad_scatter_nd},
    {"sparse_to_dense", &grad_sparse_to_dense},
    {"adv_index", &grad_adv_index},
    {"sort", &grad_sort},
    {"topk", &grad_topk},
    {"unique", &grad_unique},
    {"einsum", &grad_einsum},
    {"dyn.strided_slice", &grad_dyn_strided_slice},
    {"dyn.tile", &grad_tile},
    {"dyn.topk", &grad_topk},
    {"dyn.one_hot", &grad_one_hot},
    {NULL, NULL},
};
