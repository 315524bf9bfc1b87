/* codegen.c — TIR statements and functions → LLVM IR (codegen.h).
 *
 * Layout of a kernel `sym`: a wrapper with the C ABI of jit_abi.h loads
 * the buffer pointers and sizes and calls `sym.inner`, which takes them as
 * parameters, the buffers `noalias` (jit_run never passes a written buffer
 * twice), and is always inlined, so LLVM sees distinct buffers.  A
 * `parallel` loop (outermost variable, not nested in another) becomes
 * `sym.parK(closure, lo, hi, ctx)`, which unpacks the scope from the closure
 * and calls its own noalias inner function over the chunk; the kernel calls
 * the runtime's parallel_for with it.
 *
 * Every function has an exit block that frees its heap allocs and returns
 * the error code (0 when none); a failed check stores the site and operands
 * in the context and branches there.  Small constant-size allocs live on
 * the stack (so LLVM can keep them in registers).  Loops are emitted in
 * rotated form (guard, body, latch) with an i32 or i64 counter; the
 * outermost loop of each function polls for Ctrl-C once per iteration when
 * it contains loops (inner loops stay free of calls). */
#include "jit/codegen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tir_walk.h"

enum { STACK_ALLOC_MAX = 32768 };

/* ─────────────────────────── basics ─────────────────────────── */

void cg_fail(Cg *c, const char *fmt, ...) {
  if (c->failed) return;
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errn, fmt, ap);
  va_end(ap);
}

int cg_site(Cg *c, const void *node) {
  for (int k = 0; k < c->nsites; k++) {
    int i = (c->site_hint + k) % c->nsites;
    if (c->sites[i].node == node) return c->site_hint = i, i;
  }
  return -1;
}

int cg_dtype_bits(DType t) {
  switch (t) {
    case DT_BOOL:
      return 1;
    case DT_INT8:
    case DT_UINT8:
      return 8;
    case DT_INT16:
    case DT_UINT16:
    case DT_FLOAT16:
    case DT_BFLOAT16:
      return 16;
    case DT_INT32:
    case DT_UINT32:
    case DT_FLOAT32:
      return 32;
    default:
      return 64;
  }
}

bool cg_is_signed(DType t) {
  return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64;
}
bool cg_is_float(DType t) { return dtype_is_float(t); }
bool cg_is_int(DType t) { return t >= DT_INT8 && t <= DT_UINT64; }

LLVMTypeRef cg_lty(Cg *c, DType t) {
  switch (t) {
    case DT_BOOL:
      return c->i1;
    case DT_FLOAT32:
    case DT_BFLOAT16:
      return c->f32;
    case DT_FLOAT16:
    case DT_FLOAT64:
      return c->f64;
    default:
      return LLVMIntTypeInContext(c->C, (unsigned)cg_dtype_bits(t));
  }
}

LLVMTypeRef cg_mty(Cg *c, DType t) {
  if (t == DT_BOOL) return c->i8;
  if (t == DT_FLOAT16 || t == DT_BFLOAT16) return c->i16;
  return cg_lty(c, t);
}

static int elem_bytes(DType t) { return t == DT_BOOL ? 1 : cg_dtype_bits(t) / 8; }

static LLVMValueRef i64c(Cg *c, int64_t v) {
  return LLVMConstInt(c->i64, (unsigned long long)v, 1);
}

static void add_fn_attr(Cg *c, LLVMValueRef fn, const char *name) {
  unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->C, k, 0));
}

LLVMValueRef cg_intrinsic(Cg *c, const char *name, LLVMTypeRef *types, int ntypes,
                          LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->M, id, types, (size_t)ntypes);
  LLVMTypeRef ft = LLVMIntrinsicGetType(c->C, id, types, (size_t)ntypes);
  return LLVMBuildCall2(c->B, ft, fn, args, (unsigned)nargs, "");
}

/* A runtime function (an absolute symbol defined by orc.c). */
LLVMValueRef cg_call_rt(Cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n,
                        LLVMValueRef *args) {
  LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->M, name);
  if (!fn) {
    fn = LLVMAddFunction(c->M, name, ft);
    add_fn_attr(c, fn, "nounwind");
    if (strncmp(name, "rly_rt_alloc", 12) == 0) { /* malloc-like: a new object each call */
      unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
      LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, LLVMCreateEnumAttribute(c->C, na, 0));
    }
    if (strcmp(name, "rly_rt_h2d") == 0 || strcmp(name, "rly_rt_d2h") == 0) {
      unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(c->C, mem, 0));
      add_fn_attr(c, fn, "willreturn");
    }
  }
  return LLVMBuildCall2(c->B, ft, fn, args, (unsigned)n, "");
}

static LLVMValueRef ctx_field(Cg *c, int off) {
  LLVMValueRef o = i64c(c, off);
  return LLVMBuildGEP2(c->B, c->i8, c->fn->ctx, &o, 1, "");
}

void cg_check(Cg *c, LLVMValueRef bad, int code, int site, LLVMValueRef a, LLVMValueRef b,
              LLVMValueRef x) {
  LLVMValueRef args[] = {bad, LLVMConstInt(c->i1, 0, 0)};
  LLVMTypeRef t = c->i1;
  bad = cg_intrinsic(c, "llvm.expect", &t, 1, args, 2);
  LLVMBasicBlockRef err = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "err");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "ok");
  LLVMBuildCondBr(c->B, bad, err, ok);
  LLVMPositionBuilderAtEnd(c->B, err);
  LLVMBuildStore(c->B, LLVMConstInt(c->i32, (unsigned long long)site, 1), ctx_field(c, 0));
  LLVMBuildStore(c->B, LLVMConstInt(c->i32, (unsigned long long)code, 0), ctx_field(c, 4));
  LLVMValueRef ops[] = {a, b, x};
  for (int i = 0; i < 3; i++) {
    LLVMValueRef v = ops[i] ? ops[i] : i64c(c, 0);
    LLVMBuildStore(c->B, v, ctx_field(c, 8 + 8 * i));
  }
  LLVMBuildStore(c->B, LLVMConstInt(c->i32, (unsigned long long)code, 0), c->fn->ret);
  LLVMBuildBr(c->B, c->fn->exit);
  LLVMPositionBuilderAtEnd(c->B, ok);
}

/* A nonzero code from a callee (the context is already filled): return it. */
static void propagate(Cg *c, LLVMValueRef rc) {
  LLVMValueRef bad = LLVMBuildICmp(c->B, LLVMIntNE, rc, LLVMConstInt(c->i32, 0, 0), "");
  LLVMBasicBlockRef err = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "err");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "ok");
  LLVMBuildCondBr(c->B, bad, err, ok);
  LLVMPositionBuilderAtEnd(c->B, err);
  LLVMBuildStore(c->B, rc, c->fn->ret);
  LLVMBuildBr(c->B, c->fn->exit);
  LLVMPositionBuilderAtEnd(c->B, ok);
}

/* ─────────────────────────── scope ─────────────────────────── */

static void push_var(Cg *c, VarB v) {
  if (c->nvars == c->capvars) {
    c->capvars = c->capvars ? 2 * c->capvars : 32;
    c->vars = realloc(c->vars, sizeof *c->vars * (size_t)c->capvars);
    if (!c->vars) abort();
  }
  c->vars[c->nvars++] = v;
}

void cg_push_var(Cg *c, VarB v) { push_var(c, v); }

static void push_buf(Cg *c, const Buffer *b, LLVMValueRef base) {
  if (c->nbufs == c->capbufs) {
    c->capbufs = c->capbufs ? 2 * c->capbufs : 16;
    c->bufs = realloc(c->bufs, sizeof *c->bufs * (size_t)c->capbufs);
    if (!c->bufs) abort();
  }
  c->bufs[c->nbufs++] = (BufB){b, base};
}

const VarB *cg_find_var(const Cg *c, const TirVar *v) {
  for (int i = c->nvars; i-- > 0;)
    if (c->vars[i].var == v) return &c->vars[i];
  if (!v->is_size) return NULL;
  for (int i = 0; i < c->nvars; i++)
    if (c->vars[i].var->is_size && strcmp(c->vars[i].var->name, v->name) == 0) return &c->vars[i];
  return NULL;
}

const BufB *cg_find_buf(const Cg *c, const Buffer *b) {
  for (int i = c->nbufs; i-- > 0;)
    if (c->bufs[i].b == b) return &c->bufs[i];
  for (int i = c->nbufs; i-- > 0;)
    if (strcmp(c->bufs[i].b->name, b->name) == 0) return &c->bufs[i];
  return NULL;
}

static int sizevar_index(const PrimFunc *f, const char *name) {
  for (int i = 0; i < f->nsizevars; i++)
    if (strcmp(f->sizevars[i]->name, name) == 0) return i;
  return -1;
}

static LLVMValueRef dim_value(Cg *c, const Buffer *b, int d) {
  const Dim *x = &b->dims[d];
  if (x->kind == DIM_CONST) return i64c(c, x->value);
  int sv = x->kind == DIM_VAR ? sizevar_index(c->f, x->name) : -1;
  if (sv < 0)
    return cg_fail(c, "@%s: dimension %d of %%%s is not a size of the parameters", c->f->name, d,
                   b->name),
           NULL;
  return c->sizes[sv];
}

/* Row-major address of an element.  Each index is bounds-checked unless
 * its range is proven inside the dim, so the offset arithmetic can be
 * marked nsw/nuw (no wrap), which LLVM needs to vectorize the access. */
LLVMValueRef cg_access(Cg *c, int site, const Buffer *b0, int n, PrimExpr *const *idx) {
  const BufB *bb = cg_find_buf(c, b0);
  if (!bb) return cg_fail(c, "@%s: unknown buffer %%%s", c->f->name, b0->name), NULL;
  const Buffer *b = bb->b;
  LLVMValueRef base = bb->base;
  if (n != b->ndim)
    return cg_fail(c, "@%s: buffer %%%s has rank %d but is indexed with %d indices", c->f->name,
                   b->name, b->ndim, n),
           NULL;
  LLVMValueRef off = NULL;
  for (int d = 0; d < n; d++) {
    CVal x = cg_expr(c, idx[d]);
    LLVMValueRef dim = x.v ? dim_value(c, b, d) : NULL;
    if (!dim) return NULL;
    if (!cg_is_int(x.dt)) return cg_fail(c, "@%s: an index must be an integer", c->f->name), NULL;
    LLVMValueRef x64 = cg_convert(c, x, cg_is_signed(x.dt) ? DT_INT64 : DT_UINT64).v;
    if (!cg_in_bounds(c, b, d, idx[d]))
      cg_check(c, LLVMBuildICmp(c->B, LLVMIntUGE, x64, dim, ""), JIT_E_BOUNDS, site, x64,
               i64c(c, d), dim);
    if (!off) {
      off = x64;
      continue;
    }
    LLVMValueRef m = LLVMBuildMul(c->B, off, dim, "");
    LLVMSetNSW(m, 1), LLVMSetNUW(m, 1);
    off = LLVMBuildAdd(c->B, m, x64, "");
    LLVMSetNSW(off, 1), LLVMSetNUW(off, 1);
  }
  if (!off) off = i64c(c, 0);
  return LLVMBuildInBoundsGEP2(c->B, cg_mty(c, b->dtype), base, &off, 1, "");
}

/* ─────────────────────────── functions ─────────────────────────── */

/* The values of the scope, in parameter order: buffers, then variables
 * (value, and first value for loop variables). */
static int scope_args(Cg *c, LLVMValueRef *out) {
  int n = 0;
  for (int i = 0; i < c->nbufs; i++) {
    if (out) out[n] = c->bufs[i].base;
    n++;
  }
  for (int i = 0; i < c->nvars; i++) {
    if (out) out[n] = c->vars[i].v;
    n++;
    if (c->vars[i].first) {
      if (out) out[n] = c->vars[i].first;
      n++;
    }
  }
  return n;
}

typedef struct Saved {
  VarB *vars;
  int nvars;
  BufB *bufs;
  int nbufs;
  LLVMValueRef *sizes;
  FnState *fn;
  LLVMBasicBlockRef block;
} Saved;

/* memcpy that accepts empty (possibly NULL) ranges. */
static void copy(void *to, const void *from, size_t n) {
  if (n) memcpy(to, from, n);
}

static Saved save_scope(Cg *c) {
  Saved s = {malloc(sizeof(VarB) * ((size_t)c->nvars + 1)),
             c->nvars,
             malloc(sizeof(BufB) * ((size_t)c->nbufs + 1)),
             c->nbufs,
             malloc(sizeof(LLVMValueRef) * ((size_t)c->f->nsizevars + 1)),
             c->fn,
             LLVMGetInsertBlock(c->B)};
  if (!s.vars || !s.bufs || !s.sizes) abort();
  copy(s.vars, c->vars, sizeof(VarB) * (size_t)c->nvars);
  copy(s.bufs, c->bufs, sizeof(BufB) * (size_t)c->nbufs);
  copy(s.sizes, c->sizes, sizeof(LLVMValueRef) * (size_t)c->f->nsizevars);
  return s;
}

static void restore_scope(Cg *c, Saved *s) {
  copy(c->vars, s->vars, sizeof(VarB) * (size_t)s->nvars);
  copy(c->bufs, s->bufs, sizeof(BufB) * (size_t)s->nbufs);
  copy(c->sizes, s->sizes, sizeof(LLVMValueRef) * (size_t)c->f->nsizevars);
  c->nvars = s->nvars, c->nbufs = s->nbufs, c->fn = s->fn;
  if (s->block) LLVMPositionBuilderAtEnd(c->B, s->block);
  free(s->vars), free(s->bufs), free(s->sizes);
}

static void rebind_sizes(Cg *c) {
  for (int i = 0; i < c->f->nsizevars; i++) {
    const VarB *v = cg_find_var(c, c->f->sizevars[i]);
    c->sizes[i] = v ? v->v : i64c(c, 0);
  }
}

/* Starts a function: entry (allocas) → start; ret slot; exit block. */
static void begin_fn(Cg *c, FnState *fs, LLVMValueRef fn, LLVMValueRef ctx, bool outlined) {
  memset(fs, 0, sizeof *fs);
  fs->fn = fn, fs->ctx = ctx, fs->outlined = outlined;
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->C, fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c->C, fn, "start");
  fs->exit = LLVMAppendBasicBlockInContext(c->C, fn, "exit");
  LLVMPositionBuilderAtEnd(c->B, entry);
  fs->ret = LLVMBuildAlloca(c->B, c->i32, "ret");
  LLVMBuildStore(c->B, LLVMConstInt(c->i32, 0, 0), fs->ret);
  LLVMValueRef br = LLVMBuildBr(c->B, start);
  fs->alloca_b = LLVMCreateBuilderInContext(c->C);
  LLVMPositionBuilderBefore(fs->alloca_b, br);
  LLVMPositionBuilderAtEnd(c->B, start);
  c->fn = fs;
}

static void end_fn(Cg *c, FnState *fs) {
  if (LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(c->B)) == NULL) LLVMBuildBr(c->B, fs->exit);
  LLVMPositionBuilderAtEnd(c->B, fs->exit);
  for (int i = 0; i < fs->nheap; i++) {
    LLVMValueRef p = LLVMBuildLoad2(c->B, c->ptr, fs->heap[i], "");
    cg_call_rt(c, "rly_rt_free", c->vd, &c->ptr, 1, &p);
  }
  LLVMBuildRet(c->B, LLVMBuildLoad2(c->B, c->i32, fs->ret, ""));
  LLVMDisposeBuilder(fs->alloca_b);
  free(fs->heap);
}

/* An internal, always-inlined function over the current scope (+ extra
 * i64 parameters, then ctx); the scope is rebound to its parameters. */
static LLVMValueRef open_inner(Cg *c, const char *name, int nextra, FnState *fs,
                               LLVMValueRef *extra) {
  int n = scope_args(c, NULL);
  LLVMValueRef *vals = malloc(sizeof *vals * ((size_t)n + 1));
  LLVMTypeRef *ts = malloc(sizeof *ts * ((size_t)n + (size_t)nextra + 2));
  if (!vals || !ts) abort();
  scope_args(c, vals);
  for (int i = 0; i < n; i++) ts[i] = LLVMTypeOf(vals[i]);
  for (int i = 0; i < nextra; i++) ts[n + i] = c->i64;
  ts[n + nextra] = c->ptr;
  LLVMTypeRef ft = LLVMFunctionType(c->i32, ts, (unsigned)(n + nextra + 1), 0);
  LLVMValueRef fn = LLVMAddFunction(c->M, name, ft);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_fn_attr(c, fn, "alwaysinline");
  add_fn_attr(c, fn, "nounwind");
  unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (int i = 0; i < c->nbufs; i++)
    LLVMAddAttributeAtIndex(fn, (unsigned)i + 1, LLVMCreateEnumAttribute(c->C, na, 0));
  begin_fn(c, fs, fn, LLVMGetParam(fn, (unsigned)(n + nextra)), c->fn && c->fn->outlined);
  int k = 0;
  for (int i = 0; i < c->nbufs; i++) c->bufs[i].base = LLVMGetParam(fn, (unsigned)k++);
  for (int i = 0; i < c->nvars; i++) {
    c->vars[i].v = LLVMGetParam(fn, (unsigned)k++);
    if (c->vars[i].first) c->vars[i].first = LLVMGetParam(fn, (unsigned)k++);
  }
  for (int i = 0; i < nextra; i++) extra[i] = LLVMGetParam(fn, (unsigned)(n + i));
  rebind_sizes(c);
  free(vals), free(ts);
  return fn;
}

/* ─────────────────────────── statements ─────────────────────────── */

static void cstmt(Cg *c, const Stmt *s);

static bool find_loop(void *ctx, const Stmt *s) {
  if (s->kind == ST_FOR) *(bool *)ctx = true;
  return !*(bool *)ctx;
}

static bool no_expr(void *ctx, const PrimExpr *e) { return false; } /* loops hold none */

static bool has_loop(const Stmt *s) {
  bool found = false;
  TirVisitor v = {find_loop, no_expr, &found};
  tir_walk(s, &v);
  return found;
}

static bool find_unrolled(void *ctx, const Stmt *s) {
  if (s->kind == ST_FOR && s->u.for_.loop == LOOP_UNROLLED) *(bool *)ctx = true;
  return !*(bool *)ctx;
}

/* Does s hold an `unrolled` loop (a register tile)? */
static bool has_unrolled(const Stmt *s) {
  bool found = false;
  TirVisitor v = {find_unrolled, no_expr, &found};
  tir_walk(s, &v);
  return found;
}

static void c_seq(Cg *c, const Stmt *s) {
  int nv = c->nvars, nb = c->nbufs;
  for (int i = 0; i < s->u.seq.n && !c->failed; i++) cstmt(c, s->u.seq.items[i]);
  c->nvars = nv, c->nbufs = nb;
}

static LLVMMetadataRef md_prop(Cg *c, const char *name, int value, bool has_value) {
  LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(c->C, name, strlen(name)), NULL};
  if (has_value) ops[1] = LLVMValueAsMetadata(LLVMConstInt(c->i1, (unsigned long long)value, 0));
  return LLVMMDNodeInContext2(c->C, ops, has_value ? 2 : 1);
}

/* Attaches llvm.loop hints for the TIR loop kind to the latch branch: the
 * self-referencing node is built through a temporary, as LLVM requires. */
static void loop_metadata(Cg *c, LLVMValueRef br, LoopKind kind, bool innermost, bool const_trip,
                          bool tile) {
  LLVMMetadataRef props[3];
  int n = 0;
  /* A plain loop around a register tile (a reduction loop, the tile's
   * lanes already vectorized; every such loop, as LLVM may unroll the inner
   * ones): vectorizing it instead would turn the tile's accumulators into
   * reductions across iterations, with gathers. */
  if (kind == LOOP_RANGE && tile) props[n++] = md_prop(c, "llvm.loop.vectorize.enable", 0, true);
  /* A short vectorized loop would be fully unrolled before the loop
   * vectorizer runs, leaving scalar code for SLP to pair up badly: keep it a
   * loop until it is vectorized.  Inside an `unrolled` loop (a register
   * tile) full unrolling is what lets the tile live in registers, and SLP
   * vectorizes the unrolled tile well. */
  if (kind == LOOP_VECTORIZED && innermost) {
    props[n++] = md_prop(c, "llvm.loop.vectorize.enable", 1, true);
    if (c->unrolled_depth == 0) props[n++] = md_prop(c, "llvm.loop.unroll.disable", 0, false);
  }
  if (kind == LOOP_UNROLLED)
    props[n++] = const_trip ? md_prop(c, "llvm.loop.unroll.full", 0, false)
                            : md_prop(c, "llvm.loop.unroll.enable", 0, false);
  if (!n) return;
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(c->C, NULL, 0);
  LLVMMetadataRef ops[4] = {tmp, props[0], n > 1 ? props[1] : NULL, n > 2 ? props[2] : NULL};
  LLVMMetadataRef node = LLVMMDNodeInContext2(c->C, ops, (size_t)n + 1);
  LLVMMetadataReplaceAllUsesWith(tmp, node);
  unsigned kid = LLVMGetMDKindIDInContext(c->C, "llvm.loop", 9);
  LLVMSetMetadata(br, kid, LLVMMetadataAsValue(c->C, node));
}

typedef struct LoopPlan {
  const Stmt *s;
  int level;
  const TirVar *var;
  DType vt; /* the variable's type */
  DType ct; /* the counter's: int32 or int64 */
  Range r;
  bool const_trip;
} LoopPlan;

static void c_loop_level(Cg *c, const Stmt *s, int level);

/* The loop body at plan's level: bind the variable, poll, recurse. */
static void loop_body(Cg *c, const LoopPlan *p, LLVMValueRef iv, LLVMValueRef first) {
  int nv = c->nvars;
  CVal v = cg_convert(c, (CVal){iv, p->ct}, p->vt);
  CVal f = cg_convert(c, (CVal){first, p->ct}, p->vt);
  push_var(c, (VarB){p->var, v.v, p->vt, f.v, p->r});
  int nvars = p->s->u.for_.nvars;
  bool outermost = c->loop_depth == 0 && p->level == 0;
  if (outermost && (has_loop(p->s->u.for_.body) || p->level + 1 < nvars)) {
    int site = cg_site(c, p->s);
    LLVMValueRef rc = cg_call_rt(c, "rly_rt_poll", c->i32, NULL, 0, NULL);
    cg_check(c, LLVMBuildICmp(c->B, LLVMIntNE, rc, LLVMConstInt(c->i32, 0, 0), ""), JIT_E_INTERRUPT,
             site, NULL, NULL, NULL);
  }
  bool unrolled = p->s->u.for_.loop == LOOP_UNROLLED;
  c->loop_depth++, c->unrolled_depth += unrolled;
  if (p->level + 1 < nvars)
    c_loop_level(c, p->s, p->level + 1);
  else
    cstmt(c, p->s->u.for_.body);
  c->loop_depth--, c->unrolled_depth -= unrolled;
  c->nvars = nv;
}

/* for iv in [lo, hi): rotated, with the guard in front. */
static void counted_loop(Cg *c, const LoopPlan *p, LLVMValueRef lo, LLVMValueRef hi,
                         LLVMValueRef first) {
  LLVMTypeRef t = cg_lty(c, p->ct);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->B);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "loop");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "loop.end");
  LLVMBuildCondBr(c->B, LLVMBuildICmp(c->B, LLVMIntSLT, lo, hi, ""), body, done);
  LLVMPositionBuilderAtEnd(c->B, body);
  LLVMValueRef iv = LLVMBuildPhi(c->B, t, "i");
  loop_body(c, p, iv, first);
  if (c->failed) return;
  LLVMValueRef next = LLVMBuildAdd(c->B, iv, LLVMConstInt(t, 1, 0), "");
  LLVMSetNSW(next, 1);
  LLVMValueRef br =
      LLVMBuildCondBr(c->B, LLVMBuildICmp(c->B, LLVMIntSLT, next, hi, ""), body, done);
  bool innermost = p->level + 1 == p->s->u.for_.nvars;
  loop_metadata(c, br, p->s->u.for_.loop, innermost, p->const_trip,
                innermost && p->s->u.for_.loop == LOOP_RANGE && has_unrolled(p->s->u.for_.body));
  LLVMValueRef in[] = {lo, next};
  LLVMBasicBlockRef from[] = {pre, LLVMGetInsertBlock(c->B)};
  LLVMAddIncoming(iv, in, from, 2);
  LLVMPositionBuilderAtEnd(c->B, done);
}

/* A parallel loop: the body is outlined and run by the runtime's pool. */
static void parallel_loop(Cg *c, const LoopPlan *p, LLVMValueRef lo, LLVMValueRef hi) {
  int n = scope_args(c, NULL);
  LLVMValueRef *vals = malloc(sizeof *vals * ((size_t)n + 2));
  if (!vals) abort();
  scope_args(c, vals);
  /* the loop's first value, its begin: a chunk's lo is not (the init rule) */
  vals[n] = cg_convert(c, (CVal){lo, p->ct}, DT_INT64).v;
  LLVMTypeRef at = LLVMArrayType2(c->i64, (uint64_t)n + 1);
  LLVMValueRef clo = LLVMBuildAlloca(c->fn->alloca_b, at, "closure");
  LLVMSetAlignment(clo, 16);
  for (int i = 0; i <= n; i++) {
    LLVMValueRef o = i64c(c, 8 * i);
    LLVMBuildStore(c->B, vals[i], LLVMBuildGEP2(c->B, c->i8, clo, &o, 1, ""));
  }
  char name[96];
  snprintf(name, sizeof name, "%s.par%d", c->sym, c->nbodies++);
  LLVMTypeRef ps[] = {c->ptr, c->i64, c->i64, c->ptr};
  LLVMValueRef outer = LLVMAddFunction(c->M, name, LLVMFunctionType(c->i32, ps, 4, 0));
  LLVMSetLinkage(outer, LLVMInternalLinkage);
  add_fn_attr(c, outer, "nounwind");
  Saved sv = save_scope(c);
  LLVMBasicBlockRef ob = LLVMAppendBasicBlockInContext(c->C, outer, "entry");
  LLVMPositionBuilderAtEnd(c->B, ob);
  LLVMValueRef *args = malloc(sizeof *args * ((size_t)n + 4));
  if (!args) abort();
  for (int i = 0; i <= n; i++) {
    LLVMValueRef o = i64c(c, 8 * i);
    LLVMValueRef ptr = LLVMBuildGEP2(c->B, c->i8, LLVMGetParam(outer, 0), &o, 1, "");
    args[i] = LLVMBuildLoad2(c->B, i < n ? LLVMTypeOf(vals[i]) : c->i64, ptr, "");
  }
  args[n + 1] = LLVMGetParam(outer, 1), args[n + 2] = LLVMGetParam(outer, 2);
  args[n + 3] = LLVMGetParam(outer, 3);
  FnState fs;
  LLVMValueRef extra[3];
  strncat(name, ".inner", sizeof name - strlen(name) - 1);
  LLVMValueRef inner = open_inner(c, name, 3, &fs, extra);
  fs.outlined = true;
  int depth = c->loop_depth;
  c->loop_depth = 0;
  LLVMValueRef clo_lo = cg_convert(c, (CVal){extra[1], DT_INT64}, p->ct).v;
  LLVMValueRef clo_hi = cg_convert(c, (CVal){extra[2], DT_INT64}, p->ct).v;
  LLVMValueRef first = cg_convert(c, (CVal){extra[0], DT_INT64}, p->ct).v;
  counted_loop(c, p, clo_lo, clo_hi, first);
  c->loop_depth = depth;
  end_fn(c, &fs);
  LLVMPositionBuilderAtEnd(c->B, ob);
  LLVMValueRef rc =
      LLVMBuildCall2(c->B, LLVMGlobalGetValueType(inner), inner, args, (unsigned)n + 4, "");
  LLVMBuildRet(c->B, rc);
  restore_scope(c, &sv);
  LLVMValueRef rt_args[] = {outer, clo, cg_convert(c, (CVal){lo, p->ct}, DT_INT64).v,
                            cg_convert(c, (CVal){hi, p->ct}, DT_INT64).v, c->fn->ctx};
  LLVMTypeRef rps[] = {c->ptr, c->ptr, c->i64, c->i64, c->ptr};
  propagate(c, cg_call_rt(c, "rly_rt_parallel_for", c->i32, rps, 5, rt_args));
  free(vals), free(args);
}

static CVal int_expr(Cg *c, const PrimExpr *e, const char *what) {
  CVal x = cg_expr(c, e);
  if (x.v && !cg_is_int(x.dt)) cg_fail(c, "@%s: %s must be an integer", c->f->name, what);
  return c->failed ? (CVal){0} : x;
}

/* One variable of a `for`: picks the counter width (i32 for an int32
 * variable whose bounds fit in 32 bits), the variable's range for later
 * bounds proofs, and a parallel or counted loop. */
static void c_loop_level(Cg *c, const Stmt *s, int level) {
  const PrimExpr *lo_e = tir_for_lo(s, level); /* NULL: from 0 */
  const PrimExpr *hi_e = s->u.for_.hi[level];
  CVal lo = lo_e ? int_expr(c, lo_e, "a loop bound") : (CVal){LLVMConstInt(c->i32, 0, 0), DT_INT32};
  CVal hi = lo.v ? int_expr(c, hi_e, "a loop bound") : lo;
  if (!hi.v) return;
  LoopPlan p = {s, level, s->u.for_.vars[level], DT_INT64, DT_INT64, {0}, false};
  p.vt = cg_is_int(p.var->dtype) ? p.var->dtype : hi.dt;
  bool narrow = (cg_is_signed(lo.dt) || lo.dt == DT_BOOL) && cg_dtype_bits(lo.dt) <= 32 &&
                (cg_is_signed(hi.dt) || hi.dt == DT_BOOL) && cg_dtype_bits(hi.dt) <= 32;
  p.ct = p.vt == DT_INT32 && narrow ? DT_INT32 : DT_INT64;
  Range rl = lo_e ? cg_range(c, lo_e) : (Range){true, cg_lin_const(0), cg_lin_const(0)};
  Range rh = cg_range(c, hi_e);
  if (rl.ok && rh.ok && (p.vt == DT_INT32 || p.vt == DT_INT64)) {
    Lin one = cg_lin_const(1), top;
    if (cg_lin_sub(&rh.hi, &one, &top)) {
      p.r = (Range){true, rl.lo, top};
      if (p.vt == DT_INT32 && (top.n || rl.lo.n || top.c > INT32_MAX || rl.lo.c < INT32_MIN))
        p.r.ok = false;
    }
  }
  p.const_trip = LLVMIsAConstantInt(lo.v) && LLVMIsAConstantInt(hi.v);
  LLVMValueRef lov = cg_convert(c, lo, p.ct).v, hiv = cg_convert(c, hi, p.ct).v;
  if (s->u.for_.loop == LOOP_PARALLEL && level == 0 && !c->fn->outlined)
    parallel_loop(c, &p, lov, hiv);
  else
    counted_loop(c, &p, lov, hiv, lov);
}

static void c_for(Cg *c, const Stmt *s) {
  if (s->u.for_.nvars < 1 || cg_copy_loop(c, s) || cg_vector_loop(c, s)) return;
  c_loop_level(c, s, 0);
}

/* Collects, once each, the loop variables used by e whose "first value"
 * flag exists; a block's init is due when all of them are at their first.
 * Load indices are not looked into (a binding has no load: the verifier). */
typedef struct Checks {
  Cg *c;
  int *out, n;
} Checks;

static bool check_var(void *ctx, const PrimExpr *e) {
  Checks *k = ctx;
  if (e->kind != PE_VAR) return e->kind != PE_LOAD;
  const VarB *v = cg_find_var(k->c, e->u.var);
  if (!v || !v->first) return false;
  int idx = (int)(v - k->c->vars);
  for (int i = 0; i < k->n; i++)
    if (k->out[i] == idx) return false;
  k->out[k->n++] = idx;
  return false;
}

/* init runs when every loop variable of the reduce bindings is at its first value. */
static LLVMValueRef init_due(Cg *c, const Stmt *s) {
  Checks k = {c, malloc(sizeof(int) * ((size_t)c->nvars + 1)), 0};
  if (!k.out) abort();
  TirVisitor v = {NULL, check_var, &k};
  for (int i = 0; i < s->u.block.niters; i++)
    if (s->u.block.iters[i].reduce) tir_walk_expr(s->u.block.iters[i].binding, &v);
  LLVMValueRef due = LLVMConstInt(c->i1, 1, 0);
  for (int i = 0; i < k.n; i++) {
    const VarB *x = &c->vars[k.out[i]];
    due = LLVMBuildAnd(c->B, due, LLVMBuildICmp(c->B, LLVMIntEQ, x->v, x->first, ""), "");
  }
  free(k.out);
  return due;
}

/* A block: its iteration variables are bound (all from the enclosing
 * scope), the init part runs under the init_due condition, then the body;
 * the variables go out of scope after it. */
static void c_block(Cg *c, const Stmt *s) {
  int nv = c->nvars, ni = s->u.block.niters;
  VarB *bound = malloc(sizeof(VarB) * ((size_t)ni + 1));
  if (!bound) abort();
  for (int i = 0; i < ni && !c->failed; i++) { /* bindings see the enclosing scope only */
    const IterVar *it = &s->u.block.iters[i];
    CVal x = int_expr(c, it->binding, "a block binding");
    if (!x.v) break;
    DType dt = cg_is_int(it->var->dtype) ? it->var->dtype : x.dt;
    Range r = cg_range(c, it->binding);
    if (dt != x.dt && !(dt == DT_INT64 && x.dt == DT_INT32)) r.ok = false;
    bound[i] = (VarB){it->var, cg_convert(c, x, dt).v, dt, NULL, r};
  }
  if (c->failed) {
    free(bound);
    return;
  }
  LLVMValueRef due = s->u.block.init ? init_due(c, s) : NULL;
  for (int i = 0; i < ni; i++) push_var(c, bound[i]);
  free(bound);
  if (due) {
    LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "init");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "init.end");
    LLVMBuildCondBr(c->B, due, yes, next);
    LLVMPositionBuilderAtEnd(c->B, yes);
    cstmt(c, s->u.block.init);
    LLVMBuildBr(c->B, next);
    LLVMPositionBuilderAtEnd(c->B, next);
  }
  cstmt(c, s->u.block.body);
  c->nvars = nv;
}

static void c_store(Cg *c, const Stmt *s) {
  LLVMValueRef p = cg_access(c, cg_site(c, s), s->u.store.buf, s->u.store.n, s->u.store.idx);
  if (!p) return;
  const BufB *b = cg_find_buf(c, s->u.store.buf);
  CVal v = cg_convert(c, cg_expr(c, s->u.store.value), b->b->dtype);
  if (v.v) cg_store_elem(c, p, b->b->dtype, v.v);
}

/* An alloc, zero-filled like the interpreter's (not when the rule that made
 * it stores every element first: Buffer.no_init).  Small constant sizes use
 * the stack; others are heap blocks, a new one each time the alloc runs
 * (the one before freed), the last freed at the function's exit block. */
static void c_alloc(Cg *c, const Stmt *s) {
  const Buffer *b = s->u.alloc;
  LLVMValueRef bytes = i64c(c, elem_bytes(b->dtype));
  int64_t cbytes = elem_bytes(b->dtype);
  bool constant = true;
  for (int d = 0; d < b->ndim; d++) {
    LLVMValueRef dim = dim_value(c, b, d);
    if (!dim) return;
    constant = constant && b->dims[d].kind == DIM_CONST;
    if (constant && __builtin_mul_overflow(cbytes, b->dims[d].value, &cbytes)) constant = false;
    bytes = LLVMBuildMul(c->B, bytes, dim, "");
  }
  LLVMValueRef p;
  if (constant && cbytes <= STACK_ALLOC_MAX) {
    p = LLVMBuildArrayAlloca(c->fn->alloca_b, c->i8, i64c(c, cbytes ? cbytes : 1), b->name);
    LLVMSetAlignment(p, 64);
    if (!b->no_init) LLVMBuildMemSet(c->B, p, LLVMConstInt(c->i8, 0, 0), bytes, 64);
  } else {
    FnState *fs = c->fn;
    LLVMValueRef slot = LLVMBuildAlloca(fs->alloca_b, c->ptr, "heap");
    LLVMBuildStore(fs->alloca_b, LLVMConstPointerNull(c->ptr), slot);
    if (fs->nheap == fs->capheap) {
      fs->capheap = fs->capheap ? 2 * fs->capheap : 4;
      fs->heap = realloc(fs->heap, sizeof *fs->heap * (size_t)fs->capheap);
      if (!fs->heap) abort();
    }
    fs->heap[fs->nheap++] = slot;
    /* An alloc inside a loop frees the block of the iteration before and
     * takes a new one (zeroed by the host): the pointer is then the result
     * of a malloc-like call, which LLVM knows aliases nothing else, so
     * accesses to other buffers in the loop stay in registers. */
    LLVMValueRef cur = LLVMBuildLoad2(c->B, c->ptr, slot, "");
    LLVMBasicBlockRef drop = LLVMAppendBasicBlockInContext(c->C, fs->fn, "alloc.free");
    LLVMBasicBlockRef fresh = LLVMAppendBasicBlockInContext(c->C, fs->fn, "alloc");
    LLVMBuildCondBr(c->B, LLVMBuildIsNull(c->B, cur, ""), fresh, drop);
    LLVMPositionBuilderAtEnd(c->B, drop);
    cg_call_rt(c, "rly_rt_free", c->vd, &c->ptr, 1, &cur);
    LLVMBuildStore(c->B, LLVMConstPointerNull(c->ptr),
                   slot); /* a failed alloc frees nothing twice */
    LLVMBuildBr(c->B, fresh);
    LLVMPositionBuilderAtEnd(c->B, fresh);
    p = cg_call_rt(c, b->no_init ? "rly_rt_alloc_raw" : "rly_rt_alloc", c->ptr, &c->i64, 1, &bytes);
    cg_check(c, LLVMBuildIsNull(c->B, p, ""), JIT_E_ALLOC, cg_site(c, s), bytes, NULL, NULL);
    LLVMBuildStore(c->B, p, slot);
  }
  push_buf(c, b, p);
}

static void c_let(Cg *c, const Stmt *s) {
  CVal v = cg_expr(c, s->u.let.value);
  if (!v.v) return;
  const TirVar *x = s->u.let.var;
  DType dt = x->dtype != DT_INVALID ? x->dtype : v.dt;
  Range r = cg_range(c, s->u.let.value);
  if (dt != v.dt && !(dt == DT_INT64 && v.dt == DT_INT32)) r.ok = false;
  push_var(c, (VarB){x, cg_convert(c, v, dt).v, dt, NULL, r});
}

/* if/else as three blocks; declarations inside a branch are scoped to it. */
static void c_if(Cg *c, const Stmt *s) {
  CVal cond = cg_convert(c, cg_expr(c, s->u.if_.cond), DT_BOOL);
  if (!cond.v) return;
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "then");
  LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "else");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->C, c->fn->fn, "endif");
  LLVMBuildCondBr(c->B, cond.v, tb, eb);
  LLVMPositionBuilderAtEnd(c->B, tb);
  int nv = c->nvars, nb = c->nbufs;
  cstmt(c, s->u.if_.then_);
  c->nvars = nv, c->nbufs = nb;
  LLVMBuildBr(c->B, join);
  LLVMPositionBuilderAtEnd(c->B, eb);
  if (s->u.if_.else_) cstmt(c, s->u.if_.else_);
  c->nvars = nv, c->nbufs = nb;
  LLVMBuildBr(c->B, join);
  LLVMPositionBuilderAtEnd(c->B, join);
}

static void cstmt(Cg *c, const Stmt *s) {
  if (c->failed || !s) return;
  switch (s->kind) {
    case ST_SEQ:
      c_seq(c, s);
      return;
    case ST_FOR:
      c_for(c, s);
      return;
    case ST_BLOCK:
      c_block(c, s);
      return;
    case ST_STORE:
      c_store(c, s);
      return;
    case ST_ALLOC:
      c_alloc(c, s);
      return;
    case ST_LET:
      c_let(c, s);
      return;
    case ST_IF:
      c_if(c, s);
      return;
  }
}

/* ─────────────────────────── the kernel ─────────────────────────── */

static void init_types(Cg *c) {
  c->i1 = LLVMInt1TypeInContext(c->C), c->i8 = LLVMInt8TypeInContext(c->C);
  c->i16 = LLVMInt16TypeInContext(c->C), c->i32 = LLVMInt32TypeInContext(c->C);
  c->i64 = LLVMInt64TypeInContext(c->C), c->f32 = LLVMFloatTypeInContext(c->C);
  c->f64 = LLVMDoubleTypeInContext(c->C), c->ptr = LLVMPointerTypeInContext(c->C, 0);
  c->vd = LLVMVoidTypeInContext(c->C);
}

/* The C-ABI wrapper: loads buffers and sizes, calls sym.inner. */
static void build_kernel(Cg *c) {
  const PrimFunc *f = c->f;
  LLVMTypeRef ps[] = {c->ptr, c->ptr, c->ptr};
  LLVMValueRef w = LLVMAddFunction(c->M, c->sym, LLVMFunctionType(c->i32, ps, 3, 0));
  add_fn_attr(c, w, "nounwind");
  LLVMBasicBlockRef wb = LLVMAppendBasicBlockInContext(c->C, w, "entry");
  LLVMPositionBuilderAtEnd(c->B, wb);
  for (int i = 0; i < f->nsizevars; i++) {
    LLVMValueRef o = i64c(c, i);
    LLVMValueRef v = LLVMBuildLoad2(c->B, c->i64,
                                    LLVMBuildGEP2(c->B, c->i64, LLVMGetParam(w, 1), &o, 1, ""), "");
    Range r = {true, {.n = 1, .sv = {i}, .k = {1}}, {.n = 1, .sv = {i}, .k = {1}}};
    push_var(c, (VarB){f->sizevars[i], v, DT_INT64, NULL, r});
  }
  rebind_sizes(c);
  for (int i = 0; i < f->nparams; i++) {
    LLVMValueRef o = i64c(c, i);
    LLVMValueRef p = LLVMBuildLoad2(c->B, c->ptr,
                                    LLVMBuildGEP2(c->B, c->ptr, LLVMGetParam(w, 0), &o, 1, ""), "");
    push_buf(c, f->params[i], p);
  }
  int n = scope_args(c, NULL);
  LLVMValueRef *args = malloc(sizeof *args * ((size_t)n + 1));
  if (!args) abort();
  scope_args(c, args);
  args[n] = LLVMGetParam(w, 2);
  char name[96];
  snprintf(name, sizeof name, "%s.inner", c->sym);
  Saved sv = save_scope(c);
  FnState fs;
  LLVMValueRef inner = open_inner(c, name, 0, &fs, NULL);
  cstmt(c, f->body);
  if (!c->failed)
    end_fn(c, &fs);
  else
    LLVMDisposeBuilder(fs.alloca_b), free(fs.heap);
  restore_scope(c, &sv);
  LLVMPositionBuilderAtEnd(c->B, wb);
  LLVMBuildRet(
      c->B, LLVMBuildCall2(c->B, LLVMGlobalGetValueType(inner), inner, args, (unsigned)n + 1, ""));
  free(args);
}

/* Declared vector variants (_ZGV*, codegen_expr.c) stay in the module until
 * the loop vectorizer has seen them: @llvm.compiler.used, as LLVM's own
 * InjectTLIMappings keeps them. */
static void keep_variants(Cg *c) {
  LLVMValueRef kept[64];
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(c->M); fn && n < 64; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    if (len > 4 && strncmp(name, "_ZGV", 4) == 0) kept[n++] = fn;
  }
  if (!n) return;
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c->C, 0);
  LLVMValueRef arr = LLVMConstArray2(ptr, kept, n);
  LLVMValueRef g = LLVMAddGlobal(c->M, LLVMTypeOf(arr), "llvm.compiler.used");
  LLVMSetInitializer(g, arr);
  LLVMSetLinkage(g, LLVMAppendingLinkage);
  LLVMSetSection(g, "llvm.metadata");
}

LLVMModuleRef cg_build(LLVMContextRef ctx, const PrimFunc *f, const JitCompileOpts *o,
                       const RlyJitHost *host, const char *sym, char *err, size_t errn) {
  Cg c = {.C = ctx, .f = f, .o = o, .host = host, .sym = sym, .err = err, .errn = errn};
  init_types(&c);
  c.M = LLVMModuleCreateWithNameInContext(f->name, ctx);
  c.B = LLVMCreateBuilderInContext(ctx);
  c.sites = jit_sites(f, &c.nsites);
  c.sizes = calloc((size_t)f->nsizevars + 1, sizeof *c.sizes);
  if (!c.sizes) abort();
  if (!f->body)
    cg_fail(&c, "@%s has no body", f->name);
  else
    build_kernel(&c);
  if (!c.failed) keep_variants(&c);
  char *msg = NULL;
  if (!c.failed && LLVMVerifyModule(c.M, LLVMReturnStatusAction, &msg)) {
    cg_fail(&c, "@%s: invalid LLVM IR: %.300s", f->name, msg ? msg : "");
  }
  if (msg) LLVMDisposeMessage(msg);
  LLVMDisposeBuilder(c.B);
  free(c.sites), free(c.vars), free(c.bufs), free(c.sizes);
  if (c.failed) {
    LLVMDisposeModule(c.M);
    return NULL;
  }
  return c.M;
}
