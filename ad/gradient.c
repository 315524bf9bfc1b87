/* gradient.c — Gradient (after TVM's relay.transform.gradient): reverse-mode
 * automatic differentiation of one function @f, defining @f_grad with the
 * same parameters that returns (value, (d_param1, d_param2, ...)).  @f stays.
 *
 * A first-order @f (op calls, tuples, projections, lets, constants: a
 * dataflow graph; calls of monomorphic functions are inlined) gets TVM's
 * first-order form, without references: the forward computation as a let
 * chain of atoms, then the adjoints, each op's from its gradient rule
 * (grad_rule, ad/grad.h), accumulated with `add` in reverse order — a pure
 * program that fuses and compiles like the forward one.  Anything
 * else (if, match, closures, recursive calls, references) goes to the
 * higher-order form (gradient_ho.c).
 *
 * The seed is ones_like of each float tensor in the value.  A parameter
 * gets the sum of its adjoints, zeros_like when nothing reached it (and for
 * integer tensors), and `()` for the other types (keys, functions).
 *
 * Invariants: the input is type-checked (Expr.ty on every node) and never
 * modified; every node built here carries its type, since gradient rules
 * read them; nothing recurses on the length of a let chain. */
#include <stdlib.h>
#include <string.h>

#include "ad/grad.h"
#include "ad/gradient_int.h"

/* ───────────────────────── adjoints ───────────────────────── */

/* The adjoint of a value: a sum for a tensor, one per field for a tuple. */
typedef struct Adj {
  Expr *sum;
  int n;
  struct Adj *fields;
} Adj;

typedef enum BindKind { B_CALL, B_TUPLE, B_PROJ, B_OTHER } BindKind;

/* One forward binding: its variable, and for an op call what the
 * backward step needs. */
typedef struct Bind {
  BindKind kind;
  Var *var;
  Expr *value; /* the bound value (atoms as operands) */
  GradCall gc; /* B_CALL: the call, its argument atoms and saved values */
} Bind;

typedef struct Fo {
  PassCtx *pc;
  Arena *a;
  RwBlock block; /* the output's bindings, forward then backward */
  PtrMap subst;  /* input Var* → atom */
  PtrMap adj;    /* output Var* → Adj* */
  PtrMap tuples; /* output Var* → the tuple of atoms it is bound to (projections read through) */
  Bind *binds;
  size_t nbinds, capbinds;
  GradCx G;
  const Expr *unsupported; /* the first node the first-order form does not take */
  PtrVec inlining;         /* the FuncDefs being inlined (a call of one of them is recursion) */
} Fo;

static Expr *typed_var(Arena *a, Var *v, Type *t) {
  Expr *e = expr_var(a, v, v->span);
  e->ty = t;
  return e;
}

static Expr *fo_bind_named(Fo *F, Expr *value, const char *name) {
  Var *v = name ? var_new(F->a, name, NULL, value->span) : rw_graph_var(F->a, value->span);
  rw_block_bind(&F->block, v, value, value->span);
  return typed_var(F->a, v, value->ty);
}

static Expr *fo_gbind(GradCx *G, Expr *value) { return fo_bind_named(G->user, value, NULL); }

static Bind *push_bind(Fo *F, BindKind k, Expr *var, Expr *value) {
  if (F->nbinds == F->capbinds) {
    F->capbinds = F->capbinds ? F->capbinds * 2 : 64;
    Bind *nb = ARENA_ARRAY(&F->pc->scratch, Bind, F->capbinds);
    if (F->nbinds) memcpy(nb, F->binds, sizeof(Bind) * F->nbinds);
    F->binds = nb;
  }
  Bind *b = &F->binds[F->nbinds++];
  memset(b, 0, sizeof *b);
  b->kind = k, b->var = var->u.var, b->value = value;
  return b;
}

/* ───────────────────────── forward ───────────────────────── */

static Expr *fo_atom(Fo *F, Expr *e, const char *name);

/* The forward call's type from its atoms (an inlined callee's size
 * variables become the caller's dims); the input's type when the relation
 * cannot tell (a run-time-only shape). */
static Type *retype(Fo *F, Expr *c, Type *input) {
  F->G.err[0] = 0;
  Type *t = grad_type_call(&F->G, c);
  F->G.err[0] = 0;
  return t ? t : input;
}

static Expr *fo_call(Fo *F, Expr *e, const char *name) {
  int n = e->u.call.nargs;
  Expr **x = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++)
    if (!(x[i] = fo_atom(F, e->u.call.args[i], NULL))) return NULL;
  const OpGrad *rule = grad_rule(e->u.call.fn->u.op.index);
  GradCall gc = {.call = e, .nx = n, .x = x};
  for (int i = 0; i < n && i < 32; i++) gc.constant |= (unsigned)(x[i]->kind == EX_CONST) << i;
  Expr *y;
  if (rule && rule->forward && grad_differentiable(e->ty)) {
    F->G.span = e->span, F->G.err[0] = 0;
    if (!(y = rule->forward(&F->G, &gc))) return grad_report_rule(F->pc, &F->G, e), NULL;
  } else {
    Expr *c = expr_call(F->a, e->u.call.fn, n, x, e->u.call.attrs, e->span);
    c->ty = retype(F, c, e->ty);
    y = fo_bind_named(F, c, name);
  }
  Bind *b = push_bind(F, B_CALL, y, NULL);
  b->gc = gc;
  b->gc.y = y;
  return y;
}

static Expr *fo_tuple(Fo *F, Expr *e, const char *name) {
  int n = e->u.tuple.n;
  Expr **f = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++)
    if (!(f[i] = fo_atom(F, e->u.tuple.fields[i], NULL))) return NULL;
  Expr *t = expr_tuple(F->a, n, f, e->span);
  Type **tys = ARENA_ARRAY(F->a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) tys[i] = f[i]->ty ? f[i]->ty : e->ty->u.tuple.fields[i];
  t->ty = type_tuple(F->a, n, tys, e->span);
  Expr *v = fo_bind_named(F, t, name);
  push_bind(F, B_TUPLE, v, t);
  ptrmap_put(&F->tuples, v->u.var, t);
  return v;
}

static Expr *fo_proj(Fo *F, Expr *e, const char *name) {
  Expr *t = fo_atom(F, e->u.proj.tuple, NULL);
  if (!t) return NULL;
  Expr *known = t->kind == EX_VAR ? ptrmap_get(&F->tuples, t->u.var) : NULL;
  if (known) return known->u.tuple.fields[e->u.proj.index]; /* (a, b).0 is a */
  Expr *p = expr_proj(F->a, t, e->u.proj.index, e->span);
  p->ty = t->ty && t->ty->kind == TY_TUPLE ? t->ty->u.tuple.fields[e->u.proj.index] : e->ty;
  Expr *v = fo_bind_named(F, p, name);
  push_bind(F, B_PROJ, v, p);
  return v;
}

/* A call of a monomorphic global function, not recursive: its body inlined
 * on the argument atoms (its nodes retyped from them), so a model split
 * into functions stays first-order (and fuses).  Anything else goes to the higher-order
 * form. */
static Expr *fo_inline(Fo *F, Expr *e, const char *name) {
  const FuncDef *g = module_func(F->pc->in, e->u.call.fn->u.global.name);
  bool ok =
      g && g->ty && !g->fn->ntparams && F->inlining.len < 64 && g->fn->nparams == e->u.call.nargs;
  for (size_t i = 0; ok && i < F->inlining.len; i++) ok = F->inlining.items[i] != g;
  if (!ok) return F->unsupported = e, NULL;
  Expr **x = ARENA_ARRAY(&F->pc->scratch, Expr *, e->u.call.nargs ? e->u.call.nargs : 1);
  for (int i = 0; i < e->u.call.nargs; i++)
    if (!(x[i] = fo_atom(F, e->u.call.args[i], NULL))) return NULL;
  for (int i = 0; i < e->u.call.nargs; i++) ptrmap_put(&F->subst, g->fn->params[i], x[i]);
  vec_push(&F->inlining, (void *)g);
  Expr *r = fo_atom(F, g->fn->body, name);
  vec_pop(&F->inlining);
  return r;
}

/* The forward value of e as an atom; NULL when e is not first-order
 * (F->unsupported) or after an error.  Let chains loop. */
static Expr *fo_atom(Fo *F, Expr *e, const char *name) {
  for (;;) switch (e->kind) {
      case EX_CONST:
        return e;
      case EX_VAR: {
        Expr *a = ptrmap_get(&F->subst, e->u.var);
        if (!a) F->unsupported = e;
        return a;
      }
      case EX_CALL:
        if (e->u.call.fn->kind == EX_GLOBAL) return fo_inline(F, e, name);
        if (e->u.call.fn->kind != EX_OP || ops_has_flag(e->u.call.fn->u.op.index, OP_CALL_TIR))
          return F->unsupported = e, NULL;
        return fo_call(F, e, name);
      case EX_TUPLE:
        return fo_tuple(F, e, name);
      case EX_PROJ:
        return fo_proj(F, e, name);
      case EX_DATAFLOW:
        e = e->u.dataflow.body;
        continue;
      case EX_LET: {
        Var *v = e->u.let.var;
        Expr *a = fo_atom(F, e->u.let.value, var_named(v) && !v->is_graph ? v->name : NULL);
        if (!a) return NULL;
        ptrmap_put(&F->subst, v, a);
        e = e->u.let.body;
        continue;
      }
      default:
        return F->unsupported = e, NULL;
    }
}

/* ───────────────────────── backward ───────────────────────── */

static Adj *adj_of(Fo *F, Var *v) {
  Adj *A = ptrmap_get(&F->adj, v);
  if (!A) {
    A = ARENA_NEW(&F->pc->scratch, Adj);
    ptrmap_put(&F->adj, v, A);
  }
  return A;
}

static void adj_fields(Fo *F, Adj *A, const Type *t) {
  if (A->fields || t->kind != TY_TUPLE) return;
  A->n = t->u.tuple.n;
  A->fields = ARENA_ARRAY(&F->pc->scratch, Adj, A->n ? A->n : 1);
  memset(A->fields, 0, sizeof(Adj) * (size_t)(A->n ? A->n : 1));
}

/* A += c, for a value of type t (c of the same type). */
static void add_into(Fo *F, Adj *A, const Type *t, Expr *c) {
  if (!c || !grad_differentiable(t)) return;
  if (t->kind == TY_TENSOR) {
    A->sum = A->sum ? grad_op2(&F->G, "add", A->sum, c) : c;
    return;
  }
  adj_fields(F, A, t);
  for (int i = 0; i < A->n; i++)
    add_into(F, &A->fields[i], t->u.tuple.fields[i], grad_proj(&F->G, c, i));
}

/* dst += src. */
static void merge(Fo *F, Adj *dst, const Type *t, const Adj *src) {
  if (!src || !grad_differentiable(t)) return;
  if (t->kind == TY_TENSOR) {
    add_into(F, dst, t, src->sum);
    return;
  }
  if (!src->fields) return;
  adj_fields(F, dst, t);
  for (int i = 0; i < dst->n; i++) merge(F, &dst->fields[i], t->u.tuple.fields[i], &src->fields[i]);
}

static void accumulate(Fo *F, Expr *atom, Expr *c) {
  if (atom->kind == EX_VAR) add_into(F, adj_of(F, atom->u.var), atom->ty, c);
}

static bool adj_empty(const Adj *A) {
  if (!A) return true;
  if (A->sum) return false;
  for (int i = 0; i < (A->fields ? A->n : 0); i++)
    if (!adj_empty(&A->fields[i])) return false;
  return true;
}

/* The result's adjoints as dy[]: the tensor's, or each field's. */
static Expr **result_adjoints(Fo *F, const Type *t, const Adj *A) {
  int n = t->kind == TY_TUPLE ? t->u.tuple.n : 1;
  Expr **dy = ARENA_ARRAY(F->a, Expr *, n);
  for (int i = 0; i < n; i++)
    dy[i] = t->kind != TY_TUPLE ? A->sum : A->fields ? A->fields[i].sum : NULL;
  return dy;
}

/* Reports the adjoint code one rule made (bindings [from, block.len)). */
static void report_adjoint(Fo *F, const Bind *b, size_t from) {
  if (!pass_listening(F->pc)) return;
  RwBlock show = {0};
  for (size_t i = from; i < F->block.len; i++)
    rw_block_bind(&show, F->block.items[i].var, F->block.items[i].value, F->block.items[i].span);
  int n = b->gc.nx;
  Expr **dx = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) dx[i] = b->gc.dx[i] ? b->gc.dx[i] : rw_unit(F->a, b->gc.call->span);
  Expr *tail = expr_tuple(F->a, n, dx, b->gc.call->span);
  pass_report(F->pc, "adjoint", b->gc.call, rw_block_finish(F->a, &show, tail), b->gc.call->span);
}

static bool back_call(Fo *F, Bind *b, const Adj *A) {
  const Expr *call = b->gc.call;
  bool any = false;
  for (int i = 0; i < b->gc.nx; i++) any |= grad_differentiable(b->gc.x[i]->ty);
  if (!any) return true;
  const OpGrad *rule = grad_rule(call->u.call.fn->u.op.index);
  if (!rule) return grad_report_missing(F->pc, call), false;
  b->gc.dy = result_adjoints(F, call->ty, A);
  b->gc.dx = ARENA_ARRAY(F->a, Expr *, b->gc.nx ? b->gc.nx : 1);
  memset(b->gc.dx, 0, sizeof(Expr *) * (size_t)(b->gc.nx ? b->gc.nx : 1));
  if (call->ty->kind == TY_TENSOR && !b->gc.dy[0]) return true;
  F->G.span = call->span, F->G.err[0] = 0;
  size_t from = F->block.len;
  if (!rule->backward(&F->G, &b->gc)) return grad_report_rule(F->pc, &F->G, call), false;
  for (int i = 0; i < b->gc.nx; i++) accumulate(F, b->gc.x[i], b->gc.dx[i]);
  report_adjoint(F, b, from);
  return !F->G.err[0] || (grad_report_rule(F->pc, &F->G, call), false);
}

static bool back_one(Fo *F, Bind *b) {
  Adj *A = ptrmap_get(&F->adj, b->var);
  if (adj_empty(A)) return true;
  switch (b->kind) {
    case B_CALL:
      return back_call(F, b, A);
    case B_TUPLE:
      for (int i = 0; i < b->value->u.tuple.n && A->fields; i++) {
        Expr *f = b->value->u.tuple.fields[i];
        if (f->kind == EX_VAR) merge(F, adj_of(F, f->u.var), f->ty, &A->fields[i]);
      }
      return true;
    case B_PROJ: {
      Expr *t = b->value->u.proj.tuple;
      if (t->kind != EX_VAR) return true;
      Adj *T = adj_of(F, t->u.var);
      adj_fields(F, T, t->ty);
      merge(F, &T->fields[b->value->u.proj.index], b->value->ty, A);
      return true;
    }
    default:
      return true;
  }
}

/* ones_like for every float tensor of the value (atom), into A. */
static void seed_into(Fo *F, Adj *A, Expr *atom) {
  const Type *t = atom->ty;
  if (!grad_differentiable(t)) return;
  if (t->kind == TY_TENSOR) {
    add_into(F, A, t, grad_op1(&F->G, "ones_like", atom, NULL));
    return;
  }
  adj_fields(F, A, t);
  for (int i = 0; i < A->n; i++)
    if (grad_differentiable(t->u.tuple.fields[i]))
      seed_into(F, &A->fields[i], grad_proj(&F->G, atom, i));
}

static void seed(Fo *F, Expr *atom) {
  if (atom->kind == EX_VAR) seed_into(F, adj_of(F, atom->u.var), atom);
}

/* A parameter's gradient from its adjoint (zeros / `()` when none). */
static Expr *param_grad(Fo *F, Expr *p, const Adj *A) {
  const Type *t = p->ty;
  if (t->kind == TY_TENSOR) return A && A->sum ? A->sum : grad_op1(&F->G, "zeros_like", p, NULL);
  if (t->kind == TY_TUPLE) {
    int n = t->u.tuple.n;
    Expr **f = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
    for (int i = 0; i < n; i++)
      f[i] = param_grad(F, grad_proj(&F->G, p, i), A && A->fields ? &A->fields[i] : NULL);
    return grad_tuple(&F->G, n, f);
  }
  return rw_unit(F->a, p->span);
}

/* ───────────────────────── the pass ───────────────────────── */

static Function *first_order(Fo *F, const FuncDef *f) {
  Function *fn = f->fn;
  int n = fn->nparams;
  Var **params = ARENA_ARRAY(F->a, Var *, n ? n : 1);
  Expr **pv = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
  Type *fty = f->ty;
  for (int i = 0; i < n; i++) {
    Var *o = fn->params[i];
    params[i] = var_new(F->a, o->name, o->annot, o->span);
    pv[i] = typed_var(F->a, params[i], fty->u.func.params[i]);
    ptrmap_put(&F->subst, o, pv[i]);
  }
  Expr *value = fo_atom(F, fn->body, NULL);
  if (!value) return NULL;
  seed(F, value);
  for (size_t i = F->nbinds; i-- > 0;)
    if (!back_one(F, &F->binds[i])) return NULL;
  Expr **g = ARENA_ARRAY(F->a, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) g[i] = param_grad(F, pv[i], ptrmap_get(&F->adj, params[i]));
  if (F->G.err[0]) return NULL;
  Expr *grads = expr_tuple(F->a, n, g, fn->span);
  Expr *pair[2] = {value, grads};
  Expr *body = rw_block_finish(F->a, &F->block, expr_tuple(F->a, 2, pair, fn->span));
  return rw_function_with(F->a, fn, n, params, NULL, body);
}

/* Whether t is not known before run time (`_`, or a tuple holding one):
 * the gradient's shape and dtype cannot be built for it. */
static bool type_unknown(const Type *t) {
  if (!t || t->kind == TY_INCOMPLETE) return true;
  for (int i = 0; t->kind == TY_TUPLE && i < t->u.tuple.n; i++)
    if (type_unknown(t->u.tuple.fields[i])) return true;
  return false;
}

/* An error for the first parameter of f whose type checking left unknown
 * (`def @sq(%x) { multiply(%x, %x) }`): its gradient would be `()`. */
static bool untyped_param(PassCtx *pc, const FuncDef *f) {
  for (int i = 0; i < f->fn->nparams; i++) {
    if (!type_unknown(f->ty->u.func.params[i])) continue;
    const Var *v = f->fn->params[i];
    char *ty = print_type(f->ty);
    diag_error(pc->d, v->span,
               "Gradient: the type of parameter %%%s of `@%s` is not known (`@%s : %s`), so "
               "its gradient cannot be built",
               v->name, f->name, f->name, ty);
    diag_hint(pc->d, "annotate it (e.g. `%%%s: float32`) and run the pass again", v->name);
    free(ty);
    return true;
  }
  return false;
}

/* The function the pass differentiates, or NULL after an error. */
static const FuncDef *target(PassCtx *pc, Module *in) {
  if (!pc->arg) {
    diag_error(pc->d, pc->where, "Gradient needs the function to differentiate");
    diag_hint(pc->d, "`:pass Gradient @f` at the prompt, `rly --pass Gradient=@f FILE`");
    return NULL;
  }
  const FuncDef *f = module_func(in, pc->arg);
  if (!f) {
    diag_error(pc->d, pc->where, "Gradient: no function `@%s`", pc->arg);
    return NULL;
  }
  if (!f->ty || f->ty->kind != TY_FUNC || f->fn->ntparams) {
    diag_error(pc->d, f->span,
               "Gradient: `@%s` is polymorphic; differentiate a monomorphic "
               "function (give its parameters types)",
               pc->arg);
    return NULL;
  }
  return untyped_param(pc, f) ? NULL : f;
}

Module *pass_gradient(PassCtx *pc, Module *in) {
  const FuncDef *f = target(pc, in);
  if (!f) return NULL;
  pass_enter_def(pc, f);
  pc->hidden = false; /* @f_grad is about @f */
  Fo F = {.pc = pc, .a = pc->a};
  F.G = (GradCx){.a = pc->a, .bind = fo_gbind, .user = &F};
  Module *out = module_copy(in, pc->a);
  const char *name = arena_printf(pc->a, "%s_grad", f->name);
  Function *g = first_order(&F, f);
  bool higher = !g && F.unsupported && pc->d->nerrors == 0;
  ptrmap_free(&F.subst);
  ptrmap_free(&F.adj);
  ptrmap_free(&F.tuples);
  vec_free(&F.inlining);
  rw_block_free(&F.block);
  if (higher) return gradient_higher_order(pc, in, out, f, name) ? out : (module_free(out), NULL);
  if (!g) return module_free(out), NULL;
  FuncDef *nf = ARENA_NEW(pc->a, FuncDef);
  nf->name = name, nf->span = f->span, nf->fn = g;
  module_add(out, (Def){.kind = DEF_FUNC, .u.func = nf});
  return out;
}

/* ───────────────────────── errors ───────────────────────── */

void grad_report_missing(PassCtx *pc, const Expr *call) {
  const char *op = call->u.call.fn->u.op.name;
  diag_error(pc->d, call->span, "`%s` has no gradient (in %s)", op, pc->func ? pc->func : "?");
  diag_hint(pc->d,
            "`rly --list-ops` shows which ops have one; Gradient differentiates through "
            "every float argument");
}

void grad_report_rule(PassCtx *pc, const GradCx *G, const Expr *call) {
  diag_error(pc->d, call->span, "cannot differentiate `%s` (in %s): %s", call->u.call.fn->u.op.name,
             pc->func ? pc->func : "?", G->err[0] ? G->err : "its gradient rule failed");
}
