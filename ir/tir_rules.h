/* tir_rules.h — the typing and conversion rules of TIR scalar expressions,
 * written once for the three places that must agree on them: the verifier
 * (types/tir_verify.c), the reference interpreter (rt/tir_interp.c) and
 * the JIT (jit/codegen_expr.c, which tests/unit/test_jit.c compares with
 * the interpreter).  Each of them implements every rule (a value computed,
 * an LLVM instruction emitted), but which rule applies is decided here.
 * All inline: the JIT's code generator module links nothing of librly.
 * Also the libm function computing each float intrinsic. */
#ifndef RLY_TIR_RULES_H
#define RLY_TIR_RULES_H

#include <math.h>

#include "ir/tir.h"

/* The libm function of each float intrinsic (PRIM_FLOAT_FNS), by name:
 * tir_float_EXP is expf, tir_double_EXP exp.  The TIR interpreter calls
 * them, and so do the reference kernels of the elementwise ops computed by
 * an intrinsic (ops/elemwise_table.h), so both compute the same bits. */
#define X(NAME, fn, llvm, mvec)                                      \
  static inline float tir_float_##NAME(float x) { return fn##f(x); } \
  static inline double tir_double_##NAME(double x) { return fn(x); }
PRIM_FLOAT_FNS(X)
#undef X

/* The dtype of a literal: an integer literal's own when it is an integer
 * or bool, else int32; a float literal's own when it is a float, else
 * float32. */
static inline DType tir_literal_dtype(const PrimExpr *e) {
  if (e->kind == PE_INT) return dtype_is_int(e->dtype) || e->dtype == DT_BOOL ? e->dtype : DT_INT32;
  return dtype_is_float(e->dtype) ? e->dtype : DT_FLOAT32;
}

/* The one dtype two operands (of a binary operator, of a two-operand
 * intrinsic, of select's branches) are evaluated in: their dtype when they
 * agree; two integers of different widths mix, in the wider (the left one
 * when both have the same size).  DT_INVALID when they do not mix. */
static inline DType tir_unify(DType a, DType b) {
  if (a == b) return a;
  if (dtype_is_int(a) && dtype_is_int(b)) return dtype_bytes(a) >= dtype_bytes(b) ? a : b;
  return DT_INVALID;
}

static inline bool tir_binop_is_logic(PrimBinOp op) { return op == PB_AND || op == PB_OR; }
static inline bool tir_binop_is_compare(PrimBinOp op) { return op >= PB_LT && op <= PB_NE; }

/* The dtype operator op converts its operands to: bool for && and ||,
 * else their unified dtype. */
static inline DType tir_binop_operand_dtype(PrimBinOp op, DType a, DType b) {
  return tir_binop_is_logic(op) ? DT_BOOL : tir_unify(a, b);
}

/* The dtype of op's result over operands of dtype t: bool for comparisons
 * and logic, else t. */
static inline DType tir_binop_result_dtype(PrimBinOp op, DType t) {
  return tir_binop_is_logic(op) || tir_binop_is_compare(op) ? DT_BOOL : t;
}

/* How a value of one dtype becomes a value of another: a cast, and every
 * implicit conversion (operands to their operator's dtype, a stored value
 * to its buffer's, a binding to its variable's). */
typedef enum TirConv {
  CONV_SAME,         /* the same dtype: unchanged */
  CONV_INT_RESIZE,   /* integer or bool → integer: wraps to the target's width
                        (two's complement), extending by the source's signedness */
  CONV_INT_BOOL,     /* integer → bool: != 0 */
  CONV_FLOAT_BOOL,   /* float → bool: != 0, NaN is false */
  CONV_FLOAT_INT,    /* float → integer: toward zero, saturating at the target's
                        bounds, NaN is 0 */
  CONV_INT_FLOAT,    /* integer or bool → float: rounded once to the target
                        (int64 → float32 directly, not through float64);
                        unsigned and bool sources read as unsigned */
  CONV_FLOAT_RESIZE, /* float → float: rounded once to the target */
} TirConv;

/* Whether reinterpret[to](e) applies to an e of dtype from: the bits of
 * one number read as another of the same size; bool has no bit pattern of
 * its own, so it takes no part. */
static inline bool tir_bitcast_ok(DType from, DType to) {
  return from != DT_BOOL && to != DT_BOOL && dtype_bytes(from) == dtype_bytes(to);
}

static inline TirConv tir_conv(DType from, DType to) {
  bool ff = dtype_is_float(from), tf = dtype_is_float(to);
  if (from == to) return CONV_SAME;
  if (ff && tf) return CONV_FLOAT_RESIZE;
  if (tf) return CONV_INT_FLOAT;
  if (to == DT_BOOL) return ff ? CONV_FLOAT_BOOL : CONV_INT_BOOL;
  return ff ? CONV_FLOAT_INT : CONV_INT_RESIZE;
}

#endif
