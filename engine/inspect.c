/* inspect.c — the shells' view of the stages below the engine
 * (engine/inspect.h): each function forwards to the JIT, the runtime, the
 * checker, the external-function table or the tensor files. */
#include "engine/inspect.h"

#include <stdio.h>

#include "io/tensor_io.h"
#include "jit/jit_config.h"
#include "kernels/kernels.h"
#include "rt/exec.h"
#include "rt/rt.h"
#include "types/types.h"

const char *engine_jit_unavailable(void) {
  return jit_available() ? NULL : jit_unavailable_reason();
}

int engine_jit_kernel_count(void) { return jit_kernel_count(); }
bool engine_jit_kernel_info(int i, JitKernelInfo *out) { return jit_kernel_info(i, out); }

bool engine_jit_dump(const PrimFunc *f, const char *what, StrBuf *b, char *err, size_t n) {
  TirError e;
  if (jit_dump(f, what, b, &e)) return true;
  snprintf(err, n, "%s", e.msg);
  return false;
}

void engine_quiesce(void) { jit_quiesce(); }
void engine_interrupt_clear(void) { rt_interrupt_flag = 0; }

const char *engine_llvm_version(void) { return RLY_LLVM_VERSION; }

int engine_pass_count(void) { return pass_count(); }
const char *engine_pass_name(int i) { return pass_get(i)->name; }

bool engine_op_has_kernel(int op) { return kernels_get(op) != NULL; }

Type *engine_check_expr(Module *m, Expr *ex, DiagCtx *d) { return ty_check_expr(m, ex, d); }
bool engine_check_module(Module *m, DiagCtx *d) { return ty_check_module(m, d); }
bool engine_recheck_module(Module *m, DiagCtx *d) { return ty_recheck_module(m, d); }

void engine_register_extern(const char *name, RlyDLExternFn fn, void *ctx) {
  rly_register_extern(name, fn, ctx);
}

bool engine_extern_load(const char *name, const char *lib, const char *symbol, char *err,
                        size_t n) {
  return rly_extern_load(name, lib, symbol, err, n);
}

bool engine_save_weights(const OnnxWeights *w, const char *path, char *err, size_t n) {
  TioFile f = {0};
  bool ok = true;
  for (int i = 0; i < w->n && ok; i++) {
    RtTensor *t = rt_tensor_from_ir(w->values[i], err, n);
    ok = t && tio_add(&f, w->names[i], t, err, n);
    rt_tensor_release(t);
  }
  ok = ok && tio_save(path, TIO_NPZ, &f, err, n);
  tio_file_free(&f);
  return ok;
}
