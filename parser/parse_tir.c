/* parse_tir.c — TIR primitive functions (text-format.md B.5).
 *
 *   prim @f(%X: Buffer[(n, 4), float32], ..., attr=v) { stmt* }
 *   stmt := 'alloc' %Y ':' Buffer[shape, dtype] ';'
 *         | 'for' %i {',' %j} 'in' kind '(' e {',' e} ')' '{' stmt* '}'
 *             (one variable: kind(end) or kind(begin, end), not grid;
 *              several: one extent each, not range)
 *         | 'block' STRING '(' iter {',' iter} ')' '{' ['init' '{' stmt* '}'] stmt* '}'
 *         | %Y '[' e {',' e} ']' '=' e ';'
 *         | 'let' %t [':' dtype] '=' e ';'
 *         | 'if' '(' e ')' '{' stmt* '}' ['else' ('{' stmt* '}' | if)]
 *   iter := ('spatial' | 'reduce') %v '=' e
 *   e    := C-like infix (|| && == != < <= > >= + - * / %), unary - and !,
 *           %X[i, j], %v, size variable n, literals, intrinsic(e, ...), dtype(e)
 *
 * The statement words (alloc, for, block, ...) are ordinary identifiers
 * recognised by position.  Statements of a block are collected with a loop;
 * recursion is on nesting only.  Buffers, loop/block/let variables share the
 * parser's scope (tags BIND_BUF / BIND_TIRVAR); size variables are bare
 * names collected from the parameter shapes into PrimFunc.sizevars. */
#include <string.h>

#include "parser/parse_priv.h"

enum { TIR_MAX_LOOP_VARS = 16 };

/* ── helpers ── */

static bool at_word(Parser *p, const char *w) { return parse_is_word(p, peek(p), w); }

static TirVar *tvar_new(Parser *p, const Token *t, DType dt) {
  TirVar *v = ARENA_NEW(p->a, TirVar);
  v->name = parse_name(p, t);
  v->dtype = dt, v->id = ir_fresh_id(), v->span = tok_span(p, t);
  return v;
}

static PrimExpr *pe_new(Parser *p, PrimExprKind k, DType dt, uint32_t start) {
  PrimExpr *e = ARENA_NEW(p->a, PrimExpr);
  e->kind = k, e->dtype = dt, e->span = parse_span_from(p, start);
  return e;
}

static Stmt *st_new(Parser *p, StmtKind k, uint32_t start) {
  Stmt *s = ARENA_NEW(p->a, Stmt);
  s->kind = k, s->span = parse_span_from(p, start);
  return s;
}

static TirVar *find_sizevar(Parser *p, const char *name, size_t n) {
  for (size_t i = 0; i < p->sizevars.len; i++) {
    TirVar *v = p->sizevars.items[i];
    if (strlen(v->name) == n && memcmp(v->name, name, n) == 0) return v;
  }
  return NULL;
}

/* The intrinsic named by s[0..n) (ir/tir.h's table), or -1. */
static int intrinsic_lookup(const char *s, size_t n, int *arity) {
  char name[32];
  if (n >= sizeof name) return -1;
  memcpy(name, s, n);
  name[n] = 0;
  int fn = prim_intrinsic_lookup(name);
  if (fn >= 0) *arity = prim_intrinsic_arity((PrimIntrinsic)fn);
  return fn;
}

/* ── expressions ── */

static PrimExpr *pe_expr(Parser *p);

/* pe_list := OPEN ( prim_expr ( ',' prim_expr )* ','? )? CLOSE   (OPEN already peeked; CLOSE given)
 */
static bool pe_list(Parser *p, TokKind close, const char *what, PtrVec *out) {
  parse_next(p);
  while (!at_kind(p, close)) {
    PrimExpr *e = pe_expr(p);
    if (!e) return false;
    vec_push(out, e);
    if (!parse_accept(p, T_COMMA)) break;
  }
  return parse_expect(p, close, what);
}

/* load := LOCAL '[' ( prim_expr ( ',' prim_expr )* ','? )? ']'
 * e.g. `%X[i, j]` */
static PrimExpr *pe_load(Parser *p, Buffer *b, const Token *t) {
  PtrVec idx = {0};
  if (!pe_list(p, T_RBRACKET, "`,` or `]`", &idx)) return vec_free(&idx), NULL;
  if ((int)idx.len != b->ndim)
    parse_sem_err(p, parse_span_from(p, t->off), "buffer `%%%s` has %d dimensions, indexed with %d",
                  b->name, b->ndim, (int)idx.len);
  PrimExpr *e = pe_new(p, PE_LOAD, b->dtype, t->off);
  e->u.load.buf = b, e->u.load.n = (int)idx.len;
  e->u.load.idx = (PrimExpr **)vec_finish(&idx, p->a);
  return e;
}

/* local := load | LOCAL
 * A buffer must be indexed; an unbound name is reported once and then
 * bound as an int32 variable so later uses stay quiet. */
static PrimExpr *pe_local(Parser *p) {
  Token t = parse_next(p);
  Binding *b = parse_lookup(p, tok_text(p, &t) + 1, t.len - 1);
  if (b && binding_tag(b) == BIND_BUF) {
    if (at_kind(p, T_LBRACKET)) return pe_load(p, binding_val(b), &t);
    parse_err(p, tok_span(p, &t), "buffer `%.*s` must be indexed, like `%.*s[%%i]`", (int)t.len,
              tok_text(p, &t), (int)t.len, tok_text(p, &t));
    return NULL;
  }
  TirVar *v = b && binding_tag(b) == BIND_TIRVAR ? binding_val(b) : NULL;
  if (!v) {
    parse_sem_err(p, tok_span(p, &t), "unbound variable `%.*s`", (int)t.len, tok_text(p, &t));
    v = tvar_new(p, &t, DT_INT32);
    parse_bind(p, v->name, BIND_TIRVAR, v);
  }
  PrimExpr *e = pe_new(p, PE_VAR, v->dtype, t.off);
  e->u.var = v;
  return e;
}

/* intrinsic_call := IDENT '(' ( prim_expr ( ',' prim_expr )* ','? )? ')'   (IDENT: an intrinsic or
 * a dtype) `max(a, b)`, `float32(e)` */
static PrimExpr *pe_call(Parser *p, const Token *t) {
  PtrVec args = {0};
  if (!pe_list(p, T_RPAREN, "`,` or `)`", &args)) return vec_free(&args), NULL;
  int n = (int)args.len, arity = 0;
  PrimExpr **av = (PrimExpr **)vec_finish(&args, p->a);
  DType to = dtype_from_name(tok_text(p, t), t->len);
  int fn = to == DT_INVALID ? intrinsic_lookup(tok_text(p, t), t->len, &arity) : -1;
  if (to == DT_INVALID && fn < 0) {
    parse_sem_err(p, tok_span(p, t), "unknown intrinsic `%.*s`", (int)t->len, tok_text(p, t));
    parse_hint(p,
               "intrinsics: max min abs exp log sqrt tanh sigmoid pow select floor ceil, and casts "
               "like float32(e)");
    arity = n;
  }
  if (to != DT_INVALID) arity = 1;
  if (n != arity) {
    parse_sem_err(p, parse_span_from(p, t->off), "`%.*s` takes %d argument%s, got %d", (int)t->len,
                  tok_text(p, t), arity, arity == 1 ? "" : "s", n);
    return n ? av[0] : pe_new(p, PE_INT, DT_INT32, t->off);
  }
  if (to != DT_INVALID) {
    PrimExpr *e = pe_new(p, PE_CAST, to, t->off);
    e->u.cast.to = to, e->u.cast.value = av[0];
    return e;
  }
  DType dt = fn < 0 ? DT_INVALID : fn == PI_SELECT ? av[1]->dtype : av[0]->dtype;
  PrimExpr *e = pe_new(p, PE_CALL, dt, t->off);
  e->u.call.fn = (PrimIntrinsic)(fn < 0 ? 0 : fn), e->u.call.n = n, e->u.call.args = av;
  return e;
}

/* reinterpret := 'reinterpret' '[' DTYPE ']' '(' prim_expr ')'   (after the word):
 * the operand's bits read as DTYPE (the verifier checks the sizes). */
static PrimExpr *pe_reinterpret(Parser *p, const Token *t) {
  DType to = DT_INVALID;
  if (!parse_expect(p, T_LBRACKET, "`[`") || !parse_dtype(p, &to) ||
      !parse_expect(p, T_RBRACKET, "`]`") || !parse_expect(p, T_LPAREN, "`(`"))
    return NULL;
  PrimExpr *v = pe_expr(p);
  if (!v || !parse_expect(p, T_RPAREN, "`)`")) return NULL;
  PrimExpr *e = pe_new(p, PE_CAST, to, t->off);
  e->u.cast.to = to, e->u.cast.value = v, e->u.cast.bits = true;
  return e;
}

/* ident_expr := 'True' | 'False' | reinterpret | intrinsic_call | IDENT   (a size variable) */
static PrimExpr *pe_ident(Parser *p) {
  Token t = parse_next(p);
  if (parse_is_word(p, &t, "True") || parse_is_word(p, &t, "False")) {
    PrimExpr *e = pe_new(p, PE_INT, DT_BOOL, t.off);
    e->u.i = tok_text(p, &t)[0] == 'T';
    return e;
  }
  if (parse_is_word(p, &t, "reinterpret") && at_kind(p, T_LBRACKET)) return pe_reinterpret(p, &t);
  if (at_kind(p, T_LPAREN)) return pe_call(p, &t);
  TirVar *v = find_sizevar(p, tok_text(p, &t), t.len);
  if (!v) {
    parse_sem_err(p, tok_span(p, &t), "unknown size variable `%.*s`", (int)t.len, tok_text(p, &t));
    v = tvar_new(p, &t, DT_INT64);
  }
  PrimExpr *e = pe_new(p, PE_VAR, v->dtype, t.off);
  e->u.var = v;
  return e;
}

/* prim_atom := INT | FLOAT | local | ident_expr | '(' prim_expr ')'
 * A literal keeps the dtype its suffix gave it; the checker, not the
 * parser, decides whether operand dtypes agree. */
static PrimExpr *pe_atom(Parser *p) {
  const Token *t = peek(p);
  if (t->kind == T_INT || t->kind == T_FLOAT) {
    Token n = parse_next(p);
    PrimExpr *e = pe_new(p, n.kind == T_INT ? PE_INT : PE_FLOAT, n.dtype, n.off);
    if (n.kind == T_INT)
      e->u.i = n.v.i;
    else
      e->u.f = n.v.f;
    return e;
  }
  if (t->kind == T_LOCAL) return pe_local(p);
  if (t->kind == T_IDENT) return pe_ident(p);
  if (t->kind == T_LPAREN) {
    parse_next(p);
    PrimExpr *e = pe_expr(p);
    return e && parse_expect(p, T_RPAREN, "`)`") ? e : NULL;
  }
  parse_expected(p, "an expression");
  return NULL;
}

/* prim_unary := ( '-' | '!' ) prim_unary | prim_atom */
static PrimExpr *pe_unary(Parser *p) {
  if (!at_kind(p, T_MINUS) && !at_kind(p, T_BANG)) return pe_atom(p);
  if (!parse_enter(p)) return NULL;
  Token op = parse_next(p);
  PrimExpr *x = pe_unary(p);
  parse_leave(p);
  if (!x) return NULL;
  bool neg = op.kind == T_MINUS;
  PrimExpr *e = pe_new(p, neg ? PE_NEG : PE_NOT, neg ? x->dtype : DT_BOOL, op.off);
  e->u.operand = x;
  return e;
}

static int binop_of(TokKind k, PrimBinOp *op) {
  static const struct {
    TokKind tok;
    PrimBinOp op;
  } table[] = {{T_PLUS, PB_ADD},    {T_MINUS, PB_SUB}, {T_STAR, PB_MUL}, {T_SLASH, PB_DIV},
               {T_PERCENT, PB_MOD}, {T_LT, PB_LT},     {T_LE, PB_LE},    {T_GT, PB_GT},
               {T_GE, PB_GE},       {T_EQEQ, PB_EQ},   {T_NE, PB_NE},    {T_ANDAND, PB_AND},
               {T_OROR, PB_OR}};
  static const int prec[] = {
#define X(e, s, pr) pr,
      PRIM_BINOPS(X)
#undef X
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].tok == k) return *op = table[i].op, prec[table[i].op];
  return -1;
}

static DType binop_dtype(PrimBinOp op, const PrimExpr *a) {
  return op >= PB_LT ? DT_BOOL : a->dtype;
}

/* prim_binary := prim_unary ( PRIM_BINOP prim_binary )*   (precedence climbing, left associative)
 */
static PrimExpr *pe_binary(Parser *p, int min_prec) {
  PrimExpr *lhs = pe_unary(p);
  while (lhs) {
    PrimBinOp op = PB_ADD;
    int prec = binop_of(peek(p)->kind, &op);
    if (prec < min_prec) break;
    parse_next(p);
    PrimExpr *rhs = pe_binary(p, prec + 1);
    if (!rhs) return NULL;
    PrimExpr *e = pe_new(p, PE_BIN, binop_dtype(op, lhs), parse_local_off(p, lhs->span));
    e->u.bin.op = op, e->u.bin.a = lhs, e->u.bin.b = rhs;
    lhs = e;
  }
  return lhs;
}

/* prim_expr := prim_binary   (depth-checked) */
static PrimExpr *pe_expr(Parser *p) {
  if (!parse_enter(p)) return NULL;
  PrimExpr *e = pe_binary(p, 0);
  parse_leave(p);
  return e;
}

/* ── buffers ── */

/* buf_dim := INT | IDENT
 * A dimension of a buffer shape; params may introduce size variables. */
static bool buf_dim(Parser *p, Dim *d, bool is_param) {
  Token t = parse_next(p);
  if (t.kind == T_INT) {
    if (t.v.i < 0) parse_sem_err(p, tok_span(p, &t), "a dimension cannot be negative");
    d->kind = DIM_CONST, d->value = t.v.i < 0 ? 0 : t.v.i;
    return true;
  }
  if (t.kind != T_IDENT) {
    parse_err(p, tok_span(p, &t),
              "expected a buffer dimension (a number or a size variable), found `%.*s`", (int)t.len,
              tok_text(p, &t));
    return false;
  }
  TirVar *v = find_sizevar(p, tok_text(p, &t), t.len);
  if (!v && is_param) {
    v = tvar_new(p, &t, DT_INT64);
    v->is_size = true;
    vec_push(&p->sizevars, v);
  } else if (!v) {
    parse_sem_err(p, tok_span(p, &t), "unknown size variable `%.*s`", (int)t.len, tok_text(p, &t));
  }
  d->kind = DIM_VAR, d->name = v ? v->name : parse_name(p, &t);
  return true;
}

/* buf_type := 'Buffer' '[' '(' ( buf_dim ( ',' buf_dim )* ','? )? ')' ',' dtype ']'
 * e.g. `Buffer[(d0, d1), dtype]` */
static bool buf_type(Parser *p, Buffer *b, bool is_param) {
  Dim dims[TENSOR_MAX_RANK];
  int n = 0;
  if (!at_word(p, "Buffer")) return parse_expected(p, "`Buffer[(...), dtype]`"), false;
  parse_next(p);
  if (!parse_expect(p, T_LBRACKET, "`[`") || !parse_expect(p, T_LPAREN, "`(` and the shape"))
    return false;
  while (!at_kind(p, T_RPAREN)) {
    if (n == TENSOR_MAX_RANK)
      return parse_err(p, tok_span(p, peek(p)), "too many dimensions"), false;
    if (!buf_dim(p, &dims[n++], is_param)) return false;
    if (!parse_accept(p, T_COMMA)) break;
  }
  if (!parse_expect(p, T_RPAREN, "`,` or `)`") || !parse_expect(p, T_COMMA, "`,` and the dtype") ||
      !parse_dtype(p, &b->dtype) || !parse_expect(p, T_RBRACKET, "`]`"))
    return false;
  b->ndim = n;
  b->dims = n ? arena_memdup(p->a, dims, sizeof(Dim) * (size_t)n) : NULL;
  return true;
}

/* buf_decl := LOCAL ':' buf_type
 * `%X: Buffer[...]` (a parameter or after `alloc`); binds the buffer. */
static Buffer *buf_decl(Parser *p, bool is_param) {
  if (!at_kind(p, T_LOCAL)) return parse_expected(p, "a buffer name like `%X`"), NULL;
  Token t = parse_next(p);
  Buffer *b = ARENA_NEW(p->a, Buffer);
  b->name = parse_name(p, &t), b->id = ir_fresh_id();
  if (!parse_expect(p, T_COLON, "`:` and the buffer type") || !buf_type(p, b, is_param))
    return NULL;
  b->span = parse_span_from(p, t.off);
  parse_bind(p, b->name, BIND_BUF, b);
  return b;
}

/* ── statements ── */

static Stmt *pstmt(Parser *p);

/* stmts := stmt* '}'
 * Statements up to the closing `}` (consumed), as an ST_SEQ; declarations
 * are scoped to the block. */
static Stmt *pstmts_until_close(Parser *p, uint32_t start) {
  size_t mark = parse_scope_mark(p);
  PtrVec items = {0};
  while (!at_kind(p, T_RBRACE) && !at_kind(p, T_EOF)) {
    Stmt *s = pstmt(p);
    if (!s) break;
    vec_push(&items, s);
  }
  parse_scope_pop(p, mark);
  if (p->panic || !parse_expect(p, T_RBRACE, "`}`")) return vec_free(&items), NULL;
  Stmt *seq = st_new(p, ST_SEQ, start);
  seq->u.seq.n = (int)items.len;
  seq->u.seq.items = (Stmt **)vec_finish(&items, p->a);
  return seq;
}

/* body := '{' stmts */
static Stmt *pbody(Parser *p) {
  if (!at_kind(p, T_LBRACE)) return parse_expected(p, "`{`"), NULL;
  Token open = parse_next(p);
  if (!parse_enter(p)) return NULL;
  Stmt *s = pstmts_until_close(p, open.off);
  parse_leave(p);
  return s;
}

/* alloc_stmt := 'alloc' buf_decl ';' */
static Stmt *palloc(Parser *p, uint32_t start) {
  parse_next(p);
  Buffer *b = buf_decl(p, false);
  if (!b || !parse_expect_semi(p, "statement")) return NULL;
  Stmt *s = st_new(p, ST_ALLOC, start);
  s->u.alloc = b;
  return s;
}

/* loop_kind := 'range' | 'grid' | 'parallel' | 'vectorized' | 'unrolled'   (LOOP_KINDS) */
static bool loop_kind(Parser *p, LoopKind *k) {
  static const char *const names[] = {
#define X(e, n) n,
      LOOP_KINDS(X)
#undef X
  };
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
    if (at_word(p, names[i])) return parse_next(p), *k = (LoopKind)i, true;
  parse_expected(p, "a loop kind (`range`, `grid`, `parallel`, `vectorized` or `unrolled`)");
  return false;
}

static void loop_count_err(Parser *p, const Stmt *s, int nb, uint32_t start) {
  int nv = s->u.for_.nvars;
  LoopKind k = s->u.for_.loop;
  if (nv == 1 && k != LOOP_GRID) {
    parse_sem_err(p, parse_span_from(p, start), "`%s` takes (end) or (begin, end), got %d bound%s",
                  loop_kind_name(k), nb, nb == 1 ? "" : "s");
    return;
  }
  parse_sem_err(p, parse_span_from(p, start), "%d loop variable%s but %d extent%s", nv,
                nv == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
  if (k == LOOP_GRID && nv == 1 && nb == 2)
    parse_hint(p,
               "`grid` takes one extent per variable; for a loop from a begin, write "
               "`range(begin, end)`");
  else if (k != LOOP_GRID && nv > 1)
    parse_hint(p, "`%s(begin, end)` takes one variable; with several, give one extent each",
               loop_kind_name(k));
}

/* Checks the bounds against the loop variables and stores them (ir/tir.h):
 * one variable takes (end) or (begin, end), except under `grid`; several
 * take one extent each, except under `range`. */
static bool loop_shape(Parser *p, Stmt *s, PtrVec *bounds, uint32_t start) {
  int nb = (int)bounds->len, nv = s->u.for_.nvars;
  LoopKind k = s->u.for_.loop;
  PrimExpr **b = (PrimExpr **)vec_finish(bounds, p->a);
  if (k == LOOP_RANGE && nv != 1) {
    parse_sem_err(p, parse_span_from(p, start),
                  "`range` takes one variable and (begin, end) or (end)");
    parse_hint(p, "for several variables, write `grid(…)` with one extent each");
    return false;
  }
  bool begin_end = nv == 1 && nb == 2 && k != LOOP_GRID;
  if (nb != nv && !begin_end) return loop_count_err(p, s, nb, start), false;
  if (begin_end) {
    s->u.for_.lo = ARENA_ARRAY(p->a, PrimExpr *, 1);
    s->u.for_.hi = ARENA_ARRAY(p->a, PrimExpr *, 1);
    s->u.for_.lo[0] = b[0], s->u.for_.hi[0] = b[1];
    if (k != LOOP_RANGE && !tir_for_lo(s, 0)) s->u.for_.lo = NULL; /* canonical: kind(end) */
    return true;
  }
  s->u.for_.hi = b;
  if (k == LOOP_RANGE) { /* range(end): range keeps an explicit begin */
    s->u.for_.lo = ARENA_ARRAY(p->a, PrimExpr *, 1);
    s->u.for_.lo[0] = pe_new(p, PE_INT, b[0]->dtype, parse_local_off(p, b[0]->span));
  }
  return true;
}

/* A loop variable has the wider of its bounds' integer types (int32 when
 * neither is an integer, after an error); a begin of 0 does not count, as
 * the printer leaves out its dtype. */
static DType loop_var_dtype(const Stmt *s, int i) {
  const PrimExpr *lo = tir_for_lo(s, i), *hi = s->u.for_.hi[i];
  DType t = dtype_is_int(hi->dtype) ? hi->dtype : DT_INT32;
  if (lo && dtype_is_int(lo->dtype) && dtype_bytes(lo->dtype) > dtype_bytes(t)) t = lo->dtype;
  return t;
}

/* for_stmt := 'for' LOCAL ( ',' LOCAL )* 'in' loop_kind '(' ( prim_expr ( ',' prim_expr )* ','? )?
 * ')' body e.g. for %i, %j in grid(a, b) { ... } */
static Stmt *pfor(Parser *p, uint32_t start) {
  parse_next(p);
  Token vars[TIR_MAX_LOOP_VARS];
  int nv = 0;
  do {
    if (!at_kind(p, T_LOCAL)) return parse_expected(p, "a loop variable like `%i`"), NULL;
    if (nv == TIR_MAX_LOOP_VARS)
      return parse_err(p, tok_span(p, peek(p)), "too many loop variables"), NULL;
    vars[nv++] = parse_next(p);
  } while (parse_accept(p, T_COMMA));
  if (!at_word(p, "in")) return parse_expected(p, "`in`"), NULL;
  parse_next(p);
  Stmt *s = st_new(p, ST_FOR, start);
  PtrVec bounds = {0};
  if (!loop_kind(p, &s->u.for_.loop)) return NULL;
  if (!at_kind(p, T_LPAREN)) return parse_expected(p, "`(`"), NULL;
  if (!pe_list(p, T_RPAREN, "`,` or `)`", &bounds)) return vec_free(&bounds), NULL;
  s->u.for_.nvars = nv;
  bool shape_ok = loop_shape(p, s, &bounds, start);
  s->u.for_.vars = ARENA_ARRAY(p->a, TirVar *, nv);
  size_t mark = parse_scope_mark(p);
  for (int i = 0; i < nv; i++) {
    s->u.for_.vars[i] = tvar_new(p, &vars[i], shape_ok ? loop_var_dtype(s, i) : DT_INT32);
    parse_bind(p, s->u.for_.vars[i]->name, BIND_TIRVAR, s->u.for_.vars[i]);
  }
  s->u.for_.body = pbody(p);
  parse_scope_pop(p, mark);
  s->span = parse_span_from(p, start);
  return s->u.for_.body ? s : NULL;
}

/* iter := ( 'spatial' | 'reduce' ) LOCAL '=' prim_expr
 * e.g. spatial %vi = %i */
static bool piter(Parser *p, IterVar *it, Token *name) {
  bool spatial = at_word(p, "spatial");
  if (!spatial && !at_word(p, "reduce")) return parse_expected(p, "`spatial` or `reduce`"), false;
  parse_next(p);
  it->reduce = !spatial;
  if (!at_kind(p, T_LOCAL)) return parse_expected(p, "a block variable like `%vi`"), false;
  *name = parse_next(p);
  if (!parse_expect(p, T_EQ, "`=`")) return false;
  return (it->binding = pe_expr(p)) != NULL;
}

/* iters := '(' ( iter ( ',' iter )* ','? )? ')'
 * The block variables are bound only after all bindings are read, so a
 * binding refers to the enclosing loops, never to a sibling block variable. */
static bool piters(Parser *p, Stmt *s) {
  PtrVec iters = {0};
  PtrVec names = {0};
  if (!parse_expect(p, T_LPAREN, "`(`")) return false;
  while (!at_kind(p, T_RPAREN)) {
    IterVar *it = ARENA_NEW(p->a, IterVar);
    Token *name = ARENA_NEW(p->a, Token);
    if (!piter(p, it, name)) return vec_free(&iters), vec_free(&names), false;
    vec_push(&iters, it), vec_push(&names, name);
    if (!parse_accept(p, T_COMMA)) break;
  }
  bool ok = parse_expect(p, T_RPAREN, "`,` or `)`");
  int n = (int)iters.len;
  s->u.block.niters = n;
  s->u.block.iters = ARENA_ARRAY(p->a, IterVar, n ? n : 1);
  for (int i = 0; i < n; i++) { /* bound after all bindings: they see the outer scope */
    IterVar *it = iters.items[i];
    DType dt = dtype_is_int(it->binding->dtype) ? it->binding->dtype : DT_INT32;
    it->var = tvar_new(p, names.items[i], dt);
    s->u.block.iters[i] = *it;
    parse_bind(p, it->var->name, BIND_TIRVAR, it->var);
  }
  vec_free(&iters), vec_free(&names);
  return ok;
}

/* block_stmt := 'block' STRING iters '{' ( 'init' body )? stmts
 * e.g. block "Y" (spatial %vi = %i, ...) { init { ... } stmts } */
static Stmt *pblock_stmt(Parser *p, uint32_t start) {
  parse_next(p);
  if (!at_kind(p, T_STRING)) return parse_expected(p, "the block's name as a string"), NULL;
  Token name = parse_next(p);
  Stmt *s = st_new(p, ST_BLOCK, start);
  s->u.block.name = lex_string_value(p->a, p->lx.src, &name);
  size_t mark = parse_scope_mark(p);
  bool ok = piters(p, s) && at_kind(p, T_LBRACE);
  if (!ok && !p->panic) parse_expected(p, "`{`");
  if (ok) {
    Token open = parse_next(p);
    if (at_word(p, "init") && peek_at(p, 1)->kind == T_LBRACE) {
      parse_next(p);
      ok = (s->u.block.init = pbody(p)) != NULL;
    }
    ok = ok && parse_enter(p);
    if (ok) {
      ok = (s->u.block.body = pstmts_until_close(p, open.off)) != NULL;
      parse_leave(p);
    }
  }
  parse_scope_pop(p, mark);
  s->span = parse_span_from(p, start);
  return ok ? s : NULL;
}

/* store_stmt := LOCAL '[' ( prim_expr ( ',' prim_expr )* ','? )? ']' '=' prim_expr ';'
 * e.g. %Y[i, j] = e; */
static Stmt *pstore(Parser *p, uint32_t start) {
  Token t = parse_next(p);
  Binding *b = parse_lookup(p, tok_text(p, &t) + 1, t.len - 1);
  if (!b || binding_tag(b) != BIND_BUF) {
    parse_sem_err(p, tok_span(p, &t), "`%.*s` is not a buffer", (int)t.len, tok_text(p, &t));
    const char *near = parse_nearest_bound(p, parse_name(p, &t), BIND_BUF);
    if (near) parse_hint(p, "did you mean `%%%s`?", near);
  }
  PtrVec idx = {0};
  if (!at_kind(p, T_LBRACKET)) return parse_expected(p, "`[`"), NULL;
  if (!pe_list(p, T_RBRACKET, "`,` or `]`", &idx)) return vec_free(&idx), NULL;
  Buffer *buf = b && binding_tag(b) == BIND_BUF ? binding_val(b) : NULL;
  if (buf && (int)idx.len != buf->ndim)
    parse_sem_err(p, parse_span_from(p, start), "buffer `%%%s` has %d dimensions, indexed with %d",
                  buf->name, buf->ndim, (int)idx.len);
  Stmt *s = st_new(p, ST_STORE, start);
  s->u.store.buf = buf, s->u.store.n = (int)idx.len;
  s->u.store.idx = (PrimExpr **)vec_finish(&idx, p->a);
  if (!parse_expect(p, T_EQ, "`=`") || !(s->u.store.value = pe_expr(p)) ||
      !parse_expect_semi(p, "statement"))
    return NULL;
  s->span = parse_span_from(p, start);
  return buf ? s : st_new(p, ST_SEQ, start);
}

/* let_stmt := 'let' LOCAL ( ':' dtype )? '=' prim_expr ';'
 * let %t[: dtype] = e;  (in scope for the rest of the block) */
static Stmt *plet(Parser *p, uint32_t start) {
  parse_next(p);
  if (!at_kind(p, T_LOCAL)) return parse_expected(p, "a variable like `%t`"), NULL;
  Token t = parse_next(p);
  DType dt = DT_INVALID;
  if (parse_accept(p, T_COLON) && !parse_dtype(p, &dt)) return NULL;
  Stmt *s = st_new(p, ST_LET, start);
  if (!parse_expect(p, T_EQ, "`=`") || !(s->u.let.value = pe_expr(p)) ||
      !parse_expect_semi(p, "binding"))
    return NULL;
  s->u.let.var = tvar_new(p, &t, dt != DT_INVALID ? dt : s->u.let.value->dtype);
  parse_bind(p, s->u.let.var->name, BIND_TIRVAR, s->u.let.var);
  s->span = parse_span_from(p, start);
  return s;
}

/* if_stmt := 'if' '(' prim_expr ')' body ( 'else' ( if_stmt | body ) )?
 * Unlike a Relay `if`, the else branch is optional (a statement has no value). */
static Stmt *pif_stmt(Parser *p, uint32_t start) {
  parse_next(p);
  Stmt *s = st_new(p, ST_IF, start);
  if (!parse_expect(p, T_LPAREN, "`(`") || !(s->u.if_.cond = pe_expr(p)) ||
      !parse_expect(p, T_RPAREN, "`)`") || !(s->u.if_.then_ = pbody(p)))
    return NULL;
  if (parse_accept(p, T_KW_ELSE)) {
    if (at_kind(p, T_KW_IF)) {
      if (!parse_enter(p)) return NULL;
      s->u.if_.else_ = pif_stmt(p, peek(p)->off);
      parse_leave(p);
    } else {
      s->u.if_.else_ = pbody(p);
    }
    if (!s->u.if_.else_) return NULL;
  }
  s->span = parse_span_from(p, start);
  return s;
}

/* stmt := let_stmt | if_stmt | store_stmt | alloc_stmt | for_stmt | block_stmt
 * The statement words are not keywords: each is recognised here by its
 * position and the token after it, so elsewhere they stay ordinary names. */
static Stmt *pstmt(Parser *p) {
  const Token *t = peek(p);
  uint32_t start = t->off;
  TokKind next = peek_at(p, 1)->kind;
  if (t->kind == T_KW_LET) return plet(p, start);
  if (t->kind == T_KW_IF) return pif_stmt(p, start);
  if (t->kind == T_LOCAL && next == T_LBRACKET) return pstore(p, start);
  if (parse_is_word(p, t, "alloc") && next == T_LOCAL) return palloc(p, start);
  if (parse_is_word(p, t, "for") && next == T_LOCAL) return pfor(p, start);
  if (parse_is_word(p, t, "block") && next == T_STRING) return pblock_stmt(p, start);
  parse_expected(p, "a statement (`alloc`, `for`, `block`, `let`, `if` or a store `%X[...] = e;`)");
  return NULL;
}

/* ── the function ── */

/* prim_params := '(' ( ( buf_decl | attr ) ( ',' ( buf_decl | attr ) )* ','? )? ')'   (buffers
 * before attrs) Parameter shapes introduce the function's size variables (buf_dim with is_param),
 * so they must be read before the body uses them. */
static bool prim_params(Parser *p, PrimFunc *f) {
  PtrVec params = {0}, keys = {0}, vals = {0};
  bool ok = parse_expect(p, T_LPAREN, "`(`");
  while (ok && !at_kind(p, T_RPAREN)) {
    if (parse_at_attr(p))
      ok = parse_attr(p, &keys, &vals);
    else if (keys.len)
      parse_expected(p, "an attribute (parameters come first)"), ok = false;
    else {
      Buffer *b = buf_decl(p, true);
      if (b) vec_push(&params, b);
      ok = b != NULL;
    }
    if (ok && !parse_accept(p, T_COMMA)) break;
  }
  ok = ok && parse_expect(p, T_RPAREN, "`,` or `)`");
  f->nparams = (int)params.len;
  f->params = (Buffer **)vec_finish(&params, p->a);
  f->attrs = ok && keys.len ? parse_make_attrs(p, &keys, &vals) : NULL;
  vec_free(&keys), vec_free(&vals);
  return ok;
}

/* prim_func := GLOBAL prim_params body   (after 'prim') */
PrimFunc *parse_prim_func(Parser *p, uint32_t start) {
  if (!at_kind(p, T_GLOBAL)) return parse_expected(p, "a global name like `@linear0`"), NULL;
  Token g = parse_next(p);
  PrimFunc *f = ARENA_NEW(p->a, PrimFunc);
  f->name = parse_name(p, &g);
  size_t mark = parse_scope_mark(p);
  p->sizevars.len = 0;
  bool ok = prim_params(p, f) && (f->body = pbody(p)) != NULL;
  f->nsizevars = (int)p->sizevars.len;
  f->sizevars = f->nsizevars
                    ? arena_memdup(p->a, p->sizevars.items, sizeof(TirVar *) * p->sizevars.len)
                    : NULL;
  p->sizevars.len = 0;
  parse_scope_pop(p, mark);
  f->span = parse_span_from(p, start);
  return ok ? f : NULL;
}
