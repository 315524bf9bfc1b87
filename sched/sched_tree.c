/* sched_tree.c — the tree utilities of sched_int.h: finding loops and
 * blocks, copying with substitution, replacing along a path, normalizing
 * loops to one variable each, builders, accesses and linear forms. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_int.h"

/* ───────────────────────── finding ───────────────────────── */

typedef bool (*Match)(const Stmt *st, const void *key);

static bool find(Stmt *st, Match m, const void *key, SPath *p) {
  if (!st || p->n >= SCHED_MAX_DEPTH) return false;
  p->node[p->n++] = st;
  if (m(st, key)) return true;
  PtrVec kids = {0};
  stmt_children(st, NULL, &kids);
  for (size_t i = 0; i < kids.len; i++)
    if (find(kids.items[i], m, key, p)) {
      vec_free(&kids);
      return true;
    }
  vec_free(&kids);
  p->n--;
  return false;
}

static bool is_loop_of(const Stmt *st, const void *v) {
  return st->kind == ST_FOR && st->u.for_.vars[0] == v;
}

static bool is_block_named(const Stmt *st, const void *name) {
  return st->kind == ST_BLOCK && strcmp(st->u.block.name, name) == 0;
}

bool sched_find_loop(Sched *s, const TirVar *v, SPath *p) {
  p->n = 0;
  return find(s->f->body, is_loop_of, v, p);
}

bool sched_find_block(Sched *s, const char *name, SPath *p) {
  p->n = 0;
  return find(s->f->body, is_block_named, name, p);
}

bool sched_need_loop(Sched *s, TirVar *v, Span where, SPath *p) {
  if (sched_find_loop(s, v, p)) return true;
  return sched_fail(s, where, "`@%s` has no loop `%%%s` any more (a step replaced it)", s->f->name,
                    v->name);
}

bool sched_need_block(Sched *s, const char *name, Span where, SPath *p) {
  if (sched_find_block(s, name, p)) return true;
  return sched_fail(s, where, "`@%s` has no block named \"%s\"", s->f->name, name);
}

int sched_path_loops(const SPath *p, Stmt **loops, int max) {
  int n = 0;
  for (int i = 0; i + 1 < p->n && n < max; i++)
    if (p->node[i]->kind == ST_FOR) loops[n++] = p->node[i];
  return n;
}

/* ───────────────────────── building ───────────────────────── */

static Span here(const Sched *s) { return s->step ? s->step->span : s->f->span; }

PrimExpr *sched_int(Sched *s, int64_t v, DType dt) {
  PrimExpr *e = ARENA_NEW(s->a, PrimExpr);
  *e = (PrimExpr){.kind = PE_INT, .dtype = dt, .span = here(s)};
  e->u.i = v;
  return e;
}

PrimExpr *sched_var(Sched *s, TirVar *v) {
  PrimExpr *e = ARENA_NEW(s->a, PrimExpr);
  *e = (PrimExpr){.kind = PE_VAR, .dtype = v->dtype, .span = here(s)};
  e->u.var = v;
  return e;
}

static bool fold(PrimBinOp op, int64_t a, int64_t b, int64_t *r) {
  switch (op) {
    case PB_ADD:
      return !__builtin_add_overflow(a, b, r);
    case PB_SUB:
      return !__builtin_sub_overflow(a, b, r);
    case PB_MUL:
      return !__builtin_mul_overflow(a, b, r);
    case PB_DIV:
      return b > 0 && a >= 0 ? (*r = a / b, true) : false;
    case PB_MOD:
      return b > 0 && a >= 0 ? (*r = a % b, true) : false;
    default:
      return false;
  }
}

static bool is_int(const PrimExpr *e, int64_t v) { return e->kind == PE_INT && e->u.i == v; }

PrimExpr *sched_bin(Sched *s, PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  int64_t r;
  if (a->kind == PE_INT && b->kind == PE_INT && fold(op, a->u.i, b->u.i, &r))
    return sched_int(s, r, dtype_bytes(a->dtype) >= dtype_bytes(b->dtype) ? a->dtype : b->dtype);
  if ((op == PB_ADD && is_int(b, 0)) || (op == PB_SUB && is_int(b, 0)) ||
      ((op == PB_MUL || op == PB_DIV) && is_int(b, 1)))
    return a;
  if ((op == PB_ADD && is_int(a, 0)) || (op == PB_MUL && is_int(a, 1))) return b;
  if (op == PB_MUL && (is_int(a, 0) || is_int(b, 0))) return is_int(a, 0) ? a : b;
  PrimExpr *e = ARENA_NEW(s->a, PrimExpr);
  bool cmp = op >= PB_LT;
  DType dt = dtype_bytes(a->dtype) >= dtype_bytes(b->dtype) ? a->dtype : b->dtype;
  *e = (PrimExpr){.kind = PE_BIN, .dtype = cmp ? DT_BOOL : dt, .span = here(s)};
  e->u.bin.op = op, e->u.bin.a = a, e->u.bin.b = b;
  return e;
}

/* Is `name` used by a variable, block or buffer of st? */
typedef struct NameUse {
  const char *name;
  bool used;
} NameUse;

static void name_binder(void *ctx, TirVar *v) {
  NameUse *u = ctx;
  if (strcmp(v->name, u->name) == 0) u->used = true;
}

static bool name_stmt(void *ctx, const Stmt *st) {
  NameUse *u = ctx;
  stmt_binders(st, name_binder, u);
  if (st->kind == ST_BLOCK && strcmp(st->u.block.name, u->name) == 0) u->used = true;
  if (st->kind == ST_ALLOC && strcmp(st->u.alloc->name, u->name) == 0) u->used = true;
  return !u->used;
}

static bool name_used(const Sched *s, const char *name) {
  NameUse u = {name, false};
  for (int i = 0; i < s->f->nparams; i++)
    if (strcmp(s->f->params[i]->name, name) == 0) return true;
  for (int i = 0; i < s->f->nsizevars; i++)
    if (strcmp(s->f->sizevars[i]->name, name) == 0) return true;
  TirVisitor v = {name_stmt, NULL, &u};
  tir_walk(s->f->body, &v);
  return u.used || strmap_get(&s->env, name) != NULL;
}

const char *sched_fresh_name(Sched *s, const char *base) {
  if (!name_used(s, base)) return arena_strdup(s->a, base);
  char buf[256];
  for (int i = 1;; i++) {
    snprintf(buf, sizeof buf, "%s_%d", base, i);
    if (!name_used(s, buf)) return arena_strdup(s->a, buf);
  }
}

TirVar *sched_new_var(Sched *s, const char *name, DType dt) {
  TirVar *v = ARENA_NEW(s->a, TirVar);
  *v = (TirVar){
      .name = sched_fresh_name(s, name), .dtype = dt, .id = ir_fresh_id(), .span = here(s)};
  return v;
}

Stmt *sched_for(Sched *s, TirVar *v, PrimExpr *extent, LoopKind k, Stmt *body) {
  Stmt *st = ARENA_NEW(s->a, Stmt);
  *st = (Stmt){.kind = ST_FOR, .span = here(s)};
  st->u.for_.loop = k, st->u.for_.nvars = 1;
  st->u.for_.vars = arena_memdup(s->a, &v, sizeof v);
  st->u.for_.hi = arena_memdup(s->a, &extent, sizeof extent);
  st->u.for_.lo = NULL;
  st->u.for_.body = body;
  return st;
}

/* Appends st to v, splicing nested sequences. */
static void flat_push(PtrVec *v, Stmt *st) {
  if (!st) return;
  if (st->kind != ST_SEQ) {
    vec_push(v, st);
    return;
  }
  for (int i = 0; i < st->u.seq.n; i++) flat_push(v, st->u.seq.items[i]);
}

Stmt *sched_seq(Sched *s, int n, Stmt **items) {
  PtrVec v = {0};
  for (int i = 0; i < n; i++) flat_push(&v, items[i]);
  Stmt *st = ARENA_NEW(s->a, Stmt);
  *st = (Stmt){.kind = ST_SEQ, .span = here(s)};
  st->u.seq.n = (int)v.len;
  st->u.seq.items = (Stmt **)vec_finish(&v, s->a);
  return st;
}

Stmt *sched_if(Sched *s, PrimExpr *cond, Stmt *then_) {
  Stmt *st = ARENA_NEW(s->a, Stmt);
  *st = (Stmt){.kind = ST_IF, .span = here(s)};
  st->u.if_.cond = cond, st->u.if_.then_ = then_;
  return st;
}

/* ───────────────────────── copying ───────────────────────── */

void subst_var(SchedSubst *m, const TirVar *v, PrimExpr *by) { ptrmap_put(&m->vars, v, by); }
void subst_buf(SchedSubst *m, const Buffer *b, Buffer *by) { ptrmap_put(&m->bufs, b, by); }
void subst_free(SchedSubst *m) {
  ptrmap_free(&m->vars);
  ptrmap_free(&m->bufs);
}

static Buffer *map_buf(const SchedSubst *m, Buffer *b) {
  Buffer *to = m ? ptrmap_get(&m->bufs, b) : NULL;
  return to ? to : b;
}

static PrimExpr **copy_exprs(Sched *s, PrimExpr *const *v, int n, const SchedSubst *m) {
  if (!v) return NULL;
  PrimExpr **out = arena_alloc(s->a, sizeof(PrimExpr *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) out[i] = v[i] ? sched_copy_expr(s, v[i], m) : NULL;
  return out;
}

PrimExpr *sched_copy_expr(Sched *s, const PrimExpr *e, const SchedSubst *m) {
  if (e->kind == PE_VAR && m) {
    PrimExpr *by = ptrmap_get(&m->vars, e->u.var);
    if (by) return sched_copy_expr(s, by, NULL);
  }
  PrimExpr *c = ARENA_NEW(s->a, PrimExpr);
  *c = *e;
  switch (e->kind) {
    case PE_LOAD:
      c->u.load.buf = map_buf(m, e->u.load.buf);
      c->u.load.idx = copy_exprs(s, e->u.load.idx, e->u.load.n, m);
      break;
    case PE_BIN:
      c->u.bin.a = sched_copy_expr(s, e->u.bin.a, m);
      c->u.bin.b = sched_copy_expr(s, e->u.bin.b, m);
      break;
    case PE_NOT:
    case PE_NEG:
      c->u.operand = sched_copy_expr(s, e->u.operand, m);
      break;
    case PE_CALL:
      c->u.call.args = copy_exprs(s, e->u.call.args, e->u.call.n, m);
      break;
    case PE_CAST:
      c->u.cast.value = sched_copy_expr(s, e->u.cast.value, m);
      break;
    default:
      break;
  }
  return c;
}

static Stmt *copy_or_null(Sched *s, const Stmt *st, const SchedSubst *m) {
  return st ? sched_copy(s, st, m) : NULL;
}

static void copy_block(Sched *s, Stmt *c, const Stmt *st, const SchedSubst *m) {
  int n = st->u.block.niters;
  c->u.block.iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    c->u.block.iters[i] = st->u.block.iters[i];
    c->u.block.iters[i].binding = sched_copy_expr(s, st->u.block.iters[i].binding, m);
  }
  c->u.block.init = copy_or_null(s, st->u.block.init, m);
  c->u.block.body = copy_or_null(s, st->u.block.body, m);
}

Stmt *sched_copy(Sched *s, const Stmt *st, const SchedSubst *m) {
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *st;
  switch (st->kind) {
    case ST_SEQ:
      c->u.seq.items = arena_alloc(s->a, sizeof(Stmt *) * (size_t)(st->u.seq.n ? st->u.seq.n : 1));
      for (int i = 0; i < st->u.seq.n; i++)
        c->u.seq.items[i] = sched_copy(s, st->u.seq.items[i], m);
      break;
    case ST_FOR:
      c->u.for_.lo = copy_exprs(s, st->u.for_.lo, st->u.for_.nvars, m);
      c->u.for_.hi = copy_exprs(s, st->u.for_.hi, st->u.for_.nvars, m);
      c->u.for_.body = sched_copy(s, st->u.for_.body, m);
      break;
    case ST_BLOCK:
      copy_block(s, c, st, m);
      break;
    case ST_STORE:
      c->u.store.buf = map_buf(m, st->u.store.buf);
      c->u.store.idx = copy_exprs(s, st->u.store.idx, st->u.store.n, m);
      c->u.store.value = sched_copy_expr(s, st->u.store.value, m);
      break;
    case ST_ALLOC:
      c->u.alloc = map_buf(m, st->u.alloc);
      break;
    case ST_LET:
      c->u.let.value = sched_copy_expr(s, st->u.let.value, m);
      break;
    case ST_IF:
      c->u.if_.cond = sched_copy_expr(s, st->u.if_.cond, m);
      c->u.if_.then_ = copy_or_null(s, st->u.if_.then_, m);
      c->u.if_.else_ = copy_or_null(s, st->u.if_.else_, m);
      break;
  }
  return c;
}

/* ───────────────────────── replacing ───────────────────────── */

/* parent with its child `old` replaced by `with` (NULL: dropped). */
static Stmt *replace_child(Sched *s, const Stmt *parent, const Stmt *old, Stmt *with) {
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *parent;
  switch (parent->kind) {
    case ST_SEQ: {
      PtrVec v = {0};
      for (int i = 0; i < parent->u.seq.n; i++)
        flat_push(&v, parent->u.seq.items[i] == old ? with : parent->u.seq.items[i]);
      c->u.seq.n = (int)v.len;
      c->u.seq.items = (Stmt **)vec_finish(&v, s->a);
      return c;
    }
    case ST_FOR:
      c->u.for_.body = with ? with : sched_seq(s, 0, NULL);
      return c;
    case ST_BLOCK:
      if (parent->u.block.init == old) c->u.block.init = with;
      if (parent->u.block.body == old) c->u.block.body = with ? with : sched_seq(s, 0, NULL);
      return c;
    case ST_IF:
      if (parent->u.if_.then_ == old) c->u.if_.then_ = with ? with : sched_seq(s, 0, NULL);
      if (parent->u.if_.else_ == old) c->u.if_.else_ = with;
      return c;
    default:
      return c;
  }
}

Stmt *sched_replace(Sched *s, const SPath *p, Stmt *with) {
  Stmt *cur = with;
  for (int i = p->n - 1; i > 0; i--) cur = replace_child(s, p->node[i - 1], p->node[i], cur);
  return p->n > 1 ? cur : (with ? with : sched_seq(s, 0, NULL));
}

void sched_set_body(Sched *s, Stmt *body) { s->f->body = sched_seq(s, 1, &body); }

/* ───────────────────────── normalizing ───────────────────────── */

static Stmt *norm(Sched *s, const Stmt *st);

/* for %i, %j in grid(a, b) → for %i in range(0, a) { for %j in range(0, b) }. */
static Stmt *norm_for(Sched *s, const Stmt *st) {
  Stmt *body = norm(s, st->u.for_.body);
  for (int i = st->u.for_.nvars - 1; i >= 0; i--) {
    LoopKind k = st->u.for_.loop == LOOP_GRID ? LOOP_RANGE : st->u.for_.loop;
    Stmt *f = sched_for(s, st->u.for_.vars[i], st->u.for_.hi[i], k, body);
    f->span = st->span;
    const PrimExpr *lo = tir_for_lo(st, i);
    if (lo) {
      f->u.for_.lo = arena_alloc(s->a, sizeof(PrimExpr *));
      f->u.for_.lo[0] = (PrimExpr *)lo;
    }
    body = f;
  }
  return body;
}

static Stmt *norm(Sched *s, const Stmt *st) {
  if (!st) return NULL;
  if (st->kind == ST_FOR) return norm_for(s, st);
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *st;
  switch (st->kind) {
    case ST_SEQ: {
      PtrVec v = {0};
      for (int i = 0; i < st->u.seq.n; i++) flat_push(&v, norm(s, st->u.seq.items[i]));
      c->u.seq.n = (int)v.len;
      c->u.seq.items = (Stmt **)vec_finish(&v, s->a);
      break;
    }
    case ST_BLOCK:
      c->u.block.init = norm(s, st->u.block.init);
      c->u.block.body = norm(s, st->u.block.body);
      break;
    case ST_IF:
      c->u.if_.then_ = norm(s, st->u.if_.then_);
      c->u.if_.else_ = norm(s, st->u.if_.else_);
      break;
    default:
      break;
  }
  return c;
}

Stmt *sched_normalize(Sched *s, const Stmt *body) {
  Stmt *b = norm(s, body);
  return b->kind == ST_SEQ ? b : sched_seq(s, 1, &b);
}

/* ───────────────────────── questions ───────────────────────── */

int64_t sched_loop_extent(const Stmt *loop) {
  const PrimExpr *hi = loop->u.for_.hi[0], *lo = tir_for_lo(loop, 0);
  if (hi->kind != PE_INT || (lo && lo->kind != PE_INT)) return -1;
  return hi->u.i - (lo ? lo->u.i : 0);
}

typedef struct Uses {
  const TirVar *v;
  bool found;
} Uses;

static bool uses_expr(void *ctx, const PrimExpr *e) {
  Uses *u = ctx;
  if (e->kind == PE_VAR && e->u.var == u->v) u->found = true;
  return !u->found;
}

static bool uses_stmt(void *ctx, const Stmt *st) { return !((Uses *)ctx)->found; }

bool sched_expr_uses(const PrimExpr *e, const TirVar *v) {
  Uses u = {v, false};
  TirVisitor vis = {uses_stmt, uses_expr, &u};
  tir_walk_expr(e, &vis);
  return u.found;
}

bool sched_stmt_uses(const Stmt *st, const TirVar *v) {
  Uses u = {v, false};
  TirVisitor vis = {uses_stmt, uses_expr, &u};
  if (st) tir_walk(st, &vis);
  return u.found;
}

typedef struct Blocks {
  const Stmt **out;
  int n, max;
} Blocks;

static bool collect_block(void *ctx, const Stmt *st) {
  Blocks *b = ctx;
  if (st->kind == ST_BLOCK && b->n < b->max) b->out[b->n++] = st;
  return true;
}

int sched_blocks_under(const Stmt *st, const Stmt **out, int max) {
  Blocks b = {out, 0, max};
  TirVisitor v = {collect_block, NULL, &b};
  if (st) tir_walk(st, &v);
  return b.n;
}

bool sched_var_bound_as(const Stmt *st, const TirVar *v, bool reduce) {
  const Stmt *blocks[256];
  int n = sched_blocks_under(st, blocks, 256);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < blocks[i]->u.block.niters; j++) {
      const IterVar *it = &blocks[i]->u.block.iters[j];
      if (it->reduce == reduce && sched_expr_uses(it->binding, v)) return true;
    }
  return false;
}

/* ───────────────────────── accesses ───────────────────────── */

typedef struct Acc {
  SAccess *out;
  int n, max;
  const Stmt *top;
} Acc;

static bool acc_expr(void *ctx, const PrimExpr *e) {
  Acc *a = ctx;
  if (e->kind == PE_LOAD && a->n < a->max)
    a->out[a->n++] = (SAccess){e->u.load.buf, e->u.load.n, e->u.load.idx, false};
  return true;
}

static bool acc_stmt(void *ctx, const Stmt *st) {
  Acc *a = ctx;
  if (st->kind == ST_STORE && a->n < a->max)
    a->out[a->n++] = (SAccess){st->u.store.buf, st->u.store.n, st->u.store.idx, true};
  return true;
}

int sched_block_accesses(const Stmt *block, SAccess *out, int max) {
  Acc a = {out, 0, max, block};
  TirVisitor v = {acc_stmt, acc_expr, &a};
  if (block->u.block.init) tir_walk(block->u.block.init, &v);
  tir_walk(block->u.block.body, &v);
  return a.n;
}

/* ───────────────────────── linear forms ───────────────────────── */

static bool lin_add(SLin *l, const TirVar *v, int64_t k) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == v) return !__builtin_add_overflow(l->k[i], k, &l->k[i]);
  if (l->n == SCHED_LIN_TERMS) return false;
  l->v[l->n] = v, l->k[l->n++] = k;
  return true;
}

static bool lin_scale(SLin *l, int64_t k) {
  if (__builtin_mul_overflow(l->c, k, &l->c)) return false;
  for (int i = 0; i < l->n; i++)
    if (__builtin_mul_overflow(l->k[i], k, &l->k[i])) return false;
  return true;
}

static bool lin_sum(SLin *a, const SLin *b, int64_t sign) {
  if (__builtin_add_overflow(a->c, sign * b->c, &a->c)) return false;
  for (int i = 0; i < b->n; i++)
    if (!lin_add(a, b->v[i], sign * b->k[i])) return false;
  return true;
}

bool sched_linear(const PrimExpr *e, SLin *out) {
  *out = (SLin){0};
  switch (e->kind) {
    case PE_INT:
      out->c = e->u.i;
      return true;
    case PE_VAR:
      return lin_add(out, e->u.var, 1);
    case PE_NEG:
      return sched_linear(e->u.operand, out) && lin_scale(out, -1);
    case PE_CAST:
      return dtype_is_int(e->u.cast.to) && !e->u.cast.bits && sched_linear(e->u.cast.value, out);
    case PE_BIN: {
      SLin b;
      if (!sched_linear(e->u.bin.a, out) || !sched_linear(e->u.bin.b, &b)) return false;
      if (e->u.bin.op == PB_ADD) return lin_sum(out, &b, 1);
      if (e->u.bin.op == PB_SUB) return lin_sum(out, &b, -1);
      if (e->u.bin.op != PB_MUL) return false;
      if (b.n == 0) return lin_scale(out, b.c);
      if (out->n == 0) {
        int64_t k = out->c;
        *out = b;
        return lin_scale(out, k);
      }
      return false;
    }
    default:
      return false;
  }
}

PrimExpr *sched_from_linear(Sched *s, const SLin *l, DType dt) {
  PrimExpr *e = NULL;
  for (int i = 0; i < l->n; i++) {
    if (!l->k[i]) continue;
    PrimExpr *t = sched_bin(s, PB_MUL, sched_var(s, (TirVar *)l->v[i]), sched_int(s, l->k[i], dt));
    e = e ? sched_bin(s, PB_ADD, e, t) : t;
  }
  if (!e) return sched_int(s, l->c, dt);
  return l->c ? sched_bin(s, PB_ADD, e, sched_int(s, l->c, dt)) : e;
}
