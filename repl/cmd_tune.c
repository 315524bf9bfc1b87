/* cmd_tune.c — `:tune @f [trials=N] [minutes=M] [seed=S] [model=on|off]`: a
 * prim function's schedule found by measurement (engine/tune.h), one
 * progress line per trial (with the cost model's prediction), Ctrl-C
 * keeping the best so far; the best becomes the function's schedule (an
 * undo step) and a record of the tuning database.
 * `:tune --show` lists the database's records for this target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schedule.h"
#include "engine/tune.h"
#include "ir/tir.h"
#include "repl/repl.h"

static const char *usage =
    "usage: :tune @f [trials=N] [minutes=M] [seed=S] [model=on|off]  or  :tune --show";

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

static bool progress(void *user, const TuneTrial *t) {
  (void)user;
  if (t->k <= 0)
    printf("%s ", t->k ? "[current]" : "[start]");
  else
    printf("[%d/%d] ", t->k, t->n);
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

static RunStatus show(Session *s) {
  int n;
  char *t = engine_tuning_show(session_engine(s), &n);
  char *path = engine_tuning_path(session_engine(s));
  printf("%d record%s for this target in %s\n%s", n, n == 1 ? "" : "s", path ? path : "(none)", t);
  free(t), free(path);
  return RUN_OK;
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
  TuneOptions o = {.trials = 64};
  if (w.n == 1 && strcmp(w.w[0], "--show") == 0) {
    st = show(s);
  } else if (!w.n || w.w[0][0] != '@' || !w.w[0][1]) {
    session_error(s, w.n ? w.sp[0] : where, usage, "`:tune` needs a prim function like `@f`");
  } else {
    const PrimFunc *f = engine_prim(session_module(s), w.w[0], &s->diag, w.sp[0]);
    bool ok = f != NULL;
    for (int i = 1; i < w.n && ok; i++) ok = option(s, &w, i, &o);
    session_render(s);
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
