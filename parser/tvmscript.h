/* tvmscript.h — TVMScript in: a module as TVM's `mod.script()` and the
 * machine-learning-compilation course write it (`@I.ir_module class M:`,
 * `@T.prim_func`, `@R.function` with `R.dataflow()` and `R.call_tir`),
 * translated line for line into rly text (text-format.md B.5-B.7), which
 * the ordinary parser then reads: line N of the translation holds what
 * line N of the script says, so later diagnostics name the script's lines.
 * Errors in the script itself are `file:line:col: error:` on its text. */
#ifndef RLY_TVMSCRIPT_H
#define RLY_TVMSCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/diag.h"

/* Whether a source is TVMScript: its name ends in `.py`, or its first line
 * that is not blank or a `#` comment is `import tvm`, `from tvm...`,
 * `@tvm.script.ir_module`, `@I.ir_module`, `@T.prim_func` or `@R.function`. */
bool tvms_detect(const char *name, const char *text, size_t len);

/* Whether a script typed at the prompt is complete: it ends with two empty
 * lines (one may separate its functions or statements). */
bool tvms_complete(const char *text, size_t len);

/* The rly text of registered source `file` (malloc'd, *out_len bytes, as
 * many lines as the source), or NULL after an error reported to d;
 * *at_end: that error is at the end of the text (more lines may fix it). */
char *tvms_translate(DiagCtx *d, uint32_t file, size_t *out_len, bool *at_end);

#endif
