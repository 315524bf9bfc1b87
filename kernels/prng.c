/* prng.c — Threefry-2x32 (Random123's 20-round variant, as JAX uses it) and
 * JAX's rules for keys, splits and samples, in both of JAX's modes.
 *
 * Partitionable mode hashes each output index i as the counter (hi32(i),
 * lo32(i)); original mode hashes the counters 0..n-1 with the "array rule"
 * (pad to even, pair the first half with the second, concatenate the first
 * words then the second words).  Must be compiled with -ffp-contract=off:
 * uniform's multiply and add are separate roundings in JAX. */
#include "kernels/prng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tensor.h"

static inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static const int ROT[8] = {13, 15, 26, 6, 17, 29, 16, 24};

void threefry2x32(const uint32_t key[2], uint32_t c0, uint32_t c1, uint32_t out[2]) {
  uint32_t ks[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int r = 0; r < 20; r++) {
    x0 += x1;
    x1 = rotl(x1, ROT[r % 8]);
    x1 ^= x0;
    if (r % 4 == 3) {
      uint32_t s = (uint32_t)(r + 1) / 4;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  out[0] = x0, out[1] = x1;
}

/* Same rounds, unrolled over blocks of counters so the compiler vectorizes. */
void threefry2x32_n(const uint32_t key[2], const uint32_t *c0, const uint32_t *c1, uint32_t *o0,
                    uint32_t *o1, size_t n) {
  const uint32_t k0 = key[0], k1 = key[1], k2 = key[0] ^ key[1] ^ 0x1BD11BDAu;
  const uint32_t ks[5] = {k0, k1, k2, k0, k1};
  for (size_t i = 0; i < n; i++) {
    uint32_t x0 = c0[i] + k0, x1 = c1[i] + k1;
    for (int g = 0; g < 5; g++) {
      for (int j = 0; j < 4; j++) {
        x0 += x1;
        x1 = rotl(x1, ROT[(g * 4 + j) % 8]);
        x1 ^= x0;
      }
      uint32_t s = (uint32_t)g + 1;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
    o0[i] = x0, o1[i] = x1;
  }
}

void prng_key(int64_t seed, bool seed_is_64bit, uint32_t out[2]) {
  uint64_t u = (uint64_t)seed;
  out[0] = seed_is_64bit ? (uint32_t)(u >> 32) : 0;
  out[1] = (uint32_t)u;
}

void prng_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]) {
  threefry2x32(key, 0, data, out);
}

/* The original mode's array rule over counters 0..n-1: out[0..n).  Pairs
 * (j, half + j) hash to out[j] and out[half + j]; the pad's output is dropped. */
static bool array_rule(const uint32_t key[2], uint32_t *out, int64_t n) {
  enum { BLOCK = 1024 };
  uint32_t c0[BLOCK], c1[BLOCK], o0[BLOCK], o1[BLOCK];
  int64_t half = (n + 1) / 2;
  for (int64_t base = 0; base < half; base += BLOCK) {
    int64_t m = half - base < BLOCK ? half - base : BLOCK;
    for (int64_t j = 0; j < m; j++) {
      c0[j] = (uint32_t)(base + j);
      c1[j] = half + base + j < n ? (uint32_t)(half + base + j) : 0; /* the pad */
    }
    threefry2x32_n(key, c0, c1, o0, o1, (size_t)m);
    memcpy(out + base, o0, sizeof(uint32_t) * (size_t)m);
    int64_t m1 = half + base + m <= n ? m : n - half - base; /* drop the pad's word */
    if (m1 > 0) memcpy(out + half + base, o1, sizeof(uint32_t) * (size_t)m1);
  }
  return true;
}

/* Partitionable: counter i → block(key, (hi32(i), lo32(i))), both words. */
static bool counters_partitionable(const uint32_t key[2], uint32_t *o0, uint32_t *o1, int64_t n) {
  enum { BLOCK = 256 };
  uint32_t c0[BLOCK], c1[BLOCK];
  for (int64_t base = 0; base < n; base += BLOCK) {
    int64_t m = n - base < BLOCK ? n - base : BLOCK;
    for (int64_t j = 0; j < m; j++) {
      uint64_t i = (uint64_t)(base + j);
      c0[j] = (uint32_t)(i >> 32), c1[j] = (uint32_t)i;
    }
    threefry2x32_n(key, c0, c1, o0 + base, o1 + base, (size_t)m);
  }
  return true;
}

bool prng_split(PrngMode mode, const uint32_t key[2], int64_t n, uint32_t (*out)[2]) {
  uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(2 * n + 1));
  if (!w) return false;
  bool ok;
  if (mode == PRNG_ORIGINAL) {
    ok = array_rule(key, w, 2 * n);
    for (int64_t i = 0; ok && i < n; i++) out[i][0] = w[2 * i], out[i][1] = w[2 * i + 1];
  } else {
    ok = counters_partitionable(key, w, w + n, n);
    for (int64_t i = 0; ok && i < n; i++) out[i][0] = w[i], out[i][1] = w[n + i];
  }
  free(w);
  return ok;
}

bool prng_bits32(PrngMode mode, const uint32_t key[2], uint32_t *out, int64_t n) {
  if (mode == PRNG_ORIGINAL) return array_rule(key, out, n);
  enum { BLOCK = 1024 };
  uint32_t c0[BLOCK], c1[BLOCK], o0[BLOCK], o1[BLOCK];
  for (int64_t base = 0; base < n; base += BLOCK) {
    int64_t m = n - base < BLOCK ? n - base : BLOCK;
    for (int64_t j = 0; j < m; j++) {
      uint64_t i = (uint64_t)(base + j);
      c0[j] = (uint32_t)(i >> 32), c1[j] = (uint32_t)i;
    }
    threefry2x32_n(key, c0, c1, o0, o1, (size_t)m);
    for (int64_t j = 0; j < m; j++) out[base + j] = o0[j] ^ o1[j];
  }
  return true;
}

/* 8- and 16-bit random bits as JAX makes them: partitionable mode
 * truncates one 32-bit word per element; original mode packs several
 * elements into each word, low part first. */
bool prng_bits_narrow(PrngMode mode, const uint32_t key[2], int width, void *out, int64_t n) {
  uint8_t *o8 = out;
  uint16_t *o16 = out;
  if (mode == PRNG_PARTITIONABLE) {
    uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(n + 1));
    if (!w || !prng_bits32(mode, key, w, n)) return free(w), false;
    for (int64_t i = 0; i < n; i++)
      if (width == 1)
        o8[i] = (uint8_t)w[i];
      else
        o16[i] = (uint16_t)w[i];
    free(w);
    return true;
  }
  int64_t per = 4 / width, words = (n + per - 1) / per;
  uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(words + 1));
  if (!w || !prng_bits32(mode, key, w, words)) return free(w), false;
  for (int64_t i = 0; i < n; i++) {
    uint32_t word = w[i / per];
    int shift = (int)(i % per) * width * 8; /* little-endian: low part first */
    if (width == 1)
      o8[i] = (uint8_t)(word >> shift);
    else
      o16[i] = (uint16_t)(word >> shift);
  }
  free(w);
  return true;
}

static float round_half(float f) { return half_to_float(float_to_half(f)); }

bool prng_uniform_f16(PrngMode mode, const uint32_t key[2], float low, float high, uint16_t *out,
                      int64_t n) {
  if (!prng_bits_narrow(mode, key, 2, out, n)) return false;
  float lo = round_half(low), range = round_half(round_half(high) - lo);
  for (int64_t i = 0; i < n; i++) {
    float f = half_to_float((uint16_t)((out[i] >> 6) | 0x3C00u)) - 1.0f;
    float v = round_half(round_half(f * range) + lo);
    out[i] = float_to_half(v > lo ? v : lo);
  }
  return true;
}

bool prng_normal_f16(PrngMode mode, const uint32_t key[2], uint16_t *out, int64_t n) {
  const float lo = half_to_float(0xBBFFu); /* nextafter(-1, 0) in float16 */
  if (!prng_uniform_f16(mode, key, lo, 1.0f, out, n)) return false;
  const float sqrt2 = round_half(1.41421356237309504880f);
  for (int64_t i = 0; i < n; i++)
    out[i] = float_to_half(sqrt2 * round_half(prng_erfinv_f32(half_to_float(out[i]))));
  return true;
}

bool prng_bits64(PrngMode mode, const uint32_t key[2], uint64_t *out, int64_t n) {
  uint32_t *w = malloc(sizeof(uint32_t) * (size_t)(2 * n + 1));
  if (!w) return false;
  bool ok =
      mode == PRNG_ORIGINAL ? array_rule(key, w, 2 * n) : counters_partitionable(key, w, w + n, n);
  /* Both modes: the first n words are the high halves, the next n the low. */
  for (int64_t i = 0; ok && i < n; i++) out[i] = ((uint64_t)w[i] << 32) | w[n + i];
  free(w);
  return ok;
}

/* uniform in [low, high): the top mantissa bits of each word under the
 * exponent of 1.0 give [1, 2); minus 1, scaled, shifted, and clamped at low
 * (JAX's rule).  One body for both widths: the float's bits are built in
 * place over the random words (same size). */
#define DEFINE_UNIFORM(sfx, F, U, SHIFT, ONE, BITS)                                    \
  bool prng_uniform_##sfx(PrngMode mode, const uint32_t key[2], F low, F high, F *out, \
                          int64_t n) {                                                 \
    U *bits = (U *)out;                                                                \
    if (!BITS(mode, key, bits, n)) return false;                                       \
    F range = high - low;                                                              \
    for (int64_t i = 0; i < n; i++) {                                                  \
      U u = (bits[i] >> SHIFT) | ONE;                                                  \
      F f;                                                                             \
      memcpy(&f, &u, sizeof f);                                                        \
      F v = (f - (F)1) * range;                                                        \
      v = v + low;                                                                     \
      out[i] = v > low ? v : low;                                                      \
    }                                                                                  \
    return true;                                                                       \
  }
DEFINE_UNIFORM(f32, float, uint32_t, 9, 0x3F800000u, prng_bits32)
DEFINE_UNIFORM(f64, double, uint64_t, 12, 0x3FF0000000000000ull, prng_bits64)
#undef DEFINE_UNIFORM

/* M. Giles' single-precision erfinv, in the form XLA evaluates it. */
float prng_erfinv_f32(float x) {
  float w = -log1pf(-x * x);
  float p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  if (fabsf(x) == 1.0f) return x * INFINITY;
  return p * x;
}

bool prng_normal_f32(PrngMode mode, const uint32_t key[2], float *out, int64_t n) {
  const float lo = nextafterf(-1.0f, 0.0f);
  if (!prng_uniform_f32(mode, key, lo, 1.0f, out, n)) return false;
  const float sqrt2 = 1.41421356237309504880f;
  for (int64_t i = 0; i < n; i++) out[i] = sqrt2 * prng_erfinv_f32(out[i]);
  return true;
}

/* float64: the float32 approximation refined by two Newton steps on erf. */
static double erfinv_f64(double x) {
  if (fabs(x) == 1.0) return x * INFINITY;
  double y = prng_erfinv_f32((float)x);
  for (int k = 0; k < 2; k++) y -= (erf(y) - x) / (1.12837916709551257390 * exp(-y * y));
  return y;
}

bool prng_normal_f64(PrngMode mode, const uint32_t key[2], double *out, int64_t n) {
  const double lo = nextafter(-1.0, 0.0);
  if (!prng_uniform_f64(mode, key, lo, 1.0, out, n)) return false;
  for (int64_t i = 0; i < n; i++) out[i] = 1.41421356237309504880 * erfinv_f64(out[i]);
  return true;
}
