/* tensor.h — dtypes and dense tensors (the data of constants).
 *
 * DTYPE_LIST is the single source of truth for element types: enum, name,
 * size, class, and the literal suffix the printer uses. Tensors are
 * contiguous, row-major, with 64-byte aligned data. */
#ifndef RLY_TENSOR_H
#define RLY_TENSOR_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/arena.h"

/* X(enum, name, bytes, class, literal suffix) — class: 'b' bool, 'i' signed, 'u' unsigned, 'f'
 * float */
#define DTYPE_LIST(X)                     \
  X(DT_BOOL, "bool", 1, 'b', "")          \
  X(DT_INT8, "int8", 1, 'i', "i8")        \
  X(DT_INT16, "int16", 2, 'i', "i16")     \
  X(DT_INT32, "int32", 4, 'i', "")        \
  X(DT_INT64, "int64", 8, 'i', "i64")     \
  X(DT_UINT8, "uint8", 1, 'u', "u8")      \
  X(DT_UINT16, "uint16", 2, 'u', "u16")   \
  X(DT_UINT32, "uint32", 4, 'u', "u32")   \
  X(DT_UINT64, "uint64", 8, 'u', "u64")   \
  X(DT_FLOAT16, "float16", 2, 'f', "f16") \
  X(DT_FLOAT32, "float32", 4, 'f', "f")   \
  X(DT_FLOAT64, "float64", 8, 'f', "f64") \
  X(DT_BFLOAT16, "bfloat16", 2, 'f', "bf16")

typedef enum DType {
#define X(e, n, b, c, s) e,
  DTYPE_LIST(X)
#undef X
      DT_COUNT,
  DT_INVALID = -1
} DType;

const char *dtype_name(DType t);
const char *dtype_suffix(DType t);
DType dtype_from_name(const char *s, size_t n); /* DT_INVALID if unknown */

/* Size and class ('b' bool, 'i' signed, 'u' unsigned, 'f' float; 0 and
 * size 0 for DT_INVALID).  Inline: the JIT module uses them too. */
static inline int dtype_bytes(DType t) {
  static const signed char bytes[] = {
#define X(e, n, b, c, s) b,
      DTYPE_LIST(X)
#undef X
  };
  return t >= 0 && t < DT_COUNT ? bytes[t] : 0;
}
static inline char dtype_class(DType t) {
  static const char cls[] = {
#define X(e, n, b, c, s) c,
      DTYPE_LIST(X)
#undef X
  };
  return t >= 0 && t < DT_COUNT ? cls[t] : 0;
}
static inline bool dtype_is_float(DType t) { return dtype_class(t) == 'f'; }
/* A signed or unsigned integer, not bool. */
static inline bool dtype_is_int(DType t) { return dtype_class(t) == 'i' || dtype_class(t) == 'u'; }

/* v as an integer of dtype t holds it: narrowed to t's width (two's
 * complement wrap, zero extension for unsigned), bool as 0 or 1; 64-bit
 * and non-integer dtypes unchanged.  Inline: the JIT module uses it too. */
static inline int64_t dtype_wrap_int(DType t, int64_t v) {
  switch (t) {
    case DT_BOOL:
      return v != 0;
    case DT_INT8:
      return (int8_t)v;
    case DT_INT16:
      return (int16_t)v;
    case DT_INT32:
      return (int32_t)v;
    case DT_UINT8:
      return (uint8_t)v;
    case DT_UINT16:
      return (uint16_t)v;
    case DT_UINT32:
      return (uint32_t)v;
    default:
      return v;
  }
}

/* Half-precision conversion (IEEE binary16), used for float16 constants;
 * both directions round once, to nearest even. */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
uint16_t double_to_half(double d);

/* bfloat16 (the upper 16 bits of a float32): widening is exact; narrowing
 * rounds once, to nearest even, and a NaN stays a quiet NaN (its sign and
 * upper payload kept, the quiet bit set), as torch and ml_dtypes round.
 * Inline: the JIT module uses them too. */
static inline float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Adding 0x7fff plus the kept part's lowest bit rounds to nearest even (a
 * carry into the exponent gives the next binade or the infinity). */
static inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* From a double rounded once: to float rounding to odd (toward zero, the
 * lowest bit set when inexact), which keeps what a second rounding needs
 * (24 >= 8 + 2 bits), then to nearest even. */
static inline uint16_t double_to_bf16(double d) {
  float f = (float)d;
  if (d != d || (double)f == d) return float_to_bf16(f);
  uint32_t u;
  memcpy(&u, &f, 4);
  if (fabs((double)f) > fabs(d)) u--; /* toward zero (an infinity to FLT_MAX) */
  u |= 1;
  memcpy(&f, &u, 4);
  return float_to_bf16(f);
}

/* Float literal text.  float_from_text reads decimal text s (strtod
 * syntax, no suffix) rounded ONCE, to nearest even, to the float dtype dt,
 * into *out (exactly representable in dt); false when that rounds to an
 * infinity, i.e. the literal is out of dt's range.  float_to_text writes
 * the shortest %g text that float_from_text reads back to v's bits (v a
 * value of dt), and `inf`, `-inf` or `nan` for the others, which the
 * lexer reads with the float suffix after them (`inff16`, `-inff`,
 * `nanf64`). */
bool float_from_text(const char *s, DType dt, double *out);
void float_to_text(char *buf, size_t n, double v, DType dt);

enum { TENSOR_MAX_RANK = 32 };

typedef struct Tensor {
  DType dtype;
  int ndim;
  int64_t *shape; /* ndim entries */
  int64_t numel;
  void *data; /* 64-byte aligned, numel * dtype_bytes */
} Tensor;

Tensor *tensor_new(Arena *a, DType dt, int ndim, const int64_t *shape);
size_t tensor_nbytes(const Tensor *t);
/* Element i as double / int64 / uint64 (conversion as C does). */
double tensor_get_f64(const Tensor *t, int64_t i);
int64_t tensor_get_i64(const Tensor *t, int64_t i);
uint64_t tensor_get_u64(const Tensor *t, int64_t i);
void tensor_set_f64(Tensor *t, int64_t i, double v);
void tensor_set_i64(Tensor *t, int64_t i, int64_t v);
void tensor_set_u64(Tensor *t, int64_t i, uint64_t v);
bool tensor_equal(const Tensor *a, const Tensor *b); /* bitwise data + shape + dtype */
uint64_t tensor_hash(const Tensor *t);

#endif
