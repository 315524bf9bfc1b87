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
#include "interp/kernels.h"

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
  const char *name;   /* "f" for @f, NULL for closures and top level */
  int nslots;
  int ncap;
  Var **caps;         /* captured variables: slots [0, ncap) */
  int nparams;        /* parameters: slots [ncap, ncap + nparams) */
  int nchecks;
  ParamCheck *checks;
  IdMap slots;        /* Var id → slot */
};

/* Prepares (once; cached by Function pointer) the proc of a function. */
Proc *proc_of(Interp *in, const Function *fn, const char *name);
/* A proc for a top-level expression; its captures are session variables. */
Proc *proc_toplevel(Interp *in, const Expr *e);
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

/* One continuation on the machine's stack (see eval.c). */
typedef struct Kont Kont;

struct Interp {
  DiagCtx *diag;
  InterpOptions opt;
  Arena arena; /* procs */
  IdMap procs; /* Function pointer → index into proc list */
  PtrVec proc_list;

  /* heap */
  Value *heap;
  size_t nobjects, nsince_gc, gc_threshold;
  size_t bytes_since_gc, live_bytes;
  bool gc_wanted;
  PtrVec mark_stack;

  /* machine */
  Value **slots; size_t nslots_used, slots_cap; /* frames' slots */
  Value **vals; size_t nvals, vals_cap;         /* temporaries */
  Kont *konts; size_t nkonts, konts_cap;
  int64_t depth;
  Value *current; /* the value being returned (a root at safe points) */

  /* session */
  SessionVar *session; size_t nsession, session_cap;
  StrMap globals; /* state global name → V_REF cell */
  const Module *mod;

  KernelCtx kx;
  char err[RT_ERR_LEN];
  Span err_span;
  char note[RT_ERR_LEN]; /* a note shown after the error (e.g. at a prim parameter), or "" */
  Span note_span;

  struct TirCache *tir;  /* prim functions compiled for call_tir (call_tir.c) */
};

/* Ops on RandState keys (random_ops.c): whether op with nargs arguments is
 * one, and running it (NULL with in->err set on failure). */
bool random_handles(const char *op, int nargs);
Value *random_run(Interp *in, const Expr *call, const OpDef *def, Value **args, int n, int mode);

/* call_tir (call_tir.c): runs a prim function on fresh outputs; NULL with
 * in->err (and possibly in->note) set on failure.  call_tir_free frees the
 * compiled prim functions. */
Value *call_tir_run(Interp *in, const Expr *call, Value **args, int n);
void call_tir_free(Interp *in);

/* Marks from all roots and frees the rest. */
size_t gc_collect(Interp *in);
void gc_free_all(Interp *in);

#endif
