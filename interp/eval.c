/* eval.c — the evaluator: a machine with explicit stacks.
 *
 * State: the current proc and frame base (fb) into the slot stack, the
 * continuation stack (Kont), and a stack of temporaries (argument values,
 * tuple fields).  The C stack never grows with the program: let chains
 * replace their continuation before evaluating the body, and a call whose
 * continuation is a return (a tail call) reuses the caller's frame, so a
 * 10,000,000-iteration tail-recursive loop runs in constant space.
 * Non-tail calls push a K_RETURN; their number is the depth, limited by
 * InterpOptions.max_depth.
 *
 * Safe points: the top of the loop.  There every live value is on a stack or
 * in `in->current`, so the collector may run.  Errors unwind the stacks to
 * where run() was entered and become diagnostics with the call stack.
 *
 * Speed: a call of an @function that the scalar fast path compiled
 * (fast.c) runs there, entered from `enter` after the usual depth and
 * tail-call bookkeeping; rank-0 elementwise ops skip the type relation
 * (scalar_op); a constant inside a function and a def's closure are made
 * once (Interp.consts).  RLY_FAST=0 turns the first two off (the caches
 * change no result). */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"
#include "kernels/prng.h"
#include "kernels/scalar_ops.h"
#include "ops/ops.h"

typedef enum KontKind {
  K_RETURN, /* pop the callee's frame, back to the caller */
  K_LET,    /* bind the value, continue with the body */
  K_CALL,   /* collect callee and arguments, then apply */
  K_TUPLE,  /* collect fields */
  K_PROJ,
  K_IF,
  K_MATCH,
  K_REF_NEW,
  K_REF_READ,
  K_REF_WRITE, /* i = 0: got the ref; i = 1: got the value */
} KontKind;

struct Kont {
  KontKind kind;
  int32_t i;
  bool callee_value; /* K_CALL: the callee was evaluated to a value at vbase */
  size_t vbase;
  const Expr *e;
  /* K_RETURN */
  Proc *proc;
  size_t fb;
  const char *callee;
  Span span;
};

/* ───────────────────────────── stacks ───────────────────────────── */

static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  p = realloc(p, c * elem);
  if (!p) rly_oom();
  *cap = c;
  return p;
}

static void push_val(Interp *in, Value *v) {
  in->vals = grow(in->vals, &in->vals_cap, in->nvals + 1, sizeof(Value *));
  in->vals[in->nvals++] = v;
}

static Kont *push_kont(Interp *in, KontKind kind, const Expr *e) {
  in->konts = grow(in->konts, &in->konts_cap, in->nkonts + 1, sizeof(Kont));
  Kont *k = &in->konts[in->nkonts++];
  memset(k, 0, sizeof *k);
  k->kind = kind, k->e = e, k->vbase = in->nvals;
  return k;
}

/* A frame of p's slots at `base`, all empty. */
static void open_frame(Interp *in, Proc *p, size_t base) {
  in->slots = grow(in->slots, &in->slots_cap, base + (size_t)p->nslots + 1, sizeof(Value *));
  memset(in->slots + base, 0, sizeof(Value *) * (size_t)p->nslots);
  in->nslots_used = base + (size_t)p->nslots;
}

/* ───────────────────────────── errors ───────────────────────────── */

static bool fail(Interp *in, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool fail(Interp *in, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(in->err, sizeof in->err, fmt, ap);
  va_end(ap);
  in->err_span = sp;
  return false;
}

/* Reports the error with the chain of @function calls, innermost first;
 * a run of identical frames (recursion) is one note with a count. */
/* The index+1 of the nearest K_RETURN below position i (exclusive), or kbase. */
static size_t next_return(const Interp *in, size_t i, size_t kbase) {
  while (i > kbase && in->konts[i - 1].kind != K_RETURN) i--;
  return i;
}

static bool same_frame(const Kont *a, const Kont *b) {
  return a->callee == b->callee && a->span.off == b->span.off;
}

static void report(Interp *in, size_t kbase) {
  diag_error(in->diag, in->err_span, "%s", in->err);
  if (in->note[0]) diag_note(in->diag, in->note_span, "%s", in->note), in->note[0] = 0;
  int shown = 0;
  size_t i = next_return(in, in->nkonts, kbase);
  while (i > kbase && shown < 12) {
    const Kont *k = &in->konts[i - 1];
    size_t same = 1, j = next_return(in, i - 1, kbase);
    while (j > kbase && same_frame(&in->konts[j - 1], k)) same++, j = next_return(in, j - 1, kbase);
    char times[48] = "";
    if (same > 1) snprintf(times, sizeof times, " (%zu times)", same);
    if (k->callee)
      diag_note(in->diag, k->span, "in @%s, called from here%s", k->callee, times);
    else
      diag_note(in->diag, k->span, "in a closure, called from here%s", times);
    i = j;
    shown++;
  }
}

/* ───────────────────────────── values ───────────────────────────── */

static const char *describe(const Value *v) {
  static const char *const names[] = {
#define X(e, n) n,
      VALUE_KINDS(X)
#undef X
  };
  return names[v->kind];
}

static Value *closure_of(Interp *in, Proc *p, const char *name) {
  Value *v = value_new(in, V_CLOSURE, p->ncap);
  v->u.closure.proc = p, v->u.closure.name = name;
  return v;
}

/* The cell of a state global, created (and its initializer run) on first use. */
static Value *eval_in(Interp *in, Proc *p, const Expr *e, bool *ok);

static Value *eval_toplevel(Interp *in, const Expr *e, bool *ok);

/* A state global's cell, created on first use: its initializer runs then
 * (@prng_state's default is random.key(0)), so an unused global costs
 * nothing and initializers see the module as it is at run time. */
static Value *global_cell(Interp *in, const StateGlobal *g, Span sp) {
  Value *cell = strmap_get(&in->globals, g->name);
  if (cell) return cell;
  Value *init;
  if (g->init) {
    bool ok = true;
    init = eval_toplevel(in, g->init, &ok);
    if (!ok) return NULL;
  } else {
    init = value_new(in, V_KEY, 0); /* @prng_state = random.key(0) */
  }
  push_val(in, init);
  cell = value_new(in, V_REF, 0);
  cell->u.ref.cell = init;
  in->nvals--;
  strmap_put(&in->globals, g->name, cell);
  (void)sp;
  return cell;
}

const Def *interp_def(Interp *in, const char *name) {
  uint64_t *slot = u64map_slot(&in->defs, (uint64_t)(uintptr_t)name);
  if (!*slot) *slot = (uint64_t)(uintptr_t)module_lookup(in->mod, name);
  return (const Def *)(uintptr_t)*slot;
}

/* @name as a value: a def's closure or a state global's current value. */
static Value *global_value(Interp *in, const Expr *e) {
  const Def *d = interp_def(in, e->u.global.name);
  if (!d) return fail(in, e->span, "unknown global @%s", e->u.global.name), NULL;
  if (d->kind == DEF_GLOBAL) {
    Value *cell = global_cell(in, d->u.global, e->span);
    if (!cell) return NULL;
    cell->u.ref.cell->cell_private = false; /* escapes: no more in-place updates */
    return cell->u.ref.cell;
  }
  if (d->kind == DEF_PRIM)
    return value_unit(in); /* call_tir's callee: call_tir_run reads the call */
  Proc *p = proc_of(in, d->u.func->fn, d->u.func->name);
  if (p->ncap) return fail(in, e->span, "@%s uses a variable it does not bind", p->name), NULL;
  /* One closure per def, shared: it captures nothing, so nothing mutates it. */
  uint64_t *slot = u64map_slot(&in->consts, (uint64_t)(uintptr_t)p);
  if (!*slot) *slot = (uint64_t)(uintptr_t)closure_of(in, p, p->name);
  return (Value *)(uintptr_t)*slot;
}

/* A constant's Value in a function is made once and shared (tensors are
 * never written; only fast-path cell_private tensors are, and constants
 * never are). */
Value *interp_const_value(Interp *in, const Proc *p, const Expr *e) {
  if (!p->fn) { /* top level: run once, and its IR may be released after */
    RtTensor *t = rt_tensor_borrow_ir(e->u.konst.value, in->err, sizeof in->err);
    if (!t) return fail(in, e->span, "%s", in->err), NULL;
    return value_tensor(in, t);
  }
  uint64_t *slot = u64map_find(&in->consts, (uint64_t)(uintptr_t)e);
  if (slot) return (Value *)(uintptr_t)*slot;
  RtTensor *t = rt_tensor_borrow_ir(e->u.konst.value, in->err, sizeof in->err);
  if (!t) return fail(in, e->span, "%s", in->err), NULL;
  Value *v = value_tensor(in, t);
  *u64map_slot(&in->consts, (uint64_t)(uintptr_t)e) = (uint64_t)(uintptr_t)v;
  return v;
}

/* A fn expression: capture the variables it uses from this frame. */
static Value *make_closure(Interp *in, Proc *cur, size_t fb, const Expr *e) {
  Proc *p = proc_of(in, e->u.fn, NULL);
  Value *v = closure_of(in, p, NULL);
  for (int i = 0; i < p->ncap; i++) {
    int s = proc_slot(cur, p->caps[i]);
    RLY_ASSERT(s >= 0);
    v->u.closure.cap[i] = in->slots[fb + (size_t)s];
  }
  return v;
}

/* `let %f = fn … { … %f … }`: the closure captured %f before it existed. */
static void patch_recursive(Value *v, const Var *var) {
  if (v->kind != V_CLOSURE) return;
  Proc *p = v->u.closure.proc;
  for (int i = 0; i < p->ncap; i++)
    if (p->caps[i] == var) v->u.closure.cap[i] = v;
}

static bool truthy(Interp *in, const Value *v, Span sp, bool *out) {
  if (v->kind != V_TENSOR || v->u.tensor->ndim != 0 || v->u.tensor->dtype != DT_BOOL)
    return fail(in, sp, "if condition must be a bool scalar, got a %s", describe(v));
  *out = *(const uint8_t *)v->u.tensor->data != 0;
  return true;
}

/* ───────────────────────────── patterns ───────────────────────────── */

static bool same_ctor(const Value *v, const AdtDef *adt, int index) {
  return v->kind == V_ADT && v->u.adt.index == index && strcmp(v->u.adt.adt->name, adt->name) == 0;
}

static bool match_pattern(Interp *in, Proc *p, size_t fb, const Pattern *pat, Value *v) {
  switch (pat->kind) {
    case PAT_WILD:
      return true;
    case PAT_VAR:
      in->slots[fb + (size_t)proc_slot(p, pat->u.var)] = v;
      return true;
    case PAT_CTOR:
      if (!same_ctor(v, pat->u.ctor.adt, pat->u.ctor.index)) return false;
      for (int i = 0; i < pat->u.ctor.n; i++)
        if (!match_pattern(in, p, fb, pat->u.ctor.sub[i], v->u.adt.fields[i])) return false;
      return true;
    case PAT_TUPLE:
      if (v->kind != V_TUPLE || v->u.tuple.n != pat->u.tuple.n) return false;
      for (int i = 0; i < pat->u.tuple.n; i++)
        if (!match_pattern(in, p, fb, pat->u.tuple.sub[i], v->u.tuple.fields[i])) return false;
      return true;
  }
  return false;
}

/* ───────────────────────────── ops ───────────────────────────── */

/* Argument and result arrays of an op call live on the stack up to these
 * counts, on the heap past them (a concatenate or split of hundreds). */
enum { MAX_OP_INPUTS = 64, MAX_OP_OUTPUTS = 64 };

/* The number of tensors an op's arguments flatten to. */
static int op_input_count(Value **args, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) k += args[i]->kind == V_TUPLE ? args[i]->u.tuple.n : 1;
  return k;
}

/* Op arguments as tensors (a tuple argument is flattened; a key becomes its
 * two uint32 words). */
static int op_inputs(Interp *in, const char *op, Value **args, int n, RtTensor **ins, Span sp) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    Value *a = args[i];
    int nf = a->kind == V_TUPLE ? a->u.tuple.n : 1;
    for (int j = 0; j < nf; j++) {
      Value *f = a->kind == V_TUPLE ? a->u.tuple.fields[j] : a;
      if (f->kind == V_TENSOR)
        ins[k++] = f->u.tensor;
      else
        return fail(in, sp, "%s: argument %d is a %s, not a tensor", op, i + 1, describe(f)), -1;
    }
  }
  return k;
}

/* Which runner an op needs: kernels, call_tir, or the key-taking random
 * ops (which also depend on the argument count: nn.dropout with a key). */
typedef enum OpRunner { RUN_KERNEL = 1, RUN_CALL_TIR, RUN_RANDOM, RUN_OWN } OpRunner;

static OpRunner op_runner(const OpDef *def, int opindex, int n) {
  enum { MAX_OPS = 1024, MAX_N = 4 };
  static unsigned char cache[MAX_OPS][MAX_N];
  unsigned char *c = opindex < MAX_OPS && n < MAX_N ? &cache[opindex][n] : NULL;
  if (c && *c) return (OpRunner)*c;
  OpRunner r = def->flags & OP_CALL_TIR                     ? RUN_CALL_TIR
               : def->flags & (OP_IDENTITY | OP_OWN_RUNNER) ? RUN_OWN
               : random_handles(opindex, n)                 ? RUN_RANDOM
                                                            : RUN_KERNEL;
  if (c) *c = (unsigned char)r;
  return r;
}

bool interp_plain_op(int opindex, int nargs) {
  return op_runner(ops_get(opindex), opindex, nargs) == RUN_KERNEL && kernels_get(opindex);
}

/* Rank-0 elementwise ops (no attributes, equal dtypes, a known result
 * dtype) run the kernels' element code directly (scalar_ops.h), without the
 * type relation and output inference.  *done false: not such a call. */
static Value *scalar_op(Interp *in, const Expr *call, int opindex, Value **args, int n,
                        bool *done) {
  enum { MAX_OPS = 1024 };
  static int16_t code[MAX_OPS][2]; /* per op and arity: elementwise index + 1, or -1 */
  *done = false;
  if (in->opt.no_fast || opindex >= MAX_OPS || n < 1 || n > 2 || call->kind != EX_CALL ||
      (call->u.call.attrs && call->u.call.attrs->n))
    return NULL;
  int16_t *c = &code[opindex][n - 1];
  if (!*c) {
    int k = n == 2 ? scalar_binop(opindex) : scalar_unop(opindex);
    *c = (int16_t)(k < 0 ? -1 : k + 1);
  }
  const Type *ty = call->ty;
  if (*c < 0 || !ty || ty->kind != TY_TENSOR || ty->u.tensor.ndim != 0) return NULL;
  for (int i = 0; i < n; i++)
    if (args[i]->kind != V_TENSOR || args[i]->u.tensor->ndim != 0 ||
        args[i]->u.tensor->dtype != args[0]->u.tensor->dtype)
      return NULL;
  DType dt = args[0]->u.tensor->dtype, odt = ty->u.tensor.dtype;
  RtTensor *out = rt_tensor_new(odt, 0, NULL, in->err, sizeof in->err);
  *done = true;
  if (!out) return fail(in, call->span, "%s", in->err), NULL;
  _Alignas(8) unsigned char a[8], b[8], r[8];
  memcpy(a, args[0]->u.tensor->data, (size_t)dtype_bytes(dt));
  if (n == 2) memcpy(b, args[1]->u.tensor->data, (size_t)dtype_bytes(dt));
  bool ok = n == 2 ? scalar_binary(&in->kx, *c - 1, dt, odt, a, b, r)
                   : scalar_unary(&in->kx, *c - 1, dt, odt, a, r);
  if (!ok) {
    rt_tensor_release(out);
    return fail(in, call->span, "%s", in->kx.err), NULL;
  }
  memcpy(out->data, r, (size_t)dtype_bytes(odt));
  return value_tensor(in, out);
}

/* The kernel table's run of an op on evaluated arguments, flattened into
 * ins (room for all of them); outs has room for maxout results. */
static Value *run_kernel(Interp *in, const Expr *call, int opindex, Value **args, int n,
                         RtTensor **ins, int maxout, RtTensor **outs) {
  const OpDef *def = ops_get(opindex);
  int nin = op_inputs(in, def->name, args, n, ins, call->span), nout = 0;
  if (nin < 0) return NULL;
  in->kx.err[0] = 0;
  in->kx.rel.err[0] = 0;
  const Attrs *attrs = call->kind == EX_CALL ? call->u.call.attrs : NULL;
  if (!kernels_infer_and_run(&in->kx, opindex, nin, ins, attrs, maxout, &nout, outs))
    return fail(in, call->span, "%s", in->kx.err), NULL;
  bool tuple = nout != 1 || (call->ty && call->ty->kind == TY_TUPLE);
  if (!tuple) return value_tensor(in, outs[0]);
  Value *t = value_new(in, V_TUPLE, nout);
  for (int i = 0; i < nout; i++) t->u.tuple.fields[i] = value_tensor(in, outs[i]);
  return t;
}

/* Runs one op call on evaluated arguments: rank-0 elementwise ops take the
 * scalar shortcut, call_tir and random ops have their own runners, the rest
 * go through the kernel table (type relation, then kernel). */
static Value *run_op(Interp *in, const Expr *call, int opindex, Value **args, int n) {
  const OpDef *def = ops_get(opindex);
  OpRunner runner = op_runner(def, opindex, n);
  if (runner == RUN_KERNEL) {
    bool done;
    Value *v = scalar_op(in, call, opindex, args, n, &done);
    if (done) return v;
  }
  if (runner == RUN_CALL_TIR) return call_tir_run(in, call, args, n);
  if (runner == RUN_OWN) return vm_ops_run(in, call, opindex, args, n);
  if (runner == RUN_RANDOM) {
    Value *v = random_run(in, call, opindex, args, n, in->opt.prng_original);
    if (!v) in->err_span = call->span;
    return v;
  }
  const Type *ty = call->ty;
  int cap_in = op_input_count(args, n);
  int cap_out = ty && ty->kind == TY_TUPLE ? ty->u.tuple.n : 1;
  if (cap_out < MAX_OP_OUTPUTS) cap_out = MAX_OP_OUTPUTS;
  RtTensor *in_buf[MAX_OP_INPUTS], *out_buf[MAX_OP_OUTPUTS];
  RtTensor **ins = cap_in <= MAX_OP_INPUTS ? in_buf : malloc(sizeof(RtTensor *) * (size_t)cap_in);
  RtTensor **outs =
      cap_out <= MAX_OP_OUTPUTS ? out_buf : malloc(sizeof(RtTensor *) * (size_t)cap_out);
  if (!ins || !outs) rly_oom();
  Value *r = run_kernel(in, call, opindex, args, n, ins, cap_out, outs);
  if (ins != in_buf) free(ins);
  if (outs != out_buf) free(outs);
  return r;
}

static Value *make_adt(Interp *in, AdtDef *adt, int index, Value **args, int n, Span sp) {
  if (n != adt->ctors[index].nfields)
    return fail(in, sp, "%s expects %d fields, got %d", adt->ctors[index].name,
                adt->ctors[index].nfields, n),
           NULL;
  Value *v = value_new(in, V_ADT, n);
  v->u.adt.adt = adt, v->u.adt.index = index;
  if (n) memcpy(v->u.adt.fields, args, sizeof(Value *) * (size_t)n);
  return v;
}

/* ─────────────────────── parameter shape checks ─────────────────────── */

typedef struct SizeBinding {
  const char *name;
  int64_t value;
  int param;
} SizeBinding;

static const char *param_name(const Proc *p, int i) {
  const Var *v = p->fn->params[i];
  return var_named(v) ? v->name : "?";
}

static bool check_dims(Interp *in, const Proc *p, const ParamCheck *c, const RtTensor *t,
                       SizeBinding *sb, int *nsb, Span sp) {
  const Type *ty = c->type;
  const char *fname = p->name ? p->name : "fn";
  if (ty->u.tensor.ndim != t->ndim || ty->u.tensor.dtype != t->dtype) {
    char want[256], got[64];
    char *w = print_type(ty);
    snprintf(want, sizeof want, "%s", w);
    free(w);
    return fail(in, sp, "@%s: %%%s expects %s but got a %s tensor of shape %s", fname,
                param_name(p, c->param), want, dtype_name(t->dtype),
                rt_shape_str(got, sizeof got, t->ndim, t->shape));
  }
  for (int d = 0; d < t->ndim; d++) {
    Dim dim = ty->u.tensor.dims[d];
    if (dim.kind == DIM_CONST && dim.value != t->shape[d])
      return fail(in, sp, "@%s: %%%s has size %lld in dimension %d, expected %lld", fname,
                  param_name(p, c->param), (long long)t->shape[d], d, (long long)dim.value);
    if (dim.kind != DIM_VAR) continue;
    int j = 0;
    while (j < *nsb && strcmp(sb[j].name, dim.name) != 0) j++;
    if (j == *nsb) {
      if (*nsb < 64) sb[(*nsb)++] = (SizeBinding){dim.name, t->shape[d], c->param};
    } else if (sb[j].value != t->shape[d]) {
      return fail(in, sp, "@%s: size %s is %lld for %%%s but %lld for %%%s", fname, dim.name,
                  (long long)sb[j].value, param_name(p, sb[j].param), (long long)t->shape[d],
                  param_name(p, c->param));
    }
  }
  return true;
}

static bool check_params(Interp *in, const Proc *p, Value **args, Span sp) {
  SizeBinding sb[64];
  int nsb = 0;
  for (int i = 0; i < p->nchecks; i++) {
    const ParamCheck *c = &p->checks[i];
    const Value *a = args[c->param];
    if (a->kind != V_TENSOR)
      return fail(in, sp, "@%s: %%%s expects a tensor, got a %s", p->name ? p->name : "fn",
                  param_name(p, c->param), describe(a));
    if (!check_dims(in, p, c, a->u.tensor, sb, &nsb, sp)) return false;
  }
  return true;
}

/* ───────────────────────────── the machine ───────────────────────────── */

typedef struct Machine {
  Interp *in;
  Proc *proc;
  size_t fb;
  size_t kbase;
  const Expr *e; /* to evaluate, or NULL when returning `v` */
  Value *v;
} Machine;

/* Enters a closure: tail calls reuse the caller's frame. */
static bool enter(Machine *M, Value *clo, Value **args, int n, Span sp) {
  Interp *in = M->in;
  Proc *p = clo->u.closure.proc;
  const char *name = clo->u.closure.name;
  if (n != p->nparams)
    return fail(in, sp, "%s%s expects %d argument%s, got %d", name ? "@" : "",
                name ? name : "closure", p->nparams, p->nparams == 1 ? "" : "s", n);
  bool fast = fast_accepts(in, p, args, n);
  if (!fast && p->nchecks && !check_params(in, p, args, sp)) return false;
  bool tail = in->nkonts > M->kbase && in->konts[in->nkonts - 1].kind == K_RETURN;
  size_t base;
  if (tail) {
    Kont *k = &in->konts[in->nkonts - 1];
    k->callee = name, k->span = sp;
    base = M->fb;
  } else {
    if (in->depth >= in->opt.max_depth)
      return fail(in, sp, "recursion limit %lld reached in %s%s (set it with :set max-depth N)",
                  (long long)in->opt.max_depth, name ? "@" : "", name ? name : "a closure");
    Kont *k = push_kont(in, K_RETURN, NULL);
    k->proc = M->proc, k->fb = M->fb, k->callee = name, k->span = sp;
    in->depth++;
    base = in->nslots_used;
  }
  /* args live on the value stack and caps in the closure: safe to overwrite slots. */
  open_frame(in, p, base);
  if (p->ncap) memcpy(in->slots + base, clo->u.closure.cap, sizeof(Value *) * (size_t)p->ncap);
  if (n)
    memcpy(in->slots + base + p->ncap, args,
           sizeof(Value *) * (size_t)n); /* args NULL when n = 0 */
  M->proc = p, M->fb = base, M->e = p->body;
  if (fast) {
    M->e = NULL;
    M->v = fast_run(in, p, args, name, sp);
    return M->v != NULL;
  }
  return true;
}

static bool lowered_closure(const Expr *fn, Value **args, int n) {
  return n == 2 && ops_has_flag(fn->u.op.index, OP_CALL_LOWERED) && args[0]->kind == V_CLOSURE &&
         args[1]->kind == V_TUPLE;
}

/* All arguments of a call are collected at vals[k->vbase ...]. */
static bool apply(Machine *M, const Expr *call, size_t vbase, bool callee_value) {
  Interp *in = M->in;
  Value **vals = in->vals + vbase;
  int n = (int)(in->nvals - vbase) - (callee_value ? 1 : 0);
  Value **args = vals + (callee_value ? 1 : 0);
  const Expr *fn = call->u.call.fn;
  Value *r = NULL;
  if (!callee_value && fn->kind == EX_OP && lowered_closure(fn, args, n)) {
    /* call_lowered(f, (a, b)) of a function value is f(a, b) */
    Value *f = args[0], *t = args[1];
    bool ok = enter(M, f, t->u.tuple.fields, t->u.tuple.n, call->span);
    in->nvals = vbase;
    return ok;
  } else if (!callee_value && fn->kind == EX_OP) {
    r = run_op(in, call, fn->u.op.index, args, n);
  } else if (!callee_value && fn->kind == EX_CTOR) {
    r = make_adt(in, fn->u.ctor.adt, fn->u.ctor.index, args, n, call->span);
  } else {
    Value *f = callee_value ? vals[0] : global_value(in, fn);
    if (!f) return false;
    if (f->kind == V_OP) {
      r = run_op(in, call, f->u.op.index, args, n);
    } else if (f->kind == V_CTOR) {
      r = make_adt(in, f->u.ctor.adt, f->u.ctor.index, args, n, call->span);
    } else if (f->kind == V_CLOSURE && (spec_call(in, f->u.closure.proc, args, n, &r) ||
                                        plan_call(in, f->u.closure.proc, args, n, &r))) {
      if (!r) interp_push_frame(in, f->u.closure.name, call->span);
    } else if (f->kind == V_CLOSURE) {
      /* No safe point inside enter: f and args need no extra rooting. */
      bool ok = enter(M, f, args, n, call->span);
      in->nvals = vbase;
      return ok;
    } else {
      return fail(in, call->span, "cannot call a %s", describe(f));
    }
  }
  in->nvals = vbase;
  if (!r) return false;
  M->v = r, M->e = NULL;
  return true;
}

static bool callee_needs_value(const Expr *fn) {
  if (fn->kind == EX_OP || fn->kind == EX_CTOR) return false;
  return fn->kind != EX_GLOBAL;
}

/* Starts evaluating e; either sets M->v (done) or pushes work. */
static bool step_eval(Machine *M) {
  Interp *in = M->in;
  const Expr *e = M->e;
  M->e = NULL;
  switch (e->kind) {
    case EX_CONST:
      M->v = interp_const_value(in, M->proc, e);
      return M->v != NULL;
    case EX_VAR: {
      int s = proc_slot(M->proc, e->u.var);
      Value *v = s >= 0 ? in->slots[M->fb + (size_t)s] : NULL;
      if (!v)
        return fail(in, e->span, "%%%s has no value here",
                    var_named(e->u.var) ? e->u.var->name : "_");
      M->v = v;
      return true;
    }
    case EX_GLOBAL:
      M->v = global_value(in, e);
      return M->v != NULL;
    case EX_OP:
      M->v = value_new(in, V_OP, 0);
      M->v->u.op.index = e->u.op.index;
      return true;
    case EX_CTOR:
      if (e->u.ctor.adt->ctors[e->u.ctor.index].nfields == 0) {
        M->v = make_adt(in, e->u.ctor.adt, e->u.ctor.index, NULL, 0, e->span);
      } else {
        M->v = value_new(in, V_CTOR, 0);
        M->v->u.ctor.adt = e->u.ctor.adt, M->v->u.ctor.index = e->u.ctor.index;
      }
      return M->v != NULL;
    case EX_CALL: {
      Kont *k = push_kont(in, K_CALL, e);
      k->callee_value = callee_needs_value(e->u.call.fn);
      k->i = k->callee_value ? -1 : 0;
      if (k->callee_value)
        M->e = e->u.call.fn;
      else if (e->u.call.nargs)
        M->e = e->u.call.args[0];
      else {
        in->nkonts--;
        return apply(M, e, in->nvals, false);
      }
      return true;
    }
    case EX_TUPLE:
      if (!e->u.tuple.n) {
        M->v = value_unit(in);
        return true;
      }
      push_kont(in, K_TUPLE, e);
      M->e = e->u.tuple.fields[0];
      return true;
    case EX_PROJ:
      push_kont(in, K_PROJ, e);
      M->e = e->u.proj.tuple;
      return true;
    case EX_LET:
      push_kont(in, K_LET, e);
      M->e = e->u.let.value;
      return true;
    case EX_FREE_VAR:
      M->e = e->u.free_var.body;
      return true;
    case EX_FN:
      M->v = make_closure(in, M->proc, M->fb, e);
      return true;
    case EX_IF:
      push_kont(in, K_IF, e);
      M->e = e->u.if_.cond;
      return true;
    case EX_MATCH:
      push_kont(in, K_MATCH, e);
      M->e = e->u.match.scrut;
      return true;
    case EX_REF_NEW: {
      const Expr *init = e->u.ref_new.init;
      const StateGlobal *g =
          init->kind == EX_GLOBAL ? module_state_global(in->mod, init->u.global.name) : NULL;
      if (g) { /* ref(@g) aliases the global's cell */
        M->v = global_cell(in, g, e->span);
        return M->v != NULL;
      }
      push_kont(in, K_REF_NEW, e);
      M->e = init;
      return true;
    }
    case EX_REF_READ:
      push_kont(in, K_REF_READ, e);
      M->e = e->u.ref_read.ref;
      return true;
    case EX_REF_WRITE:
      push_kont(in, K_REF_WRITE, e);
      M->e = e->u.ref_write.ref;
      return true;
    case EX_DATAFLOW:
      M->e = e->u.dataflow.body;
      return true;
  }
  RLY_UNREACHABLE();
}

static bool step_call(Machine *M, Kont *k) {
  Interp *in = M->in;
  const Expr *e = k->e;
  push_val(in, M->v);
  k->i++;
  if (k->i < e->u.call.nargs) {
    M->e = e->u.call.args[k->i];
    return true;
  }
  size_t vbase = k->vbase;
  bool cv = k->callee_value;
  in->nkonts--;
  return apply(M, e, vbase, cv);
}

static bool step_tuple(Machine *M, Kont *k) {
  Interp *in = M->in;
  const Expr *e = k->e;
  push_val(in, M->v);
  if (++k->i < e->u.tuple.n) {
    M->e = e->u.tuple.fields[k->i];
    return true;
  }
  Value *t = value_new(in, V_TUPLE, e->u.tuple.n);
  if (e->u.tuple.n)
    memcpy(t->u.tuple.fields, in->vals + k->vbase, sizeof(Value *) * (size_t)e->u.tuple.n);
  in->nvals = k->vbase;
  in->nkonts--;
  M->v = t;
  return true;
}

static bool step_match(Machine *M, Kont *k) {
  Interp *in = M->in;
  const Expr *e = k->e;
  in->nkonts--;
  for (int i = 0; i < e->u.match.n; i++)
    if (match_pattern(in, M->proc, M->fb, e->u.match.clauses[i].pat, M->v)) {
      M->e = e->u.match.clauses[i].body;
      return true;
    }
  char *s = interp_format(in, M->v);
  size_t f = next_return(in, in->nkonts, 0);
  const char *fn = f ? in->konts[f - 1].callee : NULL;
  bool r = fail(in, e->span, "%s%s%s: no clause matches %.200s", fn ? "@" : "", fn ? fn : "",
                fn ? (e->u.match.partial ? " (match?)" : " (match)")
                   : (e->u.match.partial ? "match?" : "match"),
                s);
  free(s);
  return r;
}

/* A value arrived for the continuation on top. */
static bool step_return(Machine *M) {
  Interp *in = M->in;
  Kont *k = &in->konts[in->nkonts - 1];
  Value *v = M->v;
  switch (k->kind) {
    case K_RETURN:
      in->nslots_used = M->fb;
      M->proc = k->proc, M->fb = k->fb;
      in->depth--;
      in->nkonts--;
      return true;
    case K_LET: {
      const Expr *e = k->e;
      in->nkonts--;
      Var *var = e->u.let.var;
      int s = proc_slot(M->proc, var);
      RLY_ASSERT(s >= 0);
      /* only a fn written as the let's value can refer to itself: a closure
       * read from a reference, made by another run of the same code, may
       * have captured a variable of the same name in another frame */
      if (e->u.let.value->kind == EX_FN) patch_recursive(v, var);
      in->slots[M->fb + (size_t)s] = v;
      M->e = e->u.let.body;
      return true;
    }
    case K_CALL:
      return step_call(M, k);
    case K_TUPLE:
      return step_tuple(M, k);
    case K_PROJ: {
      const Expr *e = k->e;
      in->nkonts--;
      if (v->kind != V_TUPLE || e->u.proj.index >= v->u.tuple.n)
        return fail(in, e->span, "projection .%d of a %s", e->u.proj.index, describe(v));
      M->v = v->u.tuple.fields[e->u.proj.index];
      return true;
    }
    case K_IF: {
      const Expr *e = k->e;
      bool c = false;
      in->nkonts--;
      if (!truthy(in, v, e->u.if_.cond->span, &c)) return false;
      M->e = c ? e->u.if_.then_ : e->u.if_.else_;
      return true;
    }
    case K_MATCH:
      return step_match(M, k);
    case K_REF_NEW:
      in->nkonts--;
      push_val(in, v);
      M->v = value_new(in, V_REF, 0);
      M->v->u.ref.cell = v;
      in->nvals--;
      return true;
    case K_REF_READ:
      in->nkonts--;
      if (v->kind != V_REF)
        return fail(in, k->e->span, "cannot read a %s as a reference", describe(v));
      M->v = v->u.ref.cell;
      M->v->cell_private = false; /* escapes: no more in-place updates */
      return true;
    case K_REF_WRITE:
      if (k->i == 0) {
        if (v->kind != V_REF)
          return fail(in, k->e->span, "cannot write a %s as a reference", describe(v));
        push_val(in, v);
        k->i = 1;
        M->e = k->e->u.ref_write.value;
        return true;
      }
      in->vals[in->nvals - 1]->u.ref.cell = v;
      in->nvals--;
      in->nkonts--;
      M->v = value_unit(in);
      return true;
  }
  RLY_UNREACHABLE();
}

static void safe_point(Machine *M) {
  Interp *in = M->in;
  in->current = M->v;
  gc_collect(in);
  in->current = NULL;
}

/* Runs the machine until the continuation stack is back at kbase. */
static Value *run(Interp *in, Proc *p, size_t fb, const Expr *e) {
  Machine M = {in, p, fb, in->nkonts, e, NULL};
  uint32_t ticks = 0;
  for (;;) {
    if ((++ticks & 1023) == 0 && (rt_interrupt_flag || rt_steps_charge(1024))) {
      bool stop = rt_interrupt_flag;
      rt_interrupt_flag = 0;
      fail(in, M.e ? M.e->span : in->err_span, "%s", stop ? "interrupted" : rt_steps_message());
      return NULL;
    }
    if (in->gc_wanted) safe_point(&M);
    bool ok;
    if (M.e)
      ok = step_eval(&M);
    else if (in->nkonts == M.kbase)
      return M.v;
    else
      ok = step_return(&M);
    if (!ok) return NULL;
  }
}

/* Evaluates e in a fresh frame of p (whose captures are session variables). */
static Value *eval_in(Interp *in, Proc *p, const Expr *e, bool *ok) {
  size_t kbase = in->nkonts, vbase = in->nvals, sbase = in->nslots_used;
  int64_t depth = in->depth;
  open_frame(in, p, sbase);
  for (int i = 0; i < p->ncap; i++) {
    Value *v = NULL;
    for (size_t j = 0; j < in->nsession && !v; j++)
      if (in->session[j].var == p->caps[i]) v = in->session[j].value;
    in->slots[sbase + (size_t)i] = v;
  }
  Value *v = run(in, p, sbase, e);
  if (!v) {
    if (!in->err_span.off) in->err_span = e->span;
    report(in, kbase);
    *ok = false;
  }
  in->nkonts = kbase, in->nvals = vbase, in->nslots_used = sbase, in->depth = depth;
  return v;
}

/* Evaluates a top-level expression (an input's, a state global's
 * initializer) with a proc made for it and dropped after. */
static Value *eval_toplevel(Interp *in, const Expr *e, bool *ok) {
  ArenaMark mk = arena_mark(&in->scratch);
  Proc *p = proc_toplevel(in, e, &in->scratch);
  Value *v = eval_in(in, p, e, ok);
  proc_toplevel_free(p);
  arena_release(&in->scratch, mk);
  return v;
}

/* ───────────────────────── services for fast.c ───────────────────────── */

Value *interp_global_cell(Interp *in, const StateGlobal *g, Span sp) {
  return global_cell(in, g, sp);
}

void interp_push_frame(Interp *in, const char *callee, Span sp) {
  Kont *k = push_kont(in, K_RETURN, NULL);
  k->callee = callee, k->span = sp;
}

void interp_set_top_frame(Interp *in, const char *callee, Span sp) {
  Kont *k = &in->konts[in->nkonts - 1];
  RLY_ASSERT(in->nkonts > 0 && k->kind == K_RETURN);
  k->callee = callee, k->span = sp;
}

/* ───────────────────────────── public ───────────────────────────── */

/* Tensors and kernels' scratch buffers of up to 32 MB come from the heap
 * and stay there when freed (glibc's defaults would map and unmap each one,
 * so every call of a kernel would pay page faults on fresh memory). */
static void tune_malloc(void) {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

Interp *interp_new(DiagCtx *d) {
  tune_malloc();
  Interp *in = calloc(1, sizeof *in);
  if (!in) rly_oom();
  in->diag = d;
  in->opt.max_depth = 100000;
  in->opt.print_limit = 1000;
  in->opt.exec_jit = true;
  arena_init(&in->arena);
  arena_init(&in->scratch);
  kernel_ctx_init(&in->kx);
  in->gc_threshold = 1 << 13; /* GC_MIN_OBJECTS (value.c) */
  /* Never NULL: a call of no arguments takes its (empty) arguments at
   * in->vals + in->nvals, which must be a pointer to offset. */
  in->vals = grow(in->vals, &in->vals_cap, 16, sizeof(Value *));
  return in;
}

/* Frees every value (not only the unreachable ones) and all the caches;
 * NULL is accepted. */
void interp_free(Interp *in) {
  if (!in) return;
  gc_free_all(in);
  for (size_t i = 0; i < in->proc_list.len; i++) {
    idmap_free(&((Proc *)in->proc_list.items[i])->slots);
    plan_drop(in->proc_list.items[i]);
  }
  vec_free(&in->proc_list);
  idmap_free(&in->procs);
  strmap_free(&in->globals);
  kernel_ctx_free(&in->kx);
  call_tir_free(in);
  fast_free(in);
  u64map_free(&in->consts);
  u64map_free(&in->defs);
  arena_free(&in->arena);
  arena_free(&in->scratch);
  free(in->slots);
  free(in->vals);
  free(in->konts);
  free(in->session);
  free(in);
}

InterpOptions *interp_options(Interp *in) { return &in->opt; }

Value *interp_eval(Interp *in, Module *m, Expr *e) {
  rt_steps_reset(in->opt.max_steps);
  fast_validate(in, m);
  in->mod = m;
  u64map_free(&in->defs); /* the module may have changed since */
  in->err[0] = 0;
  in->err_span = (Span){0};
  bool ok = true;
  Value *v = eval_toplevel(in, e, &ok);
  if (!ok) return NULL;
  interp_bind(in, NULL, v); /* rooted until the next evaluation */
  return v;
}

/* Session bindings; var NULL is the slot for the last result. */
void interp_bind(Interp *in, Var *var, Value *val) {
  for (size_t i = 0; i < in->nsession; i++)
    if (in->session[i].var == var) {
      if (val)
        in->session[i].value = val;
      else
        in->session[i] = in->session[--in->nsession]; /* unbound: the list stays short */
      return;
    }
  if (!val) return;
  in->session = grow(in->session, &in->session_cap, in->nsession + 1, sizeof(SessionVar));
  in->session[in->nsession++] = (SessionVar){var, val};
}

void interp_reset(Interp *in) {
  in->nsession = 0;
  strmap_free(&in->globals);
  gc_collect(in);
}

size_t interp_gc(Interp *in) { return gc_collect(in); }

void interp_seed(Interp *in, int64_t seed) {
  Value *key = value_new(in, V_KEY, 0);
  prng_key(seed, seed != (int32_t)seed, key->u.key.k);
  Value *cell = strmap_get(&in->globals, "prng_state");
  if (!cell) {
    cell = value_new(in, V_REF, 0);
    strmap_put(&in->globals, "prng_state", cell);
  }
  cell->u.ref.cell = key;
}
