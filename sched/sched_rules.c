/* sched_rules.c — the tuner's design space: schedule rules applied block by
 * block to a prim function, as MetaSchedule's are, each rule a sequence of
 * primitives applied with sched_apply_step, so a candidate is a trace like
 * any other (it prints as `schedule @f { ... }` and replays).
 *
 * Rules, in the function's block order:
 * - multi-level tiling of a reduction block whose loops are its iteration
 *   variables: spatial loops in 3 levels, reduce loops in 2, tile sizes from
 *   sample_perfect_tile, ordered SRSRS (MetaSchedule's SSRSRS with its two
 *   outer spatial levels as one); its elementwise consumer moved under the
 *   outer tile (reverse_compute_at); a sampled choice (sample_categorical)
 *   of a packed panel of the operand read along the innermost spatial axis
 *   (cache_read + compute_at); the init decomposed before the reduce loops;
 *   the register tile's row loop unrolled, its innermost loop vectorized,
 *   the outer tile's loops fused and parallel;
 * - an elementwise block left alone: compute_inline when it writes a buffer
 *   of the function's own, else its innermost loop split by a sampled factor
 *   and the inner part vectorized, its outermost loop parallel.
 * A step the generator only tries (a vectorize, an inline) and a primitive
 * refuses is left out; a refused tiling step fails the candidate.
 *
 * Decisions: the k-th sampling step takes its decision from the parent's
 * trace (mutation keeps all but one), else draws from the seed. */
#include <stdio.h>
#include <string.h>

#include "ir/tir_walk.h"
#include "sched/sched_int.h"

enum { MAXL = 16, MAXB = 32 };

typedef struct Gen {
  Arena *a;
  PrimFunc *f; /* the candidate so far */
  uint64_t seed;
  const SchedTrace *parent;
  int resample; /* the parent's sampling step drawn again (-1: none) */
  int nsample;  /* sampling steps so far */
  int nnames;   /* fresh `let` names */
  bool ok;
} Gen;

/* ───────────────────────── steps ───────────────────────── */

static SchedArg a_name(const char *n) { return (SchedArg){.kind = SA_NAME, .u.s = n}; }
static SchedArg a_str(const char *s) { return (SchedArg){.kind = SA_STR, .u.s = s}; }
static SchedArg a_int(int64_t v) { return (SchedArg){.kind = SA_INT, .u.i = v}; }
static SchedArg a_key(SchedArg x, const char *key) { return x.key = key, x; }

static SchedArg a_list(Gen *g, int n, const SchedArg *items) {
  SchedArg l = {.kind = SA_LIST};
  l.u.list.n = n;
  l.u.list.items = arena_memdup(g->a, items, sizeof *items * (size_t)n);
  return l;
}

static SchedArg a_names(Gen *g, int n, const char *const *names) {
  SchedArg it[MAXL];
  for (int i = 0; i < n; i++) it[i] = a_name(names[i]);
  return a_list(g, n, it);
}

static const char *fresh(Gen *g, const char *base) {
  return arena_printf(g->a, "%s%d", base, g->nnames++);
}

static SchedStep *mk(Gen *g, const char *prim, int nargs, const SchedArg *args, int nouts,
                     const char **outs) {
  SchedStep *st = ARENA_NEW(g->a, SchedStep);
  st->prim = prim, st->nargs = nargs, st->nouts = nouts, st->tuple_out = nouts > 1;
  st->args = arena_memdup(g->a, args, sizeof *args * (size_t)(nargs ? nargs : 1));
  st->outs = nouts ? arena_memdup(g->a, outs, sizeof *outs * (size_t)nouts) : NULL;
  return st;
}

/* Applies st: false (the candidate unchanged) when it is refused; a
 * required step's refusal fails the candidate. */
static bool apply(Gen *g, SchedStep *st, bool required) {
  if (!g->ok) return false;
  DiagCtx d;
  diag_init(&d);
  SchedOptions o = {.seed = g->seed * 1000003u + (uint64_t)g->nsample * 7919u + 1};
  PrimFunc *h = sched_apply_step(g->a, g->f, st, &d, &o);
  diag_free(&d);
  if (h) g->f = h;
  if (!h && required) g->ok = false;
  return h != NULL;
}

/* The decision of the parent's k-th sampling step, or NULL. */
static const SchedArg *parent_decision(const Gen *g, int k) {
  if (!g->parent || k == g->resample) return NULL;
  for (int i = 0, n = 0; i < g->parent->n; i++) {
    const SchedStep *st = g->parent->steps[i];
    if (strncmp(st->prim, "sample_", 7) != 0) continue;
    if (n++ == k) return sched_arg(st, -1, "decision");
  }
  return NULL;
}

/* A sampling step: the parent's decision when it still applies, else drawn. */
static bool sample(Gen *g, const char *prim, int nargs, SchedArg *args, int nouts,
                   const char **outs) {
  const SchedArg *dec = parent_decision(g, g->nsample);
  bool ok = false;
  if (dec) {
    args[nargs] = a_key(*dec, "decision");
    ok = apply(g, mk(g, prim, nargs + 1, args, nouts, outs), false);
  }
  ok = ok || apply(g, mk(g, prim, nargs, args, nouts, outs), true);
  g->nsample++;
  return ok;
}

/* The decision the last step (a sampling one) took: its integers. */
static int last_decision(const Gen *g, int64_t *v, int max) {
  const SchedTrace *t = g->f->trace;
  const SchedArg *d = t && t->n ? sched_arg(t->steps[t->n - 1], -1, "decision") : NULL;
  if (!d) return 0;
  if (d->kind == SA_INT) return v[0] = d->u.i, 1;
  int n = 0;
  for (int i = 0; d->kind == SA_LIST && i < d->u.list.n && n < max; i++)
    v[n++] = d->u.list.items[i].u.i;
  return n;
}

/* ───────────────────────── looking at the function ───────────────────────── */

typedef struct BlockAt {
  const Stmt *block;
  int nloops;
  const Stmt *loops[MAXL]; /* enclosing loops, outermost first */
} BlockAt;

static bool find_block_in(const Stmt *st, const char *name, BlockAt *out) {
  if (!st) return false;
  switch (st->kind) {
    case ST_SEQ:
      for (int i = 0; i < st->u.seq.n; i++)
        if (find_block_in(st->u.seq.items[i], name, out)) return true;
      return false;
    case ST_FOR:
      if (out->nloops >= MAXL) return false;
      out->loops[out->nloops++] = st;
      if (find_block_in(st->u.for_.body, name, out)) return true;
      out->nloops--;
      return false;
    case ST_BLOCK:
      if (strcmp(st->u.block.name, name) == 0) return out->block = st, true;
      return find_block_in(st->u.block.body, name, out);
    case ST_IF:
      return find_block_in(st->u.if_.then_, name, out);
    default:
      return false;
  }
}

static bool block_at(const PrimFunc *f, const char *name, BlockAt *out) {
  *out = (BlockAt){0};
  return find_block_in(f->body, name, out);
}

/* Binds the loops above block `name` to fresh names (n of them into names). */
static int get_loops(Gen *g, const char *name, const char **names) {
  BlockAt at;
  if (!g->ok || !block_at(g->f, name, &at) || !at.nloops) return 0;
  for (int i = 0; i < at.nloops; i++) names[i] = fresh(g, "l");
  SchedArg arg = a_str(name);
  SchedStep *gb = mk(g, "get_block", 1, &arg, 0, NULL);
  SchedArg sa = {.kind = SA_STEP, .u.step = gb};
  return apply(g, mk(g, "get_loops", 1, &sa, at.nloops, names), true) ? at.nloops : 0;
}

/* Vectorizes the innermost loop above block `name`, if a primitive lets it. */
static void vectorize_inner(Gen *g, const char *name) {
  const char *l[MAXL];
  int n = get_loops(g, name, l);
  if (!n) return;
  SchedArg arg = a_name(l[n - 1]);
  apply(g, mk(g, "vectorize", 1, &arg, 0, NULL), false);
}

static bool is_reduction(const Stmt *b) {
  for (int i = 0; i < b->u.block.niters; i++)
    if (b->u.block.iters[i].reduce) return true;
  return false;
}

/* Every iteration variable bound to its own enclosing loop, in order. */
static bool trivially_bound(const BlockAt *at) {
  const Stmt *b = at->block;
  if (b->u.block.niters != at->nloops) return false;
  for (int i = 0; i < at->nloops; i++) {
    const PrimExpr *e = b->u.block.iters[i].binding;
    if (e->kind != PE_VAR || e->u.var != at->loops[i]->u.for_.vars[0] ||
        sched_loop_extent(at->loops[i]) < 1)
      return false;
  }
  return true;
}

/* The blocks (top-level nests) that read buffer `buf`. */
static int readers_of(const PrimFunc *f, const Buffer *buf, const Stmt **out, int max) {
  const Stmt *all[MAXB];
  int n = sched_blocks_under(f->body, all, MAXB), k = 0;
  for (int i = 0; i < n; i++) {
    SAccess acc[64];
    int na = sched_block_accesses(all[i], acc, 64);
    bool reads = false;
    for (int j = 0; j < na; j++) reads |= !acc[j].write && acc[j].buf == buf;
    bool writes = false;
    for (int j = 0; j < na; j++) writes |= acc[j].write && acc[j].buf == buf;
    if (reads && !writes && k < max) out[k++] = all[i];
  }
  return k;
}

static const Buffer *written(const Stmt *b) {
  SAccess acc[64];
  int n = sched_block_accesses(b, acc, 64);
  for (int i = 0; i < n; i++)
    if (acc[i].write) return acc[i].buf;
  return NULL;
}

static bool is_param(const PrimFunc *f, const Buffer *b) {
  for (int i = 0; i < f->nparams; i++)
    if (f->params[i] == b) return true;
  return false;
}

/* The read index (cache_read's) of the operand whose index uses var v:
 * distinct buffers read and not written, in order of first use; -1 if none. */
static int operand_along(const Stmt *b, const TirVar *v) {
  SAccess acc[64];
  const Buffer *seen[64];
  int n = sched_block_accesses(b, acc, 64), k = 0;
  for (int i = 0; i < n; i++) {
    bool skip = acc[i].write;
    for (int j = 0; j < n && !skip; j++) skip = acc[j].write && acc[j].buf == acc[i].buf;
    for (int j = 0; j < k && !skip; j++) skip = seen[j] == acc[i].buf;
    if (skip) continue;
    for (int d = 0; d < acc[i].n; d++)
      if (sched_expr_uses(acc[i].idx[d], v)) return k;
    seen[k++] = acc[i].buf;
  }
  return -1;
}

/* ───────────────────────── multi-level tiling ───────────────────────── */

typedef struct Tiles {
  int ns, nr;             /* spatial and reduce loops */
  const char *s[MAXL][3]; /* each spatial loop's 3 levels */
  const char *r[MAXL][2]; /* each reduce loop's 2 levels */
  int64_t sext[MAXL][3];  /* the spatial levels' extents */
} Tiles;

/* sample_perfect_tile then split of one loop into n levels. */
static bool tile_loop(Gen *g, const char *loop, int n, int64_t maxin, const char **out,
                      int64_t *ext) {
  const char *v[3];
  for (int i = 0; i < n; i++) v[i] = fresh(g, "v");
  SchedArg args[4] = {a_name(loop), a_key(a_int(n), "n")};
  int na = 2;
  if (maxin) args[na++] = a_key(a_int(maxin), "max_innermost_factor");
  if (!sample(g, "sample_perfect_tile", na, args, n, v)) return false;
  int64_t dec[3] = {0};
  last_decision(g, dec, 3);
  for (int i = 0; i < n; i++) out[i] = fresh(g, "t"), ext[i] = dec[i];
  SchedArg sa[2] = {a_name(loop), a_key(a_names(g, n, v), "factors")};
  return apply(g, mk(g, "split", 2, sa, n, out), true);
}

/* The loops of the block split and ordered SRSRS. */
static bool tile_block(Gen *g, const Stmt *b, const char **loops, int nl, Tiles *t) {
  *t = (Tiles){0};
  for (int i = 0; i < nl && g->ok; i++) {
    int64_t ext[3];
    if (b->u.block.iters[i].reduce)
      tile_loop(g, loops[i], 2, 0, t->r[t->nr++], ext);
    else
      tile_loop(g, loops[i], 3, 64, t->s[t->ns], t->sext[t->ns]), t->ns++;
  }
  const char *order[3 * MAXL];
  int n = 0;
  for (int i = 0; i < t->ns; i++) order[n++] = t->s[i][0];
  for (int i = 0; i < t->nr; i++) order[n++] = t->r[i][0];
  for (int i = 0; i < t->ns; i++) order[n++] = t->s[i][1];
  for (int i = 0; i < t->nr; i++) order[n++] = t->r[i][1];
  for (int i = 0; i < t->ns; i++) order[n++] = t->s[i][2];
  SchedArg args[3 * MAXL];
  for (int i = 0; i < n; i++) args[i] = a_name(order[i]);
  return g->ok && apply(g, mk(g, "reorder", n, args, 0, NULL), true);
}

/* A packed panel of the operand along the innermost spatial axis, under
 * the outer tile, when the sampled choice says so. */
static void pack_operand(Gen *g, const char *bvar, const Stmt *b, const char *under) {
  int idx = -1;
  for (int i = b->u.block.niters - 1; i >= 0 && idx < 0; i--)
    if (!b->u.block.iters[i].reduce) idx = operand_along(b, b->u.block.iters[i].var);
  if (idx < 0) return;
  const char *c = fresh(g, "c");
  SchedArg cands[2] = {a_int(0), a_int(1)},
           probs[2] = {{.kind = SA_FLOAT, .u.f = 0.5}, {.kind = SA_FLOAT, .u.f = 0.5}};
  SchedArg args[3] = {a_key(a_list(g, 2, cands), "candidates"),
                      a_key(a_list(g, 2, probs), "probs")};
  int64_t pick = 0;
  if (!sample(g, "sample_categorical", 2, args, 1, &c) || !last_decision(g, &pick, 1) || !pick)
    return;
  const char *p = fresh(g, "p");
  SchedArg cr[3] = {a_name(bvar), a_int(idx), a_str("global")};
  if (!apply(g, mk(g, "cache_read", 3, cr, 1, &p), false)) return;
  SchedArg ca[2] = {a_name(p), a_name(under)};
  apply(g, mk(g, "compute_at", 2, ca, 0, NULL), true);
}

/* Vectorizes the innermost loop of every block the tiling moved or made
 * (a consumer, a packed panel, the init): those not in a nest of their own. */
static void vectorize_moved(Gen *g, const char *tiled) {
  const Stmt *all[MAXB];
  const char *names[MAXB];
  int n = sched_blocks_under(g->f->body, all, MAXB);
  for (int i = 0; i < n; i++) names[i] = all[i]->u.block.name;
  for (int i = 0; i < n; i++) {
    BlockAt at;
    if (strcmp(names[i], tiled) != 0 && block_at(g->f, names[i], &at) && !trivially_bound(&at) &&
        at.nloops && at.loops[at.nloops - 1]->u.for_.loop != LOOP_VECTORIZED)
      vectorize_inner(g, names[i]);
  }
}

/* The tiled block's only consumer, when elementwise, under the outer tile. */
static void move_consumer(Gen *g, const Stmt *b, const char *outer) {
  const Buffer *out = written(b);
  const Stmt *cons[4];
  int nc = out && !is_param(g->f, out) ? readers_of(g->f, out, cons, 4) : 0;
  if (nc != 1 || is_reduction(cons[0])) return;
  SchedArg name = a_str(cons[0]->u.block.name);
  SchedStep *gb = mk(g, "get_block", 1, &name, 0, NULL);
  SchedArg rc[2] = {{.kind = SA_STEP, .u.step = gb}, a_name(outer)};
  apply(g, mk(g, "reverse_compute_at", 2, rc, 0, NULL), false);
}

/* The register tile's rows unrolled (up to 16), its columns vectorized, the
 * other blocks' inner loops vectorized, the outer tile fused and parallel. */
static void finish_tile(Gen *g, const Tiles *t, const char *name) {
  if (t->ns >= 2 && t->sext[t->ns - 2][2] > 1 && t->sext[t->ns - 2][2] <= 16) {
    SchedArg ua = a_name(t->s[t->ns - 2][2]);
    apply(g, mk(g, "unroll", 1, &ua, 0, NULL), false);
  }
  SchedArg va = a_name(t->s[t->ns - 1][2]);
  if (t->sext[t->ns - 1][2] > 1) apply(g, mk(g, "vectorize", 1, &va, 0, NULL), false);
  vectorize_moved(g, name);
  const char *fz = t->ns > 1 ? fresh(g, "f") : t->s[0][0];
  SchedArg fa[MAXL];
  for (int i = 0; i < t->ns; i++) fa[i] = a_name(t->s[i][0]);
  if (t->ns > 1 && !apply(g, mk(g, "fuse", t->ns, fa, 1, &fz), false)) return;
  SchedArg pa = a_name(fz);
  apply(g, mk(g, "parallel", 1, &pa, 0, NULL), false);
}

static void multi_level_tiling(Gen *g, const char *name) {
  BlockAt at;
  const char *bvar = fresh(g, "b"), *loops[MAXL];
  SchedArg arg = a_str(name);
  apply(g, mk(g, "get_block", 1, &arg, 1, &bvar), true); /* the function normalized */
  if (!g->ok || !block_at(g->f, name, &at) || !trivially_bound(&at)) return;
  const Stmt *b = at.block;
  int nl = get_loops(g, name, loops);
  Tiles t;
  if (!nl || !tile_block(g, b, loops, nl, &t) || !t.ns) return;
  move_consumer(g, b, t.s[t.ns - 1][0]);
  pack_operand(g, bvar, b, t.s[t.ns - 1][0]);
  if (t.nr) {
    const char *init = fresh(g, "i");
    SchedArg dr[2] = {a_name(bvar), a_name(t.r[0][0])};
    apply(g, mk(g, "decompose_reduction", 2, dr, 1, &init), true);
  }
  finish_tile(g, &t, name);
}

/* ───────────────────────── elementwise blocks ───────────────────────── */

static void elementwise(Gen *g, const char *name) {
  BlockAt at;
  SchedArg arg = a_str(name);
  if (!g->f->trace) apply(g, mk(g, "get_block", 1, &arg, 0, NULL), true); /* normalized */
  if (!g->ok || !block_at(g->f, name, &at) || !trivially_bound(&at)) return;
  const Buffer *out = written(at.block);
  if (out && !is_param(g->f, out) && apply(g, mk(g, "compute_inline", 1, &arg, 0, NULL), false))
    return;
  const char *loops[MAXL], *sp[2];
  int nl = get_loops(g, name, loops);
  int64_t ext[2];
  if (!nl || !tile_loop(g, loops[nl - 1], 2, 64, sp, ext)) return;
  SchedArg va = a_name(sp[1]), pa = a_name(nl > 1 ? loops[0] : sp[0]);
  if (ext[1] > 1) apply(g, mk(g, "vectorize", 1, &va, 0, NULL), false);
  apply(g, mk(g, "parallel", 1, &pa, 0, NULL), false);
}

/* ───────────────────────── the entry ───────────────────────── */

/* The blocks of the function as written, in order. */
static int plain_blocks(const PrimFunc *f, const char **names, int max) {
  const Stmt *all[MAXB];
  int n = sched_blocks_under(f->body, all, MAXB), k = 0;
  for (int i = 0; i < n && k < max; i++) names[k++] = all[i]->u.block.name;
  return k;
}

PrimFunc *sched_space_sample(Arena *a, const PrimFunc *f, uint64_t seed, const SchedTrace *parent,
                             int resample) {
  const PrimFunc *plain = f->unscheduled ? f->unscheduled : f;
  Gen g = {.a = a,
           .f = (PrimFunc *)plain,
           .seed = seed,
           .parent = parent,
           .resample = resample,
           .ok = true};
  const char *names[MAXB];
  int n = plain_blocks(plain, names, MAXB);
  bool tiled[MAXB] = {0};
  for (int i = 0; i < n && g.ok; i++) {
    BlockAt at;
    if (block_at(g.f, names[i], &at) && is_reduction(at.block))
      multi_level_tiling(&g, names[i]), tiled[i] = true;
  }
  for (int i = 0; i < n && g.ok; i++) {
    BlockAt at;
    if (!tiled[i] && block_at(g.f, names[i], &at) && !is_reduction(at.block))
      elementwise(&g, names[i]); /* a nest of its own (not moved under a tile) */
  }
  return g.ok && g.f != plain ? g.f : NULL;
}

int sched_trace_nsamples(const SchedTrace *t) {
  int n = 0;
  for (int i = 0; t && i < t->n; i++) n += strncmp(t->steps[i]->prim, "sample_", 7) == 0;
  return n;
}
