/* typecheck_int.h — private to passes/typecheck*.c: the checker's state and
 * the functions its files share.
 *
 * Inference is Hindley–Milner style unification over the IR's own Type
 * nodes.  A metavariable is a TY_INCOMPLETE with id > 0 whose binding lives
 * in TyCtx.tm (union-find without ranks: resolve follows the chain); a
 * dimension metavariable is a DIM_META whose binding lives in TyCtx.dm.
 * Metavariable ids are local to one TyCtx.  The error type (TY_INCOMPLETE
 * id -1) unifies with anything, so one mistake gives one message.
 * Op relations whose arguments are not yet known, and projections out of a
 * tuple of unknown arity, are queued (TyPending) and retried to a fixed
 * point once every definition of the check has been visited.
 *
 * Invariants: every Type the checker creates lives in the module's arena
 * (Expr.ty and FuncDef.ty outlive the checker); no function recurses on the
 * length of a let chain (expr_walk and the let loop are iterative). */
#ifndef RLY_TYPECHECK_INT_H
#define RLY_TYPECHECK_INT_H

#include "ops/ops.h"
#include "types/types.h"

/* The largest type a let binding may have (typecheck_expr.c, limit_type):
 * levels of nesting, and parts counted as a tree (a type that doubles at
 * every binding is a small graph but an exponential tree). */
enum { TY_MAX_DEPTH = 256, TY_MAX_PARTS = 100000 };

/* Var.id → Type* (a two-level table; see typecheck_unify.c). */
typedef struct TyVarMap {
  Type ***pages;
  size_t npages;
} TyVarMap;

/* A queued op relation (e is the EX_CALL) or projection (e is the EX_PROJ)
 * whose result is the metavariable `result`. */
typedef struct TyPending {
  Expr *e;
  Type *result;
} TyPending;

/* A bound metavariable's zonked type, valid while no metavariable has been
 * bound since (gen: TyCtx.type_binds + dim_binds when it was made). */
typedef struct TyZonkMemo {
  Type *t;
  uint64_t gen;
} TyZonkMemo;

typedef struct TyCtx {
  Module *m;
  DiagCtx *d;
  Arena *a;  /* m->arena */
  Type **tm; /* type metavariable bindings, index = id; NULL = unbound */
  int64_t ntm, captm;
  Dim *dm; /* dim metavariable bindings; DIM_META with its own id = unbound */
  int64_t ndm, capdm;
  Type *err;         /* the error type */
  TyVarMap vars;     /* types of local variables */
  StrMap defs;       /* "@name" → uninstantiated type of a def or state global */
  PtrVec pending;    /* TyPending* */
  PtrVec tparams;    /* type parameter names in scope */
  PtrVec sizevars;   /* size variable names bound by enclosing signatures */
  bool effects_done; /* `effectful` below is computed (lazily, for dataflow) */
  StrMap effectful;  /* def name → non-NULL when the def has effects */
  bool warn_nonexhaustive;
  Type *scalar[DT_COUNT]; /* shared rank-0 tensor types */
  uint64_t dim_binds;     /* dim metavariables bound so far (see reuse_arg_type) */
  uint64_t type_binds;    /* type metavariables bound so far */
  TyZonkMemo *zmemo;      /* [2 * id + final], ty_zonk's (typecheck_unify.c) */
  int64_t capzmemo;
} TyCtx;

/* typecheck_unify.c: metavariables, unification, substitution. */
void ty_ctx_init(TyCtx *c, Module *m, DiagCtx *d);
void ty_ctx_free(TyCtx *c);
Type *ty_varmap_get(const TyVarMap *vm, uint64_t id);
void ty_varmap_put(TyVarMap *vm, uint64_t id, Type *t);
Type *ty_fresh(TyCtx *c, Span sp);
Dim ty_fresh_dim(TyCtx *c);
Type *ty_resolve(TyCtx *c, Type *t);
Dim ty_resolve_dim(TyCtx *c, Dim d);
bool ty_is_meta(TyCtx *c, Type *t); /* an unbound metavariable (after resolve) */
bool ty_is_error(TyCtx *c, Type *t);
bool ty_unify(TyCtx *c, Type *a, Type *b);
bool ty_unify_dim(TyCtx *c, Dim a, Dim b);
void ty_bind_error(TyCtx *c, Type *meta); /* a still-unbound metavariable becomes the error type */
/* Substitutes bound metavariables.  final: unbound dim metavariables become
 * `?` (for Expr.ty, FuncDef.ty and messages); otherwise they stay. */
Type *ty_zonk(TyCtx *c, Type *t, bool final);
/* The type as text for a message (arena). */
const char *ty_show(TyCtx *c, Type *t);
/* Replaces the type parameters `tp` by fresh metavariables, and, when
 * sizes is set, every size variable by a fresh dim metavariable (one per
 * name).  Returns t itself when nothing changes. */
Type *ty_instantiate(TyCtx *c, Type *t, int ntp, const char **tp, bool sizes);
/* Replaces only the size variables named in `names`. */
Type *ty_instantiate_sizes(TyCtx *c, Type *t, const PtrVec *names);
/* A written annotation (or a stored type) as a checker type: `_` and stale
 * metavariables become fresh ones; ADT names are checked (errors). */
Type *ty_import(TyCtx *c, Type *annot);
/* If branches / match clauses: where one side has `?`, the join has `?`. */
Type *ty_join(TyCtx *c, Type *a, Type *b);
/* Appends the names of the size variables of t to out (no duplicates). */
void ty_collect_sizevars(Type *t, PtrVec *out);
bool ty_name_in(const PtrVec *names, const char *name);

/* typecheck_expr.c */
Type *ty_check(TyCtx *c, Expr *e);
Type *ty_check_fn_body(TyCtx *c, Function *f, Type **params, Type *ret, const char *name);
/* A def's type from its annotations, metavariables for what is missing. */
Type *ty_def_signature(TyCtx *c, FuncDef *f);
/* A constructor's type, fn (fields) -> Adt[...], instantiated afresh. */
Type *ty_ctor_type(TyCtx *c, AdtDef *adt, int index, Span sp);
/* The uninstantiated type of @name (def, state global or prim), or NULL. */
Type *ty_global_sig(TyCtx *c, const char *name);
/* Retries queued relations and projections until nothing changes. */
void ty_solve(TyCtx *c);

/* typecheck_match.c */
Type *ty_check_match(TyCtx *c, Expr *e);

/* typecheck_effects.c */
void ty_check_dataflow(TyCtx *c, Expr *e);
/* Replaces every Expr.ty under root by its final (zonked) type. */
void ty_finalize_expr(TyCtx *c, Expr *root);

#endif
