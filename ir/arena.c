/* arena.c — chunked bump allocator and a malloc-backed pointer vector.
 * Chunks grow geometrically so a million-node program costs few mallocs. */
#include "ir/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ir/util.h"

struct ArenaChunk {
  ArenaChunk *prev;
  size_t size, used;
  unsigned char data[];
};

enum { ARENA_MIN_CHUNK = 64 * 1024 };
#define HUGE_PAGE ((size_t)2 << 20)

/* Big chunks are 2 MiB aligned and asked to be backed by huge pages: a
 * million-binding program touches hundreds of MiB, and 4 KiB page faults
 * would cost more than parsing it. */
static void *chunk_alloc(size_t *bytes) {
  if (*bytes < 4 * HUGE_PAGE) return malloc(*bytes);
  *bytes = (*bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  void *p = aligned_alloc(HUGE_PAGE, *bytes);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, *bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void arena_init(Arena *a) { a->head = NULL, a->total = 0; }

void arena_free(Arena *a) {
  ArenaChunk *c = a->head;
  while (c) {
    ArenaChunk *p = c->prev;
    free(c);
    c = p;
  }
  a->head = NULL, a->total = 0;
}

static ArenaChunk *new_chunk(Arena *a, size_t need) {
  size_t size = a->total < ARENA_MIN_CHUNK ? ARENA_MIN_CHUNK : a->total;
  if (size < need + 64) size = need + 64;
  size_t bytes = sizeof(ArenaChunk) + size;
  ArenaChunk *c = chunk_alloc(&bytes);
  if (!c) rly_oom();
  /* A huge-page chunk holds its header too: rounding the header up to a
   * page of its own would leave 2 MiB of it unused but resident. */
  size = bytes - sizeof(ArenaChunk);
  c->prev = a->head, c->size = size, c->used = 0;
  a->head = c;
  a->total += size;
  return c;
}

/* Aligns the address itself: malloc gives chunks only 16-byte alignment. */
static size_t aligned_offset(const ArenaChunk *c, size_t align) {
  uintptr_t p = (uintptr_t)(c->data + c->used);
  return c->used + (size_t)(((p + align - 1) & ~(uintptr_t)(align - 1)) - p);
}

void *arena_alloc_aligned(Arena *a, size_t n, size_t align) {
  ArenaChunk *c = a->head;
  size_t off = c ? aligned_offset(c, align) : 0;
  if (!c || off + n > c->size) {
    c = new_chunk(a, n + align);
    off = aligned_offset(c, align);
  }
  c->used = off + n;
  void *p = c->data + off;
  memset(p, 0, n);
  return p;
}

void *arena_alloc(Arena *a, size_t n) { return arena_alloc_aligned(a, n ? n : 1, ARENA_ALIGN); }

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc_aligned(a, n + 1, 1);
  if (n) memcpy(p, s, n); /* s may be NULL when n is 0 (an empty protobuf bytes field) */
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_memdup(Arena *a, const void *p, size_t n) {
  void *q = arena_alloc(a, n);
  if (n) memcpy(q, p, n);
  return q;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc_aligned(a, (size_t)n + 1, 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

ArenaMark arena_mark(Arena *a) {
  ArenaMark m = {a->head, a->head ? a->head->used : 0};
  return m;
}

/* Chunks newer than the mark are freed, except that releasing to an empty
 * mark keeps the oldest chunk for reuse (a scratch arena used per call must
 * not malloc and free a chunk every time). */
void arena_release(Arena *a, ArenaMark m) {
  while (a->head && a->head != m.chunk) {
    ArenaChunk *p = a->head->prev;
    if (!p && !m.chunk) {
      a->head->used = 0;
      return;
    }
    a->total -= a->head->size;
    free(a->head);
    a->head = p;
  }
  if (a->head) a->head->used = m.used;
}

void vec_push(PtrVec *v, void *p) {
  if (v->len == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 8;
    v->items = realloc(v->items, v->cap * sizeof(void *));
    if (!v->items) rly_oom();
  }
  v->items[v->len++] = p;
}

void *vec_pop(PtrVec *v) { return v->len ? v->items[--v->len] : NULL; }

void vec_free(PtrVec *v) {
  free(v->items);
  v->items = NULL, v->len = v->cap = 0;
}

void **vec_finish(PtrVec *v, Arena *a) {
  void **out = v->len ? arena_memdup(a, v->items, v->len * sizeof(void *)) : NULL;
  vec_free(v);
  return out;
}
