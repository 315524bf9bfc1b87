/* line_readline.c — the terminal front end on GNU readline.
 *
 * Readline's callback interface under our own select() loop, so Ctrl-C is
 * ours: SIGINT (installed without SA_RESTART) interrupts select(); while
 * editing it abandons the line (incremental search and all) and the REPL
 * shows a fresh prompt; while evaluating, the handler only calls
 * repl_eval_interrupt() (async-signal-safe) and evaluation stops.
 *
 * History: ~/.rly_history, created with mode 0600, one entry per input.
 * A multi-line input is one entry: entries are written with a timestamp
 * line before them (history_write_timestamps) and read back with
 * history_multiline_entries, so the lines after a timestamp join into one
 * entry.  Each input is appended as it is entered (nothing is lost if rly
 * is killed); the file is rewritten when it passes HISTORY_MAX entries. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "repl/repl.h"

/* readline's old-style typedefs would clash with the IR's `Function`. */
#define _FUNCTION_DEF
#include <readline/history.h>
#include <readline/readline.h>

enum { HISTORY_MAX = 2000 };

static Session *sess;
static char *history_path;
static volatile sig_atomic_t got_sigint, got_winch;
static char *done_line;
static bool done;

static void on_sigint(int sig) {
  if (repl_in_eval)
    repl_eval_interrupt(), repl_interrupted = 1;
  else
    got_sigint = 1;
}

static void on_sigwinch(int sig) { got_winch = 1; }

static void install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_sigint; /* no SA_RESTART: select() must see EINTR */
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_sigwinch;
  sigaction(SIGWINCH, &sa, NULL);
}

/* ───────────────────────── completion ───────────────────────── */

static PtrVec cands;
static size_t cand_next;

static void cands_clear(void) {
  for (size_t i = 0; i < cands.len; i++) free(cands.items[i]);
  vec_free(&cands);
}

static char *cand_gen(const char *text, int state) {
  if (!state) cand_next = 0;
  return cand_next < cands.len ? strdup(cands.items[cand_next++]) : NULL;
}

static const char EXPR_BREAKS[] = " \t\n\"\\'`><=;|&{(,)}[]+*/!^";

/* File names (after :load) break only at blanks, so `/` stays in the word. */
static char *word_breaks(void) {
  const char *l = rl_line_buffer;
  size_t n = strcspn(l, " \t");
  char cmd[32];
  snprintf(cmd, sizeof cmd, "%.*s", (int)(n < 31 ? n : 31), l);
  const char *name = l[0] == ':' && n > 1 && l[n] ? cmd_resolve(cmd + 1) : NULL;
  bool file = name && cmd_wants_file(name);
  return (char *)(file ? " \t\n" : EXPR_BREAKS);
}

static char **attempt_completion(const char *text, int start, int end) {
  cands_clear();
  bool files = complete_word(sess, rl_line_buffer, start, end, &cands);
  rl_attempted_completion_over = !files;
  if (files || !cands.len) return NULL;
  const char *only = cands.len == 1 ? cands.items[0] : "";
  rl_completion_append_character = only[0] && only[strlen(only) - 1] == '=' ? '\0' : ' ';
  return rl_completion_matches(text, cand_gen);
}

/* ───────────────────────── history ───────────────────────── */

/* Opens ~/.rly_history (created 0600; none without HOME) and trims it to
 * HISTORY_MAX entries; multi-line entries are kept whole. */
static void history_open(void) {
  const char *home = getenv("HOME");
  if (!home || !*home) return;
  size_t n = strlen(home) + sizeof "/.rly_history";
  history_path = malloc(n);
  if (!history_path) rly_oom();
  snprintf(history_path, n, "%s/.rly_history", home);
  int fd = open(history_path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    free(history_path), history_path = NULL;
    return;
  }
  close(fd);
  history_comment_char = '#';
  history_write_timestamps = 1;
  history_multiline_entries = 1;
  read_history(history_path);
  if (history_length > HISTORY_MAX) {
    stifle_history(HISTORY_MAX);
    write_history(history_path);
    unstifle_history();
  }
}

static void rl_history_add(const char *entry) {
  HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
  if (!*entry || (last && strcmp(last->line, entry) == 0)) return;
  add_history(entry);
  if (history_path) append_history(1, history_path);
}

/* ───────────────────────── reading ───────────────────────── */

static void on_line(char *line) {
  done_line = line;
  done = true;
  rl_callback_handler_remove();
}

/* Ctrl-C while editing: drop the line and any readline mode. */
static void abandon_line(void) {
  rl_free_line_state();
  rl_callback_sigcleanup();
  rl_echo_signal_char(SIGINT);
  rl_crlf();
  rl_callback_handler_remove();
}

/* SIGINT and SIGWINCH are blocked except inside pselect(), so a signal that
 * arrives while a key is being handled is seen by the next pselect(). */
static char *rl_read(const char *prompt, bool *interrupted) {
  *interrupted = false;
  got_sigint = 0;
  done = false, done_line = NULL;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGWINCH);
  sigprocmask(SIG_BLOCK, &block, &old);
  rl_callback_handler_install(prompt, on_line);
  int fd = fileno(rl_instream);
  while (!done) {
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(fd, &fds);
    int r = pselect(fd + 1, &fds, NULL, NULL, NULL, &old);
    if (got_winch) got_winch = 0, rl_resize_terminal();
    if (got_sigint) {
      got_sigint = 0;
      abandon_line();
      *interrupted = true;
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    rl_callback_read_char();
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (*interrupted) return NULL;
  if (!done) rl_callback_handler_remove();
  if (!done_line) fputc('\n', rl_outstream);
  return done_line;
}

static void rl_close(void) {
  cands_clear();
  free(history_path);
  history_path = NULL;
  signal(SIGINT, SIG_DFL);
  signal(SIGWINCH, SIG_DFL);
}

static const LineEditor editor = {rl_read, rl_history_add, rl_close};

const LineEditor *line_readline_open(Session *s) {
  sess = s;
  rl_readline_name = "rly";
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_attempted_completion_function = attempt_completion;
  rl_completer_word_break_characters = EXPR_BREAKS;
  rl_completion_word_break_hook = word_breaks;
  rl_variable_bind("enable-bracketed-paste", "on");
  history_open();
  install_signals();
  return &editor;
}
