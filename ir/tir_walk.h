/* tir_walk.h — the TIR half of the one walker (ir/walk.h has the Relay
 * half and the rules they share): children, binders and a pre-order visit
 * of statements and scalar expressions.  Implemented in tir_walk.c, which
 * needs only libc, so the JIT's code generator module and the run time use
 * it without Relay's declarations. */
#ifndef RLY_TIR_WALK_H
#define RLY_TIR_WALK_H

#include <stdbool.h>

#include "ir/tir.h"

/* e's operands as an array of *n: a load's indices, an intrinsic's
 * arguments, or tmp filled with the operands of the other kinds. */
PrimExpr *const *prim_expr_children(const PrimExpr *e, PrimExpr *tmp[2], int *n);

/* Whether a and b are the same index expression: equal integers of one
 * dtype, one variable, the same binary operator over same operands, or
 * the same cast of a same operand (other kinds compare equal only as one
 * node). */
bool prim_expr_same(const PrimExpr *a, const PrimExpr *b);

/* Calls expr on each of s's scalar expressions, then stmt on each of its
 * sub-statements, in source order (either callback may be NULL).  Optional
 * parts are NULL entries, so positions depend only on the kind and counts:
 * a loop's begins, one per variable as tir_for_lo gives them (NULL for 0,
 * written or not), then its ends; a block's iteration bindings, then its
 * init and body; an if's else.  Allocates nothing. */
typedef struct TirChildFns {
  void (*expr)(void *ctx, PrimExpr *e);
  void (*stmt)(void *ctx, Stmt *s);
  void *ctx;
} TirChildFns;
void stmt_each_child(const Stmt *s, const TirChildFns *f);

/* The same children appended to exprs and stmts (either may be NULL). */
void stmt_children(const Stmt *s, PtrVec *exprs, PtrVec *stmts);

/* The scalar variables s binds: loop variables, block iteration variables,
 * a let's variable (in scope after s's expressions, for its sub-statements
 * and, for a let, the rest of the sequence).  An alloc binds a Buffer. */
typedef void (*TirVarFn)(void *ctx, TirVar *v);
void stmt_binders(const Stmt *s, TirVarFn f, void *ctx);

/* Pre-order: a statement, then its expressions (each in pre-order), then
 * its sub-statements, NULL children skipped.  A callback returns whether to
 * descend; either may be NULL (descend, no action).  A search stops early
 * by returning false from then on.  Recursive: TIR nesting is shallow. */
typedef struct TirVisitor {
  bool (*stmt)(void *ctx, const Stmt *s);
  bool (*expr)(void *ctx, const PrimExpr *e);
  void *ctx;
} TirVisitor;
void tir_walk(const Stmt *s, const TirVisitor *v);
void tir_walk_expr(const PrimExpr *e, const TirVisitor *v);

#endif
