/* onnx_nn.c — converters of the neural-network layers: convolutions,
 * Gemm and MatMul, the normalizations, pools (rows in onnx_ops.c).
 *
 * Convolutions and pools share one reading of ONNX's window attributes
 * (kernel_shape, strides, dilations, pads, auto_pad) into Relay's: pads
 * are [begin..., end...] in both, so they pass through; auto_pad SAME_*
 * is resolved at import time from the static spatial dims, as TVM does
 * for static shapes.  The spatial rank picks the op (nn.conv1d, 2d, 3d).
 * MatMul follows numpy: with a 2-D right operand it is nn.matmul (any
 * leading dims of the left one, static or not); otherwise the batch dims
 * broadcast and nn.batch_matmul runs on 3-D reshapes, as TVM's converter
 * builds it. */
#include <math.h>
#include <string.h>

#include "frontend/onnx_int.h"

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* ───────────────────────── windows ───────────────────────── */

typedef struct Window {
  int k; /* spatial rank */
  int64_t kernel[3], strides[3], dil[3], pads[6];
} Window;

/* An int-list attribute of k values, or all `dflt` when absent. */
static bool window_ints(OnnxCx *cx, const char *name, int k, int64_t dflt, int64_t *out) {
  int64_t v[8];
  int n = oa_ints(cx, name, v, 8);
  if (cx->failed) return false;
  if (n < 0) {
    for (int i = 0; i < k; i++) out[i] = dflt;
    return true;
  }
  if (n != k)
    return fe_fail(cx, "attribute '%s' has %d values, the input has %d spatial dims", name, n, k);
  for (int i = 0; i < k; i++) {
    if (v[i] < 1)
      return fe_fail(cx, "attribute '%s' has value %lld (must be >= 1)", name, (long long)v[i]);
    out[i] = v[i];
  }
  return true;
}

/* pads from auto_pad SAME_UPPER / SAME_LOWER: the output is
 * ceil(in / stride) and the extra padding goes at the end (UPPER) or the
 * beginning (LOWER). */
static bool same_pads(OnnxCx *cx, FeVal *x, Window *w, bool upper) {
  for (int i = 0; i < w->k; i++) {
    Dim d = fe_dim(x, 2 + i);
    if (d.kind != DIM_CONST)
      return fe_fail(cx, "auto_pad needs static spatial dims (dim %d is not known)", 2 + i);
    int64_t out = (d.value + w->strides[i] - 1) / w->strides[i];
    int64_t total = (out - 1) * w->strides[i] + (w->kernel[i] - 1) * w->dil[i] + 1 - d.value;
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    w->pads[i] = upper ? small : big, w->pads[w->k + i] = upper ? big : small;
  }
  return true;
}

/* Reads strides, dilations (when the op has them), pads and auto_pad; the
 * kernel is set by the caller. */
static bool read_window(OnnxCx *cx, FeVal *x, Window *w, bool dilations) {
  if (!window_ints(cx, "strides", w->k, 1, w->strides)) return false;
  for (int i = 0; i < 3; i++) w->dil[i] = 1;
  if (dilations && !window_ints(cx, "dilations", w->k, 1, w->dil)) return false;
  const char *ap = oa_str(cx, "auto_pad", "NOTSET");
  memset(w->pads, 0, sizeof w->pads);
  if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
    return same_pads(cx, x, w, !strcmp(ap, "SAME_UPPER"));
  if (!strcmp(ap, "VALID")) return !cx->failed;
  if (strcmp(ap, "NOTSET") != 0)
    return fe_fail(cx, "auto_pad '%s' is not supported (NOTSET, VALID, SAME_UPPER, SAME_LOWER are)",
                   ap);
  int n = oa_ints(cx, "pads", w->pads, 6);
  if (n >= 0 && n != 2 * w->k)
    return fe_fail(cx, "attribute 'pads' has %d values, %d expected", n, 2 * w->k);
  for (int i = 0; i < n; i++)
    if (w->pads[i] < 0) return fe_fail(cx, "negative pads are not supported");
  return !cx->failed;
}

static void window_attrs(AttrB *b, const Window *w, bool dilation, const char *kernel_key) {
  if (kernel_key) ab_ints(b, kernel_key, w->k, w->kernel);
  ab_ints(b, "strides", w->k, w->strides);
  bool padded = false;
  for (int i = 0; i < 2 * w->k; i++) padded |= w->pads[i] != 0;
  if (padded) ab_ints(b, "padding", 2 * w->k, w->pads);
  if (dilation) ab_ints(b, "dilation", w->k, w->dil);
}

/* The spatial rank of a convolution or pool input (1 to 3). */
static int spatial_rank(OnnxCx *cx, FeVal *x) {
  int r = fe_rank(x);
  if (r < 3 || r > 5)
    return fe_fail(cx, "the input has rank %d (3 to 5 are supported: N, C and 1 to 3 spatial dims)",
                   r),
           -1;
  return r - 2;
}

static const char *by_rank(int k, const char *a, const char *b, const char *c) {
  return k == 1 ? a : k == 2 ? b : c;
}

static FeVal *bias_add(OnnxCx *cx, FeVal *y, FeVal *bias) {
  if (!bias || !y) return y;
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 1);
  return FE_OP(cx, "nn.bias_add", ab_done(&b), y, bias);
}

/* The kernel's spatial dims from the weight (W is (O, I, k...)). */
static bool weight_kernel(OnnxCx *cx, FeVal *w, Window *win) {
  if (fe_rank(w) != win->k + 2)
    return fe_fail(cx, "the weight has rank %d, %d expected", fe_rank(w), win->k + 2);
  for (int i = 0; i < win->k; i++) {
    Dim d = fe_dim(w, 2 + i);
    if (d.kind != DIM_CONST) return fe_fail(cx, "the weight's kernel dims must be static");
    win->kernel[i] = d.value;
  }
  int64_t ks[3];
  int n = oa_ints(cx, "kernel_shape", ks, 3);
  for (int i = 0; i < n && i < win->k; i++)
    if (ks[i] != win->kernel[i])
      return fe_fail(cx, "kernel_shape does not match the weight's shape");
  return !cx->failed;
}

/* ───────────────────────── convolutions ───────────────────────── */

bool onnx_convert_conv(OnnxCx *cx) {
  FeVal *x = cx->in[0], *w = cx->in[1];
  Window win = {.k = spatial_rank(cx, x)};
  if (win.k < 0 || !weight_kernel(cx, w, &win) || !read_window(cx, x, &win, true)) return false;
  AttrB b = ab_new(cx);
  window_attrs(&b, &win, true, NULL);
  ab_int(&b, "groups", oa_int(cx, "group", 1));
  if (fe_dim(w, 0).kind == DIM_CONST) ab_int(&b, "channels", fe_dim(w, 0).value);
  ab_ints(&b, "kernel_size", win.k, win.kernel);
  const char *op = by_rank(win.k, "nn.conv1d", "nn.conv2d", "nn.conv3d");
  FeVal *y = FE_OP(cx, op, ab_done(&b), x, w);
  return set_out(cx, bias_add(cx, y, cx->nin > 2 ? cx->in[2] : NULL));
}

/* A transposed convolution's pads from output_shape, or from auto_pad
 * SAME_* (output = input * stride): total = stride * (in - 1) +
 * output_padding + (k - 1) * dilation + 1 - out, split with the larger half
 * at the end for SAME_UPPER and at the beginning otherwise, as the ONNX spec
 * states; a negative total (an output longer than the windows reach) is
 * more output padding. */
static bool transposed_pads(OnnxCx *cx, FeVal *x, Window *w, int64_t *outpad) {
  const char *ap = oa_str(cx, "auto_pad", "NOTSET");
  bool same = !strncmp(ap, "SAME_", 5), upper = !strcmp(ap, "SAME_UPPER");
  int64_t outshape[3];
  int no = oa_ints(cx, "output_shape", outshape, 3);
  if (no < 0 && !same) return !cx->failed;
  if (no >= 0 && no != w->k)
    return fe_fail(cx, "output_shape has %d values, %d expected", no, w->k);
  for (int i = 0; i < w->k; i++) {
    Dim d = fe_dim(x, 2 + i);
    if (d.kind != DIM_CONST)
      return fe_fail(cx, "output_shape and auto_pad need static spatial dims (dim %d)", 2 + i);
    int64_t out = no >= 0 ? outshape[i] : d.value * w->strides[i];
    int64_t total =
        w->strides[i] * (d.value - 1) + outpad[i] + (w->kernel[i] - 1) * w->dil[i] + 1 - out;
    if (total < 0) outpad[i] -= total, total = 0;
    int64_t half = total / 2;
    w->pads[i] = upper ? half : total - half, w->pads[w->k + i] = upper ? total - half : half;
  }
  return !cx->failed;
}

/* ConvTranspose: weight (C_in, C_out / group, k...): Relay's IOHW and
 * IODHW, and nn.conv1d_transpose's OIW (whose O names the input channels,
 * ops/nn_conv.c).  output_shape and auto_pad SAME_* become pads. */
bool onnx_convert_conv_transpose(OnnxCx *cx) {
  FeVal *x = cx->in[0], *w = cx->in[1];
  Window win = {.k = spatial_rank(cx, x)};
  if (win.k < 0) return false;
  int64_t outpad[3] = {0, 0, 0};
  if (!weight_kernel(cx, w, &win) || !window_ints(cx, "strides", win.k, 1, win.strides) ||
      !window_ints(cx, "dilations", win.k, 1, win.dil))
    return false;
  int nop = oa_ints(cx, "output_padding", outpad, 3);
  if (nop > win.k) return fe_fail(cx, "output_padding has too many values");
  const char *ap = oa_str(cx, "auto_pad", "NOTSET");
  if (!strncmp(ap, "SAME_", 5) || oa_get(cx, "output_shape")) {
    if (!transposed_pads(cx, x, &win, outpad)) return false;
  } else if (!read_window(cx, x, &win, true)) {
    return false;
  }
  int64_t group = oa_int(cx, "group", 1);
  AttrB b = ab_new(cx);
  if (fe_dim(w, 1).kind == DIM_CONST) ab_int(&b, "channels", fe_dim(w, 1).value * group);
  ab_ints(&b, "kernel_size", win.k, win.kernel);
  window_attrs(&b, &win, true, NULL);
  ab_ints(&b, "output_padding", win.k, outpad);
  ab_int(&b, "groups", group);
  ab_str(&b, "kernel_layout", by_rank(win.k, "OIW", "IOHW", "IODHW"));
  const char *op =
      by_rank(win.k, "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose");
  FeVal *y = FE_OP(cx, op, ab_done(&b), x, w);
  return set_out(cx, bias_add(cx, y, cx->nin > 2 ? cx->in[2] : NULL));
}

/* ───────────────────────── Gemm, MatMul ───────────────────────── */

static FeVal *transpose2(OnnxCx *cx, FeVal *v) {
  AttrB b = ab_new(cx);
  int64_t axes[2] = {1, 0};
  ab_ints(&b, "axes", 2, axes);
  return FE_OP(cx, "transpose", ab_done(&b), v);
}

/* Y = alpha * A' B' + beta * C, A' = transA ? A^T : A, B' likewise; as
 * nn.dense(A', B'^T), so the usual transB=1 weight is taken as it is. */
bool onnx_convert_gemm(OnnxCx *cx) {
  FeVal *a = cx->in[0], *bm = cx->in[1], *c = cx->nin > 2 ? cx->in[2] : NULL;
  if (fe_rank(a) != 2 || fe_rank(bm) != 2)
    return fe_fail(cx, "A and B must be matrices (ranks %d and %d)", fe_rank(a), fe_rank(bm));
  double alpha = oa_float(cx, "alpha", 1.0), beta = oa_float(cx, "beta", 1.0);
  if (oa_int(cx, "transA", 0)) a = transpose2(cx, a);
  if (!oa_int(cx, "transB", 0)) bm = bm ? transpose2(cx, bm) : NULL;
  if (a && alpha != 1.0) a = FE_OP(cx, "multiply", NULL, a, fe_scalar(cx, fe_dtype(a), alpha));
  AttrB b = ab_new(cx);
  if (bm && fe_dim(bm, 0).kind == DIM_CONST) ab_int(&b, "units", fe_dim(bm, 0).value);
  FeVal *y = a && bm ? FE_OP(cx, "nn.dense", ab_done(&b), a, bm) : NULL;
  if (y && c && beta != 0) {
    if (beta != 1.0) c = FE_OP(cx, "multiply", NULL, c, fe_scalar(cx, fe_dtype(c), beta));
    y = c ? FE_OP(cx, "add", NULL, y, c) : NULL;
  }
  return set_out(cx, y);
}

static FeVal *reshape_to(OnnxCx *cx, FeVal *v, int n, const int64_t *shape) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, shape);
  return v ? FE_OP(cx, "reshape", ab_done(&b), v) : NULL;
}

/* N-D × N-D (after rank-1 operands became matrices): the batch dims
 * broadcast, both sides are reshaped to 3-D, nn.batch_matmul, and the
 * result takes the broadcast batch dims back. */
static FeVal *batched_matmul(OnnxCx *cx, FeVal *a, FeVal *b, const int64_t *sa, int ra,
                             const int64_t *sb, int rb) {
  int nb = (ra > rb ? ra : rb) - 2;
  int64_t batch[TENSOR_MAX_RANK], nbatch = 1;
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (ra - 2)), ib = i - (nb - (rb - 2));
    int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return FE_FAIL_NULL(cx, "the batch dims of A and B do not broadcast");
    batch[i] = da == 1 ? db : da, nbatch *= batch[i];
  }
  int64_t m = sa[ra - 2], k = sa[ra - 1], n = sb[rb - 1], full[TENSOR_MAX_RANK];
  memcpy(full, batch, sizeof(int64_t) * (size_t)nb);
  AttrB ba = ab_new(cx), bb = ab_new(cx);
  full[nb] = m, full[nb + 1] = k;
  ab_ints(&ba, "shape", nb + 2, full);
  full[nb] = k, full[nb + 1] = n;
  ab_ints(&bb, "shape", nb + 2, full);
  int64_t a3[3] = {nbatch, m, k}, b3[3] = {nbatch, k, n};
  bool a_full = ra == nb + 2 && !memcmp(sa, batch, sizeof(int64_t) * (size_t)nb);
  bool b_full = rb == nb + 2 && !memcmp(sb, batch, sizeof(int64_t) * (size_t)nb);
  /* an operand that already has the broadcast shape is not broadcast */
  FeVal *x = reshape_to(cx, a_full ? a : FE_OP(cx, "broadcast_to", ab_done(&ba), a), 3, a3);
  FeVal *y = reshape_to(cx, b_full ? b : FE_OP(cx, "broadcast_to", ab_done(&bb), b), 3, b3);
  AttrB bm = ab_new(cx);
  ab_bool(&bm, "transpose_b", false);
  FeVal *r = x && y ? FE_OP(cx, "nn.batch_matmul", ab_done(&bm), x, y) : NULL;
  full[nb] = m, full[nb + 1] = n;
  return reshape_to(cx, r, nb + 2, full);
}

/* Batched products of rank 3 or 4 with dims known only at run time (a
 * sequence length): nn.batch_matmul directly on rank 3; rank 4 merges the
 * two batch dims (reshape -3), and splits them back (-4) by the one that
 * is static. */
static FeVal *dynamic_matmul(OnnxCx *cx, FeVal *a, FeVal *b) {
  AttrB bm = ab_new(cx);
  ab_bool(&bm, "transpose_b", false);
  if (fe_rank(a) == 3) return FE_OP(cx, "nn.batch_matmul", ab_done(&bm), a, b);
  Dim d0 = fe_dim(a, 0), d1 = fe_dim(a, 1);
  if (d0.kind != DIM_CONST && d1.kind != DIM_CONST)
    return FE_FAIL_NULL(cx, "a rank-4 MatMul needs one of its batch dims static");
  int64_t merge[3] = {-3, 0, 0}, split[5] = {-4, d0.kind == DIM_CONST ? d0.value : -1,
                                             d0.kind == DIM_CONST ? -1 : d1.value, 0, 0};
  FeVal *y = FE_OP(cx, "nn.batch_matmul", ab_done(&bm), reshape_to(cx, a, 3, merge),
                   reshape_to(cx, b, 3, merge));
  return reshape_to(cx, y, 5, split);
}

/* numpy's matmul: a rank-1 A is a row (its dim dropped after), a rank-1
 * B a column; N-D × 2-D is nn.matmul (which keeps A's leading dims);
 * otherwise batched. */
bool onnx_convert_matmul(OnnxCx *cx) {
  FeVal *a = cx->in[0], *b = cx->in[1];
  int ra = fe_rank(a), rb = fe_rank(b);
  int64_t sa[TENSOR_MAX_RANK + 1], sb[TENSOR_MAX_RANK + 1];
  if (ra < 1 || rb < 1) return fe_fail(cx, "MatMul needs operands of rank >= 1");
  bool row = ra == 1, col = rb == 1;
  if (ra >= 2 && rb == 2) /* nn.matmul takes any leading dims, static or not */
    return set_out(cx, FE_OP(cx, "nn.matmul", NULL, a, b));
  if (ra == rb && (ra == 3 || ra == 4) && (!fe_static_shape(a, sa) || !fe_static_shape(b, sb)))
    return set_out(cx, dynamic_matmul(cx, a, b));
  if (!fe_static_shape(a, sa) || !fe_static_shape(b, sb))
    return fe_fail(cx, "MatMul of rank %d by rank %d needs static shapes", ra, rb);
  if (row) sa[1] = sa[0], sa[0] = 1, ra = 2, a = reshape_to(cx, a, 2, sa);
  if (col) sb[1] = 1, rb = 2, b = reshape_to(cx, b, 2, sb);
  FeVal *y =
      rb == 2 ? FE_OP(cx, "nn.matmul", NULL, a, b) : batched_matmul(cx, a, b, sa, ra, sb, rb);
  if (y && (row || col)) { /* drop the dims the rank-1 operands added */
    int64_t dropped[TENSOR_MAX_RANK + 2];
    int nd = 0;
    for (int i = 0; i < fe_rank(y); i++)
      if (!((row && i == fe_rank(y) - 2) || (col && i == fe_rank(y) - 1)))
        dropped[nd++] = fe_dim(y, i).value;
    y = reshape_to(cx, y, nd, dropped);
  }
  return set_out(cx, y);
}

/* ───────────────────────── normalizations ───────────────────────── */

/* BatchNormalization with spatial=0 (before opset 9): statistics per
 * activation, of the input's shape past the batch dim, which numpy's
 * broadcasting lines up: (x - mean) / sqrt(var + eps) * scale + bias. */
static FeVal *batch_norm_per_activation(OnnxCx *cx, double eps) {
  FeVal *x = cx->in[0], *d = FE_OP(cx, "subtract", NULL, x, cx->in[3]);
  FeVal *v = FE_OP(cx, "add", NULL, cx->in[4], fe_scalar(cx, fe_dtype(x), eps));
  FeVal *y = d && v ? FE_OP(cx, "divide", NULL, d, FE_OP(cx, "sqrt", NULL, v)) : NULL;
  y = y ? FE_OP(cx, "multiply", NULL, y, cx->in[1]) : NULL;
  return y ? FE_OP(cx, "add", NULL, y, cx->in[2]) : NULL;
}

/* The mean of v over every axis but 1 (the channels), dims kept or not. */
static FeVal *channel_mean(OnnxCx *cx, FeVal *v, bool keep) {
  int64_t axes[TENSOR_MAX_RANK];
  int n = 0;
  for (int i = 0; v && i < fe_rank(v); i++)
    if (i != 1) axes[n++] = i;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axis", n, axes), ab_bool(&b, "keepdims", keep);
  return v ? FE_OP(cx, "mean", ab_done(&b), v) : NULL;
}

/* r * momentum + cur * (1 - momentum): a running statistic's update. */
static FeVal *running(OnnxCx *cx, FeVal *r, FeVal *cur, double momentum) {
  DType dt = fe_dtype(r);
  FeVal *a = FE_OP(cx, "multiply", NULL, r, fe_scalar(cx, dt, momentum));
  FeVal *b = cur ? FE_OP(cx, "multiply", NULL, cur, fe_scalar(cx, dt, 1 - momentum)) : NULL;
  return a && b ? FE_OP(cx, "add", NULL, a, b) : NULL;
}

/* Training mode (opset 14 on): normalized by the batch's mean and
 * (biased) variance over every axis but the channels; the outputs 1 and 2
 * are the running mean and variance updated with `momentum`. */
static bool batch_norm_training(OnnxCx *cx, Attrs *attrs) {
  FeVal *x = cx->in[0], *mk = channel_mean(cx, x, true);
  FeVal *d = mk ? FE_OP(cx, "subtract", NULL, x, mk) : NULL;
  FeVal *m = channel_mean(cx, x, false);
  FeVal *v = d ? channel_mean(cx, FE_OP(cx, "multiply", NULL, d, d), false) : NULL;
  FeVal *t = m && v ? FE_OP(cx, "nn.batch_norm", attrs, x, cx->in[1], cx->in[2], m, v) : NULL;
  double momentum = oa_float(cx, "momentum", 0.9);
  if (cx->nout > 1 && *cx->node->output[1]) cx->out[1] = running(cx, cx->in[3], m, momentum);
  if (cx->nout > 2 && *cx->node->output[2]) cx->out[2] = running(cx, cx->in[4], v, momentum);
  return set_out(cx, t ? fe_get(cx, t, 0) : NULL);
}

/* Training mode from opset 14 (training_mode=1) gives the running
 * statistics; before opset 7 is_test=0 (the default) is training, refused. */
bool onnx_convert_batch_norm(OnnxCx *cx) {
  bool train = cx->opset >= 14 && oa_int(cx, "training_mode", 0);
  for (int k = 1; k < cx->nout && !train; k++)
    if (*cx->node->output[k])
      return fe_fail(cx,
                     "the running mean and variance outputs need training_mode=1 (opset 14 on)");
  if (cx->nout > 3)
    return fe_fail(cx, "outputs beyond the running mean and variance are not supported");
  if (cx->opset < 7 && !oa_int(cx, "is_test", 0))
    return fe_fail(cx,
                   "training mode is not supported (inference only: is_test must be 1 before "
                   "opset 7)");
  if (cx->opset < 9 && !oa_int(cx, "spatial", 1))
    return set_out(cx, batch_norm_per_activation(cx, oa_float(cx, "epsilon", 1e-5)));
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 1);
  ab_float(&b, "epsilon", oa_float(cx, "epsilon", 1e-5));
  if (train) return batch_norm_training(cx, ab_done(&b));
  FeVal *t = FE_OP(cx, "nn.batch_norm", ab_done(&b), cx->in[0], cx->in[1], cx->in[2], cx->in[3],
                   cx->in[4]);
  return set_out(cx, t ? fe_get(cx, t, 0) : NULL);
}

bool onnx_convert_instance_norm(OnnxCx *cx) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 1);
  ab_float(&b, "epsilon", oa_float(cx, "epsilon", 1e-5));
  return set_out(cx, FE_OP(cx, "nn.instance_norm", ab_done(&b), cx->in[0], cx->in[1], cx->in[2]));
}

/* LayerNormalization (opset 17): over the axes from `axis` to the last.
 * Over the last axis alone, without the Mean and InvStdDev outputs, it is
 * nn.layer_norm; otherwise the mean and 1 / sqrt(variance + epsilon) are
 * written out (kept dims: the extra outputs' shape), as TVM does. */
bool onnx_convert_layer_norm(OnnxCx *cx) {
  bool stats = false;
  for (int k = 1; k < cx->nout; k++) stats |= *cx->node->output[k] != 0;
  FeVal *x = cx->in[0], *scale = cx->in[1], *bias = cx->nin > 2 ? cx->in[2] : NULL;
  int r = fe_rank(x), axis = fe_axis(cx, oa_int(cx, "axis", -1), r, "axis");
  double eps = oa_float(cx, "epsilon", 1e-5);
  if (axis < 0) return false;
  if (!bias) bias = FE_OP(cx, "zeros_like", NULL, scale);
  if (axis == r - 1 && !stats) {
    AttrB b = ab_new(cx);
    ab_int(&b, "axis", -1);
    ab_float(&b, "epsilon", eps);
    return set_out(cx, bias ? FE_OP(cx, "nn.layer_norm", ab_done(&b), x, scale, bias) : NULL);
  }
  int64_t axes[TENSOR_MAX_RANK];
  for (int i = axis; i < r; i++) axes[i - axis] = i;
  AttrB m1 = ab_new(cx), m2 = ab_new(cx);
  ab_ints(&m1, "axis", r - axis, axes), ab_bool(&m1, "keepdims", true);
  ab_ints(&m2, "axis", r - axis, axes), ab_bool(&m2, "keepdims", true);
  FeVal *mean = FE_OP(cx, "mean", ab_done(&m1), x);
  FeVal *d = mean ? FE_OP(cx, "subtract", NULL, x, mean) : NULL;
  FeVal *var = d ? FE_OP(cx, "mean", ab_done(&m2), FE_OP(cx, "multiply", NULL, d, d)) : NULL;
  FeVal *den =
      var ? FE_OP(cx, "sqrt", NULL, FE_OP(cx, "add", NULL, var, fe_scalar(cx, fe_dtype(x), eps)))
          : NULL;
  FeVal *inv = den ? FE_OP(cx, "divide", NULL, fe_scalar(cx, fe_dtype(x), 1.0), den) : NULL;
  FeVal *y = inv ? FE_OP(cx, "multiply", NULL, d, inv) : NULL;
  y = y ? FE_OP(cx, "multiply", NULL, y, scale) : NULL;
  if (cx->nout > 1) cx->out[1] = mean;
  if (cx->nout > 2) cx->out[2] = inv;
  return set_out(cx, y && bias ? FE_OP(cx, "add", NULL, y, bias) : NULL);
}

/* ───────────────────────── pools ───────────────────────── */

/* v with `before` and `after` elements of value fill around axis a
 * (static shapes). */
static FeVal *pad_axis(OnnxCx *cx, FeVal *v, int a, int64_t before, int64_t after, double fill) {
  int64_t shape[TENSOR_MAX_RANK];
  if (!v || !fe_static_shape(v, shape) || (!before && !after)) return v;
  FeVal *parts[3];
  int n = 0;
  for (int side = 0; side < 2; side++) {
    if (side) parts[n++] = v;
    shape[a] = side ? after : before;
    if (!shape[a]) continue;
    Tensor *t = tensor_new(cx->a, fe_dtype(v), fe_rank(v), shape);
    for (int64_t i = 0; i < t->numel; i++) tensor_set_f64(t, i, fill);
    parts[n++] = fe_const(cx, t);
  }
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", a);
  return fe_op(cx, "concatenate", n, parts, ab_done(&b));
}

/* The flat index (storage_order 0: row-major; 1: the last two axes
 * swapped) of each element of a static shape, padded with -1. */
static FeVal *flat_indices(OnnxCx *cx, int r, const int64_t *shape, const int64_t *lo,
                           const int64_t *hi, bool column) {
  int64_t ps[TENSOR_MAX_RANK], at[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) ps[i] = shape[i] + lo[i] + hi[i];
  Tensor *t = tensor_new(cx->a, DT_INT64, r, ps);
  for (int64_t e = 0; e < t->numel; e++) {
    int64_t flat = 0;
    bool ok = true;
    for (int i = 0; i < r; i++) {
      int j = column && i >= r - 2 ? 2 * r - 3 - i : i; /* the order axes are counted in */
      int64_t c = at[j] - lo[j];
      ok &= c >= 0 && c < shape[j];
      flat = flat * shape[j] + c;
    }
    tensor_set_i64(t, e, ok ? flat : -1);
    for (int i = r - 1; i >= 0 && ++at[i] == ps[i]; i--) at[i] = 0;
  }
  return fe_const(cx, t);
}

/* MaxPool's Indices: over every kernel offset, the strided slices of the
 * padded input (-inf) and of its flat indices; the index of the first
 * element of each window equal to the pooled maximum y (static shapes). */
static FeVal *pool_indices(OnnxCx *cx, FeVal *x, const Window *w, FeVal *y) {
  int r = fe_rank(x);
  int64_t xs[TENSOR_MAX_RANK], ys[TENSOR_MAX_RANK], lo[TENSOR_MAX_RANK] = {0},
                                                    hi[TENSOR_MAX_RANK] = {0}, noff = 1;
  if (!y || !fe_static_shape(x, xs) || !fe_static_shape(y, ys))
    return FE_FAIL_NULL(cx, "the Indices output needs static shapes");
  for (int i = 0; i < w->k; i++) {
    int64_t need = (ys[2 + i] - 1) * w->strides[i] + (w->kernel[i] - 1) * w->dil[i] + 1;
    lo[2 + i] = w->pads[i];
    hi[2 + i] = need - xs[2 + i] - lo[2 + i];
    if (hi[2 + i] < 0) hi[2 + i] = 0;
    noff *= w->kernel[i];
  }
  if (noff > 256) return FE_FAIL_NULL(cx, "the Indices output of windows over 256 elements");
  FeVal *xp = x, *ip = flat_indices(cx, r, xs, lo, hi, oa_int(cx, "storage_order", 0) != 0);
  for (int i = 0; i < w->k; i++) xp = pad_axis(cx, xp, 2 + i, lo[2 + i], hi[2 + i], -INFINITY);
  FeVal *bi = NULL;
  for (int64_t o = noff - 1; o >= 0 && xp; o--) { /* the last offset first: the first wins */
    int64_t begin[3], end[3], axes[3], rest = o;
    for (int i = w->k - 1; i >= 0; i--)
      begin[i] = (rest % w->kernel[i]) * w->dil[i], rest /= w->kernel[i];
    for (int i = 0; i < w->k; i++)
      end[i] = begin[i] + (ys[2 + i] - 1) * w->strides[i] + 1, axes[i] = 2 + i;
    AttrB b = ab_new(cx), c = ab_new(cx);
    ab_ints(&b, "begin", w->k, begin), ab_ints(&b, "end", w->k, end);
    ab_ints(&b, "strides", w->k, w->strides), ab_ints(&b, "axes", w->k, axes);
    ab_ints(&c, "begin", w->k, begin), ab_ints(&c, "end", w->k, end);
    ab_ints(&c, "strides", w->k, w->strides), ab_ints(&c, "axes", w->k, axes);
    FeVal *iv = FE_OP(cx, "strided_slice", ab_done(&c), ip);
    FeVal *hit = FE_OP(cx, "equal", NULL, FE_OP(cx, "strided_slice", ab_done(&b), xp), y);
    bi = !bi ? iv : hit && iv ? FE_OP(cx, "where", NULL, hit, iv, bi) : NULL;
  }
  return bi;
}

/* MaxPool / AveragePool over 1 to 3 spatial dims. */
bool onnx_convert_pool(OnnxCx *cx) {
  bool max = strcmp(cx->node->op_type, "MaxPool") == 0;
  bool indices = max && cx->nout > 1 && *cx->node->output[1];
  FeVal *x = cx->in[0];
  Window win = {.k = spatial_rank(cx, x)};
  if (win.k < 0) return false;
  int64_t ks[3];
  if (oa_ints(cx, "kernel_shape", ks, 3) != win.k)
    return cx->failed ? false : fe_fail(cx, "attribute 'kernel_shape' must have %d values", win.k);
  memcpy(win.kernel, ks, sizeof ks);
  if (!read_window(cx, x, &win, max)) return false;
  if (oa_int(cx, "storage_order", 0) && (!indices || win.k != 2))
    return fe_fail(cx, "storage_order 1 is supported with the Indices output of 2-D pools");
  AttrB b = ab_new(cx);
  window_attrs(&b, &win, max, "pool_size");
  ab_bool(&b, "ceil_mode", oa_int(cx, "ceil_mode", 0) != 0);
  if (!max) ab_bool(&b, "count_include_pad", oa_int(cx, "count_include_pad", 0) != 0);
  const char *op = max ? by_rank(win.k, "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d")
                       : by_rank(win.k, "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d");
  FeVal *y = FE_OP(cx, op, ab_done(&b), x);
  if (indices) cx->out[1] = pool_indices(cx, x, &win, y);
  return set_out(cx, y) && (!indices || cx->out[1]);
}

/* GlobalAveragePool / GlobalMaxPool: the 2-D ops on NCHW; other ranks a
 * mean / max over the spatial axes, keeping them. */
bool onnx_convert_global_pool(OnnxCx *cx) {
  bool avg = strcmp(cx->node->op_type, "GlobalAveragePool") == 0;
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  if (r == 4)
    return set_out(cx, FE_OP(cx, avg ? "nn.global_avg_pool2d" : "nn.global_max_pool2d", NULL, x));
  if (r < 3) return fe_fail(cx, "the input has rank %d (at least 3 expected)", r);
  int64_t axes[TENSOR_MAX_RANK];
  for (int i = 2; i < r; i++) axes[i - 2] = i;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axis", r - 2, axes);
  ab_bool(&b, "keepdims", true);
  return set_out(cx, FE_OP(cx, avg ? "mean" : "max", ab_done(&b), x));
}
