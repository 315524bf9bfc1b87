/* typecheck_match.c — `match`: pattern typing and the exhaustiveness check.
 *
 * Patterns are typed against the scrutinee's type (constructor patterns
 * instantiate the ADT's type parameters; tuple patterns fix the arity) and
 * bind their variables.  Coverage uses the classic "useful clause"
 * recursion over a pattern matrix and produces a witness, a pattern that no
 * clause covers, for the warning (`match is not exhaustive: Nil is not
 * covered`).  The matrices live in a scratch arena freed after each match;
 * recursion is on pattern nesting, never on program length. */
#include <string.h>

#include "types/typecheck_int.h"

/* ── typing ── */

static void check_pattern(TyCtx *c, Pattern *p, Type *t);

static void check_ctor_pattern(TyCtx *c, Pattern *p, Type *t) {
  CtorDef *cd = &p->u.ctor.adt->ctors[p->u.ctor.index];
  Type *ct = ty_ctor_type(c, p->u.ctor.adt, p->u.ctor.index, p->span);
  bool ok = ty_unify(c, t, ct->u.func.ret);
  if (!ok)
    diag_error(c->d, p->span, "pattern %s has type %s but the value matched has type %s", cd->name,
               ty_show(c, ct->u.func.ret), ty_show(c, t));
  if (p->u.ctor.n != cd->nfields)
    diag_error(c->d, p->span, "%s has %d field%s but the pattern has %d", cd->name, cd->nfields,
               cd->nfields == 1 ? "" : "s", p->u.ctor.n);
  for (int i = 0; i < p->u.ctor.n; i++)
    check_pattern(c, p->u.ctor.sub[i], ok && i < cd->nfields ? ct->u.func.params[i] : c->err);
}

/* A tuple pattern fixes the arity of the value's type; after a mismatch
 * the subpatterns are still checked against the error type, so their
 * variables get a type and the clause body adds no further messages. */
static void check_tuple_pattern(TyCtx *c, Pattern *p, Type *t) {
  int n = p->u.tuple.n;
  Type *r = ty_resolve(c, t);
  if (r->kind == TY_TUPLE && r->u.tuple.n != n) {
    diag_error(c->d, p->span, "tuple pattern has %d field%s but the value matched has type %s", n,
               n == 1 ? "" : "s", ty_show(c, r));
    for (int i = 0; i < n; i++) check_pattern(c, p->u.tuple.sub[i], c->err);
    return;
  }
  Type **fs = ARENA_ARRAY(c->a, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) fs[i] = ty_fresh(c, p->span);
  Type *tt = type_tuple(c->a, n, fs, p->span);
  if (!ty_unify(c, t, tt)) {
    diag_error(c->d, p->span, "tuple pattern does not match a value of type %s", ty_show(c, t));
    for (int i = 0; i < n; i++) fs[i] = c->err;
  }
  for (int i = 0; i < n; i++) check_pattern(c, p->u.tuple.sub[i], fs[i]);
}

/* Types a pattern against the value's type and binds its variables; an
 * annotated variable takes its annotation as its type. */
static void check_pattern(TyCtx *c, Pattern *p, Type *t) {
  switch (p->kind) {
    case PAT_WILD:
      return;
    case PAT_VAR: {
      Var *v = p->u.var;
      if (v->annot) {
        Type *at = ty_import(c, v->annot);
        if (!ty_unify(c, at, t))
          diag_error(c->d, p->span, "%%%s is annotated %s but the value matched has type %s",
                     var_named(v) ? v->name : "_", ty_show(c, at), ty_show(c, t));
        t = at;
      }
      ty_varmap_put(&c->vars, v->id, t);
      return;
    }
    case PAT_CTOR:
      check_ctor_pattern(c, p, t);
      return;
    case PAT_TUPLE:
      check_tuple_pattern(c, p, t);
      return;
  }
}

/* ── coverage ── */

/* A row of the pattern matrix; NULL entries are wildcards. */
typedef struct Row {
  Pattern **p;
} Row;

typedef struct Cov {
  Arena *a;
  StrBuf tmp;
} Cov;

static bool is_wild(const Pattern *p) { return !p || p->kind == PAT_WILD || p->kind == PAT_VAR; }

/* Witness columns are texts; NULL result = exhaustive. */
static const char **uncovered(Cov *cv, int nrows, Row *rows, int ncols);

static Row row_expand(Cov *cv, Row r, int ncols, int k, Pattern **sub) {
  Row out;
  out.p = ARENA_ARRAY(cv->a, Pattern *, k + ncols - 1 > 0 ? k + ncols - 1 : 1);
  for (int i = 0; i < k; i++) out.p[i] = sub ? sub[i] : NULL;
  for (int i = 1; i < ncols; i++) out.p[k + i - 1] = r.p[i];
  return out;
}

static const char *group_text(Cov *cv, const char *head, int k, const char **w, bool tuple) {
  StrBuf *b = &cv->tmp;
  b->len = 0;
  sb_puts(b, head);
  if (k || tuple) sb_putc(b, '(');
  for (int i = 0; i < k; i++) sb_printf(b, "%s%s", i ? ", " : "", w[i]);
  if (tuple && k == 1) sb_putc(b, ',');
  if (k || tuple) sb_putc(b, ')');
  return arena_strndup(cv->a, b->data, b->len);
}

/* Rebuilds a witness: its first k columns become the fields of `head`. */
static const char **witness_wrap(Cov *cv, const char **w, int k, int ncols, const char *head,
                                 bool tuple) {
  const char **out = ARENA_ARRAY(cv->a, const char *, ncols ? ncols : 1);
  out[0] = group_text(cv, head, k, w, tuple);
  for (int i = 1; i < ncols; i++) out[i] = w[k + i - 1];
  return out;
}

static const char **uncovered_tuple(Cov *cv, int nrows, Row *rows, int ncols, int k) {
  Row *spec = ARENA_ARRAY(cv->a, Row, nrows ? nrows : 1);
  for (int i = 0; i < nrows; i++) {
    Pattern *p = rows[i].p[0];
    bool fits = p && p->kind == PAT_TUPLE && p->u.tuple.n == k;
    spec[i] = row_expand(cv, rows[i], ncols, k, fits ? p->u.tuple.sub : NULL);
  }
  const char **w = uncovered(cv, nrows, spec, k + ncols - 1);
  return w ? witness_wrap(cv, w, k, ncols, "", true) : NULL;
}

/* Rows whose first column is ctor `ci` (or a wildcard), specialised. */
static const char **uncovered_ctor(Cov *cv, int nrows, Row *rows, int ncols, AdtDef *adt, int ci) {
  int k = adt->ctors[ci].nfields, n = 0;
  Row *spec = ARENA_ARRAY(cv->a, Row, nrows ? nrows : 1);
  for (int i = 0; i < nrows; i++) {
    Pattern *p = rows[i].p[0];
    if (is_wild(p)) {
      spec[n++] = row_expand(cv, rows[i], ncols, k, NULL);
    } else if (p->kind == PAT_CTOR && p->u.ctor.adt == adt && p->u.ctor.index == ci) {
      spec[n++] = row_expand(cv, rows[i], ncols, k, p->u.ctor.n == k ? p->u.ctor.sub : NULL);
    }
  }
  const char **w = uncovered(cv, n, spec, k + ncols - 1);
  return w ? witness_wrap(cv, w, k, ncols, adt->ctors[ci].name, false) : NULL;
}

/* The rows with a wildcard first, without their first column; `head`
 * names what the missing first column should be. */
static const char **uncovered_default(Cov *cv, int nrows, Row *rows, int ncols, const char *head) {
  int n = 0;
  Row *def = ARENA_ARRAY(cv->a, Row, nrows ? nrows : 1);
  for (int i = 0; i < nrows; i++)
    if (is_wild(rows[i].p[0])) def[n++].p = rows[i].p + 1;
  const char **w = uncovered(cv, n, def, ncols - 1);
  if (!w) return NULL;
  const char **out = ARENA_ARRAY(cv->a, const char *, ncols);
  out[0] = head;
  for (int i = 1; i < ncols; i++) out[i] = w[i - 1];
  return out;
}

static const char *missing_ctor_text(Cov *cv, AdtDef *adt, int ci) {
  int k = adt->ctors[ci].nfields;
  const char **w = ARENA_ARRAY(cv->a, const char *, k ? k : 1);
  for (int i = 0; i < k; i++) w[i] = "_";
  return group_text(cv, adt->ctors[ci].name, k, w, false);
}

/* Coverage when the first column has constructors of adt: if one is never
 * named, the wildcard rows must cover it (witness: that constructor);
 * otherwise each constructor is specialised in turn. */
static const char **uncovered_adt(Cov *cv, int nrows, Row *rows, int ncols, AdtDef *adt) {
  bool *used = ARENA_ARRAY(cv->a, bool, adt->nctors ? adt->nctors : 1);
  for (int i = 0; i < nrows; i++) {
    Pattern *p = rows[i].p[0];
    if (!is_wild(p) && p->kind == PAT_CTOR && p->u.ctor.adt == adt) used[p->u.ctor.index] = true;
  }
  int missing = -1;
  for (int ci = 0; ci < adt->nctors && missing < 0; ci++)
    if (!used[ci]) missing = ci;
  if (missing >= 0 || !adt->nctors)
    return uncovered_default(cv, nrows, rows, ncols,
                             missing >= 0 ? missing_ctor_text(cv, adt, missing) : "_");
  for (int ci = 0; ci < adt->nctors; ci++) {
    const char **w = uncovered_ctor(cv, nrows, rows, ncols, adt, ci);
    if (w) return w;
  }
  return NULL;
}

static const char **uncovered(Cov *cv, int nrows, Row *rows, int ncols) {
  if (ncols == 0) return nrows ? NULL : ARENA_ARRAY(cv->a, const char *, 1);
  for (int i = 0; i < nrows; i++) {
    Pattern *p = rows[i].p[0];
    if (is_wild(p)) continue;
    if (p->kind == PAT_TUPLE) return uncovered_tuple(cv, nrows, rows, ncols, p->u.tuple.n);
    return uncovered_adt(cv, nrows, rows, ncols, p->u.ctor.adt);
  }
  return uncovered_default(cv, nrows, rows, ncols, "_");
}

static void check_coverage(TyCtx *c, Expr *e) {
  Arena scratch;
  arena_init(&scratch);
  Cov cv = {&scratch, {0}};
  int n = e->u.match.n;
  Row *rows = ARENA_ARRAY(&scratch, Row, n ? n : 1);
  for (int i = 0; i < n; i++) rows[i].p = &e->u.match.clauses[i].pat;
  const char **w = uncovered(&cv, n, rows, 1);
  if (w) diag_warning(c->d, e->span, "match is not exhaustive: %s is not covered", w[0]);
  sb_free(&cv.tmp);
  arena_free(&scratch);
}

/* ── the match expression ── */

/* The match's type is the join of its clause types.  Coverage is checked
 * only for a total match with no new errors, since after a type error the
 * patterns may not fit the type. */
Type *ty_check_match(TyCtx *c, Expr *e) {
  size_t errors = c->d->nerrors;
  Type *st = ty_check(c, e->u.match.scrut), *res = NULL;
  for (int i = 0; i < e->u.match.n; i++) {
    MatchClause *cl = &e->u.match.clauses[i];
    check_pattern(c, cl->pat, st);
    Type *bt = ty_check(c, cl->body);
    if (!res) {
      res = bt;
    } else if (ty_unify(c, res, bt)) {
      res = ty_join(c, res, bt);
    } else {
      diag_error(c->d, cl->body->span, "match clauses have different types: %s and %s",
                 ty_show(c, res), ty_show(c, bt));
    }
  }
  /* after a type error the patterns may not fit the type: no warning */
  if (!e->u.match.partial && c->warn_nonexhaustive && c->d->nerrors == errors) check_coverage(c, e);
  return res ? res : ty_fresh(c, e->span);
}
