/* fuzz_check.c — libFuzzer target: parse and type-check arbitrary text
 * (definitions, and the top-level expressions a script evaluates). */
#include "tests/fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = fuzz_text_module(data, size, &a, &d, true);
  if (m) module_free(m);
  diag_free(&d);
  arena_free(&a);
  return 0;
}
