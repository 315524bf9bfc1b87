/* sched_reduce.c — schedule primitives on reduction blocks:
 * decompose_reduction (a block's init becomes its own block, placed before
 * a loop) and rfactor (a reduction over a loop becomes a data-parallel
 * block writing partial results, then a block reducing them).  The checks
 * are TVM's: the block is a reduction, the loop is above it, and for
 * decompose_reduction no loop above the given one is bound to a reduction
 * variable; rfactor needs a serial reduction loop over one block whose
 * body is a recognised combiner (+ * max min) with its identity as init. */
#include "sched/sched_reduce.h"

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"

TirVar *sr_block_var(Sched *s, const char *name, DType dt) {
  TirVar *v = ARENA_NEW(s->a, TirVar);
  *v = (TirVar){.name = arena_strdup(s->a, name), .dtype = dt, .id = ir_fresh_id()};
  v->span = s->step ? s->step->span : s->f->span;
  return v;
}

/* The block an argument names, found in the tree. */
static bool arg_block(Sched *s, const SchedArg *a, SPath *p, Stmt **block) {
  const char *name;
  if (!sched_arg_block(s, a, &name) || !sched_need_block(s, name, a->span, p)) return false;
  *block = p->node[p->n - 1];
  return true;
}

static bool arg_loop(Sched *s, const SchedArg *a, SPath *p, Stmt **loop) {
  TirVar *v;
  if (!sched_arg_loop(s, a, &v) || !sched_need_loop(s, v, a->span, p)) return false;
  *loop = p->node[p->n - 1];
  return true;
}

static int path_index(const SPath *p, const Stmt *x) {
  for (int i = 0; i < p->n; i++)
    if (p->node[i] == x) return i;
  return -1;
}

/* ───────────────────────── decompose_reduction ───────────────────────── */

/* No loop above `loop` (path index li) is bound to a reduction variable. */
static bool loop_high_enough(Sched *s, const SPath *bp, int li, const Stmt *blk, Span where) {
  for (int i = 0; i < li; i++) {
    if (bp->node[i]->kind != ST_FOR) continue;
    const TirVar *lv = bp->node[i]->u.for_.vars[0];
    for (int j = 0; j < blk->u.block.niters; j++) {
      const IterVar *it = &blk->u.block.iters[j];
      if (it->reduce && sched_expr_uses(it->binding, lv))
        return sched_fail(s, where,
                          "cannot decompose_reduction at `%%%s`: the loop `%%%s` above it is bound "
                          "to reduction variable %%%s of block \"%s\" (the init would run again "
                          "at each of its iterations)",
                          bp->node[li]->u.for_.vars[0]->name, lv->name, it->var->name,
                          blk->u.block.name);
    }
  }
  return true;
}

/* The conjuncts of c that use none of the n loops in `gone`, substituted by m
 * (NULL when none is left). */
static PrimExpr *keep_conjuncts(Sched *s, const PrimExpr *c, Stmt **gone, int n,
                                const SchedSubst *m) {
  if (c->kind == PE_BIN && c->u.bin.op == PB_AND) {
    PrimExpr *a = keep_conjuncts(s, c->u.bin.a, gone, n, m);
    PrimExpr *b = keep_conjuncts(s, c->u.bin.b, gone, n, m);
    return a && b ? sched_bin(s, PB_AND, a, b) : a ? a : b;
  }
  for (int i = 0; i < n; i++)
    if (sched_expr_uses(c, gone[i]->u.for_.vars[0])) return NULL;
  return sched_copy_expr(s, c, m);
}

typedef struct InitNest {
  Stmt *chosen[SCHED_MAX_DEPTH], *gone[SCHED_MAX_DEPTH];
  int nchosen, ngone;
  SchedSubst m; /* old loop and block variables → the init's */
} InitNest;

/* The init block: the spatial iteration variables again, bound to the
 * same loops (those under `loop` renamed %x_init), the init as body. */
static Stmt *init_block(Sched *s, const Stmt *blk, InitNest *in) {
  Stmt *b = ARENA_NEW(s->a, Stmt);
  *b = *blk;
  char name[256];
  snprintf(name, sizeof name, "%s_init", blk->u.block.name);
  b->u.block.name = sched_fresh_name(s, name);
  b->u.block.iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(blk->u.block.niters + 1));
  int n = 0;
  for (int j = 0; j < blk->u.block.niters; j++) {
    const IterVar *it = &blk->u.block.iters[j];
    if (it->reduce) continue;
    TirVar *v = sr_block_var(s, it->var->name, it->var->dtype);
    b->u.block.iters[n++] = (IterVar){false, v, sched_copy_expr(s, it->binding, &in->m)};
    subst_var(&in->m, it->var, sched_var(s, v));
  }
  b->u.block.niters = n;
  b->u.block.body = sched_copy(s, blk->u.block.init, &in->m);
  b->u.block.init = NULL;
  return b;
}

/* Loops from `loop` (path index li) down to the block: those the spatial
 * bindings use get an `_init` twin, the others are dropped. */
static void choose_loops(Sched *s, const SPath *bp, int li, const Stmt *blk, InitNest *in) {
  for (int i = li; i < bp->n - 1; i++) {
    Stmt *l = bp->node[i];
    if (l->kind != ST_FOR) continue;
    bool used = false;
    for (int j = 0; j < blk->u.block.niters; j++)
      used |= !blk->u.block.iters[j].reduce &&
              sched_expr_uses(blk->u.block.iters[j].binding, l->u.for_.vars[0]);
    if (!used) {
      in->gone[in->ngone++] = l;
      continue;
    }
    char name[256];
    snprintf(name, sizeof name, "%s_init", l->u.for_.vars[0]->name);
    TirVar *nv = sched_new_var(s, name, l->u.for_.vars[0]->dtype);
    subst_var(&in->m, l->u.for_.vars[0], sched_var(s, nv));
    Stmt *c = ARENA_NEW(s->a, Stmt);
    *c = *l;
    c->u.for_.vars = arena_memdup(s->a, &nv, sizeof nv);
    in->chosen[in->nchosen++] = c;
  }
}

/* The init nest: the kept loops (bounds renamed), the guards between
 * `loop` and the block that do not use a dropped loop, the init block. */
static Stmt *init_nest(Sched *s, const SPath *bp, int li, const Stmt *blk) {
  InitNest in = {0};
  choose_loops(s, bp, li, blk, &in);
  Stmt *body = init_block(s, blk, &in);
  for (int i = bp->n - 2; i > li; i--)
    if (bp->node[i]->kind == ST_IF) {
      PrimExpr *c = keep_conjuncts(s, bp->node[i]->u.if_.cond, in.gone, in.ngone, &in.m);
      if (c) body = sched_if(s, c, body);
    }
  for (int i = in.nchosen - 1; i >= 0; i--) {
    Stmt *l = in.chosen[i];
    l->u.for_.lo = l->u.for_.lo ? arena_memdup(s->a, l->u.for_.lo, sizeof(PrimExpr *)) : NULL;
    if (l->u.for_.lo && l->u.for_.lo[0])
      l->u.for_.lo[0] = sched_copy_expr(s, l->u.for_.lo[0], &in.m);
    l->u.for_.hi = arena_memdup(s->a, l->u.for_.hi, sizeof(PrimExpr *));
    l->u.for_.hi[0] = sched_copy_expr(s, l->u.for_.hi[0], &in.m);
    l->u.for_.body = body;
    body = l;
  }
  subst_free(&in.m);
  return body;
}

bool sp_decompose_reduction(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *ba = sched_need(s, st, 0, "block", "a block");
  const SchedArg *la = ba ? sched_need(s, st, 1, "loop", "a loop") : NULL;
  SPath bp, lp;
  Stmt *blk, *loop;
  if (!la || !arg_block(s, ba, &bp, &blk) || !arg_loop(s, la, &lp, &loop)) return false;
  int li = path_index(&bp, loop);
  if (li < 0)
    return sched_fail(s, la->span,
                      "cannot decompose_reduction: `%%%s` is not a loop above block \"%s\"",
                      loop->u.for_.vars[0]->name, blk->u.block.name);
  if (!blk->u.block.init)
    return sched_fail(s, ba->span, "block \"%s\" has no init: it is not a reduction block",
                      blk->u.block.name);
  if (!loop_high_enough(s, &bp, li, blk, la->span)) return false;
  Stmt *nest = init_nest(s, &bp, li, blk);
  Stmt *upd = ARENA_NEW(s->a, Stmt);
  *upd = *blk;
  upd->u.block.init = NULL;
  char name[256];
  snprintf(name, sizeof name, "%s_update", blk->u.block.name);
  upd->u.block.name = sched_fresh_name(s, name);
  sched_set_body(s, sched_replace(s, &bp, upd));
  sched_find_loop(s, loop->u.for_.vars[0], &lp);
  Stmt *pair[2] = {nest, lp.node[lp.n - 1]};
  sched_set_body(s, sched_replace(s, &lp, sched_seq(s, 2, pair)));
  Stmt *ib = nest;
  while (ib->kind != ST_BLOCK) ib = ib->kind == ST_FOR ? ib->u.for_.body : ib->u.if_.then_;
  out->v[out->n++] = (Handle){.kind = H_BLOCK, .block = ib->u.block.name};
  return true;
}
