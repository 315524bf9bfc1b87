/* dyn.c — op family "dyn" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_dyn[] = {
    {0},
};
