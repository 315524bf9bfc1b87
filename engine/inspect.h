/* inspect.h — what the shells (repl/, the command line) ask of the stages
 * below the engine, as engine functions: the JIT's kernels (:kernels,
 * :dump, :time), checking a built expression or module, external
 * functions (:extern, :save's capture), the imported weights as a tensor
 * file, the interrupt flag and the end of background compiles.  The shells
 * include engine/ headers only (tests/layers.py); these forward. */
#ifndef RLY_ENGINE_INSPECT_H
#define RLY_ENGINE_INSPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/engine.h"
#include "interp/extern.h"
#include "jit/jit.h"

/* The JIT: NULL when it is available, else why not (loads it). */
const char *engine_jit_unavailable(void);
/* The compiled kernels, in compile order (JitKernelInfo, jit/jit.h). */
int engine_jit_kernel_count(void);
bool engine_jit_kernel_info(int i, JitKernelInfo *out);
/* f's kernel as optimized LLVM IR (what "llvm") or assembly ("asm") into
 * b; false with the reason in err. */
bool engine_jit_dump(const PrimFunc *f, const char *what, StrBuf *b, char *err, size_t n);
/* Waits for compiles a Ctrl-C left running (before exit). */
void engine_quiesce(void);
/* Drops a Ctrl-C from before the next input (engine_interrupt sets it). */
void engine_interrupt_clear(void);

/* The LLVM version the JIT was built against ("19.1.7"). */
const char *engine_llvm_version(void);

/* The pass table (passes/pass.h): how many passes, the i-th's name. */
int engine_pass_count(void);
const char *engine_pass_name(int i);

/* Does the op (registry index) have a reference kernel? */
bool engine_op_has_kernel(int op);

/* Type-checks a built expression against m (its type, or NULL after
 * diagnostics in d); a whole module; a module whose definitions were
 * checked before and changed (after passes). */
Type *engine_check_expr(Module *m, Expr *ex, DiagCtx *d);
bool engine_check_module(Module *m, DiagCtx *d);
bool engine_recheck_module(Module *m, DiagCtx *d);

/* External functions for call_tir("NAME", ...): one registered in process
 * (fn NULL removes it), or SYMBOL loaded from LIB (interp/extern.h). */
void engine_register_extern(const char *name, RlyDLExternFn fn, void *ctx);
bool engine_extern_load(const char *name, const char *lib, const char *symbol, char *err, size_t n);

/* The imported weights (engine_import_onnx) as an .npz file at path,
 * keyed by parameter name; false with the reason in err. */
bool engine_save_weights(const OnnxWeights *w, const char *path, char *err, size_t n);

#endif
