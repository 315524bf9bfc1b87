/* eval_interp.c — the evaluator: the AST interpreter (interp/interp.h).
 *
 * A value bound to a session variable is rooted by interp_bind; the value
 * of an expression stays rooted until the next evaluation, long enough to
 * print it. */
#include <stdlib.h>

#include "interp/interp.h"
#include "repl/repl.h"

struct Evaluator {
  Interp *in;
};

Evaluator *repl_eval_new(DiagCtx *d) {
  Evaluator *ev = calloc(1, sizeof *ev);
  if (!ev) rly_oom();
  ev->in = interp_new(d);
  return ev;
}

void repl_eval_free(Evaluator *ev) {
  if (!ev) return;
  interp_free(ev->in);
  free(ev);
}

bool repl_eval(Evaluator *ev, Module *m, Expr *e, Var *bind, char **text) {
  *text = NULL;
  Value *v = interp_eval(ev->in, m, e);
  if (!v) return false;
  if (bind) interp_bind(ev->in, bind, v);
  *text = interp_format(ev->in, v);
  return true;
}

void repl_eval_unbind(Evaluator *ev, Var *v) { interp_bind(ev->in, v, NULL); }
void repl_eval_reset(Evaluator *ev) { interp_reset(ev->in); }
void repl_eval_set_print_limit(Evaluator *ev, int64_t n) {
  interp_options(ev->in)->print_limit = n;
}
void repl_eval_set_max_depth(Evaluator *ev, int64_t n) { interp_options(ev->in)->max_depth = n; }
int64_t repl_eval_max_depth(Evaluator *ev) { return interp_options(ev->in)->max_depth; }
void repl_eval_set_prng_original(Evaluator *ev, bool original) {
  interp_options(ev->in)->prng_original = original;
}
bool repl_eval_prng_original(Evaluator *ev) { return interp_options(ev->in)->prng_original; }
void repl_eval_set_exec_jit(Evaluator *ev, bool jit) { interp_options(ev->in)->exec_jit = jit; }
bool repl_eval_exec_jit(Evaluator *ev) { return interp_options(ev->in)->exec_jit; }
void repl_eval_interrupt(void) { interp_interrupt(); }
void repl_eval_seed(Evaluator *ev, int64_t seed) { interp_seed(ev->in, seed); }
