/* dyn.c — op family "dyn": TVM's dyn.* ops, whose shape-giving
 * arguments are tensors: dyn.reshape, dyn.strided_slice, dyn.full,
 * dyn.broadcast_to, dyn.tile, dyn.topk, dyn.one_hot, dyn.zeros, dyn.ones,
 * dyn.squeeze, dyn.nn.pad, dyn.image.resize2d, the reductions dyn.sum, dyn.mean,
 * dyn.max, dyn.min, dyn.prod, dyn.logsumexp (axes as a tensor), dyn.expand_dims,
 * dyn.split and dyn.cumsum.
 *
 * Each relation has two regimes.  When the shape argument's VALUE is known
 * (always at run time; at compile time for a constant), it rebuilds the
 * static op's attributes from that value and calls the static op's relation,
 * so both ops share one shape rule and the result has real dims.  Otherwise
 * the rank comes from the shape argument's (static) length and the dims it
 * decides are `?`.  A shape argument must be a 1-D integer tensor of known
 * length (dyn.nn.pad: (rank, 2); dyn.topk's k and dyn.one_hot's depth:
 * integer scalars).  The kernels (kernels/kernels_dyn.c) likewise run the
 * static ops' kernels with the rebuilt attributes. */
#include "ops/dyn.h"

#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/image.h"

static const Span no_span;

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

/* The static length of a 1-D integer shape argument, or -1 after failing. */
static int shape_arg_len(RelCtx *cx, Type **args, int i, const char *what) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return -1;
  if (!dtype_is_int(t->u.tensor.dtype) || t->u.tensor.ndim != 1 ||
      t->u.tensor.dims[0].kind != DIM_CONST)
    return rel_fail(cx, "%s: %s must be a 1-D integer tensor of known length, got %s", cx->op_name,
                    what, rel_type_str(cx, t)),
           -1;
  if (t->u.tensor.dims[0].value > TENSOR_MAX_RANK)
    return rel_fail(cx, "%s: %s has more than %d entries", cx->op_name, what, TENSOR_MAX_RANK), -1;
  return (int)t->u.tensor.dims[0].value;
}

static const Tensor *value_of(const Tensor **values, int i) { return values ? values[i] : NULL; }

static AttrValue *list_of(RelCtx *cx, const Tensor *t) {
  AttrValue *v = ARENA_NEW(cx->arena, AttrValue);
  v->kind = AV_LIST;
  v->u.list.n = (int)t->numel;
  v->u.list.items = ARENA_ARRAY(cx->arena, AttrValue *, t->numel ? t->numel : 1);
  for (int64_t i = 0; i < t->numel; i++)
    v->u.list.items[i] = attr_int(cx->arena, tensor_get_i64(t, i), DT_INT64);
  return v;
}

/* A copy of `base` with the given keys set (replacing same-named ones). */
static Attrs *with_attrs(RelCtx *cx, const Attrs *base, int n, const char **keys,
                         AttrValue **vals) {
  int nb = base ? base->n : 0, k = 0;
  Attrs *a = attrs_new(cx->arena, nb + n);
  for (int i = 0; i < nb; i++) {
    bool replaced = false;
    for (int j = 0; j < n; j++) replaced = replaced || strcmp(base->keys[i], keys[j]) == 0;
    if (!replaced) a->keys[k] = base->keys[i], a->vals[k++] = base->vals[i];
  }
  for (int j = 0; j < n; j++) a->keys[k] = keys[j], a->vals[k++] = vals[j];
  a->n = k;
  return a;
}

/* Calls the static op's relation under this op's name: messages that the
 * static relation begins with its own name ("tile: ...") are renamed. */
static Type *static_rel(RelCtx *cx, const char *op, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const OpDef *d = ops_get(ops_lookup(op));
  RLY_ASSERT(d);
  Type *t = d->rel(cx, nargs, args, values, attrs);
  size_t n = strlen(op);
  if (!t && strncmp(cx->err, op, n) == 0 && cx->err[n] == ':') {
    char rest[sizeof cx->err];
    snprintf(rest, sizeof rest, "%s", cx->err + n);
    snprintf(cx->err, sizeof cx->err, "%s%s", cx->op_name, rest);
  }
  return t;
}

static Type *all_any(RelCtx *cx, DType dt, int n) {
  Dim dims[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++) dims[i] = dim_any();
  return tensor_of(cx, dt, n, dims);
}

static Type *rel_dyn_reshape(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "newshape") : -1;
  if (n < 0) return NULL;
  const Tensor *v = value_of(values, 1);
  if (!v) return all_any(cx, x->u.tensor.dtype, n);
  const char *key = "newshape";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "reshape", 1, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

static Type *rel_dyn_strided_slice(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  static const char *const what[] = {"begin", "end", "strides"};
  int len[3];
  for (int i = 0; i < nargs - 1 && x; i++)
    if ((len[i] = shape_arg_len(cx, args, i + 1, what[i])) < 0) return NULL;
  if (!x) return NULL;
  int rank = x->u.tensor.ndim;
  if (len[0] > rank)
    return rel_fail(cx, "dyn.strided_slice: begin has %d entries but the data has rank %d", len[0],
                    rank);
  bool known = true;
  for (int i = 1; i < nargs; i++) known = known && value_of(values, i);
  if (!known) {
    Dim dims[TENSOR_MAX_RANK];
    memcpy(dims, x->u.tensor.dims, sizeof(Dim) * (size_t)rank);
    for (int i = 0; i < len[0]; i++) dims[i] = dim_any();
    return tensor_of(cx, x->u.tensor.dtype, rank, dims);
  }
  const char *keys[3] = {"begin", "end", "strides"};
  AttrValue *vals[3];
  for (int i = 0; i < nargs - 1; i++) vals[i] = list_of(cx, values[i + 1]);
  return static_rel(cx, "strided_slice", 1, args, values,
                    with_attrs(cx, attrs, nargs - 1, keys, vals));
}

static Type *rel_dyn_full(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *f = rel_tensor(cx, args, 0);
  int n = f ? shape_arg_len(cx, args, 1, "shape") : -1;
  if (n < 0) return NULL;
  const Tensor *v = value_of(values, 1);
  if (!v) {
    if (f->u.tensor.ndim != 0)
      return rel_fail(cx, "dyn.full: fill_value must be a scalar, got %s", rel_type_str(cx, f));
    DType dt = rel_attr_dtype(cx, attrs, "dtype", f->u.tensor.dtype);
    return cx->err[0] ? NULL : all_any(cx, dt, n);
  }
  const char *key = "shape";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "full", 1, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

static Type *rel_dyn_broadcast_to(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                  const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "shape") : -1;
  if (n < 0) return NULL;
  if (n < x->u.tensor.ndim)
    return rel_fail(cx, "dyn.broadcast_to: cannot broadcast rank %d to rank %d", x->u.tensor.ndim,
                    n);
  const Tensor *v = value_of(values, 1);
  if (!v) {
    DType dt = rel_attr_dtype(cx, attrs, "dtype", x->u.tensor.dtype);
    return cx->err[0] ? NULL : all_any(cx, dt, n);
  }
  const char *key = "shape";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "broadcast_to", 1, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

/* A copy of tensor type t with dim `axis` made `?`. */
static Type *any_at(RelCtx *cx, const Type *t, int axis) {
  Dim dims[TENSOR_MAX_RANK];
  memcpy(dims, t->u.tensor.dims, sizeof(Dim) * (size_t)t->u.tensor.ndim);
  dims[axis] = dim_any();
  return tensor_of(cx, t->u.tensor.dtype, t->u.tensor.ndim, dims);
}

/* The same for every tensor of a relation's result (a tensor or a tuple). */
static Type *any_at_all(RelCtx *cx, Type *t, int axis) {
  if (!t || t->kind == TY_TENSOR) return t ? any_at(cx, t, axis) : NULL;
  Type **f = ARENA_ARRAY(cx->arena, Type *, t->u.tuple.n ? t->u.tuple.n : 1);
  for (int i = 0; i < t->u.tuple.n; i++) f[i] = any_at(cx, t->u.tuple.fields[i], axis);
  return type_tuple(cx->arena, t->u.tuple.n, f, no_span);
}

/* An integer scalar argument (rank 0, or dyn.topk's shape (1,)). */
static bool int_scalar_arg(RelCtx *cx, Type **args, int i, const char *what, bool one_ok) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return false;
  bool one =
      one_ok && t->u.tensor.ndim == 1 && rel_unify_dim(cx, t->u.tensor.dims[0], dim_const(1));
  if (dtype_is_int(t->u.tensor.dtype) && (t->u.tensor.ndim == 0 || one)) return true;
  rel_fail(cx, "%s: %s must be an integer scalar%s, got %s", cx->op_name, what,
           one_ok ? " (or a tensor of one integer)" : "", rel_type_str(cx, t));
  return false;
}

static Attrs *with_int(RelCtx *cx, const Attrs *attrs, const char *key, int64_t v) {
  AttrValue *val = attr_int(cx->arena, v, DT_INT64);
  return with_attrs(cx, attrs, 1, &key, &val);
}

static Type *rel_dyn_tile(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "reps") : -1;
  if (n < 0) return NULL;
  const Tensor *v = value_of(values, 1);
  if (!v) return all_any(cx, x->u.tensor.dtype, n > x->u.tensor.ndim ? n : x->u.tensor.ndim);
  const char *key = "reps";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "tile", 1, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

/* dyn.topk(x, k): k < 1 takes the whole axis, as topk's k. */
static Type *rel_dyn_topk(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x || !int_scalar_arg(cx, args, 1, "k", true)) return NULL;
  const Tensor *v = value_of(values, 1);
  if (v && v->numel != 1)
    return rel_fail(cx, "dyn.topk: k must hold one integer, got %lld", (long long)v->numel);
  Type *t = static_rel(cx, "topk", 1, args, values,
                       with_int(cx, attrs, "k", v ? tensor_get_i64(v, 0) : 0));
  int a = t ? rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) : -1;
  return a < 0 ? NULL : v ? t : any_at_all(cx, t, a);
}

/* dyn.one_hot(indices, on_value, off_value, depth). */
static Type *rel_dyn_one_hot(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  if (!int_scalar_arg(cx, args, 3, "depth", false)) return NULL;
  const Tensor *v = value_of(values, 3);
  Type *t = static_rel(cx, "one_hot", 3, args, values,
                       with_int(cx, attrs, "depth", v ? tensor_get_i64(v, 0) : 0));
  if (!t || v) return t;
  int64_t axis = rel_attr_int(cx, attrs, "axis");
  return any_at(cx, t, axis < 0 ? t->u.tensor.ndim - 1 : (int)axis);
}

/* dyn.zeros(shape) and dyn.ones(shape). */
static Type *rel_dyn_init(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  int n = shape_arg_len(cx, args, 0, "shape");
  if (n < 0) return NULL;
  const Tensor *v = value_of(values, 0);
  if (!v) {
    DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32);
    return cx->err[0] ? NULL : all_any(cx, dt, n);
  }
  for (int i = 0; i < n; i++)
    if (tensor_get_i64(v, i) < 0)
      return rel_fail(cx, "%s: shape has a negative entry %lld", cx->op_name,
                      (long long)tensor_get_i64(v, i));
  const char *key = "shape";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "zeros", 0, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

/* dyn.squeeze(x, axes): the listed axes (distinct, of size 1) removed. */
static Type *rel_dyn_squeeze(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "axes") : -1, rank = x ? x->u.tensor.ndim : 0;
  if (n < 0) return NULL;
  if (n > rank) return rel_fail(cx, "dyn.squeeze: %d axes to remove from rank %d", n, rank);
  const Tensor *v = value_of(values, 1);
  if (!v) return all_any(cx, x->u.tensor.dtype, rank - n);
  bool seen[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, tensor_get_i64(v, i), rank);
    if (a < 0) return NULL;
    if (seen[a]) return rel_fail(cx, "dyn.squeeze: axis %d is listed twice", a);
    seen[a] = true;
  }
  const char *key = "axis";
  AttrValue *val = list_of(cx, v);
  return static_rel(cx, "squeeze", 1, args, values, with_attrs(cx, attrs, 1, &key, &val));
}

/* pad_width's value as nn.pad's attribute: [[before, after], ...]. */
static AttrValue *pairs_of(RelCtx *cx, const Tensor *t) {
  AttrValue *v = list_of(cx, t);
  int n = (int)(t->numel / 2);
  AttrValue **rows = ARENA_ARRAY(cx->arena, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    AttrValue *r = ARENA_NEW(cx->arena, AttrValue);
    r->kind = AV_LIST, r->u.list.n = 2, r->u.list.items = v->u.list.items + 2 * i;
    rows[i] = r;
  }
  v->u.list.n = n, v->u.list.items = rows;
  return v;
}

Attrs *dyn_with_attrs(RelCtx *cx, const Attrs *base, int n, const char **keys, AttrValue **vals) {
  return with_attrs(cx, base, n, keys, vals);
}

AttrValue *dyn_list_of(RelCtx *cx, const Tensor *t) { return list_of(cx, t); }

AttrValue *dyn_pairs_of(RelCtx *cx, const Tensor *t) { return pairs_of(cx, t); }

/* dyn.nn.pad(x, pad_width (rank, 2), pad_value). */
static Type *rel_dyn_pad(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *pw = x ? rel_tensor(cx, args, 1) : NULL;
  const Type *pv = pw ? rel_tensor(cx, args, 2) : NULL;
  if (!pv) return NULL;
  int rank = x->u.tensor.ndim;
  if (!dtype_is_int(pw->u.tensor.dtype) || pw->u.tensor.ndim != 2 ||
      !rel_unify_dim(cx, pw->u.tensor.dims[0], dim_const(rank)) ||
      !rel_unify_dim(cx, pw->u.tensor.dims[1], dim_const(2)))
    return rel_fail(cx,
                    "dyn.nn.pad: pad_width must be integers of shape (%d, 2) for data %s, got %s",
                    rank, rel_shape_str(cx, rank, x->u.tensor.dims), rel_type_str(cx, pw));
  Type *sargs[2] = {args[0], args[2]};
  const Tensor *svals[2] = {value_of(values, 0), value_of(values, 2)};
  const Tensor *v = value_of(values, 1);
  if (v) {
    const char *key = "pad_width";
    AttrValue *val = pairs_of(cx, v);
    return static_rel(cx, "nn.pad", 2, sargs, svals, with_attrs(cx, attrs, 1, &key, &val));
  }
  const char *mode = rel_attr_str(cx, attrs, "pad_mode");
  if (cx->err[0]) return NULL;
  if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflect"))
    return rel_fail(
        cx, "dyn.nn.pad: pad_mode must be \"constant\", \"edge\" or \"reflect\", got \"%s\"", mode);
  if (pv->u.tensor.ndim != 0)
    return rel_fail(cx, "dyn.nn.pad: the pad value must be a scalar, got %s", rel_type_str(cx, pv));
  return all_any(cx, x->u.tensor.dtype, rank);
}

/* dyn.image.resize2d(x, size (2), roi (4)[, scales (2)]): image.resize2d's type with the
 * sizes from the tensor (`?` when not known). */
static Type *rel_dyn_resize2d(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  int n = shape_arg_len(cx, args, 1, "size");
  const Type *roi = n >= 0 ? rel_tensor(cx, args, 2) : NULL;
  if (!roi) return NULL;
  if (n != 2) return rel_fail(cx, "dyn.image.resize2d: size must have 2 entries (H, W), got %d", n);
  if (!dtype_is_float(roi->u.tensor.dtype) || roi->u.tensor.ndim != 1 ||
      !rel_unify_dim(cx, roi->u.tensor.dims[0], dim_const(4)))
    return rel_fail(cx, "dyn.image.resize2d: roi must be 4 floats, got %s", rel_type_str(cx, roi));
  const Type *sc = nargs > 3 ? rel_tensor(cx, args, 3) : NULL;
  if (nargs > 3 && (!sc || !dtype_is_float(sc->u.tensor.dtype) || sc->u.tensor.ndim != 1 ||
                    !rel_unify_dim(cx, sc->u.tensor.dims[0], dim_const(2))))
    return rel_fail(cx, "dyn.image.resize2d: scales must be 2 floats, got %s",
                    sc ? rel_type_str(cx, sc) : "no tensor");
  Dim size[2] = {dim_any(), dim_any()};
  const Tensor *v = value_of(values, 1);
  for (int i = 0; v && i < 2; i++) {
    int64_t k = tensor_get_i64(v, i);
    if (k < 0)
      return rel_fail(cx, "dyn.image.resize2d: size has a negative entry %lld", (long long)k);
    size[i] = dim_const(k);
  }
  return image_resize_type(cx, args, attrs, 2, size);
}

/* dyn.sum(x, axes), dyn.mean, ...: the static reduction (the op's name
 * without "dyn.") over the axes listed in a tensor; unknown axes: x's rank
 * with keepdims, else rank less axes' length, with unknown dims. */
static Type *rel_dyn_reduce(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "axes") : -1, rank = x ? x->u.tensor.ndim : 0;
  if (n < 0) return NULL;
  const char *op = cx->op_name + 4, *key = "axis";
  const Tensor *v = value_of(values, 1);
  if (v)
    return static_rel(cx, op, 1, args, values,
                      with_attrs(cx, attrs, 1, &key, (AttrValue *[]){list_of(cx, v)}));
  if (n > rank) return rel_fail(cx, "%s: %d axes to reduce in rank %d", cx->op_name, n, rank);
  bool keep = rel_attr_bool(cx, attrs, "keepdims");
  return cx->err[0] ? NULL : all_any(cx, x->u.tensor.dtype, keep ? rank : rank - n);
}

/* dyn.expand_dims(x, axes): size-1 axes inserted at the result positions
 * listed in a tensor (negative: from the end of the result), as ONNX's
 * Unsqueeze; unknown axes: rank plus axes' length with unknown dims. */
static Type *rel_dyn_expand_dims(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                 const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "axes") : -1, out = x ? x->u.tensor.ndim + n : 0;
  if (n < 0) return NULL;
  if (out > TENSOR_MAX_RANK)
    return rel_fail(cx, "dyn.expand_dims: the result would have rank %d", out);
  const Tensor *v = value_of(values, 1);
  if (!v) return all_any(cx, x->u.tensor.dtype, out);
  bool at[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, tensor_get_i64(v, i), out);
    if (a < 0) return NULL;
    if (at[a]) return rel_fail(cx, "dyn.expand_dims: axis %d is listed twice", a);
    at[a] = true;
  }
  Dim dims[TENSOR_MAX_RANK];
  for (int o = 0, k = 0; o < out; o++) dims[o] = at[o] ? dim_const(1) : x->u.tensor.dims[k++];
  return tensor_of(cx, x->u.tensor.dtype, out, dims);
}

/* The sizes of dyn.split as split's indices (where pieces 1.. begin),
 * checked to be non-negative and to add up to the axis (when known). */
static AttrValue *split_indices(RelCtx *cx, const Tensor *v, Dim d) {
  int64_t n = v->numel, at = 0;
  AttrValue *l = ARENA_NEW(cx->arena, AttrValue);
  l->kind = AV_LIST, l->u.list.n = (int)(n ? n - 1 : 0);
  l->u.list.items = ARENA_ARRAY(cx->arena, AttrValue *, n ? n : 1);
  for (int64_t i = 0; i < n; i++) {
    int64_t s = tensor_get_i64(v, i);
    if (s < 0) return rel_fail(cx, "dyn.split: size %lld is negative", (long long)s), NULL;
    at += s;
    if (i + 1 < n) l->u.list.items[i] = attr_int(cx->arena, at, DT_INT64);
  }
  if (d.kind == DIM_CONST && at != d.value)
    return rel_fail(cx, "dyn.split: sizes add up to %lld, not the axis' %lld", (long long)at,
                    (long long)d.value),
           NULL;
  return l;
}

/* dyn.split(x, sizes): pieces of the given sizes along `axis` (a tuple of
 * sizes' length); unknown sizes: x's type with `?` along the axis. */
static Type *rel_dyn_split(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int n = x ? shape_arg_len(cx, args, 1, "sizes") : -1;
  int a = n >= 0 ? rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) : -1;
  if (a < 0) return NULL;
  if (n < 1) return rel_fail(cx, "dyn.split: sizes must have at least one entry");
  const Tensor *v = value_of(values, 1);
  if (v) {
    const char *key = "indices_or_sections";
    AttrValue *val = split_indices(cx, v, x->u.tensor.dims[a]);
    return val ? static_rel(cx, "split", 1, args, values, with_attrs(cx, attrs, 1, &key, &val))
               : NULL;
  }
  Type **f = ARENA_ARRAY(cx->arena, Type *, n);
  for (int i = 0; i < n; i++) f[i] = any_at(cx, x, a);
  return type_tuple(cx->arena, n, f, no_span);
}

/* dyn.cumsum(x, axis): cumsum along an axis given as an integer scalar
 * (reverse=True: sums from the end); the result has cumsum's type. */
static Type *rel_dyn_cumsum(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x || !int_scalar_arg(cx, args, 1, "axis", true)) return NULL;
  if (x->u.tensor.ndim == 0) return rel_fail(cx, "dyn.cumsum: x must have an axis");
  const Tensor *v = value_of(values, 1);
  rel_attr_bool(cx, attrs, "reverse");
  if (cx->err[0]) return NULL;
  return static_rel(cx, "cumsum", 1, args, values,
                    with_int(cx, attrs, "axis", v ? tensor_get_i64(v, 0) : 0));
}

/* The static op each dyn op's kernel reuses (its relation names it too). */
static const char *const static_ops[][2] = {
    {"dyn.tile", "tile"},
    {"dyn.topk", "topk"},
    {"dyn.one_hot", "one_hot"},
    {"dyn.zeros", "zeros"},
    {"dyn.ones", "ones"},
    {"dyn.squeeze", "squeeze"},
    {"dyn.nn.pad", "nn.pad"},
    {"dyn.sum", "sum"},
    {"dyn.mean", "mean"},
    {"dyn.max", "max"},
    {"dyn.min", "min"},
    {"dyn.prod", "prod"},
    {"dyn.logsumexp", "logsumexp"},
    {"dyn.split", "split"},
    {"dyn.cumsum", "cumsum"},
};

int dyn_static_op(const OpDef *row) {
  for (size_t i = 0; row && i < sizeof static_ops / sizeof static_ops[0]; i++)
    if (strcmp(row->name, static_ops[i][0]) == 0) return ops_lookup(static_ops[i][1]);
  return -1;
}

static const OpAttrSpec reshape_attrs[] = {
    {"allowzero", AV_BOOL, "False"}, {"newshape", AV_LIST, "None"}, {0}};
static const OpAttrSpec slice_attrs[] = {
    {"begin", AV_LIST, "None"},        {"end", AV_LIST, "None"},  {"strides", AV_LIST, "None"},
    {"slice_mode", AV_STR, "\"end\""}, {"axes", AV_LIST, "None"}, {0}};
static const OpAttrSpec init_attrs[] = {{"shape", AV_LIST, "None"}, {"dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec tile_attrs[] = {{"reps", AV_LIST, "None"}, {0}};
static const OpAttrSpec topk_attrs[] = {
    {"k", AV_NONE, "None"},          {"axis", AV_INT, "-1"},    {"ret_type", AV_STR, "\"both\""},
    {"is_ascend", AV_BOOL, "False"}, {"dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec one_hot_attrs[] = {
    {"depth", AV_INT, "1"}, {"axis", AV_INT, "-1"}, {"dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec squeeze_attrs[] = {{"axis", AV_LIST, "None"}, {0}};
static const OpAttrSpec dyn_reduce_attrs[] = {
    {"keepdims", AV_BOOL, "False"}, {"exclude", AV_BOOL, "False"}, {0}};
static const OpAttrSpec dyn_expand_attrs[] = {{0}};
static const OpAttrSpec dyn_split_attrs[] = {{"axis", AV_INT, "0"}, {0}};
static const OpAttrSpec dyn_cumsum_attrs[] = {
    {"dtype", AV_STR, "\"\""}, {"exclusive", AV_BOOL, "False"}, {"reverse", AV_BOOL, "False"}, {0}};
static const OpAttrSpec pad_attrs[] = {
    {"pad_width", AV_LIST, "None"}, {"pad_mode", AV_STR, "\"constant\""}, {0}};

const OpDef ops_family_dyn[] = {
    {"dyn.reshape", 2, 2, OPAT_INJECTIVE, reshape_attrs, rel_dyn_reshape,
     "reshape to a shape given as a tensor", false, .flags = OP_VIEW, .args = "x, newshape",
     .rule = "x's dtype; reshape's shape when newshape's value is known, else unknown dims of "
             "newshape's length",
     .example = "dyn.reshape([1f, 2f, 3f, 4f], [2, 2])"},
    {"dyn.strided_slice", 3, 4, OPAT_INJECTIVE, slice_attrs, rel_dyn_strided_slice,
     "slice by tensors", false, .flags = OP_VALUE_ARGS, .args = "x, begin, end, [strides]",
     .rule = "x's dtype; strided_slice's type when begin, end and strides are known, else x's rank "
             "with unknown dims",
     .example = "dyn.strided_slice([1f, 2f, 3f, 4f], [1], [3], [1])"},
    {"dyn.full", 2, 2, OPAT_ELEMWISE, init_attrs, rel_dyn_full, "a tensor of a run-time shape",
     false, .args = "fill_value, shape",
     .rule = "`dtype` (default fill_value's): shape's value when known, else unknown dims of "
             "shape's length",
     .example = "dyn.full(3f, [2, 2])"},
    {"dyn.broadcast_to", 2, 2, OPAT_BROADCAST, init_attrs, rel_dyn_broadcast_to,
     "broadcast to a run-time shape", false, .args = "x, shape",
     .rule =
         "x's dtype (or `dtype`): shape's value when known, else unknown dims of shape's length",
     .example = "dyn.broadcast_to([1f, 2f], [2, 2])"},
    {"dyn.tile", 2, 2, OPAT_INJECTIVE, tile_attrs, rel_dyn_tile,
     "tile by repetition counts given as a tensor", false, .args = "x, reps",
     .rule = "x's dtype; tile's type when reps is known, else unknown dims of max(x's rank, reps' "
             "length)",
     .example = "dyn.tile([1f, 2f], [2])"},
    {"dyn.topk", 2, 2, OPAT_OPAQUE, topk_attrs, rel_dyn_topk, "the top k along an axis, k a tensor",
     false, .args = "x, k",
     .rule = "topk's type with k unknown along `axis` unless k's value is known",
     .example = "dyn.topk([3f, 1f, 2f], 2)"},
    {"dyn.one_hot", 4, 4, OPAT_OUT_EWISE_FUSABLE, one_hot_attrs, rel_dyn_one_hot,
     "one-hot with a run-time depth", false, .args = "indices, on_value, off_value, depth",
     .rule = "one_hot's type with depth unknown along `axis` unless its value is known",
     .example = "dyn.one_hot([0, 2], 1f, 0f, 3)"},
    {"dyn.zeros", 1, 1, OPAT_ELEMWISE, init_attrs, rel_dyn_init, "zeros of a run-time shape", false,
     .args = "shape",
     .rule = "`dtype`: shape's value when known, else unknown dims of shape's length",
     .example = "dyn.zeros([2, 2], dtype=\"float32\")"},
    {"dyn.ones", 1, 1, OPAT_ELEMWISE, init_attrs, rel_dyn_init, "ones of a run-time shape", false,
     .args = "shape",
     .rule = "`dtype`: shape's value when known, else unknown dims of shape's length",
     .example = "dyn.ones([2], dtype=\"float32\")"},
    {"dyn.squeeze", 2, 2, OPAT_INJECTIVE, squeeze_attrs, rel_dyn_squeeze,
     "remove the size-1 axes listed in a tensor", false, .flags = OP_VIEW, .args = "x, axes",
     .rule = "x's dtype; squeeze's type when axes is known, else rank less axes' length with "
             "unknown dims",
     .example = "dyn.squeeze([[1f], [2f]], [1])"},
    {"dyn.nn.pad", 3, 3, OPAT_INJECTIVE, pad_attrs, rel_dyn_pad, "pad by widths given as a tensor",
     false, .flags = OP_VALUE_ARGS, .args = "data, pad_width, pad_value",
     .rule =
         "data's dtype; nn.pad's type when pad_width is known, else data's rank with unknown dims",
     .example = "dyn.nn.pad([[1f, 2f]], [[0, 0], [1, 1]], 0f)"},
#define DYN_REDUCE(name, doc)                                                        \
  {"dyn." name,                                                                      \
   2,                                                                                \
   2,                                                                                \
   OPAT_OPAQUE,                                                                      \
   dyn_reduce_attrs,                                                                 \
   rel_dyn_reduce,                                                                   \
   doc " over axes given as a tensor",                                               \
   false,                                                                            \
   .args = "x, axes",                                                                \
   .rule = name                                                                      \
   "'s type when axes is known, else x's rank (less axes' length without keepdims) " \
   "with unknown dims",                                                              \
   .example = "dyn." name "([[1f, 5f], [3f, 2f]], [1])"},
    DYN_REDUCE("sum", "sum") DYN_REDUCE("mean", "mean") DYN_REDUCE("max", "maximum") DYN_REDUCE(
        "min", "minimum") DYN_REDUCE("prod", "product") DYN_REDUCE("logsumexp", "log-sum-exp")
#undef DYN_REDUCE
        {"dyn.expand_dims", 2, 2, OPAT_INJECTIVE, dyn_expand_attrs, rel_dyn_expand_dims,
         "insert size-1 axes at the result positions listed in a tensor", false, .flags = OP_VIEW,
         .args = "x, axes",
         .rule =
             "x's dtype and dims with 1s at the listed result axes when axes is known, else rank "
             "plus axes' length with unknown dims",
         .example = "dyn.expand_dims([1f, 2f], [0, 2])"},
    {"dyn.split", 2, 2, OPAT_OPAQUE, dyn_split_attrs, rel_dyn_split,
     "split into pieces of the sizes given as a tensor", false, .args = "x, sizes",
     .rule = "a tuple of sizes' length: x's type with each size along `axis` when sizes is known "
             "(they must add up to the axis), else `?` there",
     .example = "dyn.split([1f, 2f, 3f], [1, 2])"},
    {"dyn.cumsum", 2, 2, OPAT_OPAQUE, dyn_cumsum_attrs, rel_dyn_cumsum,
     "running sums along an axis given as a tensor; reverse=True sums from the end", false,
     .args = "x, axis", .rule = "cumsum's type (x's shape in `dtype`, default x's dtype)",
     .example = "dyn.cumsum([1f, 2f, 3f], 0, reverse=True)"},
    {"dyn.image.resize2d", 3, 4, OPAT_INJECTIVE, image_resize2d_attrs, rel_dyn_resize2d,
     "resize H, W to sizes given as a tensor (and the coordinates' scales, out/in)", false,
     .flags = OP_VALUE_ARGS, .args = "data, size, roi[, scales]",
     .rule = "image.resize2d's type with size from the `size` argument (unknown H and W unless its "
             "value is known)",
     .example = "dyn.image.resize2d(ones(shape=[1, 1, 2, 2]), [4, 4], [0f, 0f, 0f, 0f])"},
    {0},
};
