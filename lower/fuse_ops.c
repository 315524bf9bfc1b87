/* fuse_ops.c — FuseOps: groups pure op calls into Primitive functions, by
 * TVM's rules (lower/lower.h).
 *
 * Per block (a let chain and its result; def and fn bodies, if branches,
 * match clause bodies, dataflow bodies, nested let chains):
 *  1. The dataflow graph: every pure, non-opaque op call in graph position
 *     (a binding's value, the result, an op call's operand, recursively) is
 *     a node, in evaluation (post) order, so producers come before
 *     consumers.  An operand that is another node, or a variable let-bound
 *     to one in this block, is an edge carrying the consumer's pattern (a
 *     broadcast whose operand already has the result's shape is an
 *     elementwise edge).  A node used anywhere else (the block's result, a
 *     tuple, a call of a function, a nested block, control flow) is
 *     "external": it has no post-dominator, so nothing downstream absorbs it.
 *  2. The post-dominator tree (one reverse pass, the least common ancestor
 *     of the consumers), with the worst pattern on the way to the parent.
 *  3. Union-find groups, three phases as TVM's GraphPartitioner (phase 2,
 *     for tuples, has nothing to do here: tuples are boundaries), with the
 *     maximum number of ops per group; then row fusion (row_phase), which
 *     TVM does not have: a reduction over the last axes joins the
 *     elementwise work over the same rows that follows it (a layer norm
 *     becomes one group instead of TVM's four).
 *  4. Rewrite: each group becomes `%f = fn (%p0, ..., Primitive=1) {...};`
 *     followed by its call where the group's output was; bindings of the
 *     group's other members disappear (all their uses are inside).
 *     Parameters are the distinct values from outside (variables by
 *     identity), ordered as they were evaluated; scalar constants stay in
 *     the body, and so do the constant arguments of an op whose compute
 *     rule reads their values (OP_VALUE_ARGS: dyn.strided_slice's begin).
 *
 * An op with a tuple result (split, meshgrid) of at most FUSE_MAX_FIELDS
 * fields (more stay one call, as it is) is one node per field: the
 * field `%t.i` is an injective function of the op's operands, so each
 * field fuses with its own consumers, and a group holding a field computes
 * the op in its body and projects it (`%0 = split(%p0); %0.1`).  The op's
 * binding goes away; a whole use of the tuple becomes the tuple of its
 * fields' values, unless a nested block uses it (then the binding stays,
 * run on its own, and the fields are still fused where projected).
 *
 * Invariants: the input is never modified; nodes built here carry types
 * (copied from the type-checked input).  No recursion on the length of a
 * let chain: blocks are flattened into arrays, and the graph algorithms use
 * explicit stacks.  Recursion follows expression nesting only. */
#include <stdlib.h>
#include <string.h>

#include "lower/compute/compute.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "passes/pass_int.h"

/* What row fusion (step 3's last phase) knows of a group: rk, the rank of
 * the rows its reductions keep (ROW_NONE: no reduction yet; ROW_NO: some
 * member is neither elementwise, broadcast nor such a reduction); rkey,
 * the first reduction's input type (the rows are its first rk dims); lead
 * and nlead, the dims every member's result starts with. */
enum { ROW_NONE = -1, ROW_NO = -2 };
typedef struct Row {
  int rk, nlead;
  const Type *rkey, *lead;
} Row;

typedef struct Edge {
  int to;
  OpPattern pat;
} Edge;

typedef struct Node {
  Expr *e; /* the op call */
  OpPattern pat;
  bool ext;
  Edge *outs;
  int nouts, capouts;
  int pd_parent, pd_depth; /* post-dominator tree */
  OpPattern pd_pat;
  int gparent, gnodes; /* union-find group (valid at the root) */
  OpPattern gpat;
  bool ganchor;
  int gnext;   /* next member of the group (ascending), -1 at the end */
  Var *result; /* the variable holding the group's value once emitted */
  Row row;     /* the group's row shape (valid at the root) */
} Node;

typedef struct Graph {
  Node *nodes;
  int n, cap;
  PtrMap expr_node; /* Expr* → index + 1 */
  PtrMap var_node;  /* Var* → index + 1 */
  PtrMap ext_seq;   /* external operand Expr* → scan order + 1 */
  PtrMap fields;    /* tuple op call Expr* → its first field node + 1 */
  PtrMap tuple_var; /* Var* let-bound to such a call → the call */
  PtrMap pinned;    /* such a Var* used in a nested block: its binding stays */
  int seq;
  int *stamp, stampv; /* visited marks for the path walks */
  Row racc;           /* walk_paths mode 3: the row shape of the groups on the paths */
} Graph;

typedef struct Fuse {
  Arena *a;
  const Module *m;
  FuseOptions o;
  PassCtx *pc;
  long changes;
} Fuse;

/* TVM's default (relay.FuseOps.max_depth), or the engine's setting.  Per
 * thread: the engine sets it on entry (engine_enter), as the session that
 * thread runs; the jit's fusion passes its own depth explicitly. */
static _Thread_local int default_max_depth = 256;

void fuse_set_default_max_depth(int n) { default_max_depth = n > 0 ? n : 256; }

FuseOptions fuse_options_default(void) { return (FuseOptions){default_max_depth, false}; }

FuseOptions fuse_options_jit(void) { return (FuseOptions){default_max_depth, true}; }

static OpPattern pmax(OpPattern a, OpPattern b) { return a > b ? a : b; }

/* ───────────────────────────── candidates ───────────────────────────── */

static const OpDef *call_op(const Expr *e) {
  if (e->kind != EX_CALL || e->u.call.fn->kind != EX_OP) return NULL;
  return ops_get(e->u.call.fn->u.op.index);
}

/* Past this many tensors in its tuple argument an op (concatenate, stack)
 * stays one call on its kernel: a kernel reading hundreds of inputs is one
 * long block of copies that LLVM takes seconds to minutes to schedule. */
enum { FUSE_MAX_INPUTS = 32 };

static bool few_inputs(const OpDef *op, const Expr *e) {
  if (!(op->flags & OP_TUPLE_ARG) || e->u.call.nargs < 1) return true;
  const Type *t = e->u.call.args[0]->ty;
  return !t || t->kind != TY_TUPLE || t->u.tuple.n <= FUSE_MAX_INPUTS;
}

/* A pure, fusible op call with a tensor result and typed operands. */
static bool candidate(const Fuse *F, const Expr *e) {
  const OpDef *op = call_op(e);
  if (!op || op->effectful || op->pattern >= OPAT_TUPLE) return false;
  if (!e->ty || e->ty->kind != TY_TENSOR || !few_inputs(op, e)) return false;
  bool scalar = e->ty->u.tensor.ndim == 0;
  for (int i = 0; i < e->u.call.nargs; i++) {
    const Type *t = e->u.call.args[i]->ty;
    if (!t) return false;
    scalar &= t->kind == TY_TENSOR && t->u.tensor.ndim == 0;
  }
  /* For lowering: scalar arithmetic stays with the interpreter (its scalar
   * fast path beats a kernel call), and ops need a compute rule. */
  if (F->o.need_compute && scalar) return false;
  return !F->o.need_compute || compute_rule(e->u.call.fn->u.op.index) != NULL;
}

/* Past this many fields a tuple op stays one call: one kernel per field
 * would multiply the kernels to compile (an RNN's input projection split
 * into its time steps has hundreds). */
enum { FUSE_MAX_FIELDS = 8 };

/* A pure, fusible op call whose result is a tuple of at most
 * FUSE_MAX_FIELDS tensors (split, meshgrid): it becomes one node per field. */
static bool candidate_tuple(const Fuse *F, const Expr *e) {
  const OpDef *op = call_op(e);
  if (!op || op->effectful || op->pattern >= OPAT_TUPLE) return false;
  if (!e->ty || e->ty->kind != TY_TUPLE || e->ty->u.tuple.n == 0) return false;
  if (e->ty->u.tuple.n > FUSE_MAX_FIELDS) return false;
  for (int i = 0; i < e->ty->u.tuple.n; i++)
    if (e->ty->u.tuple.fields[i]->kind != TY_TENSOR) return false;
  for (int i = 0; i < e->u.call.nargs; i++)
    if (!e->u.call.args[i]->ty) return false;
  return !F->o.need_compute || compute_rule(e->u.call.fn->u.op.index) != NULL;
}

static bool scalar_const(const Expr *e) {
  return e->kind == EX_CONST && e->u.konst.value->ndim == 0;
}

static bool is_primitive(const Function *f) {
  const AttrValue *v = attrs_get(f->attrs, "Primitive");
  return v && v->kind == AV_INT && v->u.i != 0;
}

/* ─────────────────────────────── graph ─────────────────────────────── */

/* The tuple op call a projection's tuple names (the call itself or a
 * variable bound to it), or NULL. */
static const Expr *field_call(const Graph *G, const Expr *t) {
  if (t->kind == EX_VAR) return ptrmap_get(&G->tuple_var, t->u.var);
  return ptrmap_has(&G->fields, t) ? t : NULL;
}

static int node_of_expr(const Graph *G, const Expr *e) {
  int n = (int)(intptr_t)ptrmap_get(&G->expr_node, e) - 1;
  if (n >= 0 || e->kind != EX_PROJ) return n;
  const Expr *c = field_call(G, e->u.proj.tuple);
  if (!c || e->u.proj.index < 0 || e->u.proj.index >= c->ty->u.tuple.n) return -1;
  return (int)(intptr_t)ptrmap_get(&G->fields, c) - 1 + e->u.proj.index;
}

static int node_of_var(const Graph *G, const Var *v) {
  return (int)(intptr_t)ptrmap_get(&G->var_node, v) - 1;
}

/* ───────────────────────────── row shapes ───────────────────────────── */

static bool same_dim(const Dim *a, const Dim *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == DIM_CONST) return a->value == b->value;
  return a->kind == DIM_VAR && strcmp(a->name, b->name) == 0;
}

static bool has_attr(const Expr *call, const char *key) {
  const OpDef *op = call_op(call);
  for (const OpAttrSpec *s = op ? op->attrs : NULL; s && s->name; s++)
    if (strcmp(s->name, key) == 0) return true;
  return false;
}

/* The rank of the rows a reduction keeps: its reduced axes are the last
 * ones of its input and it keeps at least one; else -1. */
static int reduce_row_rank(const Expr *call) {
  const Type *x = call->u.call.nargs ? call->u.call.args[0]->ty : NULL;
  if (!x || x->kind != TY_TENSOR || !has_attr(call, "axis") || op_attr_is_none(call, "axis"))
    return -1;
  int n = x->u.tensor.ndim;
  int64_t ax[TENSOR_MAX_RANK];
  int na = op_attr_ints(call, "axis", ax, TENSOR_MAX_RANK);
  bool red[TENSOR_MAX_RANK] = {0};
  for (int i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + n : ax[i];
    if (a < 0 || a >= n) return -1;
    red[a] = true;
  }
  if (has_attr(call, "exclude") && op_attr_bool(call, "exclude"))
    for (int i = 0; i < n; i++) red[i] = !red[i];
  int k = n;
  while (k > 0 && red[k - 1]) k--;
  for (int i = 0; i < k; i++)
    if (red[i]) return -1;
  return k >= 1 && k < n ? k : -1;
}

static Row row_of(const Expr *e, OpPattern pat) {
  Row r = {ROW_NO, 0, NULL, NULL};
  if (!e->ty || e->ty->kind != TY_TENSOR) return r;
  r.lead = e->ty, r.nlead = e->ty->u.tensor.ndim;
  const OpDef *op = call_op(e);
  const char *fam = op ? ops_family(e->u.call.fn->u.op.index) : NULL;
  if (pat <= OPAT_BROADCAST) {
    r.rk = ROW_NONE;
  } else if (pat == OPAT_COMM_REDUCE && fam && strcmp(fam, "reduce") == 0) {
    r.rk = reduce_row_rank(e);
    r.rkey = e->u.call.args[0]->ty;
    if (r.rk < 0) r.rk = ROW_NO;
  }
  return r;
}

static int common_lead(const Row *a, const Row *b) {
  int n = a->nlead < b->nlead ? a->nlead : b->nlead, k = 0;
  while (k < n && same_dim(&a->lead->u.tensor.dims[k], &b->lead->u.tensor.dims[k])) k++;
  return k;
}

/* The row shape of two groups together. */
static Row row_join(Row a, Row b) {
  if (a.rk == ROW_NO || b.rk == ROW_NO) return (Row){ROW_NO, 0, NULL, NULL};
  Row r = a;
  r.nlead = common_lead(&a, &b);
  if (a.rk == ROW_NONE) r.rk = b.rk, r.rkey = b.rkey;
  if (a.rk >= 0 && b.rk >= 0) {
    Row ka = {a.rk, a.rk, NULL, a.rkey}, kb = {b.rk, b.rk, NULL, b.rkey};
    if (a.rk != b.rk || common_lead(&ka, &kb) != a.rk) r.rk = ROW_NO;
  }
  return r;
}

/* A group with a reduction whose members all start with its rows. */
static bool row_fusable(Row r) {
  if (r.rk < 0 || r.nlead < r.rk) return false;
  Row k = {r.rk, r.rk, NULL, r.rkey};
  return common_lead(&r, &k) == r.rk;
}

static int node_new(Graph *G, Expr *e, OpPattern pat) {
  if (G->n == G->cap) {
    G->cap = G->cap ? G->cap * 2 : 16;
    G->nodes = realloc(G->nodes, sizeof(Node) * (size_t)G->cap);
    if (!G->nodes) rly_oom();
  }
  int id = G->n++;
  G->nodes[id] = (Node){.e = e,
                        .pat = pat,
                        .gparent = id,
                        .gnodes = 1,
                        .gpat = pat,
                        .ganchor = pat == OPAT_OUT_EWISE_FUSABLE,
                        .gnext = -1,
                        .row = row_of(e, pat)};
  ptrmap_put(&G->expr_node, e, (void *)(intptr_t)(id + 1));
  return id;
}

static void edge_add(Graph *G, int from, int to, OpPattern pat) {
  Node *n = &G->nodes[from];
  if (n->nouts == n->capouts) {
    n->capouts = n->capouts ? n->capouts * 2 : 2;
    n->outs = realloc(n->outs, sizeof(Edge) * (size_t)n->capouts);
    if (!n->outs) rly_oom();
  }
  n->outs[n->nouts++] = (Edge){to, pat};
}

static void graph_free(Graph *G) {
  for (int i = 0; i < G->n; i++) free(G->nodes[i].outs);
  free(G->nodes);
  free(G->stamp);
  ptrmap_free(&G->expr_node);
  ptrmap_free(&G->var_node);
  ptrmap_free(&G->ext_seq);
  ptrmap_free(&G->fields);
  ptrmap_free(&G->tuple_var);
  ptrmap_free(&G->pinned);
}

/* The pattern of the edge from operand `arg` into `call`. */
static OpPattern edge_pattern(const Expr *call, const Expr *arg, OpPattern pat) {
  if (pat == OPAT_BROADCAST && arg->ty && type_equal(arg->ty, call->ty)) return OPAT_ELEMWISE;
  return pat;
}

typedef struct Scan {
  Fuse *F;
  Graph *G;
} Scan;

static void scan_boundary(Scan *S, Expr *x);

static int scan_call(Scan *S, Expr *e);
static int scan_field(Scan *S, Expr *x);

static int scan_operand(Scan *S, Expr *x) {
  if (candidate(S->F, x)) return scan_call(S, x);
  int f = scan_field(S, x);
  if (f >= 0) return f;
  if (x->kind == EX_VAR) {
    int v = node_of_var(S->G, x->u.var);
    if (v >= 0) return v;
  }
  if (!scalar_const(x) && !ptrmap_has(&S->G->ext_seq, x))
    ptrmap_put(&S->G->ext_seq, x, (void *)(intptr_t)(++S->G->seq));
  scan_boundary(S, x);
  return -1;
}

static int scan_call(Scan *S, Expr *e) {
  int have = node_of_expr(S->G, e);
  if (have >= 0) return have;
  int n = e->u.call.nargs;
  int *prod = malloc(sizeof(int) * (size_t)(n + 1));
  if (!prod) rly_oom();
  for (int i = 0; i < n; i++) prod[i] = scan_operand(S, e->u.call.args[i]);
  OpPattern pat = call_op(e)->pattern;
  int id = node_new(S->G, e, pat);
  for (int i = 0; i < n; i++)
    if (prod[i] >= 0) edge_add(S->G, prod[i], id, edge_pattern(e, e->u.call.args[i], pat));
  free(prod);
  return id;
}

/* A tuple op call's field nodes (made once, consecutive): field i is
 * `call.i`, with an edge from each of the call's producers. */
static int scan_tuple(Scan *S, Expr *e) {
  int have = (int)(intptr_t)ptrmap_get(&S->G->fields, e) - 1;
  if (have >= 0) return have;
  int n = e->u.call.nargs, nf = e->ty->u.tuple.n;
  int *prod = malloc(sizeof(int) * (size_t)(n + 1));
  if (!prod) rly_oom();
  for (int i = 0; i < n; i++) prod[i] = scan_operand(S, e->u.call.args[i]);
  OpPattern pat = call_op(e)->pattern;
  int base = S->G->n;
  for (int f = 0; f < nf; f++) {
    Expr *p = expr_proj(S->F->a, e, f, e->span);
    p->ty = e->ty->u.tuple.fields[f];
    int id = node_new(S->G, p, pat);
    for (int i = 0; i < n; i++)
      if (prod[i] >= 0) edge_add(S->G, prod[i], id, pat);
  }
  free(prod);
  ptrmap_put(&S->G->fields, e, (void *)(intptr_t)(base + 1));
  return base;
}

/* Marks every field node of a tuple op call external. */
static void fields_ext(Graph *G, const Expr *call) {
  int base = (int)(intptr_t)ptrmap_get(&G->fields, call) - 1;
  for (int f = 0; base >= 0 && f < call->ty->u.tuple.n; f++) G->nodes[base + f].ext = true;
}

/* A projection in graph position: its field node (the tuple op scanned
 * first when it is the projection's own operand), or -1. */
static int scan_field(Scan *S, Expr *x) {
  if (x->kind != EX_PROJ) return -1;
  if (candidate_tuple(S->F, x->u.proj.tuple)) scan_tuple(S, x->u.proj.tuple);
  return node_of_expr(S->G, x);
}

static bool mark_var_use(void *ctx, Expr *e) {
  Graph *G = ctx;
  if (e->kind == EX_VAR && ptrmap_has(&G->tuple_var, e->u.var))
    ptrmap_put(&G->pinned, e->u.var, (void *)1);
  if (e->kind == EX_VAR) {
    int v = node_of_var(G, e->u.var);
    if (v >= 0) G->nodes[v].ext = true;
  }
  return true;
}

/* A nested block: fused on its own later; its uses of our nodes are external. */
static void scan_nested(Scan *S, Expr *x) { expr_walk(x, mark_var_use, S->G); }

/* x is not fused with anything: its operands' nodes are external. */
static void scan_boundary(Scan *S, Expr *x) {
  int f = scan_field(S, x);
  if (f >= 0) {
    S->G->nodes[f].ext = true;
    return;
  }
  const Expr *tc = x->kind == EX_VAR ? field_call(S->G, x) : NULL;
  switch (x->kind) {
    case EX_VAR: /* a whole tuple of fields: they are its value */
      if (tc)
        fields_ext(S->G, tc);
      else
        mark_var_use(S->G, x);
      return;
    case EX_CALL:
      if (candidate(S->F, x)) {
        int id = scan_call(S, x);
        S->G->nodes[id].ext = true;
        return;
      }
      if (candidate_tuple(S->F, x)) {
        scan_tuple(S, x);
        fields_ext(S->G, x);
        return;
      }
      break;
    case EX_LET:
    case EX_FREE_VAR:
      scan_nested(S, x);
      return;
    default:
      break;
  }
  for (int i = 0; i < expr_nchildren(x); i++) {
    Expr *c = expr_child(x, i);
    if (expr_child_role(x, i) == EXPR_BLOCK)
      scan_nested(S, c);
    else
      scan_boundary(S, c);
  }
}

/* ───────────────────────── post-dominator tree ───────────────────────── */

static int lca(Graph *G, int a, int b, OpPattern *p) {
  Node *N = G->nodes;
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    if (N[a].pd_depth < N[b].pd_depth) {
      *p = pmax(*p, N[b].pd_pat), b = N[b].pd_parent;
    } else if (N[b].pd_depth < N[a].pd_depth) {
      *p = pmax(*p, N[a].pd_pat), a = N[a].pd_parent;
    } else {
      *p = pmax(*p, pmax(N[a].pd_pat, N[b].pd_pat));
      a = N[a].pd_parent, b = N[b].pd_parent;
    }
  }
  return a;
}

/* Step 2: nodes are in evaluation order, so walking backwards every
 * consumer already has its parent; a node's parent is the LCA of its
 * consumers.  External nodes and nodes with no consumer are roots. */
static void post_dominators(Graph *G) {
  for (int i = G->n; i-- > 0;) {
    Node *n = &G->nodes[i];
    if (n->ext || n->nouts == 0) {
      n->pd_parent = -1, n->pd_depth = 1;
      n->pd_pat = n->ext ? OPAT_OPAQUE : OPAT_ELEMWISE;
      continue;
    }
    OpPattern p = pmax(OPAT_ELEMWISE, n->outs[0].pat);
    int par = n->outs[0].to;
    for (int k = 1; k < n->nouts; k++) {
      par = lca(G, par, n->outs[k].to, &p);
      p = pmax(p, n->outs[k].pat);
    }
    n->pd_parent = par;
    n->pd_depth = par >= 0 ? G->nodes[par].pd_depth + 1 : 1;
    n->pd_pat = p;
  }
}

/* ─────────────────────────────── groups ─────────────────────────────── */

static int find(Graph *G, int i) {
  int r = i;
  while (G->nodes[r].gparent != r) r = G->nodes[r].gparent;
  while (G->nodes[i].gparent != r) {
    int next = G->nodes[i].gparent;
    G->nodes[i].gparent = r;
    i = next;
  }
  return r;
}

static void merge(Graph *G, int child, int parent) {
  child = find(G, child), parent = find(G, parent);
  if (child == parent) return;
  Node *c = &G->nodes[child], *p = &G->nodes[parent];
  p->gnodes += c->gnodes;
  p->row = row_join(p->row, c->row);
  c->gparent = parent;
  if (c->ganchor) {
    RLY_ASSERT(!p->ganchor);
    p->ganchor = true;
    p->gpat = pmax(c->gpat, p->gpat);
  }
}

typedef enum PathCond { PC_LE_BROADCAST, PC_BROADCAST_SINK, PC_LE_INJECTIVE, PC_ROW } PathCond;

static bool cond_ok(PathCond c, OpPattern k, bool sink) {
  switch (c) {
    case PC_LE_BROADCAST:
      return k <= OPAT_BROADCAST;
    case PC_BROADCAST_SINK:
      return !sink ? k <= OPAT_INJECTIVE
                   : k <= OPAT_INJECTIVE || k == OPAT_COMM_REDUCE || k == OPAT_OUT_EWISE_FUSABLE;
    case PC_LE_INJECTIVE:
      return k <= OPAT_INJECTIVE;
    case PC_ROW:
      return k <= OPAT_BROADCAST || k == OPAT_COMM_REDUCE;
  }
  return false;
}

/* Explicit-stack walk of every path from src's consumers to sink.  mode 0:
 * check cond on each node's group; 1: merge each into sink's group; 2: sum
 * the group sizes of the nodes before sink; 3: join their groups' row
 * shapes into G->racc. */
static long walk_paths(Graph *G, int src, int sink, int mode, PathCond c) {
  if (!G->stamp) {
    G->stamp = calloc((size_t)G->n + 1, sizeof(int));
    if (!G->stamp) rly_oom();
  }
  int stampv = ++G->stampv;
  PtrVec st = {0};
  long acc = 0;
  if (mode == 0)
    for (int k = 0; k < G->nodes[src].nouts; k++)
      vec_push(&st, (void *)(intptr_t)G->nodes[src].outs[k].to);
  else
    vec_push(&st, (void *)(intptr_t)src);
  bool ok = true;
  while (st.len && ok) {
    int x = (int)(intptr_t)st.items[--st.len];
    if (G->stamp[x] == stampv) continue;
    G->stamp[x] = stampv;
    if (mode == 0) {
      ok = cond_ok(c, G->nodes[find(G, x)].gpat, x == sink);
      if (x == sink) continue;
    } else {
      if (x == sink) continue;
      if (mode == 1)
        merge(G, x, sink);
      else if (mode == 2)
        acc += G->nodes[x].gnodes;
      else
        G->racc = row_join(G->racc, G->nodes[find(G, x)].row);
    }
    for (int k = 0; k < G->nodes[x].nouts; k++)
      vec_push(&st, (void *)(intptr_t)G->nodes[x].outs[k].to);
  }
  free(st.items);
  return mode == 0 ? ok : acc;
}

static bool check_path(Graph *G, int src, int sink, PathCond c) {
  return walk_paths(G, src, sink, 0, c) != 0;
}

static void commit_fuse(Graph *G, int src, int sink) { walk_paths(G, src, sink, 1, 0); }

static long count_with(Graph *G, int child, int parent) {
  return G->nodes[find(G, parent)].gnodes + walk_paths(G, child, parent, 2, 0);
}

/* Step 3, one phase of TVM's GraphPartitioner: a node joins its
 * post-dominator's group when both patterns and every path between them
 * allow it (phase 0 out-elementwise-fusable ops, phase 1 injective ones). */
static void fuse_phase(Fuse *F, Graph *G, int phase) {
  for (int i = 0; i < G->n; i++) {
    Node *n = &G->nodes[i];
    OpPattern gp = G->nodes[find(G, i)].gpat;
    int par = n->pd_parent;
    if (gp == OPAT_OPAQUE || par < 0) continue;
    if (find(G, i) == find(G, par)) continue;
    if (count_with(G, i, par) > F->o.max_depth) continue;
    if (gp == OPAT_OUT_EWISE_FUSABLE) {
      if (phase == 0 && n->pd_pat == OPAT_ELEMWISE && check_path(G, i, par, PC_LE_BROADCAST))
        commit_fuse(G, i, par);
    } else if (gp <= OPAT_BROADCAST) {
      if ((n->pd_pat <= OPAT_INJECTIVE || n->pd_pat == OPAT_COMM_REDUCE) &&
          check_path(G, i, par, PC_BROADCAST_SINK))
        commit_fuse(G, i, par);
    } else if (gp == OPAT_INJECTIVE) {
      if (phase == 1 && check_path(G, i, par, PC_LE_INJECTIVE)) commit_fuse(G, i, par);
    }
  }
}

/* The row shape src's group, sink's group and every group on a path
 * between them would have together. */
static Row row_with(Graph *G, int src, int sink) {
  G->racc = G->nodes[find(G, sink)].row;
  walk_paths(G, src, sink, 3, 0);
  return G->racc;
}

/* Step 3's last phase, beyond TVM's: row fusion.  A reduction over the
 * last axes joins its post-dominator's group when every group on the way
 * and the sink's are elementwise, broadcast or such reductions over the
 * same rows, and every member's result starts with those rows (layer
 * norm's mean, the subtraction, the mean of squares and the normalized
 * row); the lowering then runs a row's stages back to back
 * (lower/tir_fuse_loops.c), so the row is read from memory once. */
static void row_phase(Fuse *F, Graph *G) {
  for (int i = 0; i < G->n; i++) {
    int par = G->nodes[i].pd_parent, gi = find(G, i);
    if (par < 0 || gi == find(G, par) || G->nodes[gi].row.rk == ROW_NO) continue;
    if (count_with(G, i, par) > F->o.max_depth) continue;
    if (!check_path(G, i, par, PC_ROW) || !row_fusable(row_with(G, i, par))) continue;
    commit_fuse(G, i, par);
    Node *root = &G->nodes[find(G, par)];
    root->gpat = pmax(root->gpat, OPAT_COMM_REDUCE);
  }
}

/* Links each group's members in ascending order; returns the output node
 * (highest index) of every group through out_of[root]. */
static void group_members(Graph *G, int *out_of) {
  int *last = malloc(sizeof(int) * (size_t)(G->n + 1));
  if (!last) rly_oom();
  for (int i = 0; i < G->n; i++) last[i] = -1, out_of[i] = -1;
  for (int i = 0; i < G->n; i++) {
    int r = find(G, i);
    if (last[r] >= 0) G->nodes[last[r]].gnext = i;
    last[r] = i;
    out_of[r] = i;
  }
  free(last);
}

/* ─────────────────────────────── rewrite ─────────────────────────────── */

typedef struct Emit {
  Fuse *F;
  Graph *G;
  RwBlock *out;
  int *out_of;   /* group root → output node */
  int *first_of; /* group root → first member */
} Emit;

static Expr *fuse_block(Fuse *F, Expr *e);
static Expr *rebuild(Emit *E, Expr *x);

typedef struct Ext {
  const void *key;
  Expr *arg;
  Var *param;
  int seq;
} Ext;

static int ext_cmp(const void *a, const void *b) {
  const Ext *x = a, *y = b;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

typedef struct GroupBuild {
  Ext *ext;
  int next, cap;
  PtrMap member_var; /* node index + 1 → Var* */
  PtrMap tuple_var;  /* tuple op call → the Var* holding it in the body */
} GroupBuild;

#define PARAM_NAME_ROOM "p0123456789"

static Var *ext_param(Emit *E, GroupBuild *gb, Expr *a) {
  const void *key = a->kind == EX_VAR ? (const void *)a->u.var : (const void *)a;
  for (int i = 0; i < gb->next; i++)
    if (gb->ext[i].key == key) return gb->ext[i].param;
  if (gb->next == gb->cap) {
    gb->cap = gb->cap ? gb->cap * 2 : 8;
    gb->ext = realloc(gb->ext, sizeof(Ext) * (size_t)gb->cap);
    if (!gb->ext) rly_oom();
  }
  /* Named p0, p1, ... once sorted (the group's parameters): the name is
   * written in place, so the Var is made with room for any int. */
  Var *p = var_new(E->F->a, PARAM_NAME_ROOM, a->ty, a->span);
  int seq = (int)(intptr_t)ptrmap_get(&E->G->ext_seq, a);
  gb->ext[gb->next++] = (Ext){key, a, p, seq ? seq : 1 << 30};
  return p;
}

/* The member's operand as it appears inside the fused body; keep_const: a
 * constant stays a constant (an op whose rule reads its values,
 * OP_VALUE_ARGS), else only a scalar one does. */
static Expr *member_arg(Emit *E, GroupBuild *gb, int root, Expr *a, bool keep_const) {
  int n = a->kind == EX_VAR ? node_of_var(E->G, a->u.var) : node_of_expr(E->G, a);
  if (n >= 0 && find(E->G, n) == root) {
    Var *v = ptrmap_get(&gb->member_var, (void *)(intptr_t)(n + 1));
    RLY_ASSERT(v);
    Expr *r = expr_var(E->F->a, v, a->span);
    r->ty = a->ty;
    return r;
  }
  if (scalar_const(a) || (keep_const && a->kind == EX_CONST)) return a;
  Expr *r = expr_var(E->F->a, ext_param(E, gb, a), a->span);
  r->ty = a->ty;
  return r;
}

static Expr *member_call(Emit *E, GroupBuild *gb, int root, const Expr *c) {
  int n = c->u.call.nargs;
  Expr **args = ARENA_ARRAY(E->F->a, Expr *, n + 1);
  bool keep = ops_has_flag(c->u.call.fn->u.op.index, OP_VALUE_ARGS);
  for (int i = 0; i < n; i++) args[i] = member_arg(E, gb, root, c->u.call.args[i], keep);
  Expr *r = expr_call(E->F->a, c->u.call.fn, n, args, c->u.call.attrs, c->span);
  r->ty = c->ty;
  return r;
}

/* A member as it appears in the body; a field `call.i` binds the tuple op
 * call first (once per group) and projects it. */
static Expr *member_value(Emit *E, GroupBuild *gb, RwBlock *body, int root, const Expr *e) {
  if (e->kind != EX_PROJ) return member_call(E, gb, root, e);
  Arena *a = E->F->a;
  const Expr *c = e->u.proj.tuple;
  Var *t = ptrmap_get(&gb->tuple_var, c);
  if (!t) {
    Expr *v = member_call(E, gb, root, c);
    t = rw_graph_var(a, c->span);
    rw_block_bind(body, t, v, c->span);
    ptrmap_put(&gb->tuple_var, c, t);
  }
  Expr *tv = expr_var(a, t, e->span);
  tv->ty = c->ty;
  Expr *r = expr_proj(a, tv, e->u.proj.index, e->span);
  r->ty = e->ty;
  return r;
}

static Attrs *primitive_attrs(Arena *a) {
  Attrs *at = attrs_new(a, 1);
  at->keys[0] = "Primitive";
  at->vals[0] = attr_int(a, 1, DT_INT32);
  return at;
}

/* The group's body (members in order, each but the output bound to %N). */
static Expr *group_body(Emit *E, GroupBuild *gb, int root) {
  RwBlock body = {0};
  Expr *tail = NULL;
  for (int m = E->first_of[root]; m >= 0; m = E->G->nodes[m].gnext) {
    Expr *c = member_value(E, gb, &body, root, E->G->nodes[m].e);
    if (m == E->out_of[root]) {
      tail = c;
      break;
    }
    Var *t = rw_graph_var(E->F->a, c->span);
    rw_block_bind(&body, t, c, c->span);
    ptrmap_put(&gb->member_var, (void *)(intptr_t)(m + 1), t);
  }
  return rw_block_finish(E->F->a, &body, tail);
}

/* Emits `%f = fn (...) {...};` for the group of output node `o` and returns
 * the call `%f(args)`. */
static Expr *emit_group(Emit *E, int o) {
  Arena *a = E->F->a;
  int root = find(E->G, o);
  GroupBuild gb = {0};
  Expr *body = group_body(E, &gb, root);
  /* Parameters in the order the body first uses them (TVM's), unless an
   * operand is itself a computation (a call of a function...): then keep
   * the program's evaluation order. */
  bool computed = false;
  for (int i = 0; i < gb.next; i++)
    computed |= gb.ext[i].arg->kind != EX_VAR && gb.ext[i].arg->kind != EX_CONST &&
                node_of_expr(E->G, gb.ext[i].arg) < 0;
  if (computed) qsort(gb.ext, (size_t)gb.next, sizeof(Ext), ext_cmp);
  Var **params = ARENA_ARRAY(a, Var *, gb.next + 1);
  Expr **args = ARENA_ARRAY(a, Expr *, gb.next + 1);
  Type **ptys = ARENA_ARRAY(a, Type *, gb.next + 1);
  for (int i = 0; i < gb.next; i++) {
    params[i] = gb.ext[i].param;
    snprintf(params[i]->name, sizeof PARAM_NAME_ROOM, "p%d", i);
    ptys[i] = params[i]->annot;
    args[i] = rebuild(E, gb.ext[i].arg);
  }
  Expr *orig = E->G->nodes[o].e;
  Function *fn = ARENA_NEW(a, Function);
  *fn = (Function){.nparams = gb.next,
                   .params = params,
                   .ret = orig->ty,
                   .attrs = primitive_attrs(a),
                   .body = body,
                   .span = orig->span};
  Expr *fe = expr_fn(a, fn, orig->span);
  fe->ty = type_func(a, gb.next, ptys, orig->ty, 0, NULL, orig->span);
  Var *fv = rw_graph_var(a, orig->span);
  rw_block_bind(E->out, fv, fe, orig->span);
  Expr *callee = expr_var(a, fv, orig->span);
  callee->ty = fe->ty;
  Expr *call = expr_call(a, callee, gb.next, args, NULL, orig->span);
  call->ty = orig->ty;
  free(gb.ext);
  ptrmap_free(&gb.member_var);
  ptrmap_free(&gb.tuple_var);
  E->F->changes++;
  if (E->F->pc && pass_listening(E->F->pc)) /* show the function, not just %N(...) */
    pass_report(E->F->pc, "fuse", orig, expr_call(a, fe, gb.next, args, NULL, orig->span),
                orig->span);
  return call;
}

/* A group output used as an operand: its value in a fresh %N. */
static Expr *group_value(Emit *E, int o) {
  Node *n = &E->G->nodes[o];
  if (!n->result) {
    Expr *c = emit_group(E, o);
    n->result = rw_graph_var(E->F->a, c->span);
    rw_block_bind(E->out, n->result, c, c->span);
  }
  Expr *r = expr_var(E->F->a, n->result, n->e->span);
  r->ty = n->e->ty;
  return r;
}

/* A tuple op call used whole: the tuple of its fields' values, when they
 * are all external (NULL otherwise: the call stays). */
static Expr *tuple_value(Emit *E, const Expr *call) {
  int base = (int)(intptr_t)ptrmap_get(&E->G->fields, call) - 1;
  if (base < 0) return NULL;
  int n = call->ty->u.tuple.n;
  for (int f = 0; f < n; f++)
    if (!E->G->nodes[base + f].ext) return NULL;
  Expr **k = ARENA_ARRAY(E->F->a, Expr *, n);
  for (int f = 0; f < n; f++) k[f] = group_value(E, base + f);
  Expr *r = expr_tuple(E->F->a, n, k, call->span);
  r->ty = call->ty;
  return r;
}

/* Rebuilds an expression around the graph: a graph node becomes its
 * group's value, a tuple op's call or variable the tuple of its fields',
 * nested blocks are fused on their own, and Primitive functions (already
 * fused) are kept as they are. */
static Expr *rebuild(Emit *E, Expr *x) {
  const Expr *tc = x->kind == EX_VAR ? ptrmap_get(&E->G->tuple_var, x->u.var) : x;
  Expr *tv =
      tc && !(x->kind == EX_VAR && ptrmap_has(&E->G->pinned, x->u.var)) ? tuple_value(E, tc) : NULL;
  if (tv) return tv;
  switch (x->kind) {
    case EX_CONST:
    case EX_VAR:
    case EX_GLOBAL:
    case EX_OP:
    case EX_CTOR:
      return x;
    case EX_LET:
    case EX_FREE_VAR:
      return fuse_block(E->F, x);
    case EX_FN:
      if (is_primitive(x->u.fn)) return x;
      break;
    default:
      break;
  }
  int n = node_of_expr(E->G, x);
  if (n >= 0) return group_value(E, n);
  int nk = expr_nchildren(x);
  Expr **k = ARENA_ARRAY(E->F->a, Expr *, nk + 1);
  for (int i = 0; i < nk; i++) {
    Expr *c = expr_child(x, i);
    k[i] = expr_child_role(x, i) == EXPR_BLOCK ? fuse_block(E->F, c) : rebuild(E, c);
  }
  Expr *r = expr_rebuild(E->F->a, x, k, nk);
  if (r != x) r->ty = x->ty;
  return r;
}

/* ─────────────────────────────── blocks ─────────────────────────────── */

/* The block's let/free_var nodes in order; returns its result. */
static Expr *flatten(Expr *e, PtrVec *lets) {
  while (e->kind == EX_LET || e->kind == EX_FREE_VAR) {
    vec_push(lets, e);
    e = e->kind == EX_LET ? e->u.let.body : e->u.free_var.body;
  }
  return e;
}

/* Step 1 for one block: candidate calls in binding values and in the
 * result become nodes (the result's is external); other values are
 * boundaries, and nodes they use become external. */
static void scan_block(Scan *S, PtrVec *lets, Expr *tail) {
  for (size_t i = 0; i < lets->len; i++) {
    Expr *l = lets->items[i];
    if (l->kind != EX_LET) continue;
    Expr *v = l->u.let.value;
    int f = candidate(S->F, v) ? scan_call(S, v) : scan_field(S, v);
    if (f >= 0) {
      ptrmap_put(&S->G->var_node, l->u.let.var, (void *)(intptr_t)(f + 1));
    } else if (candidate_tuple(S->F, v)) {
      scan_tuple(S, v);
      ptrmap_put(&S->G->tuple_var, l->u.let.var, v);
    } else {
      scan_boundary(S, v);
    }
  }
  if (candidate(S->F, tail)) {
    int id = scan_call(S, tail);
    S->G->nodes[id].ext = true;
  } else
    scan_boundary(S, tail);
}

/* Step 4: each group is emitted at the binding of its output member; the
 * bindings of its other members disappear, other bindings are rebuilt. */
static Expr *rewrite_block(Emit *E, PtrVec *lets, Expr *tail) {
  for (size_t i = 0; i < lets->len; i++) {
    Expr *l = lets->items[i];
    if (l->kind == EX_FREE_VAR) {
      rw_block_free_var(E->out, l->u.free_var.var, l->span);
      continue;
    }
    Var *v = l->u.let.var;
    int n = node_of_var(E->G, v);
    if (ptrmap_has(&E->G->tuple_var, v) && !ptrmap_has(&E->G->pinned, v)) {
      continue; /* its fields are nodes */
    } else if (n < 0) {
      rw_block_bind(E->out, v, rebuild(E, l->u.let.value), l->span);
    } else if (E->G->nodes[n].result) { /* a field bound twice */
      Expr *r = expr_var(E->F->a, E->G->nodes[n].result, l->span);
      r->ty = E->G->nodes[n].e->ty;
      rw_block_bind(E->out, v, r, l->span);
    } else if (E->out_of[find(E->G, n)] == n) {
      E->G->nodes[n].result = v;
      rw_block_bind(E->out, v, emit_group(E, n), l->span);
    }
  }
  int t = node_of_expr(E->G, tail);
  return t >= 0 ? emit_group(E, t) : rebuild(E, tail);
}

/* Fuses one block, steps 1 to 4.  Returns e itself when nothing was fused,
 * so unchanged code stays shared with the input. */
static Expr *fuse_block(Fuse *F, Expr *e) {
  PtrVec lets = {0};
  Expr *tail = flatten(e, &lets);
  Graph G = {0};
  Scan S = {F, &G};
  scan_block(&S, &lets, tail);
  post_dominators(&G);
  for (int phase = 0; phase < 2; phase++) fuse_phase(F, &G, phase);
  row_phase(F, &G);
  int *out_of = malloc(sizeof(int) * (size_t)(G.n + 1));
  int *first_of = malloc(sizeof(int) * (size_t)(G.n + 1));
  if (!out_of || !first_of) rly_oom();
  group_members(&G, out_of);
  for (int i = 0; i < G.n; i++) first_of[i] = -1;
  for (int i = G.n; i-- > 0;) first_of[find(&G, i)] = i;
  long before = F->changes;
  RwBlock out = {0};
  Emit E = {F, &G, &out, out_of, first_of};
  Expr *r = rewrite_block(&E, &lets, tail);
  r = rw_block_finish(F->a, &out, r);
  if (F->changes == before) r = e;
  free(out_of);
  free(first_of);
  free(lets.items);
  graph_free(&G);
  return r;
}

/* ─────────────────────────────── entry ─────────────────────────────── */

Function *fuse_function(Arena *a, const Module *m, Function *f, const FuseOptions *o, PassCtx *pc) {
  if (is_primitive(f)) return f;
  Fuse F = {a, m, o ? *o : fuse_options_default(), pc, 0};
  Expr *body = fuse_block(&F, f->body);
  if (body == f->body) return f;
  return rw_function_with(a, f, f->nparams, f->params, f->ret, body);
}

Expr *fuse_expr(Arena *a, const Module *m, Expr *e, const FuseOptions *o) {
  Fuse F = {a, m, o ? *o : fuse_options_default(), NULL, 0};
  return fuse_block(&F, e);
}

/* TVM's rules alone (fuse_options_default): scalar arithmetic and ops
 * without a compute rule fuse too.  The jit's pipeline runs it with
 * fuse_options_jit (pass_fuse_ops_jit). */
static Module *fuse_ops_with(PassCtx *pc, Module *in, FuseOptions o) {
  Module *out = module_copy(in, pc->a);
  for (int i = 0; i < in->ndefs && !pc->stopped; i++) {
    if (in->defs[i].kind != DEF_FUNC || !pass_in_scope(pc, &in->defs[i])) continue;
    FuncDef *fd = in->defs[i].u.func;
    pass_enter_def(pc, fd);
    Function *f = fuse_function(pc->a, in, fd->fn, &o, pc);
    if (f != fd->fn) pass_replace_def(pc, out, fd, f);
  }
  return out;
}

Module *pass_fuse_ops(PassCtx *pc, Module *in) {
  return fuse_ops_with(pc, in, fuse_options_default());
}

Module *pass_fuse_ops_jit(PassCtx *pc, Module *in) {
  return fuse_ops_with(pc, in, fuse_options_jit());
}
