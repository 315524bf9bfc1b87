/* safetensors.c — .safetensors files (tensor_io.h): an 8-byte little-endian
 * header size N, N bytes of JSON
 *   {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...,
 *    "__metadata__": {"k": "v"}}
 * and the data region, addressed by offsets relative to its start.
 *
 * The header is read by the JSON reader (io/json.h, with a depth limit) and
 * checked against exactly that shape.  Offsets must cover the
 * data region exactly: in range, end >= begin, size = the shape's size, no
 * overlap and no hole (the format's own rules).  Entries keep the header's
 * order; the writer lays data out in entry order, 8-byte aligned header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "io/tensor_io_int.h"

enum {
  ST_MAX_HEADER = 100 << 20, /* the format's limit */
  ST_MAX_NAME = 1024,
  ST_MAX_DEPTH = 64,
};

/* X(code, rly dtype, bytes in the file). */
// clang-format off
#define ST_DTYPES(X)                                                              \
  X("BOOL", DT_BOOL, 1)   X("U8", DT_UINT8, 1)     X("I8", DT_INT8, 1)            \
  X("U16", DT_UINT16, 2)  X("I16", DT_INT16, 2)    X("U32", DT_UINT32, 4)         \
  X("I32", DT_INT32, 4)   X("U64", DT_UINT64, 8)   X("I64", DT_INT64, 8)          \
  X("F16", DT_FLOAT16, 2) X("F32", DT_FLOAT32, 4)  X("F64", DT_FLOAT64, 8)        \
  X("BF16", DT_BFLOAT16, 2)
// clang-format on

typedef struct StEntry {
  char name[ST_MAX_NAME];
  char dtype[16];
  DType dt;
  int esize; /* bytes per element in the file */
  int ndim;
  int64_t shape[TENSOR_MAX_RANK];
  uint64_t begin, end;
  bool has_dtype, has_shape, has_offsets;
} StEntry;

/* Where header errors go (the message buffer of tensor_io.h's calls). */
typedef struct StErr {
  char *why;
  size_t wn;
} StErr;

/* ───────────────────────── entries ───────────────────────── */

static bool st_dtype(StEntry *e, char *why, size_t wn) {
#define X(code, dt_, size)           \
  if (strcmp(e->dtype, code) == 0) { \
    e->dt = dt_, e->esize = size;    \
    return true;                     \
  }
  ST_DTYPES(X)
#undef X
  return tio_fail(why, wn,
                  "tensor '%s': unsupported dtype '%s' (supported: BOOL, U8..U64, "
                  "I8..I64, F16, F32, F64, BF16)",
                  e->name, e->dtype);
}

/* A JSON string that is a C string of fewer than cap bytes. */
static bool st_string(StErr *x, const JsonVal *v, char *out, size_t cap, const char *what) {
  if (!v || v->kind != JSON_STR)
    return tio_fail(x->why, x->wn, "header: %s must be a string", what);
  if (strlen(v->text) != v->len)
    return tio_fail(x->why, x->wn, "header: %s holds a NUL character", what);
  if (v->len >= cap)
    return tio_fail(x->why, x->wn, "header: string longer than %zu bytes", cap - 1);
  memcpy(out, v->text, v->len + 1);
  return true;
}

/* [a, b, ...] of non-negative integers; at most cap of them. */
static bool uint_list(StErr *x, const JsonVal *v, uint64_t *out, int cap, int *n,
                      const char *what) {
  if (!v || v->kind != JSON_ARR) return tio_fail(x->why, x->wn, "header: %s must be a list", what);
  if (v->n > cap) return tio_fail(x->why, x->wn, "header: too many values in %s", what);
  for (int i = 0; i < v->n; i++)
    if (!json_uint(v->items[i], &out[i]))
      return tio_fail(x->why, x->wn, "header: %s must be non-negative integers (below 2^64)", what);
  *n = v->n;
  return true;
}

static bool entry_shape(StErr *x, StEntry *e, const JsonVal *v) {
  uint64_t d[TENSOR_MAX_RANK];
  if (!uint_list(x, v, d, TENSOR_MAX_RANK, &e->ndim, "'shape'")) return false;
  for (int i = 0; i < e->ndim; i++) {
    if (d[i] > (uint64_t)INT64_MAX) return tio_fail(x->why, x->wn, "header: dimension too large");
    e->shape[i] = (int64_t)d[i];
  }
  return true;
}

static bool entry_offsets(StErr *x, StEntry *e, const JsonVal *v) {
  uint64_t o[2];
  int n;
  if (!uint_list(x, v, o, 2, &n, "'data_offsets'")) return false;
  if (n != 2) return tio_fail(x->why, x->wn, "tensor '%s': 'data_offsets' needs 2 values", e->name);
  e->begin = o[0], e->end = o[1];
  return true;
}

/* One field of a tensor entry (dtype, shape or data_offsets); unknown or
 * duplicate fields are errors, as the format allows no others. */
static bool entry_field(StErr *x, StEntry *e, const char *key, const JsonVal *v) {
  bool *seen = strcmp(key, "dtype") == 0          ? &e->has_dtype
               : strcmp(key, "shape") == 0        ? &e->has_shape
               : strcmp(key, "data_offsets") == 0 ? &e->has_offsets
                                                  : NULL;
  if (!seen) return tio_fail(x->why, x->wn, "tensor '%s': unexpected field '%s'", e->name, key);
  if (*seen) return tio_fail(x->why, x->wn, "tensor '%s': duplicate field '%s'", e->name, key);
  *seen = true;
  if (seen == &e->has_dtype) return st_string(x, v, e->dtype, sizeof e->dtype, "'dtype'");
  return seen == &e->has_shape ? entry_shape(x, e, v) : entry_offsets(x, e, v);
}

static bool entry_object(StErr *x, StEntry *e, const JsonVal *v) {
  if (v->kind != JSON_OBJ)
    return tio_fail(x->why, x->wn, "tensor '%s': expected an object", e->name);
  for (int i = 0; i < v->n; i++)
    if (!entry_field(x, e, v->keys[i], v->items[i])) return false;
  const char *missing = !e->has_dtype     ? "dtype"
                        : !e->has_shape   ? "shape"
                        : !e->has_offsets ? "data_offsets"
                                          : NULL;
  if (missing) return tio_fail(x->why, x->wn, "tensor '%s': missing '%s'", e->name, missing);
  return st_dtype(e, x->why, x->wn);
}

typedef struct StList {
  StEntry *items;
  int n, cap;
} StList;

static StEntry *list_push(StList *l) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 8;
    l->items = realloc(l->items, sizeof(StEntry) * (size_t)l->cap);
    if (!l->items) rly_oom();
  }
  StEntry *e = &l->items[l->n++];
  memset(e, 0, sizeof *e);
  return e;
}

static bool header_entry(StErr *x, StList *l, const JsonVal *top, int k, bool *seen_meta) {
  char name[ST_MAX_NAME];
  JsonVal key = {.kind = JSON_STR, .text = top->keys[k], .len = strlen(top->keys[k])};
  if (!st_string(x, &key, name, sizeof name, "a tensor name")) return false;
  if (strcmp(name, "__metadata__") == 0) {
    if (*seen_meta) return tio_fail(x->why, x->wn, "duplicate key '__metadata__'");
    *seen_meta = true;
    return true;
  }
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->items[i].name, name) == 0)
      return tio_fail(x->why, x->wn, "duplicate tensor name '%s'", name);
  StEntry *e = list_push(l);
  memcpy(e->name, name, sizeof name);
  return entry_object(x, e, top->items[k]);
}

/* The header: one JSON object (io/json.h) of tensor entries and an
 * optional `__metadata__` entry, whose value is not interpreted. */
static bool parse_header(StErr *x, const char *text, size_t len, StList *l) {
  Arena a;
  arena_init(&a);
  JsonError je;
  const JsonVal *top = json_parse(&a, text, len, ST_MAX_DEPTH, &je);
  bool ok = top != NULL, meta = false;
  if (!top)
    tio_fail(x->why, x->wn, "header: %s at byte %zu", je.msg, je.off);
  else if (top->kind != JSON_OBJ)
    ok = tio_fail(x->why, x->wn, "header: expected a JSON object");
  for (int k = 0; ok && k < top->n; k++) ok = header_entry(x, l, top, k, &meta);
  arena_free(&a);
  return ok;
}

/* ───────────────────────── data ───────────────────────── */

static int cmp_begin(const void *a, const void *b) {
  const StEntry *x = *(StEntry *const *)a, *y = *(StEntry *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static bool check_entry_range(const StEntry *e, uint64_t avail, char *why, size_t wn) {
  int64_t numel;
  uint64_t nbytes;
  char msg[256];
  if (!tio_shape_size(e->ndim, e->shape, e->esize, &numel, &nbytes, msg, sizeof msg))
    return tio_fail(why, wn, "tensor '%s': %s", e->name, msg);
  if (e->end < e->begin || e->end > avail)
    return tio_fail(why, wn,
                    "tensor '%s': data_offsets [%llu, %llu] out of range (data has "
                    "%llu bytes)",
                    e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                    (unsigned long long)avail);
  if (e->end - e->begin != nbytes)
    return tio_fail(why, wn,
                    "tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, the "
                    "shape and dtype %s need %llu",
                    e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                    (unsigned long long)(e->end - e->begin), e->dtype, (unsigned long long)nbytes);
  return true;
}

/* In range, no overlap, no hole. */
static bool check_layout(StList *l, uint64_t avail, char *why, size_t wn) {
  for (int i = 0; i < l->n; i++)
    if (!check_entry_range(&l->items[i], avail, why, wn)) return false;
  StEntry **s = malloc(sizeof(StEntry *) * ((size_t)l->n + 1));
  if (!s) rly_oom();
  for (int i = 0; i < l->n; i++) s[i] = &l->items[i];
  qsort(s, (size_t)l->n, sizeof *s, cmp_begin);
  bool ok = true;
  uint64_t at = 0;
  for (int i = 0; i < l->n && ok; i++) {
    if (s[i]->begin < at)
      ok = tio_fail(why, wn, "tensors '%s' and '%s' overlap", s[i - 1]->name, s[i]->name);
    else if (s[i]->begin > at)
      ok = tio_fail(why, wn, "hole in the data before tensor '%s' (bytes %llu..%llu unused)",
                    s[i]->name, (unsigned long long)at, (unsigned long long)s[i]->begin);
    at = s[i]->end;
  }
  if (ok && at != avail)
    ok = tio_fail(why, wn, "%llu bytes after the last tensor's data",
                  (unsigned long long)(avail - at));
  free(s);
  return ok;
}

/* Copies one entry's bytes into a tensor; bool bytes other than 0 and 1
 * are refused. */
static RtTensor *make_tensor(const StEntry *e, const uint8_t *src, char *why, size_t wn) {
  char msg[256];
  RtTensor *t = rt_tensor_new(e->dt, e->ndim, e->shape, msg, sizeof msg);
  if (!t) return tio_fail(why, wn, "tensor '%s': %s", e->name, msg), NULL;
  if (e->dt == DT_BOOL) {
    for (int64_t i = 0; i < t->numel; i++)
      if (src[i] > 1) {
        rt_tensor_release(t);
        return tio_fail(why, wn, "tensor '%s': bool element %lld is %u, not 0 or 1", e->name,
                        (long long)i, src[i]),
               NULL;
      }
    memcpy(t->data, src, (size_t)t->numel);
  } else if (t->numel) {
    memcpy(t->data, src, rt_tensor_nbytes(t));
  }
  return t;
}

/* Reads a .safetensors file: header length, JSON header, layout check,
 * then each tensor in header order. */
bool tio_st_parse(const uint8_t *p, size_t n, TioFile *out, char *why, size_t wn) {
  uint64_t hlen = tio_rd64(p); /* n >= 8: checked by the caller */
  if (hlen > ST_MAX_HEADER)
    return tio_fail(why, wn,
                    "not a tensor file (as .safetensors: header length %llu is above "
                    "the limit %d)",
                    (unsigned long long)hlen, ST_MAX_HEADER);
  if (hlen > n - 8)
    return tio_fail(why, wn, "truncated .safetensors: header length %llu, only %zu bytes follow",
                    (unsigned long long)hlen, n - 8);
  StErr x = {why, wn};
  StList l = {0};
  bool ok =
      parse_header(&x, (const char *)p + 8, hlen, &l) && check_layout(&l, n - 8 - hlen, why, wn);
  const uint8_t *data = p + 8 + hlen;
  for (int i = 0; ok && i < l.n; i++) {
    RtTensor *t = make_tensor(&l.items[i], data + l.items[i].begin, why, wn);
    ok = t && tio_add(out, l.items[i].name, t, why, wn);
    rt_tensor_release(t);
  }
  free(l.items);
  return ok;
}

/* ───────────────────────── writing ───────────────────────── */

static const char *st_code(DType dt) {
#define X(code, dt_, size) \
  if (dt == dt_ && size == dtype_bytes(dt_)) return code;
  ST_DTYPES(X)
#undef X
  RLY_UNREACHABLE();
}

static void put_json_string(StrBuf *b, const char *s) {
  sb_putc(b, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      sb_putc(b, '\\'), sb_putc(b, (char)c);
    else if (c < 0x20)
      sb_printf(b, "\\u%04x", c);
    else
      sb_putc(b, (char)c);
  }
  sb_putc(b, '"');
}

/* Writes a .safetensors file: the header padded with spaces to a multiple
 * of 8 (so the data is aligned), then the data in entry order. */
bool tio_st_encode(StrBuf *b, const TioFile *f, char *why, size_t wn) {
  StrBuf h = {0};
  uint64_t off = 0;
  sb_putc(&h, '{');
  for (int i = 0; i < f->n; i++) {
    const RtTensor *t = f->entries[i].t;
    if (i) sb_putc(&h, ',');
    put_json_string(&h, f->entries[i].name);
    sb_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", st_code(t->dtype));
    for (int k = 0; k < t->ndim; k++) sb_printf(&h, "%s%lld", k ? "," : "", (long long)t->shape[k]);
    uint64_t nb = rt_tensor_nbytes(t);
    sb_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
              (unsigned long long)(off + nb));
    off += nb;
  }
  sb_putc(&h, '}');
  while (h.len % 8) sb_putc(&h, ' ');
  tio_put64(b, h.len);
  sb_putn(b, h.data, h.len);
  sb_free(&h);
  for (int i = 0; i < f->n; i++)
    if (rt_tensor_nbytes(f->entries[i].t))
      sb_putn(b, f->entries[i].t->data, rt_tensor_nbytes(f->entries[i].t));
  (void)why, (void)wn;
  return true;
}
