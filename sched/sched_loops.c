/* sched_loops.c — finding blocks and loops, and the loop transformations:
 * get_block, get_loops, get_child_blocks, split, fuse, reorder, parallel,
 * vectorize, unroll, annotate.  Each checks what TVM's checks: split
 * and fuse need constant extents starting at 0; reorder needs the loops in
 * one chain with nothing between them and no block under them whose
 * result another block under them (or the same block, at another index)
 * reads; parallel and vectorize need every block under the loop to bind
 * its variable only to spatial iteration variables, vectorize an
 * innermost loop. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "sched/sched_int.h"

/* ───────────────────────── finding ───────────────────────── */

static bool out_push(Sched *s, SchedVals *out, Handle h) {
  if (out->n == SCHED_MAX_VALS)
    return sched_fail(s, s->step->span, "more than %d results", SCHED_MAX_VALS);
  out->v[out->n++] = h;
  return true;
}

bool sp_get_block(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *a = sched_need(s, st, 0, "name", "a block's name");
  const char *name;
  SPath p;
  if (!a || !sched_arg_str(s, a, &name) || !sched_need_block(s, name, a->span, &p)) return false;
  return out_push(s, out, (Handle){.kind = H_BLOCK, .block = name});
}

bool sp_get_loops(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *a = sched_need(s, st, 0, "block", "a block");
  const char *name;
  SPath p;
  if (!a || !sched_arg_block(s, a, &name) || !sched_need_block(s, name, a->span, &p)) return false;
  Stmt *loops[SCHED_MAX_DEPTH];
  int n = sched_path_loops(&p, loops, SCHED_MAX_DEPTH);
  for (int i = 0; i < n; i++)
    if (!out_push(s, out, (Handle){.kind = H_LOOP, .loop = loops[i]->u.for_.vars[0]})) return false;
  return true;
}

/* The blocks under st not nested in another block under st. */
static bool child_blocks(Sched *s, const Stmt *st, SchedVals *out) {
  if (!st) return true;
  if (st->kind == ST_BLOCK)
    return out_push(s, out, (Handle){.kind = H_BLOCK, .block = st->u.block.name});
  PtrVec kids = {0};
  stmt_children(st, NULL, &kids);
  bool ok = true;
  for (size_t i = 0; i < kids.len && ok; i++) ok = child_blocks(s, kids.items[i], out);
  vec_free(&kids);
  return ok;
}

bool sp_get_child_blocks(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *a = sched_need(s, st, 0, NULL, "a block or a loop");
  Handle h;
  SPath p;
  if (!a || !sched_eval_arg(s, a, &h)) return false;
  if (h.kind == H_INT)
    return sched_fail(s, a->span, "expected a block or a loop, found an integer");
  if (h.kind == H_BLOCK ? !sched_need_block(s, h.block, a->span, &p)
                        : !sched_need_loop(s, h.loop, a->span, &p))
    return false;
  const Stmt *x = p.node[p.n - 1];
  if (x->kind == ST_BLOCK) {
    bool ok = child_blocks(s, x->u.block.init, out);
    return ok && child_blocks(s, x->u.block.body, out);
  }
  return child_blocks(s, x->u.for_.body, out);
}

/* The loop an argument names, found in the tree. */
static bool arg_loop(Sched *s, const SchedArg *a, SPath *p, Stmt **loop) {
  TirVar *v;
  if (!sched_arg_loop(s, a, &v) || !sched_need_loop(s, v, a->span, p)) return false;
  *loop = p->node[p->n - 1];
  return true;
}

static bool const_extent(Sched *s, const Stmt *loop, Span where, int64_t *e) {
  *e = sched_loop_extent(loop);
  if (*e >= 0 && !tir_for_lo(loop, 0)) return true;
  return sched_fail(s, where, "loop `%%%s` needs a constant extent starting at 0",
                    loop->u.for_.vars[0]->name);
}

/* ───────────────────────── split ───────────────────────── */

/* The names of the new loops: the step's `let` names, or v_0, v_1, ... */
static const char *part_name(Sched *s, const TirVar *v, int i, int n, char *buf, size_t len) {
  if (s->step->nouts == n) return s->step->outs[i];
  snprintf(buf, len, "%s_%d", v->name, i);
  return buf;
}

/* Every block under st wrapped in `if (cond)`; st itself when it has none. */
static Stmt *guard_blocks(Sched *s, Stmt *st, PrimExpr *cond) {
  if (st->kind == ST_BLOCK) return sched_if(s, cond, st);
  PtrVec kids = {0};
  stmt_children(st, NULL, &kids);
  Stmt *c = st;
  for (size_t i = 0; i < kids.len; i++) {
    Stmt *k = kids.items[i];
    if (!k) continue;
    SPath p = {2, {c, k}};
    c = sched_replace(s, &p, guard_blocks(s, k, cond));
  }
  vec_free(&kids);
  return c;
}

static bool has_block(const Stmt *st) {
  const Stmt *b[1];
  return sched_blocks_under(st, b, 1) > 0;
}

/* factors: -1 for `?` (at most one), the others positive; fills the `?`. */
static bool infer_factors(Sched *s, const SchedArg *a, int64_t *f, int n, int64_t extent) {
  int unknown = -1;
  int64_t prod = 1;
  for (int i = 0; i < n; i++) {
    if (f[i] == -1 && unknown < 0) {
      unknown = i;
      continue;
    }
    if (f[i] == -1) return sched_fail(s, a->span, "only one factor may be `?`");
    if (f[i] <= 0)
      return sched_fail(s, a->span, "a factor must be positive or `?`, not %lld", (long long)f[i]);
    if (__builtin_mul_overflow(prod, f[i], &prod))
      return sched_fail(s, a->span, "factors overflow");
  }
  if (unknown >= 0) f[unknown] = (extent + prod - 1) / prod, prod *= f[unknown];
  if (prod < extent)
    return sched_fail(s, a->span, "the factors' product %lld is less than the loop's extent %lld",
                      (long long)prod, (long long)extent);
  return true;
}

bool sp_split(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *la = sched_need(s, st, 0, "loop", "a loop");
  const SchedArg *fa = la ? sched_need(s, st, 1, "factors", "factors=[...]") : NULL;
  SPath p;
  Stmt *loop;
  int64_t extent, f[SCHED_MAX_VALS];
  int n;
  if (!fa || !arg_loop(s, la, &p, &loop) || !const_extent(s, loop, la->span, &extent) ||
      !sched_arg_ints(s, fa, f, SCHED_MAX_VALS, &n))
    return false;
  if (n < 2) return sched_fail(s, fa->span, "split needs at least two factors");
  if (!infer_factors(s, fa, f, n, extent)) return false;
  TirVar *v = loop->u.for_.vars[0], *nv[SCHED_MAX_VALS];
  PrimExpr *fused = NULL;
  char buf[256];
  for (int i = 0; i < n; i++) {
    nv[i] = sched_new_var(s, part_name(s, v, i, n, buf, sizeof buf), v->dtype);
    PrimExpr *x = sched_var(s, nv[i]);
    fused = fused
                ? sched_bin(s, PB_ADD, sched_bin(s, PB_MUL, fused, sched_int(s, f[i], v->dtype)), x)
                : x;
  }
  SchedSubst m = {0};
  subst_var(&m, v, fused);
  Stmt *body = sched_copy(s, loop->u.for_.body, &m);
  subst_free(&m);
  int64_t prod = 1;
  for (int i = 0; i < n; i++) prod *= f[i];
  if (prod != extent) {
    PrimExpr *cond =
        sched_bin(s, PB_LT, sched_copy_expr(s, fused, NULL), sched_int(s, extent, v->dtype));
    body = has_block(body) ? guard_blocks(s, body, cond) : sched_if(s, cond, body);
  }
  for (int i = n - 1; i >= 0; i--)
    body = sched_for(s, nv[i], sched_int(s, f[i], v->dtype), LOOP_RANGE, body);
  sched_set_body(s, sched_replace(s, &p, body));
  for (int i = 0; i < n; i++) out_push(s, out, (Handle){.kind = H_LOOP, .loop = nv[i]});
  return true;
}

/* ───────────────────────── fuse ───────────────────────── */

/* The statement a loop's body holds when it is one statement. */
static Stmt *only_child(Stmt *body) {
  while (body && body->kind == ST_SEQ && body->u.seq.n == 1) body = body->u.seq.items[0];
  return body && body->kind == ST_SEQ ? NULL : body;
}

bool sp_fuse(Sched *s, const SchedStep *st, SchedVals *out) {
  int n = st->nargs;
  while (n > 0 && st->args[n - 1].key) n--;
  if (n < 2) return sched_fail(s, st->span, "fuse needs at least two loops");
  if (n > SCHED_MAX_VALS)
    return sched_fail(s, st->span, "fuse takes at most %d loops", SCHED_MAX_VALS);
  SPath p0, p;
  Stmt *loops[SCHED_MAX_VALS];
  int64_t ext[SCHED_MAX_VALS];
  for (int i = 0; i < n; i++) {
    if (!arg_loop(s, &st->args[i], i ? &p : &p0, &loops[i]) ||
        !const_extent(s, loops[i], st->args[i].span, &ext[i]))
      return false;
    if (i && only_child(loops[i - 1]->u.for_.body) != loops[i])
      return sched_fail(s, st->args[i].span,
                        "`%%%s` is not the only statement directly inside `%%%s`: only nested "
                        "loops with nothing between them fuse",
                        loops[i]->u.for_.vars[0]->name, loops[i - 1]->u.for_.vars[0]->name);
  }
  for (int i = 1; i < n; i++) {
    const TirVar *a = loops[0]->u.for_.vars[0], *b = loops[i]->u.for_.vars[0];
    bool ra = sched_var_bound_as(loops[0], a, true), rb = sched_var_bound_as(loops[i], b, true);
    if (ra != rb)
      return sched_fail(s, st->args[i].span,
                        "cannot fuse `%%%s` (bound to %s variables) with `%%%s` (bound to %s "
                        "variables)",
                        a->name, ra ? "reduction" : "spatial", b->name,
                        rb ? "reduction" : "spatial");
  }
  char name[256] = "";
  for (int i = 0; i < n; i++)
    snprintf(name + strlen(name), sizeof name - strlen(name), "%s%s", i ? "_" : "",
             loops[i]->u.for_.vars[0]->name);
  if (strlen(name) + 7 < sizeof name) strcat(name, "_fused");
  TirVar *fv = sched_new_var(s, st->nouts == 1 ? st->outs[0] : name, DT_INT64);
  int64_t total = 1, inner = 1;
  for (int i = 0; i < n; i++)
    if (__builtin_mul_overflow(total, ext[i], &total))
      return sched_fail(s, st->span, "extent overflows");
  fv->dtype = loops[0]->u.for_.vars[0]->dtype;
  SchedSubst m = {0};
  for (int i = n - 1; i >= 0; i--) {
    TirVar *v = loops[i]->u.for_.vars[0];
    PrimExpr *x = sched_bin(s, PB_DIV, sched_var(s, fv), sched_int(s, inner, fv->dtype));
    if (i > 0) x = sched_bin(s, PB_MOD, x, sched_int(s, ext[i], fv->dtype));
    subst_var(&m, v, x);
    inner *= ext[i];
  }
  Stmt *body = sched_copy(s, loops[n - 1]->u.for_.body, &m);
  subst_free(&m);
  Stmt *f = sched_for(s, fv, sched_int(s, total, fv->dtype), LOOP_RANGE, body);
  sched_set_body(s, sched_replace(s, &p0, f));
  return out_push(s, out, (Handle){.kind = H_LOOP, .loop = fv});
}

/* ───────────────────────── reorder ───────────────────────── */

static bool idx_equal(int n, PrimExpr *const *a, PrimExpr *const *b) {
  for (int i = 0; i < n; i++) {
    SLin x, y;
    if (!sched_linear(a[i], &x) || !sched_linear(b[i], &y)) return false;
    if (x.c != y.c || x.n != y.n) return false;
    for (int j = 0; j < x.n; j++) {
      bool found = false;
      for (int k = 0; k < y.n; k++) found |= x.v[j] == y.v[k] && x.k[j] == y.k[k];
      if (!found) return false;
    }
  }
  return true;
}

/* Is reordering the loops above `top` safe for what is under it?  No block
 * reads what another block under it writes, and a block reads what it
 * writes only at the index it writes (a reduction's update). */
static bool independent(Sched *s, const Stmt *top, Span where) {
  enum { MAXB = 64, MAXA = 64 };
  const Stmt *blocks[MAXB];
  SAccess acc[MAXB][MAXA];
  int nacc[MAXB];
  int nb = sched_blocks_under(top, blocks, MAXB);
  for (int i = 0; i < nb; i++) nacc[i] = sched_block_accesses(blocks[i], acc[i], MAXA);
  for (int i = 0; i < nb; i++)
    for (int a = 0; a < nacc[i]; a++) {
      if (!acc[i][a].write) continue;
      for (int j = 0; j < nb; j++)
        for (int b = 0; b < nacc[j]; b++) {
          const SAccess *w = &acc[i][a], *r = &acc[j][b];
          if (r->buf != w->buf || (i == j && a == b)) continue;
          if (i == j && idx_equal(w->n, w->idx, r->idx)) continue;
          return sched_fail(s, where,
                            "reordering would change when block \"%s\" sees what block \"%s\" "
                            "writes to `%%%s`",
                            blocks[j]->u.block.name, blocks[i]->u.block.name, w->buf->name);
        }
    }
  return true;
}

bool sp_reorder(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  int n = st->nargs;
  if (n < 2) return sched_fail(s, st->span, "reorder needs at least two loops");
  if (n > SCHED_MAX_VALS) return sched_fail(s, st->span, "at most %d loops", SCHED_MAX_VALS);
  SPath paths[SCHED_MAX_VALS];
  Stmt *given[SCHED_MAX_VALS];
  int top = 0, bottom = 0;
  for (int i = 0; i < n; i++) {
    if (!arg_loop(s, &st->args[i], &paths[i], &given[i])) return false;
    for (int j = 0; j < i; j++)
      if (given[j] == given[i])
        return sched_fail(s, st->args[i].span, "`%%%s` is given twice",
                          given[i]->u.for_.vars[0]->name);
    if (paths[i].n < paths[top].n) top = i;
    if (paths[i].n > paths[bottom].n) bottom = i;
  }
  /* the chain from the outermost given loop down to the innermost */
  const SPath *pb = &paths[bottom];
  int t = paths[top].n - 1;
  if (pb->n <= t || pb->node[t] != given[top])
    return sched_fail(s, st->args[top].span, "the loops are not nested in one another");
  Stmt *chain[SCHED_MAX_DEPTH];
  int m = 0;
  for (int d = t; d < pb->n; d++) {
    Stmt *x = pb->node[d];
    if (x->kind == ST_SEQ) continue;
    if (x->kind != ST_FOR)
      return sched_fail(s, st->span, "a %s stands between the loops: they cannot be reordered",
                        stmt_kind_name(x->kind));
    if (m && only_child(chain[m - 1]->u.for_.body) != x)
      return sched_fail(s, st->span,
                        "`%%%s` has other statements beside `%%%s`: only a chain of loops with "
                        "nothing between them reorders",
                        chain[m - 1]->u.for_.vars[0]->name, x->u.for_.vars[0]->name);
    chain[m++] = x;
  }
  for (int i = 0; i < n; i++) {
    bool in = false;
    for (int j = 0; j < m; j++) in |= chain[j] == given[i];
    if (!in)
      return sched_fail(s, st->args[i].span, "`%%%s` is not in the chain of loops",
                        given[i]->u.for_.vars[0]->name);
  }
  for (int j = 0; j < m; j++)
    for (int k = 0; k < m; k++)
      if (sched_expr_uses(chain[j]->u.for_.hi[0], chain[k]->u.for_.vars[0]) ||
          (tir_for_lo(chain[j], 0) &&
           sched_expr_uses(tir_for_lo(chain[j], 0), chain[k]->u.for_.vars[0])))
        return sched_fail(s, st->span, "the extent of `%%%s` depends on `%%%s`",
                          chain[j]->u.for_.vars[0]->name, chain[k]->u.for_.vars[0]->name);
  if (!independent(s, chain[0], st->span)) return false;
  /* the given loops take the given loops' places in the given order */
  Stmt *order[SCHED_MAX_DEPTH];
  int next = 0;
  for (int j = 0; j < m; j++) {
    bool is_given = false;
    for (int i = 0; i < n; i++) is_given |= chain[j] == given[i];
    order[j] = is_given ? given[next++] : chain[j];
  }
  Stmt *body = chain[m - 1]->u.for_.body;
  for (int j = m - 1; j >= 0; j--) {
    Stmt *c = ARENA_NEW(s->a, Stmt);
    *c = *order[j];
    c->u.for_.body = body;
    body = c;
  }
  SPath ptop = paths[top];
  sched_set_body(s, sched_replace(s, &ptop, body));
  return true;
}

/* ───────────────────────── loop kinds ───────────────────────── */

static bool set_kind(Sched *s, const SPath *p, Stmt *loop, LoopKind k) {
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *loop;
  c->u.for_.loop = k;
  sched_set_body(s, sched_replace(s, p, c));
  return true;
}

/* Every statement under loop that stores is inside a block, and no block
 * binds the loop's variable to a reduction variable. */
static bool data_parallel(Sched *s, const Stmt *loop, Span where, const char *what) {
  const TirVar *v = loop->u.for_.vars[0];
  if (sched_var_bound_as(loop, v, true))
    return sched_fail(s, where,
                      "cannot %s `%%%s`: a block under it binds it to a reduction variable (it "
                      "is not data parallel)",
                      what, v->name);
  if (!has_block(loop->u.for_.body))
    return sched_fail(s, where, "cannot %s `%%%s`: it holds no block to prove it data parallel",
                      what, v->name);
  return true;
}

static bool has_loop(const Stmt *st) {
  PtrVec kids = {0};
  stmt_children(st, NULL, &kids);
  bool found = false;
  for (size_t i = 0; i < kids.len && !found; i++) {
    const Stmt *k = kids.items[i];
    found = k && (k->kind == ST_FOR || has_loop(k));
  }
  vec_free(&kids);
  return found;
}

static bool kind_step(Sched *s, const SchedStep *st, LoopKind k) {
  const SchedArg *a = sched_need(s, st, 0, "loop", "a loop");
  SPath p;
  Stmt *loop;
  if (!a || !arg_loop(s, a, &p, &loop)) return false;
  const char *what = k == LOOP_PARALLEL     ? "parallelize"
                     : k == LOOP_VECTORIZED ? "vectorize"
                                            : "unroll";
  if (k != LOOP_UNROLLED && !data_parallel(s, loop, a->span, what)) return false;
  if (k == LOOP_VECTORIZED && has_loop(loop))
    return sched_fail(s, a->span, "cannot vectorize `%%%s`: it is not an innermost loop",
                      loop->u.for_.vars[0]->name);
  return set_kind(s, &p, loop, k);
}

bool sp_parallel(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return kind_step(s, st, LOOP_PARALLEL);
}

bool sp_vectorize(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return kind_step(s, st, LOOP_VECTORIZED);
}

bool sp_unroll(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return kind_step(s, st, LOOP_UNROLLED);
}

/* ───────────────────────── annotate ───────────────────────── */

static const char *value_text(Sched *s, const SchedArg *a) {
  StrBuf b = {0};
  SchedStep one = {.prim = "", .nargs = 1, .args = (SchedArg *)a};
  print_sched_call_to(&b, &one); /* "(value)" */
  b.data[b.len - 1] = '\0';
  const char *t = arena_strdup(s->a, b.data + 1);
  sb_free(&b);
  return t;
}

bool sp_annotate(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  const SchedArg *x = sched_need(s, st, 0, NULL, "a block or a loop");
  const SchedArg *k = x ? sched_need(s, st, 1, "ann_key", "a key") : NULL;
  const SchedArg *v = k ? sched_need(s, st, 2, "ann_val", "a value") : NULL;
  const char *key;
  Handle h;
  SPath p;
  if (!v || !sched_arg_str(s, k, &key) || !sched_eval_arg(s, x, &h)) return false;
  if (v->kind == SA_NAME || v->kind == SA_STEP || v->kind == SA_UNKNOWN)
    return sched_fail(s, v->span, "an annotation's value is a number, a string, a bool or a list");
  if (h.kind == H_INT)
    return sched_fail(s, x->span, "expected a block or a loop, found an integer");
  if (h.kind == H_BLOCK ? !sched_need_block(s, h.block, x->span, &p)
                        : !sched_need_loop(s, h.loop, x->span, &p))
    return false;
  Stmt *c = ARENA_NEW(s->a, Stmt);
  *c = *p.node[p.n - 1];
  c->annots = arena_alloc(s->a, sizeof(TirAnnot) * (size_t)(c->nannots + 1));
  int n = 0;
  for (int i = 0; i < p.node[p.n - 1]->nannots; i++) /* a key set again replaces its value */
    if (strcmp(p.node[p.n - 1]->annots[i].key, key) != 0)
      c->annots[n++] = p.node[p.n - 1]->annots[i];
  c->annots[n++] = (TirAnnot){key, value_text(s, v)};
  c->nannots = n;
  sched_set_body(s, sched_replace(s, &p, c));
  return true;
}
