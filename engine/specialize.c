/* specialize.c — the cache of shape-specialized copies (specialize.h):
 * keys from the arguments' shapes, least-recently-used eviction, and the
 * copy's typing: the prepared function's body cloned (every node the
 * copy's own, so the check's types stay private to it) with new parameters
 * typed by the shapes, checked again, then constant-folded until its shape
 * arithmetic is constant.  Fusing and lowering are the engine's. */
#include "engine/specialize.h"

#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "types/types.h"

enum { SPEC_MAX_SIZEVARS = 64, SPEC_FOLD_ROUNDS = 16 };

struct SpecCache {
  SpecEntry *items; /* malloc'd */
  int n, cap;
  uint64_t clock;
  PtrMap refused; /* prepared FuncDef → 1: its copies cannot run planned */
};

SpecCache *spec_cache_new(void) {
  SpecCache *c = calloc(1, sizeof *c);
  if (!c) rly_oom();
  return c;
}

static void entry_drop(SpecEntry *s, Interp *in) {
  interp_drop_plan(in, s->fn);
  module_free(s->mod);
  free(s->key);
}

void spec_cache_clear(SpecCache *c, Interp *in) {
  for (int i = 0; i < c->n; i++) entry_drop(&c->items[i], in);
  c->n = 0;
  ptrmap_free(&c->refused);
  c->refused = (PtrMap){0};
}

void spec_cache_free(SpecCache *c, Interp *in) {
  if (!c) return;
  spec_cache_clear(c, in);
  free(c->items);
  free(c);
}

/* ── keys ── */

typedef struct SizeVars {
  const char *name[SPEC_MAX_SIZEVARS];
  int64_t value[SPEC_MAX_SIZEVARS];
  int n;
} SizeVars;

/* Whether size variable `name` may be v (binding it on first sight). */
static bool sizevar_fits(SizeVars *sv, const char *name, int64_t v) {
  for (int i = 0; i < sv->n; i++)
    if (strcmp(sv->name[i], name) == 0) return sv->value[i] == v;
  if (sv->n == SPEC_MAX_SIZEVARS) return false;
  sv->name[sv->n] = name, sv->value[sv->n++] = v;
  return true;
}

static bool tensor_fits(const Type *t, const RtTensor *x, SizeVars *sv) {
  if (t->u.tensor.dtype != x->dtype || t->u.tensor.ndim != x->ndim) return false;
  for (int d = 0; d < x->ndim; d++) {
    const Dim *dim = &t->u.tensor.dims[d];
    if (dim->kind == DIM_CONST && dim->value != x->shape[d]) return false;
    if (dim->kind == DIM_VAR && !sizevar_fits(sv, dim->name, x->shape[d])) return false;
    if (dim->kind == DIM_META) return false;
  }
  return true;
}

static void key_tensor(StrBuf *b, const RtTensor *x) {
  sb_putc(b, '(');
  for (int d = 0; d < x->ndim; d++) sb_printf(b, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
  sb_printf(b, "%s) %s", x->ndim == 1 ? "," : "", dtype_name(x->dtype));
}

/* What the planned executor cannot run (interp/plan.c): control flow,
 * closures, references, state, calls of functions and effectful ops. */
static bool unplannable_visit(void *ctx, Expr *e) {
  bool *bad = ctx;
  switch (e->kind) {
    case EX_IF:
    case EX_MATCH:
    case EX_FN:
    case EX_REF_NEW:
    case EX_REF_READ:
    case EX_REF_WRITE:
    case EX_FREE_VAR:
    case EX_GLOBAL:
    case EX_CTOR:
      *bad = true;
      break;
    case EX_OP:
      *bad = *bad || ops_get(e->u.op.index)->effectful;
      break;
    default:
      break;
  }
  return !*bad;
}

bool spec_plannable(const FuncDef *src) {
  bool bad = false;
  expr_walk(src->fn->body, unplannable_visit, &bad);
  return !bad;
}

char *spec_key(const FuncDef *src, Value **args, int n) {
  if (src->fn->nparams != n) return NULL;
  SizeVars sv = {.n = 0};
  StrBuf b = {0};
  for (int i = 0; i < n; i++) {
    const Type *t = src->fn->params[i]->annot;
    if (!t || t->kind != TY_TENSOR || args[i]->kind != V_TENSOR ||
        !tensor_fits(t, args[i]->u.tensor, &sv))
      return sb_free(&b), NULL;
    if (i) sb_puts(&b, "; ");
    key_tensor(&b, args[i]->u.tensor);
  }
  return b.data;
}

/* ── the cache ── */

SpecEntry *spec_find(SpecCache *c, const FuncDef *src, const char *key) {
  for (int i = 0; i < c->n; i++) {
    SpecEntry *s = &c->items[i];
    if (s->src != src || strcmp(s->key, key) != 0) continue;
    s->used = ++c->clock, s->calls++;
    return s;
  }
  return NULL;
}

static void evict_lru(SpecCache *c, Interp *in) {
  int old = 0;
  for (int i = 1; i < c->n; i++)
    if (c->items[i].used < c->items[old].used) old = i;
  entry_drop(&c->items[old], in);
  c->items[old] = c->items[--c->n];
}

SpecEntry *spec_add(SpecCache *c, Interp *in, int max, const FuncDef *src, char *key,
                    const Function *fn, Module *mod, double build_ms) {
  while (c->n > 0 && c->n >= max) evict_lru(c, in);
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 8;
    c->items = realloc(c->items, sizeof *c->items * (size_t)c->cap);
    if (!c->items) rly_oom();
  }
  SpecEntry *s = &c->items[c->n++];
  *s = (SpecEntry){src, key, fn, mod, ++c->clock, 1, build_ms};
  return s;
}

bool spec_refused(const SpecCache *c, const FuncDef *src) { return ptrmap_has(&c->refused, src); }

void spec_refuse_def(SpecCache *c, const FuncDef *src) { ptrmap_put(&c->refused, src, (void *)1); }

void spec_refuse(SpecCache *c, Interp *in, const Function *fn) {
  for (int i = 0; i < c->n; i++) {
    if (c->items[i].fn != fn) continue;
    ptrmap_put(&c->refused, c->items[i].src, (void *)1);
    entry_drop(&c->items[i], in);
    c->items[i] = c->items[--c->n];
    return;
  }
}

int spec_count(const SpecCache *c) { return c ? c->n : 0; }

static int by_recent(const void *a, const void *b) {
  uint64_t x = (*(const SpecEntry *const *)a)->used, y = (*(const SpecEntry *const *)b)->used;
  return x < y ? 1 : x > y ? -1 : 0;
}

const SpecEntry *spec_at(const SpecCache *c, int i) {
  if (!c || i < 0 || i >= c->n) return NULL;
  const SpecEntry **order = malloc(sizeof *order * (size_t)c->n);
  if (!order) rly_oom();
  for (int j = 0; j < c->n; j++) order[j] = &c->items[j];
  qsort(order, (size_t)c->n, sizeof *order, by_recent);
  const SpecEntry *s = order[i];
  free(order);
  return s;
}

/* ── the copy ── */

static Type *concrete_type(Arena *a, const RtTensor *x, Span sp) {
  Dim dims[TENSOR_MAX_RANK];
  for (int d = 0; d < x->ndim; d++) dims[d] = (Dim){.kind = DIM_CONST, .value = x->shape[d]};
  return type_tensor(a, x->dtype, x->ndim, dims, sp);
}

static bool only_spec(void *user, const Def *d) {
  return d->kind == DEF_FUNC && strcmp(d->u.func->name, user) == 0;
}

/* One FoldConstant over the copy, checked again; NULL when nothing changed
 * or it failed. */
static Module *fold_once(Arena *a, Module *sm, const char *name, DiagCtx *d) {
  Function *sf = module_func(sm, name)->fn;
  PassScope sc = {only_spec, (void *)name, name};
  Module *fm = pass_run_scoped(pass_lookup("FoldConstant"), sm, a, d, NULL, &sc);
  if (!fm || fm == sm) return NULL;
  FuncDef *fd = module_func(fm, name);
  if (fd && fd->fn != sf && ty_check_def(fm, name, d)) return fm;
  module_free(fm);
  return NULL;
}

/* The copy after FoldConstant: the shapes its arithmetic reads (shape_of
 * of what is now static) become constants, so reshapes to them are static
 * too, and what follows them, in the next round. */
static Function *folded(Arena *a, Module *sm, const char *name, DiagCtx *d) {
  Module *cur = sm;
  for (int i = 0; i < SPEC_FOLD_ROUNDS; i++) {
    Module *next = fold_once(a, cur, name, d);
    if (!next) break;
    if (cur != sm) module_free(cur);
    cur = next;
  }
  Function *r = module_func(cur, name)->fn;
  if (cur != sm) module_free(cur);
  return r;
}

Function *spec_function(Arena *a, const Module *m, const FuncDef *src, Value **args, int n) {
  const Function *f = src->fn;
  Var **params = ARENA_ARRAY(a, Var *, n);
  Rewriter rw = {.a = a};
  for (int i = 0; i < n; i++) {
    const Var *p = f->params[i];
    params[i] = var_new(a, p->name, concrete_type(a, args[i]->u.tensor, p->span), p->span);
    ptrmap_put(&rw.subst, p, expr_var(a, params[i], p->span));
  }
  Expr *body = rw_expr(&rw, expr_clone(a, f->body)); /* every node the copy's own */
  ptrmap_free(&rw.subst);
  Function *sf = rw_function_with(a, f, n, params, NULL, body);
  Module *sm = module_copy(m, a);
  FuncDef *sfd = ARENA_NEW(a, FuncDef);
  *sfd = (FuncDef){src->name, sf, src->span, NULL};
  module_add(sm, (Def){.kind = DEF_FUNC, .u.func = sfd});
  DiagCtx d;
  diag_init(&d);
  if (ty_check_def(sm, src->name, &d))
    sf = folded(a, sm, src->name, &d);
  else
    sf = NULL;
  diag_free(&d);
  module_free(sm);
  return sf;
}
