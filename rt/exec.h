/* exec.h — how a prim function runs: the error a run reports, the executor
 * interface call_tir goes through, and the interrupt flag long loops poll.
 *
 * rt/ is the run-time layer under both interp/ and jit/: they depend on it
 * and never on each other.  The TIR interpreter (rt/tir_interp.h) is always
 * available; a compiled executor (the JIT: jit_register_executor in
 * jit/jit.h) registers itself here, and call_tir (interp/call_tir.c) asks
 * rt_executor() for it when the exec mode is jit.  Without one, or when it
 * cannot build a kernel, call_tir runs the interpreter: same semantics. */
#ifndef RLY_RT_EXEC_H
#define RLY_RT_EXEC_H

#include <signal.h>
#include <stdbool.h>

#include "ir/tir.h"
#include "rt/rt.h"

/* A user error from running a prim function (binding mismatches, bounds,
 * division by zero, allocation failures, interrupts): a message, the span
 * in the prim function, and the parameter concerned (or -1). */
typedef struct TirError {
  char msg[RT_ERR_LEN];
  Span span; /* where in the prim function (a statement, a load, a parameter) */
  int param; /* the parameter whose tensor did not fit, or -1 */
} TirError;

/* A compiled executor.  `prepare` returns its compiled form of f (cached
 * by the executor; f must outlive it) or NULL with err filled when it
 * cannot build one.  The other entries take that compiled form. */
typedef struct RtExecutor {
  const char *name;
  const void *(*prepare)(const PrimFunc *f, TirError *err);
  /* Runs on args[0..n): inputs then outputs (destination passing). */
  bool (*run)(const void *kernel, RtTensor **args, int n, TirError *err);
  /* Whether the kernel stores into parameter i (shared inputs are copied). */
  bool (*writes_param)(const void *kernel, int i);
  /* Whether it stores every element of parameter i and never loads it, so
   * a fresh output need not be zero-filled. */
  bool (*writes_all_of_param)(const void *kernel, int i);
  /* The prim functions prepared so far may be freed (an engine closes):
   * drop every reference to them; compiled code may be kept for copies. */
  void (*forget)(void);
} RtExecutor;

/* Installs x as the current context's compiled executor (NULL removes it). */
void rt_executor_register(const RtExecutor *x);
/* The compiled executor, or NULL when none is registered. */
const RtExecutor *rt_executor(void);
/* A count the executor bumps when what `prepare` returns for a prim
 * function changes (its compile options): holders of prepared kernels
 * (the planned executor) prepare them again when it moved. */
void rt_executor_changed(void);
unsigned rt_executor_generation(void);

/* The current context's interrupt flag (rt/rt.h), set by rt_interrupt;
 * evaluation loops poll it and stop with "interrupted". */
#define rt_interrupt_flag (*rt_interrupt_flag_ptr())
volatile sig_atomic_t *rt_interrupt_flag_ptr(void);
volatile sig_atomic_t *rt_interrupt_flag_of(RtCtx *ctx);
/* Async-signal-safe (SIGINT): interrupts the context that holds the
 * signals (rt_ctx_take_signals: the first to ask, until it drops them;
 * the current one when none does). */
void rt_interrupt(void);
void rt_ctx_take_signals(RtCtx *ctx);
void rt_ctx_drop_signals(RtCtx *ctx); /* if ctx has them */
void rt_ctx_interrupt(RtCtx *ctx);    /* stops ctx's evaluation (any thread) */
/* True (once) if an interrupt was requested; clears the request. */
bool rt_take_interrupt(void);

/* A budget of evaluation steps, so that a program cannot run forever where
 * that matters (the evaluation fuzz target; `max_steps` of InterpOptions).
 * The loops that poll the interrupt flag charge the steps they made since
 * their last poll; the evaluator resets the budget at every evaluation.
 * 0: no budget. */
void rt_steps_reset(int64_t budget);
/* Charges n steps; true when the budget is spent (then say
 * rt_steps_message()). */
bool rt_steps_charge(int64_t n);
const char *rt_steps_message(void); /* "step limit N reached" */

#endif
