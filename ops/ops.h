/* ops.h — the operator registry: one OpDef per op, the single source of truth.
 *
 * Each op family has its own file (elemwise.c, reduce.c, nn.c, transform.c,
 * dyn.c, random.c, tir_call.c) holding a table of OpDef; registry.c joins
 * them.  An entry gives the name, arity, attributes with their defaults,
 * fusion pattern, a one-line description, the type relation, the flags
 * other layers ask about (instead of comparing names) and the cost kind
 * :time counts.  The rules of the stages above ops/ name the op they serve
 * and are put in tables indexed by its registry index on first use: the
 * reference kernels (kernels_get, kernels/kernels.h), the TIR compute rules
 * (compute_rule, lower/compute/compute.h) and the gradient rules
 * (grad_rule, ad/grad.h); ops_index_rows builds such a table.
 *
 * The type relation is written once and serves twice: at compile time on
 * types whose dims may be constants, `?`, size variables or metavariables,
 * and at run time on the actual shapes (all dims constant, every argument's
 * value known), where it is the op's shape function. */
#ifndef RLY_OPS_H
#define RLY_OPS_H

#include <stdatomic.h>

#include "ir/ir.h"

/* Fusion patterns, as TVM orders them (lower fuses more freely). */
#define OP_PATTERNS(X)                              \
  X(OPAT_ELEMWISE, "elemwise")                      \
  X(OPAT_BROADCAST, "broadcast")                    \
  X(OPAT_INJECTIVE, "injective")                    \
  X(OPAT_COMM_REDUCE, "reduce")                     \
  X(OPAT_OUT_EWISE_FUSABLE, "out-elemwise-fusable") \
  X(OPAT_TUPLE, "tuple")                            \
  X(OPAT_OPAQUE, "opaque")

typedef enum OpPattern {
#define X(e, n) e,
  OP_PATTERNS(X)
#undef X
} OpPattern;

const char *op_pattern_name(OpPattern p);

/* What a relation sees besides the argument types. */
typedef struct RelCtx {
  Arena *arena;      /* where result types are allocated */
  const Module *mod; /* for call_tir (prim signatures); may be NULL */
  const Expr *call;  /* the call node at compile time; NULL at run time */
  const char *op_name;
  const struct OpDef *op; /* the op's row (attribute defaults); NULL: found by op_name */
  char err[512];          /* set by rel_fail; empty when no error */
  /* Dim unification hook (the type checker binds metavariables through it).
   * NULL at run time: then dims must be equal, and `?` matches anything. */
  bool (*unify_dim)(struct RelCtx *cx, Dim a, Dim b);
  void *user;
} RelCtx;

/* args[i]: argument types; values[i]: the argument's value when known (a
 * constant at compile time, every tensor at run time) or NULL.  Returns the
 * result type, or NULL after rel_fail(). */
typedef Type *(*TypeRelFn)(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                           const Attrs *attrs);

typedef struct OpAttrSpec {
  const char *name;
  AttrKind kind; /* AV_INT, AV_FLOAT, AV_BOOL, AV_STR, AV_LIST (ints), AV_NONE (int or None) */
  const char
      *def; /* default, as written in the text format ("0", "[]", "None", "\"NCHW\"", "1e-05f") */
} OpAttrSpec;
/* Also (ops/rel.c): def NULL = required (no default; a missing one is an
 * error); kind AV_EXPR = any value accepted (e.g. arange's start/stop/step,
 * which TVM prints as meta constants; call_tir's shape and dtype). */

/* Facts about an op that code outside ops/ asks the row for, instead of
 * comparing op names. */
enum {
  OP_CALL_TIR = 1 << 0,     /* call_tir: runs a prim function or an extern; its callee may be
                               written as a string first argument (attribute `callee`) */
  OP_VIEW = 1 << 1,         /* output 0 may share input 0's buffer (reshape, squeeze, ...) */
  OP_TUPLE_ARG = 1 << 2,    /* the one argument is a tuple of all the tensor inputs (concatenate) */
  OP_KEEPS_KEY = 1 << 3,    /* reads its key argument without consuming it (random.fold_in) */
  OP_IDENTITY = 1 << 4,     /* the result is argument 0 itself (on_device, device_copy) */
  OP_OWN_RUNNER = 1 << 5,   /* runs in the evaluator's own code, not a kernel (memory.*, vm.*);
                               argument 0 may be a prim function @name */
  OP_CALL_LOWERED = 1 << 6, /* call_lowered: calls argument 0 on the fields of argument 1 */
  OP_VALUE_ARGS = 1 << 7,   /* its compute rule reads the values of its constant tensor
                               arguments (dyn.strided_slice's begin): FuseOps keeps a constant
                               argument in the fused body instead of making it a parameter */
};

/* The work of one call, for :time's GFLOP/s (repl/cmd_jit.c). */
typedef enum OpCost {
  OPCOST_NONE,     /* not counted */
  OPCOST_ELEMWISE, /* one flop per output element */
  OPCOST_MATMUL,   /* a multiply-add per output element and per entry of x's last dim */
  OPCOST_CONV2D,   /* a multiply-add per output element and per weight entry Cin/groups × kh × kw */
} OpCost;

typedef struct OpDef {
  const char *name;
  int min_args, max_args; /* max_args -1: variadic */
  OpPattern pattern;
  const OpAttrSpec *attrs; /* terminated by {NULL} */
  TypeRelFn rel;
  const char *doc; /* one line, for :help and completion */
  bool effectful;  /* may not appear in a dataflow block */
  unsigned flags;  /* OP_* above */
  OpCost cost;
  /* Reference text for :doc, :info and `rly --list-ops` (ops/op_doc.c):
   * the arguments' names ("data, weight"; "..." ends a variadic list), a
   * sentence on the result's type, and a call that runs (tests/op_examples.py
   * runs every row's in both exec modes). */
  const char *args;
  const char *rule;
  const char *example;
} OpDef;

int ops_count(void);
const OpDef *ops_get(int index);
int ops_lookup(const char *name); /* -1 if unknown */
/* The family whose table holds the op at index (`nn_conv`: ops/nn_conv.c), or NULL. */
const char *ops_family(int index);
/* Whether the op at index has every flag in `flags` (false for an invalid index). */
bool ops_has_flag(int index, unsigned flags);
/* The index of the first op with `flags` (OP_CALL_TIR: call_tir), or -1. */
int ops_find_flag(unsigned flags);
/* An Op node for the op at registry index i: the index, the row's name and
 * the row's OP_CALL_TIR flag (which ir/print.c reads from the node). */
Expr *ops_expr(Arena *a, int index, Span sp);
/* A table of rules keyed by op name, made a table keyed by registry index:
 * `tables` holds ntables arrays of rows of row_size bytes, each row's
 * first member its op's name (const char *), each array ending with a row
 * whose name is NULL; out[i] (ops_count() entries, zeroed by the caller)
 * becomes the row naming op i.  `what` names the rules for the message:
 * false, with "compute rule row names unknown op `x`" or "two compute rule
 * rows for op `x`" in err, when a row names no registered op or an op
 * twice. */
bool ops_index_rows(const char *what, const void *const *tables, int ntables, size_t row_size,
                    const void **out, char *err, size_t cap);

/* A stage's rules by registry index, built from its rows keyed by op name
 * (ops_index_rows) on first use, once for the process (sessions on several
 * threads share it): `what`, `tables`, `ntables` and `row_size` as above;
 * by_index starts NULL.  A row naming an unknown op is a bug (rly_bug). */
typedef struct OpsRuleTable {
  const char *what;
  const void *const *tables;
  int ntables;
  size_t row_size;
  _Atomic(const void **) by_index;
} OpsRuleTable;
/* The row naming op `op` (NULL: none, or an invalid index). */
const void *ops_rule_row(OpsRuleTable *t, int op);
/* Up to k registered names nearest to `name` (edit distance), best first. */
int ops_suggest(const char *name, const char **out, int k);
/* Checks a call's attributes against the op's spec (unknown keys, wrong
 * kinds).  Returns NULL if fine, else a message (arena) with a suggestion. */
const char *ops_check_attrs(Arena *a, const OpDef *op, const Attrs *attrs, Span *where);

/* ── reference text (ops/op_doc.c) ── */

/* `arange(start, stop, step, dtype: string = "float32")`: the argument
 * names, then each attribute with its kind and default (an attribute
 * named like an argument is left out); malloc'd. */
char *ops_signature(const OpDef *op);
/* The name of the i-th argument (0-based; "" past the named ones). */
const char *ops_arg_name(const OpDef *op, int i, char *buf, size_t cap);
/* An attribute kind as :doc and the errors write it ("int", "list of ints"). */
const char *ops_attr_kind_name(AttrKind k);

/* ── helpers for relations (ops/rel.c) ── */

Type *rel_fail(RelCtx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The tensor type of argument i, or fails "op: argument i must be a tensor, got T". */
const Type *rel_tensor(RelCtx *cx, Type **args, int i);
bool rel_unify_dim(RelCtx *cx, Dim a, Dim b);
/* numpy broadcasting of two shapes; fails with "op: shapes (2, 3) and (4) do not broadcast". */
bool rel_broadcast(RelCtx *cx, int na, const Dim *a, int nb, const Dim *b, int *nout, Dim **out);
/* Attribute access with the spec's default when absent. */
int64_t rel_attr_int(RelCtx *cx, const Attrs *attrs, const char *key);
double rel_attr_float(RelCtx *cx, const Attrs *attrs, const char *key);
bool rel_attr_bool(RelCtx *cx, const Attrs *attrs, const char *key);
const char *rel_attr_str(RelCtx *cx, const Attrs *attrs, const char *key);
bool rel_attr_is_none(RelCtx *cx, const Attrs *attrs, const char *key);
/* An int list attribute (or a single int, promoted); returns its length. */
int rel_attr_ints(RelCtx *cx, const Attrs *attrs, const char *key, int64_t *out, int max);
/* A shape attribute (`shape=[n, 128]`): ints, `?` never, size variables as
 * AV_SYM → DIM_VAR.  Returns the rank, or -1 when absent. */
int rel_attr_dims(RelCtx *cx, const Attrs *attrs, const char *key, Dim *out, int max);
/* "(2, 3)" for messages. */
const char *rel_shape_str(RelCtx *cx, int ndim, const Dim *dims);
Dim dim_const(int64_t v);
Dim dim_any(void);
/* Normalizes a possibly negative axis into [0, ndim); fails with
 * "op: axis 2 is out of range for rank 2" and returns -1. */
int rel_axis(RelCtx *cx, int64_t axis, int ndim);
/* A dtype attribute ("float32"); "" or None give dflt; an unknown name fails
 * ("cast: unknown dtype `flaot32`") and returns DT_INVALID. */
DType rel_attr_dtype(RelCtx *cx, const Attrs *attrs, const char *key, DType dflt);
/* A type as text for messages (arena string, via print_type_to). */
const char *rel_type_str(RelCtx *cx, const Type *t);
/* A tensor type's shape as text ("(2, n, ?)"), for messages. */
const char *rel_tensor_shape_str(RelCtx *cx, const Type *t);

/* Argument i is the adjoint of a result of type y (a backward op's dy):
 * y's dtype and dims, or fails naming both. */
bool rel_adjoint_of(RelCtx *cx, Type **args, int i, const Type *y);

/* ── attributes of a typed op call (compute rules, run-time code) ── */

/* The value written in the call, else the default of the op's row, so a
 * default is written once (its OpAttrSpec).  A written value of the wrong
 * kind, or None, reads as the default; asking for a key the op does not
 * declare is an internal bug. */
int64_t op_attr_int(const Expr *call, const char *key);
double op_attr_float(const Expr *call, const char *key);
bool op_attr_bool(const Expr *call, const char *key);
/* A string default is unquoted into arena a. */
const char *op_attr_str(Arena *a, const Expr *call, const char *key);
/* Whether the attribute is None (written, or by default). */
bool op_attr_is_none(const Expr *call, const char *key);
/* An int list (a single int counts as a list of one); -1 when None (written
 * or by default) or not a list of at most max ints. */
int op_attr_ints(const Expr *call, const char *key, int64_t *out, int max);

/* The host's vector register width in bytes (AVX-512: 64, AVX2: 32, else
 * 16): the one place kernels' register blocks and AlterOpLayout's blocked
 * layouts are sized from (ops/device.c). */
int target_vector_bytes(void);
/* Whether the host has AVX512-VNNI's byte dot products: qnn.dense lowers to
 * them (lower/compute/compute_qnn_dot.c) there, elsewhere the widened int32
 * product is faster than their exact emulation. */
bool target_has_vnni(void);

#endif
