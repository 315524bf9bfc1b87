/* op_table.c — `rly --list-ops[=text|markdown]`: the op registry as a table,
 * one row per op in registry order: its name, family (the ops/<family>.c
 * table holding its row), fusion pattern, and what it has: a reference
 * kernel (interp/), a TIR compute rule (lowered and JIT-compiled in the jit
 * mode), a gradient rule (`zero` for grad_zero: the result is constant
 * almost everywhere in the float operands, or there are none).  Everything is read from the rows
 * and the kernel table, so the README's table (scripts/op-table, between its
 * `<!-- ops:begin -->` and `<!-- ops:end -->` markers) cannot drift from
 * the code: a test compares the two. */
#include <stdio.h>
#include <string.h>

#include "interp/kernels.h"
#include "ops/families.h"
#include "ops/ops.h"
#include "repl/repl.h"

/* One op's facts, as the table shows them. */
typedef struct OpFacts {
  const char *name, *family, *pattern;
  bool kernel, compute;
  const char *gradient; /* yes, zero or no */
} OpFacts;

static OpFacts op_facts(int i) {
  const OpDef *d = ops_get(i);
  return (OpFacts){
      .name = d->name,
      .family = ops_family(i),
      .pattern = op_pattern_name(d->pattern),
      .kernel = kernels_get(i) != NULL,
      .compute = d->compute != NULL,
      .gradient = !d->grad                ? "no"
                  : d->grad == &grad_zero ? "zero"
                                          : "yes",
  };
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* Counts for the summary line above the markdown table. */
static void count_facts(int *kernels, int *computes, int *gradients, int *zeros, int *families) {
  const char *last = NULL;
  *kernels = *computes = *gradients = *zeros = *families = 0;
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    *kernels += f.kernel, *computes += f.compute;
    *gradients += strcmp(f.gradient, "yes") == 0, *zeros += strcmp(f.gradient, "zero") == 0;
    if (!last || strcmp(last, f.family) != 0) (*families)++, last = f.family;
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
  fputs("| op | family | pattern | kernel | compute rule | gradient |\n", out);
  fputs("|---|---|---|---|---|---|\n", out);
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    fprintf(out, "| `%s` | %s | %s | %s | %s | %s |\n", f.name, f.family, f.pattern,
            yes_no(f.kernel), yes_no(f.compute), f.gradient);
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
  fprintf(out, "%-*s  %-15s  %-20s  %-6s  %-7s  %s\n", w, "op", "family", "pattern", "kernel",
          "compute", "gradient");
  for (int i = 0; i < ops_count(); i++) {
    OpFacts f = op_facts(i);
    fprintf(out, "%-*s  %-15s  %-20s  %-6s  %-7s  %s\n", w, f.name, f.family, f.pattern,
            yes_no(f.kernel), yes_no(f.compute), f.gradient);
  }
}

int repl_list_ops(const char *format) {
  if (strcmp(format, "markdown") == 0)
    print_markdown(stdout);
  else if (strcmp(format, "text") == 0)
    print_text(stdout);
  else {
    fprintf(stderr, "rly: --list-ops takes `text` or `markdown`, not `%s`\n", format);
    return 2;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
