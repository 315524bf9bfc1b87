/* engine_int.h — what the engine's own files share (not for other
 * folders): the program state an Engine carries (program.c: the module,
 * transactions and session variables; input.c: one input's parse, check
 * and commit; prelude.c: the prelude and its replacement by programs). */
#ifndef RLY_ENGINE_INT_H
#define RLY_ENGINE_INT_H

#include "engine/engine.h"

typedef struct EngineTxn {
  Module *module; /* to restore on failure */
  Var **vars;     /* copy of the session variables (malloc) */
  int nvars;
  size_t dead_from; /* index into Program.dead at the start */
} EngineTxn;

enum { ENGINE_TXN_MAX = 16 };

/* A released value holding at least this much tensor data is collected at
 * once (rebinding `%huge`, or a new `%_`, frees the old value before the
 * next input runs); smaller garbage waits for the collector's schedule. */
#define ENGINE_RELEASE_COLLECT ((size_t)1 << 20)

typedef struct Program {
  Arena arena; /* the base module, its copies, the prelude's records */
  Module *m;   /* the current module */
  Module *base;
  PtrVec dead; /* replaced modules whose tables wait for the outermost transaction's end */
  EngineTxn txns[ENGINE_TXN_MAX];
  int ntxns;
  Var **vars; /* session variables, the latest binding per name */
  int nvars, capvars;
  /* The prelude: what it defined, to tell "defined" from "redefined" and to
   * drop prelude definitions that depend on a name a program replaces. */
  StrMap prelude_defs; /* key ("@f", "T", a constructor) → the definition's identity */
  StrMap prelude_deps; /* key → PtrVec * of the names its text mentions */
  PtrVec prelude_names;
  PtrVec derived;    /* Derived * (derived.c), in arena, oldest first */
  size_t limit_want; /* the first allocation the memory limit refused in an evaluation */
} Program;

Program *engine_program(const Engine *e); /* engine.c */
void program_init(Program *p);
void program_free(Program *p);

/* rt's memory-limit hook during an evaluation (ctx: the Program). */
void program_limit_hit(void *ctx, size_t want);
/* After an evaluation the limit failed: a note naming the session
 * variables that hold the most and what the allocation wanted. */
void program_limit_note(Engine *e);

/* prelude.c */
/* "@f" for a global (written into buf), the name for a type. */
const char *prelude_key(const Def *d, char *buf, size_t n);
/* What stays the same when a FuncDef or StateGlobal is copied (input.c
 * copies them before whole-module checks). */
const void *prelude_def_id(const Def *d);
bool prelude_has(const Program *p, const char *key, const void *id);
/* A copy of the current module in a for an input defining `names` (keys
 * as above): without the prelude definitions those replace or that depend
 * on them. */
Module *prelude_input_module(Engine *e, const PtrVec *names, Arena *a);
void prelude_free(Program *p);

#endif
