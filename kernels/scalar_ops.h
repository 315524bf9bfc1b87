/* scalar_ops.h — one-element entry points into the elementwise kernels, for
 * the interpreter's scalar fast path (interp/fast.c).
 *
 * They run the very code the tensor kernels run (same compute lanes, same
 * narrowing on store, same error messages in kx->err), so a scalar op gives
 * bit-identical results and diagnostics on both paths.  Operands and the
 * result are single elements stored as their dtype (like tensor data);
 * buffers must be at least 8 bytes and 8-byte aligned. */
#ifndef RLY_SCALAR_OPS_H
#define RLY_SCALAR_OPS_H

#include "kernels/kernels.h"

/* The binary elementwise kernels (kernels/kernels_elemwise.c), also the
 * codes of scalar_binop.  X(enum, registry name, result is bool) */
#define BINARY_OPS(X)              \
  X(B_ADD, "add", 0)               \
  X(B_SUB, "subtract", 0)          \
  X(B_MUL, "multiply", 0)          \
  X(B_DIV, "divide", 0)            \
  X(B_FLOORDIV, "floor_divide", 0) \
  X(B_MOD, "mod", 0)               \
  X(B_FLOORMOD, "floor_mod", 0)    \
  X(B_POW, "power", 0)             \
  X(B_MAX, "maximum", 0)           \
  X(B_MIN, "minimum", 0)           \
  X(B_LAND, "logical_and", 0)      \
  X(B_LOR, "logical_or", 0)        \
  X(B_LXOR, "logical_xor", 0)      \
  X(B_BAND, "bitwise_and", 0)      \
  X(B_BOR, "bitwise_or", 0)        \
  X(B_BXOR, "bitwise_xor", 0)      \
  X(B_SHL, "left_shift", 0)        \
  X(B_SHR, "right_shift", 0)       \
  X(B_EQ, "equal", 1)              \
  X(B_NE, "not_equal", 1)          \
  X(B_LT, "less", 1)               \
  X(B_LE, "less_equal", 1)         \
  X(B_GT, "greater", 1)            \
  X(B_GE, "greater_equal", 1)

typedef enum BinOp {
#define X(e, n, c) e,
  BINARY_OPS(X)
#undef X
} BinOp;

/* The code of the binary (BinOp: add, less, ...) or unary (negative, exp,
 * ...) elementwise op at registry index op (ops/ops.h), or -1. */
int scalar_binop(int op);
int scalar_unop(int op);
/* Whether the op at registry index op is `cast` (its kernel is k_cast). */
bool scalar_is_cast(int op);
/* One element of binary op `op` on dtype dt into dtype odt (the op's result
 * dtype: dt, or bool for comparisons).  False with kx->err set on an error
 * (integer division by zero, ...). */
bool scalar_binary(KernelCtx *kx, int op, DType dt, DType odt, const void *a, const void *b,
                   void *r);
bool scalar_unary(KernelCtx *kx, int op, DType dt, DType odt, const void *x, void *r);
/* `cast` of one element. */
void scalar_cast(DType from, DType to, const void *x, void *r);

#endif
