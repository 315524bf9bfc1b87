/* nn.c — op family "nn": dense/matmul/batch_matmul, bias_add, activations,
 * softmax, batch_flatten, dropout, conv2d, pools, layer_norm.
 *
 * Attributes and defaults are TVM's (relay/attrs/nn.h, the struct defaults
 * that TVM's parser fills in for omitted fields): notably batch_matmul's
 * transpose_b defaults to False there (Python's wrapper passes True, so
 * TVM prints `transpose_b=True` explicitly).  Only NCHW / OIHW layouts are
 * implemented; others fail "layout NHWC is not supported yet".
 *
 * Window arithmetic (conv and pools), per spatial dim:
 *   out = (in + pad_before + pad_after - (dilation * (k - 1) + 1)) / stride + 1
 * with the division rounded up instead when ceil_mode is set.  A dim that is
 * not a constant gives `?` (except a 1x1, stride 1, unpadded window).
 *
 * nn.dropout: with one argument it is TVM's (type (x, mask), both x's type,
 * so `%1 = nn.dropout(%x); %1.0` type-checks); with a RandState key as the
 * second argument (seed 000) it returns the dropped-out tensor itself.
 * nn.dropout_train(x, state) returns (y, new_state) (seed 001). */
#include <string.h>

#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

/* A single dim as text ("784", "n", "?"). */
static const char *dstr(RelCtx *cx, Dim d) {
  const char *s = rel_shape_str(cx, 1, &d);
  return arena_strndup(cx->arena, s + 1, strlen(s) - 2);
}

static const char *shape_of(RelCtx *cx, const Type *t) {
  return rel_shape_str(cx, t->u.tensor.ndim, t->u.tensor.dims);
}

static const char *tf(bool b) { return b ? "True" : "False"; }

static bool same_dtype(RelCtx *cx, const Type *a, const Type *b) {
  if (a->u.tensor.dtype == b->u.tensor.dtype) return true;
  rel_fail(cx, "%s: dtypes %s and %s differ", cx->op_name, dtype_name(a->u.tensor.dtype),
           dtype_name(b->u.tensor.dtype));
  return false;
}

static bool rank_is(RelCtx *cx, const Type *t, int rank, const char *what, const char *layout) {
  if (t->u.tensor.ndim == rank) return true;
  rel_fail(cx, "%s: %s must be %d-D (%s), got %s", cx->op_name, what, rank, layout,
           rel_type_str(cx, t));
  return false;
}

/* Two args that must both be tensors of one dtype. */
static bool two_tensors(RelCtx *cx, Type **args, const Type **a, const Type **b) {
  *a = rel_tensor(cx, args, 0);
  *b = *a ? rel_tensor(cx, args, 1) : NULL;
  return *b && same_dtype(cx, *a, *b);
}

static DType out_dtype(RelCtx *cx, const Attrs *attrs, const Type *x) {
  return rel_attr_dtype(cx, attrs, "out_dtype", x->u.tensor.dtype);
}

/* `units` (when set) must match the weight's output dim; the result dim. */
static bool check_units(RelCtx *cx, const Attrs *attrs, const Type *w, Dim n, Dim *out) {
  *out = n;
  if (rel_attr_is_none(cx, attrs, "units")) return !cx->err[0];
  int64_t u = rel_attr_int(cx, attrs, "units");
  if (cx->err[0]) return false;
  if (!rel_unify_dim(cx, dim_const(u), n)) {
    rel_fail(cx, "%s: units=%lld but weight has shape %s", cx->op_name, (long long)u,
             shape_of(cx, w));
    return false;
  }
  if (n.kind == DIM_ANY) *out = dim_const(u);
  return true;
}

/* ───────────────────────────── dense family ───────────────────────────── */

static Type *rel_dense(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x, *w;
  if (!two_tensors(cx, args, &x, &w)) return NULL;
  int nx = x->u.tensor.ndim;
  if (nx < 1)
    return rel_fail(cx, "nn.dense: data must have rank >= 1, got %s", rel_type_str(cx, x));
  if (!rank_is(cx, w, 2, "weight", "units, features")) return NULL;
  const Dim *xd = x->u.tensor.dims, *wd = w->u.tensor.dims;
  if (!rel_unify_dim(cx, xd[nx - 1], wd[1]))
    return rel_fail(cx, "nn.dense: input has %s features but weight has shape %s",
                    dstr(cx, xd[nx - 1]), shape_of(cx, w));
  Dim dims[TENSOR_MAX_RANK];
  memcpy(dims, xd, sizeof(Dim) * (size_t)(nx - 1));
  if (!check_units(cx, attrs, w, wd[0], &dims[nx - 1])) return NULL;
  DType dt = out_dtype(cx, attrs, x);
  return cx->err[0] ? NULL : tensor_of(cx, dt, nx, dims);
}

static Type *rel_matmul(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *a, *b;
  if (!two_tensors(cx, args, &a, &b)) return NULL;
  bool ta = rel_attr_bool(cx, attrs, "transpose_a"), tb = rel_attr_bool(cx, attrs, "transpose_b");
  int na = a->u.tensor.ndim;
  if (na < (ta ? 2 : 1))
    return rel_fail(cx, "nn.matmul: a must have rank >= %d, got %s", ta ? 2 : 1,
                    rel_type_str(cx, a));
  if (!rank_is(cx, b, 2, "b", tb ? "N, K" : "K, N")) return NULL;
  const Dim *ad = a->u.tensor.dims, *bd = b->u.tensor.dims;
  Dim k = ta ? ad[na - 2] : ad[na - 1], k2 = tb ? bd[1] : bd[0];
  if (!rel_unify_dim(cx, k, k2))
    return rel_fail(
        cx,
        "nn.matmul: shapes %s and %s are incompatible: %s vs %s (transpose_a=%s, transpose_b=%s)",
        shape_of(cx, a), shape_of(cx, b), dstr(cx, k), dstr(cx, k2), tf(ta), tf(tb));
  Dim dims[TENSOR_MAX_RANK];
  memcpy(dims, ad, sizeof(Dim) * (size_t)(na - 1));
  if (ta) dims[na - 2] = ad[na - 1];
  if (!check_units(cx, attrs, b, tb ? bd[0] : bd[1], &dims[na - 1])) return NULL;
  DType dt = out_dtype(cx, attrs, a);
  return cx->err[0] ? NULL : tensor_of(cx, dt, na, dims);
}

static bool batch_dim(RelCtx *cx, const Type *x, const Type *y, Dim *out) {
  Dim a = x->u.tensor.dims[0], b = y->u.tensor.dims[0];
  int n;
  Dim *d;
  if (a.kind == DIM_CONST && b.kind == DIM_CONST && a.value != b.value && a.value != 1 &&
      b.value != 1) {
    rel_fail(cx, "nn.batch_matmul: batch sizes %lld and %lld differ (shapes %s and %s)",
             (long long)a.value, (long long)b.value, shape_of(cx, x), shape_of(cx, y));
    return false;
  }
  if (!rel_broadcast(cx, 1, &a, 1, &b, &n, &d)) return false;
  *out = d[0];
  return true;
}

static Type *rel_batch_matmul(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *x, *y;
  if (!two_tensors(cx, args, &x, &y)) return NULL;
  bool ta = rel_attr_bool(cx, attrs, "transpose_a"), tb = rel_attr_bool(cx, attrs, "transpose_b");
  if (!rank_is(cx, x, 3, "x", ta ? "batch, K, M" : "batch, M, K") ||
      !rank_is(cx, y, 3, "y", tb ? "batch, N, K" : "batch, K, N"))
    return NULL;
  const Dim *xd = x->u.tensor.dims, *yd = y->u.tensor.dims;
  Dim k = ta ? xd[1] : xd[2], k2 = tb ? yd[2] : yd[1];
  if (!rel_unify_dim(cx, k, k2))
    return rel_fail(cx,
                    "nn.batch_matmul: shapes %s and %s are incompatible: %s vs %s (transpose_a=%s, "
                    "transpose_b=%s)",
                    shape_of(cx, x), shape_of(cx, y), dstr(cx, k), dstr(cx, k2), tf(ta), tf(tb));
  Dim dims[3] = {{0}, ta ? xd[2] : xd[1], tb ? yd[1] : yd[2]};
  if (!batch_dim(cx, x, y, &dims[0])) return NULL;
  DType dt = out_dtype(cx, attrs, x);
  return cx->err[0] ? NULL : tensor_of(cx, dt, 3, dims);
}

/* ──────────────────────── elementwise-ish nn ops ──────────────────────── */

static Type *rel_bias_add(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *x, *b;
  if (!two_tensors(cx, args, &x, &b)) return NULL;
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim);
  if (axis < 0) return NULL;
  Dim want = x->u.tensor.dims[axis];
  if (b->u.tensor.ndim != 1 || !rel_unify_dim(cx, b->u.tensor.dims[0], want))
    return rel_fail(cx, "nn.bias_add: bias has shape %s but data %s has %s at axis %d",
                    shape_of(cx, b), shape_of(cx, x), dstr(cx, want), axis);
  return args[0];
}

static Type *rel_identity(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  return rel_tensor(cx, args, 0) ? args[0] : NULL;
}

static Type *rel_softmax(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x || rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) < 0) return NULL;
  return args[0];
}

static Type *rel_batch_flatten(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim;
  const Dim *d = x->u.tensor.dims;
  if (n < 1)
    return rel_fail(cx, "nn.batch_flatten: data must have rank >= 1, got %s", rel_type_str(cx, x));
  Dim out[2] = {d[0], n == 2 ? d[1] : dim_const(1)};
  for (int i = 1; i < n && n > 2; i++) {
    int64_t p;
    if (d[i].kind != DIM_CONST || out[1].kind != DIM_CONST ||
        __builtin_mul_overflow(out[1].value, d[i].value, &p)) {
      out[1] = dim_any();
      break;
    }
    out[1].value = p;
  }
  return tensor_of(cx, x->u.tensor.dtype, 2, out);
}

static bool check_rate(RelCtx *cx, const Attrs *attrs) {
  double r = rel_attr_float(cx, attrs, "rate");
  if (cx->err[0]) return false;
  if (!(r >= 0 && r < 1)) {
    rel_fail(cx, "%s: rate must be in [0, 1), got %g", cx->op_name, r);
    return false;
  }
  return true;
}

static bool is_key(RelCtx *cx, Type **args, int i) {
  if (args[i]->kind == TY_RANDSTATE) return true;
  rel_fail(cx, "%s: argument %d must be a RandState key, got %s", cx->op_name, i + 1,
           rel_type_str(cx, args[i]));
  return false;
}

static Type *rel_dropout(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  if (!rel_tensor(cx, args, 0) || !check_rate(cx, attrs)) return NULL;
  if (nargs == 2) return is_key(cx, args, 1) ? args[0] : NULL;
  Type *both[2] = {args[0], args[0]};
  return type_tuple(cx->arena, 2, both, no_span);
}

static Type *rel_dropout_train(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  if (!rel_tensor(cx, args, 0) || !check_rate(cx, attrs) || !is_key(cx, args, 1)) return NULL;
  Type *pair[2] = {args[0], type_randstate(cx->arena, no_span)};
  return type_tuple(cx->arena, 2, pair, no_span);
}

static Type *rel_layer_norm(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim);
  if (axis < 0) return NULL;
  Dim want = x->u.tensor.dims[axis];
  static const char *const names[] = {"gamma", "beta"};
  for (int i = 1; i <= 2; i++) {
    const Type *p = rel_tensor(cx, args, i);
    if (!p || !same_dtype(cx, x, p)) return NULL;
    if (p->u.tensor.ndim != 1 || !rel_unify_dim(cx, p->u.tensor.dims[0], want))
      return rel_fail(cx, "nn.layer_norm: %s has shape %s but data %s has %s at axis %d",
                      names[i - 1], shape_of(cx, p), shape_of(cx, x), dstr(cx, want), axis);
  }
  return args[0];
}

/* ───────────────────────────── windows ───────────────────────────── */

typedef struct Window {
  int64_t k[2], stride[2], dil[2], pad[4]; /* pad: top, left, bottom, right */
  bool ceil_mode;
} Window;

/* An attribute of 1 or 2 positive ints (one value applies to H and W). */
static bool pair_attr(RelCtx *cx, const Attrs *attrs, const char *key, int64_t out[2]) {
  int64_t v[8];
  int n = rel_attr_ints(cx, attrs, key, v, 8);
  if (n < 0) return false;
  if (n != 1 && n != 2) {
    rel_fail(cx, "%s: `%s` must have 1 or 2 values, got %d", cx->op_name, key, n);
    return false;
  }
  out[0] = v[0], out[1] = v[n - 1];
  if (out[0] >= 1 && out[1] >= 1) return true;
  rel_fail(cx, "%s: `%s` values must be positive, got [%lld, %lld]", cx->op_name, key,
           (long long)out[0], (long long)out[1]);
  return false;
}

/* padding: 1 value (all sides), 2 (top/bottom, left/right) or 4 (top, left, bottom, right). */
static bool pad_attr(RelCtx *cx, const Attrs *attrs, int64_t p[4]) {
  int64_t v[8];
  int n = rel_attr_ints(cx, attrs, "padding", v, 8);
  if (n < 0) return false;
  if (n != 1 && n != 2 && n != 4) {
    rel_fail(cx, "%s: padding must have 1, 2 or 4 values, got %d", cx->op_name, n);
    return false;
  }
  for (int i = 0; i < 4; i++) {
    p[i] = n == 4 ? v[i] : n == 2 ? v[i % 2] : v[0];
    if (p[i] < 0) {
      rel_fail(cx, "%s: padding must not be negative, got %lld", cx->op_name, (long long)p[i]);
      return false;
    }
  }
  return true;
}

static bool window_attrs(RelCtx *cx, const Attrs *attrs, Window *w) {
  return pair_attr(cx, attrs, "strides", w->stride) && pair_attr(cx, attrs, "dilation", w->dil) &&
         pad_attr(cx, attrs, w->pad);
}

/* Output size of spatial dim i (0 = H, 1 = W). */
static bool window_dim(RelCtx *cx, const Window *w, int i, Dim in, Dim *out) {
  int64_t pad = w->pad[i] + w->pad[i + 2], k = w->k[i], s = w->stride[i], eff, num;
  if (in.kind != DIM_CONST) {
    *out = k == 1 && s == 1 && pad == 0 ? in : dim_any();
    return true;
  }
  if (__builtin_mul_overflow(w->dil[i], k - 1, &eff) || __builtin_add_overflow(eff, 1, &eff) ||
      __builtin_add_overflow(in.value, pad, &num) || __builtin_sub_overflow(num, eff, &num) ||
      (w->ceil_mode && __builtin_add_overflow(num, s - 1, &num))) {
    rel_fail(cx, "%s: window sizes overflow", cx->op_name);
    return false;
  }
  if (num < 0) {
    rel_fail(cx,
             "%s: the %s window (size %lld, dilation %lld) is larger than the padded input (%lld)",
             cx->op_name, i ? "width" : "height", (long long)k, (long long)w->dil[i],
             (long long)(in.value + pad));
    return false;
  }
  *out = dim_const(num / s + 1);
  return true;
}

static bool layout_ok(RelCtx *cx, const Attrs *attrs, const char *key, const char *want,
                      const char *what) {
  const char *l = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return false;
  if (strcmp(l, want) == 0 || (!l[0] && strcmp(key, "out_layout") == 0)) return true;
  rel_fail(cx, "%s: %s %s is not supported yet", cx->op_name, what, l);
  return false;
}

/* ───────────────────────────── conv2d ───────────────────────────── */

/* conv2d's channel rule: input channels = weight in-channels * groups, and
 * output channels divisible by groups; symbolic channels unify only when
 * groups is 1 (otherwise the product is not a dim). */
static bool conv_channels(RelCtx *cx, const Type *x, const Type *w, int64_t groups) {
  Dim c = x->u.tensor.dims[1], i = w->u.tensor.dims[1], o = w->u.tensor.dims[0];
  int64_t want;
  if (c.kind == DIM_CONST && i.kind == DIM_CONST) {
    if (__builtin_mul_overflow(i.value, groups, &want) || c.value != want)
      return rel_fail(cx,
                      "nn.conv2d: input has %lld channels but weight %s expects %lld (groups=%lld)",
                      (long long)c.value, shape_of(cx, w), (long long)want, (long long)groups),
             false;
  } else if (groups == 1 && !rel_unify_dim(cx, c, i)) {
    return rel_fail(cx, "nn.conv2d: input has %s channels but weight %s expects %s", dstr(cx, c),
                    shape_of(cx, w), dstr(cx, i)),
           false;
  }
  if (o.kind == DIM_CONST && o.value % groups != 0)
    return rel_fail(cx,
                    "nn.conv2d: weight %s has %lld output channels, not divisible by groups=%lld",
                    shape_of(cx, w), (long long)o.value, (long long)groups),
           false;
  return true;
}

/* `channels` and `kernel_size`, when given, must agree with the weight. */
static bool conv_hints(RelCtx *cx, const Attrs *attrs, const Type *w) {
  const Dim *wd = w->u.tensor.dims;
  if (!rel_attr_is_none(cx, attrs, "channels")) {
    int64_t ch = rel_attr_int(cx, attrs, "channels");
    if (!cx->err[0] && !rel_unify_dim(cx, dim_const(ch), wd[0]))
      rel_fail(cx, "nn.conv2d: channels=%lld but weight has shape %s", (long long)ch,
               shape_of(cx, w));
  }
  if (!cx->err[0] && !rel_attr_is_none(cx, attrs, "kernel_size")) {
    int64_t ks[2];
    if (pair_attr(cx, attrs, "kernel_size", ks) && (!rel_unify_dim(cx, dim_const(ks[0]), wd[2]) ||
                                                    !rel_unify_dim(cx, dim_const(ks[1]), wd[3])))
      rel_fail(cx, "nn.conv2d: kernel_size=[%lld, %lld] but weight has shape %s", (long long)ks[0],
               (long long)ks[1], shape_of(cx, w));
  }
  return !cx->err[0];
}

static Type *rel_conv2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x, *w;
  if (!two_tensors(cx, args, &x, &w) || !layout_ok(cx, attrs, "data_layout", "NCHW", "layout") ||
      !layout_ok(cx, attrs, "kernel_layout", "OIHW", "kernel layout") ||
      !layout_ok(cx, attrs, "out_layout", "NCHW", "out_layout") ||
      !rank_is(cx, x, 4, "data", "NCHW") || !rank_is(cx, w, 4, "weight", "OIHW"))
    return NULL;
  int64_t groups = rel_attr_int(cx, attrs, "groups");
  if (!cx->err[0] && groups < 1)
    rel_fail(cx, "nn.conv2d: groups must be positive, got %lld", (long long)groups);
  Window win = {0};
  if (cx->err[0] || !conv_channels(cx, x, w, groups) || !conv_hints(cx, attrs, w) ||
      !window_attrs(cx, attrs, &win))
    return NULL;
  const Dim *xd = x->u.tensor.dims, *wd = w->u.tensor.dims;
  Dim out[4] = {xd[0], wd[0], dim_any(), dim_any()};
  for (int i = 0; i < 2; i++) {
    if (wd[2 + i].kind != DIM_CONST) continue;
    win.k[i] = wd[2 + i].value;
    if (!window_dim(cx, &win, i, xd[2 + i], &out[2 + i])) return NULL;
  }
  DType dt = out_dtype(cx, attrs, x);
  return cx->err[0] ? NULL : tensor_of(cx, dt, 4, out);
}

/* ───────────────────────────── pools ───────────────────────────── */

static Type *rel_pool2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  Window win = {0};
  if (!x || !layout_ok(cx, attrs, "layout", "NCHW", "layout") ||
      !layout_ok(cx, attrs, "out_layout", "NCHW", "out_layout") ||
      !rank_is(cx, x, 4, "data", "NCHW") || !pair_attr(cx, attrs, "pool_size", win.k) ||
      !window_attrs(cx, attrs, &win))
    return NULL;
  win.ceil_mode = rel_attr_bool(cx, attrs, "ceil_mode");
  const Dim *xd = x->u.tensor.dims;
  Dim out[4] = {xd[0], xd[1]};
  for (int i = 0; i < 2; i++)
    if (!window_dim(cx, &win, i, xd[2 + i], &out[2 + i])) return NULL;
  return cx->err[0] ? NULL : tensor_of(cx, x->u.tensor.dtype, 4, out);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec dense_attrs[] = {
    {"units", AV_NONE, "None"}, {"out_dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec matmul_attrs[] = {{"units", AV_NONE, "None"},
                                          {"out_dtype", AV_STR, "\"\""},
                                          {"transpose_a", AV_BOOL, "False"},
                                          {"transpose_b", AV_BOOL, "False"},
                                          {0}};
static const OpAttrSpec batch_matmul_attrs[] = {{"out_dtype", AV_STR, "\"\""},
                                                {"transpose_a", AV_BOOL, "False"},
                                                {"transpose_b", AV_BOOL, "False"},
                                                {0}};
static const OpAttrSpec bias_add_attrs[] = {{"axis", AV_INT, "1"}, {0}};
static const OpAttrSpec leaky_relu_attrs[] = {{"alpha", AV_FLOAT, "0.25f"}, {0}};
static const OpAttrSpec softmax_attrs[] = {{"axis", AV_INT, "-1"}, {0}};
static const OpAttrSpec dropout_attrs[] = {{"rate", AV_FLOAT, "0.5f"}, {0}};
static const OpAttrSpec conv2d_attrs[] = {{"strides", AV_LIST, "[1, 1]"},
                                          {"padding", AV_LIST, "[0, 0]"},
                                          {"dilation", AV_LIST, "[1, 1]"},
                                          {"groups", AV_INT, "1"},
                                          {"channels", AV_NONE, "None"},
                                          {"kernel_size", AV_LIST, "None"},
                                          {"data_layout", AV_STR, "\"NCHW\""},
                                          {"kernel_layout", AV_STR, "\"OIHW\""},
                                          {"out_layout", AV_STR, "\"\""},
                                          {"out_dtype", AV_STR, "\"\""},
                                          {0}};
/* clang-format off */
#define POOL2D_ATTRS                                                          \
  {"pool_size", AV_LIST, NULL}, {"strides", AV_LIST, "[1, 1]"},               \
  {"dilation", AV_LIST, "[1, 1]"}, {"padding", AV_LIST, "[0, 0]"},            \
  {"layout", AV_STR, "\"NCHW\""}, {"out_layout", AV_STR, "\"\""},             \
  {"ceil_mode", AV_BOOL, "False"}
static const OpAttrSpec max_pool2d_attrs[] = {POOL2D_ATTRS, {0}};
static const OpAttrSpec avg_pool2d_attrs[] = {
    POOL2D_ATTRS, {"count_include_pad", AV_BOOL, "False"}, {0}};
/* clang-format on */
static const OpAttrSpec layer_norm_attrs[] = {{"axis", AV_INT, "-1"},
                                              {"epsilon", AV_FLOAT, "1e-05f"},
                                              {"center", AV_BOOL, "True"},
                                              {"scale", AV_BOOL, "True"},
                                              {0}};

const OpDef ops_family_nn[] = {
    {"nn.dense", 2, 2, OPAT_OUT_EWISE_FUSABLE, dense_attrs, rel_dense,
     "nn.dense(x, w): x (..., K) times w (units, K) transposed -> (..., units)", false,
     .cost = OPCOST_MATMUL, .compute = compute_dense},
    {"nn.matmul", 2, 2, OPAT_OUT_EWISE_FUSABLE, matmul_attrs, rel_matmul,
     "nn.matmul(a, b): a (..., M, K) times b (K, N), with optional transposes", false,
     .cost = OPCOST_MATMUL, .compute = compute_matmul},
    {"nn.batch_matmul", 2, 2, OPAT_OUT_EWISE_FUSABLE, batch_matmul_attrs, rel_batch_matmul,
     "nn.batch_matmul(x, y): batched matrix product of 3-D tensors", false, .cost = OPCOST_MATMUL,
     .compute = compute_batch_matmul},
    {"nn.bias_add", 2, 2, OPAT_BROADCAST, bias_add_attrs, rel_bias_add,
     "nn.bias_add(x, b, axis=1): add a 1-D bias along an axis", false, .compute = compute_bias_add},
    {"nn.relu", 1, 1, OPAT_ELEMWISE, no_attrs, rel_identity, "max(x, 0) elementwise", false,
     .cost = OPCOST_ELEMWISE, .compute = compute_relu},
    {"nn.leaky_relu", 1, 1, OPAT_ELEMWISE, leaky_relu_attrs, rel_identity,
     "x if x > 0 else alpha * x", false, .cost = OPCOST_ELEMWISE, .compute = compute_leaky_relu},
    {"nn.softmax", 1, 1, OPAT_OUT_EWISE_FUSABLE, softmax_attrs, rel_softmax,
     "softmax along an axis (default -1)", false, .compute = compute_softmax},
    {"nn.log_softmax", 1, 1, OPAT_OUT_EWISE_FUSABLE, softmax_attrs, rel_softmax,
     "log of softmax along an axis (default -1)", false, .compute = compute_log_softmax},
    {"nn.batch_flatten", 1, 1, OPAT_INJECTIVE, no_attrs, rel_batch_flatten,
     "flatten all but the first axis: (N, a, b) -> (N, a*b)", false, .flags = OP_VIEW,
     .compute = compute_batch_flatten},
    {"nn.dropout", 1, 2, OPAT_OPAQUE, dropout_attrs, rel_dropout,
     "nn.dropout(x[, key], rate=0.5f): TVM's 1-arg form gives (y, mask); with a key, y", false,
     .compute = NULL},
    {"nn.dropout_train", 2, 2, OPAT_OPAQUE, dropout_attrs, rel_dropout_train,
     "nn.dropout_train(x, state, rate=): (y, new_state)", false, .compute = NULL},
    {"nn.conv2d", 2, 2, OPAT_OUT_EWISE_FUSABLE, conv2d_attrs, rel_conv2d,
     "2-D convolution, NCHW data and OIHW weight", false, .cost = OPCOST_CONV2D,
     .compute = compute_conv2d},
    {"nn.max_pool2d", 1, 1, OPAT_OUT_EWISE_FUSABLE, max_pool2d_attrs, rel_pool2d,
     "2-D max pooling (NCHW)", false, .compute = NULL},
    {"nn.avg_pool2d", 1, 1, OPAT_OUT_EWISE_FUSABLE, avg_pool2d_attrs, rel_pool2d,
     "2-D average pooling (NCHW)", false, .compute = NULL},
    {"nn.layer_norm", 3, 3, OPAT_OPAQUE, layer_norm_attrs, rel_layer_norm,
     "nn.layer_norm(x, gamma, beta, axis=-1): normalize along an axis", false, .compute = NULL},
    {0},
};
