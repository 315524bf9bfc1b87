/* onnx_export.c — one Relay function written as an ONNX model (onnx.h's
 * onnx_export): a ModelProto built with protobuf-c's generated structs
 * (all in one arena) and packed into the file.
 *
 * The function's parameters become the graph's inputs (their dtypes and
 * shapes; a named dim or `?` a dim_param), its constants (bound weights)
 * initializers, its op calls nodes, and its result (a tensor, or a tuple
 * of tensors) the outputs `output` / `output_0`, `output_1`, ... (each an
 * Identity of its value, so an output never doubles as an input).  Let
 * chains are walked iteratively; tuples and projections only regroup the
 * names of values.  Local functions, such as FuseOps' Primitive groups,
 * are inlined where they are called.
 *
 * The table below is the single source of truth of what is exported: one
 * row per Relay op, giving its ONNX op type, the ai.onnx opset since which
 * the form written exists, and the translator that writes the node(s) and
 * their attributes (a Relay attribute that ONNX takes as an input, such as
 * Clip's bounds or ReduceSum's axes, becomes an initializer).  The model's
 * opset is the largest `since` of the rows used, and at least 13 (the first
 * with Softmax over one axis and Squeeze/Unsqueeze/ReduceSum axes as
 * inputs); every form written is still valid up to opset 17 (ReduceMean's
 * axes became an input at 18).
 *
 * What ONNX cannot express is refused, naming the construct and where it
 * is: references, ADT values and match, closures, calls of other global
 * functions (and so recursion), an op without a row, a layout other than
 * NCHW.  Nothing is written then. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"
#include "frontend/onnx_int.h"
#include "ops/ops.h"

enum { EXPORT_MIN_OPSET = 13, EXPORT_IR_VERSION = 8, EXPORT_MAX_RANK = 8 };

/* The names of a value: one for a tensor, one per field of a tuple. */
typedef struct ExVal {
  int n;
  const char **names;
} ExVal;

/* A growable array of pointers in the arena. */
typedef struct NameVec {
  size_t n, cap;
  void **items;
} NameVec;

typedef struct Ex {
  Arena *a;
  DiagCtx *d;
  NameVec nodes, inits, inputs;
  PtrMap vals;  /* Var* or Expr* → ExVal* (the scope of the function being written) */
  PtrMap fns;   /* Var* → Function*: local functions, inlined where called */
  StrMap taken; /* the graph inputs' names, which fresh names avoid */
  int next;     /* the next fresh name's number */
  int opset;
  bool failed;
} Ex;

typedef struct ExportRow ExportRow;
/* Writes the nodes of call (its arguments' names in in, tuples flattened);
 * the result's names, or NULL after a diagnostic. */
typedef ExVal *(*ExportFn)(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r);

struct ExportRow {
  const char *relay; /* first: OpsRuleTable keys rows by it */
  const char *onnx;
  int since;
  ExportFn fn;
  int arg; /* the translator's own: see each */
};

static void push(Ex *x, NameVec *v, void *p) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 16;
    void **items = arena_alloc(x->a, cap * sizeof *items);
    if (v->n) memcpy(items, v->items, v->n * sizeof *items);
    v->items = items, v->cap = cap;
  }
  v->items[v->n++] = p;
}

static ExVal *val1(Ex *x, const char *name) {
  ExVal *v = arena_alloc(x->a, sizeof *v);
  v->n = 1;
  v->names = arena_alloc(x->a, sizeof *v->names);
  v->names[0] = name;
  return v;
}

/* A name not given yet in the graph: prefix and a number. */
static const char *fresh(Ex *x, const char *prefix) {
  const char *s;
  do s = arena_printf(x->a, "%s%d", prefix, x->next++);
  while (strmap_get(&x->taken, s));
  return s;
}

static ExVal *refuse(Ex *x, Span sp, const char *fmt, const char *what) {
  if (!x->failed) diag_error(x->d, sp, fmt, what);
  x->failed = true;
  return NULL;
}

/* ───────────────────────── protobuf builders ───────────────────────── */

static int32_t onnx_type_of(DType dt) {
  for (int32_t code = 1; code <= 13; code++)
    if (onnx_dtype(code, NULL) == dt) return code;
  return 0;
}

static Onnx__NodeProto *node(Ex *x, const char *op, int nin, const char *const *in,
                             const char *out) {
  Onnx__NodeProto *n = arena_alloc(x->a, sizeof *n);
  *n = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
  n->op_type = (char *)op;
  n->name = (char *)fresh(x, "n");
  n->domain = (char *)"";
  n->n_input = (size_t)nin;
  n->input = arena_memdup(x->a, in, (size_t)(nin ? nin : 1) * sizeof *in);
  n->n_output = 1;
  n->output = arena_alloc(x->a, sizeof *n->output);
  n->output[0] = (char *)out;
  push(x, &x->nodes, n);
  return n;
}

static Onnx__AttributeProto *attr_new(Ex *x, Onnx__NodeProto *n, const char *name,
                                      Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *at = arena_alloc(x->a, sizeof *at);
  *at = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  at->name = (char *)name;
  at->has_type = true, at->type = type;
  Onnx__AttributeProto **as = arena_alloc(x->a, (n->n_attribute + 1) * sizeof *as);
  if (n->n_attribute) memcpy(as, n->attribute, n->n_attribute * sizeof *as);
  as[n->n_attribute++] = at;
  n->attribute = as;
  return at;
}

static void set_int(Ex *x, Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *at = attr_new(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  at->has_i = true, at->i = v;
}

static void set_float(Ex *x, Onnx__NodeProto *n, const char *name, double v) {
  Onnx__AttributeProto *at = attr_new(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  at->has_f = true, at->f = (float)v;
}

static void set_ints(Ex *x, Onnx__NodeProto *n, const char *name, int k, const int64_t *v) {
  Onnx__AttributeProto *at = attr_new(x, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  at->n_ints = (size_t)k;
  at->ints = arena_memdup(x->a, v, (size_t)(k ? k : 1) * sizeof *v);
}

/* An initializer holding t's data, under a fresh name. */
static const char *initializer(Ex *x, const Tensor *t) {
  Onnx__TensorProto *p = arena_alloc(x->a, sizeof *p);
  *p = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->name = (char *)fresh(x, "c");
  p->has_data_type = true, p->data_type = onnx_type_of(t->dtype);
  p->n_dims = (size_t)t->ndim;
  p->dims = arena_memdup(x->a, t->shape, (size_t)(t->ndim ? t->ndim : 1) * sizeof *t->shape);
  p->has_raw_data = true;
  p->raw_data.len = tensor_nbytes(t);
  p->raw_data.data = t->data;
  push(x, &x->inits, p);
  return p->name;
}

static const char *const_i64s(Ex *x, int k, const int64_t *v) {
  int64_t shape[1] = {k};
  Tensor *t = tensor_new(x->a, DT_INT64, 1, shape);
  if (k) memcpy(t->data, v, (size_t)k * sizeof *v);
  return initializer(x, t);
}

/* A scalar of dtype dt (a float or integer dtype) holding v; NULL for
 * another dtype. */
static const char *const_scalar(Ex *x, DType dt, double v) {
  Tensor *c = tensor_new(x->a, dt, 0, NULL);
  if (dt == DT_FLOAT32)
    *(float *)c->data = (float)v;
  else if (dt == DT_FLOAT64)
    *(double *)c->data = v;
  else if (dt == DT_FLOAT16)
    *(uint16_t *)c->data = double_to_half(v);
  else if (dt == DT_INT64)
    *(int64_t *)c->data = (int64_t)v;
  else if (dt == DT_INT32)
    *(int32_t *)c->data = (int32_t)v;
  else
    return NULL;
  return initializer(x, c);
}

/* A value info: name, and t's dtype and dims (a named dim its name, `?` a
 * fresh dim_param); NULL when t is not a tensor type of a known dtype. */
static Onnx__ValueInfoProto *value_info(Ex *x, const char *name, const Type *t) {
  if (!t || t->kind != TY_TENSOR || !onnx_type_of(t->u.tensor.dtype)) return NULL;
  Onnx__TensorShapeProto *sh = arena_alloc(x->a, sizeof *sh);
  *sh = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
  sh->n_dim = (size_t)t->u.tensor.ndim;
  sh->dim = arena_alloc(x->a, (sh->n_dim + 1) * sizeof *sh->dim);
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    Onnx__TensorShapeProto__Dimension *dm = arena_alloc(x->a, sizeof *dm);
    *dm = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    const Dim *di = &t->u.tensor.dims[i];
    if (di->kind == DIM_CONST) {
      dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dm->dim_value = di->value;
    } else {
      dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dm->dim_param = di->kind == DIM_VAR ? (char *)di->name : (char *)fresh(x, "unk__");
    }
    sh->dim[i] = dm;
  }
  Onnx__TypeProto__Tensor *tt = arena_alloc(x->a, sizeof *tt);
  *tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  tt->has_elem_type = true, tt->elem_type = onnx_type_of(t->u.tensor.dtype), tt->shape = sh;
  Onnx__TypeProto *tp = arena_alloc(x->a, sizeof *tp);
  *tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, tp->tensor_type = tt;
  Onnx__ValueInfoProto *vi = arena_alloc(x->a, sizeof *vi);
  *vi = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
  vi->name = (char *)name, vi->type = tp;
  return vi;
}

/* ───────────────────────── translators ───────────────────────── */

static int rank_of(const Type *t) { return t && t->kind == TY_TENSOR ? t->u.tensor.ndim : -1; }

static DType dtype_of(const Type *t) {
  return t && t->kind == TY_TENSOR ? t->u.tensor.dtype : DT_INVALID;
}

static bool nchw(Ex *x, const Expr *call, const char *key) {
  const char *l = op_attr_str(x->a, call, key);
  if (!*l || strcmp(l, "NCHW") == 0 || strcmp(l, "OIHW") == 0) return true;
  refuse(x, call->span, "ONNX export: layout %s is not exported (only NCHW data and OIHW weights)",
         l);
  return false;
}

/* Ops whose inputs and attributes are ONNX's as they are. */
static ExVal *ex_same(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)call;
  const char *out = fresh(x, "t");
  node(x, r->onnx, nin, in, out);
  return val1(x, out);
}

/* Relay's 1, 2 or 4 paddings as ONNX's [top, left, bottom, right]. */
static bool pads4(const Expr *call, int64_t *p) {
  int n = op_attr_ints(call, "padding", p, 4);
  if (n == 1)
    p[1] = p[2] = p[3] = p[0];
  else if (n == 2)
    p[2] = p[0], p[3] = p[1];
  return n == 1 || n == 2 || n == 4;
}

/* strides, dilations and pads of a 2-D window op (arg: 1 writes dilations). */
static bool window_attrs(Ex *x, const Expr *call, Onnx__NodeProto *n, bool dilations) {
  int64_t s[2], dl[2], p[4];
  if (op_attr_ints(call, "strides", s, 2) != 2 || op_attr_ints(call, "dilation", dl, 2) != 2 ||
      !pads4(call, p)) {
    refuse(x, call->span, "ONNX export: %s needs two strides, two dilations and 1, 2 or 4 paddings",
           "a 2-D window op");
    return false;
  }
  set_ints(x, n, "strides", 2, s);
  set_ints(x, n, "pads", 4, p);
  if (dilations)
    set_ints(x, n, "dilations", 2, dl);
  else if (dl[0] != 1 || dl[1] != 1)
    return refuse(x, call->span, "ONNX export: %s with a dilation is not exported",
                  "nn.avg_pool2d"),
           false;
  return true;
}

/* ONNX's Conv and MatMul give their inputs' dtype: an out_dtype of
 * another is refused. */
static bool same_dtype(Ex *x, const Expr *call, const ExportRow *r) {
  if (dtype_of(call->ty) == dtype_of(call->u.call.args[0]->ty)) return true;
  refuse(x, call->span, "ONNX export: %s with an out_dtype other than its input's", r->relay);
  return false;
}

static ExVal *ex_conv(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  if (!nchw(x, call, "data_layout") || !nchw(x, call, "kernel_layout") || !same_dtype(x, call, r))
    return NULL;
  const char *out = fresh(x, "t");
  Onnx__NodeProto *n = node(x, r->onnx, nin, in, out);
  if (!window_attrs(x, call, n, true)) return NULL;
  set_int(x, n, "group", op_attr_int(call, "groups"));
  return val1(x, out);
}

/* Max (arg 0) and average (arg 1) pooling. */
static ExVal *ex_pool(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  if (!nchw(x, call, "layout")) return NULL;
  int64_t k[2];
  if (op_attr_ints(call, "pool_size", k, 2) != 2)
    return refuse(x, call->span, "ONNX export: %s needs a 2-D pool_size", r->relay);
  const char *out = fresh(x, "t");
  Onnx__NodeProto *n = node(x, r->onnx, nin, in, out);
  set_ints(x, n, "kernel_shape", 2, k);
  if (!window_attrs(x, call, n, r->arg == 0)) return NULL;
  set_int(x, n, "ceil_mode", op_attr_bool(call, "ceil_mode"));
  if (r->arg == 1) set_int(x, n, "count_include_pad", op_attr_bool(call, "count_include_pad"));
  return val1(x, out);
}

static ExVal *ex_global_pool(Ex *x, const Expr *call, const char **in, int nin,
                             const ExportRow *r) {
  return nchw(x, call, "layout") ? ex_same(x, call, in, nin, r) : NULL;
}

/* A Reshape of in to shape (k dims; 0 copies, -1 infers). */
static const char *reshape(Ex *x, const char *in, int k, const int64_t *shape) {
  const char *ins[2] = {in, const_i64s(x, k, shape)}, *out = fresh(x, "t");
  node(x, "Reshape", 2, ins, out);
  return out;
}

/* The bias reshaped to (C, 1, ..., 1) so that it broadcasts at axis. */
static ExVal *ex_bias_add(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  int nd = rank_of(call->ty);
  int64_t axis = op_attr_int(call, "axis"), shape[EXPORT_MAX_RANK] = {-1};
  if (axis < 0) axis += nd;
  if (nd < 1 || nd > EXPORT_MAX_RANK || axis < 0 || axis >= nd)
    return refuse(x, call->span, "ONNX export: %s's axis is out of range", r->relay);
  for (int i = 1; i < nd - axis; i++) shape[i] = 1;
  const char *ins[2] = {in[0], reshape(x, in[1], (int)(nd - axis), shape)}, *out = fresh(x, "t");
  node(x, r->onnx, 2, ins, out);
  return val1(x, out);
}

/* in transposed over its last two axes (rank nd). */
static const char *swap_last(Ex *x, const char *in, int nd) {
  int64_t perm[EXPORT_MAX_RANK];
  for (int i = 0; i < nd; i++) perm[i] = i;
  perm[nd - 1] = nd - 2, perm[nd - 2] = nd - 1;
  const char *out = fresh(x, "t");
  set_ints(x, node(x, "Transpose", 1, &in, out), "perm", nd, perm);
  return out;
}

/* nn.dense (arg 1: the weight is (N, K)), nn.matmul and nn.batch_matmul
 * (their transpose_a / transpose_b) as MatMul. */
static ExVal *ex_matmul(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  int na = rank_of(call->u.call.args[0]->ty), nb = rank_of(call->u.call.args[1]->ty);
  if (na < 2 || nb < 2 || na > EXPORT_MAX_RANK || nb > EXPORT_MAX_RANK)
    return refuse(x, call->span, "ONNX export: %s of operands of rank below 2", r->relay);
  if (!same_dtype(x, call, r)) return NULL;
  bool ta = r->arg == 0 && op_attr_bool(call, "transpose_a");
  bool tb = r->arg == 1 || op_attr_bool(call, "transpose_b");
  const char *ins[2] = {ta ? swap_last(x, in[0], na) : in[0], tb ? swap_last(x, in[1], nb) : in[1]};
  const char *out = fresh(x, "t");
  node(x, r->onnx, 2, ins, out);
  return val1(x, out);
}

static ExVal *ex_clip(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  DType dt = dtype_of(call->ty);
  const char *lo = const_scalar(x, dt, op_attr_float(call, "a_min"));
  const char *hi = const_scalar(x, dt, op_attr_float(call, "a_max"));
  if (!lo || !hi) return refuse(x, call->span, "ONNX export: clip of %s", dtype_name(dt));
  const char *ins[3] = {in[0], lo, hi}, *out = fresh(x, "t");
  node(x, r->onnx, 3, ins, out);
  return val1(x, out);
}

/* Softmax, LogSoftmax, Concat: the `axis` attribute as it is. */
static ExVal *ex_axis(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  const char *out = fresh(x, "t");
  set_int(x, node(x, r->onnx, nin, in, out), "axis", op_attr_int(call, "axis"));
  return val1(x, out);
}

static ExVal *ex_leaky_relu(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  const char *out = fresh(x, "t");
  set_float(x, node(x, r->onnx, nin, in, out), "alpha", op_attr_float(call, "alpha"));
  return val1(x, out);
}

/* Inference batch norm: y, and the moving statistics passed through. */
static ExVal *ex_batch_norm(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  if (op_attr_int(call, "axis") != 1 || !op_attr_bool(call, "center") ||
      !op_attr_bool(call, "scale"))
    return refuse(x, call->span, "ONNX export: %s needs axis=1, center and scale", r->relay);
  const char *out = fresh(x, "t");
  set_float(x, node(x, r->onnx, nin, in, out), "epsilon", op_attr_float(call, "epsilon"));
  ExVal *v = arena_alloc(x->a, sizeof *v);
  v->n = 3;
  v->names = arena_alloc(x->a, 3 * sizeof *v->names);
  v->names[0] = out, v->names[1] = in[3], v->names[2] = in[4];
  return v;
}

/* newshape as it is when it has only ONNX's special values (0 copies a
 * dim, -1 infers one), else the result's shape when it is static. */
static ExVal *ex_reshape(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin, (void)r;
  int64_t s[EXPORT_MAX_RANK];
  int k = op_attr_ints(call, "newshape", s, EXPORT_MAX_RANK);
  bool plain = k >= 0 && !op_attr_bool(call, "allowzero");
  for (int i = 0; i < k; i++) plain = plain && s[i] >= -1;
  int nd = rank_of(call->ty);
  for (int i = 0; !plain && i < nd; i++) {
    const Dim *d = &call->ty->u.tensor.dims[i];
    if (d->kind != DIM_CONST)
      return refuse(x, call->span,
                    "ONNX export: %s with -2, -3 or -4 to a shape known only at run time",
                    "reshape");
    s[i] = d->value;
  }
  return val1(x, reshape(x, in[0], plain ? k : nd, s));
}

static ExVal *ex_transpose(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  int64_t p[EXPORT_MAX_RANK];
  int k = op_attr_ints(call, "axes", p, EXPORT_MAX_RANK), nd = rank_of(call->ty);
  const char *out = fresh(x, "t");
  Onnx__NodeProto *n = node(x, r->onnx, nin, in, out);
  for (int i = 0; i < k; i++) p[i] = p[i] < 0 ? p[i] + nd : p[i];
  if (k >= 0) set_ints(x, n, "perm", k, p);
  return val1(x, out);
}

/* Squeeze (arg 0) and Unsqueeze (arg 1, from expand_dims) with their axes
 * as an input. */
static ExVal *ex_squeeze(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  int64_t ax[EXPORT_MAX_RANK];
  int k;
  if (r->arg == 1) {
    int nd = rank_of(call->ty);
    int64_t a = op_attr_int(call, "axis");
    a = a < 0 ? a + nd : a;
    k = (int)op_attr_int(call, "num_newaxis");
    for (int i = 0; i < k && i < EXPORT_MAX_RANK; i++) ax[i] = a + i;
  } else {
    k = op_attr_ints(call, "axis", ax, EXPORT_MAX_RANK);
  }
  if (k == 0) return val1(x, in[0]); /* no axis added or removed */
  const char *ins[2] = {in[0], k > 0 ? const_i64s(x, k, ax) : NULL}, *out = fresh(x, "t");
  node(x, r->onnx, k > 0 ? 2 : 1, ins, out);
  return val1(x, out);
}

/* The axes a reduction reduces (exclude: the others); -1 for all. */
static int reduce_axes(const Expr *call, int nd, int64_t *ax) {
  int64_t w[EXPORT_MAX_RANK];
  int k = op_attr_ints(call, "axis", w, EXPORT_MAX_RANK);
  if (k < 0) return -1;
  bool in[EXPORT_MAX_RANK] = {0};
  for (int i = 0; i < k; i++) in[w[i] < 0 ? w[i] + nd : w[i]] = true;
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (in[i] != op_attr_bool(call, "exclude")) ax[n++] = i;
  return n;
}

/* Reductions: arg 1 takes the axes as an input (ReduceSum since 13), 0 as
 * an attribute (the others until 18). */
static ExVal *ex_reduce(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  int64_t ax[EXPORT_MAX_RANK];
  int nd = rank_of(call->u.call.args[0]->ty), k = reduce_axes(call, nd, ax);
  if (k == 0) return val1(x, in[0]);
  const char *ins[2] = {in[0], r->arg == 1 && k > 0 ? const_i64s(x, k, ax) : NULL};
  const char *out = fresh(x, "t");
  Onnx__NodeProto *n = node(x, r->onnx, ins[1] ? 2 : 1, ins, out);
  set_int(x, n, "keepdims", op_attr_bool(call, "keepdims"));
  if (r->arg == 0 && k > 0) set_ints(x, n, "axes", k, ax);
  return val1(x, out);
}

/* ArgMax / ArgMin over one axis (int64 in ONNX), cast to the result's
 * dtype when that is not int64. */
static ExVal *ex_arg(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  int64_t ax[EXPORT_MAX_RANK];
  int nd = rank_of(call->u.call.args[0]->ty), k = reduce_axes(call, nd, ax);
  if (k != 1) return refuse(x, call->span, "ONNX export: %s over other than one axis", r->relay);
  const char *out = fresh(x, "t");
  Onnx__NodeProto *n = node(x, r->onnx, 1, in, out);
  set_int(x, n, "axis", ax[0]);
  set_int(x, n, "keepdims", op_attr_bool(call, "keepdims"));
  set_int(x, n, "select_last_index", op_attr_bool(call, "select_last_index"));
  DType dt = dtype_of(call->ty);
  if (dt == DT_INT64) return val1(x, out);
  const char *cast = fresh(x, "t");
  set_int(x, node(x, "Cast", 1, &out, cast), "to", onnx_type_of(dt));
  return val1(x, cast);
}

/* Split (the sizes as an input when the parts' sizes along the axis are
 * known, else equal parts): one output per part. */
static ExVal *ex_split(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  (void)nin;
  const Type *t = call->ty;
  int nd = rank_of(call->u.call.args[0]->ty);
  int64_t axis = op_attr_int(call, "axis");
  axis = axis < 0 ? axis + nd : axis;
  if (!t || t->kind != TY_TUPLE || axis < 0 || axis >= nd)
    return refuse(x, call->span, "ONNX export: %s of an unknown type", r->relay);
  ExVal *v = arena_alloc(x->a, sizeof *v);
  v->n = t->u.tuple.n;
  v->names = arena_alloc(x->a, (size_t)(v->n + 1) * sizeof *v->names);
  int64_t *sizes = arena_alloc(x->a, (size_t)(v->n + 1) * sizeof *sizes);
  bool known = true;
  for (int i = 0; i < v->n; i++) {
    const Type *f = t->u.tuple.fields[i];
    known = known && rank_of(f) == nd && f->u.tensor.dims[axis].kind == DIM_CONST;
    sizes[i] = known ? f->u.tensor.dims[axis].value : 0;
    v->names[i] = fresh(x, "t");
  }
  const char *ins[2] = {in[0], known ? const_i64s(x, v->n, sizes) : NULL};
  Onnx__NodeProto *n = node(x, r->onnx, known ? 2 : 1, ins, v->names[0]);
  n->n_output = (size_t)v->n, n->output = (char **)v->names;
  set_int(x, n, "axis", axis);
  return v;
}

static ExVal *ex_cast(Ex *x, const Expr *call, const char **in, int nin, const ExportRow *r) {
  int32_t to = onnx_type_of(dtype_of(call->ty));
  if (!to) return refuse(x, call->span, "ONNX export: cast to %s", dtype_name(dtype_of(call->ty)));
  const char *out = fresh(x, "t");
  set_int(x, node(x, r->onnx, nin, in, out), "to", to);
  return val1(x, out);
}

/* ───────────────────────── the table ───────────────────────── */

/* clang-format off */
static const ExportRow rows[] = {
    {"add", "Add", 7, ex_same, 0},
    {"subtract", "Sub", 7, ex_same, 0},
    {"multiply", "Mul", 7, ex_same, 0},
    {"divide", "Div", 7, ex_same, 0},
    {"power", "Pow", 7, ex_same, 0},
    {"maximum", "Max", 8, ex_same, 0},
    {"minimum", "Min", 8, ex_same, 0},
    {"nn.relu", "Relu", 6, ex_same, 0},
    {"sigmoid", "Sigmoid", 6, ex_same, 0},
    {"tanh", "Tanh", 6, ex_same, 0},
    {"exp", "Exp", 6, ex_same, 0},
    {"log", "Log", 6, ex_same, 0},
    {"sqrt", "Sqrt", 6, ex_same, 0},
    {"negative", "Neg", 6, ex_same, 0},
    {"abs", "Abs", 6, ex_same, 0},
    {"erf", "Erf", 13, ex_same, 0},
    {"copy", "Identity", 1, ex_same, 0},
    {"nn.leaky_relu", "LeakyRelu", 6, ex_leaky_relu, 0},
    {"clip", "Clip", 11, ex_clip, 0},
    {"nn.softmax", "Softmax", 13, ex_axis, 0},
    {"nn.log_softmax", "LogSoftmax", 13, ex_axis, 0},
    {"concatenate", "Concat", 4, ex_axis, 0},
    {"nn.conv2d", "Conv", 1, ex_conv, 0},
    {"nn.bias_add", "Add", 7, ex_bias_add, 0},
    {"nn.dense", "MatMul", 9, ex_matmul, 1},
    {"nn.matmul", "MatMul", 9, ex_matmul, 0},
    {"nn.batch_matmul", "MatMul", 9, ex_matmul, 0},
    {"nn.max_pool2d", "MaxPool", 10, ex_pool, 0},
    {"nn.avg_pool2d", "AveragePool", 10, ex_pool, 1},
    {"nn.global_avg_pool2d", "GlobalAveragePool", 1, ex_global_pool, 0},
    {"nn.global_max_pool2d", "GlobalMaxPool", 1, ex_global_pool, 0},
    {"nn.batch_norm", "BatchNormalization", 9, ex_batch_norm, 0},
    {"nn.batch_flatten", "Flatten", 9, ex_same, 0},
    {"reshape", "Reshape", 5, ex_reshape, 0},
    {"transpose", "Transpose", 1, ex_transpose, 0},
    {"squeeze", "Squeeze", 13, ex_squeeze, 0},
    {"expand_dims", "Unsqueeze", 13, ex_squeeze, 1},
    {"sum", "ReduceSum", 13, ex_reduce, 1},
    {"mean", "ReduceMean", 1, ex_reduce, 0},
    {"max", "ReduceMax", 1, ex_reduce, 0},
    {"min", "ReduceMin", 1, ex_reduce, 0},
    {"prod", "ReduceProd", 1, ex_reduce, 0},
    {"argmax", "ArgMax", 12, ex_arg, 0},
    {"argmin", "ArgMin", 12, ex_arg, 0},
    {"split", "Split", 13, ex_split, 0},
    {"cast", "Cast", 6, ex_cast, 0},
    {NULL, NULL, 0, NULL, 0},
};
/* clang-format on */

static const ExportRow *const families[] = {rows};
static OpsRuleTable table = {"ONNX export", (const void *const *)families, 1, sizeof(ExportRow),
                             NULL};

const char *onnx_exported_ops(void) {
  static char buf[1024];
  if (!buf[0])
    for (const ExportRow *r = rows; r->relay; r++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", r == rows ? "" : " ", r->relay);
  return buf;
}

/* ───────────────────────── the walk ───────────────────────── */

static ExVal *export_expr(Ex *x, const Expr *e);

/* The arguments' names, tuples flattened, into *in; their count or -1. */
static int call_inputs(Ex *x, const Expr *call, const char ***in) {
  int n = 0;
  ExVal **vs = arena_alloc(x->a, (size_t)(call->u.call.nargs + 1) * sizeof *vs);
  for (int i = 0; i < call->u.call.nargs; i++) {
    if (!(vs[i] = export_expr(x, call->u.call.args[i]))) return -1;
    n += vs[i]->n;
  }
  *in = arena_alloc(x->a, (size_t)(n + 1) * sizeof **in);
  n = 0;
  for (int i = 0; i < call->u.call.nargs; i++)
    for (int j = 0; j < vs[i]->n; j++) (*in)[n++] = vs[i]->names[j];
  return n;
}

/* A local function (a FuseOps group) called: its body with its parameters
 * bound to the arguments, in a scope of its own (a function called twice
 * is written twice; one that reads a variable of the caller, a closure, is
 * refused). */
static ExVal *export_inline(Ex *x, const Expr *e, const Function *f) {
  if (f->nparams != e->u.call.nargs)
    return refuse(x, e->span, "ONNX export: %s", "a call with the wrong number of arguments");
  PtrMap scope = {0};
  for (int i = 0; i < f->nparams; i++) {
    ExVal *v = export_expr(x, e->u.call.args[i]);
    if (!v) return ptrmap_free(&scope), NULL;
    ptrmap_put(&scope, f->params[i], v);
  }
  PtrMap outer = x->vals; /* taken now: the arguments' export may have grown it */
  x->vals = scope;
  ExVal *r = export_expr(x, f->body);
  ptrmap_free(&x->vals);
  x->vals = outer;
  return r;
}

static ExVal *export_call(Ex *x, const Expr *e) {
  const Expr *fn = e->u.call.fn;
  const Function *local = fn->kind == EX_FN    ? fn->u.fn
                          : fn->kind == EX_VAR ? ptrmap_get(&x->fns, fn->u.var)
                                               : NULL;
  if (local) return export_inline(x, e, local);
  if (fn->kind == EX_GLOBAL)
    return refuse(x, e->span,
                  "ONNX export: a call of @%s (only op calls are exported; recursion and calls "
                  "of other functions are not)",
                  fn->u.global.name);
  if (fn->kind == EX_CTOR)
    return refuse(x, e->span, "ONNX export: %s (an ADT value)", "a constructor");
  if (fn->kind != EX_OP)
    return refuse(x, e->span, "ONNX export: a call of a %s (only op calls are exported)",
                  expr_kind_name(fn->kind));
  const ExportRow *r = ops_rule_row(&table, fn->u.op.index);
  if (!r) return refuse(x, e->span, "ONNX export: op `%s` has no ONNX translation", fn->u.op.name);
  if (!e->ty) return refuse(x, e->span, "ONNX export: %s is not type-checked", fn->u.op.name);
  const char **in;
  int nin = call_inputs(x, e, &in);
  if (nin < 0) return NULL;
  if (r->since > x->opset) x->opset = r->since;
  return r->fn(x, e, in, nin, r);
}

static ExVal *export_tuple(Ex *x, const Expr *e) {
  ExVal *v = arena_alloc(x->a, sizeof *v);
  ExVal **fs = arena_alloc(x->a, (size_t)(e->u.tuple.n + 1) * sizeof *fs);
  for (int i = 0; i < e->u.tuple.n; i++) {
    if (!(fs[i] = export_expr(x, e->u.tuple.fields[i]))) return NULL;
    if (fs[i]->n != 1)
      return refuse(x, e->u.tuple.fields[i]->span, "ONNX export: %s", "a nested tuple");
  }
  v->n = e->u.tuple.n;
  v->names = arena_alloc(x->a, (size_t)(v->n + 1) * sizeof *v->names);
  for (int i = 0; i < v->n; i++) v->names[i] = fs[i]->names[0];
  return v;
}

static ExVal *export_proj(Ex *x, const Expr *e) {
  ExVal *t = export_expr(x, e->u.proj.tuple);
  if (!t) return NULL;
  if (e->u.proj.index >= t->n)
    return refuse(x, e->span, "ONNX export: %s", "a projection out of range");
  return val1(x, t->names[e->u.proj.index]);
}

/* A let chain, iteratively: each bound value's names under its var. */
static ExVal *export_let(Ex *x, const Expr *e) {
  while (e->kind == EX_LET) {
    if (e->u.let.value->kind == EX_FN) { /* bound for the calls that follow */
      ptrmap_put(&x->fns, e->u.let.var, e->u.let.value->u.fn);
      e = e->u.let.body;
      continue;
    }
    ExVal *v = export_expr(x, e->u.let.value);
    if (!v) return NULL;
    ptrmap_put(&x->vals, e->u.let.var, v);
    e = e->u.let.body;
  }
  return export_expr(x, e);
}

static const char *construct_name(ExprKind k) {
  switch (k) {
    case EX_REF_NEW:
    case EX_REF_READ:
    case EX_REF_WRITE:
      return "a reference";
    case EX_MATCH:
      return "a match";
    case EX_CTOR:
      return "a constructor (an ADT value)";
    case EX_FN:
      return "a closure";
    case EX_IF:
      return "an if";
    case EX_GLOBAL:
      return "a global";
    default:
      return expr_kind_name(k);
  }
}

static ExVal *export_uncached(Ex *x, const Expr *e) {
  switch (e->kind) {
    case EX_CONST:
      return val1(x, initializer(x, e->u.konst.value));
    case EX_VAR: {
      ExVal *v = ptrmap_get(&x->vals, e->u.var);
      if (!v && ptrmap_get(&x->fns, e->u.var))
        return refuse(x, e->span, "ONNX export: %s", "a closure used as a value");
      return v ? v : refuse(x, e->span, "ONNX export: %%%s is not bound", e->u.var->name);
    }
    case EX_CALL:
      return export_call(x, e);
    case EX_TUPLE:
      return export_tuple(x, e);
    case EX_PROJ:
      return export_proj(x, e);
    case EX_LET:
      return export_let(x, e);
    case EX_DATAFLOW:
      return export_expr(x, e->u.dataflow.body);
    default:
      return refuse(x, e->span, "ONNX export: %s cannot be written as ONNX",
                    construct_name(e->kind));
  }
}

/* Each expression once (a DAG shares subexpressions). */
static ExVal *export_expr(Ex *x, const Expr *e) {
  if (x->failed) return NULL;
  ExVal *v = e->kind == EX_VAR ? NULL : ptrmap_get(&x->vals, e);
  if (v) return v;
  v = export_uncached(x, e);
  if (v && e->kind != EX_VAR) ptrmap_put(&x->vals, e, v);
  return v;
}

/* ───────────────────────── the model ───────────────────────── */

static bool export_params(Ex *x, const FuncDef *f) {
  const Function *fn = f->fn;
  for (int i = 0; i < fn->nparams; i++) {
    const Var *p = fn->params[i];
    const Type *t = f->ty && f->ty->kind == TY_FUNC ? f->ty->u.func.params[i] : p->annot;
    const char *name = var_named(p) ? p->name : "input";
    if (strncmp(name, "output", 6) == 0) /* the outputs' names: output, output_i */
      name = arena_printf(x->a, "in_%s", name);
    while (strmap_get(&x->taken, name)) name = arena_printf(x->a, "%s_%d", name, i);
    strmap_put(&x->taken, name, (void *)name);
    Onnx__ValueInfoProto *vi = value_info(x, name, t);
    if (!vi)
      return refuse(x, p->span, "ONNX export: parameter %%%s is not a tensor of a numeric dtype",
                    p->name),
             false;
    push(x, &x->inputs, vi);
    ptrmap_put(&x->vals, p, val1(x, name));
  }
  return true;
}

/* Each result through an Identity named output (output_i for a tuple). */
static bool export_outputs(Ex *x, const ExVal *v, const Type *ret, const Expr *body,
                           NameVec *outs) {
  bool tuple = ret && ret->kind == TY_TUPLE;
  if (!ret || (tuple ? ret->u.tuple.n : 1) != v->n)
    return refuse(x, body->span, "ONNX export: %s",
                  "the result is not a tensor or a tuple of tensors"),
           false;
  for (int i = 0; i < v->n; i++) {
    const char *name = tuple ? arena_printf(x->a, "output_%d", i) : "output";
    Onnx__ValueInfoProto *vi = value_info(x, name, tuple ? ret->u.tuple.fields[i] : ret);
    if (!vi)
      return refuse(x, body->span, "ONNX export: %s",
                    "the result is not a tensor or a tuple of tensors"),
             false;
    node(x, "Identity", 1, &v->names[i], name);
    push(x, outs, vi);
  }
  return true;
}

static Onnx__ModelProto *model(Ex *x, const char *name, NameVec *outs) {
  Onnx__GraphProto *g = arena_alloc(x->a, sizeof *g);
  *g = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
  g->name = (char *)name;
  g->n_node = x->nodes.n, g->node = (Onnx__NodeProto **)x->nodes.items;
  g->n_initializer = x->inits.n, g->initializer = (Onnx__TensorProto **)x->inits.items;
  g->n_input = x->inputs.n, g->input = (Onnx__ValueInfoProto **)x->inputs.items;
  g->n_output = outs->n, g->output = (Onnx__ValueInfoProto **)outs->items;
  Onnx__OperatorSetIdProto *os = arena_alloc(x->a, sizeof *os);
  *os = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
  os->domain = (char *)"", os->has_version = true, os->version = x->opset;
  Onnx__ModelProto *mp = arena_alloc(x->a, sizeof *mp);
  *mp = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
  mp->has_ir_version = true, mp->ir_version = EXPORT_IR_VERSION;
  mp->n_opset_import = 1, mp->opset_import = arena_memdup(x->a, &os, sizeof os);
  mp->producer_name = (char *)"rly", mp->graph = g;
  return mp;
}

static bool write_model(const Onnx__ModelProto *mp, const char *path, Span where, DiagCtx *d) {
  size_t n = onnx__model_proto__get_packed_size(mp);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) rly_oom();
  onnx__model_proto__pack(mp, buf);
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(buf, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) diag_error(d, where, "cannot write '%s': %s", path, strerror(errno));
  free(buf);
  return ok;
}

static bool export_body(Ex *x, const FuncDef *f, NameVec *outs) {
  if (f->fn->ntparams)
    return refuse(x, f->span, "ONNX export: @%s has type parameters", f->name), false;
  if (!export_params(x, f)) return false;
  ExVal *v = export_expr(x, f->fn->body);
  const Type *ret = f->ty && f->ty->kind == TY_FUNC ? f->ty->u.func.ret : f->fn->body->ty;
  return v && export_outputs(x, v, ret, f->fn->body, outs);
}

bool onnx_export(const Module *m, const char *func, const char *path, Span where, DiagCtx *d,
                 OnnxExportInfo *info) {
  FuncDef *f = module_func(m, func);
  if (!f) return diag_error(d, where, "no function @%s to export", func), false;
  Arena a;
  arena_init(&a);
  Ex x = {.a = &a, .d = d, .opset = EXPORT_MIN_OPSET};
  NameVec outs = {0};
  bool ok = export_body(&x, f, &outs);
  if (!ok) diag_note(d, where, "@%s was not exported; %s is not written", func, path);
  ok = ok && write_model(model(&x, func, &outs), path, where, d);
  if (ok && info) *info = (OnnxExportInfo){(int)x.nodes.n, (int)x.inits.n, x.opset};
  ptrmap_free(&x.vals);
  ptrmap_free(&x.fns);
  strmap_free(&x.taken);
  arena_free(&a);
  return ok;
}
