/* transform.c — op family "transform" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_transform[] = {
    {0},
};
