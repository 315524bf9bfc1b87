/* kernels.h — reference kernels: one C kernel per op of the registry.
 *
 * The family files (kernels_*.c) list their kernels by op name; on first
 * use they are registered in a table indexed by the op's registry index
 * (ops/ops.h), so at run time an op's kernel is one array access away from
 * its row: kernels_get(index).  A unit test checks that every op has one
 * (or runs elsewhere: call_tir, the key-taking random ops).
 *
 * Calling convention: the caller knows each output's type (by running the
 * op's type relation on the actual shapes, see kernels_infer_and_run),
 * allocates the outputs, and calls the kernel with the inputs, the call's
 * attributes and the outputs.  A kernel writes every element of every
 * output and never writes its inputs.  A run-time error (integer division
 * by zero, an index out of bounds) returns false after kernel_fail() put a
 * message such as "take: index 7 is out of bounds for axis 0 with size 5"
 * in kx->err.
 *
 * View ops (reshape, squeeze, expand_dims, batch_flatten, ...) are flagged
 * OP_VIEW on their registry rows: kernels_infer_and_run makes their output
 * a view sharing the input's buffer; called with a separately allocated
 * output, their kernel copies.  Ops taking one tuple argument (concatenate,
 * stack) are flagged OP_TUPLE_ARG: the kernel receives the tuple's tensors
 * as its inputs.
 *
 * Semantics are TVM/Relay's, which follow numpy; where they leave a case
 * undefined we pick numpy's answer or a documented one (see the family
 * files: kernels_elemwise.c for division, casts and NaN). */
#ifndef RLY_KERNELS_H
#define RLY_KERNELS_H

#include <math.h>
#include <stdbool.h>

#include "ops/ops.h"
#include "rt/rt.h"

typedef struct KernelCtx {
  const char *op; /* the op being run (set by kernels_run) */
  RelCtx rel;     /* attribute access (rel_attr_*) and type relations */
  Arena arena;    /* scratch for relations; kept across calls, freed by kernel_ctx_free */
  char err[RT_ERR_LEN];
} KernelCtx;

void kernel_ctx_init(KernelCtx *kx);
void kernel_ctx_free(KernelCtx *kx);
/* Records the first error message; always returns false. */
bool kernel_fail(KernelCtx *kx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef bool (*KernelFn)(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                         RtTensor *const *out);

/* An entry of a family table: the registry name of the op it runs. */
typedef struct KernelDef {
  const char *name;
  KernelFn fn;
} KernelDef;

/* The kernel of the op at registry index `op`, or NULL (the families'
 * rows by index: ops_rule_row, which rejects a row naming an unknown op). */
const KernelDef *kernels_get(int op);
/* Calls the kernel of the op at registry index `op` on outputs the caller
 * allocated.  Fails with "no op with registry index N" for an invalid index
 * and "no kernel for op `x`" for an op without a kernel. */
bool kernels_run(KernelCtx *kx, int op, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                 RtTensor *const *out);
/* A function called after every kernels_run (NULL: none, the default)
 * with the op's registry index, the operands and the run's wall time: the
 * profiler's counters (engine/profile.h).  One hook at a time. */
typedef void (*KernelRunHook)(void *user, int op, int nin, RtTensor *const *in, int nout,
                              RtTensor *const *out, double ms);
void kernels_set_run_hook(KernelRunHook hook, void *user);
/* The hook installed (NULL: none) and its user. */
KernelRunHook kernels_run_hook(void **user);
/* Runs the op's type relation on the inputs' actual shapes and values,
 * allocates the outputs (a tuple type gives several), and runs the kernel.
 * On success out[0..*nout) hold new references (views for OP_VIEW ops); on
 * failure nothing is left allocated and kx->err says why (a relation's
 * message, an allocation failure, or the kernel's error). */
bool kernels_infer_and_run(KernelCtx *kx, int op, int nin, RtTensor *const *in, const Attrs *attrs,
                           int maxout, int *nout, RtTensor **out);

/* ── shared by the family files (kernels_*.c) ── */

/* The per-family tables, each ending with a NULL name. */
#define KERNEL_FAMILIES(X) \
  X(elemwise)              \
  X(reduce)                \
  X(nn)                    \
  X(transform)             \
  X(transform_shape)       \
  X(transform_index)       \
  X(algorithm)             \
  X(numeric)               \
  X(dyn)                   \
  X(image)                 \
  X(vision)                \
  X(nn_conv)               \
  X(nn_pool)               \
  X(nn_layout)             \
  X(qnn)
#define X(f) extern const KernelDef kernels_family_##f[];
KERNEL_FAMILIES(X)
#undef X

/* Attribute access with the registry's defaults; a bad attribute makes
 * kernel_attrs_ok false (and sets kx->err). */
int64_t kattr_int(KernelCtx *kx, const Attrs *attrs, const char *key);
double kattr_float(KernelCtx *kx, const Attrs *attrs, const char *key);
bool kattr_bool(KernelCtx *kx, const Attrs *attrs, const char *key);
const char *kattr_str(KernelCtx *kx, const Attrs *attrs, const char *key);
bool kattr_is_none(KernelCtx *kx, const Attrs *attrs, const char *key);
int kattr_ints(KernelCtx *kx, const Attrs *attrs, const char *key, int64_t *out, int max);
bool kernel_attrs_ok(KernelCtx *kx);
/* A possibly negative axis normalized into [0, ndim), or -1 after kernel_fail. */
int kernel_axis(KernelCtx *kx, int64_t axis, int ndim);

/* Compute lanes: every dtype is computed in one of four C types.  float16
 * and float32 compute in float (as numpy does), float64 in double, signed
 * integers in int64_t, unsigned integers and bool in uint64_t; integer
 * results are narrowed modulo 2^bits when stored. */
typedef enum Lane { LANE_F32, LANE_F64, LANE_I64, LANE_U64 } Lane;
Lane kernel_lane(DType dt);
/* Blocks and single values of lane data (unions keep the accesses typed). */
enum { KBLK = 512 };
typedef union LaneBlock {
  float f[KBLK];
  double d[KBLK];
  int64_t i[KBLK];
  uint64_t u[KBLK];
} LaneBlock;
typedef union LaneVal {
  float f;
  double d;
  int64_t i;
  uint64_t u;
} LaneVal;
size_t lane_bytes(Lane l);

/* Loads n elements of dtype dt from base (element index off, then every
 * `stride` elements) into dst as lane l; stores n lane values from src into
 * base[off..off+n) as dtype dt.  Conversions are those of `cast`: to bool,
 * nonzero is true; float to integer truncates toward zero and saturates,
 * NaN gives 0; integer to narrower integer wraps. */
void lane_load(Lane l, DType dt, const void *base, int64_t off, int64_t stride, int64_t n,
               void *dst);
void lane_store(Lane l, DType dt, const void *src, void *base, int64_t off, int64_t n);
/* A whole tensor as a malloc'd lane array (NULL after kernel_fail). */
void *lane_array(KernelCtx *kx, const RtTensor *t, Lane l);
/* maximum / minimum of two floats as every kernel defines them: NaN
 * propagates (the first operand's when both are NaN), and -0 < +0 (numpy
 * leaves the sign of a zero result to its SIMD paths). */
static inline double kernel_fmax(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline double kernel_fmin(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
/* malloc that fails through kernel_fail instead of aborting. */
void *kernel_alloc(KernelCtx *kx, size_t n);

/* Iteration over an output shape with broadcast inputs, row by row: the
 * innermost (coalesced) dimension is a row of `len` elements; operand k's
 * row starts at element off[k] and steps by step[k] (0 when broadcast). */
enum { BCAST_MAX_OPS = 4 };
typedef struct BcastIter {
  int nops, ndim;
  int64_t shape[TENSOR_MAX_RANK];
  int64_t strides[BCAST_MAX_OPS][TENSOR_MAX_RANK];
  int64_t idx[TENSOR_MAX_RANK];
  int64_t off[BCAST_MAX_OPS], step[BCAST_MAX_OPS], len;
  int64_t rows, done; /* rows in all, rows handed out */
} BcastIter;

void bcast_init(BcastIter *it, int ndim, const int64_t *shape, int nops,
                const RtTensor *const *ops);
/* Advances to the next row; false when done.  Call once before the first row. */
bool bcast_next(BcastIter *it);

/* Row-major strides (in elements) of a shape. */
void kernel_strides(int ndim, const int64_t *shape, int64_t *strides);
/* Fills out (contiguous) from x read at element `base` with per-output-dim
 * element strides istr (0 broadcasts, negative walks backwards). */
void kernel_view_copy(const RtTensor *x, int64_t base, const int64_t *istr, RtTensor *out);
/* Every element of out = v[0] converted to out's dtype. */
void kernel_fill(RtTensor *out, const RtTensor *v);
/* strided_slice of x into out: nb begin values, ne end values, ns strides
 * (1 value applies to all), na axes (-1: the first axes in order). */
typedef struct SliceArgs {
  int nb, ne, ns, na;
  int64_t b[TENSOR_MAX_RANK], e[TENSOR_MAX_RANK], s[TENSOR_MAX_RANK], axes[TENSOR_MAX_RANK];
  bool size_mode;
} SliceArgs;
bool kernel_strided_slice(KernelCtx *kx, const RtTensor *x, const SliceArgs *sa, RtTensor *out);
/* Copies the bytes of `in` to `out` unless they share a buffer (view kernels). */
bool kernel_copy_view(KernelCtx *kx, int nin, RtTensor *const *in, const Attrs *attrs, int nout,
                      RtTensor *const *out);

#endif
