/* sched_compact.c — after a schedule's last step, each buffer the function
 * allocates is allocated where it is used and only as large as one use
 * needs (TVM's buffer compaction when it builds): an `alloc` at the
 * function's level whose every access lies under a loop nest, and whose
 * parts touched by different iterations of that nest are disjoint, moves
 * into the nest and shrinks to the region one iteration touches, its
 * indices made relative to that region.  A cached tile (cache_write's
 * accumulators, cache_read's packed panel) so becomes a small buffer the
 * code generator can keep in registers or cache.
 *
 * A loop L may hold the buffer when, for every loop from the outermost down
 * to L with more than one iteration, exactly one dimension's index moves
 * with it, by a step at least that dimension's region: then iterations
 * never share an element, so no value crosses from one to another. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_int.h"

enum { MAX_ACC = 256 };

typedef struct Use {
  int nloops;
  const Stmt *loops[SCHED_MAX_DEPTH]; /* enclosing loops, outermost first */
  int n;
  PrimExpr **idx;
} Use;

typedef struct Uses {
  Sched *s;
  SchedSubst iters; /* block iteration variables in scope → their bindings */
  const Buffer *buf;
  int n;
  bool bad; /* too many, or an index that is not affine */
  Use u[MAX_ACC];
  const Stmt *stack[SCHED_MAX_DEPTH];
  int depth;
} Uses;

static void add_use(Uses *us, PrimExpr **idx, int n) {
  if (us->n == MAX_ACC) {
    us->bad = true;
    return;
  }
  Use *u = &us->u[us->n++];
  u->nloops = us->depth, u->n = n;
  u->idx = arena_alloc(us->s->a, sizeof(PrimExpr *) * (size_t)(n ? n : 1));
  for (int d = 0; d < n; d++) u->idx[d] = sched_copy_expr(us->s, idx[d], &us->iters);
  memcpy(u->loops, us->stack, sizeof(Stmt *) * (size_t)us->depth);
}

static void scan_expr(Uses *us, const PrimExpr *e) {
  if (!e) return;
  if (e->kind == PE_LOAD && e->u.load.buf == us->buf) add_use(us, e->u.load.idx, e->u.load.n);
  PrimExpr *tmp[2];
  int n;
  PrimExpr *const *kids = prim_expr_children(e, tmp, &n);
  for (int i = 0; i < n; i++) scan_expr(us, kids[i]);
}

static void scan_expr_cb(void *ctx, PrimExpr *e) { scan_expr(ctx, e); }

/* Block iteration variables bound while inside a block (bindings use loop
 * variables only: tir_verify). */
static void enter_block(SchedSubst *m, const Stmt *s) {
  if (s->kind != ST_BLOCK) return;
  for (int i = 0; i < s->u.block.niters; i++)
    subst_var(m, s->u.block.iters[i].var, s->u.block.iters[i].binding);
}

static void scan(Uses *us, const Stmt *s) {
  if (!s) return;
  enter_block(&us->iters, s);
  if (s->kind == ST_STORE && s->u.store.buf == us->buf) add_use(us, s->u.store.idx, s->u.store.n);
  bool loop = s->kind == ST_FOR && us->depth < SCHED_MAX_DEPTH;
  if (loop) us->stack[us->depth++] = s;
  TirChildFns f = {scan_expr_cb, NULL, us};
  stmt_each_child(s, &f);
  PtrVec kids = {0};
  stmt_children(s, NULL, &kids);
  for (size_t i = 0; i < kids.len; i++) scan(us, kids.items[i]);
  vec_free(&kids);
  if (loop) us->depth--;
}

/* The loops every use is under, outermost first. */
static int common_loops(const Uses *us, const Stmt **out) {
  int n = us->u[0].nloops;
  for (int i = 1; i < us->n; i++) {
    int k = 0;
    while (k < n && k < us->u[i].nloops && us->u[i].loops[k] == us->u[0].loops[k]) k++;
    n = k;
  }
  memcpy(out, us->u[0].loops, sizeof(Stmt *) * (size_t)n);
  return n;
}

static bool is_outer(const TirVar *v, const Stmt *const *outer, int c) {
  for (int i = 0; i < c; i++)
    if (outer[i]->u.for_.vars[0] == v) return true;
  return false;
}

/* Of one index: the part over the outer loops (base, constant excluded) and
 * the range of the rest over the inner loops' extents. */
typedef struct Dim1 {
  SLin base;
  int64_t lo, hi;
} Dim1;

static bool split_index(const PrimExpr *e, const Stmt *const *outer, int c, const Use *u, Dim1 *d) {
  SLin l;
  if (!sched_linear(e, &l)) return false;
  *d = (Dim1){.lo = l.c, .hi = l.c};
  for (int i = 0; i < l.n; i++) {
    if (is_outer(l.v[i], outer, c)) {
      d->base.v[d->base.n] = l.v[i], d->base.k[d->base.n++] = l.k[i];
      continue;
    }
    int64_t ext = -1;
    for (int j = 0; j < u->nloops; j++)
      if (u->loops[j]->u.for_.vars[0] == l.v[i] && !tir_for_lo(u->loops[j], 0))
        ext = sched_loop_extent(u->loops[j]);
    if (ext < 1) return false; /* a block variable, or a loop not constant from 0 */
    int64_t span = l.k[i] * (ext - 1);
    if (span > 0)
      d->hi += span;
    else
      d->lo += span;
  }
  return true;
}

static bool same_lin(const SLin *a, const SLin *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++) {
    bool found = false;
    for (int j = 0; j < b->n; j++) found |= a->v[i] == b->v[j] && a->k[i] == b->k[j];
    if (!found) return false;
  }
  return true;
}

/* The region of the buffer one iteration of outer[c-1] touches: per
 * dimension a base (over outer loops) and [lo, hi]; false when the uses
 * disagree on the base or an index is not affine. */
static bool region(const Uses *us, const Stmt *const *outer, int c, Dim1 *dims, int nd) {
  for (int i = 0; i < us->n; i++)
    for (int d = 0; d < nd; d++) {
      Dim1 x;
      if (!split_index(us->u[i].idx[d], outer, c, &us->u[i], &x)) return false;
      if (i == 0) {
        dims[d] = x;
        continue;
      }
      if (!same_lin(&x.base, &dims[d].base)) return false;
      if (x.lo < dims[d].lo) dims[d].lo = x.lo;
      if (x.hi > dims[d].hi) dims[d].hi = x.hi;
    }
  return true;
}

/* Iterations of outer[0..c) touch disjoint parts (see the top). */
static bool disjoint(const Stmt *const *outer, int c, const Dim1 *dims, int nd) {
  for (int i = 0; i < c; i++) {
    if (sched_loop_extent(outer[i]) == 1) continue;
    const TirVar *v = outer[i]->u.for_.vars[0];
    int found = 0;
    for (int d = 0; d < nd; d++)
      for (int t = 0; t < dims[d].base.n; t++)
        if (dims[d].base.v[t] == v) {
          int64_t k = dims[d].base.k[t] < 0 ? -dims[d].base.k[t] : dims[d].base.k[t];
          if (dims[d].base.n != 1 || k < dims[d].hi - dims[d].lo + 1) return false;
          found++;
        }
    if (found != 1) return false;
  }
  return true;
}

/* ── rewriting ── */

typedef struct Move {
  Sched *s;
  SchedSubst iters;
  const Buffer *from;
  Buffer *to;
  const Dim1 *dims;
} Move;

static void rebase(Move *mv, PrimExpr **idx, int n) {
  for (int d = 0; d < n; d++) {
    SLin l;
    sched_linear(sched_copy_expr(mv->s, idx[d], &mv->iters), &l);
    SLin r = {.c = l.c - mv->dims[d].lo};
    for (int i = 0; i < l.n; i++) {
      bool base = false;
      for (int t = 0; t < mv->dims[d].base.n; t++) base |= mv->dims[d].base.v[t] == l.v[i];
      if (!base) r.v[r.n] = l.v[i], r.k[r.n++] = l.k[i];
    }
    idx[d] = sched_from_linear(mv->s, &r, idx[d]->dtype);
  }
}

static void move_expr(Move *mv, PrimExpr *e) {
  if (!e) return;
  if (e->kind == PE_LOAD && e->u.load.buf == mv->from) {
    e->u.load.buf = mv->to;
    rebase(mv, e->u.load.idx, e->u.load.n);
  }
  PrimExpr *tmp[2];
  int n;
  PrimExpr *const *kids = prim_expr_children(e, tmp, &n);
  for (int i = 0; i < n; i++) move_expr(mv, kids[i]);
}

static void move_expr_cb(void *ctx, PrimExpr *e) { move_expr(ctx, e); }

/* In place, on a fresh copy. */
static void move_stmt(Move *mv, Stmt *s) {
  if (!s) return;
  enter_block(&mv->iters, s);
  if (s->kind == ST_STORE && s->u.store.buf == mv->from) {
    s->u.store.buf = mv->to;
    rebase(mv, s->u.store.idx, s->u.store.n);
  }
  TirChildFns f = {move_expr_cb, NULL, mv};
  stmt_each_child(s, &f);
  PtrVec kids = {0};
  stmt_children(s, NULL, &kids);
  for (size_t i = 0; i < kids.len; i++) move_stmt(mv, kids.items[i]);
  vec_free(&kids);
}

static Stmt *alloc_stmt(Sched *s, Buffer *b) {
  Stmt *a = ARENA_NEW(s->a, Stmt);
  *a = (Stmt){.kind = ST_ALLOC, .span = b->span};
  a->u.alloc = b;
  return a;
}

/* Moves buffer b's alloc (top-level statement i) into loop outer[c-1]. */
static void compact_into(Sched *s, int i, const Buffer *b, const Stmt *const *outer, int c,
                         const Dim1 *dims) {
  Buffer *nb = ARENA_NEW(s->a, Buffer);
  *nb = *b;
  nb->dims = arena_alloc(s->a, sizeof(Dim) * (size_t)b->ndim);
  for (int d = 0; d < b->ndim; d++)
    nb->dims[d] = (Dim){DIM_CONST, dims[d].hi - dims[d].lo + 1, NULL};
  Move mv = {.s = s, .from = b, .to = nb, .dims = dims};
  const Stmt *L = outer[c - 1];
  Stmt *body = sched_copy(s, L->u.for_.body, NULL);
  move_stmt(&mv, body);
  subst_free(&mv.iters);
  Stmt *items[2] = {alloc_stmt(s, nb), body};
  Stmt *nl = ARENA_NEW(s->a, Stmt);
  *nl = *L;
  nl->u.for_.body = sched_seq(s, 2, items);
  SPath p;
  sched_find_loop(s, L->u.for_.vars[0], &p);
  Stmt *root = sched_replace(s, &p, nl);
  SPath pa = {2, {root, root->u.seq.items[i]}};
  sched_set_body(s, sched_replace(s, &pa, NULL));
}

static bool compact_one(Sched *s, int i) {
  const Buffer *b = s->f->body->u.seq.items[i]->u.alloc;
  Uses *us = calloc(1, sizeof *us);
  if (!us) abort();
  us->buf = b, us->s = s;
  scan(us, s->f->body);
  subst_free(&us->iters);
  const Stmt *outer[SCHED_MAX_DEPTH];
  int c = us->n && !us->bad ? common_loops(us, outer) : 0;
  Dim1 dims[TENSOR_MAX_RANK];
  bool done = false;
  for (; c > 0 && !done && b->ndim <= TENSOR_MAX_RANK; c--)
    if (region(us, outer, c, dims, b->ndim) && disjoint(outer, c, dims, b->ndim)) {
      compact_into(s, i, b, outer, c, dims);
      done = true;
    }
  free(us);
  return done;
}

void sched_compact(Sched *s) {
  for (int i = 0; i < s->f->body->u.seq.n; i++) {
    const Stmt *a = s->f->body->u.seq.items[i];
    if (a->kind == ST_ALLOC && compact_one(s, i)) i--; /* the alloc left this sequence */
  }
}
