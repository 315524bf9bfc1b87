/* grad.c — the builders gradient rules write their adjoints with
 * (ad/grad.h): typed op calls bound through the pass's GradCx.bind,
 * scalars, attributes, and the broadcast adjustment every binary rule
 * needs; and the rules by registry index (grad_rule).  The rules themselves
 * are in grad_rules*.c. */
#include "ad/grad.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const GradDef *const families[] = {
#define X(f) grad_family_##f,
    GRAD_FAMILIES(X)
#undef X
};

bool grad_rules_index(const GradDef *const *tables, int ntables, const void **out, char *err,
                      size_t cap) {
  const void *t[64];
  RLY_ASSERT(ntables <= 64);
  for (int i = 0; i < ntables; i++) t[i] = tables[i];
  return ops_index_rows("gradient rule", t, ntables, sizeof(GradDef), out, err, cap);
}

static OpsRuleTable table = {"gradient rule", (const void *const *)families,
                             (int)(sizeof families / sizeof families[0]), sizeof(GradDef), NULL};

const OpGrad *grad_rule(int op) {
  const GradDef *d = ops_rule_row(&table, op);
  return d ? d->rule : NULL;
}

bool grad_fail(GradCx *G, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(G->err, sizeof G->err, fmt, ap);
  va_end(ap);
  return false;
}

bool grad_differentiable(const Type *t) {
  if (!t) return false;
  if (t->kind == TY_TENSOR) return dtype_is_float(t->u.tensor.dtype);
  if (t->kind != TY_TUPLE) return false;
  for (int i = 0; i < t->u.tuple.n; i++)
    if (grad_differentiable(t->u.tuple.fields[i])) return true;
  return false;
}

const Type *grad_tensor_of(const Expr *e) {
  return e && e->ty && e->ty->kind == TY_TENSOR ? e->ty : NULL;
}

/* The call's type from its op's relation (the arguments are typed). */
static Type *infer(GradCx *G, const OpDef *def, Expr *call) {
  int n = call->u.call.nargs;
  Type *tys[16];
  const Tensor *vals[16];
  if (n > 16) return grad_fail(G, "%s: too many arguments for a gradient rule", def->name), NULL;
  for (int i = 0; i < n; i++) {
    Expr *x = call->u.call.args[i];
    if (!x->ty) return grad_fail(G, "%s: an argument without a type", def->name), NULL;
    tys[i] = x->ty;
    vals[i] = x->kind == EX_CONST ? x->u.konst.value : NULL;
  }
  RelCtx rc;
  memset(&rc, 0, sizeof rc);
  rc.arena = G->a, rc.call = call, rc.op_name = def->name, rc.op = def;
  Type *t = def->rel(&rc, n, tys, vals, call->u.call.attrs);
  if (!t) grad_fail(G, "%s", rc.err);
  return t;
}

Type *grad_type_call(GradCx *G, Expr *call) {
  return infer(G, ops_get(call->u.call.fn->u.op.index), call);
}

Expr *grad_op(GradCx *G, const char *op, int n, Expr **args, Attrs *attrs) {
  int k = ops_lookup(op);
  RLY_ASSERT(k >= 0); /* rules name registered ops */
  Expr **copy = ARENA_ARRAY(G->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    if (!args[i]) return NULL; /* an operand that failed */
    copy[i] = args[i];
  }
  Expr *c = expr_call(G->a, ops_expr(G->a, k, G->span), n, copy, attrs, G->span);
  c->ty = infer(G, ops_get(k), c);
  return c->ty ? G->bind(G, c) : NULL;
}

Expr *grad_op1(GradCx *G, const char *op, Expr *x, Attrs *attrs) {
  return grad_op(G, op, 1, &x, attrs);
}

Expr *grad_op2(GradCx *G, const char *op, Expr *x, Expr *y) {
  Expr *args[2] = {x, y};
  return grad_op(G, op, 2, args, NULL);
}

Expr *grad_scalar(GradCx *G, DType dt, double v) {
  Expr *c = dtype_is_float(dt) ? expr_scalar_f64(G->a, dt, v, G->span)
                               : expr_scalar_i64(G->a, dt, (int64_t)v, G->span);
  c->ty = type_scalar(G->a, dt);
  return c;
}

Expr *grad_const(GradCx *G, DType dt, int ndim, const int64_t *shape, const double *v) {
  Tensor *t = tensor_new(G->a, dt, ndim, shape);
  Dim dims[TENSOR_MAX_RANK];
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) dims[i] = dim_const(shape[i]), n *= shape[i];
  for (int64_t i = 0; i < n; i++) tensor_set_f64(t, i, v[i]);
  Expr *c = expr_const(G->a, t, G->span);
  c->ty = type_tensor(G->a, dt, ndim, dims, G->span);
  return c;
}

Expr *grad_scalar_like(GradCx *G, const Expr *x, double v) {
  const Type *t = grad_tensor_of(x);
  return grad_scalar(G, t ? t->u.tensor.dtype : DT_FLOAT32, v);
}

static bool same_dims(const Type *a, const Type *b) {
  if (a->u.tensor.ndim != b->u.tensor.ndim) return false;
  for (int i = 0; i < a->u.tensor.ndim; i++) {
    Dim p = a->u.tensor.dims[i], q = b->u.tensor.dims[i];
    if (p.kind != q.kind || p.kind == DIM_ANY || p.kind == DIM_META) return false;
    if (p.kind == DIM_CONST && p.value != q.value) return false;
    if (p.kind == DIM_VAR && strcmp(p.name, q.name) != 0) return false;
  }
  return true;
}

Expr *grad_unbroadcast(GradCx *G, Expr *d, Expr *x) {
  const Type *td = grad_tensor_of(d), *tx = grad_tensor_of(x);
  if (!d || (td && tx && same_dims(td, tx))) return d;
  return grad_op2(G, "collapse_sum_like", d, x);
}

Expr *grad_proj(GradCx *G, Expr *e, int i) {
  if (!e) return NULL;
  if (e->kind == EX_TUPLE) return e->u.tuple.fields[i];
  Expr *p = expr_proj(G->a, e, i, G->span);
  p->ty = e->ty && e->ty->kind == TY_TUPLE ? e->ty->u.tuple.fields[i] : NULL;
  return G->bind(G, p);
}

Expr *grad_tuple(GradCx *G, int n, Expr **fields) {
  Expr **copy = ARENA_ARRAY(G->a, Expr *, n ? n : 1);
  Type **tys = ARENA_ARRAY(G->a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    if (!fields[i]) return NULL;
    copy[i] = fields[i], tys[i] = fields[i]->ty;
  }
  Expr *t = expr_tuple(G->a, n, copy, G->span);
  t->ty = type_tuple(G->a, n, tys, G->span);
  return G->bind(G, t);
}

Attrs *grad_attrs(GradCx *G, int n) { return attrs_new(G->a, n); }

void grad_attr_int(GradCx *G, Attrs *at, int i, const char *key, int64_t v) {
  at->keys[i] = key, at->vals[i] = attr_int(G->a, v, DT_INT32);
}

void grad_attr_bool(GradCx *G, Attrs *at, int i, const char *key, bool v) {
  at->keys[i] = key, at->vals[i] = attr_bool(G->a, v);
}

void grad_attr_float(GradCx *G, Attrs *at, int i, const char *key, double v) {
  at->keys[i] = key, at->vals[i] = attr_float(G->a, v, DT_FLOAT32);
}

void grad_attr_str(GradCx *G, Attrs *at, int i, const char *key, const char *v) {
  at->keys[i] = key, at->vals[i] = attr_str(G->a, v);
}

static AttrValue *int_list(GradCx *G, int n, const int64_t *v) {
  AttrValue *l = ARENA_NEW(G->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(G->a, AttrValue *, n ? n : 1);
  for (int k = 0; k < n; k++) l->u.list.items[k] = attr_int(G->a, v[k], DT_INT32);
  return l;
}

void grad_attr_ints(GradCx *G, Attrs *at, int i, const char *key, int n, const int64_t *v) {
  at->keys[i] = key, at->vals[i] = int_list(G, n, v);
}

void grad_attr_pairs(GradCx *G, Attrs *at, int i, const char *key, int n, int64_t (*v)[2]) {
  AttrValue *l = ARENA_NEW(G->a, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(G->a, AttrValue *, n ? n : 1);
  for (int k = 0; k < n; k++) l->u.list.items[k] = int_list(G, 2, v[k]);
  at->keys[i] = key, at->vals[i] = l;
}
