/* image.h — the attributes of the image ops (image.resize1d/2d/3d,
 * dyn.image.resize2d, image.crop_and_resize, image.grid_sample), read and
 * checked in one place (ops/image.c) for their relations, their reference
 * kernels (kernels/kernels_image.c) and their compute rules
 * (lower/compute/compute_image.c), and the float-list attributes the image and vision
 * ops take (roi, sizes, ratios, ...).
 *
 * The names are TVM's (relay/attrs/image.h); each enum below comes from one
 * X-macro table of (enum, name). */
#ifndef RLY_OPS_IMAGE_H
#define RLY_OPS_IMAGE_H

#include "ops/ops.h"

#define RESIZE_METHODS(X)               \
  X(RESIZE_NEAREST, "nearest_neighbor") \
  X(RESIZE_LINEAR, "linear")            \
  X(RESIZE_CUBIC, "cubic")
typedef enum ResizeMethod {
#define X(e, n) e,
  RESIZE_METHODS(X)
#undef X
} ResizeMethod;

#define COORD_MODES(X)                                  \
  X(COORD_HALF_PIXEL, "half_pixel")                     \
  X(COORD_ALIGN_CORNERS, "align_corners")               \
  X(COORD_ASYMMETRIC, "asymmetric")                     \
  X(COORD_PYTORCH_HALF_PIXEL, "pytorch_half_pixel")     \
  X(COORD_TF_HALF_PIXEL_FOR_NN, "tf_half_pixel_for_nn") \
  X(COORD_TF_CROP_AND_RESIZE, "tf_crop_and_resize")
typedef enum CoordMode {
#define X(e, n) e,
  COORD_MODES(X)
#undef X
} CoordMode;

/* "" picks round for align_corners and floor otherwise (TVM's TOPI). */
#define ROUNDINGS(X)                             \
  X(ROUNDING_AUTO, "")                           \
  X(ROUNDING_ROUND, "round")                     \
  X(ROUNDING_PREFER_FLOOR, "round_prefer_floor") \
  X(ROUNDING_PREFER_CEIL, "round_prefer_ceil")   \
  X(ROUNDING_FLOOR, "floor")                     \
  X(ROUNDING_CEIL, "ceil")
typedef enum Rounding {
#define X(e, n) e,
  ROUNDINGS(X)
#undef X
} Rounding;

enum { IMAGE_MAX_SPATIAL = 3 };

/* A resize (or crop_and_resize) call's attributes, resolved. */
typedef struct ResizeSpec {
  int nsp;                        /* spatial dims: 1, 2 or 3 */
  int batch_axis, chan_axis;      /* positions of N and C in the layout */
  int sp_axis[IMAGE_MAX_SPATIAL]; /* positions of (D,) (H,) W */
  ResizeMethod method;
  CoordMode coord;
  Rounding rounding;                 /* never ROUNDING_AUTO */
  double cubic_alpha;                /* as written; the weights round its sums to float32 */
  bool cubic_exclude;                /* zero the weights of taps outside the image */
  float extrapolation;               /* tf_crop_and_resize: the value outside the image */
  double roi[2 * IMAGE_MAX_SPATIAL]; /* starts of the spatial axes, then their ends */
  double scales[IMAGE_MAX_SPATIAL];  /* output/input per spatial axis (ONNX's scales); 0: from
                                        the sizes */
  DType out_dtype;                   /* DT_INVALID: the data's */
} ResizeSpec;

/* Reads and checks the attributes of an image.resize{nsp}d-style call
 * (layout, method, coordinate_transformation_mode, rounding_method,
 * cubic_alpha, cubic_exclude, extrapolation_value, roi, scales, out_dtype); fails
 * with a message naming the attribute.  The size attribute is the caller's. */
bool image_resize_spec(RelCtx *cx, const Attrs *attrs, int nsp, ResizeSpec *s);
/* The same for image.crop_and_resize (layout, method, extrapolation_value,
 * out_dtype): coordinates come from the boxes, nearest rounds half to even. */
bool image_crop_spec(RelCtx *cx, const Attrs *attrs, ResizeSpec *s);
/* The type of a resize of data args[0] to the spatial sizes `size` (nsp
 * of them, constants, size variables or `?`): the relation of
 * image.resize{nsp}d once its size attribute is read, and of
 * dyn.image.resize2d (ops/dyn.c) once its size tensor is. */
Type *image_resize_type(RelCtx *cx, Type **args, const Attrs *attrs, int nsp, const Dim *size);
/* image.resize2d's attributes, which dyn.image.resize2d shares. */
extern const OpAttrSpec image_resize2d_attrs[];
/* Whether static 2-D nearest "asymmetric" resize of an axis of n pixels to
 * t uses TVM's integer-division form (t a multiple of n, not too large). */
bool image_resize_int_div(int64_t n, int64_t t);

#define GRID_METHODS(X) \
  X(GRID_BILINEAR, "bilinear") X(GRID_NEAREST, "nearest") X(GRID_BICUBIC, "bicubic")
typedef enum GridMethod {
#define X(e, n) e,
  GRID_METHODS(X)
#undef X
} GridMethod;

#define GRID_PADDINGS(X) \
  X(GRID_ZEROS, "zeros") X(GRID_BORDER, "border") X(GRID_REFLECTION, "reflection")
typedef enum GridPadding {
#define X(e, n) e,
  GRID_PADDINGS(X)
#undef X
} GridPadding;

typedef struct GridSpec {
  int nsp; /* 2 (NCHW) or 3 (NCDHW) */
  GridMethod method;
  GridPadding padding;
  bool align_corners;
} GridSpec;

/* Reads and checks image.grid_sample's attributes for data of rank `rank`. */
bool image_grid_spec(RelCtx *cx, const Attrs *attrs, int rank, GridSpec *s);

/* A list of numbers (ints or floats; one number counts as a list of one)
 * written for `key`, else its default; returns the count (0 for None), or
 * -1 after failing ("op: attribute `roi` must be a list of numbers") or
 * with more than max entries. */
int image_attr_floats(RelCtx *cx, const Attrs *attrs, const char *key, double *out, int max);

#endif
