/* transform_index.c — op family "transform_index": ops that read or write
 * a tensor at positions given by an index tensor, with TVM v0.10's names,
 * attributes and fusion patterns (relay/attrs/transform.h): gather,
 * gather_nd, scatter, scatter_add, scatter_nd, sparse_to_dense,
 * unravel_index, adv_index, and argwhere (data-dependent: its row count
 * is the number of nonzero elements, `?` until the value is known).
 *
 * The relations check the index tensors' dtypes and the shapes TVM's
 * relations and compute functions assume (its relations leave several to
 * the compute, e.g. scatter's indices and updates having one shape).
 * Index values are checked by the kernels: in [-n, n) (negative ones count
 * from the end, as numpy) or an error naming the index, the axis and its
 * size; TVM reads out of bounds there.  sparse_to_dense skips coordinates
 * outside the output, as TVM's compute does. */
#include <string.h>

#include "ops/families.h"
#include "ops/transform_int.h"

static const OpAttrSpec no_attrs[] = {{0}};

/* ───────────────────────────── gather ───────────────────────────── */

/* indices' shape: the same rank as the data, equal dims off the axis, at
 * least one entry along it (TVM's checks), signed integer indices. */
static Type *rel_gather(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *ix = x ? rel_tensor(cx, args, 1) : NULL;
  if (!ix || !xf_int(cx, ix, "indices", false)) return NULL;
  if (rel_attr_is_none(cx, attrs, "axis"))
    return rel_fail(cx, "gather: attribute `axis` is required (None is not supported)");
  int n = x->u.tensor.ndim, a = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), n);
  if (a < 0) return NULL;
  if (ix->u.tensor.ndim != n)
    return rel_fail(cx, "gather: data %s and indices %s must have the same rank", xf_shape(cx, x),
                    xf_shape(cx, ix));
  for (int i = 0; i < n; i++)
    if (i != a && !rel_unify_dim(cx, x->u.tensor.dims[i], ix->u.tensor.dims[i]))
      return rel_fail(cx, "gather: data %s and indices %s differ at axis %d (gathering along %d)",
                      xf_shape(cx, x), xf_shape(cx, ix), i, a);
  if (xf_is_const(ix->u.tensor.dims[a], 0))
    return rel_fail(cx, "gather: indices %s must have at least one entry along axis %d",
                    xf_shape(cx, ix), a);
  return xf_tensor(cx, x->u.tensor.dtype, n, ix->u.tensor.dims);
}

/* ───────────────────────────── gather_nd ───────────────────────────── */

/* The index tuple size M of gather_nd / scatter_nd: indices' first dim,
 * which must be a constant. */
static int64_t tuple_size(RelCtx *cx, const Type *ix) {
  if (ix->u.tensor.ndim < 1)
    return rel_fail(cx, "%s: indices must have rank at least 1, got a scalar", cx->op_name), -1;
  Dim m = ix->u.tensor.dims[0];
  if (m.kind != DIM_CONST)
    return rel_fail(cx, "%s: the first dim of indices %s (the index tuple size) must be a constant",
                    cx->op_name, xf_shape(cx, ix)),
           -1;
  return m.value;
}

/* indices (M, Y...) pick M-tuples: the result is Y... followed by the data
 * dims after the M + batch_dims indexed ones; batch dims must match. */
static Type *rel_gather_nd(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *ix = x ? rel_tensor(cx, args, 1) : NULL;
  if (!ix || !xf_int(cx, ix, "indices", true)) return NULL;
  int64_t m = tuple_size(cx, ix), b = rel_attr_int(cx, attrs, "batch_dims");
  bool rank_none = rel_attr_is_none(cx, attrs, "index_rank");
  int64_t rank = rank_none ? m : rel_attr_int(cx, attrs, "index_rank");
  if (m < 0 || cx->err[0]) return NULL;
  int n = x->u.tensor.ndim, k = ix->u.tensor.ndim - 1;
  if (rank != m)
    return rel_fail(cx, "gather_nd: index_rank %lld does not match indices %s", (long long)rank,
                    xf_shape(cx, ix));
  if (b < 0 || b > k)
    return rel_fail(cx, "gather_nd: batch_dims %lld is out of range for indices %s (0 to %d)",
                    (long long)b, xf_shape(cx, ix), k);
  if (m + b > n)
    return rel_fail(cx,
                    "gather_nd: indices %s index %lld axes after %lld batch dims, but data %s "
                    "has rank %d",
                    xf_shape(cx, ix), (long long)m, (long long)b, xf_shape(cx, x), n);
  for (int i = 0; i < b; i++)
    if (!rel_unify_dim(cx, x->u.tensor.dims[i], ix->u.tensor.dims[i + 1]))
      return rel_fail(cx, "gather_nd: data %s and indices %s differ in batch dim %d",
                      xf_shape(cx, x), xf_shape(cx, ix), i);
  if (k + n - (m + b) > TENSOR_MAX_RANK)
    return rel_fail(cx, "gather_nd: the result would have more than %d dims", TENSOR_MAX_RANK);
  Dim out[TENSOR_MAX_RANK];
  int o = 0;
  for (int i = 1; i <= k; i++) out[o++] = ix->u.tensor.dims[i];
  for (int i = (int)(m + b); i < n; i++) out[o++] = x->u.tensor.dims[i];
  return xf_tensor(cx, x->u.tensor.dtype, o, out);
}

/* ───────────────────────── scatter, scatter_add ───────────────────────── */

/* The data's type: indices and updates of one shape and the data's rank,
 * no larger than the data off the scatter axis. */
static Type *rel_scatter(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *ix = x ? rel_tensor(cx, args, 1) : NULL;
  const Type *up = ix ? rel_tensor(cx, args, 2) : NULL;
  if (!up || !xf_int(cx, ix, "indices", true) || !xf_same_dtype(cx, x, "data", up, "updates"))
    return NULL;
  int n = x->u.tensor.ndim, a = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), n);
  if (a < 0) return NULL;
  if (ix->u.tensor.ndim != n || up->u.tensor.ndim != n)
    return rel_fail(cx, "%s: data %s, indices %s and updates %s must have the same rank",
                    cx->op_name, xf_shape(cx, x), xf_shape(cx, ix), xf_shape(cx, up));
  for (int i = 0; i < n; i++) {
    Dim di = ix->u.tensor.dims[i], dx = x->u.tensor.dims[i];
    if (!rel_unify_dim(cx, di, up->u.tensor.dims[i]))
      return rel_fail(cx, "%s: indices %s and updates %s must have the same shape", cx->op_name,
                      xf_shape(cx, ix), xf_shape(cx, up));
    if (i != a && di.kind == DIM_CONST && dx.kind == DIM_CONST && di.value > dx.value)
      return rel_fail(cx, "%s: indices %s are larger than data %s at axis %d", cx->op_name,
                      xf_shape(cx, ix), xf_shape(cx, x), i);
  }
  return xf_tensor(cx, x->u.tensor.dtype, n, x->u.tensor.dims);
}

/* ───────────────────────────── scatter_nd ───────────────────────────── */

/* The data's type: indices (M, Y...) and updates of shape Y... followed
 * by the data dims after the first M. */
static Type *rel_scatter_nd(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *ix = x ? rel_tensor(cx, args, 1) : NULL;
  const Type *up = ix ? rel_tensor(cx, args, 2) : NULL;
  if (!up || !xf_int(cx, ix, "indices", true) || !xf_same_dtype(cx, x, "data", up, "updates"))
    return NULL;
  const char *mode = rel_attr_str(cx, attrs, "mode");
  int64_t m = cx->err[0] ? -1 : tuple_size(cx, ix);
  if (m < 0) return NULL;
  if (strcmp(mode, "update") && strcmp(mode, "add") && strcmp(mode, "mul"))
    return rel_fail(cx, "scatter_nd: mode must be \"update\", \"add\" or \"mul\", got \"%s\"",
                    mode);
  int n = x->u.tensor.ndim, k = ix->u.tensor.ndim - 1;
  if (m > n)
    return rel_fail(cx, "scatter_nd: indices %s index %lld axes but data %s has rank %d",
                    xf_shape(cx, ix), (long long)m, xf_shape(cx, x), n);
  if (k + n - m > TENSOR_MAX_RANK)
    return rel_fail(cx, "scatter_nd: the updates would have more than %d dims", TENSOR_MAX_RANK);
  Dim want[TENSOR_MAX_RANK];
  int w = 0;
  for (int i = 1; i <= k; i++) want[w++] = ix->u.tensor.dims[i];
  for (int i = (int)m; i < n; i++) want[w++] = x->u.tensor.dims[i];
  bool ok = up->u.tensor.ndim == w;
  for (int i = 0; ok && i < w; i++) ok = rel_unify_dim(cx, up->u.tensor.dims[i], want[i]);
  if (!ok)
    return rel_fail(cx, "scatter_nd: updates %s must have shape %s (indices %s, data %s)",
                    xf_shape(cx, up), rel_shape_str(cx, w, want), xf_shape(cx, ix),
                    xf_shape(cx, x));
  return xf_tensor(cx, x->u.tensor.dtype, n, x->u.tensor.dims);
}

/* ─────────────────────────── sparse_to_dense ─────────────────────────── */

/* A tensor of output_shape and the values' dtype: indices 0-D, 1-D (one
 * coordinate each) or 2-D (rows of coordinates), one value per index or a
 * scalar one, and a scalar default of the values' dtype. */
static Type *rel_sparse_to_dense(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                 const Attrs *attrs) {
  const Type *si = rel_tensor(cx, args, 0), *sv = si ? rel_tensor(cx, args, 1) : NULL;
  const Type *dv = sv ? xf_scalar(cx, args, 2, "default_value") : NULL;
  if (!dv || !xf_int(cx, si, "sparse_indices", false)) return NULL;
  int64_t shape[TENSOR_MAX_RANK];
  int r = rel_attr_ints(cx, attrs, "output_shape", shape, TENSOR_MAX_RANK);
  if (r < 0 || cx->err[0]) return NULL;
  if (!xf_same_dtype(cx, sv, "sparse_values", dv, "default_value")) return NULL;
  int ni = si->u.tensor.ndim;
  if (ni > 2)
    return rel_fail(cx, "sparse_to_dense: sparse_indices must be 0-D, 1-D or 2-D, got %s",
                    xf_shape(cx, si));
  if (sv->u.tensor.ndim > 1)
    return rel_fail(cx, "sparse_to_dense: sparse_values must be 0-D or 1-D, got %s",
                    xf_shape(cx, sv));
  Dim coords = ni == 2 ? si->u.tensor.dims[1] : dim_const(1);
  if (coords.kind == DIM_CONST && coords.value > r)
    return rel_fail(cx,
                    "sparse_to_dense: sparse_indices %s give %lld coordinates but output_shape "
                    "has rank %d",
                    xf_shape(cx, si), (long long)coords.value, r);
  Dim count = ni ? si->u.tensor.dims[0] : dim_const(1);
  if (sv->u.tensor.ndim == 1 && !rel_unify_dim(cx, sv->u.tensor.dims[0], count))
    return rel_fail(cx, "sparse_to_dense: sparse_values %s must have one value per index of %s",
                    xf_shape(cx, sv), xf_shape(cx, si));
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < r; i++) {
    if (shape[i] < 0)
      return rel_fail(cx, "sparse_to_dense: output_shape has a negative size %lld",
                      (long long)shape[i]);
    out[i] = dim_const(shape[i]);
  }
  return xf_tensor(cx, sv->u.tensor.dtype, r, out);
}

/* ─────────────────────────── unravel_index ─────────────────────────── */

static Type *rel_unravel_index(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *ix = rel_tensor(cx, args, 0), *sh = ix ? rel_tensor(cx, args, 1) : NULL;
  if (!sh || !xf_int(cx, ix, "indices", true) || !xf_int(cx, sh, "shape", true)) return NULL;
  if (ix->u.tensor.ndim > 1)
    return rel_fail(cx, "unravel_index: indices must be a scalar or 1-D, got %s", xf_shape(cx, ix));
  if (sh->u.tensor.ndim != 1)
    return rel_fail(cx, "unravel_index: shape must be 1-D, got %s", xf_shape(cx, sh));
  Dim out[2] = {sh->u.tensor.dims[0], ix->u.tensor.ndim ? ix->u.tensor.dims[0] : dim_const(0)};
  return xf_tensor(cx, ix->u.tensor.dtype, 1 + ix->u.tensor.ndim, out);
}

/* ───────────────────────────── adv_index ───────────────────────────── */

/* numpy's advanced indexing with integer tensors: the broadcast shape of
 * the indices followed by the data dims they do not index. */
static Type *rel_adv_index(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *t = args[0];
  if (t->kind != TY_TUPLE || t->u.tuple.n < 2)
    return rel_fail(cx,
                    "adv_index: expects a tuple (data, index, ...) with at least one index, "
                    "got %s",
                    rel_type_str(cx, t));
  int n = t->u.tuple.n;
  Type *const *f = t->u.tuple.fields;
  for (int i = 0; i < n; i++)
    if (f[i]->kind != TY_TENSOR)
      return rel_fail(cx, "adv_index: field %d must be a tensor, got %s", i,
                      rel_type_str(cx, f[i]));
  const Type *x = f[0];
  if (n - 1 > x->u.tensor.ndim)
    return rel_fail(cx, "adv_index: %d indices for data %s of rank %d", n - 1, xf_shape(cx, x),
                    x->u.tensor.ndim);
  int nb = f[1]->u.tensor.ndim;
  Dim *b = f[1]->u.tensor.dims;
  for (int i = 1; i < n; i++) {
    if (!dtype_is_int(f[i]->u.tensor.dtype))
      return rel_fail(cx, "adv_index: index %d must be integers, got %s", i - 1,
                      dtype_name(f[i]->u.tensor.dtype));
    if (i > 1 && !rel_broadcast(cx, nb, b, f[i]->u.tensor.ndim, f[i]->u.tensor.dims, &nb, &b))
      return NULL;
  }
  if (nb + x->u.tensor.ndim - (n - 1) > TENSOR_MAX_RANK)
    return rel_fail(cx, "adv_index: the result would have more than %d dims", TENSOR_MAX_RANK);
  Dim out[TENSOR_MAX_RANK];
  if (nb) memcpy(out, b, sizeof(Dim) * (size_t)nb);
  for (int i = n - 1; i < x->u.tensor.ndim; i++) out[nb++] = x->u.tensor.dims[i];
  return xf_tensor(cx, x->u.tensor.dtype, nb, out);
}

/* ───────────────────────────── argwhere ───────────────────────────── */

/* argwhere(c): int32 (count, rank of c), count the nonzero elements of c
 * when its value is known (at run time), else `?`. */
static Type *rel_argwhere(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *c = rel_tensor(cx, args, 0);
  if (!c) return NULL;
  const Tensor *v = values ? values[0] : NULL;
  Dim out[2] = {dim_any(), dim_const(c->u.tensor.ndim)};
  if (v) {
    int64_t n = 0;
    for (int64_t i = 0; i < v->numel; i++) n += tensor_get_f64(v, i) != 0;
    out[0] = dim_const(n);
  }
  return xf_tensor(cx, DT_INT32, 2, out);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec gather_attrs[] = {{"axis", AV_NONE, "None"}, {0}};
static const OpAttrSpec gather_nd_attrs[] = {
    {"batch_dims", AV_INT, "0"}, {"index_rank", AV_NONE, "None"}, {0}};
static const OpAttrSpec scatter_attrs[] = {{"axis", AV_INT, "0"}, {0}};
static const OpAttrSpec scatter_nd_attrs[] = {{"mode", AV_STR, NULL}, {0}};
static const OpAttrSpec sparse_to_dense_attrs[] = {{"output_shape", AV_LIST, NULL}, {0}};

const OpDef ops_family_transform_index[] = {
    {"gather", 2, 2, OPAT_INJECTIVE, gather_attrs, rel_gather,
     "out[.., i, ..] = x[.., indices[.., i, ..], ..]", false, .args = "x, indices",
     .rule = "x's dtype, indices' shape (same rank as x)",
     .example = "gather([[1f, 2f], [3f, 4f]], [[1, 0]], axis=0)"},
    {"gather_nd", 2, 2, OPAT_INJECTIVE, gather_nd_attrs, rel_gather_nd,
     "x at the index tuples indices[:, ...]", false, .args = "x, indices",
     .rule = "x's dtype: indices (M, Y...) index x's M axes after batch_dims; shape (Y..., x's "
             "axes after those)",
     .example = "gather_nd([[1f, 2f], [3f, 4f]], [[1, 0], [0, 1]])"},
    {"scatter", 3, 3, OPAT_OPAQUE, scatter_attrs, rel_scatter,
     "x with updates written along an axis", false, .args = "x, indices, updates",
     .rule = "the result has x's type; indices and updates share a shape of x's rank",
     .example = "scatter(zeros(shape=[3]), [2, 0], [5f, 6f], axis=0)"},
    {"scatter_add", 3, 3, OPAT_OPAQUE, scatter_attrs, rel_scatter,
     "x with updates added along an axis", false, .args = "x, indices, updates",
     .rule = "the result has x's type; indices and updates share a shape of x's rank",
     .example = "scatter_add(zeros(shape=[3]), [2, 2], [5f, 6f], axis=0)"},
    {"scatter_nd", 3, 3, OPAT_OPAQUE, scatter_nd_attrs, rel_scatter_nd,
     "x with slices at index tuples written, added or multiplied (mode update, add, mul)", false,
     .args = "x, indices, updates",
     .rule =
         "the result has x's type; indices (M, Y...), updates (Y..., x's axes after the first M)",
     .example = "scatter_nd(zeros(shape=[3]), [[2, 0]], [5f, 6f], mode=\"update\")"},
    {"sparse_to_dense", 3, 3, OPAT_OPAQUE, sparse_to_dense_attrs, rel_sparse_to_dense,
     "a dense tensor", false, .args = "indices, values, default_value",
     .rule = "values' dtype, shape output_shape",
     .example = "sparse_to_dense([0, 2], [5f, 6f], 0f, output_shape=[4])"},
    {"unravel_index", 2, 2, OPAT_INJECTIVE, no_attrs, rel_unravel_index,
     "the coordinates of flat indices in a shape", false, .args = "indices, shape",
     .rule = "indices' dtype: (len(shape),) for a scalar index, (len(shape), n) for n indices",
     .example = "unravel_index([5, 7], [2, 4])"},
    {"adv_index", 1, 1, OPAT_INJECTIVE, no_attrs, rel_adv_index,
     "numpy advanced indexing x[i0, i1, ...]", false, .flags = OP_TUPLE_ARG,
     .args = "(x, i0, i1, ...)",
     .rule = "x's dtype: the indices' broadcast shape, then x's axes not indexed",
     .example = "adv_index(([[1f, 2f], [3f, 4f]], [1, 0]))"},
    {"argwhere", 1, 1, OPAT_OPAQUE, no_attrs, rel_argwhere,
     "the coordinates of the nonzero elements, in row-major order", false, .args = "condition",
     .rule = "int32 (count, rank of condition): count the nonzero elements, `?` until the value "
             "is known",
     .example = "argwhere([[1f, 0f], [0f, 2f]])"},
    {0},
};
