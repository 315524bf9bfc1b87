/* vision.c — op family "vision": vision.get_valid_counts,
 * vision.non_max_suppression, vision.all_class_non_max_suppression (ONNX's
 * NonMaxSuppression), vision.roi_align and vision.multibox_prior
 * (TVM's relay/op/vision), and vision.roi_align_grad (roi_align's adjoint,
 * for the Gradient pass).
 *
 * Attributes, defaults and fusion patterns are TVM 0.10's: the detection ops
 * are opaque, roi_align fuses with elementwise consumers.  Boxes are rows of
 * a (batch, num_anchors, K) tensor whose columns the attributes name
 * (score_index, id_index, coord_start); the relations check those columns
 * against K when K is known (always at run time), so a kernel never reads
 * past a row.  multibox_prior's sizes, ratios, steps and offsets are lists
 * of numbers (ops/image.h: image_attr_floats). */
#include <string.h>

#include "ops/families.h"
#include "ops/image.h"

static const Span no_span;

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

/* Argument i as a tensor of the given rank and dtype class ('f' float,
 * 'i' integer), or fails naming it. */
static const Type *arg_of(RelCtx *cx, Type **args, int i, const char *what, int rank, char cls) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return NULL;
  DType dt = t->u.tensor.dtype;
  if (cls == 'f' ? !dtype_is_float(dt) : !dtype_is_int(dt))
    return rel_fail(cx, "%s: %s must have %s dtype, got %s", cx->op_name, what,
                    cls == 'f' ? "a float" : "an integer", rel_type_str(cx, t));
  if (t->u.tensor.ndim != rank)
    return rel_fail(cx, "%s: %s must %s, got %s", cx->op_name, what,
                    rank == 0   ? "be a scalar"
                    : rank == 1 ? "be 1-D"
                    : rank == 2 ? "be 2-D"
                                : "be 3-D",
                    rel_type_str(cx, t));
  return t;
}

/* a's dim i equals b's dim j, or fails naming both shapes. */
static bool same_dim(RelCtx *cx, const Type *a, int i, const char *an, const Type *b, int j,
                     const char *bn) {
  if (rel_unify_dim(cx, a->u.tensor.dims[i], b->u.tensor.dims[j])) return true;
  if (i == j)
    rel_fail(cx, "%s: %s %s and %s %s disagree in dim %d", cx->op_name, an,
             rel_tensor_shape_str(cx, a), bn, rel_tensor_shape_str(cx, b), i);
  else
    rel_fail(cx, "%s: %s %s and %s %s disagree (dim %d vs dim %d)", cx->op_name, an,
             rel_tensor_shape_str(cx, a), bn, rel_tensor_shape_str(cx, b), i, j);
  return false;
}

/* The column attribute `key` must lie in [lo, K - span] of rows of K
 * values (checked when K is known); lo -1 allows a negative "none". */
static bool column_ok(RelCtx *cx, const Attrs *attrs, const char *key, Dim k, int64_t span,
                      bool none_ok) {
  int64_t c = rel_attr_int(cx, attrs, key);
  if (cx->err[0]) return false;
  if (none_ok && c < 0) return true;
  if (c >= 0 && (k.kind != DIM_CONST || c + span <= k.value)) return true;
  if (k.kind == DIM_CONST)
    rel_fail(cx, "%s: %s %lld is out of range for boxes of %lld values", cx->op_name, key,
             (long long)c, (long long)k.value);
  else
    rel_fail(cx, "%s: %s must not be negative, got %lld", cx->op_name, key, (long long)c);
  return false;
}

/* get_valid_counts(data (B, N, K), score_threshold) →
 * (valid_count (B) int32, data moved (B, N, K), indices (B, N) int32). */
static Type *rel_get_valid_counts(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                  const Attrs *attrs) {
  const Type *x = arg_of(cx, args, 0, "data", 3, 'f');
  if (!x || !arg_of(cx, args, 1, "score_threshold", 0, 'f')) return NULL;
  const Dim *d = x->u.tensor.dims;
  if (!column_ok(cx, attrs, "score_index", d[2], 1, false) ||
      !column_ok(cx, attrs, "id_index", d[2], 1, true))
    return NULL;
  Type *f[3];
  f[0] = tensor_of(cx, DT_INT32, 1, d);
  f[1] = (Type *)x;
  f[2] = tensor_of(cx, DT_INT32, 2, d);
  return type_tuple(cx->arena, 3, f, no_span);
}

/* non_max_suppression(data (B, N, K), valid_count (B), indices (B, N),
 * max_output_size, iou_threshold): the boxes kept, or with return_indices
 * (their indices (B, N), their count (B, 1)). */
static Type *rel_nms(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  const Type *x = arg_of(cx, args, 0, "data", 3, 'f');
  const Type *vc = x ? arg_of(cx, args, 1, "valid_count", 1, 'i') : NULL;
  const Type *ix = vc ? arg_of(cx, args, 2, "indices", 2, 'i') : NULL;
  if (!ix || !arg_of(cx, args, 3, "max_output_size", 0, 'i') ||
      !arg_of(cx, args, 4, "iou_threshold", 0, 'f') ||
      !same_dim(cx, x, 0, "data", vc, 0, "valid_count") ||
      !same_dim(cx, x, 0, "data", ix, 0, "indices") ||
      !same_dim(cx, x, 1, "data", ix, 1, "indices"))
    return NULL;
  const Dim *d = x->u.tensor.dims;
  if (!column_ok(cx, attrs, "coord_start", d[2], 4, false) ||
      !column_ok(cx, attrs, "score_index", d[2], 1, false) ||
      !column_ok(cx, attrs, "id_index", d[2], 1, true))
    return NULL;
  bool ret_ix = rel_attr_bool(cx, attrs, "return_indices");
  rel_attr_bool(cx, attrs, "force_suppress"), rel_attr_bool(cx, attrs, "invalid_to_bottom");
  rel_attr_int(cx, attrs, "top_k");
  if (cx->err[0]) return NULL;
  if (!ret_ix) return (Type *)x;
  Dim count[2] = {d[0], dim_const(1)};
  Type *f[2] = {tensor_of(cx, DT_INT32, 2, d), tensor_of(cx, DT_INT32, 2, count)};
  return type_tuple(cx->arena, 2, f, no_span);
}

/* roi_align(data, rois (R, 5)): (R, C, ph, pw) for NCHW, (R, ph, pw, C) for NHWC. */
static Type *rel_roi_align(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  const Type *r = x ? arg_of(cx, args, 1, "rois", 2, 'f') : NULL;
  if (!r) return NULL;
  const char *layout = rel_attr_str(cx, attrs, "layout"), *mode = rel_attr_str(cx, attrs, "mode");
  Dim ps[3];
  int n = rel_attr_dims(cx, attrs, "pooled_size", ps, 3);
  rel_attr_float(cx, attrs, "spatial_scale"), rel_attr_int(cx, attrs, "sample_ratio");
  rel_attr_bool(cx, attrs, "aligned");
  if (cx->err[0]) return NULL;
  bool nchw = strcmp(layout, "NCHW") == 0;
  if (!nchw && strcmp(layout, "NHWC") != 0)
    return rel_fail(cx, "%s: unknown layout \"%s\" (expected \"NCHW\" or \"NHWC\")", cx->op_name,
                    layout);
  if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
    return rel_fail(cx, "%s: unknown mode \"%s\" (expected \"avg\" or \"max\")", cx->op_name, mode);
  if (n != 2)
    return rel_fail(cx, "%s: attribute `pooled_size` must list 2 sizes (H, W)", cx->op_name);
  if (!dtype_is_float(x->u.tensor.dtype) || x->u.tensor.ndim != 4)
    return rel_fail(cx, "%s: data must be a 4-D float tensor (%s), got %s", cx->op_name, layout,
                    rel_type_str(cx, x));
  if (!rel_unify_dim(cx, r->u.tensor.dims[1], dim_const(5)))
    return rel_fail(cx, "%s: rois must have shape (num_rois, 5), got %s", cx->op_name,
                    rel_tensor_shape_str(cx, r));
  const Dim *d = x->u.tensor.dims;
  Dim out[4] = {r->u.tensor.dims[0], d[1], ps[0], ps[1]};
  if (!nchw) out[1] = ps[0], out[2] = ps[1], out[3] = d[3];
  return tensor_of(cx, x->u.tensor.dtype, 4, out);
}

/* roi_align_grad(dy, data, rois) → d data: roi_align's adjoint of data
 * for dy (the rois get none). */
static Type *rel_roi_align_grad(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                const Attrs *attrs) {
  Type *y = rel_roi_align(cx, 2, args + 1, values ? values + 1 : NULL, attrs);
  return y && rel_adjoint_of(cx, args, 0, y) ? args[1] : NULL;
}

enum { MB_MAX = 64 }; /* entries of multibox_prior's sizes and ratios */

/* multibox_prior(data (N, C, H, W)) → (1, H * W * (sizes + ratios - 1), 4). */
static Type *rel_multibox_prior(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  if (!dtype_is_float(x->u.tensor.dtype) || x->u.tensor.ndim != 4)
    return rel_fail(cx, "vision.multibox_prior: data must be a 4-D float tensor (NCHW), got %s",
                    rel_type_str(cx, x));
  double buf[MB_MAX];
  static const char *const keys[] = {"sizes", "ratios", "steps", "offsets"};
  int n[4];
  for (int i = 0; i < 4; i++)
    if ((n[i] = image_attr_floats(cx, attrs, keys[i], buf, MB_MAX)) < 0) return NULL;
  rel_attr_bool(cx, attrs, "clip");
  if (cx->err[0]) return NULL;
  for (int i = 0; i < 2; i++)
    if (n[i] < 1) return rel_fail(cx, "vision.multibox_prior: %s must not be empty", keys[i]);
  for (int i = 2; i < 4; i++)
    if (n[i] != 2)
      return rel_fail(cx, "vision.multibox_prior: %s must have 2 entries (y, x), got %d", keys[i],
                      n[i]);
  Dim h = x->u.tensor.dims[2], w = x->u.tensor.dims[3], boxes = dim_any();
  int64_t p;
  if (h.kind == DIM_CONST && w.kind == DIM_CONST &&
      !__builtin_mul_overflow(h.value * w.value, (int64_t)(n[0] + n[1] - 1), &p))
    boxes = dim_const(p);
  Dim out[3] = {dim_const(1), boxes, dim_const(4)};
  return tensor_of(cx, x->u.tensor.dtype, 3, out);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec valid_counts_attrs[] = {{"score_threshold", AV_EXPR, "None"},
                                                {"id_index", AV_INT, "0"},
                                                {"score_index", AV_INT, "1"},
                                                {0}};
static const OpAttrSpec nms_attrs[] = {{"force_suppress", AV_BOOL, "False"},
                                       {"top_k", AV_INT, "-1"},
                                       {"coord_start", AV_INT, "2"},
                                       {"score_index", AV_INT, "1"},
                                       {"id_index", AV_INT, "0"},
                                       {"return_indices", AV_BOOL, "True"},
                                       {"invalid_to_bottom", AV_BOOL, "False"},
                                       {0}};
static const OpAttrSpec all_class_nms_attrs[] = {
    {"output_format", AV_STR, "\"onnx\""}, {"center_point_box", AV_INT, "0"}, {0}};
static const OpAttrSpec roi_align_attrs[] = {{"pooled_size", AV_LIST, NULL},
                                             {"spatial_scale", AV_FLOAT, NULL},
                                             {"sample_ratio", AV_INT, "-1"},
                                             {"layout", AV_STR, "\"NCHW\""},
                                             {"mode", AV_STR, "\"avg\""},
                                             {"aligned", AV_BOOL, "False"},
                                             {0}};
static const OpAttrSpec multibox_prior_attrs[] = {
    {"sizes", AV_EXPR, "[1f]"},       {"ratios", AV_EXPR, "[1f]"},
    {"steps", AV_EXPR, "[-1f, -1f]"}, {"offsets", AV_EXPR, "[0.5f, 0.5f]"},
    {"clip", AV_BOOL, "False"},       {0}};

/* all_class_non_max_suppression(boxes (B, N, 4), scores (B, C, N),
 * max_output_boxes_per_class, iou_threshold, score_threshold): a tuple
 * (int64 (B * C * N, 3) rows (batch, class, box), the first count valid;
 * int64 (1) count), TVM's "onnx" output format. */
static Type *rel_all_class_nms(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *b = arg_of(cx, args, 0, "boxes", 3, 'f');
  const Type *s = b ? arg_of(cx, args, 1, "scores", 3, 'f') : NULL;
  if (!s || !arg_of(cx, args, 2, "max_output_boxes_per_class", 0, 'i') ||
      !arg_of(cx, args, 3, "iou_threshold", 0, 'f') ||
      !arg_of(cx, args, 4, "score_threshold", 0, 'f'))
    return NULL;
  const char *fmt = rel_attr_str(cx, attrs, "output_format");
  int64_t center = rel_attr_int(cx, attrs, "center_point_box");
  if (cx->err[0]) return NULL;
  if (strcmp(fmt, "onnx") != 0)
    return rel_fail(cx, "%s: output_format \"%s\" is not supported (\"onnx\" is)", cx->op_name,
                    fmt);
  if (center != 0 && center != 1)
    return rel_fail(cx, "%s: center_point_box must be 0 or 1", cx->op_name);
  const Dim *bd = b->u.tensor.dims, *sd = s->u.tensor.dims;
  if (!rel_unify_dim(cx, bd[2], dim_const(4)) || !rel_unify_dim(cx, bd[0], sd[0]) ||
      !rel_unify_dim(cx, bd[1], sd[2]))
    return rel_fail(cx, "%s: boxes (B, N, 4) and scores (B, C, N) do not match: %s and %s",
                    cx->op_name, rel_type_str(cx, b), rel_type_str(cx, s));
  Dim rows = dim_any(), one = dim_const(1);
  if (bd[0].kind == DIM_CONST && sd[1].kind == DIM_CONST && bd[1].kind == DIM_CONST)
    rows = dim_const(bd[0].value * sd[1].value * bd[1].value);
  Type **f = ARENA_ARRAY(cx->arena, Type *, 2);
  f[0] = tensor_of(cx, DT_INT64, 2, (Dim[]){rows, dim_const(3)});
  f[1] = tensor_of(cx, DT_INT64, 1, &one);
  return type_tuple(cx->arena, 2, f, no_span);
}

const OpDef ops_family_vision[] = {
    {"vision.get_valid_counts", 2, 2, OPAT_OPAQUE, valid_counts_attrs, rel_get_valid_counts,
     "count and move boxes above a score", false, .args = "boxes, score_threshold",
     .rule =
         "a tuple (valid_count int32 (B), boxes' type, indices int32 (B, N)) for boxes (B, N, K)",
     .example = "vision.get_valid_counts([[[0f, 0.9f, 0f, 0f, 1f, 1f], [0f, 0.1f, 0f, 0f, 1f, "
                "1f]]], 0.5f)"},
    {"vision.non_max_suppression", 5, 5, OPAT_OPAQUE, nms_attrs, rel_nms,
     "drop boxes overlapping a higher-scored one by more than iou_threshold", false,
     .args = "boxes, valid_count, indices, max_output_size, iou_threshold",
     .rule = "boxes' type; with return_indices a tuple (indices int32 (B, N), valid box count "
             "int32 (B, 1))",
     .example = "vision.non_max_suppression([[[0f, 0.9f, 0f, 0f, 1f, 1f], [0f, 0.8f, 0f, 0f, 1f, "
                "1f]]], [2], [[0, 1]], -1, 0.5f)"},
    {"vision.all_class_non_max_suppression", 5, 5, OPAT_OPAQUE, all_class_nms_attrs,
     rel_all_class_nms,
     "per batch and class, the boxes above score_threshold kept greedily by score, dropping "
     "those overlapping a kept one by IoU > iou_threshold (ONNX's NonMaxSuppression)",
     false, .args = "boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold",
     .rule = "a tuple (int64 (B*C*N, 3) rows (batch, class, box), the first `count` valid; int64 "
             "(1) count) for boxes (B, N, 4) and scores (B, C, N)",
     .example = "vision.all_class_non_max_suppression([[[0f, 0f, 1f, 1f], [0f, 0.1f, 1f, 1.1f]]], "
                "[[[0.9f, 0.8f]]], 2i64, 0.5f, 0f)"},
    {"vision.roi_align", 2, 2, OPAT_OUT_EWISE_FUSABLE, roi_align_attrs, rel_roi_align,
     "bilinear pooling of regions", false, .args = "data, rois",
     .rule =
         "(R, C, PH, PW) in data's dtype (`layout`): one pooled_size map per roi; rois is (R, 5)",
     .example = "vision.roi_align(ones(shape=[1, 1, 4, 4]), [[0f, 0f, 0f, 2f, 2f]], "
                "pooled_size=[2, 2], spatial_scale=1f)"},
    {"vision.roi_align_grad", 3, 3, OPAT_OPAQUE, roi_align_attrs, rel_roi_align_grad,
     "roi_align's adjoint of x", false, .args = "dy, data, rois",
     .rule = "data's type; dy has roi_align's result type",
     .example = "vision.roi_align_grad(ones(shape=[1, 1, 2, 2]), ones(shape=[1, 1, 4, 4]), [[0f, "
                "0f, 0f, 2f, 2f]], pooled_size=[2, 2], spatial_scale=1f)"},
    {"vision.multibox_prior", 1, 1, OPAT_OPAQUE, multibox_prior_attrs, rel_multibox_prior,
     "SSD anchor boxes", false, .args = "data",
     .rule = "(1, H*W*(len(sizes)+len(ratios)-1), 4) in data's dtype",
     .example = "vision.multibox_prior(ones(shape=[1, 1, 2, 2]), sizes=[0.5f])"},
    {0},
};
