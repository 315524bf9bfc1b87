/* tensor.c — dtype table lookups and arena-allocated dense tensors. */
#include "ir/tensor.h"

#include <math.h>
#include <string.h>

#include "ir/util.h"

typedef struct DTypeInfo {
  const char *name;
  int bytes;
  char cls;
  const char *suffix;
} DTypeInfo;

static const DTypeInfo dtype_table[] = {
#define X(e, n, b, c, s) {n, b, c, s},
    DTYPE_LIST(X)
#undef X
};

const char *dtype_name(DType t) { return t >= 0 && t < DT_COUNT ? dtype_table[t].name : "?"; }
int dtype_bytes(DType t) { return dtype_table[t].bytes; }
char dtype_class(DType t) { return dtype_table[t].cls; }
const char *dtype_suffix(DType t) { return dtype_table[t].suffix; }
bool dtype_is_float(DType t) { return dtype_table[t].cls == 'f'; }
bool dtype_is_int(DType t) { return dtype_table[t].cls == 'i' || dtype_table[t].cls == 'u'; }

DType dtype_from_name(const char *s, size_t n) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strlen(dtype_table[i].name) == n && memcmp(dtype_table[i].name, s, n) == 0) return (DType)i;
  return DT_INVALID;
}

float half_to_float(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 1024), e - 25);
  return s ? -v : v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  if (isnan(f)) return sign | 0x7e00;
  float a = fabsf(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < ldexpf(1, -25)) return sign;
  int e;
  frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exp = e - 1 + 15;
  if (exp <= 0) return sign | (uint16_t)lrintf(ldexpf(a, 24)); /* subnormal */
  uint32_t mant = (uint32_t)lrintf(ldexpf(a, 11 - e)); /* 11 bits incl. hidden, round-to-even */
  if (mant == 2048) mant = 1024, exp++;
  if (exp >= 31) return sign | 0x7c00;
  return sign | (uint16_t)(exp << 10) | (uint16_t)(mant & 1023);
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

#define GET_CASES(RET)                                             \
  switch (t->dtype) {                                              \
  case DT_BOOL: return (RET)((const uint8_t *)t->data)[i];         \
  case DT_INT8: return (RET)((const int8_t *)t->data)[i];          \
  case DT_INT16: return (RET)((const int16_t *)t->data)[i];        \
  case DT_INT32: return (RET)((const int32_t *)t->data)[i];        \
  case DT_INT64: return (RET)((const int64_t *)t->data)[i];        \
  case DT_UINT8: return (RET)((const uint8_t *)t->data)[i];        \
  case DT_UINT16: return (RET)((const uint16_t *)t->data)[i];      \
  case DT_UINT32: return (RET)((const uint32_t *)t->data)[i];      \
  case DT_UINT64: return (RET)((const uint64_t *)t->data)[i];      \
  case DT_FLOAT16: return (RET)half_to_float(((const uint16_t *)t->data)[i]); \
  case DT_FLOAT32: return (RET)((const float *)t->data)[i];        \
  case DT_FLOAT64: return (RET)((const double *)t->data)[i];       \
  default: RLY_UNREACHABLE();                                      \
  }

double tensor_get_f64(const Tensor *t, int64_t i) { GET_CASES(double) }
int64_t tensor_get_i64(const Tensor *t, int64_t i) { GET_CASES(int64_t) }
uint64_t tensor_get_u64(const Tensor *t, int64_t i) { GET_CASES(uint64_t) }

#define SET_CASES(v)                                                    \
  switch (t->dtype) {                                                   \
  case DT_BOOL: ((uint8_t *)t->data)[i] = (v) != 0; break;              \
  case DT_INT8: ((int8_t *)t->data)[i] = (int8_t)(v); break;            \
  case DT_INT16: ((int16_t *)t->data)[i] = (int16_t)(v); break;         \
  case DT_INT32: ((int32_t *)t->data)[i] = (int32_t)(v); break;         \
  case DT_INT64: ((int64_t *)t->data)[i] = (int64_t)(v); break;         \
  case DT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(v); break;         \
  case DT_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)(v); break;      \
  case DT_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)(v); break;      \
  case DT_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)(v); break;      \
  case DT_FLOAT16: ((uint16_t *)t->data)[i] = float_to_half((float)(v)); break; \
  case DT_FLOAT32: ((float *)t->data)[i] = (float)(v); break;           \
  case DT_FLOAT64: ((double *)t->data)[i] = (double)(v); break;         \
  default: RLY_UNREACHABLE();                                           \
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
