/* tir_walk.c — the children, binders and walks of TIR statements and
 * scalar expressions (ir/walk.h).
 *
 * stmt_each_child is the one switch over what each statement holds; the
 * list form (stmt_children, in walk.c) and the walks are built on it.  This
 * file uses nothing but libc and allocates nothing: it is compiled into
 * librly and also into the JIT's code generator module (rly-jit.so, which
 * links no symbol of librly), so every TIR walk on either side of the
 * module boundary is this one. */
#include "ir/tir_walk.h"

#include <stddef.h>

PrimExpr *const *prim_expr_children(const PrimExpr *e, PrimExpr *tmp[2], int *n) {
  *n = 0;
  switch (e->kind) {
    case PE_INT:
    case PE_FLOAT:
    case PE_VAR:
      break;
    case PE_LOAD:
      *n = e->u.load.n;
      return e->u.load.idx;
    case PE_BIN:
      tmp[0] = e->u.bin.a, tmp[1] = e->u.bin.b, *n = 2;
      break;
    case PE_NOT:
    case PE_NEG:
      tmp[0] = e->u.operand, *n = 1;
      break;
    case PE_CALL:
      *n = e->u.call.n;
      return e->u.call.args;
    case PE_CAST:
      tmp[0] = e->u.cast.value, *n = 1;
      break;
  }
  return tmp;
}

static void kid_expr(const TirChildFns *f, const PrimExpr *e) {
  if (f->expr) f->expr(f->ctx, (PrimExpr *)e);
}

static void kid_stmt(const TirChildFns *f, const Stmt *s) {
  if (f->stmt) f->stmt(f->ctx, (Stmt *)s);
}

static void for_children(const Stmt *s, const TirChildFns *f) {
  int n = s->u.for_.nvars;
  for (int i = 0; i < n; i++) kid_expr(f, tir_for_lo(s, i));
  for (int i = 0; i < n; i++) kid_expr(f, s->u.for_.hi[i]);
  kid_stmt(f, s->u.for_.body);
}

static void block_children(const Stmt *s, const TirChildFns *f) {
  for (int i = 0; i < s->u.block.niters; i++) kid_expr(f, s->u.block.iters[i].binding);
  kid_stmt(f, s->u.block.init);
  kid_stmt(f, s->u.block.body);
}

/* A statement's direct children in source order, where every expression
 * comes before every sub-statement; the one place TIR code learns a
 * statement's structure. */
void stmt_each_child(const Stmt *s, const TirChildFns *f) {
  switch (s->kind) {
    case ST_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) kid_stmt(f, s->u.seq.items[i]);
      return;
    case ST_FOR:
      for_children(s, f);
      return;
    case ST_BLOCK:
      block_children(s, f);
      return;
    case ST_STORE:
      for (int i = 0; i < s->u.store.n; i++) kid_expr(f, s->u.store.idx[i]);
      kid_expr(f, s->u.store.value);
      return;
    case ST_ALLOC:
      return;
    case ST_LET:
      kid_expr(f, s->u.let.value);
      return;
    case ST_IF:
      kid_expr(f, s->u.if_.cond);
      kid_stmt(f, s->u.if_.then_);
      kid_stmt(f, s->u.if_.else_);
      return;
  }
}

void stmt_binders(const Stmt *s, TirVarFn f, void *ctx) {
  switch (s->kind) {
    case ST_FOR:
      for (int i = 0; i < s->u.for_.nvars; i++) f(ctx, s->u.for_.vars[i]);
      return;
    case ST_BLOCK:
      for (int i = 0; i < s->u.block.niters; i++) f(ctx, s->u.block.iters[i].var);
      return;
    case ST_LET:
      f(ctx, s->u.let.var);
      return;
    default:
      return;
  }
}

void tir_walk_expr(const PrimExpr *e, const TirVisitor *v) {
  if (!e || (v->expr && !v->expr(v->ctx, e))) return;
  PrimExpr *tmp[2];
  int n;
  PrimExpr *const *kids = prim_expr_children(e, tmp, &n);
  for (int i = 0; i < n; i++) tir_walk_expr(kids[i], v);
}

static void walk_kid_expr(void *ctx, PrimExpr *e) { tir_walk_expr(e, ctx); }
static void walk_kid_stmt(void *ctx, Stmt *s) { tir_walk(s, ctx); }

void tir_walk(const Stmt *s, const TirVisitor *v) {
  if (!s || (v->stmt && !v->stmt(v->ctx, s))) return;
  TirChildFns f = {walk_kid_expr, walk_kid_stmt, (void *)v};
  stmt_each_child(s, &f);
}

bool prim_expr_same(const PrimExpr *a, const PrimExpr *b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case PE_INT:
      return a->u.i == b->u.i && a->dtype == b->dtype;
    case PE_VAR:
      return a->u.var == b->u.var;
    case PE_BIN:
      return a->u.bin.op == b->u.bin.op && prim_expr_same(a->u.bin.a, b->u.bin.a) &&
             prim_expr_same(a->u.bin.b, b->u.bin.b);
    case PE_CAST:
      return a->u.cast.to == b->u.cast.to && prim_expr_same(a->u.cast.value, b->u.cast.value);
    default:
      return false;
  }
}
