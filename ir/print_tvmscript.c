/* print_tvmscript.c — TVMScript out (print_tvmscript.h).  The mapping from
 * rly's TIR (ir/tir.h), statement by statement:
 *
 *   for %i, %j in grid(a, b)      → for i, j in T.grid(a, b):
 *   range(lo, hi), parallel(n)    → T.serial(lo, hi), T.parallel(n) (several
 *                                   variables: one nested loop each)
 *   block "Y" (spatial %vi = e)   → with T.block("Y"): vi = T.axis.spatial(DOM, e)
 *   init { ... }                  → with T.init():
 *   alloc %Y: Buffer[(n), f32]    → Y = T.alloc_buffer((n,), "float32")
 *   %A: Buffer[(n, 4), float32]   → var_A: T.handle, then in the body n = T.int64()
 *                                   and A = T.match_buffer(var_A, (n, 4), "float32")
 *   let %t = e;                   → t: T.float32 = e
 *   0f, 3i64, max(a, b), float32(e), select(c, a, b), int a / b
 *                                 → T.float32(0), T.int64(3), T.max(a, b),
 *                                   T.Cast("float32", e), T.if_then_else(c, a, b),
 *                                   T.truncdiv(a, b); a % b → T.truncmod(a, b)
 *
 * DOM, the domain of a block variable, is its loop's extent when the
 * binding is a loop variable, else one more than the binding's largest
 * value over the enclosing loops when their bounds are constants. */
#include "ir/print_tvmscript.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { TVMS_MAX_LOOPS = 64 };

/* The loops around a statement, innermost last. */
typedef struct Loops {
  int n;
  const TirVar *var[TVMS_MAX_LOOPS];
  const PrimExpr *lo[TVMS_MAX_LOOPS], *hi[TVMS_MAX_LOOPS];
} Loops;

/* Python's precedence levels. */
enum { P_OR = 1, P_AND, P_NOT, P_CMP, P_ADD = 6, P_MUL, P_NEG, P_ATOM };

static void expr(StrBuf *b, const PrimExpr *e, int prec);

static void list(StrBuf *b, int n, PrimExpr *const *v) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    expr(b, v[i], 0);
  }
}

static void call(StrBuf *b, const char *fn, int n, PrimExpr *const *v) {
  sb_printf(b, "%s(", fn);
  list(b, n, v);
  sb_putc(b, ')');
}

static void put_float(StrBuf *b, double v, DType dt) {
  char buf[64];
  if (isinf(v) || isnan(v)) {
    sb_printf(b, "T.%s(\"%s\")", dtype_name(dt), isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return;
  }
  float_to_text(buf, sizeof buf, v, dt);
  if (v == trunc(v) && fabs(v) < 1e17) snprintf(buf, sizeof buf, "%.0f", v);
  sb_printf(b, "T.%s(%s)", dtype_name(dt), buf);
}

static void put_int(StrBuf *b, int64_t v, DType dt) {
  if (dt == DT_BOOL)
    sb_puts(b, v ? "True" : "False");
  else if (dt == DT_INT32)
    sb_printf(b, "%" PRId64, v);
  else if (dtype_class(dt) == 'u')
    sb_printf(b, "T.%s(%" PRIu64 ")", dtype_name(dt), (uint64_t)v);
  else
    sb_printf(b, "T.%s(%" PRId64 ")", dtype_name(dt), v);
}

static int binop_prec(PrimBinOp op) {
  switch (op) {
    case PB_ADD:
    case PB_SUB:
      return P_ADD;
    case PB_MUL:
    case PB_DIV:
    case PB_MOD:
      return P_MUL;
    case PB_AND:
      return P_AND;
    case PB_OR:
      return P_OR;
    default:
      return P_CMP;
  }
}

/* Integer `/` and every `%` truncate in rly: T.truncdiv, T.truncmod. */
static void binop(StrBuf *b, const PrimExpr *e, int prec) {
  PrimBinOp op = e->u.bin.op;
  bool fl = dtype_is_float(e->u.bin.a->dtype) || dtype_is_float(e->u.bin.b->dtype);
  if (op == PB_MOD || (op == PB_DIV && !fl)) {
    PrimExpr *v[2] = {e->u.bin.a, e->u.bin.b};
    call(b, op == PB_MOD ? "T.truncmod" : "T.truncdiv", 2, v);
    return;
  }
  int p = binop_prec(op);
  const char *text = op == PB_AND ? "and" : op == PB_OR ? "or" : prim_binop_text(op);
  if (p <= prec) sb_putc(b, '(');
  expr(b, e->u.bin.a, p == P_CMP ? p : p - 1);
  sb_printf(b, " %s ", text);
  expr(b, e->u.bin.b, p);
  if (p <= prec) sb_putc(b, ')');
}

/* prec: the operand must bind tighter than this. */
static void expr(StrBuf *b, const PrimExpr *e, int prec) {
  switch (e->kind) {
    case PE_INT:
      if (e->u.i < 0 && prec >= P_NEG) sb_putc(b, '(');
      put_int(b, e->u.i, e->dtype);
      if (e->u.i < 0 && prec >= P_NEG) sb_putc(b, ')');
      break;
    case PE_FLOAT:
      put_float(b, e->u.f, dtype_is_float(e->dtype) ? e->dtype : DT_FLOAT32);
      break;
    case PE_VAR:
      sb_puts(b, e->u.var->name);
      break;
    case PE_LOAD:
      sb_printf(b, "%s[", e->u.load.buf->name);
      list(b, e->u.load.n, e->u.load.idx);
      sb_putc(b, ']');
      break;
    case PE_BIN:
      binop(b, e, prec);
      break;
    case PE_NOT:
    case PE_NEG: {
      int p = e->kind == PE_NOT ? P_NOT : P_NEG;
      bool lit = e->u.operand->kind == PE_INT || e->u.operand->kind == PE_FLOAT;
      if (p <= prec) sb_putc(b, '(');
      sb_puts(b, e->kind == PE_NOT ? "not " : "-");
      if (lit) sb_putc(b, '('); /* -(3), not the literal -3 */
      expr(b, e->u.operand, lit ? 0 : p - 1);
      if (lit) sb_putc(b, ')');
      if (p <= prec) sb_putc(b, ')');
      break;
    }
    case PE_CALL: {
      char fn[40];
      snprintf(fn, sizeof fn, "T.%s",
               e->u.call.fn == PI_SELECT ? "if_then_else" : prim_intrinsic_name(e->u.call.fn));
      call(b, fn, e->u.call.n, e->u.call.args);
      break;
    }
    case PE_CAST:
      sb_printf(b, "T.%s(\"%s\", ", e->u.cast.bits ? "reinterpret" : "Cast",
                dtype_name(e->u.cast.to));
      expr(b, e->u.cast.value, 0);
      sb_putc(b, ')');
      break;
  }
}

/* ───────────────────────── block domains ───────────────────────── */

static int loop_of(const Loops *l, const TirVar *v) {
  for (int i = l->n - 1; i >= 0; i--)
    if (l->var[i] == v) return i;
  return -1;
}

/* [lo, hi] of e over the loops when their bounds are constants. */
static bool range_of(const Loops *l, const PrimExpr *e, int64_t *lo, int64_t *hi) {
  int64_t a0, a1, b0, b1;
  if (e->kind == PE_INT) return *lo = *hi = e->u.i, true;
  if (e->kind == PE_VAR) {
    int k = loop_of(l, e->u.var);
    const PrimExpr *lb = k >= 0 ? l->lo[k] : NULL, *ub = k >= 0 ? l->hi[k] : NULL;
    if (k < 0 || ub->kind != PE_INT || (lb && lb->kind != PE_INT)) return false;
    return *lo = lb ? lb->u.i : 0, *hi = ub->u.i - 1, *hi >= *lo;
  }
  if (e->kind != PE_BIN || !range_of(l, e->u.bin.a, &a0, &a1) || !range_of(l, e->u.bin.b, &b0, &b1))
    return false;
  switch (e->u.bin.op) {
    case PB_ADD:
      return *lo = a0 + b0, *hi = a1 + b1, true;
    case PB_SUB:
      return *lo = a0 - b1, *hi = a1 - b0, true;
    case PB_MUL:
      return b0 == b1 && b0 >= 0 && (*lo = a0 * b0, *hi = a1 * b0, true);
    case PB_DIV:
      return b0 == b1 && b0 > 0 && a0 >= 0 && (*lo = a0 / b0, *hi = a1 / b0, true);
    case PB_MOD:
      return b0 == b1 && b0 > 0 && a0 >= 0 && (*lo = 0, *hi = b0 - 1, true);
    default:
      return false;
  }
}

static void domain(StrBuf *b, const Loops *l, const PrimExpr *bind) {
  int k = bind->kind == PE_VAR ? loop_of(l, bind->u.var) : -1;
  int64_t lo, hi;
  if (k >= 0)
    expr(b, l->hi[k], 0);
  else if (range_of(l, bind, &lo, &hi) && lo >= 0)
    sb_printf(b, "%" PRId64, hi + 1);
  else
    sb_puts(b, "2147483647"); /* not known: the largest int32 */
}

/* ───────────────────────── statements ───────────────────────── */

static void stmt(StrBuf *b, const Stmt *s, int ind, Loops *l);

static void body(StrBuf *b, const Stmt *s, int ind, Loops *l) {
  if (!s || (s->kind == ST_SEQ && !s->u.seq.n)) {
    sb_indent(b, ind);
    sb_puts(b, "T.evaluate(0)\n");
    return;
  }
  stmt(b, s, ind, l);
}

/* A schedule's annotations (`annotate`) as TVMScript's dict. */
static void annot_dict(StrBuf *b, const Stmt *s) {
  sb_putc(b, '{');
  for (int i = 0; i < s->nannots; i++) {
    if (i) sb_puts(b, ", ");
    print_string_to(b, s->annots[i].key);
    sb_printf(b, ": %s", s->annots[i].value);
  }
  sb_putc(b, '}');
}

static void loop_head(StrBuf *b, const Stmt *s, int i, const char *fn) {
  const PrimExpr *lo = tir_for_lo(s, i);
  sb_printf(b, "for %s in T.%s(", s->u.for_.vars[i]->name, fn);
  if (lo) expr(b, lo, 0), sb_puts(b, ", ");
  expr(b, s->u.for_.hi[i], 0);
  if (s->nannots && i == s->u.for_.nvars - 1) sb_puts(b, ", annotations="), annot_dict(b, s);
  sb_puts(b, "):\n");
}

/* A loop; several variables of a kind other than grid nest one loop each. */
static void for_stmt(StrBuf *b, const Stmt *s, int ind, Loops *l) {
  static const char *const fns[] = {"serial", "grid", "parallel", "vectorized", "unroll"};
  int n = s->u.for_.nvars, in = ind, saved = l->n;
  if (s->u.for_.loop == LOOP_GRID) {
    sb_puts(b, "for ");
    for (int i = 0; i < n; i++) sb_printf(b, "%s%s", i ? ", " : "", s->u.for_.vars[i]->name);
    sb_puts(b, " in T.grid(");
    list(b, n, s->u.for_.hi);
    sb_puts(b, "):\n");
  }
  for (int i = 0; i < n; i++) {
    if (s->u.for_.loop != LOOP_GRID) {
      if (i) sb_indent(b, in += 4);
      loop_head(b, s, i, fns[s->u.for_.loop]);
    }
    if (l->n < TVMS_MAX_LOOPS) {
      l->var[l->n] = s->u.for_.vars[i], l->hi[l->n] = s->u.for_.hi[i];
      l->lo[l->n++] = tir_for_lo(s, i);
    }
  }
  body(b, s->u.for_.body, in + 4, l);
  l->n = saved;
}

static void block_stmt(StrBuf *b, const Stmt *s, int ind, Loops *l) {
  sb_puts(b, "with T.block(");
  print_string_to(b, s->u.block.name ? s->u.block.name : "");
  sb_puts(b, "):\n");
  for (int i = 0; i < s->u.block.niters; i++) {
    const IterVar *it = &s->u.block.iters[i];
    sb_indent(b, ind + 4);
    sb_printf(b, "%s = T.axis.%s(", it->var->name, it->reduce ? "reduce" : "spatial");
    domain(b, l, it->binding);
    sb_puts(b, ", ");
    expr(b, it->binding, 0);
    sb_puts(b, ")\n");
  }
  if (s->nannots) {
    sb_indent(b, ind + 4);
    sb_puts(b, "T.block_attr("), annot_dict(b, s), sb_puts(b, ")\n");
  }
  if (s->u.block.init) {
    sb_indent(b, ind + 4);
    sb_puts(b, "with T.init():\n");
    body(b, s->u.block.init, ind + 8, l);
  }
  bool empty = !s->u.block.body || (s->u.block.body->kind == ST_SEQ && !s->u.block.body->u.seq.n);
  if (!empty || !s->u.block.init) body(b, s->u.block.body, ind + 4, l);
}

static void shape(StrBuf *b, const Buffer *buf) {
  sb_putc(b, '(');
  for (int i = 0; i < buf->ndim; i++) {
    if (i) sb_puts(b, ", ");
    if (buf->dims[i].kind == DIM_CONST)
      sb_printf(b, "%" PRId64, buf->dims[i].value);
    else
      sb_puts(b, buf->dims[i].name ? buf->dims[i].name : "?");
  }
  sb_puts(b, buf->ndim == 1 ? ",)" : ")");
}

static void if_stmt(StrBuf *b, const Stmt *s, int ind, Loops *l, const char *word) {
  sb_printf(b, "%s ", word);
  expr(b, s->u.if_.cond, 0);
  sb_puts(b, ":\n");
  body(b, s->u.if_.then_, ind + 4, l);
  const Stmt *e = s->u.if_.else_;
  if (!e) return;
  sb_indent(b, ind);
  if (e->kind == ST_IF) {
    if_stmt(b, e, ind, l, "elif");
    return;
  }
  sb_puts(b, "else:\n");
  body(b, e, ind + 4, l);
}

static void stmt(StrBuf *b, const Stmt *s, int ind, Loops *l) {
  if (s->kind == ST_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) stmt(b, s->u.seq.items[i], ind, l);
    return;
  }
  sb_indent(b, ind);
  switch (s->kind) {
    case ST_FOR:
      for_stmt(b, s, ind, l);
      return;
    case ST_BLOCK:
      block_stmt(b, s, ind, l);
      return;
    case ST_IF:
      if_stmt(b, s, ind, l, "if");
      return;
    case ST_STORE:
      sb_printf(b, "%s[", s->u.store.buf->name);
      list(b, s->u.store.n, s->u.store.idx);
      sb_puts(b, "] = ");
      expr(b, s->u.store.value, 0);
      break;
    case ST_ALLOC:
      sb_printf(b, "%s = T.alloc_buffer(", s->u.alloc->name);
      shape(b, s->u.alloc);
      sb_printf(b, ", \"%s\")", dtype_name(s->u.alloc->dtype));
      break;
    case ST_LET:
      sb_printf(b, "%s: T.%s = ", s->u.let.var->name, dtype_name(s->u.let.var->dtype));
      expr(b, s->u.let.value, 0);
      break;
    default:
      break;
  }
  sb_putc(b, '\n');
}

/* A buffer with a size variable in its shape is a `T.handle` parameter
 * matched in the body, after its sizes are declared (`n = T.int64()`). */
static bool dynamic(const Buffer *buf) {
  for (int i = 0; i < buf->ndim; i++)
    if (buf->dims[i].kind != DIM_CONST) return true;
  return false;
}

static void dynamic_params(StrBuf *b, const PrimFunc *f, int ind) {
  for (int i = 0; i < f->nsizevars; i++) {
    sb_indent(b, ind);
    sb_printf(b, "%s = T.%s()\n", f->sizevars[i]->name, dtype_name(f->sizevars[i]->dtype));
  }
  for (int i = 0; i < f->nparams; i++) {
    if (!dynamic(f->params[i])) continue;
    sb_indent(b, ind);
    sb_printf(b, "%s = T.match_buffer(var_%s, ", f->params[i]->name, f->params[i]->name);
    shape(b, f->params[i]);
    sb_printf(b, ", \"%s\")\n", dtype_name(f->params[i]->dtype));
  }
}

void print_tvmscript_prim_to(StrBuf *b, const PrimFunc *f, int ind) {
  sb_indent(b, ind);
  sb_puts(b, "@T.prim_func\n");
  sb_indent(b, ind);
  sb_printf(b, "def %s(", f->name);
  for (int i = 0; i < f->nparams; i++) {
    const Buffer *p = f->params[i];
    if (dynamic(p)) {
      sb_printf(b, "%svar_%s: T.handle", i ? ", " : "", p->name);
      continue;
    }
    sb_printf(b, "%s%s: T.Buffer(", i ? ", " : "", p->name);
    shape(b, p);
    sb_printf(b, ", \"%s\")", dtype_name(p->dtype));
  }
  sb_puts(b, "):\n");
  sb_indent(b, ind + 4);
  sb_printf(b, "T.func_attr({\"global_symbol\": \"%s\", \"tir.noalias\": True})\n", f->name);
  dynamic_params(b, f, ind + 4);
  Loops l = {0};
  body(b, f->body, ind + 4, &l);
}

/* ───────────────────────── Relax mains ───────────────────────── */

/* A variable's Python name: graph temporaries %0 become lv0. */
static void r_var(StrBuf *b, const Var *v) {
  sb_printf(b, "%s%s", v->is_graph ? "lv" : "", v->name);
}

static bool r_dims(StrBuf *b, int n, const Dim *d) {
  sb_putc(b, '(');
  for (int i = 0; i < n; i++) {
    if (d[i].kind == DIM_CONST)
      sb_printf(b, "%s%" PRId64, i ? ", " : "", d[i].value);
    else if (d[i].kind == DIM_VAR && d[i].name)
      sb_printf(b, "%s\"%s\"", i ? ", " : "", d[i].name);
    else
      return false;
  }
  sb_puts(b, n == 1 ? ",)" : ")");
  return true;
}

static bool r_tensor(StrBuf *b, const Type *t) {
  if (!t || t->kind != TY_TENSOR) return false;
  sb_puts(b, "R.Tensor(");
  if (!r_dims(b, t->u.tensor.ndim, t->u.tensor.dims)) return false;
  sb_printf(b, ", dtype=\"%s\")", dtype_name(t->u.tensor.dtype));
  return true;
}

/* call_tir(@f, (%a, %b), shape=[..], dtype="..") → R.call_tir(cls.f, (a, b), out_sinfo=...) */
static bool r_call_tir(StrBuf *b, const Expr *e) {
  if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP || !e->u.call.fn->u.op.call_tir ||
      e->u.call.nargs != 2 || e->u.call.args[0]->kind != EX_GLOBAL ||
      e->u.call.args[1]->kind != EX_TUPLE)
    return false;
  const AttrValue *shp = attrs_get(e->u.call.attrs, "shape"),
                  *dt = attrs_get(e->u.call.attrs, "dtype");
  if (!shp || shp->kind != AV_LIST || !dt || dt->kind != AV_STR) return false;
  const Expr *t = e->u.call.args[1];
  sb_printf(b, "R.call_tir(cls.%s, (", e->u.call.args[0]->u.global.name);
  for (int i = 0; i < t->u.tuple.n; i++) {
    if (t->u.tuple.fields[i]->kind != EX_VAR) return false;
    if (i) sb_puts(b, ", ");
    r_var(b, t->u.tuple.fields[i]->u.var);
  }
  sb_puts(b, t->u.tuple.n == 1 ? ",), out_sinfo=R.Tensor((" : "), out_sinfo=R.Tensor((");
  for (int i = 0; i < shp->u.list.n; i++) {
    const AttrValue *d = shp->u.list.items[i];
    if (d->kind != AV_INT && d->kind != AV_SYM) return false;
    if (i) sb_puts(b, ", ");
    if (d->kind == AV_INT)
      sb_printf(b, "%" PRId64, d->u.i);
    else
      sb_printf(b, "\"%s\"", d->u.s);
  }
  sb_printf(b, "%s), dtype=\"%s\"))", shp->u.list.n == 1 ? "," : "", dt->u.s);
  return true;
}

/* A dataflow block's body: a chain of named call_tir bindings, then a
 * call_tir or a variable (its output). */
static bool r_dataflow(StrBuf *b, const Expr *e, int ind, StrBuf *out) {
  sb_indent(b, ind);
  sb_puts(b, "with R.dataflow():\n");
  for (; e->kind == EX_LET; e = e->u.let.body) {
    if (!var_named(e->u.let.var)) return false;
    sb_indent(b, ind + 4);
    r_var(b, e->u.let.var);
    sb_puts(b, " = ");
    if (!r_call_tir(b, e->u.let.value)) return false;
    sb_putc(b, '\n');
  }
  if (e->kind == EX_VAR) {
    r_var(out, e->u.var);
  } else {
    sb_puts(out, "gv");
    sb_indent(b, ind + 4);
    sb_puts(b, "gv = ");
    if (!r_call_tir(b, e)) return false;
    sb_putc(b, '\n');
  }
  sb_indent(b, ind + 4);
  sb_printf(b, "R.output(%s)\n", out->data);
  return true;
}

/* `def @f(...) { dataflow { ... } }` or `{ let %o = dataflow { ... }; %o }`
 * as an @R.function; false when f is not of that form. */
static bool r_function(StrBuf *b, const FuncDef *f, int ind) {
  const Function *fn = f->fn;
  const Expr *e = fn->body, *df = NULL;
  if (e->kind == EX_DATAFLOW) df = e;
  if (e->kind == EX_LET && e->u.let.value->kind == EX_DATAFLOW && e->u.let.body->kind == EX_VAR &&
      e->u.let.body->u.var == e->u.let.var)
    df = e->u.let.value;
  if (!df) return false;
  sb_indent(b, ind);
  sb_printf(b, "@R.function\n%*sdef %s(", ind, "", f->name);
  for (int i = 0; i < fn->nparams; i++) {
    if (i) sb_puts(b, ", ");
    r_var(b, fn->params[i]);
    sb_puts(b, ": ");
    if (!r_tensor(b, fn->params[i]->annot)) return false;
  }
  sb_putc(b, ')');
  if (fn->ret && (sb_puts(b, " -> "), !r_tensor(b, fn->ret))) return false;
  sb_printf(b, ":\n%*scls = Module\n", ind + 4, "");
  StrBuf out = {0};
  bool ok = r_dataflow(b, df->u.dataflow.body, ind + 4, &out);
  if (ok) sb_printf(b, "%*sreturn %s\n", ind + 4, "", out.data);
  sb_free(&out);
  return ok;
}

void print_tvmscript_module_to(StrBuf *b, const Def *const *defs, int n) {
  StrBuf body = {0}, rest = {0};
  int nitems = 0;
  bool relax = false;
  for (int i = 0; i < n; i++) {
    const Def *d = defs[i];
    StrBuf one = {0};
    bool ok = d->kind == DEF_PRIM   ? (print_tvmscript_prim_to(&one, d->u.prim, 4), true)
              : d->kind == DEF_FUNC ? r_function(&one, d->u.func, 4)
                                    : d->kind == DEF_ADT;
    if (ok && one.len) sb_printf(&body, "%s%s", nitems++ ? "\n" : "", one.data);
    relax |= ok && d->kind == DEF_FUNC;
    if (!ok)
      sb_printf(&rest, "    # @%s (a Relay %s) has no TVMScript form here\n", def_name(d),
                d->kind == DEF_FUNC ? "function" : "global");
    sb_free(&one);
  }
  sb_puts(b, "from tvm.script import ir as I\n");
  if (relax) sb_puts(b, "from tvm.script import relax as R\n");
  sb_puts(b, "from tvm.script import tir as T\n\n\n@I.ir_module\nclass Module:\n");
  sb_puts(b, body.len ? body.data : rest.len ? "" : "    pass\n");
  if (rest.len) sb_puts(b, rest.data);
  sb_free(&body), sb_free(&rest);
}
