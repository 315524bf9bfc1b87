/* tir_call.c — op family "tir_call" (type relations; kernels and compute rules later). */
#include "ops/families.h"

const OpDef ops_family_tir_call[] = {
    {0},
};
