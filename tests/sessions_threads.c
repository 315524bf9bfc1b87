/* sessions_threads.c — two rly_open sessions on two threads at once, each
 * with its own settings: memory limit, optimisation level, exec mode.
 *
 * Session A: jit mode, opt level 1, a 1 MiB memory limit; session B: jit
 * mode, opt level 3, 256 MiB.  Both threads start together (a barrier) and
 * for ROUNDS rounds: call @f (a JIT compile on the first round, in both
 * threads at once), check its results, then evaluate a 4 MB `zeros`, which
 * must fail in A naming A's limit and succeed in B.  Each thread checks
 * that its current run-time and JIT state are its session's (rt_max_bytes,
 * jit_opt_level) and that its kernels are its own (B switches to interp
 * mode and compiles nothing more).  @g adds kernels, so the first call
 * compiles the module's kernels ahead on the compile threads, in both
 * sessions at once (jit_precompile); B checks @g's value.  Built under
 * ThreadSanitizer by `make
 * test-san` (scripts/run-tests-tsan), where any data race fails it. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/rly.h"
#include "jit/jit.h"
#include "rt/rt.h"

enum { N = 1 << 15, ROUNDS = 4 }; /* @f's loop large enough for the pool's threads */

static const char *program =
    "def @f(%x: Tensor[(32768), float32]) {\n"
    "  add(multiply(exp(%x), 2f), %x)\n"
    "}\n"
    "def @g(%x: Tensor[(4096), float32]) {\n"
    "  add(sum(exp(%x)), 1f)\n"
    "}\n";
static const char *big = "sum(zeros(shape=[1000, 1000], dtype=\"float32\"))";

typedef struct Case {
  const char *name;
  size_t max_memory;
  int opt_level;
  const char *limit_text; /* how the over-limit error names the limit, or NULL: none */
  int failures;
} Case;

static pthread_barrier_t start;

static void check(Case *c, int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "FAIL %s: %s\n", c->name, what);
  c->failures++;
}

/* One call of @f on 0, 0.01, ..., 0.99, 0, ...: exp(x)*2 + x. */
static void call_f(Case *c, rly_session *s) {
  static _Thread_local float x[N];
  int64_t shape[1] = {N};
  for (int i = 0; i < N; i++) x[i] = (float)(i % 100) / 100;
  DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}};
  in.shape = shape;
  DLManagedTensor *out = NULL;
  int n = 0;
  int rc = rly_call(s, "f", &in, 1, &out, 1, &n);
  if (rc) fprintf(stderr, "%s: %s", c->name, rly_error(s));
  check(c, rc == 0 && n == 1, "rly_call @f");
  if (rc || n != 1) return;
  const float *y = out->dl_tensor.data;
  int good = 1;
  for (int i = 0; i < N; i++) good &= fabsf(y[i] - (expf(x[i]) * 2 + x[i])) <= 1e-5f * (1 + y[i]);
  check(c, good, "@f's results");
  out->deleter(out);
}

/* @g: 1 + the sum of exp over 4096 of call_f's inputs. */
static void call_g(Case *c, rly_session *s) {
  static _Thread_local float x[4096];
  int64_t shape[1] = {4096};
  double want = 1;
  for (int i = 0; i < 4096; i++) x[i] = (float)(i % 100) / 100, want += exp(x[i]);
  DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}};
  in.shape = shape;
  DLManagedTensor *out = NULL;
  int n = 0;
  int rc = rly_call(s, "g", &in, 1, &out, 1, &n);
  if (rc) fprintf(stderr, "%s: %s", c->name, rly_error(s));
  check(c, rc == 0 && n == 1, "rly_call @g");
  if (rc || n != 1) return;
  check(c, fabs(*(const float *)out->dl_tensor.data - want) <= 1e-4 * want, "@g's result");
  out->deleter(out);
}

/* The 4 MB tensor: an error naming this session's limit, or 0. */
static void allocate_big(Case *c, rly_session *s) {
  char *text = NULL;
  int rc = rly_eval(s, big, &text);
  if (c->limit_text) {
    check(c, rc != 0, "the 4 MB tensor is refused");
    check(c, strstr(rly_error(s), "memory limit") && strstr(rly_error(s), c->limit_text),
          "the error names this session's limit");
  } else {
    if (rc) fprintf(stderr, "%s: %s", c->name, rly_error(s));
    check(c, rc == 0 && text && strstr(text, "0f"), "the 4 MB tensor fits");
  }
  free(text);
}

static void *run(void *arg) {
  Case *c = arg;
  rly_session *s = rly_open(RLY_OPEN_NO_PRELUDE);
  check(c, s != NULL, "rly_open");
  if (!s) return NULL;
  check(c, rly_set_max_memory(s, c->max_memory) == 0, "rly_set_max_memory");
  check(c, rly_set_opt_level(s, c->opt_level) == 0, "rly_set_opt_level");
  check(c, rly_set_exec(s, RLY_EXEC_JIT) == 0, "rly_set_exec");
  check(c, rly_load_text(s, "<f>", program) == 0, "rly_load_text");
  pthread_barrier_wait(&start);
  for (int r = 0; r < ROUNDS; r++) {
    call_f(c, s);
    if (!c->limit_text) call_g(c, s); /* A's 1 MiB holds @f's tensors only */
    allocate_big(c, s);
    check(c, rt_max_bytes() == c->max_memory, "the thread's memory limit is its session's");
    check(c, jit_opt_level() == c->opt_level, "the thread's opt level is its session's");
  }
  int kernels = rly_kernel_count();
  check(c, kernels > 0, "jit mode compiled @f's kernel");
  if (!c->limit_text) { /* B: interp mode compiles nothing more */
    check(c, rly_set_exec(s, RLY_EXEC_INTERP) == 0, "rly_set_exec interp");
    call_f(c, s);
    check(c, rly_kernel_count() == kernels, "interp mode compiled no kernel");
  }
  rly_close(s);
  return NULL;
}

int main(void) {
  Case cases[2] = {{"A", (size_t)1 << 20, 1, "1.0 MiB", 0}, {"B", (size_t)256 << 20, 3, NULL, 0}};
  pthread_t t[2];
  pthread_barrier_init(&start, NULL, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &cases[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  int bad = cases[0].failures + cases[1].failures;
  printf("sessions_threads: %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
