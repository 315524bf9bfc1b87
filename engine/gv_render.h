/* gv_render.h — DOT text laid out and rendered through Graphviz's C
 * libraries (libgvc, libcgraph), in-process: no `dot` program is run.
 * The only file that includes Graphviz's headers. */
#ifndef RLY_GV_RENDER_H
#define RLY_GV_RENDER_H

#include <stdbool.h>
#include <stddef.h>

/* text read by cgraph, laid out with `layout` (dot, neato -n positions,
 * ...) and rendered as `format` (svg, png); *out and *n get the bytes
 * (malloc'd).  False with Graphviz's message in err. */
bool gv_render(const char *text, const char *layout, const char *format, char **out, size_t *n,
               char *err, size_t errn);
/* The same for a graph too large for dot's ranking: nodes are placed in
 * rows by their depth (the longest path from an input, found in linear
 * time), long chains folded into columns of DRAW_ROWS rows, and Graphviz
 * only draws straight edges between them (neato -n); clusters are dropped. */
bool gv_render_rows(const char *text, const char *format, char **out, size_t *n, char *err,
                    size_t errn);
/* Whether Graphviz reads text as a graph (its message in err if not). */
bool gv_parses(const char *text, char *err, size_t errn);

#endif
