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
  X(nn_conv)           \
  X(nn_pool)           \
  X(nn_layout)         \
  X(transform)         \
  X(transform_shape)   \
  X(transform_index)   \
  X(algorithm)         \
  X(dyn)               \
  X(image)             \
  X(vision)            \
  X(qnn)               \
  X(random)            \
  X(tir_call)          \
  X(device)            \
  X(vm)

#define X(f) extern const OpDef ops_family_##f[];
OP_FAMILIES(X)
#undef X

/* The gradient rules the rows name (OpDef.grad; ad/grad.h), defined in
 * ad/grad_rules.c: grad_<name> for each name of GRAD_RULES (its backward
 * function bw_<name>), and the rules sharing one of them. */
struct OpGrad;
/* clang-format off */
#define GRAD_RULES(X) \
  X(add) X(subtract) X(multiply) X(divide) X(power) X(maximum) X(minimum) X(where) X(exp) \
  X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(tanh) X(sigmoid) X(abs) X(sin) X(cos) X(tan) \
  X(sinh) X(cosh) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(erf) X(mod) X(floor_mod) X(negative) X(zero) X(full) X(full_like) X(dequantize) X(cast) X(relu) \
  X(leaky_relu) X(clip) X(dense) X(matmul) X(bias_add) X(conv2d) X(softmax) X(log_softmax) \
  X(sum) X(mean) X(reshape) X(transpose) X(take) X(concatenate) X(split) X(cross_entropy) \
  X(cross_entropy_with_logits) X(collapse_sum_like) X(global_avg_pool2d) X(global_max_pool2d) X(layer_norm)
/* clang-format on */
/* Those of ops/grad_rules_<family>.c, defined there the same way. */
/* clang-format off */
#define GRAD_RULES_REDUCE(X) \
  X(prod) X(logsumexp) X(variance) X(std) X(mean_variance) X(cumsum) X(cumprod)
#define GRAD_RULES_NN(X) \
  X(batch_matmul) X(dense_pack) X(prelu) X(instance_norm) X(group_norm) X(batch_norm) \
  X(l2_normalize) X(lrn) X(nll_loss)
#define GRAD_RULES_CONV(X) \
  X(conv1d) X(conv3d) X(conv1d_transpose) X(conv2d_transpose) X(max_pool1d) X(max_pool2d) \
  X(max_pool3d) X(avg_pool1d) X(avg_pool2d) X(avg_pool3d) X(conv2d_nchwc)
#define GRAD_RULES_POOL(X) X(adaptive_max_pool2d) X(adaptive_avg_pool2d)
#define GRAD_RULES_LAYOUT(X) \
  X(pad) X(mirror_pad) X(depth_to_space) X(space_to_depth) X(space_to_batch_nd) \
  X(batch_to_space_nd) X(dilate) X(resize1d) X(resize2d) X(resize3d) X(upsampling) \
  X(upsampling3d) X(affine_grid) X(dyn_pad) X(crop_and_resize)
#define GRAD_RULES_TRANSFORM(X) \
  X(stack) X(strided_slice) X(slice_like) X(layout_transform) X(tile) X(repeat) X(reverse) \
  X(reverse_sequence) X(sequence_mask) X(trilu) X(cast_like) X(meshgrid) X(one_hot) X(gather) \
  X(gather_nd) X(scatter) X(scatter_add) X(scatter_nd) X(adv_index) X(einsum) X(sort) X(topk) \
  X(dyn_strided_slice) X(sparse_to_dense) X(arange) X(unique)
#define GRAD_RULES_VISION(X) \
  X(grid_sample) X(roi_align) X(get_valid_counts) X(non_max_suppression)
/* clang-format on */
#define X(name) extern const struct OpGrad grad_##name;
GRAD_RULES(X)
GRAD_RULES_REDUCE(X)
GRAD_RULES_NN(X)
GRAD_RULES_CONV(X)
GRAD_RULES_POOL(X)
GRAD_RULES_LAYOUT(X)
GRAD_RULES_TRANSFORM(X)
GRAD_RULES_VISION(X)
#undef X
extern const struct OpGrad grad_fast_exp, grad_fast_tanh, grad_fast_erf, grad_fast_softmax,
    grad_max, grad_min, grad_batch_flatten, grad_expand_dims, grad_squeeze, grad_copy,
    grad_reshape_like, grad_broadcast_to, grad_broadcast_to_like, grad_dropout_train, grad_dropout;

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
OpComputeFn compute_logical_xor, compute_floor_mod, compute_floor_divide, compute_trunc_divide,
    compute_trunc_mod, compute_bitwise_and, compute_bitwise_or, compute_bitwise_xor,
    compute_left_shift, compute_right_shift, compute_bitwise_not, compute_trunc, compute_round,
    compute_copy, compute_log2, compute_log10, compute_erf, compute_sin, compute_cos, compute_tan,
    compute_asin, compute_acos, compute_atan, compute_sinh, compute_cosh, compute_asinh,
    compute_acosh, compute_atanh, compute_fast_exp, compute_fast_tanh, compute_fast_erf,
    compute_isnan, compute_isinf, compute_isfinite;
/* compute_nn.c */
OpComputeFn compute_dense, compute_dense_pack, compute_matmul, compute_batch_matmul,
    compute_softmax, compute_log_softmax, compute_conv2d, compute_conv2d_nchwc;
OpComputeFn compute_fast_softmax, compute_prelu;
/* compute_nn_pool.c */
OpComputeFn compute_max_pool1d, compute_avg_pool1d, compute_max_pool2d, compute_avg_pool2d,
    compute_max_pool3d, compute_avg_pool3d, compute_global_max_pool2d, compute_global_avg_pool2d,
    compute_adaptive_max_pool2d, compute_adaptive_avg_pool2d;
/* compute_nn_layout.c */
OpComputeFn compute_pad, compute_mirror_pad, compute_upsampling, compute_upsampling3d,
    compute_depth_to_space, compute_space_to_depth, compute_space_to_batch_nd,
    compute_batch_to_space_nd, compute_dilate;
/* compute_reduce.c */
OpComputeFn compute_sum, compute_mean, compute_prod, compute_max, compute_min, compute_argmax,
    compute_argmin;
OpComputeFn compute_all, compute_any, compute_logsumexp, compute_variance, compute_std,
    compute_layer_norm, compute_instance_norm, compute_group_norm, compute_l2_normalize,
    compute_cumsum, compute_cumprod;
/* compute_transform.c */
OpComputeFn compute_reshape, compute_batch_flatten, compute_expand_dims, compute_squeeze,
    compute_concatenate, compute_stack, compute_transpose, compute_broadcast_to,
    compute_strided_slice, compute_take, compute_zeros, compute_ones, compute_full,
    compute_zeros_like, compute_ones_like, compute_split, compute_ndarray_size;
/* compute_transform_shape.c, compute_transform_index.c */
OpComputeFn compute_full_like, compute_cast_like, compute_reinterpret, compute_slice_like,
    compute_layout_transform, compute_tile, compute_repeat, compute_reverse,
    compute_reverse_sequence, compute_sequence_mask, compute_trilu, compute_gather,
    compute_gather_nd, compute_unravel_index, compute_collapse_sum_like, compute_meshgrid,
    compute_adv_index;

/* compute_dyn.c */
OpComputeFn compute_dyn_reshape, compute_dyn_broadcast_to, compute_dyn_full, compute_dyn_zeros,
    compute_dyn_ones;

/* compute_qnn.c */
OpComputeFn compute_fixed_point_multiply, compute_quantize, compute_dequantize, compute_requantize,
    compute_qnn_conv2d, compute_qnn_dense, compute_qnn_add, compute_qnn_mul;

/* compute_image.c */
OpComputeFn compute_resize1d, compute_resize2d, compute_resize3d, compute_grid_sample,
    compute_affine_grid;

/* compute_conv_nd.c */
OpComputeFn compute_conv1d, compute_conv3d, compute_conv1d_transpose, compute_conv2d_transpose;

/* compute_nn_norm.c, compute_nn_loss.c, compute_misc.c */
OpComputeFn compute_batch_norm, compute_lrn, compute_cross_entropy,
    compute_cross_entropy_with_logits, compute_nll_loss, compute_one_hot, compute_dyn_one_hot,
    compute_mean_variance;

/* compute_einsum.c */
OpComputeFn compute_einsum;

/* compute_image_crop.c, compute_dyn_index.c */
OpComputeFn compute_crop_and_resize, compute_dyn_tile, compute_dyn_resize2d,
    compute_dyn_strided_slice, compute_dyn_pad;

/* compute_vision.c */
OpComputeFn compute_roi_align;

#endif
