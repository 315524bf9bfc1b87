/* input.c — one input of a session (engine.h): a quick scan of its text,
 * then parse, check and commit.
 *
 *   1. engine_scan finds the `:` command lines (a shell splits the text
 *      there) and the names the text defines;
 *   2. engine_input_check parses the text into a copy of the current
 *      module, leaving out the prelude definitions it replaces (prelude.c),
 *      and type-checks its definitions (the module must check as a whole
 *      when a definition replaces another), then its expressions and lets
 *      in order;
 *   3. engine_input_commit makes the copy current.
 * Nothing changes the current module before step 3, so a rejected input
 * leaves the program as it was. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/schedule.h"
#include "engine/tune.h"
#include "ir/util.h"
#include "ir/walk.h"
#include "parser/lexer.h"
#include "types/types.h"

/* ───────────────────────── scanning ───────────────────────── */

typedef enum ScanState { SC_NONE, SC_TNAME, SC_CTORS } ScanState;

typedef struct Scanner {
  Lexer lx;
  EngineScan *out;
  ScanState st;
  int depth, base;
  TokKind prev;
} Scanner;

static void scan_push_cmd(EngineScan *sc, Span sp) {
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
    scan_push_cmd(z->out, span_make(t->off, t->len));
  else if (t->kind == T_GLOBAL && (z->prev == T_KW_DEF || z->prev == T_KW_GLOBAL ||
                                   z->prev == T_KW_PRIM || z->prev == T_KW_SCHEDULE))
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

void engine_scan(const char *name, const char *text, size_t len, EngineScan *out) {
  DiagCtx d;
  diag_init(&d);
  d.stop = out->stop;
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

void engine_scan_free(EngineScan *sc) {
  for (size_t i = 0; i < sc->names.len; i++) free(sc->names.items[i]);
  vec_free(&sc->names);
  free(sc->cmds);
  memset(sc, 0, sizeof *sc);
}

/* ───────────────────────── checking ───────────────────────── */

AdtDef *engine_item_adt(const Module *m, const ScriptItem *it) {
  for (int i = 0; i < m->ndefs; i++) {
    AdtDef *t = m->defs[i].kind == DEF_ADT ? m->defs[i].u.adt : NULL;
    if (t && t->span.off == it->span.off) return t;
  }
  return NULL;
}

/* Old function and global definitions get private copies in the input's
 * module before a whole-module check, which writes FuncDef.ty and every
 * node's Expr.ty: the current module (and any transaction's or undo
 * step's, which share those nodes) must not see the rewrite, whether the
 * check succeeds (the types may change with a redefined callee) or fails
 * (the rejected input's memory is released). */
static void isolate_old_defs(const Module *cur, Module *m) {
  for (int i = 0; i < m->ndefs; i++) {
    Def *d = &m->defs[i];
    if (d->kind == DEF_FUNC && module_func(cur, d->u.func->name) == d->u.func) {
      FuncDef *f = d->u.func = arena_memdup(m->arena, d->u.func, sizeof(FuncDef));
      f->fn = arena_memdup(m->arena, f->fn, sizeof(Function));
      f->fn->body = expr_clone(m->arena, f->fn->body);
    } else if (d->kind == DEF_GLOBAL &&
               module_state_global(cur, d->u.global->name) == d->u.global) {
      StateGlobal *g = d->u.global = arena_memdup(m->arena, d->u.global, sizeof(StateGlobal));
      g->init = g->init ? expr_clone(m->arena, g->init) : NULL;
    }
  }
}

/* ── the dependents of a rejected redefinition ── */

static bool defined_here(const EngineInput *in, const char *name) {
  for (int i = 0; i < in->r.nitems; i++) {
    const ScriptItem *it = &in->r.items[i];
    if (it->kind == ITEM_DEF && it->def_name && strcmp(it->def_name, name) == 0) return true;
  }
  return false;
}

/* The old definition of m (one the input does not define) whose text
 * holds the offset, or NULL. */
static const Def *old_def_at(const EngineInput *in, uint32_t off) {
  for (int i = 0; i < in->m->ndefs; i++) {
    const Def *d = &in->m->defs[i];
    Span sp = def_span(d);
    bool func = d->kind == DEF_FUNC || d->kind == DEF_GLOBAL;
    if (func && off >= sp.off && off - sp.off < sp.len && !defined_here(in, def_name(d))) return d;
  }
  return NULL;
}

typedef struct Mentions {
  const EngineInput *in;
  StrBuf names; /* "`@e`, `@g`" */
  StrMap seen;
} Mentions;

static bool mention_visit(void *ctx, Expr *e) {
  Mentions *m = ctx;
  if (e->kind != EX_GLOBAL || !defined_here(m->in, e->u.global.name) ||
      strmap_get(&m->seen, e->u.global.name))
    return true;
  strmap_put(&m->seen, e->u.global.name, (void *)1);
  sb_printf(&m->names, "%s`@%s`", m->names.len ? ", " : "", e->u.global.name);
  return true;
}

/* A note on the old definition d that no longer checks: which of the
 * input's definitions it uses. */
static void note_dependent(Engine *e, const EngineInput *in, const Def *d) {
  Mentions m = {.in = in};
  Expr *body = d->kind == DEF_FUNC ? d->u.func->fn->body : d->u.global->init;
  if (body) expr_walk(body, mention_visit, &m);
  const char *name = def_name(d);
  if (m.names.len)
    diag_note(engine_diag(e), def_span(d),
              "`@%s` uses %s, which this input redefines, and no longer type-checks: "
              "the input is rejected",
              name, m.names.data);
  else
    diag_note(engine_diag(e), def_span(d),
              "`@%s` no longer type-checks with this input's definitions: the input is rejected",
              name);
  diag_hint(engine_diag(e),
            "redefine `@%s` in the same input, or give the new definition "
            "another name",
            name);
  sb_free(&m.names);
  strmap_free(&m.seen);
}

/* After a rejected whole-module check: every old definition an error
 * (from diagnostic `first` on) falls in is named, once, as a dependent
 * that forced the rejection. */
static void note_dependents(Engine *e, const EngineInput *in, size_t first) {
  DiagCtx *d = engine_diag(e);
  PtrVec done = {0};
  size_t n = d->n;
  for (size_t i = first; i < n; i++) {
    if (d->items[i].level != DIAG_ERROR) continue;
    const Def *def = old_def_at(in, d->items[i].span.off);
    bool seen = false;
    for (size_t k = 0; def && k < done.len; k++) seen |= done.items[k] == def;
    if (!def || seen) continue;
    vec_push(&done, (void *)def);
    note_dependent(e, in, def);
  }
  vec_free(&done);
}

/* A brand-new function, global or prim is checked alone; anything that
 * replaces a definition or defines several or a type re-checks the module,
 * so the module always checks as a whole. */
static bool check_defs(Engine *e, EngineInput *in) {
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
  bool verify = engine_options(e)->verify_schedules;
  if (!whole)
    return ty_check_def(in->m, single->def_name, engine_diag(e)) &&
           engine_apply_schedules(in->m, engine_diag(e), verify);
  isolate_old_defs(engine_module(e), in->m);
  size_t first = engine_diag(e)->n;
  if (ty_check_module(in->m, engine_diag(e)))
    return engine_apply_schedules(in->m, engine_diag(e), verify);
  note_dependents(e, in, first);
  return false;
}

/* A session let takes its value's type, or must have the declared one. */
static bool check_let(Engine *e, ScriptItem *it, Type *t) {
  if (!it->var->annot) {
    it->var->annot = t;
    return true;
  }
  if (type_equal(it->var->annot, t)) return true;
  char *want = print_type(it->var->annot), *got = print_type(t);
  diag_error(engine_diag(e), it->expr->span,
             "the value of %%%s has type %s but %%%s is declared %s", it->var->name, got,
             it->var->name, want);
  free(want), free(got);
  return false;
}

/* Expressions and lets are checked in order before anything runs; `last`
 * (%_) takes each expression's type for the items after it, as it will at
 * run time, and gets its own back afterwards. */
static bool check_exprs(Engine *e, EngineInput *in, Var *last) {
  Type *before = last ? last->annot : NULL;
  bool ok = true;
  for (int i = 0; i < in->r.nitems && ok; i++) {
    ScriptItem *it = &in->r.items[i];
    if ((it->kind != ITEM_EXPR && it->kind != ITEM_LET) || !it->expr) continue;
    Type *want = it->kind == ITEM_LET ? it->var->annot : NULL;
    Type *t = ty_check_expr_as(in->m, it->expr, want, engine_diag(e));
    ok = t && (it->kind != ITEM_LET || check_let(e, it, t));
    if (ok && last && it->kind == ITEM_EXPR) last->annot = t;
  }
  if (last) last->annot = before;
  return ok;
}

/* The input's derived definitions whose sources it changed, rederived in
 * its module (derived.c); their names kept for the report. */
static void rederive(Engine *e, EngineInput *in, Arena *a) {
  const ScriptItem *def = NULL;
  PtrVec names = {0}, done = {0};
  for (int i = 0; i < in->r.nitems; i++) {
    const ScriptItem *it = &in->r.items[i];
    if (it->kind != ITEM_DEF || !it->def_name) continue;
    if (!def) def = it;
    vec_push(&names, (void *)it->def_name);
  }
  if (def) engine_rederive(e, in->m, a, def->span, &names, &done);
  vec_free(&names);
  in->nrederived = (int)done.len;
  in->rederived = done.len ? arena_memdup(a, done.items, sizeof(char *) * done.len) : NULL;
  vec_free(&done);
}

/* The input's new prim functions scheduled from the tuning database. */
static void tuned(Engine *e, EngineInput *in, Arena *a) {
  PtrVec done = {0};
  engine_tuning_apply(e, in->m, &in->r, a, &done);
  in->ntuned = (int)done.len;
  in->tuned = done.len ? arena_memdup(a, done.items, sizeof(char *) * done.len) : NULL;
  vec_free(&done);
}

/* No item uses a stale derived definition (its expressions, the bodies
 * of the definitions it gives). */
static bool refuse_stale(Engine *e, const EngineInput *in) {
  bool ok = true;
  for (int i = 0; i < in->r.nitems; i++) {
    const ScriptItem *it = &in->r.items[i];
    const FuncDef *f = it->kind == ITEM_DEF && it->def_kind == DEF_FUNC && it->def_name
                           ? module_func(in->m, it->def_name)
                           : NULL;
    Expr *x = f ? f->fn->body : it->kind == ITEM_EXPR || it->kind == ITEM_LET ? it->expr : NULL;
    ok &= engine_refuse_stale(e, in->m, x);
  }
  return ok;
}

bool engine_input_check(Engine *e, EngineInput *in, Arena *a, uint32_t file, uint32_t from,
                        uint32_t to, const EngineScan *scan, Var *last) {
  Program *p = engine_program(e);
  *in = (EngineInput){0};
  in->m = scan && p->prelude_names.len ? prelude_input_module(e, &scan->names, a)
                                       : module_copy(p->m, a);
  ParseOptions po = {.nsession = p->nvars, .session = p->vars, .from = from, .to = to};
  in->r = parse_script(in->m, engine_diag(e), file, &po);
  bool ok = in->r.ok && check_defs(e, in);
  if (ok && in->ndefs) rederive(e, in, a), tuned(e, in, a);
  if (ok && refuse_stale(e, in) && check_exprs(e, in, last)) return true;
  module_free(in->m);
  return false;
}

/* ───────────────────────── committing ───────────────────────── */

/* A definition that replaces the prelude's is new to the user. */
static void unmark_prelude_replacements(Engine *e, EngineInput *in) {
  const Program *p = engine_program(e);
  char buf[256];
  for (int i = 0; i < in->r.nitems; i++) {
    ScriptItem *it = &in->r.items[i];
    if (it->kind != ITEM_DEF || !it->replaced) continue;
    AdtDef *t = it->def_kind == DEF_ADT ? engine_item_adt(in->m, it) : NULL;
    const char *name = it->def_name ? it->def_name : "";
    const char *key = t ? t->name : (snprintf(buf, sizeof buf, "@%s", name), buf);
    const Def *old = t ? NULL : module_lookup(p->m, key + 1);
    const void *id = t ? (const void *)module_adt(p->m, key) : old ? prelude_def_id(old) : NULL;
    if (id && prelude_has(p, key, id)) it->replaced = false;
  }
}

Module *engine_input_commit(Engine *e, EngineInput *in) {
  unmark_prelude_replacements(e, in);
  if (in->ndefs) return engine_replace_module(e, in->m);
  module_free(in->m);
  return NULL;
}
