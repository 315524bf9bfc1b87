/* image.c — op family "image": image.resize1d, image.resize2d,
 * image.resize3d, image.crop_and_resize, image.grid_sample,
 * image.affine_grid (TVM's relay/op/image) and image.grid_sample_grad
 * (grid_sample's adjoints, for the Gradient pass), and the attribute readers
 * ops/image.h declares for their relations, kernels and compute rules.
 *
 * Attributes, defaults and fusion patterns are TVM 0.10's.  Layouts are the
 * unpacked permutations of the canonical one (NCHW, NHWC, CHWN, ...; TVM's
 * packed NCHW4c forms are refused with a message).  Relations copy the
 * batch and channel dims (with their size variables) and take the spatial
 * output dims from the size attribute, which may name size variables too.
 * Everything an attribute can get wrong is reported when the call is type
 * checked: an unknown method or mode, a roi of the wrong length, a layout
 * that is not a permutation, a size list of the wrong length. */
#include "ops/image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"

static const Span no_span;

/* ───────────────────────────── attribute readers ───────────────────────────── */

static const char *const method_names[] = {
#define X(e, n) n,
    RESIZE_METHODS(X)
#undef X
};
static const char *const coord_names[] = {
#define X(e, n) n,
    COORD_MODES(X)
#undef X
};
static const char *const rounding_names[] = {
#define X(e, n) n,
    ROUNDINGS(X)
#undef X
};
static const char *const grid_method_names[] = {
#define X(e, n) n,
    GRID_METHODS(X)
#undef X
};
static const char *const grid_padding_names[] = {
#define X(e, n) n,
    GRID_PADDINGS(X)
#undef X
};

/* ASCII case-insensitive equality (TVM lowercases method names). */
static bool same_name(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
    if (x != *b) return false;
  }
  return *a == *b;
}

/* The index of the string attribute `key` among names[0..n), or -1 after
 * failing with the list of accepted names. */
static int pick_name(RelCtx *cx, const Attrs *attrs, const char *key, const char *const *names,
                     int n, bool fold_case) {
  const char *v = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return -1;
  for (int i = 0; i < n; i++)
    if (fold_case ? same_name(v, names[i]) : strcmp(v, names[i]) == 0) return i;
  StrBuf b = {0};
  for (int i = 0; i < n; i++)
    sb_printf(&b, "%s\"%s\"", i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
  rel_fail(cx, "%s: unknown %s \"%s\" (expected %s)", cx->op_name, key, v, b.data);
  sb_free(&b);
  return -1;
}

#define NAMES(a) a, (int)(sizeof a / sizeof a[0])

/* Positions of the canonical letters (e.g. "NCHW") in `layout`, which must
 * be a permutation of them. */
static bool layout_positions(RelCtx *cx, const char *layout, const char *canon, int *pos) {
  size_t n = strlen(canon);
  bool ok = strlen(layout) == n;
  for (size_t i = 0; ok && i < n; i++) {
    const char *p = strchr(layout, canon[i]);
    ok = p != NULL && canon[i] != 0;
    if (ok) pos[i] = (int)(p - layout);
  }
  if (ok) return true;
  rel_fail(cx, "%s: unsupported layout \"%s\" (expected a permutation of %s, such as %s)",
           cx->op_name, layout, canon, canon);
  return false;
}

static const char *const canon_layouts[] = {"", "NCW", "NCHW", "NCDHW"};

/* The layout attribute `key` for nsp spatial dims into s's axis fields. */
static bool read_layout(RelCtx *cx, const Attrs *attrs, const char *key, int nsp, ResizeSpec *s) {
  const char *layout = rel_attr_str(cx, attrs, key);
  int pos[2 + IMAGE_MAX_SPATIAL];
  if (cx->err[0] || !layout_positions(cx, layout, canon_layouts[nsp], pos)) return false;
  s->batch_axis = pos[0], s->chan_axis = pos[1];
  for (int i = 0; i < nsp; i++) s->sp_axis[i] = pos[2 + i];
  return true;
}

static const OpAttrSpec *spec_of(RelCtx *cx, const char *key) {
  const OpDef *op = cx->op ? cx->op : ops_get(ops_lookup(cx->op_name));
  for (const OpAttrSpec *s = op ? op->attrs : NULL; s && s->name; s++)
    if (strcmp(s->name, key) == 0) return s;
  return NULL;
}

/* Numbers of a default text such as "[0.5f, 0.5f]" or "None". */
static int default_floats(const char *def, double *out, int max) {
  int n = 0;
  if (!def || strcmp(def, "None") == 0) return 0;
  for (const char *p = def; *p;) {
    char *end;
    double v = strtod(p, &end);
    if (end == p) {
      p++;
      continue;
    }
    if (n < max) out[n] = v;
    n++, p = end;
  }
  return n;
}

static bool number_item(const AttrValue *v, double *out) {
  if (v->kind == AV_FLOAT) return *out = v->u.f, true;
  if (v->kind == AV_INT) return *out = (double)v->u.i, true;
  return false;
}

/* Numbers written as a list (or one number), else the row's default text. */
int image_attr_floats(RelCtx *cx, const Attrs *attrs, const char *key, double *out, int max) {
  const AttrValue *v = attrs_get(attrs, key);
  if (!v) {
    const OpAttrSpec *s = spec_of(cx, key);
    RLY_ASSERT(s); /* the caller asked for an attribute its op does not declare */
    int n = default_floats(s->def, out, max);
    return n <= max ? n : -1;
  }
  if (v->kind == AV_NONE) return 0;
  if (number_item(v, out)) return 1;
  bool ok = v->kind == AV_LIST;
  for (int i = 0; ok && i < v->u.list.n && i < max; i++)
    ok = number_item(v->u.list.items[i], &out[i]);
  if (!ok)
    return rel_fail(cx, "%s: attribute `%s` must be a list of numbers", cx->op_name, key), -1;
  if (v->u.list.n > max)
    return rel_fail(cx, "%s: attribute `%s` has more than %d entries", cx->op_name, key, max), -1;
  return v->u.list.n;
}

/* out_dtype: "" or None for the data's dtype. */
static bool read_out_dtype(RelCtx *cx, const Attrs *attrs, ResizeSpec *s) {
  s->out_dtype = rel_attr_dtype(cx, attrs, "out_dtype", DT_INVALID);
  return !cx->err[0];
}

/* roi: None (all 0) or 2 * nsp numbers, starts then ends. */
static bool read_roi(RelCtx *cx, const Attrs *attrs, int nsp, ResizeSpec *s) {
  double roi[2 * IMAGE_MAX_SPATIAL + 1];
  int n = image_attr_floats(cx, attrs, "roi", roi, 2 * IMAGE_MAX_SPATIAL + 1);
  if (n < 0) return false;
  if (n != 0 && n != 2 * nsp)
    return rel_fail(
               cx,
               "%s: attribute `roi` must have %d entries (the starts then the ends of %s), got %d",
               cx->op_name, 2 * nsp, canon_layouts[nsp] + 2, n),
           false;
  for (int i = 0; i < 2 * nsp; i++) s->roi[i] = n ? roi[i] : 0.0;
  return true;
}

/* scales: None (the coordinates scale by in/out) or nsp positive numbers,
 * out/in per spatial axis (ONNX Resize's scales, which need not be exactly
 * the sizes' ratio). */
static bool read_scales(RelCtx *cx, const Attrs *attrs, int nsp, ResizeSpec *s) {
  double sc[IMAGE_MAX_SPATIAL + 1];
  int n = image_attr_floats(cx, attrs, "scales", sc, IMAGE_MAX_SPATIAL + 1);
  if (n < 0) return false;
  if (n != 0 && n != nsp)
    return rel_fail(cx, "%s: attribute `scales` must have %d entries, got %d", cx->op_name, nsp, n),
           false;
  for (int i = 0; i < n; i++)
    if (!(sc[i] > 0))
      return rel_fail(cx, "%s: attribute `scales` must be positive, got %g", cx->op_name, sc[i]),
             false;
  for (int i = 0; i < nsp; i++) s->scales[i] = n ? sc[i] : 0.0;
  return true;
}

/* Every attribute read once and checked; rounding "" resolved as TOPI does. */
bool image_resize_spec(RelCtx *cx, const Attrs *attrs, int nsp, ResizeSpec *s) {
  memset(s, 0, sizeof *s);
  s->nsp = nsp;
  int m = pick_name(cx, attrs, "method", NAMES(method_names), true);
  int c = m < 0 ? -1
                : pick_name(cx, attrs, "coordinate_transformation_mode", NAMES(coord_names), false);
  int r = c < 0 ? -1 : pick_name(cx, attrs, "rounding_method", NAMES(rounding_names), false);
  if (r < 0 || !read_layout(cx, attrs, "layout", nsp, s) || !read_roi(cx, attrs, nsp, s) ||
      !read_scales(cx, attrs, nsp, s) || !read_out_dtype(cx, attrs, s))
    return false;
  s->method = (ResizeMethod)m, s->coord = (CoordMode)c, s->rounding = (Rounding)r;
  if (s->rounding == ROUNDING_AUTO)
    s->rounding = s->coord == COORD_ALIGN_CORNERS ? ROUNDING_ROUND : ROUNDING_FLOOR;
  s->cubic_alpha = rel_attr_float(cx, attrs, "cubic_alpha");
  s->cubic_exclude = rel_attr_int(cx, attrs, "cubic_exclude") != 0;
  s->extrapolation = (float)rel_attr_float(cx, attrs, "extrapolation_value");
  return !cx->err[0];
}

/* crop_and_resize accepts what TVM's TOPI does: "bilinear" (= linear),
 * "nearest_neighbor", and the resize names "linear" and "cubic". */
static const char *const crop_method_names[] = {"nearest_neighbor", "bilinear", "cubic", "linear"};

bool image_crop_spec(RelCtx *cx, const Attrs *attrs, ResizeSpec *s) {
  memset(s, 0, sizeof *s);
  s->nsp = 2;
  int m = pick_name(cx, attrs, "method", NAMES(crop_method_names), true);
  if (m < 0 || !read_layout(cx, attrs, "layout", 2, s) || !read_out_dtype(cx, attrs, s))
    return false;
  s->method = m == 0 ? RESIZE_NEAREST : m == 2 ? RESIZE_CUBIC : RESIZE_LINEAR;
  s->coord = COORD_TF_CROP_AND_RESIZE, s->rounding = ROUNDING_ROUND;
  s->cubic_alpha = -0.5;
  s->extrapolation = (float)rel_attr_float(cx, attrs, "extrapolation_value");
  return !cx->err[0];
}

/* TOPI's can_convert_multiply_to_intdiv, whose constants fold in double. */
bool image_resize_int_div(int64_t n, int64_t t) {
  if (n <= 0) return false;
  double ratio = (double)t / (double)n, limit = 1.0 / (1e-5 * (double)n + 1e-5);
  return ratio == floor(ratio) && !(ratio > limit);
}

/* grid_sample's names and layout; bicubic has no 3-D form in TOPI. */
bool image_grid_spec(RelCtx *cx, const Attrs *attrs, int rank, GridSpec *s) {
  memset(s, 0, sizeof *s);
  s->nsp = rank - 2;
  int m = pick_name(cx, attrs, "method", NAMES(grid_method_names), false);
  int p = m < 0 ? -1 : pick_name(cx, attrs, "padding_mode", NAMES(grid_padding_names), false);
  if (p < 0) return false;
  const char *layout = rel_attr_str(cx, attrs, "layout");
  if (cx->err[0]) return false;
  const char *want = rank == 5 ? "NCDHW" : "NCHW";
  if (strcmp(layout, want) != 0)
    return rel_fail(cx, "%s: layout \"%s\" is not supported for data of rank %d (expected \"%s\")",
                    cx->op_name, layout, rank, want),
           false;
  if (rank == 5 && m == GRID_BICUBIC)
    return rel_fail(cx, "%s: method \"bicubic\" needs 4-D data (NCHW)", cx->op_name), false;
  s->method = (GridMethod)m, s->padding = (GridPadding)p;
  s->align_corners = rel_attr_bool(cx, attrs, "align_corners");
  return !cx->err[0];
}

/* ───────────────────────────── relations ───────────────────────────── */

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static bool has_rank(RelCtx *cx, const Type *t, int rank, const char *what, const char *layout) {
  if (t->u.tensor.ndim == rank) return true;
  rel_fail(cx, "%s: %s must have rank %d%s%s, got %s", cx->op_name, what, rank,
           layout ? " for layout " : "", layout ? layout : "", rel_type_str(cx, t));
  return false;
}

static bool is_float(RelCtx *cx, const Type *t, const char *what) {
  if (dtype_is_float(t->u.tensor.dtype)) return true;
  rel_fail(cx, "%s: %s must have a float dtype, got %s", cx->op_name, what,
           dtype_name(t->u.tensor.dtype));
  return false;
}

static bool is_int(RelCtx *cx, const Type *t, const char *what) {
  if (dtype_is_int(t->u.tensor.dtype)) return true;
  rel_fail(cx, "%s: %s must be integers, got %s", cx->op_name, what, dtype_name(t->u.tensor.dtype));
  return false;
}

/* dims a[i] and b[j] must be equal; fails naming both shapes. */
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

/* A size-list attribute with exactly n entries (size variables allowed). */
static bool size_attr(RelCtx *cx, const Attrs *attrs, const char *key, int n, const char *what,
                      Dim *out) {
  int k = rel_attr_dims(cx, attrs, key, out, IMAGE_MAX_SPATIAL + 1);
  if (cx->err[0]) return false;
  if (k == n) return true;
  if (k < 0)
    rel_fail(cx, "%s: attribute `%s` must list %d sizes (%s), got None", cx->op_name, key, n, what);
  else
    rel_fail(cx, "%s: attribute `%s` must list %d sizes (%s), got %d", cx->op_name, key, n, what,
             k);
  return false;
}

static bool known_positive(Dim d) { return d.kind == DIM_CONST && d.value > 0; }

/* The resized type: x's dims with the spatial ones replaced by size; an
 * empty input axis cannot give a non-empty output. */
static Type *resized(RelCtx *cx, const Type *x, const ResizeSpec *s, const Dim *size,
                     int batch_from, const Type *boxes) {
  Dim out[2 + IMAGE_MAX_SPATIAL];
  int rank = s->nsp + 2;
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)rank);
  if (boxes) out[s->batch_axis] = boxes->u.tensor.dims[batch_from];
  for (int i = 0; i < s->nsp; i++) out[s->sp_axis[i]] = size[i];
  bool nonempty = true;
  for (int i = 0; i < rank; i++) nonempty = nonempty && known_positive(out[i]);
  for (int i = 0; i < s->nsp && nonempty; i++) {
    Dim d = x->u.tensor.dims[s->sp_axis[i]];
    if (d.kind == DIM_CONST && d.value == 0)
      return rel_fail(cx, "%s: cannot resize the empty axis %c of %s to %lld", cx->op_name,
                      canon_layouts[s->nsp][2 + i], rel_tensor_shape_str(cx, x),
                      (long long)size[i].value);
  }
  DType dt = s->out_dtype == DT_INVALID ? x->u.tensor.dtype : s->out_dtype;
  return tensor_of(cx, dt, rank, out);
}

Type *image_resize_type(RelCtx *cx, Type **args, const Attrs *attrs, int nsp, const Dim *size) {
  const Type *x = rel_tensor(cx, args, 0);
  ResizeSpec s;
  if (!x || !image_resize_spec(cx, attrs, nsp, &s) ||
      !has_rank(cx, x, nsp + 2, "data", rel_attr_str(cx, attrs, "layout")))
    return NULL;
  return resized(cx, x, &s, size, 0, NULL);
}

static Type *resize_rel(RelCtx *cx, Type **args, const Attrs *attrs, int nsp) {
  Dim size[IMAGE_MAX_SPATIAL + 1];
  static const char *const what[] = {"", "the output W", "the output H, W", "the output D, H, W"};
  if (!size_attr(cx, attrs, "size", nsp, what[nsp], size)) return NULL;
  return image_resize_type(cx, args, attrs, nsp, size);
}

static Type *rel_resize1d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  return resize_rel(cx, args, attrs, 1);
}

static Type *rel_resize2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  return resize_rel(cx, args, attrs, 2);
}

static Type *rel_resize3d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  return resize_rel(cx, args, attrs, 3);
}

/* crop_and_resize(data, boxes (B, 4), box_indices (B)): B crops of
 * crop_size each. */
static Type *rel_crop_and_resize(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                 const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  const Type *boxes = x ? rel_tensor(cx, args, 1) : NULL;
  const Type *ix = boxes ? rel_tensor(cx, args, 2) : NULL;
  ResizeSpec s;
  Dim size[IMAGE_MAX_SPATIAL + 1];
  if (!ix || !image_crop_spec(cx, attrs, &s) ||
      !has_rank(cx, x, 4, "data", rel_attr_str(cx, attrs, "layout")) ||
      !has_rank(cx, boxes, 2, "boxes", NULL) || !has_rank(cx, ix, 1, "box_indices", NULL) ||
      !is_float(cx, boxes, "boxes") || !is_int(cx, ix, "box_indices") ||
      !size_attr(cx, attrs, "crop_size", 2, "the crop's H, W", size))
    return NULL;
  if (!rel_unify_dim(cx, boxes->u.tensor.dims[1], dim_const(4)))
    return rel_fail(cx, "image.crop_and_resize: boxes must have shape (num_boxes, 4), got %s",
                    rel_tensor_shape_str(cx, boxes));
  if (!same_dim(cx, boxes, 0, "boxes", ix, 0, "box_indices")) return NULL;
  return resized(cx, x, &s, size, 0, boxes);
}

/* grid_sample(data (N, C, [D,] H, W), grid (N, 2|3, [D',] H', W')). */
static Type *rel_grid_sample(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  const Type *g = x ? rel_tensor(cx, args, 1) : NULL;
  if (!g) return NULL;
  int rank = x->u.tensor.ndim;
  if (rank != 4 && rank != 5)
    return rel_fail(cx, "%s: data must have rank 4 (NCHW) or 5 (NCDHW), got %s", cx->op_name,
                    rel_type_str(cx, x));
  GridSpec s;
  if (!image_grid_spec(cx, attrs, rank, &s) || !has_rank(cx, g, rank, "grid", NULL) ||
      !is_float(cx, x, "data") || !is_float(cx, g, "grid") ||
      !same_dim(cx, x, 0, "data", g, 0, "grid"))
    return NULL;
  if (!rel_unify_dim(cx, g->u.tensor.dims[1], dim_const(rank - 2)))
    return rel_fail(cx, "%s: grid %s must have %d coordinates in dim 1", cx->op_name,
                    rel_tensor_shape_str(cx, g), rank - 2);
  Dim out[5];
  out[0] = x->u.tensor.dims[0], out[1] = x->u.tensor.dims[1];
  for (int i = 2; i < rank; i++) out[i] = g->u.tensor.dims[i];
  return tensor_of(cx, x->u.tensor.dtype, rank, out);
}

/* grid_sample_grad(dy, data, grid) → (d data, d grid): the adjoints of
 * grid_sample(data, grid) for dy, bilinear (trilinear) or nearest. */
static Type *rel_grid_sample_grad(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                  const Attrs *attrs) {
  Type *y = rel_grid_sample(cx, 2, args + 1, values ? values + 1 : NULL, attrs);
  if (!y || !rel_adjoint_of(cx, args, 0, y)) return NULL;
  if (!strcmp(rel_attr_str(cx, attrs, "method"), "bicubic"))
    return rel_fail(cx,
                    "image.grid_sample_grad: method \"bicubic\" has no adjoint here "
                    "(bilinear and nearest have)");
  Type *f[2] = {args[1], args[2]};
  return type_tuple(cx->arena, 2, f, no_span);
}

/* affine_grid(theta (B, 2, 3), target_shape=[H, W]) → (B, 2, H, W). */
static Type *rel_affine_grid(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  Dim hw[IMAGE_MAX_SPATIAL + 1];
  if (!x || !is_float(cx, x, "data") ||
      !size_attr(cx, attrs, "target_shape", 2, "the grid's H, W", hw))
    return NULL;
  if (x->u.tensor.ndim != 3 || !rel_unify_dim(cx, x->u.tensor.dims[1], dim_const(2)) ||
      !rel_unify_dim(cx, x->u.tensor.dims[2], dim_const(3)))
    return rel_fail(
        cx, "image.affine_grid: data must be affine matrices of shape (batch, 2, 3), got %s",
        rel_type_str(cx, x));
  for (int i = 0; i < 2; i++)
    if (hw[i].kind == DIM_CONST && hw[i].value < 2)
      return rel_fail(cx, "image.affine_grid: target_shape %s must be at least 2 in each dim",
                      rel_shape_str(cx, 2, hw));
  Dim out[4] = {x->u.tensor.dims[0], dim_const(2), hw[0], hw[1]};
  return tensor_of(cx, x->u.tensor.dtype, 4, out);
}

/* ───────────────────────────── table ───────────────────────────── */

#define RESIZE_ATTRS(layout)                                                        \
  {"size", AV_LIST, "None"}, {"roi", AV_EXPR, "None"}, {"layout", AV_STR, layout},  \
      {"method", AV_STR, "\"linear\""},                                             \
      {"coordinate_transformation_mode", AV_STR, "\"half_pixel\""},                 \
      {"rounding_method", AV_STR, "\"round\""}, {"cubic_alpha", AV_FLOAT, "-0.5f"}, \
      {"cubic_exclude", AV_INT, "0"}, {"extrapolation_value", AV_FLOAT, "0f"},      \
      {"scales", AV_EXPR, "None"}, {"out_dtype", AV_STR, "\"\""}, {0}

static const OpAttrSpec resize1d_attrs[] = {RESIZE_ATTRS("\"NCW\"")};
const OpAttrSpec image_resize2d_attrs[] = {RESIZE_ATTRS("\"NCHW\"")};
static const OpAttrSpec resize3d_attrs[] = {RESIZE_ATTRS("\"NCDHW\"")};
static const OpAttrSpec crop_attrs[] = {
    {"crop_size", AV_LIST, "None"},     {"layout", AV_STR, "\"NCHW\""},
    {"method", AV_STR, "\"bilinear\""}, {"extrapolation_value", AV_FLOAT, "0f"},
    {"out_dtype", AV_STR, "\"\""},      {0}};
static const OpAttrSpec grid_sample_attrs[] = {{"method", AV_STR, "\"bilinear\""},
                                               {"layout", AV_STR, "\"NCHW\""},
                                               {"padding_mode", AV_STR, "\"zeros\""},
                                               {"align_corners", AV_BOOL, "True"},
                                               {0}};
static const OpAttrSpec affine_grid_attrs[] = {{"target_shape", AV_LIST, NULL}, {0}};

const OpDef ops_family_image[] = {
    {"image.resize1d", 1, 1, OPAT_INJECTIVE, resize1d_attrs, rel_resize1d, "resize W", false,
     .args = "data", .rule = "data's dtype (or out_dtype), its W axis `size`",
     .example = "image.resize1d([[[1f, 2f]]], size=[4])"},
    {"image.resize2d", 1, 1, OPAT_INJECTIVE, image_resize2d_attrs, rel_resize2d,
     "resize H, "
     "W",
     false, .args = "data",
     .rule = "data's dtype (or out_dtype), its H and W axes `size` (`layout`)",
     .example =
         "image.resize2d(ones(shape=[1, 1, 2, 2]), size=[3, 3], method=\"nearest_neighbor\")"},
    {"image.resize3d", 1, 1, OPAT_INJECTIVE, resize3d_attrs, rel_resize3d, "resize D, H, W", false,
     .args = "data", .rule = "data's dtype (or out_dtype), its D, H and W axes `size`",
     .example = "image.resize3d(ones(shape=[1, 1, 1, 2, 2]), size=[2, 4, 4])"},
    {"image.crop_and_resize", 3, 3, OPAT_INJECTIVE, crop_attrs, rel_crop_and_resize,
     "resize boxes of images", false, .args = "data, boxes, box_indices",
     .rule = "data's dtype (or out_dtype): its batch the boxes' count, its H and W crop_size "
             "(`layout`); boxes (B, 4), box_indices (B)",
     .example = "image.crop_and_resize(ones(shape=[1, 1, 4, 4]), [[0f, 0f, 1f, 1f]], [0], "
                "crop_size=[2, 2])"},
    {"image.grid_sample", 2, 2, OPAT_INJECTIVE, grid_sample_attrs, rel_grid_sample,
     "sample at grid "
     "points",
     false, .args = "data, grid",
     .rule = "data's dtype: (N, C, grid's H, grid's W) (3-D: D too); grid is (N, 2, H, W) or (N, "
             "3, D, H, W)",
     .example = "image.grid_sample(ones(shape=[1, 1, 2, 2]), zeros(shape=[1, 2, 2, 2]))"},
    {"image.grid_sample_grad", 3, 3, OPAT_OPAQUE, grid_sample_attrs, rel_grid_sample_grad,
     "grid_sample's adjoints "
     "(dx, dgrid)",
     false, .args = "dy, data, grid",
     .rule = "a tuple (data's type, grid's type); dy has grid_sample's result type",
     .example = "image.grid_sample_grad(ones(shape=[1, 1, 2, 2]), ones(shape=[1, 1, 2, 2]), "
                "zeros(shape=[1, 2, 2, 2]))"},
    {"image.affine_grid", 1, 1, OPAT_INJECTIVE, affine_grid_attrs, rel_affine_grid,
     "the sampling grid of affine maps", false, .args = "theta",
     .rule = "(N, 2, H, W) in theta's dtype for target_shape (H, W); theta is (N, 2, 3)",
     .example = "image.affine_grid([[[1f, 0f, 0f], [0f, 1f, 0f]]], target_shape=[2, 2])"},
    {0},
};
