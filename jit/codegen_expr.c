/* codegen_expr.c — TIR scalar expressions → LLVM IR, and the symbolic
 * ranges that let accesses skip their bounds checks (codegen.h).
 *
 * Types and conversions follow ir/tir_rules.h, as tir_interp.c does:
 * operands of a binary operator unify (equal, or the wider integer; a tie
 * keeps the left type), comparisons and logic give bool, `&&`, `||` and
 * `select` are lazy (branches) unless the
 * side not always taken can be evaluated speculatively without any error
 * (no unchecked load, no division by a non-constant), in which case they
 * become plain and/or/select instructions that vectorize. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir_rules.h"
#include "ir/tir_walk.h"
#include "jit/codegen.h"

static const CVal NONE = {NULL, DT_INVALID};

/* ─────────────────────────── types ─────────────────────────── */

static int64_t norm(DType t, int64_t v) { return dtype_wrap_int(t, v); }

static DType unify_or_fail(Cg *c, const PrimExpr *e, DType a, DType b, const char *what) {
  DType t = tir_unify(a, b);
  if (t == DT_INVALID && a != DT_INVALID && b != DT_INVALID)
    cg_fail(c, "@%s: operands of %s have different types", c->f->name, what);
  return t;
}

/* An expression's dtype by the interpreter's rules, without emitting code
 * (needed before deciding how to evaluate, e.g. whether to speculate). */
DType cg_expr_type(Cg *c, const PrimExpr *e) {
  switch (e->kind) {
    case PE_INT:
    case PE_FLOAT:
      return tir_literal_dtype(e);
    case PE_VAR: {
      const VarB *v = cg_find_var(c, e->u.var);
      return v ? v->dt : DT_INVALID;
    }
    case PE_LOAD: {
      const BufB *b = cg_find_buf(c, e->u.load.buf);
      return b ? b->b->dtype : DT_INVALID;
    }
    case PE_BIN: {
      PrimBinOp op = e->u.bin.op;
      DType a = cg_expr_type(c, e->u.bin.a), b = cg_expr_type(c, e->u.bin.b);
      return tir_binop_result_dtype(op, tir_binop_operand_dtype(op, a, b));
    }
    case PE_NOT:
      return DT_BOOL;
    case PE_NEG:
      return cg_expr_type(c, e->u.operand);
    case PE_CALL: {
      int first = e->u.call.fn == PI_SELECT ? 1 : 0;
      if (e->u.call.n <= first) return DT_INVALID;
      DType t = cg_expr_type(c, e->u.call.args[first]);
      if (e->u.call.n - first == 2) t = tir_unify(t, cg_expr_type(c, e->u.call.args[first + 1]));
      return t;
    }
    case PE_CAST:
      return e->u.cast.to;
  }
  return DT_INVALID;
}

/* ─────────────────────────── ranges ─────────────────────────── */

enum { LIM_K = 4096 };
static const int64_t LIM_C = (int64_t)1 << 40;

Lin cg_lin_const(int64_t k) { return (Lin){.c = k}; }

static bool lin_is_const(const Lin *a) { return a->n == 0; }

static bool lin_add_term(Lin *a, int sv, int64_t k) {
  for (int i = 0; i < a->n; i++)
    if (a->sv[i] == sv) {
      a->k[i] += k;
      if (a->k[i] > LIM_K || a->k[i] < -LIM_K) return false;
      if (a->k[i] == 0) a->sv[i] = a->sv[a->n - 1], a->k[i] = a->k[a->n - 1], a->n--;
      return true;
    }
  if (a->n == LIN_TERMS || k > LIM_K || k < -LIM_K) return false;
  a->sv[a->n] = sv, a->k[a->n++] = k;
  return true;
}

static bool lin_add(const Lin *a, const Lin *b, Lin *out) {
  *out = *a;
  out->c = a->c + b->c;
  if (out->c > LIM_C || out->c < -LIM_C) return false;
  for (int i = 0; i < b->n; i++)
    if (!lin_add_term(out, b->sv[i], b->k[i])) return false;
  return true;
}

static bool lin_scale(const Lin *a, int64_t k, Lin *out) {
  if (k > LIM_C || k < -LIM_C) return false;
  *out = *a;
  if (__builtin_mul_overflow(a->c, k, &out->c) || out->c > LIM_C || out->c < -LIM_C) return false;
  for (int i = 0; i < a->n; i++)
    if (__builtin_mul_overflow(a->k[i], k, &out->k[i]) || out->k[i] > LIM_K || out->k[i] < -LIM_K)
      return false;
  if (k == 0) out->n = 0;
  return true;
}

bool cg_lin_sub(const Lin *a, const Lin *b, Lin *out) {
  Lin nb;
  return lin_scale(b, -1, &nb) && lin_add(a, &nb, out);
}

bool cg_lin_nonneg(const Lin *a) {
  if (a->c < 0) return false;
  for (int i = 0; i < a->n; i++)
    if (a->k[i] < 0) return false;
  return true;
}

static Range point(int64_t v) {
  Range r = {true, cg_lin_const(v), cg_lin_const(v)};
  if (v > LIM_C || v < -LIM_C) r.ok = false;
  return r;
}

static Range r_add(Range a, Range b, bool sub) {
  Range r = {true, {0}, {0}};
  if (sub)
    r.ok = cg_lin_sub(&a.lo, &b.hi, &r.lo) && cg_lin_sub(&a.hi, &b.lo, &r.hi);
  else
    r.ok = lin_add(&a.lo, &b.lo, &r.lo) && lin_add(&a.hi, &b.hi, &r.hi);
  return r;
}

static Range r_mul(Range a, Range b) {
  Range r = {0};
  if (!(lin_is_const(&b.lo) && lin_is_const(&b.hi) && b.lo.c == b.hi.c)) {
    if (!(lin_is_const(&a.lo) && lin_is_const(&a.hi) && a.lo.c == a.hi.c)) return r;
    Range t = a;
    a = b, b = t;
  }
  int64_t k = b.lo.c;
  r.ok = lin_scale(k >= 0 ? &a.lo : &a.hi, k, &r.lo) && lin_scale(k >= 0 ? &a.hi : &a.lo, k, &r.hi);
  return r;
}

/* Truncating division and modulo by a positive constant of a non-negative range. */
static Range r_divmod(Range a, Range b, bool mod) {
  Range r = {0};
  if (!lin_is_const(&b.lo) || b.lo.c != b.hi.c || b.lo.c <= 0 || !cg_lin_nonneg(&a.lo)) return r;
  int64_t k = b.lo.c;
  if (mod) {
    if (lin_is_const(&a.hi) && a.hi.c < k) return a;
    return (Range){true, cg_lin_const(0), cg_lin_const(k - 1)};
  }
  r.ok = true;
  r.lo = lin_is_const(&a.lo) ? cg_lin_const(a.lo.c / k) : cg_lin_const(0);
  r.hi = lin_is_const(&a.hi) ? cg_lin_const(a.hi.c / k) : a.hi;
  return r;
}

/* min / max of two constant ranges (a clamped index: max(0, min(i, n - 1))). */
static Range r_minmax(Range a, Range b, bool max) {
  Range bad = {0};
  if (!a.ok || !b.ok || !lin_is_const(&a.lo) || !lin_is_const(&a.hi) || !lin_is_const(&b.lo) ||
      !lin_is_const(&b.hi))
    return bad;
  int64_t lo = max ? (a.lo.c > b.lo.c ? a.lo.c : b.lo.c) : (a.lo.c < b.lo.c ? a.lo.c : b.lo.c);
  int64_t hi = max ? (a.hi.c > b.hi.c ? a.hi.c : b.hi.c) : (a.hi.c < b.hi.c ? a.hi.c : b.hi.c);
  return (Range){true, cg_lin_const(lo), cg_lin_const(hi)};
}

/* int32 values need constant bounds inside int32 (symbolic ones could wrap). */
static Range fit(DType t, Range r) {
  if (!r.ok) return r;
  if (t == DT_INT64) return r;
  if (t != DT_INT32 || !lin_is_const(&r.lo) || !lin_is_const(&r.hi) || r.lo.c < INT32_MIN ||
      r.hi.c > INT32_MAX)
    r.ok = false;
  return r;
}

/* A symbolic range (linear in the size variables) of an int32/int64
 * expression, or !ok; what bounds checks are proven with. */
Range cg_range(Cg *c, const PrimExpr *e) {
  Range bad = {0};
  DType t = cg_expr_type(c, e);
  if (t != DT_INT32 && t != DT_INT64) return bad;
  switch (e->kind) {
    case PE_INT:
      return fit(t, point(norm(t, e->u.i)));
    case PE_VAR: {
      const VarB *v = cg_find_var(c, e->u.var);
      return v ? fit(t, v->r) : bad;
    }
    case PE_CAST:
      return e->u.cast.bits ? bad : fit(t, cg_range(c, e->u.cast.value));
    case PE_NEG: {
      Range a = cg_range(c, e->u.operand);
      return a.ok ? fit(t, r_add(point(0), a, true)) : bad;
    }
    case PE_CALL:
      if ((e->u.call.fn != PI_MIN && e->u.call.fn != PI_MAX) || e->u.call.n != 2) return bad;
      return fit(t, r_minmax(cg_range(c, e->u.call.args[0]), cg_range(c, e->u.call.args[1]),
                             e->u.call.fn == PI_MAX));
    case PE_BIN: {
      Range a = cg_range(c, e->u.bin.a), b = a.ok ? cg_range(c, e->u.bin.b) : bad;
      if (!b.ok) return bad;
      switch (e->u.bin.op) {
        case PB_ADD:
          return fit(t, r_add(a, b, false));
        case PB_SUB:
          return fit(t, r_add(a, b, true));
        case PB_MUL:
          return fit(t, r_mul(a, b));
        case PB_DIV:
          return fit(t, r_divmod(a, b, false));
        case PB_MOD:
          return fit(t, r_divmod(a, b, true));
        default:
          return bad;
      }
    }
    default:
      return bad;
  }
}

static bool dim_lin(Cg *c, const Buffer *b, int d, Lin *out) {
  const Dim *x = &b->dims[d];
  if (x->kind == DIM_CONST) return *out = cg_lin_const(x->value), x->value <= LIM_C;
  if (x->kind != DIM_VAR) return false;
  for (int i = 0; i < c->f->nsizevars; i++)
    if (strcmp(c->f->sizevars[i]->name, x->name) == 0) {
      *out = (Lin){.n = 1, .sv = {i}, .k = {1}};
      return true;
    }
  return false;
}

bool cg_in_bounds(Cg *c, const Buffer *b, int d, const PrimExpr *idx) {
  Range r = cg_range(c, idx);
  Lin dim, room;
  if (!r.ok || !cg_lin_nonneg(&r.lo) || !dim_lin(c, b, d, &dim)) return false;
  if (!cg_lin_sub(&dim, &r.hi, &room)) return false;
  room.c -= 1;
  return cg_lin_nonneg(&room);
}

/* Can e be evaluated when the program would not, with no possible error?
 * Loads must be provably in bounds, integer division needs a nonzero
 * constant divisor; every node is asked once (the walk stops at the first
 * that cannot). */
typedef struct Spec {
  Cg *c;
  bool ok;
} Spec;

static bool load_safe(Cg *c, const PrimExpr *e) {
  const BufB *b = cg_find_buf(c, e->u.load.buf);
  if (!b || e->u.load.n != b->b->ndim) return false;
  for (int i = 0; i < e->u.load.n; i++)
    if (!cg_in_bounds(c, b->b, i, e->u.load.idx[i])) return false;
  return true;
}

static bool spec_node(void *ctx, const PrimExpr *e) {
  Spec *s = ctx;
  if (!s->ok) return false;
  if (e->kind == PE_LOAD) s->ok = load_safe(s->c, e);
  if (e->kind == PE_BIN && (e->u.bin.op == PB_DIV || e->u.bin.op == PB_MOD))
    s->ok =
        cg_is_float(cg_expr_type(s->c, e)) || (e->u.bin.b->kind == PE_INT && e->u.bin.b->u.i != 0);
  return s->ok;
}

bool cg_can_speculate(Cg *c, const PrimExpr *e) {
  Spec s = {c, true};
  TirVisitor v = {NULL, spec_node, &s};
  tir_walk_expr(e, &v);
  return s.ok;
}

/* ─────────────────────────── helpers ─────────────────────────── */

static LLVMValueRef h2d_call(Cg *c, LLVMValueRef bits32) {
  LLVMTypeRef p[] = {c->i32};
  return cg_call_rt(c, "rly_rt_h2d", c->f64, p, 1, &bits32);
}

static LLVMValueRef d2h_call(Cg *c, LLVMValueRef d) {
  LLVMTypeRef p[] = {c->f64};
  return cg_call_rt(c, "rly_rt_d2h", c->i32, p, 1, &d);
}

LLVMValueRef cg_round_half(Cg *c, LLVMValueRef d) { return h2d_call(c, d2h_call(c, d)); }

/* Whether the CPU converts between half and float itself (x86 F16C): then
 * LLVM's half type carries float16 between memory and the double it lives
 * in, and float32 results are rounded to half by fptrunc, all inline (so
 * loops over float16 vectorize); else the host's functions do it.  Both
 * round to nearest even, once. */
static bool native_half(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

/* binary16 bits (i16) as the double holding them, and back (d a value
 * of half precision already, so both fptruncs are exact). */
static LLVMValueRef half_bits_to_double(Cg *c, LLVMValueRef bits) {
  LLVMValueRef h = LLVMBuildBitCast(c->B, bits, LLVMHalfTypeInContext(c->C), "");
  return LLVMBuildFPExt(c->B, h, c->f64, "");
}

static LLVMValueRef double_to_half_bits(Cg *c, LLVMValueRef d) {
  LLVMValueRef f = LLVMBuildFPTrunc(c->B, d, c->f32, "");
  LLVMValueRef h = LLVMBuildFPTrunc(c->B, f, LLVMHalfTypeInContext(c->C), "");
  return LLVMBuildBitCast(c->B, h, c->i16, "");
}

/* A float32 value rounded to half precision, as the double holding it. */
static LLVMValueRef round_float_to_half(Cg *c, LLVMValueRef f) {
  if (!native_half()) return cg_round_half(c, LLVMBuildFPExt(c->B, f, c->f64, ""));
  LLVMValueRef h = LLVMBuildFPTrunc(c->B, f, LLVMHalfTypeInContext(c->C), "");
  return LLVMBuildFPExt(c->B, h, c->f64, "");
}

/* bfloat16 bits (i16) as the float holding them: exact. */
static LLVMValueRef bf16_bits_to_float(Cg *c, LLVMValueRef bits) {
  LLVMValueRef w = LLVMBuildZExt(c->B, bits, c->i32, "");
  w = LLVMBuildShl(c->B, w, LLVMConstInt(c->i32, 16, 0), "");
  return LLVMBuildBitCast(c->B, w, c->f32, "");
}

/* A float's bits (i32) rounded to bfloat16, in the upper half (ir/tensor.h's
 * float_to_bf16: a NaN keeps its upper bits with the quiet bit set, else
 * + 0x7fff + the lowest kept bit), as compares and selects that vectorize. */
static LLVMValueRef round_bits_to_bf16(Cg *c, LLVMValueRef u) {
  LLVMValueRef k16 = LLVMConstInt(c->i32, 16, 0);
  LLVMValueRef lsb =
      LLVMBuildAnd(c->B, LLVMBuildLShr(c->B, u, k16, ""), LLVMConstInt(c->i32, 1, 0), "");
  LLVMValueRef r =
      LLVMBuildAdd(c->B, u, LLVMBuildAdd(c->B, lsb, LLVMConstInt(c->i32, 0x7fff, 0), ""), "");
  LLVMValueRef mag = LLVMBuildAnd(c->B, u, LLVMConstInt(c->i32, 0x7fffffff, 0), "");
  LLVMValueRef nan = LLVMBuildICmp(c->B, LLVMIntUGT, mag, LLVMConstInt(c->i32, 0x7f800000, 0), "");
  LLVMValueRef q = LLVMBuildOr(c->B, u, LLVMConstInt(c->i32, 0x400000, 0), "");
  r = LLVMBuildSelect(c->B, nan, q, r, "");
  return LLVMBuildAnd(c->B, r, LLVMConstInt(c->i32, 0xffff0000u, 0), "");
}

/* A float32 value rounded to bfloat16, as the float holding it. */
static LLVMValueRef round_float_to_bf16(Cg *c, LLVMValueRef f) {
  LLVMValueRef u = round_bits_to_bf16(c, LLVMBuildBitCast(c->B, f, c->i32, ""));
  return LLVMBuildBitCast(c->B, u, c->f32, "");
}

/* A double rounded once to bfloat16 (ir/tensor.h's double_to_bf16: to
 * float rounding to odd, then to nearest even), as the float holding it. */
static LLVMValueRef round_double_to_bf16(Cg *c, LLVMValueRef d) {
  LLVMValueRef f = LLVMBuildFPTrunc(c->B, d, c->f32, "");
  LLVMValueRef back = LLVMBuildFPExt(c->B, f, c->f64, "");
  LLVMValueRef inexact = LLVMBuildFCmp(c->B, LLVMRealONE, back, d, "");
  LLVMTypeRef t = c->f64;
  LLVMValueRef fb = cg_intrinsic(c, "llvm.fabs", &t, 1, &back, 1);
  LLVMValueRef fd = cg_intrinsic(c, "llvm.fabs", &t, 1, &d, 1);
  LLVMValueRef up = LLVMBuildFCmp(c->B, LLVMRealOGT, fb, fd, "");
  LLVMValueRef u = LLVMBuildBitCast(c->B, f, c->i32, "");
  u = LLVMBuildSelect(c->B, up, LLVMBuildSub(c->B, u, LLVMConstInt(c->i32, 1, 0), ""), u, "");
  u = LLVMBuildSelect(c->B, inexact, LLVMBuildOr(c->B, u, LLVMConstInt(c->i32, 1, 0), ""), u, "");
  return LLVMBuildBitCast(c->B, round_bits_to_bf16(c, u), c->f32, "");
}

/* A float value held in a float (float32, bfloat16) or a double (float16,
 * float64) rounded to bfloat16. */
static LLVMValueRef round_to_bf16(Cg *c, LLVMValueRef v) {
  return LLVMTypeOf(v) == c->f32 ? round_float_to_bf16(c, v) : round_double_to_bf16(c, v);
}

static LLVMValueRef bf16_to_bits(Cg *c, LLVMValueRef f) {
  LLVMValueRef u = LLVMBuildBitCast(c->B, f, c->i32, "");
  return LLVMBuildTrunc(c->B, LLVMBuildLShr(c->B, u, LLVMConstInt(c->i32, 16, 0), ""), c->i16, "");
}

LLVMValueRef cg_load_elem(Cg *c, LLVMValueRef p, DType t) {
  LLVMValueRef v = LLVMBuildLoad2(c->B, cg_mty(c, t), p, "");
  LLVMSetAlignment(v, (unsigned)cg_dtype_bits(t == DT_BOOL ? DT_UINT8 : t) / 8);
  if (t == DT_BOOL) return LLVMBuildICmp(c->B, LLVMIntNE, v, LLVMConstInt(c->i8, 0, 0), "");
  if (t == DT_FLOAT16 && native_half()) return half_bits_to_double(c, v);
  if (t == DT_FLOAT16) return h2d_call(c, LLVMBuildZExt(c->B, v, c->i32, ""));
  if (t == DT_BFLOAT16) return bf16_bits_to_float(c, v);
  return v;
}

void cg_store_elem(Cg *c, LLVMValueRef p, DType t, LLVMValueRef v) {
  if (t == DT_BOOL) v = LLVMBuildZExt(c->B, v, c->i8, "");
  if (t == DT_FLOAT16)
    v = native_half() ? double_to_half_bits(c, v)
                      : LLVMBuildTrunc(c->B, d2h_call(c, v), c->i16, "");
  if (t == DT_BFLOAT16) v = bf16_to_bits(c, round_float_to_bf16(c, v));
  LLVMValueRef s = LLVMBuildStore(c->B, v, p);
  LLVMSetAlignment(s, (unsigned)cg_dtype_bits(t == DT_BOOL ? DT_UINT8 : t) / 8);
}

/* A libm function (float or double), declared pure so loops around it optimize. */
/* ─────────────────────────── vector math ─────────────────────────── */

/* libm functions with vector variants in glibc's libmvec (the x86-64 vector
 * function ABI: _ZGV<isa>N<lanes>v_<name>, isa b = SSE, d = AVX2, e =
 * AVX-512), used when the kernel is compiled with vector_math (the
 * approx-math setting): LLVM's loop vectorizer then calls a variant for a
 * vector of lanes.  Listed: the float32 functions whose variants stay
 * within 2 ulp of the exact result over every 997th float32 (both
 * variants; measured: sin 1.74, cos 1.82, tanh 1.36, log2 1.91, acos 1.91,
 * atan 1.95, sinh 1.54, atanh 1.99) and log (3.78 ulp, at 0.8837); exp,
 * tanh and erf are TVM's fast_* under approx math anyway; tan (3.3), asin
 * (2.9), log10 (2.1), cosh (2.1), exp (2.4) and erf (4.0) stay scalar.  The
 * listed ones are those with mvec 1 in PRIM_FLOAT_FNS (ir/tir.h). */
static bool mvec_listed(const char *name) {
#define X(NAME, fn, llvm, mvec) \
  if (mvec && strcmp(name, #fn "f") == 0) return true;
  PRIM_FLOAT_FNS(X)
#undef X
  return false;
}

/* Declares the variant vname (lanes x float -> lanes x float, no memory). */
static void mvec_declare(Cg *c, const char *vname, unsigned lanes) {
  if (LLVMGetNamedFunction(c->M, vname)) return;
  LLVMTypeRef vt = LLVMVectorType(c->f32, lanes);
  LLVMValueRef fn = LLVMAddFunction(c->M, vname, LLVMFunctionType(vt, &vt, 1, 0));
  unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, mem, 0));
  unsigned nu = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, nu, 0));
}

/* Marks a scalar call of a listed float32 function with its variants for
 * the ISAs this CPU has ("vector-function-abi-variant"). */
static void mvec_variants(Cg *c, LLVMValueRef call, const char *name, LLVMTypeRef t) {
  if (!c->o->vector_math || t != c->f32 || !mvec_listed(name) || !cg_libmvec()) return;
  static const struct {
    char isa;
    unsigned lanes;
    const char *feature;
  } isas[] = {{'b', 4, NULL}, {'d', 8, "avx2"}, {'e', 16, "avx512f"}};
  char value[512] = "";
  size_t len = 0;
  for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
    if (isas[i].feature &&
        !(strcmp(isas[i].feature, "avx2") == 0 ? __builtin_cpu_supports("avx2")
                                               : __builtin_cpu_supports("avx512f")))
      continue;
    char vname[64];
    snprintf(vname, sizeof vname, "_ZGV%cN%uv_%s", isas[i].isa, isas[i].lanes, name);
    mvec_declare(c, vname, isas[i].lanes);
    len += (size_t)snprintf(value + len, sizeof value - len, "%s_ZGV_LLVM_N%uv_%s(%s)",
                            len ? "," : "", isas[i].lanes, name, vname);
  }
  const char *key = "vector-function-abi-variant";
  LLVMAttributeRef a =
      LLVMCreateStringAttribute(c->C, key, (unsigned)strlen(key), value, (unsigned)strlen(value));
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, a);
}

static LLVMValueRef libm(Cg *c, const char *name, LLVMTypeRef t, LLVMValueRef *args, int n) {
  LLVMTypeRef ps[2] = {t, t};
  LLVMTypeRef ft = LLVMFunctionType(t, ps, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->M, name);
  if (!fn) {
    fn = LLVMAddFunction(c->M, name, ft);
    unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, mem, 0));
    unsigned nu = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, nu, 0));
    unsigned wr = LLVMGetEnumAttributeKindForName("willreturn", 10);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, wr, 0));
  }
  LLVMValueRef call = LLVMBuildCall2(c->B, ft, fn, args, (unsigned)n, "");
  if (n == 1) mvec_variants(c, call, name, t);
  return call;
}

static LLVMValueRef fconst(Cg *c, DType t, double v) { return LLVMConstReal(cg_lty(c, t), v); }

static void contract(Cg *c, LLVMValueRef inst, DType t) {
  if (c->o->contract && t != DT_FLOAT16 && t != DT_BFLOAT16 && LLVMIsAInstruction(inst))
    LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
}

/* ─────────────────────────── conversions ─────────────────────────── */

/* A float to an integer, saturating as llvm.fptosi.sat / fptoui.sat do
 * (NaN 0, out of range the nearest bound), written as compares and selects
 * around a plain conversion of an in-range value: x86 has no vector form of
 * the saturating intrinsics, which LLVM scalarizes (fast_exp's float to int
 * in a vectorized softmax cost 16 scalar conversions per vector). */
static LLVMValueRef f2i(Cg *c, LLVMValueRef v, DType to) {
  bool sgn = cg_is_signed(to);
  int bits = cg_dtype_bits(to);
  if (LLVMTypeOf(v) != c->f32 && LLVMTypeOf(v) != c->f64) v = LLVMBuildFPExt(c->B, v, c->f32, "");
  LLVMTypeRef ft = LLVMTypeOf(v), it = cg_lty(c, to);
  LLVMValueRef lo = LLVMConstReal(ft, sgn ? -ldexp(1, bits - 1) : 0);
  LLVMValueRef hi = LLVMConstReal(ft, ldexp(1, sgn ? bits - 1 : bits));
  LLVMValueRef big = LLVMBuildFCmp(c->B, LLVMRealOGE, v, hi, "");
  LLVMValueRef ok = LLVMBuildFCmp(c->B, LLVMRealOLT, v, hi, ""); /* false for NaN */
  LLVMValueRef t = LLVMBuildSelect(c->B, LLVMBuildFCmp(c->B, LLVMRealOLT, v, lo, ""), lo, v, "");
  t = LLVMBuildSelect(c->B, ok, t, LLVMConstReal(ft, 0), "");
  LLVMValueRef r = sgn ? LLVMBuildFPToSI(c->B, t, it, "") : LLVMBuildFPToUI(c->B, t, it, "");
  LLVMValueRef max = sgn ? LLVMConstInt(it, (~0ULL) >> (65 - bits), 0) : LLVMConstAllOnes(it);
  return LLVMBuildSelect(c->B, big, max, r, "");
}

static LLVMValueRef i2f(Cg *c, LLVMValueRef v, DType from, DType to) {
  bool u = !cg_is_signed(from);
  LLVMTypeRef t = to == DT_FLOAT32 ? c->f32 : c->f64;
  LLVMValueRef r = u ? LLVMBuildUIToFP(c->B, v, t, "") : LLVMBuildSIToFP(c->B, v, t, "");
  if (to == DT_BFLOAT16) return round_double_to_bf16(c, r);
  return to == DT_FLOAT16 ? cg_round_half(c, r) : r;
}

/* Between floats; v is held in a float (float32, bfloat16) or a double
 * (float16, float64). */
static LLVMValueRef f2f(Cg *c, LLVMValueRef v, DType from, DType to) {
  bool in_f32 = LLVMTypeOf(v) == c->f32;
  if (to == DT_BFLOAT16) return round_to_bf16(c, v);
  if (to == DT_FLOAT16) return in_f32 ? round_float_to_half(c, v) : cg_round_half(c, v);
  if (to == DT_FLOAT32) /* from f64, or exactly from f16 or bf16 */
    return in_f32 ? v : LLVMBuildFPTrunc(c->B, v, c->f32, "");
  (void)from;
  return in_f32 ? LLVMBuildFPExt(c->B, v, c->f64, "") : v;
}

static LLVMValueRef i2i(Cg *c, LLVMValueRef v, DType from, DType to) {
  int fb = from == DT_BOOL ? 1 : cg_dtype_bits(from), tb = cg_dtype_bits(to);
  LLVMTypeRef t = cg_lty(c, to);
  if (tb == fb) return v;
  if (tb < fb) return LLVMBuildTrunc(c->B, v, t, "");
  return cg_is_signed(from) ? LLVMBuildSExt(c->B, v, t, "") : LLVMBuildZExt(c->B, v, t, "");
}

/* x as a value of dtype `to`, by the rule tir_conv picks. */
CVal cg_convert(Cg *c, CVal x, DType to) {
  if (!x.v || x.dt == to) return x;
  LLVMValueRef v = x.v, zero;
  switch (tir_conv(x.dt, to)) {
    case CONV_SAME:
      break;
    case CONV_INT_RESIZE:
      v = i2i(c, v, x.dt, to);
      break;
    case CONV_INT_BOOL:
      zero = LLVMConstInt(LLVMTypeOf(v), 0, 0);
      v = LLVMBuildICmp(c->B, LLVMIntNE, v, zero, "");
      break;
    case CONV_FLOAT_BOOL:
      zero = LLVMConstReal(LLVMTypeOf(v), 0);
      v = LLVMBuildFCmp(c->B, LLVMRealONE, v, zero, "");
      break;
    case CONV_FLOAT_INT:
      v = f2i(c, v, to);
      break;
    case CONV_INT_FLOAT:
      v = i2f(c, v, x.dt, to);
      break;
    case CONV_FLOAT_RESIZE:
      v = f2f(c, v, x.dt, to);
      break;
  }
  return (CVal){v, to};
}

/* ─────────────────────────── operators ─────────────────────────── */

/* x's bits as an integer of its width (float16 and bfloat16 live in wider
 * floats in registers: their 16 bits). */
static LLVMValueRef value_bits(Cg *c, CVal x) {
  if (x.dt == DT_BFLOAT16) return bf16_to_bits(c, x.v);
  if (x.dt == DT_FLOAT16)
    return native_half() ? double_to_half_bits(c, x.v)
                         : LLVMBuildTrunc(c->B, d2h_call(c, x.v), c->i16, "");
  LLVMTypeRef it = LLVMIntTypeInContext(c->C, (unsigned)cg_dtype_bits(x.dt));
  return cg_is_float(x.dt) ? LLVMBuildBitCast(c->B, x.v, it, "") : x.v;
}

/* Bits (an integer of the width of `to`) as a value of `to`. */
static LLVMValueRef bits_value(Cg *c, LLVMValueRef b, DType to) {
  if (to == DT_BFLOAT16) return bf16_bits_to_float(c, b);
  if (to == DT_FLOAT16)
    return native_half() ? half_bits_to_double(c, b)
                         : h2d_call(c, LLVMBuildZExt(c->B, b, c->i32, ""));
  return LLVMBuildBitCast(c->B, b, cg_lty(c, to), "");
}

/* reinterpret[to](e): the same bits as another number type of its size. */
static CVal c_bitcast(Cg *c, const PrimExpr *e) {
  CVal x = cg_expr(c, e->u.cast.value);
  if (!x.v) return NONE;
  if (!tir_bitcast_ok(x.dt, e->u.cast.to))
    return cg_fail(c, "@%s: reinterpret between types of different sizes", c->f->name), NONE;
  DType to = e->u.cast.to;
  if (x.dt == to) return x;
  return (CVal){bits_value(c, value_bits(c, x), to), to};
}

static CVal c_const(Cg *c, const PrimExpr *e) {
  DType t = cg_expr_type(c, e);
  if (e->kind == PE_INT)
    return (CVal){LLVMConstInt(cg_lty(c, t), (unsigned long long)norm(t, e->u.i), 0), t};
  double v = e->u.f;
  if (t == DT_FLOAT32) v = (double)(float)v;
  if (t == DT_FLOAT16) v = c->host->h2d(c->host->d2h(v));
  if (t == DT_BFLOAT16) v = bf16_to_float(double_to_bf16(v));
  return (CVal){fconst(c, t, v), t};
}

static CVal c_var(Cg *c, const PrimExpr *e) {
  const VarB *v = cg_find_var(c, e->u.var);
  if (!v) return cg_fail(c, "@%s: %%%s is not in scope", c->f->name, e->u.var->name), NONE;
  return (CVal){v->v, v->dt};
}

static CVal c_load(Cg *c, const PrimExpr *e) {
  LLVMValueRef p = cg_access(c, cg_site(c, e), e->u.load.buf, e->u.load.n, e->u.load.idx);
  if (!p) return NONE;
  const BufB *b = cg_find_buf(c, e->u.load.buf);
  return (CVal){cg_load_elem(c, p, b->b->dtype), b->b->dtype};
}

static CVal c_cmp(Cg *c, PrimBinOp op, CVal a, CVal b) {
  static const LLVMIntPredicate sp[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT,
                                        LLVMIntSGE, LLVMIntEQ,  LLVMIntNE};
  static const LLVMIntPredicate up[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT,
                                        LLVMIntUGE, LLVMIntEQ,  LLVMIntNE};
  static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                         LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
  int k = (int)op - (int)PB_LT;
  LLVMValueRef v = cg_is_float(a.dt)    ? LLVMBuildFCmp(c->B, fp[k], a.v, b.v, "")
                   : cg_is_signed(a.dt) ? LLVMBuildICmp(c->B, sp[k], a.v, b.v, "")
                                        : LLVMBuildICmp(c->B, up[k], a.v, b.v, "");
  return (CVal){v, DT_BOOL};
}

/* The instruction of each arithmetic operator, on floats and on integers
 * (integer / and %: idivmod). */
typedef LLVMValueRef (*BuildBin)(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *n);
static const BuildBin float_arith[] = {[PB_ADD] = LLVMBuildFAdd,
                                       [PB_SUB] = LLVMBuildFSub,
                                       [PB_MUL] = LLVMBuildFMul,
                                       [PB_DIV] = LLVMBuildFDiv,
                                       [PB_MOD] = LLVMBuildFRem};
static const BuildBin int_arith[] = {
    [PB_ADD] = LLVMBuildAdd, [PB_SUB] = LLVMBuildSub, [PB_MUL] = LLVMBuildMul};

/* float16 arithmetic: in float, which holds both operands exactly and is
 * wide enough (24 >= 2 * 11 + 2 bits) that rounding its result to half
 * gives the correctly rounded result, as the double the interpreter uses. */
static CVal c_harith(Cg *c, PrimBinOp op, CVal a, CVal b) {
  LLVMValueRef x = LLVMBuildFPTrunc(c->B, a.v, c->f32, "");
  LLVMValueRef y = LLVMBuildFPTrunc(c->B, b.v, c->f32, "");
  return (CVal){round_float_to_half(c, float_arith[op](c->B, x, y, "")), DT_FLOAT16};
}

static CVal c_farith(Cg *c, PrimBinOp op, CVal a, CVal b) {
  if (op > PB_MOD) abort();
  if (a.dt == DT_FLOAT16 && native_half()) return c_harith(c, op, a, b);
  LLVMValueRef v = float_arith[op](c->B, a.v, b.v, "");
  if (op != PB_DIV && op != PB_MOD) contract(c, v, a.dt);
  if (a.dt == DT_FLOAT16) v = cg_round_half(c, v);
  if (a.dt == DT_BFLOAT16) v = round_float_to_bf16(c, v);
  return (CVal){v, a.dt};
}

/* Integer / and %: a zero divisor is an error; x / -1 wraps (no UB). */
static LLVMValueRef idivmod(Cg *c, const PrimExpr *e, PrimBinOp op, LLVMValueRef x, LLVMValueRef y,
                            bool is_signed) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0);
  if (!(e->u.bin.b->kind == PE_INT && e->u.bin.b->u.i != 0))
    cg_check(c, LLVMBuildICmp(c->B, LLVMIntEQ, y, zero, ""), JIT_E_DIV0, cg_site(c, e), NULL, NULL,
             NULL);
  if (!is_signed)
    return op == PB_DIV ? LLVMBuildUDiv(c->B, x, y, "") : LLVMBuildURem(c->B, x, y, "");
  LLVMValueRef m1 = LLVMBuildICmp(c->B, LLVMIntEQ, y, LLVMConstAllOnes(t), "");
  LLVMValueRef ys = LLVMBuildSelect(c->B, m1, LLVMConstInt(t, 1, 0), y, "");
  if (op == PB_DIV)
    return LLVMBuildSelect(c->B, m1, LLVMBuildSub(c->B, zero, x, ""),
                           LLVMBuildSDiv(c->B, x, ys, ""), "");
  return LLVMBuildSelect(c->B, m1, zero, LLVMBuildSRem(c->B, x, ys, ""), "");
}

static CVal c_iarith(Cg *c, const PrimExpr *e, PrimBinOp op, CVal a, CVal b) {
  DType t = a.dt;
  bool is_bool = t == DT_BOOL;
  if (is_bool) a = cg_convert(c, a, DT_INT64), b = cg_convert(c, b, DT_INT64);
  LLVMValueRef v = op <= PB_MUL ? int_arith[op](c->B, a.v, b.v, "")
                                : idivmod(c, e, op, a.v, b.v, cg_is_signed(t));
  if (op <= PB_MUL && !is_bool && cg_range(c, e).ok) LLVMSetNSW(v, 1);
  if (is_bool) v = LLVMBuildICmp(c->B, LLVMIntNE, v, LLVMConstInt(c->i64, 0, 0), "");
  return (CVal){v, t};
}

/* `a && b`, `a || b`: b only when needed (unless it cannot fail). */
static CVal c_logic(Cg *c, const PrimExpr *e) {
  bool is_and = e->u.bin.op == PB_AND;
  CVal a = cg_convert(c, cg_expr(c, e->u.bin.a), DT_BOOL);
  if (!a.v) return NONE;
  if (cg_can_speculate(c, e->u.bin.b)) {
    CVal b = cg_convert(c, cg_expr(c, e->u.bin.b), DT_BOOL);
    if (!b.v) return NONE;
    return (CVal){is_and ? LLVMBuildAnd(c->B, a.v, b.v, "") : LLVMBuildOr(c->B, a.v, b.v, ""),
                  DT_BOOL};
  }
  LLVMBasicBlockRef from = LLVMGetInsertBlock(c->B);
  LLVMBasicBlockRef rhs = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "rhs");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "join");
  LLVMBuildCondBr(c->B, a.v, is_and ? rhs : join, is_and ? join : rhs);
  LLVMPositionBuilderAtEnd(c->B, rhs);
  CVal b = cg_convert(c, cg_expr(c, e->u.bin.b), DT_BOOL);
  if (!b.v) return NONE;
  LLVMBasicBlockRef rhs_end = LLVMGetInsertBlock(c->B);
  LLVMBuildBr(c->B, join);
  LLVMPositionBuilderAtEnd(c->B, join);
  LLVMValueRef phi = LLVMBuildPhi(c->B, c->i1, "");
  LLVMValueRef vals[] = {LLVMConstInt(c->i1, is_and ? 0 : 1, 0), b.v};
  LLVMBasicBlockRef bbs[] = {from, rhs_end};
  LLVMAddIncoming(phi, vals, bbs, 2);
  return (CVal){phi, DT_BOOL};
}

static CVal c_bin(Cg *c, const PrimExpr *e) {
  PrimBinOp op = e->u.bin.op;
  if (op == PB_AND || op == PB_OR) return c_logic(c, e);
  CVal a = cg_expr(c, e->u.bin.a);
  CVal b = a.v ? cg_expr(c, e->u.bin.b) : NONE;
  if (!b.v) return NONE;
  DType t = unify_or_fail(c, e, a.dt, b.dt, prim_binop_text(op));
  if (t == DT_INVALID) return NONE;
  a = cg_convert(c, a, t), b = cg_convert(c, b, t);
  if (op >= PB_LT) return c_cmp(c, op, a, b);
  return cg_is_float(t) ? c_farith(c, op, a, b) : c_iarith(c, e, op, a, b);
}

static CVal c_unary(Cg *c, const PrimExpr *e) {
  CVal a = cg_expr(c, e->u.operand);
  if (!a.v) return NONE;
  if (e->kind == PE_NEG) {
    if (cg_is_float(a.dt)) return (CVal){LLVMBuildFNeg(c->B, a.v, ""), a.dt};
    return (CVal){LLVMBuildSub(c->B, LLVMConstInt(LLVMTypeOf(a.v), 0, 0), a.v, ""), a.dt};
  }
  LLVMValueRef v = a.v; /* !x: x's bits are zero (for floats: +0.0 only, as the interpreter) */
  if (cg_is_float(a.dt)) {
    LLVMTypeRef it = LLVMTypeOf(v) == c->f32 ? c->i32 : c->i64;
    v = LLVMBuildBitCast(c->B, v, it, "");
  }
  return (CVal){LLVMBuildICmp(c->B, LLVMIntEQ, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), ""), DT_BOOL};
}

/* ─────────────────────────── intrinsics ─────────────────────────── */

/* max/min: NaN-propagating for floats, first operand on ties (as the interpreter). */
static LLVMValueRef minmax(Cg *c, bool is_max, CVal x, CVal y) {
  LLVMValueRef take_x;
  if (cg_is_float(x.dt)) {
    LLVMValueRef nan = LLVMBuildFCmp(c->B, LLVMRealUNO, x.v, x.v, "");
    LLVMValueRef cmp = LLVMBuildFCmp(c->B, is_max ? LLVMRealOGT : LLVMRealOLT, x.v, y.v, "");
    take_x = LLVMBuildOr(c->B, nan, cmp, "");
  } else {
    bool s = cg_is_signed(x.dt);
    LLVMIntPredicate p = is_max ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT);
    take_x = LLVMBuildICmp(c->B, p, x.v, y.v, "");
  }
  return LLVMBuildSelect(c->B, take_x, x.v, y.v, "");
}

static LLVMValueRef absval(Cg *c, CVal x) {
  if (cg_is_float(x.dt)) {
    LLVMTypeRef t = LLVMTypeOf(x.v);
    return cg_intrinsic(c, "llvm.fabs", &t, 1, &x.v, 1);
  }
  if (!cg_is_signed(x.dt)) return x.v;
  LLVMValueRef zero = LLVMConstInt(LLVMTypeOf(x.v), 0, 0);
  LLVMValueRef neg = LLVMBuildICmp(c->B, LLVMIntSLT, x.v, zero, "");
  return LLVMBuildSelect(c->B, neg, LLVMBuildSub(c->B, zero, x.v, ""), x.v, "");
}

/* The libm function of a one-argument float intrinsic computed by a call
 * (the TIR interpreter calls the same functions), or NULL (PRIM_FLOAT_FNS). */
static const char *libm_name(PrimIntrinsic fn, bool d) {
  switch (fn) {
#define X(NAME, f, llvm, mvec) \
  case PI_##NAME:              \
    return llvm ? NULL : d ? #f : #f "f";
    PRIM_FLOAT_FNS(X)
#undef X
    default:
      return NULL;
  }
}

/* The LLVM intrinsic computing a float intrinsic exactly (as the TIR
 * interpreter's libm call does), or NULL (PRIM_FLOAT_FNS). */
static const char *llvm_name(PrimIntrinsic fn) {
  switch (fn) {
#define X(NAME, f, llvm, mvec) \
  case PI_##NAME:              \
    return llvm ? llvm : NULL;
    PRIM_FLOAT_FNS(X)
#undef X
    default:
      return NULL;
  }
}

/* The one-argument float intrinsics LLVM computes itself, and sigmoid as
 * 1 / (1 + exp(-v)). */
static LLVMValueRef math1_inline(Cg *c, PrimIntrinsic fn, LLVMTypeRef t, LLVMValueRef v, bool d) {
  const char *llvm = llvm_name(fn);
  if (llvm) return cg_intrinsic(c, llvm, &t, 1, &v, 1);
  if (fn != PI_SIGMOID) abort();
  LLVMValueRef n = LLVMBuildFNeg(c->B, v, "");
  LLVMValueRef ex = libm(c, d ? "exp" : "expf", t, &n, 1);
  LLVMValueRef one = LLVMConstReal(t, 1.0);
  return LLVMBuildFDiv(c->B, one, LLVMBuildFAdd(c->B, one, ex, ""), "");
}

/* One-argument float functions: in float for float32 and float16 (then
 * rounded to half), in double for float64. */
static LLVMValueRef math1(Cg *c, PrimIntrinsic fn, CVal x) {
  bool d = x.dt == DT_FLOAT64;
  LLVMTypeRef t = d ? c->f64 : c->f32;
  LLVMValueRef v = x.dt == DT_FLOAT16 ? LLVMBuildFPTrunc(c->B, x.v, c->f32, "") : x.v;
  const char *lib = libm_name(fn, d);
  LLVMValueRef r = lib ? libm(c, lib, t, &v, 1) : math1_inline(c, fn, t, v, d);
  if (x.dt == DT_FLOAT16) r = round_float_to_half(c, r);
  if (x.dt == DT_BFLOAT16) r = round_float_to_bf16(c, r);
  return r;
}

static LLVMValueRef powv(Cg *c, CVal x, CVal y) {
  if (x.dt == DT_FLOAT64) {
    LLVMValueRef a[] = {x.v, y.v};
    return libm(c, "pow", c->f64, a, 2);
  }
  LLVMValueRef a[] = {x.v, y.v};
  if (x.dt == DT_FLOAT16)
    a[0] = LLVMBuildFPTrunc(c->B, x.v, c->f32, ""), a[1] = LLVMBuildFPTrunc(c->B, y.v, c->f32, "");
  LLVMValueRef r = libm(c, "powf", c->f32, a, 2);
  if (x.dt == DT_BFLOAT16) return round_float_to_bf16(c, r);
  return x.dt == DT_FLOAT16 ? round_float_to_half(c, r) : r;
}

/* The bitwise intrinsics on integers (bool: i1).  A shift count outside
 * [0, bits) gives 0, or the sign fill for a signed shift_right, as in the
 * TIR interpreter; the count is masked so LLVM never sees an oversized one. */
static LLVMValueRef bits(Cg *c, PrimIntrinsic fn, CVal x, CVal y) {
  switch (fn) {
    case PI_BITAND:
      return LLVMBuildAnd(c->B, x.v, y.v, "");
    case PI_BITOR:
      return LLVMBuildOr(c->B, x.v, y.v, "");
    case PI_BITXOR:
      return LLVMBuildXor(c->B, x.v, y.v, "");
    case PI_BITNOT:
      return LLVMBuildNot(c->B, x.v, "");
    default:
      break;
  }
  LLVMTypeRef t = LLVMTypeOf(x.v);
  unsigned w = LLVMGetIntTypeWidth(t);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0), top = LLVMConstInt(t, w - 1, 0);
  LLVMValueRef in = LLVMBuildICmp(c->B, LLVMIntULT, y.v, LLVMConstInt(t, w, 0), "");
  if (fn == PI_SHR && cg_is_signed(x.dt))
    return LLVMBuildAShr(c->B, x.v, LLVMBuildSelect(c->B, in, y.v, top, ""), "");
  LLVMValueRef s = LLVMBuildAnd(c->B, y.v, top, "");
  LLVMValueRef r = fn == PI_SHL ? LLVMBuildShl(c->B, x.v, s, "") : LLVMBuildLShr(c->B, x.v, s, "");
  return LLVMBuildSelect(c->B, in, r, zero, "");
}

/* Whether t suits intrinsic fn's operand kind (ir/tir.h). */
static bool operand_ok(PrimIntrinsic fn, DType t) {
  switch (prim_intrinsic_kind(fn)) {
    case 'f':
      return cg_is_float(t);
    case 'i':
      return cg_is_int(t) || t == DT_BOOL;
    case 'n':
      return cg_is_int(t);
    default:
      return true;
  }
}

/* select: a select instruction when both sides can be speculated (it
 * vectorizes), otherwise branches, so only the chosen side can fail. */
static CVal c_select(Cg *c, const PrimExpr *e, DType t) {
  PrimExpr *const *args = e->u.call.args;
  CVal cond = cg_convert(c, cg_expr(c, args[0]), DT_BOOL);
  if (!cond.v) return NONE;
  if (cg_can_speculate(c, args[1]) && cg_can_speculate(c, args[2])) {
    CVal a = cg_convert(c, cg_expr(c, args[1]), t);
    CVal b = a.v ? cg_convert(c, cg_expr(c, args[2]), t) : NONE;
    if (!b.v) return NONE;
    return (CVal){LLVMBuildSelect(c->B, cond.v, a.v, b.v, ""), t};
  }
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "sel.t");
  LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "sel.f");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "sel.join");
  LLVMBuildCondBr(c->B, cond.v, tb, fb);
  LLVMValueRef vals[2];
  LLVMBasicBlockRef ends[2];
  for (int i = 0; i < 2; i++) {
    LLVMPositionBuilderAtEnd(c->B, i ? fb : tb);
    CVal v = cg_convert(c, cg_expr(c, args[1 + i]), t);
    if (!v.v) return NONE;
    vals[i] = v.v, ends[i] = LLVMGetInsertBlock(c->B);
    LLVMBuildBr(c->B, join);
  }
  LLVMPositionBuilderAtEnd(c->B, join);
  LLVMValueRef phi = LLVMBuildPhi(c->B, cg_lty(c, t), "");
  LLVMAddIncoming(phi, vals, ends, 2);
  return (CVal){phi, t};
}

/* dot_u8i8x4 on three int32 scalars (codegen_dot.c). */
static CVal c_dot4(Cg *c, const PrimExpr *e) {
  LLVMValueRef v[3];
  for (int i = 0; i < 3; i++) {
    CVal x = cg_expr(c, e->u.call.args[i]);
    if (!x.v) return NONE;
    if (x.dt != DT_INT32)
      return cg_fail(c, "@%s: dot_u8i8x4 of operands other than int32", c->f->name), NONE;
    v[i] = x.v;
  }
  return (CVal){cg_dot4(c, v[0], v[1], v[2], 1), DT_INT32};
}

/* An intrinsic call; operand types unify as in the interpreter, and only
 * max, min and abs (and select) accept integers. */
static CVal c_call(Cg *c, const PrimExpr *e) {
  PrimIntrinsic fn = e->u.call.fn;
  int n = e->u.call.n;
  if (n != prim_intrinsic_arity(fn))
    return cg_fail(c, "@%s: wrong number of intrinsic arguments", c->f->name), NONE;
  int first = fn == PI_SELECT ? 1 : 0;
  DType t = cg_expr_type(c, e->u.call.args[first]);
  if (n - first == 2)
    t = unify_or_fail(c, e, t, cg_expr_type(c, e->u.call.args[first + 1]), "an intrinsic");
  if (t == DT_INVALID) return cg_fail(c, "@%s: bad intrinsic operands", c->f->name), NONE;
  if (fn == PI_SELECT) return c_select(c, e, t);
  if (fn == PI_DOT4) return c_dot4(c, e);
  if (!operand_ok(fn, t))
    return cg_fail(c, "@%s: an intrinsic got an operand of the wrong kind", c->f->name), NONE;
  CVal a = cg_convert(c, cg_expr(c, e->u.call.args[0]), t);
  CVal b = n == 2 && a.v ? cg_convert(c, cg_expr(c, e->u.call.args[1]), t) : a;
  if (!a.v || !b.v) return NONE;
  switch (fn) {
    case PI_MAX:
    case PI_MIN:
      return (CVal){minmax(c, fn == PI_MAX, a, b), t};
    case PI_ABS:
      return (CVal){absval(c, a), t};
    case PI_POW:
      return (CVal){powv(c, a, b), t};
    case PI_BITAND:
    case PI_BITOR:
    case PI_BITXOR:
    case PI_BITNOT:
    case PI_SHL:
    case PI_SHR:
      return (CVal){bits(c, fn, a, b), t};
    default:
      return (CVal){math1(c, fn, a), t};
  }
}

CVal cg_expr(Cg *c, const PrimExpr *e) {
  if (c->failed) return NONE;
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
      return e->u.cast.bits ? c_bitcast(c, e)
                            : cg_convert(c, cg_expr(c, e->u.cast.value), e->u.cast.to);
  }
  return NONE;
}
