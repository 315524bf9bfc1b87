/* compute_qnn_dot.h — qnn.dense as uint8 x int8 dot products
 * (compute_qnn_dot.c), for compute_qnn.c's rule. */
#ifndef RLY_COMPUTE_QNN_DOT_H
#define RLY_COMPUTE_QNN_DOT_H
#include "lower/compute/compute.h"

/* Whether the qnn.dense call (operands in) suits qnn_dense_dot. */
bool qnn_dense_dot_ok(const Expr *call, LTensor **in, int nin);
/* The product (a materialized int32 tensor), or NULL after lc_fail. */
LTensor *qnn_dense_dot(LowerCx *L, const Expr *call, LTensor **in);
/* The int32 word of four bytes (int32 values 0..255), byte 0 lowest. */
PrimExpr *qnn_dot_word(LowerCx *L, PrimExpr *bytes[4]);

/* acc[rows, lanes] = 0: a register tile's accumulators, rows unrolled,
 * lanes vectorized (its loop variables named rname and lname). */
void qnn_dot_zero_acc(LowerCx *L, Buffer *acc, const char *rname, int rows, const char *lname,
                      int lanes);

/* qnn.conv2d the same way (compute_qnn_dot_conv.c). */
bool qnn_conv2d_dot_ok(LowerCx *L, const Expr *call, LTensor **in, int nin);
LTensor *qnn_conv2d_dot(LowerCx *L, const Expr *call, LTensor **in);

#endif
