/* transform_int.h — small helpers shared by the relations of the op
 * families transform_shape.c, transform_index.c and algorithm.c, and the
 * layout descriptions layout_transform's relation, kernel and compute rule
 * share (defined in transform_shape.c).
 *
 * Layouts are TVM's: an uppercase letter is a primal axis (N, C, H, W), a
 * number and a lowercase letter a subordinate axis splitting the primal of
 * the same letter (NCHW16c: C is split into C/16 outer and 16 inner).  A
 * letter appears at most once in each case, and a subordinate axis needs
 * its primal. */
#ifndef RLY_OPS_TRANSFORM_INT_H
#define RLY_OPS_TRANSFORM_INT_H

#include "ops/ops.h"

static inline Type *xf_tensor(RelCtx *cx, DType dt, int n, const Dim *dims) {
  static const Span none;
  return type_tensor(cx->arena, dt, n, dims, none);
}

static inline const char *xf_shape(RelCtx *cx, const Type *t) {
  return rel_shape_str(cx, t->u.tensor.ndim, t->u.tensor.dims);
}

static inline bool xf_is_const(Dim d, int64_t v) { return d.kind == DIM_CONST && d.value == v; }

/* Argument i as a tensor of rank 0, or fails "op: WHAT must be a scalar". */
static inline const Type *xf_scalar(RelCtx *cx, Type **args, int i, const char *what) {
  const Type *t = rel_tensor(cx, args, i);
  if (t && t->u.tensor.ndim != 0)
    return rel_fail(cx, "%s: %s must be a scalar, got %s", cx->op_name, what, rel_type_str(cx, t));
  return t;
}

/* Whether t's dtype is an integer (signed only when !unsigned_ok); fails
 * "op: WHAT must be integers, got float32" otherwise. */
static inline bool xf_int(RelCtx *cx, const Type *t, const char *what, bool unsigned_ok) {
  DType dt = t->u.tensor.dtype;
  if (unsigned_ok ? dtype_is_int(dt) : dtype_class(dt) == 'i') return true;
  rel_fail(cx, "%s: %s must be %sintegers, got %s", cx->op_name, what, unsigned_ok ? "" : "signed ",
           dtype_name(dt));
  return false;
}

/* The same dtype for two arguments; fails "op: A has dtype x but B has y". */
static inline bool xf_same_dtype(RelCtx *cx, const Type *a, const char *an, const Type *b,
                                 const char *bn) {
  if (a->u.tensor.dtype == b->u.tensor.dtype) return true;
  rel_fail(cx, "%s: %s has dtype %s but %s has %s", cx->op_name, an, dtype_name(a->u.tensor.dtype),
           bn, dtype_name(b->u.tensor.dtype));
  return false;
}

/* A dim times k: a constant when d is one (and no overflow), d itself for
 * k == 1, else `?`. */
static inline Dim xf_dim_times(Dim d, int64_t k) {
  int64_t p;
  if (k == 1) return d;
  if (d.kind == DIM_CONST && !__builtin_mul_overflow(d.value, k, &p)) return dim_const(p);
  return dim_any();
}

/* ── layouts (layout_transform) ── */

typedef struct LayoutAxis {
  char letter;    /* 'A'..'Z' for both kinds */
  int64_t factor; /* 0: primal; the split factor of a subordinate axis */
} LayoutAxis;

typedef struct Layout {
  int n;
  LayoutAxis axes[TENSOR_MAX_RANK];
  int primal[26], sub[26]; /* position of each letter's primal / subordinate axis, or -1 */
} Layout;

/* The conversion src → dst: both parsed and checked to have the same
 * primal axes.  Returns false with a message in err ("cannot convert from
 * NCHW to NHW: ..."). */
typedef struct LayoutMap {
  Layout src, dst;
} LayoutMap;

bool layout_map(const char *src, const char *dst, LayoutMap *m, char *err, size_t errn);
/* The split factor of letter l in a layout (1 without a subordinate axis). */
int64_t layout_factor(const Layout *l, int letter);

/* ── einsum equations (numpy's form: "ij,jk->ik", "...ij->...ji", "ii") ── */

enum { EINSUM_MAX_IN = 8, EINSUM_ELLIPSIS = 52 /* labels: 0-25 A-Z, 26-51 a-z (ASCII order) */ };

typedef struct EinsumTerm {
  int n;                                /* labels, the ellipsis counting as one */
  signed char lab[TENSOR_MAX_RANK + 1]; /* label ids or EINSUM_ELLIPSIS */
} EinsumTerm;

typedef struct EinsumSpec {
  int nin;
  EinsumTerm in[EINSUM_MAX_IN], out; /* out: explicit, or numpy's implicit output */
} EinsumSpec;

/* Parses an equation for nin operands of the given ranks; false with a
 * message in err (a bad character, a label count that does not match an
 * operand's rank, an output label not among the inputs, ...). */
bool einsum_parse(const char *eq, int nin, const int *ranks, EinsumSpec *s, char *err, size_t errn);
/* The number of dims the ellipsis of operand i stands for (0 without one). */
int einsum_ellipsis_dims(const EinsumSpec *s, int i, int rank);

#endif
