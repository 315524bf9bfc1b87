/* graph.c — the graph passes' rewriter (passes/graph_int.h): let chains
 * walked as dataflow edges, bindings replaced by atoms, dead bindings
 * dropped, and typed op calls built through the registry.
 *
 * The rewriter is a Rewriter (passes/rewrite.h) whose pre hook takes over
 * every let chain (walked in a loop, one GraphLink per binding, relinked
 * backwards) and every variable replaced by an atom, and whose post hook
 * types rebuilt nodes and runs the pass's rule. */
#include <pthread.h>
#include <string.h>

#include "ir/walk.h"
#include "passes/graph_int.h"

/* ───────────────────────────── ops ───────────────────────────── */

static const char *const op_names[GOP_COUNT] = {
#define X(e, n) n,
    GRAPH_OPS(X)
#undef X
};

static int op_index[GOP_COUNT];

static void resolve_ops(void) {
  for (int i = 0; i < GOP_COUNT; i++) {
    op_index[i] = ops_lookup(op_names[i]);
    RLY_ASSERT(op_index[i] >= 0);
  }
}

/* Resolved once per process (passes may run on several threads at once). */
int graph_op(GraphOp k) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, resolve_ops);
  return op_index[k];
}

bool graph_is_call(const Expr *e, GraphOp k) {
  return e && e->kind == EX_CALL && e->u.call.fn->kind == EX_OP &&
         e->u.call.fn->u.op.index == graph_op(k);
}

typedef struct Calls {
  const GraphOp *ks;
  int n;
  bool found;
} Calls;

static bool calls_visit(void *ctx, Expr *e) {
  Calls *c = ctx;
  for (int i = 0; i < c->n && e->kind == EX_OP; i++)
    if (e->u.op.index == graph_op(c->ks[i])) c->found = true;
  return !c->found;
}

bool graph_module_calls(const Module *m, const GraphOp *ks, int n) {
  Calls c = {ks, n, false};
  for (int i = 0; i < m->ndefs && !c.found; i++)
    if (m->defs[i].kind == DEF_FUNC) expr_walk(m->defs[i].u.func->fn->body, calls_visit, &c);
  return c.found;
}

/* ───────────────────────────── reports ───────────────────────────── */

bool graph_report(Graph *g, const char *rule, const Expr *before, const Expr *after) {
  g->rewrites++;
  return pass_report(g->pc, rule, before, after, before->span);
}

/* ───────────────────────────── links ───────────────────────────── */

static uintptr_t count_of(const PtrMap *m, const void *key) {
  return (uintptr_t)ptrmap_get(m, key);
}

GraphLink *graph_link(Graph *g, const Expr *e, bool single_use, bool same_fn) {
  if (!e || e->kind != EX_VAR) return NULL;
  GraphLink *l = ptrmap_get(&g->links, e->u.var);
  if (!l || l->dropped) return NULL;
  if (single_use && count_of(&g->uses, l->var) != 1) return NULL;
  if (same_fn && l->depth != g->depth) return NULL;
  return l;
}

Expr *graph_value(Graph *g, Expr *e) {
  GraphLink *l = graph_link(g, e, false, false);
  return l ? l->value : e;
}

typedef struct Movable {
  Graph *g;
  const GraphLink *at;
  bool ok;
} Movable;

/* Plain nodes are walked; a variable must be a parameter or a binding met
 * before m->at (see graph_movable); anything with binders is refused. */
static bool movable_visit(void *ctx, Expr *e) {
  Movable *m = ctx;
  switch (e->kind) {
    case EX_CONST:
    case EX_OP:
    case EX_CALL:
    case EX_TUPLE:
    case EX_PROJ:
      return m->ok;
    case EX_VAR: {
      if (ptrmap_has(&m->g->params, e->u.var)) return true;
      GraphLink *l = ptrmap_get(&m->g->links, e->u.var);
      m->ok &= l && !l->dropped && m->at && l->seq < m->at->seq;
      return false;
    }
    default:
      m->ok = false;
      return false;
  }
}

bool graph_movable(Graph *g, const Expr *e, const GraphLink *at) {
  Movable m = {g, at, true};
  expr_walk((Expr *)e, movable_visit, &m);
  return m.ok;
}

static bool plain_visit(void *ctx, Expr *e) {
  bool *ok = ctx;
  if (e->kind == EX_CONST || e->kind == EX_VAR || e->kind == EX_OP || e->kind == EX_CALL ||
      e->kind == EX_TUPLE || e->kind == EX_PROJ)
    return *ok;
  *ok = false;
  return false;
}

bool graph_plain(const Expr *e) {
  bool ok = true;
  expr_walk((Expr *)e, plain_visit, &ok);
  return ok;
}

Expr *graph_copy(Graph *g, const Expr *e) {
  int n = expr_nchildren(e);
  Expr *r;
  if (!n) {
    r = expr_copy(g->a, e);
    r->ty = NULL;
  } else {
    Expr **kids = ARENA_ARRAY(&g->pc->scratch, Expr *, n);
    for (int i = 0; i < n; i++) kids[i] = graph_copy(g, expr_child(e, i));
    r = expr_rebuild(g->a, (Expr *)e, kids, n);
  }
  r->ty = e->ty;
  return r;
}

/* ───────────────────────────── the rewriter ───────────────────────────── */

static GraphLink *new_link(Graph *g, Expr *orig, Var *var) {
  GraphLink *l = ARENA_NEW(&g->pc->scratch, GraphLink);
  l->var = var, l->orig = orig, l->depth = g->depth, l->seq = ++g->seq;
  ptrmap_put(&g->links, var, l);
  return l;
}

/* A rewritten value that is a let chain the pass built: its bindings
 * become links of the enclosing chain, before l. */
static void splice(Graph *g, GraphLink *l, PtrVec *links) {
  Expr *orig = l->orig->u.let.value;
  while (l->value != orig && l->value->kind == EX_LET) {
    Expr *inner = l->value;
    GraphLink *k = new_link(g, inner, inner->u.let.var);
    k->value = inner->u.let.value;
    k->seq = l->seq, l->seq = ++g->seq; /* k comes first */
    vec_push(links, k);
    l->value = inner->u.let.body;
  }
}

/* A chain's result the pass turned into the variable of its last binding
 * (`%1 = nn.relu(%0); multiply(%1, S)` → `...; %1`), which nothing else
 * used: the binding's value becomes the result, as TVM's text has it. */
static Expr *collapse_tail(Graph *g, const Expr *orig, Expr *tail, PtrVec *links) {
  GraphLink *last = NULL;
  for (size_t i = links->len; i-- > 0 && !last;) {
    GraphLink *l = links->items[i];
    if (!l->dropped) last = l;
  }
  if (!last || orig->kind == EX_VAR || tail->kind != EX_VAR || tail->u.var != last->var ||
      count_of(&g->uses, last->var) != 1)
    return tail;
  last->dropped = true;
  return last->value;
}

/* A let chain: values rewritten in order (each may replace its variable
 * by an atom), then the chain relinked from its end.  A loop: no C stack
 * per binding. */
static Expr *rewrite_chain(Graph *g, Expr *e) {
  PtrVec links = {0};
  Expr *cur = e;
  for (; cur->kind == EX_LET; cur = cur->u.let.body) {
    GraphLink *l = new_link(g, cur, cur->u.let.var);
    l->value = rw_expr(&g->rw, cur->u.let.value);
    splice(g, l, &links);
    Expr *atom = g->hooks->subst ? g->hooks->subst(g, l) : NULL;
    if (atom) ptrmap_put(&g->atoms, l->var, atom), l->dropped = true;
    vec_push(&links, l);
  }
  Expr *tail = collapse_tail(g, cur, rw_expr(&g->rw, cur), &links);
  for (size_t i = links.len; i-- > 0;) {
    GraphLink *l = links.items[i];
    if (l->dropped) continue;
    Expr *o = l->orig;
    bool same = o->kind == EX_LET && o->u.let.var == l->var && o->u.let.value == l->value &&
                o->u.let.body == tail;
    if (!same) {
      Type *ty = tail->ty;
      tail = expr_let(g->a, l->var, l->value, tail, o->span);
      tail->ty = ty;
    } else {
      tail = o;
    }
  }
  vec_free(&links);
  return tail;
}

static bool is_primitive(const Function *f) {
  const AttrValue *v = attrs_get(f->attrs, "Primitive");
  return v && v->kind == AV_INT && v->u.i != 0;
}

/* A fresh copy of an atom at a use (nodes are not shared between
 * positions; a tuple of constants is copied with its fields). */
static Expr *atom_copy(Graph *g, const Expr *atom, Span sp) {
  Expr *c = graph_copy(g, atom);
  expr_set_span(c, sp);
  return c;
}

/* Before a node's children: let chains are walked here, variables
 * replaced by atoms are copied in, and function bodies count a level of
 * nesting (fused Primitive functions are skipped); nothing after a stop. */
static Expr *graph_pre(Rewriter *rw, Expr *e) {
  Graph *g = rw->user;
  if (g->pc->stopped) return e;
  switch (e->kind) {
    case EX_LET:
      return rewrite_chain(g, e);
    case EX_VAR: {
      Expr *atom = ptrmap_get(&g->atoms, e->u.var);
      return atom ? atom_copy(g, atom, e->span) : NULL;
    }
    case EX_FN:
      /* fused groups (FuseOps) are left as they are, as TVM does */
      if (is_primitive(e->u.fn)) return e;
      g->depth++;
      return NULL;
    default:
      return NULL;
  }
}

static Expr *graph_post(Rewriter *rw, Expr *e, Expr *r) {
  Graph *g = rw->user;
  if (e->kind == EX_FN) {
    g->depth--;
    return r;
  }
  if (r != e && !r->ty) r->ty = e->ty;
  if (g->pc->stopped || !g->hooks->rule) return r;
  return g->hooks->rule(g, e, r);
}

/* ───────────────────────────── dead bindings ───────────────────────────── */

typedef struct Dce {
  Rewriter rw;
  const Module *m;
  PtrMap *before; /* uses in the input */
  PtrMap now;     /* uses in the rewritten body, decreased as bindings go */
} Dce;

static bool uncount_visit(void *ctx, Expr *e) {
  Dce *d = ctx;
  if (e->kind == EX_VAR) {
    uintptr_t n = count_of(&d->now, e->u.var);
    if (n) ptrmap_put(&d->now, e->u.var, (void *)(n - 1));
  }
  return true;
}

static bool dead(Dce *d, const Expr *let) {
  Var *v = let->u.let.var;
  return count_of(d->before, v) > 0 && count_of(&d->now, v) == 0 &&
         rw_is_pure(d->m, let->u.let.value);
}

/* A chain from its end: a binding nothing uses any more goes, and the
 * uses in its value with it, so the bindings it alone used go too. */
static Expr *dce_chain(Dce *d, Expr *e) {
  PtrVec lets = {0};
  Expr *cur = e;
  for (; cur->kind == EX_LET; cur = cur->u.let.body) vec_push(&lets, cur);
  Expr *tail = rw_expr(&d->rw, cur);
  for (size_t i = lets.len; i-- > 0;) {
    Expr *o = lets.items[i];
    if (dead(d, o)) {
      expr_walk(o->u.let.value, uncount_visit, d);
      continue;
    }
    Expr *value = rw_expr(&d->rw, o->u.let.value);
    if (value != o->u.let.value || tail != o->u.let.body) {
      Type *ty = tail->ty;
      o = expr_let(d->rw.a, o->u.let.var, value, tail, o->span);
      o->ty = ty;
    }
    tail = o;
  }
  vec_free(&lets);
  return tail;
}

static Expr *dce_pre(Rewriter *rw, Expr *e) {
  Dce *d = rw->user;
  if (e->kind == EX_LET) return dce_chain(d, e);
  if (e->kind == EX_FN && is_primitive(e->u.fn)) return e;
  return NULL;
}

static Function *drop_dead(Graph *g, Function *fn) {
  Dce d = {.rw = {.a = g->a, .pre = dce_pre}, .m = g->pc->in, .before = &g->uses};
  d.rw.user = &d;
  rw_count_uses(fn->body, &d.now);
  Function *r = rw_function(&d.rw, fn);
  ptrmap_free(&d.now);
  return r;
}

/* ───────────────────────────── the pass ───────────────────────────── */

static Function *rewrite_def(Graph *g, const FuncDef *fd) {
  Function *fn = fd->fn;
  rw_count_uses(fn->body, &g->uses);
  for (int i = 0; i < fn->nparams; i++) ptrmap_put(&g->params, fn->params[i], (void *)1);
  int before = g->rewrites;
  Function *r = rw_function(&g->rw, fn);
  if (g->rewrites != before && !g->pc->stopped) r = drop_dead(g, r);
  ptrmap_free(&g->links);
  ptrmap_free(&g->uses);
  ptrmap_free(&g->atoms);
  ptrmap_free(&g->params);
  return r;
}

/* Each function definition in scope rewritten on its own (links, uses
 * and substitutions are per definition). */
Module *graph_pass(PassCtx *pc, Module *in, const GraphHooks *hooks, void *user) {
  Module *out = module_copy(in, pc->a);
  Graph g = {.rw = {.a = pc->a, .pre = graph_pre, .post = graph_post},
             .pc = pc,
             .a = pc->a,
             .hooks = hooks,
             .user = user};
  g.rw.user = &g;
  for (int i = 0; i < in->ndefs && !pc->stopped; i++) {
    if (in->defs[i].kind != DEF_FUNC || !pass_in_scope(pc, &in->defs[i])) continue;
    FuncDef *fd = in->defs[i].u.func;
    pass_enter_def(pc, fd);
    g.depth = 0;
    Function *f = rewrite_def(&g, fd);
    if (f != fd->fn) pass_replace_def(pc, out, fd, f);
  }
  return out;
}

/* ───────────────────────────── building ───────────────────────────── */

Type *graph_tensor_type(Arena *a, const Tensor *t) {
  Dim *dims = ARENA_ARRAY(a, Dim, t->ndim ? t->ndim : 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = (Dim){.kind = DIM_CONST, .value = t->shape[i]};
  return type_tensor(a, t->dtype, t->ndim, dims, (Span){0});
}

Expr *graph_const(Graph *g, Tensor *t, Span sp) {
  Expr *c = expr_const(g->a, t, sp);
  c->ty = graph_tensor_type(g->a, t);
  return c;
}

Expr *graph_scalar(Graph *g, DType dt, double v, Span sp) {
  Tensor *t = tensor_new(g->a, dt, 0, NULL);
  tensor_set_f64(t, 0, v);
  return graph_const(g, t, sp);
}

/* The call's type from the op's relation, or NULL. */
static Type *infer(Graph *g, const Expr *call) {
  const OpDef *def = ops_get(call->u.call.fn->u.op.index);
  int n = call->u.call.nargs;
  Type **tys = ARENA_ARRAY(&g->pc->scratch, Type *, n ? n : 1);
  const Tensor **vals = ARENA_ARRAY(&g->pc->scratch, const Tensor *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    Expr *x = call->u.call.args[i];
    if (!x->ty) return NULL;
    tys[i] = x->ty;
    vals[i] = x->kind == EX_CONST ? x->u.konst.value : NULL;
  }
  RelCtx rc;
  memset(&rc, 0, sizeof rc);
  rc.arena = g->a, rc.mod = g->pc->in, rc.call = call, rc.op_name = def->name, rc.op = def;
  return def->rel(&rc, n, tys, vals, call->u.call.attrs);
}

Expr *graph_call_index(Graph *g, int op, int n, Expr **args, Attrs *attrs, Span sp) {
  Expr **copy = ARENA_ARRAY(g->a, Expr *, n ? n : 1);
  memcpy(copy, args, sizeof(Expr *) * (size_t)n);
  Expr *c = expr_call(g->a, ops_expr(g->a, op, sp), n, copy, attrs, sp);
  c->ty = infer(g, c);
  return c;
}

Expr *graph_call(Graph *g, GraphOp k, int n, Expr **args, Attrs *attrs, Span sp) {
  return graph_call_index(g, graph_op(k), n, args, attrs, sp);
}

Expr *graph_call1(Graph *g, GraphOp k, Expr *x, Attrs *attrs, Span sp) {
  return graph_call(g, k, 1, &x, attrs, sp);
}

Expr *graph_call2(Graph *g, GraphOp k, Expr *x, Expr *y, Span sp) {
  Expr *args[2] = {x, y};
  return graph_call(g, k, 2, args, NULL, sp);
}

Attrs *graph_attrs(Graph *g, int n) { return attrs_new(g->a, n); }

void graph_attr_int(Graph *g, Attrs *at, int i, const char *key, int64_t v) {
  at->keys[i] = key, at->vals[i] = attr_int(g->a, v, DT_INT32);
}

void graph_attr_bool(Graph *g, Attrs *at, int i, const char *key, bool v) {
  at->keys[i] = key, at->vals[i] = attr_bool(g->a, v);
}

void graph_attr_ints(Graph *g, Attrs *at, int i, const char *key, int n, const int64_t *v) {
  AttrValue *l = ARENA_NEW(g->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(g->a, AttrValue *, n ? n : 1);
  for (int k = 0; k < n; k++) l->u.list.items[k] = attr_int(g->a, v[k], DT_INT32);
  at->keys[i] = key, at->vals[i] = l;
}

Expr *graph_expand_to_axis(Graph *g, Expr *x, int axis, int ndim, Span sp) {
  int k = ndim - 1 - axis;
  if (k <= 0) return x;
  Attrs *at = graph_attrs(g, 2);
  graph_attr_int(g, at, 0, "axis", 1);
  graph_attr_int(g, at, 1, "num_newaxis", k);
  return graph_call1(g, GOP_EXPAND_DIMS, x, at, sp);
}

Expr *graph_bind(Graph *g, RwBlock *b, Expr *value, Span sp) {
  Var *v = rw_graph_var(g->a, sp);
  rw_block_bind(b, v, value, sp);
  Expr *x = expr_var(g->a, v, sp);
  x->ty = value->ty;
  return x;
}

/* ───────────────────────────── shapes ───────────────────────────── */

const Type *graph_tensor_of(const Expr *e) {
  return e && e->ty && e->ty->kind == TY_TENSOR ? e->ty : NULL;
}

bool graph_static(const Type *t) {
  if (!t || t->kind != TY_TENSOR) return false;
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.dims[i].kind != DIM_CONST) return false;
  return true;
}

int64_t graph_numel(const Type *t) {
  if (!graph_static(t)) return -1;
  int64_t n = 1;
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    int64_t d = t->u.tensor.dims[i].value;
    if (d < 0 || (d && n > INT64_MAX / d)) return -1; /* an absurd shape: not a static count */
    n *= d;
  }
  return n;
}

static bool dim_is(Dim d, int64_t v) { return d.kind == DIM_CONST && d.value == v; }

static bool dim_same(Dim a, Dim b) {
  if (a.kind != b.kind) return false;
  if (a.kind == DIM_CONST) return a.value == b.value;
  return a.kind == DIM_VAR && a.name && b.name && strcmp(a.name, b.name) == 0;
}

bool graph_along_axis(const Type *s, const Type *x, int axis, int64_t *c) {
  if (!s || !x || s->kind != TY_TENSOR || x->kind != TY_TENSOR) return false;
  int ns = s->u.tensor.ndim, nx = x->u.tensor.ndim;
  if (ns > nx || axis < 0 || axis >= nx) return false;
  *c = 1;
  for (int j = 0; j < ns; j++) {
    int i = nx - ns + j;
    Dim d = s->u.tensor.dims[j];
    if (dim_is(d, 1)) continue;
    if (i != axis || !dim_same(d, x->u.tensor.dims[i]) || d.kind != DIM_CONST) return false;
    *c = d.value;
  }
  return true;
}
