/* cmd_emit.c — `:emit @f OUT.onnx`: a function of the session's module,
 * as it is after the passes run on it, written as an ONNX model
 * (engine_export_onnx, frontend/onnx_export.c).  Only .onnx is written for
 * now; what ONNX cannot express is refused where it is, and then no file
 * is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repl/repl.h"

static RunStatus emit_usage(Session *s, Span where) {
  session_error(s, where, "e.g. `:emit @main model.onnx`", "`:emit` needs @f OUT.onnx");
  return RUN_ERROR;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n > k && strcmp(s + n - k, tail) == 0;
}

RunStatus repl_cmd_emit(Session *s, const char *args, Span where) {
  Words w;
  if (!repl_split_words(s, args, where, &w)) return RUN_ERROR;
  if (w.n != 2 || w.w[0][0] != '@' || !w.w[0][1]) return repl_free_words(&w), emit_usage(s, where);
  if (!ends_with(w.w[1], ".onnx")) {
    session_error(s, w.sp[1], "name the file OUT.onnx",
                  "`:emit` writes only .onnx for now, not '%s'", w.w[1]);
    return repl_free_words(&w), RUN_ERROR;
  }
  char *path = session_path(s, w.w[1], w.sp[1]);
  OnnxExportInfo info;
  bool ok =
      engine_export_onnx(session_engine(s), session_module(s), w.w[0] + 1, path, w.sp[0], &info);
  session_render(s);
  if (ok)
    printf("wrote %s: %s as ONNX (opset %d), %d node%s, %d initializer%s\n", path, w.w[0],
           info.opset, info.nodes, info.nodes == 1 ? "" : "s", info.initializers,
           info.initializers == 1 ? "" : "s");
  free(path);
  repl_free_words(&w);
  return ok ? RUN_OK : RUN_ERROR;
}
