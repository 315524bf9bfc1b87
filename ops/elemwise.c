/* elemwise.c — op family "elemwise": unary math, binary arithmetic,
 * bitwise ops and comparisons with numpy broadcasting, where, cast, clip.
 *
 * Type rules (as TVM's): binary ops need equal dtypes and broadcast their
 * shapes; comparisons give bool; unary ops keep the argument's type, the
 * predicates isnan/isinf/isfinite give bool; where broadcasts all three
 * arguments (x and y share a dtype).  Beyond TVM's relations (which leave
 * it to the compute), the bitwise ops take integers or bool and the shifts
 * integers only, as a type error.  fast_exp, fast_tanh and fast_erf are
 * TVM's approximations by name; rly computes them as exp, tanh and erf.
 * The unary and binary ops are the rows of ops/elemwise_table.h, which
 * their compute rules (lower/compute/compute_elemwise.c), gradient rows
 * (ad/grad_rules.c) and reference kernels (kernels/kernels_elemwise.c)
 * expand too; where, cast and clip are written here. */
#include "ops/elemwise_table.h"
#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static bool same_dtype(RelCtx *cx, const Type *a, const Type *b) {
  if (a->u.tensor.dtype == b->u.tensor.dtype) return true;
  rel_fail(cx, "%s: dtypes %s and %s differ", cx->op_name, dtype_name(a->u.tensor.dtype),
           dtype_name(b->u.tensor.dtype));
  return false;
}

/* Broadcast args[0] and args[1]; the result has dtype `out` (DT_INVALID:
 * the arguments' dtype). */
static Type *binary(RelCtx *cx, Type **args, DType out) {
  const Type *a = rel_tensor(cx, args, 0), *b = a ? rel_tensor(cx, args, 1) : NULL;
  if (!b || !same_dtype(cx, a, b)) return NULL;
  int n;
  Dim *dims;
  if (!rel_broadcast(cx, a->u.tensor.ndim, a->u.tensor.dims, b->u.tensor.ndim, b->u.tensor.dims, &n,
                     &dims))
    return NULL;
  return tensor_of(cx, out == DT_INVALID ? a->u.tensor.dtype : out, n, dims);
}

static Type *rel_arith(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  return binary(cx, args, DT_INVALID);
}

static Type *rel_compare(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  return binary(cx, args, DT_BOOL);
}

static Type *rel_unary(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  return rel_tensor(cx, args, 0) ? args[0] : NULL;
}

static Type *rel_predicate(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  return x ? tensor_of(cx, DT_BOOL, x->u.tensor.ndim, x->u.tensor.dims) : NULL;
}

/* Argument i's dtype is an integer (or bool, when allowed); false after rel_fail. */
static bool bits_dtype(RelCtx *cx, const Type *t, int i, bool allow_bool) {
  DType dt = t->u.tensor.dtype;
  if (dtype_is_int(dt) || (allow_bool && dt == DT_BOOL)) return true;
  rel_fail(cx, "%s: argument %d must be an integer%s tensor, got %s", cx->op_name, i + 1,
           allow_bool ? " or bool" : "", dtype_name(dt));
  return false;
}

/* bitwise_and/or/xor and the shifts: broadcast as arithmetic, on integers
 * (bitwise ops also on bool). */
static Type *bits_binary(RelCtx *cx, Type **args, bool allow_bool) {
  const Type *a = rel_tensor(cx, args, 0), *b = a ? rel_tensor(cx, args, 1) : NULL;
  if (!b || !bits_dtype(cx, a, 0, allow_bool) || !bits_dtype(cx, b, 1, allow_bool)) return NULL;
  return binary(cx, args, DT_INVALID);
}

static Type *rel_bitwise(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  return bits_binary(cx, args, true);
}

static Type *rel_shift(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  return bits_binary(cx, args, false);
}

static Type *rel_bitwise_not(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  return x && bits_dtype(cx, x, 0, true) ? args[0] : NULL;
}

static Type *rel_where(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *c = rel_tensor(cx, args, 0);
  const Type *x = c ? rel_tensor(cx, args, 1) : NULL;
  const Type *y = x ? rel_tensor(cx, args, 2) : NULL;
  if (!y || !same_dtype(cx, x, y)) return NULL;
  int n1, n2;
  Dim *d1, *d2;
  if (!rel_broadcast(cx, c->u.tensor.ndim, c->u.tensor.dims, x->u.tensor.ndim, x->u.tensor.dims,
                     &n1, &d1) ||
      !rel_broadcast(cx, n1, d1, y->u.tensor.ndim, y->u.tensor.dims, &n2, &d2))
    return NULL;
  return tensor_of(cx, x->u.tensor.dtype, n2, d2);
}

static Type *rel_cast(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  DType dt = x ? rel_attr_dtype(cx, attrs, "dtype", DT_INVALID) : DT_INVALID;
  if (cx->err[0]) return NULL;
  if (dt == DT_INVALID) return rel_fail(cx, "cast: attribute `dtype` must name a dtype");
  return tensor_of(cx, dt, x->u.tensor.ndim, x->u.tensor.dims);
}

static Type *rel_clip(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  if (!rel_tensor(cx, args, 0)) return NULL;
  double lo = rel_attr_float(cx, attrs, "a_min"), hi = rel_attr_float(cx, attrs, "a_max");
  if (cx->err[0]) return NULL;
  if (lo > hi) return rel_fail(cx, "clip: a_min %g is greater than a_max %g", lo, hi);
  return args[0];
}

static const OpAttrSpec cast_attrs[] = {{"dtype", AV_STR, NULL}, {0}};
static const OpAttrSpec clip_attrs[] = {{"a_min", AV_FLOAT, NULL}, {"a_max", AV_FLOAT, NULL}, {0}};

/* The rows' reference text: argument names, type rule and example by kind
 * (an example is the op applied to literals). */
#define BINARY_DOC(n, ex, rl) .args = "x, y", .rule = rl, .example = n ex
#define ARITH_RULE "x and y have one dtype and broadcast; the result has it"
#define ARITH_ENTRY(n, k, d)                      \
  {n,         2, 2,     OPAT_BROADCAST, no_attrs, \
   rel_arith, d, false, .cost = k,      BINARY_DOC(n, "([7f, -7f], [2f, 3f])", ARITH_RULE)},
#define COMPARE_ENTRY(n, k, d)           \
  {n,                                    \
   2,                                    \
   2,                                    \
   OPAT_BROADCAST,                       \
   no_attrs,                             \
   rel_compare,                          \
   d,                                    \
   false,                                \
   .cost = k,                            \
   BINARY_DOC(n, "([1f, 2f], [2f, 2f])", \
              "x and y have one dtype and broadcast; the result is bool")},
#define UNARY_ENTRY(n, k, d)          \
  {n,                                 \
   1,                                 \
   1,                                 \
   OPAT_ELEMWISE,                     \
   no_attrs,                          \
   rel_unary,                         \
   d,                                 \
   false,                             \
   .cost = k,                         \
   .args = "x",                       \
   .rule = "the result has x's type", \
   .example = n "([0.25f, 0.5f])"},
#define PREDICATE_ENTRY(n, k, d) \
  {n,                            \
   1,                            \
   1,                            \
   OPAT_ELEMWISE,                \
   no_attrs,                     \
   rel_predicate,                \
   d,                            \
   false,                        \
   .cost = k,                    \
   .args = "x",                  \
   .rule = "bool, of x's shape", \
   .example = n "([1f, 0f])"},
#define BITS_ENTRY(n, k, d, r)       \
  {n,                                \
   2,                                \
   2,                                \
   OPAT_BROADCAST,                   \
   no_attrs,                         \
   r,                                \
   d,                                \
   false,                            \
   .cost = k,                        \
   BINARY_DOC(n, "([6, 5], [3, 1])", \
              "integer (or bool) x and y of one dtype broadcast; the result has it")},

#define BITNOT_ENTRY(n, k, d)                      \
  {n,                                              \
   1,                                              \
   1,                                              \
   OPAT_ELEMWISE,                                  \
   no_attrs,                                       \
   rel_bitwise_not,                                \
   d,                                              \
   false,                                          \
   .cost = k,                                      \
   .args = "x",                                    \
   .rule = "x's type (an integer or bool tensor)", \
   .example = n "([5, 0])"},

/* The rows of ops/elemwise_table.h in registry order: the ARITH and COMPARE
 * rows, the UNARY and PREDICATE rows, then BITWISE, SHIFT and BITNOT. */
#define BINARY_FIRST(n, c, row, kern, k, g, d) FIRST_##row(#n, OPCOST_##k, d)
#define BINARY_LAST(n, c, row, kern, k, g, d) LAST_##row(#n, OPCOST_##k, d)
#define UNARY_FIRST(n, c, row, kind, fn, sem, k, g, d) FIRST_##row(#n, OPCOST_##k, d)
#define UNARY_LAST(n, c, row, kind, fn, sem, k, g, d) LAST_##row(#n, OPCOST_##k, d)
#define FIRST_ARITH(n, k, d) ARITH_ENTRY(n, k, d)
#define FIRST_COMPARE(n, k, d) COMPARE_ENTRY(n, k, d)
#define FIRST_UNARY(n, k, d) UNARY_ENTRY(n, k, d)
#define FIRST_PREDICATE(n, k, d) PREDICATE_ENTRY(n, k, d)
#define FIRST_BITWISE(n, k, d)
#define FIRST_SHIFT(n, k, d)
#define FIRST_BITNOT(n, k, d)
#define LAST_ARITH(n, k, d)
#define LAST_COMPARE(n, k, d)
#define LAST_UNARY(n, k, d)
#define LAST_PREDICATE(n, k, d)
#define LAST_BITWISE(n, k, d) BITS_ENTRY(n, k, d, rel_bitwise)
#define LAST_SHIFT(n, k, d) BITS_ENTRY(n, k, d, rel_shift)
#define LAST_BITNOT(n, k, d) BITNOT_ENTRY(n, k, d)

/* clang-format off */
const OpDef ops_family_elemwise[] = {
    ELEMWISE_BINARY(BINARY_FIRST)
    ELEMWISE_UNARY(UNARY_FIRST)
    ELEMWISE_BINARY(BINARY_LAST)
    ELEMWISE_UNARY(UNARY_LAST)
    {"where", 3, 3, OPAT_BROADCAST, no_attrs, rel_where,
     "x where cond is true, else y; all three broadcast", false,
     .cost = OPCOST_ELEMWISE, .args = "cond, x, y", .rule = "cond, x and y broadcast; x and y share the result's dtype",
     .example = "where([True, False], [1f, 2f], [3f, 4f])"},
    {"cast", 1, 1, OPAT_ELEMWISE, cast_attrs, rel_cast, "convert elements",
     false, .cost = OPCOST_ELEMWISE, .args = "x",
     .rule = "x's shape in dtype", .example = "cast([1.7f, -2.5f], dtype=\"int32\")"},
    {"clip", 1, 1, OPAT_ELEMWISE, clip_attrs, rel_clip,
     "limit values to [a_min, a_max]", false,
     .cost = OPCOST_ELEMWISE, .args = "x",
     .rule = "the result has x's type", .example = "clip([-2f, 0.5f, 3f], a_min=0f, a_max=1f)"},
    {0},
};
/* clang-format on */
