/* onnx_build.c — the importer's builder (onnx_int.h): Relay op calls by
 * registry name, typed by the op's relation as they are built, folded when
 * their arguments are constants, bound to graph variables otherwise; and
 * the helpers converters read values and attributes with.
 *
 * Folding runs the op's reference kernel (kernels/kernels.h) on the
 * constants, exactly as the interpreter would at run time, so a folded
 * Shape→Gather→Concat chain gives the values the unfolded one would.  Only
 * calls whose arguments are all constants fold: an initializer that is a
 * parameter stays one (its value is known, but the function must still
 * take it). */
#include <math.h>
#include <string.h>

#include "frontend/onnx_int.h"

static const Span no_span;

/* ───────────────────────── attributes of calls ───────────────────────── */

AttrB ab_new(OnnxCx *cx) {
  AttrB b;
  memset(&b, 0, sizeof b);
  b.a = cx->a;
  return b;
}

static void ab_put(AttrB *b, const char *key, AttrValue *v) {
  RLY_ASSERT(b->n < FE_MAX_ATTRS);
  b->keys[b->n] = key, b->vals[b->n++] = v;
}

void ab_int(AttrB *b, const char *key, int64_t v) { ab_put(b, key, attr_int(b->a, v, DT_INT32)); }

void ab_ints(AttrB *b, const char *key, int n, const int64_t *v) {
  AttrValue *l = ARENA_NEW(b->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(b->a, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) l->u.list.items[i] = attr_int(b->a, v[i], DT_INT32);
  ab_put(b, key, l);
}

void ab_float(AttrB *b, const char *key, double v) {
  ab_put(b, key, attr_float(b->a, (double)(float)v, DT_FLOAT32));
}
void ab_bool(AttrB *b, const char *key, bool v) { ab_put(b, key, attr_bool(b->a, v)); }
void ab_str(AttrB *b, const char *key, const char *v) {
  ab_put(b, key, attr_str(b->a, arena_strdup(b->a, v)));
}

Attrs *ab_done(AttrB *b) {
  Attrs *at = attrs_new(b->a, b->n);
  for (int i = 0; i < b->n; i++) at->keys[i] = b->keys[i], at->vals[i] = b->vals[i];
  return at;
}

/* ───────────────────────── values ───────────────────────── */

static Type *type_of_tensor(Arena *a, const Tensor *t) {
  Dim *dims = ARENA_ARRAY(a, Dim, t->ndim ? t->ndim : 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = dim_const(t->shape[i]);
  return type_tensor(a, t->dtype, t->ndim, dims, no_span);
}

FeVal *fe_const(OnnxCx *cx, Tensor *t) {
  FeVal *v = ARENA_NEW(cx->a, FeVal);
  v->expr = expr_const(cx->a, t, no_span);
  v->ty = type_of_tensor(cx->a, t);
  v->value = t;
  return v;
}

FeVal *fe_scalar(OnnxCx *cx, DType dt, double x) {
  Tensor *t = tensor_new(cx->a, dt, 0, NULL);
  tensor_set_f64(t, 0, x);
  return fe_const(cx, t);
}

FeVal *fe_ints(OnnxCx *cx, DType dt, int n, const int64_t *v) {
  int64_t shape[1] = {n};
  Tensor *t = tensor_new(cx->a, dt, 1, shape);
  for (int i = 0; i < n; i++) tensor_set_i64(t, i, v[i]);
  return fe_const(cx, t);
}

const Type *fe_tensor_type(const FeVal *v) {
  return v && v->ty && v->ty->kind == TY_TENSOR ? v->ty : NULL;
}
int fe_rank(const FeVal *v) { return fe_tensor_type(v) ? v->ty->u.tensor.ndim : -1; }
DType fe_dtype(const FeVal *v) { return fe_tensor_type(v) ? v->ty->u.tensor.dtype : DT_INVALID; }
Dim fe_dim(const FeVal *v, int i) { return v->ty->u.tensor.dims[i]; }

bool fe_static_shape(const FeVal *v, int64_t *out) {
  if (!fe_tensor_type(v)) return false;
  for (int i = 0; i < v->ty->u.tensor.ndim; i++) {
    Dim d = v->ty->u.tensor.dims[i];
    if (d.kind != DIM_CONST) return false;
    out[i] = d.value;
  }
  return true;
}

int fe_need_ints(OnnxCx *cx, const FeVal *v, const char *what, int64_t *out, int max) {
  if (!v || !v->value)
    return fe_fail(cx, "%s must be known at import time (a constant or an initializer)", what), -1;
  const Tensor *t = v->value;
  if (!dtype_is_int(t->dtype))
    return fe_fail(cx, "%s must be an integer tensor, got %s", what, dtype_name(t->dtype)), -1;
  if (t->numel > max)
    return fe_fail(cx, "%s has %lld values (at most %d)", what, (long long)t->numel, max), -1;
  for (int64_t i = 0; i < t->numel; i++) out[i] = tensor_get_i64(t, i);
  return (int)t->numel;
}

bool fe_need_scalar(OnnxCx *cx, const FeVal *v, const char *what, double *out) {
  if (!v || !v->value)
    return fe_fail(cx, "%s must be known at import time (a constant or an initializer)", what);
  if (v->value->numel != 1)
    return fe_fail(cx, "%s must hold one value, got %lld", what, (long long)v->value->numel);
  *out = tensor_get_f64(v->value, 0);
  return true;
}

int fe_axis(OnnxCx *cx, int64_t axis, int rank, const char *what) {
  if (axis < -(int64_t)rank || axis >= rank)
    return fe_fail(cx, "%s %lld is out of range for rank %d", what, (long long)axis, rank), -1;
  return (int)(axis < 0 ? axis + rank : axis);
}

FeVal *fe_cast(OnnxCx *cx, FeVal *v, DType dt) {
  if (fe_dtype(v) == dt) return v;
  AttrB b = ab_new(cx);
  ab_str(&b, "dtype", dtype_name(dt));
  return FE_OP(cx, "cast", ab_done(&b), v);
}

/* ───────────────────────── calls ───────────────────────── */

/* Binds value to var (NULL: a fresh graph variable) in the body's let
 * chain; the variable. */
FeVal *fe_bind(OnnxCx *cx, Var *var, Expr *value, Type *ty) {
  if (!var) {
    var = var_new(cx->a, "t", NULL, no_span);
    var->is_graph = true;
  }
  vec_push(&cx->let_vars, var);
  vec_push(&cx->let_vals, value);
  FeVal *v = ARENA_NEW(cx->a, FeVal);
  v->expr = expr_var(cx->a, var, no_span);
  v->ty = ty;
  return v;
}

static bool all_const(int n, FeVal *const *args) {
  for (int i = 0; i < n; i++)
    if (args[i]->expr->kind != EX_CONST) return false;
  return true;
}

/* Runs the op's kernel on constant arguments: the constant result (a
 * tuple's fields through a FoldedTuple), or NULL after fe_fail. */
static FeVal *fold(OnnxCx *cx, int op, int n, FeVal *const *args, Attrs *attrs, Type *ty) {
  RtTensor *in[TENSOR_MAX_RANK * 2] = {0}, *out[16] = {0};
  char err[RT_ERR_LEN] = "";
  int nin = 0, nout = 0;
  bool ok = n <= TENSOR_MAX_RANK * 2;
  for (; ok && nin < n; nin++)
    ok = (in[nin] = rt_tensor_borrow_ir(args[nin]->value, err, sizeof err));
  cx->kx.err[0] = 0;
  ok = ok && kernels_infer_and_run(&cx->kx, op, n, in, attrs, 16, &nout, out);
  for (int i = 0; i < nin; i++) rt_tensor_release(in[i]);
  if (!ok)
    return FE_FAIL_NULL(cx, "evaluating %s at import time failed: %s", ops_get(op)->name,
                        cx->kx.err[0] ? cx->kx.err : err);
  FeVal *res;
  if (ty->kind == TY_TUPLE) {
    res = ARENA_NEW(cx->a, FeVal);
    res->ty = ty;
    res->fields = ARENA_ARRAY(cx->a, FeVal *, nout);
    for (int i = 0; i < nout; i++) res->fields[i] = fe_const(cx, rt_tensor_to_ir(cx->a, out[i]));
  } else {
    res = fe_const(cx, rt_tensor_to_ir(cx->a, out[0]));
  }
  for (int i = 0; i < nout; i++) rt_tensor_release(out[i]);
  return res;
}

FeVal *fe_get(OnnxCx *cx, FeVal *tuple, int i) {
  RLY_ASSERT(tuple->ty->kind == TY_TUPLE && i < tuple->ty->u.tuple.n);
  if (tuple->fields) return tuple->fields[i];
  return fe_bind(cx, NULL, expr_proj(cx->a, tuple->expr, i, no_span), tuple->ty->u.tuple.fields[i]);
}

/* The call's type from the op's relation on the arguments' types (and
 * the values of constant arguments, as the type checker passes them). */
static Type *infer(OnnxCx *cx, const OpDef *def, int n, Type **tys, const Tensor **vals,
                   Attrs *attrs) {
  RelCtx rc;
  memset(&rc, 0, sizeof rc);
  rc.arena = cx->a, rc.op_name = def->name, rc.op = def;
  Type *ty = def->rel(&rc, n, tys, vals, attrs);
  if (!ty) fe_fail(cx, "%s", rc.err[0] ? rc.err : "ill-typed call");
  return ty;
}

/* Whether an attribute's value is written as the op's default (so the
 * call need not carry it: TVM prints only the attributes that differ). */
static bool is_default(const OpDef *def, const char *key, const AttrValue *v) {
  for (const OpAttrSpec *s = def->attrs; s && s->name; s++) {
    if (strcmp(s->name, key) != 0) continue;
    if (!s->def) return false;
    StrBuf b = {0};
    print_attr_value_to(&b, v);
    bool same = b.data && strcmp(b.data, s->def) == 0;
    sb_free(&b);
    return same;
  }
  return false;
}

/* attrs without the entries equal to their defaults (NULL when none is left). */
static Attrs *drop_defaults(OnnxCx *cx, const OpDef *def, Attrs *attrs) {
  if (!attrs) return NULL;
  int k = 0;
  for (int i = 0; i < attrs->n; i++)
    if (!is_default(def, attrs->keys[i], attrs->vals[i])) k++;
  if (k == attrs->n) return attrs;
  if (k == 0) return NULL;
  Attrs *out = attrs_new(cx->a, k);
  k = 0;
  for (int i = 0; i < attrs->n; i++)
    if (!is_default(def, attrs->keys[i], attrs->vals[i]))
      out->keys[k] = attrs->keys[i], out->vals[k++] = attrs->vals[i];
  return out;
}

/* See onnx_int.h.  The call is checked as the type checker would check it
 * (attributes against the row, the relation on the argument types), so a
 * converter learns its result shape at once and a bad model fails here,
 * at its node, rather than later in the type checker. */
FeVal *fe_op(OnnxCx *cx, const char *op, int n, FeVal *const *args, Attrs *attrs) {
  if (cx->failed) return NULL;
  for (int i = 0; i < n; i++)
    if (!args[i]) return FE_FAIL_NULL(cx, "internal: a missing argument of %s", op);
  RLY_ASSERT(onnx_row_allows(cx->row, op)); /* the row lists every op its converter emits */
  int idx = ops_lookup(op);
  if (idx < 0) return FE_FAIL_NULL(cx, "the Relay op `%s` is not in this build's registry", op);
  const OpDef *def = ops_get(idx);
  attrs = drop_defaults(cx, def, attrs);
  Span where;
  const char *bad = ops_check_attrs(cx->a, def, attrs, &where);
  if (bad) return FE_FAIL_NULL(cx, "internal: %s", bad);
  bool tuple_arg = def->flags & OP_TUPLE_ARG;
  Type **tys = ARENA_ARRAY(cx->a, Type *, n + 1);
  const Tensor **vals = ARENA_ARRAY(cx->a, const Tensor *, n + 1);
  Expr **exprs = ARENA_ARRAY(cx->a, Expr *, n + 1);
  for (int i = 0; i < n; i++) {
    tys[i] = args[i]->ty, exprs[i] = args[i]->expr;
    vals[i] = args[i]->expr->kind == EX_CONST ? args[i]->value : NULL;
  }
  int nargs = tuple_arg ? 1 : n;
  if (tuple_arg) {
    tys[0] = type_tuple(cx->a, n, tys, no_span);
    exprs[0] = expr_tuple(cx->a, n, exprs, no_span);
    vals[0] = NULL;
  }
  Type *ty = infer(cx, def, nargs, tys, vals, attrs);
  if (!ty) return NULL;
  if (!def->effectful && all_const(n, args)) return fold(cx, idx, n, args, attrs, ty);
  Expr *call = expr_call(cx->a, ops_expr(cx->a, idx, no_span), nargs, exprs, attrs, no_span);
  return fe_bind(cx, NULL, call, ty);
}
