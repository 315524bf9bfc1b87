/* rewrite.h — building blocks for passes: a pointer-keyed hash map, use
 * counts, a rebuilding rewriter, and a let-block builder.  Children,
 * rebuilding one node and walks are ir/walk.h's (included here).
 *
 * The IR is immutable: a rewrite builds new nodes and shares every subtree
 * it did not change (rw_expr returns the very same pointer when nothing
 * under a node changed).  Nothing here recurses on the length of a let /
 * sequence / free_var chain; recursion follows expression nesting only (call
 * arguments, tuple fields, if branches, function bodies), which the rules
 * of the code base allow. */
#ifndef RLY_REWRITE_H
#define RLY_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ir/util.h" /* PtrMap */
#include "ir/walk.h"

/* ── uses ── (children, walks and binders: ir/walk.h) */

/* Number of EX_VAR uses of each variable under root: Var* → (void *)count. */
void rw_count_uses(Expr *root, PtrMap *counts);

/* ── rewriting ── */

typedef struct Rewriter Rewriter;
struct Rewriter {
  Arena *a;
  /* Before e's children: a non-NULL result replaces e and its children are
   * not visited.  May be NULL. */
  Expr *(*pre)(Rewriter *rw, Expr *e);
  /* After: `r` is e with rewritten children (r == e when none changed);
   * returns the final node.  May be NULL. */
  Expr *(*post)(Rewriter *rw, Expr *e, Expr *r);
  /* A binding site (let, fn parameter, free_var; not patterns): returns the
   * variable to bind instead (v itself to keep it).  May be NULL. */
  Var *(*bind)(Rewriter *rw, Var *v);
  /* Variable substitution applied at EX_VAR before `pre`: Var* → Expr*. */
  PtrMap subst;
  void *user;
};

/* Rewrites e (NULL stays NULL).  Shares unchanged subtrees. */
Expr *rw_expr(Rewriter *rw, Expr *e);
/* The function with its body (and parameters, through `bind`) rewritten;
 * f itself when nothing changed. */
Function *rw_function(Rewriter *rw, Function *f);

/* A shallow copy of f with a new body (and optionally params). */
Function *rw_function_with(Arena *a, const Function *f, int nparams, Var **params, Type *ret,
                           Expr *body);

/* ── atoms and fresh variables ── */

/* Variables, globals naming functions, operators, constructors and
 * constants: values that need no evaluation.  A state global is NOT an
 * atom (reading it observes the current state).  m may be NULL (then every
 * global counts as an atom). */
bool rw_is_atom(const Module *m, const Expr *e);

/* Whether e's evaluation has no effect, so it may move past other code:
 * atoms, fn expressions, tuples, projections, and calls of operators that
 * are not effectful or of constructors, on such operands.  (Calls of defs
 * and closures, references, state globals and control flow are not.) */
bool rw_is_pure(const Module *m, const Expr *e);

/* A fresh graph temporary (`%N` when printed; the printer numbers them). */
Var *rw_graph_var(Arena *a, Span sp);

/* The unit value `()`. */
Expr *rw_unit(Arena *a, Span sp);

/* ── let-block builder ── */

/* Bindings accumulated in evaluation order; value NULL marks a free_var. */
typedef struct RwBinding {
  Var *var;
  Expr *value;
  Span span; /* of the let node built for it */
} RwBinding;

typedef struct RwBlock {
  RwBinding *items;
  size_t len, cap;
} RwBlock;

void rw_block_bind(RwBlock *b, Var *v, Expr *value, Span sp);
void rw_block_free_var(RwBlock *b, Var *v, Span sp);
/* The let chain of b's bindings ending in tail; frees b's vectors.
 * Built from the end, iteratively. */
Expr *rw_block_finish(Arena *a, RwBlock *b, Expr *tail);
void rw_block_free(RwBlock *b);

#endif
