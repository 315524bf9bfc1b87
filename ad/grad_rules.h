/* grad_rules.h — what the files of gradient rules share (grad_rules.c:
 * arithmetic, math, products, softmax, the first reductions and shapes;
 * grad_rules_<reduce, nn, conv, layout, transform, vision>.c): the operands
 * of the call being differentiated, one-line builders, and the helpers
 * several families use (gr_ prefix, defined in grad_rules.c).
 *
 * Invariant: a rule builds a contribution only for the arguments that
 * carry a gradient and are not constants (want); dy[0] of a tensor result
 * is never NULL when a rule runs. */
#ifndef RLY_OPS_GRAD_RULES_H
#define RLY_OPS_GRAD_RULES_H

#include "ad/grad.h"

#define X0 (c->x[0])
#define X1 (c->x[1])
#define DY (c->dy[0])

static inline bool want(const GradCall *c, int i) {
  return !(i < 32 && (c->constant >> i & 1)) && grad_differentiable(c->x[i]->ty);
}
static inline bool built(GradCx *G) { return !G->err[0]; }

static inline Expr *mul(GradCx *G, Expr *a, Expr *b) { return grad_op2(G, "multiply", a, b); }
static inline Expr *divide(GradCx *G, Expr *a, Expr *b) { return grad_op2(G, "divide", a, b); }
static inline Expr *sub(GradCx *G, Expr *a, Expr *b) { return grad_op2(G, "subtract", a, b); }
static inline Expr *add(GradCx *G, Expr *a, Expr *b) { return grad_op2(G, "add", a, b); }
static inline Expr *neg(GradCx *G, Expr *a) { return grad_op1(G, "negative", a, NULL); }
static inline Expr *k(GradCx *G, const Expr *like, double v) {
  return grad_scalar_like(G, like, v);
}

/* where(cond, d, 0): d where cond holds. */
static inline Expr *masked(GradCx *G, Expr *cond, Expr *d) {
  Expr *args[3] = {cond, d, k(G, d, 0)};
  return grad_op(G, "where", 3, args, NULL);
}

/* The rank of e's tensor type (0 when it has none). */
static inline int rank_of(const Expr *e) {
  const Type *t = grad_tensor_of(e);
  return t ? t->u.tensor.ndim : 0;
}

/* nn.matmul(a, b) with a and/or b transposed. */
Expr *gr_matmul(GradCx *G, Expr *a, Expr *b, bool ta, bool tb);
/* axis of x counted from 0. */
int gr_norm_axis(const Expr *x, int64_t axis);
/* transpose(e, axes=[1, 0, 2, 3]). */
Expr *gr_swap01(GradCx *G, Expr *e);
/* op(x, axis=[axis], keepdims=True) for a reduction op. */
Expr *gr_reduce_keep(GradCx *G, const char *op, Expr *x, int64_t axis);
Expr *gr_sum_keep(GradCx *G, Expr *x, int64_t axis);
/* sum over every axis but `axis`. */
Expr *gr_sum_but(GradCx *G, Expr *x, int64_t axis);
/* A per-channel vector v broadcast along axis a of a rank-n tensor. */
Expr *gr_along(GradCx *G, Expr *v, int a, int n);
/* Which axes of x (rank n) the reduction call reduces (axis, exclude). */
void gr_reduced_axes(const Expr *call, int n, bool *red);
/* d, of the reduction's result shape, broadcast back to x's shape. */
Expr *gr_expand_back(GradCx *G, GradCall *c, Expr *d);
/* The number of elements of x per element of y, as a scalar of x's dtype. */
Expr *gr_count(GradCx *G, GradCall *c);
/* Static dims of t (false when one is not a constant). */
bool gr_static_dims(const Type *t, int64_t *d);
Expr *gr_transpose_to(GradCx *G, Expr *e, int n, const int64_t *axes);
Expr *gr_reshape_to(GradCx *G, Expr *e, int n, const int64_t *dims);
/* The integers of a constant tensor argument (a dyn op's value argument)
 * into out (at most max); -1 after grad_fail when e is not a constant. */
int gr_const_ints(GradCx *G, GradCall *c, const Expr *e, int64_t *out, int max);
/* c as a call of the static op `op` on args (n of them, bit i of constant
 * set for a constant one) with attributes at, the same result and
 * adjoints: the dyn ops' rules run the static ones' on it. */
GradCall gr_static_form(GradCx *G, GradCall *c, const char *op, int n, Expr **args,
                        unsigned constant, Attrs *at);
/* Any convolution's rule (grad_rules_conv.c). */
bool gr_conv_backward(GradCx *G, GradCall *c);

#endif
