/* settings.h — the REPL's settings (`:set`) as typed rows (internal to repl/).
 *
 * The engine's settings (exec, opt, limits) are the rows of ENGINE_OPTIONS
 * with a `:set` name (engine/options.h: name, kind, values, default,
 * environment variable, help); they start from the EngineOptions the
 * session was made with (engine_options_default, then the environment,
 * read once by main.c) and a change goes through engine_set_options.  The
 * session's own settings (types, verify, show-prelude, step-dot) are the
 * rows of settings.c's table, with get/set accessors on the Session; they
 * start at their default.  `:set` (listing, parsing, validation, errors),
 * `:help set`, Tab completion and the defaults at session start all read
 * these rows, the engine's first, so adding a setting is one row plus
 * whatever the setting itself controls.
 *
 * A value is an int64_t for the other kinds: 0/1 for on/off, the index
 * into `values` for a list of words, the number for an integer; an
 * OPT_TEXT value is a string (`off`: the empty string). */
#ifndef RLY_REPL_SETTINGS_H
#define RLY_REPL_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "repl/repl.h"

typedef struct Setting {
  const char *name;
  OptionInfo o; /* kind, values, range, default, environment, help */
  int option;   /* the engine's row (engine_option_info), or -1: the session's own */
  int64_t (*get)(const Session *s);
  void (*set)(Session *s, int64_t v);
  const char *(*get_text)(const Session *s); /* OPT_TEXT: "" for off */
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
