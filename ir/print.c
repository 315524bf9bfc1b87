/* print.c — the printers: Relay modules, definitions, expressions, types
 * and literals in canonical text (TVM v0.10 style plus our extensions,
 * shared/docs/text-format.md), and TIR prim functions (part B.5).
 *
 * Invariants:
 * - print → parse → print is a fixed point.  Literals re-lex to the same
 *   value (shortest round-tripping floats, width suffixes); graph
 *   temporaries are renumbered %0, %1, ... from ONE counter per print call,
 *   in text order; user names are printed verbatim unless that would change
 *   what a use refers to, in which case the inner binder gets a fresh name.
 * - No recursion on the length of a let / sequence / %N chain: a block is
 *   printed by a loop and both analyses use explicit work lists.  Recursion
 *   follows expression nesting only.
 * - A node reachable twice (a DAG built by a pass) is printed once, as a
 *   `%N = ...;` binding in the innermost scope enclosing all its uses, just
 *   before the first statement there that uses it (TVM hoists to the first
 *   use's scope, which breaks when uses sit in sibling scopes).
 *
 * Literal formats (agreed with parser/lexer.c): int32 bare, other widths
 * with their suffix (3i64, 3u8); floats `1f`, `0.1f16`, `2.5f64`, `0.1bf16`; infinities
 * and NaN as `inf`/`-inf`/`nan` plus the float suffix (`inff`, `-inff`,
 * `nanf`, `inff16`, `nanf64`; float_to_text writes the body), as TVM
 * prints them; strings with the escapes \" \\ \n \t \r and
 * every other byte raw. */
#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/sched.h"
#include "ir/tir.h"
#include "ir/walk.h"

/* ──────────────── pointer-keyed maps and sets (ir/util.h U64Map) ──────────────── */

typedef U64Map PtrMap;

static uint64_t *pm_find(const PtrMap *m, const void *k) { return u64map_find(m, PTR_KEY(k)); }
/* The value slot of k; a new key starts at 0. */
static uint64_t *pm_slot(PtrMap *m, const void *k) { return u64map_slot(m, PTR_KEY(k)); }
/* Adds k to a set; false if it was there already. */
static bool ps_insert(PtrMap *m, const void *k) { return u64map_insert(m, PTR_KEY(k)); }
static void pm_free(PtrMap *m) { u64map_free(m); }

#define GROW(arr, n, cap)                                    \
  do {                                                       \
    if ((n) == (cap)) {                                      \
      (cap) = (cap) ? (cap) * 2 : 16;                        \
      (arr) = realloc((arr), sizeof *(arr) * (size_t)(cap)); \
      if (!(arr)) rly_oom();                                 \
    }                                                        \
  } while (0)

/* ───────────────────────────── literals ───────────────────────────── */

/* Is v exactly a value of dt?  Literals are; an attribute computed as a
 * double may not be.  (A double past FLT_MAX is not converted: that is
 * undefined behaviour.) */
static bool exact_in(double v, DType dt) {
  if (dt == DT_FLOAT16) return (double)half_to_float(double_to_half(v)) == v;
  if (dt == DT_BFLOAT16) return (double)bf16_to_float(double_to_bf16(v)) == v;
  return dt != DT_FLOAT32 || (fabs(v) <= FLT_MAX && (double)(float)v == v);
}

/* A float of type dt, in the shortest text the lexer reads back to the same
 * bits.  A value that is not exactly of its type keeps a double's digits
 * so it stays exact. */
static void put_float(StrBuf *b, double v, DType dt) {
  if (!dtype_is_float(dt)) dt = DT_FLOAT32;
  const char *suf = dtype_suffix(dt);
  char buf[64];
  float_to_text(buf, sizeof buf, v, exact_in(v, dt) ? dt : DT_FLOAT64);
  if (v == trunc(v) && fabs(v) < 1e17) { /* 65504 reads better than 6.55e+04 */
    char whole[32];
    snprintf(whole, sizeof whole, "%.0f", v);
    if (strlen(whole) < strlen(buf)) memcpy(buf, whole, strlen(whole) + 1);
  }
  sb_puts(b, buf);
  sb_puts(b, suf);
}

/* An integer of type dt (uint64 values are stored bit-for-bit). */
static void put_int(StrBuf *b, int64_t v, DType dt) {
  switch (dtype_class(dt)) {
    case 'b':
      sb_puts(b, v ? "True" : "False");
      return;
    case 'u':
      sb_printf(b, "%" PRIu64 "%s", (uint64_t)v, dtype_suffix(dt));
      return;
    case 'i':
      sb_printf(b, "%" PRId64 "%s", v, dtype_suffix(dt));
      return;
    default:
      sb_printf(b, "%" PRId64, v);
      return;
  }
}

void print_scalar_to(StrBuf *b, const Tensor *t, int64_t i) {
  switch (dtype_class(t->dtype)) {
    case 'f':
      put_float(b, tensor_get_f64(t, i), t->dtype);
      break;
    case 'u':
      put_int(b, (int64_t)tensor_get_u64(t, i), t->dtype);
      break;
    default:
      put_int(b, tensor_get_i64(t, i), t->dtype);
      break;
  }
}

static void tensor_elems(StrBuf *b, const Tensor *t, int d, int64_t *next) {
  if (d == t->ndim) {
    print_scalar_to(b, t, (*next)++);
    return;
  }
  sb_putc(b, '[');
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (i) sb_puts(b, ", ");
    tensor_elems(b, t, d + 1, next);
  }
  sb_putc(b, ']');
}

bool print_empty_tensor_to(StrBuf *b, const Tensor *t) {
  bool empty = false;
  for (int d = 0; d < t->ndim; d++) empty |= t->shape[d] == 0;
  if (!empty) return false;
  sb_puts(b, "zeros(shape=[");
  for (int d = 0; d < t->ndim; d++) sb_printf(b, "%s%" PRId64, d ? ", " : "", t->shape[d]);
  sb_printf(b, "], dtype=\"%s\")", dtype_name(t->dtype));
  return true;
}

void print_tensor_literal_to(StrBuf *b, const Tensor *t) {
  if (print_empty_tensor_to(b, t)) return;
  int64_t next = 0;
  tensor_elems(b, t, 0, &next);
}

void print_string_to(StrBuf *b, const char *s) {
  sb_putc(b, '"');
  for (; *s; s++) {
    switch (*s) {
      case '"':
        sb_puts(b, "\\\"");
        break;
      case '\\':
        sb_puts(b, "\\\\");
        break;
      case '\n':
        sb_puts(b, "\\n");
        break;
      case '\t':
        sb_puts(b, "\\t");
        break;
      case '\r':
        sb_puts(b, "\\r");
        break;
      default:
        sb_putc(b, *s);
        break;
    }
  }
  sb_putc(b, '"');
}

/* ────────────────────────────── types ────────────────────────────── */

static void put_dim(StrBuf *b, Dim d) {
  switch (d.kind) {
    case DIM_CONST:
      sb_printf(b, "%" PRId64, d.value);
      break;
    case DIM_VAR:
      sb_puts(b, d.name);
      break;
    case DIM_ANY:
    case DIM_META:
      sb_putc(b, '?');
      break;
  }
}

void print_dims_to(StrBuf *b, int ndim, const Dim *dims) {
  sb_putc(b, '(');
  for (int i = 0; i < ndim; i++) {
    if (i) sb_puts(b, ", ");
    put_dim(b, dims[i]);
  }
  sb_putc(b, ')');
}

static void put_types(StrBuf *b, int n, Type *const *ts) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    print_type_to(b, ts[i]);
  }
}

static void put_names(StrBuf *b, int n, const char *const *names) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    sb_puts(b, names[i]);
  }
}

static void put_tparams(StrBuf *b, int n, const char *const *names) {
  if (!n) return;
  sb_putc(b, '[');
  put_names(b, n, names);
  sb_putc(b, ']');
}

/* Prints a type in the form the parser reads back: a rank-0 tensor as its
 * dtype, a 1-tuple as `(A,)`, references as `Ref[T]`, and a missing or
 * incomplete type as `_`. */
void print_type_to(StrBuf *b, const Type *t) {
  if (!t) {
    sb_putc(b, '_');
    return;
  }
  switch (t->kind) {
    case TY_TENSOR:
      if (!t->u.tensor.ndim) {
        sb_puts(b, dtype_name(t->u.tensor.dtype));
        break;
      }
      sb_puts(b, "Tensor[");
      print_dims_to(b, t->u.tensor.ndim, t->u.tensor.dims);
      sb_printf(b, ", %s]", dtype_name(t->u.tensor.dtype));
      break;
    case TY_TUPLE:
      sb_putc(b, '(');
      put_types(b, t->u.tuple.n, t->u.tuple.fields);
      sb_puts(b, t->u.tuple.n == 1 ? ",)" : ")");
      break;
    case TY_FUNC:
      sb_puts(b, "fn ");
      put_tparams(b, t->u.func.ntparams, t->u.func.tparams);
      sb_putc(b, '(');
      put_types(b, t->u.func.nparams, t->u.func.params);
      sb_puts(b, ") -> ");
      print_type_to(b, t->u.func.ret);
      break;
    case TY_VAR:
      sb_puts(b, t->u.var.name);
      break;
    case TY_ADT:
      sb_puts(b, t->u.adt.name);
      if (t->u.adt.nargs) {
        sb_putc(b, '[');
        put_types(b, t->u.adt.nargs, t->u.adt.args);
        sb_putc(b, ']');
      }
      break;
    case TY_REF:
      sb_puts(b, "Ref[");
      print_type_to(b, t->u.ref.inner);
      sb_putc(b, ']');
      break;
    case TY_RANDSTATE:
      sb_puts(b, "RandState");
      break;
    case TY_INCOMPLETE:
      sb_putc(b, '_');
      break;
  }
}

/* Display columns of UTF-8 text (continuation bytes take none). */
static size_t text_cols(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

/* A function type within `width` columns: the first parameter and as many
 * more as fit, then `… N more`; a result over half the width becomes
 * `(… N results)` (tuples) or `…`.  Other types are returned whole. */
char *print_type_short(const Type *t, size_t width) {
  char *full = print_type(t);
  if (text_cols(full, strlen(full)) <= width || !t || t->kind != TY_FUNC) return full;
  free(full);
  const Type *r = t->u.func.ret;
  char *ret = print_type(r);
  if (text_cols(ret, strlen(ret)) > width / 2) {
    free(ret);
    StrBuf rb = {0};
    if (r && r->kind == TY_TUPLE)
      sb_printf(&rb, "(\u2026 %d results)", r->u.tuple.n);
    else
      sb_puts(&rb, "\u2026");
    ret = sb_take(&rb);
  }
  StrBuf b = {0};
  sb_puts(&b, "fn ");
  put_tparams(&b, t->u.func.ntparams, t->u.func.tparams);
  sb_putc(&b, '(');
  int n = t->u.func.nparams, shown = 0;
  size_t tail_fixed = sizeof ") -> " - 1 + text_cols(ret, strlen(ret));
  for (; shown < n; shown++) {
    size_t mark = b.len;
    if (shown) sb_puts(&b, ", ");
    print_type_to(&b, t->u.func.params[shown]);
    char more[48] = "";
    if (shown + 1 < n) snprintf(more, sizeof more, ", \u2026 %d more", n - shown - 1);
    /* the first parameter is always shown (a model's data input) */
    if (shown && text_cols(b.data, b.len) + text_cols(more, strlen(more)) + tail_fixed > width) {
      b.len = mark, b.data[mark] = 0;
      break;
    }
  }
  if (shown < n) sb_printf(&b, "%s\u2026 %d more", shown ? ", " : "", n - shown);
  sb_printf(&b, ") -> %s", ret);
  free(ret);
  return sb_take(&b);
}

char *print_type(const Type *t) {
  StrBuf b = {0};
  print_type_to(&b, t);
  return sb_take(&b);
}

/* ─────────────────────────── printer state ─────────────────────────── */

/* A node reachable twice: where and when its `%N = ...;` is printed. */
typedef struct NodeInfo {
  int refs, remaining; /* incoming edges; edges not yet placed */
  int scope, ord;      /* placement: scope record and statement ordinal */
  int order;           /* position in placement order (parents first) */
  int64_t num;         /* its %N once printed, else -1 */
  bool placed;
} NodeInfo;

/* A block's scope: entered from statement `entry` of scope `parent`.
 * anchors[begin, end) are the hoisted nodes printed in it. */
typedef struct ScopeRec {
  int parent, entry, depth;
  size_t begin, end;
} ScopeRec;

typedef struct Anchor {
  int scope, ord, order;
  const Expr *e;
} Anchor;

/* A live binding of a verbatim name; prev: the binding it shadows (index + 1). */
typedef struct Bind {
  const Var *v;
  size_t prev;
} Bind;

enum { VAR_USED = 1, VAR_RENAME = 2 };

typedef struct Printer {
  StrBuf *b;
  PrintOptions opt;
  Arena arena;      /* generated names */
  int64_t next_num; /* the one %N counter of this print call */
  /* per root (a definition, a state global, an expression) */
  const Function *root_fn;
  const Expr *root;
  PtrMap seen;   /* set: every non-atomic node of the root */
  PtrMap shared; /* node reachable twice → index + 1 into nodes */
  NodeInfo *nodes;
  size_t nnodes, capnodes;
  bool dag;         /* shared is not empty */
  PtrMap var_flags; /* Var* → VAR_USED (anonymous vars only) | VAR_RENAME */
  StrMap taken;     /* names printed verbatim (collected on first need) */
  bool taken_ready;
  PtrMap scope_ix; /* block key → index + 1 into scopes */
  ScopeRec *scopes;
  size_t nscopes, capscopes;
  Anchor *anchors;
  size_t nanchors, capanchors;
  /* per printing attempt */
  PtrMap names;    /* Var* → generated name, or graph number + 1 */
  StrMap gen;      /* generated names */
  StrMap gen_next; /* base → next suffix to try */
  Bind *binds;
  size_t nbinds, capbinds;
  StrMap top;    /* name → innermost live binding (index + 1) */
  bool conflict; /* a use was captured: rename and print again */
  char rootkey;  /* its address keys the root block */
  PtrMap meta;   /* Tensor* → meta index + 1 (opt.meta_limit), kept across roots */
  int64_t nmeta;
  const Tensor **metas; /* [index]: the constants shown as meta[...], in order */
  int64_t capmetas;
} Printer;

static void printer_init(Printer *P, StrBuf *b, PrintOptions opt) {
  memset(P, 0, sizeof *P);
  P->b = b, P->opt = opt;
  arena_init(&P->arena);
}

static void root_reset(Printer *P) {
  pm_free(&P->seen);
  pm_free(&P->shared);
  pm_free(&P->var_flags);
  pm_free(&P->scope_ix);
  strmap_free(&P->taken);
  P->nnodes = P->nscopes = P->nanchors = 0;
  P->dag = P->taken_ready = false;
  P->root_fn = NULL, P->root = NULL;
}

static void attempt_reset(Printer *P) {
  pm_free(&P->names);
  strmap_free(&P->gen);
  strmap_free(&P->gen_next);
  strmap_free(&P->top);
  P->nbinds = 0;
  P->conflict = false;
  for (size_t i = 0; i < P->nnodes; i++) P->nodes[i].num = -1;
}

static void printer_free(Printer *P) {
  pm_free(&P->meta);
  free(P->metas);
  root_reset(P);
  attempt_reset(P);
  free(P->nodes);
  free(P->scopes);
  free(P->anchors);
  free(P->binds);
  arena_free(&P->arena);
}

/* A 0-argument constructor call prints bare (`Nil`). */
static bool is_bare_ctor(const Expr *e) {
  return e->kind == EX_CALL && e->u.call.fn->kind == EX_CTOR && e->u.call.nargs == 0 &&
         (!e->u.call.attrs || e->u.call.attrs->n == 0);
}

/* Atoms are printed in place at every use, never hoisted. */
static bool is_atom(const Expr *e) {
  switch (e->kind) {
    case EX_CONST:
    case EX_VAR:
    case EX_GLOBAL:
    case EX_OP:
    case EX_CTOR:
      return true;
    case EX_CALL:
      return is_bare_ctor(e);
    default:
      return false;
  }
}

static NodeInfo *shared_info(const Printer *P, const Expr *e) {
  if (!P->dag || is_atom(e)) return NULL;
  uint64_t *s = pm_find(&P->shared, e);
  return s ? &P->nodes[*s - 1] : NULL;
}

static bool hoisted(const Printer *P, const Expr *e) { return shared_info(P, e) != NULL; }

/* ─────────────────────────── variable names ─────────────────────────── */

/* What the lexer reads after `%`: [A-Za-z_][A-Za-z0-9_]*, `/` between name characters. */
static bool valid_name(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (const char *p = s + 1; *p; p++) {
    unsigned char c = (unsigned char)*p;
    bool next_ok = p[1] && (isalnum((unsigned char)p[1]) || p[1] == '_');
    if (!(isalnum(c) || c == '_' || (c == '/' && next_ok))) return false;
  }
  return true;
}

static uint64_t var_flags(const Printer *P, const Var *v) {
  uint64_t *s = pm_find(&P->var_flags, v);
  return s ? *s : 0;
}

/* Printed as its own name (no map needed for the common case). */
static bool verbatim(const Printer *P, const Var *v) {
  return !v->is_graph && valid_name(v->name) && !(var_flags(P, v) & VAR_RENAME);
}

static void push_children(PtrVec *st, const Expr *e);

static void note_name(Printer *P, const Var *v) {
  if (!v->is_graph && valid_name(v->name)) strmap_put(&P->taken, v->name, (void *)1);
}

static void note_binder(void *P, Var *v) { note_name(P, v); }

/* Every name of the root, so generated names avoid them.  Built only when
 * a first name must be generated: every node is in `seen`, every variable
 * is a binder or a child of one of them. */
static void collect_taken(Printer *P) {
  PtrVec kids = {0};
  P->taken_ready = true;
  for (int i = 0; P->root_fn && i < P->root_fn->nparams; i++) note_name(P, P->root_fn->params[i]);
  if (P->root && P->root->kind == EX_VAR) note_name(P, P->root->u.var);
  for (size_t i = 0; i < P->seen.cap; i++) {
    if (!P->seen.keys[i]) continue;
    const Expr *e = (const Expr *)(uintptr_t)P->seen.keys[i];
    expr_binders(e, -1, note_binder, P);
    kids.len = 0;
    push_children(&kids, e);
    for (size_t k = 0; k < kids.len; k++) {
      const Expr *c = kids.items[k];
      if (c && c->kind == EX_VAR) note_name(P, c->u.var);
    }
  }
  vec_free(&kids);
}

static bool name_free(const Printer *P, const char *s) {
  return !strmap_get(&P->taken, s) && !strmap_get(&P->gen, s);
}

/* A valid name from a hint: bad characters become `_`, a bad start gets `v`. */
static char *sanitize(Printer *P, const char *hint) {
  size_t n = strlen(hint);
  bool prefix = !(isalpha((unsigned char)hint[0]) || hint[0] == '_');
  char *s = arena_alloc(&P->arena, n + 2);
  size_t k = 0;
  if (prefix) s[k++] = 'v';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)hint[i];
    s[k++] = (char)(isalnum(c) || c == '_' ? c : '_');
  }
  s[k] = 0;
  return s;
}

/* A name no verbatim or generated name uses: hint, hint1, hint2, ... */
static const char *fresh_name(Printer *P, const char *hint) {
  if (!P->taken_ready) collect_taken(P);
  const char *base = sanitize(P, hint);
  const char *name = base;
  intptr_t k = (intptr_t)strmap_get(&P->gen_next, base);
  if (k) name = arena_printf(&P->arena, "%s%" PRIdPTR, base, k);
  while (!name_free(P, name)) name = arena_printf(&P->arena, "%s%" PRIdPTR, base, ++k);
  strmap_put(&P->gen_next, base, (void *)(k + 1));
  strmap_put(&P->gen, name, (void *)1);
  return name;
}

/* `%name`.  A name that cannot be printed verbatim is fixed at first
 * request; graph temporaries then take the next number, so numbering
 * follows text order. */
static void put_var(Printer *P, const Var *v) {
  if (verbatim(P, v)) {
    sb_putc(P->b, '%');
    sb_puts(P->b, v->name);
    return;
  }
  uint64_t *s = pm_slot(&P->names, v);
  if (!*s && v->is_graph) *s = (uint64_t)P->next_num++ + 1;
  if (!*s) *s = (uint64_t)(uintptr_t)fresh_name(P, var_named(v) ? v->name : "v");
  if (v->is_graph)
    sb_printf(P->b, "%%%" PRIu64, *s - 1);
  else
    sb_printf(P->b, "%%%s", (const char *)(uintptr_t)*s);
}

/* Only verbatim names can capture: generated names and numbers are unique. */
static void push_bind(Printer *P, const Var *v) {
  if (!verbatim(P, v)) return;
  GROW(P->binds, P->nbinds, P->capbinds);
  P->binds[P->nbinds].v = v;
  P->binds[P->nbinds].prev = (size_t)(uintptr_t)strmap_get(&P->top, v->name);
  P->nbinds++;
  strmap_put(&P->top, v->name, (void *)(uintptr_t)P->nbinds);
}

static void pop_binds(Printer *P, size_t mark) {
  while (P->nbinds > mark) {
    const Bind *bd = &P->binds[--P->nbinds];
    strmap_put(&P->top, bd->v->name, (void *)(uintptr_t)bd->prev);
  }
}

/* A use of verbatim v: every binder of the same name above v's own would
 * capture it, so those get fresh names in the next attempt. */
static void check_use(Printer *P, const Var *v) {
  size_t i = (size_t)(uintptr_t)strmap_get(&P->top, v->name);
  while (i && P->binds[i - 1].v != v) {
    *pm_slot(&P->var_flags, P->binds[i - 1].v) |= VAR_RENAME;
    P->conflict = true;
    i = P->binds[i - 1].prev;
  }
}

/* ───────────── analysis 1: which nodes are reachable twice ───────────── */

static void push_attr_exprs(PtrVec *st, const AttrValue *v) {
  if (v->kind == AV_EXPR) vec_push(st, v->u.expr);
  if (v->kind == AV_LIST)
    for (int i = 0; i < v->u.list.n; i++) push_attr_exprs(st, v->u.list.items[i]);
}

static void push_attrs(PtrVec *st, const Attrs *at) {
  for (int i = 0; at && i < at->n; i++) push_attr_exprs(st, at->vals[i]);
}

/* The edges of e, as analysis 2 (place_children) walks them. */
static void push_children(PtrVec *st, const Expr *e) {
  expr_children(e, st);
  push_attrs(st, expr_attrs(e));
}

static void count_second_visit(Printer *P, const Expr *e) {
  uint64_t *s = pm_slot(&P->shared, e);
  if (*s) {
    P->nodes[*s - 1].refs++;
    return;
  }
  GROW(P->nodes, P->nnodes, P->capnodes);
  NodeInfo *ni = &P->nodes[P->nnodes];
  memset(ni, 0, sizeof *ni);
  ni->refs = 2, ni->num = -1;
  *s = ++P->nnodes;
  P->dag = true;
}

static void count_refs(Printer *P, const Expr *root) {
  PtrVec st = {0};
  vec_push(&st, (void *)root);
  while (st.len) {
    const Expr *e = vec_pop(&st);
    if (!e) continue;
    if (e->kind == EX_VAR && !var_named(e->u.var)) *pm_slot(&P->var_flags, e->u.var) |= VAR_USED;
    if (is_atom(e)) continue;
    if (ps_insert(&P->seen, e))
      push_children(&st, e);
    else
      count_second_visit(P, e);
  }
  vec_free(&st);
}

/* ──────── analysis 2: where each shared node is printed (iterative) ──────── */

static int new_scope(Printer *P, const void *key, int parent, int entry) {
  GROW(P->scopes, P->nscopes, P->capscopes);
  ScopeRec *s = &P->scopes[P->nscopes];
  s->parent = parent, s->entry = entry;
  s->depth = parent < 0 ? 0 : P->scopes[parent].depth + 1;
  s->begin = s->end = 0;
  *pm_slot(&P->scope_ix, key) = ++P->nscopes;
  return (int)P->nscopes - 1;
}

/* The innermost scope enclosing both positions, and there the earlier of
 * the two statements through which they are reached. */
static void meet(const Printer *P, int *s1, int *o1, int s2, int o2) {
  int a = *s1, oa = *o1, b = s2, ob = o2;
  const ScopeRec *sc = P->scopes;
  while (sc[a].depth > sc[b].depth) oa = sc[a].entry, a = sc[a].parent;
  while (sc[b].depth > sc[a].depth) ob = sc[b].entry, b = sc[b].parent;
  while (a != b) oa = sc[a].entry, a = sc[a].parent, ob = sc[b].entry, b = sc[b].parent;
  *s1 = a, *o1 = oa < ob ? oa : ob;
}

/* A node to place from statement o of scope s; inl: it is printed inside
 * an expression (where a let opens its own block), not as a statement. */
typedef struct Work {
  const Expr *e;
  int s, o;
  bool inl;
} Work;

typedef struct Placer {
  Printer *P;
  Work *work;
  size_t n, cap;
  int order;
} Placer;

static void push_work(Placer *pl, const Expr *e, int s, int o, bool inl) {
  GROW(pl->work, pl->n, pl->cap);
  pl->work[pl->n++] = (Work){e, s, o, inl};
}

/* An edge to c.  A shared node waits until all its edges are placed (so
 * placement runs parents first, Kahn's order) and goes to their meet. */
static void edge(Placer *pl, const Expr *c, int s, int o, bool inl) {
  if (!c || is_atom(c)) return;
  NodeInfo *ni = shared_info(pl->P, c);
  if (!ni) {
    push_work(pl, c, s, o, inl);
    return;
  }
  if (!ni->placed)
    ni->placed = true, ni->scope = s, ni->ord = o;
  else
    meet(pl->P, &ni->scope, &ni->ord, s, o);
  if (--ni->remaining == 0) push_work(pl, c, ni->scope, ni->ord, true);
}

static void attr_edges(Placer *pl, const AttrValue *v, int s, int o) {
  if (v->kind == AV_EXPR) edge(pl, v->u.expr, s, o, true);
  if (v->kind == AV_LIST)
    for (int i = 0; i < v->u.list.n; i++) attr_edges(pl, v->u.list.items[i], s, o);
}

static void attrs_edges(Placer *pl, const Attrs *at, int s, int o) {
  for (int i = 0; at && i < at->n; i++) attr_edges(pl, at->vals[i], s, o);
}

/* Block keys: the root block is &P->rootkey, a let printed as a value its
 * EX_LET node, a block child (function body, branch, clause body, dataflow
 * body) the address of its slot (expr_child_slot). */
static void place_children(Placer *pl, const Expr *e, int s, int o) {
  Printer *P = pl->P;
  Expr *rest = expr_rest(e);
  attrs_edges(pl, expr_attrs(e), s, o);
  if (rest)
    edge(pl, rest, s, o + 1, false); /* the rest first keeps the work list short on long chains */
  for (int i = 0; i < expr_nchildren(e); i++) {
    const Expr *c = expr_child(e, i);
    ExprRole r = expr_child_role(e, i);
    if (r == EXPR_OPERAND) edge(pl, c, s, o, true);
    if (r == EXPR_BLOCK) edge(pl, c, new_scope(P, expr_child_slot(e, i), s, o), 0, false);
  }
}

static int anchor_cmp(const void *x, const void *y) {
  const Anchor *a = x, *b = y;
  if (a->scope != b->scope) return a->scope < b->scope ? -1 : 1;
  if (a->ord != b->ord) return a->ord < b->ord ? -1 : 1;
  return a->order > b->order ? -1 : a->order < b->order; /* dependencies first */
}

static void add_anchor(Printer *P, const NodeInfo *ni, const Expr *e) {
  GROW(P->anchors, P->nanchors, P->capanchors);
  Anchor *an = &P->anchors[P->nanchors++];
  an->scope = ni->scope, an->ord = ni->ord, an->order = ni->order, an->e = e;
}

static void sort_anchors(Printer *P) {
  qsort(P->anchors, P->nanchors, sizeof(Anchor), anchor_cmp);
  for (size_t i = 0; i < P->nanchors; i++) {
    ScopeRec *s = &P->scopes[P->anchors[i].scope];
    if (i == 0 || P->anchors[i - 1].scope != P->anchors[i].scope) s->begin = i;
    s->end = i + 1;
  }
}

/* Places every node, then sorts the shared ones by the statement they
 * are printed before. */
static void place_nodes(Printer *P, const Expr *root) {
  for (size_t i = 0; i < P->nnodes; i++) P->nodes[i].remaining = P->nodes[i].refs;
  Placer pl = {P, NULL, 0, 0, 0};
  new_scope(P, &P->rootkey, -1, 0);
  edge(&pl, root, 0, 0, false);
  while (pl.n) {
    Work w = pl.work[--pl.n];
    NodeInfo *ni = shared_info(P, w.e);
    if (ni) ni->order = pl.order++, add_anchor(P, ni, w.e);
    if ((w.e->kind == EX_LET || w.e->kind == EX_FREE_VAR) && w.inl)
      w.s = new_scope(P, w.e, w.s, w.o), w.o = 0;
    place_children(&pl, w.e, w.s, w.o);
  }
  free(pl.work);
  sort_anchors(P);
}

static void analyze(Printer *P, const Function *f, const Expr *root) {
  root_reset(P);
  P->root_fn = f, P->root = root;
  if (!root) return;
  count_refs(P, root);
  if (P->dag) place_nodes(P, root);
}

/* ───────────────────────────── expressions ───────────────────────────── */

static void print_inline(Printer *P, const Expr *e, int ind);
static void print_value(Printer *P, const Expr *e, int ind, bool own);
static void print_block(Printer *P, const void *key, const Expr *e, int ind, bool own);

static void ann(Printer *P, const Type *t) {
  if (!P->opt.types || !t) return;
  sb_puts(P->b, " /* ty=");
  print_type_to(P->b, t);
  sb_puts(P->b, " */");
}

/* An attribute value as the parser reads it: ints keep their suffix unless
 * int32, strings are escaped, symbols (meta references, names) print raw. */
static void attr_value(Printer *P, const AttrValue *v, int ind) {
  StrBuf *b = P->b;
  switch (v->kind) {
    case AV_INT:
      put_int(b, v->u.i, dtype_is_int(v->dtype) ? v->dtype : DT_INT32);
      break;
    case AV_FLOAT:
      put_float(b, v->u.f, v->dtype);
      break;
    case AV_BOOL:
      sb_puts(b, v->u.b ? "True" : "False");
      break;
    case AV_STR:
      print_string_to(b, v->u.s);
      break;
    case AV_LIST:
      sb_putc(b, '[');
      for (int i = 0; i < v->u.list.n; i++) {
        if (i) sb_puts(b, ", ");
        attr_value(P, v->u.list.items[i], ind);
      }
      sb_putc(b, ']');
      break;
    case AV_NONE:
      sb_puts(b, "None");
      break;
    case AV_EXPR:
      print_inline(P, v->u.expr, ind);
      break;
    case AV_SYM:
      sb_puts(b, v->u.s);
      break;
  }
}

void print_attr_value_to(StrBuf *b, const AttrValue *v) {
  Printer P;
  PrintOptions opt = {0};
  printer_init(&P, b, opt);
  attr_value(&P, v, 0);
  printer_free(&P);
}

/* `k=v, ...` (skip: an index not to print, or -1); first: nothing before. */
static void put_attrs(Printer *P, const Attrs *at, int skip, bool first, int ind) {
  for (int i = 0; at && i < at->n; i++) {
    if (i == skip) continue;
    if (!first) sb_puts(P->b, ", ");
    first = false;
    sb_printf(P->b, "%s=", at->keys[i]);
    attr_value(P, at->vals[i], ind);
  }
}

/* Forms whose text is one token or closed by brackets. */
static bool delimited(const Printer *P, const Expr *e) {
  if (hoisted(P, e)) return true;
  switch (e->kind) {
    case EX_VAR:
    case EX_GLOBAL:
    case EX_TUPLE:
    case EX_LET:
    case EX_FREE_VAR:
    case EX_MATCH:
    case EX_REF_WRITE:
      return true;
    default:
      return false;
  }
}

static bool callee_ok(const Printer *P, const Expr *e) {
  if (delimited(P, e)) return true;
  switch (e->kind) {
    case EX_OP:
    case EX_CTOR:
    case EX_PROJ:
      return true;
    case EX_CALL:
      return !is_bare_ctor(e);
    default:
      return false;
  }
}

static void print_wrapped(Printer *P, const Expr *e, int ind, bool ok) {
  if (!ok) sb_putc(P->b, '(');
  print_inline(P, e, ind);
  if (!ok) sb_putc(P->b, ')');
}

/* The string callee of `call_tir("env.linear", ...)`, stored as attribute `callee`. */
static int call_tir_callee(const Expr *e) {
  const Expr *fn = e->u.call.fn;
  const Attrs *at = e->u.call.attrs;
  if (fn->kind != EX_OP || !fn->u.op.call_tir || !at) return -1;
  for (int i = 0; i < at->n; i++)
    if (strcmp(at->keys[i], "callee") == 0 && at->vals[i]->kind == AV_STR) return i;
  return -1;
}

static void print_call(Printer *P, const Expr *e, int ind) {
  StrBuf *b = P->b;
  if (is_bare_ctor(e)) {
    print_inline(P, e->u.call.fn, ind);
    return;
  }
  print_wrapped(P, e->u.call.fn, ind, callee_ok(P, e->u.call.fn));
  sb_putc(b, '(');
  int skip = call_tir_callee(e);
  if (skip >= 0) print_string_to(b, e->u.call.attrs->vals[skip]->u.s);
  for (int i = 0; i < e->u.call.nargs; i++) {
    if (i || skip >= 0) sb_puts(b, ", ");
    print_inline(P, e->u.call.args[i], ind);
  }
  put_attrs(P, e->u.call.attrs, skip, e->u.call.nargs == 0 && skip < 0, ind);
  sb_putc(b, ')');
}

static void print_tuple(Printer *P, const Expr *e, int ind) {
  sb_putc(P->b, '(');
  for (int i = 0; i < e->u.tuple.n; i++) {
    if (i) sb_puts(P->b, ", ");
    print_inline(P, e->u.tuple.fields[i], ind);
  }
  sb_puts(P->b, e->u.tuple.n == 1 ? ",)" : ")");
}

/* `%x {virtual_device=...}: T` and the checked type as a comment. */
static void print_param(Printer *P, const Var *v, const Type *ty, int ind) {
  put_var(P, v);
  if (var_device(v)) {
    sb_puts(P->b, " {virtual_device=");
    attr_value(P, var_device(v), ind);
    sb_putc(P->b, '}');
  }
  if (v->annot) {
    sb_puts(P->b, ": ");
    print_type_to(P->b, v->annot);
  }
  ann(P, ty);
}

/* `[A](%x: T, attr=v) -> R`; fty: the checked function type, or NULL. */
static void print_sig(Printer *P, const Function *f, const Type *fty, int ind) {
  StrBuf *b = P->b;
  bool typed = fty && fty->kind == TY_FUNC && fty->u.func.nparams == f->nparams;
  put_tparams(b, f->ntparams, f->tparams);
  sb_putc(b, '(');
  for (int i = 0; i < f->nparams; i++) {
    if (i) sb_puts(b, ", ");
    print_param(P, f->params[i], typed ? fty->u.func.params[i] : NULL, ind);
  }
  put_attrs(P, f->attrs, -1, f->nparams == 0, ind);
  sb_putc(b, ')');
  if (f->ret) {
    sb_puts(b, " -> ");
    print_type_to(b, f->ret);
  }
}

/* `sig {` body `}` with the parameters bound in the body. */
static void print_fn_body(Printer *P, const void *key, const Function *f, const Type *fty,
                          int ind) {
  print_sig(P, f, fty, ind);
  sb_puts(P->b, " {\n");
  size_t mark = P->nbinds;
  for (int i = 0; i < f->nparams; i++) push_bind(P, f->params[i]);
  print_block(P, key, f->body, ind + 2, false);
  pop_binds(P, mark);
  sb_indent(P->b, ind);
  sb_putc(P->b, '}');
}

/* A match pattern; a nullary constructor prints bare (`Nil`) and a 1-tuple
 * pattern keeps its comma, so the pattern re-parses to the same shape. */
static void print_pattern(Printer *P, const Pattern *p) {
  StrBuf *b = P->b;
  switch (p->kind) {
    case PAT_WILD:
      sb_putc(b, '_');
      break;
    case PAT_VAR:
      put_var(P, p->u.var);
      if (p->u.var->annot) {
        sb_puts(b, ": ");
        print_type_to(b, p->u.var->annot);
      }
      break;
    case PAT_CTOR:
      sb_puts(b, p->u.ctor.adt->ctors[p->u.ctor.index].name);
      if (!p->u.ctor.n) break;
      sb_putc(b, '(');
      for (int i = 0; i < p->u.ctor.n; i++) {
        if (i) sb_puts(b, ", ");
        print_pattern(P, p->u.ctor.sub[i]);
      }
      sb_putc(b, ')');
      break;
    case PAT_TUPLE:
      sb_putc(b, '(');
      for (int i = 0; i < p->u.tuple.n; i++) {
        if (i) sb_puts(b, ", ");
        print_pattern(P, p->u.tuple.sub[i]);
      }
      sb_puts(b, p->u.tuple.n == 1 ? ",)" : ")");
      break;
  }
}

static void bind_pattern(Printer *P, const Pattern *p) {
  switch (p->kind) {
    case PAT_WILD:
      break;
    case PAT_VAR:
      push_bind(P, p->u.var);
      break;
    case PAT_CTOR:
      for (int i = 0; i < p->u.ctor.n; i++) bind_pattern(P, p->u.ctor.sub[i]);
      break;
    case PAT_TUPLE:
      for (int i = 0; i < p->u.tuple.n; i++) bind_pattern(P, p->u.tuple.sub[i]);
      break;
  }
}

/* Every clause body is printed braced (as TVM does), with the clause's
 * pattern variables bound only while its body is printed. */
static void print_match(Printer *P, const Expr *e, int ind) {
  StrBuf *b = P->b;
  sb_puts(b, e->u.match.partial ? "match? (" : "match (");
  print_inline(P, e->u.match.scrut, ind);
  sb_puts(b, ") {\n");
  for (int i = 0; i < e->u.match.n; i++) {
    const MatchClause *c = &e->u.match.clauses[i];
    size_t mark = P->nbinds;
    sb_indent(b, ind + 2);
    print_pattern(P, c->pat);
    bind_pattern(P, c->pat);
    sb_puts(b, " => {\n");
    print_block(P, &c->body, c->body, ind + 4, false);
    pop_binds(P, mark);
    sb_indent(b, ind + 2);
    sb_puts(b, "},\n");
  }
  sb_indent(b, ind);
  sb_putc(b, '}');
}

static void print_if(Printer *P, const Expr *e, int ind) {
  StrBuf *b = P->b;
  sb_puts(b, "if (");
  print_inline(P, e->u.if_.cond, ind);
  sb_puts(b, ") {\n");
  print_block(P, &e->u.if_.then_, e->u.if_.then_, ind + 2, false);
  sb_indent(b, ind);
  sb_puts(b, "} else {\n");
  print_block(P, &e->u.if_.else_, e->u.if_.else_, ind + 2, false);
  sb_indent(b, ind);
  sb_putc(b, '}');
}

/* A let chain (or free_var) inside an expression: a parenthesized block. */
static void print_paren_block(Printer *P, const Expr *e, int ind) {
  sb_puts(P->b, "(\n");
  print_block(P, e, e, ind + 2, true);
  sb_indent(P->b, ind);
  sb_putc(P->b, ')');
}

/* Records t as the next meta[relay.Constant] entry; its index + 1. */
static int64_t meta_push(Printer *P, const Tensor *t) {
  if (P->nmeta == P->capmetas) {
    P->capmetas = P->capmetas ? 2 * P->capmetas : 16;
    P->metas = realloc(P->metas, sizeof *P->metas * (size_t)P->capmetas);
    if (!P->metas) rly_oom();
  }
  P->metas[P->nmeta++] = t;
  return P->nmeta;
}

/* e's own text in an expression position (never its %N). */
static void print_node(Printer *P, const Expr *e, int ind) {
  StrBuf *b = P->b;
  switch (e->kind) {
    case EX_CONST:
      if (P->opt.meta_limit && e->u.konst.value->numel > P->opt.meta_limit) {
        uint64_t *i = pm_slot(&P->meta, e->u.konst.value);
        if (!*i) *i = (uint64_t)meta_push(P, e->u.konst.value);
        sb_printf(b, "meta[relay.Constant][%" PRIu64 "]", *i - 1);
      } else {
        print_tensor_literal_to(b, e->u.konst.value);
      }
      ann(P, e->ty);
      break;
    case EX_VAR:
      if (verbatim(P, e->u.var)) check_use(P, e->u.var);
      put_var(P, e->u.var);
      break;
    case EX_GLOBAL:
      sb_printf(b, "@%s", e->u.global.name);
      break;
    case EX_OP:
      sb_puts(b, e->u.op.name);
      break;
    case EX_CTOR:
      sb_puts(b, e->u.ctor.adt->ctors[e->u.ctor.index].name);
      break;
    case EX_CALL:
      print_call(P, e, ind);
      ann(P, e->ty);
      break;
    case EX_TUPLE:
      print_tuple(P, e, ind);
      ann(P, e->ty);
      break;
    case EX_PROJ:
      print_wrapped(P, e->u.proj.tuple, ind, delimited(P, e->u.proj.tuple));
      sb_printf(b, ".%d", e->u.proj.index);
      ann(P, e->ty);
      break;
    case EX_LET:
    case EX_FREE_VAR:
      print_paren_block(P, e, ind);
      break;
    case EX_FN:
      sb_puts(b, "fn ");
      print_fn_body(P, &e->u.fn->body, e->u.fn, e->ty, ind);
      ann(P, e->ty);
      break;
    case EX_IF:
      print_if(P, e, ind);
      break;
    case EX_MATCH:
      sb_putc(b, '(');
      print_match(P, e, ind);
      sb_putc(b, ')');
      break;
    case EX_REF_NEW:
      sb_puts(b, "ref(");
      print_inline(P, e->u.ref_new.init, ind);
      sb_putc(b, ')');
      break;
    case EX_REF_READ:
      print_wrapped(P, e->u.ref_read.ref, ind, delimited(P, e->u.ref_read.ref));
      sb_putc(b, '^');
      break;
    case EX_REF_WRITE:
      sb_putc(b, '(');
      print_inline(P, e->u.ref_write.ref, ind);
      sb_puts(b, " := ");
      print_inline(P, e->u.ref_write.value, ind);
      sb_putc(b, ')');
      break;
    case EX_DATAFLOW:
      sb_puts(b, "dataflow {\n");
      print_block(P, &e->u.dataflow.body, e->u.dataflow.body, ind + 2, false);
      sb_indent(b, ind);
      sb_putc(b, '}');
      break;
  }
}

/* In an expression position: %N for a hoisted node, else its text. */
static void print_inline(Printer *P, const Expr *e, int ind) {
  const NodeInfo *ni = shared_info(P, e);
  if (ni) {
    if (ni->num >= 0) {
      sb_printf(P->b, "%%%" PRId64, ni->num);
      return;
    }
  }
  print_node(P, e, ind);
}

/* The value of a binding or the result of a block: a match prints bare
 * there.  own: e is the hoisted node being defined (print its text). */
static void print_value(Printer *P, const Expr *e, int ind, bool own) {
  if (!own && hoisted(P, e))
    print_inline(P, e, ind);
  else if (e->kind == EX_MATCH)
    print_match(P, e, ind);
  else
    print_node(P, e, ind);
}

static void emit_hoisted(Printer *P, const Expr *e, int ind) {
  NodeInfo *ni = shared_info(P, e);
  ni->num = P->next_num++;
  sb_indent(P->b, ind);
  sb_printf(P->b, "%%%" PRId64 " = ", ni->num);
  print_value(P, e, ind, true);
  sb_puts(P->b, ";\n");
}

/* `let %x: T = v;`, `%N = v;` or `v;` (an unused anonymous var).  As in
 * the parser, the var is in scope after its value (`let %x = %x` reads the
 * outer %x). */
static void print_let(Printer *P, const Expr *e, int ind) {
  StrBuf *b = P->b;
  const Var *v = e->u.let.var;
  sb_indent(b, ind);
  if (v->is_graph) {
    put_var(P, v);
    sb_puts(b, " = ");
  } else if (var_named(v) || (var_flags(P, v) & VAR_USED)) {
    sb_puts(b, "let ");
    put_var(P, v);
    if (v->annot) {
      sb_puts(b, ": ");
      print_type_to(b, v->annot);
    }
    sb_puts(b, " = ");
  }
  print_value(P, e->u.let.value, ind, false);
  sb_puts(b, ";\n");
  push_bind(P, v);
}

static void print_free_var(Printer *P, const Expr *e, int ind) {
  const Var *v = e->u.free_var.var;
  sb_indent(P->b, ind);
  sb_puts(P->b, "free_var ");
  put_var(P, v);
  if (v->annot) {
    sb_puts(P->b, ": ");
    print_type_to(P->b, v->annot);
  }
  sb_puts(P->b, ";\n");
  push_bind(P, v);
}

/* A block: statements one per line, then the result, all at indent ind,
 * each line ending with a newline.  A loop walks the chain.  Hoisted nodes
 * anchored at statement k of this block are printed just before it. */
static void print_block(Printer *P, const void *key, const Expr *e, int ind, bool own) {
  size_t mark = P->nbinds, cur = 0, end = 0;
  uint64_t *s = P->dag ? pm_find(&P->scope_ix, key) : NULL;
  if (s) cur = P->scopes[*s - 1].begin, end = P->scopes[*s - 1].end;
  for (int ord = 0;; ord++) {
    while (cur < end && P->anchors[cur].ord <= ord) emit_hoisted(P, P->anchors[cur++].e, ind);
    bool stmt = (e->kind == EX_LET || e->kind == EX_FREE_VAR) && (own || !hoisted(P, e));
    if (!stmt) {
      sb_indent(P->b, ind);
      print_value(P, e, ind, own);
      sb_putc(P->b, '\n');
      break;
    }
    own = false;
    if (e->kind == EX_LET)
      print_let(P, e, ind), e = e->u.let.body;
    else
      print_free_var(P, e, ind), e = e->u.free_var.body;
  }
  pop_binds(P, mark);
}

/* ─────────────────────── roots and definitions ─────────────────────── */

typedef void (*EmitFn)(Printer *P, const void *arg);

/* Analyzes one root, then prints it; a captured name makes it print again
 * with the capturing binders renamed (renames only remove captures). */
static void print_root(Printer *P, const Function *f, const Expr *root, EmitFn emit,
                       const void *arg) {
  analyze(P, f, root);
  size_t start = P->b->len;
  int64_t num0 = P->next_num;
  for (int attempt = 0;; attempt++) {
    attempt_reset(P);
    emit(P, arg);
    if (!P->conflict || attempt == 3) break;
    P->b->len = start;
    if (P->b->data) P->b->data[start] = 0;
    P->next_num = num0;
  }
}

static void emit_expr(Printer *P, const void *arg) {
  print_block(P, &P->rootkey, arg, P->opt.indent, false);
}

char *print_expr(const Expr *e, PrintOptions opt) {
  StrBuf b = {0};
  Printer P;
  printer_init(&P, &b, opt);
  print_root(&P, NULL, e, emit_expr, e);
  printer_free(&P);
  if (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = 0;
  return sb_take(&b);
}

static void emit_func_def(Printer *P, const void *arg) {
  const FuncDef *d = arg;
  sb_printf(P->b, "def @%s", d->name);
  print_fn_body(P, &P->rootkey, d->fn, d->ty, 0);
  sb_putc(P->b, '\n');
}

static void func_def(Printer *P, const FuncDef *d) {
  print_root(P, d->fn, d->fn->body, emit_func_def, d);
}

void print_func_def_to(StrBuf *b, const Module *m, const FuncDef *f, PrintOptions opt) {
  Printer P;
  printer_init(&P, b, opt);
  func_def(&P, f);
  printer_free(&P);
}

/* `global @g: T = e;`.  An initializer that needs bindings (a let chain, or
 * hoisted temporaries in DAG mode) is wrapped in parentheses as a block. */
static void emit_global(Printer *P, const void *arg) {
  const StateGlobal *g = arg;
  sb_printf(P->b, "global @%s: ", g->name);
  print_type_to(P->b, g->type);
  if (g->init) {
    const Expr *e = g->init;
    bool block = e->kind == EX_LET || e->kind == EX_FREE_VAR || (P->dag && P->scopes[0].end > 0);
    sb_puts(P->b, " = ");
    if (block) {
      sb_puts(P->b, "(\n");
      print_block(P, &P->rootkey, e, 2, false);
      sb_putc(P->b, ')');
    } else {
      print_value(P, e, 0, false);
    }
  }
  sb_puts(P->b, ";\n");
}

/* `type T[A] { C(fields), ... }` one constructor per line with a trailing
 * comma, as TVM prints it; `extern type` has no body. */
static void print_adt(StrBuf *b, const AdtDef *a) {
  sb_printf(b, "%stype %s", a->is_extern ? "extern " : "", a->name);
  put_tparams(b, a->ntparams, a->tparams);
  if (a->is_extern) {
    sb_putc(b, '\n');
    return;
  }
  sb_puts(b, " {\n");
  for (int i = 0; i < a->nctors; i++) {
    const CtorDef *c = &a->ctors[i];
    sb_printf(b, "  %s", c->name);
    if (c->nfields) {
      sb_putc(b, '(');
      put_types(b, c->nfields, c->fields);
      sb_putc(b, ')');
    }
    sb_puts(b, ",\n");
  }
  sb_puts(b, "}\n");
}

/* Printed order: ADTs, state globals, then functions and prim functions together. */
static int def_rank(const Def *d) { return d->kind == DEF_ADT ? 0 : d->kind == DEF_GLOBAL ? 1 : 2; }

static int def_cmp(const void *x, const void *y) {
  const Def *a = *(const Def *const *)x, *b = *(const Def *const *)y;
  if (def_rank(a) != def_rank(b)) return def_rank(a) - def_rank(b);
  return strcmp(def_name(a), def_name(b));
}

static void print_def(Printer *P, const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      func_def(P, d->u.func);
      break;
    case DEF_ADT:
      print_adt(P->b, d->u.adt);
      break;
    case DEF_GLOBAL:
      print_root(P, NULL, d->u.global->init, emit_global, d->u.global);
      break;
    case DEF_PRIM: /* a scheduled one as its source: the function, then its schedule */
      print_prim_func_to(P->b, d->u.prim->unscheduled ? d->u.prim->unscheduled : d->u.prim);
      if (d->u.prim->trace) print_sched_trace_to(P->b, d->u.prim->trace);
      break;
  }
}

/* Prints a module sorted (types, then globals, then functions, each by
 * name) so the output does not depend on definition order; the builtin
 * @prng_state is left out since every module has it. */
char *print_module(const Module *m, PrintOptions opt) {
  int64_t nmeta;
  return print_module_meta(m, opt, &nmeta);
}

char *print_module_meta(const Module *m, PrintOptions opt, int64_t *nmeta) {
  StrBuf b = {0};
  Printer P;
  printer_init(&P, &b, opt);
  if (opt.header) sb_puts(&b, "#[version = \"0.0.5\"]\n");
  const Def **defs = malloc(sizeof *defs * (size_t)(m->ndefs ? m->ndefs : 1));
  if (!defs) rly_oom();
  int n = 0;
  for (int i = 0; i < m->ndefs; i++)
    if (!(m->defs[i].kind == DEF_GLOBAL && m->defs[i].u.global->builtin)) defs[n++] = &m->defs[i];
  qsort(defs, (size_t)n, sizeof *defs, def_cmp);
  for (int i = 0; i < n; i++) {
    if (i) sb_putc(&b, '\n');
    print_def(&P, defs[i]);
  }
  free(defs);
  *nmeta = P.nmeta;
  if (opt.meta_section && P.nmeta) print_metadata_to(&b, (const Tensor *const *)P.metas, P.nmeta);
  printer_free(&P);
  return sb_take(&b);
}

/* ─────────────────────────────── TIR ─────────────────────────────── */

enum { TIR_UNARY_PREC = 100 };

static void tir_expr(StrBuf *b, const PrimExpr *e, int prec);

static void tir_list(StrBuf *b, int n, PrimExpr *const *es) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    tir_expr(b, es[i], 0);
  }
}

static void tir_load(StrBuf *b, const Buffer *buf, int n, PrimExpr *const *idx) {
  sb_printf(b, "%%%s[", buf->name);
  tir_list(b, n, idx);
  sb_putc(b, ']');
}

/* `-e`: a literal operand keeps parentheses so `-(3)` does not re-lex as -3. */
static void tir_neg(StrBuf *b, const PrimExpr *x) {
  bool par = x->kind == PE_INT || x->kind == PE_FLOAT || x->kind == PE_NEG;
  sb_putc(b, '-');
  if (par) sb_putc(b, '(');
  tir_expr(b, x, par ? 0 : TIR_UNARY_PREC);
  if (par) sb_putc(b, ')');
}

/* Minimal parentheses: binary operators are left associative. */
static void tir_expr(StrBuf *b, const PrimExpr *e, int prec) {
  switch (e->kind) {
    case PE_INT:
      put_int(b, e->u.i, e->dtype);
      break;
    case PE_FLOAT:
      put_float(b, e->u.f, e->dtype);
      break;
    case PE_VAR:
      sb_printf(b, "%s%s", e->u.var->is_size ? "" : "%", e->u.var->name);
      break;
    case PE_LOAD:
      tir_load(b, e->u.load.buf, e->u.load.n, e->u.load.idx);
      break;
    case PE_BIN: {
      int p = prim_binop_prec(e->u.bin.op);
      if (p < prec) sb_putc(b, '(');
      tir_expr(b, e->u.bin.a, p);
      sb_printf(b, " %s ", prim_binop_text(e->u.bin.op));
      tir_expr(b, e->u.bin.b, p + 1);
      if (p < prec) sb_putc(b, ')');
      break;
    }
    case PE_NOT:
      sb_putc(b, '!');
      tir_expr(b, e->u.operand, TIR_UNARY_PREC);
      break;
    case PE_NEG:
      tir_neg(b, e->u.operand);
      break;
    case PE_CALL:
      sb_printf(b, "%s(", prim_intrinsic_name(e->u.call.fn));
      tir_list(b, e->u.call.n, e->u.call.args);
      sb_putc(b, ')');
      break;
    case PE_CAST:
      sb_printf(b, e->u.cast.bits ? "reinterpret[%s](" : "%s(", dtype_name(e->u.cast.to));
      tir_expr(b, e->u.cast.value, 0);
      sb_putc(b, ')');
      break;
  }
}

static void tir_buffer_type(StrBuf *b, const Buffer *buf) {
  sb_puts(b, "Buffer[");
  print_dims_to(b, buf->ndim, buf->dims);
  sb_printf(b, ", %s]", dtype_name(buf->dtype));
}

static void tir_stmt(StrBuf *b, const Stmt *s, int ind);

/* A statement that fits on one line, without indent or newline. */
static bool tir_simple(StrBuf *b, const Stmt *s) {
  switch (s->kind) {
    case ST_STORE:
      tir_load(b, s->u.store.buf, s->u.store.n, s->u.store.idx);
      sb_puts(b, " = ");
      tir_expr(b, s->u.store.value, 0);
      sb_putc(b, ';');
      return true;
    case ST_ALLOC:
      sb_printf(b, "alloc %%%s: ", s->u.alloc->name);
      tir_buffer_type(b, s->u.alloc);
      sb_putc(b, ';');
      return true;
    case ST_LET:
      sb_printf(b, "let %%%s = ", s->u.let.var->name);
      tir_expr(b, s->u.let.value, 0);
      sb_putc(b, ';');
      return true;
    default:
      return false;
  }
}

static bool is_simple(const Stmt *s) {
  return s->kind == ST_STORE || s->kind == ST_ALLOC || s->kind == ST_LET;
}

/* A TIR loop in its canonical text: `range` always shows its begin, other
 * kinds show a begin only when it is not 0 (matching what the parser
 * normalises), so printing is a fixed point. */
/* A schedule's annotations, as a comment inside the loop or block. */
static void tir_annots(StrBuf *b, const Stmt *s, int ind) {
  for (int i = 0; i < s->nannots; i++) {
    sb_indent(b, ind);
    sb_printf(b, "// annotate %s=%s\n", s->annots[i].key, s->annots[i].value);
  }
}

static void tir_for(StrBuf *b, const Stmt *s, int ind) {
  sb_puts(b, "for ");
  for (int i = 0; i < s->u.for_.nvars; i++)
    sb_printf(b, "%s%%%s", i ? ", " : "", s->u.for_.vars[i]->name);
  sb_printf(b, " in %s(", loop_kind_name(s->u.for_.loop));
  if (s->u.for_.loop == LOOP_RANGE) {
    if (tir_for_lo(s, 0))
      tir_expr(b, tir_for_lo(s, 0), 0);
    else
      sb_putc(b, '0'); /* range always shows its begin; 0 of any dtype is `0` */
    sb_puts(b, ", ");
    tir_expr(b, s->u.for_.hi[0], 0);
  } else if (s->u.for_.nvars == 1 && tir_for_lo(s, 0)) { /* kind(begin, end), begin not 0 */
    tir_expr(b, tir_for_lo(s, 0), 0);
    sb_puts(b, ", ");
    tir_expr(b, s->u.for_.hi[0], 0);
  } else { /* kind(end) or one extent per variable: a begin of 0 is left out */
    tir_list(b, s->u.for_.nvars, s->u.for_.hi);
  }
  sb_puts(b, ") {\n");
  tir_annots(b, s, ind + 2);
  tir_stmt(b, s->u.for_.body, ind + 2);
  sb_indent(b, ind);
  sb_puts(b, "}\n");
}

/* `init { stmt }` on one line when it is a single simple statement. */
static void tir_init(StrBuf *b, const Stmt *init, int ind) {
  const Stmt *one = init;
  if (one->kind == ST_SEQ && one->u.seq.n == 1) one = one->u.seq.items[0];
  sb_indent(b, ind);
  if (is_simple(one)) {
    sb_puts(b, "init { ");
    tir_simple(b, one);
    sb_puts(b, " }\n");
    return;
  }
  sb_puts(b, "init {\n");
  tir_stmt(b, init, ind + 2);
  sb_indent(b, ind);
  sb_puts(b, "}\n");
}

static void tir_block(StrBuf *b, const Stmt *s, int ind) {
  sb_puts(b, "block ");
  print_string_to(b, s->u.block.name ? s->u.block.name : "");
  sb_puts(b, " (");
  for (int i = 0; i < s->u.block.niters; i++) {
    const IterVar *it = &s->u.block.iters[i];
    sb_printf(b, "%s%s %%%s = ", i ? ", " : "", it->reduce ? "reduce" : "spatial", it->var->name);
    tir_expr(b, it->binding, 0);
  }
  sb_puts(b, ") {\n");
  tir_annots(b, s, ind + 2);
  if (s->u.block.init) tir_init(b, s->u.block.init, ind + 2);
  if (s->u.block.body) tir_stmt(b, s->u.block.body, ind + 2);
  sb_indent(b, ind);
  sb_puts(b, "}\n");
}

static void tir_if(StrBuf *b, const Stmt *s, int ind) {
  sb_puts(b, "if (");
  tir_expr(b, s->u.if_.cond, 0);
  sb_puts(b, ") {\n");
  tir_stmt(b, s->u.if_.then_, ind + 2);
  sb_indent(b, ind);
  sb_putc(b, '}');
  if (s->u.if_.else_) {
    sb_puts(b, " else {\n");
    tir_stmt(b, s->u.if_.else_, ind + 2);
    sb_indent(b, ind);
    sb_putc(b, '}');
  }
  sb_putc(b, '\n');
}

static void tir_stmt(StrBuf *b, const Stmt *s, int ind) {
  if (!s) return;
  if (s->kind == ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) tir_stmt(b, s->u.seq.items[i], ind);
    return;
  }
  sb_indent(b, ind);
  switch (s->kind) {
    case ST_FOR:
      tir_for(b, s, ind);
      break;
    case ST_BLOCK:
      tir_block(b, s, ind);
      break;
    case ST_IF:
      tir_if(b, s, ind);
      break;
    default:
      tir_simple(b, s);
      sb_putc(b, '\n');
      break;
  }
}

void print_prim_func_to(StrBuf *b, const PrimFunc *f) {
  sb_printf(b, "prim @%s(", f->name);
  for (int i = 0; i < f->nparams; i++) {
    sb_printf(b, "%s%%%s: ", i ? ", " : "", f->params[i]->name);
    tir_buffer_type(b, f->params[i]);
  }
  for (int i = 0; f->attrs && i < f->attrs->n; i++) {
    sb_printf(b, "%s%s=", i || f->nparams ? ", " : "", f->attrs->keys[i]);
    print_attr_value_to(b, f->attrs->vals[i]);
  }
  sb_puts(b, ") {\n");
  tir_stmt(b, f->body, 2);
  sb_puts(b, "}\n");
}
