/* fuzz_eval.c — libFuzzer target: a script that parses and type-checks is
 * run as `rly` runs one, on the reference kernels and the TIR interpreter
 * (no JIT): its top-level expressions up to the first session let, then
 * @main() when @main takes no parameters.  A step budget, a call depth
 * limit and a small memory limit keep every input short and small: running
 * out of any of them is an error like any other run-time error (a
 * diagnostic), never a hang, an out-of-memory or a sanitizer report. */
#include <stdint.h>

#include "interp/interp.h"
#include "rt/rt.h"
#include "tests/fuzz/fuzz_text.h"
#include "types/types.h"

/* Small enough that the slowest kernels (products, convolutions on
 * operands of this size) take well under the fuzzer's timeout. */
enum { FUZZ_EVAL_STEPS = 200000, FUZZ_EVAL_DEPTH = 2000 };
#define FUZZ_EVAL_MEMORY ((size_t)1 << 20)

/* Evaluates the items a session would before it binds a variable. */
static void run_items(Interp *in, Module *m, const ParseResult *r) {
  for (int i = 0; i < r->nitems; i++) {
    const ScriptItem *it = &r->items[i];
    if (it->kind == ITEM_LET) return;
    if (it->kind == ITEM_EXPR) interp_eval(in, m, it->expr);
  }
}

/* @main() when @main is a function of no parameters. */
static void run_main(Interp *in, Module *m, Arena *a, DiagCtx *d) {
  FuncDef *f = module_func(m, "main");
  if (!f || f->fn->nparams) return;
  Span none = {0};
  Expr *call = expr_call(a, expr_global(a, "main", none), 0, NULL, NULL, none);
  if (ty_check_expr(m, call, d)) interp_eval(in, m, call);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  ParseResult r;
  Module *m = fuzz_text_script(data, size, &a, &d, true, &r);
  if (m) {
    rt_set_max_bytes(FUZZ_EVAL_MEMORY);
    Interp *in = interp_new(&d);
    InterpOptions *o = interp_options(in);
    o->exec_jit = false, o->max_steps = FUZZ_EVAL_STEPS, o->max_depth = FUZZ_EVAL_DEPTH;
    run_items(in, m, &r);
    run_main(in, m, &a, &d);
    interp_free(in);
    module_free(m);
  }
  diag_free(&d);
  arena_free(&a);
  return 0;
}
