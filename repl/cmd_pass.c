/* cmd_pass.c — the pass commands of the REPL: :passes, :pass, :step, :undo.
 *
 * :pass runs a pipeline (passes/pass.h) on the session module, prints the
 * diff and keeps the result; the module before it goes on an undo stack
 * (its tables stay alive until it falls off the stack or :reset).  :step
 * runs the same pipeline with a hook that shows each rewrite and waits for
 * Enter (next), `c` (run to the end) or `q` (stop; nothing is applied).
 *
 * Both have a scope (PassScope): `@f` names one function, else the user's
 * definitions without the prelude's (unless `:set show-prelude on`).
 * Function-local passes rewrite only the scope; whole-module passes rewrite
 * what they must, but only the scope's rewrites reach the hook (so :step
 * never waits on a hidden rewrite) and only its definitions are diffed;
 * the other changed definitions are named after the diff. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "engine/draw.h"
#include "engine/inspect.h"
#include "ir/util.h"
#include "repl/repl.h"

/* The jit's pipeline, from the engine's table: what `:pass jit` runs;
 * a run of steps with the same condition is followed by it. */
static void print_jit_pipeline(void) {
  fputs("the jit runs:", stdout);
  const char *when, *next;
  for (int i = 0; engine_jit_step(i, &when); i++) {
    printf("%s %s", i ? "," : "", engine_jit_step(i, NULL));
    bool last = !engine_jit_step(i + 1, &next) || strcmp(next, when) != 0;
    if (last && strcmp(when, "always") != 0) printf(" (%s)", when);
  }
  puts(
      "\n  FuseOps with the jit's options (ops without a compute rule and scalar arithmetic"
      "\n  stay outside groups), the same as `:pass FuseOps`; LowerTIR turns each group into"
      "\n  call_tir of the prim function the jit compiles.  `:pass jit [@f]` applies it,"
      "\n  `:step jit` steps through it.");
}

RunStatus repl_cmd_passes(Session *s, const char *args, Span where) {
  (void)s, (void)args, (void)where;
  int w = 0; /* the names' column: as wide as the longest */
  for (int i = 0; i < engine_pass_count(); i++)
    if ((int)strlen(engine_pass_at(i)->name) > w) w = (int)strlen(engine_pass_at(i)->name);
  for (int i = 0; i < engine_pass_count(); i++) {
    const PassDef *p = engine_pass_at(i);
    printf("  %-*s %s\n", w, p->name, p->doc);
  }
  print_jit_pipeline();
  return RUN_OK;
}

static void list_passes(bool local) {
  printf("%s:", local ? "Function-local" : "Whole-module");
  for (int i = 0, n = 0; i < engine_pass_count(); i++)
    if (engine_pass_at(i)->local == local) printf("%s %s", n++ ? "," : "", engine_pass_at(i)->name);
  putchar('\n');
}

void repl_pass_help(void) {
  list_passes(true);
  list_passes(false);
}

/* Frees an undo step's module unless the session still uses it. */
static void undo_drop(Session *s, UndoStep *u) {
  if (u->m != engine_base(session_engine(s)) && u->m != session_module(s)) module_free(u->m);
  free(u->what);
}

void repl_undo_push(Session *s, Module *m, const char *what) {
  if (s->nundo == REPL_UNDO_DEPTH) {
    undo_drop(s, &s->undo[0]);
    memmove(s->undo, s->undo + 1, sizeof(UndoStep) * (REPL_UNDO_DEPTH - 1));
    s->nundo--;
  }
  char *label = strdup(what);
  if (!label) rly_oom();
  s->undo[s->nundo++] = (UndoStep){m, label};
}

void repl_undo_clear(Session *s) {
  for (int i = 0; i < s->nundo; i++) undo_drop(s, &s->undo[i]);
  s->nundo = 0;
}

/* What :step shows for one rewrite, and its Enter / c / q prompt. */
typedef struct Stepper {
  Session *s;
  int n, total; /* total: the rewrites of a first, counting run (0: unknown) */
  int drawn;    /* the rewrites drawn (:set step-dot), numbering the files */
  bool show;    /* :step (else :pass, which only counts) */
  bool run_to_end;
  bool pass_names; /* several passes (or jit): each rewrite names its pass */
} Stepper;

/* :set step-dot DIR: the rewrite's before and after as DIR/NNN-before.svg
 * and DIR/NNN-after.svg (DIR made when missing; a rewrite given as text
 * only is not drawn). */
static void draw_step(Session *s, int *drawn, const PassRewrite *rw) {
  if (!s->step_dot[0] || !rw->before || !rw->after) return;
  int n = ++*drawn;
  mkdir(s->step_dot, 0777); /* an existing one stays; a failure shows when writing */
  const Expr *sides[2] = {rw->before, rw->after};
  const char *names[2] = {"before", "after"};
  char path[1200], title[160], err[256];
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%03d-%s.svg", s->step_dot, n, names[i]);
    snprintf(title, sizeof title, "[%d] %s %s: %s", n, rw->pass, rw->rule, names[i]);
    DrawInfo info;
    if (!engine_draw_expr(session_engine(s), title, (Expr *)sides[i], path, &info, err,
                          sizeof err)) {
      fprintf(stderr, "error: %s\n", err);
      return;
    }
  }
  printf("drew %s/%03d-before.svg and %03d-after.svg\n", s->step_dot, n, n);
}

static bool step_hook(void *user, const PassRewrite *rw) {
  Stepper *st = user;
  if (!st->show) return ++st->n, true;
  char *text = engine_rewrite_format(rw, &st->s->diag, 12);
  if (st->total >= ++st->n)
    printf("[%d/%d] ", st->n, st->total);
  else
    printf("[%d] ", st->n);
  printf("%s%s%s", st->pass_names ? rw->pass : "", st->pass_names ? " " : "", text);
  free(text);
  draw_step(st->s, &st->drawn, rw);
  if (st->run_to_end) return true;
  fputs("[Enter] next  [c] continue  [q] quit\n", stdout);
  fflush(stdout);
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return true; /* end of input: run to the end */
  if (line[0] == 'q') return false;
  if (line[0] == 'c') st->run_to_end = true;
  return true;
}

/* ── the scope: `@f`, or the user's definitions without the prelude ── */

typedef struct Scope {
  const Session *s;
  const char *only; /* "f" of `@f`, or NULL */
} Scope;

/* With `@f`, a definition the pass added (Gradient's @f_grad) is about @f
 * too: it is shown and stepped through. */
static bool scope_has(void *user, const Def *d) {
  const Scope *sc = user;
  if (sc->only)
    return (d->kind == DEF_FUNC && strcmp(d->u.func->name, sc->only) == 0) ||
           !module_lookup(session_module(sc->s), def_name(d));
  return !session_is_prelude(sc->s, d);
}

/* The function names of the module (NULL-terminated, malloc'd), for "did
 * you mean": the user's first, so they win ties with the prelude's. */
static const char **function_names(const Session *s) {
  const Module *m = session_module(s);
  const char **v = calloc((size_t)m->ndefs + 1, sizeof *v);
  if (!v) rly_oom();
  int n = 0;
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < m->ndefs; i++) {
      Scope user = {s, NULL};
      if (m->defs[i].kind == DEF_FUNC && scope_has(&user, &m->defs[i]) == (round == 0))
        v[n++] = m->defs[i].u.func->name;
    }
  return v;
}

static bool check_function(Session *s, const char *name, Span sp) {
  if (module_func(session_module(s), name)) return true;
  const char **names = function_names(s);
  const char *near = repl_nearest(names, name);
  char hint[160] = "`:browse` lists your functions";
  if (near) snprintf(hint, sizeof hint, "did you mean `@%s`?", near);
  if (module_lookup(session_module(s), name))
    session_error(s, sp, NULL, "`@%s` is not a function", name);
  else
    session_error(s, sp, hint, "no function `@%s`", name);
  free(names);
  return false;
}

/* Splits the arguments into pass names (written into names, the `@f` word
 * blanked) and the function of `@f` (*only, malloc'd, or NULL). */
static bool split_args(Session *s, char *names, Span where, bool step, char **only) {
  *only = NULL;
  bool ok = true;
  for (char *p = names; ok && (p = strchr(p, '@'));) {
    size_t n = strcspn(p, " \t,");
    Span sp = span_make(where.off + (uint32_t)(p - names), n);
    if (*only || n == 1) {
      const char *usage =
          step ? "usage: :step NAME [NAME ...] [@f]" : "usage: :pass NAME [NAME ...] [@f]";
      session_error(s, sp, usage,
                    *only ? "only one @function at a time" : "expected a function name after `@`");
      ok = false;
    } else {
      *only = strndup(p + 1, n - 1);
      if (!*only) rly_oom();
      ok = check_function(s, *only, sp);
      memset(p, ' ', n);
    }
  }
  if (ok) return true;
  free(*only);
  *only = NULL;
  return false;
}

/* After the diff: the definitions that changed outside the scope. */
static void report_outside(const PassResult *r, const char *only) {
  if (!r->outside) return;
  if (only)
    printf("also changed outside @%s: %s\n", only, r->outside);
  else
    printf("also changed in the prelude: %s (:set show-prelude on shows it)\n", r->outside);
}

static void keep_result(Session *s, PassResult *r, const char *names, const char *only, int n) {
  if (strcmp(r->diff, "no change\n") != 0 || !r->outside) fputs(r->diff, stdout);
  report_outside(r, only);
  if (r->module == session_module(s)) return;
  if (!r->changed) { /* an unchanged copy (CheckKeyLinearity's) is not kept */
    module_free(r->module);
    r->module = NULL;
    return;
  }
  engine_derived_add(session_engine(s), session_module(s), r->module, names, only);
  session_keep_module(s, r->module);
  printf("%s%s%s: %d rewrite%s; kept (undo with :undo)\n", names, only ? " @" : "",
         only ? only : "", n, n == 1 ? "" : "s");
}

static bool is_jit(const char *names) { return strcasecmp(names, "jit") == 0; }

/* `:pass jit`: the engine's pipeline as a compile runs it, its result
 * checked (and verified under :set verify on) as a pipeline's is. */
static bool run_jit(Session *s, const PassOptions *opt, PassResult *r, bool quiet) {
  memset(r, 0, sizeof *r);
  JitWatch w = {opt->hook, opt->scope, opt->after, NULL, false};
  Module *in = session_module(s), *out = engine_jit_pipeline(session_engine(s), in, &s->inputs, &w);
  if (w.failed && !quiet)
    printf("note: the jit's %s failed on this module: it compiles the rest as written\n", w.failed);
  r->stopped = w.stopped;
  if (!out) return false;
  bool ok =
      opt->verify ? engine_verify_module(out, &s->diag) : engine_recheck_module(out, &s->diag);
  if (!ok) {
    diag_note(&s->diag, (Span){0}, "the module produced by the jit's pipeline does not check");
    module_free(out);
    return false;
  }
  r->module = out;
  r->diff = engine_pass_diff(in, out, opt->scope, &r->outside);
  r->changed = r->outside || strcmp(r->diff, "no change\n") != 0;
  return true;
}

static bool run_once(Session *s, const char *names, const PassOptions *opt, PassResult *r,
                     bool quiet) {
  if (is_jit(names)) return run_jit(s, opt, r, quiet);
  return engine_pass_pipeline(names, session_module(s), &s->inputs, &s->diag, opt, r);
}

/* :step's total: the rewrites of a run that only counts (its result
 * dropped); -1 when that run failed (its errors are in the diag). */
static int count_rewrites(Session *s, const char *names, PassOptions opt) {
  Stepper st = {s, 0, 0, 0, false, false, false};
  PassHook hook = {step_hook, &st};
  opt.hook = &hook, opt.after = NULL;
  PassResult r = {0};
  bool ok = run_once(s, names, &opt, &r, true);
  if (r.module && r.module != session_module(s)) module_free(r.module);
  engine_pass_result_free(&r);
  return ok ? st.n : -1;
}

/* print-after-all for :pass and :step: the definitions in scope after each
 * pass, on stderr (as a compile prints them). */
static void print_after(void *user, const char *pass, const Module *m) {
  engine_pass_print_after(stderr, pass, m, user);
}

static RunStatus run_pipeline(Session *s, const char *names, const char *only, Span where,
                              bool step) {
  Stepper st = {s, 0, 0, 0, step, false, is_jit(names) || strpbrk(names, ", \t")};
  PassHook hook = {step_hook, &st};
  Scope sc = {s, only};
  PassScope scope = {scope_has, &sc, only};
  PassOptions opt = engine_pass_options();
  opt.verify = s->verify;
  opt.where = where;
  opt.scope = only || !s->show_prelude ? &scope : NULL;
  PassAfter after = {print_after, (void *)opt.scope};
  if (step && (st.total = count_rewrites(s, names, opt)) < 0) {
    session_render(s);
    return RUN_ERROR;
  }
  opt.hook = &hook;
  if (engine_options(session_engine(s))->print_after_all) opt.after = &after;
  PassResult r = {0};
  bool ok = run_once(s, names, &opt, &r, false);
  bool cut = s->diag.stopped; /* Ctrl-C, told as an error */
  session_render(s);
  if (!ok || r.stopped || !r.module) {
    bool stopped = r.stopped;
    if (stopped) puts("stopped; the module is unchanged");
    engine_pass_result_free(&r);
    return stopped && !cut ? RUN_OK : RUN_ERROR;
  }
  keep_result(s, &r, names, only, st.n);
  engine_pass_result_free(&r);
  return RUN_OK;
}

/* `NAME [NAME ...] [@f]`.  The pass names keep their columns (the @f word
 * is blanked) so the pass manager's errors point into the line; they are
 * trimmed for the summary line. */
static RunStatus pass_or_step(Session *s, const char *args, Span where, bool step) {
  if (!*args) {
    const char *cmd = step ? "step" : "pass";
    session_error(s, where, "`:passes` lists them", "`:%s` needs pass names", cmd);
    return RUN_ERROR;
  }
  char *names = strdup(args), *only;
  if (!names) rly_oom();
  RunStatus st = RUN_ERROR;
  if (split_args(s, names, where, step, &only)) {
    size_t b = strspn(names, " \t,"), e = strlen(names);
    while (e > b && strchr(" \t,", names[e - 1])) names[--e] = 0;
    st = run_pipeline(s, names + b, only, where, step);
  }
  free(names);
  free(only);
  return st;
}

RunStatus repl_cmd_pass(Session *s, const char *args, Span where) {
  return pass_or_step(s, args, where, false);
}

RunStatus repl_cmd_step(Session *s, const char *args, Span where) {
  const PrimFunc *p =
      args[0] == '@' && !strpbrk(args, " \t,") ? module_prim(session_module(s), args + 1) : NULL;
  if (p) return repl_sched_replay(s, args + 1, where) ? RUN_OK : RUN_ERROR;
  return pass_or_step(s, args, where, true);
}

/* Whether two versions of a definition are the same: the same text, and
 * for functions the same body (a pass keeps the text's span). */
static bool same_def(const Def *a, const Def *b) {
  if (a->kind != b->kind || def_span(a).off != def_span(b).off) return false;
  if (a->kind == DEF_FUNC)
    return a->u.func == b->u.func || func_equal(a->u.func->fn, b->u.func->fn);
  return true;
}

enum { UNDO_NAMES = 8 }; /* names listed per kind; more are counted */

/* Appends "@f" to a list of n names so far (", " between; past
 * UNDO_NAMES only counted). */
static void list_name(StrBuf *b, int *n, const char *name) {
  if (*n < UNDO_NAMES) sb_printf(b, "%s@%s", *n ? ", " : " ", name);
  ++*n;
}

static void end_list(StrBuf *b, int n) {
  if (n > UNDO_NAMES) sb_printf(b, " and %d more", n - UNDO_NAMES);
}

/* The definitions of `from` that `to` lacks (missing) or holds in another
 * version (changed), as " @f, @g". */
static void undo_names(const Module *from, const Module *to, StrBuf *missing, StrBuf *changed) {
  int nm = 0, nc = 0;
  for (int i = 0; i < from->ndefs; i++) {
    const Def *d = &from->defs[i];
    if (d->kind == DEF_ADT) continue;
    const Def *t = module_lookup(to, def_name(d));
    if (!t)
      list_name(missing, &nm, def_name(d));
    else if (!same_def(d, t))
      list_name(changed, &nc, def_name(d));
  }
  end_list(missing, nm), end_list(changed, nc);
}

/* "undid :pass Gradient @f: removed @f_grad; restored the earlier @g". */
static void report_undo(Session *s, const UndoStep *u, const Module *undone) {
  StrBuf removed = {0}, restored = {0}, back = {0}, none = {0};
  undo_names(undone, u->m, &removed, &restored);
  undo_names(u->m, undone, &back, &none);
  printf("undid %s", u->what);
  const char *sep = ": ";
  if (removed.len) printf("%sremoved%s", sep, removed.data), sep = "; ";
  if (restored.len) printf("%srestored the earlier%s", sep, restored.data), sep = "; ";
  if (back.len) printf("%sbrought back%s", sep, back.data);
  putchar('\n');
  sb_free(&removed), sb_free(&restored), sb_free(&back), sb_free(&none);
}

RunStatus repl_cmd_undo(Session *s, const char *args, Span where) {
  (void)args;
  if (s->nloads) {
    session_error(s, where, NULL, "`:undo` cannot be used in a file being loaded");
    return RUN_ERROR;
  }
  if (!s->nundo) {
    session_error(s, where, NULL, "nothing to undo since the session started or the last :reset");
    return RUN_ERROR;
  }
  UndoStep u = s->undo[--s->nundo];
  Module *undone = engine_replace_module(session_engine(s), u.m);
  report_undo(s, &u, undone ? undone : session_module(s));
  if (undone) module_free(undone);
  free(u.what);
  return RUN_OK;
}
