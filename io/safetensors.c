/* safetensors.c — .safetensors files (tensor_io.h): an 8-byte little-endian
 * header size N, N bytes of JSON
 *   {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...,
 *    "__metadata__": {"k": "v"}}
 * and the data region, addressed by offsets relative to its start.
 *
 * The JSON reader is a small recursive descent over exactly that shape
 * (metadata values are skipped with a depth limit).  Offsets must cover the
 * data region exactly: in range, end >= begin, size = the shape's size, no
 * overlap and no hole (the format's own rules).  Entries keep the header's
 * order; the writer lays data out in entry order, 8-byte aligned header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensor_io_int.h"

enum {
  ST_MAX_HEADER = 100 << 20, /* the format's limit */
  ST_MAX_NAME = 1024,
  ST_MAX_DEPTH = 64,
};

/* X(code, rly dtype, bytes in the file) — BF16 is widened to float32. */
// clang-format off
#define ST_DTYPES(X)                                                              \
  X("BOOL", DT_BOOL, 1)   X("U8", DT_UINT8, 1)     X("I8", DT_INT8, 1)            \
  X("U16", DT_UINT16, 2)  X("I16", DT_INT16, 2)    X("U32", DT_UINT32, 4)         \
  X("I32", DT_INT32, 4)   X("U64", DT_UINT64, 8)   X("I64", DT_INT64, 8)          \
  X("F16", DT_FLOAT16, 2) X("F32", DT_FLOAT32, 4)  X("F64", DT_FLOAT64, 8)        \
  X("BF16", DT_FLOAT32, 2)
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

typedef struct Json {
  const char *p, *end, *start;
  char *why;
  size_t wn;
} Json;

/* ───────────────────────── JSON ───────────────────────── */

static void ws(Json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static bool eat(Json *j, char c) {
  ws(j);
  if (j->p < j->end && *j->p == c) return j->p++, true;
  return false;
}

static bool expect(Json *j, char c) {
  if (eat(j, c)) return true;
  return tio_fail(j->why, j->wn, "header: expected '%c' at byte %td", c, j->p - j->start);
}

static bool put_utf8(char *out, size_t cap, size_t *len, uint32_t cp) {
  char tmp[4];
  size_t k = 0;
  if (cp < 0x80)
    tmp[k++] = (char)cp;
  else if (cp < 0x800)
    tmp[k++] = (char)(0xc0 | cp >> 6), tmp[k++] = (char)(0x80 | (cp & 0x3f));
  else if (cp < 0x10000)
    tmp[k++] = (char)(0xe0 | cp >> 12), tmp[k++] = (char)(0x80 | (cp >> 6 & 0x3f)),
    tmp[k++] = (char)(0x80 | (cp & 0x3f));
  else
    tmp[k++] = (char)(0xf0 | cp >> 18), tmp[k++] = (char)(0x80 | (cp >> 12 & 0x3f)),
    tmp[k++] = (char)(0x80 | (cp >> 6 & 0x3f)), tmp[k++] = (char)(0x80 | (cp & 0x3f));
  if (*len + k >= cap) return false;
  memcpy(out + *len, tmp, k);
  *len += k;
  return true;
}

static bool hex4(Json *j, uint32_t *v) {
  if (j->end - j->p < 4) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = *j->p++;
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return false;
    *v = *v << 4 | (uint32_t)d;
  }
  return true;
}

static bool escape(Json *j, uint32_t *cp) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  if (j->p >= j->end) return false;
  char c = *j->p++;
  const char *k = strchr(from, c);
  if (c && k) return *cp = (uint32_t)(unsigned char)to[k - from], true;
  if (c != 'u' || !hex4(j, cp)) return false;
  if (*cp >= 0xd800 && *cp < 0xdc00) { /* a surrogate pair */
    uint32_t lo;
    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') return false;
    j->p += 2;
    if (!hex4(j, &lo) || lo < 0xdc00 || lo >= 0xe000) return false;
    *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  return *cp != 0; /* names are C strings */
}

/* A string into out (NUL-terminated); NULL out just skips it. */
static bool string(Json *j, char *out, size_t cap) {
  char dummy[8];
  if (!out) out = dummy, cap = 0;
  ws(j);
  if (j->p >= j->end || *j->p != '"') return tio_fail(j->why, j->wn, "header: expected a string");
  j->p++;
  size_t len = 0;
  while (j->p < j->end && *j->p != '"') {
    uint32_t cp = (unsigned char)*j->p++;
    if (cp < 0x20 || (cp == '\\' && !escape(j, &cp)))
      return tio_fail(j->why, j->wn, "header: bad character or escape in a string");
    if (cap && !put_utf8(out, cap, &len, cp))
      return tio_fail(j->why, j->wn, "header: string longer than %zu bytes", cap - 1);
  }
  if (j->p >= j->end) return tio_fail(j->why, j->wn, "header: unterminated string");
  j->p++;
  if (cap) out[len] = 0;
  return true;
}

static bool uint_value(Json *j, uint64_t *v, const char *what) {
  ws(j);
  const char *s = j->p;
  uint64_t x = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*j->p - '0'), &x))
      return tio_fail(j->why, j->wn, "header: %s value too large", what);
    j->p++;
  }
  if (j->p == s || (j->p < j->end && strchr(".eE-", *j->p)))
    return tio_fail(j->why, j->wn, "header: %s must be non-negative integers", what);
  *v = x;
  return true;
}

/* [a, b, ...] of non-negative integers; at most cap of them. */
static bool uint_list(Json *j, uint64_t *out, int cap, int *n, const char *what) {
  if (!expect(j, '[')) return false;
  *n = 0;
  if (eat(j, ']')) return true;
  do {
    if (*n == cap) return tio_fail(j->why, j->wn, "header: too many values in %s", what);
    if (!uint_value(j, &out[(*n)++], what)) return false;
  } while (eat(j, ','));
  return expect(j, ']');
}

/* Skips any JSON value (the `__metadata__` entries), checking only the
 * structure; the depth limit keeps a hostile header off the C stack. */
static bool skip_value(Json *j, int depth) {
  if (depth > ST_MAX_DEPTH) return tio_fail(j->why, j->wn, "header: nested too deeply");
  ws(j);
  if (j->p >= j->end) return tio_fail(j->why, j->wn, "header: unexpected end");
  char c = *j->p;
  if (c == '"') return string(j, NULL, 0);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->p++;
    if (eat(j, close)) return true;
    do {
      if (c == '{' && (!string(j, NULL, 0) || !expect(j, ':'))) return false;
      if (!skip_value(j, depth + 1)) return false;
    } while (eat(j, ','));
    return expect(j, close);
  }
  const char *s = j->p;
  while (j->p < j->end && strchr("0123456789+-.eEtruefalsn", *j->p)) j->p++;
  if (j->p == s) return tio_fail(j->why, j->wn, "header: unexpected character '%c'", c);
  return true;
}

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

/* One field of a tensor entry (dtype, shape or data_offsets); unknown or
 * duplicate fields are errors, as the format allows no others. */
static bool entry_field(Json *j, StEntry *e) {
  char key[32];
  if (!string(j, key, sizeof key) || !expect(j, ':')) return false;
  bool dup;
  uint64_t v[TENSOR_MAX_RANK + 1];
  int n;
  if (strcmp(key, "dtype") == 0) {
    dup = e->has_dtype, e->has_dtype = true;
    if (!string(j, e->dtype, sizeof e->dtype)) return false;
  } else if (strcmp(key, "shape") == 0) {
    dup = e->has_shape, e->has_shape = true;
    if (!uint_list(j, v, TENSOR_MAX_RANK, &n, "'shape'")) return false;
    e->ndim = n;
    for (int i = 0; i < n; i++) {
      if (v[i] > (uint64_t)INT64_MAX) return tio_fail(j->why, j->wn, "header: dimension too large");
      e->shape[i] = (int64_t)v[i];
    }
  } else if (strcmp(key, "data_offsets") == 0) {
    dup = e->has_offsets, e->has_offsets = true;
    if (!uint_list(j, v, 2, &n, "'data_offsets'")) return false;
    if (n != 2)
      return tio_fail(j->why, j->wn, "tensor '%s': 'data_offsets' needs 2 values", e->name);
    e->begin = v[0], e->end = v[1];
  } else {
    return tio_fail(j->why, j->wn, "tensor '%s': unexpected field '%s'", e->name, key);
  }
  if (dup) return tio_fail(j->why, j->wn, "tensor '%s': duplicate field '%s'", e->name, key);
  return true;
}

static bool entry_object(Json *j, StEntry *e) {
  if (!expect(j, '{')) return false;
  if (!eat(j, '}')) {
    do
      if (!entry_field(j, e)) return false;
    while (eat(j, ','));
    if (!expect(j, '}')) return false;
  }
  const char *missing = !e->has_dtype     ? "dtype"
                        : !e->has_shape   ? "shape"
                        : !e->has_offsets ? "data_offsets"
                                          : NULL;
  if (missing) return tio_fail(j->why, j->wn, "tensor '%s': missing '%s'", e->name, missing);
  return st_dtype(e, j->why, j->wn);
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

static bool header_entry(Json *j, StList *l, bool *seen_meta) {
  char name[ST_MAX_NAME];
  if (!string(j, name, sizeof name) || !expect(j, ':')) return false;
  if (strcmp(name, "__metadata__") == 0) {
    if (*seen_meta) return tio_fail(j->why, j->wn, "duplicate key '__metadata__'");
    *seen_meta = true;
    return skip_value(j, 0);
  }
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->items[i].name, name) == 0)
      return tio_fail(j->why, j->wn, "duplicate tensor name '%s'", name);
  StEntry *e = list_push(l);
  memcpy(e->name, name, sizeof name);
  return entry_object(j, e);
}

static bool parse_header(Json *j, StList *l) {
  bool meta = false;
  if (!expect(j, '{')) return false;
  if (!eat(j, '}')) {
    do
      if (!header_entry(j, l, &meta)) return false;
    while (eat(j, ','));
    if (!expect(j, '}')) return false;
  }
  ws(j);
  if (j->p != j->end)
    return tio_fail(j->why, j->wn, "header: unexpected text after the JSON object");
  return true;
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

/* Copies one entry's bytes into a tensor; BF16 widens to float32 (the top
 * half of its bits), and bool bytes other than 0 and 1 are refused. */
static RtTensor *make_tensor(const StEntry *e, const uint8_t *src, char *why, size_t wn) {
  char msg[256];
  RtTensor *t = rt_tensor_new(e->dt, e->ndim, e->shape, msg, sizeof msg);
  if (!t) return tio_fail(why, wn, "tensor '%s': %s", e->name, msg), NULL;
  if (strcmp(e->dtype, "BF16") == 0) {
    float *d = t->data;
    for (int64_t i = 0; i < t->numel; i++) {
      uint32_t bits = (uint32_t)tio_rd16(src + 2 * i) << 16;
      memcpy(&d[i], &bits, 4);
    }
  } else if (e->dt == DT_BOOL) {
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
  Json j = {(const char *)p + 8, (const char *)p + 8 + hlen, (const char *)p + 8, why, wn};
  StList l = {0};
  bool ok = parse_header(&j, &l) && check_layout(&l, n - 8 - hlen, why, wn);
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
