/* kernels_transform.c — reference kernels of the transform family: views
 * (reshape, squeeze, expand_dims), data movement (transpose, broadcast_to,
 * concatenate, stack, split, strided_slice, take), creation (zeros, ones,
 * full, *_like, arange, one_hot) and shapes (shape_of, ndarray_size).
 *
 * Data movement copies element bits (never converts), so NaN payloads and
 * float16 values pass unchanged.  Output shapes always come from the type
 * relation; a kernel recomputes only where to read from, with the same
 * rules (strided_slice: numpy's clamping, negative strides walk backwards,
 * missing begin/end mean "from the start"/"to the end" in the stride's
 * direction; slice_mode="size": end is a length, -1 to the end).
 *
 * take: mode "clip" clamps indices into [0, n-1], "wrap" takes them modulo
 * n, "fast" accepts [-n, n) (negative counts from the end, as numpy) and
 * fails on anything else: "take: index 7 is out of bounds for axis 0 with
 * size 5".  Taking from an empty axis fails in every mode.
 * arange computes start + i * step in the output dtype (as TVM). */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* ───────────────────────────── helpers ───────────────────────────── */

#define COPY_ROW(T)                                       \
  {                                                       \
    const T *s = (const T *)x->data + off;                \
    T *d = (T *)out->data + o;                            \
    if (st == 1)                                          \
      memcpy(d, s, (size_t)len * sizeof(T));              \
    else                                                  \
      for (int64_t i = 0; i < len; i++) d[i] = s[i * st]; \
  }                                                       \
  break;

/* Copies a strided view of x (start offset base, input strides istr per
 * output dim) into out, row by row with a copy per element width; the
 * common core of transpose, broadcast_to and strided_slice. */
void kernel_view_copy(const RtTensor *x, int64_t base, const int64_t *istr, RtTensor *out) {
  if (out->numel == 0) return;
  int nd = out->ndim;
  int64_t len = nd ? out->shape[nd - 1] : 1, st = nd ? istr[nd - 1] : 0;
  int64_t idx[TENSOR_MAX_RANK] = {0}, off = base;
  for (int64_t o = 0; o < out->numel; o += len) {
    switch (dtype_bytes(out->dtype)) {
      case 1:
        COPY_ROW(uint8_t)
      case 2:
        COPY_ROW(uint16_t)
      case 4:
        COPY_ROW(uint32_t)
      default:
        COPY_ROW(uint64_t)
    }
    for (int i = nd - 2; i >= 0; i--) {
      off += istr[i];
      if (++idx[i] < out->shape[i]) break;
      off -= istr[i] * out->shape[i], idx[i] = 0;
    }
  }
}

void kernel_fill(RtTensor *out, const RtTensor *v) {
  uint64_t lanev[1], bits[1];
  Lane l = kernel_lane(v->dtype);
  lane_load(l, v->dtype, v->data, 0, 1, 1, lanev);
  lane_store(l, out->dtype, lanev, bits, 0, 1);
  size_t es = (size_t)dtype_bytes(out->dtype);
  char *d = out->data;
  for (int64_t i = 0; i < out->numel; i++) memcpy(d + (size_t)i * es, bits, es);
}

/* Fills with 0 or 1 of out's dtype. */
static void fill_const(RtTensor *out, double c) {
  uint64_t bits[1];
  lane_store(LANE_F64, out->dtype, &c, bits, 0, 1);
  size_t es = (size_t)dtype_bytes(out->dtype);
  char *d = out->data;
  for (int64_t i = 0; i < out->numel; i++) memcpy(d + (size_t)i * es, bits, es);
}

static int64_t prod(const int64_t *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s[i];
  return p;
}

/* ──────────────────────────── movement ──────────────────────────── */

static bool k_transpose(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  const RtTensor *x = in[0];
  int n = x->ndim;
  int64_t ax[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  int k = kattr_is_none(kx, attrs, "axes") ? 0 : kattr_ints(kx, attrs, "axes", ax, TENSOR_MAX_RANK);
  if (!kernel_attrs_ok(kx)) return false;
  if (k == 0)
    for (int i = 0; i < n; i++) ax[i] = n - 1 - i;
  else if (k != n)
    return kernel_fail(kx, "transpose: axes has %d entries but the input has rank %d", k, n);
  kernel_strides(n, x->shape, st);
  for (int i = 0; i < n; i++) {
    int a = kernel_axis(kx, ax[i], n);
    if (a < 0) return false;
    istr[i] = st[a];
  }
  kernel_view_copy(x, 0, istr, out[0]);
  return true;
}

/* x broadcast (numpy rules, right-aligned) to out's shape. */
static bool broadcast_into(const RtTensor *x, RtTensor *out) {
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  for (int i = 0; i < out->ndim; i++) {
    int j = i - (out->ndim - x->ndim);
    istr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
  }
  kernel_view_copy(x, 0, istr, out);
  return true;
}

static bool k_broadcast_to(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  if (in[0]->dtype != out[0]->dtype)
    return kernel_fail(kx, "%s: dtype conversion is not supported", kx->op);
  return broadcast_into(in[0], out[0]);
}

/* Joins the inputs along `axis` of out, input i contributing len[i] slices. */
static void join(int nin, RtTensor *const *in, const int64_t *len, int axis, RtTensor *out) {
  int64_t outer = prod(out->shape, 0, axis), inner = prod(out->shape, axis + 1, out->ndim);
  size_t es = (size_t)dtype_bytes(out->dtype);
  char *d = out->data;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < nin; i++) {
      size_t n = (size_t)(len[i] * inner) * es;
      memcpy(d, (const char *)in[i]->data + (size_t)o * n, n);
      d += n;
    }
}

static bool k_concatenate(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), out[0]->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t *len = kernel_alloc(kx, sizeof(int64_t) * (size_t)(nin ? nin : 1));
  if (!len) return false;
  for (int i = 0; i < nin; i++) len[i] = in[i]->shape[axis];
  if (out[0]->numel) join(nin, in, len, axis, out[0]);
  free(len);
  return true;
}

static bool k_stack(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), out[0]->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t *len = kernel_alloc(kx, sizeof(int64_t) * (size_t)(nin ? nin : 1));
  if (!len) return false;
  for (int i = 0; i < nin; i++) len[i] = 1;
  if (out[0]->numel) join(nin, in, len, axis, out[0]);
  free(len);
  return true;
}

static bool k_split(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  const RtTensor *x = in[0];
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t outer = prod(x->shape, 0, axis), inner = prod(x->shape, axis + 1, x->ndim);
  size_t es = (size_t)dtype_bytes(x->dtype), row = (size_t)(x->shape[axis] * inner) * es;
  int64_t start = 0;
  for (int i = 0; i < nout; i++) {
    size_t n = (size_t)(out[i]->shape[axis] * inner) * es;
    for (int64_t o = 0; o < outer && n; o++)
      memcpy((char *)out[i]->data + (size_t)o * n,
             (const char *)x->data + (size_t)o * row + (size_t)(start * inner) * es, n);
    start += out[i]->shape[axis];
  }
  if (start != x->shape[axis]) return kernel_fail(kx, "split: the pieces do not cover the axis");
  return true;
}

/* ─────────────────────────── strided_slice ─────────────────────────── */

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The first index read along an axis of size dim (entry i of the spec). */
static int64_t slice_start(const SliceArgs *sa, int i, int64_t dim, int64_t *step) {
  bool hb = i < sa->nb;
  int64_t b = hb ? sa->b[i] : 0;
  int64_t s = sa->size_mode ? 1 : sa->ns == 1 ? sa->s[0] : i < sa->ns ? sa->s[i] : 1;
  *step = s;
  if (s > 0) return hb ? clampi(b < 0 ? b + dim : b, 0, dim) : 0;
  return hb ? clampi(b < 0 ? b + dim : b, -1, dim - 1) : dim - 1;
}

/* strided_slice as a view: each sliced axis gets a start and a step (the
 * output shape came from the type relation), then one kernel_view_copy. */
bool kernel_strided_slice(KernelCtx *kx, const RtTensor *x, const SliceArgs *sa, RtTensor *out) {
  int n = x->ndim, k = sa->na >= 0 ? sa->na : sa->nb > sa->ne ? sa->nb : sa->ne;
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK], base = 0;
  if (k > n)
    return kernel_fail(kx, "%s: begin/end have %d entries but the data has rank %d", kx->op, k, n);
  kernel_strides(n, x->shape, st);
  for (int a = 0; a < n; a++) istr[a] = st[a];
  for (int i = 0; i < k; i++) {
    int a = sa->na >= 0 ? kernel_axis(kx, sa->axes[i], n) : i;
    if (a < 0) return false;
    int64_t step;
    int64_t b = slice_start(sa, i, x->shape[a], &step);
    if (step == 0) return kernel_fail(kx, "%s: stride 0 on entry %d", kx->op, i);
    if (out->shape[a] > 0) base += b * st[a];
    istr[a] = step * st[a];
  }
  kernel_view_copy(x, base, istr, out);
  return true;
}

static bool k_strided_slice(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  SliceArgs sa;
  sa.nb = kattr_ints(kx, attrs, "begin", sa.b, TENSOR_MAX_RANK);
  sa.ne = kattr_ints(kx, attrs, "end", sa.e, TENSOR_MAX_RANK);
  sa.ns = kattr_is_none(kx, attrs, "strides")
              ? 0
              : kattr_ints(kx, attrs, "strides", sa.s, TENSOR_MAX_RANK);
  sa.na = kattr_is_none(kx, attrs, "axes")
              ? -1
              : kattr_ints(kx, attrs, "axes", sa.axes, TENSOR_MAX_RANK);
  sa.size_mode = strcmp(kattr_str(kx, attrs, "slice_mode"), "size") == 0;
  if (!kernel_attrs_ok(kx)) return false;
  return kernel_strided_slice(kx, in[0], &sa, out[0]);
}

/* ───────────────────────────── take ───────────────────────────── */

typedef enum TakeMode { TAKE_CLIP, TAKE_WRAP, TAKE_FAST } TakeMode;

/* Index k made valid for an axis of size n, or false (fast mode). */
static bool take_index(KernelCtx *kx, TakeMode mode, int64_t k, int64_t n, int axis, int64_t *out) {
  if (n == 0)
    return kernel_fail(kx, "take: index %lld is out of bounds for axis %d with size 0",
                       (long long)k, axis);
  switch (mode) {
    case TAKE_CLIP:
      *out = k < 0 ? 0 : k >= n ? n - 1 : k;
      return true;
    case TAKE_WRAP:
      *out = ((k % n) + n) % n;
      return true;
    case TAKE_FAST:
      if (k < -n || k >= n)
        return kernel_fail(kx, "take: index %lld is out of bounds for axis %d with size %lld",
                           (long long)k, axis, (long long)n);
      *out = k < 0 ? k + n : k;
      return true;
  }
  return false;
}

typedef struct TakeShape {
  int64_t B, P, N, I, Q; /* batch, before axis, axis, indices per batch, after axis */
  int axis;
} TakeShape;

static bool take_shape(KernelCtx *kx, const Attrs *attrs, const RtTensor *x, const RtTensor *ix,
                       TakeShape *t) {
  if (kattr_is_none(kx, attrs, "axis")) {
    *t = (TakeShape){1, 1, x->numel, ix->numel, 1, 0};
    return kernel_attrs_ok(kx);
  }
  int axis = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  int64_t bd = kattr_int(kx, attrs, "batch_dims");
  if (axis < 0 || !kernel_attrs_ok(kx)) return false;
  if (bd < 0) bd += ix->ndim;
  if (bd < 0 || bd > axis || bd > ix->ndim)
    return kernel_fail(kx, "take: batch_dims is out of range");
  t->axis = axis;
  t->B = prod(x->shape, 0, (int)bd), t->P = prod(x->shape, (int)bd, axis), t->N = x->shape[axis];
  t->I = prod(ix->shape, (int)bd, ix->ndim), t->Q = prod(x->shape, axis + 1, x->ndim);
  return true;
}

static bool k_take(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  const RtTensor *x = in[0], *ix = in[1];
  const char *ms = kattr_str(kx, attrs, "mode");
  TakeMode mode = !strcmp(ms, "wrap") ? TAKE_WRAP : !strcmp(ms, "fast") ? TAKE_FAST : TAKE_CLIP;
  TakeShape t = {0};
  if (!take_shape(kx, attrs, x, ix, &t)) return false;
  int64_t *idx = lane_array(kx, ix, LANE_I64);
  if (!idx) return false;
  size_t es = (size_t)dtype_bytes(x->dtype), q = (size_t)t.Q * es;
  const char *src = x->data;
  char *d = out[0]->data;
  bool ok = true;
  for (int64_t b = 0; b < t.B && ok; b++)
    for (int64_t p = 0; p < t.P && ok; p++)
      for (int64_t i = 0; i < t.I && ok; i++) {
        int64_t k = 0;
        ok = take_index(kx, mode, idx[b * t.I + i], t.N, t.axis, &k);
        if (ok && q) memcpy(d, src + (size_t)((b * t.P + p) * t.N + k) * q, q);
        d += q;
      }
  free(idx);
  return ok;
}

/* ─────────────────────────── creation ─────────────────────────── */

static bool k_zeros(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  fill_const(out[0], 0);
  return true;
}

static bool k_ones(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  fill_const(out[0], 1);
  return true;
}

static bool k_full(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  if (in[0]->numel != 1) return kernel_fail(kx, "%s: fill_value must be a scalar", kx->op);
  kernel_fill(out[0], in[0]);
  return true;
}

#define ARANGE_LOOP(T, M)                                                    \
  for (int64_t i = 0; i < m; i++) buf.M[i] = sv[0].M + sv[1].M * (T)(j + i); \
  break;

/* float16 and bfloat16 (dt) round after each operation, as arithmetic in
 * the dtype does. */
static float h(float v, DType dt) {
  return dt == DT_FLOAT16 ? half_to_float(float_to_half(v)) : bf16_to_float(float_to_bf16(v));
}

static bool k_arange(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  RtTensor *o = out[0];
  Lane l = kernel_lane(o->dtype);
  if (l == LANE_I64) l = LANE_U64; /* wrapping */
  LaneVal sv[2], tmp, bits;
  LaneBlock buf;
  for (int k = 0; k < 2; k++) { /* start and step, as constants of the output dtype */
    const RtTensor *t = in[k == 0 ? 0 : 2];
    Lane tl = kernel_lane(t->dtype);
    lane_load(tl, t->dtype, t->data, 0, 1, 1, &tmp);
    lane_store(tl, o->dtype, &tmp, &bits, 0, 1);
    lane_load(l, o->dtype, &bits, 0, 1, 1, &sv[k]);
  }
  for (int64_t j = 0; j < o->numel; j += KBLK) {
    int64_t m = o->numel - j < KBLK ? o->numel - j : KBLK;
    DType dt = o->dtype;
    if (dt == DT_FLOAT16 || dt == DT_BFLOAT16) {
      for (int64_t i = 0; i < m; i++)
        buf.f[i] = h(sv[0].f + h(sv[1].f * h((float)(j + i), dt), dt), dt);
    } else
      switch (l) {
        case LANE_F32:
          ARANGE_LOOP(float, f)
        case LANE_F64:
          ARANGE_LOOP(double, d)
        default:
          ARANGE_LOOP(uint64_t, u)
      }
    lane_store(l, o->dtype, &buf, o->data, j, m);
  }
  return true;
}

static bool k_one_hot(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  const RtTensor *ix = in[0];
  RtTensor *o = out[0];
  int64_t axis = kattr_int(kx, attrs, "axis"), depth = kattr_int(kx, attrs, "depth");
  if (!kernel_attrs_ok(kx)) return false;
  int at = axis < 0 ? ix->ndim : (int)axis;
  int64_t outer = prod(ix->shape, 0, at), inner = prod(ix->shape, at, ix->ndim);
  size_t es = (size_t)dtype_bytes(o->dtype);
  int64_t *idx = lane_array(kx, ix, LANE_I64);
  if (!idx) return false;
  const char *on = in[1]->data, *off = in[2]->data;
  char *d = o->data;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t j = 0; j < depth; j++)
      for (int64_t b = 0; b < inner; b++, d += es)
        memcpy(d, idx[a * inner + b] == j ? on : off, es);
  free(idx);
  return true;
}

/* ──────────────────────────── shapes ──────────────────────────── */

static bool k_shape_of(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  lane_store(LANE_I64, out[0]->dtype, in[0]->shape, out[0]->data, 0, in[0]->ndim);
  return true;
}

static bool k_ndarray_size(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                           int nout, RtTensor *const *out) {
  lane_store(LANE_I64, out[0]->dtype, &in[0]->numel, out[0]->data, 0, 1);
  return true;
}

/* check: data (a view), or the message as the kernel's error. */
static bool k_check(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  const char *msg = kattr_str(kx, attrs, "message");
  if (!kernel_attrs_ok(kx)) return false;
  for (int64_t i = 0; i < in[1]->numel; i++)
    if (((const uint8_t *)in[1]->data)[i]) return kernel_fail(kx, "%s", msg);
  return kernel_copy_view(kx, 1, in, attrs, nout, out);
}

const KernelDef kernels_family_transform[] = {
    {"reshape", kernel_copy_view},
    {"squeeze", kernel_copy_view},
    {"expand_dims", kernel_copy_view},
    {"transpose", k_transpose},
    {"broadcast_to", k_broadcast_to},
    {"concatenate", k_concatenate},
    {"stack", k_stack},
    {"split", k_split},
    {"strided_slice", k_strided_slice},
    {"take", k_take},
    {"zeros", k_zeros},
    {"ones", k_ones},
    {"full", k_full},
    {"zeros_like", k_zeros},
    {"ones_like", k_ones},
    {"arange", k_arange},
    {"one_hot", k_one_hot},
    {"shape_of", k_shape_of},
    {"ndarray_size", k_ndarray_size},
    {"check", k_check},
    {NULL, NULL},
};
