/* tir_interp.c — the reference interpreter of prim functions
 * (semantics in tir_interp.h).
 *
 * Compilation turns each PrimExpr into an ENode (an eval function chosen
 * for the operand class and dtype, plus operands) and each Stmt into an
 * SNode (an exec function).  Scalar variables live in numbered registers;
 * a loop variable owns two (its value and its loop's first value, for the
 * init rule of reduction blocks).  A block iteration variable bound to a
 * plain variable shares that variable's register.  Buffers are numbered:
 * parameters first, then allocations.
 *
 * Invariants: an integer-typed node returns its value normalized to its
 * dtype's width (sign- or zero-extended into int64; uint64 as its bit
 * pattern); a float-typed node returns a double already rounded to its
 * dtype.  The first error is kept (Frame.failed); later work checks the
 * flag and stops, so failing nodes return 0 instead of unwinding.
 * Sequences execute with a loop: recursion is on nesting only. */
#include "rt/tir_interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir_rules.h"
#include "ir/tir_walk.h"

typedef union Val {
  int64_t i;
  double f;
} Val;

typedef struct ENode ENode;
typedef struct SNode SNode;
typedef struct Frame Frame;
typedef Val (*EvalFn)(const ENode *n, Frame *f);
typedef void (*ExecFn)(const SNode *s, Frame *f);

struct ENode {
  EvalFn fn;
  DType dt;   /* result dtype */
  DType from; /* casts: the operand's dtype */
  int slot;   /* variables: register; loads: buffer index */
  int n;      /* loads: index count */
  Val k;      /* constants */
  ENode *a, *b, *c;
  ENode **idx;
  float (*ff)(float);   /* float intrinsics, float32 and float16 */
  double (*fd)(double); /* float64 */
  const PrimExpr *src;
};

struct SNode {
  ExecFn fn;
  const Stmt *src;
  int n;
  SNode **items;  /* seq */
  int slot;       /* for: the variable's register (first value at slot + 1); let */
  ENode *lo, *hi; /* for (lo NULL: 0) */
  SNode *body, *init, *else_;
  ENode *value; /* store, let; if: the condition */
  int niters;   /* block: bindings that need a register of their own */
  int *iter_slots;
  ENode **iter_vals;
  int nchecks; /* block: loop registers that must be at their first value for init */
  int *checks;
  int buf; /* store, alloc */
  int nidx;
  ENode **idx;
  int *dim_slots; /* alloc: register of a size-variable dim, or -1 */
};

typedef struct BufState {
  char *data;
  int ndim;
  int64_t dims[TENSOR_MAX_RANK];
  RtTensor *owned; /* alloc buffers */
} BufState;

struct TirProgram {
  const PrimFunc *f;
  Arena arena;
  SNode *body;
  int nregs, nbufs;
  const Buffer **bufs; /* parameters, then allocations */
  int *size_slots;     /* register of f->sizevars[i] */
  bool *writes;        /* per parameter */
};

struct Frame {
  const TirProgram *prog;
  Val *regs;
  BufState *bufs;
  bool failed;
  TirError *err;
  uint32_t ticks; /* loop iterations, to poll for Ctrl-C */
};

#define EV(n, fr) ((n)->fn((n), (fr)))

/* ───────────────────────────── errors ───────────────────────────── */

static void set_err(TirError *e, Span sp, int param, const char *fmt, va_list ap) {
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  e->span = sp, e->param = param;
}

static void fail_at(Frame *f, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Keeps the first error of a run. */
static void fail_at(Frame *f, Span sp, const char *fmt, ...) {
  if (f->failed) return;
  f->failed = true;
  va_list ap;
  va_start(ap, fmt);
  set_err(f->err, sp, -1, fmt, ap);
  va_end(ap);
}

static const char *pname(const Frame *f) { return f->prog->f->name; }

/* ─────────────────────── values by dtype ─────────────────────── */

static int64_t norm(DType t, int64_t v) { return dtype_wrap_int(t, v); }

static double fround(DType t, double v) {
  if (t == DT_FLOAT32) return (double)(float)v;
  if (t == DT_FLOAT16) return (double)half_to_float(rt_double_to_half(v));
  if (t == DT_BFLOAT16) return (double)bf16_to_float(double_to_bf16(v));
  return v;
}

/* Operand classes: signed-like integers (every integer type but uint64,
 * and bool), uint64, floats. */
typedef enum Class { CL_I, CL_U, CL_F, CL_COUNT } Class;

static Class class_of(DType t) {
  if (dtype_is_float(t)) return CL_F;
  return t == DT_UINT64 ? CL_U : CL_I;
}

/* Loads element o as a Val: integers widened to int64 (uint64 as its bits),
 * floats to double, which is how every node holds its value. */
static Val read_elem(const char *data, DType dt, int64_t o) {
  Val r = {0};
  switch (dt) {
    case DT_BOOL:
      r.i = ((const uint8_t *)data)[o] != 0;
      break;
    case DT_INT8:
      r.i = ((const int8_t *)data)[o];
      break;
    case DT_INT16:
      r.i = ((const int16_t *)data)[o];
      break;
    case DT_INT32:
      r.i = ((const int32_t *)data)[o];
      break;
    case DT_INT64:
      r.i = ((const int64_t *)data)[o];
      break;
    case DT_UINT8:
      r.i = ((const uint8_t *)data)[o];
      break;
    case DT_UINT16:
      r.i = ((const uint16_t *)data)[o];
      break;
    case DT_UINT32:
      r.i = ((const uint32_t *)data)[o];
      break;
    case DT_UINT64:
      r.i = (int64_t)((const uint64_t *)data)[o];
      break;
    case DT_FLOAT16:
      r.f = half_to_float(((const uint16_t *)data)[o]);
      break;
    case DT_FLOAT32:
      r.f = ((const float *)data)[o];
      break;
    case DT_FLOAT64:
      r.f = ((const double *)data)[o];
      break;
    case DT_BFLOAT16:
      r.f = bf16_to_float(((const uint16_t *)data)[o]);
      break;
    default:
      RLY_UNREACHABLE();
  }
  return r;
}

static void write_elem(char *data, DType dt, int64_t o, Val v) {
  switch (dt) {
    case DT_BOOL:
      ((uint8_t *)data)[o] = v.i != 0;
      break;
    case DT_INT8:
      ((int8_t *)data)[o] = (int8_t)v.i;
      break;
    case DT_INT16:
      ((int16_t *)data)[o] = (int16_t)v.i;
      break;
    case DT_INT32:
      ((int32_t *)data)[o] = (int32_t)v.i;
      break;
    case DT_INT64:
      ((int64_t *)data)[o] = v.i;
      break;
    case DT_UINT8:
      ((uint8_t *)data)[o] = (uint8_t)v.i;
      break;
    case DT_UINT16:
      ((uint16_t *)data)[o] = (uint16_t)v.i;
      break;
    case DT_UINT32:
      ((uint32_t *)data)[o] = (uint32_t)v.i;
      break;
    case DT_UINT64:
      ((uint64_t *)data)[o] = (uint64_t)v.i;
      break;
    case DT_FLOAT16:
      ((uint16_t *)data)[o] = rt_double_to_half(v.f);
      break;
    case DT_FLOAT32:
      ((float *)data)[o] = (float)v.f;
      break;
    case DT_FLOAT64:
      ((double *)data)[o] = v.f;
      break;
    case DT_BFLOAT16:
      ((uint16_t *)data)[o] = double_to_bf16(v.f);
      break;
    default:
      RLY_UNREACHABLE();
  }
}

/* ─────────────────────── expressions: leaves ─────────────────────── */

static Val ev_const(const ENode *n, Frame *f) {
  (void)f;
  return n->k;
}

static Val ev_var(const ENode *n, Frame *f) { return f->regs[n->slot]; }

/* The flat offset of buffer b at the given indices, bounds checked. */
static bool offset_of(Frame *f, int b, int n, ENode *const *idx, Span sp, int64_t *out) {
  const BufState *bs = &f->bufs[b];
  int64_t off = 0;
  for (int d = 0; d < n; d++) {
    const ENode *x = idx[d];
    int64_t i = x->fn == ev_var ? f->regs[x->slot].i : EV(x, f).i; /* the common case: no call */
    if (f->failed) return false;
    if (i < 0 || i >= bs->dims[d]) {
      fail_at(f, sp, "@%s: index %lld out of bounds for %%%s dimension %d (size %lld)", pname(f),
              (long long)i, f->prog->bufs[b]->name, d, (long long)bs->dims[d]);
      return false;
    }
    off = off * bs->dims[d] + i;
  }
  if (!bs->data) { /* only an unverified function can get here */
    fail_at(f, sp, "@%s: %%%s is used before its alloc", pname(f), f->prog->bufs[b]->name);
    return false;
  }
  *out = off;
  return true;
}

static Val ev_load(const ENode *n, Frame *f) {
  int64_t o;
  Val r = {0};
  if (!offset_of(f, n->slot, n->n, n->idx, n->src->span, &o)) return r;
  return read_elem(f->bufs[n->slot].data, n->dt, o);
}

static Val ev_load_f32(const ENode *n, Frame *f) {
  int64_t o;
  Val r = {0};
  if (offset_of(f, n->slot, n->n, n->idx, n->src->span, &o))
    r.f = ((const float *)f->bufs[n->slot].data)[o];
  return r;
}

/* ─────────────────────── expressions: operators ─────────────────────── */

#define ARITH_I(name, op)                                         \
  static Val name(const ENode *n, Frame *f) {                     \
    Val x = EV(n->a, f), y = EV(n->b, f);                         \
    x.i = norm(n->dt, (int64_t)((uint64_t)x.i op(uint64_t) y.i)); \
    return x;                                                     \
  }
ARITH_I(add_i, +)
ARITH_I(sub_i, -)
ARITH_I(mul_i, *)
#undef ARITH_I

#define ARITH_F(name, op)                     \
  static Val name(const ENode *n, Frame *f) { \
    Val x = EV(n->a, f), y = EV(n->b, f);     \
    x.f = fround(n->dt, x.f op y.f);          \
    return x;                                 \
  }
ARITH_F(add_f, +)
ARITH_F(sub_f, -)
ARITH_F(mul_f, *)
ARITH_F(div_f, /)
#undef ARITH_F

/* float32 needs no dtype test: round the exact double result once. */
#define ARITH_F32(name, op)                   \
  static Val name(const ENode *n, Frame *f) { \
    Val x = EV(n->a, f), y = EV(n->b, f);     \
    x.f = (double)(float)(x.f op y.f);        \
    return x;                                 \
  }
ARITH_F32(add_f32, +)
ARITH_F32(sub_f32, -)
ARITH_F32(mul_f32, *)
ARITH_F32(div_f32, /)
#undef ARITH_F32

static Val mod_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.f = fround(n->dt, fmod(x.f, y.f));
  return x;
}

static bool div_ok(const ENode *n, Frame *f, int64_t y) {
  if (y != 0) return true;
  fail_at(f, n->src->span, "@%s: integer division by zero", pname(f));
  return false;
}

/* Signed: truncation toward zero; INT64_MIN / -1 wraps. */
static Val div_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f), r = {0};
  if (!div_ok(n, f, y.i)) return r;
  r.i = norm(n->dt, x.i == INT64_MIN && y.i == -1 ? x.i : x.i / y.i);
  return r;
}

static Val mod_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f), r = {0};
  if (!div_ok(n, f, y.i)) return r;
  r.i = norm(n->dt, y.i == -1 ? 0 : x.i % y.i);
  return r;
}

static Val div_u(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f), r = {0};
  if (div_ok(n, f, y.i)) r.i = (int64_t)((uint64_t)x.i / (uint64_t)y.i);
  return r;
}

static Val mod_u(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f), r = {0};
  if (div_ok(n, f, y.i)) r.i = (int64_t)((uint64_t)x.i % (uint64_t)y.i);
  return r;
}

#define CMP_OPS(X) X(lt, <) X(le, <=) X(gt, >) X(ge, >=) X(eq, ==) X(ne, !=)
#define CMP(name, op)                             \
  static Val name##_i(const ENode *n, Frame *f) { \
    Val x = EV(n->a, f), y = EV(n->b, f), r;      \
    r.i = x.i op y.i;                             \
    return r;                                     \
  }                                               \
  static Val name##_u(const ENode *n, Frame *f) { \
    Val x = EV(n->a, f), y = EV(n->b, f), r;      \
    r.i = (uint64_t)x.i op(uint64_t) y.i;         \
    return r;                                     \
  }                                               \
  static Val name##_f(const ENode *n, Frame *f) { \
    Val x = EV(n->a, f), y = EV(n->b, f), r;      \
    r.i = x.f op y.f;                             \
    return r;                                     \
  }
CMP_OPS(CMP)
#undef CMP

static Val and_b(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  if (x.i) x.i = EV(n->b, f).i != 0;
  return x;
}

static Val or_b(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  if (!x.i) x.i = EV(n->b, f).i != 0;
  return x;
}

/* The eval function of each binary operator per operand class. */
static const EvalFn bin_table[][CL_COUNT] = {
    [PB_ADD] = {add_i, add_i, add_f}, [PB_SUB] = {sub_i, sub_i, sub_f},
    [PB_MUL] = {mul_i, mul_i, mul_f}, [PB_DIV] = {div_i, div_u, div_f},
    [PB_MOD] = {mod_i, mod_u, mod_f}, [PB_LT] = {lt_i, lt_u, lt_f},
    [PB_LE] = {le_i, le_u, le_f},     [PB_GT] = {gt_i, gt_u, gt_f},
    [PB_GE] = {ge_i, ge_u, ge_f},     [PB_EQ] = {eq_i, eq_u, eq_f},
    [PB_NE] = {ne_i, ne_u, ne_f},     [PB_AND] = {and_b, and_b, and_b},
    [PB_OR] = {or_b, or_b, or_b},
};

static const EvalFn f32_table[] = {
    [PB_ADD] = add_f32, [PB_SUB] = sub_f32, [PB_MUL] = mul_f32, [PB_DIV] = div_f32};

static Val not_b(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.i = !x.i;
  return x;
}

static Val neg_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.i = norm(n->dt, (int64_t)(0u - (uint64_t)x.i));
  return x;
}

static Val neg_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.f = -x.f;
  return x;
}

/* ─────────────────────── expressions: intrinsics ─────────────────────── */

/* max/min propagate NaN (numpy's maximum, LLVM's llvm.maximum). */
static Val max_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return x.i > y.i ? x : y;
}
static Val max_u(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return (uint64_t)x.i > (uint64_t)y.i ? x : y;
}
static Val max_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return isnan(x.f) || x.f > y.f ? x : y;
}
static Val min_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return x.i < y.i ? x : y;
}
static Val min_u(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return (uint64_t)x.i < (uint64_t)y.i ? x : y;
}
static Val min_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  return isnan(x.f) || x.f < y.f ? x : y;
}

static Val abs_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  if (x.i < 0) x.i = norm(n->dt, (int64_t)(0u - (uint64_t)x.i));
  return x;
}
static Val abs_u(const ENode *n, Frame *f) { return EV(n->a, f); }
static Val abs_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.f = fabs(x.f);
  return x;
}

/* One-argument float functions: in float for float32 (and float16 and
 * bfloat16, then rounded), in double for float64. */
static Val math1_f32(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.f = fround(n->dt, n->ff((float)x.f));
  return x;
}
static Val math1_f64(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.f = n->fd(x.f);
  return x;
}

static Val pow_f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.f = n->dt == DT_FLOAT64 ? pow(x.f, y.f) : fround(n->dt, powf((float)x.f, (float)y.f));
  return x;
}

static Val select_v(const ENode *n, Frame *f) {
  Val c = EV(n->a, f);
  if (f->failed) return c;
  return c.i ? EV(n->b, f) : EV(n->c, f);
}

/* The bitwise intrinsics on normalized integers (bool: 0 or 1).  Shift
 * counts outside [0, bits) give 0, or the sign fill for shift_right. */
static Val bitand_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i &= y.i;
  return x;
}
static Val bitor_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i |= y.i;
  return x;
}
static Val bitxor_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i ^= y.i;
  return x;
}
static Val bitnot_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.i = n->dt == DT_BOOL ? !x.i : norm(n->dt, ~x.i);
  return x;
}
static bool count_ok(const ENode *n, int64_t s) {
  return n->dt == DT_UINT64 ? (uint64_t)s < 64 : s >= 0 && s < dtype_bytes(n->dt) * 8;
}
static Val shl_i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i = count_ok(n, y.i) ? norm(n->dt, (int64_t)((uint64_t)x.i << y.i)) : 0;
  return x;
}
static Val shr_i(const ENode *n, Frame *f) { /* sign-extended, or a nonnegative narrow unsigned */
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i = count_ok(n, y.i) ? x.i >> y.i : x.i < 0 ? -1 : 0;
  return x;
}
/* dot_u8i8x4 (ir/tir.h): the four byte products summed, added to acc
 * wrapping in int32. */
static Val dot4_i(const ENode *n, Frame *f) {
  Val acc = EV(n->a, f), a = EV(n->b, f), b = EV(n->c, f);
  uint32_t s = (uint32_t)acc.i;
  for (int j = 0; j < 4; j++)
    s += (uint32_t)((int32_t)((a.i >> 8 * j) & 255) * (int8_t)(uint8_t)(b.i >> 8 * j));
  acc.i = (int32_t)s;
  return acc;
}
static Val shr_u(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), y = EV(n->b, f);
  x.i = count_ok(n, y.i) ? (int64_t)((uint64_t)x.i >> y.i) : 0;
  return x;
}

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }
static double sigmoid_(double x) { return 1.0 / (1.0 + exp(-x)); }

typedef struct MathFns {
  float (*ff)(float);
  double (*fd)(double);
} MathFns;

/* The float intrinsics' libm functions (ir/tir_rules.h), and sigmoid. */
static MathFns math_fns(PrimIntrinsic fn) {
  switch (fn) {
#define X(NAME, f, llvm, mvec) \
  case PI_##NAME:              \
    return (MathFns){tir_float_##NAME, tir_double_##NAME};
    PRIM_FLOAT_FNS(X)
#undef X
    case PI_SIGMOID:
      return (MathFns){sigmoidf_, sigmoid_};
    default:
      return (MathFns){NULL, NULL};
  }
}

/* ─────────────────────── expressions: casts ─────────────────────── */

/* The conversions of ir/tir_rules.h (tir_conv picks one). */

/* Saturating float → integer (NaN → 0), truncating toward zero. */
static int64_t float_to_int(DType to, double v) {
  if (isnan(v)) return 0;
  if (to == DT_UINT64) {
    if (v <= 0) return 0;
    return v >= 0x1p64 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)v;
  }
  int64_t x = v <= -0x1p63 ? INT64_MIN : v >= 0x1p63 ? INT64_MAX : (int64_t)v;
  int bits = dtype_bytes(to) * 8;
  if (bits == 64) return x;
  bool is_unsigned = dtype_class(to) == 'u';
  int64_t lo = is_unsigned ? 0 : -((int64_t)1 << (bits - 1));
  int64_t hi = is_unsigned ? ((int64_t)1 << bits) - 1 : ((int64_t)1 << (bits - 1)) - 1;
  return x < lo ? lo : x > hi ? hi : x;
}

/* Integer resizing wraps, to bool is != 0: both are what norm does. */
static Val cast_i2i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.i = norm(n->dt, x.i);
  return x;
}

static Val cast_f2b(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), r;
  r.i = !isnan(x.f) && x.f != 0;
  return r;
}

static Val cast_f2i(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), r;
  r.i = float_to_int(n->dt, x.f);
  return r;
}

static Val cast_f2f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f);
  x.f = fround(n->dt, x.f);
  return x;
}

/* Integer → float with one rounding (int64 → float32 directly, not via double). */
static Val cast_i2f(const ENode *n, Frame *f) {
  Val x = EV(n->a, f), r;
  bool u = n->from == DT_UINT64;
  if (n->dt == DT_FLOAT32)
    r.f = u ? (double)(float)(uint64_t)x.i : (double)(float)x.i;
  else
    r.f = fround(n->dt, u ? (double)(uint64_t)x.i : (double)x.i);
  return r;
}

static EvalFn cast_fn(DType from, DType to) {
  switch (tir_conv(from, to)) {
    case CONV_SAME:
    case CONV_INT_RESIZE:
    case CONV_INT_BOOL:
      return cast_i2i;
    case CONV_FLOAT_BOOL:
      return cast_f2b;
    case CONV_FLOAT_INT:
      return cast_f2i;
    case CONV_INT_FLOAT:
      return cast_i2f;
    case CONV_FLOAT_RESIZE:
      return cast_f2f;
  }
  RLY_UNREACHABLE();
}

/* The bits of a value of dtype t (floats: their IEEE encoding). */
static uint64_t val_bits(DType t, Val x) {
  if (t == DT_FLOAT64) {
    uint64_t u;
    memcpy(&u, &x.f, 8);
    return u;
  }
  if (t == DT_FLOAT32) {
    float g = (float)x.f;
    uint32_t u;
    memcpy(&u, &g, 4);
    return u;
  }
  if (t == DT_FLOAT16) return rt_double_to_half(x.f);
  if (t == DT_BFLOAT16) return double_to_bf16(x.f);
  return (uint64_t)x.i;
}

/* reinterpret[to](x): x's bits read as a value of dtype `to` (same size). */
static Val cast_bits(const ENode *n, Frame *f) {
  uint64_t u = val_bits(n->from, EV(n->a, f));
  Val r;
  if (n->dt == DT_FLOAT64) {
    memcpy(&r.f, &u, 8);
  } else if (n->dt == DT_FLOAT32) {
    uint32_t w = (uint32_t)u;
    float g;
    memcpy(&g, &w, 4);
    r.f = g;
  } else if (n->dt == DT_FLOAT16) {
    r.f = half_to_float((uint16_t)u);
  } else if (n->dt == DT_BFLOAT16) {
    r.f = bf16_to_float((uint16_t)u);
  } else {
    r.i = norm(n->dt, (int64_t)u);
  }
  return r;
}

/* ───────────────────────────── statements ───────────────────────────── */

static void ex_seq(const SNode *s, Frame *f) {
  for (int i = 0; i < s->n && !f->failed; i++) s->items[i]->fn(s->items[i], f);
}

static void ex_for(const SNode *s, Frame *f) {
  int64_t lo = s->lo ? EV(s->lo, f).i : 0, hi = EV(s->hi, f).i;
  Val *r = &f->regs[s->slot];
  r[1].i = lo;
  for (int64_t i = lo; i < hi && !f->failed; i++) {
    r[0].i = i;
    s->body->fn(s->body, f);
    if ((++f->ticks & 4095) == 0 && rt_take_interrupt())
      fail_at(f, s->src->span, "@%s: interrupted", pname(f));
    else if ((f->ticks & 4095) == 0 && rt_steps_charge(4096))
      fail_at(f, s->src->span, "@%s: %s", pname(f), rt_steps_message());
  }
}

static bool init_due(const SNode *s, const Frame *f) {
  for (int i = 0; i < s->nchecks; i++) {
    const Val *r = &f->regs[s->checks[i]];
    if (r[0].i != r[1].i) return false;
  }
  return true;
}

static void ex_block(const SNode *s, Frame *f) {
  for (int i = 0; i < s->niters; i++) f->regs[s->iter_slots[i]] = EV(s->iter_vals[i], f);
  if (f->failed) return;
  if (s->init && init_due(s, f)) {
    s->init->fn(s->init, f);
    if (f->failed) return;
  }
  s->body->fn(s->body, f);
}

static void ex_store(const SNode *s, Frame *f) {
  int64_t o;
  if (!offset_of(f, s->buf, s->nidx, s->idx, s->src->span, &o)) return;
  Val v = EV(s->value, f);
  if (!f->failed) write_elem(f->bufs[s->buf].data, s->value->dt, o, v);
}

static void ex_store_f32(const SNode *s, Frame *f) {
  int64_t o;
  if (!offset_of(f, s->buf, s->nidx, s->idx, s->src->span, &o)) return;
  Val v = EV(s->value, f);
  if (!f->failed) ((float *)f->bufs[s->buf].data)[o] = (float)v.f;
}

/* A fresh zero-filled buffer each time (reused when the shape repeats). */
static void ex_alloc(const SNode *s, Frame *f) {
  const Buffer *b = f->prog->bufs[s->buf];
  BufState *bs = &f->bufs[s->buf];
  int64_t dims[TENSOR_MAX_RANK];
  for (int d = 0; d < b->ndim; d++)
    dims[d] = s->dim_slots[d] >= 0 ? f->regs[s->dim_slots[d]].i : b->dims[d].value;
  RtTensor *t = bs->owned;
  if (t && t->ndim == b->ndim && memcmp(t->shape, dims, sizeof(int64_t) * (size_t)b->ndim) == 0) {
    memset(t->data, 0, rt_tensor_nbytes(t));
    return;
  }
  rt_tensor_release(t);
  char err[RT_ERR_LEN];
  bs->owned = t = rt_tensor_zeros(b->dtype, b->ndim, dims, err, sizeof err);
  if (!t) {
    fail_at(f, s->src->span, "@%s: alloc %%%s: %s", pname(f), b->name, err);
    return;
  }
  bs->data = t->data, bs->ndim = t->ndim;
  memcpy(bs->dims, t->shape, sizeof(int64_t) * (size_t)t->ndim);
}

static void ex_let(const SNode *s, Frame *f) { f->regs[s->slot] = EV(s->value, f); }

static void ex_if(const SNode *s, Frame *f) {
  Val c = EV(s->value, f);
  if (f->failed) return;
  const SNode *b = c.i ? s->body : s->else_;
  if (b) b->fn(b, f);
}

/* ───────────────────────────── compiler ───────────────────────────── */

typedef struct VarSlot {
  const TirVar *var;
  int slot;
  DType dtype;
  bool loop;
} VarSlot;

typedef struct Compiler {
  TirProgram *p;
  Arena *a;
  VarSlot *vars;
  int nvars, capvars;
  PtrVec bufs; /* Buffer*: index = buffer number */
  TirError *err;
  bool failed;
} Compiler;

static void cfail(Compiler *c, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cfail(Compiler *c, Span sp, const char *fmt, ...) {
  if (c->failed) return;
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  set_err(c->err, sp, -1, fmt, ap);
  va_end(ap);
}

static int new_regs(Compiler *c, int n) {
  int r = c->p->nregs;
  c->p->nregs += n;
  return r;
}

static void add_var(Compiler *c, const TirVar *v, int slot, DType dt, bool loop) {
  if (c->nvars == c->capvars) {
    c->capvars = c->capvars ? 2 * c->capvars : 32;
    c->vars = realloc(c->vars, sizeof(VarSlot) * (size_t)c->capvars);
    if (!c->vars) rly_oom();
  }
  c->vars[c->nvars++] = (VarSlot){v, slot, dt, loop};
}

static const VarSlot *find_var(const Compiler *c, const TirVar *v) {
  for (int i = c->nvars; i-- > 0;)
    if (c->vars[i].var == v) return &c->vars[i];
  if (!v->is_size) return NULL;
  for (int i = 0; i < c->nvars; i++) /* size variables also match by name */
    if (c->vars[i].var->is_size && strcmp(c->vars[i].var->name, v->name) == 0) return &c->vars[i];
  return NULL;
}

static int find_sizevar(const PrimFunc *f, const char *name) {
  for (int i = 0; i < f->nsizevars; i++)
    if (strcmp(f->sizevars[i]->name, name) == 0) return i;
  return -1;
}

static int find_buf(const Compiler *c, const Buffer *b) {
  for (size_t i = c->bufs.len; i-- > 0;)
    if (c->bufs.items[i] == b) return (int)i;
  for (size_t i = c->bufs.len; i-- > 0;)
    if (strcmp(((const Buffer *)c->bufs.items[i])->name, b->name) == 0) return (int)i;
  return -1;
}

static ENode *enode(Compiler *c, EvalFn fn, DType dt, const PrimExpr *src) {
  ENode *n = ARENA_NEW(c->a, ENode);
  n->fn = fn, n->dt = dt, n->src = src;
  return n;
}

static ENode *cexpr(Compiler *c, const PrimExpr *e);

/* e converted to dtype `to` (a cast node only when needed). */
static ENode *convert(Compiler *c, ENode *x, DType to) {
  if (!x || x->dt == to) return x;
  ENode *n = enode(c, cast_fn(x->dt, to), to, x->src);
  n->a = x, n->from = x->dt;
  return n;
}

static DType unify(Compiler *c, const PrimExpr *e, DType a, DType b, const char *what) {
  DType t = tir_unify(a, b);
  if (t != DT_INVALID) return t;
  cfail(c, e->span, "@%s: operands of %s have different types: %s and %s", c->p->f->name, what,
        dtype_name(a), dtype_name(b));
  return DT_INVALID;
}

static ENode *c_const(Compiler *c, const PrimExpr *e) {
  bool is_int = e->kind == PE_INT;
  DType dt = tir_literal_dtype(e);
  ENode *n = enode(c, ev_const, dt, e);
  if (is_int)
    n->k.i = norm(dt, e->u.i);
  else
    n->k.f = fround(dt, e->u.f);
  return n;
}

static ENode *c_var(Compiler *c, const PrimExpr *e) {
  const VarSlot *vs = find_var(c, e->u.var);
  if (!vs)
    return cfail(c, e->span, "@%s: %%%s is not in scope", c->p->f->name, e->u.var->name), NULL;
  ENode *n = enode(c, ev_var, vs->dtype, e);
  n->slot = vs->slot;
  return n;
}

static ENode **c_indices(Compiler *c, int n, PrimExpr *const *idx) {
  ENode **out = ARENA_ARRAY(c->a, ENode *, n ? n : 1);
  for (int i = 0; i < n && !c->failed; i++) {
    out[i] = cexpr(c, idx[i]);
    if (out[i] && !dtype_is_int(out[i]->dt))
      cfail(c, idx[i]->span, "@%s: an index must be an integer, got %s", c->p->f->name,
            dtype_name(out[i]->dt));
  }
  return out;
}

static int c_buffer(Compiler *c, const Buffer *b, int n, Span sp) {
  int i = b ? find_buf(c, b) : -1;
  if (i < 0) return cfail(c, sp, "@%s: unknown buffer %%%s", c->p->f->name, b ? b->name : "?"), -1;
  if (n != b->ndim)
    return cfail(c, sp, "@%s: buffer %%%s has rank %d but is indexed with %d indices",
                 c->p->f->name, b->name, b->ndim, n),
           -1;
  return i;
}

static ENode *c_load(Compiler *c, const PrimExpr *e) {
  const Buffer *b = e->u.load.buf;
  int bi = c_buffer(c, b, e->u.load.n, e->span);
  if (bi < 0) return NULL;
  ENode *n = enode(c, b->dtype == DT_FLOAT32 ? ev_load_f32 : ev_load, b->dtype, e);
  n->slot = bi, n->n = e->u.load.n;
  n->idx = c_indices(c, n->n, e->u.load.idx);
  return c->failed ? NULL : n;
}

static ENode *c_bin(Compiler *c, const PrimExpr *e) {
  PrimBinOp op = e->u.bin.op;
  ENode *a = cexpr(c, e->u.bin.a), *b = a ? cexpr(c, e->u.bin.b) : NULL;
  if (!b) return NULL;
  DType t = tir_binop_is_logic(op) ? DT_BOOL : unify(c, e, a->dt, b->dt, prim_binop_text(op));
  if (t == DT_INVALID) return NULL;
  EvalFn fn = bin_table[op][class_of(t)];
  if (t == DT_FLOAT32 && op <= PB_DIV) fn = f32_table[op];
  ENode *n = enode(c, fn, tir_binop_result_dtype(op, t), e);
  n->a = convert(c, a, t), n->b = convert(c, b, t);
  return n;
}

static ENode *c_unary(Compiler *c, const PrimExpr *e) {
  ENode *a = cexpr(c, e->u.operand);
  if (!a) return NULL;
  bool neg = e->kind == PE_NEG;
  ENode *n = enode(c,
                   !neg                      ? not_b
                   : class_of(a->dt) == CL_F ? neg_f
                                             : neg_i,
                   neg ? a->dt : DT_BOOL, e);
  n->a = a;
  return n;
}

static const EvalFn minmax_abs_table[3][CL_COUNT] = {
    {max_i, max_u, max_f}, {min_i, min_u, min_f}, {abs_i, abs_u, abs_f}};

/* The node of a bitwise intrinsic over operands of type t. */
static ENode *c_bits_node(Compiler *c, const PrimExpr *e, DType t) {
  PrimIntrinsic fn = e->u.call.fn;
  bool shift = prim_intrinsic_kind(fn) == 'n';
  if (!dtype_is_int(t) && (shift || t != DT_BOOL))
    return cfail(c, e->span, "@%s: %s expects %s argument, got %s", c->p->f->name,
                 prim_intrinsic_name(fn), shift ? "an integer" : "an integer or bool",
                 dtype_name(t)),
           NULL;
  EvalFn ev = fn == PI_BITAND   ? bitand_i
              : fn == PI_BITOR  ? bitor_i
              : fn == PI_BITXOR ? bitxor_i
              : fn == PI_BITNOT ? bitnot_i
              : fn == PI_SHL    ? shl_i
              : t == DT_UINT64  ? shr_u
                                : shr_i;
  return enode(c, ev, t, e);
}

/* The node of intrinsic fn over operands already converted to type t. */
static ENode *c_intrinsic_node(Compiler *c, const PrimExpr *e, DType t) {
  PrimIntrinsic fn = e->u.call.fn;
  if (fn == PI_MAX || fn == PI_MIN || fn == PI_ABS)
    return enode(c, minmax_abs_table[fn == PI_MAX ? 0 : fn == PI_MIN ? 1 : 2][class_of(t)], t, e);
  if (prim_intrinsic_kind(fn) == 'i' || prim_intrinsic_kind(fn) == 'n') return c_bits_node(c, e, t);
  if (fn == PI_DOT4)
    return t == DT_INT32 ? enode(c, dot4_i, t, e)
                         : (cfail(c, e->span, "@%s: %s expects int32 arguments, got %s",
                                  c->p->f->name, prim_intrinsic_name(fn), dtype_name(t)),
                            NULL);
  if (!dtype_is_float(t))
    return cfail(c, e->span, "@%s: %s expects a float argument, got %s", c->p->f->name,
                 prim_intrinsic_name(fn), dtype_name(t)),
           NULL;
  if (fn == PI_POW) return enode(c, pow_f, t, e);
  MathFns m = math_fns(fn);
  ENode *n = enode(c, t == DT_FLOAT64 ? math1_f64 : math1_f32, t, e);
  n->ff = m.ff, n->fd = m.fd;
  return n;
}

/* An intrinsic call: the value operands are unified to one dtype and
 * converted to it; select's condition stays bool. */
static ENode *c_call(Compiler *c, const PrimExpr *e) {
  PrimIntrinsic fn = e->u.call.fn;
  int n = e->u.call.n;
  if (n != prim_intrinsic_arity(fn))
    return cfail(c, e->span, "@%s: %s expects %d arguments, got %d", c->p->f->name,
                 prim_intrinsic_name(fn), prim_intrinsic_arity(fn), n),
           NULL;
  ENode *args[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n; i++)
    if (!(args[i] = cexpr(c, e->u.call.args[i]))) return NULL;
  int first = fn == PI_SELECT ? 1 : 0; /* select's condition is not unified */
  DType t = args[first]->dt;
  if (n - first == 2)
    t = unify(c, e, args[first]->dt, args[first + 1]->dt, prim_intrinsic_name(fn));
  if (t == DT_INVALID) return NULL;
  ENode *r = fn == PI_SELECT ? enode(c, select_v, t, e) : c_intrinsic_node(c, e, t);
  if (!r) return NULL;
  ENode **slots[3] = {&r->a, &r->b, &r->c};
  for (int i = 0; i < n; i++) *slots[i] = convert(c, args[i], i < first ? DT_BOOL : t);
  return r;
}

static ENode *c_bitcast(Compiler *c, const PrimExpr *e) {
  ENode *x = cexpr(c, e->u.cast.value);
  if (!x) return NULL;
  if (!tir_bitcast_ok(x->dt, e->u.cast.to))
    return cfail(c, e->span, "@%s: reinterpret[%s] of a %s", c->p->f->name,
                 dtype_name(e->u.cast.to), dtype_name(x->dt)),
           NULL;
  ENode *n = enode(c, cast_bits, e->u.cast.to, e);
  n->a = x, n->from = x->dt;
  return n;
}

static ENode *cexpr(Compiler *c, const PrimExpr *e) {
  if (c->failed) return NULL;
  switch (e->kind) {
    case PE_INT:
    case PE_FLOAT:
      return c_const(c, e);
    case PE_VAR:
      return c_var(c, e);
    case PE_LOAD:
      return c_load(c, e);
    case PE_BIN:
      return c_bin(c, e);
    case PE_NOT:
    case PE_NEG:
      return c_unary(c, e);
    case PE_CALL:
      return c_call(c, e);
    case PE_CAST:
      return e->u.cast.bits ? c_bitcast(c, e) : convert(c, cexpr(c, e->u.cast.value), e->u.cast.to);
  }
  RLY_UNREACHABLE();
}

static SNode *snode(Compiler *c, ExecFn fn, const Stmt *src) {
  SNode *s = ARENA_NEW(c->a, SNode);
  s->fn = fn, s->src = src;
  return s;
}

static SNode *cstmt(Compiler *c, const Stmt *s);

static SNode *c_seq(Compiler *c, const Stmt *s) {
  SNode *n = snode(c, ex_seq, s);
  n->n = s->u.seq.n;
  n->items = ARENA_ARRAY(c->a, SNode *, n->n ? n->n : 1);
  for (int i = 0; i < n->n; i++)
    if (!(n->items[i] = cstmt(c, s->u.seq.items[i]))) return NULL;
  return n;
}

static ENode *c_int_expr(Compiler *c, const PrimExpr *e, const char *what) {
  ENode *n = cexpr(c, e);
  if (n && !dtype_is_int(n->dt))
    return cfail(c, e->span, "@%s: %s must be an integer, got %s", c->p->f->name, what,
                 dtype_name(n->dt)),
           NULL;
  return n;
}

/* `for %i, %j in grid(a, b)` becomes nested one-variable loops; every kind
 * runs the same way, from its begin (tir_for_lo: NULL for 0). */
static SNode *c_for(Compiler *c, const Stmt *s) {
  int nv = s->u.for_.nvars;
  SNode *outer = NULL, **hole = &outer;
  for (int i = 0; i < nv; i++) {
    SNode *n = snode(c, ex_for, s);
    const PrimExpr *lo = tir_for_lo(s, i);
    n->lo = lo ? c_int_expr(c, lo, "a loop bound") : NULL;
    n->hi = c_int_expr(c, s->u.for_.hi[i], "a loop bound");
    if (c->failed) return NULL;
    n->slot = new_regs(c, 2);
    const TirVar *v = s->u.for_.vars[i];
    add_var(c, v, n->slot, dtype_is_int(v->dtype) ? v->dtype : n->hi->dt, true);
    *hole = n, hole = &n->body;
  }
  *hole = cstmt(c, s->u.for_.body);
  return *hole ? outer : NULL;
}

/* Registers of the loop variables used by the reduce bindings: init runs
 * when all of them are at their loop's first value.  Load indices are not
 * looked into (a binding has no load: the verifier). */
typedef struct Checks {
  Compiler *c;
  PtrVec slots; /* const VarSlot *, once each */
} Checks;

static bool check_var(void *ctx, const PrimExpr *e) {
  Checks *k = ctx;
  if (e->kind != PE_VAR) return e->kind != PE_LOAD;
  const VarSlot *vs = find_var(k->c, e->u.var);
  if (!vs || !vs->loop) return false;
  for (size_t i = 0; i < k->slots.len; i++)
    if (k->slots.items[i] == vs) return false;
  vec_push(&k->slots, (void *)vs);
  return false;
}

static void c_block_checks(Compiler *c, const Stmt *s, SNode *n) {
  Checks k = {c, {0}};
  TirVisitor v = {NULL, check_var, &k};
  for (int i = 0; i < s->u.block.niters; i++)
    if (s->u.block.iters[i].reduce) tir_walk_expr(s->u.block.iters[i].binding, &v);
  n->nchecks = (int)k.slots.len;
  n->checks = ARENA_ARRAY(c->a, int, k.slots.len + 1);
  for (size_t i = 0; i < k.slots.len; i++) n->checks[i] = ((const VarSlot *)k.slots.items[i])->slot;
  vec_free(&k.slots);
}

/* Iteration variables bound to a plain variable share its register. */
static SNode *c_block(Compiler *c, const Stmt *s) {
  SNode *n = snode(c, ex_block, s);
  int ni = s->u.block.niters;
  n->iter_slots = ARENA_ARRAY(c->a, int, ni + 1);
  n->iter_vals = ARENA_ARRAY(c->a, ENode *, ni + 1);
  c_block_checks(c, s, n);
  ENode **vals = ARENA_ARRAY(c->a, ENode *, ni + 1);
  for (int i = 0; i < ni; i++) /* bindings see the enclosing scope only */
    if (!(vals[i] = c_int_expr(c, s->u.block.iters[i].binding, "a block binding"))) return NULL;
  for (int i = 0; i < ni; i++) {
    const TirVar *v = s->u.block.iters[i].var;
    DType dt = dtype_is_int(v->dtype) ? v->dtype : vals[i]->dt;
    if (vals[i]->fn == ev_var) {
      add_var(c, v, vals[i]->slot, dt, false);
      continue;
    }
    int slot = new_regs(c, 1);
    add_var(c, v, slot, dt, false);
    n->iter_slots[n->niters] = slot;
    n->iter_vals[n->niters++] = convert(c, vals[i], dt);
  }
  if (s->u.block.init && !(n->init = cstmt(c, s->u.block.init))) return NULL;
  n->body = cstmt(c, s->u.block.body);
  return n->body ? n : NULL;
}

static SNode *c_store(Compiler *c, const Stmt *s) {
  const Buffer *b = s->u.store.buf;
  int bi = c_buffer(c, b, s->u.store.n, s->span);
  if (bi < 0) return NULL;
  SNode *n = snode(c, b->dtype == DT_FLOAT32 ? ex_store_f32 : ex_store, s);
  n->buf = bi, n->nidx = s->u.store.n;
  n->idx = c_indices(c, n->nidx, s->u.store.idx);
  n->value = convert(c, cexpr(c, s->u.store.value), b->dtype);
  if (c->failed) return NULL;
  if (bi < c->p->f->nparams) c->p->writes[bi] = true;
  return n;
}

/* An `alloc`: each symbolic dim must be a size variable of the parameters
 * (its register is read when the statement runs); the buffer gets the next
 * number. */
static SNode *c_alloc(Compiler *c, const Stmt *s) {
  const Buffer *b = s->u.alloc;
  SNode *n = snode(c, ex_alloc, s);
  n->dim_slots = ARENA_ARRAY(c->a, int, b->ndim + 1);
  for (int d = 0; d < b->ndim; d++) {
    n->dim_slots[d] = -1;
    if (b->dims[d].kind == DIM_CONST) continue;
    int sv = b->dims[d].kind == DIM_VAR ? find_sizevar(c->p->f, b->dims[d].name) : -1;
    if (sv < 0)
      return cfail(c, s->span, "@%s: dimension %d of %%%s is not a size of the parameters",
                   c->p->f->name, d, b->name),
             NULL;
    n->dim_slots[d] = c->p->size_slots[sv];
  }
  n->buf = (int)c->bufs.len;
  vec_push(&c->bufs, (void *)b);
  return n;
}

static SNode *c_let(Compiler *c, const Stmt *s) {
  ENode *v = cexpr(c, s->u.let.value);
  if (!v) return NULL;
  const TirVar *x = s->u.let.var;
  DType dt = x->dtype != DT_INVALID ? x->dtype : v->dt;
  SNode *n = snode(c, ex_let, s);
  n->value = convert(c, v, dt);
  n->slot = new_regs(c, 1);
  add_var(c, x, n->slot, dt, false);
  return n;
}

static SNode *c_if(Compiler *c, const Stmt *s) {
  SNode *n = snode(c, ex_if, s);
  n->value = cexpr(c, s->u.if_.cond);
  if (!n->value) return NULL;
  n->value = convert(c, n->value, DT_BOOL);
  if (!(n->body = cstmt(c, s->u.if_.then_))) return NULL;
  if (s->u.if_.else_ && !(n->else_ = cstmt(c, s->u.if_.else_))) return NULL;
  return n;
}

static SNode *cstmt(Compiler *c, const Stmt *s) {
  if (c->failed) return NULL;
  switch (s->kind) {
    case ST_SEQ:
      return c_seq(c, s);
    case ST_FOR:
      return c_for(c, s);
    case ST_BLOCK:
      return c_block(c, s);
    case ST_STORE:
      return c_store(c, s);
    case ST_ALLOC:
      return c_alloc(c, s);
    case ST_LET:
      return c_let(c, s);
    case ST_IF:
      return c_if(c, s);
  }
  RLY_UNREACHABLE();
}

static void program_free(TirProgram *p) {
  if (!p) return;
  arena_free(&p->arena);
  free(p);
}

/* Compiles a prim function: size variables take the first registers,
 * parameters the first buffer numbers; NULL (with err set) on failure. */
static TirProgram *compile(const PrimFunc *f, TirError *err) {
  TirProgram *p = calloc(1, sizeof *p);
  if (!p) rly_oom();
  arena_init(&p->arena);
  p->f = f;
  Compiler c = {.p = p, .a = &p->arena, .err = err};
  p->size_slots = ARENA_ARRAY(c.a, int, f->nsizevars + 1);
  p->writes = ARENA_ARRAY(c.a, bool, f->nparams + 1);
  for (int i = 0; i < f->nsizevars; i++) {
    p->size_slots[i] = new_regs(&c, 1);
    add_var(&c, f->sizevars[i], p->size_slots[i], DT_INT64, false);
  }
  for (int i = 0; i < f->nparams; i++) vec_push(&c.bufs, f->params[i]);
  p->body = f->body ? cstmt(&c, f->body) : NULL;
  if (!f->body) cfail(&c, f->span, "@%s has no body", f->name);
  p->nbufs = (int)c.bufs.len;
  p->bufs = (const Buffer **)vec_finish(&c.bufs, c.a);
  free(c.vars);
  if (c.failed) program_free(p), p = NULL;
  return p;
}

/* ───────────────────────────── binding ───────────────────────────── */

const char *tir_interp_buffer_str(char *buf, size_t len, const Buffer *b) {
  StrBuf sb = {0};
  sb_printf(&sb, "%%%s: Buffer[", b->name);
  print_dims_to(&sb, b->ndim, b->dims);
  sb_printf(&sb, ", %s]", dtype_name(b->dtype));
  snprintf(buf, len, "%s", sb.data);
  sb_free(&sb);
  return buf;
}

static bool bind_fail(TirError *err, const Buffer *b, int param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool bind_fail(TirError *err, const Buffer *b, int param, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_err(err, b->span, param, fmt, ap);
  va_end(ap);
  return false;
}

static bool bind_param(const PrimFunc *f, int i, const RtTensor *t, int64_t *vals, bool *known,
                       TirError *err) {
  const Buffer *b = f->params[i];
  char want[256], got[128];
  bool ok = t->dtype == b->dtype && t->ndim == b->ndim;
  for (int d = 0; ok && d < b->ndim; d++)
    ok = b->dims[d].kind != DIM_CONST || b->dims[d].value == t->shape[d];
  if (!ok)
    return bind_fail(err, b, i, "@%s: parameter %s cannot take a %s tensor of shape %s", f->name,
                     tir_interp_buffer_str(want, sizeof want, b), dtype_name(t->dtype),
                     rt_shape_str(got, sizeof got, t->ndim, t->shape));
  for (int d = 0; d < b->ndim; d++) {
    int sv = b->dims[d].kind == DIM_VAR ? find_sizevar(f, b->dims[d].name) : -1;
    if (sv < 0) continue;
    if (!known[sv]) {
      vals[sv] = t->shape[d], known[sv] = true;
      continue;
    }
    if (vals[sv] == t->shape[d]) continue;
    const char *first = "?"; /* the parameter that bound it */
    for (int j = 0; j < i && first[0] == '?'; j++)
      for (int e = 0; e < f->params[j]->ndim; e++) {
        const Dim *pd = &f->params[j]->dims[e];
        if (pd->kind == DIM_VAR && !strcmp(pd->name, b->dims[d].name)) first = f->params[j]->name;
      }
    if (first[0] == '?') first = b->name; /* bound earlier in the same parameter */
    return bind_fail(err, b, i, "@%s: size %s is %lld for %%%s but %lld for %%%s", f->name,
                     b->dims[d].name, (long long)vals[sv], first, (long long)t->shape[d], b->name);
  }
  return true;
}

bool tir_interp_bind_sizes(const PrimFunc *f, RtTensor *const *args, int n, int64_t *vals,
                           bool *known, TirError *err) {
  RLY_ASSERT(n <= f->nparams);
  err->msg[0] = 0, err->param = -1, err->span = (Span){0};
  for (int i = 0; i < f->nsizevars; i++) vals[i] = 0, known[i] = false;
  for (int i = 0; i < n; i++)
    if (!bind_param(f, i, args[i], vals, known, err)) return false;
  return true;
}

/* ───────────────────────────── running ───────────────────────────── */

bool tir_interp_writes_param(const TirProgram *p, int i) {
  return i >= 0 && i < p->f->nparams && p->writes[i];
}

static bool run_frame(const TirProgram *p, RtTensor **args, const int64_t *sizes, TirError *err) {
  Frame fr = {.prog = p, .err = err};
  fr.regs = calloc((size_t)p->nregs + 1, sizeof(Val));
  fr.bufs = calloc((size_t)p->nbufs + 1, sizeof(BufState));
  if (!fr.regs || !fr.bufs) rly_oom();
  for (int i = 0; i < p->f->nsizevars; i++) fr.regs[p->size_slots[i]].i = sizes[i];
  for (int i = 0; i < p->f->nparams; i++) {
    BufState *bs = &fr.bufs[i];
    bs->data = args[i]->data, bs->ndim = args[i]->ndim;
    memcpy(bs->dims, args[i]->shape, sizeof(int64_t) * (size_t)args[i]->ndim);
  }
  p->body->fn(p->body, &fr);
  for (int i = 0; i < p->nbufs; i++) rt_tensor_release(fr.bufs[i].owned);
  free(fr.regs);
  free(fr.bufs);
  return !fr.failed;
}

bool tir_interp_run(const TirProgram *p, RtTensor **args, int n, TirError *err) {
  const PrimFunc *f = p->f;
  err->msg[0] = 0, err->param = -1, err->span = (Span){0};
  if (n != f->nparams) {
    snprintf(err->msg, sizeof err->msg, "@%s takes %d buffers, got %d", f->name, f->nparams, n);
    err->span = f->span;
    return false;
  }
  int64_t *vals = calloc((size_t)f->nsizevars + 1, sizeof(int64_t));
  bool *known = calloc((size_t)f->nsizevars + 1, sizeof(bool));
  if (!vals || !known) rly_oom();
  bool ok = tir_interp_bind_sizes(f, args, n, vals, known, err) && run_frame(p, args, vals, err);
  free(vals);
  free(known);
  return ok;
}

bool tir_interp_run_func(const PrimFunc *f, RtTensor **args, int n, TirError *err) {
  TirProgram *p = compile(f, err);
  if (!p) return false;
  bool ok = tir_interp_run(p, args, n, err);
  program_free(p);
  return ok;
}

/* ───────────────────────────── cache ───────────────────────────── */

struct TirCache {
  int n, cap;
  TirProgram **progs;
};

TirCache *tir_interp_cache_new(void) {
  TirCache *c = calloc(1, sizeof *c);
  if (!c) rly_oom();
  return c;
}

void tir_interp_cache_free(TirCache *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) program_free(c->progs[i]);
  free(c->progs);
  free(c);
}

const TirProgram *tir_interp_compile(TirCache *c, const PrimFunc *f, TirError *err) {
  for (int i = 0; i < c->n; i++)
    if (c->progs[i]->f == f) return c->progs[i];
  err->msg[0] = 0, err->param = -1, err->span = (Span){0};
  TirProgram *p = compile(f, err);
  if (!p) return NULL;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->progs = realloc(c->progs, sizeof(TirProgram *) * (size_t)c->cap);
    if (!c->progs) rly_oom();
  }
  c->progs[c->n++] = p;
  return p;
}
