/* transform_shape.c — op family "transform_shape": ops that move, repeat,
 * mask or retype a tensor's elements, with TVM v0.10's names, attributes
 * and fusion patterns (relay/attrs/transform.h): reshape_like,
 * broadcast_to_like, collapse_sum_like, full_like, slice_like,
 * layout_transform, tile, repeat, reverse, reverse_sequence, sequence_mask,
 * meshgrid, trilu, cast_like, reinterpret.
 *
 * Conventions (as transform.c): a dim that needs arithmetic and is not a
 * constant gives `?`, a dim that is only copied keeps its size variable.
 * Where TVM leaves a case to a crash or to undefined behaviour (repeat or
 * reverse without an axis, reinterpret between widths) the relation fails
 * with a message naming the attribute or the shapes. */
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/transform_int.h"

static const Span no_span;
static const OpAttrSpec no_attrs[] = {{0}};

/* ───────────────────────── reshape_like ───────────────────────── */

/* [begin, end) of a *_begin / *_end attribute pair over a rank-n shape
 * (negative values count from the end, an absent end is n). */
static bool like_range(RelCtx *cx, const Attrs *attrs, const char *side, int n, int *b, int *e) {
  char bk[16], ek[16];
  snprintf(bk, sizeof bk, "%s_begin", side);
  snprintf(ek, sizeof ek, "%s_end", side);
  int64_t bv = rel_attr_int(cx, attrs, bk);
  int64_t ev = rel_attr_is_none(cx, attrs, ek) ? n : rel_attr_int(cx, attrs, ek);
  if (cx->err[0]) return false;
  int64_t bn = bv < 0 ? bv + n : bv, en = ev < 0 ? ev + n : ev;
  if (bn < 0 || bn > n)
    return rel_fail(cx, "%s: %s %lld is out of range for rank %d", cx->op_name, bk, (long long)bv,
                    n),
           false;
  if (en < bn || en > n)
    return rel_fail(cx, "%s: %s %lld is out of range for rank %d (%s is %lld)", cx->op_name, ek,
                    (long long)ev, n, bk, (long long)bv),
           false;
  *b = (int)bn, *e = (int)en;
  return true;
}

/* Whether two shapes have the same element count: 1 yes, 0 no, -1 unknown.
 * Equal size variables cancel; constants multiply. */
static int same_numel(int na, const Dim *a, int nb, const Dim *b) {
  const char *vars[TENSOR_MAX_RANK];
  int nv = 0;
  int64_t pa = 1, pb = 1;
  for (int i = 0; i < na; i++) {
    if (a[i].kind == DIM_VAR) vars[nv++] = a[i].name;
    if (a[i].kind == DIM_ANY || a[i].kind == DIM_META) return -1;
    if (a[i].kind == DIM_CONST && __builtin_mul_overflow(pa, a[i].value, &pa)) return -1;
  }
  for (int i = 0; i < nb; i++) {
    if (b[i].kind == DIM_ANY || b[i].kind == DIM_META) return -1;
    if (b[i].kind == DIM_CONST && __builtin_mul_overflow(pb, b[i].value, &pb)) return -1;
    if (b[i].kind != DIM_VAR) continue;
    int k = 0;
    while (k < nv && strcmp(vars[k], b[i].name) != 0) k++;
    if (k == nv) return -1;
    vars[k] = vars[--nv];
  }
  if (nv) return -1;
  return pa == pb;
}

/* x's dims [lhs_begin, lhs_end) replaced by like's [rhs_begin, rhs_end);
 * the element count must stay the same where it is known. */
static Type *rel_reshape_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *like = x ? rel_tensor(cx, args, 1) : NULL;
  if (!like) return NULL;
  int nx = x->u.tensor.ndim, nl = like->u.tensor.ndim, lb, le, rb, re, m = 0;
  if (!like_range(cx, attrs, "lhs", nx, &lb, &le) || !like_range(cx, attrs, "rhs", nl, &rb, &re))
    return NULL;
  if (lb + (re - rb) + (nx - le) > TENSOR_MAX_RANK)
    return rel_fail(cx, "reshape_like: the result would have more than %d dims", TENSOR_MAX_RANK);
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < lb; i++) out[m++] = x->u.tensor.dims[i];
  for (int i = rb; i < re; i++) out[m++] = like->u.tensor.dims[i];
  for (int i = le; i < nx; i++) out[m++] = x->u.tensor.dims[i];
  if (same_numel(nx, x->u.tensor.dims, m, out) == 0)
    return rel_fail(cx, "reshape_like: cannot reshape %s to %s: the element counts differ",
                    xf_shape(cx, x), rel_shape_str(cx, m, out));
  return xf_tensor(cx, x->u.tensor.dtype, m, out);
}

/* ─────────────── broadcast_to_like, collapse_sum_like ─────────────── */

/* Whether `small` broadcasts (numpy rules, right-aligned) to `big`'s shape
 * with every dim of `big` kept: each dim of small is 1 or matches. */
static bool broadcasts_to(RelCtx *cx, const Type *small, const Type *big) {
  int ns = small->u.tensor.ndim, nb = big->u.tensor.ndim;
  if (ns > nb) return false;
  for (int i = 0; i < ns; i++) {
    Dim a = small->u.tensor.dims[i], b = big->u.tensor.dims[nb - ns + i];
    if (!xf_is_const(a, 1) && !rel_unify_dim(cx, a, b)) return false;
  }
  return true;
}

static Type *rel_broadcast_to_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *like = x ? rel_tensor(cx, args, 1) : NULL;
  if (!like || !xf_same_dtype(cx, x, "data", like, "broadcast_type")) return NULL;
  if (!broadcasts_to(cx, x, like))
    return rel_fail(cx, "broadcast_to_like: cannot broadcast %s to %s", xf_shape(cx, x),
                    xf_shape(cx, like));
  return xf_tensor(cx, like->u.tensor.dtype, like->u.tensor.ndim, like->u.tensor.dims);
}

static Type *rel_collapse_sum_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                   const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *like = x ? rel_tensor(cx, args, 1) : NULL;
  if (!like || !xf_same_dtype(cx, x, "data", like, "collapse_type")) return NULL;
  if (x->u.tensor.dtype == DT_BOOL)
    return rel_fail(cx, "collapse_sum_like: cannot sum bool tensors");
  if (!broadcasts_to(cx, like, x))
    return rel_fail(cx, "collapse_sum_like: cannot collapse %s to %s: %s does not broadcast to %s",
                    xf_shape(cx, x), xf_shape(cx, like), xf_shape(cx, like), xf_shape(cx, x));
  return xf_tensor(cx, like->u.tensor.dtype, like->u.tensor.ndim, like->u.tensor.dims);
}

/* ─────────────────── full_like, cast_like, reinterpret ─────────────────── */

static Type *rel_full_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x || !xf_scalar(cx, args, 1, "fill_value")) return NULL;
  return xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims);
}

static Type *rel_cast_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *like = x ? rel_tensor(cx, args, 1) : NULL;
  if (!like) return NULL;
  return xf_tensor(cx, like->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims);
}

/* The elements' bits read as another dtype of the same width; bool has no
 * defined bit patterns besides 0 and 1, so it is refused both ways. */
static Type *rel_reinterpret(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                             const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  DType to = x ? rel_attr_dtype(cx, attrs, "dtype", DT_INVALID) : DT_INVALID;
  if (cx->err[0]) return NULL;
  DType from = x->u.tensor.dtype;
  if (to == DT_INVALID) return rel_fail(cx, "reinterpret: missing attribute `dtype`");
  if (from == DT_BOOL || to == DT_BOOL)
    return rel_fail(cx, "reinterpret: cannot reinterpret %s as %s: bool has no bit pattern",
                    dtype_name(from), dtype_name(to));
  if (dtype_bytes(from) != dtype_bytes(to))
    return rel_fail(cx, "reinterpret: cannot reinterpret %s (%d bits) as %s (%d bits)",
                    dtype_name(from), dtype_bytes(from) * 8, dtype_name(to), dtype_bytes(to) * 8);
  return xf_tensor(cx, to, x->u.tensor.ndim, x->u.tensor.dims);
}

/* ───────────────────────────── slice_like ───────────────────────────── */

/* One sliced axis: the result takes shape_like's dim, which must not be
 * larger than the data's. */
static bool slice_like_axis(RelCtx *cx, const Type *x, const Type *like, int a, Dim *out) {
  Dim d = x->u.tensor.dims[a], t = like->u.tensor.dims[a];
  if (d.kind == DIM_CONST && t.kind == DIM_CONST && t.value > d.value)
    return rel_fail(cx, "slice_like: axis %d of shape_like %s is larger than the data's %s", a,
                    xf_shape(cx, like), xf_shape(cx, x)),
           false;
  out[a] = t;
  return true;
}

/* x cut to like's dims on the given axes (None: the axes both have);
 * like's dims must not be larger. */
static Type *rel_slice_like(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                            const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *like = x ? rel_tensor(cx, args, 1) : NULL;
  if (!like) return NULL;
  int n = x->u.tensor.ndim, nl = like->u.tensor.ndim;
  Dim out[TENSOR_MAX_RANK];
  if (n) memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)n);
  if (rel_attr_is_none(cx, attrs, "axes")) {
    for (int a = 0; a < n && a < nl; a++)
      if (!slice_like_axis(cx, x, like, a, out)) return NULL;
    return xf_tensor(cx, x->u.tensor.dtype, n, out);
  }
  int64_t ax[TENSOR_MAX_RANK];
  int k = rel_attr_ints(cx, attrs, "axes", ax, TENSOR_MAX_RANK);
  if (k < 0 || cx->err[0]) return NULL;
  if (k == 0) return rel_fail(cx, "slice_like: axes must not be empty (None slices every axis)");
  for (int i = 0; i < k; i++) {
    int a = rel_axis(cx, ax[i], n);
    if (a < 0) return NULL;
    if (a >= nl)
      return rel_fail(cx, "slice_like: axis %d is past the rank %d of shape_like %s", a, nl,
                      xf_shape(cx, like));
    if (!slice_like_axis(cx, x, like, a, out)) return NULL;
  }
  return xf_tensor(cx, x->u.tensor.dtype, n, out);
}

/* ─────────────────────────── layout_transform ─────────────────────────── */

int64_t layout_factor(const Layout *l, int letter) {
  int s = l->sub[letter];
  return s < 0 ? 1 : l->axes[s].factor;
}

/* Parses a layout such as "NCHW16c"; false with a message. */
static bool layout_parse(const char *which, const char *s, Layout *l, char *err, size_t errn) {
  memset(l, 0, sizeof *l);
  for (int i = 0; i < 26; i++) l->primal[i] = l->sub[i] = -1;
  int64_t factor = 0;
  const char *why = NULL;
  for (const char *p = s; *p && !why; p++) {
    char c = *p;
    if (c >= '0' && c <= '9') {
      if (factor > INT32_MAX / 10) why = "a factor is too large";
      factor = factor * 10 + (c - '0');
      continue;
    }
    bool up = c >= 'A' && c <= 'Z', low = c >= 'a' && c <= 'z';
    int *pos = up ? &l->primal[c - 'A'] : low ? &l->sub[c - 'a'] : NULL;
    if (!pos)
      why = "only letters and factors are allowed";
    else if (up && factor)
      why = "a factor must be followed by a lowercase axis";
    else if (low && factor <= 0)
      why = "a lowercase axis needs a positive factor before it";
    else if (*pos >= 0)
      why = "an axis appears twice";
    else if (l->n == TENSOR_MAX_RANK)
      why = "too many axes";
    if (why) break;
    *pos = l->n;
    l->axes[l->n++] = (LayoutAxis){(char)(up ? c : c - 'a' + 'A'), low ? factor : 0};
    factor = 0;
  }
  if (!why && factor) why = "it ends with a factor";
  for (int i = 0; !why && i < 26; i++)
    if (l->sub[i] >= 0 && l->primal[i] < 0) why = "a lowercase axis has no uppercase axis";
  if (why) snprintf(err, errn, "invalid %s \"%s\": %s", which, s, why);
  return !why;
}

bool layout_map(const char *src, const char *dst, LayoutMap *m, char *err, size_t errn) {
  if (!layout_parse("src_layout", src, &m->src, err, errn) ||
      !layout_parse("dst_layout", dst, &m->dst, err, errn))
    return false;
  for (int i = 0; i < 26; i++)
    if ((m->src.primal[i] < 0) != (m->dst.primal[i] < 0)) {
      snprintf(err, errn, "cannot convert from %s to %s: axis %c is only in %s", src, dst, 'A' + i,
               m->src.primal[i] >= 0 ? "src_layout" : "dst_layout");
      return false;
    }
  return true;
}

/* The logical size of primal letter i in the source, or `?` (a split axis
 * needs a constant outer dim). */
static Dim layout_logical(const LayoutMap *m, const Dim *in, int i) {
  Dim d = in[m->src.primal[i]];
  return m->src.sub[i] < 0 ? d : xf_dim_times(d, layout_factor(&m->src, i));
}

/* One output dim: a subordinate axis is its factor; a primal one the
 * logical size divided by the destination's factor, rounded up (the
 * remainder is padded with zeros, as TVM's layout_transform). */
static Dim layout_out_dim(const LayoutMap *m, const Dim *in, int k) {
  LayoutAxis ax = m->dst.axes[k];
  if (ax.factor) return dim_const(ax.factor);
  int i = ax.letter - 'A';
  Dim l = layout_logical(m, in, i);
  int64_t f = layout_factor(&m->dst, i);
  if (f == 1) return l;
  return l.kind == DIM_CONST ? dim_const((l.value + f - 1) / f) : dim_any();
}

/* The data's shape in dst_layout: the layouts parsed and matched (same
 * primal axes), the data's rank and split dims checked against src_layout. */
static Type *rel_layout_transform(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                  const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  const char *src = x ? rel_attr_str(cx, attrs, "src_layout") : "";
  const char *dst = x ? rel_attr_str(cx, attrs, "dst_layout") : "";
  if (cx->err[0]) return NULL;
  LayoutMap m;
  char err[256];
  if (!layout_map(src, dst, &m, err, sizeof err)) return rel_fail(cx, "layout_transform: %s", err);
  const Dim *in = x->u.tensor.dims;
  if (m.src.n != x->u.tensor.ndim)
    return rel_fail(cx, "layout_transform: src_layout \"%s\" has %d axes but the data %s has %d",
                    src, m.src.n, xf_shape(cx, x), x->u.tensor.ndim);
  for (int k = 0; k < m.src.n; k++) {
    LayoutAxis ax = m.src.axes[k];
    if (ax.factor && in[k].kind == DIM_CONST && in[k].value != ax.factor)
      return rel_fail(cx,
                      "layout_transform: axis %d of the data %s has size %lld but src_layout "
                      "\"%s\" splits it by %lld",
                      k, xf_shape(cx, x), (long long)in[k].value, src, (long long)ax.factor);
  }
  Dim out[TENSOR_MAX_RANK];
  for (int k = 0; k < m.dst.n; k++) out[k] = layout_out_dim(&m, in, k);
  return xf_tensor(cx, x->u.tensor.dtype, m.dst.n, out);
}

/* ───────────────────────────── tile, repeat ───────────────────────────── */

/* numpy's tile: the shorter of the shape and reps is padded with leading
 * 1s, and each dim multiplied by its rep (all reps positive, as TVM). */
static Type *rel_tile(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t reps[TENSOR_MAX_RANK];
  int r = x ? rel_attr_ints(cx, attrs, "reps", reps, TENSOR_MAX_RANK) : -1;
  if (r < 0 || cx->err[0]) return NULL;
  for (int i = 0; i < r; i++)
    if (reps[i] < 1)
      return rel_fail(cx, "tile: reps must be positive, got %lld at position %d",
                      (long long)reps[i], i);
  int n = x->u.tensor.ndim, m = n > r ? n : r;
  Dim out[TENSOR_MAX_RANK];
  for (int i = 0; i < m; i++) {
    int j = i - (m - n), k = i - (m - r);
    Dim d = j >= 0 ? x->u.tensor.dims[j] : dim_const(1);
    out[i] = xf_dim_times(d, k >= 0 ? reps[k] : 1);
  }
  return xf_tensor(cx, x->u.tensor.dtype, m, out);
}

/* One axis multiplied by repeats (>= 1); TVM requires the axis. */
static Type *rel_repeat(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  int64_t reps = rel_attr_int(cx, attrs, "repeats");
  if (cx->err[0]) return NULL;
  if (reps < 1)
    return rel_fail(cx, "repeat: repeats must be at least 1, got %lld", (long long)reps);
  if (rel_attr_is_none(cx, attrs, "axis"))
    return rel_fail(cx, "repeat: attribute `axis` is required (None is not supported)");
  int n = x->u.tensor.ndim, a = rel_axis(cx, rel_attr_int(cx, attrs, "axis"), n);
  if (a < 0) return NULL;
  Dim out[TENSOR_MAX_RANK];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)n);
  out[a] = xf_dim_times(out[a], reps);
  return xf_tensor(cx, x->u.tensor.dtype, n, out);
}

/* ───────────────────── reverse, reverse_sequence ───────────────────── */

static Type *rel_reverse(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x) return NULL;
  if (rel_attr_is_none(cx, attrs, "axis"))
    return rel_fail(cx, "reverse: attribute `axis` is required (None is not supported)");
  if (rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) < 0) return NULL;
  return xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims);
}

static Type *rel_reverse_sequence(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                  const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *len = x ? rel_tensor(cx, args, 1) : NULL;
  if (!len || !xf_int(cx, len, "seq_lengths", false)) return NULL;
  if (len->u.tensor.ndim != 1)
    return rel_fail(cx, "reverse_sequence: seq_lengths must be 1-D, got %s", xf_shape(cx, len));
  int n = x->u.tensor.ndim;
  int b = rel_axis(cx, rel_attr_int(cx, attrs, "batch_axis"), n);
  if (b < 0 || rel_axis(cx, rel_attr_int(cx, attrs, "seq_axis"), n) < 0) return NULL;
  if (!rel_unify_dim(cx, len->u.tensor.dims[0], x->u.tensor.dims[b]))
    return rel_fail(cx, "reverse_sequence: seq_lengths %s does not match batch axis %d of %s",
                    xf_shape(cx, len), b, xf_shape(cx, x));
  return xf_tensor(cx, x->u.tensor.dtype, n, x->u.tensor.dims);
}

/* ───────────────────────────── sequence_mask ───────────────────────────── */

/* data's type; valid_length is 1-D of the batch dim (the axis that is
 * not the length axis 0 or 1). */
static Type *rel_sequence_mask(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *len = x ? rel_tensor(cx, args, 1) : NULL;
  if (!len) return NULL;
  int64_t axis = rel_attr_int(cx, attrs, "axis");
  rel_attr_float(cx, attrs, "mask_value");
  if (cx->err[0]) return NULL;
  if (axis != 0 && axis != 1)
    return rel_fail(cx, "sequence_mask: axis must be 0 or 1, got %lld", (long long)axis);
  if (x->u.tensor.ndim < 2)
    return rel_fail(cx, "sequence_mask: data must have rank at least 2, got %s", xf_shape(cx, x));
  if (len->u.tensor.dtype == DT_BOOL)
    return rel_fail(cx, "sequence_mask: valid_length must be numbers, got bool");
  int b = 1 - (int)axis;
  if (len->u.tensor.ndim != 1 || !rel_unify_dim(cx, len->u.tensor.dims[0], x->u.tensor.dims[b]))
    return rel_fail(cx, "sequence_mask: valid_length %s must be 1-D of the size of axis %d of %s",
                    xf_shape(cx, len), b, xf_shape(cx, x));
  return xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims);
}

/* ───────────────────────────── meshgrid ───────────────────────────── */

/* A tuple of n grids, one per input (scalars count as length 1), of the
 * inputs' lengths in order ("xy": the first two swapped). */
static Type *rel_meshgrid(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const Type *t = args[0];
  if (t->kind != TY_TUPLE)
    return rel_fail(cx, "meshgrid: expects a tuple of tensors, got %s", rel_type_str(cx, t));
  int n = t->u.tuple.n;
  const char *ix = rel_attr_str(cx, attrs, "indexing");
  if (cx->err[0]) return NULL;
  if (strcmp(ix, "ij") && strcmp(ix, "xy"))
    return rel_fail(cx, "meshgrid: indexing must be \"ij\" or \"xy\", got \"%s\"", ix);
  if (n == 0) return rel_fail(cx, "meshgrid: needs at least one tensor");
  if (n > TENSOR_MAX_RANK) return rel_fail(cx, "meshgrid: more than %d tensors", TENSOR_MAX_RANK);
  Dim grid[TENSOR_MAX_RANK];
  for (int i = 0; i < n; i++) {
    const Type *f = t->u.tuple.fields[i];
    if (f->kind != TY_TENSOR || f->u.tensor.ndim > 1)
      return rel_fail(cx, "meshgrid: field %d must be a scalar or a 1-D tensor, got %s", i,
                      rel_type_str(cx, f));
    const Type *f0 = t->u.tuple.fields[0];
    if (f->u.tensor.dtype != f0->u.tensor.dtype)
      return rel_fail(cx, "meshgrid: field %d has dtype %s but field 0 has %s", i,
                      dtype_name(f->u.tensor.dtype), dtype_name(f0->u.tensor.dtype));
    grid[i] = f->u.tensor.ndim ? f->u.tensor.dims[0] : dim_const(1);
  }
  if (!strcmp(ix, "xy") && n >= 2) {
    Dim d = grid[0];
    grid[0] = grid[1], grid[1] = d;
  }
  Type **fields = ARENA_ARRAY(cx->arena, Type *, n);
  for (int i = 0; i < n; i++)
    fields[i] = xf_tensor(cx, t->u.tuple.fields[0]->u.tensor.dtype, n, grid);
  return type_tuple(cx->arena, n, fields, no_span);
}

/* ───────────────────────────── trilu ───────────────────────────── */

static Type *rel_trilu(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0), *k = x ? xf_scalar(cx, args, 1, "k") : NULL;
  rel_attr_bool(cx, attrs, "upper");
  if (!k || cx->err[0]) return NULL;
  if (x->u.tensor.ndim < 2)
    return rel_fail(cx, "trilu: data must have rank at least 2, got %s", xf_shape(cx, x));
  if (!xf_int(cx, k, "k", true)) return NULL;
  return xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec reshape_like_attrs[] = {{"lhs_begin", AV_INT, "0"},
                                                {"lhs_end", AV_NONE, "None"},
                                                {"rhs_begin", AV_INT, "0"},
                                                {"rhs_end", AV_NONE, "None"},
                                                {0}};
static const OpAttrSpec slice_like_attrs[] = {{"axes", AV_LIST, "None"}, {0}};
static const OpAttrSpec layout_attrs[] = {
    {"src_layout", AV_STR, NULL}, {"dst_layout", AV_STR, NULL}, {0}};
static const OpAttrSpec tile_attrs[] = {{"reps", AV_LIST, NULL}, {0}};
static const OpAttrSpec repeat_attrs[] = {
    {"repeats", AV_INT, NULL}, {"axis", AV_NONE, "None"}, {0}};
static const OpAttrSpec reverse_attrs[] = {{"axis", AV_NONE, "None"}, {0}};
static const OpAttrSpec reverse_sequence_attrs[] = {
    {"seq_axis", AV_INT, "1"}, {"batch_axis", AV_INT, "0"}, {0}};
static const OpAttrSpec sequence_mask_attrs[] = {
    {"mask_value", AV_FLOAT, "0f"}, {"axis", AV_INT, "0"}, {0}};
static const OpAttrSpec meshgrid_attrs[] = {{"indexing", AV_STR, "\"ij\""}, {0}};
static const OpAttrSpec trilu_attrs[] = {{"upper", AV_BOOL, "True"}, {0}};
static const OpAttrSpec reinterpret_attrs[] = {{"dtype", AV_STR, NULL}, {0}};

const OpDef ops_family_transform_shape[] = {
    {"reshape_like", 2, 2, OPAT_INJECTIVE, reshape_like_attrs, rel_reshape_like,
     "x reshaped to (a range of) like's shape", false, .flags = OP_VIEW, .args = "x, like",
     .rule = "x's dtype, like's shape (its lhs/rhs_begin..end axes replacing x's); the element "
             "count is kept",
     .example = "reshape_like([1f, 2f, 3f, 4f], ones(shape=[2, 2]))"},
    {"broadcast_to_like", 2, 2, OPAT_BROADCAST, no_attrs, rel_broadcast_to_like,
     "x broadcast to like's shape", false, .args = "x, like",
     .rule = "x's dtype, like's shape; x broadcasts to it",
     .example = "broadcast_to_like([1f, 2f], ones(shape=[2, 2]))"},
    {"collapse_sum_like", 2, 2, OPAT_COMM_REDUCE, no_attrs, rel_collapse_sum_like,
     "x summed over the dims like broadcasts along", false, .cost = OPCOST_ELEMWISE,
     .args = "x, like", .rule = "x's dtype, like's shape; like broadcasts to x",
     .example = "collapse_sum_like(ones(shape=[3, 2]), [0f, 0f])"},
    {"full_like", 2, 2, OPAT_ELEMWISE, no_attrs, rel_full_like,
     "x's type, every element fill_value", false, .args = "x, fill_value",
     .rule = "the result has x's type; fill_value is a scalar",
     .example = "full_like([1f, 2f], 5f)"},
    {"slice_like", 2, 2, OPAT_INJECTIVE, slice_like_attrs, rel_slice_like,
     "the leading part of x of like's size", false, .args = "x, like",
     .rule =
         "x's dtype; x's shape with the `axes` (all shared axes when None) taken from like's shape",
     .example = "slice_like([1f, 2f, 3f], [0f, 0f])"},
    {"layout_transform", 1, 1, OPAT_INJECTIVE, layout_attrs, rel_layout_transform,
     "change the data layout", false, .args = "x",
     .rule = "x's dtype, its shape rearranged from src_layout to dst_layout (split axes like 4c "
             "divide)",
     .example =
         "layout_transform(ones(shape=[1, 4, 2, 2]), src_layout=\"NCHW\", dst_layout=\"NCHW2c\")"},
    {"tile", 1, 1, OPAT_BROADCAST, tile_attrs, rel_tile, "x repeated reps[i] times along each axis",
     false, .args = "x",
     .rule = "x's dtype; each axis times its entry of reps (the shorter of x's rank and reps "
             "padded with 1s in front)",
     .example = "tile([1f, 2f], reps=[2])"},
    {"repeat", 1, 1, OPAT_BROADCAST, repeat_attrs, rel_repeat,
     "each element repeated n times along an axis", false, .args = "x",
     .rule = "x's dtype; axis `axis` times repeats",
     .example = "repeat([1f, 2f], repeats=2, axis=0)"},
    {"reverse", 1, 1, OPAT_INJECTIVE, reverse_attrs, rel_reverse,
     "the elements in reverse order along an axis", false, .args = "x",
     .rule = "the result has x's type", .example = "reverse([1f, 2f, 3f], axis=0)"},
    {"reverse_sequence", 2, 2, OPAT_INJECTIVE, reverse_sequence_attrs, rel_reverse_sequence,
     "reverse each batch's prefix", false, .args = "x, lengths",
     .rule = "the result has x's type; lengths is 1-D of x's batch_axis size",
     .example = "reverse_sequence([[1f, 2f, 3f], [4f, 5f, 6f]], [2, 3])"},
    {"sequence_mask", 2, 2, OPAT_INJECTIVE, sequence_mask_attrs, rel_sequence_mask,
     "mask positions past each length", false, .args = "x, lengths",
     .rule = "the result has x's type (rank >= 2); lengths is 1-D of x's size at axis 1 - `axis`",
     .example = "sequence_mask(ones(shape=[3, 2]), [1, 2])"},
    {"meshgrid", 1, 1, OPAT_INJECTIVE, meshgrid_attrs, rel_meshgrid,
     "coordinate grids of 1-D tensors", false, .flags = OP_TUPLE_ARG, .args = "(a, b, ...)",
     .rule = "a tuple of n tensors in the inputs' dtype, each of the 1-D inputs' lengths in order "
             "(indexing=\"xy\": the first two swapped)",
     .example = "meshgrid(([1f, 2f], [3f, 4f, 5f]))"},
    {"trilu", 2, 2, OPAT_ELEMWISE, trilu_attrs, rel_trilu,
     "the upper (lower) triangle from diagonal k, zeros elsewhere", false, .args = "x, k",
     .rule = "the result has x's type (rank >= 2); k is an integer scalar",
     .example = "trilu(ones(shape=[3, 3]), 0)"},
    {"cast_like", 2, 2, OPAT_ELEMWISE, no_attrs, rel_cast_like, "x converted to like's dtype",
     false, .cost = OPCOST_ELEMWISE, .args = "x, like", .rule = "x's shape in like's dtype",
     .example = "cast_like([1.5f, 2f], [0])"},
    {"reinterpret", 1, 1, OPAT_ELEMWISE, reinterpret_attrs, rel_reinterpret,
     "the bits of x read as another dtype of the same width", false, .args = "x",
     .rule = "x's shape in `dtype`, which has x's bit width",
     .example = "reinterpret([1f], dtype=\"int32\")"},
    {0},
};
