/* parser.h — the hand-written lexer and recursive-descent parser for the rly
 * text format (shared/docs/text-format.md parts A, B and C).
 *
 * The parser never recurses on the length of a let/sequence chain, so a
 * million bindings parse in constant stack.  Errors are diagnostics in the
 * DiagCtx; the parser recovers at the next definition (or `;` in a chain)
 * and keeps collecting. */
#ifndef RLY_PARSER_H
#define RLY_PARSER_H

#include <stdbool.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* One top-level item of a script (text-format.md part C). */
typedef enum ScriptItemKind {
  ITEM_DEF,     /* def / type / extern type / prim / global: already added to the module */
  ITEM_EXPR,    /* a top-level expression to evaluate */
  ITEM_LET,     /* `let %x = e;` with nothing after it: a session binding */
  ITEM_COMMAND, /* a line starting with ':' (text without the ':' and the newline) */
} ScriptItemKind;

typedef struct ScriptItem {
  ScriptItemKind kind;
  Span span;
  Expr *expr;           /* ITEM_EXPR, ITEM_LET (the value) */
  Var *var;             /* ITEM_LET */
  const char *command;  /* ITEM_COMMAND */
  const char *def_name; /* ITEM_DEF: the name defined (without '@'); NULL for ADTs */
  DefKind def_kind;     /* ITEM_DEF */
  bool replaced;        /* ITEM_DEF: an earlier definition of the same name was replaced */
  bool schedule;        /* ITEM_DEF: a `schedule @f { ... }` (def_kind DEF_PRIM) */
} ScriptItem;

typedef struct ParseOptions {
  /* Session variables visible to expressions (REPL `let %x = …;`), may be NULL. */
  int nsession;
  Var **session;
  /* Only bytes [from, to) of the source are read (a script's part between
   * command lines); to == 0: from there to its end.  Spans stay offsets in
   * the whole source. */
  uint32_t from, to;
} ParseOptions;

typedef struct ParseResult {
  bool ok;         /* no errors */
  bool incomplete; /* the first error is at end of input: more lines may complete it */
  int nitems;
  ScriptItem *items; /* arena */
} ParseResult;

/* Parses the registered source `file` as a module: an optional
 * `#[version = "0.0.5"]`, definitions, an optional `#[metadata]` section.
 * Definitions are added to m in order (a later one replaces an earlier one
 * of the same name).  Top-level expressions are errors here. */
bool parse_module(Module *m, DiagCtx *d, uint32_t file);

/* Parses the registered source `file` as a script: definitions (added to m),
 * top-level expressions, session lets and `:` commands. */
ParseResult parse_script(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt);

/* Parses one expression (globals, ADTs and constructors of m are visible). */
Expr *parse_expr(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt);

/* The edit distance of a and b (a transposition counts one), for "did you
 * mean"; 99 for names over 64 characters. */
int parse_edit_distance(const char *a, const char *b);

/* Parses one schedule step (ir/sched.h), as `:sched @f STEP` gives it. */
typedef struct SchedStep SchedStep;
SchedStep *parse_sched_step(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt);

/* Parses one type, e.g. for `:type` or tests. */
Type *parse_type(Module *m, DiagCtx *d, uint32_t file);

#endif
