/* simplify_inference.c — SimplifyInference (TVM's): the inference forms of
 * the normalizations and of dropout become plain arithmetic, which later
 * passes fold (FoldConstant) and move into weights (FoldScaleAxis).
 *
 * Rules (x of rank n, the channel axis a normalized, eps a scalar of x's
 * dtype, `bcast(v)` = expand_dims(v, axis=1, num_newaxis=n-1-a) so a
 * per-channel vector broadcasts along a):
 *   batch_norm   nn.batch_norm(x, gamma, beta, mean, var).0 →
 *                %y = multiply(x, bcast(s)); add(%y, bcast(add(multiply(negative(mean), s), beta)))
 *                with s = multiply(divide(1, sqrt(add(var, eps))), gamma)
 *                (no gamma with scale=False, no beta with center=False); the
 *                product is a binding of its own so that AlterOpLayout,
 *                which follows a blocked operand through bound variables,
 *                keeps both ops blocked after a blocked conv
 *   dropout      nn.dropout(x).0 → x (the one-argument, inference form)
 *   layer_norm   divide(subtract(x, m), sqrt(add(variance(x, m), eps))) with
 *                m = mean(x, axis=[a], keepdims=True), then multiply by
 *                bcast(gamma) and add bcast(beta)
 *   instance_norm  the same over every axis but 0 and a
 *   group_norm   the same on x reshaped to (..., groups, C/groups, ...) over
 *                the axes after the groups, reshaped back (static shapes)
 *   l2_normalize divide(x, sqrt(maximum(sum(multiply(x, x), axis, keepdims=True), eps)))
 * The batch_norm tuple may be a let-bound temporary (`%1 =
 * nn.batch_norm(...); %2 = %1.0;`, as TVM prints it): its arguments then
 * move to the projection when the tuple has no other use, or are atoms
 * (otherwise the rule does not apply, rather than compute them twice), and
 * the binding goes once unused.  A subterm the expansion uses twice is
 * let-bound (a fresh temporary before the binding that holds it) unless it
 * is an atom, except s, a per-channel vector, which is written twice so
 * that FoldScaleAxis can move it (it refers only to the normalization's
 * arguments) even before FoldConstant. */
#include <string.h>

#include "passes/graph_int.h"

/* What an expansion needs: the block of shared subterms, x's type, the
 * normalized axis and epsilon, and where to put spans. */
typedef struct Norm {
  Graph *g;
  RwBlock b;
  const Type *x;
  int ndim, axis;
  DType dt;
  Span sp;
} Norm;

static bool norm_init(Norm *n, Graph *g, const Type *x, int64_t axis, Span sp) {
  memset(n, 0, sizeof *n);
  if (!x || !dtype_is_float(x->u.tensor.dtype)) return false;
  n->g = g, n->x = x, n->sp = sp, n->ndim = x->u.tensor.ndim, n->dt = x->u.tensor.dtype;
  n->axis = (int)(axis < 0 ? axis + n->ndim : axis);
  return n->axis >= 0 && n->axis < n->ndim;
}

/* e where it is used more than once: itself when an atom, else a fresh
 * temporary bound to it. */
static Expr *shared(Norm *n, Expr *e) {
  return rw_is_atom(n->g->pc->in, e) ? e : graph_bind(n->g, &n->b, e, n->sp);
}

/* One more use of a shared atom (a node of its own). */
static Expr *again(Norm *n, Expr *atom) { return graph_copy(n->g, atom); }

/* An argument of the call being expanded, used once: an atom is copied
 * (the call may stay, used elsewhere), anything else moves. */
static Expr *moved(Graph *g, Expr *e) { return rw_is_atom(g->pc->in, e) ? graph_copy(g, e) : e; }

static Expr *eps_of(Norm *n, const Expr *call, const char *key) {
  return graph_scalar(n->g, n->dt, op_attr_float(call, key), n->sp);
}

static Expr *bcast(Norm *n, Expr *v) {
  return graph_expand_to_axis(n->g, v, n->axis, n->ndim, n->sp);
}

/* The let chain of the shared subterms ending in out, typed as out. */
static Expr *finish(Norm *n, Expr *out) {
  Type *ty = out->ty;
  Expr *r = rw_block_finish(n->g->a, &n->b, out);
  r->ty = ty;
  return r;
}

/* ── batch_norm ── */

/* s = 1 / sqrt(var + eps) (* gamma), built anew at each use. */
static Expr *bn_scale(Norm *n, const Expr *call, Expr *gamma, Expr *var) {
  Graph *g = n->g;
  Expr *s = graph_call2(g, GOP_ADD, again(n, var), eps_of(n, call, "epsilon"), n->sp);
  s = graph_call1(g, GOP_SQRT, s, NULL, n->sp);
  s = graph_call2(g, GOP_DIVIDE, graph_scalar(g, n->dt, 1, n->sp), s, n->sp);
  if (op_attr_bool(call, "scale")) s = graph_call2(g, GOP_MULTIPLY, s, again(n, gamma), n->sp);
  return s;
}

static Expr *expand_batch_norm(Graph *g, const Expr *call, const Type *x, Span sp) {
  Norm n;
  if (!norm_init(&n, g, x, op_attr_int(call, "axis"), sp)) return NULL;
  Expr *const *a = call->u.call.args;
  Expr *gamma = shared(&n, a[1]), *var = shared(&n, a[4]);
  Expr *shift = graph_call1(g, GOP_NEGATIVE, moved(g, a[3]), NULL, sp);
  shift = graph_call2(g, GOP_MULTIPLY, shift, bn_scale(&n, call, gamma, var), sp);
  if (op_attr_bool(call, "center")) shift = graph_call2(g, GOP_ADD, shift, moved(g, a[2]), sp);
  Expr *scale = bcast(&n, bn_scale(&n, call, gamma, var));
  Expr *out = graph_call2(g, GOP_MULTIPLY, moved(g, a[0]), scale, sp);
  out = graph_bind(g, &n.b, out, sp); /* %y: see the top */
  return finish(&n, graph_call2(g, GOP_ADD, out, bcast(&n, shift), sp));
}

/* ── layer_norm, instance_norm, group_norm ── */

static Attrs *reduce_attrs(Graph *g, int n, const int64_t *axes) {
  Attrs *at = graph_attrs(g, 2);
  graph_attr_ints(g, at, 0, "axis", n, axes);
  graph_attr_bool(g, at, 1, "keepdims", true);
  return at;
}

/* (x - mean) / sqrt(variance + eps) over the axes, x a shared atom. */
static Expr *normalize(Norm *n, const Expr *call, Expr *x, int nax, const int64_t *axes) {
  Graph *g = n->g;
  Expr *mean = shared(n, graph_call1(g, GOP_MEAN, again(n, x), reduce_attrs(g, nax, axes), n->sp));
  Expr *vargs[2] = {again(n, x), again(n, mean)};
  Expr *var = graph_call(g, GOP_VARIANCE, 2, vargs, reduce_attrs(g, nax, axes), n->sp);
  Expr *den = graph_call2(g, GOP_ADD, var, eps_of(n, call, "epsilon"), n->sp);
  den = graph_call1(g, GOP_SQRT, den, NULL, n->sp);
  Expr *num = graph_call2(g, GOP_SUBTRACT, again(n, x), again(n, mean), n->sp);
  return graph_call2(g, GOP_DIVIDE, num, den, n->sp);
}

/* out * bcast(gamma) + bcast(beta), as scale and center say. */
static Expr *affine(Norm *n, const Expr *call, Expr *out) {
  Expr *const *a = call->u.call.args;
  Graph *g = n->g;
  if (op_attr_bool(call, "scale"))
    out = graph_call2(g, GOP_MULTIPLY, out, bcast(n, moved(g, a[1])), n->sp);
  if (op_attr_bool(call, "center"))
    out = graph_call2(g, GOP_ADD, out, bcast(n, moved(g, a[2])), n->sp);
  return out;
}

static Expr *expand_layer_norm(Graph *g, const Expr *call, const Type *x, bool instance) {
  Norm n;
  if (!norm_init(&n, g, x, op_attr_int(call, "axis"), call->span)) return NULL;
  int64_t axes[TENSOR_MAX_RANK];
  int nax = 0;
  if (!instance) axes[nax++] = n.axis;
  for (int i = 1; instance && i < n.ndim; i++)
    if (i != n.axis) axes[nax++] = i;
  Expr *xs = shared(&n, call->u.call.args[0]);
  return finish(&n, affine(&n, call, normalize(&n, call, xs, nax, axes)));
}

static Expr *reshape(Graph *g, Expr *x, int n, const int64_t *shape, Span sp) {
  Attrs *at = graph_attrs(g, 1);
  graph_attr_ints(g, at, 0, "newshape", n, shape);
  return graph_call1(g, GOP_RESHAPE, x, at, sp);
}

/* group_norm: x (static shape) split at the axis into (groups, C/groups),
 * normalized over the axes after the groups, and reshaped back. */
static Expr *expand_group_norm(Graph *g, const Expr *call, const Type *x) {
  Norm n;
  int64_t groups = op_attr_int(call, "num_groups");
  if (!norm_init(&n, g, x, op_attr_int(call, "axis"), call->span) || !graph_static(x) ||
      groups < 1 || n.ndim >= TENSOR_MAX_RANK)
    return NULL;
  int64_t orig[TENSOR_MAX_RANK], split[TENSOR_MAX_RANK], axes[TENSOR_MAX_RANK];
  int ns = 0, nax = 0;
  for (int i = 0; i < n.ndim; i++) {
    orig[i] = x->u.tensor.dims[i].value;
    if (i == n.axis && orig[i] % groups) return NULL;
    if (i == n.axis)
      split[ns++] = groups, split[ns++] = orig[i] / groups;
    else
      split[ns++] = orig[i];
  }
  for (int i = n.axis + 1; i < ns; i++) axes[nax++] = i;
  Expr *xs = shared(&n, reshape(g, call->u.call.args[0], ns, split, n.sp));
  Expr *out = reshape(g, normalize(&n, call, xs, nax, axes), n.ndim, orig, n.sp);
  return finish(&n, affine(&n, call, out));
}

/* ── l2_normalize ── */

static Expr *expand_l2_normalize(Graph *g, const Expr *call, const Type *x) {
  Norm n;
  int64_t axes[TENSOR_MAX_RANK];
  int nax = op_attr_ints(call, "axis", axes, TENSOR_MAX_RANK);
  if (nax < 0 || !norm_init(&n, g, x, 0, call->span)) return NULL;
  Expr *xs = shared(&n, call->u.call.args[0]);
  Expr *sq = graph_call2(g, GOP_MULTIPLY, again(&n, xs), again(&n, xs), n.sp);
  Expr *sum = graph_call1(g, GOP_SUM, sq, reduce_attrs(g, nax, axes), n.sp);
  Expr *den = graph_call2(g, GOP_MAXIMUM, sum, eps_of(&n, call, "eps"), n.sp);
  den = graph_call1(g, GOP_SQRT, den, NULL, n.sp);
  return finish(&n, graph_call2(g, GOP_DIVIDE, again(&n, xs), den, n.sp));
}

/* ── the rules ── */

/* The call `t.0` projects, when its arguments may be used at the
 * projection: t is the call, or a variable bound to it that nothing else
 * uses (in the same function), or whose arguments are all atoms. */
static Expr *projected_call(Graph *g, Expr *t) {
  if (t->kind == EX_CALL) return t;
  GraphLink *l = graph_link(g, t, false, false);
  if (!l || l->value->kind != EX_CALL) return NULL;
  bool alone = graph_link(g, t, true, true) != NULL;
  for (int i = 0; !alone && i < l->value->u.call.nargs; i++)
    if (!rw_is_atom(g->pc->in, l->value->u.call.args[i])) return NULL;
  return l->value;
}

static Expr *rule_proj(Graph *g, Expr *e, Expr *r) {
  if (r->u.proj.index != 0) return r;
  Expr *call = projected_call(g, r->u.proj.tuple);
  if (!call) return r;
  Expr *out = NULL;
  const char *name = NULL;
  if (graph_is_call(call, GOP_BATCH_NORM)) {
    out = expand_batch_norm(g, call, graph_tensor_of(e), r->span), name = "batch_norm";
  } else if (graph_is_call(call, GOP_DROPOUT) && call->u.call.nargs == 1) {
    out = moved(g, call->u.call.args[0]), name = "dropout";
  }
  if (!out) return r;
  graph_report(g, name, e, out);
  return out;
}

static Expr *rule_call(Graph *g, Expr *e, Expr *r) {
  const Type *x = graph_tensor_of(e);
  Expr *out = NULL;
  const char *name = NULL;
  if (graph_is_call(r, GOP_LAYER_NORM))
    out = expand_layer_norm(g, r, x, false), name = "layer_norm";
  else if (graph_is_call(r, GOP_INSTANCE_NORM))
    out = expand_layer_norm(g, r, x, true), name = "instance_norm";
  else if (graph_is_call(r, GOP_GROUP_NORM))
    out = expand_group_norm(g, r, x), name = "group_norm";
  else if (graph_is_call(r, GOP_L2_NORMALIZE))
    out = expand_l2_normalize(g, r, x), name = "l2_normalize";
  if (!out) return r;
  graph_report(g, name, e, out);
  return out;
}

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (r->kind == EX_PROJ) return rule_proj(g, e, r);
  if (r->kind == EX_CALL) return rule_call(g, e, r);
  return r;
}

/* A binding the rules turned into another variable (`%2 = %1.0` of a
 * dropout): uses of it become that variable. */
static Expr *subst(Graph *g, GraphLink *l) {
  (void)g;
  return l->value->kind == EX_VAR && l->value != l->orig->u.let.value ? l->value : NULL;
}

static const GraphHooks hooks = {.rule = rule, .subst = subst};

Module *pass_simplify_inference(PassCtx *pc, Module *in) {
  return graph_pass(pc, in, &hooks, NULL);
}
