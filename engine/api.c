/* api.c — the public C API (include/rly.h) over the engine.
 *
 * A session holds one DiagCtx and one Engine, which keeps the program (the
 * current module, session variables, the prelude: engine.h).  A load is
 * one engine transaction, as the REPL's :load: the text is parsed into a
 * copy of the module (leaving out prelude definitions it replaces), and
 * its expressions are evaluated after the copy became current; any error,
 * in checking or at run time, rolls the module and the session variables
 * back, so a failed load leaves the session as it was.  Definitions and
 * the values of loaded expressions live in the session's arena for its
 * lifetime; a call (rly_call) builds its expression in a scratch arena
 * freed on return (it holds no function literal, so no value can point
 * into it); its arguments are read in place when aligned, and its results
 * are handed over (or copied when the session still holds them), so any
 * number of calls runs in bounded memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "include/rly.h"
#include "interp/extern.h"
#include "ir/util.h"
#include "jit/jit.h"
#include "types/types.h"

struct rly_session {
  DiagCtx diag;
  Engine *engine;
  Arena arena; /* definitions and loaded expressions */
  char *error; /* rendered diagnostics of the last failure */
};

/* ───────────────────────────── errors ───────────────────────────── */

/* Every entry makes the session's engine current on the calling thread
 * (engine_enter: its memory limit, JIT options, interrupt flag) and clears
 * the last error. */
static void clear_error(rly_session *s) {
  engine_enter(s->engine);
  free(s->error);
  s->error = NULL;
  diag_clear(&s->diag);
}

/* Renders the collected diagnostics into s->error; returns -1. */
static int failed(rly_session *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f) {
    diag_render(&s->diag, f, 0, false);
    fclose(f);
  }
  free(s->error);
  s->error = buf;
  diag_clear(&s->diag);
  return -1;
}

static int fail_msg(rly_session *s, const char *fmt, const char *arg) {
  diag_error(&s->diag, (Span){0}, fmt, arg);
  return failed(s);
}

int rly_kernel_count(void) { return jit_kernel_count(); }

const char *rly_error(const rly_session *s) { return s && s->error ? s->error : ""; }

/* ───────────────────────────── sessions ───────────────────────────── */

rly_session *rly_open(int flags) {
  rly_session *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  diag_init(&s->diag);
  arena_init(&s->arena);
  EngineOptions o = engine_options_default();
  if (flags & RLY_OPEN_ENV) engine_options_from_env(&o);
  s->engine = engine_new(&o, &s->diag);
  if (!(flags & RLY_OPEN_NO_PRELUDE) && !engine_load_prelude(s->engine)) {
    rly_close(s); /* the built-in prelude always checks */
    return NULL;
  }
  return s;
}

void rly_close(rly_session *s) {
  if (!s) return;
  engine_free(s->engine);
  arena_free(&s->arena);
  diag_free(&s->diag);
  free(s->error);
  free(s);
}

int rly_set_exec(rly_session *s, rly_exec mode) {
  clear_error(s);
  if (mode != RLY_EXEC_JIT && mode != RLY_EXEC_INTERP)
    return fail_msg(s, "%s", "unknown exec mode");
  EngineOptions o = *engine_options(s->engine);
  o.exec = mode == RLY_EXEC_JIT ? EXEC_JIT : EXEC_INTERP;
  engine_set_options(s->engine, &o);
  return 0;
}

int rly_set_max_memory(rly_session *s, size_t bytes) {
  clear_error(s);
  if (bytes == 0 || bytes > (size_t)INT64_MAX) return fail_msg(s, "%s", "bad memory limit");
  EngineOptions o = *engine_options(s->engine);
  o.max_memory = (int64_t)bytes;
  engine_set_options(s->engine, &o);
  return 0;
}

int rly_set_opt_level(rly_session *s, int level) {
  clear_error(s);
  if (level < 0 || level > 3) return fail_msg(s, "%s", "the optimisation level is 0 to 3");
  EngineOptions o = *engine_options(s->engine);
  o.opt_level = level;
  engine_set_options(s->engine, &o);
  return 0;
}

/* A `:` line anywhere in the text is an error (before anything runs). */
static bool no_commands(rly_session *s, const ParseResult *r) {
  for (int i = 0; i < r->nitems; i++)
    if (r->items[i].kind == ITEM_COMMAND) {
      diag_error(&s->diag, r->items[i].span, "`:` commands are for the REPL, not rly_load_text");
      return false;
    }
  return true;
}

/* Evaluates the input's expressions in order; a `let` binds a session
 * variable. */
static bool run_items(rly_session *s, const ParseResult *r) {
  for (int i = 0; i < r->nitems; i++) {
    const ScriptItem *it = &r->items[i];
    bool let = it->kind == ITEM_LET;
    if ((it->kind != ITEM_EXPR && !let) || !it->expr) continue;
    if (!engine_eval(s->engine, engine_module(s->engine), it->expr, let ? it->var : NULL))
      return false;
    if (let) engine_var_set(s->engine, it->var);
  }
  return true;
}

/* One transaction: check, commit, evaluate; any failure rolls it back. */
int rly_load_text(rly_session *s, const char *name, const char *text) {
  clear_error(s);
  name = name ? name : "<text>";
  size_t len = strlen(text);
  if (!engine_txn_begin(s->engine)) return fail_msg(s, "%s", "loads are nested too deeply");
  EngineScan sc = {0};
  engine_scan(name, text, len, &sc);
  uint32_t file = diag_add_source(&s->diag, name, text, len);
  EngineInput in;
  bool ok = engine_input_check(s->engine, &in, &s->arena, file, 0, 0, &sc, NULL);
  if (ok && !no_commands(s, &in.r)) {
    module_free(in.m); /* checked, not committed */
    ok = false;
  }
  if (ok) {
    module_free(engine_input_commit(s->engine, &in));
    ok = run_items(s, &in.r);
  }
  engine_txn_end(s->engine, ok);
  engine_scan_free(&sc);
  return ok ? 0 : failed(s);
}

int rly_load_file(rly_session *s, const char *path) {
  size_t len = 0;
  char *text = read_whole_file(path, &len);
  if (!text) {
    clear_error(s);
    return fail_msg(s, "cannot read '%s'", path);
  }
  int rc = rly_load_text(s, path, text);
  free(text);
  return rc;
}

int rly_import_onnx(rly_session *s, const char *path, const char *func) {
  clear_error(s);
  Module *m = engine_import_onnx(s->engine, engine_module(s->engine), &s->arena, path,
                                 func ? func : "main", true, (Span){0}, NULL);
  if (!m) return failed(s);
  engine_set_module(s->engine, m);
  return 0;
}

int rly_run_passes(rly_session *s, const char *names) {
  clear_error(s);
  Module *m = engine_passes(s->engine, engine_module(s->engine), &s->arena, names);
  if (!m) return failed(s);
  if (m != engine_module(s->engine)) engine_set_module(s->engine, m);
  return 0;
}

void rly_free(void *p) { free(p); }

char *rly_print(rly_session *s) {
  engine_enter(s->engine);
  PrintOptions opt = {.header = true};
  return print_module(engine_module(s->engine), opt);
}

int rly_eval(rly_session *s, const char *expr, char **text) {
  clear_error(s);
  *text = NULL;
  uint32_t file = diag_add_source(&s->diag, "<eval>", expr, strlen(expr));
  Module *m = engine_module(s->engine);
  ParseOptions po = {0};
  po.session = (Var **)engine_vars(s->engine, &po.nsession);
  Expr *e = parse_expr(m, &s->diag, file, &po);
  if (!e || !ty_check_expr(m, e, &s->diag)) return failed(s);
  Value *v = engine_eval(s->engine, m, e, NULL);
  if (!v) return failed(s);
  *text = engine_format(s->engine, v);
  return 0;
}

/* ───────────────────────────── calls ───────────────────────────── */

/* The element count of a DLTensor's shape (-1 on a negative dim or an
 * overflow). */
static int64_t dl_numel(const DLTensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0 || (t->shape[d] && n > INT64_MAX / t->shape[d])) return -1;
    n *= t->shape[d];
  }
  return n;
}

/* A run-time tensor over a contiguous CPU DLTensor: its data read in place
 * when aligned as the run time's buffers are (RT_ALIGN), else a copy. */
static RtTensor *tensor_in(rly_session *s, const DLTensor *t, int i) {
  char err[RT_ERR_LEN], what[64];
  snprintf(what, sizeof what, "argument %d", i + 1);
  DType dt;
  if (t->device.device_type != kDLCPU) return fail_msg(s, "%s is not on the CPU", what), NULL;
  if (!rly_dtype_from_dlpack(t->dtype, &dt))
    return fail_msg(s, "%s has a dtype rly does not have", what), NULL;
  if (t->ndim < 0 || t->ndim > TENSOR_MAX_RANK)
    return fail_msg(s, "%s has too many dims", what), NULL;
  int64_t expect = 1;
  for (int d = t->ndim - 1; t->strides && d >= 0; expect *= t->shape[d--])
    if (t->shape[d] != 1 && t->strides[d] != expect)
      return fail_msg(s, "%s is not contiguous (row-major)", what), NULL;
  char *data = (char *)t->data + t->byte_offset;
  int64_t numel = dl_numel(t);
  if (numel > 0 && ((uintptr_t)data & (RT_ALIGN - 1)) == 0) {
    Tensor view = {dt, t->ndim, t->shape, numel, data};
    RtTensor *r = rt_tensor_borrow_ir(&view, err, sizeof err);
    return r ? r : (fail_msg(s, "%s", err), NULL);
  }
  RtTensor *r = rt_tensor_new(dt, t->ndim, t->shape, err, sizeof err);
  if (!r) return fail_msg(s, "%s", err), NULL;
  memcpy(r->data, data, rt_tensor_nbytes(r));
  return r;
}

/* One malloc'd block: the DLManagedTensor, its shape, then the data. */
static void free_managed(DLManagedTensor *m) { free(m); }

/* A result handed over without a copy: the DLManagedTensor and its shape,
 * the run time's allocation holding the data (manager_ctx). */
static void free_stolen(DLManagedTensor *m) {
  free(m->manager_ctx);
  free(m);
}

static DLManagedTensor *tensor_stolen(RtTensor *t) {
  DLManagedTensor *m = malloc(sizeof *m + sizeof(int64_t) * (size_t)(t->ndim + 1));
  if (!m) return NULL;
  int64_t *shape = (int64_t *)(m + 1);
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  *m = (DLManagedTensor){.dl_tensor = {.device = {kDLCPU, 0},
                                       .ndim = t->ndim,
                                       .dtype = rly_dlpack_dtype(t->dtype),
                                       .shape = shape},
                         .deleter = free_stolen};
  void *block = rt_tensor_steal(t); /* t is empty after it */
  if (!block) return free(m), NULL;
  m->manager_ctx = block, m->dl_tensor.data = (char *)block + RT_ALIGN;
  return m;
}

static DLManagedTensor *tensor_out(const RtTensor *t) {
  size_t head = sizeof(DLManagedTensor) + sizeof(int64_t) * (size_t)(t->ndim + 1);
  head = (head + 63) & ~(size_t)63;
  size_t n = rt_tensor_nbytes(t);
  DLManagedTensor *m = aligned_alloc(64, (head + n + 63) & ~(size_t)63);
  if (!m) return NULL;
  int64_t *shape = (int64_t *)(m + 1);
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  *m = (DLManagedTensor){.dl_tensor = {.data = (char *)m + head,
                                       .device = {kDLCPU, 0},
                                       .ndim = t->ndim,
                                       .dtype = rly_dlpack_dtype(t->dtype),
                                       .shape = shape},
                         .deleter = free_managed};
  memcpy(m->dl_tensor.data, t->data, n);
  return m;
}

/* Whether each tensor of a result may be handed over without a copy:
 * nothing in the session reaches its value, and no other field is the same
 * value (the tensors' and buffers' own counts are checked when taken). */
static void stealable(rly_session *s, Value *const *fields, int n, bool *ok) {
  interp_bind(engine_interp(s->engine), NULL, NULL); /* the last result is the caller's now */
  interp_values_reached(engine_interp(s->engine), fields, n, ok);
  for (int i = 0; i < n; i++) {
    ok[i] = !ok[i];
    for (int k = 0; k < n; k++)
      if (k != i && fields[k] == fields[i]) ok[i] = false;
  }
}

/* The tensors of a result (a tensor, or a tuple of tensors), each handed
 * over when it is the result's alone, else copied. */
static int results_out(rly_session *s, Value *v, DLManagedTensor **out, int max, int *n) {
  int count = v->kind == V_TENSOR ? 1 : v->kind == V_TUPLE ? v->u.tuple.n : -1;
  for (int i = 0; v->kind == V_TUPLE && i < count; i++)
    if (v->u.tuple.fields[i]->kind != V_TENSOR) count = -1;
  if (count < 0) return fail_msg(s, "%s", "the result is not a tensor or a tuple of tensors");
  if (count > max) return fail_msg(s, "%s", "the result has more tensors than max_results");
  Value **fields = v->kind == V_TENSOR ? &v : v->u.tuple.fields;
  bool *ok = calloc((size_t)count + 1, sizeof *ok);
  if (!ok) rly_oom();
  stealable(s, fields, count, ok);
  int rc = 0;
  for (int i = 0; i < count && rc == 0; i++) {
    out[i] = ok[i] ? tensor_stolen(fields[i]->u.tensor) : NULL;
    if (!out[i]) out[i] = tensor_out(fields[i]->u.tensor);
    if (!out[i]) {
      for (int k = 0; k < i; k++) out[k]->deleter(out[k]);
      rc = fail_msg(s, "%s", "out of memory for the results");
    }
  }
  free(ok);
  if (rc == 0) *n = count;
  return rc;
}

/* A variable per argument, typed by its tensor, bound to it. */
static Expr *call_expr(rly_session *s, Arena *a, const char *func, RtTensor **ts, int n,
                       Var **vars) {
  Expr **args = ARENA_ARRAY(a, Expr *, n + 1);
  Span none = {0};
  for (int i = 0; i < n; i++) {
    Dim dims[TENSOR_MAX_RANK];
    for (int d = 0; d < ts[i]->ndim; d++)
      dims[d] = (Dim){.kind = DIM_CONST, .value = ts[i]->shape[d]};
    char name[16];
    snprintf(name, sizeof name, "arg%d", i);
    Type *ty = type_tensor(a, ts[i]->dtype, ts[i]->ndim, dims, none);
    vars[i] = var_new(a, arena_strdup(a, name), ty, none);
    args[i] = expr_var(a, vars[i], none);
    interp_bind(engine_interp(s->engine), vars[i],
                interp_value_tensor(engine_interp(s->engine), rt_tensor_retain(ts[i])));
  }
  return expr_call(a, expr_global(a, arena_strdup(a, func), none), n, args, NULL, none);
}

int rly_call(rly_session *s, const char *func, const DLTensor *args, int nargs,
             DLManagedTensor **results, int max_results, int *nresults) {
  clear_error(s);
  *nresults = 0;
  Module *m = engine_module(s->engine);
  if (!module_func(m, func)) return fail_msg(s, "no function @%s in the session", func);
  RtTensor **ts = calloc((size_t)nargs + 1, sizeof *ts);
  Var **vars = calloc((size_t)nargs + 1, sizeof *vars);
  if (!ts || !vars) rly_oom();
  int rc = 0, i = 0;
  for (; i < nargs && rc == 0; i++)
    if (!(ts[i] = tensor_in(s, &args[i], i))) rc = -1;
  Arena scratch;
  arena_init(&scratch);
  if (rc == 0) {
    Module *view = module_copy(m, &scratch); /* types of the call go to scratch */
    Expr *e = call_expr(s, &scratch, func, ts, nargs, vars);
    Value *v = ty_check_expr(view, e, &s->diag) ? engine_eval(s->engine, m, e, NULL) : NULL;
    rc = v ? results_out(s, v, results, max_results, nresults) : failed(s);
    module_free(view);
  }
  for (int k = 0; k < nargs; k++)
    if (vars[k]) engine_unbind(s->engine, vars[k]);
  for (int k = 0; k < i; k++) rt_tensor_release(ts[k]);
  arena_free(&scratch);
  free(ts);
  free(vars);
  return rc;
}
