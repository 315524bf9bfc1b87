/* schedule.h — the engine's side of schedules (sched/): applying the
 * schedules a module's text gives, one step at a time at the prompt
 * (`:sched`), and what :trace, :print --unscheduled and :step show. */
#ifndef RLY_ENGINE_SCHEDULE_H
#define RLY_ENGINE_SCHEDULE_H

#include "engine/engine.h"
#include "ir/arena.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* Applies the pending schedule (just parsed) of every prim function of m,
 * replacing each by its scheduled version; with verify, each scheduled
 * function's results are compared with the unscheduled one's.  False after
 * errors in d. */
bool engine_apply_schedules(Module *m, DiagCtx *d, bool verify);

/* `:sched @f STEP`: a copy of m (in a) with prim function `name` scheduled
 * one step more, the step read from `step` (a span of a registered
 * source); *diff (malloc'd) is the scheduled TIR's diff.  NULL after
 * errors in d. */
Module *engine_sched_step(const Module *m, Arena *a, DiagCtx *d, const char *name, Span step,
                          bool verify, char **diff);

/* Prim function `name` of m, or NULL with an error at `where` in d. */
const PrimFunc *engine_prim(const Module *m, const char *name, DiagCtx *d, Span where);
/* Its text (malloc'd): as scheduled, or as written (unscheduled). */
char *engine_prim_text(const PrimFunc *f, bool unscheduled);
/* Its schedule as text (malloc'd), or NULL when it has none. */
char *engine_sched_text(const PrimFunc *f);
/* The number of steps of f's schedule, step i's text (malloc'd), and the
 * scheduled TIR after the first k (malloc'd; NULL after errors in d). */
int engine_sched_nsteps(const PrimFunc *f);
char *engine_sched_step_text(const PrimFunc *f, int i);
char *engine_sched_prefix_text(const PrimFunc *f, int k, DiagCtx *d);

/* The line diff of two texts (passes/diff.c's), malloc'd. */
char *engine_text_diff(const char *key, const char *before, const char *after);

/* `:time @f` of a prim function: f run on random inputs (those of
 * sched_verify) by the JIT or, in interp mode, the TIR interpreter. */
typedef struct PrimRun PrimRun;
PrimRun *engine_prim_run_new(const Engine *e, const PrimFunc *f, char *err, size_t n);
bool engine_prim_run(PrimRun *r, char *err, size_t n);
/* One call's flops (-1: unknown) and the bytes of its buffers. */
double engine_prim_run_flops(const PrimRun *r);
double engine_prim_run_bytes(const PrimRun *r);
void engine_prim_run_free(PrimRun *r);

/* `:help sched`: one line per primitive, from the table. */
char *engine_sched_help(void);

#endif
