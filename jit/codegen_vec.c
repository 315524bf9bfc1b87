/* codegen_vec.c — a `vectorized` loop of constant extent as LLVM vector
 * code, internal to rly-jit.so.
 *
 * Left to LLVM, such a loop inside a register tile (`unrolled`) is fully
 * unrolled into scalars that SLP then packs back into vectors, and the
 * tile's accumulators are scalar memory that SROA, DSE and GVN untangle:
 * most of a kernel's compile time, for code the schedule already spelled
 * out.  Here `for %l in vectorized(N)` (2 <= N <= 64) whose body is lets
 * and stores of float32 or float64 values becomes N-lane vector statements
 * (a Winograd transform's 16 stores, a tile's update, an epilogue):
 *   - a load or store whose last index is %l plus terms free of %l, every
 *     lane provably in bounds, is one vector access (other indices free of
 *     %l, checked once as the scalar code checks them);
 *   - a subexpression free of %l is computed once as a scalar (through
 *     cg_expr, so with the scalar code's checks and errors) and broadcast;
 *   - + - * /, neg, min, max, comparisons and select act lane by lane with
 *     the scalar code's instructions (contraction, NaN rules), so results
 *     are bit for bit the scalar loop's.
 * int32 lanes take loads, stores, wrapping + - * and dot_u8i8x4 (cg_dot4:
 * vpdpbusd when the host has it).
 * Anything else (another shape of index, a cast, other integer lanes, a
 * load of a stored buffer at other indices, two stores that may hit one
 * element: the lanes' order would make these differ) is found before any code is emitted and the
 * loop compiles as a scalar loop, as before. */
#include <string.h>

#include "ir/tir_walk.h"
#include "jit/codegen.h"

enum { VEC_MAX_LANES = 64, VEC_MAX_LETS = 16, VEC_MAX_ITEMS = 32 };

typedef struct Vec {
  Cg *c;
  const TirVar *lane;
  int n;
  const Stmt *const *items; /* the body's lets and stores */
  int nitems;
  const TirVar *lets[VEC_MAX_LETS];
  DType let_dt[VEC_MAX_LETS];
  LLVMValueRef let_v[VEC_MAX_LETS];
  int nlets;
} Vec;

static int let_index(const Vec *v, const TirVar *x) {
  for (int i = v->nlets; i-- > 0;)
    if (v->lets[i] == x) return i;
  return -1;
}

/* Does e depend on the lane (the loop variable, or a let of the body)? */
static bool varying(const Vec *v, const PrimExpr *e) {
  switch (e->kind) {
    case PE_VAR:
      return e->u.var == v->lane || let_index(v, e->u.var) >= 0;
    case PE_LOAD:
      for (int i = 0; i < e->u.load.n; i++)
        if (varying(v, e->u.load.idx[i])) return true;
      return false;
    case PE_BIN:
      return varying(v, e->u.bin.a) || varying(v, e->u.bin.b);
    case PE_NOT:
    case PE_NEG:
      return varying(v, e->u.operand);
    case PE_CALL:
      for (int i = 0; i < e->u.call.n; i++)
        if (varying(v, e->u.call.args[i])) return true;
      return false;
    case PE_CAST:
      return varying(v, e->u.cast.value);
    default:
      return false;
  }
}

/* Is e the lane plus (or minus) terms free of it? */
static bool lane_offset(const Vec *v, const PrimExpr *e) {
  if (e->kind == PE_VAR) return e->u.var == v->lane;
  if (e->kind != PE_BIN || (e->u.bin.op != PB_ADD && e->u.bin.op != PB_SUB)) return false;
  bool va = varying(v, e->u.bin.a), vb = varying(v, e->u.bin.b);
  if (va && !vb) return lane_offset(v, e->u.bin.a);
  return e->u.bin.op == PB_ADD && vb && !va && lane_offset(v, e->u.bin.b);
}

static bool same_buffer(const Buffer *a, const Buffer *b) {
  return a == b || strcmp(a->name, b->name) == 0;
}

/* The number of stores of the body into b, and the last of them. */
static int stores_into(const Vec *v, const Buffer *b, const Stmt **last) {
  int n = 0;
  for (int i = 0; i < v->nitems; i++)
    if (v->items[i]->kind == ST_STORE && same_buffer(v->items[i]->u.store.buf, b))
      n++, *last = v->items[i];
  return n;
}

/* A load of a buffer the body stores into must read the element its lane
 * stores, the only store into it (then reading all lanes before or after
 * storing all of them changes nothing). */
static bool load_ok_for_store(const Vec *v, const PrimExpr *e) {
  const Stmt *st = NULL;
  int n = stores_into(v, e->u.load.buf, &st);
  if (n == 0) return true;
  if (n > 1 || e->u.load.n != st->u.store.n) return false;
  for (int i = 0; i < e->u.load.n; i++)
    if (!prim_expr_same(e->u.load.idx[i], st->u.store.idx[i])) return false;
  return true;
}

/* Two stores into one buffer: distinct constants in an index before the
 * last, so no element is stored by both (in whatever order of lanes). */
static bool disjoint(const Stmt *a, const Stmt *b) {
  for (int d = 0; d + 1 < a->u.store.n && d + 1 < b->u.store.n; d++) {
    const PrimExpr *x = a->u.store.idx[d], *y = b->u.store.idx[d];
    if (x->kind == PE_INT && y->kind == PE_INT && x->u.i != y->u.i) return true;
  }
  return false;
}

static bool stores_disjoint(const Vec *v) {
  for (int i = 0; i < v->nitems; i++)
    for (int j = 0; j < i; j++) {
      const Stmt *a = v->items[i], *b = v->items[j];
      if (a->kind == ST_STORE && b->kind == ST_STORE &&
          same_buffer(a->u.store.buf, b->u.store.buf) && !disjoint(a, b))
        return false;
    }
  return true;
}

static bool float_type(DType t) { return t == DT_FLOAT32 || t == DT_FLOAT64; }
static bool lane_type(DType t) { return float_type(t) || t == DT_INT32; }

/* A vector access: indices but the last free of the lane, the last the
 * lane plus an offset, in bounds for every lane. */
static bool access_ok(const Vec *v, const Buffer *b, int n, PrimExpr *const *idx) {
  const BufB *bb = cg_find_buf(v->c, b);
  if (!bb || n != bb->b->ndim || n < 1 || !lane_type(bb->b->dtype)) return false;
  for (int d = 0; d + 1 < n; d++)
    if (varying(v, idx[d])) return false;
  return lane_offset(v, idx[n - 1]) && cg_in_bounds(v->c, bb->b, n - 1, idx[n - 1]);
}

static DType vtype(Vec *v, const PrimExpr *e, bool spec);

/* The type of a binary operation on lanes (DT_INVALID: not vectorizable). */
static DType vtype_bin(Vec *v, const PrimExpr *e, bool spec) {
  DType a = vtype(v, e->u.bin.a, spec), b = vtype(v, e->u.bin.b, spec);
  PrimBinOp op = e->u.bin.op;
  if (a == b && a == DT_INT32) return op == PB_ADD || op == PB_SUB || op == PB_MUL ? a : DT_INVALID;
  if (a != b || !float_type(a)) return DT_INVALID;
  if (op == PB_ADD || op == PB_SUB || op == PB_MUL || op == PB_DIV) return a;
  return op >= PB_LT && op <= PB_NE ? DT_BOOL : DT_INVALID;
}

static DType vtype_call(Vec *v, const PrimExpr *e, bool spec) {
  PrimExpr *const *args = e->u.call.args;
  if (e->u.call.fn == PI_SELECT && e->u.call.n == 3) {
    DType cond = vtype(v, args[0], spec);
    DType a = vtype(v, args[1], true), b = vtype(v, args[2], true);
    return cond == DT_BOOL && a == b && float_type(a) ? a : DT_INVALID;
  }
  if (e->u.call.fn == PI_DOT4 && e->u.call.n == 3 && cg_dot4_lanes_ok(v->n)) {
    for (int i = 0; i < 3; i++)
      if (vtype(v, args[i], spec) != DT_INT32) return DT_INVALID;
    return DT_INT32;
  }
  if ((e->u.call.fn == PI_MAX || e->u.call.fn == PI_MIN) && e->u.call.n == 2) {
    DType a = vtype(v, args[0], spec), b = vtype(v, args[1], spec);
    return a == b && float_type(a) ? a : DT_INVALID;
  }
  return DT_INVALID;
}

/* The lane type of e, DT_INVALID when e cannot be vectorized; spec: e is
 * evaluated speculatively (a select's arm), so what is computed once must
 * not be able to fail. */
static DType vtype(Vec *v, const PrimExpr *e, bool spec) {
  if (!varying(v, e)) {
    if (spec && !cg_can_speculate(v->c, e)) return DT_INVALID;
    return cg_expr_type(v->c, e);
  }
  switch (e->kind) {
    case PE_VAR: {
      int i = let_index(v, e->u.var);
      return i >= 0 ? v->let_dt[i] : DT_INVALID; /* the lane itself as a value: no */
    }
    case PE_LOAD: /* in a select's arm, every index in bounds: nothing to check */
      if (!access_ok(v, e->u.load.buf, e->u.load.n, e->u.load.idx) || !load_ok_for_store(v, e) ||
          (spec && !cg_can_speculate(v->c, e)))
        return DT_INVALID;
      return cg_find_buf(v->c, e->u.load.buf)->b->dtype;
    case PE_BIN:
      return vtype_bin(v, e, spec);
    case PE_NEG: {
      DType t = vtype(v, e->u.operand, spec);
      return float_type(t) ? t : DT_INVALID;
    }
    case PE_CALL:
      return vtype_call(v, e, spec);
    default:
      return DT_INVALID;
  }
}

/* ─────────────────────────── emission ─────────────────────────── */

static LLVMTypeRef vec_ty(const Vec *v, DType t) {
  return LLVMVectorType(t == DT_BOOL ? v->c->i1 : cg_lty(v->c, t), (unsigned)v->n);
}

static LLVMValueRef splat(Vec *v, LLVMValueRef x, DType t) {
  Cg *c = v->c;
  LLVMTypeRef vt = vec_ty(v, t);
  LLVMValueRef one =
      LLVMBuildInsertElement(c->B, LLVMGetPoison(vt), x, LLVMConstInt(c->i32, 0, 0), "");
  LLVMTypeRef mt = LLVMVectorType(c->i32, (unsigned)v->n);
  return LLVMBuildShuffleVector(c->B, one, LLVMGetPoison(vt), LLVMConstNull(mt), "");
}

static LLVMValueRef vexpr(Vec *v, const PrimExpr *e);

static LLVMValueRef vload(Vec *v, const PrimExpr *e) {
  Cg *c = v->c;
  LLVMValueRef p = cg_access(c, cg_site(c, e), e->u.load.buf, e->u.load.n, e->u.load.idx);
  if (!p) return NULL;
  DType t = cg_find_buf(c, e->u.load.buf)->b->dtype;
  LLVMValueRef x = LLVMBuildLoad2(c->B, vec_ty(v, t), p, "");
  LLVMSetAlignment(x, (unsigned)cg_dtype_bits(t) / 8);
  return x;
}

static LLVMValueRef vbin(Vec *v, const PrimExpr *e) {
  Cg *c = v->c;
  LLVMValueRef a = vexpr(v, e->u.bin.a), b = a ? vexpr(v, e->u.bin.b) : NULL;
  if (!b) return NULL;
  static const LLVMRealPredicate fp[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT,
                                         LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
  PrimBinOp op = e->u.bin.op;
  if (cg_is_int(vtype(v, e, false))) /* int32: wrapping, as the scalar code */
    return op == PB_ADD   ? LLVMBuildAdd(c->B, a, b, "")
           : op == PB_SUB ? LLVMBuildSub(c->B, a, b, "")
                          : LLVMBuildMul(c->B, a, b, "");
  if (op >= PB_LT && op <= PB_NE) return LLVMBuildFCmp(c->B, fp[op - PB_LT], a, b, "");
  LLVMValueRef x = op == PB_ADD   ? LLVMBuildFAdd(c->B, a, b, "")
                   : op == PB_SUB ? LLVMBuildFSub(c->B, a, b, "")
                   : op == PB_MUL ? LLVMBuildFMul(c->B, a, b, "")
                                  : LLVMBuildFDiv(c->B, a, b, "");
  if (op != PB_DIV && c->o->contract && LLVMIsAInstruction(x))
    LLVMSetFastMathFlags(x, LLVMFastMathAllowContract); /* as the scalar code (codegen_expr.c) */
  return x;
}

/* max/min as the scalar code: NaN-propagating, the first operand on ties. */
static LLVMValueRef vminmax(Vec *v, const PrimExpr *e) {
  Cg *c = v->c;
  LLVMValueRef x = vexpr(v, e->u.call.args[0]), y = x ? vexpr(v, e->u.call.args[1]) : NULL;
  if (!y) return NULL;
  bool is_max = e->u.call.fn == PI_MAX;
  LLVMValueRef nan = LLVMBuildFCmp(c->B, LLVMRealUNO, x, x, "");
  LLVMValueRef cmp = LLVMBuildFCmp(c->B, is_max ? LLVMRealOGT : LLVMRealOLT, x, y, "");
  return LLVMBuildSelect(c->B, LLVMBuildOr(c->B, nan, cmp, ""), x, y, "");
}

static LLVMValueRef vdot4(Vec *v, const PrimExpr *e) {
  LLVMValueRef x[3];
  for (int i = 0; i < 3; i++)
    if (!(x[i] = vexpr(v, e->u.call.args[i]))) return NULL;
  return cg_dot4(v->c, x[0], x[1], x[2], v->n);
}

static LLVMValueRef vcall(Vec *v, const PrimExpr *e) {
  if (e->u.call.fn == PI_DOT4) return vdot4(v, e);
  if (e->u.call.fn != PI_SELECT) return vminmax(v, e);
  LLVMValueRef cond = vexpr(v, e->u.call.args[0]);
  LLVMValueRef a = cond ? vexpr(v, e->u.call.args[1]) : NULL;
  LLVMValueRef b = a ? vexpr(v, e->u.call.args[2]) : NULL;
  return b ? LLVMBuildSelect(v->c->B, cond, a, b, "") : NULL;
}

/* e's lanes (vtype said yes). */
static LLVMValueRef vexpr(Vec *v, const PrimExpr *e) {
  if (!varying(v, e)) {
    CVal x = cg_expr(v->c, e);
    return x.v ? splat(v, x.v, x.dt) : NULL;
  }
  switch (e->kind) {
    case PE_VAR:
      return v->let_v[let_index(v, e->u.var)];
    case PE_LOAD:
      return vload(v, e);
    case PE_BIN:
      return vbin(v, e);
    case PE_NEG: {
      LLVMValueRef x = vexpr(v, e->u.operand);
      return x ? LLVMBuildFNeg(v->c->B, x, "") : NULL;
    }
    case PE_CALL:
      return vcall(v, e);
    default:
      return NULL;
  }
}

/* ─────────────────────────── the loop ─────────────────────────── */

/* The statements of s, nested sequences flattened, into out (false when
 * more than max). */
static bool flatten(const Stmt *s, const Stmt **out, int *n, int max) {
  if (s->kind != ST_SEQ) {
    if (*n == max) return false;
    out[(*n)++] = s;
    return true;
  }
  for (int i = 0; i < s->u.seq.n; i++)
    if (!flatten(s->u.seq.items[i], out, n, max)) return false;
  return true;
}

/* Whether every statement of the body vectorizes (nothing emitted). */
static bool plan(Vec *v) {
  if (!stores_disjoint(v)) return false;
  for (int i = 0; i < v->nitems; i++) {
    const Stmt *st = v->items[i];
    if (st->kind == ST_LET) {
      const TirVar *x = st->u.let.var;
      DType t = vtype(v, st->u.let.value, false);
      if (!float_type(t) || (x->dtype != DT_INVALID && x->dtype != t)) return false;
      v->lets[v->nlets] = x, v->let_dt[v->nlets++] = t;
      continue;
    }
    if (st->kind != ST_STORE || !access_ok(v, st->u.store.buf, st->u.store.n, st->u.store.idx))
      return false;
    if (vtype(v, st->u.store.value, false) != cg_find_buf(v->c, st->u.store.buf)->b->dtype)
      return false;
  }
  return true;
}

static void emit_store(Vec *v, const Stmt *st) {
  Cg *c = v->c;
  LLVMValueRef p = cg_access(c, cg_site(c, st), st->u.store.buf, st->u.store.n, st->u.store.idx);
  LLVMValueRef x = p ? vexpr(v, st->u.store.value) : NULL;
  if (!x) return;
  DType t = cg_find_buf(c, st->u.store.buf)->b->dtype;
  LLVMSetAlignment(LLVMBuildStore(c->B, x, p), (unsigned)cg_dtype_bits(t) / 8);
}

/* The statements in order, the lets' lanes in v->let_v (plan bound them). */
static void emit(Vec *v) {
  int let = 0;
  for (int i = 0; i < v->nitems && !v->c->failed; i++) {
    const Stmt *st = v->items[i];
    if (st->kind == ST_STORE)
      emit_store(v, st);
    else if (!(v->let_v[let++] = vexpr(v, st->u.let.value)))
      return;
  }
}

bool cg_vector_loop(Cg *c, const Stmt *s) {
  const PrimExpr *hi = s->u.for_.hi[0];
  if (s->u.for_.loop != LOOP_VECTORIZED || s->u.for_.nvars != 1 || tir_for_lo(s, 0) ||
      hi->kind != PE_INT || hi->u.i < 2 || hi->u.i > VEC_MAX_LANES)
    return false;
  const Stmt *items[VEC_MAX_ITEMS];
  int n = 0, nlets = 0;
  if (!flatten(s->u.for_.body, items, &n, VEC_MAX_ITEMS)) return false;
  for (int i = 0; i < n; i++) nlets += items[i]->kind == ST_LET;
  const TirVar *lane = s->u.for_.vars[0];
  DType lt = cg_is_int(lane->dtype) ? lane->dtype : cg_expr_type(c, hi);
  if (nlets > VEC_MAX_LETS || (lt != DT_INT32 && lt != DT_INT64)) return false;
  int nv = c->nvars;
  Lin top = cg_lin_const(hi->u.i - 1);
  cg_push_var(c, (VarB){lane, LLVMConstInt(cg_lty(c, lt), 0, 0), lt, NULL,
                        (Range){true, cg_lin_const(0), top}});
  Vec v = {.c = c, .lane = lane, .n = (int)hi->u.i, .items = items, .nitems = n};
  bool ok = plan(&v);
  if (ok) emit(&v);
  c->nvars = nv;
  return ok;
}
