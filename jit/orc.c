/* orc.c — the entry of rly-jit.so: target machine for the host CPU (its
 * features), the new pass manager (default<On>), object emission, and
 * ORC LLJIT to link object code into the process (jit_abi.h).
 *
 * Kernels always go through object code (LLVMTargetMachineEmitToMemoryBuffer
 * then LLVMOrcLLJITAddObjectFile), so a kernel compiled now and one read
 * from the disk cache take the same path.  The runtime's functions are
 * absolute symbols rly_rt_* in the main JITDylib; libm comes from the
 * process.  compile runs on the caller's thread; begin (code generation
 * from the prim function, on the caller's thread) and finish (passes and
 * emission, on any thread: the unit owns its LLVM context) split it so
 * the slow part can run where Ctrl-C need not wait for it. */
#include <dlfcn.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jit/codegen.h"

static const RlyJitHost *host;
static RlyJitModule self;
static char *triple, *cpu, *features;
/* One target machine per opt level and thread: code generation through a
 * target machine is not thread-safe, and jit_precompile compiles on
 * several threads.  Compile threads come and go (one per batch), so a
 * thread's machines go back to a shared stock when it ends and the next
 * thread takes them: not a new target machine per compile. */
typedef struct TmSet {
  LLVMTargetMachineRef tm[4];
} TmSet;
enum { TM_STOCK = 64 };
static pthread_mutex_t tm_mu = PTHREAD_MUTEX_INITIALIZER;
static LLVMTargetMachineRef stock[4][TM_STOCK];
static int nstock[4];
static pthread_key_t tm_key;
static pthread_once_t tm_once = PTHREAD_ONCE_INIT;
static _Thread_local TmSet *tms;
static LLVMOrcLLJITRef jit;

static bool take_error(LLVMErrorRef e, char *err, size_t n, const char *what) {
  if (!e) return true;
  char *m = LLVMGetErrorMessage(e);
  snprintf(err, n, "%s: %s", what, m);
  LLVMDisposeErrorMessage(m);
  return false;
}

/* A thread's end: its machines back to the stock (or freed when it is full). */
static void return_machines(void *p) {
  TmSet *set = p;
  pthread_mutex_lock(&tm_mu);
  for (int l = 0; l < 4; l++) {
    if (set->tm[l] && nstock[l] < TM_STOCK)
      stock[l][nstock[l]++] = set->tm[l];
    else if (set->tm[l])
      LLVMDisposeTargetMachine(set->tm[l]);
  }
  pthread_mutex_unlock(&tm_mu);
  free(set);
}

static void make_key(void) { pthread_key_create(&tm_key, return_machines); }

/* This thread's set, its machine for level from the stock if there is one. */
static LLVMTargetMachineRef from_stock(int level) {
  pthread_once(&tm_once, make_key);
  if (!tms) {
    if (!(tms = calloc(1, sizeof *tms))) abort();
    pthread_setspecific(tm_key, tms);
  }
  pthread_mutex_lock(&tm_mu);
  if (!tms->tm[level] && nstock[level] > 0) tms->tm[level] = stock[level][--nstock[level]];
  pthread_mutex_unlock(&tm_mu);
  return tms->tm[level];
}

static LLVMTargetMachineRef machine(int level) {
  if ((tms && tms->tm[level]) || from_stock(level)) return tms->tm[level];
  LLVMTargetRef t;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &t, &msg)) {
    LLVMDisposeMessage(msg);
    return NULL;
  }
  static const LLVMCodeGenOptLevel cgl[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                            LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  tms->tm[level] = LLVMCreateTargetMachine(t, triple, cpu, features, cgl[level], LLVMRelocPIC,
                                           LLVMCodeModelSmall);
  return tms->tm[level];
}

/* RLY_JIT_PASSES: an LLVM pass pipeline (LLVMRunPasses' text, e.g.
 * "default<O1>" or "function(instcombine,...)") that replaces default<On>
 * at every opt level, to measure what a leaner pipeline saves and changes
 * (bench/compile_passes.py); unset or empty: default<On>. */
/* Whether the host's feature list (LLVM's "+a,-b,...") enables f. */
static bool has_feature(const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; p && (p = strstr(p, f)); p += n)
    if (p > features && p[-1] == '+' && (p[n] == ',' || p[n] == 0)) return true;
  return false;
}

/* AVX512-VNNI's vpdpbusd for dot_u8i8x4 (codegen_dot.c): when the host
 * has it, unless RLY_JIT_VNNI=0 forces the exact widened code (the Zen 3
 * path, which tests compare bit for bit).  Set once by rlyjit_init. */
static bool vnni;
bool cg_vnni(void) { return vnni; }

static const char *passes_override(void) {
  const char *v = getenv("RLY_JIT_PASSES");
  return v && *v ? v : NULL;
}

static bool optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, int level, char *err, size_t n) {
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>", level);
  const char *pipeline = self.passes[0] ? self.passes : passes;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 2);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, level >= 2);
  LLVMPassBuilderOptionsSetLoopInterleaving(po, level >= 2);
  LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  return take_error(e, err, n, "LLVM passes");
}

/* f's optimized module in ctx (NULL with err). */
static LLVMModuleRef build(LLVMContextRef ctx, const PrimFunc *f, const char *sym,
                           const JitCompileOpts *o, char *err, size_t n) {
  int level = o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
  LLVMTargetMachineRef tm = machine(level);
  if (!tm) return snprintf(err, n, "no LLVM target for %s", triple), NULL;
  LLVMModuleRef m = cg_build(ctx, f, o, host, sym, err, n);
  if (!m) return NULL;
  LLVMSetTarget(m, triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(m, dl);
  LLVMDisposeTargetData(dl);
  if (!optimize(m, tm, level, err, n)) {
    LLVMDisposeModule(m);
    return NULL;
  }
  return m;
}

static bool emit(LLVMModuleRef m, int level, LLVMCodeGenFileType kind, void **out, size_t *len,
                 char *err, size_t n) {
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(machine(level), m, kind, &msg, &buf)) {
    snprintf(err, n, "LLVM code generation: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return false;
  }
  *len = LLVMGetBufferSize(buf);
  *out = malloc(*len + 1);
  if (!*out) abort();
  memcpy(*out, LLVMGetBufferStart(buf), *len);
  ((char *)*out)[*len] = 0;
  LLVMDisposeMemoryBuffer(buf);
  return true;
}

/* LLVM reports remarks and warnings ("loop not vectorized") on stderr by
 * default; they say nothing a user of rly can act on, so they are dropped.
 * Errors also come back through the calls' own results. */
static void quiet_diagnostics(LLVMDiagnosticInfoRef info, void *user) { (void)info, (void)user; }

static LLVMContextRef new_context(void) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(ctx, quiet_diagnostics, NULL);
  return ctx;
}

static bool compile(const PrimFunc *f, const char *sym, const JitCompileOpts *o, void **obj,
                    size_t *len, char *err, size_t n) {
  LLVMContextRef ctx = new_context();
  LLVMModuleRef m = build(ctx, f, sym, o, err, n);
  bool ok = m && emit(m,
                      o->opt_level < 0   ? 0
                      : o->opt_level > 3 ? 3
                                         : o->opt_level,
                      LLVMObjectFile, obj, len, err, n);
  if (m) LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return ok;
}

/* The unoptimized module of a compile split by begin/finish. */
typedef struct Unit {
  LLVMContextRef ctx;
  LLVMModuleRef m;
  int level;
  JitCompileStats st; /* begin's part */
} Unit;

/* The compiling thread's CPU time: a stage's cost, whatever else the
 * machine runs meanwhile. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The number of instructions in m (the size the passes work on). */
static int count_instructions(LLVMModuleRef m) {
  int n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static int level_of(const JitCompileOpts *o) {
  return o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
}

static void *begin(const PrimFunc *f, const char *sym, const JitCompileOpts *o, char *err,
                   size_t n) {
  int level = level_of(o);
  LLVMTargetMachineRef tm = machine(level);
  if (!tm) return snprintf(err, n, "no LLVM target for %s", triple), NULL;
  Unit *u = calloc(1, sizeof *u);
  if (!u) abort();
  u->ctx = new_context(), u->level = level;
  double t0 = now_ms();
  u->m = cg_build(u->ctx, f, o, host, sym, err, n);
  u->st.codegen_ms = now_ms() - t0;
  if (!u->m) {
    LLVMContextDispose(u->ctx);
    free(u);
    return NULL;
  }
  LLVMSetTarget(u->m, triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(u->m, dl);
  LLVMDisposeTargetData(dl);
  return u;
}

static void discard(void *unit) {
  Unit *u = unit;
  if (!u) return;
  LLVMDisposeModule(u->m);
  LLVMContextDispose(u->ctx);
  free(u);
}

static bool finish(void *unit, void **obj, size_t *len, JitCompileStats *st, char *err, size_t n) {
  Unit *u = unit;
  *st = u->st;
  st->ir_before = count_instructions(u->m);
  double t0 = now_ms();
  bool ok = optimize(u->m, machine(u->level), u->level, err, n);
  double t1 = now_ms();
  st->opt_ms = t1 - t0, st->ir_after = count_instructions(u->m);
  ok = ok && emit(u->m, u->level, LLVMObjectFile, obj, len, err, n);
  st->emit_ms = now_ms() - t1, st->obj_bytes = ok ? *len : 0;
  discard(u);
  return ok;
}

static char *dump(const PrimFunc *f, const char *what, const char *sym, const JitCompileOpts *o,
                  char *err, size_t n) {
  LLVMContextRef ctx = new_context();
  LLVMModuleRef m = build(ctx, f, sym, o, err, n);
  char *text = NULL;
  if (m && strcmp(what, "asm") == 0) {
    void *out;
    size_t len;
    if (emit(m,
             o->opt_level < 0   ? 0
             : o->opt_level > 3 ? 3
                                : o->opt_level,
             LLVMAssemblyFile, &out, &len, err, n))
      text = out;
  } else if (m) {
    char *s = LLVMPrintModuleToString(m);
    text = strdup(s);
    LLVMDisposeMessage(s);
  }
  if (m) LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return text;
}

/* ─────────────────────────── ORC ─────────────────────────── */

/* Defines the runtime's functions as absolute symbols rly_rt_* in the
 * JITDylib, so kernels call the host's table directly. */
static bool define_runtime(LLVMOrcJITDylibRef jd, char *err, size_t n) {
  struct {
    const char *name;
    void *addr;
  } syms[] = {
      {"rly_rt_parallel_for", (void *)(uintptr_t)host->parallel_for},
      {"rly_rt_alloc", (void *)(uintptr_t)host->alloc},
      {"rly_rt_alloc_raw", (void *)(uintptr_t)host->alloc_raw},
      {"rly_rt_free", (void *)(uintptr_t)host->free},
      {"rly_rt_poll", (void *)(uintptr_t)host->poll},
      {"rly_rt_h2d", (void *)(uintptr_t)host->h2d},
      {"rly_rt_d2h", (void *)(uintptr_t)host->d2h},
  };
  enum { N = sizeof syms / sizeof syms[0] };
  LLVMOrcCSymbolMapPair pairs[N];
  for (int i = 0; i < N; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, syms[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  return take_error(LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, N)), err, n,
                    "JIT runtime symbols");
}

static bool have_libmvec;
static void load_libmvec(void) { have_libmvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL); }

bool cg_libmvec(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT; /* compiles run on several threads */
  pthread_once(&once, load_libmvec);
  return have_libmvec;
}

static bool ensure_jit(char *err, size_t n) {
  if (jit) return true;
  cg_libmvec(); /* kernels from the disk cache may call its functions */
  if (!take_error(LLVMOrcCreateLLJIT(&jit, NULL), err, n, "LLJIT")) return false;
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  if (!take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                      &gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL),
                  err, n, "JIT process symbols"))
    return false;
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return define_runtime(jd, err, n);
}

static void *load(const void *obj, size_t len, const char *sym, char *err, size_t n) {
  if (!ensure_jit(err, n)) return NULL;
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, len, sym);
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  if (!take_error(LLVMOrcLLJITAddObjectFile(jit, jd, buf), err, n, "JIT object")) return NULL;
  LLVMOrcExecutorAddress addr = 0;
  if (!take_error(LLVMOrcLLJITLookup(jit, &addr, sym), err, n, "JIT lookup")) return NULL;
  return (void *)(uintptr_t)addr;
}

static void reset(void) {
  if (jit) LLVMOrcDisposeLLJIT(jit);
  jit = NULL;
}

/* One empty compile per opt level on the loading thread: LLVM creates some
 * statics (timer groups, pass registries) lazily on the first compile, and
 * the compiles ahead start several at once.  False with err if the passes
 * fail (an RLY_JIT_PASSES that LLVM cannot parse). */
static bool warm_up(char *err, size_t n) {
  bool ok = true;
  for (int level = 0; level < 4; level++) {
    LLVMContextRef ctx = new_context();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("rly_warm_up", ctx);
    LLVMValueRef f =
        LLVMAddFunction(m, "rly_warm_up", LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    LLVMSetTarget(m, triple);
    void *obj = NULL;
    size_t len;
    bool passed = !machine(level) || optimize(m, machine(level), level, err, n);
    if (passed && machine(level) && emit(m, level, LLVMObjectFile, &obj, &len, err, n)) free(obj);
    ok = ok && passed;
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
  }
  return ok;
}

/* The module's entry: checks the ABI, sets up the native target once and
 * describes it (LLVM version, triple, CPU, a hash of the features), which
 * the loader uses to key its disk cache. */
const RlyJitModule *rlyjit_init(const RlyJitHost *h, char *err, size_t n) {
  if (!h || h->abi_version != RLY_JIT_ABI_VERSION) {
    snprintf(err, n, "rly-jit.so: runtime ABI mismatch");
    return NULL;
  }
  if (self.abi_version) return &self;
  host = h;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    snprintf(err, n, "LLVM has no native target");
    return NULL;
  }
  triple = LLVMGetDefaultTargetTriple();
  cpu = LLVMGetHostCPUName();
  features = LLVMGetHostCPUFeatures();
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  self.abi_version = RLY_JIT_ABI_VERSION;
  const char *vnni_env = getenv("RLY_JIT_VNNI");
  vnni = has_feature("avx512vnni") && !(vnni_env && strcmp(vnni_env, "0") == 0);
  uint64_t fh = 0xcbf29ce484222325ull; /* FNV-1a of the whole feature list */
  for (const char *p = features; *p; p++) fh = (fh ^ (unsigned char)*p) * 0x100000001b3ull;
  snprintf(self.target, sizeof self.target, "LLVM %u.%u.%u %s %s features:%016llx%s", major, minor,
           patch, triple, cpu, (unsigned long long)fh, vnni ? " vnni" : "");
  snprintf(self.cpu, sizeof self.cpu, "%s", cpu);
  self.passes = passes_override() ? passes_override() : "";
  char why[256];
  if (!warm_up(why, sizeof why)) {
    snprintf(err, n, "RLY_JIT_PASSES=%s: %s", self.passes, why);
    self.abi_version = 0;
    return NULL;
  }
  self.compile = compile, self.begin = begin, self.finish = finish;
  self.discard = discard, self.load = load, self.dump = dump, self.reset = reset;
  return &self;
}
