/* loop.c — the interactive loop and the banner.
 *
 * Lines are collected into one input until it parses (Lua's rule: an input
 * whose first error is at its end continues on the next line, with the
 * `...> ` prompt).  The whole input, however many lines, is one history
 * entry and one source `<repl:N>`; N counts inputs (blank ones do not
 * count).  Ctrl-C drops the input being typed; Ctrl-D on an empty line
 * ends the session, on a continuation line it runs what was typed. */
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdlib.h>
#include <string.h>

#include "repl/repl.h"

static bool blank_text(const char *t) {
  for (; *t; t++)
    if (*t != ' ' && *t != '\t' && *t != '\n' && *t != '\r') return false;
  return true;
}

/* "avx2, fma": the host features worth naming, from LLVM's "+a,-b,..." list. */
static void notable_features(const char *all, char *out, size_t n) {
  static const char *const notable[] = {"avx512f", "avx2", "fma", "neon", "sve", "sve2", NULL};
  out[0] = 0;
  for (int i = 0; notable[i]; i++) {
    char want[32];
    snprintf(want, sizeof want, "+%s", notable[i]);
    const char *p = all ? strstr(all, want) : NULL;
    size_t k = strlen(want);
    while (p && ((p != all && p[-1] != ',') || (p[k] && p[k] != ','))) p = strstr(p + 1, want);
    if (!p) continue;
    size_t used = strlen(out);
    snprintf(out + used, n - used, "%s%s", used ? ", " : "", notable[i]);
  }
}

void session_banner(FILE *f) {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
  char notable[128];
  notable_features(features, notable, sizeof notable);
  fprintf(f, "rly %s · LLVM %u.%u · %s%s%s%s · :help for commands\n", RLY_VERSION, major, minor,
          cpu ? cpu : "unknown cpu", notable[0] ? " (" : "", notable, notable[0] ? ")" : "");
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
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
    RunStatus st = session_run(s, name, input.data, input.len, !eof);
    if (st == RUN_INCOMPLETE) continue;
    s->ninputs++;
    ed->history_add(input.data);
    clear(&input);
    fflush(stdout);
    if (st == RUN_QUIT) break;
  }
  ed->close();
  sb_free(&input);
  return 0;
}
