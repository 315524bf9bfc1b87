/* cmd_lower.c — what `:dump tir|llvm|asm NAME` shows: the prim functions a
 * name stands for.  A prim function of the module or a kernel the jit
 * mode lowered (the `@fused_...` names `:kernels` and `:profile` list) is
 * itself; a Relay function @f stands for the prim functions its lowered
 * form calls (repl_eval_lowered), each once in the order @f calls them.
 * An unknown name lists the kernel names (did you mean). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir.h"
#include "ir/walk.h"
#include "ops/ops.h"
#include "repl/repl.h"

typedef struct Collect {
  const Module *m;
  PtrVec prims;
} Collect;

static bool collect_visit(void *ctx, Expr *e) {
  Collect *c = ctx;
  if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP || e->u.call.nargs < 1) return true;
  if (!ops_has_flag(e->u.call.fn->u.op.index, OP_CALL_TIR)) return true;
  const Expr *g = e->u.call.args[0];
  PrimFunc *p = g->kind == EX_GLOBAL ? module_prim(c->m, g->u.global.name) : NULL;
  for (size_t i = 0; p && i < c->prims.len; i++)
    if (c->prims.items[i] == p) p = NULL;
  if (p) vec_push(&c->prims, p);
  return true;
}

/* "name" of "@name" from the arguments, or NULL. */
static const char *global_arg(const char *args, char *buf, size_t n) {
  while (isspace((unsigned char)*args)) args++;
  if (*args != '@') return NULL;
  size_t len = 0;
  for (args++; args[len] && !isspace((unsigned char)args[len]); len++) {
  }
  if (!len || len >= n) return NULL;
  memcpy(buf, args, len);
  buf[len] = 0;
  return buf;
}

/* The kernel names (the module's prim functions, then the jit's), for the
 * error of an unknown name: NULL-terminated, malloc'd. */
static const char **kernel_names(Session *s) {
  const Module *m = session_module(s);
  Engine *e = session_engine(s);
  const char **v = calloc((size_t)(m->ndefs + engine_kernel_count(e) + 1), sizeof *v);
  if (!v) rly_oom();
  int n = 0;
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_PRIM) v[n++] = m->defs[i].u.prim->name;
  for (int i = 0; i < engine_kernel_count(e); i++)
    if (!module_lookup(m, engine_kernel_at(e, i)->name)) v[n++] = engine_kernel_at(e, i)->name;
  return v;
}

static void unknown_name(Session *s, const char *name, Span where) {
  const char **names = kernel_names(s);
  const char *near = repl_nearest(names, name);
  StrBuf b = {0};
  if (near) sb_printf(&b, "did you mean `@%s`? ", near);
  if (names[0]) sb_puts(&b, "the kernels are");
  for (int i = 0; names[i] && i < 24; i++) sb_printf(&b, "%s @%s", i ? "," : "", names[i]);
  if (!names[0]) sb_puts(&b, "no kernel was lowered yet (run an expression, or `:pass jit`)");
  session_error(s, where, b.data, "no function, prim function or kernel `@%s`", name);
  sb_free(&b);
  free(names);
}

/* The prim functions a Relay function's lowered form calls. */
static void lowered_prims(Session *s, const char *name, PtrVec *out) {
  Module *lm = repl_eval_lowered(s->ev, session_module(s), NULL);
  FuncDef *f = lm ? module_func(lm, name) : NULL;
  Collect c = {lm, {0}};
  if (f) expr_walk(f->fn->body, collect_visit, &c);
  *out = c.prims;
}

bool repl_dump_prims(Session *s, const char *args, Span where, PtrVec *out, bool *func) {
  char name[256];
  *func = false;
  memset(out, 0, sizeof *out);
  if (!global_arg(args, name, sizeof name)) {
    session_error(s, where, "write `:dump tir @f` or `:dump asm @fused_...` (:kernels lists them)",
                  "expected a function, prim function or kernel name");
    return false;
  }
  const Def *d = module_lookup(session_module(s), name);
  PrimFunc *k = d ? NULL : engine_kernel(session_engine(s), name);
  if (d && d->kind == DEF_FUNC) {
    *func = true;
    lowered_prims(s, name, out);
  } else if ((d && d->kind == DEF_PRIM) || k) {
    vec_push(out, d ? (PrimFunc *)prim_to_run(d->u.prim) : k); /* as it runs */
  } else if (d) {
    session_error(s, where, NULL, "@%s is not a function, prim function or kernel", name);
    return false;
  } else {
    unknown_name(s, name, where);
    return false;
  }
  if (!out->len) printf("// @%s has no fused kernels: it runs on the reference kernels\n", name);
  return true;
}

/* `:dump tir NAME`: the prim functions NAME stands for, as TIR. */
RunStatus repl_dump_tir(Session *s, const char *args, Span where) {
  PtrVec ps;
  bool func;
  if (!repl_dump_prims(s, args, where, &ps, &func)) return RUN_ERROR;
  for (size_t i = 0; i < ps.len; i++) {
    StrBuf b = {0};
    print_prim_func_to(&b, ps.items[i]);
    printf("%s%s", i ? "\n" : "", b.data ? b.data : "");
    sb_free(&b);
  }
  vec_free(&ps);
  return RUN_OK;
}
