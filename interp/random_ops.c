/* random_ops.c — the interpreter's kernels for ops that take or return
 * RandState keys: random.*, nn.dropout with a key, nn.dropout_train.
 *
 * Each call first runs the op's type relation on the actual arguments (keys
 * typed RandState), so shapes, dtypes and attributes are checked by the one
 * registry rule; the sample itself comes from prng.c.  nn.dropout_train
 * splits its state: the first key is the new state, the second drives the
 * mask (our definition; seed 001 leaves it open). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"
#include "kernels/prng.h"
#include "ops/ops.h"

typedef struct RCall {
  Interp *in;
  const Expr *call;
  const Attrs *attrs;
  Value **args;
  int n;
  Type *result; /* from the relation */
  PrngMode mode;
} RCall;

typedef Value *(*RandomFn)(RCall *r);

/* Records msg as the error (msg may already be in->err). */
static Value *rfail(RCall *r, const char *msg) {
  if (msg != r->in->err) snprintf(r->in->err, sizeof r->in->err, "%s", msg);
  r->in->err_span = r->call->span;
  return NULL;
}

static Value *key_value(Interp *in, const uint32_t k[2]) {
  Value *v = value_new(in, V_KEY, 0);
  v->u.key.k[0] = k[0], v->u.key.k[1] = k[1];
  return v;
}

/* A new tensor value shaped like the relation's (tensor) result. */
static Value *result_tensor(RCall *r, const Type *t, RtTensor **out) {
  int64_t shape[TENSOR_MAX_RANK];
  for (int i = 0; i < t->u.tensor.ndim; i++) shape[i] = t->u.tensor.dims[i].value;
  *out = rt_tensor_new(t->u.tensor.dtype, t->u.tensor.ndim, shape, r->in->err, sizeof r->in->err);
  if (!*out) return rfail(r, r->in->err);
  return value_tensor(r->in, *out);
}

static const uint32_t *key_arg(RCall *r, int i) { return r->args[i]->u.key.k; }

static Value *op_key(RCall *r) {
  const RtTensor *s = r->args[0]->u.tensor;
  uint32_t k[2];
  prng_key(rt_get_i64(s, 0), s->dtype == DT_INT64 || s->dtype == DT_UINT64, k);
  return key_value(r->in, k);
}

static Value *op_split(RCall *r) {
  int64_t num = r->result->u.tuple.n;
  uint32_t(*keys)[2] = malloc(sizeof(uint32_t[2]) * (size_t)num);
  if (!keys || !prng_split(r->mode, key_arg(r, 0), num, keys)) {
    free(keys);
    return rfail(r, "random.split: out of memory");
  }
  Value *t = value_new(r->in, V_TUPLE, (int)num);
  for (int64_t i = 0; i < num; i++) t->u.tuple.fields[i] = key_value(r->in, keys[i]);
  free(keys);
  return t;
}

static Value *op_fold_in(RCall *r) {
  uint32_t k[2];
  prng_fold_in(key_arg(r, 0), (uint32_t)rt_get_i64(r->args[1]->u.tensor, 0), k);
  return key_value(r->in, k);
}

static Value *op_key_data(RCall *r) {
  RtTensor *t;
  Value *v = result_tensor(r, r->result, &t);
  if (v) memcpy(t->data, key_arg(r, 0), 8);
  return v;
}

static Value *op_wrap_key(RCall *r) {
  const RtTensor *t = r->args[0]->u.tensor;
  uint32_t k[2] = {(uint32_t)rt_get_i64(t, 0), (uint32_t)rt_get_i64(t, 1)};
  return key_value(r->in, k);
}

/* Bits of any unsigned width (prng.c: narrow widths follow JAX's rules). */
static Value *op_bits(RCall *r) {
  RtTensor *t;
  Value *v = result_tensor(r, r->result, &t);
  if (!v) return NULL;
  int width = dtype_bytes(t->dtype);
  bool ok = width == 8   ? prng_bits64(r->mode, key_arg(r, 0), t->data, t->numel)
            : width == 4 ? prng_bits32(r->mode, key_arg(r, 0), t->data, t->numel)
                         : prng_bits_narrow(r->mode, key_arg(r, 0), width, t->data, t->numel);
  return ok ? v : rfail(r, "random.bits: out of memory");
}

static bool fill_uniform(RCall *r, const uint32_t key[2], RtTensor *t, double lo, double hi) {
  if (t->dtype == DT_FLOAT64) return prng_uniform_f64(r->mode, key, lo, hi, t->data, t->numel);
  if (t->dtype == DT_FLOAT32)
    return prng_uniform_f32(r->mode, key, (float)lo, (float)hi, t->data, t->numel);
  if (t->dtype == DT_FLOAT16)
    return prng_uniform_f16(r->mode, key, (float)lo, (float)hi, t->data, t->numel);
  snprintf(r->in->err, sizeof r->in->err, "%s: dtype %s is not supported yet",
           ops_get(r->call->u.call.fn->u.op.index)->name, dtype_name(t->dtype));
  return false;
}

static Value *op_uniform(RCall *r) {
  RtTensor *t;
  Value *v = result_tensor(r, r->result, &t);
  RelCtx *cx = &r->in->kx.rel;
  if (!v) return NULL;
  double lo = rel_attr_float(cx, r->attrs, "low"), hi = rel_attr_float(cx, r->attrs, "high");
  return fill_uniform(r, key_arg(r, 0), t, lo, hi) ? v : rfail(r, r->in->err);
}

static Value *op_normal(RCall *r) {
  RtTensor *t;
  Value *v = result_tensor(r, r->result, &t);
  if (!v) return NULL;
  bool ok = t->dtype == DT_FLOAT32   ? prng_normal_f32(r->mode, key_arg(r, 0), t->data, t->numel)
            : t->dtype == DT_FLOAT64 ? prng_normal_f64(r->mode, key_arg(r, 0), t->data, t->numel)
            : t->dtype == DT_FLOAT16 ? prng_normal_f16(r->mode, key_arg(r, 0), t->data, t->numel)
                                     : false;
  return ok ? v : rfail(r, "random.normal: only float16, float32 and float64 are supported");
}

/* bernoulli(k, p): uniform(k, shape, dtype of p) < p, p broadcast. */
static Value *op_bernoulli(RCall *r) {
  RtTensor *out, *u;
  Value *v = result_tensor(r, r->result, &out);
  if (!v) return NULL;
  const RtTensor *p = r->args[1]->u.tensor;
  u = rt_tensor_new(p->dtype, out->ndim, out->shape, r->in->err, sizeof r->in->err);
  if (!u) return rfail(r, r->in->err);
  bool ok = fill_uniform(r, key_arg(r, 0), u, 0.0, 1.0);
  for (int64_t i = 0; ok && i < out->numel; i++) {
    int64_t pi = p->numel == 1 ? 0 : i % p->numel; /* p is a scalar or matches the trailing dims */
    ((uint8_t *)out->data)[i] = rt_get_f64(u, i) < rt_get_f64(p, pi);
  }
  rt_tensor_release(u);
  return ok ? v : rfail(r, r->in->err);
}

/* where(bernoulli(k, 1 - rate, shape(x)), x / (1 - rate), 0), computed in x's dtype. */
static bool dropout_into(RCall *r, const uint32_t key[2], const RtTensor *x, RtTensor *y) {
  double rate = rel_attr_float(&r->in->kx.rel, r->attrs, "rate");
  RtTensor *u = rt_tensor_new(x->dtype == DT_FLOAT64 ? DT_FLOAT64 : DT_FLOAT32, x->ndim, x->shape,
                              r->in->err, sizeof r->in->err);
  if (!u) return false;
  bool ok = fill_uniform(r, key, u, 0.0, 1.0);
  Tensor yv = rt_tensor_as_ir(y);
  if (x->dtype == DT_FLOAT32) {
    float keep = 1.0f - (float)rate;
    for (int64_t i = 0; ok && i < x->numel; i++)
      ((float *)y->data)[i] = ((float *)u->data)[i] < keep ? ((float *)x->data)[i] / keep : 0.0f;
  } else {
    double keep = 1.0 - rate;
    for (int64_t i = 0; ok && i < x->numel; i++)
      tensor_set_f64(&yv, i, rt_get_f64(u, i) < keep ? rt_get_f64(x, i) / keep : 0.0);
  }
  rt_tensor_release(u);
  return ok;
}

static Value *op_dropout_key(RCall *r) {
  RtTensor *y;
  Value *v = result_tensor(r, r->result, &y);
  if (!v) return NULL;
  return dropout_into(r, key_arg(r, 1), r->args[0]->u.tensor, y) ? v : rfail(r, r->in->err);
}

static Value *op_dropout_train(RCall *r) {
  uint32_t keys[2][2];
  if (!prng_split(r->mode, key_arg(r, 1), 2, keys))
    return rfail(r, "nn.dropout_train: out of memory");
  Value *t = value_new(r->in, V_TUPLE, 2);
  RtTensor *y;
  Value *yv = result_tensor(r, r->result->u.tuple.fields[0], &y);
  if (!yv) return NULL;
  t->u.tuple.fields[0] = yv;
  t->u.tuple.fields[1] = key_value(r->in, keys[0]);
  return dropout_into(r, keys[1], r->args[0]->u.tensor, y) ? t : rfail(r, r->in->err);
}

/* Listed by registry name (with the argument count: nn.dropout takes a
 * key as its second argument, its one-argument form is a tensor kernel),
 * indexed by registry index (below). */
typedef struct RandomOp {
  const char *name;
  int nargs;
  RandomFn fn;
} RandomOp;

static const RandomOp random_ops[] = {
    {"random.key", 1, op_key},
    {"random.split", 1, op_split},
    {"random.fold_in", 2, op_fold_in},
    {"random.bits", 1, op_bits},
    {"random.uniform", 1, op_uniform},
    {"random.normal", 1, op_normal},
    {"random.bernoulli", 2, op_bernoulli},
    {"random.key_data", 1, op_key_data},
    {"random.wrap_key", 1, op_wrap_key},
    {"nn.dropout", 2, op_dropout_key},
    {"nn.dropout_train", 2, op_dropout_train},
    {NULL, 0, NULL},
};

/* Indexed by registry index on first use, thread-safely (sessions on
 * several threads may ask first at once). */
static const RandomOp *const random_tables[] = {random_ops};
static OpsRuleTable random_table = {"random op", (const void *const *)random_tables, 1,
                                    sizeof(RandomOp), NULL};

static const RandomOp *find(int op, int nargs) {
  const RandomOp *r = ops_rule_row(&random_table, op);
  return r && r->nargs == nargs ? r : NULL;
}

bool random_handles(int op, int nargs) { return find(op, nargs) != NULL; }

static const Span no_span;

static Type *value_type(Interp *in, const Value *v) {
  if (v->kind == V_KEY) return type_randstate(&in->kx.arena, no_span);
  const RtTensor *t = v->u.tensor;
  Dim dims[TENSOR_MAX_RANK];
  for (int i = 0; i < t->ndim; i++) dims[i] = dim_const(t->shape[i]);
  return type_tensor(&in->kx.arena, t->dtype, t->ndim, dims, no_span);
}

/* Runs a random op: the registry's type relation on the actual arguments
 * first (so attributes and shapes are checked by the one rule), then the
 * op's sampler; the relation's scratch is released afterwards. */
Value *random_run(Interp *in, const Expr *call, int opindex, Value **args, int n, int mode) {
  RCall r = {in, call, call->u.call.attrs, args, n, NULL, (PrngMode)mode};
  const OpDef *def = ops_get(opindex);
  const RandomOp *op = find(opindex, n);
  Type *types[4];
  Tensor views[4];
  const Tensor *vals[4] = {0};
  for (int i = 0; i < n && i < 4; i++) {
    if (args[i]->kind != V_KEY && args[i]->kind != V_TENSOR)
      return rfail(&r, "argument is not a tensor or a key");
    types[i] = value_type(in, args[i]);
    if (args[i]->kind == V_TENSOR)
      views[i] = rt_tensor_as_ir(args[i]->u.tensor), vals[i] = &views[i];
  }
  RelCtx *cx = &in->kx.rel;
  ArenaMark m = arena_mark(&in->kx.arena);
  cx->arena = &in->kx.arena, cx->op_name = def->name, cx->op = def, cx->err[0] = 0;
  cx->mod = NULL, cx->call = NULL, cx->unify_dim = NULL;
  r.result = def->rel(cx, n, types, vals, r.attrs);
  Value *v = r.result ? op->fn(&r) : rfail(&r, cx->err);
  if (v && cx->err[0]) v = rfail(&r, cx->err);
  arena_release(&in->kx.arena, m);
  return v;
}
