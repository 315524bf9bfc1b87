/* onnx_training.c — converters of the ai.onnx.preview.training domain
 * (rows in onnx_ops.c): the optimizers Adagrad, Adam and Momentum, and
 * Gradient (below).  Each optimizer takes the learning rate R and the update count T
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
 * so T may be known only at run time. */
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

/* ───────────────────────── Gradient ───────────────────────── */

/* Gradient (attributes xs, zs: graph tensor names; y: one) gives dy/dx for
 * each x of xs at the node's inputs (the values of xs, then of zs).  The
 * nodes of the node's graph on the way from xs to y are converted again
 * into a function @F_gradientK(xs.., zs.., captured..) -> y, the captured
 * values being the others those nodes read (constant for it); rly's
 * Gradient pass (through the caller's callback: the importer does not
 * reach ad/) defines @F_gradientK_grad, which the body calls: its result's
 * second field holds the gradients. */

typedef struct Grad {
  int nx, nz;
  const char **names; /* xs then zs */
  const char *y;
  StrMap dep;  /* names that depend on xs */
  StrMap need; /* names y needs */
  StrMap seen; /* names rebound in cx->vals */
  PtrVec saved_names, saved_vals;
  PtrVec params, args;
  int *first; /* per node of the graph: its first binding in the function's chain, or -1 */
} Grad;

static void *const MARK = (void *)1;

/* The names of a STRINGS attribute into out (arena); their count, or -1. */
static int attr_names(OnnxCx *cx, const char *name, const char ***out) {
  const Onnx__AttributeProto *at = oa_get(cx, name);
  *out = NULL;
  if (!at) return 0;
  if (at->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)
    return fe_fail(cx, "attribute '%s' must be strings", name), -1;
  *out = ARENA_ARRAY(cx->a, const char *, at->n_strings + 1);
  for (size_t i = 0; i < at->n_strings; i++)
    (*out)[i] = arena_strndup(cx->a, (const char *)at->strings[i].data, at->strings[i].len);
  return (int)at->n_strings;
}

/* Whether node n (its subgraphs too) reads a name of set. */
static bool reads_any(const Onnx__NodeProto *n, const StrMap *set) {
  for (size_t i = 0; i < n->n_input; i++)
    if (*n->input[i] && strmap_get(set, n->input[i])) return true;
  for (size_t k = 0; k < n->n_attribute; k++) {
    const Onnx__GraphProto *g = n->attribute[k]->g;
    for (size_t i = 0; g && i < g->n_node; i++)
      if (reads_any(g->node[i], set)) return true;
  }
  return false;
}

/* Adds every name n reads (its subgraphs' too) to set. */
static void add_reads(const Onnx__NodeProto *n, StrMap *set) {
  for (size_t i = 0; i < n->n_input; i++)
    if (*n->input[i]) strmap_put(set, n->input[i], MARK);
  for (size_t k = 0; k < n->n_attribute; k++) {
    const Onnx__GraphProto *g = n->attribute[k]->g;
    for (size_t i = 0; g && i < g->n_node; i++) add_reads(g->node[i], set);
  }
}

/* The nodes before the Gradient node that lie between xs and y: those
 * that depend on xs (dep) and that y needs (need), found walking back. */
static bool *grad_path(OnnxCx *cx, Grad *G) {
  const Onnx__GraphProto *g = cx->graph;
  int at = cx->node_index;
  bool *path = ARENA_ARRAY(cx->a, bool, at + 1), *dep = ARENA_ARRAY(cx->a, bool, at + 1);
  for (int i = 0; i < G->nx; i++) strmap_put(&G->dep, G->names[i], MARK);
  for (int k = 0; k < at; k++)
    if ((dep[k] = reads_any(g->node[k], &G->dep)))
      for (size_t o = 0; o < g->node[k]->n_output; o++)
        if (*g->node[k]->output[o]) strmap_put(&G->dep, g->node[k]->output[o], MARK);
  strmap_put(&G->need, G->y, MARK);
  for (int k = at; k-- > 0;) {
    const Onnx__NodeProto *n = g->node[k];
    for (size_t o = 0; dep[k] && !path[k] && o < n->n_output; o++)
      path[k] = *n->output[o] && strmap_get(&G->need, n->output[o]);
    if (path[k]) add_reads(n, &G->need);
  }
  return path;
}

/* Rebinds name to v in cx->vals, keeping its value to restore. */
static void rebind(OnnxCx *cx, Grad *G, const char *name, FeVal *v) {
  if (!strmap_get(&G->seen, name)) {
    strmap_put(&G->seen, name, MARK);
    vec_push(&G->saved_names, (void *)name), vec_push(&G->saved_vals, strmap_get(&cx->vals, name));
  }
  strmap_put(&cx->vals, name, v);
}

/* A parameter of the function standing for value v (passed as v). */
static FeVal *grad_param(OnnxCx *cx, Grad *G, const char *name, const FeVal *v, bool keep) {
  const char *pn = v->expr->kind == EX_VAR ? v->expr->u.var->name : "p";
  Var *p = var_new(cx->a, pn, v->ty, (Span){0});
  FeVal *nv = ARENA_NEW(cx->a, FeVal);
  nv->expr = expr_var(cx->a, p, (Span){0}), nv->ty = v->ty;
  if (keep) nv->value = v->value, nv->sym = v->sym; /* a captured value: constant here */
  vec_push(&G->params, p), vec_push(&G->args, v->expr);
  rebind(cx, G, name, nv);
  return nv;
}

/* The parameters: xs and zs (their feeds: the node's inputs), then every
 * other variable the path's nodes read (a name they do not define). */
static bool grad_params(OnnxCx *cx, Grad *G, const bool *path) {
  for (int i = 0; i < G->nx + G->nz; i++) {
    if (!cx->in[i] || !cx->in[i]->expr) return fe_fail(cx, "input %d is empty", i);
    if (strmap_get(&G->seen, G->names[i])) return fe_fail(cx, "'%s' is named twice", G->names[i]);
    grad_param(cx, G, G->names[i], cx->in[i], false);
  }
  StrMap defined = {0};
  for (int k = 0; k < cx->node_index; k++)
    for (size_t o = 0; path[k] && o < cx->graph->node[k]->n_output; o++)
      strmap_put(&defined, cx->graph->node[k]->output[o], MARK);
  for (int k = 0; k < cx->node_index; k++) {
    const Onnx__NodeProto *n = cx->graph->node[k];
    for (size_t i = 0; path[k] && i < n->n_input; i++) {
      const char *name = n->input[i];
      FeVal *v = *name ? strmap_get(&cx->vals, name) : NULL;
      if (v && v->expr && v->expr->kind == EX_VAR && !strmap_get(&defined, name) &&
          !strmap_get(&G->seen, name))
        grad_param(cx, G, name, v, true);
    }
  }
  strmap_free(&defined);
  return true;
}

/* The path's nodes converted again into the current chain (each node's
 * first binding noted in G->first); false after an error. */
static bool grad_convert(OnnxCx *cx, Grad *G, const bool *path) {
  const Onnx__GraphProto *g = cx->graph;
  G->first = ARENA_ARRAY(cx->a, int, cx->node_index + 1);
  for (int k = 0; k < cx->node_index; k++) {
    G->first[k] = path[k] ? (int)cx->let_vars.len : -1;
    if (!path[k]) continue;
    for (size_t a = 0; a < g->node[k]->n_attribute; a++)
      if (g->node[k]->attribute[a]->g)
        return fe_fail(cx,
                       "node #%d (%s) on the way from xs to '%s' has a subgraph; only "
                       "graphs without control flow are differentiated",
                       k, g->node[k]->op_type, G->y);
    for (size_t o = 0; o < g->node[k]->n_output; o++)
      if (*g->node[k]->output[o]) rebind(cx, G, g->node[k]->output[o], NULL);
    if (!onnx_convert_again(cx, g, k)) return false;
  }
  return true;
}

/* Whether e (typed) is a float tensor. */
static bool float_tensor(const Expr *e) {
  return e->ty && e->ty->kind == TY_TENSOR && dtype_is_float(e->ty->u.tensor.dtype);
}

/* After the Gradient pass failed: names the path's node whose Relay call
 * has no gradient rule, when one has none. */
static bool grad_blame(OnnxCx *cx, Grad *G, PtrVec *vals) {
  const Onnx__GraphProto *g = cx->graph;
  for (int k = 0; k < cx->node_index; k++) {
    if (G->first[k] < 0) continue;
    int end = (int)vals->len;
    for (int j = k + 1; j < cx->node_index; j++)
      if (G->first[j] >= 0) {
        end = G->first[j];
        break;
      }
    for (int b = G->first[k]; b < end; b++) {
      const Expr *e = vals->items[b];
      if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP) continue;
      bool fl = false;
      for (int i = 0; i < e->u.call.nargs; i++) fl |= float_tensor(e->u.call.args[i]);
      if (fl && !cx->opts->differentiable(e->u.call.fn->u.op.index))
        return fe_fail(cx,
                       "node #%d '%s' (%s, %s) on the way from xs to '%s' cannot be "
                       "differentiated: `%s` has no gradient",
                       k, g->node[k]->name ? g->node[k]->name : "", g->node[k]->op_type,
                       onnx_node_version(cx, g->node[k]), G->y, e->u.call.fn->u.op.name);
    }
  }
  return fe_fail(cx, "the Gradient pass failed on the graph from xs to '%s'", G->y);
}

/* The function from xs (and zs, and the captured values) to y, built in
 * a chain of its own (left in *vals for grad_blame); NULL after an error. */
static FuncDef *grad_function(OnnxCx *cx, Grad *G, PtrVec *vars, PtrVec *vals) {
  bool *path = grad_path(cx, G);
  PtrVec ov = cx->let_vars, ow = cx->let_vals;
  cx->let_vars = (PtrVec){0}, cx->let_vals = (PtrVec){0};
  bool ok = grad_params(cx, G, path) && grad_convert(cx, G, path);
  FeVal *y = ok ? strmap_get(&cx->vals, G->y) : NULL;
  *vars = cx->let_vars, *vals = cx->let_vals;
  cx->let_vars = ov, cx->let_vals = ow;
  if (!ok) return NULL;
  if (!y || !y->expr)
    return fe_fail(cx, "y '%s' is not a value computed before the node", G->y), NULL;
  if (!fe_tensor_type(y) || !dtype_is_float(fe_dtype(y)))
    return fe_fail(cx, "y '%s' must be a float tensor", G->y), NULL;
  Expr *body = y->expr;
  for (size_t i = vars->len; i-- > 0;)
    body = expr_let(cx->a, vars->items[i], vals->items[i], body, (Span){0});
  Function *fn = ARENA_NEW(cx->a, Function);
  fn->nparams = (int)G->params.len, fn->body = body;
  fn->params = ARENA_ARRAY(cx->a, Var *, G->params.len + 1);
  for (size_t i = 0; i < G->params.len; i++) fn->params[i] = G->params.items[i];
  FuncDef *fd = ARENA_NEW(cx->a, FuncDef);
  const char *func = cx->opts->func ? cx->opts->func : "main";
  fd->name = arena_printf(cx->a, "%s_gradient%zu", func, cx->defs.len / 2 + 1), fd->fn = fn;
  return fd;
}

/* The outputs: field 1 of @f_grad(args..), its first nx fields. */
static bool grad_outputs(OnnxCx *cx, Grad *G, FuncDef *gd) {
  if (!gd->ty || gd->ty->kind != TY_FUNC)
    return fe_fail(cx, "internal: @%s is not typed", gd->name);
  Expr **args = ARENA_ARRAY(cx->a, Expr *, G->args.len + 1);
  for (size_t i = 0; i < G->args.len; i++) args[i] = G->args.items[i];
  Expr *call = expr_call(cx->a, expr_global(cx->a, gd->name, (Span){0}), (int)G->args.len, args,
                         NULL, (Span){0});
  FeVal *r = fe_bind(cx, NULL, call, gd->ty->u.func.ret), *grads = fe_get(cx, r, 1);
  for (int i = 0; i < cx->nout && i < G->nx; i++) cx->out[i] = fe_get(cx, grads, i);
  return true;
}

/* cx->vals as before the node; the name sets freed. */
static void grad_restore(OnnxCx *cx, Grad *G) {
  for (size_t i = G->saved_names.len; i-- > 0;)
    strmap_put(&cx->vals, G->saved_names.items[i], G->saved_vals.items[i]);
  strmap_free(&G->dep), strmap_free(&G->need), strmap_free(&G->seen);
  vec_free(&G->saved_names), vec_free(&G->saved_vals);
}

/* The attributes and inputs: xs (at least one), zs, y; one input per name. */
static bool grad_attrs(OnnxCx *cx, Grad *G) {
  const char **xs, **zs;
  G->nx = attr_names(cx, "xs", &xs), G->nz = attr_names(cx, "zs", &zs);
  G->y = oa_str(cx, "y", NULL);
  if (G->nx < 0 || G->nz < 0 || cx->failed) return false;
  if (G->nx < 1 || !G->y) return fe_fail(cx, "attributes 'xs' and 'y' are required");
  if (cx->nin != G->nx + G->nz)
    return fe_fail(cx, "takes one input per name of xs and zs (%d), got %d", G->nx + G->nz,
                   cx->nin);
  if (cx->nout > G->nx) return fe_fail(cx, "has %d outputs for %d xs", cx->nout, G->nx);
  G->names = ARENA_ARRAY(cx->a, const char *, G->nx + G->nz);
  for (int i = 0; i < G->nx + G->nz; i++) G->names[i] = i < G->nx ? xs[i] : zs[i - G->nx];
  return true;
}

bool onnx_convert_gradient(OnnxCx *cx) {
  if (!cx->opts || !cx->opts->gradient || !cx->opts->differentiable)
    return fe_fail(cx, "this import has no Gradient pass to differentiate with");
  Grad G = {0};
  PtrVec vars = {0}, vals = {0};
  FuncDef *fd = grad_attrs(cx, &G) ? grad_function(cx, &G, &vars, &vals) : NULL;
  grad_restore(cx, &G); /* cx->vals as before the node */
  FuncDef *gd = fd ? cx->opts->gradient(cx->opts->user, cx->m, fd) : NULL;
  if (fd && !gd) grad_blame(cx, &G, &vals);
  bool ok = gd && grad_outputs(cx, &G, gd);
  if (ok) vec_push(&cx->defs, fd), vec_push(&cx->defs, gd);
  vec_free(&vars), vec_free(&vals), vec_free(&G.params), vec_free(&G.args);
  return ok;
}
