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
 *   subterms (DAGs) are memoized so comparing or hashing them is linear. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir.h"

/* ───────────────────── a pointer-keyed hash map ───────────────────── */

typedef struct PtrMap {
  const void **keys;
  uint64_t *vals;
  size_t len, cap;
} PtrMap;

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  return (size_t)(x ^ (x >> 32));
}

static uint64_t *pm_find(const PtrMap *m, const void *k) {
  if (!m->cap) return NULL;
  for (size_t i = ptr_hash(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == k) return &m->vals[i];
  return NULL;
}

static void pm_grow(PtrMap *m) {
  PtrMap n = {0};
  n.cap = m->cap ? m->cap * 2 : 64;
  n.keys = calloc(n.cap, sizeof *n.keys);
  n.vals = calloc(n.cap, sizeof *n.vals);
  if (!n.keys || !n.vals) rly_oom();
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = ptr_hash(m->keys[i]) & (n.cap - 1);
    while (n.keys[j]) j = (j + 1) & (n.cap - 1);
    n.keys[j] = m->keys[i], n.vals[j] = m->vals[i];
  }
  n.len = m->len;
  free(m->keys);
  free(m->vals);
  *m = n;
}

static uint64_t *pm_slot(PtrMap *m, const void *k) {
  if ((m->len + 1) * 10 > m->cap * 7) pm_grow(m);
  size_t i = ptr_hash(k) & (m->cap - 1);
  for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == k) return &m->vals[i];
  m->keys[i] = k, m->len++;
  return &m->vals[i];
}

static void pm_free(PtrMap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ─────────────────────────── equality context ─────────────────────────── */

typedef struct Eq {
  PtrMap ab, ba;  /* binder pairs, both directions (vars, TIR vars, buffers) */
  PtrMap memo;    /* a node → the node it was proven equal to */
  PtrVec ta, tb;  /* type parameter names in scope, paired by position */
} Eq;

static void eq_free(Eq *q) {
  pm_free(&q->ab);
  pm_free(&q->ba);
  pm_free(&q->memo);
  vec_free(&q->ta);
  vec_free(&q->tb);
}

static void bind_pair(Eq *q, const void *a, const void *b) {
  *pm_slot(&q->ab, a) = (uint64_t)(uintptr_t)b;
  *pm_slot(&q->ba, b) = (uint64_t)(uintptr_t)a;
}

/* A use: paired binders, or the same unbound object. */
static bool use_eq(const Eq *q, const void *a, const void *b) {
  const uint64_t *pa = pm_find(&q->ab, a);
  if (pa) return (const void *)(uintptr_t)*pa == b;
  return !pm_find(&q->ba, b) && a == b;
}

static bool str_eq(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

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

static bool ty_eq(Eq *q, const Type *a, const Type *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case TY_TENSOR:
    if (a->u.tensor.dtype != b->u.tensor.dtype || a->u.tensor.ndim != b->u.tensor.ndim) return false;
    for (int i = 0; i < a->u.tensor.ndim; i++)
      if (!dim_eq(a->u.tensor.dims[i], b->u.tensor.dims[i])) return false;
    return true;
  case TY_TUPLE:
    return a->u.tuple.n == b->u.tuple.n && tys_eq(q, a->u.tuple.n, a->u.tuple.fields, b->u.tuple.fields);
  case TY_FUNC: return ty_func_eq(q, a, b);
  case TY_VAR: return tvar_eq(q, a->u.var.name, b->u.var.name);
  case TY_ADT:
    return str_eq(a->u.adt.name, b->u.adt.name) && a->u.adt.nargs == b->u.adt.nargs &&
           tys_eq(q, a->u.adt.nargs, a->u.adt.args, b->u.adt.args);
  case TY_REF: return ty_eq(q, a->u.ref.inner, b->u.ref.inner);
  case TY_RANDSTATE: return true;
  case TY_INCOMPLETE: return a->u.incomplete.id == b->u.incomplete.id;
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

static bool attr_eq(Eq *q, const AttrValue *a, const AttrValue *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case AV_INT: return a->u.i == b->u.i && a->dtype == b->dtype;
  case AV_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0 && a->dtype == b->dtype;
  case AV_BOOL: return a->u.b == b->u.b;
  case AV_STR:
  case AV_SYM: return str_eq(a->u.s, b->u.s);
  case AV_LIST:
    if (a->u.list.n != b->u.list.n) return false;
    for (int i = 0; i < a->u.list.n; i++)
      if (!attr_eq(q, a->u.list.items[i], b->u.list.items[i])) return false;
    return true;
  case AV_NONE: return true;
  case AV_EXPR: return expr_eq(q, a->u.expr, b->u.expr);
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

static bool bind_var(Eq *q, const Var *a, const Var *b) {
  if (!ty_eq(q, a->annot, b->annot)) return false;
  bind_pair(q, a, b);
  return true;
}

static bool exprs_eq(Eq *q, int n, Expr *const *a, Expr *const *b) {
  for (int i = 0; i < n; i++)
    if (!expr_eq(q, a[i], b[i])) return false;
  return true;
}

static const char *ctor_name(const AdtDef *adt, int index) {
  return adt ? adt->ctors[index].name : NULL;
}

static bool pat_eq(Eq *q, const Pattern *a, const Pattern *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case PAT_WILD: return true;
  case PAT_VAR: return bind_var(q, a->u.var, b->u.var);
  case PAT_CTOR:
    if (!str_eq(ctor_name(a->u.ctor.adt, a->u.ctor.index), ctor_name(b->u.ctor.adt, b->u.ctor.index)) ||
        a->u.ctor.n != b->u.ctor.n)
      return false;
    for (int i = 0; i < a->u.ctor.n; i++)
      if (!pat_eq(q, a->u.ctor.sub[i], b->u.ctor.sub[i])) return false;
    return true;
  case PAT_TUPLE:
    if (a->u.tuple.n != b->u.tuple.n) return false;
    for (int i = 0; i < a->u.tuple.n; i++)
      if (!pat_eq(q, a->u.tuple.sub[i], b->u.tuple.sub[i])) return false;
    return true;
  }
  return false;
}

static bool fn_eq(Eq *q, const Function *a, const Function *b) {
  int nt = a->ntparams;
  if (nt != b->ntparams || a->nparams != b->nparams) return false;
  push_tparams(q, nt, a->tparams, b->tparams);
  bool ok = true;
  for (int i = 0; ok && i < a->nparams; i++) ok = bind_var(q, a->params[i], b->params[i]);
  ok = ok && ty_eq(q, a->ret, b->ret) && attrs_eq(q, a->attrs, b->attrs) && expr_eq(q, a->body, b->body);
  pop_tparams(q, nt);
  return ok;
}

static bool match_eq(Eq *q, const Expr *a, const Expr *b) {
  if (a->u.match.partial != b->u.match.partial || a->u.match.n != b->u.match.n ||
      !expr_eq(q, a->u.match.scrut, b->u.match.scrut))
    return false;
  for (int i = 0; i < a->u.match.n; i++) {
    const MatchClause *ca = &a->u.match.clauses[i], *cb = &b->u.match.clauses[i];
    if (!pat_eq(q, ca->pat, cb->pat) || !expr_eq(q, ca->body, cb->body)) return false;
  }
  return true;
}

/* One node of a kind other than let / free_var. */
static bool node_eq(Eq *q, const Expr *a, const Expr *b) {
  switch (a->kind) {
  case EX_CONST: return tensor_equal(a->u.konst.value, b->u.konst.value);
  case EX_VAR: return use_eq(q, a->u.var, b->u.var);
  case EX_GLOBAL: return str_eq(a->u.global.name, b->u.global.name);
  case EX_OP: return str_eq(a->u.op.name, b->u.op.name);
  case EX_CTOR:
    return str_eq(ctor_name(a->u.ctor.adt, a->u.ctor.index), ctor_name(b->u.ctor.adt, b->u.ctor.index));
  case EX_CALL:
    return a->u.call.nargs == b->u.call.nargs && expr_eq(q, a->u.call.fn, b->u.call.fn) &&
           exprs_eq(q, a->u.call.nargs, a->u.call.args, b->u.call.args) &&
           attrs_eq(q, a->u.call.attrs, b->u.call.attrs);
  case EX_TUPLE:
    return a->u.tuple.n == b->u.tuple.n && exprs_eq(q, a->u.tuple.n, a->u.tuple.fields, b->u.tuple.fields);
  case EX_PROJ: return a->u.proj.index == b->u.proj.index && expr_eq(q, a->u.proj.tuple, b->u.proj.tuple);
  case EX_FN: return fn_eq(q, a->u.fn, b->u.fn);
  case EX_IF:
    return expr_eq(q, a->u.if_.cond, b->u.if_.cond) && expr_eq(q, a->u.if_.then_, b->u.if_.then_) &&
           expr_eq(q, a->u.if_.else_, b->u.if_.else_);
  case EX_MATCH: return match_eq(q, a, b);
  case EX_REF_NEW: return expr_eq(q, a->u.ref_new.init, b->u.ref_new.init);
  case EX_REF_READ: return expr_eq(q, a->u.ref_read.ref, b->u.ref_read.ref);
  case EX_REF_WRITE:
    return expr_eq(q, a->u.ref_write.ref, b->u.ref_write.ref) &&
           expr_eq(q, a->u.ref_write.value, b->u.ref_write.value);
  case EX_DATAFLOW: return expr_eq(q, a->u.dataflow.body, b->u.dataflow.body);
  case EX_LET:
  case EX_FREE_VAR: break;
  }
  RLY_UNREACHABLE();
}

static bool memo_leaf(const Expr *e) {
  return e->kind == EX_CONST || e->kind == EX_VAR || e->kind == EX_GLOBAL || e->kind == EX_OP ||
         e->kind == EX_CTOR;
}

/* The let chain is a loop; each let binds its var before its value (a let
 * may be recursive).  A pair already proven equal is not compared again. */
static bool expr_eq(Eq *q, const Expr *a, const Expr *b) {
  for (;;) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    if (a->kind == EX_LET) {
      if (!bind_var(q, a->u.let.var, b->u.let.var) || !expr_eq(q, a->u.let.value, b->u.let.value))
        return false;
      a = a->u.let.body, b = b->u.let.body;
    } else if (a->kind == EX_FREE_VAR) {
      if (!bind_var(q, a->u.free_var.var, b->u.free_var.var)) return false;
      a = a->u.free_var.body, b = b->u.free_var.body;
    } else {
      if (memo_leaf(a)) return node_eq(q, a, b);
      const uint64_t *m = pm_find(&q->memo, a);
      if (m && (const Expr *)(uintptr_t)*m == b) return true;
      if (!node_eq(q, a, b)) return false;
      *pm_slot(&q->memo, a) = (uint64_t)(uintptr_t)b;
      return true;
    }
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

static bool pe_eq(Eq *q, const PrimExpr *a, const PrimExpr *b);

static bool pes_eq(Eq *q, int n, PrimExpr *const *a, PrimExpr *const *b) {
  for (int i = 0; i < n; i++)
    if (!pe_eq(q, a[i], b[i])) return false;
  return true;
}

static bool pe_eq(Eq *q, const PrimExpr *a, const PrimExpr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
  case PE_INT: return a->u.i == b->u.i;
  case PE_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
  case PE_VAR: return use_eq(q, a->u.var, b->u.var);
  case PE_LOAD:
    return a->u.load.n == b->u.load.n && use_eq(q, a->u.load.buf, b->u.load.buf) &&
           pes_eq(q, a->u.load.n, a->u.load.idx, b->u.load.idx);
  case PE_BIN:
    return a->u.bin.op == b->u.bin.op && pe_eq(q, a->u.bin.a, b->u.bin.a) && pe_eq(q, a->u.bin.b, b->u.bin.b);
  case PE_NOT:
  case PE_NEG: return pe_eq(q, a->u.operand, b->u.operand);
  case PE_CALL:
    return a->u.call.fn == b->u.call.fn && a->u.call.n == b->u.call.n &&
           pes_eq(q, a->u.call.n, a->u.call.args, b->u.call.args);
  case PE_CAST: return a->u.cast.to == b->u.cast.to && pe_eq(q, a->u.cast.value, b->u.cast.value);
  }
  return false;
}

static bool st_eq(Eq *q, const Stmt *a, const Stmt *b);

static bool for_eq(Eq *q, const Stmt *a, const Stmt *b) {
  int n = a->u.for_.nvars;
  if (a->u.for_.loop != b->u.for_.loop || n != b->u.for_.nvars) return false;
  int nb = a->u.for_.loop == LOOP_RANGE ? 1 : n;
  for (int i = 0; i < nb; i++) {
    const PrimExpr *la = a->u.for_.lo ? a->u.for_.lo[i] : NULL, *lb = b->u.for_.lo ? b->u.for_.lo[i] : NULL;
    if (!pe_eq(q, la, lb) || !pe_eq(q, a->u.for_.hi[i], b->u.for_.hi[i])) return false;
  }
  for (int i = 0; i < n; i++)
    if (!bind_tvar(q, a->u.for_.vars[i], b->u.for_.vars[i])) return false;
  return st_eq(q, a->u.for_.body, b->u.for_.body);
}

static bool block_eq(Eq *q, const Stmt *a, const Stmt *b) {
  int n = a->u.block.niters;
  if (!str_eq(a->u.block.name, b->u.block.name) || n != b->u.block.niters) return false;
  for (int i = 0; i < n; i++) {
    const IterVar *ia = &a->u.block.iters[i], *ib = &b->u.block.iters[i];
    if (ia->reduce != ib->reduce || !pe_eq(q, ia->binding, ib->binding) || !bind_tvar(q, ia->var, ib->var))
      return false;
  }
  return st_eq(q, a->u.block.init, b->u.block.init) && st_eq(q, a->u.block.body, b->u.block.body);
}

static bool st_eq(Eq *q, const Stmt *a, const Stmt *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case ST_SEQ:
    if (a->u.seq.n != b->u.seq.n) return false;
    for (int i = 0; i < a->u.seq.n; i++)
      if (!st_eq(q, a->u.seq.items[i], b->u.seq.items[i])) return false;
    return true;
  case ST_FOR: return for_eq(q, a, b);
  case ST_BLOCK: return block_eq(q, a, b);
  case ST_STORE:
    return a->u.store.n == b->u.store.n && use_eq(q, a->u.store.buf, b->u.store.buf) &&
           pes_eq(q, a->u.store.n, a->u.store.idx, b->u.store.idx) &&
           pe_eq(q, a->u.store.value, b->u.store.value);
  case ST_ALLOC: return bind_buf(q, a->u.alloc, b->u.alloc);
  case ST_LET: return pe_eq(q, a->u.let.value, b->u.let.value) && bind_tvar(q, a->u.let.var, b->u.let.var);
  case ST_IF:
    return pe_eq(q, a->u.if_.cond, b->u.if_.cond) && st_eq(q, a->u.if_.then_, b->u.if_.then_) &&
           st_eq(q, a->u.if_.else_, b->u.if_.else_);
  }
  return false;
}

static bool prim_eq(Eq *q, const PrimFunc *a, const PrimFunc *b) {
  if (a->nparams != b->nparams || a->nsizevars != b->nsizevars) return false;
  for (int i = 0; i < a->nsizevars; i++)
    if (!str_eq(a->sizevars[i]->name, b->sizevars[i]->name) || !bind_tvar(q, a->sizevars[i], b->sizevars[i]))
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
  if (!str_eq(a->name, b->name) || nt != b->ntparams || a->nctors != b->nctors || a->is_extern != b->is_extern)
    return false;
  push_tparams(q, nt, a->tparams, b->tparams);
  bool ok = true;
  for (int i = 0; ok && i < a->nctors; i++) {
    const CtorDef *ca = &a->ctors[i], *cb = &b->ctors[i];
    ok = str_eq(ca->name, cb->name) && ca->nfields == cb->nfields && tys_eq(q, ca->nfields, ca->fields, cb->fields);
  }
  pop_tparams(q, nt);
  return ok;
}

static bool def_eq(const Def *a, const Def *b) {
  if (a->kind != b->kind) return false;
  Eq q = {0};
  bool ok = false;
  switch (a->kind) {
  case DEF_FUNC: ok = fn_eq(&q, a->u.func->fn, b->u.func->fn); break;
  case DEF_ADT: ok = adt_eq(&q, a->u.adt, b->u.adt); break;
  case DEF_GLOBAL:
    ok = a->u.global->builtin == b->u.global->builtin && ty_eq(&q, a->u.global->type, b->u.global->type) &&
         expr_eq(&q, a->u.global->init, b->u.global->init);
    break;
  case DEF_PRIM: ok = prim_eq(&q, a->u.prim, b->u.prim); break;
  }
  eq_free(&q);
  return ok;
}

static const char *def_name(const Def *d) {
  switch (d->kind) {
  case DEF_FUNC: return d->u.func->name;
  case DEF_ADT: return d->u.adt->name;
  case DEF_GLOBAL: return d->u.global->name;
  case DEF_PRIM: return d->u.prim->name;
  }
  RLY_UNREACHABLE();
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
  pm_free(&h->level);
  pm_free(&h->memo);
  free(h->memos);
  vec_free(&h->tparams);
}

static uint64_t str_hash(const char *s) { return s ? hash_bytes(s, strlen(s), 7) : 0; }

static void hs_bind(Hs *h, const void *v) { *pm_slot(&h->level, v) = ++h->depth; }

static uint64_t hs_use(const Hs *h, const void *v, uint64_t id) {
  const uint64_t *l = pm_find(&h->level, v);
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

static uint64_t ty_hash(Hs *h, const Type *t) {
  if (!t) return 0x11;
  uint64_t acc = hash_mix(0x77, (uint64_t)t->kind);
  switch (t->kind) {
  case TY_TENSOR:
    acc = hash_mix(acc, (uint64_t)t->u.tensor.dtype);
    for (int i = 0; i < t->u.tensor.ndim; i++) acc = hash_mix(acc, dim_hash(t->u.tensor.dims[i]));
    return hash_mix(acc, (uint64_t)t->u.tensor.ndim);
  case TY_TUPLE: return tys_hash(h, hash_mix(acc, (uint64_t)t->u.tuple.n), t->u.tuple.n, t->u.tuple.fields);
  case TY_FUNC:
    hs_push_tparams(h, t->u.func.ntparams, t->u.func.tparams);
    acc = hash_mix(acc, (uint64_t)t->u.func.ntparams);
    acc = tys_hash(h, hash_mix(acc, (uint64_t)t->u.func.nparams), t->u.func.nparams, t->u.func.params);
    acc = hash_mix(acc, ty_hash(h, t->u.func.ret));
    h->tparams.len -= (size_t)t->u.func.ntparams;
    return acc;
  case TY_VAR: return hash_mix(acc, tvar_hash(h, t->u.var.name));
  case TY_ADT:
    acc = hash_mix(acc, str_hash(t->u.adt.name));
    return tys_hash(h, hash_mix(acc, (uint64_t)t->u.adt.nargs), t->u.adt.nargs, t->u.adt.args);
  case TY_REF: return hash_mix(acc, ty_hash(h, t->u.ref.inner));
  case TY_RANDSTATE: return acc;
  case TY_INCOMPLETE: return hash_mix(acc, (uint64_t)t->u.incomplete.id);
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
  case AV_INT: return hash_mix(hash_mix(acc, (uint64_t)v->u.i), (uint64_t)v->dtype);
  case AV_FLOAT: return hash_mix(hash_bytes(&v->u.f, sizeof(double), acc), (uint64_t)v->dtype);
  case AV_BOOL: return hash_mix(acc, v->u.b);
  case AV_STR:
  case AV_SYM: return hash_mix(acc, str_hash(v->u.s));
  case AV_LIST:
    for (int i = 0; i < v->u.list.n; i++) acc = hash_mix(acc, attr_hash(h, v->u.list.items[i]));
    return hash_mix(acc, (uint64_t)v->u.list.n);
  case AV_NONE: return acc;
  case AV_EXPR: return hash_mix(acc, ex_hash(h, v->u.expr));
  }
  return acc;
}

static uint64_t attrs_hash(Hs *h, const Attrs *at) {
  uint64_t acc = 0xa5;
  for (int i = 0; at && i < at->n; i++)
    acc = hash_mix(hash_mix(acc, str_hash(at->keys[i])), attr_hash(h, at->vals[i]));
  return acc;
}

static uint64_t exs_hash(Hs *h, uint64_t acc, int n, Expr *const *es) {
  for (int i = 0; i < n; i++) acc = hash_mix(acc, ex_hash(h, es[i]));
  return hash_mix(acc, (uint64_t)n);
}

static uint64_t binder_hash(Hs *h, const Var *v) {
  hs_bind(h, v);
  return ty_hash(h, v->annot);
}

static uint64_t pat_hash(Hs *h, const Pattern *p) {
  uint64_t acc = hash_mix(0x9a, (uint64_t)p->kind);
  switch (p->kind) {
  case PAT_WILD: return acc;
  case PAT_VAR: return hash_mix(acc, binder_hash(h, p->u.var));
  case PAT_CTOR:
    acc = hash_mix(acc, str_hash(ctor_name(p->u.ctor.adt, p->u.ctor.index)));
    for (int i = 0; i < p->u.ctor.n; i++) acc = hash_mix(acc, pat_hash(h, p->u.ctor.sub[i]));
    return hash_mix(acc, (uint64_t)p->u.ctor.n);
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) acc = hash_mix(acc, pat_hash(h, p->u.tuple.sub[i]));
    return hash_mix(acc, (uint64_t)p->u.tuple.n);
  }
  return acc;
}

static uint64_t fn_hash(Hs *h, const Function *f) {
  uint64_t depth = h->depth, acc = hash_mix(0xf0, (uint64_t)f->nparams);
  hs_push_tparams(h, f->ntparams, f->tparams);
  acc = hash_mix(acc, (uint64_t)f->ntparams);
  for (int i = 0; i < f->nparams; i++) acc = hash_mix(acc, binder_hash(h, f->params[i]));
  acc = hash_mix(acc, ty_hash(h, f->ret));
  acc = hash_mix(acc, attrs_hash(h, f->attrs));
  acc = hash_mix(acc, ex_hash(h, f->body));
  h->tparams.len -= (size_t)f->ntparams;
  h->depth = depth;
  return acc;
}

static uint64_t match_hash(Hs *h, const Expr *e, uint64_t acc) {
  acc = hash_mix(hash_mix(acc, e->u.match.partial), ex_hash(h, e->u.match.scrut));
  for (int i = 0; i < e->u.match.n; i++) {
    uint64_t depth = h->depth;
    acc = hash_mix(acc, pat_hash(h, e->u.match.clauses[i].pat));
    acc = hash_mix(acc, ex_hash(h, e->u.match.clauses[i].body));
    h->depth = depth;
  }
  return hash_mix(acc, (uint64_t)e->u.match.n);
}

static uint64_t node_hash(Hs *h, const Expr *e) {
  uint64_t acc = hash_mix(0xe0, (uint64_t)e->kind);
  switch (e->kind) {
  case EX_CONST: return hash_mix(acc, tensor_hash(e->u.konst.value));
  case EX_VAR: return hash_mix(acc, hs_use(h, e->u.var, e->u.var->id));
  case EX_GLOBAL: return hash_mix(acc, str_hash(e->u.global.name));
  case EX_OP: return hash_mix(acc, str_hash(e->u.op.name));
  case EX_CTOR: return hash_mix(acc, str_hash(ctor_name(e->u.ctor.adt, e->u.ctor.index)));
  case EX_CALL:
    acc = hash_mix(acc, ex_hash(h, e->u.call.fn));
    acc = exs_hash(h, acc, e->u.call.nargs, e->u.call.args);
    return hash_mix(acc, attrs_hash(h, e->u.call.attrs));
  case EX_TUPLE: return exs_hash(h, acc, e->u.tuple.n, e->u.tuple.fields);
  case EX_PROJ: return hash_mix(hash_mix(acc, (uint64_t)e->u.proj.index), ex_hash(h, e->u.proj.tuple));
  case EX_FN: return hash_mix(acc, fn_hash(h, e->u.fn));
  case EX_IF:
    acc = hash_mix(acc, ex_hash(h, e->u.if_.cond));
    return hash_mix(hash_mix(acc, ex_hash(h, e->u.if_.then_)), ex_hash(h, e->u.if_.else_));
  case EX_MATCH: return match_hash(h, e, acc);
  case EX_REF_NEW: return hash_mix(acc, ex_hash(h, e->u.ref_new.init));
  case EX_REF_READ: return hash_mix(acc, ex_hash(h, e->u.ref_read.ref));
  case EX_REF_WRITE:
    return hash_mix(hash_mix(acc, ex_hash(h, e->u.ref_write.ref)), ex_hash(h, e->u.ref_write.value));
  case EX_DATAFLOW: return hash_mix(acc, ex_hash(h, e->u.dataflow.body));
  case EX_LET:
  case EX_FREE_VAR: break;
  }
  RLY_UNREACHABLE();
}

/* A node's hash depends only on it and the binding depth where it sits,
 * so a shared node is hashed once per depth. */
static uint64_t memo_node_hash(Hs *h, const Expr *e) {
  if (memo_leaf(e)) return node_hash(h, e);
  uint64_t *slot = pm_find(&h->memo, e);
  if (slot && h->memos[*slot - 1].depth == h->depth) return h->memos[*slot - 1].hash;
  uint64_t r = node_hash(h, e);
  if (!slot) {
    if (h->nmemos == h->capmemos) {
      h->capmemos = h->capmemos ? h->capmemos * 2 : 64;
      h->memos = realloc(h->memos, sizeof *h->memos * h->capmemos);
      if (!h->memos) rly_oom();
    }
    slot = pm_slot(&h->memo, e);
    *slot = ++h->nmemos;
  }
  h->memos[*slot - 1].depth = h->depth, h->memos[*slot - 1].hash = r;
  return r;
}

static uint64_t ex_hash(Hs *h, const Expr *e) {
  uint64_t depth = h->depth, acc = 0x3c;
  for (;;) {
    if (!e) {
      acc = hash_mix(acc, 0x5e);
      break;
    }
    if (e->kind == EX_LET) {
      acc = hash_mix(acc, 0x1e7);
      acc = hash_mix(acc, binder_hash(h, e->u.let.var));
      acc = hash_mix(acc, ex_hash(h, e->u.let.value));
      e = e->u.let.body;
    } else if (e->kind == EX_FREE_VAR) {
      acc = hash_mix(hash_mix(acc, 0xf5e), binder_hash(h, e->u.free_var.var));
      e = e->u.free_var.body;
    } else {
      acc = hash_mix(acc, memo_node_hash(h, e));
      break;
    }
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

static uint64_t pe_hash(Hs *h, const PrimExpr *e);

static uint64_t pes_hash(Hs *h, uint64_t acc, int n, PrimExpr *const *es) {
  for (int i = 0; i < n; i++) acc = hash_mix(acc, pe_hash(h, es[i]));
  return hash_mix(acc, (uint64_t)n);
}

static uint64_t pe_hash(Hs *h, const PrimExpr *e) {
  if (!e) return 0x21;
  uint64_t acc = hash_mix(hash_mix(0x9e, (uint64_t)e->kind), (uint64_t)e->dtype);
  switch (e->kind) {
  case PE_INT: return hash_mix(acc, (uint64_t)e->u.i);
  case PE_FLOAT: return hash_bytes(&e->u.f, sizeof(double), acc);
  case PE_VAR: return hash_mix(acc, hs_use(h, e->u.var, e->u.var->id));
  case PE_LOAD:
    acc = hash_mix(acc, hs_use(h, e->u.load.buf, e->u.load.buf->id));
    return pes_hash(h, acc, e->u.load.n, e->u.load.idx);
  case PE_BIN:
    acc = hash_mix(acc, (uint64_t)e->u.bin.op);
    return hash_mix(hash_mix(acc, pe_hash(h, e->u.bin.a)), pe_hash(h, e->u.bin.b));
  case PE_NOT:
  case PE_NEG: return hash_mix(acc, pe_hash(h, e->u.operand));
  case PE_CALL: return pes_hash(h, hash_mix(acc, (uint64_t)e->u.call.fn), e->u.call.n, e->u.call.args);
  case PE_CAST: return hash_mix(hash_mix(acc, (uint64_t)e->u.cast.to), pe_hash(h, e->u.cast.value));
  }
  return acc;
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

static uint64_t st_hash(Hs *h, const Stmt *s);

static uint64_t for_hash(Hs *h, const Stmt *s, uint64_t acc) {
  int n = s->u.for_.nvars, nb = s->u.for_.loop == LOOP_RANGE ? 1 : n;
  acc = hash_mix(hash_mix(acc, (uint64_t)s->u.for_.loop), (uint64_t)n);
  for (int i = 0; i < nb; i++) {
    acc = hash_mix(acc, pe_hash(h, s->u.for_.lo ? s->u.for_.lo[i] : NULL));
    acc = hash_mix(acc, pe_hash(h, s->u.for_.hi[i]));
  }
  for (int i = 0; i < n; i++) acc = hash_mix(acc, tvar_bind_hash(h, s->u.for_.vars[i]));
  return hash_mix(acc, st_hash(h, s->u.for_.body));
}

static uint64_t block_hash(Hs *h, const Stmt *s, uint64_t acc) {
  acc = hash_mix(acc, str_hash(s->u.block.name));
  for (int i = 0; i < s->u.block.niters; i++) {
    const IterVar *it = &s->u.block.iters[i];
    acc = hash_mix(hash_mix(acc, it->reduce), pe_hash(h, it->binding));
    acc = hash_mix(acc, tvar_bind_hash(h, it->var));
  }
  acc = hash_mix(acc, st_hash(h, s->u.block.init));
  return hash_mix(acc, st_hash(h, s->u.block.body));
}

static uint64_t st_hash(Hs *h, const Stmt *s) {
  if (!s) return 0x31;
  uint64_t acc = hash_mix(0x5b, (uint64_t)s->kind);
  switch (s->kind) {
  case ST_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) acc = hash_mix(acc, st_hash(h, s->u.seq.items[i]));
    return hash_mix(acc, (uint64_t)s->u.seq.n);
  case ST_FOR: return for_hash(h, s, acc);
  case ST_BLOCK: return block_hash(h, s, acc);
  case ST_STORE:
    acc = hash_mix(acc, hs_use(h, s->u.store.buf, s->u.store.buf->id));
    acc = pes_hash(h, acc, s->u.store.n, s->u.store.idx);
    return hash_mix(acc, pe_hash(h, s->u.store.value));
  case ST_ALLOC: return hash_mix(acc, buf_hash(h, s->u.alloc));
  case ST_LET:
    acc = hash_mix(acc, pe_hash(h, s->u.let.value));
    return hash_mix(acc, tvar_bind_hash(h, s->u.let.var));
  case ST_IF:
    acc = hash_mix(acc, pe_hash(h, s->u.if_.cond));
    return hash_mix(hash_mix(acc, st_hash(h, s->u.if_.then_)), st_hash(h, s->u.if_.else_));
  }
  return acc;
}

uint64_t prim_func_hash(const PrimFunc *f) {
  if (!f) return 0;
  Hs h = {0};
  uint64_t acc = hash_mix(0x99, (uint64_t)f->nparams);
  for (int i = 0; i < f->nsizevars; i++)
    acc = hash_mix(hash_mix(acc, str_hash(f->sizevars[i]->name)), tvar_bind_hash(&h, f->sizevars[i]));
  for (int i = 0; i < f->nparams; i++) acc = hash_mix(acc, buf_hash(&h, f->params[i]));
  acc = hash_mix(acc, attrs_hash(&h, f->attrs));
  acc = hash_mix(acc, st_hash(&h, f->body));
  hs_free(&h);
  return acc;
}
