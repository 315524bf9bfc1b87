/* test_interp.c — the evaluator: values of small programs, closures,
 * recursion (tail calls in constant space, the depth limit), refs and state
 * globals, ADTs and match, run-time shape checks, errors with call stacks,
 * and the collector keeping a long loop in bounded memory. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "interp/interp_int.h"
#include "parser/parser.h"
#include "passes/passes.h"
#include "tests/unit/check.h"

typedef struct Env {
  Arena arena;
  DiagCtx diag;
  Module *mod;
  Interp *in;
} Env;

static void env_init(Env *e, const char *defs) {
  arena_init(&e->arena);
  diag_init(&e->diag);
  e->mod = module_new(&e->arena);
  e->in = interp_new(&e->diag);
  uint32_t f = diag_add_source(&e->diag, "<defs>", defs, strlen(defs));
  bool ok = parse_module(e->mod, &e->diag, f) && ty_check_module(e->mod, &e->diag);
  if (!ok) diag_render(&e->diag, stderr, 0, false);
  CHECK(ok);
}

static void env_free(Env *e) {
  interp_free(e->in);
  module_free(e->mod);
  diag_free(&e->diag);
  arena_free(&e->arena);
}

/* Evaluates src; returns the printed value or the first error message. */
static char *eval_str(Env *e, const char *src) {
  size_t before = e->diag.n;
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

static void expect(Env *e, const char *src, const char *want) {
  char *got = eval_str(e, src);
  CHECK_STREQ(got, want);
  free(got);
}

static const char *defs =
    "type L[A] { C(A, L[A]), N }\n"
    "def @count(%n: int64, %acc: int64) -> int64 {\n"
    "  if (%n == 0i64) { %acc } else { @count(%n - 1i64, %acc + 1i64) }\n"
    "}\n"
    "def @deep(%n: int64) -> int64 {\n"
    "  if (%n == 0i64) { 0i64 } else { add(@deep(%n - 1i64), 1i64) }\n"
    "}\n"
    "def @build(%n: int32, %l: L[int32]) -> L[int32] {\n"
    "  if (%n == 0) { %l } else { @build(%n - 1, C(%n, %l)) }\n"
    "}\n"
    "def @len[A](%l: L[A]) -> int32 {\n"
    "  match (%l) { C(_, %t) => add(1, @len(%t)), N => 0 }\n"
    "}\n"
    "def @pair(%x: Tensor[(n), float32], %y: Tensor[(n), float32]) -> Tensor[(n), float32] {\n"
    "  add(%x, %y)\n"
    "}\n"
    "global @counter: int32 = 40;\n"
    "def @bump() -> int32 {\n"
    "  %0 = ref(@counter);\n"
    "  %1 = %0^;\n"
    "  %0 := add(%1, 2);\n"
    "  %1\n"
    "}\n"
    "def @key() -> RandState { ref(@prng_state)^ }\n"
    "def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }\n"
    "def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }\n"
    "def @inner(%x: Tensor[(2), float32]) { divide(1, 0) }\n"
    "def @outer(%x: Tensor[(2), float32]) { @inner(%x) }\n";

static void test_basics(Env *e) {
  expect(e, "add(1f, 2f)", "3f");
  expect(e, "multiply([1f, 2f], [[1f], [3f]])", "[[1f, 2f],\n [3f, 6f]]");
  expect(e, "let %x = 3i64; let %y = add(%x, %x); (%x, %y)", "(3i64, 6i64)");
  expect(e, "(1, (2f,), ())", "(1, (2f,), ())");
  expect(e, "let %f = fn (%a: int32) { add(%a, 10) }; %f(5)", "15");
  expect(e, "let %k = 7; let %f = fn (%a: int32) { add(%a, %k) }; %f(1)", "8");
  expect(e, "if (less(1, 2)) { 10 } else { 20 }", "10");
  expect(e, "C(1f, C(2f, N))", "C(1f, C(2f, N))");
  expect(e, "@len(C(1f, C(2f, N)))", "2");
  expect(e, "let %r = ref(1); %r := 5; %r^", "5");
  expect(e, "@even(1001)", "False");
}

static void test_recursion(Env *e) {
  expect(e, "@count(1000000i64, 0i64)", "1000000i64"); /* tail calls: constant space */
  expect(e, "@len(@build(90000, N))", "90000");          /* non-tail, deep */
  interp_options(e->in)->max_depth = 1000;
  expect(e, "@deep(5000i64)", "recursion limit 1000 reached in @deep (set it with :set max-depth N)");
  interp_options(e->in)->max_depth = 100000;
  expect(e, "@deep(5000i64)", "5000i64");
}

static void test_state_and_errors(Env *e) {
  expect(e, "@bump()", "40");
  expect(e, "@bump()", "42");
  expect(e, "@counter", "44");
  expect(e, "@key()", "random.wrap_key([0u32, 0u32])");
  expect(e, "@pair([1f, 2f], [3f, 4f])", "[4f, 6f]");
  size_t before = e->diag.n;
  expect(e, "@outer([1f, 2f])", "divide: integer division by zero");
  CHECK(e->diag.n >= before + 2); /* the error and the call stack (@outer tail-calls @inner) */
  CHECK(e->diag.items[before + 1].level == DIAG_NOTE);
  CHECK(strstr(e->diag.items[before + 1].msg, "@inner") != NULL);
  expect(e, "add(1f, 1f)", "2f"); /* still usable */
}

static void test_memory(Env *e) {
  /* A long loop allocating values: the heap stays small. */
  expect(e, "@count(300000i64, 0i64)", "300000i64");
  size_t live = interp_gc(e->in);
  CHECK(live < 1000);
}

int main(void) {
  Env e;
  env_init(&e, defs);
  test_basics(&e);
  test_recursion(&e);
  test_state_and_errors(&e);
  test_memory(&e);
  env_free(&e);
  return check_report("test_interp");
}
