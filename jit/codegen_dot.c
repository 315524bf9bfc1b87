/* codegen_dot.c — TIR's dot_u8i8x4 (ir/tir.h) as LLVM IR, scalar or in
 * vector lanes, internal to rly-jit.so.
 *
 * Each int32 lane holds four bytes: acc + sum_j uint8(a_j) * int8(b_j),
 * wrapping.  When the host has AVX512-VNNI (and RLY_JIT_VNNI is not 0:
 * cg_vnni) every 16 lanes are one llvm.x86.avx512.vpdpbusd.512, which
 * sums the four products without saturating; otherwise (AVX2, Zen 3, or
 * forced) the bytes are widened to int32, multiplied and summed by
 * groups of four with shuffles, exact on any target (LLVM selects
 * vpmaddwd-style code for it; never vpmaddubsw, which saturates).  Both
 * give the TIR interpreter's bits. */
#include "jit/codegen.h"

enum { VNNI_LANES = 16, DOT_MAX_LANES = 64 };

/* Elements [first, first + n) of vector x. */
static LLVMValueRef lanes_of(Cg *c, LLVMValueRef x, int first, int n, int stride) {
  LLVMValueRef mask[4 * DOT_MAX_LANES];
  for (int i = 0; i < n; i++) mask[i] = LLVMConstInt(c->i32, (unsigned)(first + i * stride), 0);
  return LLVMBuildShuffleVector(c->B, x, LLVMGetPoison(LLVMTypeOf(x)),
                                LLVMConstVector(mask, (unsigned)n), "");
}

/* The exact widened form on n lanes of <n x i32>. */
static LLVMValueRef dot_widened(Cg *c, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, int n) {
  LLVMTypeRef bytes = LLVMVectorType(c->i8, (unsigned)(4 * n));
  LLVMTypeRef wide = LLVMVectorType(c->i32, (unsigned)(4 * n));
  LLVMValueRef ua = LLVMBuildZExt(c->B, LLVMBuildBitCast(c->B, a, bytes, ""), wide, "");
  LLVMValueRef sb = LLVMBuildSExt(c->B, LLVMBuildBitCast(c->B, b, bytes, ""), wide, "");
  LLVMValueRef p = LLVMBuildMul(c->B, ua, sb, "");
  LLVMValueRef s = LLVMBuildAdd(c->B, lanes_of(c, p, 0, n, 4), lanes_of(c, p, 1, n, 4), "");
  LLVMValueRef t = LLVMBuildAdd(c->B, lanes_of(c, p, 2, n, 4), lanes_of(c, p, 3, n, 4), "");
  return LLVMBuildAdd(c->B, acc, LLVMBuildAdd(c->B, s, t, ""), "");
}

/* vpdpbusd on 16 lanes at a time, the chunks joined again. */
static LLVMValueRef dot_vnni(Cg *c, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, int n) {
  LLVMValueRef parts[DOT_MAX_LANES / VNNI_LANES];
  int np = n / VNNI_LANES;
  for (int i = 0; i < np; i++) {
    int f = i * VNNI_LANES;
    LLVMValueRef args[3] = {n == VNNI_LANES ? acc : lanes_of(c, acc, f, VNNI_LANES, 1),
                            n == VNNI_LANES ? a : lanes_of(c, a, f, VNNI_LANES, 1),
                            n == VNNI_LANES ? b : lanes_of(c, b, f, VNNI_LANES, 1)};
    parts[i] = cg_intrinsic(c, "llvm.x86.avx512.vpdpbusd.512", NULL, 0, args, 3);
  }
  for (int w = 1; w < np; w *= 2) /* concatenate pairs: 16 + 16, 32 + 32 */
    for (int i = 0; i + w < np; i += 2 * w) {
      LLVMValueRef mask[DOT_MAX_LANES];
      int len = 2 * w * VNNI_LANES;
      for (int k = 0; k < len; k++) mask[k] = LLVMConstInt(c->i32, (unsigned)k, 0);
      parts[i] = LLVMBuildShuffleVector(c->B, parts[i], parts[i + w],
                                        LLVMConstVector(mask, (unsigned)len), "");
    }
  return parts[0];
}

/* Whether n lanes of dot_u8i8x4 can be emitted (cg_dot4 takes them). */
bool cg_dot4_lanes_ok(int n) { return n >= 1 && n <= DOT_MAX_LANES; }

LLVMValueRef cg_dot4(Cg *c, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, int n) {
  bool pow2 = (n & (n - 1)) == 0;
  if (cg_vnni() && n % VNNI_LANES == 0 && pow2) return dot_vnni(c, acc, a, b, n);
  if (n > 1) return dot_widened(c, acc, a, b, n);
  LLVMTypeRef one = LLVMVectorType(c->i32, 1);
  LLVMValueRef zero = LLVMConstInt(c->i32, 0, 0), v[3] = {acc, a, b};
  for (int i = 0; i < 3; i++)
    v[i] = LLVMBuildInsertElement(c->B, LLVMGetPoison(one), v[i], zero, "");
  return LLVMBuildExtractElement(c->B, dot_widened(c, v[0], v[1], v[2], 1), zero, "");
}
