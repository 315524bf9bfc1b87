/* test_interp.c — the evaluator: values of small programs, closures,
 * recursion (tail calls in constant space, the depth limit, the step
 * budget), refs and state
 * globals, ADTs and match, run-time shape checks, errors with call stacks,
 * and the collector keeping a long loop in bounded memory. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "interp/interp_int.h"
#include "parser/parser.h"
#include "tests/unit/check.h"
#include "tests/unit/harness.h"
#include "types/types.h"

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

static void test_basics(EvalEnv *e) {
  eval_env_expect(e, "add(1f, 2f)", "3f");
  eval_env_expect(e, "multiply([1f, 2f], [[1f], [3f]])", "[[1f, 2f],\n [3f, 6f]]");
  eval_env_expect(e, "let %x = 3i64; let %y = add(%x, %x); (%x, %y)", "(3i64, 6i64)");
  eval_env_expect(e, "(1, (2f,), ())", "(1, (2f,), ())");
  eval_env_expect(e, "let %f = fn (%a: int32) { add(%a, 10) }; %f(5)", "15");
  eval_env_expect(e, "let %k = 7; let %f = fn (%a: int32) { add(%a, %k) }; %f(1)", "8");
  eval_env_expect(e, "if (less(1, 2)) { 10 } else { 20 }", "10");
  eval_env_expect(e, "C(1f, C(2f, N))", "C(1f, C(2f, N))");
  eval_env_expect(e, "@len(C(1f, C(2f, N)))", "2");
  eval_env_expect(e, "let %r = ref(1); %r := 5; %r^", "5");
  eval_env_expect(e, "@even(1001)", "False");
}

static void test_recursion(EvalEnv *e) {
  eval_env_expect(e, "@count(1000000i64, 0i64)", "1000000i64"); /* tail calls: constant space */
  eval_env_expect(e, "@len(@build(90000, N))", "90000");        /* non-tail, deep */
  interp_options(e->in)->max_depth = 1000;
  eval_env_expect(e, "@deep(5000i64)",
                  "recursion limit 1000 reached in @deep (set it with :set max-depth N)");
  interp_options(e->in)->max_depth = 100000;
  eval_env_expect(e, "@deep(5000i64)", "5000i64");
}

/* The step budget (InterpOptions.max_steps) stops a loop that would run
 * on, on the scalar fast path and on the general evaluator alike, and a
 * later evaluation gets a fresh budget. */
static void test_step_budget(EvalEnv *e) {
  interp_options(e->in)->max_steps = 100000;
  eval_env_expect(e, "@count(1000000000i64, 0i64)", "step limit 100000 reached");
  eval_env_expect(e, "@len(@build(1000000, N))", "step limit 100000 reached");
  eval_env_expect(e, "@count(1000i64, 0i64)", "1000i64");
  interp_options(e->in)->no_fast = true;
  eval_env_expect(e, "@count(1000000000i64, 0i64)", "step limit 100000 reached");
  interp_options(e->in)->no_fast = false;
  interp_options(e->in)->max_steps = 0;
  eval_env_expect(e, "@count(300000i64, 0i64)", "300000i64");
}

static void test_state_and_errors(EvalEnv *e) {
  eval_env_expect(e, "@bump()", "40");
  eval_env_expect(e, "@bump()", "42");
  eval_env_expect(e, "@counter", "44");
  eval_env_expect(e, "@key()", "random.wrap_key([0u32, 0u32])");
  eval_env_expect(e, "@pair([1f, 2f], [3f, 4f])", "[4f, 6f]");
  size_t before = e->diag.n;
  eval_env_expect(e, "@outer([1f, 2f])", "divide: integer division by zero");
  CHECK(e->diag.n >= before + 2); /* the error and the call stack (@outer tail-calls @inner) */
  CHECK(e->diag.items[before + 1].level == DIAG_NOTE);
  CHECK(strstr(e->diag.items[before + 1].msg, "@inner") != NULL);
  eval_env_expect(e, "add(1f, 1f)", "2f"); /* still usable */
}

static void test_memory(EvalEnv *e) {
  /* A long loop allocating values: the heap stays small. */
  eval_env_expect(e, "@count(300000i64, 0i64)", "300000i64");
  size_t live = interp_gc(e->in);
  CHECK(live < 1000);
}

int main(void) {
  EvalEnv e;
  eval_env_init(&e, defs);
  test_basics(&e);
  test_recursion(&e);
  test_step_budget(&e);
  test_state_and_errors(&e);
  test_memory(&e);
  eval_env_free(&e);
  return check_report("test_interp");
}
