/* alter_layout.c — AlterOpLayout (after TVM's, for x86): convolutions move
 * to the blocked layouts of nn.contrib_conv2d_NCHWc, and the elementwise
 * ops and pools after them follow, so the layout changes between them
 * cancel.
 *
 * Rules (x NCHW, float, static shapes; lanes = the host's vector width in
 * elements, ops/ops.h's target_vector_bytes):
 *   conv1d       nn.conv1d(x, w) (NCW / OIW, groups 1 or depthwise) →
 *                squeeze(%y, [2]) with %y
 *                the conv2d rule's rewrite of nn.conv2d(expand_dims(x, 2),
 *                expand_dims(w, 2)) (a height-1 image)
 *   conv2d_transpose  nn.conv2d_transpose(x, w) (NCHW, OIHW or IOHW, groups
 *                1, dilation 1) → the conv2d rule's rewrite of
 *                nn.conv2d(nn.dilate(x, strides), w flipped (and
 *                transposed from IOHW), padding k - 1 - padding)
 *   conv1d_transpose  the same through a height-1 conv2d_transpose
 *   conv2d       nn.conv2d(x, w) (NCHW / OIHW, any groups) →
 *                layout_transform(%y, "NCHW<o>c", "NCHW") with
 *                %y = nn.contrib_conv2d_NCHWc(xb, layout_transform(w, "OIHW",
 *                "OIHW<i>i<o>o")); xb is the blocked form of x when it has
 *                one (below), else layout_transform(x, "NCHW", "NCHW<i>c").
 *                o: lanes when it divides the output channels, else the
 *                largest divisor up to lanes; i: x's block when it has one,
 *                else chosen the same way (depthwise: i = o = x's block, and
 *                the weight is OIHW1i<o>o; grouped: o the largest divisor
 *                up to lanes that holds whole groups or part of one, i
 *                x's block when it divides the channels per group, else
 *                their largest divisor up to lanes).  More output
 *                channels than lanes in blocks under half the lanes (58
 *                channels: 2) leave the convolution NCHW, and so does a
 *                1x1 one (stride 1, groups 1) whose block fills under 3/4
 *                of its registers but whose output rows fill at least 3/4
 *                of theirs (the pointwise schedule computes it in place)
 *   pointwise    op(x1, ...) for an elementwise op (the elemwise family,
 *                nn.relu, nn.leaky_relu) of one or two operands, when one is
 *                blocked: the op on the blocked forms (the other operand a
 *                scalar, a per-channel tensor reshaped to (1, C/c, 1, 1,
 *                c), an NCHW tensor of x's shape transformed, or a blocked
 *                rewrite written inline: `let ...; layout_transform(%v,
 *                "NCHW<c>c", "NCHW")` is used as its %v; the blocked operand
 *                itself may be such a call nested in this one:
 *                add(multiply(x, s), b)) →
 *                layout_transform(%y, "NCHW<c>c", "NCHW")
 *   bias_add     nn.bias_add(x, b) of a blocked x: add with b reshaped
 *   pool         nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d,
 *                nn.global_avg_pool2d with layout NCHW of a blocked x: the
 *                same with layout NCHW<c>c
 *   conv3d       nn.conv3d(x, w) (NCDHW / OIDHW, groups 1, output channels a
 *                multiple of lanes) → nn.conv3d(x, layout_transform(w,
 *                "OIDHW", "DHWIO"), kernel_layout="DHWIO"): the blocked 3-D
 *                schedule (lower/compute/compute_conv_nd.c) then reads each
 *                block's lanes of output channels in place, with no packing
 *                per call (the transform folds once into the constant)
 *   concat       concatenate((x1, ...), axis=1) of NCHW tensors whose blocked
 *                forms have one block c: the same on those forms
 *   cancel       layout_transform(layout_transform(x, A, B), B, A) → x
 * "x has a blocked form" means x is a variable bound to
 * layout_transform(%t, "NCHW<c>c", "NCHW") with %t a variable: the graph
 * form TVM's text and the ONNX importer use (`%3 = nn.conv2d(...);`).
 * A transform back to NCHW that nothing uses any more goes with the dead
 * bindings; the weights' transforms are calls on constants, which
 * FoldConstant evaluates once (the weights are then stored blocked). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/nn_int.h"
#include "ops/ops.h"
#include "passes/graph_int.h"

typedef struct Blk {
  Expr *inner; /* the blocked value (a variable, copied for each use) */
  int64_t c;   /* its channel block */
} Blk;

static const char *nchwc(Graph *g, int64_t c) {
  return arena_printf(g->a, "NCHW%lldc", (long long)c);
}

/* The attributes of a call with some keys set to strings (added if
 * missing). */
static Attrs *attrs_with(Graph *g, const Attrs *in, int n, const char **keys, const char **vals) {
  int have = in ? in->n : 0, extra = 0;
  for (int k = 0; k < n; k++) extra += !attrs_get(in, keys[k]);
  Attrs *at = attrs_new(g->a, have + extra);
  for (int i = 0; i < have; i++) at->keys[i] = in->keys[i], at->vals[i] = in->vals[i];
  int next = have;
  for (int k = 0; k < n; k++) {
    int slot = next;
    for (int i = 0; i < have; i++)
      if (strcmp(in->keys[i], keys[k]) == 0) slot = i;
    if (slot == next) next++;
    at->keys[slot] = keys[k], at->vals[slot] = attr_str(g->a, vals[k]);
  }
  return at;
}

static Expr *transform(Graph *g, Expr *x, const char *src, const char *dst, Span sp) {
  const char *keys[2] = {"src_layout", "dst_layout"}, *vals[2] = {src, dst};
  return graph_call1(g, GOP_LAYOUT_TRANSFORM, x, attrs_with(g, NULL, 2, keys, vals), sp);
}

/* The blocked form of a rewritten argument (see the top). */
static bool blocked_arg(Graph *g, Expr *arg, Blk *b) {
  if (arg->kind != EX_VAR) return false;
  Expr *v = graph_value(g, arg);
  if (!graph_is_call(v, GOP_LAYOUT_TRANSFORM)) return false;
  const char *src = op_attr_str(g->a, v, "src_layout"), *dst = op_attr_str(g->a, v, "dst_layout");
  Expr *in = v->u.call.args[0];
  if (strcmp(dst, "NCHW") != 0 || !nn_layout_nchwc(src, &b->c) || in->kind != EX_VAR) return false;
  b->inner = graph_copy(g, in);
  return true;
}

/* The channel block for n channels: the vector width when it divides n,
 * else the largest divisor of n below it. */
static int64_t pick_block(int64_t n, DType dt) {
  int64_t lanes = target_vector_bytes() / dtype_bytes(dt);
  for (int64_t b = lanes; b > 1; b--)
    if (n % b == 0) return b;
  return 1;
}

enum { L1_WEIGHTS = 32 << 10 };

/* The share of its vector registers a block of b lanes fills. */
static double block_fill(int64_t b, int64_t lanes) {
  return (double)b / (double)(((b + lanes - 1) / lanes) * lanes);
}

/* The output channel block: pick_block's, unless a block of more than a
 * vector's lanes that is a multiple of half of them (whole and half
 * registers, which vectorize well; at most three registers) fills its
 * registers better, or pick_block's is no such multiple (the best such
 * block): 24 channels with AVX-512 are a block of 24 (MobileNet's 144 -> 24
 * convolution: 114 GFLOP/s, against 46 with blocks of 12), 40 of 40 (not
 * 10), 72 of 24, 120 of 40 (its 5x5 depthwise convolution: 53 GFLOP/s,
 * against 30 with blocks of 15), 200 of 40.  Only when
 * a block's weights (per: elements per output channel) fit in L1_WEIGHTS
 * bytes, since a tile reads all of them: SqueezeNet's 512 -> 1000 in blocks
 * of 40 ran at 31 GFLOP/s, in blocks of 10 at 98. */
static int64_t pick_out_block(int64_t n, DType dt, int64_t per) {
  int64_t lanes = target_vector_bytes() / dtype_bytes(dt), half = lanes / 2;
  int64_t pb = pick_block(n, dt), best = pb;
  if (n % lanes == 0 || n <= lanes || half < 2) return pb;
  double fill = pb % half ? 0 : block_fill(pb, lanes);
  for (int64_t b = lanes + half; b <= 3 * lanes; b += half) {
    bool fits = b * per * dtype_bytes(dt) <= L1_WEIGHTS;
    if (n % b == 0 && fits && block_fill(b, lanes) > fill) best = b, fill = block_fill(b, lanes);
  }
  return best;
}

/* The grouped convolution's knob: output channels per block at most (0:
 * one vector register).  A block holds whole groups or part of one, so
 * that the compute rule's block-diagonal weights stay one register tile
 * (lower/compute/compute_conv.c). */
enum { GROUP_OB_MAX = 0 };

/* The output block of a grouped convolution of n channels in groups of og:
 * the largest divisor of n up to the knob that is a multiple or a divisor
 * of og. */
static int64_t pick_group_block(int64_t n, int64_t og, DType dt) {
  int64_t max = target_vector_bytes() / dtype_bytes(dt);
  if (GROUP_OB_MAX > 0 && GROUP_OB_MAX < max) max = GROUP_OB_MAX;
  for (int64_t b = max; b > 1; b--)
    if (n % b == 0 && (b % og == 0 || og % b == 0)) return b;
  return 1;
}

/* Whether an output block of b of n channels is too narrow to be worth the
 * blocked layout: channel counts with no divisor near the vector width
 * (ShuffleNetV2's 58 and 116 = 2 x 29 and 4 x 29) keep NCHW, where the
 * compute rule's blocks are whole vectors and the last one partial. */
static bool narrow_block(int64_t n, int64_t b, DType dt) {
  int64_t lanes = target_vector_bytes() / dtype_bytes(dt);
  return n > lanes && b * 2 < lanes;
}

/* Whether all of a call's int list attribute key (at most 4) equals v. */
static bool ints_all(const Expr *r, const char *key, int64_t v) {
  int64_t a[4];
  int n = op_attr_ints(r, key, a, 4);
  for (int i = 0; i < n; i++)
    if (a[i] != v) return false;
  return n >= 0;
}

/* Whether a 1x1 convolution (stride 1, no padding, groups 1) is better
 * left NCHW for the pointwise schedule (lower/compute/compute_conv_1x1.c):
 * its output block of ob fills under 3/4 of its vector registers
 * (SqueezeNet's 1000 channels: blocks of 10 in 16 lanes) while its output
 * rows of ow columns fill at least 3/4 of theirs. */
static bool pointwise_better(const Expr *r, const Type *wt, int64_t ob, int64_t ow, DType dt) {
  int64_t lanes = target_vector_bytes() / dtype_bytes(dt), regs = (ow + lanes - 1) / lanes;
  if (wt->u.tensor.dims[2].value != 1 || wt->u.tensor.dims[3].value != 1 ||
      op_attr_int(r, "groups") != 1 || !ints_all(r, "strides", 1) || !ints_all(r, "padding", 0))
    return false;
  return block_fill(ob, lanes) < 0.75 && ow <= 4 * lanes && ow * 4 >= regs * lanes * 3;
}

/* `let %y = value; layout_transform(%y, "NCHW<c>c", "NCHW")`, reported. */
static Expr *back_to_nchw(Graph *g, const char *rule, Expr *e, RwBlock *blk, Expr *value,
                          int64_t c) {
  if (!value->ty) {
    rw_block_free(blk);
    return NULL;
  }
  Expr *y = graph_bind(g, blk, value, e->span);
  Expr *out = transform(g, y, nchwc(g, c), "NCHW", e->span);
  Type *ty = out->ty;
  out = rw_block_finish(g->a, blk, out);
  out->ty = ty;
  graph_report(g, rule, e, out);
  return out;
}

static const char *str_attr(Graph *g, const Expr *call, const char *key) {
  return op_attr_str(g->a, call, key);
}

/* The dtypes the blocked convolution computes (float32, float64): a
 * float16 convolution keeps its layout and the general schedule. */
static bool blocked_dtype(DType dt) { return dt == DT_FLOAT32 || dt == DT_FLOAT64; }

/* A float NCHW tensor type with static dims. */
static bool nchw_static(const Type *t) {
  return t && t->kind == TY_TENSOR && t->u.tensor.ndim == 4 && graph_static(t) &&
         blocked_dtype(t->u.tensor.dtype);
}

/* ───────────────────────────── conv2d ───────────────────────────── */

static Expr *alter_conv(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0], *w = r->u.call.args[1];
  const Type *xt = graph_tensor_of(x), *wt = graph_tensor_of(w), *yt = graph_tensor_of(r);
  const char *ol = str_attr(g, r, "out_layout"), *od = str_attr(g, r, "out_dtype");
  if (!nchw_static(xt) || !nchw_static(wt) || !nchw_static(yt) ||
      wt->u.tensor.dtype != xt->u.tensor.dtype || strcmp(str_attr(g, r, "data_layout"), "NCHW") ||
      strcmp(str_attr(g, r, "kernel_layout"), "OIHW") || (ol[0] && strcmp(ol, "NCHW")) ||
      (od[0] && strcmp(od, dtype_name(xt->u.tensor.dtype))))
    return r;
  DType dt = xt->u.tensor.dtype;
  int64_t C = xt->u.tensor.dims[1].value, O = wt->u.tensor.dims[0].value;
  int64_t cg = wt->u.tensor.dims[1].value, groups = op_attr_int(r, "groups");
  bool dw = groups > 1 && groups == C && cg == 1 && O == C;
  if (groups < 1 || C % groups || O % groups) return r;
  Blk b;
  bool have = blocked_arg(g, x, &b) && C % b.c == 0;
  int64_t cb = have ? b.c : pick_block(C, dt), ib = cb;
  int64_t ob =
      dw ? cb : pick_out_block(O, dt, cg * wt->u.tensor.dims[2].value * wt->u.tensor.dims[3].value);
  if (groups > 1 && !dw) /* grouped: blocks of whole groups, or parts of one */
    ob = pick_group_block(O, O / groups, dt), ib = cg % cb ? pick_block(cg, dt) : cb;
  if (narrow_block(O, ob, dt) || pointwise_better(r, wt, ob, yt->u.tensor.dims[3].value, dt))
    return r;
  RwBlock blk = {0};
  Expr *xb = have ? b.inner : transform(g, x, "NCHW", nchwc(g, cb), e->span);
  const char *kl = arena_printf(g->a, "OIHW%lldi%lldo", (long long)(dw ? 1 : ib), (long long)ob);
  Expr *args[2] = {xb, transform(g, w, "OIHW", kl, e->span)};
  const char *keys[3] = {"data_layout", "kernel_layout", "out_layout"};
  const char *vals[3] = {nchwc(g, cb), kl, nchwc(g, ob)};
  Expr *conv = graph_call(g, GOP_CONV2D_NCHWC, 2, args,
                          attrs_with(g, r->u.call.attrs, 3, keys, vals), e->span);
  Expr *out = back_to_nchw(g, "conv2d", e, &blk, conv, ob);
  return out ? out : r;
}

/* ───────────────────────────── conv3d ───────────────────────────── */

/* A float 5-D tensor type with static dims. */
static bool ncdhw_static(const Type *t) {
  return t && t->kind == TY_TENSOR && t->u.tensor.ndim == 5 && graph_static(t) &&
         blocked_dtype(t->u.tensor.dtype);
}

/* nn.conv3d with its OIDHW weight transposed to DHWIO (see the top). */
static Expr *alter_conv3d(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0], *w = r->u.call.args[1];
  const Type *xt = graph_tensor_of(x), *wt = graph_tensor_of(w), *yt = graph_tensor_of(r);
  const char *ol = str_attr(g, r, "out_layout"), *od = str_attr(g, r, "out_dtype");
  if (!ncdhw_static(xt) || !ncdhw_static(wt) || !ncdhw_static(yt) ||
      wt->u.tensor.dtype != xt->u.tensor.dtype || op_attr_int(r, "groups") != 1 ||
      strcmp(str_attr(g, r, "data_layout"), "NCDHW") ||
      strcmp(str_attr(g, r, "kernel_layout"), "OIDHW") || (ol[0] && strcmp(ol, "NCDHW")) ||
      (od[0] && strcmp(od, dtype_name(xt->u.tensor.dtype))))
    return r;
  int64_t lanes = target_vector_bytes() / dtype_bytes(xt->u.tensor.dtype);
  if (wt->u.tensor.dims[0].value % lanes) return r; /* packed per call, zero-filled */
  const char *key = "kernel_layout", *val = "DHWIO";
  Expr *args[2] = {x, transform(g, w, "OIDHW", "DHWIO", e->span)};
  Expr *out =
      graph_call(g, GOP_CONV3D, 2, args, attrs_with(g, r->u.call.attrs, 1, &key, &val), e->span);
  if (!out->ty) return r;
  graph_report(g, "conv3d", e, out);
  return out;
}

/* ───────────────────────────── conv1d ───────────────────────────── */

static bool ncw_static(const Type *t) {
  return t && t->kind == TY_TENSOR && t->u.tensor.ndim == 3 && graph_static(t) &&
         blocked_dtype(t->u.tensor.dtype);
}

/* A 1-D window's strides, dilation and padding (one or two values) as a
 * height-1 2-D window's: s [1, s], d [1, d], pad [0, p0, 0, p1]; false
 * when they are not of that form. */
static bool window_1d_as_2d(const Expr *r, int64_t *s, int64_t *d, int64_t *pad) {
  int64_t p[2];
  int np = op_attr_ints(r, "padding", p, 2);
  s[0] = d[0] = 1, pad[0] = pad[2] = 0;
  if (op_attr_ints(r, "strides", s + 1, 1) != 1 || op_attr_ints(r, "dilation", d + 1, 1) != 1 ||
      (np != 1 && np != 2))
    return false;
  pad[1] = p[0], pad[3] = np == 2 ? p[1] : p[0];
  return true;
}

/* conv1d's attributes as a height-1 conv2d's (kernel_size [1, k]); NULL
 * when they are not of that form. */
static Attrs *conv1d_as_2d(Graph *g, const Expr *r, int64_t k) {
  int64_t s[2], d[2], pad[4], ks[2] = {1, k};
  if (!window_1d_as_2d(r, s, d, pad)) return NULL;
  Attrs *at = graph_attrs(g, 5);
  graph_attr_ints(g, at, 0, "strides", 2, s);
  graph_attr_ints(g, at, 1, "padding", 4, pad);
  graph_attr_ints(g, at, 2, "dilation", 2, d);
  graph_attr_int(g, at, 3, "groups", op_attr_int(r, "groups"));
  graph_attr_ints(g, at, 4, "kernel_size", 2, ks);
  const char *od = str_attr(g, r, "out_dtype"), *key = "out_dtype";
  return od[0] ? attrs_with(g, at, 1, &key, &od) : at;
}

/* blk's bindings, then those of conv (a 2-D rewrite's let chain), then
 * squeeze(conv's value, [2]): a height-1 result back to 1-D, reported. */
static Expr *squeezed(Graph *g, Expr *e, RwBlock *blk, Expr *conv, const char *rule) {
  for (; conv->kind == EX_LET; conv = conv->u.let.body)
    rw_block_bind(blk, conv->u.let.var, conv->u.let.value, conv->span);
  Expr *y = graph_bind(g, blk, conv, e->span);
  int64_t two = 2;
  Attrs *sq = graph_attrs(g, 1);
  graph_attr_ints(g, sq, 0, "axis", 1, &two);
  Expr *out = graph_call1(g, GOP_SQUEEZE, y, sq, e->span);
  Type *ty = out->ty;
  out = rw_block_finish(g->a, blk, out);
  out->ty = ty;
  graph_report(g, rule, e, out);
  return out;
}

/* op(expand_dims(x, 2), expand_dims(w, 2), at): a 1-D convolution's
 * operands as a height-1 image and kernel, the image bound in blk. */
static Expr *height1_call(Graph *g, RwBlock *blk, Expr *e, GraphOp op, Expr *x, Expr *w,
                          Attrs *at) {
  Attrs *ax = graph_attrs(g, 1);
  graph_attr_int(g, ax, 0, "axis", 2);
  Expr *args[2] = {graph_bind(g, blk, graph_call1(g, GOP_EXPAND_DIMS, x, ax, e->span), e->span),
                   graph_call1(g, GOP_EXPAND_DIMS, w, ax, e->span)};
  return graph_call(g, op, 2, args, at, e->span);
}

/* nn.conv1d(x, w) (NCW / OIW) as the convolution of a height-1 image,
 * squeeze(conv2d(expand_dims(x, 2), expand_dims(w, 2)), [2]), which the
 * conv2d rule then blocks: the blocked, vectorized schedules instead of
 * conv1d's direct one. */
static Expr *alter_conv1d(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0], *w = r->u.call.args[1];
  const Type *xt = graph_tensor_of(x), *wt = graph_tensor_of(w), *yt = graph_tensor_of(r);
  const char *ol = str_attr(g, r, "out_layout");
  if (!ncw_static(xt) || !ncw_static(wt) || !ncw_static(yt) ||
      strcmp(str_attr(g, r, "data_layout"), "NCW") ||
      strcmp(str_attr(g, r, "kernel_layout"), "OIW") || (ol[0] && strcmp(ol, "NCW")))
    return r;
  int64_t C = xt->u.tensor.dims[1].value, O = wt->u.tensor.dims[0].value;
  int64_t groups = op_attr_int(r, "groups");
  bool dw = groups == C && wt->u.tensor.dims[1].value == 1 && O == C;
  if (groups != 1 && !dw) return r; /* the conv2d rule would not block it */
  Attrs *at = conv1d_as_2d(g, r, wt->u.tensor.dims[2].value);
  if (!at) return r;
  RwBlock blk = {0};
  Expr *c2 = height1_call(g, &blk, e, GOP_CONV2D, x, w, at);
  if (!c2->ty) {
    rw_block_free(&blk);
    return r;
  }
  return squeezed(g, e, &blk, alter_conv(g, e, c2), "conv1d");
}

/* ──────────────────────── conv2d_transpose ──────────────────────── */

/* The four paddings [top, left, bottom, right] of a 1-, 2- or 4-entry
 * list; false for another length. */
static bool pad4(const Expr *r, int64_t *p) {
  int64_t v[4];
  int n = op_attr_ints(r, "padding", v, 4);
  if (n == 1) v[1] = v[2] = v[3] = v[0];
  if (n == 2) v[2] = v[0], v[3] = v[1];
  if (n != 1 && n != 2 && n != 4) return false;
  memcpy(p, v, sizeof v);
  return true;
}

/* w flipped along its spatial axes and, for IOHW (C, O, kh, kw), moved to
 * a convolution's OIHW (O, C, kh, kw); constant-folded for a constant w. */
static Expr *flipped_weight(Graph *g, Expr *w, bool io, Span sp) {
  for (int64_t a = 2; a < 4; a++) {
    Attrs *at = graph_attrs(g, 1);
    graph_attr_int(g, at, 0, "axis", a);
    w = graph_call1(g, GOP_REVERSE, w, at, sp);
  }
  if (!io) return w;
  int64_t perm[4] = {1, 0, 2, 3};
  Attrs *at = graph_attrs(g, 1);
  graph_attr_ints(g, at, 0, "axes", 4, perm);
  return graph_call1(g, GOP_TRANSPOSE, w, at, sp);
}

/* nn.conv2d_transpose(x, w) (NCHW; OIHW or IOHW weights; groups 1,
 * dilation 1) as the convolution of x dilated by the strides, padded by
 * k - 1 - padding (plus output_padding after), with w flipped:
 * conv2d(dilate(x), flip(w)), which the conv2d rule then blocks.  The
 * dilated image's zeros are multiplied too (stride 2: four times the
 * products), at the blocked schedule's speed instead of the direct one's. */
static Expr *alter_conv2d_transpose(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0], *w = r->u.call.args[1];
  const Type *xt = graph_tensor_of(x), *wt = graph_tensor_of(w), *yt = graph_tensor_of(r);
  const char *kl = str_attr(g, r, "kernel_layout"), *ol = str_attr(g, r, "out_layout");
  const char *od = str_attr(g, r, "out_dtype");
  bool io = strcmp(kl, "IOHW") == 0;
  int64_t s[2], d[2], op[2] = {0, 0}, p[4];
  if (!nchw_static(xt) || !nchw_static(wt) || !nchw_static(yt) || (!io && strcmp(kl, "OIHW")) ||
      strcmp(str_attr(g, r, "data_layout"), "NCHW") || (ol[0] && strcmp(ol, "NCHW")) ||
      (od[0] && strcmp(od, dtype_name(xt->u.tensor.dtype))) || op_attr_int(r, "groups") != 1 ||
      op_attr_ints(r, "strides", s, 2) != 2 || op_attr_ints(r, "dilation", d, 2) != 2 ||
      d[0] != 1 || d[1] != 1 || !pad4(r, p) || op_attr_ints(r, "output_padding", op, 2) < 0)
    return r;
  int64_t kh = wt->u.tensor.dims[2].value, kw = wt->u.tensor.dims[3].value;
  int64_t pad[4] = {kh - 1 - p[0], kw - 1 - p[1], kh - 1 - p[2] + op[0], kw - 1 - p[3] + op[1]};
  for (int i = 0; i < 4; i++)
    if (pad[i] < 0) return r; /* a crop, not a padding */
  RwBlock blk = {0};
  if (s[0] > 1 || s[1] > 1) {
    int64_t ds[4] = {1, 1, s[0], s[1]};
    Attrs *da = graph_attrs(g, 1);
    graph_attr_ints(g, da, 0, "strides", 4, ds);
    x = graph_bind(g, &blk, graph_call1(g, GOP_DILATE, x, da, e->span), e->span);
  }
  Attrs *ca = graph_attrs(g, 2);
  int64_t ks[2] = {kh, kw};
  graph_attr_ints(g, ca, 0, "padding", 4, pad);
  graph_attr_ints(g, ca, 1, "kernel_size", 2, ks);
  Expr *args[2] = {x, flipped_weight(g, w, io, e->span)};
  Expr *c2 = graph_call(g, GOP_CONV2D, 2, args, ca, e->span);
  if (!c2->ty || !type_equal(c2->ty, r->ty)) {
    rw_block_free(&blk);
    return r;
  }
  Expr *out = alter_conv(g, e, c2);
  Type *ty = out->ty;
  out = rw_block_finish(g->a, &blk, out);
  out->ty = ty;
  graph_report(g, "conv2d_transpose", e, out);
  return out;
}

/* nn.conv1d_transpose(x, w) (NCW; (C, O, k) weights, its default OIW, or
 * (O, C, k), IOW; groups 1, dilation 1) as the height-1 conv2d_transpose
 * with the same weight axes (IOHW, OIHW), rewritten by the rule above,
 * and a squeeze back. */
static Expr *alter_conv1d_transpose(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0], *w = r->u.call.args[1];
  const Type *xt = graph_tensor_of(x), *wt = graph_tensor_of(w), *yt = graph_tensor_of(r);
  const char *kl = str_attr(g, r, "kernel_layout"), *ol = str_attr(g, r, "out_layout");
  int64_t s[2], d[2], op[2] = {0, 0}, pad[4];
  if (!ncw_static(xt) || !ncw_static(wt) || !ncw_static(yt) ||
      (strcmp(kl, "OIW") && strcmp(kl, "IOW")) || strcmp(str_attr(g, r, "data_layout"), "NCW") ||
      (ol[0] && strcmp(ol, "NCW")) || str_attr(g, r, "out_dtype")[0] ||
      op_attr_int(r, "groups") != 1 || !window_1d_as_2d(r, s, d, pad) || d[1] != 1 ||
      op_attr_ints(r, "output_padding", op + 1, 1) < 0)
    return r;
  Attrs *at = graph_attrs(g, 4);
  graph_attr_ints(g, at, 0, "strides", 2, s);
  graph_attr_ints(g, at, 1, "padding", 4, pad);
  graph_attr_ints(g, at, 2, "output_padding", 2, op);
  graph_attr_ints(g, at, 3, "dilation", 2, d);
  const char *key = "kernel_layout", *val = strcmp(kl, "OIW") == 0 ? "IOHW" : "OIHW";
  at = attrs_with(g, at, 1, &key, &val);
  RwBlock blk = {0};
  Expr *t2 = height1_call(g, &blk, e, GOP_CONV2D_TRANSPOSE, x, w, at);
  Expr *conv = t2->ty ? alter_conv2d_transpose(g, e, t2) : t2;
  if (conv == t2) { /* not of the form the rule takes: keep the 1-D op */
    rw_block_free(&blk);
    return r;
  }
  return squeezed(g, e, &blk, conv, "conv1d_transpose");
}

/* ───────────────────────────── products ───────────────────────────── */

/* The panels (NB, K, nr) of a constant weight: column j of the product is
 * w[j, :] (dense's (N, K) weight) or w[:, j] (kn: matmul's (K, N)), zero
 * past N.  Packed here, once, instead of by every call of the kernel. */
static Tensor *pack_weight(Graph *g, const Tensor *w, bool kn, int64_t nr) {
  int64_t N = w->shape[kn ? 1 : 0], K = w->shape[kn ? 0 : 1];
  int64_t shape[3] = {(N + nr - 1) / nr, K, nr};
  Tensor *p = tensor_new(g->a, w->dtype, 3, shape);
  /* along the source's rows (contiguous reads), typed so that each of a
   * model's hundreds of millions of weights is one move */
#define PACK(T)                                                            \
  {                                                                        \
    T *dst = p->data;                                                      \
    const T *src = w->data;                                                \
    for (int64_t a = 0; a < (kn ? K : N); a++)                             \
      for (int64_t b = 0; b < (kn ? N : K); b++) {                         \
        int64_t j = kn ? b : a, k = kn ? a : b;                            \
        dst[((j / nr) * K + k) * nr + j % nr] = src[a * (kn ? N : K) + b]; \
      }                                                                    \
  }
  memset(p->data, 0, tensor_nbytes(p));
  if (dtype_bytes(w->dtype) == 4)
    PACK(uint32_t)
  else
    PACK(uint64_t)
#undef PACK
  return p;
}

/* w's panels, packed once per pass however many products use w (an RNN's
 * time steps written out share their recurrent weight): the map in the
 * pass's user pointer keys them by the tensor and the orientation. */
static Tensor *packed_weight(Graph *g, const Tensor *w, bool kn, int64_t nr) {
  PtrMap *memo = g->user;
  const void *key = (const char *)w + kn; /* tensors are aligned: the low bit is free */
  Tensor *p = ptrmap_get(memo, key);
  if (!p) ptrmap_put(memo, key, p = pack_weight(g, w, kn, nr));
  return p;
}

/* nn.dense(x, W) and nn.matmul(x, W) (x not transposed) with a constant
 * float W → nn.contrib_dense_pack(x, panels of W), the panels two vector
 * registers wide as the product's schedule reads them (lower/compute/compute_nn.c). */
static Expr *alter_product(Graph *g, Expr *e, Expr *r, bool matmul) {
  Expr *x = r->u.call.args[0], *wv = graph_value(g, r->u.call.args[1]);
  const Type *xt = graph_tensor_of(x), *yt = graph_tensor_of(r);
  if (!wv || wv->kind != EX_CONST || !xt || !yt || xt->u.tensor.ndim < 2) return r;
  const Tensor *w = wv->u.konst.value;
  DType dt = xt->u.tensor.dtype;
  if (w->ndim != 2 || w->dtype != dt || yt->u.tensor.dtype != dt || !dtype_is_float(dt) ||
      dt == DT_FLOAT16 || dt == DT_BFLOAT16 || (matmul && op_attr_bool(r, "transpose_a")))
    return r;
  bool kn = matmul && !op_attr_bool(r, "transpose_b");
  int64_t nr = 2 * target_vector_bytes() / dtype_bytes(dt), N = w->shape[kn ? 1 : 0];
  Expr *args[2] = {x, graph_const(g, packed_weight(g, w, kn, nr), wv->span)};
  Attrs *at = graph_attrs(g, 1);
  graph_attr_int(g, at, 0, "units", N);
  const char *keys[1] = {"weight_layout"},
             *vals[1] = {arena_printf(g->a, "NC%lldn", (long long)nr)};
  Expr *out = graph_call(g, GOP_DENSE_PACK, 2, args, attrs_with(g, at, 1, keys, vals), e->span);
  graph_report(g, "dense_pack", e, out);
  return out;
}

/* ───────────────────────────── pointwise ───────────────────────────── */

static bool pointwise_op(const Expr *r) {
  if (r->kind != EX_CALL || r->u.call.fn->kind != EX_OP) return false;
  int op = r->u.call.fn->u.op.index, n = r->u.call.nargs;
  if (graph_is_call(r, GOP_RELU) || graph_is_call(r, GOP_LEAKY_RELU)) return true;
  const OpDef *d = ops_get(op);
  const char *fam = ops_family(op);
  return d && fam && strcmp(fam, "elemwise") == 0 && n >= 1 && n <= 2 &&
         (d->pattern == OPAT_ELEMWISE || d->pattern == OPAT_BROADCAST);
}

static bool same_shape(const Type *a, const Type *b) {
  if (!graph_static(a) || !graph_static(b) || a->u.tensor.ndim != b->u.tensor.ndim) return false;
  for (int i = 0; i < a->u.tensor.ndim; i++)
    if (a->u.tensor.dims[i].value != b->u.tensor.dims[i].value) return false;
  return true;
}

/* The let chain e with its body replaced by body (typed as body). */
static Expr *rebody(Graph *g, Expr *e, Expr *body) {
  if (e->kind != EX_LET) return body;
  Expr *r = expr_let(g->a, e->u.let.var, e->u.let.value, rebody(g, e->u.let.body, body), e->span);
  r->ty = body->ty;
  return r;
}

/* `let ...; layout_transform(%v, "NCHW<c>c", "NCHW")` inline in an operand
 * (a blocked rewrite inside a larger expression: a bias FoldScaleAxis
 * scaled, `add(%y, multiply(%z, S))`): the let chain ending in %v. */
static Expr *inline_blocked(Graph *g, Expr *o, int64_t c) {
  Expr *body = o;
  int64_t bc;
  while (body->kind == EX_LET) body = body->u.let.body;
  if (body == o || !graph_is_call(body, GOP_LAYOUT_TRANSFORM) ||
      body->u.call.args[0]->kind != EX_VAR || strcmp(str_attr(g, body, "dst_layout"), "NCHW") ||
      !nn_layout_nchwc(str_attr(g, body, "src_layout"), &bc) || bc != c)
    return NULL;
  return rebody(g, o, graph_copy(g, body->u.call.args[0]));
}

/* The other operand of a pointwise op with a blocked one (x: its NCHW
 * type, c: the block) in the blocked layout, or NULL. */
static Expr *other_blocked(Graph *g, Expr *o, const Type *x, int64_t c, Span sp) {
  Blk b;
  if (blocked_arg(g, o, &b)) return b.c == c ? b.inner : NULL;
  if (o->kind == EX_LET) return inline_blocked(g, o, c);
  const Type *t = graph_tensor_of(o);
  int64_t cc;
  if (!graph_static(t)) return NULL;
  if (t->u.tensor.ndim == 0) return o;
  if (same_shape(t, x)) return transform(g, o, "NCHW", nchwc(g, c), sp);
  if (!graph_along_axis(t, x, 1, &cc)) return NULL;
  int64_t C = x->u.tensor.dims[1].value;
  int64_t shape[5] = {1, cc == 1 ? 1 : C / c, 1, 1, cc == 1 ? 1 : c};
  Attrs *at = graph_attrs(g, 1);
  graph_attr_ints(g, at, 0, "newshape", 5, shape);
  return graph_call1(g, GOP_RESHAPE, o, at, sp);
}

/* An operand nested in the call (`add(multiply(%c, s), b)`) that a rule
 * rewrote to `let %y = v; layout_transform(%y, "NCHW<c>c", "NCHW")`: its
 * blocked form is v itself, nested in turn. */
static bool blocked_nested(Graph *g, Expr *arg, Blk *b) {
  if (arg->kind != EX_LET || !graph_is_call(arg->u.let.body, GOP_LAYOUT_TRANSFORM)) return false;
  Expr *t = arg->u.let.body, *y = t->u.call.args[0];
  if (y->kind != EX_VAR || y->u.var != arg->u.let.var ||
      strcmp(str_attr(g, t, "dst_layout"), "NCHW") ||
      !nn_layout_nchwc(str_attr(g, t, "src_layout"), &b->c))
    return false;
  b->inner = arg->u.let.value;
  return true;
}

static Expr *alter_pointwise(Graph *g, Expr *e, Expr *r) {
  int n = r->u.call.nargs, k = -1;
  Blk b[2];
  for (int i = 0; i < n && k < 0; i++)
    if (blocked_arg(g, r->u.call.args[i], &b[i]) || blocked_nested(g, r->u.call.args[i], &b[i]))
      k = i;
  const Type *yt = graph_tensor_of(r);
  if (k < 0 || !nchw_static(yt)) return r;
  Expr *args[2];
  for (int i = 0; i < n; i++) {
    args[i] = i == k ? b[k].inner : other_blocked(g, r->u.call.args[i], yt, b[k].c, e->span);
    if (!args[i]) return r;
  }
  /* the result must have the blocked operand's shape (no broadcast past it) */
  if (!same_shape(graph_tensor_of(r->u.call.args[k]), yt)) return r;
  Expr *call = graph_call_index(g, r->u.call.fn->u.op.index, n, args, r->u.call.attrs, e->span);
  RwBlock blk = {0};
  Expr *out = back_to_nchw(g, "pointwise", e, &blk, call, b[k].c);
  return out ? out : r;
}

static Expr *alter_bias_add(Graph *g, Expr *e, Expr *r) {
  Blk b;
  const Type *yt = graph_tensor_of(r), *bt = graph_tensor_of(r->u.call.args[1]);
  int64_t axis = op_attr_int(r, "axis");
  if (!nchw_static(yt) || (axis != 1 && axis != -3) || !blocked_arg(g, r->u.call.args[0], &b) ||
      !graph_static(bt) || bt->u.tensor.ndim != 1)
    return r;
  int64_t shape[5] = {1, yt->u.tensor.dims[1].value / b.c, 1, 1, b.c};
  Attrs *at = graph_attrs(g, 1);
  graph_attr_ints(g, at, 0, "newshape", 5, shape);
  Expr *bias = graph_call1(g, GOP_RESHAPE, r->u.call.args[1], at, e->span);
  RwBlock blk = {0};
  Expr *out =
      back_to_nchw(g, "bias_add", e, &blk, graph_call2(g, GOP_ADD, b.inner, bias, e->span), b.c);
  return out ? out : r;
}

static Expr *alter_pool(Graph *g, Expr *e, Expr *r) {
  Blk b;
  const char *ol = str_attr(g, r, "out_layout");
  if (strcmp(str_attr(g, r, "layout"), "NCHW") || (ol[0] && strcmp(ol, "NCHW")) ||
      !blocked_arg(g, r->u.call.args[0], &b))
    return r;
  const char *keys[2] = {"layout", "out_layout"}, *vals[2] = {nchwc(g, b.c), nchwc(g, b.c)};
  Attrs *at = attrs_with(g, r->u.call.attrs, ol[0] ? 2 : 1, keys, vals);
  Expr *call = graph_call_index(g, r->u.call.fn->u.op.index, 1, &b.inner, at, e->span);
  RwBlock blk = {0};
  Expr *out = back_to_nchw(g, "pool", e, &blk, call, b.c);
  return out ? out : r;
}

/* concatenate((x1, ...), axis=1) of NCHW tensors that all have blocked
 * forms of one block c: the same on the blocked forms (whole blocks of
 * channels side by side), so the convolutions around it keep their layout. */
static Expr *alter_concat(Graph *g, Expr *e, Expr *r) {
  Expr *t = r->u.call.args[0];
  int64_t axis = op_attr_int(r, "axis");
  if (t->kind != EX_TUPLE || t->u.tuple.n < 1 || !nchw_static(r->ty) || (axis != 1 && axis != -3))
    return r;
  int n = t->u.tuple.n;
  Expr **xs = ARENA_ARRAY(g->a, Expr *, n);
  Type **ts = ARENA_ARRAY(g->a, Type *, n);
  Blk b, first = {0};
  for (int i = 0; i < n; i++) {
    if (!blocked_arg(g, t->u.tuple.fields[i], &b) || (i && b.c != first.c)) return r;
    if (!i) first = b;
    xs[i] = b.inner, ts[i] = b.inner->ty;
  }
  Expr *tup = expr_tuple(g->a, n, xs, e->span);
  tup->ty = type_tuple(g->a, n, ts, e->span);
  Expr *call = graph_call_index(g, r->u.call.fn->u.op.index, 1, &tup, r->u.call.attrs, e->span);
  RwBlock blk = {0};
  Expr *out = back_to_nchw(g, "concat", e, &blk, call, first.c);
  return out ? out : r;
}

/* layout_transform(%v, B, A) with %v bound to layout_transform(x, A, B):
 * x (a variable; the binding is then replaced by it). */
static Expr *cancel(Graph *g, Expr *e, Expr *r) {
  Expr *arg = r->u.call.args[0];
  Expr *v = arg->kind == EX_VAR ? graph_value(g, arg) : NULL;
  if (!graph_is_call(v, GOP_LAYOUT_TRANSFORM) || v->u.call.args[0]->kind != EX_VAR ||
      strcmp(str_attr(g, v, "src_layout"), str_attr(g, r, "dst_layout")) ||
      strcmp(str_attr(g, v, "dst_layout"), str_attr(g, r, "src_layout")))
    return r;
  Expr *x = graph_copy(g, v->u.call.args[0]);
  graph_report(g, "cancel", e, x);
  return x;
}

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (r->kind != EX_CALL || r->u.call.fn->kind != EX_OP) return r;
  if (graph_is_call(r, GOP_CONV2D)) return alter_conv(g, e, r);
  if (graph_is_call(r, GOP_CONV1D)) return alter_conv1d(g, e, r);
  if (graph_is_call(r, GOP_CONV3D)) return alter_conv3d(g, e, r);
  if (graph_is_call(r, GOP_CONV2D_TRANSPOSE)) return alter_conv2d_transpose(g, e, r);
  if (graph_is_call(r, GOP_CONV1D_TRANSPOSE)) return alter_conv1d_transpose(g, e, r);
  if (graph_is_call(r, GOP_DENSE)) return alter_product(g, e, r, false);
  if (graph_is_call(r, GOP_MATMUL)) return alter_product(g, e, r, true);
  if (graph_is_call(r, GOP_BIAS_ADD)) return alter_bias_add(g, e, r);
  if (graph_is_call(r, GOP_LAYOUT_TRANSFORM)) return cancel(g, e, r);
  if (graph_is_call(r, GOP_MAX_POOL2D) || graph_is_call(r, GOP_AVG_POOL2D) ||
      graph_is_call(r, GOP_GLOBAL_MAX_POOL2D) || graph_is_call(r, GOP_GLOBAL_AVG_POOL2D))
    return alter_pool(g, e, r);
  if (graph_is_call(r, GOP_CONCATENATE)) return alter_concat(g, e, r);
  if (pointwise_op(r)) return alter_pointwise(g, e, r);
  return r;
}

/* A binding the cancel rule turned into a variable: uses of it become
 * that variable. */
static Expr *subst(Graph *g, GraphLink *l) {
  (void)g;
  return l->value->kind == EX_VAR && l->value != l->orig->u.let.value ? l->value : NULL;
}

static const GraphHooks hooks = {.rule = rule, .subst = subst};

Module *pass_alter_op_layout(PassCtx *pc, Module *in) {
  PtrMap packed = {0};
  Module *out = graph_pass(pc, in, &hooks, &packed);
  ptrmap_free(&packed);
  return out;
}

bool alter_op_layout_applies(const Module *m) {
  static const GraphOp ops[] = {GOP_CONV2D, GOP_CONV1D,           GOP_CONV2D_TRANSPOSE,
                                GOP_DENSE,  GOP_CONV1D_TRANSPOSE, GOP_MATMUL,
                                GOP_CONV3D};
  return graph_module_calls(m, ops, 7);
}
