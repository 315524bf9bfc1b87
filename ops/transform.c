/* transform.c — op family "transform": reshape, transpose, expand_dims,
 * squeeze, concatenate, stack, split, strided_slice, take, broadcast_to,
 * zeros/ones/full(_like), arange, shape_of, ndarray_size, one_hot, and
 * check (its data, or a run-time error where a condition holds).
 *
 * Attributes are TVM's (relay/attrs/transform.h).  Conventions:
 * - A dim that needs arithmetic but is not a constant gives `?`; a dim that
 *   is only copied keeps its size variable.
 * - reshape follows TVM's special values: 0 copies the input dim (unless
 *   allowzero), -1 is inferred, -2 copies all remaining dims, -3 merges two,
 *   -4 splits one into the next two values.  -1 is inferred even with
 *   symbolic dims when they cancel (e.g. (n, 2, 3) with [0, -1] → (n, 6)).
 * - strided_slice uses numpy semantics: negative indices count from the end,
 *   indices are clamped, negative strides walk backwards; a missing begin or
 *   end means "from the start" / "to the end" in the stride's direction.
 * - concatenate and stack take ONE tuple argument (TVM style).
 * - arange's length is known only when the values of start, stop and step
 *   are (constants at compile time, always at run time). */
#include <math.h>
#include <string.h>

#include "ops/families.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

static Type *tensor_of(RelCtx *cx, DType dt, int n, const Dim *dims) {
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static bool push(RelCtx *cx, Dim *out, int *n, Dim d) {
  if (*n < TENSOR_MAX_RANK) return out[(*n)++] = d, true;
  rel_fail(cx, "%s: the result would have more than %d dims", cx->op_name, TENSOR_MAX_RANK);
  return false;
}

/* Product of constant dims; -1 when a dim is not constant or it overflows. */
static int64_t numel(int n, const Dim *d) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    if (d[i].kind != DIM_CONST || __builtin_mul_overflow(p, d[i].value, &p)) return -1;
  return p;
}

static bool same_dim_exact(Dim a, Dim b) {
  if (a.kind != b.kind) return false;
  if (a.kind == DIM_VAR) return strcmp(a.name, b.name) == 0;
  return a.kind != DIM_ANY && a.value == b.value;
}

static bool int_dtype(RelCtx *cx, const Type *t, const char *what) {
  if (dtype_is_int(t->u.tensor.dtype)) return true;
  rel_fail(cx, "%s: %s must be integers, got %s", cx->op_name, what, dtype_name(t->u.tensor.dtype));
  return false;
}

/* ───────────────────────────── reshape ───────────────────────────── */

typedef struct Reshape {
  const Type *x;
  int n;
  Dim out[TENSOR_MAX_RANK];
  int from[TENSOR_MAX_RANK]; /* input index a dim was copied from, or -1 */
  int infer;                 /* index of the -1 dim, or -1 */
} Reshape;

static bool rs_push(RelCtx *cx, Reshape *r, Dim d, int from) {
  int n = r->n;
  if (!push(cx, r->out, &r->n, d)) return false;
  r->from[n] = from;
  return true;
}

static Dim dim_mul(Dim a, Dim b) {
  int64_t p;
  if (a.kind == DIM_CONST && b.kind == DIM_CONST && !__builtin_mul_overflow(a.value, b.value, &p))
    return dim_const(p);
  return dim_any();
}

/* -4: split input dim `d` into a and b (one may be -1). */
static bool rs_split(RelCtx *cx, Reshape *r, Dim d, Dim a, Dim b) {
  if (a.kind == DIM_CONST && a.value == -1 && b.kind == DIM_CONST && b.value > 0)
    a = d.kind == DIM_CONST && d.value % b.value == 0 ? dim_const(d.value / b.value) : dim_any();
  else if (b.kind == DIM_CONST && b.value == -1 && a.kind == DIM_CONST && a.value > 0)
    b = d.kind == DIM_CONST && d.value % a.value == 0 ? dim_const(d.value / a.value) : dim_any();
  Dim p = dim_mul(a, b);
  if ((a.kind == DIM_CONST && a.value < 0) || (b.kind == DIM_CONST && b.value < 0) ||
      (d.kind == DIM_CONST && p.kind == DIM_CONST && p.value != d.value) ||
      (d.kind == DIM_CONST && (a.kind == DIM_ANY || b.kind == DIM_ANY)))
    return rel_fail(cx, "%s: -4 cannot split %s into %s", cx->op_name, rel_shape_str(cx, 1, &d),
                    rel_shape_str(cx, 2, (Dim[]){a, b})),
           false;
  return rs_push(cx, r, a, -1) && rs_push(cx, r, b, -1);
}

/* One special value of newshape at position *j (the input cursor is *src). */
static bool rs_special(RelCtx *cx, Reshape *r, int m, const Dim *ns, int *j, int *src) {
  const Dim *in = r->x->u.tensor.dims;
  int nin = r->x->u.tensor.ndim;
  int64_t v = ns[*j].value;
  bool need1 = v == 0 || v == -3 || v == -4, need2 = v == -3;
  if ((need1 && *src >= nin) || (need2 && *src + 1 >= nin))
    return rel_fail(cx, "%s: newshape %s refers past the input's rank %d", cx->op_name,
                    rel_shape_str(cx, m, ns), nin),
           false;
  switch (v) {
    case 0:
      if (!rs_push(cx, r, in[*src], *src)) return false;
      ++*src;
      return true;
    case -1:
      if (r->infer >= 0)
        return rel_fail(cx, "%s: newshape %s has more than one -1", cx->op_name,
                        rel_shape_str(cx, m, ns)),
               false;
      r->infer = r->n, ++*src;
      return rs_push(cx, r, dim_any(), -1);
    case -2:
      for (; *src < nin; ++*src)
        if (!rs_push(cx, r, in[*src], *src)) return false;
      return true;
    case -3:
      *src += 2;
      return rs_push(cx, r, dim_mul(in[*src - 2], in[*src - 1]), -1);
    case -4:
      if (*j + 2 >= m)
        return rel_fail(cx, "%s: -4 in newshape needs two values after it", cx->op_name), false;
      *j += 2;
      return rs_split(cx, r, in[(*src)++], ns[*j - 1], ns[*j]);
  }
  return rel_fail(cx, "%s: invalid value %lld in newshape", cx->op_name, (long long)v), false;
}

/* The -1 dim: input elements / other output elements, cancelling dims
 * copied from the input and equal size variables; one size variable left
 * over when the constants cancel is the answer. */
static Dim rs_infer(RelCtx *cx, Reshape *r, int m, const Dim *ns) {
  const Dim *in = r->x->u.tensor.dims;
  int nin = r->x->u.tensor.ndim, nleft = 0;
  bool copied[TENSOR_MAX_RANK] = {0};
  Dim left[TENSOR_MAX_RANK];
  int64_t num = 1, den = 1;
  for (int i = 0; i < r->n; i++)
    if (r->from[i] >= 0) copied[r->from[i]] = true;
  for (int i = 0; i < nin; i++) {
    if (copied[i]) continue;
    if (in[i].kind != DIM_CONST)
      left[nleft++] = in[i];
    else if (__builtin_mul_overflow(num, in[i].value, &num))
      return dim_any();
  }
  for (int i = 0; i < r->n; i++) {
    Dim d = r->out[i];
    if (i == r->infer || r->from[i] >= 0) continue;
    if (d.kind == DIM_CONST) {
      if (__builtin_mul_overflow(den, d.value, &den)) return dim_any();
      continue;
    }
    int k = 0;
    while (k < nleft && !(d.kind == DIM_VAR && same_dim_exact(left[k], d))) k++;
    if (k == nleft) return dim_any();
    left[k] = left[--nleft];
  }
  if (nleft == 1 && num == den) return left[0]; /* (n * c) / c: the size variable itself */
  if (nleft) return dim_any();
  if (den == 0 || num % den != 0)
    return rel_fail(cx,
                    "%s: cannot reshape %s (%lld elements) to %s: %lld is not a multiple of %lld",
                    cx->op_name, rel_tensor_shape_str(cx, r->x), (long long)num,
                    rel_shape_str(cx, m, ns), (long long)num, (long long)den),
           dim_any();
  return dim_const(num / den);
}

static Type *reshape_to(RelCtx *cx, const Type *x, int m, const Dim *ns, bool allowzero) {
  Reshape r = {.x = x, .infer = -1};
  int src = 0;
  for (int j = 0; j < m; j++) {
    Dim d = ns[j];
    bool plain = d.kind != DIM_CONST || d.value > 0 || (d.value == 0 && allowzero);
    if (plain) src++; /* a plain dim consumes an input dim, as in TVM */
    if (plain ? !rs_push(cx, &r, d, -1) : !rs_special(cx, &r, m, ns, &j, &src)) return NULL;
  }
  if (r.infer >= 0) r.out[r.infer] = rs_infer(cx, &r, m, ns);
  if (cx->err[0]) return NULL;
  int64_t a = numel(x->u.tensor.ndim, x->u.tensor.dims), b = numel(r.n, r.out);
  if (a >= 0 && b >= 0 && a != b)
    return rel_fail(cx, "%s: cannot reshape %s (%lld elements) to %s (%lld elements)", cx->op_name,
                    rel_tensor_shape_str(cx, x), (long long)a, rel_shape_str(cx, r.n, r.out),
                    (long long)b);
  return tensor_of(cx, x->u.tensor.dtype, r.n, r.out);
}

/* newshape items: ints (special values allowed) or size variables. */
static int newshape(RelCtx *cx, const Attrs *attrs, Dim *ns) {
  const AttrValue *v = attrs_get(attrs, "newshape");
  if (!v) return rel_fail(cx, "%s: missing attribute `newshape`", cx->op_name), -1;
  int n = v->kind == AV_LIST ? v->u.list.n : 1;
  if (n > TENSOR_MAX_RANK)
    return rel_fail(cx, "%s: newshape has more than %d entries", cx->op_name, TENSOR_MAX_RANK), -1;
  for (int i = 0; i < n; i++) {
    const AttrValue *it = v->kind == AV_LIST ? v->u.list.items[i] : v;
    if (it->kind == AV_INT)
      ns[i] = dim_const(it->u.i);
    else if (it->kind == AV_SYM)
      ns[i] = (Dim){DIM_VAR, 0, it->u.s};
    else
      return rel_fail(cx, "%s: attribute `newshape` must be a list of ints", cx->op_name), -1;
  }
  return n;
}

static Type *rel_reshape(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  Dim ns[TENSOR_MAX_RANK];
  int m = x ? newshape(cx, attrs, ns) : -1;
  bool allowzero = m >= 0 && rel_attr_bool(cx, attrs, "allowzero");
  return m < 0 || cx->err[0] ? NULL : reshape_to(cx, x, m, ns, allowzero);
}

/* ─────────────────────── transpose, expand_dims, squeeze ─────────────────────── */

static Type *rel_transpose(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim;
  int64_t ax[TENSOR_MAX_RANK];
  int k = rel_attr_is_none(cx, attrs, "axes")
              ? 0
              : rel_attr_ints(cx, attrs, "axes", ax, TENSOR_MAX_RANK);
  if (k < 0 || cx->err[0]) return NULL;
  if (k == 0)
    for (int i = 0; i < n; i++) ax[i] = n - 1 - i;
  else if (k != n)
    return rel_fail(cx, "transpose: axes has %d entries but the input has rank %d", k, n);
  Dim out[TENSOR_MAX_RANK];
  bool seen[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    int a = rel_axis(cx, ax[i], n);
    if (a < 0) return NULL;
    if (seen[a])
      return rel_fail(cx, "transpose: axes list axis %d twice; it must be a permutation", a);
    seen[a] = true, out[i] = x->u.tensor.dims[a];
  }
  return tensor_of(cx, x->u.tensor.dtype, n, out);
}

static Type *rel_expand_dims(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim;
  int64_t axis = rel_attr_int(cx, attrs, "axis"), k = rel_attr_int(cx, attrs, "num_newaxis");
  if (cx->err[0]) return NULL;
  if (axis < -(int64_t)n - 1 || axis > n)
    return rel_fail(cx, "expand_dims: axis %lld is out of range for rank %d (allowed: %d to %d)",
                    (long long)axis, n, -n - 1, n);
  if (k < 0 || k > TENSOR_MAX_RANK - n)
    return rel_fail(cx, "expand_dims: num_newaxis %lld is out of range", (long long)k);
  int at = (int)(axis < 0 ? axis + n + 1 : axis), m = 0;
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i <= n; i++) {
    if (i == at)
      for (int j = 0; j < k; j++) out[m++] = dim_const(1);
    if (i < n) out[m++] = x->u.tensor.dims[i];
  }
  return tensor_of(cx, x->u.tensor.dtype, m, out);
}

static Type *rel_squeeze(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int n = x->u.tensor.ndim, m = 0;
  const Dim *d = x->u.tensor.dims;
  bool drop[TENSOR_MAX_RANK] = {0};
  if (rel_attr_is_none(cx, attrs, "axis")) {
    for (int i = 0; i < n; i++) drop[i] = d[i].kind == DIM_CONST && d[i].value == 1;
  } else {
    int64_t ax[TENSOR_MAX_RANK];
    int k = rel_attr_ints(cx, attrs, "axis", ax, TENSOR_MAX_RANK);
    for (int i = 0; i < k; i++) {
      int a = rel_axis(cx, ax[i], n);
      if (a < 0) return NULL;
      if (d[a].kind == DIM_CONST && d[a].value != 1)
        return rel_fail(cx, "squeeze: axis %d of %s has size %lld, not 1", a,
                        rel_tensor_shape_str(cx, x), (long long)d[a].value);
      drop[a] = true;
    }
  }
  if (cx->err[0]) return NULL;
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++)
    if (!drop[i]) out[m++] = d[i];
  return tensor_of(cx, x->u.tensor.dtype, m, out);
}

/* ─────────────────────── concatenate, stack, split ─────────────────────── */

/* The tensor fields of a tuple argument, checked for one rank and dtype. */
static const Type *const *tuple_fields(RelCtx *cx, Type **args, int *n) {
  const Type *t = args[0];
  if (t->kind != TY_TUPLE)
    return rel_fail(cx, "%s: expects a tuple of tensors, got %s", cx->op_name, rel_type_str(cx, t)),
           NULL;
  *n = t->u.tuple.n;
  if (*n == 0) return rel_fail(cx, "%s: needs at least one tensor", cx->op_name), NULL;
  Type *const *f = t->u.tuple.fields;
  for (int i = 0; i < *n; i++) {
    if (f[i]->kind != TY_TENSOR)
      return rel_fail(cx, "%s: field %d must be a tensor, got %s", cx->op_name, i,
                      rel_type_str(cx, f[i])),
             NULL;
    if (f[i]->u.tensor.dtype != f[0]->u.tensor.dtype)
      return rel_fail(cx, "%s: field %d has dtype %s but field 0 has %s", cx->op_name, i,
                      dtype_name(f[i]->u.tensor.dtype), dtype_name(f[0]->u.tensor.dtype)),
             NULL;
    if (f[i]->u.tensor.ndim != f[0]->u.tensor.ndim)
      return rel_fail(cx, "%s: field %d has rank %d but field 0 has rank %d", cx->op_name, i,
                      f[i]->u.tensor.ndim, f[0]->u.tensor.ndim),
             NULL;
  }
  return (const Type *const *)f;
}

static Dim dim_add(Dim a, Dim b) {
  int64_t p;
  if (a.kind == DIM_CONST && b.kind == DIM_CONST && !__builtin_add_overflow(a.value, b.value, &p))
    return dim_const(p);
  return dim_any();
}

static Type *rel_concatenate(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  int n;
  const Type *const *f = tuple_fields(cx, args, &n);
  if (!f) return NULL;
  int rank = f[0]->u.tensor.ndim;
  if (rank == 0) return rel_fail(cx, "concatenate: cannot concatenate scalars");
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), rank);
  if (axis < 0) return NULL;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, f[0]->u.tensor.dims, sizeof(Dim) * (size_t)rank);
  for (int i = 1; i < n; i++) {
    const Dim *d = f[i]->u.tensor.dims;
    for (int a = 0; a < rank; a++) {
      if (a == axis) {
        out[a] = dim_add(out[a], d[a]);
      } else if (!rel_unify_dim(cx, out[a], d[a])) {
        return rel_fail(
            cx, "concatenate: shapes %s and %s differ at axis %d (concatenating along axis %d)",
            rel_tensor_shape_str(cx, f[0]), rel_tensor_shape_str(cx, f[i]), a, axis);
      }
    }
  }
  return tensor_of(cx, f[0]->u.tensor.dtype, rank, out);
}

static Type *rel_stack(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  int n;
  const Type *const *f = tuple_fields(cx, args, &n);
  if (!f) return NULL;
  int rank = f[0]->u.tensor.ndim;
  int64_t axis = rel_attr_int(cx, attrs, "axis");
  if (cx->err[0]) return NULL;
  if (axis < -(int64_t)rank - 1 || axis > rank)
    return rel_fail(cx, "stack: axis %lld is out of range for rank %d", (long long)axis, rank + 1);
  if (rank >= TENSOR_MAX_RANK) return rel_fail(cx, "stack: the result would have too many dims");
  for (int i = 1; i < n; i++)
    for (int a = 0; a < rank; a++)
      if (!rel_unify_dim(cx, f[0]->u.tensor.dims[a], f[i]->u.tensor.dims[a]))
        return rel_fail(cx, "stack: shapes %s and %s differ", rel_tensor_shape_str(cx, f[0]),
                        rel_tensor_shape_str(cx, f[i]));
  int at = (int)(axis < 0 ? axis + rank + 1 : axis), m = 0;
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i <= rank; i++) {
    if (i == at) out[m++] = dim_const(n);
    if (i < rank) out[m++] = f[0]->u.tensor.dims[i];
  }
  return tensor_of(cx, f[0]->u.tensor.dtype, m, out);
}

/* Piece sizes of split along a dim; n pieces. */
static int split_sizes(RelCtx *cx, const Attrs *attrs, Dim d, Dim *sizes, int max) {
  const AttrValue *v = attrs_get(attrs, "indices_or_sections");
  if (!v) return rel_fail(cx, "split: missing attribute `indices_or_sections`"), -1;
  if (v->kind == AV_INT) {
    int64_t k = v->u.i;
    if (k < 1 || k > max) return rel_fail(cx, "split: cannot make %lld sections", (long long)k), -1;
    if (d.kind == DIM_CONST && d.value % k != 0)
      return rel_fail(cx, "split: axis of size %lld cannot be split into %lld equal sections",
                      (long long)d.value, (long long)k),
             -1;
    for (int i = 0; i < k; i++) sizes[i] = d.kind == DIM_CONST ? dim_const(d.value / k) : dim_any();
    return (int)k;
  }
  int64_t idx[TENSOR_MAX_RANK * 8];
  int n = rel_attr_ints(cx, attrs, "indices_or_sections", idx, max - 1);
  if (n < 0) return -1;
  int64_t prev = 0;
  for (int i = 0; i <= n; i++) {
    int64_t end = i < n ? idx[i] : d.kind == DIM_CONST ? d.value : -1;
    if (i == n && d.kind != DIM_CONST) return sizes[i] = dim_any(), n + 1;
    if (end < prev)
      return rel_fail(cx, "split: indices must be increasing and within the axis (size %s)",
                      rel_shape_str(cx, 1, &d)),
             -1;
    if (d.kind == DIM_CONST && end > d.value)
      return rel_fail(cx, "split: index %lld is past the end of an axis of size %lld",
                      (long long)end, (long long)d.value),
             -1;
    sizes[i] = dim_const(end - prev), prev = end;
  }
  return n + 1;
}

static Type *rel_split(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int rank = x->u.tensor.ndim;
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), rank);
  if (axis < 0) return NULL;
  enum { MAXP = TENSOR_MAX_RANK * 8 };
  Dim sizes[MAXP];
  int n = split_sizes(cx, attrs, x->u.tensor.dims[axis], sizes, MAXP);
  if (n < 0) return NULL;
  Type **fields = ARENA_ARRAY(cx->arena, Type *, n);
  Dim d[TENSOR_MAX_RANK];
  memcpy(d, x->u.tensor.dims, sizeof(Dim) * (size_t)rank);
  for (int i = 0; i < n; i++) {
    d[axis] = sizes[i];
    fields[i] = tensor_of(cx, x->u.tensor.dtype, rank, d);
  }
  return type_tuple(cx->arena, n, fields, no_span);
}

/* ───────────────────────────── strided_slice ───────────────────────────── */

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* numpy's slice length on a dim of constant size; hb/he: begin/end given. */
static int64_t slice_len(int64_t dim, bool hb, int64_t b, bool he, int64_t e, int64_t s) {
  if (s > 0) {
    b = hb ? clampi(b < 0 ? b + dim : b, 0, dim) : 0;
    e = he ? clampi(e < 0 ? e + dim : e, 0, dim) : dim;
    return e > b ? (e - b - 1) / s + 1 : 0;
  }
  if (s < -INT64_MAX) s = -INT64_MAX;
  b = hb ? clampi(b < 0 ? b + dim : b, -1, dim - 1) : dim - 1;
  e = he ? clampi(e < 0 ? e + dim : e, -1, dim - 1) : -1;
  return b > e ? (b - e - 1) / -s + 1 : 0;
}

/* slice_mode="size": end is a size (-1: to the end), strides are ignored. */
static int64_t size_len(int64_t dim, bool hb, int64_t b, bool he, int64_t sz) {
  b = hb ? clampi(b < 0 ? b + dim : b, 0, dim) : 0;
  return !he || sz < 0 ? dim - b : sz < dim - b ? sz : dim - b;
}

typedef struct SliceSpec {
  int nb, ne, ns, na;
  int64_t b[TENSOR_MAX_RANK], e[TENSOR_MAX_RANK], s[TENSOR_MAX_RANK], axes[TENSOR_MAX_RANK];
  bool size_mode;
} SliceSpec;

/* Reads strided_slice's attributes once for the relation: None strides
 * mean all 1 and None axes mean the leading axes; slice_mode is checked. */
static bool slice_spec(RelCtx *cx, const Attrs *attrs, SliceSpec *sp) {
  sp->nb = rel_attr_ints(cx, attrs, "begin", sp->b, TENSOR_MAX_RANK);
  sp->ne = rel_attr_ints(cx, attrs, "end", sp->e, TENSOR_MAX_RANK);
  sp->ns = rel_attr_is_none(cx, attrs, "strides")
               ? 0
               : rel_attr_ints(cx, attrs, "strides", sp->s, TENSOR_MAX_RANK);
  sp->na = rel_attr_is_none(cx, attrs, "axes")
               ? -1
               : rel_attr_ints(cx, attrs, "axes", sp->axes, TENSOR_MAX_RANK);
  const char *mode = rel_attr_str(cx, attrs, "slice_mode");
  if (cx->err[0]) return false;
  sp->size_mode = strcmp(mode, "size") == 0;
  if (!sp->size_mode && strcmp(mode, "end") != 0)
    return rel_fail(cx, "%s: slice_mode must be \"end\" or \"size\", got \"%s\"", cx->op_name,
                    mode),
           false;
  return true;
}

/* The sliced length of one axis given entry i of the spec. */
static bool slice_axis(RelCtx *cx, const SliceSpec *sp, int i, Dim d, Dim *out) {
  bool hb = i < sp->nb, he = i < sp->ne;
  int64_t b = hb ? sp->b[i] : 0, e = he ? sp->e[i] : 0;
  int64_t s = sp->size_mode ? 1 : sp->ns == 1 ? sp->s[0] : i < sp->ns ? sp->s[i] : 1;
  if (s == 0) return rel_fail(cx, "%s: stride 0 on entry %d", cx->op_name, i), false;
  if (d.kind != DIM_CONST) {
    bool full = (!hb || b == 0) && s == 1 && (!he || (sp->size_mode && e == -1));
    *out = full ? d : dim_any();
    return true;
  }
  *out = dim_const(sp->size_mode ? size_len(d.value, hb, b, he, e)
                                 : slice_len(d.value, hb, b, he, e, s));
  return true;
}

static Type *slice_type(RelCtx *cx, const Type *x, const SliceSpec *sp) {
  int rank = x->u.tensor.ndim, k = sp->nb > sp->ne ? sp->nb : sp->ne;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)rank);
  if (sp->na >= 0) k = sp->na;
  if (k > rank)
    return rel_fail(cx, "%s: begin/end have %d entries but the data has rank %d", cx->op_name, k,
                    rank);
  for (int i = 0; i < k; i++) {
    int a = sp->na >= 0 ? rel_axis(cx, sp->axes[i], rank) : i;
    if (a < 0 || !slice_axis(cx, sp, i, x->u.tensor.dims[a], &out[a])) return NULL;
  }
  return tensor_of(cx, x->u.tensor.dtype, rank, out);
}

static Type *rel_strided_slice(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  SliceSpec sp;
  return x && slice_spec(cx, attrs, &sp) ? slice_type(cx, x, &sp) : NULL;
}

/* ───────────────────────────── take ───────────────────────────── */

static bool take_mode(RelCtx *cx, const Attrs *attrs) {
  const char *mode = rel_attr_str(cx, attrs, "mode");
  if (cx->err[0]) return false;
  if (!strcmp(mode, "clip") || !strcmp(mode, "wrap") || !strcmp(mode, "fast")) return true;
  rel_fail(cx, "take: mode must be \"clip\", \"wrap\" or \"fast\", got \"%s\"", mode);
  return false;
}

static Type *rel_take(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *ix = x ? rel_tensor(cx, args, 1) : NULL;
  if (!ix || !int_dtype(cx, ix, "indices") || !take_mode(cx, attrs)) return NULL;
  int nx = x->u.tensor.ndim, ni = ix->u.tensor.ndim, m = 0;
  if (rel_attr_is_none(cx, attrs, "axis"))
    return tensor_of(cx, x->u.tensor.dtype, ni, ix->u.tensor.dims);
  int axis = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), nx);
  int64_t bd = rel_attr_int(cx, attrs, "batch_dims");
  if (axis < 0 || cx->err[0]) return NULL;
  if (bd < 0) bd += ni;
  if (bd < 0 || bd > ni || bd > axis)
    return rel_fail(cx, "take: batch_dims %lld must be within [0, %d] and at most axis %d",
                    (long long)rel_attr_int(cx, attrs, "batch_dims"), ni, axis);
  for (int i = 0; i < bd; i++)
    if (!rel_unify_dim(cx, x->u.tensor.dims[i], ix->u.tensor.dims[i]))
      return rel_fail(cx, "take: data %s and indices %s differ in batch dim %d",
                      rel_tensor_shape_str(cx, x), rel_tensor_shape_str(cx, ix), i);
  Dim out[TENSOR_MAX_RANK * 2];
  if (nx - 1 + ni - bd > TENSOR_MAX_RANK)
    return rel_fail(cx, "take: the result would have too many dims");
  for (int i = 0; i < axis; i++) out[m++] = x->u.tensor.dims[i];
  for (int i = (int)bd; i < ni; i++) out[m++] = ix->u.tensor.dims[i];
  for (int i = axis + 1; i < nx; i++) out[m++] = x->u.tensor.dims[i];
  return tensor_of(cx, x->u.tensor.dtype, m, out);
}

/* ─────────────────────── broadcast_to and creation ─────────────────────── */

/* x broadcast to a target shape: each of x's dims must be 1 or match. */
static Type *broadcast_to(RelCtx *cx, const Type *x, int n, const Dim *to, DType dt) {
  int nx = x->u.tensor.ndim;
  bool ok = nx <= n;
  for (int i = 0; ok && i < nx; i++) {
    Dim a = x->u.tensor.dims[i], b = to[n - nx + i];
    ok = (a.kind == DIM_CONST && a.value == 1) || rel_unify_dim(cx, a, b);
  }
  if (!ok)
    return rel_fail(cx, "%s: cannot broadcast %s to %s", cx->op_name, rel_tensor_shape_str(cx, x),
                    rel_shape_str(cx, n, to));
  return tensor_of(cx, dt == DT_INVALID ? x->u.tensor.dtype : dt, n, to);
}

static int shape_attr(RelCtx *cx, const Attrs *attrs, Dim *dims) {
  int n = rel_attr_dims(cx, attrs, "shape", dims, TENSOR_MAX_RANK);
  if (n < 0 && !cx->err[0]) rel_fail(cx, "%s: missing attribute `shape`", cx->op_name);
  return cx->err[0] ? -1 : n;
}

static Type *rel_broadcast_to(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  Dim to[TENSOR_MAX_RANK];
  int n = x ? shape_attr(cx, attrs, to) : -1;
  DType dt = n >= 0 ? rel_attr_dtype(cx, attrs, "dtype", DT_INVALID) : DT_INVALID;
  return n < 0 || cx->err[0] ? NULL : broadcast_to(cx, x, n, to, dt);
}

static Type *rel_zeros(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  Dim dims[TENSOR_MAX_RANK];
  int n = shape_attr(cx, attrs, dims);
  DType dt = n >= 0 ? rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32) : DT_INVALID;
  return cx->err[0] ? NULL : tensor_of(cx, dt, n, dims);
}

static bool scalar_arg(RelCtx *cx, Type **args, int i, const char *what) {
  const Type *t = rel_tensor(cx, args, i);
  if (!t) return false;
  if (t->u.tensor.ndim == 0) return true;
  rel_fail(cx, "%s: %s must be a scalar, got %s", cx->op_name, what, rel_type_str(cx, t));
  return false;
}

static Type *rel_full(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  Dim dims[TENSOR_MAX_RANK];
  if (!scalar_arg(cx, args, 0, "fill_value")) return NULL;
  int n = shape_attr(cx, attrs, dims);
  DType dt = n >= 0 ? rel_attr_dtype(cx, attrs, "dtype", args[0]->u.tensor.dtype) : DT_INVALID;
  return cx->err[0] ? NULL : tensor_of(cx, dt, n, dims);
}

static Type *rel_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  return rel_tensor(cx, args, 0) ? args[0] : NULL;
}

/* ───────────────────────────── arange ───────────────────────────── */

/* Number of elements of [start, stop) by step, from the values. */
static Dim arange_len(RelCtx *cx, const Tensor *const *v) {
  bool ints = true;
  for (int i = 0; i < 3; i++) ints = ints && dtype_class(v[i]->dtype) != 'f';
  if (ints) {
    int64_t a = tensor_get_i64(v[0], 0), b = tensor_get_i64(v[1], 0), s = tensor_get_i64(v[2], 0),
            d;
    if (s == 0) return rel_fail(cx, "arange: step must not be zero"), dim_any();
    if (__builtin_sub_overflow(b, a, &d))
      return rel_fail(cx, "arange: the range is too large"), dim_any();
    if ((d > 0) != (s > 0) || d == 0) return dim_const(0);
    if (s < -INT64_MAX) s = -INT64_MAX;
    return dim_const(s > 0 ? (d - 1) / s + 1 : (-d - 1) / -s + 1);
  }
  double a = tensor_get_f64(v[0], 0), b = tensor_get_f64(v[1], 0), s = tensor_get_f64(v[2], 0);
  if (s == 0) return rel_fail(cx, "arange: step must not be zero"), dim_any();
  double n = ceil((b - a) / s);
  if (!(n < 9.2e18)) return rel_fail(cx, "arange: the range is too large or not finite"), dim_any();
  return dim_const(n > 0 ? (int64_t)n : 0);
}

static Type *rel_arange(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  static const char *const names[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; i++)
    if (!scalar_arg(cx, args, i, names[i])) return NULL;
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32);
  if (cx->err[0]) return NULL;
  Dim len = dim_any();
  if (values && values[0] && values[1] && values[2]) len = arange_len(cx, values);
  return cx->err[0] ? NULL : tensor_of(cx, dt, 1, &len);
}

/* ─────────────────────── shape_of, ndarray_size, one_hot ─────────────────────── */

static DType int_dtype_attr(RelCtx *cx, const Attrs *attrs) {
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_INT32);
  if (dt != DT_INVALID && !dtype_is_int(dt))
    return rel_fail(cx, "%s: dtype must be an integer type, got %s", cx->op_name, dtype_name(dt)),
           DT_INVALID;
  return dt;
}

static Type *rel_shape_of(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  DType dt = x ? int_dtype_attr(cx, attrs) : DT_INVALID;
  if (dt == DT_INVALID) return NULL;
  Dim n = dim_const(x->u.tensor.ndim);
  return tensor_of(cx, dt, 1, &n);
}

static Type *rel_ndarray_size(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  DType dt = rel_tensor(cx, args, 0) ? int_dtype_attr(cx, attrs) : DT_INVALID;
  return dt == DT_INVALID ? NULL : tensor_of(cx, dt, 0, NULL);
}

/* check(data, cond): data's type; cond a bool tensor of any shape. */
static Type *rel_check(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *c = x ? rel_tensor(cx, args, 1) : NULL;
  if (c && c->u.tensor.dtype != DT_BOOL)
    return rel_fail(cx, "check: cond must be bool, got %s", rel_type_str(cx, c));
  rel_attr_str(cx, attrs, "message");
  return c && !cx->err[0] ? args[0] : NULL;
}

static Type *rel_one_hot(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *ix = rel_tensor(cx, args, 0);
  if (!ix || !int_dtype(cx, ix, "indices") || !scalar_arg(cx, args, 1, "on_value") ||
      !scalar_arg(cx, args, 2, "off_value"))
    return NULL;
  DType von = args[1]->u.tensor.dtype, voff = args[2]->u.tensor.dtype;
  DType dt = rel_attr_dtype(cx, attrs, "dtype", von);
  int64_t depth = rel_attr_int(cx, attrs, "depth"), axis = rel_attr_int(cx, attrs, "axis");
  int n = ix->u.tensor.ndim, m = 0;
  if (cx->err[0]) return NULL;
  if (von != dt || voff != dt)
    return rel_fail(cx, "one_hot: on_value and off_value must have dtype %s, got %s and %s",
                    dtype_name(dt), dtype_name(von), dtype_name(voff));
  if (depth < 0)
    return rel_fail(cx, "one_hot: depth must not be negative, got %lld", (long long)depth);
  if (axis < -1 || axis > n || n >= TENSOR_MAX_RANK)
    return rel_fail(cx, "one_hot: axis %lld is out of range for rank %d (allowed: -1 to %d)",
                    (long long)axis, n, n);
  int at = axis < 0 ? n : (int)axis;
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i <= n; i++) {
    if (i == at) out[m++] = dim_const(depth);
    if (i < n) out[m++] = ix->u.tensor.dims[i];
  }
  return tensor_of(cx, dt, m, out);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec reshape_attrs[] = {
    {"newshape", AV_LIST, NULL}, {"allowzero", AV_BOOL, "False"}, {0}};
static const OpAttrSpec transpose_attrs[] = {{"axes", AV_LIST, "None"}, {0}};
static const OpAttrSpec expand_dims_attrs[] = {
    {"axis", AV_INT, NULL}, {"num_newaxis", AV_INT, "1"}, {0}};
static const OpAttrSpec squeeze_attrs[] = {{"axis", AV_LIST, "None"}, {0}};
static const OpAttrSpec axis0_attrs[] = {{"axis", AV_INT, "0"}, {0}};
static const OpAttrSpec split_attrs[] = {
    {"indices_or_sections", AV_LIST, NULL}, {"axis", AV_INT, "0"}, {0}};
static const OpAttrSpec strided_slice_attrs[] = {
    {"begin", AV_LIST, NULL},          {"end", AV_LIST, NULL},    {"strides", AV_LIST, "None"},
    {"slice_mode", AV_STR, "\"end\""}, {"axes", AV_LIST, "None"}, {0}};
static const OpAttrSpec take_attrs[] = {
    {"batch_dims", AV_INT, "0"}, {"axis", AV_NONE, "None"}, {"mode", AV_STR, "\"clip\""}, {0}};
static const OpAttrSpec init_attrs[] = {
    {"shape", AV_LIST, NULL}, {"dtype", AV_STR, "\"float32\""}, {0}};
static const OpAttrSpec full_attrs[] = {{"shape", AV_LIST, NULL}, {"dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec broadcast_to_attrs[] = {
    {"shape", AV_LIST, NULL}, {"dtype", AV_STR, "\"\""}, {0}};
static const OpAttrSpec arange_attrs[] = {{"start", AV_EXPR, "None"},
                                          {"stop", AV_EXPR, "None"},
                                          {"step", AV_EXPR, "None"},
                                          {"dtype", AV_STR, "\"float32\""},
                                          {0}};
static const OpAttrSpec int_dtype_attrs[] = {{"dtype", AV_STR, "\"int32\""}, {0}};
static const OpAttrSpec check_attrs[] = {{"message", AV_STR, "\"check failed\""}, {0}};
static const OpAttrSpec one_hot_attrs[] = {
    {"depth", AV_INT, "1"}, {"axis", AV_INT, "-1"}, {"dtype", AV_STR, "\"\""}, {0}};

const OpDef ops_family_transform[] = {
    {"reshape", 1, 1, OPAT_INJECTIVE, reshape_attrs, rel_reshape, "0 copies a dim, -1 infers one",
     false, .flags = OP_VIEW, .args = "x",
     .rule = "x's dtype, shape `newshape` (TVM's special values 0, -1, -2, -3, -4 resolved); the "
             "element count is kept",
     .example = "reshape(arange(0f, 6f, 1f), newshape=[2, -1])"},
    {"transpose", 1, 1, OPAT_INJECTIVE, transpose_attrs, rel_transpose,
     "permute axes (axes=None reverses them)", false, .args = "x",
     .rule = "x's dtype, its axes permuted by `axes` (default: reversed)",
     .example = "transpose([[1f, 2f, 3f]], axes=[1, 0])"},
    {"expand_dims", 1, 1, OPAT_BROADCAST, expand_dims_attrs, rel_expand_dims,
     "insert num_newaxis size-1 axes at axis", false, .flags = OP_VIEW, .args = "x",
     .rule = "x's dtype, with num_newaxis axes of size 1 inserted at `axis`",
     .example = "expand_dims([1f, 2f], axis=0)"},
    {"squeeze", 1, 1, OPAT_INJECTIVE, squeeze_attrs, rel_squeeze,
     "remove size-1 axes (all, or those listed in axis)", false, .flags = OP_VIEW, .args = "x",
     .rule = "x's dtype, without the size-1 axes listed in `axis` (all size-1 axes when None)",
     .example = "squeeze([[1f], [2f]], axis=[1])"},
    {"concatenate", 1, 1, OPAT_INJECTIVE, axis0_attrs, rel_concatenate,
     "join tensors along an axis", false, .flags = OP_TUPLE_ARG, .args = "(a, b, ...)",
     .rule = "the inputs' dtype; sizes add along `axis`, other axes equal",
     .example = "concatenate(([1f, 2f], [3f]), axis=0)"},
    {"stack", 1, 1, OPAT_INJECTIVE, axis0_attrs, rel_stack, "join along a new axis", false,
     .flags = OP_TUPLE_ARG, .args = "(a, b, ...)",
     .rule = "the inputs' dtype; their common shape with a new axis of size n at `axis`",
     .example = "stack(([1f, 2f], [3f, 4f]), axis=1)"},
    {"split", 1, 1, OPAT_INJECTIVE, split_attrs, rel_split,
     "split into a tuple: n equal sections or at the given indices", false, .args = "x",
     .rule =
         "a tuple of x's dtype: equal parts along `axis` (sections) or cut at the given indices",
     .example = "split([1f, 2f, 3f, 4f], indices_or_sections=2)"},
    {"strided_slice", 1, 1, OPAT_INJECTIVE, strided_slice_attrs, rel_strided_slice,
     "numpy-style slice with begin/end/strides (negative allowed)", false, .args = "x",
     .rule = "x's dtype; each sliced axis ceil((end - begin) / stride) after clamping (slice_mode "
             "\"size\": end is a length)",
     .example = "strided_slice([1f, 2f, 3f, 4f, 5f], begin=[1], end=[5], strides=[2])"},
    {"take", 2, 2, OPAT_INJECTIVE, take_attrs, rel_take, "gather along an axis", false,
     .args = "data, indices",
     .rule = "data's dtype: data's axes before `axis`, indices' axes from batch_dims, data's axes "
             "after `axis` (axis None: indices' shape)",
     .example = "take([10f, 20f, 30f], [2, 0], axis=0)"},
    {"broadcast_to", 1, 1, OPAT_BROADCAST, broadcast_to_attrs, rel_broadcast_to,
     "numpy broadcasting to a shape", false, .args = "x",
     .rule = "x's dtype (or `dtype`), shape `shape`; x broadcasts to it",
     .example = "broadcast_to([1f, 2f], shape=[2, 2])"},
    {"zeros", 0, 0, OPAT_ELEMWISE, init_attrs, rel_zeros, "all 0", false, .args = "",
     .rule = "shape `shape` in `dtype`", .example = "zeros(shape=[2, 2], dtype=\"int32\")"},
    {"ones", 0, 0, OPAT_ELEMWISE, init_attrs, rel_zeros, "all 1", false, .args = "",
     .rule = "shape `shape` in `dtype`", .example = "ones(shape=[2], dtype=\"float32\")"},
    {"full", 1, 1, OPAT_ELEMWISE, full_attrs, rel_full, "all fill_value", false,
     .args = "fill_value",
     .rule = "shape `shape` in `dtype` (default fill_value's dtype); fill_value is a scalar",
     .example = "full(7, shape=[2, 2])"},
    {"zeros_like", 1, 1, OPAT_ELEMWISE, no_attrs, rel_like, "zeros of x's type", false, .args = "x",
     .rule = "the result has x's type", .example = "zeros_like([1f, 2f])"},
    {"ones_like", 1, 1, OPAT_ELEMWISE, no_attrs, rel_like, "ones of x's type", false, .args = "x",
     .rule = "the result has x's type", .example = "ones_like([1, 2])"},
    {"arange", 3, 3, OPAT_OPAQUE, arange_attrs, rel_arange, "[start, stop) by step", false,
     .args = "start, stop, step",
     .rule = "1-D in `dtype`, ceil((stop - start) / step) long when the arguments are constant, "
             "else of unknown length",
     .example = "arange(0, 10, 3, dtype=\"int32\")"},
    {"shape_of", 1, 1, OPAT_OPAQUE, int_dtype_attrs, rel_shape_of,
     "the shape of x as a 1-D tensor (dtype=int32)", false, .args = "x",
     .rule = "1-D of x's rank in `dtype` (int32 default)",
     .example = "shape_of(ones(shape=[2, 3]))"},
    {"ndarray_size", 1, 1, OPAT_INJECTIVE, int_dtype_attrs, rel_ndarray_size,
     "the number of elements of x as a scalar (dtype=int32)", false, .args = "x",
     .rule = "a scalar in `dtype` (int32 default)", .example = "ndarray_size(ones(shape=[2, 3]))"},
    {"one_hot", 3, 3, OPAT_OUT_EWISE_FUSABLE, one_hot_attrs, rel_one_hot, "one-hot encoding", false,
     .args = "indices, on_value, off_value",
     .rule = "on_value's dtype (or `dtype`): indices' shape with an axis of size depth inserted at "
             "`axis` (-1: last)",
     .example = "one_hot([0, 2], 1f, 0f, depth=3)"},
    {"check", 2, 2, OPAT_OPAQUE, check_attrs, rel_check,
     "data, or a run-time error with `message` where any element of cond is true", false,
     .args = "data, cond", .rule = "the result has data's type; cond is a bool tensor of any shape",
     .example = "check([1f, 2f], less([1f, 2f], 0f), message=\"negative\")"},
    {0},
};
