/* sched_blockize.c — the blockize schedule primitive (TVM's): the loops
 * from a loop down to the one block under it become the body of a new
 * outer block "<name>_o".  Each binding of the inner block is split as
 * outer * E + inner, inner over the loops under the given one (0 <= inner
 * < E) and outer over the loops above: the outer block gets a variable
 * %v_o = outer (spatial or reduce as %v), the inner block %v_i = inner,
 * and the inner body reads %v_o * E + %v_i for %v.  An inner init moves to
 * the outer block as a block "<name>_init" over the inner spatial loops. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_reduce.h"

typedef struct Bz {
  Stmt *loop, *blk;
  SPath lp, bp;
  int li;                       /* loop's index in bp */
  Stmt *inner[SCHED_MAX_DEPTH]; /* the loops from `loop` down */
  int ninner;
  IterVar outer[SCHED_MAX_VALS];
  int nouter;
  SLin in[SCHED_MAX_VALS];         /* per inner iteration variable: its inner part */
  PrimExpr *whole[SCHED_MAX_VALS]; /* what the variable is, in the new variables */
} Bz;

static bool is_inner(const Bz *z, const TirVar *v) {
  for (int i = 0; i < z->ninner; i++)
    if (z->inner[i]->u.for_.vars[0] == v) return true;
  return false;
}

static int64_t extent_of(const Bz *z, const TirVar *v) {
  for (int i = 0; i < z->ninner; i++)
    if (z->inner[i]->u.for_.vars[0] == v) return sched_loop_extent(z->inner[i]);
  return -1;
}

/* The chain from the loop to its only block: loops (constant, from 0). */
static bool chain(Sched *s, Bz *z, Span where) {
  const char *lv = z->loop->u.for_.vars[0]->name;
  const Stmt *blocks[2];
  int nb = sched_blocks_under(z->loop, blocks, 2);
  if (nb != 1)
    return sched_fail(s, where, "cannot blockize `%%%s`: it must hold exactly one block, not %d",
                      lv, nb);
  z->blk = (Stmt *)blocks[0];
  sched_find_block(s, z->blk->u.block.name, &z->bp);
  for (z->li = 0; z->bp.node[z->li] != z->loop; z->li++) continue;
  for (int i = z->li; i < z->bp.n - 1; i++) {
    Stmt *x = z->bp.node[i];
    if (x->kind == ST_SEQ && x->u.seq.n == 1) continue;
    if (x->kind != ST_FOR)
      return sched_fail(s, where,
                        "cannot blockize `%%%s`: a `%s` statement stands between it and block "
                        "\"%s\" (only loops may)",
                        lv, stmt_kind_name(x->kind), z->blk->u.block.name);
    if (sched_loop_extent(x) < 0 || tir_for_lo(x, 0))
      return sched_fail(s, where,
                        "cannot blockize `%%%s`: loop `%%%s` needs a constant extent from 0", lv,
                        x->u.for_.vars[0]->name);
    z->inner[z->ninner++] = x;
  }
  return true;
}

/* Splits binding j: outer * E + inner.  Makes the outer variable if the
 * outer part is not 0, and the inner part in z->in[j]. */
static bool split_binding(Sched *s, Bz *z, int j, Span where) {
  const IterVar *it = &z->blk->u.block.iters[j];
  SLin l, in = {0}, out = {0};
  if (!sched_linear(it->binding, &l))
    return sched_fail(s, where, "cannot blockize: the binding of %%%s is not affine",
                      it->var->name);
  int64_t e = 1;
  for (int i = 0; i < l.n; i++) {
    SLin *to = is_inner(z, l.v[i]) ? &in : &out;
    to->v[to->n] = l.v[i], to->k[to->n++] = l.k[i];
    if (to == &in && l.k[i] <= 0)
      return sched_fail(s, where, "cannot blockize: the binding of %%%s has a negative step",
                        it->var->name);
    if (to == &in) e += l.k[i] * (extent_of(z, l.v[i]) - 1);
  }
  out.c = l.c;
  bool ok = out.c % e == 0;
  for (int i = 0; i < out.n; i++) ok &= out.k[i] % e == 0;
  if (!ok)
    return sched_fail(s, where,
                      "cannot blockize: the binding of %%%s is not (outer part) * %lld + (inner "
                      "part) over the loops from `%%%s` down",
                      it->var->name, (long long)e, z->loop->u.for_.vars[0]->name);
  out.c /= e;
  for (int i = 0; i < out.n; i++) out.k[i] /= e;
  z->in[j] = in;
  PrimExpr *o = NULL;
  if (out.n) {
    char name[256];
    snprintf(name, sizeof name, "%s_o", it->var->name);
    TirVar *ov = sr_block_var(s, name, it->var->dtype);
    z->outer[z->nouter++] = (IterVar){it->reduce, ov, sched_from_linear(s, &out, it->var->dtype)};
    o = sched_var(s, ov);
  } else if (out.c) {
    o = sched_int(s, out.c, it->var->dtype);
  }
  z->whole[j] = o ? sched_bin(s, PB_MUL, o, sched_int(s, e, it->var->dtype)) : NULL;
  return true;
}

/* The inner block: %v_i = inner part for each binding with one; the body
 * (and init when kept) reads whole[j] for %v. */
static Stmt *inner_block(Sched *s, Bz *z, bool keep_init) {
  const Stmt *b = z->blk;
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *b;
  c->u.block.iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(b->u.block.niters + 1));
  int n = 0;
  SchedSubst m = {0};
  for (int j = 0; j < b->u.block.niters; j++) {
    const IterVar *it = &b->u.block.iters[j];
    PrimExpr *w = z->whole[j];
    if (z->in[j].n) {
      char name[256];
      snprintf(name, sizeof name, "%s_i", it->var->name);
      TirVar *iv = sr_block_var(s, name, it->var->dtype);
      c->u.block.iters[n++] =
          (IterVar){it->reduce, iv, sched_from_linear(s, &z->in[j], it->var->dtype)};
      w = w ? sched_bin(s, PB_ADD, w, sched_var(s, iv)) : sched_var(s, iv);
    }
    subst_var(&m, it->var, w ? w : sched_int(s, 0, it->var->dtype));
  }
  c->u.block.niters = n;
  c->u.block.body = sched_copy(s, b->u.block.body, &m);
  c->u.block.init = keep_init && b->u.block.init ? sched_copy(s, b->u.block.init, &m) : NULL;
  subst_free(&m);
  return c;
}

/* The outer block's init: a block "<name>_init" under copies of the inner
 * loops the spatial bindings use (none of them used by a reduction one). */
static bool outer_init(Sched *s, Bz *z, Span where, Stmt **init) {
  const Stmt *b = z->blk;
  SchedSubst lm = {0};
  Stmt *loops[SCHED_MAX_DEPTH];
  int nl = 0;
  for (int i = 0; i < z->ninner; i++) {
    const TirVar *v = z->inner[i]->u.for_.vars[0];
    if (!sched_var_bound_as(b, v, false)) continue;
    if (sched_var_bound_as(b, v, true)) {
      subst_free(&lm);
      return sched_fail(s, where,
                        "cannot blockize: loop `%%%s` is bound to both a spatial and a reduction "
                        "variable of block \"%s\"",
                        v->name, b->u.block.name);
    }
    char name[256];
    snprintf(name, sizeof name, "%s_init", v->name);
    TirVar *nv = sched_new_var(s, name, v->dtype);
    subst_var(&lm, v, sched_var(s, nv));
    loops[nl] = sched_for(s, nv, sched_copy_expr(s, z->inner[i]->u.for_.hi[0], NULL),
                          z->inner[i]->u.for_.loop, NULL);
    nl++;
  }
  Stmt *ib = ARENA_NEW(s->a, Stmt);
  *ib = *b;
  char name[256];
  snprintf(name, sizeof name, "%s_init", b->u.block.name);
  ib->u.block.name = sched_fresh_name(s, name);
  ib->u.block.iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(b->u.block.niters + 1));
  int n = 0;
  SchedSubst m = {0};
  for (int j = 0; j < b->u.block.niters; j++) {
    const IterVar *it = &b->u.block.iters[j];
    if (it->reduce) continue;
    PrimExpr *w = z->whole[j];
    if (z->in[j].n) {
      TirVar *iv = sr_block_var(s, it->var->name, it->var->dtype);
      ib->u.block.iters[n++] = (IterVar){
          false, iv, sched_copy_expr(s, sched_from_linear(s, &z->in[j], it->var->dtype), &lm)};
      w = w ? sched_bin(s, PB_ADD, w, sched_var(s, iv)) : sched_var(s, iv);
    }
    subst_var(&m, it->var, w ? w : sched_int(s, 0, it->var->dtype));
  }
  ib->u.block.niters = n;
  ib->u.block.init = NULL;
  ib->u.block.body = sched_copy(s, b->u.block.init, &m);
  subst_free(&m);
  subst_free(&lm);
  Stmt *body = ib;
  for (int i = nl - 1; i >= 0; i--) loops[i]->u.for_.body = body, body = loops[i];
  *init = body;
  return true;
}

bool sr_blockize(Sched *s, TirVar *v, Span where, const char **outer) {
  Bz z = {0};
  if (!sched_need_loop(s, v, where, &z.lp)) return false;
  z.loop = z.lp.node[z.lp.n - 1];
  if (!chain(s, &z, where)) return false;
  if (z.blk->u.block.niters > SCHED_MAX_VALS)
    return sched_fail(s, where, "cannot blockize: block \"%s\" has too many variables",
                      z.blk->u.block.name);
  for (int j = 0; j < z.blk->u.block.niters; j++)
    if (!split_binding(s, &z, j, where)) return false;
  Stmt *init = NULL;
  if (z.blk->u.block.init && !outer_init(s, &z, where, &init)) return false;
  SPath sub = {0};
  for (int i = z.li; i < z.bp.n; i++) sub.node[sub.n++] = z.bp.node[i];
  Stmt *nest = sched_replace(s, &sub, inner_block(s, &z, false));
  Stmt *ob = ARENA_NEW(s->a, Stmt);
  *ob = (Stmt){.kind = ST_BLOCK, .span = s->step->span};
  char name[256];
  snprintf(name, sizeof name, "%s_o", z.blk->u.block.name);
  ob->u.block.name = *outer = sched_fresh_name(s, name);
  ob->u.block.niters = z.nouter;
  ob->u.block.iters = arena_memdup(s->a, z.outer, sizeof(IterVar) * (size_t)(z.nouter + 1));
  ob->u.block.init = init;
  ob->u.block.body = nest;
  sched_set_body(s, sched_replace(s, &z.lp, ob));
  return true;
}

bool sp_blockize(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *a = sched_need(s, st, 0, "target", "a loop");
  TirVar *v;
  const char *name;
  if (!a || !sched_arg_loop(s, a, &v) || !sr_blockize(s, v, a->span, &name)) return false;
  out->v[out->n++] = (Handle){.kind = H_BLOCK, .block = name};
  return true;
}
