/* typecheck_effects.c — effect analysis of defs, the purity rule of
 * `dataflow { … }`, and the final substitution of metavariables into
 * Expr.ty.
 *
 * A def is effectful when its body creates, reads or writes a reference,
 * uses a state global, calls an effectful op, or mentions an effectful def
 * (a fixed point over the module, computed once per check, on first need).
 * The walks (ir/walk.h's expr_walk) keep their own stack, so a
 * million-binding let chain needs no C stack. */
#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"
#include "types/typecheck_int.h"

/* ── effects ── */

static const OpDef *call_op_def(const Expr *e) {
  if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP) return NULL;
  const Expr *fn = e->u.call.fn;
  return ops_get(fn->u.op.index);
}

typedef struct EffScan {
  const Module *m;
  bool direct;
  PtrVec callees; /* names of defs mentioned */
} EffScan;

/* Notes whether a body is directly effectful (references, a state global,
 * an effectful op) and which defs it mentions, for the fixed point. */
static bool eff_visit(void *ctx, Expr *e) {
  EffScan *s = ctx;
  const OpDef *op;
  switch (e->kind) {
    case EX_REF_NEW:
    case EX_REF_READ:
    case EX_REF_WRITE:
      s->direct = true;
      break;
    case EX_GLOBAL: {
      const Def *d = module_lookup(s->m, e->u.global.name);
      if (d && d->kind == DEF_GLOBAL) s->direct = true;
      if (d && d->kind == DEF_FUNC) vec_push(&s->callees, (void *)d->u.func->name);
      break;
    }
    case EX_CALL:
      op = call_op_def(e);
      if (op && op->effectful) s->direct = true;
      break;
    default:
      break;
  }
  return true;
}

/* Effectful defs: the directly effectful ones, then callers of effectful
 * defs until nothing changes (recursion and mutual recursion included). */
static void compute_effects(TyCtx *c) {
  int n = c->m->ndefs;
  EffScan *scans = calloc((size_t)(n ? n : 1), sizeof *scans);
  if (!scans) rly_oom();
  for (int i = 0; i < n; i++) {
    const Def *d = &c->m->defs[i];
    scans[i].m = c->m;
    if (d->kind == DEF_FUNC) expr_walk(d->u.func->fn->body, eff_visit, &scans[i]);
    if (d->kind == DEF_FUNC && scans[i].direct)
      strmap_put(&c->effectful, d->u.func->name, (void *)1);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < n; i++) {
      const Def *d = &c->m->defs[i];
      if (d->kind != DEF_FUNC || strmap_get(&c->effectful, d->u.func->name)) continue;
      for (size_t k = 0; k < scans[i].callees.len; k++) {
        if (!strmap_get(&c->effectful, scans[i].callees.items[k])) continue;
        strmap_put(&c->effectful, d->u.func->name, (void *)1);
        changed = true;
        break;
      }
    }
  }
  for (int i = 0; i < n; i++) vec_free(&scans[i].callees);
  free(scans);
  c->effects_done = true;
}

/* ── dataflow purity ── */

/* What makes e impure, or NULL. */
static const char *impurity(TyCtx *c, const Expr *e) {
  const OpDef *op;
  switch (e->kind) {
    case EX_REF_NEW:
      return "creating a reference";
    case EX_REF_READ:
      return "reading a reference";
    case EX_REF_WRITE:
      return "writing a reference";
    case EX_IF:
      return "`if`";
    case EX_MATCH:
      return "`match`";
    case EX_GLOBAL:
      if (module_state_global(c->m, e->u.global.name))
        return arena_printf(c->a, "state global @%s", e->u.global.name);
      return NULL;
    case EX_CALL:
      op = call_op_def(e);
      if (op && op->effectful) return arena_printf(c->a, "effectful op %s", op->name);
      if (e->u.call.fn->kind == EX_GLOBAL && strmap_get(&c->effectful, e->u.call.fn->u.global.name))
        return arena_printf(c->a, "calling effectful function @%s", e->u.call.fn->u.global.name);
      return NULL;
    default:
      return NULL;
  }
}

static bool purity_visit(void *ctx, Expr *e) {
  TyCtx *c = ctx;
  if (e->kind == EX_DATAFLOW) return false; /* a nested block was checked on its own */
  const char *what = impurity(c, e);
  if (!what) return true;
  diag_error(c->d, e->span, "dataflow blocks must be pure: %s is not allowed", what);
  return false;
}

void ty_check_dataflow(TyCtx *c, Expr *e) {
  if (!c->effects_done) compute_effects(c);
  expr_walk(e->u.dataflow.body, purity_visit, c);
}

/* ── final types ── */

static bool finalize_visit(void *ctx, Expr *e) {
  TyCtx *c = ctx;
  if (diag_stopped(c->d)) return false; /* Ctrl-C: the check fails anyway */
  if (!e->ty) return true;
  e->ty = ty_zonk(c, e->ty, true);
  return true;
}

void ty_finalize_expr(TyCtx *c, Expr *root) { expr_walk(root, finalize_visit, c); }
