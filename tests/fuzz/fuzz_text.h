/* fuzz_text.h — what the text fuzz targets (parse, check, passes, eval) share:
 * the input bytes as a registered source, parsed (and checked) into a
 * module that starts from the standard library, as a session's does. */
#ifndef RLY_FUZZ_TEXT_H
#define RLY_FUZZ_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "parser/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a script, in a copy of the prelude's module (in a), with
 * d's file 0 the prelude and file 1 the input; check: type-check the
 * definitions and the expressions before the first session let.  The
 * module, or NULL when it does not parse (or check). */
Module *fuzz_text_module(const uint8_t *data, size_t size, Arena *a, DiagCtx *d, bool check);
/* The same, and *items gets the script's items (in a). */
Module *fuzz_text_script(const uint8_t *data, size_t size, Arena *a, DiagCtx *d, bool check,
                         ParseResult *items);

#endif
