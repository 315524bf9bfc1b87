/* reduce.c — op family "reduce": sum mean max min prod argmax argmin all
 * any logsumexp variance std mean_variance, and the scans cumsum cumprod.
 *
 * Attributes follow TVM's ReduceAttrs / ArgReduceAttrs / VarianceAttrs:
 * axis (None = all axes; an int or a list; negative counts from the end),
 * keepdims (reduced axes stay as 1), exclude (reduce the axes NOT listed),
 * unbiased (variance: divide by n - 1).  An empty list reduces nothing, as
 * in TVM.  argmax/argmin give int32 indices.
 *
 * TVM's `variance` op takes the data and its mean (the mean with keepdims,
 * or any tensor of the data's rank that broadcasts to it); rly also
 * accepts the data alone and computes the mean.  std, mean_variance and
 * logsumexp are functions of TVM's Python API over other ops; here they
 * are ops with those functions' names and parameters (logsumexp: axis and
 * keepdims only), and mean_variance gives the tuple (mean, variance), both
 * of the reduced shape.
 *
 * cumsum/cumprod follow ScanopAttrs: axis (None: over the flattened data,
 * giving a 1-d result), dtype (of the result and the accumulation; ""
 * keeps the data's), exclusive (element i combines the elements before
 * i).  TVM marks them opaque; here they are out-elemwise-fusable, like
 * softmax, so they lower (lower/compute/compute_reduce.c) and their elementwise
 * consumers fuse into them.  The reference kernels are in
 * kernels/kernels_reduce.c. */
#include "ops/families.h"

static const Span no_span;

/* Marks the reduced axes of a rank-`ndim` tensor; false after rel_fail.
 * `exclude`: whether the op has that attribute (logsumexp has not). */
static bool reduced_axes(RelCtx *cx, const Attrs *attrs, int ndim, bool *red, bool exclude) {
  bool all = rel_attr_is_none(cx, attrs, "axis");
  for (int i = 0; i < ndim; i++) red[i] = all;
  if (all) return !cx->err[0];
  int64_t ax[TENSOR_MAX_RANK];
  int n = rel_attr_ints(cx, attrs, "axis", ax, TENSOR_MAX_RANK);
  if (n < 0) return false;
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, ax[i], ndim);
    if (a < 0) return false;
    if (red[a]) {
      rel_fail(cx, "%s: axis %d is listed twice", cx->op_name, a);
      return false;
    }
    red[a] = true;
  }
  if (exclude && rel_attr_bool(cx, attrs, "exclude"))
    for (int i = 0; i < ndim; i++) red[i] = !red[i];
  return !cx->err[0];
}

static Type *reduce_ex(RelCtx *cx, Type **args, const Attrs *attrs, DType out, bool exclude) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int ndim = x->u.tensor.ndim, n = 0;
  bool red[TENSOR_MAX_RANK];
  if (!reduced_axes(cx, attrs, ndim, red, exclude)) return NULL;
  bool keep = rel_attr_bool(cx, attrs, "keepdims");
  Dim dims[TENSOR_MAX_RANK];
  for (int i = 0; i < ndim; i++) {
    if (!red[i])
      dims[n++] = x->u.tensor.dims[i];
    else if (keep)
      dims[n++] = dim_const(1);
  }
  if (cx->err[0]) return NULL;
  return type_tensor(cx->arena, out == DT_INVALID ? x->u.tensor.dtype : out, n, dims, no_span);
}

static Type *reduce(RelCtx *cx, Type **args, const Attrs *attrs, DType out) {
  return reduce_ex(cx, args, attrs, out, true);
}

static Type *rel_reduce(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  return reduce(cx, args, attrs, DT_INVALID);
}

static Type *rel_argreduce(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  return reduce(cx, args, attrs, DT_INT32);
}

static Type *rel_logsumexp(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  return reduce_ex(cx, args, attrs, DT_INVALID, false);
}

/* The mean argument of variance: the data's dtype and rank, each dim 1 or
 * the data's, so that it broadcasts to the data. */
static bool mean_arg_ok(RelCtx *cx, const Type *x, Type **args) {
  const Type *m = rel_tensor(cx, args, 1);
  if (!m) return false;
  if (m->u.tensor.dtype != x->u.tensor.dtype) {
    rel_fail(cx, "%s: the mean's dtype %s differs from the data's %s", cx->op_name,
             dtype_name(m->u.tensor.dtype), dtype_name(x->u.tensor.dtype));
    return false;
  }
  int n = x->u.tensor.ndim;
  bool ok = m->u.tensor.ndim == n;
  for (int i = 0; ok && i < n; i++) {
    Dim d = m->u.tensor.dims[i];
    ok = (d.kind == DIM_CONST && d.value == 1) || rel_unify_dim(cx, d, x->u.tensor.dims[i]);
  }
  if (!ok)
    rel_fail(cx, "%s: the mean's shape %s does not broadcast to the data's %s", cx->op_name,
             rel_shape_str(cx, m->u.tensor.ndim, m->u.tensor.dims),
             rel_shape_str(cx, n, x->u.tensor.dims));
  return ok;
}

/* variance and std: numbers only; variance's optional second argument is
 * the mean. */
static Type *rel_variance(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  Type *t = reduce(cx, args, attrs, DT_INVALID);
  if (!t) return NULL;
  if (args[0]->u.tensor.dtype == DT_BOOL)
    return rel_fail(cx, "%s: expects a numeric tensor, got bool", cx->op_name);
  rel_attr_bool(cx, attrs, "unbiased");
  if (cx->err[0] || (nargs == 2 && !mean_arg_ok(cx, args[0], args)) || cx->err[0]) return NULL;
  return t;
}

static Type *rel_mean_variance(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  Type *t = rel_variance(cx, nargs, args, values, attrs);
  if (!t) return NULL;
  Type *both[2] = {t, t};
  return type_tuple(cx->arena, 2, both, no_span);
}

/* The flattened length of dims: a constant when every dim is (0 when one
 * is 0), the one dim that is not 1 (a size variable stays), else `?`. */
static bool flat_dim(RelCtx *cx, int n, const Dim *dims, Dim *out) {
  int64_t total = 1;
  bool known = true;
  int other = -1, nother = 0;
  for (int i = 0; i < n; i++) {
    if (dims[i].kind == DIM_CONST && dims[i].value == 0) return *out = dim_const(0), true;
    if (dims[i].kind != DIM_CONST) known = false;
    if (dims[i].kind != DIM_CONST || dims[i].value != 1) other = i, nother++;
  }
  if (!known && nother == 1) return *out = dims[other], true;
  for (int i = 0; known && i < n; i++) {
    if (__builtin_mul_overflow(total, dims[i].value, &total)) {
      rel_fail(cx, "%s: the flattened size of %s overflows", cx->op_name,
               rel_shape_str(cx, n, dims));
      return false;
    }
  }
  *out = known ? dim_const(total) : dim_any();
  return true;
}

/* cumsum/cumprod: the data's shape (axis given) or its flattened length
 * (axis None), of the dtype attribute or the data's. */
static Type *rel_scan(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  DType dt = rel_attr_dtype(cx, attrs, "dtype", x->u.tensor.dtype);
  rel_attr_bool(cx, attrs, "exclusive");
  bool flat = rel_attr_is_none(cx, attrs, "axis");
  if (cx->err[0]) return NULL;
  int ndim = x->u.tensor.ndim;
  if (!flat) {
    if (rel_axis(cx, rel_attr_int(cx, attrs, "axis"), ndim) < 0 || cx->err[0]) return NULL;
    return type_tensor(cx->arena, dt, ndim, x->u.tensor.dims, no_span);
  }
  Dim n;
  if (!flat_dim(cx, ndim, x->u.tensor.dims, &n)) return NULL;
  return type_tensor(cx->arena, dt, 1, &n, no_span);
}

static const OpAttrSpec reduce_attrs[] = {
    {"axis", AV_LIST, "None"}, {"keepdims", AV_BOOL, "False"}, {"exclude", AV_BOOL, "False"}, {0}};
static const OpAttrSpec argreduce_attrs[] = {{"axis", AV_LIST, "None"},
                                             {"keepdims", AV_BOOL, "False"},
                                             {"select_last_index", AV_BOOL, "False"},
                                             {"exclude", AV_BOOL, "False"},
                                             {0}};

static const OpAttrSpec lse_attrs[] = {
    {"axis", AV_LIST, "None"}, {"keepdims", AV_BOOL, "False"}, {0}};
static const OpAttrSpec variance_attrs[] = {{"axis", AV_LIST, "None"},
                                            {"keepdims", AV_BOOL, "False"},
                                            {"exclude", AV_BOOL, "False"},
                                            {"unbiased", AV_BOOL, "False"},
                                            {0}};
static const OpAttrSpec scan_attrs[] = {
    {"axis", AV_NONE, "None"}, {"dtype", AV_STR, "\"\""}, {"exclusive", AV_BOOL, "False"}, {0}};

/* X(name, rel, attrs, doc) */
#define REDUCE_OPS(X)                                                                  \
  X("sum", rel_reduce, reduce_attrs, "sum over axes (axis=None: all)")                 \
  X("mean", rel_reduce, reduce_attrs, "arithmetic mean over axes")                     \
  X("max", rel_reduce, reduce_attrs, "maximum over axes")                              \
  X("min", rel_reduce, reduce_attrs, "minimum over axes")                              \
  X("prod", rel_reduce, reduce_attrs, "product over axes")                             \
  X("argmax", rel_argreduce, argreduce_attrs, "int32 index of the maximum along axes") \
  X("argmin", rel_argreduce, argreduce_attrs, "int32 index of the minimum along axes") \
  X("all", rel_reduce, reduce_attrs, "whether every element is nonzero")               \
  X("any", rel_reduce, reduce_attrs, "whether some element is nonzero")                \
  X("logsumexp", rel_logsumexp, lse_attrs, "log(sum(exp(x))) over axes, computed stably")

#define ENTRY(n, r, a, d)                                                                 \
  {n,                                                                                     \
   1,                                                                                     \
   1,                                                                                     \
   OPAT_COMM_REDUCE,                                                                      \
   a,                                                                                     \
   r,                                                                                     \
   d,                                                                                     \
   false,                                                                                 \
   .args = "x",                                                                           \
   .rule = "x's dtype (int32 for arg*), without the reduced axes (size 1 with keepdims)", \
   .example = n "([[1f, 5f], [3f, 2f]], axis=[1])"},

/* clang-format off */
const OpDef ops_family_reduce[] = {
    REDUCE_OPS(ENTRY)
    {"variance", 1, 2, OPAT_COMM_REDUCE, variance_attrs, rel_variance,
     "variance over axes, about mean if given (unbiased=True: divides by n - 1)", false,
     .args = "x, [mean]", .rule = "x's dtype (not bool), without the reduced axes (size 1 with keepdims); the optional mean is x's mean over them", .example = "variance([1f, 2f, 4f])"},
    {"std", 1, 1, OPAT_COMM_REDUCE, variance_attrs, rel_variance,
     "standard deviation over axes (unbiased=True: from n - 1)", false, .args = "x", .rule = "x's dtype (not bool), without the reduced axes (size 1 with keepdims)", .example = "std([1f, 2f, 4f])"},
    {"mean_variance", 1, 1, OPAT_COMM_REDUCE, variance_attrs, rel_mean_variance,
     "the tuple (mean, variance) over axes", false, .args = "x", .rule = "a tuple (mean, variance), each x's dtype (not bool) without the reduced axes (size 1 with keepdims)", .example = "mean_variance([[1f, 2f], [3f, 5f]], axis=[1])"},
    {"cumsum", 1, 1, OPAT_OUT_EWISE_FUSABLE, scan_attrs, rel_scan,
     "running sums along axis (None: flattened); exclusive=True starts at 0", false,
     .args = "x", .rule = "x's shape in `dtype` (default x's dtype); with axis=None, 1-D of x's element count", .example = "cumsum([1, 2, 3])"},
    {"cumprod", 1, 1, OPAT_OUT_EWISE_FUSABLE, scan_attrs, rel_scan,
     "running products along axis (None: flattened); exclusive=True starts at 1", false,
     .args = "x", .rule = "x's shape in `dtype` (default x's dtype); with axis=None, 1-D of x's element count", .example = "cumprod([1f, 2f, 3f], exclusive=True)"},
    {0},
};
/* clang-format on */
