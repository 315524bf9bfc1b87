/* jit.h — TIR prim functions compiled to machine code through LLVM ORC.
 *
 * LLVM is not linked into librly or rly: the code generator lives in a
 * shared module (rly-jit.so, linked with libLLVM-19) that jit_get loads
 * with dlopen on the first compile, so start-up never pays for LLVM.
 * Without the module (or with LLVM failing), jit_get returns NULL with a
 * message and callers fall back to the TIR interpreter (tir_interp.h),
 * whose semantics the compiled code follows exactly.
 *
 * Kernels are cached in memory by a structural hash of the prim function
 * (its printed text without its name) + dtypes + static shapes, and on disk
 * ($XDG_CACHE_HOME/rly, else ~/.cache/rly) as object code keyed by that
 * hash, the LLVM version, the CPU and the opt level; a corrupt entry is
 * detected and rebuilt.  Size variables are kernel arguments: one kernel
 * serves every length.  `parallel` loops run on the runtime's thread pool
 * (RLY_NUM_THREADS, default the number of cores). */
#ifndef RLY_JIT_H
#define RLY_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/tir.h"
#include "ir/util.h"
#include "rt/exec.h"
#include "rt/jit_abi.h"
#include "rt/rt.h"
#include "rt/tir_interp.h"

typedef struct JitKernel JitKernel;

/* An engine's JIT context: its compile options (opt level, contraction,
 * vector math), disk cache directory, kernels and run hook; the settings
 * and statistics below act on the CURRENT one, thread-local like rt's
 * (rt/rt.h: the engine enters it on every call; threads that entered
 * none share a default).  The loaded module, the compiled code (keyed by
 * the prim function's text and options) and the code compiled ahead are
 * shared by the process, under a mutex. */
typedef struct JitCtx JitCtx;
JitCtx *jit_ctx_new(void);
void jit_ctx_free(JitCtx *c);
JitCtx *jit_ctx_enter(JitCtx *c); /* NULL: the default; returns the previous */

/* The kernel for f, compiling it on first use (f must outlive the cache;
 * a structurally equal prim function shares the kernel).  NULL with err
 * filled when the JIT is unavailable or f cannot be compiled. */
const JitKernel *jit_get(const PrimFunc *f, TirError *err);
/* Compiles the object code of those of fs not compiled yet (in memory or
 * the disk cache) on one thread per core at once, for jit_get to load: the
 * kernels of a newly lowered model compile in parallel instead of one by
 * one at their first calls.  Failures are left to jit_get to report. */
bool jit_precompile(PrimFunc *const *fs, int n); /* false on Ctrl-C */
/* Waits for the compiles left running in the background by a Ctrl-C
 * (those not started yet are dropped); before exit. */
void jit_quiesce(void);

/* Runs k on args[0..n): inputs then outputs, like tir_interp_run, with
 * the same binding checks and errors (bounds errors inside the kernel are
 * reported as the interpreter reports them). */
bool jit_run(const JitKernel *k, RtTensor **args, int n, TirError *err);

/* Whether k stores into parameter i (see tir_interp_writes_param). */
bool jit_writes_param(const JitKernel *k, int i);

/* (Addition) Whether k stores every element of parameter i and never
 * loads it, whatever the sizes: call_tir then need not zero-fill that
 * output (nothing of the old contents can show). */
bool jit_writes_all_of_param(const JitKernel *k, int i);

/* Whether the JIT module can be loaded (loads it: libLLVM, ~40 ms). */
bool jit_available(void);
/* (Addition) Whether the module's file is there, without loading it (for
 * decisions at start-up; jit_available() is the real answer). */
bool jit_module_found(void);

/* Optimisation level 0..3 for kernels compiled from now on (:set opt). */
void jit_set_opt_level(int level);
int jit_opt_level(void);

/* The LLVM IR (what = "llvm", after optimisation) or assembly ("asm") of
 * f's kernel into b.  False with err on failure. */
bool jit_dump(const PrimFunc *f, const char *what, StrBuf *b, TirError *err);

/* :kernels — one row per kernel of the current context, in compile order. */
typedef struct JitKernelInfo {
  const char *name;      /* the prim function's name */
  const char *signature; /* e.g. "(float32[n, 784], float32[128, 784]) -> float32[n, 128]" */
  double compile_ms;     /* 0 when it came from the disk cache */
  bool from_disk;
  double load_ms; /* (addition) linking it into the process (incl. reading the cache) */
  uint64_t calls;
  double total_ms;    /* time spent running it */
  JitCompileStats st; /* the compile's stages (:kernels --compile; zero from the disk) */
  int shared;         /* kernels of the context running the same code (1: its own) */
  int first;          /* 0, or 1 + the index of an earlier kernel whose code it runs */
} JitKernelInfo;
int jit_kernel_count(void);
bool jit_kernel_info(int i, JitKernelInfo *out);

/* Additions (jit engineer): why jit_available() is false (NULL when it is
 * true); contraction of a*b+c into fma for kernels compiled from now on
 * (default on; a prim function with attribute fp_contract=0 never
 * contracts; the tests turn it off to compare bit for bit); the CPU name
 * LLVM sees (loads the module; NULL if unavailable). */
const char *jit_unavailable_reason(void);
void jit_set_contract(bool on);
/* Kernels compiled from now on may compute libm functions in vectorized
 * loops with glibc's libmvec (a few ulp; the approx-math setting). */
void jit_set_vector_math(bool on);
const char *jit_cpu_name(void);
/* The target kernels are compiled for: LLVM version, triple, CPU and a hash
 * of its features (loads the module; NULL if unavailable). */
const char *jit_target_name(void);
/* The LLVM pass pipeline RLY_JIT_PASSES gives in place of default<On>: ""
 * when it is unset (NULL if the JIT is unavailable). */
const char *jit_passes_name(void);

/* Settings from the engine's options (engine/engine.h; nothing here reads
 * the environment): the pool size (0: one thread per core), the module to
 * load (NULL: beside the executable, then the build tree), the disk cache
 * directory (NULL: no disk cache).  The module path matters only before
 * the first compile. */
void jit_set_threads(int n);
void jit_set_module_path(const char *path);
void jit_set_cache_dir(const char *dir);

/* Registers the JIT as the compiled executor of call_tir (rt/exec.h).
 * Cheap: LLVM is loaded on the first compile, not here. */
void jit_register_executor(void);

/* A function called after every kernel run (NULL: none, the default) with
 * the prim function (NULL if forgotten), its name, the size variables'
 * values, the arguments and the run's wall time: the profiler's counters
 * (engine/profile.h).  One hook at a time. */
typedef void (*JitRunHook)(void *user, const PrimFunc *f, const char *name, const int64_t *sizes,
                           RtTensor *const *args, int n, double ms);
void jit_set_run_hook(JitRunHook hook, void *user);

/* Forgets the in-memory cache (shared: for one engine in the process) and
 * the current context's kernels and statistics (the disk cache stays). */
void jit_reset(void);
/* Drops the current context's kernels' pointers to their prim functions
 * (which their owner is about to free) and keeps the compiled code for
 * later copies. */
void jit_forget_funcs(void);

#endif
