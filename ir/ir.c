/* ir.c — node constructors, kind names, attribute lookup, and modules.
 * Modules keep definitions in insertion order plus name tables. */
#include "ir/ir.h"

#include <stdatomic.h>
#include <string.h>

#include "ir/tir.h"

static const char *const type_kind_names[] = {
#define X(e, n) n,
    TYPE_KINDS(X)
#undef X
};
static const char *const expr_kind_names[] = {
#define X(e, n) n,
    EXPR_KINDS(X)
#undef X
};

const char *type_kind_name(TypeKind k) { return type_kind_names[k]; }
const char *expr_kind_name(ExprKind k) { return expr_kind_names[k]; }

uint64_t ir_fresh_id(void) {
  static _Atomic uint64_t next = 1;
  return atomic_fetch_add(&next, 1);
}

/* ── types ── */

static Type *type_new(Arena *a, TypeKind k, Span sp) {
  Type *t = ARENA_NEW(a, Type);
  t->kind = k, t->span = sp;
  return t;
}

Type *type_tensor(Arena *a, DType dt, int ndim, const Dim *dims, Span sp) {
  Type *t = type_new(a, TY_TENSOR, sp);
  t->u.tensor.dtype = dt, t->u.tensor.ndim = ndim;
  t->u.tensor.dims = ndim ? arena_memdup(a, dims, sizeof(Dim) * (size_t)ndim) : NULL;
  return t;
}

Type *type_scalar(Arena *a, DType dt) {
  Span none = {0};
  return type_tensor(a, dt, 0, NULL, none);
}

Type *type_tuple(Arena *a, int n, Type **fields, Span sp) {
  Type *t = type_new(a, TY_TUPLE, sp);
  t->u.tuple.n = n;
  t->u.tuple.fields = n ? arena_memdup(a, fields, sizeof(Type *) * (size_t)n) : NULL;
  return t;
}

Type *type_func(Arena *a, int n, Type **params, Type *ret, int ntp, const char **tparams, Span sp) {
  Type *t = type_new(a, TY_FUNC, sp);
  t->u.func.nparams = n;
  t->u.func.params = n ? arena_memdup(a, params, sizeof(Type *) * (size_t)n) : NULL;
  t->u.func.ret = ret;
  t->u.func.ntparams = ntp;
  t->u.func.tparams = ntp ? arena_memdup(a, tparams, sizeof(char *) * (size_t)ntp) : NULL;
  return t;
}

Type *type_var(Arena *a, const char *name, Span sp) {
  Type *t = type_new(a, TY_VAR, sp);
  t->u.var.name = name;
  return t;
}

Type *type_adt(Arena *a, const char *name, int nargs, Type **args, Span sp) {
  Type *t = type_new(a, TY_ADT, sp);
  t->u.adt.name = name, t->u.adt.nargs = nargs;
  t->u.adt.args = nargs ? arena_memdup(a, args, sizeof(Type *) * (size_t)nargs) : NULL;
  return t;
}

Type *type_ref(Arena *a, Type *inner, Span sp) {
  Type *t = type_new(a, TY_REF, sp);
  t->u.ref.inner = inner;
  return t;
}

Type *type_randstate(Arena *a, Span sp) { return type_new(a, TY_RANDSTATE, sp); }

bool type_name_builtin(const char *name) { return strcmp(name, "Storage") == 0; }

Type *type_incomplete(Arena *a, int64_t id, Span sp) {
  Type *t = type_new(a, TY_INCOMPLETE, sp);
  t->u.incomplete.id = id;
  return t;
}

Type *type_unit(Arena *a) {
  Span none = {0};
  return type_tuple(a, 0, NULL, none);
}

/* ── expressions ── */

/* A Var and its name in one allocation, `before` bytes after its start. */
static Var *var_alloc(Arena *a, size_t before, const char *name, size_t len, Type *annot, Span sp) {
  char *block = arena_alloc(a, before + sizeof(Var) + len + 1);
  Var *v = (Var *)(void *)(block + before);
  if (len) memcpy(v->name, name, len);
  v->annot = annot, v->id = ir_fresh_id();
  var_set_span(v, sp);
  return v;
}

Var *var_new_n(Arena *a, const char *name, size_t len, Type *annot, Span sp) {
  return var_alloc(a, 0, name, len, annot, sp);
}

Var *var_new(Arena *a, const char *name, Type *annot, Span sp) {
  return var_alloc(a, 0, name, name ? strlen(name) : 0, annot, sp);
}

/* The device pointer precedes the Var in the same allocation. */
Var *var_new_device(Arena *a, const char *name, Type *annot, Span sp, const AttrValue *device) {
  Var *v = var_alloc(a, sizeof device, name, name ? strlen(name) : 0, annot, sp);
  v->has_device = true;
  memcpy((char *)v - sizeof device, &device, sizeof device);
  return v;
}

const AttrValue *var_device(const Var *v) {
  const AttrValue *device = NULL;
  if (v->has_device) memcpy(&device, (const char *)v - sizeof device, sizeof device);
  return device;
}

#define PAYLOAD(member) (offsetof(Expr, u) + sizeof(((Expr *)0)->u.member))

/* The bytes a node of kind k occupies: the header and its kind's member of
 * the union.  Leaves (a variable, a constant) take 32 bytes, not 56. */
size_t expr_size(ExprKind k) {
  switch (k) {
    case EX_CONST:
      return PAYLOAD(konst);
    case EX_VAR:
      return PAYLOAD(var);
    case EX_GLOBAL:
      return PAYLOAD(global);
    case EX_OP:
      return PAYLOAD(op);
    case EX_CTOR:
      return PAYLOAD(ctor);
    case EX_CALL:
      return PAYLOAD(call);
    case EX_TUPLE:
      return PAYLOAD(tuple);
    case EX_PROJ:
      return PAYLOAD(proj);
    case EX_LET:
      return PAYLOAD(let);
    case EX_FREE_VAR:
      return PAYLOAD(free_var);
    case EX_FN:
      return PAYLOAD(fn);
    case EX_IF:
      return PAYLOAD(if_);
    case EX_MATCH:
      return PAYLOAD(match);
    case EX_REF_NEW:
      return PAYLOAD(ref_new);
    case EX_REF_READ:
      return PAYLOAD(ref_read);
    case EX_REF_WRITE:
      return PAYLOAD(ref_write);
    case EX_DATAFLOW:
      return PAYLOAD(dataflow);
  }
  return sizeof(Expr);
}

_Static_assert(sizeof(Span) == 8, "a span is 8 bytes");
_Static_assert(sizeof(ExprKind) == 1 && offsetof(Expr, kind) == 7,
               "an Expr's kind is its span's last byte");
_Static_assert(offsetof(Expr, ty) == 8 && offsetof(Expr, u) == 16, "an Expr's header is 16 bytes");
_Static_assert(sizeof(Var) == 24, "a Var is 24 bytes and its name");

/* The range into the span's first 7 bytes; the 8th (aux) is the owner's. */
static void span_store(void *dst, Span sp) {
  unsigned char *d = dst, keep = d[7];
  memcpy(d, &sp, sizeof sp);
  d[7] = keep;
}

void expr_set_span(Expr *e, Span sp) { span_store(e, sp); }

void var_set_span(Var *v, Span sp) { span_store((unsigned char *)v + offsetof(Var, span), sp); }

size_t expr_bytes(const Expr *e) {
  size_t n = expr_size(e->kind);
  return e->kind == EX_CALL ? n + sizeof(Expr *) * (size_t)e->u.call.nargs : n;
}

static Expr *expr_alloc(Arena *a, ExprKind k, size_t bytes, Span sp) {
  Expr *e = arena_alloc(a, bytes);
  expr_set_span(e, sp);
  e->kind = k;
  return e;
}

Expr *expr_new(Arena *a, ExprKind k, Span sp) {
  RLY_ASSERT(k != EX_CALL);
  return expr_alloc(a, k, expr_size(k), sp);
}

Expr *expr_copy(Arena *a, const Expr *e) { return arena_memdup(a, e, expr_bytes(e)); }

Expr *expr_const(Arena *a, Tensor *t, Span sp) {
  Expr *e = expr_new(a, EX_CONST, sp);
  e->u.konst.value = t;
  return e;
}

Expr *expr_var(Arena *a, Var *v, Span sp) {
  Expr *e = expr_new(a, EX_VAR, sp);
  e->u.var = v;
  return e;
}

Expr *expr_global(Arena *a, const char *name, Span sp) {
  Expr *e = expr_new(a, EX_GLOBAL, sp);
  e->u.global.name = name;
  return e;
}

Expr *expr_call(Arena *a, Expr *fn, int n, Expr **args, Attrs *attrs, Span sp) {
  Expr *e = expr_alloc(a, EX_CALL, expr_size(EX_CALL) + sizeof(Expr *) * (size_t)n, sp);
  e->u.call.fn = fn, e->u.call.nargs = n, e->u.call.attrs = attrs;
  if (n) memcpy(e->u.call.args, args, sizeof(Expr *) * (size_t)n);
  return e;
}

Expr *expr_tuple(Arena *a, int n, Expr **fields, Span sp) {
  Expr *e = expr_new(a, EX_TUPLE, sp);
  e->u.tuple.n = n;
  e->u.tuple.fields = n ? arena_memdup(a, fields, sizeof(Expr *) * (size_t)n) : NULL;
  return e;
}

Expr *expr_proj(Arena *a, Expr *t, int index, Span sp) {
  Expr *e = expr_new(a, EX_PROJ, sp);
  e->u.proj.tuple = t, e->u.proj.index = index;
  return e;
}

Expr *expr_let(Arena *a, Var *v, Expr *value, Expr *body, Span sp) {
  Expr *e = expr_new(a, EX_LET, sp);
  e->u.let.var = v, e->u.let.value = value, e->u.let.body = body;
  return e;
}

Expr *expr_if(Arena *a, Expr *c, Expr *t, Expr *f, Span sp) {
  Expr *e = expr_new(a, EX_IF, sp);
  e->u.if_.cond = c, e->u.if_.then_ = t, e->u.if_.else_ = f;
  return e;
}

Expr *expr_fn(Arena *a, Function *f, Span sp) {
  Expr *e = expr_new(a, EX_FN, sp);
  e->u.fn = f;
  return e;
}

Expr *expr_scalar_i64(Arena *a, DType dt, int64_t v, Span sp) {
  Tensor *t = tensor_new(a, dt, 0, NULL);
  tensor_set_i64(t, 0, v);
  return expr_const(a, t, sp);
}

Expr *expr_scalar_f64(Arena *a, DType dt, double v, Span sp) {
  Tensor *t = tensor_new(a, dt, 0, NULL);
  tensor_set_f64(t, 0, v);
  return expr_const(a, t, sp);
}

Expr *expr_scalar_bool(Arena *a, bool v, Span sp) { return expr_scalar_i64(a, DT_BOOL, v, sp); }

/* ── attributes ── */

Attrs *attrs_new(Arena *a, int n) {
  Attrs *at = ARENA_NEW(a, Attrs);
  at->n = n;
  at->keys = ARENA_ARRAY(a, const char *, n ? n : 1);
  at->vals = ARENA_ARRAY(a, AttrValue *, n ? n : 1);
  return at;
}

const AttrValue *attrs_get(const Attrs *a, const char *key) {
  if (!a) return NULL;
  for (int i = 0; i < a->n; i++)
    if (strcmp(a->keys[i], key) == 0) return a->vals[i];
  return NULL;
}

static AttrValue *attr_new(Arena *a, AttrKind k) {
  AttrValue *v = ARENA_NEW(a, AttrValue);
  v->kind = k;
  return v;
}

AttrValue *attr_int(Arena *a, int64_t i, DType dt) {
  AttrValue *v = attr_new(a, AV_INT);
  v->u.i = i, v->dtype = dt;
  return v;
}

AttrValue *attr_float(Arena *a, double f, DType dt) {
  AttrValue *v = attr_new(a, AV_FLOAT);
  v->u.f = f, v->dtype = dt;
  return v;
}

AttrValue *attr_str(Arena *a, const char *s) {
  AttrValue *v = attr_new(a, AV_STR);
  v->u.s = s;
  return v;
}

AttrValue *attr_bool(Arena *a, bool b) {
  AttrValue *v = attr_new(a, AV_BOOL);
  v->u.b = b;
  return v;
}

/* ── modules ── */

const char *def_name(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return d->u.func->name;
    case DEF_ADT:
      return d->u.adt->name;
    case DEF_GLOBAL:
      return d->u.global->name;
    case DEF_PRIM:
      return d->u.prim->name;
  }
  RLY_UNREACHABLE();
}

Span def_span(const Def *d) {
  switch (d->kind) {
    case DEF_FUNC:
      return d->u.func->span;
    case DEF_ADT:
      return d->u.adt->span;
    case DEF_GLOBAL:
      return d->u.global->span;
    case DEF_PRIM:
      return d->u.prim->span;
  }
  RLY_UNREACHABLE();
}

static void module_index(Module *m, int i) {
  Def *d = &m->defs[i];
  const char *name = def_name(d);
  if (d->kind == DEF_ADT) {
    strmap_put(&m->types, name, (void *)(intptr_t)(i + 1));
    for (int c = 0; c < d->u.adt->nctors; c++)
      strmap_put(&m->ctors, d->u.adt->ctors[c].name, d->u.adt);
  } else {
    strmap_put(&m->globals, name, (void *)(intptr_t)(i + 1));
  }
}

Module *module_new(Arena *a) {
  Module *m = ARENA_NEW(a, Module);
  m->arena = a;
  StateGlobal *g = ARENA_NEW(a, StateGlobal);
  g->name = "prng_state";
  g->type = type_randstate(a, g->span);
  g->builtin = true;
  Def d = {.kind = DEF_GLOBAL, .u.global = g};
  module_add(m, d);
  return m;
}

static int module_find(const StrMap *map, const char *name) {
  intptr_t i = (intptr_t)strmap_get(map, name);
  return (int)i - 1;
}

/* A redefinition replaces the old Def in place, so its index (and the
 * module's order) stays stable for the REPL; the defs array lives in the
 * arena, so growing it copies and abandons the old one. */
int module_add(Module *m, Def d) {
  const char *name = def_name(&d);
  int old = module_find(d.kind == DEF_ADT ? &m->types : &m->globals, name);
  if (old >= 0) {
    int old_kind = (int)m->defs[old].kind;
    m->defs[old] = d;
    module_index(m, old);
    return old_kind;
  }
  if (m->ndefs == m->capdefs) {
    int cap = m->capdefs ? m->capdefs * 2 : 16;
    Def *nd = ARENA_ARRAY(m->arena, Def, cap);
    if (m->ndefs) memcpy(nd, m->defs, sizeof(Def) * (size_t)m->ndefs);
    m->defs = nd, m->capdefs = cap;
  }
  m->defs[m->ndefs] = d;
  module_index(m, m->ndefs++);
  return -1;
}

const Def *module_lookup(const Module *m, const char *name) {
  int i = module_find(&m->globals, name);
  return i >= 0 ? &m->defs[i] : NULL;
}

FuncDef *module_func(const Module *m, const char *name) {
  const Def *d = module_lookup(m, name);
  return d && d->kind == DEF_FUNC ? d->u.func : NULL;
}

StateGlobal *module_state_global(const Module *m, const char *name) {
  const Def *d = module_lookup(m, name);
  return d && d->kind == DEF_GLOBAL ? d->u.global : NULL;
}

PrimFunc *module_prim(const Module *m, const char *name) {
  const Def *d = module_lookup(m, name);
  return d && d->kind == DEF_PRIM ? d->u.prim : NULL;
}

AdtDef *module_adt(const Module *m, const char *name) {
  int i = module_find(&m->types, name);
  return i >= 0 ? m->defs[i].u.adt : NULL;
}

AdtDef *module_ctor_adt(const Module *m, const char *ctor, int *index) {
  AdtDef *adt = strmap_get(&m->ctors, ctor);
  if (adt && index)
    for (int c = 0; c < adt->nctors; c++)
      if (strcmp(adt->ctors[c].name, ctor) == 0) *index = c;
  return adt;
}

Module *module_copy(const Module *m, Arena *a) {
  Module *n = ARENA_NEW(a, Module);
  n->arena = a;
  for (int i = 0; i < m->ndefs; i++) module_add(n, m->defs[i]);
  return n;
}

void module_free(Module *m) {
  if (!m) return;
  strmap_free(&m->globals);
  strmap_free(&m->types);
  strmap_free(&m->ctors);
}

bool prim_attr_flag(const PrimFunc *f, const char *name, bool dflt) {
  const AttrValue *a = f->attrs ? attrs_get(f->attrs, name) : NULL;
  if (!a) return dflt;
  if (a->kind == AV_INT) return a->u.i != 0;
  if (a->kind == AV_BOOL) return a->u.b;
  return dflt;
}
