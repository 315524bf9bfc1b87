/* kernels_nn_pool.c — reference kernels of ops/nn_pool.c: max and average
 * pooling in 1-D, 2-D and 3-D, the global pools and the adaptive pools.
 *
 * Data of any layout is first copied into canonical order (P, D, H, W):
 * the axes the layout does not pool, in order, flattened into P planes,
 * then the pooled ones (missing dims of size 1); results are copied back
 * into the layout's order.  NCHW-like layouts need no copy.
 *
 * Windows follow TVM: padding is never a value (max ignores it; a window
 * with no input element gives the dtype's lowest finite value, TVM's pad
 * value), avg divides by the window's positions inside the input, or with
 * count_include_pad inside the padded input (positions past the end's
 * padding, made by ceil_mode, are never counted).  Max works in the dtype's
 * lane (exact; NaN wins, -0 < +0), averages sum in double or int64
 * (integer averages truncate). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/nn_int.h"

/* The dtype's lowest finite value in lane l. */
static LaneVal lowest_of(DType dt, Lane l) {
  LaneVal v;
  int bits = dtype_bytes(dt) * 8;
  if (l == LANE_I64)
    v.i = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  else if (l == LANE_U64)
    v.u = 0;
  else if (l == LANE_F32)
    v.f = dt == DT_FLOAT16 ? -65504.0f : dt == DT_BFLOAT16 ? -bf16_to_float(0x7f7f) : -FLT_MAX;
  else
    v.d = -DBL_MAX;
  return v;
}

/* ───────────────────────── canonical order ───────────────────────── */

typedef struct Canon {
  int ndim, S;
  int pos[NN_MAX_SPATIAL];   /* the pooled axes */
  int perm[TENSOR_MAX_RANK]; /* canonical axis i is axis perm[i] */
  bool identity;
  int64_t planes;
} Canon;

/* The permutation putting the pooled axes last (in D, H, W order). */
static void canon_init(Canon *c, int ndim, int S, const int *pos, const int64_t *shape) {
  c->ndim = ndim, c->S = S, c->planes = 1;
  int k = 0;
  for (int d = 0; d < ndim; d++) {
    bool pooled = false;
    for (int i = 0; i < S; i++) pooled |= pos[i] == d;
    if (!pooled) c->perm[k++] = d, c->planes *= shape[d];
  }
  for (int i = 0; i < S; i++) c->pos[i] = pos[i], c->perm[k++] = pos[i];
  c->identity = true;
  for (int d = 0; d < ndim; d++) c->identity &= c->perm[d] == d;
}

/* x's data in canonical order, as lane l (malloc'd). */
static void *canon_in(KernelCtx *kx, const Canon *c, const RtTensor *x, Lane l) {
  if (c->identity) return lane_array(kx, x, l);
  int64_t shape[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  for (int d = 0; d < x->ndim; d++) shape[d] = x->shape[c->perm[d]], istr[d] = st[c->perm[d]];
  RtTensor *t = rt_tensor_new(x->dtype, x->ndim, shape, kx->err, sizeof kx->err);
  if (!t) return NULL;
  kernel_view_copy(x, 0, istr, t);
  void *v = lane_array(kx, t, l);
  rt_tensor_release(t);
  return v;
}

/* Stores canonical lane data v into y (of the layout's order). */
static bool canon_out(KernelCtx *kx, const Canon *c, const void *v, Lane l, RtTensor *y) {
  if (c->identity) return lane_store(l, y->dtype, v, y->data, 0, y->numel), true;
  int64_t shape[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  for (int d = 0; d < y->ndim; d++) shape[d] = y->shape[c->perm[d]];
  RtTensor *t = rt_tensor_new(y->dtype, y->ndim, shape, kx->err, sizeof kx->err);
  if (!t) return false;
  lane_store(l, y->dtype, v, t->data, 0, t->numel);
  kernel_strides(y->ndim, shape, st);
  for (int d = 0; d < y->ndim; d++) istr[c->perm[d]] = st[d];
  kernel_view_copy(t, 0, istr, y);
  rt_tensor_release(t);
  return true;
}

/* ───────────────────────────── windows ───────────────────────────── */

/* Valid window taps along one dim: [lo, hi) of tap indices whose position
 * is inside the input; *span counts taps inside the padded input. */
static void taps(int64_t o, int64_t k, int64_t s, int64_t d, int64_t pad_lo, int64_t pad_hi,
                 int64_t size, int64_t *lo, int64_t *hi, int64_t *span) {
  int64_t start = o * s - pad_lo;
  *lo = 0, *hi = 0, *span = 0;
  bool first = true;
  for (int64_t t = 0; t < k; t++) {
    int64_t p = start + t * d;
    if (p < size + pad_hi) ++*span;
    if (p < 0 || p >= size) continue;
    if (first) *lo = t, first = false;
    *hi = t + 1;
  }
}

typedef struct Pool {
  NnWindow w;            /* lifted to 3 dims */
  int64_t in[3], out[3]; /* D, H, W */
  bool is_max, include_pad, adaptive;
} Pool;

/* The window of output o along dim i: taps [*lo, *hi), first position
 * *start, step *step, divisor part *span. */
static void window(const Pool *p, int i, int64_t o, int64_t *lo, int64_t *hi, int64_t *start,
                   int64_t *step, int64_t *span) {
  if (p->adaptive) { /* [floor(o n / m), ceil((o + 1) n / m)) */
    int64_t n = p->in[i], m = p->out[i];
    *start = o * n / m, *lo = 0, *step = 1;
    *hi = ((o + 1) * n + m - 1) / m - *start;
    *span = *hi;
    return;
  }
  const NnWindow *w = &p->w;
  taps(o, w->k[i], w->stride[i], w->dil[i], w->lo[i], w->hi[i], p->in[i], lo, hi, span);
  *start = o * w->stride[i] - w->lo[i], *step = w->dil[i];
}

/* One plane: T the lane type, LOWEST the empty window's max, MAX. */
#define POOL_PLANE(T, LOWEST, MAX)                                                              \
  {                                                                                             \
    const T *xp = (const T *)xl + plane * isz;                                                  \
    T *op = (T *)ol + plane * osz;                                                              \
    int64_t q = 0;                                                                              \
    for (int64_t od = 0; od < p->out[0]; od++) {                                                \
      int64_t a0, a1, as, ast, asp;                                                             \
      window(p, 0, od, &a0, &a1, &as, &ast, &asp);                                              \
      for (int64_t oh = 0; oh < p->out[1]; oh++) {                                              \
        int64_t b0, b1, bs, bst, bsp;                                                           \
        window(p, 1, oh, &b0, &b1, &bs, &bst, &bsp);                                            \
        for (int64_t ow = 0; ow < p->out[2]; ow++, q++) {                                       \
          int64_t c0, c1, cs, cst, csp, cnt = 0;                                                \
          window(p, 2, ow, &c0, &c1, &cs, &cst, &csp);                                          \
          T acc = 0;                                                                            \
          for (int64_t a = a0; a < a1; a++) {                                                   \
            int64_t z = as + a * ast;                                                           \
            for (int64_t b = b0; b < b1; b++) {                                                 \
              int64_t h = bs + b * bst;                                                         \
              for (int64_t e = c0; e < c1; e++) {                                               \
                int64_t x = cs + e * cst;                                                       \
                if (z < 0 || z >= p->in[0] || h < 0 || h >= p->in[1] || x < 0 || x >= p->in[2]) \
                  continue;                                                                     \
                T v = xp[(z * p->in[1] + h) * p->in[2] + x];                                    \
                cnt++;                                                                          \
                if (!p->is_max)                                                                 \
                  acc += v;                                                                     \
                else                                                                            \
                  acc = cnt == 1 ? v : MAX(acc, v);                                             \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
          if (p->is_max && cnt == 0) acc = LOWEST;                                              \
          if (!p->is_max) {                                                                     \
            int64_t div = p->include_pad ? asp * bsp * csp : cnt;                               \
            acc = div ? (T)(acc / (T)div) : 0;                                                  \
          }                                                                                     \
          op[q] = acc;                                                                          \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }

#define FMAX(a, b) kernel_fmax(a, b)
#define IMAX(a, b) ((b) > (a) ? (b) : (a))

/* Pools x (of canonical order c) into y, plane by plane. */
static bool pool_run(KernelCtx *kx, const Canon *c, const RtTensor *X, RtTensor *Y, const Pool *p) {
  Lane l = kernel_lane(X->dtype);
  if (!p->is_max) l = dtype_is_float(X->dtype) ? LANE_F64 : LANE_I64;
  LaneVal lowest = lowest_of(X->dtype, l);
  int64_t isz = p->in[0] * p->in[1] * p->in[2], osz = p->out[0] * p->out[1] * p->out[2];
  void *xl = canon_in(kx, c, X, l);
  void *ol = xl ? kernel_alloc(kx, (size_t)(Y->numel ? Y->numel : 1) * 8) : NULL;
  if (!ol) return free(xl), false;
  for (int64_t plane = 0; plane < c->planes; plane++) switch (l) {
      case LANE_F32:
        POOL_PLANE(float, lowest.f, FMAX) break;
      case LANE_F64:
        POOL_PLANE(double, lowest.d, FMAX) break;
      case LANE_I64:
        POOL_PLANE(int64_t, lowest.i, IMAX) break;
      case LANE_U64:
        POOL_PLANE(uint64_t, lowest.u, IMAX) break;
    }
  bool ok = canon_out(kx, c, ol, l, Y);
  free(xl), free(ol);
  return ok;
}

/* Sizes of the pooled dims lifted to 3 (D, H, W). */
static void pool_sizes(const Canon *c, const RtTensor *x, const RtTensor *y, Pool *p) {
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - c->S);
    p->in[i] = j < 0 ? 1 : x->shape[c->pos[j]];
    p->out[i] = j < 0 ? 1 : y->shape[c->pos[j]];
  }
}

/* Windowed pools: attributes through the relation's readers. */
static bool pool(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RtTensor *y, int S,
                 bool is_max) {
  Pool p = {.is_max = is_max};
  NnWindow w = {.S = S};
  int pos[NN_MAX_SPATIAL];
  if (nn_layout_attr(&kx->rel, attrs, "layout", &"DHW"[3 - S], pos) < 0 ||
      !nn_spatial_ints(&kx->rel, attrs, "pool_size", S, 1, w.k) ||
      !nn_window_attrs(&kx->rel, attrs, &w) || !kernel_attrs_ok(kx))
    return false;
  if (!is_max) p.include_pad = kattr_bool(kx, attrs, "count_include_pad");
  Canon c;
  canon_init(&c, x->ndim, S, pos, x->shape);
  p.w.S = 3;
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - S);
    p.w.k[i] = j < 0 ? 1 : w.k[j], p.w.stride[i] = j < 0 ? 1 : w.stride[j];
    p.w.dil[i] = j < 0 ? 1 : w.dil[j];
    p.w.lo[i] = j < 0 ? 0 : w.lo[j], p.w.hi[i] = j < 0 ? 0 : w.hi[j];
  }
  pool_sizes(&c, x, y, &p);
  return kernel_attrs_ok(kx) && pool_run(kx, &c, x, y, &p);
}

/* Adaptive and global pools (2-D). */
static bool adaptive(KernelCtx *kx, const RtTensor *x, const Attrs *attrs, RtTensor *y,
                     bool is_max) {
  Pool p = {.is_max = is_max, .adaptive = true};
  int pos[2];
  if (nn_layout_attr(&kx->rel, attrs, "layout", "HW", pos) < 0 || !kernel_attrs_ok(kx))
    return false;
  Canon c;
  canon_init(&c, x->ndim, 2, pos, x->shape);
  pool_sizes(&c, x, y, &p);
  return pool_run(kx, &c, x, y, &p);
}

#define POOL_KERNEL(name, S, is_max)                                                          \
  static bool name(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout, \
                   RtTensor *const *out) {                                                    \
    return pool(kx, in[0], attrs, out[0], S, is_max);                                         \
  }
POOL_KERNEL(k_max_pool1d, 1, true)
POOL_KERNEL(k_avg_pool1d, 1, false)
POOL_KERNEL(k_max_pool2d, 2, true)
POOL_KERNEL(k_avg_pool2d, 2, false)
POOL_KERNEL(k_max_pool3d, 3, true)
POOL_KERNEL(k_avg_pool3d, 3, false)

static bool k_adaptive_max(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  return adaptive(kx, in[0], attrs, out[0], true);
}

static bool k_adaptive_avg(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  return adaptive(kx, in[0], attrs, out[0], false);
}

const KernelDef kernels_family_nn_pool[] = {
    {"nn.max_pool1d", k_max_pool1d},
    {"nn.avg_pool1d", k_avg_pool1d},
    {"nn.max_pool2d", k_max_pool2d},
    {"nn.avg_pool2d", k_avg_pool2d},
    {"nn.max_pool3d", k_max_pool3d},
    {"nn.avg_pool3d", k_avg_pool3d},
    {"nn.global_max_pool2d", k_adaptive_max},
    {"nn.global_avg_pool2d", k_adaptive_avg},
    {"nn.adaptive_max_pool2d", k_adaptive_max},
    {"nn.adaptive_avg_pool2d", k_adaptive_avg},
    {NULL, NULL},
};
