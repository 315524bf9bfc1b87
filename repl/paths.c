/* paths.c — the files commands name (repl.h).
 *
 * A relative path in a command of a script (`:load`, `:load-tensor`,
 * `:bind`, `:import`, `:save`, and `:extern`'s library when it has a `/`)
 * names a file beside the script: it is resolved against the directory of
 * the source the command came from, which its span names (a file
 * registered by diag_add_file).  At the prompt, in `-e` text and on
 * stdin, and for absolute paths, the path is taken as given (the current
 * directory).  Since a loaded script's name is its resolved path, nested
 * `:load`s resolve against their own directories.
 *
 * A file run as a script (`rly FILE`, `:load FILE`) must be rly text: a
 * NUL byte in its first TEXT_PROBE bytes, or more than one in BAD_SHARE of
 * them not UTF-8 text (invalid sequences, control characters), rejects it
 * before it is parsed (the parser would echo its bytes in errors), saying
 * what it is when that can be told from its name or first bytes: an ONNX
 * model (`:import`) or a tensor file (`:load-tensor`).  A stray Latin-1
 * byte in a comment does not make a script binary. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repl/repl.h"

/* ───────────────────────── paths ───────────────────────── */

char *session_path(Session *s, const char *path, Span where) {
  uint32_t local;
  const SourceFile *f = diag_span_source(&s->diag, where, &local);
  const char *slash = f && f->is_file ? strrchr(f->name, '/') : NULL;
  StrBuf b = {0};
  if (path[0] == '/' || !slash)
    sb_printf(&b, "%s", path);
  else
    sb_printf(&b, "%.*s/%s", (int)(slash - f->name), f->name, path);
  return b.data; /* sb_printf allocates, even for "" */
}

/* ───────────────────────── text or not ───────────────────────── */

enum { TEXT_PROBE = 4096, BAD_SHARE = 16 };

/* The length of the UTF-8 sequence at p (n bytes left), 0 if invalid; a
 * sequence cut by the end of the probe counts as valid. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  size_t len = p[0] < 0x80             ? 1
               : (p[0] & 0xe0) == 0xc0 ? 2
               : (p[0] & 0xf0) == 0xe0 ? 3
               : (p[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
  if (len == 2 && p[0] < 0xc2) return 0; /* overlong */
  if (len == 4 && p[0] > 0xf4) return 0; /* past U+10FFFF */
  for (size_t i = 1; i < len && i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return len;
}

static bool looks_like_text(const unsigned char *p, size_t n) {
  if (n > TEXT_PROBE) n = TEXT_PROBE;
  if (memchr(p, 0, n)) return false;
  size_t bad = 0;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(p + i, n - i);
    bool control = p[i] < 0x20 && !strchr("\t\n\v\f\r\x1b", p[i]);
    bad += !len || control;
    i += len ? len : 1;
  }
  return bad * BAD_SHARE <= n && !(bad && n < BAD_SHARE);
}

static bool has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), k = strlen(suffix);
  return n >= k && strcmp(path + n - k, suffix) == 0;
}

/* A protobuf ModelProto as exporters write it: ir_version (field 1, a
 * small varint) first, then another of its fields (2 to 8, 14, 20). */
static bool onnx_bytes(const unsigned char *p, size_t n) {
  if (n < 4 || p[0] != 0x08 || p[1] == 0 || p[1] > 0x7f) return false;
  unsigned field = p[2] >> 3;
  return (field >= 2 && field <= 8) || field == 14 || field == 20;
}

/* .npy's magic, a zip archive (.npz), or safetensors' header length then `{`. */
static bool tensor_bytes(const unsigned char *p, size_t n) {
  if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) return true;
  if (n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0) return true;
  uint64_t head = 0;
  for (int i = 7; n >= 9 && i >= 0; i--) head = head << 8 | p[i];
  return n >= 9 && p[8] == '{' && head > 0 && head <= n - 8;
}

/* What to use instead for a file that is not rly text (into h, empty
 * when it cannot be told); cli: it was named on the command line. */
static void what_instead(StrBuf *h, const char *path, const unsigned char *p, size_t n, bool cli) {
  if (has_suffix(path, ".onnx") || onnx_bytes(p, n))
    sb_printf(h, "this is an ONNX model: use `%s %s`", cli ? "rly --import" : ":import", path);
  else if (has_suffix(path, ".npy") || has_suffix(path, ".npz") ||
           has_suffix(path, ".safetensors") || tensor_bytes(p, n))
    sb_printf(h, "this is a tensor file: use `:load-tensor %%x %s [KEY]`", path);
}

bool session_text_file(Session *s, uint32_t file, const char *shown, Span where) {
  const SourceFile *f = diag_source(&s->diag, file);
  const unsigned char *p = (const unsigned char *)f->text;
  if (looks_like_text(p, f->len)) return true;
  StrBuf h = {0};
  what_instead(&h, shown, p, f->len, !where.off);
  bool nul = memchr(p, 0, f->len < TEXT_PROBE ? f->len : TEXT_PROBE) != NULL;
  session_error(s, where, h.data, "%s is not rly text (%s)", shown,
                nul ? "it has NUL bytes" : "it is not UTF-8");
  sb_free(&h);
  return false;
}
