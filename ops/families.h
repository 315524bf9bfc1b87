/* families.h — the per-family op tables that registry.c joins (each table
 * ends with an entry whose name is NULL). */
#ifndef RLY_OPS_FAMILIES_H
#define RLY_OPS_FAMILIES_H

#include "ops/ops.h"

#define OP_FAMILIES(X) \
  X(elemwise)          \
  X(reduce)            \
  X(nn)                \
  X(nn_conv)           \
  X(nn_pool)           \
  X(nn_layout)         \
  X(transform)         \
  X(transform_shape)   \
  X(transform_index)   \
  X(algorithm)         \
  X(numeric)           \
  X(dyn)               \
  X(image)             \
  X(vision)            \
  X(qnn)               \
  X(random)            \
  X(tir_call)          \
  X(device)            \
  X(vm)

#define X(f) extern const OpDef ops_family_##f[];
OP_FAMILIES(X)
#undef X

#endif
