/* harness.h — set-up shared by the C unit tests that parse, type-check and
 * evaluate: an EvalEnv (arena, diagnostics, module, interpreter) built from
 * definitions, an expression evaluated to its printed value (or its first
 * error message), and the i-th diagnostic of a level as "line:col: message".
 * Header-only, like check.h (include check.h first). */
#ifndef RLY_TEST_HARNESS_H
#define RLY_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "parser/parser.h"
#include "types/types.h"

typedef struct EvalEnv {
  Arena arena;
  DiagCtx diag;
  Module *mod;
  Interp *in;
  uint32_t file; /* the definitions' source */
} EvalEnv;

/* Parses and type-checks `defs` ("<defs>"); a failure is a failed CHECK. */
static inline bool eval_env_init(EvalEnv *e, const char *defs) {
  arena_init(&e->arena);
  diag_init(&e->diag);
  e->mod = module_new(&e->arena);
  e->in = interp_new(&e->diag);
  e->file = diag_add_source(&e->diag, "<defs>", defs, strlen(defs));
  bool ok = parse_module(e->mod, &e->diag, e->file) && ty_check_module(e->mod, &e->diag);
  if (!ok) diag_render(&e->diag, stderr, 0, false);
  CHECK(ok);
  return ok;
}

static inline void eval_env_free(EvalEnv *e) {
  interp_free(e->in);
  module_free(e->mod);
  diag_free(&e->diag);
  arena_free(&e->arena);
}

/* Evaluates src: the printed value, or the first error message (malloc'd).
 * *first_diag (may be NULL): the index of the first diagnostic it made. */
static inline char *eval_env_str(EvalEnv *e, const char *src, size_t *first_diag) {
  size_t before = e->diag.n;
  if (first_diag) *first_diag = before;
  uint32_t f = diag_add_source(&e->diag, "<expr>", src, strlen(src));
  Expr *x = parse_expr(e->mod, &e->diag, f, NULL);
  if (!x || !ty_check_expr(e->mod, x, &e->diag)) {
    diag_render(&e->diag, stderr, before, false);
    return strdup("<type error>");
  }
  Value *v = interp_eval(e->in, e->mod, x);
  if (!v) return strdup(e->diag.items[before].msg);
  return interp_format(e->in, v);
}

static inline void eval_env_expect(EvalEnv *e, const char *src, const char *want) {
  char *got = eval_env_str(e, src, NULL);
  CHECK_STREQ(got, want);
  free(got);
}

/* "line:col: message" of the i-th diagnostic of `level` (static buffer). */
static inline const char *diag_at_level(DiagCtx *d, DiagLevel level, int i) {
  static char buf[1024];
  for (size_t k = 0; k < d->n; k++) {
    Diag *g = &d->items[k];
    if (g->level != level || i-- > 0) continue;
    uint32_t line = 0, col = 0;
    diag_line_col(d, g->span, &line, &col);
    snprintf(buf, sizeof buf, "%u:%u: %s", line, col, g->msg);
    return buf;
  }
  return "(no diagnostic)";
}

#endif
