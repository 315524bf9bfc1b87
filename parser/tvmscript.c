/* tvmscript.c — TVMScript in (tvmscript.h): Python tokens, logical lines
 * with their indentation, and a translator that writes each statement as
 * rly text on the line it came from.  Suites become braces: a frame per
 * open suite (class, function, for, block, init, if, dataflow), closed at
 * the end of the last line of its body.  What becomes what:
 *
 *   @T.prim_func def f(A: T.Buffer((1, 128), "float32")):
 *       prim @f(%A: Buffer[(1, 128), float32]) {
 *   for i, j in T.grid(1, 128):
 *       for %i, %j in grid(1, 128) {
 *   with T.block("Y"): vi, vj = T.axis.remap("SS", [i, j])
 *       block "Y" (spatial %vi = %i, spatial %vj = %j) {
 *   with T.init():
 *       init {
 *   Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
 *       %Y[%vi, %vj] = max(%X[%vi, %vj], 0f);
 *   a: T.handle ... A = T.match_buffer(a, (n, 4), "float32")
 *       %A: Buffer[(n, 4), float32] (the parameter)
 *   @R.function def main(x: R.Tensor((1, 784), "float32")):
 *       def @main(%x: Tensor[(1, 784), float32]) {
 *   with R.dataflow(): ... R.output(out)
 *       let %out = dataflow { ...; %out };
 *   lv = R.call_tir(cls.f, (x,), (1, 128), dtype="float32")
 *       let %lv = call_tir(@f, (%x,), shape=[1, 128], dtype="float32");
 *
 * T.reads, T.writes, T.func_attr and T.block_attr are read and dropped;
 * T.where(c) wraps the block's init and body in `if (c)`.  The first error
 * stops the translation. */
#include "parser/tvmscript.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir.h"
#include "ir/util.h"

enum { TVMS_MAX_DEPTH = 64, TVMS_MAX_NAMES = 256 };

typedef enum TokK { K_NAME, K_NUM, K_STR, K_OP } TokK;

typedef struct PTok {
  TokK k;
  uint32_t off, len, line;
} PTok;

/* A logical line: tokens [from, to), its indentation and first line. */
typedef struct PLine {
  int from, to;
  uint32_t indent, line;
} PLine;

typedef enum FrameKind {
  F_MODULE,
  F_CLASS,
  F_PRIM,
  F_RELAX,
  F_FOR,
  F_BLOCK,
  F_INIT,
  F_IF,
  F_ELSE,
  F_DATAFLOW
} FrameKind;

typedef struct Frame {
  FrameKind kind;
  uint32_t indent; /* of its body; 0 until the first line of it */
  char *close;     /* the text that closes it */
  /* F_BLOCK: the iteration variables are still being read (`(` open);
   * the predicate's tokens (T.where) and whether the body's `if` is open. */
  bool head, body_if, had_body;
  int naxes, pred_from, pred_to;
} Frame;

typedef struct Tx {
  DiagCtx *d;
  uint32_t file;
  const char *src;
  size_t len;
  PTok *t;
  int nt, capt;
  PLine *lines;
  int nlines, caplines;
  StrBuf out;
  uint32_t out_line, last_line;
  Frame fr[TVMS_MAX_DEPTH];
  int depth;
  int p, e; /* the current line's tokens */
  bool failed, at_end, expect_body, closed_if, relax;
  const char *decorator; /* "T" or "R" before a def */
  char *sizevars[TVMS_MAX_NAMES];
  int nsizevars, nest;
  int li; /* the current logical line */
} Tx;

/* ───────────────────────── errors ───────────────────────── */

static bool err_at(Tx *x, uint32_t off, uint32_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool err_at(Tx *x, uint32_t off, uint32_t len, const char *fmt, ...) {
  if (x->failed) return false;
  va_list ap;
  va_start(ap, fmt);
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  diag_error(x->d, diag_span(x->d, x->file, off, len ? len : 1), "%s", b.data ? b.data : "");
  sb_free(&b);
  x->failed = true;
  return false;
}

static const PTok *cur(const Tx *x) { return x->p < x->e ? &x->t[x->p] : NULL; }

/* An error at the current token, or just past the line's last one. */
static bool err_here(Tx *x, const char *what) {
  const PTok *t = cur(x);
  if (t) return err_at(x, t->off, t->len, "%s, found `%.*s`", what, (int)t->len, x->src + t->off);
  const PTok *l = &x->t[x->e - 1];
  return err_at(x, l->off + l->len, 1, "%s at the end of the line", what);
}

/* ───────────────────────── tokens ───────────────────────── */

static void push_tok(Tx *x, TokK k, uint32_t off, uint32_t len, uint32_t line) {
  if (x->nt == x->capt) {
    x->capt = x->capt ? 2 * x->capt : 256;
    x->t = realloc(x->t, sizeof(PTok) * (size_t)x->capt);
    if (!x->t) rly_oom();
  }
  x->t[x->nt++] = (PTok){k, off, len, line};
}

static void push_line(Tx *x, int from, uint32_t indent, uint32_t line) {
  if (x->nlines == x->caplines) {
    x->caplines = x->caplines ? 2 * x->caplines : 64;
    x->lines = realloc(x->lines, sizeof(PLine) * (size_t)x->caplines);
    if (!x->lines) rly_oom();
  }
  x->lines[x->nlines++] = (PLine){from, from, indent, line};
}

/* The length of a string literal at i (quotes included; triple quotes may
 * span lines), or 0 when it is not closed. */
static size_t str_len(Tx *x, size_t i, uint32_t *line) {
  char q = x->src[i];
  bool triple = i + 2 < x->len && x->src[i + 1] == q && x->src[i + 2] == q;
  size_t j = i + (triple ? 3 : 1);
  for (; j < x->len; j++) {
    char c = x->src[j];
    if (c == '\\' && j + 1 < x->len)
      j++;
    else if (c == '\n' && !triple)
      return 0;
    else if (c == '\n')
      (*line)++;
    else if (c == q && (!triple || (j + 2 < x->len && x->src[j + 1] == q && x->src[j + 2] == q)))
      return j + (triple ? 3 : 1) - i;
  }
  return 0;
}

static size_t op_len(const char *s) {
  static const char *const two[] = {
      "**", "//", "==", "!=", "<=", ">=", "->", "+=", "-=", "*=", "/=", NULL};
  for (int i = 0; two[i]; i++)
    if (s[0] == two[i][0] && s[1] == two[i][1]) return 2;
  return strchr("()[]{}:,.=+-*/%<>@!~&|^;", s[0]) && s[0] ? 1 : 0;
}

/* One token at i (not blank, not a comment); its length, 0 after an error. */
static size_t one_token(Tx *x, size_t i, uint32_t *line) {
  const char *s = x->src + i;
  size_t n = 0;
  uint32_t at = *line;
  if (*s == '"' || *s == '\'') {
    if (!(n = str_len(x, i, line))) return err_at(x, (uint32_t)i, 1, "unterminated string"), 0;
    push_tok(x, K_STR, (uint32_t)i, (uint32_t)n, at);
  } else if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
    while (i + n < x->len &&
           (isalnum((unsigned char)s[n]) || s[n] == '.' || s[n] == '_' ||
            ((s[n] == '-' || s[n] == '+') && (s[n - 1] == 'e' || s[n - 1] == 'E') &&
             !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))))
      n++;
    push_tok(x, K_NUM, (uint32_t)i, (uint32_t)n, at);
  } else if (isalpha((unsigned char)*s) || *s == '_') {
    while (i + n < x->len && (isalnum((unsigned char)s[n]) || s[n] == '_')) n++;
    push_tok(x, K_NAME, (uint32_t)i, (uint32_t)n, at);
  } else if ((n = op_len(s))) {
    push_tok(x, K_OP, (uint32_t)i, (uint32_t)n, at);
  } else {
    return err_at(x, (uint32_t)i, 1, "unexpected character `%c` in TVMScript", *s), 0;
  }
  return n;
}

/* The indentation at i (tabs to the next multiple of 8); i moves past it. */
static uint32_t indentation(Tx *x, size_t *i) {
  uint32_t col = 0;
  for (; *i < x->len && (x->src[*i] == ' ' || x->src[*i] == '\t'); (*i)++)
    col = x->src[*i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
  return col;
}

static int bracket_delta(const Tx *x) {
  const PTok *t = &x->t[x->nt - 1];
  if (t->k != K_OP || t->len != 1) return 0;
  char c = x->src[t->off];
  return c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
}

/* Python's lexical structure: logical lines (brackets and `\` join
 * physical ones), each with the indentation of its first line. */
static bool tokenize(Tx *x) {
  size_t i = 0;
  uint32_t line = 1;
  int depth = 0;
  bool bol = true, open = false; /* open: a logical line takes the next token */
  uint32_t ind = 0;
  while (i < x->len && !x->failed) {
    if (bol && depth == 0) {
      ind = indentation(x, &i);
      bol = open = false;
      continue;
    }
    char c = x->src[i];
    if (c == '#') {
      while (i < x->len && x->src[i] != '\n') i++;
    } else if (c == '\\' && i + 1 < x->len && x->src[i + 1] == '\n') {
      i += 2, line++;
    } else if (c == '\n') {
      i++, line++, bol = depth == 0;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      i++;
    } else {
      if (!open) push_line(x, x->nt, ind, line), open = true;
      size_t n = one_token(x, i, &line);
      if (!n) return false;
      i += n;
      depth += bracket_delta(x);
      if (depth < 0) return err_at(x, x->t[x->nt - 1].off, 1, "unmatched closing bracket");
      x->lines[x->nlines - 1].to = x->nt;
    }
  }
  if (depth > 0 && !x->failed) {
    x->at_end = true;
    return err_at(x, (uint32_t)x->len, 1, "unclosed bracket at the end of the input");
  }
  return !x->failed;
}

/* ───────────────────────── emitting ───────────────────────── */

/* Text on the given line (or the current one, never going back). */
static void emit(Tx *x, uint32_t line, const char *s) {
  while (x->out_line < line) sb_putc(&x->out, '\n'), x->out_line++;
  char last = x->out.len ? x->out.data[x->out.len - 1] : '\n';
  if (last != '\n' && last != ' ' && last != '(' && *s != ',' && *s != ')' && *s != ';')
    sb_putc(&x->out, ' ');
  sb_puts(&x->out, s);
}

static void emitf(Tx *x, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void emitf(Tx *x, uint32_t line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  emit(x, line, b.data ? b.data : "");
  sb_free(&b);
}

/* ───────────────────────── token tests ───────────────────────── */

static bool tok_is(const Tx *x, const PTok *t, TokK k, const char *s) {
  return t && t->k == k && t->len == strlen(s) && memcmp(x->src + t->off, s, t->len) == 0;
}
static bool at_op(const Tx *x, const char *s) { return tok_is(x, cur(x), K_OP, s); }
static bool at_name(const Tx *x, const char *s) { return tok_is(x, cur(x), K_NAME, s); }
static bool accept_op(Tx *x, const char *s) { return at_op(x, s) ? (x->p++, true) : false; }

static bool expect_op(Tx *x, const char *s) {
  if (accept_op(x, s)) return true;
  char what[32];
  snprintf(what, sizeof what, "expected `%s`", s);
  return err_here(x, what);
}

/* NAME ('.' NAME)* into buf ("T.axis.spatial"); the first token in *at. */
static bool dotted(Tx *x, char *buf, size_t n, const PTok **at) {
  const PTok *t = cur(x);
  if (!t || t->k != K_NAME) return err_here(x, "expected a name");
  *at = t;
  buf[0] = 0;
  for (;;) {
    t = cur(x);
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%.*s", (int)t->len, x->src + t->off);
    x->p++;
    if (!at_op(x, ".") || x->p + 1 >= x->e || x->t[x->p + 1].k != K_NAME) return true;
    x->p++;
    used = strlen(buf);
    snprintf(buf + used, n - used, ".");
  }
}

static char *tok_str(const Tx *x, const PTok *t) {
  StrBuf b = {0};
  sb_putn(&b, x->src + t->off, t->len);
  return sb_take(&b);
}

/* A string literal's contents as an rly string literal. */
static void put_string(const Tx *x, StrBuf *b, const PTok *t) {
  size_t q = x->src[t->off + 1] == x->src[t->off] && t->len >= 6 ? 3 : 1;
  sb_putc(b, '"');
  for (size_t i = t->off + q; i < t->off + t->len - q; i++) {
    if (x->src[i] == '"') sb_putc(b, '\\');
    sb_putc(b, x->src[i]);
  }
  sb_putc(b, '"');
}

/* A dtype string ("float32") at the current token. */
static bool dtype_str(Tx *x, char *out, size_t n) {
  const PTok *t = cur(x);
  if (!t || t->k != K_STR || t->len < 3)
    return err_here(x, "expected a dtype string like \"float32\"");
  int len = (int)t->len - 2;
  if (dtype_from_name(x->src + t->off + 1, (size_t)len) == DT_INVALID)
    return err_at(x, t->off, t->len, "unknown dtype %.*s", (int)t->len, x->src + t->off);
  snprintf(out, n, "%.*s", len, x->src + t->off + 1);
  x->p++;
  return true;
}

static bool is_sizevar(const Tx *x, const char *s, size_t n) {
  for (int i = 0; i < x->nsizevars; i++)
    if (strlen(x->sizevars[i]) == n && memcmp(x->sizevars[i], s, n) == 0) return true;
  return false;
}

static void clear_sizevars(Tx *x) {
  for (int i = 0; i < x->nsizevars; i++) free(x->sizevars[i]);
  x->nsizevars = 0;
}

/* ───────────────────────── expressions ───────────────────────── */

static bool ex(Tx *x, StrBuf *b);

/* A number as an rly literal: ints as they are, floats with suffix sfx
 * ("f" by default). */
static bool number(Tx *x, StrBuf *b, const PTok *t, bool neg, const char *isfx, const char *fsfx) {
  const char *s = x->src + t->off;
  bool hex = t->len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  bool flt = !hex && (memchr(s, '.', t->len) || memchr(s, 'e', t->len) || memchr(s, 'E', t->len));
  if (neg) sb_putc(b, '-');
  if (hex) {
    sb_printf(b, "%lld%s", (long long)strtoll(s, NULL, 16), isfx);
    return true;
  }
  if (!flt) return sb_putn(b, s, t->len), sb_puts(b, isfx), true;
  if (*s == '.') sb_putc(b, '0');
  for (uint32_t i = 0; i < t->len; i++)
    if (s[i] != '_') sb_putc(b, s[i]);
  if (s[t->len - 1] == '.') sb_putc(b, '0');
  sb_puts(b, fsfx);
  return true;
}

/* The suffix of an rly literal of dtype dt (0 for bool: True/False). */
static const char *lit_suffix(DType dt, bool *is_float) {
  static const struct {
    DType dt;
    const char *sfx;
  } rows[] = {{DT_INT8, "i8"},     {DT_INT16, "i16"},  {DT_INT32, ""},      {DT_INT64, "i64"},
              {DT_UINT8, "u8"},    {DT_UINT16, "u16"}, {DT_UINT32, "u32"},  {DT_UINT64, "u64"},
              {DT_FLOAT16, "f16"}, {DT_FLOAT32, "f"},  {DT_FLOAT64, "f64"}, {DT_BFLOAT16, "bf16"}};
  *is_float = dtype_is_float(dt);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].dt == dt) return rows[i].sfx;
  return NULL;
}

/* args := '(' [ expr (',' expr)* ] ')' written as "(a, b)"; *n counts them. */
static void skip_arg(Tx *x);

/* `annotations={...}` of a loop (a schedule's hints): dropped. */
static bool skip_annotations(Tx *x) {
  const PTok *t = cur(x);
  if (!t || !tok_is(x, t, K_NAME, "annotations") || x->p + 1 >= x->e ||
      !tok_is(x, &x->t[x->p + 1], K_OP, "="))
    return false;
  x->p += 2;
  skip_arg(x);
  accept_op(x, ",");
  return true;
}

static bool args(Tx *x, StrBuf *b, int *n) {
  *n = 0;
  if (!expect_op(x, "(")) return false;
  sb_putc(b, '(');
  while (!at_op(x, ")")) {
    if (skip_annotations(x)) continue;
    if (*n) sb_puts(b, ", ");
    if (!ex(x, b)) return false;
    (*n)++;
    if (!accept_op(x, ",")) break;
  }
  sb_putc(b, ')');
  return expect_op(x, ")");
}

/* T.float32(0) → 0f, T.int64(3) → 3i64, T.bool(True) → True; with an
 * expression, a cast: float32(e). */
static bool dtype_call(Tx *x, StrBuf *b, DType dt, const char *name) {
  bool isf = false;
  const char *sfx = lit_suffix(dt, &isf);
  int k = x->p + 1;
  bool neg = k < x->e && tok_is(x, &x->t[k], K_OP, "-");
  const PTok *v = k + neg < x->e ? &x->t[k + neg] : NULL;
  bool lit = at_op(x, "(") && v && k + neg + 1 < x->e && tok_is(x, &x->t[k + neg + 1], K_OP, ")");
  if (lit && v->k == K_NUM && sfx) {
    x->p = k + neg + 2;
    return number(x, b, v, neg, sfx, isf ? sfx : "");
  }
  if (lit && dt == DT_BOOL && (tok_is(x, v, K_NAME, "True") || tok_is(x, v, K_NAME, "False"))) {
    x->p = k + neg + 2;
    return sb_putn(b, x->src + v->off, v->len), true;
  }
  if (lit && v->k == K_STR && isf) { /* T.float32("inf") */
    x->p = k + neg + 2;
    sb_printf(b, "%s%.*s%s", neg ? "-" : "", (int)v->len - 2, x->src + v->off + 1, sfx);
    return true;
  }
  int n = 0;
  sb_puts(b, name);
  return args(x, b, &n) && (n == 1 || err_at(x, x->t[x->p - 1].off, 1, "a cast takes one value"));
}

/* T.Cast("float32", e) → float32(e); T.reinterpret("int32", e) → reinterpret[int32](e) */
static bool cast_call(Tx *x, StrBuf *b, bool bits) {
  char dt[16];
  if (!expect_op(x, "(") || !dtype_str(x, dt, sizeof dt) || !expect_op(x, ",")) return false;
  sb_printf(b, bits ? "reinterpret[%s](" : "%s(", dt);
  if (!ex(x, b)) return false;
  sb_putc(b, ')');
  return expect_op(x, ")");
}

/* T.floordiv(a, b) → (a / b) and the like: a two-operand call as an infix. */
static bool infix_call(Tx *x, StrBuf *b, const char *op) {
  sb_puts(b, "((");
  if (!expect_op(x, "(") || !ex(x, b)) return false;
  sb_printf(b, ") %s (", op);
  if (!expect_op(x, ",") || !ex(x, b)) return false;
  sb_puts(b, "))");
  return expect_op(x, ")");
}

/* Renamed T functions: TVMScript's name, rly's intrinsic or operator. */
static const struct {
  const char *py, *rly;
  bool infix;
} t_renames[] = {{"if_then_else", "select", false},
                 {"Select", "select", false},
                 {"round", "nearbyint", false},
                 {"truncdiv", "/", true},
                 {"floordiv", "/", true},
                 {"truncmod", "%", true},
                 {"floormod", "%", true}};

/* T.<fn>(...): a dtype, a cast, an intrinsic of ir/tir.h (by its name),
 * or one of t_renames. */
static bool t_call(Tx *x, StrBuf *b, const char *fn, const PTok *at) {
  DType dt = dtype_from_name(fn, strlen(fn));
  if (dt != DT_INVALID) return dtype_call(x, b, dt, fn);
  if (!strcmp(fn, "Cast") || !strcmp(fn, "reinterpret")) return cast_call(x, b, fn[0] == 'r');
  for (size_t i = 0; i < sizeof t_renames / sizeof t_renames[0]; i++) {
    if (strcmp(fn, t_renames[i].py)) continue;
    if (t_renames[i].infix) return infix_call(x, b, t_renames[i].rly);
    int n = 0;
    return sb_puts(b, t_renames[i].rly), args(x, b, &n);
  }
  if (prim_intrinsic_lookup(fn) >= 0) {
    int n = 0;
    return sb_puts(b, fn), args(x, b, &n);
  }
  err_at(x, at->off, (uint32_t)(x->t[x->p - 1].off + x->t[x->p - 1].len - at->off),
         "unknown TVMScript function `T.%s`", fn);
  diag_hint(
      x->d,
      "known: dtypes (T.float32(0)), T.Cast, T.reinterpret, T.if_then_else, T.Select, "
      "T.truncdiv, T.floordiv, T.truncmod, T.floormod and the intrinsics (T.max, T.exp, ...)");
  return false;
}

/* A shape's dimension: an integer, a name (a size variable) or "n". */
static bool dim(Tx *x, StrBuf *b, bool declare) {
  const PTok *t = cur(x);
  if (t && t->k == K_NUM) return sb_putn(b, x->src + t->off, t->len), x->p++, true;
  if (!t || (t->k != K_NAME && t->k != K_STR)) return err_here(x, "expected a dimension");
  uint32_t off = t->off + (t->k == K_STR), n = t->len - (t->k == K_STR ? 2 : 0);
  if (declare && !is_sizevar(x, x->src + off, n) && x->nsizevars < TVMS_MAX_NAMES) {
    StrBuf s = {0};
    sb_putn(&s, x->src + off, n);
    x->sizevars[x->nsizevars++] = sb_take(&s);
  }
  sb_putn(b, x->src + off, n);
  x->p++;
  return true;
}

/* shape := '(' dims ')' | '[' dims ']' | dim, written "(d0, d1)". */
static bool shape(Tx *x, StrBuf *b, bool declare) {
  bool paren = at_op(x, "("), brack = at_op(x, "[");
  sb_putc(b, '(');
  if (!paren && !brack) return dim(x, b, declare) && (sb_putc(b, ')'), true);
  x->p++;
  for (int n = 0; !at_op(x, paren ? ")" : "]"); n++) {
    if (n) sb_puts(b, ", ");
    if (!dim(x, b, declare)) return false;
    if (!accept_op(x, ",")) break;
  }
  sb_putc(b, ')');
  return expect_op(x, paren ? ")" : "]");
}

/* After a shape: [',' ["dtype" | dtype="dtype"]] up to `close`; float32 by
 * default.  Other keywords (scope=, ...) are outside the subset. */
static bool shape_dtype(Tx *x, char *dt, size_t n, const char *close) {
  snprintf(dt, n, "float32");
  while (accept_op(x, ",") && !at_op(x, close)) {
    if (at_name(x, "dtype") && x->p + 1 < x->e && tok_is(x, &x->t[x->p + 1], K_OP, "="))
      x->p += 2;
    else if (cur(x) && cur(x)->k == K_NAME)
      return err_here(x, "unsupported argument");
    if (!dtype_str(x, dt, n)) return false;
  }
  return expect_op(x, close);
}

/* T.Buffer[(1, 128), "float32"] or T.Buffer((1, 128), "float32") → Buffer[(1, 128), float32] */
static bool buffer_type(Tx *x, StrBuf *b, bool declare) {
  char name[64], dt[16];
  const PTok *at;
  if (!dotted(x, name, sizeof name, &at)) return false;
  if (strcmp(name, "T.Buffer") && strcmp(name, "T.buffer"))
    return err_at(x, at->off, at->len,
                  "expected a buffer type like `T.Buffer((1, 128), \"float32\")`");
  bool brack = at_op(x, "[");
  if (!brack && !at_op(x, "(")) return err_here(x, "expected `(` or `[`");
  x->p++;
  sb_puts(b, "Buffer[");
  if (!shape(x, b, declare) || !shape_dtype(x, dt, sizeof dt, brack ? "]" : ")")) return false;
  sb_printf(b, ", %s]", dt);
  return true;
}

/* R.Tensor((1, 784), "float32") or Tensor(...) → Tensor[(1, 784), float32] */
static bool tensor_type(Tx *x, StrBuf *b) {
  char name[64], dt[16];
  const PTok *at;
  if (!dotted(x, name, sizeof name, &at)) return false;
  if (strcmp(name, "R.Tensor") && strcmp(name, "Tensor"))
    return err_at(x, at->off, at->len,
                  "expected a tensor type like `R.Tensor((1, 784), \"float32\")`");
  if (!expect_op(x, "(")) return false;
  sb_puts(b, "Tensor[");
  if (!shape(x, b, false) || !shape_dtype(x, dt, sizeof dt, ")")) return false;
  sb_printf(b, ", %s]", dt);
  return true;
}

/* call_tir's arguments: a tuple, a list or one value, written "(%a, %b)". */
static bool tir_args(Tx *x, StrBuf *b) {
  bool paren = at_op(x, "("), brack = at_op(x, "[");
  int n = 0;
  sb_putc(b, '(');
  if (!paren && !brack) return ex(x, b) && (sb_puts(b, ",)"), true);
  x->p++;
  for (; !at_op(x, paren ? ")" : "]"); n++) {
    if (n) sb_puts(b, ", ");
    if (!ex(x, b)) return false;
    if (!accept_op(x, ",")) break;
  }
  sb_puts(b, n == 1 ? ",)" : ")");
  return expect_op(x, paren ? ")" : "]");
}

/* The output of call_tir: a shape tuple, or R.Tensor(shape, dtype). */
static bool tir_out(Tx *x, StrBuf *shp, char *dt, size_t n) {
  if (at_op(x, "(") || at_op(x, "[")) return shape(x, shp, false);
  char name[64];
  const PTok *at;
  if (!dotted(x, name, sizeof name, &at)) return false;
  if (strcmp(name, "R.Tensor") && strcmp(name, "Tensor"))
    return err_at(x, at->off, at->len, "expected the output's shape or `R.Tensor(shape, dtype)`");
  return expect_op(x, "(") && shape(x, shp, false) && shape_dtype(x, dt, n, ")");
}

/* R.call_tir(f, (args), (1, 128), dtype="float32") and
 * R.call_tir(cls.f, (args), out_sinfo=R.Tensor((1, 128), dtype="float32")) */
static bool call_tir(Tx *x, StrBuf *b) {
  char dt[16] = "float32", name[128];
  const PTok *at;
  StrBuf shp = {0};
  if (!expect_op(x, "(")) return false;
  if (cur(x) && cur(x)->k == K_STR) {
    sb_puts(b, "call_tir(");
    put_string(x, b, cur(x)), x->p++;
  } else {
    if (!dotted(x, name, sizeof name, &at)) return false;
    const char *dot = strrchr(name, '.');
    sb_printf(b, "call_tir(@%s", dot ? dot + 1 : name);
  }
  sb_puts(b, ", ");
  bool ok = expect_op(x, ",") && tir_args(x, b);
  while (ok && accept_op(x, ",") && !at_op(x, ")")) {
    bool kw =
        cur(x) && cur(x)->k == K_NAME && x->p + 1 < x->e && tok_is(x, &x->t[x->p + 1], K_OP, "=");
    bool is_dt = kw && at_name(x, "dtype");
    if (kw && !is_dt && !at_name(x, "out_sinfo"))
      ok = err_here(x, "unsupported argument of R.call_tir");
    if (kw) x->p += 2;
    ok = ok && (is_dt ? dtype_str(x, dt, sizeof dt) : tir_out(x, &shp, dt, sizeof dt));
  }
  if (ok && !shp.len) ok = err_here(x, "R.call_tir needs the output's shape");
  if (ok) sb_printf(b, ", shape=[%.*s], dtype=\"%s\")", (int)shp.len - 2, shp.data + 1, dt);
  sb_free(&shp);
  return ok && expect_op(x, ")");
}

/* A Relax op call R.nn.relu(x, k=v) → nn.relu(%x, k=v) */
static bool r_op(Tx *x, StrBuf *b, const char *op) {
  sb_printf(b, "%s(", op);
  if (!expect_op(x, "(")) return false;
  for (int n = 0; !at_op(x, ")"); n++) {
    if (n) sb_puts(b, ", ");
    if (cur(x) && cur(x)->k == K_NAME && x->p + 1 < x->e && tok_is(x, &x->t[x->p + 1], K_OP, "=")) {
      sb_printf(b, "%.*s=", (int)cur(x)->len, x->src + cur(x)->off);
      x->p += 2;
    }
    if (cur(x) && cur(x)->k == K_STR)
      put_string(x, b, cur(x)), x->p++;
    else if (!ex(x, b))
      return false;
    if (!accept_op(x, ",")) break;
  }
  sb_putc(b, ')');
  return expect_op(x, ")");
}

/* name(...) in an expression */
static bool call(Tx *x, StrBuf *b, const char *fn, const PTok *at) {
  int n = 0;
  if (!x->relax && !strncmp(fn, "T.", 2)) return t_call(x, b, fn + 2, at);
  if (!x->relax && (!strcmp(fn, "max") || !strcmp(fn, "min") || !strcmp(fn, "abs")))
    return sb_puts(b, fn), args(x, b, &n);
  if (x->relax && !strcmp(fn, "R.call_tir")) return call_tir(x, b);
  if (x->relax && !strncmp(fn, "R.", 2)) return r_op(x, b, fn + 2);
  return err_at(x, at->off, (uint32_t)strlen(fn), "unknown function `%s` in TVMScript", fn);
}

/* NAME[...]: a load %X[i, j] (prim) or a projection %t.0 (Relax). */
static bool subscript(Tx *x, StrBuf *b) {
  x->p++;
  if (x->relax) {
    const PTok *t = cur(x);
    if (!t || t->k != K_NUM) return err_here(x, "expected a tuple index");
    sb_printf(b, ".%.*s", (int)t->len, x->src + t->off);
    x->p++;
    return expect_op(x, "]");
  }
  sb_putc(b, '[');
  for (int n = 0; !at_op(x, "]"); n++) {
    if (n) sb_puts(b, ", ");
    if (!ex(x, b)) return false;
    if (!accept_op(x, ",")) break;
  }
  sb_putc(b, ']');
  return expect_op(x, "]");
}

/* A name: a variable (%x), a size variable, True/False, a call or a load. */
static bool name_atom(Tx *x, StrBuf *b) {
  char name[128];
  const PTok *at;
  if (!dotted(x, name, sizeof name, &at)) return false;
  if (at_op(x, "(")) return call(x, b, name, at);
  if (strchr(name, '.'))
    return err_at(x, at->off, (uint32_t)strlen(name), "`%s` is not a value", name);
  if (!strcmp(name, "True") || !strcmp(name, "False")) return sb_puts(b, name), true;
  if (!x->relax && is_sizevar(x, name, strlen(name))) return sb_puts(b, name), true;
  sb_printf(b, "%%%s", name);
  return at_op(x, "[") ? subscript(x, b) : true;
}

/* atom := NUM | name | '(' expr [',' ...] ')' */
static bool atom(Tx *x, StrBuf *b) {
  const PTok *t = cur(x);
  if (!t) return err_here(x, "expected an expression");
  if (t->k == K_NUM) return x->p++, number(x, b, t, false, "", "f");
  if (t->k == K_NAME) return name_atom(x, b);
  if (x->relax && tok_is(x, t, K_OP, "[")) { /* an attribute's list: axis=[1] */
    x->p++;
    sb_putc(b, '[');
    for (int n = 0; !at_op(x, "]"); n++) {
      if (n) sb_puts(b, ", ");
      if (!ex(x, b)) return false;
      if (!accept_op(x, ",")) break;
    }
    sb_putc(b, ']');
    return expect_op(x, "]");
  }
  if (tok_is(x, t, K_OP, "(")) {
    x->p++;
    sb_putc(b, '(');
    int n = 0;
    for (; !at_op(x, ")"); n++) {
      if (n) sb_puts(b, ", ");
      if (!ex(x, b)) return false;
      if (!accept_op(x, ",")) break;
      if (!x->relax) return err_here(x, "a tuple is not a value in a prim function");
      if (at_op(x, ")") && n == 0) sb_putc(b, ',');
    }
    sb_putc(b, ')');
    return expect_op(x, ")");
  }
  return err_here(x, "expected an expression");
}

/* power := atom ['**' unary]   (pow(a, b)) */
static bool ex_unary(Tx *x, StrBuf *b);
static bool ex_power(Tx *x, StrBuf *b) {
  StrBuf a = {0};
  bool ok = atom(x, &a);
  if (ok && accept_op(x, "**")) {
    const PTok *t = cur(x);
    const PTok *after = x->p + 1 < x->e ? &x->t[x->p + 1] : NULL;
    bool int_lit =
        t && t->k == K_NUM &&
        (!after || tok_is(x, after, K_OP, ")") || tok_is(x, after, K_OP, ",")); /* t ** 2: 2f */
    sb_printf(b, "pow(%s, ", a.data);
    ok = ex_unary(x, b);
    if (int_lit && !memchr(x->src + t->off, '.', t->len)) sb_putc(b, 'f');
    sb_putc(b, ')');
  } else if (ok) {
    sb_puts(b, a.data);
  }
  sb_free(&a);
  return ok;
}

/* unary := ('-' | '+')* power   (a loop: no recursion on a long chain) */
static bool ex_unary(Tx *x, StrBuf *b) {
  for (;;) {
    if (accept_op(x, "-"))
      sb_putc(b, '-');
    else if (!accept_op(x, "+"))
      return ex_power(x, b);
  }
}

/* Left-associative binary levels: each row's operators, Python's and rly's. */
static const struct {
  const char *py[4], *rly[4];
} levels[] = {{{"*", "/", "//", "%"}, {"*", "/", "/", "%"}}, {{"+", "-"}, {"+", "-"}}};

static bool ex_level(Tx *x, StrBuf *b, int lvl) {
  if (lvl < 0) return ex_unary(x, b);
  if (!ex_level(x, b, lvl - 1)) return false;
  for (;;) {
    int k = -1;
    for (int i = 0; i < 4 && levels[lvl].py[i]; i++)
      if (at_op(x, levels[lvl].py[i])) k = i;
    if (k < 0) return true;
    x->p++;
    sb_printf(b, " %s ", levels[lvl].rly[k]);
    if (!ex_level(x, b, lvl - 1)) return false;
  }
}

/* cmp := arith [cmpop arith]   (chains are outside the subset) */
static bool ex_cmp(Tx *x, StrBuf *b) {
  static const char *const ops[] = {"<", ">", "<=", ">=", "==", "!=", NULL};
  size_t start = b->len;
  if (!ex_level(x, b, 1)) return false;
  for (int i = 0; ops[i]; i++) {
    if (!accept_op(x, ops[i])) continue;
    sb_printf(b, " %s ", ops[i]);
    if (!ex_level(x, b, 1)) return false;
    for (int j = 0; ops[j]; j++)
      if (at_op(x, ops[j]))
        return err_here(x, "chained comparisons are outside the TVMScript subset");
    StrBuf w = {0};
    sb_printf(&w, "(%s)", b->data + start);
    b->len = start;
    sb_puts(b, w.data);
    sb_free(&w);
    break;
  }
  return true;
}

static bool ex_not(Tx *x, StrBuf *b) {
  for (; at_name(x, "not"); x->p++) sb_puts(b, "!");
  return ex_cmp(x, b);
}

static bool ex_bool(Tx *x, StrBuf *b, const char *py, const char *rly) {
  bool is_or = !strcmp(py, "or");
  if (!(is_or ? ex_bool(x, b, "and", "&&") : ex_not(x, b))) return false;
  while (at_name(x, py)) {
    x->p++;
    sb_printf(b, " %s ", rly);
    if (!(is_or ? ex_bool(x, b, "and", "&&") : ex_not(x, b))) return false;
  }
  return true;
}

/* expr := or-expression, Python's precedence; comparisons are parenthesized
 * (rly's `==` binds looser than `<`, Python's the same). */
static bool ex(Tx *x, StrBuf *b) {
  if (x->nest >= TVMS_MAX_DEPTH) return err_here(x, "expression nested too deeply");
  x->nest++;
  bool ok = ex_bool(x, b, "or", "||");
  x->nest--;
  return ok;
}

/* An expression to the end of the line, emitted on its line. */
static bool emit_expr_rest(Tx *x, uint32_t line, const char *before, const char *after) {
  StrBuf b = {0};
  sb_puts(&b, before);
  bool ok = ex(x, &b);
  if (ok && cur(x)) ok = err_here(x, "expected the end of the statement");
  sb_puts(&b, after);
  if (ok) emit(x, line, b.data);
  sb_free(&b);
  return ok;
}

/* ───────────────────────── frames ───────────────────────── */

static Frame *top(Tx *x) { return &x->fr[x->depth - 1]; }

/* Opens a suite: the next line must be indented more than this one. */
static bool push(Tx *x, FrameKind k, const char *close) {
  if (x->depth == TVMS_MAX_DEPTH) return err_here(x, "nested too deeply");
  Frame *f = &x->fr[x->depth++];
  *f = (Frame){.kind = k, .close = strdup(close), .pred_from = -1};
  if (!f->close) rly_oom();
  x->expect_body = true;
  return true;
}

/* The predicate of a block (T.where) as rly text. */
static bool pred_text(Tx *x, const Frame *f, StrBuf *b) {
  int p = x->p, e = x->e;
  x->p = f->pred_from, x->e = f->pred_to;
  bool ok = ex(x, b);
  x->p = p, x->e = e;
  return ok;
}

/* Ends a block's iteration variables: `) {`. */
static void block_head_close(Tx *x, Frame *f, uint32_t line) {
  if (!f->head) return;
  emit(x, line, ") {");
  f->head = false;
}

/* Before a statement of a block's body (not its init): the head closed
 * and, under T.where, the body's `if (c) {` opened. */
static bool block_body(Tx *x, Frame *f, uint32_t line) {
  if (f->kind != F_BLOCK) return true;
  line = x->last_line; /* `) {` and `if (c) {` end the line before */
  block_head_close(x, f, line);
  f->had_body = true;
  if (f->pred_from < 0 || f->body_if) return true;
  StrBuf b = {0};
  sb_puts(&b, "if (");
  bool ok = pred_text(x, f, &b);
  if (ok) emit(x, line, b.data), emit(x, line, ") {");
  sb_free(&b);
  f->body_if = ok;
  return ok;
}

static void pop(Tx *x) {
  Frame *f = top(x);
  if (f->kind == F_BLOCK) block_head_close(x, f, x->last_line);
  if (f->body_if) emit(x, x->last_line, "}");
  if (f->close[0]) emit(x, x->last_line, f->close);
  if (f->kind == F_PRIM) clear_sizevars(x);
  x->closed_if = f->kind == F_IF;
  free(f->close);
  x->depth--;
}

/* The indentation of line l against the open suites: the first line of a
 * new suite sets its indentation; a smaller one closes suites down to the
 * one it matches. */
static bool line_indent(Tx *x, const PLine *l) {
  const PTok *t = &x->t[l->from];
  if (x->expect_body) {
    x->expect_body = false;
    if (l->indent <= x->fr[x->depth - 2].indent)
      return err_at(x, t->off, t->len, "expected an indented block");
    top(x)->indent = l->indent;
    return true;
  }
  int depth = x->depth;
  while (x->depth > 1 && l->indent < top(x)->indent) pop(x);
  if (l->indent > top(x)->indent && depth == x->depth)
    return err_at(x, t->off, t->len, "unexpected indent");
  if (l->indent != top(x)->indent)
    return err_at(x, t->off, t->len, "unindent does not match any outer indentation level");
  return true;
}

/* ───────────────────────── functions ───────────────────────── */

static bool at_end_colon(Tx *x) {
  if (!expect_op(x, ":")) return false;
  return !cur(x) || err_here(x, "expected the end of the line after `:`");
}

/* One parameter: prim `%A: Buffer[...]`, Relax `%x: Tensor[...]` or `%x`. */
/* The line of the function's body `A = T.match_buffer(handle, shape, dtype)`
 * for parameter `handle: T.handle`: its token index, or -1. */
static int match_buffer_line(const Tx *x, const PTok *handle) {
  const PLine *def = &x->lines[x->li];
  for (int i = x->li + 1; i < x->nlines && x->lines[i].indent > def->indent; i++) {
    const PLine *l = &x->lines[i];
    const PTok *t = &x->t[l->from];
    if (l->to - l->from > 7 && tok_is(x, &t[4], K_NAME, "match_buffer") && t[6].k == K_NAME &&
        t[6].len == handle->len && !memcmp(x->src + t[6].off, x->src + handle->off, handle->len))
      return l->from;
  }
  return -1;
}

/* `a: T.handle` with `A = T.match_buffer(a, (n, 4), "float32")` in the
 * body: the parameter `%A: Buffer[(n, 4), float32]` (its sizes declared). */
static bool handle_param(Tx *x, const PTok *handle, StrBuf *b) {
  int at = match_buffer_line(x, handle);
  if (at < 0)
    return err_at(x, handle->off, handle->len, "no `T.match_buffer(%.*s, ...)` for this handle",
                  (int)handle->len, x->src + handle->off);
  int p = x->p, e = x->e;
  char dt[16];
  x->p = at + 7; /* A = T.match_buffer(a `,` */
  for (int i = x->li + 1; i < x->nlines; i++)
    if (x->lines[i].from == at) x->e = x->lines[i].to;
  b->len = 0;
  sb_printf(b, "%%%.*s: Buffer[", (int)x->t[at].len, x->src + x->t[at].off);
  bool ok = expect_op(x, ",") && shape(x, b, true) && shape_dtype(x, dt, sizeof dt, ")");
  sb_printf(b, ", %s]", dt);
  x->p = p, x->e = e;
  return ok;
}

static bool param(Tx *x, int n) {
  const PTok *t = cur(x);
  if (!t || t->k != K_NAME) return err_here(x, "expected a parameter name");
  StrBuf b = {0};
  if (n) emit(x, x->t[x->p - 1].line, ",");
  sb_printf(&b, "%%%.*s", (int)t->len, x->src + t->off);
  x->p++;
  bool ok = true;
  bool handle = !x->relax && x->p + 3 < x->e && tok_is(x, &x->t[x->p + 1], K_NAME, "T") &&
                tok_is(x, &x->t[x->p + 3], K_NAME, "handle");
  if (handle && accept_op(x, ":")) {
    x->p += 3;
    ok = handle_param(x, t, &b);
  } else if (accept_op(x, ":")) {
    sb_puts(&b, ": ");
    ok = x->relax ? tensor_type(x, &b) : buffer_type(x, &b, true);
  } else if (!x->relax) {
    ok = err_here(x, "expected `:` and the parameter's buffer type");
  }
  if (ok) emit(x, t->line, b.data);
  sb_free(&b);
  return ok;
}

/* def NAME '(' params ')' ['->' type] ':'  →  prim @NAME(...) { or def @NAME(...) -> T { */
static bool function(Tx *x, bool relax) {
  const PTok *d = cur(x);
  x->p++;
  const PTok *t = cur(x);
  if (!t || t->k != K_NAME) return err_here(x, "expected the function's name");
  x->relax = relax;
  clear_sizevars(x);
  emitf(x, d->line, "%s @%.*s(", relax ? "def" : "prim", (int)t->len, x->src + t->off);
  x->p++;
  if (!expect_op(x, "(")) return false;
  for (int n = 0; !at_op(x, ")"); n++)
    if (!param(x, n) || (!accept_op(x, ",") && !at_op(x, ")")))
      return x->failed ? false : err_here(x, "expected `,` or `)`");
  x->p++;
  emit(x, x->t[x->p - 1].line, ")");
  if (accept_op(x, "->")) {
    StrBuf b = {0};
    sb_puts(&b, "-> ");
    bool none = at_name(x, "None");
    bool ok = none ? (x->p++, true) : relax ? tensor_type(x, &b) : err_here(x, "expected `None`");
    if (ok && !none) emit(x, x->t[x->p - 1].line, b.data);
    sb_free(&b);
    if (!ok) return false;
  }
  if (!at_end_colon(x)) return false;
  emit(x, x->t[x->p - 1].line, "{");
  return push(x, relax ? F_RELAX : F_PRIM, "}");
}

/* '@' decorator: the module's, T.prim_func or R.function (arguments dropped). */
static bool decorator(Tx *x) {
  char name[96];
  const PTok *at;
  x->p++;
  if (!dotted(x, name, sizeof name, &at)) return false;
  static const char *const mods[] = {"tvm.script.ir_module", "I.ir_module",
                                     "tvm.script.ir.ir_module", "ir_module", NULL};
  x->decorator = NULL;
  for (int i = 0; mods[i]; i++)
    if (!strcmp(name, mods[i])) x->decorator = "M";
  if (!strcmp(name, "T.prim_func")) x->decorator = "T";
  if (!strcmp(name, "R.function")) x->decorator = "R";
  if (!x->decorator)
    return err_at(x, at->off, (uint32_t)strlen(name), "unknown decorator `@%s` in TVMScript", name);
  return true;
}

/* A statement of the module or of a class: imports (skipped), decorators,
 * `class Name:`, decorated functions. */
static bool module_stmt(Tx *x, Frame *f) {
  const PTok *t = cur(x);
  const char *dec = x->decorator;
  if (tok_is(x, t, K_OP, "@")) return decorator(x);
  x->decorator = NULL;
  if (t->k == K_STR && x->p + 1 == x->e) return true; /* a docstring */
  if (f->kind == F_MODULE && (tok_is(x, t, K_NAME, "import") || tok_is(x, t, K_NAME, "from")))
    return !dec || err_at(x, t->off, t->len, "a decorator must be followed by a definition");
  if (tok_is(x, t, K_NAME, "class") && f->kind == F_MODULE) {
    if (!dec || strcmp(dec, "M"))
      return err_at(x, t->off, t->len, "a class needs `@I.ir_module` before it");
    x->p += 2;
    while (cur(x) && !at_op(x, ":")) x->p++; /* (object) and the like */
    return at_end_colon(x) && push(x, F_CLASS, "");
  }
  if (tok_is(x, t, K_NAME, "def")) {
    if (dec && strcmp(dec, "M")) return function(x, dec[0] == 'R');
    return err_at(x, t->off, t->len, "a function needs `@T.prim_func` or `@R.function` before it");
  }
  return err_at(x, t->off, t->len,
                "outside the TVMScript subset: expected `@I.ir_module class ...:`, "
                "`@T.prim_func def ...` or `@R.function def ...`");
}

/* ───────────────────────── prim statements ───────────────────────── */

/* The index of the line's assignment operator (`=`, `+=`, ...) outside
 * brackets, or -1. */
static int assign_at(const Tx *x) {
  int depth = 0;
  for (int i = x->p; i < x->e; i++) {
    const PTok *t = &x->t[i];
    if (t->k != K_OP) continue;
    char c = x->src[t->off];
    if (t->len == 1 && (c == '(' || c == '[' || c == '{')) depth++;
    if (t->len == 1 && (c == ')' || c == ']' || c == '}')) depth--;
    bool eq = (t->len == 1 && c == '=') ||
              (t->len == 2 && x->src[t->off + 1] == '=' && strchr("+-*/", c));
    if (!depth && eq) return i;
  }
  return -1;
}

/* Skips a balanced expression up to the next `,` or `)` at its level. */
static void skip_arg(Tx *x) {
  int depth = 0;
  for (; cur(x); x->p++) {
    if (!depth && (at_op(x, ",") || at_op(x, ")"))) return;
    if (at_op(x, "(") || at_op(x, "[") || at_op(x, "{")) depth++;
    if (at_op(x, ")") || at_op(x, "]") || at_op(x, "}")) depth--;
  }
}

/* The axis function fn's kinds ("SSR"), after its `(`: remap's string and
 * `[`, or spatial/reduce's domain (dropped) and `,`. */
static const char *axis_kinds(Tx *x, const char *fn, const PTok *at, int nnames) {
  if (!strcmp(fn, "T.axis.remap")) {
    const PTok *k = cur(x);
    if (!k || k->k != K_STR) return err_here(x, "expected the axis kinds, like \"SSR\""), NULL;
    if ((int)k->len - 2 != nnames)
      return err_at(x, k->off, k->len, "%d axis kinds for %d names", (int)k->len - 2, nnames), NULL;
    x->p++;
    return expect_op(x, ",") && expect_op(x, "[") ? x->src + k->off + 1 : NULL;
  }
  bool s = !strcmp(fn, "T.axis.spatial") || !strcmp(fn, "T.axis.S");
  bool r = !strcmp(fn, "T.axis.reduce") || !strcmp(fn, "T.axis.R");
  if (!s && !r)
    return err_at(x, at->off, (uint32_t)strlen(fn),
                  "unknown block axis `%s` (the subset has T.axis.spatial, T.axis.reduce and "
                  "T.axis.remap)",
                  fn),
           NULL;
  if (nnames != 1) return err_at(x, at->off, at->len, "`%s` binds one name", fn), NULL;
  skip_arg(x);
  return expect_op(x, ",") ? (s ? "S" : "R") : NULL;
}

/* One block variable: `spatial %vi = <binding>` on its name's line. */
static bool axis_binding(Tx *x, Frame *f, const PTok *n, char kind, bool first, const PTok *at) {
  if (kind != 'S' && kind != 'R')
    return err_at(x, at->off, at->len, "axis kind `%c`: the subset has S and R", kind);
  if (n->k != K_NAME) return err_at(x, n->off, n->len, "expected a name");
  StrBuf b = {0};
  if (first && f->naxes) emit(x, x->last_line, ","); /* after the previous line's axis */
  sb_printf(&b, "%s%s %%%.*s = ", first ? "" : ", ", kind == 'S' ? "spatial" : "reduce",
            (int)n->len, x->src + n->off);
  f->naxes++;
  bool ok = ex(x, &b);
  if (ok) emit(x, n->line, b.data);
  sb_free(&b);
  return ok;
}

/* vi = T.axis.spatial(DOM, binding) (also S, reduce, R; the domain is
 * dropped) or vi, vj = T.axis.remap("SR", [i, j]), on a block's head. */
static bool axes(Tx *x, Frame *f, int eq) {
  const PTok *first = cur(x), *at;
  if (f->kind != F_BLOCK || !f->head)
    return err_at(x, first->off, first->len, "block axes come first in a `with T.block(...)`");
  int names = x->p, nnames = (eq - x->p + 1) / 2;
  char fn[64];
  x->p = eq + 1;
  if (!dotted(x, fn, sizeof fn, &at) || !expect_op(x, "(")) return false;
  const char *kinds = axis_kinds(x, fn, at, nnames);
  for (int i = 0; kinds && i < nnames; i++)
    if (!axis_binding(x, f, &x->t[names + 2 * i], kinds[i], !i, at) ||
        (i < nnames - 1 && !expect_op(x, ",")))
      return false;
  if (!kinds || (!strcmp(fn, "T.axis.remap") && !expect_op(x, "]"))) return false;
  return expect_op(x, ")") && (!cur(x) || err_here(x, "expected the end of the line"));
}

/* Y = T.alloc_buffer((1, 128), "float32")  →  alloc %Y: Buffer[(1, 128), float32]; */
static bool alloc(Tx *x, const PTok *name, int eq) {
  char dt[16];
  StrBuf b = {0};
  x->p = eq + 4;
  sb_printf(&b, "alloc %%%.*s: Buffer[", (int)name->len, x->src + name->off);
  bool ok = expect_op(x, "(") && shape(x, &b, false) && shape_dtype(x, dt, sizeof dt, ")");
  ok = ok && (!cur(x) || err_here(x, "expected the end of the line"));
  sb_printf(&b, ", %s];", dt);
  if (ok) emit(x, name->line, b.data);
  sb_free(&b);
  return ok;
}

/* Y[i, j] = e, Y[i, j] += e, t = e or t: T.float32 = e */
/* `t = ` or `t: T.float32 = ` as `let %t[: float32]` into lhs. */
static bool let_lhs(Tx *x, const PTok *name, int eq, StrBuf *lhs) {
  const PTok *op = &x->t[eq];
  sb_printf(lhs, "let %%%.*s", (int)name->len, x->src + name->off);
  x->p++;
  if (accept_op(x, ":")) {
    char fn[32];
    const PTok *at;
    if (!dotted(x, fn, sizeof fn, &at)) return false;
    bool t = !strncmp(fn, "T.", 2);
    if (!t || dtype_from_name(fn + 2, strlen(fn + 2)) == DT_INVALID)
      return err_at(x, at->off, at->len, "expected a dtype like `T.float32`");
    sb_printf(lhs, ": %s", fn + 2);
  }
  if (x->p != eq) return err_here(x, "expected `=`");
  if (op->len == 2)
    return err_at(x, op->off, op->len, "`%.*s` needs a buffer element", 2, x->src + op->off);
  return true;
}

/* `n = T.int64()` (a size variable, declared by the shapes that use it) or
 * `A = T.match_buffer(a, ...)` (a parameter, read with the signature). */
static bool declaration(const Tx *x, int eq) {
  const PTok *t = &x->t[eq];
  if (eq != x->p + 1 || eq + 4 >= x->e || !tok_is(x, &t[1], K_NAME, "T")) return false;
  if (tok_is(x, &t[3], K_NAME, "match_buffer")) return true;
  bool dt = dtype_from_name(x->src + t[3].off, t[3].len) != DT_INVALID;
  return dt && eq + 6 == x->e && tok_is(x, &t[5], K_OP, ")");
}

/* Y[i, j] = e, Y[i, j] += e, t = e or t: T.float32 = e (axes and
 * T.alloc_buffer have their own functions) */
static bool assign(Tx *x, Frame *f, int eq) {
  const PTok *first = cur(x), *op = &x->t[eq];
  bool remap = eq > x->p + 1 && tok_is(x, &x->t[x->p + 1], K_OP, ",");
  if (remap || (eq + 3 < x->e && tok_is(x, &x->t[eq + 1], K_NAME, "T") &&
                tok_is(x, &x->t[eq + 2], K_OP, ".") && tok_is(x, &x->t[eq + 3], K_NAME, "axis")))
    return axes(x, f, eq);
  if (declaration(x, eq)) return true;
  if (!block_body(x, f, first->line)) return false;
  if (eq == x->p + 1 && eq + 3 < x->e && tok_is(x, &x->t[eq + 3], K_NAME, "alloc_buffer"))
    return alloc(x, first, eq);
  StrBuf lhs = {0}, b = {0};
  bool store = eq > x->p + 1 && tok_is(x, &x->t[x->p + 1], K_OP, "[");
  bool ok = store ? name_atom(x, &lhs) && (x->p == eq || err_here(x, "expected `=`"))
                  : let_lhs(x, first, eq, &lhs);
  x->p = eq + 1;
  sb_printf(&b, "%s = ", lhs.data ? lhs.data : "");
  if (op->len == 2) sb_printf(&b, "%s %c (", lhs.data ? lhs.data : "", x->src[op->off]);
  ok = ok && emit_expr_rest(x, first->line, b.data, op->len == 2 ? ");" : ";");
  sb_free(&b), sb_free(&lhs);
  return ok;
}

/* for i, j in T.grid(a, b):  (T.serial, range, T.parallel, T.vectorized, T.unroll) */
/* `in KIND`: rly's loop kind for TVMScript's T.grid, T.serial, ... */
static const char *loop_kind(Tx *x) {
  static const char *const kinds[][2] = {
      {"T.grid", "grid"},         {"T.serial", "range"},          {"range", "range"},
      {"T.parallel", "parallel"}, {"T.vectorized", "vectorized"}, {"T.unroll", "unrolled"}};
  char fn[64];
  const PTok *at;
  if (!at_name(x, "in")) return err_here(x, "expected `in`"), NULL;
  x->p++;
  if (!dotted(x, fn, sizeof fn, &at)) return NULL;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcmp(fn, kinds[i][0])) return kinds[i][1];
  err_at(x, at->off, (uint32_t)strlen(fn),
         "unknown loop `%s` (the subset has T.grid, T.serial, range, T.parallel, T.vectorized "
         "and T.unroll)",
         fn);
  return NULL;
}

/* for i, j in T.grid(a, b):  (T.serial, range, T.parallel, T.vectorized, T.unroll) */
static bool for_stmt(Tx *x, Frame *f) {
  uint32_t line = cur(x)->line;
  if (!block_body(x, f, line)) return false;
  StrBuf b = {0};
  sb_puts(&b, "for ");
  x->p++;
  for (int n = 0; !at_name(x, "in"); n++) {
    const PTok *v = cur(x);
    if (!v || v->k != K_NAME) return sb_free(&b), err_here(x, "expected a loop variable");
    sb_printf(&b, "%s%%%.*s", n ? ", " : "", (int)v->len, x->src + v->off);
    x->p++;
    if (!accept_op(x, ",")) break;
  }
  const char *kind = loop_kind(x);
  int n = 0;
  if (kind) sb_printf(&b, " in %s", kind);
  bool ok = kind && args(x, &b, &n) && at_end_colon(x);
  if (ok) emit(x, line, b.data), emit(x, line, "{");
  sb_free(&b);
  return ok && push(x, F_FOR, "}");
}

/* with T.block("Y"):  or  with T.init(): */
static bool with_block(Tx *x, Frame *f, const char *fn, const PTok *at) {
  if (!strcmp(fn, "T.init")) {
    if (f->kind != F_BLOCK) return err_at(x, at->off, at->len, "`T.init()` belongs in a block");
    if (f->had_body) return err_at(x, at->off, at->len, "`T.init()` comes before the block's body");
    block_head_close(x, f, x->last_line);
    StrBuf b = {0};
    sb_puts(&b, "init {");
    if (f->pred_from >= 0) sb_puts(&b, " if ("), pred_text(x, f, &b), sb_puts(&b, ") {");
    emit(x, at->line, b.data);
    sb_free(&b);
    return expect_op(x, "(") && expect_op(x, ")") && at_end_colon(x) &&
           push(x, F_INIT, f->pred_from >= 0 ? "} }" : "}");
  }
  if (strcmp(fn, "T.block"))
    return err_at(x, at->off, (uint32_t)strlen(fn), "unknown `with %s` in a prim function", fn);
  if (!block_body(x, f, at->line) || !expect_op(x, "(")) return false;
  const PTok *name = cur(x);
  if (!name || name->k != K_STR) return err_here(x, "a block needs a name, like `T.block(\"Y\")`");
  StrBuf b = {0};
  sb_puts(&b, "block ");
  put_string(x, &b, name);
  sb_puts(&b, " (");
  x->p++;
  bool ok = expect_op(x, ")") && at_end_colon(x) && push(x, F_BLOCK, "}");
  if (ok) emit(x, at->line, b.data), top(x)->head = true;
  sb_free(&b);
  return ok;
}

/* if c: / elif c: / else: */
static bool if_stmt(Tx *x, Frame *f, bool after_if) {
  const PTok *t = cur(x);
  bool is_if = tok_is(x, t, K_NAME, "if"), is_else = tok_is(x, t, K_NAME, "else");
  if (!is_if && !after_if)
    return err_at(x, t->off, t->len, "`%.*s` without an `if`", (int)t->len, x->src + t->off);
  if (is_if && !block_body(x, f, t->line)) return false;
  x->p++;
  if (is_else) return at_end_colon(x) && (emit(x, t->line, "else {"), push(x, F_ELSE, "}"));
  StrBuf b = {0};
  sb_puts(&b, is_if ? "if (" : "else if (");
  bool ok = ex(x, &b) && at_end_colon(x);
  if (ok) emit(x, t->line, b.data), emit(x, t->line, ") {");
  sb_free(&b);
  return ok && push(x, F_IF, "}");
}

/* T.xxx(...) as a statement: annotations dropped, T.where kept. */
static bool t_stmt(Tx *x, Frame *f) {
  char fn[64];
  const PTok *at;
  if (!dotted(x, fn, sizeof fn, &at)) return false;
  static const char *const dropped[] = {"T.func_attr",  "T.reads",    "T.writes",
                                        "T.block_attr", "T.evaluate", NULL};
  for (int i = 0; dropped[i]; i++)
    if (!strcmp(fn, dropped[i])) return true;
  if (strcmp(fn, "T.where"))
    return err_at(x, at->off, (uint32_t)strlen(fn), "unknown TVMScript statement `%s`", fn);
  if (f->kind != F_BLOCK || f->had_body)
    return err_at(x, at->off, at->len, "`T.where` belongs in a block, before its body");
  if (!expect_op(x, "(")) return false;
  f->pred_from = x->p;
  skip_arg(x);
  f->pred_to = x->p;
  StrBuf b = {0};
  bool ok = pred_text(x, f, &b); /* reports its errors here */
  sb_free(&b);
  return ok && expect_op(x, ")");
}

static bool prim_stmt(Tx *x, Frame *f, bool after_if) {
  const PTok *t = cur(x);
  if (tok_is(x, t, K_NAME, "for")) return for_stmt(x, f);
  if (tok_is(x, t, K_NAME, "if") || tok_is(x, t, K_NAME, "elif") || tok_is(x, t, K_NAME, "else"))
    return if_stmt(x, f, after_if);
  if (tok_is(x, t, K_NAME, "pass")) return true;
  if (tok_is(x, t, K_NAME, "with")) {
    char fn[64];
    const PTok *at;
    x->p++;
    return dotted(x, fn, sizeof fn, &at) && with_block(x, f, fn, at);
  }
  int eq = assign_at(x);
  if (eq > x->p && t->k == K_NAME) return assign(x, f, eq);
  if (tok_is(x, t, K_NAME, "T") && x->p + 1 < x->e && tok_is(x, &x->t[x->p + 1], K_OP, "."))
    return t_stmt(x, f);
  return err_at(x, t->off, t->len,
                "outside the TVMScript subset: expected a loop, a block, a "
                "store `Y[i] = e` or `T.alloc_buffer`");
}

/* ───────────────────────── Relax statements ───────────────────────── */

/* The names of the R.output(...) in the body of the dataflow block opened
 * by line li, as "%a" or "(%a, %b)" into out; their count. */
static int dataflow_outputs(Tx *x, int li, PtrVec *names) {
  uint32_t ind = x->lines[li].indent;
  for (int i = li + 1; i < x->nlines && x->lines[i].indent > ind; i++) {
    const PLine *l = &x->lines[i];
    if (l->to - l->from < 4 || !tok_is(x, &x->t[l->from], K_NAME, "R") ||
        !tok_is(x, &x->t[l->from + 2], K_NAME, "output"))
      continue;
    for (int k = l->from + 4; k < l->to; k++)
      if (x->t[k].k == K_NAME) vec_push(names, tok_str(x, &x->t[k]));
    return (int)names->len;
  }
  return 0;
}

/* with R.dataflow():  →  let %out = dataflow {   (closed by `};`, and
 * with several outputs, `let %a = %df.0; ...` after it) */
static bool dataflow(Tx *x, int li, const PTok *at) {
  PtrVec names = {0};
  int n = dataflow_outputs(x, li, &names);
  if (!n) return err_at(x, at->off, at->len, "a dataflow block needs `R.output(...)` at its end");
  StrBuf open = {0}, close = {0};
  if (n == 1) {
    sb_printf(&open, "let %%%s = dataflow {", (char *)names.items[0]);
  } else {
    sb_printf(&open, "let %%df%u = dataflow {", at->line);
    for (int i = 0; i < n; i++)
      sb_printf(&close, " let %%%s = %%df%u.%d;", (char *)names.items[i], at->line, i);
  }
  bool ok = expect_op(x, "(") && expect_op(x, ")") && at_end_colon(x);
  char *c = NULL;
  if (ok) {
    emit(x, at->line, open.data);
    StrBuf full = {0};
    sb_printf(&full, "};%s", close.data ? close.data : "");
    c = sb_take(&full);
  }
  ok = ok && push(x, F_DATAFLOW, c);
  for (size_t i = 0; i < names.len; i++) free(names.items[i]);
  vec_free(&names), sb_free(&open), sb_free(&close), free(c);
  return ok;
}

/* R.output(a, b) → the dataflow block's value: %a or (%a, %b) */
static bool output(Tx *x, Frame *f, const PTok *at) {
  if (f->kind != F_DATAFLOW)
    return err_at(x, at->off, at->len, "`R.output` belongs in `with R.dataflow()`");
  int n = 0;
  StrBuf b = {0};
  bool ok = args(x, &b, &n) && (!cur(x) || err_here(x, "expected the end of the line"));
  if (ok && n == 1) b.data[b.len - 1] = 0; /* %a, not (%a) */
  if (ok) emit(x, at->line, n == 1 ? b.data + 1 : b.data);
  sb_free(&b);
  return ok;
}

/* lv = e, lv: R.Tensor(...) = e, return e, R.output(...), with R.dataflow() */
/* lv = e or lv: R.Tensor(...) = e  →  let %lv[: Tensor[...]] = e;  (cls = M is dropped) */
static bool relax_let(Tx *x, int eq) {
  const PTok *t = cur(x);
  if (eq >= x->e || t->k != K_NAME || x->t[eq].len != 1)
    return err_at(x, t->off, t->len,
                  "outside the TVMScript subset: expected `name = e`, `with R.dataflow():`, "
                  "`R.output(...)` or `return e`");
  if (tok_is(x, t, K_NAME, "cls") && eq == x->p + 1) return true;
  StrBuf b = {0};
  sb_printf(&b, "let %%%.*s", (int)t->len, x->src + t->off);
  x->p++;
  bool ok = true;
  if (accept_op(x, ":")) sb_puts(&b, ": "), ok = tensor_type(x, &b);
  if (ok && x->p != eq) ok = err_here(x, "expected `=`");
  x->p = eq + 1;
  sb_puts(&b, " = ");
  ok = ok && emit_expr_rest(x, t->line, b.data, ";");
  sb_free(&b);
  return ok;
}

/* A statement of a Relax function: a binding, `with R.dataflow():`,
 * R.output(...), R.func_attr (dropped) or `return e`. */
static bool relax_stmt(Tx *x, Frame *f, int li) {
  const PTok *t = cur(x), *at;
  char fn[64];
  if (tok_is(x, t, K_NAME, "return")) return x->p++, emit_expr_rest(x, t->line, "", "");
  int eq = assign_at(x);
  if (eq >= 0) return relax_let(x, eq);
  bool with = tok_is(x, t, K_NAME, "with");
  if (!with && !tok_is(x, t, K_NAME, "R")) return relax_let(x, x->e);
  x->p += with;
  if (!dotted(x, fn, sizeof fn, &at)) return false;
  if (with && !strcmp(fn, "R.dataflow")) return dataflow(x, li, at);
  if (!with && !strcmp(fn, "R.output")) return output(x, f, at);
  if (!with && !strcmp(fn, "R.func_attr")) return true;
  return err_at(x, at->off, (uint32_t)strlen(fn), "unknown %s`%s` in a Relax function",
                with ? "`with` " : "statement ", fn);
}

/* ───────────────────────── the driver ───────────────────────── */

static bool statement(Tx *x, int li) {
  const PLine *l = &x->lines[li];
  if (!line_indent(x, l)) return false;
  x->p = l->from, x->e = l->to, x->li = li;
  bool after_if = x->closed_if;
  x->closed_if = false;
  Frame *f = top(x);
  if (x->decorator && !tok_is(x, cur(x), K_NAME, "def") && !tok_is(x, cur(x), K_NAME, "class") &&
      !tok_is(x, cur(x), K_OP, "@"))
    return err_at(x, cur(x)->off, cur(x)->len, "a decorator must be followed by a definition");
  if (f->kind == F_MODULE || f->kind == F_CLASS) return module_stmt(x, f);
  return x->relax ? relax_stmt(x, f, li) : prim_stmt(x, f, after_if);
}

static bool translate(Tx *x) {
  x->fr[0] = (Frame){.kind = F_MODULE, .close = strdup(""), .pred_from = -1};
  x->depth = 1, x->out_line = 1;
  if (!x->fr[0].close) rly_oom();
  bool ok = tokenize(x);
  for (int i = 0; ok && i < x->nlines; i++) {
    ok = statement(x, i);
    x->last_line = x->t[x->lines[i].to - 1].line;
  }
  if (ok && (x->expect_body || x->decorator)) {
    x->at_end = true;
    ok = err_at(x, (uint32_t)x->len, 1, "expected %s at the end of the input",
                x->expect_body ? "an indented block" : "a definition after the decorator");
  }
  while (x->depth > 1) ok ? pop(x) : (free(top(x)->close), (void)x->depth--);
  free(x->fr[0].close);
  return ok;
}

char *tvms_translate(DiagCtx *d, uint32_t file, size_t *out_len, bool *at_end) {
  const SourceFile *sf = diag_source(d, file);
  Tx x = {.d = d, .file = file, .src = sf->text, .len = sf->len};
  bool ok = translate(&x);
  uint32_t lines = 1;
  for (size_t i = 0; i < x.len; i++) lines += x.src[i] == '\n';
  emit(&x, lines, "");
  clear_sizevars(&x);
  free(x.t), free(x.lines);
  *at_end = x.at_end;
  *out_len = x.out.len;
  if (!ok) return sb_free(&x.out), NULL;
  if (!x.out.data) sb_putc(&x.out, 0), x.out.len = 0; /* "": still a NUL-terminated text */
  return sb_take(&x.out);
}

/* ───────────────────────── detection ───────────────────────── */

static bool starts(const char *s, const char *end, const char *w) {
  size_t n = strlen(w);
  return (size_t)(end - s) >= n && memcmp(s, w, n) == 0;
}

bool tvms_detect(const char *name, const char *text, size_t len) {
  size_t n = name ? strlen(name) : 0;
  if (n > 3 && !strcmp(name + n - 3, ".py")) return true;
  const char *s = text, *end = text + len;
  while (s < end) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++;
    if (s < end && *s == '#') {
      while (s < end && *s != '\n') s++;
      continue;
    }
    static const char *const heads[] = {
        "import tvm",  "from tvm", "@tvm.script.ir_module", "@I.ir_module", "@T.prim_func",
        "@R.function", NULL};
    for (int i = 0; heads[i]; i++)
      if (starts(s, end, heads[i])) return true;
    return false;
  }
  return false;
}

bool tvms_complete(const char *text, size_t len) {
  return len >= 2 && text[len - 1] == '\n' && text[len - 2] == '\n';
}
