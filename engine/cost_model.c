/* cost_model.c — gradient boosted regression trees (engine/cost_model.h):
 * NTREES trees of depth DEPTH, each fitted to the residuals of those
 * before it (squared loss: gradient = prediction - target, hessian 1) by
 * exact greedy splits, leaf weights -G / (H + LAMBDA), shrunk by ETA. */
#include "engine/cost_model.h"

#include <stdlib.h>
#include <string.h>

#include "ir/util.h"

enum { NTREES = 40, DEPTH = 3, NODES = (1 << (DEPTH + 1)) - 1, MIN_LEAF = 2 };
static const double ETA = 0.3, LAMBDA = 1.0;

/* A complete binary tree: node i's children are 2i+1 and 2i+2; feat < 0: a leaf. */
typedef struct Tree {
  int feat[NODES];
  float thr[NODES]; /* x[feat] < thr goes left */
  double w[NODES];
} Tree;

struct CostModel {
  int nfeat, n, cap;
  float *x; /* n rows of nfeat */
  double *y;
  double base;
  int ntrees;
  Tree trees[NTREES];
};

CostModel *cost_model_new(int nfeat) {
  CostModel *m = calloc(1, sizeof *m);
  if (!m) rly_oom();
  m->nfeat = nfeat;
  return m;
}

void cost_model_free(CostModel *m) {
  if (!m) return;
  free(m->x), free(m->y), free(m);
}

void cost_model_add(CostModel *m, const float *x, double y) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    m->x = realloc(m->x, sizeof *m->x * (size_t)m->cap * (size_t)m->nfeat);
    m->y = realloc(m->y, sizeof *m->y * (size_t)m->cap);
    if (!m->x || !m->y) rly_oom();
  }
  memcpy(m->x + (size_t)m->n * (size_t)m->nfeat, x, sizeof *x * (size_t)m->nfeat);
  m->y[m->n++] = y;
}

int cost_model_samples(const CostModel *m) { return m->n; }

static double tree_predict(const Tree *t, const float *x) {
  int i = 0;
  while (t->feat[i] >= 0) i = 2 * i + (x[t->feat[i]] < t->thr[i] ? 1 : 2);
  return t->w[i];
}

double cost_model_predict(const CostModel *m, const float *x) {
  double p = m->base;
  for (int i = 0; i < m->ntrees; i++) p += ETA * tree_predict(&m->trees[i], x);
  return p;
}

/* ───────────────────────── fitting ───────────────────────── */

/* The samples sorted by each feature once per fit (sorted[j * n + i]); a
 * node's samples are those whose node_of is the node, in that order. */
typedef struct Fit {
  const CostModel *m;
  const double *g; /* gradients */
  int *sorted, *node_of;
} Fit;

static const float *row(const CostModel *m, int i) { return m->x + (size_t)i * (size_t)m->nfeat; }

static const CostModel *sort_m; /* qsort's context: fitting is single-threaded */
static int sort_j;

static int by_feature(const void *a, const void *b) {
  int i = *(const int *)a, k = *(const int *)b;
  float u = row(sort_m, i)[sort_j], v = row(sort_m, k)[sort_j];
  return u < v ? -1 : u > v ? 1 : i - k;
}

static void presort(Fit *f) {
  int n = f->m->n;
  sort_m = f->m;
  for (int j = 0; j < f->m->nfeat; j++) {
    int *s = f->sorted + (size_t)j * (size_t)n;
    for (int i = 0; i < n; i++) s[i] = i;
    sort_j = j;
    qsort(s, (size_t)n, sizeof *s, by_feature);
  }
}

static double score(double g, double h) { return g * g / (h + LAMBDA); }

typedef struct Split {
  int feat;
  float thr;
  double gain;
} Split;

/* The best split of node's n samples (gradient sum gall) along feature j into *best. */
static void split_on(const Fit *f, int node, int n, double gall, int j, Split *best) {
  const int *s = f->sorted + (size_t)j * (size_t)f->m->n;
  double gl = 0;
  int left = 0, prev = -1;
  for (int i = 0; i < f->m->n; i++) {
    if (f->node_of[s[i]] != node) continue;
    if (prev >= 0 && left >= MIN_LEAF && n - left >= MIN_LEAF) {
      float a = row(f->m, prev)[j], b = row(f->m, s[i])[j];
      double gain = score(gl, left) + score(gall - gl, n - left) - score(gall, n);
      if (a != b && gain > best->gain + 1e-12) *best = (Split){j, a + (b - a) / 2, gain};
    }
    gl += f->g[s[i]], left++, prev = s[i];
  }
}

/* Grows node `node` (n samples, at depth d). */
static void grow(Fit *f, Tree *t, int node, int n, int d) {
  double g = 0;
  for (int i = 0; i < f->m->n; i++)
    if (f->node_of[i] == node) g += f->g[i];
  t->feat[node] = -1, t->w[node] = -g / (n + LAMBDA);
  if (d == DEPTH || n < 2 * MIN_LEAF) return;
  Split s = {.feat = -1};
  for (int j = 0; j < f->m->nfeat; j++) split_on(f, node, n, g, j, &s);
  if (s.feat < 0) return;
  int l = 0;
  for (int i = 0; i < f->m->n; i++)
    if (f->node_of[i] == node) {
      bool left = row(f->m, i)[s.feat] < s.thr;
      f->node_of[i] = 2 * node + (left ? 1 : 2), l += left;
    }
  t->feat[node] = s.feat, t->thr[node] = s.thr;
  grow(f, t, 2 * node + 1, l, d + 1);
  grow(f, t, 2 * node + 2, n - l, d + 1);
}

void cost_model_fit(CostModel *m) {
  m->ntrees = 0, m->base = 0;
  if (!m->n) return;
  for (int i = 0; i < m->n; i++) m->base += m->y[i] / m->n;
  size_t n = (size_t)m->n;
  double *pred = malloc(sizeof *pred * n), *g = malloc(sizeof *g * n);
  Fit f = {.m = m,
           .g = g,
           .sorted = malloc(sizeof(int) * n * (size_t)m->nfeat),
           .node_of = malloc(sizeof(int) * n)};
  if (!pred || !g || !f.sorted || !f.node_of) rly_oom();
  presort(&f);
  for (int i = 0; i < m->n; i++) pred[i] = m->base;
  for (int k = 0; k < NTREES; k++) {
    for (int i = 0; i < m->n; i++) g[i] = pred[i] - m->y[i], f.node_of[i] = 0;
    Tree *t = &m->trees[m->ntrees++];
    grow(&f, t, 0, m->n, 0);
    for (int i = 0; i < m->n; i++) pred[i] += ETA * tree_predict(t, row(m, i));
  }
  free(pred), free(g), free(f.sorted), free(f.node_of);
}
