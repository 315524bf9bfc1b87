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
 * - A variable replaced (rebound) or deleted is released at once unless an
 *   open transaction may bring it back, else when the last of those ends;
 *   a released value holding much tensor data is collected then.
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

/* May an open transaction bring v back (it was bound when one began)? */
static bool var_kept(const Program *p, const Var *v) {
  for (int i = 0; i < p->ntxns; i++)
    if (var_listed(p->txns[i].vars, p->txns[i].nvars, v)) return true;
  return false;
}

/* Unbinds v; its value, when it held much tensor data, is collected now. */
static void release(Engine *e, Var *v) {
  Interp *in = engine_interp(e);
  size_t bytes = interp_value_bytes(in, interp_bound(in, v));
  engine_unbind(e, v);
  if (bytes >= ENGINE_RELEASE_COLLECT) interp_gc(in);
}

/* Binds v's name to v.  The value of the variable it replaces is released
 * unless a transaction may bring that variable back. */
void engine_var_set(Engine *e, Var *v) {
  Program *p = engine_program(e);
  for (int i = 0; i < p->nvars; i++)
    if (strcmp(p->vars[i]->name, v->name) == 0) {
      Var *old = p->vars[i];
      p->vars[i] = v;
      if (old != v && !var_kept(p, old)) release(e, old);
      return;
    }
  if (p->nvars == p->capvars) {
    p->capvars = p->capvars ? p->capvars * 2 : 16;
    p->vars = realloc(p->vars, sizeof(Var *) * (size_t)p->capvars);
    if (!p->vars) rly_oom();
  }
  p->vars[p->nvars++] = v;
}

/* Removes v's binding: its value is freed now (its bytes measured as the
 * tensor data that leaves memory, the buffers kept for reuse given back
 * too), or -1 when an open transaction may bring v back (then at its end).
 * The last result's root goes as well: it was only kept for printing. */
int64_t engine_var_del(Engine *e, Var *v) {
  Program *p = engine_program(e);
  int k = 0;
  for (int i = 0; i < p->nvars; i++)
    if (p->vars[i] != v) p->vars[k++] = p->vars[i];
  p->nvars = k;
  if (var_kept(p, v)) return -1;
  Interp *in = engine_interp(e);
  interp_bind(in, NULL, NULL);
  interp_gc(in), rt_cache_trim(), rt_pool_trim();
  size_t before = rt_live_bytes();
  engine_unbind(e, v);
  interp_gc(in), rt_cache_trim(), rt_pool_trim();
  return (int64_t)(before - rt_live_bytes());
}

/* ───────────────────────── what the variables hold ───────────────────────── */

/* Each variable's buffers (sorted, from interp_value_buffers) and how many
 * variables hold each buffer (counts, keyed by the buffer). */
static PtrVec *var_buffers(Engine *e, const Program *p, U64Map *counts) {
  PtrVec *bufs = calloc((size_t)p->nvars + 1, sizeof *bufs);
  if (!bufs) rly_oom();
  Interp *in = engine_interp(e);
  for (int i = 0; i < p->nvars; i++) {
    interp_value_buffers(in, interp_bound(in, p->vars[i]), &bufs[i]);
    for (size_t j = 0; j < bufs[i].len; j++) ++*u64map_slot(counts, PTR_KEY(bufs[i].items[j]));
  }
  return bufs;
}

EngineVarSize *engine_var_sizes(Engine *e, int *n, size_t *total) {
  const Program *p = engine_program(e);
  U64Map counts = {0};
  PtrVec *bufs = var_buffers(e, p, &counts);
  EngineVarSize *out = calloc((size_t)p->nvars + 1, sizeof *out);
  if (!out) rly_oom();
  *total = 0;
  for (int i = 0; i < p->nvars; i++) {
    out[i].var = p->vars[i];
    for (size_t j = 0; j < bufs[i].len; j++) {
      const RtBuffer *b = bufs[i].items[j];
      uint64_t c = *u64map_find(&counts, PTR_KEY(b));
      out[i].bytes += b->nbytes;
      if (c > 1) out[i].shared += b->nbytes;
    }
    vec_free(&bufs[i]);
  }
  for (size_t i = 0; i < counts.cap; i++) /* each buffer once */
    if (counts.keys[i]) *total += ((const RtBuffer *)(uintptr_t)counts.keys[i])->nbytes;
  free(bufs);
  u64map_free(&counts);
  *n = p->nvars;
  return out;
}

/* ───────────────────────── the memory limit ───────────────────────── */

enum { LIMIT_HOLDERS = 3 };

void program_limit_hit(void *ctx, size_t want) {
  Program *p = ctx;
  if (!p->limit_want) p->limit_want = want;
}

static int by_bytes_desc(const void *a, const void *b) {
  const EngineVarSize *x = a, *y = b;
  return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->var->name, y->var->name);
}

/* "%a 191 MiB, %b 95 MiB" (the largest first); false when none holds any. */
static bool holders(Engine *e, StrBuf *b, const char **first) {
  int n;
  size_t total;
  EngineVarSize *v = engine_var_sizes(e, &n, &total);
  qsort(v, (size_t)n, sizeof *v, by_bytes_desc);
  for (int i = 0; i < n && i < LIMIT_HOLDERS && v[i].bytes; i++) {
    char sz[32];
    sb_printf(b, "%s%%%s %s", i ? ", " : "", v[i].var->name,
              rt_bytes_str(sz, sizeof sz, (double)v[i].bytes));
  }
  *first = NULL; /* the one to suggest deleting: %_ cannot be */
  for (int i = n - 1; i >= 0; i--)
    if (v[i].bytes && strcmp(v[i].var->name, "_") != 0) *first = v[i].var->name;
  bool any = n && v[0].bytes;
  free(v);
  return any;
}

void program_limit_note(Engine *e) {
  Program *p = engine_program(e);
  char want[32];
  rt_bytes_str(want, sizeof want, (double)p->limit_want);
  StrBuf b = {0};
  const char *first;
  DiagCtx *d = engine_diag(e);
  if (holders(e, &b, &first)) {
    diag_note(d, (Span){0}, "the allocation wanted %s; session variables holding the most: %s",
              want, b.data);
    if (first)
      diag_hint(d, "`:del %%%s` frees its value, or `:set max-memory SIZE` raises the limit",
                first);
    else
      diag_hint(d, "`:set max-memory SIZE` raises the limit");
  } else {
    diag_note(d, (Span){0}, "the allocation wanted %s; no session variable holds tensor data",
              want);
    diag_hint(d, "`:set max-memory SIZE` raises the limit");
  }
  sb_free(&b);
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
    if (!var_listed(t->vars, t->nvars, p->vars[i])) release(e, p->vars[i]);
  p->nvars = t->nvars;
  if (t->nvars) memcpy(p->vars, t->vars, sizeof(Var *) * (size_t)t->nvars);
}

/* After a transaction (t, no longer open): release the variables it
 * replaced or deleted that no transaction still open may bring back. */
static void txn_release(Engine *e, const Program *p, const EngineTxn *t) {
  for (int i = 0; i < t->nvars; i++)
    if (!var_listed(p->vars, p->nvars, t->vars[i]) && !var_kept(p, t->vars[i]))
      release(e, t->vars[i]);
}

void engine_txn_end(Engine *e, bool ok) {
  Program *p = engine_program(e);
  EngineTxn *t = &p->txns[--p->ntxns];
  if (!ok)
    txn_rollback(e, p, t);
  else
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
