/* complete.c — Tab completion candidates, independent of the line editor
 * (so they can be tested without a terminal).
 *
 * Words keep their sigil: `:ty` → `:type`, `@ma` → `@map`, `%w` → `%w1`,
 * `nn.de` → `nn.dense`.  Inside the parentheses of an op call, the op's
 * attribute names are offered as `name=`.  In a `:` command's arguments
 * the command row's completion kind (CmdComplete) decides what is offered;
 * for file names the front end completes them itself. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "ir/tir.h"
#include "ops/ops.h"
#include "repl/repl.h"
#include "repl/settings.h"

static const char *const keywords[] = {
    "let",    "fn",        "def", "if",       "else",      "type", "match",  "match?",
    "extern", "free_var",  "ref", "ref_read", "ref_write", "prim", "global", "dataflow",
    "Tensor", "RandState", "Ref", "True",     "False",     NULL};

typedef struct Cands {
  const char *word;
  size_t n;
  PtrVec *out;
  int w; /* the word's index in a `:` line (0: the command) */
} Cands;

static void offer(Cands *c, const char *prefix, const char *name, const char *suffix) {
  size_t p = strlen(prefix);
  if (strncmp(c->word, prefix, p < c->n ? p : c->n) != 0) return;
  if (c->n > p && strncmp(c->word + p, name, c->n - p) != 0) return;
  StrBuf b = {0};
  sb_puts(&b, prefix), sb_puts(&b, name), sb_puts(&b, suffix);
  for (size_t i = 0; i < c->out->len; i++) /* no duplicates */
    if (strcmp(c->out->items[i], b.data) == 0) {
      sb_free(&b);
      return;
    }
  vec_push(c->out, sb_take(&b));
}

static void offer_list(Cands *c, const char *prefix, const char *const *names, const char *suffix) {
  for (int i = 0; names[i]; i++) offer(c, prefix, names[i], suffix);
}

static void offer_globals(const Session *s, Cands *c) {
  for (int i = 0; i < session_module(s)->ndefs; i++) {
    const Def *d = &session_module(s)->defs[i];
    if (d->kind == DEF_FUNC) offer(c, "@", d->u.func->name, "");
    if (d->kind == DEF_GLOBAL) offer(c, "@", d->u.global->name, "");
    if (d->kind == DEF_PRIM) offer(c, "@", d->u.prim->name, "");
  }
}

static void offer_types(const Session *s, Cands *c, bool ctors) {
  for (int i = 0; i < session_module(s)->ndefs; i++) {
    const AdtDef *t =
        session_module(s)->defs[i].kind == DEF_ADT ? session_module(s)->defs[i].u.adt : NULL;
    if (!t) continue;
    offer(c, "", t->name, "");
    for (int k = 0; ctors && k < t->nctors; k++) offer(c, "", t->ctors[k].name, "");
  }
}

/* The dtype names, from ir/tensor.h's DTYPE_LIST. */
static void offer_dtypes(Cands *c) {
  static const char *const dtypes[] = {
#define X(e, n, b, cls, sfx) n,
      DTYPE_LIST(X)
#undef X
          NULL};
  offer_list(c, "", dtypes, "");
}

/* The op whose call's parentheses enclose position `start`, or NULL. */
static const OpDef *enclosing_op(const char *line, int start) {
  int depth = 0;
  for (int i = start - 1; i >= 0; i--) {
    if (line[i] == ')')
      depth++;
    else if (line[i] == '(' && depth)
      depth--;
    else if (line[i] == '(') {
      int e = i;
      while (e > 0 && line[e - 1] == ' ') e--;
      int b = e;
      while (b > 0 && (isalnum((unsigned char)line[b - 1]) || strchr("_.", line[b - 1]))) b--;
      if (b == e || (b > 0 && (line[b - 1] == '@' || line[b - 1] == '%'))) return NULL;
      char name[128];
      snprintf(name, sizeof name, "%.*s", e - b, line + b);
      int k = ops_lookup(name);
      return k >= 0 ? ops_get(k) : NULL;
    }
  }
  return NULL;
}

static void offer_vars(const Session *s, Cands *c) {
  int n;
  Var *const *v = engine_vars(session_engine(s), &n);
  for (int i = 0; i < n; i++) offer(c, "%", v[i]->name, "");
}

static void offer_expression(const Session *s, Cands *c, const char *line, int start) {
  if (c->word[0] == '@' || c->word[0] == '%') {
    if (c->word[0] == '@') offer_globals(s, c);
    if (c->word[0] == '%') offer_vars(s, c);
    return;
  }
  const OpDef *op = enclosing_op(line, start);
  for (int i = 0; op && op->attrs && op->attrs[i].name; i++) offer(c, "", op->attrs[i].name, "=");
  for (int i = 0; i < ops_count(); i++) offer(c, "", ops_get(i)->name, "");
  offer_types(s, c, true);
  offer_list(c, "", keywords, "");
  offer_dtypes(c);
}

/* The command word of a `:` line, resolved like cmd_run (exact or prefix). */
static const char *line_command(const char *line) {
  char buf[64];
  size_t k = 0;
  for (; line[1 + k] && !isspace((unsigned char)line[1 + k]) && k + 1 < sizeof buf; k++)
    buf[k] = line[1 + k];
  buf[k] = 0;
  return k ? cmd_resolve(buf) : NULL;
}

static int word_index(const char *line, int start) {
  int w = 0;
  for (int i = 0; i < start; i++)
    if (!isspace((unsigned char)line[i]) && (i == 0 || isspace((unsigned char)line[i - 1]))) w++;
  return w;
}

/* Functions for `:pass NAME @f`: the user's own (the prelude's dozens would
 * bury them, and :pass leaves the prelude out too), all of them when none
 * of the user's match or under `:set show-prelude on`. */
static void offer_functions(const Session *s, Cands *c) {
  size_t before = c->out->len;
  for (int round = s->show_prelude; round < 2 && c->out->len == before; round++)
    for (int i = 0; i < session_module(s)->ndefs; i++) {
      const Def *d = &session_module(s)->defs[i];
      if (d->kind != DEF_FUNC) continue;
      if (!round && session_is_prelude(s, d)) continue;
      offer(c, "@", d->u.func->name, "");
    }
}

static void offer_passes(const Session *s, Cands *c) {
  if (c->word[0] != '@') {
    for (int i = 0; i < engine_pass_count(); i++) offer(c, "", engine_pass_at(i)->name, "");
    offer(c, "", "jit", ""); /* the jit's pipeline (:pass jit) */
  }
  if (c->word[0] == '@' || (!c->n && c->w > 1)) offer_functions(s, c);
}

/* Op names (:doc); with `@` and `%` also functions and variables (:info). */
static void offer_ops(const Session *s, Cands *c) {
  if (c->w != 1) return;
  if (c->word[0] == '@') offer_functions(s, c);
  if (c->word[0] == '%') offer_vars(s, c);
  for (int i = 0; c->word[0] != '@' && c->word[0] != '%' && i < ops_count(); i++)
    offer(c, "", ops_get(i)->name, "");
}

/* A setting's name, then its values (from the settings table). */
static void offer_setting(Cands *c, const char *line) {
  if (c->w == 1) {
    for (int i = 0; i < setting_count(); i++) offer(c, "", setting_get(i)->name, "");
    return;
  }
  char name[64];
  size_t b = strcspn(line, " \t");
  b += strspn(line + b, " \t");
  snprintf(name, sizeof name, "%.*s", (int)strcspn(line + b, " \t"), line + b);
  const Setting *st = setting_lookup(name);
  if (c->w == 2 && st && st->o.values) offer_list(c, "", st->o.values, "");
}

static void offer_defs(const Session *s, Cands *c) {
  offer(c, "", "prelude", "");
  offer_globals(s, c);
  offer_types(s, c, false);
}

static void offer_dump(const Session *s, Cands *c) {
  static const char *const what[] = {"tir", "llvm", "asm", NULL};
  if (c->w == 1)
    offer_list(c, "", what, "");
  else
    offer_globals(s, c);
}

/* @globals and %variables; any other word is a file name (true). */
static bool offer_data(const Session *s, Cands *c) {
  if (c->word[0] == '@') offer_globals(s, c);
  if (c->word[0] == '%') offer_vars(s, c);
  return c->word[0] != '@' && c->word[0] != '%';
}

/* The arguments of a `:` command: the row's completion kind decides. */
static bool offer_command_args(const Session *s, Cands *c, const char *line, int start) {
  const char *cmd = line_command(line);
  switch (cmd ? cmd_completion(cmd) : COMPLETE_NONE) {
    case COMPLETE_NONE:
      return false;
    case COMPLETE_FILE:
      return true;
    case COMPLETE_COMMAND:
      if (c->w == 1) offer_list(c, "", cmd_names(), "");
      return false;
    case COMPLETE_SETTING:
      offer_setting(c, line);
      return false;
    case COMPLETE_PASS:
      offer_passes(s, c);
      return false;
    case COMPLETE_DEF:
      if (c->w == 1) offer_defs(s, c);
      return false;
    case COMPLETE_EXPR:
      offer_expression(s, c, line, start);
      return false;
    case COMPLETE_DUMP:
      offer_dump(s, c);
      return false;
    case COMPLETE_DATA:
      return offer_data(s, c);
    case COMPLETE_OP:
      offer_ops(s, c);
      return false;
  }
  return false;
}

bool complete_word(const Session *s, const char *line, int start, int end, PtrVec *out) {
  Cands c = {line + start, (size_t)(end - start), out, word_index(line, start)};
  if (line[0] != ':') return offer_expression(s, &c, line, start), false;
  if (start == 0) return offer_list(&c, ":", cmd_names(), ""), false;
  return offer_command_args(s, &c, line, start);
}
