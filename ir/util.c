/* util.c — bug reporting, string buffers, string and integer hash maps,
 * hashing, reading a whole file or mapping a source file, buffers straight
 * from the kernel.  (Float literal text is in tensor.c.) */
#include "ir/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Noreturn void rly_bug(const char *file, int line, const char *msg) {
  fprintf(stderr, "rly: internal error at %s:%d: %s\n", file, line, msg);
  abort();
}

_Noreturn void rly_oom(void) {
  fputs("rly: out of memory\n", stderr);
  abort();
}

static void sb_reserve(StrBuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  b->data = realloc(b->data, cap);
  if (!b->data) rly_oom();
  b->cap = cap;
}

/* s may be NULL when n is 0 (an empty buffer's data): memcpy must not see it. */
void sb_putn(StrBuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void sb_putc(StrBuf *b, char c) { sb_putn(b, &c, 1); }
void sb_puts(StrBuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

void sb_vprintf(StrBuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  sb_reserve(b, (size_t)n);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(b, fmt, ap);
  va_end(ap);
}

void sb_indent(StrBuf *b, int n) {
  sb_reserve(b, (size_t)n);
  for (int i = 0; i < n; i++) b->data[b->len++] = ' ';
  b->data[b->len] = 0;
}

char *sb_take(StrBuf *b) {
  char *s = b->data;
  if (!s) {
    s = malloc(1);
    if (!s) rly_oom();
    s[0] = 0;
  }
  b->data = NULL, b->len = b->cap = 0;
  return s;
}

/* A regular file is read into a buffer of its size (plus the NUL): growing
 * one by doubling would copy a 36 MB program and hold up to twice its size
 * at the peak.  Pipes and files that grow while read take the slow path. */
static char *read_sized(FILE *f, size_t *len) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return NULL;
  size_t size = (size_t)st.st_size;
  char *buf = malloc(size + 1);
  if (!buf) rly_oom();
  size_t got = fread(buf, 1, size, f);
  if (got != size || fgetc(f) != EOF) {
    free(buf);
    rewind(f);
    return NULL;
  }
  buf[size] = 0;
  *len = size;
  return buf;
}

char *read_whole_file(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  size_t n = 0;
  char *sized = read_sized(f, &n);
  if (sized) {
    if (f != stdin) fclose(f);
    if (len) *len = n;
    return sized;
  }
  StrBuf b = {0};
  char chunk[65536];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_putn(&b, chunk, n);
  bool bad = ferror(f);
  if (f != stdin) fclose(f);
  if (bad) return sb_free(&b), NULL;
  if (len) *len = b.len;
  return b.data ? sb_take(&b) : calloc(1, 1);
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* Maps a regular file of at least FILE_MAP_MIN bytes with a zero byte
 * after it: the file over an anonymous mapping one byte longer, so the NUL
 * is there even when the size is a multiple of the page size.  Read-only:
 * nothing may write a source. */
static bool map_file(const char *path, FileText *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= FILE_MAP_MIN &&
            (uint64_t)st.st_size < SIZE_MAX / 2;
  if (ok) {
    size_t size = (size_t)st.st_size, page = page_size();
    size_t map_len = (size + 1 + page - 1) & ~(page - 1);
    void *base = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ok = base != MAP_FAILED &&
         mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != MAP_FAILED;
    if (ok) {
      out->text = base, out->len = size, out->map_len = map_len;
    } else if (base != MAP_FAILED) {
      munmap(base, map_len);
    }
  }
  close(fd);
  return ok;
}

static void *big_map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) rly_oom();
  return p;
}

void *big_realloc(void *p, size_t old_bytes, size_t new_bytes) {
  if (!p) old_bytes = 0;
  if (new_bytes < BIG_MIN) {
    RLY_ASSERT(old_bytes < BIG_MIN);
    void *q = realloc(p, new_bytes ? new_bytes : 1);
    if (!q) rly_oom();
    if (new_bytes > old_bytes) memset((char *)q + old_bytes, 0, new_bytes - old_bytes);
    return q;
  }
  if (old_bytes >= BIG_MIN) {
    void *q = mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) rly_oom();
    return q;
  }
  void *q = big_map(new_bytes);
  if (old_bytes) memcpy(q, p, old_bytes);
  free(p);
  return q;
}

void big_free(void *p, size_t bytes) {
  if (!p) return;
  if (bytes >= BIG_MIN)
    munmap(p, bytes);
  else
    free(p);
}

bool file_text_read(const char *path, FileText *out) {
  memset(out, 0, sizeof *out);
  if (strcmp(path, "-") != 0 && map_file(path, out)) return true;
  out->text = read_whole_file(path, &out->len);
  return out->text != NULL;
}

void file_text_release(const FileText *ft, size_t upto) {
  if (!ft->map_len || !upto) return;
  size_t end = upto < ft->len ? upto : ft->len;
  end &= ~(page_size() - 1);
  if (end) madvise(ft->text, end, MADV_DONTNEED);
}

void file_text_free(FileText *ft) {
  if (ft->map_len)
    munmap(ft->text, ft->map_len);
  else
    free(ft->text);
  memset(ft, 0, sizeof *ft);
}

void sb_free(StrBuf *b) {
  free(b->data);
  b->data = NULL, b->len = b->cap = 0;
}

uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static size_t slot_of(const StrMap *m, const char *key) {
  size_t i = hash_bytes(key, strlen(key), 0) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

void *strmap_get(const StrMap *m, const char *key) {
  if (!m->cap) return NULL;
  size_t i = slot_of(m, key);
  return m->keys[i] ? m->vals[i] : NULL;
}

static void strmap_grow(StrMap *m) {
  StrMap n = {0};
  n.cap = m->cap ? m->cap * 2 : 16;
  n.keys = calloc(n.cap, sizeof(char *));
  n.vals = calloc(n.cap, sizeof(void *));
  if (!n.keys || !n.vals) rly_oom();
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = slot_of(&n, m->keys[i]);
      n.keys[j] = m->keys[i], n.vals[j] = m->vals[i], n.len++;
    }
  free(m->keys);
  free(m->vals);
  *m = n;
}

void strmap_put(StrMap *m, const char *key, void *val) {
  if ((m->len + 1) * 2 > m->cap) strmap_grow(m);
  size_t i = slot_of(m, key);
  if (!m->keys[i]) m->keys[i] = key, m->len++;
  m->vals[i] = val;
}

void strmap_free(StrMap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t u64_hash(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return (size_t)(x ^ (x >> 33));
}

static size_t u64map_index(const U64Map *m, uint64_t k) {
  size_t i = u64_hash(k) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

uint64_t *u64map_find(const U64Map *m, uint64_t key) {
  if (!m->len) return NULL;
  size_t i = u64map_index(m, key);
  return m->keys[i] ? &m->vals[i] : NULL;
}

static void u64map_grow(U64Map *m) {
  U64Map n = {.cap = m->cap ? m->cap * 2 : 64, .len = m->len};
  n.keys = calloc(n.cap, sizeof *n.keys);
  n.vals = calloc(n.cap, sizeof *n.vals);
  if (!n.keys || !n.vals) rly_oom();
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = u64map_index(&n, m->keys[i]);
      n.keys[j] = m->keys[i], n.vals[j] = m->vals[i];
    }
  free(m->keys);
  free(m->vals);
  *m = n;
}

uint64_t *u64map_slot(U64Map *m, uint64_t key) {
  RLY_ASSERT(key != 0);
  if ((m->len + 1) * 10 > m->cap * 7) u64map_grow(m);
  size_t i = u64map_index(m, key);
  if (!m->keys[i]) m->keys[i] = key, m->vals[i] = 0, m->len++;
  return &m->vals[i];
}

bool u64map_insert(U64Map *m, uint64_t key) {
  size_t before = m->len;
  u64map_slot(m, key);
  return m->len != before;
}

void u64map_free(U64Map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

void *ptrmap_get(const PtrMap *m, const void *key) {
  const uint64_t *v = u64map_find(m, PTR_KEY(key));
  return v ? (void *)(uintptr_t)*v : NULL;
}

bool ptrmap_has(const PtrMap *m, const void *key) { return u64map_find(m, PTR_KEY(key)) != NULL; }

void ptrmap_put(PtrMap *m, const void *key, void *val) {
  *u64map_slot(m, PTR_KEY(key)) = PTR_KEY(val);
}

uint64_t *ptrmap_find(const PtrMap *m, const void *key) { return u64map_find(m, PTR_KEY(key)); }

uint64_t *ptrmap_slot(PtrMap *m, const void *key) { return u64map_slot(m, PTR_KEY(key)); }

void ptrmap_free(PtrMap *m) { u64map_free(m); }
