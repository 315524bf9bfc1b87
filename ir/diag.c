/* diag.c — the diagnostics store and renderer.
 *
 * A diagnostic is collected (level, span, message, optional hint) and
 * rendered later as
 *
 *   file:line:col: error: message
 *     the source line
 *     ^~~~~
 *   hint: ...
 *
 * Invariants: sources are copied (or a file mapped) on registration and
 * never change, so a span (an offset in the sources' common offset space
 * and a length) stays valid for the session.  Line
 * starts are computed on the first render that needs them, then found by
 * binary search.  At most max_errors errors are kept; the next one is
 * replaced by a single "too many errors" entry and later ones are counted
 * but dropped (so are their hints). */
#include "ir/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { DIAG_DEFAULT_MAX_ERRORS = 20 };

static const char TOO_MANY[] = "too many errors; stopping here";

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) rly_oom();
  return p;
}

static char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static char *vformat(const char *fmt, va_list ap) {
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  return sb_take(&b);
}

/* A registered source's text as the FileText it was taken from. */
static FileText source_text(const SourceFile *f) {
  FileText ft = {f->text, f->len, f->map_len};
  return ft;
}

void diag_init(DiagCtx *d) { memset(d, 0, sizeof *d); }

static size_t max_errors(const DiagCtx *d) {
  return d->max_errors ? d->max_errors : DIAG_DEFAULT_MAX_ERRORS;
}

void diag_truncate(DiagCtx *d, size_t n) {
  if (n >= d->n) return;
  for (size_t i = n; i < d->n; i++) {
    if (d->items[i].msg != TOO_MANY) free(d->items[i].msg);
    free(d->items[i].hint);
  }
  d->n = n;
  size_t errors = 0, warnings = 0;
  for (size_t i = 0; i < n; i++) {
    if (d->items[i].msg == TOO_MANY) return; /* the count past the cap stays */
    errors += d->items[i].level == DIAG_ERROR;
    warnings += d->items[i].level == DIAG_WARNING;
  }
  d->nerrors = errors, d->nwarnings = warnings;
}

void diag_clear(DiagCtx *d) {
  diag_truncate(d, 0);
  d->nerrors = d->nwarnings = 0;
  d->stopped = false;
}

bool diag_stopped_slow(DiagCtx *d) {
  if (!d->stopped) {
    diag_error(d, (Span){0}, "interrupted (Ctrl-C)");
    d->stopped = true;
  }
  return true;
}

void diag_free(DiagCtx *d) {
  diag_clear(d);
  free(d->items);
  for (uint32_t i = 0; i < d->nfiles; i++) {
    SourceFile *f = d->files[i];
    free(f->name);
    FileText ft = source_text(f);
    file_text_free(&ft);
    free(f->line_starts);
    free(f);
  }
  free(d->files);
  memset(d, 0, sizeof *d);
}

uint32_t diag_add_source(DiagCtx *d, const char *name, const char *text, size_t len) {
  return diag_take_source(d, name, xstrndup(text ? text : "", text ? len : 0), text ? len : 0);
}

uint32_t diag_take_source(DiagCtx *d, const char *name, char *text, size_t len) {
  SourceFile *f = xmalloc(sizeof *f);
  memset(f, 0, sizeof *f);
  f->name = xstrndup(name ? name : "<input>", strlen(name ? name : "<input>"));
  f->text = text;
  f->len = len;
  /* Each source takes len + 1 offsets (its end is a position too); past
   * 4 GiB of sources in one context the rest get no locations. */
  if (!d->next_base) d->next_base = 1;
  if (d->next_base != UINT32_MAX && len < (uint64_t)UINT32_MAX - d->next_base) {
    f->base = d->next_base;
    d->next_base += (uint32_t)len + 1;
  } else {
    d->next_base = UINT32_MAX;
  }
  SourceFile **files = realloc(d->files, sizeof(SourceFile *) * (d->nfiles + 1));
  if (!files) rly_oom();
  d->files = files;
  d->files[d->nfiles++] = f;
  return d->nfiles;
}

uint32_t diag_take_file(DiagCtx *d, const char *name, FileText *ft) {
  uint32_t id = diag_take_source(d, name, ft->text, ft->len);
  d->files[id - 1]->map_len = ft->map_len;
  memset(ft, 0, sizeof *ft);
  return id;
}

uint32_t diag_add_file(DiagCtx *d, const char *path) {
  FileText ft;
  if (!file_text_read(path, &ft)) return 0;
  bool stdin_ = strcmp(path, "-") == 0;
  uint32_t id = diag_take_file(d, stdin_ ? "<stdin>" : path, &ft);
  d->files[id - 1]->is_file = !stdin_;
  return id;
}

void diag_source_release(DiagCtx *d, uint32_t file, size_t upto) {
  const SourceFile *f = diag_source(d, file);
  if (!f || !f->map_len) return;
  FileText ft = source_text(f);
  file_text_release(&ft, upto);
}

const SourceFile *diag_source(const DiagCtx *d, uint32_t file) {
  return file >= 1 && file <= d->nfiles ? d->files[file - 1] : NULL;
}

Span diag_span(const DiagCtx *d, uint32_t file, uint32_t off, uint32_t len) {
  const SourceFile *f = diag_source(d, file);
  if (!f || !f->base || off > f->len) return (Span){0};
  return span_make(f->base + off, len);
}

const SourceFile *diag_span_source(const DiagCtx *d, Span sp, uint32_t *local) {
  return diag_source(d, diag_span_file(d, sp, local));
}

uint32_t diag_span_file(const DiagCtx *d, Span sp, uint32_t *local) {
  *local = 0;
  if (!sp.off) return 0;
  uint32_t lo = 0, hi = d->nfiles; /* the last file with base <= sp.off */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->files[mid]->base && d->files[mid]->base <= sp.off)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!lo) return 0;
  const SourceFile *f = d->files[lo - 1];
  if (sp.off - f->base > f->len) return 0;
  *local = sp.off - f->base;
  return lo;
}

bool diag_too_many(const DiagCtx *d) { return d->nerrors > max_errors(d); }

static void push(DiagCtx *d, DiagLevel level, Span sp, char *msg) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    Diag *items = realloc(d->items, sizeof(Diag) * cap);
    if (!items) rly_oom();
    d->items = items, d->cap = cap;
  }
  Diag *g = &d->items[d->n++];
  g->level = level, g->span = sp, g->msg = msg, g->hint = NULL;
}

/* Adds a diagnostic unless the error cap has been passed; the first error
 * past the cap becomes the "too many errors" entry. */
static void add(DiagCtx *d, DiagLevel level, Span sp, const char *fmt, va_list ap) {
  if ((level == DIAG_WARNING && d->mute_warnings) || (level == DIAG_NOTE && d->muted_last)) {
    d->muted_last = true;
    return;
  }
  d->muted_last = false;
  if (d->stopped) return; /* after an interrupt: only the cut's consequences */
  if (level == DIAG_ERROR) {
    d->nerrors++;
    if (d->nerrors == max_errors(d) + 1) {
      Span none = {0};
      push(d, DIAG_ERROR, none, (char *)TOO_MANY);
    }
    if (d->nerrors > max_errors(d)) return;
  } else if (diag_too_many(d)) {
    return;
  }
  if (level == DIAG_WARNING) d->nwarnings++;
  push(d, level, sp, vformat(fmt, ap));
}

void diag_error(DiagCtx *d, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_ERROR, sp, fmt, ap);
  va_end(ap);
}

void diag_warning(DiagCtx *d, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_WARNING, sp, fmt, ap);
  va_end(ap);
}

void diag_note(DiagCtx *d, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_NOTE, sp, fmt, ap);
  va_end(ap);
}

void diag_hint(DiagCtx *d, const char *fmt, ...) {
  if (!d->n || diag_too_many(d) || d->muted_last) return;
  Diag *g = &d->items[d->n - 1];
  va_list ap;
  va_start(ap, fmt);
  char *h = vformat(fmt, ap);
  va_end(ap);
  free(g->hint);
  g->hint = h;
}

/* ── line and column ── */

static void compute_lines(SourceFile *f) {
  uint32_t n = 1;
  for (size_t i = 0; i < f->len; i++) n += f->text[i] == '\n';
  f->line_starts = xmalloc(sizeof(uint32_t) * n);
  f->line_starts[0] = 0;
  uint32_t k = 1;
  for (size_t i = 0; i < f->len; i++)
    if (f->text[i] == '\n') f->line_starts[k++] = (uint32_t)(i + 1);
  f->nlines = n;
}

/* Index (0-based) of the line containing off: the last start <= off. */
static uint32_t line_index(SourceFile *f, uint32_t off) {
  if (!f->line_starts) compute_lines(f);
  uint32_t lo = 0, hi = f->nlines; /* invariant: start[lo] <= off, answer < hi */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (f->line_starts[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void diag_line_col(DiagCtx *d, Span sp, uint32_t *line, uint32_t *col) {
  uint32_t off;
  SourceFile *f = (SourceFile *)diag_span_source(d, sp, &off);
  if (!f) {
    *line = *col = 0;
    return;
  }
  if (off > f->len) off = (uint32_t)f->len;
  uint32_t li = line_index(f, off);
  *line = li + 1;
  *col = off - f->line_starts[li] + 1;
}

/* ── rendering ── */

typedef struct Palette {
  const char *bold, *reset, *level, *caret, *hint;
} Palette;

static Palette palette(bool color, DiagLevel level) {
  Palette p = {"", "", "", "", ""};
  if (!color) return p;
  p.bold = "\033[1m", p.reset = "\033[0m", p.caret = "\033[1;32m", p.hint = "\033[1;36m";
  p.level = level == DIAG_ERROR     ? "\033[1;31m"
            : level == DIAG_WARNING ? "\033[1;35m"
                                    : "\033[1;36m";
  return p;
}

static const char *level_name(DiagLevel l) {
  return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

static bool utf8_continuation(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

enum { SNIPPET_MAX = 120, SNIPPET_BEFORE = 40 };

/* The part of a long line shown: a window around the span's start. */
static void snippet_window(const SourceFile *f, uint32_t start, uint32_t end, uint32_t off,
                           uint32_t *from, uint32_t *to) {
  *from = start, *to = end;
  if (end - start <= SNIPPET_MAX) return;
  if (off - start > SNIPPET_BEFORE) *from = off - SNIPPET_BEFORE;
  while (*from > start && utf8_continuation(f->text[*from])) (*from)--;
  if (end - *from > SNIPPET_MAX) *to = *from + SNIPPET_MAX;
  while (*to < end && utf8_continuation(f->text[*to])) (*to)++;
}

/* The source line (a window of it when long), then spaces (tabs kept) up
 * to the span and `^~~~` covering the span's part of that line; one `^` at
 * least. */
static void render_snippet(FILE *out, const SourceFile *f, uint32_t start, Span sp, Palette p) {
  uint32_t end = start;
  while (end < f->len && f->text[end] != '\n') end++;
  if (end > start && f->text[end - 1] == '\r') end--;
  uint32_t off = sp.off > end ? end : sp.off < start ? start : sp.off;
  uint32_t from, to;
  snippet_window(f, start, end, off, &from, &to);
  const char *dots = from > start ? "..." : "";
  fprintf(out, "  %s%.*s%s\n  %s", dots, (int)(to - from), f->text + from, to < end ? "..." : "",
          from > start ? "   " : "");
  for (uint32_t i = from; i < off; i++)
    if (!utf8_continuation(f->text[i])) fputc(f->text[i] == '\t' ? '\t' : ' ', out);
  uint32_t stop = sp.off + sp.len > to ? to : sp.off + sp.len;
  fputs(p.caret, out);
  fputc('^', out);
  bool first = true;
  for (uint32_t i = off; i < stop; i++) {
    if (utf8_continuation(f->text[i])) continue;
    if (!first) fputc('~', out);
    first = false;
  }
  fprintf(out, "%s\n", p.reset);
}

static void render_one(DiagCtx *d, FILE *out, const Diag *g, bool color) {
  Palette p = palette(color, g->level);
  uint32_t off;
  SourceFile *f = (SourceFile *)diag_span_source(d, g->span, &off);
  if (f) {
    uint32_t line, col;
    diag_line_col(d, g->span, &line, &col);
    fprintf(out, "%s%s:%u:%u: ", p.bold, f->name, line, col);
  } else {
    fputs(p.bold, out);
  }
  fprintf(out, "%s%s:%s%s %s%s\n", p.level, level_name(g->level), p.reset, p.bold, g->msg, p.reset);
  if (f) {
    Span local = span_make(off, g->span.len);
    render_snippet(out, f, f->line_starts[line_index(f, off)], local, p);
  }
  if (g->hint) fprintf(out, "%shint:%s %s\n", p.hint, p.reset, g->hint);
}

void diag_render(DiagCtx *d, FILE *f, size_t from, bool color) {
  for (size_t i = from; i < d->n; i++) render_one(d, f, &d->items[i], color);
  fflush(f);
}
