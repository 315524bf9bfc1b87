/* onnx_index.c — the indexing, resizing and vision converters of the ONNX
 * importer: GatherElements, GatherND, ScatterElements (and its old name
 * Scatter), ScatterND, OneHot, DepthToSpace, SpaceToDepth,
 * ReverseSequence, Unique, MaxUnpool, GridSample, Resize and Upsample.
 *
 * ONNX's index tuples are the last axis of indices (Y..., M); Relay's
 * gather_nd and scatter_nd take them first (M, Y...), so those converters
 * transpose.  Negative indices read from the end in the Relay ops
 * themselves.  Resize passes ONNX's scales to image.resize{1,2,3}d when
 * they are given (the coordinates follow the scale, not the sizes' ratio);
 * what the Relay ops cannot express (a reduction other than add, antialias,
 * resizing N or C) is refused naming the attribute. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx_int.h"

static bool set_out(OnnxCx *cx, FeVal *v) {
  if (!v) return false;
  cx->out[0] = v;
  return true;
}

/* The node's input i when given (an omitted optional input is NULL). */
static FeVal *opt_in(OnnxCx *cx, int i) { return i < cx->nin ? cx->in[i] : NULL; }

/* v with its last axis moved first (ONNX's index tuples into Relay's). */
static FeVal *last_axis_first(OnnxCx *cx, FeVal *v) {
  int r = fe_rank(v);
  int64_t axes[TENSOR_MAX_RANK] = {r - 1};
  for (int i = 0; i + 1 < r; i++) axes[i + 1] = i;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axes", r, axes);
  return FE_OP(cx, "transpose", ab_done(&b), v);
}

/* A list of float32 numbers as attribute key. */
static void ab_float_list(AttrB *b, const char *key, int n, const double *v) {
  AttrValue *l = ARENA_NEW(b->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(b->a, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++)
    l->u.list.items[i] = attr_float(b->a, (double)(float)v[i], DT_FLOAT32);
  RLY_ASSERT(b->n < FE_MAX_ATTRS);
  b->keys[b->n] = key, b->vals[b->n++] = l;
}

/* ───────────────────────── gathers and scatters ───────────────────────── */

bool onnx_convert_gather_elements(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int axis = fe_axis(cx, oa_int(cx, "axis", 0), fe_rank(x), "axis");
  if (axis < 0) return false;
  if (fe_rank(cx->in[1]) != fe_rank(x))
    return fe_fail(cx, "indices have rank %d but the data has rank %d", fe_rank(cx->in[1]),
                   fe_rank(x));
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  return set_out(cx, FE_OP(cx, "gather", ab_done(&b), x, cx->in[1]));
}

bool onnx_convert_gather_nd(OnnxCx *cx) {
  FeVal *ix = cx->in[1];
  if (fe_rank(ix) < 1) return fe_fail(cx, "indices must have rank 1 or more");
  AttrB b = ab_new(cx);
  ab_int(&b, "batch_dims", oa_int(cx, "batch_dims", 0));
  return set_out(cx, FE_OP(cx, "gather_nd", ab_done(&b), cx->in[0], last_axis_first(cx, ix)));
}

/* reduction "none" writes (0), "add" adds (1), "mul" multiplies (2, ScatterND
 * only); the others are refused. */
static int read_reduction(OnnxCx *cx, bool mul) {
  const char *r = oa_str(cx, "reduction", "none");
  if (!r) return -1;
  if (strcmp(r, "none") == 0) return 0;
  if (strcmp(r, "add") == 0) return 1;
  if (mul && strcmp(r, "mul") == 0) return 2;
  return fe_fail(cx, "reduction \"%s\" is not supported (none, add%s are)", r, mul ? ", mul" : ""),
         -1;
}

/* ScatterElements (opset 11+) and Scatter (opset 9-10, the same op). */
bool onnx_convert_scatter_elements(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  int axis = fe_axis(cx, oa_int(cx, "axis", 0), fe_rank(x), "axis");
  int red = axis < 0 ? -1 : read_reduction(cx, false);
  if (red < 0) return false;
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  const char *op = red ? "scatter_add" : "scatter";
  return set_out(cx, FE_OP(cx, op, ab_done(&b), x, cx->in[1], cx->in[2]));
}

bool onnx_convert_scatter_nd(OnnxCx *cx) {
  int red = read_reduction(cx, true);
  if (red < 0) return false;
  FeVal *ix = cx->in[1];
  if (fe_rank(ix) < 1) return fe_fail(cx, "indices must have rank 1 or more");
  AttrB b = ab_new(cx);
  ab_str(&b, "mode", red == 2 ? "mul" : red ? "add" : "update");
  return set_out(
      cx, FE_OP(cx, "scatter_nd", ab_done(&b), cx->in[0], last_axis_first(cx, ix), cx->in[2]));
}

/* ───────────────────────────── OneHot ───────────────────────────── */

/* Element i of a 1-D value (a 0-D result). */
static FeVal *element(OnnxCx *cx, FeVal *v, int64_t i) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 0);
  return FE_OP(cx, "take", ab_done(&b), v, fe_scalar(cx, DT_INT64, (double)i));
}

/* OneHot(indices, depth, values = [off, on]): indices in [-depth, depth)
 * (negative ones count from the end, as numpy's); others give all off.  A
 * depth known only at run time makes it dyn.one_hot. */
bool onnx_convert_one_hot(OnnxCx *cx) {
  FeVal *ix = cx->in[0], *vals = cx->in[2], *dv = cx->in[1];
  if (fe_rank(vals) != 1 || fe_dim(vals, 0).kind != DIM_CONST || fe_dim(vals, 0).value != 2)
    return fe_fail(cx, "values must be a 1-D tensor of 2 elements [off, on]");
  int r = fe_rank(ix);
  int64_t axis = oa_int(cx, "axis", -1);
  if (axis < -r - 1 || axis > r) return fe_fail(cx, "axis %lld is out of range", (long long)axis);
  if (axis < 0) axis += r + 1;
  AttrB sb = ab_new(cx), b = ab_new(cx);
  ab_ints(&sb, "newshape", 0, NULL);
  FeVal *depth = fe_cast(cx, dv, DT_INT64);
  depth = depth ? FE_OP(cx, "reshape", ab_done(&sb), depth) : NULL;
  ix = depth ? fe_cast(cx, ix, DT_INT64) : NULL;
  FeVal *neg = ix ? FE_OP(cx, "less", NULL, ix, fe_scalar(cx, DT_INT64, 0)) : NULL;
  FeVal *wrapped = neg ? FE_OP(cx, "add", NULL, ix, depth) : NULL;
  ix = wrapped ? FE_OP(cx, "where", NULL, neg, wrapped, ix) : NULL;
  FeVal *off = element(cx, vals, 0), *on = element(cx, vals, 1);
  if (!ix || !off || !on) return false;
  ab_int(&b, "axis", axis == r ? -1 : axis);
  ab_str(&b, "dtype", dtype_name(fe_dtype(vals)));
  if (depth->value) {
    ab_int(&b, "depth", tensor_get_i64(depth->value, 0));
    return set_out(cx, FE_OP(cx, "one_hot", ab_done(&b), ix, on, off));
  }
  return set_out(cx, FE_OP(cx, "dyn.one_hot", ab_done(&b), ix, on, off, depth));
}

/* ───────────────────── DepthToSpace, SpaceToDepth ───────────────────── */

bool onnx_convert_depth_to_space(OnnxCx *cx) {
  bool d2s = strcmp(cx->node->op_type, "DepthToSpace") == 0;
  if (fe_rank(cx->in[0]) != 4) return fe_fail(cx, "the input must be 4-D (NCHW)");
  const char *mode = d2s ? oa_str(cx, "mode", "DCR") : "DCR";
  if (!mode) return false;
  if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
    return fe_fail(cx, "mode \"%s\" is not DCR or CRD", mode);
  AttrB b = ab_new(cx);
  ab_int(&b, "block_size", oa_int(cx, "blocksize", 0));
  if (d2s) ab_str(&b, "mode", mode);
  return set_out(
      cx, FE_OP(cx, d2s ? "nn.depth_to_space" : "nn.space_to_depth", ab_done(&b), cx->in[0]));
}

bool onnx_convert_reverse_sequence(OnnxCx *cx) {
  AttrB b = ab_new(cx);
  ab_int(&b, "seq_axis", oa_int(cx, "time_axis", 0));
  ab_int(&b, "batch_axis", oa_int(cx, "batch_axis", 1));
  return set_out(cx, FE_OP(cx, "reverse_sequence", ab_done(&b), cx->in[0], cx->in[1]));
}

/* ───────────────────────── NonZero, Compress ───────────────────────── */

/* NonZero(x): int64 (rank, count), the coordinates of x's nonzeros. */
bool onnx_convert_non_zero(OnnxCx *cx) {
  int64_t axes[2] = {1, 0};
  AttrB b = ab_new(cx);
  ab_ints(&b, "axes", 2, axes);
  FeVal *w = FE_OP(cx, "argwhere", NULL, cx->in[0]);
  w = w ? fe_cast(cx, w, DT_INT64) : NULL;
  return set_out(cx, w ? FE_OP(cx, "transpose", ab_done(&b), w) : NULL);
}

/* v reshaped to 1-D. */
static FeVal *flatten1(OnnxCx *cx, FeVal *v) {
  int64_t flat = -1;
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", 1, &flat);
  return v ? FE_OP(cx, "reshape", ab_done(&b), v) : NULL;
}

/* Compress(x, condition[, axis]): the slices of x along axis (of the
 * flattened x without one) where condition is true. */
bool onnx_convert_compress(OnnxCx *cx) {
  FeVal *x = cx->in[0], *c = cx->in[1];
  if (fe_rank(c) != 1) return fe_fail(cx, "condition must be 1-D");
  int axis = 0;
  if (oa_get(cx, "axis")) {
    if ((axis = fe_axis(cx, oa_int(cx, "axis", 0), fe_rank(x), "axis")) < 0) return false;
  } else {
    x = flatten1(cx, x);
  }
  FeVal *ix = flatten1(cx, FE_OP(cx, "argwhere", NULL, c));
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  ab_str(&b, "mode", "fast");
  return set_out(cx, x && ix ? FE_OP(cx, "take", ab_done(&b), x, ix) : NULL);
}

/* ───────────────────────────── Unique ───────────────────────────── */

/* The first n (a run-time 1-D count) entries of a 1-D value. */
static FeVal *first_n(OnnxCx *cx, FeVal *v, FeVal *n) {
  int64_t zero = 0, one = 1;
  return FE_OP(cx, "dyn.strided_slice", NULL, v, fe_ints(cx, DT_INT64, 1, &zero), n,
               fe_ints(cx, DT_INT64, 1, &one));
}

/* v transposed by perm (n axes). */
static FeVal *permute(OnnxCx *cx, FeVal *v, int n, const int64_t *perm) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "axes", n, perm);
  return v ? FE_OP(cx, "transpose", ab_done(&b), v) : NULL;
}

static FeVal *reshape_to(OnnxCx *cx, FeVal *v, int n, const int64_t *shape) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, shape);
  return v ? FE_OP(cx, "reshape", ab_done(&b), v) : NULL;
}

/* Unique with axis: the slices along axis as the rows of a 2-D unique
 * (axis moved first), the unique rows put back in x's layout. */
static FeVal *unique_axis_in(OnnxCx *cx, FeVal *x, int axis, int64_t *perm, int64_t *rest) {
  int r = fe_rank(x);
  int64_t shape[TENSOR_MAX_RANK], two[2] = {0, -1};
  if (!fe_static_shape(x, shape)) return FE_FAIL_NULL(cx, "Unique with axis needs a static shape");
  perm[0] = axis;
  for (int i = 0, k = 1; i < r; i++)
    if (i != axis) perm[k++] = i;
  for (int i = 0; i < r; i++) rest[i] = i ? shape[perm[i]] : -1;
  return reshape_to(cx, permute(cx, x, r, perm), 2, two);
}

static FeVal *unique_axis_out(OnnxCx *cx, FeVal *rows, int r, const int64_t *perm,
                              const int64_t *rest) {
  int64_t inv[TENSOR_MAX_RANK];
  for (int i = 0; i < r; i++) inv[perm[i]] = i;
  return permute(cx, reshape_to(cx, rows, r, rest), r, inv);
}

/* Unique: relay's unique over the flattened input (or the rows of the
 * slices along axis), its outputs cut to the number of unique values;
 * int64 indices. */
bool onnx_convert_unique(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  bool has_axis = oa_get(cx, "axis") != NULL;
  int r = fe_rank(x), axis = has_axis ? fe_axis(cx, oa_int(cx, "axis", 0), r, "axis") : 0;
  int64_t flat = -1, perm[TENSOR_MAX_RANK], rest[TENSOR_MAX_RANK];
  if (axis < 0) return false;
  x = has_axis ? unique_axis_in(cx, x, axis, perm, rest) : reshape_to(cx, x, 1, &flat);
  AttrB b = ab_new(cx);
  ab_bool(&b, "sorted", oa_int(cx, "sorted", 1) != 0);
  ab_bool(&b, "return_counts", true);
  FeVal *u = x ? FE_OP(cx, "unique", ab_done(&b), x) : NULL;
  FeVal *n = u ? fe_cast(cx, fe_get(cx, u, 3), DT_INT64) : NULL;
  if (!n) return false;
  static const int field[4] = {0, 1, 2, 4};
  for (int i = 0; i < cx->nout && i < 4; i++) {
    if (!*cx->node->output[i]) continue;
    FeVal *f = fe_get(cx, u, field[i]);
    if (f && i) f = fe_cast(cx, f, DT_INT64);
    if (f && i != 2) f = first_n(cx, f, n);
    if (f && i == 0 && has_axis) f = unique_axis_out(cx, f, r, perm, rest);
    if (!f) return false;
    cx->out[i] = f;
  }
  return true;
}

/* ───────────────────────── NonMaxSuppression ───────────────────────── */

/* An optional 0-D or 1-element input as a 0-D value of dtype dt (dflt when
 * omitted). */
static FeVal *scalar_in(OnnxCx *cx, int i, DType dt, double dflt) {
  FeVal *v = opt_in(cx, i);
  if (!v) return fe_scalar(cx, dt, dflt);
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", 0, NULL);
  v = fe_cast(cx, v, dt);
  return v ? FE_OP(cx, "reshape", ab_done(&b), v) : NULL;
}

/* NonMaxSuppression: vision.all_class_non_max_suppression's rows cut to
 * its count (a run-time `?`). */
bool onnx_convert_nms(OnnxCx *cx) {
  FeVal *mo = scalar_in(cx, 2, DT_INT64, 0), *iou = scalar_in(cx, 3, DT_FLOAT32, 0);
  FeVal *st = scalar_in(cx, 4, DT_FLOAT32, -INFINITY);
  if (!mo || !iou || !st) return false;
  AttrB b = ab_new(cx);
  ab_int(&b, "center_point_box", oa_int(cx, "center_point_box", 0));
  FeVal *r = FE_OP(cx, "vision.all_class_non_max_suppression", ab_done(&b), cx->in[0], cx->in[1],
                   mo, iou, st);
  FeVal *rows = r ? fe_get(cx, r, 0) : NULL, *n = r ? fe_get(cx, r, 1) : NULL;
  return set_out(cx, rows && n ? first_n(cx, rows, n) : NULL);
}

/* ───────────────────────── TfIdfVectorizer ───────────────────────── */

/* TfIdfVectorizer on integer tokens (pool_int64s); string pools refused. */
bool onnx_convert_tfidf(OnnxCx *cx) {
  enum { MAXL = 1024 };
  int64_t *pool = ARENA_ARRAY(cx->a, int64_t, MAXL), *counts = ARENA_ARRAY(cx->a, int64_t, MAXL);
  int64_t *ix = ARENA_ARRAY(cx->a, int64_t, MAXL);
  if (oa_get(cx, "pool_strings"))
    return fe_fail(cx, "string pools (pool_strings) are not supported");
  int np = oa_ints(cx, "pool_int64s", pool, MAXL), nc = oa_ints(cx, "ngram_counts", counts, MAXL);
  int ni = oa_ints(cx, "ngram_indexes", ix, MAXL);
  double w[MAXL];
  int nw = oa_floats(cx, "weights", w, MAXL);
  if (np < 0 || nc < 0 || ni < 0 || np >= MAXL || nc >= MAXL || ni >= MAXL || nw >= MAXL)
    return cx->failed
               ? false
               : fe_fail(
                     cx,
                     "pool_int64s, ngram_counts and ngram_indexes must be given (at most %d each)",
                     MAXL - 1);
  const char *mode = oa_str(cx, "mode", "TF");
  if (!mode) return false;
  AttrB b = ab_new(cx);
  ab_int(&b, "min_gram_length", oa_int(cx, "min_gram_length", 1));
  ab_int(&b, "max_gram_length", oa_int(cx, "max_gram_length", 1));
  ab_int(&b, "max_skip_count", oa_int(cx, "max_skip_count", 0));
  ab_str(&b, "mode", mode);
  ab_ints(&b, "ngram_counts", nc, counts);
  ab_ints(&b, "ngram_indexes", ni, ix);
  ab_ints(&b, "pool_int64s", np, pool);
  if (nw > 0) ab_float_list(&b, "weights", nw, w);
  return set_out(cx, FE_OP(cx, "tfidf_vectorizer", ab_done(&b), cx->in[0]));
}

/* ───────────────────────────── MaxUnpool ───────────────────────────── */

/* The default output size of one spatial axis. */
static int64_t unpool_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
  return (in - 1) * s - p0 - p1 + k;
}

/* The default unpooled tensor: zeros of shape def with X written at I's
 * flat positions (scatter into a flat tensor, reshaped). */
static FeVal *unpool_default(OnnxCx *cx, FeVal *x, FeVal *ix, int r, const int64_t *def) {
  int64_t total = 1, flat = -1;
  for (int i = 0; i < r; i++) total *= def[i];
  AttrB zb = ab_new(cx), sb = ab_new(cx);
  ab_ints(&zb, "shape", 1, &total);
  ab_str(&zb, "dtype", dtype_name(fe_dtype(x)));
  ab_int(&sb, "axis", 0);
  FeVal *z = fe_op(cx, "zeros", 0, NULL, ab_done(&zb));
  FeVal *fi = reshape_to(cx, ix, 1, &flat), *fx = reshape_to(cx, x, 1, &flat);
  FeVal *y = z && fi && fx ? FE_OP(cx, "scatter", ab_done(&sb), z, fi, fx) : NULL;
  return reshape_to(cx, y, r, def);
}

/* y (of shape def) padded with zeros at the end of each axis to the
 * output_shape os, which must not be smaller: checked here when os is
 * known, else at run time (pads of max(os - def, 0), then a broadcast to
 * os, which fails where os is smaller). */
static FeVal *unpool_pad(OnnxCx *cx, FeVal *y, FeVal *os, int r, const int64_t *def) {
  int64_t want[TENSOR_MAX_RANK], pw[2 * TENSOR_MAX_RANK] = {0};
  bool any = false;
  if (os->value) {
    if (fe_need_ints(cx, os, "output_shape", want, TENSOR_MAX_RANK) != r)
      return cx->failed ? NULL : FE_FAIL_NULL(cx, "output_shape must have %d values", r);
    for (int i = 0; i < r; i++) {
      if (want[i] < def[i])
        return FE_FAIL_NULL(cx, "output_shape is smaller than the unpooled shape in axis %d", i);
      pw[2 * i + 1] = want[i] - def[i], any |= want[i] > def[i];
    }
    Tensor *t = tensor_new(cx->a, DT_INT64, 2, (int64_t[]){r, 2});
    for (int i = 0; i < 2 * r; i++) tensor_set_i64(t, i, pw[i]);
    return any ? FE_OP(cx, "dyn.nn.pad", NULL, y, fe_const(cx, t), fe_scalar(cx, fe_dtype(y), 0))
               : y;
  }
  int64_t col[2] = {r, 1};
  Tensor *dt = tensor_new(cx->a, DT_INT64, 1, (int64_t[]){r});
  for (int i = 0; i < r; i++) tensor_set_i64(dt, i, def[i]);
  FeVal *shape = fe_cast(cx, os, DT_INT64);
  FeVal *d = shape ? FE_OP(cx, "subtract", NULL, shape, fe_const(cx, dt)) : NULL;
  d = d ? FE_OP(cx, "maximum", NULL, d, fe_scalar(cx, DT_INT64, 0)) : NULL;
  AttrB cb = ab_new(cx);
  ab_int(&cb, "axis", 1);
  FeVal *zc = fe_const(cx, tensor_new(cx->a, DT_INT64, 2, col));
  FeVal *p = d ? FE_OP(cx, "concatenate", ab_done(&cb), zc, reshape_to(cx, d, 2, col)) : NULL;
  y = p ? FE_OP(cx, "dyn.nn.pad", NULL, y, p, fe_scalar(cx, fe_dtype(y), 0)) : NULL;
  return y ? FE_OP(cx, "dyn.broadcast_to", NULL, y, shape) : NULL;
}

/* MaxUnpool(X, I[, output_shape]): I indexes the default unpooled shape
 * (flat), which output_shape may enlarge at the end of each axis. */
bool onnx_convert_max_unpool(OnnxCx *cx) {
  FeVal *x = cx->in[0], *ix = cx->in[1], *os = opt_in(cx, 2);
  int r = fe_rank(x), k = r - 2;
  int64_t xs[TENSOR_MAX_RANK], def[TENSOR_MAX_RANK], ks[3], st[3] = {1, 1, 1}, pads[6] = {0};
  if (k < 1 || k > 3 || !fe_static_shape(x, xs))
    return fe_fail(cx, "the input must have a static shape of rank 3 to 5");
  if (oa_ints(cx, "kernel_shape", ks, 3) != k)
    return fe_fail(cx, "attribute 'kernel_shape' must have %d values", k);
  oa_ints(cx, "strides", st, 3);
  oa_ints(cx, "pads", pads, 6);
  def[0] = xs[0], def[1] = xs[1];
  for (int i = 0; i < k; i++)
    def[i + 2] = unpool_size(xs[i + 2], ks[i], st[i], pads[i], pads[i + k]);
  FeVal *y = unpool_default(cx, x, ix, r, def);
  return set_out(cx, y && os ? unpool_pad(cx, y, os, r, def) : y);
}

/* ───────────────────────────── GridSample ───────────────────────────── */

/* GridSample(X (N, C, H, W), grid (N, Ho, Wo, 2)): image.grid_sample with
 * the grid's last axis moved first. */
bool onnx_convert_grid_sample(OnnxCx *cx) {
  FeVal *x = cx->in[0], *g = cx->in[1];
  if (fe_rank(x) != 4 || fe_rank(g) != 4)
    return fe_fail(cx, "only 4-D inputs (N, C, H, W) are supported");
  const char *mode = oa_str(cx, "mode", "bilinear"), *pad = oa_str(cx, "padding_mode", "zeros");
  if (!mode || !pad) return false;
  if (strcmp(mode, "linear") == 0) mode = "bilinear";
  if (strcmp(mode, "cubic") == 0) mode = "bicubic";
  int64_t axes[4] = {0, 3, 1, 2};
  AttrB tb = ab_new(cx), b = ab_new(cx);
  ab_ints(&tb, "axes", 4, axes);
  ab_str(&b, "method", mode);
  ab_str(&b, "padding_mode", pad);
  ab_bool(&b, "align_corners", oa_int(cx, "align_corners", 0) != 0);
  FeVal *gt = FE_OP(cx, "transpose", ab_done(&tb), g);
  return set_out(cx, gt ? FE_OP(cx, "image.grid_sample", ab_done(&b), x, gt) : NULL);
}

/* ───────────────────────────── RoiAlign ───────────────────────────── */

/* RoiAlign(X, rois (R, 4), batch_indices (R)): vision.roi_align on rows
 * (batch index, x1, y1, x2, y2); half_pixel (opset 16's default) is
 * aligned.  ONNX's max mode (the maximum of weighted taps) is refused. */
bool onnx_convert_roi_align(OnnxCx *cx) {
  FeVal *x = cx->in[0], *rois = cx->in[1];
  const char *mode = oa_str(cx, "mode", "avg");
  const char *ct = oa_str(cx, "coordinate_transformation_mode",
                          cx->opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (!mode || !ct) return false;
  if (strcmp(mode, "avg")) return fe_fail(cx, "mode \"%s\" is not supported (avg is)", mode);
  bool aligned = strcmp(ct, "half_pixel") == 0;
  if (!aligned && strcmp(ct, "output_half_pixel"))
    return fe_fail(cx, "coordinate_transformation_mode \"%s\" is not supported", ct);
  if (fe_rank(x) != 4 || fe_rank(rois) != 2) return fe_fail(cx, "X must be 4-D and rois 2-D");
  AttrB eb = ab_new(cx), cb = ab_new(cx), b = ab_new(cx);
  ab_int(&eb, "axis", 1);
  ab_int(&cb, "axis", 1);
  FeVal *bi = fe_cast(cx, cx->in[2], fe_dtype(rois));
  bi = bi ? FE_OP(cx, "expand_dims", ab_done(&eb), bi) : NULL;
  FeVal *r5 = bi ? FE_OP(cx, "concatenate", ab_done(&cb), bi, rois) : NULL;
  int64_t ps[2] = {oa_int(cx, "output_height", 1), oa_int(cx, "output_width", 1)};
  ab_ints(&b, "pooled_size", 2, ps);
  ab_float(&b, "spatial_scale", oa_float(cx, "spatial_scale", 1.0));
  ab_int(&b, "sample_ratio", oa_int(cx, "sampling_ratio", 0));
  ab_bool(&b, "aligned", aligned);
  return set_out(cx, r5 ? FE_OP(cx, "vision.roi_align", ab_done(&b), x, r5) : NULL);
}

/* ───────────────────────── Resize, Upsample ───────────────────────── */

typedef struct ResizeIn {
  int rank, nsp;
  int64_t in[TENSOR_MAX_RANK], out[TENSOR_MAX_RANK];
  double scale[TENSOR_MAX_RANK]; /* 0: the sizes' ratio */
  double roi[2 * TENSOR_MAX_RANK];
} ResizeIn;

/* ONNX's mode names as image.resize's methods. */
static const char *resize_method(OnnxCx *cx, const char *m) {
  if (strcmp(m, "nearest") == 0) return "nearest_neighbor";
  if (strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0) return "linear";
  if (strcmp(m, "cubic") == 0) return "cubic";
  return fe_fail(cx, "mode \"%s\" is not nearest, linear or cubic", m), NULL;
}

/* The axes attribute (opset 18) into ax (all axes when absent); count. */
static int resize_axes(OnnxCx *cx, int rank, int64_t *ax) {
  int n = oa_ints(cx, "axes", ax, TENSOR_MAX_RANK);
  if (n < 0) {
    for (int i = 0; i < rank; i++) ax[i] = i;
    return rank;
  }
  for (int i = 0; i < n; i++)
    if ((ax[i] = fe_axis(cx, ax[i], rank, "axes")) < 0) return -1;
  return n;
}

/* keep_aspect_ratio_policy (opset 18) applied to the sizes of axes ax. */
static bool keep_aspect(OnnxCx *cx, ResizeIn *r, const int64_t *ax, int n) {
  const char *p = oa_str(cx, "keep_aspect_ratio_policy", "stretch");
  if (!p) return false;
  if (strcmp(p, "stretch") == 0) return true;
  bool larger = strcmp(p, "not_smaller") == 0;
  if (!larger && strcmp(p, "not_larger"))
    return fe_fail(cx, "keep_aspect_ratio_policy \"%s\" is not supported", p);
  double s = larger ? 0 : INFINITY;
  for (int i = 0; i < n; i++) {
    double q = (double)r->out[ax[i]] / (double)r->in[ax[i]];
    s = larger ? fmax(s, q) : fmin(s, q);
  }
  for (int i = 0; i < n; i++) {
    double size = nearbyint(s * (double)r->in[ax[i]]);
    if (!(size >= 0 && size <= (double)INT32_MAX))
      return fe_fail(cx, "keep_aspect_ratio_policy gives no valid size for axis %lld",
                     (long long)ax[i]);
    r->scale[ax[i]] = s, r->out[ax[i]] = (int64_t)size;
  }
  return true;
}

/* The output sizes from scales or sizes (constants), and the roi. */
static bool resize_sizes(OnnxCx *cx, FeVal *roi, FeVal *scales, FeVal *sizes, ResizeIn *r) {
  int64_t ax[TENSOR_MAX_RANK];
  int n = resize_axes(cx, r->rank, ax);
  if (n < 0) return false;
  memcpy(r->out, r->in, sizeof r->out);
  for (int i = 0; i < 2 * r->rank; i++) r->roi[i] = i < r->rank ? 0 : 1;
  double v[2 * TENSOR_MAX_RANK];
  if (roi && roi->value && roi->value->numel) {
    if (roi->value->numel != 2 * n) return fe_fail(cx, "roi must have %d values", 2 * n);
    for (int i = 0; i < n; i++)
      r->roi[ax[i]] = tensor_get_f64(roi->value, i),
      r->roi[r->rank + ax[i]] = tensor_get_f64(roi->value, n + i);
  } else if (roi && !roi->value) {
    return fe_fail(cx, "roi must be known at import time");
  }
  if (sizes && (!sizes->value || sizes->value->numel)) {
    int64_t s[TENSOR_MAX_RANK];
    if (fe_need_ints(cx, sizes, "sizes", s, TENSOR_MAX_RANK) != n)
      return cx->failed ? false : fe_fail(cx, "sizes must have %d values", n);
    for (int i = 0; i < n; i++) r->out[ax[i]] = s[i];
    return keep_aspect(cx, r, ax, n);
  }
  if (!scales || !scales->value) return fe_fail(cx, "scales or sizes must be known at import time");
  if (scales->value->numel != n) return fe_fail(cx, "scales must have %d values", n);
  for (int i = 0; i < n; i++) v[i] = tensor_get_f64(scales->value, i);
  for (int i = 0; i < n; i++) {
    double size = floor(v[i] * (double)r->in[ax[i]]);
    if (!(v[i] > 0) || !(size >= 0 && size <= (double)INT32_MAX))
      return fe_fail(cx, "scale %g of axis %lld gives no valid size", v[i], (long long)ax[i]);
    r->scale[ax[i]] = v[i], r->out[ax[i]] = (int64_t)size;
  }
  return true;
}

/* The attributes of image.resize{nsp}d for this node (opset 10: asymmetric). */
static bool resize_attrs(OnnxCx *cx, const ResizeIn *r, const char *mode, bool dyn, AttrB *b) {
  const char *method = resize_method(cx, mode);
  bool v10 = strcmp(cx->node->op_type, "Upsample") == 0 || cx->opset < 11;
  const char *coord =
      v10 ? "asymmetric" : oa_str(cx, "coordinate_transformation_mode", "half_pixel");
  const char *nearest = v10 ? "floor" : oa_str(cx, "nearest_mode", "round_prefer_floor");
  if (!method || !coord || !nearest) return false;
  if (oa_int(cx, "antialias", 0)) return fe_fail(cx, "antialias is not supported");
  int nsp = r->nsp, first = r->rank - nsp;
  int64_t size[3];
  double roi[6], sc[3];
  bool any_scale = false;
  for (int i = 0; i < nsp; i++) {
    size[i] = r->out[first + i], sc[i] = r->scale[first + i], any_scale |= sc[i] > 0;
    roi[i] = r->roi[first + i], roi[nsp + i] = r->roi[r->rank + first + i];
  }
  static const char *const layouts[] = {"NCW", "NCHW", "NCDHW"};
  if (!dyn) ab_ints(b, "size", nsp, size);
  ab_str(b, "layout", layouts[nsp - 1]);
  ab_str(b, "method", method);
  ab_str(b, "coordinate_transformation_mode", coord);
  ab_str(b, "rounding_method", strcmp(method, "nearest_neighbor") ? "" : nearest);
  ab_float(b, "cubic_alpha", oa_float(cx, "cubic_coeff_a", -0.75));
  ab_int(b, "cubic_exclude", oa_int(cx, "exclude_outside", 0));
  ab_float(b, "extrapolation_value", oa_float(cx, "extrapolation_value", 0.0));
  if (!dyn && strcmp(coord, "tf_crop_and_resize") == 0) ab_float_list(b, "roi", 2 * nsp, roi);
  if (!dyn && any_scale) ab_float_list(b, "scales", nsp, sc);
  return !cx->failed;
}

/* An input that is absent or an empty constant (Resize's unused roi,
 * scales or sizes). */
static bool absent(const FeVal *v) { return !v || (v->value && v->value->numel == 0); }
static bool known(const FeVal *v) { return absent(v) || v->value; }

/* Entries idx of a 1-D value, as dtype dt. */
static FeVal *pick(OnnxCx *cx, FeVal *v, DType dt, int n, const int64_t *idx) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 0);
  v = fe_cast(cx, v, dt);
  return v ? FE_OP(cx, "take", ab_done(&b), v, fe_ints(cx, DT_INT64, n, idx)) : NULL;
}

/* The output shape from run-time sizes, or from scales: floor(in * scale)
 * in float64, as ONNX's reference computes it. */
static FeVal *dyn_out_shape(OnnxCx *cx, const ResizeIn *r, FeVal *scales, FeVal *sizes) {
  if (!absent(sizes)) return fe_cast(cx, sizes, DT_INT64);
  Tensor *in = tensor_new(cx->a, DT_FLOAT64, 1, (int64_t[]){r->rank});
  for (int i = 0; i < r->rank; i++) tensor_set_f64(in, i, (double)r->in[i]);
  FeVal *s = fe_cast(cx, scales, DT_FLOAT64);
  FeVal *p = s ? FE_OP(cx, "multiply", NULL, s, fe_const(cx, in)) : NULL;
  FeVal *f = p ? FE_OP(cx, "floor", NULL, p) : NULL;
  return f ? fe_cast(cx, f, DT_INT64) : NULL;
}

/* Resize of a 4-D input whose scales, sizes or roi are known only at run
 * time: dyn.image.resize2d on the spatial entries, then broadcast to the
 * whole output shape (which fails unless N and C keep their size, or grow
 * from 1, which every mode replicates). */
static bool resize_dynamic(OnnxCx *cx, FeVal *x, FeVal *roi, FeVal *scales, FeVal *sizes,
                           const ResizeIn *r, const char *mode) {
  if (r->rank != 4) return fe_fail(cx, "run-time scales or sizes need a 4-D input");
  if (oa_get(cx, "axes") || strcmp(oa_str(cx, "keep_aspect_ratio_policy", "stretch"), "stretch"))
    return fe_fail(cx, "axes and keep_aspect_ratio_policy need constant scales or sizes");
  if (absent(scales) && absent(sizes)) return fe_fail(cx, "neither scales nor sizes is given");
  static const int64_t sp[2] = {2, 3}, roi_sp[4] = {2, 3, 6, 7};
  FeVal *full = dyn_out_shape(cx, r, scales, sizes);
  FeVal *size = full ? pick(cx, full, DT_INT64, 2, sp) : NULL;
  bool has_roi = !absent(roi);
  FeVal *rv = has_roi ? pick(cx, roi, DT_FLOAT32, 4, roi_sp) : NULL;
  if (!has_roi) {
    Tensor *z = tensor_new(cx->a, DT_FLOAT32, 1, (int64_t[]){4});
    rv = fe_const(cx, z);
  }
  FeVal *sc = absent(scales) ? NULL : pick(cx, scales, DT_FLOAT32, 2, sp);
  AttrB b = ab_new(cx);
  if (!size || !rv || (!absent(scales) && !sc) || !resize_attrs(cx, r, mode, true, &b))
    return false;
  Attrs *at = ab_done(&b);
  FeVal *y = sc ? FE_OP(cx, "dyn.image.resize2d", at, x, size, rv, sc)
                : FE_OP(cx, "dyn.image.resize2d", at, x, size, rv);
  return set_out(cx, y ? FE_OP(cx, "dyn.broadcast_to", NULL, y, full) : NULL);
}

/* Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (X, scales): image.resize{1,2,3}d over the axes after N and C, which
 * must keep their size. */
bool onnx_convert_resize(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  bool old = strcmp(cx->node->op_type, "Upsample") == 0 || cx->opset < 11;
  ResizeIn r = {.rank = fe_rank(x)};
  r.nsp = r.rank - 2;
  if (r.nsp < 1 || r.nsp > 3 || !fe_static_shape(x, r.in))
    return fe_fail(cx, "the input must have a static shape of rank 3 to 5");
  FeVal *roi = old ? NULL : opt_in(cx, 1), *scales = opt_in(cx, old ? 1 : 2);
  FeVal *sizes = old ? NULL : opt_in(cx, 3);
  const char *mode = oa_str(cx, "mode", "nearest");
  if (!mode) return false;
  if (!known(roi) || !known(scales) || !known(sizes))
    return resize_dynamic(cx, x, roi, scales, sizes, &r, mode);
  if (!resize_sizes(cx, roi, scales, sizes, &r)) return false;
  for (int i = 0; i < 2; i++)
    if (r.out[i] != r.in[i]) return fe_fail(cx, "resizing axis %d (N or C) is not supported", i);
  AttrB b = ab_new(cx);
  if (!resize_attrs(cx, &r, mode, false, &b)) return false;
  static const char *const ops[] = {"image.resize1d", "image.resize2d", "image.resize3d"};
  return set_out(cx, FE_OP(cx, ops[r.nsp - 1], ab_done(&b), x));
}
