/* test_parser.c — unit tests of the lexer, parser, diagnostics and the
 * metadata reader: token kinds and exact spans, number edge cases, error
 * messages with exact line:col and caret, the `incomplete` flag, script
 * items, TIR, a hand-built base64 NDArray, and 100k-binding chains. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/json.h"
#include "ir/tir.h"
#include "parser/lexer.h"
#include "parser/metadata.h"
#include "parser/parser.h"
#include "tests/unit/check.h"

static DiagCtx D;
static Arena A;
static Module *M;

/* Modules have no destructor; their name tables are malloc'd. */
static void free_module_tables(Module *m) {
  strmap_free(&m->globals);
  strmap_free(&m->types);
  strmap_free(&m->ctors);
}

static void reset(void) {
  free_module_tables(M);
  diag_free(&D);
  diag_init(&D);
  arena_free(&A);
  arena_init(&A);
  M = module_new(&A);
}

static uint32_t src(const char *text) { return diag_add_source(&D, "t.rly", text, strlen(text)); }

/* All diagnostics rendered without colour; clears them. */
static char *rendered(void) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  diag_render(&D, f, 0, false);
  fclose(f);
  diag_clear(&D);
  return buf;
}

static bool contains(const char *hay, const char *needle) {
  return hay && strstr(hay, needle) != NULL;
}

#define CHECK_HAS(hay, needle)                                                                    \
  do {                                                                                            \
    const char *h_ = (hay);                                                                       \
    if (contains(h_, needle))                                                                     \
      check_passed++;                                                                             \
    else {                                                                                        \
      check_failed++;                                                                             \
      fprintf(stderr, "%s:%d: expected to find:\n%s\nin:\n%s\n", __FILE__, __LINE__, needle, h_); \
    }                                                                                             \
  } while (0)

/* ── a small S-expression dump of expressions, for structure checks ── */

static void dump(StrBuf *b, const Expr *e);

static void dump_args(StrBuf *b, int n, Expr *const *args) {
  for (int i = 0; i < n; i++) sb_putc(b, ' '), dump(b, args[i]);
}

static void dump_const(StrBuf *b, const Tensor *t) {
  if (t->ndim)
    sb_printf(b, "<%s tensor %lld>", dtype_name(t->dtype), (long long)t->numel);
  else if (dtype_is_float(t->dtype))
    sb_printf(b, "%g:%s", tensor_get_f64(t, 0), dtype_name(t->dtype));
  else if (dtype_class(t->dtype) == 'u')
    sb_printf(b, "%llu:%s", (unsigned long long)tensor_get_u64(t, 0), dtype_name(t->dtype));
  else
    sb_printf(b, "%lld:%s", (long long)tensor_get_i64(t, 0), dtype_name(t->dtype));
}

/* Writes e as an s-expression (`(add 1:int32 %x)`) so tests can check the
 * tree's shape without depending on the printer. */
static void dump(StrBuf *b, const Expr *e) {
  switch (e->kind) {
    case EX_CONST:
      dump_const(b, e->u.konst.value);
      break;
    case EX_VAR:
      sb_printf(b, "%%%s", e->u.var->name);
      break;
    case EX_GLOBAL:
      sb_printf(b, "@%s", e->u.global.name);
      break;
    case EX_OP:
      sb_puts(b, e->u.op.name);
      break;
    case EX_CTOR:
      sb_puts(b, e->u.ctor.adt->ctors[e->u.ctor.index].name);
      break;
    case EX_CALL:
      sb_putc(b, '('), dump(b, e->u.call.fn), dump_args(b, e->u.call.nargs, e->u.call.args);
      if (e->u.call.attrs)
        for (int i = 0; i < e->u.call.attrs->n; i++) sb_printf(b, " %s=", e->u.call.attrs->keys[i]);
      sb_putc(b, ')');
      break;
    case EX_TUPLE:
      sb_puts(b, "(tuple"), dump_args(b, e->u.tuple.n, e->u.tuple.fields), sb_putc(b, ')');
      break;
    case EX_PROJ:
      sb_puts(b, "(."), sb_printf(b, "%d ", e->u.proj.index), dump(b, e->u.proj.tuple),
          sb_putc(b, ')');
      break;
    case EX_LET:
      sb_printf(b, "(let %s ", var_named(e->u.let.var) ? e->u.let.var->name : "_");
      dump(b, e->u.let.value), sb_putc(b, ' '), dump(b, e->u.let.body), sb_putc(b, ')');
      break;
    case EX_REF_NEW:
      sb_puts(b, "(ref "), dump(b, e->u.ref_new.init), sb_putc(b, ')');
      break;
    case EX_REF_READ:
      sb_puts(b, "(read "), dump(b, e->u.ref_read.ref), sb_putc(b, ')');
      break;
    case EX_REF_WRITE:
      sb_puts(b, "(write "), dump(b, e->u.ref_write.ref), sb_putc(b, ' '),
          dump(b, e->u.ref_write.value), sb_putc(b, ')');
      break;
    case EX_IF:
      sb_puts(b, "(if "), dump(b, e->u.if_.cond), sb_putc(b, ' '), dump(b, e->u.if_.then_);
      sb_putc(b, ' '), dump(b, e->u.if_.else_), sb_putc(b, ')');
      break;
    default:
      sb_printf(b, "<%s>", expr_kind_name(e->kind));
      break;
  }
}

/* Parses text as one expression and returns its dump (or "ERROR"). */
static char *sexpr(const char *text) {
  Expr *e = parse_expr(M, &D, src(text), NULL);
  StrBuf b = {0};
  if (e)
    dump(&b, e);
  else
    sb_puts(&b, "ERROR");
  return sb_take(&b);
}

#define CHECK_SEXPR(text, want) \
  do {                          \
    char *got_ = sexpr(text);   \
    CHECK_STREQ(got_, want);    \
    free(got_);                 \
    free(rendered());           \
  } while (0)

/* ── lexer ── */

static int lex_kinds(const char *text, TokKind *out, int max) {
  Lexer lx;
  lex_init(&lx, &D, src(text), false);
  int n = 0;
  for (;;) {
    Token t = lex_next(&lx);
    if (n < max) out[n++] = t.kind;
    if (t.kind == T_EOF) return n;
  }
}

static Token lex_one(const char *text) {
  Lexer lx;
  lex_init(&lx, &D, src(text), false);
  return lex_next(&lx);
}

/* Token kinds at tricky places: `.0.1`, `-` before digits, dotted and frontend names. */
static void test_lexer_kinds(void) {
  TokKind k[32];
  int n = lex_kinds("%t.0.1 %x-1 f(-1) axis=-1 nn.dense a/b match? %7 @main", k, 32);
  TokKind want[] = {T_LOCAL, T_DOT,    T_INT,   T_DOT,    T_INT,   T_LOCAL,
                    T_MINUS, T_INT,    T_IDENT, T_LPAREN, T_INT,   T_RPAREN,
                    T_IDENT, T_EQ,     T_INT,   T_IDENT,  T_IDENT, T_KW_MATCH_PARTIAL,
                    T_GRAPH, T_GLOBAL, T_EOF};
  CHECK(n == (int)(sizeof want / sizeof want[0]));
  for (int i = 0; i < n && i < (int)(sizeof want / sizeof want[0]); i++) CHECK(k[i] == want[i]);
  n = lex_kinds(":= -> => == != <= >= && || ^ ? ! % /* a /* nested */ comment */ // line\n}", k,
                32);
  TokKind want2[] = {T_ASSIGN, T_ARROW, T_FATARROW, T_EQEQ, T_NE,      T_LE,     T_GE, T_ANDAND,
                     T_OROR,   T_CARET, T_QUESTION, T_BANG, T_PERCENT, T_RBRACE, T_EOF};
  CHECK(n == (int)(sizeof want2 / sizeof want2[0]));
  for (int i = 0; i < n && i < (int)(sizeof want2 / sizeof want2[0]); i++) CHECK(k[i] == want2[i]);
  CHECK(D.nerrors == 0);
  /* frontend names: one local each; a dot before a digit stays a projection */
  n = lex_kinds("%fc1.weight %input:0 %x: %t.0 %a/b", k, 32);
  TokKind want3[] = {T_LOCAL, T_LOCAL, T_LOCAL, T_COLON, T_LOCAL, T_DOT, T_INT, T_LOCAL, T_EOF};
  CHECK(n == (int)(sizeof want3 / sizeof want3[0]));
  for (int i = 0; i < n && i < (int)(sizeof want3 / sizeof want3[0]); i++) CHECK(k[i] == want3[i]);
  /* `1+1` is three tokens for us, not one bad number. */
  n = lex_kinds("\xEF\xBB\xBF@main", k, 32); /* a byte order mark is skipped */
  CHECK(n == 2 && k[0] == T_GLOBAL);
  n = lex_kinds("1+1", k, 32);
  CHECK(n == 4 && k[0] == T_INT && k[1] == T_PLUS && k[2] == T_INT);
}

static void test_lexer_spans(void) {
  Lexer lx;
  lex_init(&lx, &D, src("  %abc\n\t@g  meta[relay.Constant][12] \"a\\\"b\""), false);
  Token t = lex_next(&lx);
  CHECK(t.kind == T_LOCAL && t.off == 2 && t.len == 4 && !t.col1);
  t = lex_next(&lx);
  CHECK(t.kind == T_GLOBAL && t.off == 8 && t.len == 2 && t.nl_before);
  t = lex_next(&lx);
  CHECK(t.kind == T_META && t.off == 12 && t.len == 24 && t.v.i == 12);
  t = lex_next(&lx);
  CHECK(t.kind == T_STRING && t.len == 6);
  CHECK_STREQ(lex_string_value(&A, lx.src, &t), "a\"b");
  Token v = lex_one("#[version = \"0.0.5\"]");
  CHECK(v.kind == T_VERSION && v.len == 20);
  CHECK(lex_one("#[metadata]\n{garbage").kind == T_METADATA);
}

/* Numeric literals: suffixes, widths, range edges, float rounding, and each error message. */
static void test_lexer_numbers(void) {
  Token t = lex_one("1");
  CHECK(t.kind == T_INT && t.dtype == DT_INT32 && t.v.i == 1);
  t = lex_one("2147483648");
  CHECK(t.dtype == DT_INT64 && t.v.i == 2147483648LL);
  t = lex_one("-2147483648i32");
  CHECK(t.dtype == DT_INT32 && t.v.i == INT32_MIN && !t.bad);
  t = lex_one("18446744073709551615u64");
  CHECK(t.dtype == DT_UINT64 && (uint64_t)t.v.i == UINT64_MAX && !t.bad);
  t = lex_one("255u8");
  CHECK(t.dtype == DT_UINT8 && t.v.i == 255);
  t = lex_one("7i8");
  CHECK(t.dtype == DT_INT8 && t.v.i == 7);
  t = lex_one("3i");
  CHECK(t.dtype == DT_INT32);
  t = lex_one("0.1f");
  CHECK(t.kind == T_FLOAT && t.dtype == DT_FLOAT32 && t.v.f == (double)0.1f);
  t = lex_one("0.1f64");
  CHECK(t.dtype == DT_FLOAT64 && t.v.f == 0.1);
  t = lex_one("1.5f16");
  CHECK(t.dtype == DT_FLOAT16 && t.v.f == 1.5);
  t = lex_one("1e-3f");
  CHECK(t.dtype == DT_FLOAT32 && t.v.f == (double)1e-3f);
  t = lex_one("-inff");
  CHECK(t.kind == T_FLOAT && isinf(t.v.f) && t.v.f < 0);
  t = lex_one("nanf");
  CHECK(t.kind == T_FLOAT && isnan(t.v.f));
  /* every float width, as TVM prints them; glibc writes a negative NaN `-nan` */
  t = lex_one("inff16");
  CHECK(t.kind == T_FLOAT && t.dtype == DT_FLOAT16 && isinf(t.v.f) && t.v.f > 0 && !t.bad);
  t = lex_one("-inff64");
  CHECK(t.kind == T_FLOAT && t.dtype == DT_FLOAT64 && isinf(t.v.f) && t.v.f < 0 && !t.bad);
  t = lex_one("nanf32");
  CHECK(t.kind == T_FLOAT && t.dtype == DT_FLOAT32 && isnan(t.v.f) && !t.bad);
  t = lex_one("-nanf16");
  CHECK(t.kind == T_FLOAT && t.dtype == DT_FLOAT16 && isnan(t.v.f) && !t.bad);
  t = lex_one("inffinity");
  CHECK(t.kind == T_IDENT);
  /* in range up to the largest finite value as printed, as numpy writes them */
  t = lex_one("3.4028235e+38f");
  CHECK(!t.bad && t.v.f == FLT_MAX);
  t = lex_one("-65500.0f16");
  CHECK(!t.bad && t.v.f == -65504);
  t = lex_one("65503.99f16");
  CHECK(!t.bad && t.v.f == 65504);
  t = lex_one("6e-08f16");
  CHECK(!t.bad && t.v.f == 0x1p-24);
  t = lex_one("1.00048828125000000001f16"); /* a double lands on the tie 1 + 2^-11 */
  CHECK(!t.bad && t.v.f == 1 + 0x1p-10);
  t = lex_one("16777217f");
  CHECK(!t.bad && t.v.f == 16777216);
  CHECK(D.nerrors == 0);
  struct {
    const char *text, *msg;
  } bad[] = {
      {"2147483648i32", "integer literal `2147483648i32` is out of range for int32"},
      {"32768i16", "out of range for int16"},
      {"256u8", "out of range for uint8"},
      {"-1u8", "out of range for uint8"},
      {"18446744073709551616u64", "out of range for uint64"},
      {"9223372036854775808", "out of range for int64"},
      {"65520f16", "float literal `65520f16` is out of range for float16"},
      {"65505f16",
       "float literal `65505f16` is out of range for float16 (largest finite value 65504)"},
      {"-3.5e+38f", "float literal `-3.5e+38f` is out of range for float32"},
      {"1.8e308f64", "out of range for float64"},
      {"3.40283e+38f32", "out of range for float32"},
      {"1.5", "a float literal needs a suffix"},
      {"1e3", "hint: write 1e3f"},
      {"1f8", "invalid float width"},
      {"inff8", "invalid float width `f8` (use f16, f32 or f64)"},
      {"-nanf128", "invalid float width `f128`"},
      {"1i7", "invalid integer suffix"},
      {"12abc", "invalid numeric literal `12abc`"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Token b = lex_one(bad[i].text);
    CHECK(b.bad);
    char *r = rendered();
    CHECK_HAS(r, bad[i].msg);
    free(r);
  }
}

/* ── diagnostics ── */

/* Diagnostics: file:line:col, source line, tab-aware underline, error limit, colour. */
static void test_diag_render(void) {
  uint32_t f = src("def @f() {\n\tlet %x = 1;\n  %y\n}\n");
  Span sp = diag_span(&D, f, 16, 2); /* `%x` after a tab */
  diag_error(&D, sp, "bad %s", "thing");
  diag_hint(&D, "try %d", 42);
  uint32_t line, col;
  diag_line_col(&D, sp, &line, &col);
  CHECK(line == 2 && col == 6);
  char *r = rendered();
  CHECK_STREQ(r, "t.rly:2:6: error: bad thing\n  \tlet %x = 1;\n  \t    ^~\nhint: try 42\n");
  free(r);
  Span multi = diag_span(&D, f, 4, 20); /* from `@f` across lines: underline to end of line 1 */
  diag_warning(&D, multi, "w");
  r = rendered();
  CHECK_STREQ(r, "t.rly:1:5: warning: w\n  def @f() {\n      ^~~~~~\n");
  free(r);
  Span empty = diag_span(&D, f, 10, 0);
  diag_note(&D, empty, "n");
  r = rendered();
  CHECK_HAS(r, "t.rly:1:11: note: n\n  def @f() {\n            ^\n");
  free(r);
  D.max_errors = 3;
  for (int i = 0; i < 10; i++) diag_error(&D, sp, "e%d", i);
  CHECK(diag_too_many(&D));
  r = rendered();
  CHECK(contains(r, "e2") && !contains(r, "e3") && contains(r, "too many errors"));
  free(r);
  D.max_errors = 0;
  diag_error(&D, sp, "coloured");
  char *buf = NULL;
  size_t n = 0;
  FILE *mf = open_memstream(&buf, &n);
  diag_render(&D, mf, 0, true);
  fclose(mf);
  CHECK_HAS(buf, "\033[1;31merror:");
  free(buf);
  diag_clear(&D);
}

/* Parses a module and returns the rendered diagnostics. */
static char *module_errors(const char *text) {
  parse_module(M, &D, src(text));
  return rendered();
}

/* Each common mistake gives its message at the right place, with a suggestion where one exists. */
static void test_errors(void) {
  char *r = module_errors("def @f(%x) {\n  let %y = %z;\n  %y\n}\n");
  CHECK_HAS(r,
            "t.rly:2:12: error: unbound variable `%z`\n    let %y = %z;\n             ^~\nhint: "
            "did you mean `%x`?");
  free(r);
  r = module_errors("def @f(%x) {\n  desne(%x, %x)\n}\n");
  CHECK_HAS(r, "t.rly:2:3: error: unknown operator `desne`");
  free(r);
  r = module_errors("def @f() {\n  @foo(1)\n}\ndef @fob() { 1 }\n");
  CHECK_HAS(
      r,
      "t.rly:2:3: error: unknown global `@foo`\n    @foo(1)\n    ^~~~\nhint: did you mean `@fob`?");
  free(r);
  r = module_errors("def @f(%x: Tensor[(1), floa32]) { %x }\n");
  CHECK_HAS(r, "t.rly:1:24: error: unknown dtype `floa32`");
  CHECK_HAS(r, "did you mean `float32`?");
  free(r);
  r = module_errors("def @f(%x) {\n  add(%x, %x\n}\n");
  CHECK_HAS(r, "t.rly:3:1: error: expected `,` or `)`, found `}`");
  free(r);
  r = module_errors("type T { A, B }\ntype U { A }\n");
  CHECK_HAS(r, "t.rly:2:10: error: constructor `A` is already defined by type `T`");
  free(r);
  r = module_errors("def @f() { Foo(1) }\n");
  CHECK_HAS(r, "unknown operator `Foo`");
  free(r);
  r = module_errors("def @f(%x: Lst[int32]) { %x }\n");
  CHECK_HAS(r, "t.rly:1:12: error: unknown type `Lst`");
  free(r);
  r = module_errors("def @f(%x, %x) { %x }\n");
  CHECK_HAS(r, "duplicate parameter `%x`");
  free(r);
  r = module_errors("def @f() { %x = 1; %x }\n");
  CHECK_HAS(r, "a variable is bound with `let`");
  free(r);
  r = module_errors("def @f() { if (True) { 1 } }\n");
  CHECK_HAS(r, "expected `else`");
  free(r);
  r = module_errors("1 + 2\n");
  CHECK_HAS(r, "t.rly:1:1: error: expected a definition");
  free(r);
  r = module_errors("def @f() { [[1f, 2f], [3f]] }\n");
  CHECK_HAS(r, "ragged tensor literal");
  free(r);
  r = module_errors("def @f() { [1f, 2] }\n");
  CHECK_HAS(r, "tensor literal mixes float32 and int32 elements");
  free(r);
  r = module_errors("def @f() { \"s\" }\n");
  CHECK_HAS(r, "a string is only allowed as an attribute value");
  free(r);
  r = module_errors("def @f() { meta[relay.Constant][0] }\n");
  CHECK_HAS(r, "refers to a metadata section, and there is none");
  free(r);
  r = module_errors("def @f() { 1 } # comment\n");
  CHECK_HAS(r, "unknown `#` directive");
  free(r);
}

/* Several errors are reported, one per broken definition or binding. */
static void test_recovery(void) {
  char *r = module_errors(
      "def @a() {\n  let %x = (1, ;\n  let %y = %x;\n  %q\n}\n"
      "def @b() { 1 + }\n"
      "def @c() { %w }\n");
  CHECK_HAS(r, "t.rly:2:16: error: expected an expression, found `;`");
  CHECK_HAS(r, "t.rly:4:3: error: unbound variable `%q`");
  CHECK_HAS(r, "t.rly:6:16: error: expected an expression, found `}`");
  CHECK_HAS(r, "t.rly:7:12: error: unbound variable `%w`");
  CHECK(!contains(r, "`%x`")); /* %x stays bound after its broken value */
  free(r);
  /* A `;` missing at the end of a line: one error, right after the binding,
   * which still counts (no "unbound variable" below). */
  parse_module(M, &D,
               src("def @d(%x) {\n  let %y = add(%x, 1f)\n  let %z = %y;\n  %0 = %z\n"
                   "  add(%z, %0)\n}\n"));
  CHECK(D.nerrors == 2);
  r = rendered();
  CHECK_HAS(r,
            "t.rly:2:23: error: expected `;` after this binding\n    let %y = add(%x, 1f)\n"
            "                        ^\n");
  CHECK_HAS(r, "t.rly:4:10: error: expected `;` after this binding");
  CHECK(!contains(r, "unbound"));
  free(r);
  CHECK(!module_lookup(M, "a") && !module_lookup(M, "b"));
}

static bool incomplete(const char *text) {
  ParseResult pr = parse_script(M, &D, src(text), NULL);
  free(rendered());
  return !pr.ok && pr.incomplete;
}

/* An input cut short is "incomplete" (the REPL asks for more); one that is wrong is not. */
static void test_incomplete(void) {
  CHECK(incomplete("def @f(%x) {"));
  CHECK(incomplete("def @f(%x) {\n  %x"));
  CHECK(incomplete("let %x = "));
  CHECK(incomplete("let %x = 1"));
  CHECK(incomplete("add(1,"));
  CHECK(incomplete("1 +"));
  CHECK(incomplete("\"abc"));
  CHECK(incomplete("/* comment"));
  CHECK(incomplete("type T {\n  A,"));
  CHECK(incomplete("(1, 2"));
  CHECK(incomplete("def @f(%x: float32) {\n  let %y = add(%x, 1f)"));        /* `;` may come next */
  CHECK(!incomplete("def @f(%x: float32) {\n  let %y = add(%x, 1f)\n  %y")); /* it did not */
  CHECK(!incomplete("%nope + ")); /* first error: unbound variable */
  CHECK(!incomplete("def @f() { 1 } }"));
  CHECK(!incomplete("add(1, ]"));
  ParseResult pr = parse_script(M, &D, src("1 + 2"), NULL);
  CHECK(pr.ok && !pr.incomplete && pr.nitems == 1);
  free(rendered());
}

/* ── expressions ── */

/* Precedence, associativity, postfix forms, sequencing and literals build the right tree. */
static void test_precedence(void) {
  CHECK_SEXPR("1 * 1 + 1 < 1 == 1",
              "(equal (less (add (multiply 1:int32 1:int32) 1:int32) 1:int32) 1:int32)");
  CHECK_SEXPR("1 == 1 < 1 + 1 * 1",
              "(equal 1:int32 (less 1:int32 (add 1:int32 (multiply 1:int32 1:int32))))");
  CHECK_SEXPR("1 - 2 - 3", "(subtract (subtract 1:int32 2:int32) 3:int32)");
  CHECK_SEXPR("let %x = 1; %x-1", "(let x 1:int32 (subtract %x 1:int32))");
  CHECK_SEXPR("let %t = (1, (2, 3)); %t.1.0",
              "(let t (tuple 1:int32 (tuple 2:int32 3:int32)) (.0 (.1 %t)))");
  CHECK_SEXPR("let %r = ref(1); %r := %r^ + 1",
              "(let r (ref 1:int32) (write %r (add (read %r) 1:int32)))");
  CHECK_SEXPR("let %f = ref(fn (%x) { %x }); %f^(2)",
              "(let f (ref <function>) ((read %f) 2:int32))");
  CHECK_SEXPR("let %r = ref(1); ref_write(%r, ref_read(%r))",
              "(let r (ref 1:int32) (write %r (read %r)))");
  CHECK_SEXPR("1; 2; 3", "(let _ 1:int32 (let _ 2:int32 3:int32))");
  CHECK_SEXPR("%0 = 1; %1 = (%0, %0); %1.0", "(let 0 1:int32 (let 1 (tuple %0 %0) (.0 %1)))");
  CHECK_SEXPR("(1,)", "(tuple 1:int32)");
  CHECK_SEXPR("()", "(tuple)");
  CHECK_SEXPR("(1)", "1:int32");
  CHECK_SEXPR("-5i64", "-5:int64");
  CHECK_SEXPR("True", "1:bool");
  CHECK_SEXPR("[[1f, 2f], [3f, 4f]]", "<float32 tensor 4>");
  CHECK_SEXPR("[1, 3000000000]", "<int64 tensor 2>");
  CHECK_SEXPR("if (True) { 1 } else if (False) { 2 } else { 3 }",
              "(if 1:bool 1:int32 (if 0:bool 2:int32 3:int32))");
  CHECK_SEXPR("nn.dense(1f, 2f, units=3)", "(nn.dense 1:float32 2:float32 units=)");
  CHECK_SEXPR("call_tir(\"env.linear\", (1f,), shape=[1], dtype=\"float32\")",
              "(call_tir (tuple 1:float32) callee= shape= dtype=)");
  CHECK_SEXPR("let %x = 1; let %x = (%x, %x); %x", "(let x 1:int32 (let x (tuple %x %x) %x))");
}

/* let scoping (recursive only for fn values), `%x =` recovery, attrs_type_key, free_var. */
static void test_binding_rules(void) {
  /* a let's variable is visible in its own value only when that is a fn */
  Expr *e = parse_expr(M, &D, src("let %f = fn (%n: int32) { %f(%n) }; %f(1)"), NULL);
  CHECK(e && e->kind == EX_LET);
  if (e) {
    Expr *body = e->u.let.value->u.fn->body;
    CHECK(body->kind == EX_CALL && body->u.call.fn->u.var == e->u.let.var);
  }
  e = parse_expr(M, &D, src("let %x = 1; let %x = add(%x, 1); %x"), NULL);
  CHECK(e && e->u.let.body->u.let.value->u.call.args[0]->u.var == e->u.let.var);
  /* `%x = v;` is reported and read as a let: its uses are not errors too */
  CHECK(!parse_expr(M, &D, src("%x = 1f; add(%x, %x)"), NULL));
  CHECK(D.nerrors == 1);
  char *r = rendered();
  CHECK_HAS(r, "a variable is bound with `let`");
  free(r);
  /* attributes on a non-operator call (TVM's attrs_type_key) are kept */
  e = parse_expr(M, &D,
                 src("let %f = fn (%x: float32) { %x }; %f(1f, attrs_type_key=\"relay.attrs.X\")"),
                 NULL);
  CHECK(e && e->u.let.body->kind == EX_CALL && e->u.let.body->u.call.attrs &&
        e->u.let.body->u.call.attrs->n == 1 &&
        strcmp(e->u.let.body->u.call.attrs->keys[0], "attrs_type_key") == 0);
  /* free_var lines at column 1 in a script belong to the expression after them */
  ParseResult pr =
      parse_script(M, &D, src("free_var %a: float32;\nfree_var %b: float32;\nadd(%a, %b)\n"), NULL);
  CHECK(pr.ok && pr.nitems == 1 && pr.items[0].kind == ITEM_EXPR &&
        pr.items[0].expr->kind == EX_FREE_VAR);
  /* a stray character glued to a name is one error */
  CHECK(!parse_expr(M, &D, src("add($x, 1)"), NULL));
  CHECK(D.nerrors == 1);
  free(rendered());
}

/* Attribute values of every kind, in order with their dtypes; uint8 tensor literals. */
static void test_literals_and_attrs(void) {
  Expr *e =
      parse_expr(M, &D,
                 src("nn.conv2d(1f, 2f, padding=[1, -1], out_dtype=\"\", units=None, relay.x=True, "
                     "rate=0.5f, size=3i64, shape=[n, 4], alpha=-inff)"),
                 NULL);
  CHECK(e && e->kind == EX_CALL && e->u.call.attrs && e->u.call.attrs->n == 8);
  if (e && e->u.call.attrs) {
    const Attrs *a = e->u.call.attrs;
    const AttrValue *v = attrs_get(a, "padding");
    CHECK(v && v->kind == AV_LIST && v->u.list.n == 2 && v->u.list.items[1]->u.i == -1);
    CHECK(attrs_get(a, "units")->kind == AV_NONE);
    CHECK(attrs_get(a, "relay.x")->kind == AV_BOOL && attrs_get(a, "relay.x")->u.b);
    CHECK(attrs_get(a, "rate")->kind == AV_FLOAT && attrs_get(a, "rate")->u.f == 0.5);
    CHECK(attrs_get(a, "size")->dtype == DT_INT64);
    v = attrs_get(a, "shape");
    CHECK(v->u.list.items[0]->kind == AV_SYM && strcmp(v->u.list.items[0]->u.s, "n") == 0);
    CHECK(isinf(attrs_get(a, "alpha")->u.f));
    CHECK(strcmp(a->keys[0], "padding") == 0 && strcmp(a->keys[7], "alpha") == 0);
  }
  e = parse_expr(M, &D, src("[[1u8, 2u8, 3u8], [4u8, 5u8, 255u8]]"), NULL);
  CHECK(e && e->kind == EX_CONST);
  if (e) {
    Tensor *t = e->u.konst.value;
    CHECK(t->dtype == DT_UINT8 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3);
    CHECK(tensor_get_u64(t, 5) == 255);
  }
  e = parse_expr(M, &D, src("\"a\\tb\\n\" "), NULL);
  CHECK(!e);
  free(rendered());
}

/* Spans of lets (their binding, up to the `;`), variables and calls cover
 * exactly their source text. */
static void test_spans(void) {
  const char *text = "let %x = 1;\nnn.relu(%x) + add(%x, %x)";
  uint32_t f = src(text);
  Expr *e = parse_expr(M, &D, f, NULL);
  CHECK(e && e->kind == EX_LET);
  if (!e) return;
  uint32_t b = diag_source(&D, f)->base; /* offsets in spans start at the source's base */
  CHECK(b > 0 && e->span.off == b && e->span.len == strlen("let %x = 1;"));
  Var *x = e->u.let.var;
  CHECK(x->span.off == b + 4 && x->span.len == 2);
  Expr *sum = e->u.let.body;
  CHECK(sum->kind == EX_CALL && sum->span.off == b + 12 && sum->span.len == strlen(text) - 12);
  Expr *relu = sum->u.call.args[0];
  CHECK(relu->span.off == b + 12 && relu->span.len == 11);
  Expr *add = sum->u.call.args[1];
  CHECK(add->span.off == b + 26 && add->span.len == 11);
  CHECK(add->u.call.args[1]->span.off == b + 34 && add->u.call.args[1]->span.len == 2);
  CHECK(add->u.call.args[0]->u.var == x);
}

/* ── definitions, types, scripts ── */

/* ADTs, extern type, state global, a polymorphic def, every type form; redefinition. */
static void test_module(void) {
  const char *text =
      "#[version = \"0.0.5\"]\n"
      "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n"
      "extern type Opaque\n"
      "global @counter: Ref[int32] = ref(0);\n"
      "def @map[A, B](%f: fn (A) -> B, %l: List[A]) -> List[B] {\n"
      "  match (%l) {\n    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),\n    Nil => Nil,\n  }\n}\n"
      "def @g(%x: Tensor[(n, ?, 3), float32] {virtual_device=1}, Primitive=1) -> (float32, "
      "(int8,), RandState, "
      "ref(bool), _) {\n  %x\n}\n";
  CHECK(parse_module(M, &D, src(text)));
  free(rendered());
  AdtDef *list = module_adt(M, "List");
  CHECK(list && list->nctors == 2 && list->ntparams == 1 && list->ctors[0].nfields == 2);
  CHECK(module_adt(M, "Opaque") && module_adt(M, "Opaque")->is_extern);
  StateGlobal *g = module_state_global(M, "counter");
  CHECK(g && g->type->kind == TY_REF && g->init->kind == EX_REF_NEW);
  FuncDef *map = module_func(M, "map");
  CHECK(map && map->fn->ntparams == 2 && map->fn->params[0]->annot->kind == TY_FUNC);
  if (map) {
    Expr *m = map->fn->body;
    CHECK(m->kind == EX_MATCH && m->u.match.n == 2 && !m->u.match.partial);
    CHECK(m->u.match.clauses[0].pat->kind == PAT_CTOR && m->u.match.clauses[0].pat->u.ctor.n == 2);
    Expr *nil = m->u.match.clauses[1].body;
    CHECK(nil->kind == EX_CALL && nil->u.call.fn->kind == EX_CTOR && nil->u.call.nargs == 0);
    Type *fa = map->fn->params[0]->annot;
    CHECK(fa->u.func.params[0]->kind == TY_VAR && map->fn->ret->kind == TY_ADT);
  }
  FuncDef *gf = module_func(M, "g");
  CHECK(gf && gf->fn->attrs && gf->fn->attrs->n == 1 && var_device(gf->fn->params[0]));
  if (gf) {
    Type *t = gf->fn->params[0]->annot;
    CHECK(t->kind == TY_TENSOR && t->u.tensor.ndim == 3 && t->u.tensor.dims[0].kind == DIM_VAR &&
          t->u.tensor.dims[1].kind == DIM_ANY && t->u.tensor.dims[2].value == 3);
    Type *r = gf->fn->ret;
    CHECK(r->kind == TY_TUPLE && r->u.tuple.n == 5 && r->u.tuple.fields[1]->u.tuple.n == 1 &&
          r->u.tuple.fields[2]->kind == TY_RANDSTATE && r->u.tuple.fields[3]->kind == TY_REF &&
          r->u.tuple.fields[4]->kind == TY_INCOMPLETE);
  }
  /* redefinition replaces */
  ParseResult pr = parse_script(M, &D, src("def @g() { 1 }\n"), NULL);
  CHECK(pr.ok && pr.nitems == 1 && pr.items[0].replaced && strcmp(pr.items[0].def_name, "g") == 0);
  CHECK(module_func(M, "g")->fn->nparams == 0);
}

static void test_types_api(void) {
  Type *t = parse_type(M, &D, src("fn [T](T, Tensor[(2), int64]) -> (T,)"));
  CHECK(t && t->kind == TY_FUNC && t->u.func.ntparams == 1 && t->u.func.params[0]->kind == TY_VAR);
  CHECK(t && t->u.func.ret->kind == TY_TUPLE && t->u.func.ret->u.tuple.n == 1);
  t = parse_type(M, &D, src("(float32)"));
  CHECK(t && t->kind == TY_TUPLE && t->u.tuple.n == 1);
  t = parse_type(M, &D, src("Ref[Tensor[(), bool]]"));
  CHECK(t && t->kind == TY_REF && t->u.ref.inner->u.tensor.ndim == 0);
  CHECK(!parse_type(M, &D, src("Tensor[(1, 2) float32]")));
  free(rendered());
}

/* Script items (defs, commands, session lets, expressions) and session variables. */
static void test_script(void) {
  const char *text =
      "def @f(%x) { %x }\n"
      ":type @f\n"
      "let %w = 1f;\n"
      "@f(%w)\n"
      "let %a = 2; %a + 1\n"
      "%w;\n"
      "let %b = 3; let %c = %b;\n"
      "%b + %c\n";
  ParseResult pr = parse_script(M, &D, src(text), NULL);
  char *r = rendered();
  CHECK_STREQ(r, "");
  free(r);
  CHECK(pr.ok && pr.nitems == 9);
  if (pr.nitems != 9) return;
  CHECK(pr.items[0].kind == ITEM_DEF && pr.items[0].def_kind == DEF_FUNC);
  CHECK(pr.items[1].kind == ITEM_COMMAND && strcmp(pr.items[1].command, "type @f") == 0);
  CHECK(pr.items[2].kind == ITEM_LET && strcmp(pr.items[2].var->name, "w") == 0);
  CHECK(pr.items[3].kind == ITEM_EXPR &&
        pr.items[3].expr->u.call.args[0]->u.var == pr.items[2].var);
  CHECK(pr.items[4].kind == ITEM_EXPR && pr.items[4].expr->kind == EX_LET);
  CHECK(pr.items[5].kind == ITEM_EXPR && pr.items[5].expr->kind == EX_VAR);
  CHECK(pr.items[6].kind == ITEM_LET && pr.items[7].kind == ITEM_LET &&
        pr.items[8].kind == ITEM_EXPR);
  CHECK(pr.items[6].span.len == 11 && pr.items[7].span.len == 12); /* each binding up to its `;` */
  /* session variables from earlier inputs */
  Var *s = pr.items[2].var;
  ParseOptions opt = {.nsession = 1, .session = &s};
  pr = parse_script(M, &D, src("%w + %w\n%a\n"), &opt);
  r = rendered();
  CHECK(!pr.ok && contains(r, "t.rly:2:1: error: unbound variable `%a`"));
  free(r);
  pr = parse_script(M, &D, src("1 2\n3\n"), NULL);
  r = rendered();
  CHECK(!pr.ok && contains(r, "expected a new line after the expression"));
  free(r);
}

/* ── TIR ── */

/* A prim function with size variables, blocks, loops, let and if; TIR errors. */
static void test_tir(void) {
  const char *text =
      "prim @linear0(%X: Buffer[(n, 784), float32], %W: Buffer[(128, 784), float32],\n"
      "              %B: Buffer[(128), float32], %Z: Buffer[(n, 128), float32]) {\n"
      "  alloc %Y: Buffer[(n, 128), float32];\n"
      "  for %i, %j, %k in grid(n, 128, 784) {\n"
      "    block \"Y\" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {\n"
      "      init { %Y[%vi, %vj] = 0f; }\n"
      "      %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vj, %vk];\n"
      "    }\n"
      "  }\n"
      "  for %i in range(0, n) {\n"
      "    for %j in parallel(128) {\n"
      "      let %t = max(%Y[%i, %j] + %B[%j], 0f);\n"
      "      if (%i % 2 == 0 && !(%j < 3) || -%t > 1f) { %Z[%i, %j] = float32(%i) * %t; } else { "
      "%Z[%i, %j] = select(True, %t, 1f); }\n"
      "    }\n"
      "  }\n"
      "}\n";
  CHECK(parse_module(M, &D, src(text)));
  char *r = rendered();
  CHECK_STREQ(r, "");
  free(r);
  PrimFunc *f = module_prim(M, "linear0");
  CHECK(f && f->nparams == 4 && f->nsizevars == 1 && strcmp(f->sizevars[0]->name, "n") == 0);
  if (!f) return;
  CHECK(f->sizevars[0]->is_size && f->params[0]->dims[0].kind == DIM_VAR);
  Stmt *body = f->body;
  CHECK(body->kind == ST_SEQ && body->u.seq.n == 3);
  Stmt *loop = body->u.seq.items[1];
  CHECK(loop->kind == ST_FOR && loop->u.for_.loop == LOOP_GRID && loop->u.for_.nvars == 3);
  Stmt *blk = loop->u.for_.body->u.seq.items[0];
  CHECK(blk->kind == ST_BLOCK && blk->u.block.niters == 3 && blk->u.block.iters[2].reduce &&
        blk->u.block.init);
  Stmt *st = blk->u.block.body->u.seq.items[0];
  CHECK(st->kind == ST_STORE && st->u.store.buf == body->u.seq.items[0]->u.alloc);
  PrimExpr *v = st->u.store.value;
  CHECK(v->kind == PE_BIN && v->u.bin.op == PB_ADD && v->u.bin.b->u.bin.op == PB_MUL &&
        v->dtype == DT_FLOAT32);
  Stmt *r2 = body->u.seq.items[2];
  CHECK(r2->u.for_.loop == LOOP_RANGE && r2->u.for_.lo[0]->kind == PE_INT);
  CHECK(r2->u.for_.hi[0]->kind == PE_VAR && r2->u.for_.hi[0]->u.var == f->sizevars[0]);
  Stmt *inner = r2->u.for_.body->u.seq.items[0]->u.for_.body;
  Stmt *iff = inner->u.seq.items[1];
  CHECK(iff->kind == ST_IF && iff->u.if_.cond->u.bin.op == PB_OR &&
        iff->u.if_.cond->u.bin.a->u.bin.op == PB_AND);
  CHECK(iff->u.if_.else_ && iff->u.if_.cond->dtype == DT_BOOL);
  r = module_errors("prim @p(%X: Buffer[(4), float32]) {\n  %X[0, 1] = %q;\n  %Q[0] = 1f;\n}\n");
  CHECK_HAS(r, "t.rly:2:3: error: buffer `%X` has 1 dimensions, indexed with 2");
  CHECK_HAS(r, "t.rly:2:14: error: unbound variable `%q`");
  CHECK_HAS(r, "t.rly:3:3: error: `%Q` is not a buffer");
  free(r);
}

/* TVMScript's loop forms: one variable takes (end) or (begin, end) under
 * every kind but grid; a begin of 0 is stored as none (canonical). */
static void test_tir_loop_forms(void) {
  const char *text =
      "prim @p(%X: Buffer[(n), float32]) {\n"
      "  for %i in parallel(1, n - 1) { %X[%i] = 0f; }\n"
      "  for %i in vectorized(0, n) { %X[%i] = 0f; }\n"
      "  for %i in unrolled(n) { %X[%i] = 0f; }\n"
      "  for %i in range(2i64, 5) { %X[%i] = 0f; }\n"
      "  for %i, %j in parallel(n, 1) { %X[%i + %j] = 0f; }\n"
      "}\n";
  CHECK(parse_module(M, &D, src(text)));
  char *r = rendered();
  CHECK_STREQ(r, "");
  free(r);
  PrimFunc *f = module_prim(M, "p");
  if (!f) return;
  Stmt **l = f->body->u.seq.items;
  CHECK(l[0]->u.for_.loop == LOOP_PARALLEL && l[0]->u.for_.nvars == 1);
  CHECK(tir_for_lo(l[0], 0) && tir_for_lo(l[0], 0)->u.i == 1);
  CHECK(l[0]->u.for_.hi[0]->kind == PE_BIN && l[0]->u.for_.vars[0]->dtype == DT_INT64);
  CHECK(l[1]->u.for_.lo == NULL && l[1]->u.for_.hi[0]->kind == PE_VAR);
  CHECK(l[2]->u.for_.lo == NULL && l[2]->u.for_.loop == LOOP_UNROLLED);
  CHECK(tir_for_lo(l[3], 0) && l[3]->u.for_.vars[0]->dtype == DT_INT64); /* the wider bound */
  CHECK(l[4]->u.for_.nvars == 2 && l[4]->u.for_.lo == NULL && l[4]->u.for_.hi[1]->u.i == 1);
  r = module_errors(
      "prim @q(%X: Buffer[(4), float32]) {\n"
      "  for %i in grid(1, 4) { %X[%i] = 0f; }\n"
      "  for %i in parallel(0, 1, 4) { %X[%i] = 0f; }\n"
      "  for %i, %j in range(4, 4) { %X[%i] = 0f; }\n"
      "  for %i, %j in unrolled(0, 2, 2) { %X[%i] = 0f; }\n"
      "}\n");
  CHECK_HAS(r, "t.rly:2:3: error: 1 loop variable but 2 extents");
  CHECK_HAS(
      r,
      "`grid` takes one extent per variable; for a loop from a begin, write `range(begin, end)`");
  CHECK_HAS(r, "t.rly:3:3: error: `parallel` takes (end) or (begin, end), got 3 bounds");
  CHECK_HAS(r, "t.rly:4:3: error: `range` takes one variable and (begin, end) or (end)");
  CHECK_HAS(r, "t.rly:5:3: error: 2 loop variables but 3 extents");
  free(r);
}

/* ── metadata ── */

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static char *b64(const uint8_t *p, size_t n) {
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = malloc(n / 3 * 4 + 8), *o = out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    *o++ = al[v >> 18], *o++ = al[(v >> 12) & 63];
    *o++ = i + 1 < n ? al[(v >> 6) & 63] : '=';
    *o++ = i + 2 < n ? al[v & 63] : '=';
  }
  *o = 0;
  return out;
}

/* A (2, 3) float32 NDArray holding 1..6, in TVM's save format. */
static size_t make_ndarray(uint8_t *buf) {
  memset(buf, 0, 128);
  put_u64(buf, 0xDD5E40F096B4A13Full);
  buf[16] = 1;                            /* device type CPU */
  buf[24] = 2;                            /* ndim */
  buf[28] = 2, buf[29] = 32, buf[30] = 1; /* float, 32 bits, 1 lane */
  put_u64(buf + 32, 2), put_u64(buf + 40, 3), put_u64(buf + 48, 24);
  for (int i = 0; i < 6; i++) {
    float f = (float)(i + 1);
    memcpy(buf + 56 + 4 * i, &f, 4);
  }
  return 80;
}

static char *metadata_program(const char *b64s) {
  StrBuf b = {0};
  sb_printf(
      &b,
      "#[version = \"0.0.5\"]\n"
      "def @main(%%x: Tensor[(2, 3), float32]) {\n  add(%%x, meta[relay.Constant][0])\n}\n\n"
      "#[metadata]\n{\n  \"root\": 1, \n  \"nodes\": [\n    {\"type_key\": \"\"}, \n"
      "    {\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]}, \n"
      "    {\"type_key\": \"Array\", \"data\": [3]}, \n"
      "    {\"type_key\": \"relay.Constant\", \"attrs\": {\"_checked_type_\": \"0\", \"data\": "
      "\"0\", "
      "\"span\": \"0\", \"virtual_device_\": \"0\"}}\n  ], \n"
      "  \"b64ndarrays\": [\n    \"%s\"\n  ], \n  \"attrs\": {\"tvm_version\": \"0.10.0\"}\n}\n",
      b64s);
  return sb_take(&b);
}

/* Metadata: base64 and NDArray decoding, trailing comments, clean failures when malformed. */
static void test_metadata(void) {
  uint8_t buf[128];
  size_t n = make_ndarray(buf);
  char *enc = b64(buf, n);
  uint8_t *dec;
  size_t dn;
  CHECK(meta_base64_decode(&A, enc, strlen(enc), &dec, &dn) && dn == n && memcmp(dec, buf, n) == 0);
  char *prog = metadata_program(enc);
  CHECK(parse_module(M, &D, src(prog)));
  free(rendered());
  FuncDef *f = module_func(M, "main");
  CHECK(f != NULL);
  if (f) {
    Expr *c = f->fn->body->u.call.args[1];
    CHECK(c->kind == EX_CONST);
    Tensor *t = c->u.konst.value;
    CHECK(t->dtype == DT_FLOAT32 && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3);
    CHECK(tensor_get_f64(t, 0) == 1.0 && tensor_get_f64(t, 5) == 6.0);
  }
  free(prog);
  prog = metadata_program(enc); /* comments may follow the JSON */
  char *with_comment = malloc(strlen(prog) + 64);
  strcpy(with_comment, prog);
  strcat(with_comment, "// CHECK: x\n/* more */\n");
  CHECK(parse_module(M, &D, src(with_comment)));
  free(with_comment), free(prog);
  free(rendered());
  /* a failure in a later map entry leaves no half-decoded table behind */
  prog = metadata_program(enc);
  char *two = strstr(prog, "\"keys\": [\"relay.Constant\"], \"data\": [2]");
  CHECK(two != NULL);
  if (two) {
    const char *repl = "\"keys\": [\"relay.Constant\", \"x\"], \"data\": [2, 99]";
    StrBuf b = {0};
    sb_putn(&b, prog, (size_t)(two - prog));
    sb_puts(&b, repl);
    sb_puts(&b, two + strlen("\"keys\": [\"relay.Constant\"], \"data\": [2]"));
    CHECK(!parse_module(M, &D, src(b.data)));
    char *r0 = rendered();
    CHECK_HAS(r0, "malformed metadata section: bad node index in metadata");
    free(r0);
    sb_free(&b);
  }
  free(prog);
  /* malformed: bad magic, truncated data, bad base64, bad JSON */
  const char *err = NULL;
  buf[0] ^= 1;
  CHECK(!meta_decode_ndarray(&A, buf, n, &err) && contains(err, "magic"));
  buf[0] ^= 1;
  CHECK(!meta_decode_ndarray(&A, buf, n - 1, &err) && contains(err, "truncated"));
  for (size_t cut = 0; cut < n; cut++) CHECK(!meta_decode_ndarray(&A, buf, cut, &err));
  buf[24] = 200; /* rank */
  CHECK(!meta_decode_ndarray(&A, buf, n, &err));
  prog = metadata_program("P6G0lvBAXt0!!!");
  CHECK(!parse_module(M, &D, src(prog)));
  char *r = rendered();
  CHECK_HAS(r, "malformed metadata section: bad base64");
  free(r), free(prog);
  prog = metadata_program("AAAA");
  CHECK(!parse_module(M, &D, src(prog)));
  r = rendered();
  CHECK_HAS(r, "malformed metadata section: not an NDArray");
  free(r);
  for (size_t cut = strlen(prog); cut-- > 0;) { /* every truncation fails cleanly */
    if (cut % 7) continue;
    char *t = strndup(prog, cut);
    parse_module(M, &D, src(t));
    free(rendered());
    free(t);
  }
  free(prog);
  free(enc);
}

/* ── deep chains through the API ── */

enum { DEEP = 100000 };

/* 100,000-binding let and graph chains parse without recursion; deep nesting is a clean error. */
static void test_deep(void) {
  StrBuf b = {0};
  sb_puts(&b, "def @deep(%x0: float32) -> float32 {\n");
  for (int i = 1; i < DEEP; i++) sb_printf(&b, "  let %%x%d = add(%%x%d, 1f);\n", i, i - 1);
  sb_printf(&b, "  %%x%d\n}\n", DEEP - 1);
  CHECK(parse_module(M, &D, src(b.data)));
  free(rendered());
  FuncDef *f = module_func(M, "deep");
  int n = 0;
  const Expr *e = f ? f->fn->body : NULL;
  const Var *prev = f ? f->fn->params[0] : NULL;
  bool linked = true;
  for (; e && e->kind == EX_LET; e = e->u.let.body, n++) {
    linked &= e->u.let.value->u.call.args[0]->u.var == prev;
    prev = e->u.let.var;
  }
  CHECK(n == DEEP - 1 && linked && e && e->kind == EX_VAR && e->u.var == prev);
  sb_free(&b);
  /* graph bindings and a sequence */
  sb_puts(&b, "%0 = 1f;\n");
  for (int i = 1; i < DEEP; i++) sb_printf(&b, "%%%d = %%%d; ", i, i - 1);
  for (int i = 0; i < DEEP; i++) sb_puts(&b, "1; ");
  sb_printf(&b, "%%%d", DEEP - 1);
  Expr *g = parse_expr(M, &D, src(b.data), NULL);
  n = 0;
  for (e = g; e && e->kind == EX_LET; e = e->u.let.body) n++;
  CHECK(g && n == 2 * DEEP && e->kind == EX_VAR);
  sb_free(&b);
  /* nesting past the limit is an error, not a crash */
  for (int i = 0; i < 5000; i++) sb_puts(&b, "(");
  CHECK(!parse_expr(M, &D, src(b.data), NULL));
  char *r = rendered();
  CHECK_HAS(r, "nesting is too deep");
  free(r);
  sb_free(&b);
}

/* One name bound DEEP times in one chain (each binding shadows the last),
 * then the chain ends and an outer binding of the name is seen again: the
 * scope's table grows with the bindings and unwinds to the outer one. */
static void test_shadowing(void) {
  StrBuf b = {0};
  sb_puts(&b, "def @s(%x: float32) -> float32 {\n  let %y = %x;\n  let %z = (\n");
  for (int i = 0; i < DEEP; i++) sb_puts(&b, "    let %y = add(%y, 1f);\n");
  sb_puts(&b, "    %y\n  );\n  add(%y, %z)\n}\n");
  CHECK(parse_module(M, &D, src(b.data)));
  free(rendered());
  FuncDef *f = module_func(M, "s");
  const Expr *outer = f ? f->fn->body : NULL, *inner = outer ? outer->u.let.body : NULL;
  const Expr *tail = inner && inner->kind == EX_LET ? inner->u.let.body : NULL;
  CHECK(tail && tail->kind == EX_CALL && tail->u.call.args[0]->u.var == outer->u.let.var);
  const Expr *e = inner ? inner->u.let.value : NULL;
  int n = 0;
  for (; e && e->kind == EX_LET; e = e->u.let.body) n++;
  CHECK(n == DEEP && e && e->kind == EX_VAR);
  sb_free(&b);
}

/* A file over FILE_MAP_MIN is mapped, and its pages leave memory behind
 * the lexer: an error found near its start is still rendered with its
 * line after the whole file was parsed, the text reads back unchanged, and
 * a size that is a multiple of the page size still ends in a NUL. */
static void test_mapped_source(void) {
  char path[] = "/tmp/rly-test-mapped-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  StrBuf b = {0};
  sb_puts(&b, "def @m(%x0: float32) -> float32 {\n  let %x1 = add(%nope, 1f);\n");
  for (int i = 2; b.len < 3 * FILE_MAP_MIN; i++)
    sb_printf(&b, "  let %%x%d = add(%%x%d, 1f);\n", i, i - 1);
  sb_puts(&b, "  %x2\n}\n");
  while (b.len % 4096) sb_putc(&b, ' ');
  CHECK(write(fd, b.data, b.len) == (ssize_t)b.len);
  close(fd);
  FileText ft;
  CHECK(file_text_read(path, &ft) && ft.map_len > 0 && ft.len == b.len && ft.text[ft.len] == 0);
  uint32_t file = diag_take_file(&D, path, &ft);
  CHECK(!parse_module(M, &D, file));
  const SourceFile *f = diag_source(&D, file);
  CHECK(f && f->len == b.len && memcmp(f->text, b.data, b.len) == 0);
  char *r = rendered();
  CHECK_HAS(r, ":2:17: error: unbound variable `%nope`");
  CHECK_HAS(r, "  let %x1 = add(%nope, 1f);");
  CHECK_HAS(r, "^~~~~");
  free(r);
  reset(); /* unmaps it */
  unlink(path);
  sb_free(&b);
}

/* Runs the tests; reset() gives each parser test a fresh module and diagnostics. */
/* The JSON reader (io/json.h) the metadata section and .safetensors share. */
static const JsonVal *json_of(const char *text, JsonError *e) {
  return json_parse(&A, text, strlen(text), 8, e);
}

static void test_json(void) {
  JsonError e;
  const JsonVal *v =
      json_of(" {\"a\": [1, -2.5e1, true, null], \"b\": \"x\\u00e9\\ud83d\\ude00\"} ", &e);
  CHECK(v && v->kind == JSON_OBJ && v->n == 2);
  const JsonVal *a = json_get(v, "a");
  CHECK(a && a->kind == JSON_ARR && a->n == 4 && a->items[1]->num == -25.0);
  CHECK(a->items[2]->kind == JSON_BOOL && a->items[2]->b && a->items[3]->kind == JSON_NULL);
  CHECK_STREQ(json_get(v, "b")->text, "x\xc3\xa9\xf0\x9f\x98\x80"); /* é, U+1F600 from a pair */
  uint64_t u = 0;
  v = json_of("18446744073709551615", &e); /* 2^64 - 1, exactly */
  CHECK(v && json_uint(v, &u) && u == UINT64_MAX);
  CHECK(!json_uint(json_of("18446744073709551616", &e), &u)); /* overflow */
  CHECK(!json_uint(json_of("2.0", &e), &u) && !json_uint(json_of("-1", &e), &u));
  CHECK(!json_of("[[[[[[[[[[1]]]]]]]]]]", &e) && strstr(e.msg, "nested too deeply"));
  CHECK(!json_of("[1,]", &e) && e.off == 3);
  CHECK(!json_of("{\"a\": 1} x", &e) && e.off == 9 && strstr(e.msg, "after the JSON value"));
  CHECK(!json_of("01", &e) && !json_of("1.", &e) && !json_of("\"a\tb\"", &e));
  CHECK(!json_of("{\"a\\u0000\": 1}", &e) && strstr(e.msg, "NUL"));
  CHECK(!json_of("\"\\ud83d\"", &e) && strstr(e.msg, "bad escape")); /* a lone surrogate */
  v = json_of("\"a\\u0000b\"", &e);
  CHECK(v && v->len == 3 && strlen(v->text) == 1);
}

int main(void) {
  diag_init(&D);
  arena_init(&A);
  M = module_new(&A);
  test_lexer_kinds();
  test_lexer_spans();
  test_lexer_numbers();
  test_diag_render();
  reset(), test_errors();
  reset(), test_recovery();
  reset(), test_incomplete();
  reset(), test_precedence();
  reset(), test_binding_rules();
  reset(), test_literals_and_attrs();
  reset(), test_spans();
  reset(), test_module();
  reset(), test_types_api();
  reset(), test_script();
  reset(), test_tir();
  reset(), test_tir_loop_forms();
  reset(), test_metadata();
  reset(), test_deep();
  reset(), test_shadowing();
  reset(), test_mapped_source();
  reset(), test_json();
  free_module_tables(M);
  diag_free(&D);
  arena_free(&A);
  return check_report("test_parser");
}
