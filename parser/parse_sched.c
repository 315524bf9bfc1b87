/* parse_sched.c — a schedule (ir/sched.h) after its prim function:
 *
 *   schedule_def := 'schedule' GLOBAL '{' step* '}'
 *   step  := ( 'let' ( LOCAL | '(' LOCAL ( ',' LOCAL )* ')' ) '=' )? call ';'
 *   call  := IDENT '(' ( arg ( ',' arg )* ','? )? ')'
 *   arg   := ( IDENT '=' )? value
 *   value := INT | '-' INT | FLOAT | '?' | STRING | LOCAL | 'True' | 'False'
 *          | '[' ( value ( ',' value )* )? ']' | call
 *
 * The definition replaces the prim function by a copy carrying the steps
 * (PrimFunc.trace, unscheduled NULL: to be applied by sched/ when the
 * module is checked); a schedule names a prim function defined before it,
 * and replaces any schedule it had.  `:sched @f STEP` parses one step
 * with parse_sched_step. */
#include <string.h>

#include "ir/arena.h"
#include "ir/sched.h"
#include "parser/parse_priv.h"

static SchedStep *pcall(Parser *p);

static bool pvalue(Parser *p, SchedArg *a);

static bool plist(Parser *p, SchedArg *a) {
  PtrVec items = {0};
  bool ok = true;
  while (ok && !at_kind(p, T_RBRACKET)) {
    SchedArg *x = ARENA_NEW(p->a, SchedArg);
    *x = (SchedArg){0};
    ok = pvalue(p, x);
    vec_push(&items, x);
    if (ok && !parse_accept(p, T_COMMA)) break;
  }
  ok = ok && parse_expect(p, T_RBRACKET, "`,` or `]`");
  a->kind = SA_LIST;
  a->u.list.n = (int)items.len;
  a->u.list.items = arena_alloc(p->a, sizeof(SchedArg) * (items.len + 1));
  for (size_t i = 0; i < items.len; i++) a->u.list.items[i] = *(SchedArg *)items.items[i];
  vec_free(&items);
  return ok;
}

static bool pint(Parser *p, SchedArg *a, bool neg) {
  Token t = parse_next(p);
  if (t.kind == T_FLOAT) {
    a->kind = SA_FLOAT, a->u.f = neg ? -t.v.f : t.v.f;
    return true;
  }
  a->kind = SA_INT, a->u.i = neg ? -t.v.i : t.v.i;
  return true;
}

static bool pword_value(Parser *p, SchedArg *a) {
  const Token *t = peek(p);
  if (parse_is_word(p, t, "True") || parse_is_word(p, t, "False")) {
    a->kind = SA_BOOL, a->u.i = parse_is_word(p, t, "True");
    parse_next(p);
    return true;
  }
  if (peek_at(p, 1)->kind != T_LPAREN)
    return parse_expected(p, "an argument: an integer, `?`, a string, `%name`, a list or a call"),
           false;
  a->kind = SA_STEP;
  return (a->u.step = pcall(p)) != NULL;
}

static bool pvalue(Parser *p, SchedArg *a) {
  uint32_t start = peek(p)->off;
  bool ok = true;
  bool neg = parse_accept(p, T_MINUS);
  switch (peek(p)->kind) {
    case T_INT:
    case T_FLOAT:
      ok = pint(p, a, neg);
      break;
    case T_QUESTION:
      parse_next(p), a->kind = SA_UNKNOWN;
      break;
    case T_STRING: {
      Token t = parse_next(p);
      a->kind = SA_STR, a->u.s = lex_string_value(p->a, p->lx.src, &t);
      break;
    }
    case T_LOCAL: {
      Token t = parse_next(p);
      a->kind = SA_NAME, a->u.s = parse_name(p, &t);
      break;
    }
    case T_LBRACKET:
      parse_next(p);
      ok = plist(p, a);
      break;
    case T_IDENT:
      ok = pword_value(p, a);
      break;
    default:
      parse_expected(p, "an argument: an integer, `?`, a string, `%name`, a list or a call");
      ok = false;
  }
  if (ok && neg && a->kind != SA_INT && a->kind != SA_FLOAT) {
    parse_err(p, parse_span_from(p, start), "only a number can be negated here");
    ok = false;
  }
  a->span = parse_span_from(p, start);
  return ok;
}

static bool parg(Parser *p, SchedArg *a) {
  *a = (SchedArg){0};
  if (at_kind(p, T_IDENT) && peek_at(p, 1)->kind == T_EQ) {
    Token k = parse_next(p);
    a->key = parse_name(p, &k);
    parse_next(p);
  }
  return pvalue(p, a);
}

static SchedStep *pcall(Parser *p) {
  uint32_t start = peek(p)->off;
  if (!at_kind(p, T_IDENT)) return parse_expected(p, "a schedule primitive like `split`"), NULL;
  if (!parse_enter(p)) return NULL;
  Token name = parse_next(p);
  SchedStep *s = ARENA_NEW(p->a, SchedStep);
  *s = (SchedStep){.prim = parse_name(p, &name)};
  PtrVec args = {0};
  bool ok = parse_expect(p, T_LPAREN, "`(` and the primitive's arguments");
  while (ok && !at_kind(p, T_RPAREN)) {
    SchedArg *a = ARENA_NEW(p->a, SchedArg);
    ok = parg(p, a);
    vec_push(&args, a);
    if (ok && !parse_accept(p, T_COMMA)) break;
  }
  ok = ok && parse_expect(p, T_RPAREN, "`,` or `)`");
  s->nargs = (int)args.len;
  s->args = arena_alloc(p->a, sizeof(SchedArg) * (args.len + 1));
  for (size_t i = 0; i < args.len; i++) s->args[i] = *(SchedArg *)args.items[i];
  vec_free(&args);
  s->span = parse_span_from(p, start);
  parse_leave(p);
  return ok ? s : NULL;
}

/* `let %x =` or `let (%a, %b) =` */
static bool pouts(Parser *p, SchedStep *s) {
  PtrVec outs = {0};
  bool tuple = parse_accept(p, T_LPAREN), ok = true;
  do {
    if (!at_kind(p, T_LOCAL)) {
      parse_expected(p, "a name like `%j0`");
      ok = false;
      break;
    }
    Token t = parse_next(p);
    vec_push(&outs, (void *)parse_name(p, &t));
  } while (tuple && parse_accept(p, T_COMMA));
  ok = ok && (!tuple || parse_expect(p, T_RPAREN, "`,` or `)`")) &&
       parse_expect(p, T_EQ, "`=` and a primitive");
  s->nouts = (int)outs.len;
  s->outs = (const char **)vec_finish(&outs, p->a);
  s->tuple_out = tuple;
  return ok;
}

SchedStep *parse_sched_step_in(Parser *p) {
  uint32_t start = peek(p)->off;
  SchedStep outs = {0};
  bool let = parse_accept(p, T_KW_LET);
  if (let && !pouts(p, &outs)) return NULL;
  SchedStep *s = pcall(p);
  if (!s) return NULL;
  s->nouts = outs.nouts, s->outs = outs.outs, s->tuple_out = outs.tuple_out;
  if (let) s->span = parse_span_from(p, start);
  return s;
}

static SchedTrace *psteps(Parser *p, const char *func, uint32_t start) {
  PtrVec steps = {0};
  bool ok = parse_expect(p, T_LBRACE, "`{` and the schedule's steps");
  while (ok && !at_kind(p, T_RBRACE) && !at_kind(p, T_EOF)) {
    SchedStep *s = parse_sched_step_in(p);
    ok = s && parse_expect_semi(p, "step");
    if (s) vec_push(&steps, s);
  }
  ok = ok && parse_expect(p, T_RBRACE, "`}` or a step");
  SchedTrace *t = ARENA_NEW(p->a, SchedTrace);
  t->func = func, t->n = (int)steps.len;
  t->steps = (SchedStep **)vec_finish(&steps, p->a);
  t->span = parse_span_from(p, start);
  return ok ? t : NULL;
}

/* The prim function the schedule names: defined before it. */
static const PrimFunc *scheduled_prim(Parser *p, const Token *g, const char *name) {
  const PrimFunc *f = module_prim(p->m, name);
  if (f) return f->unscheduled ? f->unscheduled : f;
  parse_sem_err(p, tok_span(p, g), "`@%s` is not a prim function defined before this schedule",
                name);
  return NULL;
}

bool parse_sched_def(Parser *p, ScriptItem *it, size_t errs) {
  uint32_t start = parse_next(p).off;
  if (!at_kind(p, T_GLOBAL)) return parse_expected(p, "the prim function's name like `@f`"), false;
  Token g = parse_next(p);
  const char *name = it->def_name = parse_name(p, &g);
  const PrimFunc *f = scheduled_prim(p, &g, name);
  p->lx.bare_floats = true;
  SchedTrace *t = psteps(p, name, start);
  p->lx.bare_floats = false;
  if (!f || !t || p->d->nerrors != errs) return parse_mark_failed(p, name), false;
  PrimFunc *copy = ARENA_NEW(p->a, PrimFunc);
  *copy = *f;
  copy->trace = t, copy->unscheduled = NULL;
  module_add(p->m, (Def){.kind = DEF_PRIM, .u.prim = copy});
  it->def_kind = DEF_PRIM;
  it->replaced = true;
  it->schedule = true;
  return true;
}
