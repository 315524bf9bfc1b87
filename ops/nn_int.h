/* nn_int.h — attribute readers shared by the nn families' type relations
 * (ops/nn*.c), their reference kernels (interp/kernels_nn*.c) and their
 * compute rules (ops/compute_nn*.c), so the three read an attribute the
 * same way.  Each reader takes a RelCtx (kernels pass their kx->rel,
 * compute rules one made by nn_call_ctx) and fails through rel_fail with a
 * message naming the op and the attribute.
 *
 * Windows (convolutions and pools) have S spatial dims (1 to 3), named
 * depth, height, width from the left (S = 2: height, width).  Per dim:
 *   out = (in + lo + hi - (dilation * (k - 1) + 1)) / stride + 1
 * (rounded up with ceil_mode) and for transposed convolutions
 *   out = stride * (in - 1) + dilation * (k - 1) + 1 - lo - hi + output_padding.
 * An attribute of S values may be written with 1 value (all dims); padding
 * with 1 (all sides), S (before = after per dim) or 2S (all befores, then
 * all afters) values, as TVM reads them. */
#ifndef RLY_OPS_NN_INT_H
#define RLY_OPS_NN_INT_H

#include "ops/ops.h"

enum { NN_MAX_SPATIAL = 3, NN_MAX_PAIRS = TENSOR_MAX_RANK };

typedef struct NnWindow {
  int S;
  int64_t k[NN_MAX_SPATIAL], stride[NN_MAX_SPATIAL], dil[NN_MAX_SPATIAL];
  int64_t lo[NN_MAX_SPATIAL], hi[NN_MAX_SPATIAL], out_pad[NN_MAX_SPATIAL];
  bool ceil_mode;
} NnWindow;

/* Blocked layouts of nn.contrib_conv2d_NCHWc: "NCHW16c" (*c = 16) and
 * "OIHW16i16o" (*i = *o = 16); false when l is not of that form. */
bool nn_layout_nchwc(const char *l, int64_t *c);
bool nn_layout_oihwio(const char *l, int64_t *i, int64_t *o);

/* A RelCtx for reading the attributes of a typed op call (compute rules). */
void nn_call_ctx(RelCtx *cx, Arena *a, const Expr *call);
/* "depth", "height" or "width": spatial dim i of S. */
const char *nn_dim_name(int S, int i);
/* An attribute of 1 or S ints, each at least `min`, spread over S dims. */
bool nn_spatial_ints(RelCtx *cx, const Attrs *attrs, const char *key, int S, int64_t min,
                     int64_t *out);
/* padding: 1, S or 2S non-negative values into lo[S], hi[S]. */
bool nn_padding(RelCtx *cx, const Attrs *attrs, int S, int64_t *lo, int64_t *hi);
/* strides, dilation and padding of a window with w->S dims (k is the caller's). */
bool nn_window_attrs(RelCtx *cx, const Attrs *attrs, NnWindow *w);
/* Output size of spatial dim i: a constant, or `?` when `in` is not one
 * (the dim itself for a 1-wide, stride 1, unpadded window). */
bool nn_window_out(RelCtx *cx, const NnWindow *w, int i, Dim in, Dim *out);
/* The same for a transposed convolution. */
bool nn_window_out_transposed(RelCtx *cx, const NnWindow *w, int i, Dim in, Dim *out);
/* Output size of a window along a dim of `in` elements (no checks). */
int64_t nn_window_size(const NnWindow *w, int i, int64_t in);
int64_t nn_window_size_transposed(const NnWindow *w, int i, int64_t in);

/* A layout that must be a permutation of distinct capital letters holding
 * every letter of `need` (e.g. "HW"), possibly with blocks of other axes
 * ("NCHW16c": an axis of 16 channels); pos[j] = the axis of need[j].
 * Returns the layout's rank (axes), or -1 after rel_fail naming `key`. */
int nn_layout_letters(RelCtx *cx, const char *layout, const char *key, const char *need, int *pos);
/* The attribute `key` (a layout string) read and checked as above. */
int nn_layout_attr(RelCtx *cx, const Attrs *attrs, const char *key, const char *need, int *pos);
/* out_layout: empty or equal to the layout `key` names. */
bool nn_same_out_layout(RelCtx *cx, const Attrs *attrs, const char *key);

/* The axes of a (not transposed) convolution's operands in their layouts:
 * x[] = the data's N, C, then spatial axes (D, H, W from the left), w[] =
 * the weight's O, I, then spatial axes.  data_layout is any order of N, C
 * and the S spatial letters (NCHW, NHWC), kernel_layout any order of O, I
 * and them (OIHW, HWIO, OHWI, HWOI), out_layout empty or the data's.
 * False after rel_fail ("layout NCHW16c is not supported ..."). */
typedef struct NnConvAxes {
  int x[2 + NN_MAX_SPATIAL], w[2 + NN_MAX_SPATIAL];
} NnConvAxes;
bool nn_conv_axes(RelCtx *cx, const Attrs *attrs, int S, NnConvAxes *ax);
/* Whether the axes are the plain order (NCHW data, OIHW weight). */
bool nn_conv_axes_plain(const NnConvAxes *ax, int S);

/* The operands of a product (convolution, dense, matmul): one dtype, or
 * two integer dtypes (int8 data with uint8 weights, as quantized models
 * have) when out_dtype names the result's; false after rel_fail. */
bool nn_operand_dtypes(RelCtx *cx, const Attrs *attrs, const Type *a, const Type *b);

/* nn.conv2d's attributes (TVM's Conv2DAttrs), which qnn.conv2d shares. */
extern const OpAttrSpec nn_conv2d_attrs[];

/* A list of int pairs (pad_width=[[0, 0], [1, 2]]); returns the count, or
 * -1 after rel_fail (missing, not pairs of ints, more than max). */
int nn_attr_pairs(RelCtx *cx, const Attrs *attrs, const char *key, int64_t (*out)[2], int max);

#endif
