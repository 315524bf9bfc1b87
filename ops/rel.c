/* rel.c — helpers shared by the type relations, and attribute checking.
 *
 * Invariants:
 * - Relations compare dims only through rel_unify_dim, so the type checker's
 *   metavariables get bound in one place (cx->unify_dim).
 * - rel_fail keeps the FIRST message: a helper's precise message (e.g. a
 *   missing attribute) wins over a later generic one.
 * - Attribute accessors fall back to the op's declared default (its
 *   OpAttrSpec: cx->op's row, else the one named cx->op_name); asking for a key the op does not
 *   declare and the call does not carry is an internal bug.
 * - Accessors never trust that ops_check_attrs ran: a wrong kind fails the
 *   relation with a message instead of being misread. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

/* ───────────────────────── failures and text ───────────────────────── */

Type *rel_fail(RelCtx *cx, const char *fmt, ...) {
  if (cx->err[0]) return NULL;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cx->err, sizeof cx->err, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *rel_tensor_shape_str(RelCtx *cx, const Type *t) {
  return rel_shape_str(cx, t->u.tensor.ndim, t->u.tensor.dims);
}

const char *rel_type_str(RelCtx *cx, const Type *t) {
  StrBuf b = {0};
  print_type_to(&b, t);
  char *s = arena_strdup(cx->arena, b.data ? b.data : "");
  sb_free(&b);
  return s;
}

bool rel_adjoint_of(RelCtx *cx, Type **args, int i, const Type *y) {
  const Type *d = rel_tensor(cx, args, i);
  if (!d) return false;
  bool ok = d->u.tensor.dtype == y->u.tensor.dtype && d->u.tensor.ndim == y->u.tensor.ndim;
  for (int k = 0; ok && k < d->u.tensor.ndim; k++)
    ok = rel_unify_dim(cx, d->u.tensor.dims[k], y->u.tensor.dims[k]);
  if (!ok)
    rel_fail(cx, "%s: the adjoint %s must have the type of the op's result, %s", cx->op_name,
             rel_type_str(cx, d), rel_type_str(cx, y));
  return ok;
}

static void dim_to(StrBuf *b, Dim d) {
  switch (d.kind) {
    case DIM_CONST:
      sb_printf(b, "%lld", (long long)d.value);
      break;
    case DIM_VAR:
      sb_puts(b, d.name);
      break;
    case DIM_ANY:
    case DIM_META:
      sb_putc(b, '?');
      break; /* an unsolved metavariable is unknown to the user */
  }
}

const char *rel_shape_str(RelCtx *cx, int ndim, const Dim *dims) {
  StrBuf b = {0};
  sb_putc(&b, '(');
  for (int i = 0; i < ndim; i++) {
    if (i) sb_puts(&b, ", ");
    dim_to(&b, dims[i]);
  }
  sb_putc(&b, ')');
  char *s = arena_strdup(cx->arena, b.data);
  sb_free(&b);
  return s;
}

const Type *rel_tensor(RelCtx *cx, Type **args, int i) {
  const Type *t = args[i];
  if (t && t->kind == TY_TENSOR) return t;
  rel_fail(cx, "%s: argument %d must be a tensor, got %s", cx->op_name, i + 1,
           t ? rel_type_str(cx, t) : "nothing");
  return NULL;
}

/* ─────────────────────────────── dims ─────────────────────────────── */

Dim dim_const(int64_t v) {
  Dim d = {DIM_CONST, v, NULL};
  return d;
}

Dim dim_any(void) {
  Dim d = {DIM_ANY, 0, NULL};
  return d;
}

bool rel_unify_dim(RelCtx *cx, Dim a, Dim b) {
  if (cx->unify_dim) return cx->unify_dim(cx, a, b);
  if (a.kind == DIM_ANY || b.kind == DIM_ANY) return true;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case DIM_CONST:
    case DIM_META:
      return a.value == b.value;
    case DIM_VAR:
      return strcmp(a.name, b.name) == 0;
    case DIM_ANY:
      break;
  }
  return true;
}

static bool is_one(Dim d) { return d.kind == DIM_CONST && d.value == 1; }

/* One output dim of numpy broadcasting; false when the two cannot match.
 * A size variable or metavariable may still be 1 at run time, so two that
 * do not unify give `?`, and one against a constant c != 1 gives c (if the
 * variable is not 1 it must equal c; the run-time check catches the rest). */
static bool broadcast_dim(RelCtx *cx, Dim a, Dim b, Dim *out) {
  if (is_one(a)) return *out = b, true;
  if (is_one(b)) return *out = a, true;
  if (a.kind == DIM_ANY) return *out = b, true;
  if (b.kind == DIM_ANY) return *out = a, true;
  if (rel_unify_dim(cx, a, b)) return *out = a.kind == DIM_CONST ? a : b, true;
  if (a.kind == DIM_CONST && b.kind == DIM_CONST) return false;
  if (a.kind == DIM_CONST) return *out = a, true;
  if (b.kind == DIM_CONST) return *out = b, true;
  return *out = dim_any(), true;
}

bool rel_broadcast(RelCtx *cx, int na, const Dim *a, int nb, const Dim *b, int *nout, Dim **out) {
  int n = na > nb ? na : nb;
  Dim *o = ARENA_ARRAY(cx->arena, Dim, n ? n : 1);
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    Dim da = ia >= 0 ? a[ia] : dim_const(1), db = ib >= 0 ? b[ib] : dim_const(1);
    if (!broadcast_dim(cx, da, db, &o[i])) {
      rel_fail(cx, "%s: shapes %s and %s do not broadcast", cx->op_name, rel_shape_str(cx, na, a),
               rel_shape_str(cx, nb, b));
      return false;
    }
  }
  *nout = n, *out = o;
  return true;
}

int rel_axis(RelCtx *cx, int64_t axis, int ndim) {
  if (axis < -(int64_t)ndim || axis >= ndim) {
    rel_fail(cx, "%s: axis %lld is out of range for rank %d", cx->op_name, (long long)axis, ndim);
    return -1;
  }
  return (int)(axis < 0 ? axis + ndim : axis);
}

/* ───────────────────────────── attributes ───────────────────────────── */

static const OpAttrSpec *find_spec(const OpDef *op, const char *key) {
  if (!op || !op->attrs) return NULL;
  for (const OpAttrSpec *s = op->attrs; s->name; s++)
    if (strcmp(s->name, key) == 0) return s;
  return NULL;
}

/* The attribute as written, or NULL; *def gets the spec's default text
 * (NULL = required).  A missing required attribute fails here. */
static const AttrValue *lookup(RelCtx *cx, const Attrs *attrs, const char *key, const char **def) {
  const AttrValue *v = attrs_get(attrs, key);
  *def = NULL;
  if (v) return v;
  const OpAttrSpec *s = find_spec(cx->op ? cx->op : ops_get(ops_lookup(cx->op_name)), key);
  RLY_ASSERT(s); /* a relation asked for an attribute its op does not declare */
  *def = s->def;
  if (!s->def) rel_fail(cx, "%s: missing attribute `%s`", cx->op_name, key);
  return NULL;
}

/* An attribute kind with its article, for "expected a list, got a string". */
static const char *kind_article(AttrKind k) {
  switch (k) {
    case AV_INT:
      return "an int";
    case AV_FLOAT:
      return "a float";
    case AV_BOOL:
      return "a bool";
    case AV_STR:
      return "a string";
    case AV_LIST:
      return "a list";
    case AV_NONE:
      return "None";
    case AV_EXPR:
      return "an expression";
    case AV_SYM:
      return "a name";
  }
  return "a value";
}

static void kind_fail(RelCtx *cx, const char *key, const char *want, const AttrValue *v) {
  rel_fail(cx, "%s: attribute `%s` must be %s, got %s", cx->op_name, key, want,
           kind_article(v->kind));
}

int64_t rel_attr_int(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) return def && strcmp(def, "True") == 0 ? 1 : def ? strtoll(def, NULL, 10) : 0;
  if (v->kind == AV_INT) return v->u.i;
  if (v->kind == AV_BOOL) return v->u.b;
  if (v->kind != AV_NONE) kind_fail(cx, key, "an int", v);
  return 0;
}

double rel_attr_float(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) return def ? strtod(def, NULL) : 0;
  if (v->kind == AV_FLOAT) return v->u.f;
  if (v->kind == AV_INT) return (double)v->u.i;
  kind_fail(cx, key, "a float", v);
  return 0;
}

bool rel_attr_bool(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) return def && (strcmp(def, "True") == 0 || strcmp(def, "1") == 0);
  if (v->kind == AV_BOOL) return v->u.b;
  if (v->kind == AV_INT) return v->u.i != 0;
  kind_fail(cx, key, "a bool", v);
  return false;
}

const char *rel_attr_str(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) {
    size_t n = def ? strlen(def) : 0;
    if (n >= 2 && def[0] == '"') return arena_strndup(cx->arena, def + 1, n - 2);
    return "";
  }
  if (v->kind == AV_STR) return v->u.s;
  if (v->kind != AV_NONE) kind_fail(cx, key, "a string", v);
  return "";
}

bool rel_attr_is_none(RelCtx *cx, const Attrs *attrs, const char *key) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (v) return v->kind == AV_NONE;
  return !def || strcmp(def, "None") == 0;
}

/* Default list text "[1, 1]", "[]" or a single "0". */
static int parse_default_ints(const char *s, int64_t *out, int max) {
  int n = 0;
  if (strcmp(s, "None") == 0) return 0;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s) {
      s++;
      continue;
    }
    if (n < max) out[n] = v;
    n++, s = end;
  }
  return n < max ? n : max;
}

static int too_many(RelCtx *cx, const char *key, int max) {
  rel_fail(cx, "%s: attribute `%s` has more than %d entries", cx->op_name, key, max);
  return -1;
}

/* A list of ints (a bare int counts as a list of one); returns the count,
 * 0 for None, -1 when missing with no default or on error. */
int rel_attr_ints(RelCtx *cx, const Attrs *attrs, const char *key, int64_t *out, int max) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) return def ? parse_default_ints(def, out, max) : -1;
  if (v->kind == AV_NONE) return 0;
  if (v->kind == AV_INT) {
    if (max < 1) return too_many(cx, key, max);
    out[0] = v->u.i;
    return 1;
  }
  if (v->kind != AV_LIST) return kind_fail(cx, key, "a list of ints", v), -1;
  if (v->u.list.n > max) return too_many(cx, key, max);
  for (int i = 0; i < v->u.list.n; i++) {
    const AttrValue *it = v->u.list.items[i];
    if (it->kind != AV_INT) return kind_fail(cx, key, "a list of ints", it), -1;
    out[i] = it->u.i;
  }
  return v->u.list.n;
}

static bool dim_item(RelCtx *cx, const char *key, const AttrValue *it, Dim *out) {
  if (it->kind == AV_SYM) {
    Dim d = {DIM_VAR, 0, it->u.s};
    *out = d;
    return true;
  }
  if (it->kind != AV_INT) return kind_fail(cx, key, "a list of sizes", it), false;
  if (it->u.i < 0) {
    rel_fail(cx, "%s: attribute `%s` has a negative size %lld", cx->op_name, key,
             (long long)it->u.i);
    return false;
  }
  *out = dim_const(it->u.i);
  return true;
}

/* A list of sizes, where size variables are allowed (a bare size counts as
 * a list of one); returns the count, -1 for None, missing or an error. */
int rel_attr_dims(RelCtx *cx, const Attrs *attrs, const char *key, Dim *out, int max) {
  const char *def;
  const AttrValue *v = lookup(cx, attrs, key, &def);
  if (!v) {
    if (!def || strcmp(def, "None") == 0) return -1;
    int64_t ints[TENSOR_MAX_RANK];
    int n = parse_default_ints(def, ints, max < TENSOR_MAX_RANK ? max : TENSOR_MAX_RANK);
    for (int i = 0; i < n; i++) out[i] = dim_const(ints[i]);
    return n;
  }
  if (v->kind == AV_NONE) return -1;
  if (v->kind == AV_INT || v->kind == AV_SYM)
    return max < 1 ? too_many(cx, key, max) : dim_item(cx, key, v, out) ? 1 : -1;
  if (v->kind != AV_LIST) return kind_fail(cx, key, "a list of sizes", v), -1;
  if (v->u.list.n > max) return too_many(cx, key, max);
  for (int i = 0; i < v->u.list.n; i++)
    if (!dim_item(cx, key, v->u.list.items[i], &out[i])) return -1;
  return v->u.list.n;
}

/* ───────────────────── attributes of a typed call ───────────────────── */

/* The call's value of key (NULL when absent or None); *def gets the
 * default text of the op's row. */
static const AttrValue *call_attr(const Expr *call, const char *key, const char **def) {
  const OpDef *op = call->u.call.fn->kind == EX_OP ? ops_get(call->u.call.fn->u.op.index) : NULL;
  const OpAttrSpec *s = find_spec(op, key);
  RLY_ASSERT(s); /* the caller asked for an attribute its op does not declare */
  *def = s->def;
  const AttrValue *v = attrs_get(call->u.call.attrs, key);
  return v && v->kind != AV_NONE ? v : NULL;
}

int64_t op_attr_int(const Expr *call, const char *key) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (v && v->kind == AV_INT) return v->u.i;
  if (v && v->kind == AV_BOOL) return v->u.b;
  return def && strcmp(def, "True") == 0 ? 1 : def ? strtoll(def, NULL, 10) : 0;
}

double op_attr_float(const Expr *call, const char *key) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (v && v->kind == AV_FLOAT) return v->u.f;
  if (v && v->kind == AV_INT) return (double)v->u.i;
  return def ? strtod(def, NULL) : 0;
}

bool op_attr_bool(const Expr *call, const char *key) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (v && v->kind == AV_BOOL) return v->u.b;
  if (v && v->kind == AV_INT) return v->u.i != 0;
  return def && (strcmp(def, "True") == 0 || strcmp(def, "1") == 0);
}

const char *op_attr_str(Arena *a, const Expr *call, const char *key) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (v && v->kind == AV_STR) return v->u.s;
  size_t n = def ? strlen(def) : 0;
  return n >= 2 && def[0] == '"' ? arena_strndup(a, def + 1, n - 2) : "";
}

bool op_attr_is_none(const Expr *call, const char *key) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (attrs_get(call->u.call.attrs, key)) return !v;
  return !def || strcmp(def, "None") == 0;
}

int op_attr_ints(const Expr *call, const char *key, int64_t *out, int max) {
  const char *def;
  const AttrValue *v = call_attr(call, key, &def);
  if (!v && attrs_get(call->u.call.attrs, key)) return -1; /* None written */
  if (!v) return def && strcmp(def, "None") != 0 ? parse_default_ints(def, out, max) : -1;
  if (v->kind == AV_INT) return max < 1 ? -1 : (out[0] = v->u.i, 1);
  if (v->kind != AV_LIST || v->u.list.n > max) return -1;
  for (int i = 0; i < v->u.list.n; i++) {
    if (v->u.list.items[i]->kind != AV_INT) return -1;
    out[i] = v->u.list.items[i]->u.i;
  }
  return v->u.list.n;
}

DType rel_attr_dtype(RelCtx *cx, const Attrs *attrs, const char *key, DType dflt) {
  const char *s = rel_attr_str(cx, attrs, key);
  if (cx->err[0]) return DT_INVALID;
  if (!s[0]) return dflt;
  DType dt = dtype_from_name(s, strlen(s));
  if (dt == DT_INVALID) rel_fail(cx, "%s: unknown dtype `%s`", cx->op_name, s);
  return dt;
}

/* ───────────────────────── ops_check_attrs ───────────────────────── */

static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  int row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best, diag = up;
    }
  }
  return row[lb];
}

static const char *closest_attr(const OpDef *op, const char *key) {
  const char *best = NULL;
  int bestd = (int)strlen(key) / 3 + 2; /* accept distances below this */
  for (const OpAttrSpec *s = op->attrs; s && s->name; s++) {
    int d = edit_distance(key, s->name);
    if (d < bestd) best = s->name, bestd = d;
  }
  return best;
}

static const char *unknown_attr(Arena *a, const OpDef *op, const char *key) {
  const char *near = closest_attr(op, key);
  if (near)
    return arena_printf(a, "%s: unknown attribute `%s`; did you mean `%s`?", op->name, key, near);
  if (!op->attrs || !op->attrs[0].name)
    return arena_printf(a, "%s: unknown attribute `%s` (%s takes no attributes)", op->name, key,
                        op->name);
  StrBuf b = {0};
  for (const OpAttrSpec *s = op->attrs; s->name; s++)
    sb_printf(&b, "%s%s", s == op->attrs ? "" : ", ", s->name);
  const char *msg =
      arena_printf(a, "%s: unknown attribute `%s` (it takes %s)", op->name, key, b.data);
  sb_free(&b);
  return msg;
}

static bool list_ok(const AttrValue *v) {
  for (int i = 0; i < v->u.list.n; i++) {
    const AttrValue *it = v->u.list.items[i];
    if (it->kind != AV_INT && it->kind != AV_SYM && !(it->kind == AV_LIST && list_ok(it)))
      return false;
  }
  return true;
}

/* Whether a written value fits the declared kind; *want describes it. */
static bool kind_ok(AttrKind spec, const AttrValue *v, const char **want) {
  switch (spec) {
    case AV_INT:
      *want = "an int";
      return v->kind == AV_INT;
    case AV_FLOAT:
      *want = "a float";
      return v->kind == AV_FLOAT || v->kind == AV_INT;
    case AV_BOOL:
      *want = "a bool";
      return v->kind == AV_BOOL || (v->kind == AV_INT && (v->u.i == 0 || v->u.i == 1));
    case AV_STR:
      *want = "a string";
      return v->kind == AV_STR || v->kind == AV_NONE;
    case AV_LIST:
      *want = "a list of ints";
      return v->kind == AV_INT || v->kind == AV_NONE || (v->kind == AV_LIST && list_ok(v));
    case AV_NONE:
      *want = "an int or None";
      return v->kind == AV_INT || v->kind == AV_NONE;
    case AV_EXPR:
    case AV_SYM:
      *want = "a value";
      return true;
  }
  return true;
}

const char *ops_check_attrs(Arena *a, const OpDef *op, const Attrs *attrs, Span *where) {
  for (int i = 0; attrs && i < attrs->n; i++) {
    const char *key = attrs->keys[i], *want;
    const AttrValue *v = attrs->vals[i];
    const OpAttrSpec *s = find_spec(op, key);
    if (s && kind_ok(s->kind, v, &want)) continue;
    if (where) *where = v->span;
    if (!s) return unknown_attr(a, op, key);
    return arena_printf(a, "%s: attribute `%s` must be %s, got %s", op->name, key, want,
                        kind_article(v->kind));
  }
  /* A missing attribute has no span of its own: *where stays (the call). */
  for (const OpAttrSpec *s = op->attrs; s && s->name; s++)
    if (!s->def && !attrs_get(attrs, s->name))
      return arena_printf(a, "%s: missing attribute `%s`", op->name, s->name);
  return NULL;
}
