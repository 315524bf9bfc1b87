/* compute_knobs.c — the knob table (compute_knobs.h) and settings: lookup,
 * text form and parsing. */
#include "lower/compute/compute_knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const KnobDef defs[KNOB_COUNT] = {
#define X(id, rule, name, dflt, what, ...) \
  {rule, name, what, dflt, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}},
    KNOBS(X)
#undef X
};

const KnobDef *knob_def(KnobId id) { return id < KNOB_COUNT ? &defs[id] : NULL; }

int knob_find(const char *s) {
  for (int i = 0; i < KNOB_COUNT; i++) {
    size_t r = strlen(defs[i].rule);
    if (strncmp(s, defs[i].rule, r) == 0 && s[r] == '.' && strcmp(s + r + 1, defs[i].name) == 0)
      return i;
  }
  return -1;
}

int knob_value(const LowerKnobs *k, KnobId id) {
  if (k && (k->set >> id & 1)) return k->value[id];
  return defs[id].dflt;
}

void knob_set(LowerKnobs *k, KnobId id, int v) {
  k->value[id] = v;
  if (v == defs[id].dflt)
    k->set &= ~(1u << id);
  else
    k->set |= 1u << id;
}

const char *knob_text(const LowerKnobs *k, char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; k && i < KNOB_COUNT && at < n; i++)
    if (k->set >> i & 1)
      at += (size_t)snprintf(buf + at, n - at, "%s%s.%s=%d", at ? " " : "", defs[i].rule,
                             defs[i].name, k->value[i]);
  return buf;
}

/* One "rule.name=V" word into k. */
static bool parse_word(const char *w, size_t len, LowerKnobs *k) {
  char name[64];
  const char *eq = memchr(w, '=', len);
  if (!eq || (size_t)(eq - w) >= sizeof name) return false;
  snprintf(name, sizeof name, "%.*s", (int)(eq - w), w);
  int id = knob_find(name);
  char *end;
  long v = strtol(eq + 1, &end, 10);
  if (id < 0 || end != w + len || end == eq + 1) return false;
  for (int j = 0; j < defs[id].nvalues; j++)
    if (defs[id].values[j] == v) return knob_set(k, (KnobId)id, (int)v), true;
  return false;
}

bool knob_parse(const char *text, LowerKnobs *k) {
  *k = (LowerKnobs){0};
  for (const char *p = text; *p;) {
    p += strspn(p, " \t,");
    size_t len = strcspn(p, " \t\n,");
    if (len && !parse_word(p, len, k)) return false;
    p += len;
  }
  return true;
}
