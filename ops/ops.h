/* ops.h — the operator registry: one OpDef per op, the single source of truth.
 *
 * Each op family has its own file (elemwise.c, reduce.c, nn.c, transform.c,
 * dyn.c, random.c, tir_call.c) holding a table of OpDef; registry.c joins
 * them.  An entry gives the name, arity, attributes with their defaults,
 * fusion pattern, a one-line description, and the type relation.
 *
 * The type relation is written once and serves twice: at compile time on
 * types whose dims may be constants, `?`, size variables or metavariables,
 * and at run time on the actual shapes (all dims constant, every argument's
 * value known), where it is the op's shape function. */
#ifndef RLY_OPS_H
#define RLY_OPS_H

#include "ir/ir.h"

/* Fusion patterns, as TVM orders them (lower fuses more freely). */
#define OP_PATTERNS(X)                      \
  X(OPAT_ELEMWISE, "elemwise")              \
  X(OPAT_BROADCAST, "broadcast")            \
  X(OPAT_INJECTIVE, "injective")            \
  X(OPAT_COMM_REDUCE, "reduce")             \
  X(OPAT_OUT_EWISE_FUSABLE, "out-elemwise-fusable") \
  X(OPAT_TUPLE, "tuple")                    \
  X(OPAT_OPAQUE, "opaque")

typedef enum OpPattern {
#define X(e, n) e,
  OP_PATTERNS(X)
#undef X
} OpPattern;

const char *op_pattern_name(OpPattern p);

/* What a relation sees besides the argument types. */
typedef struct RelCtx {
  Arena *arena;           /* where result types are allocated */
  const Module *mod;      /* for call_tir (prim signatures); may be NULL */
  const Expr *call;       /* the call node at compile time; NULL at run time */
  const char *op_name;
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
  AttrKind kind;        /* AV_INT, AV_FLOAT, AV_BOOL, AV_STR, AV_LIST (ints), AV_NONE (int or None) */
  const char *def;      /* default, as written in the text format ("0", "[]", "None", "\"NCHW\"", "1e-05f") */
} OpAttrSpec;
/* Also (ops/rel.c): def NULL = required (no default; a missing one is an
 * error); kind AV_EXPR = any value accepted (e.g. arange's start/stop/step,
 * which TVM prints as meta constants; call_tir's shape and dtype). */

typedef struct OpDef {
  const char *name;
  int min_args, max_args; /* max_args -1: variadic */
  OpPattern pattern;
  const OpAttrSpec *attrs; /* terminated by {NULL} */
  TypeRelFn rel;
  const char *doc;         /* one line, for :help and completion */
  bool effectful;          /* may not appear in a dataflow block */
} OpDef;

int ops_count(void);
const OpDef *ops_get(int index);
int ops_lookup(const char *name); /* -1 if unknown */
/* Up to k registered names nearest to `name` (edit distance), best first. */
int ops_suggest(const char *name, const char **out, int k);
/* Checks a call's attributes against the op's spec (unknown keys, wrong
 * kinds).  Returns NULL if fine, else a message (arena) with a suggestion. */
const char *ops_check_attrs(Arena *a, const OpDef *op, const Attrs *attrs, Span *where);

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

#endif
