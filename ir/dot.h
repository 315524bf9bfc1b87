/* dot.h — a Relay function's dataflow graph as Graphviz DOT text (`:dot`,
 * `rly --dot`, `:set step-dot`).
 *
 * Nodes are op calls (the op's name and its key attributes), parameters,
 * constants (shape and dtype, never values), tuples and projections, calls
 * of globals and of closures, constructors, references, and call_tir (the
 * prim function's name).  Edges go from a value's producer to its consumer
 * and carry the value's type.  Control flow is drawn as labelled clusters:
 * an `if` holds its branches, a `match` one cluster per clause (labelled
 * with its pattern), both ending in a merge node; a non-primitive `fn` and
 * a `dataflow` block are clusters too.  Each call of a Primitive function
 * (FuseOps' groups) is a `subgraph cluster_k…` labelled with its kernel's
 * name, its parameters wired straight to the call's arguments; with a
 * profile, the cluster is coloured by the kernel's share of the time and a
 * legend explains the colours.
 *
 * The text depends only on the IR (and on what the caller's callbacks
 * answer): layout and rendering are the engine's (engine/draw.h, engine/gv_render.c).
 * No recursion on the length of a let chain: blocks are walked along
 * expr_rest; recursion follows expression nesting only. */
#ifndef RLY_DOT_H
#define RLY_DOT_H

#include <stdbool.h>

#include "ir/ir.h"

typedef struct DotOptions {
  /* The kernel name of a Primitive function (NULL: the cluster is labelled
   * with its ops); fn may be NULL. */
  const char *(*kernel_name)(void *ctx, const Function *prim);
  /* A profiled kernel's share (0..1) of the total time and its time in *ms;
   * reference: an op run on its reference kernel (the row is the op's name).
   * Negative when the kernel was not profiled.  NULL: no profile. */
  double (*share)(void *ctx, const char *name, bool reference, double *ms);
  void *ctx;
  double total_ms; /* the profile's total, for the legend */
  bool edge_types; /* label edges with their types (off for huge graphs) */
} DotOptions;

typedef struct DotStats {
  int nodes, edges, clusters;
} DotStats;

/* The graph of function f, titled name (`@f`), as DOT text (malloc'd).
 * st (may be NULL) receives its size. */
char *dot_function(const char *name, const Function *f, const DotOptions *o, DotStats *st);
/* The graph of any expression (a rewrite's before or after); its free
 * variables are drawn as inputs. */
char *dot_expr(const char *title, Expr *e, const DotOptions *o, DotStats *st);

#endif
