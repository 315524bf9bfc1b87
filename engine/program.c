/* program.c — the program an engine builds up (engine.h): the current
 * module, the base module it started from, the session variables and the
 * transactions that make several steps one.
 *
 * Invariants:
 * - The current module is never edited in place: a new one (an input's
 *   copy, a pass's result) replaces it.
 * - A transaction remembers the module and the session variables; rolling
 *   back restores both and releases the values of the variables bound
 *   since.  Transactions nest (a loaded file may load another).
 * - Module tables (StrMap, malloc'd) of replaced modules are freed when no
 *   open transaction can roll back to them; the base module's when the
 *   engine goes. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

void program_init(Program *p) {
  arena_init(&p->arena);
  p->base = module_new(&p->arena);
  p->m = module_copy(p->base, &p->arena);
}

/* The module m unless it is one the program must keep. */
static void drop(Program *p, Module *m, const Module *keep) {
  if (m && m != keep && m != p->base) module_free(m);
}

void program_free(Program *p) {
  for (int i = 0; i < p->ntxns; i++) free(p->txns[i].vars);
  for (size_t i = 0; i < p->dead.len; i++) drop(p, p->dead.items[i], p->m);
  drop(p, p->m, NULL);
  module_free(p->base);
  vec_free(&p->dead);
  vec_free(&p->derived);
  free(p->vars);
  prelude_free(p);
  arena_free(&p->arena);
}

Module *engine_module(const Engine *e) { return engine_program(e)->m; }
const Module *engine_base(const Engine *e) { return engine_program(e)->base; }
int engine_txn_depth(const Engine *e) { return engine_program(e)->ntxns; }

Module *engine_replace_module(Engine *e, Module *m) {
  Program *p = engine_program(e);
  Module *old = p->m;
  p->m = m;
  if (!old || old == m || old == p->base) return NULL;
  if (!p->ntxns) return old;
  vec_push(&p->dead, old);
  return NULL;
}

void engine_set_module(Engine *e, Module *m) { module_free(engine_replace_module(e, m)); }

/* ───────────────────────── session variables ───────────────────────── */

static bool var_listed(Var *const *vars, int n, const Var *v) {
  for (int i = 0; i < n; i++)
    if (vars[i] == v) return true;
  return false;
}

Var *const *engine_vars(const Engine *e, int *n) {
  const Program *p = engine_program(e);
  *n = p->nvars;
  return p->vars;
}

Var *engine_var(const Engine *e, const char *name) {
  const Program *p = engine_program(e);
  for (int i = 0; i < p->nvars; i++)
    if (strcmp(p->vars[i]->name, name) == 0) return p->vars[i];
  return NULL;
}

/* Binds v's name to v.  The value of the variable it replaces is released
 * unless a transaction may bring that variable back. */
void engine_var_set(Engine *e, Var *v) {
  Program *p = engine_program(e);
  for (int i = 0; i < p->nvars; i++)
    if (strcmp(p->vars[i]->name, v->name) == 0) {
      if (!p->ntxns && p->vars[i] != v) engine_unbind(e, p->vars[i]);
      p->vars[i] = v;
      return;
    }
  if (p->nvars == p->capvars) {
    p->capvars = p->capvars ? p->capvars * 2 : 16;
    p->vars = realloc(p->vars, sizeof(Var *) * (size_t)p->capvars);
    if (!p->vars) rly_oom();
  }
  p->vars[p->nvars++] = v;
}

/* ───────────────────────── transactions ───────────────────────── */

bool engine_txn_begin(Engine *e) {
  Program *p = engine_program(e);
  if (p->ntxns == ENGINE_TXN_MAX) return false;
  EngineTxn *t = &p->txns[p->ntxns++];
  t->module = p->m;
  t->dead_from = p->dead.len;
  t->nvars = p->nvars;
  t->vars = p->nvars ? malloc(sizeof(Var *) * (size_t)p->nvars) : NULL;
  if (p->nvars && !t->vars) rly_oom();
  if (p->nvars) memcpy(t->vars, p->vars, sizeof(Var *) * (size_t)p->nvars);
  return true;
}

/* Back to t's module and variables: modules replaced since are dropped,
 * values of variables bound since released. */
static void txn_rollback(Engine *e, Program *p, EngineTxn *t) {
  for (size_t i = t->dead_from; i < p->dead.len; i++) drop(p, p->dead.items[i], t->module);
  drop(p, p->m, t->module);
  p->dead.len = t->dead_from;
  p->m = t->module;
  for (int i = 0; i < p->nvars; i++)
    if (!var_listed(t->vars, t->nvars, p->vars[i])) engine_unbind(e, p->vars[i]);
  p->nvars = t->nvars;
  if (t->nvars) memcpy(p->vars, t->vars, sizeof(Var *) * (size_t)t->nvars);
}

/* After the outermost transaction: release the variables it replaced. */
static void txn_release(Engine *e, const Program *p, const EngineTxn *t) {
  for (int i = 0; i < t->nvars; i++)
    if (!var_listed(p->vars, p->nvars, t->vars[i])) engine_unbind(e, t->vars[i]);
}

void engine_txn_end(Engine *e, bool ok) {
  Program *p = engine_program(e);
  EngineTxn *t = &p->txns[--p->ntxns];
  if (!ok)
    txn_rollback(e, p, t);
  else if (!p->ntxns)
    txn_release(e, p, t);
  free(t->vars);
  if (p->ntxns) return;
  for (size_t i = 0; i < p->dead.len; i++) drop(p, p->dead.items[i], p->m);
  p->dead.len = 0;
}

/* ───────────────────────── reset ───────────────────────── */

void engine_reset(Engine *e, Arena *a) {
  Program *p = engine_program(e);
  engine_set_module(e, module_copy(p->base, a ? a : &p->arena));
  p->nvars = 0;
  interp_reset(engine_interp(e));
}
