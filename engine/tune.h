/* tune.h — `:tune @f`: schedules of a prim function found by measurement
 * (engine/tune.c), and the tuning database they are kept in.
 *
 * Candidates come from the schedule rules (sched_space_sample): a
 * warm-up of random samples of the design space, then rounds of fresh
 * samples and mutations of the fastest (one sampling decision drawn
 * again), ranked by a cost model (engine/cost_model.h on the features of
 * sched_features) fitted to the measurements so far, the best few of each
 * round measured.  With model_off: random samples for the first half of
 * the trials, then mutations.  Each is checked against the unscheduled function, compiled by the
 * JIT and timed on random inputs; the function as written and its current schedule are candidates
 * too, so the best is never slower than the start.
 *
 * The database is a text file ($XDG_CACHE_HOME/rly/tuning.txt, or the
 * engine option tuning_log): one record per tuned workload and target,
 * its schedule as text; a prim function defined without a schedule gets
 * the schedule recorded for its workload on this target. */
#ifndef RLY_ENGINE_TUNE_H
#define RLY_ENGINE_TUNE_H

#include "engine/engine.h"
#include "ir/arena.h"
#include "ir/ir.h"

typedef struct TuneOptions {
  int trials;     /* candidates measured (default 64) */
  double minutes; /* time budget (0: none) */
  uint64_t seed;  /* the sampling's seed: the same seed, the same candidates */
  bool model_off; /* no cost model: random samples, then mutations (model=off) */
} TuneOptions;

/* One trial, for the progress line; return false to stop (Ctrl-C). */
typedef struct TuneTrial {
  int k, n;          /* trial k of n (1-based; 0: the function as written, -1: its schedule) */
  bool refused;      /* a primitive refused the candidate (not measured) */
  bool wrong;        /* its results differ from the unscheduled function's */
  double ms, gflops; /* its median time and speed */
  double best_gflops;
  int refused_so_far;
  double predicted_gflops; /* the cost model's prediction for it (0: none) */
} TuneTrial;
typedef bool (*TuneProgress)(void *user, const TuneTrial *t);

typedef struct TuneResult {
  const PrimFunc *best; /* in the caller's arena (f itself when nothing beat it) */
  double start_ms, best_ms, flops;
  int measured, refused, wrong;
  bool stopped;    /* the progress callback stopped it */
  char *wrong_msg; /* malloc'd: the first disagreement, or NULL */
} TuneResult;

/* Tunes f (a prim function of the module); false with err when it cannot
 * be timed (no JIT, inputs that cannot be made). */
bool engine_tune(Engine *e, const PrimFunc *f, Arena *a, const TuneOptions *o, TuneProgress cb,
                 void *user, TuneResult *out, char *err, size_t n);

/* The helpers engine_tune measures with, for the kernels' tuner
 * (engine/tune_kernel.h): random inputs of a function (the same for every
 * function of the same parameters), a kernel's median time, and whether
 * two runs' buffers agree within float rounding (err: the first element
 * that does not). */
typedef struct TuneRun {
  const PrimFunc *f;
  RtTensor *args[64];
} TuneRun;
bool engine_tune_run_new(TuneRun *r, const PrimFunc *f, char *err, size_t n);
void engine_tune_run_free(TuneRun *r);
typedef struct JitKernel JitKernel;
double engine_tune_time(const JitKernel *k, TuneRun *r, double best, bool *ok);
bool engine_tune_same(const TuneRun *a, const TuneRun *b, char *err, size_t n);

/* "workload=<hash> (float32[64, 64], ...)": a prim function's (its
 * unscheduled text without its name) key in the database (malloc'd). */
char *engine_tuning_workload(const PrimFunc *f);
/* Appends text to the database file; false with err. */
bool engine_tuning_append(const Engine *e, const char *text, char *err, size_t n);

/* The database file (malloc'd; NULL when there is none: no cache directory). */
char *engine_tuning_path(const Engine *e);
/* Appends a record of f's best schedule measured at gflops; false with err. */
bool engine_tuning_record(const Engine *e, const PrimFunc *best, double gflops, char *err,
                          size_t n);
/* The records of this target, as text (malloc'd); *count gets their number. */
char *engine_tuning_show(const Engine *e, int *count);
/* The new prim functions an input defines without a schedule (items of r)
 * scheduled from the database when it has their workload on this target
 * (the engine option tuning_db); "@f (N steps)" each pushed onto done. */
void engine_tuning_apply(Engine *e, Module *m, const ParseResult *r, Arena *a, PtrVec *done);

#endif
