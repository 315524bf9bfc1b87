/* compute_elemwise.c — compute rules (ops/compute.h) of the elementwise
 * and broadcast ops: arithmetic, comparisons, unary math, where, cast,
 * clip, and nn.relu / nn.leaky_relu / nn.bias_add.
 *
 * Every rule is inline: the element at an index of the result is an
 * expression of the operands' elements (broadcast by numpy's rules).  The
 * expressions follow the reference kernels (interp/kernels_elemwise.c,
 * kernels_nn.c) so results agree bit for bit: relu keeps NaN, sign of NaN
 * is NaN, clip leaves NaN alone, rsqrt is 1 / sqrt(x), sigmoid is
 * 1 / (1 + exp(-x)).  Cases the TIR intrinsics cannot express exactly
 * (integer division, float floor_divide, round, erf, float16) are refused,
 * so those calls stay with the reference kernels. */
#include <string.h>

#include "ops/compute.h"
#include "ops/families.h"

/* X(kind, rule): the rule compute_<rule> (ops/families.h) lowers the kind. */
// clang-format off
#define BIN_KINDS(X)                                                                  \
  X(B_ADD, add)                                                                       \
  X(B_SUB, subtract)                                                                  \
  X(B_MUL, multiply) X(B_DIV, divide) X(B_MOD, mod) X(B_POW, power) X(B_MAX, maximum) \
      X(B_MIN, minimum) X(B_AND, logical_and) X(B_OR, logical_or) X(B_EQ, equal)      \
          X(B_NE, not_equal) X(B_LT, less) X(B_LE, less_equal) X(B_GT, greater)       \
              X(B_GE, greater_equal)
// clang-format on

typedef enum BinKind {
#define X(e, r) e,
  BIN_KINDS(X)
#undef X
} BinKind;

// clang-format off
#define UN_KINDS(X)                                                                    \
  X(U_NEG, negative)                                                                   \
  X(U_ABS, abs)                                                                        \
  X(U_EXP, exp) X(U_LOG, log) X(U_SQRT, sqrt) X(U_RSQRT, rsqrt) X(U_TANH, tanh)        \
      X(U_SIGMOID, sigmoid) X(U_FLOOR, floor) X(U_CEIL, ceil) X(U_SIGN, sign)          \
          X(U_NOT, logical_not) X(U_RELU, relu) X(U_LEAKY, leaky_relu) X(U_CLIP, clip) \
              X(U_CAST, cast)
// clang-format on

typedef enum UnKind {
#define X(e, r) e,
  UN_KINDS(X)
#undef X
} UnKind;

static DType result_dtype(const Expr *call) { return lc_result_type(call)->u.tensor.dtype; }

static bool operands_ok(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  for (int i = 0; i < nin; i++)
    if (!lc_dtype_ok(in[i]->dtype))
      return lc_fail(L, "%s on %s", call->u.call.fn->u.op.name, dtype_name(in[i]->dtype)), false;
  return lc_dtype_ok(result_dtype(call)) ||
         (lc_fail(L, "%s giving %s", call->u.call.fn->u.op.name, dtype_name(result_dtype(call))),
          false);
}

/* ───────────────────────────── binary ───────────────────────────── */

static const PrimBinOp bin_ops[] = {PB_ADD, PB_SUB, PB_MUL, PB_DIV, PB_MOD, PB_ADD, PB_ADD, PB_ADD,
                                    PB_AND, PB_OR,  PB_EQ,  PB_NE,  PB_LT,  PB_LE,  PB_GT,  PB_GE};

static PrimExpr *at_binary(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *a = lc_bcast_at(L, t->in[0], t->ndim, (PrimExpr **)t->shape, idx);
  PrimExpr *b = lc_bcast_at(L, t->in[1], t->ndim, (PrimExpr **)t->shape, idx);
  switch ((BinKind)t->aux[0]) {
    case B_POW:
      return lc_call(L, PI_POW, a, b, NULL);
    case B_MAX:
      return lc_call(L, PI_MAX, a, b, NULL);
    case B_MIN:
      return lc_call(L, PI_MIN, a, b, NULL);
    default:
      return lc_bin(L, bin_ops[t->aux[0]], a, b);
  }
}

static bool binary_ok(LowerCx *L, BinKind k, DType dt) {
  bool fl = dtype_is_float(dt);
  if ((k == B_DIV || k == B_MOD || k == B_POW) && !fl)
    return lc_fail(L, "integer division and power stay with the reference kernels"), false;
  if ((k == B_AND || k == B_OR) && dt != DT_BOOL)
    return lc_fail(L, "logical ops on non-bool tensors"), false;
  return true;
}

static LTensor *binary(LowerCx *L, const Expr *call, LTensor **in, int nin, BinKind k) {
  if (nin != 2 || !operands_ok(L, call, in, nin) || !binary_ok(L, k, in[0]->dtype)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  int n;
  if (!lc_broadcast(L, in, 2, &n, shape)) return NULL;
  LTensor *t = lc_tensor(L, call, result_dtype(call), n, shape);
  t->in = in, t->nin = nin, t->at = at_binary, t->aux[0] = k;
  return t;
}

#define X(e, r)                                                               \
  LTensor *compute_##r(LowerCx *L, const Expr *call, LTensor **in, int nin) { \
    return binary(L, call, in, nin, e);                                       \
  }
BIN_KINDS(X)
#undef X

/* ───────────────────────────── unary ───────────────────────────── */

static PrimExpr *sel(LowerCx *L, PrimExpr *c, PrimExpr *a, PrimExpr *b) {
  return lc_call(L, PI_SELECT, c, a, b);
}

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

static PrimExpr *clip_of(LowerCx *L, const LTensor *t, PrimExpr *x, DType dt) {
  PrimExpr *lo = lc_lit(L, dt, op_attr_float(t->call, "a_min"));
  PrimExpr *hi = lc_lit(L, dt, op_attr_float(t->call, "a_max"));
  return sel(L, lc_bin(L, PB_LT, x, lo), lo, sel(L, lc_bin(L, PB_GT, x, hi), hi, x));
}

/* The element of a unary op at idx, written so the TIR computes what the
 * reference kernel does (rsqrt as 1/sqrt, floor and ceil of integers as
 * identity, logical not of a number as x == 0). */
static PrimExpr *at_unary(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr *x = lc_at(L, t->in[0], idx);
  DType dt = t->in[0]->dtype;
  switch ((UnKind)t->aux[0]) {
    case U_NEG:
      return lc_neg(L, x);
    case U_ABS:
      return lc_call(L, PI_ABS, x, NULL, NULL);
    case U_EXP:
      return lc_call(L, PI_EXP, x, NULL, NULL);
    case U_LOG:
      return lc_call(L, PI_LOG, x, NULL, NULL);
    case U_SQRT:
      return lc_call(L, PI_SQRT, x, NULL, NULL);
    case U_RSQRT:
      return lc_bin(L, PB_DIV, lc_lit(L, dt, 1), lc_call(L, PI_SQRT, x, NULL, NULL));
    case U_TANH:
      return lc_call(L, PI_TANH, x, NULL, NULL);
    case U_SIGMOID:
      return lc_call(L, PI_SIGMOID, x, NULL, NULL);
    case U_FLOOR:
      return dtype_is_float(dt) ? lc_call(L, PI_FLOOR, x, NULL, NULL) : x;
    case U_CEIL:
      return dtype_is_float(dt) ? lc_call(L, PI_CEIL, x, NULL, NULL) : x;
    case U_SIGN:
      return sign_of(L, x, dt);
    case U_NOT:
      return dt == DT_BOOL ? lc_not(L, x) : lc_cast(L, dt, lc_bin(L, PB_EQ, x, lc_lit(L, dt, 0)));
    case U_RELU:
      return relu_of(L, x, dt);
    case U_LEAKY: {
      PrimExpr *alpha = lc_lit(L, dt, op_attr_float(t->call, "alpha"));
      return sel(L, lc_bin(L, PB_GT, x, lc_lit(L, dt, 0)), x, lc_bin(L, PB_MUL, alpha, x));
    }
    case U_CLIP:
      return clip_of(L, t, x, dt);
    case U_CAST:
      return lc_cast(L, t->dtype, x);
  }
  RLY_UNREACHABLE();
}

/* Whether a unary op can be lowered for dt: float math needs a float dtype
 * and arithmetic refuses bool; refusing leaves the op to the interpreter. */
static bool unary_ok(LowerCx *L, UnKind k, DType dt) {
  bool fl = dtype_is_float(dt);
  switch (k) {
    case U_EXP:
    case U_LOG:
    case U_SQRT:
    case U_RSQRT:
    case U_TANH:
    case U_SIGMOID:
    case U_LEAKY:
      if (!fl) return lc_fail(L, "float math on %s", dtype_name(dt)), false;
      return true;
    case U_NEG:
    case U_ABS:
    case U_SIGN:
      if (dt == DT_BOOL) return lc_fail(L, "arithmetic on bool"), false;
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

#define X(e, r)                                                               \
  LTensor *compute_##r(LowerCx *L, const Expr *call, LTensor **in, int nin) { \
    return unary(L, call, in, nin, e);                                        \
  }
UN_KINDS(X)
#undef X

/* ───────────────────────── where, bias_add ───────────────────────── */

static PrimExpr *at_where(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  PrimExpr **sh = (PrimExpr **)t->shape;
  PrimExpr *c = lc_bcast_at(L, t->in[0], t->ndim, sh, idx);
  if (c->dtype != DT_BOOL) c = lc_cast(L, DT_BOOL, c);
  return sel(L, c, lc_bcast_at(L, t->in[1], t->ndim, sh, idx),
             lc_bcast_at(L, t->in[2], t->ndim, sh, idx));
}

LTensor *compute_where(LowerCx *L, const Expr *call, LTensor **in, int nin) {
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
  return lc_bin(L, PB_ADD, lc_at(L, t->in[0], idx), lc_at(L, t->in[1], &j));
}

LTensor *compute_bias_add(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 2 || !operands_ok(L, call, in, nin) || in[0]->dtype == DT_BOOL) return NULL;
  int64_t axis = op_attr_int(call, "axis");
  if (axis < 0) axis += in[0]->ndim;
  if (axis < 0 || axis >= in[0]->ndim || in[1]->ndim != 1)
    return lc_fail(L, "nn.bias_add: unexpected axis or bias rank");
  LTensor *t = lc_tensor(L, call, result_dtype(call), in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_bias_add, t->aux[0] = axis;
  return t;
}
