/* line_plain.c — reading REPL input without line editing: stdin that is
 * not a terminal (pipes, `rly -i < file`, tests).  Prompts are written
 * only when asked (a terminal on stdout); there is no history. */
#include <stdio.h>
#include <stdlib.h>

#include "repl/repl.h"

static bool show_prompts;

static char *plain_read(const char *prompt, bool *interrupted) {
  *interrupted = false;
  if (show_prompts) {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
  if (n > 0 && line[n - 1] == '\r') line[--n] = 0;
  return line;
}

static void plain_history_add(const char *entry) {}
static void plain_close(void) {}

static const LineEditor plain = {plain_read, plain_history_add, plain_close};

const LineEditor *line_plain_open(bool prompts) {
  show_prompts = prompts;
  return &plain;
}
