/* jit_abi.h — the interface between librly's JIT loader (jit.c, no LLVM)
 * and the code generator module rly-jit.so (codegen*.c, orc.c, linked with
 * LLVM), which jit.c opens with dlopen.
 *
 * The module depends on no symbol of the executable: what it needs from
 * the runtime (thread pool, allocation, interrupt polling, float16
 * conversions) comes in a RlyJitHost table at init, and the generated code
 * reaches those functions as absolute JIT symbols (rly_rt_*), so cached
 * object code stays valid across processes.
 *
 * Kernel ABI (one C function per prim function):
 *   int32_t kernel(void **bufs, const int64_t *sizes, RlyJitCtx *ctx);
 * bufs: data pointers of the parameters in order; sizes: the values of
 * f->sizevars in order.  0 on success, else a JitErrCode with ctx->site
 * (an index into jit_sites' table) and the operands of the message.
 *
 * Error sites are numbered by jit_sites (sites.c, compiled into both sides):
 * a structural walk, so a kernel shared by equal prim functions reports at
 * the sites of whichever function runs it. */
#ifndef RLY_JIT_ABI_H
#define RLY_JIT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/tir.h"

enum { RLY_JIT_ABI_VERSION = 7 };

typedef enum JitErrCode {
  JIT_OK = 0,
  JIT_E_BOUNDS = 1,    /* a = index, b = dimension, c = its size */
  JIT_E_DIV0 = 2,      /* integer division by zero */
  JIT_E_ALLOC = 3,     /* a = bytes */
  JIT_E_INTERRUPT = 4, /* Ctrl-C */
} JitErrCode;

typedef struct RlyJitCtx {
  int32_t site, code;
  int64_t a, b, c;
} RlyJitCtx;

typedef int32_t (*RlyJitKernelFn)(void **bufs, const int64_t *sizes, RlyJitCtx *ctx);
/* An outlined `parallel` loop body over iterations [lo, hi). */
typedef int32_t (*RlyJitBodyFn)(void *closure, int64_t lo, int64_t hi, RlyJitCtx *ctx);

/* librly → module. */
typedef struct RlyJitHost {
  int abi_version;
  int32_t (*parallel_for)(RlyJitBodyFn body, void *closure, int64_t lo, int64_t hi, RlyJitCtx *ctx);
  void *(*alloc)(int64_t bytes);     /* zero-filled, 64-byte aligned; NULL on failure */
  void *(*alloc_raw)(int64_t bytes); /* the same, not filled (Buffer.no_init) */
  void (*free)(void *p);
  int32_t (*poll)(void);        /* nonzero after Ctrl-C (the flag stays set) */
  double (*h2d)(uint32_t bits); /* binary16 → double */
  uint32_t (*d2h)(double v);    /* double → binary16, one rounding */
} RlyJitHost;

typedef struct JitCompileOpts {
  int opt_level;    /* 0..3 */
  bool contract;    /* allow a*b+c → fma */
  bool vector_math; /* libm calls in vectorized loops may use libmvec's variants (codegen_expr.c) */
} JitCompileOpts;

/* Where one compile's time went (ms) and the size of its code: begin
 * fills codegen_ms and ir_before, finish the rest. */
typedef struct JitCompileStats {
  double codegen_ms; /* TIR → LLVM IR (begin) */
  double opt_ms;     /* the LLVM pass pipeline */
  double emit_ms;    /* instruction selection, register allocation, object code */
  int ir_before;     /* LLVM instructions before the passes */
  int ir_after;      /* and after */
  size_t obj_bytes;
} JitCompileStats;

/* module → librly. */
typedef struct RlyJitModule {
  int abi_version;
  char target[256]; /* "LLVM 19.1.x <triple> <cpu> <features>": part of disk cache keys */
  char cpu[64];
  const char *passes; /* RLY_JIT_PASSES's pipeline, "" for default<On>: part of disk cache keys */
  /* Generates, optimizes and emits f's kernel named sym as object code
   * (malloc'd into *obj).  False with err. */
  bool (*compile)(const PrimFunc *f, const char *sym, const JitCompileOpts *o, void **obj,
                  size_t *len, char *err, size_t n);
  /* compile in two steps: begin generates f's unoptimized module (a
   * unit, NULL with err) on the caller's thread; finish optimizes and
   * emits it as compile does, on any thread, fills *st and frees it;
   * discard frees a unit not finished. */
  void *(*begin)(const PrimFunc *f, const char *sym, const JitCompileOpts *o, char *err, size_t n);
  bool (*finish)(void *unit, void **obj, size_t *len, JitCompileStats *st, char *err, size_t n);
  void (*discard)(void *unit);
  /* Adds object code to the JIT and returns sym's address (NULL with err). */
  void *(*load)(const void *obj, size_t len, const char *sym, char *err, size_t n);
  /* The optimized LLVM IR ("llvm") or assembly ("asm") of f (malloc'd). */
  char *(*dump)(const PrimFunc *f, const char *what, const char *sym, const JitCompileOpts *o,
                char *err, size_t n);
  /* Forgets every loaded kernel (their addresses become invalid). */
  void (*reset)(void);
} RlyJitModule;

typedef const RlyJitModule *(*RlyJitInitFn)(const RlyJitHost *host, char *err, size_t n);
const RlyJitModule *rlyjit_init(const RlyJitHost *host, char *err, size_t n);

/* ── error sites (sites.c) ── */

typedef enum JitSiteKind { SITE_LOAD, SITE_STORE, SITE_DIV, SITE_ALLOC, SITE_LOOP } JitSiteKind;

typedef struct JitSite {
  JitSiteKind kind;
  const void *node; /* PrimExpr (load, div) or Stmt (store, alloc, for) */
  const Buffer *buf;
  Span span;
} JitSite;

/* The sites of f in walk order (malloc'd; *n entries). */
JitSite *jit_sites(const PrimFunc *f, int *n);

#endif
