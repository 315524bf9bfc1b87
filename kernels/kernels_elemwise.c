/* kernels_elemwise.c — reference kernels of the elementwise family: unary
 * math, binary arithmetic, bitwise ops and comparisons with numpy
 * broadcasting, where, cast, clip.
 *
 * Every op works a row of the broadcast iteration at a time, in blocks of
 * BLK elements converted to the dtype's compute lane (kernels.h): float16
 * and float32 compute in float, float64 in double, integers in 64 bits and
 * are narrowed (mod 2^bits) when stored.  That gives numpy's results to the
 * last bit for +, -, *, / (float16 through float, as numpy does).
 *
 * Semantics where C, TVM and numpy could differ (the choices are ours):
 * - `divide` on integers truncates toward zero (C, TVM's truncdiv);
 *   `floor_divide` floors (numpy's //); `mod` is the truncated remainder
 *   with the sign of x (C %, TVM's truncmod, numpy's fmod); `floor_mod` has
 *   the sign of y (numpy's remainder).  On floats: divide is IEEE division,
 *   mod is fmod, floor_divide/floor_mod are numpy's divmod (same rounding).
 *   trunc_divide is divide, then trunc on floats; trunc_mod is mod.
 * - Integer division or remainder by zero is an error
 *   ("floor_divide: integer division by zero"); the minimum integer divided
 *   by -1 wraps (to the minimum), its remainder is 0, as numpy gives.
 * - Integer `power` wraps; a negative exponent gives trunc(1 / x^-e) (1 or
 *   -1 for x = 1 or -1, else 0), and 0 to a negative power is an error.
 * - maximum/minimum, max/min propagate NaN (numpy) and order -0 below +0
 *   (numpy's answer depends on its SIMD path); `round` rounds half to
 *   even (numpy, TVM's nearbyint); sign(NaN) is NaN, sign(-0) is 0.
 * - Shifts by a negative count or at least the bit width give 0 (left) or
 *   the sign fill (right), as numpy; no C undefined behaviour.
 * - `cast` float → integer truncates toward zero and saturates at the
 *   target's range; NaN → 0.  (C leaves these undefined; numpy gives
 *   whatever the CPU does.)  Integer → narrower integer wraps; anything →
 *   bool is "nonzero" (NaN is true); float64 → float16 rounds once.
 * - Float-only functions (exp, log, ...) on integer tensors compute in
 *   double and convert back with the cast rules.
 * - fast_exp, fast_tanh and fast_erf are TVM's float32 approximations
 *   (ops/fast_math.h) on float32 and float16 (computed in float, rounded);
 *   on float64 they are exp, tanh and erf, as in TVM. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir_rules.h"
#include "kernels/kernels.h"
#include "kernels/scalar_ops.h"
#include "ops/fast_math.h"

enum { BLK = KBLK };

/* ───────────────────────────── binary ops ───────────────────────────── */

/* BinOp is in scalar_ops.h (the scalar fast path names its codes): the
 * ELEMWISE_BINARY rows (ops/elemwise_table.h) of kernel BIN. */

static const bool bin_is_cmp[] = {
#define X(name, CODE, row, kernel, cost, grad, doc) EW_KERNEL_##kernel(EW_IS_COMPARE_##row, )
    ELEMWISE_BINARY(X)
#undef X
};

static const char *const bin_names[] = {
#define X(name, CODE, row, kernel, cost, grad, doc) EW_KERNEL_##kernel(#name, )
    ELEMWISE_BINARY(X)
#undef X
};

/* numpy's floor division and remainder of floats: fmod, then the quotient
 * (a - mod) / b snapped to the nearest integer.  Division by zero gives
 * a / b and fmod(a, 0) (NaN). */
#define DEF_DIVMOD(T, SFX)                                \
  static T floordiv_##T(T a, T b, T *mod) {               \
    T m = fmod##SFX(a, b);                                \
    if (b == 0) return *mod = m, a / b;                   \
    T div = (a - m) / b;                                  \
    if (m != 0) {                                         \
      if (isless(b, 0) != isless(m, 0)) m += b, div -= 1; \
    } else {                                              \
      m = copysign##SFX(0, b);                            \
    }                                                     \
    T fl;                                                 \
    if (div != 0) {                                       \
      fl = floor##SFX(div);                               \
      if (isgreater(div - fl, (T)0.5)) fl += 1;           \
    } else {                                              \
      fl = copysign##SFX(0, a / b);                       \
    }                                                     \
    *mod = m;                                             \
    return fl;                                            \
  }
DEF_DIVMOD(float, f)
DEF_DIVMOD(double, )

#define FOR for (int64_t i = 0; i < n; i++)

/* The comparisons of every lane type: 0/1 into the uint64 array `c` (a, b
 * and FOR in scope); the operators compare as the lane type does. */
#define COMPARE_CASES(c)     \
  case B_EQ:                 \
    FOR c[i] = a[i] == b[i]; \
    break;                   \
  case B_NE:                 \
    FOR c[i] = a[i] != b[i]; \
    break;                   \
  case B_LT:                 \
    FOR c[i] = a[i] < b[i];  \
    break;                   \
  case B_LE:                 \
    FOR c[i] = a[i] <= b[i]; \
    break;                   \
  case B_GT:                 \
    FOR c[i] = a[i] > b[i];  \
    break;                   \
  case B_GE:                 \
    FOR c[i] = a[i] >= b[i]; \
    break;

/* Float lanes.  maximum/minimum: see kernel_fmax (NaN propagates, -0 < +0). */
#define DEF_BIN_FLOAT(T, SFX)                                                                \
  static bool bin_##T(KernelCtx *kx, BinOp op, const T *a, const T *b, void *o, int64_t n) { \
    T *r = o, m;                                                                             \
    uint64_t *c = o;                                                                         \
    switch (op) {                                                                            \
      case B_ADD:                                                                            \
        FOR r[i] = a[i] + b[i];                                                              \
        break;                                                                               \
      case B_SUB:                                                                            \
        FOR r[i] = a[i] - b[i];                                                              \
        break;                                                                               \
      case B_MUL:                                                                            \
        FOR r[i] = a[i] * b[i];                                                              \
        break;                                                                               \
      case B_DIV:                                                                            \
        FOR r[i] = a[i] / b[i];                                                              \
        break;                                                                               \
      case B_FLOORDIV:                                                                       \
        FOR r[i] = floordiv_##T(a[i], b[i], &m);                                             \
        break;                                                                               \
      case B_MOD:                                                                            \
        FOR r[i] = fmod##SFX(a[i], b[i]);                                                    \
        break;                                                                               \
      case B_FLOORMOD:                                                                       \
        FOR floordiv_##T(a[i], b[i], &r[i]);                                                 \
        break;                                                                               \
      case B_POW:                                                                            \
        FOR r[i] = pow##SFX(a[i], b[i]);                                                     \
        break;                                                                               \
      case B_MAX:                                                                            \
        FOR r[i] = a[i] > b[i] ? a[i] : b[i] > a[i] ? b[i] : (T)kernel_fmax(a[i], b[i]);     \
        break;                                                                               \
      case B_MIN:                                                                            \
        FOR r[i] = a[i] < b[i] ? a[i] : b[i] < a[i] ? b[i] : (T)kernel_fmin(a[i], b[i]);     \
        break;                                                                               \
      case B_LAND:                                                                           \
        FOR r[i] = a[i] != 0 && b[i] != 0;                                                   \
        break;                                                                               \
      case B_LOR:                                                                            \
        FOR r[i] = a[i] != 0 || b[i] != 0;                                                   \
        break;                                                                               \
      case B_LXOR:                                                                           \
        FOR r[i] = (a[i] != 0) != (b[i] != 0);                                               \
        break;                                                                               \
        COMPARE_CASES(c)                                                                     \
      default:                                                                               \
        return kernel_fail(kx, "%s: not defined for floating-point tensors", kx->op);        \
    }                                                                                        \
    return true;                                                                             \
  }
DEF_BIN_FLOAT(float, f)
DEF_BIN_FLOAT(double, )

static bool div_zero(KernelCtx *kx) {
  return kernel_fail(kx, "%s: integer division by zero", kx->op);
}

static bool any_zero_i(const int64_t *b, int64_t n) {
  FOR if (b[i] == 0) return true;
  return false;
}

static bool any_zero_u(const uint64_t *b, int64_t n) {
  FOR if (b[i] == 0) return true;
  return false;
}

/* x / y truncated; y != 0; INT64_MIN / -1 wraps. */
static inline int64_t idiv(int64_t x, int64_t y) {
  return y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
}
static inline int64_t imod(int64_t x, int64_t y) { return y == -1 ? 0 : x % y; }

static inline int64_t ifloordiv(int64_t x, int64_t y) {
  int64_t q = idiv(x, y);
  return imod(x, y) != 0 && ((x < 0) != (y < 0)) ? q - 1 : q;
}

static inline int64_t ifloormod(int64_t x, int64_t y) {
  int64_t r = imod(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static uint64_t upow(uint64_t x, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return r;
}

/* Wrapping x^e; *bad when 0 is raised to a negative power. */
static int64_t ipow(int64_t x, int64_t e, bool *bad) {
  if (e >= 0) return (int64_t)upow((uint64_t)x, (uint64_t)e);
  if (x == 0) *bad = true;
  if (x == 1) return 1;
  if (x == -1) return (e & 1) ? -1 : 1;
  return 0;
}

static inline int64_t ishl(int64_t x, int64_t s, int bits) {
  return s < 0 || s >= bits ? 0 : (int64_t)((uint64_t)x << s);
}
static inline int64_t ishr(int64_t x, int64_t s, int bits) {
  return s < 0 || s >= bits ? (x < 0 ? -1 : 0) : x >> s;
}

/* The cases of bin_int and bin_uint whose code does not depend on signedness
 * (a, b, r and FOR in scope). */
#define SIGN_BLIND_CASES                   \
  case B_MAX:                              \
    FOR r[i] = a[i] >= b[i] ? a[i] : b[i]; \
    break;                                 \
  case B_MIN:                              \
    FOR r[i] = a[i] <= b[i] ? a[i] : b[i]; \
    break;                                 \
  case B_LAND:                             \
    FOR r[i] = a[i] != 0 && b[i] != 0;     \
    break;                                 \
  case B_LOR:                              \
    FOR r[i] = a[i] != 0 || b[i] != 0;     \
    break;                                 \
  case B_LXOR:                             \
    FOR r[i] = (a[i] != 0) != (b[i] != 0); \
    break;                                 \
  case B_BAND:                             \
    FOR r[i] = a[i] & b[i];                \
    break;                                 \
  case B_BOR:                              \
    FOR r[i] = a[i] | b[i];                \
    break;                                 \
  case B_BXOR:                             \
    FOR r[i] = a[i] ^ b[i];                \
    break;

static bool bin_int(KernelCtx *kx, BinOp op, const int64_t *a, const int64_t *b, void *o, int64_t n,
                    int bits) {
  int64_t *r = o;
  uint64_t *c = o;
  bool bad = false;
  if ((op == B_DIV || op == B_FLOORDIV || op == B_MOD || op == B_FLOORMOD) && any_zero_i(b, n))
    return div_zero(kx);
  switch (op) {
    case B_ADD:
      FOR r[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
      break;
    case B_SUB:
      FOR r[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
      break;
    case B_MUL:
      FOR r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
      break;
    case B_DIV:
      FOR r[i] = idiv(a[i], b[i]);
      break;
    case B_FLOORDIV:
      FOR r[i] = ifloordiv(a[i], b[i]);
      break;
    case B_MOD:
      FOR r[i] = imod(a[i], b[i]);
      break;
    case B_FLOORMOD:
      FOR r[i] = ifloormod(a[i], b[i]);
      break;
    case B_POW:
      FOR r[i] = ipow(a[i], b[i], &bad);
      break;
      SIGN_BLIND_CASES
    case B_SHL:
      FOR r[i] = ishl(a[i], b[i], bits);
      break;
    case B_SHR:
      FOR r[i] = ishr(a[i], b[i], bits);
      break;
      COMPARE_CASES(c)
  }
  if (bad) return kernel_fail(kx, "%s: 0 raised to a negative integer power", kx->op);
  return true;
}

static bool bin_uint(KernelCtx *kx, BinOp op, const uint64_t *a, const uint64_t *b, void *o,
                     int64_t n, int bits) {
  uint64_t *r = o;
  if ((op == B_DIV || op == B_FLOORDIV || op == B_MOD || op == B_FLOORMOD) && any_zero_u(b, n))
    return div_zero(kx);
  switch (op) {
    case B_ADD:
      FOR r[i] = a[i] + b[i];
      break;
    case B_SUB:
      FOR r[i] = a[i] - b[i];
      break;
    case B_MUL:
      FOR r[i] = a[i] * b[i];
      break;
    case B_DIV:
    case B_FLOORDIV:
      FOR r[i] = a[i] / b[i];
      break;
    case B_MOD:
    case B_FLOORMOD:
      FOR r[i] = a[i] % b[i];
      break;
    case B_POW:
      FOR r[i] = upow(a[i], b[i]);
      break;
      SIGN_BLIND_CASES
    case B_SHL:
      FOR r[i] = b[i] >= (uint64_t)bits ? 0 : a[i] << b[i];
      break;
    case B_SHR:
      FOR r[i] = b[i] >= (uint64_t)bits ? 0 : a[i] >> b[i];
      break;
      COMPARE_CASES(r)
  }
  return true;
}

static bool bin_apply(KernelCtx *kx, BinOp op, Lane l, int bits, const void *a, const void *b,
                      void *r, int64_t n) {
  switch (l) {
    case LANE_F32:
      return bin_float(kx, op, a, b, r, n);
    case LANE_F64:
      return bin_double(kx, op, a, b, r, n);
    case LANE_I64:
      return bin_int(kx, op, a, b, r, n, bits);
    case LANE_U64:
      return bin_uint(kx, op, a, b, r, n, bits);
  }
  return false;
}

/* A broadcasting binary op: rows from the broadcast iterator, computed in
 * blocks of BLK lanes; comparisons produce their result as unsigned lanes. */
static bool run_binary(KernelCtx *kx, BinOp op, RtTensor *const *in, RtTensor *out) {
  DType dt = in[0]->dtype;
  if (in[1]->dtype != dt)
    return kernel_fail(kx, "%s: dtypes %s and %s differ", bin_names[op], dtype_name(dt),
                       dtype_name(in[1]->dtype));
  Lane l = kernel_lane(dt), ol = bin_is_cmp[op] ? LANE_U64 : l;
  int bits = dtype_bytes(dt) * 8;
  LaneBlock a, b, r;
  BcastIter it;
  bcast_init(&it, out->ndim, out->shape, 2, (const RtTensor *const *)in);
  int64_t o = 0;
  while (bcast_next(&it))
    for (int64_t j = 0; j < it.len; j += BLK) {
      int64_t m = it.len - j < BLK ? it.len - j : BLK;
      lane_load(l, dt, in[0]->data, it.off[0] + j * it.step[0], it.step[0], m, &a);
      lane_load(l, dt, in[1]->data, it.off[1] + j * it.step[1], it.step[1], m, &b);
      if (!bin_apply(kx, op, l, bits, &a, &b, &r, m)) return false;
      lane_store(ol, out->dtype, &r, out->data, o, m);
      o += m;
    }
  return true;
}

#define BIN_KERNEL(CODE)                                                                  \
  static bool k_B_##CODE(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, \
                         int nout, RtTensor *const *out) {                                \
    return run_binary(kx, B_##CODE, in, out[0]);                                          \
  }
#define X(name, CODE, row, kernel, cost, grad, doc) EW_KERNEL_##kernel(BIN_KERNEL(CODE))
ELEMWISE_BINARY(X)
#undef X

/* ───────────────────────────── unary ops ───────────────────────────── */

/* The unary ops: U_<CODE> of each ELEMWISE_UNARY row (ops/elemwise_table.h),
 * in order; kind 'f' float-only math (integers compute in double), 'a' any
 * dtype, 'p' predicate with a bool result. */
typedef enum UnOp {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) U_##CODE,
  ELEMWISE_UNARY(X)
#undef X
} UnOp;

static const char un_kind[] = {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) kind,
    ELEMWISE_UNARY(X)
#undef X
};

/* The ops of sem LIBM: their intrinsic's libm function (ir/tir_rules.h),
 * the one the TIR interpreter and the JIT call; false for the others. */
#define LIBM_CASE(T, CODE, fn)       \
  case U_##CODE:                     \
    FOR x[i] = tir_##T##_##fn(x[i]); \
    return true;
static bool un_libm_float(UnOp op, float *x, int64_t n) {
  switch (op) {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) EW_SEM_##sem(LIBM_CASE(float, CODE, fn))
    ELEMWISE_UNARY(X)
#undef X
    default:
      return false;
  }
}
static bool un_libm_double(UnOp op, double *x, int64_t n) {
  switch (op) {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) EW_SEM_##sem(LIBM_CASE(double, CODE, fn))
    ELEMWISE_UNARY(X)
#undef X
    default:
      return false;
  }
}

/* The fast_ functions per compute lane: TVM's approximations in float, exact in double. */
static float fast_exp_float(float x) { return fast_expf(x); }
static float fast_tanh_float(float x) { return fast_tanhf(x); }
static float fast_erf_float(float x) { return fast_erff(x); }
static double fast_exp_double(double x) { return exp(x); }
static double fast_tanh_double(double x) { return tanh(x); }
static double fast_erf_double(double x) { return erf(x); }

#define DEF_UN_FLOAT(T, SFX)                                                          \
  static bool un_##T(KernelCtx *kx, UnOp op, T *x, uint64_t *p, int64_t n) {          \
    switch (op) {                                                                     \
      case U_NEG:                                                                     \
        FOR x[i] = -x[i];                                                             \
        break;                                                                        \
      case U_ABS:                                                                     \
        FOR x[i] = fabs##SFX(x[i]);                                                   \
        break;                                                                        \
      case U_SIGN:                                                                    \
        FOR x[i] = x[i] > 0 ? 1 : x[i] < 0 ? -1 : x[i] == 0 ? 0 : x[i];               \
        break;                                                                        \
      case U_FLOOR:                                                                   \
        FOR x[i] = floor##SFX(x[i]);                                                  \
        break;                                                                        \
      case U_CEIL:                                                                    \
        FOR x[i] = ceil##SFX(x[i]);                                                   \
        break;                                                                        \
      case U_ROUND:                                                                   \
        FOR x[i] = nearbyint##SFX(x[i]);                                              \
        break;                                                                        \
      case U_TRUNC:                                                                   \
        FOR x[i] = trunc##SFX(x[i]);                                                  \
        break;                                                                        \
      case U_COPY:                                                                    \
        break;                                                                        \
      case U_LNOT:                                                                    \
        FOR x[i] = x[i] == 0;                                                         \
        break;                                                                        \
      case U_FEXP:                                                                    \
        FOR x[i] = fast_exp_##T(x[i]);                                                \
        break;                                                                        \
      case U_RSQRT:                                                                   \
        FOR x[i] = 1 / sqrt##SFX(x[i]);                                               \
        break;                                                                        \
      case U_FTANH:                                                                   \
        FOR x[i] = fast_tanh_##T(x[i]);                                               \
        break;                                                                        \
      case U_SIGMOID:                                                                 \
        FOR x[i] = 1 / (1 + exp##SFX(-x[i]));                                         \
        break;                                                                        \
      case U_FERF:                                                                    \
        FOR x[i] = fast_erf_##T(x[i]);                                                \
        break;                                                                        \
      case U_ISNAN:                                                                   \
        FOR p[i] = isnan(x[i]) != 0;                                                  \
        break;                                                                        \
      case U_ISINF:                                                                   \
        FOR p[i] = isinf(x[i]) != 0;                                                  \
        break;                                                                        \
      case U_ISFINITE:                                                                \
        FOR p[i] = isfinite(x[i]) != 0;                                               \
        break;                                                                        \
      default:                                                                        \
        if (un_libm_##T(op, x, n)) break;                                             \
        return kernel_fail(kx, "%s: not defined for floating-point tensors", kx->op); \
    }                                                                                 \
    return true;                                                                      \
  }
DEF_UN_FLOAT(float, f)
DEF_UN_FLOAT(double, )

/* Integer lanes (float-only ops never get here). */
static void un_int(UnOp op, int64_t *x, uint64_t *p, int64_t n) {
  switch (op) {
    case U_NEG:
      FOR x[i] = (int64_t)(0 - (uint64_t)x[i]);
      break;
    case U_ABS:
      FOR x[i] = x[i] < 0 ? (int64_t)(0 - (uint64_t)x[i]) : x[i];
      break;
    case U_SIGN:
      FOR x[i] = (x[i] > 0) - (x[i] < 0);
      break;
    case U_LNOT:
      FOR x[i] = x[i] == 0;
      break;
    case U_BNOT:
      FOR x[i] = ~x[i];
      break;
    case U_ISNAN:
    case U_ISINF:
      FOR p[i] = 0;
      break;
    case U_ISFINITE:
      FOR p[i] = 1;
      break;
    default:
      break; /* floor, ceil, round, trunc, copy: identity */
  }
}

static void un_uint(UnOp op, uint64_t *x, uint64_t *p, int64_t n, bool is_bool) {
  switch (op) {
    case U_NEG:
      FOR x[i] = 0 - x[i];
      break;
    case U_SIGN:
      FOR x[i] = x[i] != 0;
      break;
    case U_LNOT:
      FOR x[i] = x[i] == 0;
      break;
    case U_BNOT:
      FOR x[i] = is_bool ? !x[i] : ~x[i];
      break;
    case U_ISNAN:
    case U_ISINF:
      FOR p[i] = 0;
      break;
    case U_ISFINITE:
      FOR p[i] = 1;
      break;
    default:
      break; /* abs, floor, ceil, round, trunc, copy: identity */
  }
}

static bool un_apply(KernelCtx *kx, UnOp op, Lane l, DType dt, void *x, uint64_t *p, int64_t n) {
  switch (l) {
    case LANE_F32:
      return un_float(kx, op, x, p, n);
    case LANE_F64:
      return un_double(kx, op, x, p, n);
    case LANE_I64:
      un_int(op, x, p, n);
      return true;
    case LANE_U64:
      un_uint(op, x, p, n, dt == DT_BOOL);
      return true;
  }
  return false;
}

static bool run_unary(KernelCtx *kx, UnOp op, const RtTensor *x, RtTensor *out) {
  Lane l = kernel_lane(x->dtype);
  if (un_kind[op] == 'f' && (l == LANE_I64 || l == LANE_U64)) l = LANE_F64;
  LaneBlock buf, p;
  for (int64_t j = 0; j < x->numel; j += BLK) {
    int64_t m = x->numel - j < BLK ? x->numel - j : BLK;
    lane_load(l, x->dtype, x->data, j, 1, m, &buf);
    if (!un_apply(kx, op, l, x->dtype, &buf, p.u, m)) return false;
    if (un_kind[op] == 'p')
      lane_store(LANE_U64, out->dtype, &p, out->data, j, m);
    else
      lane_store(l, out->dtype, &buf, out->data, j, m);
  }
  return true;
}

#define X(name, CODE, row, kind, fn, sem, cost, grad, doc)                                \
  static bool k_U_##CODE(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, \
                         int nout, RtTensor *const *out) {                                \
    return run_unary(kx, U_##CODE, in[0], out[0]);                                        \
  }
ELEMWISE_UNARY(X)
#undef X

/* ─────────────────────────── where, cast, clip ─────────────────────────── */

/* cond as 0/1 bytes (nonzero is true; NaN is true). */
static void load_truth(const RtTensor *c, int64_t off, int64_t step, int64_t m, uint8_t *t) {
  LaneBlock buf;
  Lane l = kernel_lane(c->dtype);
  lane_load(l, c->dtype, c->data, off, step, m, &buf);
  for (int64_t i = 0; i < m; i++) {
    if (l == LANE_F32)
      t[i] = buf.f[i] != 0;
    else if (l == LANE_F64)
      t[i] = buf.d[i] != 0;
    else
      t[i] = buf.u[i] != 0;
  }
}

/* Copies element bits, so NaN payloads and float16 data pass unchanged. */
#define WHERE_ROW(T)                                                                     \
  {                                                                                      \
    const T *x = (const T *)in[1]->data + it.off[1] + j * it.step[1];                    \
    const T *y = (const T *)in[2]->data + it.off[2] + j * it.step[2];                    \
    T *r = (T *)out[0]->data + o;                                                        \
    for (int64_t i = 0; i < m; i++) r[i] = t[i] ? x[i * it.step[1]] : y[i * it.step[2]]; \
  }                                                                                      \
  break;

static bool k_where(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  uint8_t t[BLK];
  BcastIter it;
  bcast_init(&it, out[0]->ndim, out[0]->shape, 3, (const RtTensor *const *)in);
  int64_t o = 0;
  while (bcast_next(&it))
    for (int64_t j = 0; j < it.len; j += BLK) {
      int64_t m = it.len - j < BLK ? it.len - j : BLK;
      load_truth(in[0], it.off[0] + j * it.step[0], it.step[0], m, t);
      switch (dtype_bytes(out[0]->dtype)) {
        case 1:
          WHERE_ROW(uint8_t)
        case 2:
          WHERE_ROW(uint16_t)
        case 4:
          WHERE_ROW(uint32_t)
        default:
          WHERE_ROW(uint64_t)
      }
      o += m;
    }
  return true;
}

static bool k_cast(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  const RtTensor *x = in[0];
  if (x->dtype == out[0]->dtype) {
    if (x->numel) memcpy(out[0]->data, x->data, rt_tensor_nbytes(x));
    return true;
  }
  Lane l = kernel_lane(x->dtype);
  LaneBlock buf;
  for (int64_t j = 0; j < x->numel; j += BLK) {
    int64_t m = x->numel - j < BLK ? x->numel - j : BLK;
    lane_load(l, x->dtype, x->data, j, 1, m, &buf);
    lane_store(l, out[0]->dtype, &buf, out[0]->data, j, m);
  }
  return true;
}

/* A bound converted to the tensor's dtype (as TVM makes a constant of it),
 * then to its lane, into *v (a lane value). */
static void bound_in_lane(double b, DType dt, Lane l, LaneVal *v) {
  LaneVal tmp;
  lane_store(LANE_F64, dt, &b, &tmp, 0, 1);
  lane_load(l, dt, &tmp, 0, 1, 1, v);
}

#define CLIP_LOOP(M)                \
  for (int64_t i = 0; i < m; i++) { \
    if (buf.M[i] < lo.M)            \
      buf.M[i] = lo.M;              \
    else if (buf.M[i] > hi.M)       \
      buf.M[i] = hi.M;              \
  }                                 \
  break;

static bool k_clip(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  double a_min = kattr_float(kx, attrs, "a_min"), a_max = kattr_float(kx, attrs, "a_max");
  if (!kernel_attrs_ok(kx)) return false;
  const RtTensor *x = in[0];
  Lane l = kernel_lane(x->dtype);
  LaneVal lo, hi;
  LaneBlock buf;
  bound_in_lane(a_min, x->dtype, l, &lo);
  bound_in_lane(a_max, x->dtype, l, &hi);
  for (int64_t j = 0; j < x->numel; j += BLK) {
    int64_t m = x->numel - j < BLK ? x->numel - j : BLK;
    lane_load(l, x->dtype, x->data, j, 1, m, &buf);
    switch (l) { /* NaN fails both comparisons and stays NaN */
      case LANE_F32:
        CLIP_LOOP(f)
      case LANE_F64:
        CLIP_LOOP(d)
      case LANE_I64:
        CLIP_LOOP(i)
      case LANE_U64:
        CLIP_LOOP(u)
    }
    lane_store(l, out[0]->dtype, &buf, out[0]->data, j, m);
  }
  return true;
}

/* trunc_divide: divide (which truncates integers), then trunc on floats,
 * so the quotient is rounded to the dtype first, as numpy's
 * trunc(true_divide(x, y)).  trunc_mod is `mod` (C's %, fmod). */
static bool k_trunc_divide(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  if (!run_binary(kx, B_DIV, in, out[0])) return false;
  return !dtype_is_float(out[0]->dtype) || run_unary(kx, U_TRUNC, out[0], out[0]);
}

/* trunc_mod: mod (the truncated remainder). */
static bool k_trunc_mod(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  return run_binary(kx, B_MOD, in, out[0]);
}

const KernelDef kernels_family_elemwise[] = {
#define X(name, CODE, row, kernel, cost, grad, doc) EW_KERNEL_##kernel({#name, k_B_##CODE}, )
    ELEMWISE_BINARY(X)
#undef X
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) {#name, k_U_##CODE},
        ELEMWISE_UNARY(X)
#undef X
            {"where", k_where},
    {"cast", k_cast},
    {"clip", k_clip},
#define X(name, CODE, row, kernel, cost, grad, doc) EW_NOT_KERNEL_##kernel({#name, k_##name}, )
    ELEMWISE_BINARY(X)
#undef X
        {NULL, NULL},
};

/* ─────────────────── one-element entry points (scalar_ops.h) ─────────────────── */

/* The family table lists the binary ops' kernels first, then the unary
 * ones, each in the order of their rows: an op's code is the position
 * of its registered kernel there. */
enum { NBIN = sizeof bin_names / sizeof bin_names[0] };

int scalar_binop(int op) {
  const KernelDef *k = kernels_get(op);
  for (int i = 0; k && i < NBIN; i++)
    if (k == &kernels_family_elemwise[i]) return i;
  return -1;
}

static const char *const un_names[] = {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) #name,
    ELEMWISE_UNARY(X)
#undef X
};

int scalar_unop(int op) {
  const KernelDef *k = kernels_get(op);
  for (int i = 0; k && i < (int)(sizeof un_names / sizeof un_names[0]); i++)
    if (k == &kernels_family_elemwise[NBIN + i]) return i;
  return -1;
}

bool scalar_is_cast(int op) {
  const KernelDef *k = kernels_get(op);
  return k && k->fn == k_cast;
}

/* As run_binary on one element. */
bool scalar_binary(KernelCtx *kx, int op, DType dt, DType odt, const void *a, const void *b,
                   void *r) {
  kx->op = bin_names[op];
  kx->err[0] = 0;
  Lane l = kernel_lane(dt), ol = bin_is_cmp[op] ? LANE_U64 : l;
  LaneVal la, lb, lr;
  lane_load(l, dt, a, 0, 1, 1, &la);
  lane_load(l, dt, b, 0, 1, 1, &lb);
  if (!bin_apply(kx, (BinOp)op, l, dtype_bytes(dt) * 8, &la, &lb, &lr, 1)) return false;
  lane_store(ol, odt, &lr, r, 0, 1);
  return true;
}

/* As run_unary on one element. */
bool scalar_unary(KernelCtx *kx, int op, DType dt, DType odt, const void *x, void *r) {
  kx->op = un_names[op];
  kx->err[0] = 0;
  Lane l = kernel_lane(dt);
  if (un_kind[op] == 'f' && (l == LANE_I64 || l == LANE_U64)) l = LANE_F64;
  LaneVal v, p;
  lane_load(l, dt, x, 0, 1, 1, &v);
  if (!un_apply(kx, (UnOp)op, l, dt, &v, &p.u, 1)) return false;
  if (un_kind[op] == 'p')
    lane_store(LANE_U64, odt, &p, r, 0, 1);
  else
    lane_store(l, odt, &v, r, 0, 1);
  return true;
}

/* As k_cast on one element. */
void scalar_cast(DType from, DType to, const void *x, void *r) {
  if (from == to) {
    memcpy(r, x, (size_t)dtype_bytes(from));
    return;
  }
  Lane l = kernel_lane(from);
  LaneVal v;
  lane_load(l, from, x, 0, 1, 1, &v);
  lane_store(l, to, &v, r, 0, 1);
}
