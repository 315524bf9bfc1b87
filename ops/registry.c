/* registry.c — joins the per-family op tables into one registry with
 * name lookup (hash map, built on first use), flag queries and
 * nearest-name suggestions.  An op's index is its position in the joined
 * registry; the layers above key their per-op tables by it, built from
 * their rows keyed by op name (ops_index_rows). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"

static const OpDef **all_ops;
static unsigned char *family_of; /* each op's index in families[] */
static int nops;
static StrMap by_name;

static const OpDef *const families[] = {
#define X(f) ops_family_##f,
    OP_FAMILIES(X)
#undef X
};

static const char *const family_names[] = {
#define X(f) #f,
    OP_FAMILIES(X)
#undef X
};
_Static_assert(sizeof families / sizeof families[0] <= 256, "family_of holds a byte");

static const char *const pattern_names[] = {
#define X(e, n) n,
    OP_PATTERNS(X)
#undef X
};

const char *op_pattern_name(OpPattern p) { return pattern_names[p]; }

/* Builds the registry on first use: the family tables in order, one index
 * per op, and the name map (a duplicate name is a bug).  Once per process
 * (pthread_once: sessions on several threads may ask first at once); read
 * only afterwards. */
static void ops_build(void) {
  int n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const OpDef *d = families[f]; d->name; d++) n++;
  const OpDef **list = malloc(sizeof(OpDef *) * (size_t)(n ? n : 1));
  family_of = malloc((size_t)(n ? n : 1));
  if (!list || !family_of) rly_oom();
  n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const OpDef *d = families[f]; d->name; d++) {
      RLY_ASSERT(!strmap_get(&by_name, d->name)); /* one entry per op */
      list[n] = d;
      family_of[n] = (unsigned char)f;
      strmap_put(&by_name, d->name, (void *)(intptr_t)(n + 1));
      n++;
    }
  nops = n;
  all_ops = list;
}

static void ops_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, ops_build);
}

int ops_count(void) {
  ops_init();
  return nops;
}

const OpDef *ops_get(int index) {
  ops_init();
  return index >= 0 && index < nops ? all_ops[index] : NULL;
}

const char *ops_family(int index) {
  ops_init();
  return index >= 0 && index < nops ? family_names[family_of[index]] : NULL;
}

int ops_lookup(const char *name) {
  ops_init();
  return (int)(intptr_t)strmap_get(&by_name, name) - 1;
}

bool ops_has_flag(int index, unsigned flags) {
  const OpDef *d = ops_get(index);
  return d && (d->flags & flags) == flags;
}

Expr *ops_expr(Arena *a, int index, Span sp) {
  const OpDef *d = ops_get(index);
  RLY_ASSERT(d);
  Expr *e = expr_new(a, EX_OP, sp);
  e->u.op.index = index, e->u.op.name = d->name, e->u.op.call_tir = (d->flags & OP_CALL_TIR) != 0;
  return e;
}

int ops_find_flag(unsigned flags) {
  ops_init();
  for (int i = 0; i < nops; i++)
    if ((all_ops[i]->flags & flags) == flags) return i;
  return -1;
}

/* Levenshtein distance with one row; long names count as far (99) so a
 * suggestion is never made for them. */
static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 99;
  int row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best, diag = up;
    }
  }
  return row[lb];
}

/* Distance to a name, also trying the name without its namespace
 * (`dense` is close to `nn.dense`). */
static int name_distance(const char *want, const char *have) {
  int d = edit_distance(want, have);
  const char *dot = strrchr(have, '.');
  if (dot) {
    int d2 = edit_distance(want, dot + 1) + 1;
    if (d2 < d) d = d2;
  }
  return d;
}

int ops_suggest(const char *name, const char **out, int k) {
  ops_init();
  int dist[8], n = 0;
  if (k > 8) k = 8;
  if (k <= 0) return 0;
  int limit = (int)strlen(name) / 3 + 2;
  for (int i = 0; i < nops; i++) {
    int d = name_distance(name, all_ops[i]->name);
    if (d > limit || (n == k && d >= dist[k - 1])) continue;
    int j = n < k ? n++ : k - 1; /* a full list drops its worst entry */
    while (j > 0 && dist[j - 1] > d) dist[j] = dist[j - 1], out[j] = out[j - 1], j--;
    dist[j] = d, out[j] = all_ops[i]->name;
  }
  return n;
}

/* The name of a rule row: its first member. */
static const char *row_name(const char *row) {
  const char *name;
  memcpy(&name, row, sizeof name);
  return name;
}

bool ops_index_rows(const char *what, const void *const *tables, int ntables, size_t row_size,
                    const void **out, char *err, size_t cap) {
  for (int t = 0; t < ntables; t++)
    for (const char *row = tables[t]; row_name(row); row += row_size) {
      int i = ops_lookup(row_name(row));
      if (i < 0)
        return snprintf(err, cap, "%s row names unknown op `%s`", what, row_name(row)), false;
      if (out[i]) return snprintf(err, cap, "two %s rows for op `%s`", what, row_name(row)), false;
      out[i] = row;
    }
  return true;
}

/* ───────────────────────── the stages' rule tables ───────────────────────── */

static pthread_mutex_t rule_mu = PTHREAD_MUTEX_INITIALIZER;

static const void **rule_table_build(OpsRuleTable *t) {
  pthread_mutex_lock(&rule_mu);
  const void **rows = atomic_load_explicit(&t->by_index, memory_order_relaxed);
  if (!rows) {
    char err[256];
    rows = calloc((size_t)ops_count() + 1, sizeof *rows);
    if (!rows) rly_oom();
    if (!ops_index_rows(t->what, t->tables, t->ntables, t->row_size, rows, err, sizeof err))
      rly_bug(__FILE__, __LINE__, err);
    atomic_store_explicit(&t->by_index, rows, memory_order_release);
  }
  pthread_mutex_unlock(&rule_mu);
  return rows;
}

const void *ops_rule_row(OpsRuleTable *t, int op) {
  const void **rows = atomic_load_explicit(&t->by_index, memory_order_acquire);
  if (!rows) rows = rule_table_build(t);
  return op >= 0 && op < ops_count() ? rows[op] : NULL;
}
