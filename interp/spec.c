/* spec.c — calls of functions with `?` dimensions on shape-specialised
 * copies (jit mode).
 *
 * A global function whose parameters are all tensors, one of them with a
 * `?` or size-variable dimension, is called through the specialiser the
 * engine registers (InterpSpecializer): it hands back a copy of the
 * function typed and lowered for the arguments' concrete shapes, whose
 * kernels then take the static fast schedules, and the module they resolve
 * in.  The copy runs on the planned executor (plan.c) with that module as
 * the interpreter's for the call; a copy the plan refuses goes back to the
 * engine (refused) and the call runs the function as written.  The copy's
 * results are the function's: the engine specialises exact shapes only. */
#include "interp/interp_int.h"

void interp_set_specializer(Interp *in, const InterpSpecializer *s) {
  in->spec = s ? *s : (InterpSpecializer){0};
}

void interp_drop_plan(Interp *in, const Function *fn) {
  int64_t idx;
  if (idmap_get(&in->procs, (uint64_t)(uintptr_t)fn, &idx)) plan_drop(in->proc_list.items[idx]);
}

static bool dynamic_tensor(const Type *t) {
  for (int d = 0; d < t->u.tensor.ndim; d++)
    if (t->u.tensor.dims[d].kind != DIM_CONST) return true;
  return false;
}

/* Whether p's parameters are annotated tensors, one of a dynamic shape. */
static bool spec_candidate(const Proc *p) {
  if (!p->fn || !p->name || p->ncap || p->nparams == 0) return false;
  bool dyn = false;
  for (int i = 0; i < p->nparams; i++) {
    const Type *t = p->fn->params[i]->annot;
    if (!t || t->kind != TY_TENSOR) return false;
    dyn = dyn || dynamic_tensor(t);
  }
  return dyn;
}

static bool spec_usable(Interp *in, Proc *p, Value **args, int n) {
  if (!in->spec.get || !in->opt.exec_jit || in->opt.no_plan || n != p->nparams) return false;
  if (p->spec_state == 0) p->spec_state = spec_candidate(p) ? 1 : -1;
  if (p->spec_state < 0) return false;
  for (int i = 0; i < n; i++)
    if (args[i]->kind != V_TENSOR) return false;
  return true;
}

bool spec_call(Interp *in, Proc *p, Value **args, int n, Value **out) {
  const Function *fn;
  const Module *mod;
  if (!spec_usable(in, p, args, n) ||
      !in->spec.get(in->spec.user, p->name, p->fn, args, n, &fn, &mod))
    return false;
  Proc *sp = proc_of(in, fn, p->name);
  const Module *was = in->mod;
  in->mod = mod;
  bool ran = plan_call(in, sp, args, n, out);
  in->mod = was;
  if (!ran && in->spec.refused) in->spec.refused(in->spec.user, fn);
  return ran;
}
