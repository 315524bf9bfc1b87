/* fast_math.c — FastMath (after TVM's relay.transform.FastMath): the
 * float32 transcendental ops become TVM's approximations, which are
 * polynomials the JIT vectorizes instead of a libm call per element:
 *   exp → fast_exp, tanh → fast_tanh, erf → fast_erf,
 *   nn.softmax → nn.fast_softmax, sigmoid(x) → 1 / (1 + fast_exp(-x))
 * (their errors are stated in ops/fast_math.h and checked against numpy in
 * tests/kernels/elemwise.py), and a power with a constant exponent of 2 or
 * 3 of a variable becomes products (power(%x, 3f) → %x * %x * %x: two
 * roundings instead of pow's one, and no libm call).  float64 and other
 * dtypes are left alone.  The jit mode runs it before fusion when fast
 * math is on (EngineOptions.fast_math); the interpreter never does, so it
 * stays the reference. */
#include "passes/graph_int.h"

/* X(from, to, rule name): the op pairs of the rule. */
#define FAST_PAIRS(X)                     \
  X(GOP_EXP, GOP_FAST_EXP, "fast_exp")    \
  X(GOP_TANH, GOP_FAST_TANH, "fast_tanh") \
  X(GOP_ERF, GOP_FAST_ERF, "fast_erf")    \
  X(GOP_SOFTMAX, GOP_FAST_SOFTMAX, "fast_softmax")

static bool float32_result(const Expr *r) {
  const Type *t = graph_tensor_of(r);
  return t && t->u.tensor.dtype == DT_FLOAT32;
}

/* The call with its op replaced by `to` (same arguments and attributes). */
static Expr *swap_op(Graph *g, Expr *e, Expr *r, GraphOp to, const char *rule) {
  Expr *out =
      graph_call_index(g, graph_op(to), r->u.call.nargs, r->u.call.args, r->u.call.attrs, r->span);
  graph_report(g, rule, e, out);
  return out;
}

/* The exponent of power(x, c) when c is a scalar float constant, else 0. */
static double const_exponent(const Expr *c) {
  if (c->kind != EX_CONST || !c->u.konst.value) return 0;
  const Tensor *t = c->u.konst.value;
  if (t->ndim != 0 || !dtype_is_float(t->dtype)) return 0;
  return tensor_get_f64(t, 0);
}

/* power(%x, 2f) → %x * %x; power(%x, 3f) → %x * %x * %x (x a variable or
 * a constant, so repeating it costs nothing). */
static Expr *rule_power(Graph *g, Expr *e, Expr *r) {
  Expr *x = r->u.call.args[0];
  double c = const_exponent(r->u.call.args[1]);
  if ((c != 2 && c != 3) || (x->kind != EX_VAR && x->kind != EX_CONST)) return r;
  const Type *tx = graph_tensor_of(x);
  if (!tx || tx->u.tensor.dtype != DT_FLOAT32) return r;
  Expr *out = graph_call2(g, GOP_MULTIPLY, x, x, r->span);
  if (c == 3) out = graph_call2(g, GOP_MULTIPLY, out, x, r->span);
  graph_report(g, c == 2 ? "power2" : "power3", e, out);
  return out;
}

/* sigmoid(x) → 1 / (1 + fast_exp(-x)): the sigmoid the kernels compute,
 * with fast_exp's error (LSTM and GRU gates are sigmoids). */
static Expr *rule_sigmoid(Graph *g, Expr *e, Expr *r) {
  Span sp = r->span;
  Expr *x = graph_call1(g, GOP_NEGATIVE, r->u.call.args[0], NULL, sp);
  Expr *d = graph_call2(g, GOP_ADD, graph_scalar(g, DT_FLOAT32, 1, sp),
                        graph_call1(g, GOP_FAST_EXP, x, NULL, sp), sp);
  Expr *out = graph_call2(g, GOP_DIVIDE, graph_scalar(g, DT_FLOAT32, 1, sp), d, sp);
  graph_report(g, "fast_sigmoid", e, out);
  return out;
}

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (r->kind != EX_CALL || r->u.call.fn->kind != EX_OP || !float32_result(r)) return r;
#define X(from, to, name) \
  if (graph_is_call(r, from)) return swap_op(g, e, r, to, name);
  FAST_PAIRS(X)
#undef X
  if (graph_is_call(r, GOP_POWER) && r->u.call.nargs == 2) return rule_power(g, e, r);
  if (graph_is_call(r, GOP_SIGMOID) && r->u.call.nargs == 1) return rule_sigmoid(g, e, r);
  return r;
}

static const GraphHooks hooks = {.rule = rule};

Module *pass_fast_math(PassCtx *pc, Module *in) { return graph_pass(pc, in, &hooks, NULL); }

bool fast_math_applies(const Module *m) {
  static const GraphOp ops[] = {
#define X(from, to, name) from,
      FAST_PAIRS(X)
#undef X
          GOP_POWER,
      GOP_SIGMOID};
  return graph_module_calls(m, ops, (int)(sizeof ops / sizeof *ops));
}
