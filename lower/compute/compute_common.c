/* compute_common.c — the lowering context of compute rules (lower/compute/compute.h):
 * TIR builders, size variables, statement lists, broadcasting and the
 * elementwise schedule.  (The rules themselves are named by the ops'
 * registry rows; attributes are read with op_attr_*, ops/rel.c.)
 *
 * Invariants: everything is allocated in the given arena; names of loop
 * variables and buffers are unique within one context (a counter), so the
 * printed prim function reads back to the same function. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/ops.h"

static const Span no_span;

struct LowerCx {
  Arena *a;
  char why[256];
  bool failed;
  const Expr *root;
  Buffer *out;
  StrMap sizes; /* name → TirVar */
  PtrVec size_list;
  PtrVec lists; /* open statement lists (PtrVec *) */
  int counter;
  bool exact;              /* !fast_math */
  PtrVec totals;           /* buffers written whole by one store (lc_mark_total) */
  const LowerKnobs *knobs; /* overrides of the rules' knobs, or NULL */
  uint32_t knobs_read;     /* the knobs the rules asked (bit per KnobId) */
};

void lc_set_knobs(LowerCx *L, const LowerKnobs *k) { L->knobs = k; }
int lc_knob(LowerCx *L, KnobId id) {
  L->knobs_read |= 1u << id;
  return knob_value(L->knobs, id);
}
uint32_t lc_knobs_read(const LowerCx *L) { return L->knobs_read; }

void lc_set_fast_math(LowerCx *L, bool on) { L->exact = !on; }
bool lc_fast_math(const LowerCx *L) { return !L->exact; }

LowerCx *lc_new(Arena *a) {
  LowerCx *L = calloc(1, sizeof *L);
  if (!L) rly_oom();
  L->a = a;
  return L;
}

void lc_free(LowerCx *L) {
  if (!L) return;
  strmap_free(&L->sizes);
  free(L->size_list.items);
  free(L->totals.items);
  for (size_t i = 0; i < L->lists.len; i++) {
    PtrVec *v = L->lists.items[i];
    free(v->items);
    free(v);
  }
  free(L->lists.items);
  free(L);
}

Arena *lc_arena(LowerCx *L) { return L->a; }

LTensor *lc_fail(LowerCx *L, const char *fmt, ...) {
  if (!L->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->why, sizeof L->why, fmt, ap);
    va_end(ap);
  }
  L->failed = true;
  return NULL;
}

const char *lc_why(LowerCx *L) { return L->why; }
bool lc_failed(LowerCx *L) { return L->failed; }

void lc_set_root(LowerCx *L, const Expr *root) { L->root = root, L->out = NULL; }

TirVar *lc_size_var(LowerCx *L, const char *name) {
  TirVar *v = strmap_get(&L->sizes, name);
  if (v) return v;
  v = ARENA_NEW(L->a, TirVar);
  *v = (TirVar){
      .name = arena_strdup(L->a, name), .dtype = DT_INT64, .id = ir_fresh_id(), .is_size = true};
  strmap_put(&L->sizes, v->name, v);
  vec_push(&L->size_list, v);
  return v;
}

int lc_nsize_vars(LowerCx *L) { return (int)L->size_list.len; }
TirVar **lc_size_vars(LowerCx *L) { return (TirVar **)L->size_list.items; }

/* ───────────────────────────── expressions ───────────────────────────── */

static PrimExpr *pe(LowerCx *L, PrimExprKind k, DType dt) {
  PrimExpr *e = ARENA_NEW(L->a, PrimExpr);
  e->kind = k, e->dtype = dt, e->span = no_span;
  return e;
}

PrimExpr *lc_int(LowerCx *L, int64_t v) {
  PrimExpr *e = pe(L, PE_INT, v >= INT32_MIN && v <= INT32_MAX ? DT_INT32 : DT_INT64);
  e->u.i = v;
  return e;
}

/* v as an integer of dt by the kernels' cast rule: truncated toward 0,
 * saturated at dt's range, NaN as 0 (the bits of a uint64 in an int64). */
static int64_t int_of(DType dt, double v) {
  bool u = dtype_class(dt) == 'u';
  double lo = u ? 0 : (double)lc_int_min(dt);
  double hi = dt == DT_UINT64 ? 18446744073709551616.0 : (double)lc_int_max(dt);
  if (isnan(v)) return 0;
  if (v <= lo) return lc_int_min(dt);
  if (v >= hi) return lc_int_max(dt);
  return u ? (int64_t)(uint64_t)v : (int64_t)v;
}

PrimExpr *lc_lit(LowerCx *L, DType dt, double v) {
  if (dtype_is_float(dt)) {
    PrimExpr *e = pe(L, PE_FLOAT, dt);
    e->u.f = dt == DT_FLOAT32 ? (double)(float)v : v;
    return e;
  }
  PrimExpr *e = pe(L, PE_INT, dt);
  e->u.i = dt == DT_BOOL ? v != 0 : int_of(dt, v);
  return e;
}

PrimExpr *lc_var(LowerCx *L, TirVar *v) {
  PrimExpr *e = pe(L, PE_VAR, v->dtype);
  e->u.var = v;
  return e;
}

static DType wider_int(DType a, DType b) { return dtype_bytes(a) >= dtype_bytes(b) ? a : b; }

/* Index arithmetic on literals, folded (non-negative operands only, so C
 * and TIR division agree). */
static PrimExpr *fold(LowerCx *L, PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  int64_t x = lc_const(a), y = lc_const(b);
  if (!dtype_is_int(a->dtype) || !dtype_is_int(b->dtype)) return NULL;
  if ((op == PB_ADD || op == PB_SUB) && y == 0) return a;
  if (op == PB_ADD && x == 0) return b;
  if ((op == PB_MUL || op == PB_DIV) && y == 1) return a;
  if (op == PB_MUL && x == 1) return b;
  if (x < 0 || y < 0 || x > INT32_MAX || y > INT32_MAX) return NULL;
  switch (op) {
    case PB_ADD:
      return lc_int(L, x + y);
    case PB_SUB:
      return x >= y ? lc_int(L, x - y) : NULL;
    case PB_MUL:
      return lc_int(L, x * y);
    case PB_DIV:
      return y ? lc_int(L, x / y) : NULL;
    case PB_MOD:
      return y ? lc_int(L, x % y) : NULL;
    default:
      return NULL;
  }
}

PrimExpr *lc_bin(LowerCx *L, PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  PrimExpr *f = op <= PB_MOD ? fold(L, op, a, b) : NULL;
  if (f) return f;
  DType dt = a->dtype;
  if (dtype_is_int(a->dtype) && dtype_is_int(b->dtype)) dt = wider_int(a->dtype, b->dtype);
  if (op >= PB_LT) dt = DT_BOOL;
  PrimExpr *e = pe(L, PE_BIN, dt);
  e->u.bin.op = op, e->u.bin.a = a, e->u.bin.b = b;
  return e;
}

PrimExpr *lc_call(LowerCx *L, PrimIntrinsic fn, PrimExpr *a, PrimExpr *b, PrimExpr *c) {
  int n = prim_intrinsic_arity(fn);
  PrimExpr *e = pe(L, PE_CALL, fn == PI_SELECT ? b->dtype : a->dtype);
  if (fn != PI_SELECT && n == 2 && dtype_is_int(a->dtype) && dtype_is_int(b->dtype))
    e->dtype = wider_int(a->dtype, b->dtype);
  PrimExpr **args = ARENA_ARRAY(L->a, PrimExpr *, 3);
  args[0] = a, args[1] = b, args[2] = c;
  e->u.call.fn = fn, e->u.call.n = n, e->u.call.args = args;
  return e;
}

PrimExpr *lc_cast(LowerCx *L, DType to, PrimExpr *x) {
  if (x->dtype == to) return x;
  if (x->kind == PE_INT && dtype_is_int(x->dtype) && dtype_is_float(to))
    return lc_lit(L, to, (double)x->u.i);        /* a count becomes a float literal */
  if (to == DT_BOOL && dtype_is_float(x->dtype)) /* numpy's: NaN is true (TIR's cast: false) */
    return lc_bin(L, PB_NE, x, lc_lit(L, x->dtype, 0));
  PrimExpr *e = pe(L, PE_CAST, to);
  e->u.cast.to = to, e->u.cast.value = x;
  return e;
}

/* A tie of equal zeros: a + b is the larger (+0 unless both are -0),
 * -(-a - b) the smaller. */
PrimExpr *lc_extreme(LowerCx *L, PrimExpr *a, PrimExpr *b, bool max) {
  PrimExpr *m = lc_call(L, max ? PI_MAX : PI_MIN, a, b, NULL);
  if (!dtype_is_float(a->dtype)) return m;
  PrimExpr *zeros = max ? lc_bin(L, PB_ADD, a, b) : lc_neg(L, lc_bin(L, PB_SUB, lc_neg(L, a), b));
  PrimExpr *is_zero = lc_bin(L, PB_EQ, a, lc_lit(L, a->dtype, 0));
  PrimExpr *tie = lc_call(L, PI_SELECT, is_zero, zeros, a);
  return lc_call(L, PI_SELECT, lc_bin(L, PB_EQ, a, b), tie, m);
}

PrimExpr *lc_bitcast(LowerCx *L, DType to, PrimExpr *x) {
  PrimExpr *e = pe(L, PE_CAST, to);
  e->u.cast.to = to, e->u.cast.value = x, e->u.cast.bits = true;
  return e;
}

PrimExpr *lc_neg(LowerCx *L, PrimExpr *x) {
  PrimExpr *e = pe(L, PE_NEG, x->dtype);
  e->u.operand = x;
  return e;
}

PrimExpr *lc_not(LowerCx *L, PrimExpr *x) {
  PrimExpr *e = pe(L, PE_NOT, DT_BOOL);
  e->u.operand = x;
  return e;
}

PrimExpr *lc_load(LowerCx *L, Buffer *b, int n, PrimExpr **idx) {
  PrimExpr *e = pe(L, PE_LOAD, b->dtype);
  PrimExpr **ix = ARENA_ARRAY(L->a, PrimExpr *, n + 1);
  for (int i = 0; i < n; i++) ix[i] = idx[i];
  e->u.load.buf = b, e->u.load.n = n, e->u.load.idx = ix;
  return e;
}

int64_t lc_const(const PrimExpr *e) { return e->kind == PE_INT ? e->u.i : -1; }

bool lc_same_dim(const PrimExpr *a, const PrimExpr *b) {
  if (a->kind == PE_INT && b->kind == PE_INT) return a->u.i == b->u.i;
  if (a->kind == PE_VAR && b->kind == PE_VAR) return strcmp(a->u.var->name, b->u.var->name) == 0;
  return a == b;
}

PrimExpr *lc_mul(LowerCx *L, PrimExpr *a, PrimExpr *b) {
  if (lc_const(a) >= 0 && lc_const(b) >= 0) return lc_int(L, lc_const(a) * lc_const(b));
  if (lc_const(a) == 1) return b;
  if (lc_const(b) == 1) return a;
  return lc_bin(L, PB_MUL, a, b);
}

PrimExpr *lc_plus(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_ADD, a, b); }
PrimExpr *lc_minus(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_SUB, a, b); }
PrimExpr *lc_times(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_MUL, a, b); }

/* ───────────────────────────── statements ───────────────────────────── */

static Stmt *st(LowerCx *L, StmtKind k) {
  Stmt *s = ARENA_NEW(L->a, Stmt);
  s->kind = k, s->span = no_span;
  return s;
}

TirVar *lc_tvar(LowerCx *L, const char *prefix, const PrimExpr *extent) {
  TirVar *v = ARENA_NEW(L->a, TirVar);
  DType dt = extent && dtype_is_int(extent->dtype) ? extent->dtype : DT_INT32;
  *v = (TirVar){
      .name = arena_printf(L->a, "%s%d", prefix, L->counter++), .dtype = dt, .id = ir_fresh_id()};
  return v;
}

void lc_open(LowerCx *L) {
  PtrVec *v = calloc(1, sizeof *v);
  if (!v) rly_oom();
  vec_push(&L->lists, v);
}

Stmt *lc_close(LowerCx *L) {
  PtrVec *v = vec_pop(&L->lists);
  Stmt *s = st(L, ST_SEQ);
  s->u.seq.n = (int)v->len;
  s->u.seq.items = (Stmt **)vec_finish(v, L->a);
  free(v);
  return s;
}

void lc_emit(LowerCx *L, Stmt *s) {
  RLY_ASSERT(L->lists.len > 0);
  vec_push(L->lists.items[L->lists.len - 1], s);
}

void lc_store(LowerCx *L, Buffer *b, int n, PrimExpr **idx, PrimExpr *value) {
  Stmt *s = st(L, ST_STORE);
  PrimExpr **ix = ARENA_ARRAY(L->a, PrimExpr *, n + 1);
  for (int i = 0; i < n; i++) ix[i] = idx[i];
  s->u.store.buf = b, s->u.store.n = n, s->u.store.idx = ix;
  s->u.store.value = lc_cast(L, b->dtype, value);
  lc_emit(L, s);
}

void lc_for(LowerCx *L, LoopKind kind, TirVar *v, PrimExpr *extent, Stmt *body) {
  if (lc_const(extent) == 0) return; /* runs nothing */
  Stmt *s = st(L, ST_FOR);
  s->u.for_.loop = kind;
  s->u.for_.nvars = 1;
  s->u.for_.vars = ARENA_ARRAY(L->a, TirVar *, 1);
  s->u.for_.vars[0] = v;
  s->u.for_.hi = ARENA_ARRAY(L->a, PrimExpr *, 1);
  if (kind == LOOP_RANGE) {
    s->u.for_.lo = ARENA_ARRAY(L->a, PrimExpr *, 1);
    s->u.for_.lo[0] = lc_int(L, 0);
  }
  s->u.for_.hi[0] = extent;
  s->u.for_.body = body;
  lc_emit(L, s);
}

void lc_if(LowerCx *L, PrimExpr *cond, Stmt *then_) { lc_if_else(L, cond, then_, NULL); }

void lc_if_else(LowerCx *L, PrimExpr *cond, Stmt *then_, Stmt *else_) {
  Stmt *s = st(L, ST_IF);
  s->u.if_.cond = cond, s->u.if_.then_ = then_, s->u.if_.else_ = else_;
  lc_emit(L, s);
}

static bool simple_shape(int ndim, PrimExpr **shape) {
  for (int i = 0; i < ndim; i++)
    if (shape[i]->kind != PE_INT && !(shape[i]->kind == PE_VAR && shape[i]->u.var->is_size))
      return false;
  return true;
}

static Dim dim_of(LowerCx *L, PrimExpr *e) {
  if (e->kind == PE_INT) return (Dim){DIM_CONST, e->u.i, NULL};
  RLY_ASSERT(e->kind == PE_VAR && e->u.var->is_size);
  (void)L;
  return (Dim){DIM_VAR, 0, e->u.var->name};
}

Buffer *lc_buffer(LowerCx *L, const char *name, DType dt, int ndim, PrimExpr **shape) {
  Buffer *b = ARENA_NEW(L->a, Buffer);
  b->name = name, b->dtype = dt, b->ndim = ndim, b->id = ir_fresh_id(), b->span = no_span;
  b->dims = ARENA_ARRAY(L->a, Dim, ndim + 1);
  for (int i = 0; i < ndim; i++) b->dims[i] = dim_of(L, shape[i]);
  return b;
}

Buffer *lc_alloc(LowerCx *L, const char *prefix, DType dt, int ndim, PrimExpr **shape) {
  if (!simple_shape(ndim, shape)) return NULL;
  Buffer *b = lc_buffer(L, arena_printf(L->a, "%s%d", prefix, L->counter++), dt, ndim, shape);
  Stmt *s = st(L, ST_ALLOC);
  s->u.alloc = b;
  lc_emit(L, s);
  return b;
}

Buffer *lc_output(LowerCx *L, DType dt, int ndim, PrimExpr **shape) {
  if (L->out) return L->out;
  if (!simple_shape(ndim, shape)) return lc_fail(L, "the result has a computed shape"), NULL;
  return L->out = lc_buffer(L, "out", dt, ndim, shape);
}

void lc_mark_total(LowerCx *L, const Buffer *b) { vec_push(&L->totals, (void *)b); }

bool lc_is_total(void *ctx, const Buffer *b) {
  LowerCx *L = ctx;
  for (size_t i = 0; i < L->totals.len; i++)
    if (L->totals.items[i] == b) return true;
  return false;
}

Buffer *lc_result_buffer(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape) {
  if (call == L->root) return lc_output(L, dt, ndim, shape);
  Buffer *b = lc_alloc(L, "T", dt, ndim, shape);
  if (!b) lc_fail(L, "an intermediate result has a computed shape");
  return b;
}

/* ───────────────────────────── tensors ───────────────────────────── */

LTensor *lc_tensor(LowerCx *L, const Expr *call, DType dt, int ndim, PrimExpr **shape) {
  LTensor *t = ARENA_NEW(L->a, LTensor);
  memset(t, 0, sizeof *t);
  t->call = call, t->dtype = dt, t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  return t;
}

LTensor *lc_tuple(LowerCx *L, const Expr *call, int n) {
  LTensor *t = lc_tensor(L, call, DT_FLOAT32, 0, NULL);
  t->nfields = n, t->fields = ARENA_ARRAY(L->a, LTensor *, n + 1);
  return t;
}

LTensor *lc_from_buffer(LowerCx *L, const Expr *call, Buffer *b) {
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int i = 0; i < b->ndim; i++)
    shape[i] = b->dims[i].kind == DIM_CONST ? lc_int(L, b->dims[i].value)
                                            : lc_var(L, lc_size_var(L, b->dims[i].name));
  LTensor *t = lc_tensor(L, call, b->dtype, b->ndim, shape);
  t->buf = b;
  return t;
}

/* idx may be NULL for a rank-0 tensor; the rules still get an array, since
 * they offset it (take's `idx + axis`), and an offset of NULL is undefined. */
PrimExpr *lc_at(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  static PrimExpr *none[1];
  if (!idx) idx = none;
  if (t->value) return t->value;
  if (t->buf) return lc_load(L, t->buf, t->ndim, idx);
  return t->at(L, t, idx);
}

PrimExpr *lc_bcast_at(LowerCx *L, const LTensor *t, int n, PrimExpr **out_shape, PrimExpr **idx) {
  PrimExpr *sub[TENSOR_MAX_RANK];
  for (int j = 0; j < t->ndim; j++) {
    int o = n - t->ndim + j;
    bool one = lc_const(t->shape[j]) == 1 && lc_const(out_shape[o]) != 1;
    sub[j] = one ? lc_int(L, 0) : idx[o];
  }
  return lc_at(L, t, sub);
}

/* The broadcast shape of the operands, right-aligned.  Two dims that are
 * not both 1 must be the same expression: a broadcast decided only at run
 * time cannot be lowered to fixed loops, so it fails the rule. */
bool lc_broadcast(LowerCx *L, LTensor **in, int nin, int *ndim, PrimExpr **shape) {
  int n = 0;
  for (int i = 0; i < nin; i++)
    if (in[i]->ndim > n) n = in[i]->ndim;
  for (int o = 0; o < n; o++) {
    PrimExpr *d = NULL;
    for (int i = 0; i < nin; i++) {
      int j = o - (n - in[i]->ndim);
      if (j < 0 || lc_const(in[i]->shape[j]) == 1) continue;
      if (d && !lc_same_dim(d, in[i]->shape[j]))
        return lc_fail(L, "dims that broadcast only at run time"), false;
      d = in[i]->shape[j];
    }
    shape[o] = d ? d : lc_int(L, 1);
  }
  *ndim = n;
  return true;
}

enum { CHUNK = 1024 };

/* A rank-1 result: parallel chunks of CHUNK, each a vectorized loop. */
static void materialize_1d(LowerCx *L, const LTensor *t, Buffer *dst) {
  PrimExpr *n = t->shape[0];
  if (lc_const(n) >= 0 && lc_const(n) <= CHUNK) {
    TirVar *i = lc_tvar(L, "i", n);
    lc_open(L);
    PrimExpr *ix = lc_var(L, i);
    lc_store(L, dst, 1, &ix, lc_at(L, t, &ix));
    lc_for(L, LOOP_VECTORIZED, i, n, lc_close(L));
    return;
  }
  PrimExpr *chunk = lc_int(L, CHUNK);
  PrimExpr *nchunks = lc_bin(L, PB_DIV, lc_bin(L, PB_ADD, n, lc_int(L, CHUNK - 1)), chunk);
  TirVar *o = lc_tvar(L, "o", nchunks), *i = lc_tvar(L, "i", nchunks);
  PrimExpr *base = lc_bin(L, PB_MUL, lc_var(L, o), chunk);
  PrimExpr *len = lc_call(L, PI_MIN, chunk, lc_bin(L, PB_SUB, n, base), NULL);
  lc_open(L);
  lc_open(L);
  PrimExpr *ix = lc_bin(L, PB_ADD, base, lc_var(L, i));
  lc_store(L, dst, 1, &ix, lc_at(L, t, &ix));
  lc_for(L, LOOP_VECTORIZED, i, len, lc_close(L));
  lc_for(L, LOOP_PARALLEL, o, nchunks, lc_close(L));
}

/* Writes t into dst with the elementwise schedule: one loop per dim, the
 * innermost vectorized and the outermost non-unit one parallel. */
void lc_materialize(LowerCx *L, const LTensor *t, Buffer *dst) {
  int n = t->ndim;
  if (n == 0) {
    lc_store(L, dst, 0, NULL, lc_at(L, t, NULL));
    return;
  }
  if (n == 1) {
    materialize_1d(L, t, dst);
    return;
  }
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", t->shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0; d < n; d++) lc_open(L);
  lc_store(L, dst, n, idx, lc_at(L, t, idx));
  /* The parallel loop: the outermost whose extent is not 1 (a batch of
   * one would leave a single task). */
  int par = 0;
  while (par < n - 2 && lc_const(t->shape[par]) == 1) par++;
  for (int d = n; d-- > 0;) {
    LoopKind k = d == n - 1 ? LOOP_VECTORIZED : d == par ? LOOP_PARALLEL : LOOP_GRID;
    lc_for(L, k, v[d], t->shape[d], lc_close(L));
  }
}

bool lc_dtype_ok(DType dt) {
  return dt == DT_FLOAT32 || dt == DT_FLOAT64 || dt == DT_INT32 || dt == DT_INT64 || dt == DT_BOOL;
}

bool lc_elem_dtype_ok(DType dt) { return dt >= 0 && dt < DT_COUNT; }

DType lc_lane_dtype(DType dt) { return dt == DT_FLOAT16 || dt == DT_BFLOAT16 ? DT_FLOAT32 : dt; }

bool lc_buffer_dtype_ok(DType dt) { return lc_elem_dtype_ok(dt); }

bool lc_quant_dtype_ok(DType dt) {
  return lc_dtype_ok(dt) || dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16;
}

DType lc_product_acc(DType a, DType b, DType out) {
  if (dtype_is_int(a) && dtype_is_int(b) && dtype_is_int(out)) return out;
  if (dtype_is_float(a) && a == b && a == out) return DT_FLOAT64;
  return DT_INVALID;
}

int64_t lc_int_min(DType dt) {
  if (dtype_class(dt) == 'u' || dt == DT_BOOL) return 0;
  return dt == DT_INT64 ? INT64_MIN : -((int64_t)1 << (dtype_bytes(dt) * 8 - 1));
}

int64_t lc_int_max(DType dt) {
  if (dt == DT_BOOL) return 1;
  if (dt == DT_UINT64) return -1;
  if (dt == DT_INT64) return INT64_MAX;
  int bits = dtype_bytes(dt) * 8 - (dtype_class(dt) == 'i');
  return ((int64_t)1 << bits) - 1;
}

const Type *lc_result_type(const Expr *call) { return call->ty; }
