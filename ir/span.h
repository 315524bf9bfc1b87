/* span.h — the two facts Relay and TIR share: a source range (Span) and a
 * tensor dimension (Dim).  TIR (ir/tir.h) builds on this, ir/tensor.h and
 * ir/util.h only, so the run time and the JIT compile without Relay's
 * declarations (ir/ir.h). */
#ifndef RLY_SPAN_H
#define RLY_SPAN_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/util.h"

/* A source range: a byte offset in its DiagCtx's offset space (each
 * registered source gets a range of its own, as in clang's SourceManager:
 * ir/diag.h finds the file from the offset) and a length.  off == 0 means
 * "no location" (nodes built by passes may copy a span).  8 bytes: the
 * length is clamped to 24 bits (a longer span keeps its start; diagnostics
 * underline one line), and the last byte, `aux`, is not part of the range:
 * an Expr keeps its kind there and a Var its flags (span_join, span_make
 * and the setters leave it 0). */
#define SPAN_LEN_MAX 0xffffffu

typedef struct Span {
  uint32_t off;
  unsigned len : 24;
  unsigned aux : 8;
} Span;

static inline Span span_make(uint32_t off, uint64_t len) {
  Span s = {off, len > SPAN_LEN_MAX ? SPAN_LEN_MAX : (unsigned)len, 0};
  return s;
}

/* The span from off to end (end < off: empty). */
static inline Span span_range(uint32_t off, uint32_t end) {
  return span_make(off, end > off ? end - off : 0);
}

static inline bool span_ok(Span s) { return s.off != 0; }

static inline Span span_join(Span a, Span b) {
  if (!a.off) return b;
  if (!b.off) return a;
  uint32_t lo = a.off < b.off ? a.off : b.off;
  uint64_t hi = (uint64_t)a.off + a.len > (uint64_t)b.off + b.len ? (uint64_t)a.off + a.len
                                                                  : (uint64_t)b.off + b.len;
  return span_make(lo, hi - lo);
}

/* A tensor dimension: a constant, `?` (known only at run time), a named
 * size variable (`n`, bound per function), or an inference metavariable
 * (only inside the type checker, never printed by a well-typed program). */
typedef enum DimKind { DIM_CONST, DIM_ANY, DIM_VAR, DIM_META } DimKind;

typedef struct Dim {
  DimKind kind;
  int64_t value;    /* DIM_CONST: the size; DIM_META: the metavariable id */
  const char *name; /* DIM_VAR */
} Dim;

/* Dims as the printer writes them: "(2, 3)" "(4)" "()" (ir/print.c). */
void print_dims_to(StrBuf *b, int ndim, const Dim *dims);

#endif
