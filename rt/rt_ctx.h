/* rt_ctx.h — the run-time context's fields (rt.h's RtCtx), shared by rt.c
 * (memory limit, live bytes, buffer cache, free lists) and exec.c (the
 * compiled executor, the interrupt flag, the step budget).  Private to rt/. */
#ifndef RLY_RT_CTX_H
#define RLY_RT_CTX_H

#include <signal.h>

#include "rt/exec.h"
#include "rt/rt.h"

enum { RT_CACHE_SLOTS = 16, RT_SMALL_CAPS = 4 };

typedef struct RtPool {
  void *head;
  size_t n;
} RtPool;

struct RtCtx {
  size_t max_bytes;
  size_t live_bytes; /* data bytes of owned buffers not yet freed: alive, pooled or cached */
  RtLimitHook limit_hook;
  void *limit_ctx;
  RtBuffer *cache[RT_CACHE_SLOTS];
  size_t cached_bytes;
  RtPool header_pool, borrowed_pool, small_pool[RT_SMALL_CAPS];
  size_t nbufs; /* buffers allocated and not freed (alive, pooled, cached; borrowed too) */
  bool dead;    /* rt_ctx_free ran while buffers were alive: freed with the last */
  const RtExecutor *executor;
  unsigned generation;
  volatile sig_atomic_t interrupt;
  int64_t step_budget, steps_left;
  char steps_msg[64];
};

#endif
