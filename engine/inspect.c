/* inspect.c — the shells' view of the stages below the engine
 * (engine/inspect.h): each function forwards to the JIT, the runtime, the
 * checker, the external-function table or the tensor files. */
#include "engine/inspect.h"

#include <stdio.h>

#include "ad/grad.h"
#include "jit/jit_config.h"
#include "kernels/kernels.h"
#include "lower/compute/compute.h"
#include "parser/tvmscript.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "rt/exec.h"
#include "types/types.h"

const char *engine_jit_unavailable(void) {
  return jit_available() ? NULL : jit_unavailable_reason();
}

int engine_jit_kernel_count(void) { return jit_kernel_count(); }
const char *engine_jit_passes(void) { return jit_passes_name(); }
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
const PassDef *engine_pass_at(int i) { return i >= 0 && i < pass_count() ? pass_get(i) : NULL; }
PassOptions engine_pass_options(void) { return pass_options_default(); }

bool engine_pass_pipeline(const char *names, Module *in, Arena *a, DiagCtx *d, const PassOptions *o,
                          PassResult *r) {
  return pass_pipeline(names, in, a, d, o, r);
}

void engine_pass_result_free(PassResult *r) { pass_result_free(r); }

char *engine_pass_diff(const Module *before, const Module *after, const PassScope *scope,
                       char **outside) {
  return pass_diff_scoped(before, after, scope, outside);
}

void engine_pass_print_after(FILE *out, const char *pass, const Module *m, const PassScope *scope) {
  pass_print_after(out, pass, m, scope);
}

bool engine_verify_module(Module *m, DiagCtx *d) { return pass_verify(m, d); }

char *engine_rewrite_format(const PassRewrite *rw, DiagCtx *d, int max_lines) {
  return pass_rewrite_format(rw, d, max_lines);
}

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

/* ───────────────────────── printing with meta ───────────────────────── */

typedef struct MetaCtx {
  int64_t max_inline;
  PtrVec *consts;
} MetaCtx;

static Expr *meta_pre(Rewriter *rw, Expr *e) {
  MetaCtx *mc = rw->user;
  if (e->kind != EX_CONST || e->u.konst.value->numel <= mc->max_inline) return NULL;
  Expr *g = expr_global(rw->a, arena_printf(rw->a, "__rly_meta_%zu", mc->consts->len), e->span);
  vec_push(mc->consts, e->u.konst.value);
  return g;
}

Function *engine_meta_function(Arena *a, Function *fn, int64_t max_inline, PtrVec *consts) {
  MetaCtx mc = {max_inline, consts};
  Rewriter rw = {.a = a, .pre = meta_pre, .user = &mc};
  Function *out = rw_function(&rw, fn);
  ptrmap_free(&rw.subst);
  return out;
}

EngineOpGrad engine_op_grad(int op) {
  const OpGrad *rule = grad_rule(op);
  return !rule ? ENGINE_GRAD_NONE : rule == &grad_zero ? ENGINE_GRAD_ZERO : ENGINE_GRAD_RULE;
}

bool engine_op_lowers(int op) { return compute_rule(op) != NULL; }

/* ───────────────────────── TVMScript in ───────────────────────── */

bool engine_tvmscript_detect(const char *name, const char *text, size_t len) {
  return tvms_detect(name, text, len);
}

bool engine_tvmscript_complete(const char *text, size_t len) { return tvms_complete(text, len); }

char *engine_tvmscript_translate(DiagCtx *d, uint32_t file, size_t *len) {
  bool at_end = false;
  return tvms_translate(d, file, len, &at_end);
}
