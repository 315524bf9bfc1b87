/* exec.c — the registered compiled executor and the interrupt flag
 * (rt/exec.h).  Process-wide: there is one JIT and one SIGINT. */
#include "rt/exec.h"

#include <stddef.h>

static const RtExecutor *registered;
volatile sig_atomic_t rt_interrupt_flag;

void rt_executor_register(const RtExecutor *x) { registered = x; }
const RtExecutor *rt_executor(void) { return registered; }

void rt_interrupt(void) { rt_interrupt_flag = 1; }

bool rt_take_interrupt(void) {
  if (!rt_interrupt_flag) return false;
  rt_interrupt_flag = 0;
  return true;
}
