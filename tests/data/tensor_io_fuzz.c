/* tensor_io_fuzz.c — mutation fuzzing of the tensor file readers
 * (io/tensor_io.h), meant to run under AddressSanitizer + UBSan:
 *
 *   tensor_io_fuzz ITERATIONS SEED FILE...
 *
 * Each iteration takes one of the given valid files and damages a copy:
 * bit flips, byte overwrites with interesting values (0, 0xff, 0x7f, 0x80),
 * truncation, appended garbage, or a 16/32/64-bit little-endian field at a
 * random offset set to a boundary value (lengths and offsets are where
 * readers go wrong).  The reader must return (true or false) without a
 * sanitizer report; a false must come with a message naming the file.
 * The PRNG is xorshift64*, so a failing seed reproduces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensor_io.h"

static uint64_t state;

static uint64_t next(void) {
  state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)len + 1);
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) free(b), b = NULL;
  fclose(f);
  *n = (size_t)len;
  return b;
}

static void put_field(uint8_t *p, size_t n, size_t at, int width) {
  static const uint64_t values[] = {
      0,      1,          0x7f,       0x80,           0xff,
      0xffff, 0x7fffffff, 0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
      ~0ULL};
  uint64_t v = values[next() % (sizeof values / sizeof values[0])];
  if (next() % 4 == 0) v = next() % (2 * n + 16);
  for (int i = 0; i < width && at + (size_t)i < n; i++) p[at + i] = (uint8_t)(v >> (8 * i));
}

/* Returns the new length (the buffer has room for 64 more bytes). */
static size_t mutate(uint8_t *p, size_t n) {
  int rounds = 1 + (int)(next() % 4);
  for (int r = 0; r < rounds && n; r++) {
    size_t at = (size_t)(next() % n);
    switch (next() % 6) {
      case 0:
        p[at] ^= (uint8_t)(1u << (next() % 8));
        break;
      case 1:
        p[at] = (uint8_t[]){0, 0xff, 0x7f, 0x80, '9', ','}[next() % 6];
        break;
      case 2:
        n = (size_t)(next() % n);
        break;
      case 3:
        for (int k = 0, m = (int)(next() % 64); k < m; k++) p[n++] = (uint8_t)next();
        rounds = r + 1; /* room for one append only */
        break;
      case 4:
        put_field(p, n, at, 1 << (1 + next() % 3));
        break;
      default:
        put_field(p, n, at, 4);
        break;
    }
  }
  return n;
}

/* The fuzz loop: each mutated file is copied into a buffer of its exact
 * size (so an overread is a sanitizer report) and loaded; a rejection must
 * name the file in its message. */
int main(int argc, char **argv) {
  if (argc < 4) {
    fputs("usage: tensor_io_fuzz ITERATIONS SEED FILE...\n", stderr);
    return 2;
  }
  long iters = strtol(argv[1], NULL, 10);
  state = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
  int nfiles = argc - 3;
  uint8_t **files = calloc((size_t)nfiles, sizeof *files);
  size_t *sizes = calloc((size_t)nfiles, sizeof *sizes);
  for (int i = 0; i < nfiles; i++)
    if (!(files[i] = slurp(argv[3 + i], &sizes[i])))
      return fprintf(stderr, "cannot read %s\n", argv[3 + i]), 2;
  long ok = 0, rejected = 0;
  for (long it = 0; it < iters; it++) {
    int k = (int)(next() % (uint64_t)nfiles);
    uint8_t *buf = malloc(sizes[k] + 64);
    memcpy(buf, files[k], sizes[k]);
    size_t n = mutate(buf, sizes[k]);
    TioFile f;
    char err[RT_ERR_LEN] = "";
    uint8_t *exact = malloc(n ? n : 1); /* exact size, so ASan sees any overread */
    memcpy(exact, buf, n);
    if (tio_load_mem("fuzz.bin", exact, n, &f, err, sizeof err))
      ok++, tio_file_free(&f);
    else if (strncmp(err, "fuzz.bin: ", 10) != 0) {
      fprintf(stderr, "iteration %ld: message without the file name: %s\n", it, err);
      return 1;
    } else
      rejected++;
    free(exact);
    free(buf);
  }
  printf("%ld iterations: %ld accepted, %ld rejected\n", iters, ok, rejected);
  for (int i = 0; i < nfiles; i++) free(files[i]);
  free(files), free(sizes);
  rt_cache_trim();
  rt_pool_trim();
  return 0;
}
