/* metadata.c — TVM's `#[metadata]` JSON (read by io/json.h), the SaveJSON
 * graph layout (root → Map → Array → nodes whose
 * fields are node indices written as strings), base64 and the NDArray blob.
 *
 * Invariants: every read of the blob is bounds-checked and assembled byte
 * by byte (no misaligned loads); every JSON access checks the node kind;
 * errors carry an offset into the JSON text. */
#include "parser/metadata.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"

enum { JSON_MAX_DEPTH = 200 };
static const uint64_t NDARRAY_MAGIC = 0xDD5E40F096B4A13Full;

/* trailer := ( WS | '//' CHAR* | block comment )*
 * After the JSON value: white space and line or block comments (so a
 * test file can carry FileCheck lines after its metadata).  Returns the
 * position after it. */
static size_t skip_trailer(const char *s, size_t len, size_t pos) {
  for (;;) {
    while (pos < len && isspace((unsigned char)s[pos])) pos++;
    if (pos + 1 >= len || s[pos] != '/') return pos;
    if (s[pos + 1] == '/') {
      while (pos < len && s[pos] != '\n') pos++;
    } else if (s[pos + 1] == '*') {
      const char *end = memmem(s + pos + 2, len - pos - 2, "*/", 2);
      if (!end) return pos;
      pos = (size_t)(end - s) + 2;
    } else {
      return pos;
    }
  }
}

/* ── base64 ── */

static int b64val(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Standard base64 with white space skipped (TVM wraps long blobs); only
 * `=` padding may end the text, and leftover bits of a partial group are
 * rejected rather than silently dropped. */
bool meta_base64_decode(Arena *a, const char *s, size_t n, uint8_t **out, size_t *outlen) {
  uint8_t *buf = arena_alloc(a, n / 4 * 3 + 3);
  size_t k = 0, pad = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if (isspace(c)) continue;
    if (c == '=') {
      pad++;
      continue;
    }
    int v = b64val(c);
    if (v < 0 || pad) return false; /* bad character, or data after padding */
    acc = (acc << 6) | (uint32_t)v, bits += 6;
    if (bits >= 8) bits -= 8, buf[k++] = (uint8_t)(acc >> bits);
    acc &= (1u << bits) - 1;
  }
  if (pad > 2 || bits >= 6) return false;
  *out = buf, *outlen = k;
  return true;
}

/* ── NDArray blobs ── */

typedef struct Blob {
  const uint8_t *p;
  size_t n, pos;
  bool short_read;
} Blob;

static uint64_t rd(Blob *b, int bytes) {
  if (b->pos + (size_t)bytes > b->n) {
    b->short_read = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | b->p[b->pos + (size_t)i];
  b->pos += (size_t)bytes;
  return v;
}

/* DLPack's (type code, bits) to a dtype: 0 int, 1 uint (1 bit is bool),
 * 2 float, 4 bfloat (16 bits), 6 bool; anything else (vectors) is unsupported. */
static DType dtype_from_dl(unsigned code, unsigned bits) {
  if (code == 0)
    return bits == 8    ? DT_INT8
           : bits == 16 ? DT_INT16
           : bits == 32 ? DT_INT32
           : bits == 64 ? DT_INT64
                        : DT_INVALID;
  if (code == 1)
    return bits == 1    ? DT_BOOL
           : bits == 8  ? DT_UINT8
           : bits == 16 ? DT_UINT16
           : bits == 32 ? DT_UINT32
           : bits == 64 ? DT_UINT64
                        : DT_INVALID;
  if (code == 2)
    return bits == 16 ? DT_FLOAT16 : bits == 32 ? DT_FLOAT32 : bits == 64 ? DT_FLOAT64 : DT_INVALID;
  if (code == 4 && bits == 16) return DT_BFLOAT16; /* kDLBfloat */
  if (code == 6 && bits == 8) return DT_BOOL;
  return DT_INVALID;
}

/* Reads ndim dims into shape; checks sizes and the element count. */
static bool read_shape(Blob *b, int ndim, int64_t *shape, int64_t *numel) {
  *numel = 1;
  for (int i = 0; i < ndim; i++) {
    shape[i] = (int64_t)rd(b, 8);
    if (shape[i] < 0 || (shape[i] && *numel > INT64_MAX / 4096 / shape[i])) return false;
    *numel *= shape[i];
  }
  return !b->short_read;
}

/* Decodes TVM's NDArray save format (relay-grammar.md §6): header, dtype,
 * shape, byte count, data.  The byte count must match the shape exactly,
 * so a corrupt blob is an error and never a short or overlong read. */
Tensor *meta_decode_ndarray(Arena *a, const uint8_t *p, size_t n, const char **err) {
  Blob b = {p, n, 0, false};
  uint64_t magic = rd(&b, 8);
  rd(&b, 8); /* reserved */
  rd(&b, 4); /* device type */
  rd(&b, 4); /* device id */
  int32_t ndim = (int32_t)(uint32_t)rd(&b, 4);
  unsigned code = (unsigned)rd(&b, 1), bits = (unsigned)rd(&b, 1), lanes = (unsigned)rd(&b, 2);
  if (b.short_read || magic != NDARRAY_MAGIC)
    return *err = "not an NDArray (bad magic number)", NULL;
  if (ndim < 0 || ndim > TENSOR_MAX_RANK) return *err = "NDArray rank out of range", NULL;
  DType dt = dtype_from_dl(code, bits);
  if (dt == DT_INVALID || lanes != 1) return *err = "unsupported NDArray dtype", NULL;
  int64_t shape[TENSOR_MAX_RANK], numel;
  if (!read_shape(&b, ndim, shape, &numel)) return *err = "bad NDArray shape", NULL;
  uint64_t nbytes = rd(&b, 8);
  if (b.short_read || nbytes != (uint64_t)numel * (uint64_t)dtype_bytes(dt))
    return *err = "NDArray byte count does not match its shape", NULL;
  if (n - b.pos < nbytes) return *err = "NDArray data is truncated", NULL;
  Tensor *t = tensor_new(a, dt, ndim, shape);
  if (nbytes) memcpy(t->data, p + b.pos, (size_t)nbytes); /* little-endian host assumed */
  return t;
}

/* ── the SaveJSON graph ── */

typedef struct Graph {
  Arena *a;
  const JsonVal *nodes, *b64;
  const char *err;
  size_t err_off;
} Graph;

static bool gfail(Graph *g, const JsonVal *at, const char *msg) {
  if (!g->err) g->err = msg, g->err_off = at ? at->off : 0;
  return false;
}

/* A node index written as a number or as a decimal string. */
static bool as_index(const JsonVal *v, int64_t *out) {
  if (v && v->kind == JSON_NUM && v->num >= 0 && v->num < 1e15) return *out = (int64_t)v->num, true;
  if (!v || v->kind != JSON_STR || !v->text[0]) return false;
  char *end;
  long long x = strtoll(v->text, &end, 10);
  if (*end || x < 0) return false;
  *out = x;
  return true;
}

static const JsonVal *node_at(Graph *g, const JsonVal *ref) {
  int64_t i;
  if (!as_index(ref, &i) || i >= g->nodes->n)
    return gfail(g, ref, "bad node index in metadata"), NULL;
  const JsonVal *n = g->nodes->items[i];
  if (n->kind != JSON_OBJ) return gfail(g, n, "metadata node is not an object"), NULL;
  return n;
}

static const char *type_key(const JsonVal *node) {
  const JsonVal *k = json_get(node, "type_key");
  return k && k->kind == JSON_STR ? k->text : "";
}

static bool decode_constant(Graph *g, const JsonVal *node, MetaEntry *e) {
  const JsonVal *data = json_get(json_get(node, "attrs"), "data");
  int64_t i;
  if (!as_index(data, &i) || !g->b64 || i >= g->b64->n || g->b64->items[i]->kind != JSON_STR)
    return gfail(g, node, "relay.Constant has no valid `data` entry in b64ndarrays");
  const JsonVal *s = g->b64->items[i];
  uint8_t *bytes;
  size_t n;
  if (!meta_base64_decode(g->a, s->text, strlen(s->text), &bytes, &n))
    return gfail(g, s, "bad base64 in b64ndarrays");
  const char *err = NULL;
  e->tensor = meta_decode_ndarray(g->a, bytes, n, &err);
  return e->tensor ? true : gfail(g, s, err);
}

/* An integer attribute written as a decimal string ("-1"), else dflt. */
static int json_attr_int(const JsonVal *attrs, const char *key, int dflt) {
  const JsonVal *v = json_get(attrs, key);
  if (v && v->kind == JSON_NUM) return (int)v->num;
  if (!v || v->kind != JSON_STR || !v->text[0]) return dflt;
  char *end;
  long x = strtol(v->text, &end, 10);
  return *end || x < -1 || x > 1 << 20 ? dflt : (int)x;
}

/* VirtualDevice: device_type_int and virtual_device_id are values; the
 * memory scope is a node (a runtime.String with repr_str), 0 for none. */
static bool decode_virtual_device(Graph *g, const JsonVal *node, MetaEntry *e) {
  const JsonVal *attrs = json_get(node, "attrs");
  e->device_type = json_attr_int(attrs, "device_type_int", -1);
  e->device_id = json_attr_int(attrs, "virtual_device_id", -1);
  e->memory_scope = "";
  int64_t i;
  const JsonVal *scope = json_get(attrs, "memory_scope");
  if (scope && as_index(scope, &i) && i > 0) {
    const JsonVal *s = node_at(g, scope);
    const JsonVal *r = s ? json_get(s, "repr_str") : NULL;
    if (!s) return false;
    if (r && r->kind == JSON_STR) e->memory_scope = r->text;
  }
  return true;
}

static bool decode_entry(Graph *g, const JsonVal *ref, MetaEntry *e) {
  const JsonVal *node = node_at(g, ref);
  if (!node) return false;
  e->type_key = arena_strdup(g->a, type_key(node));
  if (strcmp(e->type_key, "relay.Constant") == 0) return decode_constant(g, node, e);
  if (strcmp(e->type_key, "VirtualDevice") == 0) return decode_virtual_device(g, node, e);
  const JsonVal *name = json_get(json_get(node, "attrs"), "name");
  if (name && name->kind == JSON_STR) e->name = name->text;
  return true;
}

static bool decode_array(Graph *g, const char *key, const JsonVal *ref, MetaArray *out) {
  const JsonVal *node = node_at(g, ref);
  if (!node) return false;
  const JsonVal *data = json_get(node, "data");
  if (!data || data->kind != JSON_ARR) return gfail(g, node, "metadata array has no `data` list");
  out->key = key, out->n = data->n;
  out->items = ARENA_ARRAY(g->a, MetaEntry, data->n ? data->n : 1);
  for (int i = 0; i < data->n; i++)
    if (!decode_entry(g, data->items[i], &out->items[i])) return false;
  return true;
}

/* The map key of entry i: from "keys" (TVM >= 0.8) or a String node. */
static const char *map_key(Graph *g, const JsonVal *map, const JsonVal *keys, int i) {
  if (keys && keys->kind == JSON_ARR && i < keys->n && keys->items[i]->kind == JSON_STR)
    return keys->items[i]->text;
  const JsonVal *data = json_get(map, "data");
  const JsonVal *kn = data && 2 * i < data->n ? node_at(g, data->items[2 * i]) : NULL;
  const JsonVal *s = kn ? json_get(kn, "repr_str") : NULL;
  return s && s->kind == JSON_STR ? s->text : NULL;
}

static bool decode_map(Graph *g, const JsonVal *map, MetaTable *out) {
  const JsonVal *keys = json_get(map, "keys"), *data = json_get(map, "data");
  if (!data || data->kind != JSON_ARR) return gfail(g, map, "metadata map has no `data` list");
  bool pairs = !keys || keys->kind != JSON_ARR;
  int n = pairs ? data->n / 2 : data->n;
  if (!pairs && keys->n != n) return gfail(g, map, "metadata map keys and data differ in length");
  out->narrays = n;
  out->arrays = ARENA_ARRAY(g->a, MetaArray, n ? n : 1);
  for (int i = 0; i < n; i++) {
    const char *key = map_key(g, map, keys, i);
    if (!key) return gfail(g, map, "metadata map key is not a string");
    if (!decode_array(g, key, data->items[pairs ? 2 * i + 1 : i], &out->arrays[i])) return false;
  }
  return true;
}

/* Reads the JSON after `#[metadata]` and decodes the root map into a table
 * of arrays by type key.  All or nothing: on any error the table is left
 * empty, with the first error and its offset in the JSON. */
bool meta_parse(Arena *a, const char *json, size_t len, MetaTable *out, const char **err,
                size_t *err_off) {
  memset(out, 0, sizeof *out);
  size_t pos = 0;
  JsonError je;
  JsonVal *top = json_read(a, json, len, &pos, JSON_MAX_DEPTH, &je);
  if (top && (pos = skip_trailer(json, len, pos)) < len)
    je.msg = "unexpected text after the metadata JSON", je.off = pos;
  if (je.msg) return *err = je.msg, *err_off = je.off, false;
  Graph g = {a, json_get(top, "nodes"), json_get(top, "b64ndarrays"), NULL, 0};
  const JsonVal *root = json_get(top, "root");
  if (!g.nodes || g.nodes->kind != JSON_ARR || !root)
    gfail(&g, top, "metadata JSON has no `root` and `nodes`");
  else if (g.b64 && g.b64->kind != JSON_ARR)
    gfail(&g, g.b64, "`b64ndarrays` is not a list");
  else {
    const JsonVal *map = node_at(&g, root);
    if (map) decode_map(&g, map, out);
  }
  if (g.err) { /* a half-decoded table is never used */
    memset(out, 0, sizeof *out);
    return *err = g.err, *err_off = g.err_off, false;
  }
  return true;
}

const MetaEntry *meta_get(const MetaTable *t, const char *key, size_t keylen, int64_t index) {
  if (!t) return NULL;
  for (int i = 0; i < t->narrays; i++) {
    const MetaArray *arr = &t->arrays[i];
    if (arr->key && strlen(arr->key) == keylen && memcmp(arr->key, key, keylen) == 0)
      return index >= 0 && index < arr->n ? &arr->items[index] : NULL;
  }
  return NULL;
}
