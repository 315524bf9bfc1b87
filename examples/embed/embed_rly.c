/* embed_rly.c — a C program that uses rly through its public header only
 * (include/rly.h): it defines a function in Relay text, calls it in jit
 * mode with DLPack tensors, checks every element against the same math in
 * C, calls it again in interp mode and checks the two modes agree, runs a
 * pass, shows that a bad definition yields a located error while the
 * session goes on, and that a load is all or nothing (a load that fails,
 * even at run time, leaves the earlier definitions and variables intact)
 * and may replace the prelude's definitions.
 *
 *   build/examples/embed/embed_rly      (built by meson; run by `make test`)
 *
 * Prints what it checked and "embed: ok"; exit status 0, else 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rly.h"

static const char program[] =
    "def @gelu_bias(%x: Tensor[(n, 8), float32], %b: Tensor[(8), float32]) {\n"
    "  let %y = add(%x, %b);\n"
    "  let %t = tanh(multiply(0.7978846f, add(%y, multiply(0.044715f, power(%y, 3f)))));\n"
    "  (multiply(multiply(0.5f, %y), add(1f, %t)), sum(%y, axis=[1]))\n"
    "}\n";

enum { ROWS = 3, COLS = 8 };

static DLTensor tensor_f32(float *data, int ndim, int64_t *shape) {
  return (DLTensor){.data = data,
                    .device = {kDLCPU, 0},
                    .ndim = ndim,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = shape};
}

static int failures;

static void check(int ok, const char *what) {
  if (!ok) failures++;
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
}

/* The expected results, computed in C in double. */
static void expected(const float *x, const float *b, double *gelu, double *rows) {
  for (int i = 0; i < ROWS; i++) {
    rows[i] = 0;
    for (int j = 0; j < COLS; j++) {
      double y = (double)x[i * COLS + j] + b[j];
      gelu[i * COLS + j] = 0.5 * y * (1 + tanh(0.7978846 * (y + 0.044715 * y * y * y)));
      rows[i] += y;
    }
  }
}

static int close_to(const DLTensor *t, const double *want, int n) {
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32) return 0;
  const float *got = t->data;
  for (int i = 0; i < n; i++)
    if (fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) return 0;
  return 1;
}

/* Calls @gelu_bias and checks both results against C. */
static void call_and_check(rly_session *s, const char *mode, float *out_copy) {
  float x[ROWS * COLS], b[COLS];
  for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)(i % 7) * 0.5f - 1.5f;
  for (int j = 0; j < COLS; j++) b[j] = 0.25f * (float)j - 1.0f;
  int64_t xs[2] = {ROWS, COLS}, bs[1] = {COLS};
  DLTensor args[2] = {tensor_f32(x, 2, xs), tensor_f32(b, 1, bs)};
  DLManagedTensor *res[2];
  int n = 0;
  char what[128];
  snprintf(what, sizeof what, "rly_call @gelu_bias in %s mode", mode);
  int rc = rly_call(s, "gelu_bias", args, 2, res, 2, &n);
  if (rc != 0) fprintf(stderr, "%s", rly_error(s));
  check(rc == 0 && n == 2, what);
  if (rc != 0 || n != 2) return;
  double gelu[ROWS * COLS], rows[ROWS];
  expected(x, b, gelu, rows);
  const DLTensor *g = &res[0]->dl_tensor, *r = &res[1]->dl_tensor;
  check(g->ndim == 2 && g->shape[0] == ROWS && g->shape[1] == COLS, "  result 0 has shape (3, 8)");
  check(close_to(g, gelu, ROWS * COLS), "  result 0 equals C's gelu(x + b)");
  check(r->ndim == 1 && r->shape[0] == ROWS && close_to(r, rows, ROWS),
        "  result 1 equals C's row sums");
  if (out_copy) memcpy(out_copy, g->data, sizeof(float) * ROWS * COLS);
  res[0]->deleter(res[0]);
  res[1]->deleter(res[1]);
}

/* Evaluates expr and checks its printed value contains want (want NULL:
 * the evaluation must fail). */
static void eval_check(rly_session *s, const char *expr, const char *want, const char *what) {
  char *text = NULL;
  int rc = rly_eval(s, expr, &text);
  check(want ? rc == 0 && text && strstr(text, want) : rc != 0, what);
  free(text);
}

/* A load is one transaction: its definitions and session variables stay
 * only if all of it checks and runs; earlier ones are never touched. */
static void check_all_or_nothing(rly_session *s) {
  int rc = rly_load_text(s, "<let>", "let %k = add(2, 3);\n");
  check(rc == 0, "a load binds a session variable");
  eval_check(s, "multiply(%k, 2)", "10", "  later evaluations see it");
  rc = rly_load_text(s, "<fails>",
                     "def @twice(%x: int32) { multiply(%x, 2) }\n"
                     "let %k = @twice(21);\n"
                     "divide(1, 0)\n");
  check(rc != 0 && strstr(rly_error(s), "<fails>:3:"), "a run-time error fails the load, located");
  eval_check(s, "@twice(1)", NULL, "  its definitions are gone");
  eval_check(s, "%k", "5", "  and its variables: %k is the earlier one");
  rc = rly_load_text(s, "<redef>",
                     "def @gelu_bias(%x: Tensor[(n, 8), float32], %b: Tensor[(8), float32]) {\n"
                     "  add(%x, True)\n"
                     "}\n");
  check(rc != 0, "a redefinition that does not check fails");
  call_and_check(s, "jit (after failed loads)", NULL);
  rc = rly_load_text(s, "<option>",
                     "type Option[A] { Nothing, Just(A) }\n"
                     "def @get(%o: Option[int32]) -> int32 {\n"
                     "  match (%o) { Just(%v) => %v, Nothing => 0 }\n"
                     "}\n");
  if (rc != 0) fprintf(stderr, "%s", rly_error(s));
  check(rc == 0, "a program replaces the prelude's type Option");
  eval_check(s, "@get(Just(7))", "7", "  and uses its own");
  eval_check(s, "@length(Cons(1, Nil))", "1", "  the rest of the prelude stays");
}

/* The checks in order: jit and interp results against C and each other, a
 * pass then jit again, a located error for a bad definition, that the
 * session keeps working after errors, and that loads are all or nothing. */
/* Sessions one after another: the kernels the first compiled must not be
 * taken for the second's (its IR may reuse the freed memory), and the
 * second still runs its own definitions compiled. */
static void check_sessions_in_turn(void) {
  static const char *const defs[] = {
      "def @k(%x: Tensor[(4), float32]) { add(%x, 1f) }\n",
      "def @k(%x: Tensor[(4), float32]) { multiply(%x, 3f) }\n",
      "def @k(%x: Tensor[(4), float32]) { add(%x, 1f) }\n",
  };
  static const float want[][4] = {{2, 3, 4, 5}, {3, 6, 9, 12}, {2, 3, 4, 5}};
  for (int i = 0; i < 3; i++) {
    rly_session *t = rly_open(0);
    float x[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    DLTensor in = tensor_f32(x, 1, shape);
    DLManagedTensor *res = NULL;
    int n = 0, ok = t && rly_load_text(t, "<k>", defs[i]) == 0 &&
                    rly_set_exec(t, RLY_EXEC_JIT) == 0 &&
                    rly_call(t, "k", &in, 1, &res, 1, &n) == 0;
    ok = ok && n == 1;
    for (int j = 0; ok && j < 4; j++) ok = ((const float *)res->dl_tensor.data)[j] == want[i][j];
    if (res) res->deleter(res);
    check(ok, i == 1 ? "a second session runs its own @k compiled"
                     : "a session after a closed one runs its own @k compiled");
    rly_close(t);
  }
}

int main(void) {
  rly_session *s = rly_open(0);
  check(s != NULL, "rly_open");
  if (!s) return 1;
  int rc = rly_load_text(s, "<program>", program);
  if (rc != 0) fprintf(stderr, "%s", rly_error(s));
  check(rc == 0, "rly_load_text defines @gelu_bias");
  float jit[ROWS * COLS], interp[ROWS * COLS];
  check(rly_set_exec(s, RLY_EXEC_JIT) == 0, "rly_set_exec jit");
  call_and_check(s, "jit", jit);
  int kernels = rly_kernel_count();
  check(kernels > 0, "jit mode compiled kernels for @gelu_bias");
  check(rly_set_exec(s, RLY_EXEC_INTERP) == 0, "rly_set_exec interp");
  call_and_check(s, "interp", interp);
  check(rly_kernel_count() == kernels, "interp mode compiled no kernel");
  int agree = 1;
  for (int i = 0; i < ROWS * COLS; i++)
    agree &= fabsf(jit[i] - interp[i]) <= 1e-6f * (1 + fabsf(jit[i]));
  check(agree, "jit and interp agree");
  rc = rly_run_passes(s, "ToANormalForm");
  check(rc == 0, "rly_run_passes ToANormalForm");
  rly_set_exec(s, RLY_EXEC_JIT);
  call_and_check(s, "jit after ToANormalForm", NULL);
  rc = rly_load_text(s, "<bad>", "def @h(%x: float32) {\n  add(%x, %nope)\n}\n");
  const char *err = rly_error(s);
  check(rc != 0 && strstr(err, "<bad>:2:") && strstr(err, "^"),
        "a bad definition gives file:line:col and a caret");
  char *text = NULL;
  rc = rly_eval(s, "sum(ones(shape=[4], dtype=\"float32\"))", &text);
  check(rc == 0 && text && strstr(text, "4f"), "rly_eval after an error: the session goes on");
  free(text);
  check(
      rly_call(s, "missing", NULL, 0, NULL, 0, &(int){0}) != 0 && strstr(rly_error(s), "@missing"),
      "calling an unknown function is an error naming it");
  check_all_or_nothing(s);
  rly_close(s);
  check_sessions_in_turn();
  printf("embed: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
