/* tir_fuse_loops.c — fuses neighbouring loops of a lowered prim function
 * that run over the same range (lower/lower.h: lower_fuse_loops).
 *
 * A fused group whose reductions feed elementwise work over the same rows
 * (layer norm: mean, the mean of squared deviations, the normalized row)
 * lowers to one loop nest per materialized stage, each over all the rows:
 *
 *   for %r0 in parallel(R) { ... %M[%r0, 0] = mean ... }
 *   for %r1 in parallel(R) { ... %V[%r1, 0] = ... %M[%r1, 0] ... }
 *   for %i in parallel(R) { for %j in vectorized(C) { %out[%i, %j] = ... } }
 *
 * so each row is read from memory once per stage.  Two neighbouring loops
 * with the same kind and range become one (the second's variable renamed
 * to the first's), and their bodies are fused again the same way, so each
 * row's stages run one after the other while the row is in the cache.
 *
 * Legal when, for every buffer either loop stores into and both loops
 * touch, some dim is indexed by exactly the loop's own variable in every
 * access of both loops and no other index of those accesses mentions it:
 * iteration i of either loop then touches only slice i of that buffer, so
 * running the second loop's iteration i right after the first's sees the
 * same values.  Buffers allocated inside a loop's body are its own.
 * `alloc`s of a sequence move to its front first (an alloc has no effect
 * but making a fresh buffer), so they do not separate the loops.
 * RLY_FUSE_LOOPS=0 turns the pass off. */
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/util.h"
#include "ir/walk.h"
#include "lower/lower.h"

typedef struct Access {
  Buffer *buf;
  bool store;
  int n;
  PrimExpr **idx;
} Access;

typedef struct Accesses {
  Access *a;
  int n, cap;
  U64Map local; /* buffers allocated inside the loop */
  U64Map seen;  /* expression nodes visited (bodies share subexpressions) */
} Accesses;

static void acc_add(Accesses *x, Buffer *b, bool store, int n, PrimExpr **idx) {
  if (x->n == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 16;
    x->a = realloc(x->a, sizeof(Access) * (size_t)x->cap);
    if (!x->a) rly_oom();
  }
  x->a[x->n++] = (Access){b, store, n, idx};
}

static bool collect_expr(void *ctx, const PrimExpr *e) {
  Accesses *x = ctx;
  if (!u64map_insert(&x->seen, (uint64_t)(uintptr_t)e)) return false;
  if (e->kind == PE_LOAD) acc_add(x, e->u.load.buf, false, e->u.load.n, e->u.load.idx);
  return true;
}

static bool collect_stmt(void *ctx, const Stmt *s) {
  Accesses *x = ctx;
  if (s->kind == ST_STORE) acc_add(x, s->u.store.buf, true, s->u.store.n, s->u.store.idx);
  if (s->kind == ST_ALLOC) u64map_insert(&x->local, s->u.alloc->id);
  return true;
}

static void collect(Accesses *x, const Stmt *loop) {
  TirVisitor v = {collect_stmt, collect_expr, x};
  tir_walk(loop->u.for_.body, &v);
}

static void accesses_free(Accesses *x) {
  free(x->a);
  u64map_free(&x->local);
  u64map_free(&x->seen);
}

typedef struct Mentions {
  const TirVar *v;
  bool found;
} Mentions;

static bool mentions_expr(void *ctx, const PrimExpr *e) {
  Mentions *m = ctx;
  if (e->kind == PE_VAR && e->u.var == m->v) m->found = true;
  return !m->found;
}

static bool mentions(const PrimExpr *e, const TirVar *v) {
  Mentions m = {v, false};
  TirVisitor vis = {NULL, mentions_expr, &m};
  tir_walk_expr(e, &vis);
  return m.found;
}

/* Does every access of b in x index dim d by exactly v, and no other dim
 * mention v? */
static bool sliced_by(const Accesses *x, const Buffer *b, int d, const TirVar *v) {
  for (int i = 0; i < x->n; i++) {
    const Access *a = &x->a[i];
    if (a->buf != b) continue;
    if (d >= a->n || a->idx[d]->kind != PE_VAR || a->idx[d]->u.var != v) return false;
    for (int k = 0; k < a->n; k++)
      if (k != d && mentions(a->idx[k], v)) return false;
  }
  return true;
}

static bool touches(const Accesses *x, const Buffer *b, bool store) {
  if (u64map_find(&x->local, b->id)) return false;
  for (int i = 0; i < x->n; i++)
    if (x->a[i].buf == b && (!store || x->a[i].store)) return true;
  return false;
}

/* The legality rule of the file's comment, for buffer b. */
static bool buffer_ok(const Accesses *x, const TirVar *vx, const Accesses *y, const TirVar *vy,
                      const Buffer *b) {
  if (!touches(x, b, false) || !touches(y, b, false)) return true;
  if (!touches(x, b, true) && !touches(y, b, true)) return true;
  for (int d = 0; d < b->ndim; d++)
    if (sliced_by(x, b, d, vx) && sliced_by(y, b, d, vy)) return true;
  return false;
}

static bool same_bound(const PrimExpr *a, const PrimExpr *b) {
  if (!a || !b) return a == b;
  if (a->kind == PE_INT && b->kind == PE_INT) return a->u.i == b->u.i;
  return a->kind == PE_VAR && b->kind == PE_VAR && a->u.var == b->u.var;
}

static bool same_range(const Stmt *x, const Stmt *y) {
  LoopKind k = x->u.for_.loop;
  if (k != y->u.for_.loop || x->u.for_.nvars != 1 || y->u.for_.nvars != 1) return false;
  if (k != LOOP_PARALLEL && k != LOOP_RANGE && k != LOOP_GRID) return false;
  return same_bound(tir_for_lo(x, 0), tir_for_lo(y, 0)) &&
         same_bound(x->u.for_.hi[0], y->u.for_.hi[0]);
}

static bool fusable(const Stmt *x, const Stmt *y) {
  if (x->kind != ST_FOR || y->kind != ST_FOR || !same_range(x, y)) return false;
  Accesses ax = {0}, ay = {0};
  collect(&ax, x), collect(&ay, y);
  const TirVar *vx = x->u.for_.vars[0], *vy = y->u.for_.vars[0];
  bool ok = true;
  for (int i = 0; ok && i < ax.n; i++) ok = buffer_ok(&ax, vx, &ay, vy, ax.a[i].buf);
  accesses_free(&ax), accesses_free(&ay);
  return ok;
}

/* Renames a variable in place: only the second loop's body mentions it. */
typedef struct Rename {
  const TirVar *from;
  TirVar *to;
} Rename;

static bool rename_expr(void *ctx, const PrimExpr *e) {
  Rename *r = ctx;
  if (e->kind == PE_VAR && e->u.var == r->from) ((PrimExpr *)e)->u.var = r->to;
  return true;
}

static void rename_var(Stmt *body, const TirVar *from, TirVar *to) {
  Rename r = {from, to};
  TirVisitor v = {NULL, rename_expr, &r};
  tir_walk(body, &v);
}

static int seq_len(const Stmt *s) { return s->kind == ST_SEQ ? s->u.seq.n : 1; }

static Stmt **seq_items(Stmt **one, Stmt *s) {
  if (s->kind == ST_SEQ) return s->u.seq.items;
  *one = s;
  return one;
}

/* x's body followed by y's (y's variable now x's), as one sequence. */
static void merge(Arena *a, Stmt *x, Stmt *y) {
  rename_var(y->u.for_.body, y->u.for_.vars[0], x->u.for_.vars[0]);
  Stmt *bx = x->u.for_.body, *by = y->u.for_.body, *ox, *oy;
  int nx = seq_len(bx), ny = seq_len(by);
  Stmt **items = ARENA_ARRAY(a, Stmt *, nx + ny);
  memcpy(items, seq_items(&ox, bx), sizeof(Stmt *) * (size_t)nx);
  memcpy(items + nx, seq_items(&oy, by), sizeof(Stmt *) * (size_t)ny);
  Stmt *s = ARENA_NEW(a, Stmt);
  *s = (Stmt){.kind = ST_SEQ, .span = bx->span};
  s->u.seq.n = nx + ny, s->u.seq.items = items;
  x->u.for_.body = s;
}

/* The sequence's allocs first, the other statements in order after them. */
static void allocs_first(Stmt *seq) {
  int n = seq->u.seq.n, k = 0;
  Stmt **it = seq->u.seq.items;
  for (int i = 0; i < n; i++) {
    if (it[i]->kind != ST_ALLOC) continue;
    Stmt *s = it[i];
    memmove(it + k + 1, it + k, sizeof(Stmt *) * (size_t)(i - k));
    it[k++] = s;
  }
}

static void fuse_stmt(Arena *a, Stmt *s);

static void fuse_seq(Arena *a, Stmt *seq) {
  allocs_first(seq);
  Stmt **it = seq->u.seq.items;
  int n = seq->u.seq.n, out = 0;
  for (int i = 0; i < n; i++) {
    if (out > 0 && fusable(it[out - 1], it[i])) {
      merge(a, it[out - 1], it[i]);
      continue;
    }
    it[out++] = it[i];
  }
  seq->u.seq.n = out;
  for (int i = 0; i < out; i++) fuse_stmt(a, it[i]);
}

static void fuse_kid(void *ctx, Stmt *s) { fuse_stmt(ctx, s); }
static void skip_expr(void *ctx, PrimExpr *e) { (void)ctx, (void)e; }

static void fuse_stmt(Arena *a, Stmt *s) {
  if (!s) return;
  if (s->kind == ST_SEQ) {
    fuse_seq(a, s);
    return;
  }
  TirChildFns f = {skip_expr, fuse_kid, a};
  stmt_each_child(s, &f);
}

/* RLY_FUSE_LOOPS=0 leaves the loops as the rules wrote them. */
void lower_fuse_loops(Arena *a, Stmt *body) {
  const char *off = getenv("RLY_FUSE_LOOPS");
  if (!off || strcmp(off, "0") != 0) fuse_stmt(a, body);
}
