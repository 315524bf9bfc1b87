/* fuzz_passes.c — libFuzzer target: a program that parses and type-checks
 * goes through ToANormalForm, ToBasicBlockNormalForm, EffectToState, the
 * jit mode's graph passes SimplifyInference, FoldScaleAxis and
 * AlterOpLayout, and FuseOps (the verifier after each), then every function is fused for
 * lowering and lowered to TIR as the jit mode does, and every prim function
 * made is verified.  A pass may reject a program with a diagnostic; a
 * sanitizer report, or a module that fails the verifier after a pass that
 * succeeded, is a finding (the target aborts). */
#include <stdio.h>
#include <stdlib.h>

#include "lower/lower.h"
#include "passes/pass.h"
#include "tests/fuzz/fuzz_text.h"
#include "types/types.h"

/* Renders the diagnostics and aborts: a finding. */
static void broken(DiagCtx *d, const char *what) {
  diag_render(d, stderr, 0, false);
  fprintf(stderr, "fuzz_passes: %s\n", what);
  abort();
}

/* Fuses and lowers every function of m; the prim functions made must
 * pass the TIR verifier. */
static void lower_all(Module *m, Arena *a, DiagCtx *d) {
  Lowerer *L = lower_new(a, NULL, NULL);
  FuseOptions fo = fuse_options_default();
  fo.need_compute = true;
  for (int i = 0; i < m->ndefs; i++) {
    Def *def = &m->defs[i];
    if (def->kind != DEF_FUNC) continue;
    Function *f = fuse_function(a, m, def->u.func->fn, &fo, NULL);
    lower_function(L, f);
  }
  for (int i = 0; i < lower_prim_count(L); i++)
    if (!tir_verify(m, lower_prim(L, i), d)) broken(d, "lowering");
  lower_free(L);
}

/* The passes one by one, the verifier after each that succeeds; the last
 * module (m itself or a new one), or NULL when a pass rejected the program. */
static Module *run_passes(Module *m, Arena *a, DiagCtx *d) {
  static const char *const names[] = {
      "ToANormalForm", "ToBasicBlockNormalForm", "EffectToState", "SimplifyInference",
      "FoldScaleAxis", "AlterOpLayout",          "FuseOps"};
  Module *cur = m;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    Module *next = pass_run(pass_lookup(names[i]), cur, a, d, NULL);
    if (next && !pass_verify(next, d)) broken(d, names[i]);
    if (cur != m && cur != next) module_free(cur);
    if (!next) return NULL;
    cur = next;
  }
  return cur;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = fuzz_text_module(data, size, &a, &d, true);
  if (m) {
    Module *out = run_passes(m, &a, &d);
    if (out) lower_all(out, &a, &d);
    if (out && out != m) module_free(out);
    module_free(m);
  }
  diag_free(&d);
  arena_free(&a);
  return 0;
}
