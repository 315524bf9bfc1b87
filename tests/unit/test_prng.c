/* test_prng.c — Threefry-2x32 against Random123's known answers, and JAX's
 * key rules (split, fold_in) in both modes against the values in
 * shared/docs/prng.md. */
#include <math.h>

#include "kernels/prng.h"
#include "tests/unit/check.h"

static void test_kat(void) {
  static const uint32_t cases[3][6] = {
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0},
  };
  for (int i = 0; i < 3; i++) {
    uint32_t out[2], key[2] = {cases[i][0], cases[i][1]};
    threefry2x32(key, cases[i][2], cases[i][3], out);
    CHECK(out[0] == cases[i][4] && out[1] == cases[i][5]);
    uint32_t o0, o1;
    threefry2x32_n(key, &cases[i][2], &cases[i][3], &o0, &o1, 1);
    CHECK(o0 == cases[i][4] && o1 == cases[i][5]);
  }
}

static void test_keys(void) {
  uint32_t k0[2], k42[2], big[2];
  prng_key(0, false, k0);
  prng_key(42, false, k42);
  prng_key(((int64_t)1 << 32) + 5, true, big);
  CHECK(k0[0] == 0 && k0[1] == 0);
  CHECK(k42[0] == 0 && k42[1] == 42);
  CHECK(big[0] == 1 && big[1] == 5);
  uint32_t s[2][2], f[2];
  CHECK(prng_split(PRNG_PARTITIONABLE, k0, 2, s));
  prng_fold_in(k0, 1, f);
  CHECK(s[1][0] == 928981903u && s[1][1] == 3453687069u);
  CHECK(f[0] == s[1][0] && f[1] == s[1][1]);
  CHECK(prng_split(PRNG_ORIGINAL, k0, 2, s));
  CHECK(s[0][0] == 4146024105u && s[0][1] == 967050713u);
  CHECK(s[1][0] == 2718843009u && s[1][1] == 1272950319u);
}

static void test_samples(void) {
  uint32_t k[2] = {0, 42};
  float u[4096], z[4096];
  CHECK(prng_uniform_f32(PRNG_PARTITIONABLE, k, 0.0f, 1.0f, u, 4096));
  CHECK(prng_normal_f32(PRNG_PARTITIONABLE, k, z, 4096));
  double mean = 0, zm = 0, zv = 0;
  int in_range = 1;
  for (int i = 0; i < 4096; i++) {
    mean += u[i], zm += z[i], zv += (double)z[i] * z[i];
    in_range &= u[i] >= 0.0f && u[i] < 1.0f;
  }
  CHECK(in_range);
  CHECK(fabs(mean / 4096 - 0.5) < 0.02);
  CHECK(fabs(zm / 4096) < 0.05 && fabs(zv / 4096 - 1.0) < 0.08);
  CHECK(fabsf(prng_erfinv_f32(0.5f) - 0.476936276f) < 1e-6f);
  CHECK(isinf(prng_erfinv_f32(1.0f)));
}

/* 8/16-bit: partitionable truncates each 32-bit value; original views the
 * 32-bit words as little-endian bytes. */
static void test_narrow(void) {
  uint32_t k[2] = {0, 7}, w[4];
  uint8_t b[10];
  uint16_t h[6];
  CHECK(prng_bits32(PRNG_PARTITIONABLE, k, w, 4));
  CHECK(prng_bits_narrow(PRNG_PARTITIONABLE, k, 1, b, 4));
  CHECK(b[0] == (uint8_t)w[0] && b[3] == (uint8_t)w[3]);
  CHECK(prng_bits32(PRNG_ORIGINAL, k, w, 3));
  CHECK(prng_bits_narrow(PRNG_ORIGINAL, k, 1, b, 10));
  CHECK(b[0] == (uint8_t)w[0] && b[1] == (uint8_t)(w[0] >> 8) && b[4] == (uint8_t)w[1]);
  CHECK(b[9] == (uint8_t)(w[2] >> 8));
  CHECK(prng_bits32(PRNG_ORIGINAL, k, w, 3));
  CHECK(prng_bits_narrow(PRNG_ORIGINAL, k, 2, h, 6));
  CHECK(h[0] == (uint16_t)w[0] && h[1] == (uint16_t)(w[0] >> 16) && h[5] == (uint16_t)(w[2] >> 16));
  uint16_t u[1000];
  CHECK(prng_uniform_f16(PRNG_PARTITIONABLE, k, 0.0f, 1.0f, u, 1000));
  int ok = 1;
  for (int i = 0; i < 1000; i++) ok &= u[i] < 0x3C00u; /* in [0, 1): non-negative and below 1 */
  CHECK(ok);
}

int main(void) {
  test_narrow();
  test_kat();
  test_keys();
  test_samples();
  return check_report("test_prng");
}
