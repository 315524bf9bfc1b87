/* op_table.c — `rly --list-ops[=text|markdown]`: the op registry as a table,
 * one row per op in registry order: its name, signature (ops_signature:
 * arguments, attributes with kinds and defaults), family (the ops/<family>.c
 * table holding its row), fusion pattern, and what it has: a reference
 * kernel (interp/), a TIR compute rule (lowered and JIT-compiled in the jit
 * mode), a gradient rule (`zero` for grad_zero: the result is constant
 * almost everywhere in the float operands, or there are none), and (in
 * markdown) its one-line meaning.  `:doc OP` shows the same rows.  Everything
 * is read from the rows and the rule tables (through engine/inspect.h:
 * kernels_get, compute_rule, grad_rule), so the README's table (scripts/op-table, between its
 * `<!-- ops:begin -->` and `<!-- ops:end -->` markers) cannot drift from
 * the code: a test compares the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "ops/ops.h"
#include "repl/repl.h"

/* One op's facts, as the table shows them. */
typedef struct OpFacts {
  const char *name, *family, *pattern;
  bool kernel, compute;
  const char *gradient; /* yes, zero or no */
  char *signature;      /* malloc'd (op_facts_free) */
} OpFacts;

static OpFacts op_facts(int i) {
  const OpDef *d = ops_get(i);
  return (OpFacts){
      .name = d->name,
      .family = ops_family(i),
      .pattern = op_pattern_name(d->pattern),
      .kernel = engine_op_has_kernel(i),
      .compute = engine_op_lowers(i),
      .gradient = engine_op_grad(i) == ENGINE_GRAD_NONE   ? "no"
                  : engine_op_grad(i) == ENGINE_GRAD_ZERO ? "zero"
                                                          : "yes",
      .signature = ops_signature(d),
  };
}

static void op_facts_free(OpFacts *f) { free(f->signature); }

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* A doc line in a markdown cell: `|` would end the cell (a static buffer). */
static const char *md_cell(const char *doc) {
  static char buf[512];
  size_t n = 0;
  for (const char *p = doc ? doc : ""; *p && n + 2 < sizeof buf; p++) {
    if (*p == '|') buf[n++] = '\\';
    buf[n++] = *p;
  }
  buf[n] = 0;
  return buf;
}

/* Counts for the summary line above the markdown table. */
static void count_facts(int *kernels, int *computes, int *gradients, int *zeros, int *families) {
  const char *last = NULL;
  *kernels = *computes = *gradients = *zeros = *families = 0;
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    *kernels += f.kernel, *computes += f.compute;
    *gradients += strcmp(f.gradient, "yes") == 0, *zeros += strcmp(f.gradient, "zero") == 0;
    if (!last || strcmp(last, f.family) != 0) (*families)++, last = f.family;
    op_facts_free(&f);
  }
}

/* The markdown the README holds between its markers: a summary, the
 * table, and what a `no` in the kernel column means. */
static void print_markdown(FILE *out) {
  int nk, nc, ng, nz, nf;
  count_facts(&nk, &nc, &ng, &nz, &nf);
  fprintf(out,
          "%d ops in %d families: %d with a reference kernel, %d with a TIR compute rule, "
          "%d with a gradient rule, %d with a zero gradient.\n\n",
          ops_count(), nf, nk, nc, ng, nz);
  fputs("| op | family | pattern | kernel | compute rule | gradient | signature | meaning |\n",
        out);
  fputs("|---|---|---|---|---|---|---|---|\n", out);
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    fprintf(out, "| `%s` | %s | %s | %s | %s | %s | `%s` | %s |\n", f.name, f.family, f.pattern,
            yes_no(f.kernel), yes_no(f.compute), f.gradient, f.signature, md_cell(ops_get(i)->doc));
    op_facts_free(&f);
  }
  fputs(
      "\nAn op without a kernel is run by the evaluator itself (`call_tir`, the ops on "
      "keys); one without a compute rule stays with its kernel in the jit mode.  A zero "
      "gradient: the result is constant almost everywhere in the op's float operands "
      "(rounding, comparisons, indices), or it has none; the Gradient pass passes nothing "
      "back through it.\n",
      out);
}

/* Aligned columns for a terminal. */
static void print_text(FILE *out) {
  int w = 2;
  for (int i = 0; i < ops_count(); i++) {
    int n = (int)strlen(ops_get(i)->name);
    if (n > w) w = n;
  }
  fprintf(out, "%-*s  %-15s  %-20s  %-6s  %-7s  %-8s  %s\n", w, "op", "family", "pattern", "kernel",
          "compute", "gradient", "signature");
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    fprintf(out, "%-*s  %-15s  %-20s  %-6s  %-7s  %-8s  %s\n", w, f.name, f.family, f.pattern,
            yes_no(f.kernel), yes_no(f.compute), f.gradient, f.signature);
    op_facts_free(&f);
  }
}

/* Every row's example as a script, each preceded by a comment naming its
 * op (tests/op_examples.py runs it in both exec modes). */
static int print_examples(FILE *out) {
  int missing = 0;
  for (int i = 0; i < ops_count(); i++) {
    const OpDef *d = ops_get(i);
    if (!d->example) {
      fprintf(stderr, "rly: op %s has no example\n", d->name);
      missing++;
      continue;
    }
    fprintf(out, "// %s\n%s\n", d->name, d->example);
  }
  return missing ? 1 : 0;
}

int repl_list_ops(const char *format) {
  if (strcmp(format, "examples") == 0) {
    int st = print_examples(stdout);
    return fflush(stdout) == 0 ? st : 1;
  }
  if (strcmp(format, "markdown") == 0)
    print_markdown(stdout);
  else if (strcmp(format, "text") == 0)
    print_text(stdout);
  else {
    fprintf(stderr, "rly: --list-ops takes `text`, `markdown` or `examples`, not `%s`\n", format);
    return 2;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
