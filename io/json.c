/* json.c — the JSON reader (io/json.h): recursive descent over the text,
 * one function per production of RFC 8259, nodes in the caller's arena.
 * Every read is bounds-checked against the given length (the text need not
 * be NUL-terminated). */
#include "io/json.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ir/util.h"

typedef struct JReader {
  Arena *a;
  const char *s;
  size_t len, pos;
  int max_depth;
  JsonError *err;
} JReader;

static bool jfail(JReader *r, size_t off, const char *msg) {
  if (!r->err->msg) r->err->msg = msg, r->err->off = off;
  return false;
}

static int jpeek(const JReader *r) { return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1; }

static void jspace(JReader *r) {
  while (r->pos < r->len && strchr(" \t\n\r", r->s[r->pos]) && r->s[r->pos]) r->pos++;
}

static JsonVal *jnew(JReader *r, JsonKind k, size_t off) {
  JsonVal *v = ARENA_NEW(r->a, JsonVal);
  v->kind = k, v->off = off;
  return v;
}

static void put_utf8(StrBuf *b, uint32_t cp) {
  if (cp < 0x80) {
    sb_putc(b, (char)cp);
  } else if (cp < 0x800) {
    sb_putc(b, (char)(0xc0 | cp >> 6)), sb_putc(b, (char)(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    sb_putc(b, (char)(0xe0 | cp >> 12)), sb_putc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
    sb_putc(b, (char)(0x80 | (cp & 0x3f)));
  } else {
    sb_putc(b, (char)(0xf0 | cp >> 18)), sb_putc(b, (char)(0x80 | (cp >> 12 & 0x3f)));
    sb_putc(b, (char)(0x80 | (cp >> 6 & 0x3f))), sb_putc(b, (char)(0x80 | (cp & 0x3f)));
  }
}

/* HEX HEX HEX HEX */
static bool jhex4(JReader *r, uint32_t *v) {
  if (r->len - r->pos < 4) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) {
    int c = (unsigned char)r->s[r->pos++];
    int d = isdigit(c) ? c - '0' : isxdigit(c) ? (c | 0x20) - 'a' + 10 : -1;
    if (d < 0) return false;
    *v = *v << 4 | (uint32_t)d;
  }
  return true;
}

/* 'u' HEX{4}, a high surrogate followed by '\u' and a low one */
static bool junicode(JReader *r, uint32_t *cp) {
  if (!jhex4(r, cp)) return false;
  if (*cp < 0xd800 || *cp >= 0xe000) return true;
  uint32_t lo;
  if (*cp >= 0xdc00 || r->len - r->pos < 6 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
    return false;
  r->pos += 2;
  if (!jhex4(r, &lo) || lo < 0xdc00 || lo >= 0xe000) return false;
  *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
  return true;
}

/* escape := '\' ( '"' | '\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u' HEX{4} ) */
static bool jescape(JReader *r, StrBuf *b) {
  static const char plain[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  size_t at = r->pos++;
  int e = jpeek(r);
  r->pos++;
  const char *k = e > 0 ? strchr(plain, e) : NULL;
  if (k) return sb_putc(b, to[k - plain]), true;
  uint32_t cp;
  if (e != 'u' || !junicode(r, &cp)) return jfail(r, at, "bad escape in a JSON string");
  put_utf8(b, cp);
  return true;
}

/* string := '"' ( CHAR | escape )* '"'   (no raw control characters) */
static bool jstring(JReader *r, const char **out, size_t *len) {
  size_t start = r->pos++;
  StrBuf b = {0};
  int c;
  while ((c = jpeek(r)) >= 0 && c != '"') {
    if (c < 0x20) return sb_free(&b), jfail(r, r->pos, "control character in a JSON string");
    if (c == '\\' && !jescape(r, &b)) return sb_free(&b), false;
    if (c != '\\') sb_putc(&b, (char)c), r->pos++;
  }
  if (c < 0) return sb_free(&b), jfail(r, start, "unterminated JSON string");
  r->pos++;
  *len = b.len;
  *out = arena_strndup(r->a, b.data, b.len);
  sb_free(&b);
  return true;
}

static JsonVal *jvalue(JReader *r, int depth);

/* Items of an array or members of an object up to `close`, comma separated
 * (no trailing comma); an object's keys go to keys. */
static bool jitems(JReader *r, int depth, char close, PtrVec *keys, PtrVec *vals) {
  jspace(r);
  if (jpeek(r) == close) return r->pos++, true;
  for (;;) {
    jspace(r);
    if (keys) {
      const char *k;
      size_t n;
      if (jpeek(r) != '"') return jfail(r, r->pos, "expected a key in a JSON object");
      size_t at = r->pos;
      if (!jstring(r, &k, &n)) return false;
      if (strlen(k) != n) return jfail(r, at, "NUL character in a JSON object key");
      jspace(r);
      if (jpeek(r) != ':') return jfail(r, r->pos, "expected `:` in a JSON object");
      r->pos++;
      vec_push(keys, (void *)k);
    }
    JsonVal *x = jvalue(r, depth + 1);
    if (!x) return false;
    vec_push(vals, x);
    jspace(r);
    int c = jpeek(r);
    r->pos++;
    if (c == close) return true;
    if (c != ',')
      return jfail(
          r, r->pos - 1,
          keys ? "expected `,` or `}` in a JSON object" : "expected `,` or `]` in a JSON array");
  }
}

/* array := '[' ( value ( ',' value )* )? ']'; object := '{' ( string ':' value ( ',' … )* )? '}' */
static JsonVal *jcompound(JReader *r, int depth) {
  bool obj = jpeek(r) == '{';
  JsonVal *v = jnew(r, obj ? JSON_OBJ : JSON_ARR, r->pos++);
  PtrVec keys = {0}, vals = {0};
  if (!jitems(r, depth, obj ? '}' : ']', obj ? &keys : NULL, &vals))
    return vec_free(&keys), vec_free(&vals), NULL;
  v->n = (int)vals.len;
  v->keys = obj ? (const char **)vec_finish(&keys, r->a) : NULL;
  v->items = (JsonVal **)vec_finish(&vals, r->a);
  return v;
}

/* number := '-'? INT FRAC? EXP?   (its value by strtod, its text kept) */
static JsonVal *jnumber(JReader *r) {
  size_t start = r->pos;
  if (jpeek(r) == '-') r->pos++;
  size_t digits = r->pos;
  while (jpeek(r) >= '0' && jpeek(r) <= '9') r->pos++;
  bool ok = r->pos > digits && !(r->s[digits] == '0' && r->pos - digits > 1);
  if (ok && jpeek(r) == '.') {
    size_t f = ++r->pos;
    while (jpeek(r) >= '0' && jpeek(r) <= '9') r->pos++;
    ok = r->pos > f;
  }
  if (ok && (jpeek(r) == 'e' || jpeek(r) == 'E')) {
    r->pos++;
    if (jpeek(r) == '+' || jpeek(r) == '-') r->pos++;
    size_t e = r->pos;
    while (jpeek(r) >= '0' && jpeek(r) <= '9') r->pos++;
    ok = r->pos > e;
  }
  if (!ok) return jfail(r, start, "bad JSON number"), NULL;
  JsonVal *v = jnew(r, JSON_NUM, start);
  v->len = r->pos - start;
  v->text = arena_strndup(r->a, r->s + start, v->len);
  v->num = strtod(v->text, NULL);
  return v;
}

/* word := 'null' | 'true' | 'false' */
static JsonVal *jword(JReader *r) {
  static const char *const words[] = {"null", "true", "false"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if (r->len - r->pos >= n && memcmp(r->s + r->pos, words[i], n) == 0) {
      JsonVal *v = jnew(r, i == 0 ? JSON_NULL : JSON_BOOL, r->pos);
      v->b = i == 1;
      r->pos += n;
      return v;
    }
  }
  jfail(r, r->pos, "unexpected character in JSON");
  return NULL;
}

/* value := object | array | string | number | word */
static JsonVal *jvalue(JReader *r, int depth) {
  jspace(r);
  if (depth > r->max_depth) return jfail(r, r->pos, "JSON nested too deeply"), NULL;
  int c = jpeek(r);
  if (c < 0) return jfail(r, r->pos, "unexpected end of the JSON text"), NULL;
  if (c == '{' || c == '[') return jcompound(r, depth);
  if (c == '-' || isdigit(c)) return jnumber(r);
  if (c != '"') return jword(r);
  JsonVal *v = jnew(r, JSON_STR, r->pos);
  return jstring(r, &v->text, &v->len) ? v : NULL;
}

JsonVal *json_read(Arena *a, const char *text, size_t len, size_t *pos, int max_depth,
                   JsonError *err) {
  JReader r = {a, text, len, *pos, max_depth, err};
  err->msg = NULL;
  JsonVal *v = jvalue(&r, 0);
  *pos = r.pos;
  return v;
}

JsonVal *json_parse(Arena *a, const char *text, size_t len, int max_depth, JsonError *err) {
  size_t pos = 0;
  JsonVal *v = json_read(a, text, len, &pos, max_depth, err);
  while (v && pos < len && strchr(" \t\n\r", text[pos]) && text[pos]) pos++;
  if (v && pos < len) {
    err->msg = "unexpected text after the JSON value", err->off = pos;
    return NULL;
  }
  return v;
}

const JsonVal *json_get(const JsonVal *v, const char *key) {
  if (!v || v->kind != JSON_OBJ) return NULL;
  for (int i = 0; i < v->n; i++)
    if (strcmp(v->keys[i], key) == 0) return v->items[i];
  return NULL;
}

bool json_uint(const JsonVal *v, uint64_t *out) {
  if (!v || v->kind != JSON_NUM || v->text[0] == '-') return false;
  uint64_t x = 0;
  for (size_t i = 0; i < v->len; i++) {
    if (v->text[i] < '0' || v->text[i] > '9') return false;
    if (__builtin_mul_overflow(x, 10, &x) ||
        __builtin_add_overflow(x, (uint64_t)(v->text[i] - '0'), &x))
      return false;
  }
  *out = x;
  return true;
}
