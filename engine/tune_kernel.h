/* tune_kernel.h — `:tune` of the kernels rly builds itself (the fused
 * functions FuseOps and the lowering make, engine/tune_kernel.c) and of a
 * whole model's (engine/tune_model.c).
 *
 * A kernel's search space is the knobs its compute rules read
 * (lower/compute/compute_knobs.h): every combination of their values, the
 * defaults first, then the rest in an order drawn from the seed.  Each
 * candidate is lowered, compared with the default kernel's outputs on
 * random inputs, compiled and timed with engine_tune's helpers
 * (engine/tune.h); a candidate lowering to the same TIR as an earlier one
 * is not measured again.  The best setting is a record of the tuning
 * database (the file of the prim functions' records):
 *
 *   kernel @fused_nn_dense_add workload=1f2e... (float32[1, 64], ...)
 *   target: LLVM 19.1.7 x86_64-pc-linux-gnu znver5 features:...
 *   gflops: 12.345
 *   knobs: product.mr=4 product.split=1
 *
 * keyed by the workload of the kernel lowered with the defaults (its TIR:
 * the fused function's structure, shapes and dtypes) and the target.
 * Every later lowering of that workload by an engine with tuning_db on
 * (RLY_TUNING_DB) takes the newest recorded setting (engine_kernel_knobs, the
 * lowering's knob hook): the kernel then carries `knobs="..."`, which its
 * TIR, `:kernels` and the JIT's cache keys show. */
#ifndef RLY_ENGINE_TUNE_KERNEL_H
#define RLY_ENGINE_TUNE_KERNEL_H

#include "engine/tune.h"
#include "lower/compute/compute_knobs.h"

/* One candidate, for the progress line. */
typedef struct KernelTrial {
  TuneTrial t;       /* t.k = 0: the defaults */
  const char *knobs; /* its setting as text ("" for the defaults) */
  int same_as;       /* > 0: lowers to the TIR of that earlier candidate (not measured) */
} KernelTrial;
typedef bool (*KernelProgress)(void *user, const KernelTrial *t);

typedef struct KernelTuneResult {
  LowerKnobs best;
  double start_ms, best_ms, flops;
  double last_ms;                      /* the last candidate measured */
  int measured, refused, wrong, space; /* space: the candidates there are */
  bool exhausted;                      /* every candidate was tried */
  bool stopped;
  bool recorded;        /* engine_tune_kernel: the best setting is a record now */
  char record_err[512]; /* why not, when it beat the defaults */
  char *wrong_msg;      /* malloc'd or NULL */
} KernelTuneResult;

/* A kernel being tuned, trials given a few at a time (the model tuner's
 * task scheduler): made from a kernel of the engine (its `group`, the
 * fused function, is lowered again with each setting; candidates live in
 * a). */
typedef struct KernelTask KernelTask;
KernelTask *kernel_task_new(Engine *e, const PrimFunc *kernel, Arena *a, uint64_t seed, char *err,
                            size_t n);
/* Measures up to `trials` more candidates (duplicates not counted);
 * false when the space is exhausted or cb stopped it. */
bool kernel_task_step(KernelTask *t, int trials, KernelProgress cb, void *user);
const KernelTuneResult *kernel_task_result(const KernelTask *t);
/* Its default kernel (the workload's) and name. */
const PrimFunc *kernel_task_plain(const KernelTask *t);
/* Records the best setting (true; false with err); the newest record of
 * a workload is the one that applies. */
bool kernel_task_record(KernelTask *t, char *err, size_t n);
void kernel_task_free(KernelTask *t);

/* `:tune NAME` of one kernel: trials from o (o->minutes bounds the time);
 * the best setting is recorded (the defaults too: the record then says
 * they are best).  pin (NULL: search): the only candidate besides the
 * defaults, recorded whatever its time (`:tune NAME set=...`). */
bool engine_tune_kernel(Engine *e, const PrimFunc *kernel, Arena *a, const TuneOptions *o,
                        const LowerKnobs *pin, KernelProgress cb, void *user, KernelTuneResult *out,
                        char *err, size_t n);
/* The lowering's knob hook (lower_set_knobs_hook, user: the Engine): the
 * recorded setting of plain's workload on this target, when tuning_db. */
bool engine_kernel_knobs(void *engine, const PrimFunc *plain, LowerKnobs *out);
/* The knobs' table (lower/compute/compute_knobs.h) as text, a row per
 * knob: name, default, values, what it sets (malloc'd; `:tune --knobs`). */
char *engine_knobs_text(void);
/* The kernel records of this target, as text (malloc'd); *count gets
 * their number. */
char *engine_kernel_records_show(const Engine *e, int *count);

/* ── a whole model (tune_model.c) ── */

typedef struct ModelKernelRow {
  const char *name;
  double calls;
  double before_ms, after_ms; /* its time in one run of the model (all its calls) */
  int trials;
  char knobs[256];
} ModelKernelRow;

typedef struct ModelTuneResult {
  int nrows;
  ModelKernelRow *rows;       /* malloc'd, by decreasing time before */
  double before_ms, after_ms; /* the model's median run time */
  int trials;
  bool stopped;
} ModelTuneResult;

/* Model progress: a line of text per event (a kernel's trial, the task
 * scheduler's choice); return false to stop. */
typedef bool (*ModelProgress)(void *user, const char *kernel, const KernelTrial *t);

/* `rly --tune`, `:tune @main`: the distinct kernels of m's function fn
 * after the jit pipeline, weighted by their time in one run (calls x
 * time), tuned by a task scheduler within o->minutes (o->trials: an upper
 * bound on the trials), records written as it goes; then the model timed
 * again, lowered with the records. */
bool engine_tune_model(Engine *e, Module *m, const char *fn, Arena *a, const TuneOptions *o,
                       ModelProgress cb, void *user, ModelTuneResult *out, char *err, size_t n);
void model_tune_result_free(ModelTuneResult *r);

#endif
