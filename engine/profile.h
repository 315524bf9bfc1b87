/* profile.h — where one evaluation spends its time, kernel by kernel
 * (`:profile EXPR`, `rly --profile`).
 *
 * While a profile is running, every JIT kernel run (jit_set_run_hook) and
 * every reference kernel run (kernels_set_run_hook) is counted under the
 * kernel's name: calls, wall time, floating-point operations and bytes.
 * Flops of a JIT kernel are counted on its TIR (the float arithmetic of
 * each store, times the trip counts of the loops around it, with the run's
 * size variables); flops of a reference kernel come from its op's cost
 * kind (ops/ops.h); bytes are the operands' and results' sizes, each
 * counted once per call.  The rest of the wall time is compiling (kernels
 * compiled or loaded from the disk cache during the profile) and the time
 * outside kernels (the evaluator, call dispatch, allocation, lowering on a
 * first call), so the rows add up to the total.
 *
 * One profile runs at a time (the hooks are process-wide). */
#ifndef RLY_PROFILE_H
#define RLY_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/tir.h"

typedef struct Profile Profile;

/* Starts counting (installs the hooks); NULL when a profile already runs. */
Profile *profile_start(void);
/* Stops counting (removes the hooks) and takes the total wall time. */
void profile_stop(Profile *p);
/* The table: one row per kernel by decreasing time, then compiling, the
 * time outside kernels and the total (shares of the total). */
void profile_print(const Profile *p, FILE *out);
void profile_free(Profile *p);
/* The time spent in kernels (the rows' sum, without compiling and the time
 * outside kernels). */
double profile_kernels_ms(const Profile *p);
/* The flops (of the rows whose flops are known) and the bytes of every
 * kernel run (for `:time`: a call's cost, as the table counts it). */
void profile_totals(const Profile *p, double *flops, double *bytes);
/* The flops of one call of f with its size variables at sizes (-1: unknown). */
double profile_prim_flops(const PrimFunc *f, const int64_t *sizes);
/* A kernel's share (0..1) of the time in kernels and its time in *ms (may
 * be NULL), by name (a prim function's; an op's for a reference kernel);
 * negative when it did not run.  For `:dot`'s colours. */
double profile_share(const Profile *p, const char *name, bool reference, double *ms);

#endif
