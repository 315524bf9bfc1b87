/* sched_cache.c — schedule primitives on buffers: cache_read (a block
 * reads a buffer through a copy made before its loops), cache_write (a
 * block writes a new buffer that a copy stores into the old one after its
 * loops) and storage_align (an allocated buffer padded so one axis's row
 * stride is factor * k + offset elements).  rly has one memory: the scope
 * names the new buffer and block (`A_shared`), as in TVM. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "sched/sched_int.h"

enum { MAXA = 64 };

/* The distinct buffers a block reads (write false: not counting those it
 * writes, as a reduction's accumulator) or writes, in order of first use. */
static int block_buffers(const Stmt *b, bool write, Buffer **out, int max) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA), k = 0;
  for (int i = 0; i < n; i++) {
    bool skip = acc[i].write != write;
    for (int j = 0; j < n && !write && !skip; j++) skip = acc[j].write && acc[j].buf == acc[i].buf;
    for (int j = 0; j < k && !skip; j++) skip = out[j] == acc[i].buf;
    if (!skip && k < max) out[k++] = acc[i].buf;
  }
  return k;
}

typedef struct Cache {
  bool write;
  const SchedArg *ba, *ia;
  SPath bp;
  Stmt *block;
  Buffer *buf;
} Cache;

/* The step's block and its buffer at the given index. */
static bool cache_buffer(Sched *s, const SchedStep *st, const char *key, bool write, Cache *c) {
  const char *name;
  int64_t idx;
  Buffer *bufs[MAXA];
  c->write = write;
  c->ba = sched_need(s, st, 0, "block", "a block");
  c->ia = c->ba ? sched_need(s, st, 1, key, "a buffer index") : NULL;
  if (!c->ia || !sched_arg_block(s, c->ba, &name) || !sched_arg_int(s, c->ia, &idx) ||
      !sched_need_block(s, name, c->ba->span, &c->bp))
    return false;
  c->block = c->bp.node[c->bp.n - 1];
  int n = block_buffers(c->block, write, bufs, MAXA);
  if (idx < 0 || idx >= n)
    return sched_fail(s, c->ia->span, "block \"%s\" %s %d buffer%s: no index %lld", name,
                      write ? "writes" : "reads", n, n == 1 ? "" : "s", (long long)idx);
  c->buf = bufs[idx];
  for (int d = 0; d < c->buf->ndim; d++)
    if (c->buf->dims[d].kind != DIM_CONST)
      return sched_fail(s, c->ia->span, "`%%%s` needs a constant shape", c->buf->name);
  return true;
}

/* The region of the buffer the block reads / writes over all its loops. */
static bool cache_region(Sched *s, const Cache *c, SRegion *reg) {
  SRanges r = {0};
  if (!sched_ranges_add_path(&r, &c->bp, 0, c->bp.n) ||
      !sched_block_region(c->block, c->buf, c->write, &r, reg) || reg->empty)
    return sched_fail(s, c->ba->span,
                      "block \"%s\" %s `%%%s` at indices that are not affine in constant loops",
                      c->block->u.block.name, c->write ? "writes" : "reads", c->buf->name);
  for (int d = 0; d < reg->n; d++)
    if (reg->min[d].n) return sched_fail(s, c->ba->span, "the region is not constant");
  return true;
}

static bool touches(const Stmt *b, const Buffer *buf, bool write) {
  SAccess acc[MAXA];
  int n = sched_block_accesses(b, acc, MAXA);
  for (int i = 0; i < n; i++)
    if (acc[i].buf == buf && acc[i].write == write) return true;
  return false;
}

/* No other block in the loops around the block writes (cache_read) or
 * uses (cache_write) the buffer: the copy goes before / after those loops. */
static bool cache_alone(Sched *s, const Cache *c) {
  const Stmt *blocks[64];
  int n = sched_blocks_under(c->bp.node[1], blocks, 64);
  for (int i = 0; i < n; i++) {
    const Stmt *b = blocks[i];
    if (b == c->block) continue;
    if (touches(b, c->buf, true) || (c->write && touches(b, c->buf, false)))
      return sched_fail(s, c->ba->span,
                        "block \"%s\" in the same loops also %s `%%%s`: the copy cannot go %s them",
                        b->u.block.name, c->write ? "uses" : "writes", c->buf->name,
                        c->write ? "after" : "before");
  }
  if (c->write && !c->block->u.block.init && touches(c->block, c->buf, false))
    return sched_fail(s, c->ba->span,
                      "block \"%s\" reads `%%%s` without an init: a new buffer would not hold "
                      "the old values",
                      c->block->u.block.name, c->buf->name);
  return true;
}

/* The new buffer: buf's shape, named `<buf>_<scope>`. */
static Buffer *cache_new_buffer(Sched *s, const Buffer *buf, const char *scope) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", buf->name, scope);
  for (char *c = name; *c; c++)
    if (*c == '.') *c = '_'; /* shared.dyn → A_shared_dyn */
  Buffer *nb = ARENA_NEW(s->a, Buffer);
  *nb = *buf;
  nb->name = sched_fresh_name(s, name);
  nb->id = ir_fresh_id();
  nb->no_init = false;
  return nb;
}

/* dst[v0, ...] = src[v0, ...] */
static Stmt *copy_store(Sched *s, TirVar *const *v, int n, Buffer *src, Buffer *dst) {
  PrimExpr **idx = arena_alloc(s->a, sizeof(PrimExpr *) * (size_t)(n ? n : 1));
  PrimExpr **idx2 = arena_alloc(s->a, sizeof(PrimExpr *) * (size_t)(n ? n : 1));
  for (int d = 0; d < n; d++) idx[d] = sched_var(s, v[d]), idx2[d] = sched_var(s, v[d]);
  PrimExpr *load = ARENA_NEW(s->a, PrimExpr);
  *load = (PrimExpr){.kind = PE_LOAD, .dtype = src->dtype, .span = s->step->span};
  load->u.load.buf = src, load->u.load.n = n, load->u.load.idx = idx2;
  Stmt *store = ARENA_NEW(s->a, Stmt);
  *store = (Stmt){.kind = ST_STORE, .span = s->step->span};
  store->u.store.buf = dst, store->u.store.n = n, store->u.store.idx = idx;
  store->u.store.value = load;
  return store;
}

/* for ax0, ... { block "<name>" (spatial v0 = min0 + ax0, ...) { dst[v] = src[v]; } } */
static Stmt *copy_nest(Sched *s, const SRegion *reg, Buffer *src, Buffer *dst, const char *name) {
  int n = reg->n;
  TirVar *ax[SCHED_MAX_DIMS], *v[SCHED_MAX_DIMS];
  IterVar *iters = arena_alloc(s->a, sizeof(IterVar) * (size_t)(n ? n : 1));
  char nm[32];
  for (int d = 0; d < n; d++) {
    snprintf(nm, sizeof nm, "ax%d", d);
    ax[d] = sched_new_var(s, nm, DT_INT32);
    snprintf(nm, sizeof nm, "v%d", d);
    v[d] = sched_new_var(s, nm, DT_INT32);
    PrimExpr *b = sched_bin(s, PB_ADD, sched_int(s, reg->min[d].c, DT_INT32), sched_var(s, ax[d]));
    iters[d] = (IterVar){.reduce = false, .var = v[d], .binding = b};
  }
  Stmt *blk = ARENA_NEW(s->a, Stmt);
  *blk = (Stmt){.kind = ST_BLOCK, .span = s->step->span};
  blk->u.block.name = name, blk->u.block.niters = n, blk->u.block.iters = iters;
  blk->u.block.body = copy_store(s, v, n, src, dst);
  Stmt *body = blk;
  for (int d = n - 1; d >= 0; d--)
    body = sched_for(s, ax[d], sched_int(s, reg->ext[d], DT_INT32), LOOP_RANGE, body);
  return body;
}

/* The block reading / writing nb instead of buf, nb's alloc after the
 * other allocs, the copy before / after the loops around the block. */
static void cache_install(Sched *s, const Cache *c, Buffer *nb, Stmt *nest) {
  SchedSubst m = {0};
  subst_buf(&m, c->buf, nb);
  Stmt *blk = sched_copy(s, c->block, &m);
  subst_free(&m);
  const Stmt *top = c->bp.node[1];
  int at = 0;
  while (c->bp.node[0]->u.seq.items[at] != top) at++;
  sched_set_body(s, sched_replace(s, &c->bp, blk));
  Stmt *body = s->f->body, *alloc = ARENA_NEW(s->a, Stmt);
  *alloc = (Stmt){.kind = ST_ALLOC, .span = s->step->span};
  alloc->u.alloc = nb;
  PtrVec v = {0};
  int nallocs = 0;
  while (nallocs < body->u.seq.n && body->u.seq.items[nallocs]->kind == ST_ALLOC) nallocs++;
  for (int i = 0; i < body->u.seq.n; i++) {
    if (i == nallocs) vec_push(&v, alloc);
    if (i == at && !c->write) vec_push(&v, nest);
    vec_push(&v, body->u.seq.items[i]);
    if (i == at && c->write) vec_push(&v, nest);
  }
  if (nallocs == body->u.seq.n) vec_push(&v, alloc);
  sched_set_body(s, sched_seq(s, (int)v.len, (Stmt **)v.items));
  vec_free(&v);
}

/* A storage scope as TVM writes them: letters, digits, `_` and `.`. */
static bool scope_ok(Sched *s, const SchedArg *a, const char *scope) {
  bool ok = *scope != '\0';
  for (const char *c = scope; *c; c++)
    ok &= (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '.';
  if (ok) return true;
  return sched_fail(s, a->span,
                    "\"%s\" is not a storage scope (e.g. \"global\", \"shared\", "
                    "\"local\")",
                    scope);
}

static bool cache_step(Sched *s, const SchedStep *st, bool write, SchedVals *out) {
  Cache c;
  const char *scope;
  SRegion reg;
  if (!cache_buffer(s, st, write ? "write_buffer_index" : "read_buffer_index", write, &c))
    return false;
  const SchedArg *sa = sched_need(s, st, 2, "storage_scope", "a storage scope");
  if (!sa || !sched_arg_str(s, sa, &scope) || !scope_ok(s, sa, scope) ||
      !cache_region(s, &c, &reg) || !cache_alone(s, &c))
    return false;
  Buffer *nb = cache_new_buffer(s, c.buf, scope);
  Stmt *nest =
      write ? copy_nest(s, &reg, nb, c.buf, nb->name) : copy_nest(s, &reg, c.buf, nb, nb->name);
  cache_install(s, &c, nb, nest);
  out->v[out->n++] = (Handle){.kind = H_BLOCK, .block = nb->name};
  return true;
}

bool sp_cache_read(Sched *s, const SchedStep *st, SchedVals *out) {
  return cache_step(s, st, false, out);
}

bool sp_cache_write(Sched *s, const SchedStep *st, SchedVals *out) {
  return cache_step(s, st, true, out);
}

/* ───────────────────────── storage_align ───────────────────────── */

static bool is_param(const Sched *s, const Buffer *b) {
  for (int i = 0; i < s->f->nparams; i++)
    if (s->f->params[i] == b) return true;
  return false;
}

/* The least size >= dims[axis + 1] giving axis a stride of factor*k + offset. */
static int64_t aligned_dim(const Buffer *b, int axis, int64_t factor, int64_t offset) {
  int64_t inner = 1;
  for (int d = axis + 2; d < b->ndim; d++) inner *= b->dims[d].value;
  int64_t base = b->dims[axis + 1].value;
  for (int64_t x = base; x < base + factor; x++)
    if ((x * inner) % factor == offset) return x;
  return -1;
}

static bool align_args(Sched *s, const SchedStep *st, int64_t v[3], const SchedArg *a[3]) {
  static const char *keys[3] = {"axis", "factor", "offset"};
  for (int i = 0; i < 3; i++) {
    a[i] = sched_need(s, st, 2 + i, keys[i], keys[i]);
    if (!a[i] || !sched_arg_int(s, a[i], &v[i])) return false;
  }
  if (v[1] <= 0) return sched_fail(s, a[1]->span, "the factor must be positive");
  if (v[2] < 0 || v[2] >= v[1])
    return sched_fail(s, a[2]->span, "the offset must be in [0, factor)");
  return true;
}

bool sp_storage_align(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  Cache c;
  int64_t v[3];
  const SchedArg *a[3];
  if (!cache_buffer(s, st, "buffer_index", true, &c) || !align_args(s, st, v, a)) return false;
  int nd = c.buf->ndim, axis = (int)(v[0] < 0 ? v[0] + nd : v[0]);
  if (is_param(s, c.buf))
    return sched_fail(s, c.ia->span, "`%%%s` is a parameter: only an allocated buffer is padded",
                      c.buf->name);
  if (axis < 0 || axis >= nd)
    return sched_fail(s, a[0]->span, "`%%%s` has no axis %lld", c.buf->name, (long long)v[0]);
  if (axis == nd - 1)
    return sched_fail(s, a[0]->span, "axis %d is the last of `%%%s`: its stride is 1", axis,
                      c.buf->name);
  int64_t x = aligned_dim(c.buf, axis, v[1], v[2]);
  if (x < 0)
    return sched_fail(s, a[1]->span,
                      "no size of dimension %d gives axis %d a stride of %lld*k + %lld", axis + 1,
                      axis, (long long)v[1], (long long)v[2]);
  if (x == c.buf->dims[axis + 1].value) return true;
  Buffer *nb = ARENA_NEW(s->a, Buffer);
  *nb = *c.buf;
  nb->dims = arena_memdup(s->a, c.buf->dims, sizeof(Dim) * (size_t)nd);
  nb->dims[axis + 1].value = x;
  SchedSubst m = {0};
  subst_buf(&m, c.buf, nb);
  sched_set_body(s, sched_copy(s, s->f->body, &m));
  subst_free(&m);
  return true;
}
