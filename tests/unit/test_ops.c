/* test_ops.c — unit tests for the op registry: table consistency, attribute
 * checking, and the type relations of many ops on hand-built argument types
 * (constant dims, `?`, size variables, metavariables through a unify hook),
 * including exact error messages and "run time" calls with known values
 * (dyn.*, arange) that compute real shapes.  Expected shapes were worked
 * out with numpy's rules (broadcasting, reshape -1, negative-step slices)
 * and the conv/pool formula (H + pt + pb - dil*(k-1) - 1) / stride + 1. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ad/grad.h"
#include "ir/tir.h"
#include "kernels/kernels.h"
#include "lower/compute/compute.h"
#include "ops/elemwise_table.h"
#include "ops/ops.h"
#include "tests/unit/check.h"

static Arena A;
static const Span S0;

/* ───────────────────────── builders ───────────────────────── */

/* "2, ?, n" → dims; "" → rank 0.  A name starting with '$' is a metavariable. */
static Type *ten(DType dt, const char *spec) {
  Dim dims[TENSOR_MAX_RANK];
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
    Dim d = {DIM_CONST, 0, NULL};
    if (tok[0] == '?')
      d.kind = DIM_ANY;
    else if (tok[0] == '$')
      d.kind = DIM_META, d.value = atoi(tok + 1);
    else if ((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-')
      d.value = atoll(tok);
    else
      d.kind = DIM_VAR, d.name = arena_strdup(&A, tok);
    dims[n++] = d;
  }
  return type_tensor(&A, dt, n, dims, S0);
}

#define F32(s) ten(DT_FLOAT32, s)
#define I32(s) ten(DT_INT32, s)
#define I64(s) ten(DT_INT64, s)

static AttrValue *ai(int64_t v) { return attr_int(&A, v, DT_INT32); }
static AttrValue *af(double v) { return attr_float(&A, v, DT_FLOAT32); }
static AttrValue *ab(bool v) { return attr_bool(&A, v); }
static AttrValue *as(const char *s) { return attr_str(&A, s); }

static AttrValue *anone(void) {
  AttrValue *v = ARENA_NEW(&A, AttrValue);
  v->kind = AV_NONE;
  return v;
}

static AttrValue *asym(const char *s) {
  AttrValue *v = ARENA_NEW(&A, AttrValue);
  v->kind = AV_SYM, v->u.s = s;
  return v;
}

/* A list of values, NULL-terminated. */
static AttrValue *alist(AttrValue *first, ...) {
  AttrValue *items[64];
  int n = 0;
  va_list ap;
  va_start(ap, first);
  for (AttrValue *v = first; v; v = va_arg(ap, AttrValue *)) items[n++] = v;
  va_end(ap);
  AttrValue *l = ARENA_NEW(&A, AttrValue);
  l->kind = AV_LIST, l->u.list.n = n;
  l->u.list.items = arena_memdup(&A, items, sizeof(AttrValue *) * (size_t)(n ? n : 1));
  return l;
}

/* A list of ints: ints(3, a, b, c). */
static AttrValue *ints(int n, ...) {
  AttrValue *l = alist(NULL);
  l->u.list.items = ARENA_ARRAY(&A, AttrValue *, n ? n : 1);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) l->u.list.items[i] = ai(va_arg(ap, int));
  va_end(ap);
  l->u.list.n = n;
  return l;
}

/* attrs("k1", v1, "k2", v2, NULL) */
static Attrs *attrs(const char *k, ...) {
  const char *keys[32];
  AttrValue *vals[32];
  int n = 0;
  va_list ap;
  va_start(ap, k);
  for (; k; k = va_arg(ap, const char *)) keys[n] = k, vals[n++] = va_arg(ap, AttrValue *);
  va_end(ap);
  Attrs *a = attrs_new(&A, n);
  for (int i = 0; i < n; i++) a->keys[i] = keys[i], a->vals[i] = vals[i];
  return a;
}

static Tensor *tvec(DType dt, int n, const int64_t *v) {
  int64_t shape[1] = {n};
  Tensor *t = tensor_new(&A, dt, 1, shape);
  for (int i = 0; i < n; i++) tensor_set_i64(t, i, v[i]);
  return t;
}

static Tensor *tscalar(DType dt, double v) {
  Tensor *t = tensor_new(&A, dt, 0, NULL);
  tensor_set_f64(t, 0, v);
  return t;
}

/* ───────────────────────── running relations ───────────────────────── */

/* A tiny metavariable store for the unify hook: $k binds on first use. */
static Dim meta_val[16];
static bool meta_bound[16];

static Dim resolve(Dim d) {
  while (d.kind == DIM_META && meta_bound[d.value]) d = meta_val[d.value];
  return d;
}

static bool test_unify(RelCtx *cx, Dim a, Dim b) {
  a = resolve(a), b = resolve(b);
  if (a.kind == DIM_ANY || b.kind == DIM_ANY) return true;
  if (a.kind == DIM_META && b.kind == DIM_META && a.value == b.value) return true;
  if (a.kind == DIM_META) return meta_bound[a.value] = true, meta_val[a.value] = b, true;
  if (b.kind == DIM_META) return meta_bound[b.value] = true, meta_val[b.value] = a, true;
  if (a.kind != b.kind) return false;
  return a.kind == DIM_CONST ? a.value == b.value : strcmp(a.name, b.name) == 0;
}

static const Module *g_mod;
static const Expr *g_call;
static bool g_hook;

/* The result type as text, or "error: <message>". */
static const char *run(const char *op, const Attrs *at, int n, Type **args, const Tensor **vals) {
  const OpDef *d = ops_get(ops_lookup(op));
  if (!d) return "error: no such op";
  RelCtx cx;
  memset(&cx, 0, sizeof cx);
  cx.arena = &A, cx.op_name = d->name, cx.mod = g_mod, cx.call = g_call;
  if (g_hook) cx.unify_dim = test_unify;
  const char *bad = ops_check_attrs(&A, d, at, NULL);
  if (bad) return arena_printf(&A, "error: %s", bad);
  if (n < d->min_args || (d->max_args >= 0 && n > d->max_args)) return "error: arity";
  Type *t = d->rel(&cx, n, args, vals, at);
  if (!t) return arena_printf(&A, "error: %s", cx.err[0] ? cx.err : "(no message)");
  if (cx.err[0]) return arena_printf(&A, "error: result with message %s", cx.err);
  char *s = print_type(t);
  const char *r = arena_strdup(&A, s);
  free(s);
  return r;
}

#define NARGS(...) ((int)(sizeof((Type *[]){__VA_ARGS__}) / sizeof(Type *)))
#define R(op, at, ...) run(op, at, NARGS(__VA_ARGS__), (Type *[]){__VA_ARGS__}, NULL)
#define RV(op, at, vals, ...) run(op, at, NARGS(__VA_ARGS__), (Type *[]){__VA_ARGS__}, vals)
#define R0(op, at) run(op, at, 0, NULL, NULL)

/* ───────────────────────── registry ───────────────────────── */

/* One name a line (the formatter would pack a list this long). */
// clang-format off
static const char *const expected_ops[] = {
    "add",
    "subtract",
    "multiply",
    "divide",
    "floor_divide",
    "mod",
    "power",
    "maximum",
    "minimum",
    "negative",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "floor",
    "ceil",
    "round",
    "sign",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "where",
    "cast",
    "clip",
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "argmax",
    "argmin",
    "nn.dense",
    "nn.contrib_dense_pack",
    "nn.matmul",
    "nn.batch_matmul",
    "nn.bias_add",
    "nn.relu",
    "nn.leaky_relu",
    "nn.softmax",
    "nn.log_softmax",
    "nn.batch_flatten",
    "nn.dropout",
    "nn.dropout_train",
    "nn.conv2d",
    "nn.max_pool2d",
    "nn.avg_pool2d",
    "nn.layer_norm",
    "reshape",
    "transpose",
    "expand_dims",
    "squeeze",
    "concatenate",
    "stack",
    "split",
    "strided_slice",
    "take",
    "broadcast_to",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "arange",
    "shape_of",
    "ndarray_size",
    "one_hot",
    "check",
    "dyn.reshape",
    "dyn.strided_slice",
    "dyn.full",
    "dyn.broadcast_to",
    "random.key",
    "random.split",
    "random.fold_in",
    "random.bits",
    "random.uniform",
    "random.normal",
    "random.bernoulli",
    "random.key_data",
    "random.wrap_key",
    "call_tir",
    /* elementwise and reductions added with the op set */
    "logical_xor",
    "floor_mod",
    "trunc_divide",
    "trunc_mod",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "bitwise_not",
    "trunc",
    "copy",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "fast_exp",
    "fast_tanh",
    "fast_erf",
    "isnan",
    "isinf",
    "isfinite",
    "all",
    "any",
    "logsumexp",
    "variance",
    "std",
    "mean_variance",
    "cumsum",
    "cumprod",
    /* end elementwise and reductions */
    /* nn added with the op set */
    "nn.batch_norm",
    "nn.instance_norm",
    "nn.group_norm",
    "nn.l2_normalize",
    "nn.lrn",
    "nn.prelu",
    "nn.fast_softmax",
    "nn.cross_entropy",
    "nn.cross_entropy_with_logits",
    "nn.nll_loss",
    "nn.conv1d",
    "nn.conv3d",
    "nn.conv1d_transpose",
    "nn.conv2d_transpose",
    "nn.conv3d_transpose",
    "nn.contrib_conv2d_NCHWc",
    "nn.max_pool1d",
    "nn.avg_pool1d",
    "nn.max_pool3d",
    "nn.avg_pool3d",
    "nn.global_max_pool2d",
    "nn.global_avg_pool2d",
    "nn.adaptive_max_pool2d",
    "nn.adaptive_avg_pool2d",
    "nn.pad",
    "nn.mirror_pad",
    "nn.upsampling",
    "nn.upsampling3d",
    "nn.depth_to_space",
    "nn.space_to_depth",
    "nn.space_to_batch_nd",
    "nn.batch_to_space_nd",
    "nn.dilate",
    /* end nn */
    /* transforms added with the op set */
    "reshape_like",
    "broadcast_to_like",
    "collapse_sum_like",
    "full_like",
    "slice_like",
    "layout_transform",
    "tile",
    "repeat",
    "reverse",
    "reverse_sequence",
    "sequence_mask",
    "meshgrid",
    "trilu",
    "cast_like",
    "reinterpret",
    "gather",
    "gather_nd",
    "scatter",
    "scatter_add",
    "scatter_nd",
    "sparse_to_dense",
    "unravel_index",
    "adv_index",
    "tfidf_vectorizer",
    "argwhere",
    "argsort",
    "sort",
    "topk",
    "searchsorted",
    "unique",
    "einsum",
    /* end transforms */
    /* numeric: linear algebra and signal processing */
    "det",
    "signal.stft",
    "signal.mel_weight_matrix",
    /* image, vision and dyn added with the op set */
    "image.resize1d",
    "image.resize2d",
    "image.resize3d",
    "image.crop_and_resize",
    "image.grid_sample",
    "image.grid_sample_grad",
    "image.affine_grid",
    "vision.get_valid_counts",
    "vision.non_max_suppression",
    "vision.roi_align",
    "vision.all_class_non_max_suppression",
    "vision.roi_align_grad",
    "vision.multibox_prior",
    "fixed_point_multiply",
    "qnn.quantize",
    "qnn.dequantize",
    "qnn.requantize",
    "qnn.conv2d",
    "qnn.dense",
    "qnn.add",
    "qnn.mul",
    "dyn.tile",
    "dyn.topk",
    "dyn.one_hot",
    "dyn.zeros",
    "dyn.ones",
    "dyn.squeeze",
    "dyn.nn.pad",
    "dyn.image.resize2d",
    "dyn.sum",
    "dyn.mean",
    "dyn.max",
    "dyn.min",
    "dyn.prod",
    "dyn.logsumexp",
    "dyn.expand_dims",
    "dyn.split",
    "dyn.cumsum",
    /* end image, vision and dyn */
    "on_device",
    "device_copy",
    "call_lowered",
    "memory.alloc_storage",
    "memory.alloc_tensor",
    "memory.kill",
    "vm.shape_of",
    "vm.reshape_tensor",
    "vm.invoke_tvm_op",
};
// clang-format on

/* Every default text must read back through the accessor of its kind. */
static void check_defaults(const OpDef *d) {
  for (const OpAttrSpec *s = d->attrs; s->name; s++) {
    if (!s->def) continue;
    RelCtx cx;
    memset(&cx, 0, sizeof cx);
    cx.arena = &A, cx.op_name = d->name;
    int64_t buf[8];
    switch (s->kind) {
      case AV_INT:
        rel_attr_int(&cx, NULL, s->name);
        break;
      case AV_FLOAT:
        rel_attr_float(&cx, NULL, s->name);
        break;
      case AV_BOOL:
        CHECK(!strcmp(s->def, "True") || !strcmp(s->def, "False"));
        break;
      case AV_STR:
        CHECK(s->def[0] == '"');
        break;
      case AV_LIST:
        rel_attr_ints(&cx, NULL, s->name, buf, 8);
        break;
      case AV_NONE:
        CHECK(rel_attr_is_none(&cx, NULL, s->name) || rel_attr_int(&cx, NULL, s->name) >= 0);
        break;
      default:
        break;
    }
    if (cx.err[0]) fprintf(stderr, "%s.%s: %s\n", d->name, s->name, cx.err);
    CHECK(!cx.err[0]);
  }
}

/* Every expected op is registered once with a relation, docs and attributes; patterns; suggestions.
 */
static void test_registry(void) {
  int n = (int)(sizeof expected_ops / sizeof expected_ops[0]);
  CHECK(ops_count() == n);
  for (int i = 0; i < n; i++) {
    const OpDef *d = ops_get(ops_lookup(expected_ops[i]));
    if (!d) fprintf(stderr, "missing op %s\n", expected_ops[i]);
    CHECK(d != NULL);
    if (!d) continue;
    CHECK(d->rel && d->doc && d->doc[0] && d->attrs);
    CHECK(d->min_args <= d->max_args);
    CHECK(!d->effectful);
    check_defaults(d);
  }
  /* Every row carries its :doc reference text: a new op without it fails here. */
  for (int i = 0; i < ops_count(); i++) {
    const OpDef *d = ops_get(i);
    bool ok = d->args && d->rule && d->rule[0] && d->example && d->example[0];
    if (!ok) fprintf(stderr, "op %s: no args, rule or example\n", d->name);
    CHECK(ok);
  }
  CHECK_STREQ(op_pattern_name(ops_get(ops_lookup("nn.dense"))->pattern), "out-elemwise-fusable");
  CHECK(ops_get(ops_lookup("add"))->pattern == OPAT_BROADCAST);
  CHECK(ops_get(ops_lookup("exp"))->pattern == OPAT_ELEMWISE);
  CHECK(ops_get(ops_lookup("reshape"))->pattern == OPAT_INJECTIVE);
  CHECK(ops_get(ops_lookup("sum"))->pattern == OPAT_COMM_REDUCE);
  CHECK(ops_get(ops_lookup("shape_of"))->pattern == OPAT_OPAQUE);
  const char *sug[3];
  CHECK(ops_suggest("dense", sug, 3) >= 1 && !strcmp(sug[0], "nn.dense"));
}

/* Attribute checking: unknown keys with suggestions, wrong kinds, and the span of the bad value. */
static void test_check_attrs(void) {
  const OpDef *dense = ops_get(ops_lookup("nn.dense"));
  Span where = span_make(7, 2);
  CHECK(ops_check_attrs(&A, dense, attrs("units", ai(128), NULL), &where) == NULL);
  CHECK(ops_check_attrs(&A, dense, attrs("units", anone(), "out_dtype", as("float32"), NULL),
                        NULL) == NULL);
  CHECK_STREQ(ops_check_attrs(&A, dense, attrs("unit", ai(3), NULL), NULL),
              "nn.dense: unknown attribute `unit`; did you mean `units`?");
  CHECK_STREQ(ops_check_attrs(&A, dense, attrs("zzzzzzzz", ai(3), NULL), NULL),
              "nn.dense: unknown attribute `zzzzzzzz` (it takes units, out_dtype)");
  CHECK_STREQ(ops_check_attrs(&A, dense, attrs("units", as("x"), NULL), NULL),
              "nn.dense: attribute `units` must be an int or None, got a string");
  CHECK_STREQ(
      ops_check_attrs(&A, ops_get(ops_lookup("nn.relu")), attrs("alpha", af(1), NULL), NULL),
      "nn.relu: unknown attribute `alpha` (nn.relu takes no attributes)");
  CHECK_STREQ(ops_check_attrs(&A, ops_get(ops_lookup("cast")), NULL, NULL),
              "cast: missing attribute `dtype`");
  CHECK_STREQ(ops_check_attrs(&A, ops_get(ops_lookup("sum")), attrs("axes", ai(1), NULL), NULL),
              "sum: unknown attribute `axes`; did you mean `axis`?");
  CHECK_STREQ(ops_check_attrs(&A, ops_get(ops_lookup("nn.conv2d")),
                              attrs("padding", as("same"), NULL), NULL),
              "nn.conv2d: attribute `padding` must be a list of ints, got a string");
  /* kinds TVM prints: floats as 0.5f, bools as True, a float attr given as an int */
  CHECK(ops_check_attrs(&A, ops_get(ops_lookup("clip")),
                        attrs("a_min", ai(0), "a_max", af(6), NULL), NULL) == NULL);
  CHECK(ops_check_attrs(&A, ops_get(ops_lookup("sum")),
                        attrs("axis", ai(1), "keepdims", ab(true), NULL), NULL) == NULL);
  /* the span of the offending value is reported */
  AttrValue *bad = as("x");
  bad->span = span_make(10, 3);
  where = span_make(1, 20);
  ops_check_attrs(&A, dense, attrs("units", bad, NULL), &where);
  CHECK(where.off == 10 && where.len == 3);
}

/* ───────────────────────── elementwise ───────────────────────── */

/* Broadcasting with `?` and size variables, dtype mismatches, where, cast and clip. */
static void test_elemwise(void) {
  CHECK_STREQ(R("add", NULL, F32("2, 3"), F32("3")), "Tensor[(2, 3), float32]");
  CHECK_STREQ(R("add", NULL, F32("4, 1, 3"), F32("2, 1")), "Tensor[(4, 2, 3), float32]");
  CHECK_STREQ(R("add", NULL, F32(""), F32("5")), "Tensor[(5), float32]");
  CHECK_STREQ(R("add", NULL, F32("2, 3"), F32("4")),
              "error: add: shapes (2, 3) and (4) do not broadcast");
  CHECK_STREQ(R("add", NULL, F32("2, 3"), I32("2, 3")),
              "error: add: dtypes float32 and int32 differ");
  CHECK_STREQ(R("multiply", NULL, F32("?, 3"), F32("2, 1")), "Tensor[(2, 3), float32]");
  CHECK_STREQ(R("multiply", NULL, F32("?, 3"), F32("1, 3")), "Tensor[(?, 3), float32]");
  CHECK_STREQ(R("subtract", NULL, F32("n, 3"), F32("n, 3")), "Tensor[(n, 3), float32]");
  CHECK_STREQ(R("subtract", NULL, F32("n, 3"), F32("m, 3")), "Tensor[(?, 3), float32]");
  CHECK_STREQ(R("subtract", NULL, F32("n, 3"), F32("4, 3")), "Tensor[(4, 3), float32]");
  CHECK_STREQ(R("subtract", NULL, F32("n, 1"), F32("1, 5")), "Tensor[(n, 5), float32]");
  CHECK_STREQ(R("less", NULL, F32("2, 3"), F32("")), "Tensor[(2, 3), bool]");
  CHECK_STREQ(R("equal", NULL, I64("n"), I64("n")), "Tensor[(n), bool]");
  CHECK_STREQ(R("exp", NULL, F32("2, n")), "Tensor[(2, n), float32]");
  CHECK_STREQ(R("negative", NULL, type_randstate(&A, S0)),
              "error: negative: argument 1 must be a tensor, got RandState");
  CHECK_STREQ(R("where", NULL, ten(DT_BOOL, "3, 1"), F32("4"), F32("")), "Tensor[(3, 4), float32]");
  CHECK_STREQ(R("where", NULL, ten(DT_BOOL, "3"), F32("3"), I32("3")),
              "error: where: dtypes float32 and int32 differ");
  CHECK_STREQ(R("cast", attrs("dtype", as("int64"), NULL), F32("2, ?")), "Tensor[(2, ?), int64]");
  CHECK_STREQ(R("cast", attrs("dtype", as("flaot32"), NULL), F32("2")),
              "error: cast: unknown dtype `flaot32`");
  CHECK_STREQ(R("clip", attrs("a_min", af(0), "a_max", af(6), NULL), F32("2")),
              "Tensor[(2), float32]");
  CHECK_STREQ(R("clip", attrs("a_min", af(6), "a_max", af(0), NULL), F32("2")),
              "error: clip: a_min 6 is greater than a_max 0");
}

/* Metavariables bind through the hook: $1 against 784 binds $1 := 784. */
static void test_unify_hook(void) {
  g_hook = true;
  memset(meta_bound, 0, sizeof meta_bound);
  CHECK_STREQ(R("nn.dense", NULL, F32("1, $1"), F32("128, 784")), "Tensor[(1, 128), float32]");
  CHECK(meta_bound[1] && meta_val[1].kind == DIM_CONST && meta_val[1].value == 784);
  CHECK_STREQ(R("add", NULL, F32("$2, 3"), F32("$3, 3")), "Tensor[(?, 3), float32]");
  CHECK(meta_bound[2] || meta_bound[3]); /* the two metavariables were unified */
  g_hook = false;
  /* without the hook a metavariable only matches itself */
  CHECK_STREQ(R("add", NULL, F32("$4"), F32("$4")), "Tensor[(?), float32]");
}

/* ───────────────────────── reductions ───────────────────────── */

static void test_reduce(void) {
  CHECK_STREQ(R("sum", NULL, F32("2, 3")), "float32");
  CHECK_STREQ(R("sum", attrs("axis", ai(1), NULL), F32("2, 3")), "Tensor[(2), float32]");
  CHECK_STREQ(R("sum", attrs("axis", ints(1, -1), "keepdims", ab(true), NULL), F32("2, 3")),
              "Tensor[(2, 1), float32]");
  CHECK_STREQ(R("mean", attrs("axis", ints(2, 0, 2), NULL), F32("n, 4, 5")),
              "Tensor[(4), float32]");
  CHECK_STREQ(R("max", attrs("axis", ints(1, 1), "exclude", ab(true), NULL), F32("2, 3, 4")),
              "Tensor[(3), float32]");
  CHECK_STREQ(R("prod", attrs("axis", ints(0), NULL), F32("2, 3")), "Tensor[(2, 3), float32]");
  CHECK_STREQ(R("argmax", attrs("axis", ints(1, 1), NULL), F32("2, 3")), "Tensor[(2), int32]");
  CHECK_STREQ(R("argmin", NULL, F32("2, 3")), "int32");
  CHECK_STREQ(R("sum", attrs("axis", ai(2), NULL), F32("2, 3")),
              "error: sum: axis 2 is out of range for rank 2");
  CHECK_STREQ(R("sum", attrs("axis", ints(2, 1, -1), NULL), F32("2, 3")),
              "error: sum: axis 1 is listed twice");
}

/* ───────────────────────── nn ───────────────────────── */

/* nn.dense, nn.matmul, nn.batch_matmul and nn.bias_add shapes and their error messages. */
static void test_dense(void) {
  CHECK_STREQ(R("nn.dense", attrs("units", ai(128), NULL), F32("1, 784"), F32("128, 784")),
              "Tensor[(1, 128), float32]");
  CHECK_STREQ(R("nn.dense", attrs("units", anone(), NULL), F32("n, 784"), F32("128, 784")),
              "Tensor[(n, 128), float32]");
  CHECK_STREQ(R("nn.dense", NULL, F32("2, 5, 8"), F32("3, 8")), "Tensor[(2, 5, 3), float32]");
  CHECK_STREQ(R("nn.dense", NULL, F32("1, 784"), F32("128, 100")),
              "error: nn.dense: input has 784 features but weight has shape (128, 100)");
  CHECK_STREQ(R("nn.dense", attrs("units", ai(64), NULL), F32("1, 784"), F32("128, 784")),
              "error: nn.dense: units=64 but weight has shape (128, 784)");
  CHECK_STREQ(R("nn.dense", attrs("out_dtype", as("int32"), NULL), ten(DT_INT8, "4, 8"),
                ten(DT_INT8, "2, 8")),
              "Tensor[(4, 2), int32]");
  CHECK_STREQ(R("nn.dense", NULL, F32("4, 8"), F32("8")),
              "error: nn.dense: weight must be 2-D (units, features), got Tensor[(8), float32]");
  CHECK_STREQ(R("nn.matmul", NULL, F32("2, 3"), F32("3, 5")), "Tensor[(2, 5), float32]");
  CHECK_STREQ(R("nn.matmul", attrs("transpose_a", ab(true), "transpose_b", ab(true), NULL),
                F32("3, 2"), F32("5, 3")),
              "Tensor[(2, 5), float32]");
  CHECK_STREQ(R("nn.matmul", NULL, F32("2, 3"), F32("4, 5")),
              "error: nn.matmul: shapes (2, 3) and (4, 5) are incompatible: 3 vs 4 "
              "(transpose_a=False, transpose_b=False)");
  CHECK_STREQ(R("nn.batch_matmul", NULL, F32("2, 3, 4"), F32("2, 4, 5")),
              "Tensor[(2, 3, 5), float32]");
  CHECK_STREQ(
      R("nn.batch_matmul", attrs("transpose_b", ab(true), NULL), F32("1, 3, 4"), F32("6, 5, 4")),
      "Tensor[(6, 3, 5), float32]");
  CHECK_STREQ(
      R("nn.batch_matmul", NULL, F32("2, 3, 4"), F32("3, 4, 5")),
      "error: nn.batch_matmul: batch sizes 2 and 3 differ (shapes (2, 3, 4) and (3, 4, 5))");
  CHECK_STREQ(R("nn.bias_add", NULL, F32("2, 20, 5"), F32("20")), "Tensor[(2, 20, 5), float32]");
  CHECK_STREQ(R("nn.bias_add", attrs("axis", ai(-1), NULL), F32("2, 20, 5"), F32("5")),
              "Tensor[(2, 20, 5), float32]");
  CHECK_STREQ(R("nn.bias_add", NULL, F32("2, 20"), F32("10")),
              "error: nn.bias_add: bias has shape (10) but data (2, 20) has 20 at axis 1");
}

/* relu, softmax axes, batch_flatten, every dropout form, and layer_norm. */
static void test_nn_misc(void) {
  CHECK_STREQ(R("nn.relu", NULL, F32("n, 4")), "Tensor[(n, 4), float32]");
  CHECK_STREQ(R("nn.softmax", NULL, F32("2, 4")), "Tensor[(2, 4), float32]");
  CHECK_STREQ(R("nn.log_softmax", attrs("axis", ai(3), NULL), F32("2, 4")),
              "error: nn.log_softmax: axis 3 is out of range for rank 2");
  CHECK_STREQ(R("nn.batch_flatten", NULL, F32("8, 2, 3, 4")), "Tensor[(8, 24), float32]");
  CHECK_STREQ(R("nn.batch_flatten", NULL, F32("n, 2, ?")), "Tensor[(n, ?), float32]");
  CHECK_STREQ(R("nn.batch_flatten", NULL, F32("n, m")), "Tensor[(n, m), float32]");
  /* TVM's one-argument dropout: (y, mask) */
  CHECK_STREQ(R("nn.dropout", attrs("rate", af(0.5), NULL), F32("2, 3")),
              "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])");
  CHECK_STREQ(R("nn.dropout", NULL, F32("2, 3"), type_randstate(&A, S0)),
              "Tensor[(2, 3), float32]");
  CHECK_STREQ(R("nn.dropout", NULL, F32("2, 3"), F32("2")),
              "error: nn.dropout: argument 2 must be a RandState key, got Tensor[(2), float32]");
  CHECK_STREQ(R("nn.dropout", attrs("rate", af(1.5), NULL), F32("2")),
              "error: nn.dropout: rate must be in [0, 1), got 1.5");
  CHECK_STREQ(
      R("nn.dropout_train", attrs("rate", af(0.7), NULL), F32("n, 3"), type_randstate(&A, S0)),
      "(Tensor[(n, 3), float32], RandState)");
  CHECK_STREQ(R("nn.layer_norm", NULL, F32("2, 5, 4"), F32("4"), F32("4")),
              "Tensor[(2, 5, 4), float32]");
  CHECK_STREQ(R("nn.layer_norm", attrs("axis", ai(1), NULL), F32("2, 4"), F32("5"), F32("4")),
              "error: nn.layer_norm: gamma has shape (5) but data (2, 4) has 4 at axis 1");
}

/* conv2d and pooling output sizes (padding, dilation, ceil mode) against the formula. */
static void test_conv_pool(void) {
  /* ResNet stem: (224 + 3 + 3 - 1*(7-1) - 1) / 2 + 1 = 112 */
  CHECK_STREQ(R("nn.conv2d",
                attrs("strides", ints(2, 2, 2), "padding", ints(2, 3, 3), "channels", ai(64),
                      "kernel_size", ints(2, 7, 7), NULL),
                F32("1, 3, 224, 224"), F32("64, 3, 7, 7")),
              "Tensor[(1, 64, 112, 112), float32]");
  /* 4-value padding (top, left, bottom, right): H 10+1+3-2-1+1 = 12, W 10+2+4-2-1+1 = 14 */
  CHECK_STREQ(R("nn.conv2d", attrs("padding", ints(4, 1, 2, 3, 4), NULL), F32("1, 1, 10, 10"),
                F32("2, 1, 3, 3")),
              "Tensor[(1, 2, 12, 14), float32]");
  /* dilation 2, k 3: (10 - 2*2 - 1) / 1 + 1 = 6 */
  CHECK_STREQ(R("nn.conv2d", attrs("dilation", ints(2, 2, 2), NULL), F32("1, 1, 10, 10"),
                F32("2, 1, 3, 3")),
              "Tensor[(1, 2, 6, 6), float32]");
  CHECK_STREQ(R("nn.conv2d", attrs("groups", ai(2), NULL), F32("1, 4, 8, 8"), F32("6, 2, 3, 3")),
              "Tensor[(1, 6, 6, 6), float32]");
  CHECK_STREQ(R("nn.conv2d", NULL, F32("n, 3, ?, 32"), F32("8, 3, 3, 3")),
              "Tensor[(n, 8, ?, 30), float32]");
  CHECK_STREQ(R("nn.conv2d", NULL, F32("n, 3, h, w"), F32("8, 3, 1, 1")),
              "Tensor[(n, 8, h, w), float32]");
  CHECK_STREQ(
      R("nn.conv2d", NULL, F32("1, 3, 8, 8"), F32("8, 4, 3, 3")),
      "error: nn.conv2d: input has 3 channels but weight (8, 4, 3, 3) expects 4 (groups=1)");
  /* TensorFlow's layouts: the result in the data's (NHWC) */
  CHECK_STREQ(R("nn.conv2d", attrs("data_layout", as("NHWC"), "kernel_layout", as("HWIO"), NULL),
                F32("1, 8, 7, 3"), F32("3, 3, 3, 16")),
              "Tensor[(1, 6, 5, 16), float32]");
  CHECK_STREQ(R("nn.conv2d",
                attrs("data_layout", as("NHWC"), "kernel_layout", as("OHWI"), "strides",
                      ints(2, 2, 2), NULL),
                F32("n, 8, 8, 3"), F32("16, 3, 3, 3")),
              "Tensor[(n, 3, 3, 16), float32]");
  CHECK_STREQ(
      R("nn.conv2d",
        attrs("data_layout", as("NHWC"), "kernel_layout", as("HWOI"), "groups", ai(8), NULL),
        F32("1, 8, 8, 8"), F32("3, 3, 8, 1")),
      "Tensor[(1, 6, 6, 8), float32]");
  CHECK_STREQ(
      R("nn.conv2d", attrs("data_layout", as("NHWC"), "kernel_layout", as("HWIO"), NULL),
        F32("1, 8, 8, 3"), F32("3, 3, 4, 8")),
      "error: nn.conv2d: input has 3 channels but weight (3, 3, 4, 8) expects 4 (groups=1)");
  CHECK_STREQ(R("nn.conv2d", attrs("data_layout", as("NCHW16c"), NULL), F32("1, 1, 8, 8, 16"),
                F32("3, 3, 3, 8")),
              "error: nn.conv2d: data_layout NCHW16c is not supported: it must be the letters NCHW "
              "in some order");
  CHECK_STREQ(R("nn.conv2d", attrs("kernel_size", ints(2, 5, 5), NULL), F32("1, 3, 8, 8"),
                F32("8, 3, 3, 3")),
              "error: nn.conv2d: kernel_size=[5, 5] but weight has shape (8, 3, 3, 3)");
  CHECK_STREQ(R("nn.conv2d", NULL, F32("1, 3, 2, 2"), F32("8, 3, 3, 3")),
              "error: nn.conv2d: the height window (size 3, dilation 1) is larger than the padded "
              "input (2)");
  CHECK_STREQ(R("nn.conv2d", attrs("padding", ints(3, 1, 1, 1), NULL), F32("1, 3, 8, 8"),
                F32("8, 3, 3, 3")),
              "error: nn.conv2d: padding must have 1, 2 or 4 values, got 3");
  /* pools: 5 by 2, stride 2: floor (5-2)/2+1 = 2, ceil (5-2+1)/2+1 = 3 (as PyTorch) */
  Attrs *p = attrs("pool_size", ints(2, 2, 2), "strides", ints(2, 2, 2), NULL);
  CHECK_STREQ(R("nn.max_pool2d", p, F32("1, 1, 5, 5")), "Tensor[(1, 1, 2, 2), float32]");
  p = attrs("pool_size", ints(2, 2, 2), "strides", ints(2, 2, 2), "ceil_mode", ab(true), NULL);
  CHECK_STREQ(R("nn.max_pool2d", p, F32("1, 1, 5, 5")), "Tensor[(1, 1, 3, 3), float32]");
  /* ResNet: 112, k 3, s 2, p 1 → (112 + 2 - 3) / 2 + 1 = 56 */
  p = attrs("pool_size", ints(2, 3, 3), "strides", ints(2, 2, 2), "padding", ints(2, 1, 1), NULL);
  CHECK_STREQ(R("nn.max_pool2d", p, F32("1, 64, 112, 112")), "Tensor[(1, 64, 56, 56), float32]");
  p = attrs("pool_size", ai(3), "count_include_pad", ab(true), NULL);
  CHECK_STREQ(R("nn.avg_pool2d", p, F32("n, 2, 7, ?")), "Tensor[(n, 2, 5, ?), float32]");
  CHECK_STREQ(R("nn.max_pool2d", NULL, F32("1, 1, 5, 5")),
              "error: nn.max_pool2d: missing attribute `pool_size`");
}

/* ───────────────────────── transform ───────────────────────── */

static Attrs *newshape(AttrValue *l) { return attrs("newshape", l, NULL); }

/* reshape's special values (0, -1, -2, -3, -4) and size variables, and its errors. */
static void test_reshape(void) {
  CHECK_STREQ(R("reshape", newshape(ints(1, -1)), F32("2, 3")), "Tensor[(6), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 0, -1)), F32("2, 3, 4")), "Tensor[(2, 12), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 3, -1)), F32("2, 3, 4")), "Tensor[(3, 8), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 0, -1)), F32("n, 2, 3")), "Tensor[(n, 6), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 0, -1)), F32("?, 2, 3")), "Tensor[(?, 6), float32]");
  CHECK_STREQ(R("reshape", newshape(alist(ai(-1), asym("n"), NULL)), F32("n, 6")),
              "Tensor[(6, n), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(1, -1)), F32("?, 4")), "Tensor[(?), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, -1, 2)), F32("n, 4")), "Tensor[(?, 2), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 4, 2)), F32("2, 3")),
              "error: reshape: cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)");
  CHECK_STREQ(
      R("reshape", newshape(ints(2, 4, -1)), F32("2, 3")),
      "error: reshape: cannot reshape (2, 3) (6 elements) to (4, -1): 6 is not a multiple of 4");
  CHECK_STREQ(R("reshape", newshape(ints(2, -1, -1)), F32("2, 3")),
              "error: reshape: newshape (-1, -1) has more than one -1");
  /* TVM/MXNet: -2 copies the input dims from the cursor on; a plain value advances the cursor */
  CHECK_STREQ(R("reshape", newshape(ints(3, -2, 1, 1)), F32("2, 3, 4")),
              "Tensor[(2, 3, 4, 1, 1), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, 2, -2)), F32("2, 3, 4")), "Tensor[(2, 3, 4), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(2, -3, 4)), F32("2, 3, 4")), "Tensor[(6, 4), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(5, -4, 2, -1, 0, 0)), F32("6, 3, 4")),
              "Tensor[(2, 3, 3, 4), float32]");
  CHECK_STREQ(
      R("reshape", attrs("newshape", ints(2, 0, 6), "allowzero", ab(true), NULL), F32("0, 3")),
      "Tensor[(0, 6), float32]");
  CHECK_STREQ(R("reshape", newshape(ints(3, 0, 0, 0)), F32("2, 3")),
              "error: reshape: newshape (0, 0, 0) refers past the input's rank 2");
}

/* transpose, expand_dims, squeeze, concatenate, stack, split and take shapes and errors. */
static void test_transform_shapes(void) {
  CHECK_STREQ(R("transpose", NULL, F32("2, 3, n")), "Tensor[(n, 3, 2), float32]");
  CHECK_STREQ(R("transpose", attrs("axes", ints(3, 0, 2, 1), NULL), F32("2, 3, 4")),
              "Tensor[(2, 4, 3), float32]");
  CHECK_STREQ(R("transpose", attrs("axes", ints(2, 0, 0), NULL), F32("2, 3")),
              "error: transpose: axes list axis 0 twice; it must be a permutation");
  CHECK_STREQ(R("expand_dims", attrs("axis", ai(1), NULL), F32("2, 3")),
              "Tensor[(2, 1, 3), float32]");
  CHECK_STREQ(R("expand_dims", attrs("axis", ai(-1), "num_newaxis", ai(2), NULL), F32("2, 3")),
              "Tensor[(2, 3, 1, 1), float32]");
  CHECK_STREQ(R("squeeze", NULL, F32("1, 3, 1, ?")), "Tensor[(3, ?), float32]");
  CHECK_STREQ(R("squeeze", attrs("axis", ints(1, 2), NULL), F32("1, 3, 1")),
              "Tensor[(1, 3), float32]");
  CHECK_STREQ(R("squeeze", attrs("axis", ints(1, 1), NULL), F32("1, 3, 1")),
              "error: squeeze: axis 1 of (1, 3, 1) has size 3, not 1");
  Type *pair[2] = {F32("2, 3"), F32("2, 5")};
  Type *tup = type_tuple(&A, 2, pair, S0);
  CHECK_STREQ(R("concatenate", attrs("axis", ai(1), NULL), tup), "Tensor[(2, 8), float32]");
  CHECK_STREQ(
      R("concatenate", attrs("axis", ai(0), NULL), tup),
      "error: concatenate: shapes (2, 3) and (2, 5) differ at axis 1 (concatenating along axis 0)");
  Type *pair2[2] = {F32("n, 3"), F32("?, 3")};
  CHECK_STREQ(R("concatenate", NULL, type_tuple(&A, 2, pair2, S0)), "Tensor[(?, 3), float32]");
  CHECK_STREQ(R("concatenate", NULL, F32("2")),
              "error: concatenate: expects a tuple of tensors, got Tensor[(2), float32]");
  Type *pair3[2] = {F32("2"), I32("2")};
  CHECK_STREQ(R("concatenate", NULL, type_tuple(&A, 2, pair3, S0)),
              "error: concatenate: field 1 has dtype int32 but field 0 has float32");
  Type *same[3] = {F32("2, 3"), F32("2, 3"), F32("2, 3")};
  CHECK_STREQ(R("stack", attrs("axis", ai(1), NULL), type_tuple(&A, 3, same, S0)),
              "Tensor[(2, 3, 3), float32]");
  CHECK_STREQ(R("stack", attrs("axis", ai(-1), NULL), type_tuple(&A, 3, same, S0)),
              "Tensor[(2, 3, 3), float32]");
  CHECK_STREQ(R("stack", NULL, tup), "error: stack: shapes (2, 3) and (2, 5) differ");
  CHECK_STREQ(R("split", attrs("indices_or_sections", ai(3), NULL), F32("6, 2")),
              "(Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32])");
  CHECK_STREQ(
      R("split", attrs("indices_or_sections", ints(2, 2, 5), "axis", ai(1), NULL), F32("3, 7")),
      "(Tensor[(3, 2), float32], Tensor[(3, 3), float32], Tensor[(3, 2), float32])");
  CHECK_STREQ(R("split", attrs("indices_or_sections", ints(1, 2), NULL), F32("n")),
              "(Tensor[(2), float32], Tensor[(?), float32])");
  CHECK_STREQ(R("split", attrs("indices_or_sections", ai(4), NULL), F32("6")),
              "error: split: axis of size 6 cannot be split into 4 equal sections");
  CHECK_STREQ(R("take", NULL, F32("4, 5"), I32("2, 3")), "Tensor[(2, 3), float32]");
  CHECK_STREQ(R("take", attrs("axis", ai(1), NULL), F32("4, 5, 6"), I32("2, 3")),
              "Tensor[(4, 2, 3, 6), float32]");
  CHECK_STREQ(
      R("take", attrs("axis", ai(1), "batch_dims", ai(1), NULL), F32("4, 5, 6"), I32("4, 3")),
      "Tensor[(4, 3, 6), float32]");
  CHECK_STREQ(R("take", NULL, F32("4"), F32("2")),
              "error: take: indices must be integers, got float32");
  CHECK_STREQ(R("take", attrs("mode", as("nearest"), NULL), F32("4"), I32("2")),
              "error: take: mode must be \"clip\", \"wrap\" or \"fast\", got \"nearest\"");
}

static Attrs *slice(AttrValue *b, AttrValue *e, AttrValue *s) {
  return s ? attrs("begin", b, "end", e, "strides", s, NULL) : attrs("begin", b, "end", e, NULL);
}

/* strided_slice agrees with numpy slicing (negative steps, clamping, axes, size mode). */
static void test_strided_slice(void) {
  /* numpy: a = np.arange(10); a[-1:-11:-1].size == 10, a[8:2:-2] == [8, 6, 4], a[0:100].size == 10
   */
  CHECK_STREQ(R("strided_slice", slice(ints(1, -1), ints(1, -11), ints(1, -1)), F32("10")),
              "Tensor[(10), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, 8), ints(1, 2), ints(1, -2)), F32("10")),
              "Tensor[(3), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, 0), ints(1, 100), NULL), F32("10")),
              "Tensor[(10), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, -3), ints(1, 10), NULL), F32("10")),
              "Tensor[(3), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, 5), ints(1, 2), NULL), F32("10")),
              "Tensor[(0), float32]");
  /* a[1:3] of a (4, 5) → (2, 5); unsliced axes keep size variables */
  CHECK_STREQ(R("strided_slice", slice(ints(1, 1), ints(1, 3), NULL), F32("4, n")),
              "Tensor[(2, n), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, 1), ints(1, 3), NULL), F32("?, 5")),
              "Tensor[(?, 5), float32]");
  /* axes=[1]: a[:, 1:4:2] of (4, 5) → (4, 2) */
  CHECK_STREQ(R("strided_slice",
                attrs("begin", ints(1, 1), "end", ints(1, 4), "strides", ints(1, 2), "axes",
                      ints(1, 1), NULL),
                F32("4, 5")),
              "Tensor[(4, 2), float32]");
  /* slice_mode="size": end is a size, -1 = to the end */
  CHECK_STREQ(
      R("strided_slice",
        attrs("begin", ints(2, 1, 0), "end", ints(2, 2, -1), "slice_mode", as("size"), NULL),
        F32("4, 5")),
      "Tensor[(2, 5), float32]");
  CHECK_STREQ(R("strided_slice", slice(ints(1, 0), ints(1, 4), ints(1, 0)), F32("10")),
              "error: strided_slice: stride 0 on entry 0");
  CHECK_STREQ(R("strided_slice", slice(ints(3, 0, 0, 0), ints(3, 1, 1, 1), NULL), F32("4, 5")),
              "error: strided_slice: begin/end have 3 entries but the data has rank 2");
}

/* broadcast_to, zeros/ones/full, *_like, shape_of, ndarray_size and one_hot. */
static void test_creation(void) {
  CHECK_STREQ(R("broadcast_to", attrs("shape", ints(2, 2, 4), NULL), F32("4")),
              "Tensor[(2, 4), float32]");
  CHECK_STREQ(R("broadcast_to", attrs("shape", alist(asym("n"), ai(4), NULL), NULL), F32("1, 4")),
              "Tensor[(n, 4), float32]");
  CHECK_STREQ(R("broadcast_to", attrs("shape", ints(2, 2, 4), NULL), F32("3")),
              "error: broadcast_to: cannot broadcast (3) to (2, 4)");
  CHECK_STREQ(R0("zeros", attrs("shape", ints(2, 2, 3), "dtype", as("int64"), NULL)),
              "Tensor[(2, 3), int64]");
  CHECK_STREQ(R0("ones", attrs("shape", alist(NULL), NULL)), "float32");
  CHECK_STREQ(R0("zeros", NULL), "error: zeros: missing attribute `shape`");
  CHECK_STREQ(R("full", attrs("shape", ints(1, 3), NULL), I32("")), "Tensor[(3), int32]");
  CHECK_STREQ(R("full", attrs("shape", ints(1, 3), NULL), I32("2")),
              "error: full: fill_value must be a scalar, got Tensor[(2), int32]");
  CHECK_STREQ(R("zeros_like", NULL, F32("n, 2")), "Tensor[(n, 2), float32]");
  CHECK_STREQ(R("shape_of", NULL, F32("n, 2, ?")), "Tensor[(3), int32]");
  CHECK_STREQ(R("shape_of", attrs("dtype", as("int64"), NULL), F32("2")), "Tensor[(1), int64]");
  CHECK_STREQ(R("ndarray_size", NULL, F32("2, 3")), "int32");
  CHECK_STREQ(R("one_hot", attrs("depth", ai(10), NULL), I32("4"), F32(""), F32("")),
              "Tensor[(4, 10), float32]");
  CHECK_STREQ(R("one_hot", attrs("depth", ai(10), "axis", ai(0), "dtype", as("float32"), NULL),
                I32("4, 2"), F32(""), F32("")),
              "Tensor[(10, 4, 2), float32]");
  CHECK_STREQ(
      R("one_hot", attrs("depth", ai(3), "dtype", as("int32"), NULL), I32("4"), F32(""), F32("")),
      "error: one_hot: on_value and off_value must have dtype int32, got float32 and float32");
}

/* ───────────── run time: values known (dyn.*, arange) ───────────── */

/* arange's length from run-time values agrees with numpy; zero step and non-scalars fail. */
static void test_arange(void) {
  Type *f = F32(""), *i = I32("");
  CHECK_STREQ(R("arange", NULL, f, f, f), "Tensor[(?), float32]");
  /* np.arange(0, 10, 3) has 4 elements; np.arange(1.0, 2.0, 0.3) has 4; np.arange(5, 1, -2) has 2
   */
  const Tensor *v1[3] = {tscalar(DT_INT32, 0), tscalar(DT_INT32, 10), tscalar(DT_INT32, 3)};
  CHECK_STREQ(RV("arange", attrs("dtype", as("int32"), NULL), v1, i, i, i), "Tensor[(4), int32]");
  const Tensor *v2[3] = {tscalar(DT_FLOAT32, 1), tscalar(DT_FLOAT32, 2), tscalar(DT_FLOAT32, 0.3)};
  CHECK_STREQ(RV("arange", NULL, v2, f, f, f), "Tensor[(4), float32]");
  const Tensor *v3[3] = {tscalar(DT_INT32, 5), tscalar(DT_INT32, 1), tscalar(DT_INT32, -2)};
  CHECK_STREQ(RV("arange", attrs("dtype", as("int64"), NULL), v3, i, i, i), "Tensor[(2), int64]");
  const Tensor *v4[3] = {tscalar(DT_INT32, 5), tscalar(DT_INT32, 1), tscalar(DT_INT32, 1)};
  CHECK_STREQ(RV("arange", NULL, v4, i, i, i), "Tensor[(0), float32]");
  const Tensor *v5[3] = {tscalar(DT_INT32, 0), tscalar(DT_INT32, 1), tscalar(DT_INT32, 0)};
  CHECK_STREQ(RV("arange", NULL, v5, i, i, i), "error: arange: step must not be zero");
  CHECK_STREQ(R("arange", NULL, f, F32("2"), f),
              "error: arange: stop must be a scalar, got Tensor[(2), float32]");
}

/* dyn.* ops: `?` dims without values, real shapes once the shape tensors are known. */
static void test_dyn(void) {
  int64_t ns[2] = {3, -1}, bad[2] = {4, 4};
  Type *shp = I64("2");
  CHECK_STREQ(R("dyn.reshape", NULL, F32("2, 3, 4"), shp), "Tensor[(?, ?), float32]");
  const Tensor *v[2] = {NULL, tvec(DT_INT64, 2, ns)};
  CHECK_STREQ(RV("dyn.reshape", NULL, v, F32("2, 3, 4"), shp), "Tensor[(3, 8), float32]");
  const Tensor *vb[2] = {NULL, tvec(DT_INT64, 2, bad)};
  CHECK_STREQ(RV("dyn.reshape", NULL, vb, F32("2, 3"), shp),
              "error: dyn.reshape: cannot reshape (2, 3) (6 elements) to (4, 4) (16 elements)");
  CHECK_STREQ(R("dyn.reshape", NULL, F32("6"), I64("?")),
              "error: dyn.reshape: newshape must be a 1-D integer tensor of known length, got "
              "Tensor[(?), int64]");
  /* dyn.strided_slice: begin [1], end [-1], strides [2] on (10, 4) → a[1:-1:2] has 4 rows */
  int64_t b[1] = {1}, e[1] = {-1}, s[1] = {2};
  Type *one = I64("1");
  CHECK_STREQ(R("dyn.strided_slice", NULL, F32("10, 4"), one, one, one), "Tensor[(?, 4), float32]");
  const Tensor *vs[4] = {NULL, tvec(DT_INT64, 1, b), tvec(DT_INT64, 1, e), tvec(DT_INT64, 1, s)};
  CHECK_STREQ(RV("dyn.strided_slice", NULL, vs, F32("10, 4"), one, one, one),
              "Tensor[(4, 4), float32]");
  int64_t fs[3] = {2, 1, 5};
  CHECK_STREQ(R("dyn.full", NULL, F32(""), I32("3")), "Tensor[(?, ?, ?), float32]");
  const Tensor *vf[2] = {NULL, tvec(DT_INT32, 3, fs)};
  CHECK_STREQ(RV("dyn.full", attrs("dtype", as("int8"), NULL), vf, F32(""), I32("3")),
              "Tensor[(2, 1, 5), int8]");
  CHECK_STREQ(R("dyn.broadcast_to", NULL, F32("5"), I32("3")), "Tensor[(?, ?, ?), float32]");
  CHECK_STREQ(RV("dyn.broadcast_to", NULL, vf, F32("5"), I32("3")), "Tensor[(2, 1, 5), float32]");
  int64_t to[2] = {2, 4};
  const Tensor *vt[2] = {NULL, tvec(DT_INT32, 2, to)};
  CHECK_STREQ(RV("dyn.broadcast_to", NULL, vt, F32("3"), I32("2")),
              "error: dyn.broadcast_to: cannot broadcast (3) to (2, 4)");
}

/* ───────────────────────── random ───────────────────────── */

/* The random.* relations: key, split, fold_in, samplers' shapes and dtypes, wrap_key. */
static void test_random(void) {
  Type *k = type_randstate(&A, S0);
  CHECK_STREQ(R("random.key", NULL, I64("")), "RandState");
  CHECK_STREQ(R("random.key", NULL, F32("")),
              "error: random.key: the seed must be an integer scalar, got float32");
  CHECK_STREQ(R("random.split", NULL, k), "(RandState, RandState)");
  CHECK_STREQ(R("random.split", attrs("num", ai(3), NULL), k), "(RandState, RandState, RandState)");
  CHECK_STREQ(R("random.fold_in", NULL, k, I32("")), "RandState");
  CHECK_STREQ(R("random.bits", attrs("shape", ints(2, 2, 3), NULL), k), "Tensor[(2, 3), uint32]");
  CHECK_STREQ(R("random.bits", attrs("shape", ints(1, 2), "dtype", as("float32"), NULL), k),
              "error: random.bits: dtype must be an unsigned integer type, got float32");
  CHECK_STREQ(
      R("random.uniform",
        attrs("shape", alist(asym("n"), ai(4), NULL), "low", af(-1), "high", af(1), NULL), k),
      "Tensor[(n, 4), float32]");
  CHECK_STREQ(R("random.uniform", attrs("low", af(2), "high", af(1), NULL), k),
              "error: random.uniform: low 2 must not exceed high 1");
  CHECK_STREQ(R("random.normal", attrs("shape", ints(1, 8), "dtype", as("float64"), NULL), k),
              "Tensor[(8), float64]");
  CHECK_STREQ(R("random.bernoulli", attrs("shape", ints(2, 2, 3), NULL), k, F32("")),
              "Tensor[(2, 3), bool]");
  CHECK_STREQ(R("random.bernoulli", NULL, k, F32("5")), "Tensor[(5), bool]");
  CHECK_STREQ(R("random.bernoulli", attrs("shape", ints(1, 3), NULL), k, F32("2")),
              "error: random.bernoulli: p of shape (2) does not broadcast to shape (3)");
  CHECK_STREQ(R("random.key_data", NULL, k), "Tensor[(2), uint32]");
  CHECK_STREQ(R("random.wrap_key", NULL, ten(DT_UINT32, "2")), "RandState");
  CHECK_STREQ(R("random.wrap_key", NULL, ten(DT_UINT32, "3")),
              "error: random.wrap_key: expects Tensor[(2), uint32], got Tensor[(3), uint32]");
  CHECK_STREQ(R("random.bits", NULL, F32("2")),
              "error: random.bits: argument 1 must be a RandState key, got Tensor[(2), float32]");
}

/* ───────────────────────── call_tir ───────────────────────── */

static Buffer *buf(const char *name, DType dt, const char *dims) {
  Type *t = ten(dt, dims);
  Buffer *b = ARENA_NEW(&A, Buffer);
  b->name = name, b->dtype = dt, b->ndim = t->u.tensor.ndim, b->dims = t->u.tensor.dims;
  return b;
}

static Module *prim_module(void) {
  Module *m = module_new(&A);
  PrimFunc *p = ARENA_NEW(&A, PrimFunc);
  p->name = "linear0", p->nparams = 4;
  p->params = ARENA_ARRAY(&A, Buffer *, 4);
  p->params[0] = buf("X", DT_FLOAT32, "n, 784");
  p->params[1] = buf("W", DT_FLOAT32, "128, 784");
  p->params[2] = buf("B", DT_FLOAT32, "128");
  p->params[3] = buf("Z", DT_FLOAT32, "n, 128");
  module_add(m, (Def){.kind = DEF_PRIM, .u.prim = p});
  return m;
}

static Expr *tir_call(Module *m, const char *callee) {
  Expr *op = ops_expr(&A, ops_lookup("call_tir"), S0);
  Expr *args[2] = {expr_global(&A, callee, S0), expr_tuple(&A, 0, NULL, S0)};
  return expr_call(&A, op, 2, args, NULL, S0);
}

/* call_tir against a prim function's parameters, caller size variables, externs, tuples. */
static void test_call_tir(void) {
  Module *m = prim_module();
  Type *g = type_incomplete(&A, 0, S0); /* the callee's own type does not matter */
  Type *in3[3] = {F32("1, 784"), F32("128, 784"), F32("128")};
  Type *ok = type_tuple(&A, 3, in3, S0);
  Attrs *at = attrs("shape", ints(2, 1, 128), "dtype", as("float32"), NULL);
  g_mod = m, g_call = tir_call(m, "linear0");
  CHECK_STREQ(R("call_tir", at, g, ok), "Tensor[(1, 128), float32]");
  /* size variables in shape= belong to the caller; the prim's n binds to m */
  Type *inm[3] = {F32("m, 784"), F32("128, 784"), F32("128")};
  CHECK_STREQ(R("call_tir", attrs("shape", alist(asym("m"), ai(128), NULL), NULL), g,
                type_tuple(&A, 3, inm, S0)),
              "Tensor[(m, 128), float32]");
  CHECK_STREQ(
      R("call_tir", attrs("shape", ints(2, 2, 128), NULL), g, ok),
      "error: call_tir: output 1 is Tensor[(2, 128), float32] but @linear0's output parameter is "
      "%Z: Buffer[(n, 128), float32]");
  Type *bad[3] = {F32("1, 784"), F32("128, 100"), F32("128")};
  CHECK_STREQ(R("call_tir", at, g, type_tuple(&A, 3, bad, S0)),
              "error: call_tir: input 2 is Tensor[(128, 100), float32] but @linear0's parameter is "
              "%W: Buffer[(128, 784), float32]");
  Type *two[2] = {F32("1, 784"), F32("128, 784")};
  CHECK_STREQ(R("call_tir", at, g, type_tuple(&A, 2, two, S0)),
              "error: call_tir: @linear0 takes 3 inputs and 1 output, but 2 inputs were given");
  Type *dt[3] = {I32("1, 784"), F32("128, 784"), F32("128")};
  CHECK_STREQ(R("call_tir", at, g, type_tuple(&A, 3, dt, S0)),
              "error: call_tir: input 1 is Tensor[(1, 784), int32] but @linear0's parameter is "
              "%X: Buffer[(n, 784), float32]");
  g_call = tir_call(m, "nosuch");
  CHECK_STREQ(R("call_tir", at, g, ok), "error: call_tir: @nosuch is not a prim function");
  g_mod = NULL, g_call = NULL;
  /* run time / no module: the result comes from the attributes alone */
  CHECK_STREQ(
      R("call_tir",
        attrs("callee", as("env.linear"), "shape", ints(2, 1, 10), "dtype", as("float32"), NULL),
        ok),
      "Tensor[(1, 10), float32]");
  CHECK_STREQ(R("call_tir",
                attrs("shape", alist(ints(2, 1, 128), ints(1, 4), NULL), "dtype",
                      alist(as("float32"), as("int32"), NULL), NULL),
                g, ok),
              "(Tensor[(1, 128), float32], Tensor[(4), int32])");
  CHECK_STREQ(R("call_tir", attrs("callee", as("env.f"), "shape", ints(1, 1), NULL), g, ok),
              "error: call_tir: with callee=\"env.f\", the only argument is the tuple of inputs");
  strmap_free(&m->globals), strmap_free(&m->types), strmap_free(&m->ctors);
}

/* ───────────────────────── rows: flags and defaults ───────────────────────── */

static Expr *op_call(const char *name, Attrs *at) {
  Expr *x = expr_global(&A, "x", S0);
  return expr_call(&A, ops_expr(&A, ops_lookup(name), S0), 1, &x, at, S0);
}

/* Facts other layers ask the rows for, and attributes read with the row's
 * defaults (so a rule and a kernel cannot disagree on an omitted one). */
static void test_rows(void) {
  int tir = ops_find_flag(OP_CALL_TIR);
  CHECK(tir >= 0 && ops_expr(&A, tir, S0)->u.op.call_tir);
  CHECK(!ops_expr(&A, ops_lookup("add"), S0)->u.op.call_tir);
  CHECK(ops_has_flag(ops_lookup("reshape"), OP_VIEW) &&
        !ops_has_flag(ops_lookup("transpose"), OP_VIEW));
  CHECK(ops_has_flag(ops_lookup("concatenate"), OP_TUPLE_ARG));
  CHECK(ops_has_flag(ops_lookup("random.fold_in"), OP_KEEPS_KEY));
  CHECK(!ops_has_flag(ops_lookup("random.split"), OP_KEEPS_KEY) && !ops_has_flag(-1, 0));
  CHECK(ops_get(ops_lookup("nn.dense"))->cost == OPCOST_MATMUL);
  CHECK(ops_get(ops_lookup("nn.conv2d"))->cost == OPCOST_CONV2D);
  CHECK(ops_get(ops_lookup("exp"))->cost == OPCOST_ELEMWISE);
  CHECK(ops_get(ops_lookup("equal"))->cost == OPCOST_NONE);
  CHECK_STREQ(ops_family(ops_lookup("nn.conv2d")), "nn_conv");
  CHECK_STREQ(ops_family(ops_lookup("add")), "elemwise");
  CHECK(!ops_family(-1) && !ops_family(ops_count()));

  CHECK(op_attr_float(op_call("nn.leaky_relu", NULL), "alpha") == 0.25);
  CHECK(op_attr_float(op_call("nn.leaky_relu", attrs("alpha", af(0.5), NULL)), "alpha") == 0.5);
  CHECK(op_attr_int(op_call("nn.softmax", NULL), "axis") == -1);
  CHECK(op_attr_int(op_call("nn.bias_add", attrs("axis", ai(2), NULL)), "axis") == 2);
  CHECK(!op_attr_bool(op_call("sum", NULL), "keepdims"));
  CHECK_STREQ(op_attr_str(&A, op_call("nn.conv2d", NULL), "kernel_layout"), "OIHW");
  CHECK_STREQ(op_attr_str(&A, op_call("take", attrs("mode", as("wrap"), NULL)), "mode"), "wrap");
  int64_t v[4];
  CHECK(op_attr_ints(op_call("nn.conv2d", NULL), "strides", v, 4) == 2 && v[0] == 1 && v[1] == 1);
  CHECK(op_attr_ints(op_call("sum", NULL), "axis", v, 4) == -1);
  CHECK(op_attr_ints(op_call("sum", attrs("axis", anone(), NULL)), "axis", v, 4) == -1);
  CHECK(op_attr_ints(op_call("sum", attrs("axis", ai(1), NULL)), "axis", v, 4) == 1 && v[0] == 1);
  CHECK(op_attr_is_none(op_call("take", NULL), "axis"));
  CHECK(!op_attr_is_none(op_call("take", attrs("axis", ai(0), NULL)), "axis"));
}

/* Runs the tests on one arena; the exit status is the failure report. */
/* The rule tables of lower/ and ad/, registered by op name: every row
 * names a registered op (the real tables build), an op has its own rule
 * (reshape_like shares reshape's), and a row naming an unknown op or an op
 * twice is an error naming it. */
static void test_rule_tables(void) {
  int add = ops_lookup("add"), sort = ops_lookup("sort"), argsort = ops_lookup("argsort");
  CHECK(compute_rule(add) && !compute_rule(sort) && !compute_rule(-1) &&
        !compute_rule(ops_count()));
  CHECK(compute_rule(ops_lookup("reshape_like")) == compute_rule(ops_lookup("reshape")));
  CHECK(compute_rule(ops_lookup("add")) != compute_rule(ops_lookup("subtract")));
  CHECK(grad_rule(add) && grad_rule(sort) && grad_rule(sort) != &grad_zero);
  CHECK(grad_rule(argsort) == &grad_zero && grad_rule(ops_lookup("equal")) == &grad_zero);
  CHECK(!grad_rule(ops_lookup("image.grid_sample_grad")) && !grad_rule(-1));
  /* rows naming an unknown op, or one op twice */
  const void **out = calloc((size_t)ops_count(), sizeof *out);
  char err[128] = "";
  static const ComputeDef bad_compute[] = {{"add", NULL}, {"no_such_op", NULL}, {NULL, NULL}};
  const ComputeDef *ct[] = {compute_family_elemwise, bad_compute};
  CHECK(!compute_rules_index(ct + 1, 1, out, err, sizeof err));
  CHECK_STREQ(err, "compute rule row names unknown op `no_such_op`");
  memset(out, 0, sizeof *out * (size_t)ops_count());
  CHECK(!compute_rules_index(ct, 2, out, err, sizeof err));
  CHECK_STREQ(err, "two compute rule rows for op `add`");
  static const GradDef bad_grad[] = {{"nn.dense", &grad_zero}, {"nn.dens", &grad_zero}, {0}};
  const GradDef *gt[] = {bad_grad};
  memset(out, 0, sizeof *out * (size_t)ops_count());
  CHECK(!grad_rules_index(gt, 1, out, err, sizeof err));
  CHECK_STREQ(err, "gradient rule row names unknown op `nn.dens`");
  CHECK(out[ops_lookup("nn.dense")] == &bad_grad[0]);
  free(out);
}

/* The elementwise ops are the rows of ops/elemwise_table.h: each row's op
 * is registered with the row's doc and cost, lowers (a compute rule), has
 * its gradient rule and a reference kernel; a row computed by a TIR float
 * intrinsic names one that is a one-argument float function. */
static void check_elemwise_row(const char *name, const char *doc, OpCost cost, bool zero,
                               int nargs) {
  int i = ops_lookup(name);
  const OpDef *d = ops_get(i);
  CHECK(d && d->min_args == nargs && d->max_args == nargs);
  if (!d) return;
  CHECK_STREQ(d->doc, doc);
  CHECK(d->cost == cost && compute_rule(i) && kernels_get(i));
  CHECK(grad_rule(i) && (grad_rule(i) == &grad_zero) == zero);
}

static void test_elemwise_table(void) {
  int n = 0;
#define X(name, CODE, row, kernel, cost, grad, doc) \
  check_elemwise_row(#name, doc, OPCOST_##cost, !strcmp(#grad, "zero"), 2), n++;
  ELEMWISE_BINARY(X)
#undef X
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc) \
  check_elemwise_row(#name, doc, OPCOST_##cost, !strcmp(#grad, "zero"), 1), n++;
  ELEMWISE_UNARY(X)
#undef X
  int family = 0; /* the elemwise family: the rows, where, cast and clip */
  for (int i = 0; i < ops_count(); i++) family += !strcmp(ops_family(i), "elemwise");
  CHECK(n > 0 && n == family - 3);
  enum { PI_NONE = -1 };
#define X(name, CODE, row, kind, fn, sem, cost, grad, doc)                   \
  CHECK(PI_##fn < 0 || (prim_intrinsic_arity((PrimIntrinsic)PI_##fn) == 1 && \
                        prim_intrinsic_kind((PrimIntrinsic)PI_##fn) == 'f'));
  ELEMWISE_UNARY(X)
#undef X
  CHECK_STREQ(prim_intrinsic_name(PI_ATANH), "atanh");
}

int main(void) {
  arena_init(&A);
  test_registry();
  test_check_attrs();
  test_elemwise();
  test_unify_hook();
  test_reduce();
  test_dense();
  test_nn_misc();
  test_conv_pool();
  test_reshape();
  test_transform_shapes();
  test_strided_slice();
  test_creation();
  test_arange();
  test_dyn();
  test_random();
  test_call_tir();
  test_rows();
  test_rule_tables();
  test_elemwise_table();
  arena_free(&A);
  return check_report("test_ops");
}
