/* linearity.c — key linearity (seed 000: "we must only use a PRNG key once
 * (treat it as a linear resource)"): ty_check_key_linearity, run by the
 * type checker (warnings) and by the pass CheckKeyLinearity (passes/verify.c).
 *
 * Values carry a key shape: no key, one key (an id), or a tuple of shapes,
 * so keys are followed through lets, tuples and projections.  A key is
 * CONSUMED when it is passed to an op that draws from it (every op taking a
 * RandState except random.fold_in and random.key_data, which derive or
 * inspect), to a def whose body consumes that parameter (a summary per def,
 * computed to a fixed point so recursion works), to a closure or
 * constructor (conservatively), stored in a reference, or written to a
 * state global.  Reading a state global yields the key of its current
 * version; a write or any call makes a new version.  Consuming a key twice
 * is reported at the second use with a note at the first.  Branches: the
 * arms are checked from the same state and a key used in any arm counts as
 * used after the branch (once).  A closure's body counts where the closure
 * is created.  Needs Expr.ty (a type-checked module).  Iterative on let
 * chains. */
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "types/typecheck_int.h"

enum { LIN_MAX_GLOBALS = 64 };

typedef enum ShapeKind { SH_NONE, SH_KEY, SH_TUPLE } ShapeKind;

typedef struct Shape Shape;
struct Shape {
  ShapeKind kind;
  int key;
  int n;
  Shape **fields;
};

typedef struct Key {
  bool used;
  bool state; /* the value of a state global */
  Span first;
  const char *name;
} Key;

typedef struct Use {
  int key;
  Span sp;
} Use;

typedef struct Lin {
  Module *m;
  DiagCtx *d;
  bool as_error, report;
  Arena *ar; /* per-def scratch */
  Key *keys;
  size_t nkeys, capkeys;
  Use *log; /* keys marked used, in order (for branches) */
  size_t nlog, caplog;
  PtrMap shape;                 /* Var* → Shape* */
  PtrMap alias;                 /* Var* → state global index + 1 */
  int version[LIN_MAX_GLOBALS]; /* key of a state global's current value, -1: none yet */
  int nglobals;
  const StateGlobal *globals[LIN_MAX_GLOBALS];
  StrMap consumes; /* def name → bool[nparams] (malloc) */
  bool changed;
  size_t problems;
} Lin;

static Shape none_shape = {SH_NONE, -1, 0, NULL};

static Shape *lin_expr(Lin *L, Expr *e);

/* ───────────────────────────── keys and shapes ───────────────────────────── */

static int new_key(Lin *L) {
  if (L->nkeys == L->capkeys) {
    L->capkeys = L->capkeys ? L->capkeys * 2 : 64;
    L->keys = realloc(L->keys, L->capkeys * sizeof *L->keys);
    if (!L->keys) rly_oom();
  }
  L->keys[L->nkeys] = (Key){0};
  return (int)L->nkeys++;
}

static Shape *key_shape(Lin *L, int k) {
  Shape *s = ARENA_NEW(L->ar, Shape);
  s->kind = SH_KEY, s->key = k;
  return s;
}

/* Fresh keys for every RandState in t. */
static Shape *by_type(Lin *L, const Type *t) {
  if (!t) return &none_shape;
  if (t->kind == TY_RANDSTATE) return key_shape(L, new_key(L));
  if (t->kind != TY_TUPLE) return &none_shape;
  Shape *s = ARENA_NEW(L->ar, Shape);
  s->kind = SH_TUPLE, s->n = t->u.tuple.n;
  s->fields = ARENA_ARRAY(L->ar, Shape *, s->n ? s->n : 1);
  bool any = false;
  for (int i = 0; i < s->n; i++) {
    s->fields[i] = by_type(L, t->u.tuple.fields[i]);
    any |= s->fields[i]->kind != SH_NONE;
  }
  return any ? s : &none_shape;
}

/* Names unnamed keys after the variable (and path) that binds them. */
static void name_keys(Lin *L, Shape *s, const char *name) {
  if (s->kind == SH_KEY && !L->keys[s->key].name) L->keys[s->key].name = name;
  if (s->kind == SH_TUPLE)
    for (int i = 0; i < s->n; i++)
      name_keys(L, s->fields[i], arena_printf(L->ar, "%s.%d", name, i));
}

/* Consumes key k.  First uses are logged so a branch can undo them and
 * merge the arms; a second use is a problem, reported (with a hint and a
 * note at the first use) only in the final, reporting round. */
static void use_key(Lin *L, int k, Span sp) {
  Key *key = &L->keys[k];
  if (!key->used) {
    key->used = true, key->first = sp;
    if (L->nlog == L->caplog) {
      L->caplog = L->caplog ? L->caplog * 2 : 64;
      L->log = realloc(L->log, L->caplog * sizeof *L->log);
      if (!L->log) rly_oom();
    }
    L->log[L->nlog++] = (Use){k, sp};
    return;
  }
  L->problems++;
  if (!L->report) return;
  const char *what = key->name ? key->name : "this RandState key";
  if (L->as_error)
    diag_error(L->d, sp, "%s is used twice: a RandState key may be used once", what);
  else
    diag_warning(L->d, sp, "%s is used twice: a RandState key may be used once", what);
  if (key->state)
    diag_hint(L->d, "write the new state back (%%r := s) before reading it again");
  else
    diag_hint(L->d, "split it first: random.split(k) gives two independent keys");
  diag_note(L->d, key->first, "first used here");
}

static void consume(Lin *L, const Shape *s, Span sp) {
  if (s->kind == SH_KEY) use_key(L, s->key, sp);
  if (s->kind == SH_TUPLE)
    for (int i = 0; i < s->n; i++) consume(L, s->fields[i], sp);
}

static bool any_used(Lin *L, const Shape *s) {
  if (s->kind == SH_KEY) return L->keys[s->key].used;
  for (int i = 0; s->kind == SH_TUPLE && i < s->n; i++)
    if (any_used(L, s->fields[i])) return true;
  return false;
}

/* ───────────────────────────── state globals ───────────────────────────── */

static int global_index(Lin *L, const char *name) {
  for (int i = 0; i < L->nglobals; i++)
    if (strcmp(L->globals[i]->name, name) == 0) return i;
  return -1;
}

static Shape *global_read(Lin *L, int g) {
  if (g < 0) return &none_shape;
  const Type *t = L->globals[g]->type;
  if (!t || t->kind != TY_RANDSTATE) return &none_shape;
  if (L->version[g] < 0) {
    L->version[g] = new_key(L);
    L->keys[L->version[g]].name = arena_printf(L->ar, "the value of @%s", L->globals[g]->name);
    L->keys[L->version[g]].state = true;
  }
  return key_shape(L, L->version[g]);
}

static void new_versions(Lin *L) {
  for (int i = 0; i < L->nglobals; i++) L->version[i] = -1;
}

/* The state global a reference expression denotes, or -1. */
static int ref_global(Lin *L, const Expr *r) {
  if (r->kind == EX_VAR) return (int)(intptr_t)ptrmap_get(&L->alias, r->u.var) - 1;
  if (r->kind == EX_REF_NEW && r->u.ref_new.init->kind == EX_GLOBAL)
    return global_index(L, r->u.ref_new.init->u.global.name);
  return -1;
}

/* ───────────────────────────── branches ───────────────────────────── */

typedef struct Branches {
  size_t mark;
  Use *uses;
  size_t nuses, capuses;
  int version[LIN_MAX_GLOBALS];
  int merged[LIN_MAX_GLOBALS];
  int narms;
} Branches;

static void arms_begin(Lin *L, Branches *b) {
  memset(b, 0, sizeof *b);
  b->mark = L->nlog;
  memcpy(b->version, L->version, sizeof b->version);
}

/* After one arm: remember its uses and versions, then undo them. */
static void arm_end(Lin *L, Branches *b) {
  for (size_t i = b->mark; i < L->nlog; i++) {
    if (b->nuses == b->capuses) {
      b->capuses = b->capuses ? b->capuses * 2 : 16;
      b->uses = realloc(b->uses, b->capuses * sizeof *b->uses);
      if (!b->uses) rly_oom();
    }
    b->uses[b->nuses++] = L->log[i];
    L->keys[L->log[i].key].used = false;
  }
  L->nlog = b->mark;
  for (int g = 0; g < L->nglobals; g++)
    b->merged[g] = b->narms == 0 || b->merged[g] == L->version[g] ? L->version[g] : -1;
  b->narms++;
  memcpy(L->version, b->version, sizeof b->version);
}

/* A key used in any arm is used once after the branch. */
static void arms_end(Lin *L, Branches *b) {
  for (size_t i = 0; i < b->nuses; i++)
    if (!L->keys[b->uses[i].key].used) use_key(L, b->uses[i].key, b->uses[i].sp);
  memcpy(L->version, b->merged, sizeof L->version);
  free(b->uses);
}

/* ───────────────────────────── expressions ───────────────────────────── */

/* A variable without keys is not stored: var_shape finds none again from
 * its type (most variables of a program hold tensors, and a million-binding
 * chain should not cost a million map entries and names). */
static void bind(Lin *L, Var *v, Shape *s) {
  if (s->kind == SH_NONE && v->annot) s = by_type(L, v->annot);
  if (s->kind == SH_NONE && !ptrmap_get(&L->shape, v)) return;
  if (var_named(v) && s->kind != SH_NONE) name_keys(L, s, arena_printf(L->ar, "%%%s", v->name));
  ptrmap_put(&L->shape, v, s);
}

static Shape *var_shape(Lin *L, Expr *e) {
  Shape *s = ptrmap_get(&L->shape, e->u.var);
  if (!s) {
    s = by_type(L, e->ty ? e->ty : e->u.var->annot);
    bind(L, e->u.var, s);
  }
  return s;
}

static bool op_consumes(const Expr *fn) { return !ops_has_flag(fn->u.op.index, OP_KEEPS_KEY); }

static const bool *summary(Lin *L, const char *def) { return strmap_get(&L->consumes, def); }

static Shape *lin_call(Lin *L, Expr *e) {
  Expr *fn = e->u.call.fn;
  const FuncDef *fd = fn->kind == EX_GLOBAL ? module_func(L->m, fn->u.global.name) : NULL;
  if (fn->kind != EX_OP && fn->kind != EX_CTOR && fn->kind != EX_GLOBAL) lin_expr(L, fn);
  const bool *sum = fd ? summary(L, fd->name) : NULL;
  for (int i = 0; i < e->u.call.nargs; i++) {
    Expr *a = e->u.call.args[i];
    Shape *s = lin_expr(L, a);
    bool eats = fn->kind == EX_OP ? op_consumes(fn)
                : fd              ? (sum && i < fd->fn->nparams && sum[i])
                                  : true;
    if (eats) consume(L, s, a->span);
  }
  if (fn->kind != EX_OP && fn->kind != EX_CTOR) new_versions(L);
  return by_type(L, e->ty);
}

static Shape *lin_tuple(Lin *L, Expr *e) {
  Shape *s = ARENA_NEW(L->ar, Shape);
  s->kind = SH_TUPLE, s->n = e->u.tuple.n;
  s->fields = ARENA_ARRAY(L->ar, Shape *, s->n ? s->n : 1);
  for (int i = 0; i < s->n; i++) s->fields[i] = lin_expr(L, e->u.tuple.fields[i]);
  return s;
}

static Shape *lin_proj(Lin *L, Expr *e) {
  Shape *t = lin_expr(L, e->u.proj.tuple);
  if (t->kind == SH_TUPLE && e->u.proj.index < t->n) return t->fields[e->u.proj.index];
  return by_type(L, e->ty);
}

static Shape *lin_chain(Lin *L, Expr *e) {
  while (e->kind == EX_LET || e->kind == EX_FREE_VAR) {
    if (e->kind == EX_FREE_VAR) {
      bind(L, e->u.free_var.var, by_type(L, e->u.free_var.var->annot));
      e = e->u.free_var.body;
      continue;
    }
    Expr *value = e->u.let.value;
    int g = ref_global(L, value);
    if (g >= 0)
      ptrmap_put(&L->alias, e->u.let.var, (void *)(intptr_t)(g + 1));
    else
      bind(L, e->u.let.var, lin_expr(L, value));
    e = e->u.let.body;
  }
  return lin_expr(L, e);
}

static Shape *lin_if(Lin *L, Expr *e) {
  lin_expr(L, e->u.if_.cond);
  Branches b;
  arms_begin(L, &b);
  Shape *t = lin_expr(L, e->u.if_.then_);
  arm_end(L, &b);
  Shape *f = lin_expr(L, e->u.if_.else_);
  arm_end(L, &b);
  arms_end(L, &b);
  return t == f ? t : by_type(L, e->ty);
}

static void bind_pattern(Lin *L, const Pattern *p, Shape *s) {
  if (p->kind == PAT_VAR) bind(L, p->u.var, s->kind == SH_NONE ? by_type(L, p->u.var->annot) : s);
  if (p->kind == PAT_TUPLE)
    for (int i = 0; i < p->u.tuple.n; i++)
      bind_pattern(L, p->u.tuple.sub[i],
                   s->kind == SH_TUPLE && i < s->n ? s->fields[i] : &none_shape);
  if (p->kind == PAT_CTOR)
    for (int i = 0; i < p->u.ctor.n; i++) bind_pattern(L, p->u.ctor.sub[i], &none_shape);
}

static Shape *lin_match(Lin *L, Expr *e) {
  Shape *s = lin_expr(L, e->u.match.scrut);
  Branches b;
  arms_begin(L, &b);
  for (int i = 0; i < e->u.match.n; i++) {
    bind_pattern(L, e->u.match.clauses[i].pat, s);
    lin_expr(L, e->u.match.clauses[i].body);
    arm_end(L, &b);
  }
  arms_end(L, &b);
  return by_type(L, e->ty);
}

/* A closure's body runs later, with unknown state-global versions. */
static Shape *lin_fn(Lin *L, Expr *e) {
  int saved[LIN_MAX_GLOBALS];
  memcpy(saved, L->version, sizeof saved);
  new_versions(L);
  Function *f = e->u.fn;
  for (int i = 0; i < f->nparams; i++) bind(L, f->params[i], by_type(L, f->params[i]->annot));
  lin_expr(L, f->body);
  memcpy(L->version, saved, sizeof saved);
  return &none_shape;
}

static Shape *lin_ref(Lin *L, Expr *e) {
  if (e->kind == EX_REF_NEW) {
    if (ref_global(L, e) < 0) consume(L, lin_expr(L, e->u.ref_new.init), e->u.ref_new.init->span);
    return &none_shape;
  }
  Expr *r = e->kind == EX_REF_READ ? e->u.ref_read.ref : e->u.ref_write.ref;
  int g = ref_global(L, r);
  if (g < 0) lin_expr(L, r);
  if (e->kind == EX_REF_READ) return g >= 0 ? global_read(L, g) : by_type(L, e->ty);
  Expr *v = e->u.ref_write.value;
  consume(L, lin_expr(L, v), v->span);
  if (g >= 0) L->version[g] = -1;
  return &none_shape;
}

/* The key shape of e's value, consuming keys on the way; the dispatch over
 * expression kinds (let chains are walked by lin_chain's loop). */
static Shape *lin_expr(Lin *L, Expr *e) {
  switch (e->kind) {
    case EX_CONST:
    case EX_OP:
    case EX_CTOR:
      return &none_shape;
    case EX_VAR:
      return var_shape(L, e);
    case EX_GLOBAL:
      return global_read(L, global_index(L, e->u.global.name));
    case EX_CALL:
      return lin_call(L, e);
    case EX_TUPLE:
      return lin_tuple(L, e);
    case EX_PROJ:
      return lin_proj(L, e);
    case EX_LET:
    case EX_FREE_VAR:
      return lin_chain(L, e);
    case EX_FN:
      return lin_fn(L, e);
    case EX_IF:
      return lin_if(L, e);
    case EX_MATCH:
      return lin_match(L, e);
    case EX_REF_NEW:
    case EX_REF_READ:
    case EX_REF_WRITE:
      return lin_ref(L, e);
    case EX_DATAFLOW:
      return lin_expr(L, e->u.dataflow.body);
  }
  RLY_UNREACHABLE();
}

/* ───────────────────────────── defs ───────────────────────────── */

static void reset_def(Lin *L) {
  L->nkeys = L->nlog = 0;
  ptrmap_free(&L->shape);
  ptrmap_free(&L->alias);
  new_versions(L);
}

/* Checks f; updates its summary (which parameters it consumes). */
static void lin_def(Lin *L, const FuncDef *f) {
  Arena ar;
  arena_init(&ar);
  L->ar = &ar;
  reset_def(L);
  const Function *fn = f->fn;
  Shape **ps = ARENA_ARRAY(&ar, Shape *, fn->nparams ? fn->nparams : 1);
  const Type *ft = f->ty && f->ty->kind == TY_FUNC ? f->ty : NULL;
  for (int i = 0; i < fn->nparams; i++) {
    Var *v = fn->params[i];
    ps[i] = by_type(L, v->annot                       ? v->annot
                       : ft && i < ft->u.func.nparams ? ft->u.func.params[i]
                                                      : NULL);
    bind(L, v, ps[i]);
  }
  lin_expr(L, fn->body);
  bool *sum = strmap_get(&L->consumes, f->name);
  for (int i = 0; i < fn->nparams; i++)
    if (!sum[i] && any_used(L, ps[i])) sum[i] = true, L->changed = true;
  arena_free(&ar);
  L->ar = NULL;
}

static void collect(Lin *L) {
  for (int i = 0; i < L->m->ndefs; i++) {
    const Def *d = &L->m->defs[i];
    if (d->kind == DEF_GLOBAL && L->nglobals < LIN_MAX_GLOBALS)
      L->globals[L->nglobals++] = d->u.global;
    if (d->kind == DEF_FUNC) {
      bool *sum = calloc((size_t)d->u.func->fn->nparams + 1, sizeof *sum);
      if (!sum) rly_oom();
      strmap_put(&L->consumes, d->u.func->name, sum);
    }
  }
}

static void each_def(Lin *L) {
  for (int i = 0; i < L->m->ndefs; i++)
    if (L->m->defs[i].kind == DEF_FUNC) lin_def(L, L->m->defs[i].u.func);
}

/* Runs the def summaries to a fixed point without reporting, then one
 * final round that reports; reporting earlier would repeat messages or
 * blame uses that a later summary changes. */
bool ty_check_key_linearity(Module *m, DiagCtx *d, bool as_error) {
  Lin L = {.m = m, .d = d, .as_error = as_error};
  collect(&L);
  do { /* summaries to a fixed point, quietly */
    L.changed = false;
    each_def(&L);
  } while (L.changed);
  L.report = true;
  L.problems = 0;
  each_def(&L);
  for (size_t i = 0; i < L.consumes.cap; i++)
    if (L.consumes.keys && L.consumes.keys[i]) free(L.consumes.vals[i]);
  strmap_free(&L.consumes);
  ptrmap_free(&L.shape);
  ptrmap_free(&L.alias);
  free(L.keys);
  free(L.log);
  return L.problems == 0;
}
