/* reduce.c — op family "reduce" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_reduce[] = {
    {0},
};
