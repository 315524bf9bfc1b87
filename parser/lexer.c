/* lexer.c — tokens of the rly text format.
 *
 * Differences from TVM's lexer (relay-grammar.md §2), all deliberate:
 * - a `-` directly before a digit is part of a number only when the
 *   previous token cannot end an operand, so `%x-1` is a subtraction while
 *   `axis=-1` and `f(-1)` are negative literals;
 * - numbers are digits, an optional `.digits` fraction and an optional
 *   exponent, so `1+1` is three tokens; right after a `.` only digits are
 *   read, so `%t.0.1` is two projections;
 * - `1.5` / `1e3` without a suffix are errors ("write 1.5f"), `u8`..`u64`
 *   and `i8` suffixes exist, `bf16` is bfloat16's (`1.5bf16`), `nanf`
 *   (any float width: `nanf16`, `-inff64`, `nanbf16`) is a literal;
 * - strings understand `\" \\ \n \t \r`;
 * - identifiers joined by dots (`nn.dense`, `relay.reshape_only`) are one
 *   token, and so are locals with frontend names (`%fc1.weight`,
 *   `%input:0`); `/` continues a name only when a name character follows.
 * Invariant: every token's (off, len) is its exact source text. */
#include "parser/lexer.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_texts[] = {
#define X(e, s) s,
    TOKEN_KINDS(X)
#undef X
};

const char *lex_kind_text(TokKind k) { return kind_texts[k]; }

/* X(text, kind) */
/* clang-format off */
#define KEYWORDS(X)                                                       \
  X("let", T_KW_LET) X("fn", T_KW_FN) X("def", T_KW_DEF) X("if", T_KW_IF) \
  X("else", T_KW_ELSE) X("type", T_KW_TYPE) X("match", T_KW_MATCH)        \
  X("extern", T_KW_EXTERN) X("free_var", T_KW_FREE_VAR)                  \
  X("ref", T_KW_REF) X("ref_read", T_KW_REF_READ)                        \
  X("ref_write", T_KW_REF_WRITE) X("prim", T_KW_PRIM)                    \
  X("global", T_KW_GLOBAL) X("schedule", T_KW_SCHEDULE)            \
  X("dataflow", T_KW_DATAFLOW)
/* clang-format on */

typedef struct Keyword {
  const char *text;
  uint32_t len;
  TokKind kind;
} Keyword;

static const Keyword keywords[] = {
#define X(s, k) {s, sizeof s - 1, k},
    KEYWORDS(X)
#undef X
};

/* ── errors ── */

void lex_error(Lexer *lx, Span sp, bool at_eof, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  diag_error(lx->d, sp, "%s", b.data ? b.data : "");
  sb_free(&b);
  if (!lx->any_error) lx->incomplete = at_eof;
  lx->any_error = true;
}

/* A lexical error that ran into the end of input (unterminated string or
 * comment): what the parser then finds missing at the end is a cascade. */
static void lex_eof_error(Lexer *lx, Span sp, const char *msg) {
  lex_error(lx, sp, true, "%s", msg);
  lx->eof_error = true;
}

Span lex_span_at(const Lexer *lx, uint32_t off, uint32_t len) {
  return lx->base ? span_make(lx->base + off, len) : (Span){0};
}

Span lex_span(const Lexer *lx, const Token *t) { return lex_span_at(lx, t->off, t->len); }

Span lex_eof_span(const Lexer *lx) { return lex_span_at(lx, lx->len, 0); }

static Span span_at(const Lexer *lx, uint32_t off, uint32_t len) {
  return lex_span_at(lx, off, len);
}

/* ── character classes ── */

static bool is_ident_start(int c) { return isalpha(c) || c == '_'; }
static bool is_ident_char(int c) { return isalnum(c) || c == '_'; }

static int at(const Lexer *lx, uint32_t i) { return i < lx->len ? (unsigned char)lx->src[i] : -1; }

static bool starts_with(const Lexer *lx, uint32_t i, const char *s) {
  size_t n = strlen(s);
  return i + n <= lx->len && memcmp(lx->src + i, s, n) == 0;
}

/* name := [A-Za-z_] ( [A-Za-z0-9_] | '/' [A-Za-z0-9_] | '.' [A-Za-z_] )*   ('.' only when dotted)
 * Length of the name at i: [A-Za-z_][A-Za-z0-9_]* with `/` allowed
 * between name characters; dotted continues over `.name`. */
static uint32_t name_len(const Lexer *lx, uint32_t i, bool dotted) {
  uint32_t j = i;
  if (!is_ident_start(at(lx, j))) return 0;
  for (;;) {
    while (is_ident_char(at(lx, j))) j++;
    if (at(lx, j) == '/' && is_ident_char(at(lx, j + 1)))
      j++;
    else if (dotted && at(lx, j) == '.' && is_ident_start(at(lx, j + 1)))
      j++;
    else
      break;
  }
  return j - i;
}

/* ── whitespace and comments ── */

/* block_comment := '/' '*' ( block_comment | CHAR )* '*' '/'   (nested, as in TVM) */
static void skip_block_comment(Lexer *lx) {
  uint32_t start = lx->pos;
  int depth = 0;
  while (lx->pos < lx->len) {
    if (starts_with(lx, lx->pos, "/*"))
      depth++, lx->pos += 2;
    else if (starts_with(lx, lx->pos, "*/")) {
      lx->pos += 2;
      if (--depth == 0) return;
    } else {
      lx->saw_nl |= lx->src[lx->pos] == '\n';
      lx->pos++;
    }
  }
  lex_eof_error(lx, span_at(lx, start, 2), "unterminated comment");
  lx->pos = lx->len;
}

/* space := ( WS | '//' CHAR* | block_comment )*   (records whether a newline was crossed) */
static void skip_space(Lexer *lx) {
  while (lx->pos < lx->len) {
    int c = at(lx, lx->pos);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
      lx->pos++;
    else if (c == '\n')
      lx->saw_nl = true, lx->pos++;
    else if (starts_with(lx, lx->pos, "//"))
      while (lx->pos < lx->len && lx->src[lx->pos] != '\n') lx->pos++;
    else if (starts_with(lx, lx->pos, "/*"))
      skip_block_comment(lx);
    else
      break;
  }
}

/* ── numbers ── */

static Token make(const Lexer *lx, TokKind k, uint32_t off, uint32_t len) {
  Token t;
  memset(&t, 0, sizeof t);
  t.kind = k, t.off = off, t.len = len;
  t.col1 = off == 0 || lx->src[off - 1] == '\n';
  t.dtype = DT_INVALID;
  return t;
}

/* A number's pieces: [-] digits [.digits] [e[+-]digits] [suffix]. */
typedef struct NumParts {
  uint32_t start, body_end, end; /* end: after the suffix */
  uint32_t digits;               /* the body after the run of `-` */
  bool neg, is_float_body;
  char suffix;     /* 0, 'f', 'i', 'u', 'b' (bf16) */
  int width;       /* digits after the suffix letter; 0 = none */
  bool bad_suffix; /* name characters follow */
} NumParts;

static uint32_t scan_digits(const Lexer *lx, uint32_t i) {
  while (isdigit(at(lx, i))) i++;
  return i;
}

/* number := '-'* DIGIT+ ( '.' DIGIT+ )? ( [eE] [+-]? DIGIT+ )? ( [fiu] DIGIT* )?
 * An odd run of `-` makes the literal negative (`--10` is 10, `---10` is
 * -10, as TVM reads them).  Only splits the text; the caller checks and converts.  digits_only is
 * set right after a `.`, so `%t.0.1` is two projections, not a float.
 * Name characters glued to the end mark a bad suffix (`1x`, `2f7q`). */
static NumParts scan_number(const Lexer *lx, uint32_t i, bool digits_only) {
  NumParts n = {.start = i};
  while (at(lx, i) == '-') n.neg = !n.neg, i++;
  n.digits = i;
  i = scan_digits(lx, i);
  if (!digits_only) {
    if (at(lx, i) == '.' && isdigit(at(lx, i + 1)))
      n.is_float_body = true, i = scan_digits(lx, i + 1);
    int e = at(lx, i), s = at(lx, i + 1);
    if ((e == 'e' || e == 'E') &&
        (isdigit(s) || ((s == '+' || s == '-') && isdigit(at(lx, i + 2)))))
      n.is_float_body = true, i = scan_digits(lx, i + 2);
  }
  n.body_end = i;
  int c = at(lx, i);
  if (!digits_only && c == 'b' && starts_with(lx, i, "bf16")) {
    n.suffix = 'b', n.width = 16, i += 4;
  } else if (!digits_only && (c == 'f' || c == 'i' || c == 'u')) {
    n.suffix = (char)c;
    uint32_t w = scan_digits(lx, i + 1);
    if (w - (i + 1) > 4)
      n.bad_suffix = true;
    else if (w > i + 1)
      n.width = atoi(lx->src + i + 1);
    i = w;
  }
  if (is_ident_char(at(lx, i))) n.bad_suffix = true;
  while (is_ident_char(at(lx, i))) i++;
  n.end = i;
  return n;
}

/* The largest finite value of a float dtype, as a literal's digits. */
static const char *float_max_text(DType dt) {
  return dt == DT_FLOAT16    ? "65504"
         : dt == DT_BFLOAT16 ? "3.39e+38"
         : dt == DT_FLOAT32  ? "3.4028235e+38"
                             : "1.7976931348623157e+308";
}

/* Whether the literal's magnitude passes the dtype's largest finite value
 * as printed (float_max_text; long double tells 1.7976931348623158e+308
 * from float64's 1.7976931348623157e+308). */
static bool above_max(const char *text, DType dt) {
  long double v = strtold(text, NULL);
  return fabsl(v) > strtold(float_max_text(dt), NULL);
}

/* float_literal := number with suffix 'f' ( '16' | '32' | '64' )? | number 'bf16'
 * Float literal: width from the suffix, the body rounded once to that
 * width; in range when its magnitude is at most the dtype's largest finite
 * value as printed: 65504 for float16 (TVM rejects 65505f16, which would
 * round to it), 3.4028235e+38 for float32 (numpy's text for its largest
 * value, above FLT_MAX, so the printed form reads back). */
static void lex_float(Lexer *lx, Token *t, const NumParts *n) {
  char buf[128];
  uint32_t blen = n->body_end - n->digits + n->neg;
  Span sp = lex_span(lx, t);
  int w = n->width ? n->width : 32;
  t->kind = T_FLOAT;
  t->dtype = n->suffix == 'b' ? DT_BFLOAT16
             : w == 16        ? DT_FLOAT16
             : w == 64        ? DT_FLOAT64
                              : DT_FLOAT32;
  if (w != 16 && w != 32 && w != 64) {
    lex_error(lx, sp, false, "invalid float width `f%d` (use f16, f32 or f64)", w);
    t->bad = true;
    return;
  }
  if (blen >= sizeof buf) {
    lex_error(lx, sp, false, "numeric literal is too long");
    t->bad = true;
    return;
  }
  buf[0] = '-';
  memcpy(buf + n->neg, lx->src + n->digits, blen - n->neg);
  buf[blen] = 0;
  if (!float_from_text(buf, t->dtype, &t->v.f) || above_max(buf, t->dtype)) {
    lex_error(lx, sp, false,
              "float literal `%.*s` is out of range for %s (largest finite value %s)", (int)t->len,
              lx->src + t->off, dtype_name(t->dtype), float_max_text(t->dtype));
    t->bad = true;
    t->v.f = 0;
  }
}

/* The dtype of an integer suffix: `i` with no width is int32 (as in TVM),
 * `u` needs a width; DT_INVALID for any other width. */
static DType int_dtype(char suffix, int width) {
  if (suffix == 'i') {
    switch (width) {
      case 0:
      case 32:
        return DT_INT32;
      case 8:
        return DT_INT8;
      case 16:
        return DT_INT16;
      case 64:
        return DT_INT64;
      default:
        return DT_INVALID;
    }
  }
  switch (width) {
    case 8:
      return DT_UINT8;
    case 16:
      return DT_UINT16;
    case 32:
      return DT_UINT32;
    case 64:
      return DT_UINT64;
    default:
      return DT_INVALID;
  }
}

/* Is magnitude (with sign neg) representable in dt? */
static bool int_fits(DType dt, uint64_t mag, bool neg) {
  int bits = dtype_bytes(dt) * 8;
  if (dtype_class(dt) == 'u') return !neg || mag == 0 ? bits == 64 || mag < (1ull << bits) : false;
  uint64_t max_pos = bits == 64 ? (uint64_t)INT64_MAX : (1ull << (bits - 1)) - 1;
  return neg ? mag <= max_pos + 1 : mag <= max_pos;
}

static int64_t apply_sign(uint64_t mag, bool neg) {
  if (!neg) return (int64_t)mag;
  return mag == (1ull << 63) ? INT64_MIN : -(int64_t)mag;
}

static void int_range_error(Lexer *lx, Token *t, DType dt) {
  lex_error(lx, lex_span(lx, t), false, "integer literal `%.*s` is out of range for %s",
            (int)t->len, lx->src + t->off, dtype_name(dt));
  t->bad = true;
}

/* int_literal := '-'? DIGIT+ ( [iu] DIGIT* )?
 * The magnitude is accumulated unsigned so INT64_MIN and UINT64_MAX fit;
 * without a suffix a value beyond int32 becomes int64 silently, like TVM. */
static void lex_int(Lexer *lx, Token *t, const NumParts *n) {
  t->kind = T_INT;
  uint64_t mag = 0;
  bool overflow = false;
  for (uint32_t i = n->digits; i < n->body_end; i++) {
    unsigned d = (unsigned)(lx->src[i] - '0');
    if (mag > (UINT64_MAX - d) / 10)
      overflow = true;
    else
      mag = mag * 10 + d;
  }
  if (!n->suffix) {
    t->dtype = int_fits(DT_INT32, mag, n->neg) ? DT_INT32 : DT_INT64;
  } else {
    t->dtype = int_dtype(n->suffix, n->width);
    if (t->dtype == DT_INVALID) {
      lex_error(lx, lex_span(lx, t), false, "invalid integer suffix `%c%.0d`", n->suffix, n->width);
      diag_hint(lx->d, "use i8, i16, i32, i64, u8, u16, u32 or u64");
      t->dtype = DT_INT32, t->bad = true;
      return;
    }
  }
  if (overflow || !int_fits(t->dtype, mag, n->neg)) {
    int_range_error(lx, t, t->dtype);
    return;
  }
  t->v.i = apply_sign(mag, n->neg);
}

/* NUMBER := number   (an f suffix makes a float, otherwise the body must be an integer)
 * A fraction or exponent without a suffix is an error with a hint, since
 * TVM reads `1.5` as an error too and the fix is always to add `f`. */
static Token lex_number(Lexer *lx, bool digits_only) {
  NumParts n = scan_number(lx, lx->pos, digits_only);
  Token t = make(lx, T_INT, n.start, n.end - n.start);
  lx->pos = n.end;
  if (n.bad_suffix) {
    lex_error(lx, lex_span(lx, &t), false, "invalid numeric literal `%.*s`", (int)t.len,
              lx->src + t.off);
    diag_hint(lx->d,
              "suffixes are f, f16, f32, f64, bf16, i, i8, i16, i32, i64, u8, u16, u32, u64");
    t.bad = true, t.dtype = DT_INT32;
    return t;
  }
  if (n.suffix == 'f' || n.suffix == 'b') {
    lex_float(lx, &t, &n);
  } else if (n.is_float_body && lx->bare_floats) { /* a schedule's 0.5: float64 */
    NumParts wide = n;
    wide.width = 64;
    lex_float(lx, &t, &wide);
  } else if (n.is_float_body) {
    t.kind = T_FLOAT, t.dtype = DT_FLOAT32, t.bad = true;
    lex_error(lx, lex_span(lx, &t), false, "a float literal needs a suffix");
    diag_hint(lx->d, "write %.*sf", (int)t.len, lx->src + t.off);
  } else {
    lex_int(lx, &t, &n);
  }
  return t;
}

/* ── strings ── */

/* STRING := '"' ( CHAR | '\' ( '"' | '\' | 'n' | 't' | 'r' ) )* '"'   (may span lines)
 * An unknown escape is reported but scanning goes on, so one bad escape
 * does not swallow the rest of the file. */
static Token lex_string(Lexer *lx) {
  uint32_t start = lx->pos++;
  while (lx->pos < lx->len && lx->src[lx->pos] != '"') {
    if (lx->src[lx->pos] == '\\') {
      int e = at(lx, lx->pos + 1);
      if (e != '"' && e != '\\' && e != 'n' && e != 't' && e != 'r') {
        if (e < 0) break;
        lex_error(lx, span_at(lx, lx->pos, 2), false, "unknown escape sequence `\\%c` in string",
                  isprint(e) ? e : '?');
        diag_hint(lx->d, "the escapes are \\\" \\\\ \\n \\t \\r");
      }
      lx->pos++;
    }
    lx->pos++;
  }
  if (lx->pos >= lx->len) {
    lx->pos = lx->len;
    Token t = make(lx, T_STRING, start, lx->pos - start);
    lex_eof_error(lx, span_at(lx, start, 1), "unterminated string");
    t.bad = true;
    return t;
  }
  lx->pos++;
  return make(lx, T_STRING, start, lx->pos - start);
}

char *lex_string_value(Arena *a, const char *src, const Token *t) {
  const char *s = src + t->off + 1;
  size_t n = t->len >= 2 ? t->len - 2 : 0;
  char *out = arena_alloc(a, n + 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\\' && i + 1 < n) {
      char e = s[++i];
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    }
    out[k++] = c;
  }
  out[k] = 0;
  return out;
}

/* ── names, keywords, special words ── */

/* META := 'meta[' [A-Za-z0-9_.]+ ']' '[' DIGIT+ ']'
 * One token, as in TVM; the index is saturated rather than overflowed
 * (an absurd index is then simply not found). */
static Token lex_meta(Lexer *lx, uint32_t start) {
  uint32_t i = start + 5; /* after "meta[" */
  uint32_t key = i;
  while (is_ident_char(at(lx, i)) || at(lx, i) == '.') i++;
  uint32_t key_end = i;
  bool ok = key_end > key && at(lx, i) == ']' && at(lx, i + 1) == '[' && isdigit(at(lx, i + 2));
  uint64_t idx = 0;
  if (ok) {
    for (i += 2; isdigit(at(lx, i)); i++)
      idx = idx < 100000000 ? idx * 10 + (uint64_t)(at(lx, i) - '0') : idx;
    ok = at(lx, i) == ']';
  }
  Token t = make(lx, T_META, start, (ok ? i + 1 : i) - start);
  lx->pos = start + t.len;
  t.v.i = (int64_t)idx;
  if (!ok) {
    lex_error(lx, lex_span(lx, &t), i >= lx->len, "malformed meta reference");
    diag_hint(lx->d, "write meta[relay.Constant][0]");
    t.bad = true;
  }
  return t;
}

/* nonfinite := '-'? ( 'inf' | 'nan' ) ( 'f' DIGIT* | 'bf16' )
 * Infinities and NaN as TVM prints them: `inf`/`nan` and the float
 * suffix (`inff`, `-inff16`, `nanf64`; glibc writes a NaN whose sign bit
 * is set as `-nan`).  The length of the literal at i (after any `-`), or
 * 0 when the name there is something else (`inffoo`, `nanf.x`). */
static uint32_t nonfinite_len(const Lexer *lx, uint32_t i) {
  uint32_t n = name_len(lx, i, true);
  if ((starts_with(lx, i, "infbf16") || starts_with(lx, i, "nanbf16")) && n == 7) return n;
  if (!starts_with(lx, i, "inff") && !starts_with(lx, i, "nanf")) return 0;
  return scan_digits(lx, i + 4) == i + n ? n : 0;
}

/* The token of a nonfinite literal of len bytes at start (its `-`
 * included); a width other than 16, 32 or 64 is an error. */
static Token lex_nonfinite(Lexer *lx, uint32_t start, uint32_t len) {
  Token t = make(lx, T_FLOAT, start, len);
  lx->pos = start + len;
  bool neg = lx->src[start] == '-';
  uint32_t digits = start + neg + 4, nd = start + len - digits;
  int w = nd == 0 ? 32 : nd == 2 ? atoi(lx->src + digits) : 0;
  t.dtype = w == 16 ? DT_FLOAT16 : w == 64 ? DT_FLOAT64 : DT_FLOAT32;
  if (lx->src[start + neg + 3] == 'b') t.dtype = DT_BFLOAT16, w = 16;
  double v = lx->src[start + neg] == 'i' ? (double)INFINITY : (double)NAN;
  t.v.f = neg ? -v : v;
  if (w != 16 && w != 32 && w != 64) {
    lex_error(lx, lex_span(lx, &t), false, "invalid float width `f%.*s` (use f16, f32 or f64)",
              (int)nd, lx->src + digits);
    t.bad = true;
  }
  return t;
}

/* word := META | 'match?' | nonfinite | keyword | IDENT   (IDENT := dotted name)
 * Keywords are matched after the whole dotted name is read, so `let.x`
 * or `lets` are identifiers, not a keyword and more. */
static Token lex_word(Lexer *lx) {
  uint32_t start = lx->pos;
  uint32_t n = name_len(lx, start, true);
  if (n == 4 && starts_with(lx, start, "meta") && at(lx, start + 4) == '[')
    return lex_meta(lx, start);
  if (nonfinite_len(lx, start) == n) return lex_nonfinite(lx, start, n);
  lx->pos += n;
  Token t = make(lx, T_IDENT, start, n);
  if (n == 5 && starts_with(lx, start, "match") && at(lx, lx->pos) == '?') {
    lx->pos++, t.len++, t.kind = T_KW_MATCH_PARTIAL;
    return t;
  }
  if (n > 9 || !islower((unsigned char)lx->src[start]))
    return t; /* keywords are short, lower case */
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
    if (keywords[k].len == n && memcmp(keywords[k].text, lx->src + start, n) == 0)
      t.kind = keywords[k].kind;
  return t;
}

/* local_name := name ( ':' DIGIT+ ( '.' name )? )*
 * A local's name: like an identifier, and also with the dots and `:N`
 * suffixes that frontends put in names (`%fc1.weight`, `%input:0`); a dot
 * before a digit stays a projection (`%t.0`). */
static uint32_t local_name_len(const Lexer *lx, uint32_t i) {
  uint32_t j = i + name_len(lx, i, true);
  while (at(lx, j) == ':' && isdigit(at(lx, j + 1))) {
    j = scan_digits(lx, j + 1);
    if (at(lx, j) == '.' && is_ident_start(at(lx, j + 1))) j += 1 + name_len(lx, j + 1, true);
  }
  return j - i;
}

/* LOCAL := '%' local_name | GRAPH := '%' DIGIT+ | '%'
 * `%x`, `%7`, or the `%` operator. */
static Token lex_percent(Lexer *lx) {
  uint32_t start = lx->pos;
  if (is_ident_start(at(lx, start + 1))) {
    uint32_t n = local_name_len(lx, start + 1);
    lx->pos += 1 + n;
    return make(lx, T_LOCAL, start, 1 + n);
  }
  if (isdigit(at(lx, start + 1))) {
    uint32_t e = scan_digits(lx, start + 1);
    bool bad = is_ident_char(at(lx, e));
    while (is_ident_char(at(lx, e))) e++;
    lx->pos = e;
    Token t = make(lx, T_GRAPH, start, e - start);
    if (bad || e - start > 10) {
      lex_error(lx, lex_span(lx, &t), false, "invalid graph variable `%.*s`", (int)t.len,
                lx->src + start);
      diag_hint(lx->d,
                "graph variables are `%%` and digits (`%%7`); names start with a letter (`%%x7`)");
      t.bad = true;
    }
    return t;
  }
  lx->pos++;
  return make(lx, T_PERCENT, start, 1);
}

/* GLOBAL := '@' name   (not dotted) */
static Token lex_global(Lexer *lx) {
  uint32_t start = lx->pos;
  uint32_t n = name_len(lx, start + 1, false);
  lx->pos += 1 + n;
  Token t = make(lx, T_GLOBAL, start, 1 + n);
  if (!n) {
    lex_error(lx, lex_span(lx, &t), lx->pos >= lx->len, "expected a name after `@`");
    t.bad = true;
  }
  return t;
}

/* VERSION := '#[' ' '* 'version' CHAR* ']' | METADATA := '#[' ' '* 'metadata]' CHAR*
 * `#[version = "0.0.5"]` and `#[metadata]` (which ends the program). */
static Token lex_hash(Lexer *lx) {
  uint32_t start = lx->pos, i = start + 1;
  if (at(lx, i) == '[') {
    i++;
    while (at(lx, i) == ' ') i++;
    uint32_t w = name_len(lx, i, false);
    if (w == 8 && starts_with(lx, i, "metadata") && at(lx, i + 8) == ']') {
      lx->pos = lx->len;
      return make(lx, T_METADATA, start, i + 9 - start);
    }
    if (w == 7 && starts_with(lx, i, "version")) {
      uint32_t e = i + 7;
      while (e < lx->len && lx->src[e] != ']' && lx->src[e] != '\n') e++;
      if (at(lx, e) == ']') {
        lx->pos = e + 1;
        return make(lx, T_VERSION, start, e + 1 - start);
      }
    }
  }
  uint32_t e = start + 1;
  while (e < lx->len && lx->src[e] != '\n' && lx->src[e] != ']') e++;
  e += at(lx, e) == ']';
  lx->pos = e;
  Token t = make(lx, T_VERSION, start, e - start);
  t.bad = true;
  lex_error(lx, lex_span(lx, &t), false, "unknown `#` directive `%.*s`", (int)t.len,
            lx->src + start);
  diag_hint(lx->d, "only #[version = \"0.0.5\"] and #[metadata] exist; comments are // or /* */");
  return t;
}

/* COMMAND := ':' CHAR*   (to the end of the line; only at column 1 of a script) */
static Token lex_command(Lexer *lx) {
  uint32_t start = lx->pos, e = start;
  while (e < lx->len && lx->src[e] != '\n') e++;
  uint32_t end = e;
  if (end > start && lx->src[end - 1] == '\r') end--;
  lx->pos = e;
  return make(lx, T_COMMAND, start, end - start);
}

/* ── punctuation ── */

/* X(text, kind); two-character tokens first. */
/* clang-format off */
#define PUNCTS(X)                                                          \
  X(":=", T_ASSIGN) X("->", T_ARROW) X("=>", T_FATARROW) X("==", T_EQEQ)   \
  X("!=", T_NE) X("<=", T_LE) X(">=", T_GE) X("&&", T_ANDAND)             \
  X("||", T_OROR) X("(", T_LPAREN) X(")", T_RPAREN) X("[", T_LBRACKET)    \
  X("]", T_RBRACKET) X("{", T_LBRACE) X("}", T_RBRACE) X(",", T_COMMA)    \
  X(".", T_DOT) X("=", T_EQ) X(";", T_SEMI) X(":", T_COLON) X("+", T_PLUS) \
  X("-", T_MINUS) X("*", T_STAR) X("/", T_SLASH) X("<", T_LT) X(">", T_GT) \
  X("!", T_BANG) X("?", T_QUESTION) X("^", T_CARET)
/* clang-format on */

typedef struct Punct {
  const char *text;
  uint32_t len;
  TokKind kind;
} Punct;

static const Punct puncts[] = {
#define X(s, k) {s, sizeof s - 1, k},
    PUNCTS(X)
#undef X
};

/* The table is searched only from entries starting with the current
 * character (first_punct is built once; the table lists two-character
 * tokens before one-character ones). */
static int8_t first_punct[256];

static void build_puncts(void) {
  memset(first_punct, -1, sizeof first_punct);
  for (int k = (int)(sizeof puncts / sizeof puncts[0]) - 1; k >= 0; k--)
    first_punct[(unsigned char)puncts[k].text[0]] = (int8_t)k;
}

/* Once per process (lexers may start on several threads at once). */
static void init_puncts(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, build_puncts);
}

/* punct := one entry of PUNCTS   (the longest: two-character entries are listed first) */
static bool lex_punct(Lexer *lx, Token *out) {
  int c = at(lx, lx->pos);
  if (c < 0 || first_punct[c] < 0) return false;
  for (size_t k = (size_t)first_punct[c]; k < sizeof puncts / sizeof puncts[0]; k++)
    if (puncts[k].text[0] == c &&
        (puncts[k].len == 1 || at(lx, lx->pos + 1) == (unsigned char)puncts[k].text[1])) {
      *out = make(lx, puncts[k].kind, lx->pos, puncts[k].len);
      lx->pos += puncts[k].len;
      return true;
    }
  return false;
}

/* ── the scanner ── */

/* Can the previous token end an operand?  Then `-` is subtraction. */
static bool ends_operand(TokKind k) {
  switch (k) {
    case T_IDENT:
    case T_LOCAL:
    case T_GRAPH:
    case T_GLOBAL:
    case T_INT:
    case T_FLOAT:
    case T_STRING:
    case T_META:
    case T_RPAREN:
    case T_RBRACKET:
    case T_CARET:
      return true;
    default:
      return false;
  }
}

/* An unexpected character, with the name characters glued to it (`$x`),
 * becomes one bad identifier so the parser does not complain again. */
static Token lex_bad_char(Lexer *lx) {
  uint32_t start = lx->pos++;
  while (lx->pos < lx->len && ((unsigned char)lx->src[lx->pos] & 0xC0) == 0x80) lx->pos++;
  Span sp = span_at(lx, start, lx->pos - start);
  int c = (unsigned char)lx->src[start];
  if (isprint(c))
    lex_error(lx, sp, false, "unexpected character `%c`", c);
  else if (c >= 0x80)
    lex_error(lx, sp, false, "unexpected character `%.*s`", (int)sp.len, lx->src + start);
  else
    lex_error(lx, sp, false, "unexpected character `\\x%02x`", (unsigned)c);
  while (is_ident_char(at(lx, lx->pos))) lx->pos++;
  Token t = make(lx, T_IDENT, start, lx->pos - start);
  t.bad = true;
  return t;
}

/* token := COMMAND | NUMBER | nonfinite | word | LOCAL | GRAPH | GLOBAL | STRING | VERSION | punct
 * Dispatches on the first character.  A `-` joins a following number only
 * when the previous token cannot end an operand (`axis=-1`, but `%x-1`). */
static Token scan_one(Lexer *lx) {
  int c = at(lx, lx->pos), c1 = at(lx, lx->pos + 1);
  bool col1 = lx->pos == 0 || lx->src[lx->pos - 1] == '\n';
  Token t;
  if (lx->script && col1 && c == ':' && c1 != '=') return lex_command(lx);
  if (isdigit(c)) return lex_number(lx, lx->prev == T_DOT);
  if (c == '-' && !ends_operand(lx->prev)) {
    uint32_t dashes = 1;
    while (at(lx, lx->pos + dashes) == '-') dashes++;
    if (isdigit(c1) || isdigit(at(lx, lx->pos + dashes))) return lex_number(lx, false);
    uint32_t n = nonfinite_len(lx, lx->pos + 1);
    if (n) return lex_nonfinite(lx, lx->pos, n + 1);
  }
  if (is_ident_start(c)) return lex_word(lx);
  if (c == '%') return lex_percent(lx);
  if (c == '@') return lex_global(lx);
  if (c == '"') return lex_string(lx);
  if (c == '#') return lex_hash(lx);
  if (lex_punct(lx, &t)) return t;
  return lex_bad_char(lx);
}

/* A long mapped source leaves memory behind the lexer, a step at a time:
 * nodes hold names and values of their own, and a diagnostic reads its line
 * back from the page cache. */
static void release_behind(Lexer *lx) {
  diag_source_release(lx->d, lx->file, lx->pos - LEX_KEEP);
  lx->release_at =
      lx->pos < UINT32_MAX - LEX_RELEASE_STEP ? lx->pos + LEX_RELEASE_STEP : UINT32_MAX;
}

/* scan := space token   (EOF counts as preceded by a newline) */
static Token scan(Lexer *lx) {
  if (lx->pos >= lx->release_at) release_behind(lx);
  for (;;) {
    skip_space(lx);
    if (diag_stopped(lx->d)) lx->any_error = true, lx->pos = lx->len; /* Ctrl-C: end here */
    if (lx->pos >= lx->len) {
      Token t = make(lx, T_EOF, lx->len, 0);
      t.nl_before = true;
      return t;
    }
    Token t = scan_one(lx);
    t.nl_before = lx->saw_nl;
    lx->saw_nl = false;
    lx->prev = t.kind;
    return t;
  }
}

void lex_init(Lexer *lx, DiagCtx *d, uint32_t file, bool script) {
  init_puncts();
  memset(lx, 0, sizeof *lx);
  const SourceFile *f = diag_source(d, file);
  RLY_ASSERT(f);
  lx->d = d, lx->file = file, lx->base = f->base, lx->script = script;
  lx->src = f->text;
  lx->len = f->len > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)f->len;
  lx->prev = T_EOF;
  lx->saw_nl = true;
  lx->release_at = f->map_len ? LEX_RELEASE_STEP : UINT32_MAX;
  if (starts_with(lx, 0, "\xEF\xBB\xBF")) lx->pos = 3; /* a UTF-8 byte order mark */
}

void lex_restrict(Lexer *lx, uint32_t from, uint32_t to) {
  RLY_ASSERT(lx->count == 0);
  if (to && to < lx->len) lx->len = to;
  if (from > lx->pos) lx->pos = from < lx->len ? from : lx->len;
}

const Token *lex_peek(Lexer *lx, int k) {
  RLY_ASSERT(k >= 0 && k < LEX_LOOKAHEAD);
  while (lx->count <= k) {
    lx->ring[(lx->head + lx->count) % LEX_LOOKAHEAD] = scan(lx);
    lx->count++;
  }
  return &lx->ring[(lx->head + k) % LEX_LOOKAHEAD];
}

Token lex_next(Lexer *lx) {
  Token t = *lex_peek(lx, 0);
  lx->head = (lx->head + 1) % LEX_LOOKAHEAD;
  lx->count--;
  return t;
}

long lex_find_metadata(const char *src, size_t len) {
  static const char key[] = "#[metadata]";
  const char *p = src, *end = src + len;
  while (p < end) {
    const char *hit = memmem(p, (size_t)(end - p), key, sizeof key - 1);
    if (!hit) return -1;
    if (hit == src || hit[-1] == '\n') return (long)(hit - src);
    p = hit + 1;
  }
  return -1;
}
