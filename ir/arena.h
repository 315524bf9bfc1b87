/* arena.h — bump allocation by lifetime (session, one input, scratch).
 *
 * Everything in the IR is allocated from an Arena and freed all at once.
 * Allocations are 8-byte aligned (ARENA_ALIGN: what a pointer, an int64 or
 * a double needs; IR nodes are then packed without rounding to 16, which a
 * million-binding program feels), arena_alloc_aligned takes its own; memory
 * is zeroed.
 * A mark/release pair lets a pass or a REPL input drop its scratch memory. */
#ifndef RLY_ARENA_H
#define RLY_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct ArenaChunk ArenaChunk;

enum { ARENA_ALIGN = 8 };

typedef struct Arena {
  ArenaChunk *head; /* newest chunk */
  size_t total;     /* bytes reserved in all chunks */
} Arena;

typedef struct ArenaMark {
  ArenaChunk *chunk;
  size_t used;
} ArenaMark;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n); /* zeroed, ARENA_ALIGN-aligned */
void *arena_alloc_aligned(Arena *a, size_t n, size_t align);
char *arena_strndup(Arena *a, const char *s, size_t n); /* s may be NULL when n is 0 */
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *arena_memdup(Arena *a, const void *p, size_t n);
ArenaMark arena_mark(Arena *a);
void arena_release(Arena *a, ArenaMark m);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* A growable array of pointers backed by malloc (for builders whose final
 * size is unknown: argument lists, let chains).  vec_finish copies into an
 * arena and frees the heap buffer. */
typedef struct PtrVec {
  void **items;
  size_t len, cap;
} PtrVec;

void vec_push(PtrVec *v, void *p);
void *vec_pop(PtrVec *v);
void vec_free(PtrVec *v);
void **vec_finish(PtrVec *v, Arena *a); /* arena copy; frees v; NULL when empty */

#endif
