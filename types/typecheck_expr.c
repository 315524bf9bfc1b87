/* typecheck_expr.c — typing of expressions: one dispatch switch over the
 * expression kinds plus a helper per kind.
 *
 * ty_check fills e->ty (possibly with metavariables; ty_finalize_expr
 * substitutes them at the end) and returns it.  The one node left untyped
 * is the EX_OP callee of an op call: ops are not values (the call is typed).  After a user error
 * the node gets the error type, which unifies with anything, so one mistake gives one message.  Let
 * chains are walked with a loop; only expression nesting recurses. */
#include <stdlib.h>
#include <string.h>

#include "types/typecheck_int.h"

static Type *bool_scalar(TyCtx *c) {
  if (!c->scalar[DT_BOOL]) c->scalar[DT_BOOL] = type_scalar(c->a, DT_BOOL);
  return c->scalar[DT_BOOL];
}

static const char *plural(int n, const char *word) {
  return n == 1 ? word : (strcmp(word, "argument") == 0 ? "arguments" : "fields");
}

/* ── variables and globals ── */

static Type *var_type(TyCtx *c, Var *v) {
  Type *t = ty_varmap_get(&c->vars, v->id);
  if (t) return t;
  t = v->annot ? ty_import(c, v->annot) : ty_fresh(c, v->span);
  ty_varmap_put(&c->vars, v->id, t);
  return t;
}

/* A def's type from its annotations: metavariables for what is missing. */
Type *ty_def_signature(TyCtx *c, FuncDef *f) {
  Function *fn = f->fn;
  Type **ps = ARENA_ARRAY(c->a, Type *, fn->nparams ? fn->nparams : 1);
  for (int i = 0; i < fn->nparams; i++) {
    Var *v = fn->params[i];
    ps[i] = v->annot ? ty_import(c, v->annot) : ty_fresh(c, v->span);
  }
  Type *ret = fn->ret ? ty_import(c, fn->ret) : ty_fresh(c, fn->span);
  return type_func(c->a, fn->nparams, ps, ret, fn->ntparams, fn->tparams, f->span);
}

static Type *prim_signature(TyCtx *c, const PrimFunc *p) {
  Type **ps = ARENA_ARRAY(c->a, Type *, p->nparams ? p->nparams : 1);
  for (int i = 0; i < p->nparams; i++) {
    const Buffer *b = p->params[i];
    ps[i] = type_tensor(c->a, b->dtype, b->ndim, b->dims, b->span);
  }
  return type_func(c->a, p->nparams, ps, type_unit(c->a), 0, NULL, p->span);
}

/* The type of a global (def, state global or prim function), computed once
 * and cached in c->defs; a def already checked keeps its final type. */
Type *ty_global_sig(TyCtx *c, const char *name) {
  Type *t = strmap_get(&c->defs, name);
  if (t) return t;
  const Def *d = module_lookup(c->m, name);
  if (!d) return NULL;
  switch (d->kind) {
    case DEF_FUNC:
      t = d->u.func->ty ? ty_import(c, d->u.func->ty) : ty_def_signature(c, d->u.func);
      break;
    case DEF_GLOBAL:
      t = ty_import(c, d->u.global->type);
      break;
    case DEF_PRIM:
      t = prim_signature(c, d->u.prim);
      break;
    case DEF_ADT:
      return NULL;
  }
  strmap_put(&c->defs,
             d->kind == DEF_FUNC     ? d->u.func->name
             : d->kind == DEF_GLOBAL ? d->u.global->name
                                     : d->u.prim->name,
             t);
  return t;
}

/* @name as a value.  prim_ok: the callee of call_tir. */
static Type *check_global(TyCtx *c, Expr *e, bool prim_ok) {
  const char *name = e->u.global.name;
  const Def *d = module_lookup(c->m, name);
  Type *sig = d ? ty_global_sig(c, name) : NULL;
  if (!sig) {
    diag_error(c->d, e->span, "unknown global @%s", name);
    return e->ty = c->err;
  }
  if (d->kind == DEF_PRIM && !prim_ok)
    diag_error(c->d, e->span, "prim function @%s can only be called through call_tir", name);
  if (d->kind == DEF_FUNC)
    sig = ty_instantiate(c, sig, sig->u.func.ntparams, sig->u.func.tparams, true);
  return e->ty = sig;
}

/* ── constructors ── */

/* fn [A](fields) -> Adt[A] with A instantiated. */
Type *ty_ctor_type(TyCtx *c, AdtDef *adt, int index, Span sp) {
  CtorDef *cd = &adt->ctors[index];
  Type **args = ARENA_ARRAY(c->a, Type *, adt->ntparams ? adt->ntparams : 1);
  for (int i = 0; i < adt->ntparams; i++) args[i] = type_var(c->a, adt->tparams[i], sp);
  Type *res = type_adt(c->a, adt->name, adt->ntparams, args, sp);
  Type *f = type_func(c->a, cd->nfields, cd->fields, res, 0, NULL, sp);
  return ty_instantiate(c, f, adt->ntparams, adt->tparams, false);
}

/* ── calls ── */

static const char *callee_name(TyCtx *c, const Expr *fn) {
  switch (fn->kind) {
    case EX_GLOBAL:
      return arena_printf(c->a, "@%s", fn->u.global.name);
    case EX_VAR:
      return arena_printf(c->a, "%%%s", var_named(fn->u.var) ? fn->u.var->name : "_");
    case EX_OP:
      return fn->u.op.name;
    case EX_CTOR:
      return fn->u.ctor.adt->ctors[fn->u.ctor.index].name;
    default:
      return "function";
  }
}

static bool check_arity(TyCtx *c, Expr *e, const char *who, int lo, int hi) {
  int n = e->u.call.nargs;
  if (n >= lo && (hi < 0 || n <= hi)) return true;
  Span sp = n > hi && hi >= 0 ? e->u.call.args[hi]->span : e->span;
  if (hi < 0)
    diag_error(c->d, sp, "%s: expects at least %d %s, got %d", who, lo, plural(lo, "argument"), n);
  else if (lo == hi)
    diag_error(c->d, sp, "%s: expects %d %s, got %d", who, lo, plural(lo, "argument"), n);
  else
    diag_error(c->d, sp, "%s: expects %d to %d arguments, got %d", who, lo, hi, n);
  return false;
}

static void check_args(TyCtx *c, Expr *e) {
  for (int i = 0; i < e->u.call.nargs; i++) ty_check(c, e->u.call.args[i]);
}

/* Unifies each argument with its parameter type; messages name the callee. */
static void unify_args(TyCtx *c, Expr *e, const char *who, Type **params) {
  for (int i = 0; i < e->u.call.nargs; i++) {
    Expr *arg = e->u.call.args[i];
    if (ty_unify(c, params[i], arg->ty)) continue;
    diag_error(c->d, arg->span, "%s: argument %d expects %s but got %s", who, i + 1,
               ty_show(c, params[i]), ty_show(c, arg->ty));
  }
}

static Type *check_ctor_call(TyCtx *c, Expr *e) {
  Expr *fn = e->u.call.fn;
  AdtDef *adt = fn->u.ctor.adt;
  const char *who = callee_name(c, fn);
  Type *ft = fn->ty = ty_ctor_type(c, adt, fn->u.ctor.index, fn->span);
  check_args(c, e);
  if (e->u.call.attrs && e->u.call.attrs->n)
    diag_error(c->d, e->span, "%s: a constructor takes no attributes", who);
  if (!check_arity(c, e, who, ft->u.func.nparams, ft->u.func.nparams)) return c->err;
  unify_args(c, e, who, ft->u.func.params);
  return ft->u.func.ret;
}

/* Size variables of a def shared by several parameters must agree; this
 * finds the first disagreement between constant sizes for a clear message. */
typedef struct SizeSeen {
  const char *name;
  int64_t value;
  int param;
} SizeSeen;

static bool size_conflict(TyCtx *c, Type *p, Type *a, PtrVec *seen, int param, Expr *call,
                          const char *who, Function *fn);

static bool size_conflict_list(TyCtx *c, int n, Type **ps, Type **as, PtrVec *seen, int param,
                               Expr *call, const char *who, Function *fn) {
  for (int i = 0; i < n; i++)
    if (size_conflict(c, ps[i], as[i], seen, param, call, who, fn)) return true;
  return false;
}

static bool size_seen_check(TyCtx *c, PtrVec *seen, const char *name, int64_t v, int param,
                            Expr *call, const char *who, Function *fn) {
  for (size_t i = 0; i < seen->len; i++) {
    SizeSeen *s = seen->items[i];
    if (strcmp(s->name, name) != 0) continue;
    if (s->value == v) return false;
    diag_error(c->d, call->u.call.args[param]->span,
               "%s: size %s is %lld for %%%s but %lld for %%%s", who, name, (long long)s->value,
               fn->params[s->param]->name, (long long)v, fn->params[param]->name);
    return true;
  }
  SizeSeen *s = arena_alloc(c->a, sizeof *s);
  s->name = name, s->value = v, s->param = param;
  vec_push(seen, s);
  return false;
}

static bool size_conflict(TyCtx *c, Type *p, Type *a, PtrVec *seen, int param, Expr *call,
                          const char *who, Function *fn) {
  a = ty_resolve(c, a);
  if (!p || !a || p->kind != a->kind) return false;
  if (p->kind == TY_TUPLE && p->u.tuple.n == a->u.tuple.n)
    return size_conflict_list(c, p->u.tuple.n, p->u.tuple.fields, a->u.tuple.fields, seen, param,
                              call, who, fn);
  if (p->kind != TY_TENSOR || p->u.tensor.ndim != a->u.tensor.ndim) return false;
  for (int i = 0; i < p->u.tensor.ndim; i++) {
    Dim pd = p->u.tensor.dims[i], ad = ty_resolve_dim(c, a->u.tensor.dims[i]);
    if (pd.kind != DIM_VAR || ad.kind != DIM_CONST) continue;
    if (size_seen_check(c, seen, pd.name, ad.value, param, call, who, fn)) return true;
  }
  return false;
}

static bool check_def_sizes(TyCtx *c, Expr *e, const char *who) {
  Expr *fn = e->u.call.fn;
  FuncDef *f = fn->kind == EX_GLOBAL ? module_func(c->m, fn->u.global.name) : NULL;
  Type *sig = f ? ty_global_sig(c, f->name) : NULL;
  if (!sig || sig->kind != TY_FUNC || sig->u.func.nparams != e->u.call.nargs ||
      f->fn->nparams != e->u.call.nargs)
    return false;
  PtrVec seen = {0};
  bool bad = false;
  for (int i = 0; i < e->u.call.nargs && !bad; i++)
    bad = size_conflict(c, sig->u.func.params[i], e->u.call.args[i]->ty, &seen, i, e, who, f->fn);
  vec_free(&seen);
  return bad;
}

static Type *call_fn_type(TyCtx *c, Expr *e, Type *ft) {
  ft = ty_resolve(c, ft);
  if (ft->kind == TY_FUNC && ft->u.func.ntparams)
    ft = ty_instantiate(c, ft, ft->u.func.ntparams, ft->u.func.tparams, true);
  if (!ty_is_meta(c, ft)) return ft;
  int n = e->u.call.nargs;
  Type **ps = ARENA_ARRAY(c->a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) ps[i] = e->u.call.args[i]->ty;
  Type *f = type_func(c->a, n, ps, ty_fresh(c, e->span), 0, NULL, e->span);
  ty_unify(c, ft, f);
  return f;
}

/* A call of a function value: a polymorphic callee is instantiated, and a
 * size variable bound two ways by the arguments is reported by itself
 * instead of as a less clear unification failure.  Attributes are kept
 * and do not take part (TVM prints `%2(%p0, name="...")` after lowering). */
static Type *check_fn_call(TyCtx *c, Expr *e) {
  Expr *fn = e->u.call.fn;
  const char *who = callee_name(c, fn);
  Type *ft = ty_check(c, fn);
  check_args(c, e);
  if (ty_is_error(c, ft)) return c->err;
  ft = call_fn_type(c, e, ft);
  if (ft->kind != TY_FUNC) {
    diag_error(c->d, fn->span, "cannot call %s: it has type %s, not a function type", who,
               ty_show(c, ft));
    return c->err;
  }
  if (!check_arity(c, e, who, ft->u.func.nparams, ft->u.func.nparams)) return c->err;
  if (check_def_sizes(c, e, who)) return ft->u.func.ret;
  unify_args(c, e, who, ft->u.func.params);
  return ft->u.func.ret;
}

/* ── op calls ── */

static const OpDef *call_op(const Expr *e) {
  const Expr *fn = e->u.call.fn;
  return ops_get(fn->u.op.index);
}

static bool rel_unify_dim_hook(RelCtx *cx, Dim a, Dim b) { return ty_unify_dim(cx->user, a, b); }

/* An argument type a relation cannot look at yet: an unbound metavariable,
 * or a tuple with one as a field. */
static bool arg_unresolved(TyCtx *c, Type *t) {
  t = ty_resolve(c, t);
  if (ty_is_meta(c, t)) return true;
  if (t->kind != TY_TUPLE) return false;
  for (int i = 0; i < t->u.tuple.n; i++)
    if (ty_is_meta(c, t->u.tuple.fields[i])) return true;
  return false;
}

static bool same_dims(int n, const Dim *a, const Dim *b) {
  for (int i = 0; i < n; i++) {
    if (a[i].kind != b[i].kind) return false;
    if (a[i].kind == DIM_VAR ? strcmp(a[i].name, b[i].name) != 0 : a[i].value != b[i].value)
      return false;
  }
  return true;
}

/* Most relations (elementwise ops) return a tensor type equal to an
 * argument's: then the memory the relation allocated is given back, so a
 * long chain of such ops does not grow the arena.  Only when the relation
 * bound no dim metavariable (a binding might point into that memory) and
 * stayed in one arena chunk. */
static Type *reuse_arg_type(TyCtx *c, Type *r, int n, Type **args, ArenaMark mark, uint64_t binds) {
  if (r->kind != TY_TENSOR || c->a->head != mark.chunk || c->dim_binds != binds) return r;
  for (int i = 0; i < n; i++) {
    Type *a = args[i];
    if (a == r) return r;
    if (a->kind != TY_TENSOR || a->u.tensor.dtype != r->u.tensor.dtype ||
        a->u.tensor.ndim != r->u.tensor.ndim ||
        !same_dims(r->u.tensor.ndim, r->u.tensor.dims, a->u.tensor.dims))
      continue;
    arena_release(c->a, mark);
    return a;
  }
  return r;
}

/* ── hints for op calls: the signature, attributes written positionally,
 * literals of another dtype ── */

/* A note after an op call's arity or attribute error: its signature (the
 * argument names, the attributes with kinds and defaults). */
static void note_signature(TyCtx *c, const OpDef *op) {
  char *sig = ops_signature(op);
  diag_note(c->d, span_make(0, 0), "signature: %s", sig);
  free(sig);
}

/* The source text of a span (empty when it has none). */
static const char *span_text(TyCtx *c, Span sp, int *len) {
  uint32_t local;
  const SourceFile *f = diag_span_source(c->d, sp, &local);
  *len = f ? (int)sp.len : 0;
  return f ? f->text + local : "";
}

/* The k-th attribute of op that is neither written in the call nor named
 * like an argument, or NULL. */
static const char *free_attr(const OpDef *op, const Attrs *written, int k) {
  char name[64];
  for (const OpAttrSpec *s = op->attrs; s && s->name; s++) {
    bool arg = false;
    for (int i = 0; i < op->max_args && !arg; i++)
      arg = strcmp(ops_arg_name(op, i, name, sizeof name), s->name) == 0;
    if (arg || attrs_get(written, s->name)) continue;
    if (k-- == 0) return s->name;
  }
  return NULL;
}

/* `random.split(%k, 3)`: a value past the last argument is taken for the
 * attribute it would be (`num=3`). */
static void hint_positional_attr(TyCtx *c, Expr *e, const OpDef *op) {
  int n = e->u.call.nargs;
  if (op->max_args < 0 || n <= op->max_args) return;
  const char *attr = free_attr(op, e->u.call.attrs, 0);
  if (!attr) return;
  int len;
  const char *text = span_text(c, e->u.call.args[op->max_args]->span, &len);
  if (len)
    diag_hint(c->d, "`%s` is an attribute, written by name: `%s=%.*s`", attr, attr, len, text);
  else
    diag_hint(c->d, "`%s` is an attribute, written by name: `%s=...`", attr, attr);
}

/* The suffix a literal of dtype dt takes (`f` float32, `i64`, "" int32),
 * or NULL for one that has none. */
static const char *literal_suffix(DType dt) {
  static char buf[8];
  if (dt == DT_FLOAT32) return "f";
  if (dt == DT_INT32) return "";
  if (dt == DT_BOOL || dt == DT_INVALID) return NULL;
  char k = dtype_class(dt);
  snprintf(buf, sizeof buf, "%c%d", k == 'f' ? 'f' : k == 'u' ? 'u' : 'i', dtype_bytes(dt) * 8);
  return buf;
}

/* After a relation failed: a scalar literal whose dtype differs from a
 * tensor argument's (`%v + 1` with %v float32) gets "write `1f`". */
static void hint_literal_dtype(TyCtx *c, Expr *e, Type **args) {
  int n = e->u.call.nargs, k = -1;
  for (int i = 0; i < n && k < 0; i++) {
    Expr *a = e->u.call.args[i];
    if (a->kind == EX_CONST && args[i]->kind == TY_TENSOR && args[i]->u.tensor.ndim == 0) k = i;
  }
  for (int i = 0; k >= 0 && i < n; i++) {
    if (i == k || args[i]->kind != TY_TENSOR || e->u.call.args[i]->kind == EX_CONST) continue;
    DType want = args[i]->u.tensor.dtype;
    const char *suf = literal_suffix(want);
    int len;
    const char *text = span_text(c, e->u.call.args[k]->span, &len);
    int body = 0;
    while (body < len && strchr("+-0123456789.e", text[body])) body++;
    if (want == args[k]->u.tensor.dtype || !suf || !body) return;
    if (dtype_class(want) != 'f' && memchr(text, '.', (size_t)body)) return;
    diag_hint(c->d, "write `%.*s%s` for a %s constant", body, text, suf, dtype_name(want));
    return;
  }
}

/* Runs the op's relation.  Returns NULL when an argument is not known yet;
 * the error type after a failure. */
static Type *run_relation(TyCtx *c, Expr *e, const OpDef *op) {
  enum { SMALL = 8 };
  int n = e->u.call.nargs;
  Type *args_small[SMALL];
  const Tensor *vals_small[SMALL];
  Type **args = n <= SMALL ? args_small : ARENA_ARRAY(c->a, Type *, n);
  const Tensor **vals = n <= SMALL ? vals_small : ARENA_ARRAY(c->a, const Tensor *, n);
  for (int i = 0; i < n; i++) {
    Expr *a = e->u.call.args[i];
    if (arg_unresolved(c, a->ty)) return NULL;
    if (ty_is_error(c, a->ty)) return c->err;
    args[i] = ty_zonk(c, a->ty, false);
    vals[i] = a->kind == EX_CONST ? a->u.konst.value : NULL;
  }
  RelCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.arena = c->a, cx.mod = c->m, cx.call = e, cx.op_name = op->name, cx.op = op;
  cx.unify_dim = rel_unify_dim_hook, cx.user = c;
  ArenaMark mark = arena_mark(c->a);
  uint64_t binds = c->dim_binds;
  Type *r = op->rel(&cx, n, args, vals, e->u.call.attrs);
  if (r) return reuse_arg_type(c, r, n, args, mark, binds);
  diag_error(c->d, e->span, "%s",
             cx.err[0] ? cx.err : arena_printf(c->a, "%s: type error", op->name));
  hint_literal_dtype(c, e, args);
  return c->err;
}

static void queue(TyCtx *c, Expr *e, Type *result) {
  TyPending *p = malloc(sizeof *p);
  if (!p) rly_oom();
  p->e = e, p->result = result;
  vec_push(&c->pending, p);
}

static void check_op_args(TyCtx *c, Expr *e, const OpDef *op) {
  for (int i = 0; i < e->u.call.nargs; i++) {
    Expr *a = e->u.call.args[i];
    if (i == 0 && a->kind == EX_GLOBAL && op && (op->flags & (OP_CALL_TIR | OP_OWN_RUNNER)))
      check_global(c, a, true);
    else
      ty_check(c, a);
  }
}

static void unknown_op(TyCtx *c, Expr *fn) {
  diag_error(c->d, fn->span, "unknown operator %s", fn->u.op.name);
  const char *sug[3];
  int k = ops_suggest(fn->u.op.name, sug, 3);
  if (k) diag_hint(c->d, "did you mean %s?", sug[0]);
}

/* call_lowered(f, (a, b)) of a function value (a def, possibly
 * polymorphic): typed as f(a, b).  NULL when f is a prim function (the
 * op's relation types that call). */
static Type *check_call_lowered(TyCtx *c, Expr *e) {
  Expr *f = e->u.call.args[0], *tup = e->u.call.args[1];
  if (f->kind == EX_GLOBAL && module_prim(c->m, f->u.global.name)) return NULL;
  Type *ft = ty_resolve(c, f->ty), *tt = ty_resolve(c, tup->ty);
  if (ty_is_error(c, ft) || ty_is_error(c, tt)) return c->err;
  if (ft->kind != TY_FUNC || tt->kind != TY_TUPLE || ft->u.func.nparams != tt->u.tuple.n) {
    diag_error(c->d, e->span, "call_lowered: cannot call %s on %s", ty_show(c, ft), ty_show(c, tt));
    return c->err;
  }
  for (int i = 0; i < tt->u.tuple.n; i++)
    if (!ty_unify(c, ft->u.func.params[i], tt->u.tuple.fields[i])) {
      Expr *a = tup->kind == EX_TUPLE ? tup->u.tuple.fields[i] : tup;
      diag_error(c->d, a->span, "call_lowered: argument %d has type %s but %s is expected", i + 1,
                 ty_show(c, tt->u.tuple.fields[i]), ty_show(c, ft->u.func.params[i]));
      return c->err;
    }
  return ft->u.func.ret;
}

/* An op call: attributes are checked against the op's schema, then its type
 * relation runs; if an argument's type is not known yet the relation is
 * queued and the result is a metavariable solved later. */
static Type *check_op_call(TyCtx *c, Expr *e) {
  const OpDef *op = call_op(e);
  check_op_args(c, e, op);
  if (!op) {
    unknown_op(c, e->u.call.fn);
    return c->err;
  }
  Span where = e->span;
  const char *msg = ops_check_attrs(c->a, op, e->u.call.attrs, &where);
  if (msg) diag_error(c->d, where.off ? where : e->span, "%s", msg);
  bool arity = check_arity(c, e, op->name, op->min_args, op->max_args);
  if (!arity) hint_positional_attr(c, e, op);
  if (!arity || msg) return note_signature(c, op), c->err;
  Type *lowered = op->flags & OP_CALL_LOWERED ? check_call_lowered(c, e) : NULL;
  if (lowered) return lowered;
  if (!op->rel) return ty_fresh(c, e->span);
  Type *r = run_relation(c, e, op);
  if (r) return r;
  r = ty_fresh(c, e->span);
  queue(c, e, r);
  return r;
}

/* ── projections ── */

/* Returns the field type, NULL when the tuple is not known yet, or the
 * error type. */
static Type *proj_field(TyCtx *c, Expr *e) {
  Type *t = ty_resolve(c, e->u.proj.tuple->ty);
  int i = e->u.proj.index;
  if (ty_is_meta(c, t)) return NULL;
  if (ty_is_error(c, t)) return c->err;
  if (t->kind != TY_TUPLE) {
    diag_error(c->d, e->span, "cannot take field %d of a non-tuple of type %s", i, ty_show(c, t));
    return c->err;
  }
  if (i < 0 || i >= t->u.tuple.n) {
    diag_error(c->d, e->span, "tuple index %d is out of range for a tuple of %d %s", i,
               t->u.tuple.n, plural(t->u.tuple.n, "field"));
    return c->err;
  }
  return t->u.tuple.fields[i];
}

static Type *check_proj(TyCtx *c, Expr *e) {
  ty_check(c, e->u.proj.tuple);
  Type *f = proj_field(c, e);
  if (f) return f;
  Type *r = ty_fresh(c, e->span);
  queue(c, e, r);
  return r;
}

/* ── solving queued constraints ── */

static bool retry(TyCtx *c, TyPending *p) {
  Expr *e = p->e;
  Type *r;
  if (e->kind == EX_PROJ) {
    r = proj_field(c, e);
  } else {
    r = run_relation(c, e, call_op(e));
  }
  if (!r) return false;
  if (ty_is_error(c, r)) {
    ty_bind_error(c, p->result);
  } else if (!ty_unify(c, p->result, r)) {
    diag_error(c->d, e->span, "this has type %s but %s is expected here", ty_show(c, r),
               ty_show(c, p->result));
  }
  return true;
}

void ty_solve(TyCtx *c) {
  bool progress = true;
  while (progress && c->pending.len) {
    progress = false;
    size_t w = 0;
    for (size_t i = 0; i < c->pending.len; i++) {
      TyPending *p = c->pending.items[i];
      if (retry(c, p)) {
        free(p);
        progress = true;
      } else {
        c->pending.items[w++] = p;
      }
    }
    c->pending.len = w;
  }
}

/* ── let chains ── */

/* Whether t (its metavariables followed) stays within TY_MAX_DEPTH levels
 * and TY_MAX_PARTS parts, counted as a tree: *parts counts down. */
static bool type_within(TyCtx *c, Type *t, int depth, int64_t *parts) {
  t = ty_resolve(c, t);
  if (depth > TY_MAX_DEPTH || --*parts < 0) return false;
  int n = 0;
  Type **kids = NULL, *one[1];
  switch (t->kind) {
    case TY_TUPLE:
      n = t->u.tuple.n, kids = t->u.tuple.fields;
      break;
    case TY_ADT:
      n = t->u.adt.nargs, kids = t->u.adt.args;
      break;
    case TY_REF:
      n = 1, kids = one, one[0] = t->u.ref.inner;
      break;
    case TY_FUNC:
      if (!type_within(c, t->u.func.ret, depth + 1, parts)) return false;
      n = t->u.func.nparams, kids = t->u.func.params;
      break;
    default:
      break;
  }
  for (int i = 0; i < n; i++)
    if (!type_within(c, kids[i], depth + 1, parts)) return false;
  return true;
}

/* A let chain can nest a type one level per binding (`let %x2 = (%x1,);`)
 * or double it (`(%x1, %x1)`), and everything that walks types (unifying,
 * substituting, printing, comparing) walks them recursively: a binding
 * whose type passes the limits gets the error type instead, with a message
 * naming the limit. */
static Type *limit_type(TyCtx *c, Var *v, Expr *value, Type *t) {
  int64_t parts = TY_MAX_PARTS;
  if (type_within(c, t, 1, &parts)) return t;
  const char *name = var_named(v) ? v->name : "_";
  if (parts < 0)
    diag_error(c->d, value->span, "the type of %%%s has more than %d parts (the limit of a type)",
               name, TY_MAX_PARTS);
  else
    diag_error(c->d, value->span,
               "the type of %%%s is nested more than %d levels deep (the limit of a type)", name,
               TY_MAX_DEPTH);
  return c->err;
}

static void check_binding(TyCtx *c, Var *v, Expr *value) {
  Type *vt = v->annot ? ty_import(c, v->annot) : NULL;
  Type *pre = vt ? vt : value->kind == EX_FN ? ty_fresh(c, v->span) : NULL;
  if (pre) ty_varmap_put(&c->vars, v->id, pre); /* a let-bound fn may call itself */
  Type *t = limit_type(c, v, value, ty_check(c, value));
  if (!pre) {
    ty_varmap_put(&c->vars, v->id, t);
  } else if (!ty_unify(c, pre, t)) {
    diag_error(c->d, value->span, "%%%s is annotated %s but the value has type %s",
               var_named(v) ? v->name : "_", ty_show(c, pre), ty_show(c, t));
  }
}

/* Every node of the chain has the type of its tail, known only at the
 * end: each gets one fresh metavariable as it is checked (the node is in
 * the cache then), bound to the tail's type at the end and resolved by the
 * final zonk, instead of a second walk down a chain a million long (a
 * cache miss per node). */
static Type *check_let_chain(TyCtx *c, Expr *e) {
  Expr *cur = e;
  Type *chain = ty_fresh(c, e->span);
  while (cur->kind == EX_LET || cur->kind == EX_FREE_VAR) {
    cur->ty = chain;
    if (diag_stopped(c->d)) return c->err; /* Ctrl-C: the rest is not checked */
    if (cur->kind == EX_LET) {
      check_binding(c, cur->u.let.var, cur->u.let.value);
      cur = cur->u.let.body;
    } else {
      var_type(c, cur->u.free_var.var);
      cur = cur->u.free_var.body;
    }
  }
  Type *t = ty_check(c, cur);
  ty_unify(c, chain, t); /* chain is fresh: it binds */
  return t;
}

/* ── functions ── */

static Expr *final_expr(Expr *e) {
  while (e->kind == EX_LET || e->kind == EX_FREE_VAR)
    e = e->kind == EX_LET ? e->u.let.body : e->u.free_var.body;
  return e;
}

/* Checks a body against parameter types and a return type (NULL: none
 * written); returns the return type.  Type parameters and size variables
 * of the signature are pushed for the body. */
Type *ty_check_fn_body(TyCtx *c, Function *f, Type **params, Type *ret, const char *name) {
  size_t ntp = c->tparams.len, nsv = c->sizevars.len;
  for (int i = 0; i < f->ntparams; i++) vec_push(&c->tparams, (void *)f->tparams[i]);
  for (int i = 0; i < f->nparams; i++) {
    ty_collect_sizevars(params[i], &c->sizevars);
    ty_varmap_put(&c->vars, f->params[i]->id, params[i]);
  }
  ty_collect_sizevars(ret, &c->sizevars);
  Type *bt = ty_check(c, f->body);
  if (ret && !ty_unify(c, ret, bt)) {
    diag_error(c->d, final_expr(f->body)->span,
               "%s: the body has type %s but the return type is %s", name, ty_show(c, bt),
               ty_show(c, ret));
  }
  c->tparams.len = ntp, c->sizevars.len = nsv;
  return ret ? ret : bt;
}

/* A closure: rigid size variables inside; outside, a closure without type
 * parameters is monomorphic, so its own size variables become metavariables. */
static Type *check_closure(TyCtx *c, Function *f, Span sp) {
  PtrVec own = {0};
  Type **ps = ARENA_ARRAY(c->a, Type *, f->nparams ? f->nparams : 1);
  for (int i = 0; i < f->nparams; i++) {
    Var *v = f->params[i];
    ps[i] = v->annot ? ty_import(c, v->annot) : ty_fresh(c, v->span);
  }
  Type *ret = f->ret ? ty_import(c, f->ret) : NULL;
  ret = ty_check_fn_body(c, f, ps, ret, "fn");
  Type *ft = type_func(c->a, f->nparams, ps, ret, f->ntparams, f->tparams, sp);
  if (f->ntparams) return ft;
  PtrVec all = {0};
  ty_collect_sizevars(ft, &all);
  for (size_t i = 0; i < all.len; i++)
    if (!ty_name_in(&c->sizevars, all.items[i])) vec_push(&own, all.items[i]);
  vec_free(&all);
  if (own.len) ft = ty_instantiate_sizes(c, ft, &own);
  vec_free(&own);
  return ft;
}

/* ── control flow and references ── */

static Type *check_if(TyCtx *c, Expr *e) {
  Type *ct = ty_check(c, e->u.if_.cond);
  if (!ty_unify(c, ct, bool_scalar(c)))
    diag_error(c->d, e->u.if_.cond->span, "if condition must be a bool scalar, got %s",
               ty_show(c, ct));
  Type *a = ty_check(c, e->u.if_.then_), *b = ty_check(c, e->u.if_.else_);
  if (!ty_unify(c, a, b)) {
    diag_error(c->d, final_expr(e->u.if_.else_)->span,
               "if branches have different types: %s and %s", ty_show(c, a), ty_show(c, b));
    return c->err;
  }
  return ty_join(c, a, b);
}

static Type *check_ref_read(TyCtx *c, Expr *e) {
  Type *rt = ty_resolve(c, ty_check(c, e->u.ref_read.ref));
  if (rt->kind == TY_REF) return rt->u.ref.inner;
  if (ty_is_error(c, rt)) return c->err;
  Type *inner = ty_fresh(c, e->span);
  if (ty_unify(c, rt, type_ref(c->a, inner, e->span))) return inner;
  diag_error(c->d, e->u.ref_read.ref->span, "cannot read through a non-reference of type %s",
             ty_show(c, rt));
  return c->err;
}

static Type *check_ref_write(TyCtx *c, Expr *e) {
  Type *rt = ty_resolve(c, ty_check(c, e->u.ref_write.ref));
  Type *vt = ty_check(c, e->u.ref_write.value);
  if (rt->kind == TY_REF) {
    if (!ty_unify(c, rt->u.ref.inner, vt))
      diag_error(c->d, e->u.ref_write.value->span,
                 "the reference holds %s but the value written has type %s",
                 ty_show(c, rt->u.ref.inner), ty_show(c, vt));
  } else if (!ty_unify(c, rt, type_ref(c->a, vt, e->span))) {
    diag_error(c->d, e->u.ref_write.ref->span, "cannot write through a non-reference of type %s",
               ty_show(c, rt));
  }
  return type_unit(c->a);
}

/* ── dispatch ── */

/* Scalars share one type per dtype: a long chain of literals allocates none. */
static Type *const_type(TyCtx *c, const Tensor *t, Span sp) {
  if (t->ndim == 0) {
    if (!c->scalar[t->dtype]) c->scalar[t->dtype] = type_scalar(c->a, t->dtype);
    return c->scalar[t->dtype];
  }
  Dim dims[TENSOR_MAX_RANK];
  for (int i = 0; i < t->ndim && i < TENSOR_MAX_RANK; i++) dims[i] = dim_const(t->shape[i]);
  return type_tensor(c->a, t->dtype, t->ndim, dims, sp);
}

static Type *check_tuple(TyCtx *c, Expr *e) {
  int n = e->u.tuple.n;
  Type **fs = ARENA_ARRAY(c->a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) fs[i] = ty_check(c, e->u.tuple.fields[i]);
  return type_tuple(c->a, n, fs, e->span);
}

static Type *check_call(TyCtx *c, Expr *e) {
  switch (e->u.call.fn->kind) {
    case EX_OP:
      return check_op_call(c, e); /* ops are not values: the op node gets no type */
    case EX_CTOR:
      return check_ctor_call(c, e);
    default:
      return check_fn_call(c, e);
  }
}

/* The dispatch over expression kinds; stores the type in e->ty.  Globals
 * and let chains store their own types (a chain types every link). */
Type *ty_check(TyCtx *c, Expr *e) {
  Type *t = NULL;
  if (diag_stopped(c->d)) return e->ty = c->err; /* Ctrl-C: the rest is not checked */
  switch (e->kind) {
    case EX_CONST:
      t = const_type(c, e->u.konst.value, e->span);
      break;
    case EX_VAR:
      t = var_type(c, e->u.var);
      break;
    case EX_GLOBAL:
      return check_global(c, e, false);
    case EX_OP:
      t = ty_fresh(c, e->span);
      break;
    case EX_CTOR:
      t = ty_ctor_type(c, e->u.ctor.adt, e->u.ctor.index, e->span);
      break;
    case EX_CALL:
      t = check_call(c, e);
      break;
    case EX_TUPLE:
      t = check_tuple(c, e);
      break;
    case EX_PROJ:
      t = check_proj(c, e);
      break;
    case EX_LET:
    case EX_FREE_VAR:
      return check_let_chain(c, e);
    case EX_FN:
      t = check_closure(c, e->u.fn, e->span);
      break;
    case EX_IF:
      t = check_if(c, e);
      break;
    case EX_MATCH:
      t = ty_check_match(c, e);
      break;
    case EX_REF_NEW:
      t = type_ref(c->a, ty_check(c, e->u.ref_new.init), e->span);
      break;
    case EX_REF_READ:
      t = check_ref_read(c, e);
      break;
    case EX_REF_WRITE:
      t = check_ref_write(c, e);
      break;
    case EX_DATAFLOW:
      t = ty_check(c, e->u.dataflow.body);
      ty_check_dataflow(c, e);
      break;
  }
  return e->ty = t;
}
