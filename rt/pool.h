/* pool.h — the runtime's thread pool for `parallel` TIR loops.
 *
 * RLY_NUM_THREADS (default: the online cores) threads, the caller
 * included; workers start on first use.  A call from inside a running
 * parallel loop (nested) or with fewer than two iterations runs inline. */
#ifndef RLY_JIT_POOL_H
#define RLY_JIT_POOL_H

#include "rt/jit_abi.h"

/* Runs body over [lo, hi) in chunks.  0 when every chunk succeeded, else
 * the error of the failing chunk that comes first in iteration order (its
 * details copied into ctx), as a sequential run would report. */
int32_t rly_pool_parallel_for(RlyJitBodyFn body, void *closure, int64_t lo, int64_t hi,
                              RlyJitCtx *ctx);
int rly_pool_threads(void);
/* The pool size (0: one thread per core), from the engine's options. */
void rly_pool_set_threads(int n);

#endif
