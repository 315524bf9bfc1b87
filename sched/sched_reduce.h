/* sched_reduce.h — what the reduction and block primitives share
 * (sched_reduce.c, sched_blockize.c, sched_tensorize.c, sched_intrin.c);
 * not a public header. */
#ifndef RLY_SCHED_REDUCE_H
#define RLY_SCHED_REDUCE_H

#include "sched/sched_int.h"

/* A new iteration variable named `name` (not made unique: block variables
 * are scoped by their block). */
TirVar *sr_block_var(Sched *s, const char *name, DType dt);

/* blockize at the loop of variable v (reported at `where`): the new outer
 * block's name in *outer. */
bool sr_blockize(Sched *s, TirVar *v, Span where, const char **outer);

/* A registered tensor intrinsic: `desc` says what it computes, `impl` how
 * (prim functions with the same parameters). */
typedef struct SchedIntrin {
  const char *name, *help;
  const PrimFunc *desc, *impl;
} SchedIntrin;
/* The intrinsic named `name`, or NULL (parsed once, on first use). */
const SchedIntrin *sched_intrin(const char *name);

#endif
