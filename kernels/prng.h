/* prng.h — Threefry-2x32 and JAX's key and sampling rules (shared/docs/prng.md).
 *
 * Keys are two uint32 words.  Every function is pure: same key, same output.
 * Two modes: PRNG_PARTITIONABLE (JAX >= 0.5, the default) and PRNG_ORIGINAL
 * (JAX <= 0.4.38).  The sampling functions use separate multiply and add
 * (this file is compiled with -ffp-contract=off), as JAX does. */
#ifndef RLY_PRNG_H
#define RLY_PRNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum PrngMode { PRNG_PARTITIONABLE, PRNG_ORIGINAL } PrngMode;

/* The 20-round block function on one counter pair. */
void threefry2x32(const uint32_t key[2], uint32_t c0, uint32_t c1, uint32_t out[2]);
/* The block function over arrays of counter pairs (a loop the compiler vectorizes). */
void threefry2x32_n(const uint32_t key[2], const uint32_t *c0, const uint32_t *c1, uint32_t *o0,
                    uint32_t *o1, size_t n);

void prng_key(int64_t seed, bool seed_is_64bit, uint32_t out[2]);
void prng_fold_in(const uint32_t key[2], uint32_t data, uint32_t out[2]);
/* n keys into out[n][2]; false if memory ran out. */
bool prng_split(PrngMode mode, const uint32_t key[2], int64_t n, uint32_t (*out)[2]);
/* n random 32-bit words. */
bool prng_bits32(PrngMode mode, const uint32_t key[2], uint32_t *out, int64_t n);
/* n random 8- or 16-bit values (width 1 or 2 bytes) into out (uint8/uint16):
 * partitionable truncates each 32-bit value; original views the 32-bit
 * words of ceil(n * width / 4) counters as little-endian bytes. */
bool prng_bits_narrow(PrngMode mode, const uint32_t key[2], int width, void *out, int64_t n);
/* n random 64-bit words. */
bool prng_bits64(PrngMode mode, const uint32_t key[2], uint64_t *out, int64_t n);

/* Uniform floats in [low, high) (float32: 23 random mantissa bits). */
bool prng_uniform_f32(PrngMode mode, const uint32_t key[2], float low, float high, float *out,
                      int64_t n);
/* float16 (IEEE binary16 bit patterns): 10 random mantissa bits; each
 * operation rounds to half precision, as XLA computes float16. */
bool prng_uniform_f16(PrngMode mode, const uint32_t key[2], float low, float high, uint16_t *out,
                      int64_t n);
bool prng_normal_f16(PrngMode mode, const uint32_t key[2], uint16_t *out, int64_t n);
bool prng_uniform_f64(PrngMode mode, const uint32_t key[2], double low, double high, double *out,
                      int64_t n);
/* Standard normal by the inverse CDF (XLA's single-precision erfinv). */
bool prng_normal_f32(PrngMode mode, const uint32_t key[2], float *out, int64_t n);
bool prng_normal_f64(PrngMode mode, const uint32_t key[2], double *out, int64_t n);
float prng_erfinv_f32(float x);

#endif
