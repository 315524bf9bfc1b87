/* format.c — values as rly text (text-format.md part D): they parse back to
 * the same value, except tensors past the print limit, which are
 * summarized numpy-style with `...` (3 leading and 3 trailing entries per
 * axis).  Scalars use the printer's literal forms (shortest round-tripping
 * floats).  ADT values iterate on their last field, so a million-element
 * list prints without deep recursion; nesting elsewhere is capped. */
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"

enum { FORMAT_MAX_DEPTH = 200, SUMMARY_EDGE = 3 };

typedef struct Fmt {
  StrBuf *b;
  Tensor view; /* the tensor being printed, as an IR header */
  bool summarize;
} Fmt;

/* The nested lists of dimension d onward, numpy-style: one row per line
 * with a blank line per further dimension, and `...` in place of the
 * middle when summarizing. */
static void elems(Fmt *f, int d, int64_t off, int indent) {
  const Tensor *t = &f->view;
  if (d == t->ndim) {
    print_scalar_to(f->b, t, off);
    return;
  }
  int64_t n = t->shape[d], stride = 1;
  for (int k = d + 1; k < t->ndim; k++) stride *= t->shape[k];
  bool cut = f->summarize && n > 2 * SUMMARY_EDGE;
  sb_putc(f->b, '[');
  for (int64_t i = 0; i < n; i++) {
    if (cut && i == SUMMARY_EDGE) {
      sb_puts(f->b, d + 1 < t->ndim ? "...,\n" : "..., ");
      if (d + 1 < t->ndim) sb_indent(f->b, indent + 1);
      i = n - SUMMARY_EDGE;
    }
    elems(f, d + 1, off + i * stride, indent + 1);
    if (i + 1 < n) {
      if (d + 1 < t->ndim) {
        sb_puts(f->b, ",\n");
        for (int k = d + 2; k < t->ndim; k++) sb_putc(f->b, '\n');
        sb_indent(f->b, indent + 1);
      } else {
        sb_puts(f->b, ", ");
      }
    }
  }
  sb_putc(f->b, ']');
}

static void format_tensor(Interp *in, StrBuf *b, const RtTensor *t, int indent) {
  Fmt f = {b, rt_tensor_as_ir(t), t->numel > in->opt.print_limit};
  if (t->ndim == 0) {
    print_scalar_to(b, &f.view, 0);
    return;
  }
  if (!print_empty_tensor_to(b, &f.view)) elems(&f, 0, 0, indent);
}

static void format_key(StrBuf *b, const Value *v) {
  sb_printf(b, "random.wrap_key([%uu32, %uu32])", (unsigned)v->u.key.k[0], (unsigned)v->u.key.k[1]);
}

static void format_closure(StrBuf *b, const Value *v) {
  const Proc *p = v->u.closure.proc;
  if (v->u.closure.name) {
    sb_printf(b, "<closure @%s>", v->u.closure.name);
    return;
  }
  sb_puts(b, "<closure fn (");
  for (int i = 0; p->fn && i < p->fn->nparams; i++)
    sb_printf(b, "%s%%%s", i ? ", " : "",
              var_named(p->fn->params[i]) ? p->fn->params[i]->name : "_");
  sb_puts(b, ")>");
}

static void format(Interp *in, StrBuf *b, const Value *v, int depth, int indent);

static void format_fields(Interp *in, StrBuf *b, Value **fields, int n, int depth, int indent) {
  for (int i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    format(in, b, fields[i], depth + 1, indent + 1);
  }
}

/* Cons(1, Cons(2, Nil)): recurse on all fields but the last, loop on it. */
static void format_adt(Interp *in, StrBuf *b, const Value *v, int depth, int indent) {
  int open = 0;
  while (v && v->kind == V_ADT) {
    const char *name = v->u.adt.adt->ctors[v->u.adt.index].name;
    int n = v->u.adt.n;
    sb_puts(b, name);
    if (!n) break;
    sb_putc(b, '(');
    open++;
    format_fields(in, b, v->u.adt.fields, n - 1, depth, indent);
    if (n > 1) sb_puts(b, ", ");
    v = v->u.adt.fields[n - 1];
    if (v->kind != V_ADT) format(in, b, v, depth + 1, indent + 1);
  }
  while (open--) sb_putc(b, ')');
}

/* A value as rly text; a 1-tuple keeps its comma so it parses back as a
 * tuple, and nesting past FORMAT_MAX_DEPTH prints `...`. */
static void format(Interp *in, StrBuf *b, const Value *v, int depth, int indent) {
  if (!v) {
    sb_puts(b, "<uninitialized>");
    return;
  }
  if (depth > FORMAT_MAX_DEPTH) {
    sb_puts(b, "...");
    return;
  }
  switch (v->kind) {
    case V_TENSOR:
      format_tensor(in, b, v->u.tensor, indent);
      return;
    case V_TUPLE:
      sb_putc(b, '(');
      format_fields(in, b, v->u.tuple.fields, v->u.tuple.n, depth, indent);
      if (v->u.tuple.n == 1) sb_putc(b, ',');
      sb_putc(b, ')');
      return;
    case V_CLOSURE:
      format_closure(b, v);
      return;
    case V_REF:
      sb_puts(b, "ref(");
      format(in, b, v->u.ref.cell, depth + 8, indent + 4);
      sb_putc(b, ')');
      return;
    case V_ADT:
      format_adt(in, b, v, depth, indent);
      return;
    case V_KEY:
      format_key(b, v);
      return;
    case V_OP:
      sb_puts(b, ops_get(v->u.op.index)->name);
      return;
    case V_CTOR:
      sb_puts(b, v->u.ctor.adt->ctors[v->u.ctor.index].name);
      return;
  }
}

void interp_format_to(Interp *in, StrBuf *b, const Value *v) { format(in, b, v, 0, 0); }

char *interp_format(Interp *in, const Value *v) {
  StrBuf b = {0};
  format(in, &b, v, 0, 0);
  return sb_take(&b);
}
