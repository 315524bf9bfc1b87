/* test_jit.c — the LLVM JIT (jit/jit.h) against the TIR reference
 * interpreter: every prim function of tests/lit/ and examples/ (.rly files)
 * plus the prims below (reductions with init, size variables, float16,
 * int8 wrap, parallel, vectorized, lazy select/&&, casts (and every rule
 * of ir/tir_rules.h: saturation, NaN, to and from bool and float16), heap allocs,
 * bounds errors, division by zero, loops of every kind from a begin) run
 * on random inputs through both, and the outputs, the success and the
 * error message and span must agree.
 *
 * Tolerance: with contraction off (jit_set_contract(false)) results must
 * be bit-identical (NaNs compare equal whatever their payload); with it on
 * (the default, a*b+c may become one fma) floats may differ by a relative
 * 1e-4 (reductions of at most a few dozen terms of values in [-3, 3]).
 * Also: the disk cache (a reset process image loads, compiles nothing; a
 * corrupted or truncated entry is detected and rebuilt).  argv[1]: the
 * source root. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/jit.h"
#include "parser/parser.h"
#include "rt/tir_interp.h"
#include "tests/unit/check.h"

static const char own_prims[] =
    "prim @sum_sq(%A: Buffer[(n, m), float32], %S: Buffer[(n), float32]) {\n"
    "  for %i, %k in grid(n, m) {\n"
    "    block \"S\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "      init { %S[%vi] = 0f; }\n"
    "      %S[%vi] = %S[%vi] + %A[%vi, %vk] * %A[%vi, %vk];\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @matmul(%A: Buffer[(n, k), float32], %B: Buffer[(k, m), float32], %C: Buffer[(n, m), "
    "float32]) {\n"
    "  for %i in parallel(n) {\n"
    "    for %j, %r in grid(m, k) {\n"
    "      block \"C\" (spatial %vi = %i, spatial %vj = %j, reduce %vr = %r) {\n"
    "        init { %C[%vi, %vj] = 0f; }\n"
    "        %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vr] * %B[%vr, %vj];\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @conv1d(%X: Buffer[(n), float32], %W: Buffer[(3), float32], %Y: Buffer[(n), float32]) {\n"
    "  for %i, %k in grid(n, 3) {\n"
    "    block \"Y\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "      init { %Y[%vi] = 0f; }\n"
    "      if (%vi + %vk - 1 >= 0 && %vi + %vk - 1 < n) {\n"
    "        %Y[%vi] = %Y[%vi] + %X[%vi + %vk - 1] * %W[%vk];\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @f16ops(%A: Buffer[(n), float16], %B: Buffer[(n), float16], %C: Buffer[(n), float16]) {\n"
    "  for %i in range(0, n) {\n"
    "    %C[%i] = %A[%i] * %B[%i] + exp(%A[%i]) - sqrt(abs(%B[%i])) / 3f16;\n"
    "  }\n"
    "}\n"
    "prim @wrap8(%A: Buffer[(n), int8], %B: Buffer[(n), int8], %C: Buffer[(n), int8]) {\n"
    "  for %i in vectorized(n) {\n"
    "    %C[%i] = %A[%i] * %B[%i] + 100i8 - %A[%i] / (abs(%B[%i]) + 1i8) + -%A[%i] % 7i8;\n"
    "  }\n"
    "}\n"
    "prim @transpose2(%A: Buffer[(n, m), float32], %B: Buffer[(m, n), float32]) {\n"
    "  for %i, %j in parallel(m, n) {\n"
    "    %B[%i, %j] = %A[%j, %i] * 2f + max(%A[%j, %i], 0.5f);\n"
    "  }\n"
    "}\n"
    "prim @vec(%A: Buffer[(n), float32], %B: Buffer[(n), float32], %C: Buffer[(n), float32]) {\n"
    "  for %i in vectorized(n) {\n"
    "    %C[%i] = select(%A[%i] > %B[%i], %A[%i] - %B[%i], min(%A[%i], %B[%i]) * 0.25f);\n"
    "  }\n"
    "}\n"
    "prim @nan(%A: Buffer[(n), float32], %B: Buffer[(n), float32], %C: Buffer[(n), float32]) {\n"
    "  for %i in vectorized(n) {\n"
    "    %C[%i] = max(%A[%i] / %B[%i], min(%B[%i], %A[%i])) + floor(%A[%i]) - ceil(%B[%i]);\n"
    "  }\n"
    "}\n"
    "prim @oob(%A: Buffer[(n), float32], %B: Buffer[(n), float32]) {\n"
    "  for %i in range(0, n) {\n"
    "    %B[%i] = %A[%i + 1];\n"
    "  }\n"
    "}\n"
    "prim @oob_par(%A: Buffer[(n), float32], %B: Buffer[(n), float32]) {\n"
    "  for %i in parallel(n) {\n"
    "    %B[%i] = %A[%i * 2];\n"
    "  }\n"
    "}\n"
    "prim @div0(%A: Buffer[(n), int32], %B: Buffer[(n), int32], %C: Buffer[(n), int32]) {\n"
    "  for %i in range(0, n) {\n"
    "    %C[%i] = %A[%i] / %B[%i] + %A[%i] % %B[%i];\n"
    "  }\n"
    "}\n"
    "prim @gather(%I: Buffer[(n), int64], %A: Buffer[(m), float32], %B: Buffer[(n), float32]) {\n"
    "  for %i in parallel(n) {\n"
    "    if (%I[%i] >= 0i64 && %I[%i] < m) {\n"
    "      %B[%i] = %A[%I[%i]];\n"
    "    } else {\n"
    "      %B[%i] = -1f;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @lazy(%I: Buffer[(n), int32], %A: Buffer[(4), float32], %B: Buffer[(n), float32]) {\n"
    "  for %i in range(0, n) {\n"
    "    %B[%i] = select(%I[%i] >= 0 && %I[%i] < 4, %A[%I[%i]], 0f);\n"
    "  }\n"
    "}\n"
    "prim @casts(%A: Buffer[(n), float32], %B: Buffer[(n), int8], %C: Buffer[(n), uint8],\n"
    "            %D: Buffer[(n), int64], %E: Buffer[(n), float64], %F: Buffer[(n), bool]) {\n"
    "  for %i in range(0, n) {\n"
    "    %B[%i] = int8(%A[%i] * 100f);\n"
    "    %C[%i] = uint8(%A[%i] * 100f);\n"
    "    %D[%i] = int64(%A[%i] * 10000000000f);\n"
    "    %E[%i] = float64(%A[%i]) / 3f64 + float64(int32(%A[%i]));\n"
    "    %F[%i] = %A[%i] > 0f || !(%A[%i] < -1f);\n"
    "  }\n"
    "}\n"
    "prim @heap(%A: Buffer[(n), float32], %B: Buffer[(n), float32]) {\n"
    "  alloc %T: Buffer[(n), float32];\n"
    "  alloc %U: Buffer[(8192), float32];\n"
    "  for %i in range(0, n) {\n"
    "    %T[%i] = %A[%i] * %A[%i];\n"
    "    %U[%i] = %T[%i] + 1f;\n"
    "  }\n"
    "  for %i in unrolled(4) {\n"
    "    let %t = %U[%i % n] * float32(%i);\n"
    "    %B[%i % n] = %B[%i % n] + %t;\n"
    "  }\n"
    "}\n"
    "prim @u64(%A: Buffer[(n), uint64], %B: Buffer[(n), uint64]) {\n"
    "  for %i in range(0, n) {\n"
    "    %B[%i] = %A[%i] * 3u64 / 7u64 + max(%A[%i], 5u64) % 11u64;\n"
    "  }\n"
    "}\n"
    "prim @math(%A: Buffer[(n), float32], %B: Buffer[(n), float64], %C: Buffer[(n), float32],\n"
    "           %D: Buffer[(n), float64]) {\n"
    "  for %i in range(0, n) {\n"
    "    %C[%i] = tanh(%A[%i]) + sigmoid(%A[%i]) + log(abs(%A[%i]) + 1f) + pow(abs(%A[%i]), "
    "1.5f);\n"
    "    %D[%i] = tanh(%B[%i]) + sigmoid(%B[%i]) + exp(%B[%i]) + pow(abs(%B[%i]), 0.5f64) % "
    "0.7f64;\n"
    "  }\n"
    "}\n";

/* Every conversion rule of ir/tir_rules.h. */
static const char conv_prims[] =
    "prim @convs(%A: Buffer[(n), float32], %I: Buffer[(n), int8], %U: Buffer[(n), uint16],\n"
    "            %B: Buffer[(n), bool], %C: Buffer[(n), bool], %H: Buffer[(n), float16],\n"
    "            %W: Buffer[(n), uint64], %S: Buffer[(n), int16], %G: Buffer[(n), float32]) {\n"
    "  for %i in range(0, n) {\n"
    "    let %z = %A[%i] - %A[%i];\n" /* NaN, inf, -inf, then the input */
    "    let %v = select(%i % 4 == 0, %z / %z, select(%i % 4 == 1, 1f / %z,\n"
    "                    select(%i % 4 == 2, -1f / %z, %A[%i] * 1000f)));\n"
    "    %B[%i] = bool(%v);\n"
    "    %C[%i] = bool(%I[%i]) && !bool(%U[%i]);\n"
    "    %H[%i] = float16(%I[%i]) * float16(%v);\n"
    "    %W[%i] = uint64(%v * 10000000000000000f) + uint64(%I[%i]);\n"
    "    %S[%i] = int16(%U[%i] * 2000u16) + int16(%v * 20f);\n"
    "    %G[%i] = float32(int64(%v * 1000000000f)) + float32(%W[%i]) + float32(%B[%i]);\n"
    "  }\n"
    "}\n";

/* Loops from a begin, kind(begin, end), of every kind.  @par_tail's output
 * is not written in full (the JIT must not skip its zero-fill); the chunks
 * of a parallel loop split across threads start at its begin. */
static const char begin_prims[] =
    "prim @par_tail(%A: Buffer[(n), float32], %B: Buffer[(n), float32]) {\n"
    "  for %i in parallel(2, n) {\n"
    "    %B[%i] = %A[%i] * 2f + float32(%i);\n"
    "  }\n"
    "}\n"
    "prim @par_sizes(%A: Buffer[(n), float32], %C: Buffer[(m), float32], %B: Buffer[(n), float32]) "
    "{\n"
    "  for %i in parallel(m - 1, n - 1) {\n"
    "    %B[%i + 1] = %A[%i] + %C[0] * float32(%i);\n"
    "  }\n"
    "  for %i in parallel(-3, n) {\n"
    "    if (%i >= 0) { %B[%i] = %B[%i] + 0.5f; } else { %B[0] = %B[0] - float32(%i); }\n"
    "  }\n"
    "  for %t in range(1, 3) {\n"
    "    for %i in parallel(%t, n) {\n"
    "      %B[%i] = %B[%i] * 0.5f + float32(%t);\n"
    "    }\n"
    "  }\n"
    "  for %i in parallel(n, 3) { %B[%i] = %B[%i] + 7f; }\n"
    "}\n"
    /* init runs once, at the loop's begin, not at each thread's chunk */
    "prim @par_init(%A: Buffer[(n), float32], %S: Buffer[(1), float32], %B: Buffer[(n), float32]) "
    "{\n"
    "  for %k in parallel(2, n) {\n"
    "    block \"B\" (reduce %vk = %k) {\n"
    "      init { %S[0] = %S[0] + 1f; }\n"
    "      %B[%vk] = %A[%vk] + 1f;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @vec_begin(%A: Buffer[(n, m), float32], %B: Buffer[(n, m), float32]) {\n"
    "  for %i in parallel(1, n) {\n"
    "    for %j in vectorized(3, m) {\n"
    "      %B[%i, %j] = %A[%i, %j] * %A[%i - 1, %j] + float32(%j);\n"
    "    }\n"
    "  }\n"
    "  for %j in vectorized(1, m - 2) {\n"
    "    %B[0, %j] = max(%A[0, %j - 1], %A[0, %j + 1]);\n"
    "  }\n"
    "}\n"
    "prim @unroll_begin(%A: Buffer[(n), int32], %B: Buffer[(n), int32]) {\n"
    "  for %i in unrolled(2, 6) {\n"
    "    %B[%i % n] = %B[%i % n] + %A[%i % n] * %i;\n"
    "  }\n"
    "  for %i in unrolled(1, n) {\n"
    "    %B[%i] = %B[%i] * 3 - %B[%i - 1];\n"
    "  }\n"
    "  for %i in unrolled(5, 2) { %B[0] = 999; }\n"
    "  for %i in range(1i64, 3) { %B[0] = %B[0] + int32(%i); }\n"
    "}\n"
    /* Reductions over loops from a begin: init runs at the begin. */
    "prim @red_begin(%A: Buffer[(n, m), float32], %S: Buffer[(n), float32]) {\n"
    "  for %i in parallel(1, n) {\n"
    "    for %k in range(m / 2, m) {\n"
    "      block \"S\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "        init { %S[%vi] = 100f; }\n"
    "        %S[%vi] = %S[%vi] + %A[%vi, %vk];\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "prim @red_kinds(%A: Buffer[(n, 8), int32], %S: Buffer[(n), int32], %T: Buffer[(n), int32]) {\n"
    "  for %i in parallel(n) {\n"
    "    for %k in unrolled(3, 8) {\n"
    "      block \"S\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "        init { %S[%vi] = -1000; }\n"
    "        %S[%vi] = %S[%vi] + %A[%vi, %vk] * %vk;\n"
    "      }\n"
    "    }\n"
    "    for %k in vectorized(1, 7) {\n"
    "      block \"T\" (spatial %vi = %i, reduce %vk = %k) {\n"
    "        init { %T[%vi] = 50; }\n"
    "        %T[%vi] = max(%T[%vi], %A[%vi, %vk] + %vk);\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

/* ───────────────────────────── inputs ───────────────────────────── */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static double uniform(double lo, double hi) {
  return lo + (hi - lo) * (double)(next_rand() >> 11) / 9007199254740992.0;
}

/* A random element for dt: small integers (full range for 8-bit), and
 * floats in [-3, 3] with some 0, -0 and NaN, where the two sides may differ. */
static double random_value(DType dt) {
  uint64_t r = next_rand() % 100;
  switch (dt) {
    case DT_BOOL:
      return (double)(r & 1);
    case DT_INT8:
      return (double)((int)(next_rand() % 256) - 128);
    case DT_UINT8:
      return (double)(next_rand() % 256);
    case DT_INT16:
    case DT_INT32:
    case DT_INT64:
      return (double)((int)(next_rand() % 9) - 3);
    case DT_UINT16:
    case DT_UINT32:
    case DT_UINT64:
      return (double)(next_rand() % 40);
    default:
      if (r < 4) return 0.0;
      if (r < 6) return -0.0;
      if (r < 8 && dt != DT_FLOAT16) return NAN;
      return uniform(-3, 3);
  }
}

static RtTensor *fill(const Buffer *b, const int64_t *sizes, const PrimFunc *f, bool zero) {
  int64_t shape[TENSOR_MAX_RANK];
  for (int d = 0; d < b->ndim; d++) {
    shape[d] = b->dims[d].kind == DIM_CONST ? b->dims[d].value : 1;
    for (int s = 0; s < f->nsizevars && b->dims[d].kind == DIM_VAR; s++)
      if (strcmp(f->sizevars[s]->name, b->dims[d].name) == 0) shape[d] = sizes[s];
  }
  RtTensor *t = rt_tensor_zeros(b->dtype, b->ndim, shape, NULL, 0);
  Tensor v = rt_tensor_as_ir(t);
  for (int64_t i = 0; !zero && i < t->numel; i++) tensor_set_f64(&v, i, random_value(b->dtype));
  return t;
}

static RtTensor *copy_of(const RtTensor *t) {
  RtTensor *c = rt_tensor_new(t->dtype, t->ndim, t->shape, NULL, 0);
  memcpy(c->data, t->data, rt_tensor_nbytes(t));
  return c;
}

/* ───────────────────────────── comparing ───────────────────────────── */

static bool same_elem(const RtTensor *a, const RtTensor *b, int64_t i, double tol) {
  if (!dtype_is_float(a->dtype)) {
    size_t w = (size_t)dtype_bytes(a->dtype);
    return memcmp((const char *)a->data + i * (int64_t)w, (const char *)b->data + i * (int64_t)w,
                  w) == 0;
  }
  double x = rt_get_f64(a, i), y = rt_get_f64(b, i);
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (tol == 0) {
    if (x == 0 && y == 0) return signbit(x) == signbit(y);
    return x == y;
  }
  return fabs(x - y) <= tol * (fabs(x) + fabs(y) + 1e-3) || x == y;
}

static int compared, errors_compared, full_outputs;

/* Runs f on the same random inputs through the interpreter and the JIT:
 * both succeed with equal outputs (within tol) or fail with the same message,
 * span and parameter.  Outputs the kernel writes in full start as garbage. */
static bool compare_run(const PrimFunc *f, double tol, int trial) {
  int n = f->nparams;
  int64_t sizes[16];
  for (int i = 0; i < f->nsizevars && i < 16; i++)
    sizes[i] = 1 + (int64_t)(next_rand() % (trial ? 37 : 5));
  RtTensor **a = calloc((size_t)n + 1, sizeof *a), **b = calloc((size_t)n + 1, sizeof *b);
  for (int i = 0; i < n; i++) {
    a[i] = fill(f->params[i], sizes, f, i == n - 1);
    b[i] = copy_of(a[i]);
  }
  TirError ea, eb;
  bool oka = tir_interp_run_func(f, a, n, &ea);
  const JitKernel *k = jit_get(f, &eb);
  bool ok = k != NULL || !oka; /* the interpreter may reject it too (an unverified prim) */
  if (!k && oka) fprintf(stderr, "@%s: JIT failed: %s\n", f->name, eb.msg);
  for (int i = 0; k && i < n; i++) /* "written in full": garbage there must not show */
    if (jit_writes_all_of_param(k, i))
      memset(b[i]->data, 0xa5, rt_tensor_nbytes(b[i])), full_outputs++;
  bool okb = k && jit_run(k, b, n, &eb);
  if (k && oka != okb) {
    fprintf(stderr, "@%s: interp %s, jit %s (%s | %s)\n", f->name, oka ? "ok" : "failed",
            okb ? "ok" : "failed", oka ? "" : ea.msg, okb ? "" : eb.msg);
    ok = false;
  } else if (k && !oka) {
    errors_compared++;
    if (strcmp(ea.msg, eb.msg) != 0 || ea.span.off != eb.span.off || ea.param != eb.param) {
      fprintf(stderr, "@%s: errors differ:\n  interp: %s (at %u)\n  jit:    %s (at %u)\n", f->name,
              ea.msg, ea.span.off, eb.msg, eb.span.off);
      ok = false;
    }
  } else if (k) {
    for (int i = 0; i < n && ok; i++)
      for (int64_t j = 0; j < a[i]->numel && ok; j++)
        if (!same_elem(a[i], b[i], j, tol)) {
          fprintf(stderr, "@%s: param %d element %lld: interp %.9g, jit %.9g\n", f->name, i,
                  (long long)j, rt_get_f64(a[i], j), rt_get_f64(b[i], j));
          ok = false;
        }
  }
  for (int i = 0; i < n; i++) rt_tensor_release(a[i]), rt_tensor_release(b[i]);
  free(a), free(b);
  compared++;
  return ok;
}

static void compare_prim(const PrimFunc *f) {
  jit_set_contract(false);
  for (int t = 0; t < 4; t++) CHECK(compare_run(f, 0, t));
  jit_set_contract(true);
  for (int t = 0; t < 2; t++) CHECK(compare_run(f, 1e-4, t));
  jit_set_contract(false);
}

/* ───────────────────────────── sources ───────────────────────────── */

typedef struct Src {
  Arena arena;
  DiagCtx diag;
  Module *mod;
} Src;

static int compare_text(const char *name, const char *text) {
  Src s;
  arena_init(&s.arena);
  diag_init(&s.diag);
  s.mod = module_new(&s.arena);
  uint32_t file = diag_add_source(&s.diag, name, text, strlen(text));
  ParseResult r = parse_script(s.mod, &s.diag, file, NULL);
  int count = 0;
  if (r.ok)
    for (int i = 0; i < s.mod->ndefs; i++)
      if (s.mod->defs[i].kind == DEF_PRIM) compare_prim(s.mod->defs[i].u.prim), count++;
  jit_reset(); /* kernels point into this module */
  module_free(s.mod);
  diag_free(&s.diag);
  arena_free(&s.arena);
  return count;
}

/* Compares every prim function of the .rly files under dir, recursively;
 * returns how many were compared. */
static int compare_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      count += compare_dir(path);
      continue;
    }
    if (len < 4 || strcmp(e->d_name + len - 4, ".rly") != 0) continue;
    char *text = read_whole_file(path, NULL);
    if (text && strstr(text, "prim @")) count += compare_text(path, text);
    free(text);
  }
  closedir(d);
  return count;
}

/* ───────────────────────────── disk cache ───────────────────────────── */

static char cache_root[256];

/* Damages every cached kernel file: halves it, or flips a byte in the middle. */
static void corrupt_cache(bool truncate_it) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/rly", cache_root);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (truncate_it) {
      CHECK(truncate(path, st.st_size / 2) == 0);
      continue;
    }
    FILE *fp = fopen(path, "r+b");
    fseek(fp, st.st_size / 2, SEEK_SET);
    int ch = fgetc(fp);
    fseek(fp, st.st_size / 2, SEEK_SET);
    fputc(ch ^ 0x55, fp);
    fclose(fp);
  }
  closedir(d);
}

static bool kernel_from_disk(const PrimFunc *f) {
  TirError e;
  const JitKernel *k = jit_get(f, &e);
  CHECK(k != NULL);
  JitKernelInfo info;
  CHECK(jit_kernel_info(jit_kernel_count() - 1, &info));
  CHECK(compare_run(f, 0, 1));
  return info.from_disk;
}

/* A fresh start loads a kernel from disk; a flipped or truncated file is rebuilt. */
static void test_disk_cache(void) {
  Src s;
  arena_init(&s.arena);
  diag_init(&s.diag);
  s.mod = module_new(&s.arena);
  uint32_t file = diag_add_source(&s.diag, "<own>", own_prims, strlen(own_prims));
  CHECK(parse_script(s.mod, &s.diag, file, NULL).ok);
  const PrimFunc *f = module_prim(s.mod, "matmul");
  jit_reset();
  CHECK(kernel_from_disk(f)); /* stored by the comparisons above; a fresh start loads it */
  corrupt_cache(false);
  jit_reset();
  CHECK(!kernel_from_disk(f)); /* a flipped byte: rebuilt */
  jit_reset();
  CHECK(kernel_from_disk(f));
  corrupt_cache(true);
  jit_reset();
  CHECK(!kernel_from_disk(f)); /* truncated: rebuilt */
  jit_reset();
  CHECK(kernel_from_disk(f));
  jit_reset();
  module_free(s.mod);
  diag_free(&s.diag);
  arena_free(&s.arena);
}

static void rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
      rm_tree(path);
    else
      unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

/* Compares the own, lit and example prims with a private cache directory,
 * then tests the disk cache and removes the directory. */
int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  snprintf(cache_root, sizeof cache_root, "/tmp/rly-test-jit-XXXXXX");
  CHECK(mkdtemp(cache_root) != NULL);
  char cache_dir[512];
  snprintf(cache_dir, sizeof cache_dir, "%s/rly", cache_root);
  jit_set_cache_dir(cache_dir); /* what the engine sets from XDG_CACHE_HOME */
  if (!jit_available()) {
    fprintf(stderr, "JIT unavailable: %s\n", jit_unavailable_reason());
    CHECK(false);
    return check_report("test_jit");
  }
  int own = compare_text("<own>", own_prims);
  CHECK(own >= 17);
  int begins = compare_text("<begin>", begin_prims);
  CHECK(begins == 7); /* all parse */
  int convs = compare_text("<convs>", conv_prims);
  CHECK(convs == 1);
  own += begins + convs;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/lit", root);
  int lit = compare_dir(dir);
  snprintf(dir, sizeof dir, "%s/examples", root);
  int ex = compare_dir(dir);
  CHECK(lit >= 10);
  printf("compared %d prim functions (%d own, %d lit, %d examples), %d runs, %d errors\n",
         own + lit + ex, own, lit, ex, compared, errors_compared);
  CHECK(errors_compared > 0);
  CHECK(full_outputs > 0);
  test_disk_cache();
  rm_tree(cache_root);
  return check_report("test_jit");
}
