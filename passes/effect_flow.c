/* effect_flow.c — EffectToState's analysis (see effect_int.h): state
 * globals, aliases, flow classes of function values, unit masks to a fixed
 * point, and the `touches` predicate the rewrite uses.
 *
 * Invariants: flow() recurses on expression nesting only (let chains are a
 * loop); node indices are stable (the node array grows, so no FlowNode
 * pointer is held across a call that may add nodes). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/effect_int.h"

/* ───────────────────────────── nodes ───────────────────────────── */

static int fresh(Eff *E) {
  if (E->nnodes == E->capnodes) {
    E->capnodes = E->capnodes ? E->capnodes * 2 : 256;
    E->nodes = realloc(E->nodes, (size_t)E->capnodes * sizeof *E->nodes);
    if (!E->nodes) rly_oom();
  }
  FlowNode *n = &E->nodes[E->nnodes];
  memset(n, 0, sizeof *n);
  n->parent = E->nnodes, n->ret = -1;
  return E->nnodes++;
}

int eff_find(Eff *E, int n) {
  int r = n;
  while (E->nodes[r].parent != r) r = E->nodes[r].parent;
  while (E->nodes[n].parent != r) {
    int next = E->nodes[n].parent;
    E->nodes[n].parent = r;
    n = next;
  }
  return r;
}

uint64_t eff_node_mask(Eff *E, int n) { return n < 0 ? 0 : E->nodes[eff_find(E, n)].mask; }

static void set_param(Eff *E, int n, int i, int child) {
  FlowNode *x = &E->nodes[n];
  if (i >= x->nparams) {
    x->params = realloc(x->params, sizeof(int) * (size_t)(i + 1));
    if (!x->params) rly_oom();
    for (int k = x->nparams; k <= i; k++) x->params[k] = -1;
    x->nparams = i + 1;
  }
  x->params[i] = child;
}

int eff_child_param(Eff *E, int n, int i) {
  if (n < 0) return -1;
  n = eff_find(E, n);
  return i < E->nodes[n].nparams ? E->nodes[n].params[i] : -1;
}

int eff_child_ret(Eff *E, int n) { return n < 0 ? -1 : E->nodes[eff_find(E, n)].ret; }

static void unify(Eff *E, int a, int b);

/* The child for parameter i of n's class, created on demand. */
static int param_of(Eff *E, int n, int i) {
  n = eff_find(E, n);
  int c = eff_child_param(E, n, i);
  if (c >= 0) return c;
  c = fresh(E);
  set_param(E, n, i, c);
  return c;
}

static int ret_of(Eff *E, int n) {
  n = eff_find(E, n);
  if (E->nodes[n].ret < 0) {
    int c = fresh(E);
    E->nodes[n].ret = c;
  }
  return E->nodes[n].ret;
}

static void merge_child(Eff *E, int a, int i, int cb) {
  int ca = eff_child_param(E, a, i);
  if (ca >= 0)
    unify(E, ca, cb);
  else
    set_param(E, eff_find(E, a), i, cb);
}

/* Union of two flow classes: masks are joined, opaqueness spreads (keeping
 * the first reason for the message), and parameter and result children are
 * unified in turn, since functions that meet must share one convention. */
static void unify(Eff *E, int a, int b) {
  if (a < 0 || b < 0) return;
  a = eff_find(E, a), b = eff_find(E, b);
  if (a == b) return;
  E->nodes[b].parent = a;
  E->nodes[a].mask |= E->nodes[b].mask;
  if (E->nodes[b].is_opaque && !E->nodes[a].is_opaque) {
    E->nodes[a].is_opaque = true;
    E->nodes[a].opaque = E->nodes[b].opaque, E->nodes[a].opaque_what = E->nodes[b].opaque_what;
  }
  for (int i = 0; i < E->nodes[b].nparams; i++) {
    int cb = E->nodes[b].params[i];
    if (cb >= 0) merge_child(E, a, i, cb);
  }
  int rb = E->nodes[b].ret;
  if (rb >= 0) {
    int ra = E->nodes[eff_find(E, a)].ret;
    if (ra >= 0)
      unify(E, ra, rb);
    else
      E->nodes[eff_find(E, a)].ret = rb;
  }
}

static void opaque(Eff *E, int n, Span sp, const char *what) {
  if (n < 0) return;
  n = eff_find(E, n);
  if (E->nodes[n].is_opaque) return;
  E->nodes[n].is_opaque = true, E->nodes[n].opaque = sp, E->nodes[n].opaque_what = what;
}

static int opaque_fresh(Eff *E, Span sp, const char *what) {
  int n = fresh(E);
  opaque(E, n, sp, what);
  return n;
}

static int var_node(Eff *E, Var *v) {
  intptr_t k = (intptr_t)ptrmap_get(&E->var_node, v);
  if (k > 0) return (int)k - 1;
  int n = fresh(E);
  ptrmap_put(&E->var_node, v, (void *)(intptr_t)(n + 1));
  return n;
}

int eff_var_node_of(Eff *E, const Var *v) {
  intptr_t k = (intptr_t)ptrmap_get(&E->var_node, v);
  return k > 0 ? (int)k - 1 : -1;
}

/* ───────────────────────────── units ───────────────────────────── */

static int new_unit(Eff *E, const FuncDef *def, Expr *fn, int node) {
  if (E->nunits == E->capunits) {
    E->capunits = E->capunits ? E->capunits * 2 : 64;
    E->units = realloc(E->units, (size_t)E->capunits * sizeof *E->units);
    E->def_ret = realloc(E->def_ret, (size_t)E->capunits * sizeof *E->def_ret);
    if (!E->units || !E->def_ret) rly_oom();
  }
  Unit *u = &E->units[E->nunits];
  memset(u, 0, sizeof *u);
  u->def = def, u->fn = fn, u->node = node;
  E->def_ret[E->nunits] = -1;
  return E->nunits++;
}

const Unit *eff_def_unit(Eff *E, const char *name) {
  intptr_t k = (intptr_t)strmap_get(&E->def_unit, name);
  return k ? &E->units[k - 1] : NULL;
}

const Unit *eff_fn_unit(Eff *E, const Expr *fn) {
  intptr_t k = (intptr_t)ptrmap_get(&E->fn_unit, fn);
  return k ? &E->units[k - 1] : NULL;
}

int eff_global_index(const Eff *E, const char *name) {
  for (int i = 0; i < E->nglobals; i++)
    if (strcmp(E->globals[i]->name, name) == 0) return i;
  return -1;
}

int eff_ref_target(Eff *E, const Expr *r) {
  if (r->kind == EX_VAR) return (int)(intptr_t)ptrmap_get(&E->alias, r->u.var) - 1;
  if (r->kind == EX_REF_NEW && r->u.ref_new.init->kind == EX_GLOBAL)
    return eff_global_index(E, r->u.ref_new.init->u.global.name);
  return -1;
}

static void fail(Eff *E, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fail(Eff *E, Span sp, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  diag_error(E->pc->d, sp, "%s", buf);
  E->failed = true;
}

/* ───────────────────────────── the flow walk ───────────────────────────── */

static int flow(Eff *E, int u, Expr *e);

static int flow_fn(Eff *E, Expr *e) {
  int n = fresh(E);
  int u = new_unit(E, NULL, e, n);
  ptrmap_put(&E->fn_unit, e, (void *)(intptr_t)(u + 1));
  Function *f = e->u.fn;
  for (int i = 0; i < f->nparams; i++) set_param(E, n, i, var_node(E, f->params[i]));
  int r = flow(E, u, f->body);
  unify(E, ret_of(E, n), r);
  return n;
}

/* A reference operand of ^ or :=: an alias is an effect, not a value. */
static int flow_ref_target(Eff *E, int u, Expr *r) {
  int g = eff_ref_target(E, r);
  if (g >= 0) {
    E->units[u].direct |= 1ull << g;
    return -1;
  }
  return flow(E, u, r);
}

static void flow_sinks(Eff *E, int u, int n, Expr **xs, const char *what) {
  for (int i = 0; i < n; i++) opaque(E, flow(E, u, xs[i]), xs[i]->span, what);
}

static int flow_call_global(Eff *E, int u, Expr *e, const FuncDef *fd) {
  vec_push(&E->units[u].callee_defs, (void *)fd);
  int cu = (int)(eff_def_unit(E, fd->name) - E->units); /* units may move below */
  for (int i = 0; i < e->u.call.nargs; i++) {
    int a = flow(E, u, e->u.call.args[i]);
    if (i < fd->fn->nparams) unify(E, a, var_node(E, fd->fn->params[i]));
  }
  return E->def_ret[cu];
}

/* A call: function values passed to ops or constructors escape (opaque); a
 * call of a def by name goes through its unit; any other callee's class is
 * recorded for the rewrite and its parameters unified with the arguments. */
static int flow_call(Eff *E, int u, Expr *e) {
  Expr *fn = e->u.call.fn;
  if (fn->kind == EX_OP || fn->kind == EX_CTOR) {
    flow_sinks(E, u, e->u.call.nargs, e->u.call.args,
               fn->kind == EX_OP ? "passed to an operator" : "stored in a constructor");
    return -1;
  }
  if (fn->kind == EX_GLOBAL) {
    const FuncDef *fd = module_func(E->in, fn->u.global.name);
    if (fd) return flow_call_global(E, u, e, fd);
  }
  int c = flow(E, u, fn);
  if (c < 0) c = opaque_fresh(E, fn->span, "called from an unknown source");
  ptrmap_put(&E->call_node, e, (void *)(intptr_t)(c + 1));
  vec_push(&E->units[u].callee_nodes, (void *)(intptr_t)(c + 1));
  for (int i = 0; i < e->u.call.nargs; i++)
    unify(E, flow(E, u, e->u.call.args[i]), param_of(E, c, i));
  return ret_of(E, c);
}

static void pat_opaque(void *ctx, Var *v) {
  Eff *E = ctx;
  opaque(E, var_node(E, v), v->span, "bound by a match pattern");
}

static int flow_match(Eff *E, int u, Expr *e) {
  flow(E, u, e->u.match.scrut);
  int r = -1;
  for (int i = 0; i < e->u.match.n; i++) {
    pattern_vars(e->u.match.clauses[i].pat, pat_opaque, E);
    int b = flow(E, u, e->u.match.clauses[i].body);
    if (r < 0)
      r = b;
    else
      unify(E, r, b);
  }
  return r;
}

/* `let %v = value`: aliases are recorded, other values unified with %v. */
static void flow_binding(Eff *E, int u, Var *v, Expr *value) {
  int g = eff_ref_target(E, value);
  if (value->kind == EX_REF_NEW && g >= 0) {
    ptrmap_put(&E->alias, v, (void *)(intptr_t)(g + 1));
    E->units[u].direct |= 1ull << g;
    return;
  }
  if (value->kind == EX_VAR && g >= 0) {
    ptrmap_put(&E->alias, v, (void *)(intptr_t)(g + 1));
    return;
  }
  int n = flow(E, u, value);
  if (n >= 0)
    unify(E, var_node(E, v), n);
  else if (!ptrmap_has(&E->var_node, v))
    ptrmap_put(&E->var_node, v, (void *)(intptr_t)-1);
}

static int flow_chain(Eff *E, int u, Expr *e) {
  while (e->kind == EX_LET || e->kind == EX_FREE_VAR) {
    if (e->kind == EX_LET) {
      flow_binding(E, u, e->u.let.var, e->u.let.value);
      e = e->u.let.body;
    } else {
      Var *v = e->u.free_var.var;
      opaque(E, var_node(E, v), v->span, "a free variable");
      e = e->u.free_var.body;
    }
  }
  return flow(E, u, e);
}

static int flow_var(Eff *E, Expr *e) {
  Var *v = e->u.var;
  int g = (int)(intptr_t)ptrmap_get(&E->alias, v) - 1;
  if (g >= 0) {
    fail(E, e->span,
         "EffectToState: %%%s is a reference to @%s; it can only be read (%%r^), written "
         "(%%r := v) or captured here, not passed on as a value",
         var_named(v) ? v->name : "_", E->globals[g]->name);
    return -1;
  }
  intptr_t k = (intptr_t)ptrmap_get(&E->var_node, v);
  if (k == -1) return -1;
  return var_node(E, v);
}

static int flow_global(Eff *E, int u, Expr *e) {
  int g = eff_global_index(E, e->u.global.name);
  if (g >= 0) {
    E->units[u].direct |= 1ull << g;
    return -1;
  }
  const Unit *cu = eff_def_unit(E, e->u.global.name);
  return cu ? cu->node : -1;
}

/* The flow class of the function value e evaluates to (-1: not a function
 * value), recording on the way where values escape and which aliases of a
 * state global are used how.  u is the unit whose body contains e. */
static int flow(Eff *E, int u, Expr *e) {
  switch (e->kind) {
    case EX_CONST:
      return -1;
    case EX_VAR:
      return flow_var(E, e);
    case EX_GLOBAL:
      return flow_global(E, u, e);
    case EX_OP:
    case EX_CTOR:
      return opaque_fresh(E, e->span, "an operator or constructor used as a value");
    case EX_CALL:
      return flow_call(E, u, e);
    case EX_TUPLE:
      flow_sinks(E, u, e->u.tuple.n, e->u.tuple.fields, "stored in a tuple");
      return -1;
    case EX_PROJ:
      flow(E, u, e->u.proj.tuple);
      return opaque_fresh(E, e->span, "taken out of a tuple");
    case EX_LET:
    case EX_FREE_VAR:
      return flow_chain(E, u, e);
    case EX_FN:
      return flow_fn(E, e);
    case EX_IF: {
      flow(E, u, e->u.if_.cond);
      int t = flow(E, u, e->u.if_.then_), f = flow(E, u, e->u.if_.else_);
      unify(E, t, f);
      return t >= 0 ? t : f;
    }
    case EX_MATCH:
      return flow_match(E, u, e);
    case EX_REF_NEW:
      if (eff_ref_target(E, e) >= 0) {
        fail(E, e->span,
             "EffectToState: ref(@%s) must be bound by a let, or read or written at once",
             e->u.ref_new.init->u.global.name);
        return -1;
      }
      flow_sinks(E, u, 1, &e->u.ref_new.init, "stored in a reference");
      return -1;
    case EX_REF_READ:
      if (eff_ref_target(E, e->u.ref_read.ref) >= 0)
        return flow_ref_target(E, u, e->u.ref_read.ref);
      flow(E, u, e->u.ref_read.ref);
      return opaque_fresh(E, e->span, "read from a reference");
    case EX_REF_WRITE:
      flow_ref_target(E, u, e->u.ref_write.ref);
      flow_sinks(E, u, 1, &e->u.ref_write.value, "stored in a reference");
      return -1;
    case EX_DATAFLOW:
      return flow(E, u, e->u.dataflow.body);
  }
  RLY_UNREACHABLE();
}

/* ───────────────────────────── driver ───────────────────────────── */

static bool collect_globals(Eff *E) {
  for (int i = 0; i < E->in->ndefs; i++) {
    const Def *d = &E->in->defs[i];
    if (d->kind != DEF_GLOBAL) continue;
    if (E->nglobals == EFF_MAX_GLOBALS) {
      fail(E, d->u.global->span, "EffectToState: more than %d state globals (at @%s)",
           EFF_MAX_GLOBALS, d->u.global->name);
      return false;
    }
    if (d->u.global->type && d->u.global->type->kind == TY_FUNC)
      fail(E, d->u.global->span, "EffectToState: state global @%s holds a function",
           d->u.global->name);
    E->globals[E->nglobals++] = d->u.global;
  }
  return !E->failed;
}

static void make_def_units(Eff *E) {
  for (int i = 0; i < E->in->ndefs; i++) {
    const Def *d = &E->in->defs[i];
    if (d->kind != DEF_FUNC) continue;
    const FuncDef *f = d->u.func;
    int n = fresh(E);
    int u = new_unit(E, f, NULL, n);
    strmap_put(&E->def_unit, f->name, (void *)(intptr_t)(u + 1));
    for (int k = 0; k < f->fn->nparams; k++) set_param(E, n, k, var_node(E, f->fn->params[k]));
    E->def_ret[u] = ret_of(E, n);
  }
}

static bool fixpoint_step(Eff *E, Unit *u) {
  bool changed = false;
  uint64_t m = u->direct;
  for (size_t k = 0; k < u->callee_defs.len; k++)
    m |= eff_def_unit(E, ((const FuncDef *)u->callee_defs.items[k])->name)->mask;
  for (size_t k = 0; k < u->callee_nodes.len; k++)
    m |= eff_node_mask(E, (int)(intptr_t)u->callee_nodes.items[k] - 1);
  if (m & ~u->mask) u->mask |= m, changed = true;
  int r = eff_find(E, u->node);
  if (u->mask & ~E->nodes[r].mask) E->nodes[r].mask |= u->mask, changed = true;
  return changed;
}

static void check_opaque(Eff *E) {
  for (int i = 0; i < E->nnodes; i++) {
    FlowNode *n = &E->nodes[i];
    if (n->parent != i || !n->mask || !n->is_opaque) continue;
    diag_error(E->pc->d, n->opaque, "EffectToState: a function value that uses @%s is %s here",
               E->globals[__builtin_ctzll(n->mask)]->name, n->opaque_what);
    diag_hint(E->pc->d,
              "the pass threads the state only through calls it can follow: defs, "
              "let-bound closures, parameters, results and branches");
    E->failed = true;
  }
}

bool eff_analyze(Eff *E) {
  if (!collect_globals(E)) return false;
  make_def_units(E);
  int ndefs = E->nunits;
  for (int i = 0; i < ndefs; i++) {
    int r = flow(E, i, E->units[i].def->fn->body);
    unify(E, E->def_ret[i], r);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < E->nunits; i++) changed |= fixpoint_step(E, &E->units[i]);
  }
  check_opaque(E);
  return !E->failed;
}

/* Frees what the analysis malloc'ed; the rewrite's arena nodes stay. */
void eff_free(Eff *E) {
  for (int i = 0; i < E->nnodes; i++) free(E->nodes[i].params);
  for (int i = 0; i < E->nunits; i++) {
    vec_free(&E->units[i].callee_defs);
    vec_free(&E->units[i].callee_nodes);
  }
  free(E->nodes);
  free(E->units);
  free(E->def_ret);
  strmap_free(&E->def_unit);
  ptrmap_free(&E->var_node);
  ptrmap_free(&E->fn_unit);
  ptrmap_free(&E->call_node);
  ptrmap_free(&E->alias);
  ptrmap_free(&E->touch);
  ptrmap_free(&E->rw.subst);
  ptrmap_free(&E->uses);
  ptrmap_free(&E->handed);
}

/* ───────────────────────────── touches ───────────────────────────── */

uint64_t eff_callee_mask(Eff *E, const Expr *call) {
  const Expr *fn = call->u.call.fn;
  if (fn->kind == EX_GLOBAL) {
    const Unit *u = eff_def_unit(E, fn->u.global.name);
    if (u) return u->mask;
  }
  intptr_t k = (intptr_t)ptrmap_get(&E->call_node, call);
  return k ? eff_node_mask(E, (int)k - 1) : 0;
}

static bool touches_self(Eff *E, const Expr *e) {
  switch (e->kind) {
    case EX_GLOBAL:
      return eff_global_index(E, e->u.global.name) >= 0;
    case EX_REF_NEW:
      return eff_ref_target(E, e) >= 0;
    case EX_REF_READ:
      return eff_ref_target(E, e->u.ref_read.ref) >= 0;
    case EX_REF_WRITE:
      return eff_ref_target(E, e->u.ref_write.ref) >= 0;
    case EX_CALL:
      return eff_callee_mask(E, e) != 0;
    default:
      return false;
  }
}

static bool touches_kids(Eff *E, Expr *e) {
  bool t = false;
  for (int i = 0; i < expr_nchildren(e) && !t; i++) t = eff_touches(E, expr_child(e, i));
  return t;
}

/* A let chain: computed from its end, so no recursion on its length. */
static bool touches_chain(Eff *E, Expr *e) {
  PtrVec chain = {0};
  Expr *cur = e;
  while ((cur->kind == EX_LET || cur->kind == EX_FREE_VAR) && !ptrmap_has(&E->touch, cur)) {
    vec_push(&chain, cur);
    cur = cur->kind == EX_LET ? cur->u.let.body : cur->u.free_var.body;
  }
  bool t = eff_touches(E, cur);
  for (size_t i = chain.len; i > 0; i--) {
    Expr *l = chain.items[i - 1];
    if (l->kind == EX_LET) t = t || eff_touches(E, l->u.let.value);
    ptrmap_put(&E->touch, l, (void *)(uintptr_t)(t ? 2 : 1));
  }
  vec_free(&chain);
  return t;
}

bool eff_touches(Eff *E, Expr *e) {
  uintptr_t k = (uintptr_t)ptrmap_get(&E->touch, e);
  if (k) return k == 2;
  bool t;
  if (e->kind == EX_FN || e->kind == EX_VAR || e->kind == EX_CONST)
    t = false;
  else if (e->kind == EX_LET || e->kind == EX_FREE_VAR)
    return touches_chain(E, e);
  else
    t = touches_self(E, e) || touches_kids(E, e);
  ptrmap_put(&E->touch, e, (void *)(uintptr_t)(t ? 2 : 1));
  return t;
}
