/* sites.c — the error sites of a prim function (jit_abi.h): every load,
 * store, division/modulo, alloc and loop, numbered by one structural walk
 * (tir_walk, ir/walk.h).  Compiled into librly (to turn a kernel's error
 * code into a message) and into rly-jit.so (to number the checks it
 * emits), with ir/tir_walk.c, so it uses nothing but libc.  The order is
 * the walk's pre-order: a loop, store or alloc before its expressions and
 * body; a load or division before its operands. */
#include <stdlib.h>

#include "ir/tir_walk.h"
#include "rt/jit_abi.h"

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

/* A load or a division, before its operands (pre-order). */
static bool site_expr(void *ctx, const PrimExpr *e) {
  if (e->kind == PE_LOAD) add(ctx, SITE_LOAD, e, e->u.load.buf, e->span);
  if (e->kind == PE_BIN && (e->u.bin.op == PB_DIV || e->u.bin.op == PB_MOD))
    add(ctx, SITE_DIV, e, NULL, e->span);
  return true;
}

/* A loop, a store or an alloc, before its expressions and body. */
static bool site_stmt(void *ctx, const Stmt *s) {
  if (s->kind == ST_FOR) add(ctx, SITE_LOOP, s, NULL, s->span);
  if (s->kind == ST_STORE) add(ctx, SITE_STORE, s, s->u.store.buf, s->span);
  if (s->kind == ST_ALLOC) add(ctx, SITE_ALLOC, s, s->u.alloc, s->span);
  return true;
}

JitSite *jit_sites(const PrimFunc *f, int *n) {
  Walk w = {0};
  TirVisitor v = {site_stmt, site_expr, &w};
  tir_walk(f->body, &v);
  *n = w.n;
  return w.items;
}
