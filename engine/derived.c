/* derived.c — definitions a pass derived from others (Gradient's @f_grad
 * from @f), kept in step with their sources (engine.h).
 *
 * When a pipeline run at the session's request adds definitions (`:pass
 * Gradient @f`), each added one is recorded with the pipeline, the source
 * function and what it was derived from: the source and every definition
 * the source reaches through calls, each by the identity of its text (its
 * span's offset: a redefinition has new text, a pass that rewrites a
 * definition keeps its span).  A derived definition is stale when one of
 * those has since been redefined or removed.
 *
 * An input that makes a derived definition stale rederives it: the same
 * pipeline runs on the input's module and its result replaces the derived
 * definition (engine_input_check, before the input's expressions are
 * checked, so they see the new one).  When the pipeline fails on the new
 * source, the derived definition stays as it was, stale: a warning names it
 * and the failure, and any later input that uses it is refused until the
 * pass is run again.  Records are only ever added (a rederivation adds
 * one), so after :undo the restored module's derived definitions find the
 * records of their own time. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "ir/walk.h"
#include "passes/pass.h"

typedef struct DerivedDep {
  const char *name;
  uint32_t off; /* the definition's span offset when derived */
} DerivedDep;

typedef struct Derived {
  const char *name;   /* the derived definition */
  uint32_t off;       /* its span offset */
  const char *passes; /* the pipeline, as `:pass` was given it */
  const char *src;    /* the function the pipeline derived it from */
  int ndeps;
  DerivedDep *deps;
} Derived;

/* ── what a function reaches ── */

typedef struct Reach {
  const Module *m;
  StrMap seen;
  PtrVec todo, defs;
} Reach;

static void reach_def(Reach *r, const char *name) {
  const Def *d = module_lookup(r->m, name);
  if (!d || strmap_get(&r->seen, name)) return;
  strmap_put(&r->seen, name, (void *)1);
  vec_push(&r->defs, (void *)d);
  if (d->kind == DEF_FUNC) vec_push(&r->todo, d->u.func->fn->body);
  if (d->kind == DEF_GLOBAL && d->u.global->init) vec_push(&r->todo, d->u.global->init);
}

static bool reach_visit(void *ctx, Expr *e) {
  if (e->kind == EX_GLOBAL) reach_def(ctx, e->u.global.name);
  return true;
}

/* src and the definitions it reaches, by name and span, in a. */
static DerivedDep *reached(const Module *m, const char *src, Arena *a, int *n) {
  Reach r = {.m = m};
  reach_def(&r, src);
  while (r.todo.len) expr_walk(vec_pop(&r.todo), reach_visit, &r);
  DerivedDep *deps = ARENA_ARRAY(a, DerivedDep, r.defs.len ? r.defs.len : 1);
  for (size_t i = 0; i < r.defs.len; i++) {
    const Def *d = r.defs.items[i];
    deps[i] = (DerivedDep){arena_strdup(a, def_name(d)), def_span(d).off};
  }
  *n = (int)r.defs.len;
  strmap_free(&r.seen);
  vec_free(&r.todo);
  vec_free(&r.defs);
  return deps;
}

/* ── records ── */

static void record(Program *p, const Def *d, const Module *m, const char *passes, const char *src) {
  Derived *r = ARENA_NEW(&p->arena, Derived);
  r->name = arena_strdup(&p->arena, def_name(d));
  r->off = def_span(d).off;
  r->passes = arena_strdup(&p->arena, passes);
  r->src = arena_strdup(&p->arena, src);
  r->deps = reached(m, src, &p->arena, &r->ndeps);
  vec_push(&p->derived, r);
}

void engine_derived_add(Engine *e, const Module *before, const Module *after, const char *passes,
                        const char *src) {
  if (!src || !module_func(after, src)) return;
  for (int i = 0; i < after->ndefs; i++) {
    const Def *d = &after->defs[i];
    if (d->kind == DEF_FUNC && !module_lookup(before, def_name(d)))
      record(engine_program(e), d, after, passes, src);
  }
}

/* The newest record of m's definition `name` as it is now, or NULL when it
 * was not derived (or was redefined by hand since). */
static const Derived *record_of(const Program *p, const Module *m, const char *name) {
  const Def *d = module_lookup(m, name);
  for (size_t i = p->derived.len; d && i-- > 0;) {
    const Derived *r = p->derived.items[i];
    if (strcmp(r->name, name) == 0 && r->off == def_span(d).off) return r;
  }
  return NULL;
}

static bool stale(const Module *m, const Derived *r) {
  for (int i = 0; i < r->ndeps; i++) {
    const Def *d = module_lookup(m, r->deps[i].name);
    if (!d || def_span(d).off != r->deps[i].off) return true;
  }
  return false;
}

const char *engine_derived_stale(const Engine *e, const Module *m, const char *name,
                                 const char **passes) {
  const Derived *r = record_of(engine_program(e), m, name);
  if (!r || !stale(m, r)) return NULL;
  if (passes) *passes = r->passes;
  return r->src;
}

/* ── rederiving ── */

typedef struct OnlySrc {
  const Module *in;
  const char *src;
} OnlySrc;

/* The scope `:pass P @src` has: @src and what the pipeline adds. */
static bool only_src(void *user, const Def *d) {
  const OnlySrc *o = user;
  return (d->kind == DEF_FUNC && strcmp(d->u.func->name, o->src) == 0) ||
         !module_lookup(o->in, def_name(d));
}

/* The diagnostics from `first` on, dropped; the first error's message kept
 * (malloc'd) for the warning that replaces them. */
static char *drop_errors(DiagCtx *d, size_t first) {
  char *msg = NULL;
  for (size_t i = first; i < d->n && !msg; i++)
    if (d->items[i].level == DIAG_ERROR) msg = strdup(d->items[i].msg);
  diag_truncate(d, first);
  return msg;
}

/* Runs r's pipeline on m; its derived definition replaces m's.  False,
 * with a warning, when the pipeline fails. */
static bool rederive_one(Engine *e, Module *m, Arena *a, const Derived *r, Span where) {
  OnlySrc o = {m, r->src};
  PassScope scope = {only_src, &o, r->src};
  PassOptions opt = pass_options_default();
  opt.scope = &scope;
  opt.where = where;
  PassResult res = {0};
  DiagCtx *d = engine_diag(e);
  size_t first = d->n;
  bool ok = pass_pipeline(r->passes, m, a, d, &opt, &res) && res.module &&
            module_func(res.module, r->name);
  if (ok) {
    module_add(m, *module_lookup(res.module, r->name));
    record(engine_program(e), module_lookup(m, r->name), m, r->passes, r->src);
  } else {
    char *why = drop_errors(d, first);
    diag_warning(d, where, "`@%s` is stale: `%s @%s` failed on the new `@%s`%s%s", r->name,
                 r->passes, r->src, r->src, why ? ": " : "", why ? why : "");
    diag_hint(d, "uses of `@%s` are refused until `:pass %s @%s` succeeds", r->name, r->passes,
              r->src);
    free(why);
  }
  if (res.module && res.module != m) module_free(res.module);
  pass_result_free(&res);
  return ok;
}

/* Whether r was derived from one of the names (a definition an input
 * gives). */
static bool uses_any(const Derived *r, const PtrVec *names) {
  for (int i = 0; i < r->ndeps; i++)
    for (size_t k = 0; k < names->len; k++)
      if (strcmp(r->deps[i].name, names->items[k]) == 0) return true;
  return false;
}

int engine_rederive(Engine *e, Module *m, Arena *a, Span where, const PtrVec *names, PtrVec *done) {
  const Program *p = engine_program(e);
  int n = 0;
  for (size_t i = 0; i < p->derived.len; i++) {
    const Derived *r = p->derived.items[i];
    if (record_of(p, m, r->name) != r || !stale(m, r) || !uses_any(r, names)) continue;
    n++;
    if (rederive_one(e, m, a, r, where) && done)
      vec_push(done, arena_printf(a, "@%s (%s @%s)", r->name, r->passes, r->src));
  }
  return n;
}

/* ── refusing stale definitions ── */

typedef struct Refuse {
  Engine *e;
  const Module *m;
  bool bad;
} Refuse;

static bool refuse_visit(void *ctx, Expr *x) {
  Refuse *r = ctx;
  const char *passes, *src;
  if (x->kind != EX_GLOBAL || !(src = engine_derived_stale(r->e, r->m, x->u.global.name, &passes)))
    return true;
  diag_error(engine_diag(r->e), x->span,
             "`@%s` is stale: it was derived by `%s @%s` from an earlier `@%s`", x->u.global.name,
             passes, src, src);
  diag_hint(engine_diag(r->e), "run `:pass %s @%s` again to rederive it", passes, src);
  r->bad = true;
  return true;
}

bool engine_refuse_stale(Engine *e, const Module *m, Expr *x) {
  Refuse r = {e, m, false};
  if (x) expr_walk(x, refuse_visit, &r);
  return !r.bad;
}
