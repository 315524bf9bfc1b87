/* settings.h — the REPL's settings (`:set`) as typed rows (internal to repl/).
 *
 * settings.c holds one table; each row is a setting's name, kind (on/off, an
 * integer in a range, one of a list of words), its values, its default, a
 * line of help, and get/set accessors on the Session.  `:set` (listing,
 * parsing, validation, errors), `:help set`, Tab completion and the defaults
 * at session start all read the table, so adding a setting is one row plus
 * whatever the setting itself controls.
 *
 * Settings of the engine (exec, opt, limits) start from the EngineOptions
 * the session was made with (engine_options_default, then the environment,
 * read once by main.c); their `def` restates engine_options_default's value
 * for `:help set` and `:set`, and tests/lit/repl/set.test checks the two
 * agree.  The other settings start at `def`.
 *
 * A value is an int64_t for the other kinds: 0/1 for on/off, the index
 * into `values` for a list of words, the number for an integer; a
 * SETTING_TEXT value is a string (`off`: the empty string). */
#ifndef RLY_REPL_SETTINGS_H
#define RLY_REPL_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "repl/repl.h"

typedef enum SettingKind {
  SETTING_BOOL, /* on or off (true/false and 1/0 are accepted too) */
  SETTING_INT,  /* an integer from min to max */
  SETTING_ENUM, /* one of values */
  SETTING_TEXT, /* a word, such as a directory, or `off` (get_text/set_text) */
  SETTING_SIZE, /* a memory size in bytes: 512M, 4G, 50% (engine_parse_size) */
} SettingKind;

typedef struct Setting {
  const char *name;
  SettingKind kind;
  const char *const *values; /* NULL-terminated: "on", "off" for BOOL; the words for ENUM */
  int64_t min, max;          /* SETTING_INT */
  const char *def;           /* the default, as `:set` takes it */
  bool engine;               /* an EngineOptions field: it starts as the engine's (see above) */
  const char *env;           /* the environment variable that sets its start value, or NULL */
  const char *help;          /* one line, for `:help set` */
  int64_t (*get)(const Session *s);
  void (*set)(Session *s, int64_t v);
  const char *(*get_text)(const Session *s); /* SETTING_TEXT: "" for off */
  void (*set_text)(Session *s, const char *v);
} Setting;

int setting_count(void);
const Setting *setting_get(int i);
/* By exact name; NULL if unknown. */
const Setting *setting_lookup(const char *name);
/* The current value as `:set` takes it (buf holds integers). */
const char *setting_value_text(const Setting *st, const Session *s, char *buf, size_t n);
/* The settings that are not the engine's, at their defaults. */
void settings_init(Session *s);

/* `:set [NAME [VALUE]]`; `:help set`'s list of the settings. */
RunStatus repl_cmd_set(Session *s, const char *args, Span where);
void settings_help(void);

#endif
