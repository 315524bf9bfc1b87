/* pass.h — the pass manager: the table of module passes, running them
 * (one, or a comma list), reporting every rewrite through one hook (for
 * `:step`), a per-definition diff of the printed text (for `:pass`), and
 * the verifier behind `:set verify on`.
 *
 * A pass never edits its input: it returns a NEW module (module_copy plus
 * replaced definitions) that shares every unchanged node, so the caller can
 * keep the old module for `:undo`.  The passes (PASS_LIST below, the one
 * list; in passes/ unless a folder is named):
 *   ToANormalForm          anf.c        every non-atomic subexpression let-bound
 *   ToBasicBlockNormalForm bbnf.c       flat blocks; control flow only as let values
 *   EffectToState          effect_to_state.c  state globals become parameters/results
 *   CheckKeyLinearity      verify.c     a RandState key used twice is an error (types/linearity.c)
 *   FuseOps                lower/fuse_ops.c  pure op calls grouped into Primitive functions
 *   JitFuseOps             lower/fuse_ops.c  the same with the jit mode's options
 *   BindParams             bind_params.c  parameters named in a tensor file become constants
 *   FoldConstant           fold_constant.c  calls on constants evaluated (reference kernels)
 *   SimplifyInference      simplify_inference.c  normalizations and dropout as arithmetic
 *   FoldScaleAxis          fold_scale_axis.c  per-channel scales folded into conv/dense weights
 *   AlterOpLayout          alter_layout.c  conv2d in blocked layouts (NCHW16c), the ops after it
 *   FastMath               fast_math.c  float32 exp/tanh/erf/softmax to TVM's fast_* forms
 *   Gradient               ad/gradient.c, ad/gradient_ho.c  @f_grad: reverse-mode derivative of @f
 * (FoldConstant to FastMath share the dataflow rewriter of graph.c).  The
 * passes of ad/ and lower/ are stages above this folder: the table names
 * their entry points, which are defined there.
 *
 * A run may have a scope (PassScope: `:pass FuseOps @f`, or the user's
 * definitions without the prelude): a function-local pass (PassDef.local)
 * rewrites only the definitions in scope; a whole-module pass still rewrites
 * what it must (EffectToState changes the callers of a function whose
 * signature changes), so the result is correct either way.  Rewrites outside
 * the scope are not reported to the hook, and the diff shows only the
 * definitions in scope (PassResult.outside names the others that changed).
 *
 * Usage from the REPL / CLI:
 *   PassResult r;
 *   PassOptions o = pass_options_default();
 *   if (pass_pipeline("ToANormalForm,EffectToState", m, arena, d, &o, &r)) {
 *     puts(r.diff);  keep r.module  ...
 *   }
 *   pass_result_free(&r);
 *
 * `:step NAME`: run pass_run (or pass_pipeline) with a hook; the hook gets
 * each rewrite in order (pass_rewrite_format renders it) and returns false
 * to stop — the pass then yields NULL and the module stays as it was. */
#ifndef RLY_PASS_H
#define RLY_PASS_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* One rewrite, as the hook sees it.  `before` is the node of the input the
 * rule rewrote (its span is the location); `after` its replacement (NULL:
 * removed).  Rewrites that are not about one expression (a signature) give
 * texts instead. */
typedef struct PassRewrite {
  const char *pass;        /* "EffectToState" */
  const char *rule;        /* "read-state", "bind", ... (see each pass) */
  const char *func;        /* "@func1", or NULL */
  const Function *context; /* the input function the rewrite is in (numbering of %N), or NULL */
  const Expr *before, *after;
  const char *before_text, *after_text; /* used when the Expr is NULL */
  Span span;
} PassRewrite;

/* Returns false to stop the pass (`q` in :step). */
typedef bool (*PassHookFn)(void *user, const PassRewrite *rw);

typedef struct PassHook {
  PassHookFn fn;
  void *user;
} PassHook;

typedef struct PassCtx PassCtx; /* a running pass (passes/pass_int.h) */
typedef Module *(*PassFn)(PassCtx *pc, Module *in);

/* X(name, function, result must type-check, needs a type-checked input,
 *   function-local (each definition rewritten on its own), description) */
#define PASS_LIST(X)                                                                         \
  X("ToANormalForm", pass_to_anf, true, false, true,                                         \
    "bind every non-atomic subexpression to a variable (A-normal form, TVM's)")              \
  X("ToBasicBlockNormalForm", pass_to_bbnf, true, false, true,                               \
    "flatten each block into one let chain; if/match only as a binding or a result")         \
  X("EffectToState", pass_effect_to_state, true, false, false,                               \
    "thread state globals (@prng_state) through functions as a parameter and a result")      \
  X("CheckKeyLinearity", pass_check_key_linearity, true, true, false,                        \
    "error when a RandState key is used twice (seed 000: keys are linear)")                  \
  X("FuseOps", pass_fuse_ops, true, true, true,                                              \
    "group pure op calls into Primitive functions (TVM's FuseOps rules)")                    \
  X("JitFuseOps", pass_fuse_ops_jit, true, true, true,                                       \
    "FuseOps with the jit's options: scalar arithmetic and ops without a TIR compute rule "  \
    "stay out of groups (the groups the jit compiles)")                                      \
  X("BindParams", pass_bind_params, true, false, false,                                      \
    "parameters named in a tensor file become constants (:bind @f FILE, rly --params)")      \
  X("FoldConstant", pass_fold_constant, true, true, true,                                    \
    "evaluate op calls on constants at compile time (TVM's FoldConstant)")                   \
  X("SimplifyInference", pass_simplify_inference, true, true, true,                          \
    "batch_norm, layer/instance/group_norm, l2_normalize and dropout as inference "          \
    "arithmetic")                                                                            \
  X("FoldScaleAxis", pass_fold_scale_axis, true, true, true,                                 \
    "fold per-channel multiplies into conv2d/dense weights (TVM's FoldScaleAxis)")           \
  X("AlterOpLayout", pass_alter_op_layout, true, true, true,                                 \
    "conv2d to the blocked nn.contrib_conv2d_NCHWc, conv3d weights to DHWIO; elementwise "   \
    "ops, pools and channel concatenates follow")                                            \
  X("FastMath", pass_fast_math, true, true, true,                                            \
    "float32 exp/tanh/erf/softmax/sigmoid to TVM's fast_* approximations; power(x, 2|3) to " \
    "products")                                                                              \
  X("FakeQuantizationToInteger", pass_fake_quantization_to_integer, true, true, true,        \
    "a conv2d/dense/matmul of dequantized 8-bit tensors (ONNX QDQ) as the integer qnn op, "  \
    "dequantized once")                                                                      \
  X("Gradient", pass_gradient, true, true, false,                                            \
    "reverse-mode AD of @f (`:pass Gradient @f`, `--pass Gradient=@f`): defines @f_grad "    \
    "returning (value, (d_param1, ...))")

#define X(n, f, t, ty, l, d) Module *f(PassCtx *pc, Module *in);
PASS_LIST(X)
#undef X

/* Does m call a convolution, nn.dense or nn.matmul (so AlterOpLayout may have
 * work to do)? */
bool alter_op_layout_applies(const Module *m);
/* Does m call an op FastMath rewrites (exp, tanh, erf, nn.softmax, power)? */
bool fast_math_applies(const Module *m);

typedef struct PassDef {
  const char *name;
  PassFn run;
  bool must_typecheck; /* the result must type-check (checked under verify) */
  bool needs_types;    /* the input is type-checked first (Expr.ty) */
  bool local;          /* each definition is rewritten on its own (a scope limits it) */
  const char *doc;     /* one line, for :passes */
} PassDef;

/* The definitions a run is about (see the top).  has: is d in scope? */
typedef struct PassScope {
  bool (*has)(void *user, const Def *d);
  void *user;
  const char *func; /* "f" when the scope is one function `@f` (Gradient's argument), or NULL */
} PassScope;

int pass_count(void);
const PassDef *pass_get(int i);
/* By name, case-insensitively; NULL if unknown. */
const PassDef *pass_lookup(const char *name);

/* Runs one pass on `in` and returns the new module (allocated in a, sharing
 * unchanged nodes with in), or NULL after diagnostics or when the hook
 * stopped.  hook may be NULL. */
Module *pass_run(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook);
/* The same limited to a scope (NULL: the whole module). */
Module *pass_run_scoped(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                        const PassScope *scope);
/* The same with the pass's argument (`Gradient=@f` gives "f"; NULL: the
 * scope's function, if any) and where the pass was named (its errors). */
Module *pass_run_arg(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                     const PassScope *scope, const char *arg, Span where);
/* Same, with the pass's input besides the module (PassCtx.input: BindParams'
 * spec) instead of a side table. */
Module *pass_run_input(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                       const PassScope *scope, const char *arg, Span where, const void *input);

/* `:set print-after-all on`, `rly --print-after-all`: called with the
 * module after each pass of a pipeline (pass_print_after prints it). */
typedef struct PassAfter {
  void (*fn)(void *user, const char *pass, const Module *m);
  void *user;
} PassAfter;

typedef struct PassOptions {
  bool verify;            /* type-check and verify after every pass (:set verify on) */
  bool typecheck;         /* type-check the final module (so it can run); default true */
  const PassHook *hook;   /* :step; NULL otherwise */
  const PassScope *scope; /* NULL: the whole module */
  Span where;             /* where the pass names were written (for "unknown pass") */
  const PassAfter *after; /* print-after-all; NULL otherwise */
} PassOptions;

PassOptions pass_options_default(void);

typedef struct PassResult {
  Module *module;        /* the final module, or NULL */
  char *diff;            /* malloc'd: pass_diff_scoped(in, module, opt->scope) */
  char *outside;         /* malloc'd: "@g @h", changed definitions out of scope; or NULL */
  bool changed;          /* some definition's text changed (in scope or not) */
  bool stopped;          /* the hook stopped a pass */
  const PassDef *failed; /* the pass that failed or broke an invariant, or NULL */
} PassResult;

/* Runs the passes named in `names` (separated by commas and/or spaces) in
 * order; `NAME=@f` gives a pass its function (Gradient).  On success fills r (module + diff) and
 * returns true; otherwise diagnostics name the pass (an unknown name gets a suggestion). */
bool pass_pipeline(const char *names, Module *in, Arena *a, DiagCtx *d, const PassOptions *opt,
                   PassResult *r);
void pass_result_free(PassResult *r);

/* A unified-style diff of the printed definitions (each def on its own:
 * `--- @f` / `+++ @f` and hunks), or "no change\n".  malloc'd. */
char *pass_diff(const Module *before, const Module *after);
/* The line diff of two texts under the heading `--- key` / `+++ key`
 * ("no change\n" when they are the same); malloc'd. */
char *text_diff(const char *key, const char *before, const char *after);
/* The diff of the definitions in scope (decided on the definition before the
 * change, so a rewritten prelude function still counts as the prelude's);
 * *outside (may be NULL) gets the keys of the other changed definitions,
 * space separated (malloc'd), or NULL when there are none. */
char *pass_diff_scoped(const Module *before, const Module *after, const PassScope *scope,
                       char **outside);

/* print-after-all's text: each definition of m in scope (NULL: all), a
 * function or a prim function, after a header line
 * `; *** IR after PASS on @f ***`, to out. */
void pass_print_after(FILE *out, const char *pass, const Module *m, const PassScope *scope);

/* Type checks m and verifies structural invariants (every variable bound
 * before use and bound once, globals defined, TIR verified).  False after
 * diagnostics. */
bool pass_verify(Module *m, DiagCtx *d);

/* A rewrite as text for :step (malloc'd):
 *   [rule] in @f at file:line:col
 *     before: ...
 *     after:  ...
 * Snippets longer than max_lines are cut ("..."); d gives line/col (may be NULL). */
char *pass_rewrite_format(const PassRewrite *rw, DiagCtx *d, int max_lines);

/* BindParams (bind_params.c): its input besides the module — the function
 * and the named tensors (IR constants, e.g. rt_tensor_to_ir of a tensor
 * file's entries).  `source` names the file in messages; `where` is the
 * span of the command that asked.  pass_bind runs the pass with the spec
 * as its input (PassCtx.input; rewrites reach the hook as rule "bind"); NULL after
 * diagnostics naming both sides of a mismatch. */
typedef struct BindParamsSpec {
  const char *func; /* "main" for @main */
  int n;
  const char *const *names; /* "w" or "%w" */
  Tensor *const *values;
  const char *source;
  Span where;
} BindParamsSpec;

Module *pass_bind(const BindParamsSpec *s, Module *in, Arena *a, DiagCtx *d, const PassHook *hook);

#endif
