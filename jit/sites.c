/* sites.c — the error sites of a prim function (jit_abi.h): every load,
 * store, division/modulo, alloc and loop, numbered by one structural walk.
 * Compiled into librly (to turn a kernel's error code into a message) and
 * into rly-jit.so (to number the checks it emits), so it uses nothing but
 * libc.  The walk order is fixed: statements in pre-order; a store before
 * its indices and value; a load or division before its operands. */
#include <stdlib.h>

#include "jit/jit_abi.h"

typedef struct Walk {
  JitSite *items;
  int n, cap;
} Walk;

static void add(Walk *w, JitSiteKind k, const void *node, const Buffer *b, Span sp) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    JitSite *p = realloc(w->items, sizeof *p * (size_t)w->cap);
    if (!p) abort();
    w->items = p;
  }
  w->items[w->n++] = (JitSite){k, node, b, sp};
}

/* Numbers the sites of an expression: a load or division before its
 * operands (the order codegen.c numbers its checks in). */
static void walk_expr(Walk *w, const PrimExpr *e) {
  if (!e) return;
  switch (e->kind) {
    case PE_LOAD:
      add(w, SITE_LOAD, e, e->u.load.buf, e->span);
      for (int i = 0; i < e->u.load.n; i++) walk_expr(w, e->u.load.idx[i]);
      return;
    case PE_BIN:
      if (e->u.bin.op == PB_DIV || e->u.bin.op == PB_MOD) add(w, SITE_DIV, e, NULL, e->span);
      walk_expr(w, e->u.bin.a);
      walk_expr(w, e->u.bin.b);
      return;
    case PE_NOT:
    case PE_NEG:
      walk_expr(w, e->u.operand);
      return;
    case PE_CALL:
      for (int i = 0; i < e->u.call.n; i++) walk_expr(w, e->u.call.args[i]);
      return;
    case PE_CAST:
      walk_expr(w, e->u.cast.value);
      return;
    default:
      return;
  }
}

/* Numbers the sites of a statement in pre-order; must match the order in
 * which codegen.c visits the same nodes. */
static void walk_stmt(Walk *w, const Stmt *s) {
  if (!s) return;
  switch (s->kind) {
    case ST_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) walk_stmt(w, s->u.seq.items[i]);
      return;
    case ST_FOR: {
      add(w, SITE_LOOP, s, NULL, s->span);
      for (int i = 0; i < s->u.for_.nvars; i++) {
        if (tir_for_lo(s, i)) walk_expr(w, tir_for_lo(s, i));
        walk_expr(w, s->u.for_.hi[i]);
      }
      walk_stmt(w, s->u.for_.body);
      return;
    }
    case ST_BLOCK:
      for (int i = 0; i < s->u.block.niters; i++) walk_expr(w, s->u.block.iters[i].binding);
      walk_stmt(w, s->u.block.init);
      walk_stmt(w, s->u.block.body);
      return;
    case ST_STORE:
      add(w, SITE_STORE, s, s->u.store.buf, s->span);
      for (int i = 0; i < s->u.store.n; i++) walk_expr(w, s->u.store.idx[i]);
      walk_expr(w, s->u.store.value);
      return;
    case ST_ALLOC:
      add(w, SITE_ALLOC, s, s->u.alloc, s->span);
      return;
    case ST_LET:
      walk_expr(w, s->u.let.value);
      return;
    case ST_IF:
      walk_expr(w, s->u.if_.cond);
      walk_stmt(w, s->u.if_.then_);
      walk_stmt(w, s->u.if_.else_);
      return;
  }
}

JitSite *jit_sites(const PrimFunc *f, int *n) {
  Walk w = {0};
  walk_stmt(&w, f->body);
  *n = w.n;
  return w.items;
}
