/* specialize.h — the jit mode's shape-specialised copies of functions with
 * `?` or size-variable dimensions (engine-internal; interp/spec.c calls
 * them through InterpSpecializer).
 *
 * A copy is the graph-prepared function (after the jit's graph passes)
 * with its parameters typed by the call's concrete shapes, checked again
 * (every `?` inside becomes a constant), then fused and lowered as any
 * static function: its kernels get the static schedules and it runs on
 * the planned executor.  Copies are exact (one per distinct argument
 * shape, never padded), cached by the prepared definition and the shapes,
 * at most `:set specialize N` of them, the least recently used dropped
 * first (its executor's buffers freed). */
#ifndef RLY_ENGINE_SPECIALIZE_H
#define RLY_ENGINE_SPECIALIZE_H

#include "interp/interp.h"
#include "ir/ir.h"

typedef struct SpecCache SpecCache;

typedef struct SpecEntry {
  const FuncDef *src; /* the prepared definition */
  char *key;          /* its arguments' dtypes and shapes: "(1, 64, 512) float32" */
  const Function *fn; /* the lowered copy */
  Module *mod;        /* the module its kernels resolve in */
  uint64_t used;      /* the cache's clock at its last call */
  uint64_t calls;
  double build_ms; /* typing, fusing, lowering and compiling its kernels */
} SpecEntry;

SpecCache *spec_cache_new(void);
/* Drops every copy (their executors' buffers through interp_drop_plan). */
void spec_cache_clear(SpecCache *c, Interp *in);
void spec_cache_free(SpecCache *c, Interp *in);

/* Whether src's body is a dataflow graph the planned executor may run (no
 * control flow, closures, references, calls or effects): others are not
 * specialized. */
bool spec_plannable(const FuncDef *src);
/* The arguments' shapes as a key, or NULL when they do not fit src's
 * parameter types (rank, dtype, a constant dimension, one size variable
 * with two sizes): the call then runs as written and reports it. */
char *spec_key(const FuncDef *src, Value **args, int n);
/* The cached copy for src and key (counted as a call), or NULL. */
SpecEntry *spec_find(SpecCache *c, const FuncDef *src, const char *key);
/* Adds a copy (taking key), dropping the least recently used past max. */
SpecEntry *spec_add(SpecCache *c, Interp *in, int max, const FuncDef *src, char *key,
                    const Function *fn, Module *mod, double build_ms);
/* Whether src was refused (its copies cannot run planned); refusing one. */
bool spec_refused(const SpecCache *c, const FuncDef *src);
void spec_refuse_def(SpecCache *c, const FuncDef *src);
void spec_refuse(SpecCache *c, Interp *in, const Function *fn); /* dropping its copy */

/* src's function with its parameters typed by the arguments' shapes,
 * checked in m (a module holding src's callees) and constant-folded;
 * NULL on a type error. */
Function *spec_function(Arena *a, const Module *m, const FuncDef *src, Value **args, int n);

int spec_count(const SpecCache *c);
const SpecEntry *spec_at(const SpecCache *c, int i); /* most recently used first */

#endif
