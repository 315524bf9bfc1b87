/* dyn.c — op family "dyn": reshape, strided_slice, full and broadcast_to
 * whose shape arguments are tensors (TVM's dyn.* ops).
 *
 * Each relation has two regimes.  When the shape argument's VALUE is known
 * (always at run time; at compile time for a constant), it rebuilds the
 * static op's attributes from that value and calls the static op's relation,
 * so both ops share one shape rule and the result has real dims.  Otherwise
 * the rank comes from the shape argument's (static) length and the dims are
 * `?`.  A shape argument must be a 1-D integer tensor of known length. */
#include <string.h>

#include "ops/families.h"

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

/* Calls the static op's relation under this op's name (messages name it). */
static Type *static_rel(RelCtx *cx, const char *op, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const OpDef *d = ops_get(ops_lookup(op));
  RLY_ASSERT(d);
  return d->rel(cx, nargs, args, values, attrs);
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

static const OpAttrSpec reshape_attrs[] = {
    {"allowzero", AV_BOOL, "False"}, {"newshape", AV_LIST, "None"}, {0}};
static const OpAttrSpec slice_attrs[] = {
    {"begin", AV_LIST, "None"},        {"end", AV_LIST, "None"},  {"strides", AV_LIST, "None"},
    {"slice_mode", AV_STR, "\"end\""}, {"axes", AV_LIST, "None"}, {0}};
static const OpAttrSpec init_attrs[] = {{"shape", AV_LIST, "None"}, {"dtype", AV_STR, "\"\""}, {0}};

const OpDef ops_family_dyn[] = {
    {"dyn.reshape", 2, 2, OPAT_INJECTIVE, reshape_attrs, rel_dyn_reshape,
     "dyn.reshape(x, newshape): reshape to a shape given as a tensor", false, .flags = OP_VIEW},
    {"dyn.strided_slice", 3, 4, OPAT_INJECTIVE, slice_attrs, rel_dyn_strided_slice,
     "dyn.strided_slice(x, begin, end[, strides]): slice by tensors", false, .compute = NULL},
    {"dyn.full", 2, 2, OPAT_ELEMWISE, init_attrs, rel_dyn_full,
     "dyn.full(fill_value, shape): a tensor of a run-time shape", false, .compute = NULL},
    {"dyn.broadcast_to", 2, 2, OPAT_BROADCAST, init_attrs, rel_dyn_broadcast_to,
     "dyn.broadcast_to(x, shape): broadcast to a run-time shape", false, .compute = NULL},
    {0},
};
