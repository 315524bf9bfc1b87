/* dyn.h — what the dyn family (ops/dyn.c) tells the layers above about its
 * ops: the static op each one reuses, so interp/kernels_dyn.c runs the
 * static op's kernel without naming it. */
#ifndef RLY_OPS_DYN_H
#define RLY_OPS_DYN_H

#include "ops/ops.h"

/* The registry index of the static op whose relation and kernel the dyn op
 * `row` reuses (dyn.tile: tile), or -1. */
int dyn_static_op(const OpDef *row);

#endif
