/* tensor_io.c — tensor files: dispatch by content, shared helpers, and the
 * .npy format (see tensor_io.h).
 *
 * A .npy file is `\x93NUMPY`, a version (1.0: u16 header length; 2.0 and
 * 3.0: u32), a Python dict literal {'descr': '<f4', 'fortran_order':
 * False, 'shape': (2, 3), } and the raw data.  The header parser accepts
 * exactly that literal grammar (strings, True/False, tuples of integers)
 * and requires the three keys once each; the data must be exactly the
 * size the shape says. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/tensor_io_int.h"
#include "rt/exec.h"

enum {
  NPY_MAX_HEADER = 1 << 20, /* numpy itself refuses headers above 10000 bytes by default */
};

bool tio_fail(char *why, size_t n, const char *fmt, ...) {
  if (!why || !n) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return false;
}

void tio_put16(StrBuf *b, uint16_t v) {
  char c[2] = {(char)(v & 0xff), (char)(v >> 8)};
  sb_putn(b, c, 2);
}
void tio_put32(StrBuf *b, uint32_t v) {
  tio_put16(b, (uint16_t)(v & 0xffff));
  tio_put16(b, (uint16_t)(v >> 16));
}
void tio_put64(StrBuf *b, uint64_t v) {
  tio_put32(b, (uint32_t)(v & 0xffffffffu));
  tio_put32(b, (uint32_t)(v >> 32));
}

bool tio_shape_size(int ndim, const int64_t *shape, int esize, int64_t *numel, uint64_t *nbytes,
                    char *why, size_t n) {
  if (ndim > TENSOR_MAX_RANK)
    return tio_fail(why, n, "rank %d is above the limit %d", ndim, TENSOR_MAX_RANK);
  int64_t e = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return tio_fail(why, n, "negative dimension %lld", (long long)shape[i]);
    if (__builtin_mul_overflow(e, shape[i], &e))
      return tio_fail(why, n, "the shape's element count overflows 64 bits");
  }
  uint64_t bytes;
  if (__builtin_mul_overflow((uint64_t)e, (uint64_t)esize, &bytes))
    return tio_fail(why, n, "the shape's byte size overflows 64 bits");
  *numel = e, *nbytes = bytes;
  return true;
}

/* ───────────────────────── files and entries ───────────────────────── */

TioFormat tio_format_of_path(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return TIO_UNKNOWN;
  if (strcmp(dot, ".npy") == 0) return TIO_NPY;
  if (strcmp(dot, ".npz") == 0) return TIO_NPZ;
  if (strcmp(dot, ".safetensors") == 0) return TIO_SAFETENSORS;
  return TIO_UNKNOWN;
}

const char *tio_format_name(TioFormat f) {
  static const char *const names[] = {"unknown", ".npy", ".npz", ".safetensors"};
  return names[f];
}

void tio_file_free(TioFile *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->entries[i].name);
    rt_tensor_release(f->entries[i].t);
  }
  free(f->entries);
  *f = (TioFile){0};
}

const TioEntry *tio_find(const TioFile *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->entries[i].name, name) == 0) return &f->entries[i];
  return NULL;
}

bool tio_add(TioFile *f, const char *name, RtTensor *t, char *err, size_t errn) {
  if (tio_find(f, name)) return tio_fail(err, errn, "duplicate entry '%s'", name);
  if (f->n == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 8;
    f->entries = realloc(f->entries, sizeof(TioEntry) * (size_t)f->cap);
    if (!f->entries) rly_oom();
  }
  char *copy = strdup(name);
  if (!copy) rly_oom();
  f->entries[f->n++] = (TioEntry){copy, rt_tensor_retain(t)};
  return true;
}

static TioFormat sniff(const uint8_t *p, size_t n) {
  if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) return TIO_NPY;
  if (n >= 4 && p[0] == 'P' && p[1] == 'K') return TIO_NPZ;
  return TIO_SAFETENSORS;
}

bool tio_load_mem(const char *name, const uint8_t *data, size_t n, TioFile *out, char *err,
                  size_t errn) {
  *out = (TioFile){0};
  char why[RT_ERR_LEN] = "";
  bool ok = false;
  switch (sniff(data, n)) {
    case TIO_NPY: {
      RtTensor *t = NULL;
      ok = tio_npy_parse(data, n, &t, why, sizeof why);
      if (ok) ok = tio_add(out, "arr_0", t, why, sizeof why); /* np.savez's name for it */
      rt_tensor_release(t);
      break;
    }
    case TIO_NPZ:
      ok = tio_npz_parse(data, n, out, why, sizeof why);
      break;
    default:
      if (n < 8)
        ok = tio_fail(why, sizeof why,
                      "not a tensor file (%zu bytes: too short for .npy, "
                      ".npz or .safetensors)",
                      n);
      else
        ok = tio_st_parse(data, n, out, why, sizeof why);
  }
  if (!ok) {
    tio_file_free(out);
    tio_fail(err, errn, "%s: %s", name, why);
  }
  return ok;
}

/* The whole file, mapped read-only (no copy: weights can be large); an
 * empty file is a 1-byte dummy.  *n is the size. */
static uint8_t *map_file(const char *path, size_t *n, char *err, size_t errn) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return tio_fail(err, errn, "%s: cannot open: %s", path, strerror(errno)), NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return tio_fail(err, errn, "%s: not a regular file", path), NULL;
  }
  static uint8_t empty[1];
  *n = (size_t)st.st_size;
  void *p = *n ? mmap(NULL, *n, PROT_READ, MAP_PRIVATE, fd, 0) : empty;
  close(fd);
  if (p == MAP_FAILED)
    return tio_fail(err, errn, "%s: cannot read: %s", path, strerror(errno)), NULL;
  return p;
}

bool tio_load(const char *path, TioFile *out, char *err, size_t errn) {
  *out = (TioFile){0};
  size_t n = 0;
  uint8_t *buf = map_file(path, &n, err, errn);
  if (!buf) return false;
  bool ok = tio_load_mem(path, buf, n, out, err, errn);
  if (n) munmap(buf, n);
  return ok;
}

/* Encodes a tensor file in the given format; the result is malloc'ed (never
 * NULL on success, even when empty). */
uint8_t *tio_encode(TioFormat fmt, const TioFile *f, size_t *n, char *err, size_t errn) {
  StrBuf b = {0};
  bool ok = true;
  if (fmt == TIO_NPY) {
    if (f->n != 1)
      ok = tio_fail(err, errn, "a .npy file holds one tensor, not %d (use .npz or .safetensors)",
                    f->n);
    else
      tio_npy_encode(&b, f->entries[0].t);
  } else if (fmt == TIO_NPZ) {
    ok = tio_npz_encode(&b, f, err, errn);
  } else if (fmt == TIO_SAFETENSORS) {
    ok = tio_st_encode(&b, f, err, errn);
  } else {
    ok = tio_fail(err, errn, "unknown tensor file format (use .npy, .npz or .safetensors)");
  }
  if (!ok) return sb_free(&b), NULL;
  *n = b.len;
  if (!b.data) sb_putc(&b, 0);
  return (uint8_t *)sb_take(&b);
}

bool tio_save(const char *path, TioFormat fmt, const TioFile *f, char *err, size_t errn) {
  char why[RT_ERR_LEN] = "";
  size_t n = 0;
  uint8_t *bytes = tio_encode(fmt, f, &n, why, sizeof why);
  if (!bytes) return tio_fail(err, errn, "%s: %s", path, why);
  FILE *fp = fopen(path, "wb");
  bool ok = fp && fwrite(bytes, 1, n, fp) == n;
  if (fp && fclose(fp) != 0) ok = false;
  free(bytes);
  if (!ok) return tio_fail(err, errn, "%s: cannot write: %s", path, strerror(errno));
  return true;
}

/* ───────────────────────── .npy header ───────────────────────── */

typedef struct Hdr {
  const char *p, *end;
  char descr[32];
  int fortran; /* -1 until seen */
  int ndim;    /* -1 until seen */
  int64_t shape[TENSOR_MAX_RANK];
} Hdr;

static void skip_ws(Hdr *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static bool eat(Hdr *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) return h->p++, true;
  return false;
}

/* 'text' or "text" (no escapes: numpy's keys and dtype strings have none). */
static bool hdr_string(Hdr *h, char *out, size_t cap, char *why, size_t wn) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return tio_fail(why, wn, "header: expected a quoted string");
  char q = *h->p++;
  const char *s = h->p;
  while (h->p < h->end && *h->p != q) h->p++;
  if (h->p >= h->end) return tio_fail(why, wn, "header: unterminated string");
  size_t len = (size_t)(h->p++ - s);
  if (len >= cap) return tio_fail(why, wn, "header: string '%.20s...' is too long", s);
  memcpy(out, s, len);
  out[len] = 0;
  return true;
}

static bool hdr_int(Hdr *h, int64_t *v, char *why, size_t wn) {
  skip_ws(h);
  int64_t x = 0;
  const char *s = h->p;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *h->p - '0', &x))
      return tio_fail(why, wn, "header: dimension too large");
    h->p++;
  }
  if (h->p == s)
    return tio_fail(why, wn, "header: 'shape' must be a tuple of non-negative integers");
  if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2's long literals */
  *v = x;
  return true;
}

/* (d0, d1, ...) with an optional trailing comma; () is rank 0. */
static bool hdr_shape(Hdr *h, char *why, size_t wn) {
  if (!eat(h, '(')) return tio_fail(why, wn, "header: 'shape' must be a tuple");
  h->ndim = 0;
  while (!eat(h, ')')) {
    if (h->ndim == TENSOR_MAX_RANK)
      return tio_fail(why, wn, "header: rank above the limit %d", TENSOR_MAX_RANK);
    if (!hdr_int(h, &h->shape[h->ndim++], why, wn)) return false;
    if (!eat(h, ',')) {
      if (!eat(h, ')')) return tio_fail(why, wn, "header: expected ',' or ')' in 'shape'");
      break;
    }
  }
  return true;
}

static bool hdr_bool(Hdr *h, int *out, char *why, size_t wn) {
  skip_ws(h);
  size_t left = (size_t)(h->end - h->p);
  if (left >= 4 && memcmp(h->p, "True", 4) == 0) return h->p += 4, *out = 1, true;
  if (left >= 5 && memcmp(h->p, "False", 5) == 0) return h->p += 5, *out = 0, true;
  return tio_fail(why, wn, "header: 'fortran_order' must be True or False");
}

/* One `'key': value` of an .npy header dict; only descr, fortran_order and
 * shape exist, each at most once. */
static bool hdr_entry(Hdr *h, char *why, size_t wn) {
  char key[32];
  if (!hdr_string(h, key, sizeof key, why, wn)) return false;
  if (!eat(h, ':')) return tio_fail(why, wn, "header: expected ':' after '%s'", key);
  bool dup = false;
  if (strcmp(key, "descr") == 0) {
    dup = h->descr[0] != 0;
    skip_ws(h);
    if (h->p < h->end && *h->p == '[')
      return tio_fail(why, wn, "unsupported dtype: structured arrays (a list 'descr')");
    if (!hdr_string(h, h->descr, sizeof h->descr, why, wn)) return false;
    if (!h->descr[0]) return tio_fail(why, wn, "header: empty 'descr'");
  } else if (strcmp(key, "fortran_order") == 0) {
    dup = h->fortran >= 0;
    if (!hdr_bool(h, &h->fortran, why, wn)) return false;
  } else if (strcmp(key, "shape") == 0) {
    dup = h->ndim >= 0;
    if (!hdr_shape(h, why, wn)) return false;
  } else {
    return tio_fail(why, wn, "header: unexpected key '%s'", key);
  }
  if (dup) return tio_fail(why, wn, "header: duplicate key '%s'", key);
  return true;
}

static bool hdr_parse(Hdr *h, char *why, size_t wn) {
  h->descr[0] = 0, h->fortran = -1, h->ndim = -1;
  if (!eat(h, '{')) return tio_fail(why, wn, "header: expected a dict '{...}'");
  while (!eat(h, '}')) {
    if (!hdr_entry(h, why, wn)) return false;
    if (!eat(h, ',')) {
      if (!eat(h, '}')) return tio_fail(why, wn, "header: expected ',' or '}'");
      break;
    }
  }
  skip_ws(h);
  if (h->p != h->end) return tio_fail(why, wn, "header: unexpected text after the dict");
  if (!h->descr[0]) return tio_fail(why, wn, "header: missing key 'descr'");
  if (h->fortran < 0) return tio_fail(why, wn, "header: missing key 'fortran_order'");
  if (h->ndim < 0) return tio_fail(why, wn, "header: missing key 'shape'");
  return true;
}

/* numpy's type string ('<f4', '|b1', '>i8') → dtype and byte order. */
static bool npy_dtype(const char *d, DType *dt, bool *swap, char *why, size_t wn) {
  bool marked = d[0] && strchr("<>|=", d[0]);
  char order = marked ? d[0] : '=';
  const char *code = marked ? d + 1 : d;
  static const struct {
    const char *code;
    DType dt;
  } map[] = {{"b1", DT_BOOL},    {"?", DT_BOOL},     {"i1", DT_INT8},    {"i2", DT_INT16},
             {"i4", DT_INT32},   {"i8", DT_INT64},   {"u1", DT_UINT8},   {"u2", DT_UINT16},
             {"u4", DT_UINT32},  {"u8", DT_UINT64},  {"f2", DT_FLOAT16}, {"f4", DT_FLOAT32},
             {"f8", DT_FLOAT64}, {"V2", DT_BFLOAT16}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(code, map[i].code) == 0) {
      *dt = map[i].dt;
      *swap = order == '>' && dtype_bytes(*dt) > 1;
      return true;
    }
  return tio_fail(why, wn,
                  "unsupported dtype '%s' (rly has bool, int8..64, uint8..64, "
                  "float16/32/64, and bfloat16 as 2-byte void 'V2')",
                  d);
}

/* ───────────────────────── .npy data ───────────────────────── */

static void swap_bytes(uint8_t *p, int64_t numel, int esize) {
  for (int64_t i = 0; i < numel; i++, p += esize)
    for (int a = 0, b = esize - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b], p[b] = t;
    }
}

/* Column-major src → row-major dst: walk dst in order, keeping the source
 * offset of the current index (an odometer over the dims). */
static void fortran_to_c(uint8_t *dst, const uint8_t *src, int ndim, const int64_t *shape,
                         int64_t numel, int esize) {
  int64_t stride[TENSOR_MAX_RANK], idx[TENSOR_MAX_RANK] = {0}, off = 0;
  int64_t s = 1;
  for (int k = 0; k < ndim; k++) stride[k] = s, s *= shape[k];
  for (int64_t i = 0; i < numel; i++) {
    memcpy(dst + i * esize, src + off * esize, (size_t)esize);
    for (int k = ndim - 1; k >= 0; k--) {
      off += stride[k];
      if (++idx[k] < shape[k]) break;
      off -= stride[k] * shape[k];
      idx[k] = 0;
    }
  }
}

static bool bool_bytes_ok(const uint8_t *p, int64_t n, char *why, size_t wn) {
  for (int64_t i = 0; i < n; i++)
    if (p[i] > 1)
      return tio_fail(why, wn, "bool element %lld is %u, not 0 or 1", (long long)i, p[i]);
  return true;
}

/* Header fields → a tensor holding the data in C order, native endian. */
/* memcpy in 16 MiB pieces (the pages of a mapped file are read as they
 * are copied), stopping on Ctrl-C; false then. */
static bool copy_polling(void *dst, const uint8_t *src, size_t n) {
  enum { PIECE = 16 << 20 };
  for (size_t at = 0; at < n; at += PIECE) {
    if (rt_interrupt_flag) return false;
    memcpy((uint8_t *)dst + at, src + at, n - at < PIECE ? n - at : PIECE);
  }
  return true;
}

static bool npy_data(const Hdr *h, const uint8_t *data, size_t avail, RtTensor **out, char *why,
                     size_t wn) {
  DType dt = DT_INVALID;
  bool swap = false;
  if (!npy_dtype(h->descr, &dt, &swap, why, wn)) return false;
  int64_t numel;
  uint64_t nbytes;
  int es = dtype_bytes(dt);
  if (!tio_shape_size(h->ndim, h->shape, es, &numel, &nbytes, why, wn)) return false;
  if (nbytes > avail)
    return tio_fail(why, wn, "truncated: the shape needs %llu data bytes, the file has %zu",
                    (unsigned long long)nbytes, avail);
  if (nbytes < avail)
    return tio_fail(why, wn, "%zu bytes after the data (the shape needs %llu)",
                    avail - (size_t)nbytes, (unsigned long long)nbytes);
  if (dt == DT_BOOL && !bool_bytes_ok(data, numel, why, wn)) return false;
  RtTensor *t = rt_tensor_new(dt, h->ndim, h->shape, why, wn);
  if (!t) return false;
  if (h->fortran && h->ndim > 1)
    fortran_to_c(t->data, data, h->ndim, h->shape, numel, es);
  else if (nbytes && !copy_polling(t->data, data, (size_t)nbytes)) {
    rt_tensor_release(t);
    return tio_fail(why, wn, "interrupted");
  }
  if (swap) swap_bytes(t->data, numel, es);
  *out = t;
  return true;
}

/* Reads an .npy file: preamble (versions 1.0 to 3.0), header dict, data;
 * every length is checked against the file before use. */
bool tio_npy_parse(const uint8_t *p, size_t n, RtTensor **out, char *why, size_t wn) {
  *out = NULL;
  if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
    return tio_fail(why, wn, n < 10 ? "truncated .npy preamble" : "bad .npy magic");
  unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return tio_fail(why, wn, "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are)", major,
                    minor);
  size_t start = major == 1 ? 10 : 12;
  if (n < start) return tio_fail(why, wn, "truncated .npy preamble");
  size_t hlen = major == 1 ? tio_rd16(p + 8) : tio_rd32(p + 8);
  if (hlen > NPY_MAX_HEADER)
    return tio_fail(why, wn, "header length %zu is above the limit %d", hlen, NPY_MAX_HEADER);
  if (hlen > n - start)
    return tio_fail(why, wn, "truncated: header length %zu but only %zu bytes follow", hlen,
                    n - start);
  Hdr h = {.p = (const char *)p + start, .end = (const char *)p + start + hlen};
  if (!hdr_parse(&h, why, wn)) return false;
  return npy_data(&h, p + start + hlen, n - start - hlen, out, why, wn);
}

static const char *npy_descr(DType dt) {
  switch (dt) {
    case DT_BOOL:
      return "|b1";
    case DT_INT8:
      return "|i1";
    case DT_UINT8:
      return "|u1";
    case DT_INT16:
      return "<i2";
    case DT_INT32:
      return "<i4";
    case DT_INT64:
      return "<i8";
    case DT_UINT16:
      return "<u2";
    case DT_UINT32:
      return "<u4";
    case DT_UINT64:
      return "<u8";
    case DT_FLOAT16:
      return "<f2";
    case DT_FLOAT32:
      return "<f4";
    case DT_FLOAT64:
      return "<f8";
    case DT_BFLOAT16: /* numpy has none: what it writes for ml_dtypes.bfloat16 */
      return "<V2";
    default:
      RLY_UNREACHABLE();
  }
}

/* Version 1.0 when the header fits a u16, else 2.0; the data starts at a
 * multiple of 64 bytes like numpy's files. */
void tio_npy_encode(StrBuf *b, const RtTensor *t) {
  StrBuf h = {0};
  sb_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t->dtype));
  for (int i = 0; i < t->ndim; i++) sb_printf(&h, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  sb_puts(&h, t->ndim == 1 ? ",), }" : "), }");
  int major = h.len + 11 > 65535 ? 2 : 1;
  size_t pre = major == 1 ? 10 : 12;
  while ((pre + h.len + 1) % 64) sb_putc(&h, ' ');
  sb_putc(&h, '\n');
  sb_putn(b, "\x93NUMPY", 6);
  sb_putc(b, (char)major);
  sb_putc(b, 0);
  if (major == 1)
    tio_put16(b, (uint16_t)h.len);
  else
    tio_put32(b, (uint32_t)h.len);
  sb_putn(b, h.data, h.len);
  sb_free(&h);
  if (rt_tensor_nbytes(t)) sb_putn(b, t->data, rt_tensor_nbytes(t));
}
