/* onnx_rnn.c — converters of the recurrent layers LSTM, GRU and RNN (rows
 * in onnx_ops.c), for sequences of any length.
 *
 * The time loop is a recursive local function, one per direction:
 *
 *   let %lstm3_fwd = fn (%lstm3_k: int64, %lstm3_h: Tensor[(B, H)], %lstm3_c: ...,
 *                        %lstm3_ys: Tensor[(?, B, H)]) -> (h, c, ys) {
 *     if (%lstm3_k == T) { (h, c, ys) } else { <one step>; %lstm3_fwd(k + 1, h', c', ys') }
 *   };
 *   %r = %lstm3_fwd(0i64, h0, c0, <ys of length 0>);
 *
 * T is read from the input's shape at run time (shape_of), so one function
 * serves every sequence length; the step's tensors have static shapes (the
 * batch and hidden sizes), so in the jit mode its gate products and
 * elementwise math are fused and compiled once for all lengths.  The loop
 * is a tail call (the interpreter runs it in constant stack).  The input
 * projection of every time step, X W^T + biases, is one product before
 * the loop (on X reshaped to (T * B, I) when the batch is static); a step
 * takes its row of it (`take`), adds h R^T and applies the gates.  Step
 * outputs are concatenated onto the loop's ys (the reverse direction puts
 * them in front), which works for any length.
 *
 * A static T (up to RNN_UNROLL_MAX steps; what an export with fixed shapes
 * gives) is written out instead: the projection is split into its T rows
 * once, the steps follow one another in the let chain, and their outputs
 * are concatenated once at the end.  Every step's ops are alike, so FuseOps'
 * groups and the JIT's kernels are shared by all steps, with static
 * shapes throughout and no copy of the outputs so far at each step.
 *
 * ONNX layout (layout = 0): X (T, B, I), W (D, G*H, I), R (D, G*H, H),
 * B (D, 2*G*H), initial_h / initial_c (D, B, H); Y (T, D, B, H), Y_h and
 * Y_c (D, B, H); gates i o f c (LSTM), z r h (GRU) and one (RNN:
 * h' = f(xw_t + h R^T), f Tanh by default).  Layout 1 (batch
 * first: X (B, T, I), states (B, D, H), Y (B, T, D, H)) is transposed to
 * layout 0 and back.  What torch.nn.LSTM and torch.nn.GRU export is
 * covered, and activations Sigmoid, Tanh, Relu in any place, LSTM's
 * peepholes (P: i and f read P * c, o reads P * c'), and sequence_lens
 * forward: a sequence's state stops at its length and its later outputs
 * are zeros; clip, activations with parameters and sequence_lens of the
 * other directions fail naming the attribute or input. */
#include <string.h>

#include "frontend/onnx_int.h"

static const Span no_span;

/* Longer static sequences keep the loop: the written-out form grows with T. */
enum { RNN_UNROLL_MAX = 1024 };

typedef struct Rnn {
  bool lstm;
  int gates;      /* 4 (LSTM), 3 (GRU) or 1 (RNN) */
  int64_t hidden; /* H */
  int ndir;
  bool reverse; /* direction "reverse" (one direction, backwards) */
  bool lbr;     /* GRU: linear_before_reset */
  bool layout1; /* layout 1: X (B, T, I), states (B, D, H), Y (B, T, D, H) */
  DType dt;
  FeVal *x;              /* (T, B, I) */
  FeVal *init[2];        /* initial_h, initial_c (D, B, H), or NULL */
  FeVal *len;            /* T: an int64 scalar */
  FeVal *lens;           /* sequence_lens as int64 (B, 1), or NULL */
  Type *h_ty;            /* the loop's state type (B, H): B static, a size variable or `?` */
  Type *ys_ty;           /* (?, B, H) */
  const char *n;         /* a prefix for the loop's names */
  const char *act[2][3]; /* per direction: the Relay ops of ONNX's f, g, h */
} Rnn;

/* One direction's values, computed before its loop. */
typedef struct RnnDir {
  bool reverse;
  const char *const *act; /* f, g, h */
  FeVal *xw;              /* (T, B, G*H): X W^T + Wb (+ Rb where it adds) */
  FeVal *r;               /* (G*H, H), or GRU without linear_before_reset: the z, r rows */
  FeVal *r_h;             /* GRU without linear_before_reset: the h rows (H, H) */
  FeVal *rb;              /* GRU with linear_before_reset: Rb (G*H), else NULL */
  FeVal *h0, *c0;         /* (B, H) */
  FeVal *peep[3];         /* LSTM's peepholes P_i, P_o, P_f (H), or NULL */
} RnnDir;

/* ───────────────────────── small builders ───────────────────────── */

static FeVal *op1(OnnxCx *cx, const char *op, FeVal *a) { return FE_OP(cx, op, NULL, a); }
static FeVal *op2(OnnxCx *cx, const char *op, FeVal *a, FeVal *b) {
  return FE_OP(cx, op, NULL, a, b);
}

static FeVal *slice1(OnnxCx *cx, FeVal *v, int axis, int64_t begin, int64_t end) {
  AttrB b = ab_new(cx);
  int64_t ax = axis;
  ab_ints(&b, "begin", 1, &begin), ab_ints(&b, "end", 1, &end), ab_ints(&b, "axes", 1, &ax);
  return FE_OP(cx, "strided_slice", ab_done(&b), v);
}

/* Gate g of a (..., G*H) value. */
static FeVal *gate(OnnxCx *cx, const Rnn *r, FeVal *v, int g) {
  return slice1(cx, v, fe_rank(v) - 1, g * r->hidden, (g + 1) * r->hidden);
}

static FeVal *take_at(OnnxCx *cx, FeVal *v, FeVal *index, int axis) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  return FE_OP(cx, "take", ab_done(&b), v, index);
}

static FeVal *take_dir(OnnxCx *cx, FeVal *v, int d) {
  return v ? take_at(cx, v, fe_scalar(cx, DT_INT64, d), 0) : NULL;
}

static FeVal *expand_at(OnnxCx *cx, FeVal *v, int axis) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  return FE_OP(cx, "expand_dims", ab_done(&b), v);
}

/* v without its leading axis of size 1. */
static FeVal *squeeze0(OnnxCx *cx, FeVal *v) {
  AttrB b = ab_new(cx);
  int64_t axis0 = 0;
  ab_ints(&b, "axis", 1, &axis0);
  return FE_OP(cx, "squeeze", ab_done(&b), v);
}

static FeVal *concat2(OnnxCx *cx, FeVal *a, FeVal *b, int axis) {
  if (!a) return b;
  AttrB at = ab_new(cx);
  ab_int(&at, "axis", axis);
  return FE_OP(cx, "concatenate", ab_done(&at), a, b);
}

/* v with its axes permuted (NULL stays NULL). */
static FeVal *permute(OnnxCx *cx, FeVal *v, int n, const int64_t *axes) {
  if (!v) return NULL;
  AttrB b = ab_new(cx);
  ab_ints(&b, "axes", n, axes);
  return FE_OP(cx, "transpose", ab_done(&b), v);
}

static FeVal *reshape(OnnxCx *cx, FeVal *v, int n, const int64_t *shape) {
  AttrB b = ab_new(cx);
  ab_ints(&b, "newshape", n, shape);
  return FE_OP(cx, "reshape", ab_done(&b), v);
}

static FeVal *add_opt(OnnxCx *cx, FeVal *a, FeVal *b) { return b ? op2(cx, "add", a, b) : a; }

static FeVal *param_val(OnnxCx *cx, Var *var) {
  FeVal *v = ARENA_NEW(cx->a, FeVal);
  v->expr = expr_var(cx->a, var, no_span);
  v->ty = var->annot;
  return v;
}

/* The converter's let chain is swapped for a fresh one while a nested
 * block (the loop's body, its else branch) is built. */
typedef struct Chain {
  PtrVec vars, vals;
} Chain;

static void chain_begin(OnnxCx *cx, Chain *saved) {
  saved->vars = cx->let_vars, saved->vals = cx->let_vals;
  memset(&cx->let_vars, 0, sizeof cx->let_vars);
  memset(&cx->let_vals, 0, sizeof cx->let_vals);
}

/* The nested block's bindings around result; the outer chain back. */
static Expr *chain_end(OnnxCx *cx, Chain *saved, Expr *result) {
  Expr *body = result;
  for (size_t i = cx->let_vars.len; i-- > 0;)
    body = expr_let(cx->a, cx->let_vars.items[i], cx->let_vals.items[i], body, no_span);
  vec_free(&cx->let_vars), vec_free(&cx->let_vals);
  cx->let_vars = saved->vars, cx->let_vals = saved->vals;
  return body;
}

/* ───────────────────────── attributes ───────────────────────── */

/* Fails with "unsupported attribute value" naming the attribute. */
static bool unsupported(OnnxCx *cx, const char *attr, const char *value, const char *why) {
  return fe_fail(cx, "unsupported attribute value %s=%s (%s)", attr, value, why);
}

/* ONNX activation names the converter supports, as Relay ops. */
static const char *const act_names[][2] = {
    {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Relu", "nn.relu"}};

/* activations: per direction f, g (and h for LSTM), by default Sigmoid,
 * Tanh (, Tanh), and RNN's one f, Tanh; into r->act as Relay ops.  Those
 * with parameters (activation_alpha/beta) are not supported. */
static bool read_activations(OnnxCx *cx, Rnn *r) {
  int per = r->lstm ? 3 : r->gates == 1 ? 1 : 2;
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < 3; k++) r->act[d][k] = k || r->gates == 1 ? "tanh" : "sigmoid";
  const Onnx__AttributeProto *at = oa_get(cx, "activations");
  if (!at) return true;
  if (at->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)
    return fe_fail(cx, "attribute 'activations' must be strings");
  StrBuf b = {0};
  bool ok = (int)at->n_strings == per * r->ndir;
  for (size_t i = 0; i < at->n_strings; i++) {
    const char *s = arena_strndup(cx->a, (const char *)at->strings[i].data, at->strings[i].len);
    sb_printf(&b, "%s%s", i ? "," : "", s);
    const char *op = NULL;
    for (size_t k = 0; k < sizeof act_names / sizeof act_names[0]; k++)
      if (!strcmp(s, act_names[k][0])) op = act_names[k][1];
    ok = ok && op;
    if (op && i < (size_t)(2 * per)) r->act[i / (size_t)per][i % (size_t)per] = op;
  }
  const char *list = arena_strdup(cx->a, b.data ? b.data : "");
  sb_free(&b);
  if (ok) return true;
  return unsupported(
      cx, "activations", list,
      arena_printf(cx->a, "%d per direction, each Sigmoid, Tanh or Relu, are supported", per));
}

/* The attributes: direction, hidden_size, and those whose other values
 * are not supported (clip, activation_alpha/beta, layout, input_forget). */
static bool read_attrs(OnnxCx *cx, Rnn *r) {
  const char *dir = oa_str(cx, "direction", "forward");
  if (!strcmp(dir, "bidirectional"))
    r->ndir = 2;
  else if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
    r->ndir = 1, r->reverse = !strcmp(dir, "reverse");
  else
    return unsupported(cx, "direction", dir, "forward, reverse and bidirectional are supported");
  if (oa_get(cx, "clip"))
    return unsupported(cx, "clip", arena_printf(cx->a, "%g", oa_float(cx, "clip", 0)),
                       "cell clipping is not supported");
  for (int i = 0; i < 2; i++) {
    const char *name = i ? "activation_beta" : "activation_alpha";
    double v[8];
    int n = oa_floats(cx, name, v, 8);
    if (n >= 0)
      return unsupported(cx, name, n ? arena_printf(cx->a, "%g%s", v[0], n > 1 ? ",..." : "") : "",
                         "the default activations take no parameters");
  }
  int64_t layout = oa_int(cx, "layout", 0);
  if (layout != 0 && layout != 1)
    return unsupported(cx, "layout", arena_printf(cx->a, "%lld", (long long)layout),
                       "0 and 1 are supported");
  r->layout1 = layout == 1;
  int64_t forget = r->lstm ? oa_int(cx, "input_forget", 0) : 0;
  if (forget != 0)
    return unsupported(cx, "input_forget", arena_printf(cx->a, "%lld", (long long)forget),
                       "coupled input and forget gates are not supported");
  r->lbr = !r->lstm && oa_int(cx, "linear_before_reset", 0) != 0;
  r->hidden = oa_int(cx, "hidden_size", -1);
  return !cx->failed && read_activations(cx, r);
}

/* ───────────────────────── inputs ───────────────────────── */

static bool static_dim(OnnxCx *cx, FeVal *v, int i, const char *what, int64_t want) {
  Dim d = fe_dim(v, i);
  if (d.kind != DIM_CONST) return fe_fail(cx, "%s: dim %d must be static", what, i);
  if (want >= 0 && d.value != want)
    return fe_fail(cx, "%s: dim %d is %lld, %lld expected", what, i, (long long)d.value,
                   (long long)want);
  return true;
}

/* Checks the inputs' ranks and shapes against each other and sets the
 * hidden size, the dtype and the loop's state types. */
static bool check_inputs(OnnxCx *cx, Rnn *r) {
  FeVal *x = r->x, *w = cx->in[1], *rr = cx->in[2];
  if (fe_rank(x) != 3 || fe_rank(w) != 3 || fe_rank(rr) != 3)
    return fe_fail(cx, "X, W and R must have rank 3 (ranks %d, %d, %d)", fe_rank(x), fe_rank(w),
                   fe_rank(rr));
  r->dt = fe_dtype(x);
  if (!dtype_is_float(r->dt) || fe_dtype(w) != r->dt || fe_dtype(rr) != r->dt)
    return fe_fail(cx, "X, W and R must have one float dtype (%s, %s, %s)", dtype_name(r->dt),
                   dtype_name(fe_dtype(w)), dtype_name(fe_dtype(rr)));
  if (!static_dim(cx, rr, 2, "R", r->hidden)) return false;
  r->hidden = fe_dim(rr, 2).value;
  int64_t gh = r->gates * r->hidden;
  if (!static_dim(cx, w, 0, "W", r->ndir) || !static_dim(cx, w, 1, "W", gh) ||
      !static_dim(cx, x, 2, "X", -1) || !static_dim(cx, w, 2, "W", fe_dim(x, 2).value) ||
      !static_dim(cx, rr, 0, "R", r->ndir) || !static_dim(cx, rr, 1, "R", gh))
    return false;
  if (cx->nin > 3 && cx->in[3] &&
      (fe_rank(cx->in[3]) != 2 || !static_dim(cx, cx->in[3], 0, "B", r->ndir) ||
       !static_dim(cx, cx->in[3], 1, "B", 2 * gh)))
    return cx->failed ? false : fe_fail(cx, "B must have rank 2 (%d)", fe_rank(cx->in[3]));
  if (cx->nin > 4 && cx->in[4]) {
    if (r->ndir != 1 || r->reverse)
      return fe_fail(cx, "input 'sequence_lens' is supported in the forward direction only");
    int64_t col[2] = {-1, 1};
    r->lens = reshape(cx, fe_cast(cx, cx->in[4], DT_INT64), 2, col);
  }
  if (cx->nin > 7 && cx->in[7] &&
      (fe_rank(cx->in[7]) != 2 || !static_dim(cx, cx->in[7], 1, "P", 3 * r->hidden)))
    return cx->failed ? false : fe_fail(cx, "P must have rank 2 (%d)", fe_rank(cx->in[7]));
  for (int i = 0; i < 2; i++) {
    FeVal *s = r->init[i];
    const char *what = i ? "initial_c" : "initial_h";
    if (s && (fe_rank(s) != 3 || fe_dtype(s) != r->dt))
      return fe_fail(cx, "%s must be a rank-3 %s tensor", what, dtype_name(r->dt));
    Dim xb = fe_dim(x, 1);
    int64_t wants[3] = {r->ndir, xb.kind == DIM_CONST ? xb.value : -1, r->hidden};
    for (int k = 0; s && k < 3; k++) { /* computed states may have `?` dims */
      Dim d = fe_dim(s, k);
      int64_t want = wants[k];
      if (d.kind == DIM_CONST && want >= 0 && d.value != want)
        return fe_fail(cx, "%s: dim %d is %lld, %lld expected", what, k, (long long)d.value,
                       (long long)want);
    }
  }
  Dim batch = fe_dim(x, 1);
  Dim hd[2] = {batch.kind == DIM_CONST || batch.kind == DIM_VAR ? batch : dim_any(),
               dim_const(r->hidden)};
  Dim yd[3] = {dim_any(), hd[0], hd[1]};
  r->h_ty = type_tensor(cx->a, r->dt, 2, hd, no_span);
  r->ys_ty = type_tensor(cx->a, r->dt, 3, yd, no_span);
  return true;
}

/* ───────────────────────── before the loop ───────────────────────── */

/* X W^T + bias for every time step: (T, B, G*H).  With a static batch the
 * product is one matrix product on X as (T * B, I). */
static FeVal *input_projection(OnnxCx *cx, const Rnn *r, FeVal *w, FeVal *bias) {
  FeVal *x = r->x;
  Dim batch = fe_dim(x, 1);
  if (batch.kind != DIM_CONST) return add_opt(cx, FE_OP(cx, "nn.dense", NULL, x, w), bias);
  int64_t flat[2] = {-1, fe_dim(x, 2).value};
  int64_t back[3] = {-1, batch.value, r->gates * r->hidden};
  FeVal *p = add_opt(cx, FE_OP(cx, "nn.dense", NULL, reshape(cx, x, 2, flat), w), bias);
  return reshape(cx, p, 3, back);
}

/* The initial state of direction d: the input's slice, else zeros. */
static FeVal *initial_state(OnnxCx *cx, const Rnn *r, const RnnDir *dd, int which, int d) {
  if (r->init[which]) return take_dir(cx, r->init[which], d); /* (B, H) */
  Dim batch = fe_dim(r->x, 1);
  if (batch.kind == DIM_CONST) {
    AttrB b = ab_new(cx);
    int64_t shape[2] = {batch.value, r->hidden};
    ab_ints(&b, "shape", 2, shape);
    ab_str(&b, "dtype", dtype_name(r->dt));
    return fe_op(cx, "zeros", 0, NULL, ab_done(&b));
  }
  /* a batch known only at run time: zeros shaped like one step's gate */
  FeVal *step0 = take_at(cx, dd->xw, fe_scalar(cx, DT_INT64, 0), 0);
  return op1(cx, "zeros_like", gate(cx, r, step0, 0));
}

/* Direction d's weights, projection and initial states. */
static RnnDir prepare_dir(OnnxCx *cx, const Rnn *r, int d) {
  RnnDir dd;
  memset(&dd, 0, sizeof dd);
  dd.reverse = d == 1 || r->reverse;
  dd.act = r->act[d];
  int64_t gh = r->gates * r->hidden;
  FeVal *w = take_dir(cx, cx->in[1], d), *rw = take_dir(cx, cx->in[2], d);
  FeVal *b = cx->nin > 3 ? take_dir(cx, cx->in[3], d) : NULL, *wb = NULL, *rb = NULL;
  if (b) wb = slice1(cx, b, 0, 0, gh), rb = slice1(cx, b, 0, gh, 2 * gh);
  if (r->lstm || !r->lbr) { /* biases add up before the gates' nonlinearity */
    dd.xw = input_projection(cx, r, w, b ? op2(cx, "add", wb, rb) : NULL);
    dd.r = rw;
    if (r->gates == 3) /* GRU: the h gate's product is (r * h) R_h^T */
      dd.r = slice1(cx, rw, 0, 0, 2 * r->hidden),
      dd.r_h = slice1(cx, rw, 0, 2 * r->hidden, 3 * r->hidden);
  } else { /* GRU, linear_before_reset: Rb_h stays inside r * (h R_h^T + Rb_h) */
    dd.xw = input_projection(cx, r, w, wb);
    dd.r = rw, dd.rb = rb;
  }
  dd.h0 = initial_state(cx, r, &dd, 0, d);
  dd.c0 = r->lstm ? initial_state(cx, r, &dd, 1, d) : NULL;
  FeVal *p = r->lstm && cx->nin > 7 ? take_dir(cx, cx->in[7], d) : NULL;
  for (int k = 0; p && k < 3; k++) dd.peep[k] = gate(cx, r, p, k);
  return dd;
}

/* ───────────────────────── one step ───────────────────────── */

/* LSTM: gates = xw_t + h R^T (i o f c); c' = f c + i tanh(g); h' = o tanh(c')
 * (sigmoid and tanh are the default activations f, g, h). */
static void lstm_step(OnnxCx *cx, const Rnn *r, const RnnDir *dd, FeVal *xw_t, FeVal *h, FeVal *c,
                      FeVal **h1, FeVal **c1) {
  FeVal *g = op2(cx, "add", xw_t, FE_OP(cx, "nn.dense", NULL, h, dd->r));
  const char *const *a = dd->act;
  FeVal *const *p = dd->peep;
  FeVal *gi = gate(cx, r, g, 0), *go = gate(cx, r, g, 1), *gf = gate(cx, r, g, 2);
  if (p[0]) gi = op2(cx, "add", gi, op2(cx, "multiply", p[0], c));
  if (p[2]) gf = op2(cx, "add", gf, op2(cx, "multiply", p[2], c));
  FeVal *i = op1(cx, a[0], gi), *f = op1(cx, a[0], gf), *z = op1(cx, a[1], gate(cx, r, g, 3));
  *c1 = op2(cx, "add", op2(cx, "multiply", f, c), op2(cx, "multiply", i, z));
  if (p[1]) go = op2(cx, "add", go, op2(cx, "multiply", p[1], *c1));
  FeVal *o = op1(cx, a[0], go);
  *h1 = op2(cx, "multiply", o, op1(cx, a[2], *c1));
}

/* GRU (z r h), with the default f = sigmoid, g = tanh:
 * z, r = sigmoid(xw + h R^T); n = tanh(xw_h + (r h) R_h^T),
 * or with linear_before_reset tanh(xw_h + r (h R_h^T + Rb_h));
 * h' = n + z (h - n), which is (1 - z) n + z h. */
static FeVal *gru_step(OnnxCx *cx, const Rnn *r, const RnnDir *dd, FeVal *xw_t, FeVal *h) {
  FeVal *hr = add_opt(cx, FE_OP(cx, "nn.dense", NULL, h, dd->r), dd->rb);
  const char *const *a = dd->act;
  FeVal *z = op1(cx, a[0], op2(cx, "add", gate(cx, r, xw_t, 0), gate(cx, r, hr, 0)));
  FeVal *rg = op1(cx, a[0], op2(cx, "add", gate(cx, r, xw_t, 1), gate(cx, r, hr, 1)));
  FeVal *hh = r->lbr ? op2(cx, "multiply", rg, gate(cx, r, hr, 2))
                     : FE_OP(cx, "nn.dense", NULL, op2(cx, "multiply", rg, h), dd->r_h);
  FeVal *n = op1(cx, a[1], op2(cx, "add", gate(cx, r, xw_t, 2), hh));
  return op2(cx, "add", n, op2(cx, "multiply", z, op2(cx, "subtract", h, n)));
}

/* One step of the layer at time t: h1 (and c1 for LSTM) from the state,
 * and the step's output y; with sequence_lens, a sequence past its length
 * keeps its state and outputs zeros. */
static FeVal *rnn_step(OnnxCx *cx, const Rnn *r, const RnnDir *dd, FeVal *t, FeVal *xw_t, FeVal *h,
                       FeVal *c, FeVal **h1, FeVal **c1) {
  if (r->lstm)
    lstm_step(cx, r, dd, xw_t, h, c, h1, c1);
  else if (r->gates == 3)
    *h1 = gru_step(cx, r, dd, xw_t, h);
  else
    *h1 = op1(cx, dd->act[0], op2(cx, "add", xw_t, FE_OP(cx, "nn.dense", NULL, h, dd->r)));
  if (!r->lens || !*h1) return *h1;
  FeVal *live = op2(cx, "less", t, r->lens), *y = *h1;
  *h1 = live ? FE_OP(cx, "where", NULL, live, y, h) : NULL;
  if (r->lstm) *c1 = live && *c1 ? FE_OP(cx, "where", NULL, live, *c1, c) : NULL;
  return live ? FE_OP(cx, "where", NULL, live, y, op1(cx, "zeros_like", y)) : NULL;
}

/* ───────────────────────── the loop ───────────────────────── */

static Var *new_param(OnnxCx *cx, const Rnn *r, const char *what, Type *ty) {
  return var_new(cx->a, arena_printf(cx->a, "%s_%s", r->n, what), ty, no_span);
}

/* v through a 1-tuple: FuseOps does not fuse across tuples, so the
 * step's row of the projection (a `take` from a tensor of run-time length,
 * which has no compiled kernel) is not fused into the gates' group, which
 * then compiles whatever the gates read it with (GRU slices it). */
static FeVal *fusion_fence(OnnxCx *cx, FeVal *v) {
  if (!v) return NULL;
  Type *ty = v->ty;
  FeVal *tup = fe_bind(cx, NULL, expr_tuple(cx->a, 1, &v->expr, no_span),
                       type_tuple(cx->a, 1, &ty, no_span));
  return fe_get(cx, tup, 0);
}

/* The else branch: one step at t = k (T - 1 - k backwards), then the
 * recursive call on k + 1 and the new state. */
static Expr *loop_step(OnnxCx *cx, const Rnn *r, const RnnDir *dd, Var *loop, Var **ps, int np) {
  Chain saved;
  chain_begin(cx, &saved);
  FeVal *k = param_val(cx, ps[0]), *h = param_val(cx, ps[1]);
  FeVal *c = r->lstm ? param_val(cx, ps[2]) : NULL, *ys = param_val(cx, ps[np - 1]);
  FeVal *t = k;
  if (dd->reverse)
    t = op2(cx, "subtract", op2(cx, "subtract", r->len, fe_scalar(cx, DT_INT64, 1)), k);
  FeVal *xw_t = fusion_fence(cx, take_at(cx, dd->xw, t, 0)), *h1 = NULL, *c1 = NULL;
  FeVal *y = rnn_step(cx, r, dd, t, xw_t, h, c, &h1, &c1);
  y = y ? expand_at(cx, y, 0) : NULL;
  FeVal *ys1 = dd->reverse ? concat2(cx, y, ys, 0) : concat2(cx, ys, y, 0);
  FeVal *k1 = op2(cx, "add", k, fe_scalar(cx, DT_INT64, 1));
  if (cx->failed) return chain_end(cx, &saved, expr_tuple(cx->a, 0, NULL, no_span));
  Expr *args[4] = {k1->expr, h1->expr, r->lstm ? c1->expr : ys1->expr, ys1->expr};
  Expr *call = expr_call(cx->a, expr_var(cx->a, loop, no_span), np, args, NULL, no_span);
  return chain_end(cx, &saved, call);
}

/* The loop's first ys: (0, B, H), sliced from the input projection (a
 * constant would lose its shape when printed as `[]`). */
static FeVal *no_steps(OnnxCx *cx, const Rnn *r, const RnnDir *dd) {
  AttrB b = ab_new(cx);
  int64_t begin[2] = {0, 0}, end[2] = {0, r->hidden}, axes[2] = {0, 2};
  ab_ints(&b, "begin", 2, begin), ab_ints(&b, "end", 2, end), ab_ints(&b, "axes", 2, axes);
  return FE_OP(cx, "strided_slice", ab_done(&b), dd->xw);
}

/* Builds direction dd's loop, calls it from the start, and returns its
 * final h, c (LSTM) and ys (T, B, H) in out[0..2]. */
static bool run_loop(OnnxCx *cx, const Rnn *r, const RnnDir *dd, FeVal **out) {
  int np = r->lstm ? 4 : 3;
  Var *ps[4];
  ps[0] = new_param(cx, r, "k", type_scalar(cx->a, DT_INT64));
  ps[1] = new_param(cx, r, "h", r->h_ty);
  if (r->lstm) ps[2] = new_param(cx, r, "c", r->h_ty);
  ps[np - 1] = new_param(cx, r, "ys", r->ys_ty);
  Type *fields[3] = {r->h_ty, r->h_ty, r->ys_ty};
  if (!r->lstm) fields[1] = r->ys_ty;
  Type *ret = type_tuple(cx->a, np - 1, fields, no_span);
  const char *name = arena_printf(cx->a, "%s_%s", r->n, dd->reverse ? "bwd" : "fwd");
  Var *loop = var_new(cx->a, name, NULL, no_span);
  /* the body: if (k == T) { (h, c, ys) } else { step; loop(k + 1, ...) } */
  Chain saved;
  chain_begin(cx, &saved);
  FeVal *done = op2(cx, "equal", param_val(cx, ps[0]), r->len);
  Expr *state[3];
  for (int i = 1; i < np; i++) state[i - 1] = expr_var(cx->a, ps[i], no_span);
  Expr *then = expr_tuple(cx->a, np - 1, state, no_span);
  Expr *els = done ? loop_step(cx, r, dd, loop, ps, np) : then;
  Expr *body = chain_end(cx, &saved, done ? expr_if(cx->a, done->expr, then, els, no_span) : then);
  if (cx->failed) return false;
  Function *fn = ARENA_NEW(cx->a, Function);
  fn->nparams = np, fn->params = ARENA_ARRAY(cx->a, Var *, np), fn->ret = ret, fn->body = body;
  memcpy(fn->params, ps, sizeof(Var *) * (size_t)np);
  FeVal *lv = fe_bind(cx, loop, expr_fn(cx->a, fn, no_span), NULL);
  /* the first call: k = 0, the initial states, no outputs yet */
  FeVal *ys0 = no_steps(cx, r, dd);
  if (!ys0) return false;
  Expr *args[4] = {fe_scalar(cx, DT_INT64, 0)->expr, dd->h0->expr,
                   r->lstm ? dd->c0->expr : ys0->expr, ys0->expr};
  FeVal *res = fe_bind(cx, NULL, expr_call(cx->a, lv->expr, np, args, NULL, no_span), ret);
  out[0] = fe_get(cx, res, 0);
  out[1] = r->lstm ? fe_get(cx, res, 1) : NULL;
  out[2] = fe_get(cx, res, np - 2);
  return true;
}

/* ───────────────────────── written out (static T) ───────────────────────── */

/* Direction dd's T steps one after another (step s is time T - 1 - s
 * backwards); out as run_loop's.  The state stays (1, B, H) from step to
 * step, so that a step reads its row of the split projection, (1, B, G*H),
 * as it is: each step's product-and-add is then the same kernel, and the
 * rows are concatenated into (T, B, H) at the end. */
static bool run_unrolled(OnnxCx *cx, const Rnn *r, const RnnDir *dd, int64_t T, FeVal **out) {
  AttrB b = ab_new(cx);
  ab_int(&b, "indices_or_sections", T), ab_int(&b, "axis", 0);
  FeVal *rows = T > 1 ? FE_OP(cx, "split", ab_done(&b), dd->xw) : NULL; /* T x (1, B, G*H) */
  FeVal **hs = ARENA_ARRAY(cx->a, FeVal *, T);
  FeVal *h = expand_at(cx, dd->h0, 0), *c = r->lstm ? expand_at(cx, dd->c0, 0) : NULL;
  for (int64_t s = 0; s < T && !cx->failed; s++) {
    int64_t t = dd->reverse ? T - 1 - s : s;
    FeVal *xw_t = rows ? fe_get(cx, rows, (int)t) : dd->xw, *h1 = NULL, *c1 = NULL;
    hs[t] = rnn_step(cx, r, dd, fe_scalar(cx, DT_INT64, (double)t), xw_t, h, c, &h1, &c1);
    h = h1, c = c1;
  }
  if (cx->failed) return false;
  AttrB cat = ab_new(cx);
  ab_int(&cat, "axis", 0);
  out[0] = squeeze0(cx, h);
  out[1] = r->lstm ? squeeze0(cx, c) : NULL;
  out[2] = T > 1 ? fe_op(cx, "concatenate", (int)T, hs, ab_done(&cat)) : h;
  return !cx->failed;
}

/* ───────────────────────── the converters ───────────────────────── */

/* Both ops: attributes, inputs, each direction's loop, then Y (T, D, B, H),
 * Y_h and Y_c (D, B, H) from the directions' results. */
static bool convert_rnn(OnnxCx *cx, int gates) {
  Rnn r;
  memset(&r, 0, sizeof r);
  bool lstm = gates == 4;
  r.lstm = lstm, r.gates = gates;
  r.n = arena_printf(cx->a, "%s%d", lstm ? "lstm" : gates == 3 ? "gru" : "rnn", cx->node_index);
  if (!read_attrs(cx, &r)) return false;
  static const int64_t swap01[3] = {1, 0, 2}, to_layout1[4] = {2, 0, 1, 3};
  r.x = cx->in[0];
  for (int i = 0; i < 2; i++) r.init[i] = cx->nin > 5 + i ? cx->in[5 + i] : NULL;
  if (r.layout1 && fe_rank(r.x) == 3) { /* to (T, B, ...) and back at the end */
    r.x = permute(cx, r.x, 3, swap01);
    for (int i = 0; i < 2; i++)
      r.init[i] = fe_rank(r.init[i]) == 3 ? permute(cx, r.init[i], 3, swap01) : r.init[i];
  }
  if (cx->failed || !check_inputs(cx, &r)) return false;
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", "int64");
  r.len = take_at(cx, FE_OP(cx, "shape_of", ab_done(&b), r.x), fe_scalar(cx, DT_INT64, 0), 0);
  Dim steps = fe_dim(r.x, 0);
  bool unroll = steps.kind == DIM_CONST && steps.value >= 1 && steps.value <= RNN_UNROLL_MAX;
  FeVal *y = NULL, *yh = NULL, *yc = NULL;
  for (int d = 0; d < r.ndir && !cx->failed; d++) {
    RnnDir dd = prepare_dir(cx, &r, d);
    FeVal *res[3];
    if (cx->failed) return false;
    if (unroll ? !run_unrolled(cx, &r, &dd, steps.value, res) : !run_loop(cx, &r, &dd, res))
      return false;
    y = concat2(cx, y, expand_at(cx, res[2], 1), 1);
    yh = concat2(cx, yh, expand_at(cx, res[0], 0), 0);
    if (lstm) yc = concat2(cx, yc, expand_at(cx, res[1], 0), 0);
  }
  if (r.layout1)
    y = permute(cx, y, 4, to_layout1), yh = permute(cx, yh, 3, swap01),
    yc = permute(cx, yc, 3, swap01);
  FeVal *outs[3] = {y, yh, yc};
  for (int i = 0; i < cx->nout && i < 3; i++) cx->out[i] = outs[i];
  return !cx->failed;
}

bool onnx_convert_lstm(OnnxCx *cx) { return convert_rnn(cx, 4); }
bool onnx_convert_gru(OnnxCx *cx) { return convert_rnn(cx, 3); }
bool onnx_convert_rnn(OnnxCx *cx) { return convert_rnn(cx, 1); }
