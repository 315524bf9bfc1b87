/* parser.c — the recursive-descent parser: tokens and errors, scopes,
 * Relay expressions, definitions, and the module / script / expression
 * entry points (text-format.md parts A, B and C).
 *
 * Invariants:
 * - Recursion only on nesting depth (bounded by PARSE_MAX_DEPTH).  Binding
 *   chains (`let`, `%N =`, `free_var`, `a; b`) are collected by a loop
 *   into nested EX_LETs linked as they are parsed (the tail comes last).
 * - Scopes are one binding stack plus a name → innermost-binding table, so
 *   a million bindings in one scope cost O(1) per lookup.
 * - `@name` references and type names may be forward references: they are
 *   recorded and checked once everything has been parsed.
 * - Every node's span covers its source text. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ops/ops.h"
#include "parser/parse_priv.h"

/* ───────────────────────────── tokens ───────────────────────────── */

/* Consumes one token.  It also keeps the bracket depth, which script mode
 * uses to tell a new item at column 1 from a continuation line, and the end
 * offset of the last token, which every span ends at. */
Token parse_next(Parser *p) {
  Token t = lex_next(&p->lx);
  if (t.kind == T_EOF) return t;
  p->last_end = t.off + t.len;
  switch (t.kind) {
    case T_LPAREN:
    case T_LBRACKET:
    case T_LBRACE:
      p->bdepth++;
      break;
    case T_RPAREN:
    case T_RBRACKET:
    case T_RBRACE:
      p->bdepth--;
      break;
    default:
      break;
  }
  return t;
}

bool parse_accept(Parser *p, TokKind k) {
  if (!at_kind(p, k)) return false;
  parse_next(p);
  return true;
}

bool parse_is_word(const Parser *p, const Token *t, const char *word) {
  size_t n = strlen(word);
  return t->kind == T_IDENT && t->len == n && memcmp(tok_text(p, t), word, n) == 0;
}

/* The sigil a name token starts with (`%`, `@`), if any. */
static size_t name_skip(const Token *t) {
  return t->kind == T_LOCAL || t->kind == T_GRAPH || t->kind == T_GLOBAL;
}

const char *parse_name(Parser *p, const Token *t) {
  size_t skip = name_skip(t);
  return arena_strndup(p->a, tok_text(p, t) + skip, t->len - skip);
}

/* A Var named by a `%x` token (its name copied once, into the Var). */
static Var *token_var(Parser *p, const Token *t, Type *annot) {
  size_t skip = name_skip(t);
  return var_new_n(p->a, tok_text(p, t) + skip, t->len - skip, annot, tok_span(p, t));
}

uint32_t parse_local_off(const Parser *p, Span sp) {
  return sp.off >= p->lx.base && p->lx.base ? sp.off - p->lx.base : 0;
}

Span parse_span_from(const Parser *p, uint32_t start) {
  return lex_span_at(&p->lx, start, p->last_end >= start ? p->last_end - start : 0);
}

/* ───────────────────────────── errors ───────────────────────────── */

static void report(Parser *p, Span sp, bool syntax, const char *fmt, va_list ap) {
  bool at_end =
      syntax && peek(p)->kind == T_EOF && sp.off >= lex_span_at(&p->lx, p->last_end, 0).off;
  if (syntax && (p->panic || (at_end && p->lx.eof_error))) {
    p->panic = true;
    p->hint_off = true;
    return;
  }
  p->hint_off = false;
  if (syntax) p->panic = true;
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  lex_error(&p->lx, sp, at_end, "%s", b.data ? b.data : "");
  sb_free(&b);
}

void parse_err(Parser *p, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(p, sp, true, fmt, ap);
  va_end(ap);
}

void parse_sem_err(Parser *p, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(p, sp, false, fmt, ap);
  va_end(ap);
}

void parse_hint(Parser *p, const char *fmt, ...) {
  if (p->hint_off) return;
  va_list ap;
  va_start(ap, fmt);
  StrBuf b = {0};
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  diag_hint(p->d, "%s", b.data ? b.data : "");
  sb_free(&b);
}

/* How a token is named in "expected X, found Y": tokens with variable text
 * are quoted (cut at 40 characters), fixed ones use their kind's text. */
static const char *describe(Parser *p, const Token *t) {
  switch (t->kind) {
    case T_EOF:
      return "end of input";
    case T_IDENT:
    case T_LOCAL:
    case T_GRAPH:
    case T_GLOBAL:
    case T_INT:
    case T_FLOAT:
    case T_STRING:
    case T_META:
    case T_COMMAND:
      return arena_printf(p->a, "`%.*s`", (int)(t->len > 40 ? 40 : t->len), tok_text(p, t));
    default:
      return lex_kind_text(t->kind);
  }
}

/* Where to point for the current token: at it, or just past the last
 * token when the input ended. */
static Span here(Parser *p) {
  const Token *t = peek(p);
  if (t->kind != T_EOF) return tok_span(p, t);
  return lex_span_at(&p->lx, p->last_end, 0);
}

void parse_expected(Parser *p, const char *what) {
  const Token *t = peek(p);
  if (t->bad) { /* the lexer already explained this token */
    p->panic = p->hint_off = true;
    return;
  }
  parse_err(p, here(p), "expected %s, found %s", what, describe(p, t));
}

bool parse_expect(Parser *p, TokKind k, const char *what) {
  if (parse_accept(p, k)) return true;
  parse_expected(p, what);
  return false;
}

bool parse_expect_semi(Parser *p, const char *after) {
  if (parse_accept(p, T_SEMI)) return true;
  const Token *t = peek(p);
  /* At the end of input more may follow (the REPL reads another line);
   * a closer or a token on the same line is something else gone wrong. */
  if (p->panic || t->bad || !t->nl_before || t->kind == T_EOF || t->kind == T_METADATA ||
      t->kind == T_RPAREN || t->kind == T_RBRACKET || t->kind == T_RBRACE) {
    parse_expected(p, "`;`");
    return false;
  }
  Span end = lex_span_at(&p->lx, p->last_end, 0);
  parse_sem_err(p, end, "expected `;` after this %s", after);
  return true;
}

bool parse_enter(Parser *p) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
  size_t used = p->stack_base > sp ? p->stack_base - sp : 0;
  if (++p->depth <= PARSE_MAX_DEPTH && used <= p->stack_budget) return true;
  parse_err(p, here(p), "nesting is too deep (the limit is %d levels)", PARSE_MAX_DEPTH);
  p->depth--;
  return false;
}

void parse_leave(Parser *p) { p->depth--; }

/* Optimal string alignment distance: edits, with a swap of two adjacent
 * characters counting as one (`desne` is 1 away from `dense`). */
int parse_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 99;
  int prev2[65] = {0}, prev[65], cur[65]; /* rows i-2, i-1, i */
  for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
    memcpy(prev2, prev, sizeof prev);
    memcpy(prev, cur, sizeof cur);
  }
  return prev[lb];
}

/* Close enough to suggest: about a third of the name may differ. */
static bool close_enough(const char *name, int dist) {
  int len = (int)strlen(name);
  return dist <= (len < 3 ? 1 : len / 3 + 1);
}

/* ───────────────────────────── scopes ───────────────────────────── */

size_t parse_scope_mark(const Parser *p) { return p->scope.n; }

/* A slot holds index + 1 of a binding in its low bits (those of the table's
 * position mask) and, above them, the name's hash bits the position does
 * not use: a probe passing another name's slot rarely has to read that
 * binding, which in a long chain is a cache miss.  The all-ones index
 * (tag bits zero) marks a name no longer bound. */
#define HASH_BITS 0x3fffffffu
enum { SCOPE_MAX_BINDINGS = 1u << 30 }; /* a billion: no memory would hold them */

static uint32_t name_hash(const char *name, size_t n) {
  return (uint32_t)hash_bytes(name, n, 0) & HASH_BITS;
}

static uint32_t slot_mask(const Scope *s) { return (uint32_t)(s->nslots - 1); }
static uint32_t slot_gone(const Scope *s) { return slot_mask(s); }
static uint32_t slot_tagged(const Scope *s, uint32_t h, uint32_t index1) {
  return (h & ~slot_mask(s)) | index1;
}

const char *parse_binding_name(const Binding *b) {
  const void *val = binding_val(b);
  switch (binding_tag(b)) {
    case BIND_VAR:
    case BIND_UNBOUND:
      return ((const Var *)val)->name;
    case BIND_BUF:
      return ((const Buffer *)val)->name;
    case BIND_TIRVAR:
      return ((const TirVar *)val)->name;
  }
  return "";
}

/* The slot's spare hash bits already matched; the name decides. */
static bool binding_is(const Binding *b, const char *name, size_t n) {
  const char *bn = parse_binding_name(b);
  return strncmp(bn, name, n) == 0 && bn[n] == 0;
}

static uint32_t binding_hash(const Binding *b) {
  const char *name = parse_binding_name(b);
  return name_hash(name, strlen(name));
}

/* The slot of name: the one holding its innermost binding, else the first
 * free one on its probe sequence (gone or empty).  h: the name's hash cut
 * to HASH_BITS. */
static uint32_t *scope_slot(Scope *s, const char *name, size_t n, uint32_t h) {
  uint32_t mask = slot_mask(s), gone = slot_gone(s);
  uint32_t *free_slot = NULL;
  for (uint32_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t v = s->slots[i];
    if (v == 0) return free_slot ? free_slot : &s->slots[i];
    if (v == gone) {
      if (!free_slot) free_slot = &s->slots[i];
    } else if (((v ^ h) & ~mask) == 0 && binding_is(&s->items[(v & mask) - 1], name, n)) {
      return &s->slots[i];
    }
  }
}

static uint32_t *binding_slot(Scope *s, const Binding *b, uint32_t h) {
  const char *name = parse_binding_name(b);
  return scope_slot(s, name, strlen(name), h);
}

/* A table of three times the live bindings or more (a power of two), at
 * most half full before the next rebuild; rebuilt from the stack (the last
 * binding of a name is its innermost). */
static void scope_rehash(Scope *s) {
  size_t want = 64;
  while (want < 3 * (s->n + 1)) want *= 2;
  big_free(s->slots, s->nslots * sizeof *s->slots);
  s->slots = big_realloc(NULL, 0, want * sizeof *s->slots);
  s->nslots = want, s->used = 0;
  for (size_t i = 0; i < s->n; i++) {
    uint32_t h = binding_hash(&s->items[i]), *slot = binding_slot(s, &s->items[i], h);
    if (*slot == 0) s->used++;
    *slot = slot_tagged(s, h, (uint32_t)i + 1);
  }
}

/* Popping more bindings than stay (the end of a long chain) rebuilds the
 * table from those that stay: a binding at a time would hash each name
 * again and write a table slot that is a cache miss in a big table. */
enum { POP_REBUILD_MIN = 4096 };

void parse_scope_pop(Parser *p, size_t mark) {
  Scope *s = &p->scope;
  if (s->n - mark >= POP_REBUILD_MIN && s->n - mark > mark) {
    s->n = mark;
    scope_rehash(s);
    return;
  }
  while (s->n > mark) {
    Binding *b = &s->items[--s->n];
    uint32_t h = binding_hash(b), *slot = binding_slot(s, b, h);
    RLY_ASSERT((*slot & slot_mask(s)) == s->n + 1);
    const uint64_t *prev = s->shadowed.len ? u64map_find(&s->shadowed, s->n + 1) : NULL;
    *slot = prev && *prev ? slot_tagged(s, h, (uint32_t)*prev) : slot_gone(s);
  }
}

void parse_bind(Parser *p, const char *name, BindTag tag, void *val) {
  Scope *s = &p->scope;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    s->items = big_realloc(s->items, s->cap * sizeof(Binding), cap * sizeof(Binding));
    s->cap = cap;
  }
  if (s->n >= SCOPE_MAX_BINDINGS) rly_oom();
  /* The table grows with the bindings, not only with the names in use: a
   * slot's index bits must hold every index (`let %x` a thousand times
   * fills one slot). */
  size_t live = s->used > s->n ? s->used : s->n;
  if (2 * (live + 1) > s->nslots) scope_rehash(s);
  size_t n = strlen(name);
  uint32_t h = name_hash(name, n), *slot = scope_slot(s, name, n, h);
  RLY_ASSERT(((uintptr_t)val & 3) == 0);
  Binding *b = &s->items[s->n++];
  b->word = (uintptr_t)val | (uintptr_t)tag;
  RLY_ASSERT(parse_binding_name(b) == name);
  uint32_t prev = *slot == slot_gone(s) ? 0 : *slot & slot_mask(s);
  /* An index is used again after a pop: its entry is overwritten either way. */
  uint64_t *old = s->shadowed.len ? u64map_find(&s->shadowed, s->n) : NULL;
  if (prev)
    *u64map_slot(&s->shadowed, s->n) = prev;
  else if (old)
    *old = 0;
  if (*slot == 0) s->used++;
  *slot = slot_tagged(s, h, (uint32_t)s->n);
}

/* The table slot name will be bound at, fetched into the cache while the
 * binding's value is parsed: in a long chain the table outgrows the cache,
 * and each new name hashes to a slot no recent binding touched. */
void parse_bind_soon(Parser *p, const char *name) {
  Scope *s = &p->scope;
  if (!s->nslots) return;
  size_t i = name_hash(name, strlen(name)) & (s->nslots - 1);
  __builtin_prefetch(&s->slots[i], 1);
}

static const char *scratch_str(Parser *p, const char *s, size_t n) {
  p->scratch.len = 0;
  sb_putn(&p->scratch, s, n);
  return p->scratch.data;
}

Binding *parse_lookup(Parser *p, const char *name, size_t n) {
  Scope *s = &p->scope;
  if (!s->nslots) return NULL;
  uint32_t v = *scope_slot(s, name, n, name_hash(name, n));
  return v && v != slot_gone(s) ? &s->items[(v & slot_mask(s)) - 1] : NULL;
}

/* Whether binding i is the innermost of its name. */
static bool scope_innermost(Parser *p, size_t i) {
  const char *name = parse_binding_name(&p->scope.items[i]);
  Binding *b = parse_lookup(p, name, strlen(name));
  return b == &p->scope.items[i];
}

/* Only the innermost bindings are searched: a suggestion is about what is
 * near, and a million session bindings must not make an error slow. */
enum { NEAREST_SCAN_LIMIT = 4096 };

const char *parse_nearest_bound(Parser *p, const char *name, BindTag tag) {
  const char *best = NULL;
  int best_d = 1 << 30;
  size_t stop = p->scope.n > NEAREST_SCAN_LIMIT ? p->scope.n - NEAREST_SCAN_LIMIT : 0;
  for (size_t i = p->scope.n; i-- > stop;) {
    Binding *b = &p->scope.items[i];
    if (binding_tag(b) != tag || !scope_innermost(p, i)) continue;
    int dist = parse_edit_distance(name, parse_binding_name(b));
    if (dist < best_d) best_d = dist, best = parse_binding_name(b);
  }
  return best && close_enough(name, best_d) ? best : NULL;
}

/* ─────────────────────────── expressions ─────────────────────────── */

static Expr *pchain(Parser *p);
static Expr *pchain_in(Parser *p, bool brace);
static Expr *pexpr(Parser *p);
static Expr *ppostfix(Parser *p);
static Expr *pblock(Parser *p);

static Expr *placeholder(Parser *p, Span sp) { return expr_tuple(p->a, 0, NULL, sp); }

/* In a script, a token at column 1 outside brackets starts the next item. */
static bool item_boundary(Parser *p) {
  const Token *t = peek(p);
  return p->script && p->bdepth == 0 && t->col1;
}

/* Distance to an op name, also without its namespace (`dense` ~ `nn.dense`). */
static int op_distance(const char *want, const char *have) {
  int d = parse_edit_distance(want, have);
  const char *dot = strrchr(have, '.');
  if (dot) {
    int d2 = parse_edit_distance(want, dot + 1) + 1;
    if (d2 < d) d = d2;
  }
  return d;
}

/* ops_suggest gives candidates; they are re-ranked with swaps counted as
 * one edit, which is the commonest typo. */
PARSE_NOINLINE static void unknown_op(Parser *p, const char *name, Span sp) {
  parse_sem_err(p, sp, "unknown operator `%s`", name);
  if (strcmp(name, "inf") == 0 || strcmp(name, "nan") == 0) {
    parse_hint(p, "write %sf (float32), %sf16 or %sf64", name, name, name);
    return;
  }
  const char *sugg[8] = {0};
  int n = ops_suggest(name, sugg, 8), best = -1, best_d = 1 << 30;
  for (int i = 0; i < n; i++) {
    if (!sugg[i]) continue;
    int d = op_distance(name, sugg[i]);
    if (d < best_d) best_d = d, best = i;
  }
  if (best >= 0) parse_hint(p, "did you mean `%s`?", sugg[best]);
}

/* A known op is one node per parse, shared by all its uses (nodes are
 * immutable; a call's span does not come from its callee's): a million
 * `add(...)` need one `add`.  Its span is its first use's. */
static Expr *make_op(Parser *p, const char *name, Span sp) {
  int idx = ops_lookup(name);
  if (idx >= 0) {
    if (!p->op_nodes && !(p->op_nodes = calloc((size_t)ops_count(), sizeof(Expr *)))) rly_oom();
    if (!p->op_nodes[idx]) p->op_nodes[idx] = ops_expr(p->a, idx, sp);
    return p->op_nodes[idx];
  }
  Expr *e = expr_new(p->a, EX_OP, sp); /* kept for the diagnostic and recovery */
  e->u.op.index = -1, e->u.op.name = name;
  unknown_op(p, name, sp);
  return e;
}

/* A scalar constant of v's dtype and value.  Constants are immutable, so
 * equal literals (the same dtype and bits) seen recently share one Tensor:
 * a chain of `add(%x, 1f)` holds one `1f`, not a million. */
static Expr *scalar_const(Parser *p, const Tensor *v, Span sp) {
  size_t nb = (size_t)dtype_bytes(v->dtype);
  Tensor **slot = &p->scalars[hash_bytes(v->data, nb, v->dtype) % PARSE_SCALAR_CACHE];
  Tensor *t = *slot;
  if (!t || t->dtype != v->dtype || memcmp(t->data, v->data, nb) != 0) {
    t = *slot = tensor_new(p->a, v->dtype, 0, NULL);
    memcpy(t->data, v->data, nb);
  }
  return expr_const(p->a, t, sp);
}

/* scalar := INT | FLOAT */
PARSE_NOINLINE static Expr *pscalar(Parser *p) {
  Token t = parse_next(p);
  uint64_t bits = 0;
  Tensor v = {t.dtype, 0, NULL, 1, &bits};
  if (t.kind == T_FLOAT)
    tensor_set_f64(&v, 0, t.v.f);
  else if (dtype_class(t.dtype) == 'u')
    tensor_set_u64(&v, 0, (uint64_t)t.v.i);
  else
    tensor_set_i64(&v, 0, t.v.i);
  return scalar_const(p, &v, tok_span(p, &t));
}

/* ident_atom := 'True' | 'False' | IDENT
 * A constructor (bare nullary ones are 0-argument calls) or an operator. */
PARSE_NOINLINE static Expr *pident(Parser *p) {
  Token t = parse_next(p);
  Span sp = tok_span(p, &t);
  if (parse_is_word(p, &t, "True") || parse_is_word(p, &t, "False"))
    return expr_scalar_bool(p->a, tok_text(p, &t)[0] == 'T', sp);
  if (parse_is_word(p, &t, "_")) {
    parse_err(p, sp, "`_` is not an expression");
    return NULL;
  }
  const char *key = scratch_str(p, tok_text(p, &t), t.len);
  int ci = 0;
  AdtDef *adt = module_ctor_adt(p->m, key, &ci);
  if (!adt) { /* an operator: its name comes from the registry, not copied per call */
    int idx = ops_lookup(key);
    return make_op(p, idx >= 0 ? ops_get(idx)->name : parse_name(p, &t), sp);
  }
  Expr *c = expr_new(p->a, EX_CTOR, sp);
  c->u.ctor.adt = adt, c->u.ctor.index = ci;
  if (adt->ctors[ci].nfields == 0 && !at_kind(p, T_LPAREN))
    return expr_call(p->a, c, 0, NULL, NULL, sp);
  return c;
}

/* var_ref := LOCAL | GRAPH */
PARSE_NOINLINE static Expr *pvar_ref(Parser *p) {
  Token t = parse_next(p);
  Span sp = tok_span(p, &t);
  Binding *b = parse_lookup(p, tok_text(p, &t) + 1, t.len - 1);
  if (b && (binding_tag(b) == BIND_VAR || binding_tag(b) == BIND_UNBOUND))
    return expr_var(p->a, binding_val(b), sp);
  Var *v = token_var(p, &t, NULL); /* bound here so the error is said once */
  var_set_span(v, sp);
  parse_sem_err(p, sp, "unbound variable `%%%s`", v->name);
  const char *near = parse_nearest_bound(p, v->name, BIND_VAR);
  if (near) parse_hint(p, "did you mean `%%%s`?", near);
  parse_bind(p, v->name, BIND_UNBOUND, v);
  return expr_var(p->a, v, sp);
}

static void note_global(Parser *p, const char *name, Span sp) {
  NameRef *r = ARENA_NEW(p->a, NameRef);
  r->name = name, r->span = sp;
  vec_push(&p->global_refs, r);
}

/* global_ref := GLOBAL */
PARSE_NOINLINE static Expr *pglobal_ref(Parser *p) {
  Token t = parse_next(p);
  Span sp = tok_span(p, &t);
  if (t.bad) return placeholder(p, sp);
  const char *name = parse_name(p, &t);
  note_global(p, name, sp);
  return expr_global(p->a, name, sp);
}

/* meta_ref := META   (one token: 'meta[' type_key ']' '[' INT ']')
 * Only constants can be expressions; a missing or broken metadata section
 * yields a placeholder so the rest of the program is still checked. */
PARSE_NOINLINE static Expr *pmeta_ref(Parser *p) {
  Token t = parse_next(p);
  Span sp = tok_span(p, &t);
  if (t.bad) return placeholder(p, sp);
  const char *key = tok_text(p, &t) + 5;
  size_t keylen = strcspn(key, "]");
  if (!p->has_meta) {
    parse_sem_err(p, sp, "`%.*s` refers to a metadata section, and there is none", (int)t.len,
                  tok_text(p, &t));
    parse_hint(p, "TVM prints the section with astext(show_meta_data=True)");
    return placeholder(p, sp);
  }
  if (p->meta_broken) return placeholder(p, sp); /* already reported */
  const MetaEntry *e = meta_get(&p->meta, key, keylen, t.v.i);
  if (!e || !e->tensor) {
    parse_sem_err(p, sp, e ? "`%.*s` is not a constant" : "no entry `%.*s` in the metadata section",
                  (int)t.len, tok_text(p, &t));
    return placeholder(p, sp);
  }
  return expr_const(p->a, e->tensor, sp);
}

/* paren := '(' ( chain ( ',' chain )* ','? )? ')'
 * `()`, `(e)`, `(e,)`, `(a, b, ...)`. */
PARSE_NOINLINE static Expr *pparen(Parser *p) {
  uint32_t start = parse_next(p).off;
  if (parse_accept(p, T_RPAREN)) return expr_tuple(p->a, 0, NULL, parse_span_from(p, start));
  Expr *first = pchain(p);
  if (!first) return NULL;
  if (!at_kind(p, T_COMMA)) return parse_expect(p, T_RPAREN, "`)`") ? first : NULL;
  PtrVec items = {0};
  vec_push(&items, first);
  while (parse_accept(p, T_COMMA) && !at_kind(p, T_RPAREN)) {
    Expr *e = pchain(p);
    if (!e) return vec_free(&items), NULL;
    vec_push(&items, e);
  }
  if (!parse_expect(p, T_RPAREN, "`,` or `)`")) return vec_free(&items), NULL;
  int n = (int)items.len;
  Expr *e = expr_tuple(p->a, n, (Expr **)items.items, parse_span_from(p, start));
  vec_free(&items);
  return e;
}

/* ── tensor literals ── */

typedef union Elem {
  int64_t i;
  double f;
} Elem;

typedef struct TLit {
  DType dt;
  bool unsuffixed_ints; /* every element so far is an int without suffix */
  int ndim;             /* -1 until the first scalar */
  int64_t shape[TENSOR_MAX_RANK];
  Elem *vals;
  size_t n, cap;
} TLit;

static bool tlit_elem_type(Parser *p, TLit *L, const Token *t, DType dt) {
  bool unsuffixed = t->kind == T_INT && !memchr(tok_text(p, t), 'i', t->len) &&
                    !memchr(tok_text(p, t), 'u', t->len);
  if (L->dt == DT_INVALID)
    L->dt = dt, L->unsuffixed_ints = unsuffixed;
  else if (L->dt != dt && L->unsuffixed_ints && unsuffixed)
    L->dt = DT_INT64;
  else if (L->dt != dt) {
    parse_err(p, tok_span(p, t), "tensor literal mixes %s and %s elements", dtype_name(L->dt),
              dtype_name(dt));
    return false;
  }
  L->unsuffixed_ints &= unsuffixed;
  return true;
}

/* tlit_elem := INT | FLOAT | 'True' | 'False'
 * Every element must sit at the same depth (the literal's rank) and have
 * one dtype; unsuffixed ints widen together to int64 if one needs it. */
static bool tlit_scalar(Parser *p, TLit *L, int level) {
  const Token *t = peek(p);
  bool is_bool = parse_is_word(p, t, "True") || parse_is_word(p, t, "False");
  if (t->kind != T_INT && t->kind != T_FLOAT && !is_bool) {
    parse_expected(p, "a number in the tensor literal");
    parse_hint(p, "elements of a tensor literal are literals; use stack(...) to combine tensors");
    return false;
  }
  if (L->ndim >= 0 && L->ndim != level) {
    parse_err(p, tok_span(p, t), "ragged tensor literal: expected a nested list here");
    return false;
  }
  L->ndim = level;
  if (!tlit_elem_type(p, L, t, is_bool ? DT_BOOL : t->dtype)) return false;
  Token tk = parse_next(p);
  if (L->n == L->cap) {
    L->cap = L->cap ? L->cap * 2 : 64;
    L->vals = realloc(L->vals, L->cap * sizeof(Elem));
    if (!L->vals) rly_oom();
  }
  Elem *e = &L->vals[L->n++];
  if (is_bool)
    e->i = tok_text(p, &tk)[0] == 'T';
  else if (tk.kind == T_FLOAT)
    e->f = tk.v.f;
  else
    e->i = tk.v.i;
  return true;
}

/* tlit_list := '[' ( ( tlit_list | tlit_elem ) ( ',' ( tlit_list | tlit_elem ) )* ','? )? ']'
 * `[` items `]` at nesting `level`; checks the shape is rectangular. */
static bool tlit_list(Parser *p, TLit *L, int level) {
  Token open = parse_next(p);
  if (level >= TENSOR_MAX_RANK || (L->ndim >= 0 && level >= L->ndim)) {
    parse_err(p, tok_span(p, &open),
              level >= TENSOR_MAX_RANK ? "tensor literal has too many dimensions"
                                       : "ragged tensor literal: expected a number here");
    return false;
  }
  int64_t count = 0;
  while (!at_kind(p, T_RBRACKET)) {
    bool ok = at_kind(p, T_LBRACKET) ? tlit_list(p, L, level + 1) : tlit_scalar(p, L, level + 1);
    if (!ok) return false;
    count++;
    if (!parse_accept(p, T_COMMA)) break;
  }
  if (!parse_expect(p, T_RBRACKET, "`,` or `]`")) return false;
  Span sp = parse_span_from(p, open.off);
  if (count == 0) {
    parse_err(p, sp, "empty tensor literal (its element type is unknown)");
    return false;
  }
  if (L->shape[level] == 0)
    L->shape[level] = count;
  else if (L->shape[level] != count) {
    parse_err(p, sp, "ragged tensor literal: this list has %lld elements, an earlier one has %lld",
              (long long)count, (long long)L->shape[level]);
    return false;
  }
  return true;
}

/* tensor_literal := tlit_list
 * Not inlined: its buffers must not sit in the frames of the recursion. */
PARSE_NOINLINE static Expr *ptensor_literal(Parser *p) {
  uint32_t start = peek(p)->off;
  TLit L = {.dt = DT_INVALID, .ndim = -1};
  if (!parse_enter(p)) return NULL;
  bool ok = tlit_list(p, &L, 0);
  parse_leave(p);
  Expr *e = NULL;
  if (ok) {
    Tensor *t = tensor_new(p->a, L.dt, L.ndim, L.shape);
    for (size_t i = 0; i < L.n; i++) {
      if (dtype_is_float(L.dt))
        tensor_set_f64(t, (int64_t)i, L.vals[i].f);
      else if (dtype_class(L.dt) == 'u')
        tensor_set_u64(t, (int64_t)i, (uint64_t)L.vals[i].i);
      else
        tensor_set_i64(t, (int64_t)i, L.vals[i].i);
    }
    e = expr_const(p->a, t, parse_span_from(p, start));
  }
  free(L.vals);
  return e;
}

/* ── functions ── */

/* param_attrs := '{' ( attr ( ',' attr )* ','? )? '}'
 * `{virtual_device=...}` after a parameter: kept (printed back as written). */
static bool pparam_attrs(Parser *p, const AttrValue **device) {
  parse_next(p);
  PtrVec keys = {0}, vals = {0};
  while (!at_kind(p, T_RBRACE)) {
    if (!parse_attr(p, &keys, &vals)) return vec_free(&keys), vec_free(&vals), false;
    if (!parse_accept(p, T_COMMA)) break;
  }
  for (size_t i = 0; i < keys.len; i++)
    if (strcmp(keys.items[i], "virtual_device") == 0) *device = vals.items[i];
  vec_free(&keys), vec_free(&vals);
  return parse_expect(p, T_RBRACE, "`}`");
}

/* param := LOCAL param_attrs? ( ':' type )? param_attrs? */
static Var *pparam(Parser *p) {
  if (!at_kind(p, T_LOCAL)) {
    parse_expected(p, "a parameter like `%x`");
    return NULL;
  }
  Token t = parse_next(p);
  const AttrValue *device = NULL;
  Type *annot = NULL;
  if (at_kind(p, T_LBRACE) && !pparam_attrs(p, &device)) return NULL;
  if (parse_accept(p, T_COLON) && !(annot = parse_ty(p))) return NULL;
  if (at_kind(p, T_LBRACE) && !pparam_attrs(p, &device)) return NULL; /* also after the type */
  if (device) return var_new_device(p->a, parse_name(p, &t), annot, tok_span(p, &t), device);
  return token_var(p, &t, annot);
}

static void bind_param(Parser *p, PtrVec *params, Var *v) {
  for (size_t i = 0; i < params->len; i++)
    if (strcmp(((Var *)params->items[i])->name, v->name) == 0)
      parse_sem_err(p, v->span, "duplicate parameter `%%%s`", v->name);
  vec_push(params, v);
  parse_bind(p, v->name, BIND_VAR, v);
}

/* A function's attributes (`Primitive=1`, `virtual_device=meta[...]`),
 * kept as written. */
static Attrs *fn_attrs(Parser *p, PtrVec *keys, PtrVec *vals) {
  return keys->len ? parse_make_attrs(p, keys, vals) : NULL;
}

/* params := '(' ( ( param | attr ) ( ',' ( param | attr ) )* ','? )? ')'   (params before attrs)
 * `(%x: T, %y, attr=v)`: params are bound in the current scope. */
static bool pparams(Parser *p, Function *f) {
  if (!parse_expect(p, T_LPAREN, "`(`")) return false;
  PtrVec params = {0}, keys = {0}, vals = {0};
  bool ok = true;
  while (ok && !at_kind(p, T_RPAREN)) {
    if (parse_at_attr(p))
      ok = parse_attr(p, &keys, &vals);
    else if (keys.len)
      parse_expected(p, "an attribute (parameters come first)"), ok = false;
    else {
      Var *v = pparam(p);
      if (v) bind_param(p, &params, v);
      ok = v != NULL;
    }
    if (ok && !parse_accept(p, T_COMMA)) break;
  }
  ok = ok && parse_expect(p, T_RPAREN, "`,` or `)`");
  f->nparams = (int)params.len;
  f->params = (Var **)vec_finish(&params, p->a);
  f->attrs = ok ? fn_attrs(p, &keys, &vals) : NULL;
  vec_free(&keys), vec_free(&vals);
  return ok;
}

/* fn_rest := tparams? params ( '->' type )? block
 * After `fn` / `def @name`: `[A](params) -> R { body }`. */
static Function *pfunction_rest(Parser *p, uint32_t start) {
  size_t tmark = p->tparams.len, smark = parse_scope_mark(p);
  Function *f = ARENA_NEW(p->a, Function);
  bool ok = !at_kind(p, T_LBRACKET) || parse_tparams(p, &f->ntparams, &f->tparams);
  ok = ok && pparams(p, f);
  if (ok && parse_accept(p, T_ARROW)) ok = (f->ret = parse_ty(p)) != NULL;
  if (ok) ok = (f->body = pblock(p)) != NULL;
  f->span = parse_span_from(p, start);
  parse_scope_pop(p, smark);
  p->tparams.len = tmark;
  return ok ? f : NULL;
}

/* fn_expr := 'fn' fn_rest */
PARSE_NOINLINE static Expr *pfn(Parser *p) {
  uint32_t start = parse_next(p).off;
  Function *f = pfunction_rest(p, start);
  return f ? expr_fn(p->a, f, f->span) : NULL;
}

/* block := '{' chain '}' */
static Expr *pblock(Parser *p) {
  if (!parse_expect(p, T_LBRACE, "`{`")) return NULL;
  Expr *e = pchain_in(p, true);
  if (!e || !parse_expect(p, T_RBRACE, "`}`")) return NULL;
  return e;
}

/* if_expr := 'if' '(' chain ')' block 'else' ( if_expr | block ) */
PARSE_NOINLINE static Expr *pif(Parser *p) {
  if (!parse_enter(p)) return NULL;
  uint32_t start = parse_next(p).off;
  Expr *c = NULL, *t = NULL, *e = NULL;
  if (parse_expect(p, T_LPAREN, "`(` after `if`") && (c = pchain(p)) &&
      parse_expect(p, T_RPAREN, "`)`") && (t = pblock(p))) {
    if (!parse_accept(p, T_KW_ELSE)) {
      parse_expected(p, "`else`");
      parse_hint(p, "an `if` needs an `else` branch");
    } else {
      e = at_kind(p, T_KW_IF) ? pif(p) : pblock(p);
    }
  }
  parse_leave(p);
  return e ? expr_if(p->a, c, t, e, parse_span_from(p, start)) : NULL;
}

/* ── patterns and match ── */

static Pattern *ppattern(Parser *p);

static Pattern *pat_new(Parser *p, PatternKind k, uint32_t start) {
  Pattern *q = ARENA_NEW(p->a, Pattern);
  q->kind = k, q->span = parse_span_from(p, start);
  return q;
}

/* subpatterns := '(' ( pattern ( ',' pattern )* ','? )? ')'
 * `(p, q, ...)` after the `(` has been seen. */
static bool psubpatterns(Parser *p, int *n, Pattern ***out) {
  parse_next(p);
  PtrVec subs = {0};
  while (!at_kind(p, T_RPAREN)) {
    Pattern *q = ppattern(p);
    if (!q) return vec_free(&subs), false;
    vec_push(&subs, q);
    if (!parse_accept(p, T_COMMA)) break;
  }
  *n = (int)subs.len;
  *out = (Pattern **)vec_finish(&subs, p->a);
  return parse_expect(p, T_RPAREN, "`,` or `)`");
}

/* ctor_pattern := IDENT subpatterns? */
static Pattern *pctor_pattern(Parser *p) {
  Token t = parse_next(p);
  const char *name = parse_name(p, &t);
  int ci = 0, n = 0;
  Pattern **subs = NULL;
  AdtDef *adt = module_ctor_adt(p->m, name, &ci);
  if (!adt) parse_sem_err(p, tok_span(p, &t), "unknown constructor `%s`", name);
  if (at_kind(p, T_LPAREN) && !psubpatterns(p, &n, &subs)) return NULL;
  Pattern *q = pat_new(p, adt ? PAT_CTOR : PAT_WILD, t.off);
  q->u.ctor.adt = adt, q->u.ctor.index = ci, q->u.ctor.n = n, q->u.ctor.sub = subs;
  return q;
}

/* pattern := '_' | ctor_pattern | subpatterns | LOCAL ( ':' type )?
 * A variable is bound as soon as it is read, so the clause body sees it;
 * the caller pops the scope after the clause. */
static Pattern *ppattern_inner(Parser *p) {
  const Token *t = peek(p);
  uint32_t start = t->off;
  if (parse_is_word(p, t, "_")) {
    parse_next(p);
    return pat_new(p, PAT_WILD, start);
  }
  if (t->kind == T_IDENT) return pctor_pattern(p);
  if (t->kind == T_LPAREN) {
    int n = 0;
    Pattern **subs = NULL;
    if (!psubpatterns(p, &n, &subs)) return NULL;
    Pattern *q = pat_new(p, PAT_TUPLE, start);
    q->u.tuple.n = n, q->u.tuple.sub = subs;
    return q;
  }
  if (t->kind != T_LOCAL) return parse_expected(p, "a pattern"), NULL;
  Token v = parse_next(p);
  Var *var = token_var(p, &v, NULL);
  if (parse_accept(p, T_COLON) && !(var->annot = parse_ty(p))) return NULL;
  parse_bind(p, var->name, BIND_VAR, var);
  Pattern *q = pat_new(p, PAT_VAR, start);
  q->u.var = var;
  return q;
}

/* pattern := '_' | ctor_pattern | subpatterns | LOCAL ( ':' type )?   (depth-checked) */
static Pattern *ppattern(Parser *p) {
  if (!parse_enter(p)) return NULL;
  Pattern *q = ppattern_inner(p);
  parse_leave(p);
  return q;
}

/* clause := pattern '=>' ( block | chain )
 * `pattern => { body }` or `pattern => expr`; pattern variables are
 * scoped to the clause. */
static bool pclause(Parser *p, MatchClause *c) {
  size_t mark = parse_scope_mark(p);
  c->pat = ppattern(p);
  bool ok = c->pat && parse_expect(p, T_FATARROW, "`=>`");
  if (ok) ok = (c->body = at_kind(p, T_LBRACE) ? pblock(p) : pchain(p)) != NULL;
  parse_scope_pop(p, mark);
  return ok;
}

/* match_expr := ( 'match' | 'match?' ) postfix '{' ( clause ( ',' clause )* ','? )? '}'
 * Unlike TVM, a match is an atom, so `let %x = match ...;` parses. */
PARSE_NOINLINE static Expr *pmatch(Parser *p) {
  Token kw = parse_next(p);
  Expr *scrut = ppostfix(p);
  if (!scrut || !parse_expect(p, T_LBRACE, "`{`")) return NULL;
  MatchClause *cl = NULL;
  int n = 0, cap = 0;
  while (!at_kind(p, T_RBRACE)) {
    if (n == cap) {
      MatchClause *ncl = ARENA_ARRAY(p->a, MatchClause, cap = cap ? cap * 2 : 4);
      if (n) memcpy(ncl, cl, sizeof(MatchClause) * (size_t)n);
      cl = ncl;
    }
    if (!pclause(p, &cl[n])) return NULL;
    n++;
    if (!parse_accept(p, T_COMMA)) break;
  }
  if (!parse_expect(p, T_RBRACE, "`,` or `}`")) return NULL;
  Expr *e = expr_new(p->a, EX_MATCH, parse_span_from(p, kw.off));
  e->u.match.scrut = scrut, e->u.match.n = n, e->u.match.clauses = cl;
  e->u.match.partial = kw.kind == T_KW_MATCH_PARTIAL;
  return e;
}

/* ── references, dataflow ── */

/* ref_op := 'ref' '(' chain ')' | 'ref_read' '(' chain ')' | 'ref_write' '(' chain ',' chain ')'
 * `ref(e)`, `ref_read(r)`, `ref_write(r, v)`. */
PARSE_NOINLINE static Expr *pref_op(Parser *p) {
  Token kw = parse_next(p);
  Expr *a = NULL, *b = NULL;
  if (!parse_expect(p, T_LPAREN, "`(`") || !(a = pchain(p))) return NULL;
  if (kw.kind == T_KW_REF_WRITE && (!parse_expect(p, T_COMMA, "`,`") || !(b = pchain(p))))
    return NULL;
  if (!parse_expect(p, T_RPAREN, "`)`")) return NULL;
  Span sp = parse_span_from(p, kw.off);
  ExprKind k = kw.kind == T_KW_REF        ? EX_REF_NEW
               : kw.kind == T_KW_REF_READ ? EX_REF_READ
                                          : EX_REF_WRITE;
  Expr *e = expr_new(p->a, k, sp);
  if (k == EX_REF_NEW)
    e->u.ref_new.init = a;
  else if (k == EX_REF_READ)
    e->u.ref_read.ref = a;
  else
    e->u.ref_write.ref = a, e->u.ref_write.value = b;
  return e;
}

/* dataflow := 'dataflow' block */
PARSE_NOINLINE static Expr *pdataflow(Parser *p) {
  uint32_t start = parse_next(p).off;
  Expr *body = pblock(p);
  if (!body) return NULL;
  Expr *e = expr_new(p->a, EX_DATAFLOW, parse_span_from(p, start));
  e->u.dataflow.body = body;
  return e;
}

/* atom := scalar | ident_atom | var_ref | global_ref | meta_ref | paren | tensor_literal
 *       | fn_expr | if_expr | match_expr | ref_op | dataflow
 * Dispatches on one token of lookahead; a binding keyword here gets a hint,
 * since bindings are only allowed at the head of a chain. */
static Expr *patom(Parser *p) {
  const Token *t = peek(p);
  switch (t->kind) {
    case T_INT:
    case T_FLOAT:
      return pscalar(p);
    case T_IDENT:
      if (t->bad) { /* the lexer explained it */
        Token b = parse_next(p);
        return placeholder(p, tok_span(p, &b));
      }
      return pident(p);
    case T_LOCAL:
    case T_GRAPH:
      return pvar_ref(p);
    case T_GLOBAL:
      return pglobal_ref(p);
    case T_META:
      return pmeta_ref(p);
    case T_LPAREN:
      return pparen(p);
    case T_LBRACKET:
      return ptensor_literal(p);
    case T_KW_FN:
      return pfn(p);
    case T_KW_IF:
      return pif(p);
    case T_KW_MATCH:
    case T_KW_MATCH_PARTIAL:
      return pmatch(p);
    case T_KW_REF:
    case T_KW_REF_READ:
    case T_KW_REF_WRITE:
      return pref_op(p);
    case T_KW_DATAFLOW:
      return pdataflow(p);
    case T_STRING:
      parse_err(p, tok_span(p, t), "a string is only allowed as an attribute value");
      return NULL;
    case T_KW_LET:
    case T_KW_FREE_VAR:
      parse_expected(p, "an expression");
      parse_hint(p, "put a binding inside parentheses: (let %%x = ...; %%x)");
      return NULL;
    default:
      parse_expected(p, "an expression");
      return NULL;
  }
}

/* ── calls and postfix ── */

/* call_tir_callee := STRING ','?   (first argument of call_tir only)
 * call_tir("env.linear", ...): the string callee becomes attribute `callee`. */
static void call_tir_callee(Parser *p, Expr *fn, PtrVec *keys, PtrVec *vals) {
  if (fn->kind != EX_OP || !fn->u.op.call_tir || !at_kind(p, T_STRING)) return;
  Token t = parse_next(p);
  AttrValue *v = attr_str(p->a, lex_string_value(p->a, p->lx.src, &t));
  v->span = tok_span(p, &t);
  vec_push(keys, (void *)"callee");
  vec_push(vals, v);
  parse_accept(p, T_COMMA);
}

/* call_args := '(' call_tir_callee? ( ( chain | attr ) ( ',' ( chain | attr ) )* ','? )? ')'
 * Arguments come before attributes; the one exception is call_tir's string
 * callee, which has already become the attribute `callee`. */
PARSE_NOINLINE static Expr *pcall(Parser *p, Expr *fn, uint32_t start) {
  parse_next(p);
  PtrVec args = {0}, keys = {0}, vals = {0};
  call_tir_callee(p, fn, &keys, &vals);
  bool ok = true;
  while (ok && !at_kind(p, T_RPAREN)) {
    if (parse_at_attr(p))
      ok = parse_attr(p, &keys, &vals);
    else if (keys.len && !(keys.len == 1 && strcmp(keys.items[0], "callee") == 0 && !args.len))
      parse_expected(p, "an attribute (arguments come first)"), ok = false;
    else {
      Expr *a = pchain(p);
      if (a) vec_push(&args, a);
      ok = a != NULL;
    }
    if (ok && !parse_accept(p, T_COMMA)) break;
  }
  ok = ok && parse_expect(p, T_RPAREN, "`,` or `)`");
  Expr *e = NULL;
  if (ok) {
    Attrs *attrs = keys.len ? parse_make_attrs(p, &keys, &vals) : NULL;
    e = expr_call(p->a, fn, (int)args.len, (Expr **)args.items, attrs, parse_span_from(p, start));
  }
  vec_free(&args), vec_free(&keys), vec_free(&vals);
  return e;
}

/* postfix := atom ( call_args | '.' INT | '^' )* */
static Expr *ppostfix(Parser *p) {
  uint32_t start = peek(p)->off; /* not e's: an op node is shared (make_op) */
  Expr *e = patom(p);
  while (e && !item_boundary(p)) {
    TokKind k = peek(p)->kind;
    if (k == T_LPAREN) {
      e = pcall(p, e, start);
    } else if (k == T_DOT && peek_at(p, 1)->kind == T_INT) {
      parse_next(p);
      Token n = parse_next(p);
      if (n.v.i < 0 || n.v.i > INT32_MAX)
        parse_sem_err(p, tok_span(p, &n), "tuple index out of range");
      e = expr_proj(p->a, e, (int)n.v.i, parse_span_from(p, start));
    } else if (k == T_CARET) {
      parse_next(p);
      Expr *r = expr_new(p->a, EX_REF_READ, parse_span_from(p, start));
      r->u.ref_read.ref = e;
      e = r;
    } else {
      break;
    }
  }
  return e;
}

/* ── infix operators ── */

/* X(token, op name, precedence) — relay-grammar.md §5. */
/* clang-format off */
#define RELAY_BINOPS(X)                                                              \
  X(T_STAR, "multiply", 12) X(T_SLASH, "divide", 12) X(T_PLUS, "add", 10)            \
  X(T_MINUS, "subtract", 10) X(T_LT, "less", 8) X(T_LE, "less_equal", 8)             \
  X(T_GT, "greater", 8) X(T_GE, "greater_equal", 8) X(T_EQEQ, "equal", 7)            \
  X(T_NE, "not_equal", 7)
/* clang-format on */

static int binop_prec(TokKind k, const char **name) {
  switch (k) {
#define X(t, n, pr) \
  case t:           \
    *name = n;      \
    return pr;
    RELAY_BINOPS(X)
#undef X
    default:
      return -1;
  }
}

/* binary := postfix ( BINOP binary )*   (BINOP from RELAY_BINOPS, prec >= min_prec)
 * Precedence climbing: left associative, recursion bounded by the number
 * of precedence levels per operand. */
static Expr *pbinary(Parser *p, int min_prec) {
  Expr *lhs = ppostfix(p);
  while (lhs && !item_boundary(p)) {
    const char *name = NULL;
    int prec = binop_prec(peek(p)->kind, &name);
    if (prec < min_prec) break;
    Token op = parse_next(p);
    Expr *rhs = pbinary(p, prec + 1);
    if (!rhs) return NULL;
    Expr *args[2] = {lhs, rhs};
    Expr *fn = make_op(p, name, tok_span(p, &op));
    lhs = expr_call(p->a, fn, 2, args, NULL, span_join(lhs->span, rhs->span));
  }
  return lhs;
}

/* expr := binary [':=' expr]  (the write binds loosest, to the right) */
static Expr *pexpr(Parser *p) {
  Expr *e = pbinary(p, 0);
  if (!e || item_boundary(p) || !parse_accept(p, T_ASSIGN)) return e;
  if (!parse_enter(p)) return NULL;
  Expr *v = pexpr(p);
  parse_leave(p);
  if (!v) return NULL;
  Expr *w = expr_new(p->a, EX_REF_WRITE, span_join(e->span, v->span));
  w->u.ref_write.ref = e, w->u.ref_write.value = v;
  return w;
}

/* ───────────────────────── binding chains ───────────────────────── */

typedef struct Frame {
  Var *var;    /* the anonymous var of `a; b` has the name "" */
  Expr *value; /* NULL for free_var */
  uint32_t start, end;
  bool early; /* already bound (a recursive function) */
} Frame;

/* The bindings of a chain so far, as let (and free_var) nodes linked
 * through their bodies as they are parsed: a million-binding chain needs
 * no side array.  A node's span is its binding's own (from `let` to the
 * `;`), not the rest of the chain: nothing walks the chain again to widen
 * them.  Until chain_build the last body is NULL. */
typedef struct Frames {
  Expr *first, *last;
  size_t n;
} Frames;

static Expr **chain_body(Expr *e) {
  return e->kind == EX_LET ? &e->u.let.body : &e->u.free_var.body;
}

static void push_frame(Parser *p, Frames *fs, const Frame *f) {
  Span sp = lex_span_at(&p->lx, f->start, f->end > f->start ? f->end - f->start : 0);
  Expr *e;
  if (f->var->is_free) {
    e = expr_new(p->a, EX_FREE_VAR, sp);
    e->u.free_var.var = f->var;
  } else {
    e = expr_let(p->a, f->var, f->value, NULL, sp);
  }
  if (fs->last) *chain_body(fs->last) = e;
  if (!fs->first) fs->first = e;
  fs->last = e, fs->n++;
}

/* let_binding := 'let' LOCAL ( ':' type )? '=' expr ';'
 * `let %x[: T] = v;` — the var is bound after its value, so `let %x =
 * f(%x)` sees the outer %x; except when the value is a function literal,
 * which may call itself (TVM's while_loop prints `let %loop = fn ... {
 * %loop(...) }`). */
PARSE_NOINLINE static bool plet_binding(Parser *p, Frame *f) {
  parse_next(p);
  if (!at_kind(p, T_LOCAL)) return parse_expected(p, "a variable like `%x` after `let`"), false;
  Token v = parse_next(p);
  f->var = token_var(p, &v, NULL);
  parse_bind_soon(p, f->var->name);
  if (parse_accept(p, T_COLON) && !(f->var->annot = parse_ty(p))) return false;
  if (!parse_expect(p, T_EQ, "`=`")) return false;
  if (at_kind(p, T_KW_FN)) f->early = true, parse_bind(p, f->var->name, BIND_VAR, f->var);
  return (f->value = pexpr(p)) && parse_expect_semi(p, "binding");
}

/* graph_binding := GRAPH '=' expr ';' */
PARSE_NOINLINE static bool pgraph_binding(Parser *p, Frame *f) {
  Token v = parse_next(p);
  parse_next(p);
  f->var = token_var(p, &v, NULL);
  f->var->is_graph = true;
  return (f->value = pexpr(p)) && parse_expect_semi(p, "binding");
}

/* free_var := 'free_var' LOCAL ( ':' type )? ';' */
PARSE_NOINLINE static bool pfree_var(Parser *p, Frame *f) {
  parse_next(p);
  if (!at_kind(p, T_LOCAL))
    return parse_expected(p, "a variable like `%x` after `free_var`"), false;
  Token v = parse_next(p);
  f->var = token_var(p, &v, NULL);
  f->var->is_free = true;
  if (parse_accept(p, T_COLON) && !(f->var->annot = parse_ty(p))) return false;
  return parse_expect_semi(p, "binding");
}

/* binding := let_binding | graph_binding | free_var | LOCAL '=' expr ';'   (the last is an error)
 * 1: a binding was parsed, 0: not at a binding, -1: error. */
static int pbinding(Parser *p, Frame *f) {
  const Token *t = peek(p);
  memset(f, 0, sizeof *f);
  f->start = t->off;
  TokKind next = peek_at(p, 1)->kind;
  if (t->kind == T_KW_LET) return plet_binding(p, f) ? 1 : -1;
  if (t->kind == T_GRAPH && next == T_EQ) return pgraph_binding(p, f) ? 1 : -1;
  if (t->kind == T_KW_FREE_VAR) return pfree_var(p, f) ? 1 : -1;
  if (t->kind == T_LOCAL && next == T_EQ) { /* reported, then read as the let it means */
    parse_sem_err(p, tok_span(p, t), "a variable is bound with `let`");
    parse_hint(p, "write `let %.*s = ...;`", (int)t->len, tok_text(p, t));
    return pgraph_binding(p, f) ? (f->var->is_graph = false, 1) : -1;
  }
  return 0;
}

static bool starts_item(TokKind k) {
  return k == T_KW_DEF || k == T_KW_TYPE || k == T_KW_EXTERN || k == T_KW_PRIM ||
         k == T_KW_SCHEDULE || k == T_KW_GLOBAL || k == T_COMMAND || k == T_VERSION;
}

static bool is_closer(TokKind k) { return k == T_RPAREN || k == T_RBRACKET || k == T_RBRACE; }

typedef enum Rec { REC_SEMI, REC_CLOSER, REC_GIVE_UP } Rec;

/* After a syntax error in a chain opened at bracket depth `base`: skip to
 * the chain's next `;` (consumed; the chain goes on) or to the bracket
 * closing it (the chain ends with a placeholder).  A brace block also takes
 * a `;` that ends a line inside unclosed brackets, which is where a broken
 * binding usually ends.  A chain that is only an expression in parentheses
 * (`(1, ;`) gives up instead, leaving the `;` to the enclosing block.  At
 * the next definition (or end of input) everything gives up, still
 * panicking, and the item level resynchronises. */
PARSE_NOINLINE static Rec recover_chain(Parser *p, int base, bool brace, bool has_bindings) {
  for (;;) {
    const Token *t = peek(p);
    if (t->kind == T_EOF || t->kind == T_METADATA) return REC_GIVE_UP;
    if (t->col1 && (starts_item(t->kind) || (p->script && p->bdepth <= 0))) return REC_GIVE_UP;
    if (t->kind == T_SEMI && (p->bdepth <= base || (brace && peek_at(p, 1)->nl_before))) {
      if (!brace && !has_bindings) return REC_GIVE_UP;
      parse_next(p);
      p->bdepth = base, p->panic = false;
      return REC_SEMI;
    }
    if (p->bdepth <= base && is_closer(t->kind)) {
      p->panic = false;
      return REC_CLOSER;
    }
    parse_next(p);
  }
}

/* After `e;`: does the chain end here (a trailing `;`)? */
static bool chain_closes(Parser *p) {
  TokKind k = peek(p)->kind;
  return is_closer(k) || k == T_EOF || k == T_COMMA;
}

typedef enum ChainEnd { CH_TAIL, CH_OPEN, CH_FAIL } ChainEnd;

static void bind_frame(Parser *p, Frames *fs, Frame *f) {
  if (f->var && var_named(f->var) && !f->early) parse_bind(p, f->var->name, BIND_VAR, f->var);
  push_frame(p, fs, f);
}

/* chain := ( binding | expr ';' )* expr
 * Parses bindings and the final expression of a chain with a loop.
 * toplevel (script items): a `;` followed by a new line at column 1 ends
 * the chain with no tail (CH_OPEN). */
static ChainEnd chain_collect(Parser *p, Frames *fs, bool toplevel, bool brace, Expr **tail) {
  int base = p->bdepth;
  bool has_free = false;
  for (;;) {
    Frame f;
    int r = pbinding(p, &f);
    if (r == 0) {
      Expr *e = pexpr(p);
      if (e && !parse_accept(p, T_SEMI)) return *tail = e, CH_TAIL;
      if (e && !toplevel && chain_closes(p)) return *tail = e, CH_TAIL;
      if (e) {
        f.var = var_new(p->a, NULL, NULL, e->span), f.value = e;
        r = 1;
      }
    }
    if (r < 0 && f.var && !f.var->is_free && !f.value) f.value = placeholder(p, f.var->span);
    f.end = p->last_end;
    if (f.var) bind_frame(p, fs, &f);
    has_free |= f.var && f.var->is_free; /* free_var needs the rest of the chain */
    if (r > 0 && toplevel && !has_free && (at_kind(p, T_EOF) || peek(p)->col1)) return CH_OPEN;
    if (r > 0) continue;
    Rec rec = recover_chain(p, base, brace || toplevel, fs->n > 0);
    if (rec == REC_CLOSER) return *tail = placeholder(p, here(p)), CH_TAIL;
    if (rec == REC_GIVE_UP) return CH_FAIL;
  }
}

/* Ends the chain with its tail. */
static Expr *chain_build(Parser *p, Frames *fs, Expr *tail) {
  if (!fs->first) return tail;
  *chain_body(fs->last) = tail;
  return fs->first;
}

/* chain := { binding } expr — bindings are scoped to the chain.  brace:
 * the chain is a `{ }` block (see recover_chain). */
static Expr *pchain_in(Parser *p, bool brace) {
  if (!parse_enter(p)) return NULL;
  size_t mark = parse_scope_mark(p);
  Frames fs = {0};
  Expr *tail = NULL;
  ChainEnd r = chain_collect(p, &fs, false, brace, &tail);
  Expr *e = r == CH_TAIL ? chain_build(p, &fs, tail) : NULL;
  parse_scope_pop(p, mark);
  parse_leave(p);
  return e;
}

/* chain := ( binding | expr ';' )* expr   (not a brace block) */
static Expr *pchain(Parser *p) { return pchain_in(p, false); }

/* ─────────────────────────── definitions ─────────────────────────── */

typedef struct Items {
  ScriptItem *items;
  int n, cap;
} Items;

static ScriptItem *new_item(Items *it, ScriptItemKind k, Span sp) {
  if (it->n == it->cap) {
    it->cap = it->cap ? it->cap * 2 : 16;
    it->items = realloc(it->items, sizeof(ScriptItem) * (size_t)it->cap);
    if (!it->items) rly_oom();
  }
  ScriptItem *s = &it->items[it->n++];
  memset(s, 0, sizeof *s);
  s->kind = k, s->span = sp;
  return s;
}

static void mark_failed(Parser *p, const char *name) {
  if (name) strmap_put(&p->failed, name, (void *)1);
}

void parse_mark_failed(Parser *p, const char *name) { mark_failed(p, name); }

/* Records key as defined at sp in this parse; a second definition is an
 * error there with a note at the first (TVM rejects duplicates in one
 * module; across REPL inputs a definition replaces the session's). */
static bool define_once(Parser *p, const char *key, Span sp, const char *what) {
  const Span *first = strmap_get(&p->defined, key);
  if (first) {
    parse_sem_err(p, sp, "%s is defined twice", what);
    diag_note(p->d, *first, "first defined here");
    return false;
  }
  Span *at = ARENA_NEW(p->a, Span);
  *at = sp;
  strmap_put(&p->defined, key, at);
  return true;
}

/* A constructor and a type may not share a name (TVM's parser keeps them
 * in one namespace): checked both ways, against the module and this parse. */
static bool ctor_names_ok(Parser *p, const AdtDef *adt) {
  bool ok = true;
  for (int i = 0; i < adt->nctors; i++) {
    const CtorDef *c = &adt->ctors[i];
    const AdtDef *t = module_adt(p->m, c->name);
    if (!t && strcmp(c->name, adt->name) != 0) continue;
    parse_sem_err(p, c->span, "constructor `%s` has the name of a type", c->name);
    diag_note(p->d, t ? t->span : adt->span, "type `%s` is defined here", c->name);
    ok = false;
  }
  int index;
  const AdtDef *owner = module_ctor_adt(p->m, adt->name, &index);
  if (owner) {
    parse_sem_err(p, adt->span, "type `%s` has the name of a constructor", adt->name);
    diag_note(p->d, owner->ctors[index].span, "constructor `%s` of type `%s` is defined here",
              adt->name, owner->name);
    ok = false;
  }
  return ok;
}

static bool add_def(Parser *p, Def d, ScriptItem *it) {
  const char *name = d.kind == DEF_ADT ? d.u.adt->name : it->def_name;
  char *key = arena_printf(p->a, "%s%s", d.kind == DEF_ADT ? "type " : "@", name ? name : "");
  char *what = arena_printf(p->a, d.kind == DEF_ADT ? "type `%s`" : "`@%s`", name ? name : "");
  if (name && !define_once(p, key, def_span(&d), what)) return false;
  if (d.kind == DEF_ADT && !ctor_names_ok(p, d.u.adt)) return false;
  int old = module_add(p->m, d);
  it->def_kind = d.kind;
  it->replaced = old >= 0;
  return true;
}

/* func_def := 'def' GLOBAL fn_rest */
static bool pfunc_def(Parser *p, ScriptItem *it, size_t errs) {
  uint32_t start = parse_next(p).off;
  if (!at_kind(p, T_GLOBAL)) return parse_expected(p, "a global name like `@main`"), false;
  Token g = parse_next(p);
  const char *name = parse_name(p, &g);
  it->def_name = name;
  Function *f = pfunction_rest(p, start);
  if (!f || p->d->nerrors != errs) return mark_failed(p, name), false;
  FuncDef *fd = ARENA_NEW(p->a, FuncDef);
  fd->name = name, fd->fn = f, fd->span = f->span;
  Def d = {.kind = DEF_FUNC, .u.func = fd};
  return add_def(p, d, it);
}

/* ctor_def := IDENT ( '(' ( type ( ',' type )* ','? )? ')' )?
 * e.g. Cons(A, List[A]) */
static bool pctor_def(Parser *p, AdtDef *adt, CtorDef *c) {
  if (!at_kind(p, T_IDENT)) return parse_expected(p, "a constructor name"), false;
  Token t = parse_next(p);
  c->name = parse_name(p, &t);
  c->span = tok_span(p, &t);
  AdtDef *other = module_ctor_adt(p->m, c->name, NULL);
  if (other && strcmp(other->name, adt->name) != 0)
    parse_sem_err(p, c->span, "constructor `%s` is already defined by type `%s`", c->name,
                  other->name);
  if (!at_kind(p, T_LPAREN)) return true;
  parse_next(p);
  PtrVec fields = {0};
  while (!at_kind(p, T_RPAREN)) {
    Type *ty = parse_ty(p);
    if (!ty) return vec_free(&fields), false;
    vec_push(&fields, ty);
    if (!parse_accept(p, T_COMMA)) break;
  }
  c->nfields = (int)fields.len;
  c->fields = (Type **)vec_finish(&fields, p->a);
  c->span = parse_span_from(p, t.off);
  return parse_expect(p, T_RPAREN, "`,` or `)`");
}

/* ctor_defs := '{' ( ctor_def ( ',' ctor_def )* ','? )? '}'
 * Constructor names must be unique within the type and across types,
 * since patterns and expressions name them without the type. */
static bool pctor_defs(Parser *p, AdtDef *adt) {
  if (!parse_expect(p, T_LBRACE, "`{`")) return false;
  int cap = 0;
  while (!at_kind(p, T_RBRACE)) {
    if (adt->nctors == cap) {
      CtorDef *n = ARENA_ARRAY(p->a, CtorDef, cap = cap ? cap * 2 : 4);
      if (adt->nctors) memcpy(n, adt->ctors, sizeof(CtorDef) * (size_t)adt->nctors);
      adt->ctors = n;
    }
    CtorDef *c = &adt->ctors[adt->nctors];
    if (!pctor_def(p, adt, c)) return false;
    for (int i = 0; i < adt->nctors; i++)
      if (strcmp(adt->ctors[i].name, c->name) == 0) {
        parse_sem_err(p, c->span, "constructor `%s` is defined twice", c->name);
        diag_note(p->d, adt->ctors[i].span, "first defined here");
      }
    adt->nctors++;
    if (!parse_accept(p, T_COMMA)) break;
  }
  return parse_expect(p, T_RBRACE, "`,` or `}`");
}

/* adt_def := 'type' IDENT tparams? ctor_defs | 'extern' 'type' IDENT tparams?
 * `type T[A] { ctors }` or `extern type T[A]`. */
static bool padt_def(Parser *p, ScriptItem *it, size_t errs) {
  uint32_t start = peek(p)->off;
  bool is_extern = parse_accept(p, T_KW_EXTERN);
  if (!parse_expect(p, T_KW_TYPE, "`type`")) return false;
  if (!at_kind(p, T_IDENT)) return parse_expected(p, "a type name"), false;
  Token t = parse_next(p);
  AdtDef *adt = ARENA_NEW(p->a, AdtDef);
  adt->name = parse_name(p, &t);
  adt->is_extern = is_extern;
  size_t tmark = p->tparams.len;
  bool ok = !at_kind(p, T_LBRACKET) || parse_tparams(p, &adt->ntparams, &adt->tparams);
  if (ok && !is_extern) ok = pctor_defs(p, adt);
  p->tparams.len = tmark;
  adt->span = parse_span_from(p, start);
  if (!ok || p->d->nerrors != errs) return mark_failed(p, adt->name), false;
  Def d = {.kind = DEF_ADT, .u.adt = adt};
  return add_def(p, d, it);
}

/* global_def := 'global' GLOBAL ':' type '=' expr ';' */
static bool pglobal_def(Parser *p, ScriptItem *it, size_t errs) {
  uint32_t start = parse_next(p).off;
  if (!at_kind(p, T_GLOBAL)) return parse_expected(p, "a global name like `@state`"), false;
  Token g = parse_next(p);
  StateGlobal *sg = ARENA_NEW(p->a, StateGlobal);
  sg->name = it->def_name = parse_name(p, &g);
  bool ok = parse_expect(p, T_COLON, "`:` and the global's type") && (sg->type = parse_ty(p)) &&
            parse_expect(p, T_EQ, "`=`") && (sg->init = pexpr(p)) &&
            parse_expect_semi(p, "declaration");
  sg->span = parse_span_from(p, start);
  if (!ok || p->d->nerrors != errs) return mark_failed(p, sg->name), false;
  Def d = {.kind = DEF_GLOBAL, .u.global = sg};
  return add_def(p, d, it);
}

/* prim_def := 'prim' prim_func   (prim_func: see parse_tir.c) */
static bool pprim_def(Parser *p, ScriptItem *it, size_t errs) {
  uint32_t start = parse_next(p).off;
  if (at_kind(p, T_GLOBAL)) it->def_name = parse_name(p, peek(p));
  PrimFunc *f = parse_prim_func(p, start);
  if (!f || p->d->nerrors != errs) return mark_failed(p, it->def_name), false;
  Def d = {.kind = DEF_PRIM, .u.prim = f};
  return add_def(p, d, it);
}

/* definition := func_def | global_def | prim_def | adt_def
 * A definition that had any error is not added to the module (its name is
 * marked failed, so references to it do not report again). */
static void pdefinition(Parser *p, Items *items) {
  uint32_t start = peek(p)->off;
  ScriptItem tmp = {.kind = ITEM_DEF};
  size_t errs = p->d->nerrors;
  bool ok;
  switch (peek(p)->kind) {
    case T_KW_DEF:
      ok = pfunc_def(p, &tmp, errs);
      break;
    case T_KW_GLOBAL:
      ok = pglobal_def(p, &tmp, errs);
      break;
    case T_KW_PRIM:
      ok = pprim_def(p, &tmp, errs);
      break;
    case T_KW_SCHEDULE:
      ok = parse_sched_def(p, &tmp, errs);
      break;
    default:
      ok = padt_def(p, &tmp, errs);
      break;
  }
  if (!ok) return;
  ScriptItem *it = new_item(items, ITEM_DEF, parse_span_from(p, start));
  *it = tmp;
  it->span = parse_span_from(p, start);
}

/* ─────────────────────────── top level ─────────────────────────── */

/* After an error in an item: skip to the next definition at column 1
 * (in a script, to any new line at column 1). */
static void recover_top(Parser *p, uint32_t item_off) {
  p->panic = false;
  for (;;) {
    const Token *t = peek(p);
    if (t->kind == T_EOF || t->kind == T_METADATA) break;
    if (t->off == item_off) { /* make progress past the item's first token */
      parse_next(p);
      continue;
    }
    if (t->col1 &&
        (starts_item(t->kind) || (p->script && !is_closer(t->kind) && t->kind != T_KW_ELSE)))
      break;
    parse_next(p);
  }
  p->bdepth = 0;
}

/* command := COMMAND   (a line starting with `:` in a script) */
static void pcommand(Parser *p, Items *items) {
  Token t = parse_next(p);
  ScriptItem *it = new_item(items, ITEM_COMMAND, tok_span(p, &t));
  it->command = arena_strndup(p->a, tok_text(p, &t) + 1, t.len - 1);
}

/* script_expr := chain | binding+   (bindings with no tail stay bound for the session)
 * A top-level expression or session `let`s (text-format.md part C). */
static void pscript_expr(Parser *p, Items *items) {
  uint32_t start = peek(p)->off;
  size_t mark = parse_scope_mark(p);
  Frames fs = {0};
  Expr *tail = NULL;
  ChainEnd r = chain_collect(p, &fs, true, true, &tail);
  if (r == CH_TAIL && !at_kind(p, T_EOF) && !peek(p)->col1) {
    parse_expected(p, "a new line after the expression");
    r = CH_FAIL;
  }
  if (r == CH_TAIL) {
    ScriptItem *it = new_item(items, ITEM_EXPR, parse_span_from(p, start));
    it->expr = chain_build(p, &fs, tail);
    parse_scope_pop(p, mark); /* the chain's bindings are local to it */
  } else if (r == CH_OPEN) {
    for (Expr *f = fs.first; f; f = f->u.let.body) { /* each binding is its own item */
      RLY_ASSERT(f->kind == EX_LET);                 /* a free_var chain never ends open */
      Var *v = f->u.let.var;
      ScriptItem *it = new_item(items, var_named(v) ? ITEM_LET : ITEM_EXPR, f->span);
      it->expr = f->u.let.value;
      it->var = var_named(v) ? v : NULL;
    }
  } else {
    parse_scope_pop(p, mark);
  }
}

/* version := VERSION   (one token: '#[version = "0.0.5"]', or "0.0.4") */
static void pversion(Parser *p, bool first) {
  Token t = parse_next(p);
  if (t.bad) return;
  if (!first)
    parse_sem_err(p, tok_span(p, &t), "`#[version]` must come first");
  else if (memmem(tok_text(p, &t), t.len, "\"0.0.4\"", 7))
    p->paren_types = true; /* the older grammar: the rest reads as 0.0.5 */
  else if (!memmem(tok_text(p, &t), t.len, "\"0.0.5\"", 7)) {
    diag_warning(p->d, tok_span(p, &t), "unknown version `%.*s`; reading it as 0.0.5", (int)t.len,
                 tok_text(p, &t));
  }
}

/* items := ( version | METADATA | command | definition | script_expr )*
 * The item loop: each item starts at bracket depth 0, and an item that
 * errored or did not move is skipped to the next item boundary. */
static void pitems(Parser *p, Items *items) {
  bool first = true;
  while (!at_kind(p, T_EOF) && !diag_too_many(p->d)) {
    const Token *t = peek(p);
    uint32_t item_off = t->off;
    p->bdepth = 0;
    if (t->kind == T_VERSION)
      pversion(p, first);
    else if (t->kind == T_METADATA)
      parse_next(p);
    else if (t->kind == T_COMMAND)
      pcommand(p, items);
    else if (starts_item(t->kind))
      pdefinition(p, items);
    else if (p->script)
      pscript_expr(p, items);
    else {
      parse_expected(p, "a definition (`def`, `type`, `extern type`, `global` or `prim`)");
      parse_hint(p, "top-level expressions are allowed in scripts, not in modules");
    }
    first = false;
    if (p->panic || peek(p)->off == item_off) recover_top(p, item_off);
  }
}

/* ───────────────────────── metadata, checks ───────────────────────── */

static void load_metadata(Parser *p) {
  uint32_t from = p->lx.pos;
  long off = lex_find_metadata(p->lx.src + from, p->lx.len - from);
  if (off < 0) return;
  off += from;
  size_t json = (size_t)off + strlen("#[metadata]");
  const char *err = NULL;
  size_t err_off = 0;
  p->has_meta = true; /* even when broken: references then stay quiet */
  if (meta_parse(p->a, p->lx.src + json, p->lx.len - json, &p->meta, &err, &err_off)) return;
  p->meta_broken = true;
  Span sp = json + err_off < p->lx.len ? lex_span_at(&p->lx, (uint32_t)(json + err_off), 1)
                                       : lex_span_at(&p->lx, (uint32_t)off, 11);
  lex_error(&p->lx, sp, false, "malformed metadata section: %s", err);
}

static const char *nearest_global(Parser *p, const char *name) {
  const char *best = NULL;
  int best_d = 1 << 30;
  for (int i = 0; i < p->m->ndefs; i++) {
    const Def *d = &p->m->defs[i];
    const char *n = d->kind == DEF_FUNC     ? d->u.func->name
                    : d->kind == DEF_GLOBAL ? d->u.global->name
                    : d->kind == DEF_PRIM   ? d->u.prim->name
                                            : NULL;
    if (!n) continue;
    int dist = parse_edit_distance(name, n);
    if (dist < best_d) best_d = dist, best = n;
  }
  return best && close_enough(name, best_d) ? best : NULL;
}

static void check_refs(Parser *p) {
  for (size_t i = 0; i < p->global_refs.len; i++) {
    NameRef *r = p->global_refs.items[i];
    if (module_lookup(p->m, r->name) || strmap_get(&p->failed, r->name)) continue;
    parse_sem_err(p, r->span, "unknown global `@%s`", r->name);
    const char *near = nearest_global(p, r->name);
    if (near) parse_hint(p, "did you mean `@%s`?", near);
  }
  for (size_t i = 0; i < p->type_refs.len; i++) {
    NameRef *r = p->type_refs.items[i];
    if (module_adt(p->m, r->name) || strmap_get(&p->failed, r->name)) continue;
    if (type_name_builtin(r->name)) continue;
    parse_sem_err(p, r->span, "unknown type `%s`", r->name);
  }
}
/* Half the C stack limit (clamped to [256 KiB, 8 MiB]): the depth limit is
 * what users meet; this is only a safety net for small stacks and for
 * builds with large frames (sanitizers). */
static size_t stack_budget(void) {
  struct rlimit rl;
  size_t lim = 8u << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) lim = (size_t)rl.rlim_cur;
  lim /= 2;
  return lim<(256u << 10) ? 256u << 10 : lim>(8u << 20) ? 8u << 20 : lim;
}

static void parser_init(Parser *p, Module *m, DiagCtx *d, uint32_t file, bool script,
                        const ParseOptions *opt) {
  memset(p, 0, sizeof *p);
  p->m = m, p->a = m->arena, p->d = d, p->script = script;
  p->stack_base = (uintptr_t)__builtin_frame_address(0);
  p->stack_budget = stack_budget();
  lex_init(&p->lx, d, file, script);
  if (opt) lex_restrict(&p->lx, opt->from, opt->to);
  for (int i = 0; opt && i < opt->nsession; i++)
    if (opt->session[i] && var_named(opt->session[i]))
      parse_bind(p, opt->session[i]->name, BIND_VAR, opt->session[i]);
  load_metadata(p);
}

static void parser_free(Parser *p) {
  big_free(p->scope.slots, p->scope.nslots * sizeof *p->scope.slots);
  free(p->op_nodes);
  big_free(p->scope.items, p->scope.cap * sizeof(Binding));
  u64map_free(&p->scope.shadowed);
  vec_free(&p->tparams);
  vec_free(&p->global_refs);
  vec_free(&p->type_refs);
  vec_free(&p->sizevars);
  strmap_free(&p->failed);
  strmap_free(&p->defined);
  sb_free(&p->scratch);
}

/* ─────────────────────────── entry points ─────────────────────────── */

/* module := items   (definitions only) */
bool parse_module(Module *m, DiagCtx *d, uint32_t file) {
  Parser p;
  parser_init(&p, m, d, file, false, NULL);
  Items items = {0};
  pitems(&p, &items);
  check_refs(&p);
  free(items.items);
  bool ok = !p.lx.any_error;
  parser_free(&p);
  return ok;
}

/* script := items   (definitions, expressions and commands) */
ParseResult parse_script(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt) {
  Parser p;
  parser_init(&p, m, d, file, true, opt);
  Items items = {0};
  pitems(&p, &items);
  check_refs(&p);
  ParseResult r = {0};
  r.ok = !p.lx.any_error;
  r.incomplete = p.lx.incomplete;
  r.nitems = items.n;
  r.items =
      items.n ? arena_memdup(m->arena, items.items, sizeof(ScriptItem) * (size_t)items.n) : NULL;
  free(items.items);
  parser_free(&p);
  return r;
}

/* expr_entry := chain EOF */
Expr *parse_expr(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt) {
  Parser p;
  parser_init(&p, m, d, file, false, opt);
  Expr *e = pchain(&p);
  if (e && !at_kind(&p, T_EOF) && !at_kind(&p, T_METADATA)) parse_expected(&p, "end of input");
  check_refs(&p);
  bool ok = !p.lx.any_error;
  parser_free(&p);
  return ok ? e : NULL;
}

/* sched_entry := step EOF   (`let` optional, no `;` needed) */
SchedStep *parse_sched_step(Module *m, DiagCtx *d, uint32_t file, const ParseOptions *opt) {
  Parser p;
  parser_init(&p, m, d, file, false, opt);
  p.lx.bare_floats = true;
  SchedStep *s = parse_sched_step_in(&p);
  parse_accept(&p, T_SEMI);
  if (s && !at_kind(&p, T_EOF)) parse_expected(&p, "end of the step");
  bool ok = !p.lx.any_error;
  parser_free(&p);
  return ok ? s : NULL;
}

/* type_entry := type EOF */
Type *parse_type(Module *m, DiagCtx *d, uint32_t file) {
  Parser p;
  parser_init(&p, m, d, file, false, NULL);
  Type *t = parse_ty(&p);
  if (t && !at_kind(&p, T_EOF)) parse_expected(&p, "end of input");
  check_refs(&p);
  bool ok = !p.lx.any_error;
  parser_free(&p);
  return ok ? t : NULL;
}
