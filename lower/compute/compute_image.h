/* compute_image.h — what the image compute rules share (lower/compute/compute_image.c
 * defines it): the taps of a resampling axis and the resampling itself, as
 * TIR expressions that compute what kernels/kernels_image.c computes. */
#ifndef RLY_OPS_COMPUTE_IMAGE_H
#define RLY_OPS_COMPUTE_IMAGE_H

#include "lower/compute/compute.h"
#include "ops/image.h"

/* The taps of one axis at one output coordinate: n (1, 2 or 4) clamped
 * int32 indices with float32 weights, and (tf_crop_and_resize) whether the
 * coordinate is outside the image (NULL otherwise). */
typedef struct ETaps {
  int n;
  PrimExpr *idx[4], *w[4], *outside;
} ETaps;

/* The taps of float32 coordinate c on an axis of `in` pixels (the kernel's
 * taps_at): the spec's method and rounding. */
ETaps image_taps(LowerCx *L, const ResizeSpec *s, PrimExpr *c, int64_t in);
/* The float32 value x sampled with the taps t of the spec's spatial axes,
 * the other axes at idx (the kernel's sample). */
PrimExpr *image_resample(LowerCx *L, const LTensor *x, const ResizeSpec *s, const ETaps *t,
                         PrimExpr **idx);

/* The dtypes of the resampling rules: images of every numeric dtype,
 * read as float32 (float16 exactly, wide integers rounded, as the kernels
 * read them), results of every dtype, converted from float32 by `cast`'s
 * rules (integers truncate and saturate). */
bool image_dtypes_ok(DType x, DType out);

/* The inline rule of image.resize{nsp}d on a call with resize's
 * attributes (dyn.image.resize2d's too), the size from the result type;
 * int_div: TVM's integer form of static 2-D nearest "asymmetric"
 * resizing (the kernels use it for image.resize2d only). */
LTensor *image_resize_rule(LowerCx *L, const Expr *call, LTensor **in, int nin, int nsp,
                           bool int_div);

#endif
