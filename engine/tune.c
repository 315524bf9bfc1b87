/* tune.c — `:tune @f` (engine/tune.h): candidates from the schedule rules,
 * each checked against the unscheduled function, compiled by the JIT and
 * timed; a warm-up of random samples, then rounds of candidates ranked by
 * the cost model (engine/cost_model.c), the best measured and learnt from
 * (model_off: random samples, then mutations of the fastest); and the
 * tuning database, a text file of records:
 *
 *   record @mm workload=1f2e... (float32[64, 64], float32[64, 64], ...)
 *   target: LLVM 19.1.7 x86_64-pc-linux-gnu skylake features:...
 *   gflops: 12.345
 *   schedule @mm {
 *     ...
 *   }
 *
 * The workload is a hash of the unscheduled function's text with its name
 * left out, with the buffers' shapes and dtypes shown. */
#include "engine/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/cost_model.h"
#include "engine/inspect.h"
#include "engine/profile.h"
#include "engine/schedule.h"
#include "engine/tune_db.h"
#include "jit/jit.h"
#include "parser/parser.h"
#include "sched/sched.h"

/* ROUND candidates ranked by the model per round (the second half
 * mutations of the ELITE it ranks best), PICK of them measured. */
enum { TUNE_SEED = 3, POP = 8, VERIFY_MAX_FLOPS = 20000000, ROUND = 128, ELITE = 8, PICK = 8 };
static const double EPSILON = 0.1; /* the share of a round's picks drawn at random */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ───────────────────────── running a candidate ───────────────────────── */

typedef TuneRun Run;

static void run_free(Run *r) {
  for (int i = 0; i < r->f->nparams; i++) rt_tensor_release(r->args[i]), r->args[i] = NULL;
}

static bool run_new(Run *r, const PrimFunc *f, char *err, size_t n) {
  *r = (Run){.f = prim_to_run(f)};
  if (r->f->nparams > 64) return snprintf(err, n, "more than 64 buffers"), false;
  if (!sched_random_args(r->f, TUNE_SEED, r->args, err, n)) return run_free(r), false;
  return true;
}

/* Median milliseconds of k's runs: a warm-up, then runs until 5 and 50 ms
 * (one when the warm-up alone is over 4 times the best so far). */
static double time_kernel(const JitKernel *k, Run *r, double best, bool *ok) {
  TirError te = {0};
  double t0 = now_ms();
  *ok = jit_run(k, r->args, r->f->nparams, &te);
  double warm = now_ms() - t0, t[256], spent = 0;
  if (!*ok || (best > 0 && warm > 4 * best)) return warm;
  int c = 0;
  while (*ok && c < 256 && (c < 5 || spent < 50) && !(c >= 2 && spent > 400)) {
    t0 = now_ms();
    *ok = jit_run(k, r->args, r->f->nparams, &te);
    t[c] = now_ms() - t0, spent += t[c++];
  }
  for (int i = 1; i < c; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1], t[j - 1] = x;
    }
  return c ? t[c / 2] : warm;
}

/* Do the buffers of a (a candidate's run) equal those of b (the
 * unscheduled function's) within float rounding? */
static bool same_outputs(const Run *a, const Run *b, char *err, size_t n) {
  for (int i = 0; i < a->f->nparams; i++) {
    const RtTensor *x = a->args[i], *y = b->args[i];
    for (int64_t j = 0; j < x->numel; j++) {
      double u = rt_get_f64(x, j), v = rt_get_f64(y, j);
      if (fabs(u - v) <= 1e-3 * (1 + fabs(v)) || (isnan(u) && isnan(v))) continue;
      snprintf(err, n, "`%%%s` element %lld: %g, the unscheduled function gives %g",
               a->f->params[i]->name, (long long)j, u, v);
      return false;
    }
  }
  return true;
}

/* The helpers above for other tuners (engine/tune.h). */
bool engine_tune_run_new(TuneRun *r, const PrimFunc *f, char *err, size_t n) {
  return run_new(r, f, err, n);
}
void engine_tune_run_free(TuneRun *r) { run_free(r); }
double engine_tune_time(const JitKernel *k, TuneRun *r, double best, bool *ok) {
  return time_kernel(k, r, best, ok);
}
bool engine_tune_same(const TuneRun *a, const TuneRun *b, char *err, size_t n) {
  return same_outputs(a, b, err, n);
}

/* ───────────────────────── the search ───────────────────────── */

typedef struct Cand {
  const PrimFunc *f;
  double ms;
} Cand;

typedef struct Tuner {
  Arena *a;
  const PrimFunc *plain; /* the unscheduled function */
  Run ref;               /* its outputs on the inputs */
  Cand pop[POP];         /* the fastest, fastest first */
  int npop;
  TuneTrial trial;
  CostModel *model; /* NULL: model=off */
  bool synthetic;   /* RLY_TUNE_TIMES=synthetic: times from the features, not the clock */
  uint64_t *seen;   /* the lowered functions measured (prim_func_hash) */
  int nseen, capseen;
  TuneResult *res;
  TuneProgress cb;
  void *user;
} Tuner;

static void keep(Tuner *t, const PrimFunc *f, double ms) {
  int i = t->npop < POP ? t->npop++ : POP - 1;
  if (i == POP - 1 && t->pop[i].f && t->pop[i].ms <= ms) return;
  t->pop[i] = (Cand){f, ms};
  for (; i > 0 && t->pop[i].ms < t->pop[i - 1].ms; i--) {
    Cand c = t->pop[i];
    t->pop[i] = t->pop[i - 1], t->pop[i - 1] = c;
  }
}

/* A time made from f's features (RLY_TUNE_TIMES=synthetic): the same for
 * the same candidate in every run, so that the search itself can be
 * checked for determinism; no kernel is timed. */
static double synthetic_ms(const Tuner *t, const PrimFunc *f) {
  float x[SCHED_NFEATURES];
  sched_features(f, x);
  const float *a1 = x + SF_ACCESS0 + 1;
  double lg = 0.4 * x[SF_VEC_LANES] + 0.3 * x[SF_UNROLL] + 0.2 * x[SF_PARALLEL] +
              0.1 * a1[4 * SF_A_REUSE] - 0.2 * a1[4 * SF_A_STRIDE] + 0.1 * x[SF_ALLOC_SMALL];
  double flops = t->res->flops > 1e3 ? t->res->flops : 1e3;
  return flops / (exp2(lg) * 1e6);
}

/* Compiles, runs and checks f: its median time, or -1 (t->trial says why). */
static double measure(Tuner *t, const PrimFunc *f) {
  char err[512];
  TirError te = {0};
  const JitKernel *k = jit_get(prim_to_run(f), &te);
  Run r;
  if (!k || !run_new(&r, f, err, sizeof err)) return t->trial.refused = true, -1;
  bool ok;
  double ms = time_kernel(k, &r, t->npop && !t->synthetic ? t->pop[0].ms : 0, &ok);
  if (t->synthetic) ms = synthetic_ms(t, f);
  bool same = ok && (f == t->plain || same_outputs(&r, &t->ref, err, sizeof err));
  if (same && f->unscheduled && t->res->flops <= VERIFY_MAX_FLOPS)
    same = sched_verify(f, 1, err, sizeof err);
  run_free(&r);
  if (!ok) return t->trial.refused = true, -1;
  if (!same) {
    t->trial.wrong = true, t->res->wrong++;
    if (!t->res->wrong_msg) t->res->wrong_msg = strdup(err);
    return -1;
  }
  return ms;
}

static uint64_t candidate_hash(const PrimFunc *f) { return prim_func_hash(prim_to_run(f)); }

static bool seen(const Tuner *t, uint64_t h) {
  for (int i = 0; i < t->nseen; i++)
    if (t->seen[i] == h) return true;
  return false;
}

static void mark_seen(Tuner *t, uint64_t h) {
  if (t->nseen == t->capseen) {
    t->capseen = t->capseen ? 2 * t->capseen : 64;
    t->seen = realloc(t->seen, sizeof *t->seen * (size_t)t->capseen);
    if (!t->seen) rly_oom();
  }
  t->seen[t->nseen++] = h;
}

/* A measured candidate teaches the model: its features, its log2 speed. */
static void learn(Tuner *t, const PrimFunc *f, double ms) {
  float x[SCHED_NFEATURES];
  if (!t->model) return;
  sched_features(f, x);
  cost_model_add(t->model, x, -log2(ms > 1e-6 ? ms : 1e-6));
}

static bool report(Tuner *t, const PrimFunc *f, int k, int n, double predicted) {
  t->trial = (TuneTrial){.k = k, .n = n, .predicted_gflops = predicted};
  if (f) mark_seen(t, candidate_hash(f));
  double ms = f ? measure(t, f) : -1;
  if (!f) t->trial.refused = true;
  t->res->refused += t->trial.refused;
  if (ms >= 0) {
    t->res->measured++;
    keep(t, f, ms), learn(t, f, ms);
    t->trial.ms = ms, t->trial.gflops = t->res->flops > 0 ? t->res->flops / (ms * 1e6) : 0;
  }
  double best = t->npop ? t->pop[0].ms : 0;
  t->trial.best_gflops = best > 0 && t->res->flops > 0 ? t->res->flops / (best * 1e6) : 0;
  t->trial.refused_so_far = t->res->refused;
  return !t->cb || t->cb(t->user, &t->trial);
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

/* Trial k's candidate: a random sample, or (evolve: past the first half of
 * the trials or of the time, with a population) one of the fastest three's
 * traces with one decision drawn again. */
static const PrimFunc *candidate(Tuner *t, uint64_t seed, int k, bool evolve) {
  uint64_t r = mix(seed * 0x9E3779B97F4A7C15ull + (uint64_t)k);
  const PrimFunc *parent = NULL;
  if (evolve && t->npop) {
    parent = t->pop[r % (uint64_t)(t->npop < 3 ? t->npop : 3)].f;
    if (!parent->unscheduled || !sched_trace_nsamples(parent->trace)) parent = NULL;
  }
  if (!parent) return sched_space_sample(t->a, t->plain, r, NULL, -1);
  int ns = sched_trace_nsamples(parent->trace);
  return sched_space_sample(t->a, t->plain, r >> 8, parent->trace, (int)((r >> 40) % (uint64_t)ns));
}

/* ───────────────────────── search with the model ───────────────────────── */

/* A round's candidate (made in a scratch arena) and the model's prediction. */
typedef struct Gen {
  const PrimFunc *c;
  double score;
  int j;
} Gen;

static uint64_t round_rand(uint64_t seed, int round, int j) {
  return mix(mix(seed ^ 0xC057u) + (uint64_t)round * 0x9E3779B97F4A7C15ull + (uint64_t)j);
}

/* A fresh sample, or (parent not NULL) parent with one decision drawn again. */
static const PrimFunc *make(Tuner *t, Arena *a, uint64_t r, const PrimFunc *parent) {
  int ns = parent && parent->unscheduled ? sched_trace_nsamples(parent->trace) : 0;
  if (!ns) return sched_space_sample(a, t->plain, r >> 8, NULL, -1);
  return sched_space_sample(a, t->plain, r >> 8, parent->trace, (int)((r >> 40) % (uint64_t)ns));
}

typedef struct Pool {
  Gen gens[ROUND];
  uint64_t hashes[ROUND];
  int n;
} Pool;

/* c joins the pool with its prediction unless refused or already known. */
static void consider(Tuner *t, Pool *p, const PrimFunc *c, int j) {
  uint64_t h = c ? candidate_hash(c) : 0;
  bool dup = !c || seen(t, h);
  for (int i = 0; i < p->n && !dup; i++) dup = p->hashes[i] == h;
  if (dup || p->n == ROUND) return;
  float x[SCHED_NFEATURES];
  sched_features(c, x);
  p->hashes[p->n] = h;
  p->gens[p->n++] = (Gen){c, cost_model_predict(t->model, x), j};
}

static int by_score(const void *x, const void *y) {
  const Gen *a = x, *b = y;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->j - b->j;
}

/* Round `round`'s candidates, ranked by the model, best first: half fresh
 * samples and mutations of the measured fastest, then mutations of the
 * ELITE that the model ranks best among those. */
static void rank_round(Tuner *t, Arena *scratch, uint64_t seed, int round, Pool *p) {
  p->n = 0;
  for (int j = 0; j < ROUND && p->n < ROUND / 2; j++) {
    uint64_t r = round_rand(seed, round, j);
    const PrimFunc *parent = t->npop && (j & 1) ? t->pop[(r >> 4) % (uint64_t)t->npop].f : NULL;
    consider(t, p, make(t, scratch, r, parent), j);
  }
  qsort(p->gens, (size_t)p->n, sizeof *p->gens, by_score);
  int elite = p->n < ELITE ? p->n : ELITE;
  for (int j = ROUND; elite && j < 3 * ROUND && p->n < ROUND; j++) {
    uint64_t r = round_rand(seed, round, j);
    consider(t, p, make(t, scratch, r, p->gens[(r >> 4) % (uint64_t)elite].c), j);
  }
  qsort(p->gens, (size_t)p->n, sizeof *p->gens, by_score);
}

/* Chooses `want` of the n ranked: mostly the best, an EPSILON share at random. */
static int choose(uint64_t seed, int round, Gen *gens, int n, int want) {
  int k = 0;
  for (; k < want && k < n; k++) {
    uint64_t r = mix(seed * 31 + (uint64_t)round * 1009 + (uint64_t)k);
    int pick = (double)(r >> 11) / 9007199254740992.0 < EPSILON
                   ? k + (int)((r >> 3) % (uint64_t)(n - k))
                   : k;
    Gen g = gens[pick];
    gens[pick] = gens[k], gens[k] = g;
  }
  return k;
}

/* Measures round `round`'s picks (made again, from their traces, in the
 * caller's arena) as trials i, i+1, ...: the next trial's number. */
static int model_round(Tuner *t, const TuneOptions *o, int round, int i, bool *go) {
  Pool p; /* about 4 KiB */
  Arena scratch;
  arena_init(&scratch);
  cost_model_fit(t->model);
  rank_round(t, &scratch, o->seed, round, &p);
  int k = choose(o->seed, round, p.gens, p.n, PICK < o->trials - i + 1 ? PICK : o->trials - i + 1);
  const PrimFunc *picks[PICK];
  for (int q = 0; q < k; q++)
    picks[q] = sched_space_sample(t->a, t->plain, 0, p.gens[q].c->trace, -1);
  arena_free(&scratch);
  if (!k) return *go = report(t, NULL, i, o->trials, 0), i + 1; /* nothing new: one refused */
  for (int q = 0; q < k && *go; q++, i++) {
    double g = t->res->flops > 0 ? t->res->flops / (exp2(-p.gens[q].score) * 1e6) : 0;
    *go = report(t, picks[q], i, o->trials, g);
  }
  return i;
}

/* The measured warm-up: random samples (or, with model=off, the whole
 * search: samples, then mutations past half the trials or the time). */
static int warmup(Tuner *t, const TuneOptions *o) {
  if (!t->model) return o->trials;
  int w = o->trials / 8;
  return w < 6 ? 6 : w > 16 ? 16 : w;
}

/* The trials: the function as written, its schedule, the warm-up, then
 * the model's rounds. */
static void search(Tuner *t, const TuneOptions *o, const PrimFunc *f) {
  double start = now_ms(), budget = o->minutes > 0 ? o->minutes * 60e3 : 0;
  bool go = report(t, t->plain, 0, o->trials, 0);
  t->res->start_ms = t->npop ? t->pop[0].ms : -1;
  if (go && f->unscheduled) go = report(t, f, -1, o->trials, 0); /* its current schedule */
  int w = warmup(t, o), i = 1;
  for (; go && i <= w && i <= o->trials && (!budget || now_ms() - start < budget); i++) {
    bool evolve = i > o->trials / 2 || (budget && now_ms() - start > budget / 2);
    go = report(t, candidate(t, o->seed, i, evolve && !t->model), i, o->trials, 0);
  }
  for (int round = 0; go && i <= o->trials && (!budget || now_ms() - start < budget); round++)
    i = model_round(t, o, round, i, &go);
  t->res->stopped = !go;
  if (t->npop) t->res->best = t->pop[0].f, t->res->best_ms = t->pop[0].ms;
}

bool engine_tune(Engine *e, const PrimFunc *f, Arena *a, const TuneOptions *o, TuneProgress cb,
                 void *user, TuneResult *out, char *err, size_t n) {
  *out = (TuneResult){.best = f};
  if (!jit_available())
    return snprintf(err, n, "`:tune` needs the JIT: %s", jit_unavailable_reason()), false;
  (void)e;
  const char *times = getenv("RLY_TUNE_TIMES");
  Tuner t = {.a = a,
             .plain = f->unscheduled ? f->unscheduled : f,
             .res = out,
             .cb = cb,
             .user = user,
             .model = o->model_off ? NULL : cost_model_new(SCHED_NFEATURES),
             .synthetic = times && strcmp(times, "synthetic") == 0};
  int64_t sizes[64];
  for (int i = 0; i < 64; i++) sizes[i] = 7;
  out->flops = profile_prim_flops(t.plain, sizes);
  TirError te = {0};
  const JitKernel *k = jit_get(prim_to_run(t.plain), &te);
  bool ok = k && run_new(&t.ref, t.plain, err, n);
  if (!k) snprintf(err, n, "%s", te.msg);
  if (ok && !jit_run(k, t.ref.args, t.ref.f->nparams, &te))
    ok = false, snprintf(err, n, "%s", te.msg), run_free(&t.ref);
  if (ok) search(&t, o, f), run_free(&t.ref);
  cost_model_free(t.model), free(t.seen);
  return ok;
}

/* ───────────────────────── the database ───────────────────────── */

char *engine_tuning_path(const Engine *e) {
  const EngineOptions *o = engine_options(e);
  char buf[1100];
  if (o->tuning_log[0]) return strdup(o->tuning_log);
  if (!o->cache_dir[0]) return NULL;
  snprintf(buf, sizeof buf, "%s/tuning.txt", o->cache_dir);
  return strdup(buf);
}

/* "workload=<hash> (float32[64, 64], ...)" of f's unscheduled function. */
char *engine_tuning_workload(const PrimFunc *f) {
  const PrimFunc *plain = f->unscheduled ? f->unscheduled : f;
  PrimFunc anon = *plain;
  anon.name = "", anon.trace = NULL, anon.unscheduled = NULL, anon.lowered = NULL;
  StrBuf b = {0}, w = {0};
  print_prim_func_to(&b, &anon);
  sb_printf(&w, "workload=%016llx (", (unsigned long long)hash_bytes(b.data, b.len, 0x74756e65ull));
  free(sb_take(&b));
  for (int i = 0; i < plain->nparams; i++) {
    const Buffer *x = plain->params[i];
    sb_printf(&w, "%s%s[", i ? ", " : "", dtype_name(x->dtype));
    for (int d = 0; d < x->ndim; d++)
      if (x->dims[d].kind == DIM_CONST)
        sb_printf(&w, "%s%lld", d ? ", " : "", (long long)x->dims[d].value);
      else
        sb_printf(&w, "%s%s", d ? ", " : "", x->dims[d].name);
    sb_printf(&w, "]");
  }
  sb_printf(&w, ")");
  return sb_take(&w);
}

static void mkdirs(const char *path) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s", path);
  char *slash = strrchr(tmp, '/');
  if (!slash || slash == tmp) return;
  *slash = 0;
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') *p = 0, mkdir(tmp, 0755), *p = '/';
  mkdir(tmp, 0755);
}

bool engine_tuning_append(const Engine *e, const char *text, char *err, size_t n) {
  char *path = engine_tuning_path(e);
  FILE *fp = path ? (mkdirs(path), fopen(path, "a")) : NULL;
  bool ok = fp && fputs(text, fp) >= 0;
  if (fp && fclose(fp) != 0) ok = false;
  if (!ok)
    snprintf(err, n, "cannot write %s", path ? path : "the tuning database (no cache directory)");
  free(path);
  return ok;
}

bool engine_tuning_record(const Engine *e, const PrimFunc *best, double gflops, char *err,
                          size_t n) {
  char *path = engine_tuning_path(e), *w = engine_tuning_workload(best),
       *s = engine_sched_text(best);
  const char *target = jit_target_name();
  bool ok = path && s && target;
  FILE *fp = NULL;
  if (ok) mkdirs(path), fp = fopen(path, "a");
  if (ok && fp) {
    fprintf(fp, "record @%s %s\ntarget: %s\ngflops: %.3f\n%s", best->name, w, target, gflops, s);
    ok = fclose(fp) == 0;
  } else if (ok) {
    ok = false;
  }
  if (!ok)
    snprintf(err, n, "cannot write %s", path ? path : "the tuning database (no cache directory)");
  free(path), free(w), free(s);
  return ok;
}

char *engine_tuning_show(const Engine *e, int *count) {
  char *path = engine_tuning_path(e);
  const char *target = jit_target_name();
  FILE *fp = path ? fopen(path, "r") : NULL;
  StrBuf b = {0};
  TuneRecord r;
  *count = 0;
  sb_printf(&b, "%s", "");
  while (fp && target && tune_db_next(fp, &r)) {
    if (r.kind == TUNE_REC_SCHEDULE && strcmp(r.target, target) == 0) {
      sb_printf(&b, "record %s\n  %.3f GFLOP/s\n%s", r.head, r.gflops, r.sched.data);
      (*count)++;
    }
    free(sb_take(&r.sched));
  }
  if (fp) fclose(fp);
  free(path);
  return sb_take(&b);
}

/* The schedule text of the fastest record of f's workload on this target
 * (malloc'd, its `schedule @name` renamed to f's), or NULL. */
static char *lookup(const Engine *e, const PrimFunc *f) {
  char *path = engine_tuning_path(e), *w = engine_tuning_workload(f), *best = NULL;
  FILE *fp = path ? fopen(path, "r") : NULL;
  const char *target = fp && jit_module_found() ? jit_target_name() : NULL;
  if (!target && fp) fclose(fp), fp = NULL;
  double best_g = -1;
  TuneRecord r;
  while (fp && tune_db_next(fp, &r)) {
    char *text = sb_take(&r.sched);
    const char *brace = r.kind == TUNE_REC_SCHEDULE && text ? strchr(text, '{') : NULL;
    if (brace && strcmp(r.target, target) == 0 && strcmp(tune_db_workload(r.head), w) == 0 &&
        r.gflops > best_g) {
      free(best);
      StrBuf b = {0};
      sb_printf(&b, "schedule @%s %s", f->name, brace);
      best = sb_take(&b), best_g = r.gflops;
    }
    free(text);
  }
  if (fp) fclose(fp);
  free(path), free(w);
  return best;
}

/* Drops the diagnostics collected since `first` (a record that no longer
 * applies is not the user's error). */
static void drop_diags(DiagCtx *d, size_t first) {
  for (size_t i = first; i < d->n; i++) {
    if (d->items[i].level == DIAG_ERROR) d->nerrors--;
    if (d->items[i].level == DIAG_WARNING) d->nwarnings--;
    free(d->items[i].msg), free(d->items[i].hint);
  }
  d->n = first;
}

/* f scheduled by the text (registered in d): the scheduled function or NULL. */
static PrimFunc *apply_text(Engine *e, Module *m, Arena *a, DiagCtx *d, const PrimFunc *f,
                            char *text) {
  uint32_t file = diag_add_source(d, "<tuning-db>", text, strlen(text));
  Module *tmp = module_copy(m, a);
  PrimFunc *g = NULL;
  if (parse_module(tmp, d, file) &&
      engine_apply_schedules(tmp, d, engine_options(e)->verify_schedules)) {
    const PrimFunc *h = module_prim(tmp, f->name);
    if (h && h->unscheduled) g = (PrimFunc *)h;
  }
  module_free(tmp);
  return g;
}

void engine_tuning_apply(Engine *e, Module *m, const ParseResult *r, Arena *a, PtrVec *done) {
  if (!engine_options(e)->tuning_db) return;
  for (int i = 0; i < r->nitems; i++) {
    const ScriptItem *it = &r->items[i];
    if (it->kind != ITEM_DEF || it->def_kind != DEF_PRIM || it->schedule || !it->def_name) continue;
    const PrimFunc *f = module_prim(m, it->def_name);
    if (!f || f->trace) continue;
    char *text = lookup(e, f);
    if (!text) continue;
    DiagCtx *d = engine_diag(e);
    size_t first = d->n;
    PrimFunc *g = apply_text(e, m, a, d, f, text);
    free(text);
    drop_diags(d, first);
    if (!g) continue;
    module_add(m, (Def){.kind = DEF_PRIM, .u.prim = g});
    vec_push(done,
             arena_printf(a, "@%s from the tuning database (%d steps)", f->name, g->trace->n));
  }
}
