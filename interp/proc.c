/* proc.c — prepares functions for evaluation: one slot per variable bound
 * in the function (parameters, lets, pattern variables, free_vars) and the
 * list of variables it captures from outside.
 *
 * A let's variable gets its slot before its value is walked, so a closure
 * bound by `let %f = fn (…) { … %f … }` can capture %f itself (recursive let;
 * the evaluator patches the capture after building the closure).  Walks loop
 * on let chains and recurse only on nesting.  Procs of functions are cached
 * for the interpreter's life; a top-level expression's proc lives in a
 * scratch arena only while it is evaluated. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"
#include "ir/walk.h"

/* ── IdMap ── */

bool idmap_get(const IdMap *m, uint64_t key, int64_t *val) {
  const uint64_t *v = u64map_find(m, key);
  if (v) *val = (int64_t)*v;
  return v != NULL;
}

void idmap_put(IdMap *m, uint64_t key, int64_t val) { *u64map_slot(m, key) = (uint64_t)val; }

void idmap_free(IdMap *m) { u64map_free(m); }

/* ── building a proc ── */

typedef struct Builder {
  Interp *in;
  Arena *arena; /* the proc's memory */
  Proc *p;
  PtrVec caps;
} Builder;

static void bind(Builder *b, Var *v) {
  int64_t s;
  if (!idmap_get(&b->p->slots, v->id, &s)) idmap_put(&b->p->slots, v->id, b->p->nslots++);
}

static void use(Builder *b, Var *v) {
  int64_t s;
  if (idmap_get(&b->p->slots, v->id, &s)) return;
  /* Not bound (yet) in this function: captured.  Captures take the first
   * slots, so they are renumbered when the proc is finished. */
  idmap_put(&b->p->slots, v->id, -1 - (int64_t)b->caps.len);
  vec_push(&b->caps, v);
}

static void walk(Builder *b, const Expr *e);

static void bind_var(void *ctx, Var *v) { bind(ctx, v); }

static void walk_attrs(Builder *b, const Attrs *a) {
  for (int i = 0; a && i < a->n; i++)
    if (a->vals[i]->kind == AV_EXPR) walk(b, a->vals[i]->u.expr);
}

static void walk_fn(Builder *b, const Function *fn) {
  Proc *inner = proc_of(b->in, fn, NULL);
  for (int i = 0; i < inner->ncap; i++) use(b, inner->caps[i]);
}

/* Child i after the variables it sees got their slots. */
static void walk_child(Builder *b, const Expr *e, int i) {
  expr_binders(e, i, bind_var, b);
  walk(b, expr_child(e, i));
}

/* Loops on the last child (a let chain's body), so only nesting recurses. */
static void walk(Builder *b, const Expr *e) {
  for (;;) {
    if (e->kind == EX_VAR) {
      use(b, e->u.var);
      return;
    }
    if (e->kind == EX_FN) {
      walk_fn(b, e->u.fn);
      return;
    }
    int n = expr_nchildren(e);
    if (expr_attrs(e)) { /* a call's attributes, after its operands */
      for (int i = 0; i < n; i++) walk_child(b, e, i);
      walk_attrs(b, expr_attrs(e));
      return;
    }
    if (!n) return;
    for (int i = 0; i < n - 1; i++) walk_child(b, e, i);
    expr_binders(e, n - 1, bind_var, b);
    e = expr_child(e, n - 1);
  }
}

/* Captures become slots [0, ncap); bound variables shift up by ncap. */
static void finish(Builder *b) {
  Proc *p = b->p;
  p->ncap = (int)b->caps.len;
  p->caps = (Var **)vec_finish(&b->caps, b->arena);
  IdMap *m = &p->slots;
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      int64_t v = (int64_t)m->vals[i]; /* negative: capture number, encoded -1 - k */
      m->vals[i] = (uint64_t)(v < 0 ? -1 - v : v + p->ncap);
    }
  p->nslots += p->ncap;
}

static bool has_dim_checks(const Type *t) { return t && t->kind == TY_TENSOR; }

static void collect_checks(Arena *a, Proc *p, const Function *fn) {
  int n = 0;
  for (int i = 0; i < fn->nparams; i++) n += has_dim_checks(fn->params[i]->annot);
  p->checks = ARENA_ARRAY(a, ParamCheck, n ? n : 1);
  for (int i = 0; i < fn->nparams; i++)
    if (has_dim_checks(fn->params[i]->annot))
      p->checks[p->nchecks++] = (ParamCheck){i, fn->params[i]->annot};
}

static Proc *build(Interp *in, Arena *a, const Function *fn, const Expr *body, const char *name) {
  Proc *p = ARENA_NEW(a, Proc);
  p->fn = fn, p->body = body, p->name = name;
  Builder b = {in, a, p, {0}};
  if (fn) {
    p->nparams = fn->nparams;
    for (int i = 0; i < fn->nparams; i++) bind(&b, fn->params[i]);
    collect_checks(a, p, fn);
  }
  walk(&b, body);
  finish(&b);
  return p;
}

Proc *proc_of(Interp *in, const Function *fn, const char *name) {
  int64_t idx;
  if (idmap_get(&in->procs, (uint64_t)(uintptr_t)fn, &idx)) {
    Proc *p = in->proc_list.items[idx];
    if (name && !p->name) p->name = name;
    return p;
  }
  Proc *p = build(in, &in->arena, fn, fn->body, name);
  vec_push(&in->proc_list, p);
  idmap_put(&in->procs, (uint64_t)(uintptr_t)fn, (int64_t)in->proc_list.len - 1);
  return p;
}

Proc *proc_toplevel(Interp *in, const Expr *e, Arena *a) { return build(in, a, NULL, e, NULL); }

void proc_toplevel_free(Proc *p) { idmap_free(&p->slots); }

int proc_slot(const Proc *p, const Var *v) {
  int64_t s;
  return idmap_get(&p->slots, v->id, &s) ? (int)s : -1;
}
