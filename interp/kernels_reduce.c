/* kernels_reduce.c — reference kernels of the reduction family: sum, mean,
 * prod, max, min, argmax, argmin, all, any, logsumexp over a set of axes
 * (axis=None: all; exclude=True: the axes not listed; keepdims).
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
 *   sum of nothing is 0, the product 1, the float mean NaN. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/kernels.h"

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

static bool reduced_axes(KernelCtx *kx, const Attrs *attrs, int ndim, bool *red) {
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
  if (kattr_bool(kx, attrs, "exclude"))
    for (int i = 0; i < ndim; i++) red[i] = !red[i];
  return kernel_attrs_ok(kx);
}

static bool make_plan(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RedPlan *p) {
  bool red[TENSOR_MAX_RANK];
  if (!reduced_axes(kx, attrs, x->ndim, red)) return false;
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

/* A reduction: for each kept index the reduced elements are gathered into
 * one contiguous buffer and reduced there.  logsumexp of integers runs in
 * double; argmin/argmax produce int64 indices. */
static bool run_reduce(KernelCtx *kx, RedOp op, const RtTensor *x, const Attrs *attrs,
                       RtTensor *out) {
  RedPlan p;
  if (!make_plan(kx, x, attrs, &p) || !check_empty(kx, op, &p, x->dtype)) return false;
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
    for (int i = p.nk - 1; i >= 0; i--) {
      base += p.kstride[i];
      if (++idx[i] < p.kshape[i]) break;
      base -= p.kstride[i] * p.kshape[i], idx[i] = 0;
    }
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

const KernelDef kernels_family_reduce[] = {
#define X(e, n) {n, k_##e},
    REDUCE_OPS(X)
#undef X
        {NULL, NULL},
};
