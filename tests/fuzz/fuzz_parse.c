/* fuzz_parse.c — libFuzzer target: the lexer and parser on arbitrary text
 * (a script over the prelude's module), then on a range of it as a
 * session reads a script's part between command lines and a command's
 * expression (ParseOptions.from/to, cut anywhere, even inside a token).
 * Any input must give a module or diagnostics, never a sanitizer report. */
#include "tests/fuzz/fuzz_text.h"

/* [from, to) from the first and last bytes. */
static void parse_range(const uint8_t *data, size_t size, DiagCtx *d) {
  if (size < 2) return;
  uint32_t from = (uint32_t)(data[0] * size / 256);
  uint32_t to = (uint32_t)(size - data[size - 1] * (size - from) / 256);
  uint32_t file = diag_add_source(d, "range.rly", (const char *)data, size);
  Arena a;
  arena_init(&a);
  Module *m = module_new(&a);
  ParseOptions po = {.from = from, .to = to};
  ParseResult r = parse_script(m, d, file, &po);
  (void)r;
  Module *m2 = module_new(&a);
  (void)parse_expr(m2, d, file, &po);
  module_free(m2);
  module_free(m);
  arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = fuzz_text_module(data, size, &a, &d, false);
  if (m) module_free(m);
  parse_range(data, size, &d);
  diag_free(&d);
  arena_free(&a);
  return 0;
}
