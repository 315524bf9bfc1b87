/* kernels_transform_index.c — reference kernels of the transform_index
 * family (ops/transform_index.c): gather, gather_nd, scatter, scatter_add,
 * scatter_nd, sparse_to_dense, unravel_index, adv_index.
 *
 * Indices are numpy's: k in [-n, n) reads or writes k (k + n when
 * negative), anything else is "op: index k is out of bounds for axis a
 * with size n".  Scatters go through the updates in row-major order, so
 * with repeated indices the last update wins ("update") or all are added
 * in that order, each sum rounded to the dtype ("add", as numpy's add.at).
 * sparse_to_dense ignores coordinates outside the output (TVM's compute
 * compares each output index with them), the last of repeated ones wins.
 * unravel_index divides with floor semantics (TVM's indexdiv/indexmod); a
 * zero in the shape is an error. */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels_xform.h"

static int64_t prod(const int64_t *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s[i];
  return p;
}

/* ───────────────────────────── gather ───────────────────────────── */

/* p[0]: axis; aux: the indices as int64 (row-major over the output). */
static bool src_gather(MapArgs *m, const int64_t *oi, int64_t *src) {
  int a = (int)m->p[0];
  int64_t o = 0, k;
  for (int d = 0; d < m->out->ndim; d++) o = o * m->out->shape[d] + oi[d];
  if (!kernel_index(m->kx, ((const int64_t *)m->aux)[o], m->x->shape[a], a, &k)) return false;
  int64_t s = 0;
  for (int d = 0; d < m->x->ndim; d++) s += (d == a ? k : oi[d]) * m->xstr[d];
  *src = s;
  return true;
}

static bool k_gather(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                     RtTensor *const *out) {
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), in[0]->ndim);
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t *ix = lane_array(kx, in[1], LANE_I64);
  if (!ix) return false;
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .p = {a}, .aux = ix};
  bool ok = kernel_map(&m, src_gather);
  free(ix);
  return ok;
}

/* ───────────────────────────── gather_nd ───────────────────────────── */

/* p[0]: M, p[1]: batch dims, p[2]: K (index dims), p[3]: elements per
 * index tuple position (prod of indices' dims after the first). */
static bool src_gather_nd(MapArgs *m, const int64_t *oi, int64_t *src) {
  int mm = (int)m->p[0], b = (int)m->p[1], k = (int)m->p[2];
  const int64_t *ix = m->aux;
  int64_t y = 0, s = 0;
  for (int d = 0; d < k; d++) y = y * m->out->shape[d] + oi[d];
  for (int d = 0; d < b; d++) s += oi[d] * m->xstr[d];
  for (int j = 0; j < mm; j++) {
    int64_t v;
    if (!kernel_index(m->kx, ix[j * m->p[3] + y], m->x->shape[b + j], b + j, &v)) return false;
    s += v * m->xstr[b + j];
  }
  for (int d = b + mm; d < m->x->ndim; d++) s += oi[k + d - (b + mm)] * m->xstr[d];
  *src = s;
  return true;
}

static bool k_gather_nd(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  int64_t b = kattr_int(kx, attrs, "batch_dims");
  if (!kernel_attrs_ok(kx)) return false;
  const RtTensor *ix = in[1];
  int64_t *v = lane_array(kx, ix, LANE_I64);
  if (!v) return false;
  MapArgs m = {.kx = kx, .x = in[0], .out = out[0], .aux = v};
  m.p[0] = ix->shape[0], m.p[1] = b, m.p[2] = ix->ndim - 1, m.p[3] = prod(ix->shape, 1, ix->ndim);
  bool ok = kernel_map(&m, src_gather_nd);
  free(v);
  return ok;
}

/* ─────────────────────────── scatter helpers ─────────────────────────── */

/* out[dst] = up[src] (op 0), or out[dst] += up[src] (1) or *= up[src]
 * (2) computed in the dtype's lane (integers wrap: the unsigned lane). */
static void put(RtTensor *out, int64_t dst, const RtTensor *up, int64_t src, int add) {
  size_t es = (size_t)dtype_bytes(out->dtype);
  if (!add) {
    memcpy((char *)out->data + (size_t)dst * es, (const char *)up->data + (size_t)src * es, es);
    return;
  }
  Lane l = kernel_lane(out->dtype);
  if (l == LANE_I64) l = LANE_U64;
  LaneVal a, b;
  lane_load(l, out->dtype, out->data, dst, 1, 1, &a);
  lane_load(l, up->dtype, up->data, src, 1, 1, &b);
  if (l == LANE_F32)
    a.f = add == 2 ? a.f * b.f : a.f + b.f;
  else if (l == LANE_F64)
    a.d = add == 2 ? a.d * b.d : a.d + b.d;
  else
    a.u = add == 2 ? a.u * b.u : a.u + b.u;
  lane_store(l, out->dtype, &a, out->data, dst, 1);
}

static void copy_data(RtTensor *out, const RtTensor *x) {
  if (x->numel) memcpy(out->data, x->data, rt_tensor_nbytes(x));
}

/* ───────────────────────── scatter, scatter_add ───────────────────────── */

/* scatter / scatter_add: the data copied, then each update written (or
 * added) at its position with the axis coordinate from indices. */
static bool scatter(KernelCtx *kx, RtTensor *const *in, const Attrs *attrs, RtTensor *out,
                    bool add) {
  const RtTensor *x = in[0], *ix = in[1], *up = in[2];
  int a = kernel_axis(kx, kattr_int(kx, attrs, "axis"), x->ndim);
  if (a < 0 || !kernel_attrs_ok(kx)) return false;
  int64_t *v = lane_array(kx, ix, LANE_I64);
  if (!v) return false;
  copy_data(out, x);
  int64_t xst[TENSOR_MAX_RANK], ui[TENSOR_MAX_RANK] = {0};
  kernel_strides(x->ndim, x->shape, xst);
  bool ok = true;
  for (int64_t u = 0; u < up->numel && ok; u++) {
    int64_t k, dst = 0;
    ok = kernel_index(kx, v[u], x->shape[a], a, &k);
    for (int d = 0; d < x->ndim; d++) dst += (d == a ? k : ui[d]) * xst[d];
    if (ok) put(out, dst, up, u, add);
    for (int d = up->ndim - 1; d >= 0 && ++ui[d] == up->shape[d]; d--) ui[d] = 0;
  }
  free(v);
  return ok;
}

static bool k_scatter(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  return scatter(kx, in, attrs, out[0], false);
}

static bool k_scatter_add(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  return scatter(kx, in, attrs, out[0], true);
}

/* ───────────────────────────── scatter_nd ───────────────────────────── */

/* The data copied, then for each index tuple the slice of updates written
 * or added at that position. */
static bool k_scatter_nd(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  const RtTensor *x = in[0], *ix = in[1], *up = in[2];
  const char *mode = kattr_str(kx, attrs, "mode");
  int add = strcmp(mode, "add") == 0 ? 1 : strcmp(mode, "mul") == 0 ? 2 : 0;
  if (!kernel_attrs_ok(kx)) return false;
  int mm = (int)ix->shape[0];
  int64_t ny = prod(ix->shape, 1, ix->ndim), slice = prod(x->shape, mm, x->ndim);
  int64_t xst[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, xst);
  int64_t *v = lane_array(kx, ix, LANE_I64);
  if (!v) return false;
  copy_data(out[0], x);
  bool ok = true;
  for (int64_t y = 0; y < ny && ok; y++) {
    int64_t base = 0, k;
    for (int j = 0; j < mm && ok; j++) {
      ok = kernel_index(kx, v[j * ny + y], x->shape[j], j, &k);
      base += k * xst[j];
    }
    for (int64_t e = 0; e < slice && ok; e++) put(out[0], base + e, up, y * slice + e, add);
  }
  free(v);
  return ok;
}

/* ─────────────────────────── sparse_to_dense ─────────────────────────── */

/* Index row j's slice start in out, or -1 when a coordinate is outside. */
static int64_t sparse_start(const RtTensor *out, const int64_t *c, int k) {
  int64_t s = 0;
  for (int d = 0; d < out->ndim; d++) {
    int64_t v = d < k ? c[d] : 0;
    if (v < 0 || v >= out->shape[d]) return -1;
    s = s * out->shape[d] + v;
  }
  return s;
}

/* The default everywhere, then each index row's slice set to its value in
 * index order (rows outside the output skipped). */
static bool k_sparse_to_dense(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                              int nout, RtTensor *const *out) {
  const RtTensor *si = in[0], *sv = in[1];
  RtTensor *o = out[0];
  kernel_fill(o, in[2]);
  int k = si->ndim == 2 ? (int)si->shape[1] : 1;
  int64_t n = si->ndim ? si->shape[0] : 1, slice = prod(o->shape, k, o->ndim);
  size_t es = (size_t)dtype_bytes(o->dtype);
  int64_t *c = lane_array(kx, si, LANE_I64);
  if (!c) return false;
  for (int64_t j = 0; j < n && o->numel; j++) {
    int64_t s = sparse_start(o, c + j * k, k);
    const char *val = (const char *)sv->data + (sv->ndim ? (size_t)j * es : 0);
    for (int64_t e = 0; s >= 0 && e < slice; e++)
      memcpy((char *)o->data + (size_t)(s + e) * es, val, es);
  }
  free(c);
  return true;
}

/* ─────────────────────────── unravel_index ─────────────────────────── */

/* Integer division as compiled code does it: truncating, x / -1 wrapping
 * (and x % -1 == 0), differences wrapping; then floor semantics on top. */
static int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t tdiv(int64_t a, int64_t b) { return b == -1 ? wsub(0, a) : a / b; }

static int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = b == -1 ? 0 : a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

static int64_t floor_div(int64_t a, int64_t b) { return tdiv(wsub(a, floor_mod(a, b)), b); }

/* Coordinate d of index c: c floor-divided by the dims after d, then
 * floor-modulo dim d, from the innermost dim out (TVM's order). */
static bool k_unravel_index(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                            int nout, RtTensor *const *out) {
  const RtTensor *ix = in[0], *sh = in[1];
  int64_t nd = sh->shape[0], n = ix->numel;
  int64_t *v = lane_array(kx, ix, LANE_I64), *s = lane_array(kx, sh, LANE_I64);
  int64_t *r = kernel_alloc(kx, sizeof(int64_t) * (size_t)(nd * n != 0 ? nd * n : 1));
  bool ok = v && s && r;
  for (int64_t d = 0; ok && n && d < nd; d++) /* compiled code divides only with indices */
    if (s[d] == 0)
      ok = kernel_fail(kx, "unravel_index: shape has a zero at position %lld", (long long)d);
  for (int64_t j = 0; ok && j < n; j++) {
    int64_t c = v[j];
    for (int64_t d = nd - 1; d >= 0; d--) {
      r[d * n + j] = floor_mod(c, s[d]);
      c = floor_div(c, s[d]);
    }
  }
  if (ok) lane_store(LANE_I64, out[0]->dtype, r, out[0]->data, 0, nd * n);
  free(v), free(s), free(r);
  return ok;
}

/* ───────────────────────────── adv_index ───────────────────────────── */

/* For each position of the indices' broadcast shape, the data's slice at
 * the coordinates the indices give there, copied whole. */
static bool k_adv_index(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  const RtTensor *x = in[0];
  RtTensor *o = out[0];
  int ni = nin - 1, nb = o->ndim - (x->ndim - ni);
  int64_t *ix[TENSOR_MAX_RANK], st[TENSOR_MAX_RANK][TENSOR_MAX_RANK], xst[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, xst);
  int64_t inner = prod(x->shape, ni, x->ndim), bi[TENSOR_MAX_RANK] = {0};
  size_t es = (size_t)dtype_bytes(x->dtype);
  bool ok = true;
  for (int i = 0; i < ni; i++) {
    const RtTensor *t = in[i + 1];
    ix[i] = ok ? lane_array(kx, t, LANE_I64) : NULL;
    ok = ok && ix[i];
    kernel_strides(t->ndim, t->shape, st[i]); /* broadcast: size-1 and missing dims step 0 */
    for (int d = 0; d < t->ndim; d++)
      if (t->shape[d] == 1) st[i][d] = 0;
  }
  int64_t nbe = prod(o->shape, 0, nb);
  for (int64_t p = 0; ok && p < nbe; p++) {
    int64_t src = 0;
    for (int i = 0; i < ni && ok; i++) {
      const RtTensor *t = in[i + 1];
      int64_t e = 0, k;
      for (int d = 0; d < t->ndim; d++) e += bi[nb - t->ndim + d] * st[i][d];
      ok = kernel_index(kx, ix[i][e], x->shape[i], i, &k);
      src += k * xst[i];
    }
    if (ok && inner)
      memcpy((char *)o->data + (size_t)(p * inner) * es, (const char *)x->data + (size_t)src * es,
             (size_t)inner * es);
    for (int d = nb - 1; d >= 0 && ++bi[d] == o->shape[d]; d--) bi[d] = 0;
  }
  for (int i = 0; i < ni; i++) free(ix[i]);
  return ok;
}

/* ───────────────────────────── argwhere ───────────────────────────── */

/* The coordinates of c's nonzero elements, one row each, in order. */
static bool k_argwhere(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  if (!kernel_attrs_ok(kx)) return false;
  Tensor c = rt_tensor_as_ir(in[0]);
  int r = in[0]->ndim;
  int32_t *o = out[0]->data;
  int64_t ci[TENSOR_MAX_RANK] = {0}, row = 0;
  for (int64_t i = 0; i < c.numel; i++) {
    if (tensor_get_f64(&c, i) != 0) {
      if (row >= out[0]->shape[0]) return kernel_fail(kx, "argwhere: more nonzeros than rows");
      for (int d = 0; d < r; d++) o[row * r + d] = (int32_t)ci[d];
      row++;
    }
    for (int d = r - 1; d >= 0 && ++ci[d] == in[0]->shape[d]; d--) ci[d] = 0;
  }
  return true;
}

const KernelDef kernels_family_transform_index[] = {
    {"argwhere", k_argwhere},
    {"gather", k_gather},
    {"gather_nd", k_gather_nd},
    {"scatter", k_scatter},
    {"scatter_add", k_scatter_add},
    {"scatter_nd", k_scatter_nd},
    {"sparse_to_dense", k_sparse_to_dense},
    {"unravel_index", k_unravel_index},
    {"adv_index", k_adv_index},
    {NULL, NULL},
};
