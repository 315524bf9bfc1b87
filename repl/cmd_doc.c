/* cmd_doc.c — `:doc OP` and `:info NAME`: an op's reference from its
 * registry row (signature, type rule, exec modes, gradient, meaning and an
 * example that runs, typed here), a definition's type, place, size,
 * callees and callers, a session variable's type and size.  `:help OP`
 * shows the same page; an unknown name gets the nearest op. */
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "ir/walk.h"
#include "ops/ops.h"
#include "repl/repl.h"

/* The example's type, typed in the session (one-line examples only). */
static char *example_type(Session *s, const char *ex) {
  if (strchr(ex, '\n')) return NULL;
  uint32_t file = diag_add_source(&s->diag, "<doc>", ex, strlen(ex));
  Arena a;
  arena_init(&a);
  Module view;
  Expr *e = session_parse_expr(s, diag_span(&s->diag, file, 0, (uint32_t)strlen(ex)), &a, &view);
  char *ty = e && e->ty ? print_type(e->ty) : NULL;
  arena_free(&a);
  return ty;
}

static const char *gradient_text(int index) {
  EngineOpGrad g = engine_op_grad(index);
  if (g == ENGINE_GRAD_NONE) return "none (the Gradient pass rejects it)";
  if (g == ENGINE_GRAD_ZERO) return "zero (constant almost everywhere in its float operands)";
  return "yes (ad/grad_rules*.c)";
}

static void print_example(const char *ex) {
  const char *p = ex;
  for (int first = 1; *p; first = 0) {
    size_t n = strcspn(p, "\n");
    printf("  %-9s %.*s\n", first ? "example:" : "", (int)n, p);
    p += n + (p[n] == '\n');
  }
}

/* The op's page, as :doc and :help show it. */
void repl_op_doc(Session *s, int index) {
  const OpDef *d = ops_get(index);
  char *sig = ops_signature(d);
  printf("%s\n  %s\n", sig, d->doc ? d->doc : "");
  free(sig);
  char *ty = d->example ? example_type(s, d->example) : NULL;
  if (d->rule) printf("  %-9s %s\n", "type:", d->rule);
  if (ty) printf("  %-9s %s for the example\n", d->rule ? "" : "type:", ty);
  free(ty);
  printf("  %-9s %s, pattern %s\n", "family:", ops_family(index), op_pattern_name(d->pattern));
  const char *k = engine_op_has_kernel(index) ? "reference kernel" : "run by the evaluator";
  if (engine_op_lowers(index))
    printf("  %-9s interp: %s; jit: compiled (TIR compute rule)\n", "exec:", k);
  else
    printf("  %-9s interp and jit: %s only (no TIR compute rule)\n", "exec:", k);
  printf("  %-9s %s\n", "gradient:", gradient_text(index));
  if (d->example) print_example(d->example);
}

static const char *const *op_names(void) {
  static const char **names;
  if (names) return names;
  names = calloc((size_t)ops_count() + 1, sizeof *names);
  if (!names) rly_oom();
  for (int i = 0; i < ops_count(); i++) names[i] = ops_get(i)->name;
  return names;
}

static RunStatus unknown_op(Session *s, const char *name, Span where) {
  const char *near = repl_nearest(op_names(), name);
  char hint[160];
  if (near)
    snprintf(hint, sizeof hint, "did you mean `%s`? (`:doc %s`)", near, near);
  else
    snprintf(hint, sizeof hint, "`rly --list-ops` lists the ops");
  session_error(s, where, hint, "no op named `%s`", name);
  return RUN_ERROR;
}

RunStatus repl_cmd_doc(Session *s, const char *args, Span where) {
  if (!*args) {
    session_error(s, where, "usage: :doc OP (`rly --list-ops` lists them)", ":doc needs an op");
    return RUN_ERROR;
  }
  int i = ops_lookup(args);
  if (i < 0) return unknown_op(s, args, where);
  repl_op_doc(s, i);
  return RUN_OK;
}

/* ───────────────────────── :info ───────────────────────── */

typedef struct Calls {
  const char *self;
  PtrVec names; /* distinct global names, in order of first use */
} Calls;

static bool collect_call(void *ctx, Expr *e) {
  Calls *c = ctx;
  if (e->kind != EX_GLOBAL) return true;
  for (size_t i = 0; i < c->names.len; i++)
    if (strcmp(c->names.items[i], e->u.global.name) == 0) return true;
  vec_push(&c->names, (void *)e->u.global.name);
  return true;
}

static bool count_node(void *ctx, Expr *e) {
  (void)e;
  ++*(int *)ctx;
  return true;
}

static bool calls_name(FuncDef *f, const char *name) {
  Calls c = {0};
  expr_walk(f->fn->body, collect_call, &c);
  bool found = false;
  for (size_t i = 0; i < c.names.len && !found; i++) found = strcmp(c.names.items[i], name) == 0;
  vec_free(&c.names);
  return found;
}

static void print_callers(Session *s, const char *name) {
  const Module *m = session_module(s);
  int n = 0;
  printf("  %-10s", "called by:");
  for (int i = 0; i < m->ndefs; i++) {
    const Def *d = &m->defs[i];
    if (d->kind != DEF_FUNC || strcmp(d->u.func->name, name) == 0) continue;
    if (calls_name(d->u.func, name)) printf("%s@%s", n++ ? ", " : " ", d->u.func->name);
  }
  puts(n ? "" : " (nothing)");
}

static void info_func(Session *s, FuncDef *f) {
  char *ty = f->ty ? print_type(f->ty) : NULL;
  printf("@%s : %s\n", f->name, ty ? ty : "?");
  free(ty);
  uint32_t line, col, local;
  const SourceFile *src = diag_span_source(&s->diag, f->span, &local);
  diag_line_col(&s->diag, f->span, &line, &col);
  if (src) printf("  %-10s %s:%u:%u\n", "defined:", src->name, line, col);
  int nodes = 0;
  expr_walk(f->fn->body, count_node, &nodes);
  printf("  %-10s %d parameter%s, %d expression nodes\n", "size:", f->fn->nparams,
         f->fn->nparams == 1 ? "" : "s", nodes);
  Calls c = {.self = f->name};
  expr_walk(f->fn->body, collect_call, &c);
  printf("  %-10s", "calls:");
  for (size_t i = 0; i < c.names.len; i++)
    printf("%s@%s", i ? ", " : " ", (const char *)c.names.items[i]);
  puts(c.names.len ? "" : " (nothing)");
  vec_free(&c.names);
  print_callers(s, f->name);
}

/* Bytes of a value of type t, or -1 when a dim is known only at run time. */
static int64_t type_bytes(const Type *t) {
  if (t->kind == TY_TUPLE) {
    int64_t sum = 0;
    for (int i = 0; i < t->u.tuple.n; i++) {
      int64_t b = type_bytes(t->u.tuple.fields[i]);
      if (b < 0) return -1;
      sum += b;
    }
    return sum;
  }
  if (t->kind != TY_TENSOR) return -1;
  int64_t n = dtype_bytes(t->u.tensor.dtype);
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    if (t->u.tensor.dims[i].kind != DIM_CONST) return -1;
    n *= t->u.tensor.dims[i].value;
  }
  return n;
}

static RunStatus info_var(Session *s, const char *name, Span where) {
  if (!engine_var(session_engine(s), name + 1)) {
    session_error(s, where, "`let %x = e;` binds one", "no session variable `%s`", name);
    return RUN_ERROR;
  }
  Arena a;
  arena_init(&a);
  Module view;
  Expr *e = session_parse_expr(s, where, &a, &view);
  if (e) {
    char *ty = print_type(e->ty);
    int64_t b = type_bytes(e->ty);
    printf("%s : %s\n", name, ty);
    if (b >= 0)
      printf("  %-10s %lld bytes\n", "size:", (long long)b);
    else
      printf("  %-10s not a tensor of static shape (or a tuple of them)\n", "size:");
    free(ty);
  }
  arena_free(&a);
  return e ? RUN_OK : RUN_ERROR;
}

RunStatus repl_cmd_info(Session *s, const char *args, Span where) {
  if (!*args) {
    session_error(s, where, "usage: :info OP | @f | %x", ":info needs a name");
    return RUN_ERROR;
  }
  if (args[0] == '%') return info_var(s, args, where);
  if (args[0] == '@') {
    FuncDef *f = module_func(session_module(s), args + 1);
    if (f) return info_func(s, f), RUN_OK;
    session_error(s, where, "`:browse` lists the definitions", "no function named `%s`", args);
    return RUN_ERROR;
  }
  return repl_cmd_doc(s, args, where);
}
