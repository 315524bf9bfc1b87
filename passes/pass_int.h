/* pass_int.h — private to the passes of passes/pass.h: the running pass's
 * context, rewrite reporting, and the normalizer shared by ToANormalForm
 * (anf.c) and ToBasicBlockNormalForm (bbnf.c).
 *
 * Invariants: a pass allocates the IR it returns in pc->a and its own
 * temporary data in pc->scratch (freed by the manager after the pass); it
 * reports each rewrite with pass_report before moving on, and stops caring
 * about its result once pc->stopped is set (the manager drops it). */
#ifndef RLY_PASS_INT_H
#define RLY_PASS_INT_H

#include "passes/pass.h"
#include "passes/rewrite.h"

struct PassCtx {
  const PassDef *def;
  Module *in;
  Arena *a;      /* the output module's arena */
  Arena scratch; /* freed when the pass returns */
  DiagCtx *d;
  const PassHook *hook;
  bool stopped;     /* the hook said stop */
  const char *func; /* "@f" while a def is rewritten, for reports */
  const Function *context;
  const PassScope *scope; /* NULL: the whole module */
  bool hidden;       /* the def being rewritten is out of scope: its rewrites are not reported */
  const char *arg;   /* the pass's argument: "f" of `Gradient=@f` or of the scope `@f`; or NULL */
  Span where;        /* where the pass was named (for errors about its argument) */
  const void *input; /* the pass's input besides the module (BindParams: its BindParamsSpec) */
};

/* True when someone listens (so a pass may skip building report data). */
bool pass_listening(const PassCtx *pc);
/* Reports one rewrite (no-op without a hook).  False once stopped. */
bool pass_report(PassCtx *pc, const char *rule, const Expr *before, const Expr *after, Span sp);
bool pass_report_text(PassCtx *pc, const char *rule, const char *before, const char *after,
                      Span sp);
/* Enters a def for reports ("@name", its function). */
void pass_enter_def(PassCtx *pc, const FuncDef *f);
/* Is d in the run's scope?  Function-local passes rewrite only those. */
bool pass_in_scope(const PassCtx *pc, const Def *d);

/* A new FuncDef replacing f in out (same name and span). */
void pass_replace_def(PassCtx *pc, Module *out, const FuncDef *f, Function *fn);

/* The normalizer (anf.c): rewrites every def body into blocks.  In ANF every
 * operand is an atom and every block ends in an atom; in BBNF operands stay
 * nested (graph form) and only let chains and control flow are lifted out
 * of operand positions (bbnf_needs_lift). */
typedef enum NormMode { NORM_ANF, NORM_BBNF } NormMode;

Module *pass_normalize(PassCtx *pc, Module *in, NormMode mode);

/* bbnf.c: does evaluating operand e run a let chain or control flow outside
 * a nested function (so BBNF must lift it into a binding)?  memo: Expr* →
 * (void*)1 / (void*)2 (no / yes), owned by the caller. */
bool bbnf_needs_lift(PtrMap *memo, const Expr *e);
/* bbnf.c: is e itself a block-structured node (let, free_var, if, match,
 * dataflow) that BBNF never leaves in an operand? */
bool bbnf_is_control(const Expr *e);

#endif
