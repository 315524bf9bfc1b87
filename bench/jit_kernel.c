/* jit_kernel.c — times one JIT kernel alone (bench/jit.py part a): the
 * prim function in argv[1] (a file holding one prim with parameters
 * (n)-shaped float32 buffers) on N = argv[2] elements, outputs allocated
 * and touched once, median of argv[3] runs of jit_run, in ms on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jit/jit.h"
#include "parser/parser.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Loads the first prim function of the file, fills every buffer with the
 * same ramp, runs once untimed (compile, first touch), then reports the
 * median of the timed runs. */
int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: jit_kernel FILE N RUNS\n"), 2;
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) return perror(argv[1]), 1;
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[len] = 0;
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  Module *m = module_new(&arena);
  uint32_t file = diag_add_source(&d, argv[1], text, len);
  if (!parse_script(m, &d, file, NULL).ok) return diag_render(&d, stderr, 0, false), 1;
  const PrimFunc *f = NULL;
  for (int i = 0; i < m->ndefs && !f; i++)
    if (m->defs[i].kind == DEF_PRIM) f = m->defs[i].u.prim;
  if (!f) return fprintf(stderr, "no prim\n"), 1;
  int64_t n = atoll(argv[2]);
  int runs = atoi(argv[3]);
  RtTensor *ts[16];
  for (int i = 0; i < f->nparams && i < 16; i++) {
    ts[i] = rt_tensor_zeros(DT_FLOAT32, 1, &n, NULL, 0);
    float *p = ts[i]->data;
    for (int64_t j = 0; j < n; j++) p[j] = (float)(j % 1000) / 999.0f;
  }
  TirError e;
  const JitKernel *k = jit_get(f, &e);
  if (!k || !jit_run(k, ts, f->nparams, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
  double *t = calloc((size_t)runs, sizeof *t);
  for (int r = 0; r < runs; r++) {
    double t0 = now_ms();
    jit_run(k, ts, f->nparams, &e);
    t[r] = now_ms() - t0;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp);
  printf("%.4f\n", t[runs / 2]);
  return 0;
}
