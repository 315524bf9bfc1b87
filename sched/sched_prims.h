/* sched_prims.h — the schedule primitives, one row each: the single source
 * of truth for dispatch (sched.c), `:help sched` and the REPL's completion.
 * X(name, arguments, what it does); the handler is sp_<name> (sched_int.h),
 * in the file of its family.  Names, arguments and meaning are TVM's
 * (tvm.tir.Schedule). */
#ifndef RLY_SCHED_PRIMS_H
#define RLY_SCHED_PRIMS_H

// clang-format off
#define SCHED_PRIMS(X)                                                                           \
  /* finding blocks and loops (sched_loops.c) */                                                 \
  X(get_block, "NAME", "the block named NAME")                                                   \
  X(get_loops, "BLOCK", "the loops above BLOCK, outermost first")                                \
  X(get_child_blocks, "BLOCK|LOOP", "the blocks directly inside a block or loop")                \
  /* loop transformations (sched_loops.c) */                                                     \
  X(split, "LOOP, factors=[F, ...]",                                                             \
    "split a loop into nested loops of the given extents (one may be `?`: inferred; a "          \
    "product over the extent guards the body)")                                                  \
  X(fuse, "LOOP, LOOP, ...", "fuse consecutive nested loops into one")                           \
  X(reorder, "LOOP, LOOP, ...", "put nested loops in the given order")                           \
  X(parallel, "LOOP", "run a data-parallel loop's iterations on the thread pool")                \
  X(vectorize, "LOOP", "vectorize an innermost data-parallel loop")                              \
  X(unroll, "LOOP", "unroll a loop")                                                             \
  X(annotate, "BLOCK|LOOP, KEY, VALUE",                                                          \
    "attach an annotation (pragma_unroll_explicit / pragma_vectorize / pragma_parallel act on "  \
    "a loop as unroll / vectorize / parallel)")                                                  \
  /* moving computation (sched_compute_at.c) */                                                  \
  X(compute_at, "BLOCK, LOOP", "compute a producer block under a loop of its consumer")          \
  X(reverse_compute_at, "BLOCK, LOOP", "compute a consumer block under a loop of its producer")  \
  X(compute_inline, "BLOCK", "inline a producer block into its consumers")                       \
  X(reverse_compute_inline, "BLOCK", "inline a consumer block into its producer")               \
  /* buffers (sched_cache.c) */                                                                  \
  X(cache_read, "BLOCK, READ_INDEX, SCOPE", "read a buffer through a copy made before BLOCK")    \
  X(cache_write, "BLOCK, WRITE_INDEX, SCOPE", "write a buffer through a copy stored after BLOCK") \
  X(storage_align, "BLOCK, WRITE_INDEX, AXIS, FACTOR, OFFSET",                                   \
    "pad an allocated buffer so the stride of AXIS is FACTOR*k + OFFSET elements")              \
  /* reductions and blocks (sched_reduce.c) */                                                   \
  X(decompose_reduction, "BLOCK, LOOP", "move a reduction's init into a block before LOOP")      \
  X(rfactor, "LOOP, FACTOR_AXIS", "factor a reduction over LOOP into a partial-result buffer")   \
  X(blockize, "LOOP", "make the loops under LOOP and their blocks one outer block")              \
  X(tensorize, "BLOCK|LOOP, INTRIN", "replace a computation by a registered micro-kernel")       \
  /* sampling, for search (sched_sample.c) */                                                    \
  X(sample_perfect_tile, "LOOP, n=N, max_innermost_factor=F",                                    \
    "N factors whose product is the loop's extent (recorded as decision=[...])")                 \
  X(sample_categorical, "candidates=[...], probs=[...]",                                         \
    "one candidate, drawn with the given probabilities (recorded as decision=K)")
// clang-format on

#endif
