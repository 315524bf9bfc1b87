/* prelude.c — the standard library (lib/prelude.rly, embedded in the binary
 * by a build step as rly_prelude_text) and how programs replace parts of it.
 *
 * The prelude is parsed and type-checked into the session's first module.
 * For each of its definitions we remember the definition's pointer (so
 * "still the prelude's" is a pointer comparison) and the names its source
 * text mentions.  When an input defines a name the prelude also defines (a
 * global, a type, or a constructor of a prelude type), the prelude's
 * definition and every prelude definition that mentions it, transitively,
 * are left out of the module the input is parsed into: the input's `type
 * List` or its `Cons` under another type then parse and check as if the
 * prelude had never had them.  Keys: "@f" for globals, "T" for types and
 * constructors (a constructor maps to its type's AdtDef). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir.h"
#include "parser/parser.h"
#include "passes/passes.h"
#include "repl/repl.h"

extern const char rly_prelude_text[];
extern const size_t rly_prelude_len;

const char *prelude_key(const Def *d, char *buf, size_t n) {
  switch (d->kind) {
    case DEF_FUNC:
      snprintf(buf, n, "@%s", d->u.func->name);
      return buf;
    case DEF_GLOBAL:
      snprintf(buf, n, "@%s", d->u.global->name);
      return buf;
    case DEF_PRIM:
      snprintf(buf, n, "@%s", d->u.prim->name);
      return buf;
    case DEF_ADT:
      return d->u.adt->name;
  }
  return "";
}

/* The identity of a definition: what stays the same when a FuncDef or
 * StateGlobal is copied (session.c copies them before whole-module checks). */
const void *prelude_def_ptr(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return d->u.func->fn;
    case DEF_GLOBAL:
      return d->u.global->init;
    case DEF_PRIM:
      return d->u.prim;
    case DEF_ADT:
      return d->u.adt;
  }
  return NULL;
}

static Span def_span(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return d->u.func->span;
    case DEF_GLOBAL:
      return d->u.global->span;
    case DEF_PRIM:
      return d->u.prim->span;
    case DEF_ADT:
      return d->u.adt->span;
  }
  Span none = {0, 0, 0};
  return none;
}

/* The pointer m currently has under key (a global, a type or a constructor). */
static const void *current(const Module *m, const char *key) {
  if (key[0] == '@') {
    const Def *d = module_lookup(m, key + 1);
    return d ? prelude_def_ptr(d) : NULL;
  }
  AdtDef *t = module_adt(m, key);
  return t ? (const void *)t : (const void *)module_ctor_adt(m, key, NULL);
}

bool session_is_prelude(const Session *s, const char *key, const void *def) {
  const void *p = strmap_get(&s->prelude_defs, key);
  return p && p == def;
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
static PtrVec *mentions(Session *s, const Def *d) {
  PtrVec *v = calloc(1, sizeof *v);
  if (!v) rly_oom();
  Span sp = def_span(d);
  const SourceFile *f = diag_source(&s->diag, sp.file);
  const char *t = f->text + sp.off, *end = t + sp.len;
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
    vec_push(v, arena_strndup(&s->fixed, start, (size_t)(t - start)));
  }
  return v;
}

static void record(Session *s, const Def *d) {
  char buf[256];
  const char *key = arena_strdup(&s->fixed, prelude_key(d, buf, sizeof buf));
  strmap_put(&s->prelude_defs, key, (void *)prelude_def_ptr(d));
  strmap_put(&s->prelude_deps, key, mentions(s, d));
  vec_push(&s->prelude_names, (void *)key);
  if (d->kind != DEF_ADT) return;
  for (int c = 0; c < d->u.adt->nctors; c++)
    strmap_put(&s->prelude_defs, d->u.adt->ctors[c].name, d->u.adt);
}

/* Parses and checks the prelude into s->m (which must be fresh). */
bool prelude_load(Session *s) {
  uint32_t file = diag_add_source(&s->diag, "<prelude>", rly_prelude_text, rly_prelude_len);
  ParseResult r = parse_script(s->m, &s->diag, file, NULL);
  bool ok = r.ok && ty_check_module(s->m, &s->diag);
  if (!ok) {
    fputs("rly: internal error: the prelude does not check; continuing without it\n", stderr);
    session_render(s);
    return false;
  }
  for (int i = 0; i < s->m->ndefs; i++) {
    const Def *d = &s->m->defs[i];
    if (d->kind == DEF_GLOBAL && d->u.global->builtin) continue;
    record(s, d);
  }
  return true;
}

void prelude_free(Session *s) {
  for (size_t i = 0; i < s->prelude_names.len; i++) {
    PtrVec *v = strmap_get(&s->prelude_deps, s->prelude_names.items[i]);
    if (v) vec_free(v), free(v);
  }
  vec_free(&s->prelude_names);
  strmap_free(&s->prelude_deps);
  strmap_free(&s->prelude_defs);
}

/* Adds key to gone; a prelude type takes its constructors along and a
 * prelude constructor takes its type. */
static void mark_gone(Session *s, StrMap *gone, const char *key) {
  if (strmap_get(gone, key)) return;
  strmap_put(gone, key, (void *)1);
  if (key[0] == '@') return;
  AdtDef *t = strmap_get(&s->prelude_defs, key);
  if (!t || module_adt(s->m, t->name) != t) return;
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
static void close_gone(Session *s, StrMap *gone) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < s->prelude_names.len; i++) {
      const char *k = s->prelude_names.items[i];
      if (strmap_get(gone, k) || current(s->m, k) != strmap_get(&s->prelude_defs, k)) continue;
      if (!mentions_gone(strmap_get(&s->prelude_deps, k), gone)) continue;
      mark_gone(s, gone, k);
      changed = true;
    }
  }
}

static bool prelude_def_gone(Session *s, const Def *d, const StrMap *gone) {
  if (d->kind == DEF_GLOBAL && d->u.global->builtin) return false;
  char buf[256];
  const char *key = prelude_key(d, buf, sizeof buf);
  return strmap_get(gone, key) && session_is_prelude(s, key, prelude_def_ptr(d));
}

/* A copy of s->m in a for an input that defines `names` (keys as above). */
Module *prelude_input_module(Session *s, const PtrVec *names, Arena *a) {
  StrMap gone = {0};
  for (size_t i = 0; i < names->len; i++) {
    const char *k = names->items[i];
    const void *p = strmap_get(&s->prelude_defs, k);
    if (p && current(s->m, k) == p) mark_gone(s, &gone, k);
  }
  if (!gone.len) return strmap_free(&gone), module_copy(s->m, a);
  close_gone(s, &gone);
  Module *n = ARENA_NEW(a, Module);
  n->arena = a;
  for (int i = 0; i < s->m->ndefs; i++)
    if (!prelude_def_gone(s, &s->m->defs[i], &gone)) module_add(n, s->m->defs[i]);
  strmap_free(&gone);
  return n;
}
