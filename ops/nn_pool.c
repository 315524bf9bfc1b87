/* nn_pool.c — op family "nn_pool": nn.max_pool1d/2d/3d, nn.avg_pool1d/2d/3d,
 * nn.global_max_pool2d, nn.global_avg_pool2d, nn.adaptive_max_pool2d,
 * nn.adaptive_avg_pool2d.
 *
 * Attributes and defaults are TVM v0.10's (MaxPool2DAttrs ... in
 * relay/attrs/nn.h); pool_size has no default.  A layout is any string of
 * distinct capital letters that holds the pooled letters (W; H, W; D, H, W)
 * once each (NCHW, NHWC, ...), as long as the data's rank; the other axes
 * are carried through.  out_layout may only repeat the layout.  Window
 * sizes follow TVM (ops/nn_win.c): ceil_mode rounds the division up without
 * PyTorch's rule that the last window starts inside the input.
 *
 * Adaptive pools (output_size [] = the input's size, [s] = s by s, [h, w]):
 * output cell i along a dim of n inputs covers [floor(i n / s), ceil((i+1)
 * n / s)); the global pools are the 1 by 1 case. */
#include <string.h>

#include "ops/families.h"
#include "ops/nn_int.h"

static const Span no_span;

static const char *spatial(int S) { return &"DHW"[NN_MAX_SPATIAL - S]; }

/* The layout's positions of the pooled dims (pos[S]); false after rel_fail. */
static bool pool_layout(RelCtx *cx, const Attrs *attrs, const Type *x, int S, int *pos) {
  int rank = nn_layout_attr(cx, attrs, "layout", spatial(S), pos);
  if (rank < 0 || !nn_same_out_layout(cx, attrs, "layout")) return false;
  if (x->u.tensor.ndim == rank) return true;
  rel_fail(cx, "%s: data must be %d-D (layout %s), got %s", cx->op_name, rank,
           rel_attr_str(cx, attrs, "layout"), rel_type_str(cx, x));
  return false;
}

static Type *pool_rel(RelCtx *cx, Type **args, const Attrs *attrs, int S) {
  const Type *x = rel_tensor(cx, args, 0);
  int pos[NN_MAX_SPATIAL];
  NnWindow w = {.S = S};
  if (!x || !pool_layout(cx, attrs, x, S, pos) ||
      !nn_spatial_ints(cx, attrs, "pool_size", S, 1, w.k) || !nn_window_attrs(cx, attrs, &w))
    return NULL;
  w.ceil_mode = rel_attr_bool(cx, attrs, "ceil_mode");
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  for (int i = 0; i < S; i++)
    if (!nn_window_out(cx, &w, i, x->u.tensor.dims[pos[i]], &out[pos[i]])) return NULL;
  return cx->err[0] ? NULL
                    : type_tensor(cx->arena, x->u.tensor.dtype, x->u.tensor.ndim, out, no_span);
}

#define POOL_REL(name, S)                                                      \
  static Type *name(RelCtx *cx, int nargs, Type **args, const Tensor **values, \
                    const Attrs *attrs) {                                      \
    return pool_rel(cx, args, attrs, S);                                       \
  }
POOL_REL(rel_pool1d, 1)
POOL_REL(rel_pool2d, 2)
POOL_REL(rel_pool3d, 3)

static Type *rel_global_pool2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int pos[2];
  if (!x || !pool_layout(cx, attrs, x, 2, pos)) return NULL;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  out[pos[0]] = out[pos[1]] = dim_const(1);
  return type_tensor(cx->arena, x->u.tensor.dtype, x->u.tensor.ndim, out, no_span);
}

static Type *rel_adaptive_pool2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                 const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int pos[2];
  if (!x || !pool_layout(cx, attrs, x, 2, pos)) return NULL;
  Dim size[8];
  int n = rel_attr_dims(cx, attrs, "output_size", size, 8);
  if (cx->err[0]) return NULL;
  if (n > 2)
    return rel_fail(cx, "%s: output_size must have at most 2 values, got %d", cx->op_name, n);
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  for (int i = 0; i < 2 && n > 0; i++) {
    Dim s = size[n == 1 ? 0 : i];
    if (s.kind == DIM_CONST && s.value < 1)
      return rel_fail(cx, "%s: output_size values must be positive, got %lld", cx->op_name,
                      (long long)s.value);
    out[pos[i]] = s;
  }
  return type_tensor(cx->arena, x->u.tensor.dtype, x->u.tensor.ndim, out, no_span);
}

/* ───────────────────────────── table ───────────────────────────── */

/* clang-format off */
#define POOL_ATTRS(one, zero, layout)                                         \
  {"pool_size", AV_LIST, NULL}, {"strides", AV_LIST, one},                    \
  {"dilation", AV_LIST, one}, {"padding", AV_LIST, zero},                     \
  {"layout", AV_STR, layout}, {"out_layout", AV_STR, "\"\""},                 \
  {"ceil_mode", AV_BOOL, "False"}
static const OpAttrSpec max_pool1d_attrs[] = {POOL_ATTRS("[1]", "[0]", "\"NCW\""), {0}};
static const OpAttrSpec avg_pool1d_attrs[] = {
    POOL_ATTRS("[1]", "[0]", "\"NCW\""), {"count_include_pad", AV_BOOL, "False"}, {0}};
static const OpAttrSpec max_pool2d_attrs[] = {POOL_ATTRS("[1, 1]", "[0, 0]", "\"NCHW\""), {0}};
static const OpAttrSpec avg_pool2d_attrs[] = {
    POOL_ATTRS("[1, 1]", "[0, 0]", "\"NCHW\""), {"count_include_pad", AV_BOOL, "False"}, {0}};
static const OpAttrSpec max_pool3d_attrs[] = {
    POOL_ATTRS("[1, 1, 1]", "[0, 0, 0]", "\"NCDHW\""), {0}};
static const OpAttrSpec avg_pool3d_attrs[] = {
    POOL_ATTRS("[1, 1, 1]", "[0, 0, 0]", "\"NCDHW\""), {"count_include_pad", AV_BOOL, "False"},
    {0}};
static const OpAttrSpec global_pool2d_attrs[] = {
    {"layout", AV_STR, "\"NCHW\""}, {"out_layout", AV_STR, "\"\""}, {0}};
static const OpAttrSpec adaptive_pool2d_attrs[] = {
    {"output_size", AV_LIST, "[]"}, {"layout", AV_STR, "\"NCHW\""},
    {"out_layout", AV_STR, "\"\""}, {0}};
/* clang-format on */

/* tr: the type rule (OpDef.rule); ex: the row's example. */
#define POOL_ROW(name, attrs, rel, doc, tr, ex)                                                    \
  {name,         1, 1, OPAT_OUT_EWISE_FUSABLE, attrs, rel, doc, false, .args = "data", .rule = tr, \
   .example = ex}

const OpDef ops_family_nn_pool[] = {
    POOL_ROW("nn.max_pool1d", max_pool1d_attrs, rel_pool1d, "1-D max pooling (NCW)",
             "(N, C, W') in data's dtype: W' = (W + pads - dilation*(K-1) - 1) / stride + 1 "
             "(rounded up with ceil_mode)",
             "nn.max_pool1d([[[1f, 3f, 2f, 4f]]], pool_size=[2], strides=[2])"),
    POOL_ROW("nn.avg_pool1d", avg_pool1d_attrs, rel_pool1d, "1-D average pooling (NCW)",
             "(N, C, W') in data's dtype: W' = (W + pads - dilation*(K-1) - 1) / stride + 1 "
             "(rounded up with ceil_mode)",
             "nn.avg_pool1d([[[1f, 3f, 2f, 4f]]], pool_size=[2], strides=[2])"),
    POOL_ROW("nn.max_pool2d", max_pool2d_attrs, rel_pool2d, "2-D max pooling (NCHW)",
             "(N, C, H', W') in data's dtype (`layout`): H' = (H + pads - dilation*(KH-1) - 1) / "
             "stride + 1 (rounded up with ceil_mode)",
             "nn.max_pool2d(reshape(arange(0f, 16f, 1f), newshape=[1, 1, 4, 4]), pool_size=[2, 2], "
             "strides=[2, 2])"),
    POOL_ROW("nn.avg_pool2d", avg_pool2d_attrs, rel_pool2d, "2-D average pooling (NCHW)",
             "(N, C, H', W') in data's dtype (`layout`): H' = (H + pads - dilation*(KH-1) - 1) / "
             "stride + 1 (rounded up with ceil_mode)",
             "nn.avg_pool2d(reshape(arange(0f, 16f, 1f), newshape=[1, 1, 4, 4]), pool_size=[2, 2], "
             "strides=[2, 2])"),
    POOL_ROW("nn.max_pool3d", max_pool3d_attrs, rel_pool3d, "3-D max pooling (NCDHW)",
             "(N, C, D', H', W') in data's dtype: each D' = (D + pads - dilation*(K-1) - 1) / "
             "stride + 1 (rounded up with ceil_mode)",
             "nn.max_pool3d(ones(shape=[1, 1, 2, 2, 2]), pool_size=[2, 2, 2])"),
    POOL_ROW("nn.avg_pool3d", avg_pool3d_attrs, rel_pool3d, "3-D average pooling (NCDHW)",
             "(N, C, D', H', W') in data's dtype: each D' = (D + pads - dilation*(K-1) - 1) / "
             "stride + 1 (rounded up with ceil_mode)",
             "nn.avg_pool3d(ones(shape=[1, 1, 2, 2, 2]), pool_size=[2, 2, 2])"),
    {"nn.global_max_pool2d", 1, 1, OPAT_OUT_EWISE_FUSABLE, global_pool2d_attrs, rel_global_pool2d,
     "max over the whole height and width (NCHW): (N, C, 1, 1)", false, .args = "data",
     .rule = "data's dtype, its H and W axes 1 (`layout`)",
     .example = "nn.global_max_pool2d(reshape(arange(0f, 8f, 1f), newshape=[1, 2, 2, 2]))"},
    {"nn.global_avg_pool2d", 1, 1, OPAT_OUT_EWISE_FUSABLE, global_pool2d_attrs, rel_global_pool2d,
     "mean over the whole height and width (NCHW): (N, C, 1, 1)", false, .args = "data",
     .rule = "data's dtype, its H and W axes 1 (`layout`)",
     .example = "nn.global_avg_pool2d(reshape(arange(0f, 8f, 1f), newshape=[1, 2, 2, 2]))"},
    POOL_ROW("nn.adaptive_max_pool2d", adaptive_pool2d_attrs, rel_adaptive_pool2d,
             "max pooling to an output_size, windows spread evenly (NCHW)",
             "data's dtype, its H and W axes output_size (one value: both; empty: unchanged)",
             "nn.adaptive_max_pool2d(reshape(arange(0f, 16f, 1f), newshape=[1, 1, 4, 4]), "
             "output_size=[2, 2])"),
    POOL_ROW("nn.adaptive_avg_pool2d", adaptive_pool2d_attrs, rel_adaptive_pool2d,
             "average pooling to an output_size, windows spread evenly (NCHW)",
             "data's dtype, its H and W axes output_size (one value: both; empty: unchanged)",
             "nn.adaptive_avg_pool2d(reshape(arange(0f, 16f, 1f), newshape=[1, 1, 4, 4]), "
             "output_size=[2, 2])"),
    {0},
};
