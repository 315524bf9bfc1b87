/* kernels_algorithm.c — reference kernels of the algorithm family
 * (ops/algorithm.c): argsort, sort, topk, searchsorted, unique, einsum.
 *
 * Order: values compare as numbers in a total order where NaN is above
 * everything and equal to NaN, -0 equal to +0 (numpy's sort order).  The
 * sorts are stable merge sorts: ascending keeps equal elements in input
 * order, and descending is the reverse order, equal elements still in
 * input order.  unique groups equal elements by `==` (each NaN is its own
 * group, as TVM's adjacent-difference test).  searchsorted binary-searches
 * each row with the same order.  einsum sums products in float64
 * (floats, rounded once) or modulo 2^64 (integers).  tfidf_vectorizer counts
 * as ONNX Runtime: for each skip distance 1 .. max_skip_count + 1 and start
 * position, the n-grams of min..max tokens spaced by the distance that are
 * in the pool; unigrams counted on the first distance only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels_xform.h"
#include "ops/image.h"
#include "ops/transform_int.h"

static int64_t prod(const int64_t *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s[i];
  return p;
}

/* ───────────────────────────── ordering ───────────────────────────── */

/* The 8-byte lane a dtype is compared in: floats as float64 (exact). */
static Lane key_lane(DType dt) {
  Lane l = kernel_lane(dt);
  return l == LANE_F32 ? LANE_F64 : l;
}

static int cmp_vals(Lane l, LaneVal a, LaneVal b) {
  switch (l) {
    case LANE_F64: {
      bool na = isnan(a.d), nb = isnan(b.d);
      if (na || nb) return na - nb;
      return (a.d > b.d) - (a.d < b.d);
    }
    case LANE_I64:
      return (a.i > b.i) - (a.i < b.i);
    default:
      return (a.u > b.u) - (a.u < b.u);
  }
}

typedef struct SortRow {
  Lane l;
  const LaneVal *v; /* the row's keys */
  int dir;          /* 1 ascending, -1 descending */
  int64_t width;    /* a key is `width` values compared in order (0: one) */
} SortRow;

/* Keys a and b of r compared (lexicographically when wider than one). */
static int cmp_keys(const SortRow *r, int64_t a, int64_t b) {
  int64_t w = r->width > 1 ? r->width : 1;
  for (int64_t k = 0; k < w; k++) {
    int c = cmp_vals(r->l, r->v[a * w + k], r->v[b * w + k]);
    if (c) return c;
  }
  return 0;
}

/* Stable bottom-up merge sort of the positions idx[0..n) by key. */
static void merge_sort(const SortRow *r, int64_t *idx, int64_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = r->dir * cmp_keys(r, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
  }
}

/* ─────────────────────────── argsort, sort, topk ─────────────────────────── */

typedef struct SortOut {
  RtTensor *values, *indices; /* either may be NULL */
  int64_t k;                  /* positions written per row */
} SortOut;

/* Sorts every row of x along axis a (is_ascend: direction) and writes the
 * first o->k of each into the outputs. */
static bool sort_rows(KernelCtx *kx, const RtTensor *x, int a, bool asc, const SortOut *o) {
  int64_t outer = prod(x->shape, 0, a), n = x->shape[a], inner = prod(x->shape, a + 1, x->ndim);
  size_t es = (size_t)dtype_bytes(x->dtype), m = (size_t)(n ? n : 1);
  Lane l = key_lane(x->dtype);
  LaneVal *v = kernel_alloc(kx, sizeof(LaneVal) * m);
  int64_t *idx = kernel_alloc(kx, sizeof(int64_t) * m), *tmp = kernel_alloc(kx, 8 * m);
  bool ok = v && idx && tmp;
  SortRow r = {l, v, asc ? 1 : -1, 1};
  for (int64_t p = 0; ok && p < outer; p++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = p * n * inner + q, obase = p * o->k * inner + q;
      lane_load(l, x->dtype, x->data, base, inner, n, v);
      for (int64_t i = 0; i < n; i++) idx[i] = i;
      merge_sort(&r, idx, tmp, n);
      for (int64_t i = 0; i < o->k; i++) {
        int64_t dst = obase + i * inner;
        if (o->values)
          memcpy((char *)o->values->data + (size_t)dst * es,
                 (const char *)x->data + (size_t)(base + idx[i] * inner) * es, es);
        if (o->indices) lane_store(LANE_I64, o->indices->dtype, &idx[i], o->indices->data, dst, 1);
      }
    }
  free(v), free(idx), free(tmp);
  return ok;
}

static bool k_argsort(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  bool asc = kattr_bool(kx, attrs, "is_ascend");
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  SortOut o = {NULL, out[0], in[0]->shape[a]};
  return sort_rows(kx, in[0], a, asc, &o);
}

static bool k_sort(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  bool asc = kattr_bool(kx, attrs, "is_ascend");
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  SortOut o = {out[0], NULL, in[0]->shape[a]};
  return sort_rows(kx, in[0], a, asc, &o);
}

static bool k_topk(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  bool asc = kattr_bool(kx, attrs, "is_ascend");
  const char *ret = kattr_str(kx, attrs, "ret_type");
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  SortOut o = {out[0], nout > 1 ? out[1] : NULL, out[0]->shape[a]};
  if (!strcmp(ret, "indices")) o.values = NULL, o.indices = out[0];
  return sort_rows(kx, in[0], a, asc, &o);
}

/* ───────────────────────────── searchsorted ───────────────────────────── */

/* The insertion point of key in row[0..n): before the first element not
 * below it (left), or not at most it (right). */
static int64_t search(Lane l, const LaneVal *row, int64_t n, LaneVal key, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = cmp_vals(l, row[mid], key);
    if (c < 0 || (right && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Each value binary-searched in its row of the sequence (the whole
 * sequence when it is 1-D). */
static bool k_searchsorted(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  const RtTensor *s = in[0], *v = in[1];
  bool right = kattr_bool(kx, attrs, "right");
  if (!kernel_attrs_ok(kx)) return false;
  Lane l = key_lane(s->dtype);
  LaneVal *sv = lane_array(kx, s, l), *vv = sv ? lane_array(kx, v, l) : NULL;
  if (!vv) return free(sv), false;
  int64_t n = s->shape[s->ndim - 1], vlast = v->shape[v->ndim - 1];
  for (int64_t j = 0; j < v->numel; j++) {
    const LaneVal *row = s->ndim == 1 ? sv : sv + (j / vlast) * n;
    int64_t r = search(l, row, n, vv[j], right);
    lane_store(LANE_I64, out[0]->dtype, &r, out[0]->data, j, 1);
  }
  free(sv), free(vv);
  return true;
}

/* ───────────────────────────── unique ───────────────────────────── */

static bool same(Lane l, LaneVal a, LaneVal b) {
  return l == LANE_F64 ? a.d == b.d : l == LANE_I64 ? a.i == b.i : a.u == b.u;
}

/* Rows a and b (of w values each) equal element by element. */
static bool same_rows(Lane l, const LaneVal *v, int64_t w, int64_t a, int64_t b) {
  for (int64_t k = 0; k < w; k++)
    if (!same(l, v[a * w + k], v[b * w + k])) return false;
  return true;
}

/* Groups of equal elements (rows of w) in sorted order: start[g] (a
 * position of the sorted order; start[ng] = n) and group[i] for each. */
static int64_t group(Lane l, const LaneVal *v, int64_t w, const int64_t *idx, int64_t n,
                     int64_t *start, int64_t *grp) {
  int64_t ng = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || !same_rows(l, v, w, idx[i], idx[i - 1])) start[ng++] = i;
    grp[idx[i]] = ng - 1;
  }
  start[ng] = n;
  return ng;
}

/* Writes unique's outputs from the groups, group g at position rank[g]. */
static void unique_out(const RtTensor *x, const int64_t *idx, const int64_t *start,
                       const int64_t *grp, const int64_t *rank, int64_t ng, int nout,
                       RtTensor *const *out, int64_t *buf) {
  int64_t n = x->shape[0];
  size_t es = (size_t)dtype_bytes(x->dtype) * (size_t)(x->ndim == 2 ? x->shape[1] : 1);
  memset(out[0]->data, 0, (size_t)n * es);
  for (int64_t g = 0; g < ng; g++)
    memcpy((char *)out[0]->data + (size_t)rank[g] * es,
           (const char *)x->data + (size_t)idx[start[g]] * es, es);
  for (int64_t i = 0; i < n; i++) buf[i] = n;
  for (int64_t g = 0; g < ng; g++) buf[rank[g]] = idx[start[g]];
  lane_store(LANE_I64, out[1]->dtype, buf, out[1]->data, 0, n);
  for (int64_t i = 0; i < n; i++) buf[i] = rank[grp[i]];
  lane_store(LANE_I64, out[2]->dtype, buf, out[2]->data, 0, n);
  lane_store(LANE_I64, out[3]->dtype, &ng, out[3]->data, 0, 1);
  if (nout < 5) return;
  for (int64_t i = 0; i < n; i++) buf[i] = 0;
  for (int64_t g = 0; g < ng; g++) buf[rank[g]] = start[g + 1] - start[g];
  lane_store(LANE_I64, out[4]->dtype, buf, out[4]->data, 0, n);
}

/* A stable ascending sort, groups of equal neighbours, then the groups
 * ranked by value (sorted) or by first occurrence, and the outputs written. */
static bool k_unique(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  const RtTensor *x = in[0];
  bool sorted = kattr_bool(kx, attrs, "sorted");
  if (!kernel_attrs_ok(kx)) return false;
  int64_t n = x->shape[0], w = x->ndim == 2 ? x->shape[1] : 1;
  size_t m = (size_t)(n + 1);
  Lane l = key_lane(x->dtype);
  LaneVal *v = lane_array(kx, x, l);
  int64_t *a[6];
  bool ok = v != NULL;
  for (int i = 0; i < 6; i++) {
    a[i] = ok ? kernel_alloc(kx, sizeof(int64_t) * m) : NULL;
    ok = ok && a[i];
  }
  if (ok) {
    int64_t *idx = a[0], *tmp = a[1], *start = a[2], *grp = a[3], *rank = a[4], *first = a[5];
    SortRow r = {l, v, 1, w};
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    merge_sort(&r, idx, tmp, n);
    int64_t ng = group(l, v, w, idx, n, start, grp);
    for (int64_t g = 0; g < ng; g++) rank[g] = g, first[g] = idx[start[g]];
    if (!sorted) { /* groups by first occurrence: sort the group ids by first index */
      SortRow byfirst = {LANE_I64, (const LaneVal *)first, 1, 1};
      for (int64_t g = 0; g < ng; g++) tmp[g] = g;
      merge_sort(&byfirst, tmp, grp, ng); /* grp as scratch, recomputed below */
      for (int64_t p = 0; p < ng; p++) rank[tmp[p]] = p;
      ng = group(l, v, w, idx, n, start, grp);
    }
    unique_out(x, idx, start, grp, rank, ng, nout, out, tmp);
  }
  free(v);
  for (int i = 0; i < 6; i++) free(a[i]);
  return ok;
}

/* ───────────────────────────── einsum ───────────────────────────── */

/* The iteration space: output axes first (labels, ellipsis dims), then
 * the summed labels; per operand, the element stride of each axis. */
typedef struct EinsumLoop {
  int nout, nall;
  int64_t ext[2 * TENSOR_MAX_RANK + EINSUM_ELLIPSIS];
  int64_t st[EINSUM_MAX_IN][2 * TENSOR_MAX_RANK + EINSUM_ELLIPSIS];
} EinsumLoop;

/* Sizes of labels and of the broadcast ellipsis dims (right-aligned). */
static void einsum_extents(const EinsumSpec *s, RtTensor *const *in, int64_t *size, int *nell,
                           int64_t *ell) {
  *nell = 0;
  for (int i = 0; i < s->nin; i++) {
    int ne = einsum_ellipsis_dims(s, i, in[i]->ndim), d = 0;
    if (ne > *nell) {
      memmove(ell + (ne - *nell), ell, sizeof(int64_t) * (size_t)*nell);
      for (int e = 0; e < ne - *nell; e++) ell[e] = 1;
      *nell = ne;
    }
    for (int j = 0; j < s->in[i].n; j++) {
      int id = s->in[i].lab[j];
      if (id != EINSUM_ELLIPSIS) {
        size[id] = in[i]->shape[d++];
        continue;
      }
      for (int e = 0; e < ne; e++, d++)
        if (in[i]->shape[d] != 1) ell[*nell - ne + e] = in[i]->shape[d];
    }
  }
}

/* Lays out the loop axes and each operand's strides along them. */
static void einsum_loop(const EinsumSpec *s, RtTensor *const *in, EinsumLoop *lp) {
  int64_t size[EINSUM_ELLIPSIS], ell[TENSOR_MAX_RANK];
  int nell, axis_of[EINSUM_ELLIPSIS], n = 0;
  einsum_extents(s, in, size, &nell, ell);
  for (int id = 0; id < EINSUM_ELLIPSIS; id++) axis_of[id] = -1;
  int ell_at = 0;
  for (int j = 0; j < s->out.n; j++) {
    int id = s->out.lab[j];
    if (id == EINSUM_ELLIPSIS) {
      ell_at = n;
      for (int e = 0; e < nell; e++) lp->ext[n++] = ell[e];
    } else {
      axis_of[id] = n, lp->ext[n++] = size[id];
    }
  }
  lp->nout = n;
  for (int i = 0; i < s->nin; i++)
    for (int j = 0; j < s->in[i].n; j++) {
      int id = s->in[i].lab[j];
      if (id != EINSUM_ELLIPSIS && axis_of[id] < 0) axis_of[id] = n, lp->ext[n++] = size[id];
    }
  lp->nall = n;
  for (int i = 0; i < s->nin; i++) {
    int64_t xst[TENSOR_MAX_RANK];
    int ne = einsum_ellipsis_dims(s, i, in[i]->ndim), d = 0;
    kernel_strides(in[i]->ndim, in[i]->shape, xst);
    memset(lp->st[i], 0, sizeof lp->st[i]);
    for (int j = 0; j < s->in[i].n; j++) {
      int id = s->in[i].lab[j];
      if (id != EINSUM_ELLIPSIS) {
        lp->st[i][axis_of[id]] += xst[d++]; /* a repeated label walks the diagonal */
        continue;
      }
      for (int e = 0; e < ne; e++, d++)
        if (in[i]->shape[d] != 1) lp->st[i][ell_at + nell - ne + e] = xst[d];
    }
  }
}

/* One output element: the sum over the summed axes of the products. */
static LaneVal einsum_sum(const EinsumLoop *lp, int nin, const LaneVal *const *x, bool fl,
                          const int64_t *base) {
  int64_t idx[2 * TENSOR_MAX_RANK + EINSUM_ELLIPSIS] = {0}, off[EINSUM_MAX_IN];
  LaneVal acc = {0};
  for (int i = 0; i < nin; i++) off[i] = base[i];
  for (int a = lp->nout; a < lp->nall; a++)
    if (lp->ext[a] == 0) return acc;
  for (;;) {
    LaneVal p = x[0][off[0]];
    for (int i = 1; i < nin; i++) {
      if (fl)
        p.d *= x[i][off[i]].d;
      else
        p.u *= x[i][off[i]].u;
    }
    if (fl)
      acc.d += p.d;
    else
      acc.u += p.u;
    int a = lp->nall - 1;
    for (; a >= lp->nout; a--) {
      for (int i = 0; i < nin; i++) off[i] += lp->st[i][a];
      if (++idx[a] < lp->ext[a]) break;
      for (int i = 0; i < nin; i++) off[i] -= lp->st[i][a] * lp->ext[a];
      idx[a] = 0;
    }
    if (a < lp->nout) return acc;
  }
}

/* The equation parsed again, the loop space laid out, and every output
 * element summed over the summed labels. */
static bool k_einsum(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  const char *eq = kattr_str(kx, attrs, "equation");
  if (!kernel_attrs_ok(kx)) return false;
  int ranks[EINSUM_MAX_IN];
  for (int i = 0; i < nin && i < EINSUM_MAX_IN; i++) ranks[i] = in[i]->ndim;
  EinsumSpec s;
  char err[256];
  if (nin > EINSUM_MAX_IN || !einsum_parse(eq, nin, ranks, &s, err, sizeof err))
    return kernel_fail(kx, "einsum: %s", err);
  EinsumLoop lp;
  einsum_loop(&s, in, &lp);
  bool fl = dtype_is_float(in[0]->dtype);
  Lane l = fl ? LANE_F64 : LANE_U64;
  const LaneVal *x[EINSUM_MAX_IN];
  LaneVal *r = kernel_alloc(kx, sizeof(LaneVal) * (size_t)(out[0]->numel ? out[0]->numel : 1));
  bool ok = r != NULL;
  for (int i = 0; i < nin; i++) {
    x[i] = ok ? lane_array(kx, in[i], l) : NULL;
    ok = ok && x[i];
  }
  int64_t oi[2 * TENSOR_MAX_RANK + EINSUM_ELLIPSIS] = {0};
  for (int64_t o = 0; ok && o < out[0]->numel; o++) {
    int64_t base[EINSUM_MAX_IN] = {0};
    for (int i = 0; i < nin; i++)
      for (int a = 0; a < lp.nout; a++) base[i] += oi[a] * lp.st[i][a];
    r[o] = einsum_sum(&lp, nin, x, fl, base);
    for (int a = lp.nout - 1; a >= 0 && ++oi[a] == lp.ext[a]; a--) oi[a] = 0;
  }
  if (ok) lane_store(l, out[0]->dtype, r, out[0]->data, 0, out[0]->numel);
  for (int i = 0; i < nin; i++) free((void *)x[i]);
  free(r);
  return ok;
}

/* ─────────────────────────── tfidf_vectorizer ─────────────────────────── */

enum { TFIDF_MAX = 1024 };

typedef struct TfIdf {
  int64_t lo, hi, skip, out;
  int np, nc, ni;
  int64_t pool[TFIDF_MAX], counts[TFIDF_MAX], ix[TFIDF_MAX];
  double w[TFIDF_MAX];
  int nw, mode; /* 0 TF, 1 IDF, 2 TFIDF */
} TfIdf;

/* The output index of the gram of n tokens at t (step d), or -1. */
static int64_t gram_index(const TfIdf *f, const int64_t *t, int64_t d, int64_t n) {
  int64_t start = f->counts[n - 1], end = n < f->nc ? f->counts[n] : f->np, ord = 0;
  for (int64_t i = 0; i + 1 < n; i++) ord += (f->counts[i + 1] - f->counts[i]) / (i + 1);
  for (int64_t g = start; g + n <= end; g += n, ord++) {
    int64_t k = 0;
    while (k < n && f->pool[g + k] == t[k * d]) k++;
    if (k == n) return f->ix[ord];
  }
  return -1;
}

static void tfidf_row(const TfIdf *f, const int64_t *t, int64_t len, double *cnt) {
  int64_t lo = f->lo;
  for (int64_t d = 1; d <= f->skip + 1 && lo <= f->hi; d++) {
    for (int64_t s = 0; s < len; s++)
      for (int64_t n = lo; n <= f->hi && s + (n - 1) * d < len; n++) {
        int64_t k = gram_index(f, t + s, d, n);
        if (k >= 0) cnt[k] += 1;
      }
    if (lo == 1) lo = 2;
  }
}

static bool tfidf_spec(KernelCtx *kx, const Attrs *attrs, TfIdf *f) {
  f->lo = kattr_int(kx, attrs, "min_gram_length"), f->hi = kattr_int(kx, attrs, "max_gram_length");
  f->skip = kattr_int(kx, attrs, "max_skip_count");
  const char *m = kattr_str(kx, attrs, "mode");
  f->mode = !strcmp(m, "TF") ? 0 : !strcmp(m, "IDF") ? 1 : 2;
  f->np = kattr_ints(kx, attrs, "pool_int64s", f->pool, TFIDF_MAX);
  f->nc = kattr_ints(kx, attrs, "ngram_counts", f->counts, TFIDF_MAX);
  f->ni = kattr_ints(kx, attrs, "ngram_indexes", f->ix, TFIDF_MAX);
  f->nw = image_attr_floats(&kx->rel, attrs, "weights", f->w, TFIDF_MAX);
  return kernel_attrs_ok(kx) && f->nw >= 0;
}

static bool k_tfidf(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  TfIdf *f = calloc(1, sizeof *f);
  int64_t *t = f && tfidf_spec(kx, attrs, f) ? lane_array(kx, in[0], LANE_I64) : NULL;
  int64_t rows = in[0]->ndim == 2 ? in[0]->shape[0] : 1, len = in[0]->shape[in[0]->ndim - 1];
  int64_t no = out[0]->shape[out[0]->ndim - 1];
  double *cnt = t ? calloc((size_t)(rows * no + 1), sizeof *cnt) : NULL;
  for (int64_t r = 0; cnt && r < rows; r++) tfidf_row(f, t + r * len, len, cnt + r * no);
  for (int64_t i = 0; cnt && i < rows * no; i++) {
    double w = f->nw > i % no ? f->w[i % no] : 1.0;
    cnt[i] = f->mode == 0 ? cnt[i] : f->mode == 1 ? (cnt[i] > 0 ? w : 0) : cnt[i] * w;
  }
  if (cnt) lane_store(LANE_F64, out[0]->dtype, cnt, out[0]->data, 0, out[0]->numel);
  bool ok = cnt != NULL;
  free(f), free(t), free(cnt);
  return ok || (kx->err[0] ? false : kernel_fail(kx, "%s: out of memory", kx->op));
}

const KernelDef kernels_family_algorithm[] = {
    {"argsort", k_argsort},           {"sort", k_sort},     {"topk", k_topk},
    {"searchsorted", k_searchsorted}, {"unique", k_unique}, {"einsum", k_einsum},
    {"tfidf_vectorizer", k_tfidf},    {NULL, NULL},
};
