/* codegen_copy.c — a loop nest that copies one contiguous block of a
 * buffer into another as one memcpy, internal to rly-jit.so.
 *
 * A concatenation lowers to one such nest per input (DenseNet's kernels
 * have up to 50); LLVM would turn each back into a memcpy only after
 * running its loop passes over all of them, most of those kernels' compile
 * time.  The nest: serial, unrolled or vectorized loops from 0 to constant
 * extents (a parallel loop keeps its threads), around one store
 * `A[i...] = B[j...]` of two distinct buffers of one dtype and constant
 * shapes, every index provably in bounds (so no element can fail), whose
 * row-major offsets both step through the nest's iterations contiguously.
 * Then the elements copied, in order, are exactly a memcpy's.  Anything
 * else is compiled as loops, as before. */
#include <string.h>

#include "jit/codegen.h"

enum { COPY_MAX_VARS = 16 };

typedef struct Nest {
  const TirVar *vars[COPY_MAX_VARS];
  int64_t ext[COPY_MAX_VARS];
  int n;
} Nest;

static int var_of(const Nest *x, const TirVar *v) {
  for (int i = 0; i < x->n; i++)
    if (x->vars[i] == v) return i;
  return -1;
}

/* Does e use a variable of the nest? */
static bool uses_nest(const Nest *x, const PrimExpr *e) {
  switch (e->kind) {
    case PE_VAR:
      return var_of(x, e->u.var) >= 0;
    case PE_LOAD:
      for (int i = 0; i < e->u.load.n; i++)
        if (uses_nest(x, e->u.load.idx[i])) return true;
      return false;
    case PE_BIN:
      return uses_nest(x, e->u.bin.a) || uses_nest(x, e->u.bin.b);
    case PE_NOT:
    case PE_NEG:
      return uses_nest(x, e->u.operand);
    case PE_CALL:
      for (int i = 0; i < e->u.call.n; i++)
        if (uses_nest(x, e->u.call.args[i])) return true;
      return false;
    case PE_CAST:
      return uses_nest(x, e->u.cast.value);
    default:
      return false;
  }
}

/* e as terms free of the nest + sum k[i] * var i: adds scale times its
 * coefficients to k; false when e is not of that form. */
static bool coefs(const Nest *x, const PrimExpr *e, int64_t scale, int64_t *k) {
  if (!uses_nest(x, e)) return true;
  switch (e->kind) {
    case PE_VAR:
      k[var_of(x, e->u.var)] += scale;
      return true;
    case PE_CAST:
      return dtype_is_int(e->u.cast.to) && !e->u.cast.bits && coefs(x, e->u.cast.value, scale, k);
    case PE_BIN: {
      const PrimExpr *a = e->u.bin.a, *b = e->u.bin.b;
      if (e->u.bin.op == PB_ADD) return coefs(x, a, scale, k) && coefs(x, b, scale, k);
      if (e->u.bin.op == PB_SUB) return coefs(x, a, scale, k) && coefs(x, b, -scale, k);
      if (e->u.bin.op != PB_MUL) return false;
      if (b->kind == PE_INT && b->u.i > 0 && b->u.i < 65536) return coefs(x, a, scale * b->u.i, k);
      if (a->kind == PE_INT && a->u.i > 0 && a->u.i < 65536) return coefs(x, b, scale * a->u.i, k);
      return false;
    }
    default:
      return false;
  }
}

/* Whether the access steps contiguously through the nest: its row-major
 * offset is free terms + the iteration's number, every index in bounds. */
static bool contiguous(Cg *c, const Nest *x, const Buffer *b, int n, PrimExpr *const *idx) {
  int64_t k[COPY_MAX_VARS] = {0}, stride = 1;
  if (n != b->ndim) return false;
  for (int d = n; d-- > 0;) {
    if (b->dims[d].kind != DIM_CONST || !cg_in_bounds(c, b, d, idx[d])) return false;
    if (!coefs(x, idx[d], stride, k)) return false;
    stride *= b->dims[d].value;
  }
  int64_t want = 1;
  for (int i = x->n; i-- > 0;) {
    if (k[i] != want) return false;
    want *= x->ext[i];
  }
  return true;
}

/* Collects the nest's loops from s inward; the store at its centre. */
static const Stmt *collect(const Stmt *s, Nest *x) {
  while (s->kind == ST_SEQ && s->u.seq.n == 1) s = s->u.seq.items[0];
  if (s->kind == ST_STORE) return s;
  if (s->kind != ST_FOR || s->u.for_.loop == LOOP_PARALLEL) return NULL;
  for (int i = 0; i < s->u.for_.nvars; i++) {
    const PrimExpr *hi = s->u.for_.hi[i];
    if (x->n == COPY_MAX_VARS || tir_for_lo(s, i) || hi->kind != PE_INT || hi->u.i < 1) return NULL;
    x->vars[x->n] = s->u.for_.vars[i], x->ext[x->n++] = hi->u.i;
  }
  return collect(s->u.for_.body, x);
}

static bool same_buffer(const Buffer *a, const Buffer *b) {
  return a == b || strcmp(a->name, b->name) == 0;
}

/* A store of a load between distinct buffers of one dtype (not bool or
 * float16, whose loads and stores convert). */
static bool copy_store(Cg *c, const Stmt *st, const Buffer **dst, const Buffer **src) {
  const PrimExpr *v = st->u.store.value;
  if (v->kind != PE_LOAD) return false;
  const BufB *d = cg_find_buf(c, st->u.store.buf), *s = cg_find_buf(c, v->u.load.buf);
  if (!d || !s || same_buffer(d->b, s->b) || d->b->dtype != s->b->dtype || d->b->dtype == DT_BOOL ||
      d->b->dtype == DT_FLOAT16)
    return false;
  *dst = d->b, *src = s->b;
  return true;
}

static void emit_copy(Cg *c, const Stmt *st, const Buffer *b, int64_t count) {
  const PrimExpr *v = st->u.store.value;
  LLVMValueRef to = cg_access(c, cg_site(c, st), st->u.store.buf, st->u.store.n, st->u.store.idx);
  LLVMValueRef from =
      to ? cg_access(c, cg_site(c, v), v->u.load.buf, v->u.load.n, v->u.load.idx) : NULL;
  if (!from) return;
  unsigned align = (unsigned)cg_dtype_bits(b->dtype) / 8;
  LLVMValueRef bytes = LLVMConstInt(c->i64, (unsigned long long)(count * align), 0);
  LLVMBuildMemCpy(c->B, to, align, from, align, bytes);
}

bool cg_copy_loop(Cg *c, const Stmt *s) {
  Nest x = {.n = 0};
  const Stmt *st = collect(s, &x);
  const Buffer *dst, *src;
  if (!st || x.n == 0 || !copy_store(c, st, &dst, &src)) return false;
  int nv = c->nvars;
  int64_t count = 1;
  for (int i = 0; i < x.n; i++) { /* each variable at 0, over its range for the proofs */
    DType t = cg_is_int(x.vars[i]->dtype) ? x.vars[i]->dtype : DT_INT64;
    Range r = {true, cg_lin_const(0), cg_lin_const(x.ext[i] - 1)};
    cg_push_var(c, (VarB){x.vars[i], LLVMConstInt(cg_lty(c, t), 0, 0), t, NULL, r});
    count *= x.ext[i];
  }
  const PrimExpr *v = st->u.store.value;
  bool ok = count < ((int64_t)1 << 40) && contiguous(c, &x, dst, st->u.store.n, st->u.store.idx) &&
            contiguous(c, &x, src, v->u.load.n, v->u.load.idx);
  if (ok) emit_copy(c, st, dst, count);
  c->nvars = nv;
  return ok;
}
