/* dot.c — the DOT text of a dataflow graph (ir/dot.h).
 *
 * One pass over the expression: value() returns the node that produces an
 * expression's value, declaring nodes in the cluster being written (nodes
 * belong to the subgraph they are first named in) and collecting edges in
 * a buffer written after every cluster.  Variables map to their producers
 * (a let's value, a parameter, an argument of a Primitive call), so a use
 * is an edge, not a node.  block() follows a let chain along its bodies
 * with a loop; value() recurses only into nested expressions. */
#include "ir/dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/walk.h"

enum {
  DOT_ATTRS_SHOWN = 4,  /* attributes on an op's label; more show as `...` */
  DOT_ATTR_WIDTH = 32,  /* characters of one attribute value */
  DOT_NAME_OPS = 4,     /* ops named in a Primitive cluster without a kernel name */
  DOT_DARK_BUCKETS = 4, /* heat buckets dark enough for white text */
};

/* The legend's buckets of a kernel's share of the profiled time (reds). */
static const struct {
  double min;
  const char *color, *text;
} heat[] = {
    {0.50, "#67000d", "50% or more"}, {0.30, "#a50f15", "30% to 50%"},
    {0.20, "#cb181d", "20% to 30%"},  {0.10, "#ef3b2c", "10% to 20%"},
    {0.05, "#fb6a4a", "5% to 10%"},   {0.02, "#fc9272", "2% to 5%"},
    {0.01, "#fcbba1", "1% to 2%"},    {0.00, "#fee0d2", "under 1%"},
};
enum { NHEAT = sizeof heat / sizeof heat[0] };
static const char *const not_run_color = "#eeeeee";

typedef struct Dot {
  StrBuf out;   /* nodes and clusters, nested */
  StrBuf edges; /* every edge, written after the clusters */
  U64Map vars;  /* Var* → producing node + 1 */
  U64Map prims; /* Var* → the Primitive Function* let-bound to it */
  const DotOptions *o;
  int depth;  /* cluster nesting, for indentation */
  int inprim; /* inside a Primitive cluster whose kernel ran: its ops are coloured with it */
  int nodes, nedges, clusters;
} Dot;

static int value(Dot *D, Expr *e);

/* ───────────────────────── text ───────────────────────── */

/* s inside a DOT string: quotes and backslashes escaped, newlines as \n. */
static void esc(StrBuf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '\n') {
      sb_puts(b, "\\n");
      continue;
    }
    if (*s == '"' || *s == '\\') sb_putc(b, '\\');
    sb_putc(b, *s);
  }
}

static void indent(Dot *D) { sb_indent(&D->out, 2 * (D->depth + 1)); }

/* Declares a node in the current cluster; style: more DOT attributes. */
static int node(Dot *D, const char *label, const char *style) {
  int id = D->nodes++;
  indent(D);
  sb_printf(&D->out, "n%d [label=\"", id);
  esc(&D->out, label);
  sb_printf(&D->out, "\"%s%s];\n", style ? ", " : "", style ? style : "");
  return id;
}

/* An edge labelled `prefix` and the type ty (either may be NULL). */
static void edge_to(Dot *D, int from, int to, const Type *ty, const char *prefix,
                    const char *style) {
  if (from < 0 || to < 0) return;
  D->nedges++;
  sb_printf(&D->edges, "  n%d -> n%d", from, to);
  StrBuf l = {0};
  if (prefix) sb_puts(&l, prefix);
  if (ty && D->o->edge_types) {
    char *t = print_type(ty);
    sb_printf(&l, "%s%s", prefix ? ": " : "", t);
    free(t);
  }
  if (l.len || style) {
    sb_puts(&D->edges, " [");
    if (l.len) sb_puts(&D->edges, "label=\""), esc(&D->edges, l.data), sb_putc(&D->edges, '"');
    if (style) sb_printf(&D->edges, "%s%s", l.len ? ", " : "", style);
    sb_putc(&D->edges, ']');
  }
  sb_puts(&D->edges, ";\n");
  sb_free(&l);
}

static void cluster_open(Dot *D, const char *prefix, const char *label, const char *style) {
  indent(D);
  sb_printf(&D->out, "subgraph cluster_%s%d {\n", prefix, D->clusters++);
  D->depth++;
  indent(D);
  sb_puts(&D->out, "label=\"");
  esc(&D->out, label);
  sb_printf(&D->out, "\";%s%s\n", style ? " " : "", style ? style : "");
}

static void cluster_close(Dot *D) {
  D->depth--;
  indent(D);
  sb_puts(&D->out, "}\n");
}

/* ───────────────────────── values ───────────────────────── */

static const Type *type_of(const Expr *e) {
  return e->ty ? e->ty : e->kind == EX_VAR ? e->u.var->annot : NULL;
}

static void bind(Dot *D, const Var *v, int id) {
  if (id >= 0) *u64map_slot(&D->vars, PTR_KEY(v)) = (uint64_t)id + 1;
}

static const char *var_name(const Var *v) { return var_named(v) ? v->name : "_"; }

static bool is_primitive(const Function *f) {
  const AttrValue *v = attrs_get(f->attrs, "Primitive");
  return v && v->kind == AV_INT && v->u.i == 1;
}

/* An operand: its producer, with an edge into `to` carrying its type. */
static void operand(Dot *D, int from, Expr *a, int to) {
  edge_to(D, from, to, type_of(a), NULL, NULL);
}

/* "constant\n(3, 4) float32": shape and dtype, never the values. */
static int constant(Dot *D, const Expr *e) {
  const Tensor *t = e->u.konst.value;
  StrBuf b = {0};
  sb_puts(&b, "constant\n");
  if (t->ndim) {
    Dim *dims = calloc((size_t)t->ndim, sizeof *dims);
    if (!dims) rly_oom();
    for (int i = 0; i < t->ndim; i++) dims[i].kind = DIM_CONST, dims[i].value = t->shape[i];
    print_dims_to(&b, t->ndim, dims);
    sb_putc(&b, ' ');
    free(dims);
  }
  sb_puts(&b, dtype_name(t->dtype));
  int id = node(D, b.data, "shape=note, style=filled, fillcolor=\"#f0f0f0\"");
  sb_free(&b);
  return id;
}

/* ───────────────────────── profile colours ───────────────────────── */

/* With a profile: the style of a kernel's node or cluster, filled by its
 * share's bucket (grey when it did not run), and its share and time
 * appended to label.  False without a profile. */
static bool heat_style(Dot *D, const char *name, bool reference, StrBuf *label, StrBuf *style) {
  if (!D->o->share || !name) return false;
  double ms = 0, s = D->o->share(D->o->ctx, name, reference, &ms);
  if (s < 0) {
    if (reference) return false; /* an op that did not run on its reference kernel */
    sb_printf(style, "style=filled, fillcolor=\"%s\"", not_run_color);
    sb_puts(label, "\n(not run in the profile)");
    return true;
  }
  int k = 0;
  while (k < NHEAT - 1 && s < heat[k].min) k++;
  sb_printf(style, "style=filled, fillcolor=\"%s\"%s", heat[k].color,
            k < DOT_DARK_BUCKETS ? ", fontcolor=white" : "");
  sb_printf(label, "\n%.1f%%, %.3f ms", 100 * s, ms);
  return true;
}

/* The legend of the colours, when there is a profile. */
static void legend(Dot *D) {
  if (!D->o->share) return;
  char title[96];
  snprintf(title, sizeof title, "share of the profiled time (%.3f ms)", D->o->total_ms);
  cluster_open(D, "legend", title, "style=rounded;");
  int prev = -1;
  for (int k = 0; k < NHEAT; k++) {
    char st[96];
    snprintf(st, sizeof st, "style=filled, fillcolor=\"%s\"%s", heat[k].color,
             k < DOT_DARK_BUCKETS ? ", fontcolor=white" : "");
    int id = node(D, heat[k].text, st);
    edge_to(D, prev, id, NULL, NULL, "style=invis");
    prev = id;
  }
  char st[64];
  snprintf(st, sizeof st, "style=filled, fillcolor=\"%s\"", not_run_color);
  edge_to(D, prev, node(D, "not run", st), NULL, NULL, "style=invis");
  cluster_close(D);
}

/* ───────────────────────── calls ───────────────────────── */

typedef struct Arg {
  Expr *e;
  int id;
} Arg;

/* The producers of a call's arguments, in order, before the call's node
 * exists: call_tir's tuple counts as its fields (the prim's inputs) and its
 * global argument names the prim (*prim). */
static int call_args(Dot *D, Expr *e, Arg **out, const char **prim) {
  bool tir = e->u.call.fn->kind == EX_OP && e->u.call.fn->u.op.call_tir;
  int n = e->u.call.nargs, cap = n, k = 0;
  for (int i = 0; tir && i < n; i++)
    if (e->u.call.args[i]->kind == EX_TUPLE) cap += e->u.call.args[i]->u.tuple.n;
  Arg *a = malloc(sizeof *a * (size_t)(cap + 1));
  if (!a) rly_oom();
  for (int i = 0; i < n; i++) {
    Expr *x = e->u.call.args[i];
    if (tir && x->kind == EX_GLOBAL) {
      *prim = x->u.global.name;
    } else if (tir && x->kind == EX_TUPLE) {
      for (int j = 0; j < x->u.tuple.n; j++)
        a[k].e = x->u.tuple.fields[j], a[k].id = value(D, x->u.tuple.fields[j]), k++;
    } else {
      a[k].e = x, a[k].id = value(D, x), k++;
    }
  }
  *out = a;
  return k;
}

/* An op's name and its first attributes, `key=value` one a line (an
 * attribute holding an expression, and call_tir's, are left out). */
static void op_label(StrBuf *b, const Expr *e) {
  sb_puts(b, e->u.call.fn->u.op.name);
  const Attrs *at = e->u.call.attrs;
  if (!at || e->u.call.fn->u.op.call_tir) return;
  int shown = 0;
  for (int i = 0; i < at->n; i++) {
    if (at->vals[i]->kind == AV_EXPR) continue;
    if (shown++ == DOT_ATTRS_SHOWN) {
      sb_puts(b, "\n...");
      break;
    }
    StrBuf v = {0};
    print_attr_value_to(&v, at->vals[i]);
    int w = v.len > DOT_ATTR_WIDTH ? DOT_ATTR_WIDTH : (int)v.len;
    sb_printf(b, "\n%s=%.*s%s", at->keys[i], w, v.data ? v.data : "",
              v.len > DOT_ATTR_WIDTH ? "..." : "");
    sb_free(&v);
  }
}

/* call_tir's node: the prim's name (or the extern's), coloured by its
 * kernel's time. */
static int tir_node(Dot *D, const Expr *e, const char *prim) {
  const AttrValue *callee = attrs_get(e->u.call.attrs, "callee");
  StrBuf l = {0}, st = {0};
  sb_puts(&l, e->u.call.fn->u.op.name);
  if (prim)
    sb_printf(&l, " @%s", prim);
  else if (callee && callee->kind == AV_STR)
    sb_printf(&l, " \"%s\"", callee->u.s);
  if (!heat_style(D, prim, false, &l, &st)) sb_puts(&st, "style=filled, fillcolor=\"#fdd0a2\"");
  sb_puts(&st, ", shape=component");
  int id = node(D, l.data, st.data);
  sb_free(&l), sb_free(&st);
  return id;
}

/* An op call's node; outside a kernel, coloured by the op's reference
 * kernel time when it ran on one. */
static int op_node(Dot *D, const Expr *e) {
  StrBuf l = {0}, st = {0};
  op_label(&l, e);
  if (D->inprim || !heat_style(D, e->u.call.fn->u.op.name, true, &l, &st))
    sb_puts(&st, "style=\"rounded,filled\", fillcolor=\"#deebf7\"");
  int id = node(D, l.data, st.data);
  sb_free(&l), sb_free(&st);
  return id;
}

static int block(Dot *D, Expr *e);

/* "fused: nn.dense, add, nn.relu": a Primitive function without a kernel name. */
static void fused_name(StrBuf *b, const Function *f) {
  sb_puts(b, "fused:");
  int n = 0;
  for (const Expr *e = f->body;; e = e->u.let.body) {
    const Expr *c = e->kind == EX_LET ? e->u.let.value : e;
    if (c->kind == EX_CALL && c->u.call.fn->kind == EX_OP && n++ < DOT_NAME_OPS)
      sb_printf(b, "%s %s", n > 1 ? "," : "", c->u.call.fn->u.op.name);
    if (e->kind != EX_LET) break;
  }
  if (n > DOT_NAME_OPS) sb_puts(b, ", ...");
}

/* A call of a Primitive function: a cluster named after its kernel, the
 * parameters standing for the call's arguments. */
static int primitive_call(Dot *D, const Function *f, Arg *args, int nargs) {
  const char *k = D->o->kernel_name ? D->o->kernel_name(D->o->ctx, f) : NULL;
  StrBuf l = {0}, st = {0};
  if (k)
    sb_puts(&l, k);
  else
    fused_name(&l, f);
  double ms;
  bool ran = D->o->share && k && D->o->share(D->o->ctx, k, false, &ms) >= 0;
  if (!ran || !heat_style(D, k, false, &l, &st))
    sb_puts(&st, "style=filled, fillcolor=\"#f7fbff\"");
  sb_puts(&st, ";");
  for (char *p = st.data; *p; p++) /* cluster attributes are statements */
    if (*p == ',') *p = ';';
  cluster_open(D, "k", l.data, st.data);
  sb_free(&l), sb_free(&st);
  for (int i = 0; i < f->nparams; i++) {
    int id = i < nargs ? args[i].id : -1;
    if (id < 0) id = node(D, var_name(f->params[i]), "shape=ellipse");
    bind(D, f->params[i], id);
  }
  D->inprim += ran; /* else its ops ran on their reference kernels: coloured one by one */
  int r = block(D, f->body);
  D->inprim -= ran;
  cluster_close(D);
  return r;
}

/* The Primitive function a call's callee is, or NULL. */
static const Function *callee_primitive(Dot *D, const Expr *fn) {
  if (fn->kind == EX_FN && is_primitive(fn->u.fn)) return fn->u.fn;
  if (fn->kind != EX_VAR) return NULL;
  uint64_t *p = u64map_find(&D->prims, PTR_KEY(fn->u.var));
  return p ? (const Function *)(uintptr_t)*p : NULL;
}

/* A call's node: an op, call_tir, a Primitive function (a cluster), a
 * global function, a constructor, or a closure (its producer an operand). */
static int call(Dot *D, Expr *e) {
  Expr *fn = e->u.call.fn;
  const Function *prim = callee_primitive(D, fn);
  const char *tir = NULL;
  int callee = fn->kind == EX_VAR && !prim ? value(D, fn) : -1;
  Arg *args;
  int n = call_args(D, e, &args, &tir), id;
  if (prim) {
    id = primitive_call(D, prim, args, n);
    free(args);
    return id;
  }
  char buf[160];
  if (fn->kind == EX_OP)
    id = fn->u.op.call_tir ? tir_node(D, e, tir) : op_node(D, e);
  else if (fn->kind == EX_GLOBAL)
    snprintf(buf, sizeof buf, "call @%s", fn->u.global.name), id = node(D, buf, "peripheries=2");
  else if (fn->kind == EX_CTOR)
    id = node(D, fn->u.ctor.adt->ctors[fn->u.ctor.index].name, "shape=box");
  else
    id = node(D, "call", "shape=box"), callee = callee >= 0 ? callee : value(D, fn);
  edge_to(D, callee, id, type_of(fn), "callee", "style=dashed");
  for (int i = 0; i < n; i++) operand(D, args[i].id, args[i].e, id);
  free(args);
  return id;
}

/* ───────────────────────── control flow ───────────────────────── */

/* A pattern as written: `Cons(%x, _)`, `(%a, %b)`. */
static void pattern_text(StrBuf *b, const Pattern *p) {
  switch (p->kind) {
    case PAT_WILD:
      sb_putc(b, '_');
      return;
    case PAT_VAR:
      sb_printf(b, "%%%s", var_name(p->u.var));
      return;
    case PAT_CTOR:
      sb_puts(b, p->u.ctor.adt->ctors[p->u.ctor.index].name);
      for (int i = 0; i < p->u.ctor.n; i++)
        sb_puts(b, i ? ", " : "("), pattern_text(b, p->u.ctor.sub[i]);
      if (p->u.ctor.n) sb_putc(b, ')');
      return;
    case PAT_TUPLE:
      sb_putc(b, '(');
      for (int i = 0; i < p->u.tuple.n; i++)
        sb_puts(b, i ? ", " : ""), pattern_text(b, p->u.tuple.sub[i]);
      sb_puts(b, p->u.tuple.n == 1 ? ",)" : ")");
      return;
  }
}

typedef struct PatCtx {
  Dot *D;
  int from;
} PatCtx;

/* A pattern variable: a node fed by the scrutinee. */
static void pattern_var(void *ctx, Var *v) {
  PatCtx *c = ctx;
  char buf[96];
  snprintf(buf, sizeof buf, "%%%s", var_name(v));
  int id = node(c->D, buf, "shape=ellipse");
  edge_to(c->D, c->from, id, v->annot, NULL, "style=dashed");
  bind(c->D, v, id);
}

/* One branch or clause: a cluster of its own, its result into merge. */
static void branch(Dot *D, const char *label, Expr *body, int merge, PatCtx *pat,
                   const Pattern *p) {
  cluster_open(D, "b", label, "style=dashed;");
  if (p) pattern_vars(p, pattern_var, pat);
  int r = block(D, body);
  cluster_close(D);
  edge_to(D, r, merge, type_of(body), label, NULL);
}

/* `if`: a cluster with the test, a cluster per branch and the merge. */
static int if_value(Dot *D, Expr *e) {
  int c = value(D, e->u.if_.cond);
  cluster_open(D, "if", "if", NULL);
  int test = node(D, "if", "shape=diamond");
  operand(D, c, e->u.if_.cond, test);
  int merge = node(D, "if result", "shape=invtriangle");
  edge_to(D, test, merge, NULL, NULL, "style=dotted");
  branch(D, "then", e->u.if_.then_, merge, NULL, NULL);
  branch(D, "else", e->u.if_.else_, merge, NULL, NULL);
  cluster_close(D);
  return merge;
}

/* `match`: the test, one cluster per clause labelled with its pattern
 * (its variables fed by the scrutinee), and the merge. */
static int match_value(Dot *D, Expr *e) {
  int s = value(D, e->u.match.scrut);
  cluster_open(D, "match", e->u.match.partial ? "match?" : "match", NULL);
  int test = node(D, "match", "shape=diamond");
  operand(D, s, e->u.match.scrut, test);
  int merge = node(D, "match result", "shape=invtriangle");
  edge_to(D, test, merge, NULL, NULL, "style=dotted");
  PatCtx pc = {D, test};
  for (int i = 0; i < e->u.match.n; i++) {
    StrBuf l = {0};
    pattern_text(&l, e->u.match.clauses[i].pat);
    branch(D, l.data, e->u.match.clauses[i].body, merge, &pc, e->u.match.clauses[i].pat);
    sb_free(&l);
  }
  cluster_close(D);
  return merge;
}

/* A closure: a cluster with its parameters and body; the node `fn` is
 * its value. */
static int fn_value(Dot *D, const Function *f) {
  StrBuf l = {0};
  sb_puts(&l, "fn (");
  for (int i = 0; i < f->nparams; i++)
    sb_printf(&l, "%s%%%s", i ? ", " : "", var_name(f->params[i]));
  sb_putc(&l, ')');
  cluster_open(D, "fn", l.data, "style=dashed;");
  sb_free(&l);
  for (int i = 0; i < f->nparams; i++) {
    char buf[96];
    snprintf(buf, sizeof buf, "%%%s", var_name(f->params[i]));
    bind(D, f->params[i], node(D, buf, "shape=ellipse"));
  }
  int r = block(D, f->body), id = node(D, "fn", "shape=invhouse");
  edge_to(D, r, id, type_of(f->body), "returns", "style=dashed");
  cluster_close(D);
  return id;
}

/* ───────────────────────── expressions ───────────────────────── */

/* A variable's producer; a variable bound outside what is drawn gets a
 * node of its own, once. */
static int var_value(Dot *D, const Var *v) {
  uint64_t *p = u64map_find(&D->vars, PTR_KEY(v));
  if (p) return (int)*p - 1;
  char buf[96];
  snprintf(buf, sizeof buf, "%%%s", var_name(v));
  int id = node(D, buf, "shape=ellipse");
  bind(D, v, id);
  return id;
}

/* A node with one operand. */
static int unary(Dot *D, const char *label, Expr *a) {
  int from = value(D, a), id = node(D, label, "shape=box");
  operand(D, from, a, id);
  return id;
}

static int tuple_value(Dot *D, Expr *e) {
  int n = e->u.tuple.n, *ids = malloc(sizeof *ids * (size_t)(n + 1));
  if (!ids) rly_oom();
  for (int i = 0; i < n; i++) ids[i] = value(D, e->u.tuple.fields[i]);
  int id = node(D, "tuple", "shape=box, style=filled, fillcolor=\"#efedf5\"");
  for (int i = 0; i < n; i++) operand(D, ids[i], e->u.tuple.fields[i], id);
  free(ids);
  return id;
}

static int ref_write(Dot *D, Expr *e) {
  int r = value(D, e->u.ref_write.ref), v = value(D, e->u.ref_write.value);
  int id = node(D, ":=", "shape=box");
  operand(D, r, e->u.ref_write.ref, id), operand(D, v, e->u.ref_write.value, id);
  return id;
}

/* A leaf that is not a variable: a global, an op or a constructor used as a value. */
static int leaf(Dot *D, const Expr *e) {
  char buf[160];
  if (e->kind == EX_GLOBAL)
    snprintf(buf, sizeof buf, "@%s", e->u.global.name);
  else if (e->kind == EX_OP)
    snprintf(buf, sizeof buf, "%s", e->u.op.name);
  else
    snprintf(buf, sizeof buf, "%s", e->u.ctor.adt->ctors[e->u.ctor.index].name);
  return node(D, buf, "shape=box, style=dashed");
}

/* The node producing e's value (declaring what it needs). */
static int value(Dot *D, Expr *e) {
  char buf[32];
  switch (e->kind) {
    case EX_CONST:
      return constant(D, e);
    case EX_VAR:
      return var_value(D, e->u.var);
    case EX_GLOBAL:
    case EX_OP:
    case EX_CTOR:
      return leaf(D, e);
    case EX_CALL:
      return call(D, e);
    case EX_TUPLE:
      return tuple_value(D, e);
    case EX_PROJ:
      snprintf(buf, sizeof buf, ".%d", e->u.proj.index);
      return unary(D, buf, e->u.proj.tuple);
    case EX_LET:
    case EX_FREE_VAR:
      return block(D, e);
    case EX_FN:
      return fn_value(D, e->u.fn);
    case EX_IF:
      return if_value(D, e);
    case EX_MATCH:
      return match_value(D, e);
    case EX_REF_NEW:
      return unary(D, "ref", e->u.ref_new.init);
    case EX_REF_READ:
      return unary(D, "read (^)", e->u.ref_read.ref);
    case EX_REF_WRITE:
      return ref_write(D, e);
    case EX_DATAFLOW: {
      cluster_open(D, "dataflow", "dataflow", "style=dashed;");
      int r = block(D, e->u.dataflow.body);
      cluster_close(D);
      return r;
    }
  }
  RLY_UNREACHABLE();
}

/* A block: a let chain followed along its bodies (no recursion on its
 * length), then its result.  A let-bound Primitive function is drawn
 * where it is called. */
static int block(Dot *D, Expr *e) {
  for (;;) {
    if (e->kind == EX_LET) {
      Var *v = e->u.let.var;
      Expr *val = e->u.let.value;
      if (val->kind == EX_FN && is_primitive(val->u.fn))
        *u64map_slot(&D->prims, PTR_KEY(v)) = PTR_KEY(val->u.fn);
      else
        bind(D, v, value(D, val));
    } else if (e->kind == EX_FREE_VAR) {
      char buf[96];
      snprintf(buf, sizeof buf, "free_var %%%s", var_name(e->u.free_var.var));
      bind(D, e->u.free_var.var, node(D, buf, "shape=ellipse"));
    } else {
      return value(D, e);
    }
    e = expr_rest(e);
  }
}

/* ───────────────────────── the graph ───────────────────────── */

static void header(Dot *D, const char *title) {
  sb_puts(&D->out, "digraph \"");
  esc(&D->out, title);
  sb_puts(&D->out, "\" {\n  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label=\"");
  esc(&D->out, title);
  sb_puts(&D->out,
          "\"];\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=8];\n");
}

/* The result node, the legend, the edges and the closing brace. */
static char *finish(Dot *D, int r, const Type *ty, DotStats *st) {
  int out = node(D, "result", "shape=box, style=\"rounded,bold\"");
  edge_to(D, r, out, ty, NULL, NULL);
  legend(D);
  sb_puts(&D->out, D->edges.data ? D->edges.data : "");
  sb_puts(&D->out, "}\n");
  if (st) st->nodes = D->nodes, st->edges = D->nedges, st->clusters = D->clusters;
  sb_free(&D->edges);
  u64map_free(&D->vars), u64map_free(&D->prims);
  return sb_take(&D->out);
}

char *dot_function(const char *name, const Function *f, const DotOptions *o, DotStats *st) {
  Dot D = {.o = o};
  header(&D, name);
  for (int i = 0; i < f->nparams; i++) {
    char buf[96];
    snprintf(buf, sizeof buf, "%%%s", var_name(f->params[i]));
    bind(&D, f->params[i], node(&D, buf, "shape=ellipse, style=filled, fillcolor=\"#e5f5e0\""));
  }
  int r = block(&D, f->body);
  return finish(&D, r, type_of(f->body), st);
}

char *dot_expr(const char *title, Expr *e, const DotOptions *o, DotStats *st) {
  Dot D = {.o = o};
  header(&D, title);
  int r = value(&D, e);
  return finish(&D, r, type_of(e), st);
}
