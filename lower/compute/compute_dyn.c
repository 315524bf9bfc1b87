/* compute_dyn.c — compute rules (lower/compute/compute.h) of the dyn ops whose
 * result shape the type gives: dyn.reshape, dyn.squeeze, dyn.expand_dims,
 * dyn.broadcast_to,
 * dyn.full, dyn.zeros, dyn.ones (dyn.one_hot's rule is one_hot's, in
 * compute_misc.c).
 *
 * Their shape argument is a tensor; its value decides the result's dims.
 * The relation (ops/dyn.c) knows that value only for a constant, and then
 * gives real dims; otherwise they are `?`, and since a buffer cannot be
 * sized by a value read at run time, the static op's rule refuses such a
 * dim ("a result dim known only at run time") and the op stays on its
 * reference kernel.  With real dims the rules are the static ops' (the
 * shape argument itself is not read).  dyn.squeeze is a reshape to its
 * result type.  dyn.tile, dyn.image.resize2d, dyn.strided_slice and
 * dyn.nn.pad, whose arguments also decide where elements are read from,
 * have rules in compute_dyn_index.c (the first two read those values back
 * from the result's dims, the last two from their constant arguments). */
#include "lower/compute/compute.h"

static LTensor *compute_dyn_reshape(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  (void)nin;
  return compute_reshape(L, call, in, 1);
}

static LTensor *compute_dyn_broadcast_to(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  (void)nin;
  return compute_broadcast_to(L, call, in, 1);
}

static LTensor *compute_dyn_full(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  (void)nin;
  return compute_full(L, call, in, 1);
}

static LTensor *compute_dyn_zeros(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  (void)in, (void)nin;
  return compute_zeros(L, call, NULL, 0);
}

static LTensor *compute_dyn_ones(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  (void)in, (void)nin;
  return compute_ones(L, call, NULL, 0);
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_dyn[] = {
    {"dyn.reshape", compute_dyn_reshape},
    {"dyn.full", compute_dyn_full},
    {"dyn.broadcast_to", compute_dyn_broadcast_to},
    {"dyn.zeros", compute_dyn_zeros},
    {"dyn.ones", compute_dyn_ones},
    {"dyn.squeeze", compute_dyn_reshape},
    {"dyn.expand_dims", compute_dyn_reshape},
    {NULL, NULL},
};
