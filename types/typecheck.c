/* typecheck.c — the type checker's entry points (types/types.h).
 *
 * A module is checked as one unit so defs may be mutually recursive: every
 * def first gets a type from its annotations (metavariables for what is
 * missing), then every body is checked, then queued relations are solved to
 * a fixed point, and finally metavariables are substituted into Expr.ty and
 * FuncDef.ty (leftovers stay as `_` / `?`: the def is partially typed and
 * checked at run time).  Errors are collected; checking goes on with the
 * next definition.  The pieces: typecheck_unify.c (unification),
 * typecheck_expr.c (expressions), typecheck_match.c (patterns, coverage),
 * typecheck_effects.c (effects, dataflow purity, final types). */
#include <string.h>

#include "types/typecheck_int.h"

static void check_adt(TyCtx *c, AdtDef *adt) {
  for (int i = 0; i < adt->nctors; i++)
    for (int k = 0; k < adt->ctors[i].nfields; k++) ty_import(c, adt->ctors[i].fields[k]);
}

static void check_def_body(TyCtx *c, FuncDef *f) {
  Type *sig = ty_global_sig(c, f->name);
  const char *who = arena_printf(c->a, "@%s", f->name);
  ty_check_fn_body(c, f->fn, sig->u.func.params, sig->u.func.ret, who);
}

static void check_global_init(TyCtx *c, StateGlobal *g) {
  if (!g->init) return;
  Type *gt = ty_global_sig(c, g->name);
  Type *it = ty_check(c, g->init);
  if (!ty_unify(c, gt, it))
    diag_error(c->d, g->init->span,
               "@%s: the initial value has type %s but the global is declared %s", g->name,
               ty_show(c, it), ty_show(c, gt));
}

static void finish_def(TyCtx *c, FuncDef *f) {
  ty_finalize_expr(c, f->fn->body);
  f->ty = ty_zonk(c, ty_global_sig(c, f->name), true);
}

static void finish_global(TyCtx *c, StateGlobal *g) {
  if (g->init) ty_finalize_expr(c, g->init);
}

/* The whole module at once: signatures first (so defs may call each other
 * in any order), then bodies, then the queued relations, then the final
 * substitution; key linearity is checked only when there are no errors. */
bool ty_recheck_module(Module *m, DiagCtx *d) {
  bool was = d->mute_warnings;
  d->mute_warnings = true;
  bool ok = ty_check_module(m, d);
  d->mute_warnings = was, d->muted_last = false;
  return ok;
}

bool ty_check_module(Module *m, DiagCtx *d) {
  TyCtx c;
  ty_ctx_init(&c, m, d);
  size_t errors = d->nerrors;
  for (int i = 0; i < m->ndefs; i++) {
    Def *df = &m->defs[i];
    if (df->kind == DEF_ADT) check_adt(&c, df->u.adt);
    if (df->kind == DEF_FUNC)
      strmap_put(&c.defs, df->u.func->name, ty_def_signature(&c, df->u.func));
  }
  for (int i = 0; i < m->ndefs && !diag_stopped(d); i++) {
    Def *df = &m->defs[i];
    if (df->kind == DEF_FUNC) check_def_body(&c, df->u.func);
    if (df->kind == DEF_GLOBAL) check_global_init(&c, df->u.global);
    if (df->kind == DEF_PRIM) tir_verify(m, df->u.prim, d);
  }
  if (!diag_stopped(d)) ty_solve(&c);
  for (int i = 0; i < m->ndefs && !diag_stopped(d); i++) { /* Ctrl-C: rejected anyway */
    Def *df = &m->defs[i];
    if (df->kind == DEF_FUNC) finish_def(&c, df->u.func);
    if (df->kind == DEF_GLOBAL) finish_global(&c, df->u.global);
  }
  ty_ctx_free(&c);
  /* Seed 000: keys are linear.  A key used twice is a warning here and an
   * error in the CheckKeyLinearity pass. */
  if (d->nerrors == errors) ty_check_key_linearity(m, d, false);
  return d->nerrors == errors;
}

Type *ty_check_expr(Module *m, Expr *e, DiagCtx *d) { return ty_check_expr_as(m, e, NULL, d); }

/* A mismatch with `expected` is left to the caller, which words it. */
Type *ty_check_expr_as(Module *m, Expr *e, Type *expected, DiagCtx *d) {
  TyCtx c;
  ty_ctx_init(&c, m, d);
  size_t errors = d->nerrors;
  Type *t = ty_check(&c, e);
  if (expected) ty_unify(&c, ty_import(&c, expected), t);
  ty_solve(&c);
  ty_finalize_expr(&c, e);
  t = ty_zonk(&c, t, true);
  ty_ctx_free(&c);
  return d->nerrors == errors ? t : NULL;
}

/* Checks one definition against the rest of the module, whose types are
 * taken as they are; the REPL uses it for a brand-new definition, which
 * cannot change what the others were checked against. */
bool ty_check_def(Module *m, const char *name, DiagCtx *d) {
  TyCtx c;
  ty_ctx_init(&c, m, d);
  size_t errors = d->nerrors;
  const Def *df = module_lookup(m, name);
  AdtDef *adt = df ? NULL : module_adt(m, name);
  Span none = {0};
  if (adt) {
    check_adt(&c, adt);
  } else if (!df) {
    diag_error(d, none, "unknown definition @%s", name);
  } else if (df->kind == DEF_FUNC) {
    strmap_put(&c.defs, df->u.func->name, ty_def_signature(&c, df->u.func));
    check_def_body(&c, df->u.func);
    if (!diag_stopped(d)) ty_solve(&c), finish_def(&c, df->u.func); /* Ctrl-C: rejected */
  } else if (df->kind == DEF_GLOBAL) {
    check_global_init(&c, df->u.global);
    ty_solve(&c);
    finish_global(&c, df->u.global);
  } else if (df->kind == DEF_PRIM) {
    tir_verify(m, df->u.prim, d);
  }
  ty_ctx_free(&c);
  return d->nerrors == errors;
}
