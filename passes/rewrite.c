/* rewrite.c — the pass toolkit of passes/rewrite.h: pointer map, use
 * counts, rebuilding rewriter, let-block builder (children come from
 * ir/walk.h).
 *
 * Invariants: rw_expr shares every unchanged subtree (same pointer back);
 * let / free_var chains are processed by loops (forward to rewrite values in
 * evaluation order, backward to rebuild), so chain length costs no C stack. */
#include "passes/rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

/* ───────────────────────────── pointer map ───────────────────────────── */

/* ───────────────────────────── uses ───────────────────────────── */

static bool count_visit(void *ctx, Expr *e) {
  if (e->kind == EX_VAR) {
    PtrMap *m = ctx;
    uintptr_t n = (uintptr_t)ptrmap_get(m, e->u.var);
    ptrmap_put(m, e->u.var, (void *)(n + 1));
  }
  return true;
}

void rw_count_uses(Expr *root, PtrMap *counts) { expr_walk(root, count_visit, counts); }

/* ───────────────────────────── rebuilding ───────────────────────────── */

static Expr *copy_node(Arena *a, const Expr *e) {
  Expr *r = expr_copy(a, e);
  r->ty = NULL;
  return r;
}

Function *rw_function_with(Arena *a, const Function *f, int nparams, Var **params, Type *ret,
                           Expr *body) {
  Function *g = ARENA_NEW(a, Function);
  *g = *f;
  g->nparams = nparams;
  g->params = nparams ? arena_memdup(a, params, sizeof(Var *) * (size_t)nparams) : NULL;
  g->ret = ret;
  g->body = body;
  return g;
}

/* ───────────────────────────── the rewriter ───────────────────────────── */

static Var *bind_var(Rewriter *rw, Var *v) {
  if (!rw->bind) return v;
  Var *n = rw->bind(rw, v);
  if (n != v) ptrmap_put(&rw->subst, v, expr_var(rw->a, n, v->span));
  return n;
}

Function *rw_function(Rewriter *rw, Function *f) {
  Var *small[8];
  Var **ps = f->nparams <= 8 ? small : ARENA_ARRAY(rw->a, Var *, f->nparams);
  bool changed = false;
  for (int i = 0; i < f->nparams; i++) {
    ps[i] = bind_var(rw, f->params[i]);
    changed |= ps[i] != f->params[i];
  }
  Expr *body = rw_expr(rw, f->body);
  if (!changed && body == f->body) return f;
  return rw_function_with(rw->a, f, f->nparams, ps, f->ret, body);
}

static Expr *rw_node(Rewriter *rw, Expr *e);

/* One link of a let / free_var chain after its value was rewritten. */
typedef struct Link {
  Expr *orig;
  Var *var;
  Expr *value;
} Link;

static Expr *relink(Rewriter *rw, const Link *l, Expr *body) {
  Expr *e = l->orig, *r;
  if (e->kind == EX_LET) {
    bool same = l->var == e->u.let.var && l->value == e->u.let.value && body == e->u.let.body;
    r = same ? e : expr_let(rw->a, l->var, l->value, body, e->span);
  } else {
    bool same = l->var == e->u.free_var.var && body == e->u.free_var.body;
    r = same ? e : copy_node(rw->a, e);
    if (!same) r->u.free_var.var = l->var, r->u.free_var.body = body;
  }
  return rw->post ? rw->post(rw, e, r) : r;
}

/* A let / free_var chain: forward, binders and values are rewritten in
 * evaluation order; backward, the chain is relinked.  A pre hook that takes
 * over a link ends the chain there.  A loop, so no C stack per binding. */
static Expr *rw_chain(Rewriter *rw, Expr *e) {
  Link *links = NULL;
  size_t n = 0, cap = 0;
  Expr *cur = e, *tail = NULL;
  while (cur->kind == EX_LET || cur->kind == EX_FREE_VAR) {
    Expr *r = rw->pre ? rw->pre(rw, cur) : NULL;
    if (r) {
      tail = r;
      break;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      links = realloc(links, cap * sizeof *links);
      if (!links) rly_oom();
    }
    Link *l = &links[n++];
    l->orig = cur;
    if (cur->kind == EX_LET) {
      l->var = bind_var(rw, cur->u.let.var);
      l->value = rw_expr(rw, cur->u.let.value);
      cur = cur->u.let.body;
    } else {
      l->var = bind_var(rw, cur->u.free_var.var);
      l->value = NULL;
      cur = cur->u.free_var.body;
    }
  }
  if (!tail) tail = rw_node(rw, cur);
  for (size_t i = n; i > 0; i--) tail = relink(rw, &links[i - 1], tail);
  free(links);
  return tail;
}

static Expr *rw_kids(Rewriter *rw, Expr *e) {
  if (e->kind == EX_FN) {
    Function *f = rw_function(rw, e->u.fn);
    if (f == e->u.fn) return e;
    Expr *r = copy_node(rw->a, e);
    r->u.fn = f;
    return r;
  }
  int n = expr_nchildren(e);
  Expr *small[16];
  Expr **nk = n <= 16 ? small : ARENA_ARRAY(rw->a, Expr *, n);
  for (int i = 0; i < n; i++) nk[i] = rw_expr(rw, expr_child(e, i));
  return n ? expr_rebuild(rw->a, e, nk, n) : e;
}

static Expr *rw_node(Rewriter *rw, Expr *e) {
  if (e->kind == EX_LET || e->kind == EX_FREE_VAR) return rw_chain(rw, e);
  if (e->kind == EX_VAR) {
    Expr *s = ptrmap_get(&rw->subst, e->u.var);
    if (s) return s;
  }
  Expr *r = rw->pre ? rw->pre(rw, e) : NULL;
  if (r) return r;
  r = rw_kids(rw, e);
  return rw->post ? rw->post(rw, e, r) : r;
}

Expr *rw_expr(Rewriter *rw, Expr *e) { return e ? rw_node(rw, e) : NULL; }

/* ───────────────────────────── atoms ───────────────────────────── */

bool rw_is_atom(const Module *m, const Expr *e) {
  switch (e->kind) {
    case EX_CONST:
    case EX_VAR:
    case EX_OP:
    case EX_CTOR:
      return true;
    case EX_GLOBAL:
      return !m || !module_state_global(m, e->u.global.name);
    case EX_CALL:
      return e->u.call.fn->kind == EX_CTOR && e->u.call.nargs == 0 &&
             (!e->u.call.attrs || e->u.call.attrs->n == 0);
    default:
      return false;
  }
}

static bool pure_callee(const Expr *fn) {
  if (fn->kind == EX_CTOR) return true;
  if (fn->kind != EX_OP) return false;
  const OpDef *op = ops_get(fn->u.op.index);
  return op && !op->effectful;
}

/* Tuples, projections and pure calls are pure when all their children are
 * (a pure call's callee is an atom). */
bool rw_is_pure(const Module *m, const Expr *e) {
  if (rw_is_atom(m, e) || e->kind == EX_FN) return true;
  bool own = e->kind == EX_TUPLE || e->kind == EX_PROJ ||
             (e->kind == EX_CALL && pure_callee(e->u.call.fn));
  for (int i = 0; own && i < expr_nchildren(e); i++) own = rw_is_pure(m, expr_child(e, i));
  return own;
}

Var *rw_graph_var(Arena *a, Span sp) {
  Var *v = var_new(a, "t", NULL, sp);
  v->is_graph = true;
  return v;
}

Expr *rw_unit(Arena *a, Span sp) { return expr_tuple(a, 0, NULL, sp); }

/* ───────────────────────────── blocks ───────────────────────────── */

static void block_push(RwBlock *b, Var *v, Expr *value, Span sp) {
  if (b->len == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 16;
    b->items = realloc(b->items, b->cap * sizeof *b->items);
    if (!b->items) rly_oom();
  }
  b->items[b->len++] = (RwBinding){v, value, sp};
}

void rw_block_bind(RwBlock *b, Var *v, Expr *value, Span sp) {
  RLY_ASSERT(value != NULL);
  block_push(b, v, value, sp);
}

void rw_block_free_var(RwBlock *b, Var *v, Span sp) { block_push(b, v, NULL, sp); }

Expr *rw_block_finish(Arena *a, RwBlock *b, Expr *tail) {
  for (size_t i = b->len; i > 0; i--) {
    RwBinding *x = &b->items[i - 1];
    if (x->value) {
      tail = expr_let(a, x->var, x->value, tail, x->span);
    } else {
      Expr *f = expr_new(a, EX_FREE_VAR, x->span);
      f->u.free_var.var = x->var, f->u.free_var.body = tail;
      tail = f;
    }
  }
  rw_block_free(b);
  return tail;
}

void rw_block_free(RwBlock *b) {
  free(b->items);
  memset(b, 0, sizeof *b);
}
