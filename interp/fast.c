/* fast.c — the interpreter's scalar fast path: @functions whose every value
 * is a scalar (a rank-0 tensor of bool, an integer or a float dtype), a
 * reference to one, or `()` are compiled, when first called, to a register
 * code where scalars are unboxed.
 *
 * What compiles: constants, variables, let, `;`, if, dataflow, ref / ref_read
 * / ref_write (and ref(@state_global)), calls of the elementwise ops
 * (binary arithmetic, comparisons, logical and bitwise ops, unary math,
 * cast) and calls of other compiled @functions.  A function using anything
 * else (tensors of rank > 0, tuples, closures, ADTs, match, random ops,
 * attributes) is not compiled, and neither is one that calls such a
 * function, so compiled code only ever calls compiled code: the slow
 * machine (eval.c) enters it from `enter` with boxed arguments and gets a
 * boxed result.
 *
 * Semantics are the slow path's, bit for bit:
 * - every op runs the kernels' own element code (scalar_ops.h), except the
 *   hot add/subtract/multiply/comparisons, which are inlined with the same
 *   lane arithmetic (integers in 64 bits, narrowed to the dtype's width;
 *   float32 in float, float64 in double);
 * - result dtypes are the type checker's (Expr.ty);
 * - errors carry the failing call's span, and the frames of compiled calls
 *   are pushed as K_RETURN continuations so eval.c reports the same call
 *   stack; non-tail calls count toward InterpOptions.max_depth with the same
 *   message; tail calls replace their frame (a self tail call is a jump);
 * - Ctrl-C is polled every 1024 calls; the collector runs at calls when it
 *   is wanted, marking the Values (refs) held in registers.
 *
 * Refs: a ref cell normally points at a boxed tensor.  A write from
 * compiled code stores a fresh rank-0 tensor flagged cell_private (only
 * this cell points at it); later writes update that tensor in place.  Every
 * generic read of a cell (eval.c) clears the flag, so aliasing (including
 * ref(@state_global)) is observed exactly as on the slow path.
 *
 * Compiled code depends on the module it was compiled against (callees are
 * resolved once): fast_validate drops it when a callee or state global it
 * names is no longer the same definition.  RLY_FAST=0 (InterpOptions.
 * no_fast) turns the fast path off, for comparing the two paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"
#include "kernels/scalar_ops.h"

enum { MAX_PARAMS = 16 };

typedef enum FKind { FK_SCALAR, FK_REF, FK_UNIT } FKind;

typedef enum FOp {
  F_MOV,
  F_JMP,
  F_JZ, /* jump to t if register b is false */
  F_ADD_I,
  F_SUB_I,
  F_MUL_I, /* integer lanes, narrowed to dt */
  F_ADD_L,
  F_SUB_L, /* 64-bit integers: no narrowing */
  F_ADD_F,
  F_SUB_F,
  F_MUL_F,
  F_DIV_F,
  F_ADD_D,
  F_SUB_D,
  F_MUL_D,
  F_DIV_D,
  F_CMP_I,
  F_CMP_U,
  F_CMP_F,
  F_CMP_D, /* aux: a Cmp */
  F_BR_I,  /* F_CMP_I, then F_JZ on its result */
  F_BIN,   /* any binary op through the kernels' element code */
  F_UN,
  F_CAST,
  F_REF_NEW,    /* a = ref(b) of dtype dt */
  F_REF_GLOBAL, /* a = ref(@g) */
  F_REF_READ,   /* a = b^ */
  F_REF_WRITE,  /* a := b */
  F_CALL,       /* a = p(args) */
  F_TAIL,       /* return p(args) */
  F_SELF,       /* return (this function)(args): a jump (the arguments were moved) */
  F_RET,        /* return b (b < 0: unit) */
} FOp;

typedef enum Cmp { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE } Cmp;

typedef struct FIns {
  uint8_t op, dt, dt2, aux;
  int32_t a, b, c;
  int32_t t;           /* jump target (code index) */
  const void *p;       /* callee FastFn, StateGlobal */
  const Expr *e;       /* the node (span, callee name) */
  const int32_t *args; /* call arguments' registers */
} FIns;

/* What a compiled function depends on in the module. */
typedef struct FDep {
  const char *name;
  const void *def; /* Function* or StateGlobal* */
} FDep;

typedef struct FastFn {
  Proc *proc;
  const char *name;
  int nparams, nregs;
  uint8_t pkind[MAX_PARAMS];
  DType pdt[MAX_PARAMS];
  FKind rkind;
  DType rdt;
  FIns *code;
  int ncode;
  int nconst;
  int32_t *const_reg;
  FReg *const_val;
  uint8_t *is_ref; /* per register: holds a Value */
  FDep *deps;
  int ndeps;
  struct FastFn **callees;
  int ncallees;
  bool eligible;
  Arena arena;
} FastFn;

/* ───────────────────────────── elements ───────────────────────────── */

static bool scalar_dtype(DType dt) { return dt >= 0 && dt < DT_COUNT; }

/* A register from one element stored as dt. */
static inline FReg load_elem(DType dt, const void *p) {
  FReg r;
  r.u = 0;
  switch (dt) {
    case DT_BOOL:
    case DT_UINT8: {
      uint8_t x;
      memcpy(&x, p, 1);
      r.u = x;
    } break;
    case DT_UINT16:
    case DT_FLOAT16:
    case DT_BFLOAT16: {
      uint16_t x;
      memcpy(&x, p, 2);
      r.u = x;
    } break;
    case DT_UINT32: {
      uint32_t x;
      memcpy(&x, p, 4);
      r.u = x;
    } break;
    case DT_UINT64:
      memcpy(&r.u, p, 8);
      break;
    case DT_INT8: {
      int8_t x;
      memcpy(&x, p, 1);
      r.i = x;
    } break;
    case DT_INT16: {
      int16_t x;
      memcpy(&x, p, 2);
      r.i = x;
    } break;
    case DT_INT32: {
      int32_t x;
      memcpy(&x, p, 4);
      r.i = x;
    } break;
    case DT_INT64:
      memcpy(&r.i, p, 8);
      break;
    case DT_FLOAT32:
      memcpy(&r.f, p, 4);
      break;
    case DT_FLOAT64:
      memcpy(&r.d, p, 8);
      break;
    default:
      RLY_UNREACHABLE();
  }
  return r;
}

static inline void store_elem(DType dt, FReg r, void *p) {
  switch (dt) {
    case DT_BOOL:
    case DT_UINT8:
    case DT_INT8: {
      uint8_t x = (uint8_t)r.u;
      memcpy(p, &x, 1);
    } break;
    case DT_UINT16:
    case DT_INT16:
    case DT_FLOAT16:
    case DT_BFLOAT16: {
      uint16_t x = (uint16_t)r.u;
      memcpy(p, &x, 2);
    } break;
    case DT_UINT32:
    case DT_INT32: {
      uint32_t x = (uint32_t)r.u;
      memcpy(p, &x, 4);
    } break;
    case DT_UINT64:
    case DT_INT64:
      memcpy(p, &r.u, 8);
      break;
    case DT_FLOAT32:
      memcpy(p, &r.f, 4);
      break;
    case DT_FLOAT64:
      memcpy(p, &r.d, 8);
      break;
    default:
      RLY_UNREACHABLE();
  }
}

/* An integer lane value narrowed (mod 2^bits) to dt, as kernels store it. */
static inline FReg narrow(DType dt, uint64_t v) {
  FReg r;
  switch (dt) {
    case DT_INT8:
      r.i = (int8_t)v;
      break;
    case DT_INT16:
      r.i = (int16_t)v;
      break;
    case DT_INT32:
      r.i = (int32_t)v;
      break;
    case DT_INT64:
      r.i = (int64_t)v;
      break;
    case DT_BOOL:
      r.u = v != 0;
      break;
    case DT_UINT8:
      r.u = (uint8_t)v;
      break;
    case DT_UINT16:
      r.u = (uint16_t)v;
      break;
    case DT_UINT32:
      r.u = (uint32_t)v;
      break;
    default:
      r.u = v;
      break;
  }
  return r;
}

static Value *box(Interp *in, DType dt, FReg r, bool cell_private) {
  RtTensor *t = rt_tensor_new(dt, 0, NULL, in->err, sizeof in->err);
  if (!t) return NULL;
  store_elem(dt, r, t->data);
  Value *v = value_tensor(in, t);
  v->cell_private = cell_private;
  return v;
}

/* ───────────────────────────── compiling ───────────────────────────── */

typedef struct Comp {
  Interp *in;
  FastFn *f;
  FIns *code;
  size_t ncode, capcode;
  IdMap vars;    /* Var id → register (R_UNIT for `()`) */
  uint8_t *kind; /* per register: FKind */
  uint8_t *dt;   /* per register: DType */
  size_t capregs;
  int32_t *creg;
  FReg *cval;
  size_t nconst, capconst;
  PtrVec deps;
  PtrVec callees;
  bool ok;
} Comp;

enum { R_UNIT = -1, R_FAIL = -2 };

static void *grow_to(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  p = realloc(p, c * elem);
  if (!p) rly_oom();
  *cap = c;
  return p;
}

static int new_reg(Comp *c, FKind k, DType dt) {
  int r = c->f->nregs++;
  size_t cap = c->capregs;
  c->kind = grow_to(c->kind, &cap, (size_t)r + 1, 1);
  c->dt = grow_to(c->dt, &c->capregs, (size_t)r + 1, 1); /* same growth as kind */
  c->kind[r] = (uint8_t)k, c->dt[r] = (uint8_t)dt;
  return r;
}

static FIns *emit(Comp *c, FOp op) {
  c->code = grow_to(c->code, &c->capcode, c->ncode + 1, sizeof(FIns));
  FIns *i = &c->code[c->ncode++];
  memset(i, 0, sizeof *i);
  i->op = (uint8_t)op;
  return i;
}

static int fail_c(Comp *c) {
  c->ok = false;
  return R_FAIL;
}

/* The kind of values of type t, false if the fast path cannot hold them. */
static bool kind_of(const Type *t, FKind *k, DType *dt) {
  if (!t) return false;
  if (t->kind == TY_TENSOR && t->u.tensor.ndim == 0 && scalar_dtype(t->u.tensor.dtype)) {
    *k = FK_SCALAR, *dt = t->u.tensor.dtype;
    return true;
  }
  if (t->kind == TY_REF) {
    const Type *i = t->u.ref.inner;
    if (!i || i->kind != TY_TENSOR || i->u.tensor.ndim != 0 || !scalar_dtype(i->u.tensor.dtype))
      return false;
    *k = FK_REF, *dt = i->u.tensor.dtype;
    return true;
  }
  if (t->kind == TY_TUPLE && t->u.tuple.n == 0) {
    *k = FK_UNIT, *dt = DT_BOOL;
    return true;
  }
  return false;
}

static bool reg_is(const Comp *c, int r, FKind k, DType dt) {
  if (r == R_UNIT) return k == FK_UNIT;
  return r >= 0 && c->kind[r] == k && (k == FK_UNIT || c->dt[r] == dt);
}

static int gen(Comp *c, const Expr *e);
static void gen_tail(Comp *c, const Expr *e);

static int gen_const(Comp *c, const Expr *e) {
  const Tensor *t = e->u.konst.value;
  if (!t || t->ndim != 0 || !scalar_dtype(t->dtype) || !t->data) return fail_c(c);
  int r = new_reg(c, FK_SCALAR, t->dtype);
  size_t cap = c->capconst;
  c->creg = grow_to(c->creg, &cap, c->nconst + 1, sizeof(int32_t));
  c->cval = grow_to(c->cval, &c->capconst, c->nconst + 1, sizeof(FReg)); /* same growth */
  c->creg[c->nconst] = r;
  c->cval[c->nconst++] = load_elem(t->dtype, t->data);
  return r;
}

static void bindv(Comp *c, const Var *v, int r) {
  if (v) idmap_put(&c->vars, v->id, r);
}

static int gen_var(Comp *c, const Expr *e) {
  int64_t r;
  if (!idmap_get(&c->vars, e->u.var->id, &r)) return fail_c(c);
  return (int)r;
}

/* The registers of a call's arguments, in the FastFn's arena. */
static int32_t *gen_args(Comp *c, const Expr *e) {
  int n = e->u.call.nargs;
  int32_t *a = ARENA_ARRAY(&c->f->arena, int32_t, n ? n : 1);
  for (int i = 0; i < n && c->ok; i++) a[i] = gen(c, e->u.call.args[i]);
  return a;
}

/* The hot ops, inlined: a dedicated instruction or -1. */
static int inline_op(int binop, DType dt, int *aux) {
  int which = -1, cmp = -1; /* which: add, subtract, multiply, divide */
  switch ((BinOp)binop) {
    case B_ADD:
      which = 0;
      break;
    case B_SUB:
      which = 1;
      break;
    case B_MUL:
      which = 2;
      break;
    case B_DIV:
      which = 3;
      break;
    case B_EQ:
      cmp = C_EQ;
      break;
    case B_NE:
      cmp = C_NE;
      break;
    case B_LT:
      cmp = C_LT;
      break;
    case B_LE:
      cmp = C_LE;
      break;
    case B_GT:
      cmp = C_GT;
      break;
    case B_GE:
      cmp = C_GE;
      break;
    default:
      return -1;
  }
  char cls = dtype_class(dt);
  if (cmp >= 0) {
    *aux = cmp;
    if (dt == DT_FLOAT32) return F_CMP_F;
    if (dt == DT_FLOAT64) return F_CMP_D;
    if (cls == 'i') return F_CMP_I;
    if (cls == 'u' || cls == 'b') return F_CMP_U;
    return -1;
  }
  static const FOp ops_f[] = {F_ADD_F, F_SUB_F, F_MUL_F, F_DIV_F};
  static const FOp ops_d[] = {F_ADD_D, F_SUB_D, F_MUL_D, F_DIV_D};
  static const FOp ops_i[] = {F_ADD_I, F_SUB_I, F_MUL_I};
  if (dt == DT_FLOAT32) return ops_f[which];
  if (dt == DT_FLOAT64) return ops_d[which];
  if (dtype_bytes(dt) == 8 && (cls == 'i' || cls == 'u') && which < 2)
    return which == 0 ? F_ADD_L : F_SUB_L;
  if ((cls == 'i' || cls == 'u') && which < 3) return ops_i[which];
  return -1;
}

/* Compiles a scalar elementwise op call: the hot arithmetic and comparisons
 * become inline instructions, other binary, unary and cast ops a generic
 * instruction running the kernel's element code; anything else refuses. */
static int gen_op_call(Comp *c, const Expr *e, int op) {
  FKind k;
  DType odt;
  if (!kind_of(e->ty, &k, &odt) || k != FK_SCALAR) return fail_c(c);
  bool is_cast = scalar_is_cast(op);
  if (e->u.call.attrs && e->u.call.attrs->n && !is_cast) return fail_c(c);
  int n = e->u.call.nargs, bin = scalar_binop(op), un = scalar_unop(op);
  if (!((bin >= 0 && n == 2) || ((un >= 0 || is_cast) && n == 1))) return fail_c(c);
  int32_t *a = gen_args(c, e);
  if (!c->ok) return R_FAIL;
  for (int i = 0; i < n; i++)
    if (a[i] < 0 || c->kind[a[i]] != FK_SCALAR) return fail_c(c);
  DType dt = (DType)c->dt[a[0]];
  if (n == 2 && c->dt[a[1]] != dt) return fail_c(c);
  int r = new_reg(c, FK_SCALAR, odt);
  int aux = 0, fop = bin >= 0 ? inline_op(bin, dt, &aux) : -1;
  FIns *i = emit(c, fop >= 0 ? (FOp)fop : bin >= 0 ? F_BIN : un >= 0 ? F_UN : F_CAST);
  i->a = r, i->b = a[0], i->c = n == 2 ? a[1] : 0;
  i->dt = (uint8_t)dt, i->dt2 = (uint8_t)odt, i->e = e;
  i->aux = (uint8_t)(fop >= 0 ? aux : bin >= 0 ? bin : un >= 0 ? un : 0);
  return r;
}

static void add_dep(Comp *c, const char *name, const void *def) {
  FDep *d = ARENA_NEW(&c->f->arena, FDep);
  d->name = name, d->def = def;
  vec_push(&c->deps, d);
}

static FastFn *fastfn_of(Interp *in, Proc *p, const FuncDef *fd);

/* A call of @name: its FastFn (compiled later), or NULL. */
static FastFn *callee_of(Comp *c, const Expr *e) {
  const Expr *fn = e->u.call.fn;
  if (fn->kind != EX_GLOBAL || (e->u.call.attrs && e->u.call.attrs->n)) return NULL;
  const Def *d = module_lookup(c->in->mod, fn->u.global.name);
  if (!d || d->kind != DEF_FUNC) return NULL;
  FuncDef *fd = d->u.func;
  if (fd->fn->nparams != e->u.call.nargs || fd->fn->nparams > MAX_PARAMS) return NULL;
  Proc *q = proc_of(c->in, fd->fn, fd->name);
  if (q->ncap || q->fast_state < 0) return NULL;
  FastFn *g = fastfn_of(c->in, q, fd);
  if (!g) return NULL;
  add_dep(c, fd->name, fd->fn);
  vec_push(&c->callees, g);
  return g;
}

/* Arguments of a call to g, checked against g's parameter kinds. */
static int32_t *gen_call_args(Comp *c, const Expr *e, const FastFn *g) {
  int32_t *a = gen_args(c, e);
  if (!c->ok) return NULL;
  for (int i = 0; i < g->nparams; i++)
    if (!reg_is(c, a[i], (FKind)g->pkind[i], g->pdt[i]) || a[i] < 0) return fail_c(c), NULL;
  return a;
}

static int gen_call(Comp *c, const Expr *e) {
  const Expr *fn = e->u.call.fn;
  if (fn->kind == EX_OP) return gen_op_call(c, e, fn->u.op.index);
  FastFn *g = callee_of(c, e);
  if (!g) return fail_c(c);
  int32_t *a = gen_call_args(c, e, g);
  if (!a) return R_FAIL;
  int r = g->rkind == FK_UNIT ? R_UNIT : new_reg(c, g->rkind, g->rdt);
  FIns *i = emit(c, F_CALL);
  i->a = r, i->p = g, i->e = e, i->args = a, i->c = g->nparams;
  return r;
}

/* A jump to be patched if register cond is false; a comparison just
 * emitted is fused with it.  Returns the index of the instruction whose c
 * is the target. */
static size_t emit_jz(Comp *c, int cond) {
  FIns *last = c->ncode ? &c->code[c->ncode - 1] : NULL;
  if (last && last->op == F_CMP_I && last->a == cond) {
    last->op = F_BR_I;
    return c->ncode - 1;
  }
  emit(c, F_JZ)->b = cond;
  return c->ncode - 1;
}

/* `if` as a conditional jump over the then branch; both branches move
 * their value into one result register (none when the type is unit). */
static int gen_if(Comp *c, const Expr *e) {
  FKind k;
  DType dt;
  if (!kind_of(e->ty, &k, &dt)) return fail_c(c);
  int cond = gen(c, e->u.if_.cond);
  if (!reg_is(c, cond, FK_SCALAR, DT_BOOL)) return fail_c(c);
  int r = k == FK_UNIT ? R_UNIT : new_reg(c, k, dt);
  size_t jz = emit_jz(c, cond);
  const Expr *br[2] = {e->u.if_.then_, e->u.if_.else_};
  size_t jmp = 0;
  for (int b = 0; b < 2 && c->ok; b++) {
    int v = gen(c, br[b]);
    if (!reg_is(c, v, k, dt)) return fail_c(c);
    if (r >= 0) {
      FIns *m = emit(c, F_MOV);
      m->a = r, m->b = v;
    }
    if (b == 0) {
      jmp = c->ncode;
      emit(c, F_JMP);
      c->code[jz].t = (int32_t)c->ncode;
    }
  }
  c->code[jmp].t = (int32_t)c->ncode;
  return c->ok ? r : R_FAIL;
}

/* References to scalars: ref(@g) of a scalar state global takes the
 * global's own cell (recorded as a dependency, so a redefinition drops the
 * code); ref(e), reads and writes work on boxed cells. */
static int gen_ref(Comp *c, const Expr *e) {
  FKind k;
  DType dt;
  if (!kind_of(e->ty, &k, &dt)) return fail_c(c);
  switch (e->kind) {
    case EX_REF_NEW: {
      const Expr *init = e->u.ref_new.init;
      if (k != FK_REF) return fail_c(c);
      if (init->kind == EX_GLOBAL) {
        StateGlobal *g = module_state_global(c->in->mod, init->u.global.name);
        FKind gk;
        DType gdt;
        if (!g || !kind_of(g->type, &gk, &gdt) || gk != FK_SCALAR || gdt != dt) return fail_c(c);
        add_dep(c, g->name, g);
        int r = new_reg(c, FK_REF, dt);
        FIns *i = emit(c, F_REF_GLOBAL);
        i->a = r, i->p = g, i->e = e;
        return r;
      }
      int v = gen(c, init);
      if (!reg_is(c, v, FK_SCALAR, dt)) return fail_c(c);
      int r = new_reg(c, FK_REF, dt);
      FIns *i = emit(c, F_REF_NEW);
      i->a = r, i->b = v, i->dt = (uint8_t)dt;
      return r;
    }
    case EX_REF_READ: {
      int ref = gen(c, e->u.ref_read.ref);
      if (k != FK_SCALAR || !reg_is(c, ref, FK_REF, dt)) return fail_c(c);
      int r = new_reg(c, FK_SCALAR, dt);
      FIns *i = emit(c, F_REF_READ);
      i->a = r, i->b = ref, i->dt = (uint8_t)dt, i->e = e;
      return r;
    }
    default: { /* EX_REF_WRITE */
      int ref = gen(c, e->u.ref_write.ref);
      if (ref < 0 || c->kind[ref] != FK_REF) return fail_c(c);
      int v = gen(c, e->u.ref_write.value);
      if (k != FK_UNIT || !reg_is(c, v, FK_SCALAR, (DType)c->dt[ref])) return fail_c(c);
      FIns *i = emit(c, F_REF_WRITE);
      i->a = ref, i->b = v, i->dt = c->dt[ref];
      return R_UNIT;
    }
  }
}

/* Code computing e; returns its register (R_UNIT for `()`). */
static int gen(Comp *c, const Expr *e) {
  for (;;) {
    if (!c->ok) return R_FAIL;
    switch (e->kind) {
      case EX_CONST:
        return gen_const(c, e);
      case EX_VAR:
        return gen_var(c, e);
      case EX_CALL:
        return gen_call(c, e);
      case EX_TUPLE:
        return e->u.tuple.n == 0 ? R_UNIT : fail_c(c);
      case EX_LET: {
        int v = gen(c, e->u.let.value);
        if (v == R_FAIL) return R_FAIL;
        bindv(c, e->u.let.var, v);
        e = e->u.let.body;
        continue;
      }
      case EX_IF:
        return gen_if(c, e);
      case EX_REF_NEW:
      case EX_REF_READ:
      case EX_REF_WRITE:
        return gen_ref(c, e);
      case EX_DATAFLOW:
        e = e->u.dataflow.body;
        continue;
      default:
        return fail_c(c);
    }
  }
}

static void gen_ret(Comp *c, int r) {
  if (r == R_FAIL) return;
  if (!reg_is(c, r, c->f->rkind, c->f->rdt)) {
    fail_c(c);
    return;
  }
  emit(c, F_RET)->b = r;
}

/* A self tail call's arguments moved into the parameters [0, n): those read
 * from a parameter that another move overwrites go through a temporary. */
static void emit_self_moves(Comp *c, int32_t *a, int n) {
  for (int k = 0; k < n; k++)
    if (a[k] != k && a[k] < n) {
      int t = new_reg(c, (FKind)c->kind[a[k]], (DType)c->dt[a[k]]);
      FIns *m = emit(c, F_MOV);
      m->a = t, m->b = a[k];
      a[k] = t;
    }
  for (int k = 0; k < n; k++)
    if (a[k] != k) {
      FIns *m = emit(c, F_MOV);
      m->a = k, m->b = a[k];
    }
}

/* Code computing e in tail position: ends with a return or a tail call. */
static void gen_tail(Comp *c, const Expr *e) {
  for (;;) {
    if (!c->ok) return;
    switch (e->kind) {
      case EX_LET: {
        int v = gen(c, e->u.let.value);
        if (v == R_FAIL) return;
        bindv(c, e->u.let.var, v);
        e = e->u.let.body;
        continue;
      }
      case EX_DATAFLOW:
        e = e->u.dataflow.body;
        continue;
      case EX_IF: {
        int cond = gen(c, e->u.if_.cond);
        if (!reg_is(c, cond, FK_SCALAR, DT_BOOL)) {
          fail_c(c);
          return;
        }
        size_t jz = emit_jz(c, cond);
        gen_tail(c, e->u.if_.then_);
        c->code[jz].t = (int32_t)c->ncode;
        e = e->u.if_.else_;
        continue;
      }
      case EX_CALL:
        if (e->u.call.fn->kind == EX_GLOBAL) {
          FastFn *g = callee_of(c, e);
          if (!g) {
            fail_c(c);
            return;
          }
          int32_t *a = gen_call_args(c, e, g);
          if (!a) return;
          if (g->rkind != c->f->rkind || (g->rkind != FK_UNIT && g->rdt != c->f->rdt)) {
            fail_c(c);
            return;
          }
          if (g == c->f) {
            emit_self_moves(c, a, g->nparams);
            emit(c, F_SELF)->e = e;
            return;
          }
          FIns *i = emit(c, F_TAIL);
          i->p = g, i->e = e, i->args = a, i->c = g->nparams;
          return;
        }
        gen_ret(c, gen(c, e));
        return;
      default:
        gen_ret(c, gen(c, e));
        return;
    }
  }
}

/* ─────────────────────── functions and their states ─────────────────────── */

/* The kinds of fd's parameters and result, from its inferred type. */
static bool signature(FastFn *f, const FuncDef *fd) {
  const Type *t = fd->ty;
  if (!t || t->kind != TY_FUNC || t->u.func.ntparams || t->u.func.nparams != fd->fn->nparams ||
      fd->fn->ntparams || fd->fn->nparams > MAX_PARAMS)
    return false;
  f->nparams = fd->fn->nparams;
  for (int i = 0; i < f->nparams; i++) {
    FKind k;
    if (!kind_of(t->u.func.params[i], &k, &f->pdt[i])) return false;
    f->pkind[i] = (uint8_t)k;
  }
  return kind_of(t->u.func.ret, &f->rkind, &f->rdt);
}

/* Compiles one function: parameters take the first registers, the body is
 * generated in tail position, and on success the code and constants move
 * into the function's arena; f->eligible says whether it compiled. */
static void compile(Interp *in, FastFn *f, const FuncDef *fd) {
  Comp c = {.in = in, .f = f, .ok = true};
  f->nregs = 0;
  for (int i = 0; i < f->nparams; i++) {
    int r = f->pkind[i] == FK_UNIT ? R_UNIT : new_reg(&c, (FKind)f->pkind[i], f->pdt[i]);
    if (r >= 0 && r != i) c.ok = false; /* unit parameters are not supported */
    bindv(&c, fd->fn->params[i], r);
  }
  if (c.ok) gen_tail(&c, fd->fn->body);
  f->eligible = c.ok;
  if (c.ok) {
    f->code = ARENA_ARRAY(&f->arena, FIns, c.ncode ? c.ncode : 1);
    memcpy(f->code, c.code, sizeof(FIns) * c.ncode);
    f->ncode = (int)c.ncode;
    f->nconst = (int)c.nconst;
    f->const_reg = ARENA_ARRAY(&f->arena, int32_t, c.nconst + 1);
    f->const_val = ARENA_ARRAY(&f->arena, FReg, c.nconst + 1);
    if (c.nconst) {
      memcpy(f->const_reg, c.creg, sizeof(int32_t) * c.nconst);
      memcpy(f->const_val, c.cval, sizeof(FReg) * c.nconst);
    }
    f->is_ref = ARENA_ARRAY(&f->arena, uint8_t, f->nregs + 1);
    for (int r = 0; r < f->nregs; r++) f->is_ref[r] = c.kind[r] == FK_REF;
    f->ncallees = (int)c.callees.len;
    f->callees = ARENA_ARRAY(&f->arena, FastFn *, c.callees.len + 1);
    for (size_t i = 0; i < c.callees.len; i++) f->callees[i] = c.callees.items[i];
  }
  /* Dependencies are kept even when not eligible: a refusal because of a
   * callee is reconsidered when that callee changes. */
  f->ndeps = (int)c.deps.len;
  f->deps = ARENA_ARRAY(&f->arena, FDep, c.deps.len + 1);
  for (size_t i = 0; i < c.deps.len; i++) f->deps[i] = *(FDep *)c.deps.items[i];
  free(c.code), free(c.kind), free(c.dt), free(c.creg), free(c.cval);
  idmap_free(&c.vars);
  vec_free(&c.deps), vec_free(&c.callees);
}

static FastFn *fastfn_of(Interp *in, Proc *p, const FuncDef *fd) {
  if (p->fast) return p->fast;
  FastFn *f = calloc(1, sizeof *f);
  if (!f) rly_oom();
  arena_init(&f->arena);
  f->proc = p, f->name = fd->name;
  p->fast = f;
  vec_push(&in->fast.fns, f);
  if (!signature(f, fd)) {
    p->fast_state = -1;
    return NULL;
  }
  vec_push(&in->fast.pending, f); /* compiled by compile_pending */
  vec_push(&in->fast.pending, (void *)fd);
  return f;
}

/* Compiles the pending functions, then decides which run fast: the
 * eligible ones all of whose callees run fast (a fixpoint over cycles). */
static void compile_pending(Interp *in) {
  PtrVec batch = {0};
  while (in->fast.pending.len) {
    const FuncDef *fd = vec_pop(&in->fast.pending);
    FastFn *f = vec_pop(&in->fast.pending);
    compile(in, f, fd);
    vec_push(&batch, f);
  }
  for (size_t i = 0; i < batch.len; i++) {
    FastFn *f = batch.items[i];
    f->proc->fast_state = f->eligible ? 1 : -1;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < batch.len; i++) {
      FastFn *f = batch.items[i];
      if (f->proc->fast_state < 0) continue;
      for (int j = 0; j < f->ncallees; j++)
        if (f->callees[j]->proc->fast_state < 0) {
          f->proc->fast_state = -1;
          changed = true;
          break;
        }
    }
  }
  if (in->opt.fast_trace) /* for tests that check the fast path is really taken */
    for (size_t i = 0; i < batch.len; i++) {
      const FastFn *f = batch.items[i];
      fprintf(stderr, "fast: @%s %s\n", f->name, f->proc->fast_state > 0 ? "compiled" : "refused");
    }
  vec_free(&batch);
}

static bool prepare(Interp *in, Proc *p) {
  if (p->fast_state) return p->fast_state > 0;
  p->fast_state = -1;
  if (!p->fn || !p->name || p->ncap) return false; /* closures and top level: never */
  if (in->opt.no_fast || !in->mod) return false;
  const FuncDef *fd = module_func(in->mod, p->name);
  if (!fd || fd->fn != p->fn) {
    vec_push(&in->fast.undecided, p);
    return false;
  }
  p->fast_state = 0;
  if (!fastfn_of(in, p, fd)) return false;
  compile_pending(in);
  return p->fast_state > 0;
}

bool fast_accepts(Interp *in, Proc *p, Value **args, int n) {
  if (p->fast_state < 0 || !prepare(in, p)) return false;
  const FastFn *f = p->fast;
  if (n != f->nparams) return false;
  for (int i = 0; i < n; i++) {
    const Value *a = args[i];
    if (f->pkind[i] == FK_SCALAR) {
      if (a->kind != V_TENSOR || a->u.tensor->ndim != 0 || a->u.tensor->dtype != f->pdt[i])
        return false;
    } else if (f->pkind[i] == FK_REF) {
      if (a->kind != V_REF) return false;
    }
  }
  return true;
}

/* Forgets all compiled code; procs decide again on their next call. */
static void drop_all(Interp *in) {
  for (size_t i = 0; i < in->fast.fns.len; i++) {
    FastFn *f = in->fast.fns.items[i];
    f->proc->fast = NULL, f->proc->fast_state = 0;
    arena_free(&f->arena);
    free(f);
  }
  in->fast.fns.len = 0;
  for (size_t i = 0; i < in->fast.undecided.len; i++)
    ((Proc *)in->fast.undecided.items[i])->fast_state = 0;
  in->fast.undecided.len = 0;
}

/* Called before running with module m: if any compiled function's
 * dependency (a callee def or state global) is no longer the same object,
 * all compiled code is dropped, since its calls are bound to the old ones. */
void fast_validate(Interp *in, const Module *m) {
  if (m != in->mod) { /* a proc refused in one module may run fast in another */
    for (size_t i = 0; i < in->fast.undecided.len; i++)
      ((Proc *)in->fast.undecided.items[i])->fast_state = 0;
    in->fast.undecided.len = 0;
  }
  for (size_t i = 0; i < in->fast.fns.len; i++) {
    const FastFn *f = in->fast.fns.items[i];
    for (int j = 0; j < f->ndeps; j++) {
      const Def *d = module_lookup(m, f->deps[j].name);
      const void *now = !d                      ? NULL
                        : d->kind == DEF_FUNC   ? (const void *)d->u.func->fn
                        : d->kind == DEF_GLOBAL ? (const void *)d->u.global
                                                : NULL;
      if (now != f->deps[j].def) {
        drop_all(in);
        return;
      }
    }
  }
}

void fast_free(Interp *in) {
  drop_all(in);
  free(in->fast.regs);
  free(in->fast.frames);
  vec_free(&in->fast.fns);
  vec_free(&in->fast.undecided);
  vec_free(&in->fast.pending);
  in->fast = (FastStack){0};
}

void fast_mark_roots(Interp *in, void (*mark)(Interp *, Value *, uint32_t), uint32_t epoch) {
  FastStack *st = &in->fast;
  for (size_t k = 0; k < st->nframes; k++) {
    const FFrame *fr = &st->frames[k];
    for (int r = 0; r < fr->fn->nregs; r++)
      if (fr->fn->is_ref[r]) mark(in, st->regs[fr->base + (size_t)r].v, epoch);
  }
}

/* ───────────────────────────── running ───────────────────────────── */

static bool run_fail(Interp *in, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool run_fail(Interp *in, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(in->err, sizeof in->err, fmt, ap);
  va_end(ap);
  in->err_span = sp;
  return false;
}

/* Registers for a frame of f at base (the stack may move). */
static void frame_regs(FastStack *st, size_t base, const FastFn *f) {
  st->regs = grow_to(st->regs, &st->regs_cap, base + (size_t)f->nregs + 1, sizeof(FReg));
  st->nregs = base + (size_t)f->nregs;
}

/* Non-parameter registers cleared (refs must be valid for the collector),
 * constants loaded. */
static void frame_init(FReg *R, const FastFn *f) {
  memset(R + f->nparams, 0, sizeof(FReg) * (size_t)(f->nregs - f->nparams));
  for (int i = 0; i < f->nconst; i++) R[f->const_reg[i]] = f->const_val[i];
}

static FFrame *push_frame(FastStack *st) {
  st->frames = grow_to(st->frames, &st->frames_cap, st->nframes + 1, sizeof(FFrame));
  return &st->frames[st->nframes++];
}

/* A comparison (C_EQ..C_GE) in one representation of scalars. */
#define DEFINE_CMP(name, T)                  \
  static inline bool name(int c, T a, T b) { \
    switch (c) {                             \
      case C_EQ:                             \
        return a == b;                       \
      case C_NE:                             \
        return a != b;                       \
      case C_LT:                             \
        return a < b;                        \
      case C_LE:                             \
        return a <= b;                       \
      case C_GT:                             \
        return a > b;                        \
      default:                               \
        return a >= b;                       \
    }                                        \
  }
DEFINE_CMP(cmp_i, int64_t)
DEFINE_CMP(cmp_u, uint64_t)
DEFINE_CMP(cmp_d, double)
#undef DEFINE_CMP

static bool generic_op(Interp *in, const FIns *i, FReg *R) {
  uint64_t a = 0, b = 0, r = 0; /* elements stored as their dtypes */
  DType dt = (DType)i->dt, odt = (DType)i->dt2;
  store_elem(dt, R[i->b], &a);
  bool ok = true;
  switch (i->op) {
    case F_BIN:
      store_elem(dt, R[i->c], &b);
      ok = scalar_binary(&in->kx, i->aux, dt, odt, &a, &b, &r);
      break;
    case F_UN:
      ok = scalar_unary(&in->kx, i->aux, dt, odt, &a, &r);
      break;
    default:
      scalar_cast(dt, odt, &a, &r);
      break;
  }
  if (!ok) return run_fail(in, i->e->span, "%s", in->kx.err);
  R[i->a] = load_elem(odt, &r);
  return true;
}

static bool ref_read(Interp *in, const FIns *i, FReg *R) {
  const Value *c = R[i->b].v->u.ref.cell;
  if (!c || c->kind != V_TENSOR || c->u.tensor->ndim != 0 || c->u.tensor->dtype != i->dt)
    return run_fail(in, i->e->span, "the reference does not hold a %s scalar", dtype_name(i->dt));
  R[i->a] = load_elem((DType)i->dt, c->u.tensor->data);
  return true;
}

static bool ref_write(Interp *in, const FIns *i, FReg *R) {
  Value *ref = R[i->a].v, *c = ref->u.ref.cell;
  if (c && c->cell_private && c->kind == V_TENSOR && c->u.tensor->dtype == i->dt &&
      c->u.tensor->refs == 1 && c->u.tensor->buf->refs == 1 && !c->u.tensor->buf->borrowed) {
    store_elem((DType)i->dt, R[i->b], c->u.tensor->data);
    return true;
  }
  Value *v = box(in, (DType)i->dt, R[i->b], true);
  if (!v) return false;
  ref->u.ref.cell = v;
  return true;
}

static bool ref_new(Interp *in, const FIns *i, FReg *R) {
  Value *v = box(in, (DType)i->dt, R[i->b], true);
  if (!v) return false;
  Value *ref = value_new(in, V_REF, 0);
  ref->u.ref.cell = v;
  R[i->a].v = ref;
  return true;
}

/* The periodic checks at calls: Ctrl-C and the collector. */
static bool poll(Interp *in, Span sp) {
  if (rt_take_interrupt()) return run_fail(in, sp, "interrupted");
  if (rt_steps_charge(1024))
    return run_fail(in, sp, "%s", rt_steps_message()); /* every 1024 calls */
  if (in->gc_wanted) gc_collect(in);
  return true;
}

/* Pushes the frames above `first` (and updates the entry frame) as K_RETURN
 * continuations for the error report, then drops them. */
static void unwind(Interp *in, size_t first) {
  FastStack *st = &in->fast;
  for (size_t k = first; k < st->nframes; k++) {
    const FFrame *fr = &st->frames[k];
    if (k == first)
      interp_set_top_frame(in, fr->callee, fr->span);
    else
      interp_push_frame(in, fr->callee, fr->span);
  }
}

static Value *result(Interp *in, const FastFn *f, FReg v) {
  switch (f->rkind) {
    case FK_SCALAR:
      return box(in, f->rdt, v, false);
    case FK_REF:
      return v.v;
    default:
      return value_unit(in);
  }
}

static const char *callee_name(const FIns *i) { return ((const FastFn *)i->p)->name; }

/* The register machine: unboxes the arguments, runs until the entry frame
 * returns, and boxes the result.  Calls between compiled functions stay in
 * this loop; a self tail call is a jump, other tail calls reuse the frame.
 * R is recomputed after anything that may grow the register stack. */
Value *fast_run(Interp *in, Proc *p, Value **args, const char *name, Span sp) {
  FastStack *st = &in->fast;
  FastFn *f = p->fast;
  size_t first = st->nframes, saved_nregs = st->nregs, base = st->nregs;
  frame_regs(st, base, f);
  FReg *R = st->regs + base;
  for (int k = 0; k < f->nparams; k++)
    R[k] = f->pkind[k] == FK_SCALAR ? load_elem(f->pdt[k], args[k]->u.tensor->data)
                                    : (FReg){.v = args[k]};
  frame_init(R, f);
  FFrame *fr = push_frame(st);
  *fr = (FFrame){f, NULL, base, 0, name, sp};
  const FIns *pc = f->code;
  uint32_t ticks = 0;
  Value *out = NULL;
  for (;;) {
    const FIns *i = pc++;
    switch ((FOp)i->op) {
      case F_MOV:
        R[i->a] = R[i->b];
        break;
      case F_JMP:
        pc = f->code + i->t;
        break;
      case F_JZ:
        if (!R[i->b].u) pc = f->code + i->t;
        break;
      case F_ADD_I:
        R[i->a] = narrow((DType)i->dt, R[i->b].u + R[i->c].u);
        break;
      case F_ADD_L:
        R[i->a].u = R[i->b].u + R[i->c].u;
        break;
      case F_SUB_L:
        R[i->a].u = R[i->b].u - R[i->c].u;
        break;
      case F_SUB_I:
        R[i->a] = narrow((DType)i->dt, R[i->b].u - R[i->c].u);
        break;
      case F_MUL_I:
        R[i->a] = narrow((DType)i->dt, R[i->b].u * R[i->c].u);
        break;
      case F_ADD_F:
        R[i->a].f = R[i->b].f + R[i->c].f;
        break;
      case F_SUB_F:
        R[i->a].f = R[i->b].f - R[i->c].f;
        break;
      case F_MUL_F:
        R[i->a].f = R[i->b].f * R[i->c].f;
        break;
      case F_DIV_F:
        R[i->a].f = R[i->b].f / R[i->c].f;
        break;
      case F_ADD_D:
        R[i->a].d = R[i->b].d + R[i->c].d;
        break;
      case F_SUB_D:
        R[i->a].d = R[i->b].d - R[i->c].d;
        break;
      case F_MUL_D:
        R[i->a].d = R[i->b].d * R[i->c].d;
        break;
      case F_DIV_D:
        R[i->a].d = R[i->b].d / R[i->c].d;
        break;
      case F_CMP_I:
        R[i->a].u = cmp_i(i->aux, R[i->b].i, R[i->c].i);
        break;
      case F_BR_I:
        if (!(R[i->a].u = cmp_i(i->aux, R[i->b].i, R[i->c].i))) pc = f->code + i->t;
        break;
      case F_CMP_U:
        R[i->a].u = cmp_u(i->aux, R[i->b].u, R[i->c].u);
        break;
      case F_CMP_F:
        R[i->a].u = cmp_d(i->aux, R[i->b].f, R[i->c].f);
        break;
      case F_CMP_D:
        R[i->a].u = cmp_d(i->aux, R[i->b].d, R[i->c].d);
        break;
      case F_BIN:
      case F_UN:
      case F_CAST:
        if (!generic_op(in, i, R)) goto error;
        break;
      case F_REF_NEW:
        if (!ref_new(in, i, R)) goto error;
        break;
      case F_REF_GLOBAL: {
        size_t off = (size_t)(R - st->regs);
        Value *cell = interp_global_cell(in, i->p, i->e->span);
        R = st->regs + off; /* an initializer may have run compiled code */
        if (!cell) goto error;
        R[i->a].v = cell;
        break;
      }
      case F_REF_READ:
        if (!ref_read(in, i, R)) goto error;
        break;
      case F_REF_WRITE:
        if (!ref_write(in, i, R)) goto error;
        break;
      case F_SELF:
        if ((++ticks & 1023) == 0 && !poll(in, i->e->span)) goto error;
        st->frames[st->nframes - 1].span = i->e->span;
        pc = f->code;
        break;
      case F_TAIL: {
        if ((++ticks & 1023) == 0 && !poll(in, i->e->span)) goto error;
        FastFn *g = (FastFn *)i->p;
        FReg tmp[MAX_PARAMS];
        for (int k = 0; k < i->c; k++) tmp[k] = R[i->args[k]];
        FFrame *t = &st->frames[st->nframes - 1];
        frame_regs(st, t->base, g);
        R = st->regs + t->base;
        for (int k = 0; k < i->c; k++) R[k] = tmp[k];
        frame_init(R, g);
        t->fn = g, t->callee = g->name, t->span = i->e->span;
        f = g, pc = g->code;
        break;
      }
      case F_CALL: {
        if (in->depth >= in->opt.max_depth) {
          run_fail(in, i->e->span,
                   "recursion limit %lld reached in @%s (set it with :set max-depth N)",
                   (long long)in->opt.max_depth, callee_name(i));
          goto error;
        }
        if ((++ticks & 1023) == 0 && !poll(in, i->e->span)) goto error;
        FastFn *g = (FastFn *)i->p;
        size_t cbase = st->frames[st->nframes - 1].base, nb = cbase + (size_t)f->nregs;
        frame_regs(st, nb, g);
        R = st->regs + cbase;
        FReg *N = st->regs + nb;
        for (int k = 0; k < i->c; k++) N[k] = R[i->args[k]];
        frame_init(N, g);
        FFrame *t = push_frame(st);
        *t = (FFrame){g, pc, nb, i->a, g->name, i->e->span};
        in->depth++;
        f = g, R = N, pc = g->code;
        break;
      }
      case F_RET: {
        FReg v = i->b >= 0 ? R[i->b] : (FReg){.u = 0};
        if (st->nframes - 1 == first) {
          out = result(in, f, v);
          if (!out) goto error;
          st->nframes = first, st->nregs = saved_nregs;
          return out;
        }
        FFrame *t = &st->frames[--st->nframes];
        in->depth--;
        FFrame *c = &st->frames[st->nframes - 1];
        st->nregs = t->base;
        f = c->fn, R = st->regs + c->base, pc = t->ret;
        if (t->dst >= 0) R[t->dst] = v;
        break;
      }
      default:
        __builtin_unreachable(); /* every FOp is a case */
    }
  }
error:
  unwind(in, first);
  st->nframes = first, st->nregs = saved_nregs;
  return NULL;
}
