/* fold_constant.c — FoldConstant (TVM's): a call of an op on constants is
 * evaluated at compile time and replaced by its value.
 *
 * Rules, applied bottom-up so folds cascade (`add(multiply(c1, c2), c3)`
 * folds twice):
 *   fold        an op call whose arguments are all constants (an
 *               OP_TUPLE_ARG op: a tuple of constants) is run by its
 *               reference kernel (kernels/kernels.h, so the value is the
 *               one interp mode computes) and becomes a
 *               constant, or a tuple of constants for a tuple result;
 *   fold-shape  shape_of / ndarray_size of a tensor whose type has a static
 *               shape becomes a constant without evaluating anything;
 *   fold-proj   a projection of a tuple expression gives the field (when
 *               the other fields have no effect), and of a temporary bound
 *               to a tuple, the field when it is an atom;
 *   inline      a let binding a constant (or a tuple of constants) is
 *               dropped and its variable replaced by the constant, so uses
 *               through the graph's temporaries fold too.
 *
 * A call is left alone when its op is effectful or runs a prim function
 * (call_tir: an extern may do anything), when it has no arguments (as TVM:
 * `zeros(shape=[...])` stays a cheap op instead of a constant), when its
 * result is not a static tensor or tuple of them (keys, `?` shapes), when
 * the result is empty (no literal writes it) or would have more than
 * FOLD_MAX_NEW elements and more than its largest argument
 * (`full(0f, shape=[65536, 65536])` stays a call, while elementwise work
 * on a large weight folds), and when the kernel fails (a division by
 * zero stays in the program and fails when it runs). */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "passes/graph_int.h"

/* Elements a folded constant may have when no argument is as large. */
enum { FOLD_MAX_NEW = 1 << 20 };

/* Runs op's reference kernel on borrowed views of the constants (nothing
 * is copied in), exactly as the interpreter runs it; the outputs (one, or
 * a tuple's fields) are copied into a and released.  False with a message
 * in err when it cannot (a run-time error such as an integer division by
 * zero: the call then stays).  Not a run of the program: a profile (the
 * kernels' run hook) does not count it. */
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

/* A constant, or a tuple of such. */
static bool constant_value(const Expr *e) {
  if (e->kind == EX_CONST) return true;
  if (e->kind != EX_TUPLE) return false;
  for (int i = 0; i < e->u.tuple.n; i++)
    if (!constant_value(e->u.tuple.fields[i])) return false;
  return true;
}

/* Elements of a static, non-empty tensor type, or of a tuple of them; -1
 * otherwise (an empty tensor has no literal to print it as). */
static int64_t result_numel(const Type *t) {
  if (!t) return -1;
  if (t->kind == TY_TENSOR) return graph_numel(t) > 0 ? graph_numel(t) : -1;
  if (t->kind != TY_TUPLE) return -1;
  int64_t n = 0;
  for (int i = 0; i < t->u.tuple.n; i++) {
    int64_t k = result_numel(t->u.tuple.fields[i]);
    if (k < 0 || t->u.tuple.fields[i]->kind != TY_TENSOR) return -1;
    n += k;
  }
  return n;
}

/* The call's constant arguments as tensors into *in (the fields of an
 * OP_TUPLE_ARG op's tuple); their count, or -1 when one is not constant. */
static int const_args(Graph *g, const Expr *r, const OpDef *def, Tensor ***in, int64_t *largest) {
  int n = r->u.call.nargs;
  Expr *const *args = r->u.call.args;
  if ((def->flags & OP_TUPLE_ARG) && n == 1 && args[0]->kind == EX_TUPLE)
    n = args[0]->u.tuple.n, args = args[0]->u.tuple.fields;
  *in = ARENA_ARRAY(&g->pc->scratch, Tensor *, n ? n : 1);
  *largest = 0;
  for (int i = 0; i < n; i++) {
    if (args[i]->kind != EX_CONST) return -1;
    (*in)[i] = args[i]->u.konst.value;
    if ((*in)[i]->numel > *largest) *largest = (*in)[i]->numel;
  }
  return n;
}

static bool fits(const Type *t, const Tensor *v) {
  if (t->kind != TY_TENSOR || t->u.tensor.dtype != v->dtype || t->u.tensor.ndim != v->ndim)
    return false;
  for (int i = 0; i < v->ndim; i++)
    if (t->u.tensor.dims[i].value != v->shape[i]) return false;
  return true;
}

/* The evaluated outputs as an expression of type ty (a constant, or a
 * tuple of constants), or NULL when they do not have that type. */
static Expr *as_expr(Graph *g, const Type *ty, int nout, Tensor **out, Span sp) {
  if (ty->kind == TY_TENSOR)
    return nout == 1 && fits(ty, out[0]) ? graph_const(g, out[0], sp) : NULL;
  if (nout != ty->u.tuple.n) return NULL;
  Expr **fields = ARENA_ARRAY(g->a, Expr *, nout ? nout : 1);
  for (int i = 0; i < nout; i++) {
    if (!fits(ty->u.tuple.fields[i], out[i])) return NULL;
    fields[i] = graph_const(g, out[i], sp);
  }
  Expr *t = expr_tuple(g->a, nout, fields, sp);
  t->ty = (Type *)ty;
  return t;
}

/* shape_of / ndarray_size of a non-constant tensor of static shape. */
static Expr *fold_shape(Graph *g, Expr *e, Expr *r, bool size) {
  const Type *x = graph_tensor_of(e->u.call.args[0]);
  const Type *ty = graph_tensor_of(e);
  if (!graph_static(x) || !ty || (!size && x->u.tensor.ndim == 0)) return r;
  if (size && graph_numel(x) < 0) return r; /* a count past int64: left to run time */
  int n = x->u.tensor.ndim;
  int64_t len = n;
  Tensor *t = tensor_new(g->a, ty->u.tensor.dtype, size ? 0 : 1, size ? NULL : &len);
  if (size) tensor_set_i64(t, 0, graph_numel(x));
  for (int i = 0; !size && i < n; i++) tensor_set_i64(t, i, x->u.tensor.dims[i].value);
  Expr *c = graph_const(g, t, r->span);
  graph_report(g, "fold-shape", e, c);
  return c;
}

/* Runs the call on its constant arguments; r when it may not or cannot. */
static Expr *fold_call(Graph *g, Expr *e, Expr *r) {
  if (r->u.call.fn->kind != EX_OP) return r;
  int op = r->u.call.fn->u.op.index;
  const OpDef *def = ops_get(op);
  if (!def || def->effectful || (def->flags & OP_CALL_TIR) || r->u.call.nargs == 0) return r;
  bool size = op == graph_op(GOP_NDARRAY_SIZE);
  if ((size || op == graph_op(GOP_SHAPE_OF)) && r->u.call.args[0]->kind != EX_CONST)
    return fold_shape(g, e, r, size);
  Tensor **in;
  int64_t largest, numel = result_numel(e->ty);
  int nin = const_args(g, r, def, &in, &largest);
  if (nin < 0 || numel < 0) return r;
  if (numel > FOLD_MAX_NEW && numel > largest) return r;
  int maxout = e->ty->kind == TY_TUPLE ? e->ty->u.tuple.n : 1, nout = 0;
  Tensor **out = ARENA_ARRAY(&g->pc->scratch, Tensor *, maxout ? maxout : 1);
  char err[sizeof((KernelCtx *)0)->err];
  if (!eval_op(op, nin, in, r->u.call.attrs, g->a, maxout, &nout, out, err, sizeof err)) return r;
  Expr *c = as_expr(g, e->ty, nout, out, r->span);
  if (!c) return r;
  graph_report(g, "fold", e, c);
  return c;
}

/* (a, b).0 → a, when b has no effect; %t.0 of `%t = (a, b)` → a when a
 * is an atom (the tuple's binding stays for its other uses). */
static Expr *fold_proj(Graph *g, Expr *e, Expr *r) {
  Expr *t = r->u.proj.tuple, *f;
  if (t->kind == EX_TUPLE) {
    if (r->u.proj.index >= t->u.tuple.n || !rw_is_pure(g->pc->in, t)) return r;
    f = t->u.tuple.fields[r->u.proj.index];
  } else {
    t = graph_value(g, t);
    if (t->kind != EX_TUPLE || r->u.proj.index >= t->u.tuple.n) return r;
    f = t->u.tuple.fields[r->u.proj.index];
    if (!rw_is_atom(g->pc->in, f)) return r;
    f = graph_copy(g, f);
  }
  graph_report(g, "fold-proj", e, f);
  return f;
}

static Expr *rule(Graph *g, Expr *e, Expr *r) {
  if (r->kind == EX_CALL) return fold_call(g, e, r);
  if (r->kind == EX_PROJ) return fold_proj(g, e, r);
  return r;
}

/* A binding of a constant: its variable becomes the constant. */
static Expr *subst(Graph *g, GraphLink *l) {
  if (!constant_value(l->value)) return NULL;
  if (l->value == l->orig->u.let.value) /* written so (a fold was reported) */
    graph_report(g, "inline", expr_var(&g->pc->scratch, l->var, l->orig->span), l->value);
  return l->value;
}

static const GraphHooks hooks = {.rule = rule, .subst = subst};

Module *pass_fold_constant(PassCtx *pc, Module *in) { return graph_pass(pc, in, &hooks, NULL); }
