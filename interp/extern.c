/* extern.c — the registry of external functions (extern.h).
 *
 * A small array of heap-allocated entries searched linearly (a handful of
 * names; one lookup per call).  Entries are separate allocations so the
 * pointer handed out as the call context stays valid while other names are
 * registered.  Libraries opened by rly_extern_load stay open for the life
 * of the process: a registered function may be called at any time.
 *
 * Process-wide on purpose: an extern names a C function of the process
 * (rly_register_extern takes no session), as the libraries it opens are.
 * Sessions on several threads may register and call at once: `mu` guards
 * the table, and a call copies its entry's function and context under it.
 * Removing a name while another thread calls it is the embedder's race. */
#include "interp/extern.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/util.h"

typedef struct Entry {
  char *name;
  RlyDLExternFn fn;
  void *ctx;
} Entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static Entry **entries;
static size_t nentries, capentries;

static Entry **find(const char *name) {
  for (size_t i = 0; i < nentries; i++)
    if (strcmp(entries[i]->name, name) == 0) return &entries[i];
  return NULL;
}

static void remove_entry(Entry **e) {
  free((*e)->name);
  free(*e);
  *e = entries[--nentries];
}

/* Registers, replaces (same name) or, with fn NULL, removes an external
 * function.  An existing entry is updated in place, so a context pointer
 * already handed out stays valid. */
static void register_locked(const char *name, RlyDLExternFn fn, void *ctx) {
  Entry **e = find(name);
  if (!fn) {
    if (e) remove_entry(e);
    return;
  }
  if (!e) {
    if (nentries == capentries) {
      capentries = capentries ? 2 * capentries : 8;
      entries = realloc(entries, sizeof(Entry *) * capentries);
      if (!entries) rly_oom();
    }
    Entry *n = calloc(1, sizeof *n);
    if (!n || !(n->name = strdup(name))) rly_oom();
    entries[nentries] = n;
    e = &entries[nentries++];
  }
  (*e)->fn = fn, (*e)->ctx = ctx;
}

void rly_register_extern(const char *name, RlyDLExternFn fn, void *ctx) {
  pthread_mutex_lock(&mu);
  register_locked(name, fn, ctx);
  pthread_mutex_unlock(&mu);
}

void rly_extern_clear(void) {
  pthread_mutex_lock(&mu);
  while (nentries) remove_entry(&entries[nentries - 1]);
  free(entries);
  entries = NULL, capentries = 0;
  pthread_mutex_unlock(&mu);
}

bool rly_extern_load(const char *name, const char *lib, const char *symbol, char *err,
                     size_t errn) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    snprintf(err, errn, "cannot load library %s: %s", lib, why ? why : "unknown error");
    return false;
  }
  dlerror();
  void *sym = dlsym(h, symbol);
  const char *why = dlerror();
  if (!sym || why) {
    snprintf(err, errn, "library %s has no symbol %s%s%s", lib, symbol, why ? ": " : "",
             why ? why : "");
    return false; /* the handle stays open: dlclose of a library in use elsewhere is unsafe */
  }
  RlyDLExternFn fn;
  memcpy(&fn, &sym, sizeof fn); /* POSIX: data and function pointers convert */
  rly_register_extern(name, fn, NULL);
  return true;
}

/* ───────────────────────── DLPack views ───────────────────────── */

DLDataType rly_dlpack_dtype(DType dt) {
  DLDataType t = {kDLFloat, (uint8_t)(8 * dtype_bytes(dt)), 1};
  char c = dtype_class(dt);
  if (c == 'i')
    t.code = kDLInt;
  else if (c == 'u' || c == 'b')
    t.code = kDLUInt;
  else if (dt == DT_BFLOAT16)
    t.code = kDLBfloat;
  return t;
}

bool rly_dtype_from_dlpack(DLDataType t, DType *out) {
  if (t.lanes != 1) return false;
  for (int d = 0; d < DT_COUNT; d++) {
    DLDataType u = rly_dlpack_dtype((DType)d);
    if (d != DT_BOOL && u.code == t.code && u.bits == t.bits) return *out = (DType)d, true;
  }
  return false;
}

/* The caller rly_extern_lookup hands out: RlyTensor views → DLTensors. */
static int call_dlpack(const RlyTensor *args, int nargs, void *ctx, char *err, size_t errn) {
  const Entry *e = ctx;
  DLTensor *ts = calloc(nargs > 0 ? (size_t)nargs : 1, sizeof *ts);
  if (!ts) rly_oom();
  for (int i = 0; i < nargs; i++) {
    ts[i].data = args[i].data;
    ts[i].device = (DLDevice){kDLCPU, 0};
    ts[i].ndim = args[i].ndim;
    ts[i].dtype = rly_dlpack_dtype(args[i].dtype);
    ts[i].shape = (int64_t *)(uintptr_t)args[i].shape; /* functions must not write it */
    ts[i].strides = NULL;
    ts[i].byte_offset = 0;
  }
  pthread_mutex_lock(&mu);
  RlyDLExternFn fn = e->fn;
  void *fctx = e->ctx;
  pthread_mutex_unlock(&mu);
  int rc = fn(ts, nargs, fctx, err, errn);
  free(ts);
  return rc;
}

RlyExternFn rly_extern_lookup(const char *name, void **ctx) {
  pthread_mutex_lock(&mu);
  Entry **e = find(name);
  Entry *found = e ? *e : NULL;
  pthread_mutex_unlock(&mu);
  if (ctx) *ctx = found;
  return found ? call_dlpack : NULL;
}
