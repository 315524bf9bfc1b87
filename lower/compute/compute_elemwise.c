/* compute_elemwise.c — compute rules (lower/compute/compute.h) of the elementwise
 * and broadcast ops: arithmetic, bitwise ops, comparisons, unary math,
 * predicates, where, cast, clip, and nn.relu / nn.leaky_relu / nn.bias_add.
 *
 * Every rule is inline: the element at an index of the result is an
 * expression of the operands' elements (broadcast by numpy's rules).  The
 * expressions follow the reference kernels (kernels/kernels_elemwise.c,
 * kernels_nn.c) so results agree bit for bit: relu keeps NaN, sign of NaN
 * is NaN, clip leaves NaN alone, rsqrt is 1 / sqrt(x), sigmoid is
 * 1 / (1 + exp(-x)), floor_mod is numpy's remainder (fmod, moved to y's
 * sign), trunc_divide is trunc(x / y), trunc_mod is fmod; the float
 * functions call the same libm functions as the kernels; the fast_ ones
 * are TVM's float32 approximations (ops/fast_math.h: the same float32
 * operations in the same order as the kernels), exp, tanh and erf on
 * float64; floor_divide is numpy's divmod quotient and round is nearbyint
 * (ties to even), as the kernels compute them.
 *
 * Every dtype lowers.  float16 operands compute in float32 and each op's
 * result is rounded to half (lc_lane_dtype), as the kernels' float lane
 * does; unsigned integers use unsigned division, comparisons and shifts;
 * narrow integers wrap in their width (the kernels' 64-bit result
 * narrowed).  Integer divide/mod truncate, floor_divide/floor_mod floor
 * (a zero divisor is a run-time error of the kernel, the minimum over -1
 * wraps).  Shifts by a negative count or at least the width give 0 (left)
 * or the sign fill (right), as numpy defines them (TVM leaves them
 * undefined).  Float math on integers and bool computes in float64 and
 * converts back by the cast rules.  Integer power is materialized
 * (int_power: a loop over the exponent's bits per element).
 *
 * The kinds, rules and {op name, rule} rows of the elementwise ops are
 * expanded from ops/elemwise_table.h; a unary op computed by a TIR float
 * intrinsic (its row's fn) is one call of it. */
#include <math.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "ops/elemwise_table.h"
#include "ops/fast_math.h"

/* The binary kinds: B_<CODE> of each ELEMWISE_BINARY row. */
typedef enum BinKind {
#define X(name, CODE, row, kernel, cost, grad, doc) B_##CODE,
  ELEMWISE_BINARY(X)
#undef X
} BinKind;

/* The unary kinds: U_<CODE> of each ELEMWISE_UNARY row, then the ops of
 * other rows that lower as unary ones (their rules are below). */
#define OTHER_UNARY(X) X(RELU, relu) X(LEAKY, leaky_relu) X(CLIP, clip) X(CAST, cast)

typedef enum UnKind {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) U_##CODE,
  ELEMWISE_UNARY(X)
#undef X
#define X(CODE, rule) U_##CODE,
      OTHER_UNARY(X)
#undef X
} UnKind;

/* The TIR float intrinsic computing a kind (the row's fn), or -1 (NONE). */
enum { PI_NONE = -1 };
static const int un_intrinsic[] = {
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) [U_##CODE] = PI_##fn,
    ELEMWISE_UNARY(X)
#undef X
#define X(CODE, rule) [U_##CODE] = -1,
        OTHER_UNARY(X)
#undef X
};

static DType result_dtype(const Expr *call) { return lc_result_type(call)->u.tensor.dtype; }

static bool operands_ok(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  for (int i = 0; i < nin; i++)
    if (!lc_elem_dtype_ok(in[i]->dtype))
      return lc_fail(L, "%s on %s", call->u.call.fn->u.op.name, dtype_name(in[i]->dtype)), false;
  return lc_elem_dtype_ok(result_dtype(call)) ||
         (lc_fail(L, "%s giving %s", call->u.call.fn->u.op.name, dtype_name(result_dtype(call))),
          false);
}

static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}

/* x in the dtype its op computes in (float16: float32). */
static PrimExpr *lane(LowerCx *L, PrimExpr *x) { return lc_cast(L, lc_lane_dtype(x->dtype), x); }

/* ───────────────────────────── binary ───────────────────────────── */

/* numpy's remainder of floats, as the kernel computes it: m = fmod(a, b),
 * moved by b when the signs differ; a zero result takes b's sign. */
static PrimExpr *floor_mod_of(LowerCx *L, PrimExpr *a, PrimExpr *b, DType dt) {
  PrimExpr *zero = lc_lit(L, dt, 0), *m = lc_bin(L, PB_MOD, a, b);
  PrimExpr *b_neg = lc_bin(L, PB_LT, b, zero);
  PrimExpr *moved =
      sel(L, lc_bin(L, PB_NE, b_neg, lc_bin(L, PB_LT, m, zero)), lc_bin(L, PB_ADD, m, b), m);
  return sel(L, lc_bin(L, PB_NE, m, zero), moved, sel(L, b_neg, lc_lit(L, dt, -0.0), zero));
}

/* numpy's floor division of floats, as the kernel computes it (divmod):
 * m = fmod(a, b) moved by b when the signs differ, the quotient (a - m) / b
 * (less one when m moved) snapped to the nearest integer; a zero quotient
 * takes the sign of a / b; division by zero gives a / b. */
static PrimExpr *floor_div_of(LowerCx *L, PrimExpr *a, PrimExpr *b, DType dt) {
  PrimExpr *zero = lc_lit(L, dt, 0), *one = lc_lit(L, dt, 1), *q = lc_bin(L, PB_DIV, a, b);
  PrimExpr *m = lc_bin(L, PB_MOD, a, b), *div = lc_bin(L, PB_DIV, lc_bin(L, PB_SUB, a, m), b);
  PrimExpr *moves = lc_bin(L, PB_AND, lc_bin(L, PB_NE, m, zero),
                           lc_bin(L, PB_NE, lc_bin(L, PB_LT, b, zero), lc_bin(L, PB_LT, m, zero)));
  div = sel(L, moves, lc_bin(L, PB_SUB, div, one), div);
  PrimExpr *fl = lc_call(L, PI_FLOOR, div, NULL, NULL);
  fl = sel(L, lc_bin(L, PB_GT, lc_bin(L, PB_SUB, div, fl), lc_lit(L, dt, 0.5)),
           lc_bin(L, PB_ADD, fl, one), fl);
  PrimExpr *signed_zero = sel(L, lc_bin(L, PB_LT, q, zero), lc_lit(L, dt, -0.0),
                              sel(L, lc_bin(L, PB_GT, q, zero), zero, q));
  PrimExpr *r = sel(L, lc_bin(L, PB_NE, div, zero), fl, signed_zero);
  return sel(L, lc_bin(L, PB_EQ, b, zero), q, r);
}

/* Integer floor division and remainder as the kernels compute them: the
 * truncated quotient less one, or the remainder plus y, when the remainder
 * is nonzero and x and y differ in sign (unsigned: the truncated ones). */
static PrimExpr *int_floor_of(LowerCx *L, PrimExpr *a, PrimExpr *b, DType dt, bool mod) {
  PrimExpr *q = lc_bin(L, PB_DIV, a, b), *r = lc_bin(L, PB_MOD, a, b);
  if (dtype_class(dt) == 'u') return mod ? r : q;
  PrimExpr *zero = lc_lit(L, dt, 0);
  PrimExpr *moves = lc_bin(L, PB_AND, lc_bin(L, PB_NE, r, zero),
                           lc_bin(L, PB_NE, lc_bin(L, PB_LT, a, zero), lc_bin(L, PB_LT, b, zero)));
  if (mod) return sel(L, moves, lc_bin(L, PB_ADD, r, b), r);
  return sel(L, moves, lc_bin(L, PB_SUB, q, lc_lit(L, dt, 1)), q);
}

/* The TIR operator of the kinds that are one. */
static PrimBinOp tir_binop(BinKind k) {
  switch (k) {
    case B_ADD:
      return PB_ADD;
    case B_SUB:
      return PB_SUB;
    case B_MUL:
      return PB_MUL;
    case B_DIV:
      return PB_DIV;
    case B_MOD:
    case B_TMOD:
      return PB_MOD;
    case B_LAND:
      return PB_AND;
    case B_LOR:
      return PB_OR;
    case B_EQ:
      return PB_EQ;
    case B_NE:
    case B_LXOR:
      return PB_NE;
    case B_LT:
      return PB_LT;
    case B_LE:
      return PB_LE;
    case B_GT:
      return PB_GT;
    default:
      return PB_GE;
  }
}

/* The element of a binary op in its lane dtype dt (a and b are of dt) on
 * operands of dtype `store`. */
static PrimExpr *binary_of(LowerCx *L, BinKind k, PrimExpr *a, PrimExpr *b, DType dt, DType store) {
  bool fl = dtype_is_float(dt);
  switch (k) {
    case B_POW:
      return lc_call(L, PI_POW, a, b, NULL);
    case B_MAX:
    case B_MIN:
      return lc_extreme(L, a, b, k == B_MAX);
    case B_FLOORMOD:
      return fl ? floor_mod_of(L, a, b, dt) : int_floor_of(L, a, b, dt, true);
    case B_FLOORDIV:
      return fl ? floor_div_of(L, a, b, dt) : int_floor_of(L, a, b, dt, false);
    case B_LAND: /* of numbers: as truth values (NaN is true), 1 or 0 in the dtype */
    case B_LOR:
    case B_LXOR:
      if (dt == DT_BOOL) return lc_bin(L, tir_binop(k), a, b);
      return lc_cast(L, dt,
                     lc_bin(L, tir_binop(k), lc_cast(L, DT_BOOL, a), lc_cast(L, DT_BOOL, b)));
    case B_TDIV: /* the quotient is rounded to the dtype, then truncated */
      if (!fl) return lc_bin(L, PB_DIV, a, b);
      return lc_call(L, PI_TRUNC, lane(L, lc_cast(L, store, lc_bin(L, PB_DIV, a, b))), NULL, NULL);
    case B_BAND:
      return lc_call(L, PI_BITAND, a, b, NULL);
    case B_BOR:
      return lc_call(L, PI_BITOR, a, b, NULL);
    case B_BXOR:
      return lc_call(L, PI_BITXOR, a, b, NULL);
    case B_SHL:
      return lc_call(L, PI_SHL, a, b, NULL);
    case B_SHR:
      return lc_call(L, PI_SHR, a, b, NULL);
    default:
      return lc_bin(L, tir_binop(k), a, b);
  }
}

static PrimExpr *at_binary(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *a = lane(L, lc_bcast_at(L, t->in[0], t->ndim, (PrimExpr **)t->shape, idx));
  PrimExpr *b = lane(L, lc_bcast_at(L, t->in[1], t->ndim, (PrimExpr **)t->shape, idx));
  return lc_cast(L, t->dtype, binary_of(L, (BinKind)t->aux[0], a, b, a->dtype, t->in[0]->dtype));
}

/* Whether a binary op can be lowered for dt (refusing leaves the op to its
 * kernel): power on floats only, division-like ops not on bool, bitwise
 * ops on integers or bool, shifts on integers. */
static bool binary_ok(LowerCx *L, BinKind k, DType dt) {
  bool fl = dtype_is_float(dt);
  switch (k) {
    case B_POW:
      if (dt == DT_BOOL) return lc_fail(L, "power of bool tensors"), false;
      return true;
    case B_DIV:
    case B_MOD:
    case B_FLOORMOD:
    case B_FLOORDIV:
    case B_TDIV:
    case B_TMOD:
      if (dt == DT_BOOL) return lc_fail(L, "division of bool tensors"), false;
      return true;
    case B_BAND:
    case B_BOR:
    case B_BXOR:
      if (fl) return lc_fail(L, "bitwise ops on floats"), false;
      return true;
    case B_SHL:
    case B_SHR:
      if (!dtype_is_int(dt)) return lc_fail(L, "shifts of non-integers"), false;
      return true;
    default:
      return true;
  }
}

/* ── integer power ── */

/* One element of integer power at idx into out, as the kernel computes it:
 * x^e by squaring and multiplying over the exponent's bits (all of them:
 * an odd x keeps every bit significant), wrapping in the dtype; a negative
 * exponent gives trunc(1 / x^-e): q = 1 / x (1, -1 or 0), squared when e
 * is even.  0 to a negative power divides by zero there, the compiled
 * code's run-time error (the kernel's "0 raised to a negative integer
 * power"); the divisor is 1 for the other elements. */
static void int_power_element(LowerCx *L, LTensor **in, int n, PrimExpr **shape, PrimExpr **idx,
                              Buffer *out) {
  DType dt = out->dtype;
  PrimExpr *x = lc_bcast_at(L, in[0], n, shape, idx), *e = lc_bcast_at(L, in[1], n, shape, idx);
  PrimExpr *three = lc_int(L, 3), *s[3], *one = lc_lit(L, dt, 1), *zero = lc_lit(L, dt, 0);
  Buffer *acc = lc_alloc(L, "acc", dt, 1, &three); /* [result, x^(2^k), e >> k] */
  for (int i = 0; i < 3; i++) s[i] = lc_int(L, i);
  lc_store(L, acc, 1, &s[0], one);
  lc_store(L, acc, 1, &s[1], x);
  lc_store(L, acc, 1, &s[2], e);
  PrimExpr *r = lc_load(L, acc, 1, &s[0]), *sq = lc_load(L, acc, 1, &s[1]);
  PrimExpr *rest = lc_load(L, acc, 1, &s[2]);
  int bits = dtype_bytes(dt) * 8 - (dtype_class(dt) == 'i');
  TirVar *k = lc_tvar(L, "k", lc_int(L, bits));
  lc_open(L);
  PrimExpr *bit = lc_bin(L, PB_NE, lc_call(L, PI_BITAND, rest, one, NULL), zero);
  lc_store(L, acc, 1, &s[0], sel(L, bit, lc_bin(L, PB_MUL, r, sq), r));
  lc_store(L, acc, 1, &s[1], lc_bin(L, PB_MUL, sq, sq));
  lc_store(L, acc, 1, &s[2], lc_bin(L, PB_DIV, rest, lc_lit(L, dt, 2)));
  lc_for(L, LOOP_RANGE, k, lc_int(L, bits), lc_close(L));
  PrimExpr *v = r;
  if (dtype_class(dt) == 'i') {
    PrimExpr *neg = lc_bin(L, PB_LT, e, zero);
    PrimExpr *q = lc_bin(L, PB_DIV, one, sel(L, neg, x, one));
    PrimExpr *odd = lc_bin(L, PB_NE, lc_call(L, PI_BITAND, e, one, NULL), zero);
    v = sel(L, neg, sel(L, odd, q, lc_bin(L, PB_MUL, q, q)), r);
  }
  lc_store(L, out, n, idx, v);
}

/* Integer power, materialized: the element needs a loop, which an inline
 * expression cannot hold.  The loops over the result, the outermost
 * parallel. */
static LTensor *int_power(LowerCx *L, const Expr *call, LTensor **in, int n, PrimExpr **shape) {
  Buffer *out = lc_result_buffer(L, call, result_dtype(call), n, shape);
  if (!out) return NULL;
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int d = 0; d < n; d++) v[d] = lc_tvar(L, "i", shape[d]), idx[d] = lc_var(L, v[d]);
  for (int d = 0; d < n; d++) lc_open(L);
  int_power_element(L, in, n, shape, idx, out);
  for (int d = n; d-- > 0;)
    lc_for(L, d == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[d], shape[d], lc_close(L));
  lc_mark_total(L, out); /* each element stored once */
  return lc_from_buffer(L, call, out);
}

static LTensor *binary(LowerCx *L, const Expr *call, LTensor **in, int nin, BinKind k) {
  if (nin != 2 || !operands_ok(L, call, in, nin) || !binary_ok(L, k, in[0]->dtype)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  int n;
  if (!lc_broadcast(L, in, 2, &n, shape)) return NULL;
  if (k == B_POW && !dtype_is_float(in[0]->dtype)) return int_power(L, call, in, n, shape);
  LTensor *t = lc_tensor(L, call, result_dtype(call), n, shape);
  t->in = in, t->nin = nin, t->at = at_binary, t->aux[0] = k;
  return t;
}

#define X(name, CODE, row, kernel, cost, grad, doc)                                     \
  static LTensor *compute_##name(LowerCx *L, const Expr *call, LTensor **in, int nin) { \
    return binary(L, call, in, nin, B_##CODE);                                          \
  }
ELEMWISE_BINARY(X)
#undef X

/* ───────────────────────────── unary ───────────────────────────── */

static PrimExpr *sign_of(LowerCx *L, PrimExpr *x, DType dt) {
  PrimExpr *zero = lc_lit(L, dt, 0);
  PrimExpr *inner = dtype_is_float(dt) ? sel(L, lc_bin(L, PB_EQ, x, zero), zero, x) : zero;
  return sel(L, lc_bin(L, PB_GT, x, zero), lc_lit(L, dt, 1),
             sel(L, lc_bin(L, PB_LT, x, zero), lc_lit(L, dt, -1), inner));
}

/* x > 0 ? x : 0 keeping NaN, and relu(-0) = +0: x <= 0 is false for NaN. */
static PrimExpr *relu_of(LowerCx *L, PrimExpr *x, DType dt) {
  PrimExpr *zero = lc_lit(L, dt, 0);
  return sel(L, lc_bin(L, PB_LE, x, zero), zero, x);
}

/* A clip bound as the kernel takes it: converted to the tensor's dtype dt
 * by the cast rules (lc_lit), then to the lane. */
static PrimExpr *clip_bound(LowerCx *L, double v, DType dt) { return lane(L, lc_lit(L, dt, v)); }

static PrimExpr *clip_of(LowerCx *L, const LTensor *t, PrimExpr *x) {
  PrimExpr *lo = clip_bound(L, op_attr_float(t->call, "a_min"), t->in[0]->dtype);
  PrimExpr *hi = clip_bound(L, op_attr_float(t->call, "a_max"), t->in[0]->dtype);
  return sel(L, lc_bin(L, PB_LT, x, lo), lo, sel(L, lc_bin(L, PB_GT, x, hi), hi, x));
}

/* isnan, isinf, isfinite: x != x, |x| == inf, |x| < inf on floats (NaN
 * fails both comparisons); constants on integers. */
static PrimExpr *predicate_of(LowerCx *L, UnKind k, PrimExpr *x, DType dt) {
  if (!dtype_is_float(dt)) return lc_lit(L, DT_BOOL, k == U_ISFINITE);
  if (k == U_ISNAN) return lc_bin(L, PB_NE, x, x);
  PrimExpr *ax = lc_call(L, PI_ABS, x, NULL, NULL), *inf = lc_lit(L, dt, INFINITY);
  return lc_bin(L, k == U_ISINF ? PB_EQ : PB_LT, ax, inf);
}

/* ───────────────────── fast_exp, fast_tanh, fast_erf ───────────────────── */

static PrimExpr *flit(LowerCx *L, float v) { return lc_lit(L, DT_FLOAT32, v); }
static PrimExpr *pmul(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_MUL, a, b); }
static PrimExpr *padd(LowerCx *L, PrimExpr *a, PrimExpr *b) { return lc_bin(L, PB_ADD, a, b); }

static PrimExpr *clamp_of(LowerCx *L, PrimExpr *x, float lo, float hi) {
  return lc_call(L, PI_MAX, lc_call(L, PI_MIN, x, flit(L, hi), NULL), flit(L, lo), NULL);
}

/* fast_expf (ops/fast_math.h) as TIR on float32: 2^n from its exponent
 * bits (reinterpret), e^f by the polynomial, max with x. */
PrimExpr *lc_fast_exp(LowerCx *L, PrimExpr *x) {
  PrimExpr *c = clamp_of(L, x, FAST_EXP_LO, FAST_EXP_HI);
  PrimExpr *n =
      lc_call(L, PI_FLOOR, padd(L, pmul(L, c, flit(L, FAST_LOG2E)), flit(L, 0.5f)), NULL, NULL);
  PrimExpr *f = lc_bin(L, PB_SUB, c, pmul(L, n, flit(L, FAST_LN2)));
  PrimExpr *y = flit(L, fast_exp_p[0]);
  for (int i = 1; i < FAST_EXP_NP; i++) y = padd(L, pmul(L, y, f), flit(L, fast_exp_p[i]));
  y = padd(L, padd(L, pmul(L, pmul(L, y, f), f), f), flit(L, 1.0f));
  PrimExpr *e = lc_cast(L, DT_INT32, padd(L, n, flit(L, 127.0f)));
  PrimExpr *two_n = lc_bitcast(L, DT_FLOAT32, lc_call(L, PI_SHL, e, lc_int(L, 23), NULL));
  return lc_call(L, PI_MAX, pmul(L, two_n, y), x, NULL);
}

/* fast_rationalf (ops/fast_math.h) as TIR on float32. */
static PrimExpr *fast_rational_of(LowerCx *L, PrimExpr *x, float clamp, const float *p, int np,
                                  const float *q, int nq) {
  x = clamp_of(L, x, -clamp, clamp);
  PrimExpr *x2 = pmul(L, x, x);
  PrimExpr *num = padd(L, pmul(L, x2, flit(L, p[0])), flit(L, p[1]));
  PrimExpr *den = padd(L, pmul(L, x2, flit(L, q[0])), flit(L, q[1]));
  for (int i = 2; i < np; i++) num = padd(L, pmul(L, x2, num), flit(L, p[i]));
  for (int i = 2; i < nq; i++) den = padd(L, pmul(L, x2, den), flit(L, q[i]));
  return lc_bin(L, PB_DIV, pmul(L, x, num), den);
}

/* A fast_ function: the approximation on float32, the exact function on float64. */
static PrimExpr *fast_fn_of(LowerCx *L, UnKind k, PrimExpr *x, DType dt) {
  if (dt != DT_FLOAT32)
    return lc_call(L, k == U_FEXP ? PI_EXP : k == U_FTANH ? PI_TANH : PI_ERF, x, NULL, NULL);
  if (k == U_FEXP) return lc_fast_exp(L, x);
  if (k == U_FTANH)
    return fast_rational_of(L, x, FAST_TANH_CLAMP, fast_tanh_p, FAST_TANH_NP, fast_tanh_q,
                            FAST_TANH_NQ);
  return fast_rational_of(L, x, FAST_ERF_CLAMP, fast_erf_p, FAST_ERF_NP, fast_erf_q, FAST_ERF_NQ);
}

/* A unary op of x (of dtype dt, the lane), written so the TIR computes what
 * the reference kernel does (rsqrt as 1/sqrt, floor, ceil and trunc of
 * integers as identity, logical not of a number as x == 0). */
static PrimExpr *unary_of(LowerCx *L, const LTensor *t, UnKind k, PrimExpr *x, DType dt) {
  if (un_intrinsic[k] >= 0) return lc_call(L, (PrimIntrinsic)un_intrinsic[k], x, NULL, NULL);
  switch (k) {
    case U_NEG:
      return lc_neg(L, x);
    case U_ABS:
      return lc_call(L, PI_ABS, x, NULL, NULL);
    case U_RSQRT:
      return lc_bin(L, PB_DIV, lc_lit(L, dt, 1), lc_call(L, PI_SQRT, x, NULL, NULL));
    case U_FLOOR:
      return dtype_is_float(dt) ? lc_call(L, PI_FLOOR, x, NULL, NULL) : x;
    case U_CEIL:
      return dtype_is_float(dt) ? lc_call(L, PI_CEIL, x, NULL, NULL) : x;
    case U_TRUNC:
      return dtype_is_float(dt) ? lc_call(L, PI_TRUNC, x, NULL, NULL) : x;
    case U_ROUND:
      return dtype_is_float(dt) ? lc_call(L, PI_NEARBYINT, x, NULL, NULL) : x;
    case U_COPY:
      return x;
    case U_SIGN:
      return sign_of(L, x, dt);
    case U_LNOT:
      return dt == DT_BOOL ? lc_not(L, x) : lc_cast(L, dt, lc_bin(L, PB_EQ, x, lc_lit(L, dt, 0)));
    case U_BNOT:
      return dt == DT_BOOL ? lc_not(L, x) : lc_call(L, PI_BITNOT, x, NULL, NULL);
    case U_ISNAN:
    case U_ISINF:
    case U_ISFINITE:
      return predicate_of(L, k, x, dt);
    case U_RELU:
      return relu_of(L, x, dt);
    case U_LEAKY: {
      PrimExpr *alpha = lc_lit(L, dt, op_attr_float(t->call, "alpha"));
      return sel(L, lc_bin(L, PB_GT, x, lc_lit(L, dt, 0)), x, lc_bin(L, PB_MUL, alpha, x));
    }
    case U_CLIP:
      return clip_of(L, t, x);
    case U_CAST:
      return lc_cast(L, t->dtype, x);
    case U_FEXP:
    case U_FTANH:
    case U_FERF:
      return fast_fn_of(L, k, x, dt);
    default:
      RLY_UNREACHABLE();
  }
}

/* The kinds the kernels compute in float64 on integer and bool operands. */
static bool float_math(UnKind k) {
  return un_intrinsic[k] >= 0 || k == U_RSQRT || k == U_FEXP || k == U_FTANH || k == U_FERF;
}

/* The element of a unary op at idx: computed in the operand's lane dtype
 * and converted to the result's (a cast and a copy convert only once). */
static PrimExpr *at_unary(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *x = lc_at(L, t->in[0], idx);
  UnKind k = (UnKind)t->aux[0];
  if (k == U_CAST || k == U_COPY) return lc_cast(L, t->dtype, x);
  x = float_math(k) && !dtype_is_float(x->dtype) ? lc_cast(L, DT_FLOAT64, x) : lane(L, x);
  return lc_cast(L, t->dtype, unary_of(L, t, k, x, x->dtype));
}

/* Whether a unary op can be lowered for dt: leaky_relu needs a float
 * dtype, arithmetic refuses bool, bitwise_not refuses floats; refusing
 * leaves the op to the interpreter.  (Float math on integers and bool
 * computes in float64, as the kernels do.) */
static bool unary_ok(LowerCx *L, UnKind k, DType dt) {
  bool fl = dtype_is_float(dt);
  if (float_math(k)) return true;
  if (k == U_LEAKY) {
    if (!fl) return lc_fail(L, "leaky_relu of %s", dtype_name(dt)), false;
    return true;
  }
  switch (k) {
    case U_NEG:
    case U_ABS:
    case U_SIGN:
      if (dt == DT_BOOL) return lc_fail(L, "arithmetic on bool"), false;
      return true;
    case U_BNOT:
      if (fl) return lc_fail(L, "bitwise_not of floats"), false;
      return true;
    default:
      return true;
  }
}

static LTensor *unary(LowerCx *L, const Expr *call, LTensor **in, int nin, UnKind k) {
  if (nin != 1 || !operands_ok(L, call, in, nin) || !unary_ok(L, k, in[0]->dtype)) return NULL;
  LTensor *t = lc_tensor(L, call, result_dtype(call), in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_unary, t->aux[0] = k;
  return t;
}

#define UNARY_RULE(rule, CODE)                                                          \
  static LTensor *compute_##rule(LowerCx *L, const Expr *call, LTensor **in, int nin) { \
    return unary(L, call, in, nin, U_##CODE);                                           \
  }
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) UNARY_RULE(name, CODE)
ELEMWISE_UNARY(X)
#undef X
#define X(CODE, rule) UNARY_RULE(rule, CODE)
OTHER_UNARY(X)
#undef X

/* ───────────────────────── where, bias_add ───────────────────────── */

static PrimExpr *at_where(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr **sh = (PrimExpr **)t->shape;
  PrimExpr *c = lc_bcast_at(L, t->in[0], t->ndim, sh, idx);
  if (c->dtype != DT_BOOL) c = lc_cast(L, DT_BOOL, c);
  return sel(L, c, lc_bcast_at(L, t->in[1], t->ndim, sh, idx),
             lc_bcast_at(L, t->in[2], t->ndim, sh, idx));
}

static LTensor *compute_where(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 3 || !operands_ok(L, call, in, nin)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  int n;
  if (!lc_broadcast(L, in, 3, &n, shape)) return NULL;
  LTensor *t = lc_tensor(L, call, result_dtype(call), n, shape);
  t->in = in, t->nin = nin, t->at = at_where;
  return t;
}

static PrimExpr *at_bias_add(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *j = idx[t->aux[0]];
  PrimExpr *sum =
      lc_bin(L, PB_ADD, lane(L, lc_at(L, t->in[0], idx)), lane(L, lc_at(L, t->in[1], &j)));
  return lc_cast(L, t->dtype, sum);
}

static LTensor *compute_bias_add(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || !operands_ok(L, call, in, nin) || in[0]->dtype == DT_BOOL) return NULL;
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += in[0]->ndim;
  if (axis < 0 || axis >= in[0]->ndim || in[1]->ndim != 1)
    return lc_fail(L, "nn.bias_add: unexpected axis or bias rank");
  LTensor *t = lc_tensor(L, call, result_dtype(call), in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_bias_add, t->aux[0] = axis;
  return t;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_elemwise[] = {
#define X(name, CODE, row, kernel, cost, grad, doc) {#name, compute_##name},
    ELEMWISE_BINARY(X)
#undef X
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) {#name, compute_##name},
        ELEMWISE_UNARY(X)
#undef X
            {"where", compute_where},
    {"cast", compute_cast},
    {"clip", compute_clip},
    {"nn.bias_add", compute_bias_add},
    {"nn.relu", compute_relu},
    {"nn.leaky_relu", compute_leaky_relu},
    {NULL, NULL},
};
