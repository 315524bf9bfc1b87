/* options.c — the engine's options from their rows (engine/options.h):
 * parsing a value by its kind, the defaults (each row's default text,
 * parsed), the environment (each row's variable), and access to a field
 * by its row.  How the options are applied is engine.c's
 * (engine_set_options). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "rt/rt.h"

static const OptionInfo rows[] = {
#define X(field, kind, type, values, min, max, def, env, env_value, set, flag, help) \
  {#field, kind, values, min, max, def, env, env_value, set, flag, help},
    ENGINE_OPTIONS(X)
#undef X
};

const OptionInfo *engine_option_info(int i) {
  return i >= 0 && i < ENGINE_OPTION_COUNT ? &rows[i] : NULL;
}

const char *exec_mode_name(ExecMode m) { return OPT_EXEC_VALUES[m]; }

/* ───────────────────────── values ───────────────────────── */

static bool parse_int(const OptionInfo *oi, const char *text, int64_t *v) {
  char *end;
  errno = 0;
  long long n = strtoll(text, &end, 10);
  if (!*text || *end || errno || n < oi->min || n > oi->max) return false;
  *v = n;
  return true;
}

static bool parse_bool(const char *text, int64_t *v) {
  bool on = !strcmp(text, "on") || !strcmp(text, "true") || !strcmp(text, "1");
  bool off = !strcmp(text, "off") || !strcmp(text, "false") || !strcmp(text, "0");
  if (on || off) *v = on;
  return on || off;
}

static bool parse_enum(const OptionInfo *oi, const char *text, int64_t *v) {
  for (int i = 0; oi->values[i]; i++)
    if (strcasecmp(oi->values[i], text) == 0) return *v = i, true;
  return false;
}

bool option_parse(const OptionInfo *oi, const char *text, int64_t *v) {
  switch (oi->kind) {
    case OPT_TEXT:
      return *v = 0, true;
    case OPT_BOOL:
      return parse_bool(text, v);
    case OPT_INT:
      return parse_int(oi, text, v);
    case OPT_SIZE:
      return engine_parse_size(text, v);
    case OPT_ENUM:
      return parse_enum(oi, text, v);
  }
  return false;
}

/* "on or off", "jit or interp", "O0, O1, O2 or O3". */
static void describe_words(const OptionInfo *oi, char *buf, size_t n) {
  int count = 0;
  size_t at = 0;
  while (oi->values[count]) count++;
  for (int i = 0; i < count && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s",
                           i == 0           ? ""
                           : i == count - 1 ? " or "
                                            : ", ",
                           oi->values[i]);
}

const char *option_describe(const OptionInfo *oi, char *buf, size_t n) {
  if (oi->kind == OPT_TEXT)
    snprintf(buf, n, "a directory or off");
  else if (oi->kind == OPT_SIZE)
    snprintf(buf, n, "a size such as 512M, 4G or 50%%");
  else if (oi->kind == OPT_INT && oi->min == 1 && oi->max == INT64_MAX)
    snprintf(buf, n, "a positive integer");
  else if (oi->kind == OPT_INT)
    snprintf(buf, n, "an integer from %lld to %lld", (long long)oi->min, (long long)oi->max);
  else
    describe_words(oi, buf, n);
  return buf;
}

/* ───────────────────────── fields by row ───────────────────────── */

#define OPT_GET_OPT_TEXT(o, field) 0
#define OPT_GET_OPT_BOOL(o, field) (int64_t)(o)->field
#define OPT_GET_OPT_INT OPT_GET_OPT_BOOL
#define OPT_GET_OPT_ENUM OPT_GET_OPT_BOOL
#define OPT_GET_OPT_SIZE OPT_GET_OPT_BOOL
#define OPT_SET_OPT_TEXT(o, field, type, v) (void)(v)
#define OPT_SET_OPT_BOOL(o, field, type, v) (o)->field = (type)(v)
#define OPT_SET_OPT_INT OPT_SET_OPT_BOOL
#define OPT_SET_OPT_ENUM OPT_SET_OPT_BOOL
#define OPT_SET_OPT_SIZE OPT_SET_OPT_BOOL

int64_t engine_option_get(const EngineOptions *o, int i) {
  switch ((EngineOptionId)i) {
#define X(field, kind, ...) \
  case OPTION_##field:      \
    return OPT_GET_##kind(o, field);
    ENGINE_OPTIONS(X)
#undef X
    case ENGINE_OPTION_COUNT:
      break;
  }
  return 0;
}

void engine_option_set(EngineOptions *o, int i, int64_t v) {
  switch ((EngineOptionId)i) {
#define X(field, kind, type, ...)      \
  case OPTION_##field:                 \
    OPT_SET_##kind(o, field, type, v); \
    break;
    ENGINE_OPTIONS(X)
#undef X
    case ENGINE_OPTION_COUNT:
      break;
  }
}

/* The text field of row i, or NULL when it is not a text option. */
static char *text_field(EngineOptions *o, int i, size_t *n) {
#define OPT_TEXT_OPT_TEXT(field) return *n = sizeof o->field, o->field;
#define OPT_TEXT_OPT_BOOL(field)
#define OPT_TEXT_OPT_INT(field)
#define OPT_TEXT_OPT_ENUM(field)
#define OPT_TEXT_OPT_SIZE(field)
#define X(field, kind, ...)  \
  if (i == OPTION_##field) { \
    OPT_TEXT_##kind(field)   \
  }
  ENGINE_OPTIONS(X)
#undef X
  return NULL;
}

const char *engine_option_text(const EngineOptions *o, int i) {
  size_t n;
  const char *t = text_field((EngineOptions *)o, i, &n);
  return t ? t : "";
}

void engine_option_set_text(EngineOptions *o, int i, const char *v) {
  size_t n;
  char *t = text_field(o, i, &n);
  if (t) snprintf(t, n, "%s", v);
}

bool engine_option_parse(EngineOptions *o, int i, const char *text) {
  const OptionInfo *oi = engine_option_info(i);
  int64_t v;
  if (!oi) return false;
  if (oi->kind == OPT_TEXT) {
    engine_option_set_text(o, i, strcmp(text, "off") ? text : "");
    return true;
  }
  if (!option_parse(oi, text, &v)) return false;
  engine_option_set(o, i, v);
  return true;
}

/* ───────────────────────── defaults, environment ───────────────────────── */

EngineOptions engine_options_default(void) {
  EngineOptions o;
  memset(&o, 0, sizeof o);
  for (int i = 0; i < ENGINE_OPTION_COUNT; i++)
    if (!engine_option_parse(&o, i, rows[i].def)) rly_bug(__FILE__, __LINE__, rows[i].field);
  return o;
}

/* The suffix's multiplier (K, KB, KiB alike), 0 when it is none of them. */
static int64_t size_unit(const char *u) {
  static const char units[] = "KMGT";
  if (!*u) return 1;
  const char *at = strchr(units, toupper((unsigned char)*u));
  if (!at || !*at) return 0;
  const char *rest = u + 1;
  if (strcmp(rest, "") && strcasecmp(rest, "B") && strcasecmp(rest, "iB")) return 0;
  return (int64_t)1 << (10 * (at - units + 1));
}

/* N% needs the machine's memory; when it does not say, the default (75%)
 * is rt's own default. */
bool engine_parse_size(const char *text, int64_t *bytes) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || errno || !(v > 0) || isspace((unsigned char)*text)) return false;
  if (strcmp(end, "%") == 0) {
    size_t ram = rt_physical_memory();
    if (v > 100 || (!ram && strcmp(text, "75%"))) return false;
    *bytes = ram ? (int64_t)((double)ram * v / 100) : (int64_t)RT_DEFAULT_MAX_BYTES;
  } else {
    int64_t unit = size_unit(end);
    if (!unit || v * (double)unit >= 9.2e18) return false;
    *bytes = (int64_t)(v * (double)unit);
  }
  if (*bytes < 1) *bytes = 1;
  return true;
}

/* One row's variable: a BOOL's env_value turns it from its default; other
 * values are parsed as `:set` parses them (ignored when they do not). */
static void env_option(EngineOptions *o, int i) {
  const OptionInfo *oi = &rows[i];
  const char *v = oi->env ? getenv(oi->env) : NULL;
  int64_t def;
  if (!v || !*v) return;
  if (!oi->env_value) {
    engine_option_parse(o, i, v);
  } else if (strcmp(v, oi->env_value) == 0 && option_parse(oi, oi->def, &def)) {
    engine_option_set(o, i, !def);
  }
}

/* The JIT's disk cache directory: $XDG_CACHE_HOME/rly, else ~/.cache/rly. */
static void env_cache_dir(EngineOptions *o) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    snprintf(o->cache_dir, sizeof o->cache_dir, "%s/rly", xdg);
  else if (home && *home)
    snprintf(o->cache_dir, sizeof o->cache_dir, "%s/.cache/rly", home);
}

void engine_options_from_env(EngineOptions *o) {
  for (int i = 0; i < ENGINE_OPTION_COUNT; i++) env_option(o, i);
  env_cache_dir(o);
}
