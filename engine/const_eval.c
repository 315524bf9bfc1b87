/* const_eval.c — the evaluator FoldConstant calls (PassEvalFn,
 * passes/pass.h): an op's reference kernel (kernels/kernels.h) run on
 * constant tensors exactly as the interpreter runs it, the results copied
 * into the caller's arena.  passes/ sits below the kernels and reaches
 * them only through this hook, which engine_new installs. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "kernels/kernels.h"
#include "passes/pass.h"

/* Runs the kernel on borrowed views of the constants (nothing is copied
 * in); the outputs are copied into a and released.  Not a run of the
 * program: a profile (the kernels' run hook) does not count it. */
static bool eval_op(int op, int nin, Tensor *const *in, const Attrs *attrs, Arena *a, int maxout,
                    int *nout, Tensor **out, char *err, size_t errn) {
  RtTensor **rin = calloc((size_t)nin + 1, sizeof *rin);
  RtTensor **rout = calloc((size_t)maxout + 1, sizeof *rout);
  if (!rin || !rout) rly_oom();
  KernelCtx kx;
  kernel_ctx_init(&kx);
  bool ok = true;
  int have = 0;
  for (; ok && have < nin; have++) ok = (rin[have] = rt_tensor_borrow_ir(in[have], err, errn));
  int n = 0;
  void *hook_user;
  KernelRunHook hook = kernels_run_hook(&hook_user);
  kernels_set_run_hook(NULL, NULL);
  if (ok && !kernels_infer_and_run(&kx, op, nin, rin, attrs, maxout, &n, rout)) {
    snprintf(err, errn, "%s", kx.err);
    ok = false;
  }
  kernels_set_run_hook(hook, hook_user);
  for (int i = 0; i < n; i++) {
    out[i] = rt_tensor_to_ir(a, rout[i]);
    rt_tensor_release(rout[i]);
  }
  for (int i = 0; i < have; i++) rt_tensor_release(rin[i]);
  *nout = ok ? n : 0;
  kernel_ctx_free(&kx);
  free(rin);
  free(rout);
  return ok;
}

void engine_install_evaluator(void) { pass_set_evaluator(eval_op); }
