/* sched_intrin.c — the tensor intrinsics `tensorize` knows: each a pair
 * of prim functions in rly's text, `desc` (what it computes, matched
 * against the scheduled code) and `impl` (the same computation in the
 * shape the JIT compiles well: an unrolled row loop over a vectorized
 * column loop, the k loop outside, so the rows' accumulators stay in vector
 * registers and each step is a broadcast and a fused multiply-add).
 * SCHED_INTRINS is the one table; it is parsed and checked once
 * (pthread_once), on first use. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "parser/parser.h"
#include "sched/sched_reduce.h"
#include "types/types.h"

/* C[i, j] += A[i, k] * B[k, j] over an R x C tile and K steps of k. */
#define MMA_DESC(R, C, K)                                                          \
  "(%A: Buffer[(" #R ", " #K "), float32], %B: Buffer[(" #K ", " #C                \
  "), float32],"                                                                   \
  " %C: Buffer[(" #R ", " #C                                                       \
  "), float32]) {\n"                                                               \
  "  for %i, %j, %k in grid(" #R ", " #C ", " #K                                   \
  ") {\n"                                                                          \
  "    block \"update\" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {\n" \
  "      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];\n"             \
  "    }\n  }\n}\n"
#define MMA_IMPL(R, C, K)                                           \
  "(%A: Buffer[(" #R ", " #K "), float32], %B: Buffer[(" #K ", " #C \
  "), float32],"                                                    \
  " %C: Buffer[(" #R ", " #C                                        \
  "), float32]) {\n"                                                \
  "  for %k in range(" #K ") {\n    for %i in unrolled(" #R         \
  ") {\n"                                                           \
  "      for %j in vectorized(" #C                                  \
  ") {\n"                                                           \
  "        %C[%i, %j] = %C[%i, %j] + %A[%i, %k] * %B[%k, %j];\n      }\n    }\n  }\n}\n"
/* C[0, 0] += A[0, k] * B[k, 0] over K steps. */
#define DOT_DESC(K)                                    \
  "(%A: Buffer[(1, " #K "), float32], %B: Buffer[(" #K \
  ", 1), float32],"                                    \
  " %C: Buffer[(1, 1), float32]) {\n"                  \
  "  for %k in range(" #K                              \
  ") {\n    block \"update\" (reduce %vk = %k) {\n"    \
  "      %C[0, 0] = %C[0, 0] + %A[0, %vk] * %B[%vk, 0];\n    }\n  }\n}\n"
#define DOT_IMPL(K)                                    \
  "(%A: Buffer[(1, " #K "), float32], %B: Buffer[(" #K \
  ", 1), float32],"                                    \
  " %C: Buffer[(1, 1), float32]) {\n"                  \
  "  for %k in unrolled(" #K ") {\n    %C[0, 0] = %C[0, 0] + %A[0, %k] * %B[%k, 0];\n  }\n}\n"

/* X(name, desc text, impl text, help) */
// clang-format off
#define SCHED_INTRINS(X)                                                                    \
  X(dot_product_16_f32, DOT_DESC(16), DOT_IMPL(16),                                         \
    "C[0, 0] += A[0, k] * B[k, 0], k < 16 (float32), unrolled")                            \
  X(mma_4x16x16_f32, MMA_DESC(4, 16, 16), MMA_IMPL(4, 16, 16),                              \
    "C[4x16] += A[4x16] * B[16x16] (float32): 4 rows x 16 vector lanes, k outside")        \
  X(mma_8x32x16_f32, MMA_DESC(8, 32, 16), MMA_IMPL(8, 32, 16),                              \
    "C[8x32] += A[8x16] * B[16x32] (float32): 8 rows x 32 vector lanes, k outside")
// clang-format on

static const struct {
  const char *name, *desc, *impl, *help;
} rows[] = {
#define X(n, d, i, h) {#n, d, i, h},
    SCHED_INTRINS(X)
#undef X
};
enum { NINTRINS = sizeof rows / sizeof rows[0] };

static SchedIntrin table[NINTRINS];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static Arena arena;
static DiagCtx diag; /* holds the texts the functions' spans point into */

static const PrimFunc *parse_prim(DiagCtx *d, Module *m, const char *name, const char *suffix,
                                  const char *body) {
  char *text = arena_printf(&arena, "prim @%s_%s%s", name, suffix, body);
  uint32_t file = diag_add_source(d, name, text, strlen(text));
  if (!parse_module(m, d, file)) return NULL;
  const PrimFunc *f = module_prim(m, arena_printf(&arena, "%s_%s", name, suffix));
  return f && tir_verify(m, f, d) ? f : NULL;
}

static void load(void) {
  arena_init(&arena);
  diag_init(&diag);
  DiagCtx *d = &diag;
  Module *m = module_new(&arena);
  for (int i = 0; i < NINTRINS; i++) {
    table[i] = (SchedIntrin){rows[i].name, rows[i].help, NULL, NULL};
    table[i].desc = parse_prim(d, m, rows[i].name, "desc", rows[i].desc);
    table[i].impl = parse_prim(d, m, rows[i].name, "impl", rows[i].impl);
    if (!table[i].desc || !table[i].impl) {
      fprintf(stderr, "rly: the tensor intrinsic %s does not check\n", rows[i].name);
      abort();
    }
  }
  /* the module's names and the sources stay: the functions point into them */
}

const SchedIntrin *sched_intrin(const char *name) {
  pthread_once(&once, load);
  for (int i = 0; i < NINTRINS; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

int sched_intrin_count(void) { return NINTRINS; }
const char *sched_intrin_name(int i) { return i >= 0 && i < NINTRINS ? rows[i].name : NULL; }
const char *sched_intrin_help(int i) { return i >= 0 && i < NINTRINS ? rows[i].help : NULL; }
