/* sched_verify.c — a scheduled function against its unscheduled one: both
 * run through the TIR interpreter on the same random inputs, every buffer
 * compared afterwards (floats within a relative 1e-4: reassociated sums
 * such as rfactor's differ in rounding; everything else exactly).  Size
 * variables take the value 7 (a size no power-of-two tile divides). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "rt/tir_interp.h"
#include "sched/sched.h"

enum { SIZE_VAR_VALUE = 7 };

static uint64_t next(uint64_t *r) {
  *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
  return *r;
}

/* An element of t set from a random draw: floats in [-1, 1), integers in
 * [-8, 8) (unsigned [0, 16)), bools 0 or 1. */
static void fill_elem(RtTensor *t, int64_t i, uint64_t r) {
  double x = (double)(r >> 11) / 9007199254740992.0 * 2 - 1;
  int64_t k = (int64_t)(r % 16) - (dtype_class(t->dtype) == 'u' ? 0 : 8);
  char *p = (char *)t->data;
  switch (t->dtype) {
    case DT_FLOAT32:
      ((float *)p)[i] = (float)x;
      break;
    case DT_FLOAT64:
      ((double *)p)[i] = x;
      break;
    case DT_FLOAT16:
      ((uint16_t *)p)[i] = double_to_half(x);
      break;
    case DT_BFLOAT16:
      ((uint16_t *)p)[i] = double_to_bf16(x);
      break;
    case DT_BOOL:
      ((uint8_t *)p)[i] = r & 1;
      break;
    case DT_INT8:
    case DT_UINT8:
      ((int8_t *)p)[i] = (int8_t)k;
      break;
    case DT_INT16:
    case DT_UINT16:
      ((int16_t *)p)[i] = (int16_t)k;
      break;
    case DT_INT32:
    case DT_UINT32:
      ((int32_t *)p)[i] = (int32_t)k;
      break;
    default:
      ((int64_t *)p)[i] = k;
      break;
  }
}

static RtTensor *random_tensor(const Buffer *b, uint64_t *rng, char *err, size_t n) {
  int64_t shape[TENSOR_MAX_RANK];
  for (int d = 0; d < b->ndim; d++)
    shape[d] = b->dims[d].kind == DIM_CONST ? b->dims[d].value : SIZE_VAR_VALUE;
  RtTensor *t = rt_tensor_new(b->dtype, b->ndim, shape, err, n);
  for (int64_t i = 0; t && i < t->numel; i++) fill_elem(t, i, next(rng));
  return t;
}

static double elem(const RtTensor *t, int64_t i) {
  const char *p = (const char *)t->data;
  switch (t->dtype) {
    case DT_FLOAT32:
      return ((const float *)p)[i];
    case DT_FLOAT64:
      return ((const double *)p)[i];
    default:
      return NAN;
  }
}

/* The first element where a and b differ, or -1. */
static int64_t differs(const RtTensor *a, const RtTensor *b) {
  size_t w = (size_t)dtype_bytes(a->dtype);
  for (int64_t i = 0; i < a->numel; i++) {
    if (a->dtype == DT_FLOAT32 || a->dtype == DT_FLOAT64) {
      double x = elem(a, i), y = elem(b, i);
      if (isnan(x) && isnan(y)) continue;
      if (!(fabs(x - y) <= 1e-4 * fmax(1.0, fmax(fabs(x), fabs(y))))) return i;
    } else if (memcmp((const char *)a->data + i * w, (const char *)b->data + i * w, w)) {
      return i;
    }
  }
  return -1;
}

static void release_all(RtTensor **v, int n) {
  for (int i = 0; i < n; i++) rt_tensor_release(v[i]);
}

static bool run(const PrimFunc *f, RtTensor **args, char *err, size_t n, const char *which) {
  TirError e = {0};
  if (tir_interp_run_func(f, args, f->nparams, &e)) return true;
  snprintf(err, n, "the %s function failed: %s", which, e.msg);
  return false;
}

bool sched_random_args(const PrimFunc *f, uint64_t seed, RtTensor **out, char *err, size_t n) {
  uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 0x1234567;
  for (int i = 0; i < f->nparams; i++) {
    out[i] = random_tensor(f->params[i], &rng, err, n);
    if (!out[i]) return false;
  }
  return true;
}

/* g (f as scheduled, or as it runs) against f's unscheduled function. */
static bool verify_one(const PrimFunc *f, const PrimFunc *g, uint64_t seed, char *err, size_t n) {
  int np = f->nparams;
  RtTensor *a[64] = {0}, *b[64] = {0};
  bool ok = sched_random_args(f, seed, a, err, n);
  for (int i = 0; i < np && ok; i++) {
    b[i] = rt_tensor_new(a[i]->dtype, a[i]->ndim, a[i]->shape, err, n);
    ok = b[i] != NULL;
    if (ok) memcpy(b[i]->data, a[i]->data, (size_t)a[i]->numel * (size_t)dtype_bytes(a[i]->dtype));
  }
  ok = ok && run(f->unscheduled, a, err, n, "unscheduled") &&
       run(g, b, err, n, g == f ? "scheduled" : "compacted");
  for (int i = 0; i < np && ok; i++) {
    int64_t at = differs(a[i], b[i]);
    if (at < 0) continue;
    snprintf(err, n, "the %s changed the result: %%%s[%lld] is %.9g, was %.9g unscheduled",
             g == f ? "schedule" : "buffer compaction", f->params[i]->name, (long long)at,
             elem(b[i], at), elem(a[i], at));
    ok = false;
  }
  release_all(a, np), release_all(b, np);
  return ok;
}

bool sched_verify(const PrimFunc *f, uint64_t seed, char *err, size_t n) {
  if (!f->unscheduled || f->nparams > 64) return true;
  return verify_one(f, f, seed, err, n) && (!f->lowered || verify_one(f, f->lowered, seed, err, n));
}
