/* kernels_reduce.c — reference kernels of the reduction family: sum, mean,
 * prod, max, min, argmax, argmin, all, any, logsumexp, variance, std,
 * mean_variance over a set of axes (axis=None: all; exclude=True: the axes
 * not listed; keepdims), and the scans cumsum, cumprod.
 *
 * For each output element the reduced elements are gathered (in row-major
 * order of the reduced axes) into a lane buffer and reduced there.
 *
 * Precision and semantics:
 * - float sums (sum, mean, logsumexp) accumulate in double (compensated for
 *   float64), so they are at least as accurate as numpy's pairwise float32
 *   sums; they agree with numpy within a few ulps of sum(|x|), not bit for
 *   bit.  prod accumulates in double too.
 * - integer sum/prod wrap in the tensor's dtype (TVM accumulates in the
 *   dtype; numpy with dtype=x.dtype does the same).  mean of integers is
 *   that wrapped sum divided by the element count, truncated (TVM's int
 *   divide; TVM also makes the count a constant of the dtype, which wraps
 *   for int8 — we use the true count).
 * - max/min propagate NaN and order -0 below +0 (kernel_fmax); argmax/argmin return the first NaN's
 * index when there is one, else the first extreme (the last with select_last_index=True); indices
 * count in the flattened reduced axes.
 * - max/min/argmax/argmin over an empty axis are errors (numpy's too); the
 *   sum of nothing is 0, the product 1, the float mean NaN.
 * - all/any test x != 0 (NaN is true) and give 0 or 1 in the dtype.
 * - variance of floats: the mean (given as the second argument, broadcast
 *   to the data, or computed) and then the sum of (x - mean)^2, both in
 *   double and in order, divided by max(n - unbiased, 0) as numpy's ddof
 *   (nothing left gives NaN); std is its square root, mean_variance the
 *   pair.  Of integers, as TVM computes them: the truncated mean, then
 *   differences, squares and their sum wrapping in the dtype, divided with
 *   truncation (a zero count is an error); std converts the square root
 *   back with the cast rules.
 * - cumsum/cumprod convert the data to the result dtype (the cast rules)
 *   and accumulate in order in that dtype: float16 rounded at each step as
 *   numpy does, integers wrapping, bool as a running or / and; so they
 *   agree with numpy's cumsum(x, dtype=...) bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

typedef enum RedOp {
  R_SUM,
  R_MEAN,
  R_PROD,
  R_MAX,
  R_MIN,
  R_ARGMAX,
  R_ARGMIN,
  R_ALL,
  R_ANY,
  R_LSE
} RedOp;

/* The iteration: kept axes (output order) and reduced axes of the input. */
typedef struct RedPlan {
  int nk, nr;
  int64_t kshape[TENSOR_MAX_RANK], kstride[TENSOR_MAX_RANK];
  int64_t rshape[TENSOR_MAX_RANK], rstride[TENSOR_MAX_RANK];
  int64_t kn, rn; /* output elements, elements per reduction */
} RedPlan;

/* The reduced axes; `exclude`: whether the op has that attribute
 * (logsumexp has not). */
static bool reduced_axes(KernelCtx *kx, const Attrs *attrs, int ndim, bool *red, bool exclude) {
  bool all = kattr_is_none(kx, attrs, "axis");
  for (int i = 0; i < ndim; i++) red[i] = all;
  if (all) return kernel_attrs_ok(kx);
  int64_t ax[TENSOR_MAX_RANK];
  int n = kattr_ints(kx, attrs, "axis", ax, TENSOR_MAX_RANK);
  if (!kernel_attrs_ok(kx)) return false;
  for (int i = 0; i < n; i++) {
    int a = kernel_axis(kx, ax[i], ndim);
    if (a < 0) return false;
    if (red[a]) return kernel_fail(kx, "%s: axis %d is listed twice", kx->op, a);
    red[a] = true;
  }
  if (exclude && kattr_bool(kx, attrs, "exclude"))
    for (int i = 0; i < ndim; i++) red[i] = !red[i];
  return kernel_attrs_ok(kx);
}

static bool make_plan(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RedPlan *p,
                      bool exclude) {
  bool red[TENSOR_MAX_RANK];
  if (!reduced_axes(kx, attrs, x->ndim, red, exclude)) return false;
  int64_t st[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  p->nk = p->nr = 0, p->kn = p->rn = 1;
  for (int i = 0; i < x->ndim; i++) {
    if (red[i])
      p->rshape[p->nr] = x->shape[i], p->rstride[p->nr++] = st[i], p->rn *= x->shape[i];
    else
      p->kshape[p->nk] = x->shape[i], p->kstride[p->nk++] = st[i], p->kn *= x->shape[i];
  }
  return true;
}

/* Loads the p->rn reduced elements starting at input element `base`. */
static void gather(const RtTensor *x, Lane l, const RedPlan *p, int64_t base, void *dst) {
  if (p->nr == 0) {
    lane_load(l, x->dtype, x->data, base, 1, 1, dst);
    return;
  }
  int64_t idx[TENSOR_MAX_RANK] = {0}, off = base, row = p->rshape[p->nr - 1];
  char *d = dst;
  if (row == 0) return;
  for (int64_t done = 0; done < p->rn; done += row) {
    lane_load(l, x->dtype, x->data, off, p->rstride[p->nr - 1], row, d);
    d += (size_t)row * lane_bytes(l);
    for (int i = p->nr - 2; i >= 0; i--) {
      off += p->rstride[i];
      if (++idx[i] < p->rshape[i]) break;
      off -= p->rstride[i] * p->rshape[i], idx[i] = 0;
    }
  }
}

/* Index of the extreme element; NaN wins (the first one, or the last when
 * `last`); ties go to the first (or last). */
#define DEF_ARG_FLOAT(T)                                                       \
  static int64_t argext_##T(const T *x, int64_t n, bool want_max, bool last) { \
    int64_t b = 0;                                                             \
    for (int64_t i = 1; i < n; i++) {                                          \
      T v = x[i], bv = x[b];                                                   \
      if (isnan(v)) {                                                          \
        if (!isnan(bv) || last) b = i;                                         \
      } else if (!isnan(bv)) {                                                 \
        if (want_max ? v > bv : v < bv)                                        \
          b = i;                                                               \
        else if (last && v == bv)                                              \
          b = i;                                                               \
      }                                                                        \
    }                                                                          \
    return b;                                                                  \
  }
DEF_ARG_FLOAT(float)
DEF_ARG_FLOAT(double)

#define DEF_ARG_INT(T)                                                         \
  static int64_t argext_##T(const T *x, int64_t n, bool want_max, bool last) { \
    int64_t b = 0;                                                             \
    for (int64_t i = 1; i < n; i++) {                                          \
      if (want_max ? x[i] > x[b] : x[i] < x[b])                                \
        b = i;                                                                 \
      else if (last && x[i] == x[b])                                           \
        b = i;                                                                 \
    }                                                                          \
    return b;                                                                  \
  }
DEF_ARG_INT(int64_t)
DEF_ARG_INT(uint64_t)

/* Sum of doubles with Neumaier's compensation. */
static double sum_comp(const double *x, int64_t n) {
  double s = 0, c = 0;
  for (int64_t i = 0; i < n; i++) {
    double t = s + x[i];
    c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
    s = t;
  }
  return s + c;
}

static double sum_floats(const float *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i];
  return s;
}

/* log(sum(exp(x - max))) + max, with max = the largest (NaN propagates). */
#define DEF_LSE(T, SFX)                                                           \
  static T lse_##T(const T *x, int64_t n) {                                       \
    T m = -INFINITY;                                                              \
    for (int64_t i = 0; i < n; i++)                                               \
      if (x[i] > m || isnan(x[i])) m = x[i];                                      \
    if (isnan(m) || isinf(m)) return m; /* NaN, +inf, or all -inf (or nothing) */ \
    double s = 0;                                                                 \
    for (int64_t i = 0; i < n; i++) s += exp((double)x[i] - (double)m);           \
    return (T)(log(s) + (double)m);                                               \
  }
DEF_LSE(float, f)
DEF_LSE(double, )

/* One reduction of n float-lane values into *r (lane T) or *ix (an index). */
#define DEF_RED_FLOAT(T, SUM)                                                          \
  static void red_##T(RedOp op, const T *x, int64_t n, bool last, T *r, int64_t *ix) { \
    switch (op) {                                                                      \
      case R_SUM:                                                                      \
        *r = (T)SUM;                                                                   \
        break;                                                                         \
      case R_MEAN:                                                                     \
        *r = (T)(SUM / (double)n);                                                     \
        break;                                                                         \
      case R_PROD: {                                                                   \
        double p = 1;                                                                  \
        for (int64_t i = 0; i < n; i++) p *= x[i];                                     \
        *r = (T)p;                                                                     \
      } break;                                                                         \
      case R_MAX:                                                                      \
      case R_MIN: {                                                                    \
        T m = x[0];                                                                    \
        for (int64_t i = 1; i < n; i++)                                                \
          m = (T)(op == R_MAX ? kernel_fmax(m, x[i]) : kernel_fmin(m, x[i]));          \
        *r = m;                                                                        \
      } break;                                                                         \
      case R_ARGMAX:                                                                   \
        *ix = argext_##T(x, n, true, last);                                            \
        break;                                                                         \
      case R_ARGMIN:                                                                   \
        *ix = argext_##T(x, n, false, last);                                           \
        break;                                                                         \
      case R_ALL: {                                                                    \
        T v = 1;                                                                       \
        for (int64_t i = 0; i < n && v; i++) v = x[i] != 0;                            \
        *r = v;                                                                        \
      } break;                                                                         \
      case R_ANY: {                                                                    \
        T v = 0;                                                                       \
        for (int64_t i = 0; i < n && !v; i++) v = x[i] != 0;                           \
        *r = v;                                                                        \
      } break;                                                                         \
      case R_LSE:                                                                      \
        *r = lse_##T(x, n);                                                            \
        break;                                                                         \
    }                                                                                  \
  }
DEF_RED_FLOAT(float, sum_floats(x, n))
DEF_RED_FLOAT(double, sum_comp(x, n))

/* Integer lanes; U is the lane type.  Sums and products wrap (narrowed to
 * the dtype by the caller before mean divides). */
#define DEF_RED_INT(U)                                                                 \
  static void red_##U(RedOp op, const U *x, int64_t n, bool last, U *r, int64_t *ix) { \
    uint64_t a;                                                                        \
    switch (op) {                                                                      \
      case R_SUM:                                                                      \
      case R_MEAN:                                                                     \
        a = 0;                                                                         \
        for (int64_t i = 0; i < n; i++) a += (uint64_t)x[i];                           \
        *r = (U)a;                                                                     \
        break;                                                                         \
      case R_PROD:                                                                     \
        a = 1;                                                                         \
        for (int64_t i = 0; i < n; i++) a *= (uint64_t)x[i];                           \
        *r = (U)a;                                                                     \
        break;                                                                         \
      case R_MAX:                                                                      \
        *r = x[argext_##U(x, n, true, false)];                                         \
        break;                                                                         \
      case R_MIN:                                                                      \
        *r = x[argext_##U(x, n, false, false)];                                        \
        break;                                                                         \
      case R_ARGMAX:                                                                   \
        *ix = argext_##U(x, n, true, last);                                            \
        break;                                                                         \
      case R_ARGMIN:                                                                   \
        *ix = argext_##U(x, n, false, last);                                           \
        break;                                                                         \
      case R_ALL:                                                                      \
        *r = 1;                                                                        \
        for (int64_t i = 0; i < n; i++) *r = *r && x[i] != 0;                          \
        break;                                                                         \
      case R_ANY:                                                                      \
        *r = 0;                                                                        \
        for (int64_t i = 0; i < n; i++) *r = *r || x[i] != 0;                          \
        break;                                                                         \
      case R_LSE:                                                                      \
        break; /* computed in double by the caller */                                  \
    }                                                                                  \
  }
DEF_RED_INT(int64_t)
DEF_RED_INT(uint64_t)

static bool is_arg(RedOp op) { return op == R_ARGMAX || op == R_ARGMIN; }

/* Narrows an integer mean's wrapped sum to the dtype, then divides. */
static void int_mean(Lane l, DType dt, void *r, int64_t n) {
  uint64_t tmp[1];
  lane_store(l, dt, r, tmp, 0, 1);
  lane_load(l, dt, tmp, 0, 1, 1, r);
  if (l == LANE_I64)
    *(int64_t *)r /= n;
  else
    *(uint64_t *)r /= (uint64_t)n;
}

static void reduce_one(RedOp op, Lane l, DType dt, const void *x, int64_t n, bool last, void *r) {
  int64_t ix = 0;
  switch (l) {
    case LANE_F32:
      red_float(op, x, n, last, r, &ix);
      break;
    case LANE_F64:
      red_double(op, x, n, last, r, &ix);
      break;
    case LANE_I64:
      red_int64_t(op, x, n, last, r, &ix);
      break;
    case LANE_U64:
      red_uint64_t(op, x, n, last, r, &ix);
      break;
  }
  if (is_arg(op))
    *(int64_t *)r = ix;
  else if (op == R_MEAN && (l == LANE_I64 || l == LANE_U64))
    int_mean(l, dt, r, n);
}

static bool check_empty(KernelCtx *kx, RedOp op, const RedPlan *p, DType dt) {
  if (p->rn > 0 || p->kn == 0) return true;
  if (op == R_MAX || op == R_MIN || is_arg(op))
    return kernel_fail(kx, "%s: reduction over an empty axis has no result", kx->op);
  if (op == R_MEAN && !dtype_is_float(dt))
    return kernel_fail(kx, "%s: integer division by zero (empty reduction)", kx->op);
  return true;
}

/* The next kept index: `base` (the input element the reduced elements
 * start at) moves by one output position. */
static void next_kept(const RedPlan *p, int64_t *idx, int64_t *base) {
  for (int i = p->nk - 1; i >= 0; i--) {
    *base += p->kstride[i];
    if (++idx[i] < p->kshape[i]) break;
    *base -= p->kstride[i] * p->kshape[i], idx[i] = 0;
  }
}

/* A reduction: for each kept index the reduced elements are gathered into
 * one contiguous buffer and reduced there.  logsumexp of integers runs in
 * double; argmin/argmax produce int64 indices. */
static bool run_reduce(KernelCtx *kx, RedOp op, const RtTensor *x, const Attrs *attrs,
                       RtTensor *out) {
  RedPlan p;
  if (!make_plan(kx, x, attrs, &p, op != R_LSE) || !check_empty(kx, op, &p, x->dtype)) return false;
  bool last = is_arg(op) && kattr_bool(kx, attrs, "select_last_index");
  if (!kernel_attrs_ok(kx)) return false;
  Lane l = kernel_lane(x->dtype);
  if (op == R_LSE && (l == LANE_I64 || l == LANE_U64)) l = LANE_F64;
  Lane ol = is_arg(op) ? LANE_I64 : l;
  char *buf = kernel_alloc(kx, (size_t)(p.rn ? p.rn : 1) * lane_bytes(l));
  char *res = kernel_alloc(kx, (size_t)(p.kn ? p.kn : 1) * 8);
  if (!buf || !res) return free(buf), free(res), false;
  int64_t idx[TENSOR_MAX_RANK] = {0}, base = 0;
  for (int64_t o = 0; o < p.kn; o++) {
    gather(x, l, &p, base, buf);
    reduce_one(op, l, x->dtype, buf, p.rn, last, res + (size_t)o * lane_bytes(ol));
    next_kept(&p, idx, &base);
  }
  lane_store(ol, out->dtype, res, out->data, 0, p.kn);
  free(buf), free(res);
  return true;
}

#define REDUCE_OPS(X)   \
  X(R_SUM, "sum")       \
  X(R_MEAN, "mean")     \
  X(R_PROD, "prod")     \
  X(R_MAX, "max")       \
  X(R_MIN, "min")       \
  X(R_ARGMAX, "argmax") \
  X(R_ARGMIN, "argmin") \
  X(R_ALL, "all")       \
  X(R_ANY, "any")       \
  X(R_LSE, "logsumexp")

#define X(e, n)                                                                                \
  static bool k_##e(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout, \
                    RtTensor *const *out) {                                                    \
    return run_reduce(kx, e, in[0], attrs, out[0]);                                            \
  }
REDUCE_OPS(X)
#undef X

/* ───────────────────── variance, std, mean_variance ───────────────────── */

typedef enum VarOut { V_VAR, V_STD, V_BOTH } VarOut;

/* The data's shape filled with the mean argument broadcast to it (its dims
 * are 1 or the data's, as the relation checked), or NULL after kernel_fail. */
static RtTensor *expand_mean(KernelCtx *kx, const RtTensor *x, const RtTensor *m) {
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(m->ndim, m->shape, st);
  for (int d = 0; d < x->ndim; d++) istr[d] = m->shape[d] == 1 ? 0 : st[d];
  RtTensor *e = rt_tensor_new(m->dtype, x->ndim, x->shape, kx->err, sizeof kx->err);
  if (e) kernel_view_copy(m, 0, istr, e);
  return e;
}

/* One float variance over n gathered doubles; mu: the given means (one per
 * element) or NULL to compute the mean.  *mean gets the mean used. */
static double var_float(const double *x, const double *mu, int64_t n, int64_t ddof, double *mean) {
  double s = 0, ss = 0;
  for (int64_t i = 0; i < n && !mu; i++) s += x[i];
  double m = mu ? 0 : s / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double d = x[i] - (mu ? mu[i] : m);
    ss += d * d;
  }
  *mean = m;
  int64_t count = n - ddof > 0 ? n - ddof : 0;
  return ss / (double)count;
}

/* One integer variance, wrapping in dtype dt as TVM computes it (lane
 * values: int64 for signed dtypes, uint64 bits for unsigned); false when
 * the count or the element count for the mean is 0. */
static bool var_int(DType dt, bool is_signed, const int64_t *x, const int64_t *mu, int64_t n,
                    int64_t ddof, int64_t *var, int64_t *mean) {
  int64_t count = n - ddof > 0 ? n - ddof : 0;
  if ((!mu && n == 0) || count == 0) return false;
  uint64_t s = 0, ss = 0;
  for (int64_t i = 0; i < n && !mu; i++) s += (uint64_t)x[i];
  int64_t sw = dtype_wrap_int(dt, (int64_t)s);
  int64_t m = mu ? 0 : is_signed ? sw / n : (int64_t)((uint64_t)sw / (uint64_t)n);
  for (int64_t i = 0; i < n; i++) {
    int64_t d = dtype_wrap_int(dt, (int64_t)((uint64_t)x[i] - (uint64_t)(mu ? mu[i] : m)));
    ss += (uint64_t)dtype_wrap_int(dt, (int64_t)((uint64_t)d * (uint64_t)d));
  }
  int64_t w = dtype_wrap_int(dt, (int64_t)ss);
  *var = is_signed ? w / count : (int64_t)((uint64_t)w / (uint64_t)count);
  *mean = m;
  return true;
}

/* The variance of one output position into res (lane F64 for floats, the
 * integer lane otherwise) and its mean into mres, from gathered elements
 * buf and gathered means mbuf (NULL: computed). */
static bool var_one(KernelCtx *kx, DType dt, Lane l, const void *buf, const void *mbuf, int64_t n,
                    int64_t ddof, VarOut what, void *res, void *mres) {
  if (l == LANE_F64) {
    double v = var_float(buf, mbuf, n, ddof, mres);
    *(double *)res = what == V_STD ? sqrt(v) : v;
    return true;
  }
  int64_t v, m;
  if (!var_int(dt, l == LANE_I64, buf, mbuf, n, ddof, &v, &m))
    return kernel_fail(kx, "%s: integer division by zero (%lld elements%s)", kx->op, (long long)n,
                       ddof ? ", unbiased" : "");
  *(int64_t *)mres = m;
  if (what == V_STD) /* in double, stored back with the cast rules */
    *(double *)res = sqrt(l == LANE_I64 ? (double)v : (double)(uint64_t)v);
  else
    *(int64_t *)res = v;
  return true;
}

/* Buffers of the variance kernels (freed together). */
typedef struct VarBufs {
  void *buf, *mbuf, *res, *mres;
  RtTensor *em;
} VarBufs;

static void var_bufs_free(VarBufs *b) {
  free(b->buf), free(b->mbuf), free(b->res), free(b->mres);
  rt_tensor_release(b->em);
}

/* variance, std and mean_variance: per output position the elements (and
 * the given means, expanded to the data's shape) are gathered as lanes,
 * floats in double; results are stored with the cast rules. */
static bool run_variance(KernelCtx *kx, VarOut what, int nin, RtTensor *const *in,
                         const Attrs *attrs, RtTensor *const *out) {
  const RtTensor *x = in[0];
  RedPlan p;
  bool unbiased = kattr_bool(kx, attrs, "unbiased");
  if (!kernel_attrs_ok(kx) || !make_plan(kx, x, attrs, &p, true)) return false;
  Lane l = dtype_is_float(x->dtype) ? LANE_F64 : kernel_lane(x->dtype);
  VarBufs b = {0};
  size_t rn = (size_t)(p.rn ? p.rn : 1), kn = (size_t)(p.kn ? p.kn : 1);
  b.buf = kernel_alloc(kx, rn * 8), b.res = kernel_alloc(kx, kn * 8);
  b.mres = kernel_alloc(kx, kn * 8);
  if (nin == 2 && b.buf && (b.em = expand_mean(kx, x, in[1]))) b.mbuf = kernel_alloc(kx, rn * 8);
  bool ok = b.buf && b.res && b.mres && (nin < 2 || b.mbuf);
  int64_t idx[TENSOR_MAX_RANK] = {0}, base = 0;
  for (int64_t o = 0; ok && o < p.kn; o++) {
    gather(x, l, &p, base, b.buf);
    if (b.em) gather(b.em, l, &p, base, b.mbuf);
    ok = var_one(kx, x->dtype, l, b.buf, b.mbuf, p.rn, unbiased, what, (char *)b.res + o * 8,
                 (char *)b.mres + o * 8);
    next_kept(&p, idx, &base);
  }
  if (ok) {
    Lane rl = what == V_STD ? LANE_F64 : l;
    lane_store(rl, out[what == V_BOTH]->dtype, b.res, out[what == V_BOTH]->data, 0, p.kn);
    if (what == V_BOTH) lane_store(l, out[0]->dtype, b.mres, out[0]->data, 0, p.kn);
  }
  var_bufs_free(&b);
  return ok;
}

static bool k_variance(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return run_variance(kx, V_VAR, nin, in, attrs, out);
}
static bool k_std(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                  RtTensor *const *out) {
  return run_variance(kx, V_STD, nin, in, attrs, out);
}
static bool k_mean_variance(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  return run_variance(kx, V_BOTH, nin, in, attrs, out);
}

/* ───────────────────────────── cumsum, cumprod ───────────────────────────── */

/* A float16 or bfloat16 (dt) value computed in float, rounded to dt as
 * numpy rounds each step of a float16 accumulation; other dtypes as they are. */
static float narrow_step(float v, DType dt) {
  if (dt == DT_FLOAT16) return half_to_float(rt_double_to_half((double)v));
  return dt == DT_BFLOAT16 ? bf16_to_float(float_to_bf16(v)) : v;
}

/* The running sums or products of n elements at x[0], x[step], ...: into r
 * at the same positions; exclusive: element i combines those before i. */
#define DEF_SCAN(T)                                                                     \
  static void scan_##T(const T *x, T *r, int64_t n, int64_t step, bool prod, bool excl, \
                       DType nd) {                                                      \
    T acc = prod;                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                   \
      T v = x[i * step], next = prod ? (T)(acc * v) : (T)(acc + v);                     \
      if (nd != DT_INVALID) next = (T)narrow_step((float)next, nd);                     \
      r[i * step] = excl ? acc : next;                                                  \
      acc = next;                                                                       \
    }                                                                                   \
  }
DEF_SCAN(float)
DEF_SCAN(double)
DEF_SCAN(uint64_t)

/* The data converted to the result dtype (the cast rules), as a lane array. */
static void *scan_input(KernelCtx *kx, const RtTensor *x, DType dt, Lane l) {
  if (x->dtype == dt) return lane_array(kx, x, l);
  RtTensor *c = rt_tensor_new(dt, x->ndim, x->shape, kx->err, sizeof kx->err);
  if (!c) return NULL;
  Lane xl = kernel_lane(x->dtype);
  LaneBlock blk;
  for (int64_t j = 0; j < x->numel; j += KBLK) {
    int64_t m = x->numel - j < KBLK ? x->numel - j : KBLK;
    lane_load(xl, x->dtype, x->data, j, 1, m, &blk);
    lane_store(xl, dt, &blk, c->data, j, m);
  }
  void *a = lane_array(kx, c, l);
  rt_tensor_release(c);
  return a;
}

/* cumsum/cumprod: the data as (outer, len, inner) around the scanned axis
 * (axis None: the flattened data, one row), each line scanned in order.
 * Signed integers run in the unsigned lane: sums and products wrap alike. */
static bool run_scan(KernelCtx *kx, bool prod, const RtTensor *x, const Attrs *attrs,
                     RtTensor *out) {
  bool excl = kattr_bool(kx, attrs, "exclusive"), flat = kattr_is_none(kx, attrs, "axis");
  int64_t axis = flat ? 0 : kattr_int(kx, attrs, "axis");
  if (!kernel_attrs_ok(kx)) return false;
  int a = flat ? 0 : kernel_axis(kx, axis, x->ndim);
  if (a < 0) return false;
  int64_t outer = 1, len = flat ? x->numel : x->shape[a], inner = 1;
  for (int d = 0; !flat && d < x->ndim; d++)
    if (d < a)
      outer *= x->shape[d];
    else if (d > a)
      inner *= x->shape[d];
  DType dt = out->dtype;
  Lane l = kernel_lane(dt) == LANE_I64 ? LANE_U64 : kernel_lane(dt);
  void *v = scan_input(kx, x, dt, l), *r = kernel_alloc(kx, (size_t)(x->numel ? x->numel : 1) * 8);
  if (!v || !r) return free(v), free(r), false;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t at = o * len * inner + i;
      if (l == LANE_F32)
        scan_float((float *)v + at, (float *)r + at, len, inner, prod, excl, dt);
      else if (l == LANE_F64)
        scan_double((double *)v + at, (double *)r + at, len, inner, prod, excl, DT_INVALID);
      else
        scan_uint64_t((uint64_t *)v + at, (uint64_t *)r + at, len, inner, prod, excl, DT_INVALID);
    }
  lane_store(l, dt, r, out->data, 0, x->numel);
  free(v), free(r);
  return true;
}

static bool k_cumsum(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  return run_scan(kx, false, in[0], attrs, out[0]);
}
static bool k_cumprod(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  return run_scan(kx, true, in[0], attrs, out[0]);
}

const KernelDef kernels_family_reduce[] = {
#define X(e, n) {n, k_##e},
    REDUCE_OPS(X)
#undef X
        {"variance", k_variance},
    {"std", k_std},
    {"mean_variance", k_mean_variance},
    {"cumsum", k_cumsum},
    {"cumprod", k_cumprod},
    {NULL, NULL},
};
