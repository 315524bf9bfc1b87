/* lower.h — FuseOps (fuse_ops.c) and the lowering of fused functions to TIR
 * (lower_tir.c), as a library: the pass FuseOps (passes/pass.h) and the jit
 * execution mode (engine/engine.c) use it.
 *
 * FuseOps groups the pure op calls of each block (a let chain with its
 * result) by TVM's rules (op patterns, post-dominator tree, three phases,
 * a maximum number of ops per group) and turns every group into a
 *   %N = fn (%p0: T0, ..., Primitive=1) -> R { ... };  %M = %N(args...)
 * pair.  Let bindings inside one block are dataflow edges (a let-bound op
 * call used only by ops of the same block can be fused); control flow,
 * references, calls of functions and closures, effectful and opaque ops
 * are boundaries.  Functions already marked Primitive are left alone.
 *
 * Lowering turns each Primitive function whose ops all have compute rules
 * (lower/compute/compute.h) into one prim function `@fused_<ops>` and its call into
 * call_tir(@fused_<ops>, (args), shape=[...], dtype="...").  A function that
 * cannot be lowered (an op without a rule, a dtype or dynamic shape it does
 * not handle) is put back inline where it was called: never an error.
 *
 * Both need type-checked input (Expr.ty); the nodes they build carry types
 * too, so the result can be evaluated without checking it again. */
#ifndef RLY_LOWER_H
#define RLY_LOWER_H

#include <stdbool.h>

#include "ir/ir.h"
#include "ir/tir.h"
#include "lower/compute/compute_knobs.h"

typedef struct PassCtx PassCtx;

typedef struct FuseOptions {
  int max_depth;     /* ops per fused function (TVM's default 256) */
  bool need_compute; /* ops without a TIR compute rule are boundaries (for lowering) */
} FuseOptions;

/* max_depth 256 (TVM's) or what the engine set (EngineOptions.fuse_max_depth,
 * RLY_FUSE_MAX_DEPTH: the pass FuseOps and the jit mode), need_compute off. */
FuseOptions fuse_options_default(void);
/* The jit mode's: the same max_depth, need_compute on (the pass JitFuseOps's). */
FuseOptions fuse_options_jit(void);
void fuse_set_default_max_depth(int n);

/* The function with every block fused; f itself when nothing changed.
 * pc (may be NULL) receives one "fuse" report per group. */
Function *fuse_function(Arena *a, const Module *m, Function *f, const FuseOptions *o, PassCtx *pc);
Expr *fuse_expr(Arena *a, const Module *m, Expr *e, const FuseOptions *o);

/* ── lowering ── */

typedef struct Lowerer Lowerer;

/* Prim functions are allocated in a and named uniquely against `taken`
 * (a name is free when taken(user, name) is false; taken may be NULL). */
Lowerer *lower_new(Arena *a, bool (*taken)(void *user, const char *name), void *user);
void lower_free(Lowerer *L);
/* Fast math (default on) for prim functions built from now on: see
 * lc_set_fast_math in lower/compute/compute.h. */
void lower_set_fast_math(Lowerer *L, bool on);
/* Where the knobs of each kernel come from (NULL: the rules' defaults):
 * given the kernel lowered with the defaults, fn fills a setting and
 * returns true to have it lowered again so (the engine: from the tuning
 * database).  A kernel lowered with knobs set carries them as its
 * attribute `knobs` ("conv2d.tile=7 ..."). */
typedef bool (*LowerKnobsFn)(void *user, const PrimFunc *plain, LowerKnobs *out);
void lower_set_knobs_hook(Lowerer *L, LowerKnobsFn fn, void *user);
/* Lowers one Primitive function with the setting k (NULL: the defaults),
 * not cached nor named uniquely (the tuner's candidates); *read (may be
 * NULL) gets the knobs its rules read (a bit per KnobId). */
PrimFunc *lower_with_knobs(Lowerer *L, const Function *f, const LowerKnobs *k, uint32_t *read,
                           const char **why);
/* f / e with every lowerable Primitive call replaced by call_tir and the
 * others inlined back (f or e itself when there are none). */
Function *lower_function(Lowerer *L, Function *f);
Expr *lower_expr(Lowerer *L, Expr *e);
/* The prim functions made so far (each distinct one once). */
int lower_prim_count(const Lowerer *L);
PrimFunc *lower_prim(const Lowerer *L, int i);
/* Lowers one Primitive function on its own (NULL if it cannot be); *why
 * gets a reason on failure. */
PrimFunc *lower_primitive(Lowerer *L, const Function *f, const char **why);

/* Fuses the elementwise nest that ends a lowered body into the one store of
 * the intermediate buffer it reads, when total(ctx, that buffer) says its
 * rule writes it whole (lower/lower_epilogue.c); true when it did. */
/* Simplifies the integer index arithmetic of a lowered body with its loop
 * variables' ranges (lower/tir_simplify.c): reshapes' flatten-and-split
 * indices fold away. */
void lower_simplify_indices(Arena *a, Stmt *body);

/* Fuses neighbouring loops over the same range where every buffer they
 * share is touched slice by slice (lower/tir_fuse_loops.c): a row's
 * reductions and the elementwise work that reads them run while the row is
 * in the cache. */
void lower_fuse_loops(Arena *a, Stmt *body);

bool lower_fuse_epilogue(Arena *a, Stmt *body, bool (*total)(void *ctx, const Buffer *b),
                         void *ctx);

#endif
