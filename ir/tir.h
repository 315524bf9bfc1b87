/* tir.h — TIR: primitive functions over buffers (text-format.md B.5).
 *
 *   prim @f(%X: Buffer[(n, 4), float32], %Y: Buffer[(n, 4), float32]) { stmts }
 *
 * Destination passing: outputs are the last parameters.  Statements and
 * scalar expressions are two tagged unions, arena allocated, immutable. */
#ifndef RLY_TIR_H
#define RLY_TIR_H

#include "ir/span.h"
#include "ir/tensor.h"
#include "ir/util.h"

/* Relay nodes a PrimFunc points to without looking inside (ir/ir.h). */
typedef struct Attrs Attrs;
typedef struct Function Function;
typedef struct PrimFunc PrimFunc;

typedef struct TirVar TirVar;
typedef struct Buffer Buffer;
typedef struct PrimExpr PrimExpr;
typedef struct Stmt Stmt;
typedef struct SchedTrace SchedTrace;

/* A scalar variable: loop variable, block iteration variable, `let`, or a
 * size variable of a buffer shape (then is_size is set, dtype int64). */
struct TirVar {
  const char *name;
  DType dtype;
  uint64_t id;
  bool is_size;
  Span span;
};

/* A buffer: a parameter or an `alloc`.  Dims use Dim (constants or size
 * variables, named by Dim.name, bound by the prim function). */
struct Buffer {
  const char *name;
  DType dtype;
  int ndim;
  Dim *dims;
  uint64_t id;
  Span span;
  /* Set by a compute rule on an alloc whose every element the kernel
   * stores before reading it: the alloc need not be zero-filled. */
  bool no_init;
};

// clang-format off
#define PRIM_BINOPS(X)                                                                          \
  X(PB_ADD, "+", 10)                                                                            \
  X(PB_SUB, "-", 10)                                                                            \
  X(PB_MUL, "*", 12) X(PB_DIV, "/", 12) X(PB_MOD, "%", 12) X(PB_LT, "<", 8) X(PB_LE, "<=", 8)   \
      X(PB_GT, ">", 8) X(PB_GE, ">=", 8) X(PB_EQ, "==", 7) X(PB_NE, "!=", 7) X(PB_AND, "&&", 5) \
          X(PB_OR, "||", 4)
// clang-format on

typedef enum PrimBinOp {
#define X(e, s, p) e,
  PRIM_BINOPS(X)
#undef X
} PrimBinOp;

/* The one-argument float functions, each a libm function, written once
 * for the TIR interpreter, the JIT and the reference kernels (which compute
 * an elementwise op with the libm function of its intrinsic, so the three
 * agree to the bit): X(NAME, fn, llvm, mvec): PI_<NAME> is TIR's `fn`,
 * computed by libm's fn (float32: fn##f; tir_float_<NAME> and
 * tir_double_<NAME> in ir/tir_rules.h).  The JIT calls the same function,
 * or emits the LLVM intrinsic `llvm` when it is not 0 (exact, as libm's);
 * mvec 1: with vector math the JIT may call glibc's libmvec variants of
 * the float32 function (jit/codegen_expr.c says which are accurate enough). */
// clang-format off
#define PRIM_FLOAT_FNS_WITH(X, Y)                                                         \
  X(EXP, exp, 0, 0, Y) X(LOG, log, 0, 1, Y) X(SQRT, sqrt, "llvm.sqrt", 0, Y)            \
  X(TANH, tanh, 0, 1, Y) X(FLOOR, floor, "llvm.floor", 0, Y)                            \
  X(CEIL, ceil, "llvm.ceil", 0, Y) X(TRUNC, trunc, "llvm.trunc", 0, Y)                  \
  X(NEARBYINT, nearbyint, "llvm.roundeven", 0, Y) X(LOG2, log2, 0, 1, Y)                \
  X(LOG10, log10, 0, 0, Y) X(ERF, erf, 0, 0, Y) X(SIN, sin, 0, 1, Y)                    \
  X(COS, cos, 0, 1, Y) X(TAN, tan, 0, 0, Y) X(ASIN, asin, 0, 0, Y)                      \
  X(ACOS, acos, 0, 1, Y) X(ATAN, atan, 0, 1, Y) X(SINH, sinh, 0, 1, Y)                  \
  X(COSH, cosh, 0, 0, Y) X(ASINH, asinh, 0, 0, Y) X(ACOSH, acosh, 0, 0, Y)              \
  X(ATANH, atanh, 0, 1, Y)
// clang-format on
/* PRIM_FLOAT_FNS(X): X(NAME, fn, llvm, mvec) per row; PRIM_FLOAT_FNS_WITH
 * passes one more argument to each row (how PRIM_INTRINSICS, below, lists
 * them with its own X). */
#define PRIM_FLOAT_FNS(X) PRIM_FLOAT_FNS_WITH(PRIM_FLOAT_ROW_, X)
#define PRIM_FLOAT_ROW_(NAME, fn, llvm, mvec, X) X(NAME, fn, llvm, mvec)
#define PRIM_FLOAT_INTRINSIC_(NAME, fn, llvm, mvec, X) X(PI_##NAME, #fn, 1, 'f')

/* Intrinsics: enum, name, arity, operand kind: 'a' any dtype (max, min,
 * abs), 'f' floats only, 'i' integers or bool (the bitwise ops), 'n'
 * integers only (shifts), 's' select (a bool condition, then any), 'd'
 * three int32 operands (dot_u8i8x4).
 *
 * Semantics beyond C's (the TIR interpreter and the JIT implement them
 * alike): max/min propagate NaN; shift_left by a count outside [0, bits)
 * gives 0, shift_right gives the sign fill (0 for unsigned); bitwise_not of
 * a bool is logical not; trunc rounds toward zero; nearbyint rounds to the
 * nearest integer, ties to even; dot_u8i8x4(acc, a, b) is acc plus the
 * sum over the four bytes j of a and b of a's byte j as uint8 times b's
 * byte j as int8 (byte 0 the least significant), wrapping in int32: a
 * 4-way uint8 x int8 dot product accumulated into an int32 (x86's
 * vpdpbusd, one lane). */
// clang-format off
#define PRIM_INTRINSICS(X)                                                            \
  X(PI_MAX, "max", 2, 'a')                                                            \
  X(PI_MIN, "min", 2, 'a')                                                            \
  X(PI_ABS, "abs", 1, 'a')                                                            \
  X(PI_SIGMOID, "sigmoid", 1, 'f')                                                    \
  X(PI_POW, "pow", 2, 'f')                                                            \
  X(PI_SELECT, "select", 3, 's')                                                      \
  PRIM_FLOAT_FNS_WITH(PRIM_FLOAT_INTRINSIC_, X)                                       \
  X(PI_BITAND, "bitwise_and", 2, 'i')                                                 \
  X(PI_BITOR, "bitwise_or", 2, 'i')                                                   \
  X(PI_BITXOR, "bitwise_xor", 2, 'i')                                                 \
  X(PI_BITNOT, "bitwise_not", 1, 'i')                                                 \
  X(PI_SHL, "shift_left", 2, 'n')                                                     \
  X(PI_SHR, "shift_right", 2, 'n')                                                   \
  X(PI_DOT4, "dot_u8i8x4", 3, 'd')
// clang-format on

typedef enum PrimIntrinsic {
#define X(e, s, n, k) e,
  PRIM_INTRINSICS(X)
#undef X
      PI_COUNT
} PrimIntrinsic;

#define PRIM_EXPR_KINDS(X)                       \
  X(PE_INT, "int")     /* 3 (int32), 3i64 ... */ \
  X(PE_FLOAT, "float") /* 0f, 1.5f64 */          \
  X(PE_VAR, "var")     /* %i */                  \
  X(PE_LOAD, "load")   /* %X[%i, %j] */          \
  X(PE_BIN, "binop")                             \
  X(PE_NOT, "not") /* !e */                      \
  X(PE_NEG, "neg") /* -e */                      \
  X(PE_CALL, "intrinsic")                        \
  X(PE_CAST, "cast") /* float32(e), reinterpret[float32](e) */

typedef enum PrimExprKind {
#define X(e, n) e,
  PRIM_EXPR_KINDS(X)
#undef X
} PrimExprKind;

struct PrimExpr {
  PrimExprKind kind;
  DType dtype; /* result type (filled by the parser where known, else by the verifier) */
  Span span;
  union {
    int64_t i;
    double f;
    TirVar *var;
    struct {
      Buffer *buf;
      int n;
      PrimExpr **idx;
    } load;
    struct {
      PrimBinOp op;
      PrimExpr *a, *b;
    } bin;
    PrimExpr *operand; /* PE_NOT, PE_NEG */
    struct {
      PrimIntrinsic fn;
      int n;
      PrimExpr **args;
    } call;
    struct {
      DType to;
      PrimExpr *value;
      bool bits; /* reinterpret: value's bits read as `to` (tir_bitcast_ok) */
    } cast;
  } u;
};

/* Loop kinds, as TVMScript's T.serial/T.grid/T.parallel/...: `grid` takes
 * one extent per variable; the others take, for one variable, (end) or
 * (begin, end), and `parallel`, `vectorized` and `unrolled` also one extent
 * per variable when there are several. */
#define LOOP_KINDS(X)                                                                    \
  X(LOOP_RANGE, "range")       /* for %i in range(begin, end) or range(end) */           \
  X(LOOP_GRID, "grid")         /* for %i, %j in grid(a, b) */                            \
  X(LOOP_PARALLEL, "parallel") /* parallel(end), parallel(begin, end), parallel(a, b) */ \
  X(LOOP_VECTORIZED, "vectorized")                                                       \
  X(LOOP_UNROLLED, "unrolled")

typedef enum LoopKind {
#define X(e, n) e,
  LOOP_KINDS(X)
#undef X
} LoopKind;

typedef struct IterVar {
  bool reduce; /* `reduce %vk = %k` vs `spatial %vi = %i` */
  TirVar *var;
  PrimExpr *binding;
} IterVar;

#define STMT_KINDS(X)                                           \
  X(ST_SEQ, "seq")                                              \
  X(ST_FOR, "for")                                              \
  X(ST_BLOCK, "block")                                          \
  X(ST_STORE, "store") /* %Y[%i] = e; */                        \
  X(ST_ALLOC, "alloc") /* alloc %Y: Buffer[...]; */             \
  X(ST_LET, "let")     /* let %t = e; (scope: rest of block) */ \
  X(ST_IF, "if")

typedef enum StmtKind {
#define X(e, n) e,
  STMT_KINDS(X)
#undef X
} StmtKind;

/* An annotation a schedule attached to a loop or block (`annotate`):
 * hints for later stages, printed with the statement. */
typedef struct TirAnnot {
  const char *key, *value; /* value as written: 1, "text", 0.5 */
} TirAnnot;

struct Stmt {
  StmtKind kind;
  Span span;
  int nannots; /* ST_FOR, ST_BLOCK */
  TirAnnot *annots;
  union {
    struct {
      int n;
      Stmt **items;
    } seq;
    /* Variable i runs over [lo[i], hi[i]) in steps of 1 (nothing when
     * lo[i] >= hi[i]); lo NULL or lo[i] NULL means 0 (tir_for_lo).  The
     * parser gives range an explicit lo[0] (0 for `range(end)`) and the other
     * kinds lo NULL unless `kind(begin, end)` has a begin other than 0;
     * several variables always start at 0. */
    struct {
      LoopKind loop;
      int nvars;
      TirVar **vars;
      PrimExpr **lo;
      PrimExpr **hi;
      Stmt *body;
    } for_;
    struct {
      const char *name;
      int niters;
      IterVar *iters;
      Stmt *init;
      Stmt *body;
    } block;
    struct {
      Buffer *buf;
      int n;
      PrimExpr **idx;
      PrimExpr *value;
    } store;
    Buffer *alloc;
    struct {
      TirVar *var;
      PrimExpr *value;
    } let;
    struct {
      PrimExpr *cond;
      Stmt *then_, *else_;
    } if_;
  } u;
};

struct PrimFunc {
  const char *name;
  int nparams;
  Buffer **params;
  int nsizevars;
  TirVar **sizevars; /* size variables named in parameter shapes, in order of appearance */
  Attrs *attrs;
  Stmt *body; /* an ST_SEQ */
  Span span;
  /* Set by the lowering: the last parameter (the output) is stored in full,
   * each element once with its final value, so a caller need not zero it. */
  bool out_whole;
  /* Set by the lowering: the output is the first parameter's elements in the
   * same order (a chain of reshapes): callers may share its memory instead
   * of running the kernel. */
  bool out_is_view;
  /* Set by the lowering: the fused Relay function (Primitive) it computes,
   * whose op calls carry the user's spans (run-time errors name them). */
  const Function *group;
  /* A schedule (ir/sched.h, applied by sched/): the steps, and the
   * function they were applied to.  unscheduled is NULL while the steps are
   * still to be applied (just parsed); a function without a schedule has
   * both NULL. */
  const SchedTrace *trace;
  const PrimFunc *unscheduled;
  /* Set by a schedule: the function as it runs, its buffers compacted
   * (sched/sched_compact.c), as TVM lowers a schedule before building.
   * The executors run prim_to_run(f). */
  const PrimFunc *lowered;
};

/* What the executors run for prim function f. */
static inline const PrimFunc *prim_to_run(const PrimFunc *f) { return f->lowered ? f->lowered : f; }

const char *prim_binop_text(PrimBinOp op);
int prim_binop_prec(PrimBinOp op);
const char *prim_intrinsic_name(PrimIntrinsic fn);
int prim_intrinsic_arity(PrimIntrinsic fn);
/* The operand kind of PRIM_INTRINSICS ('a', 'f', 'i', 'n' or 's').  Inline:
 * rly-jit.so uses it and links nothing of librly. */
static inline char prim_intrinsic_kind(PrimIntrinsic fn) {
  static const char kinds[] = {
#define X(e, s, n, k) k,
      PRIM_INTRINSICS(X)
#undef X
  };
  return kinds[fn];
}
int prim_intrinsic_lookup(const char *name); /* -1 if unknown */
const char *loop_kind_name(LoopKind k);
const char *stmt_kind_name(StmtKind k);
/* The begin of loop variable i of an ST_FOR, or NULL when it is 0.  Inline:
 * rly-jit.so uses it and links nothing of librly. */
static inline const PrimExpr *tir_for_lo(const Stmt *s, int i) {
  const PrimExpr *lo = s->u.for_.lo ? s->u.for_.lo[i] : NULL;
  return lo && !(lo->kind == PE_INT && lo->u.i == 0) ? lo : NULL;
}

void print_prim_func_to(StrBuf *b, const PrimFunc *f);
/* A flag attribute of f (`fp_contract=0` or `=False` turns one off; absent:
 * dflt).  In ir/ir.c, with the attributes. */
bool prim_attr_flag(const PrimFunc *f, const char *name, bool dflt);
bool prim_func_equal(const PrimFunc *a, const PrimFunc *b);
uint64_t prim_func_hash(const PrimFunc *f);

#endif
