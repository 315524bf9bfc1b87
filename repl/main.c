/* main.c — the rly command line.
 *
 *   rly --print [--types] FILE|-   parse, type-check, print canonical text
 *   rly --check FILE|-             parse and type-check only
 *   rly FILE.rly …                 run scripts: definitions and top-level items
 *
 * User errors are diagnostics on stderr and exit status 1; bad usage is 2.
 * The option table below is the single source of truth for parsing and
 * --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"
#include "ir/tir.h"
#include "parser/diag.h"
#include "parser/parser.h"
#include "passes/passes.h"

#define RLY_VERSION "0.1"

typedef struct Cli {
  bool print, types, check, help, version;
  int nfiles;
  const char **files;
} Cli;

/* X(flag, field, help) */
#define CLI_FLAGS(X)                                                          \
  X("--print", print, "parse, type-check and print the canonical text")      \
  X("--types", types, "with --print: annotate expressions with /* ty=... */") \
  X("--check", check, "parse and type-check only (exit 1 on errors)")        \
  X("--help", help, "show this help")                                        \
  X("--version", version, "show the version")

static void usage(FILE *f) {
  fputs("usage: rly [options] [FILE.rly | -] …\n\noptions:\n", f);
#define X(flag, field, text) fprintf(f, "  %-10s %s\n", flag, text);
  CLI_FLAGS(X)
#undef X
  fputs("\nWith no option, each FILE is run as a script.\n", f);
}

static bool parse_args(Cli *cli, int argc, char **argv) {
  cli->files = calloc((size_t)argc, sizeof(char *));
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool known = false;
#define X(flag, field, text) \
  if (strcmp(a, flag) == 0) cli->field = known = true;
    CLI_FLAGS(X)
#undef X
    if (known) continue;
    if (a[0] == '-' && a[1] == 'h' && !a[2]) {
      cli->help = true;
      continue;
    }
    if (a[0] == '-' && a[1]) {
      fprintf(stderr, "rly: unknown option '%s'\n", a);
      return false;
    }
    cli->files[cli->nfiles++] = a;
  }
  return true;
}

/* Reads a whole file ("-" is stdin) into a malloc'd buffer. */
static char *read_all(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  StrBuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_putn(&b, chunk, n);
  if (f != stdin) fclose(f);
  *len = b.len;
  return sb_take(&b);
}

static bool use_color(void) { return isatty(2) && !getenv("NO_COLOR"); }

/* Registers a file as a source; prints an error and returns 0 if unreadable. */
static uint32_t load_source(DiagCtx *d, const char *path) {
  size_t len = 0;
  char *text = read_all(path, &len);
  if (!text) {
    fprintf(stderr, "rly: cannot read '%s'\n", path);
    return 0;
  }
  uint32_t id = diag_add_source(d, strcmp(path, "-") == 0 ? "<stdin>" : path, text, len);
  free(text);
  return id;
}

/* Prints the non-definition items of a script after the module, in order. */
static void print_items(const ParseResult *r, bool types) {
  PrintOptions opt = {.types = types};
  for (int i = 0; i < r->nitems; i++) {
    const ScriptItem *it = &r->items[i];
    char *text = NULL;
    if (it->kind == ITEM_COMMAND) {
      printf(":%s\n", it->command);
      continue;
    }
    if (it->kind != ITEM_EXPR && it->kind != ITEM_LET) continue;
    text = print_expr(it->expr, opt);
    if (it->kind == ITEM_LET) printf("let %%%s = %s;\n", it->var->name, text);
    else printf("%s\n", text);
    free(text);
  }
}

/* Type-checks the top-level expressions of a script in order; a session
 * `let` gives its variable the value's type for the items after it. */
static bool check_items(Module *m, ParseResult *r, DiagCtx *d) {
  bool ok = true;
  for (int i = 0; i < r->nitems; i++) {
    ScriptItem *it = &r->items[i];
    if ((it->kind != ITEM_EXPR && it->kind != ITEM_LET) || !it->expr) continue;
    if (!ty_check_expr(m, it->expr, d)) ok = false;
    else if (it->kind == ITEM_LET && it->var) it->var->annot = it->expr->ty;
  }
  return ok;
}

/* --print / --check on one file (a module or a script). */
static int check_file(const Cli *cli, const char *path) {
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  int status = 1;
  uint32_t file = load_source(&d, path);
  if (file) {
    Module *m = module_new(&arena);
    ParseResult r = parse_script(m, &d, file, NULL);
    bool ok = r.ok && ty_check_module(m, &d);
    if (ok) ok = check_items(m, &r, &d);
    diag_render(&d, stderr, 0, use_color());
    if (ok && cli->print) {
      PrintOptions opt = {.types = cli->types, .header = true};
      char *text = print_module(m, opt);
      fputs(text, stdout);
      free(text);
      print_items(&r, cli->types);
    }
    status = ok ? 0 : 1;
  }
  diag_free(&d);
  arena_free(&arena);
  return status;
}

static void report_item(const Module *m, const ScriptItem *it) {
  if (it->kind == ITEM_DEF && it->def_kind == DEF_FUNC) {
    FuncDef *f = module_func(m, it->def_name);
    char *ty = f && f->ty ? print_type(f->ty) : NULL;
    printf("%s @%s : %s\n", it->replaced ? "redefined" : "defined", it->def_name, ty ? ty : "?");
    free(ty);
  } else if (it->kind == ITEM_DEF && it->def_name) {
    printf("%s @%s\n", it->replaced ? "redefined" : "defined", it->def_name);
  } else if (it->kind == ITEM_EXPR || it->kind == ITEM_LET) {
    char *ty = it->expr && it->expr->ty ? print_type(it->expr->ty) : NULL;
    if (it->kind == ITEM_LET) printf("%%%s : %s\n", it->var->name, ty ? ty : "?");
    else printf("- : %s\n", ty ? ty : "?");
    free(ty);
  } else if (it->kind == ITEM_COMMAND) {
    printf("(command :%s is not available in this build)\n", it->command);
  }
}

/* Script mode: definitions are checked and reported with their types;
 * expressions are type-checked and their types shown. */
static int run_script(const char *path) {
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  int status = 1;
  uint32_t file = load_source(&d, path);
  if (file) {
    Module *m = module_new(&arena);
    ParseResult r = parse_script(m, &d, file, NULL);
    bool ok = r.ok && ty_check_module(m, &d) && check_items(m, &r, &d);
    for (int i = 0; ok && i < r.nitems; i++) report_item(m, &r.items[i]);
    diag_render(&d, stderr, 0, use_color());
    status = ok ? 0 : 1;
  }
  diag_free(&d);
  arena_free(&arena);
  return status;
}

int main(int argc, char **argv) {
  Cli cli = {0};
  if (!parse_args(&cli, argc, argv)) {
    usage(stderr);
    return 2;
  }
  if (cli.help) {
    usage(stdout);
    return 0;
  }
  if (cli.version) {
    printf("rly %s\n", RLY_VERSION);
    return 0;
  }
  if (cli.nfiles == 0) {
    usage(stderr);
    return 2;
  }
  int status = 0;
  for (int i = 0; i < cli.nfiles && status == 0; i++)
    status = (cli.print || cli.check) ? check_file(&cli, cli.files[i]) : run_script(cli.files[i]);
  free(cli.files);
  return status;
}
