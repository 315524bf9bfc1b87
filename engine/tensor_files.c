/* tensor_files.c — tensor files through the engine (engine/inspect.h):
 * reading and writing .npy, .npz and .safetensors (io/tensor_io.h) as IR
 * tensors, the imported weights, and BindParams from a file (`rly
 * --params`, `:bind`). */
#include <limits.h>
#include <stdio.h>

#include "engine/inspect.h"
#include "io/tensor_io.h"
#include "passes/pass.h"
#include "rt/rt.h"

bool engine_tensors_load(const char *path, Arena *a, EngineTensors *out, char *err, size_t n) {
  TioFile f;
  if (!tio_load(path, &f, err, n)) return false;
  out->n = f.n;
  out->names = ARENA_ARRAY(a, const char *, f.n + 1);
  out->values = ARENA_ARRAY(a, Tensor *, f.n + 1);
  for (int i = 0; i < f.n; i++) {
    out->names[i] = arena_strdup(a, f.entries[i].name);
    out->values[i] = rt_tensor_to_ir(a, f.entries[i].t);
  }
  tio_file_free(&f);
  return true;
}

int engine_tensors_capacity(const char *path) {
  TioFormat f = tio_format_of_path(path);
  return f == TIO_UNKNOWN ? 0 : f == TIO_NPY ? 1 : INT_MAX;
}

/* names[i] = values[i] for i < count, in the format fmt. */
static bool save(const char *path, TioFormat fmt, int count, const char *const *names,
                 Tensor *const *values, char *err, size_t n) {
  TioFile f = {0};
  bool ok = true;
  for (int i = 0; i < count && ok; i++) {
    RtTensor *t = rt_tensor_from_ir(values[i], err, n);
    ok = t && tio_add(&f, names[i], t, err, n);
    rt_tensor_release(t);
  }
  ok = ok && tio_save(path, fmt, &f, err, n);
  tio_file_free(&f);
  return ok;
}

bool engine_tensors_save(const char *path, const EngineTensors *t, char *err, size_t n) {
  return save(path, tio_format_of_path(path), t->n, t->names, t->values, err, n);
}

bool engine_save_weights(const OnnxWeights *w, const char *path, char *err, size_t n) {
  return save(path, TIO_NPZ, w->n, w->names, w->values, err, n);
}

Module *engine_bind_file(Module *m, Arena *a, DiagCtx *d, const char *fn, const char *path,
                         Span where, Span fn_sp, Span file_sp, EngineTensors *bound) {
  EngineTensors b;
  char err[RT_ERR_LEN];
  if (!module_func(m, fn)) {
    diag_error(d, fn_sp, "no function @%s to bind parameters of", fn);
    return NULL;
  }
  if (!engine_tensors_load(path, a, &b, err, sizeof err)) {
    diag_error(d, file_sp, "%s", err);
    return NULL;
  }
  BindParamsSpec spec = {fn, b.n, b.names, b.values, path, where};
  Module *out = pass_bind(&spec, m, a, d, NULL);
  if (out && !engine_check_module(out, d)) {
    diag_note(d, where, "the module with @%s's parameters bound from %s does not type-check", fn,
              path);
    module_free(out);
    out = NULL;
  }
  if (bound) *bound = b;
  return out;
}

const char *engine_shape_text(char *buf, size_t n, int ndim, const int64_t *shape) {
  return rt_shape_str(buf, n, ndim, shape);
}
