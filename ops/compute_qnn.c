/* compute_qnn.c — compute rules (ops/compute.h) of the qnn family
 * (ops/qnn.c): fixed_point_multiply, inline (elementwise).
 *
 * The element is TVM's q_multiply_shift in int64, as the reference kernel
 * computes it (interp/kernels_qnn.c): x shifted left by max(shift, 0),
 * times the multiplier, plus 2^(r - 1), shifted right (arithmetically) by
 * r = 31 + max(-shift, 0), narrowed to int32. */
#include "ops/compute.h"
#include "ops/families.h"

/* The element at idx: the attributes are constants of the call. */
static PrimExpr *at_fpm(LowerCx *L, const LTensor *t, PrimExpr **idx) {
  int64_t m = op_attr_int(t->call, "multiplier"), s = op_attr_int(t->call, "shift");
  int64_t ls = s > 0 ? s : 0, rs = (s > 0 ? 0 : -s) + 31;
  if (rs > 63) rs = 63;
  PrimExpr *x = lc_cast(L, DT_INT64, lc_at(L, t->in[0], idx));
  PrimExpr *i64_ls = lc_cast(L, DT_INT64, lc_int(L, ls)),
           *i64_rs = lc_cast(L, DT_INT64, lc_int(L, rs));
  if (ls) x = lc_call(L, PI_SHL, x, i64_ls, NULL);
  x = lc_bin(L, PB_MUL, x, lc_cast(L, DT_INT64, lc_int(L, m)));
  x = lc_bin(L, PB_ADD, x, lc_cast(L, DT_INT64, lc_int(L, (int64_t)1 << (rs - 1))));
  return lc_cast(L, DT_INT32, lc_call(L, PI_SHR, x, i64_rs, NULL));
}

LTensor *compute_fixed_point_multiply(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  if (nin != 1 || in[0]->dtype != DT_INT32)
    return lc_fail(L, "fixed_point_multiply on %s", nin == 1 ? dtype_name(in[0]->dtype) : "?");
  LTensor *t = lc_tensor(L, call, DT_INT32, in[0]->ndim, in[0]->shape);
  t->in = in, t->nin = nin, t->at = at_fpm;
  return t;
}
