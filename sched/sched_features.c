/* sched_features.c — the tuner's cost-model features of a candidate: a
 * fixed-length vector describing the loop nest that runs (prim_to_run),
 * after Ansor / MetaSchedule's per-store features, simplified.
 *
 * Every store of the nest is described (its trip count, float ops by kind,
 * its enclosing loops' kinds and extents, and each buffer access's stride
 * along the innermost loop and the bytes it touches under the 1, 2 and 4
 * innermost loops and the whole nest); the vector holds the dominant store
 * (the most float ops executed, else the most executed), the function's
 * totals and its allocations.  The slots are SCHED_FEATURES (sched.h).
 * Addresses are evaluated numerically (size variables 7): the stride of a
 * loop is the address moved by one step of it from the origin. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"

enum { MAXD = 24, MAXA = 16, MAXV = 256 };

/* A variable in scope: a loop level's variable, or bound to an expression
 * (a block iteration variable, a let). */
typedef struct Bind {
  const TirVar *var;
  int level;           /* >= 0: the loop level */
  const PrimExpr *val; /* else its value */
} Bind;

typedef struct Loop {
  int64_t extent;
  LoopKind kind;
} Loop;

typedef struct Access {
  const Buffer *buf;
  int n;
  PrimExpr *const *idx;
} Access;

/* One store as it runs. */
typedef struct Store {
  int depth;
  Loop loops[MAXD];
  double trips, ops[6]; /* ops per execution: add, mul, div, math, min/max, int */
  int nacc;             /* access 0 is the store itself */
  Access acc[MAXA];
  int64_t st[MAXA][MAXD]; /* each access's stride along each loop level */
} Store;

typedef struct Walk {
  const PrimFunc *f;
  Bind binds[MAXV];
  int nbinds, depth;
  Loop loops[MAXD];
  int64_t point[MAXD]; /* the loop variables' values while evaluating */
  Store best, cur;
  double best_score, total_flops, stores_exec;
  int nstores, nallocs, nsmall;
  double alloc_bytes, alloc_max;
} Walk;

static const char *const names[SCHED_NFEATURES] = {
#define X(e, name, doc) name,
    SCHED_FEATURES(X)
#undef X
#define X(e, name, doc) "a0." name, "a1." name, "a2." name, "a3." name,
        SCHED_ACCESS_FEATURES(X)
#undef X
};

const char *sched_feature_name(int i) { return i >= 0 && i < SCHED_NFEATURES ? names[i] : NULL; }

/* ───────────────────────── integer evaluation ───────────────────────── */

static int64_t eval(const Walk *w, const PrimExpr *e, int fuel);

static int64_t lookup(const Walk *w, const TirVar *v, int fuel) {
  for (int i = w->nbinds; i-- > 0;)
    if (w->binds[i].var == v)
      return w->binds[i].level >= 0 ? w->point[w->binds[i].level]
                                    : eval(w, w->binds[i].val, fuel - 1);
  return v->is_size ? 7 : 0;
}

static int64_t eval_bin(PrimBinOp op, int64_t a, int64_t b) {
  switch (op) {
    case PB_ADD:
      return a + b;
    case PB_SUB:
      return a - b;
    case PB_MUL:
      return a * b;
    case PB_DIV:
      return b ? (a - (((a % b) + b) % b)) / b : 0; /* floor */
    case PB_MOD:
      return b ? ((a % b) + b) % b : 0;
    case PB_LT:
      return a < b;
    case PB_LE:
      return a <= b;
    case PB_GT:
      return a > b;
    case PB_GE:
      return a >= b;
    case PB_EQ:
      return a == b;
    case PB_NE:
      return a != b;
    case PB_AND:
      return a && b;
    case PB_OR:
      return a || b;
  }
  return 0;
}

/* e's integer value at w->point (0 for what is not an integer expression). */
static int64_t eval(const Walk *w, const PrimExpr *e, int fuel) {
  if (!e || fuel <= 0) return 0;
  switch (e->kind) {
    case PE_INT:
      return e->u.i;
    case PE_VAR:
      return lookup(w, e->u.var, fuel);
    case PE_CAST:
      return eval(w, e->u.cast.value, fuel - 1);
    case PE_NEG:
      return -eval(w, e->u.operand, fuel - 1);
    case PE_BIN:
      return eval_bin(e->u.bin.op, eval(w, e->u.bin.a, fuel - 1), eval(w, e->u.bin.b, fuel - 1));
    case PE_CALL:
      if ((e->u.call.fn == PI_MIN || e->u.call.fn == PI_MAX) && e->u.call.n == 2) {
        int64_t a = eval(w, e->u.call.args[0], fuel - 1), b = eval(w, e->u.call.args[1], fuel - 1);
        return (e->u.call.fn == PI_MIN) == (a < b) ? a : b;
      }
      return 0;
    default:
      return 0;
  }
}

static int64_t dim_value(const Dim *d) { return d->kind == DIM_CONST ? d->value : 7; }

/* The row-major element offset of an access at w->point. */
static int64_t address(const Walk *w, const Access *a) {
  int64_t off = 0;
  for (int i = 0; i < a->n; i++) {
    int64_t extent = i < a->buf->ndim ? dim_value(&a->buf->dims[i]) : 1;
    off = off * extent + eval(w, a->idx[i], 64);
  }
  return off;
}

/* ───────────────────────── one store ───────────────────────── */

/* Ops per execution of e, by kind (Store.ops), and its loads as accesses. */
static void count_expr(Store *s, const PrimExpr *e) {
  if (!e) return;
  bool fl = dtype_is_float(e->dtype);
  switch (e->kind) {
    case PE_LOAD:
      if (s->nacc < MAXA) s->acc[s->nacc++] = (Access){e->u.load.buf, e->u.load.n, e->u.load.idx};
      return; /* index arithmetic is not the value's */
    case PE_BIN: {
      PrimBinOp op = e->u.bin.op;
      bool fop = dtype_is_float(e->u.bin.a->dtype);
      int k = op >= PB_LT ? 4 : !fop ? 5 : op == PB_MUL ? 1 : op >= PB_DIV ? 2 : 0;
      s->ops[k] += 1;
      count_expr(s, e->u.bin.a), count_expr(s, e->u.bin.b);
      return;
    }
    case PE_NEG:
      s->ops[fl ? 0 : 5] += 1; /* fall through */
    case PE_NOT:
      count_expr(s, e->u.operand);
      return;
    case PE_CAST:
      count_expr(s, e->u.cast.value);
      return;
    case PE_CALL: {
      PrimIntrinsic fn = e->u.call.fn;
      bool mm = fn == PI_MAX || fn == PI_MIN || fn == PI_ABS || fn == PI_SELECT;
      s->ops[mm ? 4 : fl ? 3 : 5] += 1;
      for (int i = 0; i < e->u.call.n; i++) count_expr(s, e->u.call.args[i]);
      return;
    }
    default:
      return;
  }
}

static double float_ops(const Store *s) {
  return s->ops[0] + s->ops[1] + s->ops[2] + s->ops[3] + s->ops[4];
}

/* The stride of each loop level of access a, its variables in scope. */
static void strides(Walk *w, const Access *a, int64_t *st) {
  memset(w->point, 0, sizeof w->point);
  int64_t base = address(w, a);
  for (int l = 0; l < w->depth; l++) {
    w->point[l] = 1;
    st[l] = address(w, a) - base;
    w->point[l] = 0;
  }
}

static void on_store(Walk *w, const Stmt *st) {
  Store *s = &w->cur;
  memset(s, 0, sizeof *s);
  s->depth = w->depth, s->trips = 1;
  for (int i = 0; i < w->depth; i++)
    s->loops[i] = w->loops[i], s->trips *= (double)w->loops[i].extent;
  s->acc[s->nacc++] = (Access){st->u.store.buf, st->u.store.n, st->u.store.idx};
  count_expr(s, st->u.store.value);
  for (int i = 0; i < s->nacc; i++) strides(w, &s->acc[i], s->st[i]);
  double score = s->trips * (1 + 1e3 * float_ops(s));
  w->total_flops += s->trips * float_ops(s), w->stores_exec += s->trips, w->nstores++;
  if (score > w->best_score) w->best_score = score, w->best = *s;
}

/* ───────────────────────── the walk ───────────────────────── */

static void walk(Walk *w, const Stmt *s);

static void bind(Walk *w, const TirVar *v, int level, const PrimExpr *val) {
  if (w->nbinds < MAXV) w->binds[w->nbinds++] = (Bind){v, level, val};
}

static void walk_for(Walk *w, const Stmt *s) {
  int d0 = w->depth, b0 = w->nbinds;
  for (int i = 0; i < s->u.for_.nvars && w->depth < MAXD; i++) {
    memset(w->point, 0, sizeof w->point);
    int64_t lo = eval(w, tir_for_lo(s, i), 64), hi = eval(w, s->u.for_.hi[i], 64);
    w->loops[w->depth] = (Loop){hi > lo ? hi - lo : 0, s->u.for_.loop};
    bind(w, s->u.for_.vars[i], w->depth++, NULL);
  }
  walk(w, s->u.for_.body);
  w->depth = d0, w->nbinds = b0;
}

static void walk_alloc(Walk *w, const Buffer *b) {
  double bytes = dtype_bytes(b->dtype);
  for (int i = 0; i < b->ndim; i++) bytes *= (double)dim_value(&b->dims[i]);
  w->nallocs++, w->alloc_bytes += bytes, w->nsmall += bytes <= 4096;
  if (bytes > w->alloc_max) w->alloc_max = bytes;
}

static void walk(Walk *w, const Stmt *s) {
  if (!s) return;
  int b0 = w->nbinds;
  switch (s->kind) {
    case ST_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) walk(w, s->u.seq.items[i]);
      w->nbinds = b0; /* lets bind to the end of their sequence */
      return;
    case ST_FOR:
      walk_for(w, s);
      return;
    case ST_BLOCK:
      for (int i = 0; i < s->u.block.niters; i++)
        bind(w, s->u.block.iters[i].var, -1, s->u.block.iters[i].binding);
      walk(w, s->u.block.init), walk(w, s->u.block.body);
      w->nbinds = b0;
      return;
    case ST_STORE:
      on_store(w, s);
      return;
    case ST_ALLOC:
      walk_alloc(w, s->u.alloc);
      return;
    case ST_LET:
      bind(w, s->u.let.var, -1, s->u.let.value);
      return;
    case ST_IF:
      walk(w, s->u.if_.then_), walk(w, s->u.if_.else_);
      return;
  }
}

/* ───────────────────────── the vector ───────────────────────── */

static float lg(double x) { return (float)log2(1 + (x > 0 ? x : 0)); }

/* Elements a touches while the loops from level `from` inward run: the
 * span its strides cover, at most the product of the moving loops' extents. */
static double touched(const Store *s, const int64_t *st, int from) {
  double span = 1, prod = 1;
  for (int l = from < 0 ? 0 : from; l < s->depth; l++) {
    if (!st[l] || s->loops[l].extent <= 1) continue;
    span += (double)llabs(st[l]) * (double)(s->loops[l].extent - 1);
    prod *= (double)s->loops[l].extent;
  }
  return span < prod ? span : prod;
}

static void access_features(const Store *s, int i, int slot, float *out, double *bytes_all) {
  const Access *a = &s->acc[i];
  const int64_t *st = s->st[i];
  double eb = dtype_bytes(a->buf->dtype), inner = s->depth ? (double)st[s->depth - 1] : 0;
  double all = touched(s, st, 0);
  out[SF_A_STRIDE * 4 + slot] = lg(fabs(inner));
  out[SF_A_CONTIG * 4 + slot] = inner == 1 || inner == -1;
  out[SF_A_BYTES1 * 4 + slot] = lg(eb * touched(s, st, s->depth - 1));
  out[SF_A_BYTES2 * 4 + slot] = lg(eb * touched(s, st, s->depth - 2));
  out[SF_A_BYTES4 * 4 + slot] = lg(eb * touched(s, st, s->depth - 4));
  out[SF_A_BYTES_ALL * 4 + slot] = lg(eb * all);
  out[SF_A_REUSE * 4 + slot] = lg(s->trips / all - 1);
  *bytes_all += eb * all;
}

static void loop_features(const Store *s, float *out) {
  double unroll = 1, par = 1;
  int vec = 0;
  for (int l = 0; l < s->depth; l++) {
    if (s->loops[l].kind == LOOP_UNROLLED) unroll *= (double)s->loops[l].extent;
    if (s->loops[l].kind == LOOP_PARALLEL) par *= (double)s->loops[l].extent;
    if (s->loops[l].kind == LOOP_VECTORIZED) vec = (int)s->loops[l].extent;
  }
  const Loop *in = s->depth ? &s->loops[s->depth - 1] : NULL;
  out[SF_DEPTH] = (float)s->depth;
  out[SF_INNER_EXTENT] = in ? lg((double)in->extent - 1) : 0;
  out[SF_VEC_LANES] = lg(vec - 1);
  out[SF_VEC_INNER] = in && in->kind == LOOP_VECTORIZED;
  out[SF_UNROLL] = lg(unroll - 1);
  out[SF_PARALLEL] = lg(par - 1);
  out[SF_PAR_OUTER] = s->depth && s->loops[0].kind == LOOP_PARALLEL;
}

/* The loads of the best store in order of the bytes they touch (most first). */
static int order_loads(const Store *s, int *idx) {
  double b[MAXA];
  int n = 0;
  for (int i = 1; i < s->nacc; i++) {
    b[n] = touched(s, s->st[i], 0) * dtype_bytes(s->acc[i].buf->dtype);
    int j = n++;
    for (; j > 0 && b[j] > b[j - 1]; j--) {
      double t = b[j];
      b[j] = b[j - 1], b[j - 1] = t;
      idx[j] = idx[j - 1];
    }
    idx[j] = i;
  }
  return n;
}

void sched_features(const PrimFunc *f, float *out) {
  Walk w; /* about 16 KiB */
  memset(&w, 0, sizeof w);
  memset(out, 0, sizeof *out * SCHED_NFEATURES);
  w.f = prim_to_run(f);
  walk(&w, w.f->body);
  const Store *s = &w.best;
  out[SF_FLOPS] = lg(w.total_flops), out[SF_STORES] = (float)w.nstores;
  out[SF_STORES_EXEC] = lg(w.stores_exec), out[SF_ALLOCS] = (float)w.nallocs;
  out[SF_ALLOC_BYTES] = lg(w.alloc_bytes), out[SF_ALLOC_MAX] = lg(w.alloc_max);
  out[SF_ALLOC_SMALL] = (float)w.nsmall;
  if (!w.nstores) return;
  out[SF_TRIPS] = lg(s->trips);
  for (int k = 0; k < 6; k++) out[SF_ADD + k] = lg(s->ops[k] * s->trips);
  loop_features(s, out);
  int idx[MAXA], nl = order_loads(s, idx);
  out[SF_LOADS] = (float)(s->nacc - 1);
  double bytes = 0;
  access_features(s, 0, 0, out + SF_ACCESS0, &bytes);
  for (int i = 0; i < nl && i < 3; i++) access_features(s, idx[i], i + 1, out + SF_ACCESS0, &bytes);
  for (int i = 3; i < nl; i++) /* the rest count in the intensity */
    bytes += touched(s, s->st[idx[i]], 0) * dtype_bytes(s->acc[idx[i]].buf->dtype);
  out[SF_INTENSITY] = lg(float_ops(s) * s->trips / (bytes > 0 ? bytes : 1));
}
