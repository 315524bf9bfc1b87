/* sched_compute_at.c — schedule primitives that move computation:
 * compute_at and reverse_compute_at (a block and the loops that are only
 * its own moved under a loop of its consumer / producer, covering the
 * region one iteration of that loop needs / makes: sched_region.c), and
 * compute_inline / reverse_compute_inline (a block's store folded into
 * the blocks that read / the block that writes its buffer). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/tir_walk.h"
#include "sched/sched_int.h"

enum { MAXB = 64, MAXA = 64 };

/* ───────────────────────── shared checks ───────────────────────── */

static int count_blocks(const Stmt *st) {
  const Stmt *b[2];
  return sched_blocks_under(st, b, 2);
}

/* The depth in p of the outermost statement holding the block at p's end
 * and nothing else: the block with its own loops (and their guards). */
static int own_root(const SPath *p) {
  int i = p->n - 1;
  while (i > 1) {
    const Stmt *up = p->node[i - 1];
    bool wrap = up->kind == ST_FOR || up->kind == ST_IF || (up->kind == ST_SEQ && up->u.seq.n == 1);
    if (!wrap || count_blocks(up) != 1) break;
    i--;
  }
  return i;
}

static bool block_writes(const Stmt *b, const Buffer *buf) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  for (int i = 0; i < n; i++)
    if (acc[i].write && acc[i].buf == buf) return true;
  return false;
}

static bool block_reads(const Stmt *b, const Buffer *buf) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  for (int i = 0; i < n; i++)
    if (!acc[i].write && acc[i].buf == buf) return true;
  return false;
}

/* Does block a touch what b writes, or b read what a writes? */
static bool conflict(const Stmt *a, const Stmt *b) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(a, acc, MAXA);
  for (int i = 0; i < n; i++)
    if (block_writes(b, acc[i].buf) || (acc[i].write && block_reads(b, acc[i].buf))) return true;
  return false;
}

/* The one buffer a block writes (NULL: none or several). */
static Buffer *only_write(const Stmt *b) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  Buffer *w = NULL;
  for (int i = 0; i < n; i++)
    if (acc[i].write) {
      if (w && w != acc[i].buf) return NULL;
      w = acc[i].buf;
    }
  return w;
}

static bool is_under(const Stmt *top, const Stmt *x) {
  const Stmt *b[MAXB];
  int n = sched_blocks_under(top, b, MAXB);
  for (int i = 0; i < n; i++)
    if (b[i] == x) return true;
  return false;
}

/* The iteration variable of block b that e is (NULL: e is not one). */
static const IterVar *iter_of(const Stmt *b, const PrimExpr *e) {
  if (e->kind != PE_VAR) return NULL;
  for (int i = 0; i < b->u.block.niters; i++)
    if (b->u.block.iters[i].var == e->u.var) return &b->u.block.iters[i];
  return NULL;
}

/* ───────────────────────── compute_at, reverse_compute_at ───────────────────────── */

typedef struct Move {
  bool reverse, preserve;
  const SchedArg *ba, *la;
  SPath bp, lp;
  int root; /* the depth in bp of the block's own statement */
  Stmt *block, *loop;
  Buffer *buf;                 /* what the block and the blocks under the loop share */
  int dim_of[SCHED_MAX_DEPTH]; /* per iteration variable: the buffer's dimension it indexes, or -1
                                */
  SRegion reg;                 /* buf's region that one iteration of the loop needs / makes */
} Move;

static bool mfail(Sched *s, const Move *m, Span where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool mfail(Sched *s, const Move *m, Span where, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return sched_fail(s, where, "cannot %s block \"%s\" under `%%%s`: %s",
                    m->reverse ? "reverse_compute_at" : "compute_at", m->block->u.block.name,
                    m->loop->u.for_.vars[0]->name, why);
}

static bool move_args(Sched *s, const SchedStep *st, Move *m) {
  const char *name;
  TirVar *v;
  m->ba = sched_need(s, st, 0, "block", "a block");
  m->la = m->ba ? sched_need(s, st, 1, "loop", "a loop") : NULL;
  if (!m->la || !sched_arg_block(s, m->ba, &name) || !sched_arg_loop(s, m->la, &v) ||
      !sched_need_block(s, name, m->ba->span, &m->bp) ||
      !sched_need_loop(s, v, m->la->span, &m->lp))
    return false;
  const SchedArg *pa = sched_arg(st, 2, "preserve_unit_loops");
  if (pa && pa->kind != SA_BOOL && pa->kind != SA_INT)
    return sched_fail(s, pa->span, "preserve_unit_loops is True or False");
  m->preserve = pa && pa->u.i;
  m->block = m->bp.node[m->bp.n - 1], m->loop = m->lp.node[m->lp.n - 1];
  m->root = own_root(&m->bp);
  return true;
}

static int seq_index(const Stmt *seq, const Stmt *item) {
  for (int i = 0; i < seq->u.seq.n; i++)
    if (seq->u.seq.items[i] == item) return i;
  return -1;
}

/* Nothing between the block's own statement and the loop's uses what it uses. */
static bool move_between(Sched *s, const Move *m, const Stmt *seq, int a, int b) {
  for (int i = a + 1; i < b; i++) {
    const Stmt *blocks[MAXB];
    int n = sched_blocks_under(seq->u.seq.items[i], blocks, MAXB);
    for (int j = 0; j < n; j++)
      if (conflict(m->block, blocks[j]))
        return mfail(s, m, m->la->span, "block \"%s\" between them uses what it reads or writes",
                     blocks[j]->u.block.name);
  }
  return true;
}

static bool move_scope(Sched *s, const Move *m) {
  for (int i = 0; i < m->bp.n; i++)
    if (m->bp.node[i] == m->loop) return mfail(s, m, m->la->span, "the block is already under it");
  const Stmt *own = m->bp.node[m->root], *parent = m->bp.node[m->root - 1];
  if (m->lp.n <= m->root || m->lp.node[m->root - 1] != parent || parent->kind != ST_SEQ)
    return mfail(s, m, m->la->span,
                 "the loop is not at the block's level (they share no sequence)");
  int a = seq_index(parent, own), b = seq_index(parent, m->lp.node[m->root]);
  if (!m->reverse && a > b)
    return mfail(s, m, m->la->span,
                 "the loop comes before the block (a producer moves under a "
                 "loop of its consumers, after it)");
  if (m->reverse && a < b)
    return mfail(s, m, m->la->span,
                 "the loop comes after the block (a consumer moves under a "
                 "loop of its producers, before it)");
  return true;
}

/* After the buffer checks: nothing between the block and the loop conflicts. */
static bool move_order(Sched *s, const Move *m) {
  const Stmt *parent = m->bp.node[m->root - 1];
  int a = seq_index(parent, m->bp.node[m->root]), b = seq_index(parent, m->lp.node[m->root]);
  return m->reverse ? move_between(s, m, parent, b, a) : move_between(s, m, parent, a, b);
}

/* The buffer dimension each iteration variable of b indexes in its accesses
 * of buf (write: its stores, else its loads): every index must be an
 * iteration variable (spatial when `spatial`), each once, the same in
 * every access.  False when not. */
static bool map_dims(const Stmt *b, const Buffer *buf, bool write, bool spatial, int *dim_of) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  for (int j = 0; j < b->u.block.niters; j++) dim_of[j] = -1;
  for (int i = 0; i < n; i++) {
    if (acc[i].buf != buf || acc[i].write != write) continue;
    for (int d = 0; d < acc[i].n; d++) {
      const IterVar *it = iter_of(b, acc[i].idx[d]);
      if (!it || (spatial && it->reduce)) return false;
      int j = (int)(it - b->u.block.iters);
      if (dim_of[j] != -1 && dim_of[j] != d) return false;
      dim_of[j] = d;
    }
  }
  for (int j = 0; j < b->u.block.niters; j++)
    if (spatial && !b->u.block.iters[j].reduce && dim_of[j] < 0) return false;
  return true;
}

/* compute_at: the block's one output, read under the loop and nowhere
 * else but there, written by no other block. */
static bool producer_buffer(Sched *s, Move *m) {
  m->buf = only_write(m->block);
  if (!m->buf) return mfail(s, m, m->ba->span, "it writes more than one buffer");
  const Stmt *blocks[MAXB];
  int n = sched_blocks_under(m->loop, blocks, MAXB), readers = 0;
  for (int i = 0; i < n; i++) readers += block_reads(blocks[i], m->buf);
  if (!readers)
    return mfail(s, m, m->la->span, "no block under it reads `%%%s`, which the block writes",
                 m->buf->name);
  n = sched_blocks_under(s->f->body, blocks, MAXB);
  for (int i = 0; i < n; i++) {
    const Stmt *b = blocks[i];
    if (b == m->block) continue;
    if (block_writes(b, m->buf))
      return mfail(s, m, m->ba->span, "block \"%s\" also writes `%%%s`", b->u.block.name,
                   m->buf->name);
    if (block_reads(b, m->buf) && !is_under(m->loop, b))
      return mfail(s, m, m->la->span, "block \"%s\" reads `%%%s` outside the loop", b->u.block.name,
                   m->buf->name);
  }
  if (!map_dims(m->block, m->buf, true, true, m->dim_of))
    return mfail(s, m, m->ba->span,
                 "it writes `%%%s` at an index other than its spatial iteration variables",
                 m->buf->name);
  return true;
}

/* A producer under the loop finishes its reduction there: no reduction
 * variable is bound to the loop or a loop above it. */
static bool reduced_inside(Sched *s, const Move *m, const Stmt *b) {
  for (int j = 0; j < b->u.block.niters; j++)
    for (int k = 0; k < m->lp.n; k++)
      if (b->u.block.iters[j].reduce && m->lp.node[k]->kind == ST_FOR &&
          sched_expr_uses(b->u.block.iters[j].binding, m->lp.node[k]->u.for_.vars[0]))
        return mfail(s, m, m->la->span,
                     "block \"%s\" finishes its reduction into `%%%s` only outside the loop",
                     b->u.block.name, m->buf->name);
  return true;
}

/* reverse_compute_at: the one buffer the block reads that blocks under
 * the loop write (no block outside the loop), each finishing it there. */
static bool consumer_buffer(Sched *s, Move *m) {
  const Stmt *blocks[MAXB];
  int n = sched_blocks_under(m->loop, blocks, MAXB);
  m->buf = NULL;
  for (int i = 0; i < n; i++) {
    Buffer *w = only_write(blocks[i]);
    if (!w || !block_reads(m->block, w) || w == m->buf) continue;
    if (m->buf) return mfail(s, m, m->ba->span, "it reads several buffers blocks under it write");
    m->buf = w;
  }
  if (!m->buf) return mfail(s, m, m->la->span, "the block reads nothing a block under it writes");
  n = sched_blocks_under(s->f->body, blocks, MAXB);
  for (int i = 0; i < n; i++) {
    const Stmt *b = blocks[i];
    if (b == m->block || !block_writes(b, m->buf)) continue;
    if (!is_under(m->loop, b))
      return mfail(s, m, m->la->span, "block \"%s\" writes `%%%s` outside the loop",
                   b->u.block.name, m->buf->name);
    if (!reduced_inside(s, m, b)) return false;
  }
  if (!map_dims(m->block, m->buf, false, false, m->dim_of))
    return mfail(s, m, m->ba->span,
                 "it reads `%%%s` at an index other than its iteration variables", m->buf->name);
  return true;
}

/* The region of buf the blocks under the loop read (compute_at) or write. */
static bool move_region(Sched *s, Move *m) {
  const Stmt *blocks[MAXB];
  int n = sched_blocks_under(m->loop, blocks, MAXB);
  m->reg = (SRegion){.empty = true};
  for (int i = 0; i < n; i++) {
    const Stmt *b = blocks[i];
    bool touches = m->reverse ? block_writes(b, m->buf) : block_reads(b, m->buf);
    if (!touches) continue;
    SPath cp;
    SRanges r = {0};
    SRegion one;
    sched_find_block(s, b->u.block.name, &cp);
    if (!sched_ranges_add_path(&r, &cp, m->lp.n, cp.n))
      return mfail(s, m, m->la->span, "a loop under it has no constant extent");
    if (!sched_block_region(b, m->buf, m->reverse, &r, &one))
      return mfail(s, m, m->la->span, "block \"%s\" %s `%%%s` at an index that is not affine",
                   b->u.block.name, m->reverse ? "writes" : "reads", m->buf->name);
    if (!sched_region_union(&m->reg, &one))
      return mfail(s, m, m->la->span, "what the blocks under it %s of `%%%s` is not one box",
                   m->reverse ? "write" : "read", m->buf->name);
  }
  return true;
}

static bool has_if(const Stmt *st) {
  if (!st) return false;
  if (st->kind == ST_IF) return true;
  if (st->kind == ST_BLOCK) return false;
  PtrVec kids = {0};
  stmt_children(st, NULL, &kids);
  bool found = false;
  for (size_t i = 0; i < kids.len && !found; i++) found = has_if(kids.items[i]);
  vec_free(&kids);
  return found;
}

/* Every own loop of the block is bound by exactly one iteration variable. */
static bool own_loops_used(Sched *s, const Move *m, const SRanges *own) {
  for (int i = 0; i < own->n; i++) {
    int uses = 0;
    for (int j = 0; j < m->block->u.block.niters; j++)
      uses += sched_expr_uses(m->block->u.block.iters[j].binding, own->r[i].v);
    if (uses != 1)
      return mfail(s, m, m->ba->span,
                   "its loop `%%%s` is bound by %d of its iteration variables "
                   "(one expected)",
                   own->r[i].v->name, uses);
  }
  return true;
}

/* The values [lo, hi] an iteration variable takes over the block's own
 * loops, each once. */
static bool own_domain(Sched *s, const Move *m, const SRanges *own, const IterVar *it, int64_t *lo,
                       int64_t *hi) {
  SLin l;
  if (!sched_linear(it->binding, &l) || !sched_lin_const_bounds(&l, own, lo, hi))
    return mfail(s, m, m->ba->span, "`%%%s` is not bound to an affine form of the block's loops",
                 it->var->name);
  int64_t points = 1;
  for (int i = 0; i < l.n; i++)
    for (int j = 0; j < own->n; j++)
      if (own->r[j].v == l.v[i] && l.k[i]) points *= own->r[j].hi - own->r[j].lo + 1;
  if (points != *hi - *lo + 1)
    return mfail(s, m, m->ba->span, "the binding of `%%%s` does not cover its range once",
                 it->var->name);
  return true;
}

/* cond && (v >= lo) && (v < hi + 1), each part only when the value range
 * [vlo, vhi] of v does not prove it. */
static PrimExpr *guard(Sched *s, PrimExpr *cond, PrimExpr *v, bool known, int64_t vlo, int64_t vhi,
                       int64_t lo, int64_t hi) {
  DType dt = v->dtype;
  if (!known || vlo < lo) {
    PrimExpr *c = sched_bin(s, PB_GE, sched_copy_expr(s, v, NULL), sched_int(s, lo, dt));
    cond = cond ? sched_bin(s, PB_AND, cond, c) : c;
  }
  if (!known || vhi > hi) {
    PrimExpr *c = sched_bin(s, PB_LT, sched_copy_expr(s, v, NULL), sched_int(s, hi + 1, dt));
    cond = cond ? sched_bin(s, PB_AND, cond, c) : c;
  }
  return cond;
}

typedef struct Nest {
  int n;
  TirVar *ax[SCHED_MAX_DEPTH];
  int64_t ext[SCHED_MAX_DEPTH];
  PrimExpr *cond;
} Nest;

/* Iteration variable j's new binding: its region's least index plus a new
 * loop `axK` over the region's extent (none for one point unless
 * preserve_unit_loops). */
static bool rebind(Sched *s, const Move *m, const SRanges *own, const SRanges *outer, bool outer_ok,
                   int j, Nest *nest, PrimExpr **binding) {
  const IterVar *it = &m->block->u.block.iters[j];
  DType dt = it->var->dtype;
  int64_t dlo, dhi, ext, mlo = 0, mhi = 0;
  if (!own_domain(s, m, own, it, &dlo, &dhi)) return false;
  int d = m->dim_of[j];
  SLin min = {.c = dlo};
  ext = dhi - dlo + 1;
  if (d >= 0) min = m->reg.min[d], ext = m->reg.ext[d];
  if (d >= 0 && it->reduce && (min.n || min.c != dlo || ext != dhi - dlo + 1))
    return mfail(s, m, m->ba->span,
                 "it reduces over `%%%s`, of which one iteration of the loop makes only a part",
                 m->buf->name);
  PrimExpr *v = sched_from_linear(s, &min, dt);
  if (ext != 1 || m->preserve) {
    char name[32];
    snprintf(name, sizeof name, "ax%d", nest->n);
    nest->ax[nest->n] = sched_new_var(s, name, dt);
    nest->ext[nest->n] = ext;
    v = sched_bin(s, PB_ADD, v, sched_var(s, nest->ax[nest->n++]));
  }
  *binding = v;
  if (d < 0) return true;
  const Dim *dim = &m->buf->dims[d];
  int64_t hi = dim->kind == DIM_CONST && dim->value - 1 < dhi ? dim->value - 1 : dhi;
  bool known = outer_ok && sched_lin_const_bounds(&min, outer, &mlo, &mhi);
  nest->cond = guard(s, nest->cond, v, known, mlo, mhi + ext - 1, dlo > 0 ? dlo : 0, hi);
  return true;
}

static Stmt *move_nest(Sched *s, Move *m) {
  SRanges own = {0}, outer = {0};
  if (has_if(m->bp.node[m->root]) || !sched_ranges_add_path(&own, &m->bp, m->root, m->bp.n)) {
    mfail(s, m, m->ba->span, "its own loops need constant extents and no condition");
    return NULL;
  }
  bool outer_ok = sched_ranges_add_path(&outer, &m->lp, 0, m->lp.n);
  if (!own_loops_used(s, m, &own)) return NULL;
  Stmt *b = ARENA_NEW(s->a, Stmt);
  *b = *m->block;
  int n = b->u.block.niters;
  b->u.block.iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(n ? n : 1));
  Nest nest = {0};
  for (int j = 0; j < n; j++) {
    b->u.block.iters[j] = m->block->u.block.iters[j];
    if (!rebind(s, m, &own, &outer, outer_ok, j, &nest, &b->u.block.iters[j].binding)) return NULL;
  }
  Stmt *body = nest.cond ? sched_if(s, nest.cond, b) : b;
  for (int i = nest.n - 1; i >= 0; i--)
    body = sched_for(s, nest.ax[i], sched_int(s, nest.ext[i], nest.ax[i]->dtype), LOOP_RANGE, body);
  return body;
}

/* Removes the block's own statement (first: the new loops' names are then
 * free again). */
static void move_remove(Sched *s, const Move *m) {
  SPath own = m->bp;
  own.n = m->root + 1;
  sched_set_body(s, sched_replace(s, &own, NULL));
}

/* Puts `nest` first (compute_at) or last (reverse_compute_at) in the
 * loop's body. */
static void move_install(Sched *s, const Move *m, Stmt *nest) {
  SPath lp;
  sched_find_loop(s, m->loop->u.for_.vars[0], &lp);
  const Stmt *l = lp.node[lp.n - 1];
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *l;
  Stmt *items[2] = {nest, l->u.for_.body};
  if (m->reverse) items[0] = l->u.for_.body, items[1] = nest;
  c->u.for_.body = sched_seq(s, 2, items);
  sched_set_body(s, sched_replace(s, &lp, c));
}

/* A block that adds into what it writes without an init cannot be
 * computed twice: refused (its region may be computed in several
 * iterations). */
static bool move_repeatable(Sched *s, const Move *m) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(m->block, acc, MAXA);
  for (int i = 0; i < n && !m->block->u.block.init; i++)
    if (acc[i].write && block_reads(m->block, acc[i].buf))
      return mfail(s, m, m->ba->span, "it updates `%%%s` in place without an init",
                   acc[i].buf->name);
  return true;
}

static bool move_step(Sched *s, const SchedStep *st, bool reverse) {
  Move m = {.reverse = reverse};
  if (!move_args(s, st, &m) || !move_scope(s, &m) || !move_repeatable(s, &m)) return false;
  if (!(reverse ? consumer_buffer(s, &m) : producer_buffer(s, &m)) || !move_order(s, &m) ||
      !move_region(s, &m))
    return false;
  move_remove(s, &m);
  Stmt *nest = move_nest(s, &m);
  if (!nest) return false; /* the body is restored by the caller */
  move_install(s, &m, nest);
  return true;
}

bool sp_compute_at(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return move_step(s, st, false);
}

bool sp_reverse_compute_at(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return move_step(s, st, true);
}

/* ───────────────────────── inlining ───────────────────────── */

/* Loads of `buf` replaced by `value`, the iteration variable of `block`
 * that indexes dimension d replaced by the load's index d (block NULL:
 * value as it is). */
typedef struct Inline {
  const Buffer *buf;
  const Stmt *block;
  const int *dim_of;
  const PrimExpr *value;
} Inline;

static PrimExpr *inl_expr(Sched *s, const PrimExpr *e, const Inline *in);

static PrimExpr *inl_load(Sched *s, const PrimExpr *e, const Inline *in) {
  SchedSubst m = {0};
  for (int j = 0; in->block && j < in->block->u.block.niters; j++) {
    int d = in->dim_of[j];
    if (d >= 0) subst_var(&m, in->block->u.block.iters[j].var, inl_expr(s, e->u.load.idx[d], in));
  }
  PrimExpr *r = sched_copy_expr(s, in->value, &m);
  subst_free(&m);
  return r;
}

static PrimExpr *inl_expr(Sched *s, const PrimExpr *e, const Inline *in) {
  if (e->kind == PE_LOAD && e->u.load.buf == in->buf) return inl_load(s, e, in);
  PrimExpr *c = sched_copy_expr(s, e, NULL);
  PrimExpr *tmp[2];
  int n;
  PrimExpr *const *kids = prim_expr_children(c, tmp, &n);
  PrimExpr *nk[SCHED_MAX_DEPTH];
  for (int i = 0; i < n && i < SCHED_MAX_DEPTH; i++) nk[i] = inl_expr(s, kids[i], in);
  switch (c->kind) {
    case PE_LOAD:
      for (int i = 0; i < n; i++) c->u.load.idx[i] = nk[i];
      break;
    case PE_CALL:
      for (int i = 0; i < n; i++) c->u.call.args[i] = nk[i];
      break;
    case PE_BIN:
      c->u.bin.a = nk[0], c->u.bin.b = nk[1];
      break;
    case PE_NOT:
    case PE_NEG:
      c->u.operand = nk[0];
      break;
    case PE_CAST:
      c->u.cast.value = nk[0];
      break;
    default:
      break;
  }
  return c;
}

static Stmt *inl_stmt(Sched *s, const Stmt *st, const Inline *in);

static Stmt *inl_opt(Sched *s, const Stmt *st, const Inline *in) {
  return st ? inl_stmt(s, st, in) : NULL;
}

static Stmt *inl_stmt(Sched *s, const Stmt *st, const Inline *in) {
  Stmt *c = sched_copy(s, st, NULL);
  switch (st->kind) {
    case ST_SEQ:
      for (int i = 0; i < st->u.seq.n; i++) c->u.seq.items[i] = inl_stmt(s, st->u.seq.items[i], in);
      break;
    case ST_FOR:
      c->u.for_.body = inl_stmt(s, st->u.for_.body, in);
      break;
    case ST_BLOCK:
      c->u.block.init = inl_opt(s, st->u.block.init, in);
      c->u.block.body = inl_stmt(s, st->u.block.body, in);
      break;
    case ST_STORE:
      for (int i = 0; i < st->u.store.n; i++)
        c->u.store.idx[i] = inl_expr(s, st->u.store.idx[i], in);
      c->u.store.value = inl_expr(s, st->u.store.value, in);
      break;
    case ST_LET:
      c->u.let.value = inl_expr(s, st->u.let.value, in);
      break;
    case ST_IF:
      c->u.if_.cond = inl_expr(s, st->u.if_.cond, in);
      c->u.if_.then_ = inl_opt(s, st->u.if_.then_, in);
      c->u.if_.else_ = inl_opt(s, st->u.if_.else_, in);
      break;
    default:
      break;
  }
  return c;
}

/* The one store a block's body is (NULL: something else). */
static Stmt *only_store(const Stmt *b) {
  Stmt *x = b->u.block.body;
  while (x && x->kind == ST_SEQ && x->u.seq.n == 1) x = x->u.seq.items[0];
  return x && x->kind == ST_STORE ? x : NULL;
}

static bool is_param(const Sched *s, const Buffer *b) {
  for (int i = 0; i < s->f->nparams; i++)
    if (s->f->params[i] == b) return true;
  return false;
}

static bool has_reduce(const Stmt *b) {
  for (int j = 0; j < b->u.block.niters; j++)
    if (b->u.block.iters[j].reduce) return true;
  return b->u.block.init != NULL;
}

/* The body without buf's alloc. */
static void remove_alloc(Sched *s, const Buffer *buf) {
  Stmt *body = s->f->body;
  for (int i = 0; i < body->u.seq.n; i++) {
    Stmt *x = body->u.seq.items[i];
    if (x->kind == ST_ALLOC && x->u.alloc == buf) {
      SPath p = {2, {body, x}};
      sched_set_body(s, sched_replace(s, &p, NULL));
      return;
    }
  }
}

/* The body without the statement at path `own` and buf's alloc. */
static void remove_with_alloc(Sched *s, SPath *own, const Buffer *buf) {
  sched_set_body(s, sched_replace(s, own, NULL));
  remove_alloc(s, buf);
}

static bool ifail(Sched *s, const SchedArg *a, bool reverse, const char *name, const char *why) {
  return sched_fail(s, a->span, "cannot %s block \"%s\": %s",
                    reverse ? "reverse_compute_inline" : "compute_inline", name, why);
}

/* Other blocks than b that write buf (count) and read it (count). */
static void others(const Sched *s, const Stmt *b, const Buffer *buf, int *writers, int *readers,
                   const Stmt **writer) {
  const Stmt *blocks[MAXB];
  int n = sched_blocks_under(s->f->body, blocks, MAXB);
  *writers = *readers = 0;
  for (int i = 0; i < n; i++) {
    if (blocks[i] == b) continue;
    if (block_writes(blocks[i], buf)) (*writers)++, *writer = blocks[i];
    if (block_reads(blocks[i], buf)) (*readers)++;
  }
}

static bool inline_arg(Sched *s, const SchedStep *st, const SchedArg **a, SPath *p) {
  const char *name;
  *a = sched_need(s, st, 0, "block", "a block");
  return *a && sched_arg_block(s, *a, &name) && sched_need_block(s, name, (*a)->span, p);
}

/* A block `B[v0, v1, ...] = e` that inlines: no reduction, its spatial
 * iteration variables as the index, an allocated buffer written by it alone. */
static bool inlinable(Sched *s, const SchedArg *a, const Stmt *b, int *dim_of) {
  const char *nm = b->u.block.name;
  const Stmt *store = only_store(b), *w;
  if (has_reduce(b)) return ifail(s, a, false, nm, "it is a reduction");
  if (!store) return ifail(s, a, false, nm, "its body is not a single store");
  const Buffer *buf = store->u.store.buf;
  char why[256];
  if (!map_dims(b, buf, true, true, dim_of) || store->u.store.n != b->u.block.niters) {
    snprintf(why, sizeof why, "it stores `%%%s` at an index other than its iteration variables",
             buf->name);
    return ifail(s, a, false, nm, why);
  }
  if (is_param(s, buf) || block_reads(b, buf)) {
    snprintf(why, sizeof why, "`%%%s` is %s", buf->name,
             is_param(s, buf) ? "a parameter of the function (an output)" : "read by the block");
    return ifail(s, a, false, nm, why);
  }
  int writers, readers;
  others(s, b, buf, &writers, &readers, &w);
  if (writers) {
    snprintf(why, sizeof why, "block \"%s\" also writes `%%%s`", w->u.block.name, buf->name);
    return ifail(s, a, false, nm, why);
  }
  return true;
}

/* The blocks of the function in order (pre-order) and b's position. */
static int block_order(const Sched *s, const Stmt *b, const Stmt **blocks, int *n) {
  *n = sched_blocks_under(s->f->body, blocks, MAXB);
  for (int i = 0; i < *n; i++)
    if (blocks[i] == b) return i;
  return -1;
}

/* Does block x write a buffer block b reads? */
static bool writes_input(const Stmt *x, const Stmt *b) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  for (int i = 0; i < n; i++)
    if (!acc[i].write && block_writes(x, acc[i].buf)) return true;
  return false;
}

/* Every read of buf comes after b, and no block between b and a reader
 * changes what b's value reads. */
static bool inline_order(Sched *s, const SchedArg *a, const Stmt *b, const Buffer *buf) {
  const Stmt *blocks[MAXB];
  int n, at = block_order(s, b, blocks, &n), last = -1;
  char why[256];
  for (int i = 0; i < n; i++)
    if (blocks[i] != b && block_reads(blocks[i], buf)) last = i;
  for (int i = 0; i < n; i++) {
    const Stmt *x = blocks[i];
    bool early = i < at && block_reads(x, buf), between = i > at && i < last && writes_input(x, b);
    if (!early && !between) continue;
    snprintf(why, sizeof why, "block \"%s\" %s", x->u.block.name,
             early ? "reads it before it runs" : "changes what it reads before the last reader");
    return ifail(s, a, false, b->u.block.name, why);
  }
  return true;
}

bool sp_compute_inline(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  const SchedArg *a;
  SPath p;
  int dim_of[SCHED_MAX_DEPTH];
  if (!inline_arg(s, st, &a, &p)) return false;
  const Stmt *b = p.node[p.n - 1];
  if (b->u.block.niters > SCHED_MAX_DEPTH || !inlinable(s, a, b, dim_of) ||
      !inline_order(s, a, b, only_store(b)->u.store.buf))
    return false;
  const Stmt *store = only_store(b);
  Inline in = {store->u.store.buf, b, dim_of, store->u.store.value};
  p.n = own_root(&p) + 1;
  remove_with_alloc(s, &p, in.buf);
  sched_set_body(s, inl_stmt(s, s->f->body, &in));
  return true;
}

/* The buffer a consumer block reads once at exactly its iteration
 * variables and another block writes (NULL: none or several). */
static const Buffer *consumed(const Sched *s, const Stmt *c, int *dim_of) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(c, acc, MAXA);
  const Buffer *found = NULL;
  for (int i = 0; i < n; i++) {
    int writers, readers;
    const Stmt *w;
    if (acc[i].write) continue;
    others(s, c, acc[i].buf, &writers, &readers, &w);
    if (!writers) continue;
    if (found) return NULL;
    found = acc[i].buf;
  }
  if (!found || !map_dims(c, found, false, true, dim_of)) return NULL;
  for (int j = 0; j < c->u.block.niters; j++)
    if (dim_of[j] < 0) return NULL;
  return found;
}

/* The values [lo, hi] iteration variable j of block b takes over its loops. */
static bool iter_domain(Sched *s, const Stmt *b, int j, int64_t *lo, int64_t *hi) {
  SPath p;
  SRanges r = {0};
  SLin l;
  return sched_find_block(s, b->u.block.name, &p) && sched_ranges_add_path(&r, &p, 0, p.n) &&
         sched_linear(b->u.block.iters[j].binding, &l) && sched_lin_const_bounds(&l, &r, lo, hi);
}

/* The consumer visits every element of buf the producer writes, once:
 * each of its iteration variables has the domain of the producer's
 * variable for the same dimension. */
static bool same_domain(Sched *s, const Stmt *c, const int *dim_of, const Stmt *p) {
  int pdim[SCHED_MAX_DEPTH];
  map_dims(p, only_store(p)->u.store.buf, true, true, pdim);
  for (int j = 0; j < c->u.block.niters; j++) {
    int64_t clo, chi, plo, phi;
    int k = 0;
    while (k < p->u.block.niters && pdim[k] != dim_of[j]) k++;
    if (k == p->u.block.niters || !iter_domain(s, c, j, &clo, &chi) ||
        !iter_domain(s, p, k, &plo, &phi) || clo != plo || chi != phi)
      return false;
  }
  return true;
}

/* The consumer c folds into its producer: checks, and finds the producer. */
static bool rinline_checks(Sched *s, const SchedArg *a, const Stmt *c, int *dim_of,
                           const Stmt **prod) {
  const char *nm = c->u.block.name;
  char why[256];
  if (has_reduce(c)) return ifail(s, a, true, nm, "it is a reduction");
  if (!only_store(c)) return ifail(s, a, true, nm, "its body is not a single store");
  const Buffer *buf = consumed(s, c, dim_of);
  if (!buf)
    return ifail(s, a, true, nm,
                 "it does not read exactly one produced buffer, once, at its iteration variables");
  int writers, readers, pdim[SCHED_MAX_DEPTH];
  others(s, c, buf, &writers, &readers, prod);
  const Stmt *ps = only_store(*prod);
  snprintf(why, sizeof why, "its producer \"%s\" is %s", (*prod)->u.block.name,
           has_reduce(*prod) ? "a reduction" : "not a single store at its iteration variables");
  if (writers == 1 &&
      (has_reduce(*prod) || !ps || ps->u.store.buf != buf ||
       (*prod)->u.block.niters > SCHED_MAX_DEPTH || !map_dims(*prod, buf, true, true, pdim)))
    return ifail(s, a, true, nm, why);
  snprintf(why, sizeof why, "`%%%s` is %s", buf->name,
           writers > 1        ? "written by several blocks"
           : readers          ? "read by another block too"
           : is_param(s, buf) ? "a parameter of the function"
                              : "");
  if (writers > 1 || readers || is_param(s, buf)) return ifail(s, a, true, nm, why);
  const Stmt *blocks[MAXB];
  int n, at = block_order(s, c, blocks, &n), from = block_order(s, *prod, blocks, &n);
  for (int i = from + 1; i < at; i++)
    if (conflict(c, blocks[i])) {
      snprintf(why, sizeof why,
               "block \"%s\" between it and its producer uses what it reads or "
               "writes",
               blocks[i]->u.block.name);
      return ifail(s, a, true, nm, why);
    }
  if (from > at) return ifail(s, a, true, nm, "it runs before its producer");
  if (!same_domain(s, c, dim_of, *prod)) {
    snprintf(why, sizeof why, "it does not visit exactly the elements of `%%%s` \"%s\" writes",
             buf->name, (*prod)->u.block.name);
    return ifail(s, a, true, nm, why);
  }
  return true;
}

/* The producer's store with the consumer's store in its place: the
 * consumer's iteration variables become the producer's indices of buf and
 * its load of buf the producer's value. */
static Stmt *folded_store(Sched *s, const Stmt *c, const int *dim_of, const Stmt *ps) {
  const Stmt *cs = only_store(c);
  SchedSubst m = {0};
  for (int j = 0; j < c->u.block.niters; j++)
    subst_var(&m, c->u.block.iters[j].var, ps->u.store.idx[dim_of[j]]);
  Stmt *moved = sched_copy(s, cs, &m);
  subst_free(&m);
  Inline in = {ps->u.store.buf, NULL, NULL, ps->u.store.value};
  return inl_stmt(s, moved, &in);
}

bool sp_reverse_compute_inline(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  const SchedArg *a;
  SPath cp, pp;
  int dim_of[SCHED_MAX_DEPTH];
  const Stmt *prod;
  if (!inline_arg(s, st, &a, &cp)) return false;
  const Stmt *c = cp.node[cp.n - 1];
  if (c->u.block.niters > SCHED_MAX_DEPTH || !rinline_checks(s, a, c, dim_of, &prod)) return false;
  const Stmt *ps = only_store(prod);
  const Buffer *buf = ps->u.store.buf;
  Stmt *store = folded_store(s, c, dim_of, ps);
  cp.n = own_root(&cp) + 1;
  sched_set_body(s, sched_replace(s, &cp, NULL));
  sched_find_block(s, prod->u.block.name, &pp);
  Stmt *nb = ARENA_NEW(s->a, Stmt);
  *nb = *pp.node[pp.n - 1];
  nb->u.block.body = store;
  sched_set_body(s, sched_replace(s, &pp, nb));
  remove_alloc(s, buf);
  return true;
}
