/* nn_layout.c — op family "nn_layout": the injective nn ops that move data
 * around: nn.pad, nn.mirror_pad, nn.upsampling, nn.upsampling3d,
 * nn.depth_to_space, nn.space_to_depth, nn.space_to_batch_nd,
 * nn.batch_to_space_nd, nn.dilate.
 *
 * Attributes and defaults are TVM v0.10's (PadAttrs, MirrorPadAttrs,
 * UpSamplingAttrs, SubPixelAttrs, SpaceToBatchNDAttrs, BatchToSpaceNDAttrs,
 * DilateAttrs in relay/attrs/nn.h).  nn.pad takes its pad value as a second
 * argument (a scalar tensor of any dtype, cast to the data's), as TVM v0.10
 * does.  A dim that is not a constant gives `?` unless the op leaves it as
 * it is (no padding, scale 1, block 1, stride 1), when it passes through.
 *
 * Semantics (TVM's topi): pad modes constant / edge / reflect (reflect
 * mirrors without repeating the edge); mirror_pad SYMMETRIC repeats the
 * edge, REFLECT does not; upsampling sizes are round(dim * scale) (ties to
 * even); depth_to_space DCR reads channel (bs * y + x) * C' + c, CRD
 * c * bs * bs + bs * y + x; space_to_batch_nd / batch_to_space_nd are
 * TensorFlow's (the block offset is the outer part of the batch index);
 * dilate puts strides - 1 copies of dilation_value between elements. */
#include <math.h>
#include <string.h>

#include "ops/families.h"
#include "ops/nn_int.h"

static const Span no_span;

static Type *tensor_like(RelCtx *cx, const Type *x, const Dim *dims) {
  return type_tensor(cx->arena, x->u.tensor.dtype, x->u.tensor.ndim, dims, no_span);
}

/* d + add for a constant d (false when negative); `?` otherwise, or d
 * itself when add is 0. */
static bool dim_plus(Dim d, int64_t add, Dim *out) {
  if (d.kind != DIM_CONST) return *out = add ? dim_any() : d, true;
  int64_t v;
  if (__builtin_add_overflow(d.value, add, &v)) v = -1;
  *out = dim_const(v);
  return v >= 0;
}

/* ───────────────────────────── pads ───────────────────────────── */

/* pad_width: one [before, after] pair per axis. */
static int pad_pairs(RelCtx *cx, const Attrs *attrs, const Type *x, int64_t (*pw)[2]) {
  int n = nn_attr_pairs(cx, attrs, "pad_width", pw, NN_MAX_PAIRS);
  if (n < 0) return -1;
  if (n != x->u.tensor.ndim) {
    rel_fail(cx, "%s: pad_width has %d pairs but the data %s has rank %d", cx->op_name, n,
             rel_tensor_shape_str(cx, x), x->u.tensor.ndim);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (pw[i][0] < -((int64_t)1 << 40) || pw[i][0] > ((int64_t)1 << 40) ||
        pw[i][1] < -((int64_t)1 << 40) || pw[i][1] > ((int64_t)1 << 40)) {
      rel_fail(cx, "%s: pad_width [%lld, %lld] is too large", cx->op_name, (long long)pw[i][0],
               (long long)pw[i][1]);
      return -1;
    }
  return n;
}

/* Mirroring modes need non-negative widths within the axis: at most
 * size - 1 when the edge is not repeated (slack 1), size when it is (slack
 * 0); edge padding takes any width (slack -1). */
static bool mirror_widths(RelCtx *cx, const Type *x, int64_t (*pw)[2], int slack,
                          const char *mode) {
  for (int i = 0; i < x->u.tensor.ndim; i++) {
    Dim d = x->u.tensor.dims[i];
    for (int j = 0; j < 2; j++) {
      if (pw[i][j] < 0)
        return rel_fail(cx, "%s: %s padding needs non-negative widths, got [%lld, %lld] at axis %d",
                        cx->op_name, mode, (long long)pw[i][0], (long long)pw[i][1], i),
               false;
      if (slack < 0 || d.kind != DIM_CONST || pw[i][j] <= d.value - slack) continue;
      return rel_fail(cx,
                      "%s: %s padding of %lld at axis %d needs %s %lld elements, the axis has %lld",
                      cx->op_name, mode, (long long)pw[i][j], i, slack ? "more than" : "at least",
                      (long long)pw[i][j], (long long)d.value),
             false;
    }
  }
  return true;
}

static Type *padded(RelCtx *cx, const Type *x, int64_t (*pw)[2]) {
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < x->u.tensor.ndim; i++)
    if (!dim_plus(x->u.tensor.dims[i], pw[i][0] + pw[i][1], &out[i]))
      return rel_fail(cx, "%s: axis %d of size %lld padded by [%lld, %lld] would have size %lld",
                      cx->op_name, i, (long long)x->u.tensor.dims[i].value, (long long)pw[i][0],
                      (long long)pw[i][1], (long long)out[i].value);
  return tensor_like(cx, x, out);
}

static Type *rel_pad(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *v = x ? rel_tensor(cx, args, 1) : NULL;
  int64_t pw[NN_MAX_PAIRS][2];
  if (!v || pad_pairs(cx, attrs, x, pw) < 0) return NULL;
  if (v->u.tensor.ndim != 0)
    return rel_fail(cx, "nn.pad: the pad value must be a scalar, got %s", rel_type_str(cx, v));
  const char *mode = rel_attr_str(cx, attrs, "pad_mode");
  if (cx->err[0]) return NULL;
  if (strcmp(mode, "edge") == 0 || strcmp(mode, "reflect") == 0) {
    if (!mirror_widths(cx, x, pw, mode[0] == 'e' ? -1 : 1, mode)) return NULL;
    /* edge padding of an empty axis has no edge to repeat */
    for (int i = 0; i < x->u.tensor.ndim; i++)
      if (mode[0] == 'e' && pw[i][0] + pw[i][1] > 0 && x->u.tensor.dims[i].kind == DIM_CONST &&
          x->u.tensor.dims[i].value == 0)
        return rel_fail(cx, "nn.pad: edge padding of the empty axis %d", i);
  } else if (strcmp(mode, "constant") != 0) {
    return rel_fail(
        cx, "nn.pad: pad_mode must be \"constant\", \"edge\" or \"reflect\", got \"%s\"", mode);
  }
  return padded(cx, x, pw);
}

static Type *rel_mirror_pad(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t pw[NN_MAX_PAIRS][2];
  if (!x || pad_pairs(cx, attrs, x, pw) < 0) return NULL;
  const char *mode = rel_attr_str(cx, attrs, "mode");
  if (cx->err[0]) return NULL;
  bool sym = strcmp(mode, "SYMMETRIC") == 0;
  if (!sym && strcmp(mode, "REFLECT") != 0)
    return rel_fail(cx, "nn.mirror_pad: mode must be \"SYMMETRIC\" or \"REFLECT\", got \"%s\"",
                    mode);
  if (!mirror_widths(cx, x, pw, sym ? 0 : 1, mode)) return NULL;
  return padded(cx, x, pw);
}

/* ───────────────────────────── upsampling ───────────────────────────── */

/* A layout that is a permutation of `letters` (NCHW / NCDHW). */
static bool perm_layout(RelCtx *cx, const Attrs *attrs, const Type *x, const char *letters,
                        int *pos) {
  int rank = nn_layout_attr(cx, attrs, "layout", letters, pos);
  if (rank < 0) return false;
  if (rank != (int)strlen(letters))
    return rel_fail(cx, "%s: layout %s is not supported (a permutation of %s)", cx->op_name,
                    rel_attr_str(cx, attrs, "layout"), letters),
           false;
  if (x->u.tensor.ndim == rank) return true;
  rel_fail(cx, "%s: data must be %d-D (layout %s), got %s", cx->op_name, rank,
           rel_attr_str(cx, attrs, "layout"), rel_type_str(cx, x));
  return false;
}

static bool one_of(RelCtx *cx, const Attrs *attrs, const char *key, const char *const *ok) {
  const char *v = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return false;
  StrBuf b = {0};
  for (int i = 0; ok[i]; i++) {
    if (strcmp(v, ok[i]) == 0) return sb_free(&b), true;
    sb_printf(&b, "%s\"%s\"", i ? (ok[i + 1] ? ", " : " or ") : "", ok[i]);
  }
  rel_fail(cx, "%s: %s must be %s, got \"%s\"", cx->op_name, key, b.data, v);
  sb_free(&b);
  return false;
}

/* round(d * scale), ties to even as TVM folds it; `?` for a dim that is
 * not a constant (unless scale is 1). */
static bool scaled(RelCtx *cx, const Attrs *attrs, const char *key, Dim d, Dim *out) {
  double s = rel_attr_float(cx, attrs, key);
  if (cx->err[0]) return false;
  if (!(s > 0) || s > 1e9)
    return rel_fail(cx, "%s: %s must be positive, got %g", cx->op_name, key, s), false;
  if (d.kind != DIM_CONST) return *out = s == 1 ? d : dim_any(), true;
  double v = nearbyint((double)d.value * s);
  if (v > 1e15) return rel_fail(cx, "%s: the scaled size is too large", cx->op_name), false;
  *out = dim_const((int64_t)v);
  return true;
}

/* upsampling and upsampling3d: the layout, method and coordinate mode, then
 * each spatial dim scaled. */
static Type *upsample_rel(RelCtx *cx, Type **args, const Attrs *attrs, int S) {
  static const char *const m2[] = {"nearest_neighbor", "bilinear", "bicubic", NULL};
  static const char *const m3[] = {"nearest_neighbor", "trilinear", NULL};
  static const char *const ct[] = {"half_pixel", "align_corners", "asymmetric", NULL};
  static const char *const keys[] = {"scale_d", "scale_h", "scale_w"};
  const Type *x = rel_tensor(cx, args, 0);
  int pos[5];
  if (!x || !perm_layout(cx, attrs, x, S == 2 ? "NCHW" : "NCDHW", pos) ||
      !one_of(cx, attrs, "method", S == 2 ? m2 : m3) ||
      (S == 3 && !one_of(cx, attrs, "coordinate_transformation_mode", ct)))
    return NULL;
  Dim out[5];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)(2 + S));
  for (int i = 0; i < S; i++)
    if (!scaled(cx, attrs, keys[3 - S + i], x->u.tensor.dims[pos[2 + i]], &out[pos[2 + i]]))
      return NULL;
  return tensor_like(cx, x, out);
}

static Type *rel_upsampling(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  return upsample_rel(cx, args, attrs, 2);
}

static Type *rel_upsampling3d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  return upsample_rel(cx, args, attrs, 3);
}

/* ───────────────────────── depth / space ───────────────────────── */

/* NCHW or NHWC and a positive block_size; pos: N, C, H, W. */
static bool subpixel_attrs(RelCtx *cx, const Attrs *attrs, const Type *x, int *pos, int64_t *bs) {
  const char *l = rel_attr_str(cx, attrs, "layout");
  if (cx->err[0]) return false;
  if (strcmp(l, "NCHW") != 0 && strcmp(l, "NHWC") != 0)
    return rel_fail(cx, "%s: layout must be NCHW or NHWC, got %s", cx->op_name, l), false;
  if (!perm_layout(cx, attrs, x, "NCHW", pos)) return false;
  *bs = rel_attr_int(cx, attrs, "block_size");
  if (cx->err[0]) return false;
  if (*bs < 1 || *bs > (1 << 20))
    return rel_fail(cx, "%s: block_size must be positive, got %lld", cx->op_name, (long long)*bs),
           false;
  return true;
}

/* d * m (more = true) or d / m, which must divide (false after rel_fail). */
static bool scale_dim(RelCtx *cx, Dim d, int64_t m, bool more, const char *what, Dim *out) {
  if (d.kind != DIM_CONST) return *out = m == 1 ? d : dim_any(), true;
  if (!more && d.value % m != 0)
    return rel_fail(cx, "%s: %s %lld is not divisible by %lld", cx->op_name, what,
                    (long long)d.value, (long long)m),
           false;
  int64_t v = d.value / m;
  if (more && (__builtin_mul_overflow(d.value, m, &v) || v > ((int64_t)1 << 50)))
    return rel_fail(cx, "%s: %s %lld times %lld is too large", cx->op_name, what,
                    (long long)d.value, (long long)m),
           false;
  *out = dim_const(v);
  return true;
}

static Type *subpixel_rel(RelCtx *cx, Type **args, const Attrs *attrs, bool to_space) {
  static const char *const modes[] = {"DCR", "CRD", NULL};
  const Type *x = rel_tensor(cx, args, 0);
  int pos[4];
  int64_t bs;
  if (!x || !subpixel_attrs(cx, attrs, x, pos, &bs)) return NULL;
  if (to_space && !one_of(cx, attrs, "mode", modes)) return NULL;
  const Dim *d = x->u.tensor.dims;
  Dim out[4];
  memcpy(out, d, sizeof out);
  bool ok = scale_dim(cx, d[pos[1]], bs * bs, !to_space, "the channel count", &out[pos[1]]) &&
            scale_dim(cx, d[pos[2]], bs, to_space, "the height", &out[pos[2]]) &&
            scale_dim(cx, d[pos[3]], bs, to_space, "the width", &out[pos[3]]);
  return ok ? tensor_like(cx, x, out) : NULL;
}

static Type *rel_depth_to_space(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                const Attrs *attrs) {
  return subpixel_rel(cx, args, attrs, true);
}

static Type *rel_space_to_depth(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                const Attrs *attrs) {
  return subpixel_rel(cx, args, attrs, false);
}

/* ───────────────────────── batch / space ───────────────────────── */

/* block_shape (M positive ints) and M pairs under `key`; the data needs
 * rank > M. */
static int block_attrs(RelCtx *cx, const Attrs *attrs, const Type *x, const char *key,
                       int64_t *block, int64_t (*pairs)[2]) {
  int m = rel_attr_ints(cx, attrs, "block_shape", block, NN_MAX_PAIRS);
  if (m < 0 || cx->err[0]) return -1;
  for (int i = 0; i < m; i++)
    if (block[i] < 1 || block[i] > (1 << 20))
      return rel_fail(cx, "%s: block_shape values must be positive, got %lld", cx->op_name,
                      (long long)block[i]),
             -1;
  int n = nn_attr_pairs(cx, attrs, key, pairs, NN_MAX_PAIRS);
  if (n < 0) return -1;
  if (n != m)
    return rel_fail(cx, "%s: %s has %d pairs but block_shape has %d values", cx->op_name, key, n,
                    m),
           -1;
  if (x->u.tensor.ndim <= m)
    return rel_fail(cx, "%s: the data %s needs a rank above %d (batch, then %d block dims)",
                    cx->op_name, rel_tensor_shape_str(cx, x), m, m),
           -1;
  for (int i = 0; i < m; i++)
    if (pairs[i][0] < 0 || pairs[i][1] < 0 || pairs[i][0] > ((int64_t)1 << 40) ||
        pairs[i][1] > ((int64_t)1 << 40))
      return rel_fail(cx, "%s: %s must be non-negative, got [%lld, %lld]", cx->op_name, key,
                      (long long)pairs[i][0], (long long)pairs[i][1]),
             -1;
  return m;
}

static Type *rel_space_to_batch_nd(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t block[NN_MAX_PAIRS], pads[NN_MAX_PAIRS][2], prod = 1;
  int m = x ? block_attrs(cx, attrs, x, "paddings", block, pads) : -1;
  if (m < 0 || (rel_attr_float(cx, attrs, "pad_value"), cx->err[0])) return NULL;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  for (int i = 0; i < m; i++) {
    Dim p;
    dim_plus(x->u.tensor.dims[1 + i], pads[i][0] + pads[i][1], &p);
    const char *what = arena_printf(cx->arena, "axis %d padded to", 1 + i);
    if (!scale_dim(cx, p, block[i], false, what, &out[1 + i])) return NULL;
    if (__builtin_mul_overflow(prod, block[i], &prod))
      return rel_fail(cx, "%s: overflow", cx->op_name);
  }
  return scale_dim(cx, out[0], prod, true, "the batch", &out[0]) ? tensor_like(cx, x, out) : NULL;
}

static Type *rel_batch_to_space_nd(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t block[NN_MAX_PAIRS], crops[NN_MAX_PAIRS][2], prod = 1;
  int m = x ? block_attrs(cx, attrs, x, "crops", block, crops) : -1;
  if (m < 0) return NULL;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  for (int i = 0; i < m; i++) {
    Dim full;
    if (__builtin_mul_overflow(prod, block[i], &prod))
      return rel_fail(cx, "%s: overflow", cx->op_name);
    if (!scale_dim(cx, x->u.tensor.dims[1 + i], block[i], true, "the size", &full)) return NULL;
    if (!dim_plus(full, -(crops[i][0] + crops[i][1]), &out[1 + i]))
      return rel_fail(cx, "%s: crops [%lld, %lld] are larger than axis %d after the block (%lld)",
                      cx->op_name, (long long)crops[i][0], (long long)crops[i][1], 1 + i,
                      (long long)full.value);
  }
  return scale_dim(cx, out[0], prod, false, "the batch", &out[0]) ? tensor_like(cx, x, out) : NULL;
}

/* ───────────────────────────── dilate ───────────────────────────── */

static Type *rel_dilate(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t s[TENSOR_MAX_RANK];
  int n = x ? rel_attr_ints(cx, attrs, "strides", s, TENSOR_MAX_RANK) : -1;
  if (n < 0 || cx->err[0] || (rel_attr_float(cx, attrs, "dilation_value"), cx->err[0])) return NULL;
  if (n != x->u.tensor.ndim)
    return rel_fail(cx, "nn.dilate: strides has %d values but the data %s has rank %d", n,
                    rel_tensor_shape_str(cx, x), x->u.tensor.ndim);
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++) {
    Dim d = x->u.tensor.dims[i];
    if (s[i] < 1 || s[i] > (1 << 20))
      return rel_fail(cx, "nn.dilate: strides must be positive, got %lld at axis %d",
                      (long long)s[i], i);
    if (d.kind != DIM_CONST)
      out[i] = s[i] == 1 ? d : dim_any();
    else if (d.value > ((int64_t)1 << 40))
      return rel_fail(cx, "nn.dilate: axis %d is too large", i);
    else
      out[i] = dim_const(d.value ? (d.value - 1) * s[i] + 1 : 0);
  }
  return tensor_like(cx, x, out);
}

/* ───────────────────────────── table ───────────────────────────── */

/* clang-format off */
static const OpAttrSpec pad_attrs[] = {
    {"pad_width", AV_LIST, NULL}, {"pad_mode", AV_STR, "\"constant\""}, {0}};
static const OpAttrSpec mirror_pad_attrs[] = {
    {"mode", AV_STR, "\"SYMMETRIC\""}, {"pad_width", AV_LIST, NULL}, {0}};
static const OpAttrSpec upsampling_attrs[] = {
    {"scale_h", AV_FLOAT, NULL}, {"scale_w", AV_FLOAT, NULL}, {"layout", AV_STR, "\"NCHW\""},
    {"method", AV_STR, "\"nearest_neighbor\""}, {"align_corners", AV_BOOL, "False"}, {0}};
static const OpAttrSpec upsampling3d_attrs[] = {
    {"scale_d", AV_FLOAT, NULL}, {"scale_h", AV_FLOAT, NULL}, {"scale_w", AV_FLOAT, NULL},
    {"layout", AV_STR, "\"NCDHW\""}, {"method", AV_STR, "\"nearest_neighbor\""},
    {"coordinate_transformation_mode", AV_STR, "\"half_pixel\""}, {0}};
static const OpAttrSpec subpixel_attrs_spec[] = {
    {"block_size", AV_INT, "1"}, {"layout", AV_STR, "\"NCHW\""}, {"mode", AV_STR, "\"DCR\""}, {0}};
static const OpAttrSpec space_to_batch_attrs[] = {
    {"block_shape", AV_LIST, "[1, 1]"}, {"paddings", AV_LIST, NULL},
    {"pad_value", AV_FLOAT, "0f"}, {0}};
static const OpAttrSpec batch_to_space_attrs[] = {
    {"block_shape", AV_LIST, "[1, 1]"}, {"crops", AV_LIST, NULL}, {0}};
static const OpAttrSpec dilate_attrs[] = {
    {"strides", AV_LIST, "[1, 1]"}, {"dilation_value", AV_FLOAT, "0f"}, {0}};
/* clang-format on */

const OpDef ops_family_nn_layout[] = {
    {"nn.pad", 2, 2, OPAT_INJECTIVE, pad_attrs, rel_pad,
     "pad each axis by [before, after] elements: pad_mode constant (pad_value), edge or reflect",
     false, .args = "data, pad_value",
     .rule =
         "data's dtype; each axis grows by its pad_width (before + after); pad_value is a scalar",
     .example = "nn.pad([[1f, 2f]], 0f, pad_width=[[0, 0], [1, 1]])"},
    {"nn.mirror_pad", 1, 1, OPAT_INJECTIVE, mirror_pad_attrs, rel_mirror_pad,
     "pad by mirroring: mode SYMMETRIC (with the edge) or REFLECT", false, .args = "data",
     .rule = "data's dtype; each axis grows by its pad_width (before + after), each pad smaller "
             "than the axis (REFLECT) or at most it",
     .example = "nn.mirror_pad([[1f, 2f, 3f]], pad_width=[[0, 0], [1, 1]], mode=\"REFLECT\")"},
    {"nn.upsampling", 1, 1, OPAT_INJECTIVE, upsampling_attrs, rel_upsampling,
     "scale height and width (nearest_neighbor, bilinear, bicubic)", false, .args = "data",
     .rule = "data's dtype; its H and W (per `layout`) times scale_h and scale_w, rounded to the "
             "nearest",
     .example = "nn.upsampling(ones(shape=[1, 1, 2, 2]), scale_h=2f, scale_w=2f)"},
    {"nn.upsampling3d", 1, 1, OPAT_INJECTIVE, upsampling3d_attrs, rel_upsampling3d,
     "scale depth, height and width (nearest_neighbor, trilinear)", false, .args = "data",
     .rule = "data's dtype; its D, H and W (per `layout`) times scale_d, scale_h and scale_w, "
             "rounded to the nearest",
     .example = "nn.upsampling3d(ones(shape=[1, 1, 1, 2, 2]), scale_d=2f, scale_h=2f, scale_w=2f)"},
    {"nn.depth_to_space", 1, 1, OPAT_INJECTIVE, subpixel_attrs_spec, rel_depth_to_space,
     "move channel blocks into block_size x block_size pixels (DCR or CRD)", false, .args = "data",
     .rule = "data's dtype: C/(b*b), H*b, W*b (per `layout`) for block_size b",
     .example =
         "nn.depth_to_space(reshape(arange(0f, 4f, 1f), newshape=[1, 4, 1, 1]), block_size=2)"},
    {"nn.space_to_depth", 1, 1, OPAT_INJECTIVE, subpixel_attrs_spec, rel_space_to_depth,
     "move block_size x block_size pixels into channels", false, .args = "data",
     .rule = "data's dtype: C*b*b, H/b, W/b (per `layout`) for block_size b",
     .example =
         "nn.space_to_depth(reshape(arange(0f, 4f, 1f), newshape=[1, 1, 2, 2]), block_size=2)"},
    {"nn.space_to_batch_nd", 1, 1, OPAT_INJECTIVE, space_to_batch_attrs, rel_space_to_batch_nd,
     "pad, then move spatial blocks into the batch (TensorFlow's)", false, .args = "data",
     .rule = "data's dtype: batch times prod(block_shape); each spatial axis (padded by "
             "`paddings`) divided by its block",
     .example = "nn.space_to_batch_nd(ones(shape=[1, 2, 2, 1]), block_shape=[2, 2], paddings=[[0, "
                "0], [0, 0]])"},
    {"nn.batch_to_space_nd", 1, 1, OPAT_INJECTIVE, batch_to_space_attrs, rel_batch_to_space_nd,
     "move batch blocks into spatial dims, then crop (TensorFlow's)", false, .args = "data",
     .rule = "data's dtype: batch divided by prod(block_shape); each spatial axis times its block, "
             "less its `crops`",
     .example = "nn.batch_to_space_nd(ones(shape=[4, 1, 1, 1]), block_shape=[2, 2], crops=[[0, 0], "
                "[0, 0]])"},
    {"nn.dilate", 1, 1, OPAT_INJECTIVE, dilate_attrs, rel_dilate,
     "insert strides - 1 dilation_values between elements along each axis", false, .args = "data",
     .rule = "data's dtype; each axis d becomes (d-1)*stride + 1",
     .example = "nn.dilate([[1f, 2f]], strides=[1, 2])"},
    {0},
};
