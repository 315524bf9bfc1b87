/* test_tir.c — the TIR reference interpreter (rt/tir_interp.h) and
 * call_tir in the evaluator: loops of every kind, blocks with init and
 * reductions, alloc, let, if, intrinsics, casts, integer division,
 * float16 and uint64, bounds errors, size variables and parameter
 * mismatches, long statement lists, call_tir's outputs, copies and
 * two-location errors, external functions (string callees), and the
 * lowering's loop fusion (same results, an illegal fusion refused). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/extern.h"
#include "interp/interp.h"
#include "lower/lower.h"
#include "parser/parser.h"
#include "rt/tir_interp.h"
#include "tests/unit/check.h"
#include "tests/unit/harness.h"
#include "types/types.h"

/* ───────────────────────────── tensors ───────────────────────────── */

static RtTensor *mk(DType dt, int ndim, const int64_t *shape, const double *vals) {
  RtTensor *t = rt_tensor_zeros(dt, ndim, shape, NULL, 0);
  Tensor v = rt_tensor_as_ir(t);
  for (int64_t i = 0; vals && i < t->numel; i++) tensor_set_f64(&v, i, vals[i]);
  return t;
}

static RtTensor *vec(DType dt, int64_t n, const double *vals) { return mk(dt, 1, &n, vals); }

static RtTensor *mat(DType dt, int64_t r, int64_t c, const double *vals) {
  int64_t s[2] = {r, c};
  return mk(dt, 2, s, vals);
}

static bool same(const RtTensor *t, const double *want) {
  for (int64_t i = 0; i < t->numel; i++) {
    double g = rt_get_f64(t, i);
    if (!(g == want[i] || (isnan(g) && isnan(want[i])))) {
      fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, g, want[i]);
      return false;
    }
  }
  return true;
}

static void release_all(RtTensor **ts, int n) {
  for (int i = 0; i < n; i++) rt_tensor_release(ts[i]);
}

/* Runs @name on ts; on failure the message is in err. */
static bool run(EvalEnv *e, const char *name, RtTensor **ts, int n, TirError *err) {
  const PrimFunc *p = module_prim(e->mod, name);
  CHECK(p != NULL);
  return p && tir_interp_run_func(p, ts, n, err);
}

/* Same, expecting success (the message is shown otherwise). */
static bool run_ok(EvalEnv *e, const char *name, RtTensor **ts, int n, TirError *err) {
  bool ok = run(e, name, ts, n, err);
  if (!ok) fprintf(stderr, "  @%s failed: %s\n", name, err->msg);
  return ok;
}

/* The source text an error span covers. */
static char *span_text(EvalEnv *e, Span sp) {
  uint32_t off;
  const SourceFile *f = diag_span_source(&e->diag, sp, &off);
  return strndup(f->text + off, sp.len);
}

/* ───────────────────────────── the prims ───────────────────────────── */

/* The prim functions and defs of the tests (one string each: C limits string length). */
static const char *const prims[] = {
    "prim @fuse_rows(%X: Buffer[(3, 4), float32], %Y: Buffer[(3, 4), float32]) {\n"
    "  alloc %S: Buffer[(3), float32];\n"
    "  for %i in parallel(3) { for %k in range(0, 4) { %S[%i] = %S[%i] + %X[%i, %k]; } }\n"
    "  for %j in parallel(3) { for %k in range(0, 4) { %Y[%j, %k] = %X[%j, %k] - %S[%j]; } }\n"
    "}\n",
    "prim @fuse_shifted(%X: Buffer[(3, 4), float32], %Y: Buffer[(3, 4), float32]) {\n"
    "  alloc %S: Buffer[(4), float32];\n"
    "  for %i in parallel(3) { for %k in range(0, 4) { %S[%i + 1] = %S[%i + 1] + %X[%i, %k]; } }\n"
    "  for %j in parallel(3) { for %k in range(0, 4) { %Y[%j, %k] = %X[%j, %k] - %S[%j]; } }\n"
    "}\n",
    "prim @loops(%A: Buffer[(10), int32]) {\n"
    "  for %i in range(2, 5) { %A[%i] = %i * 10; }\n"
    "  for %i in grid(2) { %A[%i] = %i + 100; }\n"
    "  for %i in parallel(1) { %A[5] = 55; }\n"
    "  for %i in vectorized(2) { %A[6 + %i] = 60 + %i; }\n"
    "  for %i, %j in unrolled(1, 2) { %A[8 + %j] = 80 + %j + %i; }\n"
    "  for %i in range(5, 5) { %A[0] = 999; }\n"
    "  for %i in range(5, 3) { %A[0] = 998; }\n"
    "}\n",
    /* every kind from a begin: (begin, end) with one variable */
    "prim @loops_begin(%A: Buffer[(12), int32], %X: Buffer[(6), float32], %Y: Buffer[(2), "
    "float32]) {\n"
    "  for %i in parallel(2, 4) { %A[%i] = %i * 10; }\n"
    "  for %i in vectorized(4, 6) { %A[%i] = %i + 100; }\n"
    "  for %i in unrolled(-1, 1) { %A[6 + %i] = 60 + %i; }\n"
    "  for %i in range(8) { %A[8] = %A[8] + 1; }\n"
    "  for %i in parallel(9, 7) { %A[0] = 999; }\n"
    "  for %i in vectorized(0, 1) { %A[0] = %A[0] + 1; }\n"
    "  for %k in unrolled(3, 6) {\n"
    "    block \"S\" (reduce %vk = %k) {\n"
    "      init { %Y[0] = 100f; }\n"
    "      %Y[0] = %Y[0] + %X[%vk];\n"
    "    }\n"
    "  }\n"
    "  for %k in parallel(-2, 2) {\n"
    "    block \"T\" (reduce %vk = %k) {\n"
    "      init { %Y[1] = float32(%vk) * 1000f; }\n"
    "      %Y[1] = %Y[1] + 1f;\n"
    "    }\n"
    "  }\n"
    "}\n",
    "prim @rowsum(%X: Buffer[(n, m), float32], %Y: Buffer[(n), float32]) {\n"
    "  for %i, %k in grid(n, m) {\n"
    "    block \"S\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "      init { %Y[%vi] = 0f; }\n"
    "      %Y[%vi] = %Y[%vi] + %X[%vi, %vk];\n"
    "    }\n"
    "  }\n"
    "}\n",
    "prim @partial(%X: Buffer[(6), float32], %Y: Buffer[(1), float32]) {\n"
    "  for %k in range(2, 5) {\n"
    "    block \"S\" (reduce %vk = %k) {\n"
    "      init { %Y[0] = 100f; }\n"
    "      %Y[0] = %Y[0] + %X[%vk];\n"
    "    }\n"
    "  }\n"
    "}\n",
    "prim @strided(%X: Buffer[(8), float32], %Y: Buffer[(4), float32]) {\n"
    "  for %i in grid(4) {\n"
    "    block \"B\" (spatial %vi = %i * 2 + 1) {\n"
    "      init { %Y[%i] = 1f; }\n"
    "      %Y[%i] = %Y[%i] * %X[%vi];\n"
    "    }\n"
    "  }\n"
    "}\n",
    "prim @alloc(%X: Buffer[(n), float32], %Y: Buffer[(n), float32]) {\n"
    "  alloc %T: Buffer[(n), float32];\n"
    "  for %i in grid(n) { %T[%i] = %X[%i] * 2f; }\n"
    "  for %i in grid(n) { %Y[%i] = %T[%i] + 1f; }\n"
    "}\n",
    "prim @alloc_loop(%Y: Buffer[(3), float32]) {\n"
    "  for %i in grid(3) {\n"
    "    alloc %T: Buffer[(1), float32];\n"
    "    %T[0] = %T[0] + 1f;\n"
    "    %Y[%i] = %T[0];\n"
    "  }\n"
    "}\n",
    "prim @letif(%X: Buffer[(5), int32], %Y: Buffer[(5), int32]) {\n"
    "  for %i in grid(5) {\n"
    "    let %t = %X[%i] * 2;\n"
    "    if (%t > 4) { %Y[%i] = %t; } else if (%t == 0) { %Y[%i] = -1; } else { %Y[%i] = 0; }\n"
    "  }\n"
    "}\n",
    "prim @intr(%X: Buffer[(4), float32], %Y: Buffer[(12, 4), float32]) {\n"
    "  for %i in grid(4) {\n"
    "    %Y[0, %i] = max(%X[%i], 0.5f);\n"
    "    %Y[1, %i] = min(%X[%i], 0.5f);\n"
    "    %Y[2, %i] = abs(%X[%i]);\n"
    "    %Y[3, %i] = exp(%X[%i]);\n"
    "    %Y[4, %i] = log(abs(%X[%i]) + 1f);\n"
    "    %Y[5, %i] = sqrt(abs(%X[%i]));\n"
    "    %Y[6, %i] = tanh(%X[%i]);\n"
    "    %Y[7, %i] = sigmoid(%X[%i]);\n"
    "    %Y[8, %i] = pow(abs(%X[%i]), 1.5f);\n"
    "    %Y[9, %i] = select(%X[%i] > 0f, %X[%i], 0f - %X[%i]);\n"
    "    %Y[10, %i] = floor(%X[%i]);\n"
    "    %Y[11, %i] = ceil(%X[%i]);\n"
    "  }\n"
    "}\n",
    "prim @ints(%X: Buffer[(4), int32], %Y: Buffer[(4), int32], %F: Buffer[(4), float32],\n"
    "           %Z: Buffer[(4, 6), int32]) {\n"
    "  for %i in grid(4) {\n"
    "    %Z[%i, 0] = %X[%i] / %Y[%i];\n"
    "    %Z[%i, 1] = %X[%i] % %Y[%i];\n"
    "    %Z[%i, 2] = int32(%F[%i]);\n"
    "    %Z[%i, 3] = int32(int8(%X[%i]));\n"
    "    %Z[%i, 4] = int32(float32(%X[%i]) * 0.5f);\n"
    "    %Z[%i, 5] = max(%X[%i], %Y[%i]) - min(%X[%i], %Y[%i]);\n"
    "  }\n"
    "}\n",
    "prim @widen(%A: Buffer[(n), int64], %B: Buffer[(n), float32]) {\n"
    "  for %i in grid(n) {\n"
    "    %A[%i] = %i * n + 16777217i64;\n"
    "    %B[%i] = float32(%A[%i]);\n"
    "  }\n"
    "}\n",
    "prim @logic(%X: Buffer[(3), int32], %Y: Buffer[(3), bool]) {\n"
    "  for %i in grid(3) {\n"
    "    %Y[%i] = %i < 2 && %X[%i + 1] > 0 || !(%i != 2);\n"
    "  }\n"
    "}\n",
    "prim @half(%X: Buffer[(2), float16], %Y: Buffer[(2), float16]) {\n"
    "  for %i in grid(2) { %Y[%i] = %X[%i] * 3f16 + 0.1f16; }\n"
    "}\n",
    "prim @uns(%X: Buffer[(2), uint64], %Y: Buffer[(2), uint64]) {\n"
    "  for %i in grid(2) { %Y[%i] = select(%X[%i] > 1u64, %X[%i] / 3u64, 7u64); }\n"
    "}\n",
    "prim @oob(%X: Buffer[(4), float32], %Y: Buffer[(4), float32]) {\n"
    "  for %i in range(0, 4) { %Y[%i] = %X[%i + 1]; }\n"
    "}\n",
    "prim @oob_store(%Y: Buffer[(2, 3), float32]) {\n"
    "  for %i, %j in grid(2, 3) { %Y[%i, %j - 1] = 1f; }\n"
    "}\n",
    "prim @add(%X: Buffer[(n, 4), float32], %Y: Buffer[(n, 4), float32],\n"
    "          %Z: Buffer[(n, 4), float32]) {\n"
    "  for %i, %j in grid(n, 4) { %Z[%i, %j] = %X[%i, %j] + %Y[%i, %j]; }\n"
    "}\n",
    "prim @two(%X: Buffer[(n), float32], %A: Buffer[(n), float32], %B: Buffer[(n), int32]) {\n"
    "  for %i in grid(n) { %A[%i] = %X[%i] + 1f; %B[%i] = int32(%X[%i]) * 2; }\n"
    "}\n",
    "prim @inplace(%X: Buffer[(2), float32], %Y: Buffer[(2), float32]) {\n"
    "  %X[0] = 5f;\n"
    "  for %i in grid(2) { %Y[%i] = %X[%i]; }\n"
    "}\n",
    "prim @fill(%X: Buffer[(n), float32], %Y: Buffer[(m), float32]) {\n"
    "  for %i in grid(m) { %Y[%i] = 1f; }\n"
    "}\n",
    "prim @partial_write(%Y: Buffer[(3), float32]) {\n"
    "  %Y[1] = 2f;\n"
    "}\n",
    "def @f(%x: Tensor[(?, 4), float32], %y: Tensor[(?, 4), float32]) {\n"
    "  call_tir(@add, (%x, %y), shape=[2, 4], dtype=\"float32\")\n"
    "}\n",
    "def @g(%x: Tensor[(k), float32], %y: Tensor[(j), float32]) {\n"
    "  call_tir(@fill, (%x,), shape=[j], dtype=\"float32\")\n"
    "}\n",
    "def @h(%x: Tensor[(k), float32]) {\n"
    "  call_tir(@rowsum, (reshape(%x, newshape=[1, -1]),), shape=[1], dtype=\"float32\")\n"
    "}\n",
    NULL,
};

/* ───────────────────────────── tests ───────────────────────────── */

static void test_loops(EvalEnv *e) {
  RtTensor *a = vec(DT_INT32, 10, NULL);
  TirError err;
  CHECK(run_ok(e, "loops", &a, 1, &err));
  CHECK(same(a, (double[]){100, 101, 20, 30, 40, 55, 60, 61, 80, 81}));
  rt_tensor_release(a);
}

/* Loops from a begin; a reduction's init runs at its loop's begin (-2 for
 * parallel(-2, 2): Y[1] = -2000 + 4 iterations). */
static void test_loops_begin(EvalEnv *e) {
  RtTensor *t[3] = {vec(DT_INT32, 12, NULL), vec(DT_FLOAT32, 6, (double[]){1, 2, 3, 4, 5, 6}),
                    vec(DT_FLOAT32, 2, NULL)};
  TirError err;
  CHECK(run_ok(e, "loops_begin", t, 3, &err));
  CHECK(same(t[0], (double[]){1, 0, 20, 30, 104, 59, 60, 0, 8, 0, 0, 0}));
  CHECK(same(t[2], (double[]){115, -1996}));
  release_all(t, 3);
}

/* Block init runs at the first reduction step (also from a non-zero begin); computed bindings. */
static void test_blocks(EvalEnv *e) {
  TirError err;
  /* init runs at the first reduction step: the output's old contents do not matter */
  RtTensor *t[2] = {mat(DT_FLOAT32, 2, 3, (double[]){1, 2, 3, 4, 5, 6}),
                    vec(DT_FLOAT32, 2, (double[]){7, 7})};
  CHECK(run_ok(e, "rowsum", t, 2, &err));
  CHECK(same(t[1], (double[]){6, 15}));
  release_all(t, 2);
  /* reduce over range(2, 5): init at %k == 2 */
  RtTensor *p[2] = {vec(DT_FLOAT32, 6, (double[]){1, 2, 3, 4, 5, 6}), vec(DT_FLOAT32, 1, NULL)};
  CHECK(run_ok(e, "partial", p, 2, &err));
  CHECK(same(p[1], (double[]){112}));
  release_all(p, 2);
  /* a computed binding; a block without reduce variables runs its init every time */
  RtTensor *s[2] = {vec(DT_FLOAT32, 8, (double[]){0, 1, 2, 3, 4, 5, 6, 7}),
                    vec(DT_FLOAT32, 4, NULL)};
  CHECK(run_ok(e, "strided", s, 2, &err));
  CHECK(same(s[1], (double[]){1, 3, 5, 7}));
  release_all(s, 2);
}

static void test_alloc_let_if(EvalEnv *e) {
  TirError err;
  RtTensor *a[2] = {vec(DT_FLOAT32, 3, (double[]){1, 2, 3}), vec(DT_FLOAT32, 3, NULL)};
  CHECK(run_ok(e, "alloc", a, 2, &err));
  CHECK(same(a[1], (double[]){3, 5, 7}));
  release_all(a, 2);
  RtTensor *l = vec(DT_FLOAT32, 3, NULL);
  CHECK(run_ok(e, "alloc_loop", &l, 1, &err));
  CHECK(same(l, (double[]){1, 1, 1})); /* zero-filled on each run of the alloc */
  rt_tensor_release(l);
  RtTensor *b[2] = {vec(DT_INT32, 5, (double[]){3, 0, 1, -4, 2}), vec(DT_INT32, 5, NULL)};
  CHECK(run_ok(e, "letif", b, 2, &err));
  CHECK(same(b[1], (double[]){6, -1, 0, 0, 0}));
  release_all(b, 2);
}

static void test_intrinsics(EvalEnv *e) {
  const float x[4] = {-1.25f, 0.5f, 2.75f, 0.0f};
  RtTensor *t[2] = {vec(DT_FLOAT32, 4, (double[]){x[0], x[1], x[2], x[3]}),
                    mat(DT_FLOAT32, 12, 4, NULL)};
  TirError err;
  CHECK(run_ok(e, "intr", t, 2, &err));
  double want[48];
  for (int i = 0; i < 4; i++) {
    float v = x[i], a = fabsf(v);
    float r[12] = {v > 0.5f ? v : 0.5f,
                   v < 0.5f ? v : 0.5f,
                   a,
                   expf(v),
                   logf(a + 1.0f),
                   sqrtf(a),
                   tanhf(v),
                   1.0f / (1.0f + expf(-v)),
                   powf(a, 1.5f),
                   v > 0 ? v : 0.0f - v,
                   floorf(v),
                   ceilf(v)};
    for (int k = 0; k < 12; k++) want[k * 4 + i] = r[k];
  }
  CHECK(same(t[1], want));
  release_all(t, 2);
}

/* Integer division, saturating and wrapping casts, division by zero, widening, lazy && and ||. */
static void test_ints_and_casts(EvalEnv *e) {
  TirError err;
  RtTensor *t[4] = {vec(DT_INT32, 4, (double[]){-7, 7, 300, -2147483648.0}),
                    vec(DT_INT32, 4, (double[]){2, -2, 7, -1}),
                    vec(DT_FLOAT32, 4, (double[]){-2.7, 3e10, NAN, -3e10}),
                    mat(DT_INT32, 4, 6, NULL)};
  CHECK(run_ok(e, "ints", t, 4, &err));
  CHECK(same(t[3], (double[]){-3,
                              -1,
                              -2,
                              -7,
                              -3,
                              9, /* truncating / and % */
                              -3,
                              1,
                              2147483647,
                              7,
                              3,
                              9, /* saturating cast */
                              42,
                              6,
                              0,
                              44,
                              150,
                              293, /* NaN → 0, int8 wraps */
                              -2147483648.0,
                              0,
                              -2147483648.0,
                              0,
                              -1073741824,
                              2147483647}));
  /* division by zero is an error at the division */
  Tensor y = rt_tensor_as_ir(t[1]);
  tensor_set_f64(&y, 2, 0);
  CHECK(!run(e, "ints", t, 4, &err));
  CHECK_STREQ(err.msg, "@ints: integer division by zero");
  char *s = span_text(e, err.span);
  CHECK_STREQ(s, "%X[%i] / %Y[%i]");
  free(s);
  release_all(t, 4);
  /* int32 loop variable * int64 size variable; int64 → float32 rounds once */
  RtTensor *w[2] = {vec(DT_INT64, 2, NULL), vec(DT_FLOAT32, 2, NULL)};
  CHECK(run_ok(e, "widen", w, 2, &err));
  CHECK(same(w[0], (double[]){16777217, 16777219}));
  CHECK(same(w[1], (double[]){16777216, 16777220}));
  release_all(w, 2);
  /* && and || are lazy: %X[%i + 1] is never read out of bounds */
  RtTensor *l[2] = {vec(DT_INT32, 3, (double[]){0, 1, 0}), vec(DT_BOOL, 3, NULL)};
  CHECK(run_ok(e, "logic", l, 2, &err));
  CHECK(same(l[1], (double[]){1, 0, 1}));
  release_all(l, 2);
}

/* float16 arithmetic rounds after every operation; uint64 values keep their full range. */
static void test_half_and_unsigned(EvalEnv *e) {
  TirError err;
  RtTensor *h[2] = {vec(DT_FLOAT16, 2, (double[]){1.5, -0.333251953125}), vec(DT_FLOAT16, 2, NULL)};
  CHECK(run_ok(e, "half", h, 2, &err));
  double want[2];
  for (int i = 0; i < 2; i++) {
    double x = rt_get_f64(h[0], i);
    double m = half_to_float(rt_double_to_half(x * 3));
    want[i] = half_to_float(rt_double_to_half(m + half_to_float(rt_double_to_half(0.1))));
  }
  CHECK(same(h[1], want));
  release_all(h, 2);
  RtTensor *u[2] = {vec(DT_UINT64, 2, NULL), vec(DT_UINT64, 2, NULL)};
  ((uint64_t *)u[0]->data)[0] = UINT64_MAX, ((uint64_t *)u[0]->data)[1] = 1;
  CHECK(run_ok(e, "uns", u, 2, &err));
  CHECK(((uint64_t *)u[1]->data)[0] == UINT64_MAX / 3 && ((uint64_t *)u[1]->data)[1] == 7);
  release_all(u, 2);
}

/* Out-of-bounds loads and stores are errors with the index, dimension and span. */
static void test_bounds(EvalEnv *e) {
  TirError err;
  RtTensor *t[2] = {vec(DT_FLOAT32, 4, NULL), vec(DT_FLOAT32, 4, NULL)};
  CHECK(!run(e, "oob", t, 2, &err));
  CHECK_STREQ(err.msg, "@oob: index 4 out of bounds for %X dimension 0 (size 4)");
  CHECK(err.param == -1);
  char *s = span_text(e, err.span);
  CHECK_STREQ(s, "%X[%i + 1]");
  free(s);
  release_all(t, 2);
  RtTensor *y = mat(DT_FLOAT32, 2, 3, NULL);
  CHECK(!run(e, "oob_store", &y, 1, &err));
  CHECK_STREQ(err.msg, "@oob_store: index -1 out of bounds for %Y dimension 1 (size 3)");
  s = span_text(e, err.span);
  CHECK_STREQ(s, "%Y[%i, %j - 1] = 1f;");
  free(s);
  rt_tensor_release(y);
}

/* Size variables bind across parameters; count, dtype and shape mismatches are errors. */
static void test_binding(EvalEnv *e) {
  TirError err;
  RtTensor *t[3] = {mat(DT_FLOAT32, 2, 4, NULL), mat(DT_FLOAT32, 3, 4, NULL),
                    mat(DT_FLOAT32, 2, 4, NULL)};
  CHECK(!run(e, "add", t, 3, &err));
  CHECK_STREQ(err.msg, "@add: size n is 2 for %X but 3 for %Y");
  CHECK(err.param == 1);
  char *s = span_text(e, err.span);
  CHECK_STREQ(s, "%Y: Buffer[(n, 4), float32]");
  free(s);
  CHECK(!run(e, "add", t, 2, &err));
  CHECK_STREQ(err.msg, "@add takes 3 buffers, got 2");
  rt_tensor_release(t[0]);
  t[0] = mat(DT_FLOAT64, 2, 4, NULL);
  CHECK(!run(e, "add", t, 3, &err));
  CHECK_STREQ(err.msg,
              "@add: parameter %X: Buffer[(n, 4), float32] cannot take a float64 tensor of shape "
              "(2, 4)");
  CHECK(err.param == 0);
  rt_tensor_release(t[0]);
  t[0] = mat(DT_FLOAT32, 2, 5, NULL);
  CHECK(!run(e, "add", t, 3, &err));
  CHECK_STREQ(err.msg,
              "@add: parameter %X: Buffer[(n, 4), float32] cannot take a float32 tensor of shape "
              "(2, 5)");
  release_all(t, 3);
  /* bind_sizes over the inputs only */
  const PrimFunc *p = module_prim(e->mod, "rowsum");
  RtTensor *x = mat(DT_FLOAT32, 3, 5, NULL);
  int64_t vals[2];
  bool known[2];
  CHECK(tir_interp_bind_sizes(p, &x, 1, vals, known, &err));
  CHECK(known[0] && known[1] && vals[0] == 3 && vals[1] == 5);
  rt_tensor_release(x);
}

static void test_program(EvalEnv *e) {
  TirCache *c = tir_interp_cache_new();
  TirError err;
  const PrimFunc *p = module_prim(e->mod, "alloc");
  const TirProgram *a = tir_interp_compile(c, p, &err), *b = tir_interp_compile(c, p, &err);
  CHECK(a && a == b); /* cached by pointer */
  CHECK(!tir_interp_writes_param(a, 0) && tir_interp_writes_param(a, 1));
  const TirProgram *q = tir_interp_compile(c, module_prim(e->mod, "inplace"), &err);
  CHECK(q && tir_interp_writes_param(q, 0));
  tir_interp_cache_free(c);
}

/* A statement list far longer than any C stack could recurse over. */
static void test_long_seq(void) {
  enum { N = 200000 };
  StrBuf b = {0};
  sb_puts(&b, "prim @many(%Y: Buffer[(2), float32]) {\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "  %%Y[%d] = %%Y[%d] + 1f;\n", i % 2, i % 2);
  sb_puts(&b, "}\n");
  EvalEnv e;
  if (eval_env_init(&e, b.data)) {
    RtTensor *y = vec(DT_FLOAT32, 2, NULL);
    TirError err;
    CHECK(run_ok(&e, "many", &y, 1, &err));
    CHECK(same(y, (double[]){N / 2, N / 2}));
    rt_tensor_release(y);
  }
  eval_env_free(&e);
  sb_free(&b);
}

/* ───────────────────────────── call_tir ───────────────────────────── */

static void test_call_tir(EvalEnv *e) {
  eval_env_expect(e, "call_tir(@rowsum, ([[1f, 2f], [3f, 4f]],), shape=[2], dtype=\"float32\")",
                  "[3f, 7f]");
  eval_env_expect(e,
                  "call_tir(@two, ([1.5f, 2f],), shape=[[2], [2]], dtype=[\"float32\", \"int32\"])",
                  "([2.5f, 3f], [2, 4])");
  /* the prim writes its input: call_tir copies it, %a is unchanged */
  eval_env_expect(e, "let %a = [1f, 2f]; let %b = call_tir(@inplace, (%a,), shape=[2]); (%a, %b)",
                  "([1f, 2f], [5f, 2f])");
  eval_env_expect(e, "call_tir(@partial_write, (), shape=[3])",
                  "[0f, 2f, 0f]"); /* outputs start at zero */
  eval_env_expect(e, "@h([1f, 2f, 3f])", "[6f]");
  eval_env_expect(e, "call_tir(\"env.linear\", ([1f],), shape=[1], dtype=\"float32\")",
                  "call_tir: external function env.linear is not registered");
  eval_env_expect(e, "@g([1f], [2f, 3f])",
                  "call_tir: size variable j is not determined by the inputs of this call");
}

/* call_tir errors carry two locations: argument and parameter, `shape`, or inside the prim. */
static void test_call_tir_errors(EvalEnv *e) {
  size_t d;
  char *got = eval_env_str(e, "@f([[1f, 2f, 3f, 4f]], [[1f, 2f, 3f, 4f], [5f, 6f, 7f, 8f]])", &d);
  CHECK_STREQ(got, "call_tir: @add: size n is 1 for %X but 2 for %Y");
  free(got);
  CHECK(e->diag.n >= d + 3);
  if (e->diag.n < d + 3) return;
  char *at = span_text(e, e->diag.items[d].span), *param = span_text(e, e->diag.items[d + 1].span);
  CHECK_STREQ(at, "%y"); /* the argument in the call */
  CHECK(e->diag.items[d + 1].level == DIAG_NOTE);
  CHECK_STREQ(e->diag.items[d + 1].msg, "parameter %Y of @add");
  CHECK_STREQ(param, "%Y: Buffer[(n, 4), float32]");
  CHECK(strstr(e->diag.items[d + 2].msg, "@f") != NULL); /* the call stack follows */
  free(at), free(param);
  /* the output does not fit: reported at `shape` */
  got = eval_env_str(e, "@f([[1f, 2f, 3f, 4f]], [[1f, 2f, 3f, 4f]])", &d);
  CHECK_STREQ(got, "call_tir: @add: size n is 1 for %X but 2 for %Z");
  free(got);
  at = span_text(e, e->diag.items[d].span);
  CHECK_STREQ(at, "[2, 4]");
  free(at);
  /* an error inside the prim: there, with a note at the call */
  got = eval_env_str(e, "call_tir(@oob, ([1f, 2f, 3f, 4f],), shape=[4])", &d);
  CHECK_STREQ(got, "@oob: index 4 out of bounds for %X dimension 0 (size 4)");
  free(got);
  CHECK(e->diag.n >= d + 2 && e->diag.items[d + 1].level == DIAG_NOTE);
  CHECK_STREQ(e->diag.items[d + 1].msg, "in @oob, called by call_tir here");
  eval_env_expect(e, "call_tir(@rowsum, ([[1f, 2f]],), shape=[1])", "[3f]"); /* still usable */
}

/* Seed 002's env.linear: out = x @ w.T + b (float32, 2-D x and w). */
static int env_linear(DLTensor *a, int n, void *ctx, char *err, size_t errn) {
  (void)ctx;
  if (n != 4 || a[0].ndim != 2 || a[1].ndim != 2 || a[0].dtype.code != kDLFloat ||
      a[0].dtype.bits != 32)
    return snprintf(err, errn, "env.linear wants (x, w, b) and an output"), 1;
  int64_t rows = a[0].shape[0], k = a[0].shape[1], m = a[1].shape[0];
  const float *x = a[0].data, *w = a[1].data, *b = a[2].data;
  float *out = a[3].data;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < m; j++) {
      float acc = b[j];
      for (int64_t r = 0; r < k; r++) acc += x[i * k + r] * w[j * k + r];
      out[i * m + j] = acc;
    }
  return 0;
}

static void test_extern(EvalEnv *e) {
  rly_register_extern("env.linear", env_linear, NULL);
  eval_env_expect(
      e, "call_tir(\"env.linear\", ([[1f, 2f]], [[1f, 1f], [0f, 3f]], [0.5f, 0f]), shape=[1, 2])",
      "[[3.5f, 6f]]");
  eval_env_expect(e, "call_tir(\"env.linear\", ([1f],), shape=[1])",
                  "call_tir: env.linear failed: env.linear wants (x, w, b) and an output");
  rly_register_extern("env.linear", NULL, NULL);
  CHECK(rly_extern_lookup("env.linear", NULL) == NULL);
  eval_env_expect(e, "call_tir(\"env.linear\", ([1f],), shape=[1])",
                  "call_tir: external function env.linear is not registered");
  rly_extern_clear();
}

/* The loops directly in a prim's body. */
static int top_loops(const PrimFunc *p) {
  int n = 0;
  for (int i = 0; i < p->body->u.seq.n; i++) n += p->body->u.seq.items[i]->kind == ST_FOR;
  return n;
}

/* Runs @name on X (rows 1..4, 5..8, 9..12) into a fresh Y, checked against want. */
static void run_rows(EvalEnv *e, const char *name, const double *want) {
  double x[12];
  for (int i = 0; i < 12; i++) x[i] = i + 1;
  RtTensor *t[2] = {mat(DT_FLOAT32, 3, 4, x), mat(DT_FLOAT32, 3, 4, NULL)};
  TirError err;
  CHECK(run_ok(e, name, t, 2, &err));
  CHECK(same(t[1], want));
  release_all(t, 2);
}

/* lower_fuse_loops (lower/tir_fuse_loops.c): a row sum and the loop that
 * reads it back at the same row fuse (same results), one that reads a
 * neighbouring row's sum does not. */
static void test_fuse_loops(EvalEnv *e) {
  static const double rows[12] = {-9, -8, -7, -6, -21, -20, -19, -18, -33, -32, -31, -30};
  static const double shifted[12] = {1, 2, 3, 4, -5, -4, -3, -2, -17, -16, -15, -14};
  PrimFunc *p = (PrimFunc *)module_prim(e->mod, "fuse_rows");
  PrimFunc *q = (PrimFunc *)module_prim(e->mod, "fuse_shifted");
  if (!p || !q) return;
  run_rows(e, "fuse_rows", rows);
  CHECK(top_loops(p) == 2);
  lower_fuse_loops(&e->arena, p->body);
  CHECK(top_loops(p) == 1);
  run_rows(e, "fuse_rows", rows);
  run_rows(e, "fuse_shifted", shifted);
  lower_fuse_loops(&e->arena, q->body);
  CHECK(top_loops(q) == 2);
  run_rows(e, "fuse_shifted", shifted);
}

/* Runs the evaluator tests on one environment holding every prim, then the long sequence test. */
int main(void) {
  EvalEnv e;
  StrBuf src = {0};
  for (int i = 0; prims[i]; i++) sb_puts(&src, prims[i]);
  if (eval_env_init(&e, src.data)) {
    test_loops(&e);
    test_loops_begin(&e);
    test_blocks(&e);
    test_alloc_let_if(&e);
    test_intrinsics(&e);
    test_ints_and_casts(&e);
    test_half_and_unsigned(&e);
    test_bounds(&e);
    test_binding(&e);
    test_program(&e);
    test_call_tir(&e);
    test_call_tir_errors(&e);
    test_extern(&e);
    test_fuse_loops(&e);
  }
  eval_env_free(&e);
  sb_free(&src);
  test_long_seq();
  return check_report("tir");
}
