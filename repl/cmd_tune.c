/* cmd_tune.c — `:tune @f [trials=N] [minutes=M] [seed=S]`: a prim function's
 * schedule found by measurement (engine/tune.h), one progress line per
 * trial, Ctrl-C keeping the best so far; the best becomes the function's
 * schedule (an undo step) and a record of the tuning database.
 * `:tune @fused_...` (a kernel as `:kernels` names it): its compute
 * rules' knobs (engine/tune_kernel.h), the best recorded; `:tune @main`
 * (a Relay function): every kernel of it by a task scheduler, a table of
 * before and after (`rly --tune`).
 * `:tune --show` lists the database's records for this target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schedule.h"
#include "engine/tune.h"
#include "engine/tune_kernel.h"
#include "ir/tir.h"
#include "repl/repl.h"

static const char *usage =
    "usage: :tune @f|@kernel [trials=N] [minutes=M] [seed=S] [model=on|off] [set=K=V,...]  or  "
    ":tune --show|--knobs";

/* `key=VALUE` word i: a non-negative number into *v; false after an error. */
static bool option(Session *s, const Words *w, int i, TuneOptions *o) {
  char *eq = strchr(w->w[i], '='), *end;
  double v = eq ? strtod(eq + 1, &end) : 0;
  bool num = eq && eq[1] && !*end && v >= 0;
  size_t k = eq ? (size_t)(eq - w->w[i]) : 0;
  if (num && k == 6 && strncmp(w->w[i], "trials", 6) == 0 && v >= 1 && v == (int)v)
    return o->trials = (int)v, true;
  if (num && k == 7 && strncmp(w->w[i], "minutes", 7) == 0 && v > 0) return o->minutes = v, true;
  if (num && k == 4 && strncmp(w->w[i], "seed", 4) == 0 && v == (double)(uint64_t)v)
    return o->seed = (uint64_t)v, true;
  if (strcmp(w->w[i], "model=on") == 0 || strcmp(w->w[i], "model=off") == 0)
    return o->model_off = w->w[i][7] == 'f', true;
  session_error(s, w->sp[i], usage,
                "`%s` is not trials=N (N >= 1), minutes=M, seed=S or model=on|off", w->w[i]);
  return false;
}

/* A trial's outcome after its label. */
static bool trial_result(const TuneTrial *t) {
  if (repl_interrupted)
    printf("interrupted");
  else if (t->refused)
    printf("refused by a primitive");
  else if (t->wrong)
    printf("WRONG: differs from the unscheduled function (dropped)");
  else
    printf("%.3f ms  %.1f GFLOP/s", t->ms, t->gflops);
  if (t->predicted_gflops > 0) printf("  [model %.1f]", t->predicted_gflops);
  printf("  (best %.1f GFLOP/s", t->best_gflops);
  if (t->refused_so_far) printf(", %d refused", t->refused_so_far);
  puts(")");
  fflush(stdout);
  return !repl_interrupted;
}

/* `set=conv2d.tile=7,conv2d.winograd=0`: a kernel's knobs given. */
static bool pin_option(Session *s, const Words *w, int i, LowerKnobs *k, bool *pinned) {
  if (knob_parse(w->w[i] + 4, k) && k->set) return *pinned = true;
  session_error(s, w->sp[i], "e.g. set=conv2d.tile=7,conv2d.winograd=0 (`:help tune`)",
                "`%s` is not a setting of knobs and values they take", w->w[i]);
  return false;
}

static bool progress(void *user, const TuneTrial *t) {
  (void)user;
  if (t->k <= 0)
    printf("%s ", t->k ? "[current]" : "[start]");
  else
    printf("[%d/%d] ", t->k, t->n);
  return trial_result(t);
}

static RunStatus show(Session *s) {
  int n, nk;
  char *t = engine_tuning_show(session_engine(s), &n);
  char *k = engine_kernel_records_show(session_engine(s), &nk);
  char *path = engine_tuning_path(session_engine(s));
  printf("%d record%s for this target in %s\n%s", n + nk, n + nk == 1 ? "" : "s",
         path ? path : "(none)", t);
  fputs(k, stdout);
  free(t), free(k), free(path);
  return RUN_OK;
}

/* ───────────────────────── kernels ───────────────────────── */

static bool kernel_progress(void *user, const KernelTrial *t) {
  (void)user;
  if (t->t.k)
    printf("[%d/%d] {%s} ", t->t.k, t->t.n - 1, t->knobs);
  else
    printf("[default] {} ");
  if (t->same_as) {
    printf("same kernel as candidate %d\n", t->same_as - 1);
    fflush(stdout);
    return !repl_interrupted;
  }
  return trial_result(&t->t);
}

static void kernel_summary(const char *name, const KernelTuneResult *r) {
  char knobs[512];
  printf("%s: @%s %.3f ms -> %.3f ms (%.2fx), %d measured, %d refused, %d of %d candidates\n",
         r->stopped ? "interrupted" : "done", name, r->start_ms, r->best_ms,
         r->best_ms > 0 ? r->start_ms / r->best_ms : 0, r->measured, r->refused,
         r->measured + r->refused + r->wrong, r->space);
  if (r->wrong)
    fprintf(stderr, "error: %d candidate%s gave wrong results (a bug, please report it): %s\n",
            r->wrong, r->wrong == 1 ? "" : "s", r->wrong_msg ? r->wrong_msg : "");
  if (!r->best.set && r->recorded)
    printf("@%s: its default knobs are the best; recorded in the tuning database\n", name);
  else if (r->recorded)
    printf("@%s: knobs {%s} recorded in the tuning database\n", name,
           knob_text(&r->best, knobs, sizeof knobs));
  else
    printf("@%s: knobs {%s} not recorded: %s\n", name, knob_text(&r->best, knobs, sizeof knobs),
           r->record_err);
}

static RunStatus tune_kernel(Session *s, const PrimFunc *k, TuneOptions *o, const LowerKnobs *pin) {
  char err[512];
  if (!o->trials) o->trials = 64;
  KernelTuneResult r;
  Engine *e = session_engine(s);
  if (!engine_tune_kernel(e, k, &s->inputs, o, pin, kernel_progress, NULL, &r, err, sizeof err)) {
    fprintf(stderr, "error: @%s: %s\n", k->name, err);
    return RUN_ERROR;
  }
  kernel_summary(k->name, &r);
  free(r.wrong_msg);
  if (r.recorded) engine_relower(e); /* later compiles take the record */
  return RUN_OK;
}

/* ───────────────────────── a model ───────────────────────── */

static bool model_progress(void *user, const char *kernel, const KernelTrial *t) {
  (void)user;
  if (!t) {
    printf("%s\n", kernel);
    fflush(stdout);
    return !repl_interrupted;
  }
  printf("@%s ", kernel);
  return kernel_progress(NULL, t);
}

static void model_table(const ModelTuneResult *r) {
  printf("%-48s %6s %7s %11s %11s %7s  %s\n", "kernel", "calls", "trials", "before", "after",
         "speedup", "knobs");
  for (int i = 0; i < r->nrows; i++) {
    const ModelKernelRow *k = &r->rows[i];
    printf("@%-47.47s %6.0f %7d %8.3f ms %8.3f ms %6.2fx  %s\n", k->name, k->calls, k->trials,
           k->before_ms, k->after_ms, k->after_ms > 0 ? k->before_ms / k->after_ms : 0,
           k->knobs[0] ? k->knobs : "(default)");
  }
  if (r->after_ms < 0) printf("(the model did not run again: no time after)\n");
  printf("model: %.3f ms -> %.3f ms (%.2fx), %d trials%s\n", r->before_ms, r->after_ms,
         r->after_ms > 0 ? r->before_ms / r->after_ms : 0, r->trials,
         r->stopped ? " (interrupted: what was found is kept)" : "");
}

static RunStatus tune_model(Session *s, const char *fn, TuneOptions *o) {
  char err[512];
  ModelTuneResult r;
  if (!o->minutes) o->minutes = 10;
  if (!engine_tune_model(session_engine(s), session_module(s), fn, &s->inputs, o, model_progress,
                         NULL, &r, err, sizeof err)) {
    fprintf(stderr, "error: @%s: %s\n", fn, err);
    return RUN_ERROR;
  }
  model_table(&r);
  model_tune_result_free(&r);
  return RUN_OK;
}

/* The kernel named (with or without its `@`) among those the jit mode
 * lowers the module to, or NULL. */
static const PrimFunc *find_kernel(Session *s, const char *name) {
  Engine *e = session_engine(s);
  if (*name == '@') name++;
  if (engine_options(e)->exec != EXEC_JIT) return NULL;
  const PrimFunc *k = engine_kernel(e, name);
  if (!k && engine_lowered(e, session_module(s), NULL)) k = engine_kernel(e, name);
  return k;
}

/* `:tune NAME ...` of a function (the model's kernels) or a kernel. */
static RunStatus tune_named(Session *s, const Words *w, TuneOptions *o) {
  const char *name = w->w[0] + (w->w[0][0] == '@');
  bool ok = true, pinned = false;
  LowerKnobs pin = {0};
  for (int i = 1; i < w->n && ok; i++)
    ok = strncmp(w->w[i], "set=", 4) == 0 ? pin_option(s, w, i, &pin, &pinned) : option(s, w, i, o);
  const PrimFunc *k = NULL;
  bool fn = ok && module_func(session_module(s), name);
  if (ok && !fn && !(k = find_kernel(s, name)))
    session_error(s, w->sp[0], "`:kernels` lists the kernels compiled so far",
                  "no prim function, function or kernel named `@%s`", name);
  session_render(s);
  if (fn) return tune_model(s, name, o);
  return k ? tune_kernel(s, k, o, pinned ? &pin : NULL) : RUN_ERROR;
}

/* The best kept: a new module with @f scheduled so, its text, the record. */
static RunStatus finish(Session *s, const PrimFunc *f, const TuneResult *r) {
  printf("%s: @%s %.3f ms -> %.3f ms (%.2fx), %d measured, %d refused\n",
         r->stopped ? "interrupted" : "done", f->name, r->start_ms, r->best_ms,
         r->best_ms > 0 ? r->start_ms / r->best_ms : 0, r->measured, r->refused);
  if (r->wrong)
    fprintf(stderr, "error: %d candidate%s gave wrong results (a bug, please report it): %s\n",
            r->wrong, r->wrong == 1 ? "" : "s", r->wrong_msg ? r->wrong_msg : "");
  if (r->best == f || !r->best->unscheduled) {
    printf("@%s stays as it was: no candidate was faster\n", f->name);
    return RUN_OK;
  }
  char *t = engine_sched_text(r->best), err[512];
  fputs(t, stdout);
  free(t);
  Module *out = module_copy(session_module(s), &s->inputs);
  module_add(out, (Def){.kind = DEF_PRIM, .u.prim = (PrimFunc *)r->best});
  session_keep_module(s, out);
  double g = r->flops > 0 ? r->flops / (r->best_ms * 1e6) : 0;
  if (engine_tuning_record(session_engine(s), r->best, g, err, sizeof err))
    printf("@%s: scheduled (undo with :undo); recorded in the tuning database\n", f->name);
  else
    printf("@%s: scheduled (undo with :undo); not recorded: %s\n", f->name, err);
  return RUN_OK;
}

RunStatus repl_cmd_tune(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  RunStatus st = RUN_ERROR;
  TuneOptions o = {.trials = 0}; /* 0: 64 for one function or kernel, no bound for a model */
  if (w.n == 1 && strcmp(w.w[0], "--show") == 0) {
    st = show(s);
  } else if (w.n == 1 && strcmp(w.w[0], "--knobs") == 0) {
    char *t = engine_knobs_text();
    fputs(t, stdout), free(t);
    st = RUN_OK;
  } else if (!w.n || !w.w[0][w.w[0][0] == '@']) {
    session_error(s, w.n ? w.sp[0] : where, usage,
                  "`:tune` needs a prim function, a function or a kernel like `@f`");
  } else if (w.w[0][0] != '@' || !module_prim(session_module(s), w.w[0] + 1)) {
    st = tune_named(s, &w, &o);
  } else {
    const PrimFunc *f = engine_prim(session_module(s), w.w[0], &s->diag, w.sp[0]);
    bool ok = f != NULL;
    for (int i = 1; i < w.n && ok; i++) ok = option(s, &w, i, &o);
    session_render(s);
    if (!o.trials) o.trials = 64;
    if (ok) {
      char err[512];
      TuneResult r;
      /* Ctrl-C (armed for the input, loop.c) sets repl_interrupted: progress stops. */
      ok = engine_tune(session_engine(s), f, &s->inputs, &o, progress, NULL, &r, err, sizeof err);
      if (!ok) fprintf(stderr, "error: @%s: %s\n", f->name, err);
      st = ok ? finish(s, f, &r) : RUN_ERROR;
      free(r.wrong_msg);
    }
  }
  repl_free_words(&w);
  return st;
}
