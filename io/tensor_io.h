/* tensor_io.h — tensor files: numpy's .npy and .npz, and .safetensors.
 *
 * Readers take the whole file in memory and never trust it: every length,
 * offset, shape and dtype is checked against the bytes actually present
 * before anything is allocated, so a malformed file is an error message
 * ("FILE: what is wrong"), never a crash nor an allocation larger than the
 * file justifies (a deflated .npz entry may expand at most by deflate's
 * maximal ratio, and tensors obey rt_max_bytes()).
 *
 * Formats (the reader picks by content: `\x93NUMPY` is .npy, `PK` is a
 * zip; anything else is tried as .safetensors):
 *   .npy          versions 1.0, 2.0, 3.0; bool, int8..64, uint8..64,
 *                 float16/32/64; bfloat16, which numpy lacks, as 2-byte
 *                 void ('<V2', what numpy writes for an ml_dtypes.bfloat16
 *                 array; read back with .view(ml_dtypes.bfloat16) or
 *                 .view(np.uint16) for the bits), and any 'V2' is read as
 *                 bfloat16; little- or big-endian (swapped on read);
 *                 C or Fortran order (Fortran data is transposed to C order);
 *                 0-d arrays.  Written as version 1.0 (2.0 if the header
 *                 needs it), little-endian, C order.
 *   .npz          a zip of KEY.npy entries, stored or deflated (zlib), zip64
 *                 sizes understood; the key is the entry name without
 *                 ".npy".  Written with stored entries (np.savez's layout).
 *   .safetensors  u64 header size, JSON header {name: {dtype, shape,
 *                 data_offsets}}, `__metadata__` ignored; BF16 is bfloat16;
 *                 F8 types are rejected.
 *
 * Entries keep the file's order.  Tensors are RtTensors (rt/rt.h),
 * owned by the TensorFile. */
#ifndef RLY_TENSOR_IO_H
#define RLY_TENSOR_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt/rt.h"

typedef enum TioFormat { TIO_UNKNOWN, TIO_NPY, TIO_NPZ, TIO_SAFETENSORS } TioFormat;

typedef struct TioEntry {
  char *name;  /* malloc'd; "arr_0" for a lone .npy (as np.savez names it) */
  RtTensor *t; /* one reference owned by the file */
} TioEntry;

typedef struct TioFile {
  int n, cap;
  TioEntry *entries;
} TioFile;

/* By file name extension (.npy .npz .safetensors); TIO_UNKNOWN otherwise. */
TioFormat tio_format_of_path(const char *path);
const char *tio_format_name(TioFormat f);

/* Reads a file (any of the three formats, chosen by content).  On failure
 * returns false with "PATH: reason" in err (errn bytes) and out empty. */
bool tio_load(const char *path, TioFile *out, char *err, size_t errn);
/* Same over bytes in memory; `name` is used in messages (the fuzzer's
 * entry point). */
bool tio_load_mem(const char *name, const uint8_t *data, size_t n, TioFile *out, char *err,
                  size_t errn);
void tio_file_free(TioFile *f);
/* The entry called name, or NULL. */
const TioEntry *tio_find(const TioFile *f, const char *name);

/* Adds an entry (retains t; copies name).  False (with a message) if the
 * name is already there. */
bool tio_add(TioFile *f, const char *name, RtTensor *t, char *err, size_t errn);

/* Writes `f` to path in format `fmt` (a .npy holds exactly one entry).
 * False with "PATH: reason" in err. */
bool tio_save(const char *path, TioFormat fmt, const TioFile *f, char *err, size_t errn);
/* The bytes of the file that tio_save would write (malloc'd; *n set), or
 * NULL with a message. */
uint8_t *tio_encode(TioFormat fmt, const TioFile *f, size_t *n, char *err, size_t errn);

#endif
