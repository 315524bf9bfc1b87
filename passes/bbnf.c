/* bbnf.c — ToBasicBlockNormalForm.
 *
 * Our definition (TVM's idea — each value belongs to one block, a value
 * used by several blocks is bound in a block enclosing them — made concrete
 * for an IR whose blocks are scopes):
 *   - a block (def/function body, if branch, match clause, dataflow body) is
 *     ONE flat let chain: no let value is itself a let chain;
 *   - let chains and control flow (if, match, dataflow, free_var) appear only
 *     as a whole let value or as a block's result, never inside an operand
 *     (call argument, tuple field, projection, condition, reference op);
 *   - everything else keeps its graph form: `nn.relu(nn.dense(%x, %w))`
 *     stays nested.
 * So each block reads as straight-line code with branching only at
 * bindings — the form in which EffectToState's state threading is a walk
 * down one chain per block (seed 001).  The engine is anf.c's normalizer;
 * this file decides what must leave an operand position.  Lifting an
 * operand keeps evaluation order: earlier non-atomic operands of the same
 * node are bound first. */
#include "passes/pass_int.h"

bool bbnf_is_control(const Expr *e) {
  switch (e->kind) {
    case EX_LET:
    case EX_FREE_VAR:
    case EX_IF:
    case EX_MATCH:
    case EX_DATAFLOW:
      return true;
    default:
      return false;
  }
}

/* Recursion follows operand nesting only: a let / control node answers at
 * once without looking at its chain, and function bodies are not operands. */
bool bbnf_needs_lift(PtrMap *memo, const Expr *e) {
  if (bbnf_is_control(e)) return true;
  uintptr_t known = (uintptr_t)ptrmap_get(memo, e);
  if (known) return known == 2;
  bool lift = false;
  for (int i = 0; i < expr_nchildren(e) && !lift; i++)
    if (expr_child_role(e, i) == EXPR_OPERAND) lift = bbnf_needs_lift(memo, expr_child(e, i));
  ptrmap_put(memo, e, (void *)(uintptr_t)(lift ? 2 : 1));
  return lift;
}

Module *pass_to_bbnf(PassCtx *pc, Module *in) { return pass_normalize(pc, in, NORM_BBNF); }
