/* tune_kernel.c — `:tune` of a fused kernel by its compute rules' knobs
 * (engine/tune_kernel.h): the candidates (every combination of the knobs
 * its rules read, the defaults first, the rest shuffled by the seed), their
 * measurement with engine_tune's helpers, and the kernel records of the
 * tuning database, which the lowering's knob hook reads. */
#include "engine/tune_kernel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/profile.h"
#include "engine/tune_db.h"
#include "jit/jit.h"
#include "lower/lower.h"

enum { MAX_CANDS = 4096 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

/* ───────────────────────── the space ───────────────────────── */

struct KernelTask {
  Engine *e;
  JitCtx *jit, *prev; /* the candidates' kernels: a context of their own (not :kernels') */
  Arena *a;
  Lowerer *low;
  const Function *group;
  const PrimFunc *plain; /* lowered with the defaults */
  TuneRun ref;           /* its outputs on the random inputs */
  int nknobs, ids[KNOB_COUNT];
  int ncands, next;
  uint32_t *cands;        /* a candidate: the index of each knob's value, 4 bits each */
  const PrimFunc **tried; /* the distinct kernels measured so far (NULL: refused) */
  int ntried;
  KernelTuneResult res;
};

/* Enters the task's JIT context, with the engine's compile options. */
static void jit_enter(KernelTask *t) {
  const EngineOptions *o = engine_options(t->e);
  if (!t->jit) t->jit = jit_ctx_new();
  t->prev = jit_ctx_enter(t->jit);
  jit_set_opt_level(o->opt_level);
  jit_set_contract(o->fp_contract);
  jit_set_vector_math(o->fast_math && o->approx_math);
  jit_set_cache_dir(o->disk_cache && o->cache_dir[0] ? o->cache_dir : NULL);
  jit_set_threads(o->threads);
}

static void jit_leave(KernelTask *t) { jit_ctx_enter(t->prev); }

/* Candidate c's setting. */
static LowerKnobs setting(const KernelTask *t, uint32_t c) {
  LowerKnobs k = {0};
  for (int i = 0; i < t->nknobs; i++) {
    const KnobDef *d = knob_def((KnobId)t->ids[i]);
    knob_set(&k, (KnobId)t->ids[i], d->values[c >> (4 * i) & 15]);
  }
  return k;
}

/* Every combination (mixed radix), the defaults (all indices 0) first,
 * the others in the seed's order. */
static void make_space(KernelTask *t, uint64_t seed) {
  int n = 1;
  for (int i = 0; i < t->nknobs && n < MAX_CANDS; i++) n *= knob_def((KnobId)t->ids[i])->nvalues;
  if (n > MAX_CANDS) n = MAX_CANDS;
  t->cands = malloc(sizeof *t->cands * (size_t)n);
  t->tried = calloc((size_t)n, sizeof *t->tried);
  if (!t->cands || !t->tried) rly_oom();
  for (int c = 0; c < n; c++) {
    uint32_t code = 0;
    for (int i = 0, r = c; i < t->nknobs; i++) {
      int nv = knob_def((KnobId)t->ids[i])->nvalues;
      code |= (uint32_t)(r % nv) << (4 * i), r /= nv;
    }
    t->cands[c] = code;
  }
  for (int c = n - 1; c > 1; c--) {
    int j = 1 + (int)(mix(seed * 0x9E3779B97F4A7C15ull + (uint64_t)c) % (uint64_t)c);
    uint32_t x = t->cands[c];
    t->cands[c] = t->cands[j], t->cands[j] = x;
  }
  t->ncands = t->res.space = n;
}

KernelTask *kernel_task_new(Engine *e, const PrimFunc *kernel, Arena *a, uint64_t seed, char *err,
                            size_t n) {
  if (!jit_available())
    return snprintf(err, n, "`:tune` needs the JIT: %s", jit_unavailable_reason()), NULL;
  if (!kernel->group)
    return snprintf(err, n, "@%s is not a kernel of a fused function", kernel->name), NULL;
  KernelTask *t = calloc(1, sizeof *t);
  if (!t) rly_oom();
  t->e = e, t->a = a, t->group = kernel->group;
  t->low = lower_new(a, NULL, NULL);
  lower_set_fast_math(t->low, engine_options(e)->fast_math);
  uint32_t read = 0;
  const char *why = NULL;
  PrimFunc *plain = lower_with_knobs(t->low, t->group, NULL, &read, &why);
  if (plain) plain->name = kernel->name;
  t->plain = plain;
  if (!plain || !engine_tune_run_new(&t->ref, plain, err, n)) {
    if (!plain) snprintf(err, n, "@%s does not lower again: %s", kernel->name, why ? why : "?");
    return kernel_task_free(t), NULL;
  }
  TirError te = {0};
  jit_enter(t);
  const JitKernel *k = jit_get(plain, &te);
  bool ok = false;
  if (k) engine_tune_time(k, &t->ref, 0, &ok);
  jit_leave(t);
  if (!k) return snprintf(err, n, "%s", te.msg), kernel_task_free(t), NULL;
  if (!ok) return snprintf(err, n, "@%s does not run", kernel->name), kernel_task_free(t), NULL;
  for (int i = 0; i < KNOB_COUNT; i++)
    if (read >> i & 1) t->ids[t->nknobs++] = i;
  int64_t sizes[64];
  for (int i = 0; i < 64; i++) sizes[i] = 7;
  t->res.flops = profile_prim_flops(plain, sizes);
  t->res.start_ms = t->res.best_ms = -1;
  make_space(t, seed);
  return t;
}

void kernel_task_free(KernelTask *t) {
  if (!t) return;
  if (t->ref.f) engine_tune_run_free(&t->ref);
  if (t->low) lower_free(t->low);
  if (t->jit) jit_ctx_free(t->jit);
  free(t->cands), free(t->tried), free(t->res.wrong_msg);
  free(t);
}

const KernelTuneResult *kernel_task_result(const KernelTask *t) { return &t->res; }
const PrimFunc *kernel_task_plain(const KernelTask *t) { return t->plain; }

/* ───────────────────────── measuring ───────────────────────── */

/* The earlier candidate (1-based) f lowers the same as, or 0. */
static int same_as(const KernelTask *t, const PrimFunc *f) {
  PrimFunc x = *f;
  x.attrs = NULL;
  for (int i = 0; i < t->ntried; i++) {
    if (!t->tried[i]) continue;
    PrimFunc y = *t->tried[i];
    y.attrs = NULL;
    if (prim_func_equal(&x, &y)) return i + 1;
  }
  return 0;
}

/* f's median time, or -1 (tr says why). */
static double measure(KernelTask *t, const PrimFunc *f, KernelTrial *tr) {
  char err[512];
  TirError te = {0};
  const JitKernel *k = jit_get(f, &te);
  TuneRun r = {0};
  if (!k || !engine_tune_run_new(&r, f, err, sizeof err)) return tr->t.refused = true, -1;
  bool ok;
  double ms = engine_tune_time(k, &r, t->res.best_ms, &ok);
  bool same = ok && (f == t->plain || engine_tune_same(&r, &t->ref, err, sizeof err));
  engine_tune_run_free(&r);
  if (!ok) return tr->t.refused = true, -1;
  if (!same) {
    tr->t.wrong = true, t->res.wrong++;
    if (!t->res.wrong_msg) t->res.wrong_msg = strdup(err);
    return -1;
  }
  return ms;
}

/* Candidate number c (0-based in the space) measured and reported. */
static bool try_one(KernelTask *t, int c, int of, KernelProgress cb, void *user) {
  LowerKnobs k = setting(t, t->cands[c]);
  char text[512];
  KernelTrial tr = {.t = {.k = c, .n = of}, .knobs = knob_text(&k, text, sizeof text)};
  const PrimFunc *f = c == 0 ? t->plain : lower_with_knobs(t->low, t->group, &k, NULL, NULL);
  if (f && c) ((PrimFunc *)f)->name = t->plain->name;
  tr.same_as = f && c ? same_as(t, f) : 0;
  double ms = -1;
  if (!f) tr.t.refused = true, t->res.refused++;
  if (f && !tr.same_as) ms = measure(t, f, &tr);
  if (f && !tr.same_as && tr.t.refused) t->res.refused++;
  t->tried[t->ntried++] = tr.same_as ? NULL : f;
  if (ms >= 0) {
    t->res.measured++;
    if (c == 0) t->res.start_ms = ms;
    t->res.last_ms = ms;
    if (t->res.best_ms < 0 || ms < t->res.best_ms) t->res.best_ms = ms, t->res.best = k;
    tr.t.ms = ms, tr.t.gflops = t->res.flops > 0 ? t->res.flops / (ms * 1e6) : 0;
  }
  double b = t->res.best_ms;
  tr.t.best_gflops = b > 0 && t->res.flops > 0 ? t->res.flops / (b * 1e6) : 0;
  tr.t.refused_so_far = t->res.refused;
  return !cb || cb(user, &tr);
}

bool kernel_task_step(KernelTask *t, int trials, KernelProgress cb, void *user) {
  jit_enter(t);
  for (int done = 0; done < trials && t->next < t->ncands && !t->res.stopped;) {
    int before = t->res.measured + t->res.refused + t->res.wrong;
    if (!try_one(t, t->next, t->ncands, cb, user)) t->res.stopped = true;
    done += t->res.measured + t->res.refused + t->res.wrong > before;
    t->next++;
  }
  jit_leave(t);
  t->res.exhausted = t->next >= t->ncands;
  return !t->res.exhausted && !t->res.stopped;
}

/* The space of the defaults and k alone. */
static void pin_space(KernelTask *t, const LowerKnobs *k) {
  uint32_t code = 0;
  for (int i = 0; i < t->nknobs; i++) {
    const KnobDef *d = knob_def((KnobId)t->ids[i]);
    for (int j = 0; j < d->nvalues; j++)
      if (d->values[j] == knob_value(k, (KnobId)t->ids[i])) code |= (uint32_t)j << (4 * i);
  }
  t->cands[1] = code, t->ncands = t->res.space = 2;
}

/* Whether the rules of t's kernel read every knob k sets. */
static bool pin_applies(const KernelTask *t, const LowerKnobs *k) {
  uint32_t read = 0;
  for (int i = 0; i < t->nknobs; i++) read |= 1u << t->ids[i];
  return (k->set & ~read) == 0;
}

bool engine_tune_kernel(Engine *e, const PrimFunc *kernel, Arena *a, const TuneOptions *o,
                        const LowerKnobs *pin, KernelProgress cb, void *user, KernelTuneResult *out,
                        char *err, size_t n) {
  KernelTask *t = kernel_task_new(e, kernel, a, o->seed, err, n);
  if (!t) return false;
  if (pin && (!pin_applies(t, pin) || t->ncands < 2)) {
    snprintf(err, n, "its rules do not read every knob of the setting given");
    return kernel_task_free(t), false;
  }
  if (pin) pin_space(t, pin);
  double start = now_ms(), budget = o->minutes > 0 ? o->minutes * 60e3 : 0;
  int left = o->trials + 1; /* the defaults, then o->trials candidates */
  while (left > 0 && !t->res.stopped && (!budget || now_ms() - start < budget)) {
    int before = t->res.measured + t->res.refused + t->res.wrong;
    if (!kernel_task_step(t, 1, cb, user)) break;
    left -= t->res.measured + t->res.refused + t->res.wrong - before;
  }
  if (pin && t->res.measured == 2) t->res.best = *pin, t->res.best_ms = t->res.last_ms;
  if (t->res.best_ms > 0)
    t->res.recorded = kernel_task_record(t, t->res.record_err, sizeof t->res.record_err);
  *out = t->res, t->res.wrong_msg = NULL;
  kernel_task_free(t);
  return true;
}

/* ───────────────────────── the database ───────────────────────── */

bool kernel_task_record(KernelTask *t, char *err, size_t n) {
  err[0] = 0;
  const KernelTuneResult *r = &t->res;
  const char *target = jit_target_name();
  if (r->best_ms <= 0 || !target) return snprintf(err, n, "nothing measured"), false;
  char knobs[512], *w = engine_tuning_workload(t->plain);
  StrBuf b = {0};
  sb_printf(&b, "kernel @%s %s\ntarget: %s\ngflops: %.3f\nknobs: %s\n", t->plain->name, w, target,
            r->flops > 0 ? r->flops / (r->best_ms * 1e6) : 0,
            knob_text(&r->best, knobs, sizeof knobs));
  bool ok = engine_tuning_append(t->e, b.data, err, n);
  free(w), sb_free(&b);
  return ok;
}

/* This target's kernel records, read again when the file changed; one
 * cache for the process, under kmu (engines lower on several threads). */
typedef struct KCache {
  char path[1100];
  struct timespec mtime;
  off_t size;
  int n;
  TuneRecord *recs;
} KCache;
static KCache kcache;
static pthread_mutex_t kmu = PTHREAD_MUTEX_INITIALIZER;

static void kcache_load(const char *path, const struct stat *st) {
  free(kcache.recs);
  kcache = (KCache){.mtime = st->st_mtim, .size = st->st_size};
  snprintf(kcache.path, sizeof kcache.path, "%s", path);
  FILE *fp = fopen(path, "r");
  TuneRecord r;
  const char *target = NULL;
  int cap = 0;
  while (fp && tune_db_next(fp, &r)) {
    free(sb_take(&r.sched)); /* a prim function's schedule record */
    if (!target) target = jit_module_found() ? jit_target_name() : "";
    if (r.kind != TUNE_REC_KNOBS || !target || strcmp(r.target, target) != 0) continue;
    if (kcache.n == cap) {
      cap = cap ? 2 * cap : 8;
      kcache.recs = realloc(kcache.recs, sizeof *kcache.recs * (size_t)cap);
      if (!kcache.recs) rly_oom();
    }
    kcache.recs[kcache.n++] = r;
  }
  if (fp) fclose(fp);
}

/* The records of the database at path (none when there is no file). */
static const KCache *kcache_get(const char *path) {
  struct stat st;
  if (!path || stat(path, &st) != 0) return NULL;
  if (strcmp(kcache.path, path) != 0 || st.st_size != kcache.size ||
      st.st_mtim.tv_sec != kcache.mtime.tv_sec || st.st_mtim.tv_nsec != kcache.mtime.tv_nsec)
    kcache_load(path, &st);
  return &kcache;
}

bool engine_kernel_knobs(void *engine, const PrimFunc *plain, LowerKnobs *out) {
  const Engine *e = engine;
  if (!engine_options(e)->tuning_db) return false;
  char *path = engine_tuning_path(e), *w = NULL;
  pthread_mutex_lock(&kmu);
  const KCache *c = kcache_get(path);
  bool found = false;
  LowerKnobs k;
  if (c && c->n) w = engine_tuning_workload(plain);
  for (int i = 0; w && i < c->n; i++) /* the newest record applies */
    if (strcmp(tune_db_workload(c->recs[i].head), w) == 0 && knob_parse(c->recs[i].knobs, &k))
      found = true, *out = k;
  pthread_mutex_unlock(&kmu);
  free(path), free(w);
  return found && out->set;
}

char *engine_knobs_text(void) {
  StrBuf b = {0};
  for (int i = 0; i < KNOB_COUNT; i++) {
    const KnobDef *d = knob_def((KnobId)i);
    char name[64];
    snprintf(name, sizeof name, "%s.%s", d->rule, d->name);
    sb_printf(&b, "%-18s default %d, values", name, d->dflt);
    for (int j = 0; j < d->nvalues; j++) sb_printf(&b, "%s %d", j ? "," : "", d->values[j]);
    sb_printf(&b, ": %s\n", d->what);
  }
  return sb_take(&b);
}

char *engine_kernel_records_show(const Engine *e, int *count) {
  char *path = engine_tuning_path(e);
  StrBuf b = {0};
  sb_printf(&b, "%s", "");
  pthread_mutex_lock(&kmu);
  const KCache *c = kcache_get(path);
  *count = c ? c->n : 0;
  for (int i = 0; c && i < c->n; i++)
    sb_printf(&b, "kernel %s\n  %.3f GFLOP/s\n  knobs: %s\n", c->recs[i].head, c->recs[i].gflops,
              c->recs[i].knobs);
  pthread_mutex_unlock(&kmu);
  free(path);
  return sb_take(&b);
}
