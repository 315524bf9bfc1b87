/* bind_params.c — BindParams (seed 002; TVM's bind_params_by_name): the
 * parameters of one function whose names match the keys of a tensor file
 * become constants; the other parameters stay, in order.
 *
 * The pass takes its tensors as its input besides the module (PassCtx.input,
 * which pass_bind gives it), since a file is not something a pass list can
 * name; `:pass BindParams` alone is an error that says so.  A key `w` or `%w` matches parameter
 * `%w` (failing an exact match, `fc1.weight` matches `%fc1_weight`, the way the printer shows it).
 * Every key must name a parameter, and its tensor must fit the parameter's annotation (dtype and
 * rank; constant dims equal; `?` and size variables take any size — the type check of the result
 * catches inconsistent size variables).  Errors name both sides: the parameter with its declared
 * type at its span, the file's entry with its shape and dtype.  Each bound parameter is reported to
 * the hook as rule "bind". */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_int.h"
#include "passes/rewrite.h"

/* "Tensor[(2, 3), float32]" of a file entry, as the printer writes types. */
static void tensor_type_text(StrBuf *b, const Tensor *t) {
  sb_puts(b, "Tensor[(");
  for (int i = 0; i < t->ndim; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  sb_printf(b, "), %s]", dtype_name(t->dtype));
}

static bool fits(const Type *ty, const Tensor *t) {
  if (!ty || ty->kind == TY_INCOMPLETE) return true;
  if (ty->kind != TY_TENSOR || ty->u.tensor.dtype != t->dtype || ty->u.tensor.ndim != t->ndim)
    return false;
  for (int i = 0; i < t->ndim; i++)
    if (ty->u.tensor.dims[i].kind == DIM_CONST && ty->u.tensor.dims[i].value != t->shape[i])
      return false;
  return true;
}

/* Names equal once every character other than a letter or digit is `_`:
 * the printer shows `%fc1.weight` (a PyTorch-style key) as `%fc1_weight`. */
static bool same_printed(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = isalnum((unsigned char)*a) ? *a : '_', y = isalnum((unsigned char)*b) ? *b : '_';
    if (x != y) return false;
  }
  return !*a && !*b;
}

/* The parameter a key names: exactly, else as printed. */
static int find_param(const Function *fn, const char *key) {
  if (key[0] == '%') key++;
  for (int i = 0; i < fn->nparams; i++)
    if (var_named(fn->params[i]) && strcmp(fn->params[i]->name, key) == 0) return i;
  for (int i = 0; i < fn->nparams; i++)
    if (var_named(fn->params[i]) && same_printed(fn->params[i]->name, key)) return i;
  return -1;
}

static void unknown_key(PassCtx *pc, const FuncDef *f, int k) {
  const BindParamsSpec *spec = pc->input;
  StrBuf b = {0}, ps = {0};
  tensor_type_text(&b, spec->values[k]);
  diag_error(pc->d, spec->where, "%s: entry '%s' (%s) is not a parameter of @%s", spec->source,
             spec->names[k], b.data, f->name);
  for (int i = 0; i < f->fn->nparams; i++) {
    const Var *v = f->fn->params[i];
    char *ty = v->annot ? print_type(v->annot) : NULL;
    sb_printf(&ps, "%s%%%s%s%s", i ? ", " : "", var_named(v) ? v->name : "_", ty ? ": " : "",
              ty ? ty : "");
    free(ty);
  }
  diag_note(pc->d, f->span, "@%s's parameters: %s", f->name, f->fn->nparams ? ps.data : "(none)");
  sb_free(&b), sb_free(&ps);
}

static void mismatch(PassCtx *pc, const FuncDef *f, const Var *p, int k) {
  const BindParamsSpec *spec = pc->input;
  StrBuf b = {0};
  tensor_type_text(&b, spec->values[k]);
  char *ty = print_type(p->annot);
  diag_error(pc->d, p->span, "parameter %%%s of @%s has type %s, but %s entry '%s' is %s", p->name,
             f->name, ty, spec->source, spec->names[k], b.data);
  diag_note(pc->d, spec->where, "bound from %s here", spec->source);
  free(ty);
  sb_free(&b);
}

/* Maps each key to its parameter (which[k]); false after errors. */
static bool match_keys(PassCtx *pc, const FuncDef *f, int *which, bool *bound) {
  const BindParamsSpec *spec = pc->input;
  bool ok = true;
  for (int k = 0; k < spec->n; k++) {
    int i = which[k] = find_param(f->fn, spec->names[k]);
    if (i < 0) {
      unknown_key(pc, f, k), ok = false;
    } else if (bound[i]) {
      diag_error(pc->d, spec->where, "%s: entries '%s' and '%%%s' both name parameter %%%s",
                 spec->source, spec->names[k], f->fn->params[i]->name, f->fn->params[i]->name);
      ok = false;
    } else if (!fits(f->fn->params[i]->annot, spec->values[k])) {
      mismatch(pc, f, f->fn->params[i], k), ok = false;
    }
    if (i >= 0) bound[i] = true;
  }
  return ok;
}

static void report_binds(PassCtx *pc, const FuncDef *f, const int *which) {
  const BindParamsSpec *spec = pc->input;
  if (!pass_listening(pc)) return;
  for (int k = 0; k < spec->n && !pc->stopped; k++) {
    const Var *p = f->fn->params[which[k]];
    StrBuf b = {0}, a = {0};
    char *ty = p->annot ? print_type(p->annot) : NULL;
    sb_printf(&b, "%%%s%s%s", p->name, ty ? ": " : "", ty ? ty : "");
    sb_puts(&a, "constant ");
    tensor_type_text(&a, spec->values[k]);
    sb_printf(&a, " from %s entry '%s'", spec->source, spec->names[k]);
    pass_report_text(pc, "bind", b.data, a.data, p->span);
    free(ty);
    sb_free(&b), sb_free(&a);
  }
}

static Function *bind_function(PassCtx *pc, const FuncDef *f, const int *which, const bool *bound) {
  const BindParamsSpec *spec = pc->input;
  Rewriter rw = {.a = pc->a};
  for (int k = 0; k < spec->n; k++) {
    Var *p = f->fn->params[which[k]];
    ptrmap_put(&rw.subst, p, expr_const(pc->a, spec->values[k], p->span));
  }
  Var **params = ARENA_ARRAY(pc->a, Var *, f->fn->nparams ? f->fn->nparams : 1);
  int n = 0;
  for (int i = 0; i < f->fn->nparams; i++)
    if (!bound[i]) params[n++] = f->fn->params[i];
  Expr *body = rw_expr(&rw, f->fn->body);
  ptrmap_free(&rw.subst);
  return rw_function_with(pc->a, f->fn, n, params, f->fn->ret, body);
}

/* The pass: binds the side table's tensors into a copy of its function.
 * Every key is matched and checked before anything is built, so a failed
 * bind returns NULL and never a half-bound module. */
Module *pass_bind_params(PassCtx *pc, Module *in) {
  const BindParamsSpec *spec = pc->input;
  if (!spec) {
    diag_error(pc->d, (Span){0},
               "BindParams needs a tensor file: use `:bind @f FILE` "
               "(or `rly --params FILE`)");
    return NULL;
  }
  FuncDef *f = module_func(in, spec->func);
  if (!f) {
    diag_error(pc->d, spec->where, "no function @%s to bind parameters of", spec->func);
    return NULL;
  }
  pass_enter_def(pc, f);
  int *which = ARENA_ARRAY(&pc->scratch, int, spec->n + 1);
  bool *bound = ARENA_ARRAY(&pc->scratch, bool, f->fn->nparams + 1);
  memset(bound, 0, sizeof(bool) * (size_t)(f->fn->nparams + 1));
  if (!match_keys(pc, f, which, bound)) return NULL;
  report_binds(pc, f, which);
  if (pc->stopped) return NULL;
  Module *out = module_copy(in, pc->a);
  pass_replace_def(pc, out, f, bind_function(pc, f, which, bound));
  return out;
}

Module *pass_bind(const BindParamsSpec *s, Module *in, Arena *a, DiagCtx *d, const PassHook *hook) {
  return pass_run_input(pass_lookup("BindParams"), in, a, d, hook, NULL, NULL, (Span){0}, s);
}
