/* onnx.h — the ONNX importer: a model file (onnx.proto, read with
 * protobuf-c) becomes one Relay function of a module, as TVM's
 * relay.frontend.from_onnx builds it.
 *
 * The function's parameters are the graph's inputs (in graph order, typed
 * from their value infos: a dim_value is a constant dim, a dim_param a size
 * variable, a missing dim `?`), then the initializers the graph uses as
 * data (the weights, in initializer order).  Names are the ONNX names made
 * valid identifiers (`input.1` → `input_1`, `onnx::Add_7` → `onnx__Add_7`,
 * a leading digit gets `v`), unique among the parameters.  Initializers
 * read only as static values (a Reshape's shape, a Slice's starts) are not
 * parameters: they are folded into the op's attributes.  The body is a
 * graph-form let chain (`%3 = nn.conv2d(...)`); ops whose arguments are
 * all constants are evaluated at import time (static shape arithmetic).
 *
 * The weights are returned beside the module (OnnxWeights): the caller
 * binds them as constants (BindParams, `:import`) or writes them to a
 * tensor file (`rly --import -o`).  The ops supported are the rows of
 * frontend/onnx_ops.c.
 *
 * Errors are diagnostics naming the file, the node (index and name) and
 * its op: an unreadable or non-ONNX file, every unsupported op of the
 * model at once (with its domain), an unsupported attribute value, an
 * external-data initializer whose file is missing.  On error the module is
 * left as it was. */
#ifndef RLY_FRONTEND_ONNX_H
#define RLY_FRONTEND_ONNX_H

#include <stdbool.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* The weights of an imported function: parameter names (as in the
 * function) and their values, allocated in the module's arena. */
typedef struct OnnxWeights {
  int n;
  const char **names;
  Tensor **values;
} OnnxWeights;

typedef struct OnnxImportOptions {
  const char *func; /* the function's name without `@` ("main" when NULL) */
  Span where;       /* where the import was asked for (a note points there), or {0} */
  /* ai.onnx.preview.training's Gradient (NULL: the op is refused): the
   * Gradient pass on f added to a copy of m, giving @f_grad (NULL after
   * diagnostics; f's nodes are then typed); and whether the op at registry
   * index op has a gradient rule. */
  FuncDef *(*gradient)(void *user, const Module *m, FuncDef *f);
  bool (*differentiable)(int op);
  void *user;
} OnnxImportOptions;

/* Reads the model at path and adds its function to m (nodes in m's
 * arena).  True on success, with the weights in *w; false after
 * diagnostics in d, m unchanged.  The function is not type-checked here. */
bool onnx_import(const char *path, Module *m, const OnnxImportOptions *o, DiagCtx *d,
                 OnnxWeights *w);

/* The supported ops as "Abs Add ..." (domain-qualified when not the
 * default domain), for help texts; static storage. */
const char *onnx_supported_ops(void);

/* What onnx_export wrote: its nodes, initializers and ai.onnx opset. */
typedef struct OnnxExportInfo {
  int nodes, initializers, opset;
} OnnxExportInfo;

/* Writes @func of the type-checked module m as an ONNX model at path
 * (frontend/onnx_export.c): parameters become graph inputs, constants
 * initializers, op calls nodes (one row per Relay op in its table), the
 * result the outputs.  False after diagnostics (each refused construct
 * named where it is; where: the command that asked, for a note), and
 * then nothing is written. */
bool onnx_export(const Module *m, const char *func, const char *path, Span where, DiagCtx *d,
                 OnnxExportInfo *info);

/* The Relay ops onnx_export writes, as "add subtract ..."; static storage. */
const char *onnx_exported_ops(void);

#endif
