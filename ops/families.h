/* families.h — the per-family op tables that registry.c joins.  Each table
 * ends with an entry whose name is NULL. */
#ifndef RLY_OPS_FAMILIES_H
#define RLY_OPS_FAMILIES_H

#include "ops/ops.h"

#define OP_FAMILIES(X) \
  X(elemwise)          \
  X(reduce)            \
  X(nn)                \
  X(transform)         \
  X(dyn)               \
  X(random)            \
  X(tir_call)

#define X(f) extern const OpDef ops_family_##f[];
OP_FAMILIES(X)
#undef X

#endif
