/* tensor_io_tool.c — a command-line driver of io/tensor_io.h for the
 * tests (tests/data/tensor_io_numpy.py):
 *   tensor_io_tool convert IN OUT   read IN (any format), write OUT (format by extension)
 *   tensor_io_tool list IN          one line per entry: name dtype shape
 * Errors go to stderr with exit status 1. */
#include <stdio.h>
#include <string.h>

#include "io/tensor_io.h"

static int list(const TioFile *f) {
  for (int i = 0; i < f->n; i++) {
    char shape[256];
    const RtTensor *t = f->entries[i].t;
    printf("%s %s %s\n", f->entries[i].name, dtype_name(t->dtype),
           rt_shape_str(shape, sizeof shape, t->ndim, t->shape));
  }
  return 0;
}

/* Dispatches `convert` and `list`; the caches are trimmed at the end so a
 * leak checker sees no live buffers. */
int main(int argc, char **argv) {
  char err[RT_ERR_LEN];
  if (argc < 3 || (strcmp(argv[1], "convert") == 0 && argc != 4)) {
    fputs("usage: tensor_io_tool convert IN OUT | list IN\n", stderr);
    return 2;
  }
  TioFile f;
  if (!tio_load(argv[2], &f, err, sizeof err)) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  int status = 0;
  if (strcmp(argv[1], "list") == 0)
    status = list(&f);
  else if (!tio_save(argv[3], tio_format_of_path(argv[3]), &f, err, sizeof err))
    fprintf(stderr, "error: %s\n", err), status = 1;
  tio_file_free(&f);
  rt_cache_trim();
  rt_pool_trim();
  return status;
}
