/* embed.c — a program that embeds librly and registers its own external
 * function with the C API (interp/extern.h), then runs Relay text that
 * calls it through call_tir and compares it with the Relay op:
 *
 *   build/examples/extern/embed        (built by the main project)
 *
 * Prints the two results and "same" when they agree; exit status 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/extern.h"
#include "interp/interp.h"
#include "ir/diag.h"
#include "parser/parser.h"
#include "types/types.h"

/* env.square: out = x * x, float32, any shape (destination passing). */
static int env_square(DLTensor *a, int n, void *ctx, char *err, size_t errn) {
  (void)ctx;
  if (n != 2 || a[0].dtype.code != kDLFloat || a[0].dtype.bits != 32)
    return snprintf(err, errn, "env.square wants one float32 tensor and an output"), 1;
  int64_t size = 1;
  for (int i = 0; i < a[0].ndim; i++) size *= a[0].shape[i];
  const float *x = a[0].data;
  float *y = a[1].data;
  for (int64_t i = 0; i < size; i++) y[i] = x[i] * x[i];
  return 0;
}

static const char program[] =
    "def @via_extern(%x: Tensor[(2, 2), float32]) {\n"
    "  call_tir(\"env.square\", (%x,), shape=[2, 2], dtype=\"float32\")\n"
    "}\n"
    "def @via_op(%x: Tensor[(2, 2), float32]) { multiply(%x, %x) }\n";

/* Evaluates `text` (an expression) against m; returns the printed value. */
static char *eval(Interp *in, Module *m, DiagCtx *d, const char *text) {
  uint32_t f = diag_add_source(d, "<expr>", text, strlen(text));
  Expr *e = parse_expr(m, d, f, NULL);
  Value *v = e && ty_check_expr(m, e, d) ? interp_eval(in, m, e) : NULL;
  if (!v) diag_render(d, stderr, 0, false);
  return v ? interp_format(in, v) : NULL;
}

/* Registers env.square, checks the program, and evaluates the extern and
 * the op versions in one interpreter; the exit status says whether the two
 * printed results are the same. */
int main(void) {
  rly_register_extern("env.square", env_square, NULL);
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  Module *m = module_new(&arena);
  uint32_t f = diag_add_source(&d, "<program>", program, strlen(program));
  int status = 1;
  if (parse_module(m, &d, f) && ty_check_module(m, &d)) {
    Interp *in = interp_new(&d);
    char *a = eval(in, m, &d, "@via_extern([[1f, -2f], [3f, 0.5f]])");
    char *b = eval(in, m, &d, "@via_op([[1f, -2f], [3f, 0.5f]])");
    if (a && b) {
      printf("extern: %s\nop:     %s\n%s\n", a, b, strcmp(a, b) == 0 ? "same" : "DIFFERENT");
      status = strcmp(a, b) != 0;
    }
    free(a), free(b);
    interp_free(in);
  } else {
    diag_render(&d, stderr, 0, false);
  }
  module_free(m);
  diag_free(&d);
  arena_free(&arena);
  rly_extern_clear();
  return status;
}
