/* session.c — running inputs in a session: parse, check, commit, evaluate.
 *
 * One input (a REPL entry, a script file, an -e argument) is split at its
 * `:` command lines into parts; each part of rly text is one transaction:
 *
 *   1. parse it into a copy of the current module (in the input's arena);
 *   2. type-check its definitions (the module must check as a whole when a
 *      definition replaces another), then its expressions and lets in order;
 *   3. on any error: print diagnostics, drop the copy, keep nothing;
 *   4. otherwise make the copy current, then report definitions and
 *      evaluate expressions and lets in order (the first run-time error
 *      stops the input).
 *
 * A part is given its own registered source: the input's text with
 * everything outside the part blanked (newlines kept), so line:col of a
 * diagnostic is the line:col in the input.  See repl.h for the memory and
 * transaction invariants. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "interp/kernels.h"
#include "ir/walk.h"
#include "parser/lexer.h"
#include "passes/passes.h"
#include "repl/repl.h"
#include "repl/settings.h"

volatile sig_atomic_t repl_in_eval, repl_interrupted;

/* ───────────────────────── arenas, modules, transactions ───────────────────────── */

static void drop_tables(Module *m) {
  strmap_free(&m->globals);
  strmap_free(&m->types);
  strmap_free(&m->ctors);
}

static bool var_listed(Var *const *vars, int n, const Var *v);

/* Makes m current.  The old module's tables are freed unless a transaction
 * may roll back to it. */
static void set_module(Session *s, Module *m) {
  Module *old = s->m;
  s->m = m;
  if (!old || old == m || old == s->base) return;
  if (s->ntxns)
    vec_push(&s->dead, old);
  else
    drop_tables(old);
}

bool session_txn_begin(Session *s) {
  if (s->ntxns == (int)(sizeof s->txns / sizeof s->txns[0])) return false;
  Txn *t = &s->txns[s->ntxns++];
  t->module = s->m;
  t->dead_from = s->dead.len;
  t->nvars = s->nvars;
  t->vars = s->nvars ? malloc(sizeof(Var *) * (size_t)s->nvars) : NULL;
  if (s->nvars && !t->vars) rly_oom();
  if (s->nvars) memcpy(t->vars, s->vars, sizeof(Var *) * (size_t)s->nvars);
  return true;
}

static void txn_rollback(Session *s, Txn *t) {
  for (size_t i = t->dead_from; i < s->dead.len; i++)
    if (s->dead.items[i] != t->module && s->dead.items[i] != s->base) drop_tables(s->dead.items[i]);
  if (s->m != t->module && s->m != s->base) drop_tables(s->m);
  s->dead.len = t->dead_from;
  s->m = t->module;
  for (int i = 0; i < s->nvars; i++)
    if (!var_listed(t->vars, t->nvars, s->vars[i])) repl_eval_unbind(s->ev, s->vars[i]);
  s->nvars = t->nvars;
  if (t->nvars) memcpy(s->vars, t->vars, sizeof(Var *) * (size_t)t->nvars);
}

/* After the outermost transaction: release variables it replaced. */
static void txn_release(Session *s, const Txn *t) {
  for (int i = 0; i < t->nvars; i++)
    if (!var_listed(s->vars, s->nvars, t->vars[i])) repl_eval_unbind(s->ev, t->vars[i]);
}

void session_txn_end(Session *s, bool ok) {
  Txn *t = &s->txns[--s->ntxns];
  if (!ok)
    txn_rollback(s, t);
  else if (!s->ntxns)
    txn_release(s, t);
  free(t->vars);
  if (s->ntxns) return;
  for (size_t i = 0; i < s->dead.len; i++)
    if (s->dead.items[i] != s->m && s->dead.items[i] != s->base) drop_tables(s->dead.items[i]);
  s->dead.len = 0;
}

/* ───────────────────────── session variables ───────────────────────── */

static bool var_listed(Var *const *vars, int n, const Var *v) {
  for (int i = 0; i < n; i++)
    if (vars[i] == v) return true;
  return false;
}

/* Binds v's name to v.  The value of the variable it replaces is released
 * unless a transaction may bring that variable back. */
void session_var_set(Session *s, Var *v) {
  for (int i = 0; i < s->nvars; i++)
    if (strcmp(s->vars[i]->name, v->name) == 0) {
      if (!s->ntxns && s->vars[i] != v) repl_eval_unbind(s->ev, s->vars[i]);
      s->vars[i] = v;
      return;
    }
  if (s->nvars == s->capvars) {
    s->capvars = s->capvars ? s->capvars * 2 : 16;
    s->vars = realloc(s->vars, sizeof(Var *) * (size_t)s->capvars);
    if (!s->vars) rly_oom();
  }
  s->vars[s->nvars++] = v;
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

/* Registers the part [from, to) of text under name, everything else blanked. */
static uint32_t add_part_source(Session *s, const char *name, const char *text, size_t len,
                                size_t from, size_t to) {
  char *copy = malloc(len + 1);
  if (!copy) rly_oom();
  for (size_t i = 0; i < len; i++)
    copy[i] = (i >= from && i < to) || text[i] == '\n' ? text[i] : ' ';
  copy[len] = 0;
  uint32_t id = diag_add_source(&s->diag, name, copy, len);
  free(copy);
  return id;
}

/* ───────────────────────── scanning an input ───────────────────────── */

/* What a quick lexical pass finds before parsing: the `:` command lines
 * (where the input is split) and the names it defines (keys as in
 * prelude.c), so prelude definitions it replaces can be left out first. */
typedef struct Scan {
  Span *cmds;
  int ncmds, capcmds;
  PtrVec names; /* malloc'd */
} Scan;

typedef enum ScanState { SC_NONE, SC_TNAME, SC_CTORS } ScanState;

typedef struct Scanner {
  Lexer lx;
  Scan *out;
  ScanState st;
  int depth, base;
  TokKind prev, prev2;
} Scanner;

static void scan_push_cmd(Scan *sc, Span sp) {
  if (sc->ncmds == sc->capcmds) {
    sc->capcmds = sc->capcmds ? sc->capcmds * 2 : 8;
    sc->cmds = realloc(sc->cmds, sizeof(Span) * (size_t)sc->capcmds);
    if (!sc->cmds) rly_oom();
  }
  sc->cmds[sc->ncmds++] = sp;
}

static void scan_name(Scanner *z, const Token *t, bool global) {
  StrBuf b = {0};
  if (global) sb_putc(&b, '@');
  sb_putn(&b, z->lx.src + t->off + (global ? 1 : 0), t->len - (global ? 1 : 0));
  vec_push(&z->out->names, sb_take(&b));
}

/* Tracks `type T[..] { C(..), D }` to find constructor names. */
static void scan_type(Scanner *z, const Token *t) {
  if (z->st == SC_TNAME && z->depth == z->base) {
    if (t->kind == T_LBRACE)
      z->st = SC_CTORS;
    else if (t->kind != T_RBRACKET && t->kind != T_IDENT)
      z->st = SC_NONE;
  } else if (z->st == SC_CTORS && t->kind == T_IDENT && z->depth == z->base + 1 &&
             (z->prev == T_LBRACE || z->prev == T_COMMA)) {
    scan_name(z, t, false);
  }
}

/* One token of the quick scan: records command lines and the names that
 * `def`, `global`, `prim` and `type` introduce (constructor names through
 * scan_type), tracking bracket depth to know where a type's body ends. */
static void scan_token(Scanner *z, const Token *t) {
  bool opener = t->kind == T_LPAREN || t->kind == T_LBRACKET || t->kind == T_LBRACE;
  bool closer = t->kind == T_RPAREN || t->kind == T_RBRACKET || t->kind == T_RBRACE;
  if (closer) z->depth--;
  if (t->kind == T_COMMAND)
    scan_push_cmd(z->out, lex_span(&z->lx, t));
  else if (t->kind == T_GLOBAL &&
           (z->prev == T_KW_DEF || z->prev == T_KW_GLOBAL || z->prev == T_KW_PRIM))
    scan_name(z, t, true);
  else if (t->kind == T_IDENT && z->prev == T_KW_TYPE) {
    scan_name(z, t, false);
    z->st = SC_TNAME, z->base = z->depth;
  } else if (z->st != SC_NONE) {
    scan_type(z, t);
  }
  if (z->st == SC_CTORS && t->kind == T_RBRACE && z->depth == z->base) z->st = SC_NONE;
  if (opener) z->depth++;
  z->prev = t->kind;
}

static void scan_input(const char *name, const char *text, size_t len, Scan *out) {
  DiagCtx d;
  diag_init(&d);
  uint32_t f = diag_add_source(&d, name, text, len);
  Scanner z = {.out = out};
  lex_init(&z.lx, &d, f, true);
  for (;;) {
    Token t = lex_next(&z.lx);
    if (t.kind == T_EOF || t.kind == T_METADATA) break;
    scan_token(&z, &t);
  }
  diag_free(&d);
}

static void scan_free(Scan *sc) {
  for (size_t i = 0; i < sc->names.len; i++) free(sc->names.items[i]);
  vec_free(&sc->names);
  free(sc->cmds);
}

/* ───────────────────────── one part: parse, check, commit ───────────────────────── */

typedef struct Input {
  Arena *arena; /* s->inputs, from `mark` on */
  ArenaMark mark;
  uint64_t gen; /* s->kept_gen at the start */
  Module *m;    /* the copy the part is parsed into */
  ParseResult r;
  int ndefs;
  Type *last_type; /* %_'s type before the input */
} Input;

static ParseOptions parse_options(const Session *s) {
  ParseOptions po = {.nsession = s->nvars, .session = s->vars};
  return po;
}

static AdtDef *item_adt(const Module *m, const ScriptItem *it) {
  for (int i = 0; i < m->ndefs; i++) {
    AdtDef *t = m->defs[i].kind == DEF_ADT ? m->defs[i].u.adt : NULL;
    if (t && t->span.file == it->span.file && t->span.off == it->span.off) return t;
  }
  return NULL;
}

/* Old function and global definitions get private copies in the input's
 * module before a whole-module check, which rewrites FuncDef.ty: the
 * current module (and any transaction's) must not see the rewrite. */
static void isolate_old_defs(Session *s, Module *m) {
  for (int i = 0; i < m->ndefs; i++) {
    Def *d = &m->defs[i];
    if (d->kind == DEF_FUNC && module_func(s->m, d->u.func->name) == d->u.func)
      d->u.func = arena_memdup(m->arena, d->u.func, sizeof(FuncDef));
    else if (d->kind == DEF_GLOBAL && module_state_global(s->m, d->u.global->name) == d->u.global)
      d->u.global = arena_memdup(m->arena, d->u.global, sizeof(StateGlobal));
  }
}

/* A brand-new function, global or prim is checked alone; anything that
 * replaces a definition or defines several or a type re-checks the module,
 * so the module always checks as a whole. */
static bool check_defs(Session *s, Input *in) {
  const ScriptItem *single = NULL;
  bool whole = false;
  for (int i = 0; i < in->r.nitems; i++) {
    const ScriptItem *it = &in->r.items[i];
    if (it->kind != ITEM_DEF) continue;
    in->ndefs++;
    if (it->def_kind == DEF_ADT || it->replaced || single) whole = true;
    single = it;
  }
  if (!in->ndefs) return true;
  if (!whole) return ty_check_def(in->m, single->def_name, &s->diag);
  isolate_old_defs(s, in->m);
  return ty_check_module(in->m, &s->diag);
}

static bool check_let(Session *s, ScriptItem *it, Type *t) {
  if (!it->var->annot) {
    it->var->annot = t;
    return true;
  }
  if (type_equal(it->var->annot, t)) return true;
  char *want = print_type(it->var->annot), *got = print_type(t);
  diag_error(&s->diag, it->expr->span, "the value of %%%s has type %s but %%%s is declared %s",
             it->var->name, got, it->var->name, want);
  free(want), free(got);
  return false;
}

/* Expressions and lets are checked in order before anything runs; %_ takes
 * each expression's type for the items after it, as it will at run time. */
static bool check_exprs(Session *s, Input *in) {
  for (int i = 0; i < in->r.nitems; i++) {
    ScriptItem *it = &in->r.items[i];
    if ((it->kind != ITEM_EXPR && it->kind != ITEM_LET) || !it->expr) continue;
    Type *t = ty_check_expr(in->m, it->expr, &s->diag);
    if (!t) return false;
    if (it->kind == ITEM_LET && !check_let(s, it, t)) return false;
    if (it->kind == ITEM_EXPR) s->last->annot = t;
  }
  return true;
}

static bool check_items(Session *s, Input *in) {
  if (!check_defs(s, in)) return false;
  in->last_type = s->last->annot;
  if (check_exprs(s, in)) return true;
  s->last->annot = in->last_type;
  return false;
}

/* A definition that replaces the prelude's is new to the user. */
static void unmark_prelude_replacements(Session *s, Input *in) {
  for (int i = 0; i < in->r.nitems; i++) {
    ScriptItem *it = &in->r.items[i];
    if (it->kind != ITEM_DEF || !it->replaced) continue;
    AdtDef *t = it->def_kind == DEF_ADT ? item_adt(in->m, it) : NULL;
    const char *name = it->def_name ? it->def_name : "";
    const char *key = t ? t->name : arena_printf(in->arena, "@%s", name);
    const Def *old = t ? NULL : module_lookup(s->m, key + 1);
    const void *p = t ? (const void *)module_adt(s->m, key) : old ? prelude_def_ptr(old) : NULL;
    if (p && session_is_prelude(s, key, p)) it->replaced = false;
  }
}

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
  return kernels_get(op) && !ops_has_flag(op, OP_VIEW);
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
  if (in->ndefs || s->kept_gen != in->gen) return false;
  for (int i = 0; i < in->r.nitems; i++) {
    const ScriptItem *it = &in->r.items[i];
    if (it->kind != ITEM_EXPR || (it->expr && !expr_safe(it->expr))) return false;
  }
  Type *t = s->last->annot ? shared_type(s, s->last->annot) : NULL;
  if (s->last->annot && !t) return false;
  s->last->annot = t;
  return true;
}

static Input input_begin(Session *s) {
  Input in = {.arena = &s->inputs, .mark = arena_mark(&s->inputs), .gen = s->kept_gen};
  return in;
}

/* A rejected input's memory is released (unless an input nested in it, a
 * :load, kept memory after our mark); one that ran is kept, since values
 * may share its memory (tensor constants are borrowed, closures point at
 * their code). */
static void input_end(Session *s, Input *in, bool committed) {
  if (!committed || !in->ndefs) drop_tables(in->m);
  if (committed && input_releasable(s, in)) committed = false;
  if (committed || s->kept_gen != in->gen) {
    s->kept_gen++;
    return;
  }
  arena_release(&s->inputs, in->mark);
}

/* ───────────────────────── one part: run ───────────────────────── */

/* "defined @f : T" (or "redefined") for a committed definition; during
 * :load the name is collected instead, for one summary line. */
static void report_def(Session *s, const Input *in, const ScriptItem *it) {
  const char *verb = it->replaced ? "redefined" : "defined";
  if (it->def_kind == DEF_ADT) {
    AdtDef *t = item_adt(in->m, it);
    if (!t) return;
    if (s->loading)
      vec_push(&s->loaded, arena_printf(&s->fixed, "t%s", t->name));
    else
      printf("%s type %s\n", verb, t->name);
    return;
  }
  if (s->loading) {
    char k = it->def_kind == DEF_FUNC ? 'f' : it->def_kind == DEF_GLOBAL ? 'g' : 'p';
    vec_push(&s->loaded, arena_printf(&s->fixed, "%c%s", k, it->def_name));
    return;
  }
  FuncDef *f = module_func(s->m, it->def_name);
  StateGlobal *g = module_state_global(s->m, it->def_name);
  char *ty = f && f->ty ? print_type(f->ty) : g ? print_type(g->type) : NULL;
  if (ty)
    printf("%s @%s : %s\n", verb, it->def_name, ty);
  else
    printf("%s @%s\n", verb, it->def_name);
  free(ty);
}

/* The one place where evaluation happens (through the Evaluator).  After
 * Ctrl-C the terminal has echoed `^C`: the diagnostic starts a new line. */
static bool evaluate(Session *s, Expr *e, Var *bind, char **text) {
  fflush(stdout);
  repl_interrupted = 0;
  repl_in_eval = 1;
  bool ok = repl_eval(s->ev, s->m, e, bind, text);
  repl_in_eval = 0;
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

static bool run_expr(Session *s, ScriptItem *it) {
  char *text = NULL;
  if (!evaluate(s, it->expr, s->last, &text)) return false;
  s->last->annot = it->expr->ty;
  print_value(s, text, it->expr->ty);
  free(text);
  return true;
}

static bool run_let(Session *s, ScriptItem *it) {
  char *text = NULL;
  if (!evaluate(s, it->expr, it->var, &text)) return false;
  session_var_set(s, it->var);
  if (s->show_types) {
    char *ty = print_type(it->var->annot);
    printf("%%%s : %s\n", it->var->name, ty);
    free(ty);
  }
  free(text);
  return true;
}

static RunStatus run_items(Session *s, const Input *in) {
  for (int i = 0; i < in->r.nitems; i++) {
    ScriptItem *it = &in->r.items[i];
    bool ok = true;
    RunStatus st = RUN_OK;
    if (it->kind == ITEM_DEF)
      report_def(s, in, it);
    else if (it->kind == ITEM_EXPR && it->expr)
      ok = run_expr(s, it);
    else if (it->kind == ITEM_LET && it->expr)
      ok = run_let(s, it);
    else if (it->kind == ITEM_COMMAND)
      st = cmd_run(s, it->command, it->span);
    if (!ok) session_render(s);
    if (!ok || st != RUN_OK) return ok ? st : RUN_ERROR;
  }
  session_render(s); /* warnings of the evaluation, if any */
  return RUN_OK;
}

/* One transaction (steps 1 to 4 above).  A parse error at the end of the
 * input, when more may follow, is RUN_INCOMPLETE with its diagnostics
 * dropped, so the REPL asks for another line. */
static RunStatus run_part(Session *s, uint32_t file, const Scan *sc, bool may_continue) {
  Input in = input_begin(s);
  in.m = s->prelude_names.len ? prelude_input_module(s, &sc->names, in.arena)
                              : module_copy(s->m, in.arena);
  ParseOptions po = parse_options(s);
  in.r = parse_script(in.m, &s->diag, file, &po);
  if (!in.r.ok || !check_items(s, &in)) {
    bool more = may_continue && !in.r.ok && in.r.incomplete;
    if (more)
      diag_clear(&s->diag);
    else
      session_render(s);
    input_end(s, &in, false);
    return more ? RUN_INCOMPLETE : RUN_ERROR;
  }
  session_render(s); /* warnings */
  unmark_prelude_replacements(s, &in);
  s->last->annot = in.last_type; /* each value sets it as it comes */
  if (in.ndefs) set_module(s, in.m);
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
static RunStatus run_split(Session *s, const char *name, const char *text, size_t len,
                           const Scan *sc) {
  uint32_t whole = diag_add_source(&s->diag, name, text, len);
  size_t from = 0;
  for (int i = 0; i <= sc->ncmds; i++) {
    size_t to = i < sc->ncmds ? sc->cmds[i].off : len;
    RunStatus st = RUN_OK;
    if (!blank(text, from, to))
      st = run_part(s, add_part_source(s, name, text, len, from, to), sc, false);
    if (st == RUN_OK && i < sc->ncmds) {
      Span sp = {whole, sc->cmds[i].off, sc->cmds[i].len};
      char *line = strndup(text + sp.off + 1, sp.len - 1);
      if (!line) rly_oom();
      st = cmd_run(s, line, sp);
      free(line);
      from = sp.off + sp.len;
    }
    if (st != RUN_OK) return st;
  }
  return RUN_OK;
}

RunStatus session_run(Session *s, const char *name, const char *text, size_t len,
                      bool may_continue) {
  Scan sc = {0};
  scan_input(name, text, len, &sc);
  RunStatus st;
  if (sc.ncmds)
    st = run_split(s, name, text, len, &sc);
  else
    st = run_part(s, diag_add_source(&s->diag, name, text, len), &sc, may_continue);
  scan_free(&sc);
  return st;
}

RunStatus session_run_file(Session *s, const char *path) {
  size_t len = 0;
  char *text = read_whole_file(path, &len);
  if (!text) {
    fflush(stdout);
    fprintf(stderr, "rly: cannot read '%s': %s\n", path, strerror(errno ? errno : EIO));
    return RUN_ERROR;
  }
  RunStatus st = session_run(s, strcmp(path, "-") == 0 ? "<stdin>" : path, text, len, false);
  free(text);
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
               {'p', "prim function", "prim functions", "@"}};
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

/* `:load FILE` as one transaction: any error leaves the session as it
 * was.  Loads may nest (a file may :load another), each with its own list. */
RunStatus session_load(Session *s, const char *path, Span where) {
  size_t len = 0;
  char *text = read_whole_file(path, &len);
  if (!text) {
    session_error(s, where, NULL, "cannot read '%s': %s", path, strerror(errno ? errno : EIO));
    return RUN_ERROR;
  }
  if (!session_txn_begin(s)) {
    free(text);
    session_error(s, where, NULL, ":load is nested too deeply");
    return RUN_ERROR;
  }
  bool was_loading = s->loading;
  PtrVec outer = s->loaded;
  s->loading = true;
  memset(&s->loaded, 0, sizeof s->loaded);
  RunStatus st = session_run(s, path, text, len, false);
  session_txn_end(s, st != RUN_ERROR);
  if (st != RUN_ERROR)
    print_loaded(&s->loaded, path);
  else
    printf("%s: not loaded; the session is unchanged\n", path);
  vec_free(&s->loaded);
  s->loaded = outer, s->loading = was_loading;
  free(text);
  return st == RUN_QUIT ? RUN_OK : st;
}

/* %_ exists from the start (as `()`), so every input can mention it; one
 * Var for the whole session, so each new value releases the old one. */
static void bind_last(Session *s) {
  Span none = {0, 0, 0};
  s->last = var_new(&s->fixed, "_", type_unit(&s->fixed), none);
  Expr *unit = expr_tuple(&s->fixed, 0, NULL, none);
  char *text = NULL;
  if (ty_check_expr(s->m, unit, &s->diag)) repl_eval(s->ev, s->m, unit, s->last, &text);
  free(text);
  diag_clear(&s->diag);
  session_var_set(s, s->last);
}

void session_reset(Session *s) {
  s->kept_gen++;
  repl_undo_clear(s);
  set_module(s, module_copy(s->base, &s->inputs));
  s->nvars = 0;
  repl_eval_reset(s->ev);
  bind_last(s);
}

/* The expression of a command (its span in a registered source) parsed
 * and checked against a view of the current module whose allocations go
 * to a: expressions add nothing to the module, so its tables are shared. */
Expr *session_parse_expr(Session *s, Span where, Arena *a, Module *view) {
  const SourceFile *src = diag_source(&s->diag, where.file);
  uint32_t end = where.off + where.len;
  uint32_t file = add_part_source(s, src->name, src->text, src->len, where.off, end);
  *view = *s->m;
  view->arena = a;
  ParseOptions po = parse_options(s);
  Expr *e = parse_expr(view, &s->diag, file, &po);
  if (e && !ty_check_expr(view, e, &s->diag)) e = NULL;
  session_render(s);
  return e;
}

/* ───────────────────────── the session ───────────────────────── */

Session *session_new(SessionOptions opt) {
  Session *s = calloc(1, sizeof *s);
  if (!s) rly_oom();
  s->opt = opt;
  diag_init(&s->diag);
  arena_init(&s->fixed);
  arena_init(&s->inputs);
  s->m = module_new(&s->inputs);
  if (opt.prelude) prelude_load(s);
  s->base = s->m;
  s->m = module_copy(s->base, &s->inputs);
  s->ev = repl_eval_new(&s->diag, &opt.engine);
  settings_init(s);
  bind_last(s);
  return s;
}

void session_free(Session *s) {
  repl_eval_free(s->ev);
  while (s->ntxns) session_txn_end(s, true);
  repl_undo_clear(s);
  if (s->m != s->base) drop_tables(s->m);
  drop_tables(s->base);
  prelude_free(s);
  arena_free(&s->inputs);
  vec_free(&s->dead);
  free(s->vars);
  free(s->last_load);
  shared_types_drop(s);
  arena_free(&s->fixed);
  diag_free(&s->diag);
  free(s);
}
