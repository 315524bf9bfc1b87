/* tir_call.c — op family "tir_call": call_tir (text-format.md B.6).
 *
 *   call_tir(@prim, (%a, %b), shape=[n, 128], dtype="float32")
 *   call_tir("env.linear", (%a, %b), shape=[1, 10], dtype="float32")
 *     → args [EX_TUPLE] with attribute callee="env.linear"
 *
 * The result is Tensor[shape, dtype]; `shape` may name size variables of
 * the enclosing function.  Several outputs: shape=[[1, 128], [1]] with
 * dtype a string for all or a list of strings, giving a tuple.
 *
 * For a prim callee, when the module and the call are known (compile
 * time), the inputs are checked against the prim's buffer parameters (all
 * but the last nout are inputs; destination passing): count, dtype, rank
 * and dims.  The prim's size variables bind to the caller's dims on first
 * use and must agree afterwards; outputs are checked against `shape`.
 * call_tir is pure (opaque to fusion). */
#include <string.h>

#include "ir/tir.h"
#include "ops/families.h"

static const Span no_span;

enum { MAX_OUTS = 64 };

typedef struct Outs {
  int n;
  bool tuple; /* several shapes were given (even one in a nested list) */
  Type *ty[MAX_OUTS];
} Outs;

static bool dims_of(RelCtx *cx, const AttrValue *v, Dim *dims, int *n) {
  *n = v->u.list.n;
  if (*n > TENSOR_MAX_RANK)
    return rel_fail(cx, "call_tir: a shape has more than %d dims", TENSOR_MAX_RANK), false;
  for (int i = 0; i < *n; i++) {
    const AttrValue *it = v->u.list.items[i];
    if (it->kind == AV_SYM)
      dims[i] = (Dim){DIM_VAR, 0, it->u.s};
    else if (it->kind == AV_INT && it->u.i >= 0)
      dims[i] = dim_const(it->u.i);
    else
      return rel_fail(cx, "call_tir: `shape` entries must be sizes or size variables"), false;
  }
  return true;
}

static DType out_dtype(RelCtx *cx, const AttrValue *dt, int i, int n) {
  if (!dt) return rel_attr_dtype(cx, NULL, "dtype", DT_INVALID); /* the row's default */
  if (dt->kind == AV_LIST && dt->u.list.n != n)
    return rel_fail(cx, "call_tir: %d dtypes for %d outputs", dt->u.list.n, n), DT_INVALID;
  const AttrValue *v = dt->kind == AV_LIST ? dt->u.list.items[i] : dt;
  if (v->kind != AV_STR)
    return rel_fail(cx, "call_tir: `dtype` must be a string or a list of strings"), DT_INVALID;
  DType t = dtype_from_name(v->u.s, strlen(v->u.s));
  if (t == DT_INVALID) rel_fail(cx, "call_tir: unknown dtype `%s`", v->u.s);
  return t;
}

/* The output types from `shape` and `dtype`. */
static bool outputs(RelCtx *cx, const Attrs *attrs, Outs *o) {
  const AttrValue *sh = attrs_get(attrs, "shape"), *dt = attrs_get(attrs, "dtype");
  if (!sh) return rel_fail(cx, "call_tir: missing attribute `shape`"), false;
  if (sh->kind != AV_LIST) return rel_fail(cx, "call_tir: `shape` must be a list"), false;
  o->tuple = sh->u.list.n > 0 && sh->u.list.items[0]->kind == AV_LIST;
  o->n = o->tuple ? sh->u.list.n : 1;
  if (o->n > MAX_OUTS) return rel_fail(cx, "call_tir: more than %d outputs", MAX_OUTS), false;
  for (int i = 0; i < o->n; i++) {
    const AttrValue *s = o->tuple ? sh->u.list.items[i] : sh;
    Dim dims[TENSOR_MAX_RANK];
    int nd;
    if (s->kind != AV_LIST)
      return rel_fail(cx, "call_tir: `shape` must be a shape or a list of shapes"), false;
    DType t = dims_of(cx, s, dims, &nd) ? out_dtype(cx, dt, i, o->n) : DT_INVALID;
    if (t == DT_INVALID) return false;
    o->ty[i] = type_tensor(cx->arena, t, nd, dims, no_span);
  }
  return true;
}

/* ───────────────────── checking against a prim function ───────────────────── */

typedef struct Binding {
  int n;
  const char **names; /* the prim's size variables */
  Dim *dims;          /* their values in the caller */
} Binding;

static const char *buffer_str(RelCtx *cx, const Buffer *b) {
  return arena_printf(cx->arena, "%%%s: Buffer[%s, %s]", b->name,
                      rel_shape_str(cx, b->ndim, b->dims), dtype_name(b->dtype));
}

/* Binds or checks one prim dim against the caller's dim. */
static bool bind_dim(RelCtx *cx, Binding *bd, Dim pd, Dim ad) {
  if (pd.kind != DIM_VAR) return rel_unify_dim(cx, pd, ad);
  for (int i = 0; i < bd->n; i++) {
    if (strcmp(bd->names[i], pd.name) != 0) continue;
    if (!rel_unify_dim(cx, bd->dims[i], ad)) return false;
    if (bd->dims[i].kind == DIM_ANY) bd->dims[i] = ad; /* learn the more precise dim */
    return true;
  }
  bd->names[bd->n] = pd.name, bd->dims[bd->n++] = ad;
  return true;
}

static bool match_buffer(RelCtx *cx, Binding *bd, const char *prim, const Buffer *b, const Type *t,
                         bool is_out, int index) {
  bool ok = b->dtype == t->u.tensor.dtype && b->ndim == t->u.tensor.ndim;
  for (int i = 0; ok && i < b->ndim; i++) ok = bind_dim(cx, bd, b->dims[i], t->u.tensor.dims[i]);
  if (ok) return true;
  const char *mine = rel_type_str(cx, t);
  if (is_out)
    rel_fail(cx, "call_tir: output %d is %s but @%s's output parameter is %s", index + 1, mine,
             prim, buffer_str(cx, b));
  else
    rel_fail(cx, "call_tir: input %d is %s but @%s's parameter is %s", index + 1, mine, prim,
             buffer_str(cx, b));
  return false;
}

static bool check_prim(RelCtx *cx, const PrimFunc *p, const Type *in, const Outs *o) {
  int nin = in->u.tuple.n, total = 0;
  if (p->nparams != nin + o->n)
    return rel_fail(cx, "call_tir: @%s takes %d inputs and %d output%s, but %d input%s given",
                    p->name, p->nparams - o->n, o->n, o->n == 1 ? "" : "s", nin,
                    nin == 1 ? " was" : "s were"),
           false;
  for (int i = 0; i < p->nparams; i++) total += p->params[i]->ndim;
  Binding bd = {0, ARENA_ARRAY(cx->arena, const char *, total + 1),
                ARENA_ARRAY(cx->arena, Dim, total + 1)};
  for (int i = 0; i < nin; i++)
    if (!match_buffer(cx, &bd, p->name, p->params[i], in->u.tuple.fields[i], false, i))
      return false;
  for (int i = 0; i < o->n; i++)
    if (!match_buffer(cx, &bd, p->name, p->params[nin + i], o->ty[i], true, i)) return false;
  return true;
}

/* The prim function named by the call's first argument, when known. */
static const PrimFunc *callee_prim(RelCtx *cx, bool *failed) {
  *failed = false;
  if (!cx->mod || !cx->call || cx->call->kind != EX_CALL || cx->call->u.call.nargs < 1) return NULL;
  const Expr *g = cx->call->u.call.args[0];
  if (g->kind != EX_GLOBAL) {
    *failed = true;
    rel_fail(cx, "call_tir: the callee must be a prim function @name or a string");
    return NULL;
  }
  const PrimFunc *p = module_prim(cx->mod, g->u.global.name);
  if (!p) *failed = true, rel_fail(cx, "call_tir: @%s is not a prim function", g->u.global.name);
  return p;
}

static Type *rel_call_tir(RelCtx *cx, int nargs, Type **args, const Tensor **values,
                          const Attrs *attrs) {
  const char *callee = rel_attr_str(cx, attrs, "callee");
  if (cx->err[0]) return NULL;
  if (nargs != (callee[0] ? 1 : 2))
    return callee[0]
               ? rel_fail(cx,
                          "call_tir: with callee=\"%s\", the only argument is the tuple of inputs",
                          callee)
               : rel_fail(cx, "call_tir: expects a prim function and a tuple of inputs");
  const Type *in = args[nargs - 1];
  if (in->kind != TY_TUPLE)
    return rel_fail(cx, "call_tir: the inputs must be a tuple, got %s", rel_type_str(cx, in));
  for (int i = 0; i < in->u.tuple.n; i++)
    if (in->u.tuple.fields[i]->kind != TY_TENSOR)
      return rel_fail(cx, "call_tir: input %d must be a tensor, got %s", i + 1,
                      rel_type_str(cx, in->u.tuple.fields[i]));
  Outs o;
  if (!outputs(cx, attrs, &o)) return NULL;
  bool failed = false;
  const PrimFunc *p = callee[0] ? NULL : callee_prim(cx, &failed);
  if (failed || (p && !check_prim(cx, p, in, &o))) return NULL;
  return o.tuple ? type_tuple(cx->arena, o.n, o.ty, no_span) : o.ty[0];
}

static const OpAttrSpec call_tir_attrs[] = {
    {"callee", AV_STR, "\"\""}, {"shape", AV_EXPR, NULL}, {"dtype", AV_EXPR, "\"float32\""}, {0}};

const OpDef ops_family_tir_call[] = {
    {"call_tir", 1, 2, OPAT_OPAQUE, call_tir_attrs, rel_call_tir,
     "run a prim function on new outputs", false, .flags = OP_CALL_TIR,
     .args = "prim_or_name, (inputs...)",
     .rule = "tensors of the `shape` and `dtype` attributes (a list of shapes: a tuple); the "
             "inputs are a tuple of tensors",
     .example =
         "prim @dbl(%X: Buffer[(2), float32], %Y: Buffer[(2), float32]) { for %i in range(0, 2) { "
         "%Y[%i] = %X[%i] * 2f; } }\ncall_tir(@dbl, ([1f, 2f],), shape=[2], dtype=\"float32\")"},
    {0},
};
