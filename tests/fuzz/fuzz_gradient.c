/* fuzz_gradient.c — libFuzzer target: a program that parses and type-checks
 * goes through the Gradient pass (`:pass Gradient @f`) once per function it
 * defines (up to GRAD_MAX_FUNCS, in order), each from the checked program;
 * the module a run makes must pass the verifier (type check included), and
 * is then fused as the jit mode would (FuseOps, verified too).  Gradient
 * may reject a function with a diagnostic (an op without a rule, a closure
 * parameter holding float tensors); a sanitizer report, or a module that
 * fails the verifier after a run that succeeded, is a finding (the target
 * aborts).  The prelude's functions are not differentiated: they are the
 * same in every input. */
#include <stdio.h>
#include <stdlib.h>

#include "passes/pass.h"
#include "tests/fuzz/fuzz_text.h"
#include "types/types.h"

/* Enough to reach every function of the seeds, few enough that one input
 * stays fast. */
enum { GRAD_MAX_FUNCS = 4, GRAD_INPUT_FILE = 2 };

/* Renders the diagnostics and aborts: a finding. */
static void broken(DiagCtx *d, const char *what, const char *name) {
  diag_render(d, stderr, 0, false);
  fprintf(stderr, "fuzz_gradient: %s of @%s broke the verifier\n", what, name);
  abort();
}

/* Gradient of @name, then FuseOps on what it made; either may reject. */
static void differentiate(Module *m, const char *name, Arena *a, DiagCtx *d) {
  Span none = {0};
  Module *g = pass_run_arg(pass_lookup("Gradient"), m, a, d, NULL, NULL, name, none);
  if (!g) return;
  if (!pass_verify(g, d)) broken(d, "Gradient", name);
  Module *f = pass_run(pass_lookup("FuseOps"), g, a, d, NULL);
  if (f && !pass_verify(f, d)) broken(d, "FuseOps after Gradient", name);
  if (f && f != g) module_free(f);
  if (g != m) module_free(g);
}

/* The input's own functions (its file, not the prelude's), in order. */
static void differentiate_all(Module *m, Arena *a, DiagCtx *d) {
  int done = 0;
  for (int i = 0; i < m->ndefs && done < GRAD_MAX_FUNCS; i++) {
    const Def *def = &m->defs[i];
    uint32_t off;
    if (def->kind != DEF_FUNC) continue;
    if (diag_span_source(d, def_span(def), &off) != diag_source(d, GRAD_INPUT_FILE)) continue;
    differentiate(m, def->u.func->name, a, d);
    done++;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = fuzz_text_module(data, size, &a, &d, true);
  if (m) {
    differentiate_all(m, &a, &d);
    module_free(m);
  }
  diag_free(&d);
  arena_free(&a);
  return 0;
}
