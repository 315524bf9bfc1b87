/* interp.h — the AST interpreter: run-time values, evaluation, printing.
 *
 * Values (tensors, tuples, closures, references, ADT values, PRNG keys) are
 * heap objects owned by the interpreter's collector (mark and sweep, so
 * cycles through references are collected).  A caller that keeps a Value
 * across evaluations must root it: session bindings (interp_bind) are roots.
 *
 * Evaluation runs on an explicit stack: deep let chains and tail calls use
 * constant C stack; non-tail recursion is limited by a settable depth
 * (error "recursion limit N reached in @f").  Run-time errors become
 * diagnostics with the span of the failing node and the call stack of
 * @functions; the interpreter stays usable afterwards. */
#ifndef RLY_INTERP_H
#define RLY_INTERP_H

#include <stdbool.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "rt/rt.h"

typedef struct Interp Interp;
typedef struct Value Value;

#define VALUE_KINDS(X)                        \
  X(V_TENSOR, "tensor")                       \
  X(V_TUPLE, "tuple")                         \
  X(V_CLOSURE, "closure")                     \
  X(V_REF, "ref")                             \
  X(V_ADT, "adt")                             \
  X(V_KEY, "key") /* RandState */             \
  X(V_OP, "op")   /* an op used as a value */ \
  X(V_CTOR, "constructor")

typedef enum ValueKind {
#define X(e, n) e,
  VALUE_KINDS(X)
#undef X
} ValueKind;

typedef struct Proc Proc; /* a Function prepared for evaluation (interp/eval.c) */

struct Value {
  ValueKind kind;
  uint32_t mark;
  Value *gc_next;
  bool cell_private; /* a scalar tensor only a ref cell points to (the fast path
                        updates it in place); cleared when the cell is read */
  union {
    RtTensor *tensor;
    struct {
      int n;
      Value **fields;
    } tuple;
    struct {
      Proc *proc;
      const char *name;
      int ncap;
      Value **cap;
    } closure; /* name: @f or NULL */
    struct {
      Value *cell;
    } ref;
    struct {
      AdtDef *adt;
      int index;
      int n;
      Value **fields;
    } adt;
    struct {
      uint32_t k[2];
    } key;
    struct {
      int index;
    } op;
    struct {
      AdtDef *adt;
      int index;
    } ctor;
  } u;
};

typedef struct InterpOptions {
  int64_t max_depth;   /* non-tail call depth limit (default 100000) */
  int64_t print_limit; /* tensors with more elements print summarized (default 1000) */
  bool prng_original;  /* JAX's original PRNG mode instead of the partitionable one */
  bool exec_jit;       /* call_tir runs the registered compiled executor (rt/exec.h); default
                          on; the engine (engine/engine.h) sets it from `:set exec` */
  bool jit_require;    /* with exec_jit, a prim function the executor cannot compile is an
                          error, not a run on the TIR interpreter (RLY_JIT_REQUIRE=1) */
  bool no_fast;        /* disable the scalar fast path */
  bool no_plan;        /* disable the planned executor (plan.c) */
  bool fast_trace;     /* say on stderr which functions run on the fast path */
  int64_t max_steps;   /* evaluation steps per interp_eval (rt_steps_reset); 0: no limit */
} InterpOptions;

Interp *interp_new(DiagCtx *d);
void interp_free(Interp *in);
InterpOptions *interp_options(Interp *in);

/* Evaluates e (type-checked) against module m.  Session variables bound by
 * interp_bind are visible.  Returns the value (rooted until the next
 * evaluation) or NULL after reporting a diagnostic. */
Value *interp_eval(Interp *in, Module *m, Expr *e);

/* A tensor value (takes the reference to t), e.g. for a session variable. */
Value *interp_value_tensor(Interp *in, RtTensor *t);

/* Binds a session variable (a root until rebound or interp_reset); val
 * NULL unbinds it. */
void interp_bind(Interp *in, Var *v, Value *val);
/* The value bound to a session variable (NULL: none; var NULL: the last
 * result, rooted until the next evaluation). */
Value *interp_bound(Interp *in, const Var *var);
/* The distinct buffers of tensor data a value holds (RtBuffer *, a
 * constant's borrowed data included), appended to out in address order;
 * views of one buffer give it once. */
void interp_value_buffers(Interp *in, Value *v, PtrVec *out);
/* The bytes of those buffers. */
size_t interp_value_bytes(Interp *in, Value *v);
/* Which of vs[0..n) the program can still reach (from the session's
 * variables, globals, constants, the stacks): reached[i] says; a value
 * nothing reaches is the caller's alone. */
void interp_values_reached(Interp *in, Value *const *vs, int n, bool *reached);
/* Sets @prng_state to random.key(seed) (`:seed N`). */
void interp_seed(Interp *in, int64_t seed);

/* Forgets session variables and state-global cells. */
void interp_reset(Interp *in);

/* Value printing per text-format.md part D (malloc'd). */
char *interp_format(Interp *in, const Value *v);
void interp_format_to(Interp *in, StrBuf *b, const Value *v);

/* Shape specialisation (jit mode): a call of a global function with a `?`
 * or size-variable dimension in a parameter's type (`called`) asks get for a copy
 * lowered for the arguments' concrete shapes; it returns false (no copy:
 * the call runs as written) or the copy and the module its kernels
 * resolve in.  The copy runs on the planned executor; one that cannot
 * (control flow) is handed back to refused and the call runs as written.
 * Both pointers stay valid until interp_drop_plan of the copy. */
typedef struct InterpSpecializer {
  bool (*get)(void *user, const char *name, const Function *called, Value **args, int n,
              const Function **spec, const Module **mod);
  void (*refused)(void *user, const Function *spec);
  void *user;
} InterpSpecializer;
void interp_set_specializer(Interp *in, const InterpSpecializer *s);
/* Frees the planned executor of fn's proc (its buffers), if any. */
void interp_drop_plan(Interp *in, const Function *fn);

/* Runs the collector now; returns the number of live objects. */
size_t interp_gc(Interp *in);

#endif
