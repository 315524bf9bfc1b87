/* extern.h — external functions for call_tir with a string callee
 * (text-format.md B.6, seed 002's `env.linear`):
 *
 *   call_tir("env.linear", (%x, %w, %b), shape=[1, 10], dtype="float32")
 *
 * looks up "env.linear" in a process-wide registry and calls it on the
 * inputs then the freshly allocated (zero-filled) outputs, destination
 * passing like a prim function.  Tensors are passed as DLTensor-like views
 * (contiguous, row-major, CPU): no dependency on dlpack.  Inputs are
 * shared, immutable values: a function must write only its outputs.
 *
 * The registry is not thread-safe: register at start-up. */
#ifndef RLY_EXTERN_H
#define RLY_EXTERN_H

#include <stddef.h>
#include <stdint.h>

#include "ir/tensor.h"

typedef struct RlyTensor {
  void *data;
  DType dtype;
  int ndim;
  const int64_t *shape;
} RlyTensor;

/* Returns 0 on success; otherwise writes a message into err (errn bytes)
 * and returns non-zero.  ctx is the pointer given at registration. */
typedef int (*RlyExternFn)(const RlyTensor *args, int nargs, void *ctx, char *err, size_t errn);

/* Registers (or replaces, or with fn NULL removes) the function `name`
 * (the name is copied). */
void rly_register_extern(const char *name, RlyExternFn fn, void *ctx);
/* The function registered as `name`, or NULL. */
RlyExternFn rly_extern_lookup(const char *name, void **ctx);
/* Forgets every registration. */
void rly_extern_clear(void);

#endif
