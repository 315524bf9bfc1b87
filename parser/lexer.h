/* lexer.h — the hand-written lexer of the rly text format (text-format.md
 * part A lexical rules, with TVM's number algorithm from relay-grammar.md §2
 * and our differences).
 *
 * The lexer is pulled one token at a time through a small lookahead ring,
 * so memory does not grow with the input.  Token spans are exact byte
 * ranges of the source.  Lexical errors are reported to the DiagCtx (through
 * lex_error, which the parser also uses so both share the "first error is
 * at end of input" bookkeeping) and the lexer keeps going with a best-effort
 * token. */
#ifndef RLY_LEXER_H
#define RLY_LEXER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* X(enum, description used in messages) */
/* clang-format off */
#define TOKEN_KINDS(X)                                           \
  X(T_EOF, "end of input")                                       \
  X(T_IDENT, "an identifier")      /* nn.dense, Cons, float32 */ \
  X(T_LOCAL, "a local variable")   /* %x */                      \
  X(T_GRAPH, "a graph variable")   /* %7 */                      \
  X(T_GLOBAL, "a global")          /* @f */                      \
  X(T_INT, "an integer")                                         \
  X(T_FLOAT, "a float")                                          \
  X(T_STRING, "a string")                                        \
  X(T_META, "a meta reference")    /* meta[relay.Constant][0] */ \
  X(T_VERSION, "`#[version = ...]`")                             \
  X(T_METADATA, "`#[metadata]`")                                 \
  X(T_COMMAND, "a command")        /* :type @f (script mode) */  \
  X(T_KW_LET, "`let`")                                           \
  X(T_KW_FN, "`fn`")                                             \
  X(T_KW_DEF, "`def`")                                           \
  X(T_KW_IF, "`if`")                                             \
  X(T_KW_ELSE, "`else`")                                         \
  X(T_KW_TYPE, "`type`")                                         \
  X(T_KW_MATCH, "`match`")                                       \
  X(T_KW_MATCH_PARTIAL, "`match?`")                              \
  X(T_KW_EXTERN, "`extern`")                                     \
  X(T_KW_FREE_VAR, "`free_var`")                                 \
  X(T_KW_REF, "`ref`")                                           \
  X(T_KW_REF_READ, "`ref_read`")                                 \
  X(T_KW_REF_WRITE, "`ref_write`")                               \
  X(T_KW_PRIM, "`prim`")                                         \
  X(T_KW_GLOBAL, "`global`")                                     \
  X(T_KW_SCHEDULE, "`schedule`")                                 \
  X(T_KW_DATAFLOW, "`dataflow`")                                 \
  X(T_LPAREN, "`(`")                                             \
  X(T_RPAREN, "`)`")                                             \
  X(T_LBRACKET, "`[`")                                           \
  X(T_RBRACKET, "`]`")                                           \
  X(T_LBRACE, "`{`")                                             \
  X(T_RBRACE, "`}`")                                             \
  X(T_COMMA, "`,`")                                              \
  X(T_DOT, "`.`")                                                \
  X(T_EQ, "`=`")                                                 \
  X(T_SEMI, "`;`")                                               \
  X(T_COLON, "`:`")                                              \
  X(T_PLUS, "`+`")                                               \
  X(T_MINUS, "`-`")                                              \
  X(T_STAR, "`*`")                                               \
  X(T_SLASH, "`/`")                                              \
  X(T_PERCENT, "`%`")                                            \
  X(T_LT, "`<`")                                                 \
  X(T_LE, "`<=`")                                                \
  X(T_GT, "`>`")                                                 \
  X(T_GE, "`>=`")                                                \
  X(T_EQEQ, "`==`")                                              \
  X(T_NE, "`!=`")                                                \
  X(T_ANDAND, "`&&`")                                            \
  X(T_OROR, "`||`")                                              \
  X(T_BANG, "`!`")                                               \
  X(T_QUESTION, "`?`")                                           \
  X(T_CARET, "`^`")                                              \
  X(T_ASSIGN, "`:=`")                                            \
  X(T_ARROW, "`->`")                                             \
  X(T_FATARROW, "`=>`")
/* clang-format on */

typedef enum TokKind {
#define X(e, s) e,
  TOKEN_KINDS(X)
#undef X
} TokKind;

const char *lex_kind_text(TokKind k);

typedef struct Token {
  TokKind kind;
  uint32_t off, len; /* exact source range */
  bool col1;         /* starts at column 1 */
  bool nl_before;    /* a newline separates it from the previous token */
  bool bad;          /* a lexical error was already reported for it */
  DType dtype;       /* T_INT / T_FLOAT: the literal's type */
  union {
    int64_t i; /* T_INT (uint64 bit-for-bit), T_META index */
    double f;  /* T_FLOAT (float32 values already rounded to float) */
  } v;
} Token;

enum { LEX_LOOKAHEAD = 8 };
/* A mapped source (ir/util.h) leaves memory behind the lexer: every
 * LEX_RELEASE_STEP bytes, all but the last LEX_KEEP bytes lexed, so at most
 * their sum of it is resident. */
enum { LEX_RELEASE_STEP = 1 << 20, LEX_KEEP = 256 << 10 };

typedef struct Lexer {
  DiagCtx *d;
  uint32_t file;
  uint32_t base;   /* the source's offset in spans (ir/diag.h); 0: none */
  const char *src; /* the registered source text */
  uint32_t len;    /* bytes lexed (the metadata section excluded) */
  uint32_t pos;
  bool script;  /* `:` at column 1 starts a command line */
  TokKind prev; /* kind of the previous token produced */
  bool saw_nl;
  Token ring[LEX_LOOKAHEAD];
  int head, count;
  /* A mapped source: at this position the bytes more than LEX_KEEP behind
   * are released from memory (diag_source_release); UINT32_MAX: never. */
  uint32_t release_at;
  /* Bookkeeping shared with the parser. */
  bool any_error;   /* an error was reported through lex_error */
  bool bare_floats; /* `0.5` without a suffix is a float64 (a schedule's arguments) */
  bool incomplete;  /* the first error was at end of input */
  bool eof_error;   /* a string or comment ran into the end of input */
} Lexer;

void lex_init(Lexer *lx, DiagCtx *d, uint32_t file, bool script);
/* The k-th token ahead (0 = current); k < LEX_LOOKAHEAD. */
/* Reads only bytes [from, to) of the source (to == 0: to its end); before
 * the first token. */
void lex_restrict(Lexer *lx, uint32_t from, uint32_t to);
const Token *lex_peek(Lexer *lx, int k);
Token lex_next(Lexer *lx);
/* Reports an error at sp; at_eof marks it as "more input could fix this". */
void lex_error(Lexer *lx, Span sp, bool at_eof, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
Span lex_span(const Lexer *lx, const Token *t);
/* The span of bytes [off, off + len) of the source (offsets as in tokens). */
Span lex_span_at(const Lexer *lx, uint32_t off, uint32_t len);
/* Span of the end of input (length 0). */
Span lex_eof_span(const Lexer *lx);

/* Offset of `#[metadata]` at the start of a line, or -1. */
long lex_find_metadata(const char *src, size_t len);
/* Decodes a string token's contents (escapes already validated) into a. */
char *lex_string_value(Arena *a, const char *src, const Token *t);

#endif
