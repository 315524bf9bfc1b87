/* lower_tir.c — lowering of Primitive functions (FuseOps' output) to prim
 * functions and call_tir (lower/lower.h).
 *
 * A Primitive function is a let chain of op calls ending in one (what
 * fuse_ops.c builds).  Its parameters become buffer parameters (a `?` dim
 * becomes a size variable `anyN` of its own, a named dim keeps its name so
 * call_tir finds it in the caller's types), each op's compute rule
 * (lower/compute/compute.h) turns its operands into its result, and the root's
 * result is written to the output parameter `%out` (destination passing).
 * A parameter that is a tuple of tensors (FuseOps gives concatenate's
 * operand tuple one parameter) becomes one buffer per field, and a tuple
 * operand (such a parameter, a tuple literal of the chain's values) hands
 * its fields to the rule as separate operands; call_tir passes the fields
 * in that order (a tuple literal's, or projections of a tuple value).
 * A constant operand is a literal: a scalar one a value, one of higher
 * rank (kept in the body for an op that reads its values) a constant
 * tensor (lower/compute/compute_const.c).
 * An op with a tuple result (split, meshgrid) gives one tensor per field
 * (lower/compute/compute.h), which the chain's projections of it read; such a
 * tuple is never the function's result (one output buffer).
 *
 * Calls: `%f = fn (...) {...}; ... %f(args)` (and a fn called directly)
 * become call_tir(@fused_<ops>, (args), shape=[...], dtype="..."); the
 * binding of %f goes away when every use of %f is such a call.  Prim
 * functions are named `fused_` + the op names (dots as underscores, cut at
 * 80 characters plus a hash), made unique; a structurally equal prim
 * function is reused.  A Primitive function that cannot be lowered is put
 * back inline (`let %p0 = arg; ...; body`), so the program runs, and fails,
 * exactly as it would without fusion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "passes/rewrite.h"

static const Span no_span;

struct Lowerer {
  Arena *a;
  bool (*taken)(void *user, const char *name);
  void *user;
  bool exact;         /* fast math off (lower_set_fast_math) */
  LowerKnobsFn knobs; /* the setting of a kernel's knobs (lower_set_knobs_hook) */
  void *knobs_user;
  PtrVec prims;
  PtrMap fn_prim;    /* Function* → PrimFunc* (or (void *)1: cannot lower) */
  PtrMap var_prim;   /* Var* (bound to a lowered fn) → PrimFunc* */
  PtrMap var_fn;     /* Var* → its Function* */
  PtrMap var_inline; /* Var* → its Function* that cannot be lowered (inlined back) */
  PtrMap uses;       /* Var* → EX_VAR uses */
  PtrMap calls;      /* Var* → uses as a callee */
};

Lowerer *lower_new(Arena *a, bool (*taken)(void *user, const char *name), void *user) {
  Lowerer *L = calloc(1, sizeof *L);
  if (!L) rly_oom();
  L->a = a, L->taken = taken, L->user = user;
  return L;
}

void lower_set_fast_math(Lowerer *L, bool on) { L->exact = !on; }

void lower_set_knobs_hook(Lowerer *L, LowerKnobsFn fn, void *user) {
  L->knobs = fn, L->knobs_user = user;
}

void lower_free(Lowerer *L) {
  if (!L) return;
  free(L->prims.items);
  ptrmap_free(&L->fn_prim);
  ptrmap_free(&L->var_prim);
  ptrmap_free(&L->var_fn);
  ptrmap_free(&L->var_inline);
  ptrmap_free(&L->uses);
  ptrmap_free(&L->calls);
  free(L);
}

int lower_prim_count(const Lowerer *L) { return (int)L->prims.len; }
PrimFunc *lower_prim(const Lowerer *L, int i) { return L->prims.items[i]; }

/* ───────────────────────────── one function ───────────────────────────── */

typedef struct LTuple {
  int n;
  LTensor **fields;
} LTuple;

typedef struct Build {
  LowerCx *C;
  PtrMap vals;   /* Var* → LTensor* */
  PtrMap tuples; /* Var* (a tuple parameter) → LTuple* */
  int nany;
} Build;

static PrimExpr *param_dim(Build *B, Dim d) {
  if (d.kind == DIM_CONST) return lc_int(B->C, d.value);
  if (d.kind == DIM_VAR) return lc_var(B->C, lc_size_var(B->C, d.name));
  char name[32];
  snprintf(name, sizeof name, "any%d", B->nany++);
  return lc_var(B->C, lc_size_var(B->C, name));
}

static Buffer *tensor_buffer(Build *B, const char *name, const Type *t) {
  if (!t || t->kind != TY_TENSOR || !lc_buffer_dtype_ok(t->u.tensor.dtype)) return NULL;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < t->u.tensor.ndim; d++) {
    if (t->u.tensor.dims[d].kind == DIM_META) return NULL;
    shape[d] = param_dim(B, t->u.tensor.dims[d]);
  }
  return lc_buffer(B->C, name, t->u.tensor.dtype, t->u.tensor.ndim, shape);
}

/* How many buffers parameter p becomes: one for a tensor, one per field
 * for a tuple of tensors (0: neither). */
static int param_width(const Var *p) {
  const Type *t = p->annot;
  if (t && t->kind == TY_TENSOR) return 1;
  if (!t || t->kind != TY_TUPLE || t->u.tuple.n == 0) return 0;
  for (int i = 0; i < t->u.tuple.n; i++)
    if (t->u.tuple.fields[i]->kind != TY_TENSOR) return 0;
  return t->u.tuple.n;
}

/* p's buffers into out (param_width(p) of them), its value into B->vals
 * or B->tuples; false when a dtype or dim is not supported. */
static bool param_buffers(Build *B, const Var *p, Buffer **out) {
  const Type *t = p->annot;
  if (t->kind == TY_TENSOR) {
    if (!(out[0] = tensor_buffer(B, p->name, t))) return false;
    ptrmap_put(&B->vals, p, lc_from_buffer(B->C, NULL, out[0]));
    return true;
  }
  Arena *a = lc_arena(B->C);
  LTuple *tu = ARENA_NEW(a, LTuple);
  tu->n = t->u.tuple.n, tu->fields = ARENA_ARRAY(a, LTensor *, tu->n);
  for (int i = 0; i < tu->n; i++) {
    out[i] = tensor_buffer(B, arena_printf(a, "%s_%d", p->name, i), t->u.tuple.fields[i]);
    if (!out[i]) return false;
    tu->fields[i] = lc_from_buffer(B->C, NULL, out[i]);
  }
  ptrmap_put(&B->tuples, p, tu);
  return true;
}

static LTensor *operand(Build *B, const Expr *a) {
  if (a->kind == EX_VAR) return ptrmap_get(&B->vals, a->u.var);
  if (a->kind == EX_CONST && a->u.konst.value->ndim != 0) return lc_const_tensor(B->C, a);
  if (a->kind != EX_CONST) return NULL;
  const Tensor *t = a->u.konst.value;
  if (!lc_elem_dtype_ok(t->dtype)) return NULL;
  LTensor *r = lc_tensor(B->C, a, t->dtype, 0, NULL);
  r->value = lc_lit(B->C, t->dtype, 0);
  if (dtype_is_float(t->dtype))
    r->value->u.f = tensor_get_f64(t, 0);
  else
    r->value->u.i = tensor_get_i64(t, 0);
  return r;
}

/* The fields of a tuple operand (a tuple parameter or a tuple literal of
 * the chain's values) into in[*n...]; false if a is no such tuple. */
static bool tuple_operands(Build *B, const Expr *a, LTensor **in, int *n, int max) {
  if (a->kind == EX_VAR) {
    LTuple *tu = ptrmap_get(&B->tuples, a->u.var);
    if (!tu || *n + tu->n > max) return false;
    for (int i = 0; i < tu->n; i++) in[(*n)++] = tu->fields[i];
    return true;
  }
  if (a->kind != EX_TUPLE || *n + a->u.tuple.n > max) return false;
  for (int i = 0; i < a->u.tuple.n; i++)
    if (!(in[(*n)++] = operand(B, a->u.tuple.fields[i]))) return false;
  return true;
}

/* A field of a tuple parameter or of a tuple-valued binding (`%p0.1`). */
static LTensor *projection(Build *B, const Expr *a) {
  const Expr *t = a->u.proj.tuple;
  LTuple *tu = t->kind == EX_VAR ? ptrmap_get(&B->tuples, t->u.var) : NULL;
  return tu && a->u.proj.index >= 0 && a->u.proj.index < tu->n ? tu->fields[a->u.proj.index] : NULL;
}

/* Whether the call's operands and result have dtypes a rule may see: any
 * dtype of a buffer.  Each rule checks the dtypes it handles and fails
 * (the call then runs on its kernel) for the others. */
static bool dtypes_fit(const Expr *c, LTensor **in, int n) {
  for (int i = 0; i < n; i++)
    if (!lc_buffer_dtype_ok(in[i]->dtype)) return false;
  return c->ty->kind != TY_TENSOR || lc_buffer_dtype_ok(c->ty->u.tensor.dtype);
}

/* The operands of call c as the rule sees them: an op taking a tuple
 * (OP_TUPLE_ARG) gets the tuple's fields, then its other arguments. */
static LTensor *lower_call(Build *B, const Expr *c) {
  if (c->kind != EX_CALL || c->u.call.fn->kind != EX_OP) return lc_fail(B->C, "not an op call");
  OpComputeFn *rule = compute_rule(c->u.call.fn->u.op.index);
  if (!rule) return lc_fail(B->C, "%s has no compute rule", c->u.call.fn->u.op.name);
  if (!c->ty || (c->ty->kind != TY_TENSOR && c->ty->kind != TY_TUPLE))
    return lc_fail(B->C, "untyped call");
  int n = 0, max = c->u.call.nargs;
  bool tuple_arg = ops_has_flag(c->u.call.fn->u.op.index, OP_TUPLE_ARG);
  for (int i = 0; tuple_arg && i < c->u.call.nargs; i++) {
    const Expr *a = c->u.call.args[i];
    if (a->kind == EX_TUPLE) max += a->u.tuple.n;
    if (a->kind == EX_VAR && ptrmap_get(&B->tuples, a->u.var))
      max += ((LTuple *)ptrmap_get(&B->tuples, a->u.var))->n;
  }
  LTensor **in = ARENA_ARRAY(lc_arena(B->C), LTensor *, max + 1);
  for (int i = 0; i < c->u.call.nargs; i++) {
    const Expr *a = c->u.call.args[i];
    if (tuple_arg && i == 0) {
      if (!tuple_operands(B, a, in, &n, max)) return lc_fail(B->C, "unexpected tuple operand");
      continue;
    }
    if (!(in[n++] = a->kind == EX_PROJ ? projection(B, a) : operand(B, a)))
      return lc_fail(B->C, "unexpected operand");
  }
  if (!dtypes_fit(c, in, n))
    return lc_fail(B->C, "%s of these dtypes stays with its kernel", c->u.call.fn->u.op.name);
  LTensor *r = rule(B->C, c, in, n);
  if (r && (r->nfields > 0) != (c->ty->kind == TY_TUPLE))
    return lc_fail(B->C, "%s: the rule's result is not of the call's kind",
                   c->u.call.fn->u.op.name);
  return r;
}

/* A binding's value: an op call, or a field of a tuple (a parameter's or
 * an op's, `%t.1`). */
static LTensor *binding_value(Build *B, const Expr *e) {
  if (e->kind != EX_PROJ) return lower_call(B, e);
  LTensor *t = projection(B, e);
  return t ? t : lc_fail(B->C, "a projection of an unknown tuple");
}

/* Records the value of a binding: a tuple (an op's tuple result) for
 * projections, a tensor for operands. */
static void bind_value(Build *B, const Var *v, LTensor *t) {
  if (!t->nfields) {
    ptrmap_put(&B->vals, v, t);
    return;
  }
  LTuple *tu = ARENA_NEW(lc_arena(B->C), LTuple);
  tu->n = t->nfields, tu->fields = t->fields;
  ptrmap_put(&B->tuples, v, tu);
}

/* Ops whose result is their (first) operand's elements in the same order. */
static bool view_op(const Expr *call) {
  static const char *const names[] = {"reshape",     "contrib_reverse_reshape", "squeeze",
                                      "expand_dims", "nn.batch_flatten",        "copy"};
  const char *n = ops_get(call->u.call.fn->u.op.index)->name;
  if (call->u.call.nargs != 1) return false;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(n, names[i]) == 0) return call->u.call.nargs == 1;
  /* a broadcast to the operand's own shape */
  const Expr *x = call->u.call.args[0];
  return strcmp(n, "broadcast_to") == 0 && call->u.call.nargs == 1 && x->ty && call->ty &&
         type_equal(x->ty, call->ty);
}

/* Whether f (one tensor parameter) is a chain of view ops from its
 * parameter, the dtype unchanged. */
static bool is_view_chain(const Function *f) {
  if (f->nparams != 1) return false;
  const Var *cur = f->params[0];
  const Expr *e = f->body;
  for (;; e = e->u.let.body) {
    const Expr *v = e->kind == EX_LET ? e->u.let.value : e;
    if (v->kind == EX_VAR && e->kind != EX_LET) return v->u.var == cur;
    if (v->kind != EX_CALL || v->u.call.fn->kind != EX_OP || !view_op(v)) return false;
    const Expr *x = v->u.call.args[0];
    if (x->kind != EX_VAR || x->u.var != cur || !v->ty || v->ty->kind != TY_TENSOR || !x->ty ||
        x->ty->kind != TY_TENSOR || v->ty->u.tensor.dtype != x->ty->u.tensor.dtype)
      return false;
    if (e->kind != EX_LET) return true;
    cur = e->u.let.var;
  }
}

/* The attribute `knobs="conv2d.tile=7 ..."` of a kernel lowered with a
 * setting (it shows in its text, so the JIT's keys tell it apart). */
static Attrs *knobs_attr(Arena *a, const LowerKnobs *k) {
  char buf[512];
  Attrs *at = attrs_new(a, 1);
  at->keys[0] = "knobs", at->vals[0] = attr_str(a, arena_strdup(a, knob_text(k, buf, sizeof buf)));
  return at;
}

/* Lowers one Primitive function: parameters become buffers, each binding's
 * op call is lowered by its compute rule, and the result is written to an
 * extra last parameter (destination passing).  NULL with *why on failure. */
static PrimFunc *build(Arena *a, const Function *f, bool fast_math, const LowerKnobs *knobs,
                       uint32_t *read, const char **why) {
  Build B = {lc_new(a), {0}, {0}, 0};
  lc_set_fast_math(B.C, fast_math);
  lc_set_knobs(B.C, knobs);
  PrimFunc *pf = NULL;
  int nbuf = 0;
  for (int i = 0; i < f->nparams; i++) nbuf += param_width(f->params[i]);
  Buffer **params = ARENA_ARRAY(a, Buffer *, nbuf + 2);
  for (int i = 0, k = 0; i < f->nparams && !lc_failed(B.C); k += param_width(f->params[i++]))
    if (!param_width(f->params[i]) || !param_buffers(&B, f->params[i], params + k))
      lc_fail(B.C, "parameter %%%s has an unsupported type", f->params[i]->name);
  const Expr *e = f->body;
  while (e->kind == EX_LET) e = e->u.let.body;
  lc_set_root(B.C, e);
  lc_open(B.C);
  LTensor *t = NULL;
  for (e = f->body; !lc_failed(B.C) && e->kind == EX_LET; e = e->u.let.body) {
    LTensor *v = binding_value(&B, e->u.let.value);
    if (v) bind_value(&B, e->u.let.var, v);
  }
  if (!lc_failed(B.C)) t = binding_value(&B, e);
  if (t && t->nfields) t = lc_fail(B.C, "a tuple result: a prim function has one output");
  Buffer *out = t ? lc_output(B.C, t->dtype, t->ndim, t->shape) : NULL;
  if (out && t->buf != out) lc_materialize(B.C, t, out);
  Stmt *body = lc_close(B.C);
  bool whole = out && t->buf == out && lc_is_total(B.C, out);
  if (out && !lc_failed(B.C)) whole |= lower_fuse_epilogue(a, body, lc_is_total, B.C);
  if (out && !lc_failed(B.C)) lower_simplify_indices(a, body);
  if (out && !lc_failed(B.C)) lower_fuse_loops(a, body);
  if (out && !lc_failed(B.C)) {
    params[nbuf] = out;
    pf = ARENA_NEW(a, PrimFunc);
    memset(pf, 0, sizeof *pf);
    pf->nparams = nbuf + 1, pf->params = params, pf->body = body, pf->span = f->span;
    pf->out_whole = whole;
    pf->out_is_view = is_view_chain(f);
    pf->group = f;
    pf->nsizevars = lc_nsize_vars(B.C);
    pf->sizevars = ARENA_ARRAY(a, TirVar *, pf->nsizevars + 1);
    for (int i = 0; i < pf->nsizevars; i++) pf->sizevars[i] = lc_size_vars(B.C)[i];
    if (knobs && knobs->set) pf->attrs = knobs_attr(a, knobs);
    if (read) *read = lc_knobs_read(B.C);
  } else if (why) {
    *why = arena_strdup(a, lc_failed(B.C) ? lc_why(B.C) : "no result");
  }
  ptrmap_free(&B.vals);
  ptrmap_free(&B.tuples);
  lc_free(B.C);
  return pf;
}

/* "fused_nn_dense_add_nn_relu" */
static const char *base_name(Arena *a, const Function *f) {
  StrBuf b = {0};
  sb_puts(&b, "fused");
  for (const Expr *e = f->body;; e = e->u.let.body) {
    const Expr *c = e->kind == EX_LET ? e->u.let.value : e;
    if (c->kind == EX_CALL && c->u.call.fn->kind == EX_OP) {
      sb_putc(&b, '_');
      for (const char *s = c->u.call.fn->u.op.name; *s; s++) sb_putc(&b, *s == '.' ? '_' : *s);
    }
    if (e->kind != EX_LET) break;
  }
  if (b.len > 80) {
    uint64_t h = hash_bytes(b.data, b.len, 0);
    b.len = 80, b.data[80] = 0;
    sb_printf(&b, "_%08llx", (unsigned long long)(h & 0xffffffffu));
  }
  const char *r = arena_strdup(a, b.data);
  sb_free(&b);
  return r;
}

static bool name_used(Lowerer *L, const char *name) {
  if (L->taken && L->taken(L->user, name)) return true;
  for (size_t i = 0; i < L->prims.len; i++)
    if (strcmp(((PrimFunc *)L->prims.items[i])->name, name) == 0) return true;
  return false;
}

/* An equal prim function made before, or pf itself named and recorded. */
static PrimFunc *intern(Lowerer *L, PrimFunc *pf, const Function *f) {
  for (size_t i = 0; i < L->prims.len; i++)
    if (prim_func_equal(L->prims.items[i], pf)) return L->prims.items[i];
  const char *base = base_name(L->a, f), *name = base;
  for (int k = 1; name_used(L, name); k++) name = arena_printf(L->a, "%s_%d", base, k);
  pf->name = name;
  vec_push(&L->prims, pf);
  return pf;
}

PrimFunc *lower_primitive(Lowerer *L, const Function *f, const char **why) {
  void *have = ptrmap_get(&L->fn_prim, f);
  if (have) return have == (void *)1 ? NULL : have;
  PrimFunc *pf = build(L->a, f, !L->exact, NULL, NULL, why);
  LowerKnobs k = {0};
  if (pf && L->knobs && L->knobs(L->knobs_user, pf, &k) && k.set) {
    PrimFunc *tuned = build(L->a, f, !L->exact, &k, NULL, NULL);
    if (tuned) pf = tuned;
  }
  if (pf) pf = intern(L, pf, f);
  ptrmap_put(&L->fn_prim, f, pf ? (void *)pf : (void *)1);
  return pf;
}

PrimFunc *lower_with_knobs(Lowerer *L, const Function *f, const LowerKnobs *k, uint32_t *read,
                           const char **why) {
  PrimFunc *pf = build(L->a, f, !L->exact, k, read, why);
  if (pf) pf->name = base_name(L->a, f);
  return pf;
}

/* ───────────────────────────── call sites ───────────────────────────── */

static bool is_primitive_fn(const Expr *e) {
  if (e->kind != EX_FN) return false;
  const AttrValue *v = attrs_get(e->u.fn->attrs, "Primitive");
  return v && v->kind == AV_INT && v->u.i != 0;
}

static AttrValue *av_new(Arena *a, AttrKind k) {
  AttrValue *v = ARENA_NEW(a, AttrValue);
  memset(v, 0, sizeof *v);
  v->kind = k, v->span = no_span;
  return v;
}

/* call_tir's `shape` and `dtype` from the prim function's output buffer;
 * named dims stay symbolic, resolved against the caller's size variables. */
static Attrs *call_tir_attrs(Arena *a, const PrimFunc *pf) {
  const Buffer *out = pf->params[pf->nparams - 1];
  AttrValue *shape = av_new(a, AV_LIST);
  shape->u.list.n = out->ndim;
  shape->u.list.items = ARENA_ARRAY(a, AttrValue *, out->ndim + 1);
  for (int d = 0; d < out->ndim; d++) {
    AttrValue *it;
    if (out->dims[d].kind == DIM_CONST) {
      it = attr_int(a, out->dims[d].value, DT_INT32);
    } else {
      it = av_new(a, AV_SYM);
      it->u.s = out->dims[d].name;
    }
    shape->u.list.items[d] = it;
  }
  Attrs *at = attrs_new(a, 2);
  at->keys[0] = "shape", at->vals[0] = shape;
  at->keys[1] = "dtype", at->vals[1] = attr_str(a, dtype_name(out->dtype));
  return at;
}

/* call_tir's operands: the call's arguments, a tuple argument's fields in
 * their place (the prim function has a buffer per field). */
static Expr *make_call_tir(Arena *a, const PrimFunc *pf, const Expr *call) {
  int n = pf->nparams - 1, k = 0;
  Expr *op = ops_expr(a, ops_find_flag(OP_CALL_TIR), call->span);
  Expr **fields = ARENA_ARRAY(a, Expr *, n + 1);
  Type **tys = ARENA_ARRAY(a, Type *, n + 1);
  for (int i = 0; i < call->u.call.nargs; i++) {
    Expr *arg = call->u.call.args[i];
    if (!arg->ty || arg->ty->kind != TY_TUPLE) {
      fields[k] = arg, tys[k++] = arg->ty;
      continue;
    }
    for (int j = 0; j < arg->ty->u.tuple.n; j++) {
      Expr *fj = arg->kind == EX_TUPLE ? arg->u.tuple.fields[j] : expr_proj(a, arg, j, call->span);
      fj->ty = arg->ty->u.tuple.fields[j];
      fields[k] = fj, tys[k++] = fj->ty;
    }
  }
  Expr *tup = expr_tuple(a, n, fields, call->span);
  tup->ty = type_tuple(a, n, tys, call->span);
  Expr **args = ARENA_ARRAY(a, Expr *, 2);
  args[0] = expr_global(a, pf->name, call->span);
  args[1] = tup;
  Expr *r = expr_call(a, op, 2, args, call_tir_attrs(a, pf), call->span);
  r->ty = call->ty;
  return r;
}

static bool count_visit(void *ctx, Expr *e) {
  Lowerer *L = ctx;
  if (e->kind == EX_VAR) {
    uint64_t *c = u64map_slot(&L->uses, PTR_KEY(e->u.var));
    (*c)++;
  }
  if (e->kind == EX_CALL && e->u.call.fn->kind == EX_VAR) {
    uint64_t *c = u64map_slot(&L->calls, PTR_KEY(e->u.call.fn->u.var));
    (*c)++;
  }
  if (e->kind == EX_LET && is_primitive_fn(e->u.let.value))
    ptrmap_put(&L->var_fn, e->u.let.var, e->u.let.value->u.fn);
  return true;
}

static uint64_t count_of(const PtrMap *m, const Var *v) {
  uint64_t *c = u64map_find(m, PTR_KEY(v));
  return c ? *c : 0;
}

/* A Primitive function that did not lower, put back where it was called:
 * `let %p0 = arg0; ...; body`, so run-time errors name the enclosing
 * function as they do without fusion. */
static Expr *inline_call(Arena *a, const Function *f, const Expr *call) {
  Expr *body = f->body;
  for (int i = f->nparams; i-- > 0;) {
    body = expr_let(a, f->params[i], call->u.call.args[i], body, call->span);
    body->ty = call->ty;
  }
  return body;
}

static Expr *low_pre(Rewriter *rw, Expr *e) {
  Lowerer *L = rw->user;
  if (e->kind == EX_LET && is_primitive_fn(e->u.let.value)) {
    Var *v = e->u.let.var;
    if (count_of(&L->uses, v) == count_of(&L->calls, v) && !ptrmap_has(&L->var_prim, v)) {
      PrimFunc *pf = lower_primitive(L, e->u.let.value->u.fn, NULL);
      if (pf)
        ptrmap_put(&L->var_prim, v, pf);
      else if (count_of(&L->calls, v) == 1)
        ptrmap_put(&L->var_inline, v, e->u.let.value->u.fn);
    }
  }
  return NULL;
}

static Expr *low_post(Rewriter *rw, Expr *e, Expr *r) {
  Lowerer *L = rw->user;
  if (r->kind == EX_LET &&
      (ptrmap_has(&L->var_prim, r->u.let.var) || ptrmap_has(&L->var_inline, r->u.let.var)))
    return r->u.let.body;
  if (r->kind != EX_CALL) return r;
  const Expr *fn = r->u.call.fn;
  if (fn->kind == EX_VAR && ptrmap_has(&L->var_inline, fn->u.var))
    return inline_call(L->a, ptrmap_get(&L->var_inline, fn->u.var), r);
  PrimFunc *pf = NULL;
  if (fn->kind == EX_VAR) pf = ptrmap_get(&L->var_prim, fn->u.var);
  if (!pf && is_primitive_fn(fn)) pf = lower_primitive(L, fn->u.fn, NULL);
  if (!pf) return r;
  if (r != e) r->ty = e->ty;
  return make_call_tir(L->a, pf, r);
}

Expr *lower_expr(Lowerer *L, Expr *e) {
  expr_walk(e, count_visit, L);
  Rewriter rw = {.a = L->a, .pre = low_pre, .post = low_post, .user = L};
  Expr *r = rw_expr(&rw, e);
  ptrmap_free(&rw.subst);
  return r;
}

Function *lower_function(Lowerer *L, Function *f) {
  Expr *body = lower_expr(L, f->body);
  if (body == f->body) return f;
  return rw_function_with(L->a, f, f->nparams, f->params, f->ret, body);
}
