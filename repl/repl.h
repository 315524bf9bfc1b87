/* repl.h — the rly session shared by the REPL, batch mode and `:` commands
 * (internal to repl/).
 *
 * A Session owns one DiagCtx (every input is a registered source named
 * `<repl:N>`, a path, `<stdin>` or `<-e>`) and the evaluator, whose engine
 * keeps the program: the current module, the session variables (`let %x =
 * e;` and `%_`), the prelude and the transactions (engine/engine.h).
 *
 * Invariants:
 * - The current module is never edited in place.  An input is parsed and
 *   checked in a copy and the copy replaces the module only when
 *   everything succeeded; `:load` of a file with several parts is one
 *   engine transaction: its parts between `:` lines commit one by one and
 *   roll back together.
 * - Inputs allocate in one arena (`inputs`) from a mark.  A rejected input
 *   (parse or type error, or a REPL line that needs more lines) is released,
 *   and so is an input that defines and binds nothing and whose value cannot
 *   point into it (no `fn`; constants only as direct arguments of ops that
 *   are not views).  Other inputs are kept, because run-time values share
 *   their memory (tensor constants are borrowed, closures point at their
 *   code).  Every input's source text is kept (diagnostics may point at it). */
#ifndef RLY_REPL_H
#define RLY_REPL_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine/profile.h"
#include "ir/diag.h"
#include "ir/ir.h"

#define RLY_VERSION "0.1"

typedef enum RunStatus {
  RUN_OK,
  RUN_INCOMPLETE, /* the input ends early: the REPL reads another line */
  RUN_ERROR,      /* diagnostics were printed */
  RUN_QUIT,       /* :quit */
} RunStatus;

typedef struct SessionOptions {
  bool color;           /* ANSI colours (a terminal and no NO_COLOR) */
  bool prelude;         /* load lib/prelude.rly at start */
  EngineOptions engine; /* exec mode, JIT, limits (engine/engine.h) */
} SessionOptions;

/* ── the evaluator (eval_interp.c: the AST interpreter; a JIT mode can plug in here) ── */

typedef struct Evaluator Evaluator;

Evaluator *repl_eval_new(DiagCtx *d, const EngineOptions *o);
Engine *repl_engine(Evaluator *ev);
void repl_eval_free(Evaluator *ev);
/* Evaluates e (type-checked) against m and binds the value to `bind` (a
 * session variable, may be NULL).  *text: the printed value (malloc'd);
 * text NULL: the value is not formatted (:time).
 * False after a diagnostic. */
bool repl_eval(Evaluator *ev, Module *m, Expr *e, Var *bind, char **text);
void repl_eval_collect(Evaluator *ev);            /* collect unreachable values now (:time) */
void repl_eval_interrupt(void);                   /* async-signal-safe */
void repl_eval_seed(Evaluator *ev, int64_t seed); /* @prng_state = random.key(seed) */
/* The jit mode's view of m: definitions fused and lowered to prim functions
 * (cached per definition) plus those prim functions; *e (may be NULL) is
 * lowered too.  NULL when lowering is not possible (then run m as is).
 * The view belongs to the evaluator (valid until m changes). */
Module *repl_eval_lowered(Evaluator *ev, Module *m, Expr **e);

/* ── the session ── */

enum { REPL_UNDO_DEPTH = 32, REPL_LOAD_DEPTH = 16 };

/* One step :undo can take back: the module before it and what it was
 * (":pass FuseOps", "the definition of @f", ":load model.rly"). */
typedef struct UndoStep {
  Module *m;
  char *what; /* malloc'd */
} UndoStep;

/* What a script (a file run or :load-ed) ran before it stopped: said when
 * an error stops it (everything before the error is kept). */
typedef struct Ran {
  int defs, lets, values, commands;
  Span stopped; /* the first error that stopped it, or {0} */
} Ran;

typedef struct Session {
  SessionOptions opt;
  DiagCtx diag;
  Evaluator *ev;
  Arena inputs;      /* the inputs' IR (see above) */
  uint64_t kept_gen; /* counts inputs whose memory was kept */
  Arena fixed;       /* session-lifetime small things: %_, copied types, names */
  Var *last;         /* %_ (one Var for the session; its annot follows the value) */
  int ninputs;       /* N of the last <repl:N> */
  bool loading;      /* inside :load: summarize definitions instead of listing */
  PtrVec loaded;     /* names defined by the current :load (const char *) */
  char *last_load;   /* for :reload */
  bool show_types;
  bool verify;                    /* :set verify on: type-check and verify after every pass */
  bool show_prelude;              /* :set show-prelude on: :pass and :step include the prelude */
  char step_dot[1024];            /* :set step-dot DIR: :step draws each rewrite there ("": off) */
  bool profile;                   /* rly --profile: a per-kernel profile of each evaluation */
  Profile *last_profile;          /* the last :profile's, for :dot's colours (or NULL) */
  UndoStep undo[REPL_UNDO_DEPTH]; /* before each change of the module, newest last */
  int nundo;
  const char *doing; /* the `:` command running (":pass FuseOps"), for its undo step */
  Module *load_before[REPL_LOAD_DEPTH]; /* the module before each :load in progress */
  int nloads;
  Ran ran;      /* what the script running now has run (session.c) */
  bool goes_on; /* the session goes on after its scripts (the REPL follows) */
} Session;

Session *session_new(SessionOptions opt);
/* "<verb>@name : T" as a summary line: the type shortened past the
 * terminal's width (80 columns when stdout is not a terminal); malloc'd. */
char *session_def_line(const char *verb, const char *name, const Type *ty);
void session_free(Session *s);

/* Runs one input: definitions, expressions, session lets and `:` command
 * lines.  may_continue: report RUN_INCOMPLETE (and nothing else) when the
 * only error is at the end of input.  stop_on_error: batch mode. */
RunStatus session_run(Session *s, const char *name, const char *text, size_t len,
                      bool may_continue);
/* Runs a file (or "-" for stdin) as a script; prints diagnostics. */
RunStatus session_run_file(Session *s, const char *path);
/* The interactive loop (readline on a terminal, plain lines otherwise). */
int session_repl(Session *s, bool tty);
void session_banner(FILE *f);

/* Set while the evaluator runs: SIGINT then interrupts the evaluation (and
 * sets repl_interrupted) instead of clearing the line. */
extern volatile sig_atomic_t repl_in_eval, repl_interrupted;

/* Used by the commands.  The program is the engine's (engine/engine.h). */
Engine *session_engine(const Session *s);
Module *session_module(const Session *s);
/* Makes m (a :pass, :bind or :import result) the current module; the one
 * before is kept for :undo, labelled with the command running. */
void session_keep_module(Session *s, Module *m);
RunStatus session_load(Session *s, const char *path, Span where);
/* paths.c: path as the command at `where` means it, relative to its
 * script's directory (malloc'd); whether a file read as a script is rly
 * text (else an error at where, naming it as shown, and what to use). */
char *session_path(Session *s, const char *path, Span where);
bool session_text_file(Session *s, uint32_t file, const char *shown, Span where);
void session_reset(Session *s);
/* Is d still the prelude's definition of its name? */
bool session_is_prelude(const Session *s, const Def *d);
/* Parses and type-checks the expression at `where` (part of a command
 * line) against *view, a view of the current module allocating in a;
 * prints errors and returns NULL on failure. */
Expr *session_parse_expr(Session *s, Span where, Arena *a, Module *view);
void session_render(Session *s); /* prints and clears collected diagnostics */
/* The pass commands (cmd_pass.c). */
RunStatus repl_cmd_passes(Session *s, const char *args, Span where);
RunStatus repl_cmd_pass(Session *s, const char *args, Span where);
RunStatus repl_cmd_step(Session *s, const char *args, Span where);
RunStatus repl_cmd_undo(Session *s, const char *args, Span where);
/* cmd_sched.c: :sched, :trace; :step @f of a scheduled prim function;
 * :print [--unscheduled] @f of a prim function; :help sched's list. */
RunStatus repl_cmd_sched(Session *s, const char *args, Span where);
RunStatus repl_cmd_trace(Session *s, const char *args, Span where);
/* cmd_tune.c: :tune @f [trials=N] [minutes=M] [seed=S] | --show. */
RunStatus repl_cmd_tune(Session *s, const char *args, Span where);
bool repl_sched_replay(Session *s, const char *name, Span where);
bool repl_print_prim(Session *s, const char *name, bool unscheduled, Span where);
void repl_sched_help(void);
void repl_pass_help(void); /* which passes are function-local (:help pass) */
/* :dump tir @f — the prim functions @f lowers to (cmd_lower.c); args: the
 * text after `tir`. */
RunStatus repl_dump_tir(Session *s, const char *args, Span where);
/* The prim functions `:dump`'s `@NAME` stands for (cmd_lower.c): a prim
 * function or kernel, or those a Relay function's lowered form calls
 * (*func); false after an error. */
bool repl_dump_prims(Session *s, const char *args, Span where, PtrVec *out, bool *func);
void repl_undo_clear(Session *s);
/* `rly --list-ops=FORMAT` (op_table.c): the op registry as a table on
 * stdout, FORMAT `text` or `markdown` (the README's); 2 for another. */
int repl_list_ops(const char *format);
/* Keeps m (the module before a change) for :undo as the step `what`; the
 * oldest of REPL_UNDO_DEPTH is dropped. */
void repl_undo_push(Session *s, Module *m, const char *what);
/* A command's argument words and their spans (cmd_data.c). */
enum { REPL_MAX_WORDS = 64 };
typedef struct Words {
  int n;
  char *w[REPL_MAX_WORDS];
  Span sp[REPL_MAX_WORDS];
} Words;
/* Splits args (whose span is where) at blanks; "double quotes" keep blanks
 * in a word.  False, after an error, past REPL_MAX_WORDS. */
bool repl_split_words(Session *s, const char *args, Span where, Words *out);
void repl_free_words(Words *w);
/* The data commands (cmd_data.c): tensor files, BindParams, externals. */
RunStatus repl_cmd_bind(Session *s, const char *args, Span where);
RunStatus repl_cmd_save(Session *s, const char *args, Span where);
/* :import FILE.onnx [as @name] (engine_import_onnx, weights bound). */
RunStatus repl_cmd_import(Session *s, const char *args, Span where);
RunStatus repl_cmd_load_tensor(Session *s, const char *args, Span where);
RunStatus repl_cmd_extern(Session *s, const char *args, Span where);
void session_error(Session *s, Span where, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The JIT commands (cmd_jit.c): :kernels, :dump, :time, `:set opt`. */
RunStatus repl_cmd_kernels(Session *s, const char *args, Span where);
RunStatus repl_cmd_dump(Session *s, const char *args, Span where);
RunStatus repl_cmd_time(Session *s, const char *args, Span where);
/* :profile EXPR: one evaluation, then its per-kernel table (engine/profile.h). */
RunStatus repl_cmd_profile(Session *s, const char *args, Span where);
/* rly --profile: the table of an evaluation of a script's item at `where`. */
void repl_print_profile(Session *s, Profile *p, Span where);
/* :dot @f FILE: the function's dataflow graph as .dot, .svg or .png (cmd_dot.c). */
RunStatus repl_cmd_dot(Session *s, const char *args, Span where);
/* :emit @f OUT.onnx: the function as an ONNX model (cmd_emit.c). */
RunStatus repl_cmd_emit(Session *s, const char *args, Span where);
/* The workspace commands (cmd_workspace.c): :bindings, :del, :write. */
RunStatus repl_cmd_bindings(Session *s, const char *args, Span where);
RunStatus repl_cmd_del(Session *s, const char *args, Span where);
RunStatus repl_cmd_write(Session *s, const char *args, Span where);
/* :doc OP and :info NAME (cmd_doc.c); repl_op_doc prints the op's page
 * (:help OP shows it too). */
RunStatus repl_cmd_doc(Session *s, const char *args, Span where);
RunStatus repl_cmd_info(Session *s, const char *args, Span where);
void repl_op_doc(Session *s, int index);
/* Keeps p as the session's last profile (:dot colours kernels by it). */
void repl_keep_profile(Session *s, Profile *p);

/* ── commands (commands.c) ── */

/* What Tab completes in a command's arguments: a column of the commands
 * table, dispatched on by complete.c. */
typedef enum CmdComplete {
  COMPLETE_NONE,
  COMPLETE_FILE,    /* file names (:load) */
  COMPLETE_COMMAND, /* command names (:help) */
  COMPLETE_SETTING, /* a setting's name, then its values (:set) */
  COMPLETE_PASS,    /* pass names, and @functions (:pass, :step) */
  COMPLETE_DEF,     /* `prelude`, globals and types (:print, :browse) */
  COMPLETE_EXPR,    /* an expression (:type, :time) */
  COMPLETE_DUMP,    /* tir, llvm or asm, then @functions (:dump) */
  COMPLETE_DATA,    /* @globals and %variables; other words are file names (:bind, :save) */
  COMPLETE_OP,      /* op names; @functions and %variables by their sigil (:doc, :info) */
} CmdComplete;

/* Runs a command line (text after ':'); where: the span of the whole line. */
RunStatus cmd_run(Session *s, const char *line, Span where);
/* Command names, for completion; NULL-terminated. */
const char *const *cmd_names(void);
/* The command a word names (exact, else the first it prefixes), or NULL. */
const char *cmd_resolve(const char *word);
/* The completion kind of a command (a full name). */
CmdComplete cmd_completion(const char *name);
/* Does the command (a full name) take file names (:load, :bind)? */
bool cmd_wants_file(const char *name);
/* The name in a NULL-terminated list nearest to word, if near enough for a
 * "did you mean", else NULL. */
const char *repl_nearest(const char *const *names, const char *word);

/* ── completion (complete.c) ── */

/* Candidates for the word line[start, end) given the whole line: command
 * names after ':', globals after '@', session variables after '%', op and
 * constructor names, attribute names inside an op call.  Pushes malloc'd
 * strings onto out.  Returns true when the word is a file name (the
 * front end completes those itself). */
bool complete_word(const Session *s, const char *line, int start, int end, PtrVec *out);

/* ── line editing (line_readline.c on a terminal, line_plain.c otherwise) ── */

typedef struct LineEditor {
  /* A line without its newline (malloc'd), or NULL at end of input.
   * *interrupted: Ctrl-C cleared the line (the result is NULL). */
  char *(*read)(const char *prompt, bool *interrupted);
  void (*history_add)(const char *entry); /* one whole (multi-line) input */
  void (*close)(void);
} LineEditor;

const LineEditor *line_readline_open(Session *s);
const LineEditor *line_plain_open(bool prompts);

#endif
