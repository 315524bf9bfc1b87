/* cmd_sched.c — schedules at the prompt: `:sched @f STEP` applies one
 * primitive (diff shown, kept, `:undo` takes it back), `:trace @f` prints
 * the schedule as text, `:step @f` replays it one primitive at a time,
 * and `:print --unscheduled @f` shows the function as written.  The
 * primitives themselves are sched/'s (their table: `:help sched`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schedule.h"
#include "ir/sched.h"
#include "ir/tir.h"
#include "repl/repl.h"

/* `@f REST`: the name (without `@`) into name, REST's span into *rest. */
static bool split_name(Session *s, const char *args, Span where, char *name, size_t n, Span *rest,
                       const char *usage) {
  size_t len = strcspn(args, " \t");
  if (args[0] != '@' || len < 2 || len >= n) {
    session_error(s, where, usage, "expected a prim function like `@f`");
    return false;
  }
  memcpy(name, args + 1, len - 1);
  name[len - 1] = 0;
  size_t skip = len + strspn(args + len, " \t");
  *rest = where;
  rest->off += (uint32_t)skip, rest->len -= (uint32_t)skip;
  return true;
}

static const PrimFunc *find_prim(Session *s, const char *name, Span where) {
  const PrimFunc *f = engine_prim(session_module(s), name, &s->diag, where);
  if (!f) session_render(s);
  return f;
}

RunStatus repl_cmd_sched(Session *s, const char *args, Span where) {
  const char *usage = "usage: :sched @f PRIMITIVE(ARGS)  (`:help sched` lists the primitives)";
  char name[256];
  Span step;
  if (!split_name(s, args, where, name, sizeof name, &step, usage)) return RUN_ERROR;
  if (!step.len) {
    session_error(s, where, usage, "`:sched` needs a primitive after `@%s`", name);
    return RUN_ERROR;
  }
  char *diff = NULL;
  Module *out =
      engine_sched_step(session_module(s), &s->inputs, &s->diag, name, step, s->verify, &diff);
  session_render(s);
  if (!out) return RUN_ERROR;
  fputs(diff, stdout);
  free(diff);
  const PrimFunc *f = module_prim(out, name);
  session_keep_module(s, out);
  printf("@%s: step %d of its schedule; kept (undo with :undo)\n", name, f->trace->n);
  return RUN_OK;
}

RunStatus repl_cmd_trace(Session *s, const char *args, Span where) {
  char name[256];
  Span rest;
  if (!split_name(s, args, where, name, sizeof name, &rest, "usage: :trace @f")) return RUN_ERROR;
  const PrimFunc *f = find_prim(s, name, where);
  if (!f) return RUN_ERROR;
  char *t = engine_sched_text(f);
  if (t)
    fputs(t, stdout);
  else
    printf("@%s has no schedule (`:sched @%s PRIMITIVE` starts one)\n", name, name);
  free(t);
  return RUN_OK;
}

/* Step i of f's schedule: its text and the diff it made. */
static bool show_step(Session *s, const PrimFunc *f, int i, char **before) {
  char *after = engine_sched_prefix_text(f, i + 1, &s->diag);
  session_render(s);
  if (!after) return false;
  char *step = engine_sched_step_text(f, i), key[300];
  snprintf(key, sizeof key, "@%s", f->name);
  char *diff = engine_text_diff(key, *before, after);
  printf("[%d/%d] %s\n%s", i + 1, engine_sched_nsteps(f), step, diff);
  free(step), free(diff), free(*before);
  *before = after;
  return true;
}

bool repl_sched_replay(Session *s, const char *name, Span where) {
  const PrimFunc *f = find_prim(s, name, where);
  if (!f) return false;
  int n = engine_sched_nsteps(f);
  if (!n) {
    printf("@%s has no schedule to step through\n", name);
    return true;
  }
  char *before = engine_sched_prefix_text(f, 0, &s->diag); /* as written, one loop per variable */
  if (!before) return session_render(s), false;
  bool to_end = false, ok = true;
  for (int i = 0; i < n && ok; i++) {
    ok = show_step(s, f, i, &before);
    if (!ok || to_end || i + 1 == n) continue;
    fputs("[Enter] next  [c] continue  [q] quit\n", stdout);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin) || line[0] == 'c') to_end = true;
    if (line[0] == 'q') break;
  }
  free(before);
  return ok;
}

void repl_sched_help(void) {
  char *t = engine_sched_help();
  printf(
      "The primitives (TVM's tvm.tir.Schedule; a LOOP is `%%name` of a loop or of a `let`,\n"
      "a BLOCK a `let` name or a nested get_block(\"NAME\")):\n%s",
      t);
  free(t);
}

bool repl_print_prim(Session *s, const char *name, bool unscheduled, Span where) {
  const PrimFunc *f = find_prim(s, name, where);
  if (!f) return false;
  char *t = engine_prim_text(f, unscheduled);
  if (f->trace && f->unscheduled && !unscheduled)
    printf(
        "// @%s as scheduled (%d steps): :trace @%s shows them, :print --unscheduled @%s the "
        "function as written\n",
        name, f->trace->n, name, name);
  if (f->lowered && !unscheduled)
    printf("// it runs with its buffers compacted to what one iteration uses: :dump tir @%s\n",
           name);
  fputs(t, stdout);
  free(t);
  return true;
}
