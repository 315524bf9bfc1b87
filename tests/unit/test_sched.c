/* test_sched.c — random schedules: on each prim function of the schedule
 * workloads (tests/data/sched_prims.rly: TVM's schedule test functions),
 * the course's mm_relu and the Relax example's kernels, sequences of
 * randomly chosen primitives with random arguments drawn from the current
 * function (its loops and blocks).  A step may be refused (its
 * preconditions); every step applied must give a function that computes
 * what the unscheduled one does (sched_verify: both through the TIR
 * interpreter on random inputs), and the trace, printed and read back as
 * text, must give the same function again. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schedule.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/sched.h"
#include "ir/tir_walk.h"
#include "parser/parser.h"
#include "sched/sched.h"
#include "tests/unit/check.h"

enum { SEQS = 30, LEN = 10, MAXN = 64 };

static Arena A;
static DiagCtx D;
static uint64_t rng = 88172645463325252ull;
static int applied, refused;
static int applied_by[64];

static uint64_t rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static int pick(int n) { return n ? (int)(rnd() % (uint64_t)n) : 0; }

/* ───────────────────────── what the function has ───────────────────────── */

typedef struct Shape {
  int nloops, nblocks;
  const Stmt *loops[MAXN];
  const char *blocks[MAXN];
} Shape;

static bool collect(void *ctx, const Stmt *s) {
  Shape *sh = ctx;
  if (s->kind == ST_FOR && sh->nloops < MAXN) sh->loops[sh->nloops++] = s;
  if (s->kind == ST_BLOCK && sh->nblocks < MAXN) sh->blocks[sh->nblocks++] = s->u.block.name;
  return true;
}

static Shape shape_of(const PrimFunc *f) {
  Shape sh = {0};
  TirVisitor v = {collect, NULL, &sh};
  tir_walk(f->body, &v);
  return sh;
}

static const char *loop_name(const Stmt *l) { return l->u.for_.vars[0]->name; }

static bool unique(const Shape *sh, const char *name) {
  int n = 0;
  for (int i = 0; i < sh->nloops; i++) n += strcmp(loop_name(sh->loops[i]), name) == 0;
  return n == 1;
}

/* A uniquely named loop (or any, when none is). */
static const Stmt *a_loop(const Shape *sh) {
  for (int tries = 0; tries < 8; tries++) {
    const Stmt *l = sh->loops[pick(sh->nloops)];
    if (unique(sh, loop_name(l))) return l;
  }
  return sh->loops[pick(sh->nloops)];
}

/* The loop directly inside l when it is l's only statement. */
static const Stmt *child(const Stmt *l) {
  const Stmt *b = l->u.for_.body;
  while (b && b->kind == ST_SEQ && b->u.seq.n == 1) b = b->u.seq.items[0];
  return b && b->kind == ST_FOR ? b : NULL;
}

/* ───────────────────────── steps ───────────────────────── */

static int gen(const Shape *sh, char *out, size_t n) {
  static const int factors[] = {2, 3, 4, 5, 8, 16};
  const Stmt *l = a_loop(sh), *c = child(l);
  const char *L = loop_name(l), *C = c ? loop_name(c) : L, *B = sh->blocks[pick(sh->nblocks)];
  const char *B2 = sh->blocks[pick(sh->nblocks)];
  int f = factors[pick(6)], kind = pick(16);
  switch (kind) {
    case 0:
      snprintf(out, n, "split(%%%s, factors=[?, %d])", L, f);
      break;
    case 1:
      snprintf(out, n, "split(%%%s, factors=[%d, ?, 2])", L, f);
      break;
    case 2:
      snprintf(out, n, "fuse(%%%s, %%%s)", L, C);
      break;
    case 3:
      snprintf(out, n, "reorder(%%%s, %%%s)", C, L);
      break;
    case 4:
      snprintf(out, n, "parallel(%%%s)", L);
      break;
    case 5:
      snprintf(out, n, "vectorize(%%%s)", L);
      break;
    case 6:
      snprintf(out, n, "unroll(%%%s)", L);
      break;
    case 7:
      snprintf(out, n, "compute_at(get_block(\"%s\"), %%%s)", B, L);
      break;
    case 8:
      snprintf(out, n, "reverse_compute_at(get_block(\"%s\"), %%%s)", B, L);
      break;
    case 9:
      snprintf(out, n, "compute_inline(get_block(\"%s\"))", B);
      break;
    case 10:
      snprintf(out, n, "reverse_compute_inline(get_block(\"%s\"))", B);
      break;
    case 11:
      snprintf(out, n, "cache_read(get_block(\"%s\"), %d, \"global\")", B, pick(2));
      break;
    case 12:
      snprintf(out, n, "cache_write(get_block(\"%s\"), 0, \"global\")", B);
      break;
    case 13:
      snprintf(out, n, "decompose_reduction(get_block(\"%s\"), %%%s)", B, L);
      break;
    case 14:
      snprintf(out, n, "rfactor(%%%s, 0)", L);
      break;
    default:
      snprintf(out, n, "blockize(%%%s)", B2 ? L : L);
      break;
  }
  return kind;
}

static SchedStep *parse_step(Module *m, const char *text) {
  uint32_t file = diag_add_source(&D, "step", text, strlen(text));
  return parse_sched_step(m, &D, file, NULL);
}

/* The trace as text after the function as written, read back: the same function. */
static void check_replay(Module *m, const PrimFunc *f) {
  StrBuf b = {0};
  print_prim_func_to(&b, f->unscheduled);
  print_sched_trace_to(&b, f->trace);
  Module *m2 = module_new(&A);
  uint32_t file = diag_add_source(&D, "replay", b.data, b.len);
  bool ok = parse_module(m2, &D, file) && engine_apply_schedules(m2, &D, false);
  const PrimFunc *g = ok ? module_prim(m2, f->name) : NULL;
  char *x = engine_prim_text(f, false), *y = g ? engine_prim_text(g, false) : NULL;
  if (!y) diag_render(&D, stderr, 0, false), fprintf(stderr, "%s", b.data);
  CHECK_STREQ(y, x);
  free(x), free(y), sb_free(&b);
  diag_clear(&D);
  module_free(m2);
  (void)m;
}

static void one_sequence(Module *m, const PrimFunc *orig, int seq) {
  const PrimFunc *f = orig;
  SchedOptions o = {.seed = (uint64_t)seq};
  for (int i = 0; i < LEN; i++) {
    Shape sh = shape_of(f);
    if (!sh.nloops) break;
    char text[512];
    int kind = gen(&sh, text, sizeof text);
    SchedStep *st = parse_step(m, text);
    CHECK(st != NULL);
    PrimFunc *g = st ? sched_apply_step(&A, f, st, &D, &o) : NULL;
    diag_clear(&D);
    if (!g) {
      refused++;
      continue;
    }
    applied++, applied_by[kind]++;
    char err[512];
    bool same = sched_verify(g, (uint64_t)(seq * 31 + i), err, sizeof err);
    if (!same) {
      StrBuf t = {0};
      print_sched_trace_to(&t, g->trace);
      fprintf(stderr, "@%s after %s: %s\n%s", f->name, text, err, t.data);
      sb_free(&t);
    }
    CHECK(same);
    if (!same) return;
    f = g;
  }
  if (f->trace) check_replay(m, f);
}

static void schedule_file(const char *root, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  Module *m = module_new(&A);
  uint32_t file = diag_add_file(&D, path);
  ParseOptions po = {0};
  ParseResult r = parse_script(m, &D, file, &po);
  if (!r.ok) diag_render(&D, stderr, 0, false);
  CHECK(r.ok);
  diag_clear(&D);
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_PRIM)
      for (int s = 0; s < SEQS; s++) one_sequence(m, m->defs[i].u.prim, s);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : getenv("RLY_SOURCE_ROOT");
  if (!root) root = ".";
  arena_init(&A);
  diag_init(&D);
  schedule_file(root, "tests/data/sched_prims.rly");
  schedule_file(root, "tests/lit/sched/inputs/mm_relu.rly");
  schedule_file(root, "examples/relax_mlp.rly");
  printf("random schedules: %d steps applied and verified, %d refused; by kind:", applied, refused);
  for (int k = 0; k < 16; k++) printf(" %d", applied_by[k]);
  printf("\n");
  CHECK(applied >= 100); /* the sequences exercised the primitives, not only their refusals */
  diag_free(&D);
  arena_free(&A);
  return check_report("test_sched");
}
