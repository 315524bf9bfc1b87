/* effect_int.h — private to EffectToState: the analysis (effect_flow.c)
 * and the rewrite (effect_to_state.c).
 *
 * Units and masks.  A unit is a def body or a `fn` expression.  Its mask is
 * the set of state globals (bit i = Eff.globals[i]) that running it may read
 * or write: directly (ref(@g), %r^ / %r := v through an alias of @g, @g as a
 * value) or through the defs and function values it calls — a fixed point
 * over the call graph, so recursion and mutual recursion are covered.
 *
 * Flow classes.  Which function values can reach which call sites is
 * approximated by unification: every function-valued thing (a variable, a
 * fn expression, a def used as a value, a def's result, a parameter or
 * result position of another class) is a FlowNode; a let, an argument, a
 * branch join unify the nodes of both sides, and unifying two classes
 * unifies their parameter and result children.  A class's mask is the
 * union of its members' masks; every closure in a stateful class takes the
 * class's states and every call through it threads them.  Function values
 * stored where the analysis cannot follow them (tuples, constructors,
 * references, op arguments, values read back from those, pattern and free
 * variables) mark their class opaque; an opaque stateful class is an error.
 *
 * Aliases.  `%r = ref(@g)` makes %r an alias of @g's cell; an alias may
 * only be read, written, copied by a let, or captured by a closure
 * (anything else is an error: the cell would escape). */
#ifndef RLY_EFFECT_INT_H
#define RLY_EFFECT_INT_H

#include "passes/pass_int.h"

enum { EFF_MAX_GLOBALS = 64 };

typedef struct FlowNode {
  int parent;
  uint64_t mask;
  int nparams;
  int *params; /* child per parameter position, -1 none (malloc) */
  int ret;     /* child for the result, -1 none */
  Span opaque; /* where the class's values escaped (file 0: none) */
  const char *opaque_what;
  bool is_opaque;
} FlowNode;

typedef struct Unit {
  const FuncDef *def; /* a def body, or */
  Expr *fn;           /* a fn expression */
  int node;           /* flow node of the def as a value / of the closure */
  uint64_t direct, mask;
  PtrVec callee_defs;  /* const FuncDef* called by name */
  PtrVec callee_nodes; /* (void *)(intptr_t)(node + 1) called through */
} Unit;

typedef struct Eff {
  PassCtx *pc;
  Module *in;
  Arena *a;
  int nglobals;
  StateGlobal *globals[EFF_MAX_GLOBALS];
  FlowNode *nodes;
  int nnodes, capnodes;
  Unit *units;
  int nunits, capunits;
  StrMap def_unit;  /* def name → unit index + 1 */
  PtrMap var_node;  /* Var* → node + 1, or (void*)-1: not a function */
  PtrMap fn_unit;   /* EX_FN Expr* → unit index + 1 */
  PtrMap call_node; /* EX_CALL through a value → callee node + 1 */
  PtrMap alias;     /* Var* → global index + 1 */
  PtrMap touch;     /* Expr* → 1 (pure) / 2 (touches state) */
  int *def_ret;     /* per unit of a def: node of its result */
  bool failed;
  /* the rewrite (effect_to_state.c) */
  Rewriter rw;   /* conversion of state-free code; rw.subst is the substitution */
  PtrMap uses;   /* Var* → uses in the input */
  PtrMap handed; /* Var* → times handed out as the current state */
} Eff;

/* effect_flow.c */
bool eff_analyze(Eff *E); /* false after diagnostics */
void eff_free(Eff *E);
int eff_find(Eff *E, int n);
uint64_t eff_node_mask(Eff *E, int n);     /* mask of n's class (0 for -1) */
int eff_child_param(Eff *E, int n, int i); /* existing child or -1 */
int eff_child_ret(Eff *E, int n);
int eff_global_index(const Eff *E, const char *name); /* -1 if not a state global */
/* The global a reference expression denotes (an alias variable or ref(@g)), or -1. */
int eff_ref_target(Eff *E, const Expr *r);
/* Does evaluating e read or write a state global (not counting the bodies
 * of fn expressions, which run later)? */
bool eff_touches(Eff *E, Expr *e);
/* Mask of the callee of call e: a def's, or the class of a called value. */
uint64_t eff_callee_mask(Eff *E, const Expr *call);
const Unit *eff_def_unit(Eff *E, const char *name);
const Unit *eff_fn_unit(Eff *E, const Expr *fn);
/* The flow node of a variable (-1 when it never holds a function). */
int eff_var_node_of(Eff *E, const Var *v);

#endif
