/* random.c — op family "random" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_random[] = {
    {0},
};
