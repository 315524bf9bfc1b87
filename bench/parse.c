/* parse.c — bench/parse: parse and type-check throughput on generated
 * modules of 10k, 100k and 1M bindings.  Prints MB/s and bindings/s for
 * parsing and for type checking, and the cost per binding relative to the
 * smallest size (1.00 everywhere means linear scaling).  Best of 3 runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "passes/passes.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A chain of typical bindings over a (4, 8) activation. */
static char *gen_module(long n, size_t *len) {
  StrBuf b = {0};
  sb_puts(&b,
          "#[version = \"0.0.5\"]\n"
          "def @main(%x0: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32],\n"
          "          %b: Tensor[(8), float32]) -> Tensor[(4, 8), float32] {\n");
  static const char *const forms[] = {
      "  let %%x%ld = nn.dense(%%x%ld, %%w, units=8);\n",
      "  let %%x%ld = nn.bias_add(%%x%ld, %%b);\n",
      "  let %%x%ld = nn.relu(%%x%ld) /* ty=Tensor[(4, 8), float32] */;\n",
      "  let %%x%ld = multiply(%%x%ld, 0.5f);\n",
      "  let %%x%ld: Tensor[(4, 8), float32] = add(%%x%ld, 1f);\n",
  };
  for (long i = 1; i <= n; i++) sb_printf(&b, forms[i % 5], i, i - 1);
  sb_printf(&b, "  %%x%ld\n}\n", n);
  *len = b.len;
  return sb_take(&b);
}

typedef struct Timing {
  double parse, check;
} Timing;

/* Times parse_module and ty_check_module on one fresh module; any error
 * aborts, since a bench of a failing parse would measure nothing useful. */
static Timing run_once(const char *text, size_t len) {
  Timing t = {0, 0};
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  uint32_t file = diag_add_source(&d, "<bench>", text, len);
  Module *m = module_new(&arena);
  double t0 = now();
  bool ok = parse_module(m, &d, file);
  double t1 = now();
  ok = ok && ty_check_module(m, &d);
  double t2 = now();
  if (!ok) {
    diag_render(&d, stderr, 0, false);
    exit(1);
  }
  t.parse = t1 - t0, t.check = t2 - t1;
  diag_free(&d);
  arena_free(&arena);
  return t;
}

/* One row per size (argv[1] limits how many), best of 3 runs each; the
 * last columns compare the time per binding with the smallest size. */
int main(int argc, char **argv) {
  long sizes[] = {10000, 100000, 1000000};
  int nsizes = argc > 1 ? atoi(argv[1]) : 3;
  if (nsizes < 1 || nsizes > 3) nsizes = 3;
  double base_parse = 0, base_check = 0;
  printf("%-10s %9s %11s %14s %11s %14s %10s %10s\n", "bindings", "MB", "parse MB/s",
         "parse bind/s", "check MB/s", "check bind/s", "parse/bnd", "check/bnd");
  for (int s = 0; s < nsizes; s++) {
    size_t len;
    char *text = gen_module(sizes[s], &len);
    Timing best = {1e9, 1e9};
    for (int rep = 0; rep < 3; rep++) {
      Timing t = run_once(text, len);
      if (t.parse < best.parse) best.parse = t.parse;
      if (t.check < best.check) best.check = t.check;
    }
    double mb = (double)len / 1e6;
    double pp = best.parse / (double)sizes[s], pc = best.check / (double)sizes[s];
    if (s == 0) base_parse = pp, base_check = pc;
    printf("%-10ld %9.1f %11.1f %14.0f %11.1f %14.0f %9.2fx %9.2fx\n", sizes[s], mb,
           mb / best.parse, (double)sizes[s] / best.parse, mb / best.check,
           (double)sizes[s] / best.check, pp / base_parse, pc / base_check);
    free(text);
  }
  printf("(last two columns: time per binding relative to 10k bindings; 1.00x = linear)\n");
  return 0;
}
