/* parse_priv.h — state and helpers shared by the parser's files
 * (parser.c: items and expressions, parse_type.c: types and attribute
 * values, parse_tir.c: prim functions).  Not a public header.
 *
 * Error discipline: a syntax error is reported once (parse_err), sets
 * `panic` and makes the failing function return NULL; callers propagate
 * NULL up to a recovery point (a `;` in a binding chain, or the next
 * definition), which clears `panic`.  While panicking further syntax errors
 * are suppressed.  Semantic errors (unbound names) are reported with
 * parse_sem_err and parsing continues with a placeholder. */
#ifndef RLY_PARSE_PRIV_H
#define RLY_PARSE_PRIV_H

#include "ir/sched.h"
#include "ir/tir.h"
#include "parser/lexer.h"
#include "parser/metadata.h"
#include "parser/parser.h"

/* Nesting limits (parentheses, calls, blocks, types): recursion happens on
 * nesting depth only.  The level count is the user-facing limit; the stack
 * budget (measured from the entry point) keeps sanitizer builds, whose
 * frames are several times larger, inside a 1 MiB stack too. */
enum { PARSE_MAX_DEPTH = 200 };

/* For functions with large locals that are not on the recursion path. */
#define PARSE_NOINLINE __attribute__((noinline))

/* BIND_UNBOUND: a placeholder for a name reported as unbound, so the error
 * is said once and the name is never suggested. */
typedef enum BindTag { BIND_VAR, BIND_UNBOUND, BIND_BUF, BIND_TIRVAR } BindTag;

/* One binding of a name: the Var (BIND_VAR, BIND_UNBOUND), Buffer or
 * TirVar, which holds the name (parse_binding_name), with its BindTag in
 * the pointer's two low bits.  8 bytes: a million-binding chain keeps a
 * million of them until it ends.  The binding a name shadows is kept on
 * the side (Scope.shadowed): few bindings shadow another. */
typedef struct Binding {
  uintptr_t word;
} Binding;

static inline void *binding_val(const Binding *b) { return (void *)(b->word & ~(uintptr_t)3); }
static inline BindTag binding_tag(const Binding *b) { return (BindTag)(b->word & 3); }

/* Lexical scopes as one stack of bindings plus an open-addressing table
 * name → innermost binding (index + 1 and spare hash bits, or a mark for
 * a name no longer bound; see parser.c), so lookup is O(1) however many
 * bindings are live.  The table holds 4-byte slots, not names, at most
 * half full: a million bindings cost 8 MB of stack and 8 to 16 MB of
 * table. */
typedef struct Scope {
  uint32_t *slots;
  size_t nslots, used; /* used: slots not empty (unbound marks included) */
  Binding *items;
  size_t n, cap;
  U64Map shadowed; /* index + 1 of a binding → index + 1 of the one it shadows (0: none) */
} Scope;

/* A name used before it may be defined: checked at the end. */
typedef struct NameRef {
  const char *name;
  Span span;
} NameRef;

/* Scalar literals are shared through a small direct-mapped cache (see
 * pscalar in parser.c). */
enum { PARSE_SCALAR_CACHE = 64 };

typedef struct Parser {
  Module *m;
  Arena *a;
  DiagCtx *d;
  Lexer lx;
  uint32_t last_end;    /* end offset of the last consumed token */
  int bdepth;           /* bracket depth of the consumed tokens */
  int depth;            /* recursion depth (PARSE_MAX_DEPTH) */
  uintptr_t stack_base; /* frame address at the entry point */
  size_t stack_budget;  /* bytes of C stack nesting may use (half the stack limit) */
  bool panic;           /* a syntax error is being recovered from */
  bool hint_off;        /* the last error was suppressed: so is its hint */
  bool script;
  Scope scope;
  PtrVec tparams; /* type parameter names in scope */
  MetaTable meta;
  bool has_meta, meta_broken;
  PtrVec global_refs, type_refs; /* NameRef* */
  StrMap failed;                 /* names of definitions that failed to parse */
  StrMap defined;                /* "@name" / "type name" → Span* of its definition here */
  StrBuf scratch;
  Tensor *scalars[PARSE_SCALAR_CACHE]; /* recent scalar literals (immutable, shared) */
  Expr **op_nodes;  /* per op index, the one EX_OP node its uses share (malloc'd; make_op) */
  PtrVec sizevars;  /* TirVar* of the prim function being parsed */
  bool paren_types; /* `#[version = "0.0.4"]`: `(T)` is T, not a 1-tuple */
} Parser;

/* ── tokens ── */

static inline const Token *peek(Parser *p) { return lex_peek(&p->lx, 0); }
static inline const Token *peek_at(Parser *p, int k) { return lex_peek(&p->lx, k); }
static inline bool at_kind(Parser *p, TokKind k) { return peek(p)->kind == k; }
static inline const char *tok_text(const Parser *p, const Token *t) { return p->lx.src + t->off; }
static inline Span tok_span(const Parser *p, const Token *t) { return lex_span(&p->lx, t); }

Token parse_next(Parser *p);
bool parse_accept(Parser *p, TokKind k);
/* Consumes a token of kind k or reports "expected <what>, found ..." and
 * returns false. */
bool parse_expect(Parser *p, TokKind k, const char *what);
/* The `;` ending a binding or statement (`after`: "binding", ...).  When
 * it is missing at the end of a line (the next token starts a new line),
 * reports "expected `;` after this <after>" just past the line's last token
 * and carries on as if it were there (true): the binding still counts, so
 * its uses below do not cascade into "unbound variable".  Otherwise like
 * parse_expect. */
bool parse_expect_semi(Parser *p, const char *after);
/* Is t the identifier `word`? */
bool parse_is_word(const Parser *p, const Token *t, const char *word);
/* The name of an identifier / %local / @global token, interned in the arena. */
const char *parse_name(Parser *p, const Token *t);
/* A span's start as a token offset of this parser's source (0 if none). */
uint32_t parse_local_off(const Parser *p, Span sp);
/* Span from offset `start` to the end of the last consumed token. */
Span parse_span_from(const Parser *p, uint32_t start);

/* ── errors ── */

void parse_err(Parser *p, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void parse_sem_err(Parser *p, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void parse_hint(Parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "expected <what>, found <current token>" at the current token. */
void parse_expected(Parser *p, const char *what);
bool parse_enter(Parser *p);
void parse_leave(Parser *p);
int parse_edit_distance(const char *a, const char *b);

/* schedule_def (parse_sched.c), after pdefinition saw `schedule`. */
bool parse_sched_def(Parser *p, ScriptItem *it, size_t errs);
SchedStep *parse_sched_step_in(Parser *p);
void parse_mark_failed(Parser *p, const char *name);

/* ── scopes ── */

size_t parse_scope_mark(const Parser *p);
void parse_scope_pop(Parser *p, size_t mark);
/* Binds val (a Var, Buffer or TirVar, per tag) under its own name. */
void parse_bind_soon(Parser *p, const char *name); /* a hint: parse_bind(name) comes next */
void parse_bind(Parser *p, const char *name, BindTag tag, void *val);
const char *parse_binding_name(const Binding *b);
/* The innermost binding of the name at token t's text [from, from+n), or NULL. */
Binding *parse_lookup(Parser *p, const char *name, size_t n);
/* Nearest visible name of the given tag (for "did you mean"), or NULL. */
const char *parse_nearest_bound(Parser *p, const char *name, BindTag tag);

/* ── types and attributes (parse_type.c) ── */

Type *parse_ty(Parser *p);
/* A dtype name at the current token (e.g. float32). */
bool parse_dtype(Parser *p, DType *out);
/* `key=value`: appends to keys/vals. */
bool parse_attr(Parser *p, PtrVec *keys, PtrVec *vals);
AttrValue *parse_attr_value(Parser *p);
Attrs *parse_make_attrs(Parser *p, PtrVec *keys, PtrVec *vals);
/* Is the current token the start of `key=value`? */
bool parse_at_attr(Parser *p);
/* `[A, B]` type parameters; pushes them on p->tparams. */
bool parse_tparams(Parser *p, int *n, const char ***names);

/* ── TIR (parse_tir.c) ── */

/* After `prim`: `@name(params) { stmts }`. */
PrimFunc *parse_prim_func(Parser *p, uint32_t start);

#endif
