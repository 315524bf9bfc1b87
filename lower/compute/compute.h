/* compute.h — TIR compute rules of ops, used to lower Primitive functions
 * (lower/lower.h) to prim functions.
 *
 * A rule takes the op call (attributes, types) and its operands as
 * LTensors and returns the result as an LTensor: either "inline" (a
 * function giving the element at an index, so consumers fuse it into their
 * own loops — elementwise, broadcast and injective ops) or "materialized"
 * (the rule emitted loops writing a buffer — dense, reductions, softmax).
 * Shapes are PrimExprs: int literals or size variables (a `?` dim of a
 * parameter becomes a size variable of its own), so one prim function
 * serves every length.  A rule returns NULL after lc_fail() when it cannot
 * handle the case (dtype, attribute, dynamic shape); the Primitive function
 * then stays unlowered.
 *
 * An op whose result is a tuple (split, meshgrid) returns a tuple LTensor
 * (lc_tuple): its fields are tensors of their own, which the function's
 * projections (`%t.0`) read; a prim function has one output, so a tuple is
 * never its result.
 *
 * Numerics: rules compute what the reference kernels (interp/kernels*.c)
 * compute, with the same operation order for elementwise ops, so results
 * agree exactly; dense/matmul and reductions accumulate in the tensor's
 * dtype in another order (tests compare those with a tolerance), softmax
 * works in float64 as the reference does.
 *
 * The rules are in lower/compute/compute_<family>.c; each file ends with a
 * table of {op name, rule} rows (compute_family_<family>), which
 * compute_rule puts in a table indexed by the op's registry index on first
 * use (a row naming an unknown op is a bug it reports).  Attributes are
 * read with op_attr_* (ops/ops.h), which fall back to the row's defaults. */
#ifndef RLY_COMPUTE_H
#define RLY_COMPUTE_H

#include "ir/ir.h"
#include "ir/tir.h"
#include "lower/compute/compute_knobs.h"
#include "ops/ops.h"

typedef struct LowerCx LowerCx;
typedef struct LTensor LTensor;

/* A TIR compute rule: lowers one call of the op, or returns NULL after
 * lc_fail() when it cannot (the call then stays with the reference kernel). */
typedef LTensor *OpComputeFn(LowerCx *L, const Expr *call, LTensor **in, int nin);

/* A row of a family's table: the registry name of the op the rule lowers. */
typedef struct ComputeDef {
  const char *op;
  OpComputeFn *fn;
} ComputeDef;

/* The per-family tables (compute_<family>.c), each ending with a NULL name. */
/* clang-format off */
#define COMPUTE_FAMILIES(X) \
  X(elemwise) X(reduce) X(misc) X(nn) X(transform) X(nn_norm) X(nn_loss) X(conv_nd) X(conv) \
  X(nn_pool) X(nn_layout) X(transform_shape) X(transform_index) X(einsum) X(dyn) X(dyn_index) \
  X(image) X(image_crop) X(vision) X(qnn)
/* clang-format on */
#define X(f) extern const ComputeDef compute_family_##f[];
COMPUTE_FAMILIES(X)
#undef X

/* The rule of the op at registry index `op`; NULL: it has none (or the
 * index is invalid), the op runs on its reference kernel.  FuseOps and the
 * lowering ask it whether and how an op lowers. */
OpComputeFn *compute_rule(int op);
/* Builds the index-keyed table from `ntables` family tables into out
 * (ops_count() entries, each the row of an op or NULL); false, with the message in err, when a row
 * names an unknown op or an op twice (ops_index_rows). */
bool compute_rules_index(const ComputeDef *const *tables, int ntables, const void **out, char *err,
                         size_t cap);

/* The rules other rules call: dyn.* on constant shapes are the static ops,
 * qnn's on widened operands the float ones, mean_variance's variance. */
OpComputeFn compute_reshape, compute_broadcast_to, compute_full, compute_zeros, compute_ones,
    compute_strided_slice, compute_pad, compute_variance, compute_conv2d, compute_dense;

typedef PrimExpr *(*LAtFn)(LowerCx *L, const LTensor *t, PrimExpr **idx);

struct LTensor {
  DType dtype;
  int ndim;
  PrimExpr *shape[TENSOR_MAX_RANK];
  Buffer *buf;      /* materialized: elements are loads of buf */
  LAtFn at;         /* inline: the element at an index */
  const Expr *call; /* the op call (its attributes) */
  LTensor **in;
  int nin;
  PrimExpr *value;                  /* a scalar constant */
  int64_t aux[TENSOR_MAX_RANK + 2]; /* rule data (axes, flags) */
  LTensor **fields;                 /* an op with a tuple result: one tensor per field */
  int nfields;
};

/* ── the lowering context (compute_common.c) ── */

LowerCx *lc_new(Arena *a);
/* Whether reductions like dense accumulate in their dtype with partial sums
 * (fast, agrees within rounding; the default) or in float64 in order, bit
 * for bit as the reference kernels (EngineOptions.fast_math). */
void lc_set_fast_math(LowerCx *L, bool on);
bool lc_fast_math(const LowerCx *L);
/* The knobs' setting (lower/compute/compute_knobs.h; NULL: every default)
 * for the rules to read with lc_knob, which also notes which knobs the
 * rules read (lc_knobs_read: a bit per KnobId), the kernel's search space. */
void lc_set_knobs(LowerCx *L, const LowerKnobs *k);
int lc_knob(LowerCx *L, KnobId id);
uint32_t lc_knobs_read(const LowerCx *L);
void lc_free(LowerCx *L);
Arena *lc_arena(LowerCx *L);
/* NULL; records why (the first reason wins). */
LTensor *lc_fail(LowerCx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *lc_why(LowerCx *L);
bool lc_failed(LowerCx *L);
/* The call whose result is the function's output (rules writing buffers
 * write it straight into the output buffer). */
void lc_set_root(LowerCx *L, const Expr *root);
/* The output buffer parameter `%out` (made on first use with this shape;
 * NULL after lc_fail when the shape is computed). */
Buffer *lc_output(LowerCx *L, DType dt, int ndim, PrimExpr **shape);
/* Size variables (by name, created on first use; int64). */
TirVar *lc_size_var(LowerCx *L, const char *name);
int lc_nsize_vars(LowerCx *L);
TirVar **lc_size_vars(LowerCx *L);

/* Scalar expressions. */
PrimExpr *lc_int(LowerCx *L, int64_t v); /* int32 when it fits, else int64 */
/* A literal of dt: a float rounded to dt, an integer converted by the cast
 * rule (truncated, saturated, NaN as 0), bool 0/1. */
PrimExpr *lc_lit(LowerCx *L, DType dt, double v);
PrimExpr *lc_var(LowerCx *L, TirVar *v);
PrimExpr *lc_bin(LowerCx *L, PrimBinOp op, PrimExpr *a, PrimExpr *b);
PrimExpr *lc_call(LowerCx *L, PrimIntrinsic fn, PrimExpr *a, PrimExpr *b, PrimExpr *c);
/* e converted as the kernels convert (numpy's rules: a float is true when != 0, NaN too); e
 * itself when already `to`. */
PrimExpr *lc_cast(LowerCx *L, DType to, PrimExpr *e);
/* reinterpret[to](e): e's bits as a number of the same size. */
PrimExpr *lc_bitcast(LowerCx *L, DType to, PrimExpr *e);
PrimExpr *lc_neg(LowerCx *L, PrimExpr *e);
/* max (or min) as the kernels define it (kernel_fmax): NaN wins, and on
 * floats -0 is below +0 (TIR's max/min keep either zero of a tie). */
PrimExpr *lc_extreme(LowerCx *L, PrimExpr *a, PrimExpr *b, bool max);
/* fast_expf (ops/fast_math.h) of a float32 expression, as TIR. */
PrimExpr *lc_fast_exp(LowerCx *L, PrimExpr *x);
PrimExpr *lc_not(LowerCx *L, PrimExpr *e);
PrimExpr *lc_load(LowerCx *L, Buffer *b, int n, PrimExpr **idx);
/* The constant value of an int literal, or -1. */
int64_t lc_const(const PrimExpr *e);
/* Same dim (equal constants or the same size variable). */
bool lc_same_dim(const PrimExpr *a, const PrimExpr *b);
/* The product of dims (folded when constant). */
PrimExpr *lc_mul(LowerCx *L, PrimExpr *a, PrimExpr *b);
/* a + b, a - b, a * b as they are (no folding): the rules' shorthands. */
PrimExpr *lc_plus(LowerCx *L, PrimExpr *a, PrimExpr *b);
PrimExpr *lc_minus(LowerCx *L, PrimExpr *a, PrimExpr *b);
PrimExpr *lc_times(LowerCx *L, PrimExpr *a, PrimExpr *b);

/* Statements: emitted into the innermost open list. */
TirVar *lc_tvar(LowerCx *L, const char *prefix, const PrimExpr *extent);
void lc_open(LowerCx *L);
Stmt *lc_close(LowerCx *L); /* the list as an ST_SEQ */
void lc_emit(LowerCx *L, Stmt *s);
void lc_store(LowerCx *L, Buffer *b, int n, PrimExpr **idx, PrimExpr *value);
/* Emits `for v in kind(extent) { body }` (body: an ST_SEQ from lc_close). */
void lc_for(LowerCx *L, LoopKind kind, TirVar *v, PrimExpr *extent, Stmt *body);
void lc_if(LowerCx *L, PrimExpr *cond, Stmt *then_);
void lc_if_else(LowerCx *L, PrimExpr *cond, Stmt *then_, Stmt *else_);
/* A buffer parameter (dims from shape: literals and size variables). */
Buffer *lc_buffer(LowerCx *L, const char *name, DType dt, int ndim, PrimExpr **shape);
/* `alloc` in the current list. */
Buffer *lc_alloc(LowerCx *L, const char *prefix, DType dt, int ndim, PrimExpr **shape);
/* A rule says that its stores into b write every element of b, never
 * reading b back (an
 * elementwise epilogue may then be fused into that store:
 * lower/lower_epilogue.c); lc_is_total asks (ctx: the LowerCx). */
void lc_mark_total(LowerCx *L, const Buffer *b);
bool lc_is_total(void *ctx, const Buffer *b);
/* Where a materializing rule writes `call`'s result: the output buffer when
 * call is the root, else a new alloc. */
Buffer *lc_result_buffer(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape);

/* Tensors. */
LTensor *lc_tensor(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape);
/* A tuple of n fields (set by the rule). */
LTensor *lc_tuple(LowerCx *L, const Expr *call, int n);
LTensor *lc_from_buffer(LowerCx *L, const Expr *call, Buffer *b);
PrimExpr *lc_at(LowerCx *L, const LTensor *t, PrimExpr **idx);
/* t's element at output index idx of an n-dim broadcast result. */
PrimExpr *lc_bcast_at(LowerCx *L, const LTensor *t, int n, PrimExpr **out_shape, PrimExpr **idx);
/* numpy broadcasting of the operands' shapes; false after lc_fail. */
bool lc_broadcast(LowerCx *L, LTensor **in, int nin, int *ndim, PrimExpr **shape);
/* Writes t into dst with the elementwise schedule (outer loop parallel,
 * inner vectorized). */
void lc_materialize(LowerCx *L, const LTensor *t, Buffer *dst);
/* The dtypes the arithmetic-heavy rules handle (float32/64, int32/64,
 * bool): products, convolutions, pools, normalizations, images. */
bool lc_dtype_ok(DType dt);
/* The dtypes the elementwise, broadcast, injective and reduction rules
 * handle: every dtype.  Unsigned integers compute with unsigned semantics,
 * narrow integers wrap in their width, and float16 computes in float32
 * (lc_lane_dtype), rounded to half at each op's result, as the reference
 * kernels compute it. */
bool lc_elem_dtype_ok(DType dt);
/* The dtype an elementwise op computes in for operands of dt: float32 for
 * float16, dt itself otherwise (the kernels' compute lanes). */
DType lc_lane_dtype(DType dt);
/* The dtypes a prim function's buffers may have: every dtype. */
bool lc_buffer_dtype_ok(DType dt);
/* The dtypes the integer products and the qnn rules read and write:
 * lc_dtype_ok's and the quantized int8, uint8 and int16. */
bool lc_quant_dtype_ok(DType dt);
/* The accumulator of a product or convolution of operands a and b into
 * a result of dtype out, DT_INVALID when no rule computes it: integer
 * operands (any two integer dtypes) with an integer result accumulate in
 * the result's dtype, wrapping, which is bit for bit the kernels' wrapping
 * 64-bit sum narrowed to it in any order; float operands of one dtype with
 * a result of that dtype in float64 (the kernels' sums, float16 included:
 * rounded once at the end). */
DType lc_product_acc(DType a, DType b, DType out);
/* The smallest and largest value of an integer dtype (as int64 bits:
 * uint64's largest is -1), the initial values of max/min reductions. */
int64_t lc_int_min(DType dt);
int64_t lc_int_max(DType dt);
/* The call's result type (a tensor type). */
const Type *lc_result_type(const Expr *call);

/* The Winograd F(2x2, 3x3) schedule of a blocked 3x3 convolution, stride 1,
 * padding 1 (lower/compute/compute_winograd.c): x NCHW<cb>c (N x CB x H x W x cb),
 * w OIHW<cb>i<ob>o (OB x CB x 3 x 3 x cb x ob), out N x OB x H x W x ob. */
typedef struct Winograd {
  const LTensor *x, *w;
  int64_t N, CB, cb, OB, ob, H, W;
  DType dt;
} Winograd;
/* Whether it pays off (more 2x2 output tiles than input channels: the
 * weights are transformed on every call; scratch buffers of at most 32 MiB)
 * and applies (float32, even sizes). */
bool lc_winograd_applies(const Winograd *g);
/* Emits it, storing every element of out once. */
void lc_conv_winograd(LowerCx *L, const Winograd *g, Buffer *out);

/* The pointwise schedule of a 1x1 convolution, stride 1, no padding,
 * groups 1 (lower/compute/compute_conv_1x1.c): x NCHW (N x C x H x W), w
 * OIHW (O x C x 1 x 1), out NCHW (N x O x H x W), read and written in
 * place. */
typedef struct Pointwise {
  const LTensor *x, *w;
  PrimExpr *N;
  int64_t C, H, W, O;
  DType dt;
} Pointwise;
/* Whether it applies: a row's vector registers mostly full. */
bool lc_pointwise_applies(const Pointwise *p);
/* Emits it, storing every element of out once. */
void lc_conv_pointwise(LowerCx *L, const Pointwise *p, Buffer *out);

/* The row schedule of a depthwise convolution (groups = channels =
 * outputs; lower/compute/compute_conv_dw.c): x NCHW (N x C x H x W), w OIHW
 * (C x 1 x KH x KW), out NCHW (N x C x OH x OW); s, d, p: strides,
 * dilations and the padding before (rows, columns). */
typedef struct DwRows {
  const LTensor *x, *w;
  PrimExpr *N;
  int64_t C, H, W, KH, KW, OH, OW, s[2], d[2], p[2];
  DType dt;
} DwRows;
/* Whether it applies: a row's vector registers mostly full. */
bool lc_depthwise_rows_applies(const DwRows *g);
/* Emits it, storing every element of out once. */
void lc_conv_depthwise_rows(LowerCx *L, const DwRows *g, Buffer *out);

/* A constant of rank > 0 as an operand (compute_const.c: FuseOps keeps
 * constant arguments in the body for ops flagged OP_VALUE_ARGS); NULL for
 * a dtype no buffer may have.  lc_const_value: the constant an operand is,
 * or NULL (a rule reading values: dyn.strided_slice's begin). */
LTensor *lc_const_tensor(LowerCx *L, const Expr *konst);
const Tensor *lc_const_value(const LTensor *t);

#endif
