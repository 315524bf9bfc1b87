/* elemwise.c — op family "elemwise" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_elemwise[] = {
    {0},
};
