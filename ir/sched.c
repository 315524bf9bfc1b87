/* sched.c — printing a schedule's steps (ir/sched.h) in the syntax the
 * parser reads (parser/parse_sched.c), and finding a step's arguments. */
#include "ir/sched.h"

#include <string.h>

static const char *const arg_kind_names[] = {
#define X(e, n) n,
    SCHED_ARG_KINDS(X)
#undef X
};

const char *sched_arg_kind_name(SchedArgKind k) { return arg_kind_names[k]; }

static void print_string(StrBuf *b, const char *s) {
  sb_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sb_putc(b, '\\');
    sb_putc(b, *s);
  }
  sb_putc(b, '"');
}

static void print_arg(StrBuf *b, const SchedArg *a) {
  if (a->key) sb_printf(b, "%s=", a->key);
  switch (a->kind) {
    case SA_INT:
      sb_printf(b, "%lld", (long long)a->u.i);
      break;
    case SA_UNKNOWN:
      sb_putc(b, '?');
      break;
    case SA_FLOAT: {
      size_t at = b->len;
      sb_printf(b, "%.17g", a->u.f);
      if (!strpbrk(b->data + at, ".eEn")) sb_puts(b, ".0");
      break;
    }
    case SA_STR:
      print_string(b, a->u.s);
      break;
    case SA_NAME:
      sb_printf(b, "%%%s", a->u.s);
      break;
    case SA_LIST:
      sb_putc(b, '[');
      for (int i = 0; i < a->u.list.n; i++) {
        if (i) sb_puts(b, ", ");
        print_arg(b, &a->u.list.items[i]);
      }
      sb_putc(b, ']');
      break;
    case SA_STEP:
      print_sched_call_to(b, a->u.step);
      break;
    case SA_BOOL:
      sb_puts(b, a->u.i ? "True" : "False");
      break;
  }
}

void print_sched_call_to(StrBuf *b, const SchedStep *s) {
  sb_printf(b, "%s(", s->prim);
  for (int i = 0; i < s->nargs; i++) {
    if (i) sb_puts(b, ", ");
    print_arg(b, &s->args[i]);
  }
  sb_putc(b, ')');
}

void print_sched_step_to(StrBuf *b, const SchedStep *s) {
  if (s->nouts) {
    sb_puts(b, "let ");
    if (s->tuple_out) sb_putc(b, '(');
    for (int i = 0; i < s->nouts; i++) sb_printf(b, "%s%%%s", i ? ", " : "", s->outs[i]);
    if (s->tuple_out) sb_putc(b, ')');
    sb_puts(b, " = ");
  }
  print_sched_call_to(b, s);
  sb_putc(b, ';');
}

void print_sched_trace_to(StrBuf *b, const SchedTrace *t) {
  sb_printf(b, "schedule @%s {\n", t->func);
  for (int i = 0; i < t->n; i++) {
    sb_puts(b, "  ");
    print_sched_step_to(b, t->steps[i]);
    sb_putc(b, '\n');
  }
  sb_puts(b, "}\n");
}

const SchedArg *sched_arg(const SchedStep *s, int pos, const char *key) {
  int npos = 0;
  for (int i = 0; i < s->nargs; i++) {
    const SchedArg *a = &s->args[i];
    if (a->key ? key && strcmp(a->key, key) == 0 : npos++ == pos && pos >= 0) return a;
  }
  return NULL;
}
