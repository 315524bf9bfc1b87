/* tensor_io_int.h — shared pieces of the tensor file readers and writers
 * (tensor_io.c: dispatch and .npy; npz.c: zip; safetensors.c).
 *
 * Parsers write a reason WITHOUT the file name into `why` (the dispatcher
 * prefixes it) and return false; they never read outside [p, p + n). */
#ifndef RLY_TENSOR_IO_INT_H
#define RLY_TENSOR_IO_INT_H

#include "io/tensor_io.h"
#include "ir/util.h"

/* Little-endian loads from possibly unaligned bytes. */
static inline uint16_t tio_rd16(const uint8_t *p) { return (uint16_t)(p[0] | (unsigned)p[1] << 8); }
static inline uint32_t tio_rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tio_rd64(const uint8_t *p) {
  return (uint64_t)tio_rd32(p) | (uint64_t)tio_rd32(p + 4) << 32;
}

bool tio_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Little-endian stores appended to a StrBuf. */
void tio_put16(StrBuf *b, uint16_t v);
void tio_put32(StrBuf *b, uint32_t v);
void tio_put64(StrBuf *b, uint64_t v);

/* numel and byte size of a shape, refusing overflow and negative dims. */
bool tio_shape_size(int ndim, const int64_t *shape, int esize, int64_t *numel, uint64_t *nbytes,
                    char *why, size_t n);

/* One .npy file image → a tensor. */
bool tio_npy_parse(const uint8_t *p, size_t n, RtTensor **out, char *why, size_t whyn);
void tio_npy_encode(StrBuf *b, const RtTensor *t);

bool tio_npz_parse(const uint8_t *p, size_t n, TioFile *out, char *why, size_t whyn);
bool tio_npz_encode(StrBuf *b, const TioFile *f, char *why, size_t whyn);

bool tio_st_parse(const uint8_t *p, size_t n, TioFile *out, char *why, size_t whyn);
bool tio_st_encode(StrBuf *b, const TioFile *f, char *why, size_t whyn);

#endif
