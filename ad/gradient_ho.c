/* gradient_ho.c — the higher-order form of Gradient (TVM's ReverseAD), for a
 * function with control flow, closures, calls of other functions
 * (recursion included) and references.
 *
 * Every float tensor value v becomes a pair (v, ref(adjoint)), types
 * following (tuples, function types, ADT arguments and references map
 * their parts; keys, integers and type variables stay), and a reference
 * `bp : Ref[fn() -> ()]` holds the backpropagator: each op call on float
 * values computes its result, pairs it with a zero adjoint, and extends bp
 *   let %old = bp^;  bp := fn () { <the op's gradient rule>; %old() }
 * so that calling bp^ once at the end runs every adjoint update in reverse
 * order of evaluation, whatever branches, clauses, closures and calls the
 * forward run took.  A called global @g becomes @g_ad taking bp as its last
 * parameter (made once, transitively; a recursive @g calls @g_ad).
 *
 * @f_grad(params) makes bp, pairs its parameters, runs the transformed
 * body, seeds every float tensor of the value with ones_like, calls bp^,
 * and returns (value, (param adjoints)).
 *
 * Invariants: nodes handed to gradient rules carry their types (the
 * input's, which is type-checked); recursion follows expression nesting,
 * and let chains loop. */
#include <string.h>

#include "ad/gradient_int.h"

typedef struct Ho {
  PassCtx *pc;
  const Module *in;
  Module *out;
  Arena *a;
  PtrMap subst;   /* input Var* → transformed atom */
  PtrMap globals; /* input FuncDef* → its @g_ad name (made or queued) */
  PtrVec queue;   /* FuncDef* still to transform */
  Expr *bp;       /* the backpropagator reference of the function being built */
  RwBlock *cur;   /* where GradCx.bind puts bindings */
  GradCx G;
  bool failed;
} Ho;

/* ───────────────────────── types ───────────────────────── */

static bool is_float_tensor(const Type *t) {
  return t && t->kind == TY_TENSOR && dtype_is_float(t->u.tensor.dtype);
}

static Type *ad_type(Arena *a, Type *t);

static Type **ad_types(Arena *a, int n, Type **ts) {
  Type **o = ARENA_ARRAY(a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) o[i] = ad_type(a, ts[i]);
  return o;
}

static Type *ad_type(Arena *a, Type *t) {
  if (!t) return NULL;
  switch (t->kind) {
    case TY_TENSOR: {
      if (!dtype_is_float(t->u.tensor.dtype)) return t;
      Type *pair[2] = {t, type_ref(a, t, t->span)};
      return type_tuple(a, 2, pair, t->span);
    }
    case TY_TUPLE:
      return type_tuple(a, t->u.tuple.n, ad_types(a, t->u.tuple.n, t->u.tuple.fields), t->span);
    case TY_FUNC:
      return type_func(a, t->u.func.nparams, ad_types(a, t->u.func.nparams, t->u.func.params),
                       ad_type(a, t->u.func.ret), t->u.func.ntparams, t->u.func.tparams, t->span);
    case TY_ADT:
      return type_adt(a, t->u.adt.name, t->u.adt.nargs, ad_types(a, t->u.adt.nargs, t->u.adt.args),
                      t->span);
    case TY_REF:
      return type_ref(a, ad_type(a, t->u.ref.inner), t->span);
    default:
      return t;
  }
}

/* Whether a value of type t holds a float tensor anywhere (fields, ADT
 * arguments, references, functions). */
static bool has_float(const Type *t) {
  if (!t) return false;
  switch (t->kind) {
    case TY_TENSOR:
      return dtype_is_float(t->u.tensor.dtype);
    case TY_TUPLE:
      for (int i = 0; i < t->u.tuple.n; i++)
        if (has_float(t->u.tuple.fields[i])) return true;
      return false;
    case TY_ADT:
      for (int i = 0; i < t->u.adt.nargs; i++)
        if (has_float(t->u.adt.args[i])) return true;
      return false;
    case TY_REF:
      return has_float(t->u.ref.inner);
    case TY_FUNC:
      for (int i = 0; i < t->u.func.nparams; i++)
        if (has_float(t->u.func.params[i])) return true;
      return has_float(t->u.func.ret);
    default:
      return false;
  }
}

/* Whether @f_grad can take or give a value of type t: tensors and tuples of
 * them are paired (and unpaired) at the boundary; other types must hold no
 * float tensor (a closure or a list of tensors from the caller would hold
 * plain values where the transformed body expects pairs). */
static bool boundary_ok(const Type *t) {
  if (t->kind == TY_TENSOR) return true;
  if (t->kind != TY_TUPLE) return !has_float(t);
  for (int i = 0; i < t->u.tuple.n; i++)
    if (!boundary_ok(t->u.tuple.fields[i])) return false;
  return true;
}

/* A constructor whose declared fields hold float tensors of a fixed type
 * (not a type parameter) cannot carry the pairs; false after an error. */
static bool ctor_ok(Ho *H, const AdtDef *adt, int index, Span sp) {
  const CtorDef *c = &adt->ctors[index];
  for (int i = 0; i < c->nfields; i++)
    if (has_float(c->fields[i])) {
      diag_error(H->pc->d, sp,
                 "Gradient: constructor `%s` has a float tensor field; the higher-order form "
                 "differentiates through ADTs whose fields are type parameters (List[A]) "
                 "(in %s)",
                 c->name, H->pc->func);
      return false;
    }
  return true;
}

/* fn () -> () */
static Type *bp_fn_type(Arena *a) {
  return type_func(a, 0, NULL, type_unit(a), 0, NULL, (Span){0});
}

/* ───────────────────────── building ───────────────────────── */

static Expr *typed(Expr *e, Type *t) {
  e->ty = t;
  return e;
}

static Expr *bind_in(Ho *H, RwBlock *b, Expr *value, Type *t) {
  Var *v = rw_graph_var(H->a, value->span);
  rw_block_bind(b, v, value, value->span);
  return typed(expr_var(H->a, v, value->span), t);
}

static Expr *ho_gbind(GradCx *G, Expr *value) {
  Ho *H = G->user;
  return bind_in(H, H->cur, value, value->ty);
}

/* `a; rest` as a binding of an anonymous variable. */
static void seq(Ho *H, RwBlock *b, Expr *e) {
  rw_block_bind(b, var_new(H->a, NULL, NULL, e->span), e, e->span);
}

static Expr *mk_proj(Ho *H, RwBlock *b, Expr *t, int i, Type *ty) {
  return bind_in(H, b, expr_proj(H->a, t, i, t->span), ty);
}

static Expr *mk_read(Ho *H, RwBlock *b, Expr *r, Type *ty) {
  Expr *e = expr_new(H->a, EX_REF_READ, r->span);
  e->u.ref_read.ref = r;
  return bind_in(H, b, e, ty);
}

static void mk_write(Ho *H, RwBlock *b, Expr *r, Expr *v) {
  Expr *e = expr_new(H->a, EX_REF_WRITE, r->span);
  e->u.ref_write.ref = r, e->u.ref_write.value = v;
  seq(H, b, e);
}

static Expr *mk_ref(Ho *H, Expr *init) {
  Expr *e = expr_new(H->a, EX_REF_NEW, init->span);
  e->u.ref_new.init = init;
  return e;
}

/* The plain value of an AD value v' of input type t. */
static Expr *unwrap(Ho *H, RwBlock *b, Expr *v, Type *t) {
  if (is_float_tensor(t)) return mk_proj(H, b, v, 0, t);
  if (t->kind != TY_TUPLE || !grad_differentiable(t)) return typed(v, t);
  int n = t->u.tuple.n;
  Expr **f = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++)
    f[i] = unwrap(H, b, mk_proj(H, b, v, i, ad_type(H->a, t->u.tuple.fields[i])),
                  t->u.tuple.fields[i]);
  return bind_in(H, b, expr_tuple(H->a, n, f, v->span), t);
}

/* The AD value of a plain value y of type t: float tensors paired with a
 * zero adjoint. */
static Expr *wrap(Ho *H, RwBlock *b, Expr *y, Type *t) {
  if (is_float_tensor(t)) {
    H->cur = b;
    Expr *z = grad_op1(&H->G, "zeros_like", y, NULL);
    Expr *pair[2] = {y, mk_ref(H, z)};
    return bind_in(H, b, expr_tuple(H->a, 2, pair, y->span), ad_type(H->a, t));
  }
  if (t->kind != TY_TUPLE || !grad_differentiable(t)) return y;
  int n = t->u.tuple.n;
  Expr **f = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++)
    f[i] = wrap(H, b, mk_proj(H, b, y, i, t->u.tuple.fields[i]), t->u.tuple.fields[i]);
  return bind_in(H, b, expr_tuple(H->a, n, f, y->span), ad_type(H->a, t));
}

/* ───────────────────────── op calls ───────────────────────── */

/* The adjoint of a float tensor field of an AD value (read in b). */
static Expr *read_adj(Ho *H, RwBlock *b, Expr *v, Type *t) {
  Expr *r = mk_proj(H, b, v, 1, type_ref(H->a, t, v->span));
  return mk_read(H, b, r, t);
}

/* adjoint(v) += c, for an AD value v of input type t. */
static void add_adj(Ho *H, RwBlock *b, Expr *v, Type *t, Expr *c) {
  if (!c || !grad_differentiable(t)) return;
  if (is_float_tensor(t)) {
    Expr *r = mk_proj(H, b, v, 1, type_ref(H->a, t, v->span));
    H->cur = b;
    mk_write(H, b, r, grad_op2(&H->G, "add", mk_read(H, b, r, t), c));
    return;
  }
  if (t->kind != TY_TUPLE) return;
  for (int i = 0; i < t->u.tuple.n; i++) {
    Type *ft = t->u.tuple.fields[i];
    if (!grad_differentiable(ft)) continue;
    H->cur = b;
    add_adj(H, b, mk_proj(H, b, v, i, ad_type(H->a, ft)), ft, grad_proj(&H->G, c, i));
  }
}

/* The result's adjoints for the rule: the tensor's, or each float field's. */
static Expr **result_adjoints(Ho *H, RwBlock *b, Expr *ret, Type *t) {
  int n = t->kind == TY_TUPLE ? t->u.tuple.n : 1;
  Expr **dy = ARENA_ARRAY(H->a, Expr *, n);
  if (t->kind != TY_TUPLE) {
    dy[0] = read_adj(H, b, ret, t);
    return dy;
  }
  for (int i = 0; i < n; i++)
    if (is_float_tensor(t->u.tuple.fields[i]))
      dy[i] = read_adj(H, b, mk_proj(H, b, ret, i, ad_type(H->a, t->u.tuple.fields[i])),
                       t->u.tuple.fields[i]);
  return dy;
}

/* The rule of call failed: reported, and the block it was writing freed. */
static bool rule_failed(Ho *H, RwBlock *body, const Expr *call) {
  rw_block_free(body);
  grad_report_rule(H->pc, &H->G, call);
  return false;
}

/* bp := fn () { <the rule>; %old() }. */
static bool extend_bp(Ho *H, RwBlock *b, GradCall *gc, const OpGrad *rule, Expr *ret, Expr **args) {
  const Expr *call = gc->call;
  RwBlock body = {0};
  gc->dy = result_adjoints(H, &body, ret, call->ty);
  gc->dx = ARENA_ARRAY(H->a, Expr *, gc->nx ? gc->nx : 1);
  H->cur = &body;
  H->G.span = call->span, H->G.err[0] = 0;
  if (!rule->backward(&H->G, gc)) return rule_failed(H, &body, call);
  for (int i = 0; i < gc->nx; i++) add_adj(H, &body, args[i], call->u.call.args[i]->ty, gc->dx[i]);
  if (H->G.err[0]) return rule_failed(H, &body, call);
  Type *bt = bp_fn_type(H->a);
  Expr *old = mk_read(H, b, H->bp, bt);
  Expr *tail = expr_call(H->a, old, 0, NULL, NULL, call->span);
  Function *fn = ARENA_NEW(H->a, Function);
  fn->body = rw_block_finish(H->a, &body, tail), fn->span = call->span;
  mk_write(H, b, H->bp, expr_fn(H->a, fn, call->span));
  pass_report(H->pc, "backpropagator", call, fn->body, call->span);
  return true;
}

static Expr *ho(Ho *H, Expr *e, RwBlock *b);

static Expr *ho_op_call(Ho *H, Expr *e, RwBlock *b) {
  int n = e->u.call.nargs;
  Expr **args = ARENA_ARRAY(H->a, Expr *, n ? n : 1), **x = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  bool any = false;
  unsigned constant = 0;
  for (int i = 0; i < n; i++) {
    Expr *a = e->u.call.args[i];
    if (a->kind == EX_CONST) { /* no adjoint to keep */
      constant |= i < 32 ? 1u << i : 0;
      args[i] = x[i] = a;
      continue;
    }
    if (!(args[i] = ho(H, a, b))) return NULL;
    x[i] = unwrap(H, b, args[i], a->ty);
    any |= grad_differentiable(a->ty);
  }
  const OpGrad *rule = grad_rule(e->u.call.fn->u.op.index);
  bool diff = any && grad_differentiable(e->ty);
  if (diff && !rule) return grad_report_missing(H->pc, e), NULL;
  GradCall gc = {.call = e, .nx = n, .x = x, .constant = constant};
  Expr *y;
  H->cur = b, H->G.span = e->span, H->G.err[0] = 0;
  if (diff && rule->forward) {
    if (!(y = rule->forward(&H->G, &gc))) return grad_report_rule(H->pc, &H->G, e), NULL;
  } else {
    y = bind_in(H, b, expr_call(H->a, e->u.call.fn, n, x, e->u.call.attrs, e->span), e->ty);
  }
  gc.y = y;
  Expr *ret = wrap(H, b, y, e->ty);
  if (diff && !extend_bp(H, b, &gc, rule, ret, args)) return NULL;
  return ret;
}

/* ───────────────────────── calls of globals ───────────────────────── */

/* Whether @g_ad of the input is an earlier run's adjoint form of @g (its
 * parameters and a last one of type Ref[fn () -> ()]): remade, not an error. */
static bool made_by_gradient(Ho *H, const FuncDef *ad, const FuncDef *g) {
  if (!ad || ad->fn->nparams != g->fn->nparams + 1) return false;
  Type *last = ad->fn->params[g->fn->nparams]->annot;
  return last && type_equal(last, type_ref(H->a, bp_fn_type(H->a), last->span));
}

/* @g_ad's name, queueing @g's transformation on first use. */
static const char *ad_global(Ho *H, const FuncDef *g) {
  const char *name = ptrmap_get(&H->globals, g);
  if (name) return name;
  name = arena_printf(H->a, "%s_ad", g->name);
  if (module_lookup(H->in, name) && !made_by_gradient(H, module_func(H->in, name), g)) {
    diag_error(H->pc->d, g->span, "Gradient: `@%s` is taken (it would hold @%s's adjoint form)",
               name, g->name);
    return NULL;
  }
  ptrmap_put(&H->globals, g, (void *)name);
  vec_push(&H->queue, (void *)g);
  return name;
}

static Expr *ho_call(Ho *H, Expr *e, RwBlock *b) {
  Expr *fn = e->u.call.fn;
  if (fn->kind == EX_OP) {
    if (ops_has_flag(fn->u.op.index, OP_CALL_TIR | OP_OWN_RUNNER)) goto unsupported;
    return ho_op_call(H, e, b);
  }
  const FuncDef *g = fn->kind == EX_GLOBAL ? module_func(H->in, fn->u.global.name) : NULL;
  if (fn->kind == EX_GLOBAL && !g) goto unsupported;
  if (fn->kind == EX_CTOR && !ctor_ok(H, fn->u.ctor.adt, fn->u.ctor.index, e->span)) return NULL;
  int n = e->u.call.nargs, extra = g ? 1 : 0;
  Expr **args = ARENA_ARRAY(H->a, Expr *, n + extra);
  Expr *callee = fn->kind == EX_CTOR ? fn : NULL;
  if (g) {
    const char *name = ad_global(H, g);
    if (!name) return NULL;
    callee = expr_global(H->a, name, fn->span);
  } else if (!callee && !(callee = ho(H, fn, b))) {
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(args[i] = ho(H, e->u.call.args[i], b))) return NULL;
  if (g) args[n] = H->bp;
  Expr *c = expr_call(H->a, callee, n + extra, args, e->u.call.attrs, e->span);
  return bind_in(H, b, c, ad_type(H->a, e->ty));
unsupported:
  diag_error(H->pc->d, e->span, "Gradient cannot differentiate this call (in %s)", H->pc->func);
  return NULL;
}

/* ───────────────────────── the other nodes ───────────────────────── */

static Expr *ho_block(Ho *H, Expr *e) {
  RwBlock b = {0};
  Expr *r = ho(H, e, &b);
  if (!r) return rw_block_free(&b), NULL;
  return rw_block_finish(H->a, &b, r);
}

static Var *ad_var(Ho *H, Var *v, Type *t) {
  Var *n = var_new(H->a, v->name, v->annot ? ad_type(H->a, v->annot) : NULL, v->span);
  n->is_graph = v->is_graph;
  ptrmap_put(&H->subst, v, typed(expr_var(H->a, n, v->span), ad_type(H->a, t)));
  return n;
}

static Pattern *ad_pattern(Ho *H, const Pattern *p) {
  if (p->kind == PAT_CTOR && !ctor_ok(H, p->u.ctor.adt, p->u.ctor.index, p->span)) return NULL;
  Pattern *q = ARENA_NEW(H->a, Pattern);
  *q = *p;
  if (p->kind == PAT_VAR) q->u.var = ad_var(H, p->u.var, NULL);
  int n = p->kind == PAT_CTOR ? p->u.ctor.n : p->kind == PAT_TUPLE ? p->u.tuple.n : 0;
  Pattern *const *sub = p->kind == PAT_CTOR ? p->u.ctor.sub : p->u.tuple.sub;
  if (!n) return q;
  Pattern **ns = ARENA_ARRAY(H->a, Pattern *, n);
  for (int i = 0; i < n; i++)
    if (!(ns[i] = ad_pattern(H, sub[i]))) return NULL;
  if (p->kind == PAT_CTOR)
    q->u.ctor.sub = ns;
  else
    q->u.tuple.sub = ns;
  return q;
}

static Expr *ho_fn(Ho *H, Expr *e) {
  Function *f = e->u.fn, *g = ARENA_NEW(H->a, Function);
  *g = *f;
  g->params = ARENA_ARRAY(H->a, Var *, f->nparams ? f->nparams : 1);
  Type *ft = e->ty;
  for (int i = 0; i < f->nparams; i++) {
    Type *pt = ft && ft->kind == TY_FUNC ? ft->u.func.params[i] : f->params[i]->annot;
    g->params[i] = ad_var(H, f->params[i], pt);
    if (!g->params[i]->annot && pt) g->params[i]->annot = ad_type(H->a, pt);
  }
  g->ret = f->ret ? ad_type(H->a, f->ret) : NULL;
  if (!(g->body = ho_block(H, f->body))) return NULL;
  return typed(expr_fn(H->a, g, e->span), ad_type(H->a, e->ty));
}

static Expr *ho_match(Ho *H, Expr *e, RwBlock *b) {
  Expr *s = ho(H, e->u.match.scrut, b);
  if (!s) return NULL;
  Expr *m = expr_copy(H->a, e);
  m->u.match.scrut = s;
  m->u.match.clauses = ARENA_ARRAY(H->a, MatchClause, e->u.match.n ? e->u.match.n : 1);
  for (int i = 0; i < e->u.match.n; i++) {
    if (!(m->u.match.clauses[i].pat = ad_pattern(H, e->u.match.clauses[i].pat))) return NULL;
    if (!(m->u.match.clauses[i].body = ho_block(H, e->u.match.clauses[i].body))) return NULL;
  }
  return bind_in(H, b, m, ad_type(H->a, e->ty));
}

static Expr *ho_if(Ho *H, Expr *e, RwBlock *b) {
  Expr *c = ho(H, e->u.if_.cond, b);
  Expr *t = c ? ho_block(H, e->u.if_.then_) : NULL, *f = t ? ho_block(H, e->u.if_.else_) : NULL;
  if (!f) return NULL;
  return bind_in(H, b, expr_if(H->a, c, t, f, e->span), ad_type(H->a, e->ty));
}

static Expr *ho_ref(Ho *H, Expr *e, RwBlock *b) {
  int n = expr_nchildren(e);
  Expr *kids[2];
  for (int i = 0; i < n; i++)
    if (!(kids[i] = ho(H, expr_child(e, i), b))) return NULL;
  return bind_in(H, b, expr_rebuild(H->a, e, kids, n), ad_type(H->a, e->ty));
}

static Expr *ho_tuple(Ho *H, Expr *e, RwBlock *b) {
  int n = e->u.tuple.n;
  Expr **f = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++)
    if (!(f[i] = ho(H, e->u.tuple.fields[i], b))) return NULL;
  return bind_in(H, b, expr_tuple(H->a, n, f, e->span), ad_type(H->a, e->ty));
}

/* A state global read as is (a key); one holding float tensors would need
 * its adjoint kept across calls: EffectToState makes it a parameter. */
static Expr *state_global(Ho *H, Expr *e) {
  const StateGlobal *g = module_state_global(H->in, e->u.global.name);
  if (!has_float(g->type)) return e;
  diag_error(H->pc->d, e->span,
             "Gradient: the state global @%s holds float tensors; run EffectToState first so "
             "that it is a parameter and a result (in %s)",
             g->name, H->pc->func);
  return NULL;
}

/* The transformed value of e, bindings pushed on b; NULL after an error. */
static Expr *ho(Ho *H, Expr *e, RwBlock *b) {
  for (;;) switch (e->kind) {
      case EX_CONST:
        return is_float_tensor(e->ty) ? wrap(H, b, e, e->ty) : e;
      case EX_VAR: {
        Expr *a = ptrmap_get(&H->subst, e->u.var);
        if (!a) diag_error(H->pc->d, e->span, "Gradient: unbound variable (in %s)", H->pc->func);
        return a;
      }
      case EX_GLOBAL:
        if (module_state_global(H->in, e->u.global.name)) return state_global(H, e);
        diag_error(H->pc->d, e->span,
                   "Gradient: a function used as a value is not differentiated; call it or "
                   "wrap it in a closure (in %s)",
                   H->pc->func);
        return NULL;
      case EX_CTOR:
        return e;
      case EX_CALL:
        return ho_call(H, e, b);
      case EX_TUPLE:
        return ho_tuple(H, e, b);
      case EX_PROJ: {
        Expr *t = ho(H, e->u.proj.tuple, b);
        return t ? mk_proj(H, b, t, e->u.proj.index, ad_type(H->a, e->ty)) : NULL;
      }
      case EX_LET: {
        Var *v = ad_var(H, e->u.let.var, e->u.let.value->ty);
        Expr *val =
            e->u.let.value->kind == EX_FN ? ho_fn(H, e->u.let.value) : ho(H, e->u.let.value, b);
        if (!val) return NULL;
        rw_block_bind(b, v, val, e->span);
        e = e->u.let.body;
        continue;
      }
      case EX_FN:
        return ho_fn(H, e);
      case EX_IF:
        return ho_if(H, e, b);
      case EX_MATCH:
        return ho_match(H, e, b);
      case EX_REF_NEW: /* ref(@prng_state): the global's cell */
        if (e->u.ref_new.init->kind == EX_GLOBAL)
          return state_global(H, e->u.ref_new.init) ? e : NULL;
        return ho_ref(H, e, b);
      case EX_REF_READ:
      case EX_REF_WRITE:
        return ho_ref(H, e, b);
      case EX_DATAFLOW:
        e = e->u.dataflow.body;
        continue;
      default:
        diag_error(H->pc->d, e->span, "Gradient cannot differentiate a %s (in %s)",
                   expr_kind_name(e->kind), H->pc->func);
        return NULL;
    }
}

/* ───────────────────────── definitions ───────────────────────── */

static Function *new_fn(Ho *H, const Function *f, int n, Var **params, Expr *body) {
  Function *g = ARENA_NEW(H->a, Function);
  *g = *f;
  g->nparams = n, g->params = params, g->body = body, g->ret = NULL;
  return g;
}

static void add_def(Ho *H, const FuncDef *f, const char *name, Function *fn) {
  FuncDef *nf = ARENA_NEW(H->a, FuncDef);
  nf->name = name, nf->span = f->span, nf->fn = fn;
  module_add(H->out, (Def){.kind = DEF_FUNC, .u.func = nf});
}

/* @g_ad(params', bp) { T(body) } */
static bool ad_def(Ho *H, const FuncDef *g) {
  const Function *f = g->fn;
  int n = f->nparams;
  Var **params = ARENA_ARRAY(H->a, Var *, n + 1);
  for (int i = 0; i < n; i++) {
    Type *pt = g->ty->u.func.params[i];
    params[i] = ad_var(H, f->params[i], pt);
    params[i]->annot = ad_type(H->a, pt);
  }
  Var *bp = var_new(H->a, "bp", type_ref(H->a, bp_fn_type(H->a), f->span), f->span);
  params[n] = bp;
  H->bp = typed(expr_var(H->a, bp, f->span), bp->annot);
  Expr *body = ho_block(H, f->body);
  if (!body) return false;
  Function *fn = new_fn(H, f, n + 1, params, body);
  fn->ret = ad_type(H->a, g->ty->u.func.ret);
  add_def(H, g, ptrmap_get(&H->globals, g), fn);
  return true;
}

/* ones_like into the adjoint of every float tensor of an AD value. */
static void seed(Ho *H, RwBlock *b, Expr *v, Type *t) {
  if (is_float_tensor(t)) {
    Expr *r = mk_proj(H, b, v, 1, type_ref(H->a, t, v->span));
    H->cur = b;
    mk_write(H, b, r, grad_op1(&H->G, "ones_like", mk_proj(H, b, v, 0, t), NULL));
    return;
  }
  if (t->kind != TY_TUPLE) return;
  for (int i = 0; i < t->u.tuple.n; i++)
    if (grad_differentiable(t->u.tuple.fields[i]))
      seed(H, b, mk_proj(H, b, v, i, ad_type(H->a, t->u.tuple.fields[i])), t->u.tuple.fields[i]);
}

/* A parameter's gradient: its adjoint, zeros for other tensors, `()` else. */
static Expr *param_grad(Ho *H, RwBlock *b, Expr *p, Expr *pv, Type *t) {
  if (is_float_tensor(t)) return read_adj(H, b, p, t);
  H->cur = b;
  if (t->kind == TY_TENSOR) return grad_op1(&H->G, "zeros_like", pv, NULL);
  if (t->kind != TY_TUPLE) return rw_unit(H->a, p->span);
  int n = t->u.tuple.n;
  Expr **f = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    Type *ft = t->u.tuple.fields[i];
    f[i] = param_grad(H, b, mk_proj(H, b, p, i, ad_type(H->a, ft)), mk_proj(H, b, pv, i, ft), ft);
  }
  return bind_in(H, b, expr_tuple(H->a, n, f, p->span), NULL);
}

static const char *kind_words(const Type *t) {
  return t->kind == TY_FUNC  ? "function"
         : t->kind == TY_ADT ? "ADT"
         : t->kind == TY_REF ? "reference"
                             : "value";
}

/* @f's parameters and result must cross the boundary; false after an error. */
static bool boundary(Ho *H, const FuncDef *f) {
  const Type *ft = f->ty;
  for (int i = 0; i < ft->u.func.nparams; i++)
    if (!boundary_ok(ft->u.func.params[i])) {
      Var *v = f->fn->params[i];
      diag_error(H->pc->d, v->span,
                 "Gradient: parameter %%%s of @%s holds float tensors inside a %s; give @%s "
                 "tensors or tuples of them (a function, ADT or reference parameter cannot be "
                 "differentiated)",
                 var_named(v) ? v->name : "", f->name, kind_words(ft->u.func.params[i]), f->name);
      return false;
    }
  if (boundary_ok(ft->u.func.ret)) return true;
  diag_error(H->pc->d, f->span,
             "Gradient: @%s returns float tensors inside a %s; return tensors or tuples of them",
             f->name, kind_words(ft->u.func.ret));
  return false;
}

static Function *grad_fn(Ho *H, const FuncDef *f) {
  const Function *fn = f->fn;
  int n = fn->nparams;
  if (!boundary(H, f)) return NULL;
  RwBlock b = {0};
  Var **params = ARENA_ARRAY(H->a, Var *, n ? n : 1);
  Expr **pv = ARENA_ARRAY(H->a, Expr *, n ? n : 1), **pa = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  Type *bt = type_ref(H->a, bp_fn_type(H->a), fn->span);
  Function *nop = ARENA_NEW(H->a, Function);
  nop->body = rw_unit(H->a, fn->span), nop->span = fn->span;
  H->bp = bind_in(H, &b, mk_ref(H, expr_fn(H->a, nop, fn->span)), bt);
  for (int i = 0; i < n; i++) {
    Var *o = fn->params[i];
    Type *t = f->ty->u.func.params[i];
    params[i] = var_new(H->a, o->name, o->annot, o->span);
    pv[i] = typed(expr_var(H->a, params[i], o->span), t);
    pa[i] = wrap(H, &b, pv[i], t);
    ptrmap_put(&H->subst, o, pa[i]);
  }
  Type *rt = f->ty->u.func.ret;
  Expr *res = ho(H, fn->body, &b);
  if (!res) return rw_block_free(&b), NULL;
  seed(H, &b, res, rt);
  Expr *run = expr_call(H->a, mk_read(H, &b, H->bp, bp_fn_type(H->a)), 0, NULL, NULL, fn->span);
  seq(H, &b, run);
  Expr **g = ARENA_ARRAY(H->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) g[i] = param_grad(H, &b, pa[i], pv[i], f->ty->u.func.params[i]);
  Expr *pair[2] = {unwrap(H, &b, res, rt), expr_tuple(H->a, n, g, fn->span)};
  if (H->G.err[0]) return rw_block_free(&b), NULL;
  return new_fn(H, fn, n, params, rw_block_finish(H->a, &b, expr_tuple(H->a, 2, pair, fn->span)));
}

bool gradient_higher_order(PassCtx *pc, const Module *in, Module *out, const FuncDef *f,
                           const char *name) {
  Ho H = {.pc = pc, .in = in, .out = out, .a = pc->a};
  H.G = (GradCx){.a = pc->a, .bind = ho_gbind, .user = &H};
  Function *g = grad_fn(&H, f);
  bool ok = g != NULL;
  if (ok) add_def(&H, f, name, g);
  for (size_t i = 0; ok && i < H.queue.len; i++) ok = ad_def(&H, H.queue.items[i]);
  ptrmap_free(&H.subst);
  ptrmap_free(&H.globals);
  vec_free(&H.queue);
  return ok && pc->d->nerrors == 0;
}
