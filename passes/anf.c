/* anf.c — ToANormalForm, and the normalizer it shares with
 * ToBasicBlockNormalForm (bbnf.c).
 *
 * A block is a def body, a function body, an if branch, a match clause body
 * or a dataflow body.  The normalizer rebuilds each block as ONE let chain:
 * a let whose value is itself a let chain is flattened into the enclosing
 * block (variables are unique objects, so no capture can happen; the printer
 * renames shadowing names).  Evaluation order is preserved: bindings are
 * emitted in the order the interpreter evaluates (callee, then arguments
 * left to right; condition before branches).
 *
 * A-normal form (TVM's ToANormalForm, our definition): every operand of a
 * call, tuple, projection, if condition, match scrutinee and reference op is
 * an atom (variable, constant, operator, constructor, global function), and
 * every block ends in an atom; anything else is bound to a fresh `%N`.  A
 * state global (`@prng_state`) is not an atom (reading it observes the
 * current state) except as the operand of `ref(...)`, which aliases it.
 *
 * Rules reported to the hook: "bind" (a subexpression got its own binding),
 * "flatten-let" (a nested let chain moved into its block), "lift" (BBNF: a
 * let chain or control flow left an operand position).
 *
 * A node reachable twice (a DAG built by a pass) is bound once per block
 * chain: uses in the same block or a block nested in it reuse the variable;
 * a use elsewhere evaluates it again (what the interpreter does).
 *
 * Invariant: no recursion on the length of a let chain: norm_chain loops;
 * recursion follows nesting only.  1,000,000 bindings are fine. */
#include <stdlib.h>

#include "passes/pass_int.h"

typedef struct Memo {
  Var *var;
  size_t block;
} Memo;

typedef struct Norm {
  PassCtx *pc;
  Arena *a;
  const Module *m;
  NormMode mode;
  PtrMap memo;   /* original Expr* → Memo* (bound already) */
  PtrMap lift;   /* bbnf_needs_lift memo */
  uint8_t *open; /* open[block id]: the block is being built */
  size_t nblocks, capblocks;
  size_t cur; /* the innermost open block */
} Norm;

static Expr *norm_value(Norm *N, RwBlock *b, Expr *e);
static Expr *norm_block(Norm *N, Expr *e);

/* ───────────────────────────── blocks ───────────────────────────── */

static size_t block_open(Norm *N) {
  if (N->nblocks == N->capblocks) {
    N->capblocks = N->capblocks ? N->capblocks * 2 : 64;
    N->open = realloc(N->open, N->capblocks);
    if (!N->open) rly_oom();
  }
  N->open[N->nblocks] = 1;
  return N->nblocks++;
}

static Expr *memo_get(Norm *N, const Expr *e) {
  Memo *mo = ptrmap_get(&N->memo, e);
  return mo && N->open[mo->block] ? expr_var(N->a, mo->var, e->span) : NULL;
}

/* Binds value (the normalized form of orig) to a fresh temporary. */
static Expr *bind_fresh(Norm *N, RwBlock *b, Expr *orig, Expr *value, const char *rule) {
  Var *v = rw_graph_var(N->a, orig->span);
  rw_block_bind(b, v, value, orig->span);
  Memo *mo = ARENA_NEW(&N->pc->scratch, Memo);
  mo->var = v, mo->block = N->cur;
  ptrmap_put(&N->memo, orig, mo);
  Expr *ref = expr_var(N->a, v, orig->span);
  pass_report(N->pc, rule, orig, ref, orig->span);
  return ref;
}

/* ───────────────────────────── operands ───────────────────────────── */

static bool keep_inline(Norm *N, const Expr *e) {
  if (rw_is_atom(N->m, e)) return true;
  return N->mode == NORM_BBNF && !bbnf_is_control(e);
}

/* An operand: an atom in ANF; in BBNF a nested expression without blocks. */
static Expr *operand(Norm *N, RwBlock *b, Expr *e) {
  if (rw_is_atom(N->m, e)) return e;
  Expr *hit = memo_get(N, e);
  if (hit) return hit;
  Expr *v = norm_value(N, b, e);
  if (keep_inline(N, e)) return v;
  return bind_fresh(N, b, e, v, N->mode == NORM_ANF ? "bind" : "lift");
}

/* Operands left to right.  BBNF: when a later operand must be lifted, the
 * earlier non-atomic ones are bound first so they still run before it. */
static void operands(Norm *N, RwBlock *b, int n, Expr **in, Expr **out) {
  int last = -1;
  if (N->mode == NORM_BBNF)
    for (int i = 0; i < n; i++)
      if (bbnf_needs_lift(&N->lift, in[i])) last = i;
  for (int i = 0; i < n; i++) {
    if (i < last && !rw_is_pure(N->m, in[i])) {
      Expr *hit = memo_get(N, in[i]);
      out[i] = hit ? hit : bind_fresh(N, b, in[i], norm_value(N, b, in[i]), "lift");
    } else {
      out[i] = operand(N, b, in[i]);
    }
  }
}

/* ───────────────────────────── values ───────────────────────────── */

/* Binds a let chain's bindings (values normalized) in block b; returns
 * the chain's result.  A loop: chains may be a million bindings long. */
static Expr *bind_chain(Norm *N, RwBlock *b, Expr *e) {
  while ((e->kind == EX_LET || e->kind == EX_FREE_VAR) && !N->pc->stopped) { /* q or Ctrl-C */
    if (e->kind == EX_FREE_VAR) {
      rw_block_free_var(b, e->u.free_var.var, e->span);
      e = e->u.free_var.body;
      continue;
    }
    Expr *v = norm_value(N, b, e->u.let.value);
    rw_block_bind(b, e->u.let.var, v, e->span);
    e = e->u.let.body;
  }
  return e;
}

/* A let chain inside a value: its bindings join the current block. */
static Expr *norm_chain(Norm *N, RwBlock *b, Expr *e) {
  e = bind_chain(N, b, e);
  return N->pc->stopped ? e : norm_value(N, b, e); /* stopped: the result is dropped */
}

/* The operands through `operands` (in evaluation order), then each block
 * child (function body, branch, clause) as a block of its own. */
static Expr *norm_kids(Norm *N, RwBlock *b, Expr *e) {
  int n = expr_nchildren(e), nops = 0;
  if (!n) return e;
  Arena *s = &N->pc->scratch;
  Expr **in = ARENA_ARRAY(s, Expr *, n), **ops = ARENA_ARRAY(s, Expr *, n),
       **kids = ARENA_ARRAY(s, Expr *, n);
  for (int i = 0; i < n; i++)
    if (expr_child_role(e, i) == EXPR_OPERAND) in[nops++] = expr_child(e, i);
  operands(N, b, nops, in, ops);
  for (int i = 0, k = 0; i < n; i++)
    kids[i] = expr_child_role(e, i) == EXPR_OPERAND ? ops[k++] : norm_block(N, expr_child(e, i));
  return expr_rebuild(N->a, e, kids, n);
}

/* e as a let value: compound is fine, its operands are normalized. */
static Expr *norm_value(Norm *N, RwBlock *b, Expr *e) {
  if (e->kind == EX_LET || e->kind == EX_FREE_VAR) {
    Expr *r = norm_chain(N, b, e);
    pass_report(N->pc, "flatten-let", e, NULL, e->span);
    return r;
  }
  if (e->kind == EX_REF_NEW && e->u.ref_new.init->kind == EX_GLOBAL)
    return e; /* ref(@g) aliases the global */
  return norm_kids(N, b, e);
}

/* ───────────────────────────── blocks ───────────────────────────── */

/* The block's own let chain, then its result (an atom in ANF). */
static Expr *block_tail(Norm *N, RwBlock *b, Expr *e) {
  e = bind_chain(N, b, e);
  if (N->pc->stopped) return e; /* the pass's result is dropped */
  if (N->mode == NORM_ANF) return operand(N, b, e);
  return norm_value(N, b, e);
}

static Expr *norm_block(Norm *N, Expr *e) {
  size_t outer = N->cur;
  N->cur = block_open(N);
  RwBlock b = {0};
  Expr *tail = block_tail(N, &b, e);
  Expr *r = rw_block_finish(N->a, &b, tail);
  N->open[N->cur] = 0;
  N->cur = outer;
  return r;
}

/* ───────────────────────────── entry ───────────────────────────── */

static Function *norm_function(Norm *N, Function *f) {
  Expr *body = norm_block(N, f->body);
  if (expr_equal(body, f->body)) return f;
  return rw_function_with(N->a, f, f->nparams, f->params, f->ret, body);
}

Module *pass_normalize(PassCtx *pc, Module *in, NormMode mode) {
  Module *out = module_copy(in, pc->a);
  Norm N = {.pc = pc, .a = pc->a, .m = in, .mode = mode};
  N.cur = block_open(&N);
  for (int i = 0; i < in->ndefs && !pc->stopped; i++) {
    const Def *d = &in->defs[i];
    if (d->kind != DEF_FUNC || !pass_in_scope(pc, d)) continue;
    pass_enter_def(pc, d->u.func);
    Function *f = norm_function(&N, d->u.func->fn);
    if (f != d->u.func->fn) pass_replace_def(pc, out, d->u.func, f);
  }
  ptrmap_free(&N.memo);
  ptrmap_free(&N.lift);
  free(N.open);
  return out;
}

Module *pass_to_anf(PassCtx *pc, Module *in) { return pass_normalize(pc, in, NORM_ANF); }
