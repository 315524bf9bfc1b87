/* fold_scale_axis.c — FoldScaleAxis (TVM's): a multiply by a per-channel
 * scale next to a conv2d or dense is folded into the weight, so that after
 * SimplifyInference and FoldConstant a conv → batch_norm → relu block is a
 * conv with new weights, an add and a relu.
 *
 *   backward  multiply(Y, S) where Y is made by a conv2d (or dense), maybe
 *             through relu / leaky_relu (then S must be a positive
 *             constant), add / subtract of a bias and nn.bias_add:
 *             conv2d(x, W) * S        → conv2d(x, multiply(W, reshape(S)))
 *             add(conv2d(x, W), b) * S → add(conv2d(x, W * S'), multiply(b, S))
 *             with S reshaped onto the weight's output-channel axis (O of
 *             the kernel layout; the rows of a dense weight);
 *   forward   conv2d(multiply(x, S), W), maybe through relu / leaky_relu
 *             (S positive), → conv2d(x, multiply(W, reshape(S))) with S on
 *             the weight's input-channel axis (groups = 1) or its output
 *             axis (depthwise: groups = channels, one input channel per
 *             group); nn.dense(multiply(x, S), W) likewise on W's columns.
 * S must vary only along the channel axis (graph_along_axis) and must be
 * evaluable where the weight is (graph_movable: constants, parameters, or
 * temporaries bound before the conv); an S computed in the function (a
 * squeeze-and-excite block's scale) is folded only into a weight of at
 * most a quarter (FSA_COMPUTED_SHARE) of the elements of the values it
 * scales, else the weight would be multiplied and re-laid-out on every
 * call for little gain (EfficientNet's 672 -> 112 and 1152 -> 192
 * projections at 14x14 and 7x7), and every value on the way must have
 * no other use (a shared conv output must stay unscaled).  The multiplies
 * of the weights are left for FoldConstant.  The scale crosses at most
 * FSA_MAX_PATH ops on its way (a bound on the work per multiply; chains of
 * any length are walked without recursion). */
#include <string.h>

#include "passes/graph_int.h"

enum { FSA_MAX_PATH = 64, FSA_COMPUTED_SHARE = 4 };

/* One op on the way between the multiply and the conv/dense. */
typedef struct Step {
  Expr *call;      /* the op call (a binding's rewritten value, or inline) */
  GraphLink *link; /* the binding holding it, or NULL when it is inline */
  int side;        /* the argument the path continues through */
} Step;

typedef struct Path {
  Step s[FSA_MAX_PATH];
  int n;
  int axis;        /* the channel axis of the scaled values */
  bool positive;   /* the scale crosses a relu: it must be positive */
  GraphLink *head; /* the earliest binding the fold rewrites, or NULL */
} Path;

/* ───────────────────────────── helpers ───────────────────────────── */

static const char *str_attr(Graph *g, const Expr *call, const char *key) {
  return op_attr_str(&g->pc->scratch, call, key);
}

/* Index of letter c in a plain layout (no blocked, lower-case axes). */
static int layout_axis(const char *layout, char c) {
  for (const char *p = layout; *p; p++)
    if (*p >= 'a' && *p <= 'z') return -1;
  const char *at = strchr(layout, c);
  return at ? (int)(at - layout) : -1;
}

static int rank_of(const Expr *e) {
  const Type *t = graph_tensor_of(e);
  return t ? t->u.tensor.ndim : -1;
}

static bool same_dtype(const Expr *a, const Expr *b) {
  const Type *x = graph_tensor_of(a), *y = graph_tensor_of(b);
  return x && y && x->u.tensor.dtype == y->u.tensor.dtype;
}

/* Whether every element of S is a positive constant. */
static bool all_positive(const Expr *s) {
  if (s->kind != EX_CONST) return false;
  const Tensor *t = s->u.konst.value;
  for (int64_t i = 0; i < t->numel; i++)
    if (!(tensor_get_f64(t, i) > 0)) return false;
  return true;
}

typedef struct Computed {
  Graph *g;
  bool found;
} Computed;

static bool computed_visit(void *ctx, Expr *e) {
  Computed *c = ctx;
  if (e->kind == EX_VAR && !ptrmap_has(&c->g->params, e->u.var)) c->found = true;
  return !c->found;
}

/* Whether folding S into weight w pays (see the top): S made of constants
 * and parameters only, or w at most a FSA_COMPUTED_SHARE-th of the data y
 * that S scales. */
static bool fold_pays(Graph *g, const Expr *s, const Expr *w, const Expr *y) {
  Computed c = {g, false};
  expr_walk((Expr *)s, computed_visit, &c);
  const Type *wt = graph_tensor_of(w), *yt = graph_tensor_of(y);
  if (!c.found) return true;
  return wt && yt && graph_static(wt) && graph_static(yt) &&
         graph_numel(wt) * FSA_COMPUTED_SHARE <= graph_numel(yt);
}

/* reshape(S, newshape) with c at position `at` of a rank-`rank` shape of
 * ones (S itself when it already has that shape). */
static Expr *scale_onto(Graph *g, const Expr *s, int rank, int at, int64_t c) {
  int64_t shape[TENSOR_MAX_RANK];
  for (int i = 0; i < rank; i++) shape[i] = i == at ? c : 1;
  Expr *copy = graph_copy(g, s);
  const Type *t = graph_tensor_of(s);
  bool same = t && t->u.tensor.ndim == rank;
  for (int i = 0; same && i < rank; i++)
    same = t->u.tensor.dims[i].kind == DIM_CONST && t->u.tensor.dims[i].value == shape[i];
  if (same) return copy;
  Attrs *at_ = graph_attrs(g, 1);
  graph_attr_ints(g, at_, 0, "newshape", rank, shape);
  return graph_call1(g, GOP_RESHAPE, copy, at_, s->span);
}

/* The weight multiplied by S placed at axis `at` of the weight. */
static Expr *scaled_weight(Graph *g, Expr *w, const Expr *s, int at, int64_t c) {
  return graph_call2(g, GOP_MULTIPLY, w, scale_onto(g, s, rank_of(w), at, c), w->span);
}

/* The call with argument i replaced (same op, attributes and type). */
static Expr *with_arg(Graph *g, const Expr *call, int i, Expr *x) {
  int n = call->u.call.nargs;
  Expr **args = ARENA_ARRAY(g->a, Expr *, n);
  memcpy(args, call->u.call.args, sizeof(Expr *) * (size_t)n);
  args[i] = x;
  Expr *r = expr_call(g->a, call->u.call.fn, n, args, call->u.call.attrs, call->span);
  r->ty = call->ty;
  return r;
}

/* The op call y stands for: y, or the value of the binding a variable y
 * refers to when nothing else uses it (same function).  *link gets it. */
static Expr *step_into(Graph *g, Expr *y, GraphLink **link) {
  *link = NULL;
  if (y->kind == EX_VAR) {
    *link = graph_link(g, y, true, true);
    if (!*link) return NULL;
    y = (*link)->value;
  }
  return y->kind == EX_CALL && y->u.call.fn->kind == EX_OP ? y : NULL;
}

static bool push(Path *p, Expr *call, GraphLink *link, int side) {
  if (p->n == FSA_MAX_PATH) return false;
  p->s[p->n++] = (Step){call, link, side};
  if (link && (!p->head || link->seq < p->head->seq)) p->head = link;
  return true;
}

/* ───────────────────────────── backward ───────────────────────────── */

/* The output channel axis of a conv2d (its out layout's C), or -1. */
static int conv_out_axis(Graph *g, const Expr *conv) {
  const char *out = str_attr(g, conv, "out_layout");
  if (!out[0]) out = str_attr(g, conv, "data_layout");
  return layout_axis(str_attr(g, conv, "kernel_layout"), 'O') < 0 ? -1 : layout_axis(out, 'C');
}

/* The argument of an add / subtract the path follows: the one of the
 * result's own type that is an op call (the other is the bias). */
static int follow_side(Graph *g, const Expr *call) {
  for (int i = 0; i < 2; i++) {
    GraphLink *l;
    const Expr *x = call->u.call.args[i];
    if (x->ty && call->ty && type_equal(x->ty, call->ty) && step_into(g, (Expr *)x, &l)) return i;
  }
  return -1;
}

/* The path from the multiply's operand y to a conv2d / dense: the ops on
 * the way (relu, leaky_relu, add, subtract, bias_add), then the producer. */
static bool backward_path(Graph *g, Expr *y, Path *p) {
  for (Expr *cur = y;;) {
    GraphLink *link;
    Expr *call = step_into(g, cur, &link);
    if (!call) return false;
    if (graph_is_call(call, GOP_CONV2D) || graph_is_call(call, GOP_DENSE)) {
      bool conv = graph_is_call(call, GOP_CONV2D);
      p->axis = conv ? conv_out_axis(g, call) : rank_of(call) - 1;
      return p->axis >= 0 && same_dtype(call, call->u.call.args[1]) && push(p, call, link, -1);
    }
    int side = 0;
    if (graph_is_call(call, GOP_RELU) || graph_is_call(call, GOP_LEAKY_RELU))
      p->positive = true;
    else if (graph_is_call(call, GOP_ADD) || graph_is_call(call, GOP_SUBTRACT))
      side = follow_side(g, call);
    else if (!graph_is_call(call, GOP_BIAS_ADD))
      return false;
    if (side < 0 || !push(p, call, link, side)) return false;
    cur = call->u.call.args[side];
  }
}

/* The biases on the path vary along the path's axis only. */
static bool biases_fit(const Path *p) {
  for (int i = 0; i + 1 < p->n; i++) {
    const Expr *call = p->s[i].call;
    int64_t c;
    if (graph_is_call(call, GOP_BIAS_ADD)) {
      int rank = rank_of(call), ax = (int)op_attr_int(call, "axis");
      if (rank < 0 || (ax < 0 ? ax + rank : ax) != p->axis) return false;
    } else if (graph_is_call(call, GOP_ADD) || graph_is_call(call, GOP_SUBTRACT)) {
      const Expr *b = call->u.call.args[1 - p->s[i].side];
      if (!graph_along_axis(graph_tensor_of(b), graph_tensor_of(call), p->axis, &c)) return false;
    }
  }
  return true;
}

/* The producer with S folded into its weight. */
static Expr *scaled_producer(Graph *g, const Expr *call, const Expr *s, int64_t c) {
  Expr *w = call->u.call.args[1];
  int at = 0; /* a dense weight's rows */
  if (graph_is_call(call, GOP_CONV2D)) at = layout_axis(str_attr(g, call, "kernel_layout"), 'O');
  return with_arg(g, call, 1, scaled_weight(g, w, s, at, c));
}

/* An op on the path with its operand `inner` and its bias scaled by S. */
static Expr *scaled_step(Graph *g, const Step *st, Expr *inner, const Expr *s, int64_t c) {
  Expr *r = with_arg(g, st->call, st->side, inner);
  if (graph_is_call(st->call, GOP_BIAS_ADD)) {
    Expr *b = r->u.call.args[1];
    r->u.call.args[1] = graph_call2(g, GOP_MULTIPLY, b, scale_onto(g, s, 1, 0, c), b->span);
  } else if (!graph_is_call(st->call, GOP_RELU) && !graph_is_call(st->call, GOP_LEAKY_RELU)) {
    Expr *b = r->u.call.args[1 - st->side];
    r->u.call.args[1 - st->side] = graph_call2(g, GOP_MULTIPLY, b, graph_copy(g, s), b->span);
  }
  return r;
}

/* Rebuilds the path from the producer up with S folded in: a step held by
 * a binding gets its new value there (its variable stays in the step
 * above); the result stands for the multiply's scaled operand y. */
static Expr *apply_backward(Graph *g, const Path *p, Expr *y, const Expr *s, int64_t c,
                            Expr **producer) {
  Expr *inner = NULL;
  for (int i = p->n; i-- > 0;) {
    const Step *st = &p->s[i];
    Expr *r = i == p->n - 1 ? scaled_producer(g, st->call, s, c) : scaled_step(g, st, inner, s, c);
    if (i == p->n - 1) *producer = r;
    if (st->link) {
      st->link->value = r;
      inner = i ? p->s[i - 1].call->u.call.args[p->s[i - 1].side] : y;
    } else {
      inner = r;
    }
  }
  return inner;
}

/* multiply(y, s) (either order) folded into the conv / dense making y. */
static Expr *backward(Graph *g, Expr *e, Expr *r) {
  for (int side = 0; side < 2; side++) {
    Expr *y = r->u.call.args[side], *s = r->u.call.args[1 - side];
    Path p = {.n = 0};
    int64_t c;
    if (!backward_path(g, y, &p) || !biases_fit(&p)) continue;
    if (!graph_along_axis(graph_tensor_of(s), graph_tensor_of(y), p.axis, &c)) continue;
    if (p.positive && !all_positive(s)) continue;
    if (p.head ? !graph_movable(g, s, p.head) : !graph_plain(s)) continue;
    if (!fold_pays(g, s, p.s[p.n - 1].call->u.call.args[1], y)) continue;
    Expr *producer = NULL;
    Expr *out = apply_backward(g, &p, y, s, c, &producer);
    graph_report(g, "backward", e, producer);
    return out;
  }
  return r;
}

/* ───────────────────────────── forward ───────────────────────────── */

/* The path from a conv / dense's data operand x down to multiply(x', S):
 * relu / leaky_relu steps, then the multiply (last step; side = x'). */
static bool forward_path(Graph *g, Expr *x, Path *p) {
  for (Expr *cur = x;;) {
    GraphLink *link;
    Expr *call = step_into(g, cur, &link);
    if (!call) return false;
    if (graph_is_call(call, GOP_MULTIPLY)) return push(p, call, link, 0);
    if (!graph_is_call(call, GOP_RELU) && !graph_is_call(call, GOP_LEAKY_RELU)) return false;
    p->positive = true;
    if (!push(p, call, link, 0)) return false;
    cur = call->u.call.args[0];
  }
}

/* Where S goes on the weight of the consumer (its axis and S's axis in the
 * data), or -1 when the consumer cannot take it. */
static int weight_axis(Graph *g, const Expr *call, int *data_axis) {
  if (graph_is_call(call, GOP_DENSE)) {
    *data_axis = rank_of(call->u.call.args[0]) - 1;
    return 1;
  }
  const char *kl = str_attr(g, call, "kernel_layout");
  int o = layout_axis(kl, 'O'), i = layout_axis(kl, 'I');
  *data_axis = layout_axis(str_attr(g, call, "data_layout"), 'C');
  const Type *w = graph_tensor_of(call->u.call.args[1]), *x = graph_tensor_of(call->u.call.args[0]);
  int64_t groups = op_attr_int(call, "groups");
  if (o < 0 || i < 0 || *data_axis < 0 || !w) return -1;
  if (groups == 1) return i;
  Dim wi = w->u.tensor.dims[i], wo = w->u.tensor.dims[o];
  bool depthwise = wi.kind == DIM_CONST && wi.value == 1 && wo.kind == DIM_CONST &&
                   wo.value == groups && x && x->u.tensor.dims[*data_axis].kind == DIM_CONST &&
                   x->u.tensor.dims[*data_axis].value == groups;
  return depthwise ? o : -1;
}

/* Which operand of the multiply is the scale (along the data's axis). */
static int scale_side(const Expr *mul, int axis, int64_t *c) {
  for (int k = 0; k < 2; k++)
    if (graph_along_axis(graph_tensor_of(mul->u.call.args[k]),
                         graph_tensor_of(mul->u.call.args[1 - k]), axis, c) &&
        mul->ty && type_equal(mul->u.call.args[1 - k]->ty, mul->ty))
      return k;
  return -1;
}

/* conv2d / dense (r) of multiply(x, S) through relus: S into the weight. */
static Expr *forward(Graph *g, Expr *e, Expr *r) {
  int data_axis, wax = weight_axis(g, r, &data_axis);
  Path p = {.n = 0};
  int64_t c;
  if (wax < 0 || !same_dtype(r, r->u.call.args[1]) || !forward_path(g, r->u.call.args[0], &p))
    return r;
  Expr *mul = p.s[p.n - 1].call;
  int k = scale_side(mul, data_axis, &c);
  if (k < 0) return r;
  Expr *s = mul->u.call.args[k]; /* evaluable at the multiply, which the conv follows */
  Expr *inner = mul->u.call.args[1 - k];
  if ((p.positive && !all_positive(s)) || !graph_plain(s) ||
      !fold_pays(g, s, r->u.call.args[1], inner))
    return r;
  for (int i = p.n - 1; i-- > 0;) { /* the relus, from the multiply up */
    Expr *relu = with_arg(g, p.s[i].call, 0, inner);
    if (p.s[i].link) {
      p.s[i].link->value = relu;
      inner = i ? p.s[i - 1].call->u.call.args[0] : r->u.call.args[0];
    } else {
      inner = relu;
    }
  }
  Expr *conv = with_arg(g, r, 0, inner);
  conv->u.call.args[1] = scaled_weight(g, r->u.call.args[1], s, wax, c);
  graph_report(g, "forward", e, conv);
  return conv;
}

/* ───────────────────────────── the pass ───────────────────────────── */

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (graph_is_call(r, GOP_MULTIPLY)) return backward(g, e, r);
  if (graph_is_call(r, GOP_CONV2D) || graph_is_call(r, GOP_DENSE)) return forward(g, e, r);
  return r;
}

/* A binding whose multiply went into a weight (`%3 = %2`): uses of it
 * become the variable. */
static Expr *subst(Graph *g, GraphLink *l) {
  (void)g;
  return l->value->kind == EX_VAR && l->value != l->orig->u.let.value ? l->value : NULL;
}

static const GraphHooks hooks = {.rule = rule, .subst = subst};

Module *pass_fold_scale_axis(PassCtx *pc, Module *in) { return graph_pass(pc, in, &hooks, NULL); }
