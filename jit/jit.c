/* jit.c — the JIT loader in librly (jit.h): no LLVM here.
 *
 * On the first compile it dlopens rly-jit.so (searched at $RLY_JIT_MODULE,
 * beside the executable in jit/ and ../lib/rly/, then at the build-tree
 * path baked in by meson) and hands it the runtime's function table.
 *
 * Caches: Code entries (compiled machine code) keyed by a 128-bit hash of
 * the prim function's printed text without its name, the opt level and
 * contraction, shared by every engine of the process (under J_mu);
 * JitKernel entries per PrimFunc pointer (name, error sites, statistics)
 * pointing at a Code, in the engine's own JitCtx (current per thread, like
 * rt's context: see `struct JitCtx` below).  On disk, one file per Code key (plus the
 * LLVM version and target): a header with magic, key, length and checksum,
 * then the object code; anything that does not check out is recompiled and
 * rewritten (atomically, through a temporary file and rename).
 *
 * Contraction (a*b+c → fma) is on unless the prim function has the
 * attribute fp_contract=0 (or False), or jit_set_contract(false) was called
 * or RLY_JIT_CONTRACT=0 is set (the tests use these to compare bit for bit
 * with the interpreter).
 *
 * Ctrl-C during a compile: LLVM's passes cannot be stopped half way, so
 * the slow part of every compile (passes and emission, the module's
 * finish) runs on worker threads while the calling thread waits, polling
 * the interrupt flag every few milliseconds.  On Ctrl-C the caller stops
 * waiting and reports "interrupted" at once; the workers are abandoned,
 * not stopped: a compile under way finishes in the background and leaves
 * its object code in the ready list (so a later call of the same function
 * loads it), those not started are dropped.  Nothing is registered or
 * loaded by a worker (loading into ORC happens on the calling thread, at
 * the next jit_get), and a worker touches only its own LLVM context and
 * the ready list (under ready_mu), never the prim function, which may be
 * freed after the interrupt.  At exit the process waits for the compiles
 * still running (LLVM's globals must outlive them). */
#include "jit/jit.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir/tir_walk.h"
#include "jit/jit_config.h"
#include "rt/jit_abi.h"
#include "rt/pool.h"

typedef struct Code {
  uint64_t k1, k2; /* the key (see key_of) */
  RlyJitKernelFn fn;
  double compile_ms;
  bool from_disk;
  double load_ms;
  JitCompileStats st; /* where the compile's time went (zero from the disk) */
} Code;

struct JitKernel {
  const PrimFunc *f; /* NULL once forgotten (jit_forget_funcs) until jit_get hands a new copy */
  char *name;        /* f's name, kept when f is forgotten */
  Code *code;
  JitSite *sites;
  int nsites;
  bool *writes;
  bool *covers; /* per parameter: every element is stored, none is loaded */
  char *signature;
  JitCompileOpts opts;
  uint64_t calls;
  double total_ms;
};

/* What the process shares (under J_mu, recursive: the public functions
 * lock it and call each other): the loaded module (one LLVM per process),
 * the compiled code keyed by the prim function's text and the compile
 * options (equal keys are equal code, whichever engine asked), and the
 * object code compiled ahead (also under ready_mu: workers add to it). */
static pthread_mutex_t J_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct {
  bool tried;
  void *handle;
  const RlyJitModule *mod;
  uint64_t mod_hash;    /* of the module file: a rebuilt code generator misses the disk cache */
  char why[RT_ERR_LEN]; /* why the module is unavailable */
  char module_path[PATH_MAX]; /* jit_set_module_path; "": beside the executable (first load wins) */
  Code **codes;
  int ncodes, capcodes;
  struct Ready **ready; /* object code compiled ahead (jit_precompile), not loaded yet */
  int nready, capready;
} J;

/* What each engine has of its own (jit.h's JitCtx): the compile options,
 * the disk cache, its kernels (entries per PrimFunc of its IR) and the run
 * hook.  Current per thread, as rt's context (rt/rt.h): the engine enters
 * it on every call; a thread that entered none uses `default_cx`. */
struct JitCtx {
  int opt_level;
  bool no_contract;
  bool vector_math;         /* jit_set_vector_math */
  char cache_dir[PATH_MAX]; /* jit_set_cache_dir; "": no disk cache */
  JitKernel **kernels;
  int nkernels, capkernels;
  JitRunHook hook; /* jit_set_run_hook */
  void *hook_user;
};
static JitCtx default_cx = {.opt_level = 2};
static _Thread_local JitCtx *cur;

static JitCtx *cx(void) { return cur ? cur : &default_cx; }

/* Object code of a key compiled ahead of its first call. */
typedef struct Ready {
  uint64_t k1, k2;
  void *obj;
  size_t len;
  double compile_ms;
  JitCompileStats st;
} Ready;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void set_err(TirError *e, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(TirError *e, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->span = sp, e->param = -1;
}

/* ─────────────────────────── the host table ─────────────────────────── */

static void *host_alloc(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > rt_max_bytes()) return NULL;
  size_t n = ((size_t)bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, n ? n : 64);
  if (p) memset(p, 0, n);
  return p;
}

static void *host_alloc_raw(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > rt_max_bytes()) return NULL;
  size_t n = ((size_t)bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

static void host_free(void *p) { free(p); }
/* Every chunk of a parallel loop sees the request: the flag stays set. */
static int32_t host_poll(void) { return rt_interrupt_flag != 0; }
static double host_h2d(uint32_t bits) { return half_to_float((uint16_t)bits); }
static uint32_t host_d2h(double v) { return rt_double_to_half(v); }

static const RlyJitHost host = {RLY_JIT_ABI_VERSION,
                                rly_pool_parallel_for,
                                host_alloc,
                                host_alloc_raw,
                                host_free,
                                host_poll,
                                host_h2d,
                                host_d2h};

/* ─────────────────────────── loading the module ─────────────────────────── */

/* A hash of the file's bytes (0 if unreadable). */
static uint64_t file_hash(const char *path) {
  size_t len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  uint64_t h = 0x6a09e667f3bcc908ull;
  char buf[65536];
  while ((len = fread(buf, 1, sizeof buf, fp)) > 0) h = hash_bytes(buf, len, h);
  fclose(fp);
  return h;
}

/* Loads the JIT module at path and checks its ABI version; on failure
 * J.why says why, for the message when no candidate path works. */
static bool try_open(const char *path) {
  if (!path || !*path || access(path, R_OK) != 0) return false;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(J.why, sizeof J.why, "cannot load %s: %s", path, dlerror());
    return false;
  }
  RlyJitInitFn init = (RlyJitInitFn)(uintptr_t)dlsym(h, "rlyjit_init");
  const RlyJitModule *m = init ? init(&host, J.why, sizeof J.why) : NULL;
  if (!init) snprintf(J.why, sizeof J.why, "%s has no rlyjit_init", path);
  if (m && m->abi_version != RLY_JIT_ABI_VERSION) {
    snprintf(J.why, sizeof J.why, "%s: ABI version %d, expected %d", path, m->abi_version,
             RLY_JIT_ABI_VERSION);
    m = NULL;
  }
  if (!m) {
    dlclose(h);
    return false;
  }
  J.handle = h, J.mod = m, J.mod_hash = file_hash(path);
  return true;
}

/* Beside the executable: <dir>/jit/rly-jit.so (build tree), <dir>/../lib/rly/rly-jit.so. */
static bool open_beside_exe(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return false;
  *slash = 0;
  static const char *const rel[] = {"/jit/rly-jit.so", "/../lib/rly/rly-jit.so"};
  for (int i = 0; i < 2; i++) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s%s", exe, rel[i]);
    if (try_open(path)) return true;
  }
  return false;
}

static bool load_module_locked(void) {
  if (J.tried) return J.mod != NULL;
  J.tried = true;
  snprintf(J.why, sizeof J.why,
           "the JIT module rly-jit.so was not found (beside the executable or in %s)",
           RLY_JIT_BUILD_PATH);
  if (J.module_path[0]) {
    snprintf(J.why, sizeof J.why, "the JIT module %.400s (RLY_JIT_MODULE) was not found",
             J.module_path);
    return try_open(J.module_path);
  }
  return open_beside_exe() || try_open(RLY_JIT_BUILD_PATH);
}

static bool load_module(void) {
  pthread_mutex_lock(&J_mu);
  bool ok = load_module_locked();
  pthread_mutex_unlock(&J_mu);
  return ok;
}

bool jit_available(void) { return load_module(); }

/* The module's file exists where load_module would look: no dlopen, so
 * start-up paths can ask without loading LLVM. */
static bool module_found_locked(void) {
  if (J.tried) return J.mod != NULL;
  if (J.module_path[0]) return access(J.module_path, R_OK) == 0;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    static const char *const rel[] = {"/jit/rly-jit.so", "/../lib/rly/rly-jit.so"};
    for (int i = 0; slash && i < 2; i++) {
      char path[PATH_MAX + 64];
      snprintf(path, sizeof path, "%s%s", exe, rel[i]);
      if (access(path, R_OK) == 0) return true;
    }
  }
  return access(RLY_JIT_BUILD_PATH, R_OK) == 0;
}

const char *jit_unavailable_reason(void) {
  pthread_mutex_lock(&J_mu);
  const char *why = J.mod ? NULL : J.why; /* J.why is written only before the module loads */
  pthread_mutex_unlock(&J_mu);
  return why;
}

/* The compile options: a change makes prepared kernels stale (rt/exec.h). */
static void set_flag(bool *field, bool v) {
  if (*field != v) rt_executor_changed();
  *field = v;
}

void jit_set_opt_level(int level) {
  level = level < 0 ? 0 : level > 3 ? 3 : level;
  if (cx()->opt_level != level) rt_executor_changed();
  cx()->opt_level = level;
}
int jit_opt_level(void) { return cx()->opt_level; }
void jit_set_contract(bool on) { set_flag(&cx()->no_contract, !on); }
void jit_set_vector_math(bool on) { set_flag(&cx()->vector_math, on); }
void jit_set_threads(int n) { rly_pool_set_threads(n); }

void jit_set_module_path(const char *path) {
  pthread_mutex_lock(&J_mu);
  snprintf(J.module_path, sizeof J.module_path, "%s", path ? path : "");
  pthread_mutex_unlock(&J_mu);
}

void jit_set_cache_dir(const char *dir) {
  snprintf(cx()->cache_dir, sizeof cx()->cache_dir, "%s", dir ? dir : "");
}

/* ─────────────────────────── keys ─────────────────────────── */

static bool contract_of(const PrimFunc *f) {
  if (cx()->no_contract) return false;
  return prim_attr_flag(f, "fp_contract", true);
}

/* f's text without `prim @name`, so equal functions under other names share code. */
static void key_of(const PrimFunc *f, const JitCompileOpts *o, uint64_t *k1, uint64_t *k2) {
  StrBuf b = {0};
  print_prim_func_to(&b, f);
  const char *t = b.data ? b.data : "";
  const char *paren = strchr(t, '(');
  if (paren) t = paren;
  size_t n = strlen(t);
  uint64_t salt = (uint64_t)o->opt_level * 2 + o->contract + ((uint64_t)o->vector_math << 4) +
                  ((uint64_t)RLY_JIT_ABI_VERSION << 8);
  *k1 = hash_mix(hash_bytes(t, n, 0x9e3779b97f4a7c15ull), salt);
  *k2 = hash_mix(hash_bytes(t, n, 0xc2b2ae3d27d4eb4full), salt ^ n);
  sb_free(&b);
}

static JitCompileOpts opts_for(const PrimFunc *f) {
  return (JitCompileOpts){cx()->opt_level, contract_of(f), cx()->vector_math};
}

static void sym_name(char *buf, size_t n, uint64_t k1, uint64_t k2) {
  snprintf(buf, n, "rly_k_%016llx%016llx", (unsigned long long)k1, (unsigned long long)k2);
}

/* ─────────────────────────── the disk cache ─────────────────────────── */

enum { CACHE_MAGIC_LEN = 8 };
static const char cache_magic[CACHE_MAGIC_LEN] = {'R', 'L', 'Y', 'J', 'I', 'T', 'O', '1'};

typedef struct CacheHeader {
  char magic[CACHE_MAGIC_LEN];
  uint64_t k1, k2, target_hash, len, checksum;
} CacheHeader;

static bool cache_dir(char *buf, size_t n) {
  if (!cx()->cache_dir[0]) return false;
  snprintf(buf, n, "%s", cx()->cache_dir);
  return true;
}

static uint64_t target_hash(void) {
  uint64_t h = hash_bytes(J.mod->target, strlen(J.mod->target), 0x243f6a8885a308d3ull ^ J.mod_hash);
  return hash_bytes(J.mod->passes, strlen(J.mod->passes), h);
}

/* The file of a key: the target and the code generator are hashed in, so
 * another CPU, LLVM or build of rly-jit.so misses. */
static bool cache_path(char *buf, size_t n, uint64_t k1, uint64_t k2) {
  char dir[PATH_MAX];
  if (!cache_dir(dir, sizeof dir)) return false;
  uint64_t t = target_hash();
  snprintf(buf, n, "%s/%016llx%016llx-%08llx.o", dir, (unsigned long long)k1,
           (unsigned long long)k2, (unsigned long long)(t & 0xffffffffu));
  return true;
}

/* Reads a cached object file; anything that does not check out (magic,
 * key, target, length, trailing bytes, checksum) is a miss, never an error. */
static void *cache_read(uint64_t k1, uint64_t k2, size_t *len) {
  char path[PATH_MAX + 64];
  if (!cache_path(path, sizeof path, k1, k2)) return NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  CacheHeader h;
  void *data = NULL;
  bool ok = fread(&h, sizeof h, 1, fp) == 1 && memcmp(h.magic, cache_magic, CACHE_MAGIC_LEN) == 0 &&
            h.k1 == k1 && h.k2 == k2 && h.target_hash == target_hash() && h.len > 0 &&
            h.len < ((uint64_t)1 << 32);
  if (ok && (data = malloc(h.len)) != NULL) {
    ok = fread(data, 1, h.len, fp) == h.len && fgetc(fp) == EOF &&
         hash_bytes(data, h.len, 0x3c6ef372fe94f82bull) == h.checksum;
  }
  fclose(fp);
  if (!ok || !data) {
    free(data);
    return NULL;
  }
  *len = h.len;
  return data;
}

static void mkdirs(const char *dir) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') *p = 0, mkdir(tmp, 0755), *p = '/';
  mkdir(tmp, 0755);
}

static void cache_write(uint64_t k1, uint64_t k2, const void *obj, size_t len) {
  char path[PATH_MAX + 64], dir[PATH_MAX], tmp[PATH_MAX + 96];
  if (!cache_path(path, sizeof path, k1, k2) || !cache_dir(dir, sizeof dir)) return;
  mkdirs(dir);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *fp = fopen(tmp, "wb");
  if (!fp) return;
  CacheHeader h = {.k1 = k1, .k2 = k2, .target_hash = target_hash(), .len = len};
  memcpy(h.magic, cache_magic, CACHE_MAGIC_LEN);
  h.checksum = hash_bytes(obj, len, 0x3c6ef372fe94f82bull);
  bool ok = fwrite(&h, sizeof h, 1, fp) == 1 && fwrite(obj, 1, len, fp) == len;
  ok = fclose(fp) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* ─────────────────────────── compiling ─────────────────────────── */

static Code *find_code(uint64_t k1, uint64_t k2) {
  for (int i = 0; i < J.ncodes; i++)
    if (J.codes[i]->k1 == k1 && J.codes[i]->k2 == k2) return J.codes[i];
  return NULL;
}

static void push(void ***items, int *n, int *cap, void *x) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    *items = realloc(*items, sizeof(void *) * (size_t)*cap);
    if (!*items) rly_oom();
  }
  (*items)[(*n)++] = x;
}

/* ready_mu guards J.ready (workers add to it) and the count of workers. */
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int nworkers;         /* compile workers alive, under ready_mu */
static atomic_bool quitting; /* jit_quiesce: workers start nothing more */

static void add_ready(uint64_t k1, uint64_t k2, void *obj, size_t len, double ms,
                      const JitCompileStats *st) {
  Ready *r = malloc(sizeof *r);
  if (!r) rly_oom();
  *r = (Ready){k1, k2, obj, len, ms, *st};
  push((void ***)&J.ready, &J.nready, &J.capready, r);
}

/* The object code compiled ahead for a key (removed from the list), or NULL. */
static void *take_ready(uint64_t k1, uint64_t k2, size_t *len, double *ms, JitCompileStats *st) {
  void *obj = NULL;
  pthread_mutex_lock(&ready_mu);
  for (int i = 0; i < J.nready && !obj; i++) {
    Ready *r = J.ready[i];
    if (r->k1 != k1 || r->k2 != k2) continue;
    obj = r->obj;
    *len = r->len, *ms = r->compile_ms, *st = r->st;
    J.ready[i] = J.ready[--J.nready];
    free(r);
  }
  pthread_mutex_unlock(&ready_mu);
  return obj;
}

/* ─────────────────── compiling on workers (Ctrl-C) ─────────────────── */

/* One unit to finish: begun on the calling thread, finished by a worker. */
typedef struct Unit {
  uint64_t k1, k2;
  void *unit;
} Unit;

/* A batch of units shared by the caller and its workers; freed by the
 * last one to leave it (refs, under ready_mu). */
typedef struct Batch {
  Unit *units;
  int n, refs, done;
  atomic_int next;
  atomic_bool stop; /* the caller stopped waiting: drop units not started */
  char err[RT_ERR_LEN];
} Batch;

/* Keys begun and not finished or dropped yet (under ready_mu): a call of
 * a function whose compile was abandoned waits for it instead of
 * compiling it again. */
static struct {
  uint64_t (*keys)[2];
  int n, cap;
} flight;

static void flight_add(uint64_t k1, uint64_t k2) {
  if (flight.n == flight.cap) {
    flight.cap = flight.cap ? 2 * flight.cap : 16;
    flight.keys = realloc(flight.keys, sizeof *flight.keys * (size_t)flight.cap);
    if (!flight.keys) rly_oom();
  }
  flight.keys[flight.n][0] = k1, flight.keys[flight.n++][1] = k2;
}

static int flight_find(uint64_t k1, uint64_t k2) {
  for (int i = 0; i < flight.n; i++)
    if (flight.keys[i][0] == k1 && flight.keys[i][1] == k2) return i;
  return -1;
}

static void flight_del(uint64_t k1, uint64_t k2) {
  int i = flight_find(k1, k2);
  if (i >= 0) memcpy(flight.keys[i], flight.keys[--flight.n], sizeof flight.keys[i]);
}

/* Whether object code for the key is ready or being compiled. */
static bool ready_has(uint64_t k1, uint64_t k2) {
  pthread_mutex_lock(&ready_mu);
  bool ready = flight_find(k1, k2) >= 0;
  for (int i = 0; i < J.nready; i++)
    ready = ready || (J.ready[i]->k1 == k1 && J.ready[i]->k2 == k2);
  pthread_mutex_unlock(&ready_mu);
  return ready;
}

static void batch_leave(Batch *b) {
  if (--b->refs > 0) return;
  for (int i = atomic_load(&b->next); i < b->n; i++)
    if (i >= 0) J.mod->discard(b->units[i].unit), flight_del(b->units[i].k1, b->units[i].k2);
  free(b->units), free(b);
}

/* Until key (k1, k2) is no longer being compiled (under ready_mu); false
 * on Ctrl-C. */
static bool wait_key(uint64_t k1, uint64_t k2) {
  while (flight_find(k1, k2) >= 0) {
    if (rt_interrupt_flag) return false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 5000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&ready_cv, &ready_mu, &ts);
  }
  return true;
}

static void *batch_worker(void *arg) {
  Batch *b = arg;
  for (int i; !atomic_load(&b->stop) && !atomic_load(&quitting) &&
              (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
    Unit *u = &b->units[i];
    void *obj = NULL;
    size_t len = 0;
    char err[RT_ERR_LEN];
    JitCompileStats st = {0};
    double t0 = now_ms();
    bool ok = J.mod->finish(u->unit, &obj, &len, &st, err, sizeof err);
    pthread_mutex_lock(&ready_mu);
    if (ok) add_ready(u->k1, u->k2, obj, len, now_ms() - t0 + st.codegen_ms, &st);
    if (!ok && !b->err[0]) snprintf(b->err, sizeof b->err, "%s", err);
    flight_del(u->k1, u->k2);
    b->done++;
    pthread_cond_broadcast(&ready_cv);
    pthread_mutex_unlock(&ready_mu);
  }
  pthread_mutex_lock(&ready_mu);
  batch_leave(b);
  nworkers--;
  pthread_cond_broadcast(&ready_cv);
  pthread_mutex_unlock(&ready_mu);
  return NULL;
}

/* The compiles still running finish; those not started are dropped.  Run
 * before exit (LLVM's statics, some registered after this handler, must
 * outlive the workers: the REPL calls it at its end) and at exit. */
void jit_quiesce(void) {
  atomic_store(&quitting, true);
  pthread_mutex_lock(&ready_mu);
  while (nworkers > 0) pthread_cond_wait(&ready_cv, &ready_mu);
  pthread_mutex_unlock(&ready_mu);
  atomic_store(&quitting, false);
}

static void wait_workers(void) { jit_quiesce(); }

/* Starts up to nt detached workers on b (under ready_mu: refs). */
static void batch_start(Batch *b, int nt) {
  static bool registered;
  if (!registered) registered = true, atexit(wait_workers);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  for (int i = 0; i < nt; i++) {
    pthread_t t;
    b->refs++, nworkers++;
    if (pthread_create(&t, &at, batch_worker, b) == 0) continue;
    b->refs--, nworkers--;
    break;
  }
  pthread_attr_destroy(&at);
}

/* Finishes b's units on nt workers; false (at once) on Ctrl-C, leaving
 * them to finish in the background.  The caller's reference is dropped. */
static bool batch_run(Batch *b, int nt, char *err, size_t n) {
  pthread_mutex_lock(&ready_mu);
  for (int i = 0; i < b->n; i++) flight_add(b->units[i].k1, b->units[i].k2);
  b->refs = 1;
  batch_start(b, nt < 1 ? 1 : nt);
  if (b->refs == 1) { /* no thread: finish here */
    pthread_mutex_unlock(&ready_mu);
    batch_worker((b->refs++, nworkers++, b));
    pthread_mutex_lock(&ready_mu);
  }
  bool stopped = false;
  for (int i = 0; i < b->n && !stopped; i++) stopped = !wait_key(b->units[i].k1, b->units[i].k2);
  atomic_store(&b->stop, stopped);
  snprintf(err, n, "%s", b->err);
  batch_leave(b);
  pthread_mutex_unlock(&ready_mu);
  return !stopped;
}

/* Compiles f into the ready list on a worker; false with err on a failure
 * or Ctrl-C (then the compile goes on in the background). */
static bool compile_one(const PrimFunc *f, const char *sym, const JitCompileOpts *o, uint64_t k1,
                        uint64_t k2, TirError *err) {
  pthread_mutex_lock(&ready_mu);
  bool waited = flight_find(k1, k2) >= 0, stopped = waited && !wait_key(k1, k2);
  pthread_mutex_unlock(&ready_mu);
  if (stopped) return set_err(err, f->span, "@%s: interrupted", f->name), false;
  if (waited && ready_has(k1, k2)) return true;
  void *unit = J.mod->begin(f, sym, o, err->msg, sizeof err->msg);
  if (!unit) return false;
  Batch *b = calloc(1, sizeof *b);
  Unit *u = malloc(sizeof *u);
  if (!b || !u) rly_oom();
  *u = (Unit){k1, k2, unit};
  b->units = u, b->n = 1;
  if (batch_run(b, 1, err->msg, sizeof err->msg)) return !err->msg[0];
  set_err(err, f->span, "@%s: interrupted", f->name);
  return false;
}

static Code *build_code(const PrimFunc *f, const JitCompileOpts *o, uint64_t k1, uint64_t k2,
                        TirError *err) {
  char sym[64];
  sym_name(sym, sizeof sym, k1, k2);
  double t0 = now_ms();
  size_t len = 0;
  double ahead_ms = -1;
  JitCompileStats st = {0};
  void *obj = take_ready(k1, k2, &len, &ahead_ms, &st);
  if (!obj) obj = cache_read(k1, k2, &len);
  bool from_disk = obj != NULL && ahead_ms < 0;
  if (!obj && !compile_one(f, sym, o, k1, k2, err)) return NULL;
  if (!obj) obj = take_ready(k1, k2, &len, &ahead_ms, &st);
  if (!obj) return set_err(err, f->span, "@%s: interrupted", f->name), NULL;
  double t1 = now_ms();
  void *fn = J.mod->load(obj, len, sym, err->msg, sizeof err->msg);
  if (fn && !from_disk) cache_write(k1, k2, obj, len);
  free(obj);
  if (!fn) return NULL;
  Code *c = calloc(1, sizeof *c);
  if (!c) rly_oom();
  c->k1 = k1, c->k2 = k2, c->fn = (RlyJitKernelFn)(uintptr_t)fn, c->from_disk = from_disk;
  c->compile_ms = from_disk ? 0 : ahead_ms >= 0 ? ahead_ms : now_ms() - t0;
  c->load_ms = from_disk ? now_ms() - t0 : now_ms() - t1;
  c->st = st;
  push((void ***)&J.codes, &J.ncodes, &J.capcodes, c);
  return c;
}

/* Parameters f stores into (by Buffer pointer, else by name as the
 * interpreter resolves them). */
typedef struct Writes {
  const PrimFunc *f;
  bool *w;
} Writes;

static void mark_write(const Writes *x, const Buffer *b) {
  for (int i = 0; i < x->f->nparams; i++)
    if (x->f->params[i] == b) {
      x->w[i] = true;
      return;
    }
  for (int i = x->f->nparams; i-- > 0;)
    if (strcmp(x->f->params[i]->name, b->name) == 0) {
      x->w[i] = true;
      return;
    }
}

static bool write_stmt(void *ctx, const Stmt *s) {
  if (s->kind == ST_STORE) mark_write(ctx, s->u.store.buf);
  return true;
}

static bool no_expr(void *ctx, const PrimExpr *e) { return false; } /* stores hold none */

static void mark_writes(const PrimFunc *f, bool *w) {
  Writes x = {f, w};
  TirVisitor v = {write_stmt, no_expr, &x};
  tir_walk(f->body, &v);
}

static void buf_sig(StrBuf *b, const Buffer *p) {
  sb_printf(b, "%s[", dtype_name(p->dtype));
  for (int d = 0; d < p->ndim; d++) {
    const Dim *x = &p->dims[d];
    if (d) sb_puts(b, ", ");
    if (x->kind == DIM_CONST)
      sb_printf(b, "%lld", (long long)x->value);
    else
      sb_puts(b, x->kind == DIM_VAR ? x->name : "?");
  }
  sb_putc(b, ']');
}

/* "(inputs) -> outputs": the outputs are the trailing parameters it writes. */
static char *signature_of(const PrimFunc *f, const bool *writes) {
  int nout = 0;
  while (nout < f->nparams && writes[f->nparams - 1 - nout]) nout++;
  if (nout == 0 && f->nparams > 0) nout = 1;
  StrBuf b = {0};
  sb_putc(&b, '(');
  for (int i = 0; i < f->nparams - nout; i++) {
    if (i) sb_puts(&b, ", ");
    buf_sig(&b, f->params[i]);
  }
  sb_puts(&b, ") -> ");
  if (nout > 1) sb_putc(&b, '(');
  for (int i = f->nparams - nout; i < f->nparams; i++) {
    if (i > f->nparams - nout) sb_puts(&b, ", ");
    buf_sig(&b, f->params[i]);
  }
  if (nout > 1) sb_putc(&b, ')');
  return sb_take(&b);
}

/* ─────────────────────── outputs written in full ─────────────────────── */

static bool same_buf(const Buffer *a, const Buffer *b) {
  return a == b || strcmp(a->name, b->name) == 0;
}

/* Does any expression under s load from b?  An output that is never read
 * back may skip its zero fill when the kernel writes all of it. */
typedef struct Loads {
  const Buffer *b;
  bool found;
} Loads;

static bool load_expr(void *ctx, const PrimExpr *e) {
  Loads *l = ctx;
  if (e->kind == PE_LOAD && same_buf(e->u.load.buf, l->b)) l->found = true;
  return !l->found;
}

static bool load_stmt(void *ctx, const Stmt *s) { return !((Loads *)ctx)->found; }

static bool stmt_loads(const Stmt *s, const Buffer *b) {
  Loads l = {b, false};
  TirVisitor v = {load_stmt, load_expr, &l};
  tir_walk(s, &v);
  return l.found;
}

/* Loop variables in scope with their extents (loops from 0). */
typedef struct Extent {
  const TirVar *var;
  const PrimExpr *hi;
} Extent;

static bool extent_is_dim(const PrimExpr *hi, const Dim *d) {
  if (d->kind == DIM_CONST) return hi->kind == PE_INT && hi->u.i == d->value;
  return d->kind == DIM_VAR && hi->kind == PE_VAR && hi->u.var->is_size &&
         strcmp(hi->u.var->name, d->name) == 0;
}

/* Whether s unconditionally stores b[v1, ..., vk] for loop variables
 * covering every dimension. */
static bool covers(const Stmt *s, const Buffer *b, Extent *ex, int n) {
  if (!s || n > 32) return false;
  switch (s->kind) {
    case ST_SEQ:
      for (int i = 0; i < s->u.seq.n; i++)
        if (covers(s->u.seq.items[i], b, ex, n)) return true;
      return false;
    case ST_FOR: {
      int m = n;
      for (int i = 0; i < s->u.for_.nvars; i++) /* a loop from a begin skips 0..begin-1 */
        if (tir_for_lo(s, i)) return false;
      for (int i = 0; i < s->u.for_.nvars && m < 32; i++)
        ex[m++] = (Extent){s->u.for_.vars[i], s->u.for_.hi[i]};
      return covers(s->u.for_.body, b, ex, m);
    }
    case ST_BLOCK: {
      int m = n;
      for (int i = 0; i < s->u.block.niters && m < 32; i++) {
        const IterVar *it = &s->u.block.iters[i];
        if (it->reduce || !it->binding || it->binding->kind != PE_VAR) continue;
        for (int j = 0; j < n; j++)
          if (ex[j].var == it->binding->u.var) {
            ex[m++] = (Extent){it->var, ex[j].hi};
            break;
          }
      }
      return covers(s->u.block.body, b, ex, m);
    }
    case ST_STORE: {
      if (!same_buf(s->u.store.buf, b) || s->u.store.n != b->ndim) return false;
      const TirVar *used[TENSOR_MAX_RANK];
      for (int d = 0; d < b->ndim; d++) {
        const PrimExpr *x = s->u.store.idx[d];
        if (x->kind != PE_VAR) return false;
        int j = n;
        while (j-- > 0 && ex[j].var != x->u.var) {
        }
        if (j < 0 || !extent_is_dim(ex[j].hi, &b->dims[d])) return false;
        for (int e = 0; e < d; e++)
          if (used[e] == x->u.var) return false;
        used[d] = x->u.var;
      }
      return true;
    }
    default:
      return false;
  }
}

/* A kernel entry for f over compiled code c, with what callers need to
 * know per parameter: written, and written in full without being read. */
static JitKernel *new_kernel(const PrimFunc *f, Code *c) {
  JitKernel *k = calloc(1, sizeof *k);
  if (!k) rly_oom();
  k->f = f, k->code = c;
  k->name = strdup(f->name);
  if (!k->name) rly_oom();
  k->sites = jit_sites(f, &k->nsites);
  k->writes = calloc((size_t)f->nparams + 1, sizeof *k->writes);
  if (!k->writes) rly_oom();
  mark_writes(f, k->writes);
  k->covers = calloc((size_t)f->nparams + 1, sizeof *k->covers);
  if (!k->covers) rly_oom();
  for (int i = 0; i < f->nparams; i++) {
    Extent ex[32];
    k->covers[i] = k->writes[i] && f->params[i]->ndim <= TENSOR_MAX_RANK &&
                   !stmt_loads(f->body, f->params[i]) && covers(f->body, f->params[i], ex, 0);
  }
  /* The lowering knows more than the analysis above (a blocked convolution's
   * tiles, an epilogue fused into a product's store). */
  if (f->out_whole && f->nparams > 0) k->covers[f->nparams - 1] = k->writes[f->nparams - 1];
  k->signature = signature_of(f, k->writes);
  push((void ***)&cx()->kernels, &cx()->nkernels, &cx()->capkernels, k);
  return k;
}

/* The kernel for f: the entry for this PrimFunc, else shared code with the
 * same key (memory or disk cache), else a fresh compile.  A re-lowered
 * copy of a known kernel takes over its entry. */
static const JitKernel *get_locked(const PrimFunc *f, TirError *err) {
  err->msg[0] = 0, err->param = -1, err->span = f->span;
  JitCompileOpts o = opts_for(f);
  for (int i = 0; i < cx()->nkernels; i++) {
    JitKernel *k = cx()->kernels[i];
    if (k->f == f && k->opts.opt_level == o.opt_level && k->opts.contract == o.contract &&
        k->opts.vector_math == o.vector_math)
      return k;
  }
  if (!load_module()) return set_err(err, f->span, "%s", J.why), NULL;
  uint64_t k1, k2;
  key_of(f, &o, &k1, &k2);
  Code *c = find_code(k1, k2);
  for (int i = 0; c && i < cx()->nkernels; i++) { /* a re-lowered copy of a known kernel */
    JitKernel *k = cx()->kernels[i];
    if (k->code != c || strcmp(k->name, f->name) != 0) continue;
    free(k->sites);
    k->f = f, k->sites = jit_sites(f, &k->nsites), k->opts = o;
    return k;
  }
  if (!c && !(c = build_code(f, &o, k1, k2, err))) return NULL;
  JitKernel *k = new_kernel(f, c);
  k->opts = o;
  return k;
}

bool jit_writes_param(const JitKernel *k, int i) {
  return i >= 0 && i < k->f->nparams && k->writes[i];
}

bool jit_writes_all_of_param(const JitKernel *k, int i) {
  return i >= 0 && i < k->f->nparams && k->covers[i];
}

/* ─────────────────────────── running ─────────────────────────── */

/* The interpreter's message for a kernel's error. */
static void kernel_error(const JitKernel *k, int32_t rc, const RlyJitCtx *ctx, TirError *err) {
  const char *name = k->name;
  const JitSite *s = ctx->site >= 0 && ctx->site < k->nsites ? &k->sites[ctx->site] : NULL;
  Span sp = s ? s->span : k->f->span;
  switch (rc) {
    case JIT_E_BOUNDS:
      set_err(err, sp, "@%s: index %lld out of bounds for %%%s dimension %lld (size %lld)", name,
              (long long)ctx->a, s && s->buf ? s->buf->name : "?", (long long)ctx->b,
              (long long)ctx->c);
      return;
    case JIT_E_DIV0:
      set_err(err, sp, "@%s: integer division by zero", name);
      return;
    case JIT_E_ALLOC:
      set_err(err, sp, "@%s: alloc %%%s: cannot allocate %lld bytes", name,
              s && s->buf ? s->buf->name : "?", (long long)ctx->a);
      return;
    case JIT_E_INTERRUPT:
      set_err(err, sp, "@%s: interrupted", name);
      return;
    default:
      set_err(err, sp, "@%s: kernel failed (code %d)", name, (int)rc);
      return;
  }
}

/* Cases the kernel's assumptions exclude run on the interpreter: sizes
 * beyond 2^40 (the bounds proofs assume less) and written parameters
 * sharing memory with another parameter (kernels assume no aliasing). */
static bool needs_interpreter(const JitKernel *k, RtTensor **args, int n, const int64_t *sizes) {
  for (int i = 0; i < k->f->nsizevars; i++)
    if (sizes[i] > ((int64_t)1 << 40)) return true;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && k->writes[i] && args[i]->data == args[j]->data && args[i]->numel > 0)
        return true;
  return false;
}

/* Runs a kernel: binds the size variables from the arguments, falls back
 * to the interpreter where the kernel's assumptions do not hold, and turns
 * an error code into the interpreter's message. */
bool jit_run(const JitKernel *k, RtTensor **args, int n, TirError *err) {
  const PrimFunc *f = k->f;
  err->msg[0] = 0, err->param = -1, err->span = (Span){0};
  if (n != f->nparams)
    return set_err(err, f->span, "@%s takes %d buffers, got %d", f->name, f->nparams, n), false;
  /* on the stack for the usual few buffers and sizes: a step of an RNN
   * calls small kernels thousands of times */
  enum { SMALL = 16 };
  int64_t sizes_s[SMALL];
  bool known_s[SMALL];
  void *bufs_s[SMALL];
  size_t ns = (size_t)f->nsizevars + 1;
  int64_t *sizes = ns <= SMALL ? sizes_s : malloc(ns * sizeof *sizes);
  bool *known = ns <= SMALL ? known_s : malloc(ns * sizeof *known);
  void **bufs = (size_t)n + 1 <= SMALL ? bufs_s : malloc(((size_t)n + 1) * sizeof *bufs);
  if (!sizes || !known || !bufs) rly_oom();
  memset(sizes, 0, ns * sizeof *sizes), memset(known, 0, ns * sizeof *known);
  bool ok = tir_interp_bind_sizes(f, args, n, sizes, known, err);
  if (ok && needs_interpreter(k, args, n, sizes)) {
    ok = tir_interp_run_func(f, args, n, err);
  } else if (ok) {
    for (int i = 0; i < n; i++) bufs[i] = args[i]->data;
    RlyJitCtx ctx = {0};
    double t0 = now_ms();
    int32_t rc = k->code->fn(bufs, sizes, &ctx);
    JitKernel *mk = (JitKernel *)k;
    double ms = now_ms() - t0;
    mk->calls++, mk->total_ms += ms;
    if (cx()->hook) cx()->hook(cx()->hook_user, f, k->name, sizes, args, n, ms);
    if (rc) kernel_error(k, rc, &ctx, err), ok = false;
  }
  if (sizes != sizes_s) free(sizes);
  if (known != known_s) free(known);
  if (bufs != bufs_s) free(bufs);
  return ok;
}

/* ─────────────────────────── dumps, statistics ─────────────────────────── */

static bool dump_locked(const PrimFunc *f, const char *what, StrBuf *b, TirError *err) {
  err->msg[0] = 0, err->param = -1, err->span = f->span;
  if (!load_module()) return set_err(err, f->span, "%s", J.why), false;
  JitCompileOpts o = opts_for(f);
  uint64_t k1, k2;
  key_of(f, &o, &k1, &k2);
  char sym[64];
  sym_name(sym, sizeof sym, k1, k2);
  char *text = J.mod->dump(f, what, sym, &o, err->msg, sizeof err->msg);
  if (!text) return false;
  sb_puts(b, text);
  free(text);
  return true;
}

int jit_kernel_count(void) { return cx()->nkernels; }

void jit_set_run_hook(JitRunHook hook, void *user) { cx()->hook = hook, cx()->hook_user = user; }

/* How many of the current context's kernels run code c. */
static int sharing(const Code *c) {
  int n = 0;
  for (int i = 0; i < cx()->nkernels; i++) n += cx()->kernels[i]->code == c;
  return n;
}

bool jit_kernel_info(int i, JitKernelInfo *out) {
  if (i < 0 || i >= cx()->nkernels) return false;
  const JitKernel *k = cx()->kernels[i];
  const Code *c = k->code;
  *out = (JitKernelInfo){k->name,  k->signature, c->compile_ms, c->from_disk, c->load_ms,
                         k->calls, k->total_ms,  c->st,         sharing(c),   0};
  for (int j = 0; j < i; j++) /* the first kernel on its code is the one that compiled it */
    if (cx()->kernels[j]->code == c) out->first = j + 1;
  return true;
}

const char *jit_cpu_name(void) { return load_module() ? J.mod->cpu : NULL; } /* set once */
const char *jit_target_name(void) { return load_module() ? J.mod->target : NULL; }
const char *jit_passes_name(void) { return load_module() ? J.mod->passes : NULL; }

/* The prim functions handed to jit_get so far may be freed: drop the
 * pointers to them, keep the compiled code.  A later jit_get of a copy
 * finds its code by key and takes the entry over. */
void jit_forget_funcs(void) {
  for (int i = 0; i < cx()->nkernels; i++) {
    JitKernel *k = cx()->kernels[i];
    k->f = NULL;
    free(k->sites);
    k->sites = NULL, k->nsites = 0;
  }
}

/* ─────────────────────────── compiling ahead ─────────────────────────── */

/* Whether a key is compiled, compiled ahead, or in the disk cache. */
static bool known_key(uint64_t k1, uint64_t k2) {
  char path[PATH_MAX + 64];
  return ready_has(k1, k2) || find_code(k1, k2) ||
         (cache_path(path, sizeof path, k1, k2) && access(path, R_OK) == 0);
}

/* Whether key (k1, k2) is among the first m units. */
static bool unit_dup(const Unit *u, int m, uint64_t k1, uint64_t k2) {
  for (int j = 0; j < m; j++)
    if (u[j].k1 == k1 && u[j].k2 == k2) return true;
  return false;
}

/* Compiles ahead run on every core, whatever the pool's size for kernels
 * (RLY_NUM_THREADS=1 still compiles a model on all of them). */
static int compile_threads(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int nt = rly_pool_threads();
  return cores > nt ? (int)(cores < 64 ? cores : 64) : nt;
}

/* Code generation here, the passes on worker threads (a failure leaves
 * no object code: the first call compiles again and reports the error).
 * False on Ctrl-C. */
static bool precompile_locked(PrimFunc *const *fs, int n) {
  if (n < 2 || !load_module()) return true;
  Batch *b = calloc(1, sizeof *b);
  Unit *u = calloc((size_t)n, sizeof *u);
  if (!b || !u) rly_oom();
  b->units = u;
  char sym[64], err[RT_ERR_LEN];
  int m = 0;
  for (int i = 0; i < n && !rt_interrupt_flag; i++) {
    JitCompileOpts o = opts_for(fs[i]);
    key_of(fs[i], &o, &u[m].k1, &u[m].k2);
    if (unit_dup(u, m, u[m].k1, u[m].k2) || known_key(u[m].k1, u[m].k2)) continue;
    sym_name(sym, sizeof sym, u[m].k1, u[m].k2);
    if ((u[m].unit = J.mod->begin(fs[i], sym, &o, err, sizeof err)) != NULL) m++;
  }
  b->n = m;
  if (m == 0) {
    free(u), free(b);
    return !rt_interrupt_flag;
  }
  int nt = compile_threads();
  return batch_run(b, nt > m ? m : nt, err, sizeof err);
}

static void free_kernel(JitKernel *k);

static void reset_locked(void) {
  for (int i = 0; i < cx()->nkernels; i++) free_kernel(cx()->kernels[i]);
  for (int i = 0; i < J.ncodes; i++) free(J.codes[i]);
  pthread_mutex_lock(&ready_mu);
  for (int i = 0; i < J.nready; i++) free(J.ready[i]->obj), free(J.ready[i]);
  free(J.ready), J.ready = NULL, J.nready = J.capready = 0;
  pthread_mutex_unlock(&ready_mu);
  free(cx()->kernels), free(J.codes);
  cx()->kernels = NULL, J.codes = NULL;
  cx()->nkernels = cx()->capkernels = J.ncodes = J.capcodes = 0;
  if (J.mod) J.mod->reset();
}

/* ── the public entries that touch the shared state: under J_mu ── */

const JitKernel *jit_get(const PrimFunc *f, TirError *err) {
  pthread_mutex_lock(&J_mu);
  const JitKernel *k = get_locked(f, err);
  pthread_mutex_unlock(&J_mu);
  return k;
}

bool jit_dump(const PrimFunc *f, const char *what, StrBuf *b, TirError *err) {
  pthread_mutex_lock(&J_mu);
  bool ok = dump_locked(f, what, b, err);
  pthread_mutex_unlock(&J_mu);
  return ok;
}

/* The whole compile holds J_mu: another engine's compile waits. */
bool jit_precompile(PrimFunc *const *fs, int n) {
  pthread_mutex_lock(&J_mu);
  bool ok = precompile_locked(fs, n);
  pthread_mutex_unlock(&J_mu);
  return ok;
}

/* Drops the current context's kernels and the shared compiled code: for
 * one engine in the process (the tests, `:jit reset`). */
void jit_reset(void) {
  pthread_mutex_lock(&J_mu);
  reset_locked();
  pthread_mutex_unlock(&J_mu);
}

bool jit_module_found(void) {
  pthread_mutex_lock(&J_mu);
  bool ok = module_found_locked();
  pthread_mutex_unlock(&J_mu);
  return ok;
}

/* ── per-engine contexts (jit.h) ── */

JitCtx *jit_ctx_new(void) {
  JitCtx *c = calloc(1, sizeof *c);
  if (!c) rly_oom();
  c->opt_level = 2;
  return c;
}

JitCtx *jit_ctx_enter(JitCtx *c) {
  JitCtx *prev = cur;
  cur = c;
  return prev;
}

static void free_kernel(JitKernel *k) {
  free(k->sites), free(k->writes), free(k->signature), free(k->covers), free(k->name);
  free(k);
}

void jit_ctx_free(JitCtx *c) {
  if (!c) return;
  for (int i = 0; i < c->nkernels; i++) free_kernel(c->kernels[i]);
  free(c->kernels);
  if (cur == c) cur = NULL;
  free(c);
}

/* ── the executor call_tir uses (rt/exec.h) ── */

static const void *exec_prepare(const PrimFunc *f, TirError *err) { return jit_get(f, err); }
static bool exec_run(const void *k, RtTensor **args, int n, TirError *err) {
  return jit_run(k, args, n, err);
}
static bool exec_writes(const void *k, int i) { return jit_writes_param(k, i); }
static bool exec_writes_all(const void *k, int i) { return jit_writes_all_of_param(k, i); }
static void exec_forget(void) { jit_forget_funcs(); }

static const RtExecutor jit_executor = {
    .name = "jit",
    .prepare = exec_prepare,
    .run = exec_run,
    .writes_param = exec_writes,
    .writes_all_of_param = exec_writes_all,
    .forget = exec_forget,
};

void jit_register_executor(void) { rt_executor_register(&jit_executor); }
