/* sched_region.c — regions of buffers that blocks touch: the bounds of an
 * affine index over given loop ranges (variables without a range stay
 * symbolic in the lower bound; the extent is a constant), an index seen
 * through a block's iteration bindings, and the union over a block's
 * accesses of one buffer.  compute_at, reverse_compute_at, cache_read and
 * cache_write size what they build with it. */
#include "sched/sched_int.h"

bool sched_ranges_add_loop(SRanges *r, const Stmt *loop) {
  int64_t ext = sched_loop_extent(loop);
  const PrimExpr *lo = tir_for_lo(loop, 0);
  if (ext < 1 || r->n == SCHED_MAX_DEPTH) return false;
  int64_t l = lo ? lo->u.i : 0;
  r->r[r->n++] = (SVarRange){loop->u.for_.vars[0], l, l + ext - 1};
  return true;
}

bool sched_ranges_add_path(SRanges *r, const SPath *p, int from, int to) {
  for (int i = from; i < to && i < p->n; i++)
    if (p->node[i]->kind == ST_FOR && !sched_ranges_add_loop(r, p->node[i])) return false;
  return true;
}

static const SVarRange *range_of(const SRanges *r, const TirVar *v) {
  for (int i = 0; r && i < r->n; i++)
    if (r->r[i].v == v) return &r->r[i];
  return NULL;
}

void sched_lin_bounds(const SLin *l, const SRanges *r, SLin *min, int64_t *extent) {
  *min = (SLin){.c = l->c};
  int64_t max = l->c;
  for (int i = 0; i < l->n; i++) {
    const SVarRange *vr = range_of(r, l->v[i]);
    int64_t k = l->k[i];
    if (!vr) {
      min->v[min->n] = l->v[i], min->k[min->n++] = k;
      continue;
    }
    min->c += k > 0 ? k * vr->lo : k * vr->hi;
    max += k > 0 ? k * vr->hi : k * vr->lo;
  }
  *extent = max - min->c + 1;
}

bool sched_lin_const_bounds(const SLin *l, const SRanges *r, int64_t *lo, int64_t *hi) {
  SLin m;
  int64_t ext;
  sched_lin_bounds(l, r, &m, &ext);
  if (m.n) return false;
  *lo = m.c, *hi = m.c + ext - 1;
  return true;
}

/* Adds k * (the linear form of e) to out. */
static bool lin_add_scaled(SLin *out, const SLin *e, int64_t k) {
  out->c += k * e->c;
  for (int i = 0; i < e->n; i++) {
    int j = 0;
    while (j < out->n && out->v[j] != e->v[i]) j++;
    if (j == out->n) {
      if (out->n == SCHED_LIN_TERMS) return false;
      out->v[out->n] = e->v[i], out->k[out->n++] = 0;
    }
    out->k[j] += k * e->k[i];
  }
  return true;
}

bool sched_lin_compose(const PrimExpr *idx, const Stmt *block, SLin *out) {
  SLin l;
  if (!sched_linear(idx, &l)) return false;
  *out = (SLin){.c = l.c};
  for (int i = 0; i < l.n; i++) {
    const IterVar *it = NULL;
    for (int j = 0; j < block->u.block.niters; j++)
      if (block->u.block.iters[j].var == l.v[i]) it = &block->u.block.iters[j];
    SLin b = {.n = 1, .v = {l.v[i]}, .k = {1}};
    if (it && !sched_linear(it->binding, &b)) return false;
    if (!lin_add_scaled(out, &b, l.k[i])) return false;
  }
  return true;
}

/* a - b when it is a constant. */
static bool lin_diff(const SLin *a, const SLin *b, int64_t *d) {
  SLin x = *a;
  if (!lin_add_scaled(&x, b, -1)) return false;
  for (int i = 0; i < x.n; i++)
    if (x.k[i]) return false;
  *d = x.c;
  return true;
}

bool sched_region_union(SRegion *a, const SRegion *b) {
  if (b->empty) return true;
  if (a->empty) {
    *a = *b;
    return true;
  }
  if (a->n != b->n) return false;
  for (int d = 0; d < a->n; d++) {
    int64_t off; /* b.min - a.min */
    if (!lin_diff(&b->min[d], &a->min[d], &off)) return false;
    int64_t end = a->ext[d] > off + b->ext[d] ? a->ext[d] : off + b->ext[d];
    int64_t lo = off < 0 ? off : 0;
    if (off < 0) a->min[d] = b->min[d];
    a->ext[d] = end - lo;
  }
  return true;
}

/* A dimension whose least index is constant is cut to the buffer's shape:
 * a guarded access (a split that does not divide) never leaves it. */
static void clamp_to_shape(SRegion *reg, const Buffer *buf) {
  for (int d = 0; !reg->empty && d < reg->n && d < buf->ndim; d++) {
    if (reg->min[d].n || buf->dims[d].kind != DIM_CONST) continue;
    int64_t lo = reg->min[d].c, hi = lo + reg->ext[d], size = buf->dims[d].value;
    if (lo < 0) lo = 0;
    if (hi > size) hi = size;
    if (hi > lo) reg->min[d].c = lo, reg->ext[d] = hi - lo;
  }
}

bool sched_block_region(const Stmt *block, const Buffer *buf, bool write, const SRanges *r,
                        SRegion *reg) {
  enum { MAXA = 64 };
  SAccess acc[MAXA];
  int n = sched_block_accesses(block, acc, MAXA);
  *reg = (SRegion){.empty = true};
  for (int i = 0; i < n; i++) {
    if (acc[i].buf != buf || acc[i].write != write) continue;
    if (acc[i].n > SCHED_MAX_DIMS) return false;
    SRegion one = {.n = acc[i].n};
    for (int d = 0; d < acc[i].n; d++) {
      SLin l;
      if (!sched_lin_compose(acc[i].idx[d], block, &l)) return false;
      sched_lin_bounds(&l, r, &one.min[d], &one.ext[d]);
    }
    if (!sched_region_union(reg, &one)) return false;
  }
  clamp_to_shape(reg, buf);
  return true;
}
