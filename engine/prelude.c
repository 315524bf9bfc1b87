/* prelude.c — the standard library (lib/prelude.rly, embedded into librly
 * by a build step as rly_prelude_text) and how programs replace parts of it.
 *
 * The prelude is parsed and type-checked into the engine's base module.
 * For each of its definitions we remember the definition's identity (so
 * "still the prelude's" is a pointer comparison) and the names its source
 * text mentions.  When an input defines a name the prelude also defines (a
 * global, a type, or a constructor of a prelude type), the prelude's
 * definition and every prelude definition that mentions it, transitively,
 * are left out of the module the input is parsed into: the input's `type
 * List` or its `Cons` under another type then parse and check as if the
 * prelude had never had them.  Keys: "@f" for globals, "T" for types and
 * constructors (a constructor maps to its type's AdtDef). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "parser/parser.h"
#include "types/types.h"

extern const char rly_prelude_text[];
extern const size_t rly_prelude_len;

const char *prelude_key(const Def *d, char *buf, size_t n) {
  if (d->kind == DEF_ADT) return def_name(d);
  snprintf(buf, n, "@%s", def_name(d));
  return buf;
}

const void *prelude_def_id(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
    case DEF_GLOBAL: /* its text's offset: copies (input.c) and passes keep the span */
      return (const void *)(uintptr_t)def_span(d).off;
    case DEF_PRIM:
      return d->u.prim;
    case DEF_ADT:
      return d->u.adt;
  }
  return NULL;
}

/* The identity m currently has under key (a global, a type or a constructor). */
static const void *current(const Module *m, const char *key) {
  if (key[0] == '@') {
    const Def *d = module_lookup(m, key + 1);
    return d ? prelude_def_id(d) : NULL;
  }
  AdtDef *t = module_adt(m, key);
  return t ? (const void *)t : (const void *)module_ctor_adt(m, key, NULL);
}

bool prelude_has(const Program *p, const char *key, const void *id) {
  const void *have = strmap_get(&p->prelude_defs, key);
  return have && have == id;
}

bool engine_is_prelude_def(const Engine *e, const Def *d) {
  char buf[256];
  return prelude_has(engine_program(e), prelude_key(d, buf, sizeof buf), prelude_def_id(d));
}

static bool is_type_param(const Def *d, const char *w, size_t n) {
  bool f = d->kind == DEF_FUNC, t = d->kind == DEF_ADT;
  int nt = f ? d->u.func->fn->ntparams : t ? d->u.adt->ntparams : 0;
  const char **tp = f ? d->u.func->fn->tparams : t ? d->u.adt->tparams : NULL;
  for (int i = 0; i < nt; i++)
    if (strlen(tp[i]) == n && memcmp(tp[i], w, n) == 0) return true;
  return false;
}

/* The names (globals with '@', bare identifiers) the text of d mentions;
 * local variables and d's own type parameters are not dependencies. */
static PtrVec *mentions(Engine *e, const Def *d) {
  PtrVec *v = calloc(1, sizeof *v);
  if (!v) rly_oom();
  Span sp = def_span(d);
  uint32_t off;
  const SourceFile *f = diag_span_source(engine_diag(e), sp, &off);
  RLY_ASSERT(f);
  const char *t = f->text + off, *end = t + sp.len;
  while (t < end) {
    if (!isalpha((unsigned char)*t) && *t != '_') {
      t++;
      continue;
    }
    const char *w = t;
    while (t < end && (isalnum((unsigned char)*t) || *t == '_')) t++;
    char sigil = w > f->text ? w[-1] : 0;
    if (sigil == '%' || is_type_param(d, w, (size_t)(t - w))) continue;
    const char *start = sigil == '@' ? w - 1 : w;
    vec_push(v, arena_strndup(&engine_program(e)->arena, start, (size_t)(t - start)));
  }
  return v;
}

static void record(Engine *e, const Def *d) {
  Program *p = engine_program(e);
  char buf[256];
  const char *key = arena_strdup(&p->arena, prelude_key(d, buf, sizeof buf));
  strmap_put(&p->prelude_defs, key, (void *)prelude_def_id(d));
  strmap_put(&p->prelude_deps, key, mentions(e, d));
  vec_push(&p->prelude_names, (void *)key);
  if (d->kind != DEF_ADT) return;
  for (int c = 0; c < d->u.adt->nctors; c++)
    strmap_put(&p->prelude_defs, d->u.adt->ctors[c].name, d->u.adt);
}

/* Parses and checks the prelude into the base module (left empty if it
 * does not check), then starts the current module afresh from it. */
bool engine_load_prelude(Engine *e) {
  Program *p = engine_program(e);
  uint32_t file = diag_add_source(engine_diag(e), "<prelude>", rly_prelude_text, rly_prelude_len);
  ParseResult r = parse_script(p->base, engine_diag(e), file, NULL);
  bool ok = r.ok && ty_check_module(p->base, engine_diag(e));
  for (int i = 0; ok && i < p->base->ndefs; i++) {
    const Def *d = &p->base->defs[i];
    if (!(d->kind == DEF_GLOBAL && d->u.global->builtin)) record(e, d);
  }
  if (!ok) module_free(p->base), p->base = module_new(&p->arena);
  engine_set_module(e, module_copy(p->base, &p->arena));
  return ok;
}

void prelude_free(Program *p) {
  for (size_t i = 0; i < p->prelude_names.len; i++) {
    PtrVec *v = strmap_get(&p->prelude_deps, p->prelude_names.items[i]);
    if (v) vec_free(v), free(v);
  }
  vec_free(&p->prelude_names);
  strmap_free(&p->prelude_deps);
  strmap_free(&p->prelude_defs);
}

/* Adds key to gone; a prelude type takes its constructors along and a
 * prelude constructor takes its type. */
static void mark_gone(const Program *p, StrMap *gone, const char *key) {
  if (strmap_get(gone, key)) return;
  strmap_put(gone, key, (void *)1);
  if (key[0] == '@') return;
  AdtDef *t = strmap_get(&p->prelude_defs, key);
  if (!t || module_adt(p->m, t->name) != t) return;
  strmap_put(gone, t->name, (void *)1);
  for (int c = 0; c < t->nctors; c++) strmap_put(gone, t->ctors[c].name, (void *)1);
}

static bool mentions_gone(const PtrVec *deps, const StrMap *gone) {
  for (size_t i = 0; deps && i < deps->len; i++)
    if (strmap_get(gone, deps->items[i])) return true;
  return false;
}

/* Closes gone over "mentions": a current prelude definition that mentions
 * a gone name is gone too. */
static void close_gone(const Program *p, StrMap *gone) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < p->prelude_names.len; i++) {
      const char *k = p->prelude_names.items[i];
      if (strmap_get(gone, k) || current(p->m, k) != strmap_get(&p->prelude_defs, k)) continue;
      if (!mentions_gone(strmap_get(&p->prelude_deps, k), gone)) continue;
      mark_gone(p, gone, k);
      changed = true;
    }
  }
}

static bool prelude_def_gone(const Program *p, const Def *d, const StrMap *gone) {
  if (d->kind == DEF_GLOBAL && d->u.global->builtin) return false;
  char buf[256];
  const char *key = prelude_key(d, buf, sizeof buf);
  return strmap_get(gone, key) && prelude_has(p, key, prelude_def_id(d));
}

Module *prelude_input_module(Engine *e, const PtrVec *names, Arena *a) {
  const Program *p = engine_program(e);
  StrMap gone = {0};
  for (size_t i = 0; i < names->len; i++) {
    const char *k = names->items[i];
    const void *id = strmap_get(&p->prelude_defs, k);
    if (id && current(p->m, k) == id) mark_gone(p, &gone, k);
  }
  if (!gone.len) return strmap_free(&gone), module_copy(p->m, a);
  close_gone(p, &gone);
  Module *n = ARENA_NEW(a, Module);
  n->arena = a;
  for (int i = 0; i < p->m->ndefs; i++)
    if (!prelude_def_gone(p, &p->m->defs[i], &gone)) module_add(n, p->m->defs[i]);
  strmap_free(&gone);
  return n;
}
