/* fuzz_parse.c — libFuzzer target: the lexer and parser on arbitrary text
 * (a script over the prelude's module).  Any input must give a module or
 * diagnostics, never a sanitizer report. */
#include "tests/fuzz/fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = fuzz_text_module(data, size, &a, &d, false);
  if (m) module_free(m);
  diag_free(&d);
  arena_free(&a);
  return 0;
}
