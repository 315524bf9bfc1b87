/* commands.c — the `:` commands of the REPL and of scripts.
 *
 * REPL_COMMANDS is the single source of truth: dispatch, unique-prefix
 * resolution (table order breaks ties, so put common commands first),
 * `:help`, completion (each row names what Tab completes in its arguments)
 * and "did you mean" all read it.  Adding a command is one row plus its
 * handler.  Handlers get the argument text (trimmed) and its span in a
 * registered source, so errors point at the argument.  The settings of
 * `:set` are rows of their own table (settings.c). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/draw.h"
#include "ir/print_tvmscript.h"
#include "ir/tir.h"
#include "ops/ops.h"
#include "repl/repl.h"
#include "repl/settings.h"

typedef RunStatus (*CmdFn)(Session *s, const char *args, Span where);

/* What `@f` does to :pass and :step (their more help; repl_pass_help then
 * lists which passes are function-local, from the pass table). */
#define PASS_SCOPE_HELP                                                      \
  "With @f, only @f's rewrites and diff are shown.  A function-local pass\n" \
  "rewrites only @f; a whole-module pass still rewrites what it must (the\n" \
  "callers of a function whose signature changes) and names the other\n"     \
  "definitions it changed after the diff.  Without @f, the prelude's\n"      \
  "definitions are left out the same way (`:set show-prelude on` includes them)."

/* X(id, name as typed, argument synopsis, what Tab completes in the arguments
 *   (CmdComplete without COMPLETE_), handler, one-line help, more help or
 *   NULL).  A handler is commands.c's own cmd_<id> or the repl_cmd_<id> of
 *   the file that holds the command (repl.h). */
#define REPL_COMMANDS(X)                                                                           \
  X(help, "help", "[COMMAND]", COMMAND, cmd_help, "list the commands, or explain one", NULL)       \
  X(quit, "quit", "", NONE, cmd_quit, "leave rly (Ctrl-D on an empty line does too)", NULL)        \
  X(type, "type", "EXPR", EXPR, cmd_type, "show the type of an expression",                        \
    "The expression is type-checked, not evaluated; session variables may be used.")               \
  X(load, "load", "FILE", FILE, cmd_load,                                                          \
    "run a script; an error stops it, keeping what ran before",                                    \
    "Definitions, expressions (their values are printed), lets and `:` commands,\n"                \
    "in order (definitions that use each other are checked together).  An error\n"                 \
    "or Ctrl-C stops the file; everything before it is kept, and rly says where it\n"              \
    "stopped.  `:undo` takes the whole :load back.  In a script, a relative FILE\n"                \
    "(here and in :load-tensor, :bind, :import, :save, :extern) is beside the\n"                   \
    "script; at the prompt, in the current directory.")                                            \
  X(reload, "reload", "", NONE, cmd_reload, "load the last :load-ed file again",                   \
    "Definitions from the file replace the session's by name, as :load.")                          \
  X(print, "print", "[--tvmscript] [--unscheduled] [@f | TYPE | prelude] [meta]", DEF, cmd_print,  \
    "print the session's definitions, or one of them",                                             \
    "With `:set types on`, expressions are annotated with their types.  Constants\n"               \
    "over 16 elements show as meta[relay.Constant][i]; `meta` adds TVM's\n"                        \
    "#[metadata] section holding them, so the text parses back on its own.\n"                      \
    "`--tvmscript`: prim function @f, or alone all of yours as one\n"                              \
    "`@I.ir_module class Module:`, in TVMScript (rly reads it back: `:load F.py`).\n"              \
    "A scheduled prim function prints as scheduled; `--unscheduled`: as written.")                 \
  X(browse, "browse", "[prelude | TEXT]", DEF, cmd_browse, "list definitions with their types",    \
    "Alone: your definitions; `prelude`: the standard library; TEXT: every\n"                      \
    "definition whose name contains TEXT.")                                                        \
  X(reset, "reset", "", NONE, cmd_reset,                                                           \
    "forget all definitions and session variables (the prelude stays)", NULL)                      \
  X(passes, "passes", "", NONE, repl_cmd_passes, "list the passes and the jit's pipeline", NULL)   \
  X(pass, "pass", "NAME [NAME ...] [@f]", PASS, repl_cmd_pass,                                     \
    "run passes on the session's module, show the diff, keep the result",                          \
    "Names are separated by spaces or commas.  `:undo` restores the module "                       \
    "before.\n`:pass jit` runs the jit's pipeline (`:passes` shows it) down to call_tir\n"         \
    "of the kernels it compiles.\n" PASS_SCOPE_HELP)                                               \
  X(step, "step", "NAME [NAME ...] [@f]", PASS, repl_cmd_step, "run passes one rewrite at a time", \
    "Each rewrite shows its rule, function, location and before/after; Enter for\n"                \
    "the next, `c` to run to the end, `q` to stop without applying anything;\n"                    \
    "[n/N] counts them.  `:step jit` steps through the jit's pipeline.\n" PASS_SCOPE_HELP)         \
  X(undo, "undo", "", NONE, repl_cmd_undo,                                                         \
    "take back the last change of the module, naming what it undoes",                              \
    "A change is a definition (an input's), a :pass, :bind, :import or a whole\n"                  \
    "`:load`; :undo says which it took back and which definitions it removed\n"                    \
    "or restored.  The last 32 changes are kept.")                                                 \
  X(sched, "sched", "@f PRIMITIVE(ARGS)", DEF, repl_cmd_sched,                                     \
    "apply one schedule primitive to a prim function: diff shown, kept",                           \
    "The primitive is TVM's (tvm.tir.Schedule), written as in a `schedule @f { ... }`\n"           \
    "block: `:sched @f split(%j, factors=[?, 4])`; `let (%a, %b) = ...` names what it\n"           \
    "gives.  Each step is checked before it rewrites (a refused step changes nothing);\n"          \
    "with `:set verify on` its result is compared with the unscheduled function's on\n"            \
    "random inputs.  `:undo` takes the step back; `:trace @f` prints the schedule,\n"              \
    "`:step @f` replays it one primitive at a time, `:print --unscheduled @f` shows\n"             \
    "the function as written.")                                                                    \
  X(trace, "trace", "@f", DEF, repl_cmd_trace, "print a prim function's schedule as text", NULL)   \
  X(tune, "tune", "@f|@kernel [trials=N] [minutes=M] [seed=S] [OPT=...] | --show | --knobs", DEF,  \
    repl_cmd_tune,                                                                                 \
    "find a prim function's schedule or a kernel's knobs by measurement (recorded)",               \
    "Candidates come from schedule rules (multi-level tiling of reductions with\n"                 \
    "sampled tile sizes, a packed operand, elementwise blocks inlined or vectorized,\n"            \
    "outer loops parallel): random samples, then rounds of samples and mutations of\n"             \
    "the fastest ranked by a cost model (boosted trees on loop-nest features, fitted\n"            \
    "to the measurements; [model G] is its prediction) of which the best are\n"                    \
    "measured (OPT model=off: no model, random samples then mutations).  Each is\n"                \
    "checked against the unscheduled function, JIT-compiled and timed; Ctrl-C stops\n"             \
    "early.  The best becomes @f's schedule (`:undo` takes it back) and is appended\n"             \
    "to the tuning database ($XDG_CACHE_HOME/rly/tuning.txt, `rly --tuning-log FILE`),\n"          \
    "from which a prim function defined without a schedule gets its workload's\n"                  \
    "(RLY_TUNING_DB=0: not).  `--show` lists this target's records.\n"                             \
    "@kernel, a kernel as :kernels names it: its compute rules' knobs (tile widths,\n"             \
    "tile rows, panel widths, the parallel loop; `:tune --knobs` lists them), the\n"               \
    "defaults first, then the other settings in the seed's order; the best is\n"                   \
    "recorded and every later compile of that workload takes it (`:kernels` says\n"                \
    "tuned).  set=K=V,... measures and records the setting given.  @f, a function:\n"              \
    "each of its kernels by a task scheduler (the most time in the model first;\n"                 \
    "minutes=10 by default), then a table of before and after (`rly --tune\n"                      \
    "[MINUTES] FILE`).")                                                                           \
  X(seed, "seed", "N", NONE, cmd_seed, "set @prng_state to random.key(N)", NULL)                   \
  X(set, "set", "[NAME [VALUE]]", SETTING, repl_cmd_set,                                           \
    "change a setting; alone, show the settings", NULL)                                            \
  X(bind, "bind", "@f FILE", DATA, repl_cmd_bind,                                                  \
    "BindParams: @f's parameters named in a tensor file become constants",                         \
    "FILE is .npz, .safetensors (or .npy); key `w` or `%w` binds parameter %w.\n"                  \
    "Every key must name a parameter of a fitting type.  `:undo` restores the module.")            \
  X(import, "import", "FILE.onnx [as @name]", FILE, repl_cmd_import,                               \
    "import an ONNX model as a function (@main), its weights bound as constants",                  \
    "The graph's inputs become the parameters; its initializers become\n"                          \
    "constants (BindParams).  The function is ready to call, :print and :pass;\n"                  \
    "`:undo` restores the module.  `rly --import FILE.onnx -o OUT.rly` writes it\n"                \
    "as text with the weights in OUT.npz instead.  Opsets 1 to 18 of ai.onnx:\n"                   \
    "each op is read as the opset the model imports defines it.")                                  \
  X(save, "save", "%x [%y ...] FILE", DATA, repl_cmd_save,                                         \
    "write session tensors to FILE (.npy, .npz or .safetensors)",                                  \
    "Entries are named after the variables; a tuple %t gives t_0, t_1, ...")                       \
  X(load_tensor, "load-tensor", "%x FILE [KEY]", DATA, repl_cmd_load_tensor,                       \
    "bind %x to a tensor read from FILE",                                                          \
    "KEY picks the entry of an .npz or .safetensors file with several.")                           \
  X(extern, "extern", "NAME LIB.so SYMBOL", DATA, repl_cmd_extern,                                 \
    "register an external function for call_tir(\"NAME\", ...)",                                   \
    "SYMBOL is `int f(DLTensor *args, int n, void *ctx, char *err, size_t errn)`:\n"               \
    "inputs then outputs (destination passing), see interp/extern.h.")                             \
  X(kernels, "kernels", "[--compile]", NONE, repl_cmd_kernels,                                     \
    "list the JIT-compiled kernels: signature, compile time, calls, time",                         \
    "A kernel marked (disk) came from the disk cache, loaded in the time shown\n"                  \
    "($XDG_CACHE_HOME/rly); `= @k`: the same TIR as the earlier kernel @k, whose\n"                \
    "code it runs (compiled once).  Then the functions with ? dimensions specialized\n"            \
    "per argument shape (their kernels static), most recently used first.\n"                       \
    "--compile: where each compile went: LLVM\n"                                                   \
    "instructions before and after the passes, object bytes, CPU ms in code generation\n"          \
    "(TIR to LLVM IR), the LLVM passes, emission (instruction selection to object\n"               \
    "code) (CPU time of the compiling thread), loading (ORC linking) and the\n"                    \
    "wall time from the compile's start to loaded; then the totals and the time\n"                 \
    "spent in graph passes, FuseOps and lowering to TIR before the compiles.")                     \
  X(dump, "dump", "tir|llvm|asm @f", DUMP, repl_cmd_dump,                                          \
    "show a function's kernels as TIR, optimized LLVM IR or assembly",                             \
    "@f is a function (its kernels), a prim function or a kernel named by :kernels\n"              \
    "or :profile (`@fused_...`); `:set opt` picks the optimization level.")                        \
  X(time, "time", "EXPR [-n N]", EXPR, repl_cmd_time,                                              \
    "time an expression: first call, then min/median/max of N runs",                               \
    "Without -n, runs for about a second.  GFLOP/s and GB/s: the kernels the\n"                    \
    "first call ran, counted as :profile counts them (a call of @f sums its kernels).\n"           \
    "Values of earlier runs are collected between runs, outside the timing.  The\n"                \
    "CPU time per call (all threads) is shown too: a busy machine inflates wall time.\n"           \
    "`:time @f` of a prim function runs it alone on random inputs (a schedule's steps\n"           \
    "are timed so).")                                                                              \
  X(profile, "profile", "EXPR", EXPR, repl_cmd_profile,                                            \
    "run an expression once and show where its time went",                                         \
    "One row per kernel (JIT kernels by prim function, reference kernels by op):\n"                \
    "calls, time, share of the call, GFLOP/s and GB/s; then compiling, the time\n"                 \
    "outside kernels (evaluator, dispatch) and the total.  A first call includes\n"                \
    "compiling its kernels; run it again for the steady state.  `rly --profile\n"                  \
    "FILE` profiles every expression and let the scripts evaluate.")                               \
  X(dot, "dot", "@f FILE", DEF, repl_cmd_dot,                                                      \
    "draw a function's dataflow graph (.dot, .svg or .png)",                                       \
    "Nodes are op calls (with their key attributes), parameters, constants (shape\n"               \
    "and dtype), tuples, projections and calls; edges carry the values' types;\n"                  \
    "if and match are labelled clusters.  After FuseOps each Primitive function is\n"              \
    "a cluster named after its kernel; after :profile the kernels are coloured by\n"               \
    "their share of the time in kernels, with a legend.  .svg and .png are laid out\n"             \
    "by Graphviz (over " DRAW_DOT_NODES_TEXT                                                       \
    " nodes: placed in rows, edges without types).\n"                                              \
    "`rly --dot @f FILE.rly -o OUT.svg` draws from the command line.")                             \
  X(emit, "emit", "@f OUT.onnx", DEF, repl_cmd_emit,                                               \
    "write a function (after the passes run on it) as an ONNX model",                              \
    "Parameters become graph inputs (a named or `?` dim a dim_param), constants\n"                 \
    "(bound weights) initializers, op calls nodes, a tuple result several\n"                       \
    "outputs; the opset is the lowest that holds every op used (at least 13).\n"                   \
    "References, ADTs and match, closures, calls of other functions and ops\n"                     \
    "without an ONNX form are refused where they are, and nothing is written.\n"                   \
    "Only .onnx is written for now.  `rly --emit-onnx OUT.onnx FILE` does it\n"                    \
    "from the command line.")                                                                      \
  X(bindings, "bindings", "[name|size]", NONE, repl_cmd_bindings,                                  \
    "list the session variables: type, bytes of tensor data, total, memory limit",                 \
    "Sorted by name, or by size (largest first).  Storage several variables share\n"               \
    "is marked (shared) and counted once in the total.")                                           \
  X(del, "del", "%x [%y ...]", DATA, repl_cmd_del,                                                 \
    "remove session variables and free their values",                                              \
    "Says how many bytes of tensor data left memory (nothing when another\n"                       \
    "variable still holds the data).  Later inputs no longer see the names.")                      \
  X(write, "write", "FILE.rly [@f ...]", DATA, repl_cmd_write,                                     \
    "write your definitions as a module that reads back the same",                                 \
    "Types, functions, state globals and prim functions (prelude definitions only\n"               \
    "where you replaced them); large constants go in its #[metadata] section.\n"                   \
    "With @f ..., those definitions and what they use.  `:load FILE` reads it back.")              \
  X(doc, "doc", "OP", OP, repl_cmd_doc,                                                            \
    "an op's signature, type rule, exec modes, gradient, meaning and example",                     \
    "Read from the op's registry row (`rly --list-ops` lists every op's\n"                         \
    "signature).  `:help OP` shows the same page.")                                                \
  X(info, "info", "OP | @f | %x", OP, repl_cmd_info,                                               \
    "what a name is: an op, a function or a session variable",                                     \
    "An op: its :doc page.  @f: its type, where it was defined, its size, the\n"                   \
    "functions it calls and those that call it.  %x: its type and size in bytes.")

static RunStatus cmd_help(Session *s, const char *args, Span where);
static RunStatus cmd_quit(Session *s, const char *args, Span where);
static RunStatus cmd_type(Session *s, const char *args, Span where);
static RunStatus cmd_load(Session *s, const char *args, Span where);
static RunStatus cmd_reload(Session *s, const char *args, Span where);
static RunStatus cmd_print(Session *s, const char *args, Span where);
static RunStatus cmd_browse(Session *s, const char *args, Span where);
static RunStatus cmd_reset(Session *s, const char *args, Span where);
static RunStatus cmd_seed(Session *s, const char *args, Span where);

typedef struct Command {
  const char *name, *args, *help, *more;
  CmdFn fn;
  CmdComplete complete;
} Command;

static const Command commands[] = {
#define X(id, name, args, complete, fn, help, more) \
  {name, args, help, more, fn, COMPLETE_##complete},
    REPL_COMMANDS(X)
#undef X
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const char *const command_names[] = {
#define X(id, name, args, complete, fn, help, more) name,
    REPL_COMMANDS(X)
#undef X
        NULL};

const char *const *cmd_names(void) { return command_names; }

/* ───────────────────────── lookup ───────────────────────── */

static int edit_distance(const char *a, const char *b) {
  size_t n = strlen(b);
  if (n > 63) return 99;
  int row[64];
  for (size_t j = 0; j <= n; j++) row[j] = (int)j;
  for (size_t i = 1; a[i - 1]; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= n; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up, row[j] = best;
    }
  }
  return row[n];
}

const char *repl_nearest(const char *const *names, const char *word) {
  const char *best = NULL;
  int bd = 1 << 20;
  for (int i = 0; names[i]; i++) {
    int d = edit_distance(word, names[i]);
    if (d < bd) bd = d, best = names[i];
  }
  int len = (int)strlen(word);
  return best && bd <= (len < 4 ? 1 : len / 2) ? best : NULL;
}

/* An exact name, else the first command (table order) the word prefixes. */
static const Command *find_command(const char *word) {
  if (strcmp(word, "?") == 0) return &commands[0];
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, word) == 0) return &commands[i];
  size_t n = strlen(word);
  for (int i = 0; n && i < NCOMMANDS; i++)
    if (strncmp(commands[i].name, word, n) == 0) return &commands[i];
  return NULL;
}

const char *cmd_resolve(const char *word) {
  const Command *c = find_command(word);
  return c ? c->name : NULL;
}

CmdComplete cmd_completion(const char *name) {
  const Command *c = find_command(name);
  return c ? c->complete : COMPLETE_NONE;
}

bool cmd_wants_file(const char *name) {
  CmdComplete k = cmd_completion(name);
  return k == COMPLETE_FILE || k == COMPLETE_DATA;
}

static void unknown_command(Session *s, const char *word, Span sp) {
  const char *near = repl_nearest(command_names, word);
  char hint[128];
  if (near)
    snprintf(hint, sizeof hint, "did you mean `:%s`?", near);
  else
    snprintf(hint, sizeof hint, "`:help` lists the commands");
  session_error(s, sp, hint, "unknown command `:%s`", word);
}

/* Runs one `:` line: splits the command word from its arguments (trimmed)
 * and gives the handler a span of the arguments, or of the name when there
 * are none, so its errors point into the line. */
RunStatus cmd_run(Session *s, const char *line, Span where) {
  size_t n = 0;
  while (line[n] && (isalnum((unsigned char)line[n]) || strchr("-_?", line[n]))) n++;
  char word[64];
  snprintf(word, sizeof word, "%.*s", (int)(n < 63 ? n : 63), line);
  Span name_sp = span_make(where.off + 1, n);
  if (!n) {
    session_error(s, where, "`:help` lists the commands", "expected a command name after `:`");
    return RUN_ERROR;
  }
  const Command *c = find_command(word);
  if (!c) return unknown_command(s, word, name_sp), RUN_ERROR;
  size_t a = n, e = strlen(line);
  while (line[a] == ' ' || line[a] == '\t') a++;
  while (e > a && isspace((unsigned char)line[e - 1])) e--;
  char *args = strndup(line + a, e - a);
  if (!args) rly_oom();
  Span arg_sp = span_make(where.off + 1 + (uint32_t)a, e - a);
  if (!arg_sp.len) arg_sp = name_sp;
  const char *outer = s->doing;
  char *doing = malloc(strlen(line) + 2);
  if (!doing) rly_oom();
  sprintf(doing, ":%s", line);
  s->doing = doing;
  RunStatus st = c->fn(s, args, arg_sp);
  s->doing = outer;
  free(doing);
  free(args);
  fflush(stdout);
  return st;
}

static RunStatus usage_error(Session *s, const char *name, Span where) {
  const Command *c = find_command(name);
  char hint[160];
  snprintf(hint, sizeof hint, "usage: :%s %s", c->name, c->args);
  session_error(s, where, hint, ":%s needs %s", c->name, c->args);
  return RUN_ERROR;
}

/* ───────────────────────── :help, :quit ───────────────────────── */

static void help_all(void) {
  puts("Commands (a prefix is enough: :t is :type, :r is :reload):");
  for (int i = 0; i < NCOMMANDS; i++) {
    char head[64];
    snprintf(head, sizeof head, ":%s %s", commands[i].name, commands[i].args);
    printf("  %-28s %s\n", head, commands[i].help);
  }
  puts("Input:");
  puts("  def @f(...) { ... }, type T { ... }, global @g: T = e;, prim @p(...) { ... }");
  puts("  an expression: evaluated and its value printed (%_ is the last value)");
  puts("  let %x = e;   binds %x for the rest of the session");
  puts("Keys: Tab completes, Ctrl-C clears the line or stops an evaluation, Ctrl-D quits.");
}

static RunStatus cmd_help(Session *s, const char *args, Span where) {
  if (!*args) return help_all(), RUN_OK;
  const char *w = args[0] == ':' ? args + 1 : args;
  const Command *c = find_command(w);
  int op = c || args[0] == ':' ? -1 : ops_lookup(w);
  if (op >= 0) return repl_op_doc(s, op), RUN_OK;
  if (!c) return unknown_command(s, w, where), RUN_ERROR;
  printf(":%s %s\n  %s\n", c->name, c->args, c->help);
  if (c->more) printf("%s\n", c->more);
  if (c->fn == repl_cmd_set) settings_help();
  if (c->fn == repl_cmd_pass || c->fn == repl_cmd_step) repl_pass_help();
  if (c->fn == repl_cmd_sched) repl_sched_help();
  return RUN_OK;
}

static RunStatus cmd_quit(Session *s, const char *args, Span where) { return RUN_QUIT; }

/* ───────────────────────── :load, :reload, :reset ───────────────────────── */

static char *unquote(const char *a) {
  size_t n = strlen(a);
  if (n >= 2 && (a[0] == '"' || a[0] == '\'') && a[n - 1] == a[0]) return strndup(a + 1, n - 2);
  return strdup(a);
}

static RunStatus cmd_load(Session *s, const char *args, Span where) {
  if (!*args) return usage_error(s, "load", where);
  char *arg = unquote(args);
  if (!arg) rly_oom();
  char *path = session_path(s, arg, where); /* beside the script a :load comes from */
  free(arg), free(s->last_load);
  s->last_load = strdup(path);
  RunStatus st = session_load(s, path, where);
  free(path);
  return st;
}

static RunStatus cmd_reload(Session *s, const char *args, Span where) {
  if (!s->last_load) {
    session_error(s, where, "use `:load FILE` first", "nothing to reload");
    return RUN_ERROR;
  }
  return session_load(s, s->last_load, where);
}

static RunStatus cmd_reset(Session *s, const char *args, Span where) {
  if (s->nloads) {
    session_error(s, where, NULL, "`:reset` cannot be used in a file being loaded");
    return RUN_ERROR;
  }
  session_reset(s);
  puts("session reset: definitions and variables forgotten");
  return RUN_OK;
}

/* ───────────────────────── :type ───────────────────────── */

static RunStatus cmd_type(Session *s, const char *args, Span where) {
  if (!*args) return usage_error(s, "type", where);
  Arena a;
  arena_init(&a);
  Module view;
  Expr *e = session_parse_expr(s, where, &a, &view);
  if (e) {
    FuncDef *f = e->kind == EX_GLOBAL ? module_func(session_module(s), e->u.global.name) : NULL;
    char *ty = print_type(f && f->ty ? f->ty : e->ty);
    puts(ty);
    free(ty);
  }
  arena_free(&a);
  return e ? RUN_OK : RUN_ERROR;
}

/* ───────────────────────── :print, :browse ───────────────────────── */

static bool builtin(const Def *d) { return d->kind == DEF_GLOBAL && d->u.global->builtin; }

static bool user_def(const Session *s, const Def *d) {
  return !builtin(d) && !session_is_prelude(s, d);
}

/* The definition `@f`, `f` or `T` names, or NULL. */
static const Def *find_def(const Module *m, const char *name) {
  const char *n = name[0] == '@' ? name + 1 : name;
  const Def *d = module_lookup(m, n);
  if (d || name[0] == '@') return d;
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_ADT && strcmp(m->defs[i].u.adt->name, n) == 0) return &m->defs[i];
  return NULL;
}

/* Prints defs as a module; constants over PRINT_DISPLAY_META_LIMIT elements
 * show as meta[relay.Constant][i], with the #[metadata] section (`meta`)
 * or a line saying how to get it. */
static void print_defs(Session *s, const Def *const *defs, int n, bool meta) {
  Arena a;
  arena_init(&a);
  Module *t = ARENA_NEW(&a, Module);
  t->arena = &a;
  for (int i = 0; i < n; i++) module_add(t, *defs[i]);
  PrintOptions opt = {.types = s->show_types,
                      .meta_limit = PRINT_DISPLAY_META_LIMIT,
                      .header = meta,
                      .meta_section = meta};
  int64_t nmeta = 0;
  char *text = print_module_meta(t, opt, &nmeta);
  fputs(text, stdout);
  free(text);
  if (nmeta && !meta)
    printf("// metadata omitted (%" PRId64
           " constant%s): `:print ... meta` adds the #[metadata] "
           "section\n",
           nmeta, nmeta == 1 ? "" : "s");
  strmap_free(&t->globals), strmap_free(&t->types), strmap_free(&t->ctors);
  arena_free(&a);
}

/* Whether args is `word` or ends in ` word`; buf gets the rest, trimmed. */
static bool take_last_word(const char *args, const char *word, char *buf, size_t cap) {
  size_t n = strlen(args), w = strlen(word);
  if (n < w || strcmp(args + n - w, word) != 0 || (n > w && args[n - w - 1] != ' ')) return false;
  size_t k = n - w;
  while (k && args[k - 1] == ' ') k--;
  if (k >= cap) return false;
  memcpy(buf, args, k), buf[k] = 0;
  return true;
}

/* Prints one definition, the user's definitions, or with `prelude` the
 * prelude's (builtins left out); a last word `meta` adds the metadata. */
/* `--unscheduled` in args: removed (args rewritten into buf). */
static bool take_flag(const char **args, const char *flag, char *buf, size_t n) {
  const char *at = strstr(*args, flag);
  if (!at || strlen(*args) >= n) return false;
  size_t k = (size_t)(at - *args), len = strlen(flag);
  snprintf(buf, n, "%.*s%s", (int)k, *args, at + len);
  size_t b = strspn(buf, " \t"), e = strlen(buf);
  while (e > b && (buf[e - 1] == ' ' || buf[e - 1] == '\t')) buf[--e] = 0;
  memmove(buf, buf + b, e - b + 1);
  *args = buf;
  return true;
}

/* `:print --tvmscript [--unscheduled] [@f]`: a prim function, or all of the user's. */
static RunStatus print_tvmscript(Session *s, const char *args, bool unscheduled, Span where) {
  StrBuf b = {0};
  PtrVec v = {0};
  const Def *d = *args ? find_def(session_module(s), args) : NULL;
  if (*args && (!d || d->kind != DEF_PRIM)) {
    session_error(s, where, "`:print --tvmscript` prints prim functions", "%s `%s`",
                  d ? "not a prim function:" : "no definition named", args);
    return RUN_ERROR;
  }
  for (int i = 0; !d && i < session_module(s)->ndefs; i++)
    if (user_def(s, &session_module(s)->defs[i])) vec_push(&v, &session_module(s)->defs[i]);
  if (d)
    print_tvmscript_prim_to(
        &b, unscheduled && d->u.prim->unscheduled ? d->u.prim->unscheduled : d->u.prim, 0);
  else
    print_tvmscript_module_to(&b, (const Def *const *)v.items, (int)v.len);
  fputs(b.data, stdout);
  sb_free(&b), vec_free(&v);
  return RUN_OK;
}

static RunStatus cmd_print(Session *s, const char *args, Span where) {
  char buf[256], flagbuf[256];
  bool unscheduled = take_flag(&args, "--unscheduled", flagbuf, sizeof flagbuf);
  if (!strncmp(args, "--tvmscript", 11) && (!args[11] || args[11] == ' '))
    return print_tvmscript(s, args + 11 + strspn(args + 11, " "), unscheduled, where);
  bool meta = take_last_word(args, "meta", buf, sizeof buf);
  if (meta) args = buf;
  const Def *pd = *args ? find_def(session_module(s), args) : NULL;
  if (pd && pd->kind == DEF_PRIM)
    return repl_print_prim(s, def_name(pd), unscheduled, where) ? RUN_OK : RUN_ERROR;
  if (unscheduled) {
    session_error(s, where, "usage: :print --unscheduled @f",
                  "`--unscheduled` needs a prim function");
    return RUN_ERROR;
  }
  bool prelude = strcmp(args, "prelude") == 0;
  PtrVec v = {0};
  if (*args && !prelude) {
    const Def *d = find_def(session_module(s), args);
    if (!d) {
      session_error(s, where, "`:browse` lists the definitions", "no definition named `%s`", args);
      return RUN_ERROR;
    }
    vec_push(&v, (void *)d);
  }
  for (int i = 0; !*args || prelude ? i < session_module(s)->ndefs : 0; i++) {
    const Def *d = &session_module(s)->defs[i];
    bool mine = user_def(s, d);
    if ((prelude && !mine && !builtin(d)) || (!prelude && mine)) vec_push(&v, (void *)d);
  }
  if (v.len)
    print_defs(s, (const Def *const *)v.items, (int)v.len, meta);
  else
    puts("(no definitions)");
  vec_free(&v);
  return RUN_OK;
}

/* A type on one line for `:browse`: `type T[A] { C1(A), C2 }`. */
static void browse_adt(const AdtDef *t) {
  StrBuf b = {0};
  sb_printf(&b, "%stype %s", t->is_extern ? "extern " : "", t->name);
  for (int i = 0; i < t->ntparams; i++) sb_printf(&b, "%s%s", i ? ", " : "[", t->tparams[i]);
  if (t->ntparams) sb_putc(&b, ']');
  if (!t->is_extern) sb_puts(&b, " {");
  for (int c = 0; c < t->nctors; c++) {
    sb_printf(&b, "%s %s", c ? "," : "", t->ctors[c].name);
    for (int f = 0; f < t->ctors[c].nfields; f++) {
      sb_puts(&b, f ? ", " : "(");
      print_type_to(&b, t->ctors[c].fields[f]);
    }
    if (t->ctors[c].nfields) sb_putc(&b, ')');
  }
  if (!t->is_extern) sb_puts(&b, " }");
  puts(b.data);
  sb_free(&b);
}

static void browse_def(const Def *d) {
  char *ty = NULL;
  switch (d->kind) {
    case DEF_ADT:
      browse_adt(d->u.adt);
      return;
    case DEF_FUNC:
      ty = d->u.func->ty ? session_def_line("", d->u.func->name, d->u.func->ty) : NULL;
      if (ty)
        puts(ty);
      else
        printf("@%s : ?\n", d->u.func->name);
      break;
    case DEF_GLOBAL:
      ty = print_type(d->u.global->type);
      printf("global @%s : %s\n", d->u.global->name, ty);
      break;
    case DEF_PRIM:
      printf("prim @%s\n", d->u.prim->name);
      break;
  }
  free(ty);
}

static RunStatus cmd_browse(Session *s, const char *args, Span where) {
  bool prelude = strcmp(args, "prelude") == 0, filter = *args && !prelude;
  int shown = 0;
  for (int pass = 0; pass < 2; pass++) /* types first, then the rest */
    for (int i = 0; i < session_module(s)->ndefs; i++) {
      const Def *d = &session_module(s)->defs[i];
      if ((d->kind == DEF_ADT) != (pass == 0) || builtin(d)) continue;
      if (filter ? !strstr(def_name(d), args) : prelude == user_def(s, d)) continue;
      browse_def(d);
      shown++;
    }
  if (!shown && filter)
    printf("(no definition name contains `%s`)\n", args);
  else if (!shown)
    puts("(no definitions yet; `:browse prelude` lists the standard library)");
  return RUN_OK;
}

/* ───────────────────────── :seed ───────────────────────── */

static RunStatus cmd_seed(Session *s, const char *args, Span where) {
  char *end;
  errno = 0;
  long long n = strtoll(args, &end, 10);
  if (!*args || *end || errno) {
    session_error(s, where, NULL, "`:seed` needs an integer, not `%s`", args);
    return RUN_ERROR;
  }
  repl_eval_seed(s->ev, n);
  return RUN_OK;
}
