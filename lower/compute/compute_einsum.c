/* compute_einsum.c — the compute rule (lower/compute/compute.h) of einsum
 * (materialized).
 *
 * The equation is parsed as the relation parses it (ops/algorithm.c:
 * explicit or numpy's implicit output, repeated labels, one "..." per
 * term).  Loops run over the result's axes (its labels and the ellipsis
 * dims; the outermost in parallel), and inside each element over the summed
 * labels in order of first appearance (the last fastest), as the reference
 * kernel walks them (kernels/kernels_algorithm.c): the product of the
 * operands' elements, left to right, is added to an accumulator in float64
 * (floats, rounded once at the store) or in int64, wrapping (integers: the
 * kernel's wrapping 64-bit sum narrowed), so the two agree bit for bit.
 * An operand indexes each of its axes by its label's loop variable (a
 * label repeated in a term reads the diagonal), and its ellipsis dims by
 * the result's ellipsis variables, right-aligned, a dim of size 1 at 0
 * (broadcast). */
#include "lower/compute/compute.h"
#include "ops/transform_int.h"

enum { MAX_AXES = 2 * TENSOR_MAX_RANK + EINSUM_ELLIPSIS };

typedef struct Ein {
  EinsumSpec s;
  LTensor **in;
  DType dt, acc;
  PrimExpr *var[EINSUM_ELLIPSIS]; /* each label's loop variable */
  PrimExpr *size[EINSUM_ELLIPSIS];
  int nell;
  PrimExpr *ell[TENSOR_MAX_RANK];     /* the result's ellipsis variables */
  PrimExpr *ell_dim[TENSOR_MAX_RANK]; /* and their extents */
} Ein;

/* Each label's size: the first operand dim holding it. */
static void label_sizes(Ein *E) {
  for (int i = 0; i < E->s.nin; i++) {
    int ne = einsum_ellipsis_dims(&E->s, i, E->in[i]->ndim), d = 0;
    for (int j = 0; j < E->s.in[i].n; j++) {
      int id = E->s.in[i].lab[j];
      if (id == EINSUM_ELLIPSIS) {
        d += ne;
        continue;
      }
      if (!E->size[id]) E->size[id] = E->in[i]->shape[d];
      d++;
    }
  }
}

/* Operand i's element at the current loop variables; NULL after lc_fail
 * when an ellipsis dim broadcasts only at run time. */
static PrimExpr *operand_at(LowerCx *L, const Ein *E, int i) {
  const LTensor *x = E->in[i];
  int ne = einsum_ellipsis_dims(&E->s, i, x->ndim), d = 0;
  PrimExpr *idx[TENSOR_MAX_RANK];
  for (int j = 0; j < E->s.in[i].n; j++) {
    int id = E->s.in[i].lab[j];
    if (id != EINSUM_ELLIPSIS) {
      idx[d++] = E->var[id];
      continue;
    }
    for (int e = 0; e < ne; e++, d++) {
      int at = E->nell - ne + e;
      bool one = lc_const(x->shape[d]) == 1;
      if (!one && !lc_same_dim(x->shape[d], E->ell_dim[at]))
        return lc_fail(L, "einsum: dims that broadcast only at run time"), NULL;
      idx[d] = one ? lc_int(L, 0) : E->ell[at];
    }
  }
  return lc_cast(L, E->acc, lc_at(L, x, idx));
}

/* The loops over the summed labels (in order) around acc += product. */
static void sum_loops(LowerCx *L, Ein *E, Buffer *acc) {
  bool out[EINSUM_ELLIPSIS + 1] = {0};
  TirVar *v[EINSUM_ELLIPSIS];
  int order[EINSUM_ELLIPSIS], n = 0;
  for (int j = 0; j < E->s.out.n; j++) out[(int)E->s.out.lab[j]] = true;
  for (int i = 0; i < E->s.nin; i++)
    for (int j = 0; j < E->s.in[i].n; j++) {
      int id = E->s.in[i].lab[j];
      if (id == EINSUM_ELLIPSIS || out[id]) continue;
      out[id] = true, order[n] = id;
      v[n] = lc_tvar(L, "k", E->size[id]), E->var[id] = lc_var(L, v[n++]);
    }
  for (int k = 0; k < n; k++) lc_open(L);
  PrimExpr *p = operand_at(L, E, 0), *zero = lc_int(L, 0);
  for (int i = 1; p && i < E->s.nin; i++) {
    PrimExpr *x = operand_at(L, E, i);
    p = x ? lc_bin(L, PB_MUL, p, x) : NULL;
  }
  if (!p) p = lc_lit(L, E->acc, 0); /* failed: the rule returns NULL */
  lc_store(L, acc, 1, &zero, lc_bin(L, PB_ADD, lc_load(L, acc, 1, &zero), p));
  for (int k = n; k-- > 0;) lc_for(L, LOOP_RANGE, v[k], E->size[order[k]], lc_close(L));
}

/* The result's axes: its labels' variables and the ellipsis variables. */
static int out_axes(LowerCx *L, Ein *E, const LTensor *shape_of, TirVar **v, PrimExpr **idx) {
  int m = 0;
  for (int j = 0; j < E->s.out.n; j++) {
    int id = E->s.out.lab[j];
    int k = id == EINSUM_ELLIPSIS ? E->nell : 1;
    for (int e = 0; e < k; e++, m++) {
      v[m] = lc_tvar(L, "i", shape_of->shape[m]), idx[m] = lc_var(L, v[m]);
      if (id == EINSUM_ELLIPSIS)
        E->ell[e] = idx[m], E->ell_dim[e] = shape_of->shape[m];
      else
        E->var[id] = idx[m];
    }
  }
  return m;
}

static bool einsum_setup(LowerCx *L, const Expr *call, LTensor **in, int nin, Ein *E) {
  int ranks[EINSUM_MAX_IN];
  char err[256];
  if (nin < 1 || nin > EINSUM_MAX_IN) return lc_fail(L, "einsum: operands"), false;
  E->in = in, E->dt = in[0]->dtype;
  for (int i = 0; i < nin; i++) {
    if (in[i]->dtype != E->dt) return lc_fail(L, "einsum: dtypes"), false;
    ranks[i] = in[i]->ndim;
  }
  bool fl = dtype_is_float(E->dt);
  if (!fl && !dtype_is_int(E->dt)) /* every float (float16 too) and integer dtype */
    return lc_fail(L, "einsum of %s", dtype_name(E->dt)), false;
  E->acc = fl ? DT_FLOAT64 : DT_INT64;
  if (!einsum_parse(op_attr_str(lc_arena(L), call, "equation"), nin, ranks, &E->s, err, sizeof err))
    return lc_fail(L, "einsum: %s", err), false;
  for (int i = 0; i < nin; i++) {
    int ne = einsum_ellipsis_dims(&E->s, i, ranks[i]);
    if (ne > E->nell) E->nell = ne;
  }
  label_sizes(E);
  return true;
}

static LTensor *compute_einsum(LowerCx *L, const Expr *call, LTensor **in, int nin) {
  Ein E = {0};
  if (!einsum_setup(L, call, in, nin, &E)) return NULL;
  const Type *ty = lc_result_type(call);
  int rank = ty->u.tensor.ndim;
  PrimExpr *shape[TENSOR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    Dim dm = ty->u.tensor.dims[d];
    if (dm.kind == DIM_ANY) return lc_fail(L, "einsum: a result dim known only at run time");
    shape[d] = dm.kind == DIM_CONST ? lc_int(L, dm.value) : lc_var(L, lc_size_var(L, dm.name));
  }
  Buffer *out = lc_result_buffer(L, call, E.dt, rank, shape);
  if (!out) return NULL;
  LTensor *shape_of = lc_from_buffer(L, call, out);
  TirVar *v[TENSOR_MAX_RANK];
  PrimExpr *idx[TENSOR_MAX_RANK], *one = lc_int(L, 1), *zero = lc_int(L, 0);
  int m = out_axes(L, &E, shape_of, v, idx);
  for (int d = 0; d < m; d++) lc_open(L);
  Buffer *acc = lc_alloc(L, "acc", E.acc, 1, &one);
  lc_store(L, acc, 1, &zero, lc_lit(L, E.acc, 0));
  sum_loops(L, &E, acc);
  lc_store(L, out, m, idx, lc_cast(L, E.dt, lc_load(L, acc, 1, &zero)));
  for (int d = m; d-- > 0;)
    lc_for(L, d == 0 ? LOOP_PARALLEL : LOOP_RANGE, v[d], shape_of->shape[d], lc_close(L));
  lc_mark_total(L, out); /* each element stored once */
  return lc_failed(L) ? NULL : shape_of;
}

/* The rules of this file by op name (compute_rule, lower/compute/compute.h). */
const ComputeDef compute_family_einsum[] = {
    {"einsum", compute_einsum},
    {NULL, NULL},
};
