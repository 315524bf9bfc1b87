/* settings.c — the settings table (repl/settings.h) and `:set`.
 *
 * The rows are the single source of truth: `:set` lists them, parses and
 * validates a value by the row's kind, `:help set` prints their help, Tab
 * completes their names and values, and session_new applies the defaults
 * of the session's own settings.  The accessors are small functions: on
 * the Session for its own settings; for the engine's, ENGINE_ACCESSORS over
 * one EngineOptions field, which the engine applies where it matters
 * (engine_set_options). */
#include "repl/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const on_off[] = {"on", "off", NULL};

/* ───────────────────────── accessors ───────────────────────── */

/* get_F and set_F for the EngineOptions field F: a value is the field's
 * (0/1 for a bool, the ExecMode or the index of a list of words that
 * follows the field's order); a change goes through a copy of the
 * options, so the engine applies it everywhere. */
#define ENGINE_ACCESSORS(field)                               \
  static int64_t get_##field(const Session *s) {              \
    return (int64_t)engine_options(session_engine(s))->field; \
  }                                                           \
  static void set_##field(Session *s, int64_t v) {            \
    EngineOptions o = *engine_options(session_engine(s));     \
    o.field = v;                                              \
    engine_set_options(session_engine(s), &o);                \
  }

ENGINE_ACCESSORS(print_limit)
ENGINE_ACCESSORS(max_depth)
ENGINE_ACCESSORS(max_memory)
ENGINE_ACCESSORS(prng_original) /* prng's values: partitionable (0), original (1) */
ENGINE_ACCESSORS(exec)          /* exec's values are EXEC_MODES' names, in ExecMode order */
ENGINE_ACCESSORS(opt_level)     /* opt's values are O0..O3: the index is the level */
ENGINE_ACCESSORS(approx_math)
ENGINE_ACCESSORS(print_after_all)
ENGINE_ACCESSORS(fp_contract)

static int64_t get_types(const Session *s) { return s->show_types; }
static void set_types(Session *s, int64_t v) { s->show_types = v; }

static int64_t get_verify(const Session *s) { return s->verify; }
static void set_verify(Session *s, int64_t v) { s->verify = v; }

static int64_t get_show_prelude(const Session *s) { return s->show_prelude; }
static void set_show_prelude(Session *s, int64_t v) { s->show_prelude = v; }
static const char *get_step_dot(const Session *s) { return s->step_dot; }
static void set_step_dot(Session *s, const char *v) {
  snprintf(s->step_dot, sizeof s->step_dot, "%s", v);
}

/* ───────────────────────── the table ───────────────────────── */

#define EXEC_NAME(e, n) n,

/* {name, kind, values, min, max, default, engine's, environment, help, get, set} */
static const Setting settings[] = {
    {"print-limit", SETTING_INT, NULL, 1, INT64_MAX, "1000", true, NULL,
     "tensors with more than N elements print summarized", get_print_limit, set_print_limit, NULL,
     NULL},
    {"types", SETTING_BOOL, on_off, 0, 0, "off", false, NULL,
     "print each value's type after it (`value : type`)", get_types, set_types, NULL, NULL},
    {"max-depth", SETTING_INT, NULL, 1, INT64_MAX, "100000", true, NULL,
     "limit on non-tail call depth (deep recursion)", get_max_depth, set_max_depth, NULL, NULL},
    {"max-memory", SETTING_SIZE, NULL, 1, INT64_MAX, "75%", true, "RLY_MAX_MEMORY",
     "limit on the tensor data alive at once: bytes, K/M/G/T, or N% of the memory", get_max_memory,
     set_max_memory, NULL, NULL},
    {"prng", SETTING_ENUM, (const char *const[]){"partitionable", "original", NULL}, 0, 0,
     "partitionable", true, NULL, "JAX's PRNG mode for random ops", get_prng_original,
     set_prng_original, NULL, NULL},
    {"verify", SETTING_BOOL, on_off, 0, 0, "off", false, NULL,
     "type-check and verify after every pass of :pass and :step", get_verify, set_verify, NULL,
     NULL},
    {"show-prelude", SETTING_BOOL, on_off, 0, 0, "off", false, NULL,
     ":pass and :step without @f include the prelude's definitions", get_show_prelude,
     set_show_prelude, NULL, NULL},
    {"step-dot", SETTING_TEXT, NULL, 0, 0, "off", false, NULL,
     ":step draws each rewrite's before and after into DIR (NNN-before.svg, NNN-after.svg)", NULL,
     NULL, get_step_dot, set_step_dot},
    {"exec", SETTING_ENUM, (const char *const[]){EXEC_MODES(EXEC_NAME) NULL}, 0, 0, "jit", true,
     "RLY_EXEC", "jit: fused, compiled kernels; interp: reference kernels only", get_exec, set_exec,
     NULL, NULL},
    {"opt", SETTING_ENUM, (const char *const[]){"O0", "O1", "O2", "O3", NULL}, 0, 0, "O2", true,
     NULL, "LLVM optimization level of kernels compiled from now on", get_opt_level, set_opt_level,
     NULL, NULL},
    {"approx-math", SETTING_BOOL, on_off, 0, 0, "on", true, "RLY_APPROX_MATH",
     "jit: float32 exp/tanh/erf/softmax as TVM's fast_* approximations (FastMath)", get_approx_math,
     set_approx_math, NULL, NULL},
    {"print-after-all", SETTING_BOOL, on_off, 0, 0, "off", true, NULL,
     "print the IR after each pass of a compile, :pass and :step, on stderr", get_print_after_all,
     set_print_after_all, NULL, NULL},
    {"fp-contract", SETTING_BOOL, on_off, 0, 0, "on", true, "RLY_JIT_CONTRACT",
     "jit: a*b+c in kernels may be one fused multiply-add, rounded once (off: as interp)",
     get_fp_contract, set_fp_contract, NULL, NULL},
};
enum { NSETTINGS = sizeof settings / sizeof settings[0] };

int setting_count(void) { return NSETTINGS; }
const Setting *setting_get(int i) { return i >= 0 && i < NSETTINGS ? &settings[i] : NULL; }

const Setting *setting_lookup(const char *name) {
  for (int i = 0; i < NSETTINGS; i++)
    if (strcmp(settings[i].name, name) == 0) return &settings[i];
  return NULL;
}

/* ───────────────────────── values ───────────────────────── */

static bool parse_int(const Setting *st, const char *text, int64_t *v) {
  char *end;
  errno = 0;
  long long n = strtoll(text, &end, 10);
  if (!*text || *end || errno || n < st->min || n > st->max) return false;
  *v = n;
  return true;
}

static bool parse_bool(const char *text, int64_t *v) {
  bool on = !strcmp(text, "on") || !strcmp(text, "true") || !strcmp(text, "1");
  bool off = !strcmp(text, "off") || !strcmp(text, "false") || !strcmp(text, "0");
  if (on || off) *v = on;
  return on || off;
}

static bool parse_enum(const Setting *st, const char *text, int64_t *v) {
  for (int i = 0; st->values[i]; i++)
    if (strcasecmp(st->values[i], text) == 0) return *v = i, true;
  return false;
}

static bool setting_parse(const Setting *st, const char *text, int64_t *v) {
  switch (st->kind) {
    case SETTING_TEXT:
      return *v = 0, true; /* the text itself is the value (repl_cmd_set) */
    case SETTING_BOOL:
      return parse_bool(text, v);
    case SETTING_INT:
      return parse_int(st, text, v);
    case SETTING_SIZE:
      return engine_parse_size(text, v);
    case SETTING_ENUM:
      return parse_enum(st, text, v);
  }
  return false;
}

/* A size as `:set` takes it: the largest unit that divides it ("12G",
 * "1536M"), else bytes. */
static const char *size_text(char *buf, size_t n, int64_t v) {
  static const char units[] = "TGMK";
  for (int i = 0; i < 4; i++) {
    int64_t u = (int64_t)1 << (10 * (4 - i));
    if (v % u == 0) {
      snprintf(buf, n, "%lld%c", (long long)(v / u), units[i]);
      return buf;
    }
  }
  snprintf(buf, n, "%lld", (long long)v);
  return buf;
}

const char *setting_value_text(const Setting *st, const Session *s, char *buf, size_t n) {
  if (st->kind == SETTING_TEXT) return st->get_text(s)[0] ? st->get_text(s) : "off";
  int64_t v = st->get(s);
  switch (st->kind) {
    case SETTING_TEXT:
      break;
    case SETTING_BOOL:
      return v ? "on" : "off";
    case SETTING_ENUM:
      return st->values[v];
    case SETTING_INT:
      snprintf(buf, n, "%lld", (long long)v);
      return buf;
    case SETTING_SIZE:
      return size_text(buf, n, v);
  }
  return "";
}

/* What a value must be: "on or off", "jit or interp", "O0, O1, O2 or O3",
 * "a positive integer", "an integer from 1 to 64". */
static void describe(const Setting *st, StrBuf *b) {
  if (st->kind == SETTING_TEXT) {
    sb_puts(b, "a directory or off");
    return;
  }
  if (st->kind == SETTING_SIZE) {
    sb_puts(b, "a size such as 512M, 4G or 50%");
    return;
  }
  if (st->kind == SETTING_INT) {
    if (st->min == 1 && st->max == INT64_MAX)
      sb_puts(b, "a positive integer");
    else
      sb_printf(b, "an integer from %lld to %lld", (long long)st->min, (long long)st->max);
    return;
  }
  int n = 0;
  while (st->values[n]) n++;
  for (int i = 0; i < n; i++)
    sb_printf(b, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", st->values[i]);
}

/* The synopsis of the values for `:help set`: "on|off", "N". */
static void synopsis(const Setting *st, StrBuf *b) {
  if (st->kind == SETTING_INT) sb_puts(b, "N");
  if (st->kind == SETTING_TEXT) sb_puts(b, "DIR|off");
  if (st->kind == SETTING_SIZE) sb_puts(b, "SIZE");
  for (int i = 0; st->kind != SETTING_INT && st->values && st->values[i]; i++)
    sb_printf(b, "%s%s", i ? "|" : "", st->values[i]);
}

void settings_init(Session *s) {
  for (int i = 0; i < NSETTINGS; i++) {
    const Setting *st = &settings[i];
    int64_t v;
    if (st->engine) continue;
    if (st->kind == SETTING_TEXT) {
      st->set_text(s, strcmp(st->def, "off") ? st->def : "");
      continue;
    }
    if (!setting_parse(st, st->def, &v)) rly_bug(__FILE__, __LINE__, st->name);
    st->set(s, v);
  }
}

/* ───────────────────────── :set and :help set ───────────────────────── */

static void show_one(const Session *s, const Setting *st) {
  char buf[32];
  const char *v = setting_value_text(st, s, buf, sizeof buf);
  int64_t cur = st->kind == SETTING_TEXT ? 0 : st->get(s), def;
  bool is_default = st->kind == SETTING_TEXT ? strcmp(v, st->def) == 0
                                             : setting_parse(st, st->def, &def) && def == cur;
  if (is_default)
    printf("%s %s\n", st->name, v);
  else
    printf("%s %s  (default %s)\n", st->name, v, st->def);
}

static char *head(const Setting *st) {
  StrBuf b = {0};
  sb_printf(&b, "%s ", st->name);
  synopsis(st, &b);
  return sb_take(&b);
}

/* One line per row, the help aligned after the longest `:set NAME VALUES`. */
void settings_help(void) {
  int width = 0;
  for (int i = 0; i < NSETTINGS; i++) {
    char *h = head(&settings[i]);
    if ((int)strlen(h) > width) width = (int)strlen(h);
    free(h);
  }
  for (int i = 0; i < NSETTINGS; i++) {
    const Setting *st = &settings[i];
    char *h = head(st);
    printf("  :set %-*s  %s (default %s", width, h, st->help, st->def);
    if (st->env) printf(", or $%s", st->env);
    puts(")");
    free(h);
  }
  puts("  `:set NAME` alone shows one setting; `:set` alone shows them all.");
}

static RunStatus unknown_setting(Session *s, const char *name, Span sp) {
  const char *names[NSETTINGS + 1];
  for (int i = 0; i < NSETTINGS; i++) names[i] = settings[i].name;
  names[NSETTINGS] = NULL;
  const char *near = repl_nearest(names, name);
  char hint[128] = "`:help set` lists the settings";
  if (near) snprintf(hint, sizeof hint, "did you mean `%s`?", near);
  session_error(s, sp, hint, "unknown setting `%s`", name);
  return RUN_ERROR;
}

static RunStatus bad_value(Session *s, const Setting *st, const char *val, Span sp) {
  StrBuf want = {0};
  describe(st, &want);
  session_error(s, sp, NULL, "`:set %s` needs %s, not `%s`", st->name, want.data, val);
  sb_free(&want);
  return RUN_ERROR;
}

/* `:set` shows every setting, `:set NAME` one, `:set NAME VALUE` changes
 * it (the value parsed by the setting's own kind). */
RunStatus repl_cmd_set(Session *s, const char *args, Span where) {
  if (!*args) {
    for (int i = 0; i < NSETTINGS; i++) show_one(s, &settings[i]);
    return RUN_OK;
  }
  size_t n = strcspn(args, " \t");
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), args);
  const Setting *st = setting_lookup(name);
  if (!st) return unknown_setting(s, name, span_make(where.off, n));
  const char *val = args + n + strspn(args + n, " \t");
  if (!*val) return show_one(s, st), RUN_OK;
  Span val_sp = span_make(where.off + (uint32_t)(val - args), strlen(val));
  if (st->kind == SETTING_TEXT) {
    st->set_text(s, strcmp(val, "off") ? val : "");
    return RUN_OK;
  }
  int64_t v;
  if (!setting_parse(st, val, &v)) return bad_value(s, st, val, val_sp);
  st->set(s, v);
  return RUN_OK;
}
