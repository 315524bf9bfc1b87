/* exec.c — the registered compiled executor, the interrupt flag and the
 * step budget (rt/exec.h).  Process-wide: there is one JIT, one SIGINT,
 * and one evaluation at a time. */
#include "rt/exec.h"

#include <stddef.h>
#include <stdio.h>

static const RtExecutor *registered;
volatile sig_atomic_t rt_interrupt_flag;

void rt_executor_register(const RtExecutor *x) { registered = x; }
const RtExecutor *rt_executor(void) { return registered; }

static unsigned generation;
void rt_executor_changed(void) { generation++; }
unsigned rt_executor_generation(void) { return generation; }

void rt_interrupt(void) { rt_interrupt_flag = 1; }

bool rt_take_interrupt(void) {
  if (!rt_interrupt_flag) return false;
  rt_interrupt_flag = 0;
  return true;
}

static int64_t step_budget, steps_left;

void rt_steps_reset(int64_t budget) { step_budget = steps_left = budget > 0 ? budget : 0; }

bool rt_steps_charge(int64_t n) {
  if (!step_budget) return false;
  steps_left -= n;
  return steps_left < 0;
}

const char *rt_steps_message(void) {
  static char msg[64];
  snprintf(msg, sizeof msg, "step limit %lld reached", (long long)step_budget);
  return msg;
}
