/* parse_type.c — types, type parameters and attribute values.
 *
 *   type := '(' [type {',' type}] [','] ')'      -- `(A)` is a 1-tuple, like TVM
 *         | 'fn' ['[' tparams ']'] '(' types ')' '->' type
 *         | 'Tensor' '[' shape ',' dtype ']' | dtype
 *         | 'Ref' '[' type ']' | 'ref' '(' type ')'  -- TVM prints ref(T)
 *         | 'RandState' | '_' | A (a type parameter in scope)
 *         | Name ['[' types ']']                   -- an ADT, checked at the end
 *   dim  := INT | '?' | name (a size variable) | meta[tir.SizeVar][i]
 *
 * Invariant: an unknown dtype or a bad dimension is a semantic error (the
 * token is consumed and parsing goes on); malformed structure is a syntax
 * error (NULL). */
#include <string.h>

#include "parser/parse_priv.h"

/* ── type parameters ── */

static bool is_tparam(Parser *p, const Token *t) {
  for (size_t i = p->tparams.len; i-- > 0;) {
    const char *n = p->tparams.items[i];
    if (strlen(n) == t->len && memcmp(n, tok_text(p, t), t->len) == 0) return true;
  }
  return false;
}

/* tparams := '[' ( IDENT ( ',' IDENT )* ','? )? ']'
 * The names are also pushed on p->tparams; the caller truncates it when
 * the function or type that binds them ends. */
bool parse_tparams(Parser *p, int *n, const char ***names) {
  parse_next(p);
  PtrVec list = {0};
  while (!at_kind(p, T_RBRACKET)) {
    if (!at_kind(p, T_IDENT))
      return vec_free(&list), parse_expected(p, "a type parameter name"), false;
    Token t = parse_next(p);
    const char *name = parse_name(p, &t);
    vec_push(&list, (void *)name);
    vec_push(&p->tparams, (void *)name);
    if (!parse_accept(p, T_COMMA)) break;
  }
  *n = (int)list.len;
  *names = (const char **)vec_finish(&list, p->a);
  return parse_expect(p, T_RBRACKET, "`,` or `]`");
}

/* ── dtypes and dimensions ── */

static const char *nearest_dtype(const char *name) {
  const char *best = NULL;
  int best_d = 3;
  for (int i = 0; i < DT_COUNT; i++) {
    int dist = parse_edit_distance(name, dtype_name((DType)i));
    if (dist < best_d) best_d = dist, best = dtype_name((DType)i);
  }
  return best;
}

/* dtype := IDENT   (a dtype name; an unknown one is reported and read as float32) */
bool parse_dtype(Parser *p, DType *out) {
  if (!at_kind(p, T_IDENT)) return parse_expected(p, "a dtype like `float32`"), false;
  Token t = parse_next(p);
  *out = dtype_from_name(tok_text(p, &t), t.len);
  if (*out != DT_INVALID) return true;
  const char *name = parse_name(p, &t);
  parse_sem_err(p, tok_span(p, &t), "unknown dtype `%s`", name);
  const char *near = nearest_dtype(name);
  if (near) parse_hint(p, "did you mean `%s`?", near);
  *out = DT_FLOAT32;
  return true;
}

/* dim_meta := META   (must name a tir.SizeVar of the metadata section) */
static Dim meta_dim(Parser *p, const Token *t) {
  Dim d = {DIM_ANY, 0, NULL};
  if (t->bad) return d; /* the lexer explained it */
  const char *key = tok_text(p, t) + 5;
  const MetaEntry *e = p->has_meta ? meta_get(&p->meta, key, strcspn(key, "]"), t->v.i) : NULL;
  if (e && e->name)
    d.kind = DIM_VAR, d.name = e->name;
  else if (!p->meta_broken)
    parse_sem_err(p, tok_span(p, t), "`%.*s` is not a size variable of the metadata section",
                  (int)t->len, tok_text(p, t));
  return d;
}

/* dim := INT | '?' | IDENT | META
 * A negative size is a semantic error read as 0, so the type still has
 * its rank and checking goes on. */
static bool pdim(Parser *p, Dim *d) {
  const Token *t = peek(p);
  d->kind = DIM_CONST, d->value = 0, d->name = NULL;
  if (t->kind == T_INT) {
    Token n = parse_next(p);
    if (n.v.i < 0) parse_sem_err(p, tok_span(p, &n), "a dimension cannot be negative");
    d->value = n.v.i < 0 ? 0 : n.v.i;
  } else if (t->kind == T_QUESTION) {
    parse_next(p);
    d->kind = DIM_ANY;
  } else if (t->kind == T_IDENT) {
    Token n = parse_next(p);
    d->kind = DIM_VAR, d->name = parse_name(p, &n);
  } else if (t->kind == T_META) {
    Token n = parse_next(p);
    *d = meta_dim(p, &n);
  } else {
    parse_expected(p, "a dimension (a number, `?` or a size variable)");
    return false;
  }
  return true;
}

/* shape := '(' ( dim ( ',' dim )* ','? )? ')'
 * `(d0, d1, ...)` into dims (at most TENSOR_MAX_RANK); returns the rank or -1. */
static int pshape(Parser *p, Dim *dims) {
  if (!parse_expect(p, T_LPAREN, "`(` and the shape")) return -1;
  int n = 0;
  while (!at_kind(p, T_RPAREN)) {
    if (n == TENSOR_MAX_RANK) {
      parse_err(p, tok_span(p, peek(p)), "too many dimensions (the limit is %d)", TENSOR_MAX_RANK);
      return -1;
    }
    if (!pdim(p, &dims[n++])) return -1;
    if (!parse_accept(p, T_COMMA)) break;
  }
  return parse_expect(p, T_RPAREN, "`,` or `)`") ? n : -1;
}

/* ── types ── */

/* Whether the constant dims of a shape, times the dtype's size, count
 * bytes in an int64 (no tensor of that type could exist otherwise, and
 * every size computed from it would overflow). */
static bool shape_fits(int n, const Dim *dims, DType dt) {
  int64_t bytes = dtype_bytes(dt) > 0 ? dtype_bytes(dt) : 1;
  for (int i = 0; i < n; i++)
    if (dims[i].kind == DIM_CONST && dims[i].value == 0) return true;
  for (int i = 0; i < n; i++) {
    if (dims[i].kind != DIM_CONST) continue;
    if (bytes > INT64_MAX / dims[i].value) return false;
    bytes *= dims[i].value;
  }
  return true;
}

/* tensor_type := 'Tensor' '[' shape ',' dtype ']'
 * After `Tensor`: `[(dims), dtype]`.  A shape whose size overflows is a
 * semantic error (the type is kept, so checking goes on). */
static Type *ty_tensor(Parser *p, uint32_t start) {
  Dim dims[TENSOR_MAX_RANK];
  DType dt = DT_FLOAT32;
  if (!parse_expect(p, T_LBRACKET, "`[` after `Tensor`")) return NULL;
  uint32_t shape_start = peek(p)->off;
  int n = pshape(p, dims);
  Span shape = parse_span_from(p, shape_start);
  if (n < 0 || !parse_expect(p, T_COMMA, "`,` and the dtype") || !parse_dtype(p, &dt) ||
      !parse_expect(p, T_RBRACKET, "`]`"))
    return NULL;
  if (!shape_fits(n, dims, dt))
    parse_sem_err(p, shape, "this shape of %s elements would take more than 2^63 bytes",
                  dtype_name(dt));
  return type_tensor(p->a, dt, n, dims, parse_span_from(p, start));
}

/* type_args := '[' ( type ( ',' type )* ','? )? ']'
 * `[A, B]` arguments of an ADT (or of Ref). */
static bool ty_args(Parser *p, int *n, Type ***out) {
  parse_next(p);
  PtrVec args = {0};
  while (!at_kind(p, T_RBRACKET)) {
    Type *t = parse_ty(p);
    if (!t) return vec_free(&args), false;
    vec_push(&args, t);
    if (!parse_accept(p, T_COMMA)) break;
  }
  *n = (int)args.len;
  *out = (Type **)vec_finish(&args, p->a);
  return parse_expect(p, T_RBRACKET, "`,` or `]`");
}

/* adt_type := IDENT type_args?   (the name is checked once the whole input is read) */
static Type *ty_adt(Parser *p, const Token *t) {
  int n = 0;
  Type **args = NULL;
  if (at_kind(p, T_LBRACKET) && !ty_args(p, &n, &args)) return NULL;
  const char *name = parse_name(p, t);
  Span sp = parse_span_from(p, t->off);
  NameRef *r = ARENA_NEW(p->a, NameRef);
  r->name = name, r->span = tok_span(p, t);
  vec_push(&p->type_refs, r);
  return type_adt(p->a, name, n, args, sp);
}

/* named_type := tensor_type | 'RandState' | '_' | 'Ref' type_args | dtype | IDENT | adt_type
 * The words are tried in that order, so a dtype name or a type parameter
 * in scope shadows an ADT of the same name. */
static Type *ty_named(Parser *p) {
  Token t = parse_next(p);
  Span sp = tok_span(p, &t);
  if (parse_is_word(p, &t, "Tensor")) return ty_tensor(p, t.off);
  if (parse_is_word(p, &t, "RandState")) return type_randstate(p->a, sp);
  if (parse_is_word(p, &t, "_")) return type_incomplete(p->a, 0, sp);
  if (parse_is_word(p, &t, "Ref")) {
    int n = 0;
    Type **args = NULL;
    if (!at_kind(p, T_LBRACKET)) return parse_expected(p, "`[` after `Ref`"), NULL;
    if (!ty_args(p, &n, &args)) return NULL;
    if (n != 1) parse_sem_err(p, parse_span_from(p, t.off), "`Ref` takes one type argument");
    return type_ref(p->a, n ? args[0] : type_unit(p->a), parse_span_from(p, t.off));
  }
  DType dt = dtype_from_name(tok_text(p, &t), t.len);
  if (dt != DT_INVALID) return type_tensor(p->a, dt, 0, NULL, sp);
  if (is_tparam(p, &t)) {
    if (at_kind(p, T_LBRACKET))
      parse_err(p, tok_span(p, peek(p)), "a type parameter takes no arguments");
    return p->panic ? NULL : type_var(p->a, parse_name(p, &t), sp);
  }
  return ty_adt(p, &t);
}

/* tuple_type := '(' ( type ( ',' type )* ','? )? ')'
 * `()`, `(A)`, `(A,)`, `(A, B)`.  paren: `(A)` is A itself (a program
 * headed `#[version = "0.0.4"]`, whose grammar had parenthesized types). */
static Type *ty_tuple(Parser *p, bool paren) {
  uint32_t start = parse_next(p).off;
  PtrVec fields = {0};
  bool comma = false;
  while (!at_kind(p, T_RPAREN)) {
    Type *t = parse_ty(p);
    if (!t) return vec_free(&fields), NULL;
    vec_push(&fields, t);
    if (!(comma = parse_accept(p, T_COMMA))) break;
  }
  if (!parse_expect(p, T_RPAREN, "`,` or `)`")) return vec_free(&fields), NULL;
  if (paren && fields.len == 1 && !comma) {
    Type *inner = fields.items[0];
    vec_free(&fields);
    return inner;
  }
  Type *t = type_tuple(p->a, (int)fields.len, (Type **)fields.items, parse_span_from(p, start));
  vec_free(&fields);
  return t;
}

/* fn_type := 'fn' tparams? tuple_type '->' type
 * e.g. `fn [A](A, B) -> C` */
static Type *ty_fn(Parser *p) {
  uint32_t start = parse_next(p).off;
  size_t tmark = p->tparams.len;
  int ntp = 0;
  const char **tps = NULL;
  Type *t = NULL;
  if (!at_kind(p, T_LBRACKET) || parse_tparams(p, &ntp, &tps)) {
    Type *params = at_kind(p, T_LPAREN) ? ty_tuple(p, false) : (parse_expected(p, "`(`"), NULL);
    Type *ret = params && parse_expect(p, T_ARROW, "`->` and the result type") ? parse_ty(p) : NULL;
    if (ret)
      t = type_func(p->a, params->u.tuple.n, params->u.tuple.fields, ret, ntp, tps,
                    parse_span_from(p, start));
  }
  p->tparams.len = tmark;
  return t;
}

/* tvm_ref_type := 'ref' '(' type ')'
 * TVM's `ref(T)`. */
static Type *ty_tvm_ref(Parser *p) {
  uint32_t start = parse_next(p).off;
  Type *inner = NULL;
  if (!parse_expect(p, T_LPAREN, "`(` after `ref`") || !(inner = parse_ty(p)) ||
      !parse_expect(p, T_RPAREN, "`)`"))
    return NULL;
  return type_ref(p->a, inner, parse_span_from(p, start));
}

/* type := tuple_type | fn_type | tvm_ref_type | named_type
 * The one entry for types; it counts nesting depth, so every recursive
 * type rule goes through here. */
Type *parse_ty(Parser *p) {
  if (!parse_enter(p)) return NULL;
  Type *t = NULL;
  switch (peek(p)->kind) {
    case T_LPAREN:
      t = ty_tuple(p, p->paren_types);
      break;
    case T_KW_FN:
      t = ty_fn(p);
      break;
    case T_KW_REF:
      t = ty_tvm_ref(p);
      break;
    case T_IDENT:
      t = ty_named(p);
      break;
    default:
      parse_expected(p, "a type");
      break;
  }
  parse_leave(p);
  return t;
}

/* ── attributes ── */

/* attr_start := ( IDENT | keyword ) '='   (two tokens of lookahead, nothing consumed) */
bool parse_at_attr(Parser *p) {
  const Token *t = peek(p);
  bool key = t->kind == T_IDENT || (t->kind >= T_KW_LET && t->kind <= T_KW_DATAFLOW);
  return key && peek_at(p, 1)->kind == T_EQ;
}

static AttrValue *av_new(Parser *p, AttrKind k, uint32_t start) {
  AttrValue *v = ARENA_NEW(p->a, AttrValue);
  v->kind = k, v->span = parse_span_from(p, start);
  return v;
}

/* attr_list := '[' ( attr_value ( ',' attr_value )* ','? )? ']' */
static AttrValue *av_list(Parser *p) {
  uint32_t start = parse_next(p).off;
  PtrVec items = {0};
  while (!at_kind(p, T_RBRACKET)) {
    AttrValue *v = parse_attr_value(p);
    if (!v) return vec_free(&items), NULL;
    vec_push(&items, v);
    if (!parse_accept(p, T_COMMA)) break;
  }
  if (!parse_expect(p, T_RBRACKET, "`,` or `]`")) return vec_free(&items), NULL;
  AttrValue *v = av_new(p, AV_LIST, start);
  v->u.list.n = (int)items.len;
  v->u.list.items = (AttrValue **)vec_finish(&items, p->a);
  return v;
}

/* attr_number := INT | FLOAT */
static AttrValue *av_number(Parser *p) {
  Token t = parse_next(p);
  AttrValue *v =
      t.kind == T_INT ? attr_int(p->a, t.v.i, t.dtype) : attr_float(p->a, t.v.f, t.dtype);
  v->span = tok_span(p, &t);
  return v;
}

/* A meta reference as an attribute value (`virtual_device=meta[VirtualDevice][0]`)
 * is kept as written, so it prints back unchanged; with a metadata section
 * it must name one of its entries.  Without one it is accepted (it only
 * says where TVM would run the code; rly has one device). */
static void av_meta_check(Parser *p, const Token *t) {
  const char *key = tok_text(p, t) + 5;
  if (!p->has_meta || p->meta_broken || meta_get(&p->meta, key, strcspn(key, "]"), t->v.i)) return;
  parse_sem_err(p, tok_span(p, t), "no entry `%.*s` in the metadata section", (int)t->len,
                tok_text(p, t));
}

/* attr_word := 'True' | 'False' | 'None' | 'nullptr' | IDENT | META */
static AttrValue *av_word(Parser *p) {
  Token t = parse_next(p);
  uint32_t start = t.off;
  if (parse_is_word(p, &t, "True") || parse_is_word(p, &t, "False")) {
    AttrValue *v = av_new(p, AV_BOOL, start);
    v->u.b = tok_text(p, &t)[0] == 'T';
    return v;
  }
  if (parse_is_word(p, &t, "None") || parse_is_word(p, &t, "nullptr"))
    return av_new(p, AV_NONE, start);
  AttrValue *v = av_new(p, AV_SYM, start);
  v->u.s = t.kind == T_META ? arena_strndup(p->a, tok_text(p, &t), t.len) : parse_name(p, &t);
  if (t.kind == T_META && !t.bad) av_meta_check(p, &t);
  return v;
}

/* attr_global := GLOBAL   (checked with the other global references at the end) */
static AttrValue *av_global(Parser *p) {
  Token t = parse_next(p);
  const char *name = parse_name(p, &t);
  NameRef *r = ARENA_NEW(p->a, NameRef);
  r->name = name, r->span = tok_span(p, &t);
  vec_push(&p->global_refs, r);
  AttrValue *v = av_new(p, AV_EXPR, t.off);
  v->u.expr = expr_global(p->a, name, tok_span(p, &t));
  return v;
}

/* attr_value := attr_number | attr_word | attr_global | attr_list | STRING | '(' attr_value ')'
 * Parentheses only group (they never make a tuple), as in TVM. */
static AttrValue *attr_value_inner(Parser *p) {
  const Token *t = peek(p);
  switch (t->kind) {
    case T_INT:
    case T_FLOAT:
      return av_number(p);
    case T_IDENT:
    case T_META:
      return av_word(p);
    case T_GLOBAL:
      return av_global(p);
    case T_LBRACKET:
      return av_list(p);
    case T_STRING: {
      Token s = parse_next(p);
      AttrValue *v = attr_str(p->a, lex_string_value(p->a, p->lx.src, &s));
      v->span = tok_span(p, &s);
      return v;
    }
    case T_LPAREN: {
      parse_next(p);
      AttrValue *v = parse_attr_value(p);
      return v && parse_expect(p, T_RPAREN, "`)`") ? v : NULL;
    }
    default:
      parse_expected(p, "an attribute value");
      return NULL;
  }
}

/* attr_value (depth-checked; see attr_value_inner) */
AttrValue *parse_attr_value(Parser *p) {
  if (!parse_enter(p)) return NULL;
  AttrValue *v = attr_value_inner(p);
  parse_leave(p);
  return v;
}

/* attr := ( IDENT | keyword ) '=' attr_value   (a dotted key such as relay.reshape_only is one
 * IDENT) */
bool parse_attr(Parser *p, PtrVec *keys, PtrVec *vals) {
  Token k = parse_next(p);
  const char *key = parse_name(p, &k);
  parse_next(p); /* `=`, checked by parse_at_attr */
  AttrValue *v = parse_attr_value(p);
  if (!v) return false;
  for (size_t i = 0; i < keys->len; i++)
    if (strcmp(keys->items[i], key) == 0)
      parse_sem_err(p, tok_span(p, &k), "duplicate attribute `%s`", key);
  vec_push(keys, (void *)key);
  vec_push(vals, v);
  return true;
}

Attrs *parse_make_attrs(Parser *p, PtrVec *keys, PtrVec *vals) {
  Attrs *a = attrs_new(p->a, (int)keys->len);
  for (size_t i = 0; i < keys->len; i++) a->keys[i] = keys->items[i], a->vals[i] = vals->items[i];
  return a;
}
