/* vm_ops.c — the ops that run in the evaluator's own code instead of a
 * kernel (OP_OWN_RUNNER, OP_IDENTITY; ops/device.c, ops/vm.c).
 *
 * rly has one device, so on_device and device_copy return their argument.
 * A Storage (memory.alloc_storage) is an int64 scalar holding its size in
 * bytes: memory.alloc_tensor gives a fresh zero tensor of the shape it is
 * asked for (tensors never alias a storage here, which a correct program
 * cannot tell), memory.kill does nothing.  call_lowered of a prim function
 * and vm.invoke_tvm_op run the prim function through call_tir's code
 * (call_tir.c); call_lowered of a def is a call the evaluator makes itself
 * (eval.c, apply). */
#include <stdio.h>
#include <string.h>

#include "interp/interp_int.h"

static RtTensor *tensor_arg(Interp *in, const Expr *call, Value **args, int i) {
  if (args[i]->kind == V_TENSOR) return args[i]->u.tensor;
  interp_fail(in, call->span, "%s: argument %d is not a tensor",
              ops_get(call->u.call.fn->u.op.index)->name, i + 1);
  return NULL;
}

static Value *new_tensor(Interp *in, const Expr *call, DType dt, int ndim, const int64_t *shape) {
  RtTensor *t = rt_tensor_zeros(dt, ndim, shape, in->err, sizeof in->err);
  if (!t) return in->err_span = call->span, NULL;
  return value_tensor(in, t);
}

/* A run-time shape operand: a 1-d integer tensor of non-negative sizes. */
static bool shape_value(Interp *in, const Expr *call, const RtTensor *s, int64_t *shape, int *n) {
  const char *op = ops_get(call->u.call.fn->u.op.index)->name;
  if (s->ndim != 1 || s->numel > TENSOR_MAX_RANK || !dtype_is_int(s->dtype))
    return interp_fail(in, call->span,
                       "%s: the shape must be a 1-d integer tensor of at most %d sizes", op,
                       TENSOR_MAX_RANK),
           false;
  *n = (int)s->numel;
  for (int i = 0; i < *n; i++)
    if ((shape[i] = rt_get_i64(s, i)) < 0)
      return interp_fail(in, call->span, "%s: negative size %lld in the shape", op,
                         (long long)shape[i]),
             false;
  return true;
}

static Value *alloc_storage(Interp *in, const Expr *call, Value **args) {
  RtTensor *size = tensor_arg(in, call, args, 0);
  if (!size) return NULL;
  int64_t bytes = rt_get_i64(size, 0);
  if (bytes < 0)
    return interp_fail(in, call->span, "memory.alloc_storage: negative size %lld",
                       (long long)bytes);
  Value *v = new_tensor(in, call, DT_INT64, 0, NULL);
  if (v) ((int64_t *)v->u.tensor->data)[0] = bytes;
  return v;
}

static Value *alloc_tensor(Interp *in, const Expr *call, Value **args) {
  RtTensor *s = tensor_arg(in, call, args, 2);
  int64_t shape[TENSOR_MAX_RANK];
  int n;
  if (!s || !shape_value(in, call, s, shape, &n)) return NULL;
  ArenaMark m = arena_mark(&in->kx.arena);
  const char *name = op_attr_str(&in->kx.arena, call, "dtype");
  DType dt = dtype_from_name(name, strlen(name));
  arena_release(&in->kx.arena, m);
  if (dt == DT_INVALID) return interp_fail(in, call->span, "memory.alloc_tensor: bad `dtype`");
  return new_tensor(in, call, dt, n, shape);
}

static Value *shape_of(Interp *in, const Expr *call, Value **args) {
  RtTensor *x = tensor_arg(in, call, args, 0);
  if (!x) return NULL;
  ArenaMark m = arena_mark(&in->kx.arena);
  const char *name = op_attr_str(&in->kx.arena, call, "dtype");
  DType dt = dtype_from_name(name, strlen(name));
  arena_release(&in->kx.arena, m);
  if (!dtype_is_int(dt))
    return interp_fail(in, call->span, "vm.shape_of: `dtype` must be an integer type");
  int64_t len = x->ndim;
  Value *v = new_tensor(in, call, dt, 1, &len);
  if (!v) return NULL;
  Tensor view = rt_tensor_as_ir(v->u.tensor);
  for (int i = 0; i < x->ndim; i++) tensor_set_i64(&view, i, x->shape[i]);
  return v;
}

static Value *reshape_tensor(Interp *in, const Expr *call, Value **args) {
  RtTensor *x = tensor_arg(in, call, args, 0), *s = x ? tensor_arg(in, call, args, 1) : NULL;
  int64_t shape[TENSOR_MAX_RANK], numel = 1;
  int n;
  if (!s || !shape_value(in, call, s, shape, &n)) return NULL;
  for (int i = 0; i < n; i++) numel *= shape[i];
  if (numel != x->numel)
    return interp_fail(in, call->span, "vm.reshape_tensor: cannot reshape %lld elements into %lld",
                       (long long)x->numel, (long long)numel);
  RtTensor *v = rt_tensor_view(x, n, shape, in->err, sizeof in->err);
  if (!v) return in->err_span = call->span, NULL;
  return value_tensor(in, v);
}

static Value *kill_value(Interp *in, const Expr *call, Value **args) {
  (void)call, (void)args;
  return value_unit(in);
}

/* The runners by op name, like the kernels' family tables. */
typedef Value *VmOpFn(Interp *in, const Expr *call, Value **args);
static const struct {
  const char *name;
  VmOpFn *fn;
} runners[] = {
    {"memory.alloc_storage", alloc_storage},
    {"memory.alloc_tensor", alloc_tensor},
    {"memory.kill", kill_value},
    {"vm.shape_of", shape_of},
    {"vm.reshape_tensor", reshape_tensor},
};

Value *vm_ops_run(Interp *in, const Expr *call, int opindex, Value **args, int n) {
  const OpDef *def = ops_get(opindex);
  if (def->flags & OP_IDENTITY) return args[0];
  if (def->flags & OP_CALL_LOWERED) return call_tir_run(in, call, args, n);
  if (strcmp(def->name, "vm.invoke_tvm_op") == 0) return call_tir_invoke(in, call, args, n);
  for (size_t i = 0; i < sizeof runners / sizeof runners[0]; i++)
    if (strcmp(runners[i].name, def->name) == 0) return runners[i].fn(in, call, args);
  return interp_fail(in, call->span, "%s cannot run here", def->name);
}
