/* manager.c — the pass manager (passes/pass.h): the pass table, running one
 * pass or a list, rewrite reports, the verifier, and rewrite formatting for
 * `:step`.  The module diff lives in diff.c.
 *
 * Invariants: a pass's input is never modified (except the type checker's
 * Expr.ty cache when a pass needs types); the scratch arena of a pass is
 * freed before pass_run returns; a stopped or failed pass yields NULL. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ir/tir.h"
#include "passes/pass_int.h"
#include "types/types.h"

static const PassDef passes[] = {
#define X(n, f, t, ty, l, d) {n, f, t, ty, l, d},
    PASS_LIST(X)
#undef X
};

int pass_count(void) { return (int)(sizeof passes / sizeof passes[0]); }

const PassDef *pass_get(int i) { return i >= 0 && i < pass_count() ? &passes[i] : NULL; }

const PassDef *pass_lookup(const char *name) {
  for (int i = 0; i < pass_count(); i++)
    if (strcasecmp(passes[i].name, name) == 0) return &passes[i];
  return NULL;
}

/* ───────────────────────────── reports ───────────────────────────── */

bool pass_listening(const PassCtx *pc) { return pc->hook && pc->hook->fn && !pc->stopped; }

/* Rewrites in a def out of scope are applied but not shown (:step does
 * not stop at them). */
static bool deliver(PassCtx *pc, PassRewrite *rw) {
  if (diag_stopped(pc->d)) pc->stopped = true; /* Ctrl-C: as `q` in :step */
  if (!pass_listening(pc) || (pc->func && pc->hidden)) return !pc->stopped;
  rw->pass = pc->def->name;
  rw->func = pc->func;
  rw->context = pc->context;
  if (!pc->hook->fn(pc->hook->user, rw)) pc->stopped = true;
  return !pc->stopped;
}

bool pass_report(PassCtx *pc, const char *rule, const Expr *before, const Expr *after, Span sp) {
  PassRewrite rw = {.rule = rule, .before = before, .after = after, .span = sp};
  return deliver(pc, &rw);
}

bool pass_report_text(PassCtx *pc, const char *rule, const char *before, const char *after,
                      Span sp) {
  PassRewrite rw = {.rule = rule, .before_text = before, .after_text = after, .span = sp};
  return deliver(pc, &rw);
}

bool pass_in_scope(const PassCtx *pc, const Def *d) {
  return !pc->scope || pc->scope->has(pc->scope->user, d);
}

void pass_enter_def(PassCtx *pc, const FuncDef *f) {
  pc->func = arena_printf(&pc->scratch, "@%s", f->name);
  pc->context = f->fn;
  Def d = {.kind = DEF_FUNC, .u.func = (FuncDef *)f};
  pc->hidden = !pass_in_scope(pc, &d);
}

void pass_replace_def(PassCtx *pc, Module *out, const FuncDef *f, Function *fn) {
  FuncDef *nf = ARENA_NEW(pc->a, FuncDef);
  nf->name = f->name, nf->span = f->span, nf->fn = fn;
  Def d = {.kind = DEF_FUNC, .u.func = nf};
  module_add(out, d);
}

/* ───────────────────────────── running ───────────────────────────── */

Module *pass_run(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook) {
  return pass_run_scoped(p, in, a, d, hook, NULL);
}

Module *pass_run_scoped(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                        const PassScope *scope) {
  return pass_run_arg(p, in, a, d, hook, scope, NULL, (Span){0});
}

Module *pass_run_arg(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                     const PassScope *scope, const char *arg, Span where) {
  return pass_run_input(p, in, a, d, hook, scope, arg, where, NULL);
}

Module *pass_run_input(const PassDef *p, Module *in, Arena *a, DiagCtx *d, const PassHook *hook,
                       const PassScope *scope, const char *arg, Span where, const void *input) {
  size_t errors = d->nerrors;
  if (p->needs_types && !ty_recheck_module(in, d)) {
    diag_error(d, (Span){0}, "%s needs a module that type-checks", p->name);
    return NULL;
  }
  PassCtx pc = {.def = p,
                .in = in,
                .a = a,
                .d = d,
                .hook = hook,
                .scope = scope,
                .arg = arg     ? arg
                       : scope ? scope->func
                               : NULL,
                .where = where,
                .input = input};
  arena_init(&pc.scratch);
  Module *out = p->run(&pc, in);
  arena_free(&pc.scratch);
  if (pc.stopped || d->nerrors > errors) {
    if (out && out != in) module_free(out);
    return NULL;
  }
  return out;
}

PassOptions pass_options_default(void) {
  PassOptions o = {.verify = false, .typecheck = true};
  return o;
}

/* "NAME=@f": the pass's argument "f" (arena), or NULL after an error. */
static const char *parse_arg(const char *s, size_t n, Arena *a, DiagCtx *d, Span where) {
  if (n < 2 || s[0] != '@') {
    diag_error(d, where, "expected `@function` after `=`, got `%.*s`", (int)n, s);
    return NULL;
  }
  return arena_printf(a, "%.*s", (int)n - 1, s + 1);
}

/* Splits "A,B C" (each maybe `A=@f`) into pass definitions and their
 * arguments; reports unknown names. */
static int parse_names(const char *names, const PassDef **out, const char **args, int max, Arena *a,
                       DiagCtx *d, Span where) {
  int n = 0;
  const char *p = names;
  while (*p) {
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    const char *s = p;
    while (*p && *p != ',' && *p != '=' && !isspace((unsigned char)*p)) p++;
    if (p == s) break;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(p - s), s);
    const char *arg = NULL;
    if (*p == '=') {
      const char *v = ++p;
      while (*p && *p != ',' && !isspace((unsigned char)*p)) p++;
      if (!(arg = parse_arg(v, (size_t)(p - v), a, d, where))) return -1;
    }
    const PassDef *pd = pass_lookup(name);
    if (!pd) {
      diag_error(d, where, "unknown pass `%s`", name);
      StrBuf b = {0};
      for (int i = 0; i < pass_count(); i++) sb_printf(&b, "%s%s", i ? ", " : "", passes[i].name);
      diag_hint(d, "the passes are %s (:passes lists them)", b.data);
      sb_free(&b);
      return -1;
    }
    if (n == max) {
      diag_error(d, where, "too many passes in one list (at most %d)", max);
      return -1;
    }
    args[n] = arg;
    out[n++] = pd;
  }
  if (!n) diag_error(d, where, "no pass named");
  return n ? n : -1;
}

static bool verify_after(const PassDef *p, Module *m, DiagCtx *d, PassResult *r) {
  if (pass_verify(m, d)) return true;
  diag_note(d, (Span){0}, "the module produced by %s breaks an invariant (verify is on)", p->name);
  r->failed = p;
  return false;
}

bool pass_pipeline(const char *names, Module *in, Arena *a, DiagCtx *d, const PassOptions *opt,
                   PassResult *r) {
  memset(r, 0, sizeof *r);
  const PassDef *list[64];
  const char *args[64];
  int n = parse_names(names, list, args, 64, a, d, opt->where);
  if (n < 0) return false;
  Module *cur = in;
  for (int i = 0; i < n; i++) {
    size_t errors = d->nerrors;
    Module *next = pass_run_arg(list[i], cur, a, d, opt->hook, opt->scope, args[i], opt->where);
    if (next && opt->verify && !verify_after(list[i], next, d, r)) {
      if (next != in) module_free(next);
      next = NULL;
    }
    if (cur != in && cur != next) module_free(cur);
    if (!next) {
      r->stopped = d->nerrors == errors;
      if (!r->stopped) r->failed = list[i];
      return false;
    }
    cur = next;
    if (opt->after) opt->after->fn(opt->after->user, list[i]->name, cur);
  }
  if (opt->typecheck && !opt->verify && !ty_recheck_module(cur, d)) {
    diag_note(d, (Span){0}, "the module produced by %s does not type-check", list[n - 1]->name);
    r->failed = list[n - 1];
    if (cur != in) module_free(cur);
    return false;
  }
  r->module = cur;
  r->diff = pass_diff_scoped(in, cur, opt->scope, &r->outside);
  r->changed = r->outside || strcmp(r->diff, "no change\n") != 0;
  return true;
}

void pass_print_after(FILE *out, const char *pass, const Module *m, const PassScope *scope) {
  for (int i = 0; i < m->ndefs; i++) {
    const Def *d = &m->defs[i];
    if ((d->kind != DEF_FUNC && d->kind != DEF_PRIM) || (scope && !scope->has(scope->user, d)))
      continue;
    StrBuf b = {0};
    if (d->kind == DEF_FUNC)
      print_func_def_to(&b, m, d->u.func, (PrintOptions){.meta_limit = PRINT_DISPLAY_META_LIMIT});
    else
      print_prim_func_to(&b, d->u.prim);
    fprintf(out, "; *** IR after %s on @%s ***\n%s", pass, def_name(d), b.data ? b.data : "");
    if (b.len && b.data[b.len - 1] != '\n') fputc('\n', out);
    sb_free(&b);
  }
}

void pass_result_free(PassResult *r) {
  free(r->diff);
  free(r->outside);
  memset(r, 0, sizeof *r);
}
