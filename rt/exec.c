/* exec.c — the compiled executor, the interrupt flag and the step budget
 * (rt/exec.h), each a field of the current run-time context (rt/rt.h:
 * thread-local, set by the engine on entry).  Ctrl-C comes as a signal to
 * the process, not to a thread: rt_interrupt sets the flag of the context
 * that took the signals (`signal_ctx`, the one process-wide pointer here:
 * the first engine alive, the REPL's), else the current one; an embedder
 * with several sessions stops one with rt_ctx_interrupt. */
#include "rt/exec.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "rt/rt_ctx.h"

static _Atomic(RtCtx *) signal_ctx;

void rt_executor_register(const RtExecutor *x) { rt_ctx_current()->executor = x; }
const RtExecutor *rt_executor(void) { return rt_ctx_current()->executor; }

void rt_executor_changed(void) { rt_ctx_current()->generation++; }
unsigned rt_executor_generation(void) { return rt_ctx_current()->generation; }

volatile sig_atomic_t *rt_interrupt_flag_of(RtCtx *ctx) { return &ctx->interrupt; }
volatile sig_atomic_t *rt_interrupt_flag_ptr(void) { return &rt_ctx_current()->interrupt; }

void rt_ctx_take_signals(RtCtx *ctx) {
  RtCtx *none = NULL;
  atomic_compare_exchange_strong(&signal_ctx, &none, ctx);
}
void rt_ctx_drop_signals(RtCtx *ctx) {
  RtCtx *want = ctx;
  atomic_compare_exchange_strong(&signal_ctx, &want, NULL);
}
void rt_ctx_interrupt(RtCtx *ctx) { ctx->interrupt = 1; }

void rt_interrupt(void) {
  RtCtx *c = atomic_load(&signal_ctx);
  (c ? c : rt_ctx_current())->interrupt = 1;
}

bool rt_take_interrupt(void) {
  RtCtx *c = rt_ctx_current();
  if (!c->interrupt) return false;
  c->interrupt = 0;
  return true;
}

void rt_steps_reset(int64_t budget) {
  RtCtx *c = rt_ctx_current();
  c->step_budget = c->steps_left = budget > 0 ? budget : 0;
}

bool rt_steps_charge(int64_t n) {
  RtCtx *c = rt_ctx_current();
  if (!c->step_budget) return false;
  c->steps_left -= n;
  return c->steps_left < 0;
}

const char *rt_steps_message(void) {
  RtCtx *c = rt_ctx_current();
  snprintf(c->steps_msg, sizeof c->steps_msg, "step limit %lld reached", (long long)c->step_budget);
  return c->steps_msg;
}
