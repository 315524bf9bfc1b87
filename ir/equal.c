/* equal.c — structural equality (alpha-equivalence) and hashing of types,
 * expressions, functions, modules and prim functions.
 *
 * Invariants:
 * - Bound variables (let, params, patterns, free_var; TIR loop, block, let
 *   variables and buffers) are equal when bound at corresponding places: a
 *   two-way var→var map records each pair at its binder.  Unbound variables
 *   compare by identity.  Names, spans, is_graph and Expr.ty are ignored;
 *   constants compare bitwise (tensor_equal); attributes by key and value in
 *   order; constructors and ADTs by name.
 * - Hashes agree with equality: a bound variable hashes as its binding
 *   depth (de Bruijn level), a free one as its id, type parameters as their
 *   position in the enclosing binder list.
 * - Let chains are walked by loops; recursion follows nesting only.  Shared
 *   subterms (DAGs) are memoized so comparing or hashing them is linear.
 * - Children and binders come from ir/walk.h: per kind, only a node's own
 *   data (the shallow_* functions) is compared and hashed here, and a node's
 *   binders are bound before its children are compared. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir.h"
#include "ir/util.h"
#include "ir/walk.h"

/* ─────────────────────────── equality context ─────────────────────────── */

typedef struct Eq {
  PtrMap ab, ba; /* binder pairs, both directions (vars, TIR vars, buffers) */
  PtrMap memo;   /* a node → the node it was proven equal to */
  PtrVec ta, tb; /* type parameter names in scope, paired by position */
  PtrVec va, vb; /* scratch: one node's binders (binders_eq) */
} Eq;

static void eq_free(Eq *q) {
  ptrmap_free(&q->ab);
  ptrmap_free(&q->ba);
  ptrmap_free(&q->memo);
  vec_free(&q->ta);
  vec_free(&q->tb);
  vec_free(&q->va);
  vec_free(&q->vb);
}

static void bind_pair(Eq *q, const void *a, const void *b) {
  *ptrmap_slot(&q->ab, a) = (uint64_t)(uintptr_t)b;
  *ptrmap_slot(&q->ba, b) = (uint64_t)(uintptr_t)a;
}

/* A use: paired binders, or the same unbound object. */
static bool use_eq(const Eq *q, const void *a, const void *b) {
  const uint64_t *pa = ptrmap_find(&q->ab, a);
  if (pa) return (const void *)(uintptr_t)*pa == b;
  return !ptrmap_find(&q->ba, b) && a == b;
}

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* ─────────────────────────────── types ─────────────────────────────── */

static bool tvar_eq(const Eq *q, const char *a, const char *b) {
  for (size_t i = q->ta.len; i-- > 0;) {
    bool ma = strcmp(q->ta.items[i], a) == 0, mb = strcmp(q->tb.items[i], b) == 0;
    if (ma || mb) return ma && mb;
  }
  return strcmp(a, b) == 0;
}

static void push_tparams(Eq *q, int n, const char *const *a, const char *const *b) {
  for (int i = 0; i < n; i++) vec_push(&q->ta, (void *)a[i]), vec_push(&q->tb, (void *)b[i]);
}

static void pop_tparams(Eq *q, int n) { q->ta.len -= (size_t)n, q->tb.len -= (size_t)n; }

static bool dim_eq(Dim a, Dim b) {
  if (a.kind != b.kind) return false;
  if (a.kind == DIM_VAR) return str_eq(a.name, b.name);
  return a.kind == DIM_ANY || a.value == b.value;
}

static bool ty_eq(Eq *q, const Type *a, const Type *b);

static bool tys_eq(Eq *q, int n, Type *const *a, Type *const *b) {
  for (int i = 0; i < n; i++)
    if (!ty_eq(q, a[i], b[i])) return false;
  return true;
}

static bool ty_func_eq(Eq *q, const Type *a, const Type *b) {
  int n = a->u.func.ntparams;
  if (n != b->u.func.ntparams || a->u.func.nparams != b->u.func.nparams) return false;
  push_tparams(q, n, a->u.func.tparams, b->u.func.tparams);
  bool ok = tys_eq(q, a->u.func.nparams, a->u.func.params, b->u.func.params) &&
            ty_eq(q, a->u.func.ret, b->u.func.ret);
  pop_tparams(q, n);
  return ok;
}

/* Structural type equality.  Type parameters compare by their position in
 * the enclosing binders (tvar_eq), so `fn [A](A) -> A` equals `fn [B](B) -> B`;
 * incomplete types are equal only when they are the same hole. */
static bool ty_eq(Eq *q, const Type *a, const Type *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TY_TENSOR:
      if (a->u.tensor.dtype != b->u.tensor.dtype || a->u.tensor.ndim != b->u.tensor.ndim)
        return false;
      for (int i = 0; i < a->u.tensor.ndim; i++)
        if (!dim_eq(a->u.tensor.dims[i], b->u.tensor.dims[i])) return false;
      return true;
    case TY_TUPLE:
      return a->u.tuple.n == b->u.tuple.n &&
             tys_eq(q, a->u.tuple.n, a->u.tuple.fields, b->u.tuple.fields);
    case TY_FUNC:
      return ty_func_eq(q, a, b);
    case TY_VAR:
      return tvar_eq(q, a->u.var.name, b->u.var.name);
    case TY_ADT:
      return str_eq(a->u.adt.name, b->u.adt.name) && a->u.adt.nargs == b->u.adt.nargs &&
             tys_eq(q, a->u.adt.nargs, a->u.adt.args, b->u.adt.args);
    case TY_REF:
      return ty_eq(q, a->u.ref.inner, b->u.ref.inner);
    case TY_RANDSTATE:
      return true;
    case TY_INCOMPLETE:
      return a->u.incomplete.id == b->u.incomplete.id;
  }
  return false;
}

bool type_equal(const Type *a, const Type *b) {
  Eq q = {0};
  bool ok = ty_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

/* ──────────────────────────── attributes ──────────────────────────── */

static bool expr_eq(Eq *q, const Expr *a, const Expr *b);

/* Attribute values: same kind and dtype, floats bit for bit (so a NaN
 * equals itself and 0.0 differs from -0.0, like constants). */
static bool attr_eq(Eq *q, const AttrValue *a, const AttrValue *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case AV_INT:
      return a->u.i == b->u.i && a->dtype == b->dtype;
    case AV_FLOAT:
      return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0 && a->dtype == b->dtype;
    case AV_BOOL:
      return a->u.b == b->u.b;
    case AV_STR:
    case AV_SYM:
      return str_eq(a->u.s, b->u.s);
    case AV_LIST:
      if (a->u.list.n != b->u.list.n) return false;
      for (int i = 0; i < a->u.list.n; i++)
        if (!attr_eq(q, a->u.list.items[i], b->u.list.items[i])) return false;
      return true;
    case AV_NONE:
      return true;
    case AV_EXPR:
      return expr_eq(q, a->u.expr, b->u.expr);
  }
  return false;
}

static bool attrs_eq(Eq *q, const Attrs *a, const Attrs *b) {
  int na = a ? a->n : 0, nb = b ? b->n : 0;
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (strcmp(a->keys[i], b->keys[i]) != 0 || !attr_eq(q, a->vals[i], b->vals[i])) return false;
  return true;
}

/* ─────────────────────────── expressions ─────────────────────────── */

/* Children and binders come from ir/walk.h; a node is equal when its own
 * data (shallow_eq), its binders (paired) and its children are. */

static bool bind_var(Eq *q, const Var *a, const Var *b) {
  if (!ty_eq(q, a->annot, b->annot)) return false;
  bind_pair(q, a, b);
  return true;
}

static const char *ctor_name(const AdtDef *adt, int index) {
  return adt ? adt->ctors[index].name : NULL;
}

/* A pattern's shape (its variables are the match's binders). */
static bool pat_eq(const Pattern *a, const Pattern *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case PAT_WILD:
    case PAT_VAR:
      return true;
    case PAT_CTOR:
      if (!str_eq(ctor_name(a->u.ctor.adt, a->u.ctor.index),
                  ctor_name(b->u.ctor.adt, b->u.ctor.index)) ||
          a->u.ctor.n != b->u.ctor.n)
        return false;
      for (int i = 0; i < a->u.ctor.n; i++)
        if (!pat_eq(a->u.ctor.sub[i], b->u.ctor.sub[i])) return false;
      return true;
    case PAT_TUPLE:
      if (a->u.tuple.n != b->u.tuple.n) return false;
      for (int i = 0; i < a->u.tuple.n; i++)
        if (!pat_eq(a->u.tuple.sub[i], b->u.tuple.sub[i])) return false;
      return true;
  }
  return false;
}

static bool match_head_eq(const Expr *a, const Expr *b) {
  if (a->u.match.partial != b->u.match.partial || a->u.match.n != b->u.match.n) return false;
  for (int i = 0; i < a->u.match.n; i++)
    if (!pat_eq(a->u.match.clauses[i].pat, b->u.match.clauses[i].pat)) return false;
  return true;
}

static bool fn_head_eq(Eq *q, const Function *a, const Function *b) {
  return a->nparams == b->nparams && ty_eq(q, a->ret, b->ret) && attrs_eq(q, a->attrs, b->attrs);
}

/* What a node holds besides its children and binders.  A kind whose data
 * is all children and binders needs no case. */
static bool shallow_eq(Eq *q, const Expr *a, const Expr *b) {
  switch (a->kind) {
    case EX_CONST:
      return tensor_equal(a->u.konst.value, b->u.konst.value);
    case EX_VAR:
      return use_eq(q, a->u.var, b->u.var);
    case EX_GLOBAL:
      return str_eq(a->u.global.name, b->u.global.name);
    case EX_OP:
      return str_eq(a->u.op.name, b->u.op.name);
    case EX_CTOR:
      return str_eq(ctor_name(a->u.ctor.adt, a->u.ctor.index),
                    ctor_name(b->u.ctor.adt, b->u.ctor.index));
    case EX_CALL:
      return a->u.call.nargs == b->u.call.nargs && attrs_eq(q, a->u.call.attrs, b->u.call.attrs);
    case EX_TUPLE:
      return a->u.tuple.n == b->u.tuple.n;
    case EX_PROJ:
      return a->u.proj.index == b->u.proj.index;
    case EX_FN:
      return fn_head_eq(q, a->u.fn, b->u.fn);
    case EX_MATCH:
      return match_head_eq(a, b);
    default:
      return true;
  }
}

/* The type parameters a node binds for its parts: a function's `[A, B]`. */
static int tparams_of(const Expr *e, const char *const **names) {
  if (e->kind != EX_FN) return 0;
  *names = e->u.fn->tparams;
  return e->u.fn->ntparams;
}

static void collect_var(void *ctx, Var *v) { vec_push(ctx, v); }

/* The binders of a and b paired in order (their annotations must agree). */
static bool binders_eq(Eq *q, const Expr *a, const Expr *b) {
  q->va.len = q->vb.len = 0;
  expr_binders(a, -1, collect_var, &q->va);
  expr_binders(b, -1, collect_var, &q->vb);
  if (q->va.len != q->vb.len) return false;
  for (size_t i = 0; i < q->va.len; i++)
    if (!bind_var(q, q->va.items[i], q->vb.items[i])) return false;
  return true;
}

/* Own data, binders (bound before any child: a let may be recursive) and
 * the first n children. */
static bool parts_eq(Eq *q, const Expr *a, const Expr *b, int n) {
  if (!shallow_eq(q, a, b) || !binders_eq(q, a, b)) return false;
  for (int i = 0; i < n; i++)
    if (!expr_eq(q, expr_child(a, i), expr_child(b, i))) return false;
  return true;
}

/* A node that is not a link of a let chain, under its type parameters. */
static bool node_eq(Eq *q, const Expr *a, const Expr *b) {
  const char *const *ta = NULL, *const *tb = NULL;
  int nt = tparams_of(a, &ta), n = expr_nchildren(a);
  if (nt != tparams_of(b, &tb) || n != expr_nchildren(b)) return false;
  push_tparams(q, nt, ta, tb);
  bool ok = parts_eq(q, a, b, n);
  pop_tparams(q, nt);
  return ok;
}

/* A Function outside an expression, as the EX_FN node that would hold it. */
static bool fn_eq(Eq *q, const Function *a, const Function *b) {
  Expr ea = {.kind = EX_FN, .u.fn = (Function *)a}, eb = {.kind = EX_FN, .u.fn = (Function *)b};
  return node_eq(q, &ea, &eb);
}

static bool memo_leaf(const Expr *e) {
  return e->kind == EX_CONST || e->kind == EX_VAR || e->kind == EX_GLOBAL || e->kind == EX_OP ||
         e->kind == EX_CTOR;
}

/* A pair already proven equal is not compared again. */
static bool memo_eq(Eq *q, const Expr *a, const Expr *b) {
  if (memo_leaf(a)) return node_eq(q, a, b);
  const uint64_t *m = ptrmap_find(&q->memo, a);
  if (m && (const Expr *)(uintptr_t)*m == b) return true;
  if (!node_eq(q, a, b)) return false;
  *ptrmap_slot(&q->memo, a) = (uint64_t)(uintptr_t)b;
  return true;
}

/* A let chain is a loop: each link's parts, then on to the rest. */
static bool expr_eq(Eq *q, const Expr *a, const Expr *b) {
  for (;;) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    const Expr *rest = expr_rest(a);
    if (!rest) return memo_eq(q, a, b);
    if (!parts_eq(q, a, b, expr_nchildren(a) - 1)) return false;
    a = rest, b = expr_rest(b);
  }
}

bool expr_equal(const Expr *a, const Expr *b) {
  Eq q = {0};
  bool ok = expr_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

bool func_equal(const Function *a, const Function *b) {
  if (!a || !b) return a == b;
  Eq q = {0};
  bool ok = fn_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

/* ──────────────────────────────── TIR ──────────────────────────────── */

static bool buf_shape_eq(const Buffer *a, const Buffer *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (!dim_eq(a->dims[i], b->dims[i])) return false;
  return true;
}

static bool bind_buf(Eq *q, const Buffer *a, const Buffer *b) {
  if (!buf_shape_eq(a, b)) return false;
  bind_pair(q, a, b);
  return true;
}

static bool bind_tvar(Eq *q, const TirVar *a, const TirVar *b) {
  if (a->dtype != b->dtype || a->is_size != b->is_size) return false;
  bind_pair(q, a, b);
  return true;
}

/* TIR as Relay: a node's own data (the shallow functions), then its
 * children and binders from ir/walk.h.  A begin of 0 equals an absent one,
 * whatever its dtype (stmt_children gives tir_for_lo's view). */

static bool pe_shallow_eq(const Eq *q, const PrimExpr *a, const PrimExpr *b) {
  switch (a->kind) {
    case PE_INT:
      return a->u.i == b->u.i;
    case PE_FLOAT:
      return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
    case PE_VAR:
      return use_eq(q, a->u.var, b->u.var);
    case PE_LOAD:
      return a->u.load.n == b->u.load.n && use_eq(q, a->u.load.buf, b->u.load.buf);
    case PE_BIN:
      return a->u.bin.op == b->u.bin.op;
    case PE_CALL:
      return a->u.call.fn == b->u.call.fn && a->u.call.n == b->u.call.n;
    case PE_CAST:
      return a->u.cast.to == b->u.cast.to && a->u.cast.bits == b->u.cast.bits;
    default:
      return true;
  }
}

static bool pe_eq(Eq *q, const PrimExpr *a, const PrimExpr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->dtype != b->dtype || !pe_shallow_eq(q, a, b)) return false;
  PrimExpr *ta[2], *tb[2];
  int na, nb;
  PrimExpr *const *ka = prim_expr_children(a, ta, &na), *const *kb = prim_expr_children(b, tb, &nb);
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!pe_eq(q, ka[i], kb[i])) return false;
  return true;
}

static bool block_head_eq(const Stmt *a, const Stmt *b) {
  int n = a->u.block.niters;
  if (!str_eq(a->u.block.name, b->u.block.name) || n != b->u.block.niters) return false;
  for (int i = 0; i < n; i++)
    if (a->u.block.iters[i].reduce != b->u.block.iters[i].reduce) return false;
  return true;
}

static bool st_shallow_eq(Eq *q, const Stmt *a, const Stmt *b) {
  switch (a->kind) {
    case ST_SEQ:
      return a->u.seq.n == b->u.seq.n;
    case ST_FOR:
      return a->u.for_.loop == b->u.for_.loop && a->u.for_.nvars == b->u.for_.nvars;
    case ST_BLOCK:
      return block_head_eq(a, b);
    case ST_STORE:
      return a->u.store.n == b->u.store.n && use_eq(q, a->u.store.buf, b->u.store.buf);
    case ST_ALLOC:
      return bind_buf(q, a->u.alloc, b->u.alloc);
    default:
      return true;
  }
}

/* A statement's expressions, binders and sub-statements. */
typedef struct StParts {
  PtrVec exprs, vars, stmts;
} StParts;

static void collect_tvar(void *ctx, TirVar *v) { vec_push(ctx, v); }

static StParts st_parts(const Stmt *s) {
  StParts p = {0};
  stmt_children(s, &p.exprs, &p.stmts);
  stmt_binders(s, collect_tvar, &p.vars);
  return p;
}

static void st_parts_free(StParts *p) {
  vec_free(&p->exprs);
  vec_free(&p->vars);
  vec_free(&p->stmts);
}

static bool st_eq(Eq *q, const Stmt *a, const Stmt *b);

/* Expressions first, then the binders they do not see, then the
 * statements that see them. */
static bool st_parts_eq(Eq *q, const StParts *a, const StParts *b) {
  if (a->exprs.len != b->exprs.len || a->vars.len != b->vars.len || a->stmts.len != b->stmts.len)
    return false;
  for (size_t i = 0; i < a->exprs.len; i++)
    if (!pe_eq(q, a->exprs.items[i], b->exprs.items[i])) return false;
  for (size_t i = 0; i < a->vars.len; i++)
    if (!bind_tvar(q, a->vars.items[i], b->vars.items[i])) return false;
  for (size_t i = 0; i < a->stmts.len; i++)
    if (!st_eq(q, a->stmts.items[i], b->stmts.items[i])) return false;
  return true;
}

static bool st_eq(Eq *q, const Stmt *a, const Stmt *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || !st_shallow_eq(q, a, b)) return false;
  StParts pa = st_parts(a), pb = st_parts(b);
  bool ok = st_parts_eq(q, &pa, &pb);
  st_parts_free(&pa);
  st_parts_free(&pb);
  return ok;
}

static bool prim_eq(Eq *q, const PrimFunc *a, const PrimFunc *b) {
  if (a->nparams != b->nparams || a->nsizevars != b->nsizevars) return false;
  for (int i = 0; i < a->nsizevars; i++)
    if (!str_eq(a->sizevars[i]->name, b->sizevars[i]->name) ||
        !bind_tvar(q, a->sizevars[i], b->sizevars[i]))
      return false;
  for (int i = 0; i < a->nparams; i++)
    if (!bind_buf(q, a->params[i], b->params[i])) return false;
  return attrs_eq(q, a->attrs, b->attrs) && st_eq(q, a->body, b->body);
}

bool prim_func_equal(const PrimFunc *a, const PrimFunc *b) {
  if (!a || !b) return a == b;
  Eq q = {0};
  bool ok = prim_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

/* ────────────────────────────── modules ────────────────────────────── */

static bool adt_eq(Eq *q, const AdtDef *a, const AdtDef *b) {
  int nt = a->ntparams;
  if (!str_eq(a->name, b->name) || nt != b->ntparams || a->nctors != b->nctors ||
      a->is_extern != b->is_extern)
    return false;
  push_tparams(q, nt, a->tparams, b->tparams);
  bool ok = true;
  for (int i = 0; ok && i < a->nctors; i++) {
    const CtorDef *ca = &a->ctors[i], *cb = &b->ctors[i];
    ok = str_eq(ca->name, cb->name) && ca->nfields == cb->nfields &&
         tys_eq(q, ca->nfields, ca->fields, cb->fields);
  }
  pop_tparams(q, nt);
  return ok;
}

static bool def_eq(const Def *a, const Def *b) {
  if (a->kind != b->kind) return false;
  Eq q = {0};
  bool ok = false;
  switch (a->kind) {
    case DEF_FUNC:
      ok = fn_eq(&q, a->u.func->fn, b->u.func->fn);
      break;
    case DEF_ADT:
      ok = adt_eq(&q, a->u.adt, b->u.adt);
      break;
    case DEF_GLOBAL:
      ok = a->u.global->builtin == b->u.global->builtin &&
           ty_eq(&q, a->u.global->type, b->u.global->type) &&
           expr_eq(&q, a->u.global->init, b->u.global->init);
      break;
    case DEF_PRIM:
      ok = prim_eq(&q, a->u.prim, b->u.prim);
      break;
  }
  eq_free(&q);
  return ok;
}

/* b's definition with the name of a's, as a Def (ADTs have their own table). */
static bool module_find_def(const Module *m, const Def *like, Def *out) {
  const char *name = def_name(like);
  if (like->kind == DEF_ADT) {
    out->kind = DEF_ADT, out->u.adt = module_adt(m, name);
    return out->u.adt != NULL;
  }
  const Def *d = module_lookup(m, name);
  if (d) *out = *d;
  return d != NULL;
}

/* The same definitions by name, in any order. */
bool module_equal(const Module *a, const Module *b) {
  if (a->ndefs != b->ndefs) return false;
  for (int i = 0; i < a->ndefs; i++) {
    Def db;
    if (!module_find_def(b, &a->defs[i], &db) || !def_eq(&a->defs[i], &db)) return false;
  }
  return true;
}

/* ─────────────────────────────── hashing ─────────────────────────────── */

typedef struct MemoHash {
  uint64_t depth, hash;
} MemoHash;

typedef struct Hs {
  PtrMap level;   /* binder → its level + 1 */
  uint64_t depth; /* binders in scope */
  PtrMap memo;    /* node → index + 1 into memos */
  MemoHash *memos;
  size_t nmemos, capmemos;
  PtrVec tparams;
} Hs;

static void hs_free(Hs *h) {
  ptrmap_free(&h->level);
  ptrmap_free(&h->memo);
  free(h->memos);
  vec_free(&h->tparams);
}

static uint64_t str_hash(const char *s) { return s ? hash_bytes(s, strlen(s), 7) : 0; }

static void hs_bind(Hs *h, const void *v) { *ptrmap_slot(&h->level, v) = ++h->depth; }

static uint64_t hs_use(const Hs *h, const void *v, uint64_t id) {
  const uint64_t *l = ptrmap_find(&h->level, v);
  return l ? hash_mix(0xb0, *l) : hash_mix(0xf4, id);
}

static uint64_t dim_hash(Dim d) {
  uint64_t h = hash_mix(0xd1, (uint64_t)d.kind);
  if (d.kind == DIM_VAR) return hash_mix(h, str_hash(d.name));
  return d.kind == DIM_ANY ? h : hash_mix(h, (uint64_t)d.value);
}

static uint64_t ty_hash(Hs *h, const Type *t);

static uint64_t tys_hash(Hs *h, uint64_t acc, int n, Type *const *ts) {
  for (int i = 0; i < n; i++) acc = hash_mix(acc, ty_hash(h, ts[i]));
  return acc;
}

static void hs_push_tparams(Hs *h, int n, const char *const *names) {
  for (int i = 0; i < n; i++) vec_push(&h->tparams, (void *)names[i]);
}

static uint64_t tvar_hash(const Hs *h, const char *name) {
  for (size_t i = h->tparams.len; i-- > 0;)
    if (strcmp(h->tparams.items[i], name) == 0) return hash_mix(0x7a, h->tparams.len - i);
  return hash_mix(0x7b, str_hash(name));
}

/* The hash that matches ty_eq: type parameters hash by position, pushed
 * and popped around a function type exactly as ty_eq binds them. */
static uint64_t ty_hash(Hs *h, const Type *t) {
  if (!t) return 0x11;
  uint64_t acc = hash_mix(0x77, (uint64_t)t->kind);
  switch (t->kind) {
    case TY_TENSOR:
      acc = hash_mix(acc, (uint64_t)t->u.tensor.dtype);
      for (int i = 0; i < t->u.tensor.ndim; i++) acc = hash_mix(acc, dim_hash(t->u.tensor.dims[i]));
      return hash_mix(acc, (uint64_t)t->u.tensor.ndim);
    case TY_TUPLE:
      return tys_hash(h, hash_mix(acc, (uint64_t)t->u.tuple.n), t->u.tuple.n, t->u.tuple.fields);
    case TY_FUNC:
      hs_push_tparams(h, t->u.func.ntparams, t->u.func.tparams);
      acc = hash_mix(acc, (uint64_t)t->u.func.ntparams);
      acc = tys_hash(h, hash_mix(acc, (uint64_t)t->u.func.nparams), t->u.func.nparams,
                     t->u.func.params);
      acc = hash_mix(acc, ty_hash(h, t->u.func.ret));
      h->tparams.len -= (size_t)t->u.func.ntparams;
      return acc;
    case TY_VAR:
      return hash_mix(acc, tvar_hash(h, t->u.var.name));
    case TY_ADT:
      acc = hash_mix(acc, str_hash(t->u.adt.name));
      return tys_hash(h, hash_mix(acc, (uint64_t)t->u.adt.nargs), t->u.adt.nargs, t->u.adt.args);
    case TY_REF:
      return hash_mix(acc, ty_hash(h, t->u.ref.inner));
    case TY_RANDSTATE:
      return acc;
    case TY_INCOMPLETE:
      return hash_mix(acc, (uint64_t)t->u.incomplete.id);
  }
  return acc;
}

uint64_t type_hash(const Type *t) {
  Hs h = {0};
  uint64_t r = ty_hash(&h, t);
  hs_free(&h);
  return r;
}

static uint64_t ex_hash(Hs *h, const Expr *e);

static uint64_t attr_hash(Hs *h, const AttrValue *v) {
  uint64_t acc = hash_mix(0xa7, (uint64_t)v->kind);
  switch (v->kind) {
    case AV_INT:
      return hash_mix(hash_mix(acc, (uint64_t)v->u.i), (uint64_t)v->dtype);
    case AV_FLOAT:
      return hash_mix(hash_bytes(&v->u.f, sizeof(double), acc), (uint64_t)v->dtype);
    case AV_BOOL:
      return hash_mix(acc, v->u.b);
    case AV_STR:
    case AV_SYM:
      return hash_mix(acc, str_hash(v->u.s));
    case AV_LIST:
      for (int i = 0; i < v->u.list.n; i++) acc = hash_mix(acc, attr_hash(h, v->u.list.items[i]));
      return hash_mix(acc, (uint64_t)v->u.list.n);
    case AV_NONE:
      return acc;
    case AV_EXPR:
      return hash_mix(acc, ex_hash(h, v->u.expr));
  }
  return acc;
}

static uint64_t attrs_hash(Hs *h, const Attrs *at) {
  uint64_t acc = 0xa5;
  for (int i = 0; at && i < at->n; i++)
    acc = hash_mix(hash_mix(acc, str_hash(at->keys[i])), attr_hash(h, at->vals[i]));
  return acc;
}

static uint64_t binder_hash(Hs *h, const Var *v) {
  hs_bind(h, v);
  return ty_hash(h, v->annot);
}

/* A pattern's shape, as pat_eq compares it. */
static uint64_t pat_hash(const Pattern *p) {
  uint64_t acc = hash_mix(0x9a, (uint64_t)p->kind);
  switch (p->kind) {
    case PAT_WILD:
    case PAT_VAR:
      return acc;
    case PAT_CTOR:
      acc = hash_mix(acc, str_hash(ctor_name(p->u.ctor.adt, p->u.ctor.index)));
      for (int i = 0; i < p->u.ctor.n; i++) acc = hash_mix(acc, pat_hash(p->u.ctor.sub[i]));
      return hash_mix(acc, (uint64_t)p->u.ctor.n);
    case PAT_TUPLE:
      for (int i = 0; i < p->u.tuple.n; i++) acc = hash_mix(acc, pat_hash(p->u.tuple.sub[i]));
      return hash_mix(acc, (uint64_t)p->u.tuple.n);
  }
  return acc;
}

static uint64_t match_head_hash(const Expr *e) {
  uint64_t acc = hash_mix(0x3a, e->u.match.partial);
  for (int i = 0; i < e->u.match.n; i++) acc = hash_mix(acc, pat_hash(e->u.match.clauses[i].pat));
  return hash_mix(acc, (uint64_t)e->u.match.n);
}

static uint64_t fn_head_hash(Hs *h, const Function *f) {
  uint64_t acc = hash_mix(hash_mix(0xf0, (uint64_t)f->nparams), (uint64_t)f->ntparams);
  return hash_mix(hash_mix(acc, ty_hash(h, f->ret)), attrs_hash(h, f->attrs));
}

/* As shallow_eq. */
static uint64_t shallow_hash(Hs *h, const Expr *e) {
  switch (e->kind) {
    case EX_CONST:
      return tensor_hash(e->u.konst.value);
    case EX_VAR:
      return hs_use(h, e->u.var, e->u.var->id);
    case EX_GLOBAL:
      return str_hash(e->u.global.name);
    case EX_OP:
      return str_hash(e->u.op.name);
    case EX_CTOR:
      return str_hash(ctor_name(e->u.ctor.adt, e->u.ctor.index));
    case EX_CALL:
      return hash_mix((uint64_t)e->u.call.nargs, attrs_hash(h, e->u.call.attrs));
    case EX_TUPLE:
      return (uint64_t)e->u.tuple.n;
    case EX_PROJ:
      return (uint64_t)e->u.proj.index;
    case EX_FN:
      return fn_head_hash(h, e->u.fn);
    case EX_MATCH:
      return match_head_hash(e);
    default:
      return 0;
  }
}

typedef struct BindHash {
  Hs *h;
  uint64_t acc;
} BindHash;

static void bind_hash(void *ctx, Var *v) {
  BindHash *b = ctx;
  b->acc = hash_mix(b->acc, binder_hash(b->h, v));
}

/* As parts_eq: own data, binders, the first n children. */
static uint64_t parts_hash(Hs *h, const Expr *e, int n, uint64_t acc) {
  BindHash bh = {h, hash_mix(acc, shallow_hash(h, e))};
  expr_binders(e, -1, bind_hash, &bh);
  acc = bh.acc;
  for (int i = 0; i < n; i++) acc = hash_mix(acc, ex_hash(h, expr_child(e, i)));
  return acc;
}

/* As node_eq; the node's binders go out of scope after it. */
static uint64_t node_hash(Hs *h, const Expr *e) {
  uint64_t depth = h->depth;
  const char *const *names = NULL;
  int nt = tparams_of(e, &names), n = expr_nchildren(e);
  hs_push_tparams(h, nt, names);
  uint64_t acc = parts_hash(h, e, n, hash_mix(0xe0, (uint64_t)e->kind));
  h->tparams.len -= (size_t)nt;
  h->depth = depth;
  return hash_mix(acc, (uint64_t)n);
}

static uint64_t fn_hash(Hs *h, const Function *f) {
  Expr ef = {.kind = EX_FN, .u.fn = (Function *)f};
  return node_hash(h, &ef);
}

/* A node's hash depends only on it and the binding depth where it sits,
 * so a shared node is hashed once per depth. */
static uint64_t memo_node_hash(Hs *h, const Expr *e) {
  if (memo_leaf(e)) return node_hash(h, e);
  uint64_t *slot = ptrmap_find(&h->memo, e);
  if (slot && h->memos[*slot - 1].depth == h->depth) return h->memos[*slot - 1].hash;
  uint64_t r = node_hash(h, e);
  if (!slot) {
    if (h->nmemos == h->capmemos) {
      h->capmemos = h->capmemos ? h->capmemos * 2 : 64;
      h->memos = realloc(h->memos, sizeof *h->memos * h->capmemos);
      if (!h->memos) rly_oom();
    }
    slot = ptrmap_slot(&h->memo, e);
    *slot = ++h->nmemos;
  }
  h->memos[*slot - 1].depth = h->depth, h->memos[*slot - 1].hash = r;
  return r;
}

/* A let chain is a loop, as in expr_eq; its binders go out of scope after it. */
static uint64_t ex_hash(Hs *h, const Expr *e) {
  uint64_t depth = h->depth, acc = 0x3c;
  for (;;) {
    if (!e) {
      acc = hash_mix(acc, 0x5e);
      break;
    }
    const Expr *rest = expr_rest(e);
    if (!rest) {
      acc = hash_mix(acc, memo_node_hash(h, e));
      break;
    }
    acc = parts_hash(h, e, expr_nchildren(e) - 1, hash_mix(acc, 0x1e70 + (uint64_t)e->kind));
    e = rest;
  }
  h->depth = depth;
  return acc;
}

uint64_t expr_hash(const Expr *e) {
  Hs h = {0};
  uint64_t r = ex_hash(&h, e);
  hs_free(&h);
  return r;
}

uint64_t func_hash(const Function *f) {
  if (!f) return 0;
  Hs h = {0};
  uint64_t r = fn_hash(&h, f);
  hs_free(&h);
  return r;
}

/* ──────────────────────────── TIR hashing ──────────────────────────── */

/* As pe_shallow_eq. */
static uint64_t pe_shallow_hash(const Hs *h, const PrimExpr *e) {
  switch (e->kind) {
    case PE_INT:
      return (uint64_t)e->u.i;
    case PE_FLOAT:
      return hash_bytes(&e->u.f, sizeof(double), 0xf1);
    case PE_VAR:
      return hs_use(h, e->u.var, e->u.var->id);
    case PE_LOAD:
      return hash_mix(hs_use(h, e->u.load.buf, e->u.load.buf->id), (uint64_t)e->u.load.n);
    case PE_BIN:
      return (uint64_t)e->u.bin.op;
    case PE_CALL:
      return hash_mix((uint64_t)e->u.call.fn, (uint64_t)e->u.call.n);
    case PE_CAST:
      return hash_mix((uint64_t)e->u.cast.to, (uint64_t)e->u.cast.bits);
    default:
      return 0;
  }
}

static uint64_t pe_hash(Hs *h, const PrimExpr *e) {
  if (!e) return 0x21;
  uint64_t acc = hash_mix(hash_mix(0x9e, (uint64_t)e->kind), (uint64_t)e->dtype);
  acc = hash_mix(acc, pe_shallow_hash(h, e));
  PrimExpr *tmp[2];
  int n;
  PrimExpr *const *kids = prim_expr_children(e, tmp, &n);
  for (int i = 0; i < n; i++) acc = hash_mix(acc, pe_hash(h, kids[i]));
  return hash_mix(acc, (uint64_t)n);
}

static uint64_t buf_hash(Hs *h, const Buffer *b) {
  uint64_t acc = hash_mix(0xbf, (uint64_t)b->dtype);
  for (int i = 0; i < b->ndim; i++) acc = hash_mix(acc, dim_hash(b->dims[i]));
  hs_bind(h, b);
  return hash_mix(acc, (uint64_t)b->ndim);
}

static uint64_t tvar_bind_hash(Hs *h, const TirVar *v) {
  hs_bind(h, v);
  return hash_mix(hash_mix(0x7f, (uint64_t)v->dtype), v->is_size);
}

static uint64_t block_head_hash(const Stmt *s) {
  uint64_t acc = str_hash(s->u.block.name);
  for (int i = 0; i < s->u.block.niters; i++) acc = hash_mix(acc, s->u.block.iters[i].reduce);
  return hash_mix(acc, (uint64_t)s->u.block.niters);
}

/* As st_shallow_eq (an alloc binds its buffer here). */
static uint64_t st_shallow_hash(Hs *h, const Stmt *s) {
  switch (s->kind) {
    case ST_SEQ:
      return (uint64_t)s->u.seq.n;
    case ST_FOR:
      return hash_mix((uint64_t)s->u.for_.loop, (uint64_t)s->u.for_.nvars);
    case ST_BLOCK:
      return block_head_hash(s);
    case ST_STORE:
      return hash_mix(hs_use(h, s->u.store.buf, s->u.store.buf->id), (uint64_t)s->u.store.n);
    case ST_ALLOC:
      return buf_hash(h, s->u.alloc);
    default:
      return 0;
  }
}

/* As st_eq: expressions, binders, sub-statements. */
static uint64_t st_hash(Hs *h, const Stmt *s) {
  if (!s) return 0x31;
  uint64_t acc = hash_mix(hash_mix(0x5b, (uint64_t)s->kind), st_shallow_hash(h, s));
  StParts p = st_parts(s);
  for (size_t i = 0; i < p.exprs.len; i++) acc = hash_mix(acc, pe_hash(h, p.exprs.items[i]));
  for (size_t i = 0; i < p.vars.len; i++) acc = hash_mix(acc, tvar_bind_hash(h, p.vars.items[i]));
  for (size_t i = 0; i < p.stmts.len; i++) acc = hash_mix(acc, st_hash(h, p.stmts.items[i]));
  st_parts_free(&p);
  return acc;
}

uint64_t prim_func_hash(const PrimFunc *f) {
  if (!f) return 0;
  Hs h = {0};
  uint64_t acc = hash_mix(0x99, (uint64_t)f->nparams);
  for (int i = 0; i < f->nsizevars; i++)
    acc =
        hash_mix(hash_mix(acc, str_hash(f->sizevars[i]->name)), tvar_bind_hash(&h, f->sizevars[i]));
  for (int i = 0; i < f->nparams; i++) acc = hash_mix(acc, buf_hash(&h, f->params[i]));
  acc = hash_mix(acc, attrs_hash(&h, f->attrs));
  acc = hash_mix(acc, st_hash(&h, f->body));
  hs_free(&h);
  return acc;
}
