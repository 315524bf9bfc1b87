/* nn.c — op family "nn" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_nn[] = {
    {0},
};
