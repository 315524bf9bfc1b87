/* extern.c — the registry of external functions (extern.h): a small array
 * searched linearly (a handful of names; lookups happen once per call). */
#include <stdlib.h>
#include <string.h>

#include "interp/extern.h"
#include "ir/util.h"

typedef struct Entry {
  char *name;
  RlyExternFn fn;
  void *ctx;
} Entry;

static Entry *entries;
static size_t nentries, capentries;

static Entry *find(const char *name) {
  for (size_t i = 0; i < nentries; i++)
    if (strcmp(entries[i].name, name) == 0) return &entries[i];
  return NULL;
}

static void remove_entry(Entry *e) {
  free(e->name);
  *e = entries[--nentries];
}

void rly_register_extern(const char *name, RlyExternFn fn, void *ctx) {
  Entry *e = find(name);
  if (!fn) {
    if (e) remove_entry(e);
    return;
  }
  if (!e) {
    if (nentries == capentries) {
      capentries = capentries ? 2 * capentries : 8;
      entries = realloc(entries, sizeof(Entry) * capentries);
      if (!entries) rly_oom();
    }
    e = &entries[nentries++];
    e->name = strdup(name);
    if (!e->name) rly_oom();
  }
  e->fn = fn, e->ctx = ctx;
}

RlyExternFn rly_extern_lookup(const char *name, void **ctx) {
  const Entry *e = find(name);
  if (ctx) *ctx = e ? e->ctx : NULL;
  return e ? e->fn : NULL;
}

void rly_extern_clear(void) {
  while (nentries) remove_entry(&entries[nentries - 1]);
  free(entries);
  entries = NULL, capentries = 0;
}
