/* util.h — small shared helpers: internal-bug reporting, a growable string
 * buffer, a string→pointer hash map.  User errors never go through here;
 * they are diagnostics (ir/diag.h). */
#ifndef RLY_UTIL_H
#define RLY_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Internal invariant failures: print where and abort.  Never for user input. */
_Noreturn void rly_bug(const char *file, int line, const char *msg);
_Noreturn void rly_oom(void);
#define RLY_UNREACHABLE() rly_bug(__FILE__, __LINE__, "unreachable")
#define RLY_ASSERT(c) ((c) ? (void)0 : rly_bug(__FILE__, __LINE__, "assertion failed: " #c))

/* Growable, NUL-terminated string buffer (malloc). */
typedef struct StrBuf {
  char *data;
  size_t len, cap;
} StrBuf;

void sb_putc(StrBuf *b, char c);
void sb_puts(StrBuf *b, const char *s);
void sb_putn(StrBuf *b, const char *s, size_t n);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *b, const char *fmt, va_list ap);
void sb_indent(StrBuf *b, int n);
char *sb_take(StrBuf *b); /* caller frees; b is reset */

/* The whole file at path ("-": stdin), NUL-terminated and malloc'd, its
 * length in *len (may be NULL); NULL if it cannot be opened or read. */
char *read_whole_file(const char *path, size_t *len);

/* A source file's text, NUL-terminated (text[len] == 0).  A regular file of
 * FILE_MAP_MIN bytes or more is mapped read-only (map_len > 0) instead of
 * read: its pages are the page cache's, so the parts already parsed can be
 * dropped from memory (file_text_release) and come back from the page
 * cache if a diagnostic reads them.  Smaller files, pipes and stdin are
 * read into malloc'd memory (map_len == 0). */
enum { FILE_MAP_MIN = 1 << 20 };
typedef struct FileText {
  char *text;
  size_t len;
  size_t map_len;
} FileText;

bool file_text_read(const char *path, FileText *out); /* false: cannot open or read */
/* Drops the whole pages of a mapped text before byte upto from memory
 * (no-op for a read text); the text stays readable. */
void file_text_release(const FileText *ft, size_t upto);
void file_text_free(FileText *ft);
void sb_free(StrBuf *b);

/* Buffers that may grow large (a parser's scope over a million bindings):
 * below BIG_MIN bytes from malloc, above it straight from the kernel, so
 * growing moves pages instead of copying them and freeing returns them
 * (malloc's heap keeps the old copies resident as holes).  The caller
 * keeps the size; new bytes are zero. */
enum { BIG_MIN = 256 << 10 };
void *big_realloc(void *p, size_t old_bytes, size_t new_bytes);
void big_free(void *p, size_t bytes);

/* Open-addressing hash map from NUL-terminated strings (not copied) to pointers. */
typedef struct StrMap {
  const char **keys;
  void **vals;
  size_t len, cap;
} StrMap;

void *strmap_get(const StrMap *m, const char *key);
void strmap_put(StrMap *m, const char *key, void *val); /* replaces */
void strmap_free(StrMap *m);

/* Open-addressing hash map from non-zero 64-bit keys (pointers, ids) to
 * 64-bit values; used as a set through u64map_insert. */
typedef struct U64Map {
  uint64_t *keys;
  uint64_t *vals;
  size_t len, cap;
} U64Map;

uint64_t *u64map_find(const U64Map *m, uint64_t key); /* NULL when absent */
uint64_t *u64map_slot(U64Map *m, uint64_t key);       /* inserted as 0 when new */
bool u64map_insert(U64Map *m, uint64_t key);          /* false if already there */
void u64map_free(U64Map *m);
#define PTR_KEY(p) ((uint64_t)(uintptr_t)(p))

/* The same map keyed by pointers: the one pointer map of the code base
 * (rewriters' substitutions, equality's binder pairs, use counts). */
typedef U64Map PtrMap;
void *ptrmap_get(const PtrMap *m, const void *key); /* NULL when absent */
bool ptrmap_has(const PtrMap *m, const void *key);
void ptrmap_put(PtrMap *m, const void *key, void *val);
uint64_t *ptrmap_find(const PtrMap *m, const void *key); /* the value's slot, NULL when absent */
uint64_t *ptrmap_slot(PtrMap *m, const void *key);       /* inserted as 0 when new */
void ptrmap_free(PtrMap *m);

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t hash_mix(uint64_t h, uint64_t v);

#endif
