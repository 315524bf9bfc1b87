/* sched_rfactor.c — the rfactor schedule primitive (TVM's): a reduction
 * `B[v] = B[v] OP e` over a serial loop L becomes
 *   - block "B_rf": L's iterations data parallel, each reducing into its
 *     own slice of a new buffer B_rf (B's shape with extent(L) inserted
 *     at factor_axis), in a copy of the loop nest placed before it;
 *   - block "B" (the write-back): under the original loops without the
 *     other reduction loops, B[v] = B[v] OP B_rf[..., vL, ...].
 * OP is +, *, max or min, and the init must store its identity. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_reduce.h"

typedef struct Rf {
  Stmt *blk, *loop; /* the reduction block, the rfactor loop */
  Stmt *loops[SCHED_MAX_DEPTH];
  int nloops;        /* the loops above the block, outermost first */
  const Stmt *store; /* the body's store B[idx] = combine(B[idx], rhs) */
  PrimExpr *rhs;     /* the combined value */
  PrimBinOp op;      /* PB_ADD / PB_MUL, or -1 with fn */
  int fn;            /* PI_MAX / PI_MIN, or -1 */
  Buffer *rfbuf;
  int axis;
} Rf;

static const Stmt *only_store(const Stmt *st) {
  while (st && st->kind == ST_SEQ && st->u.seq.n == 1) st = st->u.seq.items[0];
  return st && st->kind == ST_STORE ? st : NULL;
}

static bool same_load(const PrimExpr *e, const Stmt *store) {
  if (e->kind != PE_LOAD || e->u.load.buf != store->u.store.buf) return false;
  for (int i = 0; i < e->u.load.n; i++) {
    const PrimExpr *a = e->u.load.idx[i], *b = store->u.store.idx[i];
    if (a->kind != PE_VAR || b->kind != PE_VAR || a->u.var != b->u.var) return false;
  }
  return true;
}

/* Is e the combiner's identity (0, 1, -inf, +inf)? */
static bool is_identity(const PrimExpr *e, const Rf *r) {
  bool neg = e->kind == PE_NEG;
  if (neg) e = e->u.operand;
  double v = e->kind == PE_FLOAT ? e->u.f : e->kind == PE_INT ? (double)e->u.i : NAN;
  if (neg) v = -v;
  if (r->fn == PI_MAX) return isinf(v) && v < 0;
  if (r->fn == PI_MIN) return isinf(v) && v > 0;
  return v == (r->op == PB_ADD ? 0.0 : 1.0);
}

/* Recognises body B[idx] = B[idx] OP rhs (either operand order). */
static bool combiner(Sched *s, Rf *r, Span where) {
  const Stmt *st = only_store(r->blk->u.block.body), *init = only_store(r->blk->u.block.init);
  const char *name = r->blk->u.block.name;
  if (!st || !init || init->u.store.buf != st->u.store.buf)
    return sched_fail(s, where,
                      "cannot rfactor block \"%s\": its body and init must each be one store to "
                      "the same buffer",
                      name);
  const PrimExpr *v = st->u.store.value, *a = NULL, *b = NULL;
  r->op = (PrimBinOp)-1, r->fn = -1, r->store = st;
  if (v->kind == PE_BIN && (v->u.bin.op == PB_ADD || v->u.bin.op == PB_MUL))
    r->op = v->u.bin.op, a = v->u.bin.a, b = v->u.bin.b;
  if (v->kind == PE_CALL && (v->u.call.fn == PI_MAX || v->u.call.fn == PI_MIN))
    r->fn = (int)v->u.call.fn, a = v->u.call.args[0], b = v->u.call.args[1];
  if (a && same_load(b, st) && !same_load(a, st)) {
    const PrimExpr *t = a;
    a = b, b = t;
  }
  if (!a || !same_load(a, st))
    return sched_fail(s, where,
                      "cannot rfactor block \"%s\": its body is not `B[...] = B[...] OP value` "
                      "with OP one of + * max min",
                      name);
  r->rhs = (PrimExpr *)b;
  if (!is_identity(init->u.store.value, r))
    return sched_fail(s, where,
                      "cannot rfactor block \"%s\": its init does not store the identity of its "
                      "combiner",
                      name);
  return true;
}

/* The loop is serial, holds only the block under a chain of loops, and is
 * bound to reduction variables only; no loop is bound to both kinds. */
static bool rf_loops(Sched *s, Rf *r, Span where) {
  const char *lv = r->loop->u.for_.vars[0]->name;
  const Stmt *blocks[2];
  if (sched_blocks_under(r->loop, blocks, 2) != 1)
    return sched_fail(s, where, "cannot rfactor `%%%s`: it must hold exactly one block", lv);
  if (r->loop->u.for_.loop != LOOP_RANGE)
    return sched_fail(s, where, "cannot rfactor `%%%s`: it is `%s`, not a serial `range` loop", lv,
                      loop_kind_name(r->loop->u.for_.loop));
  r->blk = (Stmt *)blocks[0];
  if (!r->blk->u.block.init)
    return sched_fail(s, where, "cannot rfactor: block \"%s\" is not a reduction (it has no init)",
                      r->blk->u.block.name);
  SPath bp;
  sched_find_block(s, r->blk->u.block.name, &bp);
  for (int i = 0; i < bp.n - 1; i++) {
    Stmt *x = bp.node[i];
    if (x->kind == ST_SEQ && i > 0 && x->u.seq.n == 1) continue;
    if (x->kind == ST_FOR) {
      r->loops[r->nloops++] = x;
      continue;
    }
    if (i > 0)
      return sched_fail(s, where,
                        "cannot rfactor: block \"%s\" must sit under a chain of loops alone (there "
                        "is a `%s` statement among them)",
                        r->blk->u.block.name, stmt_kind_name(x->kind));
  }
  const TirVar *v = r->loop->u.for_.vars[0];
  if (!sched_var_bound_as(r->blk, v, true) || sched_var_bound_as(r->blk, v, false))
    return sched_fail(s, where,
                      "cannot rfactor `%%%s`: it must be bound to reduction variables of block "
                      "\"%s\" only",
                      lv, r->blk->u.block.name);
  for (int i = 0; i < r->nloops; i++) {
    const TirVar *x = r->loops[i]->u.for_.vars[0];
    if (sched_var_bound_as(r->blk, x, true) && sched_var_bound_as(r->blk, x, false))
      return sched_fail(s, where,
                        "cannot rfactor: the loop `%%%s` is bound to both a spatial and a "
                        "reduction variable of block \"%s\"",
                        x->name, r->blk->u.block.name);
    if (sched_loop_extent(r->loops[i]) < 0 || tir_for_lo(r->loops[i], 0))
      return sched_fail(s, where, "cannot rfactor: the loop `%%%s` needs a constant extent from 0",
                        x->name);
  }
  return true;
}

static Buffer *rf_buffer(Sched *s, Rf *r) {
  const Buffer *b = r->store->u.store.buf;
  Buffer *nb = ARENA_NEW(s->a, Buffer);
  *nb = *b;
  char name[256];
  snprintf(name, sizeof name, "%s_rf", b->name);
  nb->name = sched_fresh_name(s, name);
  nb->id = ir_fresh_id();
  nb->ndim = b->ndim + 1;
  nb->no_init = false;
  nb->dims = arena_alloc(s->a, sizeof(Dim) * (size_t)nb->ndim);
  for (int i = 0, j = 0; i < nb->ndim; i++)
    nb->dims[i] =
        i == r->axis ? (Dim){.kind = DIM_CONST, .value = sched_loop_extent(r->loop)} : b->dims[j++];
  return nb;
}

/* idx (B's indices, substituted by m) with `at` inserted at the axis. */
static PrimExpr **rf_index(Sched *s, const Rf *r, PrimExpr *at, const SchedSubst *m) {
  const Stmt *st = r->store;
  PrimExpr **idx = arena_alloc(s->a, sizeof(PrimExpr *) * (size_t)(st->u.store.n + 1));
  for (int i = 0, j = 0; i <= st->u.store.n; i++)
    idx[i] =
        i == r->axis ? sched_copy_expr(s, at, NULL) : sched_copy_expr(s, st->u.store.idx[j++], m);
  return idx;
}

static PrimExpr *combine(Sched *s, const Rf *r, PrimExpr *a, PrimExpr *b) {
  if (r->fn < 0) return sched_bin(s, r->op, a, b);
  PrimExpr *e = ARENA_NEW(s->a, PrimExpr);
  *e = *r->store->u.store.value;
  e->u.call.args = arena_alloc(s->a, 2 * sizeof(PrimExpr *));
  e->u.call.args[0] = a, e->u.call.args[1] = b;
  return e;
}

static Stmt *store(Sched *s, Buffer *b, int n, PrimExpr **idx, PrimExpr *v) {
  Stmt *st = ARENA_NEW(s->a, Stmt);
  *st = (Stmt){.kind = ST_STORE, .span = s->step->span};
  st->u.store.buf = b, st->u.store.n = n, st->u.store.idx = idx, st->u.store.value = v;
  return st;
}

static PrimExpr *load(Sched *s, Buffer *b, int n, PrimExpr **idx) {
  PrimExpr *e = ARENA_NEW(s->a, PrimExpr);
  *e = (PrimExpr){.kind = PE_LOAD, .dtype = b->dtype, .span = s->step->span};
  e->u.load.buf = b, e->u.load.n = n, e->u.load.idx = idx;
  return e;
}

/* Is `name` the name of a variable of blk that the new block keeps? */
static bool kept_name(const Rf *r, const char *name) {
  for (int j = 0; j < r->blk->u.block.niters; j++) {
    const IterVar *o = &r->blk->u.block.iters[j];
    bool replaced = o->reduce && sched_expr_uses(o->binding, r->loop->u.for_.vars[0]);
    if (!replaced && strcmp(o->var->name, name) == 0) return true;
  }
  return false;
}

/* v<loop>: block variables are scoped by their block, so only the block's
 * own names need avoiding. */
static TirVar *iter_for_loop(Sched *s, const Rf *r, const Stmt *loop) {
  char name[256];
  snprintf(name, sizeof name, "v%s", loop->u.for_.vars[0]->name);
  for (int i = 1; kept_name(r, name); i++)
    snprintf(name, sizeof name, "v%s_%d", loop->u.for_.vars[0]->name, i);
  return sr_block_var(s, name, loop->u.for_.vars[0]->dtype);
}

/* The rf block: v<L> spatial first, then the block's variables (a reduction
 * variable using L replaced by one per loop its binding uses), bound to the
 * new loops in `lm`. */
static Stmt *rf_block(Sched *s, Rf *r, const SchedSubst *lm) {
  const Stmt *blk = r->blk;
  IterVar *it = arena_alloc(s->a, sizeof(IterVar) * (size_t)(blk->u.block.niters + r->nloops + 1));
  PtrMap made = {0}; /* loop var → its new iteration variable */
  SchedSubst bm = {0};
  TirVar *vl = iter_for_loop(s, r, r->loop);
  int n = 0;
  it[n++] = (IterVar){false, vl, sched_copy_expr(s, sched_var(s, r->loop->u.for_.vars[0]), lm)};
  ptrmap_put(&made, r->loop->u.for_.vars[0], vl);
  for (int j = 0; j < blk->u.block.niters; j++) {
    const IterVar *o = &blk->u.block.iters[j];
    if (!o->reduce || !sched_expr_uses(o->binding, r->loop->u.for_.vars[0])) {
      it[n++] = (IterVar){o->reduce, o->var, sched_copy_expr(s, o->binding, lm)};
      continue;
    }
    SchedSubst vm = {0};
    for (int i = 0; i < r->nloops; i++) {
      TirVar *lv = r->loops[i]->u.for_.vars[0];
      if (!sched_expr_uses(o->binding, lv)) continue;
      TirVar *nv = ptrmap_get(&made, lv);
      if (!nv) {
        nv = iter_for_loop(s, r, r->loops[i]);
        ptrmap_put(&made, lv, nv);
        it[n++] = (IterVar){true, nv, sched_copy_expr(s, sched_var(s, lv), lm)};
      }
      subst_var(&vm, lv, sched_var(s, nv));
    }
    subst_var(&bm, o->var, sched_copy_expr(s, o->binding, &vm));
    subst_free(&vm);
  }
  ptrmap_free(&made);
  PrimExpr *at = sched_var(s, vl);
  int nd = r->rfbuf->ndim;
  Stmt *b = ARENA_NEW(s->a, Stmt);
  *b = *blk;
  char name[256];
  snprintf(name, sizeof name, "%s_rf", blk->u.block.name);
  b->u.block.name = sched_fresh_name(s, name);
  b->u.block.niters = n, b->u.block.iters = it;
  const Stmt *init = only_store(blk->u.block.init);
  b->u.block.init =
      store(s, r->rfbuf, nd, rf_index(s, r, at, &bm), sched_copy_expr(s, init->u.store.value, &bm));
  PrimExpr *acc = load(s, r->rfbuf, nd, rf_index(s, r, at, &bm));
  b->u.block.body = store(s, r->rfbuf, nd, rf_index(s, r, at, &bm),
                          combine(s, r, acc, sched_copy_expr(s, r->rhs, &bm)));
  subst_free(&bm);
  return b;
}

/* The write-back block: the spatial variables (copied), then v<L> as a
 * reduction variable; B[idx] = B[idx] OP B_rf[..., v<L>, ...]. */
static Stmt *wb_block(Sched *s, Rf *r) {
  const Stmt *blk = r->blk;
  IterVar *it = arena_alloc(s->a, sizeof(IterVar) * (size_t)(blk->u.block.niters + 1));
  SchedSubst m = {0};
  int n = 0;
  for (int j = 0; j < blk->u.block.niters; j++) {
    const IterVar *o = &blk->u.block.iters[j];
    if (o->reduce) continue;
    TirVar *v = sr_block_var(s, o->var->name, o->var->dtype);
    it[n++] = (IterVar){false, v, sched_copy_expr(s, o->binding, NULL)};
    subst_var(&m, o->var, sched_var(s, v));
  }
  TirVar *vl = iter_for_loop(s, r, r->loop);
  it[n++] = (IterVar){true, vl, sched_var(s, r->loop->u.for_.vars[0])};
  Stmt *b = ARENA_NEW(s->a, Stmt);
  *b = *blk;
  b->u.block.niters = n, b->u.block.iters = it;
  const Stmt *init = only_store(blk->u.block.init);
  b->u.block.init = sched_copy(s, init, &m);
  Stmt *st = sched_copy(s, r->store, &m);
  PrimExpr *part = load(s, r->rfbuf, r->rfbuf->ndim, rf_index(s, r, sched_var(s, vl), &m));
  st->u.store.value = combine(s, r, load(s, st->u.store.buf, st->u.store.n, st->u.store.idx), part);
  b->u.block.body = st;
  subst_free(&m);
  return b;
}

/* Loops (copies) around body: all of them with new variables (lm filled),
 * or only those the write-back keeps (the spatial ones and L). */
static Stmt *wrap(Sched *s, Rf *r, Stmt *body, SchedSubst *lm) {
  for (int i = r->nloops - 1; i >= 0; i--) {
    Stmt *l = r->loops[i];
    TirVar *v = l->u.for_.vars[0];
    if (!lm && l != r->loop && sched_var_bound_as(r->blk, v, true)) continue;
    Stmt *c = ARENA_NEW(s->a, Stmt);
    *c = *l;
    if (lm) {
      TirVar *nv = ((PrimExpr *)ptrmap_get(&lm->vars, v))->u.var;
      c->u.for_.vars = arena_memdup(s->a, &nv, sizeof nv);
    }
    c->u.for_.body = body;
    body = c;
  }
  return body;
}

static Stmt *alloc_stmt(Sched *s, Buffer *b) {
  Stmt *st = ARENA_NEW(s->a, Stmt);
  *st = (Stmt){.kind = ST_ALLOC, .span = s->step->span};
  st->u.alloc = b;
  return st;
}

bool sp_rfactor(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *la = sched_need(s, st, 0, "loop", "a loop");
  const SchedArg *fa = la ? sched_need(s, st, 1, "factor_axis", "factor_axis") : NULL;
  Rf r = {0};
  SPath lp;
  TirVar *lv;
  int64_t axis;
  if (!fa || !sched_arg_loop(s, la, &lv) || !sched_need_loop(s, lv, la->span, &lp) ||
      !sched_arg_int(s, fa, &axis))
    return false;
  r.loop = lp.node[lp.n - 1];
  if (!rf_loops(s, &r, la->span) || !combiner(s, &r, la->span)) return false;
  int nd = r.store->u.store.n;
  if (axis < -(nd + 1) || axis > nd)
    return sched_fail(s, fa->span,
                      "factor_axis %lld is out of range: `%%%s` has %d dimension%s, so "
                      "it must be in [%d, %d]",
                      (long long)axis, r.store->u.store.buf->name, nd, nd == 1 ? "" : "s",
                      -(nd + 1), nd);
  r.axis = (int)(axis < 0 ? axis + nd + 1 : axis);
  r.rfbuf = rf_buffer(s, &r);
  SchedSubst lm = {0};
  for (int i = 0; i < r.nloops; i++) {
    TirVar *v = r.loops[i]->u.for_.vars[0];
    subst_var(&lm, v, sched_var(s, sched_new_var(s, v->name, v->dtype)));
  }
  Stmt *rf = wrap(s, &r, rf_block(s, &r, &lm), &lm);
  Stmt *wb = wrap(s, &r, wb_block(s, &r), NULL);
  subst_free(&lm);
  SPath top;
  sched_find_loop(s, r.loops[0]->u.for_.vars[0], &top);
  Stmt *two[2] = {rf, wb};
  Stmt *body = sched_replace(s, &top, sched_seq(s, 2, two));
  Stmt *with_alloc[2] = {alloc_stmt(s, r.rfbuf), body};
  sched_set_body(s, sched_seq(s, 2, with_alloc));
  Stmt *b = rf;
  while (b->kind != ST_BLOCK) b = b->u.for_.body;
  out->v[out->n++] = (Handle){.kind = H_BLOCK, .block = b->u.block.name};
  return true;
}
