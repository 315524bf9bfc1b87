/* random.c — op family "random": Threefry-2x32 keys (RandState) and the
 * distributions drawn from them (text-format.md B.1, docs/prng.md).
 *
 * Every op is a pure function of its key (same key, same numbers), so none
 * is effectful; all are opaque to fusion.  Shapes come from a `shape`
 * attribute that may use size variables.  Kernels come later. */
#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

static Type *key_type(RelCtx *cx) { return type_randstate(cx->arena, no_span); }

static bool is_key(RelCtx *cx, Type **args, int i) {
  if (args[i]->kind == TY_RANDSTATE) return true;
  rel_fail(cx, "%s: argument %d must be a RandState key, got %s", cx->op_name, i + 1,
           rel_type_str(cx, args[i]));
  return false;
}

/* A rank-0 integer tensor (seed, fold-in data). */
static bool int_scalar(RelCtx *cx, Type **args, int i, const char *what) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return false;
  if (t->u.tensor.ndim == 0 && dtype_is_int(t->u.tensor.dtype)) return true;
  rel_fail(cx, "%s: %s must be an integer scalar, got %s", cx->op_name, what, rel_type_str(cx, t));
  return false;
}

static Type *rel_key(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                     const Attrs *attrs) {
  return int_scalar(cx, args, 0, "the seed") ? key_type(cx) : NULL;
}

static Type *rel_split(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  if (!is_key(cx, args, 0)) return NULL;
  int64_t n = rel_attr_int(cx, attrs, "num");
  if (cx->err[0]) return NULL;
  if (n < 1 || n > 1 << 20)
    return rel_fail(cx, "random.split: num must be in [1, 1048576], got %lld", (long long)n);
  Type **keys = ARENA_ARRAY(cx->arena, Type *, n);
  for (int64_t i = 0; i < n; i++) keys[i] = key_type(cx);
  return type_tuple(cx->arena, (int)n, keys, no_span);
}

static Type *rel_fold_in(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  return is_key(cx, args, 0) && int_scalar(cx, args, 1, "the data") ? key_type(cx) : NULL;
}

/* Tensor[shape, dtype] with the dtype restricted to one class. */
static Type *drawn(RelCtx *cx, const Attrs *attrs, DType dflt, char cls, const char *allowed) {
  Dim dims[TENSOR_MAX_RANK];
  int n = rel_attr_dims(cx, attrs, "shape", dims, TENSOR_MAX_RANK);
  DType dt = rel_attr_dtype(cx, attrs, "dtype", dflt);
  if (cx->err[0]) return NULL;
  if (n < 0) n = 0; /* shape=None: a scalar */
  if (dtype_class(dt) != cls)
    return rel_fail(cx, "%s: dtype must be %s, got %s", cx->op_name, allowed, dtype_name(dt));
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static Type *rel_bits(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  return is_key(cx, args, 0) ? drawn(cx, attrs, DT_UINT32, 'u', "an unsigned integer type") : NULL;
}

static Type *rel_uniform(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  if (!is_key(cx, args, 0)) return NULL;
  Type *t = drawn(cx, attrs, DT_FLOAT32, 'f', "a float type");
  if (!t) return NULL;
  double lo = rel_attr_float(cx, attrs, "low"), hi = rel_attr_float(cx, attrs, "high");
  if (!cx->err[0] && !(lo <= hi))
    return rel_fail(cx, "random.uniform: low %g must not exceed high %g", lo, hi);
  return cx->err[0] ? NULL : t;
}

static Type *rel_normal(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  return is_key(cx, args, 0) ? drawn(cx, attrs, DT_FLOAT32, 'f', "a float type") : NULL;
}

/* bernoulli(k, p, shape=): each dim of p (a float tensor, aligned right)
 * must be 1 or match the shape; without a shape the result has p's. */
static Type *rel_bernoulli(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *p = is_key(cx, args, 0) ? rel_tensor(cx, args, 1) : NULL;
  if (!p) return NULL;
  int np = p->u.tensor.ndim;
  if (!dtype_is_float(p->u.tensor.dtype))
    return rel_fail(cx, "random.bernoulli: p must be a float tensor, got %s", rel_type_str(cx, p));
  Dim dims[TENSOR_MAX_RANK];
  int n = rel_attr_dims(cx, attrs, "shape", dims, TENSOR_MAX_RANK);
  if (cx->err[0]) return NULL;
  if (n < 0) return type_tensor(cx->arena, DT_BOOL, np, p->u.tensor.dims, no_span);
  bool ok = np <= n;
  for (int i = 0; ok && i < np; i++) {
    Dim a = p->u.tensor.dims[i];
    ok = (a.kind == DIM_CONST && a.value == 1) || rel_unify_dim(cx, a, dims[n - np + i]);
  }
  if (!ok)
    return rel_fail(cx, "random.bernoulli: p of shape %s does not broadcast to shape %s",
                    rel_shape_str(cx, np, p->u.tensor.dims), rel_shape_str(cx, n, dims));
  return type_tensor(cx->arena, DT_BOOL, n, dims, no_span);
}

static Type *rel_key_data(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  Dim two = dim_const(2);
  return is_key(cx, args, 0) ? type_tensor(cx->arena, DT_UINT32, 1, &two, no_span) : NULL;
}

static Type *rel_wrap_key(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *t = rel_tensor(cx, args, 0);
  if (!t) return NULL;
  Dim two = dim_const(2);
  if (t->u.tensor.dtype != DT_UINT32 || t->u.tensor.ndim != 1 ||
      !rel_unify_dim(cx, t->u.tensor.dims[0], two))
    return rel_fail(cx, "random.wrap_key: expects Tensor[(2), uint32], got %s",
                    rel_type_str(cx, t));
  return key_type(cx);
}

static const OpAttrSpec split_attrs[] = {{"num", AV_INT, "2"}, {0}};
static const OpAttrSpec bits_attrs[] = {
    {"shape", AV_LIST, "[]"}, {"dtype", AV_STR, "\"uint32\""}, {0}};
static const OpAttrSpec uniform_attrs[] = {{"shape", AV_LIST, "[]"},
                                           {"dtype", AV_STR, "\"float32\""},
                                           {"low", AV_FLOAT, "0f"},
                                           {"high", AV_FLOAT, "1f"},
                                           {0}};
static const OpAttrSpec normal_attrs[] = {
    {"shape", AV_LIST, "[]"}, {"dtype", AV_STR, "\"float32\""}, {0}};
static const OpAttrSpec bernoulli_attrs[] = {{"shape", AV_LIST, "None"}, {0}};

const OpDef ops_family_random[] = {
    {"random.key", 1, 1, OPAT_OPAQUE, no_attrs, rel_key, "a RandState from an integer seed", false,
     .args = "seed", .rule = "a random key; seed is an integer scalar",
     .example = "random.key(42)"},
    {"random.split", 1, 1, OPAT_OPAQUE, split_attrs, rel_split, "a tuple of num new keys", false,
     .args = "key", .rule = "a tuple of `num` keys",
     .example = "random.split(random.key(0), num=3)"},
    {"random.fold_in", 2, 2, OPAT_OPAQUE, no_attrs, rel_fold_in,
     "a new key from a key and an integer", false, .flags = OP_KEEPS_KEY, .args = "key, data",
     .rule = "a key; data is an integer scalar", .example = "random.fold_in(random.key(0), 7)"},
    {"random.bits", 1, 1, OPAT_OPAQUE, bits_attrs, rel_bits, "raw random bits", false,
     .args = "key",
     .rule =
         "shape `shape` (scalar when None) in `dtype`, an unsigned integer type (uint32 default)",
     .example = "random.bits(random.key(0), shape=[2])"},
    {"random.uniform", 1, 1, OPAT_OPAQUE, uniform_attrs, rel_uniform,
     "uniform floats in [low, high)", false, .args = "key",
     .rule = "shape `shape` (scalar when None) in `dtype`, a float type (float32 default)",
     .example = "random.uniform(random.key(0), shape=[3], low=-1f, high=1f)"},
    {"random.normal", 1, 1, OPAT_OPAQUE, normal_attrs, rel_normal, "standard normal floats", false,
     .args = "key",
     .rule = "shape `shape` (scalar when None) in `dtype`, a float type (float32 default)",
     .example = "random.normal(random.key(0), shape=[3])"},
    {"random.bernoulli", 2, 2, OPAT_OPAQUE, bernoulli_attrs, rel_bernoulli,
     "bool tensor, True with probability p", false, .args = "key, p",
     .rule = "bool, of `shape` (p's shape when None); p is float and broadcasts to it",
     .example = "random.bernoulli(random.key(0), 0.5f, shape=[4])"},
    {"random.key_data", 1, 1, OPAT_OPAQUE, no_attrs, rel_key_data, "the key's two uint32 words",
     false, .flags = OP_KEEPS_KEY, .args = "key", .rule = "uint32, shape (2): the key's two words",
     .example = "random.key_data(random.key(0))"},
    {"random.wrap_key", 1, 1, OPAT_OPAQUE, no_attrs, rel_wrap_key,
     "a key from a Tensor[(2), uint32]", false, .args = "data", .rule = "a key; data is (2) uint32",
     .example = "random.wrap_key([0u32, 42u32])"},
    {0},
};
