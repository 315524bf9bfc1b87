/* interp_int.h — the interpreter's internals shared by its files:
 * procs (functions prepared for evaluation: slots and captures), the heap
 * of values and its collector, and the machine's stacks.
 *
 * Every Var bound in a function gets a slot in that function's frame;
 * variables a `fn` uses from outside are captured by value when the closure
 * is created and occupy its first slots.  Slots are found through a hash
 * map from Var id, filled once per function. */
#ifndef RLY_INTERP_INT_H
#define RLY_INTERP_INT_H

#include <signal.h>

#include "interp/interp.h"
#include "kernels/kernels.h"
#include "rt/exec.h"

/* Map from a 64-bit key (Var id or pointer) to an int (ir/util.h U64Map). */
typedef U64Map IdMap;

bool idmap_get(const IdMap *m, uint64_t key, int64_t *val);
void idmap_put(IdMap *m, uint64_t key, int64_t val);
void idmap_free(IdMap *m);

/* A run-time check of one parameter's annotated tensor type. */
typedef struct ParamCheck {
  int param;        /* index of the parameter */
  const Type *type; /* its annotation (a TY_TENSOR) */
} ParamCheck;

struct Proc {
  const Function *fn; /* NULL for a top-level expression */
  const Expr *body;
  const char *name; /* "f" for @f, NULL for closures and top level */
  int nslots;
  int ncap;
  Var **caps;  /* captured variables: slots [0, ncap) */
  int nparams; /* parameters: slots [ncap, ncap + nparams) */
  int nchecks;
  ParamCheck *checks;
  IdMap slots;         /* Var id → slot */
  struct FastFn *fast; /* its scalar fast-path code (fast.c), or NULL */
  int8_t fast_state;   /* 0 not decided yet, 1 runs on the fast path, -1 does not */
  struct Plan *plan;   /* its planned executor (plan.c), or NULL */
  int8_t plan_state;   /* 0 not decided yet, 1 planned, -1 not plannable */
  int8_t spec_state;   /* 0 not decided yet, 1 a `?` dimension in a parameter, -1 none */
};

/* Prepares (once; cached by Function pointer) the proc of a function. */
Proc *proc_of(Interp *in, const Function *fn, const char *name);
/* A proc for a top-level expression; its captures are session variables.
 * It lives in arena a (not cached) until proc_toplevel_free: evaluating
 * many inputs does not accumulate procs. */
Proc *proc_toplevel(Interp *in, const Expr *e, Arena *a);
void proc_toplevel_free(Proc *p);
int proc_slot(const Proc *p, const Var *v); /* -1 if not in this proc */

/* ── heap ── */

Value *value_new(Interp *in, ValueKind kind, int nchildren);
Value *value_tensor(Interp *in, RtTensor *t); /* takes the reference */
Value *value_unit(Interp *in);
/* The children of a value (fields, captures, cell) for the collector. */
int value_children(const Value *v, Value ***out);

/* Session variable bindings (roots). */
typedef struct SessionVar {
  Var *var;
  Value *value;
} SessionVar;

/* The scalar fast path (fast.c): registers and frames of the compiled
 * functions running now.  Registers of kind ref hold Values: the collector
 * marks them (fast_mark_roots). */
typedef union FReg {
  int64_t i;  /* signed integers, sign-extended */
  uint64_t u; /* unsigned integers and bool, zero-extended; float16 bits */
  float f;
  double d;
  Value *v; /* a ref */
} FReg;

typedef struct FFrame {
  struct FastFn *fn;
  const struct FIns *ret; /* where the caller continues */
  size_t base;            /* first register */
  int32_t dst;            /* the caller's register for the result */
  const char *callee;     /* for the call stack of errors */
  Span span;
} FFrame;

typedef struct FastStack {
  FReg *regs;
  size_t nregs, regs_cap;
  FFrame *frames;
  size_t nframes, frames_cap;
  PtrVec fns;       /* every compiled function (to drop them) */
  PtrVec undecided; /* procs refused for a module-dependent reason (decided again) */
  PtrVec pending;   /* functions allocated but not compiled yet (FastFn, FuncDef pairs) */
} FastStack;

/* One continuation on the machine's stack (see eval.c). */
typedef struct Kont Kont;

struct Interp {
  Value *value_pool[5]; /* value.c's free lists of small values (VALUE_POOL_CLASSES) */
  uint32_t gc_epoch;    /* value.c: the last collection's mark */
  DiagCtx *diag;
  InterpOptions opt;
  Arena arena;   /* procs */
  Arena scratch; /* top-level procs, released after their evaluation (LIFO) */
  IdMap procs;   /* Function pointer → index into proc list */
  PtrVec proc_list;

  /* heap */
  Value *heap;
  size_t nobjects, nsince_gc, gc_threshold;
  size_t bytes_since_gc, live_bytes;
  bool gc_wanted;
  PtrVec mark_stack;

  /* machine */
  Value **slots;
  size_t nslots_used, slots_cap; /* frames' slots */
  Value **vals;
  size_t nvals, vals_cap; /* temporaries */
  Kont *konts;
  size_t nkonts, konts_cap;
  int64_t depth;
  Value *current; /* the value being returned (a root at safe points) */

  /* session */
  SessionVar *session;
  size_t nsession, session_cap;
  StrMap globals; /* state global name → V_REF cell */
  const Module *mod;

  KernelCtx kx;
  char err[RT_ERR_LEN];
  Span err_span;
  char note[RT_ERR_LEN]; /* a note shown after the error (e.g. at a prim parameter), or "" */
  Span note_span;

  struct TirCache *tir;   /* prim functions compiled for call_tir (call_tir.c) */
  InterpSpecializer spec; /* shape specialisation (spec.c); get NULL: none */

  FastStack fast; /* the scalar fast path's registers and frames (fast.c) */
  U64Map consts;  /* EX_CONST node in a function → its Value, and a def's Proc →
                     its closure: made once, roots */
  U64Map defs;    /* a global's name (the string of its Expr) → its Def in mod,
                     for one evaluation (interp_def) */
};

/* module_lookup(in->mod, name) with the answer kept for the evaluation:
 * a kernel call's callee is otherwise found by hashing its long name at
 * every call. */
const Def *interp_def(Interp *in, const char *name);

/* Ops on RandState keys (random_ops.c): whether op with nargs arguments is
 * one, and running it (NULL with in->err set on failure). */
bool random_handles(int op, int nargs);
Value *random_run(Interp *in, const Expr *call, int op, Value **args, int n, int mode);
/* Records a run-time error at sp (in->err, in->err_span) and returns NULL
 * (call_tir.c; the VM ops use it too). */
Value *interp_fail(Interp *in, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* call_tir (call_tir.c): runs a prim function on fresh outputs; NULL with
 * in->err (and possibly in->note) set on failure.  call_tir_free frees the
 * compiled prim functions. */
Value *call_tir_run(Interp *in, const Expr *call, Value **args, int n);
/* vm.invoke_tvm_op(@p, (ins), (outs)): runs @p writing into the given
 * output tensors; returns (). */
Value *call_tir_invoke(Interp *in, const Expr *call, Value **args, int n);
void call_tir_free(Interp *in);
/* The error of a failed run of @p at a call_tir with nin inputs. */
void call_tir_error(Interp *in, const Expr *call, const PrimFunc *p, int nin, const TirError *e);

/* The planned executor (plan.c): runs p (a global function) on args as a
 * planned list of kernel calls when it qualifies; true when it ran, with
 * *out the result or NULL (in->err set) on failure; false: evaluate it. */
bool plan_call(Interp *in, Proc *p, Value **args, int n, Value **out);
/* Whether the op runs on the kernel table's reference kernel (not call_tir,
 * a random op taking a key, or an op with its own runner). */
bool interp_plain_op(int opindex, int nargs);
void plan_drop(Proc *p);
/* A call of p (a global function with a dynamic parameter shape) on a copy
 * specialised for the arguments' shapes (spec.c); false: run p itself. */
bool spec_call(Interp *in, Proc *p, Value **args, int n, Value **out);
/* A constant's Value in p (made once; a root). */
Value *interp_const_value(Interp *in, const Proc *p, const Expr *e);

/* on_device, device_copy, memory.*, vm.*, call_lowered of a prim
 * (vm_ops.c): the ops flagged OP_IDENTITY or OP_OWN_RUNNER. */
Value *vm_ops_run(Interp *in, const Expr *call, int opindex, Value **args, int n);

/* ── the scalar fast path (fast.c) ── */

/* Whether p (with these arguments) runs on the fast path: compiles p and
 * the functions it calls on first use. */
bool fast_accepts(Interp *in, Proc *p, Value **args, int n);
/* Runs p (fast_accepts said yes) called as `name` at sp; returns the boxed
 * result, or NULL with in->err set and the fast frames pushed as K_RETURN
 * continuations (interp_push_frame) for the error's call stack. */
Value *fast_run(Interp *in, Proc *p, Value **args, const char *name, Span sp);
/* Drops compiled code whose callees changed in module m (or all of it). */
void fast_validate(Interp *in, const Module *m);
void fast_free(Interp *in);
/* Calls mark(v) for every Value held by fast-path registers. */
void fast_mark_roots(Interp *in, void (*mark)(Interp *, Value *, uint32_t), uint32_t epoch);

/* eval.c services for fast.c. */
Value *interp_global_cell(Interp *in, const StateGlobal *g, Span sp);
void interp_push_frame(Interp *in, const char *callee, Span sp); /* a K_RETURN for errors */
void interp_set_top_frame(Interp *in, const char *callee, Span sp);

/* Marks from all roots and frees the rest. */
size_t gc_collect(Interp *in);
void gc_free_all(Interp *in);

#endif
