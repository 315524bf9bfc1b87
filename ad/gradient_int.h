/* gradient_int.h — private to the Gradient pass: its first-order form
 * (gradient.c) and its higher-order form (gradient_ho.c), and the errors
 * both report. */
#ifndef RLY_GRADIENT_INT_H
#define RLY_GRADIENT_INT_H

#include "ad/grad.h"
#include "passes/pass_int.h"

/* The higher-order form (TVM's ReverseAD): adds `name` (@f_grad) to out and
 * the transformed functions it calls; false after diagnostics. */
bool gradient_higher_order(PassCtx *pc, const Module *in, Module *out, const FuncDef *f,
                           const char *name);

/* "`op` has no gradient (in @f)" at the call. */
void grad_report_missing(PassCtx *pc, const Expr *call);
/* A gradient rule's failure (G->err) at the call. */
void grad_report_rule(PassCtx *pc, const GradCx *G, const Expr *call);

#endif
