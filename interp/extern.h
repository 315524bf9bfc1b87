/* extern.h — external functions for call_tir with a string callee
 * (text-format.md B.6, seed 002's "Register Runtime Functions"):
 *
 *   call_tir("env.linear", (%x, %w, %b), shape=[1, 10], dtype="float32")
 *
 * looks up "env.linear" in a process-wide registry and calls it in
 * destination-passing style: the arguments are the inputs, then the freshly
 * allocated (zero-filled) outputs, each a DLPack `DLTensor` (dlpack/dlpack.h,
 * Debian libdlpack-dev):
 *   device {kDLCPU, 0}; dtype {code, bits, lanes = 1} with code kDLInt,
 *   kDLUInt, kDLFloat or kDLBfloat (bool is {kDLUInt, 8, 1}: one byte, 0 or 1);
 *   shape: ndim int64 sizes; strides NULL (contiguous, row-major);
 *   byte_offset 0; data 64-byte aligned.
 * Inputs are shared, immutable values: a function must write only its
 * outputs, and must not change any shape.  It returns 0, or non-zero after
 * writing a message into err (errn bytes), which becomes the call's error.
 *
 * The C API for programs that embed librly:
 *
 *   static int my_relu(DLTensor *a, int n, void *ctx, char *err, size_t errn) {...}
 *   rly_register_extern("env.relu", my_relu, NULL);
 *
 * and the REPL's `:extern NAME LIB.so SYMBOL` registers a function of a
 * shared library (rly_extern_load; a LIB without '/' is searched by dlopen:
 * LD_LIBRARY_PATH, then the system's paths).  examples/extern/ has both.
 *
 * The registry is not thread-safe: register at start-up or from the REPL,
 * not while a program runs. */
#ifndef RLY_EXTERN_H
#define RLY_EXTERN_H

#include <dlpack/dlpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/tensor.h"

/* A registered function (the public, DLPack side). */
typedef int (*RlyDLExternFn)(DLTensor *args, int nargs, void *ctx, char *err, size_t errn);

/* Registers (or replaces, or with fn NULL removes) the function `name`
 * (the name is copied).  ctx is passed back on every call. */
void rly_register_extern(const char *name, RlyDLExternFn fn, void *ctx);

/* dlopen(lib) and registers its `symbol` (an RlyDLExternFn) as `name`.
 * False with a message (missing library or symbol) in err. */
bool rly_extern_load(const char *name, const char *lib, const char *symbol, char *err, size_t errn);

/* Forgets every registration. */
void rly_extern_clear(void);

/* DLPack's dtype of a rly dtype, and back (false if it has none). */
DLDataType rly_dlpack_dtype(DType dt);
bool rly_dtype_from_dlpack(DLDataType t, DType *out);

/* ── the call side (interp/call_tir.c) ──
 * call_tir passes plain views; the function rly_extern_lookup returns turns
 * them into DLTensors and calls the registered function. */
typedef struct RlyTensor {
  void *data;
  DType dtype;
  int ndim;
  const int64_t *shape;
} RlyTensor;

typedef int (*RlyExternFn)(const RlyTensor *args, int nargs, void *ctx, char *err, size_t errn);

/* A caller for the function registered as `name` (with *ctx to pass it), or
 * NULL when there is none. */
RlyExternFn rly_extern_lookup(const char *name, void **ctx);

#endif
