/* fake_quant.c — FakeQuantizationToInteger (the products part of TVM's pass
 * of that name): a product of two dequantized 8-bit tensors, as ONNX's QDQ
 * models and TVM's fake-quantized graphs write it, becomes the integer
 * product (qnn.conv2d / qnn.dense: int32 accumulation, byte dot products
 * where the CPU has them) dequantized once:
 *
 *   nn.conv2d(qnn.dequantize(x, sx, zx), qnn.dequantize(w, sw, zw))
 *     → qnn.dequantize(qnn.conv2d(x, w, zx, zw, sx, sw, out_dtype="int32"),
 *                      multiply(sx, sw), 0, axis=1)
 *   nn.dense(dq(x), dq(w))   → the same through qnn.dense (axis=-1)
 *   nn.matmul(dq(x), dq(w))  (2-D, w [K, N]) → qnn.dense(x, transpose(w), ...)
 *
 * The data operand of a dense or matmul may also be a reshape or transpose
 * of a dequantize with scalar parameters (a flatten before a classifier):
 * the reshape moves onto the integer tensor.
 * Conditions: x and w int8 or uint8; sx and zx scalars; sw and zw scalars
 * or one value per output channel (the dequantize's axis is the weight's
 * output-channel axis); convolutions NCHW / OIHW.  The result equals the
 * float product up to float32's rounding: the integer sum is exact and
 * scaled once, where the float product rounds at every step.  What follows
 * the product (bias, activation, the next quantize) stays as it is. */
#include <string.h>

#include "passes/graph_int.h"

/* The parts of a qnn.dequantize(q, s, z, axis) of an 8-bit tensor. */
typedef struct Deq {
  Expr *q, *s, *z;
  int axis, ndim; /* axis normalized to q's rank */
  bool per_channel;
} Deq;

static bool is_byte(DType t) { return t == DT_INT8 || t == DT_UINT8; }

static int rank_of(const Expr *e) {
  const Type *t = graph_tensor_of(e);
  return t ? t->u.tensor.ndim : -1;
}

/* e (through a variable) as a dequantize of an 8-bit tensor with int32
 * zero points. */
static bool as_deq(Graph *g, Expr *e, Deq *d) {
  Expr *v = graph_value(g, e);
  if (!graph_is_call(v, GOP_QNN_DEQUANTIZE) || v->u.call.nargs != 3) return false;
  const Type *q = graph_tensor_of(v->u.call.args[0]), *z = graph_tensor_of(v->u.call.args[2]);
  if (!q || !z || !is_byte(q->u.tensor.dtype) || z->u.tensor.dtype != DT_INT32) return false;
  const AttrValue *ax = attrs_get(v->u.call.attrs, "axis");
  *d = (Deq){v->u.call.args[0],      v->u.call.args[1], v->u.call.args[2],
             ax ? (int)ax->u.i : -1, q->u.tensor.ndim,  false};
  if (d->axis < 0) d->axis += d->ndim;
  d->per_channel = rank_of(d->s) == 1 || rank_of(d->z) == 1;
  return rank_of(d->s) <= 1 && rank_of(d->z) <= 1;
}

/* e as a dequantize, or as a reshape or transpose of a dequantize with
 * scalar parameters (which commute with it): then the reshape or transpose
 * moves onto the integer tensor. */
static bool as_deq_moved(Graph *g, Expr *e, Deq *d) {
  if (as_deq(g, e, d)) return true;
  Expr *v = graph_value(g, e);
  bool movable = graph_is_call(v, GOP_RESHAPE) || graph_is_call(v, GOP_TRANSPOSE);
  if (!movable || v->u.call.nargs != 1 || !as_deq(g, v->u.call.args[0], d) || d->per_channel)
    return false;
  Expr *arg[1] = {d->q};
  d->q = graph_call_index(g, v->u.call.fn->u.op.index, 1, arg, v->u.call.attrs, v->span);
  d->ndim = rank_of(d->q);
  return d->ndim >= 0;
}

/* x's parameters are scalars; w's scalars or along its output channels. */
static bool params_ok(const Deq *x, const Deq *w, int w_out_axis) {
  return !x->per_channel && (!w->per_channel || w->axis == w_out_axis);
}

/* r's attributes with out_dtype="int32" (added or replacing). */
static Attrs *int32_out(Graph *g, const Attrs *in) {
  int n = in ? in->n : 0, k = 0;
  Attrs *at = attrs_new(g->a, n + 1);
  for (int i = 0; i < n; i++)
    if (strcmp(in->keys[i], "out_dtype") != 0)
      at->keys[k] = in->keys[i], at->vals[k++] = in->vals[i];
  at->keys[k] = "out_dtype", at->vals[k++] = attr_str(g->a, "int32");
  at->n = k;
  return at;
}

static bool attr_is(const Attrs *a, const char *key, const char *want) {
  const AttrValue *v = attrs_get(a, key);
  return !v || (v->kind == AV_STR && strcmp(v->u.s, want) == 0);
}

/* qnn.dequantize(p, multiply(sx, sw), 0, axis) for the product p. */
static Expr *rescale(Graph *g, Expr *p, const Deq *x, const Deq *w, int axis, Span sp) {
  Attrs *at = graph_attrs(g, 1);
  graph_attr_int(g, at, 0, "axis", axis);
  Expr *args[3] = {p, graph_call2(g, GOP_MULTIPLY, x->s, w->s, sp),
                   graph_scalar(g, DT_INT32, 0, sp)};
  return graph_call(g, GOP_QNN_DEQUANTIZE, 3, args, at, sp);
}

/* The qnn op k on the integer operands (w already in its layout). */
static Expr *product(Graph *g, GraphOp k, const Deq *x, Expr *w, const Deq *wd, const Attrs *at,
                     Span sp) {
  Expr *args[6] = {x->q, w, x->z, wd->z, x->s, wd->s};
  return graph_call(g, k, 6, args, int32_out(g, at), sp);
}

static Expr *conv(Graph *g, Expr *r) {
  Deq x, w;
  const Attrs *at = r->u.call.attrs;
  if (!as_deq(g, r->u.call.args[0], &x) || !as_deq(g, r->u.call.args[1], &w) || x.ndim != 4 ||
      !params_ok(&x, &w, 0) || !attr_is(at, "data_layout", "NCHW") ||
      !attr_is(at, "kernel_layout", "OIHW") || !attr_is(at, "out_layout", ""))
    return NULL;
  return rescale(g, product(g, GOP_QNN_CONV2D, &x, w.q, &w, at, r->span), &x, &w, 1, r->span);
}

static Expr *dense(Graph *g, Expr *r) {
  Deq x, w;
  if (!as_deq_moved(g, r->u.call.args[0], &x) || !as_deq(g, r->u.call.args[1], &w) || x.ndim != 2 ||
      w.ndim != 2 || !params_ok(&x, &w, 0))
    return NULL;
  Expr *p = product(g, GOP_QNN_DENSE, &x, w.q, &w, r->u.call.attrs, r->span);
  return rescale(g, p, &x, &w, -1, r->span);
}

static bool flag(const Attrs *a, const char *key) {
  const AttrValue *v = attrs_get(a, key);
  return v && ((v->kind == AV_BOOL && v->u.b) || (v->kind == AV_INT && v->u.i));
}

/* nn.matmul(x, w) of 2-D operands: w is [K, N] (or [N, K] with
 * transpose_b), qnn.dense takes [N, K]. */
static Expr *matmul(Graph *g, Expr *r) {
  Deq x, w;
  const Attrs *at = r->u.call.attrs;
  bool tb = flag(at, "transpose_b");
  if (flag(at, "transpose_a") || !as_deq_moved(g, r->u.call.args[0], &x) ||
      !as_deq(g, r->u.call.args[1], &w) || x.ndim != 2 || w.ndim != 2 ||
      !params_ok(&x, &w, tb ? 0 : 1))
    return NULL;
  Expr *wt = tb ? w.q : graph_call1(g, GOP_TRANSPOSE, w.q, NULL, r->span);
  Expr *p = product(g, GOP_QNN_DENSE, &x, wt, &w, graph_attrs(g, 0), r->span);
  return rescale(g, p, &x, &w, -1, r->span);
}

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (r->kind != EX_CALL || !graph_tensor_of(e) || graph_tensor_of(e)->u.tensor.dtype != DT_FLOAT32)
    return r;
  Expr *out = NULL;
  const char *name = NULL;
  if (graph_is_call(r, GOP_CONV2D))
    out = conv(g, r), name = "conv2d";
  else if (graph_is_call(r, GOP_DENSE))
    out = dense(g, r), name = "dense";
  else if (graph_is_call(r, GOP_MATMUL))
    out = matmul(g, r), name = "matmul";
  if (!out || !graph_report(g, name, e, out)) return r;
  return out;
}

static const GraphHooks hooks = {.rule = rule};

Module *pass_fake_quantization_to_integer(PassCtx *pc, Module *in) {
  return graph_pass(pc, in, &hooks, NULL);
}
