/* fast_math.h — TVM's float32 approximations behind fast_exp, fast_tanh,
 * fast_erf and nn.fast_softmax: their constants, and the approximations
 * written once in C for the reference kernels (kernels/kernels_elemwise.c,
 * kernels/kernels_nn.c).  The compute rules (lower/compute/compute_elemwise.c) build
 * the same float32 operations, in the same order, as TIR from these
 * constants, so the interpreter and compiled code agree bit for bit (with
 * contraction off; a fused multiply-add may change the last bits).
 *
 * The methods (as TVM's topi):
 * - exp: x clamped to [EXP_LO, EXP_HI], n = floor(x log2(e) + 1/2),
 *   f = x - n ln(2) in [-ln(2)/2, ln(2)/2], e^f by a degree-7 polynomial
 *   1 + f + f^2 P(f), 2^n built from its exponent bits; the result is
 *   max(2^n e^f, x) (so +inf stays +inf).  Results below float32's normal
 *   range flush to 0 (n + 127 = 0 gives the bits of 0).
 * - tanh: x clamped to [-9, 9], then x P(x^2) / Q(x^2) (degrees 13 / 6).
 * - erf: x clamped to [-4, 4], then x P(x^2) / Q(x^2) (degrees 13 / 8).
 * float64 computes the exact functions (TVM's fallback); float16 the
 * float32 approximation, rounded. */
#ifndef RLY_FAST_MATH_H
#define RLY_FAST_MATH_H

#include <stdint.h>
#include <string.h>

/* nn.fast_softmax takes its maximum and sum in this many interleaved
 * partials (element k in partial k mod SOFTMAX_LANES), combined in order. */
enum { SOFTMAX_LANES = 16 };

#define FAST_EXP_HI 88.3762626647950f
#define FAST_EXP_LO -88.3762626647949f
#define FAST_LOG2E 1.44269504088896341f
#define FAST_LN2 0.6931471805599453f
#define FAST_TANH_CLAMP 9.0f
#define FAST_ERF_CLAMP 4.0f

/* Horner order, highest degree first: e^f = ((P(f) f) f + f) + 1. */
enum { FAST_EXP_NP = 6 };
static const float fast_exp_p[FAST_EXP_NP] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                                              4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};

/* Numerators (odd, in x^2 times a final x) and denominators (even), highest degree first. */
enum { FAST_TANH_NP = 7, FAST_TANH_NQ = 4, FAST_ERF_NP = 7, FAST_ERF_NQ = 5 };
static const float fast_tanh_p[FAST_TANH_NP] = {
    (float)-2.76076847742355e-16, (float)2.00018790482477e-13, (float)-8.60467152213735e-11,
    (float)5.12229709037114e-08,  (float)1.48572235717979e-05, (float)6.37261928875436e-04,
    (float)4.89352455891786e-03};
static const float fast_tanh_q[FAST_TANH_NQ] = {
    (float)1.19825839466702e-06, (float)1.18534705686654e-04, (float)2.26843463243900e-03,
    (float)4.89352518554385e-03};
static const float fast_erf_p[FAST_ERF_NP] = {
    -2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f, -5.69250639462346e-05f,
    -7.34990630326855e-04f, -2.95459980854025e-03f, -1.60960333262415e-02f};
static const float fast_erf_q[FAST_ERF_NQ] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                              -1.68282697438203e-03f, -7.37332916720468e-03f,
                                              -1.42647390514189e-02f};

static inline float fast_clampf(float x, float lo, float hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

static inline float fast_expf(float x) {
  if (x != x) return x;
  float c = fast_clampf(x, FAST_EXP_LO, FAST_EXP_HI);
  float n = floorf(c * FAST_LOG2E + 0.5f);
  float f = c - n * FAST_LN2;
  float y = fast_exp_p[0];
  for (int i = 1; i < FAST_EXP_NP; i++) y = y * f + fast_exp_p[i];
  y = y * f * f + f + 1.0f;
  uint32_t bits = (uint32_t)(int32_t)(n + 127.0f) << 23; /* n + 127 in [0, 255] */
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  float r = two_n * y;
  return r > x ? r : x;
}

/* x P(x^2) / Q(x^2) on x clamped to [-clamp, clamp] (NaN stays NaN). */
static inline float fast_rationalf(float x, float clamp, const float *p, int np, const float *q,
                                   int nq) {
  if (x != x) return x;
  x = fast_clampf(x, -clamp, clamp);
  float x2 = x * x, num = x2 * p[0] + p[1], den = x2 * q[0] + q[1];
  for (int i = 2; i < np; i++) num = x2 * num + p[i];
  for (int i = 2; i < nq; i++) den = x2 * den + q[i];
  return x * num / den;
}

static inline float fast_tanhf(float x) {
  return fast_rationalf(x, FAST_TANH_CLAMP, fast_tanh_p, FAST_TANH_NP, fast_tanh_q, FAST_TANH_NQ);
}

static inline float fast_erff(float x) {
  return fast_rationalf(x, FAST_ERF_CLAMP, fast_erf_p, FAST_ERF_NP, fast_erf_q, FAST_ERF_NQ);
}

#endif
