/* dyn.h — what the dyn family (ops/dyn.c) tells the layers above about its
 * ops: the static op each one reuses, so kernels/kernels_dyn.c runs the
 * static op's kernel without naming it. */
#ifndef RLY_OPS_DYN_H
#define RLY_OPS_DYN_H

#include "ops/ops.h"

/* The registry index of the static op whose relation and kernel the dyn op
 * `row` reuses (dyn.tile: tile), or -1. */
int dyn_static_op(const OpDef *row);

/* The static op's attributes from the values of a dyn call's constant
 * arguments, as the relations rebuild them (the compute rules of the dyn
 * ops that read constant arguments, lower/compute/compute_dyn_index.c): base with
 * the n keys set to vals; a 1-D integer tensor as an int list; an (n, 2)
 * one as a list of pairs. */
Attrs *dyn_with_attrs(RelCtx *cx, const Attrs *base, int n, const char **keys, AttrValue **vals);
AttrValue *dyn_list_of(RelCtx *cx, const Tensor *t);
AttrValue *dyn_pairs_of(RelCtx *cx, const Tensor *t);

#endif
