/* walk.h — the one place that knows each IR node's children: Relay
 * expressions (Expr) and TIR statements and scalar expressions (Stmt,
 * PrimExpr).  Passes, the printer's analyses, structural equality and
 * hashing, the verifier, the interpreter's slot builder and the REPL
 * enumerate children through here instead of switching over every kind.
 *
 * Relay children are numbered in source order, which is also evaluation
 * order: a call's callee then its arguments; a let's value then its body;
 * an if's condition then its branches; a match's scrutinee then its clause
 * bodies; a function's body.  Each child has a role (ExprRole) saying where
 * it sits in the block structure, and each binder (let, free_var, function
 * parameter, pattern variable) is reported with the children that see it.
 * Patterns, attributes and binders are not children.
 *
 * Nothing here recurses on the length of a let chain: expr_walk keeps its
 * own stack.  TIR nesting is shallow; tir_walk recurses.  The TIR functions
 * but stmt_children are in tir_walk.c, which needs only libc: the JIT's
 * code generator module (rly-jit.so, no librly) is built with it, so the
 * JIT, the TIR interpreter, the verifier and equality share one walker.
 *
 * Adding an Expr kind now touches 8 files (it touched 13, and the printer's
 * analyses silently skipped the children of a kind they did not know):
 *   ir/ir.h                    the kind (EXPR_KINDS) and its payload
 *   ir/walk.c                  its children (layout) and binders (expr_binders)
 *   ir/print.c                 how it prints (the printing switch)
 *   parser/parser.c            how it parses
 *   types/typecheck_expr.c     its typing rule
 *   interp/eval.c              how it evaluates
 *   passes/effect_flow.c,      what it means for EffectToState's reference
 *   types/linearity.c          flow and for key linearity
 * plus ir/equal.c only when it holds data besides children and binders (a
 * case in shallow_eq and shallow_hash), and the scalar fast path
 * (interp/fast.c) only to compile it instead of falling back.  Rewriters,
 * ANF/BBNF, FuseOps, the verifier, free variables, slot allocation and the
 * REPL's safety check handle it through this file. */
#ifndef RLY_WALK_H
#define RLY_WALK_H

#include <stdbool.h>

#include "ir/ir.h"
#include "ir/tir.h"
#include "ir/tir_walk.h"

/* ───────────────────────────── Relay ───────────────────────────── */

/* Where a child sits in the block structure. */
typedef enum ExprRole {
  EXPR_OPERAND, /* evaluated for the node, in the enclosing block */
  EXPR_REST,    /* a let / free_var body: the rest of the same block */
  EXPR_BLOCK,   /* a block of its own: function body, if branch, clause, dataflow body */
} ExprRole;

int expr_nchildren(const Expr *e);
Expr *expr_child(const Expr *e, int i);
ExprRole expr_child_role(const Expr *e, int i);
/* Appends e's children to out, in source order. */
void expr_children(const Expr *e, PtrVec *out);
/* Where child i is held: an address that identifies the child's position
 * for the node's lifetime (the printer keys blocks by it). */
Expr *const *expr_child_slot(const Expr *e, int i);
/* The attributes a node carries (a call's, a function's), or NULL.  Their
 * expressions (AV_EXPR) are not children. */
const Attrs *expr_attrs(const Expr *e);
/* The rest of the block after a binding (a let / free_var body), else NULL.
 * Loops over a let chain follow this instead of recursing. */
Expr *expr_rest(const Expr *e);

/* e with new children, kids[i] replacing expr_child(e, i) (n must match);
 * e itself when every child is the same pointer.  Everything else (binders,
 * patterns, attributes, span) is shared; e.ty is not copied. */
Expr *expr_rebuild(Arena *a, Expr *e, Expr **kids, int n);
/* A deep copy of root: every node and out-of-line block (argument and
 * field arrays, match clauses, a function's Function) copied into a, with
 * its type; binders (Vars), patterns, attributes, types and constants'
 * tensors shared.  What a type check writes (Expr.ty) then stays private
 * to the copy.  Iterative: a chain of any length costs no C stack. */
Expr *expr_clone(Arena *a, const Expr *root);

/* Pre-order visit of every node under root, children in source order.
 * visit returns whether to descend into e's children.  Iterative: a chain
 * of any length costs no C stack. */
typedef bool (*ExprVisitFn)(void *ctx, Expr *e);
void expr_walk(Expr *root, ExprVisitFn visit, void *ctx);

typedef void (*VarFn)(void *ctx, Var *v);
/* Every variable bound by the pattern, left to right. */
void pattern_vars(const Pattern *p, VarFn f, void *ctx);
/* The variables e binds that are in scope in child `child` (a let's in its
 * value too: a let may be recursive; a clause's pattern variables in its
 * body only).  child < 0: every variable e binds, once each, in order. */
void expr_binders(const Expr *e, int child, VarFn f, void *ctx);

/* The TIR walker: ir/tir_walk.h (included above). */

#endif
