/* session.c — running inputs in a session: the REPL's side of parse,
 * check, commit, evaluate.  The program itself (module, session variables,
 * transactions, the prelude) is the engine's (engine/engine.h); this file
 * splits inputs, prints, and manages the inputs' memory.
 *
 * One input (a REPL entry, a script file, an -e argument) is split at its
 * `:` command lines (engine_scan) into parts; each part of rly text is
 * parsed and checked into a copy of the current module (engine_input_check:
 * on any error, diagnostics and nothing kept), then the copy becomes
 * current (engine_input_commit) and its definitions are reported and its
 * expressions and lets evaluated in order (the first run-time error stops
 * the input).  `:load` makes a whole file one engine transaction.
 *
 * A part is given its own registered source: the input's text with
 * everything outside the part blanked (newlines kept), so line:col of a
 * diagnostic is the line:col in the input.  See repl.h for the memory
 * invariants. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine/inspect.h"
#include "ir/sched.h"
#include "ir/walk.h"
#include "ops/ops.h"
#include "repl/repl.h"
#include "repl/settings.h"

volatile sig_atomic_t repl_in_eval, repl_interrupted;

/* ───────────────────────── the program ───────────────────────── */

Engine *session_engine(const Session *s) { return repl_engine(s->ev); }
Module *session_module(const Session *s) { return engine_module(session_engine(s)); }
bool session_is_prelude(const Session *s, const Def *d) {
  return engine_is_prelude_def(session_engine(s), d);
}

/* A module the session replaced: an undo step labelled `what`, except
 * inside a :load, whose whole file is one step: there it is freed unless
 * it is the module from before a :load in progress. */
static void keep_old(Session *s, Module *old, const char *what) {
  if (!old) return;
  if (!s->nloads) {
    repl_undo_push(s, old, what);
    return;
  }
  for (int i = 0; i < s->nloads; i++)
    if (s->load_before[i] == old) return;
  module_free(old);
}

void session_keep_module(Session *s, Module *m) {
  keep_old(s, engine_replace_module(session_engine(s), m), s->doing ? s->doing : "a change");
}

/* ───────────────────────── diagnostics ───────────────────────── */

void session_render(Session *s) {
  fflush(stdout);
  diag_render(&s->diag, stderr, 0, s->opt.color);
  diag_clear(&s->diag);
  fflush(stderr);
}

void session_error(Session *s, Span where, const char *hint, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  diag_error(&s->diag, where, "%s", b.data ? b.data : "");
  if (hint) diag_hint(&s->diag, "%s", hint);
  sb_free(&b);
  session_render(s);
}

/* ───────────────────────── one part: parse, check, commit ───────────────────────── */

typedef struct Input {
  ArenaMark mark; /* s->inputs before the input */
  uint64_t gen;   /* s->kept_gen at the start */
  EngineInput in;
} Input;

/* ── releasing an input that only evaluated expressions ──
 *
 * An input's IR may be released after it ran when nothing that outlives it
 * can point into it: it defines nothing and binds no variable, no input
 * nested in it kept memory, its values cannot borrow its memory (no `fn`,
 * whose closures point at their code; no constant except as a direct
 * argument of an op that is not a view, since an op's result is a fresh
 * tensor while a constant itself is borrowed from the IR), and %_'s type
 * can be replaced by a shared copy.  The interpreter keeps nothing keyed by
 * top-level IR (its top-level procs are dropped after each evaluation and
 * constants are cached only inside functions), and the jit evaluator lowers
 * into its own memory.  So a session evaluating expressions does not grow
 * with the number of inputs (beyond their source text, kept for
 * diagnostics). */

static bool attrs_safe(const Attrs *a) {
  for (int i = 0; a && i < a->n; i++)
    if (a->vals[i]->kind == AV_EXPR) return false;
  return true;
}

static bool expr_safe(const Expr *e);

/* An op argument: a constant is copied by the op unless the op is a view. */
static bool op_arg_safe(const Expr *call, const Expr *arg) {
  if (arg->kind != EX_CONST) return expr_safe(arg);
  int op = call->u.call.fn->u.op.index; /* call_tir and the key ops have no kernel */
  return engine_op_has_kernel(op) && !ops_has_flag(op, OP_VIEW);
}

static bool call_safe(const Expr *e) {
  bool op = e->u.call.fn->kind == EX_OP;
  if (!op && !expr_safe(e->u.call.fn)) return false;
  for (int i = 0; i < e->u.call.nargs; i++)
    if (op ? !op_arg_safe(e, e->u.call.args[i]) : !expr_safe(e->u.call.args[i])) return false;
  return attrs_safe(e->u.call.attrs);
}

/* Every child safe.  Loops on the last child (a let chain's body), so only
 * nesting recurses. */
static bool expr_safe(const Expr *e) {
  for (;;) {
    if (e->kind == EX_CONST || e->kind == EX_FN) return false;
    if (e->kind == EX_CALL) return call_safe(e);
    int n = expr_nchildren(e);
    if (!n) return true;
    for (int i = 0; i < n - 1; i++)
      if (!expr_safe(expr_child(e, i))) return false;
    e = expr_child(e, n - 1);
  }
}

/* A copy of t that outlives every input: tensor types of known or `?`
 * dimensions and `()`, one shared copy per printed form; NULL for others. */
/* Printed type → copy in the owner's `fixed` arena (one session at a time). */
static StrMap shared_types;
static const Session *shared_owner;

static void shared_types_drop(const Session *s) {
  if (shared_owner == s) strmap_free(&shared_types), shared_owner = NULL;
}

static Type *shared_type(Session *s, const Type *t) {
  StrMap *seen = &shared_types;
  if (shared_owner != s) strmap_free(seen), shared_owner = s;
  if (!t || !(t->kind == TY_TENSOR || (t->kind == TY_TUPLE && t->u.tuple.n == 0))) return NULL;
  for (int i = 0; t->kind == TY_TENSOR && i < t->u.tensor.ndim; i++)
    if (t->u.tensor.dims[i].kind != DIM_CONST && t->u.tensor.dims[i].kind != DIM_ANY) return NULL;
  char *key = print_type(t);
  Type *c = strmap_get(seen, key);
  if (!c) {
    c = t->kind == TY_TUPLE ? type_unit(&s->fixed)
                            : type_tensor(&s->fixed, t->u.tensor.dtype, t->u.tensor.ndim,
                                          t->u.tensor.dims, t->span);
    strmap_put(seen, arena_strdup(&s->fixed, key), c);
  }
  free(key);
  return c;
}

/* Whether the input that just ran can be released (see above); on yes,
 * %_'s type no longer points into it. */
static bool input_releasable(Session *s, const Input *in) {
  if (in->in.ndefs || s->kept_gen != in->gen) return false;
  for (int i = 0; i < in->in.r.nitems; i++) {
    const ScriptItem *it = &in->in.r.items[i];
    if (it->kind != ITEM_EXPR || (it->expr && !expr_safe(it->expr))) return false;
  }
  Type *t = s->last->annot ? shared_type(s, s->last->annot) : NULL;
  if (s->last->annot && !t) return false;
  s->last->annot = t;
  return true;
}

static Input input_begin(Session *s) {
  Input in = {.mark = arena_mark(&s->inputs), .gen = s->kept_gen};
  return in;
}

/* A rejected input's memory is released (unless an input nested in it, a
 * :load, kept memory after our mark); one that ran is kept, since values
 * may share its memory (tensor constants are borrowed, closures point at
 * their code). */
static void input_end(Session *s, Input *in, bool committed) {
  if (committed && input_releasable(s, in)) committed = false;
  if (committed || s->kept_gen != in->gen) {
    s->kept_gen++;
    return;
  }
  arena_release(&s->inputs, in->mark);
}

/* ───────────────────────── one part: run ───────────────────────── */

/* The columns of stdout: the terminal's, or 80. */
static size_t output_width(void) {
  struct winsize ws;
  if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 80;
}

char *session_def_line(const char *verb, const char *name, const Type *ty) {
  size_t head = strlen(verb) + strlen(name) + 4, w = output_width();
  char *t = print_type_short(ty, w > head + 20 ? w - head : 20);
  char *line = malloc(head + strlen(t) + 1);
  if (!line) rly_oom();
  sprintf(line, "%s@%s : %s", verb, name, t);
  free(t);
  return line;
}

/* "defined @f : T" (or "redefined") for a committed definition; during
 * :load the name is collected instead, for one summary line. */
static void report_def(Session *s, const Input *in, const ScriptItem *it) {
  const char *verb = it->replaced ? "redefined" : "defined";
  s->ran.defs++;
  if (it->def_kind == DEF_ADT) {
    AdtDef *t = engine_item_adt(in->in.m, it);
    if (!t) return;
    if (s->loading)
      vec_push(&s->loaded, arena_printf(&s->fixed, "t%s", t->name));
    else
      printf("%s type %s\n", verb, t->name);
    return;
  }
  if (s->loading) {
    char k = it->schedule                 ? 's'
             : it->def_kind == DEF_FUNC   ? 'f'
             : it->def_kind == DEF_GLOBAL ? 'g'
                                          : 'p';
    vec_push(&s->loaded, arena_printf(&s->fixed, "%c%s", k, it->def_name));
    return;
  }
  const PrimFunc *p = it->schedule ? module_prim(session_module(s), it->def_name) : NULL;
  if (p && p->trace) {
    printf("scheduled @%s: %d step%s (:trace @%s shows them)\n", it->def_name, p->trace->n,
           p->trace->n == 1 ? "" : "s", it->def_name);
    return;
  }
  FuncDef *f = module_func(session_module(s), it->def_name);
  StateGlobal *g = module_state_global(session_module(s), it->def_name);
  const Type *ty = f && f->ty ? f->ty : g ? g->type : NULL;
  if (ty) {
    char *line = session_def_line(it->replaced ? "redefined " : "defined ", it->def_name, ty);
    puts(line);
    free(line);
  } else {
    printf("%s @%s\n", verb, it->def_name);
  }
}

/* The one place where evaluation happens (through the Evaluator).  After
 * Ctrl-C the terminal has echoed `^C`: the diagnostic starts a new line. */
static bool evaluate(Session *s, Expr *e, Var *bind, char **text) {
  fflush(stdout);
  sig_atomic_t was = repl_in_eval;
  repl_in_eval = 1;
  bool ok = repl_eval(s->ev, session_module(s), e, bind, text);
  repl_in_eval = was;
  if (!ok && repl_interrupted) putchar('\n');
  return ok;
}

static void print_value(Session *s, const char *text, const Type *t) {
  char *ty = t ? print_type(t) : NULL;
  if (!text)
    printf("- : %s\n", ty ? ty : "?");
  else if (s->show_types && ty)
    printf("%s : %s\n", text, ty);
  else
    printf("%s\n", text);
  free(ty);
}

/* rly --profile: a profile around each evaluation (NULL otherwise), its
 * table printed after the value. */
static Profile *profile_begin(Session *s) {
  if (!s->profile) return NULL;
  repl_eval_collect(s->ev); /* earlier values' garbage is not this call's */
  return profile_start();
}

static bool run_expr(Session *s, ScriptItem *it) {
  char *text = NULL;
  Profile *p = profile_begin(s);
  bool ok = evaluate(s, it->expr, s->last, &text);
  profile_stop(p);
  if (ok) {
    s->ran.values++;
    s->last->annot = it->expr->ty;
    print_value(s, text, it->expr->ty);
    repl_print_profile(s, p, it->span);
  } else {
    profile_free(p);
  }
  free(text);
  return ok;
}

static bool run_let(Session *s, ScriptItem *it) {
  char *text = NULL;
  Profile *p = profile_begin(s);
  bool ok = evaluate(s, it->expr, it->var, &text);
  profile_stop(p);
  if (!ok) {
    profile_free(p);
    return false;
  }
  engine_var_set(session_engine(s), it->var);
  s->ran.lets++;
  if (s->show_types) {
    char *ty = print_type(it->var->annot);
    printf("%%%s : %s\n", it->var->name, ty);
    free(ty);
  }
  repl_print_profile(s, p, it->span);
  free(text);
  return true;
}

/* The first error diagnostic from `first` on that lies in [lo, hi) (global
 * offsets); its offset, or 0. */
static uint32_t first_error_in(const DiagCtx *d, size_t first, uint32_t lo, uint32_t hi) {
  uint32_t at = 0;
  for (size_t i = first; i < d->n; i++) {
    uint32_t off = d->items[i].span.off;
    if (d->items[i].level == DIAG_ERROR && off >= lo && off < hi && (!at || off < at)) at = off;
  }
  return at;
}

/* Renders the diagnostics of an error that stops the script, remembering
 * where it stopped (for the report of what was kept): at the item that
 * failed to run, or else where the first error points. */
static void render_stop(Session *s, const ScriptItem *it) {
  uint32_t at = it ? it->span.off : first_error_in(&s->diag, 0, 1, UINT32_MAX);
  if (!s->ran.stopped.off && at) s->ran.stopped = span_make(at, 1);
  session_render(s);
}

/* The derived definitions the input rederived (engine/derived.c). */
static void report_rederived(const Input *in) {
  for (int i = 0; i < in->in.nrederived; i++) printf("rederived %s\n", in->in.rederived[i]);
  for (int i = 0; i < in->in.ntuned; i++) printf("scheduled %s\n", in->in.tuned[i]);
}

static RunStatus run_items(Session *s, const Input *in) {
  bool told = false; /* the rederived definitions, after the definitions */
  for (int i = 0; i < in->in.r.nitems; i++) {
    ScriptItem *it = &in->in.r.items[i];
    bool ok = true;
    RunStatus st = RUN_OK;
    if (it->kind != ITEM_DEF && !told) report_rederived(in), told = true;
    if (it->kind == ITEM_DEF)
      report_def(s, in, it);
    else if (it->kind == ITEM_EXPR && it->expr)
      ok = run_expr(s, it);
    else if (it->kind == ITEM_LET && it->expr)
      ok = run_let(s, it);
    else if (it->kind == ITEM_COMMAND)
      s->ran.commands += (st = cmd_run(s, it->command, it->span)) == RUN_OK;
    if (!ok) render_stop(s, it);
    if (!ok || st != RUN_OK) return ok ? st : RUN_ERROR;
  }
  if (!told) report_rederived(in);
  session_render(s); /* warnings of the evaluation, if any */
  return RUN_OK;
}

/* "the definition of @f" / "the definitions of @f, @g" (at most three
 * named), the undo step of a committed input. */
static char *defs_label(const Input *in) {
  StrBuf b = {0};
  int n = 0;
  for (int i = 0; i < in->in.r.nitems; i++) {
    const ScriptItem *it = &in->in.r.items[i];
    if (it->kind != ITEM_DEF) continue;
    if (n < 3) {
      AdtDef *t = it->def_kind == DEF_ADT ? engine_item_adt(in->in.m, it) : NULL;
      sb_printf(&b, "%s%s%s", n ? ", " : "", t ? "type " : "@", t ? t->name : it->def_name);
    } else if (n == 3) {
      sb_puts(&b, ", ...");
    }
    n++;
  }
  StrBuf label = {0};
  sb_printf(&label, "%s %s", n == 1 ? "the definition of" : "the definitions of",
            b.data ? b.data : "");
  sb_free(&b);
  return sb_take(&label);
}

/* Where a part that failed to check can be cut so that the items before
 * its first error still run: the start of the first item that reaches the
 * error (or the error itself, between items), as a file offset; 0 when no
 * whole item precedes it (or the error lies elsewhere, in an old
 * definition a redefinition broke). */
static uint32_t cut_before_error(Session *s, const Input *in, size_t first, uint32_t file,
                                 uint32_t from, uint32_t to) {
  const SourceFile *f = diag_source(&s->diag, file);
  uint32_t lo = f->base + from, hi = f->base + (to ? to : (uint32_t)f->len);
  uint32_t err = first_error_in(&s->diag, first, lo, hi);
  if (!err) return 0;
  uint32_t cut = err;
  int before = 0;
  for (int i = 0; i < in->in.r.nitems; i++) {
    Span sp = in->in.r.items[i].span;
    if (sp.off + sp.len <= err && sp.off >= lo)
      before++;
    else if (sp.off < cut)
      cut = sp.off;
  }
  return before && cut > lo ? cut - f->base : 0;
}

static RunStatus run_part(Session *s, uint32_t file, uint32_t from, uint32_t to,
                          const EngineScan *sc, bool may_continue, bool may_cut);

/* A part that failed: when whole items precede its first error, they run
 * on their own (what precedes an error is kept, as in a script that ran
 * item by item), then the rest, which fails again and says why.  If the
 * items before the error do not check on their own (they use definitions
 * given after it), the part is rejected whole as it was. */
static RunStatus run_before_error(Session *s, uint32_t file, uint32_t from, uint32_t to,
                                  uint32_t cut, const EngineScan *sc) {
  size_t mark = s->diag.n;
  Input pre = input_begin(s);
  if (!engine_input_check(session_engine(s), &pre.in, &s->inputs, file, from, cut, sc, s->last)) {
    input_end(s, &pre, false);
    diag_truncate(&s->diag, mark);
    return run_part(s, file, from, to, sc, false, false);
  }
  session_render(s);
  char *label = defs_label(&pre);
  keep_old(s, engine_input_commit(session_engine(s), &pre.in), label);
  free(label);
  RunStatus st = run_items(s, &pre);
  input_end(s, &pre, true);
  return st == RUN_OK ? run_part(s, file, cut, to, sc, false, false) : st;
}

/* One part, bytes [from, to) of file (to == 0: to its end): checked,
 * committed, run.  A parse error at the end of the input, when more may
 * follow, is RUN_INCOMPLETE with its diagnostics dropped, so the REPL asks
 * for another line.  may_cut: on an error, run what precedes it first. */
static RunStatus run_part(Session *s, uint32_t file, uint32_t from, uint32_t to,
                          const EngineScan *sc, bool may_continue, bool may_cut) {
  Input in = input_begin(s);
  size_t first = s->diag.n;
  if (!engine_input_check(session_engine(s), &in.in, &s->inputs, file, from, to, sc, s->last)) {
    bool more = may_continue && !in.in.r.ok && in.in.r.incomplete;
    uint32_t cut = more || !may_cut ? 0 : cut_before_error(s, &in, first, file, from, to);
    input_end(s, &in, false);
    if (cut) {
      diag_truncate(&s->diag, first);
      return run_before_error(s, file, from, to, cut, sc);
    }
    if (more)
      diag_clear(&s->diag);
    else
      render_stop(s, NULL);
    return more ? RUN_INCOMPLETE : RUN_ERROR;
  }
  session_render(s); /* warnings */
  char *label = defs_label(&in);
  keep_old(s, engine_input_commit(session_engine(s), &in.in), label);
  free(label);
  RunStatus st = run_items(s, &in);
  input_end(s, &in, true);
  return st;
}

/* ───────────────────────── inputs ───────────────────────── */

static bool blank(const char *t, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    if (t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r') return false;
  return true;
}

/* Runs the parts of an input split at its command lines, in order; stops
 * at the first error or :quit. */
static RunStatus run_split(Session *s, uint32_t whole, const EngineScan *sc) {
  const SourceFile *f = diag_source(&s->diag, whole);
  const char *text = f->text;
  size_t len = f->len, from = 0;
  for (int i = 0; i <= sc->ncmds; i++) {
    size_t to = i < sc->ncmds ? sc->cmds[i].off : len;
    RunStatus st = RUN_OK;
    if (!blank(text, from, to))
      st = run_part(s, whole, (uint32_t)from, (uint32_t)to, sc, false, true);
    if (st == RUN_OK && i < sc->ncmds) {
      uint32_t off = sc->cmds[i].off, n = sc->cmds[i].len;
      char *line = strndup(text + off + 1, n - 1);
      if (!line) rly_oom();
      st = cmd_run(s, line, diag_span(&s->diag, whole, off, n));
      s->ran.commands += st == RUN_OK;
      if (st == RUN_ERROR && !s->ran.stopped.off)
        s->ran.stopped = diag_span(&s->diag, whole, off, 1);
      free(line);
      from = off + n;
    }
    if (st != RUN_OK) return st;
  }
  return RUN_OK;
}

/* TVMScript runs as its rly text (engine_tvmscript_translate), registered
 * under the script's name: diagnostics keep its line numbers. */
static RunStatus tvmscript_source(Session *s, uint32_t *file, bool may_continue) {
  const SourceFile *f = diag_source(&s->diag, *file);
  if (may_continue && !engine_tvmscript_complete(f->text, f->len)) return RUN_INCOMPLETE;
  size_t n = 0;
  char *text = engine_tvmscript_translate(&s->diag, *file, &n);
  if (!text) return render_stop(s, NULL), RUN_ERROR;
  *file = diag_take_source(&s->diag, f->name, text, n);
  return RUN_OK;
}

/* Runs a registered source: in parts when it has command lines. */
static RunStatus run_source(Session *s, uint32_t file, bool may_continue) {
  const SourceFile *f = diag_source(&s->diag, file);
  if (engine_tvmscript_detect(f->name, f->text, f->len)) {
    RunStatus ts = tvmscript_source(s, &file, may_continue);
    if (ts != RUN_OK) return ts;
    f = diag_source(&s->diag, file);
  }
  EngineScan sc = {.stop = s->diag.stop};
  engine_scan(f->name, f->text, f->len, &sc);
  RunStatus st =
      sc.ncmds ? run_split(s, file, &sc) : run_part(s, file, 0, 0, &sc, may_continue, true);
  engine_scan_free(&sc);
  return st;
}

RunStatus session_run(Session *s, const char *name, const char *text, size_t len,
                      bool may_continue) {
  return run_source(s, diag_add_source(&s->diag, name, text, len), may_continue);
}

/* "2 definitions, 1 let, 3 values, 1 command" for what a script ran
 * (definitions only when `defs`). */
static void ran_counts(StrBuf *b, const Ran *r, bool defs) {
  const struct {
    int n;
    const char *one, *many;
  } parts[] = {{defs ? r->defs : 0, "definition", "definitions"},
               {r->lets, "let", "lets"},
               {r->values, "value", "values"},
               {r->commands, "command", "commands"}};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (parts[i].n)
      sb_printf(b, "%s%d %s", b->len ? ", " : "", parts[i].n,
                parts[i].n == 1 ? parts[i].one : parts[i].many);
}

/* After an error stopped a script whose session goes on: where it
 * stopped and what it kept (everything before the error). */
static void report_stop(Session *s, const char *path, const Ran *r, bool defs) {
  StrBuf b = {0};
  ran_counts(&b, r, defs);
  uint32_t line = 0, col = 0;
  if (r->stopped.off) diag_line_col(&s->diag, r->stopped, &line, &col);
  fflush(stdout);
  fprintf(stderr, "%s: stopped", path);
  if (line) fprintf(stderr, " at line %u", line);
  if (b.len)
    fprintf(stderr, "; what ran before it is kept (%s)\n", b.data);
  else
    fprintf(stderr, "; nothing ran before it\n");
  sb_free(&b);
}

/* Runs a script file with its own account of what ran (added to the
 * enclosing script's afterwards). */
static RunStatus run_counted(Session *s, uint32_t file, Ran *mine) {
  Ran outer = s->ran;
  s->ran = (Ran){0};
  RunStatus st = run_source(s, file, false);
  *mine = s->ran;
  outer.defs += mine->defs, outer.lets += mine->lets, outer.values += mine->values;
  outer.commands += mine->commands;
  s->ran = outer;
  return st;
}

RunStatus session_run_file(Session *s, const char *path) {
  uint32_t file = diag_add_file(&s->diag, path);
  if (!file) {
    fflush(stdout);
    fprintf(stderr, "rly: cannot read '%s': %s\n", path, strerror(errno ? errno : EIO));
    return RUN_ERROR;
  }
  if (!session_text_file(s, file, path, (Span){0})) return RUN_ERROR;
  Ran mine;
  RunStatus st = run_counted(s, file, &mine);
  if (st == RUN_ERROR && s->goes_on) report_stop(s, path, &mine, true);
  return st;
}

/* ───────────────────────── :load, :reset, expressions in commands ───────────────────────── */

/* The :load summary, grouped by kind: "loaded 2 functions: @f @g; 1 type: T". */
static void print_loaded(const PtrVec *loaded, const char *path) {
  static const struct {
    char k;
    const char *one, *many, *sigil;
  } kinds[] = {{'f', "function", "functions", "@"},
               {'t', "type", "types", ""},
               {'g', "global", "globals", "@"},
               {'p', "prim function", "prim functions", "@"},
               {'s', "schedule", "schedules", "@"}};
  bool any = false;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    int n = 0;
    for (size_t i = 0; i < loaded->len; i++) n += ((const char *)loaded->items[i])[0] == kinds[k].k;
    if (!n) continue;
    printf("%s %d %s:", any ? ";" : "loaded", n, n == 1 ? kinds[k].one : kinds[k].many);
    for (size_t i = 0; i < loaded->len; i++) {
      const char *e = loaded->items[i];
      if (e[0] == kinds[k].k) printf(" %s%s", kinds[k].sigil, e + 1);
    }
    any = true;
  }
  if (any)
    putchar('\n');
  else
    printf("loaded %s (no definitions)\n", path);
}

/* `:load FILE`: the file runs item by item; an error stops it and keeps
 * what ran before (and says so).  The whole load is one undo step.  Loads
 * may nest (a file may :load another), each with its own list. */
RunStatus session_load(Session *s, const char *path, Span where) {
  if (s->nloads == REPL_LOAD_DEPTH) {
    session_error(s, where, NULL, ":load is nested too deeply");
    return RUN_ERROR;
  }
  uint32_t file = diag_add_file(&s->diag, path);
  if (!file)
    session_error(s, where, NULL, "cannot read '%s': %s", path, strerror(errno ? errno : EIO));
  if (!file || !session_text_file(s, file, path, where)) return RUN_ERROR;
  Module *before = session_module(s);
  s->load_before[s->nloads++] = before;
  bool was_loading = s->loading;
  PtrVec outer = s->loaded;
  s->loading = true;
  memset(&s->loaded, 0, sizeof s->loaded);
  Ran mine;
  RunStatus st = run_counted(s, file, &mine);
  s->nloads--;
  if (session_module(s) != before) {
    char what[1100];
    snprintf(what, sizeof what, ":load %s", path);
    keep_old(s, before, what);
  }
  if (st != RUN_ERROR || s->loaded.len) print_loaded(&s->loaded, path);
  if (st == RUN_ERROR) report_stop(s, path, &mine, false);
  vec_free(&s->loaded);
  s->loaded = outer, s->loading = was_loading;
  return st == RUN_QUIT ? RUN_OK : st;
}

/* %_ exists from the start (as `()`), so every input can mention it; one
 * Var for the whole session, so each new value releases the old one. */
static void bind_last(Session *s) {
  Span none = {0};
  s->last = var_new(&s->fixed, "_", type_unit(&s->fixed), none);
  Expr *unit = expr_tuple(&s->fixed, 0, NULL, none);
  char *text = NULL;
  if (engine_check_expr(session_module(s), unit, &s->diag))
    repl_eval(s->ev, session_module(s), unit, s->last, &text);
  free(text);
  diag_clear(&s->diag);
  engine_var_set(session_engine(s), s->last);
}

void session_reset(Session *s) {
  s->kept_gen++;
  repl_undo_clear(s);
  engine_reset(session_engine(s), &s->inputs);
  bind_last(s);
}

/* The expression of a command (its span in a registered source) parsed
 * and checked against a view of the current module whose allocations go
 * to a: expressions add nothing to the module, so its tables are shared. */
Expr *session_parse_expr(Session *s, Span where, Arena *a, Module *view) {
  uint32_t off, file = diag_span_file(&s->diag, where, &off);
  RLY_ASSERT(file);
  *view = *session_module(s);
  view->arena = a;
  ParseOptions po = {.from = off, .to = off + where.len};
  po.session = (Var **)engine_vars(session_engine(s), &po.nsession);
  Expr *e = parse_expr(view, &s->diag, file, &po);
  if (e && !engine_check_expr(view, e, &s->diag)) e = NULL;
  session_render(s);
  return e;
}

/* ───────────────────────── the session ───────────────────────── */

/* The engine first: it holds the prelude and the module. */
Session *session_new(SessionOptions opt) {
  Session *s = calloc(1, sizeof *s);
  if (!s) rly_oom();
  s->opt = opt;
  diag_init(&s->diag);
  arena_init(&s->fixed);
  arena_init(&s->inputs);
  s->ev = repl_eval_new(&s->diag, &opt.engine);
  s->diag.stop = &rt_interrupt_flag; /* the engine's: Ctrl-C stops parsing, checking, passes */
  if (opt.prelude && !engine_load_prelude(session_engine(s))) {
    fputs("rly: internal error: the prelude does not check; continuing without it\n", stderr);
    session_render(s);
  }
  settings_init(s);
  bind_last(s);
  return s;
}

void session_free(Session *s) {
  repl_undo_clear(s);
  repl_eval_free(s->ev);
  arena_free(&s->inputs);
  free(s->last_load);
  profile_free(s->last_profile);
  shared_types_drop(s);
  arena_free(&s->fixed);
  diag_free(&s->diag);
  free(s);
}
