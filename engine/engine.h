/* engine.h — rly's one pipeline, as a library: text → parse → type-check →
 * passes by name → FuseOps and LowerTIR → run, on the JIT's kernels (exec
 * jit) or the reference kernels and the TIR interpreter (exec interp).
 *
 * The REPL and the command line (repl/), the public C API (include/rly.h,
 * engine/api.c) and the tests are shells over this.  Every knob is a row
 * of ENGINE_OPTIONS (engine/options.h), a field of one EngineOptions
 * struct; the environment is read in one place (engine_options_from_env),
 * by the programs at their edge, never by the library's modules.
 * engine_set_options pushes a struct into the modules it concerns (the
 * interpreter, the JIT, its thread pool, the lowering).
 *
 * Invariants:
 * - jit mode never adds an error: what cannot be fused or lowered runs as
 *   written, and without a loadable JIT module the program runs as written
 *   too (the TIR interpreter would be slower than the reference kernels).
 *   LLVM is loaded only when an input can reach a kernel.
 * - A definition is lowered once, cached by its FuncDef pointer (the
 *   session replaces modules, not unchanged definitions); lowered IR lives
 *   in the engine's arena for its lifetime (closures may point into it). */
#ifndef RLY_ENGINE_H
#define RLY_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/options.h"
#include "frontend/onnx.h"
#include "interp/interp.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "parser/parser.h"
#include "passes/pass.h"

const char *exec_mode_name(ExecMode m);

/* The rows' defaults (engine/options.h), with no environment. */
EngineOptions engine_options_default(void);
/* A memory size as a user writes it: bytes, with a K, M, G or T suffix
 * (powers of 1024; KiB, MB, … accepted too), or N% of the physical memory
 * (1 to 100).  *bytes gets it (at least 1); false when the text is not one. */
bool engine_parse_size(const char *text, int64_t *bytes);
/* Overrides o from the rows' environment variables (and the disk cache's
 * directory from $XDG_CACHE_HOME or $HOME): for programs, once, at start-up. */
void engine_options_from_env(EngineOptions *o);

typedef struct Engine Engine;

/* d: where run-time errors go (the caller's, it must outlive the engine). */
Engine *engine_new(const EngineOptions *o, DiagCtx *d);
void engine_free(Engine *e);
const EngineOptions *engine_options(const Engine *e);
/* Wall ms spent so far in the jit mode's graph passes, FuseOps and
 * lowering to TIR (:kernels --compile). */
double engine_lowering_ms(const Engine *e);
/* Applies o: the interpreter's, the JIT's and the pool's settings. */
void engine_set_options(Engine *e, const EngineOptions *o);
/* Makes e's run-time and JIT state current on this thread (engine_new
 * does): before using e from another thread, or after another engine. */
void engine_enter(Engine *e);
Interp *engine_interp(Engine *e);
DiagCtx *engine_diag(Engine *e);

/* ── the pipeline ── */

/* Parses the text registered as `file` into a copy of base (in a) and
 * type-checks its definitions and expressions.  The copy, or NULL after
 * diagnostics (base is untouched either way).  *items gets the script's
 * items (definitions, expressions, session lets, `:` lines); session
 * variables (may be NULL) are visible to expressions. */
Module *engine_parse(Engine *e, const Module *base, Arena *a, uint32_t file, int nsession,
                     Var **session, ParseResult *items);
/* Runs the passes named in `names` ("EffectToState,FuseOps"; "jit": the
 * jit's pipeline, engine_jit_pipeline) on m; the new module, or NULL after
 * diagnostics. */
Module *engine_passes(Engine *e, Module *m, Arena *a, const char *names);

/* Imports the ONNX model at path into a copy of base (in a) as @func
 * (frontend/onnx.h): its parameters are the graph's inputs and its
 * weights.  bind: the weights become constants (BindParams), and *w (may
 * be NULL) gets them anyway; otherwise they stay parameters.  The
 * type-checked copy, or NULL after diagnostics (base is untouched).
 * where: the command that asked, for notes (or {0}). */
Module *engine_import_onnx(Engine *e, const Module *base, Arena *a, const char *path,
                           const char *func, bool bind, Span where, OnnxWeights *w);
/* Writes @func of m as an ONNX model at path (frontend/onnx.h's
 * onnx_export); false after diagnostics, nothing written. */
bool engine_export_onnx(Engine *e, const Module *m, const char *func, const char *path, Span where,
                        OnnxExportInfo *info);

/* The jit mode's view of m: definitions fused and lowered to prim
 * functions plus those prim functions; *ex (may be NULL) is lowered too.
 * NULL when lowering is not possible (then run m as is).  The view
 * belongs to the engine (valid until m changes). */
Module *engine_lowered(Engine *e, Module *m, Expr **ex);

/* The prim functions the jit mode lowered so far (the kernels `:kernels`
 * and `:profile` name): by name (NULL if none), their count, the i-th. */
PrimFunc *engine_kernel(const Engine *e, const char *name);
int engine_kernel_count(const Engine *e);
PrimFunc *engine_kernel_at(const Engine *e, int i);

/* Forgets every lowered definition and kernel (they stay allocated): the
 * next compile lowers again, with the tuning database's kernel records
 * as they are now (after `:tune` recorded a kernel's knobs). */
void engine_relower(Engine *e);

/* The jit mode's pipeline (engine.c's JIT_PIPELINE, the one definition):
 * step i's pass and when it runs (*when may be NULL); NULL past the end. */
const char *engine_jit_step(int i, const char **when);

/* What watches a run of the pipeline: the rewrites (hook), the module after
 * each pass (after), the definitions it is about (scope); all may be NULL. */
typedef struct JitWatch {
  const PassHook *hook;
  const PassScope *scope;
  const PassAfter *after;
  const char *failed; /* out: the graph pass that failed (the rest then ran on m as written) */
  bool stopped;       /* out: the hook stopped the run */
} JitWatch;

/* m through the jit's pipeline exactly as a compile runs it: the graph
 * passes that apply, FuseOps with the jit's options, LowerTIR to call_tir
 * of the engine's prim functions (those the jit compiles, added to the
 * module); allocated in a, NULL when the hook stopped it. */
Module *engine_jit_pipeline(Engine *e, Module *m, Arena *a, JitWatch *w);
/* The jit mode's shape-specialised copies of functions with `?`
 * dimensions (engine/specialize.h), most recently used first: the
 * function, its arguments' shapes, calls, milliseconds to build (type, lower, compile). */
typedef struct EngineSpecInfo {
  const char *name;
  const char *shapes;
  uint64_t calls;
  double build_ms;
} EngineSpecInfo;
int engine_spec_count(const Engine *e);
bool engine_spec_info(const Engine *e, int i, EngineSpecInfo *out);

/* The name of the kernel (prim function) the jit mode lowers a Primitive
 * function to, or NULL when it cannot be lowered. */
const char *engine_kernel_name(Engine *e, const Function *prim);

/* Evaluates ex (type-checked) against m in the exec mode: the value
 * (rooted until the next evaluation) or NULL after a diagnostic.  bind
 * (may be NULL) roots it as a session variable. */
Value *engine_eval(Engine *e, Module *m, Expr *ex, Var *bind);
/* The value as text (text-format.md part D; malloc'd). */
char *engine_format(Engine *e, const Value *v);

void engine_unbind(Engine *e, Var *v);     /* release a replaced variable's value */
void engine_collect(Engine *e);            /* collect unreachable values now (:time) */
void engine_seed(Engine *e, int64_t seed); /* @prng_state = random.key(seed) */
void engine_interrupt(void);               /* async-signal-safe */

/* ── the program: module, prelude, session variables, transactions ──
 *
 * An engine keeps the program a session builds up (program.c, input.c,
 * prelude.c): the current module, the base module it starts from (the
 * prelude's definitions, or none), the session variables (`let %x = e;`)
 * and a stack of transactions.  The current module is never edited in
 * place: text is parsed into a copy that replaces it only when everything
 * checked, and a transaction makes several steps (inputs, their
 * evaluation, passes) one that either all happens or leaves the program as
 * it was.  The REPL (:load) and the C API (rly_load_text) both work so. */

/* Parses the built-in prelude into the base module (before any input) and
 * starts the current module from it; false, with diagnostics, when it does
 * not check (then the base module stays empty). */
bool engine_load_prelude(Engine *e);
Module *engine_module(const Engine *e);
const Module *engine_base(const Engine *e);
/* Makes m current and returns the module it replaces for the caller to
 * keep (an undo step) or free (module_free); NULL when the engine keeps it
 * (the base, or a module an open transaction may roll back to). */
Module *engine_replace_module(Engine *e, Module *m);
/* The same, freeing the replaced module. */
void engine_set_module(Engine *e, Module *m);
/* Forgets definitions (the current module becomes a copy of the base, in a
 * or, when NULL, the engine's memory), session variables and run-time
 * state. */
void engine_reset(Engine *e, Arena *a);
/* Is d, by its identity, still the prelude's definition of its name? */
bool engine_is_prelude_def(const Engine *e, const Def *d);

/* Session variables: the latest binding per name, visible to the
 * expressions of later inputs.  engine_var_set binds v's name to v; the
 * value of the variable it replaces is released unless a transaction may
 * bring that variable back. */
Var *const *engine_vars(const Engine *e, int *n);
Var *engine_var(const Engine *e, const char *name); /* NULL if none */
void engine_var_set(Engine *e, Var *v);
/* Removes v's binding (later inputs no longer see it) and frees its value
 * when nothing else holds it: the bytes of tensor data that left memory,
 * or -1 inside a transaction that may bring v back (freed at its end). */
int64_t engine_var_del(Engine *e, Var *v);
/* What a session variable's value holds: bytes of tensor data (each
 * buffer once, views included), and how much of it another variable
 * holds too. */
typedef struct EngineVarSize {
  Var *var;
  size_t bytes, shared;
} EngineVarSize;
/* One row per session variable, in binding order (malloc'd, *n rows);
 * *total: the bytes of all of them, shared buffers counted once. */
EngineVarSize *engine_var_sizes(Engine *e, int *n, size_t *total);

/* Transactions nest (up to 16; begin returns false beyond).  end(ok):
 * keep what happened since the matching begin, or roll the module and the
 * session variables back to what they were there. */
bool engine_txn_begin(Engine *e);
void engine_txn_end(Engine *e, bool ok);
int engine_txn_depth(const Engine *e);

/* What a quick lexical pass over a text finds before parsing: its `:`
 * command lines (where a shell splits it) and the names it defines ("@f",
 * "T", constructor names), so that prelude definitions it replaces can be
 * left out first. */
typedef struct EngineScan {
  Span *cmds; /* offsets in the scanned text (not registered anywhere) */
  int ncmds, capcmds;
  PtrVec names;                      /* malloc'd */
  const volatile sig_atomic_t *stop; /* set by the caller: Ctrl-C ends the scan (DiagCtx.stop) */
} EngineScan;
void engine_scan(const char *name, const char *text, size_t len, EngineScan *out);
void engine_scan_free(EngineScan *sc);

/* One input (a script, or a part of one between `:` lines): the copy of
 * the module it was parsed into and its items. */
typedef struct EngineInput {
  Module *m;
  ParseResult r;
  int ndefs;              /* definitions among the items */
  int nrederived;         /* derived definitions the input rederived (engine_rederive) */
  const char **rederived; /* "@f_grad (Gradient @f)" each, in the input's arena */
  int ntuned;             /* prim functions scheduled from the tuning database */
  const char **tuned;     /* "@f (N steps)" each (engine/tune.h) */
} EngineInput;

/* Parses `file` (registered in the engine's DiagCtx) into a copy of the
 * current module allocated in a, without the prelude definitions the text
 * replaces (scan: its engine_scan, or NULL) and those that depend on them;
 * session variables are visible.  Then type-checks its definitions (a
 * brand-new function, global or prim alone; anything that replaces a
 * definition or defines a type or several things with the whole module),
 * then its expressions and lets in order.  last (%_, may be NULL) has each
 * expression's type for the items after it, and its own back at the end.
 * False after diagnostics (in->r.incomplete: the first error is at the end
 * of the text); the current module is untouched either way. */
bool engine_input_check(Engine *e, EngineInput *in, Arena *a, uint32_t file, uint32_t from,
                        uint32_t to, const EngineScan *scan, Var *last);
/* Makes a checked input's module current when it defines anything, and
 * marks the definitions that replace the prelude's as new (not
 * `replaced`).  Returns the module it replaced, for the caller to keep (an
 * undo step) or free, as engine_replace_module.  The caller then evaluates
 * its expressions and lets (engine_eval against engine_module,
 * engine_var_set for a let). */
Module *engine_input_commit(Engine *e, EngineInput *in);
/* ── derived definitions (derived.c) ──
 *
 * A pipeline that adds definitions at the session's request (`:pass
 * Gradient @f` adds @f_grad) records them as derived from @f and what @f
 * uses.  An input that redefines any of those rederives them
 * (engine_input_check runs the pipeline again on the input's module); when
 * that fails, the derived definition is stale: a warning says so and inputs
 * that use it are refused until the pass is run again. */

/* Records the definitions `after` has and `before` lacks as derived from
 * @src by the pipeline `passes` (as `:pass` was given it; src NULL: none
 * recorded). */
void engine_derived_add(Engine *e, const Module *before, const Module *after, const char *passes,
                        const char *src);
/* The source function of m's definition `name` when it is a stale derived
 * one (*passes, may be NULL, gets its pipeline), else NULL. */
const char *engine_derived_stale(const Engine *e, const Module *m, const char *name,
                                 const char **passes);
/* Rederives in place m's stale derived definitions derived from one of
 * `names` (the definitions an input gives), allocating in a (where: the
 * input, for the warnings of those that fail); pushes "@f_grad (Gradient
 * @f)" for each success onto done (may be NULL).  How many it tried. */
int engine_rederive(Engine *e, Module *m, Arena *a, Span where, const PtrVec *names, PtrVec *done);
/* False, after an error per use, when x uses a stale derived definition
 * of m. */
bool engine_refuse_stale(Engine *e, const Module *m, Expr *x);

/* The type an ITEM_DEF of a type defined, in the input's module m. */
AdtDef *engine_item_adt(const Module *m, const ScriptItem *it);

#endif
