/* kernels_transform_shape.c — reference kernels of the transform_shape
 * family (ops/transform_shape.c): reshape_like (a view), broadcast_to_like,
 * collapse_sum_like, full_like, cast_like, reinterpret, slice_like,
 * layout_transform, tile, repeat, reverse, reverse_sequence,
 * sequence_mask, meshgrid, trilu; and the element-mapping driver the
 * index kernels share (kernels_xform.h).
 *
 * Data movement copies element bits.  Semantics beyond the shapes:
 * - layout_transform pads the split of a dim that is not a multiple of the
 *   factor with zeros (TVM's compute);
 * - reverse_sequence reverses the first len elements of each batch's
 *   sequence (len <= 1 leaves it, len past the axis reverses all of it);
 * - sequence_mask compares the position, in the lengths' dtype, with the
 *   length: positions at or past it get mask_value converted to the data's
 *   dtype as `cast` converts;
 * - collapse_sum_like adds in float64 (floats) or modulo 2^64 (integers),
 *   rounded or wrapped once into the dtype. */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels_xform.h"
#include "ops/transform_int.h"

/* ───────────────────────────── shared ───────────────────────────── */

bool kernel_map(MapArgs *m, MapSrcFn src) {
  RtTensor *out = m->out;
  size_t es = (size_t)dtype_bytes(out->dtype);
  kernel_strides(m->x->ndim, m->x->shape, m->xstr);
  int64_t oi[TENSOR_MAX_RANK] = {0};
  char *d = out->data;
  const char *s = m->x->data;
  for (int64_t o = 0; o < out->numel; o++) {
    int64_t k;
    if (!src(m, oi, &k)) return false;
    memcpy(d + (size_t)o * es, k < 0 ? m->fill : s + (size_t)k * es, es);
    for (int i = out->ndim - 1; i >= 0 && ++oi[i] == out->shape[i]; i--) oi[i] = 0;
  }
  return true;
}

bool kernel_index(KernelCtx *kx, int64_t k, int64_t n, int axis, int64_t *out) {
  if (k < -n || k >= n)
    return kernel_fail(kx, "%s: index %lld is out of bounds for axis %d with size %lld", kx->op,
                       (long long)k, axis, (long long)n);
  *out = k < 0 ? k + n : k;
  return true;
}

/* The element offset of x at multi-index xi. */
static int64_t offset(const MapArgs *m, const int64_t *xi) {
  int64_t k = 0;
  for (int i = 0; i < m->x->ndim; i++) k += xi[i] * m->xstr[i];
  return k;
}

static const uint64_t zero_bits[1];

/* ─────────────────── broadcast_to_like, slice_like, reverse ─────────────────── */

static bool k_broadcast_to_like(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  const RtTensor *x = in[0];
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  for (int i = 0; i < out[0]->ndim; i++) {
    int j = i - (out[0]->ndim - x->ndim);
    istr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
  }
  kernel_view_copy(x, 0, istr, out[0]);
  return true;
}

static bool k_slice_like(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  int64_t st[TENSOR_MAX_RANK];
  kernel_strides(in[0]->ndim, in[0]->shape, st);
  kernel_view_copy(in[0], 0, st, out[0]);
  return true;
}

static bool k_reverse(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  const RtTensor *x = in[0];
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t st[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  int64_t base = x->shape[a] > 0 ? (x->shape[a] - 1) * st[a] : 0;
  st[a] = -st[a];
  kernel_view_copy(x, base, st, out[0]);
  return true;
}

/* ─────────────────────────── collapse_sum_like ─────────────────────────── */

/* Sums x into out by the broadcasting row iterator (out as the operand
 * broadcast to x's shape), accumulating in float64 or modulo 2^64. */
static bool k_collapse_sum_like(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  const RtTensor *x = in[0];
  RtTensor *o = out[0];
  bool fl = dtype_is_float(x->dtype);
  Lane l = fl ? LANE_F64 : LANE_U64;
  double *acc = kernel_alloc(kx, sizeof(double) * (size_t)(o->numel ? o->numel : 1));
  LaneBlock *buf = kernel_alloc(kx, sizeof(LaneBlock));
  if (!acc || !buf) return free(acc), free(buf), false;
  uint64_t *uacc = (uint64_t *)acc;
  memset(acc, 0, sizeof(double) * (size_t)o->numel);
  BcastIter it;
  const RtTensor *ops[2] = {o, x};
  bcast_init(&it, x->ndim, x->shape, 2, ops);
  while (bcast_next(&it))
    for (int64_t j = 0; j < it.len; j += KBLK) {
      int64_t m = it.len - j < KBLK ? it.len - j : KBLK;
      lane_load(l, x->dtype, x->data, it.off[1] + j * it.step[1], it.step[1], m, buf);
      for (int64_t i = 0; i < m; i++) {
        int64_t k = it.off[0] + (j + i) * it.step[0];
        if (fl)
          acc[k] += buf->d[i];
        else
          uacc[k] += buf->u[i];
      }
    }
  lane_store(l, o->dtype, acc, o->data, 0, o->numel);
  free(acc), free(buf);
  return true;
}

/* ─────────────────────── full_like, cast_like, reinterpret ─────────────────────── */

static bool k_full_like(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  kernel_fill(out[0], in[1]);
  return true;
}

static bool k_cast_like(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  const RtTensor *x = in[0];
  Lane l = kernel_lane(x->dtype);
  LaneBlock *buf = kernel_alloc(kx, sizeof(LaneBlock));
  if (!buf) return false;
  for (int64_t j = 0; j < x->numel; j += KBLK) {
    int64_t m = x->numel - j < KBLK ? x->numel - j : KBLK;
    lane_load(l, x->dtype, x->data, j, 1, m, buf);
    lane_store(l, out[0]->dtype, buf, out[0]->data, j, m);
  }
  free(buf);
  return true;
}

static bool k_reinterpret(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  if (in[0]->numel) memcpy(out[0]->data, in[0]->data, rt_tensor_nbytes(in[0]));
  return true;
}

/* ─────────────────────────── layout_transform ─────────────────────────── */

/* The source element of a destination index: per letter the logical
 * coordinate, split by the source's factor; past the source: the fill. */
static bool src_layout(MapArgs *m, const int64_t *oi, int64_t *src) {
  const LayoutMap *lm = m->aux;
  int64_t xi[TENSOR_MAX_RANK];
  for (int k = 0; k < lm->src.n; k++) {
    int i = lm->src.axes[k].letter - 'A', dp = lm->dst.primal[i], ds = lm->dst.sub[i];
    int64_t l = oi[dp] * layout_factor(&lm->dst, i) + (ds >= 0 ? oi[ds] : 0);
    int64_t f = layout_factor(&lm->src, i);
    xi[k] = lm->src.axes[k].factor ? l % f : l / f;
    if (xi[k] >= m->x->shape[k]) return *src = -1, true;
  }
  *src = offset(m, xi);
  return true;
}

static bool k_layout_transform(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  const char *s = kattr_str(kx, attrs, "src_layout"), *d = kattr_str(kx, attrs, "dst_layout");
  if (!kernel_attrs_ok(kx)) return false;
  LayoutMap lm;
  char err[256];
  if (!layout_map(s, d, &lm, err, sizeof err)) return kernel_fail(kx, "layout_transform: %s", err);
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .fill = zero_bits, .aux = &lm};
  return kernel_map(&m, src_layout);
}

/* ───────────────────────────── tile, repeat ───────────────────────────── */

static bool src_tile(MapArgs *m, const int64_t *oi, int64_t *src) {
  int n = m->x->ndim, lead = m->out->ndim - n;
  int64_t k = 0;
  for (int j = 0; j < n; j++) k += (oi[lead + j] % m->x->shape[j]) * m->xstr[j];
  *src = k;
  return true;
}

static bool k_tile(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                   RtTensor *const *out) {
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0]};
  return kernel_map(&m, src_tile);
}

/* p[0]: axis, p[1]: repeats. */
static bool src_repeat(MapArgs *m, const int64_t *oi, int64_t *src) {
  int a = (int)m->p[0];
  int64_t k = 0;
  for (int j = 0; j < m->x->ndim; j++) k += (j == a ? oi[j] / m->p[1] : oi[j]) * m->xstr[j];
  *src = k;
  return true;
}

static bool k_repeat(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  int64_t reps = kattr_int(kx, attrs, "repeats");
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .p = {a, reps}};
  return kernel_map(&m, src_repeat);
}

/* ─────────────────── reverse_sequence, sequence_mask, trilu ─────────────────── */

/* p[0]: seq axis, p[1]: batch axis; aux: the lengths as int64. */
static bool src_reverse_sequence(MapArgs *m, const int64_t *oi, int64_t *src) {
  int s = (int)m->p[0], b = (int)m->p[1];
  int64_t len = ((const int64_t *)m->aux)[oi[b]], i = oi[s], n = m->x->shape[s];
  int64_t xi[TENSOR_MAX_RANK];
  memcpy(xi, oi, sizeof(int64_t) * (size_t)m->x->ndim);
  if (len > 1 && i < len) xi[s] = len > n ? n - 1 - i : len - 1 - i;
  *src = offset(m, xi);
  return true;
}

static bool k_reverse_sequence(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  int n = in[0]->ndim;
  int s = kernel_axis(kx, kattr_int(kx, attrs, "seq_axis"), n);
  int b = s < 0 ? -1 : kernel_axis(kx, kattr_int(kx, attrs, "batch_axis"), n);
  if (b < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t *len = lane_array(kx, in[1], LANE_I64);
  if (!len) return false;
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .p = {s, b}, .aux = len};
  bool ok = kernel_map(&m, src_reverse_sequence);
  free(len);
  return ok;
}

/* p[0]: the length axis; aux: per batch, the first masked position. */
static bool src_sequence_mask(MapArgs *m, const int64_t *oi, int64_t *src) {
  int a = (int)m->p[0];
  *src = oi[a] >= ((const int64_t *)m->aux)[oi[1 - a]] ? -1 : offset(m, oi);
  return true;
}

/* The first masked position of each batch: the smallest position p (of the
 * axis) whose value in the lengths' dtype is >= the length. */
static int64_t *mask_starts(KernelCtx *kx, const RtTensor *len, int64_t axis_len) {
  int64_t *start = kernel_alloc(kx, sizeof(int64_t) * (size_t)(len->numel ? len->numel : 1));
  bool fl = dtype_is_float(len->dtype);
  for (int64_t b = 0; start && b < len->numel; b++) {
    LaneVal v, pv;
    lane_load(fl ? LANE_F64 : LANE_I64, len->dtype, len->data, b, 1, 1, &v);
    int64_t p = 0;
    for (; p < axis_len; p++) {
      if (fl && (double)p >= v.d) break;
      if (!fl) {
        lane_store(LANE_I64, len->dtype, &p, &pv, 0, 1); /* p in the lengths' dtype */
        lane_load(LANE_I64, len->dtype, &pv, 0, 1, 1, &pv);
        if (pv.i >= v.i) break;
      }
    }
    start[b] = p;
  }
  return start;
}

static bool k_sequence_mask(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  int64_t a = kattr_int(kx, attrs, "axis");
  double mv = kattr_float(kx, attrs, "mask_value");
  if (!kernel_attrs_ok(kx)) return false;
  uint64_t fill[1];
  lane_store(LANE_F64, out[0]->dtype, &mv, fill, 0, 1);
  int64_t *start = mask_starts(kx, in[1], in[0]->shape[a]);
  if (!start) return false;
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .fill = fill, .p = {a}, .aux = start};
  bool ok = kernel_map(&m, src_sequence_mask);
  free(start);
  return ok;
}

/* p[0]: upper, p[1]: k. */
static bool src_trilu(MapArgs *m, const int64_t *oi, int64_t *src) {
  int n = m->x->ndim;
  int64_t diff = oi[n - 1] - oi[n - 2];
  bool keep = m->p[0] ? diff >= m->p[1] : diff <= m->p[1];
  *src = keep ? offset(m, oi) : -1;
  return true;
}

static bool k_trilu(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                    RtTensor *const *out) {
  bool upper = kattr_bool(kx, attrs, "upper");
  if (!kernel_attrs_ok(kx)) return false;
  int64_t k;
  lane_load(LANE_I64, in[1]->dtype, in[1]->data, 0, 1, 1, &k);
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .fill = zero_bits, .p = {upper, k}};
  return kernel_map(&m, src_trilu);
}

/* ───────────────────────────── meshgrid ───────────────────────────── */

/* p[0]: the output axis input i varies along. */
static bool src_meshgrid(MapArgs *m, const int64_t *oi, int64_t *src) {
  *src = m->x->ndim ? oi[m->p[0]] : 0;
  return true;
}

static bool k_meshgrid(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  bool xy = strcmp(kattr_str(kx, attrs, "indexing"), "xy") == 0;
  if (!kernel_attrs_ok(kx)) return false;
  for (int i = 0; i < nin && i < nout; i++) {
    int pos = xy && nin >= 2 && i < 2 ? 1 - i : i;
    MapArgs m = {.kx = kx, .x = in[i], .out = out[i], .p = {pos}};
    if (!kernel_map(&m, src_meshgrid)) return false;
  }
  return true;
}

const KernelDef kernels_family_transform_shape[] = {
    {"reshape_like", kernel_copy_view},
    {"broadcast_to_like", k_broadcast_to_like},
    {"collapse_sum_like", k_collapse_sum_like},
    {"full_like", k_full_like},
    {"slice_like", k_slice_like},
    {"layout_transform", k_layout_transform},
    {"tile", k_tile},
    {"repeat", k_repeat},
    {"reverse", k_reverse},
    {"reverse_sequence", k_reverse_sequence},
    {"sequence_mask", k_sequence_mask},
    {"meshgrid", k_meshgrid},
    {"trilu", k_trilu},
    {"cast_like", k_cast_like},
    {"reinterpret", k_reinterpret},
    {NULL, NULL},
};
