/* grad.h — gradient rules of the op registry's ops, read by the Gradient
 * pass (ad/gradient*.c) through grad_rule(op index).
 *
 * A rule is written in rly ops: given the forward values of one call (its
 * arguments x[i] and its result y, atoms carrying their types) and the
 * adjoint of the result (dy[0] for a tensor result, dy[i] for field i of a
 * tuple result; NULL when zero), it builds the adjoint contribution of each
 * argument (dx[i]; NULL for none) as op calls through the builders below,
 * so the adjoint program fuses and compiles like any other.  A rule may
 * also replace the forward computation (OpGrad.forward) to keep what the
 * backward step needs: nn.dropout_train draws its mask once, in the
 * forward, and both directions use it (the key is split once).
 *
 * The builders let-bind every call through GradCx.bind (the pass decides
 * where the binding goes: the function's let chain in the first-order
 * form, a backpropagator's body in the higher-order one) and type it with
 * the op's relation.  A rule that cannot differentiate a call (an attribute
 * it does not handle) fails with grad_fail and a message. */
#ifndef RLY_OPS_GRAD_H
#define RLY_OPS_GRAD_H

#include "ops/ops.h"

typedef struct GradCx {
  Arena *a;  /* where the adjoint expressions are allocated */
  Span span; /* the differentiated call's */
  /* Binds value (typed) to a fresh variable where the adjoint code goes and
   * returns the variable as an expression of the same type. */
  Expr *(*bind)(struct GradCx *G, Expr *value);
  void *user;
  char err[256]; /* set by grad_fail */
} GradCx;

enum { GRAD_MAX_SAVED = 2 };

/* One call being differentiated. */
typedef struct GradCall {
  const Expr *call; /* the input's call (typed; attributes) */
  int nx;
  Expr **x;                    /* the forward values of its arguments */
  Expr *y;                     /* its forward result */
  Expr *saved[GRAD_MAX_SAVED]; /* what OpGrad.forward kept for the backward step */
  Expr **dy;                   /* adjoints of the result (fields of a tuple result) */
  Expr **dx;                   /* out: adjoint contributions of the arguments */
  unsigned constant;           /* bit i: argument i is a constant (no adjoint wanted) */
} GradCall;

typedef struct OpGrad {
  /* The adjoints of the arguments; false after grad_fail. */
  bool (*backward)(GradCx *G, GradCall *c);
  /* NULL, or the forward value replacing the call (bound by the pass), with
   * c->saved filled; NULL after grad_fail. */
  Expr *(*forward)(GradCx *G, GradCall *c);
} OpGrad;

/* A row of a rule file's table (grad_rules*.c): the registry name of the
 * op the rule differentiates. */
typedef struct GradDef {
  const char *op;
  const OpGrad *rule;
} GradDef;

/* The per-file tables (grad_rules.c: core, grad_rules_<f>.c: f), each
 * ending with a NULL name. */
#define GRAD_FAMILIES(X) X(core) X(reduce) X(nn) X(conv) X(layout) X(transform) X(vision)
#define X(f) extern const GradDef grad_family_##f[];
GRAD_FAMILIES(X)
#undef X

/* The rule of the op at registry index `op` (the tables put in one indexed
 * by registry index on first use); NULL: not differentiable, or an invalid
 * index. */
const OpGrad *grad_rule(int op);
/* Builds the index-keyed table from `ntables` tables into out (ops_count()
 * entries, each the row of an op or NULL); false, with the message in err,
 * when a row names an unknown op or an op twice (ops_index_rows). */
bool grad_rules_index(const GradDef *const *tables, int ntables, const void **out, char *err,
                      size_t cap);
/* The rule of the ops whose adjoint is zero: their result is constant
 * almost everywhere in the float operands (floor, comparisons, predicates),
 * or there are none (bitwise and logical ops).  :doc and --list-ops name it. */
extern const OpGrad grad_zero;

bool grad_fail(GradCx *G, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether a value of type t carries a gradient (a float tensor, or a tuple
 * holding one). */
bool grad_differentiable(const Type *t);

/* ── builders (each call is typed by its op's relation and bound) ── */

/* op(args..., attrs), NULL after grad_fail when the relation rejects it. */
Expr *grad_op(GradCx *G, const char *op, int n, Expr **args, Attrs *attrs);
Expr *grad_op1(GradCx *G, const char *op, Expr *x, Attrs *attrs);
Expr *grad_op2(GradCx *G, const char *op, Expr *x, Expr *y);
/* The type of an op call on typed arguments, by the op's relation; NULL
 * after grad_fail. */
Type *grad_type_call(GradCx *G, Expr *call);
/* A scalar constant of dtype dt (not bound: constants are atoms). */
Expr *grad_scalar(GradCx *G, DType dt, double v);
/* A constant tensor of dtype dt and a static shape, its elements v in
 * row-major order (not bound). */
Expr *grad_const(GradCx *G, DType dt, int ndim, const int64_t *shape, const double *v);
/* x's dtype, as a scalar constant v. */
Expr *grad_scalar_like(GradCx *G, const Expr *x, double v);
/* d summed to x's shape when broadcasting made it larger
 * (collapse_sum_like), else d. */
Expr *grad_unbroadcast(GradCx *G, Expr *d, Expr *x);
/* A projection e.i, bound and typed. */
Expr *grad_proj(GradCx *G, Expr *e, int i);
/* A tuple of n fields, bound and typed. */
Expr *grad_tuple(GradCx *G, int n, Expr **fields);

/* Attributes for the builders: n entries filled with the setters. */
Attrs *grad_attrs(GradCx *G, int n);
void grad_attr_int(GradCx *G, Attrs *at, int i, const char *key, int64_t v);
void grad_attr_bool(GradCx *G, Attrs *at, int i, const char *key, bool v);
void grad_attr_float(GradCx *G, Attrs *at, int i, const char *key, double v);
void grad_attr_str(GradCx *G, Attrs *at, int i, const char *key, const char *v);
void grad_attr_ints(GradCx *G, Attrs *at, int i, const char *key, int n, const int64_t *v);
/* A list of n pairs [[v[0][0], v[0][1]], ...] (pad_width). */
void grad_attr_pairs(GradCx *G, Attrs *at, int i, const char *key, int n, int64_t (*v)[2]);

/* The tensor type of e (NULL when e is not a typed tensor). */
const Type *grad_tensor_of(const Expr *e);

#endif
