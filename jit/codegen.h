/* codegen.h — TIR → LLVM IR, internal to rly-jit.so.
 *
 * Value representation (matches tir_interp.c's invariants): bool is i1,
 * integers are iN of their width (two's complement wrap), float32 is
 * float, float64 double, and float16 is a double that always holds a value
 * already rounded to half (as the interpreter keeps it), converted to and
 * from binary16 bits only at loads and stores: by LLVM's half type when the
 * CPU has F16C (inline conversions, which vectorize), else through the
 * host's functions.  bfloat16 is a float holding a value already rounded
 * to bfloat16 (widened from its bits by a shift at loads, rounded to
 * nearest even by integer operations on the bits, which vectorize, at
 * stores and after each operation).  In memory bool is a byte and float16
 * and bfloat16 16 bits.
 *
 * Ranges: each integer expression may have a symbolic range [lo, hi], two
 * linear forms over the size variables (which are >= 0 and, by jit_run's
 * guard, <= 2^40).  Forms keep small coefficients so that no intermediate
 * value can overflow int64; an access whose indices provably lie in
 * [0, dim) needs no run-time check, which keeps inner loops free of exits
 * (so they vectorize). */
#ifndef RLY_JIT_CODEGEN_H
#define RLY_JIT_CODEGEN_H

#include <llvm-c/Core.h>

#include "rt/jit_abi.h"

enum { LIN_TERMS = 4 };

typedef struct Lin {
  int64_t c;
  int n;
  int sv[LIN_TERMS]; /* index into f->sizevars */
  int64_t k[LIN_TERMS];
} Lin;

typedef struct Range {
  bool ok;
  Lin lo, hi;
} Range;

typedef struct CVal {
  LLVMValueRef v; /* NULL after a failure */
  DType dt;
} CVal;

typedef struct VarB {
  const TirVar *var;
  LLVMValueRef v;
  DType dt;
  LLVMValueRef first; /* loop variables: the loop's first value (init rule) */
  Range r;
} VarB;

typedef struct BufB {
  const Buffer *b;
  LLVMValueRef base;
} BufB;

typedef struct FnState {
  LLVMValueRef fn, ctx, ret;
  LLVMBasicBlockRef exit;
  LLVMBuilderRef alloca_b; /* positioned before the entry block's terminator */
  LLVMValueRef *heap;      /* pointer slots of heap allocs, freed at exit */
  int nheap, capheap;
  bool outlined; /* a parallel loop body */
} FnState;

typedef struct Cg {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  const PrimFunc *f;
  const JitCompileOpts *o;
  const RlyJitHost *host;
  JitSite *sites;
  int nsites, site_hint;
  VarB *vars;
  int nvars, capvars;
  BufB *bufs;
  int nbufs, capbufs;
  LLVMValueRef *sizes; /* values of f->sizevars in the current function */
  FnState *fn;
  int nbodies;
  int loop_depth;     /* loops around the current statement in this function */
  int unrolled_depth; /* `unrolled` loops among them */
  const char *sym;
  LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, ptr, vd;
  bool failed;
  char *err;
  size_t errn;
} Cg;

void cg_fail(Cg *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cg_site(Cg *c, const void *node);
LLVMTypeRef cg_lty(Cg *c, DType t);
LLVMTypeRef cg_mty(Cg *c, DType t);
int cg_dtype_bits(DType t);
bool cg_is_signed(DType t); /* int8..int64 */
bool cg_is_float(DType t);
bool cg_is_int(DType t); /* integers, not bool */

/* Branches to the function's error exit when bad is true, recording code,
 * the site and the operands in the context. */
void cg_check(Cg *c, LLVMValueRef bad, int code, int site, LLVMValueRef a, LLVMValueRef b,
              LLVMValueRef x);
LLVMValueRef cg_call_rt(Cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n,
                        LLVMValueRef *args);
/* glibc's libmvec loaded into the process (once, RTLD_GLOBAL, so kernels
 * linked by the JIT find its symbols): orc.c. */
bool cg_libmvec(void);

LLVMValueRef cg_intrinsic(Cg *c, const char *name, LLVMTypeRef *types, int ntypes,
                          LLVMValueRef *args, int nargs);

/* Scope. */
const VarB *cg_find_var(const Cg *c, const TirVar *v);
void cg_push_var(Cg *c, VarB v);
const BufB *cg_find_buf(const Cg *c, const Buffer *b);
/* A pointer to element idx of b (indices evaluated and checked in order). */
LLVMValueRef cg_access(Cg *c, int site, const Buffer *b, int n, PrimExpr *const *idx);

/* Expressions (codegen_expr.c). */
CVal cg_expr(Cg *c, const PrimExpr *e);
CVal cg_convert(Cg *c, CVal x, DType to);
DType cg_expr_type(Cg *c, const PrimExpr *e); /* without emitting code */
LLVMValueRef cg_round_half(Cg *c, LLVMValueRef d);
LLVMValueRef cg_load_elem(Cg *c, LLVMValueRef p, DType t);
void cg_store_elem(Cg *c, LLVMValueRef p, DType t, LLVMValueRef v);

/* Ranges (codegen_expr.c). */
Range cg_range(Cg *c, const PrimExpr *e);
bool cg_lin_nonneg(const Lin *a);
bool cg_lin_sub(const Lin *a, const Lin *b, Lin *out);
Lin cg_lin_const(int64_t k);
bool cg_can_speculate(Cg *c, const PrimExpr *e);
bool cg_in_bounds(Cg *c, const Buffer *b, int d, const PrimExpr *idx);

/* A `vectorized` loop of constant extent emitted as vector code; false,
 * with nothing emitted, when its body is not of the kinds it handles
 * (codegen_vec.c). */
bool cg_vector_loop(Cg *c, const Stmt *s);
/* dot_u8i8x4 (ir/tir.h) on n int32 lanes (n 1: scalars), codegen_dot.c;
 * vpdpbusd when cg_vnni(), the host has AVX512-VNNI (orc.c). */
LLVMValueRef cg_dot4(Cg *c, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, int n);
bool cg_dot4_lanes_ok(int n);
bool cg_vnni(void);
/* A loop nest copying a contiguous block between two buffers emitted as one
 * memcpy; false, with nothing emitted, otherwise (codegen_copy.c). */
bool cg_copy_loop(Cg *c, const Stmt *s);

/* The kernel of f as an LLVM module in ctx (codegen.c). */
LLVMModuleRef cg_build(LLVMContextRef ctx, const PrimFunc *f, const JitCompileOpts *o,
                       const RlyJitHost *host, const char *sym, char *err, size_t errn);

#endif
