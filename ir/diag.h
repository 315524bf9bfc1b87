/* diag.h — diagnostics: `file:line:col: error: message`, the source line and
 * a `^~~~` underline under the span, optional `hint:` / `note:` lines.
 *
 * Sources are registered once and get a file id (1-based) and a range of
 * the context's offset space (base .. base + len; 0 is "no location"): a
 * Span's offset names the file and the byte in it.  Line and column are
 * computed only when a diagnostic is rendered.  Diagnostics
 * are collected; nothing here exits.  One DiagCtx per session. */
#ifndef RLY_DIAG_H
#define RLY_DIAG_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "ir/ir.h"

typedef enum DiagLevel { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct SourceFile {
  char *name;
  char *text; /* owned, NUL-terminated: a copy, or a mapped file (map_len > 0) */
  size_t len;
  size_t map_len;
  uint32_t base;         /* the offset of text[0] in spans; 0: too late to address */
  uint32_t *line_starts; /* computed lazily */
  uint32_t nlines;
  bool is_file; /* read by diag_add_file: name is its path (relative paths in it start there) */
} SourceFile;

typedef struct Diag {
  DiagLevel level;
  Span span;
  char *msg;
  char *hint; /* NULL or a `hint:` line */
} Diag;

typedef struct DiagCtx {
  SourceFile **files; /* in order of base */
  uint32_t nfiles;
  uint32_t next_base; /* where the next source's range starts */
  Diag *items;
  size_t n, cap;
  size_t nerrors, nwarnings;
  size_t max_errors; /* stop collecting errors past this (0 = 20) */
  /* Warnings (and their notes and hints) are dropped: a re-check of code
   * whose warnings were shown when it was entered. */
  bool mute_warnings;
  bool muted_last; /* the last diagnostic was a dropped warning */
  /* Where a Ctrl-C is told (the run time's interrupt flag), or NULL: the
   * lexer, the type checker and the pass manager poll it through
   * diag_stopped and stop.  Once it was seen, further errors are dropped
   * (they would only describe the cut). */
  const volatile sig_atomic_t *stop;
  bool stopped;
} DiagCtx;

void diag_init(DiagCtx *d);
void diag_free(DiagCtx *d);
/* Registers a source; the text is copied.  Returns its file id (>= 1). */
uint32_t diag_add_source(DiagCtx *d, const char *name, const char *text, size_t len);
/* The same without a copy: text (malloc'd, text[len] == 0) now belongs to d. */
uint32_t diag_take_source(DiagCtx *d, const char *name, char *text, size_t len);
/* The same for a file's text (ir/util.h), which now belongs to d (*ft is
 * emptied). */
uint32_t diag_take_file(DiagCtx *d, const char *name, FileText *ft);
/* The file at path ("-": stdin, named "<stdin>") read and registered that
 * way; 0 (errno set) when it cannot be read. */
uint32_t diag_add_file(DiagCtx *d, const char *path);
/* The parser is past byte upto of file: a mapped file's pages before it
 * may leave memory (they are read back if a diagnostic needs them). */
void diag_source_release(DiagCtx *d, uint32_t file, size_t upto);
const SourceFile *diag_source(const DiagCtx *d, uint32_t file);
/* The span of bytes [off, off + len) of a registered source file. */
Span diag_span(const DiagCtx *d, uint32_t file, uint32_t off, uint32_t len);
/* The source a span points into and the span's offset in its text; NULL
 * (and *local 0) for no location. */
const SourceFile *diag_span_source(const DiagCtx *d, Span sp, uint32_t *local);
/* The same as a file id (0: no location). */
uint32_t diag_span_file(const DiagCtx *d, Span sp, uint32_t *local);

void diag_error(DiagCtx *d, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(DiagCtx *d, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(DiagCtx *d, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Attaches a hint to the most recent diagnostic. */
void diag_hint(DiagCtx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Line (1-based) and column (1-based, in bytes; tabs count as one) of a
 * span's start; 0 and 0 for no location. */
void diag_line_col(DiagCtx *d, Span sp, uint32_t *line, uint32_t *col);

/* Prints diagnostics [from, n) to f.  color: ANSI colours. */
void diag_render(DiagCtx *d, FILE *f, size_t from, bool color);
/* Forgets collected diagnostics (sources stay). */
void diag_clear(DiagCtx *d);
/* Whether d->stop is set: the first time, an error "interrupted" is
 * added.  Cheap enough for every token and node. */
bool diag_stopped_slow(DiagCtx *d);
static inline bool diag_stopped(DiagCtx *d) { return d->stop && *d->stop && diag_stopped_slow(d); }
/* Drops the diagnostics from the n-th on (their counts too). */
void diag_truncate(DiagCtx *d, size_t n);
bool diag_too_many(const DiagCtx *d);

#endif
