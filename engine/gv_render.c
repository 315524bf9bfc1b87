/* gv_render.c — Graphviz's layout and rendering, in-process (gv_render.h).
 *
 * Graphviz reports problems through cgraph's error callback; it is pointed
 * at a buffer while a graph is read, laid out and rendered, so the caller
 * gets the message as text instead of lines on stderr.  Warnings (a font
 * not found, a node too large for its rank) are dropped: the picture is
 * still drawn. */
#include "engine/gv_render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char gv_msg[512];

/* cgraph's error callback: keeps the first error's text. */
static int on_gv_error(char *msg) {
  if (!gv_msg[0]) {
    snprintf(gv_msg, sizeof gv_msg, "%s", msg);
    size_t n = strlen(gv_msg);
    while (n && (gv_msg[n - 1] == '\n' || gv_msg[n - 1] == ' ')) gv_msg[--n] = 0;
  }
  return 0;
}

static void capture(void) {
  gv_msg[0] = 0;
  agseterr(AGERR);
  agseterrf(on_gv_error);
}

static void report(char *err, size_t errn, const char *what) {
  snprintf(err, errn, "%s%s%s", what, gv_msg[0] ? ": " : "", gv_msg);
  agseterrf(NULL);
}

bool gv_parses(const char *text, char *err, size_t errn) {
  capture();
  Agraph_t *g = agmemread(text);
  if (!g) return report(err, errn, "Graphviz cannot read the graph"), false;
  agclose(g);
  agseterrf(NULL);
  return true;
}

/* The process's one Graphviz context: freeing a context and making another
 * leaves the text plugin's font cache pointing at freed memory (a second
 * render read it: found by AddressSanitizer), so it lives until exit. */
static GVC_t *context(void) {
  static GVC_t *gvc;
  if (!gvc) gvc = gvContext();
  return gvc;
}

/* Lays g out, renders it and closes it. */
static bool render_graph(Agraph_t *g, const char *layout, const char *format, char **out, size_t *n,
                         char *err, size_t errn) {
  GVC_t *gvc = context();
  bool ok = gvLayout(gvc, g, layout) == 0;
  char *data = NULL;
  unsigned int len = 0;
  if (!ok)
    report(err, errn, "Graphviz's layout failed");
  else if (gvRenderData(gvc, g, format, &data, &len) != 0 || !data)
    report(err, errn, "Graphviz cannot render this format"), ok = false;
  if (ok) {
    *out = malloc(len ? len : 1);
    if (*out) memcpy(*out, data, len);
    *n = len, ok = *out != NULL;
    if (!ok) snprintf(err, errn, "out of memory");
  }
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  agclose(g);
  agseterrf(NULL);
  return ok;
}

bool gv_render(const char *text, const char *layout, const char *format, char **out, size_t *n,
               char *err, size_t errn) {
  capture();
  Agraph_t *g = agmemread(text);
  if (!g) return report(err, errn, "Graphviz cannot read the graph"), false;
  return render_graph(g, layout, format, out, n, err, errn);
}

/* ───────────────────────── rows for huge graphs ───────────────────────── */

enum { GV_ROWS = 60, GV_NODE_W = 110, GV_ROW_H = 50 };

typedef struct NodeRec {
  Agrec_t h;
  int indeg, depth, slot;
} NodeRec;

#define REC(n) ((NodeRec *)aggetrec(n, "rly", 0))

/* Longest-path depths by Kahn's algorithm (nodes on a cycle keep 0), and
 * each node's slot in its row; returns the widest row. */
static int place(Agraph_t *g, Agnode_t **queue) {
  int nq = 0, widest = 1, nnodes = agnnodes(g);
  for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
    agbindrec(v, "rly", sizeof(NodeRec), 0);
    for (Agedge_t *e = agfstin(g, v); e; e = agnxtin(g, e)) REC(v)->indeg++;
    if (!REC(v)->indeg) queue[nq++] = v;
  }
  for (int i = 0; i < nq; i++)
    for (Agedge_t *e = agfstout(g, queue[i]); e; e = agnxtout(g, e)) {
      NodeRec *r = REC(aghead(e));
      if (r->depth < REC(queue[i])->depth + 1) r->depth = REC(queue[i])->depth + 1;
      if (--r->indeg == 0) queue[nq++] = aghead(e);
    }
  int *used = calloc((size_t)nnodes + 1, sizeof *used);
  if (!used) return 1;
  for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
    NodeRec *r = REC(v);
    r->slot = used[r->depth]++;
    if (used[r->depth] > widest) widest = used[r->depth];
  }
  free(used);
  return widest;
}

/* Positions from place(): depth d is row d % GV_ROWS of column d / GV_ROWS. */
static void set_positions(Agraph_t *g, int widest) {
  Agsym_t *pos = agattr(g, AGNODE, "pos", "");
  for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v)) {
    NodeRec *r = REC(v);
    char buf[64];
    snprintf(buf, sizeof buf, "%d,%d!", (r->depth / GV_ROWS * (widest + 1) + r->slot) * GV_NODE_W,
             -(r->depth % GV_ROWS) * GV_ROW_H);
    agxset(v, pos, buf);
  }
}

/* The clusters, removed: neato -n places nodes only. */
static void drop_clusters(Agraph_t *g) {
  Agraph_t *s = agfstsubg(g);
  while (s) {
    Agraph_t *next = agnxtsubg(s);
    agdelsubg(g, s);
    s = next;
  }
}

bool gv_render_rows(const char *text, const char *format, char **out, size_t *n, char *err,
                    size_t errn) {
  capture();
  Agraph_t *g = agmemread(text);
  if (!g) return report(err, errn, "Graphviz cannot read the graph"), false;
  drop_clusters(g);
  Agnode_t **queue = malloc(sizeof *queue * ((size_t)agnnodes(g) + 1));
  if (!queue) return agclose(g), snprintf(err, errn, "out of memory"), false;
  set_positions(g, place(g, queue));
  free(queue);
  agattr(g, AGRAPH, "splines", "false");
  agattr(g, AGRAPH, "overlap", "true");
  agattr(g, AGRAPH, "dpi", "24"); /* a bitmap of a huge graph: an overview, cheap to draw */
  return render_graph(g, "nop", format, out, n, err, errn);
}
