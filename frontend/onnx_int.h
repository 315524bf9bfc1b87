/* onnx_int.h — the importer's insides, shared by the graph reader
 * (onnx.c), the builder (onnx_build.c), the op table (onnx_ops.c) and the
 * converter families (onnx_math.c, onnx_nn.c, onnx_shape.c).
 *
 * A converter turns one ONNX node into Relay op calls through the builder:
 * fe_op names a Relay op of the registry, types the call with the op's own
 * relation (so converters can read the shapes of what they built, as TVM's
 * converters call infer_type), evaluates it at once when every argument is
 * a constant (constant subgraphs fold at import time), and otherwise binds
 * it to a fresh graph variable of the body's let chain.  Every value a
 * converter handles is an FeVal: an atom (variable or constant), its type,
 * and its value when it is known at import time (a constant, or an
 * initializer's data: converters read Reshape's shape or Slice's starts
 * from there), or, for shape arithmetic computed at run time, what its
 * elements are known to be (sym: constants and size variables, followed
 * through Shape → Gather → Concat → Reshape by onnx_shape.c).
 *
 * Each row of the op table names the Relay ops its converter may emit;
 * fe_op refuses any other (a converter bug), and the import checks before
 * converting anything that every op the model needs is in the registry,
 * so a missing Relay op is reported for the whole model at once. */
#ifndef RLY_FRONTEND_ONNX_INT_H
#define RLY_FRONTEND_ONNX_INT_H

#include "frontend/onnx.h"
#include "kernels/kernels.h"
#include "onnx.pb-c.h"
#include "ops/ops.h"

enum {
  ONNX_MIN_OPSET = 1,  /* the default domain's opsets the converters know (the */
  ONNX_MAX_OPSET = 18, /* backend suite's models are of 1 to 17) */
  FE_MAX_ATTRS = 16,   /* attributes of one Relay call */
};

typedef struct FeVal {
  Expr *expr;            /* an atom: a variable (parameter or graph temporary) or a constant */
  Type *ty;              /* a tensor type; a tuple type for multi-output ops before fe_get */
  const Tensor *value;   /* known at import time (constants, initializers), else NULL */
  struct FeVal **fields; /* a folded multi-output op: its constant outputs (expr is NULL) */
  const Dim *sym;        /* a 0-D or 1-D integer value computed at run time from shapes
                            (Shape -> Gather -> Concat ...): what each element is known to
                            be (a constant, a size variable, or `?`); else NULL */
} FeVal;

typedef struct OnnxOpDef OnnxOpDef;

typedef struct OnnxCx {
  Arena *a;  /* the module's arena: IR, types, constants */
  Module *m; /* the module imported into: the prelude's List and Option */
  DiagCtx *d;
  const char *file; /* the model's path, for messages */
  int64_t opset;    /* the default domain's opset */
  StrMap vals;      /* ONNX value name → FeVal * */
  PtrVec let_vars;  /* the body's bindings, in order (Var *, Expr *) */
  PtrVec let_vals;
  KernelCtx kx; /* folding constant calls */
  bool failed;
  const OnnxImportOptions *opts; /* the caller's (Gradient's pass), or NULL */
  PtrVec defs;                   /* functions the body calls (Gradient's), added with it */
  const Onnx__GraphProto *graph; /* the graph of the node being converted */
  /* the node being converted */
  const Onnx__NodeProto *node;
  int node_index;
  const OnnxOpDef *row;
  int nin;
  FeVal **in; /* NULL for an omitted optional input */
  int nout;
  FeVal **out; /* the converter sets out[i] for every output the node names */
} OnnxCx;

typedef bool OnnxConvertFn(OnnxCx *cx);

/* A row of the op table (onnx_ops.c): an ONNX op of a domain ("" is the
 * default ai.onnx domain), the inputs it takes, its converter, the Relay
 * ops the converter may emit (space-separated), and the first opset of
 * the domain whose semantics the row implements (0: since opset 1); an
 * op may have several rows, one per version its meaning changed at. */
struct OnnxOpDef {
  const char *domain, *op_type;
  int min_in, max_in; /* max_in -1: variadic */
  OnnxConvertFn *convert;
  const char *relay_ops;
  int since;
};

/* The row of op in domain for a model importing opset `opset` of that
 * domain: the one with the largest `since` <= opset; NULL when there is
 * none (*first, when not NULL, gets the op's smallest `since`, or -1 when
 * the table has no row of it at all). */
const OnnxOpDef *onnx_op_find(const char *domain, const char *op_type, int64_t opset, int *first);
int onnx_op_count(void);
const OnnxOpDef *onnx_op_get(int i);
/* Whether the row's op list names op (a word of relay_ops). */
bool onnx_row_allows(const OnnxOpDef *row, const char *op);

/* ── errors ── */

/* "FILE: node #i 'name' (Op): message" as an error; sets cx->failed and
 * returns false (NULL through FE_FAIL_NULL). */
bool fe_fail(OnnxCx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define FE_FAIL_NULL(cx, ...) (fe_fail((cx), __VA_ARGS__), (FeVal *)NULL)
/* "node #i 'name' (Op)" of the current node (arena string). */
const char *fe_node_text(OnnxCx *cx);

/* ── the node's attributes (absent: the default; a wrong kind fails) ── */

const Onnx__AttributeProto *oa_get(OnnxCx *cx, const char *name);
int64_t oa_int(OnnxCx *cx, const char *name, int64_t dflt);
double oa_float(OnnxCx *cx, const char *name, double dflt);
const char *oa_str(OnnxCx *cx, const char *name, const char *dflt);
/* An int list into out (at most max); its length, or -1 when absent. */
int oa_ints(OnnxCx *cx, const char *name, int64_t *out, int max);
int oa_floats(OnnxCx *cx, const char *name, double *out, int max);

/* ── tensors ── */

/* An ONNX data type as a dtype, or DT_INVALID (*name: its ONNX name). */
DType onnx_dtype(int32_t data_type, const char **name);
/* An ONNX tensor (raw or typed data, or external data beside the model)
 * as a Tensor in cx->a; NULL after fe_fail-like diagnostics naming what. */
Tensor *onnx_tensor(OnnxCx *cx, const Onnx__TensorProto *t, const char *what);

/* ── building (onnx_build.c) ── */

/* A call of the Relay op `op` (one of the row's relay_ops) on args with
 * attrs (may be NULL): typed, folded when every argument is a constant,
 * else bound to a graph variable.  An op whose row is flagged OP_TUPLE_ARG
 * (concatenate) takes the args as its one tuple argument.  NULL after an
 * error (an ill-typed call names the op and the relation's message). */
FeVal *fe_op(OnnxCx *cx, const char *op, int n, FeVal *const *args, Attrs *attrs);
/* Binds value to var (NULL: a fresh graph variable) in the body's let chain. */
FeVal *fe_bind(OnnxCx *cx, Var *var, Expr *value, Type *ty);
#define FE_NARGS(...) ((int)(sizeof((FeVal *[]){__VA_ARGS__}) / sizeof(FeVal *)))
#define FE_OP(cx, op, attrs, ...) \
  fe_op((cx), (op), FE_NARGS(__VA_ARGS__), (FeVal *[]){__VA_ARGS__}, (attrs))
/* Field i of a multi-output op's tuple. */
FeVal *fe_get(OnnxCx *cx, FeVal *tuple, int i);
FeVal *fe_const(OnnxCx *cx, Tensor *t);
/* A rank-0 constant of dtype dt. */
FeVal *fe_scalar(OnnxCx *cx, DType dt, double v);
/* A 1-D constant of dtype dt. */
FeVal *fe_ints(OnnxCx *cx, DType dt, int n, const int64_t *v);

/* Attributes of a Relay call, built in order. */
typedef struct AttrB {
  Arena *a;
  int n;
  const char *keys[FE_MAX_ATTRS];
  AttrValue *vals[FE_MAX_ATTRS];
} AttrB;

AttrB ab_new(OnnxCx *cx);
void ab_int(AttrB *b, const char *key, int64_t v);
void ab_ints(AttrB *b, const char *key, int n, const int64_t *v);
void ab_float(AttrB *b, const char *key, double v);
void ab_bool(AttrB *b, const char *key, bool v);
void ab_str(AttrB *b, const char *key, const char *v);
Attrs *ab_done(AttrB *b);

/* ── reading values ── */

const Type *fe_tensor_type(const FeVal *v);
int fe_rank(const FeVal *v);
DType fe_dtype(const FeVal *v);
Dim fe_dim(const FeVal *v, int i);
/* Every dim constant: the shape into out (rank entries), true. */
bool fe_static_shape(const FeVal *v, int64_t *out);
/* The known integer values of v (a constant or an initializer) into out
 * (at most max); their count, or -1 after fe_fail naming `what` when v is
 * computed at run time or not an integer tensor. */
int fe_need_ints(OnnxCx *cx, const FeVal *v, const char *what, int64_t *out, int max);
/* The known value of v as a double (its first element), or fails. */
bool fe_need_scalar(OnnxCx *cx, const FeVal *v, const char *what, double *out);
/* v converted to dtype dt (v itself when it has it). */
FeVal *fe_cast(OnnxCx *cx, FeVal *v, DType dt);
/* A possibly negative axis normalized into [0, rank), or -1 after fe_fail. */
int fe_axis(OnnxCx *cx, int64_t axis, int rank, const char *what);

/* ── shape arithmetic followed symbolically (onnx_shape.c) ── */

/* The elements of a 0-D or 1-D integer value as dims: its known values
 * (DIM_CONST) or its sym; their count, or -1 when v is neither. */
int fe_sym_get(const FeVal *v, Dim *out, int max);
/* v with sym attached (n elements); a constant instead when every element
 * is one (so shape arithmetic on static dims folds); NULL for NULL. */
FeVal *fe_sym_set(OnnxCx *cx, FeVal *v, int n, const Dim *sym);

/* ── the converter families (onnx_math.c, onnx_nn.c, onnx_shape.c, onnx_rnn.c) ── */

/* clang-format off */
#define ONNX_CONVERTERS(X)                                                                  \
  X(binary) X(unary) X(round) X(reciprocal) X(variadic) X(mean) X(pow)                      \
  X(relu) X(leaky_relu) X(prelu) X(clip) X(hard_sigmoid) X(hard_swish) X(elu) X(softplus)   \
  X(compare) X(not) X(logic) X(where) X(cast) X(identity) X(dropout) X(constant)            \
  X(reduce) X(argreduce) X(softmax)                                                         \
  X(conv) X(conv_transpose) X(gemm) X(matmul) X(batch_norm) X(instance_norm) X(layer_norm)  \
  X(pool) X(global_pool)                                                                    \
  X(flatten) X(reshape) X(transpose) X(squeeze) X(unsqueeze) X(concat) X(split) X(slice)    \
  X(gather) X(expand) X(tile) X(pad) X(shape) X(size) X(constant_of_shape) X(range)         \
  X(lstm) X(gru) X(rnn)                                                                     \
  /* indexing, resizing, vision (onnx_index.c) */                                           \
  X(gather_elements) X(gather_nd) X(scatter_elements) X(scatter_nd) X(one_hot)              \
  X(depth_to_space) X(reverse_sequence) X(non_zero) X(compress) X(unique) X(nms) X(tfidf)   \
  X(max_unpool) X(grid_sample) X(roi_align) X(resize)                                       \
  /* quantization (onnx_layers.c) */                                                        \
  X(quantize_linear) X(dequantize_linear) X(dynamic_quantize_linear) X(matmul_integer)      \
  X(qlinear_matmul) X(conv_integer) X(qlinear_conv)
/* clang-format on */
/* converters of earlier versions of ops (rows with a smaller `since`) */
#define ONNX_CONVERTERS_V1(X) \
  X(binary_v1) X(pow_v1) X(compare_v1) X(logic_v1) X(reshape_v1) X(tile_v1)
#define X(name) OnnxConvertFn onnx_convert_##name;
ONNX_CONVERTERS(X)
ONNX_CONVERTERS_V1(X)
#undef X

/* elementwise, math and signal ops (onnx_elem.c) */
/* clang-format off */
#define ONNX_ELEM_CONVERTERS(X)                                                             \
  X(mod) X(bitshift) X(cast_like) X(isinf) X(math) X(shrink) X(thresholded_relu) X(celu)    \
  X(selu) X(softsign) X(trilu) X(eye_like) X(lrn) X(mvn) X(random) X(window) X(det) X(dft)  \
  X(stft) X(mel_weight_matrix)
/* clang-format on */
#define X(name) OnnxConvertFn onnx_convert_##name;
ONNX_ELEM_CONVERTERS(X)
#undef X

/* ── sequences, optionals and control flow (onnx_control.c) ── */

/* A sequence is the prelude's List of its tensors, an optional its Option;
 * If is Relay's `if`, Loop, Scan and SequenceMap recursive local functions.
 * A subgraph (a GraphProto attribute) is converted by onnx_subgraph in the
 * current let chain: its inputs are bound to in[0..nin), its initializers
 * become constants, its nodes go through the op table; its outputs are then
 * read with onnx_subgraph_output.  False after an error. */
bool onnx_subgraph(OnnxCx *cx, const Onnx__GraphProto *g, int nin, FeVal **in);
FeVal *onnx_subgraph_output(OnnxCx *cx, const Onnx__GraphProto *g, int i);
/* Node `index` of g converted (again) in the current let chain, its
 * outputs rebound in cx->vals, the converting node's state kept (Gradient
 * rebuilds the nodes between its xs and y); false after an error. */
bool onnx_convert_again(OnnxCx *cx, const Onnx__GraphProto *g, int index);
/* "ai.onnx opset 13": the domain and opset a node is read at (arena). */
const char *onnx_node_version(OnnxCx *cx, const Onnx__NodeProto *n);
/* A TypeProto (an attribute's) as a Relay type: List / Option of tensors
 * (dims `?` where not given); NULL after an error naming `what`. */
Type *onnx_type_proto(OnnxCx *cx, const Onnx__TypeProto *tp, const char *what);

/* clang-format off */
#define ONNX_CONTROL_CONVERTERS(X)                                                      \
  X(seq_construct) X(seq_empty) X(seq_at) X(seq_insert) X(seq_erase) X(seq_length)     \
  X(split_to_seq) X(concat_from_seq) X(seq_map) X(optional) X(optional_has)            \
  X(optional_get) X(if) X(loop) X(scan) X(scan8)
/* clang-format on */
#define X(name) OnnxConvertFn onnx_convert_##name;
ONNX_CONTROL_CONVERTERS(X)
#undef X

/* losses, reductions, scans, and shape arguments known at run time (onnx_reduce.c) */
/* clang-format off */
#define ONNX_REDUCE_CONVERTERS(X)                                                         \
  X(nll_loss) X(sce_loss) X(reduce_ext) X(reduce_dyn) X(cumsum) X(hardmax) X(topk)        \
  X(einsum) X(squeeze_dyn) X(unsqueeze_dyn) X(split_dyn) X(slice_dyn)
/* clang-format on */
#define X(name) OnnxConvertFn onnx_convert_##name;
ONNX_REDUCE_CONVERTERS(X)
#undef X
/* Whether a reduction's axes (Slice's axes or steps) are an input known
 * only at run time: the converter then hands the node to onnx_reduce.c. */
bool onnx_reduce_axes_at_run_time(OnnxCx *cx);
bool onnx_slice_axes_at_run_time(OnnxCx *cx);

/* the optimizers and Gradient of ai.onnx.preview.training (onnx_training.c) */
#define ONNX_TRAINING_CONVERTERS(X) X(adagrad) X(adam) X(momentum) X(gradient)
#define X(name) OnnxConvertFn onnx_convert_##name;
ONNX_TRAINING_CONVERTERS(X)
#undef X

#endif
