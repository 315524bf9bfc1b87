/* loop.c — the interactive loop and the banner.
 *
 * Lines are collected into one input until it parses (Lua's rule: an input
 * whose first error is at its end continues on the next line, with the
 * `...> ` prompt).  The whole input, however many lines, is one history
 * entry and one source `<repl:N>`; N counts inputs (blank ones do not
 * count).  Ctrl-C drops the input being typed; Ctrl-D on an empty line
 * ends the session, on a continuation line it runs what was typed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "repl/repl.h"

static bool blank_text(const char *t) {
  for (; *t; t++)
    if (*t != ' ' && *t != '\t' && *t != '\n' && *t != '\r') return false;
  return true;
}

/* "avx2, fma": the host features worth naming, from a space-separated flag
 * list (/proc/cpuinfo's "flags"). */
static void notable_features(const char *all, char *out, size_t n) {
  static const char *const notable[] = {"avx512f", "avx2", "fma", "neon", "sve", "sve2", NULL};
  out[0] = 0;
  for (int i = 0; notable[i]; i++) {
    const char *p = all ? strstr(all, notable[i]) : NULL;
    size_t k = strlen(notable[i]);
    while (p && ((p != all && p[-1] != ' ') || (p[k] && p[k] != ' ' && p[k] != '\n')))
      p = strstr(p + 1, notable[i]);
    if (!p) continue;
    size_t used = strlen(out);
    snprintf(out + used, n - used, "%s%s", used ? ", " : "", notable[i]);
  }
}

/* The CPU from /proc/cpuinfo: LLVM (the JIT module) is not loaded at start-up. */
static void cpu_info(char *model, size_t mn, char *notable, size_t nn) {
  snprintf(model, mn, "unknown cpu");
  notable[0] = 0;
  FILE *fp = fopen("/proc/cpuinfo", "r");
  if (!fp) return;
  char line[4096];
  bool have_model = false, have_flags = false;
  while ((!have_model || !have_flags) && fgets(line, sizeof line, fp)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    const char *v = colon + 1 + (colon[1] == ' ');
    if (!have_model && strncmp(line, "model name", 10) == 0) {
      snprintf(model, mn, "%.*s", (int)strcspn(v, "\n"), v);
      have_model = true;
    } else if (!have_flags &&
               (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0)) {
      notable_features(v, notable, nn);
      have_flags = true;
    }
  }
  fclose(fp);
}

void session_banner(FILE *f) {
  char model[128], notable[128];
  cpu_info(model, sizeof model, notable, sizeof notable);
  const char *v = engine_llvm_version(), *dot = strchr(v, '.');
  int n = dot && strchr(dot + 1, '.') ? (int)(strchr(dot + 1, '.') - v) : (int)strlen(v);
  fprintf(f, "rly %s · LLVM %.*s · %s%s%s%s · :help for commands\n", RLY_VERSION, n, v, model,
          notable[0] ? " (" : "", notable, notable[0] ? ")" : "");
}

static void clear(StrBuf *b) {
  b->len = 0;
  if (b->data) b->data[0] = 0;
}

/* Adds a line to the input being collected; false if the input is empty. */
static bool collect(StrBuf *input, char *line) {
  if (line) {
    if (input->len) sb_putc(input, '\n');
    sb_puts(input, line);
    free(line);
  }
  if (input->len && !blank_text(input->data)) return true;
  clear(input);
  return false;
}

/* Runs one input with Ctrl-C armed: from here to its end SIGINT sets the
 * runtime's interrupt flag (a Ctrl-C from before this input is dropped),
 * which the evaluator, kernels and compiles poll. */
static RunStatus run_input(Session *s, const char *name, StrBuf *input, bool more) {
  repl_interrupted = 0;
  engine_interrupt_clear();
  repl_in_eval = 1;
  RunStatus st = session_run(s, name, input->data, input->len, more);
  repl_in_eval = 0;
  return st;
}

/* The interactive loop: lines are collected until the input parses (or
 * fails for a reason other than running out), then run as one input;
 * Ctrl-C drops a partial input, end of input quits. */
int session_repl(Session *s, bool tty) {
  bool color = tty && !getenv("NO_COLOR");
  const LineEditor *ed = tty ? line_readline_open(s) : line_plain_open(false);
  if (tty) session_banner(stdout);
  const char *prompt = color ? "\001\033[1;32m\002rly>\001\033[0m\002 " : "rly> ";
  const char *more = color ? "\001\033[2m\002...>\001\033[0m\002 " : "...> ";
  StrBuf input = {0};
  for (;;) {
    bool interrupted = false;
    char *line = ed->read(input.len ? more : prompt, &interrupted);
    if (interrupted) {
      clear(&input);
      continue;
    }
    if (!line && !input.len) break;
    bool eof = !line;
    if (!collect(&input, line)) continue;
    char name[32];
    snprintf(name, sizeof name, "<repl:%d>", s->ninputs + 1);
    RunStatus st = run_input(s, name, &input, !eof);
    if (st == RUN_INCOMPLETE) continue;
    s->ninputs++;
    ed->history_add(input.data);
    clear(&input);
    fflush(stdout);
    if (st == RUN_QUIT) break;
  }
  ed->close();
  engine_quiesce(); /* compiles a Ctrl-C left running end before exit */
  sb_free(&input);
  return 0;
}
