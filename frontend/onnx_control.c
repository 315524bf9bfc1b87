/* onnx_control.c — converters of ONNX's sequences, optionals and control
 * flow (rows in onnx_ops.c).
 *
 * A sequence is the prelude's List of its tensors, an optional value its
 * Option; the sequence ops call the prelude's functions (@nth, @length,
 * @concat, @insert_at, @erase_at, @foldl).  The elements of a List share
 * one type, so elements of different shapes are given their join (the
 * dims that differ become `?`) through an annotated let.  An empty
 * sequence (SequenceEmpty) has elements of a type not known yet (`_`)
 * until something is inserted; a sequence whose elements have another
 * rank than the ones a loop or an insert gives it (declared of scalars,
 * filled with vectors) takes them only when empty, checked at run time.
 *
 * If is Relay's `if` on the branches' let chains (a condition known at
 * import time takes its branch alone).  Loop, Scan and SequenceMap are a
 * recursive local function, as onnx_rnn.c's time loop:
 *
 *   let %loop = fn (%i: int64, %cond: bool, %v..: T.., %acc..: Tensor[(?, ..)]) {
 *     if (%cond && %i < M) { <body>; %loop(%i + 1, cond', v'.., concat(acc, y)..) }
 *     else { (%v.., %acc..) }
 *   };
 *
 * A loop-carried value whose type changes from one iteration to the next
 * (a growing tensor, a sequence that gets its first element) is given the
 * join of its types: the body is converted again until they agree.  Scan
 * at opset 8 (a batch axis first) is opset 9's Scan per batch element.  The
 * interpreter runs the loop; the body's tensor work is fused and compiled
 * in the jit mode as any other code. */
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_int.h"

static const Span no_span;

enum { JOIN_ROUNDS = 4 }; /* conversions of a loop body until its state types agree */

/* ───────────────────────── let chains ───────────────────────── */

/* A nested block's bindings (a branch, a loop body) are collected in a
 * chain of their own, swapped with the converter's. */
typedef struct Chain {
  PtrVec vars, vals;
} Chain;

static void chain_swap(OnnxCx *cx, Chain *c) {
  PtrVec v = cx->let_vars, w = cx->let_vals;
  cx->let_vars = c->vars, cx->let_vals = c->vals;
  c->vars = v, c->vals = w;
}

/* Two branches' chains given up after an error; false. */
static bool chains_drop(Chain *a, Chain *b) {
  vec_free(&a->vars), vec_free(&a->vals), vec_free(&b->vars), vec_free(&b->vals);
  return false;
}

/* The current chain's bindings around result; the chain is left empty. */
static Expr *chain_wrap(OnnxCx *cx, Expr *result) {
  Expr *body = result;
  for (size_t i = cx->let_vars.len; i-- > 0;)
    body = expr_let(cx->a, cx->let_vars.items[i], cx->let_vals.items[i], body, no_span);
  vec_free(&cx->let_vars), vec_free(&cx->let_vals);
  return body;
}

/* ───────────────────────── types ───────────────────────── */

static bool is_adt(const Type *t, const char *name) {
  return t && t->kind == TY_ADT && strcmp(t->u.adt.name, name) == 0;
}

static Type *adt1(OnnxCx *cx, const char *name, Type *arg) {
  return type_adt(cx->a, name, 1, &arg, no_span);
}

static Type *elem_of(const Type *t) { return t->u.adt.args[0]; }

static bool unknown(const Type *t) { return !t || t->kind == TY_INCOMPLETE; }

static bool dim_same(Dim a, Dim b) {
  if (a.kind != b.kind) return false;
  if (a.kind == DIM_CONST) return a.value == b.value;
  if (a.kind == DIM_VAR) return strcmp(a.name, b.name) == 0;
  return true;
}

static Type *join(OnnxCx *cx, Type *a, Type *b);

/* Tensor types of one dtype and different ranks. */
static bool other_rank(const Type *x, const Type *y) {
  return x && y && x->kind == TY_TENSOR && y->kind == TY_TENSOR &&
         x->u.tensor.dtype == y->u.tensor.dtype && x->u.tensor.ndim != y->u.tensor.ndim;
}

/* Two sequence types whose elements differ in rank alone (a sequence
 * declared of scalars that a loop fills with vectors): a value of a has
 * type b only when it is empty, since a List's elements share one type. */
static bool ranks_differ(const Type *a, const Type *b) {
  return is_adt(a, "List") && is_adt(b, "List") && other_rank(elem_of(a), elem_of(b));
}

static Type *join_tensor(OnnxCx *cx, Type *a, Type *b) {
  int n = a->u.tensor.ndim;
  if (a->u.tensor.dtype != b->u.tensor.dtype || n != b->u.tensor.ndim) return NULL;
  Dim *dims = ARENA_ARRAY(cx->a, Dim, n ? n : 1);
  for (int i = 0; i < n; i++)
    dims[i] = dim_same(a->u.tensor.dims[i], b->u.tensor.dims[i]) ? a->u.tensor.dims[i] : dim_any();
  return type_tensor(cx->a, a->u.tensor.dtype, n, dims, no_span);
}

/* The least type both a and b have (`?` where their dims differ; an
 * unknown type joins anything); NULL when they differ in kind, dtype or
 * rank. */
static Type *join(OnnxCx *cx, Type *a, Type *b) {
  if (unknown(a)) return b;
  if (unknown(b)) return a;
  if (a->kind != b->kind) return NULL;
  if (a->kind == TY_TENSOR) return join_tensor(cx, a, b);
  if (a->kind != TY_ADT || strcmp(a->u.adt.name, b->u.adt.name) != 0) return NULL;
  Type *e = join(cx, elem_of(a), elem_of(b));
  if (!e && ranks_differ(a, b)) e = elem_of(b); /* a holds them only when empty (as_type) */
  return e ? adt1(cx, a->u.adt.name, e) : NULL;
}

static bool same(const Type *a, const Type *b) {
  if (unknown(a) || unknown(b)) return unknown(a) && unknown(b);
  return type_equal(a, b);
}

/* The join of a and b, or NULL after an error naming what. */
static Type *need_join(OnnxCx *cx, Type *a, Type *b, const char *what) {
  Type *j = join(cx, a, b);
  if (j) return j;
  char *sa = print_type(a), *sb = print_type(b);
  fe_fail(cx, "%s: %s and %s do not agree (dtype or rank)", what, sa, sb);
  free(sa), free(sb);
  return NULL;
}

static FeVal *empty_as(OnnxCx *cx, FeVal *v, Type *ty);

/* v as type ty (a let annotated with ty) when its own type differs. */
static FeVal *as_type(OnnxCx *cx, FeVal *v, Type *ty) {
  if (same(v->ty, ty) || unknown(ty)) return v;
  if (ranks_differ(v->ty, ty)) return empty_as(cx, v, ty);
  return fe_bind(cx, var_new(cx->a, "v", ty, no_span), v->expr, ty);
}

/* ───────────────────────── expressions ───────────────────────── */

static Expr *ctor(OnnxCx *cx, const char *name) {
  int index = 0;
  AdtDef *adt = module_ctor_adt(cx->m, name, &index);
  if (!adt) return fe_fail(cx, "the prelude's constructor %s is not defined", name), NULL;
  Expr *e = expr_new(cx->a, EX_CTOR, no_span);
  e->u.ctor.adt = adt, e->u.ctor.index = index;
  return e;
}

/* ctor(args) (the constructor alone when n is 0) bound with type ty. */
static FeVal *make(OnnxCx *cx, const char *name, int n, Expr **args, Type *ty) {
  Expr *c = ctor(cx, name);
  if (!c) return NULL;
  return fe_bind(cx, NULL, expr_call(cx->a, c, n, args, NULL, no_span), ty);
}

/* The prelude's @f(args) bound with type ty. */
static FeVal *call(OnnxCx *cx, const char *f, int n, Expr **args, Type *ty) {
  if (!module_func(cx->m, f)) return FE_FAIL_NULL(cx, "the prelude's @%s is not defined", f);
  return fe_bind(cx, NULL, expr_call(cx->a, expr_global(cx->a, f, no_span), n, args, NULL, no_span),
                 ty);
}

static FeVal *param_val(OnnxCx *cx, Var *var) {
  FeVal *v = ARENA_NEW(cx->a, FeVal);
  v->expr = expr_var(cx->a, var, no_span);
  v->ty = var->annot;
  return v;
}

static FeVal *op2(OnnxCx *cx, const char *op, FeVal *a, FeVal *b) {
  return FE_OP(cx, op, NULL, a, b);
}

static FeVal *with_axis(OnnxCx *cx, const char *op, int64_t axis, int n, FeVal **args) {
  AttrB b = ab_new(cx);
  ab_int(&b, "axis", axis);
  return fe_op(cx, op, n, args, ab_done(&b));
}

/* A rank-0 version of a one-element condition or index. */
static FeVal *scalar_of(OnnxCx *cx, FeVal *v, const char *what) {
  if (!fe_tensor_type(v)) return FE_FAIL_NULL(cx, "%s must be a tensor", what);
  if (fe_rank(v) == 0) return v;
  int64_t shape[TENSOR_MAX_RANK];
  if (fe_rank(v) != 1 || !fe_static_shape(v, shape) || shape[0] != 1)
    return FE_FAIL_NULL(cx, "%s must hold one value", what);
  return FE_OP(cx, "squeeze", NULL, v);
}

/* ───────────────────────── sequences ───────────────────────── */

static FeVal *length32(OnnxCx *cx, FeVal *seq);

/* Nil of type ty, unbound. */
static Expr *nil_of(OnnxCx *cx) {
  Expr *c = ctor(cx, "Nil");
  return c ? expr_call(cx->a, c, 0, NULL, NULL, no_span) : NULL;
}

/* v, a sequence whose elements' rank differs from ty's, as ty: the empty
 * sequence, after checking at run time that v is empty (a List's elements
 * share one rank, so a non-empty v is refused, never retyped). */
static FeVal *empty_as(OnnxCx *cx, FeVal *v, Type *ty) {
  FeVal *n = length32(cx, v), *zero = fe_scalar(cx, DT_INT32, 0);
  AttrB b = ab_new(cx);
  ab_str(&b, "message",
         arena_printf(cx->a,
                      "a sequence of rank-%d tensors used where rank-%d tensors are expected: "
                      "rly's sequences hold tensors of one rank",
                      elem_of(v->ty)->u.tensor.ndim, elem_of(ty)->u.tensor.ndim));
  FeVal *ne = n ? op2(cx, "not_equal", n, zero) : NULL;
  FeVal *c = ne ? FE_OP(cx, "check", ab_done(&b), n, ne) : NULL;
  FeVal *eq = c ? op2(cx, "equal", c, zero) : NULL;
  Expr *nil = eq ? nil_of(cx) : NULL;
  if (!nil) return NULL;
  return fe_bind(cx, var_new(cx->a, "v", ty, no_span), expr_if(cx->a, eq->expr, nil, nil, no_span),
                 ty);
}

static FeVal *need_seq(OnnxCx *cx, int i) {
  FeVal *v = cx->in[i];
  if (!is_adt(v->ty, "List")) return FE_FAIL_NULL(cx, "input %d must be a sequence", i);
  return v;
}

static FeVal *length32(OnnxCx *cx, FeVal *seq) {
  return call(cx, "length", 1, &seq->expr, type_scalar(cx->a, DT_INT32));
}

/* A position in seq as an int32 index: a negative one counts from the end. */
static FeVal *position(OnnxCx *cx, FeVal *seq, FeVal *pos) {
  FeVal *p = scalar_of(cx, pos, "the position");
  if (!p || !dtype_is_int(fe_dtype(p)))
    return FE_FAIL_NULL(cx, "the position must be an integer scalar");
  p = fe_cast(cx, p, DT_INT32);
  if (p && p->value && tensor_get_i64(p->value, 0) >= 0) return p;
  FeVal *zero = fe_scalar(cx, DT_INT32, 0), *len = p ? length32(cx, seq) : NULL;
  if (!len) return NULL;
  if (p->value) return op2(cx, "add", len, p); /* a known negative position */
  FeVal *args[3] = {op2(cx, "less", p, zero), op2(cx, "add", p, len), p};
  return fe_op(cx, "where", 3, args, NULL);
}

static bool set_out(OnnxCx *cx, FeVal *v) {
  cx->out[0] = v;
  return v != NULL;
}

/* Cons(v[0], Cons(v[1], ... Nil)) with the join of their types. */
static FeVal *list_of(OnnxCx *cx, int n, FeVal **v, Type *elem) {
  for (int i = 0; i < n && elem; i++)
    elem = need_join(cx, elem, v[i]->ty, "the sequence's elements");
  if (!elem) return NULL;
  Type *ty = adt1(cx, "List", elem);
  FeVal *acc = make(cx, "Nil", 0, NULL, ty);
  for (int i = n; acc && i-- > 0;) {
    FeVal *x = as_type(cx, v[i], elem);
    acc = make(cx, "Cons", 2, (Expr *[]){x->expr, acc->expr}, ty);
  }
  return acc;
}

bool onnx_convert_seq_construct(OnnxCx *cx) {
  for (int i = 0; i < cx->nin; i++)
    if (!fe_tensor_type(cx->in[i])) return fe_fail(cx, "input %d must be a tensor", i);
  return set_out(cx, list_of(cx, cx->nin, cx->in, type_incomplete(cx->a, 0, no_span)));
}

bool onnx_convert_seq_empty(OnnxCx *cx) {
  const char *name;
  if (onnx_dtype((int32_t)oa_int(cx, "dtype", 1), &name) == DT_INVALID)
    return fe_fail(cx, "dtype %s is not supported", name);
  Type *ty = adt1(cx, "List", type_incomplete(cx->a, 0, no_span));
  return set_out(cx, make(cx, "Nil", 0, NULL, ty));
}

bool onnx_convert_seq_at(OnnxCx *cx) {
  FeVal *seq = need_seq(cx, 0);
  if (!seq) return false;
  if (unknown(elem_of(seq->ty)))
    return fe_fail(cx, "the sequence is empty (its elements' type is not known)");
  FeVal *q = position(cx, seq, cx->in[1]);
  return q && set_out(cx, call(cx, "nth", 2, (Expr *[]){seq->expr, q->expr}, elem_of(seq->ty)));
}

bool onnx_convert_seq_length(OnnxCx *cx) {
  FeVal *seq = need_seq(cx, 0), *n = seq ? length32(cx, seq) : NULL;
  return n && set_out(cx, fe_cast(cx, n, DT_INT64));
}

bool onnx_convert_seq_insert(OnnxCx *cx) {
  FeVal *seq = need_seq(cx, 0), *t = cx->in[1];
  if (!seq) return false;
  if (!fe_tensor_type(t)) return fe_fail(cx, "input 1 must be a tensor");
  Type *elem = other_rank(elem_of(seq->ty), t->ty) /* seq is then empty (as_type) */
                   ? t->ty
                   : need_join(cx, elem_of(seq->ty), t->ty, "the inserted tensor and the sequence");
  if (!elem) return false;
  Type *ty = adt1(cx, "List", elem);
  seq = as_type(cx, seq, ty), t = as_type(cx, t, elem);
  if (cx->nin < 3 || !cx->in[2]) {
    FeVal *one = list_of(cx, 1, &t, elem);
    return one && set_out(cx, call(cx, "concat", 2, (Expr *[]){seq->expr, one->expr}, ty));
  }
  FeVal *q = position(cx, seq, cx->in[2]);
  return q && set_out(cx, call(cx, "insert_at", 3, (Expr *[]){seq->expr, q->expr, t->expr}, ty));
}

bool onnx_convert_seq_erase(OnnxCx *cx) {
  FeVal *seq = need_seq(cx, 0), *q;
  if (!seq) return false;
  if (cx->nin < 2 || !cx->in[1]) {
    FeVal *len = length32(cx, seq);
    q = len ? op2(cx, "subtract", len, fe_scalar(cx, DT_INT32, 1)) : NULL;
  } else {
    q = position(cx, seq, cx->in[1]);
  }
  return q && set_out(cx, call(cx, "erase_at", 2, (Expr *[]){seq->expr, q->expr}, seq->ty));
}

/* The sizes SplitToSequence cuts a dim of size d into (*squeeze: the
 * pieces lose the axis); their count, or -1 after an error. */
static int split_sizes(OnnxCx *cx, int64_t d, int64_t *sizes, int max, bool *squeeze) {
  *squeeze = false;
  FeVal *split = cx->nin > 1 ? cx->in[1] : NULL;
  if (!split) {
    if (d > max) return fe_fail(cx, "%lld pieces (at most %d)", (long long)d, max), -1;
    for (int64_t i = 0; i < d; i++) sizes[i] = 1;
    *squeeze = oa_int(cx, "keepdims", 1) == 0;
    return (int)d;
  }
  int n = fe_need_ints(cx, split, "input 'split'", sizes, max);
  if (n >= 0 && fe_rank(split) == 1) {
    int64_t sum = 0;
    for (int i = 0; i < n; i++) sum += sizes[i] < 0 ? d + 1 : sizes[i];
    if (sum != d) return fe_fail(cx, "the split sizes do not add up to %lld", (long long)d), -1;
  }
  if (n < 0 || fe_rank(split) == 1) return n;
  int64_t s = sizes[0], k = 0;
  if (s <= 0) return fe_fail(cx, "split %lld must be positive", (long long)s), -1;
  if ((d + s - 1) / s > max) return fe_fail(cx, "too many pieces (at most %d)", max), -1;
  for (int64_t at = 0; at < d; at += s) sizes[k++] = at + s <= d ? s : d - at;
  return (int)k;
}

/* SplitToSequence along axis 0 by sizes computed at run time (a 1-D
 * split of static length): piece k is x[ends[k] - split[k] : ends[k]],
 * ends the running sum of the sizes. */
static bool split_dynamic(OnnxCx *cx, FeVal *x, FeVal *split) {
  int64_t n;
  if (fe_rank(split) != 1 || !fe_static_shape(split, &n) || n > 4096)
    return fe_fail(cx, "input 'split' computed at run time must be 1-D of static length");
  FeVal *sp = fe_cast(cx, split, DT_INT64);
  AttrB cb = ab_new(cx);
  ab_int(&cb, "axis", 0);
  FeVal *ends = sp ? FE_OP(cx, "cumsum", ab_done(&cb), sp) : NULL;
  FeVal *begins = ends ? op2(cx, "subtract", ends, sp) : NULL;
  FeVal **parts = ARENA_ARRAY(cx->a, FeVal *, n ? n : 1);
  for (int64_t k = 0; begins && k < n; k++) {
    FeVal *be[2] = {begins, ends};
    for (int i = 0; i < 2; i++) {
      AttrB b = ab_new(cx);
      ab_ints(&b, "begin", 1, &k), ab_ints(&b, "end", 1, (int64_t[]){k + 1});
      be[i] = FE_OP(cx, "strided_slice", ab_done(&b), be[i]);
    }
    parts[k] = FE_OP(cx, "dyn.strided_slice", NULL, x, be[0], be[1]);
  }
  return begins && !cx->failed &&
         set_out(cx, list_of(cx, (int)n, parts, type_incomplete(cx->a, 0, no_span)));
}

bool onnx_convert_split_to_seq(OnnxCx *cx) {
  enum { MAXP = 4096 };
  FeVal *x = cx->in[0];
  int r = fe_rank(x), axis = fe_axis(cx, oa_int(cx, "axis", 0), r, "axis");
  if (axis < 0) return false;
  if (cx->nin > 1 && cx->in[1] && !cx->in[1]->value && axis == 0)
    return split_dynamic(cx, x, cx->in[1]);
  Dim d = fe_dim(x, axis);
  if (d.kind != DIM_CONST) return fe_fail(cx, "the split axis must have a static size");
  int64_t *sizes = ARENA_ARRAY(cx->a, int64_t, MAXP), *idx = ARENA_ARRAY(cx->a, int64_t, MAXP);
  bool squeeze;
  int n = split_sizes(cx, d.value, sizes, MAXP, &squeeze);
  if (n < 0) return false;
  FeVal **parts = ARENA_ARRAY(cx->a, FeVal *, n ? n : 1), *t = x;
  for (int i = 0; i + 1 < n; i++) idx[i] = (i ? idx[i - 1] : 0) + sizes[i];
  if (n > 1) {
    AttrB b = ab_new(cx);
    ab_ints(&b, "indices_or_sections", n - 1, idx), ab_int(&b, "axis", axis);
    t = FE_OP(cx, "split", ab_done(&b), x);
  }
  for (int i = 0; t && i < n; i++) {
    parts[i] = n > 1 ? fe_get(cx, t, i) : x;
    if (squeeze) {
      AttrB b = ab_new(cx);
      ab_ints(&b, "axis", 1, (int64_t[]){axis});
      parts[i] = FE_OP(cx, "squeeze", ab_done(&b), parts[i]);
    }
  }
  return t && set_out(cx, list_of(cx, n, parts, type_incomplete(cx->a, 0, no_span)));
}

/* The elements of seq (each with a new axis when new_axis) concatenated
 * (ConcatFromSequence), as @foldl(fn (%acc, %x) { concatenate((%acc, %x)) },
 * @hd(seq), @tl(seq)); the result's axis is `?`. */
static FeVal *seq_concat(OnnxCx *cx, FeVal *seq, int64_t axis_attr, bool new_axis) {
  Type *e = elem_of(seq->ty);
  if (unknown(e) || e->kind != TY_TENSOR)
    return FE_FAIL_NULL(cx, "the elements' type is not known");
  int r = e->u.tensor.ndim + (new_axis ? 1 : 0);
  int axis = fe_axis(cx, axis_attr, r, "axis");
  if (axis < 0) return NULL;
  Var *acc = var_new(cx->a, "acc", NULL, no_span), *x = var_new(cx->a, "x", e, no_span);
  Chain outer = {0};
  chain_swap(cx, &outer);
  FeVal *px = param_val(cx, x);
  if (new_axis) px = with_axis(cx, "expand_dims", axis, 1, &px);
  Type *acc_ty = px ? join_tensor(cx, px->ty, px->ty) : NULL;
  if (acc_ty) acc_ty->u.tensor.dims[axis] = dim_any();
  acc->annot = acc_ty;
  FeVal *cat =
      acc_ty ? with_axis(cx, "concatenate", axis, 2, (FeVal *[]){param_val(cx, acc), px}) : NULL;
  Expr *body = chain_wrap(cx, cat ? cat->expr : expr_tuple(cx->a, 0, NULL, no_span));
  chain_swap(cx, &outer);
  if (!cat) return NULL;
  Function *fn = ARENA_NEW(cx->a, Function);
  fn->nparams = 2, fn->params = ARENA_ARRAY(cx->a, Var *, 2), fn->ret = acc_ty, fn->body = body;
  fn->params[0] = acc, fn->params[1] = x;
  FeVal *hd = call(cx, "hd", 1, &seq->expr, e), *tl = call(cx, "tl", 1, &seq->expr, seq->ty);
  if (!hd || !tl) return NULL;
  if (new_axis) hd = with_axis(cx, "expand_dims", axis, 1, &hd);
  hd = hd ? as_type(cx, hd, acc_ty) : NULL;
  Expr *args[3] = {expr_fn(cx->a, fn, no_span), hd ? hd->expr : NULL, tl->expr};
  return hd ? call(cx, "foldl", 3, args, acc_ty) : NULL;
}

bool onnx_convert_concat_from_seq(OnnxCx *cx) {
  FeVal *seq = need_seq(cx, 0);
  return seq && set_out(cx, seq_concat(cx, seq, oa_int(cx, "axis", 0), oa_int(cx, "new_axis", 0)));
}

/* ───────────────────────── optionals ───────────────────────── */

bool onnx_convert_optional(OnnxCx *cx) {
  if (cx->nin > 0 && cx->in[0])
    return set_out(cx, make(cx, "Some", 1, &cx->in[0]->expr, adt1(cx, "Option", cx->in[0]->ty)));
  const Onnx__AttributeProto *at = oa_get(cx, "type");
  if (!at || !at->tp) return fe_fail(cx, "an empty optional needs its 'type' attribute");
  Type *t = onnx_type_proto(cx, at->tp, "attribute 'type'");
  Type *ty = t ? adt1(cx, "Option", t) : NULL;
  Expr *none = ty ? ctor(cx, "None") : NULL; /* annotated: nothing else says its type */
  return none && set_out(cx, fe_bind(cx, var_new(cx->a, "v", ty, no_span),
                                     expr_call(cx->a, none, 0, NULL, NULL, no_span), ty));
}

/* match (o) { Some(x) => some, None => none } (none NULL: `match?`). */
static Expr *match_option(OnnxCx *cx, FeVal *o, Pattern *inner, Expr *some, Expr *none) {
  AdtDef *adt = module_ctor_adt(cx->m, "Some", &(int){0});
  if (!adt) return fe_fail(cx, "the prelude's Option is not defined"), NULL;
  MatchClause *cl = ARENA_ARRAY(cx->a, MatchClause, 2);
  for (int k = 0; k < 2; k++) {
    Pattern *p = ARENA_NEW(cx->a, Pattern);
    p->kind = PAT_CTOR, p->span = no_span;
    module_ctor_adt(cx->m, k ? "None" : "Some", &p->u.ctor.index);
    p->u.ctor.adt = adt, p->u.ctor.n = k ? 0 : 1;
    p->u.ctor.sub = ARENA_ARRAY(cx->a, Pattern *, 1);
    p->u.ctor.sub[0] = inner;
    cl[k].pat = p, cl[k].body = k ? none : some;
  }
  Expr *e = expr_new(cx->a, EX_MATCH, no_span);
  e->u.match.scrut = o->expr, e->u.match.n = none ? 2 : 1, e->u.match.clauses = cl;
  e->u.match.partial = none == NULL;
  return e;
}

bool onnx_convert_optional_has(OnnxCx *cx) {
  FeVal *o = cx->nin > 0 ? cx->in[0] : NULL;
  Type *b = type_scalar(cx->a, DT_BOOL);
  if (!o || !is_adt(o->ty, "Option")) return set_out(cx, fe_scalar(cx, DT_BOOL, o != NULL));
  Pattern *wild = ARENA_NEW(cx->a, Pattern);
  wild->kind = PAT_WILD, wild->span = no_span;
  Expr *m = match_option(cx, o, wild, expr_scalar_bool(cx->a, true, no_span),
                         expr_scalar_bool(cx->a, false, no_span));
  return m && set_out(cx, fe_bind(cx, NULL, m, b));
}

bool onnx_convert_optional_get(OnnxCx *cx) {
  FeVal *o = cx->in[0];
  if (!is_adt(o->ty, "Option")) return set_out(cx, o);
  Var *x = var_new(cx->a, "x", NULL, no_span);
  Pattern *pv = ARENA_NEW(cx->a, Pattern);
  pv->kind = PAT_VAR, pv->span = no_span, pv->u.var = x;
  Expr *m = match_option(cx, o, pv, expr_var(cx->a, x, no_span), NULL);
  return m && set_out(cx, fe_bind(cx, NULL, m, elem_of(o->ty)));
}

/* ───────────────────────── If ───────────────────────── */

static const Onnx__GraphProto *graph_attr(OnnxCx *cx, const char *name) {
  const Onnx__AttributeProto *at = oa_get(cx, name);
  if (!at || !at->g) return fe_fail(cx, "its graph attribute '%s' is missing", name), NULL;
  return at->g;
}

/* One branch converted in a chain of its own (left in *c); its outputs. */
static FeVal **branch(OnnxCx *cx, const Onnx__GraphProto *g, Chain *c) {
  chain_swap(cx, c);
  bool ok = (int)g->n_output == cx->nout ||
            fe_fail(cx, "a branch has %zu outputs, the node %d", g->n_output, cx->nout);
  ok = ok && onnx_subgraph(cx, g, 0, NULL);
  FeVal **outs = ARENA_ARRAY(cx->a, FeVal *, cx->nout ? cx->nout : 1);
  for (int i = 0; ok && i < cx->nout; i++) outs[i] = onnx_subgraph_output(cx, g, i);
  chain_swap(cx, c);
  return ok ? outs : NULL;
}

/* The branch's chain around its outputs as types tys. */
static Expr *branch_expr(OnnxCx *cx, Chain *c, FeVal **outs, Type **tys) {
  Chain outer = {0};
  chain_swap(cx, &outer);
  chain_swap(cx, c);
  Expr **fields = ARENA_ARRAY(cx->a, Expr *, cx->nout ? cx->nout : 1);
  for (int i = 0; i < cx->nout; i++) fields[i] = as_type(cx, outs[i], tys[i])->expr;
  Expr *e =
      chain_wrap(cx, cx->nout == 1 ? fields[0] : expr_tuple(cx->a, cx->nout, fields, no_span));
  chain_swap(cx, &outer);
  return e;
}

bool onnx_convert_if(OnnxCx *cx) {
  const Onnx__GraphProto *gt = graph_attr(cx, "then_branch"), *ge = graph_attr(cx, "else_branch");
  FeVal *c = gt && ge ? scalar_of(cx, cx->in[0], "the condition") : NULL;
  if (!c) return false;
  if (c->value) { /* known at import time: its branch alone */
    const Onnx__GraphProto *g = tensor_get_f64(c->value, 0) != 0 ? gt : ge;
    if (!onnx_subgraph(cx, g, 0, NULL)) return false;
    for (int i = 0; i < cx->nout && i < (int)g->n_output; i++)
      cx->out[i] = onnx_subgraph_output(cx, g, i);
    return true;
  }
  Chain ct = {0}, ce = {0};
  FeVal **ot = branch(cx, gt, &ct), **oe = ot ? branch(cx, ge, &ce) : NULL;
  if (!oe) return chains_drop(&ct, &ce);
  Type **tys = ARENA_ARRAY(cx->a, Type *, cx->nout ? cx->nout : 1);
  for (int i = 0; i < cx->nout; i++)
    if (!(tys[i] = need_join(cx, ot[i]->ty, oe[i]->ty, "the branches' outputs")))
      return chains_drop(&ct, &ce);
  Expr *te = branch_expr(cx, &ct, ot, tys), *ee = branch_expr(cx, &ce, oe, tys);
  Type *ty = cx->nout == 1 ? tys[0] : type_tuple(cx->a, cx->nout, tys, no_span);
  FeVal *r = fe_bind(cx, NULL, expr_if(cx->a, c->expr, te, ee, no_span), ty);
  for (int i = 0; i < cx->nout; i++) cx->out[i] = cx->nout == 1 ? r : fe_get(cx, r, i);
  return true;
}

/* ───────────────────────── loops ───────────────────────── */

typedef enum RecKind { REC_LOOP, REC_SCAN, REC_MAP } RecKind;

/* A loop over a body graph, as Loop, Scan and SequenceMap describe it. */
typedef struct Rec {
  RecKind kind;
  const Onnx__GraphProto *g;
  FeVal *bound;           /* the loop runs while %i < bound (int64), or NULL */
  FeVal *cond0;           /* Loop: the first condition, or NULL (none) */
  int ns;                 /* loop-carried values */
  Type **sty;             /* their types (joined until the body agrees) */
  FeVal **s0;             /* their first values */
  int nx;                 /* Scan: inputs sliced at each step; SequenceMap: inputs */
  FeVal **xs;             /* (a sequence's element is taken at each step) */
  int64_t *xaxis, *oaxis; /* Scan: the axes of the inputs and outputs */
  bool *xrev, *orev;      /* Scan: reversed directions */
  int nacc;               /* outputs stacked from every step */
  Var *i, *c, **s, **acc; /* the function's parameters */
  Type **accty;           /* the stacked outputs' types */
  bool *listed;           /* a stacked output kept as a List (reversed) */
  FeVal **out;            /* the body's outputs */
  int ofs;                /* the body's first state output (Loop: 1) */
} Rec;

/* Scan's input j at step %i (from the end when reversed). */
static FeVal *scan_elem(OnnxCx *cx, Rec *r, int j, FeVal *i) {
  FeVal *idx = i;
  if (r->xrev[j])
    idx = op2(cx, "subtract", op2(cx, "subtract", r->bound, fe_scalar(cx, DT_INT64, 1)), i);
  return with_axis(cx, "take", r->xaxis[j], 2, (FeVal *[]){r->xs[j], idx});
}

/* The body's inputs at step %i (in the chain being built). */
static FeVal **body_inputs(OnnxCx *cx, Rec *r, int *n) {
  FeVal **in = ARENA_ARRAY(cx->a, FeVal *, r->ns + r->nx + 2), *i = param_val(cx, r->i);
  int k = 0;
  if (r->kind == REC_LOOP) in[k++] = i, in[k++] = param_val(cx, r->c);
  for (int j = 0; j < r->ns; j++) in[k++] = param_val(cx, r->s[j]);
  for (int j = 0; j < r->nx; j++) {
    FeVal *x = r->xs[j];
    if (r->kind == REC_SCAN)
      x = scan_elem(cx, r, j, i);
    else if (is_adt(x->ty, "List"))
      x = call(cx, "nth", 2, (Expr *[]){x->expr, fe_cast(cx, i, DT_INT32)->expr}, elem_of(x->ty));
    in[k++] = x;
  }
  *n = k;
  return in;
}

/* A loop-carried optional stays one (and a value does not become one):
 * the loop's state keeps one type; false after an error. */
static bool option_kept(OnnxCx *cx, int j, const Type *before, const Type *after) {
  if (unknown(before) || unknown(after) || is_adt(before, "Option") == is_adt(after, "Option"))
    return true;
  char *sa = print_type(before), *sb = print_type(after);
  fe_fail(cx,
          "loop-carried value %d is %s at the start and %s after a step: rly keeps one type "
          "for it, and an optional does not turn into its value",
          j, sa, sb);
  free(sa), free(sb);
  return false;
}

/* One conversion of the body with the current state types, in the chain
 * (the caller's is in *outer); whether the states' types agree. */
static bool body_round(OnnxCx *cx, Rec *r, bool *stable) {
  r->i = var_new(cx->a, "i", type_scalar(cx->a, DT_INT64), no_span);
  r->c = var_new(cx->a, "cond", type_scalar(cx->a, DT_BOOL), no_span);
  r->s = ARENA_ARRAY(cx->a, Var *, r->ns + 1);
  for (int j = 0; j < r->ns; j++) r->s[j] = var_new(cx->a, "v", r->sty[j], no_span);
  int nin;
  FeVal **in = body_inputs(cx, r, &nin);
  if (cx->failed || !onnx_subgraph(cx, r->g, nin, in)) return false;
  r->out = ARENA_ARRAY(cx->a, FeVal *, r->g->n_output + 1);
  for (size_t k = 0; k < r->g->n_output; k++) r->out[k] = onnx_subgraph_output(cx, r->g, (int)k);
  *stable = true;
  for (int j = 0; j < r->ns; j++) {
    if (!option_kept(cx, j, r->sty[j], r->out[r->ofs + j]->ty)) return false;
    Type *t = need_join(cx, r->sty[j], r->out[r->ofs + j]->ty, "a loop-carried value");
    if (!t) return false;
    if (!same(t, r->sty[j])) *stable = false, r->sty[j] = t;
  }
  return true;
}

/* The stacked outputs' types: Tensor[(?, ...)], or a List of the steps'
 * outputs, newest first (SequenceMap's, and a tensor whose shape is not
 * static: it is stacked after the loop). */
static bool acc_types(OnnxCx *cx, Rec *r) {
  r->accty = ARENA_ARRAY(cx->a, Type *, r->nacc + 1);
  r->acc = ARENA_ARRAY(cx->a, Var *, r->nacc + 1);
  r->listed = ARENA_ARRAY(cx->a, bool, r->nacc + 1);
  for (int j = 0; j < r->nacc; j++) {
    FeVal *yv = r->out[r->ofs + r->ns + j];
    Type *y = yv->ty;
    int64_t shape[TENSOR_MAX_RANK];
    if (r->kind != REC_MAP && !fe_tensor_type(yv))
      return fe_fail(cx, "its scan output %d is not a tensor", j);
    int n = r->kind == REC_MAP ? 0 : y->u.tensor.ndim + 1, ax = (int)r->oaxis[j];
    if (r->kind != REC_MAP && (ax < 0 || ax >= n))
      return fe_fail(cx, "scan output axis %d is out of range", ax);
    r->listed[j] = r->kind == REC_MAP || !fe_static_shape(yv, shape);
    if (r->listed[j]) {
      r->accty[j] = adt1(cx, "List", y);
    } else {
      Dim *dims = ARENA_ARRAY(cx->a, Dim, n);
      for (int k = 0, m = 0; k < n; k++) dims[k] = k == ax ? dim_any() : y->u.tensor.dims[m++];
      r->accty[j] = type_tensor(cx->a, y->u.tensor.dtype, n, dims, no_span);
    }
    r->acc[j] = var_new(cx->a, "acc", r->accty[j], no_span);
  }
  return true;
}

/* The stacked output j with the step's y added. */
static FeVal *acc_add(OnnxCx *cx, Rec *r, int j, FeVal *y) {
  FeVal *acc = param_val(cx, r->acc[j]);
  if (r->listed[j]) return make(cx, "Cons", 2, (Expr *[]){y->expr, acc->expr}, acc->ty);
  int ax = (int)r->oaxis[j];
  FeVal *e = with_axis(cx, "expand_dims", ax, 1, &y);
  FeVal *pair[2] = {acc, e};
  if (r->orev[j]) pair[0] = e, pair[1] = acc;
  return e ? with_axis(cx, "concatenate", ax, 2, pair) : NULL;
}

/* The step's end: %loop(%i + 1, cond', states', stacked'). */
static Expr *recur(OnnxCx *cx, Rec *r, Var *loop) {
  int n = 0;
  Expr **args = ARENA_ARRAY(cx->a, Expr *, r->ns + r->nacc + 2);
  FeVal *i1 = op2(cx, "add", param_val(cx, r->i), fe_scalar(cx, DT_INT64, 1));
  if (!i1) return NULL;
  args[n++] = i1->expr;
  if (r->kind == REC_LOOP) {
    FeVal *c1 = scalar_of(cx, r->out[0], "the body's condition");
    if (!c1) return NULL;
    args[n++] = c1->expr;
  }
  for (int j = 0; j < r->ns; j++) args[n++] = as_type(cx, r->out[r->ofs + j], r->sty[j])->expr;
  for (int j = 0; j < r->nacc; j++) {
    FeVal *a = acc_add(cx, r, j, r->out[r->ofs + r->ns + j]);
    if (!a) return NULL;
    args[n++] = a->expr;
  }
  return expr_call(cx->a, expr_var(cx->a, loop, no_span), n, args, NULL, no_span);
}

/* if (go) { step } else { (states, stacked) }, go from %i and %cond. */
static Expr *loop_body(OnnxCx *cx, Rec *r, Expr *step) {
  FeVal *go = r->bound ? op2(cx, "less", param_val(cx, r->i), r->bound) : NULL;
  if (r->cond0) go = go ? op2(cx, "logical_and", param_val(cx, r->c), go) : param_val(cx, r->c);
  Expr **fields = ARENA_ARRAY(cx->a, Expr *, r->ns + r->nacc + 1);
  for (int j = 0; j < r->ns; j++) fields[j] = expr_var(cx->a, r->s[j], no_span);
  for (int j = 0; j < r->nacc; j++) fields[r->ns + j] = expr_var(cx->a, r->acc[j], no_span);
  Expr *done = expr_tuple(cx->a, r->ns + r->nacc, fields, no_span);
  if (!go) return NULL;
  return chain_wrap(cx, expr_if(cx->a, go->expr, step, done, no_span));
}

/* The loop's function: the body converted until its state types agree,
 * then wrapped; NULL after an error. */
static Function *loop_fn(OnnxCx *cx, Rec *r, Var *loop) {
  Chain outer = {0};
  bool stable = false, ok = true;
  for (int round = 0; ok && !stable; round++) {
    chain_swap(cx, &outer);
    ok = body_round(cx, r, &stable);
    if (!ok || !stable) vec_free(&cx->let_vars), vec_free(&cx->let_vals), chain_swap(cx, &outer);
    if (ok && !stable && round + 1 == JOIN_ROUNDS)
      ok = fe_fail(cx, "the types of its loop-carried values do not settle");
  }
  if (!ok) return NULL;
  Expr *step = acc_types(cx, r) ? recur(cx, r, loop) : NULL;
  Expr *then = chain_wrap(cx, step ? step : expr_tuple(cx->a, 0, NULL, no_span));
  Expr *body = step ? loop_body(cx, r, then) : NULL;
  if (!body) vec_free(&cx->let_vars), vec_free(&cx->let_vals);
  chain_swap(cx, &outer);
  if (!body) return NULL;
  int np = 0;
  Function *fn = ARENA_NEW(cx->a, Function);
  fn->params = ARENA_ARRAY(cx->a, Var *, r->ns + r->nacc + 2);
  fn->params[np++] = r->i;
  if (r->kind == REC_LOOP) fn->params[np++] = r->c;
  for (int j = 0; j < r->ns; j++) fn->params[np++] = r->s[j];
  for (int j = 0; j < r->nacc; j++) fn->params[np++] = r->acc[j];
  Type **tys = ARENA_ARRAY(cx->a, Type *, r->ns + r->nacc + 1);
  for (int j = 0; j < r->ns; j++) tys[j] = r->sty[j];
  for (int j = 0; j < r->nacc; j++) tys[r->ns + j] = r->accty[j];
  fn->nparams = np, fn->body = body;
  fn->ret = type_tuple(cx->a, r->ns + r->nacc, tys, no_span);
  return fn;
}

/* The stacked output j before the first step. */
static FeVal *acc_init(OnnxCx *cx, Rec *r, int j) {
  Type *t = r->accty[j];
  if (r->listed[j]) return make(cx, "Nil", 0, NULL, t);
  int n = t->u.tensor.ndim;
  int64_t shape[TENSOR_MAX_RANK + 1];
  for (int k = 0; k < n; k++) {
    Dim d = t->u.tensor.dims[k];
    if (k != r->oaxis[j] && d.kind != DIM_CONST)
      return FE_FAIL_NULL(cx, "its scan output %d must have a static shape", j);
    shape[k] = k == r->oaxis[j] ? 0 : d.value;
  }
  AttrB b = ab_new(cx);
  ab_ints(&b, "shape", n, shape), ab_str(&b, "dtype", dtype_name(t->u.tensor.dtype));
  return fe_op(cx, "zeros", 0, NULL, ab_done(&b));
}

/* Builds the loop, calls it from the start and sets the node's outputs:
 * the final states, then the stacked outputs. */
static bool run_rec(OnnxCx *cx, Rec *r) {
  Var *loop = var_new(cx->a, arena_printf(cx->a, "loop%d", cx->node_index), NULL, no_span);
  Function *fn = loop_fn(cx, r, loop);
  if (!fn) return false;
  FeVal *lv = fe_bind(cx, loop, expr_fn(cx->a, fn, no_span), NULL);
  Expr **args = ARENA_ARRAY(cx->a, Expr *, fn->nparams);
  int n = 0;
  args[n++] = fe_scalar(cx, DT_INT64, 0)->expr;
  if (r->kind == REC_LOOP) args[n++] = (r->cond0 ? r->cond0 : fe_scalar(cx, DT_BOOL, 1))->expr;
  for (int j = 0; j < r->ns; j++) args[n++] = as_type(cx, r->s0[j], r->sty[j])->expr;
  for (int j = 0; j < r->nacc; j++) {
    FeVal *a = acc_init(cx, r, j);
    if (!a) return false;
    args[n++] = a->expr;
  }
  FeVal *res = fe_bind(cx, NULL, expr_call(cx->a, lv->expr, n, args, NULL, no_span), fn->ret);
  for (int k = 0; k < r->ns + r->nacc && k < cx->nout; k++) {
    cx->out[k] = fe_get(cx, res, k);
    int j = k - r->ns;
    if (j < 0 || !r->listed[j]) continue;
    if (!r->orev[j]) cx->out[k] = call(cx, "rev", 1, &cx->out[k]->expr, r->accty[j]);
    if (cx->out[k] && r->kind != REC_MAP)
      cx->out[k] = seq_concat(cx, cx->out[k], r->oaxis[j], true);
    if (!cx->out[k]) return false;
  }
  return !cx->failed;
}

bool onnx_convert_loop(OnnxCx *cx) {
  Rec r = {.kind = REC_LOOP, .ofs = 1};
  if (!(r.g = graph_attr(cx, "body"))) return false;
  r.ns = cx->nin > 2 ? cx->nin - 2 : 0; /* M and cond may be omitted ("") */
  r.nacc = (int)r.g->n_output - 1 - r.ns;
  if (r.nacc < 0 || cx->nout > r.ns + r.nacc)
    return fe_fail(cx, "its body has %zu outputs for %d loop-carried values", r.g->n_output, r.ns);
  FeVal *m = cx->nin > 0 ? cx->in[0] : NULL, *c = cx->nin > 1 ? cx->in[1] : NULL;
  if (m && !(r.bound = scalar_of(cx, fe_cast(cx, m, DT_INT64), "M"))) return false;
  if (c && !(r.cond0 = scalar_of(cx, c, "cond"))) return false;
  if (!r.bound && !r.cond0) return fe_fail(cx, "a loop without a trip count or a condition");
  r.sty = ARENA_ARRAY(cx->a, Type *, r.ns + 1), r.s0 = cx->in + 2;
  for (int j = 0; j < r.ns; j++) r.sty[j] = cx->in[2 + j]->ty;
  r.oaxis = ARENA_ARRAY(cx->a, int64_t, r.nacc + 1), r.orev = ARENA_ARRAY(cx->a, bool, r.nacc + 1);
  return run_rec(cx, &r);
}

/* Scan's axes and directions of one kind (absent: 0), checked. */
static bool scan_attr(OnnxCx *cx, const char *name, int n, int64_t *out, FeVal **ranks_of) {
  int64_t v[64] = {0};
  int k = oa_ints(cx, name, v, 64);
  if (k >= 0 && k != n) return fe_fail(cx, "attribute '%s' has %d values for %d", name, k, n);
  for (int j = 0; j < n; j++) {
    out[j] = v[j];
    if (ranks_of && out[j] < 0) out[j] += fe_rank(ranks_of[j]);
  }
  return !cx->failed;
}

/* Scan's loop-carried values and scan inputs (in[0..nin)) with the
 * body's outputs: the counts and the arrays of the directions and axes
 * (left at 0: the caller reads them); false after an error. */
static bool scan_counts(OnnxCx *cx, Rec *r, FeVal **in, int nin) {
  *r = (Rec){.kind = REC_SCAN};
  if (!(r->g = graph_attr(cx, "body"))) return false;
  r->nx = (int)oa_int(cx, "num_scan_inputs", 0);
  r->ns = nin - r->nx;
  r->nacc = (int)r->g->n_output - r->ns;
  if (r->nx < 1 || r->ns < 0 || r->nacc < 0)
    return fe_fail(cx, "num_scan_inputs %d does not fit", r->nx);
  r->xs = in + r->ns, r->s0 = in;
  r->sty = ARENA_ARRAY(cx->a, Type *, r->ns + 1);
  for (int j = 0; j < r->ns; j++) r->sty[j] = in[j]->ty;
  r->xaxis = ARENA_ARRAY(cx->a, int64_t, r->nx),
  r->oaxis = ARENA_ARRAY(cx->a, int64_t, r->nacc + 1);
  r->xrev = ARENA_ARRAY(cx->a, bool, r->nx), r->orev = ARENA_ARRAY(cx->a, bool, r->nacc + 1);
  return true;
}

/* The scan length (the first scan input's axis) as the loop's bound, and
 * the loop run; false after an error. */
static bool scan_run(OnnxCx *cx, Rec *r) {
  if (r->xaxis[0] < 0 || r->xaxis[0] >= fe_rank(r->xs[0]))
    return fe_fail(cx, "scan input axis out of range");
  Dim t = fe_dim(r->xs[0], (int)r->xaxis[0]);
  if (t.kind != DIM_CONST) return fe_fail(cx, "the scan axis must have a static length");
  r->bound = fe_scalar(cx, DT_INT64, (double)t.value);
  return run_rec(cx, r);
}

bool onnx_convert_scan(OnnxCx *cx) {
  Rec r;
  if (!scan_counts(cx, &r, cx->in, cx->nin)) return false;
  int64_t *xd = ARENA_ARRAY(cx->a, int64_t, r.nx), *od = ARENA_ARRAY(cx->a, int64_t, r.nacc + 1);
  if (!scan_attr(cx, "scan_input_axes", r.nx, r.xaxis, r.xs) ||
      !scan_attr(cx, "scan_input_directions", r.nx, xd, NULL) ||
      !scan_attr(cx, "scan_output_axes", r.nacc, r.oaxis, NULL) ||
      !scan_attr(cx, "scan_output_directions", r.nacc, od, NULL))
    return false;
  for (int j = 0; j < r.nx; j++) r.xrev[j] = xd[j] != 0;
  for (int j = 0; j < r.nacc; j++) r.orev[j] = od[j] != 0;
  return scan_run(cx, &r);
}

/* ── Scan at opset 8: a batch axis first ── */

enum { SCAN8_MAX_BATCH = 64 }; /* the body is converted once per batch element */

/* The batch size: every input's static first dim, the same; -1 after an error. */
static int64_t scan8_batch(OnnxCx *cx, FeVal **in, int nin) {
  int64_t b = -1;
  for (int j = 0; j < nin; j++) {
    Dim d = in[j] && fe_tensor_type(in[j]) && fe_rank(in[j]) ? fe_dim(in[j], 0) : dim_any();
    if (d.kind != DIM_CONST) return fe_fail(cx, "input %d needs a static batch axis", j + 1), -1;
    if (b >= 0 && d.value != b)
      return fe_fail(cx, "the inputs' batch sizes differ (%lld and %lld)", (long long)b,
                     (long long)d.value),
             -1;
    b = d.value;
  }
  if (b < 1) return fe_fail(cx, "an empty batch"), -1;
  if (b > SCAN8_MAX_BATCH)
    return fe_fail(cx, "a batch of %lld (at most %d)", (long long)b, SCAN8_MAX_BATCH), -1;
  return b;
}

/* sequence_lens, when given, must be the full scan length t (shorter
 * sequences are refused); false after an error. */
static bool scan8_lens(OnnxCx *cx, int64_t batch, int64_t t) {
  if (!cx->in[0]) return true;
  int64_t *lens = ARENA_ARRAY(cx->a, int64_t, batch + 1);
  int n = fe_need_ints(cx, cx->in[0], "input 'sequence_lens'", lens, (int)batch);
  if (n < 0) return false;
  for (int b = 0; b < n; b++)
    if (lens[b] != t)
      return fe_fail(cx, "sequence_lens %lld of batch %d: only the full length %lld is supported",
                     (long long)lens[b], b, (long long)t);
  return true;
}

/* The scan of batch element b: the inputs' slices, run as a Scan of
 * opset 9 with axes 0; its outputs into outs. */
static bool scan8_one(OnnxCx *cx, FeVal **in, int nin, int64_t b, FeVal **outs) {
  FeVal **sl = ARENA_ARRAY(cx->a, FeVal *, nin), *idx = fe_scalar(cx, DT_INT64, (double)b);
  for (int j = 0; j < nin; j++)
    if (!(sl[j] = with_axis(cx, "take", 0, 2, (FeVal *[]){in[j], idx}))) return false;
  Rec r;
  if (!scan_counts(cx, &r, sl, nin)) return false;
  int64_t *dirs = ARENA_ARRAY(cx->a, int64_t, r.nx);
  if (!scan_attr(cx, "directions", r.nx, dirs, NULL)) return false;
  for (int j = 0; j < r.nx; j++) r.xrev[j] = dirs[j] != 0;
  FeVal **node_out = cx->out;
  cx->out = outs;
  bool ok = scan_run(cx, &r);
  cx->out = node_out;
  return ok;
}

/* Scan (opset 8): inputs sequence_lens (optional), the loop-carried
 * values and the scan inputs, all with a batch axis first and the scan
 * axis second; the body runs on each batch element alone (as opset 9's
 * Scan), and the outputs are stacked on a new batch axis. */
bool onnx_convert_scan8(OnnxCx *cx) {
  FeVal **in = cx->in + 1;
  int nin = cx->nin - 1, nx = (int)oa_int(cx, "num_scan_inputs", 0);
  if (nin < 1) return fe_fail(cx, "it has no inputs besides sequence_lens");
  int64_t batch = scan8_batch(cx, in, nin);
  if (batch < 0) return false;
  if (nx < 1 || nx > nin) return fe_fail(cx, "num_scan_inputs %d does not fit", nx);
  Dim t = fe_rank(in[nin - nx]) > 1 ? fe_dim(in[nin - nx], 1) : dim_any();
  if (t.kind != DIM_CONST) return fe_fail(cx, "the scan axis must have a static length");
  if (!scan8_lens(cx, batch, t.value)) return false;
  FeVal ***outs = ARENA_ARRAY(cx->a, FeVal **, batch + 1);
  for (int64_t b = 0; b < batch; b++) {
    outs[b] = ARENA_ARRAY(cx->a, FeVal *, cx->nout + 1);
    if (!scan8_one(cx, in, nin, b, outs[b])) return false;
  }
  for (int k = 0; k < cx->nout; k++) {
    FeVal **parts = ARENA_ARRAY(cx->a, FeVal *, batch + 1);
    for (int64_t b = 0; b < batch; b++)
      if (!outs[b][k] || !(parts[b] = with_axis(cx, "expand_dims", 0, 1, &outs[b][k])))
        return fe_fail(cx, "output %d is not produced", k);
    cx->out[k] = batch == 1 ? parts[0] : with_axis(cx, "concatenate", 0, (int)batch, parts);
    if (!cx->out[k]) return false;
  }
  return true;
}

/* SequenceMap: the body on the elements at each position of the input
 * sequences (tensor inputs are passed whole to every step). */
bool onnx_convert_seq_map(OnnxCx *cx) {
  Rec r = {.kind = REC_MAP};
  if (!(r.g = graph_attr(cx, "body"))) return false;
  FeVal *seq = need_seq(cx, 0), *len = seq ? length32(cx, seq) : NULL;
  if (!len) return false;
  for (int j = 0; j < cx->nin; j++)
    if (is_adt(cx->in[j]->ty, "List") && unknown(elem_of(cx->in[j]->ty)))
      return fe_fail(cx, "input %d is an empty sequence (its elements' type is not known)", j);
  r.bound = fe_cast(cx, len, DT_INT64);
  r.nx = cx->nin, r.xs = cx->in, r.nacc = (int)r.g->n_output;
  r.oaxis = ARENA_ARRAY(cx->a, int64_t, r.nacc + 1), r.orev = ARENA_ARRAY(cx->a, bool, r.nacc + 1);
  return run_rec(cx, &r);
}
