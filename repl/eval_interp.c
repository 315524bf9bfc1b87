/* eval_interp.c — the session's evaluator: a thin layer over the engine
 * (engine/engine.h), which owns the pipeline (fusion, lowering, the JIT,
 * the interpreter) and the options.  The REPL's settings read and change
 * the engine's EngineOptions through here.
 *
 * A value bound to a session variable is rooted by the engine; the value
 * of an expression stays rooted until the next evaluation, long enough to
 * print it. */
#include <stdlib.h>

#include "engine/engine.h"
#include "repl/repl.h"

struct Evaluator {
  Engine *e;
};

Evaluator *repl_eval_new(DiagCtx *d, const EngineOptions *o) {
  Evaluator *ev = calloc(1, sizeof *ev);
  if (!ev) rly_oom();
  ev->e = engine_new(o, d);
  return ev;
}

void repl_eval_free(Evaluator *ev) {
  if (!ev) return;
  engine_free(ev->e);
  free(ev);
}

Engine *repl_engine(Evaluator *ev) { return ev->e; }

Module *repl_eval_lowered(Evaluator *ev, Module *m, Expr **e) {
  return engine_lowered(ev->e, m, e);
}

bool repl_eval(Evaluator *ev, Module *m, Expr *e, Var *bind, char **text) {
  if (text) *text = NULL;
  Value *v = engine_eval(ev->e, m, e, bind);
  if (!v) return false;
  if (text) *text = engine_format(ev->e, v);
  return true;
}

/* Changes one option through a copy, so the engine applies it everywhere. */
#define SET_OPTION(ev, field, value)             \
  do {                                           \
    EngineOptions o_ = *engine_options((ev)->e); \
    o_.field = (value);                          \
    engine_set_options((ev)->e, &o_);            \
  } while (0)

void repl_eval_unbind(Evaluator *ev, Var *v) { engine_unbind(ev->e, v); }
void repl_eval_reset(Evaluator *ev) { engine_reset(ev->e); }
void repl_eval_collect(Evaluator *ev) { engine_collect(ev->e); }
void repl_eval_set_print_limit(Evaluator *ev, int64_t n) { SET_OPTION(ev, print_limit, n); }
void repl_eval_set_max_depth(Evaluator *ev, int64_t n) { SET_OPTION(ev, max_depth, n); }
int64_t repl_eval_max_depth(Evaluator *ev) { return engine_options(ev->e)->max_depth; }
void repl_eval_set_prng_original(Evaluator *ev, bool original) {
  SET_OPTION(ev, prng_original, original);
}
bool repl_eval_prng_original(Evaluator *ev) { return engine_options(ev->e)->prng_original; }
void repl_eval_set_exec_jit(Evaluator *ev, bool jit) {
  SET_OPTION(ev, exec, jit ? EXEC_JIT : EXEC_INTERP);
}
bool repl_eval_exec_jit(Evaluator *ev) { return engine_options(ev->e)->exec == EXEC_JIT; }
void repl_eval_set_opt_level(Evaluator *ev, int level) { SET_OPTION(ev, opt_level, level); }
int repl_eval_opt_level(Evaluator *ev) { return engine_options(ev->e)->opt_level; }
void repl_eval_interrupt(void) { engine_interrupt(); }
void repl_eval_seed(Evaluator *ev, int64_t seed) { engine_seed(ev->e, seed); }
