/* tir_simplify.c — simplifies the index expressions of a lowered prim
 * function (lower/lower.h: lower_simplify_indices), using the ranges of
 * its loop variables.
 *
 * Chains of reshapes and transposes lower to indices that flatten the
 * output position and take it apart again:
 *
 *   %p0[((%i0 * 32 + %i1) * 64 + %i2) / 64 / 32, ...]     (%i1 < 32, %i2 < 64)
 *
 * Each integer index is put in a linear form (a constant plus coefficients
 * times atoms: variables, divisions, remainders, anything else), and
 * division and remainder by a positive constant c of a form that is never
 * negative drop what they can prove away:
 *
 *   (c q + r) / c = q + r / c,  (c q + r) % c = r % c   (q, r >= 0)
 *   r / c = 0 and r % c = r                              (0 <= r < c)
 *   (x / a) / c = x / (a c),  (x % (k c)) % c = x % c    (x >= 0)
 *
 * (an index widened to int64 keeps its range: int64(%i1) < 32 as %i1 is),
 * so the example becomes %p0[%i0, ...] and the innermost index is the
 * vectorized loop's variable plus a constant (contiguous vector loads, no
 * divisions).  Integer / and % truncate; every rule is applied only where
 * the ranges prove both operands non-negative, where truncation and floor
 * agree, so results are the same.  Shared subexpressions are simplified
 * once (memoized by node); every variable is bound once, so its range is
 * the same wherever it is used. */
#include <limits.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/tir_walk.h"
#include "ir/util.h"
#include "lower/lower.h"

enum { MAX_TERMS = 24 };
static const int64_t UNBOUNDED = INT64_MAX / 4;

typedef struct Rng {
  int64_t lo, hi; /* inclusive; a bound at +-UNBOUNDED is unknown */
} Rng;

typedef struct Lin {
  int64_t c;
  int n;
  int64_t k[MAX_TERMS];
  PrimExpr *atom[MAX_TERMS];
  bool bad; /* too many terms or an overflow: use the expression as it is */
} Lin;

typedef struct Simp {
  Arena *a;
  U64Map ranges; /* TirVar* → index into rs + 1 */
  Rng *rs;
  int nrs, caprs;
  U64Map memo; /* PrimExpr* → simplified PrimExpr* */
} Simp;

static const Rng ANY = {-UNBOUNDED, UNBOUNDED};

/* ───────────────────────────── ranges ───────────────────────────── */

/* Saturating at +-UNBOUNDED (|values| stay below INT64_MAX / 4, so a sum
 * or a product by a bounded coefficient is checked by the builtins). */
static int64_t clampv(int64_t v) {
  return v > UNBOUNDED ? UNBOUNDED : v < -UNBOUNDED ? -UNBOUNDED : v;
}

static int64_t sat_mul(int64_t a, int64_t k) {
  int64_t r;
  if (__builtin_mul_overflow(a, k, &r)) return (a < 0) != (k < 0) ? -UNBOUNDED : UNBOUNDED;
  return clampv(r);
}

static Rng rng_scale(Rng r, int64_t k) {
  if (r.lo <= -UNBOUNDED || r.hi >= UNBOUNDED) return ANY;
  int64_t a = sat_mul(r.lo, k), b = sat_mul(r.hi, k);
  return k >= 0 ? (Rng){a, b} : (Rng){b, a};
}

static Rng rng_add(Rng a, Rng b) { return (Rng){clampv(a.lo + b.lo), clampv(a.hi + b.hi)}; }

static void set_range(Simp *S, const TirVar *v, Rng r) {
  if (S->nrs == S->caprs) {
    S->caprs = S->caprs ? 2 * S->caprs : 64;
    Rng *n = ARENA_ARRAY(S->a, Rng, S->caprs);
    if (S->nrs) memcpy(n, S->rs, sizeof *n * (size_t)S->nrs);
    S->rs = n;
  }
  S->rs[S->nrs++] = r;
  *u64map_slot(&S->ranges, PTR_KEY(v)) = (uint64_t)S->nrs;
}

static Rng var_range(const Simp *S, const TirVar *v) {
  uint64_t *i = u64map_find(&S->ranges, PTR_KEY(v));
  if (i && *i) return S->rs[*i - 1];
  return v->is_size ? (Rng){0, UNBOUNDED} : ANY;
}

static Rng atom_range(const Simp *S, const PrimExpr *e);

static Rng lin_range(const Simp *S, const Lin *l) {
  Rng r = {l->c, l->c};
  for (int i = 0; i < l->n; i++) r = rng_add(r, rng_scale(atom_range(S, l->atom[i]), l->k[i]));
  return r;
}

static bool is_int_const(const PrimExpr *e, int64_t *v) {
  if (e->kind != PE_INT) return false;
  *v = e->u.i;
  return true;
}

static void to_lin(const Simp *S, PrimExpr *e, Lin *l);

static Rng expr_range(const Simp *S, PrimExpr *e) {
  Lin l;
  to_lin(S, e, &l);
  return l.bad ? ANY : lin_range(S, &l);
}

/* A widening cast of an index to int64 (a value it keeps). */
static bool widening(const PrimExpr *e) {
  return e->kind == PE_CAST && e->u.cast.to == DT_INT64 &&
         (e->u.cast.value->dtype == DT_INT32 || e->u.cast.value->dtype == DT_INT64);
}

/* Ranges of the atoms: variables, x / c and x % c of non-negative x, an
 * index widened to int64. */
static Rng atom_range(const Simp *S, const PrimExpr *e) {
  int64_t c;
  if (e->kind == PE_VAR) return var_range(S, e->u.var);
  if (widening(e)) return expr_range(S, e->u.cast.value);
  if (e->kind == PE_INT) return (Rng){e->u.i, e->u.i};
  if (e->kind != PE_BIN || !is_int_const(e->u.bin.b, &c) || c <= 0) return ANY;
  if (e->u.bin.op != PB_DIV && e->u.bin.op != PB_MOD) return ANY;
  Rng x = expr_range(S, e->u.bin.a);
  if (x.lo < 0) return ANY;
  if (e->u.bin.op == PB_DIV) return (Rng){x.lo / c, x.hi >= UNBOUNDED ? UNBOUNDED : x.hi / c};
  if (e->u.bin.op == PB_MOD) return (Rng){0, x.hi < c ? x.hi : c - 1};
  return ANY;
}

/* ─────────────────────────── linear forms ─────────────────────────── */

static void lin_add_term(Lin *l, int64_t k, PrimExpr *atom) {
  if (l->bad || k == 0) return;
  for (int i = 0; i < l->n; i++)
    if (prim_expr_same(l->atom[i], atom)) {
      if (__builtin_add_overflow(l->k[i], k, &l->k[i])) l->bad = true;
      return;
    }
  if (l->n == MAX_TERMS) {
    l->bad = true;
    return;
  }
  l->k[l->n] = k, l->atom[l->n++] = atom;
}

/* l += k * other */
static void lin_add(Lin *l, const Lin *o, int64_t k) {
  if (o->bad) l->bad = true;
  int64_t t;
  if (__builtin_mul_overflow(o->c, k, &t) || __builtin_add_overflow(l->c, t, &l->c)) l->bad = true;
  for (int i = 0; i < o->n && !l->bad; i++) {
    if (__builtin_mul_overflow(o->k[i], k, &t)) l->bad = true;
    lin_add_term(l, t, o->atom[i]);
  }
}

/* The linear form of a simplified integer expression. */
static void to_lin(const Simp *S, PrimExpr *e, Lin *l) {
  int64_t c;
  memset(l, 0, sizeof *l);
  if (is_int_const(e, &c)) {
    l->c = c;
    return;
  }
  if (e->kind == PE_BIN && (e->u.bin.op == PB_ADD || e->u.bin.op == PB_SUB)) {
    Lin a, b;
    to_lin(S, e->u.bin.a, &a), to_lin(S, e->u.bin.b, &b);
    *l = a;
    lin_add(l, &b, e->u.bin.op == PB_ADD ? 1 : -1);
    return;
  }
  if (e->kind == PE_BIN && e->u.bin.op == PB_MUL &&
      (is_int_const(e->u.bin.b, &c) || is_int_const(e->u.bin.a, &c))) {
    Lin x;
    to_lin(S, e->u.bin.b->kind == PE_INT ? e->u.bin.a : e->u.bin.b, &x);
    lin_add(l, &x, c);
    return;
  }
  lin_add_term(l, 1, e);
}

/* A literal typed as the lowering types them (int32 when it fits); a sum
 * takes the wider type of its operands. */
static PrimExpr *mk_int(Simp *S, int64_t v, DType dt) {
  PrimExpr *e = ARENA_NEW(S->a, PrimExpr);
  memset(e, 0, sizeof *e);
  e->kind = PE_INT, e->u.i = v;
  e->dtype = dt == DT_INT64 && v >= INT32_MIN && v <= INT32_MAX ? DT_INT32 : dt;
  return e;
}

static DType wider(DType a, DType b) { return dtype_bytes(a) >= dtype_bytes(b) ? a : b; }

static PrimExpr *mk_bin(Simp *S, PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  PrimExpr *e = ARENA_NEW(S->a, PrimExpr);
  memset(e, 0, sizeof *e);
  e->kind = PE_BIN, e->dtype = wider(a->dtype, b->dtype);
  e->u.bin.op = op, e->u.bin.a = a, e->u.bin.b = b;
  return e;
}

/* The expression of a linear form, terms in order, the constant last. */
static PrimExpr *from_lin(Simp *S, const Lin *l, DType dt) {
  PrimExpr *r = NULL;
  for (int i = 0; i < l->n; i++) {
    if (!l->k[i]) continue;
    int64_t k = l->k[i];
    bool neg = r && k < 0;
    PrimExpr *t = l->atom[i];
    int64_t m = neg ? -k : k;
    if (m != 1) t = mk_bin(S, PB_MUL, t, mk_int(S, m, dt));
    r = !r ? t : mk_bin(S, neg ? PB_SUB : PB_ADD, r, t);
  }
  if (!r) return mk_int(S, l->c, dt);
  if (l->c) { /* INT64_MIN has no negation: added as it is */
    bool sub = l->c < 0 && l->c != INT64_MIN;
    r = mk_bin(S, sub ? PB_SUB : PB_ADD, r, mk_int(S, sub ? -l->c : l->c, dt));
  }
  return r;
}

/* ─────────────────────────── / and % ─────────────────────────── */

/* Splits x = c q + r: q the terms whose coefficients c divides (divided),
 * r the rest; false unless both are provably non-negative. */
static bool split_by(Simp *S, const Lin *x, int64_t c, Lin *q, Lin *r) {
  memset(q, 0, sizeof *q), memset(r, 0, sizeof *r);
  q->c = x->c / c, r->c = x->c % c;
  if (r->c < 0) r->c += c, q->c -= 1;
  for (int i = 0; i < x->n; i++) {
    if (x->k[i] % c == 0)
      lin_add_term(q, x->k[i] / c, x->atom[i]);
    else
      lin_add_term(r, x->k[i], x->atom[i]);
  }
  return !q->bad && !r->bad && lin_range(S, q).lo >= 0 && lin_range(S, r).lo >= 0;
}

static PrimExpr *simp_divmod(Simp *S, PrimExpr *e, PrimExpr *a, int64_t c) {
  bool div = e->u.bin.op == PB_DIV;
  DType dt = e->dtype;
  int64_t c2;
  /* (y / c1) / c = y / (c1 c);  (y % (k c)) % c = y % c */
  if (a->kind == PE_BIN && is_int_const(a->u.bin.b, &c2) && c2 > 0 &&
      expr_range(S, a->u.bin.a).lo >= 0) {
    int64_t cc;
    if (div && a->u.bin.op == PB_DIV && !__builtin_mul_overflow(c2, c, &cc))
      return simp_divmod(S, e, a->u.bin.a, cc);
    if (!div && a->u.bin.op == PB_MOD && c2 % c == 0) return simp_divmod(S, e, a->u.bin.a, c);
  }
  Lin x, q, r;
  to_lin(S, a, &x);
  if (x.bad || !split_by(S, &x, c, &q, &r)) return mk_bin(S, e->u.bin.op, a, mk_int(S, c, dt));
  Rng rr = lin_range(S, &r);
  PrimExpr *re = from_lin(S, &r, dt);
  if (!div) return rr.hi < c ? re : mk_bin(S, PB_MOD, re, mk_int(S, c, dt));
  if (rr.hi >= c) lin_add_term(&q, 1, mk_bin(S, PB_DIV, re, mk_int(S, c, dt)));
  return q.bad ? mk_bin(S, PB_DIV, a, mk_int(S, c, dt)) : from_lin(S, &q, dt);
}

/* ───────────────────────────── the walk ───────────────────────────── */

static bool index_dtype(DType t) { return t == DT_INT32 || t == DT_INT64; }

/* Index arithmetic: int32/int64 (the narrow and unsigned integers are
 * values, whose wrapping and unsigned division the rules do not model). */
static bool is_int_arith(const PrimExpr *e) {
  return e->kind == PE_BIN && e->u.bin.op <= PB_MOD && index_dtype(e->dtype) &&
         index_dtype(e->u.bin.a->dtype) && index_dtype(e->u.bin.b->dtype);
}

static PrimExpr *simp_expr(Simp *S, PrimExpr *e);

/* An integer +, -, *, / or %: operands first, then / and % by a positive
 * constant, then the sum put in order (constants folded, terms merged). */
static PrimExpr *simp_int(Simp *S, PrimExpr *e) {
  PrimExpr *a = simp_expr(S, e->u.bin.a), *b = simp_expr(S, e->u.bin.b);
  int64_t c;
  PrimExpr *r;
  if ((e->u.bin.op == PB_DIV || e->u.bin.op == PB_MOD) && is_int_const(b, &c) && c > 0) {
    r = simp_divmod(S, e, a, c);
  } else if (e->u.bin.op == PB_DIV || e->u.bin.op == PB_MOD) {
    r = a == e->u.bin.a && b == e->u.bin.b ? e : mk_bin(S, e->u.bin.op, a, b);
  } else {
    r = a == e->u.bin.a && b == e->u.bin.b ? e : mk_bin(S, e->u.bin.op, a, b);
    Lin l;
    to_lin(S, r, &l);
    if (!l.bad) r = from_lin(S, &l, e->dtype);
  }
  /* keep the original type (an index computed in int64 stays int64) */
  if (r->dtype != e->dtype && r->kind == PE_INT) r->dtype = e->dtype;
  if (r->dtype != e->dtype) {
    PrimExpr *cv = ARENA_NEW(S->a, PrimExpr);
    memset(cv, 0, sizeof *cv);
    cv->kind = PE_CAST, cv->dtype = e->dtype, cv->u.cast.to = e->dtype, cv->u.cast.value = r;
    r = cv;
  }
  return r;
}

/* Simplifies e's operands in place: a node's simplified form does not
 * depend on where it is used, so a shared node may be rewritten once. */
static void simp_children(Simp *S, PrimExpr *e) {
  switch (e->kind) {
    case PE_LOAD:
      for (int i = 0; i < e->u.load.n; i++) e->u.load.idx[i] = simp_expr(S, e->u.load.idx[i]);
      return;
    case PE_BIN:
      e->u.bin.a = simp_expr(S, e->u.bin.a), e->u.bin.b = simp_expr(S, e->u.bin.b);
      return;
    case PE_NOT:
    case PE_NEG:
      e->u.operand = simp_expr(S, e->u.operand);
      return;
    case PE_CALL:
      for (int i = 0; i < e->u.call.n; i++) e->u.call.args[i] = simp_expr(S, e->u.call.args[i]);
      return;
    case PE_CAST:
      e->u.cast.value = simp_expr(S, e->u.cast.value);
      return;
    default:
      return;
  }
}

/* e simplified (memoized by node). */
static PrimExpr *simp_expr(Simp *S, PrimExpr *e) {
  if (!e) return e;
  uint64_t *m = u64map_find(&S->memo, PTR_KEY(e));
  if (m) return (PrimExpr *)(uintptr_t)*m;
  PrimExpr *r = e;
  if (is_int_arith(e)) {
    r = simp_int(S, e);
  } else {
    simp_children(S, e);
  }
  *u64map_slot(&S->memo, PTR_KEY(e)) = (uint64_t)(uintptr_t)r;
  return r;
}

static Rng const_range(Simp *S, PrimExpr *lo, PrimExpr *hi) {
  int64_t l = 0, h;
  if (lo && !is_int_const(lo, &l)) return ANY;
  if (!hi || !is_int_const(hi, &h)) return (Rng){l, UNBOUNDED};
  return (Rng){l, h - 1};
}

static void simp_stmt(Simp *S, Stmt *s) {
  if (!s) return;
  switch (s->kind) {
    case ST_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) simp_stmt(S, s->u.seq.items[i]);
      return;
    case ST_FOR:
      for (int i = 0; i < s->u.for_.nvars; i++)
        set_range(S, s->u.for_.vars[i],
                  const_range(S, s->u.for_.lo ? s->u.for_.lo[i] : NULL, s->u.for_.hi[i]));
      simp_stmt(S, s->u.for_.body);
      return;
    case ST_BLOCK:
      for (int i = 0; i < s->u.block.niters; i++) {
        IterVar *it = &s->u.block.iters[i];
        if (it->binding) it->binding = simp_expr(S, it->binding);
        if (it->binding && it->binding->kind == PE_VAR)
          set_range(S, it->var, var_range(S, it->binding->u.var));
      }
      simp_stmt(S, s->u.block.init);
      simp_stmt(S, s->u.block.body);
      return;
    case ST_STORE:
      for (int i = 0; i < s->u.store.n; i++) s->u.store.idx[i] = simp_expr(S, s->u.store.idx[i]);
      s->u.store.value = simp_expr(S, s->u.store.value);
      return;
    case ST_LET: {
      s->u.let.value = simp_expr(S, s->u.let.value);
      Lin l;
      if (dtype_is_int(s->u.let.value->dtype)) {
        to_lin(S, s->u.let.value, &l);
        if (!l.bad) set_range(S, s->u.let.var, lin_range(S, &l));
      }
      return;
    }
    case ST_IF:
      s->u.if_.cond = simp_expr(S, s->u.if_.cond);
      simp_stmt(S, s->u.if_.then_);
      simp_stmt(S, s->u.if_.else_);
      return;
    default:
      return;
  }
}

void lower_simplify_indices(Arena *a, Stmt *body) {
  Simp S = {.a = a};
  simp_stmt(&S, body);
  u64map_free(&S.ranges);
  u64map_free(&S.memo);
}
