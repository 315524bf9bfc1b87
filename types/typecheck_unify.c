/* typecheck_unify.c — metavariables, unification, substitution and
 * instantiation for the type checker (see typecheck_int.h).
 *
 * Dimensions: constants equal only themselves; a size variable (DIM_VAR)
 * is rigid and equals only the same name; `?` equals anything and binds
 * nothing, so a metavariable unified with `?` stays open for a more precise
 * size later.  Type unification has an occurs check, so the checker never
 * builds a cyclic type. */
#include <stdlib.h>
#include <string.h>

#include "types/typecheck_int.h"

/* ── Var.id → Type* map ──
 * Var ids come from one process-wide counter, so the vars of a program are
 * nearly dense: a two-level table (pages of 4096 slots) beats hashing and
 * never rehashes. */

enum { PAGE_BITS = 12, PAGE_SLOTS = 1 << PAGE_BITS };

Type *ty_varmap_get(const TyVarMap *vm, uint64_t id) {
  uint64_t p = id >> PAGE_BITS;
  return p < vm->npages && vm->pages[p] ? vm->pages[p][id & (PAGE_SLOTS - 1)] : NULL;
}

void ty_varmap_put(TyVarMap *vm, uint64_t id, Type *t) {
  uint64_t p = id >> PAGE_BITS;
  if (p >= vm->npages) {
    size_t n = vm->npages ? vm->npages : 16;
    while (n <= p) n *= 2;
    vm->pages = realloc(vm->pages, sizeof(Type **) * n);
    if (!vm->pages) rly_oom();
    memset(vm->pages + vm->npages, 0, sizeof(Type **) * (n - vm->npages));
    vm->npages = n;
  }
  if (!vm->pages[p] && !(vm->pages[p] = calloc(PAGE_SLOTS, sizeof(Type *)))) rly_oom();
  vm->pages[p][id & (PAGE_SLOTS - 1)] = t;
}

static void varmap_free(TyVarMap *vm) {
  for (size_t i = 0; i < vm->npages; i++) free(vm->pages[i]);
  free(vm->pages);
}

/* ── context ── */

void ty_ctx_init(TyCtx *c, Module *m, DiagCtx *d) {
  memset(c, 0, sizeof *c);
  c->m = m, c->d = d, c->a = m->arena;
  Span none = {0};
  c->err = type_incomplete(c->a, -1, none);
  c->ntm = c->ndm = 1; /* id 0 is `_` as written */
  c->warn_nonexhaustive = true;
}

void ty_ctx_free(TyCtx *c) {
  free(c->tm), free(c->dm), free(c->zmemo);
  varmap_free(&c->vars);
  strmap_free(&c->defs), strmap_free(&c->effectful);
  for (size_t i = 0; i < c->pending.len; i++) free(c->pending.items[i]);
  vec_free(&c->pending), vec_free(&c->tparams), vec_free(&c->sizevars);
}

Type *ty_fresh(TyCtx *c, Span sp) {
  if (c->ntm >= c->captm) {
    c->captm = c->captm ? c->captm * 2 : 1024;
    c->tm = realloc(c->tm, sizeof(Type *) * (size_t)c->captm);
    if (!c->tm) rly_oom();
  }
  c->tm[c->ntm] = NULL;
  return type_incomplete(c->a, c->ntm++, sp);
}

Dim ty_fresh_dim(TyCtx *c) {
  if (c->ndm >= c->capdm) {
    c->capdm = c->capdm ? c->capdm * 2 : 256;
    c->dm = realloc(c->dm, sizeof(Dim) * (size_t)c->capdm);
    if (!c->dm) rly_oom();
  }
  Dim d = {DIM_META, c->ndm, NULL};
  c->dm[c->ndm++] = d;
  return d;
}

static bool is_meta_id(TyCtx *c, const Type *t) {
  return t->kind == TY_INCOMPLETE && t->u.incomplete.id > 0 && t->u.incomplete.id < c->ntm;
}

Type *ty_resolve(TyCtx *c, Type *t) {
  while (t && is_meta_id(c, t) && c->tm[t->u.incomplete.id]) t = c->tm[t->u.incomplete.id];
  return t;
}

Dim ty_resolve_dim(TyCtx *c, Dim d) {
  while (d.kind == DIM_META && d.value > 0 && d.value < c->ndm) {
    Dim b = c->dm[d.value];
    if (b.kind == DIM_META && b.value == d.value) break;
    d = b;
  }
  return d;
}

bool ty_is_meta(TyCtx *c, Type *t) {
  t = ty_resolve(c, t);
  return t && is_meta_id(c, t);
}

bool ty_is_error(TyCtx *c, Type *t) {
  t = ty_resolve(c, t);
  return t && t->kind == TY_INCOMPLETE && t->u.incomplete.id <= 0;
}

void ty_bind_error(TyCtx *c, Type *meta) {
  meta = ty_resolve(c, meta);
  if (is_meta_id(c, meta)) c->tm[meta->u.incomplete.id] = c->err, c->type_binds++;
}

/* ── unification ── */

bool ty_unify_dim(TyCtx *c, Dim a, Dim b) {
  a = ty_resolve_dim(c, a), b = ty_resolve_dim(c, b);
  if (a.kind == DIM_ANY || b.kind == DIM_ANY) return true;
  if (a.kind == DIM_META && b.kind == DIM_META && a.value == b.value) return true;
  if (a.kind == DIM_META) return c->dm[a.value] = b, c->dim_binds++, true;
  if (b.kind == DIM_META) return c->dm[b.value] = a, c->dim_binds++, true;
  if (a.kind != b.kind) return false;
  if (a.kind == DIM_CONST) return a.value == b.value;
  return a.name && b.name && strcmp(a.name, b.name) == 0;
}

/* The occurs check: does metavariable id appear in t?  Binding it would
 * build a cyclic type. */
static bool occurs(TyCtx *c, int64_t id, Type *t) {
  t = ty_resolve(c, t);
  switch (t->kind) {
    case TY_INCOMPLETE:
      return t->u.incomplete.id == id;
    case TY_TUPLE:
      for (int i = 0; i < t->u.tuple.n; i++)
        if (occurs(c, id, t->u.tuple.fields[i])) return true;
      return false;
    case TY_FUNC:
      for (int i = 0; i < t->u.func.nparams; i++)
        if (occurs(c, id, t->u.func.params[i])) return true;
      return occurs(c, id, t->u.func.ret);
    case TY_ADT:
      for (int i = 0; i < t->u.adt.nargs; i++)
        if (occurs(c, id, t->u.adt.args[i])) return true;
      return false;
    case TY_REF:
      return occurs(c, id, t->u.ref.inner);
    default:
      return false;
  }
}

static bool unify_list(TyCtx *c, int n, Type **a, Type **b) {
  bool ok = true;
  for (int i = 0; i < n; i++) ok &= ty_unify(c, a[i], b[i]);
  return ok;
}

/* Parameters and result, the result even after a parameter fails. */
static bool unify_func(TyCtx *c, Type *a, Type *b) {
  bool params = unify_list(c, a->u.func.nparams, a->u.func.params, b->u.func.params);
  bool ret = ty_unify(c, a->u.func.ret, b->u.func.ret);
  return params && ret;
}

/* Unifies two resolved types of the same kind, part by part.  Lists are
 * unified in full even after a failure (`&`, not `&&`), so every
 * metavariable that can be bound is. */
/* A polymorphic function where a monomorphic function type is expected
 * (`@map(@id, %l)`, a `fn [A]` literal passed or returned): a fresh
 * instance of the polymorphic one unifies with the other, as TVM's checker
 * instantiates it at the use. */
static bool unify_instance(TyCtx *c, Type *a, Type *b) {
  Type *poly = a->u.func.ntparams ? a : b, *mono = poly == a ? b : a;
  Type *inst = ty_instantiate(c, poly, poly->u.func.ntparams, poly->u.func.tparams, false);
  return inst->u.func.nparams == mono->u.func.nparams && unify_func(c, inst, mono);
}

static bool unify_same_kind(TyCtx *c, Type *a, Type *b) {
  switch (a->kind) {
    case TY_TENSOR: {
      if (a->u.tensor.dtype != b->u.tensor.dtype || a->u.tensor.ndim != b->u.tensor.ndim)
        return false;
      bool ok = true;
      for (int i = 0; i < a->u.tensor.ndim; i++)
        ok &= ty_unify_dim(c, a->u.tensor.dims[i], b->u.tensor.dims[i]);
      return ok;
    }
    case TY_TUPLE:
      return a->u.tuple.n == b->u.tuple.n &&
             unify_list(c, a->u.tuple.n, a->u.tuple.fields, b->u.tuple.fields);
    case TY_FUNC:
      if (!a->u.func.ntparams != !b->u.func.ntparams) return unify_instance(c, a, b);
      if (a->u.func.nparams != b->u.func.nparams || a->u.func.ntparams != b->u.func.ntparams)
        return false;
      return unify_func(c, a, b);
    case TY_VAR:
      return strcmp(a->u.var.name, b->u.var.name) == 0;
    case TY_ADT:
      return strcmp(a->u.adt.name, b->u.adt.name) == 0 && a->u.adt.nargs == b->u.adt.nargs &&
             unify_list(c, a->u.adt.nargs, a->u.adt.args, b->u.adt.args);
    case TY_REF:
      return ty_unify(c, a->u.ref.inner, b->u.ref.inner);
    case TY_RANDSTATE:
      return true;
    case TY_INCOMPLETE:
      return true; /* a stray `_`: as permissive as the error type */
  }
  RLY_UNREACHABLE();
}

bool ty_unify(TyCtx *c, Type *a, Type *b) {
  a = ty_resolve(c, a), b = ty_resolve(c, b);
  if (a == b || ty_is_error(c, a) || ty_is_error(c, b)) return true;
  if (is_meta_id(c, a)) {
    if (occurs(c, a->u.incomplete.id, b)) return false;
    c->tm[a->u.incomplete.id] = b;
    c->type_binds++;
    return true;
  }
  if (is_meta_id(c, b)) return ty_unify(c, b, a);
  if (a->kind != b->kind) return false;
  return unify_same_kind(c, a, b);
}

/* ── mapping over a type's parts ── */

typedef Type *(*TypeMapFn)(TyCtx *c, void *ctx, Type *t);

/* ts with f applied to each: ts itself when nothing changed, else a copy
 * (and *changed set). */
static Type **map_list(TyCtx *c, int n, Type **ts, TypeMapFn f, void *ctx, bool *changed) {
  Type **out = NULL;
  for (int i = 0; i < n; i++) {
    Type *z = f(c, ctx, ts[i]);
    if (z != ts[i] && !out) {
      out = ARENA_ARRAY(c->a, Type *, n);
      memcpy(out, ts, sizeof(Type *) * (size_t)n);
    }
    if (out) out[i] = z;
  }
  if (out) *changed = true;
  return out ? out : ts;
}

/* t with f applied to its component types, in order (tuple fields; a
 * function's parameters, then its result; ADT arguments; a ref's inner
 * type), t itself when none changes; a type of any other kind is t. */
static Type *map_parts(TyCtx *c, Type *t, TypeMapFn f, void *ctx) {
  bool ch = false;
  switch (t->kind) {
    case TY_TUPLE: {
      Type **fs = map_list(c, t->u.tuple.n, t->u.tuple.fields, f, ctx, &ch);
      return ch ? type_tuple(c->a, t->u.tuple.n, fs, t->span) : t;
    }
    case TY_FUNC: {
      Type **p = map_list(c, t->u.func.nparams, t->u.func.params, f, ctx, &ch);
      Type *r = f(c, ctx, t->u.func.ret);
      if (!ch && r == t->u.func.ret) return t;
      return type_func(c->a, t->u.func.nparams, p, r, t->u.func.ntparams, t->u.func.tparams,
                       t->span);
    }
    case TY_ADT: {
      Type **as = map_list(c, t->u.adt.nargs, t->u.adt.args, f, ctx, &ch);
      return ch ? type_adt(c->a, t->u.adt.name, t->u.adt.nargs, as, t->span) : t;
    }
    case TY_REF: {
      Type *in = f(c, ctx, t->u.ref.inner);
      return in != t->u.ref.inner ? type_ref(c->a, in, t->span) : t;
    }
    default:
      return t;
  }
}

/* ── zonking ── */

static Type *zonk_tensor(TyCtx *c, Type *t, bool final) {
  Dim *dims = NULL;
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    Dim d = t->u.tensor.dims[i];
    if (d.kind != DIM_META) continue;
    Dim r = ty_resolve_dim(c, d);
    if (r.kind == DIM_META && final) r = dim_any();
    if (r.kind == DIM_META && r.value == d.value) continue;
    if (!dims) dims = arena_memdup(c->a, t->u.tensor.dims, sizeof(Dim) * (size_t)t->u.tensor.ndim);
    dims[i] = r;
  }
  return dims ? type_tensor(c->a, t->u.tensor.dtype, t->u.tensor.ndim, dims, t->span) : t;
}

/* Substitutes bound metavariables throughout t, sharing every part that
 * does not change (see typecheck_int.h for final). */
static Type *zonk_part(TyCtx *c, void *final, Type *t) { return ty_zonk(c, t, *(bool *) final); }

/* The memo entry of bound metavariable id. */
static TyZonkMemo *zonk_memo(TyCtx *c, int64_t id, bool final) {
  if (2 * id + 1 >= c->capzmemo) {
    int64_t cap = 2 * c->captm, old = c->capzmemo;
    c->zmemo = realloc(c->zmemo, sizeof *c->zmemo * (size_t)cap);
    if (!c->zmemo) rly_oom();
    memset(c->zmemo + old, 0, sizeof *c->zmemo * (size_t)(cap - old));
    c->capzmemo = cap;
  }
  return &c->zmemo[2 * id + final];
}

/* A bound metavariable is zonked once while nothing is bound: a chain of
 * closures whose types nest (`fn () -> fn () -> …`, through one
 * metavariable per level) would otherwise be copied whole for every
 * expression that mentions it, the copies quadratic in the chain. */
Type *ty_zonk(TyCtx *c, Type *t, bool final) {
  if (!t) return t;
  int64_t id = is_meta_id(c, t) ? t->u.incomplete.id : 0;
  Type *r = ty_resolve(c, t);
  TyZonkMemo *m = id && r != t ? zonk_memo(c, id, final) : NULL;
  uint64_t gen = c->type_binds + c->dim_binds;
  if (m && m->t && m->gen == gen) return m->t;
  Type *z = r->kind == TY_TENSOR ? zonk_tensor(c, r, final) : map_parts(c, r, zonk_part, &final);
  if (m) m->t = z, m->gen = gen;
  return z;
}

const char *ty_show(TyCtx *c, Type *t) {
  char *s = print_type(ty_zonk(c, t, true));
  char *r = arena_strdup(c->a, s ? s : "?");
  free(s);
  return r;
}

/* ── instantiation and import ── */

/* One substitution in progress: names → metavariables (types or dims),
 * stale metavariable ids → fresh ones. */
typedef struct Inst {
  int ntp;
  const char **tp;
  Type **tmeta;       /* per tp, created on first use */
  bool sizes;         /* instantiate size variables */
  const PtrVec *only; /* when set: only these size variables */
  bool import;        /* `_` and stale metavariables → fresh; check ADTs */
  PtrVec dnames;      /* size variable names seen */
  Dim *dmetas;        /* parallel to dnames */
  size_t dcap;
  int64_t *old_ids; /* stale metavariable ids seen (import) */
  Type **new_metas;
  size_t nold, oldcap;
} Inst;

static Type *inst_type(TyCtx *c, Inst *in, Type *t);

static Dim inst_dim(TyCtx *c, Inst *in, Dim d) {
  if (d.kind != DIM_VAR || !in->sizes) return d;
  if (in->only && !ty_name_in(in->only, d.name)) return d;
  for (size_t i = 0; i < in->dnames.len; i++)
    if (strcmp(in->dnames.items[i], d.name) == 0) return in->dmetas[i];
  if (in->dnames.len == in->dcap) {
    in->dcap = in->dcap ? in->dcap * 2 : 8;
    in->dmetas = realloc(in->dmetas, sizeof(Dim) * in->dcap);
    if (!in->dmetas) rly_oom();
  }
  in->dmetas[in->dnames.len] = ty_fresh_dim(c);
  vec_push(&in->dnames, (void *)d.name);
  return in->dmetas[in->dnames.len - 1];
}

static Type *inst_stale(TyCtx *c, Inst *in, Type *t) {
  int64_t id = t->u.incomplete.id;
  if (id > 0)
    for (size_t i = 0; i < in->nold; i++)
      if (in->old_ids[i] == id) return in->new_metas[i];
  Type *f = ty_fresh(c, t->span);
  if (id <= 0) return f;
  if (in->nold == in->oldcap) {
    in->oldcap = in->oldcap ? in->oldcap * 2 : 8;
    in->old_ids = realloc(in->old_ids, sizeof(int64_t) * in->oldcap);
    in->new_metas = realloc(in->new_metas, sizeof(Type *) * in->oldcap);
    if (!in->old_ids || !in->new_metas) rly_oom();
  }
  in->old_ids[in->nold] = id, in->new_metas[in->nold++] = f;
  return f;
}

static Type *inst_var(TyCtx *c, Inst *in, Type *t) {
  for (int i = 0; i < in->ntp; i++) {
    if (strcmp(in->tp[i], t->u.var.name) != 0) continue;
    if (!in->tmeta[i]) in->tmeta[i] = ty_fresh(c, t->span);
    return in->tmeta[i];
  }
  return t;
}

static Type *inst_tensor(TyCtx *c, Inst *in, Type *t) {
  if (!in->sizes) return t;
  Dim *dims = NULL;
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    if (t->u.tensor.dims[i].kind != DIM_VAR) continue;
    if (!dims) dims = arena_memdup(c->a, t->u.tensor.dims, sizeof(Dim) * (size_t)t->u.tensor.ndim);
    dims[i] = inst_dim(c, in, dims[i]);
  }
  return dims ? type_tensor(c->a, t->u.tensor.dtype, t->u.tensor.ndim, dims, t->span) : t;
}

static void check_adt_ref(TyCtx *c, Type *t) {
  AdtDef *adt = module_adt(c->m, t->u.adt.name);
  if (!adt && type_name_builtin(t->u.adt.name) && t->u.adt.nargs == 0) return;
  if (!adt) {
    diag_error(c->d, t->span, "unknown type %s", t->u.adt.name);
  } else if (t->u.adt.nargs != adt->ntparams && t->u.adt.nargs != 0) {
    diag_error(c->d, t->span, "type %s expects %d type argument%s, got %d", adt->name,
               adt->ntparams, adt->ntparams == 1 ? "" : "s", t->u.adt.nargs);
  }
}

/* `List` written without arguments stands for `List[_]`. */
static Type *fill_adt_args(TyCtx *c, Type *t) {
  AdtDef *adt = module_adt(c->m, t->u.adt.name);
  if (!adt || t->u.adt.nargs || !adt->ntparams) return t;
  Type **args = ARENA_ARRAY(c->a, Type *, adt->ntparams);
  for (int i = 0; i < adt->ntparams; i++) args[i] = ty_fresh(c, t->span);
  return type_adt(c->a, t->u.adt.name, adt->ntparams, args, t->span);
}

/* Instantiation and import of a type (see Inst): type parameters and size
 * variables become metavariables, and on import `_` and stale metavariables
 * become fresh ones; unchanged parts are shared. */
static Type *inst_part(TyCtx *c, void *in, Type *t) { return inst_type(c, in, t); }

static Type *inst_type(TyCtx *c, Inst *in, Type *t) {
  if (!in->import) t = ty_resolve(c, t);
  switch (t->kind) {
    case TY_TENSOR:
      return inst_tensor(c, in, t);
    case TY_VAR:
      return inst_var(c, in, t);
    case TY_INCOMPLETE:
      return in->import ? inst_stale(c, in, t) : t;
    case TY_RANDSTATE:
      return t;
    case TY_ADT: {
      if (in->import) check_adt_ref(c, t);
      Type *r = map_parts(c, t, inst_part, in);
      return in->import ? fill_adt_args(c, r) : r;
    }
    case TY_TUPLE:
    case TY_FUNC:
    case TY_REF:
      return map_parts(c, t, inst_part, in);
  }
  RLY_UNREACHABLE();
}

static void inst_free(Inst *in) {
  free(in->tmeta), free(in->dmetas), free(in->old_ids), free(in->new_metas);
  vec_free(&in->dnames);
}

Type *ty_instantiate(TyCtx *c, Type *t, int ntp, const char **tp, bool sizes) {
  if (!t || (!ntp && !sizes)) return t;
  Inst in = {.ntp = ntp, .tp = tp, .sizes = sizes};
  in.tmeta = calloc((size_t)(ntp ? ntp : 1), sizeof(Type *));
  if (!in.tmeta) rly_oom();
  Type *r = inst_type(c, &in, t);
  if (r->kind == TY_FUNC && r->u.func.ntparams && ntp) {
    Type *f = r == t ? type_func(c->a, r->u.func.nparams, r->u.func.params, r->u.func.ret, 0, NULL,
                                 r->span)
                     : r;
    f->u.func.ntparams = 0, f->u.func.tparams = NULL;
    r = f;
  }
  inst_free(&in);
  return r;
}

Type *ty_instantiate_sizes(TyCtx *c, Type *t, const PtrVec *names) {
  Inst in = {.sizes = true, .only = names};
  Type *r = inst_type(c, &in, t);
  inst_free(&in);
  return r;
}

Type *ty_import(TyCtx *c, Type *annot) {
  if (!annot) return NULL;
  Inst in = {.import = true};
  Type *r = inst_type(c, &in, annot);
  inst_free(&in);
  return r;
}

/* ── joins and size variables ── */

static Type *join_tensor(TyCtx *c, Type *a, Type *b) {
  if (b->kind != TY_TENSOR || a->u.tensor.ndim != b->u.tensor.ndim) return a;
  Dim *dims = NULL;
  for (int i = 0; i < a->u.tensor.ndim; i++) {
    Dim x = ty_resolve_dim(c, a->u.tensor.dims[i]), y = ty_resolve_dim(c, b->u.tensor.dims[i]);
    if (x.kind == DIM_ANY || y.kind != DIM_ANY) continue;
    if (!dims) dims = arena_memdup(c->a, a->u.tensor.dims, sizeof(Dim) * (size_t)a->u.tensor.ndim);
    dims[i] = dim_any();
  }
  return dims ? type_tensor(c->a, a->u.tensor.dtype, a->u.tensor.ndim, dims, a->span) : a;
}

Type *ty_join(TyCtx *c, Type *a, Type *b) {
  a = ty_resolve(c, a), b = ty_resolve(c, b);
  if (a->kind == TY_TENSOR) return join_tensor(c, a, b);
  if (a->kind != TY_TUPLE || b->kind != TY_TUPLE || a->u.tuple.n != b->u.tuple.n) return a;
  Type **f = NULL;
  for (int i = 0; i < a->u.tuple.n; i++) {
    Type *j = ty_join(c, a->u.tuple.fields[i], b->u.tuple.fields[i]);
    if (j == a->u.tuple.fields[i]) continue;
    if (!f) f = arena_memdup(c->a, a->u.tuple.fields, sizeof(Type *) * (size_t)a->u.tuple.n);
    f[i] = j;
  }
  return f ? type_tuple(c->a, a->u.tuple.n, f, a->span) : a;
}

bool ty_name_in(const PtrVec *names, const char *name) {
  for (size_t i = 0; i < names->len; i++)
    if (strcmp(names->items[i], name) == 0) return true;
  return false;
}

/* Appends the size variable names in t, each once, in order of first
 * appearance (the order a signature binds them). */
void ty_collect_sizevars(Type *t, PtrVec *out) {
  if (!t) return;
  switch (t->kind) {
    case TY_TENSOR:
      for (int i = 0; i < t->u.tensor.ndim; i++) {
        const Dim *d = &t->u.tensor.dims[i];
        if (d->kind == DIM_VAR && !ty_name_in(out, d->name)) vec_push(out, (void *)d->name);
      }
      return;
    case TY_TUPLE:
      for (int i = 0; i < t->u.tuple.n; i++) ty_collect_sizevars(t->u.tuple.fields[i], out);
      return;
    case TY_FUNC:
      for (int i = 0; i < t->u.func.nparams; i++) ty_collect_sizevars(t->u.func.params[i], out);
      ty_collect_sizevars(t->u.func.ret, out);
      return;
    case TY_ADT:
      for (int i = 0; i < t->u.adt.nargs; i++) ty_collect_sizevars(t->u.adt.args[i], out);
      return;
    case TY_REF:
      ty_collect_sizevars(t->u.ref.inner, out);
      return;
    default:
      return;
  }
}
