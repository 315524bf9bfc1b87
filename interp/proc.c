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

static void walk_pattern(Builder *b, const Pattern *p) {
  switch (p->kind) {
  case PAT_WILD: return;
  case PAT_VAR: bind(b, p->u.var); return;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) walk_pattern(b, p->u.ctor.sub[i]);
    return;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) walk_pattern(b, p->u.tuple.sub[i]);
    return;
  }
}

static void walk_attrs(Builder *b, const Attrs *a) {
  for (int i = 0; a && i < a->n; i++)
    if (a->vals[i]->kind == AV_EXPR) walk(b, a->vals[i]->u.expr);
}

static void walk_fn(Builder *b, const Function *fn) {
  Proc *inner = proc_of(b->in, fn, NULL);
  for (int i = 0; i < inner->ncap; i++) use(b, inner->caps[i]);
}

static void walk(Builder *b, const Expr *e) {
  for (;;) {
    switch (e->kind) {
    case EX_CONST: case EX_GLOBAL: case EX_OP: case EX_CTOR: return;
    case EX_VAR: use(b, e->u.var); return;
    case EX_CALL:
      walk(b, e->u.call.fn);
      for (int i = 0; i < e->u.call.nargs; i++) walk(b, e->u.call.args[i]);
      walk_attrs(b, e->u.call.attrs);
      return;
    case EX_TUPLE:
      for (int i = 0; i < e->u.tuple.n; i++) walk(b, e->u.tuple.fields[i]);
      return;
    case EX_PROJ: e = e->u.proj.tuple; continue;
    case EX_LET:
      bind(b, e->u.let.var);
      walk(b, e->u.let.value);
      e = e->u.let.body;
      continue;
    case EX_FREE_VAR: bind(b, e->u.free_var.var); e = e->u.free_var.body; continue;
    case EX_FN: walk_fn(b, e->u.fn); return;
    case EX_IF:
      walk(b, e->u.if_.cond);
      walk(b, e->u.if_.then_);
      e = e->u.if_.else_;
      continue;
    case EX_MATCH:
      walk(b, e->u.match.scrut);
      for (int i = 0; i < e->u.match.n; i++) {
        walk_pattern(b, e->u.match.clauses[i].pat);
        walk(b, e->u.match.clauses[i].body);
      }
      return;
    case EX_REF_NEW: e = e->u.ref_new.init; continue;
    case EX_REF_READ: e = e->u.ref_read.ref; continue;
    case EX_REF_WRITE: walk(b, e->u.ref_write.ref); e = e->u.ref_write.value; continue;
    case EX_DATAFLOW: e = e->u.dataflow.body; continue;
    }
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
