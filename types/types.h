/* passes.h — analyses and rewrites over the IR.  Now: the type checker.
 *
 * Type checking fills Expr.ty on every node it reaches and FuncDef.ty on
 * every def; it reports errors (and warnings: non-exhaustive match) to the
 * DiagCtx and never exits.  It is iterative on let chains. */
#ifndef RLY_PASSES_H
#define RLY_PASSES_H

#include <stdbool.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/tir.h"

typedef struct TypeCheckOptions {
  bool warn_nonexhaustive; /* default on: warn on a non-exhaustive `match` */
} TypeCheckOptions;

/* Checks every definition of m.  Returns false if there were errors. */
bool ty_check_module(Module *m, DiagCtx *d);
/* ty_check_module of a module already checked once (after a pass): its
 * warnings were shown then and are not repeated. */
bool ty_recheck_module(Module *m, DiagCtx *d);

/* Checks one expression in the context of m (e.g. a REPL input).
 * Session variables must carry their type in Var.annot.  Returns its type
 * or NULL on error. */
Type *ty_check_expr(Module *m, Expr *e, DiagCtx *d);
/* The same with the type the expression should have (NULL: none), so a
 * polymorphic value such as `@id` is instantiated at it. */
Type *ty_check_expr_as(Module *m, Expr *e, Type *expected, DiagCtx *d);

/* Checks one definition (e.g. just typed at the REPL) against m. */
bool ty_check_def(Module *m, const char *name, DiagCtx *d);

/* Structural verification of a prim function (types, block variable
 * bounds, loads of unallocated buffers). */
bool tir_verify(const Module *m, const PrimFunc *f, DiagCtx *d);

/* Key linearity (seed 000): reports every RandState key consumed twice —
 * passed to two random ops / calls that consume it, split twice, written to
 * a state global and used again — with both use sites, through lets,
 * tuples, branches (one use per arm) and calls (a def that consumes its key
 * parameter counts as a use).  Needs a type-checked module.  as_error:
 * errors (the pass CheckKeyLinearity) or warnings (the type checker).
 * Returns true when no key is used twice. */
bool ty_check_key_linearity(Module *m, DiagCtx *d, bool as_error);

#endif
