/* onnx.c — the ONNX importer's reader and driver (onnx.h): the model file
 * through protobuf-c, its tensors and attributes, the graph walked node by
 * node through the op table's converters, and the function built from the
 * let chain they leave.
 *
 * Order of work, so that a bad model fails early and completely:
 *   1. the file: readable, a ModelProto, with a graph and a default-domain
 *      opset the converters know (none when every node is of another
 *      domain);
 *   2. every node's op, by the opset the model imports of its domain (the
 *      op table's row for that version): each unsupported op (with its
 *      domain and opset) and each Relay op missing from the registry is
 *      listed in ONE error;
 *   3. initializers (raw, typed or external data) and graph inputs;
 *   4. the nodes in graph order (ONNX requires topological order): the
 *      first converter error stops the import;
 *   5. the outputs, checked against the types the model declares for them
 *      (and for the values of value_info): a different dtype, rank or
 *      static dim is an error naming both types, a symbolic or unknown
 *      declared dim where rly knows the size, or another float width, a
 *      warning; then the parameters actually used, the function.
 * The module is touched only in step 5, after everything succeeded. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_int.h"
#include "ir/walk.h"

static const Span no_span;

/* ───────────────────────── errors ───────────────────────── */

const char *fe_node_text(OnnxCx *cx) {
  const Onnx__NodeProto *n = cx->node;
  if (n->name && *n->name)
    return arena_printf(cx->a, "node #%d '%s' (%s)", cx->node_index, n->name, n->op_type);
  return arena_printf(cx->a, "node #%d (%s)", cx->node_index, n->op_type);
}

bool fe_fail(OnnxCx *cx, const char *fmt, ...) {
  if (cx->failed) return false; /* the first error of a node says it best */
  cx->failed = true;
  StrBuf b = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&b, fmt, ap);
  va_end(ap);
  if (cx->node)
    diag_error(cx->d, no_span, "%s: %s: %s", cx->file, fe_node_text(cx), b.data);
  else
    diag_error(cx->d, no_span, "%s: %s", cx->file, b.data);
  sb_free(&b);
  return false;
}

/* ───────────────────────── attributes ───────────────────────── */

const Onnx__AttributeProto *oa_get(OnnxCx *cx, const char *name) {
  for (size_t i = 0; i < cx->node->n_attribute; i++)
    if (cx->node->attribute[i]->name && strcmp(cx->node->attribute[i]->name, name) == 0)
      return cx->node->attribute[i];
  return NULL;
}

static const char *attr_type_name(int t) {
  static const char *const names[] = {"undefined",      "float",   "int",    "string",
                                      "tensor",         "graph",   "floats", "ints",
                                      "strings",        "tensors", "graphs", "sparse tensor",
                                      "sparse tensors", "type",    "types"};
  return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

/* The attribute if it has type `want`; NULL when absent or (after
 * fe_fail) of another type. */
static const Onnx__AttributeProto *typed(OnnxCx *cx, const char *name, int want) {
  const Onnx__AttributeProto *at = oa_get(cx, name);
  if (!at || (int)at->type == want) return at;
  fe_fail(cx, "attribute '%s' must be %s, got %s", name, attr_type_name(want),
          attr_type_name((int)at->type));
  return NULL;
}

int64_t oa_int(OnnxCx *cx, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *at = typed(cx, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  return at ? at->i : dflt;
}

double oa_float(OnnxCx *cx, const char *name, double dflt) {
  const Onnx__AttributeProto *at = typed(cx, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  return at ? at->f : dflt;
}

const char *oa_str(OnnxCx *cx, const char *name, const char *dflt) {
  const Onnx__AttributeProto *at = typed(cx, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  return at ? arena_strndup(cx->a, (const char *)at->s.data, at->s.len) : dflt;
}

int oa_ints(OnnxCx *cx, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *at = typed(cx, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (!at) return -1;
  if (at->n_ints > (size_t)max)
    return fe_fail(cx, "attribute '%s' has %zu values (at most %d)", name, at->n_ints, max), -1;
  for (size_t i = 0; i < at->n_ints; i++) out[i] = at->ints[i];
  return (int)at->n_ints;
}

int oa_floats(OnnxCx *cx, const char *name, double *out, int max) {
  const Onnx__AttributeProto *at = typed(cx, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  if (!at) return -1;
  if (at->n_floats > (size_t)max)
    return fe_fail(cx, "attribute '%s' has %zu values (at most %d)", name, at->n_floats, max), -1;
  for (size_t i = 0; i < at->n_floats; i++) out[i] = at->floats[i];
  return (int)at->n_floats;
}

/* ───────────────────────── tensors ───────────────────────── */

/* X(ONNX data type, its name, dtype or DT_INVALID) */
#define ONNX_DTYPES(X)                \
  X(1, "FLOAT", DT_FLOAT32)           \
  X(2, "UINT8", DT_UINT8)             \
  X(3, "INT8", DT_INT8)               \
  X(4, "UINT16", DT_UINT16)           \
  X(5, "INT16", DT_INT16)             \
  X(6, "INT32", DT_INT32)             \
  X(7, "INT64", DT_INT64)             \
  X(8, "STRING", DT_INVALID)          \
  X(9, "BOOL", DT_BOOL)               \
  X(10, "FLOAT16", DT_FLOAT16)        \
  X(11, "DOUBLE", DT_FLOAT64)         \
  X(12, "UINT32", DT_UINT32)          \
  X(13, "UINT64", DT_UINT64)          \
  X(14, "COMPLEX64", DT_INVALID)      \
  X(15, "COMPLEX128", DT_INVALID)     \
  X(16, "BFLOAT16", DT_BFLOAT16)      \
  X(17, "FLOAT8E4M3FN", DT_INVALID)   \
  X(18, "FLOAT8E4M3FNUZ", DT_INVALID) \
  X(19, "FLOAT8E5M2", DT_INVALID)     \
  X(20, "FLOAT8E5M2FNUZ", DT_INVALID)

DType onnx_dtype(int32_t data_type, const char **name) {
  switch (data_type) {
#define X(code, n, dt)   \
  case code:             \
    if (name) *name = n; \
    return dt;
    ONNX_DTYPES(X)
#undef X
    default:
      if (name) *name = "UNDEFINED";
      return DT_INVALID;
  }
}

/* The shape of t (checked: non-negative dims, no overflow). */
static bool tensor_shape(OnnxCx *cx, const Onnx__TensorProto *t, const char *what, int64_t *shape,
                         int64_t *numel) {
  if (t->n_dims > TENSOR_MAX_RANK)
    return fe_fail(cx, "%s has rank %zu (at most %d)", what, t->n_dims, TENSOR_MAX_RANK);
  int64_t n = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n) || n > ((int64_t)1 << 40))
      return fe_fail(cx, "%s has an invalid shape (dim %zu is %lld)", what, i,
                     (long long)t->dims[i]);
    shape[i] = t->dims[i];
  }
  *numel = n;
  return true;
}

/* Values from the typed repeated fields (float_data, int32_data, ...):
 * the field ONNX stores each data type in. */
static size_t typed_count(const Onnx__TensorProto *t) {
  int32_t dt = t->data_type;
  if (dt == 1) return t->n_float_data;
  if (dt == 7) return t->n_int64_data;
  if (dt == 11) return t->n_double_data;
  if (dt == 12 || dt == 13) return t->n_uint64_data;
  return t->n_int32_data;
}

static bool typed_data(OnnxCx *cx, const Onnx__TensorProto *t, Tensor *out, const char *what) {
  size_t have = typed_count(t);
  int32_t dt = t->data_type;
  if (have != (size_t)out->numel)
    return fe_fail(cx, "%s holds %zu values, its shape needs %lld", what, have,
                   (long long)out->numel);
  for (int64_t i = 0; i < out->numel; i++) {
    if (dt == 1)
      tensor_set_f64(out, i, t->float_data[i]);
    else if (dt == 7)
      tensor_set_i64(out, i, t->int64_data[i]);
    else if (dt == 11)
      tensor_set_f64(out, i, t->double_data[i]);
    else if (dt == 12 || dt == 13)
      tensor_set_u64(out, i, t->uint64_data[i]);
    else if (dt == 10 || dt == 16)
      ((uint16_t *)out->data)[i] = (uint16_t)t->int32_data[i]; /* the bits */
    else
      tensor_set_i64(out, i, t->int32_data[i]);
  }
  return true;
}

static const char *external_key(const Onnx__TensorProto *t, const char *key) {
  for (size_t i = 0; i < t->n_external_data; i++)
    if (t->external_data[i]->key && strcmp(t->external_data[i]->key, key) == 0)
      return t->external_data[i]->value;
  return NULL;
}

/* Data stored in a file beside the model (data_location EXTERNAL):
 * `location` relative to the model's folder, optional `offset`/`length`. */
static bool external_data(OnnxCx *cx, const Onnx__TensorProto *t, Tensor *out, const char *what) {
  const char *loc = external_key(t, "location"), *off = external_key(t, "offset");
  if (!loc || !*loc || loc[0] == '/' || strstr(loc, ".."))
    return fe_fail(cx, "%s: external data without a valid relative location", what);
  const char *slash = strrchr(cx->file, '/');
  char *path =
      arena_printf(cx->a, "%.*s%s", slash ? (int)(slash - cx->file + 1) : 0, cx->file, loc);
  size_t len = 0;
  char *bytes = read_whole_file(path, &len);
  if (!bytes)
    return fe_fail(cx, "%s: its external data file '%s' cannot be read: %s", what, path,
                   strerror(errno ? errno : ENOENT));
  unsigned long long o = off ? strtoull(off, NULL, 10) : 0, need = tensor_nbytes(out);
  bool ok = o <= len && len - o >= need;
  if (ok && need) memcpy(out->data, bytes + o, need);
  free(bytes);
  if (!ok)
    return fe_fail(cx, "%s: external data file '%s' has %zu bytes, %llu needed at offset %llu",
                   what, path, len, need, o);
  return true;
}

/* Whether the data held in the model (raw bytes or a typed field) is as
 * much as the shape needs: checked before the tensor is allocated, so that
 * a large shape declared over little data is an error, not an allocation.
 * Data in a file beside the model is checked against the file. */
static bool data_fits(OnnxCx *cx, const Onnx__TensorProto *t, DType dt, int64_t numel,
                      const char *what) {
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return true;
  size_t need = (size_t)numel * (size_t)dtype_bytes(dt);
  if (t->has_raw_data)
    return t->raw_data.len == need ||
           fe_fail(cx, "%s has %zu bytes of raw data, its shape and type need %zu", what,
                   t->raw_data.len, need);
  return typed_count(t) == (size_t)numel || fe_fail(cx, "%s holds %zu values, its shape needs %lld",
                                                    what, typed_count(t), (long long)numel);
}

/* The tensor from wherever ONNX keeps its data: a file beside the model,
 * raw little-endian bytes, or the typed field of its data type; every size
 * is checked against the shape first. */
Tensor *onnx_tensor(OnnxCx *cx, const Onnx__TensorProto *t, const char *what) {
  const char *tn;
  DType dt = onnx_dtype(t->data_type, &tn);
  if (dt == DT_INVALID)
    return fe_fail(cx, "%s has data type %s, which rly does not support", what, tn), NULL;
  int64_t shape[TENSOR_MAX_RANK], numel = 0;
  if (!tensor_shape(cx, t, what, shape, &numel) || !data_fits(cx, t, dt, numel, what)) return NULL;
  Tensor *out = tensor_new(cx->a, dt, (int)t->n_dims, shape);
  bool ok;
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    ok = external_data(cx, t, out, what);
  } else if (t->has_raw_data) {
    ok = t->raw_data.len == tensor_nbytes(out) ||
         fe_fail(cx, "%s has %zu bytes of raw data, its shape and type need %zu", what,
                 t->raw_data.len, tensor_nbytes(out));
    if (ok && t->raw_data.len) memcpy(out->data, t->raw_data.data, t->raw_data.len);
  } else {
    ok = typed_data(cx, t, out, what);
  }
  return ok ? out : NULL;
}

/* ───────────────────────── names ───────────────────────── */

/* A valid, unused parameter name from an ONNX name: other characters
 * become `_`, a leading non-letter gets `v`, a taken name a suffix. */
static const char *param_name(OnnxCx *cx, StrMap *taken, const char *onnx) {
  size_t n = strlen(onnx);
  char *s = arena_alloc(cx->a, n + 2);
  size_t k = 0;
  if (!(isalpha((unsigned char)onnx[0]) || onnx[0] == '_')) s[k++] = 'v';
  for (size_t i = 0; i < n; i++)
    s[k++] = isalnum((unsigned char)onnx[i]) || onnx[i] == '_' ? onnx[i] : '_';
  const char *name = s;
  for (int i = 1; strmap_get(taken, name); i++) name = arena_printf(cx->a, "%s_%d", s, i);
  strmap_put(taken, name, (void *)1);
  return name;
}

/* ───────────────────────── the model ───────────────────────── */

typedef struct Import {
  OnnxCx cx;
  Onnx__ModelProto *model;
  const Onnx__GraphProto *g;
  StrMap taken;     /* parameter names */
  StrMap dims;      /* dim_param → its size variable's name */
  StrMap dim_taken; /* size variable names */
  PtrVec inputs;    /* Var * of graph inputs */
  PtrVec weights;   /* Var * of initializers, in order */
  PtrVec wvalues;   /* their Tensor * */
} Import;

/* The file as a ModelProto: unreadable, unparsable (truncated, not
 * protobuf) and graph-less files are errors; a file that parses is only
 * taken for ONNX with a graph and an IR version. */
static Onnx__ModelProto *read_model(OnnxCx *cx, const char *path) {
  size_t len = 0;
  errno = 0;
  char *bytes = read_whole_file(path, &len);
  if (!bytes) {
    fe_fail(cx, "cannot read the model: %s", strerror(errno ? errno : ENOENT));
    return NULL;
  }
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)bytes);
  free(bytes);
  if (!m) {
    fe_fail(cx, "not an ONNX model (the file is truncated or is not an ONNX protobuf)");
    return NULL;
  }
  if (!m->graph || !m->has_ir_version) {
    fe_fail(cx, "not an ONNX model (%s)", m->graph ? "no IR version" : "no graph");
    onnx__model_proto__free_unpacked(m, NULL);
    return NULL;
  }
  return m;
}

static bool default_domain(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

/* A node's domain as the op table spells it ("" for ai.onnx). */
static const char *node_domain(const Onnx__NodeProto *n) {
  return default_domain(n->domain) ? "" : n->domain;
}

/* The opset the model imports of domain dom ("" for ai.onnx), or -1. */
static int64_t domain_opset(const Import *im, const char *dom) {
  int64_t v = -1;
  for (size_t i = 0; i < im->model->n_opset_import; i++) {
    const char *d = im->model->opset_import[i]->domain;
    if (*dom ? d && strcmp(d, dom) == 0 : default_domain(d))
      v = im->model->opset_import[i]->version;
  }
  return v;
}

/* The opset of the node's domain, by which its op's row is chosen. */
static int64_t node_opset(const Import *im, const Onnx__NodeProto *n) {
  const char *dom = node_domain(n);
  return *dom ? domain_opset(im, dom) : im->cx.opset;
}

/* The default domain's opset, which the converters must know.  A model
 * whose nodes are all of other domains (ai.onnx.preview.training) may
 * import none. */
static bool read_opset(Import *im) {
  im->cx.opset = domain_opset(im, "");
  if (im->cx.opset < 0) {
    for (size_t i = 0; i < im->g->n_node; i++)
      if (!*node_domain(im->g->node[i]))
        return fe_fail(&im->cx,
                       "the model imports no opset of the ai.onnx domain, which node #%zu "
                       "(%s) is of",
                       i, im->g->node[i]->op_type ? im->g->node[i]->op_type : "?");
    return true;
  }
  if (im->cx.opset < ONNX_MIN_OPSET || im->cx.opset > ONNX_MAX_OPSET)
    return fe_fail(&im->cx, "opset %lld of the ai.onnx domain is not supported (%d to %d are)",
                   (long long)im->cx.opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
  return true;
}

/* ───────────────────────── step 2: the ops ───────────────────────── */

typedef struct Missing {
  const char *what; /* "ai.onnx.Foo opset 13" or "tile" */
  const char *note; /* after the nodes (NULL: none) */
  StrBuf nodes;     /* "#3 'a', #7 'b'" (the first few) */
  int count;
} Missing;

static Missing *note_missing(PtrVec *list, Arena *a, const char *what, int index,
                             const char *node) {
  Missing *m = NULL;
  for (size_t i = 0; i < list->len && !m; i++)
    if (strcmp(((Missing *)list->items[i])->what, what) == 0) m = list->items[i];
  if (!m) {
    m = ARENA_NEW(a, Missing);
    m->what = arena_strdup(a, what);
    vec_push(list, m);
  }
  if (m->count < 3)
    sb_printf(&m->nodes, "%s#%d%s%s%s", m->count ? ", " : "", index, node && *node ? " '" : "",
              node && *node ? node : "", node && *node ? "'" : "");
  else if (m->count == 3)
    sb_puts(&m->nodes, ", ...");
  m->count++;
  return m;
}

/* One error listing the entries of `list`; frees them. */
static void report_missing(OnnxCx *cx, PtrVec *list, const char *head) {
  if (!list->len) return;
  StrBuf b = {0};
  for (size_t i = 0; i < list->len; i++) {
    Missing *m = list->items[i];
    sb_printf(&b, "%s%s (%s %s%s%s)", i ? ", " : "", m->what, m->count == 1 ? "node" : "nodes",
              m->nodes.data, m->note ? "; " : "", m->note ? m->note : "");
    sb_free(&m->nodes);
  }
  diag_error(cx->d, no_span, "%s: %s: %s", cx->file, head, b.data);
  sb_free(&b);
  vec_free(list);
  cx->failed = true;
}

/* The Relay ops a row needs that the registry lacks, noted per op. */
static void check_relay_ops(const OnnxOpDef *row, PtrVec *missing, Arena *a, int index,
                            const char *node) {
  const char *p = row->relay_ops;
  while (*p) {
    while (*p == ' ') p++;
    const char *e = p;
    while (*e && *e != ' ') e++;
    if (e > p) {
      char *name = arena_strndup(a, p, (size_t)(e - p));
      if (ops_lookup(name) < 0)
        note_missing(missing, a, arena_printf(a, "`%s` (for %s)", name, row->op_type), index, node);
    }
    p = e;
  }
}

/* Notes a node whose op has no row for its domain's opset: the op, its
 * domain and version, and why (no row at all, rows only from a later
 * opset, or a domain the model does not import). */
static void note_unknown(Import *im, PtrVec *unknown, const Onnx__NodeProto *n, int index,
                         int64_t opset, int first) {
  const char *dom = node_domain(n), *op = n->op_type ? n->op_type : "?";
  Arena *a = im->cx.a;
  const char *what =
      opset < 0 ? arena_printf(a, "%s.%s", *dom ? dom : "ai.onnx", op)
                : arena_printf(a, "%s.%s opset %lld", *dom ? dom : "ai.onnx", op, (long long)opset);
  Missing *m = note_missing(unknown, a, what, index, n->name);
  if (opset < 0)
    m->note = arena_printf(a, "the model imports no opset of %s", dom);
  else if (first > opset)
    m->note = arena_printf(a, "supported from opset %d", first);
}

/* The ops of g's nodes and of their subgraphs (If's branches, Loop's
 * body), each looked up for its domain's opset, noted in unknown / relay. */
static void note_ops(Import *im, const Onnx__GraphProto *g, PtrVec *unknown, PtrVec *relay) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    int64_t opset = node_opset(im, n);
    int first;
    const OnnxOpDef *row =
        onnx_op_find(node_domain(n), n->op_type ? n->op_type : "", opset, &first);
    if (!row)
      note_unknown(im, unknown, n, (int)i, opset, first);
    else
      check_relay_ops(row, relay, im->cx.a, (int)i, n->name);
    for (size_t k = 0; k < n->n_attribute; k++)
      if (n->attribute[k]->g) note_ops(im, n->attribute[k]->g, unknown, relay);
  }
}

/* Every node's op is in the table, and every Relay op its converter may
 * emit is registered; otherwise one error lists them all. */
static bool check_ops(Import *im) {
  PtrVec unknown = {0}, relay = {0};
  note_ops(im, im->g, &unknown, &relay);
  size_t nu = unknown.len, nr = relay.len;
  report_missing(&im->cx, &unknown,
                 nu == 1 ? "an op of the model is not supported"
                         : arena_printf(im->cx.a, "%zu ops of the model are not supported", nu));
  if (nu) diag_hint(im->cx.d, "the supported ops: %s", onnx_supported_ops());
  report_missing(&im->cx, &relay,
                 nr == 1 ? "a Relay op the model needs is not in this build's op registry"
                         : arena_printf(im->cx.a,
                                        "%zu Relay ops the model needs are not in this build's "
                                        "op registry",
                                        nr));
  return !nu && !nr;
}

/* ───────────────────────── step 3: initializers, inputs ───────────────────────── */

static FeVal *param_val(Import *im, Var *v, Type *ty, const Tensor *value) {
  FeVal *fv = ARENA_NEW(im->cx.a, FeVal);
  fv->expr = expr_var(im->cx.a, v, no_span);
  fv->ty = ty, fv->value = value;
  return fv;
}

static Type *tensor_type_of(Arena *a, const Tensor *t) {
  Dim *dims = ARENA_ARRAY(a, Dim, t->ndim ? t->ndim : 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = dim_const(t->shape[i]);
  return type_tensor(a, t->dtype, t->ndim, dims, no_span);
}

static bool read_initializers(Import *im) {
  OnnxCx *cx = &im->cx;
  for (size_t i = 0; i < im->g->n_initializer; i++) {
    const Onnx__TensorProto *t = im->g->initializer[i];
    const char *name = t->name ? t->name : "";
    Tensor *v = onnx_tensor(cx, t, arena_printf(cx->a, "initializer '%s'", name));
    if (!v) return false;
    Type *ty = tensor_type_of(cx->a, v);
    Var *var = var_new(cx->a, param_name(cx, &im->taken, name), ty, no_span);
    vec_push(&im->weights, var);
    vec_push(&im->wvalues, v);
    strmap_put(&cx->vals, name, param_val(im, var, ty, v));
  }
  return true;
}

/* The size variable of a dim_param: one per name, shared by every input
 * that names it. */
static const char *dim_name(Import *im, const char *param) {
  const char *have = strmap_get(&im->dims, param);
  if (have) return have;
  const char *name = param_name(&im->cx, &im->dim_taken, param);
  strmap_put(&im->dims, arena_strdup(im->cx.a, param), (void *)name);
  return name;
}

/* A tensor type from its ONNX form: dim_value → a constant dim, dim_param
 * → a size variable (by dim_name; `?` when im is NULL: inside a sequence,
 * each element has its own shape), nothing → `?`.  NULL for an absent
 * shape (unknown rank, which a Relay type cannot say). */
static Type *tensor_type_proto(Import *im, OnnxCx *cx, const Onnx__TypeProto__Tensor *tt,
                               const char *name) {
  const char *tn;
  DType dt = onnx_dtype(tt->elem_type, &tn);
  if (dt == DT_INVALID)
    return fe_fail(cx, "%s has element type %s, which rly does not support", name, tn), NULL;
  if (!tt->shape && !im) return type_incomplete(cx->a, 0, no_span); /* a sequence's element */
  if (!tt->shape) return fe_fail(cx, "%s is a tensor of unknown rank", name), NULL;
  int n = (int)tt->shape->n_dim;
  if (n > TENSOR_MAX_RANK) return fe_fail(cx, "%s has rank %d", name, n), NULL;
  Dim *dims = ARENA_ARRAY(cx->a, Dim, n ? n : 1);
  for (int i = 0; i < n; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
      dims[i] = dim_const(d->dim_value);
    else if (im && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
             *d->dim_param)
      dims[i] = (Dim){DIM_VAR, 0, dim_name(im, d->dim_param)};
    else
      dims[i] = dim_any();
  }
  return type_tensor(cx->a, dt, n, dims, no_span);
}

static Type *type_proto(Import *im, OnnxCx *cx, const Onnx__TypeProto *tp, const char *name) {
  if (!tp) return fe_fail(cx, "%s has no type", name), NULL;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return tensor_type_proto(im, cx, tp->tensor_type, name);
  const char *adt = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE   ? "List"
                    : tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ? "Option"
                                                                              : NULL;
  if (!adt) return fe_fail(cx, "%s is not a tensor, a sequence or an optional", name), NULL;
  const Onnx__TypeProto *et = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                                  ? tp->sequence_type->elem_type
                                  : tp->optional_type->elem_type;
  Type *elem = type_proto(adt[0] == 'L' ? NULL : im, cx, et, name);
  return elem ? type_adt(cx->a, adt, 1, &elem, no_span) : NULL;
}

Type *onnx_type_proto(OnnxCx *cx, const Onnx__TypeProto *tp, const char *what) {
  return type_proto(NULL, cx, tp, what);
}

/* A graph input's type: a tensor's element type and dims; a sequence is a
 * List, an optional an Option of its element's type. */
static Type *input_type(Import *im, const Onnx__ValueInfoProto *vi) {
  return type_proto(im, &im->cx, vi->type, arena_printf(im->cx.a, "graph input '%s'", vi->name));
}

static bool read_inputs(Import *im) {
  OnnxCx *cx = &im->cx;
  for (size_t i = 0; i < im->g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = im->g->input[i];
    if (!vi->name || strmap_get(&cx->vals, vi->name)) continue; /* an initializer (IR < 4) */
    Type *ty = input_type(im, vi);
    if (!ty) return false;
    Var *var = var_new(cx->a, param_name(cx, &im->taken, vi->name), ty, no_span);
    vec_push(&im->inputs, var);
    strmap_put(&cx->vals, vi->name, param_val(im, var, ty, NULL));
  }
  return true;
}

/* ───────────────────────── step 4: the nodes ───────────────────────── */

/* The node's inputs as values (NULL for an omitted optional input),
 * checked against the row's arity. */
static bool node_inputs(OnnxCx *cx, const Onnx__NodeProto *n) {
  int nin = (int)n->n_input;
  while (nin > 0 && !*n->input[nin - 1]) nin--; /* trailing "" are omitted */
  const OnnxOpDef *row = cx->row;
  if (nin < row->min_in || (row->max_in >= 0 && nin > row->max_in)) {
    if (row->max_in == row->min_in)
      return fe_fail(cx, "takes %d input%s, got %d", row->min_in, row->min_in == 1 ? "" : "s", nin);
    if (row->max_in < 0) return fe_fail(cx, "takes at least %d inputs, got %d", row->min_in, nin);
    return fe_fail(cx, "takes %d to %d inputs, got %d", row->min_in, row->max_in, nin);
  }
  cx->nin = nin;
  cx->in = ARENA_ARRAY(cx->a, FeVal *, nin ? nin : 1);
  for (int i = 0; i < nin; i++) {
    if (!*n->input[i] && i < row->min_in) /* the converters read required inputs unchecked */
      return fe_fail(cx, "input %d is required, but its name is empty", i);
    if (!*n->input[i]) continue;
    cx->in[i] = strmap_get(&cx->vals, n->input[i]);
    if (!cx->in[i])
      return fe_fail(cx,
                     "input %d ('%s') is not a graph input, an initializer or the output of an "
                     "earlier node",
                     i, n->input[i]);
    if (cx->in[i]->fields) return fe_fail(cx, "input %d ('%s') is not a tensor", i, n->input[i]);
  }
  return true;
}

static bool convert_node(OnnxCx *cx, const Onnx__GraphProto *g, int index) {
  const Onnx__NodeProto *n = g->node[index];
  cx->node = n, cx->node_index = index, cx->graph = g;
  /* every OnnxCx converting nodes is its Import's first member */
  cx->row = onnx_op_find(node_domain(n), n->op_type, node_opset((const Import *)cx, n), NULL);
  if (!cx->row) return fe_fail(cx, "the op is not supported");
  if (!node_inputs(cx, n)) return false;
  cx->nout = (int)n->n_output;
  cx->out = ARENA_ARRAY(cx->a, FeVal *, cx->nout ? cx->nout : 1);
  if (!cx->row->convert(cx) || cx->failed) return fe_fail(cx, "conversion failed");
  for (int k = 0; k < cx->nout; k++) {
    if (!*n->output[k]) continue;
    if (!cx->out[k]) return fe_fail(cx, "output %d ('%s') is not supported", k, n->output[k]);
    strmap_put(&cx->vals, n->output[k], cx->out[k]);
  }
  return true;
}

static bool convert_nodes(Import *im) {
  for (size_t i = 0; i < im->g->n_node; i++)
    if (!convert_node(&im->cx, im->g, (int)i)) return false;
  im->cx.node = NULL;
  return true;
}

/* See onnx_int.h. */
bool onnx_convert_again(OnnxCx *cx, const Onnx__GraphProto *g, int index) {
  const Onnx__NodeProto *node = cx->node;
  const Onnx__GraphProto *graph = cx->graph;
  int at = cx->node_index, cnin = cx->nin, cnout = cx->nout;
  const OnnxOpDef *row = cx->row;
  FeVal **cin = cx->in, **cout = cx->out;
  bool ok = convert_node(cx, g, index);
  cx->node = node, cx->node_index = at, cx->row = row, cx->graph = graph;
  cx->nin = cnin, cx->nout = cnout, cx->in = cin, cx->out = cout;
  return ok;
}

const char *onnx_node_version(OnnxCx *cx, const Onnx__NodeProto *n) {
  const char *dom = node_domain(n);
  return arena_printf(cx->a, "%s opset %lld", *dom ? dom : "ai.onnx",
                      (long long)node_opset((const Import *)cx, n));
}

/* See onnx_int.h.  The subgraph's names join the graph's value map (ONNX
 * forbids a subgraph to shadow an outer name); the converting node's
 * state is saved around the subgraph's nodes. */
bool onnx_subgraph(OnnxCx *cx, const Onnx__GraphProto *g, int nin, FeVal **in) {
  const Onnx__NodeProto *node = cx->node;
  const Onnx__GraphProto *graph = cx->graph;
  int index = cx->node_index, cnin = cx->nin, cnout = cx->nout;
  const OnnxOpDef *row = cx->row;
  FeVal **cin = cx->in, **cout = cx->out;
  bool ok = (size_t)nin == g->n_input || fe_fail(cx, "its subgraph '%s' takes %zu inputs, %d given",
                                                 g->name ? g->name : "", g->n_input, nin);
  for (int i = 0; ok && i < nin; i++) strmap_put(&cx->vals, g->input[i]->name, in[i]);
  for (size_t i = 0; ok && i < g->n_initializer; i++) {
    Tensor *t = onnx_tensor(cx, g->initializer[i], "a subgraph initializer");
    ok = t && (strmap_put(&cx->vals, g->initializer[i]->name, fe_const(cx, t)), true);
  }
  for (size_t i = 0; ok && i < g->n_node; i++) ok = convert_node(cx, g, (int)i);
  cx->node = node, cx->node_index = index, cx->row = row, cx->graph = graph;
  cx->nin = cnin, cx->nout = cnout, cx->in = cin, cx->out = cout;
  for (size_t i = 0; ok && i < g->n_output; i++)
    if (!strmap_get(&cx->vals, g->output[i]->name))
      ok = fe_fail(cx, "subgraph output '%s' is not produced by any node", g->output[i]->name);
  return ok;
}

FeVal *onnx_subgraph_output(OnnxCx *cx, const Onnx__GraphProto *g, int i) {
  return strmap_get(&cx->vals, g->output[i]->name);
}

/* ───────────────────────── step 5: the function ───────────────────────── */

typedef struct Uses {
  U64Map vars; /* Var * used */
} Uses;

static bool note_var(void *p, Expr *e) {
  if (e->kind == EX_VAR) u64map_insert(&((Uses *)p)->vars, PTR_KEY(e->u.var));
  return true;
}

/* The body: the live bindings (those the result reaches) around the
 * result; *uses gets every variable the body reads. */
static Expr *live_body(OnnxCx *cx, Expr *result, Uses *uses) {
  expr_walk(result, note_var, uses);
  size_t n = cx->let_vars.len;
  bool *live = calloc(n ? n : 1, sizeof *live);
  if (!live) rly_oom();
  for (size_t i = n; i-- > 0;) {
    live[i] = u64map_find(&uses->vars, PTR_KEY(cx->let_vars.items[i])) != NULL;
    if (live[i]) expr_walk(cx->let_vals.items[i], note_var, uses);
  }
  Expr *body = result;
  size_t last = n;
  if (n && result->kind == EX_VAR && result->u.var == cx->let_vars.items[n - 1])
    body = cx->let_vals.items[--last]; /* the last binding is the result: `f(...)`, not `%9` */
  for (size_t i = last; i-- > 0;)
    if (live[i])
      body = expr_let(cx->a, cx->let_vars.items[i], cx->let_vals.items[i], body, no_span);
  free(live);
  return body;
}

/* A declared type as text, "Tensor[(2, N, ?), float32]" (no shape:
 * "Tensor[?, float32]"). */
static const char *declared_text(OnnxCx *cx, const Onnx__TypeProto__Tensor *tt) {
  StrBuf b = {0};
  const char *tn = "?";
  DType dt = tt->elem_type ? onnx_dtype(tt->elem_type, &tn) : DT_INVALID;
  if (dt != DT_INVALID) tn = dtype_name(dt);
  sb_printf(&b, tt->shape ? "Tensor[(" : "Tensor[?");
  for (size_t i = 0; tt->shape && i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      sb_printf(&b, "%s%lld", i ? ", " : "", (long long)d->dim_value);
    else
      sb_printf(&b, "%s%s", i ? ", " : "", d->dim_param && *d->dim_param ? d->dim_param : "?");
  }
  sb_printf(&b, "%s, %s]", tt->shape ? ")" : "", tn);
  const char *t = arena_strdup(cx->a, b.data);
  sb_free(&b);
  return t;
}

/* 1 when value v's type contradicts the declared one (dtype, rank, a
 * static dim), -1 when only the declaration is looser (a symbolic or
 * unknown dim that rly knows) or differs in float width alone (exporters
 * declare float64 for a Python scalar that the computation keeps in the
 * tensor's float32, as PyTorch's Where), else 0. */
static int declared_mismatch(const Onnx__TypeProto__Tensor *tt, const FeVal *v) {
  const char *tn;
  DType dt = tt->elem_type ? onnx_dtype(tt->elem_type, &tn) : fe_dtype(v);
  int loose = 0;
  if (dt != fe_dtype(v) && !(dtype_is_float(dt) && dtype_is_float(fe_dtype(v)))) return 1;
  if (dt != fe_dtype(v)) loose = -1;
  if (!tt->shape) return loose;
  if ((int)tt->shape->n_dim != fe_rank(v)) return 1;
  for (int i = 0; i < fe_rank(v); i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    Dim have = fe_dim(v, i);
    if (have.kind != DIM_CONST) continue;
    if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      loose = -1;
    else if (d->dim_value != have.value)
      return 1;
  }
  return loose;
}

/* Checks v against the type vi declares (what: "graph output"). */
static bool check_declared(OnnxCx *cx, const Onnx__ValueInfoProto *vi, const FeVal *v,
                           const char *what) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !v->ty ||
      v->ty->kind != TY_TENSOR)
    return true;
  int m = declared_mismatch(tp->tensor_type, v);
  if (!m) return true;
  char *have = print_type(v->ty);
  const char *want = declared_text(cx, tp->tensor_type);
  if (m > 0)
    fe_fail(cx, "%s '%s' is declared %s, but its type is %s", what, vi->name, want, have);
  else
    diag_warning(cx->d, no_span, "%s: %s '%s' is declared %s; its type is %s", cx->file, what,
                 vi->name, want, have);
  free(have);
  return m < 0;
}

/* The values value_info declares, checked once every node is converted. */
static bool check_value_info(Import *im) {
  for (size_t i = 0; i < im->g->n_value_info; i++) {
    const Onnx__ValueInfoProto *vi = im->g->value_info[i];
    FeVal *v = vi->name ? strmap_get(&im->cx.vals, vi->name) : NULL;
    if (v && v->expr && !check_declared(&im->cx, vi, v, "value")) return false;
  }
  return true;
}

static Expr *result_expr(Import *im) {
  OnnxCx *cx = &im->cx;
  int n = (int)im->g->n_output;
  if (n == 0) return fe_fail(cx, "the graph has no outputs"), NULL;
  Expr **outs = ARENA_ARRAY(cx->a, Expr *, n);
  for (int i = 0; i < n; i++) {
    const char *name = im->g->output[i]->name ? im->g->output[i]->name : "";
    FeVal *v = strmap_get(&cx->vals, name);
    if (!v || !v->expr)
      return fe_fail(cx, "graph output '%s' is not produced by any node", name), NULL;
    if (!check_declared(cx, im->g->output[i], v, "graph output")) return NULL;
    outs[i] = v->expr;
  }
  return n == 1 ? outs[0] : expr_tuple(cx->a, n, outs, no_span);
}

/* Builds @func from the inputs, the used weights and the live bindings,
 * adds it to m and returns the weights in *w. */
static bool build_function(Import *im, Module *m, const char *func, OnnxWeights *w) {
  OnnxCx *cx = &im->cx;
  Expr *result = result_expr(im);
  if (!result) return false;
  Uses uses = {0};
  Expr *body = live_body(cx, result, &uses);
  size_t cap = im->inputs.len + im->weights.len + 1;
  Var **params = ARENA_ARRAY(cx->a, Var *, cap);
  int np = 0;
  for (size_t i = 0; i < im->inputs.len; i++) params[np++] = im->inputs.items[i];
  w->n = 0;
  w->names = ARENA_ARRAY(cx->a, const char *, cap);
  w->values = ARENA_ARRAY(cx->a, Tensor *, cap);
  for (size_t i = 0; i < im->weights.len; i++) {
    Var *v = im->weights.items[i];
    if (!u64map_find(&uses.vars, PTR_KEY(v))) continue;
    params[np++] = v;
    w->names[w->n] = v->name, w->values[w->n++] = im->wvalues.items[i];
  }
  u64map_free(&uses.vars);
  Function *fn = ARENA_NEW(cx->a, Function);
  fn->nparams = np, fn->params = params, fn->body = body;
  FuncDef *fd = ARENA_NEW(cx->a, FuncDef);
  fd->name = arena_strdup(cx->a, func), fd->fn = fn;
  for (size_t i = 0; i < cx->defs.len; i++)
    module_add(m, (Def){.kind = DEF_FUNC, .u.func = cx->defs.items[i]});
  module_add(m, (Def){.kind = DEF_FUNC, .u.func = fd});
  return true;
}

/* ───────────────────────── the entry point ───────────────────────── */

static void import_free(Import *im) {
  if (im->model) onnx__model_proto__free_unpacked(im->model, NULL);
  strmap_free(&im->cx.vals);
  strmap_free(&im->taken), strmap_free(&im->dims), strmap_free(&im->dim_taken);
  vec_free(&im->cx.let_vars), vec_free(&im->cx.let_vals), vec_free(&im->cx.defs);
  vec_free(&im->inputs), vec_free(&im->weights), vec_free(&im->wvalues);
  kernel_ctx_free(&im->cx.kx);
}

bool onnx_import(const char *path, Module *m, const OnnxImportOptions *o, DiagCtx *d,
                 OnnxWeights *w) {
  Import im;
  memset(&im, 0, sizeof im);
  im.cx.a = m->arena, im.cx.d = d, im.cx.file = path, im.cx.m = m, im.cx.opts = o;
  kernel_ctx_init(&im.cx.kx);
  memset(w, 0, sizeof *w);
  bool ok = (im.model = read_model(&im.cx, path)) != NULL;
  if (ok) im.g = im.model->graph;
  ok = ok && read_opset(&im) && check_ops(&im) && read_initializers(&im) && read_inputs(&im) &&
       convert_nodes(&im) && check_value_info(&im) &&
       build_function(&im, m, o && o->func ? o->func : "main", w);
  if (!ok && o && o->where.off) diag_note(d, o->where, "while importing %s", path);
  import_free(&im);
  return ok;
}
