/* metadata.h — the `#[metadata]` section TVM appends to printed programs
 * (relay-grammar.md §6): a small JSON reader, base64, and TVM's NDArray
 * save format, decoded into a table that `meta[TypeKey][i]` looks up.
 *
 * Everything is allocated in the given arena.  Malformed input is reported
 * as an error message plus a byte offset into the JSON text; nothing here
 * aborts on user input. */
#ifndef RLY_METADATA_H
#define RLY_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* One element of a metadata array, e.g. meta[relay.Constant][0]. */
typedef struct MetaEntry {
  const char *type_key; /* "relay.Constant", "tir.SizeVar", ... */
  Tensor *tensor;       /* relay.Constant: the decoded data */
  const char *name;     /* tir.Var / tir.SizeVar: the name hint */
  /* VirtualDevice: DLPack device type (-1 unconstrained, 1 CPU, 2 CUDA, ...),
   * virtual device id (-1 any), memory scope ("" none). */
  int device_type, device_id;
  const char *memory_scope;
} MetaEntry;

typedef struct MetaArray {
  const char *key; /* the map key (a type key) */
  int n;
  MetaEntry *items;
} MetaArray;

typedef struct MetaTable {
  int narrays;
  MetaArray *arrays;
} MetaTable;

/* Parses the JSON text that follows `#[metadata]`.  On failure returns
 * false, *err is a message (arena) and *err_off the byte offset of the
 * problem in json. */
bool meta_parse(Arena *a, const char *json, size_t len, MetaTable *out, const char **err,
                size_t *err_off);

/* The entry key[index], or NULL. */
const MetaEntry *meta_get(const MetaTable *t, const char *key, size_t keylen, int64_t index);

/* Standard base64 (whitespace ignored).  Returns false on a bad character
 * or bad padding. */
bool meta_base64_decode(Arena *a, const char *s, size_t n, uint8_t **out, size_t *outlen);

/* TVM's NDArray save format (little-endian): magic, reserved, device,
 * ndim, dtype, shape, nbytes, data.  Returns NULL with *err set when the
 * blob is malformed or of an unsupported dtype. */
Tensor *meta_decode_ndarray(Arena *a, const uint8_t *p, size_t n, const char **err);

#endif
