/* sched_int.h — what the schedule primitives share (not a public header):
 * the state a schedule is applied in, the handles its names stand for,
 * argument readers, and the tree utilities every primitive rewrites with.
 *
 * The function being scheduled is kept normalized: one variable per loop
 * (`grid` loops split into nested serial `range` loops) and sequences
 * flattened.  A loop is named by its variable (a TirVar, shared by every
 * version of the tree: primitives copy statements, never the variables of
 * loops they keep), a block by its name (unique in the function).  A
 * primitive builds a new body (sched_copy and sched_replace copy the path
 * they change; nodes are never changed in place), so a failed step leaves
 * the function as it was.
 *
 * Errors: sched_fail(s, span, ...) reports at the step's argument (or the
 * step) and returns false; every primitive checks its preconditions as
 * TVM's do before rewriting. */
#ifndef RLY_SCHED_INT_H
#define RLY_SCHED_INT_H

#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/sched.h"
#include "ir/tir.h"
#include "sched/sched.h"

/* ───────────────────────── handles and state ───────────────────────── */

typedef enum HandleKind { H_BLOCK, H_LOOP, H_INT } HandleKind;

typedef struct Handle {
  HandleKind kind;
  const char *block; /* H_BLOCK: the block's name */
  TirVar *loop;      /* H_LOOP: the loop's variable */
  int64_t i;         /* H_INT */
} Handle;

enum { SCHED_MAX_VALS = 16, SCHED_MAX_DEPTH = 64 };

/* What a primitive gives back (bound to the step's `let` names). */
typedef struct SchedVals {
  int n;
  Handle v[SCHED_MAX_VALS];
} SchedVals;

typedef struct Sched {
  Arena *a;
  DiagCtx *d;
  PrimFunc *f;  /* the function as scheduled so far (f->body is current) */
  StrMap env;   /* a name bound by a step's `let` → Handle* */
  uint64_t rng; /* the sampling primitives' state */
  /* The step being applied; primitives that decide something (sampling)
   * record the decision in `record`, the step as the trace keeps it. */
  const SchedStep *step;
  SchedStep *record;
} Sched;

bool sched_fail(Sched *s, Span where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note under the last error. */
void sched_note(Sched *s, Span where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ───────────────────────── arguments ───────────────────────── */

/* The argument at position pos or with key `key` (ir/sched.h: sched_arg);
 * `what` names it in the error when it is missing. */
const SchedArg *sched_need(Sched *s, const SchedStep *st, int pos, const char *key,
                           const char *what);
/* A handle: `%name` bound by a step (a loop also by its variable's name
 * in the function), a block's name as a string, or a nested step giving
 * one value. */
bool sched_eval_arg(Sched *s, const SchedArg *a, Handle *out);
bool sched_arg_block(Sched *s, const SchedArg *a, const char **name);
bool sched_arg_loop(Sched *s, const SchedArg *a, TirVar **loop);
bool sched_arg_int(Sched *s, const SchedArg *a, int64_t *v);
bool sched_arg_str(Sched *s, const SchedArg *a, const char **v);
/* A list of integers (`?` gives -1, `%n` an integer handle). */
bool sched_arg_ints(Sched *s, const SchedArg *a, int64_t *v, int max, int *n);

/* ───────────────────────── the tree ───────────────────────── */

/* A path from the function's body down to a statement: node[0] is the body,
 * node[n-1] the statement found. */
typedef struct SPath {
  int n;
  Stmt *node[SCHED_MAX_DEPTH];
} SPath;

/* The loop whose (single) variable is v / the block named `name`. */
bool sched_find_loop(Sched *s, const TirVar *v, SPath *p);
bool sched_find_block(Sched *s, const char *name, SPath *p);
/* Reports "no loop %x" / "no block" at `where` when not found. */
bool sched_need_loop(Sched *s, TirVar *v, Span where, SPath *p);
bool sched_need_block(Sched *s, const char *name, Span where, SPath *p);
/* The loops enclosing node p->node[p->n - 1], outermost first. */
int sched_path_loops(const SPath *p, Stmt **loops, int max);

/* A new body with p's last node replaced by `with` (NULL: removed from its
 * sequence), the nodes above it copied. */
Stmt *sched_replace(Sched *s, const SPath *p, Stmt *with);
/* Installs a new body (flattening sequences) as the current function. */
void sched_set_body(Sched *s, Stmt *body);
/* One variable per loop, sequences flattened (idempotent). */
Stmt *sched_normalize(Sched *s, const Stmt *body);

/* Copies: every statement and expression copied, variables in `vars`
 * replaced by their expressions (copied at each use) and buffers in `bufs`
 * by theirs (m may be NULL: a plain copy). */
typedef struct SchedSubst {
  PtrMap vars; /* TirVar* → PrimExpr* */
  PtrMap bufs; /* Buffer* → Buffer* */
} SchedSubst;
void subst_var(SchedSubst *m, const TirVar *v, PrimExpr *by);
void subst_buf(SchedSubst *m, const Buffer *b, Buffer *by);
void subst_free(SchedSubst *m);
Stmt *sched_copy(Sched *s, const Stmt *st, const SchedSubst *m);
PrimExpr *sched_copy_expr(Sched *s, const PrimExpr *e, const SchedSubst *m);

/* ── builders (arena nodes, span of the current step) ── */
PrimExpr *sched_int(Sched *s, int64_t v, DType dt);
PrimExpr *sched_var(Sched *s, TirVar *v);
PrimExpr *sched_bin(Sched *s, PrimBinOp op, PrimExpr *a, PrimExpr *b); /* folds constants */
TirVar *sched_new_var(Sched *s, const char *name, DType dt);           /* name made unique */
Stmt *sched_for(Sched *s, TirVar *v, PrimExpr *extent, LoopKind k, Stmt *body);
Stmt *sched_seq(Sched *s, int n, Stmt **items);
Stmt *sched_if(Sched *s, PrimExpr *cond, Stmt *then_);
/* A name not used by any variable, block or buffer of the function: base,
 * or base_1, base_2, ... */
const char *sched_fresh_name(Sched *s, const char *base);

/* The extent of a single-variable loop when constant (else -1). */
int64_t sched_loop_extent(const Stmt *loop);
/* Does any block under st bind an iteration variable of kind reduce
 * (reduce true) / spatial (false) with an expression using v? */
bool sched_var_bound_as(const Stmt *st, const TirVar *v, bool reduce);
/* Does expression e / statement st use variable v? */
bool sched_expr_uses(const PrimExpr *e, const TirVar *v);
bool sched_stmt_uses(const Stmt *st, const TirVar *v);
/* The blocks under st (pre-order), at most max. */
int sched_blocks_under(const Stmt *st, const Stmt **out, int max);

/* ── accesses and affine forms ── */

typedef struct SAccess {
  Buffer *buf;
  int n;
  PrimExpr **idx;
  bool write;
} SAccess;
/* The loads and stores of a block's body and init (not of nested blocks'
 * iteration bindings), at most max. */
int sched_block_accesses(const Stmt *block, SAccess *out, int max);

/* A linear form c + sum k[i] * v[i] of variables. */
enum { SCHED_LIN_TERMS = 16 };
typedef struct SLin {
  int64_t c;
  int n;
  const TirVar *v[SCHED_LIN_TERMS];
  int64_t k[SCHED_LIN_TERMS];
} SLin;
bool sched_linear(const PrimExpr *e, SLin *out);
PrimExpr *sched_from_linear(Sched *s, const SLin *l, DType dt);

/* After the last step: allocations moved to where they are used, shrunk to
 * one iteration's region (sched_compact.c). */
void sched_compact(Sched *s);

/* ── regions (sched_region.c) ── */

/* Loop variables with their ranges [lo, hi] (inclusive). */
enum { SCHED_MAX_DIMS = 8 };
typedef struct SVarRange {
  const TirVar *v;
  int64_t lo, hi;
} SVarRange;
typedef struct SRanges {
  int n;
  SVarRange r[SCHED_MAX_DEPTH];
} SRanges;
/* Adds a loop's range (false: its extent is not a positive constant). */
bool sched_ranges_add_loop(SRanges *r, const Stmt *loop);
/* Adds the ranges of the loops p->node[from..to). */
bool sched_ranges_add_path(SRanges *r, const SPath *p, int from, int to);
/* The bounds of l when its variables in r run over their ranges: the least
 * value (a linear form of l's variables not in r) and the constant extent. */
void sched_lin_bounds(const SLin *l, const SRanges *r, SLin *min, int64_t *extent);
/* The constant bounds [lo, hi] when every variable of l is in r. */
bool sched_lin_const_bounds(const SLin *l, const SRanges *r, int64_t *lo, int64_t *hi);
/* An index of an access in block, its iteration variables replaced by
 * their (linear) bindings: a linear form of loop variables. */
bool sched_lin_compose(const PrimExpr *idx, const Stmt *block, SLin *out);
/* A box: per dimension the least index (linear form) and a constant extent. */
typedef struct SRegion {
  bool empty;
  int n;
  SLin min[SCHED_MAX_DIMS];
  int64_t ext[SCHED_MAX_DIMS];
} SRegion;
/* a becomes the smallest box holding a and b (false: their lower bounds do
 * not differ by a constant). */
bool sched_region_union(SRegion *a, const SRegion *b);
/* The union of block's reads (write false) or writes of buf when the loops
 * in r run over their ranges (false: an index is not affine). */
bool sched_block_region(const Stmt *block, const Buffer *buf, bool write, const SRanges *r,
                        SRegion *reg);

/* ── the primitives (each in its file; the table is sched_prims.h) ── */
typedef bool (*SchedPrimFn)(Sched *s, const SchedStep *st, SchedVals *out);
#define X(name, args, help) bool sp_##name(Sched *s, const SchedStep *st, SchedVals *out);
#include "sched/sched_prims.h"
SCHED_PRIMS(X)
#undef X

#endif
