/* tensor.c — dtype table lookups and arena-allocated dense tensors. */
#include "ir/tensor.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/util.h"

typedef struct DTypeInfo {
  const char *name;
  const char *suffix;
} DTypeInfo;

static const DTypeInfo dtype_table[] = {
#define X(e, n, b, c, s) {n, s},
    DTYPE_LIST(X)
#undef X
};

const char *dtype_name(DType t) { return t >= 0 && t < DT_COUNT ? dtype_table[t].name : "?"; }
const char *dtype_suffix(DType t) { return dtype_table[t].suffix; }

/* TVM's String2DLDataType reads a bare class name with its default width. */
static const struct {
  const char *name;
  DType dt;
} dtype_aliases[] = {{"int", DT_INT32}, {"uint", DT_UINT32}, {"float", DT_FLOAT32}};

DType dtype_from_name(const char *s, size_t n) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strlen(dtype_table[i].name) == n && memcmp(dtype_table[i].name, s, n) == 0) return (DType)i;
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
    if (strlen(dtype_aliases[i].name) == n && memcmp(dtype_aliases[i].name, s, n) == 0)
      return dtype_aliases[i].dt;
  return DT_INVALID;
}

float half_to_float(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0)
    v = ldexpf((float)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexpf((float)(m | 1024), e - 25);
  return s ? -v : v;
}

/* Exact: every float is a double, so this rounds once. */
uint16_t float_to_half(float f) { return double_to_half(f); }

uint16_t double_to_half(double d) {
  uint64_t x;
  memcpy(&x, &d, 8);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000);
  if (isnan(d)) return sign | 0x7e00;
  double a = fabs(d);
  if (a >= 65520.0) return sign | 0x7c00; /* 65520 rounds (to even) up to 2^16 */
  if (a <= 0x1p-25) return sign;          /* the halfway point rounds to even: 0 */
  int e;
  frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exp = e - 1 + 15;
  if (exp <= 0)
    return sign | (uint16_t)nearbyint(ldexp(a, 24));     /* subnormal (may carry to normal) */
  uint32_t mant = (uint32_t)nearbyint(ldexp(a, 11 - e)); /* 11 bits with the hidden one */
  if (mant == 2048) mant = 1024, exp++;
  if (exp >= 31) return sign | 0x7c00;
  return sign | (uint16_t)(exp << 10) | (uint16_t)(mant & 1023);
}

/* ── float literal text ── */

/* Is a exactly halfway between two adjacent values of a float format with
 * `mant` stored mantissa bits and least normal exponent emin (or between
 * its largest value and the next power of two, where it overflows)? */
static bool format_tie(double a, int emin, int mant) {
  int e;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  double ulp = ldexp(1, (e - 1 < emin ? emin : e - 1) - mant);
  return a > 0 && fmod(a, ulp) == ulp / 2;
}

/* strtod under a directed rounding mode (C11 F.5: conversions honour it). */
static double strtod_rounded(const char *s, int mode) {
  int saved = fegetround();
  fesetround(mode);
  double v = strtod(s, NULL);
  fesetround(saved);
  return v;
}

/* Decimal → half rounded once.  Through a double it rounds twice, which
 * goes wrong only when the double lands exactly on a tie that the decimal
 * value was not on (65519.999999999999999f16 is 65504, not inf): then
 * which side of the tie the text lies on decides. */
static uint16_t half_from_text(const char *s) {
  double d = strtod(s, NULL);
  if (!format_tie(fabs(d), -14, 10)) return double_to_half(d);
  double lo = strtod_rounded(s, FE_DOWNWARD), hi = strtod_rounded(s, FE_UPWARD);
  if (lo == hi) return double_to_half(d); /* the text is the tie: to even */
  return double_to_half(lo != d ? lo : hi);
}

/* Decimal → bfloat16 rounded once, as half_from_text. */
static uint16_t bf16_from_text(const char *s) {
  double d = strtod(s, NULL);
  if (!format_tie(fabs(d), -126, 7)) return double_to_bf16(d);
  double lo = strtod_rounded(s, FE_DOWNWARD), hi = strtod_rounded(s, FE_UPWARD);
  if (lo == hi) return double_to_bf16(d);
  return double_to_bf16(lo != d ? lo : hi);
}

bool float_from_text(const char *s, DType dt, double *out) {
  switch (dt) {
    case DT_FLOAT16:
      *out = half_to_float(half_from_text(s));
      break;
    case DT_BFLOAT16:
      *out = bf16_to_float(bf16_from_text(s));
      break;
    case DT_FLOAT32:
      *out = strtof(s, NULL);
      break; /* not via double: that rounds twice */
    default:
      *out = strtod(s, NULL);
      break;
  }
  return !isinf(*out);
}

static bool reads_back(const char *text, double v, DType dt) {
  double back;
  return float_from_text(text, dt, &back) && memcmp(&back, &v, sizeof v) == 0;
}

/* v to prec digits rounded away from zero (C11 F.5: printf honours the
 * rounding mode; where it does not, this is the nearest, which the caller
 * has tried already).  Above a power of two the gap between floats is
 * twice the gap below, so the nearest decimal may fall out below while the
 * one above reads back: float16 2^-6 is 0.01563 (0.01562 misses). */
static void decimal_away_from_zero(char *buf, size_t n, int prec, double v) {
  int saved = fegetround();
  fesetround(v < 0 ? FE_DOWNWARD : FE_UPWARD);
  snprintf(buf, n, "%.*g", prec, v);
  fesetround(saved);
}

void float_to_text(char *buf, size_t n, double v, DType dt) {
  if (!isfinite(v)) { /* the sign of a NaN is not kept: numpy prints nan too */
    snprintf(buf, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return;
  }
  int max_digits = dt == DT_BFLOAT16 ? 4 : dt == DT_FLOAT16 ? 5 : dt == DT_FLOAT32 ? 9 : 17;
  int exp;
  bool pow2 = fabs(frexp(v, &exp)) == 0.5;
  for (int prec = 1; prec <= max_digits; prec++) {
    snprintf(buf, n, "%.*g", prec, v);
    if (reads_back(buf, v, dt)) return;
    if (pow2 && prec < max_digits) {
      decimal_away_from_zero(buf, n, prec, v);
      if (reads_back(buf, v, dt)) return;
    }
  }
  snprintf(buf, n, "%.*g", max_digits, v);
}

Tensor *tensor_new(Arena *a, DType dt, int ndim, const int64_t *shape) {
  Tensor *t = ARENA_NEW(a, Tensor);
  t->dtype = dt, t->ndim = ndim;
  t->shape = ARENA_ARRAY(a, int64_t, ndim ? ndim : 1);
  t->numel = 1;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i], t->numel *= shape[i];
  t->data = arena_alloc_aligned(a, tensor_nbytes(t) ? tensor_nbytes(t) : 1, 64);
  return t;
}

size_t tensor_nbytes(const Tensor *t) { return (size_t)t->numel * (size_t)dtype_bytes(t->dtype); }

#define GET_CASES(RET)                                           \
  switch (t->dtype) {                                            \
    case DT_BOOL:                                                \
      return (RET)((const uint8_t *)t->data)[i];                 \
    case DT_INT8:                                                \
      return (RET)((const int8_t *)t->data)[i];                  \
    case DT_INT16:                                               \
      return (RET)((const int16_t *)t->data)[i];                 \
    case DT_INT32:                                               \
      return (RET)((const int32_t *)t->data)[i];                 \
    case DT_INT64:                                               \
      return (RET)((const int64_t *)t->data)[i];                 \
    case DT_UINT8:                                               \
      return (RET)((const uint8_t *)t->data)[i];                 \
    case DT_UINT16:                                              \
      return (RET)((const uint16_t *)t->data)[i];                \
    case DT_UINT32:                                              \
      return (RET)((const uint32_t *)t->data)[i];                \
    case DT_UINT64:                                              \
      return (RET)((const uint64_t *)t->data)[i];                \
    case DT_FLOAT16:                                             \
      return (RET)half_to_float(((const uint16_t *)t->data)[i]); \
    case DT_FLOAT32:                                             \
      return (RET)((const float *)t->data)[i];                   \
    case DT_FLOAT64:                                             \
      return (RET)((const double *)t->data)[i];                  \
    case DT_BFLOAT16:                                            \
      return (RET)bf16_to_float(((const uint16_t *)t->data)[i]); \
    default:                                                     \
      RLY_UNREACHABLE();                                         \
  }

double tensor_get_f64(const Tensor *t, int64_t i){GET_CASES(double)} int64_t
    tensor_get_i64(const Tensor *t, int64_t i){GET_CASES(int64_t)} uint64_t
    tensor_get_u64(const Tensor *t, int64_t i) {
  GET_CASES(uint64_t)
}

#define SET_CASES(v)                                          \
  switch (t->dtype) {                                         \
    case DT_BOOL:                                             \
      ((uint8_t *)t->data)[i] = (v) != 0;                     \
      break;                                                  \
    case DT_INT8:                                             \
      ((int8_t *)t->data)[i] = (int8_t)(v);                   \
      break;                                                  \
    case DT_INT16:                                            \
      ((int16_t *)t->data)[i] = (int16_t)(v);                 \
      break;                                                  \
    case DT_INT32:                                            \
      ((int32_t *)t->data)[i] = (int32_t)(v);                 \
      break;                                                  \
    case DT_INT64:                                            \
      ((int64_t *)t->data)[i] = (int64_t)(v);                 \
      break;                                                  \
    case DT_UINT8:                                            \
      ((uint8_t *)t->data)[i] = (uint8_t)(v);                 \
      break;                                                  \
    case DT_UINT16:                                           \
      ((uint16_t *)t->data)[i] = (uint16_t)(v);               \
      break;                                                  \
    case DT_UINT32:                                           \
      ((uint32_t *)t->data)[i] = (uint32_t)(v);               \
      break;                                                  \
    case DT_UINT64:                                           \
      ((uint64_t *)t->data)[i] = (uint64_t)(v);               \
      break;                                                  \
    case DT_FLOAT16:                                          \
      ((uint16_t *)t->data)[i] = double_to_half((double)(v)); \
      break;                                                  \
    case DT_FLOAT32:                                          \
      ((float *)t->data)[i] = (float)(v);                     \
      break;                                                  \
    case DT_FLOAT64:                                          \
      ((double *)t->data)[i] = (double)(v);                   \
      break;                                                  \
    case DT_BFLOAT16:                                         \
      ((uint16_t *)t->data)[i] = double_to_bf16((double)(v)); \
      break;                                                  \
    default:                                                  \
      RLY_UNREACHABLE();                                      \
  }

void tensor_set_f64(Tensor *t, int64_t i, double v) { SET_CASES(v) }
void tensor_set_i64(Tensor *t, int64_t i, int64_t v) { SET_CASES(v) }
void tensor_set_u64(Tensor *t, int64_t i, uint64_t v) { SET_CASES(v) }

bool tensor_equal(const Tensor *a, const Tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return memcmp(a->data, b->data, tensor_nbytes(a)) == 0;
}

uint64_t tensor_hash(const Tensor *t) {
  uint64_t h = hash_mix((uint64_t)t->dtype, (uint64_t)t->ndim);
  h = hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->ndim, h);
  return hash_bytes(t->data, tensor_nbytes(t), h);
}
