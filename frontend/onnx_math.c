/* onnx_math.c — converters of the elementwise, activation, comparison,
 * constant, reduction and softmax ops (rows in onnx_ops.c).
 *
 * ONNX's multidirectional broadcasting is numpy's, as the Relay ops'
 * relations are, so binary ops map one to one.  Where ONNX takes a second
 * operand of another type (Pow's exponent) it is cast to the first's.
 * Activations without a Relay op of their own are written with the ops
 * TVM's converters use (HardSigmoid as clip(alpha * x + beta, 0, 1)).
 * Before opset 7 binary ops broadcast only on request (broadcast=1,
 * aligned at `axis`): the *_v1 converters line B up for numpy's rules. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "frontend/onnx_int.h"

/* The Relay op of the node's ONNX op in a {onnx, relay} list. */
static const char *relay_of(OnnxCx *cx, const char *const (*map)[2]) {
  for (int i = 0; map[i][0]; i++)
    if (strcmp(map[i][0], cx->node->op_type) == 0) return map[i][1];
  RLY_UNREACHABLE();
}

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* Operands of different dtypes where one is a constant: the constant takes
 * the other's dtype (folded here).  Exporters write scalars as doubles
 * beside float32 tensors (PyTorch's torch.where(c, 1.0, x)); ONNX means
 * the tensor's type.  Other mismatches stay, for the relation to report. */
static void match_dtypes(OnnxCx *cx, FeVal **a, FeVal **b) {
  if (!*a || !*b || fe_dtype(*a) == fe_dtype(*b)) return;
  if ((*b)->expr->kind == EX_CONST)
    *b = fe_cast(cx, *b, fe_dtype(*a));
  else if ((*a)->expr->kind == EX_CONST)
    *a = fe_cast(cx, *a, fe_dtype(*b));
}

static FeVal *binary_op(OnnxCx *cx, const char *op, FeVal *a, FeVal *b) {
  match_dtypes(cx, &a, &b);
  return FE_OP(cx, op, NULL, a, b);
}

/* ───────────────────────── arithmetic ───────────────────────── */

enum { MAXSYM = TENSOR_MAX_RANK * 8 };

/* One element of a binary op on shape values followed symbolically
 * (onnx_int.h): constants fold as the integer kernels would (division
 * truncates); x * 1, x / 1, x + 0, x - 0 keep a size variable; `=`
 * (Equal, 1 or 0) knows that a size variable is itself and is never
 * negative; anything else is `?`. */
static Dim sym_arith(char op, Dim a, Dim b) {
  bool ca = a.kind == DIM_CONST, cb = b.kind == DIM_CONST;
  int64_t r;
  if (op == '=') {
    if (ca && cb) return dim_const(a.value == b.value);
    if (a.kind == DIM_VAR && b.kind == DIM_VAR && strcmp(a.name, b.name) == 0) return dim_const(1);
    if ((a.kind == DIM_VAR && cb && b.value < 0) || (b.kind == DIM_VAR && ca && a.value < 0))
      return dim_const(0);
    return dim_any();
  }
  if (ca && cb) {
    bool ovf = op == '+'   ? __builtin_add_overflow(a.value, b.value, &r)
               : op == '-' ? __builtin_sub_overflow(a.value, b.value, &r)
               : op == '*' ? __builtin_mul_overflow(a.value, b.value, &r)
                           : b.value == 0 || (r = a.value / b.value, false);
    return ovf ? dim_any() : dim_const(r);
  }
  if (cb && b.value == (op == '*' || op == '/' ? 1 : 0)) return a;
  if (ca && a.value == (op == '*' ? 1 : 0) && (op == '*' || op == '+')) return b;
  return dim_any();
}

/* y = a op b with the elements of shape values a and b followed. */
static FeVal *sym_binary(OnnxCx *cx, char op, FeVal *y, const FeVal *a, const FeVal *b) {
  Dim sa[MAXSYM], sb[MAXSYM], out[MAXSYM];
  int na = fe_sym_get(a, sa, MAXSYM), nb = fe_sym_get(b, sb, MAXSYM);
  if (!y || y->value || na < 0 || nb < 0 || (na != nb && na != 1 && nb != 1)) return y;
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) out[i] = sym_arith(op, sa[na == 1 ? 0 : i], sb[nb == 1 ? 0 : i]);
  return fe_sym_set(cx, y, n, out);
}

bool onnx_convert_binary(OnnxCx *cx) {
  static const char *const map[][2] = {
      {"Add", "add"}, {"Sub", "subtract"}, {"Mul", "multiply"}, {"Div", "divide"}, {NULL, NULL}};
  const char *op = relay_of(cx, map);
  FeVal *y = binary_op(cx, op, cx->in[0], cx->in[1]);
  char sym_op = op[0] == 'a' ? '+' : op[0] == 's' ? '-' : op[0] == 'm' ? '*' : '/';
  return set_out(cx, sym_binary(cx, sym_op, y, cx->in[0], cx->in[1]));
}

/* ───────────────────────── opsets 1 to 6: broadcasting on request ───────────────────────── */

/* Whether the static dims of a and b differ (ranks included). */
static bool shapes_differ(const FeVal *a, const FeVal *b) {
  if (fe_rank(a) != fe_rank(b)) return true;
  for (int i = 0; i < fe_rank(a); i++) {
    Dim da = fe_dim(a, i), db = fe_dim(b, i);
    if (da.kind == DIM_CONST && db.kind == DIM_CONST && da.value != db.value) return true;
  }
  return false;
}

/* Before opset 7 a binary op broadcasts B to A only with broadcast=1, B's
 * dims lining up with A's from `axis` on (by default A's last ones, a 1
 * stretching); without it A and B have one shape.  B gets trailing 1s
 * (reshape's 0 keeps a dim), so numpy's broadcasting puts it at `axis`. */
static bool legacy_broadcast(OnnxCx *cx) {
  FeVal *a = cx->in[0], *b = cx->in[1];
  int ra = fe_rank(a), rb = fe_rank(b);
  if (!oa_int(cx, "broadcast", 0))
    return !shapes_differ(a, b) ||
           fe_fail(cx,
                   "A and B differ in shape and broadcast is 0 (opset %lld broadcasts only "
                   "with broadcast=1)",
                   (long long)cx->opset);
  int64_t axis = oa_int(cx, "axis", ra - rb), ns[TENSOR_MAX_RANK];
  if (cx->failed) return false;
  if (rb > ra || axis < 0 || axis + rb > ra)
    return fe_fail(cx, "B of rank %d does not fit A of rank %d at axis %lld", rb, ra,
                   (long long)axis);
  if (axis + rb == ra) return true;
  for (int i = 0; i < ra - axis; i++) ns[i] = i < rb ? 0 : 1;
  AttrB bb = ab_new(cx);
  ab_ints(&bb, "newshape", (int)(ra - axis), ns);
  return (cx->in[1] = FE_OP(cx, "reshape", ab_done(&bb), b)) != NULL;
}

bool onnx_convert_binary_v1(OnnxCx *cx) { return legacy_broadcast(cx) && onnx_convert_binary(cx); }
bool onnx_convert_pow_v1(OnnxCx *cx) { return legacy_broadcast(cx) && onnx_convert_pow(cx); }
bool onnx_convert_compare_v1(OnnxCx *cx) {
  return legacy_broadcast(cx) && onnx_convert_compare(cx);
}
bool onnx_convert_logic_v1(OnnxCx *cx) { return legacy_broadcast(cx) && onnx_convert_logic(cx); }

/* Before opset 8 Max, Min, Sum and Mean take inputs of one shape. */
static bool same_shapes(OnnxCx *cx) {
  for (int i = 1; cx->opset < 8 && i < cx->nin; i++)
    if (shapes_differ(cx->in[0], cx->in[i]))
      return fe_fail(cx, "input %d differs in shape from input 0 (opset %lld does not broadcast)",
                     i, (long long)cx->opset);
  return true;
}

bool onnx_convert_pow(OnnxCx *cx) {
  FeVal *e = fe_cast(cx, cx->in[1], fe_dtype(cx->in[0]));
  return set_out(cx, e ? FE_OP(cx, "power", NULL, cx->in[0], e) : NULL);
}

bool onnx_convert_unary(OnnxCx *cx) {
  static const char *const map[][2] = {{"Sqrt", "sqrt"}, {"Exp", "exp"},     {"Log", "log"},
                                       {"Erf", "erf"},   {"Tanh", "tanh"},   {"Sigmoid", "sigmoid"},
                                       {"Sin", "sin"},   {"Cos", "cos"},     {"Neg", "negative"},
                                       {"Abs", "abs"},   {"Floor", "floor"}, {"Ceil", "ceil"},
                                       {"Sign", "sign"}, {NULL, NULL}};
  return set_out(cx, FE_OP(cx, relay_of(cx, map), NULL, cx->in[0]));
}

/* Round: halves to even, as ONNX (and numpy) round; Relay's round goes
 * away from zero.  f = floor(x); up when x - f > 1/2, or == 1/2 and f is
 * odd. */
bool onnx_convert_round(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  DType dt = fe_dtype(x);
  FeVal *half = fe_scalar(cx, dt, 0.5), *f = FE_OP(cx, "floor", NULL, x);
  FeVal *d = f ? FE_OP(cx, "subtract", NULL, x, f) : NULL;
  FeVal *odd = f ? FE_OP(cx, "not_equal", NULL, FE_OP(cx, "mod", NULL, f, fe_scalar(cx, dt, 2)),
                         fe_scalar(cx, dt, 0))
                 : NULL;
  FeVal *tie =
      d && odd ? FE_OP(cx, "logical_and", NULL, FE_OP(cx, "equal", NULL, d, half), odd) : NULL;
  FeVal *up = tie ? FE_OP(cx, "logical_or", NULL, FE_OP(cx, "greater", NULL, d, half), tie) : NULL;
  FeVal *f1 = up ? FE_OP(cx, "add", NULL, f, fe_scalar(cx, dt, 1)) : NULL;
  return set_out(cx, f1 ? FE_OP(cx, "where", NULL, up, f1, f) : NULL);
}

bool onnx_convert_reciprocal(OnnxCx *cx) {
  FeVal *one = fe_scalar(cx, fe_dtype(cx->in[0]), 1.0);
  return set_out(cx, FE_OP(cx, "divide", NULL, one, cx->in[0]));
}

/* Max, Min, Sum over any number of inputs: a left fold. */
bool onnx_convert_variadic(OnnxCx *cx) {
  static const char *const map[][2] = {
      {"Max", "maximum"}, {"Min", "minimum"}, {"Sum", "add"}, {NULL, NULL}};
  const char *op = relay_of(cx, map);
  FeVal *acc = same_shapes(cx) ? cx->in[0] : NULL;
  for (int i = 1; i < cx->nin && acc; i++) acc = binary_op(cx, op, acc, cx->in[i]);
  return set_out(cx, acc);
}

bool onnx_convert_mean(OnnxCx *cx) {
  FeVal *acc = same_shapes(cx) ? cx->in[0] : NULL;
  for (int i = 1; i < cx->nin && acc; i++) acc = FE_OP(cx, "add", NULL, acc, cx->in[i]);
  if (!acc || cx->nin == 1) return set_out(cx, acc);
  return set_out(cx, FE_OP(cx, "divide", NULL, acc, fe_scalar(cx, fe_dtype(acc), cx->nin)));
}

/* ───────────────────────── activations ───────────────────────── */

bool onnx_convert_relu(OnnxCx *cx) { return set_out(cx, FE_OP(cx, "nn.relu", NULL, cx->in[0])); }

bool onnx_convert_leaky_relu(OnnxCx *cx) {
  AttrB b = ab_new(cx);
  ab_float(&b, "alpha", oa_float(cx, "alpha", 0.01));
  return set_out(cx, FE_OP(cx, "nn.leaky_relu", ab_done(&b), cx->in[0]));
}

/* nn.prelu takes one slope per channel (axis 1): a slope of shape (C) or
 * (C, 1, ..., 1) is reshaped to (C); any other slope that broadcasts to
 * the input (a scalar, one per last-axis element, a full tensor) gives
 * where(x < 0, x * slope, x).  A slope of shape (C) is per channel for an
 * input of rank 2, or before opset 7; from 7 it broadcasts as numpy's
 * rules say (along the last axis). */
bool onnx_convert_prelu(OnnxCx *cx) {
  FeVal *x = cx->in[0], *slope = cx->in[1];
  int r = fe_rank(x), rs = fe_rank(slope);
  int64_t sshape[TENSOR_MAX_RANK];
  bool per_channel = r >= 2 && rs >= 1 && fe_static_shape(slope, sshape) && rs <= r - 1 &&
                     fe_dim(x, 1).kind == DIM_CONST && sshape[0] == fe_dim(x, 1).value;
  for (int i = 1; per_channel && i < rs; i++) per_channel = sshape[i] == 1 && rs == r - 1;
  if (rs == 1 && r > 2 && cx->opset >= 7) per_channel = false;
  if (!per_channel) {
    if (rs > r)
      return fe_fail(
          cx, "the slope has rank %d, more than the input's %d (it must broadcast to it)", rs, r);
    FeVal *neg = FE_OP(cx, "less", NULL, x, fe_scalar(cx, fe_dtype(x), 0));
    FeVal *scaled = neg ? FE_OP(cx, "multiply", NULL, x, slope) : NULL;
    return set_out(cx, scaled ? FE_OP(cx, "where", NULL, neg, scaled, x) : NULL);
  }
  if (rs > 1) {
    AttrB b = ab_new(cx);
    ab_ints(&b, "newshape", 1, &sshape[0]);
    slope = FE_OP(cx, "reshape", ab_done(&b), slope);
  }
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", 1);
  return set_out(cx, slope ? FE_OP(cx, "nn.prelu", ab_done(&b), x, slope) : NULL);
}

/* A Clip bound: an attribute (opset < 11) or an optional input.  Known:
 * *v gets it and the result is NULL; computed at run time: the input. */
static FeVal *clip_bound(OnnxCx *cx, int input, const char *attr, bool *known, double *v) {
  *known = false;
  if (cx->opset < 11) {
    if (oa_get(cx, attr)) *known = true, *v = oa_float(cx, attr, 0);
    return NULL;
  }
  FeVal *b = cx->nin > input ? cx->in[input] : NULL;
  if (b && b->value && b->value->numel == 1) {
    *known = true, *v = tensor_get_f64(b->value, 0);
    return NULL;
  }
  return b;
}

/* Clip: two known bounds give clip(a_min, a_max); otherwise each bound
 * present is a maximum / minimum with it (a constant or a computed one). */
bool onnx_convert_clip(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  bool klo, khi;
  double lo = 0, hi = 0;
  FeVal *vlo = clip_bound(cx, 1, "min", &klo, &lo), *vhi = clip_bound(cx, 2, "max", &khi, &hi);
  if (klo && khi) {
    AttrB b = ab_new(cx);
    ab_float(&b, "a_min", lo);
    ab_float(&b, "a_max", hi);
    return set_out(cx, FE_OP(cx, "clip", ab_done(&b), x));
  }
  if (klo) vlo = fe_scalar(cx, fe_dtype(x), lo);
  if (khi) vhi = fe_scalar(cx, fe_dtype(x), hi);
  FeVal *y = x;
  if (y && vlo) y = FE_OP(cx, "maximum", NULL, y, fe_cast(cx, vlo, fe_dtype(x)));
  if (y && vhi) y = FE_OP(cx, "minimum", NULL, y, fe_cast(cx, vhi, fe_dtype(x)));
  return set_out(cx, y);
}

static FeVal *clip01(OnnxCx *cx, FeVal *x, double alpha, double beta) {
  DType dt = fe_dtype(x);
  FeVal *y = FE_OP(cx, "multiply", NULL, x, fe_scalar(cx, dt, alpha));
  y = y ? FE_OP(cx, "add", NULL, y, fe_scalar(cx, dt, beta)) : NULL;
  AttrB b = ab_new(cx);
  ab_float(&b, "a_min", 0);
  ab_float(&b, "a_max", 1);
  return y ? FE_OP(cx, "clip", ab_done(&b), y) : NULL;
}

bool onnx_convert_hard_sigmoid(OnnxCx *cx) {
  return set_out(cx, clip01(cx, cx->in[0], oa_float(cx, "alpha", 0.2), oa_float(cx, "beta", 0.5)));
}

bool onnx_convert_hard_swish(OnnxCx *cx) {
  FeVal *g = clip01(cx, cx->in[0], 1.0 / 6.0, 0.5);
  return set_out(cx, g ? FE_OP(cx, "multiply", NULL, cx->in[0], g) : NULL);
}

/* Elu: x where x > 0, else alpha * (exp(x) - 1). */
bool onnx_convert_elu(OnnxCx *cx) {
  FeVal *x = cx->in[0];
  DType dt = fe_dtype(x);
  FeVal *e = FE_OP(cx, "exp", NULL, x);
  e = e ? FE_OP(cx, "subtract", NULL, e, fe_scalar(cx, dt, 1)) : NULL;
  e = e ? FE_OP(cx, "multiply", NULL, e, fe_scalar(cx, dt, oa_float(cx, "alpha", 1.0))) : NULL;
  FeVal *pos = e ? FE_OP(cx, "greater", NULL, x, fe_scalar(cx, dt, 0)) : NULL;
  return set_out(cx, pos ? FE_OP(cx, "where", NULL, pos, x, e) : NULL);
}

bool onnx_convert_softplus(OnnxCx *cx) {
  FeVal *e = FE_OP(cx, "exp", NULL, cx->in[0]);
  e = e ? FE_OP(cx, "add", NULL, e, fe_scalar(cx, fe_dtype(cx->in[0]), 1)) : NULL;
  return set_out(cx, e ? FE_OP(cx, "log", NULL, e) : NULL);
}

/* ───────────────────────── comparisons and logic ───────────────────────── */

bool onnx_convert_compare(OnnxCx *cx) {
  static const char *const map[][2] = {{"Equal", "equal"},
                                       {"Less", "less"},
                                       {"Greater", "greater"},
                                       {"LessOrEqual", "less_equal"},
                                       {"GreaterOrEqual", "greater_equal"},
                                       {NULL, NULL}};
  const char *op = relay_of(cx, map);
  FeVal *y = binary_op(cx, op, cx->in[0], cx->in[1]);
  return set_out(cx, strcmp(op, "equal") == 0 ? sym_binary(cx, '=', y, cx->in[0], cx->in[1]) : y);
}

bool onnx_convert_not(OnnxCx *cx) { return set_out(cx, FE_OP(cx, "logical_not", NULL, cx->in[0])); }

bool onnx_convert_logic(OnnxCx *cx) {
  static const char *const map[][2] = {
      {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"}, {NULL, NULL}};
  return set_out(cx, FE_OP(cx, relay_of(cx, map), NULL, cx->in[0], cx->in[1]));
}

/* Where on shape values followed symbolically (exporters write
 * where(shape == -1, 1, shape) before Expand): a known condition picks. */
static FeVal *sym_where(OnnxCx *cx, FeVal *r, const FeVal *c, const FeVal *x, const FeVal *y) {
  Dim sc[MAXSYM], sx[MAXSYM], sy[MAXSYM], out[MAXSYM];
  int nc = fe_sym_get(c, sc, MAXSYM), nx = fe_sym_get(x, sx, MAXSYM),
      ny = fe_sym_get(y, sy, MAXSYM);
  int n = nc > nx ? (nc > ny ? nc : ny) : (nx > ny ? nx : ny);
  if (!r || r->value || nc < 0 || nx < 0 || ny < 0 || (nc != n && nc != 1) ||
      (nx != n && nx != 1) || (ny != n && ny != 1))
    return r;
  for (int i = 0; i < n; i++) {
    Dim k = sc[nc == 1 ? 0 : i];
    out[i] = k.kind != DIM_CONST ? dim_any() : k.value ? sx[nx == 1 ? 0 : i] : sy[ny == 1 ? 0 : i];
  }
  return fe_sym_set(cx, r, n, out);
}

/* Where: a known condition that is all true or all false picks a branch
 * of the result's type outright. */
bool onnx_convert_where(OnnxCx *cx) {
  FeVal *x = cx->in[1], *y = cx->in[2];
  match_dtypes(cx, &x, &y);
  FeVal *r = FE_OP(cx, "where", NULL, cx->in[0], x, y);
  const Tensor *c = cx->in[0]->value;
  int64_t ntrue = 0;
  for (int64_t i = 0; r && c && i < c->numel; i++) ntrue += tensor_get_i64(c, i) != 0;
  FeVal *pick = !r || !c ? NULL : ntrue == c->numel ? x : ntrue == 0 ? y : NULL;
  if (pick && type_equal(pick->ty, r->ty)) return set_out(cx, pick);
  return set_out(cx, sym_where(cx, r, cx->in[0], cx->in[1], cx->in[2]));
}

/* ───────────────────────── dtypes, identity, constants ───────────────────────── */

/* Cast's `to`: a data type's code, or before opset 6 its name ("FLOAT"). */
static int32_t cast_to(OnnxCx *cx, const Onnx__AttributeProto *to) {
  if (cx->opset >= 6 || to->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
    return (int32_t)oa_int(cx, "to", 0);
  const char *want = oa_str(cx, "to", ""), *name;
  for (int32_t code = 1; code < 32; code++)
    if (onnx_dtype(code, &name), strcasecmp(name, want) == 0) return code;
  return fe_fail(cx, "attribute 'to' names no data type ('%s')", want), 0;
}

bool onnx_convert_cast(OnnxCx *cx) {
  const Onnx__AttributeProto *to = oa_get(cx, "to");
  if (!to) return fe_fail(cx, "attribute 'to' is missing");
  const char *tn;
  int32_t code = cast_to(cx, to);
  if (cx->failed) return false;
  DType dt = onnx_dtype(code, &tn);
  if (dt == DT_INVALID) return fe_fail(cx, "casting to %s is not supported", tn);
  FeVal *y = fe_cast(cx, cx->in[0], dt);
  Dim s[MAXSYM]; /* a shape value cast between integer types keeps its elements */
  int n = y && y != cx->in[0] && dtype_is_int(dt) ? fe_sym_get(cx->in[0], s, MAXSYM) : -1;
  return set_out(cx, n >= 0 ? fe_sym_set(cx, y, n, s) : y);
}

bool onnx_convert_identity(OnnxCx *cx) { return set_out(cx, cx->in[0]); }

/* Whether the value is known to be zero (false), nonzero, or neither (-1). */
static int known_nonzero(OnnxCx *cx, const FeVal *v) {
  double d;
  if (!v || !v->value) return -1;
  return fe_need_scalar(cx, v, "value", &d) ? d != 0 : -1;
}

/* Dropout: the identity, with a mask of ones (of the input's type before
 * opset 10); is_test=0 (training, the default before opset 7) is refused.  In training mode (input
 * training_mode, opset 12 on) with a ratio above zero it draws random
 * numbers, which no implementation can match to the suite's: refused at
 * import when both are known, otherwise a run-time `check` refuses it
 * then (training_mode false or ratio 0 run as the identity). */
bool onnx_convert_dropout(OnnxCx *cx) {
  if (cx->opset < 7 && !oa_int(cx, "is_test", 0))
    return fe_fail(cx, "training mode (is_test=0 at opset %lld) is not supported (inference only)",
                   (long long)cx->opset);
  FeVal *x = cx->in[0], *ratio = cx->nin > 1 ? cx->in[1] : NULL;
  FeVal *train = cx->nin > 2 ? cx->in[2] : NULL;
  int t = train ? known_nonzero(cx, train) : 0, r = ratio ? known_nonzero(cx, ratio) : 1;
  const char *why = arena_printf(cx->a,
                                 "Dropout (ai.onnx, opset %lld) in training mode with a ratio "
                                 "above 0 draws random numbers; only inference (training_mode "
                                 "false or ratio 0) is supported",
                                 (long long)cx->opset);
  if (t == 1 && r == 1) return fe_fail(cx, "%s", why);
  if (t != 0 && r != 0) { /* decided at run time */
    FeVal *on = fe_cast(cx, train, DT_BOOL);
    if (r < 0)
      on = FE_OP(cx, "logical_and", NULL, on,
                 FE_OP(cx, "greater", NULL, ratio, fe_scalar(cx, fe_dtype(ratio), 0)));
    AttrB b = ab_new(cx);
    ab_str(&b, "message", arena_printf(cx->a, "%s: %s: %s", cx->file, fe_node_text(cx), why));
    x = on ? FE_OP(cx, "check", ab_done(&b), x, on) : NULL;
  }
  cx->out[0] = x;
  if (cx->nout > 1 && x) {
    FeVal *ones = FE_OP(cx, "ones_like", NULL, x);
    cx->out[1] =
        ones && cx->opset >= 10 ? fe_cast(cx, ones, DT_BOOL) : ones; /* before 10: x's type */
    return cx->out[1] != NULL;
  }
  return x != NULL;
}

/* Constant: the one of value, value_float(s), value_int(s) present. */
bool onnx_convert_constant(OnnxCx *cx) {
  const Onnx__AttributeProto *at = oa_get(cx, "value");
  if (at && at->t) {
    Tensor *t = onnx_tensor(cx, at->t, "attribute 'value'");
    return set_out(cx, t ? fe_const(cx, t) : NULL);
  }
  if ((at = oa_get(cx, "value_float"))) return set_out(cx, fe_scalar(cx, DT_FLOAT32, at->f));
  if ((at = oa_get(cx, "value_int"))) return set_out(cx, fe_scalar(cx, DT_INT64, (double)at->i));
  if ((at = oa_get(cx, "value_ints"))) {
    int64_t shape[1] = {(int64_t)at->n_ints};
    Tensor *t = tensor_new(cx->a, DT_INT64, 1, shape);
    for (size_t i = 0; i < at->n_ints; i++) tensor_set_i64(t, (int64_t)i, at->ints[i]);
    return set_out(cx, fe_const(cx, t));
  }
  if ((at = oa_get(cx, "value_floats"))) {
    int64_t shape[1] = {(int64_t)at->n_floats};
    Tensor *t = tensor_new(cx->a, DT_FLOAT32, 1, shape);
    for (size_t i = 0; i < at->n_floats; i++) tensor_set_f64(t, (int64_t)i, at->floats[i]);
    return set_out(cx, fe_const(cx, t));
  }
  if (cx->node->n_attribute && cx->node->attribute[0]->name)
    return fe_fail(cx,
                   "attribute '%s' is not supported (value, value_float(s) and value_int(s) are)",
                   cx->node->attribute[0]->name);
  return fe_fail(cx, "no value attribute");
}

/* ───────────────────────── reductions ───────────────────────── */

/* The axes of a reduction: an attribute before the opset where they
 * became an input (13 for ReduceSum, 18 for the others). */
static int reduce_axes(OnnxCx *cx, int64_t *axes) {
  bool as_input = strcmp(cx->node->op_type, "ReduceSum") == 0 ? cx->opset >= 13 : cx->opset >= 18;
  if (!as_input) return oa_ints(cx, "axes", axes, TENSOR_MAX_RANK);
  if (cx->nin < 2 || !cx->in[1]) return -1;
  return fe_need_ints(cx, cx->in[1], "input 'axes'", axes, TENSOR_MAX_RANK);
}

bool onnx_convert_reduce(OnnxCx *cx) {
  static const char *const map[][2] = {{"ReduceMean", "mean"}, {"ReduceSum", "sum"},
                                       {"ReduceMax", "max"},   {"ReduceMin", "min"},
                                       {"ReduceProd", "prod"}, {NULL, NULL}};
  if (onnx_reduce_axes_at_run_time(cx)) return onnx_convert_reduce_dyn(cx);
  int64_t axes[TENSOR_MAX_RANK];
  int n = reduce_axes(cx, axes);
  if (cx->failed) return false;
  if (n <= 0 && oa_int(cx, "noop_with_empty_axes", 0)) return set_out(cx, cx->in[0]);
  AttrB b = ab_new(cx);
  if (n > 0) ab_ints(&b, "axis", n, axes);
  ab_bool(&b, "keepdims", oa_int(cx, "keepdims", 1) != 0);
  return set_out(cx, FE_OP(cx, relay_of(cx, map), ab_done(&b), cx->in[0]));
}

/* ArgMax / ArgMin: int64 indices as ONNX has them (Relay gives int32). */
bool onnx_convert_argreduce(OnnxCx *cx) {
  AttrB b = ab_new(cx);
  int64_t axis = oa_int(cx, "axis", 0);
  ab_ints(&b, "axis", 1, &axis);
  ab_bool(&b, "keepdims", oa_int(cx, "keepdims", 1) != 0);
  ab_bool(&b, "select_last_index", oa_int(cx, "select_last_index", 0) != 0);
  const char *op = strcmp(cx->node->op_type, "ArgMax") == 0 ? "argmax" : "argmin";
  FeVal *r = FE_OP(cx, op, ab_done(&b), cx->in[0]);
  return set_out(cx, r ? fe_cast(cx, r, DT_INT64) : NULL);
}

/* Softmax / LogSoftmax.  From opset 13 over one axis (default -1); before,
 * over the input flattened to 2-D at `axis` (default 1): a reshape to
 * (outer, inner), the op over axis 1, and a reshape back. */
bool onnx_convert_softmax(OnnxCx *cx) {
  const char *op = strcmp(cx->node->op_type, "Softmax") == 0 ? "nn.softmax" : "nn.log_softmax";
  FeVal *x = cx->in[0];
  int r = fe_rank(x);
  int axis = fe_axis(cx, oa_int(cx, "axis", cx->opset >= 13 ? -1 : 1), r, "axis");
  if (axis < 0) return false;
  AttrB b = ab_new(cx);
  if (cx->opset >= 13 || axis == r - 1) {
    ab_int(&b, "axis", axis == r - 1 ? -1 : axis);
    return set_out(cx, FE_OP(cx, op, ab_done(&b), x));
  }
  int64_t shape[TENSOR_MAX_RANK], two[2] = {1, 1};
  if (!fe_static_shape(x, shape))
    return fe_fail(cx, "opset %lld's flattening softmax needs a static input shape",
                   (long long)cx->opset);
  for (int i = 0; i < r; i++) two[i >= axis] *= shape[i];
  AttrB f = ab_new(cx), back = ab_new(cx);
  ab_ints(&f, "newshape", 2, two);
  ab_ints(&back, "newshape", r, shape);
  ab_int(&b, "axis", 1);
  FeVal *y = FE_OP(cx, "reshape", ab_done(&f), x);
  y = y ? FE_OP(cx, op, ab_done(&b), y) : NULL;
  return set_out(cx, y ? FE_OP(cx, "reshape", ab_done(&back), y) : NULL);
}
