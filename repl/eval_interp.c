/* eval_interp.c — the session's evaluator: a thin layer over the engine
 * (engine/engine.h), which owns the pipeline (fusion, lowering, the JIT,
 * the interpreter) and the options (the REPL's settings change them
 * directly, settings.c).
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

void repl_eval_collect(Evaluator *ev) { engine_collect(ev->e); }
void repl_eval_interrupt(void) { engine_interrupt(); }
void repl_eval_seed(Evaluator *ev, int64_t seed) { engine_seed(ev->e, seed); }
