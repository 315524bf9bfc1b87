/* ir.h — the Relay-level IR: types, expressions, patterns, attributes, modules.
 *
 * One tagged union per family (Type, Expr, Pattern, AttrValue), arena
 * allocated and immutable after construction: a pass builds new nodes and
 * shares unchanged subtrees.  An Expr takes only the bytes of its kind's
 * payload (expr_new), so nodes are copied with expr_copy, not by value.  The only mutable field is
 * Expr.ty, the cache the type checker fills (like TVM's checked_type_).  Every node has a Span.
 *
 * Kind lists are X-macros so enums, names and dispatch come from one place.
 * TIR (prim functions) lives in ir/tir.h and hangs off Module. */
#ifndef RLY_IR_H
#define RLY_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/span.h"
#include "ir/tensor.h"
#include "ir/util.h"

typedef struct Type Type;
typedef struct Expr Expr;
typedef struct Pattern Pattern;
typedef struct Var Var;
typedef struct Function Function;
typedef struct AttrValue AttrValue;
typedef struct Attrs Attrs;
typedef struct AdtDef AdtDef;
typedef struct Module Module;
typedef struct PrimFunc PrimFunc; /* ir/tir.h */

/* ───────────────────────────── types ───────────────────────────── */

#define TYPE_KINDS(X)                                                          \
  X(TY_TENSOR, "tensor")         /* Tensor[(d0, d1), dtype]; rank 0 = dtype */ \
  X(TY_TUPLE, "tuple")           /* (A, B) */                                  \
  X(TY_FUNC, "func")             /* fn [T](A, B) -> C */                       \
  X(TY_VAR, "typevar")           /* a bound type parameter `A` */              \
  X(TY_ADT, "adt")               /* List[A] (TypeCall of a global type) */     \
  X(TY_REF, "ref")               /* Ref[T] */                                  \
  X(TY_RANDSTATE, "randstate")   /* RandState: a Threefry-2x32 key */          \
  X(TY_INCOMPLETE, "incomplete") /* `_` / an inference metavariable */

typedef enum TypeKind {
#define X(e, n) e,
  TYPE_KINDS(X)
#undef X
} TypeKind;

struct Type {
  TypeKind kind;
  Span span;
  union {
    struct {
      DType dtype;
      int ndim;
      Dim *dims;
    } tensor;
    struct {
      int n;
      Type **fields;
    } tuple;
    struct {
      int nparams;
      Type **params;
      Type *ret;
      int ntparams;
      const char **tparams;
    } func;
    struct {
      const char *name;
    } var;
    struct {
      const char *name;
      int nargs;
      Type **args;
    } adt;
    struct {
      Type *inner;
    } ref;
    struct {
      int64_t id;
    } incomplete; /* 0 = `_` as written; >0 = metavariable */
  } u;
};

const char *type_kind_name(TypeKind k);

/* ──────────────────────────── attributes ─────────────────────────── */

#define ATTR_KINDS(X)                                    \
  X(AV_INT, "int")     /* 3, -1, 3i64 */                 \
  X(AV_FLOAT, "float") /* 0.5f, 1e-05f */                \
  X(AV_BOOL, "bool")                                     \
  X(AV_STR, "string")                                    \
  X(AV_LIST, "list")  /* [a, b] */                       \
  X(AV_NONE, "none")  /* None / nullptr */               \
  X(AV_EXPR, "expr")  /* fallback atom, e.g. a global */ \
  X(AV_SYM, "symbol") /* bare identifier, e.g. size variable n in shape=[n, 4] */

typedef enum AttrKind {
#define X(e, n) e,
  ATTR_KINDS(X)
#undef X
} AttrKind;

struct AttrValue {
  AttrKind kind;
  Span span;
  DType dtype; /* AV_INT/AV_FLOAT: the literal's type (int32 / float32 unless suffixed) */
  union {
    int64_t i;     /* AV_INT (uint64 values are stored bit-for-bit) */
    double f;      /* AV_FLOAT */
    bool b;        /* AV_BOOL */
    const char *s; /* AV_STR (unescaped), AV_SYM */
    struct {
      int n;
      AttrValue **items;
    } list;
    Expr *expr; /* AV_EXPR */
  } u;
};

/* Attributes of a call or a function, in written order (keys unique). */
struct Attrs {
  int n;
  const char **keys;
  AttrValue **vals;
};

/* Lookup helpers; NULL attrs is the empty set. */
const AttrValue *attrs_get(const Attrs *a, const char *key);

/* ─────────────────────────── expressions ─────────────────────────── */

/* A variable: shared by its binding site and all its uses.  `id` is unique
 * in the process; `name` is the hint printed, held in the Var itself (""
 * for the anonymous variable of `a; b`: var_named).  Graph temporaries
 * (`%3`) are ordinary vars with is_graph set.  A parameter's
 * `{virtual_device=...}`, kept for printing, is rare: it sits before the
 * Var (var_new_device, var_device).  24 bytes and the name: the flags sit
 * in the span's spare byte. */
struct Var {
  Type *annot; /* written annotation, or NULL */
  uint64_t id;
  union {
    const Span span; /* set by var_new; var_set_span */
    struct {
      uint32_t span_off_;
      unsigned span_len_ : 24;
      unsigned is_graph : 1;
      unsigned is_free : 1;    /* bound by free_var */
      unsigned has_device : 1; /* made by var_new_device */
    };
  };
  char name[]; /* NUL-terminated */
};

static inline bool var_named(const Var *v) { return v->name[0] != 0; }

struct Function {
  int nparams;
  Var **params;
  Type *ret; /* written return type or NULL */
  int ntparams;
  const char **tparams;
  Attrs *attrs; /* e.g. Primitive=1; NULL if none */
  Expr *body;
  Span span;
};

#define EXPR_KINDS(X)                                                        \
  X(EX_CONST, "constant")    /* scalar literal or tensor constant */         \
  X(EX_VAR, "var")           /* %x */                                        \
  X(EX_GLOBAL, "global")     /* @f: a function or a state global */          \
  X(EX_OP, "op")             /* add, nn.dense (registry index) */            \
  X(EX_CTOR, "constructor")  /* Cons */                                      \
  X(EX_CALL, "call")         /* f(a, b, k=v) */                              \
  X(EX_TUPLE, "tuple")       /* (a, b) */                                    \
  X(EX_PROJ, "projection")   /* %t.0 */                                      \
  X(EX_LET, "let")           /* let %x = v; body  (also %N = v; and a; b) */ \
  X(EX_FREE_VAR, "free_var") /* free_var %x: T; body */                      \
  X(EX_FN, "function")       /* fn (%x) { ... } */                           \
  X(EX_IF, "if")                                                             \
  X(EX_MATCH, "match")         /* match / match? */                          \
  X(EX_REF_NEW, "ref")         /* ref(e) */                                  \
  X(EX_REF_READ, "ref_read")   /* %r^ */                                     \
  X(EX_REF_WRITE, "ref_write") /* %r := v */                                 \
  X(EX_DATAFLOW, "dataflow")   /* dataflow { e } */

/* One byte: it lives in the span's spare byte (Expr). */
typedef enum __attribute__((packed)) ExprKind {
#define X(e, n) e,
  EXPR_KINDS(X)
#undef X
} ExprKind;

typedef struct MatchClause {
  Pattern *pat;
  Expr *body;
} MatchClause;

/* A 16-byte header (span and kind in 8 bytes, the type) and the kind's
 * payload.  The span is read-only here: expr_new sets it, expr_set_span
 * changes it (a plain store would overwrite the kind).  A call's arguments
 * follow it in the same allocation (a flexible array: 8 bytes less than a
 * pointer to an array of their own, and one allocation instead of two). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wflexible-array-extensions"
#endif
struct Expr {
  union {
    const Span span;
    struct {
      unsigned char span_bytes_[7];
      ExprKind kind;
    };
  };
  Type *ty; /* filled by the type checker; NULL before */
  union {
    struct {
      Tensor *value;
    } konst;
    Var *var;
    struct {
      const char *name;
    } global;
    /* index into the op registry; call_tir copies the row's OP_CALL_TIR flag
     * (its callee prints as a string first argument) so ir/ need not ask ops/ */
    struct {
      int index;
      const char *name;
      bool call_tir;
    } op;
    struct {
      AdtDef *adt;
      int index;
    } ctor; /* adt->ctors[index] */
    struct {
      Expr *fn;
      Attrs *attrs;
      int nargs;
      Expr *args[]; /* nargs of them */
    } call;
    struct {
      int n;
      Expr **fields;
    } tuple;
    struct {
      Expr *tuple;
      int index;
    } proj;
    struct {
      Var *var;
      Expr *value;
      Expr *body;
    } let; /* var->name NULL for `a; b` */
    struct {
      Var *var;
      Expr *body;
    } free_var;
    Function *fn;
    struct {
      Expr *cond, *then_, *else_;
    } if_;
    struct {
      Expr *scrut;
      int n;
      MatchClause *clauses;
      bool partial;
    } match;
    struct {
      Expr *init;
    } ref_new;
    struct {
      Expr *ref;
    } ref_read;
    struct {
      Expr *ref, *value;
    } ref_write;
    struct {
      Expr *body;
    } dataflow;
  } u;
};
#pragma GCC diagnostic pop

const char *expr_kind_name(ExprKind k);

/* ──────────────────────────── patterns ──────────────────────────── */

#define PATTERN_KINDS(X) \
  X(PAT_WILD, "_")       \
  X(PAT_VAR, "var")      \
  X(PAT_CTOR, "ctor")    \
  X(PAT_TUPLE, "tuple")

typedef enum PatternKind {
#define X(e, n) e,
  PATTERN_KINDS(X)
#undef X
} PatternKind;

struct Pattern {
  PatternKind kind;
  Span span;
  union {
    Var *var;
    struct {
      AdtDef *adt;
      int index;
      int n;
      Pattern **sub;
    } ctor;
    struct {
      int n;
      Pattern **sub;
    } tuple;
  } u;
};

/* ───────────────────────────── module ───────────────────────────── */

typedef struct CtorDef {
  const char *name;
  int nfields;
  Type **fields;
  Span span;
} CtorDef;

/* `type List[A] { Cons(A, List[A]), Nil }` or `extern type T[A]`. */
struct AdtDef {
  const char *name;
  int ntparams;
  const char **tparams;
  int nctors;
  CtorDef *ctors;
  bool is_extern;
  Span span;
};

/* `global @g: T = e;` — a state global (one mutable cell per module). */
typedef struct StateGlobal {
  const char *name;
  Type *type;
  Expr *init;
  Span span;
  bool builtin; /* @prng_state, present in every module */
} StateGlobal;

typedef struct FuncDef {
  const char *name;
  Function *fn;
  Span span;
  Type *ty; /* inferred fn type, filled by the type checker (NULL before) */
} FuncDef;

#define DEF_KINDS(X)      \
  X(DEF_FUNC, "def")      \
  X(DEF_ADT, "type")      \
  X(DEF_GLOBAL, "global") \
  X(DEF_PRIM, "prim")

typedef enum DefKind {
#define X(e, n) e,
  DEF_KINDS(X)
#undef X
} DefKind;

typedef struct Def {
  DefKind kind;
  union {
    FuncDef *func;
    AdtDef *adt;
    StateGlobal *global;
    PrimFunc *prim;
  } u;
} Def;

/* A definition's name (a global's without its `@`) and where it was given. */
const char *def_name(const Def *d);
Span def_span(const Def *d);

/* A module: definitions in the order they were given (the printer sorts).
 * Names of functions, state globals and prim functions share one namespace
 * (`@name`); ADT names and constructor names have their own. */
struct Module {
  Arena *arena;
  int ndefs, capdefs;
  Def *defs;
  StrMap globals; /* "@name" without '@' → Def* (func/global/prim) */
  StrMap types;   /* ADT name → AdtDef* */
  StrMap ctors;   /* constructor name → AdtDef* */
};

Module *module_new(Arena *a); /* includes the builtin @prng_state */
/* Adds or replaces (same name) a definition; returns the replaced Def's kind
 * or -1 when new.  The Def is copied. */
int module_add(Module *m, Def d);
const Def *module_lookup(const Module *m, const char *name);
FuncDef *module_func(const Module *m, const char *name);
StateGlobal *module_state_global(const Module *m, const char *name);
PrimFunc *module_prim(const Module *m, const char *name);
AdtDef *module_adt(const Module *m, const char *name);
AdtDef *module_ctor_adt(const Module *m, const char *ctor, int *index);
Module *module_copy(const Module *m, Arena *a); /* shallow: new tables, shared nodes */
void module_free(Module *m); /* frees the name tables (nodes belong to the arena) */

/* ─────────────────────────── constructors ─────────────────────────── */

uint64_t ir_fresh_id(void);

Type *type_tensor(Arena *a, DType dt, int ndim, const Dim *dims, Span sp);
Type *type_scalar(Arena *a, DType dt);
Type *type_tuple(Arena *a, int n, Type **fields, Span sp);
Type *type_func(Arena *a, int n, Type **params, Type *ret, int ntp, const char **tparams, Span sp);
Type *type_var(Arena *a, const char *name, Span sp);
Type *type_adt(Arena *a, const char *name, int nargs, Type **args, Span sp);
Type *type_ref(Arena *a, Type *inner, Span sp);
Type *type_randstate(Arena *a, Span sp);
/* A type name known without a definition: `Storage` (TVM's `extern type
 * Storage`, the result of memory.alloc_storage). */
bool type_name_builtin(const char *name);
Type *type_incomplete(Arena *a, int64_t id, Span sp);
Type *type_unit(Arena *a); /* () */

/* A Var named name (copied; NULL: anonymous). */
Var *var_new(Arena *a, const char *name, Type *annot, Span sp);
/* The same with the name's length given (name need not end there). */
Var *var_new_n(Arena *a, const char *name, size_t len, Type *annot, Span sp);
/* The same with `{virtual_device=device}` written on it. */
Var *var_new_device(Arena *a, const char *name, Type *annot, Span sp, const AttrValue *device);
const AttrValue *var_device(const Var *v); /* NULL when none was written */
/* A node of kind k (not a call: expr_call), zeroed but for kind and span.
 * It is only as large as its kind needs (expr_size: the header and that
 * kind's member of the union; a call's arguments after it), so a node is
 * never copied whole (`*r = *e`, `r->u = e->u`) and never changes kind:
 * expr_copy copies one. */
Expr *expr_new(Arena *a, ExprKind k, Span sp);
Expr *expr_copy(Arena *a, const Expr *e); /* shallow: the same children */
void expr_set_span(Expr *e, Span sp);     /* keeps the kind */
void var_set_span(Var *v, Span sp);       /* keeps the flags */
size_t expr_size(ExprKind k);             /* a call's without its arguments */
size_t expr_bytes(const Expr *e);         /* the node's, a call's arguments included */
Expr *expr_const(Arena *a, Tensor *t, Span sp);
Expr *expr_var(Arena *a, Var *v, Span sp);
Expr *expr_global(Arena *a, const char *name, Span sp);
Expr *expr_call(Arena *a, Expr *fn, int n, Expr **args, Attrs *attrs, Span sp);
Expr *expr_tuple(Arena *a, int n, Expr **fields, Span sp);
Expr *expr_proj(Arena *a, Expr *t, int index, Span sp);
Expr *expr_let(Arena *a, Var *v, Expr *value, Expr *body, Span sp);
Expr *expr_if(Arena *a, Expr *c, Expr *t, Expr *e, Span sp);
Expr *expr_fn(Arena *a, Function *f, Span sp);
/* Scalar constants. */
Expr *expr_scalar_i64(Arena *a, DType dt, int64_t v, Span sp);
Expr *expr_scalar_f64(Arena *a, DType dt, double v, Span sp);
Expr *expr_scalar_bool(Arena *a, bool v, Span sp);

Attrs *attrs_new(Arena *a, int n);
AttrValue *attr_int(Arena *a, int64_t v, DType dt);
AttrValue *attr_float(Arena *a, double v, DType dt);
AttrValue *attr_str(Arena *a, const char *s);
AttrValue *attr_bool(Arena *a, bool b);

/* ────────────────────── structural equality / hash ────────────────────── */

/* Alpha-equivalence: bound variables are equal when bound at the same place;
 * free variables by identity; spans and checked types are ignored.
 * Iterative on let chains (a million bindings is fine). */
bool type_equal(const Type *a, const Type *b);
bool expr_equal(const Expr *a, const Expr *b);
bool func_equal(const Function *a, const Function *b);
bool module_equal(const Module *a, const Module *b);
uint64_t type_hash(const Type *t);
uint64_t expr_hash(const Expr *e); /* consistent with expr_equal */
uint64_t func_hash(const Function *f);

/* ───────────────────────────── printer ───────────────────────────── */

typedef struct PrintOptions {
  bool types;  /* add `ty=T` comment annotations (needs a type-checked program) */
  bool header; /* `#[version = "0.0.5"]` first line (modules) */
  int indent;  /* initial indentation (spaces) */
  /* Constants with more elements print as `meta[relay.Constant][i]` (i
   * numbered in print order, per call), as TVM shows them; 0: in full.
   * For display (imported weights); without meta_section the text does
   * not parse back alone. */
  int64_t meta_limit;
  /* Modules: append TVM's `#[metadata]` section holding those constants,
   * so the text parses back on its own. */
  bool meta_section;
} PrintOptions;

/* The meta_limit of what the REPL shows (:print, :pass diffs, :step), as :bind's. */
enum { PRINT_DISPLAY_META_LIMIT = 16 };

/* Canonical text, TVM style: header, ADTs sorted by name, then state
 * globals, prim functions and defs sorted by name; 2-space indent.
 * print → parse → print is a fixed point.  All return malloc'd strings,
 * or append to a StrBuf. */
char *print_module(const Module *m, PrintOptions opt);
/* As print_module; *nmeta gets how many constants it showed as meta[...]. */
char *print_module_meta(const Module *m, PrintOptions opt, int64_t *nmeta);
/* TVM's `#[metadata]` JSON for consts[0..n) (ir/print_meta.c). */
void print_metadata_to(StrBuf *b, const Tensor *const *consts, int64_t n);
char *print_expr(const Expr *e, PrintOptions opt);
char *print_type(const Type *t);
/* t in at most about `width` columns (function types shortened: `fn (A, B,
 * … 171 more) -> (… 13 results)`); display only, not parseable. */
char *print_type_short(const Type *t, size_t width);
void print_type_to(StrBuf *b, const Type *t);
void print_func_def_to(StrBuf *b, const Module *m, const FuncDef *f, PrintOptions opt);
void print_attr_value_to(StrBuf *b, const AttrValue *v);
/* A constant as a literal: `3f`, `-2i64`, `True`, `[[1f, 2f], [3f, 4f]]`. */
void print_tensor_literal_to(StrBuf *b, const Tensor *t);
/* A tensor with no elements has no literal (`[]` has no element type):
 * it prints as the call making it, `zeros(shape=[2, 0], dtype="float32")`,
 * and true; false (nothing printed) for any other tensor. */
bool print_empty_tensor_to(StrBuf *b, const Tensor *t);
void print_scalar_to(StrBuf *b, const Tensor *t, int64_t i); /* one element with suffix */
/* Quoted string with C escapes. */
void print_string_to(StrBuf *b, const char *s);

#endif
