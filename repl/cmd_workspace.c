/* cmd_workspace.c — the session's workspace, visible and freeable:
 * `:bindings` lists the session variables with the tensor data each holds
 * (engine_var_sizes: a buffer shared by several variables counted once in
 * the total, and marked), `:del` removes bindings and frees their values
 * (engine_var_del), `:write` saves the user's definitions as a module
 * text that reads back to the same module (constants in its #[metadata]
 * section). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"
#include "repl/repl.h"

enum { TYPE_COLS = 44 };

static const char *size_str(char *buf, size_t n, size_t bytes) {
  return rt_bytes_str(buf, n, (double)bytes);
}

/* ───────────────────────── :bindings ───────────────────────── */

static int by_name(const void *a, const void *b) {
  return strcmp(((const EngineVarSize *)a)->var->name, ((const EngineVarSize *)b)->var->name);
}

static int by_size(const void *a, const void *b) {
  const EngineVarSize *x = a, *y = b;
  return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : by_name(a, b);
}

/* The type on one line, cut at TYPE_COLS columns. */
static void print_row(const EngineVarSize *v) {
  char *ty = v->var->annot ? print_type(v->var->annot) : strdup("?");
  if (!ty) rly_oom();
  if (strlen(ty) > TYPE_COLS) strcpy(ty + TYPE_COLS - 3, "...");
  char sz[32];
  printf("  %%%-10s %-*s %10s%s\n", v->var->name, TYPE_COLS, ty, size_str(sz, sizeof sz, v->bytes),
         v->shared ? "  (shared)" : "");
  free(ty);
}

/* `:bindings [name|size]`: one row per variable (name, type, bytes), the
 * total with shared storage once, and the memory limit. */
RunStatus repl_cmd_bindings(Session *s, const char *args, Span where) {
  bool size = strcmp(args, "size") == 0;
  if (*args && !size && strcmp(args, "name") != 0) {
    session_error(s, where, "usage: :bindings [name|size]",
                  "`:bindings` sorts by `name` or `size`, not `%s`", args);
    return RUN_ERROR;
  }
  int n;
  size_t total, shared = 0;
  Engine *e = session_engine(s);
  EngineVarSize *v = engine_var_sizes(e, &n, &total);
  qsort(v, (size_t)n, sizeof *v, size ? by_size : by_name);
  for (int i = 0; i < n; i++) print_row(&v[i]), shared |= v[i].shared;
  char t[32], lim[32];
  printf("total %s in %d variable%s%s; memory limit %s (:set max-memory)\n",
         size_str(t, sizeof t, total), n, n == 1 ? "" : "s",
         shared ? " (shared storage counted once)" : "",
         size_str(lim, sizeof lim, (size_t)engine_options(e)->max_memory));
  free(v);
  return RUN_OK;
}

/* ───────────────────────── :del ───────────────────────── */

/* The variable a word `%x` names, or NULL after a located error with the
 * nearest name as a hint. */
static Var *del_target(Session *s, const char *word, Span sp) {
  Engine *e = session_engine(s);
  Var *v = word[0] == '%' && word[1] ? engine_var(e, word + 1) : NULL;
  if (v && strcmp(v->name, "_") == 0) {
    session_error(s, sp, "the next value replaces it", "`%%_` (the last value) cannot be deleted");
    return NULL;
  }
  if (v) return v;
  int n;
  Var *const *vars = engine_vars(e, &n);
  const char **names = calloc((size_t)n + 1, sizeof *names);
  if (!names) rly_oom();
  for (int i = 0; i < n; i++) names[i] = vars[i]->name;
  const char *near = word[0] == '%' ? repl_nearest(names, word + 1) : NULL;
  char hint[128];
  snprintf(hint, sizeof hint, near ? "did you mean `%%%s`?" : "`:bindings` lists them",
           near ? near : "");
  if (word[0] != '%')
    session_error(s, sp, "usage: :del %x [%y ...]", "`:del` takes session variables, not `%s`",
                  word);
  else
    session_error(s, sp, hint, "no session variable `%s`", word);
  free(names);
  return NULL;
}

static void del_one(Session *s, Var *v) {
  Engine *e = session_engine(s);
  int n;
  size_t total, held = 0;
  EngineVarSize *sz = engine_var_sizes(e, &n, &total);
  for (int i = 0; i < n; i++)
    if (sz[i].var == v) held = sz[i].bytes;
  free(sz);
  int64_t freed = engine_var_del(e, v);
  char b[32];
  if (freed < 0)
    printf("deleted %%%s (its value is freed when the load ends)\n", v->name);
  else if (held && !freed)
    printf("deleted %%%s (nothing freed: its data is still held elsewhere)\n", v->name);
  else
    printf("deleted %%%s (freed %s)\n", v->name, size_str(b, sizeof b, (size_t)freed));
}

/* `:del %x [%y ...]`: every name is checked before any is deleted. */
RunStatus repl_cmd_del(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  Var *vars[REPL_MAX_WORDS];
  bool ok = w.n > 0;
  if (!w.n) session_error(s, where, "usage: :del %x [%y ...]", ":del needs session variables");
  for (int i = 0; i < w.n && ok; i++) ok = (vars[i] = del_target(s, w.w[i], w.sp[i])) != NULL;
  for (int i = 0; ok && i < w.n; i++)
    if (engine_var(session_engine(s), vars[i]->name) == vars[i]) del_one(s, vars[i]);
  repl_free_words(&w);
  return ok ? RUN_OK : RUN_ERROR;
}

/* ───────────────────────── :write ───────────────────────── */

static bool builtin(const Def *d) { return d->kind == DEF_GLOBAL && d->u.global->builtin; }

static bool user_def(const Session *s, const Def *d) {
  return !builtin(d) && !session_is_prelude(s, d);
}

typedef struct Deps {
  const Session *s;
  PtrVec todo;
  StrMap seen; /* names of globals already taken */
  PtrVec defs; /* const Def * to write */
} Deps;

/* Takes the user's definition of a global name once (and queues its code). */
static void take(Deps *d, const char *name) {
  const Def *def = module_lookup(session_module(d->s), name);
  if (!def || strmap_get(&d->seen, name) || !user_def(d->s, def)) return;
  strmap_put(&d->seen, name, (void *)1);
  vec_push(&d->defs, (void *)def);
  if (def->kind == DEF_FUNC) vec_push(&d->todo, def->u.func->fn->body);
  if (def->kind == DEF_GLOBAL) vec_push(&d->todo, def->u.global->init);
}

static bool visit(void *ctx, Expr *e) {
  if (e->kind == EX_GLOBAL) take(ctx, e->u.global.name);
  return true;
}

/* The named definitions, the user's definitions they use (transitively)
 * and the user's types. */
static void closure(Deps *d, const Words *w) {
  const Module *m = session_module(d->s);
  for (int i = 1; i < w->n; i++) take(d, w->w[i] + 1);
  while (d->todo.len) {
    Expr *e = vec_pop(&d->todo);
    if (e) expr_walk(e, visit, d);
  }
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_ADT && user_def(d->s, &m->defs[i])) vec_push(&d->defs, &m->defs[i]);
}

/* Every @f named is a definition of the user's (a located error otherwise). */
static bool check_names(Session *s, const Words *w) {
  for (int i = 1; i < w->n; i++) {
    const Def *d = w->w[i][0] == '@' ? module_lookup(session_module(s), w->w[i] + 1) : NULL;
    if (d && !user_def(s, d))
      session_error(s, w->sp[i], "every rly has it", "`%s` is the prelude's definition", w->w[i]);
    else if (!d)
      session_error(s, w->sp[i], "`:browse` lists the definitions", "no definition named `%s`",
                    w->w[i]);
    if (!d || !user_def(s, d)) return false;
  }
  return true;
}

/* The text of defs as a module of its own, with the metadata section. */
static char *module_text(PtrVec *defs, int64_t *nmeta) {
  Arena a;
  arena_init(&a);
  Module *t = ARENA_NEW(&a, Module);
  t->arena = &a;
  for (size_t i = 0; i < defs->len; i++) module_add(t, *(const Def *)defs->items[i]);
  PrintOptions opt = {.meta_limit = PRINT_DISPLAY_META_LIMIT, .header = true, .meta_section = true};
  char *text = print_module_meta(t, opt, nmeta);
  strmap_free(&t->globals), strmap_free(&t->types), strmap_free(&t->ctors);
  arena_free(&a);
  return text;
}

static bool write_text(Session *s, const char *path, const char *text, Span sp) {
  FILE *f = fopen(path, "w");
  bool ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) session_error(s, sp, NULL, "cannot write %s", path);
  return ok;
}

/* `:write FILE [@f ...]`: the user's definitions (all, or @f ... and what
 * they use) as a module that `:load` or `rly FILE` reads back. */
RunStatus repl_cmd_write(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (!w.n || !check_names(s, &w)) {
    if (!w.n) session_error(s, where, "usage: :write FILE.rly [@f ...]", ":write needs a file");
    return repl_free_words(&w), RUN_ERROR;
  }
  Deps d = {.s = s};
  const Module *m = session_module(s);
  if (w.n > 1)
    closure(&d, &w);
  else
    for (int i = 0; i < m->ndefs; i++)
      if (user_def(s, &m->defs[i])) vec_push(&d.defs, &m->defs[i]);
  int64_t nmeta = 0;
  char *text = module_text(&d.defs, &nmeta);
  bool ok = write_text(s, w.w[0], text, w.sp[0]);
  if (ok)
    printf("wrote %zu definition%s to %s (%lld constant%s in its metadata)\n", d.defs.len,
           d.defs.len == 1 ? "" : "s", w.w[0], (long long)nmeta, nmeta == 1 ? "" : "s");
  free(text);
  vec_free(&d.todo), vec_free(&d.defs), strmap_free(&d.seen);
  repl_free_words(&w);
  return ok ? RUN_OK : RUN_ERROR;
}
