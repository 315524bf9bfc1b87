/* walk.c — children, roles, binders and walks of Relay nodes, and the
 * list form of a TIR statement's children (ir/walk.h; the rest of the TIR
 * side is in tir_walk.c).
 *
 * Every Relay kind's children are described once, by layout(): up to three
 * fixed slots, then a run of slots `stride` bytes apart (call arguments, in
 * the node; tuple fields and clause bodies, out of line).  Reading a child, rebuilding a node and
 * walking all go through that description, so a new kind is one case here.
 * A switch rather than a table of offsets: slots behind a pointer (a
 * function's body) and strided runs would need a small language of their
 * own, and the switch already is the one place. */
#include "ir/walk.h"

#include <stdlib.h>
#include <string.h>

/* ───────────────────────────── layouts ───────────────────────────── */

typedef struct Layout {
  int nfix, nrep;
  Expr **fix[3];
  ExprRole fix_role[3];
  char *rep; /* the first repeated slot */
  size_t stride;
  ExprRole rep_role;
  /* The out-of-line block holding slots (an argument array, the clause
   * array, the Function), which a rebuilt node copies instead of sharing;
   * NULL when every slot is in the node. */
  void *box;
  size_t box_size;
} Layout;

static void fix(Layout *l, Expr **slot, ExprRole r) {
  l->fix_role[l->nfix] = r;
  l->fix[l->nfix++] = slot;
}

/* n slots `stride` bytes apart, the first `off` bytes into the array that
 * *field points to (size bytes in all).  No address is formed when n is 0:
 * the array may then be NULL. */
static void rep(Layout *l, void *field, size_t size, int n, size_t off, size_t stride, ExprRole r) {
  char *base;
  memcpy(&base, field, sizeof base);
  l->nrep = n, l->stride = stride, l->rep_role = r;
  l->rep = n ? base + off : NULL;
  l->box = field, l->box_size = size;
}

/* n slots in the node itself (a call's arguments): nothing out of line. */
static void rep_inline(Layout *l, Expr **first, int n, ExprRole r) {
  l->nrep = n, l->stride = sizeof(Expr *), l->rep_role = r;
  l->rep = n ? (char *)first : NULL;
}

#define REP(l, arr, n, T, member, role) \
  rep(l, &(arr), sizeof(T) * (size_t)(n), n, offsetof(T, member), sizeof(T), role)
#define REP_PTRS(l, arr, n, role) \
  rep(l, &(arr), sizeof(Expr *) * (size_t)(n), n, 0, sizeof(Expr *), role)

/* The one switch over what each kind holds as children. */
static Layout layout(Expr *e) {
  Layout l = {0};
  switch (e->kind) {
    case EX_CONST:
    case EX_VAR:
    case EX_GLOBAL:
    case EX_OP:
    case EX_CTOR:
      break;
    case EX_CALL:
      fix(&l, &e->u.call.fn, EXPR_OPERAND);
      rep_inline(&l, e->u.call.args, e->u.call.nargs, EXPR_OPERAND);
      break;
    case EX_TUPLE:
      REP_PTRS(&l, e->u.tuple.fields, e->u.tuple.n, EXPR_OPERAND);
      break;
    case EX_PROJ:
      fix(&l, &e->u.proj.tuple, EXPR_OPERAND);
      break;
    case EX_LET:
      fix(&l, &e->u.let.value, EXPR_OPERAND);
      fix(&l, &e->u.let.body, EXPR_REST);
      break;
    case EX_FREE_VAR:
      fix(&l, &e->u.free_var.body, EXPR_REST);
      break;
    case EX_FN:
      fix(&l, &e->u.fn->body, EXPR_BLOCK);
      l.box = &e->u.fn, l.box_size = sizeof(Function);
      break;
    case EX_IF:
      fix(&l, &e->u.if_.cond, EXPR_OPERAND);
      fix(&l, &e->u.if_.then_, EXPR_BLOCK);
      fix(&l, &e->u.if_.else_, EXPR_BLOCK);
      break;
    case EX_MATCH:
      fix(&l, &e->u.match.scrut, EXPR_OPERAND);
      REP(&l, e->u.match.clauses, e->u.match.n, MatchClause, body, EXPR_BLOCK);
      break;
    case EX_REF_NEW:
      fix(&l, &e->u.ref_new.init, EXPR_OPERAND);
      break;
    case EX_REF_READ:
      fix(&l, &e->u.ref_read.ref, EXPR_OPERAND);
      break;
    case EX_REF_WRITE:
      fix(&l, &e->u.ref_write.ref, EXPR_OPERAND);
      fix(&l, &e->u.ref_write.value, EXPR_OPERAND);
      break;
    case EX_DATAFLOW:
      fix(&l, &e->u.dataflow.body, EXPR_BLOCK);
      break;
  }
  return l;
}

static int count(const Layout *l) { return l->nfix + l->nrep; }

static Expr **slot(const Layout *l, int i) {
  RLY_ASSERT(i >= 0 && i < count(l));
  if (i < l->nfix) return l->fix[i];
  return (Expr **)(void *)(l->rep + (size_t)(i - l->nfix) * l->stride);
}

/* ───────────────────────────── children ───────────────────────────── */

/* The layouts only read through e; the casts let one function serve both. */
int expr_nchildren(const Expr *e) {
  Layout l = layout((Expr *)e);
  return count(&l);
}

Expr *expr_child(const Expr *e, int i) {
  Layout l = layout((Expr *)e);
  return *slot(&l, i);
}

ExprRole expr_child_role(const Expr *e, int i) {
  Layout l = layout((Expr *)e);
  RLY_ASSERT(i >= 0 && i < count(&l));
  return i < l.nfix ? l.fix_role[i] : l.rep_role;
}

Expr *const *expr_child_slot(const Expr *e, int i) {
  Layout l = layout((Expr *)e);
  return slot(&l, i);
}

const Attrs *expr_attrs(const Expr *e) {
  if (e->kind == EX_CALL) return e->u.call.attrs;
  if (e->kind == EX_FN) return e->u.fn->attrs;
  return NULL;
}

void expr_children(const Expr *e, PtrVec *out) {
  Layout l = layout((Expr *)e);
  for (int i = 0; i < count(&l); i++) vec_push(out, *slot(&l, i));
}

Expr *expr_rest(const Expr *e) {
  Layout l = layout((Expr *)e);
  int n = count(&l);
  return n && n <= l.nfix && l.fix_role[n - 1] == EXPR_REST ? *l.fix[n - 1] : NULL;
}

/* ───────────────────────────── rebuilding ───────────────────────────── */

static bool same_children(const Layout *l, Expr **kids, int n) {
  for (int i = 0; i < n; i++)
    if (*slot(l, i) != kids[i]) return false;
  return true;
}

/* r is a fresh copy of a node: its box is copied so writing its slots
 * leaves the original alone.  memcpy: the box field may be any pointer type. */
static void own_box(Arena *a, Layout *l, Expr *r) {
  if (!l->box || !l->box_size) return;
  void *old, *copy;
  memcpy(&old, l->box, sizeof old);
  copy = arena_memdup(a, old, l->box_size);
  memcpy(l->box, &copy, sizeof copy);
  *l = layout(r);
}

Expr *expr_rebuild(Arena *a, Expr *e, Expr **kids, int n) {
  Layout l = layout(e);
  RLY_ASSERT(count(&l) == n);
  if (same_children(&l, kids, n)) return e;
  Expr *r = expr_copy(a, e);
  r->ty = NULL;
  Layout lr = layout(r);
  own_box(a, &lr, r);
  for (int i = 0; i < n; i++) *slot(&lr, i) = kids[i];
  return r;
}

/* Each node is copied (with its box) where its parent's copy holds it:
 * the stack pairs a slot of a copied node with the original child. */
Expr *expr_clone(Arena *a, const Expr *root) {
  Expr *out = NULL;
  PtrVec todo = {0};
  if (root) vec_push(&todo, &out), vec_push(&todo, (void *)root);
  while (todo.len) {
    Expr *src = vec_pop(&todo), **dst = vec_pop(&todo);
    Expr *r = expr_copy(a, src);
    Layout l = layout(r);
    own_box(a, &l, r);
    *dst = r;
    for (int i = count(&l); i-- > 0;)
      if (*slot(&l, i)) vec_push(&todo, slot(&l, i)), vec_push(&todo, *slot(&l, i));
  }
  vec_free(&todo);
  return out;
}

/* ───────────────────────────── walking ───────────────────────────── */

void expr_walk(Expr *root, ExprVisitFn visit, void *ctx) {
  PtrVec stack = {0};
  if (root) vec_push(&stack, root);
  while (stack.len) {
    Expr *e = vec_pop(&stack);
    if (!visit(ctx, e)) continue;
    Layout l = layout(e);
    for (int i = count(&l); i-- > 0;) {
      Expr *c = *slot(&l, i);
      if (c) vec_push(&stack, c);
    }
  }
  vec_free(&stack);
}

/* ───────────────────────────── binders ───────────────────────────── */

void pattern_vars(const Pattern *p, VarFn f, void *ctx) {
  switch (p->kind) {
    case PAT_WILD:
      return;
    case PAT_VAR:
      f(ctx, p->u.var);
      return;
    case PAT_CTOR:
      for (int i = 0; i < p->u.ctor.n; i++) pattern_vars(p->u.ctor.sub[i], f, ctx);
      return;
    case PAT_TUPLE:
      for (int i = 0; i < p->u.tuple.n; i++) pattern_vars(p->u.tuple.sub[i], f, ctx);
      return;
  }
}

void expr_binders(const Expr *e, int child, VarFn f, void *ctx) {
  switch (e->kind) {
    case EX_LET:
      f(ctx, e->u.let.var);
      return;
    case EX_FREE_VAR:
      f(ctx, e->u.free_var.var);
      return;
    case EX_FN:
      for (int i = 0; i < e->u.fn->nparams; i++) f(ctx, e->u.fn->params[i]);
      return;
    case EX_MATCH:
      for (int i = 0; i < e->u.match.n; i++)
        if (child < 0 || child == i + 1) pattern_vars(e->u.match.clauses[i].pat, f, ctx);
      return;
    default:
      return;
  }
}

/* ──────────────────────────────── TIR ──────────────────────────────── */

static void push_kid(PtrVec *v, const void *p) {
  if (v) vec_push(v, (void *)p);
}

typedef struct Lists {
  PtrVec *exprs, *stmts;
} Lists;

static void list_expr(void *ctx, PrimExpr *e) { push_kid(((Lists *)ctx)->exprs, e); }
static void list_stmt(void *ctx, Stmt *s) { push_kid(((Lists *)ctx)->stmts, s); }

void stmt_children(const Stmt *s, PtrVec *exprs, PtrVec *stmts) {
  Lists l = {exprs, stmts};
  TirChildFns f = {list_expr, list_stmt, &l};
  stmt_each_child(s, &f);
}
