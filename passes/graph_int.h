/* graph_int.h — private to the graph passes (FoldConstant,
 * SimplifyInference, FoldScaleAxis, AlterOpLayout, FastMath): a function's let-bound temporaries
 * seen as dataflow edges, the rewriter that walks them, and builders of
 * typed op calls.
 *
 * Relay text as TVM prints it binds every call to a temporary (`%3 =
 * nn.conv2d(...);`), so a pattern such as `%2.0` of `%2 = nn.batch_norm(...)`
 * crosses a let.  The graph rewriter walks let chains itself, iteratively,
 * and keeps a GraphLink per binding seen so far holding its rewritten value.
 * A rule (run on every node after its children, like a post-order
 * ExprMutator) may look through a variable to the value it is bound to
 * (graph_link), and when the variable has one use, replace that value in
 * place (GraphLink.value), as TVM's rewrites of a graph node do.
 *
 * Invariants:
 * - every node a rule sees carries its type (Expr.ty): input nodes from the
 *   type checker, rebuilt nodes from the node they replace (every rewrite
 *   keeps the type), calls built by graph_call from their op's relation;
 * - a binding whose value became an atom the pass made (a variable, or a
 *   constant for FoldConstant) is dropped and its variable replaced by that
 *   atom (GraphHooks.subst);
 * - a let whose variable was used in the input and is no longer used, and
 *   whose value is pure, is dropped at the end of each definition
 *   (bindings the rewrites left dead: `%1 = nn.batch_norm(...)` once `%1.0`
 *   is expanded);
 * - a value a rule returns as a let chain, as the value of a binding, is
 *   spliced into the enclosing chain (`%5 = (%6 = mean(%x); f(%6))` becomes
 *   `%6 = mean(%x); %5 = f(%6)`), so shared subterms stay graph nodes;
 * - nothing recurses on the length of a let chain.
 *
 * Ops are matched by registry index (GRAPH_OPS resolves the names once). */
#ifndef RLY_GRAPH_INT_H
#define RLY_GRAPH_INT_H

#include "ops/ops.h"
#include "passes/pass_int.h"

/* X(enum, registry name): the ops the graph passes match or build. */
#define GRAPH_OPS(X)                               \
  X(GOP_ADD, "add")                                \
  X(GOP_SUBTRACT, "subtract")                      \
  X(GOP_MULTIPLY, "multiply")                      \
  X(GOP_DIVIDE, "divide")                          \
  X(GOP_NEGATIVE, "negative")                      \
  X(GOP_SQRT, "sqrt")                              \
  X(GOP_MAXIMUM, "maximum")                        \
  X(GOP_EXPAND_DIMS, "expand_dims")                \
  X(GOP_RESHAPE, "reshape")                        \
  X(GOP_SUM, "sum")                                \
  X(GOP_MEAN, "mean")                              \
  X(GOP_VARIANCE, "variance")                      \
  X(GOP_SHAPE_OF, "shape_of")                      \
  X(GOP_NDARRAY_SIZE, "ndarray_size")              \
  X(GOP_BATCH_NORM, "nn.batch_norm")               \
  X(GOP_LAYER_NORM, "nn.layer_norm")               \
  X(GOP_INSTANCE_NORM, "nn.instance_norm")         \
  X(GOP_GROUP_NORM, "nn.group_norm")               \
  X(GOP_L2_NORMALIZE, "nn.l2_normalize")           \
  X(GOP_DROPOUT, "nn.dropout")                     \
  X(GOP_CONV1D, "nn.conv1d")                       \
  X(GOP_CONV2D, "nn.conv2d")                       \
  X(GOP_CONV3D, "nn.conv3d")                       \
  X(GOP_SQUEEZE, "squeeze")                        \
  X(GOP_CONV2D_TRANSPOSE, "nn.conv2d_transpose")   \
  X(GOP_CONV1D_TRANSPOSE, "nn.conv1d_transpose")   \
  X(GOP_DILATE, "nn.dilate")                       \
  X(GOP_REVERSE, "reverse")                        \
  X(GOP_TRANSPOSE, "transpose")                    \
  X(GOP_DENSE, "nn.dense")                         \
  X(GOP_BIAS_ADD, "nn.bias_add")                   \
  X(GOP_RELU, "nn.relu")                           \
  X(GOP_LEAKY_RELU, "nn.leaky_relu")               \
  X(GOP_LAYOUT_TRANSFORM, "layout_transform")      \
  X(GOP_CONV2D_NCHWC, "nn.contrib_conv2d_NCHWc")   \
  X(GOP_MAX_POOL2D, "nn.max_pool2d")               \
  X(GOP_AVG_POOL2D, "nn.avg_pool2d")               \
  X(GOP_GLOBAL_MAX_POOL2D, "nn.global_max_pool2d") \
  X(GOP_GLOBAL_AVG_POOL2D, "nn.global_avg_pool2d") \
  X(GOP_CONCATENATE, "concatenate")                \
  X(GOP_MATMUL, "nn.matmul")                       \
  X(GOP_DENSE_PACK, "nn.contrib_dense_pack")       \
  X(GOP_EXP, "exp")                                \
  X(GOP_SIGMOID, "sigmoid")                        \
  X(GOP_TANH, "tanh")                              \
  X(GOP_ERF, "erf")                                \
  X(GOP_POWER, "power")                            \
  X(GOP_SOFTMAX, "nn.softmax")                     \
  X(GOP_FAST_EXP, "fast_exp")                      \
  X(GOP_FAST_TANH, "fast_tanh")                    \
  X(GOP_FAST_ERF, "fast_erf")                      \
  X(GOP_FAST_SOFTMAX, "nn.fast_softmax")           \
  X(GOP_QNN_DEQUANTIZE, "qnn.dequantize")          \
  X(GOP_QNN_CONV2D, "qnn.conv2d")                  \
  X(GOP_QNN_DENSE, "qnn.dense")

typedef enum GraphOp {
#define X(e, n) e,
  GRAPH_OPS(X)
#undef X
      GOP_COUNT
} GraphOp;

/* The registry index of k. */
int graph_op(GraphOp k);
/* Whether e is a call of op k. */
bool graph_is_call(const Expr *e, GraphOp k);
/* Whether a definition of m names one of the n ops ks (a pass's cheap
 * "anything to do?" before it runs). */
bool graph_module_calls(const Module *m, const GraphOp *ks, int n);

/* A binding seen by the rewriter. */
typedef struct GraphLink {
  Var *var;
  Expr *orig;   /* the input's let node */
  Expr *value;  /* its value, rewritten; a rule may replace it */
  int depth;    /* function nesting of the binding (0: the definition's body) */
  uint64_t seq; /* order in which bindings were met (earlier: smaller) */
  bool dropped; /* replaced by an atom (GraphHooks.subst) */
} GraphLink;

typedef struct Graph Graph;

typedef struct GraphHooks {
  /* The pass's rewrite of one node: e is the input's node, r the same with
   * its children rewritten (typed); returns r or a replacement of the same
   * type.  Rules must check pass_listening/pc->stopped through graph_report. */
  Expr *(*rule)(Graph *g, Expr *e, Expr *r);
  /* After a binding's value was rewritten: an atom to replace its variable
   * with (the binding is dropped), or NULL to keep it. */
  Expr *(*subst)(Graph *g, GraphLink *l);
} GraphHooks;

struct Graph {
  Rewriter rw;
  PassCtx *pc;
  Arena *a; /* the output's arena (pc->a) */
  const GraphHooks *hooks;
  PtrMap links;  /* Var* → GraphLink*, the bindings met so far */
  PtrMap uses;   /* Var* → number of uses in the input definition */
  PtrMap atoms;  /* Var* → the atom replacing it (dropped bindings) */
  PtrMap params; /* Var* → 1 for the definition's own parameters */
  int depth;     /* function nesting of the node being rewritten */
  uint64_t seq;
  int rewrites; /* rules applied */
  void *user;
};

/* Runs hooks over every function definition in the pass's scope: the new
 * module (definitions no rule changed are shared). */
Module *graph_pass(PassCtx *pc, Module *in, const GraphHooks *hooks, void *user);

/* The binding e (a variable) refers to, or NULL (not a variable, not a let
 * of the definition, or a let of an enclosing function when same_fn).
 * single_use: only when the input used the variable once. */
GraphLink *graph_link(Graph *g, const Expr *e, bool single_use, bool same_fn);
/* e itself, or the rewritten value of the binding a variable e refers to. */
Expr *graph_value(Graph *g, Expr *e);
/* Whether e (made of calls, tuples, projections, constants and variables,
 * no binders) can be evaluated where binding `at` is: every variable in it
 * is a parameter of the definition or bound before `at` (at NULL: anywhere
 * in the definition, i.e. only parameters and constants). */
bool graph_movable(Graph *g, const Expr *e, const GraphLink *at);
/* Whether e is made of constants, variables, ops, calls, tuples and
 * projections only (no binders: graph_copy may copy it). */
bool graph_plain(const Expr *e);
/* A copy of e (a plain expression) sharing nothing with it. */
Expr *graph_copy(Graph *g, const Expr *e);

/* Reports a rewrite to the pass's hook (counted); false once stopped. */
bool graph_report(Graph *g, const char *rule, const Expr *before, const Expr *after);

/* ── building typed IR ── */

/* A call of op k on args, typed by the op's relation on the arguments'
 * types (left untyped when an argument is: the result is type-checked by
 * the manager anyway). */
Expr *graph_call(Graph *g, GraphOp k, int n, Expr **args, Attrs *attrs, Span sp);
/* The same for the op at registry index op. */
Expr *graph_call_index(Graph *g, int op, int n, Expr **args, Attrs *attrs, Span sp);
Expr *graph_call1(Graph *g, GraphOp k, Expr *x, Attrs *attrs, Span sp);
Expr *graph_call2(Graph *g, GraphOp k, Expr *x, Expr *y, Span sp);
/* A constant node (typed) for t; a scalar of dtype dt. */
Expr *graph_const(Graph *g, Tensor *t, Span sp);
Expr *graph_scalar(Graph *g, DType dt, double v, Span sp);
/* The type of a tensor constant. */
Type *graph_tensor_type(Arena *a, const Tensor *t);
/* Attributes: n entries, filled with the setters below. */
Attrs *graph_attrs(Graph *g, int n);
void graph_attr_int(Graph *g, Attrs *at, int i, const char *key, int64_t v);
void graph_attr_bool(Graph *g, Attrs *at, int i, const char *key, bool v);
void graph_attr_ints(Graph *g, Attrs *at, int i, const char *key, int n, const int64_t *v);
/* expand_dims(x, axis=1, num_newaxis=k) making a 1-D per-channel vector
 * broadcast along `axis` of a rank-`ndim` tensor (x itself when k = 0). */
Expr *graph_expand_to_axis(Graph *g, Expr *x, int axis, int ndim, Span sp);
/* `let %t = value; body(%t)` pieces: a fresh graph variable bound to value
 * is pushed on *b; returns the variable as an expression (typed). */
Expr *graph_bind(Graph *g, RwBlock *b, Expr *value, Span sp);

/* ── shapes ── */

/* The tensor type of e (NULL when e is not a typed tensor). */
const Type *graph_tensor_of(const Expr *e);
/* Whether every dim of t is a constant. */
bool graph_static(const Type *t);
/* Elements of a static tensor type (-1 when not static, or when the count
 * overflows int64). */
int64_t graph_numel(const Type *t);
/* Whether a tensor of type s broadcast against one of type x varies only
 * along x's axis `axis`: s's rank is at most x's, and right-aligned, s's
 * dims are 1 except at `axis`, where s's dim is x's or 1.  *c gets s's dim
 * at axis (1 when s does not reach it). */
bool graph_along_axis(const Type *s, const Type *x, int axis, int64_t *c);

#endif
