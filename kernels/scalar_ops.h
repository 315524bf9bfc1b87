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
#include "ops/elemwise_table.h"

/* The binary elementwise ops computed by the binary kernel's lane
 * switches (kernels/kernels_elemwise.c): the ELEMWISE_BINARY rows of kernel
 * BIN, in order; B_<CODE> is also the op's code for scalar_binop. */
typedef enum BinOp {
#define X(name, CODE, row, kernel, cost, grad, doc) EW_KERNEL_##kernel(B_##CODE, )
  ELEMWISE_BINARY(X)
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
