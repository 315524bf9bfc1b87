/* test_cost_model.c — the tuner's cost model: the boosted trees
 * (engine/cost_model.c) fit a known function of random features and rank
 * held-out samples far better than chance, deterministically; and the
 * features (sched/sched_features.c) of known loop nests (a 64^3 matmul as
 * written, an elementwise nest vectorized and parallel) have the values
 * their slots document. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cost_model.h"
#include "engine/schedule.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "sched/sched.h"
#include "tests/unit/check.h"

enum { NF = 8, TRAIN = 200, TEST = 100 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* The target: features 0-3 matter (one through a step), 4-7 are noise. */
static double target(const float *x) { return 3 * x[0] + (x[1] > 0.5f ? 2 : 0) - 2 * x[2] * x[3]; }

static void random_row(float *x) {
  for (int j = 0; j < NF; j++) x[j] = (float)uniform();
}

/* The share of held-out pairs the model orders as the target does. */
static double pair_accuracy(const CostModel *m, float (*x)[NF], int n) {
  int right = 0, all = 0;
  for (int i = 0; i < n; i++)
    for (int k = i + 1; k < n; k++) {
      double dt = target(x[i]) - target(x[k]);
      double dp = cost_model_predict(m, x[i]) - cost_model_predict(m, x[k]);
      if (fabs(dt) < 1e-9) continue;
      all++, right += (dt > 0) == (dp > 0);
    }
  return all ? (double)right / all : 0;
}

static void test_model(void) {
  CostModel *m = cost_model_new(NF), *m2 = cost_model_new(NF);
  float x[NF], held[TEST][NF];
  for (int i = 0; i < TRAIN; i++) {
    random_row(x);
    cost_model_add(m, x, target(x)), cost_model_add(m2, x, target(x));
  }
  CHECK(cost_model_samples(m) == TRAIN);
  cost_model_fit(m), cost_model_fit(m2);
  double err = 0, var = 0, mean = 0;
  for (int i = 0; i < TEST; i++) random_row(held[i]), mean += target(held[i]) / TEST;
  for (int i = 0; i < TEST; i++) {
    double d = cost_model_predict(m, held[i]) - target(held[i]), v = target(held[i]) - mean;
    err += d * d, var += v * v;
    CHECK(cost_model_predict(m, held[i]) == cost_model_predict(m2, held[i])); /* deterministic */
  }
  double acc = pair_accuracy(m, held, TEST);
  printf("held-out: pair accuracy %.3f, R^2 %.3f\n", acc, 1 - err / var);
  CHECK(acc > 0.8);        /* chance is 0.5 */
  CHECK(err / var < 0.25); /* explains most of the variance */
  cost_model_free(m), cost_model_free(m2);
}

/* Few samples, one of them an outlier: predictions stay within the targets. */
static void test_small(void) {
  CostModel *m = cost_model_new(2);
  float a[2] = {0, 0}, b[2] = {1, 0}, c[2] = {2, 1};
  CHECK(cost_model_predict(m, a) == 0); /* nothing learnt */
  cost_model_add(m, a, 1), cost_model_add(m, b, 1), cost_model_add(m, c, 10);
  cost_model_fit(m);
  double p = cost_model_predict(m, c);
  CHECK(p >= 1 && p <= 10);
  cost_model_free(m);
}

/* ───────────────────────── features ───────────────────────── */

static Arena A;
static DiagCtx D;

static const PrimFunc *parse_prim(const char *text, const char *name) {
  Module *m = module_new(&A);
  uint32_t file = diag_add_source(&D, "features", text, strlen(text));
  bool ok = parse_module(m, &D, file) && engine_apply_schedules(m, &D, true);
  CHECK(ok);
  const PrimFunc *f = ok ? module_prim(m, name) : NULL; /* in A */
  module_free(m);
  return f;
}

static bool near(float a, double b) { return fabs(a - b) < 1e-4; }
static float acc(const float *x, int field, int k) { return x[SF_ACCESS0 + 4 * field + k]; }

static void test_matmul_features(void) {
  const PrimFunc *f = parse_prim(
      "prim @mm(%A: Buffer[(64, 64), float32], %B: Buffer[(64, 64), float32],\n"
      "         %C: Buffer[(64, 64), float32]) {\n"
      "  for %i, %j, %k in grid(64, 64, 64) {\n"
      "    block \"C\" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {\n"
      "      init { %C[%vi, %vj] = 0f; }\n"
      "      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];\n"
      "    }\n"
      "  }\n"
      "}\n",
      "mm");
  if (!f) return;
  float x[SCHED_NFEATURES];
  sched_features(f, x);
  double trips = 64.0 * 64 * 64;
  CHECK(near(x[SF_FLOPS], log2(1 + 2 * trips)));
  CHECK(near(x[SF_STORES], 2)); /* the init and the update */
  CHECK(near(x[SF_TRIPS], log2(1 + trips)));
  CHECK(near(x[SF_ADD], log2(1 + trips)) && near(x[SF_MUL], log2(1 + trips)));
  CHECK(near(x[SF_DIV], 0) && near(x[SF_MATH], 0));
  CHECK(near(x[SF_DEPTH], 3) && near(x[SF_INNER_EXTENT], 6));
  CHECK(near(x[SF_VEC_LANES], 0) && near(x[SF_PARALLEL], 0) && near(x[SF_PAR_OUTER], 0));
  CHECK(near(x[SF_LOADS], 3));
  /* a0: C stored, not moved by k: one element per k loop, 16 KiB in all, 64 uses each. */
  CHECK(near(acc(x, SF_A_STRIDE, 0), 0) && near(acc(x, SF_A_CONTIG, 0), 0));
  CHECK(near(acc(x, SF_A_BYTES1, 0), log2(1 + 4)));
  CHECK(near(acc(x, SF_A_BYTES_ALL, 0), log2(1 + 16384)));
  CHECK(near(acc(x, SF_A_REUSE, 0), log2(64)));
  /* Loads (equal bytes: in order): C, A (along k: contiguous), B (along k: a row apart). */
  CHECK(near(acc(x, SF_A_STRIDE, 2), 1) && near(acc(x, SF_A_CONTIG, 2), 1));
  CHECK(near(acc(x, SF_A_BYTES1, 2), log2(1 + 256)));
  CHECK(near(acc(x, SF_A_STRIDE, 3), log2(65)) && near(acc(x, SF_A_CONTIG, 3), 0));
  CHECK(near(acc(x, SF_A_BYTES1, 3), log2(1 + 256)));   /* 64 rows, one float each */
  CHECK(near(acc(x, SF_A_BYTES2, 3), log2(1 + 16384))); /* j and k: all of B */
  /* 2 flops per 3 x 16 KiB touched */
  CHECK(near(x[SF_INTENSITY], log2(1 + 2 * trips / (4 * 16384.0))));
}

static void test_elementwise_features(void) {
  const PrimFunc *f = parse_prim(
      "prim @ew(%A: Buffer[(64, 128), float32], %C: Buffer[(64, 128), float32]) {\n"
      "  for %i, %j in grid(64, 128) {\n"
      "    block \"C\" (spatial %vi = %i, spatial %vj = %j) {\n"
      "      %C[%vi, %vj] = exp(%A[%vi, %vj]) / 2f;\n"
      "    }\n"
      "  }\n"
      "}\n"
      "schedule @ew {\n"
      "  let (%i, %j) = get_loops(get_block(\"C\"));\n"
      "  let (%j0, %j1) = split(%j, factors=[?, 8]);\n"
      "  vectorize(%j1);\n"
      "  parallel(%i);\n"
      "}\n",
      "ew");
  if (!f) return;
  float x[SCHED_NFEATURES];
  sched_features(f, x);
  CHECK(near(x[SF_DEPTH], 3) && near(x[SF_INNER_EXTENT], 3));
  CHECK(near(x[SF_VEC_LANES], 3) && near(x[SF_VEC_INNER], 1));
  CHECK(near(x[SF_PARALLEL], 6) && near(x[SF_PAR_OUTER], 1));
  CHECK(near(x[SF_MATH], log2(1 + 8192)) && near(x[SF_DIV], log2(1 + 8192)));
  CHECK(near(acc(x, SF_A_CONTIG, 0), 1) && near(acc(x, SF_A_CONTIG, 1), 1));
  CHECK(near(acc(x, SF_A_BYTES1, 1), log2(1 + 32)));
  CHECK(near(acc(x, SF_A_REUSE, 1), 0)); /* each element read once */
  CHECK(near(x[SF_ALLOCS], 0));
}

static void test_names(void) {
  CHECK_STREQ(sched_feature_name(SF_FLOPS), "flops");
  CHECK_STREQ(sched_feature_name(SF_ACCESS0 + 4 * SF_A_STRIDE + 3), "a3.stride");
  CHECK_STREQ(sched_feature_name(SCHED_NFEATURES - 1), "a3.reuse");
  CHECK(sched_feature_name(SCHED_NFEATURES) == NULL);
}

int main(void) {
  arena_init(&A);
  diag_init(&D);
  test_model();
  test_small();
  test_matmul_features();
  test_elementwise_features();
  test_names();
  diag_free(&D);
  arena_free(&A);
  return check_report("test_cost_model");
}
