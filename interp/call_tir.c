/* call_tir.c — call_tir in the evaluator (text-format.md B.6).
 *
 *   call_tir(@p, (%a, %b), shape=[n, 128], dtype="float32")
 *
 * allocates the outputs (zero-filled) from `shape` and `dtype`, runs the
 * prim function @p on inputs then outputs (destination passing) with the
 * registered compiled executor (rt/exec.h: the JIT when the engine set it
 * up; `:set exec jit`, the default) or the reference interpreter
 * (rt/tir_interp.h: `:set exec interp`, or whenever no executor is
 * registered or it cannot compile @p), and returns the output, or a tuple
 * when `shape` is a list of shapes.  call_tir is pure: an input the prim
 * function stores into is copied first, so shared tensors stay intact.
 *
 * Size variables in `shape` are resolved from the inputs: a name the
 * call's input types use (the enclosing function's size variables, e.g.
 * Tensor[(n, 784), float32]) takes the matching dim of the run-time input;
 * otherwise a size variable of @p with that name, bound from the inputs.
 *
 * Errors carry two locations: a mismatch between a tensor and @p's
 * parameter is reported at the argument (or `shape`) with a note at the
 * parameter; an error inside @p (bounds, division by zero) is reported in
 * @p with a note at the call.
 *
 * A string callee names an external function (extern.h): the outputs come
 * from `shape` (the caller's size variables only) and the function runs on
 * inputs then outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "interp/extern.h"
#include "interp/interp_int.h"
#include "ir/walk.h"
#include "rt/tir_interp.h"

enum { MAX_OUTS = 64 };

typedef struct Outs {
  int n;
  bool tuple;
  DType dt[MAX_OUTS];
  int ndim[MAX_OUTS];
  int64_t shape[MAX_OUTS][TENSOR_MAX_RANK];
} Outs;

/* Size variables known at this call: the caller's names and @p's. */
typedef struct SizeEnv {
  const Expr *call;
  const Value *inputs;
  const PrimFunc *prim;
  const int64_t *prim_vals;
  const bool *prim_known;
} SizeEnv;

/* Records a run-time error at sp (in->err, in->err_span); NULL. */
Value *interp_fail(Interp *in, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(in->err, sizeof in->err, fmt, ap);
  va_end(ap);
  in->err_span = sp;
  return NULL;
}

static void note(Interp *in, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void note(Interp *in, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(in->note, sizeof in->note, fmt, ap);
  va_end(ap);
  in->note_span = sp;
}

/* ─────────────────────────── size variables ─────────────────────────── */

/* The caller's size variable `name` from the input types and run-time shapes. */
static bool caller_size(const SizeEnv *env, const char *name, int64_t *out) {
  const Expr *tup = env->call->u.call.args[env->call->u.call.nargs - 1];
  const Type *ty = tup->ty;
  if (!ty || ty->kind != TY_TUPLE || ty->u.tuple.n != env->inputs->u.tuple.n) return false;
  for (int i = 0; i < ty->u.tuple.n; i++) {
    const Type *f = ty->u.tuple.fields[i];
    const RtTensor *t = env->inputs->u.tuple.fields[i]->u.tensor;
    if (f->kind != TY_TENSOR || f->u.tensor.ndim != t->ndim) continue;
    for (int d = 0; d < t->ndim; d++) {
      const Dim *dim = &f->u.tensor.dims[d];
      if (dim->kind == DIM_VAR && strcmp(dim->name, name) == 0) return *out = t->shape[d], true;
    }
  }
  return false;
}

static bool size_of(const SizeEnv *env, const char *name, int64_t *out) {
  if (caller_size(env, name, out)) return true;
  for (int i = 0; env->prim && i < env->prim->nsizevars; i++)
    if (env->prim_known[i] && strcmp(env->prim->sizevars[i]->name, name) == 0)
      return *out = env->prim_vals[i], true;
  return false;
}

/* ───────────────────────────── outputs ───────────────────────────── */

/* Output k's shape from a `shape` list: sizes as they are, size variables
 * from env (bound by the inputs); one that no input determines is an error
 * at the entry, not a guess. */
static bool out_shape(Interp *in, const SizeEnv *env, const AttrValue *s, Outs *o, int k) {
  if (s->kind != AV_LIST)
    return interp_fail(in, s->span, "call_tir: `shape` must be a list of sizes"), false;
  if (s->u.list.n > TENSOR_MAX_RANK)
    return interp_fail(in, s->span, "call_tir: a shape has more than %d dims", TENSOR_MAX_RANK),
           false;
  o->ndim[k] = s->u.list.n;
  for (int d = 0; d < s->u.list.n; d++) {
    const AttrValue *it = s->u.list.items[d];
    int64_t *v = &o->shape[k][d];
    if (it->kind == AV_INT && it->u.i >= 0)
      *v = it->u.i;
    else if (it->kind != AV_SYM)
      return interp_fail(in, it->span, "call_tir: `shape` entries must be sizes or size variables"),
             false;
    else if (!size_of(env, it->u.s, v))
      return interp_fail(in, it->span,
                         "call_tir: size variable %s is not determined by the inputs of %s",
                         it->u.s, "this call"),
             false;
  }
  return true;
}

/* Output k's dtype: the call's `dtype` (one, or one per output), else the
 * default of call_tir's row. */
static bool out_dtype(Interp *in, const Expr *call, const AttrValue *dt, Outs *o, int k) {
  Span sp = call->span;
  if (!dt) {
    ArenaMark m = arena_mark(&in->kx.arena);
    const char *s = op_attr_str(&in->kx.arena, call, "dtype");
    o->dt[k] = dtype_from_name(s, strlen(s));
    arena_release(&in->kx.arena, m);
    return true;
  }
  if (dt->kind == AV_LIST && dt->u.list.n != o->n)
    return interp_fail(in, dt->span, "call_tir: %d dtypes for %d outputs", dt->u.list.n, o->n),
           false;
  const AttrValue *v = dt->kind == AV_LIST ? dt->u.list.items[k] : dt;
  DType t = v->kind == AV_STR ? dtype_from_name(v->u.s, strlen(v->u.s)) : DT_INVALID;
  if (t == DT_INVALID)
    return interp_fail(in, v->span.off ? v->span : sp, "call_tir: bad `dtype`"), false;
  o->dt[k] = t;
  return true;
}

static bool outputs(Interp *in, const SizeEnv *env, Outs *o) {
  const Expr *call = env->call;
  const AttrValue *sh = attrs_get(call->u.call.attrs, "shape");
  const AttrValue *dt = attrs_get(call->u.call.attrs, "dtype");
  if (!sh || sh->kind != AV_LIST)
    return interp_fail(in, call->span, "call_tir: `shape` must be a list"), false;
  o->tuple = sh->u.list.n > 0 && sh->u.list.items[0]->kind == AV_LIST;
  o->n = o->tuple ? sh->u.list.n : 1;
  if (o->n > MAX_OUTS)
    return interp_fail(in, sh->span, "call_tir: more than %d outputs", MAX_OUTS), false;
  for (int k = 0; k < o->n; k++)
    if (!out_shape(in, env, o->tuple ? sh->u.list.items[k] : sh, o, k) ||
        !out_dtype(in, call, dt, o, k))
      return false;
  return true;
}

/* call_lowered's outputs: @p's parameters after the inputs, their size
 * variables bound by the inputs. */
static bool prim_outputs(Interp *in, const SizeEnv *env, int nin, Outs *o) {
  const PrimFunc *p = env->prim;
  o->n = p->nparams - nin, o->tuple = o->n > 1;
  if (o->n < 1 || o->n > MAX_OUTS)
    return interp_fail(in, env->call->span,
                       "call_lowered: @%s takes %d buffers, but %d inputs were given", p->name,
                       p->nparams, nin),
           false;
  for (int k = 0; k < o->n; k++) {
    const Buffer *b = p->params[nin + k];
    o->dt[k] = b->dtype, o->ndim[k] = b->ndim;
    for (int d = 0; d < b->ndim; d++) {
      Dim dim = b->dims[d];
      if (dim.kind == DIM_CONST) {
        o->shape[k][d] = dim.value;
      } else if (dim.kind != DIM_VAR || !size_of(env, dim.name, &o->shape[k][d])) {
        interp_fail(in, env->call->span,
                    "call_lowered: the size of @%s's output %%%s is not determined "
                    "by the inputs",
                    p->name, b->name);
        return false;
      }
    }
  }
  return true;
}

/* ───────────────────────────── errors ───────────────────────────── */

/* The span of input i in the call (the tuple's field when written out). */
static Span input_span(const Expr *call, int i) {
  const Expr *tup = call->u.call.args[call->u.call.nargs - 1];
  if (tup->kind == EX_TUPLE && i < tup->u.tuple.n) return tup->u.tuple.fields[i]->span;
  return tup->span;
}

/* A parameter did not fit: at the argument (or `shape`), noting the parameter. */
static Value *param_error(Interp *in, const Expr *call, const PrimFunc *p, int nin,
                          const TirError *e) {
  Span at = call->span;
  if (e->param >= 0 && e->param < nin) {
    at = input_span(call, e->param);
  } else {
    const AttrValue *sh = attrs_get(call->u.call.attrs, "shape");
    if (sh && sh->span.off) at = sh->span;
  }
  interp_fail(in, at, "call_tir: %s", e->msg);
  if (e->param >= 0) {
    const Buffer *b = p->params[e->param];
    note(in, b->span, "parameter %%%s of @%s", b->name, p->name);
  }
  return NULL;
}

/* ── errors inside a kernel the lowering made: told as the user's op's ── */

/* The ops whose kernels can divide by zero (by a divisor not constant). */
static bool divides(const char *op, const Expr *call) {
  if (call->u.call.nargs == 2 && call->u.call.args[1]->kind == EX_CONST) return false;
  static const char *const names[] = {"divide",       "floor_divide", "mod",  "floor_mod",
                                      "trunc_divide", "trunc_mod",    "power"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(op, names[i]) == 0) return true;
  return false;
}

typedef struct Culprit {
  bool division;    /* the error is a division by zero */
  const Expr *root; /* the group's first op call (walk order) */
  const Expr *best; /* the op that can raise the error */
} Culprit;

static bool culprit_visit(void *ctx, Expr *x) {
  Culprit *c = ctx;
  if (c->best || x->kind != EX_CALL || x->u.call.fn->kind != EX_OP) return !c->best;
  if (!c->root) c->root = x;
  const OpDef *op = ops_get(x->u.call.fn->u.op.index);
  bool integer = x->ty && x->ty->kind == TY_TENSOR && dtype_is_int(x->ty->u.tensor.dtype);
  if (op && (c->division ? divides(op->name, x) && integer : op->pattern >= OPAT_INJECTIVE))
    c->best = x;
  return !c->best;
}

/* The kernel's message in the user's terms, into buf: without its
 * "@fused_...: " prefix, a buffer's "for %p0 dimension 1" as "for axis 1". */
static const char *user_message(const PrimFunc *p, const char *msg, char *buf, size_t n) {
  size_t k = strlen(p->name);
  if (msg[0] == '@' && strncmp(msg + 1, p->name, k) == 0 && strncmp(msg + 1 + k, ": ", 2) == 0)
    msg += k + 3;
  const char *at = strstr(msg, " for %"), *dim = at ? strstr(at, " dimension ") : NULL;
  if (!dim || memchr(at + 6, ' ', (size_t)(dim - at - 6)))
    snprintf(buf, n, "%s", msg);
  else
    snprintf(buf, n, "%.*s for axis %s", (int)(at - msg), msg, dim + 11);
  return buf;
}

/* An error inside a lowered group: at the user's op that raised it (the
 * group's op that can, else its first), named by its op, as the reference
 * kernels report it.  The group of a prim function shared by identical
 * groups elsewhere gives the op's name; the location is then this call's. */
static bool group_error(Interp *in, const Expr *call, const PrimFunc *p, const TirError *e) {
  if (!p->group) return false;
  Culprit c = {strstr(e->msg, "division by zero") != NULL, NULL, NULL};
  expr_walk(p->group->body, culprit_visit, &c);
  const Expr *op = c.best ? c.best : c.root;
  if (!op) return false;
  bool here = p->group->body->span.off == call->span.off || p->group->span.off == call->span.off;
  char buf[sizeof e->msg];
  interp_fail(in, here ? op->span : call->span, "%s: %s", op->u.call.fn->u.op.name,
              user_message(p, e->msg, buf, sizeof buf));
  return true;
}

/* An error from running @p: a parameter that did not fit, or one inside @p. */
void call_tir_error(Interp *in, const Expr *call, const PrimFunc *p, int nin, const TirError *e) {
  if (e->param >= 0) {
    param_error(in, call, p, nin, e);
    return;
  }
  if (group_error(in, call, p, e)) return;
  interp_fail(in, e->span, "%s", e->msg);
  note(in, call->span, "in @%s, called by call_tir here", p->name);
}

/* ───────────────────────────── running ───────────────────────────── */

static const char *extern_name(const Expr *call) {
  const AttrValue *name = attrs_get(call->u.call.attrs, "callee");
  return name && name->kind == AV_STR && name->u.s[0] ? name->u.s : NULL;
}

static const PrimFunc *callee(Interp *in, const Expr *call) {
  const char *op = ops_get(call->u.call.fn->u.op.index)->name;
  const Expr *g = call->u.call.nargs >= 2 ? call->u.call.args[0] : NULL;
  if (!g || g->kind != EX_GLOBAL)
    return interp_fail(in, call->span, "%s: the callee must be a prim function @name", op), NULL;
  const Def *d = interp_def(in, g->u.global.name);
  const PrimFunc *p = d && d->kind == DEF_PRIM ? d->u.prim : NULL;
  if (!p)
    return interp_fail(in, g->span, "%s: @%s is not a prim function", op, g->u.global.name), NULL;
  return prim_to_run(p);
}

static const Value *input_tuple(Interp *in, const Expr *call, Value **args, int n) {
  const Value *t = n > 0 ? args[n - 1] : NULL;
  if (!t || t->kind != V_TUPLE)
    return interp_fail(in, call->span, "call_tir: the inputs must be a tuple"), NULL;
  for (int i = 0; i < t->u.tuple.n; i++)
    if (t->u.tuple.fields[i]->kind != V_TENSOR)
      return interp_fail(in, input_span(call, i), "call_tir: input %d is not a tensor", i + 1),
             NULL;
  return t;
}

/* Large fresh outputs ask for transparent huge pages before their first
 * touch (as numpy does): a page fault per 4 KiB dominates simple kernels. */
static void advise_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (n < ((size_t)4 << 20)) return;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
  if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p, (void)n;
#endif
}

/* Zero-filled outputs into outs[] (not zeroed when full[k]: the kernel
 * writes all of it); owned[k] marks the tensors this call must release
 * (until results() hands them to values). */
static bool alloc_outputs(Interp *in, const Expr *call, const Outs *o, RtTensor **outs, bool *owned,
                          const bool *full) {
  for (int k = 0; k < o->n; k++) {
    outs[k] = rt_tensor_new(o->dt[k], o->ndim[k], o->shape[k], in->err, sizeof in->err);
    if (!outs[k]) return in->err_span = call->span, false;
    advise_huge(outs[k]->data, rt_tensor_nbytes(outs[k]));
    if (!(full && full[k])) memset(outs[k]->data, 0, rt_tensor_nbytes(outs[k]));
    owned[k] = true;
  }
  return true;
}

/* The compiled form of @p: the compiled executor's kernel (exec jit, when
 * it can build one) or the interpreter's program. */
typedef struct Runner {
  const RtExecutor *x;
  const void *kernel;
  const TirProgram *prog;
} Runner;

static bool runner_writes(const Runner *r, int i) {
  return r->kernel ? r->x->writes_param(r->kernel, i) : tir_interp_writes_param(r->prog, i);
}

static bool runner_run(const Runner *r, RtTensor **ts, int n, TirError *e) {
  return r->kernel ? r->x->run(r->kernel, ts, n, e) : tir_interp_run(r->prog, ts, n, e);
}

/* The tensors for @p: inputs (those @p writes replaced by copies), then
 * fresh outputs. */
static bool prepare(Interp *in, const Expr *call, const Runner *run, const Outs *o, int nin,
                    RtTensor **ts, bool *owned) {
  for (int i = 0; i < nin; i++) {
    if (!runner_writes(run, i)) continue;
    RtTensor *c = rt_tensor_new(ts[i]->dtype, ts[i]->ndim, ts[i]->shape, in->err, sizeof in->err);
    if (!c) return in->err_span = call->span, false;
    memcpy(c->data, ts[i]->data, rt_tensor_nbytes(c));
    ts[i] = c, owned[i] = true;
  }
  bool full[MAX_OUTS];
  for (int k = 0; k < o->n; k++)
    full[k] = run->kernel && run->x->writes_all_of_param(run->kernel, nin + k);
  return alloc_outputs(in, call, o, ts + nin, owned + nin, full);
}

static Value *results(Interp *in, const Outs *o, RtTensor **outs, bool *owned) {
  if (!o->tuple) {
    owned[0] = false;
    return value_tensor(in, outs[0]);
  }
  Value *t = value_new(in, V_TUPLE, o->n);
  for (int k = 0; k < o->n; k++) t->u.tuple.fields[k] = value_tensor(in, outs[k]), owned[k] = false;
  return t;
}

/* The compiled executor when exec is jit and it can compile @p (silently
 * the interpreter otherwise: none registered, or a construct it does not
 * handle; an error instead with jit_require). */
static bool get_runner(Interp *in, const Expr *call, const PrimFunc *p, Runner *r) {
  TirError e = {.msg = "no compiled executor"};
  r->x = in->opt.exec_jit ? rt_executor() : NULL;
  r->kernel = r->x ? r->x->prepare(p, &e) : NULL;
  r->prog = NULL;
  if (r->kernel) return true;
  if (in->opt.exec_jit && in->opt.jit_require)
    return interp_fail(in, call->span, "@%s was not compiled: %s (RLY_JIT_REQUIRE=1)", p->name,
                       e.msg),
           false;
  if (!in->tir) in->tir = tir_interp_cache_new();
  r->prog = tir_interp_compile(in->tir, p, &e);
  if (!r->prog) return interp_fail(in, e.span.off ? e.span : call->span, "%s", e.msg), false;
  return true;
}

/* A prim function whose output is its input's elements in order (a
 * reshape: PrimFunc.out_is_view) returns a view of the input. */
static Value *view_result(Interp *in, const Expr *call, const Value *inputs, const Outs *o) {
  RtTensor *x = inputs->u.tuple.fields[0]->u.tensor;
  RtTensor *t = rt_tensor_view(x, o->ndim[0], o->shape[0], in->err, sizeof in->err);
  if (!t) return interp_fail(in, call->span, "%s", in->err);
  return value_tensor(in, t);
}

static Value *run_prim(Interp *in, const Expr *call, const PrimFunc *p, const Value *inputs,
                       const Outs *o) {
  int nin = inputs->u.tuple.n, total = nin + o->n;
  if (p->out_is_view && in->opt.exec_jit && nin == 1 && o->n == 1 && !o->tuple &&
      o->dt[0] == inputs->u.tuple.fields[0]->u.tensor->dtype)
    return view_result(in, call, inputs, o);
  Runner run;
  if (!get_runner(in, call, p, &run)) return NULL;
  TirError e;
  RtTensor **ts = calloc((size_t)total, sizeof *ts);
  bool *owned = calloc((size_t)total, sizeof *owned);
  if (!ts || !owned) rly_oom();
  for (int i = 0; i < nin; i++) ts[i] = inputs->u.tuple.fields[i]->u.tensor;
  Value *r = NULL;
  if (prepare(in, call, &run, o, nin, ts, owned)) {
    if (runner_run(&run, ts, total, &e))
      r = results(in, o, ts + nin, owned + nin);
    else
      call_tir_error(in, call, p, nin, &e);
  }
  for (int i = 0; i < total; i++)
    if (owned[i]) rt_tensor_release(ts[i]);
  free(ts);
  free(owned);
  return r;
}

/* Checks the inputs against @p and resolves the outputs. */
static bool plan(Interp *in, const Expr *call, const PrimFunc *p, const Value *inputs, Outs *o) {
  int nin = inputs->u.tuple.n;
  int64_t *vals = calloc((size_t)p->nsizevars + 1, sizeof *vals);
  bool *known = calloc((size_t)p->nsizevars + 1, sizeof *known);
  RtTensor **ts = calloc((size_t)nin + 1, sizeof *ts);
  if (!vals || !known || !ts) rly_oom();
  for (int i = 0; i < nin; i++) ts[i] = inputs->u.tuple.fields[i]->u.tensor;
  TirError e;
  bool ok = nin <= p->nparams;
  if (ok && !(ok = tir_interp_bind_sizes(p, ts, nin, vals, known, &e)))
    param_error(in, call, p, nin, &e);
  SizeEnv env = {call, inputs, p, vals, known};
  ok = ok &&
       (ops_has_flag(call->u.call.fn->u.op.index, OP_CALL_LOWERED) ? prim_outputs(in, &env, nin, o)
                                                                   : outputs(in, &env, o));
  if (ok && p->nparams != nin + o->n) {
    interp_fail(in, call->span,
                "call_tir: @%s takes %d buffers, but the call gives %d inputs and %d output%s",
                p->name, p->nparams, nin, o->n, o->n == 1 ? "" : "s");
    note(in, p->span, "@%s is defined here", p->name);
    ok = false;
  } else if (!ok && nin > p->nparams) {
    interp_fail(in, call->span, "call_tir: @%s takes %d buffers, but the call gives %d inputs",
                p->name, p->nparams, nin);
    note(in, p->span, "@%s is defined here", p->name);
  }
  free(vals), free(known), free(ts);
  return ok;
}

static Value *run_extern(Interp *in, const Expr *call, const char *name, const Value *inputs,
                         Outs *o) {
  void *ctx;
  RlyExternFn fn = rly_extern_lookup(name, &ctx);
  if (!fn)
    return interp_fail(in, call->span, "call_tir: external function %s is not registered", name);
  SizeEnv env = {call, inputs, NULL, NULL, NULL};
  if (!outputs(in, &env, o)) return NULL;
  int nin = inputs->u.tuple.n, total = nin + o->n;
  RtTensor **ts = calloc((size_t)total, sizeof *ts);
  bool *owned = calloc((size_t)total, sizeof *owned);
  RlyTensor *views = calloc((size_t)total, sizeof *views);
  if (!ts || !owned || !views) rly_oom();
  for (int i = 0; i < nin; i++) ts[i] = inputs->u.tuple.fields[i]->u.tensor;
  Value *r = NULL;
  bool ok = alloc_outputs(in, call, o, ts + nin, owned + nin, NULL);
  for (int i = 0; ok && i < total; i++)
    views[i] = (RlyTensor){ts[i]->data, ts[i]->dtype, ts[i]->ndim, ts[i]->shape};
  char err[RT_ERR_LEN] = "";
  if (ok && fn(views, total, ctx, err, sizeof err) != 0) {
    interp_fail(in, call->span, "call_tir: %s failed: %s", name, err[0] ? err : "(no message)");
    ok = false;
  }
  if (ok) r = results(in, o, ts + nin, owned + nin);
  for (int i = 0; i < total; i++)
    if (owned[i]) rt_tensor_release(ts[i]);
  free(ts), free(owned), free(views);
  return r;
}

Value *call_tir_run(Interp *in, const Expr *call, Value **args, int n) {
  in->note[0] = 0;
  const char *ext = extern_name(call);
  const PrimFunc *p = ext ? NULL : callee(in, call);
  const Value *inputs = ext || p ? input_tuple(in, call, args, n) : NULL;
  if (!inputs) return NULL;
  Outs *o = malloc(sizeof *o);
  if (!o) rly_oom();
  Value *r = ext                            ? run_extern(in, call, ext, inputs, o)
             : plan(in, call, p, inputs, o) ? run_prim(in, call, p, inputs, o)
                                            : NULL;
  free(o);
  return r;
}

/* vm.invoke_tvm_op(@p, (ins), (outs)): @p runs on the given tensors, so
 * the outputs (fresh from memory.alloc_tensor) are written in place. */
Value *call_tir_invoke(Interp *in, const Expr *call, Value **args, int n) {
  in->note[0] = 0;
  const PrimFunc *p = n == 3 ? callee(in, call) : NULL;
  if (!p) return NULL;
  const Value *ins = args[1], *outs = args[2];
  int nin = ins->u.tuple.n, total = nin + outs->u.tuple.n;
  if (total != p->nparams)
    return interp_fail(in, call->span, "vm.invoke_tvm_op: @%s takes %d buffers, but %d were given",
                       p->name, p->nparams, total);
  RtTensor **ts = calloc((size_t)total + 1, sizeof *ts);
  int64_t *vals = calloc((size_t)p->nsizevars + 1, sizeof *vals);
  bool *known = calloc((size_t)p->nsizevars + 1, sizeof *known);
  if (!ts || !vals || !known) rly_oom();
  for (int i = 0; i < total; i++) {
    const Value *v = i < nin ? ins->u.tuple.fields[i] : outs->u.tuple.fields[i - nin];
    ts[i] = v->kind == V_TENSOR ? v->u.tensor : NULL;
  }
  Runner run;
  TirError e;
  Value *r = NULL;
  int bad = 0;
  for (int i = total; i > 0; i--)
    if (!ts[i - 1]) bad = i;
  if (bad) {
    interp_fail(in, call->span, "vm.invoke_tvm_op: buffer %d is not a tensor", bad);
  } else if (!tir_interp_bind_sizes(p, ts, total, vals, known, &e)) {
    param_error(in, call, p, nin, &e);
  } else if (get_runner(in, call, p, &run)) {
    if (runner_run(&run, ts, total, &e))
      r = value_unit(in);
    else
      call_tir_error(in, call, p, nin, &e);
  }
  free(ts), free(vals), free(known);
  return r;
}

void call_tir_free(Interp *in) {
  tir_interp_cache_free(in->tir);
  in->tir = NULL;
}
