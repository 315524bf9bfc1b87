/* elemwise_table.h — the elementwise ops, one row each: every list and
 * switch keyed by one of them is expanded from these rows, so adding an op
 * is adding a row (plus its gradient rule when it needs a new one, and its
 * tests).  They expand into: the registry rows (ops/elemwise.c), the
 * compute rules and their {op name, rule} rows
 * (lower/compute/compute_elemwise.c), the reference kernels, their table
 * and the scalar fast path's codes (kernels/kernels_elemwise.c,
 * kernels/scalar_ops.h) and the gradient rows (ad/grad_rules.c).  An op
 * computed by a TIR float intrinsic names it (PRIM_FLOAT_FNS, ir/tir.h):
 * its libm function there is what the kernel, the TIR interpreter and the
 * JIT all call.
 *
 * ELEMWISE_BINARY(X): X(name, CODE, row, kernel, cost, grad, doc)
 *   name    the registry name (an identifier: compute_<name>, the string #name)
 *   CODE    the op's code in the kernels and compute rules (B_<CODE>), whose
 *           switches hold its semantics per lane
 *   row     its registry row: ARITH (one dtype, broadcast), COMPARE (a bool
 *           result), BITWISE (integers or bool), SHIFT (integers)
 *   kernel  BIN: the lane switches of the binary kernel compute it (and the
 *           scalar fast path); OWN: its own kernel, k_<name>
 *   cost    what :time counts (OPCOST_<cost>)
 *   grad    its gradient rule, grad_<grad> (ad/grad_rules.c; zero: none
 *           needed, the result is constant almost everywhere in the float
 *           operands, or there are none)
 *   doc     the one line of :help
 *
 * ELEMWISE_UNARY(X): X(name, CODE, row, kind, fn, sem, cost, grad, doc)
 *   row     UNARY (x's type), PREDICATE (bool), BITNOT (integers or bool)
 *   kind    'a' any dtype, 'f' float math (integers compute in float64),
 *           'p' a predicate (bool result)
 *   fn      the TIR float intrinsic computing it (PI_<fn>), or NONE
 *   sem     LIBM: the kernel computes fn's libm function (tir_float_<fn>,
 *           ir/tir_rules.h); OWN: a case of its own in the kernel's and the
 *           compute rule's switches
 *
 * Order: the registry lists the ARITH and COMPARE rows, the UNARY and
 * PREDICATE rows, then the BITWISE and SHIFT rows and BITNOT. */
#ifndef RLY_OPS_ELEMWISE_TABLE_H
#define RLY_OPS_ELEMWISE_TABLE_H

// clang-format off
#define ELEMWISE_BINARY(X)                                                                       \
  X(add, ADD, ARITH, BIN, ELEMWISE, add, "x + y with numpy broadcasting")                        \
  X(subtract, SUB, ARITH, BIN, ELEMWISE, subtract, "x - y with numpy broadcasting")              \
  X(multiply, MUL, ARITH, BIN, ELEMWISE, multiply, "x * y with numpy broadcasting")              \
  X(divide, DIV, ARITH, BIN, ELEMWISE, divide, "x / y with numpy broadcasting")                  \
  X(floor_divide, FLOORDIV, ARITH, BIN, ELEMWISE, zero, "floor(x / y) with numpy broadcasting")  \
  X(mod, MOD, ARITH, BIN, NONE, mod, "remainder of x / y (sign of x), broadcasting")             \
  X(power, POW, ARITH, BIN, ELEMWISE, power, "x raised to y, broadcasting")                      \
  X(maximum, MAX, ARITH, BIN, ELEMWISE, maximum, "elementwise max(x, y), broadcasting")          \
  X(minimum, MIN, ARITH, BIN, ELEMWISE, minimum, "elementwise min(x, y), broadcasting")          \
  X(logical_and, LAND, ARITH, BIN, NONE, zero, "x and y (bool tensors), broadcasting")           \
  X(logical_or, LOR, ARITH, BIN, NONE, zero, "x or y (bool tensors), broadcasting")              \
  X(logical_xor, LXOR, ARITH, BIN, NONE, zero, "x xor y (bool tensors), broadcasting")           \
  X(floor_mod, FLOORMOD, ARITH, BIN, NONE, floor_mod,                                            \
    "remainder of x / y (sign of y), broadcasting")                                              \
  X(trunc_divide, TDIV, ARITH, OWN, ELEMWISE, zero, "x / y rounded toward 0, broadcasting")      \
  X(trunc_mod, TMOD, ARITH, OWN, NONE, mod, "remainder of x / y (sign of x), broadcasting")       \
  X(equal, EQ, COMPARE, BIN, NONE, zero, "x == y as a bool tensor, broadcasting")                \
  X(not_equal, NE, COMPARE, BIN, NONE, zero, "x != y as a bool tensor, broadcasting")            \
  X(less, LT, COMPARE, BIN, NONE, zero, "x < y as a bool tensor, broadcasting")                  \
  X(less_equal, LE, COMPARE, BIN, NONE, zero, "x <= y as a bool tensor, broadcasting")           \
  X(greater, GT, COMPARE, BIN, NONE, zero, "x > y as a bool tensor, broadcasting")               \
  X(greater_equal, GE, COMPARE, BIN, NONE, zero, "x >= y as a bool tensor, broadcasting")        \
  X(bitwise_and, BAND, BITWISE, BIN, NONE, zero, "x & y (integers or bool), broadcasting")       \
  X(bitwise_or, BOR, BITWISE, BIN, NONE, zero, "x | y (integers or bool), broadcasting")         \
  X(bitwise_xor, BXOR, BITWISE, BIN, NONE, zero, "x ^ y (integers or bool), broadcasting")       \
  X(left_shift, SHL, SHIFT, BIN, NONE, zero,                                                     \
    "x << y on integers, broadcasting (counts past the width give 0)")                           \
  X(right_shift, SHR, SHIFT, BIN, NONE, zero,                                                    \
    "x >> y on integers, broadcasting (arithmetic for signed x)")

#define ELEMWISE_UNARY(X)                                                                        \
  X(negative, NEG, UNARY, 'a', NONE, OWN, ELEMWISE, negative, "-x elementwise")                  \
  X(abs, ABS, UNARY, 'a', NONE, OWN, ELEMWISE, abs, "|x| elementwise")                           \
  X(exp, EXP, UNARY, 'f', EXP, LIBM, ELEMWISE, exp, "e^x elementwise")                           \
  X(log, LOG, UNARY, 'f', LOG, LIBM, ELEMWISE, log, "natural logarithm elementwise")             \
  X(sqrt, SQRT, UNARY, 'f', SQRT, LIBM, ELEMWISE, sqrt, "square root elementwise")               \
  X(rsqrt, RSQRT, UNARY, 'f', NONE, OWN, ELEMWISE, rsqrt, "1 / sqrt(x) elementwise")             \
  X(tanh, TANH, UNARY, 'f', TANH, LIBM, ELEMWISE, tanh, "hyperbolic tangent elementwise")        \
  X(sigmoid, SIGMOID, UNARY, 'f', SIGMOID, OWN, ELEMWISE, sigmoid, "1 / (1 + e^-x) elementwise") \
  X(erf, ERF, UNARY, 'f', ERF, LIBM, ELEMWISE, erf, "Gauss error function elementwise")          \
  X(floor, FLOOR, UNARY, 'a', NONE, OWN, ELEMWISE, zero, "round toward -inf elementwise")        \
  X(ceil, CEIL, UNARY, 'a', NONE, OWN, ELEMWISE, zero, "round toward +inf elementwise")          \
  X(round, ROUND, UNARY, 'a', NONE, OWN, ELEMWISE, zero,                                         \
    "round to the nearest integer (ties to even) elementwise")                                   \
  X(sign, SIGN, UNARY, 'a', NONE, OWN, NONE, zero, "-1, 0 or 1 by the sign of x")                \
  X(logical_not, LNOT, UNARY, 'a', NONE, OWN, NONE, zero, "not x (bool tensor)")                 \
  X(trunc, TRUNC, UNARY, 'a', NONE, OWN, ELEMWISE, zero, "round toward 0 elementwise")           \
  X(copy, COPY, UNARY, 'a', NONE, OWN, NONE, copy, "a copy of x")                                \
  X(log2, LOG2, UNARY, 'f', LOG2, LIBM, ELEMWISE, log2, "base-2 logarithm elementwise")          \
  X(log10, LOG10, UNARY, 'f', LOG10, LIBM, ELEMWISE, log10, "base-10 logarithm elementwise")     \
  X(sin, SIN, UNARY, 'f', SIN, LIBM, ELEMWISE, sin, "sine elementwise")                          \
  X(cos, COS, UNARY, 'f', COS, LIBM, ELEMWISE, cos, "cosine elementwise")                        \
  X(tan, TAN, UNARY, 'f', TAN, LIBM, ELEMWISE, tan, "tangent elementwise")                       \
  X(asin, ASIN, UNARY, 'f', ASIN, LIBM, ELEMWISE, asin, "arcsine elementwise")                   \
  X(acos, ACOS, UNARY, 'f', ACOS, LIBM, ELEMWISE, acos, "arccosine elementwise")                 \
  X(atan, ATAN, UNARY, 'f', ATAN, LIBM, ELEMWISE, atan, "arctangent elementwise")                \
  X(sinh, SINH, UNARY, 'f', SINH, LIBM, ELEMWISE, sinh, "hyperbolic sine elementwise")           \
  X(cosh, COSH, UNARY, 'f', COSH, LIBM, ELEMWISE, cosh, "hyperbolic cosine elementwise")         \
  X(asinh, ASINH, UNARY, 'f', ASINH, LIBM, ELEMWISE, asinh, "inverse hyperbolic sine")           \
  X(acosh, ACOSH, UNARY, 'f', ACOSH, LIBM, ELEMWISE, acosh, "inverse hyperbolic cosine")         \
  X(atanh, ATANH, UNARY, 'f', ATANH, LIBM, ELEMWISE, atanh, "inverse hyperbolic tangent")        \
  X(fast_exp, FEXP, UNARY, 'f', NONE, OWN, ELEMWISE, fast_exp,                                   \
    "e^x by TVM's float32 approximation (ops/fast_math.h)")                                      \
  X(fast_tanh, FTANH, UNARY, 'f', NONE, OWN, ELEMWISE, fast_tanh,                                \
    "tanh by TVM's float32 approximation")                                                       \
  X(fast_erf, FERF, UNARY, 'f', NONE, OWN, ELEMWISE, fast_erf,                                   \
    "erf by TVM's float32 approximation")                                                        \
  X(isnan, ISNAN, PREDICATE, 'p', NONE, OWN, NONE, zero, "whether x is NaN, as a bool tensor")   \
  X(isinf, ISINF, PREDICATE, 'p', NONE, OWN, NONE, zero, "whether x is +-inf, as a bool tensor") \
  X(isfinite, ISFINITE, PREDICATE, 'p', NONE, OWN, NONE, zero,                                   \
    "whether x is finite, as a bool tensor")                                                     \
  X(bitwise_not, BNOT, BITNOT, 'a', NONE, OWN, NONE, zero, "~x (integers; not x for bool)")
// clang-format on

/* Selectors on a column's value, for expansions that keep some rows:
 * EW_<column>_<value>(...) expands to its arguments when the row has that
 * value, else to nothing (e.g. EW_KERNEL_##kernel(B_##CODE,)). */
#define EW_KEEP(...) __VA_ARGS__
#define EW_DROP(...)
#define EW_KERNEL_BIN EW_KEEP
#define EW_KERNEL_OWN EW_DROP
#define EW_NOT_KERNEL_BIN EW_DROP
#define EW_NOT_KERNEL_OWN EW_KEEP
#define EW_SEM_LIBM EW_KEEP
#define EW_SEM_OWN EW_DROP
/* Whether a binary row's result is bool (a comparison). */
#define EW_IS_COMPARE_ARITH 0
#define EW_IS_COMPARE_COMPARE 1
#define EW_IS_COMPARE_BITWISE 0
#define EW_IS_COMPARE_SHIFT 0

#endif
