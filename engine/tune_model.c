/* tune_model.c — `rly --tune`, `:tune @main` (engine/tune_kernel.h): the
 * kernels of a model's function after the jit pipeline, weighted by their
 * time in one profiled run, tuned by a task scheduler within the budget.
 *
 * The scheduler gives the next few trials to the kernel whose expected
 * gain is the largest: its time in the model now (its time before, scaled
 * by its best over its default) times the part of its space not yet
 * tried; an exhausted kernel gets none.  Its best setting is recorded as
 * soon as it improves; at the end the engine lowers again (taking the
 * records) and the model is timed and profiled once more. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/inspect.h"
#include "engine/profile.h"
#include "engine/tune_kernel.h"
#include "ir/walk.h"
#include "jit/jit.h"
#include "ops/ops.h"
#include "types/types.h"

enum { STEP = 4, MODEL_RUNS = 5, PROFILE_RUNS = 3 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ───────────────────────── running the model ───────────────────────── */

/* A tensor of type t with values in [-1, 1) from a fixed sequence. */
static Expr *random_input(Arena *a, const Type *t, uint64_t *state) {
  int64_t shape[TENSOR_MAX_RANK];
  if (!t || t->kind != TY_TENSOR) return NULL;
  for (int d = 0; d < t->u.tensor.ndim; d++) {
    if (t->u.tensor.dims[d].kind != DIM_CONST) return NULL;
    shape[d] = t->u.tensor.dims[d].value;
  }
  Tensor *x = tensor_new(a, t->u.tensor.dtype, t->u.tensor.ndim, shape);
  for (int64_t i = 0; i < x->numel; i++) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    double v = (double)(*state >> 11) / 9007199254740992.0 * 2 - 1;
    if (dtype_is_float(x->dtype))
      tensor_set_f64(x, i, v);
    else
      tensor_set_i64(x, i, (int64_t)((v + 1) * 2));
  }
  return expr_const(a, x, (Span){0});
}

/* `@fn(random inputs)`, type-checked; NULL with err. */
static Expr *model_call(Engine *e, Module *m, const char *fn, Arena *a, char *err, size_t n) {
  FuncDef *fd = module_func(m, fn);
  if (!fd) return snprintf(err, n, "no function @%s", fn), NULL;
  Expr **args = ARENA_ARRAY(a, Expr *, fd->fn->nparams + 1);
  uint64_t state = 7;
  for (int i = 0; i < fd->fn->nparams; i++)
    if (!(args[i] = random_input(a, fd->fn->params[i]->annot, &state)))
      return snprintf(err, n, "parameter %%%s is not a tensor of known shape",
                      fd->fn->params[i]->name),
             NULL;
  Expr *call = expr_call(a, expr_global(a, fn, (Span){0}), fd->fn->nparams, args, NULL, (Span){0});
  if (!ty_check_expr(m, call, engine_diag(e))) return snprintf(err, n, "does not type-check"), NULL;
  return call;
}

/* The median of MODEL_RUNS runs (after one that compiles), or -1. */
static double model_ms(Engine *e, Module *m, Expr *call) {
  double t[MODEL_RUNS];
  if (!engine_eval(e, m, call, NULL)) return -1;
  for (int i = 0; i < MODEL_RUNS; i++) {
    engine_collect(e);
    double t0 = now_ms();
    if (!engine_eval(e, m, call, NULL)) return -1;
    t[i] = now_ms() - t0;
  }
  for (int i = 1; i < MODEL_RUNS; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1], t[j - 1] = x;
    }
  return t[MODEL_RUNS / 2];
}

/* A profile of PROFILE_RUNS runs (kernel_times divides by their number). */
static Profile *model_profile(Engine *e, Module *m, Expr *call) {
  Profile *p = profile_start();
  for (int i = 0; p && i < PROFILE_RUNS; i++) {
    engine_collect(e);
    if (!engine_eval(e, m, call, NULL)) profile_free(p), p = NULL;
  }
  if (p) profile_stop(p);
  return p;
}

/* ───────────────────────── the kernels ───────────────────────── */

typedef struct Kernels {
  const Module *lm;
  StrMap seen;  /* globals walked */
  PtrVec todo;  /* bodies to walk */
  PtrVec names; /* kernels, in order of first call */
  PtrVec sites; /* (intptr_t) call sites of each */
} Kernels;

static bool kernels_visit(void *ctx, Expr *x) {
  Kernels *k = ctx;
  if (x->kind == EX_GLOBAL && !strmap_get(&k->seen, x->u.global.name)) {
    strmap_put(&k->seen, x->u.global.name, (void *)1);
    FuncDef *f = module_func(k->lm, x->u.global.name);
    if (f) vec_push(&k->todo, f->fn->body);
  }
  if (x->kind != EX_CALL || x->u.call.fn->kind != EX_OP || x->u.call.nargs < 1) return true;
  if (!ops_has_flag(x->u.call.fn->u.op.index, OP_CALL_TIR)) return true;
  const Expr *g = x->u.call.args[0];
  if (g->kind != EX_GLOBAL) return true;
  for (size_t i = 0; i < k->names.len; i++)
    if (strcmp(k->names.items[i], g->u.global.name) == 0)
      return k->sites.items[i] = (void *)((intptr_t)k->sites.items[i] + 1), true;
  vec_push(&k->names, (void *)g->u.global.name);
  vec_push(&k->sites, (void *)(intptr_t)1);
  return true;
}

/* ───────────────────────── the scheduler ───────────────────────── */

typedef struct Task {
  KernelTask *t;
  ModelKernelRow *row;
  double recorded_ms; /* the best setting recorded so far, or -1 */
} Task;

/* Its time in the model now times the part of its space untried. */
static double expected_gain(const Task *k) {
  const KernelTuneResult *r = kernel_task_result(k->t);
  if (r->exhausted || r->space <= 0) return -1;
  double now = k->row->before_ms;
  if (r->start_ms > 0 && r->best_ms > 0) now *= r->best_ms / r->start_ms;
  int tried = r->measured + r->refused + r->wrong;
  return now * (1 - (double)tried / r->space);
}

typedef struct Fwd {
  ModelProgress cb;
  void *user;
  const char *name;
} Fwd;

static bool forward(void *user, const KernelTrial *t) {
  const Fwd *f = user;
  return !f->cb || f->cb(f->user, f->name, t);
}

static void note(ModelProgress cb, void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(ModelProgress cb, void *user, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (cb) cb(user, buf, NULL);
}

/* Records k's best when it improved since the last record. */
static void record_best(Task *k) {
  const KernelTuneResult *r = kernel_task_result(k->t);
  char err[512];
  if (!r->best.set || (k->recorded_ms > 0 && r->best_ms >= k->recorded_ms)) return;
  /* (only improvements on the defaults: the model's kernels stay as they were otherwise) */
  if (kernel_task_record(k->t, err, sizeof err)) k->recorded_ms = r->best_ms;
  knob_text(&r->best, k->row->knobs, sizeof k->row->knobs);
}

/* Trials to the task of the largest expected gain until the budget, the
 * trials or the spaces run out, or cb stops it. */
static void schedule(Task *ts, int n, const TuneOptions *o, ModelProgress cb, void *user,
                     ModelTuneResult *out) {
  double start = now_ms(), budget = o->minutes * 60e3;
  while (now_ms() - start < budget && (!o->trials || out->trials < o->trials)) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (expected_gain(&ts[i]) > 0 &&
          (best < 0 || expected_gain(&ts[i]) > expected_gain(&ts[best])))
        best = i;
    if (best < 0) break;
    Task *k = &ts[best];
    const KernelTuneResult *r = kernel_task_result(k->t);
    int before = r->measured + r->refused + r->wrong;
    Fwd f = {cb, user, k->row->name};
    int step = o->trials && o->trials - out->trials < STEP ? o->trials - out->trials : STEP;
    kernel_task_step(k->t, step, forward, &f);
    int done = r->measured + r->refused + r->wrong - before;
    k->row->trials += done, out->trials += done;
    record_best(k);
    if (r->stopped) {
      out->stopped = true;
      break;
    }
  }
}

/* ───────────────────────── the model ───────────────────────── */

/* The distinct kernels fn calls (transitively, through the globals it
 * names) in lm: rows named, call sites counted. */
static int find_kernels(const Module *lm, const char *fn, ModelKernelRow **rows) {
  Kernels ks = {.lm = lm};
  strmap_put(&ks.seen, fn, (void *)1);
  vec_push(&ks.todo, module_func(lm, fn)->fn->body);
  while (ks.todo.len) expr_walk(vec_pop(&ks.todo), kernels_visit, &ks);
  int n = (int)ks.names.len;
  *rows = calloc((size_t)n + 1, sizeof **rows);
  if (!*rows) rly_oom();
  for (int i = 0; i < n; i++)
    (*rows)[i] =
        (ModelKernelRow){.name = ks.names.items[i], .calls = (double)(intptr_t)ks.sites.items[i]};
  vec_free(&ks.todo), vec_free(&ks.names), vec_free(&ks.sites), strmap_free(&ks.seen);
  return n;
}

static int by_time(const void *x, const void *y) {
  const ModelKernelRow *a = x, *b = y;
  return a->before_ms < b->before_ms ? 1 : a->before_ms > b->before_ms ? -1 : 0;
}

/* Each row's time in one run (all its calls) from profile p. */
static void kernel_times(const Profile *p, ModelKernelRow *rows, int n, bool after) {
  for (int i = 0; i < n; i++) {
    double ms = 0;
    if (profile_share(p, rows[i].name, false, &ms) < 0) ms = 0;
    ms /= PROFILE_RUNS;
    if (after)
      rows[i].after_ms = ms;
    else
      rows[i].before_ms = ms;
  }
}

/* The tasks of the rows that ran and have knobs (others stay as they are). */
static int make_tasks(Engine *e, Arena *a, const TuneOptions *o, ModelTuneResult *out, Task *ts,
                      ModelProgress cb, void *user) {
  int nt = 0;
  for (int i = 0; i < out->nrows; i++) {
    ModelKernelRow *row = &out->rows[i];
    const PrimFunc *k = engine_kernel(e, row->name);
    char err[512];
    KernelTask *t =
        row->before_ms > 0 && k ? kernel_task_new(e, k, a, o->seed, err, sizeof err) : NULL;
    if (!t && row->before_ms > 0 && k) note(cb, user, "@%s: not tuned: %s", row->name, err);
    if (t && kernel_task_result(t)->space <= 1) kernel_task_free(t), t = NULL;
    if (t) ts[nt++] = (Task){t, row, -1};
  }
  return nt;
}

bool engine_tune_model(Engine *e, Module *m, const char *fn, Arena *a, const TuneOptions *o,
                       ModelProgress cb, void *user, ModelTuneResult *out, char *err, size_t n) {
  *out = (ModelTuneResult){0};
  if (engine_options(e)->exec != EXEC_JIT)
    return snprintf(err, n, "tuning a function's kernels needs the jit mode (:set exec jit)"),
           false;
  if (!jit_available())
    return snprintf(err, n, "`:tune` needs the JIT: %s", jit_unavailable_reason()), false;
  Expr *call = model_call(e, m, fn, a, err, n);
  if (!call) return false;
  out->before_ms = model_ms(e, m, call);
  Profile *p = out->before_ms >= 0 ? model_profile(e, m, call) : NULL;
  Module *lm = p ? engine_lowered(e, m, NULL) : NULL;
  if (!lm) return profile_free(p), snprintf(err, n, "it does not run on random inputs"), false;
  out->nrows = find_kernels(lm, fn, &out->rows);
  kernel_times(p, out->rows, out->nrows, false);
  profile_free(p);
  qsort(out->rows, (size_t)out->nrows, sizeof *out->rows, by_time);
  Task *ts = calloc((size_t)out->nrows + 1, sizeof *ts);
  if (!ts) rly_oom();
  int nt = make_tasks(e, a, o, out, ts, cb, user);
  note(cb, user, "@%s: %.3f ms, %d kernels, %d with knobs to tune; budget %.2f minutes", fn,
       out->before_ms, out->nrows, nt, o->minutes);
  schedule(ts, nt, o, cb, user, out);
  for (int i = 0; i < nt; i++) kernel_task_free(ts[i].t);
  free(ts);
  if (out->stopped) engine_interrupt_clear(); /* Ctrl-C stopped the search, not the timing */
  engine_relower(e);                          /* the records now apply */
  out->after_ms = model_ms(e, m, call);
  Profile *q = model_profile(e, m, call);
  if (q) kernel_times(q, out->rows, out->nrows, true);
  profile_free(q);
  return true;
}

void model_tune_result_free(ModelTuneResult *r) {
  free(r->rows);
  r->rows = NULL, r->nrows = 0;
}
