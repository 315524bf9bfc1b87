/* json.h — the one JSON reader: a strict RFC 8259 value read into a tree in
 * an arena, with byte offsets on every node (for messages that point into
 * the text) and a depth limit (hostile input cannot exhaust the C stack).
 *
 * Used by the `#[metadata]` section of the text format (parser/metadata.c)
 * and the .safetensors header (io/safetensors.c).  Objects keep their keys
 * in order and duplicates unmerged (callers decide whether a duplicate is an
 * error); numbers keep their text, so integers past 2^53 are read exactly
 * (json_uint).  Strings are UTF-8 with \u escapes decoded (surrogate pairs
 * joined); a string value's length is kept, as a \u0000 escape may embed a
 * NUL (object keys may not hold one: they are C strings). */
#ifndef RLY_IO_JSON_H
#define RLY_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"

typedef enum JsonKind { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } JsonKind;

typedef struct JsonVal JsonVal;
struct JsonVal {
  JsonKind kind;
  size_t off;        /* where it starts in the text */
  double num;        /* JSON_NUM */
  const char *text;  /* JSON_NUM: its text; JSON_STR: the decoded string (NUL-terminated) */
  size_t len;        /* the length of text */
  bool b;            /* JSON_BOOL */
  int n;             /* JSON_ARR, JSON_OBJ: the number of items */
  JsonVal **items;   /* JSON_ARR values, JSON_OBJ values */
  const char **keys; /* JSON_OBJ, decoded */
};

typedef struct JsonError {
  const char *msg; /* NULL: no error */
  size_t off;      /* byte offset of the error in the text */
} JsonError;

/* Reads one JSON value starting at text[*pos] (white space before it is
 * skipped), nesting at most max_depth arrays and objects; *pos is left just
 * after it.  NULL with *err set on an error (the first one). */
JsonVal *json_read(Arena *a, const char *text, size_t len, size_t *pos, int max_depth,
                   JsonError *err);
/* json_read of the whole text: only white space may follow the value. */
JsonVal *json_parse(Arena *a, const char *text, size_t len, int max_depth, JsonError *err);

/* The value of key in an object (its first occurrence); NULL when v is not
 * an object or has no such key. */
const JsonVal *json_get(const JsonVal *v, const char *key);
/* A number that is a non-negative integer in range, read exactly from its
 * text; false for fractions, exponents, negatives and overflow. */
bool json_uint(const JsonVal *v, uint64_t *out);

#endif
