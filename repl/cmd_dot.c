/* cmd_dot.c — `:dot @f FILE`: a function's dataflow graph as a picture
 * (engine/draw.h): .dot text, or .svg / .png rendered by Graphviz's
 * libraries.  After a `:profile`, kernels are coloured by their share of
 * the time. */
#include <stdlib.h>
#include <string.h>

#include "engine/draw.h"
#include "repl/repl.h"

/* One line saying what was drawn and how. */
static void drawn(const char *what, const char *path, const DrawInfo *in, bool profiled) {
  printf("wrote %s: %s, %d node%s, %d edge%s", path, what, in->nodes, in->nodes == 1 ? "" : "s",
         in->edges, in->edges == 1 ? "" : "s");
  if (in->layout) printf(", %s layout", in->layout);
  if (profiled) printf(", coloured by the last :profile");
  putchar('\n');
  if (in->simplified)
    printf("note: over %d nodes: edges drawn without their types%s\n", DRAW_DOT_NODES,
           in->layout ? ", nodes placed in rows by depth (no clusters)" : "");
}

/* `:dot @f FILE`: the function's name, then the file (the rest, unquoted). */
RunStatus repl_cmd_dot(Session *s, const char *args, Span where) {
  size_t k = strcspn(args, " \t");
  const char *file = args + k + strspn(args + k, " \t");
  if (!k || !*file) {
    session_error(s, where, "e.g. `:dot @main mlp.svg` (.dot, .svg or .png)",
                  "`:dot` needs @f FILE");
    return RUN_ERROR;
  }
  char name[256], path[4096];
  snprintf(name, sizeof name, "%.*s", (int)k, args);
  size_t fl = strlen(file);
  if (fl >= 2 && (file[0] == '"' || file[0] == '\'') && file[fl - 1] == file[0]) file++, fl -= 2;
  snprintf(path, sizeof path, "%.*s", (int)fl, file);
  DrawInfo info;
  char err[768];
  if (!engine_draw_function(session_engine(s), session_module(s), name, path, s->last_profile,
                            &info, err, sizeof err)) {
    session_error(s, where, NULL, "%s", err);
    return RUN_ERROR;
  }
  drawn(name[0] == '@' ? name : "the function", path, &info, s->last_profile != NULL);
  return RUN_OK;
}
