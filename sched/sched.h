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

/* The cost model's features of a candidate (sched_features.c): its loop
 * nest as it runs (prim_to_run), described by the store with the most
 * float ops executed (the "dominant" store), the function's totals and its
 * allocations.  Counts are log2(1 + x); size variables count 7.
 * X(enum, name, what the slot holds): */
// clang-format off
#define SCHED_FEATURES(X)                                                              \
  X(SF_FLOPS, "flops", "log2 float ops executed by the whole function")              \
  X(SF_STORES, "stores", "store statements in the nest")                              \
  X(SF_STORES_EXEC, "stores_exec", "log2 stores executed")                            \
  X(SF_ALLOCS, "allocs", "alloc statements")                                          \
  X(SF_ALLOC_BYTES, "alloc_bytes", "log2 bytes allocated in all")                     \
  X(SF_ALLOC_MAX, "alloc_max", "log2 bytes of the largest alloc")                     \
  X(SF_ALLOC_SMALL, "alloc_small", "allocs of at most 4 KiB (a register/L1 tile)")    \
  X(SF_TRIPS, "trips", "log2 executions of the dominant store")                       \
  X(SF_ADD, "add", "log2 float adds/subs/negations it executes")                      \
  X(SF_MUL, "mul", "log2 float multiplies")                                           \
  X(SF_DIV, "div", "log2 float divisions and remainders")                             \
  X(SF_MATH, "math", "log2 float math calls (exp, sqrt, ...)")                        \
  X(SF_CMP, "cmp", "log2 min/max/abs/select and comparisons")                         \
  X(SF_INT, "int", "log2 integer ops in the stored value")                            \
  X(SF_DEPTH, "depth", "loops enclosing it")                                          \
  X(SF_INNER_EXTENT, "inner_extent", "log2 (extent - 1) of its innermost loop")       \
  X(SF_VEC_LANES, "vec_lanes", "log2 (lanes - 1) of its vectorized loop (0: none)")   \
  X(SF_VEC_INNER, "vec_inner", "1 when its innermost loop is vectorized")             \
  X(SF_UNROLL, "unroll", "log2 (product - 1) of its unrolled loops' extents")         \
  X(SF_PARALLEL, "parallel", "log2 (product - 1) of its parallel loops' extents")     \
  X(SF_PAR_OUTER, "par_outer", "1 when its outermost loop is parallel")               \
  X(SF_LOADS, "loads", "loads in its value")                                          \
  X(SF_INTENSITY, "intensity", "log2 float ops per byte its accesses touch")
/* Then, per access (a0: the store's buffer, a1-a3: its loads touching the
 * most bytes, most first; 0 when absent), slot SF_ACCESS0 + 4 * field + k
 * for access k, named "aK.name": */
#define SCHED_ACCESS_FEATURES(X)                                                       \
  X(SF_A_STRIDE, "stride", "log2 |elements moved per step of the innermost loop|")    \
  X(SF_A_CONTIG, "contig", "1 when that stride is 1 (contiguous)")                    \
  X(SF_A_BYTES1, "bytes1", "log2 bytes touched while the innermost loop runs")        \
  X(SF_A_BYTES2, "bytes2", "log2 bytes touched under the 2 innermost loops")          \
  X(SF_A_BYTES4, "bytes4", "log2 bytes touched under the 4 innermost loops")          \
  X(SF_A_BYTES_ALL, "bytes_all", "log2 bytes touched by the whole nest")              \
  X(SF_A_REUSE, "reuse", "log2 (accesses per element touched - 1) over the nest")
// clang-format on
enum {
#define X(e, name, doc) e,
  SCHED_FEATURES(X)
#undef X
      SF_ACCESS0
};
enum {
#define X(e, name, doc) e,
  SCHED_ACCESS_FEATURES(X)
#undef X
      SF_ACCESS_FIELDS
};
enum { SCHED_NFEATURES = SF_ACCESS0 + 4 * SF_ACCESS_FIELDS };
/* The features of f into out[SCHED_NFEATURES]. */
void sched_features(const PrimFunc *f, float *out);
/* Slot i's name ("flops", "a1.stride", ...), NULL out of range. */
const char *sched_feature_name(int i);

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
