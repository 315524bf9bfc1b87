/* nn.c — op family "nn": dense/matmul/batch_matmul, bias_add, activations
 * (relu, leaky_relu, prelu), softmax (also fast_softmax), batch_flatten,
 * dropout, the normalizations (batch_norm, layer_norm, instance_norm,
 * group_norm, l2_normalize, lrn) and the losses (cross_entropy,
 * cross_entropy_with_logits, nll_loss).  Convolutions are in nn_conv.c,
 * pools in nn_pool.c, padding and layout moves in nn_layout.c.
 *
 * Attributes and defaults are TVM's (relay/attrs/nn.h, the struct defaults
 * that TVM's parser fills in for omitted fields): notably batch_matmul's
 * transpose_b defaults to False there (Python's wrapper passes True, so
 * TVM prints `transpose_b=True` explicitly); l2_normalize's eps and axis and
 * nll_loss's ignore_index have no default.  Fusion patterns follow TVM's
 * where TVM fuses the op; the normalizations and the cross entropies, which
 * TVM leaves opaque (or decomposes), are out-elemwise-fusable here (a
 * reduction for the cross entropies), since each has a compute rule
 * (lower/compute/compute_reduce.c, compute_nn_norm.c, compute_nn_loss.c).
 *
 * nn.batch_norm(x, gamma, beta, moving_mean, moving_var) is TVM's inference
 * form: a 3-tuple of the normalized x and the moving mean and variance
 * (unchanged), so `%1 = nn.batch_norm(...); %1.0` type-checks.
 *
 * nn.dropout: with one argument it is TVM's (type (x, mask), both x's type,
 * so `%1 = nn.dropout(%x); %1.0` type-checks); with a RandState key as the
 * second argument (seed 000) it returns the dropped-out tensor itself.
 * nn.dropout_train(x, state) returns (y, new_state) (seed 001). */
#include <string.h>

#include "ops/families.h"
#include "ops/nn_int.h"

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
             rel_tensor_shape_str(cx, w));
    return false;
  }
  if (n.kind == DIM_ANY) *out = dim_const(u);
  return true;
}

/* ───────────────────────────── dense family ───────────────────────────── */

/* The two operands of a product: tensors of one dtype, or of two integer
 * dtypes with out_dtype set (nn_operand_dtypes). */
static bool two_operands(RelCtx *cx, Type **args, const Attrs *attrs, const Type **a,
                         const Type **b) {
  *a = rel_tensor(cx, args, 0);
  *b = *a ? rel_tensor(cx, args, 1) : NULL;
  return *b && nn_operand_dtypes(cx, attrs, *a, *b);
}

static Type *rel_dense(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x, *w;
  if (!two_operands(cx, args, attrs, &x, &w)) return NULL;
  int nx = x->u.tensor.ndim;
  if (nx < 1)
    return rel_fail(cx, "nn.dense: data must have rank >= 1, got %s", rel_type_str(cx, x));
  if (!rank_is(cx, w, 2, "weight", "units, features")) return NULL;
  const Dim *xd = x->u.tensor.dims, *wd = w->u.tensor.dims;
  if (!rel_unify_dim(cx, xd[nx - 1], wd[1]))
    return rel_fail(cx, "nn.dense: input has %s features but weight has shape %s",
                    dstr(cx, xd[nx - 1]), rel_tensor_shape_str(cx, w));
  Dim dims[TENSOR_MAX_RANK];
  memcpy(dims, xd, sizeof(Dim) * (size_t)(nx - 1));
  if (!check_units(cx, attrs, w, wd[0], &dims[nx - 1])) return NULL;
  DType dt = out_dtype(cx, attrs, x);
  return cx->err[0] ? NULL : tensor_of(cx, dt, nx, dims);
}

/* nn.contrib_dense_pack(x, w): w holds the weight in panels (NB, K, n):
 * output column j is w[j / n, :, j % n]; `units` (default NB * n) says how
 * many columns are real (the last panel may be zero-padded). */
static Type *rel_dense_pack(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x, *w;
  if (!two_operands(cx, args, attrs, &x, &w)) return NULL;
  int nx = x->u.tensor.ndim;
  if (nx < 1)
    return rel_fail(cx, "%s: data must have rank >= 1, got %s", cx->op_name, rel_type_str(cx, x));
  if (!rank_is(cx, w, 3, "weight", "panels, features, lanes")) return NULL;
  const Dim *xd = x->u.tensor.dims, *wd = w->u.tensor.dims;
  if (!rel_unify_dim(cx, xd[nx - 1], wd[1]))
    return rel_fail(cx, "%s: input has %s features but weight has shape %s", cx->op_name,
                    dstr(cx, xd[nx - 1]), rel_tensor_shape_str(cx, w));
  Dim dims[TENSOR_MAX_RANK];
  memcpy(dims, xd, sizeof(Dim) * (size_t)(nx - 1));
  bool known = wd[0].kind == DIM_CONST && wd[2].kind == DIM_CONST;
  int64_t cols = known ? wd[0].value * wd[2].value : -1;
  dims[nx - 1] = known ? dim_const(cols) : dim_any();
  if (!rel_attr_is_none(cx, attrs, "units")) {
    int64_t u = rel_attr_int(cx, attrs, "units");
    if (cx->err[0]) return NULL;
    if (known && (u <= cols - wd[2].value || u > cols))
      return rel_fail(cx, "%s: units=%lld does not fit weight panels of shape %s", cx->op_name,
                      (long long)u, rel_tensor_shape_str(cx, w));
    dims[nx - 1] = dim_const(u);
  }
  DType dt = out_dtype(cx, attrs, x);
  return cx->err[0] ? NULL : tensor_of(cx, dt, nx, dims);
}

static Type *rel_matmul(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *a, *b;
  if (!two_operands(cx, args, attrs, &a, &b)) return NULL;
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
        rel_tensor_shape_str(cx, a), rel_tensor_shape_str(cx, b), dstr(cx, k), dstr(cx, k2), tf(ta),
        tf(tb));
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
             (long long)a.value, (long long)b.value, rel_tensor_shape_str(cx, x),
             rel_tensor_shape_str(cx, y));
    return false;
  }
  if (!rel_broadcast(cx, 1, &a, 1, &b, &n, &d)) return false;
  *out = d[0];
  return true;
}

static Type *rel_batch_matmul(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *x, *y;
  if (!two_operands(cx, args, attrs, &x, &y)) return NULL;
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
                    rel_tensor_shape_str(cx, x), rel_tensor_shape_str(cx, y), dstr(cx, k),
                    dstr(cx, k2), tf(ta), tf(tb));
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
                    rel_tensor_shape_str(cx, b), rel_tensor_shape_str(cx, x), dstr(cx, want), axis);
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

/* Per-channel parameters of a normalization: args[first..first+n) must be
 * 1-D tensors of x's dtype whose length is x's dim at `axis`. */
static bool channel_params(RelCtx *cx, Type **args, const Type *x, int axis, int first, int n,
                           const char *const *names) {
  Dim want = x->u.tensor.dims[axis];
  for (int i = 0; i < n; i++) {
    const Type *p = rel_tensor(cx, args, first + i);
    if (!p || !same_dtype(cx, x, p)) return false;
    if (p->u.tensor.ndim != 1 || !rel_unify_dim(cx, p->u.tensor.dims[0], want))
      return rel_fail(cx, "%s: %s has shape %s but data %s has %s at axis %d", cx->op_name,
                      names[i], rel_tensor_shape_str(cx, p), rel_tensor_shape_str(cx, x),
                      dstr(cx, want), axis),
             false;
  }
  return true;
}

/* x, and the axis attribute normalized; -1 after rel_fail. */
static int data_axis(RelCtx *cx, Type **args, const Attrs *attrs, const Type **x) {
  *x = rel_tensor(cx, args, 0);
  if (!*x) return -1;
  return rel_axis(cx, rel_attr_int(cx, attrs, "axis"), (*x)->u.tensor.ndim);
}

static const char *const gamma_beta[] = {"gamma", "beta"};

/* layer_norm, instance_norm: (x, gamma, beta) -> x's type. */
static Type *rel_layer_norm(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x;
  int axis = data_axis(cx, args, attrs, &x);
  if (axis < 0 || !channel_params(cx, args, x, axis, 1, 2, gamma_beta)) return NULL;
  rel_attr_float(cx, attrs, "epsilon");
  return cx->err[0] ? NULL : args[0];
}

static Type *rel_group_norm(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x;
  int axis = data_axis(cx, args, attrs, &x);
  if (axis < 0 || !channel_params(cx, args, x, axis, 1, 2, gamma_beta)) return NULL;
  int64_t g = rel_attr_int(cx, attrs, "num_groups");
  Dim c = x->u.tensor.dims[axis];
  if (cx->err[0]) return NULL;
  if (g < 1)
    return rel_fail(cx, "nn.group_norm: num_groups must be positive, got %lld", (long long)g);
  if (c.kind == DIM_CONST && c.value % g != 0)
    return rel_fail(cx,
                    "nn.group_norm: %lld channels (axis %d of %s) are not divisible by "
                    "num_groups=%lld",
                    (long long)c.value, axis, rel_tensor_shape_str(cx, x), (long long)g);
  return args[0];
}

/* (x, gamma, beta, moving_mean, moving_var) -> (x, mean, var) types. */
static Type *rel_batch_norm(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  static const char *const names[] = {"gamma", "beta", "moving_mean", "moving_var"};
  const Type *x;
  int axis = data_axis(cx, args, attrs, &x);
  if (axis < 0 || !channel_params(cx, args, x, axis, 1, 4, names)) return NULL;
  rel_attr_float(cx, attrs, "epsilon");
  if (cx->err[0]) return NULL;
  Dim c = x->u.tensor.dims[axis];
  Type *vec = tensor_of(cx, x->u.tensor.dtype, 1, &c);
  Type *fields[3] = {args[0], vec, vec};
  return type_tuple(cx->arena, 3, fields, no_span);
}

static Type *rel_l2_normalize(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t ax[TENSOR_MAX_RANK];
  bool seen[TENSOR_MAX_RANK] = {0};
  int n = x ? rel_attr_ints(cx, attrs, "axis", ax, TENSOR_MAX_RANK) : -1;
  if (n < 0 || (rel_attr_float(cx, attrs, "eps"), cx->err[0])) return NULL;
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, ax[i], x->u.tensor.ndim);
    if (a < 0) return NULL;
    if (seen[a]) return rel_fail(cx, "nn.l2_normalize: axis %d is repeated", a);
    seen[a] = true;
  }
  if (!dtype_is_float(x->u.tensor.dtype))
    return rel_fail(cx, "nn.l2_normalize: data must be a float tensor, got %s",
                    rel_type_str(cx, x));
  return args[0];
}

static Type *rel_lrn(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  const Type *x;
  int axis = data_axis(cx, args, attrs, &x);
  if (axis < 0) return NULL;
  int64_t size = rel_attr_int(cx, attrs, "size");
  rel_attr_float(cx, attrs, "alpha");
  rel_attr_float(cx, attrs, "beta");
  rel_attr_float(cx, attrs, "bias");
  if (cx->err[0]) return NULL;
  if (size < 1) return rel_fail(cx, "nn.lrn: size must be positive, got %lld", (long long)size);
  if (!dtype_is_float(x->u.tensor.dtype))
    return rel_fail(cx, "nn.lrn: data must be a float tensor, got %s", rel_type_str(cx, x));
  return args[0];
}

static Type *rel_prelu(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  static const char *const names[] = {"alpha"};
  const Type *x;
  int axis = data_axis(cx, args, attrs, &x);
  if (axis < 0 || !channel_params(cx, args, x, axis, 1, 1, names)) return NULL;
  return args[0];
}

/* cross_entropy(_with_logits)(x, y): both (batch, classes) -> a scalar. */
static Type *rel_cross_entropy(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *x, *y;
  if (!two_tensors(cx, args, &x, &y) || !rank_is(cx, x, 2, "predictions", "batch, classes") ||
      !rank_is(cx, y, 2, "targets", "batch, classes"))
    return NULL;
  const Dim *a = x->u.tensor.dims, *b = y->u.tensor.dims;
  if (!rel_unify_dim(cx, a[0], b[0]) || !rel_unify_dim(cx, a[1], b[1]))
    return rel_fail(cx, "%s: predictions %s and targets %s differ in shape", cx->op_name,
                    rel_tensor_shape_str(cx, x), rel_tensor_shape_str(cx, y));
  if (!dtype_is_float(x->u.tensor.dtype))
    return rel_fail(cx, "%s: predictions must be a float tensor, got %s", cx->op_name,
                    rel_type_str(cx, x));
  return tensor_of(cx, x->u.tensor.dtype, 0, NULL);
}

/* nll_loss(predictions (N, C, d...), targets (N, d...), weights (C)). */
static Type *rel_nll_loss(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *p = rel_tensor(cx, args, 0), *t = p ? rel_tensor(cx, args, 1) : NULL;
  const Type *w = t ? rel_tensor(cx, args, 2) : NULL;
  if (!w) return NULL;
  const char *red = rel_attr_str(cx, attrs, "reduction");
  rel_attr_int(cx, attrs, "ignore_index");
  if (cx->err[0]) return NULL;
  if (strcmp(red, "mean") && strcmp(red, "sum") && strcmp(red, "none"))
    return rel_fail(cx, "nn.nll_loss: reduction must be \"mean\", \"sum\" or \"none\", got \"%s\"",
                    red);
  int np = p->u.tensor.ndim, nt = t->u.tensor.ndim;
  if (np < 2 || nt != np - 1)
    return rel_fail(cx, "nn.nll_loss: predictions %s must be (N, C, d...) and targets %s (N, d...)",
                    rel_tensor_shape_str(cx, p), rel_tensor_shape_str(cx, t));
  if (!rank_is(cx, w, 1, "weights", "classes")) return NULL;
  if (!dtype_is_float(p->u.tensor.dtype) || !same_dtype(cx, p, w))
    return rel_fail(cx,
                    "nn.nll_loss: predictions and weights must be of one float dtype, got %s "
                    "and %s",
                    dtype_name(p->u.tensor.dtype), dtype_name(w->u.tensor.dtype));
  if (!dtype_is_int(t->u.tensor.dtype))
    return rel_fail(cx, "nn.nll_loss: targets must be integers, got %s", rel_type_str(cx, t));
  const Dim *pd = p->u.tensor.dims, *td = t->u.tensor.dims;
  if (!rel_unify_dim(cx, pd[1], w->u.tensor.dims[0]))
    return rel_fail(cx, "nn.nll_loss: predictions %s have %s classes but weights have shape %s",
                    rel_tensor_shape_str(cx, p), dstr(cx, pd[1]), rel_tensor_shape_str(cx, w));
  for (int i = 0; i < nt; i++)
    if (!rel_unify_dim(cx, pd[i == 0 ? 0 : i + 1], td[i]))
      return rel_fail(cx,
                      "nn.nll_loss: targets %s do not match predictions %s without their "
                      "class axis",
                      rel_tensor_shape_str(cx, t), rel_tensor_shape_str(cx, p));
  if (strcmp(red, "none") == 0) return tensor_of(cx, p->u.tensor.dtype, nt, td);
  return tensor_of(cx, p->u.tensor.dtype, 0, NULL);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec dense_attrs[] = {
    {"units", AV_NONE, "None"}, {"out_dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec dense_pack_attrs[] = {{"units", AV_NONE, "None"},
                                              {"out_dtype", AV_STR, "\"\""},
                                              {"weight_layout", AV_STR, "\"NC\""},
                                              {0}};
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
static const OpAttrSpec layer_norm_attrs[] = {{"axis", AV_INT, "-1"},
                                              {"epsilon", AV_FLOAT, "1e-05f"},
                                              {"center", AV_BOOL, "True"},
                                              {"scale", AV_BOOL, "True"},
                                              {0}};

/* clang-format off */
#define NORM_ATTRS(axis)                                                      \
  {"axis", AV_INT, axis}, {"epsilon", AV_FLOAT, "1e-05f"},                    \
  {"center", AV_BOOL, "True"}, {"scale", AV_BOOL, "True"}
static const OpAttrSpec batch_norm_attrs[] = {NORM_ATTRS("1"), {0}};
static const OpAttrSpec instance_norm_attrs[] = {NORM_ATTRS("1"), {0}};
static const OpAttrSpec group_norm_attrs[] = {
    {"num_groups", AV_INT, "0"}, NORM_ATTRS("1"), {0}};
/* clang-format on */
static const OpAttrSpec l2_normalize_attrs[] = {
    {"eps", AV_FLOAT, NULL}, {"axis", AV_LIST, NULL}, {0}};
static const OpAttrSpec lrn_attrs[] = {{"size", AV_INT, "5"},       {"axis", AV_INT, "1"},
                                       {"bias", AV_FLOAT, "2f"},    {"alpha", AV_FLOAT, "0.0001f"},
                                       {"beta", AV_FLOAT, "0.75f"}, {0}};
static const OpAttrSpec prelu_attrs[] = {{"axis", AV_INT, "1"}, {0}};
static const OpAttrSpec nll_loss_attrs[] = {
    {"reduction", AV_STR, "\"mean\""}, {"ignore_index", AV_INT, NULL}, {0}};

const OpDef ops_family_nn[] = {
    {"nn.dense", 2, 2, OPAT_OUT_EWISE_FUSABLE, dense_attrs, rel_dense,
     "x (..., K) times w (units, K) transposed -> (..., units)", false, .cost = OPCOST_MATMUL,
     .args = "x, weight",
     .rule = "x's shape with its last axis (features = weight's K) replaced by units = weight's N; "
             "weight is (N, K); x's dtype (or out_dtype)",
     .example = "nn.dense([[1f, 2f]], [[1f, 0f], [0f, 1f], [1f, 1f]])"},
    {"nn.contrib_dense_pack", 2, 2, OPAT_OUT_EWISE_FUSABLE, dense_pack_attrs, rel_dense_pack,
     "nn.dense, w packed in panels of n columns (NB, K, n)", false, .cost = OPCOST_MATMUL,
     .args = "x, weight",
     .rule = "x's shape with its last axis replaced by panels*lanes (or units); weight is (panels, "
             "K, lanes); x's dtype (or out_dtype)",
     .example = "nn.contrib_dense_pack([[1f, 2f]], [[[1f, 0f], [0f, 1f]]])"},
    {"nn.matmul", 2, 2, OPAT_OUT_EWISE_FUSABLE, matmul_attrs, rel_matmul,
     "a (..., M, K) times b (K, N), with optional transposes", false, .cost = OPCOST_MATMUL,
     .args = "a, b",
     .rule = "a's shape (last two axes swapped with transpose_a) with its last axis replaced by "
             "b's N; b is (K, N) or (N, K); a's dtype (or out_dtype)",
     .example = "nn.matmul([[1f, 2f]], [[1f, 0f, 1f], [0f, 1f, 1f]])"},
    {"nn.batch_matmul", 2, 2, OPAT_OUT_EWISE_FUSABLE, batch_matmul_attrs, rel_batch_matmul,
     "batched matrix product of 3-D tensors", false, .cost = OPCOST_MATMUL, .args = "x, y",
     .rule = "(B, M, N) in x's dtype (or out_dtype): x is (B, M, K), y is (B, K, N) "
             "(transpose_a/_b flip them); B broadcasts from 1",
     .example = "nn.batch_matmul(ones(shape=[2, 1, 3]), ones(shape=[2, 4, 3]), transpose_b=True)"},
    {"nn.bias_add", 2, 2, OPAT_BROADCAST, bias_add_attrs, rel_bias_add,
     "add a 1-D bias along an axis", false, .args = "x, bias",
     .rule = "x's type; bias is 1-D of x's size at `axis`",
     .example = "nn.bias_add(zeros(shape=[1, 2, 2]), [1f, 2f])"},
    {"nn.relu", 1, 1, OPAT_ELEMWISE, no_attrs, rel_identity, "max(x, 0) elementwise", false,
     .cost = OPCOST_ELEMWISE, .args = "x", .rule = "the result has x's type",
     .example = "nn.relu([-1f, 0f, 2f])"},
    {"nn.leaky_relu", 1, 1, OPAT_ELEMWISE, leaky_relu_attrs, rel_identity,
     "x if x > 0 else alpha * x", false, .cost = OPCOST_ELEMWISE, .args = "x",
     .rule = "the result has x's type", .example = "nn.leaky_relu([-1f, 2f], alpha=0.1f)"},
    /* the softmaxes are reductions for FuseOps (TVM: out-elementwise-fusable),
     * so the elementwise ops before them (attention's scale and mask) fuse in */
    {"nn.softmax", 1, 1, OPAT_COMM_REDUCE, softmax_attrs, rel_softmax,
     "softmax along an axis (default -1)", false, .args = "x",
     .rule = "the result has x's type (`axis` in range)", .example = "nn.softmax([1f, 2f, 3f])"},
    {"nn.log_softmax", 1, 1, OPAT_COMM_REDUCE, softmax_attrs, rel_softmax,
     "log of softmax along an axis (default -1)", false, .args = "x",
     .rule = "the result has x's type (`axis` in range)",
     .example = "nn.log_softmax([1f, 2f, 3f])"},
    {"nn.batch_flatten", 1, 1, OPAT_INJECTIVE, no_attrs, rel_batch_flatten,
     "flatten all but the first axis: (N, a, b) -> (N, a*b)", false, .flags = OP_VIEW, .args = "x",
     .rule = "(N, product of the other axes) in x's dtype",
     .example = "nn.batch_flatten(ones(shape=[2, 3, 4]))"},
    {"nn.dropout", 1, 2, OPAT_OPAQUE, dropout_attrs, rel_dropout,
     "TVM's 1-arg form gives (y, mask); with a key, y", false, .args = "x, [key]",
     .rule = "x's type with a key argument; without one, a tuple (x's type, x's type: the mask)",
     .example = "nn.dropout([1f, 2f, 3f, 4f], random.key(0), rate=0.5f)"},
    {"nn.dropout_train", 2, 2, OPAT_OPAQUE, dropout_attrs, rel_dropout_train, "(y, new_state)",
     false, .args = "x, state", .rule = "a tuple (x's type, the random state)",
     .example = "nn.dropout_train([1f, 2f, 3f, 4f], random.key(0))"},
    {"nn.layer_norm", 3, 3, OPAT_OUT_EWISE_FUSABLE, layer_norm_attrs, rel_layer_norm,
     "normalize along an axis", false, .args = "x, gamma, beta",
     .rule = "the result has x's type; gamma and beta are 1-D of x's size at `axis`",
     .example = "nn.layer_norm([[1f, 2f, 3f]], ones(shape=[3]), zeros(shape=[3]))"},
    {"nn.batch_norm", 5, 5, OPAT_OUT_EWISE_FUSABLE, batch_norm_attrs, rel_batch_norm,
     "inference form, (y, mean, var)", false, .args = "x, gamma, beta, moving_mean, moving_var",
     .rule = "a tuple (x's type, mean, variance), the last two 1-D of x's size at `axis` in x's "
             "dtype; the four parameters are that 1-D",
     .example = "nn.batch_norm(ones(shape=[1, 2, 2]), [1f, 2f], [0f, 1f], [0f, 0f], [1f, 1f])"},
    {"nn.instance_norm", 3, 3, OPAT_OUT_EWISE_FUSABLE, instance_norm_attrs, rel_layer_norm,
     "normalize each instance and channel", false, .args = "x, gamma, beta",
     .rule = "the result has x's type; gamma and beta are 1-D of x's size at `axis`",
     .example = "nn.instance_norm([[[1f, 2f], [3f, 5f]]], [1f, 1f], [0f, 0f])"},
    {"nn.group_norm", 3, 3, OPAT_OUT_EWISE_FUSABLE, group_norm_attrs, rel_group_norm,
     "normalize groups of channels", false, .args = "x, gamma, beta",
     .rule = "the result has x's type; gamma and beta are 1-D of the channel size, which "
             "num_groups divides",
     .example = "nn.group_norm(reshape(arange(0f, 8f, 1f), newshape=[1, 4, 2]), ones(shape=[4]), "
                "zeros(shape=[4]), num_groups=2)"},
    {"nn.l2_normalize", 1, 1, OPAT_OUT_EWISE_FUSABLE, l2_normalize_attrs, rel_l2_normalize,
     "x / sqrt(max(sum(x * x, axis), eps))", false, .args = "x",
     .rule = "the result has x's type (float; `axis` entries distinct and in range)",
     .example = "nn.l2_normalize([[3f, 4f]], eps=1e-12f, axis=[1])"},
    {"nn.lrn", 1, 1, OPAT_OUT_EWISE_FUSABLE, lrn_attrs, rel_lrn,
     "local response normalization across `size` neighbours along an axis", false, .args = "x",
     .rule = "the result has x's type (float; size >= 1)",
     .example = "nn.lrn(ones(shape=[1, 3, 2, 2]), size=3)"},
    {"nn.prelu", 2, 2, OPAT_BROADCAST, prelu_attrs, rel_prelu, "x if x > 0 else alpha[c] * x",
     false, .cost = OPCOST_ELEMWISE, .args = "x, alpha",
     .rule = "the result has x's type; alpha is 1-D of x's size at `axis`",
     .example = "nn.prelu([[-1f, 2f], [-3f, 4f]], [0.5f, 0.25f])"},
    {"nn.fast_softmax", 1, 1, OPAT_COMM_REDUCE, softmax_attrs, rel_softmax,
     "softmax along an axis with TVM's fast_exp (float32; other dtypes exactly)", false,
     .args = "x", .rule = "the result has x's type (`axis` in range)",
     .example = "nn.fast_softmax([1f, 2f, 3f])"},
    {"nn.cross_entropy", 2, 2, OPAT_COMM_REDUCE, no_attrs, rel_cross_entropy,
     "-sum(log(x) * y) / batch for (batch, classes) predictions x and targets y", false,
     .args = "x, y",
     .rule = "a scalar in x's dtype; x (predictions) and y (targets) are both (batch, classes), x "
             "float",
     .example = "nn.cross_entropy([[0.25f, 0.75f]], [[0f, 1f]])"},
    {"nn.cross_entropy_with_logits", 2, 2, OPAT_COMM_REDUCE, no_attrs, rel_cross_entropy,
     "-sum(x * y) / batch for (batch, classes) log-predictions x and targets y", false,
     .args = "x, y",
     .rule = "a scalar in x's dtype; x (logits) and y (targets) are both (batch, classes), x float",
     .example = "nn.cross_entropy_with_logits([[-1.4f, -0.3f]], [[0f, 1f]])"},
    {"nn.nll_loss", 3, 3, OPAT_OUT_EWISE_FUSABLE, nll_loss_attrs, rel_nll_loss,
     "the negative log-likelihood of target classes under log-probabilities pred, weighted", false,
     .args = "pred, target, weights",
     .rule = "pred (N, C, d...) float, target (N, d...) integer, weights (C); a scalar in pred's "
             "dtype, or target's shape with reduction=\"none\"",
     .example = "nn.nll_loss([[-1f, -2f], [-0.5f, -3f]], [0, 1], [1f, 1f], ignore_index=-1)"},
    {0},
};
