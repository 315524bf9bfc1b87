/* draw.c — a function's or an expression's picture into a file (draw.h).
 *
 * The DOT text is built by ir/dot.c with the engine's kernel names and
 * the profile's shares as callbacks; .dot files get it as is, .svg and .png
 * go through gv_render.c.  A file is written only once the picture is
 * made, so a failed layout leaves no half-written file. */
#include "engine/draw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gv_render.h"
#include "ir/dot.h"

typedef struct DrawCtx {
  Engine *e;
  const Profile *prof;
} DrawCtx;

static const char *kernel_name(void *ctx, const Function *prim) {
  return engine_kernel_name(((DrawCtx *)ctx)->e, prim);
}

static double share(void *ctx, const char *name, bool reference, double *ms) {
  return profile_share(((DrawCtx *)ctx)->prof, name, reference, ms);
}

const char *draw_format(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return NULL;
  static const char *const formats[] = {"dot", "svg", "png", NULL};
  for (int i = 0; formats[i]; i++)
    if (strcmp(dot + 1, formats[i]) == 0) return formats[i];
  return NULL;
}

static bool write_file(const char *path, const char *data, size_t n, char *err, size_t errn) {
  FILE *f = fopen(path, "wb");
  if (!f) return snprintf(err, errn, "cannot write '%s': %s", path, strerror(errno)), false;
  bool ok = fwrite(data, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  if (!ok) snprintf(err, errn, "cannot write '%s': %s", path, strerror(errno));
  return ok;
}

/* The text built by build (with or without edge types) into path in the
 * format its extension names. */
typedef char *(*BuildFn)(const void *what, const DotOptions *o, DotStats *st);

static bool draw(BuildFn build, const void *what, DotOptions *o, const char *path, DrawInfo *info,
                 char *err, size_t errn) {
  const char *fmt = draw_format(path);
  if (!fmt)
    return snprintf(err, errn, "cannot tell the format of '%s': name it .dot, .svg or .png", path),
           false;
  DotStats st = {0};
  o->edge_types = true;
  char *text = build(what, o, &st);
  bool huge = st.nodes > DRAW_DOT_NODES;
  if (huge) {
    free(text);
    o->edge_types = false;
    text = build(what, o, &st);
  }
  *info = (DrawInfo){st.nodes, st.edges, st.clusters, NULL, huge};
  bool ok;
  if (strcmp(fmt, "dot") == 0) {
    ok = write_file(path, text, strlen(text), err, errn);
  } else {
    char *out = NULL;
    size_t n = 0;
    info->layout = huge ? "rows (neato -n)" : "dot";
    ok = (huge ? gv_render_rows(text, fmt, &out, &n, err, errn)
               : gv_render(text, "dot", fmt, &out, &n, err, errn)) &&
         write_file(path, out, n, err, errn);
    free(out);
  }
  free(text);
  return ok;
}

typedef struct FnWhat {
  const char *title;
  const Function *f;
  Expr *e;
} FnWhat;

static char *build_fn(const void *what, const DotOptions *o, DotStats *st) {
  const FnWhat *w = what;
  return dot_function(w->title, w->f, o, st);
}

static char *build_expr(const void *what, const DotOptions *o, DotStats *st) {
  const FnWhat *w = what;
  return dot_expr(w->title, w->e, o, st);
}

bool engine_draw_function(Engine *e, const Module *m, const char *name, const char *path,
                          const Profile *prof, DrawInfo *info, char *err, size_t errn) {
  const char *n = name[0] == '@' ? name + 1 : name;
  FuncDef *fd = module_func(m, n);
  if (!fd) return snprintf(err, errn, "no function named `@%s`", n), false;
  DrawCtx c = {e, prof};
  DotOptions o = {.kernel_name = kernel_name, .share = prof ? share : NULL, .ctx = &c};
  o.total_ms = prof ? profile_kernels_ms(prof) : 0;
  char title[256];
  snprintf(title, sizeof title, "@%s", n);
  FnWhat w = {title, fd->fn, NULL};
  return draw(build_fn, &w, &o, path, info, err, errn);
}

bool engine_draw_expr(Engine *e, const char *title, Expr *ex, const char *path, DrawInfo *info,
                      char *err, size_t errn) {
  DrawCtx c = {e, NULL};
  DotOptions o = {.kernel_name = kernel_name, .ctx = &c};
  FnWhat w = {title, NULL, ex};
  return draw(build_expr, &w, &o, path, info, err, errn);
}
