/* families.h — the per-family op tables that registry.c joins (each table
 * ends with an entry whose name is NULL), and the compute rules their rows
 * name. */
#ifndef RLY_OPS_FAMILIES_H
#define RLY_OPS_FAMILIES_H

#include "ops/ops.h"

#define OP_FAMILIES(X) \
  X(elemwise)          \
  X(reduce)            \
  X(nn)                \
  X(transform)         \
  X(dyn)               \
  X(random)            \
  X(tir_call)

#define X(f) extern const OpDef ops_family_##f[];
OP_FAMILIES(X)
#undef X

/* The TIR compute rules the rows name (OpDef.compute), one per op that
 * lowers, defined in ops/compute_<family>.c. */
/* compute_elemwise.c */
OpComputeFn compute_add, compute_subtract, compute_multiply, compute_divide, compute_mod,
    compute_power, compute_maximum, compute_minimum, compute_logical_and, compute_logical_or,
    compute_equal, compute_not_equal, compute_less, compute_less_equal, compute_greater,
    compute_greater_equal;
OpComputeFn compute_negative, compute_abs, compute_exp, compute_log, compute_sqrt, compute_rsqrt,
    compute_tanh, compute_sigmoid, compute_floor, compute_ceil, compute_sign, compute_logical_not,
    compute_relu, compute_leaky_relu, compute_clip, compute_cast, compute_where, compute_bias_add;
/* compute_nn.c */
OpComputeFn compute_dense, compute_matmul, compute_batch_matmul, compute_softmax,
    compute_log_softmax, compute_conv2d;
/* compute_reduce.c */
OpComputeFn compute_sum, compute_mean, compute_prod, compute_max, compute_min, compute_argmax,
    compute_argmin;
/* compute_transform.c */
OpComputeFn compute_reshape, compute_batch_flatten, compute_expand_dims, compute_squeeze,
    compute_transpose, compute_broadcast_to, compute_strided_slice, compute_take, compute_zeros,
    compute_ones, compute_full, compute_zeros_like, compute_ones_like;

#endif
