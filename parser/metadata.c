/* metadata.c — TVM's `#[metadata]` JSON: a JSON reader (recursive, with a
 * depth limit), the SaveJSON graph layout (root → Map → Array → nodes whose
 * fields are node indices written as strings), base64 and the NDArray blob.
 *
 * Invariants: every read of the blob is bounds-checked and assembled byte
 * by byte (no misaligned loads); every JSON access checks the node kind;
 * errors carry an offset into the JSON text. */
#include "parser/metadata.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { JSON_MAX_DEPTH = 200 };
static const uint64_t NDARRAY_MAGIC = 0xDD5E40F096B4A13Full;

/* ── JSON values ── */

typedef enum JKind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JKind;

typedef struct JVal JVal;
struct JVal {
  JKind kind;
  size_t off; /* where it starts in the text, for messages */
  double num;
  bool b;
  const char *str;
  int n;
  JVal **items;      /* J_ARR values, J_OBJ values */
  const char **keys; /* J_OBJ */
};

typedef struct JReader {
  Arena *a;
  const char *s;
  size_t len, pos;
  const char *err;
  size_t err_off;
} JReader;

static bool jfail(JReader *r, size_t off, const char *msg) {
  if (!r->err) r->err = msg, r->err_off = off;
  return false;
}

static void jspace(JReader *r) {
  while (r->pos < r->len && isspace((unsigned char)r->s[r->pos])) r->pos++;
}

/* trailer := ( WS | '//' CHAR* | block comment )*
 * After the JSON value: white space and line or block comments (so a
 * test file can carry FileCheck lines after its metadata). */
static void jtrailer(JReader *r) {
  for (;;) {
    jspace(r);
    if (r->pos + 1 >= r->len || r->s[r->pos] != '/') return;
    if (r->s[r->pos + 1] == '/') {
      while (r->pos < r->len && r->s[r->pos] != '\n') r->pos++;
    } else if (r->s[r->pos + 1] == '*') {
      const char *end = memmem(r->s + r->pos + 2, r->len - r->pos - 2, "*/", 2);
      if (!end) return;
      r->pos = (size_t)(end - r->s) + 2;
    } else {
      return;
    }
  }
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void put_utf8(StrBuf *b, unsigned cp) {
  if (cp < 0x80)
    sb_putc(b, (char)cp);
  else if (cp < 0x800)
    sb_putc(b, (char)(0xC0 | (cp >> 6))), sb_putc(b, (char)(0x80 | (cp & 63)));
  else {
    sb_putc(b, (char)(0xE0 | (cp >> 12)));
    sb_putc(b, (char)(0x80 | ((cp >> 6) & 63)));
    sb_putc(b, (char)(0x80 | (cp & 63)));
  }
}

/* escape := '\' ( '"' | '\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u' HEX HEX HEX HEX )
 * A \u escape is written as UTF-8; surrogate pairs are not joined, which
 * is enough for the ASCII names TVM writes. */
static bool jescape(JReader *r, StrBuf *b) {
  size_t at = r->pos;
  char e = r->pos + 1 < r->len ? r->s[r->pos + 1] : 0;
  r->pos += 2;
  const char *plain = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
  const char *k = e ? strchr(plain, e) : NULL;
  if (k) return sb_putc(b, to[k - plain]), true;
  if (e != 'u' || r->pos + 4 > r->len) return jfail(r, at, "bad escape in a JSON string");
  unsigned cp = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval((unsigned char)r->s[r->pos + (size_t)i]);
    if (h < 0) return jfail(r, at, "bad \\u escape in a JSON string");
    cp = cp * 16 + (unsigned)h;
  }
  r->pos += 4;
  put_utf8(b, cp);
  return true;
}

/* jstring := '"' ( CHAR | escape )* '"' */
static const char *jstring(JReader *r) {
  size_t start = r->pos++;
  StrBuf b = {0};
  while (r->pos < r->len && r->s[r->pos] != '"') {
    if (r->s[r->pos] == '\\') {
      if (!jescape(r, &b)) return sb_free(&b), NULL;
    } else {
      sb_putc(&b, r->s[r->pos++]);
    }
  }
  if (r->pos >= r->len) {
    sb_free(&b);
    jfail(r, start, "unterminated JSON string");
    return NULL;
  }
  r->pos++;
  const char *s = arena_strndup(r->a, b.data ? b.data : "", b.len);
  sb_free(&b);
  return s;
}

static JVal *jnew(JReader *r, JKind k, size_t off) {
  JVal *v = ARENA_NEW(r->a, JVal);
  v->kind = k, v->off = off;
  return v;
}

static JVal *jvalue(JReader *r, int depth);

/* jarray := '[' ( jvalue ( ',' jvalue )* )? ']'   (strict JSON: no trailing comma) */
static JVal *jarray(JReader *r, int depth) {
  JVal *v = jnew(r, J_ARR, r->pos++);
  PtrVec items = {0};
  jspace(r);
  if (r->pos < r->len && r->s[r->pos] == ']') return r->pos++, v;
  for (;;) {
    JVal *x = jvalue(r, depth + 1);
    if (!x) return vec_free(&items), NULL;
    vec_push(&items, x);
    jspace(r);
    char c = r->pos < r->len ? r->s[r->pos] : 0;
    r->pos++;
    if (c == ']') break;
    if (c != ',')
      return vec_free(&items), jfail(r, r->pos - 1, "expected `,` or `]` in a JSON array"), NULL;
  }
  v->n = (int)items.len;
  v->items = (JVal **)vec_finish(&items, r->a);
  return v;
}

/* jmember := jstring ':' jvalue */
static bool jmember(JReader *r, int depth, PtrVec *keys, PtrVec *vals) {
  jspace(r);
  if (r->pos >= r->len || r->s[r->pos] != '"')
    return jfail(r, r->pos, "expected a key in a JSON object");
  const char *k = jstring(r);
  if (!k) return false;
  jspace(r);
  if (r->pos >= r->len || r->s[r->pos] != ':')
    return jfail(r, r->pos, "expected `:` in a JSON object");
  r->pos++;
  JVal *x = jvalue(r, depth + 1);
  if (!x) return false;
  vec_push(keys, (void *)k);
  vec_push(vals, x);
  return true;
}

/* jobject := '{' ( jmember ( ',' jmember )* )? '}'   (keys kept in order; duplicates are not
 * merged) */
static JVal *jobject(JReader *r, int depth) {
  JVal *v = jnew(r, J_OBJ, r->pos++);
  PtrVec keys = {0}, vals = {0};
  jspace(r);
  if (r->pos < r->len && r->s[r->pos] == '}') return r->pos++, v;
  for (;;) {
    if (!jmember(r, depth, &keys, &vals)) return vec_free(&keys), vec_free(&vals), NULL;
    jspace(r);
    char c = r->pos < r->len ? r->s[r->pos] : 0;
    r->pos++;
    if (c == '}') break;
    if (c != ',') {
      vec_free(&keys), vec_free(&vals);
      jfail(r, r->pos - 1, "expected `,` or `}` in a JSON object");
      return NULL;
    }
  }
  v->n = (int)keys.len;
  v->keys = (const char **)vec_finish(&keys, r->a);
  v->items = (JVal **)vec_finish(&vals, r->a);
  return v;
}

/* jnumber := [-+0-9.eE]+   (whatever strtod reads completely) */
static JVal *jnumber(JReader *r) {
  size_t start = r->pos;
  while (r->pos < r->len && strchr("+-0123456789.eE", r->s[r->pos]) && r->s[r->pos]) r->pos++;
  char buf[64];
  size_t n = r->pos - start;
  if (n == 0 || n >= sizeof buf) return jfail(r, start, "bad JSON number"), NULL;
  memcpy(buf, r->s + start, n);
  buf[n] = 0;
  char *end;
  JVal *v = jnew(r, J_NUM, start);
  v->num = strtod(buf, &end);
  if (*end) return jfail(r, start, "bad JSON number"), NULL;
  return v;
}

/* jword := 'null' | 'true' | 'false' */
static JVal *jword(JReader *r) {
  static const char *const words[] = {"null", "true", "false"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if (r->pos + n <= r->len && memcmp(r->s + r->pos, words[i], n) == 0) {
      JVal *v = jnew(r, i == 0 ? J_NULL : J_BOOL, r->pos);
      v->b = i == 1;
      r->pos += n;
      return v;
    }
  }
  jfail(r, r->pos, "unexpected character in JSON");
  return NULL;
}

/* jvalue := jobject | jarray | jstring | jnumber | jword
 * The depth limit keeps hostile metadata from exhausting the C stack. */
static JVal *jvalue(JReader *r, int depth) {
  jspace(r);
  if (depth > JSON_MAX_DEPTH) return jfail(r, r->pos, "JSON nested too deeply"), NULL;
  if (r->pos >= r->len) return jfail(r, r->pos, "unexpected end of the metadata JSON"), NULL;
  char c = r->s[r->pos];
  if (c == '{') return jobject(r, depth);
  if (c == '[') return jarray(r, depth);
  if (c == '"') {
    size_t off = r->pos;
    const char *s = jstring(r);
    if (!s) return NULL;
    JVal *v = jnew(r, J_STR, off);
    v->str = s;
    return v;
  }
  if (c == '-' || isdigit((unsigned char)c)) return jnumber(r);
  return jword(r);
}

static const JVal *jget(const JVal *obj, const char *key) {
  if (!obj || obj->kind != J_OBJ) return NULL;
  for (int i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
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
 * 2 float, 6 bool; anything else (bfloat, vectors) is unsupported. */
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
  const JVal *nodes, *b64;
  const char *err;
  size_t err_off;
} Graph;

static bool gfail(Graph *g, const JVal *at, const char *msg) {
  if (!g->err) g->err = msg, g->err_off = at ? at->off : 0;
  return false;
}

/* A node index written as a number or as a decimal string. */
static bool as_index(const JVal *v, int64_t *out) {
  if (v && v->kind == J_NUM && v->num >= 0 && v->num < 1e15) return *out = (int64_t)v->num, true;
  if (!v || v->kind != J_STR || !v->str[0]) return false;
  char *end;
  long long x = strtoll(v->str, &end, 10);
  if (*end || x < 0) return false;
  *out = x;
  return true;
}

static const JVal *node_at(Graph *g, const JVal *ref) {
  int64_t i;
  if (!as_index(ref, &i) || i >= g->nodes->n)
    return gfail(g, ref, "bad node index in metadata"), NULL;
  const JVal *n = g->nodes->items[i];
  if (n->kind != J_OBJ) return gfail(g, n, "metadata node is not an object"), NULL;
  return n;
}

static const char *type_key(const JVal *node) {
  const JVal *k = jget(node, "type_key");
  return k && k->kind == J_STR ? k->str : "";
}

static bool decode_constant(Graph *g, const JVal *node, MetaEntry *e) {
  const JVal *data = jget(jget(node, "attrs"), "data");
  int64_t i;
  if (!as_index(data, &i) || !g->b64 || i >= g->b64->n || g->b64->items[i]->kind != J_STR)
    return gfail(g, node, "relay.Constant has no valid `data` entry in b64ndarrays");
  const JVal *s = g->b64->items[i];
  uint8_t *bytes;
  size_t n;
  if (!meta_base64_decode(g->a, s->str, strlen(s->str), &bytes, &n))
    return gfail(g, s, "bad base64 in b64ndarrays");
  const char *err = NULL;
  e->tensor = meta_decode_ndarray(g->a, bytes, n, &err);
  return e->tensor ? true : gfail(g, s, err);
}

/* An integer attribute written as a decimal string ("-1"), else dflt. */
static int json_attr_int(const JVal *attrs, const char *key, int dflt) {
  const JVal *v = jget(attrs, key);
  if (v && v->kind == J_NUM) return (int)v->num;
  if (!v || v->kind != J_STR || !v->str[0]) return dflt;
  char *end;
  long x = strtol(v->str, &end, 10);
  return *end || x < -1 || x > 1 << 20 ? dflt : (int)x;
}

/* VirtualDevice: device_type_int and virtual_device_id are values; the
 * memory scope is a node (a runtime.String with repr_str), 0 for none. */
static bool decode_virtual_device(Graph *g, const JVal *node, MetaEntry *e) {
  const JVal *attrs = jget(node, "attrs");
  e->device_type = json_attr_int(attrs, "device_type_int", -1);
  e->device_id = json_attr_int(attrs, "virtual_device_id", -1);
  e->memory_scope = "";
  int64_t i;
  const JVal *scope = jget(attrs, "memory_scope");
  if (scope && as_index(scope, &i) && i > 0) {
    const JVal *s = node_at(g, scope);
    const JVal *r = s ? jget(s, "repr_str") : NULL;
    if (!s) return false;
    if (r && r->kind == J_STR) e->memory_scope = r->str;
  }
  return true;
}

static bool decode_entry(Graph *g, const JVal *ref, MetaEntry *e) {
  const JVal *node = node_at(g, ref);
  if (!node) return false;
  e->type_key = arena_strdup(g->a, type_key(node));
  if (strcmp(e->type_key, "relay.Constant") == 0) return decode_constant(g, node, e);
  if (strcmp(e->type_key, "VirtualDevice") == 0) return decode_virtual_device(g, node, e);
  const JVal *name = jget(jget(node, "attrs"), "name");
  if (name && name->kind == J_STR) e->name = name->str;
  return true;
}

static bool decode_array(Graph *g, const char *key, const JVal *ref, MetaArray *out) {
  const JVal *node = node_at(g, ref);
  if (!node) return false;
  const JVal *data = jget(node, "data");
  if (!data || data->kind != J_ARR) return gfail(g, node, "metadata array has no `data` list");
  out->key = key, out->n = data->n;
  out->items = ARENA_ARRAY(g->a, MetaEntry, data->n ? data->n : 1);
  for (int i = 0; i < data->n; i++)
    if (!decode_entry(g, data->items[i], &out->items[i])) return false;
  return true;
}

/* The map key of entry i: from "keys" (TVM >= 0.8) or a String node. */
static const char *map_key(Graph *g, const JVal *map, const JVal *keys, int i) {
  if (keys && keys->kind == J_ARR && i < keys->n && keys->items[i]->kind == J_STR)
    return keys->items[i]->str;
  const JVal *data = jget(map, "data");
  const JVal *kn = data && 2 * i < data->n ? node_at(g, data->items[2 * i]) : NULL;
  const JVal *s = kn ? jget(kn, "repr_str") : NULL;
  return s && s->kind == J_STR ? s->str : NULL;
}

static bool decode_map(Graph *g, const JVal *map, MetaTable *out) {
  const JVal *keys = jget(map, "keys"), *data = jget(map, "data");
  if (!data || data->kind != J_ARR) return gfail(g, map, "metadata map has no `data` list");
  bool pairs = !keys || keys->kind != J_ARR;
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
  JReader r = {a, json, len, 0, NULL, 0};
  JVal *top = jvalue(&r, 0);
  if (top) {
    jtrailer(&r);
    if (r.pos < r.len) jfail(&r, r.pos, "unexpected text after the metadata JSON");
  }
  if (r.err) return *err = r.err, *err_off = r.err_off, false;
  Graph g = {a, jget(top, "nodes"), jget(top, "b64ndarrays"), NULL, 0};
  const JVal *root = jget(top, "root");
  if (!g.nodes || g.nodes->kind != J_ARR || !root)
    gfail(&g, top, "metadata JSON has no `root` and `nodes`");
  else if (g.b64 && g.b64->kind != J_ARR)
    gfail(&g, g.b64, "`b64ndarrays` is not a list");
  else {
    const JVal *map = node_at(&g, root);
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
