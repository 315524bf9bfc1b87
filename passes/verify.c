/* verify.c — pass_verify: the invariants every pass must keep, checked
 * after each pass under `:set verify on` and in the pass tests.
 *
 *   1. the module type-checks (ty_check_module; prim functions are TIR-
 *      verified by it);
 *   2. every variable is used inside the scope of its binding (a let's
 *      variable is also visible in its own value, for recursive closures);
 *   3. every variable is bound by one binding site (passes rely on Var
 *      identity), a site reached twice through a shared node is fine;
 *   4. every @name refers to a definition.
 * The walk keeps its own stack of visit / bind / unbind actions, so a
 * million-binding chain is fine.  Nodes reached twice (DAGs) are walked once. */
#include <stdlib.h>

#include "passes/pass_int.h"
#include "types/types.h"

typedef enum ActKind { ACT_VISIT, ACT_BIND, ACT_UNBIND } ActKind;

typedef struct Act {
  ActKind kind;
  const void *p; /* Expr* or Var* */
  const Expr *site;
} Act;

typedef struct Verifier {
  const Module *m;
  DiagCtx *d;
  const char *def;
  PtrMap scope; /* Var* → number of enclosing bindings (uintptr_t) */
  PtrMap site;  /* Var* → the binding node */
  PtrMap seen;  /* compound Expr* already walked */
  Act *st;
  size_t n, cap;
  bool ok;
} Verifier;

static void push(Verifier *V, ActKind k, const void *p, const Expr *site) {
  if (V->n == V->cap) {
    V->cap = V->cap ? V->cap * 2 : 256;
    V->st = realloc(V->st, V->cap * sizeof *V->st);
    if (!V->st) rly_oom();
  }
  V->st[V->n++] = (Act){k, p, site};
}

static const char *vname(const Var *v) { return var_named(v) ? v->name : "_"; }

static void bind(Verifier *V, Var *v, const Expr *site) {
  const Expr *prev = ptrmap_get(&V->site, v);
  if (prev && prev != site && V->ok) {
    diag_error(V->d, v->span, "verify: in @%s, %%%s is bound by two different bindings", V->def,
               vname(v));
    V->ok = false;
  }
  ptrmap_put(&V->site, v, (void *)(site ? site : (const Expr *)v));
  uintptr_t c = (uintptr_t)ptrmap_get(&V->scope, v);
  ptrmap_put(&V->scope, v, (void *)(c + 1));
}

static void unbind(Verifier *V, Var *v) {
  uintptr_t c = (uintptr_t)ptrmap_get(&V->scope, v);
  ptrmap_put(&V->scope, v, (void *)(c ? c - 1 : 0));
}

static void check_use(Verifier *V, const Expr *e) {
  if (e->kind == EX_VAR && !ptrmap_get(&V->scope, e->u.var) && V->ok) {
    diag_error(V->d, e->span, "verify: in @%s, %%%s is used outside the scope of its binding",
               V->def, vname(e->u.var));
    V->ok = false;
  }
  if (e->kind == EX_GLOBAL && !module_lookup(V->m, e->u.global.name) && V->ok) {
    diag_error(V->d, e->span, "verify: in @%s, @%s is not defined", V->def, e->u.global.name);
    V->ok = false;
  }
}

typedef struct Binding {
  Verifier *V;
  ActKind kind;
  const Expr *site;
} Binding;

static void push_binder(void *ctx, Var *v) {
  Binding *b = ctx;
  push(b->V, b->kind, v, b->site);
}

/* Schedules e's children, each between the binding and the unbinding of
 * the variables it sees (pushed in reverse). */
static void schedule(Verifier *V, const Expr *e) {
  Binding on = {V, ACT_BIND, e}, off = {V, ACT_UNBIND, e};
  for (int i = expr_nchildren(e); i-- > 0;) {
    expr_binders(e, i, push_binder, &off);
    push(V, ACT_VISIT, expr_child(e, i), e);
    expr_binders(e, i, push_binder, &on);
  }
}

static void step(Verifier *V, Act a) {
  switch (a.kind) {
    case ACT_BIND:
      bind(V, (Var *)a.p, a.site);
      return;
    case ACT_UNBIND:
      unbind(V, (Var *)a.p);
      return;
    case ACT_VISIT: {
      const Expr *e = a.p;
      check_use(V, e);
      if (e->kind == EX_VAR || e->kind == EX_CONST || e->kind == EX_GLOBAL) return;
      if (ptrmap_has(&V->seen, e)) return;
      ptrmap_put(&V->seen, e, (void *)1);
      schedule(V, e);
    }
  }
}

static void verify_def(Verifier *V, const FuncDef *f) {
  V->def = f->name;
  for (int i = 0; i < f->fn->nparams; i++) bind(V, f->fn->params[i], NULL);
  push(V, ACT_VISIT, f->fn->body, NULL);
  while (V->n) step(V, V->st[--V->n]);
  for (int i = 0; i < f->fn->nparams; i++) unbind(V, f->fn->params[i]);
}

bool pass_verify(Module *m, DiagCtx *d) {
  bool typed = ty_recheck_module(m, d);
  Verifier V = {.m = m, .d = d, .ok = true};
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_FUNC) verify_def(&V, m->defs[i].u.func);
  ptrmap_free(&V.scope);
  ptrmap_free(&V.site);
  ptrmap_free(&V.seen);
  free(V.st);
  return typed && V.ok;
}

/* CheckKeyLinearity: the type checker's key linearity check (types/linearity.c)
 * with its findings as errors. */
Module *pass_check_key_linearity(PassCtx *pc, Module *in) {
  if (!ty_check_key_linearity(in, pc->d, true)) return NULL;
  return module_copy(in, pc->a);
}
