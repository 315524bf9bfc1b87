/* engine.c — the pipeline (engine.h): options and the environment, parsing
 * and checking, passes by name, the jit mode's lowering, evaluation.
 *
 * In jit mode every function of the module and the expression being
 * evaluated go through FuseOps and the lowering to TIR (passes/lower.h):
 * pure op calls become call_tir of prim functions, which call_tir runs on
 * the registered compiled executor (the JIT, rt/exec.h) or the TIR
 * interpreter.  The lowered program is evaluated against a copy of the
 * module holding the lowered definitions and the prim functions.  The
 * program the engine keeps for a session (module, session variables,
 * transactions, the prelude) is in program.c, input.c and prelude.c. */
#include "engine/engine.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine_int.h"
#include "ir/walk.h"
#include "jit/jit.h"
#include "ops/ops.h"
#include "passes/lower.h"
#include "passes/pass.h"
#include "passes/passes.h"
#include "passes/rewrite.h"
#include "rt/exec.h"
#include "rt/rt.h"

struct Engine {
  EngineOptions opt;
  DiagCtx *diag;
  Interp *in;
  Arena arena; /* lowered IR */
  Lowerer *low;
  RwMap lowered; /* FuncDef* (the session's) → FuncDef* (lowered, or the same) */
  const Module *cur;
  /* The lowered view of the session's module, rebuilt only when its
   * definitions changed (view_current), or the options (view_src = NULL). */
  Module *view;
  const Module *view_src;
  Def *view_defs; /* view_src's definitions when the view was built */
  int view_ndefs;
  int jit_state;   /* 0: not asked yet, 1: the JIT loads, 2: it does not */
  int precompiled; /* lowered prims handed to jit_precompile so far */
  Program prog;    /* the module, session variables, transactions (program.c) */
};

static const char *const exec_names[] = {
#define X(e, n) n,
    EXEC_MODES(X)
#undef X
};

const char *exec_mode_name(ExecMode m) { return exec_names[m]; }

/* ───────────────────────────── options ───────────────────────────── */

/* 75% of the machine's memory (the default of `:set max-memory`), or
 * rt's own default when the machine does not say. */
static int64_t default_max_memory(void) {
  size_t ram = rt_physical_memory();
  return ram ? (int64_t)(ram / 4 * 3) : (int64_t)RT_DEFAULT_MAX_BYTES;
}

EngineOptions engine_options_default(void) {
  return (EngineOptions){
      .exec = EXEC_JIT,
      .opt_level = 2,
      .threads = 0,
      .disk_cache = true,
      .fp_contract = true,
      .fast_math = true,
      .approx_math = true,
      .fuse_max_depth = 256,
      .fast_path = true,
      .planned = true,
      .print_limit = 1000,
      .max_depth = 100000,
      .max_memory = default_max_memory(),
  };
}

/* The suffix's multiplier (K, KB, KiB alike), 0 when it is none of them. */
static int64_t size_unit(const char *u) {
  static const char units[] = "KMGT";
  if (!*u) return 1;
  const char *at = strchr(units, toupper((unsigned char)*u));
  if (!at || !*at) return 0;
  const char *rest = u + 1;
  if (strcmp(rest, "") && strcasecmp(rest, "B") && strcasecmp(rest, "iB")) return 0;
  return (int64_t)1 << (10 * (at - units + 1));
}

bool engine_parse_size(const char *text, int64_t *bytes) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || errno || !(v > 0) || isspace((unsigned char)*text)) return false;
  if (strcmp(end, "%") == 0) {
    if (v > 100 || !rt_physical_memory()) return false;
    *bytes = (int64_t)((double)rt_physical_memory() * v / 100);
  } else {
    int64_t unit = size_unit(end);
    if (!unit || v * (double)unit >= 9.2e18) return false;
    *bytes = (int64_t)(v * (double)unit);
  }
  if (*bytes < 1) *bytes = 1;
  return true;
}

static bool env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

static void env_copy(char *dst, size_t n, const char *name) {
  const char *v = getenv(name);
  if (v && *v) snprintf(dst, n, "%s", v);
}

/* The JIT's disk cache directory: $XDG_CACHE_HOME/rly, else ~/.cache/rly. */
static void env_cache_dir(EngineOptions *o) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(o->cache_dir, sizeof o->cache_dir, "%s/rly", xdg);
  else if (home && *home)
    snprintf(o->cache_dir, sizeof o->cache_dir, "%s/.cache/rly", home);
  if (env_is("RLY_JIT_CACHE", "0")) o->disk_cache = false;
}

void engine_options_from_env(EngineOptions *o) {
  if (env_is("RLY_EXEC", "interp")) o->exec = EXEC_INTERP;
  const char *t = getenv("RLY_NUM_THREADS");
  if (t && *t) o->threads = atoi(t) < 1 ? 1 : atoi(t);
  const char *d = getenv("RLY_FUSE_MAX_DEPTH");
  if (d && atoi(d) > 0) o->fuse_max_depth = atoi(d);
  if (env_is("RLY_FAST_MATH", "0")) o->fast_math = false;
  if (env_is("RLY_APPROX_MATH", "0")) o->approx_math = false;
  if (env_is("RLY_JIT_CONTRACT", "0")) o->fp_contract = false;
  if (env_is("RLY_JIT_REQUIRE", "1")) o->jit_require = true;
  if (env_is("RLY_FAST", "0")) o->fast_path = false;
  if (env_is("RLY_FAST", "trace")) o->fast_trace = true;
  if (env_is("RLY_PLAN", "0")) o->planned = false;
  const char *mm = getenv("RLY_MAX_MEMORY");
  int64_t bytes;
  if (mm && *mm && engine_parse_size(mm, &bytes)) o->max_memory = bytes;
  env_copy(o->jit_module, sizeof o->jit_module, "RLY_JIT_MODULE");
  env_cache_dir(o);
}

void engine_set_options(Engine *e, const EngineOptions *o) {
  if (o->approx_math != e->opt.approx_math || o->fast_math != e->opt.fast_math)
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

static bool name_taken(void *user, const char *name) {
  Engine *e = user;
  return e->cur && module_lookup(e->cur, name) != NULL;
}

Engine *engine_new(const EngineOptions *o, DiagCtx *d) {
  Engine *e = calloc(1, sizeof *e);
  if (!e) rly_oom();
  e->diag = d;
  e->in = interp_new(d);
  arena_init(&e->arena);
  e->low = lower_new(&e->arena, name_taken, e);
  jit_register_executor();
  engine_install_evaluator();
  engine_set_options(e, o);
  program_init(&e->prog);
  return e;
}

void engine_free(Engine *e) {
  if (!e) return;
  const RtExecutor *x = rt_executor(); /* its kernels point into this engine's IR */
  if (x && x->forget) x->forget();
  program_free(&e->prog);
  interp_free(e->in);
  if (e->view) module_free(e->view);
  free(e->view_defs);
  lower_free(e->low);
  rw_map_free(&e->lowered);
  arena_free(&e->arena);
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
  bool ok = r.ok && ty_check_module(m, e->diag) && check_items(m, &r, e->diag);
  if (items) *items = r;
  if (ok) return m;
  module_free(m);
  return NULL;
}

Module *engine_passes(Engine *e, Module *m, Arena *a, const char *names) {
  PassOptions po = pass_options_default();
  PassResult r = {0};
  Module *out = pass_pipeline(names, m, a, e->diag, &po, &r) ? r.module : NULL;
  pass_result_free(&r);
  return out;
}

/* ───────────────────────────── importing ───────────────────────────── */

Module *engine_import_onnx(Engine *e, const Module *base, Arena *a, const char *path,
                           const char *func, bool bind, Span where, OnnxWeights *w) {
  OnnxWeights local;
  if (!w) w = &local;
  Module *m = module_copy(base, a);
  OnnxImportOptions o = {.func = func, .where = where};
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

/* ───────────────────────────── lowering ───────────────────────────── */

static FuseOptions jit_fuse_options(const Engine *e) {
  FuseOptions o = fuse_options_default();
  o.max_depth = e->opt.fuse_max_depth;
  o.need_compute = true;
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
  FuncDef *have = rw_map_get(&e->lowered, fd);
  if (have) return have;
  if (holds_too_big(fd->fn->body)) {
    rw_map_put(&e->lowered, fd, fd);
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
  rw_map_put(&e->lowered, fd, r);
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

/* The passes the jit mode runs before fusion on a module with a 2-D
 * convolution or a product: batch norms become arithmetic folded into the
 * weights, convolutions move to blocked layouts and products with constant
 * weights to nn.contrib_dense_pack, their weights packed once; and on a
 * module with transcendental ops, FastMath. */
static const char *const conv_passes[] = {"SimplifyInference", "FoldConstant", "FoldScaleAxis",
                                          "AlterOpLayout",     "FoldConstant", NULL};
static const char *const fast_passes[] = {"FastMath", NULL};

/* cur after the passes of names (freeing the intermediate modules that are
 * not m), or NULL when one failed. */
static Module *run_passes(Engine *e, Module *m, Module *cur, const char *const *names, DiagCtx *d) {
  for (size_t i = 0; names[i] && cur; i++) {
    Module *next = pass_run(pass_lookup(names[i]), cur, &e->arena, d, NULL);
    if (cur != m && cur != next) module_free(cur);
    cur = next;
  }
  return cur;
}

/* m after conv_passes and fast_passes where they apply (fast math only:
 * they change rounding), or m itself when none applies or a pass fails
 * (its messages are dropped: the program then runs as written). */
static Module *jit_prepared(Engine *e, Module *m) {
  bool conv = alter_op_layout_applies(m), fast = e->opt.approx_math && fast_math_applies(m);
  if (!e->opt.fast_math || (!conv && !fast)) return m;
  DiagCtx d;
  diag_init(&d);
  Module *cur = m;
  if (conv) cur = run_passes(e, m, cur, conv_passes, &d);
  if (fast) cur = run_passes(e, m, cur, fast_passes, &d);
  if (cur && !ty_recheck_module(cur, &d)) {
    if (cur != m) module_free(cur);
    cur = NULL;
  }
  diag_free(&d);
  return cur ? cur : m;
}

/* The module with lowered definitions and the prim functions they call;
 * NULL when our prim names clash with the user's (then: interp mode). */
static Module *lowered_module(Engine *e, Module *m) {
  e->cur = m;
  if (prims_clash(e, m)) return NULL;
  Module *src = jit_prepared(e, m);
  Module *lm = module_copy(src, &e->arena);
  for (int i = 0; i < src->ndefs; i++) {
    if (src->defs[i].kind != DEF_FUNC) continue;
    FuncDef *fd = src->defs[i].u.func, *l = lower_def(e, src, fd);
    if (l != fd) module_add(lm, (Def){.kind = DEF_FUNC, .u.func = l});
  }
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

static void remember_view(Engine *e, Module *lm, const Module *m) {
  if (e->view) module_free(e->view);
  e->view = lm, e->view_src = m, e->view_ndefs = m->ndefs;
  free(e->view_defs);
  e->view_defs = malloc(sizeof(Def) * (size_t)(m->ndefs + 1));
  if (!e->view_defs) rly_oom();
  if (m->ndefs) memcpy(e->view_defs, m->defs, sizeof(Def) * (size_t)m->ndefs);
}

Module *engine_lowered(Engine *e, Module *m, Expr **ex) {
  if (!view_current(e, m)) {
    Module *built = lowered_module(e, m);
    if (!built) return NULL;
    remember_view(e, built, m);
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

/* The prim functions lowered since the last call compile at once, on the
 * pool's threads (their first calls then only load them). */
static void precompile(Engine *e) {
  int n = lower_prim_count(e->low);
  if (n - e->precompiled < 2) return;
  PrimFunc **fs = malloc(sizeof *fs * (size_t)(n - e->precompiled));
  if (!fs) rly_oom();
  for (int i = e->precompiled; i < n; i++) fs[i - e->precompiled] = lower_prim(e->low, i);
  jit_precompile(fs, n - e->precompiled);
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

Value *engine_eval(Engine *e, Module *m, Expr *ex, Var *bind) {
  Module *run = runnable(e, m, &ex);
  if (!run) return NULL;
  Value *v = interp_eval(e->in, run, ex);
  if (v && bind) interp_bind(e->in, bind, v);
  return v;
}

char *engine_format(Engine *e, const Value *v) { return interp_format(e->in, v); }
void engine_unbind(Engine *e, Var *v) { interp_bind(e->in, v, NULL); }
void engine_collect(Engine *e) { interp_gc(e->in); }
void engine_seed(Engine *e, int64_t seed) { interp_seed(e->in, seed); }
void engine_interrupt(void) { rt_interrupt(); }

/* The prim function the jit mode lowers a Primitive function to: lowered
 * once through the engine's lowerer (the names `:profile` shows), nothing
 * compiled.  NULL when it cannot be lowered. */
const char *engine_kernel_name(Engine *e, const Function *prim) {
  const char *why = NULL;
  PrimFunc *p = lower_primitive(e->low, prim, &why);
  return p ? p->name : NULL;
}
