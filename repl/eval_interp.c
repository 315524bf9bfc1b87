/* eval_interp.c — the evaluator: the AST interpreter (interp/interp.h), and
 * the jit execution mode on top of it.
 *
 * In jit mode (InterpOptions.exec_jit, the default) every function of the
 * module and the expression being evaluated go through FuseOps and the
 * lowering to TIR (passes/lower.h) first: pure op calls become call_tir of
 * prim functions, which call_tir runs through the JIT (or the TIR
 * interpreter).  A definition is lowered once: the result is cached by its
 * FuncDef pointer, which stays the same while the definition is unchanged
 * (the session replaces modules, not unchanged definitions).  The lowered
 * program is evaluated against a copy of the module holding the lowered
 * definitions and the prim functions.  Anything that cannot be lowered
 * stays as it was, so jit mode never adds an error.  When the JIT module
 * cannot be loaded, the program runs as written (the TIR interpreter would
 * be slower than the reference kernels); the module is only loaded when the
 * input can reach a kernel.  Interp mode evaluates the program as written.
 *
 * A value bound to a session variable is rooted by interp_bind; the value
 * of an expression stays rooted until the next evaluation, long enough to
 * print it.  Lowered IR lives in the evaluator's arena for the session
 * (closures may point into it). */
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "jit/jit.h"
#include "passes/lower.h"
#include "passes/rewrite.h"
#include "repl/repl.h"

struct Evaluator {
  Interp *in;
  Arena arena;     /* lowered IR */
  Lowerer *low;
  RwMap lowered;   /* FuncDef* (the session's) → FuncDef* (lowered, or the same) */
  const Module *cur;
  /* The lowered view of the session's module, rebuilt only when the module
   * changed (another pointer, or other definitions: a released module's
   * memory may be reused). */
  Module *view;
  const Module *view_src;
  Def *view_defs; /* view_src's definitions when the view was built */
  int view_ndefs;
  int jit_state;  /* 0: not asked yet, 1: the JIT loads, 2: it does not */
};

static bool name_taken(void *user, const char *name) {
  Evaluator *ev = user;
  return ev->cur && module_lookup(ev->cur, name) != NULL;
}

Evaluator *repl_eval_new(DiagCtx *d) {
  Evaluator *ev = calloc(1, sizeof *ev);
  if (!ev) rly_oom();
  ev->in = interp_new(d);
  jit_register_executor();
  arena_init(&ev->arena);
  ev->low = lower_new(&ev->arena, name_taken, ev);
  return ev;
}

void repl_eval_free(Evaluator *ev) {
  if (!ev) return;
  interp_free(ev->in);
  if (ev->view) module_free(ev->view);
  free(ev->view_defs);
  lower_free(ev->low);
  rw_map_free(&ev->lowered);
  arena_free(&ev->arena);
  free(ev);
}

/* ───────────────────────────── lowering ───────────────────────────── */

static FuseOptions jit_fuse_options(void) {
  FuseOptions o = fuse_options_default();
  o.need_compute = true;
  return o;
}

static FuncDef *lower_def(Evaluator *ev, const Module *m, FuncDef *fd) {
  FuncDef *have = rw_map_get(&ev->lowered, fd);
  if (have) return have;
  FuseOptions o = jit_fuse_options();
  Function *f = fuse_function(&ev->arena, m, fd->fn, &o, NULL);
  if (f != fd->fn) f = lower_function(ev->low, f);
  FuncDef *r = fd;
  if (f != fd->fn) {
    r = ARENA_NEW(&ev->arena, FuncDef);
    *r = *fd;
    r->fn = f;
  }
  rw_map_put(&ev->lowered, fd, r);
  return r;
}

/* A prim function of ours whose name a definition of m now uses. */
static bool prims_clash(Evaluator *ev, const Module *m) {
  for (int i = 0; i < lower_prim_count(ev->low); i++) {
    const Def *d = module_lookup(m, lower_prim(ev->low, i)->name);
    if (d && (d->kind != DEF_PRIM || d->u.prim != lower_prim(ev->low, i))) return true;
  }
  return false;
}

/* The module with lowered definitions and the prim functions they call;
 * NULL when our prim names clash with the user's (then: interp mode). */
static Module *lowered_module(Evaluator *ev, Module *m) {
  ev->cur = m;
  if (prims_clash(ev, m)) return NULL;
  Module *lm = module_copy(m, &ev->arena);
  for (int i = 0; i < m->ndefs; i++) {
    if (m->defs[i].kind != DEF_FUNC) continue;
    FuncDef *fd = m->defs[i].u.func, *l = lower_def(ev, m, fd);
    if (l != fd) module_add(lm, (Def){.kind = DEF_FUNC, .u.func = l});
  }
  return lm;
}

static void add_prims(Evaluator *ev, Module *lm) {
  for (int i = 0; i < lower_prim_count(ev->low); i++) {
    PrimFunc *p = lower_prim(ev->low, i);
    if (!module_lookup(lm, p->name)) module_add(lm, (Def){.kind = DEF_PRIM, .u.prim = p});
  }
}

static bool view_current(const Evaluator *ev, const Module *m) {
  return ev->view && ev->view_src == m && ev->view_ndefs == m->ndefs &&
         (!m->ndefs || memcmp(ev->view_defs, m->defs, sizeof(Def) * (size_t)m->ndefs) == 0);
}

static void remember_view(Evaluator *ev, Module *lm, const Module *m) {
  if (ev->view) module_free(ev->view);
  ev->view = lm, ev->view_src = m, ev->view_ndefs = m->ndefs;
  free(ev->view_defs);
  ev->view_defs = malloc(sizeof(Def) * (size_t)(m->ndefs + 1));
  if (!ev->view_defs) rly_oom();
  if (m->ndefs) memcpy(ev->view_defs, m->defs, sizeof(Def) * (size_t)m->ndefs);
}

Module *repl_eval_lowered(Evaluator *ev, Module *m, Expr **e) {
  if (!view_current(ev, m)) {
    Module *built = lowered_module(ev, m);
    if (!built) return NULL;
    remember_view(ev, built, m);
  }
  Module *lm = ev->view;
  ev->cur = m;
  if (e && *e) {
    FuseOptions o = jit_fuse_options();
    Expr *f = fuse_expr(&ev->arena, m, *e, &o);
    if (f != *e) *e = lower_expr(ev->low, f);
  }
  add_prims(ev, lm);
  ev->cur = NULL;
  return lm;
}

/* Does evaluating e (against lm) possibly reach a kernel of ours: a
 * call_tir in e or in a definition it names, transitively?  Only then is
 * the JIT loaded (dlopen of LLVM: too slow for every input). */
typedef struct Reach {
  const Module *m;
  PtrVec todo;
  StrMap seen;
  bool kernel;
} Reach;

static bool reach_visit(void *ctx, Expr *e) {
  Reach *r = ctx;
  if (e->kind == EX_OP && strcmp(e->u.op.name, "call_tir") == 0) r->kernel = true;
  if (e->kind == EX_GLOBAL && !strmap_get(&r->seen, e->u.global.name)) {
    strmap_put(&r->seen, e->u.global.name, (void *)1);
    FuncDef *f = module_func(r->m, e->u.global.name);
    if (f) vec_push(&r->todo, f->fn->body);
  }
  return !r->kernel;
}

static bool reaches_kernel(const Module *lm, Expr *e) {
  Reach r = {.m = lm};
  vec_push(&r.todo, e);
  while (r.todo.len && !r.kernel) rw_walk(vec_pop(&r.todo), reach_visit, &r);
  vec_free(&r.todo);
  strmap_free(&r.seen);
  return r.kernel;
}

/* ───────────────────────────── evaluation ───────────────────────────── */

bool repl_eval(Evaluator *ev, Module *m, Expr *e, Var *bind, char **text) {
  if (text) *text = NULL;
  Module *run = m;
  if (interp_options(ev->in)->exec_jit) {
    Expr *le = e;
    Module *lm = repl_eval_lowered(ev, m, &le);
    /* Without the JIT, kernels would run on the TIR interpreter, slower
     * than the reference kernels: then run the program as written. */
    if (lm && ev->jit_state == 0 && lower_prim_count(ev->low) > 0 && reaches_kernel(lm, le))
      ev->jit_state = jit_available() ? 1 : 2;
    if (lm && ev->jit_state != 2) run = lm, e = le;
  }
  Value *v = interp_eval(ev->in, run, e);
  if (!v) return false;
  if (bind) interp_bind(ev->in, bind, v);
  if (text) *text = interp_format(ev->in, v);
  return true;
}

void repl_eval_unbind(Evaluator *ev, Var *v) { interp_bind(ev->in, v, NULL); }
void repl_eval_reset(Evaluator *ev) { interp_reset(ev->in); }
void repl_eval_collect(Evaluator *ev) { interp_gc(ev->in); }
void repl_eval_set_print_limit(Evaluator *ev, int64_t n) {
  interp_options(ev->in)->print_limit = n;
}
void repl_eval_set_max_depth(Evaluator *ev, int64_t n) { interp_options(ev->in)->max_depth = n; }
int64_t repl_eval_max_depth(Evaluator *ev) { return interp_options(ev->in)->max_depth; }
void repl_eval_set_prng_original(Evaluator *ev, bool original) {
  interp_options(ev->in)->prng_original = original;
}
bool repl_eval_prng_original(Evaluator *ev) { return interp_options(ev->in)->prng_original; }
void repl_eval_set_exec_jit(Evaluator *ev, bool jit) { interp_options(ev->in)->exec_jit = jit; }
bool repl_eval_exec_jit(Evaluator *ev) { return interp_options(ev->in)->exec_jit; }
void repl_eval_interrupt(void) { rt_interrupt(); }
void repl_eval_seed(Evaluator *ev, int64_t seed) { interp_seed(ev->in, seed); }
