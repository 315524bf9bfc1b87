/* fuzz_tensor_files.c — libFuzzer target: the .npy, .npz and .safetensors
 * readers (io/tensor_io.h) on arbitrary bytes, the format found from
 * the contents.  A reader must accept or reject (with a message naming
 * the file); an accepted file is written again as an .npz, which must read
 * back with as many entries. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensor_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file encoded as an .npz and read back: as many entries. */
static void round_trip(const TioFile *f) {
  char err[RT_ERR_LEN] = "";
  size_t n = 0;
  uint8_t *bytes = tio_encode(TIO_NPZ, f, &n, err, sizeof err);
  if (!bytes) return; /* e.g. a name .npz cannot hold */
  TioFile back;
  if (!tio_load_mem("again.npz", bytes, n, &back, err, sizeof err) || back.n != f->n) {
    fprintf(stderr, "an accepted file does not read back as .npz: %s\n", err);
    abort();
  }
  tio_file_free(&back);
  free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  TioFile f;
  char err[RT_ERR_LEN] = "";
  if (tio_load_mem("fuzz.bin", data, size, &f, err, sizeof err)) {
    round_trip(&f);
    tio_file_free(&f);
  } else if (strncmp(err, "fuzz.bin: ", 10) != 0) {
    fprintf(stderr, "a rejection without the file name: %s\n", err);
    abort();
  }
  return 0;
}
