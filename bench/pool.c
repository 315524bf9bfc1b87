/* pool.c — the thread pool's cost per parallel loop (rt/pool.h).
 *
 * Each loop has T iterations of W µs of busy work (a spin on the clock, so
 * the work is the same on every thread): the ideal wall time on P threads
 * is ceil(T / P) * W, and what a loop takes beyond that is the pool's
 * overhead (publishing the job, waking or catching workers, claiming
 * chunks, waiting for the last one).  Loops run back to back, as a
 * kernel's loops do; the median over R loops is reported.
 * Usage: bench/pool [THREADS [R]] (THREADS 0: one per core). */
#include "rt/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* closure: the µs of work per iteration */
static int32_t spin_body(void *closure, int64_t lo, int64_t hi, RlyJitCtx *ctx) {
  (void)ctx;
  double until = now_us() + *(const double *)closure * (double)(hi - lo);
  while (now_us() < until) {
  }
  return 0;
}

/* The median wall time of `runs` loops of `iters` iterations of w µs. */
static double median_loop(int64_t iters, double w, int runs) {
  double *t = malloc(sizeof *t * (size_t)runs);
  if (!t) return 0;
  RlyJitCtx ctx = {0};
  for (int r = 0; r < runs; r++) {
    double t0 = now_us();
    rly_pool_parallel_for(spin_body, &w, 0, iters, &ctx);
    t[r] = now_us() - t0;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp);
  double m = t[runs / 2];
  free(t);
  return m;
}

int main(int argc, char **argv) {
  rly_pool_set_threads(argc > 1 ? atoi(argv[1]) : 0);
  int runs = argc > 2 ? atoi(argv[2]) : 2000;
  int p = rly_pool_threads();
  printf("threads %d, %d loops per line (median)\n", p, runs);
  static const struct {
    int64_t iters;
    double w;
  } cases[] = {{2, 30}, {2, 100}, {8, 10}, {64, 1}, {512, 0.2}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t n = cases[i].iters;
    double w = cases[i].w, ideal = (double)((n + p - 1) / p) * w;
    median_loop(n, w, 20); /* warm: workers started, the body's cost known */
    double m = median_loop(n, w, runs);
    printf("%4lld iterations x %5.1f us: %8.2f us per loop, ideal %7.2f, overhead %6.2f us\n",
           (long long)n, w, m, ideal, m - ideal);
  }
  return 0;
}
