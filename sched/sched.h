/* sched.h — schedules of TIR prim functions: TensorIR's primitives
 * (sched_prims.h) applied to a function, one step at a time, each checked
 * before it rewrites (a refused step leaves the function as it was).
 *
 *   prim @f(...) { ... }            the function as written
 *   schedule @f { let %Y = ...; }   its steps (ir/sched.h; parsed after it)
 *
 * A scheduled function is a new PrimFunc whose `unscheduled` is the
 * original and whose `trace` lists the steps applied, with the names each
 * bound and the decisions sampling took, so the trace applies again to
 * the same result. */
#ifndef RLY_SCHED_H
#define RLY_SCHED_H

#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/sched.h"
#include "ir/tir.h"
#include "rt/rt.h"

typedef struct SchedOptions {
  uint64_t seed; /* the sampling primitives' seed (a recorded decision wins) */
} SchedOptions;

/* Applies the pending trace of f (f->trace set, f->unscheduled NULL) to
 * f: the scheduled function, or NULL with errors in d. */
PrimFunc *sched_apply_trace(Arena *a, const PrimFunc *f, DiagCtx *d, const SchedOptions *o);

/* f (scheduled or not) with one more step: the trace replayed, then st. */
PrimFunc *sched_apply_step(Arena *a, const PrimFunc *f, const SchedStep *st, DiagCtx *d,
                           const SchedOptions *o);

/* The first k steps of f's trace applied to its unscheduled function
 * (k = 0: that function itself), or NULL with errors in d. */
PrimFunc *sched_prefix(Arena *a, const PrimFunc *f, int k, DiagCtx *d, const SchedOptions *o);

/* Runs f and its unscheduled function through the TIR interpreter on the
 * same random inputs (seeded) and compares every output buffer (floats
 * within a relative 1e-4, others exactly).  True when they agree or f has
 * no schedule; else false with the first difference in err. */
bool sched_verify(const PrimFunc *f, uint64_t seed, char *err, size_t n);

/* Tensors for f's parameters, filled as sched_verify fills them (size
 * variables 7); false with err when one cannot be made (*out partly set:
 * release what is not NULL). */
bool sched_random_args(const PrimFunc *f, uint64_t seed, RtTensor **out, char *err, size_t n);

/* The tuner's design space (sched_rules.c): a candidate schedule of f's
 * unscheduled function built by the schedule rules (multi-level tiling of
 * reductions, inlining or vectorizing elementwise blocks, parallel outer
 * loops), its sampling steps' decisions taken from parent's (may be NULL)
 * except the resample-th (-1: none), the others drawn from seed.  NULL
 * when a rule's primitive refuses or no rule applies. */
PrimFunc *sched_space_sample(Arena *a, const PrimFunc *f, uint64_t seed, const SchedTrace *parent,
                             int resample);
/* The number of sampling steps of t (decisions a mutation can redraw). */
int sched_trace_nsamples(const SchedTrace *t);

/* The primitives, for help and completion. */
typedef struct SchedPrimInfo {
  const char *name, *args, *help;
} SchedPrimInfo;
int sched_prim_count(void);
const SchedPrimInfo *sched_prim_info(int i);

/* The tensor intrinsics `tensorize` knows (sched_intrin.c), for help. */
int sched_intrin_count(void);
const char *sched_intrin_name(int i);
const char *sched_intrin_help(int i);

#endif
