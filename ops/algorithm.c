/* algorithm.c — op family "algorithm": sorting, searching, unique and
 * einsum, with TVM v0.10's names, attributes and fusion patterns
 * (relay/attrs/algorithm.h, transform.h): argsort, sort, topk,
 * searchsorted, unique, einsum; and tfidf_vectorizer (ONNX's
 * TfIdfVectorizer on integer tokens: n-gram counts over a pool, with skips).
 *
 * Orders: ascending sorts put NaN last (numpy's order, -0 equal to +0) and
 * keep equal elements in their input order; descending ones are the exact
 * reverse order, equal elements still in input order.  topk is the first k
 * of that order (k < 1: the whole axis).  unique has TVM's fixed-size form:
 * (unique, indices, inverse_indices, num_unique[, counts]), the first three
 * the size of the input, num_unique of shape (1); entries past num_unique
 * are 0 (unique, counts) or the input's length (indices).  A 2-D input
 * gives its unique rows, in lexicographic order (ONNX's Unique with axis). */
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/transform_int.h"

static const Span no_span;

enum { TFIDF_MAX = 1024 }; /* entries of tfidf_vectorizer's lists (the kernel's bound too) */

/* ─────────────────────────── argsort, sort ─────────────────────────── */

/* The indices dtype attribute: any number type (TVM allows float indices). */
static DType index_dtype(RelCtx *cx, const Attrs *attrs) {
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_INT32);
  if (dt == DT_BOOL)
    return rel_fail(cx, "%s: dtype must be a number type, got bool", cx->op_name), DT_INVALID;
  return dt;
}

/* The checks argsort and sort share (they share their attributes): the
 * axis, and the indices dtype (read by sort too, as TVM's attributes). */
static const Type *sort_arg(RelCtx *cx, Type **args, const Attrs *attrs, DType *dt) {
  const Type *x = rel_tensor(cx, args, 0);
  if (!x || rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) < 0) return NULL;
  rel_attr_bool(cx, attrs, "is_ascend");
  *dt = index_dtype(cx, attrs);
  return cx->err[0] ? NULL : x;
}

static Type *rel_argsort(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                         const Attrs *attrs) {
  DType dt;
  const Type *x = sort_arg(cx, args, attrs, &dt);
  return x ? xf_tensor(cx, dt, x->u.tensor.ndim, x->u.tensor.dims) : NULL;
}

static Type *rel_sort(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  DType dt;
  const Type *x = sort_arg(cx, args, attrs, &dt);
  return x ? xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, x->u.tensor.dims) : NULL;
}

/* ───────────────────────────── topk ───────────────────────────── */

/* values and/or indices (ret_type) with the axis cut to k (k < 1: the whole
 * axis); k may not exceed a known axis length. */
static Type *rel_topk(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int a = x ? rel_axis(cx, rel_attr_int(cx, attrs, "axis"), x->u.tensor.ndim) : -1;
  if (a < 0) return NULL;
  int64_t k = rel_attr_int(cx, attrs, "k");
  const char *ret = rel_attr_str(cx, attrs, "ret_type");
  rel_attr_bool(cx, attrs, "is_ascend");
  DType dt = index_dtype(cx, attrs);
  if (cx->err[0]) return NULL;
  bool both = !strcmp(ret, "both"), vals = !strcmp(ret, "values"), idx = !strcmp(ret, "indices");
  if (!both && !vals && !idx)
    return rel_fail(cx, "topk: ret_type must be \"both\", \"values\" or \"indices\", got \"%s\"",
                    ret);
  Dim out[TENSOR_MAX_RANK], d = x->u.tensor.dims[a];
  memcpy(out, x->u.tensor.dims, sizeof(Dim) * (size_t)x->u.tensor.ndim);
  if (k >= 1 && d.kind == DIM_CONST && k > d.value)
    return rel_fail(cx, "topk: k %lld is larger than axis %d of %s", (long long)k, a,
                    xf_shape(cx, x));
  if (k >= 1) out[a] = dim_const(k);
  Type *v = xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, out);
  Type *i = xf_tensor(cx, dt, x->u.tensor.ndim, out);
  if (!both) return vals ? v : i;
  Type **f = ARENA_ARRAY(cx->arena, Type *, 2);
  f[0] = v, f[1] = i;
  return type_tuple(cx->arena, 2, f, no_span);
}

/* ─────────────────────────── searchsorted ─────────────────────────── */

/* values' shape with the indices' dtype; a sequence of rank > 1 has one
 * row per row of values (equal leading dims). */
static Type *rel_searchsorted(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  const Type *s = rel_tensor(cx, args, 0), *v = s ? rel_tensor(cx, args, 1) : NULL;
  if (!v || !xf_same_dtype(cx, s, "sorted_sequence", v, "values")) return NULL;
  rel_attr_bool(cx, attrs, "right");
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_INT32);
  if (cx->err[0]) return NULL;
  if (!dtype_is_int(dt))
    return rel_fail(cx, "searchsorted: dtype must be an integer type, got %s", dtype_name(dt));
  int ns = s->u.tensor.ndim, nv = v->u.tensor.ndim;
  if (ns < 1 || nv < 1)
    return rel_fail(cx, "searchsorted: sorted_sequence %s and values %s must have rank >= 1",
                    xf_shape(cx, s), xf_shape(cx, v));
  if (ns > 1) {
    bool ok = ns == nv;
    for (int i = 0; ok && i < nv - 1; i++)
      ok = rel_unify_dim(cx, s->u.tensor.dims[i], v->u.tensor.dims[i]);
    if (!ok)
      return rel_fail(cx,
                      "searchsorted: sorted_sequence %s and values %s must agree on all but "
                      "the last axis",
                      xf_shape(cx, s), xf_shape(cx, v));
  }
  return xf_tensor(cx, dt, nv, v->u.tensor.dims);
}

/* ───────────────────────────── unique ───────────────────────────── */

/* TVM's fixed-size form: (unique, indices, inverse_indices, num_unique[,
 * counts]), all of the input's length except num_unique (1). */
static Type *rel_unique(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  rel_attr_bool(cx, attrs, "sorted");
  bool counts = rel_attr_bool(cx, attrs, "return_counts");
  if (!x || cx->err[0]) return NULL;
  if (x->u.tensor.ndim != 1 && x->u.tensor.ndim != 2)
    return rel_fail(cx, "unique: data must be 1-D (or 2-D: unique rows), got %s", xf_shape(cx, x));
  const Dim *d = x->u.tensor.dims;
  Dim one = dim_const(1);
  Type **f = ARENA_ARRAY(cx->arena, Type *, 5);
  f[0] = xf_tensor(cx, x->u.tensor.dtype, x->u.tensor.ndim, d);
  f[1] = xf_tensor(cx, DT_INT32, 1, d);
  f[2] = xf_tensor(cx, DT_INT32, 1, d);
  f[3] = xf_tensor(cx, DT_INT32, 1, &one);
  f[4] = xf_tensor(cx, DT_INT32, 1, d);
  return type_tuple(cx->arena, counts ? 5 : 4, f, no_span);
}

/* ───────────────────────────── einsum ───────────────────────────── */

static int label_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

static char label_char(int id) { return (char)(id < 26 ? 'A' + id : 'a' + id - 26); }

/* One term up to a ',' or '-' or the end: labels and at most one "...". */
static const char *parse_term(const char *p, EinsumTerm *t, const char **why) {
  bool ell = false;
  t->n = 0;
  for (; *p && *p != ',' && *p != '-'; p++) {
    if (*p == ' ') continue;
    int id = label_id(*p);
    if (*p == '.') {
      if (strncmp(p, "...", 3) != 0 || ell) return *why = "\"...\" must be three dots, once", p;
      ell = true, id = EINSUM_ELLIPSIS, p += 2;
    } else if (id < 0) {
      return *why = "only letters, \",\", \"->\" and \"...\" are allowed", p;
    }
    if (t->n > TENSOR_MAX_RANK) return *why = "too many labels", p;
    t->lab[t->n++] = (signed char)id;
  }
  return p;
}

static bool term_has(const EinsumTerm *t, int id) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == id) return true;
  return false;
}

/* numpy's implicit output: the ellipsis (when an input has one), then the
 * labels used exactly once, in ASCII order. */
static void implicit_out(EinsumSpec *s) {
  int count[EINSUM_ELLIPSIS + 1] = {0};
  for (int i = 0; i < s->nin; i++)
    for (int j = 0; j < s->in[i].n; j++) count[(int)s->in[i].lab[j]]++;
  s->out.n = 0;
  if (count[EINSUM_ELLIPSIS]) s->out.lab[s->out.n++] = EINSUM_ELLIPSIS;
  for (int id = 0; id < EINSUM_ELLIPSIS; id++)
    if (count[id] == 1) s->out.lab[s->out.n++] = (signed char)id;
}

int einsum_ellipsis_dims(const EinsumSpec *s, int i, int rank) {
  return term_has(&s->in[i], EINSUM_ELLIPSIS) ? rank - (s->in[i].n - 1) : 0;
}

/* Checks the output term: unique labels that the inputs use, and an
 * ellipsis when the inputs' ellipses stand for any dims. */
static const char *check_out(const EinsumSpec *s, const int *ranks, char *c) {
  bool ell_dims = false;
  for (int i = 0; i < s->nin; i++) ell_dims |= einsum_ellipsis_dims(s, i, ranks[i]) > 0;
  for (int j = 0; j < s->out.n; j++) {
    int id = s->out.lab[j];
    bool used = false;
    for (int i = 0; i < s->nin && !used; i++) used = term_has(&s->in[i], id);
    *c = id == EINSUM_ELLIPSIS ? '.' : label_char(id);
    for (int k = 0; k < j; k++)
      if (s->out.lab[k] == id) return "appears twice in the output";
    if (!used) return "of the output is not among the inputs' labels";
  }
  if (ell_dims && !term_has(&s->out, EINSUM_ELLIPSIS))
    return *c = '.', "in the inputs stands for dims the output must keep with \"...\"";
  return NULL;
}

/* Terms split at ',' and "->", each checked against its operand's rank;
 * without "->" the output is numpy's implicit one. */
bool einsum_parse(const char *eq, int nin, const int *ranks, EinsumSpec *s, char *err,
                  size_t errn) {
  const char *p = eq, *why = NULL;
  s->nin = 0;
  while (!why) {
    if (s->nin == EINSUM_MAX_IN)
      return snprintf(err, errn, "more than %d operands", EINSUM_MAX_IN), false;
    p = parse_term(p, &s->in[s->nin++], &why);
    if (why || *p != ',') break;
    p++;
  }
  bool explicit_out = !why && *p == '-';
  if (explicit_out && p[1] != '>') why = "\"-\" must start \"->\"";
  if (explicit_out && !why) {
    p = parse_term(p + 2, &s->out, &why);
    if (!why && *p) why = "only one \"->\" is allowed";
  }
  if (why)
    return snprintf(err, errn, "invalid equation \"%s\" at offset %d: %s", eq, (int)(p - eq), why),
           false;
  if (s->nin != nin)
    return snprintf(err, errn, "the equation \"%s\" has %d operands but %d tensors are given", eq,
                    s->nin, nin),
           false;
  for (int i = 0; i < nin; i++) {
    bool ell = term_has(&s->in[i], EINSUM_ELLIPSIS);
    int labels = s->in[i].n - ell;
    if (ell ? labels > ranks[i] : labels != ranks[i])
      return snprintf(err, errn, "operand %d has rank %d but its term in \"%s\" has %d labels", i,
                      ranks[i], eq, labels),
             false;
  }
  if (!explicit_out) implicit_out(s);
  char c = 0;
  const char *bad = check_out(s, ranks, &c);
  if (bad && c == '.') return snprintf(err, errn, "\"...\" %s in \"%s\"", bad, eq), false;
  if (bad) return snprintf(err, errn, "label %c %s in \"%s\"", c, bad, eq), false;
  return true;
}

/* The size of every label (unified across operands) and the broadcast
 * shape of the ellipses; false after rel_fail. */
static bool einsum_sizes(RelCtx *cx, const EinsumSpec *s, Type *const *f, Dim *size, bool *seen,
                         int *nell, Dim **ell) {
  *nell = 0, *ell = NULL;
  for (int i = 0; i < s->nin; i++) {
    const Type *t = f[i];
    int ne = einsum_ellipsis_dims(s, i, t->u.tensor.ndim), d = 0;
    for (int j = 0; j < s->in[i].n; j++) {
      int id = s->in[i].lab[j];
      if (id == EINSUM_ELLIPSIS) {
        if (!rel_broadcast(cx, *nell, *ell, ne, t->u.tensor.dims + d, nell, ell)) return false;
        d += ne;
        continue;
      }
      Dim dm = t->u.tensor.dims[d++];
      if (seen[id] && !rel_unify_dim(cx, size[id], dm)) {
        const char *a = rel_shape_str(cx, 1, &size[id]), *b = rel_shape_str(cx, 1, &dm);
        return rel_fail(cx, "einsum: label %c has sizes %.*s and %.*s", label_char(id),
                        (int)strlen(a) - 2, a + 1, (int)strlen(b) - 2, b + 1),
               false;
      }
      if (!seen[id] || size[id].kind != DIM_CONST) size[id] = dm;
      seen[id] = true;
    }
  }
  return true;
}

/* Operands of one dtype (not bool) matching the equation; the result's
 * dims are the output labels' sizes and the ellipses' broadcast shape. */
static Type *rel_einsum(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                        const Attrs *attrs) {
  const Type *t = args[0];
  if (t->kind != TY_TUPLE || t->u.tuple.n == 0)
    return rel_fail(cx, "einsum: expects a tuple of tensors, got %s", rel_type_str(cx, t));
  int n = t->u.tuple.n, ranks[EINSUM_MAX_IN];
  Type *const *f = t->u.tuple.fields;
  const char *eq = rel_attr_str(cx, attrs, "equation");
  if (cx->err[0]) return NULL;
  for (int i = 0; i < n; i++) {
    if (f[i]->kind != TY_TENSOR)
      return rel_fail(cx, "einsum: field %d must be a tensor, got %s", i, rel_type_str(cx, f[i]));
    if (f[i]->u.tensor.dtype != f[0]->u.tensor.dtype)
      return rel_fail(cx, "einsum: field %d has dtype %s but field 0 has %s", i,
                      dtype_name(f[i]->u.tensor.dtype), dtype_name(f[0]->u.tensor.dtype));
    if (i < EINSUM_MAX_IN) ranks[i] = f[i]->u.tensor.ndim;
  }
  if (f[0]->u.tensor.dtype == DT_BOOL)
    return rel_fail(cx, "einsum: bool tensors are not supported");
  EinsumSpec s;
  char err[256];
  if (n > EINSUM_MAX_IN) return rel_fail(cx, "einsum: more than %d operands", EINSUM_MAX_IN);
  if (!einsum_parse(eq, n, ranks, &s, err, sizeof err)) return rel_fail(cx, "einsum: %s", err);
  Dim size[EINSUM_ELLIPSIS], *ell, out[TENSOR_MAX_RANK];
  bool seen[EINSUM_ELLIPSIS] = {0};
  int nell, m = 0;
  if (!einsum_sizes(cx, &s, f, size, seen, &nell, &ell)) return NULL;
  for (int j = 0; j < s.out.n; j++) {
    int id = s.out.lab[j];
    if (id != EINSUM_ELLIPSIS && m < TENSOR_MAX_RANK) out[m++] = size[id];
    for (int e = 0; id == EINSUM_ELLIPSIS && e < nell && m < TENSOR_MAX_RANK; e++)
      out[m++] = ell[e];
  }
  return xf_tensor(cx, f[0]->u.tensor.dtype, m, out);
}

/* ─────────────────────────── tfidf_vectorizer ─────────────────────────── */

/* The n-gram count of pool level i (grams of i + 1 tokens), or -1. */
static int64_t level_grams(const int64_t *counts, int nc, int64_t npool, int i) {
  int64_t end = i + 1 < nc ? counts[i + 1] : npool, len = end - counts[i];
  return counts[i] < 0 || len < 0 || len % (i + 1) ? -1 : len / (i + 1);
}

/* tfidf_vectorizer(x (C) or (N, C) integers): float32 (max(ngram_indexes)
 * + 1) per row; the pool's levels must hold whole n-grams, one
 * ngram_indexes entry each. */
static Type *rel_tfidf(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                       const Attrs *attrs) {
  const Type *x = rel_tensor(cx, args, 0);
  int64_t pool[TFIDF_MAX], counts[TFIDF_MAX], ix[TFIDF_MAX];
  int np = rel_attr_ints(cx, attrs, "pool_int64s", pool, TFIDF_MAX);
  int nc = rel_attr_ints(cx, attrs, "ngram_counts", counts, TFIDF_MAX);
  int ni = rel_attr_ints(cx, attrs, "ngram_indexes", ix, TFIDF_MAX);
  int64_t lo = rel_attr_int(cx, attrs, "min_gram_length"),
          hi = rel_attr_int(cx, attrs, "max_gram_length");
  int64_t skip = rel_attr_int(cx, attrs, "max_skip_count");
  const char *mode = rel_attr_str(cx, attrs, "mode");
  if (!x || cx->err[0]) return NULL;
  if (!dtype_is_int(x->u.tensor.dtype) || x->u.tensor.ndim < 1 || x->u.tensor.ndim > 2)
    return rel_fail(cx, "tfidf_vectorizer: x must be 1-D or 2-D integers, got %s", xf_shape(cx, x));
  if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
    return rel_fail(cx, "tfidf_vectorizer: mode must be TF, IDF or TFIDF, got \"%s\"", mode);
  if (lo < 1 || hi < lo || skip < 0 || nc != hi)
    return rel_fail(cx,
                    "tfidf_vectorizer: need 1 <= min_gram_length <= max_gram_length = "
                    "len(ngram_counts) and max_skip_count >= 0");
  int64_t total = 0, out = 0;
  for (int i = 0; i < nc; i++) {
    int64_t g = level_grams(counts, nc, np, i);
    if (g < 0)
      return rel_fail(cx, "tfidf_vectorizer: pool level %d does not hold whole %d-grams", i, i + 1);
    total += g;
  }
  if (total != ni)
    return rel_fail(cx, "tfidf_vectorizer: %lld n-grams in the pool but %d ngram_indexes",
                    (long long)total, ni);
  for (int i = 0; i < ni; i++) {
    if (ix[i] < 0) return rel_fail(cx, "tfidf_vectorizer: ngram_indexes must not be negative");
    if (ix[i] + 1 > out) out = ix[i] + 1;
  }
  Dim d[2] = {x->u.tensor.dims[0], dim_const(out)};
  return x->u.tensor.ndim == 1 ? xf_tensor(cx, DT_FLOAT32, 1, d + 1)
                               : xf_tensor(cx, DT_FLOAT32, 2, d);
}

/* ───────────────────────────── table ───────────────────────────── */

static const OpAttrSpec argsort_attrs[] = {
    {"axis", AV_INT, "-1"}, {"is_ascend", AV_BOOL, "True"}, {"dtype", AV_STR, "\"int32\""}, {0}};
static const OpAttrSpec topk_attrs[] = {{"k", AV_INT, NULL},
                                        {"axis", AV_INT, "-1"},
                                        {"ret_type", AV_STR, "\"both\""},
                                        {"is_ascend", AV_BOOL, "False"},
                                        {"dtype", AV_STR, "\"int32\""},
                                        {0}};
static const OpAttrSpec searchsorted_attrs[] = {
    {"right", AV_BOOL, "False"}, {"dtype", AV_STR, "\"int32\""}, {0}};
static const OpAttrSpec unique_attrs[] = {
    {"sorted", AV_BOOL, "True"}, {"return_counts", AV_BOOL, "False"}, {0}};
static const OpAttrSpec einsum_attrs[] = {{"equation", AV_STR, NULL}, {0}};
static const OpAttrSpec tfidf_attrs[] = {{"min_gram_length", AV_INT, "1"},
                                         {"max_gram_length", AV_INT, "1"},
                                         {"max_skip_count", AV_INT, "0"},
                                         {"mode", AV_STR, "\"TF\""},
                                         {"ngram_counts", AV_LIST, "[0]"},
                                         {"ngram_indexes", AV_LIST, "[0]"},
                                         {"pool_int64s", AV_LIST, "[0]"},
                                         {"weights", AV_EXPR, "None"},
                                         {0}};

const OpDef ops_family_algorithm[] = {
    {"argsort", 1, 1, OPAT_OPAQUE, argsort_attrs, rel_argsort, "the indices that sort x", false,
     .args = "x", .rule = "x's shape in `dtype` (int32 default)",
     .example = "argsort([3f, 1f, 2f])"},
    {"sort", 1, 1, OPAT_OPAQUE, argsort_attrs, rel_sort, "x sorted along an axis", false,
     .args = "x", .rule = "the result has x's type", .example = "sort([3f, 1f, 2f])"},
    {"topk", 1, 1, OPAT_OPAQUE, topk_attrs, rel_topk, "the k largest (values, indices)", false,
     .args = "x",
     .rule = "x's shape with k along `axis`: values in x's dtype, indices in `dtype`; ret_type "
             "both: a tuple (values, indices)",
     .example = "topk([3f, 1f, 2f], k=2)"},
    {"searchsorted", 2, 2, OPAT_OPAQUE, searchsorted_attrs, rel_searchsorted,
     "insertion indices keeping the order", false, .args = "sorted, values",
     .rule = "values' shape in `dtype` (int32 default); sorted's leading axes match values'",
     .example = "searchsorted([1f, 3f, 5f], [2f, 5f])"},
    {"unique", 1, 1, OPAT_OPAQUE, unique_attrs, rel_unique,
     "(unique, indices, inverse_indices, num_unique[, counts])", false, .args = "x",
     .rule = "a tuple (values in x's dtype, indices, inverse indices, num_unique, [counts]): int32 "
             "but the values, 1-D of x's length but num_unique (1); of a 2-D x, unique rows "
             "(values x's shape)",
     .example = "unique([3, 1, 3, 2])"},
    {"einsum", 1, 1, OPAT_INJECTIVE, einsum_attrs, rel_einsum, "Einstein summation", false,
     .flags = OP_TUPLE_ARG, .cost = OPCOST_NONE, .args = "(a, b, ...)",
     .rule = "the inputs' dtype; the shape of `equation`'s output subscripts, each label's size "
             "unified across the inputs",
     .example = "einsum(([[1f, 2f]], [[3f], [4f]]), equation=\"ij,jk->ik\")"},
    {"tfidf_vectorizer", 1, 1, OPAT_OPAQUE, tfidf_attrs, rel_tfidf,
     "n-gram counts of integer tokens over a pool (ONNX's TfIdfVectorizer: skips, TF/IDF/TFIDF)",
     false, .args = "x",
     .rule = "float32 (max(ngram_indexes) + 1), per row of a 2-D x; the pool's levels hold whole "
             "n-grams, one ngram_indexes entry each",
     .example = "tfidf_vectorizer([1, 2, 1, 2], max_gram_length=2, ngram_counts=[0, 2], "
                "ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])"},
    {0},
};
