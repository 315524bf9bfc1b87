/* kernels.c — the kernel table indexed by registry index (the family
 * tables, registered by op name on first use), dispatch, output
 * allocation through the type relations, and the helpers the family
 * files share: attribute access, compute lanes (typed loads and
 * stores with cast semantics) and the broadcasting row iterator.
 *
 * Invariant: after kernels_infer_and_run fails, no output is left
 * allocated; after it succeeds, each out[i] is a fresh reference. */
#include "kernels/kernels.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const Span no_span;

/* ───────────────────────────── context ───────────────────────────── */

void kernel_ctx_init(KernelCtx *kx) {
  memset(kx, 0, sizeof *kx);
  arena_init(&kx->arena);
  kx->rel.arena = &kx->arena;
}

void kernel_ctx_free(KernelCtx *kx) { arena_free(&kx->arena); }

bool kernel_fail(KernelCtx *kx, const char *fmt, ...) {
  if (kx->err[0]) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kx->err, sizeof kx->err, fmt, ap);
  va_end(ap);
  return false;
}

void *kernel_alloc(KernelCtx *kx, size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) kernel_fail(kx, "%s: cannot allocate %g bytes of scratch memory", kx->op, (double)n);
  return p;
}

/* ──────────────────────────── attributes ──────────────────────────── */

bool kernel_attrs_ok(KernelCtx *kx) {
  if (kx->rel.err[0]) kernel_fail(kx, "%s", kx->rel.err);
  return !kx->err[0];
}

int64_t kattr_int(KernelCtx *kx, const Attrs *attrs, const char *key) {
  return rel_attr_int(&kx->rel, attrs, key);
}
double kattr_float(KernelCtx *kx, const Attrs *attrs, const char *key) {
  return rel_attr_float(&kx->rel, attrs, key);
}
bool kattr_bool(KernelCtx *kx, const Attrs *attrs, const char *key) {
  return rel_attr_bool(&kx->rel, attrs, key);
}
const char *kattr_str(KernelCtx *kx, const Attrs *attrs, const char *key) {
  return rel_attr_str(&kx->rel, attrs, key);
}
bool kattr_is_none(KernelCtx *kx, const Attrs *attrs, const char *key) {
  return rel_attr_is_none(&kx->rel, attrs, key);
}
int kattr_ints(KernelCtx *kx, const Attrs *attrs, const char *key, int64_t *out, int max) {
  return rel_attr_ints(&kx->rel, attrs, key, out, max);
}

int kernel_axis(KernelCtx *kx, int64_t axis, int ndim) {
  if (axis < -(int64_t)ndim || axis >= ndim) {
    kernel_fail(kx, "%s: axis %lld is out of range for rank %d", kx->op, (long long)axis, ndim);
    return -1;
  }
  return (int)(axis < 0 ? axis + ndim : axis);
}

/* ───────────────────────────── the table ───────────────────────────── */

static const KernelDef *const families[] = {
#define X(f) kernels_family_##f,
    KERNEL_FAMILIES(X)
#undef X
};

static OpsRuleTable table = {"kernel", (const void *const *)families,
                             (int)(sizeof families / sizeof families[0]), sizeof(KernelDef), NULL};

const KernelDef *kernels_get(int op) { return ops_rule_row(&table, op); }

/* The op's row (its attribute defaults, flags) for relations and messages. */
static const OpDef *begin(KernelCtx *kx, int op) {
  const OpDef *def = ops_get(op);
  kx->op = def ? def->name : "?";
  kx->err[0] = 0;
  kx->rel.op_name = kx->op;
  kx->rel.op = def;
  kx->rel.err[0] = 0;
  kx->rel.arena = &kx->arena;
  kx->rel.mod = NULL, kx->rel.call = NULL, kx->rel.unify_dim = NULL;
  if (!def) kernel_fail(kx, "no op with registry index %d", op);
  return def;
}

/* Per thread: the profiler sets it around one engine's evaluation on that
 * engine's thread (a session is used by one thread at a time), so another
 * engine's kernels on another thread are not counted. */
static _Thread_local KernelRunHook run_hook;
static _Thread_local void *run_hook_user;

void kernels_set_run_hook(KernelRunHook hook, void *user) { run_hook = hook, run_hook_user = user; }

KernelRunHook kernels_run_hook(void **user) {
  *user = run_hook_user;
  return run_hook;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool kernels_run(KernelCtx *kx, int op, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                 RtTensor *const *out) {
  if (!begin(kx, op)) return false;
  const KernelDef *d = kernels_get(op);
  if (!d) return kernel_fail(kx, "no kernel for op `%s`", kx->op);
  ArenaMark m = arena_mark(&kx->arena);
  double t0 = run_hook ? now_ms() : 0;
  bool ok = d->fn(kx, nin, in, attrs, nout, out) && kernel_attrs_ok(kx);
  if (run_hook) run_hook(run_hook_user, op, nin, in, nout, out, now_ms() - t0);
  arena_release(&kx->arena, m);
  if (!ok && !kx->err[0]) kernel_fail(kx, "%s: kernel failed", kx->op);
  return ok;
}

/* ─────────────────────── infer, allocate, run ─────────────────────── */

static Type *shape_type(KernelCtx *kx, const RtTensor *t) {
  Dim *dims = ARENA_ARRAY(&kx->arena, Dim, t->ndim ? t->ndim : 1);
  for (int i = 0; i < t->ndim; i++) dims[i] = dim_const(t->shape[i]);
  return type_tensor(&kx->arena, t->dtype, t->ndim, dims, no_span);
}

/* The result type of op on the inputs, or NULL after kernel_fail. */
static Type *infer(KernelCtx *kx, const OpDef *def, int nin, RtTensor *const *in,
                   const Attrs *attrs) {
  Type **args = ARENA_ARRAY(&kx->arena, Type *, nin + 1);
  const Tensor **vals = ARENA_ARRAY(&kx->arena, const Tensor *, nin + 1);
  Tensor *views = ARENA_ARRAY(&kx->arena, Tensor, nin + 1);
  for (int i = 0; i < nin; i++) {
    args[i] = shape_type(kx, in[i]);
    views[i] = rt_tensor_as_ir(in[i]);
    vals[i] = &views[i];
  }
  int nargs = nin;
  if (def->flags & OP_TUPLE_ARG) {
    args[0] = type_tuple(&kx->arena, nin, args, no_span);
    vals[0] = NULL;
    nargs = 1;
  }
  if (nargs < def->min_args || (def->max_args >= 0 && nargs > def->max_args)) {
    if (def->max_args == def->min_args)
      kernel_fail(kx, "%s: expected %d argument%s, got %d", def->name, def->min_args,
                  def->min_args == 1 ? "" : "s", nargs);
    else
      kernel_fail(kx, "%s: expected %d to %d arguments, got %d", def->name, def->min_args,
                  def->max_args, nargs);
    return NULL;
  }
  Type *t = def->rel(&kx->rel, nargs, args, vals, attrs);
  if (!t) kernel_fail(kx, "%s", kx->rel.err[0] ? kx->rel.err : "type relation failed");
  return t;
}

/* Allocates output i of type t (a view of in[0] for view ops when possible). */
static RtTensor *alloc_output(KernelCtx *kx, const OpDef *def, int nin, RtTensor *const *in,
                              const Type *t) {
  if (t->kind != TY_TENSOR) {
    kernel_fail(kx, "%s: an output of type %s is not a tensor", kx->op, rel_type_str(&kx->rel, t));
    return NULL;
  }
  int64_t shape[TENSOR_MAX_RANK];
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    Dim d = t->u.tensor.dims[i];
    if (d.kind != DIM_CONST) {
      kernel_fail(kx, "%s: output shape %s is not known at run time", kx->op,
                  rel_shape_str(&kx->rel, t->u.tensor.ndim, t->u.tensor.dims));
      return NULL;
    }
    shape[i] = d.value;
  }
  RtTensor *r;
  if ((def->flags & OP_VIEW) && nin > 0 && in[0]->dtype == t->u.tensor.dtype)
    r = rt_tensor_view(in[0], t->u.tensor.ndim, shape, kx->err, sizeof kx->err);
  else
    r = rt_tensor_new(t->u.tensor.dtype, t->u.tensor.ndim, shape, kx->err, sizeof kx->err);
  return r;
}

static int alloc_outputs(KernelCtx *kx, const OpDef *def, int nin, RtTensor *const *in,
                         const Type *t, int maxout, RtTensor **out) {
  int n = t->kind == TY_TUPLE ? t->u.tuple.n : 1;
  if (n > maxout) {
    kernel_fail(kx, "%s: %d outputs, more than the %d expected", kx->op, n, maxout);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    out[i] = alloc_output(kx, def, nin, in, t->kind == TY_TUPLE ? t->u.tuple.fields[i] : t);
    if (!out[i]) {
      while (i-- > 0) rt_tensor_release(out[i]), out[i] = NULL;
      return -1;
    }
  }
  return n;
}

bool kernels_infer_and_run(KernelCtx *kx, int op, int nin, RtTensor *const *in, const Attrs *attrs,
                           int maxout, int *nout, RtTensor **out) {
  *nout = 0;
  const OpDef *def = begin(kx, op);
  if (!def) return false;
  if (!kernels_get(op)) return kernel_fail(kx, "no kernel for op `%s`", kx->op);
  ArenaMark m = arena_mark(&kx->arena);
  Type *t = infer(kx, def, nin, in, attrs);
  int n = t ? alloc_outputs(kx, def, nin, in, t, maxout, out) : -1;
  arena_release(&kx->arena, m);
  if (n < 0) return false;
  if (!kernels_run(kx, op, nin, in, attrs, n, out)) {
    for (int i = 0; i < n; i++) rt_tensor_release(out[i]), out[i] = NULL;
    return false;
  }
  *nout = n;
  return true;
}

bool kernel_copy_view(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out) {
  RLY_ASSERT(out[0]->numel == in[0]->numel && out[0]->dtype == in[0]->dtype);
  if (out[0]->data != in[0]->data && in[0]->numel)
    memcpy(out[0]->data, in[0]->data, rt_tensor_nbytes(in[0]));
  return true;
}

void kernel_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) strides[i] = s, s *= shape[i];
}

/* ─────────────────────────────── lanes ─────────────────────────────── */

Lane kernel_lane(DType dt) {
  switch (dtype_class(dt)) {
    case 'f':
      return dt == DT_FLOAT64 ? LANE_F64 : LANE_F32;
    case 'i':
      return LANE_I64;
    default:
      return LANE_U64;
  }
}

size_t lane_bytes(Lane l) { return l == LANE_F32 ? sizeof(float) : 8; }

/* Float to integer: truncation toward zero, saturated to [lo, hi], NaN → 0.
 * (C leaves out-of-range conversions undefined.) */
static inline int64_t sat_i64(double v, int64_t lo, int64_t hi) {
  if (isnan(v)) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi;
  return (int64_t)v;
}

static inline uint64_t sat_u64(double v, uint64_t hi) {
  if (isnan(v) || v <= 0) return 0;
  if (v >= (double)hi) return hi;
  return (uint64_t)v;
}

/* X(enum, C type, kind, min, max); kinds: B bool, I signed, U unsigned,
 * H half (stored as uint16_t bits), F float, D double, BF bfloat16 (uint16_t bits). */
#define LANE_DTYPES(X)                          \
  X(DT_BOOL, uint8_t, B, 0, 1)                  \
  X(DT_INT8, int8_t, I, INT8_MIN, INT8_MAX)     \
  X(DT_INT16, int16_t, I, INT16_MIN, INT16_MAX) \
  X(DT_INT32, int32_t, I, INT32_MIN, INT32_MAX) \
  X(DT_INT64, int64_t, I, INT64_MIN, INT64_MAX) \
  X(DT_UINT8, uint8_t, U, 0, UINT8_MAX)         \
  X(DT_UINT16, uint16_t, U, 0, UINT16_MAX)      \
  X(DT_UINT32, uint32_t, U, 0, UINT32_MAX)      \
  X(DT_UINT64, uint64_t, U, 0, UINT64_MAX)      \
  X(DT_FLOAT16, uint16_t, H, 0, 0)              \
  X(DT_FLOAT32, float, F, 0, 0)                 \
  X(DT_FLOAT64, double, D, 0, 0)                \
  X(DT_BFLOAT16, uint16_t, BF, 0, 0)

/* Loads: CVT_<kind>_<lane>(v). */
#define CVT_B_F32(v) ((float)(v))
#define CVT_I_F32(v) ((float)(v))
#define CVT_U_F32(v) ((float)(v))
#define CVT_H_F32(v) half_to_float(v)
#define CVT_F_F32(v) (v)
#define CVT_D_F32(v) ((float)(v))
#define CVT_BF_F32(v) bf16_to_float(v)
#define CVT_B_F64(v) ((double)(v))
#define CVT_I_F64(v) ((double)(v))
#define CVT_U_F64(v) ((double)(v))
#define CVT_H_F64(v) ((double)half_to_float(v))
#define CVT_F_F64(v) ((double)(v))
#define CVT_D_F64(v) (v)
#define CVT_BF_F64(v) ((double)bf16_to_float(v))
#define CVT_B_I64(v) ((int64_t)(v))
#define CVT_I_I64(v) ((int64_t)(v))
#define CVT_U_I64(v) ((int64_t)(v))
#define CVT_H_I64(v) sat_i64(half_to_float(v), INT64_MIN, INT64_MAX)
#define CVT_F_I64(v) sat_i64((v), INT64_MIN, INT64_MAX)
#define CVT_D_I64(v) sat_i64((v), INT64_MIN, INT64_MAX)
#define CVT_BF_I64(v) sat_i64(bf16_to_float(v), INT64_MIN, INT64_MAX)
#define CVT_B_U64(v) ((uint64_t)(v))
#define CVT_I_U64(v) ((uint64_t)(v))
#define CVT_U_U64(v) ((uint64_t)(v))
#define CVT_H_U64(v) sat_u64(half_to_float(v), UINT64_MAX)
#define CVT_F_U64(v) sat_u64((v), UINT64_MAX)
#define CVT_D_U64(v) sat_u64((v), UINT64_MAX)
#define CVT_BF_U64(v) sat_u64(bf16_to_float(v), UINT64_MAX)

#define LOAD_CASE(E, CT, CVT)                                    \
  case E: {                                                      \
    const CT *s = (const CT *)base + off;                        \
    if (stride == 1)                                             \
      for (int64_t i = 0; i < n; i++) d[i] = CVT(s[i]);          \
    else                                                         \
      for (int64_t i = 0; i < n; i++) d[i] = CVT(s[i * stride]); \
  } break;
#define LOAD_CASE_F32(E, CT, K, LO, HI) LOAD_CASE(E, CT, CVT_##K##_F32)
#define LOAD_CASE_F64(E, CT, K, LO, HI) LOAD_CASE(E, CT, CVT_##K##_F64)
#define LOAD_CASE_I64(E, CT, K, LO, HI) LOAD_CASE(E, CT, CVT_##K##_I64)
#define LOAD_CASE_U64(E, CT, K, LO, HI) LOAD_CASE(E, CT, CVT_##K##_U64)

#define DEF_LOAD(LN, LT)                                                                    \
  static void load_##LN(DType dt, const void *base, int64_t off, int64_t stride, int64_t n, \
                        LT *d) {                                                            \
    switch (dt) {                                                                           \
      LANE_DTYPES(LOAD_CASE_##LN)                                                           \
      default:                                                                              \
        RLY_UNREACHABLE();                                                                  \
    }                                                                                       \
  }
DEF_LOAD(F32, float)
DEF_LOAD(F64, double)
DEF_LOAD(I64, int64_t)
DEF_LOAD(U64, uint64_t)

void lane_load(Lane l, DType dt, const void *base, int64_t off, int64_t stride, int64_t n,
               void *dst) {
  switch (l) {
    case LANE_F32:
      load_F32(dt, base, off, stride, n, dst);
      break;
    case LANE_F64:
      load_F64(dt, base, off, stride, n, dst);
      break;
    case LANE_I64:
      load_I64(dt, base, off, stride, n, dst);
      break;
    case LANE_U64:
      load_U64(dt, base, off, stride, n, dst);
      break;
  }
}

/* Stores: ST_<lane>_<kind>(v, CT, LO, HI). */
#define ST_FLT_B(v, CT, LO, HI) ((uint8_t)((v) != 0))
#define ST_FLT_I(v, CT, LO, HI) ((CT)sat_i64((double)(v), LO, HI))
#define ST_FLT_U(v, CT, LO, HI) ((CT)sat_u64((double)(v), HI))
#define ST_F32_B ST_FLT_B
#define ST_F32_I ST_FLT_I
#define ST_F32_U ST_FLT_U
#define ST_F32_H(v, CT, LO, HI) float_to_half(v)
#define ST_F32_F(v, CT, LO, HI) (v)
#define ST_F32_D(v, CT, LO, HI) ((double)(v))
#define ST_F32_BF(v, CT, LO, HI) float_to_bf16(v)
#define ST_F64_B ST_FLT_B
#define ST_F64_I ST_FLT_I
#define ST_F64_U ST_FLT_U
#define ST_F64_H(v, CT, LO, HI) rt_double_to_half(v)
#define ST_F64_F(v, CT, LO, HI) ((float)(v))
#define ST_F64_D(v, CT, LO, HI) (v)
#define ST_F64_BF(v, CT, LO, HI) double_to_bf16(v)
#define ST_INT_B(v, CT, LO, HI) ((uint8_t)((v) != 0))
#define ST_INT_I(v, CT, LO, HI) ((CT)(v)) /* wraps (gcc/clang define it) */
#define ST_INT_U(v, CT, LO, HI) ((CT)(v))
#define ST_INT_H(v, CT, LO, HI) rt_double_to_half((double)(v))
#define ST_INT_F(v, CT, LO, HI) ((float)(v))
#define ST_INT_D(v, CT, LO, HI) ((double)(v))
#define ST_INT_BF(v, CT, LO, HI) double_to_bf16((double)(v))
#define ST_I64_B ST_INT_B
#define ST_I64_I ST_INT_I
#define ST_I64_U ST_INT_U
#define ST_I64_H ST_INT_H
#define ST_I64_F ST_INT_F
#define ST_I64_D ST_INT_D
#define ST_I64_BF ST_INT_BF
#define ST_U64_B ST_INT_B
#define ST_U64_I ST_INT_I
#define ST_U64_U ST_INT_U
#define ST_U64_H ST_INT_H
#define ST_U64_F ST_INT_F
#define ST_U64_D ST_INT_D
#define ST_U64_BF ST_INT_BF

#define STORE_CASE(E, CT, ST, LO, HI)                            \
  case E: {                                                      \
    CT *d = (CT *)base + off;                                    \
    for (int64_t i = 0; i < n; i++) d[i] = ST(s[i], CT, LO, HI); \
  } break;
#define STORE_CASE_F32(E, CT, K, LO, HI) STORE_CASE(E, CT, ST_F32_##K, LO, HI)
#define STORE_CASE_F64(E, CT, K, LO, HI) STORE_CASE(E, CT, ST_F64_##K, LO, HI)
#define STORE_CASE_I64(E, CT, K, LO, HI) STORE_CASE(E, CT, ST_I64_##K, LO, HI)
#define STORE_CASE_U64(E, CT, K, LO, HI) STORE_CASE(E, CT, ST_U64_##K, LO, HI)

#define DEF_STORE(LN, LT)                                                             \
  static void store_##LN(DType dt, const LT *s, void *base, int64_t off, int64_t n) { \
    switch (dt) {                                                                     \
      LANE_DTYPES(STORE_CASE_##LN)                                                    \
      default:                                                                        \
        RLY_UNREACHABLE();                                                            \
    }                                                                                 \
  }
DEF_STORE(F32, float)
DEF_STORE(F64, double)
DEF_STORE(I64, int64_t)
DEF_STORE(U64, uint64_t)

void lane_store(Lane l, DType dt, const void *src, void *base, int64_t off, int64_t n) {
  switch (l) {
    case LANE_F32:
      store_F32(dt, src, base, off, n);
      break;
    case LANE_F64:
      store_F64(dt, src, base, off, n);
      break;
    case LANE_I64:
      store_I64(dt, src, base, off, n);
      break;
    case LANE_U64:
      store_U64(dt, src, base, off, n);
      break;
  }
}

void *lane_array(KernelCtx *kx, const RtTensor *t, Lane l) {
  void *p = kernel_alloc(kx, (size_t)t->numel * lane_bytes(l));
  if (p) lane_load(l, t->dtype, t->data, 0, 1, t->numel, p);
  return p;
}

/* ─────────────────────────── broadcasting ─────────────────────────── */

/* Sets up the row iterator over an output shape: size-1 dims are dropped,
 * operands right-aligned (stride 0 where broadcast), and adjacent dims that
 * every operand walks contiguously are merged, so rows are as long as possible. */
void bcast_init(BcastIter *it, int ndim, const int64_t *shape, int nops,
                const RtTensor *const *ops) {
  RLY_ASSERT(nops <= BCAST_MAX_OPS);
  int64_t numel = 1;
  it->nops = nops, it->ndim = 0;
  for (int i = 0; i < ndim; i++) {
    numel *= shape[i];
    if (shape[i] == 1) continue; /* size-1 dims never move an offset */
    int d = it->ndim;
    it->shape[d] = shape[i];
    for (int k = 0; k < nops; k++) {
      int j = i - (ndim - ops[k]->ndim); /* operand dim, right-aligned */
      int64_t st = 1;
      for (int q = j + 1; j >= 0 && q < ops[k]->ndim; q++) st *= ops[k]->shape[q];
      it->strides[k][d] = j < 0 || ops[k]->shape[j] == 1 ? 0 : st;
    }
    /* Merge with the previous dim when every operand steps through both as one. */
    bool merge = d > 0;
    for (int k = 0; k < nops && merge; k++)
      merge = it->strides[k][d - 1] == it->strides[k][d] * it->shape[d];
    if (merge) {
      it->shape[d - 1] *= it->shape[d];
      for (int k = 0; k < nops; k++) it->strides[k][d - 1] = it->strides[k][d];
    } else {
      it->ndim++;
    }
  }
  if (it->ndim == 0) {
    it->ndim = 1, it->shape[0] = 1;
    for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
  }
  int last = it->ndim - 1;
  it->len = it->shape[last];
  for (int k = 0; k < nops; k++) it->off[k] = 0, it->step[k] = it->strides[k][last];
  for (int i = 0; i < it->ndim; i++) it->idx[i] = 0;
  it->rows = numel == 0 ? 0 : numel / it->len;
  it->done = 0;
}

bool bcast_next(BcastIter *it) {
  if (it->done == it->rows) return false;
  if (it->done++ == 0) return true;
  for (int i = it->ndim - 2; i >= 0; i--) {
    for (int k = 0; k < it->nops; k++) it->off[k] += it->strides[k][i];
    if (++it->idx[i] < it->shape[i]) return true;
    for (int k = 0; k < it->nops; k++) it->off[k] -= it->strides[k][i] * it->shape[i];
    it->idx[i] = 0;
  }
  return true;
}
