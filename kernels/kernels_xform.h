/* kernels_xform.h — what the kernel files of the transform_shape,
 * transform_index and algorithm families share: an element-mapping driver
 * (each output element copies the bits of one input element, or a fill
 * value) and index normalization with numpy's bounds message. */
#ifndef RLY_INTERP_KERNELS_XFORM_H
#define RLY_INTERP_KERNELS_XFORM_H

#include "kernels/kernels.h"

typedef struct MapArgs {
  KernelCtx *kx;
  const RtTensor *x;             /* the tensor read */
  RtTensor *out;                 /* the tensor written */
  const void *fill;              /* the bytes of one element written where src gives -1 */
  int64_t xstr[TENSOR_MAX_RANK]; /* x's row-major strides (set by kernel_map) */
  int64_t p[4];                  /* the op's parameters (axes, counts) */
  const void *aux;               /* the op's data (a layout, index values) */
} MapArgs;

/* For output index oi, the element of x to copy (-1: the fill); false
 * after kernel_fail. */
typedef bool (*MapSrcFn)(MapArgs *m, const int64_t *oi, int64_t *src);

/* Fills m->out element by element through src. */
bool kernel_map(MapArgs *m, MapSrcFn src);

/* Index k of an axis of size n made non-negative (numpy: [-n, n)), or
 * false after "op: index k is out of bounds for axis a with size n". */
bool kernel_index(KernelCtx *kx, int64_t k, int64_t n, int axis, int64_t *out);

#endif
