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

#include "interp/kernels.h"

/* The index of a binary (add, less, ...) or unary (negative, exp, ...)
 * elementwise op by registry name, or -1. */
int scalar_binop(const char *op);
int scalar_unop(const char *op);
/* One element of binary op `op` on dtype dt into dtype odt (the op's result
 * dtype: dt, or bool for comparisons).  False with kx->err set on an error
 * (integer division by zero, ...). */
bool scalar_binary(KernelCtx *kx, int op, DType dt, DType odt, const void *a, const void *b, void *r);
bool scalar_unary(KernelCtx *kx, int op, DType dt, DType odt, const void *x, void *r);
/* `cast` of one element. */
void scalar_cast(DType from, DType to, const void *x, void *r);

#endif
