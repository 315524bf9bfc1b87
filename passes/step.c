/* step.c — pass_rewrite_format: one rewrite as text for `:step`.
 *
 *   [read-state] in @func1 at seed.rly:3:8
 *     before: %0^
 *     after:  %state
 *
 * The printer numbers graph temporaries `%N` from 0 in each print call, so
 * a snippet printed alone would renumber them (`%2.0` would show as
 * `%0.0`).  To show the numbers of the whole function, the snippet is
 * printed as the body of a function whose parameters are the function's
 * temporaries in text order (the snippet's free ones, and placeholders in
 * between), and the parameter line is cut off.  Functions with more than
 * NUMBERING_MAX temporaries print snippets with the printer's own numbers. */
#include <stdlib.h>
#include <string.h>

#include "passes/pass_int.h"

enum { NUMBERING_MAX = 20000 };

/* ───────────────────────── numbering of a function ───────────────────────── */

typedef struct Numbering {
  PtrMap num; /* Var* → number + 1 */
  size_t count;
} Numbering;

static void number_var(Numbering *nb, Var *v) {
  if (v->is_graph && !ptrmap_has(&nb->num, v))
    ptrmap_put(&nb->num, v, (void *)(uintptr_t)(++nb->count));
}

/* Stops descending once the function has too many temporaries to list. */
static bool number_visit(void *ctx, Expr *e) {
  Numbering *nb = ctx;
  if (nb->count > NUMBERING_MAX) return false;
  if (e->kind == EX_LET) number_var(nb, e->u.let.var);
  if (e->kind == EX_FN)
    for (int i = 0; i < e->u.fn->nparams; i++) number_var(nb, e->u.fn->params[i]);
  return true;
}

static void numbering(Numbering *nb, const Function *fn) {
  for (int i = 0; i < fn->nparams; i++) number_var(nb, fn->params[i]);
  expr_walk(fn->body, number_visit, nb);
}

/* ───────────────────────── snippet ───────────────────────── */

typedef struct Free {
  PtrMap bound, used; /* Var* sets */
} Free;

static void mark_bound(void *ctx, Var *v) { ptrmap_put(&((Free *)ctx)->bound, v, (void *)1); }

static bool free_visit(void *ctx, Expr *e) {
  Free *f = ctx;
  if (e->kind == EX_VAR) ptrmap_put(&f->used, e->u.var, (void *)1);
  expr_binders(e, -1, mark_bound, f);
  return true;
}

/* The snippet wrapped in `fn (%0, ..., %k) { e }`, one parameter per
 * temporary of the function (the snippet's free ones at their numbers), so
 * the printer gives them the function's numbers and numbers new ones after. */
static Expr *wrap(Arena *a, const Expr *e, Numbering *nb) {
  Free f = {0};
  expr_walk((Expr *)e, free_visit, &f);
  size_t max = nb->count;
  Var **ps = ARENA_ARRAY(a, Var *, max ? max : 1);
  for (size_t i = 0; i < max; i++) ps[i] = rw_graph_var(a, e->span);
  for (size_t i = 0; i < f.used.cap; i++) {
    Var *v = (Var *)f.used.keys[i];
    uintptr_t k = v && !ptrmap_has(&f.bound, v) ? (uintptr_t)ptrmap_get(&nb->num, v) : 0;
    if (k) ps[k - 1] = v;
  }
  ptrmap_free(&f.bound);
  ptrmap_free(&f.used);
  Function *fn = ARENA_NEW(a, Function);
  fn->nparams = (int)max, fn->params = ps, fn->body = (Expr *)e, fn->span = e->span;
  return expr_fn(a, fn, e->span);
}

/* The text between the wrapper's first line and its closing brace, dedented. */
static char *unwrap(char *text) {
  char *open = strstr(text, "{\n"), *close = strrchr(text, '}');
  if (!open || !close || close < open) return text;
  StrBuf b = {0};
  for (char *p = open + 2; p < close;) {
    char *nl = memchr(p, '\n', (size_t)(close - p));
    char *end = nl ? nl : close;
    char *s = p;
    for (int k = 0; k < 2 && s < end && *s == ' '; k++) s++;
    if (end > s || nl) sb_putn(&b, s, (size_t)(end - s)), sb_putc(&b, '\n');
    p = nl ? nl + 1 : close;
  }
  free(text);
  while (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = 0;
  return b.len ? sb_take(&b) : (sb_free(&b), strdup(""));
}

static char *snippet(const Expr *e, const Function *context) {
  PrintOptions opt = {.meta_limit = PRINT_DISPLAY_META_LIMIT};
  if (!context) return print_expr(e, opt);
  Numbering nb = {0};
  numbering(&nb, context);
  char *s;
  if (nb.count > NUMBERING_MAX) {
    s = print_expr(e, opt);
  } else {
    Arena a;
    arena_init(&a);
    s = unwrap(print_expr(wrap(&a, e, &nb), opt));
    arena_free(&a);
  }
  ptrmap_free(&nb.num);
  return s;
}

/* ───────────────────────── formatting ───────────────────────── */

/* One labelled snippet, continuation lines aligned under the first, cut
 * after max_lines with `...`. */
static void put_snippet(StrBuf *b, const char *label, const char *text, int max_lines) {
  sb_printf(b, "  %s", label);
  int line = 0;
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (line == max_lines) {
      sb_puts(b, "          ...\n");
      return;
    }
    if (line) sb_puts(b, "          ");
    sb_putn(b, p, n);
    sb_putc(b, '\n');
    line++;
    p += n + (nl ? 1 : 0);
  }
  if (!line) sb_putc(b, '\n');
}

/* `[rule] in @f at file:line:col` then the before and after snippets; a
 * side given only as text (or missing: "(removed)") is shown as it is. */
char *pass_rewrite_format(const PassRewrite *rw, DiagCtx *d, int max_lines) {
  StrBuf b = {0};
  sb_printf(&b, "[%s]", rw->rule);
  if (rw->func) sb_printf(&b, " in %s", rw->func);
  uint32_t off;
  const SourceFile *f = d ? diag_span_source(d, rw->span, &off) : NULL;
  if (f) {
    uint32_t line, col;
    diag_line_col(d, rw->span, &line, &col);
    sb_printf(&b, " at %s:%u:%u", f->name, line, col);
  }
  sb_putc(&b, '\n');
  for (int k = 0; k < 2; k++) {
    const Expr *e = k ? rw->after : rw->before;
    const char *t = k ? rw->after_text : rw->before_text;
    char *s = e ? snippet(e, rw->context) : strdup(t ? t : "(removed)");
    put_snippet(&b, k ? "after:  " : "before: ", s, max_lines > 0 ? max_lines : 1 << 30);
    free(s);
  }
  return sb_take(&b);
}
