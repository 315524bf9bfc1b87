/* cmd_lower.c — `:dump tir @f`: the prim functions the jit execution mode
 * lowers @f's fused op groups to (repl_eval_lowered), each printed once in
 * the order @f calls them; a prim function @p prints itself.  A function
 * with nothing to lower says so (it runs on the reference kernels). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir.h"
#include "ops/ops.h"
#include "passes/rewrite.h"
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

static void print_prim(const PrimFunc *p) {
  StrBuf b = {0};
  print_prim_func_to(&b, p);
  fputs(b.data ? b.data : "", stdout);
  sb_free(&b);
}

/* "@name" from the arguments, or NULL. */
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

/* `:dump tir @f`: a prim function as it is; for a Relay function, the
 * prim functions its lowered form calls (what the JIT would compile). */
RunStatus repl_dump_tir(Session *s, const char *args, Span where) {
  char name[256];
  if (!global_arg(args, name, sizeof name)) {
    session_error(s, where, "write `:dump tir @f`", "expected a function or prim name");
    return RUN_ERROR;
  }
  const Def *d = module_lookup(session_module(s), name);
  if (!d || (d->kind != DEF_FUNC && d->kind != DEF_PRIM)) {
    session_error(s, where, NULL, "@%s is not a function or prim function", name);
    return RUN_ERROR;
  }
  if (d->kind == DEF_PRIM) {
    print_prim(d->u.prim);
    return RUN_OK;
  }
  Module *lm = repl_eval_lowered(s->ev, session_module(s), NULL);
  FuncDef *f = lm ? module_func(lm, name) : NULL;
  Collect c = {lm, {0}};
  if (f) expr_walk(f->fn->body, collect_visit, &c);
  if (!c.prims.len) printf("// @%s has no fused kernels: it runs on the reference kernels\n", name);
  for (size_t i = 0; i < c.prims.len; i++) {
    if (i) putchar('\n');
    print_prim(c.prims.items[i]);
  }
  vec_free(&c.prims);
  return RUN_OK;
}
