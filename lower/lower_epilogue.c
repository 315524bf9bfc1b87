/* lower_epilogue.c — fuses an elementwise epilogue into the store of the
 * materializing rule that produced its input, after a Primitive function
 * has been lowered (lower/lower_tir.c).
 *
 * A rule that writes loops (a convolution, a product) into an intermediate
 * buffer %T, followed by the elementwise ops of the same group (bias, batch
 * norm arithmetic, relu/clip, a residual add), lowers to
 *
 *   alloc %T: Buffer[S];
 *   ... %T[J] = v; ...                       (the rule's stores into %T)
 *   for %i0, ..., %ik in grid(S) { %out[%i0, ..., %ik] = E; }
 *
 * where E reads %T only at [%i0, ..., %ik].  When the rule marked %T as
 * written whole (lc_mark_total: every element stored, its final value
 * last) and nothing before the nest reads %T, the last nest goes and each
 * store becomes
 *
 *   let %e = v; %out[J] = E[%i := J, %T[...] := %e];
 *
 * so the result is written once, in the tile's registers, instead of
 * being stored, read back and stored again (for MobileNet's convolutions
 * the second pass cost more than the convolution).  The epilogue computes
 * the same operations on the same values: results are bit for bit those of
 * the unfused form. */
#include <string.h>

#include "ir/walk.h"
#include "lower/lower.h"

typedef struct Epi {
  Arena *a;
  Buffer *t, *out;
  int n;         /* rank of %T and %out */
  TirVar **vars; /* the epilogue nest's variables, in index order */
  PrimExpr **at; /* what each stands for at the producer's store */
  TirVar *e;     /* the let holding the produced value */
  int stores;    /* stores into %T outside the epilogue */
  bool bad;      /* %T or %out read or written where it must not be */
} Epi;

/* A single-statement sequence's statement, else s. */
static Stmt *unwrap(Stmt *s) {
  while (s && s->kind == ST_SEQ && s->u.seq.n == 1) s = s->u.seq.items[0];
  return s;
}

static bool dim_is(const PrimExpr *hi, const Dim *d) {
  if (d->kind == DIM_CONST) return hi->kind == PE_INT && hi->u.i == d->value;
  return d->kind == DIM_VAR && hi->kind == PE_VAR && strcmp(hi->u.var->name, d->name) == 0;
}

/* The epilogue nest: loops from 0 over %T's whole shape, one variable per
 * dim in order, around one store into a parameter of %T's shape at those
 * variables.  NULL when s is not one. */
static Stmt *epilogue_store(Epi *x, Stmt *s) {
  int k = 0;
  TirVar *vars[TENSOR_MAX_RANK];
  for (s = unwrap(s); s && s->kind == ST_FOR; s = unwrap(s->u.for_.body))
    for (int i = 0; i < s->u.for_.nvars; i++) {
      if (k >= x->n || tir_for_lo(s, i) || !dim_is(s->u.for_.hi[i], &x->t->dims[k])) return NULL;
      vars[k++] = s->u.for_.vars[i];
    }
  if (!s || s->kind != ST_STORE || k != x->n || s->u.store.n != k || s->u.store.buf == x->t)
    return NULL;
  Buffer *o = s->u.store.buf;
  if (o->ndim != k || o->dtype != x->t->dtype) return NULL;
  for (int i = 0; i < k; i++) {
    const PrimExpr *ix = s->u.store.idx[i];
    if (ix->kind != PE_VAR || ix->u.var != vars[i] || o->dims[i].kind != x->t->dims[i].kind ||
        o->dims[i].value != x->t->dims[i].value)
      return NULL;
  }
  x->vars = arena_alloc(x->a, sizeof *x->vars * (size_t)k);
  memcpy(x->vars, vars, sizeof *vars * (size_t)k);
  x->out = o;
  return s;
}

/* Does E read %T only at the nest's variables (and %out not at all)? */
static bool epi_expr_ok(void *ctx, const PrimExpr *e) {
  Epi *x = ctx;
  if (e->kind != PE_LOAD) return !x->bad;
  if (e->u.load.buf == x->out) x->bad = true;
  if (e->u.load.buf == x->t)
    for (int i = 0; i < x->n; i++) {
      const PrimExpr *ix = e->u.load.idx[i];
      if (ix->kind != PE_VAR || ix->u.var != x->vars[i]) x->bad = true;
    }
  return !x->bad;
}

/* In the producer: stores into %T counted; reads of %T, and any use of
 * %out, forbid the fusion. */
static bool prod_stmt(void *ctx, const Stmt *s) {
  Epi *x = ctx;
  if (s->kind == ST_STORE && s->u.store.buf == x->t) x->stores++;
  if (s->kind == ST_STORE && s->u.store.buf == x->out) x->bad = true;
  return !x->bad;
}

static bool prod_expr(void *ctx, const PrimExpr *e) {
  Epi *x = ctx;
  if (e->kind == PE_LOAD && (e->u.load.buf == x->t || e->u.load.buf == x->out)) x->bad = true;
  return !x->bad;
}

/* A copy of e with the nest's variables replaced by the producer's index
 * and the loads of %T by %e. */
static PrimExpr *subst(Epi *x, const PrimExpr *e) {
  if (e->kind == PE_VAR)
    for (int i = 0; i < x->n; i++)
      if (e->u.var == x->vars[i]) return x->at[i];
  PrimExpr *c = ARENA_NEW(x->a, PrimExpr);
  *c = *e;
  switch (e->kind) {
    case PE_LOAD:
      if (e->u.load.buf == x->t) {
        c->kind = PE_VAR, c->u.var = x->e;
        break;
      }
      c->u.load.idx = arena_alloc(x->a, sizeof(PrimExpr *) * (size_t)e->u.load.n);
      for (int i = 0; i < e->u.load.n; i++) c->u.load.idx[i] = subst(x, e->u.load.idx[i]);
      break;
    case PE_BIN:
      c->u.bin.a = subst(x, e->u.bin.a), c->u.bin.b = subst(x, e->u.bin.b);
      break;
    case PE_NOT:
    case PE_NEG:
      c->u.operand = subst(x, e->u.operand);
      break;
    case PE_CALL:
      c->u.call.args = arena_alloc(x->a, sizeof(PrimExpr *) * (size_t)e->u.call.n);
      for (int i = 0; i < e->u.call.n; i++) c->u.call.args[i] = subst(x, e->u.call.args[i]);
      break;
    case PE_CAST:
      c->u.cast.value = subst(x, e->u.cast.value);
      break;
    default:
      break;
  }
  return c;
}

/* Rewrites each store into %T under s (in place) into the let and the
 * epilogue's store. */
static void rewrite_store(Epi *x, Stmt *s, const Stmt *epi) {
  if (!s) return;
  if (s->kind == ST_STORE && s->u.store.buf == x->t) {
    x->at = s->u.store.idx;
    x->e = ARENA_NEW(x->a, TirVar);
    *x->e = (TirVar){
        .name = arena_printf(x->a, "v%s", x->t->name), .dtype = x->t->dtype, .id = ir_fresh_id()};
    Stmt *let = ARENA_NEW(x->a, Stmt), *store = ARENA_NEW(x->a, Stmt);
    *let = (Stmt){.kind = ST_LET, .span = s->span};
    let->u.let.var = x->e, let->u.let.value = s->u.store.value;
    *store = *epi;
    store->u.store.idx = x->at, store->u.store.value = subst(x, epi->u.store.value);
    Stmt **items = arena_alloc(x->a, sizeof(Stmt *) * 2);
    items[0] = let, items[1] = store;
    *s = (Stmt){.kind = ST_SEQ, .span = s->span};
    s->u.seq.n = 2, s->u.seq.items = items;
    return;
  }
  PtrVec kids = {0};
  stmt_children(s, NULL, &kids);
  for (size_t i = 0; i < kids.len; i++) rewrite_store(x, kids.items[i], epi);
  vec_free(&kids);
}

/* Tries the fusion for the alloc at items[ai] of the top-level sequence,
 * its epilogue being the last item. */
static bool fuse_one(Arena *a, Stmt *body, int ai, bool (*total)(void *, const Buffer *),
                     void *ctx) {
  Stmt **items = body->u.seq.items;
  int last = body->u.seq.n - 1;
  Epi x = {.a = a, .t = items[ai]->u.alloc, .n = items[ai]->u.alloc->ndim};
  if (!total(ctx, x.t) || last <= ai + 1) return false;
  const Stmt *epi = epilogue_store(&x, items[last]);
  if (!epi) return false;
  TirVisitor ev = {NULL, epi_expr_ok, &x};
  tir_walk_expr(epi->u.store.value, &ev);
  TirVisitor pv = {prod_stmt, prod_expr, &x};
  for (int i = 0; i < last && !x.bad; i++)
    if (i != ai) tir_walk(items[i], &pv);
  if (x.bad || x.stores < 1) return false;
  for (int i = ai + 1; i < last; i++) rewrite_store(&x, items[i], epi);
  memmove(items + ai, items + ai + 1, sizeof *items * (size_t)(last - ai - 1));
  body->u.seq.n -= 2;
  return true;
}

bool lower_fuse_epilogue(Arena *a, Stmt *body, bool (*total)(void *, const Buffer *), void *ctx) {
  if (!body || body->kind != ST_SEQ) return false;
  for (int i = body->u.seq.n - 1; i >= 0; i--)
    if (body->u.seq.items[i]->kind == ST_ALLOC && fuse_one(a, body, i, total, ctx)) return true;
  return false;
}
