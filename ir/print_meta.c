/* print_meta.c — writes TVM's `#[metadata]` section: the constants a print
 * showed as meta[relay.Constant][i], as the SaveJSON graph TVM's astext()
 * appends (a root map "relay.Constant" → array of constant nodes) with each
 * tensor in TVM's NDArray save format, base64-encoded.  parser/metadata.c
 * reads it back, so printed text with the section parses on its own. */
#include <inttypes.h>
#include <stdlib.h>

#include "ir/ir.h"

enum { NDARRAY_DEVICE_CPU = 1 };
static const uint64_t NDARRAY_MAGIC = 0xDD5E40F096B4A13Full;

/* Little-endian bytes of v, as the NDArray format stores every field. */
static void put_le(StrBuf *b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) sb_putc(b, (char)(v >> (8 * i) & 0xff));
}

/* DLPack's type code and bits for a dtype: 0 int, 1 uint (bool: 1 bit), 2 float, 4 bfloat. */
static void dl_dtype(DType dt, unsigned *code, unsigned *bits) {
  *bits = dt == DT_BOOL ? 1 : (unsigned)dtype_bytes(dt) * 8;
  *code = dt == DT_BFLOAT16 ? 4 : dtype_is_float(dt) ? 2 : dtype_class(dt) == 'i' ? 0 : 1;
}

/* The NDArray save format: magic, reserved, device, rank, dtype, shape,
 * byte count, data (little-endian host assumed, as the reader does). */
static void ndarray_bytes(StrBuf *b, const Tensor *t) {
  unsigned code, bits;
  dl_dtype(t->dtype, &code, &bits);
  put_le(b, NDARRAY_MAGIC, 8), put_le(b, 0, 8);
  put_le(b, NDARRAY_DEVICE_CPU, 4), put_le(b, 0, 4);
  put_le(b, (uint64_t)t->ndim, 4);
  put_le(b, code, 1), put_le(b, bits, 1), put_le(b, 1, 2);
  for (int i = 0; i < t->ndim; i++) put_le(b, (uint64_t)t->shape[i], 8);
  uint64_t n = (uint64_t)t->numel * (uint64_t)dtype_bytes(t->dtype);
  put_le(b, n, 8);
  for (uint64_t i = 0; i < n; i++) sb_putc(b, (char)((const uint8_t *)t->data)[i]);
}

static void base64_to(StrBuf *out, const uint8_t *p, size_t n) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    sb_putc(out, abc[v >> 18 & 63]);
    sb_putc(out, abc[v >> 12 & 63]);
    sb_putc(out, i + 1 < n ? abc[v >> 6 & 63] : '=');
    sb_putc(out, i + 2 < n ? abc[v & 63] : '=');
  }
}

/* Nodes: 0 the empty node, 1 the root map, 2 the array, 3.. the constants
 * (constant i's `data` is b64ndarrays[i]). */
void print_metadata_to(StrBuf *b, const Tensor *const *consts, int64_t n) {
  sb_puts(b, "#[metadata]\n{\n  \"root\": 1,\n  \"nodes\": [\n    {\"type_key\": \"\"},\n");
  sb_puts(b, "    {\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]},\n");
  sb_puts(b, "    {\"type_key\": \"Array\", \"data\": [");
  for (int64_t i = 0; i < n; i++) sb_printf(b, "%s%" PRId64, i ? ", " : "", i + 3);
  sb_puts(b, "]}");
  for (int64_t i = 0; i < n; i++)
    sb_printf(b,
              ",\n    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", "
              "\"data\": \"%" PRId64 "\", \"span\": \"0\", \"virtual_device_\": \"0\"}}",
              i);
  sb_puts(b, "\n  ],\n  \"b64ndarrays\": [");
  for (int64_t i = 0; i < n; i++) {
    StrBuf raw = {0};
    ndarray_bytes(&raw, consts[i]);
    sb_puts(b, i ? ",\n    \"" : "\n    \"");
    base64_to(b, (const uint8_t *)raw.data, raw.len);
    sb_putc(b, '"');
    free(raw.data);
  }
  sb_puts(b, "\n  ],\n  \"attrs\": {\"tvm_version\": \"0.10.0\"}\n}\n");
}
