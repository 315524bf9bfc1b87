/* effect_to_state.c — EffectToState (seed 001, A1 → A2): every function
 * that reads or writes a state global, directly or through anything it
 * calls, takes the state as extra last parameter(s) and returns
 * (value, new_state); afterwards no reference to a state global remains.
 *
 * The analysis (effect_flow.c, effect_int.h) gives each def and closure the
 * set of globals it threads.  The rewrite walks each stateful body block by
 * block, keeping the CURRENT value of each global (an atom: a parameter, a
 * variable, a projection of a call's result):
 *   drop-ref     `%r = ref(@g)` disappears (%r is an alias of the state)
 *   read-state   `%r^` / `@g` become the current state (a let of one is
 *                substituted away)
 *   write-state  `%r := v` makes v the current state and yields ()
 *   thread-call  a call to a stateful def or closure gets the states as
 *                extra arguments; its result pair is bound (`%p = f(..)`)
 *                and `%p.1` becomes the current state, `%p.0` the value —
 *                in tail position the call is returned as is (tail calls
 *                stay tail calls)
 *   thread-if    a branch or match clause that touches the state returns
 *                (value, state); untouched ones pass the state through
 *   return-state a block ends in (value, current state); a state variable
 *                bound to a projection and used nowhere else is inlined
 *                there (`(%2.0, %2.1)` rather than `%3 = %2.1; (%2.0, %3)`)
 *   state-param  a stateful def or closure gets its state parameters
 *   wrap-def     a def used as a value where stateful functions flow gets
 *                a wrapper with the state convention
 * Code that does not touch the state is shared untouched; defs that never
 * touch it are left alone.  Names: `%state` for @prng_state, `%g` for
 * another global @g.  Evaluation order is kept: an operand before one that
 * touches the state is bound first unless it is pure (rw_is_pure). */
#include <stdlib.h>
#include <string.h>

#include "passes/effect_int.h"

typedef struct Th {
  Eff *E;
  uint64_t mask;
  Expr *S[EFF_MAX_GLOBALS];
  RwBlock blk;
} Th;

static Expr *th_expr(Th *t, Expr *e);
static Expr *th_tail(Th *t, Expr *e);
static Expr *conv(Eff *E, Expr *e);

/* ───────────────────────────── helpers ───────────────────────────── */

static const char *state_name(Eff *E, int g) {
  return E->globals[g]->builtin ? "state" : E->globals[g]->name;
}

static Type *state_type(Eff *E, int g) {
  return E->globals[g]->type ? E->globals[g]->type : type_randstate(E->a, E->globals[g]->span);
}

static int popcount(uint64_t m) { return __builtin_popcountll(m); }

/* The state parameters of mask m, with S[g] set to them. */
static int state_params(Eff *E, uint64_t m, Span sp, Var **out, Expr **S) {
  int k = 0;
  for (int g = 0; g < E->nglobals; g++) {
    if (!(m >> g & 1)) continue;
    Var *v = var_new(E->a, state_name(E, g), state_type(E, g), sp);
    out[k++] = v;
    S[g] = expr_var(E->a, v, sp);
  }
  return k;
}

/* (ret, T_g...) for a stateful signature; NULL stays NULL. */
static Type *state_ret(Eff *E, Type *ret, uint64_t m) {
  if (!ret) return NULL;
  Type *f[EFF_MAX_GLOBALS + 1];
  int k = 0;
  f[k++] = ret;
  for (int g = 0; g < E->nglobals; g++)
    if (m >> g & 1) f[k++] = state_type(E, g);
  return type_tuple(E->a, k, f, ret->span);
}

/* A function type of class n in the state convention (recursively). */
static Type *conv_type(Eff *E, Type *t, int n) {
  if (!t || n < 0 || t->kind != TY_FUNC) return t;
  uint64_t m = eff_node_mask(E, n);
  int np = t->u.func.nparams, k = np;
  Type **ps = ARENA_ARRAY(E->a, Type *, np + popcount(m) + 1);
  bool changed = m != 0;
  for (int i = 0; i < np; i++) {
    ps[i] = conv_type(E, t->u.func.params[i], eff_child_param(E, n, i));
    changed |= ps[i] != t->u.func.params[i];
  }
  Type *ret = conv_type(E, t->u.func.ret, eff_child_ret(E, n));
  changed |= ret != t->u.func.ret;
  if (!changed) return t;
  for (int g = 0; g < E->nglobals; g++)
    if (m >> g & 1) ps[k++] = state_type(E, g);
  if (m) ret = state_ret(E, ret, m);
  return type_func(E->a, k, ps, ret, t->u.func.ntparams, t->u.func.tparams, t->span);
}

/* A binder whose annotation is a function type in a stateful class gets a
 * new variable with the converted annotation. */
static Var *conv_var(Eff *E, Var *v) {
  if (!v->annot || v->annot->kind != TY_FUNC) return v;
  Type *t = conv_type(E, v->annot, eff_var_node_of(E, v));
  if (t == v->annot) return v;
  Var *n = var_new(E->a, v->name, t, v->span);
  n->is_graph = v->is_graph;
  ptrmap_put(&E->rw.subst, v, expr_var(E->a, n, v->span));
  return n;
}

static Expr *bind_temp(Th *t, Expr *value, Span sp) {
  Var *v = rw_graph_var(t->E->a, sp);
  rw_block_bind(&t->blk, v, value, sp);
  return expr_var(t->E->a, v, sp);
}

/* The current state of g, for one use (projections are copied per use so
 * no node is shared). */
static Expr *hand(Th *t, int g) {
  Expr *s = t->S[g];
  if (s->kind == EX_VAR) {
    uintptr_t n = (uintptr_t)ptrmap_get(&t->E->handed, s->u.var);
    ptrmap_put(&t->E->handed, s->u.var, (void *)(n + 1));
  }
  if (s->kind == EX_PROJ) return expr_proj(t->E->a, s->u.proj.tuple, s->u.proj.index, s->span);
  return s;
}

/* After a stateful call or branch bound to a fresh %p: value %p.0, state %p.k. */
static Expr *unpack(Th *t, Expr *pair, uint64_t m, Span sp) {
  Expr *p = bind_temp(t, pair, sp);
  int k = 1;
  for (int g = 0; g < t->E->nglobals; g++)
    if (m >> g & 1) t->S[g] = expr_proj(t->E->a, p, k++, sp);
  return expr_proj(t->E->a, p, 0, sp);
}

/* ───────────────────────────── operands ───────────────────────────── */

static void th_operands(Th *t, int n, Expr **in, Expr **out) {
  int last = -1;
  for (int i = 0; i < n; i++)
    if (eff_touches(t->E, in[i])) last = i;
  for (int i = 0; i < n; i++) {
    out[i] = th_expr(t, in[i]);
    if (i < last && !rw_is_pure(t->E->in, out[i])) out[i] = bind_temp(t, out[i], in[i]->span);
  }
}

static Expr *th_rebuild(Th *t, Expr *e) {
  PtrVec k = {0};
  expr_children(e, &k);
  int n = (int)k.len;
  Expr **out = ARENA_ARRAY(&t->E->pc->scratch, Expr *, n ? n : 1);
  th_operands(t, n, (Expr **)k.items, out);
  vec_free(&k);
  return n ? expr_rebuild(t->E->a, e, out, n) : e;
}

/* ───────────────────────────── calls ───────────────────────────── */

static bool callee_is_value(const Expr *fn) {
  return fn->kind != EX_OP && fn->kind != EX_CTOR && fn->kind != EX_GLOBAL;
}

/* thread-call: a call through something that threads state gets the current
 * states as extra arguments.  A tail call with the block's own mask is
 * returned as is (it stays a tail call); otherwise its result is unpacked. */
static Expr *th_call(Th *t, Expr *e, bool tail) {
  Eff *E = t->E;
  int n = e->u.call.nargs, skip = callee_is_value(e->u.call.fn) ? 0 : 1;
  Expr **in = ARENA_ARRAY(&E->pc->scratch, Expr *, n + 1);
  Expr **out = ARENA_ARRAY(E->a, Expr *, n + 1 + E->nglobals);
  in[0] = out[0] = e->u.call.fn;
  if (n) memcpy(in + 1, e->u.call.args, sizeof(Expr *) * (size_t)n);
  th_operands(t, n + 1 - skip, in + skip, out + skip);
  uint64_t m = eff_callee_mask(E, e);
  if (!m) return expr_rebuild(E->a, e, out, n + 1);
  int k = n;
  for (int g = 0; g < E->nglobals; g++)
    if (m >> g & 1) out[1 + k++] = hand(t, g);
  Expr *call = expr_call(E->a, out[0], k, out + 1, e->u.call.attrs, e->span);
  pass_report(E->pc, "thread-call", e, call, e->span);
  if (tail && m == t->mask) return call;
  return unpack(t, call, m, e->span);
}

/* ───────────────────────────── branches ───────────────────────────── */

/* A nested block (branch, clause) threading the same states from t. */
static Expr *th_block(Th *t, Expr *e) {
  Th b = {.E = t->E, .mask = t->mask};
  memcpy(b.S, t->S, sizeof b.S);
  Expr *tail = th_tail(&b, e);
  return rw_block_finish(t->E->a, &b.blk, tail);
}

/* An if or match: the condition or scrutinee is an operand, the branches
 * are blocks. */
static Expr *th_branches(Th *t, Expr *e, bool tail) {
  Eff *E = t->E;
  int n = expr_nchildren(e);
  Expr **k = ARENA_ARRAY(E->a, Expr *, n);
  bool touched = false;
  for (int i = 0; i < n; i++) {
    Expr *c = expr_child(e, i);
    if (expr_child_role(e, i) == EXPR_BLOCK)
      touched |= eff_touches(E, c);
    else
      k[i] = th_expr(t, c);
  }
  for (int i = 0; i < n; i++) {
    Expr *c = expr_child(e, i);
    if (expr_child_role(e, i) == EXPR_BLOCK) k[i] = touched ? th_block(t, c) : conv(E, c);
  }
  Expr *r = expr_rebuild(E->a, e, k, n);
  if (!touched) return r;
  pass_report(E->pc, "thread-if", e, r, e->span);
  return tail ? r : unpack(t, r, t->mask, e->span);
}

/* ───────────────────────────── values ───────────────────────────── */

static Expr *th_write(Th *t, Expr *e, int g) {
  Expr *v = th_expr(t, e->u.ref_write.value);
  if (!rw_is_atom(t->E->in, v) && v->kind != EX_PROJ) {
    Var *s = var_new(t->E->a, state_name(t->E, g), NULL, e->span);
    rw_block_bind(&t->blk, s, v, e->span);
    v = expr_var(t->E->a, s, e->span);
  }
  t->S[g] = v;
  Expr *unit = rw_unit(t->E->a, e->span);
  pass_report(t->E->pc, "write-state", e, v, e->span);
  return unit;
}

static Expr *th_read(Th *t, Expr *e, int g) {
  Expr *s = hand(t, g);
  pass_report(t->E->pc, "read-state", e, s, e->span);
  return s;
}

static int state_access(Eff *E, const Expr *e) {
  if (e->kind == EX_GLOBAL) return eff_global_index(E, e->u.global.name);
  if (e->kind == EX_REF_READ) return eff_ref_target(E, e->u.ref_read.ref);
  if (e->kind == EX_REF_WRITE) return eff_ref_target(E, e->u.ref_write.ref);
  return -1;
}

/* One `let %v = value` of a stateful block. */
static void th_binding(Th *t, Expr *let) {
  Eff *E = t->E;
  Var *v = let->u.let.var;
  Expr *value = let->u.let.value;
  if (ptrmap_has(&E->alias, v)) {
    pass_report(E->pc, "drop-ref", value, NULL, let->span);
    return;
  }
  if (!eff_touches(E, value)) {
    Expr *c = conv(E, value);
    rw_block_bind(&t->blk, conv_var(E, v), c, let->span);
    return;
  }
  Expr *r = th_expr(t, value);
  if (state_access(E, value) >= 0)
    ptrmap_put(&E->rw.subst, v, r);
  else
    rw_block_bind(&t->blk, conv_var(E, v), r, let->span);
}

/* The leading bindings of e go into t's block; returns what follows them. */
static Expr *th_chain(Th *t, Expr *e) {
  while (e->kind == EX_LET || e->kind == EX_FREE_VAR) {
    if (e->kind == EX_FREE_VAR) {
      rw_block_free_var(&t->blk, e->u.free_var.var, e->span);
      e = e->u.free_var.body;
    } else {
      th_binding(t, e);
      e = e->u.let.body;
    }
  }
  return e;
}

static Expr *th_expr(Th *t, Expr *e) {
  Eff *E = t->E;
  if (!eff_touches(E, e)) return conv(E, e);
  int g = state_access(E, e);
  switch (e->kind) {
    case EX_GLOBAL:
      return th_read(t, e, g);
    case EX_REF_READ:
      return g >= 0 ? th_read(t, e, g) : th_rebuild(t, e);
    case EX_REF_WRITE:
      return g >= 0 ? th_write(t, e, g) : th_rebuild(t, e);
    case EX_CALL:
      return th_call(t, e, false);
    case EX_LET:
    case EX_FREE_VAR:
      return th_expr(t, th_chain(t, e));
    case EX_IF:
    case EX_MATCH:
      return th_branches(t, e, false);
    default:
      return th_rebuild(t, e);
  }
}

/* ───────────────────────────── block ends ───────────────────────────── */

/* The binding of x in t's block when it is a projection (index), or -1. */
static long proj_binding(Th *t, const Var *x) {
  for (size_t i = t->blk.len; i > 0; i--) {
    const RwBinding *b = &t->blk.items[i - 1];
    if (b->var == x) return b->value && b->value->kind == EX_PROJ ? (long)(i - 1) : -1;
  }
  return -1;
}

/* The block's final state of g: `%x = %p.1; ...; (v, %x)` with %x used
 * nowhere else becomes `(v, %p.1)`. */
static Expr *final_state(Th *t, int g) {
  Eff *E = t->E;
  Expr *s = t->S[g];
  if (s->kind == EX_VAR && !ptrmap_get(&E->handed, s->u.var) &&
      (uintptr_t)ptrmap_get(&E->uses, s->u.var) == 1) {
    long i = proj_binding(t, s->u.var);
    if (i >= 0) {
      Expr *value = t->blk.items[i].value;
      memmove(t->blk.items + i, t->blk.items + i + 1,
              (t->blk.len - (size_t)i - 1) * sizeof *t->blk.items);
      t->blk.len--;
      return value;
    }
  }
  return hand(t, g);
}

static Expr *state_tuple(Th *t, Expr *orig, Expr *v) {
  Expr *f[EFF_MAX_GLOBALS + 1];
  int k = 0;
  f[k++] = v;
  for (int g = 0; g < t->E->nglobals; g++)
    if (t->mask >> g & 1) f[k++] = final_state(t, g);
  Expr *tup = expr_tuple(t->E->a, k, f, orig->span);
  pass_report(t->E->pc, "return-state", orig, tup, orig->span);
  return tup;
}

/* The end of a stateful block: an expression of (value, states...). */
static Expr *th_tail(Th *t, Expr *e) {
  Eff *E = t->E;
  e = th_chain(t, e);
  if (!eff_touches(E, e)) return state_tuple(t, e, conv(E, e));
  if (e->kind == EX_CALL && eff_callee_mask(E, e) == t->mask) return th_call(t, e, true);
  if (e->kind == EX_IF || e->kind == EX_MATCH) return th_branches(t, e, true);
  return state_tuple(t, e, th_expr(t, e));
}

/* ───────────────────────────── functions ───────────────────────────── */

static char *signature(const Function *f, const char *name);

/* params (converted) + state params; the body threads mask m from them.
 * For a def (name set) the new signature is reported before the body. */
static Function *stateful_fn(Eff *E, Function *f, uint64_t m, int node, const char *name) {
  int np = f->nparams;
  Var **ps = ARENA_ARRAY(E->a, Var *, np + popcount(m) + 1);
  for (int i = 0; i < np; i++) ps[i] = conv_var(E, f->params[i]);
  Th t = {.E = E, .mask = m};
  int k = np + state_params(E, m, f->span, ps + np, t.S);
  Type *ret = state_ret(E, conv_type(E, f->ret, eff_child_ret(E, node)), m);
  Function *g = rw_function_with(E->a, f, k, ps, ret, f->body);
  if (name && pass_listening(E->pc)) {
    char *b = signature(f, name), *a = signature(g, name);
    pass_report_text(E->pc, "state-param", b, a, f->span);
    free(b);
    free(a);
  }
  g->body = rw_block_finish(E->a, &t.blk, th_tail(&t, f->body));
  return g;
}

static Expr *conv_closure(Eff *E, Expr *e) {
  const Unit *u = eff_fn_unit(E, e);
  uint64_t m = eff_node_mask(E, u->node);
  Function *f = stateful_fn(E, e->u.fn, m, u->node, NULL);
  Expr *r = expr_fn(E->a, f, e->span);
  pass_report(E->pc, "state-param", e, r, e->span);
  return r;
}

/* `@f` as a value in a class of mask m ≠ @f's own: fn (%a.., %state..) { @f(%a..) threaded }. */
static Expr *wrap_def(Eff *E, Expr *e, const FuncDef *fd, uint64_t m) {
  int np = fd->fn->nparams;
  Var **ps = ARENA_ARRAY(E->a, Var *, np + popcount(m) + 1);
  Expr **args = ARENA_ARRAY(E->a, Expr *, np ? np : 1);
  for (int i = 0; i < np; i++) {
    ps[i] = var_new(E->a, fd->fn->params[i]->name, NULL, e->span);
    args[i] = expr_var(E->a, ps[i], e->span);
  }
  Th t = {.E = E, .mask = m};
  int k = np + state_params(E, m, e->span, ps + np, t.S);
  Expr *call = expr_call(E->a, expr_global(E->a, fd->name, e->span), np, args, NULL, e->span);
  Expr *body = rw_block_finish(E->a, &t.blk, th_tail(&t, call));
  Function proto = {.span = e->span};
  Expr *r = expr_fn(E->a, rw_function_with(E->a, &proto, k, ps, NULL, body), e->span);
  pass_report(E->pc, "wrap-def", e, r, e->span);
  return r;
}

/* ───────────────────────────── conversion of state-free code ───────────────────────────── */

static Expr *conv_global(Eff *E, Expr *e) {
  const Unit *u = eff_def_unit(E, e->u.global.name);
  if (!u) return e;
  uint64_t m = eff_node_mask(E, u->node);
  return m == u->mask ? e : wrap_def(E, e, u->def, m);
}

/* A function that does not thread state: its body and parameters are
 * converted, and a result annotation of a (now stateful) function type. */
static Function *conv_pure_fn(Eff *E, Function *f, int node) {
  Function *g = rw_function(&E->rw, f);
  Type *ret = conv_type(E, f->ret, eff_child_ret(E, node));
  if (ret == f->ret) return g;
  return rw_function_with(E->a, g, g->nparams, g->params, ret, g->body);
}

/* Rewriter hook for code that does not touch the state: closures of a
 * stateful class take the state convention, a def used as a value may need
 * a wrapper, but the callee of a direct call is left as it is. */
static Expr *conv_pre(Rewriter *rw, Expr *e) {
  Eff *E = rw->user;
  if (e->kind == EX_FN) {
    const Unit *u = eff_fn_unit(E, e);
    if (!u) return NULL;
    if (eff_node_mask(E, u->node)) return conv_closure(E, e);
    Function *f = conv_pure_fn(E, e->u.fn, u->node);
    return f == e->u.fn ? e : expr_fn(E->a, f, e->span);
  }
  if (e->kind == EX_GLOBAL) return conv_global(E, e);
  if (e->kind == EX_CALL && e->u.call.fn->kind == EX_GLOBAL) {
    RLY_ASSERT(eff_callee_mask(E, e) == 0);
    int n = e->u.call.nargs;
    Expr **k = ARENA_ARRAY(E->a, Expr *, n + 1);
    k[0] = e->u.call.fn;
    for (int i = 0; i < n; i++) k[1 + i] = rw_expr(rw, e->u.call.args[i]);
    return expr_rebuild(E->a, e, k, n + 1);
  }
  return NULL;
}

static Var *conv_bind(Rewriter *rw, Var *v) { return conv_var(rw->user, v); }

static Expr *conv(Eff *E, Expr *e) { return rw_expr(&E->rw, e); }

/* ───────────────────────────── defs ───────────────────────────── */

static char *signature(const Function *f, const char *name) {
  Arena a;
  arena_init(&a);
  Function head = *f;
  head.body = rw_unit(&a, f->span);
  FuncDef fd = {.name = name, .fn = &head};
  StrBuf b = {0};
  PrintOptions opt = {0};
  Module *m = module_new(&a);
  print_func_def_to(&b, m, &fd, opt);
  module_free(m);
  arena_free(&a);
  char *nl = b.data ? strchr(b.data, '{') : NULL;
  if (nl) *nl = 0, b.len = (size_t)(nl - b.data);
  while (b.len && b.data[b.len - 1] == ' ') b.data[--b.len] = 0;
  return sb_take(&b);
}

static void rewrite_def(Eff *E, Module *out, const FuncDef *fd) {
  const Unit *u = eff_def_unit(E, fd->name);
  pass_enter_def(E->pc, fd);
  Function *f;
  if (u->mask) {
    f = stateful_fn(E, fd->fn, u->mask, u->node, fd->name);
  } else {
    f = conv_pure_fn(E, fd->fn, u->node);
  }
  if (f != fd->fn) pass_replace_def(E->pc, out, fd, f);
}

static bool leftover_visit(void *ctx, Expr *e) {
  Eff *E = ctx;
  bool bad = (e->kind == EX_GLOBAL && eff_global_index(E, e->u.global.name) >= 0) ||
             (e->kind == EX_REF_NEW && eff_ref_target(E, e) >= 0);
  if (bad && !E->failed) {
    diag_error(E->pc->d, e->span, "EffectToState: internal error: a state reference survived");
    E->failed = true;
  }
  return !bad;
}

static void count_uses(Eff *E) {
  for (int i = 0; i < E->in->ndefs; i++)
    if (E->in->defs[i].kind == DEF_FUNC) rw_count_uses(E->in->defs[i].u.func->fn->body, &E->uses);
}

/* The pass: analyse, rewrite every def, then verify that no state reference
 * survived.  Any failure discards the copy, so a caller never sees a
 * partly threaded module. */
Module *pass_effect_to_state(PassCtx *pc, Module *in) {
  Eff E = {.pc = pc, .in = in, .a = pc->a};
  E.rw = (Rewriter){.a = pc->a, .pre = conv_pre, .bind = conv_bind, .user = &E};
  Module *out = NULL;
  if (eff_analyze(&E)) {
    count_uses(&E);
    out = module_copy(in, pc->a);
    for (int i = 0; i < in->ndefs && !pc->stopped; i++)
      if (in->defs[i].kind == DEF_FUNC) rewrite_def(&E, out, in->defs[i].u.func);
    for (int i = 0; i < out->ndefs && !E.failed && !pc->stopped; i++)
      if (out->defs[i].kind == DEF_FUNC)
        expr_walk(out->defs[i].u.func->fn->body, leftover_visit, &E);
  }
  eff_free(&E);
  if (E.failed && out) {
    module_free(out);
    out = NULL;
  }
  return out;
}
