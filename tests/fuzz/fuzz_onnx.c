/* fuzz_onnx.c — libFuzzer target: the ONNX importer (frontend/onnx.h) on
 * arbitrary bytes.  The importer reads a path, so the bytes are written to
 * a file of this process's own in the temporary folder first; a model it
 * imports is type-checked as `:import` does.  Rejections are diagnostics. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "frontend/onnx.h"
#include "types/types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as the process's model file; its path (static storage). */
static const char *write_model(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/rly-fuzz-%ld.onnx", (long)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? path : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = write_model(data, size);
  if (!path) abort(); /* the fuzzer cannot work without its file */
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = module_new(&a);
  OnnxWeights w;
  OnnxImportOptions o = {.func = "main"};
  if (onnx_import(path, m, &o, &d, &w)) ty_check_module(m, &d);
  module_free(m);
  diag_free(&d);
  arena_free(&a);
  return 0;
}
