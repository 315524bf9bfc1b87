/* settings.c — the settings of `:set` (repl/settings.h) and the command.
 *
 * The rows are the single source of truth: the engine's come from
 * ENGINE_OPTIONS (engine/options.h), the session's own from the table
 * below.  `:set` lists them, parses and validates a value by the row's
 * kind (the engine's option_parse), `:help set` prints their help, Tab
 * completes their names and values, and session_new applies the defaults
 * of the session's own settings.  A change of an engine setting goes
 * through a copy of the options, so the engine applies it everywhere
 * (engine_set_options). */
#include "repl/settings.h"

#include <stdlib.h>
#include <string.h>

/* ───────────────────────── the session's own ───────────────────────── */

static int64_t get_types(const Session *s) { return s->show_types; }
static void set_types(Session *s, int64_t v) { s->show_types = v; }

static int64_t get_verify(const Session *s) { return s->verify; }
/* Schedules are verified with the passes (engine option verify_schedules). */
static void set_verify(Session *s, int64_t v) {
  s->verify = v;
  EngineOptions o = *engine_options(session_engine(s));
  o.verify_schedules = v;
  engine_set_options(session_engine(s), &o);
}

static int64_t get_show_prelude(const Session *s) { return s->show_prelude; }
static void set_show_prelude(Session *s, int64_t v) { s->show_prelude = v; }
static const char *get_step_dot(const Session *s) { return s->step_dot; }
static void set_step_dot(Session *s, const char *v) {
  snprintf(s->step_dot, sizeof s->step_dot, "%s", v);
}

/* X(name, kind, default, help, get, set, get_text, set_text) */
#define SESSION_SETTINGS(X)                                                                       \
  X("types", OPT_BOOL, "off", "print each value's type after it (`value : type`)", get_types,     \
    set_types, NULL, NULL)                                                                        \
  X("verify", OPT_BOOL, "off", "type-check and verify after every pass of :pass and :step",       \
    get_verify, set_verify, NULL, NULL)                                                           \
  X("show-prelude", OPT_BOOL, "off",                                                              \
    ":pass and :step without @f include the prelude's definitions", get_show_prelude,             \
    set_show_prelude, NULL, NULL)                                                                 \
  X("step-dot", OPT_TEXT, "off",                                                                  \
    ":step draws each rewrite's before and after into DIR (NNN-before.svg, NNN-after.svg)", NULL, \
    NULL, get_step_dot, set_step_dot)

static const Setting session_rows[] = {
#define X(nm, kd, df, hp, g, st, gt, stt)                                                           \
  {                                                                                                 \
      nm,                                                                                           \
      {.kind = kd, .values = kd == OPT_BOOL ? OPT_ON_OFF : NULL, .def = df, .set = nm, .help = hp}, \
      -1,                                                                                           \
      g,                                                                                            \
      st,                                                                                           \
      gt,                                                                                           \
      stt},
    SESSION_SETTINGS(X)
#undef X
};
enum { NSESSION = sizeof session_rows / sizeof session_rows[0] };

/* ───────────────────────── the table ───────────────────────── */

static Setting table[ENGINE_OPTION_COUNT + NSESSION];
static int ntable;

/* The engine's rows with a `:set` name, then the session's (built once). */
static void build_table(void) {
  if (ntable) return;
  for (int i = 0; i < ENGINE_OPTION_COUNT; i++) {
    const OptionInfo *oi = engine_option_info(i);
    if (oi->set) table[ntable++] = (Setting){.name = oi->set, .o = *oi, .option = i};
  }
  for (int i = 0; i < NSESSION; i++) table[ntable++] = session_rows[i];
}

int setting_count(void) { return build_table(), ntable; }
const Setting *setting_get(int i) {
  build_table();
  return i >= 0 && i < ntable ? &table[i] : NULL;
}

const Setting *setting_lookup(const char *name) {
  build_table();
  for (int i = 0; i < ntable; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

/* ───────────────────────── values ───────────────────────── */

static int64_t value_of(const Setting *st, const Session *s) {
  if (st->option >= 0) return engine_option_get(engine_options(session_engine(s)), st->option);
  return st->get(s);
}

static const char *text_of(const Setting *st, const Session *s) {
  if (st->option >= 0) return engine_option_text(engine_options(session_engine(s)), st->option);
  return st->get_text(s);
}

static void set_value(const Setting *st, Session *s, int64_t v) {
  if (st->option < 0) {
    st->set(s, v);
    return;
  }
  EngineOptions o = *engine_options(session_engine(s));
  engine_option_set(&o, st->option, v);
  engine_set_options(session_engine(s), &o);
}

static void set_text(const Setting *st, Session *s, const char *v) {
  if (st->option < 0) {
    st->set_text(s, v);
    return;
  }
  EngineOptions o = *engine_options(session_engine(s));
  engine_option_set_text(&o, st->option, v);
  engine_set_options(session_engine(s), &o);
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
  if (st->o.kind == OPT_TEXT) return text_of(st, s)[0] ? text_of(st, s) : "off";
  int64_t v = value_of(st, s);
  switch (st->o.kind) {
    case OPT_TEXT:
      break;
    case OPT_BOOL:
      return v ? "on" : "off";
    case OPT_ENUM:
      return st->o.values[v];
    case OPT_INT:
      snprintf(buf, n, "%lld", (long long)v);
      return buf;
    case OPT_SIZE:
      return size_text(buf, n, v);
  }
  return "";
}

/* The synopsis of the values for `:help set`: "on|off", "N". */
static void synopsis(const Setting *st, StrBuf *b) {
  if (st->o.kind == OPT_INT) sb_puts(b, "N");
  if (st->o.kind == OPT_TEXT) sb_puts(b, "DIR|off");
  if (st->o.kind == OPT_SIZE) sb_puts(b, "SIZE");
  for (int i = 0; st->o.kind != OPT_INT && st->o.values && st->o.values[i]; i++)
    sb_printf(b, "%s%s", i ? "|" : "", st->o.values[i]);
}

void settings_init(Session *s) {
  bool verify = engine_options(session_engine(s))->verify_schedules; /* RLY_VERIFY_SCHEDULES=1 */
  for (int i = 0; i < NSESSION; i++) {
    const Setting *st = &session_rows[i];
    int64_t v;
    if (st->o.kind == OPT_TEXT) {
      st->set_text(s, strcmp(st->o.def, "off") ? st->o.def : "");
      continue;
    }
    if (!option_parse(&st->o, st->o.def, &v)) rly_bug(__FILE__, __LINE__, st->name);
    st->set(s, v);
  }
  if (verify) { /* RLY_VERIFY_SCHEDULES=1 verifies schedules, `:set verify` stays as it was */
    EngineOptions o = *engine_options(session_engine(s));
    o.verify_schedules = true;
    engine_set_options(session_engine(s), &o);
  }
}

/* ───────────────────────── :set and :help set ───────────────────────── */

static bool is_default(const Setting *st, const Session *s, const char *text) {
  int64_t def;
  if (st->o.kind == OPT_TEXT) return strcmp(text, st->o.def) == 0;
  return option_parse(&st->o, st->o.def, &def) && def == value_of(st, s);
}

static void show_one(const Session *s, const Setting *st) {
  char buf[32];
  const char *v = setting_value_text(st, s, buf, sizeof buf);
  if (is_default(st, s, v))
    printf("%s %s\n", st->name, v);
  else
    printf("%s %s  (default %s)\n", st->name, v, st->o.def);
}

static char *head(const Setting *st) {
  StrBuf b = {0};
  sb_printf(&b, "%s ", st->name);
  synopsis(st, &b);
  return sb_take(&b);
}

/* One line per row, the help aligned after the longest `:set NAME VALUES`. */
void settings_help(void) {
  int width = 0, n = setting_count();
  for (int i = 0; i < n; i++) {
    char *h = head(&table[i]);
    if ((int)strlen(h) > width) width = (int)strlen(h);
    free(h);
  }
  for (int i = 0; i < n; i++) {
    const Setting *st = &table[i];
    char *h = head(st);
    printf("  :set %-*s  %s (default %s", width, h, st->o.help, st->o.def);
    if (st->o.env) printf(", or $%s", st->o.env);
    puts(")");
    free(h);
  }
  puts("  `:set NAME` alone shows one setting; `:set` alone shows them all.");
}

static RunStatus unknown_setting(Session *s, const char *name, Span sp) {
  const char *names[ENGINE_OPTION_COUNT + NSESSION + 1];
  int n = setting_count();
  for (int i = 0; i < n; i++) names[i] = table[i].name;
  names[n] = NULL;
  const char *near = repl_nearest(names, name);
  char hint[128] = "`:help set` lists the settings";
  if (near) snprintf(hint, sizeof hint, "did you mean `%s`?", near);
  session_error(s, sp, hint, "unknown setting `%s`", name);
  return RUN_ERROR;
}

static RunStatus bad_value(Session *s, const Setting *st, const char *val, Span sp) {
  char want[128];
  session_error(s, sp, NULL, "`:set %s` needs %s, not `%s`", st->name,
                option_describe(&st->o, want, sizeof want), val);
  return RUN_ERROR;
}

/* `:set` shows every setting, `:set NAME` one, `:set NAME VALUE` changes
 * it (the value parsed by the setting's own kind). */
RunStatus repl_cmd_set(Session *s, const char *args, Span where) {
  if (!*args) {
    for (int i = 0; i < setting_count(); i++) show_one(s, &table[i]);
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
  if (st->o.kind == OPT_TEXT) {
    set_text(st, s, strcmp(val, "off") ? val : "");
    return RUN_OK;
  }
  int64_t v;
  if (!option_parse(&st->o, val, &v)) return bad_value(s, st, val, val_sp);
  set_value(st, s, v);
  return RUN_OK;
}
