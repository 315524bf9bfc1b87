/* tir_verify.c — structural verification of a prim function (passes.h).
 *
 * Checks, reporting each problem at its node: every buffer loaded or
 * stored is a parameter or allocated earlier in an enclosing statement
 * list; index counts equal buffer ranks and indices are integers; every
 * scalar variable is in scope (size variables everywhere, loop and block
 * variables in their bodies, `let` for the rest of its list); block
 * iteration variables are bound to expressions of loop variables; operand
 * types agree (integers of different widths may mix, as index arithmetic
 * with int64 size variables needs); stored values have the buffer's dtype;
 * intrinsic arities; conditions are bool; loop bounds are integers, and
 * only a one-variable loop other than `grid` has a begin other than 0.
 * Expression types are computed here (the function is const); DT_INVALID
 * marks a subexpression already reported, so one mistake gives one
 * message. */
#include <string.h>

#include "ir/tir_rules.h"
#include "ir/walk.h"
#include "types/types.h"

typedef struct TV {
  const PrimFunc *f;
  DiagCtx *d;
  PtrVec bufs;     /* Buffer* visible */
  PtrVec vars;     /* TirVar* in scope */
  PtrVec loopvars; /* TirVar* of enclosing loops */
  bool binding;    /* checking a block binding: only loop and size variables */
} TV;

static bool same_name(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static bool buf_visible(const TV *v, const Buffer *b) {
  for (size_t i = 0; i < v->bufs.len; i++) {
    const Buffer *x = v->bufs.items[i];
    if (x == b || same_name(x->name, b->name)) return true;
  }
  return false;
}

static bool var_in(const PtrVec *vs, const TirVar *t) {
  for (size_t i = 0; i < vs->len; i++) {
    const TirVar *x = vs->items[i];
    if (x == t || (x->id && x->id == t->id)) return true;
  }
  return false;
}

static bool var_visible(const TV *v, const TirVar *t) {
  if (t->is_size) return true;
  for (int i = 0; i < v->f->nsizevars; i++)
    if (v->f->sizevars[i] == t || same_name(v->f->sizevars[i]->name, t->name)) return true;
  return var_in(&v->vars, t);
}

static DType pexpr(TV *v, const PrimExpr *e);

static bool is_intish(DType t) { return t != DT_INVALID && dtype_is_int(t); }

static void check_indices(TV *v, const Buffer *b, int n, PrimExpr **idx, Span sp,
                          const char *what) {
  if (!buf_visible(v, b)) diag_error(v->d, sp, "%s of unallocated buffer %%%s", what, b->name);
  if (n != b->ndim)
    diag_error(v->d, sp, "buffer %%%s has rank %d but is indexed with %d ind%s", b->name, b->ndim,
               n, n == 1 ? "ex" : "ices");
  for (int i = 0; i < n; i++) {
    DType t = pexpr(v, idx[i]);
    if (t != DT_INVALID && !dtype_is_int(t))
      diag_error(v->d, idx[i]->span, "index of buffer %%%s must be an integer, got %s", b->name,
                 dtype_name(t));
  }
}

/* Result of mixing two operand types, or DT_INVALID after an error. */
static DType unify_operands(TV *v, const PrimExpr *e, DType a, DType b, const char *op) {
  if (a == DT_INVALID || b == DT_INVALID) return DT_INVALID;
  DType t = tir_unify(a, b);
  if (t != DT_INVALID) return t;
  diag_error(v->d, e->span, "operands of %s have different types: %s and %s", op, dtype_name(a),
             dtype_name(b));
  return DT_INVALID;
}

/* Type of a binary operation: && and || take bools, comparisons give bool,
 * arithmetic needs numbers of one type (integer widths may mix). */
static DType pbin(TV *v, const PrimExpr *e) {
  PrimBinOp op = e->u.bin.op;
  const char *name = prim_binop_text(op);
  DType a = pexpr(v, e->u.bin.a), b = pexpr(v, e->u.bin.b);
  if (tir_binop_is_logic(op)) {
    if ((a != DT_INVALID && a != DT_BOOL) || (b != DT_INVALID && b != DT_BOOL)) {
      diag_error(v->d, e->span, "operands of %s must be bool, got %s and %s", name,
                 a == DT_INVALID ? "?" : dtype_name(a), b == DT_INVALID ? "?" : dtype_name(b));
      return DT_INVALID;
    }
    return DT_BOOL;
  }
  DType t = unify_operands(v, e, a, b, name);
  if (t == DT_INVALID) return t;
  if (tir_binop_is_compare(op)) return DT_BOOL;
  if (t == DT_BOOL) {
    diag_error(v->d, e->span, "operands of %s must be numbers, got bool", name);
    return DT_INVALID;
  }
  return t;
}

/* Whether t suits the operand kind of intrinsic fn (ir/tir.h); *want
 * names what it takes. */
static bool kind_ok(PrimIntrinsic fn, DType t, const char **want) {
  *want = "";
  switch (prim_intrinsic_kind(fn)) {
    case 'f':
      *want = "a float";
      return dtype_is_float(t);
    case 'i':
      *want = "an integer or bool";
      return dtype_is_int(t) || t == DT_BOOL;
    case 'n':
      *want = "an integer";
      return dtype_is_int(t);
    case 'd':
      *want = "an int32";
      return t == DT_INT32;
    default:
      return true;
  }
}

/* Type of an intrinsic call: arity, select's bool condition and equal
 * branch types, the operand kind (floats, integers).  Arguments are checked first so
 * their own errors come out even when the arity is wrong. */
static DType pcall(TV *v, const PrimExpr *e) {
  PrimIntrinsic fn = e->u.call.fn;
  const char *name = prim_intrinsic_name(fn);
  int n = e->u.call.n, want = prim_intrinsic_arity(fn);
  DType ts[3] = {DT_INVALID, DT_INVALID, DT_INVALID};
  for (int i = 0; i < n; i++) {
    DType t = pexpr(v, e->u.call.args[i]);
    if (i < 3) ts[i] = t;
  }
  if (n != want) {
    diag_error(v->d, e->span, "%s expects %d argument%s, got %d", name, want, want == 1 ? "" : "s",
               n);
    return DT_INVALID;
  }
  if (fn == PI_SELECT) {
    if (ts[0] != DT_INVALID && ts[0] != DT_BOOL)
      diag_error(v->d, e->u.call.args[0]->span, "select condition must be bool, got %s",
                 dtype_name(ts[0]));
    return unify_operands(v, e, ts[1], ts[2], name);
  }
  DType t = n == 2 ? unify_operands(v, e, ts[0], ts[1], name) : ts[0];
  if (prim_intrinsic_kind(fn) == 'd')
    for (int i = 1; i < n; i++)
      if (ts[i] != DT_INVALID && ts[i] != DT_INT32) t = ts[i]; /* the odd one out is reported */
  const char *kind;
  if (t != DT_INVALID && !kind_ok(fn, t, &kind)) {
    diag_error(v->d, e->span, "%s expects %s argument, got %s", name, kind, dtype_name(t));
    return DT_INVALID;
  }
  return t;
}

static DType pvar(TV *v, const PrimExpr *e) {
  const TirVar *t = e->u.var;
  if (!var_visible(v, t)) {
    diag_error(v->d, e->span, "%%%s is not in scope", t->name);
    return DT_INVALID;
  }
  if (v->binding && !t->is_size && !var_in(&v->loopvars, t))
    diag_error(v->d, e->span, "block iteration variables must be bound to loop variables, not %%%s",
               t->name);
  return t->dtype;
}

/* The dtype of a TIR expression, reporting each problem once; DT_INVALID
 * after an error so enclosing expressions stay quiet. */
static DType pexpr(TV *v, const PrimExpr *e) {
  DType t;
  switch (e->kind) {
    case PE_INT: /* True/False are PE_INT with dtype bool */
    case PE_FLOAT:
      return tir_literal_dtype(e);
    case PE_VAR:
      return pvar(v, e);
    case PE_LOAD:
      if (v->binding)
        diag_error(v->d, e->span,
                   "block iteration variables must be bound to loop variables, not a load");
      check_indices(v, e->u.load.buf, e->u.load.n, e->u.load.idx, e->span, "load");
      return e->u.load.buf->dtype;
    case PE_BIN:
      return pbin(v, e);
    case PE_NOT:
      t = pexpr(v, e->u.operand);
      if (t != DT_INVALID && t != DT_BOOL) {
        diag_error(v->d, e->span, "operand of ! must be bool, got %s", dtype_name(t));
        return DT_INVALID;
      }
      return t;
    case PE_NEG:
      t = pexpr(v, e->u.operand);
      if (t == DT_BOOL) {
        diag_error(v->d, e->span, "operand of - must be a number, got bool");
        return DT_INVALID;
      }
      return t;
    case PE_CALL:
      return pcall(v, e);
    case PE_CAST:
      t = pexpr(v, e->u.cast.value);
      if (e->u.cast.bits && t != DT_INVALID && !tir_bitcast_ok(t, e->u.cast.to)) {
        diag_error(v->d, e->span, "reinterpret[%s] needs a %d-bit number, got %s",
                   dtype_name(e->u.cast.to), 8 * dtype_bytes(e->u.cast.to), dtype_name(t));
        return DT_INVALID;
      }
      return e->u.cast.to;
  }
  RLY_UNREACHABLE();
}

static void expect_dtype(TV *v, const PrimExpr *e, bool want_bool, const char *what) {
  DType t = pexpr(v, e);
  if (t == DT_INVALID) return;
  if (want_bool && t != DT_BOOL)
    diag_error(v->d, e->span, "%s must be bool, got %s", what, dtype_name(t));
  if (!want_bool && !dtype_is_int(t))
    diag_error(v->d, e->span, "%s must be an integer, got %s", what, dtype_name(t));
}

static void stmt(TV *v, const Stmt *s);

/* Bounds are integers; a begin needs the one-variable `kind(begin, end)`
 * form, the only one that can print it (a pass could build another). */
static void verify_for_bounds(TV *v, const Stmt *s) {
  int nv = s->u.for_.nvars;
  for (int i = 0; i < nv; i++) {
    if (s->u.for_.lo && s->u.for_.lo[i]) expect_dtype(v, s->u.for_.lo[i], false, "a loop bound");
    if (s->u.for_.hi && s->u.for_.hi[i]) expect_dtype(v, s->u.for_.hi[i], false, "a loop bound");
    const PrimExpr *lo = tir_for_lo(s, i);
    if (lo && (nv > 1 || s->u.for_.loop == LOOP_GRID))
      diag_error(v->d, lo->span, "a `%s` loop over %d variable%s must start at 0",
                 loop_kind_name(s->u.for_.loop), nv, nv == 1 ? "" : "s");
  }
}

/* Block bindings see the enclosing scope only, and only its loop and size
 * variables. */
static void verify_bindings(TV *v, const Stmt *s) {
  for (int i = 0; i < s->u.block.niters; i++) {
    const IterVar *it = &s->u.block.iters[i];
    v->binding = true;
    DType t = it->binding ? pexpr(v, it->binding) : DT_INT32;
    v->binding = false;
    if (t != DT_INVALID && !is_intish(t))
      diag_error(v->d, it->binding->span,
                 "block iteration variable %%%s must be bound to an integer, got %s", it->var->name,
                 dtype_name(t));
  }
}

static void verify_store(TV *v, const Stmt *s) {
  const Buffer *b = s->u.store.buf;
  check_indices(v, b, s->u.store.n, s->u.store.idx, s->span, "store");
  DType t = pexpr(v, s->u.store.value);
  if (t != DT_INVALID && t != b->dtype)
    diag_error(v->d, s->u.store.value->span, "store of %s value into %s buffer %%%s", dtype_name(t),
               dtype_name(b->dtype), b->name);
}

static void verify_let(TV *v, const Stmt *s) {
  DType t = pexpr(v, s->u.let.value);
  const TirVar *x = s->u.let.var;
  if (t != DT_INVALID && x->dtype != t && !(dtype_is_int(t) && dtype_is_int(x->dtype)))
    diag_error(v->d, s->span, "%%%s has type %s but its value has type %s", x->name,
               dtype_name(x->dtype), dtype_name(t));
  vec_push(&v->vars, (void *)x);
}

/* A statement's own rule: its expressions, and what it declares for the
 * rest of the enclosing statement list (an alloc's buffer, a let's
 * variable). */
static void verify_own(TV *v, const Stmt *s) {
  switch (s->kind) {
    case ST_SEQ:
      return;
    case ST_FOR:
      verify_for_bounds(v, s);
      return;
    case ST_BLOCK:
      verify_bindings(v, s);
      return;
    case ST_STORE:
      verify_store(v, s);
      return;
    case ST_ALLOC:
      vec_push(&v->bufs, s->u.alloc);
      return;
    case ST_LET:
      verify_let(v, s);
      return;
    case ST_IF:
      expect_dtype(v, s->u.if_.cond, true, "if condition");
      return;
  }
}

static void push_scoped(void *ctx, TirVar *x) {
  TV *v = ctx;
  vec_push(&v->vars, x);
}

static void push_loop_var(void *ctx, TirVar *x) {
  TV *v = ctx;
  vec_push(&v->vars, x);
  vec_push(&v->loopvars, x);
}

static void sub_stmt(void *ctx, Stmt *s) { stmt(ctx, s); }

/* Verifies one statement, then its sub-statements (ir/walk.h).  A
 * statement list, a loop and a block are scopes: loop and block variables
 * are visible in their bodies, allocs and lets in the rest of their list,
 * and none of them after the scope. */
static void stmt(TV *v, const Stmt *s) {
  if (!s) return;
  verify_own(v, s);
  size_t nb = v->bufs.len, nv = v->vars.len, nl = v->loopvars.len;
  if (s->kind == ST_FOR) stmt_binders(s, push_loop_var, v);
  if (s->kind == ST_BLOCK) stmt_binders(s, push_scoped, v);
  TirChildFns f = {NULL, sub_stmt, v};
  stmt_each_child(s, &f);
  if (s->kind == ST_SEQ || s->kind == ST_FOR || s->kind == ST_BLOCK)
    v->bufs.len = nb, v->vars.len = nv, v->loopvars.len = nl;
}

bool tir_verify(const Module *m, const PrimFunc *f, DiagCtx *d) {
  (void)m;
  size_t errors = d->nerrors;
  TV v = {.f = f, .d = d};
  for (int i = 0; i < f->nparams; i++) vec_push(&v.bufs, f->params[i]);
  stmt(&v, f->body);
  vec_free(&v.bufs), vec_free(&v.vars), vec_free(&v.loopvars);
  return d->nerrors == errors;
}
