/* prng.c — bench/prng: uniform float32 numbers per second from rly's
 * Threefry kernel (both JAX modes) against numpy's Generator(Philox), also
 * counter-based, measured in the same run; prints the ratio.  Best of 5. */
#include "kernels/prng.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 1 << 24, REPS = 5 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double rly_rate(PrngMode mode, float *out) {
  uint32_t key[2] = {0, 42};
  double best = 1e9;
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    if (!prng_uniform_f32(mode, key, 0.0f, 1.0f, out, N)) return 0;
    double t = now() - t0;
    if (t < best) best = t;
  }
  return N / best;
}

/* numpy's rate, from /usr/bin/python3 in a child process (same machine, same run). */
static double numpy_rate(void) {
  FILE *p = popen(
      "/usr/bin/python3 -c '"
      "import numpy as np, time\n"
      "g = np.random.Generator(np.random.Philox(42)); n = 1 << 24; best = 1e9\n"
      "for _ in range(5):\n"
      "    t = time.perf_counter(); g.random(n, dtype=np.float32); best = min(best, "
      "time.perf_counter() - t)\n"
      "print(n / best)' 2>/dev/null",
      "r");
  double rate = 0;
  if (!p) return 0;
  if (fscanf(p, "%lf", &rate) != 1) rate = 0;
  pclose(p);
  return rate;
}

/* Measures both JAX modes and numpy in the same run, so the ratio does not
 * depend on the machine's load at different times. */
int main(void) {
  float *out = malloc(sizeof(float) * N);
  if (!out) return 1;
  double part = rly_rate(PRNG_PARTITIONABLE, out), orig = rly_rate(PRNG_ORIGINAL, out);
  double np_rate = numpy_rate();
  printf("uniform float32, %d numbers, best of %d\n", N, REPS);
  printf("  rly partitionable  %8.1f M/s\n", part / 1e6);
  printf("  rly original       %8.1f M/s\n", orig / 1e6);
  if (np_rate > 0) {
    printf("  numpy Philox       %8.1f M/s\n", np_rate / 1e6);
    printf("ratio rly/numpy: partitionable %.2fx, original %.2fx (goal >= 1x)\n", part / np_rate,
           orig / np_rate);
  } else {
    printf("  numpy Philox: not available (/usr/bin/python3 with numpy)\n");
  }
  free(out);
  return 0;
}
