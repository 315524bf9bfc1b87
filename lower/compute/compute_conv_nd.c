/* compute_conv_nd.c — compute rules (lower/compute/compute.h) of nn.conv1d,
 * nn.conv3d, nn.conv1d_transpose and nn.conv2d_transpose (materialized).
 *
 * One direct schedule for all four, with S = 1 to 3 spatial dims: for each
 * batch, output channel (in parallel) and output position but the last
 * dim, an accumulator row as long as the last output dim sums, over the
 * group's input channels and the taps (depth, height, width), the product
 * of a weight and an input element, the row vectorized; then the row is
 * stored.  That is the reference kernel's order for every output element
 * (kernels/kernels_nn_conv.c: input channel, then taps), and the sums are
 * in float64 for float results and in the integer result's dtype,
 * wrapping, for integer ones (the kernel's wrapping 64-bit sum narrowed),
 * so the results agree with the kernel bit for bit.
 *
 * A tap reads the input position of an output position o and a tap t:
 *   convolution  p = o * stride - pad_before + t * dilation, valid in [0, in)
 *   transposed   p = (o + pad_before - t * dilation) / stride, valid when the
 *                numerator is a non-negative multiple of the stride and
 *                p < in (the gather form of the kernel's scatter).
 * Outer dims skip invalid taps with an `if`; along the row a select keeps
 * the sum, the load's index clamped into the input, except that a
 * transposed convolution scatters along its row as the kernel does (each
 * input column and tap adds to the output column it reaches), which tries
 * no tap that the stride drops.
 *
 * Layouts: a convolution takes the data and weight layouts nn_conv_axes
 * reads (NWC, NDHWC, WIO, ...; the result has the data's layout).  A
 * transposed convolution has NC... data and its weight's channel axes as
 * the relation reads them (ops/nn_conv.c): (C, O/groups, k...) for OIW and
 * IOHW, the other order for IOW and OIHW.  The output sizes must be
 * constants (they size the loops and the accumulator row). */
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/nn_int.h"

enum { MAX_AXES = 2 + NN_MAX_SPATIAL };

typedef struct ConvNd {
  int S;
  bool transpose;
  const LTensor *x, *w;
  DType acc; /* float64, or the integer result's dtype */
  int64_t s[NN_MAX_SPATIAL], d[NN_MAX_SPATIAL], lo[NN_MAX_SPATIAL];
  PrimExpr *in[NN_MAX_SPATIAL], *k[NN_MAX_SPATIAL], *out[NN_MAX_SPATIAL];
  PrimExpr *N, *O, *cg, *og; /* channels per group: input, output */
  int64_t groups;
  /* the data's N, C, spatial axes; the weight's axes of the output channel
   * (per group when transposed), the input channel, the taps */
  NnConvAxes ax;
} ConvNd;

/* Where one output row's terms come from. */
typedef struct Row {
  Buffer *acc;
  PrimExpr *n, *o, *ci;
  PrimExpr *opos[NN_MAX_SPATIAL]; /* output position (all but the last dim) */
  PrimExpr *ipos[NN_MAX_SPATIAL]; /* input position */
  PrimExpr *tap[NN_MAX_SPATIAL];
} Row;

static PrimExpr *and_(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_AND, a, b); }

/* The n indices idx (plain order) put on the axes of a layout. */
static PrimExpr **placed(PrimExpr **out, const int *axes, PrimExpr *const *idx, int n) {
  for (int j = 0; j < n; j++) out[axes[j]] = idx[j];
  return out;
}

/* The transposed ops' axes: NC... data; the weight's input-channel axis as
 * the relation reads it (see the comment at the top). */
static bool transposed_axes(LowerCx *L, const Expr *call, ConvNd *c) {
  const char *kl = op_attr_str(lc_arena(L), call, "kernel_layout");
  const char *dl = op_attr_str(lc_arena(L), call, "data_layout");
  if (strncmp(dl, "NC", 2) != 0 || (strncmp(kl, "OI", 2) != 0 && strncmp(kl, "IO", 2) != 0))
    return lc_fail(L, "%s: layouts %s, %s", call->u.call.fn->u.op.name, dl, kl), false;
  bool io = kl[0] == 'I', in_first = c->S == 1 ? !io : io;
  for (int i = 0; i < MAX_AXES; i++) c->ax.x[i] = c->ax.w[i] = i;
  c->ax.w[0] = in_first ? 1 : 0, c->ax.w[1] = in_first ? 0 : 1;
  return true;
}

/* Strides, dilation, the padding before, and the layouts' axes. */
static bool nd_attrs(LowerCx *L, const Expr *call, ConvNd *c) {
  RelCtx cx;
  nn_call_ctx(&cx, lc_arena(L), call);
  NnWindow w = {.S = c->S};
  if (!nn_window_attrs(&cx, call->u.call.attrs, &w))
    return lc_fail(L, "%s: %s", cx.op_name, cx.err), false;
  for (int i = 0; i < c->S; i++) c->s[i] = w.stride[i], c->d[i] = w.dil[i], c->lo[i] = w.lo[i];
  if (c->transpose) return transposed_axes(L, call, c);
  if (!nn_conv_axes(&cx, call->u.call.attrs, c->S, &c->ax))
    return lc_fail(L, "%s: %s", cx.op_name, cx.err), false;
  return true;
}

/* Float operands and result of one dtype: float64 sums; integer operands
 * and result: sums in the result's dtype (lc_product_acc).  False when
 * neither. */
static bool nd_dtypes(const LTensor *x, const LTensor *w, DType out, DType *acc) {
  *acc = lc_product_acc(x->dtype, w->dtype, out);
  return *acc != DT_INVALID;
}

/* The sizes: batch, channels per group, spatial dims in and out (the
 * output's from the type: constants). */
static bool nd_sizes(LowerCx *L, const Expr *call, ConvNd *c, int64_t groups) {
  const Type *ty = lc_result_type(call);
  const int *xa = c->ax.x, *wa = c->ax.w;
  c->N = c->x->shape[xa[0]];
  for (int i = 0; i < c->S; i++) {
    Dim od = ty->u.tensor.dims[xa[2 + i]];
    if (od.kind != DIM_CONST) return lc_fail(L, "output size known only at run time"), false;
    c->out[i] = lc_int(L, od.value);
    c->in[i] = c->x->shape[xa[2 + i]], c->k[i] = c->w->shape[wa[2 + i]];
  }
  Dim od = ty->u.tensor.dims[xa[1]];
  if (od.kind != DIM_CONST) return lc_fail(L, "output channels known only at run time"), false;
  c->O = lc_int(L, od.value), c->og = lc_int(L, od.value / groups);
  c->cg = c->w->shape[wa[1]];
  if (c->transpose) {
    int64_t C = lc_const(c->x->shape[xa[1]]);
    if (C < 0) return lc_fail(L, "input channels known only at run time"), false;
    c->cg = lc_int(L, C / groups);
  }
  return true;
}

/* The (clamped) input position along dim i of output position o and tap
 * t, and when it is valid. */
static PrimExpr *src_pos(LowerCx *L, const ConvNd *c, int i, PrimExpr *o, PrimExpr *t,
                         PrimExpr **valid) {
  PrimExpr *zero = lc_int(L, 0), *p;
  if (!c->transpose) {
    p = lc_plus(L, lc_minus(L, lc_times(L, o, lc_int(L, c->s[i])), lc_int(L, c->lo[i])),
                lc_times(L, t, lc_int(L, c->d[i])));
    *valid = and_(L, lc_bin(L, PB_GE, p, zero), lc_bin(L, PB_LT, p, c->in[i]));
  } else {
    PrimExpr *num =
        lc_minus(L, lc_plus(L, o, lc_int(L, c->lo[i])), lc_times(L, t, lc_int(L, c->d[i])));
    p = lc_bin(L, PB_DIV, num, lc_int(L, c->s[i]));
    *valid = and_(L, lc_bin(L, PB_GE, num, zero), lc_bin(L, PB_LT, p, c->in[i]));
    if (c->s[i] > 1)
      *valid = and_(L, *valid, lc_bin(L, PB_EQ, lc_bin(L, PB_MOD, num, lc_int(L, c->s[i])), zero));
  }
  PrimExpr *hi = lc_minus(L, c->in[i], lc_int(L, 1));
  return lc_call(L, PI_MAX, zero, lc_call(L, PI_MIN, p, hi, NULL), NULL);
}

/* The product of the weight and input elements of r's taps, in the
 * accumulator's dtype. */
static PrimExpr *term(LowerCx *L, const ConvNd *c, const Row *r) {
  PrimExpr *g = c->groups == 1 ? lc_int(L, 0) : lc_bin(L, PB_DIV, r->o, c->og);
  PrimExpr *chan = lc_plus(L, lc_times(L, g, c->cg), r->ci);
  PrimExpr *xi[MAX_AXES] = {r->n, chan}, *wi[MAX_AXES] = {r->o, r->ci}, *xat[MAX_AXES],
           *wat[MAX_AXES];
  if (c->transpose) wi[0] = lc_bin(L, PB_MOD, r->o, c->og), wi[1] = chan;
  for (int i = 0; i < c->S; i++) xi[2 + i] = r->ipos[i], wi[2 + i] = r->tap[i];
  PrimExpr *wv = lc_at(L, c->w, placed(wat, c->ax.w, wi, 2 + c->S));
  PrimExpr *xv = lc_at(L, c->x, placed(xat, c->ax.x, xi, 2 + c->S));
  return lc_times(L, lc_cast(L, c->acc, wv), lc_cast(L, c->acc, xv));
}

/* A transposed convolution's last dim scatters, as the kernel does: for
 * each tap t and input column iw, acc[iw * stride - pad + t * dilation] +=
 * term where that column is inside the row (no tap is tried and dropped,
 * and each output element still adds its terms in the order input
 * channel, taps). */
static void last_taps_scatter(LowerCx *L, const ConvNd *c, Row *r) {
  int i = c->S - 1;
  TirVar *t = lc_tvar(L, "t", c->k[i]), *iw = lc_tvar(L, "iw", c->in[i]);
  PrimExpr *ox =
      lc_plus(L, lc_minus(L, lc_times(L, lc_var(L, iw), lc_int(L, c->s[i])), lc_int(L, c->lo[i])),
              lc_times(L, lc_var(L, t), lc_int(L, c->d[i])));
  r->ipos[i] = lc_var(L, iw), r->tap[i] = lc_var(L, t);
  PrimExpr *inside = and_(L, lc_bin(L, PB_GE, ox, lc_int(L, 0)), lc_bin(L, PB_LT, ox, c->out[i]));
  lc_open(L);
  lc_open(L);
  lc_open(L);
  lc_store(L, r->acc, 1, &ox, lc_plus(L, lc_load(L, r->acc, 1, &ox), term(L, c, r)));
  lc_if(L, inside, lc_close(L));
  lc_for(L, LOOP_RANGE, iw, c->in[i], lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* The last dim's taps: acc[ow] += term where the tap is inside. */
static void last_taps(LowerCx *L, const ConvNd *c, Row *r) {
  int i = c->S - 1;
  if (c->transpose) {
    last_taps_scatter(L, c, r);
    return;
  }
  TirVar *t = lc_tvar(L, "t", c->k[i]), *ow = lc_tvar(L, "ow", c->out[i]);
  PrimExpr *valid, *ai = lc_var(L, ow);
  r->ipos[i] = src_pos(L, c, i, lc_var(L, ow), lc_var(L, t), &valid);
  r->tap[i] = lc_var(L, t);
  PrimExpr *cur = lc_load(L, r->acc, 1, &ai);
  lc_open(L);
  lc_open(L);
  lc_store(L, r->acc, 1, &ai, lc_call(L, PI_SELECT, valid, lc_plus(L, cur, term(L, c, r)), cur));
  lc_for(L, LOOP_VECTORIZED, ow, c->out[i], lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* The taps of dims i.. (outer dims skip invalid taps with an if). */
static void taps(LowerCx *L, const ConvNd *c, Row *r, int i) {
  if (i == c->S - 1) {
    last_taps(L, c, r);
    return;
  }
  TirVar *t = lc_tvar(L, "t", c->k[i]);
  PrimExpr *valid;
  r->ipos[i] = src_pos(L, c, i, r->opos[i], lc_var(L, t), &valid);
  r->tap[i] = lc_var(L, t);
  lc_open(L);
  lc_open(L);
  taps(L, c, r, i + 1);
  lc_if(L, valid, lc_close(L));
  lc_for(L, LOOP_RANGE, t, c->k[i], lc_close(L));
}

/* One output row: the sums into a zeroed accumulator row, then the row
 * stored into out. */
static void out_row(LowerCx *L, const ConvNd *c, Row *r, Buffer *out) {
  PrimExpr *len = c->out[c->S - 1];
  r->acc = lc_alloc(L, "acc", c->acc, 1, &len);
  TirVar *ci = lc_tvar(L, "c", c->cg), *ow = lc_tvar(L, "ow", len);
  r->ci = lc_var(L, ci);
  lc_open(L);
  taps(L, c, r, 0);
  lc_for(L, LOOP_RANGE, ci, c->cg, lc_close(L));
  PrimExpr *oi[MAX_AXES] = {r->n, r->o}, *ai = lc_var(L, ow), *at[MAX_AXES];
  for (int i = 0; i < c->S - 1; i++) oi[2 + i] = r->opos[i];
  oi[1 + c->S] = ai;
  lc_open(L);
  lc_store(L, out, 2 + c->S, placed(at, c->ax.x, oi, 2 + c->S), lc_load(L, r->acc, 1, &ai));
  lc_for(L, LOOP_VECTORIZED, ow, len, lc_close(L));
}

/* Loops over the output positions of dims i.. but the last, then a row. */
static void out_positions(LowerCx *L, const ConvNd *c, Row *r, Buffer *out, int i) {
  if (i == c->S - 1) {
    out_row(L, c, r, out);
    return;
  }
  TirVar *p = lc_tvar(L, "o", c->out[i]);
  r->opos[i] = lc_var(L, p);
  lc_open(L);
  out_positions(L, c, r, out, i + 1);
  lc_for(L, LOOP_RANGE, p, c->out[i], lc_close(L));
}

/* for n, o (parallel), positions: rows. */
static void nd_loops(LowerCx *L, const ConvNd *c, Buffer *out) {
  TirVar *n = lc_tvar(L, "n", c->N), *o = lc_tvar(L, "o", c->O);
  Row r = {.n = lc_var(L, n), .o = lc_var(L, o)};
  lc_open(L);
  lc_open(L);
  out_positions(L, c, &r, out, 0);
  lc_for(L, LOOP_PARALLEL, o, c->O, lc_close(L));
  lc_for(L, LOOP_RANGE, n, c->N, lc_close(L));
}

static LTensor *conv_nd(LowerCx *L, const Expr *call, LTensor **in, int nin, int S,
                        bool transpose) {
  const char *name = call->u.call.fn->u.op.name;
  ConvNd c = {.S = S, .transpose = transpose};
  if (nin != 2 || in[0]->ndim != 2 + S || in[1]->ndim != 2 + S)
    return lc_fail(L, "%s of this rank", name);
  c.x = in[0], c.w = in[1];
  DType dt = lc_result_type(call)->u.tensor.dtype;
  if (!nd_dtypes(c.x, c.w, dt, &c.acc))
    return lc_fail(L, "%s of %s and %s to %s", name, dtype_name(c.x->dtype), dtype_name(c.w->dtype),
                   dtype_name(dt));
  int64_t groups = c.groups = op_attr_int(call, "groups");
  if (groups < 1 || !nd_attrs(L, call, &c) || !nd_sizes(L, call, &c, groups))
    return lc_failed(L) ? NULL : lc_fail(L, "%s: groups", name);
  PrimExpr *plain[MAX_AXES] = {c.N, c.O}, *shape[MAX_AXES];
  for (int i = 0; i < S; i++) plain[2 + i] = c.out[i];
  Buffer *out = lc_result_buffer(L, call, dt, 2 + S, placed(shape, c.ax.x, plain, 2 + S));
  if (!out) return NULL;
  nd_loops(L, &c, out);
  lc_mark_total(L, out); /* each element stored once, from its row */
  return lc_failed(L) ? NULL : lc_from_buffer(L, call, out);
}

static LTensor *compute_conv1d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 1, false);
}

static LTensor *compute_conv3d(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 3, false);
}

static LTensor *compute_conv1d_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 1, true);
}

static LTensor *compute_conv2d_transpose(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  return conv_nd(L, call, in, nin, 2, true);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_conv_nd[] = {
    {"nn.conv1d", compute_conv1d},
    {"nn.conv3d", compute_conv3d},
    {"nn.conv1d_transpose", compute_conv1d_transpose},
    {"nn.conv2d_transpose", compute_conv2d_transpose},
    {NULL, NULL},
};
