/* compute_rules.c — the compute rules by registry index: the family
 * tables' {op name, rule} rows (compute_<family>.c) put in a table indexed
 * by the op's registry index on first use, so FuseOps and the lowering find
 * an op's rule with one array access. */
#include <pthread.h>
#include <stdlib.h>

#include "lower/compute/compute.h"

static const ComputeDef *const families[] = {
#define X(f) compute_family_##f,
    COMPUTE_FAMILIES(X)
#undef X
};

/* by_index[i]: the row of registry op i (NULL: no rule). */
static const void **by_index;

bool compute_rules_index(const ComputeDef *const *tables, int ntables, const void **out, char *err,
                         size_t cap) {
  const void *t[64];
  RLY_ASSERT(ntables <= 64);
  for (int i = 0; i < ntables; i++) t[i] = tables[i];
  return ops_index_rows("compute rule", t, ntables, sizeof(ComputeDef), out, err, cap);
}

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  const void **t = calloc((size_t)ops_count() + 1, sizeof *t);
  char err[256];
  if (!t) rly_oom();
  if (!compute_rules_index(families, (int)(sizeof families / sizeof families[0]), t, err,
                           sizeof err))
    rly_bug(__FILE__, __LINE__, err);
  by_index = t;
}

OpComputeFn *compute_rule(int op) {
  pthread_once(&table_once, build_table); /* sessions on several threads */
  if (op < 0 || op >= ops_count() || !by_index[op]) return NULL;
  return ((const ComputeDef *)by_index[op])->fn;
}
