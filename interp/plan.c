/* plan.c — the planned executor: a dataflow function of the jit mode's
 * lowered module runs as a flat list of kernel calls over buffers planned
 * once, as TVM's graph executor and AOT do.
 *
 * A function qualifies when its parameters are tensors of static shape and
 * its body is a let chain of
 *   call_tir(@p, (atoms), shape=..., dtype=...)   (static output shape)
 *   op(atoms or (atoms), attrs)   an op on its reference kernel (what
 *                                 FuseOps leaves unfused: a split into many
 *                                 pieces, a concatenate of many), its
 *                                 result a tensor or tuple of static shape
 *   (atoms)   %t.i   %x   a constant
 * ending in an atom or a tuple of atoms, every @p compiled by the executor
 * (call_tir.c's path otherwise).  Anything else (control flow, random and
 * effectful ops, closures) and the function runs in the evaluator as
 * before.
 *
 * The plan, made on the first call (Proc.plan):
 * - values: parameters, constants, step outputs; an output of a prim whose
 *   result is its input in the same order (PrimFunc.out_is_view: a reshape)
 *   shares its input's storage;
 * - storages: each step output's own, or the parameter's/constant's;
 *   temporaries live from their step to their last use and are placed at
 *   offsets of one arena, reused first-fit once dead (allocated once,
 *   kept across calls: no allocation, no page faults per call);
 *   storages the result holds are fresh tensors each call;
 * - a step whose kernel does not store all of its output gets it zeroed.
 * Each call checks the arguments against the parameters' types (a
 * mismatch runs the evaluator, which reports it as usual), runs the steps
 * through the executor (so :profile and :kernels see every kernel), and
 * builds the result.  Errors are call_tir's, at the failing call. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"

enum { PLAN_MAX_VALS = 1 << 20, PLAN_MAX_OPERANDS = 1024 };

typedef enum SKind { S_PARAM, S_CONST, S_TEMP, S_RESULT } SKind;

typedef struct Storage {
  SKind kind;
  int param, pval; /* S_PARAM: the parameter, its value */
  RtTensor *cst;   /* S_CONST (a root of the interpreter: in->consts) */
  DType dt;        /* S_TEMP, S_RESULT: the producing step's output */
  int ndim;
  int64_t shape[TENSOR_MAX_RANK];
  size_t bytes;
  size_t offset;   /* S_TEMP: in the arena */
  int first, last; /* steps: produced at first, last read at last */
  RtTensor *fresh; /* S_RESULT: this call's tensor */
} Storage;

/* A tensor value: a view of a storage with its own shape. */
typedef struct PVal {
  int storage;
  RtTensor hdr; /* dtype, shape, numel; data set per call */
} PVal;

typedef struct Step {
  const Expr *call;
  const PrimFunc *prim; /* a call_tir step's callee */
  const void *kernel;   /* its compiled kernel; NULL: a view step, nothing runs */
  int op;               /* an op step's registry index (its reference kernel), else -1 */
  int nin;              /* inputs; the outputs follow them in args */
  int nargs;            /* inputs then the outputs (call_tir: one) */
  int *args;            /* PVal indices */
  bool zero;            /* the output is zero-filled first */
} Step;

typedef struct Plan Plan;
struct Plan {
  const Module *mod; /* the module the callees were resolved in */
  const RtExecutor *x;
  unsigned generation; /* rt_executor_generation() of its kernels */
  PVal *vals;
  int nvals;
  Storage *st;
  int nst;
  Step *steps;
  int nsteps;
  int *result; /* PVal indices of the result's fields */
  int nresult;
  bool tuple_result;
  void *arena;
  size_t arena_bytes;
  bool running;
};

/* ─────────────────────────── building ─────────────────────────── */

typedef struct Build {
  Interp *in;
  Proc *p;
  Plan *P;
  U64Map var_vals; /* Var* → 1 + index into tuple-or-value table */
  int *tv;         /* for each bound var: a PVal, or -(1 + tuple id) */
  int ntv, captv;
  int **tuples; /* tuple id → PVal indices (tuples of atoms) */
  int *tuple_n;
  int ntuples, captuples, captuple_n;
  int capvals, capst, capsteps;
  bool ok;
} Build;

static void *grow(void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  p = realloc(p, elem * (size_t)c);
  if (!p) rly_oom();
  *cap = c;
  return p;
}

static bool static_tensor(const Type *t, DType *dt, int *ndim, int64_t *shape) {
  if (!t || t->kind != TY_TENSOR || t->u.tensor.ndim > TENSOR_MAX_RANK) return false;
  for (int d = 0; d < t->u.tensor.ndim; d++) {
    if (t->u.tensor.dims[d].kind != DIM_CONST) return false;
    shape[d] = t->u.tensor.dims[d].value;
  }
  *dt = t->u.tensor.dtype, *ndim = t->u.tensor.ndim;
  return true;
}

static int new_storage(Build *B, SKind k) {
  Plan *P = B->P;
  P->st = grow(P->st, &B->capst, P->nst + 1, sizeof *P->st);
  Storage *s = &P->st[P->nst];
  memset(s, 0, sizeof *s);
  s->kind = k, s->first = -1, s->last = -1;
  return P->nst++;
}

static int new_val(Build *B, int storage, DType dt, int ndim, const int64_t *shape) {
  Plan *P = B->P;
  if (P->nvals >= PLAN_MAX_VALS) return B->ok = false, 0;
  P->vals = grow(P->vals, &B->capvals, P->nvals + 1, sizeof *P->vals);
  PVal *v = &P->vals[P->nvals];
  memset(v, 0, sizeof *v);
  v->storage = storage;
  v->hdr.refs = 1, v->hdr.dtype = dt, v->hdr.ndim = ndim, v->hdr.numel = 1;
  for (int d = 0; d < ndim; d++) v->hdr.shape[d] = shape[d], v->hdr.numel *= shape[d];
  return P->nvals++;
}

static void bind(Build *B, const Var *v, int tv) {
  B->tv = grow(B->tv, &B->captv, B->ntv + 1, sizeof *B->tv);
  B->tv[B->ntv++] = tv;
  *u64map_slot(&B->var_vals, PTR_KEY(v)) = (uint64_t)B->ntv;
}

static bool lookup(const Build *B, const Var *v, int *tv) {
  uint64_t *i = u64map_find(&B->var_vals, PTR_KEY(v));
  if (!i || !*i) return false;
  *tv = B->tv[*i - 1];
  return true;
}

static int new_tuple(Build *B, int n, const int *fields) {
  B->tuples = grow(B->tuples, &B->captuples, B->ntuples + 1, sizeof *B->tuples);
  B->tuple_n = grow(B->tuple_n, &B->captuple_n, B->ntuples + 1, sizeof *B->tuple_n);
  int *f = malloc(sizeof *f * (size_t)(n + 1));
  if (!f) rly_oom();
  if (n) memcpy(f, fields, sizeof *f * (size_t)n);
  B->tuples[B->ntuples] = f, B->tuple_n[B->ntuples] = n;
  return -(1 + B->ntuples++);
}

/* An atom: a tensor variable, a constant, a projection of a tuple
 * variable; -1 when it is not one (or a tuple where a tensor is needed). */
static int atom(Build *B, const Expr *e) {
  int tv;
  if (e->kind == EX_VAR) return lookup(B, e->u.var, &tv) && tv >= 0 ? tv : -1;
  if (e->kind == EX_PROJ && e->u.proj.tuple->kind == EX_VAR &&
      lookup(B, e->u.proj.tuple->u.var, &tv) && tv < 0) {
    int t = -tv - 1;
    return e->u.proj.index < B->tuple_n[t] ? B->tuples[t][e->u.proj.index] : -1;
  }
  if (e->kind != EX_CONST || !e->ty || e->ty->kind != TY_TENSOR) return -1;
  Value *cv = interp_const_value(B->in, B->p, e);
  if (!cv || cv->kind != V_TENSOR) return -1;
  RtTensor *t = cv->u.tensor;
  int s = new_storage(B, S_CONST);
  B->P->st[s].cst = t;
  return new_val(B, s, t->dtype, t->ndim, t->shape);
}

static void use(Plan *P, int val, int step) {
  Storage *s = &P->st[P->vals[val].storage];
  if (step > s->last) s->last = step;
}

/* A new temporary made by the step being added. */
static int temp_val(Build *B, DType dt, int ndim, const int64_t *shape) {
  Plan *P = B->P;
  int st = new_storage(B, S_TEMP);
  Storage *so = &P->st[st];
  so->dt = dt, so->ndim = ndim, so->first = P->nsteps;
  memcpy(so->shape, shape, sizeof(int64_t) * (size_t)ndim);
  so->bytes = (size_t)dtype_bytes(dt);
  for (int d = 0; d < ndim; d++) so->bytes *= (size_t)shape[d];
  return new_val(B, st, dt, ndim, shape);
}

static bool is_call_tir(const Expr *e) {
  return e->kind == EX_CALL && e->u.call.fn->kind == EX_OP && e->u.call.fn->u.op.call_tir &&
         ops_has_flag(e->u.call.fn->u.op.index, OP_CALL_TIR) && e->u.call.nargs == 2 &&
         e->u.call.args[0]->kind == EX_GLOBAL && !attrs_get(e->u.call.attrs, "callee");
}

/* Does the module's prim function f run as the compiled step's `run`? */
static bool same_prim(const PrimFunc *f, const PrimFunc *run) { return f && prim_to_run(f) == run; }

/* A call_tir step: its inputs' atoms, its prim function compiled, its
 * output a new value (a view of the input for a reshape). */
static int add_step(Build *B, const Expr *call) {
  Plan *P = B->P;
  const PrimFunc *pf = module_prim(B->in->mod, call->u.call.args[0]->u.global.name);
  if (pf) pf = prim_to_run(pf);
  const Expr *tup = call->u.call.args[1];
  if (!pf || tup->kind != EX_TUPLE || tup->u.tuple.n + 1 != pf->nparams ||
      pf->nparams > PLAN_MAX_OPERANDS)
    return -1;
  const Buffer *ob = pf->params[pf->nparams - 1];
  int64_t shape[TENSOR_MAX_RANK];
  if (ob->ndim > TENSOR_MAX_RANK) return -1;
  for (int d = 0; d < ob->ndim; d++) {
    if (ob->dims[d].kind != DIM_CONST) return -1;
    shape[d] = ob->dims[d].value;
  }
  TirError err;
  const void *k = pf->out_is_view ? NULL : P->x->prepare(pf, &err);
  if (!pf->out_is_view && !k) return -1;
  P->steps = grow(P->steps, &B->capsteps, P->nsteps + 1, sizeof *P->steps);
  Step *s = &P->steps[P->nsteps];
  *s = (Step){.call = call,
              .prim = pf,
              .kernel = k,
              .op = -1,
              .nin = pf->nparams - 1,
              .nargs = pf->nparams};
  s->args = malloc(sizeof *s->args * (size_t)s->nargs);
  if (!s->args) rly_oom();
  for (int i = 0; i < tup->u.tuple.n; i++) {
    int a = atom(B, tup->u.tuple.fields[i]);
    if (a < 0 || (k && P->x->writes_param(k, i))) return free(s->args), -1;
    s->args[i] = a;
    use(P, a, P->nsteps);
  }
  int out;
  if (pf->out_is_view) {
    const PVal *src = &P->vals[s->args[0]];
    int64_t n = 1;
    for (int d = 0; d < ob->ndim; d++) n *= shape[d];
    if (s->nargs != 2 || src->hdr.dtype != ob->dtype || src->hdr.numel != n)
      return free(s->args), -1;
    out = new_val(B, src->storage, ob->dtype, ob->ndim, shape);
  } else {
    out = temp_val(B, ob->dtype, ob->ndim, shape);
    s->zero = !P->x->writes_all_of_param(k, s->nargs - 1);
  }
  s->args[s->nargs - 1] = out;
  P->nsteps++;
  return out;
}

/* An op call the plan runs on the op's reference kernel: pure, run by the
 * kernel table (interp_plain_op), its result of static shape. */
static bool is_op_step(const Expr *e) {
  if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP || !e->ty) return false;
  int op = e->u.call.fn->u.op.index;
  return !ops_get(op)->effectful && interp_plain_op(op, e->u.call.nargs);
}

/* The tensors of an op step's argument: one atom, or the atoms of a tuple
 * (written out or bound to a variable); their count, or -1. */
static int op_operands(Build *B, const Expr *a, int *out, int room) {
  int tv;
  if (a->kind == EX_VAR && lookup(B, a->u.var, &tv) && tv < 0) {
    int t = -tv - 1, n = B->tuple_n[t];
    if (n > room) return -1;
    memcpy(out, B->tuples[t], sizeof *out * (size_t)n);
    return n;
  }
  if (a->kind == EX_TUPLE) {
    if (a->u.tuple.n > room) return -1;
    for (int i = 0; i < a->u.tuple.n; i++)
      if ((out[i] = atom(B, a->u.tuple.fields[i])) < 0) return -1;
    return a->u.tuple.n;
  }
  return room > 0 && (out[0] = atom(B, a)) >= 0 ? 1 : -1;
}

/* An op step: its inputs' atoms, an output per tensor of its static
 * result; *tv: the output's value or a tuple of them (as bind takes it).
 * False when the call does not fit a plan. */
static bool add_op_step(Build *B, const Expr *call, int *tv) {
  Plan *P = B->P;
  const Type *ty = call->ty;
  int nout = ty->kind == TY_TUPLE ? ty->u.tuple.n : 1;
  int ops[PLAN_MAX_OPERANDS], nin = 0;
  for (int i = 0; i < call->u.call.nargs; i++) {
    int k = op_operands(B, call->u.call.args[i], ops + nin, PLAN_MAX_OPERANDS - nin);
    if (k < 0) return false;
    nin += k;
  }
  if (nin + nout > PLAN_MAX_OPERANDS) return false;
  for (int o = 0; o < nout; o++) {
    DType dt;
    int nd;
    int64_t sh[TENSOR_MAX_RANK];
    if (!static_tensor(ty->kind == TY_TUPLE ? ty->u.tuple.fields[o] : ty, &dt, &nd, sh))
      return false;
    ops[nin + o] = temp_val(B, dt, nd, sh);
  }
  int *args = malloc(sizeof *args * (size_t)(nin + nout + 1));
  if (!args) rly_oom();
  memcpy(args, ops, sizeof *args * (size_t)(nin + nout));
  for (int i = 0; i < nin; i++) use(P, args[i], P->nsteps);
  P->steps = grow(P->steps, &B->capsteps, P->nsteps + 1, sizeof *P->steps);
  P->steps[P->nsteps++] = (Step){.call = call,
                                 .op = call->u.call.fn->u.op.index,
                                 .nin = nin,
                                 .nargs = nin + nout,
                                 .args = args};
  *tv = ty->kind == TY_TUPLE ? new_tuple(B, nout, args + nin) : args[nin];
  return true;
}

/* One binding's value. */
static bool bind_value(Build *B, const Var *v, const Expr *e) {
  if (is_call_tir(e)) {
    int o = add_step(B, e);
    if (o < 0) return false;
    bind(B, v, o);
    return true;
  }
  if (is_op_step(e)) {
    int o;
    if (!add_op_step(B, e, &o)) return false;
    bind(B, v, o);
    return true;
  }
  if (e->kind == EX_TUPLE) {
    int f[64];
    if (e->u.tuple.n > 64) return false;
    for (int i = 0; i < e->u.tuple.n; i++)
      if ((f[i] = atom(B, e->u.tuple.fields[i])) < 0) return false;
    bind(B, v, new_tuple(B, e->u.tuple.n, f));
    return true;
  }
  int tv;
  if (e->kind == EX_VAR && lookup(B, e->u.var, &tv)) return bind(B, v, tv), true;
  int a = atom(B, e);
  if (a < 0) return false;
  bind(B, v, a);
  return true;
}

static bool bind_result(Build *B, const Expr *e) {
  Plan *P = B->P;
  int f[64], n = 1, tv = 0;
  bool var_tuple = e->kind == EX_VAR && lookup(B, e->u.var, &tv) && tv < 0;
  if (e->kind == EX_TUPLE) {
    if ((n = e->u.tuple.n) > 64) return false;
    for (int i = 0; i < n; i++)
      if ((f[i] = atom(B, e->u.tuple.fields[i])) < 0) return false;
    P->tuple_result = true;
  } else if (is_call_tir(e)) {
    if ((f[0] = add_step(B, e)) < 0) return false;
  } else if (is_op_step(e)) {
    if (!add_op_step(B, e, &tv)) return false;
    var_tuple = tv < 0, f[0] = tv;
  } else if (!var_tuple && (f[0] = atom(B, e)) < 0) {
    return false;
  }
  if (var_tuple) { /* a tuple of values: its fields */
    int t = -tv - 1;
    if ((n = B->tuple_n[t]) > 64) return false;
    memcpy(f, B->tuples[t], sizeof *f * (size_t)n);
    P->tuple_result = true;
  }
  P->result = malloc(sizeof *P->result * (size_t)(n + 1));
  if (!P->result) rly_oom();
  memcpy(P->result, f, sizeof *f * (size_t)n);
  P->nresult = n;
  for (int i = 0; i < n; i++) {
    Storage *s = &P->st[P->vals[f[i]].storage];
    if (s->kind == S_TEMP) s->kind = S_RESULT;
  }
  return true;
}

/* ──────────────────────────── memory ──────────────────────────── */

typedef struct Block {
  size_t off, bytes;
  int free_after; /* the step after which it is free again */
} Block;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* First fit among blocks free by step `at`, else at the end. */
static size_t place(Block *bl, int nbl, size_t bytes, int at, size_t *end) {
  for (int i = 0; i < nbl; i++)
    if (bl[i].free_after < at && bl[i].bytes >= bytes) {
      Block b = bl[i];
      bl[i].off += bytes, bl[i].bytes -= bytes;
      return b.off;
    }
  size_t o = *end;
  *end += bytes;
  return o;
}

/* Offsets for the temporaries in step order: a storage's block returns
 * to the free list after its last use. */
static void plan_memory(Plan *P) {
  Block *bl = calloc((size_t)P->nst + 1, sizeof *bl);
  if (!bl) rly_oom();
  int nbl = 0;
  size_t end = 0;
  for (int step = 0; step < P->nsteps; step++)
    for (int i = 0; i < P->nst; i++) {
      Storage *s = &P->st[i];
      if (s->kind != S_TEMP || s->first != step) continue;
      size_t b = align64(s->bytes ? s->bytes : 1);
      s->offset = place(bl, nbl, b, step, &end);
      bl[nbl++] = (Block){s->offset, b, s->last < step ? step : s->last};
    }
  /* (a block handed out again is split: its taken front becomes the new
   * owner's entry, with the new owner's end) */
  free(bl);
  P->arena_bytes = end;
}

static void plan_free(Plan *P) {
  if (!P) return;
  for (int i = 0; i < P->nsteps; i++) free(P->steps[i].args);
  free(P->steps), free(P->vals), free(P->st), free(P->result), free(P->arena);
  free(P);
}

static void build_free(Build *B) {
  for (int i = 0; i < B->ntuples; i++) free(B->tuples[i]);
  free(B->tuples), free(B->tuple_n), free(B->tv);
  u64map_free(&B->var_vals);
}

/* A plan has at least one call_tir step: a function of reference-kernel
 * ops alone (scalar arithmetic) stays with the evaluator. */
static bool has_kernel_step(const Plan *P) {
  for (int i = 0; i < P->nsteps; i++)
    if (P->steps[i].op < 0) return true;
  return false;
}

static Plan *plan_build(Interp *in, Proc *p) {
  const Function *f = p->fn;
  Plan *P = calloc(1, sizeof *P);
  if (!P) rly_oom();
  P->mod = in->mod, P->x = rt_executor(), P->generation = rt_executor_generation();
  Build B = {.in = in, .p = p, .P = P, .ok = P->x != NULL};
  for (int i = 0; i < f->nparams && B.ok; i++) {
    DType dt;
    int nd;
    int64_t sh[TENSOR_MAX_RANK];
    if (!static_tensor(f->params[i]->annot, &dt, &nd, sh)) B.ok = false;
    if (!B.ok) break;
    int s = new_storage(&B, S_PARAM);
    P->st[s].param = i;
    P->st[s].pval = new_val(&B, s, dt, nd, sh);
    bind(&B, f->params[i], P->st[s].pval);
  }
  const Expr *e = f->body;
  for (; B.ok && e->kind == EX_LET; e = e->u.let.body)
    B.ok = e->u.let.var && bind_value(&B, e->u.let.var, e->u.let.value);
  B.ok = B.ok && bind_result(&B, e) && has_kernel_step(P);
  build_free(&B);
  if (!B.ok) return plan_free(P), NULL;
  plan_memory(P);
  return P;
}

/* ───────────────────────────── running ───────────────────────────── */

/* The arguments: tensors of exactly the parameters' types. */
static bool param_fits(const PVal *v, const RtTensor *t);

static bool args_fit(const Plan *P, Value **args, int n) {
  for (int i = 0; i < P->nst; i++) {
    const Storage *s = &P->st[i];
    if (s->kind != S_PARAM) continue;
    if (s->param >= n || args[s->param]->kind != V_TENSOR ||
        !param_fits(&P->vals[s->pval], args[s->param]->u.tensor))
      return false;
  }
  return true;
}

/* The parameters' values must match their types exactly (shape, dtype). */
static bool param_fits(const PVal *v, const RtTensor *t) {
  if (t->dtype != v->hdr.dtype || t->ndim != v->hdr.ndim) return false;
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] != v->hdr.shape[d]) return false;
  return true;
}

static void *storage_data(const Plan *P, const Storage *s, Value **args) {
  switch (s->kind) {
    case S_PARAM:
      return args[s->param]->u.tensor->data;
    case S_CONST:
      return s->cst->data;
    case S_TEMP:
      return (char *)P->arena + s->offset;
    default:
      return s->fresh ? s->fresh->data : NULL;
  }
}

static bool alloc_results(Interp *in, Plan *P) {
  for (int i = 0; i < P->nst; i++) {
    Storage *s = &P->st[i];
    if (s->kind != S_RESULT) continue;
    s->fresh = rt_tensor_new(s->dt, s->ndim, s->shape, in->err, sizeof in->err);
    if (!s->fresh) return false;
  }
  return true;
}

static void release_results(Plan *P) {
  for (int i = 0; i < P->nst; i++)
    if (P->st[i].kind == S_RESULT && P->st[i].fresh)
      rt_tensor_release(P->st[i].fresh), P->st[i].fresh = NULL;
}

/* An op step on its reference kernel, into the planned outputs. */
static bool run_op_step(Interp *in, const Step *s, RtTensor *const *ts) {
  in->kx.err[0] = 0, in->kx.rel.err[0] = 0;
  if (kernels_run(&in->kx, s->op, s->nin, ts, s->call->u.call.attrs, s->nargs - s->nin,
                  ts + s->nin))
    return true;
  interp_fail(in, s->call->span, "%s", in->kx.err);
  return false;
}

static bool run_steps(Interp *in, Plan *P) {
  RtTensor *ts[PLAN_MAX_OPERANDS];
  for (int k = 0; k < P->nsteps; k++) {
    const Step *s = &P->steps[k];
    if (!s->kernel && s->op < 0) continue;
    if (rt_interrupt_flag) {
      rt_interrupt_flag = 0;
      interp_fail(in, s->call->span, "interrupted");
      return false;
    }
    for (int i = 0; i < s->nargs; i++) ts[i] = &P->vals[s->args[i]].hdr;
    if (s->op >= 0) {
      if (!run_op_step(in, s, ts)) return false;
      continue;
    }
    RtTensor *out = ts[s->nargs - 1];
    if (s->zero) memset(out->data, 0, rt_tensor_nbytes(out));
    TirError e;
    if (!P->x->run(s->kernel, ts, s->nargs, &e)) {
      call_tir_error(in, s->call, s->prim, s->nargs - 1, &e);
      return false;
    }
  }
  return true;
}

/* The result's tensors: a view of a fresh, parameter or constant storage. */
static Value *result_value(Interp *in, Plan *P, Value **args) {
  Value *fields[64];
  for (int i = 0; i < P->nresult; i++) {
    const PVal *v = &P->vals[P->result[i]];
    const Storage *s = &P->st[v->storage];
    RtTensor *base = s->kind == S_PARAM   ? args[s->param]->u.tensor
                     : s->kind == S_CONST ? s->cst
                                          : s->fresh;
    RtTensor *t = rt_tensor_view(base, v->hdr.ndim, v->hdr.shape, in->err, sizeof in->err);
    if (!t) return NULL;
    fields[i] = value_tensor(in, t);
  }
  if (!P->tuple_result) return fields[0];
  Value *t = value_new(in, V_TUPLE, P->nresult);
  for (int i = 0; i < P->nresult; i++) t->u.tuple.fields[i] = fields[i];
  return t;
}

static bool plan_usable(Interp *in, Proc *p) {
  if (!in->opt.exec_jit || in->opt.no_plan || !p->fn || p->ncap || p->plan_state < 0) return false;
  if (p->plan && !p->plan->running && p->plan->generation != rt_executor_generation())
    plan_drop(p); /* compiled with other options (:set opt, fp-contract, approx-math) */
  if (p->plan && p->plan->mod != in->mod) {
    /* another module: the same callee names must still be the same prims */
    Plan *P = p->plan;
    for (int i = 0; i < P->nsteps; i++)
      if (P->steps[i].op < 0 &&
          !same_prim(module_prim(in->mod, P->steps[i].call->u.call.args[0]->u.global.name),
                     P->steps[i].prim)) {
        plan_free(P), p->plan = NULL, p->plan_state = 0;
        break;
      }
    if (p->plan) p->plan->mod = in->mod;
  }
  if (!p->plan && p->plan_state == 0) {
    p->plan = plan_build(in, p);
    p->plan_state = p->plan ? 1 : -1;
  }
  return p->plan && !p->plan->running;
}

bool plan_call(Interp *in, Proc *p, Value **args, int n, Value **out) {
  if (n != p->nparams || !plan_usable(in, p)) return false;
  Plan *P = p->plan;
  if (!args_fit(P, args, n)) return false;
  if (!P->arena && P->arena_bytes) {
    P->arena = aligned_alloc(64, align64(P->arena_bytes));
    if (!P->arena) return false;
  }
  *out = NULL;
  P->running = true;
  bool ok = alloc_results(in, P);
  for (int i = 0; ok && i < P->nvals; i++)
    P->vals[i].hdr.data = storage_data(P, &P->st[P->vals[i].storage], args);
  if (ok && run_steps(in, P)) *out = result_value(in, P, args);
  release_results(P);
  P->running = false;
  return true;
}

void plan_drop(Proc *p) {
  plan_free(p->plan);
  p->plan = NULL, p->plan_state = 0;
}
