/* draw.h — pictures of dataflow graphs (`:dot`, `rly --dot`, `:set
 * step-dot`): the DOT text of ir/dot.h written as it is (.dot) or laid
 * out and rendered through Graphviz's libraries (.svg, .png; gv_render.h).
 *
 * Clusters of Primitive functions are named after the kernels the jit
 * mode lowers them to (the names `:profile` and `:kernels` show); with a
 * profile they are coloured by their share of the time in kernels.
 *
 * Layout work is bounded: up to DRAW_DOT_NODES nodes Graphviz's `dot`
 * lays the graph out in ranks; a larger graph is drawn without edge labels
 * and placed by rly itself (nodes in rows by their depth in the graph,
 * which is linear in its size) and only routed and rendered by Graphviz
 * (neato -n).  DrawInfo says which was done. */
#ifndef RLY_DRAW_H
#define RLY_DRAW_H

#include "engine/engine.h"
#include "engine/profile.h"

enum {
  DRAW_DOT_NODES = 800, /* above: rly's own placement instead of dot's ranking */
};
#define DRAW_DOT_NODES_TEXT "800" /* the same, for help texts */

typedef struct DrawInfo {
  int nodes, edges, clusters;
  const char *layout; /* "dot" or "rows (neato -n)"; NULL for a .dot file */
  bool simplified;    /* edges drawn without their types */
} DrawInfo;

/* What a file's extension asks for: "dot", "svg" or "png"; NULL if none. */
const char *draw_format(const char *path);

/* Draws function `name` (with or without its `@`) of m into path; prof (may
 * be NULL) colours the kernels.  False with a message in err. */
bool engine_draw_function(Engine *e, const Module *m, const char *name, const char *path,
                          const Profile *prof, DrawInfo *info, char *err, size_t errn);
/* Draws an expression (a rewrite's before or after), titled title. */
bool engine_draw_expr(Engine *e, const char *title, Expr *ex, const char *path, DrawInfo *info,
                      char *err, size_t errn);

#endif
