/* kernels_dyn.c — reference kernels of the dyn family: the ops whose shape
 * arguments are integer tensors (dyn.reshape, dyn.strided_slice, dyn.full,
 * dyn.broadcast_to, dyn.tile, dyn.topk, dyn.one_hot, dyn.zeros, dyn.ones,
 * dyn.squeeze, dyn.nn.pad, the dyn reductions, dyn.expand_dims, dyn.split,
 * dyn.cumsum; dyn.image.resize2d is in kernels_image.c).
 * Their output shapes come from the relations, which read the shape
 * tensors' values; the kernels reuse the static ops' code, the newer ones by
 * running the static op's registered kernel with the attribute rebuilt from
 * the tensor (run_static), so both forms always compute the same thing. */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "ops/dyn.h"

/* Reads a 1-D integer tensor into out (at most TENSOR_MAX_RANK values). */
static int ints_of(KernelCtx *kx, const RtTensor *t, const char *what, int64_t *out) {
  if (t->ndim != 1 || !dtype_is_int(t->dtype) || t->numel > TENSOR_MAX_RANK) {
    kernel_fail(kx, "%s: %s must be a 1-D integer tensor of at most %d values", kx->op, what,
                TENSOR_MAX_RANK);
    return -1;
  }
  lane_load(LANE_I64, t->dtype, t->data, 0, 1, t->numel, out);
  return (int)t->numel;
}

static bool k_dyn_strided_slice(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                                int nout, RtTensor *const *out) {
  SliceArgs sa;
  sa.nb = ints_of(kx, in[1], "begin", sa.b);
  sa.ne = sa.nb < 0 ? -1 : ints_of(kx, in[2], "end", sa.e);
  sa.ns = nin < 4 || sa.ne < 0 ? 0 : ints_of(kx, in[3], "strides", sa.s);
  if (sa.ns < 0 || sa.ne < 0) return false;
  sa.na = kattr_is_none(kx, attrs, "axes")
              ? -1
              : kattr_ints(kx, attrs, "axes", sa.axes, TENSOR_MAX_RANK);
  sa.size_mode = strcmp(kattr_str(kx, attrs, "slice_mode"), "size") == 0;
  if (!kernel_attrs_ok(kx)) return false;
  return kernel_strided_slice(kx, in[0], &sa, out[0]);
}

static bool k_dyn_full(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  if (in[0]->numel != 1) return kernel_fail(kx, "%s: fill_value must be a scalar", kx->op);
  kernel_fill(out[0], in[0]);
  return true;
}

static bool k_dyn_broadcast_to(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                               int nout, RtTensor *const *out) {
  const RtTensor *x = in[0];
  RtTensor *o = out[0];
  if (x->dtype != o->dtype) return kernel_fail(kx, "%s: dtype conversion is not supported", kx->op);
  int64_t st[TENSOR_MAX_RANK], istr[TENSOR_MAX_RANK];
  kernel_strides(x->ndim, x->shape, st);
  for (int i = 0; i < o->ndim; i++) {
    int j = i - (o->ndim - x->ndim);
    istr[i] = j < 0 || x->shape[j] == 1 ? 0 : st[j];
  }
  kernel_view_copy(x, 0, istr, o);
  return true;
}

/* The integers of t as an attribute list (pairs: [[a, b], ...] of an
 * (n, 2) tensor), in the kernel's scratch arena. */
static AttrValue *ints_attr(KernelCtx *kx, const RtTensor *t, bool pairs) {
  Arena *a = &kx->arena;
  int64_t n = t->numel, *v = lane_array(kx, t, LANE_I64);
  if (!v) return NULL;
  AttrValue *l = ARENA_NEW(a, AttrValue), **items = ARENA_ARRAY(a, AttrValue *, n ? n : 1);
  for (int64_t i = 0; i < n; i++) items[i] = attr_int(a, v[i], DT_INT64);
  free(v);
  l->kind = AV_LIST, l->u.list.n = (int)n, l->u.list.items = items;
  if (!pairs) return l;
  AttrValue **rows = ARENA_ARRAY(a, AttrValue *, n / 2 ? n / 2 : 1);
  for (int64_t i = 0; i < n / 2; i++) {
    AttrValue *r = ARENA_NEW(a, AttrValue);
    r->kind = AV_LIST, r->u.list.n = 2, r->u.list.items = items + 2 * i;
    rows[i] = r;
  }
  l->u.list.n = (int)(n / 2), l->u.list.items = rows;
  return l;
}

/* Runs the kernel of the static op this dyn op reuses (ops/dyn.h) on
 * in[0..nin) with the call's attributes plus key = val (replacing one of
 * that name). */
static bool run_static(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs,
                       const char *key, AttrValue *val, int nout, RtTensor *const *out) {
  const KernelDef *k = kernels_get(dyn_static_op(kx->rel.op));
  if (!k) return kernel_fail(kx, "%s: no kernel for the static form", kx->op);
  if (!key) return k->fn(kx, nin, in, attrs, nout, out);
  if (!val) return false;
  int n = attrs ? attrs->n : 0, m = 0;
  Attrs *a = attrs_new(&kx->arena, n + 1);
  for (int i = 0; i < n; i++)
    if (strcmp(attrs->keys[i], key) != 0)
      a->keys[m] = attrs->keys[i], a->vals[m++] = attrs->vals[i];
  a->keys[m] = key, a->vals[m++] = val, a->n = m;
  return k->fn(kx, nin, in, a, nout, out);
}

static bool k_dyn_tile(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return run_static(kx, 1, in, attrs, "reps", ints_attr(kx, in[1], false), nout, out);
}

static bool k_dyn_topk(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  AttrValue *k = attr_int(&kx->arena, rt_get_i64(in[1], 0), DT_INT64);
  return run_static(kx, 1, in, attrs, "k", k, nout, out);
}

static bool k_dyn_one_hot(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                          RtTensor *const *out) {
  AttrValue *d = attr_int(&kx->arena, rt_get_i64(in[3], 0), DT_INT64);
  return run_static(kx, 3, in, attrs, "depth", d, nout, out);
}

static bool k_dyn_zeros(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  return run_static(kx, 0, in, attrs, NULL, NULL, nout, out);
}

static bool k_dyn_ones(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                       RtTensor *const *out) {
  return run_static(kx, 0, in, attrs, NULL, NULL, nout, out);
}

static bool k_dyn_pad(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  RtTensor *args[2] = {in[0], in[2]};
  return run_static(kx, 2, args, attrs, "pad_width", ints_attr(kx, in[1], true), nout, out);
}

/* dyn.sum, dyn.mean, ...: the static reduction over the listed axes. */
static bool k_dyn_reduce(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  return run_static(kx, 1, in, attrs, "axis", ints_attr(kx, in[1], false), nout, out);
}

/* dyn.split: split at the running sums of the sizes (the relation checked
 * them against the axis). */
static bool k_dyn_split(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                        RtTensor *const *out) {
  AttrValue *l = ints_attr(kx, in[1], false);
  if (!l) return false;
  int64_t at = 0;
  for (int i = 0; i < l->u.list.n; i++) {
    at += l->u.list.items[i]->u.i;
    l->u.list.items[i] = attr_int(&kx->arena, at, DT_INT64);
  }
  l->u.list.n = l->u.list.n ? l->u.list.n - 1 : 0;
  return run_static(kx, 1, in, attrs, "indices_or_sections", l, nout, out);
}

/* Runs op's kernel on one tensor with attrs {axis: a}. */
static bool run_on_axis(KernelCtx *kx, const char *op, RtTensor *x, const Attrs *base, int64_t a,
                        RtTensor *o) {
  const KernelDef *k = kernels_get(ops_lookup(op));
  if (!k) return kernel_fail(kx, "%s: no kernel for %s", kx->op, op);
  int n = base ? base->n : 0, m = 0;
  Attrs *at = attrs_new(&kx->arena, n + 1);
  for (int i = 0; i < n; i++)
    if (strcmp(base->keys[i], "axis") && strcmp(base->keys[i], "reverse"))
      at->keys[m] = base->keys[i], at->vals[m++] = base->vals[i];
  at->keys[m] = "axis", at->vals[m++] = attr_int(&kx->arena, a, DT_INT64), at->n = m;
  return k->fn(kx, 1, &x, at, 1, &o);
}

/* dyn.cumsum: cumsum along the axis; reverse: on the data reversed along
 * it, reversed back. */
static bool k_dyn_cumsum(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out) {
  int64_t a = rt_get_i64(in[1], 0);
  bool rev = kattr_bool(kx, attrs, "reverse");
  if (!kernel_attrs_ok(kx)) return false;
  if (!rev) return run_on_axis(kx, "cumsum", in[0], attrs, a, out[0]);
  RtTensor *r = rt_tensor_new(in[0]->dtype, in[0]->ndim, in[0]->shape, kx->err, sizeof kx->err);
  RtTensor *c =
      r ? rt_tensor_new(out[0]->dtype, in[0]->ndim, in[0]->shape, kx->err, sizeof kx->err) : NULL;
  bool ok = c && run_on_axis(kx, "reverse", in[0], NULL, a, r) &&
            run_on_axis(kx, "cumsum", r, attrs, a, c) &&
            run_on_axis(kx, "reverse", c, NULL, a, out[0]);
  if (r) rt_tensor_release(r);
  if (c) rt_tensor_release(c);
  return ok;
}

const KernelDef kernels_family_dyn[] = {
    {"dyn.reshape", kernel_copy_view},
    {"dyn.strided_slice", k_dyn_strided_slice},
    {"dyn.full", k_dyn_full},
    {"dyn.broadcast_to", k_dyn_broadcast_to},
    {"dyn.tile", k_dyn_tile},
    {"dyn.topk", k_dyn_topk},
    {"dyn.one_hot", k_dyn_one_hot},
    {"dyn.zeros", k_dyn_zeros},
    {"dyn.ones", k_dyn_ones},
    {"dyn.squeeze", kernel_copy_view},
    {"dyn.nn.pad", k_dyn_pad},
    {"dyn.sum", k_dyn_reduce},
    {"dyn.mean", k_dyn_reduce},
    {"dyn.max", k_dyn_reduce},
    {"dyn.min", k_dyn_reduce},
    {"dyn.prod", k_dyn_reduce},
    {"dyn.logsumexp", k_dyn_reduce},
    {"dyn.expand_dims", kernel_copy_view},
    {"dyn.split", k_dyn_split},
    {"dyn.cumsum", k_dyn_cumsum},
    {NULL, NULL},
};
