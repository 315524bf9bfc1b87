/* sched_tensorize.c — the tensorize schedule primitive (TVM's): the code
 * under a loop (blockized first) or in a block is matched against a tensor
 * intrinsic's `desc` (sched_intrin.c): the same loop extents, block
 * variables and computation, each desc buffer standing for one buffer of
 * the function at a fixed offset per dimension (an expression of the
 * variables outside the matched code).  The block's body then becomes the
 * intrinsic's `impl` with those buffers and offsets. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_reduce.h"

typedef struct Match {
  Sched *s;
  Span where;
  PtrMap fwd;   /* desc variable → the function's */
  PtrMap inner; /* the function's matched variables (key only) */
  PtrMap buf;   /* desc buffer → the function's */
  PtrMap off;   /* desc buffer → SLin[ndim] */
} Match;

static bool differ(Match *m, const char *fmt, const char *a, const char *b) {
  char what[512];
  snprintf(what, sizeof what, fmt, a, b);
  return sched_fail(m->s, m->where, "cannot tensorize: %s", what);
}

static const Stmt *strip(const Stmt *st) {
  while (st && st->kind == ST_SEQ && st->u.seq.n == 1) st = st->u.seq.items[0];
  return st;
}

static void bind(Match *m, const TirVar *d, TirVar *a) {
  ptrmap_put(&m->fwd, d, a);
  ptrmap_put(&m->inner, a, a);
}

/* a's linear form minus d's (d's variables mapped): the offset, which must
 * use no matched variable. */
static bool offset(Match *m, const PrimExpr *a, const PrimExpr *d, SLin *off) {
  SLin la, ld;
  if (!sched_linear(a, &la) || !sched_linear(d, &ld)) return false;
  *off = la;
  off->c -= ld.c;
  for (int i = 0; i < ld.n; i++) {
    const TirVar *v = ptrmap_get(&m->fwd, ld.v[i]);
    if (!v) return false;
    bool found = false;
    for (int j = 0; j < off->n; j++)
      if (off->v[j] == v) off->k[j] -= ld.k[i], found = true;
    if (!found) return false;
  }
  for (int j = 0; j < off->n; j++)
    if (off->k[j] && ptrmap_has(&m->inner, off->v[j])) return false;
  return true;
}

static bool lin_zero(const SLin *x) {
  for (int i = 0; i < x->n; i++)
    if (x->k[i]) return false;
  return x->c == 0;
}

static bool lin_equal(const SLin *x, const SLin *y) {
  if (x->c != y->c) return false;
  for (int i = 0; i < x->n; i++) {
    int64_t k = 0;
    for (int j = 0; j < y->n; j++)
      if (y->v[j] == x->v[i]) k = y->k[j];
    if (k != x->k[i]) return false;
  }
  for (int j = 0; j < y->n; j++) {
    bool in = false;
    for (int i = 0; i < x->n; i++) in |= x->v[i] == y->v[j];
    if (!in && y->k[j]) return false;
  }
  return true;
}

/* Buffer b at indices ai stands for desc buffer db at di. */
static bool match_access(Match *m, Buffer *b, PrimExpr *const *ai, const Buffer *db,
                         PrimExpr *const *di) {
  Buffer *had = ptrmap_get(&m->buf, db);
  if (had && had != b)
    return differ(m, "the intrinsic's `%%%s` would stand for both `%%%s` and another buffer",
                  db->name, b->name);
  if (b->dtype != db->dtype || b->ndim != db->ndim)
    return differ(m, "`%%%s` differs in dtype or rank from the intrinsic's `%%%s`", b->name,
                  db->name);
  SLin *off = ptrmap_get(&m->off, db);
  bool first = !off;
  if (first) off = arena_alloc(m->s->a, sizeof(SLin) * (size_t)(b->ndim + 1));
  for (int i = 0; i < b->ndim; i++) {
    SLin o;
    if (!offset(m, ai[i], di[i], &o) || (!first && !lin_equal(&o, &off[i])))
      return differ(m, "an index of `%%%s` is not the intrinsic's index of `%%%s` at one offset",
                    b->name, db->name);
    off[i] = o;
  }
  ptrmap_put(&m->buf, db, b);
  ptrmap_put(&m->off, db, off);
  return true;
}

static bool match_expr(Match *m, const PrimExpr *a, const PrimExpr *d) {
  if (a->kind != d->kind)
    return differ(m, "the computation has %s where the intrinsic has %s",
                  a->kind == PE_LOAD ? "a load" : "another expression",
                  d->kind == PE_LOAD ? "a load" : "another expression");
  switch (a->kind) {
    case PE_INT:
      return a->u.i == d->u.i || differ(m, "a constant differs%s%s", "", "");
    case PE_FLOAT:
      return a->u.f == d->u.f || differ(m, "a constant differs%s%s", "", "");
    case PE_VAR:
      return ptrmap_get(&m->fwd, d->u.var) == a->u.var ||
             differ(m, "the computation uses %%%s where the intrinsic uses %%%s", a->u.var->name,
                    d->u.var->name);
    case PE_LOAD:
      return match_access(m, a->u.load.buf, a->u.load.idx, d->u.load.buf, d->u.load.idx);
    case PE_BIN:
      if (a->u.bin.op != d->u.bin.op)
        return differ(m, "the computation has `%s` where the intrinsic has `%s`",
                      prim_binop_text(a->u.bin.op), prim_binop_text(d->u.bin.op));
      return match_expr(m, a->u.bin.a, d->u.bin.a) && match_expr(m, a->u.bin.b, d->u.bin.b);
    case PE_NOT:
    case PE_NEG:
      return match_expr(m, a->u.operand, d->u.operand);
    case PE_CALL:
      if (a->u.call.fn != d->u.call.fn)
        return differ(m, "the computation calls %s where the intrinsic calls %s",
                      prim_intrinsic_name(a->u.call.fn), prim_intrinsic_name(d->u.call.fn));
      for (int i = 0; i < a->u.call.n; i++)
        if (!match_expr(m, a->u.call.args[i], d->u.call.args[i])) return false;
      return true;
    case PE_CAST:
      if (a->u.cast.to != d->u.cast.to || a->u.cast.bits != d->u.cast.bits)
        return differ(m, "a cast differs (%s vs %s)", dtype_name(a->u.cast.to),
                      dtype_name(d->u.cast.to));
      return match_expr(m, a->u.cast.value, d->u.cast.value);
  }
  return false;
}

static bool match_stmt(Match *m, const Stmt *a, const Stmt *d);

static bool match_for(Match *m, const Stmt *a, const Stmt *d) {
  int64_t ea = sched_loop_extent(a), ed = sched_loop_extent(d);
  if (ea < 0 || ea != ed || tir_for_lo(a, 0))
    return sched_fail(m->s, m->where,
                      "cannot tensorize: the loop `%%%s` has extent %lld where the intrinsic's "
                      "`%%%s` has %lld",
                      a->u.for_.vars[0]->name, (long long)ea, d->u.for_.vars[0]->name,
                      (long long)ed);
  bind(m, d->u.for_.vars[0], a->u.for_.vars[0]);
  return match_stmt(m, a->u.for_.body, d->u.for_.body);
}

static bool match_block(Match *m, const Stmt *a, const Stmt *d) {
  const char *an = a->u.block.name, *dn = d->u.block.name;
  if (a->u.block.niters != d->u.block.niters)
    return differ(m, "block \"%s\" has another number of variables than the intrinsic's \"%s\"", an,
                  dn);
  if (!a->u.block.init != !d->u.block.init)
    return differ(m, "block \"%s\" and the intrinsic's \"%s\" differ in having an init", an, dn);
  for (int i = 0; i < a->u.block.niters; i++) {
    const IterVar *x = &a->u.block.iters[i], *y = &d->u.block.iters[i];
    SLin o;
    if (x->reduce != y->reduce || !offset(m, x->binding, y->binding, &o) || !lin_zero(&o))
      return differ(m, "the variable %%%s is not bound as the intrinsic's %%%s", x->var->name,
                    y->var->name);
    bind(m, y->var, x->var);
  }
  return (!a->u.block.init || match_stmt(m, a->u.block.init, d->u.block.init)) &&
         match_stmt(m, a->u.block.body, d->u.block.body);
}

static bool match_stmt(Match *m, const Stmt *a, const Stmt *d) {
  a = strip(a), d = strip(d);
  if (!a || !d || a->kind != d->kind)
    return differ(m, "the code has a `%s` statement where the intrinsic has a `%s` statement",
                  a ? stmt_kind_name(a->kind) : "nothing", d ? stmt_kind_name(d->kind) : "nothing");
  switch (a->kind) {
    case ST_FOR:
      return match_for(m, a, d);
    case ST_BLOCK:
      return match_block(m, a, d);
    case ST_STORE:
      return match_access(m, a->u.store.buf, a->u.store.idx, d->u.store.buf, d->u.store.idx) &&
             match_expr(m, a->u.store.value, d->u.store.value);
    case ST_SEQ:
      if (a->u.seq.n != d->u.seq.n)
        return differ(m, "a sequence has another length than the intrinsic's%s%s", "", "");
      for (int i = 0; i < a->u.seq.n; i++)
        if (!match_stmt(m, a->u.seq.items[i], d->u.seq.items[i])) return false;
      return true;
    default:
      return differ(m, "the code has a %s%s (the intrinsics hold loops, blocks and stores)",
                    stmt_kind_name(a->kind), "");
  }
}

/* ───────────────────────── instantiating impl ───────────────────────── */

typedef struct Inst {
  Sched *s;
  const PrimFunc *desc, *impl;
  Match *m;
  SchedSubst *loops; /* impl's loop variables → new ones */
} Inst;

static PrimExpr **shifted(Inst *in, const Buffer *db, int n, PrimExpr *const *idx) {
  const SLin *off = ptrmap_get(&in->m->off, db);
  PrimExpr **out = arena_alloc(in->s->a, sizeof(PrimExpr *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    out[i] = sched_bin(in->s, PB_ADD, sched_from_linear(in->s, &off[i], idx[i]->dtype), idx[i]);
  return out;
}

/* The desc parameter at impl parameter b's position. */
static const Buffer *desc_param(const Inst *in, const Buffer *b) {
  for (int i = 0; i < in->impl->nparams; i++)
    if (in->impl->params[i] == b) return in->desc->params[i];
  return NULL;
}

static bool inst_expr(void *ctx, const PrimExpr *e) {
  Inst *in = ctx;
  PrimExpr *x = (PrimExpr *)e; /* a fresh copy: ours to change */
  x->span = in->s->step->span;
  const Buffer *db = e->kind == PE_LOAD ? desc_param(in, e->u.load.buf) : NULL;
  if (db) {
    x->u.load.idx = shifted(in, db, e->u.load.n, e->u.load.idx);
    x->u.load.buf = ptrmap_get(&in->m->buf, db);
  }
  return true;
}

static bool inst_stmt(void *ctx, const Stmt *st) {
  Inst *in = ctx;
  Stmt *x = (Stmt *)st;
  x->span = in->s->step->span;
  if (st->kind == ST_FOR) {
    PrimExpr *nv = ptrmap_get(&in->loops->vars, st->u.for_.vars[0]);
    if (nv) x->u.for_.vars = arena_memdup(in->s->a, &nv->u.var, sizeof(TirVar *));
  }
  const Buffer *db = st->kind == ST_STORE ? desc_param(in, st->u.store.buf) : NULL;
  if (db) {
    x->u.store.idx = shifted(in, db, st->u.store.n, st->u.store.idx);
    x->u.store.buf = ptrmap_get(&in->m->buf, db);
  }
  return true;
}

/* impl's body with its loop variables new and its buffers the matched
 * ones at their offsets. */
static Stmt *instantiate(Sched *s, const SchedIntrin *it, Match *m) {
  SchedSubst sub = {0};
  Inst in = {s, it->desc, it->impl, m, &sub};
  PtrVec todo = {0};
  vec_push(&todo, it->impl->body);
  while (todo.len) {
    Stmt *x = todo.items[--todo.len];
    if (!x) continue;
    if (x->kind == ST_FOR)
      for (int i = 0; i < x->u.for_.nvars; i++) {
        TirVar *v = x->u.for_.vars[i];
        subst_var(&sub, v, sched_var(s, sched_new_var(s, v->name, v->dtype)));
      }
    stmt_children(x, NULL, &todo);
  }
  vec_free(&todo);
  Stmt *body = sched_normalize(s, sched_copy(s, it->impl->body, &sub));
  TirVisitor v = {inst_stmt, inst_expr, &in};
  tir_walk(body, &v);
  subst_free(&sub);
  return body;
}

/* ───────────────────────── the primitive ───────────────────────── */

static void match_free(Match *m) {
  ptrmap_free(&m->fwd), ptrmap_free(&m->inner), ptrmap_free(&m->buf), ptrmap_free(&m->off);
}

static bool unknown_intrin(Sched *s, const SchedArg *a, const char *name) {
  sched_fail(s, a->span, "no tensor intrinsic named \"%s\"", name);
  StrBuf b = {0};
  for (int i = 0; i < sched_intrin_count(); i++)
    sb_printf(&b, "%s%s", i ? ", " : "", sched_intrin_name(i));
  diag_hint(s->d, "the intrinsics: %s", b.data);
  sb_free(&b);
  return false;
}

/* The block to tensorize: the given one, or the loop blockized. */
static bool target_block(Sched *s, const SchedArg *a, SPath *p) {
  Handle h;
  if (!sched_eval_arg(s, a, &h)) return false;
  if (h.kind == H_INT)
    return sched_fail(s, a->span, "expected a block or a loop, found an integer");
  const char *name = h.block;
  if (h.kind == H_LOOP && !sr_blockize(s, h.loop, a->span, &name)) return false;
  return sched_need_block(s, name, a->span, p);
}

bool sp_tensorize(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  const SchedArg *ta = sched_need(s, st, 0, "block_or_loop", "a block or a loop");
  const SchedArg *ia = ta ? sched_need(s, st, 1, "tensor_intrin", "an intrinsic's name") : NULL;
  const char *iname;
  if (!ia || !sched_arg_str(s, ia, &iname)) return false;
  const SchedIntrin *it = sched_intrin(iname);
  if (!it) return unknown_intrin(s, ia, iname);
  SPath p;
  if (!target_block(s, ta, &p)) return false;
  Stmt *blk = p.node[p.n - 1];
  Match m = {.s = s, .where = ta->span};
  Stmt *desc = sched_normalize(s, it->desc->body);
  bool ok = match_stmt(&m, blk->u.block.body, desc);
  for (int i = 0; ok && i < it->desc->nparams; i++)
    if (!ptrmap_get(&m.buf, it->desc->params[i]))
      ok = differ(&m, "nothing stands for the intrinsic's `%%%s`%s", it->desc->params[i]->name, "");
  if (!ok) {
    sched_note(s, ia->span, "the intrinsic \"%s\": %s", iname, it->help);
    match_free(&m);
    return false;
  }
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *blk;
  c->u.block.body = instantiate(s, it, &m);
  match_free(&m);
  sched_set_body(s, sched_replace(s, &p, c));
  return true;
}
