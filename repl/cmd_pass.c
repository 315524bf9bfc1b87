/* cmd_pass.c — the pass commands of the REPL: :passes, :pass, :step, :undo.
 *
 * :pass runs a pipeline (passes/pass.h) on the session module, prints the
 * diff and keeps the result; the module before it goes on an undo stack
 * (its tables stay alive until it falls off the stack or :reset).  :step
 * runs the same pipeline with a hook that shows each rewrite and waits for
 * Enter (next), `c` (run to the end) or `q` (stop; nothing is applied). */
#include <stdlib.h>
#include <string.h>

#include "passes/pass.h"
#include "repl/repl.h"

RunStatus repl_cmd_passes(Session *s) {
  (void)s;
  for (int i = 0; i < pass_count(); i++) {
    const PassDef *p = pass_get(i);
    printf("  %-24s %s\n", p->name, p->doc);
  }
  return RUN_OK;
}

void repl_undo_push(Session *s, Module *m) {
  if (s->nundo == REPL_UNDO_DEPTH) {
    if (s->undo[0] != s->base) module_free(s->undo[0]);
    memmove(s->undo, s->undo + 1, sizeof(Module *) * (REPL_UNDO_DEPTH - 1));
    s->nundo--;
  }
  s->undo[s->nundo++] = m;
}

void repl_undo_clear(Session *s) {
  for (int i = 0; i < s->nundo; i++)
    if (s->undo[i] != s->base && s->undo[i] != s->m) module_free(s->undo[i]);
  s->nundo = 0;
}

/* What :step shows for one rewrite, and its Enter / c / q prompt. */
typedef struct Stepper {
  Session *s;
  int n;
  bool show;       /* :step (else :pass, which only counts) */
  bool run_to_end;
} Stepper;

static bool step_hook(void *user, const PassRewrite *rw) {
  Stepper *st = user;
  if (!st->show) return ++st->n, true;
  char *text = pass_rewrite_format(rw, &st->s->diag, 12);
  printf("[%d] %s", ++st->n, text);
  free(text);
  if (st->run_to_end) return true;
  fputs("[Enter] next  [c] continue  [q] quit\n", stdout);
  fflush(stdout);
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return true; /* end of input: run to the end */
  if (line[0] == 'q') return false;
  if (line[0] == 'c') st->run_to_end = true;
  return true;
}

static RunStatus run_pipeline(Session *s, const char *names, Span where, bool step) {
  if (!*names) {
    session_error(s, where, "`:passes` lists them", "`:%s` needs pass names", step ? "step" : "pass");
    return RUN_ERROR;
  }
  Stepper st = {s, 0, step, false};
  PassHook hook = {step_hook, &st};
  PassOptions opt = pass_options_default();
  opt.verify = s->verify;
  opt.where = where;
  opt.hook = &hook;
  PassResult r = {0};
  bool ok = pass_pipeline(names, s->m, &s->inputs, &s->diag, &opt, &r);
  session_render(s);
  if (!ok || r.stopped || !r.module) {
    if (r.stopped) puts("stopped; the module is unchanged");
    pass_result_free(&r);
    return r.stopped ? RUN_OK : RUN_ERROR;
  }
  fputs(r.diff, stdout);
  if (r.module != s->m && strcmp(r.diff, "no change\n") != 0) {
    /* Inside :load the transaction owns the old module (it may roll back). */
    if (!s->ntxns) repl_undo_push(s, s->m);
    s->m = r.module;
    printf("%s: %d rewrite%s; kept (undo with :undo)\n", names, st.n, st.n == 1 ? "" : "s");
  }
  pass_result_free(&r);
  return RUN_OK;
}

RunStatus repl_cmd_pass(Session *s, const char *args, Span where, bool step) {
  return run_pipeline(s, args, where, step);
}

RunStatus repl_cmd_undo(Session *s, Span where) {
  if (!s->nundo) {
    session_error(s, where, NULL, "nothing to undo: no :pass since the last :reset");
    return RUN_ERROR;
  }
  Module *cur = s->m;
  s->m = s->undo[--s->nundo];
  if (cur != s->base) module_free(cur);
  puts("restored the module from before the last :pass");
  return RUN_OK;
}
