/* engine.c — the pipeline (engine.h): options and the environment, parsing
 * and checking, passes by name, the jit mode's lowering, evaluation.
 *
 * In jit mode every function of the module and the expression being
 * evaluated go through the jit's pipeline (JIT_PIPELINE below: graph
 * passes, FuseOps and the lowering to TIR, lower/lower.h):
 * pure op calls become call_tir of prim functions, which call_tir runs on
 * the registered compiled executor (the JIT, rt/exec.h) or the TIR
 * interpreter.  The lowered program is evaluated against a copy of the
 * module holding the lowered definitions and the prim functions.  The
 * program the engine keeps for a session (module, session variables,
 * transactions, the prelude) is in program.c, input.c and prelude.c. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ad/grad.h"
#include "engine/engine_int.h"
#include "engine/schedule.h"
#include "engine/specialize.h"
#include "engine/tune_kernel.h"
#include "ir/walk.h"
#include "jit/jit.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "rt/exec.h"
#include "rt/rt.h"
#include "types/types.h"

struct Engine {
  EngineOptions opt;
  DiagCtx *diag;
  Interp *in;
  Arena arena; /* lowered IR */
  Lowerer *low;
  PtrMap lowered; /* FuncDef* (the session's) → FuncDef* (lowered, or the same) */
  const Module *cur;
  /* The lowered view of the session's module, rebuilt only when its
   * definitions changed (view_current), or the options (view_src = NULL). */
  Module *view;
  const Module *view_src;
  Module *view_prep; /* the view's module after the graph passes (specializations start there) */
  SpecCache *spec;   /* shape-specialised copies (specialize.h) */
  Def *view_defs;    /* view_src's definitions when the view was built */
  int view_ndefs;
  int jit_state;   /* 0: not asked yet, 1: the JIT loads, 2: it does not */
  int precompiled; /* lowered prims handed to jit_precompile so far */
  double lower_ms; /* wall time in the jit mode's graph passes, FuseOps and lowering to TIR */
  Program prog;    /* the module, session variables, transactions (program.c) */
  RtCtx *rt;       /* its run-time state: memory limit and count, caches, interrupt (rt/rt.h) */
  JitCtx *jit;     /* its JIT options, kernels and run hook (jit/jit.h) */
};

/* ───────────────────────────── options ───────────────────────────── */

/* The options' rows, defaults and environment are options.c's. */
void engine_set_options(Engine *e, const EngineOptions *o) {
  engine_enter(e);
  if (o->approx_math != e->opt.approx_math || o->fast_math != e->opt.fast_math ||
      o->print_after_all != e->opt.print_after_all)
    e->view_src = NULL; /* the jit mode's passes change: lower again */
  e->opt = *o;
  InterpOptions *io = interp_options(e->in);
  io->exec_jit = o->exec == EXEC_JIT;
  io->jit_require = o->jit_require;
  io->no_fast = !o->fast_path;
  io->no_plan = !o->planned;
  io->fast_trace = o->fast_trace;
  io->print_limit = o->print_limit;
  io->max_depth = o->max_depth;
  rt_set_max_bytes((size_t)o->max_memory);
  io->prng_original = o->prng_original;
  jit_set_opt_level(o->opt_level);
  jit_set_contract(o->fp_contract);
  jit_set_vector_math(o->fast_math && o->approx_math);
  jit_set_module_path(o->jit_module[0] ? o->jit_module : NULL);
  jit_set_cache_dir(o->disk_cache && o->cache_dir[0] ? o->cache_dir : NULL);
  jit_set_threads(o->threads);
  lower_set_fast_math(e->low, o->fast_math);
  fuse_set_default_max_depth(o->fuse_max_depth);
}

const EngineOptions *engine_options(const Engine *e) { return &e->opt; }
Program *engine_program(const Engine *e) { return (Program *)&e->prog; }
Interp *engine_interp(Engine *e) { return e->in; }
DiagCtx *engine_diag(Engine *e) { return e->diag; }

/* ───────────────────────────── life ───────────────────────────── */

static bool spec_get(void *user, const char *name, const Function *called, Value **args, int n,
                     const Function **fn, const Module **mod);
static void spec_refused_cb(void *user, const Function *fn);

static bool name_taken(void *user, const char *name) {
  Engine *e = user;
  return e->cur && module_lookup(e->cur, name) != NULL;
}

/* The run-time and JIT state are the engine's, made current on this
 * thread (thread-local, rt/rt.h): every entry from another thread, or
 * after another engine ran on this one, enters it again (engine_enter). */
void engine_enter(Engine *e) {
  rt_ctx_enter(e->rt);
  jit_ctx_enter(e->jit);
  fuse_set_default_max_depth(e->opt.fuse_max_depth);
}

Engine *engine_new(const EngineOptions *o, DiagCtx *d) {
  Engine *e = calloc(1, sizeof *e);
  if (!e) rly_oom();
  e->rt = rt_ctx_new();
  e->jit = jit_ctx_new();
  engine_enter(e);
  rt_ctx_take_signals(e->rt); /* Ctrl-C stops the first engine alive (the REPL's) */
  e->diag = d;
  e->in = interp_new(d);
  e->spec = spec_cache_new();
  interp_set_specializer(e->in, &(InterpSpecializer){spec_get, spec_refused_cb, e});
  arena_init(&e->arena);
  e->low = lower_new(&e->arena, name_taken, e);
  lower_set_knobs_hook(e->low, engine_kernel_knobs, e); /* the tuning database's kernel records */
  jit_register_executor();
  engine_set_options(e, o);
  program_init(&e->prog);
  return e;
}

void engine_free(Engine *e) {
  if (!e) return;
  RtCtx *prev_rt = rt_ctx_enter(e->rt);
  JitCtx *prev_jit = jit_ctx_enter(e->jit);
  const RtExecutor *x = rt_executor(); /* its kernels point into this engine's IR */
  if (x && x->forget) x->forget();
  program_free(&e->prog);
  spec_cache_free(e->spec, e->in);
  interp_free(e->in);
  if (e->view) module_free(e->view);
  if (e->view_prep) module_free(e->view_prep);
  free(e->view_defs);
  lower_free(e->low);
  ptrmap_free(&e->lowered);
  arena_free(&e->arena);
  rt_ctx_drop_signals(e->rt);
  rt_ctx_enter(prev_rt == e->rt ? NULL : prev_rt); /* the engine used before, if another */
  jit_ctx_enter(prev_jit == e->jit ? NULL : prev_jit);
  rt_ctx_free(e->rt); /* after the values: tensors still alive keep it */
  jit_ctx_free(e->jit);
  free(e);
}

/* ───────────────────────────── parse, check, passes ───────────────────────────── */

/* Type-checks the top-level expressions of a script in order; a session
 * `let` gives its variable the value's type for the items after it. */
static bool check_items(Module *m, ParseResult *r, DiagCtx *d) {
  bool ok = true;
  for (int i = 0; i < r->nitems; i++) {
    ScriptItem *it = &r->items[i];
    if ((it->kind != ITEM_EXPR && it->kind != ITEM_LET) || !it->expr) continue;
    if (!ty_check_expr(m, it->expr, d))
      ok = false;
    else if (it->kind == ITEM_LET && it->var)
      it->var->annot = it->expr->ty;
  }
  return ok;
}

Module *engine_parse(Engine *e, const Module *base, Arena *a, uint32_t file, int nsession,
                     Var **session, ParseResult *items) {
  Module *m = module_copy(base, a);
  ParseOptions po = {.nsession = nsession, .session = session};
  ParseResult r = parse_script(m, e->diag, file, &po);
  bool ok = r.ok && ty_check_module(m, e->diag) &&
            engine_apply_schedules(m, e->diag, e->opt.verify_schedules) &&
            check_items(m, &r, e->diag);
  if (items) *items = r;
  if (ok) return m;
  module_free(m);
  return NULL;
}

static void print_after(void *user, const char *pass, const Module *m);

static Module *jit_passes(Engine *e, Module *m, Arena *a, const PassAfter *after) {
  JitWatch w = {.after = after};
  Module *out = engine_jit_pipeline(e, m, a, &w);
  if (out && !ty_recheck_module(out, e->diag)) {
    module_free(out);
    return NULL;
  }
  return out;
}

/* `jit` names the jit's pipeline (engine_jit_pipeline). */
Module *engine_passes(Engine *e, Module *m, Arena *a, const char *names) {
  engine_enter(e);
  PassOptions po = pass_options_default();
  PassAfter after = {print_after, e};
  if (e->opt.print_after_all) po.after = &after;
  if (strcasecmp(names, "jit") == 0) return jit_passes(e, m, a, po.after);
  PassResult r = {0};
  e->cur = m;
  Module *out = pass_pipeline(names, m, a, e->diag, &po, &r) ? r.module : NULL;
  e->cur = NULL;
  pass_result_free(&r);
  return out;
}

/* ───────────────────────────── importing ───────────────────────────── */

/* ONNX's Gradient op: f added to a copy of m and differentiated by the
 * Gradient pass; @f_grad, typed, or NULL after diagnostics. */
static FuncDef *import_gradient(void *user, const Module *m, FuncDef *f) {
  Engine *e = user;
  Module *in = module_copy(m, m->arena);
  module_add(in, (Def){.kind = DEF_FUNC, .u.func = f});
  Module *out =
      pass_run_arg(pass_lookup("Gradient"), in, m->arena, e->diag, NULL, NULL, f->name, (Span){0});
  const char *name = arena_printf(m->arena, "%s_grad", f->name);
  FuncDef *g = out && ty_check_def(out, name, e->diag) ? module_func(out, name) : NULL;
  if (out) module_free(out);
  module_free(in);
  return g;
}

static bool has_gradient(int op) { return grad_rule(op) != NULL; }

Module *engine_import_onnx(Engine *e, const Module *base, Arena *a, const char *path,
                           const char *func, bool bind, Span where, OnnxWeights *w) {
  engine_enter(e);
  OnnxWeights local;
  if (!w) w = &local;
  Module *m = module_copy(base, a);
  OnnxImportOptions o = {.func = func,
                         .where = where,
                         .gradient = import_gradient,
                         .differentiable = has_gradient,
                         .user = e};
  if (!onnx_import(path, m, &o, e->diag, w)) {
    module_free(m);
    return NULL;
  }
  Module *out = m;
  if (bind && w->n) {
    BindParamsSpec spec = {func, w->n, w->names, w->values, path, where};
    out = pass_bind(&spec, m, a, e->diag, NULL);
    module_free(m);
    if (!out) return NULL;
  }
  if (!ty_check_module(out, e->diag)) {
    diag_note(e->diag, where, "the function imported from %s does not type-check", path);
    module_free(out);
    return NULL;
  }
  return out;
}

bool engine_export_onnx(Engine *e, const Module *m, const char *func, const char *path, Span where,
                        OnnxExportInfo *info) {
  engine_enter(e);
  return onnx_export(m, func, path, where, e->diag, info);
}

/* ───────────────────────────── lowering ───────────────────────────── */

/* The jit's (fuse_options_jit), with this engine's max_depth. */
static FuseOptions jit_fuse_options(const Engine *e) {
  FuseOptions o = fuse_options_jit();
  o.max_depth = e->opt.fuse_max_depth;
  return o;
}

/* Whether a tensor of type t could not exist: its bytes overflow or pass
 * the memory limit. */
static bool type_too_big(const Type *t) {
  if (!t || t->kind != TY_TENSOR) return false;
  int64_t bytes = dtype_bytes(t->u.tensor.dtype);
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    const Dim *d = &t->u.tensor.dims[i];
    if (d->kind == DIM_CONST && d->value == 0) return false;
  }
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    const Dim *d = &t->u.tensor.dims[i];
    if (d->kind != DIM_CONST) continue;
    if (bytes > INT64_MAX / d->value) return true;
    bytes *= d->value;
  }
  return (uint64_t)bytes > rt_max_bytes();
}

static bool too_big_visit(void *ctx, Expr *e) {
  if (type_too_big(e->ty)) *(bool *)ctx = true;
  return !*(bool *)ctx;
}

/* Whether e has a value no memory could hold (`ones(shape=[2^62, 4])`).
 * Such a program is not fused: a fused kernel computes its intermediate
 * values without allocating them and would run for ages where the
 * reference kernels fail at once, out of memory; unfused, both modes fail
 * alike. */
static bool holds_too_big(Expr *e) {
  bool big = false;
  expr_walk(e, too_big_visit, &big);
  return big;
}

static FuncDef *lower_def(Engine *e, const Module *m, FuncDef *fd) {
  FuncDef *have = ptrmap_get(&e->lowered, fd);
  if (have) return have;
  if (holds_too_big(fd->fn->body)) {
    ptrmap_put(&e->lowered, fd, fd);
    return fd;
  }
  FuseOptions o = jit_fuse_options(e);
  Function *f = fuse_function(&e->arena, m, fd->fn, &o, NULL);
  f = lower_function(e->low, f); /* also the groups of a module fused by :pass FuseOps */
  FuncDef *r = fd;
  if (f != fd->fn) {
    r = ARENA_NEW(&e->arena, FuncDef);
    *r = *fd;
    r->fn = f;
  }
  ptrmap_put(&e->lowered, fd, r);
  return r;
}

/* A prim function of ours whose name a definition of m now uses. */
static bool prims_clash(Engine *e, const Module *m) {
  for (int i = 0; i < lower_prim_count(e->low); i++) {
    const Def *d = module_lookup(m, lower_prim(e->low, i)->name);
    if (d && (d->kind != DEF_PRIM || d->u.prim != lower_prim(e->low, i))) return true;
  }
  return false;
}

/* ───────────────────────────── the jit's pipeline ───────────────────────────── */

/* The jit mode's pipeline, the one definition of what a compile runs (the
 * engine's lowering, `:passes`, `:pass jit`, `:step jit` and print-after-all
 * read it).  X(pass, when): JIT_PRODUCTS on a module with a 2-D convolution
 * or a product (batch norms become arithmetic folded into the weights,
 * convolutions move to blocked layouts and products with constant weights
 * to nn.contrib_dense_pack, their weights packed once), JIT_TRANSCENDENTAL
 * on one with exp/tanh/erf/sigmoid/softmax/power; both only under fast math
 * (they change rounding).  JitFuseOps is FuseOps with the jit's options
 * (fuse_options_jit); LowerTIR turns each group into call_tir of a prim
 * function.  Unwatched, the last two run per definition, cached
 * (lower_def: the same fuse_function and lower_function). */
#define JIT_PIPELINE(X)                \
  X("SimplifyInference", JIT_PRODUCTS) \
  X("FoldConstant", JIT_PRODUCTS)      \
  X("FoldScaleAxis", JIT_PRODUCTS)     \
  X("AlterOpLayout", JIT_PRODUCTS)     \
  X("FoldConstant", JIT_PRODUCTS)      \
  X("FastMath", JIT_TRANSCENDENTAL)    \
  X("JitFuseOps", JIT_ALWAYS)          \
  X("LowerTIR", JIT_ALWAYS)

typedef enum JitWhen { JIT_ALWAYS, JIT_PRODUCTS, JIT_TRANSCENDENTAL } JitWhen;

static const struct {
  const char *pass;
  JitWhen when;
} jit_steps[] = {
#define X(p, w) {p, w},
    JIT_PIPELINE(X)
#undef X
};

enum { JIT_NSTEPS = (int)(sizeof jit_steps / sizeof jit_steps[0]) };

static const char *const jit_when_text[] = {
    "always", "on a module with a convolution or a product",
    "on a module with exp, tanh, erf, sigmoid, softmax or power, approx-math on"};

const char *engine_jit_step(int i, const char **when) {
  if (i < 0 || i >= JIT_NSTEPS) return NULL;
  if (when) *when = jit_when_text[jit_steps[i].when];
  return jit_steps[i].pass;
}

static bool step_applies(const Engine *e, const Module *m, JitWhen w) {
  if (w == JIT_PRODUCTS) return e->opt.fast_math && alter_op_layout_applies(m);
  if (w == JIT_TRANSCENDENTAL)
    return e->opt.fast_math && e->opt.approx_math && fast_math_applies(m);
  return true;
}

static bool is_graph_pass(const char *name) {
  return strcmp(name, "JitFuseOps") != 0 && strcmp(name, "LowerTIR") != 0;
}

/* m after the pipeline's graph passes that apply (freeing the intermediate
 * modules that are not m), or m itself when none applies or one fails (its
 * messages are dropped and *failed names it: the program then runs as
 * written). */
static Module *jit_prepared(Engine *e, Module *m, Arena *a, JitWatch *w, const char **failed) {
  DiagCtx d;
  diag_init(&d);
  /* The passes start from a copy in a: a pass re-checks its input in the
   * input's arena, and m's may be a session input's that is released after
   * it ran (the types written into m's nodes must outlive it). */
  Module *own = module_copy(m, a), *cur = own;
  for (int i = 0; i < JIT_NSTEPS && cur; i++) {
    if (!is_graph_pass(jit_steps[i].pass) || !step_applies(e, m, jit_steps[i].when)) continue;
    const PassDef *p = pass_lookup(jit_steps[i].pass);
    size_t errors = d.nerrors;
    Module *next = pass_run_scoped(p, cur, a, &d, w ? w->hook : NULL, w ? w->scope : NULL);
    if (cur != next) module_free(cur);
    if (!next && w && d.nerrors == errors) w->stopped = true; /* :step's q */
    if (!next && !(w && w->stopped)) *failed = p->name;
    if ((cur = next) && w && w->after) w->after->fn(w->after->user, p->name, cur);
  }
  if (cur == own) module_free(own), cur = NULL; /* no pass applied */
  if (cur && !ty_recheck_module(cur, &d)) {
    module_free(cur);
    cur = NULL, *failed = "the type check after the passes";
  }
  diag_free(&d);
  return cur ? cur : m;
}

/* The module with lowered definitions and the prim functions they call,
 * unwatched: fusion and lowering per definition, cached (lower_def). */
static Module *lowered_cached(Engine *e, Module *src) {
  Module *lm = module_copy(src, &e->arena);
  for (int i = 0; i < src->ndefs; i++) {
    if (src->defs[i].kind != DEF_FUNC) continue;
    FuncDef *fd = src->defs[i].u.func, *l = lower_def(e, src, fd);
    if (l != fd) module_add(lm, (Def){.kind = DEF_FUNC, .u.func = l});
  }
  return lm;
}

/* ── the watched pipeline (:pass jit, :step jit, print-after-all) ── */

typedef struct PrimUse {
  Engine *e;
  Module *m;
} PrimUse;

static PrimFunc *lowered_prim(const Engine *e, const char *name) {
  for (int i = 0; i < lower_prim_count(e->low); i++)
    if (strcmp(lower_prim(e->low, i)->name, name) == 0) return lower_prim(e->low, i);
  return NULL;
}

static bool prim_use_visit(void *ctx, Expr *x) {
  PrimUse *u = ctx;
  if (x->kind != EX_CALL || x->u.call.fn->kind != EX_OP || x->u.call.nargs < 1) return true;
  if (!ops_has_flag(x->u.call.fn->u.op.index, OP_CALL_TIR)) return true;
  const Expr *g = x->u.call.args[0];
  PrimFunc *p = g->kind == EX_GLOBAL ? lowered_prim(u->e, g->u.global.name) : NULL;
  if (p && !module_lookup(u->m, p->name)) module_add(u->m, (Def){.kind = DEF_PRIM, .u.prim = p});
  return true;
}

/* The scope of a watched run: the caller's, without the definitions the
 * jit leaves unfused (holds_too_big, as lower_def). */
typedef struct JitScope {
  const PassScope *outer;
} JitScope;

static bool jit_scope_has(void *user, const Def *d) {
  const JitScope *js = user;
  if (js->outer && !js->outer->has(js->outer->user, d)) return false;
  return d->kind != DEF_FUNC || !holds_too_big(d->u.func->fn->body);
}

static void report_lowering(JitWatch *w, const FuncDef *fd, Function *f) {
  if (!w->hook || !w->hook->fn) return;
  char name[300];
  snprintf(name, sizeof name, "@%s", fd->name);
  PassRewrite rw = {.pass = "LowerTIR",
                    .rule = "to-call-tir",
                    .func = name,
                    .context = fd->fn,
                    .before = fd->fn->body,
                    .after = f->body,
                    .span = fd->span};
  if (!w->hook->fn(w->hook->user, &rw)) w->stopped = true;
}

/* LowerTIR on the definitions in scope of cur: each group becomes call_tir
 * of the engine's prim function (the one the jit compiles), added to the
 * module. */
static Module *lower_watched(Engine *e, Module *cur, Arena *a, JitWatch *w, const PassScope *sc) {
  Module *lm = module_copy(cur, a);
  PrimUse u = {e, lm};
  for (int i = 0; i < cur->ndefs && !w->stopped; i++) {
    const Def *d = &cur->defs[i];
    if (d->kind != DEF_FUNC || !sc->has(sc->user, d)) continue;
    FuncDef *fd = d->u.func;
    Function *f = lower_function(e->low, fd->fn);
    if (f == fd->fn) continue;
    report_lowering(w, fd, f);
    FuncDef *nf = ARENA_NEW(a, FuncDef);
    *nf = *fd, nf->fn = f;
    module_add(lm, (Def){.kind = DEF_FUNC, .u.func = nf});
    expr_walk(f->body, prim_use_visit, &u);
  }
  return lm;
}

static Module *jit_watched(Engine *e, Module *m, Module *src, Arena *a, JitWatch *w) {
  JitScope js = {w->scope};
  PassScope sc = {jit_scope_has, &js, w->scope ? w->scope->func : NULL};
  DiagCtx d;
  diag_init(&d);
  Module *fused = pass_run_scoped(pass_lookup("JitFuseOps"), src, a, &d, w->hook, &sc);
  diag_free(&d);
  if (!fused) return NULL; /* stopped (FuseOps reports no error) */
  if (w->after) w->after->fn(w->after->user, "JitFuseOps", fused);
  Module *lm = lower_watched(e, fused, a, w, &sc);
  if (fused != src && fused != m) module_free(fused);
  if (w->stopped) {
    module_free(lm);
    return NULL;
  }
  if (w->after) w->after->fn(w->after->user, "LowerTIR", lm);
  return lm;
}

Module *engine_jit_pipeline(Engine *e, Module *m, Arena *a, JitWatch *w) {
  engine_enter(e);
  w->failed = NULL, w->stopped = false;
  e->cur = m;
  Module *src = jit_prepared(e, m, a, w, &w->failed);
  Module *lm = w->stopped ? NULL : jit_watched(e, m, src, a, w);
  if (src != m) module_free(src);
  e->cur = NULL;
  return lm;
}

/* print-after-all during a compile: the user's definitions (not the
 * prelude's, decided by the definition of the same name in the module
 * compiled) and the prim functions they call, on stderr. */
typedef struct AfterScope {
  const Engine *e;
  Module *used; /* the prims the user's functions call (PrimUse) */
} AfterScope;

static bool user_func(const Engine *e, const Def *d) {
  const Def *orig = e->cur ? module_lookup(e->cur, def_name(d)) : NULL;
  return !orig || !engine_is_prelude_def(e, orig);
}

static bool user_def(void *user, const Def *d) {
  const AfterScope *as = user;
  if (d->kind == DEF_PRIM) return module_lookup(as->used, d->u.prim->name) != NULL;
  return user_func(as->e, d);
}

static void print_after(void *user, const char *pass, const Module *m) {
  Engine *e = user;
  Arena a;
  arena_init(&a);
  AfterScope as = {e, module_new(&a)};
  PrimUse u = {e, as.used};
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_FUNC && user_func(e, &m->defs[i]))
      expr_walk(m->defs[i].u.func->fn->body, prim_use_visit, &u);
  PassScope sc = {user_def, &as, NULL};
  pass_print_after(stderr, pass, m, &sc);
  module_free(as.used);
  arena_free(&a);
}

/* The module with lowered definitions and the prim functions they call;
 * NULL when our prim names clash with the user's (then: interp mode). */
static Module *lowered_module(Engine *e, Module *m, Module **prep) {
  e->cur = m;
  *prep = NULL;
  if (prims_clash(e, m)) return NULL;
  if (e->opt.print_after_all) {
    PassAfter after = {print_after, e};
    JitWatch w = {.after = &after};
    Module *lm = engine_jit_pipeline(e, m, &e->arena, &w);
    if (lm) return lm;
  }
  const char *failed = NULL;
  Module *src = jit_prepared(e, m, &e->arena, NULL, &failed);
  Module *lm = lowered_cached(e, src);
  *prep = module_copy(src, &e->arena);
  if (src != m) module_free(src);
  return lm;
}

static void add_prims(Engine *e, Module *lm) {
  for (int i = 0; i < lower_prim_count(e->low); i++) {
    PrimFunc *p = lower_prim(e->low, i);
    if (!module_lookup(lm, p->name)) module_add(lm, (Def){.kind = DEF_PRIM, .u.prim = p});
  }
}

/* Whether the view was built from m's definitions: the same ones (a new
 * module object per input holds the same definitions until one changes),
 * so the jit mode's preparation (constant folding, weight packing) and
 * lowering are not redone for every expression a script evaluates. */
static bool view_current(const Engine *e, const Module *m) {
  return e->view && e->view_src && e->view_ndefs == m->ndefs &&
         (!m->ndefs || memcmp(e->view_defs, m->defs, sizeof(Def) * (size_t)m->ndefs) == 0);
}

static void remember_view(Engine *e, Module *lm, Module *prep, const Module *m) {
  if (e->view) module_free(e->view);
  if (e->view_prep) module_free(e->view_prep);
  spec_cache_clear(e->spec, e->in); /* copies of the old definitions */
  e->view = lm, e->view_prep = prep, e->view_src = m, e->view_ndefs = m->ndefs;
  free(e->view_defs);
  e->view_defs = malloc(sizeof(Def) * (size_t)(m->ndefs + 1));
  if (!e->view_defs) rly_oom();
  if (m->ndefs) memcpy(e->view_defs, m->defs, sizeof(Def) * (size_t)m->ndefs);
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double engine_lowering_ms(const Engine *e) { return e->lower_ms; }

Module *engine_lowered(Engine *e, Module *m, Expr **ex) {
  engine_enter(e);
  double t0 = wall_ms();
  if (!view_current(e, m)) {
    Module *prep;
    Module *built = lowered_module(e, m, &prep);
    if (!built) return NULL;
    remember_view(e, built, prep, m);
  }
  Module *lm = e->view;
  e->cur = m;
  if (ex && *ex && !holds_too_big(*ex)) {
    FuseOptions o = jit_fuse_options(e);
    Expr *f = fuse_expr(&e->arena, m, *ex, &o);
    if (f != *ex) *ex = lower_expr(e->low, f);
  }
  add_prims(e, lm);
  e->cur = NULL;
  e->lower_ms += wall_ms() - t0;
  return lm;
}

/* Does evaluating ex (against lm) possibly reach a kernel of ours: a
 * call_tir in ex or in a definition it names, transitively?  Only then is
 * the JIT loaded (dlopen of LLVM: too slow for every input). */
typedef struct Reach {
  const Module *m;
  PtrVec todo;
  StrMap seen;
  bool kernel;
} Reach;

static bool reach_visit(void *ctx, Expr *e) {
  Reach *r = ctx;
  if (e->kind == EX_OP && ops_has_flag(e->u.op.index, OP_CALL_TIR)) r->kernel = true;
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
  while (r.todo.len && !r.kernel) expr_walk(vec_pop(&r.todo), reach_visit, &r);
  vec_free(&r.todo);
  strmap_free(&r.seen);
  return r.kernel;
}

/* ───────────────────────────── evaluation ───────────────────────────── */

/* jit mode with jit_require, and the expression would run without kernels:
 * the JIT does not load (why), or the module's names clash with the
 * lowered kernels' (why NULL). */
static void engine_no_fallback(Engine *e, const Expr *ex, const char *why) {
  diag_error(e->diag, ex->span, "jit mode cannot compile kernels: %s (RLY_JIT_REQUIRE=1)",
             why ? why : "the program's names clash with the kernels'");
}

/* Whether calls of the view's fd run on shape-specialized copies (as
 * interp/spec.c and spec_get decide: every parameter an annotated tensor,
 * one of a dynamic shape, and a body the planned executor runs). */
static bool specialized_def(const Engine *e, const FuncDef *fd) {
  if (e->opt.specialize <= 0 || !e->opt.planned || !e->view_prep || fd->fn->nparams == 0)
    return false;
  bool dyn = false;
  for (int i = 0; i < fd->fn->nparams; i++) {
    const Type *t = fd->fn->params[i]->annot;
    if (!t || t->kind != TY_TENSOR) return false;
    for (int d = 0; d < t->u.tensor.ndim; d++) dyn = dyn || t->u.tensor.dims[d].kind != DIM_CONST;
  }
  const FuncDef *src = dyn ? module_func(e->view_prep, fd->name) : NULL;
  return src && spec_plannable(src);
}

/* The kernels of the view's specialized functions (their copies have
 * kernels of their own; these run only when a copy is refused, and then
 * compile at their first call). */
static Module *unspecialized_kernels_skip(Engine *e, Arena *a) {
  Module *skip = module_new(a);
  PrimUse u = {e, skip};
  for (int i = 0; e->view && i < e->view->ndefs; i++) {
    const Def *d = &e->view->defs[i];
    if (d->kind == DEF_FUNC && specialized_def(e, d->u.func))
      expr_walk(d->u.func->fn->body, prim_use_visit, &u);
  }
  return skip;
}

/* The prim functions lowered since the last call compile at once, on the
 * pool's threads (their first calls then only load them), but for those
 * only the dynamic functions that run specialized call. */
static void precompile(Engine *e) {
  int n = lower_prim_count(e->low), m = 0;
  if (n - e->precompiled < 2) return;
  PrimFunc **fs = malloc(sizeof *fs * (size_t)(n - e->precompiled));
  if (!fs) rly_oom();
  Arena a;
  arena_init(&a);
  Module *skip = unspecialized_kernels_skip(e, &a);
  for (int i = e->precompiled; i < n; i++)
    if (!module_lookup(skip, lower_prim(e->low, i)->name)) fs[m++] = lower_prim(e->low, i);
  module_free(skip);
  arena_free(&a);
  if (m) jit_precompile(fs, m);
  free(fs);
  e->precompiled = n;
}

/* The module and expression to run: the lowered ones in jit mode when
 * they can reach a kernel and the JIT loads, else m and ex as written
 * (NULL, an error, when jit_require forbids that). */
static Module *runnable(Engine *e, Module *m, Expr **ex) {
  if (e->opt.exec != EXEC_JIT) return m;
  Expr *le = *ex;
  Module *lm = engine_lowered(e, m, &le);
  if (lm && e->jit_state == 0 && lower_prim_count(e->low) > 0 && reaches_kernel(lm, le))
    e->jit_state = jit_available() ? 1 : 2;
  if ((!lm || e->jit_state == 2) && e->opt.jit_require)
    return engine_no_fallback(e, *ex, lm ? jit_unavailable_reason() : NULL), NULL;
  if (!lm || e->jit_state == 2) return m;
  if (e->jit_state == 1) precompile(e);
  *ex = le;
  return lm;
}

/* ───────────────────────────── shape specialisation ───────────────────────────── */

static double spec_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A new copy of src for the arguments' shapes: typed, fused and lowered
 * (its kernels join the engine's and compile at once, on the pool), in a
 * module holding the view's definitions and every kernel. */
static SpecEntry *spec_build(Engine *e, FuncDef *src, char *key, Value **args, int n) {
  double t0 = spec_now_ms();
  Function *sf = spec_function(&e->arena, e->view_prep, src, args, n);
  if (!sf || holds_too_big(sf->body)) return free(key), NULL;
  FuseOptions o = jit_fuse_options(e);
  const Module *was = e->cur;
  e->cur = e->view_prep; /* kernel names must not clash with its definitions */
  Function *f = lower_function(e->low, fuse_function(&e->arena, e->view_prep, sf, &o, NULL));
  e->cur = was;
  Module *m = module_copy(e->view, &e->arena);
  add_prims(e, m);
  if (e->jit_state == 1) precompile(e);
  return spec_add(e->spec, e->in, e->opt.specialize, src, key, f, m, spec_now_ms() - t0);
}

/* The interpreter's specialiser (InterpSpecializer): called is the view's
 * definition of name, whose prepared form is copied. */
static bool spec_get(void *user, const char *name, const Function *called, Value **args, int n,
                     const Function **fn, const Module **mod) {
  Engine *e = user;
  FuncDef *src = e->view_prep ? module_func(e->view_prep, name) : NULL;
  FuncDef *low = e->view ? module_func(e->view, name) : NULL;
  if (!src || !low || low->fn != called || e->opt.specialize <= 0 || spec_refused(e->spec, src))
    return false;
  if (!spec_plannable(src)) return spec_refuse_def(e->spec, src), false;
  char *key = spec_key(src, args, n);
  if (!key) return false;
  SpecEntry *s = spec_find(e->spec, src, key);
  if (s)
    free(key);
  else
    s = spec_build(e, src, key, args, n);
  if (!s) return false;
  *fn = s->fn, *mod = s->mod;
  return true;
}

static void spec_refused_cb(void *user, const Function *fn) {
  Engine *e = user;
  spec_refuse(e->spec, e->in, fn);
}

int engine_spec_count(const Engine *e) { return spec_count(e->spec); }

bool engine_spec_info(const Engine *e, int i, EngineSpecInfo *out) {
  const SpecEntry *s = spec_at(e->spec, i);
  if (!s) return false;
  *out = (EngineSpecInfo){s->src->name, s->key, s->calls, s->build_ms};
  return true;
}

/* Binds v to var; an old value holding much tensor data is collected now
 * (a safe point: v is rooted, nothing is being evaluated). */
static void bind_value(Engine *e, Var *var, Value *v) {
  Value *old = interp_bound(e->in, var);
  size_t bytes = old && old != v ? interp_value_bytes(e->in, old) : 0;
  interp_bind(e->in, var, v);
  if (bytes >= ENGINE_RELEASE_COLLECT) interp_gc(e->in);
}

/* A failure of the memory limit during the evaluation gets a note naming
 * the session variables that hold the most (rt knows no sessions: its
 * hook only records the request). */
Value *engine_eval(Engine *e, Module *m, Expr *ex, Var *bind) {
  engine_enter(e);
  Module *run = runnable(e, m, &ex);
  if (!run) return NULL;
  e->prog.limit_want = 0;
  rt_set_limit_hook(program_limit_hit, &e->prog);
  Value *v = interp_eval(e->in, run, ex);
  rt_set_limit_hook(NULL, NULL);
  if (!v && e->prog.limit_want) program_limit_note(e);
  if (v && bind) bind_value(e, bind, v);
  return v;
}

char *engine_format(Engine *e, const Value *v) { return interp_format(e->in, v); }
void engine_unbind(Engine *e, Var *v) { interp_bind(e->in, v, NULL); }
void engine_collect(Engine *e) {
  engine_enter(e);
  interp_gc(e->in);
}
void engine_seed(Engine *e, int64_t seed) { interp_seed(e->in, seed); }
void engine_interrupt(void) { rt_interrupt(); }

void engine_relower(Engine *e) {
  lower_free(e->low);
  e->low = lower_new(&e->arena, name_taken, e);
  lower_set_fast_math(e->low, e->opt.fast_math);
  lower_set_knobs_hook(e->low, engine_kernel_knobs, e);
  ptrmap_free(&e->lowered);
  e->lowered = (PtrMap){0};
  e->view_src = NULL, e->precompiled = 0;
}

PrimFunc *engine_kernel(const Engine *e, const char *name) { return lowered_prim(e, name); }

int engine_kernel_count(const Engine *e) { return lower_prim_count(e->low); }

PrimFunc *engine_kernel_at(const Engine *e, int i) { return lower_prim(e->low, i); }

/* The prim function the jit mode lowers a Primitive function to: lowered
 * once through the engine's lowerer (the names `:profile` shows), nothing
 * compiled.  NULL when it cannot be lowered. */
const char *engine_kernel_name(Engine *e, const Function *prim) {
  const char *why = NULL;
  PrimFunc *p = lower_primitive(e->low, prim, &why);
  return p ? p->name : NULL;
}
