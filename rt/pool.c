/* pool.c — the thread pool of pool.h.
 *
 * One job at a time: the caller publishes it (a pointer and a generation
 * counter), workers and the caller claim chunks with an atomic counter,
 * and the caller waits until every worker has left the job.  A failing
 * chunk records its error if it comes before any failure recorded so far,
 * so the reported error is the one a sequential loop would hit first.
 *
 * The caller does not wait for workers that have not woken yet: it clears
 * the job once every chunk is claimed, and waits only for workers running
 * a chunk, spinning (a chunk is short; sleeping on a condition variable
 * and being woken again costs tens of microseconds).  Workers watch for
 * the next job for SPIN_NS after each one, then sleep.  Loops whose work
 * is too small to pay for waking threads run inline: each loop body (its
 * function) remembers its measured time per iteration, and a loop
 * expected to take under INLINE_NS runs sequentially; under AWAKE_INLINE_NS
 * while the workers still spin after the last job (they join at once: an
 * RNN's step of 40 us is then split too). */
#include "rt/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt/rt.h"

typedef struct Job {
  RlyJitBodyFn body;
  void *closure;
  int64_t lo, n, nchunks;
  atomic_llong next;
  atomic_llong work_ns;   /* time spent in the body, all threads */
  atomic_llong err_chunk; /* lowest failed chunk (INT64_MAX: none); its error under mu */
  int32_t rc;
  RlyJitCtx err;
  RtCtx *rt; /* the caller's run-time context (rt.h): workers run with it */
} Job;

/* mu guards sleeping workers (with `work`) and a failed chunk's error;
 * the job itself is handed over through atomics: workers that see a new
 * generation count themselves in `active` before reading `job`, and the
 * caller clears `job` before waiting for `active` to reach zero, so a
 * worker either is waited for or sees no job (sequentially consistent
 * operations on both). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static atomic_ullong generation; /* bumped for each job */
static atomic_int active;        /* workers inside the current job */
static _Atomic(Job *) job;
static int sleeping;        /* workers waiting on `work`, under mu */
static atomic_int nthreads; /* set by every engine (its threads option) */
static int started;
static _Thread_local bool in_pool;

/* Measured cost per loop body, by function (direct mapped; per thread:
 * only a thread that submits jobs touches it, nested loops run inline
 * before it, and sessions on several threads measure their own). */
enum { COST_SLOTS = 1024 };
static const double INLINE_NS = 50e3, AWAKE_INLINE_NS = 10e3, SPIN_NS = 200e3;
static _Atomic double last_end_ns; /* when the last job ended (its workers then spin SPIN_NS) */
static _Thread_local struct {
  RlyJitBodyFn body;
  double ns_per_iter;
  unsigned inline_runs; /* an inline run is timed once in COST_SAMPLE (clock reads add up) */
} cost[COST_SLOTS];
enum { COST_SAMPLE = 16 };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A multiplicative hash of the body's address: kernels' code lies at
 * addresses a few KiB apart, whose low bits alone collide (two bodies
 * sharing a slot evict each other, and an evicted one runs in parallel). */
static int cost_slot(RlyJitBodyFn body) {
  return (int)(((uint64_t)(uintptr_t)body * 0x9e3779b97f4a7c15ull) >> 54);
}

static bool small_work(RlyJitBodyFn body, int64_t n) {
  int i = cost_slot(body);
  if (cost[i].body != body) return false;
  double expect = cost[i].ns_per_iter * (double)n;
  if (expect < AWAKE_INLINE_NS) return true;
  return expect < INLINE_NS && now_ns() - last_end_ns > SPIN_NS / 2;
}

/* ns: time spent in the body over n iterations, summed over `threads`
 * threads (the wall time of an inline run; the chunks' times of a parallel
 * one, so waking workers does not count as work). */
static void record_cost(RlyJitBodyFn body, int64_t n, double ns, int threads) {
  int i = cost_slot(body);
  cost[i].body = body, cost[i].ns_per_iter = ns * threads / (double)n;
}

static int32_t run_inline(RlyJitBodyFn body, void *closure, int64_t lo, int64_t hi,
                          RlyJitCtx *ctx) {
  int i = cost_slot(body);
  if (cost[i].body == body && cost[i].inline_runs++ % COST_SAMPLE)
    return body(closure, lo, hi, ctx);
  double t0 = now_ns();
  int32_t rc = body(closure, lo, hi, ctx);
  record_cost(body, hi - lo, now_ns() - t0, 1);
  return rc;
}

/* Workers already started stay (idle ones sleep); jobs are split by the
 * current size. */
void rly_pool_set_threads(int n) { nthreads = n < 0 ? 0 : n > 256 ? 256 : n; }

int rly_pool_threads(void) {
  if (nthreads) return nthreads;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  nthreads = n < 1 ? 1 : n > 256 ? 256 : (int)n;
  return nthreads;
}

/* Claims and runs chunks until none is left.  Chunks after the earliest
 * failure so far are skipped, as a sequential loop would have stopped. */
static void run_chunks(Job *j) {
  for (;;) {
    int64_t c = atomic_fetch_add(&j->next, 1);
    if (c >= j->nchunks) return;
    if (c > atomic_load_explicit(&j->err_chunk, memory_order_relaxed)) continue;
    int64_t a = j->lo + j->n * c / j->nchunks, b = j->lo + j->n * (c + 1) / j->nchunks;
    RlyJitCtx ctx = {0};
    double t0 = now_ns();
    int32_t rc = j->body(j->closure, a, b, &ctx);
    atomic_fetch_add_explicit(&j->work_ns, (long long)(now_ns() - t0), memory_order_relaxed);
    if (!rc) continue;
    pthread_mutex_lock(&mu);
    if (c < atomic_load(&j->err_chunk)) atomic_store(&j->err_chunk, c), j->rc = rc, j->err = ctx;
    pthread_mutex_unlock(&mu);
  }
}

/* A kernel often runs several parallel loops in a row: a worker that just
 * finished watches for the next job for a while before sleeping, so the
 * next loop does not pay for waking it.  True when a new job came. */
static bool spin_for_job(uint64_t seen) {
  double until = now_ns() + SPIN_NS;
  for (int i = 0;; i++) {
    if (atomic_load_explicit(&generation, memory_order_acquire) != seen) return true;
    if ((i & 63) == 63 && now_ns() > until) return false;
    if (i & 7)
      cpu_relax();
    else
      sched_yield();
  }
}

/* Joins the job of the generation just seen, if it is still running. */
static void join_job(void) {
  atomic_fetch_add(&active, 1);
  Job *j = atomic_load(&job);
  if (j) {
    rt_ctx_enter(j->rt);
    run_chunks(j);
    rt_ctx_enter(NULL);
  }
  atomic_fetch_sub(&active, 1);
}

/* A worker: spins a while after each job, then sleeps until a new
 * generation is published. */
static void *worker(void *arg) {
  (void)arg;
  in_pool = true;
  uint64_t seen = atomic_load(&generation);
  for (;;) {
    if (!spin_for_job(seen)) {
      pthread_mutex_lock(&mu);
      sleeping++;
      while (atomic_load(&generation) == seen) pthread_cond_wait(&work, &mu);
      sleeping--;
      pthread_mutex_unlock(&mu);
    }
    seen = atomic_load(&generation);
    join_job();
  }
  return NULL;
}

static void start_workers(void) {
  for (; started < nthreads - 1; started++) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, worker, NULL);
    pthread_attr_destroy(&at);
    if (rc) break;
  }
}

/* The caller publishes the job, runs chunks itself, then clears the job
 * and waits (spinning: the last chunks are about to end) for the workers
 * that joined. */
int32_t rly_pool_parallel_for(RlyJitBodyFn body, void *closure, int64_t lo, int64_t hi,
                              RlyJitCtx *ctx) {
  if (hi <= lo) return 0;
  if (in_pool || hi - lo < 2 || rly_pool_threads() < 2) return body(closure, lo, hi, ctx);
  if (small_work(body, hi - lo) || pthread_mutex_trylock(&busy) != 0)
    return run_inline(body, closure, lo, hi, ctx);
  start_workers();
  Job j = {.body = body, .closure = closure, .lo = lo, .n = hi - lo, .rt = rt_ctx_current()};
  j.nchunks = j.n < 4 * (int64_t)nthreads ? j.n : 4 * (int64_t)nthreads;
  atomic_init(&j.err_chunk, INT64_MAX);
  atomic_init(&j.next, 0);
  atomic_init(&j.work_ns, 0);
  atomic_store(&job, &j);
  pthread_mutex_lock(&mu);
  atomic_fetch_add(&generation, 1);
  if (sleeping) pthread_cond_broadcast(&work);
  pthread_mutex_unlock(&mu);
  in_pool = true;
  run_chunks(&j);
  in_pool = false;
  atomic_store(&job, NULL); /* every chunk is claimed: late joiners find no job */
  for (int i = 0; atomic_load(&active) > 0; i++) {
    if (i & 7)
      cpu_relax();
    else
      sched_yield();
  }
  last_end_ns = now_ns();
  pthread_mutex_unlock(&busy);
  record_cost(body, j.n, (double)atomic_load(&j.work_ns), 1);
  if (j.rc) *ctx = j.err;
  return j.rc;
}
