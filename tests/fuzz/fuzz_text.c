/* fuzz_text.c — the shared part of the text fuzz targets (fuzz_text.h).
 * The prelude is parsed and checked once per process into a base module;
 * each input gets a fresh DiagCtx whose file 0 is the prelude's text again,
 * so that the base module's spans name a file of that context. */
#include "tests/fuzz/fuzz_text.h"

#include <stdlib.h>

#include "types/types.h"

extern const char rly_prelude_text[];
extern const size_t rly_prelude_len;

static Module *base;

/* The checked prelude (an empty module if it does not check, which the
 * test suite would have caught). */
static Module *prelude_module(void) {
  static Arena arena;
  static DiagCtx d;
  if (base) return base;
  arena_init(&arena);
  diag_init(&d);
  uint32_t file = diag_add_source(&d, "<prelude>", rly_prelude_text, rly_prelude_len);
  base = module_new(&arena);
  ParseResult r = parse_script(base, &d, file, NULL);
  if (!r.ok || !ty_check_module(base, &d)) base = module_new(&arena);
  return base;
}

/* Type-checks the top-level expressions up to the first session let (a
 * later expression may name its variable, which only a session types). */
static bool check_items(Module *m, const ParseResult *r, DiagCtx *d) {
  for (int i = 0; i < r->nitems; i++) {
    const ScriptItem *it = &r->items[i];
    if (it->kind == ITEM_LET) return true;
    if (it->kind == ITEM_EXPR && !ty_check_expr(m, it->expr, d)) return false;
  }
  return true;
}

Module *fuzz_text_script(const uint8_t *data, size_t size, Arena *a, DiagCtx *d, bool check,
                         ParseResult *items) {
  Module *b = prelude_module();
  diag_add_source(d, "<prelude>", rly_prelude_text, rly_prelude_len);
  uint32_t file = diag_add_source(d, "fuzz.rly", (const char *)data, size);
  Module *m = module_copy(b, a);
  ParseResult r = parse_script(m, d, file, NULL);
  if (items) *items = r;
  if (r.ok && (!check || (ty_check_module(m, d) && check_items(m, &r, d)))) return m;
  module_free(m);
  return NULL;
}

Module *fuzz_text_module(const uint8_t *data, size_t size, Arena *a, DiagCtx *d, bool check) {
  return fuzz_text_script(data, size, a, d, check, NULL);
}
