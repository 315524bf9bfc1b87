/* diff.c — pass_diff: what a pass changed, as a unified-style diff of the
 * printed text, one definition at a time (`--- @f` / `+++ @f`, hunks with
 * three lines of context), in the printer's order (types, then the other
 * definitions by name).
 *
 * Definitions whose Def payload is the same pointer in both modules are
 * unchanged without printing (passes share unchanged defs).  With a scope,
 * only the definitions in it are shown; the others that changed are only
 * named.  The line diff trims the common prefix and suffix, then runs an
 * LCS table on what is left when it is small enough (DIFF_MAX_CELLS); past
 * that the middle is shown as removed-then-added. */
#include <stdlib.h>
#include <string.h>

#include "ir/tir.h"
#include "passes/pass_int.h"

enum { DIFF_CONTEXT = 3, DIFF_MAX_CELLS = 4 << 20 };

/* ───────────────────────────── sections ───────────────────────────── */

typedef struct Section {
  const char *key; /* "@f", "type T" */
  const void *ptr; /* the def payload, for the unchanged shortcut */
  const Def *def;
  bool adt;
} Section;

static const void *def_ptr(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return d->u.func;
    case DEF_ADT:
      return d->u.adt;
    case DEF_GLOBAL:
      return d->u.global;
    case DEF_PRIM:
      return d->u.prim;
  }
  return NULL;
}

static const char *def_key(Arena *a, const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return arena_printf(a, "@%s", d->u.func->name);
    case DEF_ADT:
      return arena_printf(a, "type %s", d->u.adt->name);
    case DEF_GLOBAL:
      return arena_printf(a, "@%s", d->u.global->name);
    case DEF_PRIM:
      return arena_printf(a, "@%s", d->u.prim->name);
  }
  return "";
}

static int section_cmp(const void *x, const void *y) {
  const Section *a = x, *b = y;
  if (a->adt != b->adt) return a->adt ? -1 : 1;
  return strcmp(a->key, b->key);
}

static Section *sections(Arena *a, const Module *m, int *n) {
  Section *s = ARENA_ARRAY(a, Section, m->ndefs ? m->ndefs : 1);
  int k = 0;
  for (int i = 0; i < m->ndefs; i++) {
    const Def *d = &m->defs[i];
    if (d->kind == DEF_GLOBAL && d->u.global->builtin) continue;
    s[k++] = (Section){def_key(a, d), def_ptr(d), d, d->kind == DEF_ADT};
  }
  qsort(s, (size_t)k, sizeof *s, section_cmp);
  *n = k;
  return s;
}

/* One definition's canonical text (malloc'd). */
static char *def_text(const Module *m, const Def *d) {
  PrintOptions opt = {.meta_limit = PRINT_DISPLAY_META_LIMIT};
  if (d->kind == DEF_FUNC) {
    StrBuf b = {0};
    print_func_def_to(&b, m, d->u.func, opt);
    if (!b.len || b.data[b.len - 1] != '\n') sb_putc(&b, '\n');
    return sb_take(&b);
  }
  Arena a;
  arena_init(&a);
  Module *one = module_new(&a);
  module_add(one, *d);
  char *s = print_module(one, opt);
  module_free(one);
  arena_free(&a);
  return s;
}

/* ───────────────────────────── lines ───────────────────────────── */

typedef struct Lines {
  char **l;
  size_t n;
} Lines;

static Lines split_lines(char *text) {
  Lines r = {0};
  size_t cap = 0;
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n');
    if (r.n == cap) {
      cap = cap ? cap * 2 : 32;
      r.l = realloc(r.l, cap * sizeof *r.l);
      if (!r.l) rly_oom();
    }
    r.l[r.n++] = p;
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  return r;
}

/* An edit script: op ' ', '-', '+' per output line. */
typedef struct Edit {
  char op;
  const char *text;
} Edit;

typedef struct Script {
  Edit *e;
  size_t n, cap;
} Script;

static void emit(Script *s, char op, const char *text) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->e = realloc(s->e, s->cap * sizeof *s->e);
    if (!s->e) rly_oom();
  }
  s->e[s->n++] = (Edit){op, text};
}

/* LCS on a[0..n) × b[0..m): the table holds suffix lengths. */
static void lcs_middle(Script *s, char **a, size_t n, char **b, size_t m) {
  if ((n + 1) * (m + 1) > DIFF_MAX_CELLS) {
    for (size_t i = 0; i < n; i++) emit(s, '-', a[i]);
    for (size_t j = 0; j < m; j++) emit(s, '+', b[j]);
    return;
  }
  uint32_t *t = calloc((n + 1) * (m + 1), sizeof *t);
  if (!t) rly_oom();
#define T(i, j) t[(i) * (m + 1) + (j)]
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      T(i, j) = strcmp(a[i], b[j]) == 0 ? T(i + 1, j + 1) + 1
                                        : (T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (strcmp(a[i], b[j]) == 0)
      emit(s, ' ', a[i]), i++, j++;
    else if (T(i + 1, j) >= T(i, j + 1))
      emit(s, '-', a[i++]);
    else
      emit(s, '+', b[j++]);
  }
#undef T
  while (i < n) emit(s, '-', a[i++]);
  while (j < m) emit(s, '+', b[j++]);
  free(t);
}

static Script diff_lines(Lines a, Lines b) {
  Script s = {0};
  size_t pre = 0, suf = 0;
  while (pre < a.n && pre < b.n && strcmp(a.l[pre], b.l[pre]) == 0) pre++;
  while (suf < a.n - pre && suf < b.n - pre && strcmp(a.l[a.n - 1 - suf], b.l[b.n - 1 - suf]) == 0)
    suf++;
  for (size_t i = 0; i < pre; i++) emit(&s, ' ', a.l[i]);
  lcs_middle(&s, a.l + pre, a.n - pre - suf, b.l + pre, b.n - pre - suf);
  for (size_t i = a.n - suf; i < a.n; i++) emit(&s, ' ', a.l[i]);
  return s;
}

/* ───────────────────────────── hunks ───────────────────────────── */

static void put_hunk(StrBuf *out, const Script *s, size_t from, size_t to) {
  size_t la = 1, lb = 1, ca = 0, cb = 0;
  for (size_t k = 0; k < from; k++) {
    if (s->e[k].op != '+') la++;
    if (s->e[k].op != '-') lb++;
  }
  for (size_t k = from; k < to; k++) {
    if (s->e[k].op != '+') ca++;
    if (s->e[k].op != '-') cb++;
  }
  sb_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", la, ca, lb, cb);
  for (size_t k = from; k < to; k++) sb_printf(out, "%c%s\n", s->e[k].op, s->e[k].text);
}

/* Groups changes that are at most 2*DIFF_CONTEXT lines apart. */
static void put_hunks(StrBuf *out, const Script *s) {
  size_t k = 0;
  while (k < s->n) {
    while (k < s->n && s->e[k].op == ' ') k++;
    if (k == s->n) break;
    size_t start = k > DIFF_CONTEXT ? k - DIFF_CONTEXT : 0, end = k;
    for (;;) {
      while (end < s->n && s->e[end].op != ' ') end++;
      size_t gap = end;
      while (gap < s->n && s->e[gap].op == ' ' && gap - end < 2 * DIFF_CONTEXT + 1) gap++;
      if (gap < s->n && s->e[gap].op != ' ') {
        end = gap;
        continue;
      }
      end = end + DIFF_CONTEXT < s->n ? end + DIFF_CONTEXT : s->n;
      break;
    }
    put_hunk(out, s, start, end);
    k = end;
  }
}

/* Appends a's and b's diff to out; false when their texts are the same. */
static bool diff_def(StrBuf *out, const char *key, const Module *ma, const Def *a, const Module *mb,
                     const Def *b) {
  char *ta = a ? def_text(ma, a) : NULL, *tb = b ? def_text(mb, b) : NULL;
  if (ta && tb && strcmp(ta, tb) == 0) {
    free(ta);
    free(tb);
    return false;
  }
  sb_printf(out, "--- %s\n+++ %s\n", a ? key : "(none)", b ? key : "(none)");
  Lines la = split_lines(ta), lb = split_lines(tb);
  Script s = diff_lines(la, lb);
  put_hunks(out, &s);
  free(s.e);
  free(la.l);
  free(lb.l);
  free(ta);
  free(tb);
  return true;
}

char *text_diff(const char *key, const char *before, const char *after) {
  if (strcmp(before, after) == 0) return strdup("no change\n");
  StrBuf out = {0};
  char *ta = strdup(before), *tb = strdup(after);
  if (!ta || !tb) abort();
  sb_printf(&out, "--- %s\n+++ %s\n", key, key);
  Lines la = split_lines(ta), lb = split_lines(tb);
  Script s = diff_lines(la, lb);
  put_hunks(&out, &s);
  free(s.e), free(la.l), free(lb.l), free(ta), free(tb);
  return sb_take(&out);
}

/* A changed definition out of scope: its key goes to `outside` when its
 * text changed (the diff itself is dropped). */
static void note_outside(StrBuf *outside, const char *key, const Module *ma, const Def *a,
                         const Module *mb, const Def *b) {
  StrBuf scratch = {0};
  if (diff_def(&scratch, key, ma, a, mb, b))
    sb_printf(outside, "%s%s", outside->len ? " " : "", key);
  sb_free(&scratch);
}

char *pass_diff_scoped(const Module *before, const Module *after, const PassScope *scope,
                       char **outside) {
  Arena a;
  arena_init(&a);
  int na, nb;
  Section *sa = sections(&a, before, &na), *sb = sections(&a, after, &nb);
  StrBuf out = {0}, hidden = {0};
  int i = 0, j = 0;
  while (i < na || j < nb) {
    int c = i == na ? 1 : j == nb ? -1 : section_cmp(&sa[i], &sb[j]);
    if (c == 0 && sa[i].ptr == sb[j].ptr) {
      i++, j++;
      continue;
    }
    const Section *x = c <= 0 ? &sa[i] : NULL, *y = c >= 0 ? &sb[j] : NULL;
    const Def *da = x ? x->def : NULL, *db = y ? y->def : NULL;
    const char *key = x ? x->key : y->key;
    if (!scope || scope->has(scope->user, da ? da : db))
      diff_def(&out, key, before, da, after, db);
    else
      note_outside(&hidden, key, before, da, after, db);
    i += c <= 0, j += c >= 0;
  }
  arena_free(&a);
  if (!out.len) sb_puts(&out, "no change\n");
  if (outside) *outside = hidden.len ? sb_take(&hidden) : NULL;
  sb_free(&hidden);
  return sb_take(&out);
}

char *pass_diff(const Module *before, const Module *after) {
  return pass_diff_scoped(before, after, NULL, NULL);
}
