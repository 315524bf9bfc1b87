/* compute_rules.c — the compute rules by registry index: the family
 * tables' {op name, rule} rows (compute_<family>.c) put in a table indexed
 * by the op's registry index on first use, so FuseOps and the lowering find
 * an op's rule with one array access. */
#include <stdlib.h>

#include "lower/compute/compute.h"

static const ComputeDef *const families[] = {
#define X(f) compute_family_##f,
    COMPUTE_FAMILIES(X)
#undef X
};

bool compute_rules_index(const ComputeDef *const *tables, int ntables, const void **out, char *err,
                         size_t cap) {
  const void *t[64];
  RLY_ASSERT(ntables <= 64);
  for (int i = 0; i < ntables; i++) t[i] = tables[i];
  return ops_index_rows("compute rule", t, ntables, sizeof(ComputeDef), out, err, cap);
}

static OpsRuleTable table = {"compute rule", (const void *const *)families,
                             (int)(sizeof families / sizeof families[0]), sizeof(ComputeDef), NULL};

OpComputeFn *compute_rule(int op) {
  const ComputeDef *d = ops_rule_row(&table, op);
  return d ? d->fn : NULL;
}
