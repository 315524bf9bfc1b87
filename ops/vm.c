/* vm.c — op family "vm": the lowered forms TVM prints after LowerTE,
 * memory planning and the VM passes.
 *
 *   call_lowered(@prim, (%x, %y))           a lowered call: a prim function on
 *                                            new outputs (as call_tir), or a def
 *   memory.alloc_storage(%size, %align)     → Storage
 *   memory.alloc_tensor(%st, %off, %shape, dtype=, assert_shape=, const_shape=)
 *   memory.kill(%x)                         → ()
 *   vm.shape_of(%x)                         → Tensor[(rank), int64]
 *   vm.reshape_tensor(%x, %shape, newshape=[...])
 *   vm.invoke_tvm_op(@prim, (ins...), (outs...))   → (); writes the outputs
 *
 * `Storage` is TVM's `extern type Storage` (std/core.rly); rly knows the
 * name without a definition (type_name_builtin).  These ops run in the
 * evaluator's own code (OP_OWN_RUNNER, interp/vm_ops.c), not as kernels.
 * call_lowered of a def is typed by the checker itself (the def may be
 * polymorphic); the relation here types only a prim callee. */
#include <string.h>

#include "ir/tir.h"
#include "ops/families.h"

static const Span no_span;

static Type *storage_type(RelCtx *cx) { return type_adt(cx->arena, "Storage", 0, NULL, no_span); }

static bool is_storage(const Type *t) {
  return t->kind == TY_ADT && strcmp(t->u.adt.name, "Storage") == 0;
}

static bool int64_scalar(RelCtx *cx, Type **args, int i, const char *what) {
  const Type *t = args[i];
  if (t->kind == TY_TENSOR && t->u.tensor.ndim == 0 && dtype_is_int(t->u.tensor.dtype)) return true;
  rel_fail(cx, "%s: %s must be an integer scalar, got %s", cx->op_name, what, rel_type_str(cx, t));
  return false;
}

/* A shape operand: a 1-d integer tensor; its length, or -1 when unknown. */
static bool shape_arg(RelCtx *cx, Type **args, int i, Dim *len) {
  const Type *t = args[i];
  if (t->kind == TY_TENSOR && t->u.tensor.ndim == 1 && dtype_is_int(t->u.tensor.dtype)) {
    *len = t->u.tensor.dims[0];
    return true;
  }
  rel_fail(cx, "%s: the shape must be a 1-d integer tensor, got %s", cx->op_name,
           rel_type_str(cx, t));
  return false;
}

/* A list of sizes where `?` is an unknown size; -1 when absent or None. */
static int dims_attr(RelCtx *cx, const Attrs *attrs, const char *key, Dim *out) {
  const AttrValue *v = attrs_get(attrs, key);
  if (!v || v->kind == AV_NONE) return -1;
  if (v->kind != AV_LIST || v->u.list.n > TENSOR_MAX_RANK)
    return rel_fail(cx, "%s: `%s` must be a list of at most %d sizes", cx->op_name, key,
                    TENSOR_MAX_RANK),
           -2;
  for (int i = 0; i < v->u.list.n; i++) {
    const AttrValue *it = v->u.list.items[i];
    if (it->kind == AV_SYM && strcmp(it->u.s, "?") == 0)
      out[i] = dim_any();
    else if (it->kind == AV_SYM)
      out[i] = (Dim){DIM_VAR, 0, it->u.s};
    else if (it->kind == AV_INT && it->u.i >= 0)
      out[i] = dim_const(it->u.i);
    else
      return rel_fail(cx, "%s: `%s` must be a list of sizes", cx->op_name, key), -2;
  }
  return v->u.list.n;
}

static Type *rel_alloc_storage(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  (void)nargs, (void)values;
  if (!int64_scalar(cx, args, 0, "the size") || !int64_scalar(cx, args, 1, "the alignment"))
    return NULL;
  rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32);
  return cx->err[0] ? NULL : storage_type(cx);
}

/* The result's shape: `assert_shape`, else the shape operand's value when
 * it is a constant, else `?` dims of the operand's length. */
static Type *rel_alloc_tensor(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  (void)nargs;
  if (!is_storage(args[0]))
    return rel_fail(cx, "memory.alloc_tensor: argument 1 must be a Storage, got %s",
                    rel_type_str(cx, args[0]));
  Dim len, dims[TENSOR_MAX_RANK];
  if (!int64_scalar(cx, args, 1, "the offset") || !shape_arg(cx, args, 2, &len)) return NULL;
  DType dt = rel_attr_dtype(cx, attrs, "dtype", DT_FLOAT32);
  int n = dims_attr(cx, attrs, "assert_shape", dims);
  if (cx->err[0]) return NULL;
  const Tensor *v = values ? values[2] : NULL;
  if (n < 0 && v && v->ndim == 1 && v->numel <= TENSOR_MAX_RANK) {
    n = (int)v->numel;
    for (int i = 0; i < n; i++) {
      int64_t d = tensor_get_i64(v, i);
      if (d < 0) return rel_fail(cx, "memory.alloc_tensor: negative size %lld", (long long)d);
      dims[i] = dim_const(d);
    }
  } else if (n < 0) {
    if (len.kind != DIM_CONST || len.value > TENSOR_MAX_RANK)
      return rel_fail(cx, "memory.alloc_tensor: the rank is not known (give assert_shape)");
    n = (int)len.value;
    for (int i = 0; i < n; i++) dims[i] = dim_any();
  }
  return type_tensor(cx->arena, dt, n, dims, no_span);
}

static Type *rel_kill(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                      const Attrs *attrs) {
  (void)nargs, (void)args, (void)values, (void)attrs;
  return type_unit(cx->arena);
}

static Type *rel_shape_of(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  (void)nargs, (void)values;
  const Type *t = rel_tensor(cx, args, 0);
  DType dt = t ? rel_attr_dtype(cx, attrs, "dtype", DT_INT64) : DT_INVALID;
  if (cx->err[0]) return NULL;
  Dim n = dim_const(t->u.tensor.ndim);
  return type_tensor(cx->arena, dt, 1, &n, no_span);
}

static Type *rel_reshape_tensor(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                                const Attrs *attrs) {
  (void)nargs, (void)values;
  const Type *t = rel_tensor(cx, args, 0);
  Dim len, dims[TENSOR_MAX_RANK];
  if (!t || !shape_arg(cx, args, 1, &len)) return NULL;
  int n = dims_attr(cx, attrs, "newshape", dims);
  if (n == -1) return rel_fail(cx, "vm.reshape_tensor: missing attribute `newshape`");
  if (n < 0) return NULL;
  if (len.kind == DIM_CONST && len.value != n)
    return rel_fail(cx, "vm.reshape_tensor: newshape has %d dims but the shape operand %lld", n,
                    (long long)len.value);
  return type_tensor(cx->arena, t->u.tensor.dtype, n, dims, no_span);
}

static bool tensor_tuple(RelCtx *cx, const Type *t, const char *what) {
  bool ok = t->kind == TY_TUPLE;
  for (int i = 0; ok && i < t->u.tuple.n; i++) ok = t->u.tuple.fields[i]->kind == TY_TENSOR;
  if (!ok)
    rel_fail(cx, "%s: the %s must be a tuple of tensors, got %s", cx->op_name, what,
             rel_type_str(cx, t));
  return ok;
}

static Type *rel_invoke_tvm_op(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                               const Attrs *attrs) {
  (void)nargs, (void)values, (void)attrs;
  if (!tensor_tuple(cx, args[1], "inputs") || !tensor_tuple(cx, args[2], "outputs")) return NULL;
  return type_unit(cx->arena);
}

/* ── call_lowered of a prim function ── */

typedef struct Sizes {
  int n;
  const char *names[64];
  Dim dims[64];
} Sizes;

static bool bind(RelCtx *cx, Sizes *s, Dim pd, Dim ad) {
  if (pd.kind != DIM_VAR) return rel_unify_dim(cx, pd, ad);
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->names[i], pd.name) == 0) return rel_unify_dim(cx, s->dims[i], ad);
  if (s->n == 64) return false;
  s->names[s->n] = pd.name, s->dims[s->n++] = ad;
  return true;
}

static Dim lookup(const Sizes *s, Dim pd) {
  if (pd.kind != DIM_VAR) return pd;
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->names[i], pd.name) == 0) return s->dims[i];
  return dim_any();
}

/* The outputs of @p (its parameters after the inputs), with @p's size
 * variables bound by the input types. */
static Type *prim_outputs(RelCtx *cx, const PrimFunc *p, const Type *in) {
  int nin = in->u.tuple.n, nout = p->nparams - nin;
  if (nout < 1)
    return rel_fail(cx, "call_lowered: @%s takes %d buffers, but %d inputs were given", p->name,
                    p->nparams, nin);
  Sizes s = {0};
  for (int i = 0; i < nin; i++) {
    const Buffer *b = p->params[i];
    const Type *t = in->u.tuple.fields[i];
    bool ok = b->dtype == t->u.tensor.dtype && b->ndim == t->u.tensor.ndim;
    for (int d = 0; ok && d < b->ndim; d++) ok = bind(cx, &s, b->dims[d], t->u.tensor.dims[d]);
    if (!ok)
      return rel_fail(cx, "call_lowered: input %d is %s but @%s's parameter %%%s is Buffer[%s, %s]",
                      i + 1, rel_type_str(cx, t), p->name, b->name,
                      rel_shape_str(cx, b->ndim, b->dims), dtype_name(b->dtype));
  }
  Type **outs = ARENA_ARRAY(cx->arena, Type *, nout);
  for (int k = 0; k < nout; k++) {
    const Buffer *b = p->params[nin + k];
    Dim *dims = ARENA_ARRAY(cx->arena, Dim, b->ndim ? b->ndim : 1);
    for (int d = 0; d < b->ndim; d++) dims[d] = lookup(&s, b->dims[d]);
    outs[k] = type_tensor(cx->arena, b->dtype, b->ndim, dims, no_span);
  }
  return nout == 1 ? outs[0] : type_tuple(cx->arena, nout, outs, no_span);
}

static Type *rel_call_lowered(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                              const Attrs *attrs) {
  (void)nargs, (void)values, (void)attrs;
  if (!tensor_tuple(cx, args[1], "arguments")) return NULL;
  const Expr *g = cx->call && cx->call->kind == EX_CALL ? cx->call->u.call.args[0] : NULL;
  const PrimFunc *p =
      g && g->kind == EX_GLOBAL && cx->mod ? module_prim(cx->mod, g->u.global.name) : NULL;
  if (!p) return rel_fail(cx, "call_lowered: the callee must be a function @name");
  return prim_outputs(cx, p, args[1]);
}

static const OpAttrSpec no_attrs[] = {{0}};
static const OpAttrSpec alloc_storage_attrs[] = {
    {"virtual_device", AV_EXPR, "None"}, {"dtype", AV_STR, "\"float32\""}, {0}};
static const OpAttrSpec alloc_tensor_attrs[] = {{"const_shape", AV_EXPR, "None"},
                                                {"assert_shape", AV_EXPR, "None"},
                                                {"dtype", AV_STR, "\"float32\""},
                                                {0}};
static const OpAttrSpec shape_of_attrs[] = {{"dtype", AV_STR, "\"int64\""}, {0}};
static const OpAttrSpec reshape_tensor_attrs[] = {{"newshape", AV_EXPR, NULL}, {0}};
static const OpAttrSpec call_lowered_attrs[] = {{"metadata", AV_EXPR, "None"}, {0}};

const OpDef ops_family_vm[] = {
    {"call_lowered", 2, 2, OPAT_OPAQUE, call_lowered_attrs, rel_call_lowered,
     "a lowered call of a prim function (as call_tir) or a def", false,
     .flags = OP_OWN_RUNNER | OP_CALL_LOWERED, .args = "f, (args...)",
     .rule = "the prim function's output buffers' types (a tuple for several); args is a tuple of "
             "its inputs",
     .example =
         "def @twice(%x: Tensor[(2), float32]) { %x * 2f }\ncall_lowered(@twice, ([1f, 2f],))"},
    {"memory.alloc_storage", 2, 2, OPAT_OPAQUE, alloc_storage_attrs, rel_alloc_storage,
     "a block of memory (Storage)", false, .flags = OP_OWN_RUNNER, .args = "size, alignment",
     .rule = "a storage; size and alignment are int64 scalars",
     .example = "memory.alloc_storage(16i64, 64i64, dtype=\"uint8\")"},
    {"memory.alloc_tensor", 3, 3, OPAT_OPAQUE, alloc_tensor_attrs, rel_alloc_tensor,
     "a tensor in a Storage", false, .flags = OP_OWN_RUNNER, .args = "storage, offset, shape",
     .rule = "`dtype` (float32 default), shape assert_shape, else the shape argument's value, else "
             "unknown dims of its length",
     .example =
         "memory.alloc_tensor(memory.alloc_storage(16i64, 64i64), 0i64, [4i64], assert_shape=[4])"},
    {"memory.kill", 1, 1, OPAT_OPAQUE, no_attrs, rel_kill, "end of x's lifetime; returns ()", false,
     .flags = OP_OWN_RUNNER, .args = "x", .rule = "unit (the empty tuple)",
     .example = "memory.kill([1f])"},
    {"vm.shape_of", 1, 1, OPAT_OPAQUE, shape_of_attrs, rel_shape_of, "x's shape as a 1-d tensor",
     false, .flags = OP_OWN_RUNNER, .args = "x",
     .rule = "1-D of x's rank in `dtype` (int64 default)",
     .example = "vm.shape_of(ones(shape=[2, 3]))"},
    {"vm.reshape_tensor", 2, 2, OPAT_OPAQUE, reshape_tensor_attrs, rel_reshape_tensor,
     "x with the shape given at run time", false, .flags = OP_OWN_RUNNER, .args = "x, shape",
     .rule = "x's dtype, shape `newshape`; the shape argument has newshape's length",
     .example = "vm.reshape_tensor([1f, 2f, 3f, 4f], [2i64, 2i64], newshape=[2, 2])"},
    {"vm.invoke_tvm_op", 3, 3, OPAT_OPAQUE, no_attrs, rel_invoke_tvm_op,
     "runs a prim function into outs; returns ()", false, .flags = OP_OWN_RUNNER,
     .args = "prim, (inputs...), (outputs...)",
     .rule = "unit (the empty tuple): outputs are written in place",
     .example = "prim @dbl_into(%X: Buffer[(2), float32], %Y: Buffer[(2), float32]) { for %i in "
                "range(0, 2) { %Y[%i] = %X[%i] * 2f; } }\nvm.invoke_tvm_op(@dbl_into, ([1f, 2f],), "
                "(zeros(shape=[2]),))"},
    {0},
};
