/* inspect.h — what the shells (repl/, the command line) ask of the stages
 * below the engine, as engine functions: the JIT's kernels (:kernels,
 * :dump, :time), checking a built expression or module, external
 * functions (:extern, :save's capture), the pass table and pipelines
 * (:passes, :pass, :step), tensor files (:save, :load-tensor, :bind,
 * --params, --import's weights; tensor_files.c), the interrupt flag and the
 * end of background compiles.  The shells include engine/ headers only
 * (tests/layers.py); most of these forward. */
#ifndef RLY_ENGINE_INSPECT_H
#define RLY_ENGINE_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "interp/extern.h"
#include "jit/jit.h"

/* The JIT: NULL when it is available, else why not (loads it). */
const char *engine_jit_unavailable(void);
/* The compiled kernels, in compile order (JitKernelInfo, jit/jit.h). */
int engine_jit_kernel_count(void);
/* RLY_JIT_PASSES's LLVM pipeline, "" for default<On> (jit_passes_name). */
const char *engine_jit_passes(void);
bool engine_jit_kernel_info(int i, JitKernelInfo *out);
/* f's kernel as optimized LLVM IR (what "llvm") or assembly ("asm") into
 * b; false with the reason in err. */
bool engine_jit_dump(const PrimFunc *f, const char *what, StrBuf *b, char *err, size_t n);
/* Waits for compiles a Ctrl-C left running (before exit). */
void engine_quiesce(void);
/* Drops a Ctrl-C from before the next input (engine_interrupt sets it). */
void engine_interrupt_clear(void);

/* ── what each stage holds for an op (:doc, --list-ops) ── */

/* How the op at registry index `op` is differentiated. */
typedef enum EngineOpGrad {
  ENGINE_GRAD_NONE, /* no gradient rule */
  ENGINE_GRAD_ZERO, /* constant almost everywhere in its float operands */
  ENGINE_GRAD_RULE, /* a rule of ad/grad_rules*.c */
} EngineOpGrad;
EngineOpGrad engine_op_grad(int op);
/* Whether the op has a TIR compute rule (lower/compute/). */
bool engine_op_lowers(int op);

/* The LLVM version the JIT was built against ("19.1.7"). */
const char *engine_llvm_version(void);

/* ── passes run at the shell's request (:pass, :step; passes/pass.h) ── */

/* The pass table: how many passes, the i-th (NULL past the end). */
int engine_pass_count(void);
const PassDef *engine_pass_at(int i);
PassOptions engine_pass_options(void);
/* Runs the passes named in `names` on in (pass_pipeline): the result in
 * *r (engine_pass_result_free), false after diagnostics in d. */
bool engine_pass_pipeline(const char *names, Module *in, Arena *a, DiagCtx *d, const PassOptions *o,
                          PassResult *r);
void engine_pass_result_free(PassResult *r);
/* The diff of the definitions in scope; *outside the other changed ones. */
char *engine_pass_diff(const Module *before, const Module *after, const PassScope *scope,
                       char **outside);
/* print-after-all's text of m after `pass` to out. */
void engine_pass_print_after(FILE *out, const char *pass, const Module *m, const PassScope *scope);
/* Type-checks and verifies m (`:set verify on`). */
bool engine_verify_module(Module *m, DiagCtx *d);
/* A rewrite of :step as text (at most max_lines of before and after). */
char *engine_rewrite_format(const PassRewrite *rw, DiagCtx *d, int max_lines);

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

/* ── tensor files: .npy, .npz, .safetensors (tensor_files.c) ── */

/* A file's entries as IR tensors, in file order. */
typedef struct EngineTensors {
  int n;
  const char **names;
  Tensor **values;
} EngineTensors;
/* Reads the file at path into a; false with the reason in err. */
bool engine_tensors_load(const char *path, Arena *a, EngineTensors *out, char *err, size_t n);
/* How many tensors a file of path's extension holds: 1 (.npy), INT_MAX
 * (.npz, .safetensors), 0 when the extension is none of them. */
int engine_tensors_capacity(const char *path);
/* Writes t to path in the format its extension names. */
bool engine_tensors_save(const char *path, const EngineTensors *t, char *err, size_t n);
/* The imported weights (engine_import_onnx) as an .npz file at path (any name),
 * keyed by parameter name; false with the reason in err. */
bool engine_save_weights(const OnnxWeights *w, const char *path, char *err, size_t n);
/* BindParams of @fn from the tensor file at path (rly --params, :bind): the
 * new, type-checked module (allocated in a) or NULL after diagnostics
 * (fn_sp, file_sp: where they were written; where: the command).  *bound
 * (may be NULL) gets the file's tensors. */
Module *engine_bind_file(Module *m, Arena *a, DiagCtx *d, const char *fn, const char *path,
                         Span where, Span fn_sp, Span file_sp, EngineTensors *bound);
/* fn with each constant of more than max_inline elements replaced by a
 * global @__rly_meta_N, N counting from 0 (allocated in a); consts gets the
 * constants in that order (`:bind`'s meta[relay.Constant][N] printing). */
Function *engine_meta_function(Arena *a, Function *fn, int64_t max_inline, PtrVec *consts);
/* "(2, 3)": a shape as the tensor files' messages write it. */
const char *engine_shape_text(char *buf, size_t n, int ndim, const int64_t *shape);

/* TVMScript in (parser/tvmscript.h): whether a source is TVMScript, whether
 * such text typed at the prompt is complete (two empty lines end it), and
 * its rly text, line for line (NULL after diagnostics in d). */
bool engine_tvmscript_detect(const char *name, const char *text, size_t len);
bool engine_tvmscript_complete(const char *text, size_t len);
char *engine_tvmscript_translate(DiagCtx *d, uint32_t file, size_t *len);

#endif
