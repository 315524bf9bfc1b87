/* main.c — the rly command line.
 *
 *   rly --print [--types] FILE|-   parse, type-check, print canonical text
 *   rly --check FILE|-             parse and type-check only
 *   rly FILE.rly … [-e TEXT] …     run scripts (repl/session.c), in order
 *   rly                            the REPL on a terminal; else stdin is a script
 *   rly -i [FILE …]                the REPL after the scripts, even without a terminal
 *   rly --import M.onnx [-o OUT.rly]  the model as text; its weights in OUT.npz
 *   rly --dot @f FILE -o OUT.svg   @f's dataflow graph (.dot, .svg, .png)
 *   rly --list-ops[=markdown]      the op registry as a table (op_table.c)
 *
 * User errors are diagnostics on stderr and exit status 1 (batch mode stops
 * at the first); bad usage is 2.  One option table is the single source
 * of truth for getopt_long's tables and --help: CLI_OPTIONS below, then the
 * engine's options with a flag (ENGINE_OPTIONS, engine/options.h).  --print and --check read one
 * module or script alone (no prelude). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/draw.h"
#include "engine/inspect.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/print_tvmscript.h"
#include "ir/tir.h"
#include "repl/repl.h"

/* What to run, in command-line order: a file ('f') or -e text ('e'). */
typedef struct Action {
  char kind;
  const char *arg;
} Action;

typedef struct Cli {
  bool print, types, check, help, version, interactive, no_prelude, profile;
  bool tune;             /* --tune [MINUTES] FILE: tune the model's kernels (:tune @main) */
  bool tvmscript;        /* --print-tvmscript: the prim functions as TVMScript */
  const char *passes;    /* --pass NAME[,NAME…]: run passes, print the module */
  const char *params;    /* --params FILE: BindParams of @main (cmd_data.c) */
  const char *import;    /* --import FILE.onnx: print the model's module */
  const char *output;    /* -o FILE: where --import writes (weights beside it), or --dot */
  const char *dot;       /* --dot @f: draw @f's dataflow graph into -o (engine/draw.h) */
  const char *ops;       /* --list-ops[=FORMAT]: print the op table (op_table.c) */
  const char *emit_onnx; /* --emit-onnx OUT.onnx FILE: write @entry as ONNX (:emit) */
  const char *entry;     /* --entry @f: the function --emit-onnx writes (@main) */
  int nfiles;
  const char **files;
  int nactions;
  Action *actions;
  EngineOptions engine; /* the environment, then the engine's flags */
} Cli;

/* ───────────────────────── the option table ───────────────────────── */

typedef struct CliOption CliOption;
/* A row's handler: false when arg is not a value of it (the caller then
 * says what the row needs, or the handler did). */
typedef bool (*CliHandler)(Cli *cli, const CliOption *o, const char *arg);

struct CliOption {
  const char *name; /* the long name (--name), or NULL */
  int key;          /* the short letter (-e), or a code past the letters */
  int has_arg;      /* no_argument, required_argument, optional_argument */
  const char *arg;  /* the argument's synopsis in --help */
  CliHandler fn;
  const char *needs; /* what a missing or refused argument should be, or NULL */
  const char *help;
  int option; /* the engine's row (ENGINE_OPTIONS), or -1 */
};

#define CLI_FLAG(field)                                                  \
  static bool set_##field(Cli *cli, const CliOption *o, const char *a) { \
    (void)o, (void)a;                                                    \
    return cli->field = true;                                            \
  }
#define CLI_TEXT(field)                                                  \
  static bool set_##field(Cli *cli, const CliOption *o, const char *a) { \
    (void)o;                                                             \
    cli->field = a;                                                      \
    return *a != '\0';                                                   \
  }
CLI_FLAG(print)
static bool set_tvmscript(Cli *cli, const CliOption *o, const char *a) {
  (void)o, (void)a;
  return cli->print = cli->tvmscript = true;
}
CLI_FLAG(types)
CLI_FLAG(check)
CLI_FLAG(help)
CLI_FLAG(version)
CLI_FLAG(interactive)
CLI_FLAG(no_prelude)
CLI_FLAG(profile)
CLI_FLAG(tune)
CLI_TEXT(passes)
CLI_TEXT(params)
CLI_TEXT(import)
CLI_TEXT(output)
CLI_TEXT(dot)
CLI_TEXT(emit_onnx)
CLI_TEXT(entry)

static void add_action(Cli *cli, char kind, const char *arg) {
  cli->actions[cli->nactions].kind = kind;
  cli->actions[cli->nactions++].arg = arg;
}

static bool run_text(Cli *cli, const CliOption *o, const char *a) {
  (void)o;
  add_action(cli, 'e', a);
  return true;
}

static bool list_ops(Cli *cli, const CliOption *o, const char *a) {
  (void)o;
  cli->ops = a ? a : "text";
  return true;
}

/* X(long name or NULL, short letter or 0, has_arg, argument synopsis,
 *   handler, what a missing argument should be, help); the engine's rows
 * with a flag (ENGINE_OPTIONS) follow them. */
#define CLI_OPTIONS(X)                                                                            \
  X("print", 0, no_argument, NULL, set_print, NULL,                                               \
    "parse, type-check and print the canonical text")                                             \
  X("print-tvmscript", 0, no_argument, NULL, set_tvmscript, NULL,                                 \
    "parse, type-check and print the prim functions as TVMScript")                                \
  X("types", 0, no_argument, NULL, set_types, NULL,                                               \
    "with --print: annotate expressions with /* ty=... */")                                       \
  X("check", 0, no_argument, NULL, set_check, NULL,                                               \
    "parse and type-check only (exit 1 on errors)")                                               \
  X("help", 'h', no_argument, NULL, set_help, NULL, "show this help")                             \
  X("version", 0, no_argument, NULL, set_version, NULL, "show the version")                       \
  X(NULL, 'i', no_argument, NULL, set_interactive, NULL,                                          \
    "run the REPL (after any FILE / -e), even if stdin is not a terminal")                        \
  X("no-prelude", 0, no_argument, NULL, set_no_prelude, NULL,                                     \
    "do not load the standard library (lib/prelude.rly)")                                         \
  X("profile", 0, no_argument, NULL, set_profile, NULL,                                           \
    "print a per-kernel profile of every expression and let scripts run")                         \
  X(NULL, 'e', required_argument, "TEXT", run_text, "an argument",                                \
    "run TEXT as a script (defs, expressions, :commands)")                                        \
  X("pass", 0, required_argument, "P[,P...]", set_passes, "pass names (see :passes in the REPL)", \
    "run the passes on FILE and print the resulting module (like mlir-opt; "                      \
    "Gradient=@f names the function Gradient differentiates)")                                    \
  X("params", 0, required_argument, "FILE", set_params, "a tensor file (.npz, .safetensors)",     \
    "bind @main's parameters named in FILE (.npz/.safetensors) as constants")                     \
  X("import", 0, required_argument, "M.onnx", set_import, "a file",                               \
    "print an ONNX model as a module (@main; weights stay parameters)")                           \
  X(NULL, 'o', required_argument, "OUT.rly", set_output, "a file",                                \
    "with --import: write the text to OUT.rly and the weights to OUT.npz")                        \
  X("dot", 0, required_argument, "@f", set_dot, "a function (@f)",                                \
    "draw @f's dataflow graph (after --pass, if any) into -o OUT.dot|svg|png")                    \
  X("emit-onnx", 0, required_argument, "OUT.onnx", set_emit_onnx, "a file",                       \
    "write FILE.rly|FILE.onnx's @main (or --entry) as an ONNX model")                             \
  X("entry", 0, required_argument, "@f", set_entry, "a function (@f)",                            \
    "with --emit-onnx: the function to write (default @main)")                                    \
  X("tune", 0, no_argument, NULL, set_tune, NULL,                                                 \
    "--tune [MINUTES] FILE.rly|.onnx: tune its @main's kernels (10 minutes by default)")          \
  X("list-ops", 0, optional_argument, "F", list_ops, NULL,                                        \
    "list every op: family, pattern, kernel, compute rule (F: text, markdown)")

/* An engine option's flag: its value parsed as `:set` parses it (a BOOL
 * flag alone turns it on). */
static bool set_engine(Cli *cli, const CliOption *o, const char *a) {
  if (engine_option_parse(&cli->engine, o->option, a ? a : "on")) return true;
  char want[128];
  fprintf(stderr, "rly: --%s needs %s, not '%s'\n", o->name,
          option_describe(engine_option_info(o->option), want, sizeof want), a);
  return false;
}

/* The rows' count bounds the tables: CLI_OPTIONS' rows and every engine
 * option; a key past the letters for a row without a short letter. */
enum {
#define X(...) +1
  CLI_MAX = 0 CLI_OPTIONS(X) + ENGINE_OPTION_COUNT,
#undef X
  CLI_KEY = 256
};
static CliOption cli_rows[CLI_MAX];
static int ncli;

/* The engine row's synopsis ("jit|interp", "SIZE") and help with its
 * default and variable, kept for the program's life. */
static void engine_row(int i, const OptionInfo *oi) {
  static char args[ENGINE_OPTION_COUNT][96], helps[ENGINE_OPTION_COUNT][256];
  size_t at = 0;
  if (oi->kind == OPT_SIZE) snprintf(args[i], sizeof args[i], "SIZE");
  if (oi->kind == OPT_INT) snprintf(args[i], sizeof args[i], "N");
  if (oi->kind == OPT_TEXT) snprintf(args[i], sizeof args[i], "TEXT");
  for (int k = 0; oi->kind == OPT_ENUM && oi->values[k]; k++)
    at += (size_t)snprintf(args[i] + at, sizeof args[i] - at, "%s%s", k ? "|" : "", oi->values[k]);
  at = (size_t)snprintf(helps[i], sizeof helps[i], "%s", oi->help);
  if (oi->kind != OPT_BOOL)
    snprintf(helps[i] + at, sizeof helps[i] - at, " (default %s%s%s)", oi->def,
             oi->env ? ", or $" : "", oi->env ? oi->env : "");
  bool flag = oi->kind == OPT_BOOL;
  cli_rows[ncli] = (CliOption){oi->flag,
                               CLI_KEY + ncli,
                               flag ? no_argument : required_argument,
                               flag ? NULL : args[i],
                               set_engine,
                               NULL,
                               helps[i],
                               i};
  ncli++;
}

/* The rows: CLI_OPTIONS, then the engine's options with a flag. */
static void build_rows(void) {
  if (ncli) return;
#define X(name, key, has_arg, arg, fn, needs, help)                                     \
  cli_rows[ncli] =                                                                      \
      (CliOption){name, key ? key : CLI_KEY + ncli, has_arg, arg, fn, needs, help, -1}, \
  ncli++;
  CLI_OPTIONS(X)
#undef X
  for (int i = 0; i < ENGINE_OPTION_COUNT; i++)
    if (engine_option_info(i)->flag) engine_row(i, engine_option_info(i));
}

/* "--exec jit|interp", "-e TEXT", "-h, --help", "--list-ops[=F]". */
static void row_head(const CliOption *o, char *buf, size_t n) {
  int at = 0;
  if (o->key < CLI_KEY) at = snprintf(buf, n, "-%c%s", o->key, o->name ? ", " : "");
  if (o->name) at += snprintf(buf + at, n - (size_t)at, "--%s", o->name);
  if (o->has_arg == optional_argument) snprintf(buf + at, n - (size_t)at, "[=%s]", o->arg);
  if (o->has_arg == required_argument) snprintf(buf + at, n - (size_t)at, " %s", o->arg);
}

static void usage(FILE *f) {
  char head[128];
  int width = 0;
  build_rows();
  for (int i = 0; i < ncli; i++) {
    row_head(&cli_rows[i], head, sizeof head);
    if ((int)strlen(head) > width) width = (int)strlen(head);
  }
  fputs("usage: rly [options] [FILE.rly | -] …\n\noptions:\n", f);
  for (int i = 0; i < ncli; i++) {
    row_head(&cli_rows[i], head, sizeof head);
    fprintf(f, "  %-*s  %s\n", width, head, cli_rows[i].help);
  }
  fputs("\nWith no option, each FILE is run as a script.\n", f);
  fputs("With no FILE and no -e: the REPL if stdin is a terminal, else stdin is a script.\n", f);
}

/* getopt_long's tables from the rows: the long options and "-:ie:o:h". */
static void getopt_tables(struct option *longs, char *shorts) {
  int nl = 0, ns = 0;
  shorts[ns++] = '-'; /* FILE arguments in order, as code 1 */
  shorts[ns++] = ':'; /* a missing argument is ':' */
  for (int i = 0; i < ncli; i++) {
    const CliOption *o = &cli_rows[i];
    if (o->name) longs[nl++] = (struct option){o->name, o->has_arg, NULL, o->key};
    if (o->key >= CLI_KEY) continue;
    shorts[ns++] = (char)o->key;
    if (o->has_arg != no_argument) shorts[ns++] = ':';
  }
  longs[nl] = (struct option){0};
  shorts[ns] = '\0';
}

static const CliOption *row_by_key(int key) {
  for (int i = 0; i < ncli; i++)
    if (cli_rows[i].key == key) return &cli_rows[i];
  return NULL;
}

/* "rly: --pass needs pass names …", "rly: --exec needs jit or interp". */
static void needs_message(const CliOption *o) {
  char head[128], want[128];
  if (o->key < CLI_KEY)
    snprintf(head, sizeof head, "-%c", o->key);
  else
    snprintf(head, sizeof head, "--%s", o->name);
  const char *what =
      o->needs ? o->needs : option_describe(engine_option_info(o->option), want, sizeof want);
  fprintf(stderr, "rly: %s needs %s\n", head, what);
}

/* The command line through getopt_long: -e texts and FILE arguments are
 * kept in order as actions. */
static bool parse_args(Cli *cli, int argc, char **argv) {
  struct option longs[CLI_MAX + 1];
  char shorts[2 * CLI_MAX + 3];
  cli->files = calloc((size_t)argc, sizeof(char *));
  cli->actions = calloc((size_t)argc, sizeof(Action));
  if (!cli->files || !cli->actions) rly_oom();
  build_rows();
  getopt_tables(longs, shorts);
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;) {
    if (c == 1) {
      cli->files[cli->nfiles++] = optarg;
      add_action(cli, 'f', optarg);
      continue;
    }
    const CliOption *o = row_by_key(c == ':' ? optopt : c);
    if (c == '?' || !o) {
      if (optopt && optopt < CLI_KEY)
        fprintf(stderr, "rly: unknown option '-%c'\n", optopt);
      else
        fprintf(stderr, "rly: unknown option '%s'\n", argv[optind - 1]);
      return false;
    }
    if (c == ':' || !o->fn(cli, o, optarg)) {
      if (o->needs || c == ':') needs_message(o);
      return false;
    }
  }
  return true;
}

static bool use_color(void) { return isatty(2) && !getenv("NO_COLOR"); }

/* Registers a file as a source; prints an error and returns 0 if unreadable. */
/* A file's source; TVMScript's as its rly text (the same lines). */
static uint32_t load_source(DiagCtx *d, const char *path) {
  uint32_t file = diag_add_file(d, path);
  if (!file) fprintf(stderr, "rly: cannot read '%s'\n", path);
  const SourceFile *f = file ? diag_source(d, file) : NULL;
  if (!f || !engine_tvmscript_detect(f->name, f->text, f->len)) return file;
  size_t n = 0;
  char *text = engine_tvmscript_translate(d, file, &n);
  if (!text) diag_render(d, stderr, 0, use_color());
  return text ? diag_take_source(d, f->name, text, n) : 0;
}

/* --print-tvmscript: the module's prim functions as one ir_module. */
static void print_tvmscript(const Module *m) {
  PtrVec v = {0};
  StrBuf b = {0};
  for (int i = 0; i < m->ndefs; i++)
    if (def_span(&m->defs[i]).off) vec_push(&v, &m->defs[i]); /* not the built-in @prng_state */
  print_tvmscript_module_to(&b, (const Def *const *)v.items, (int)v.len);
  fputs(b.data, stdout);
  sb_free(&b), vec_free(&v);
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
    if (it->kind == ITEM_LET)
      printf("let %%%s = %s;\n", it->var->name, text);
    else
      printf("%s\n", text);
    free(text);
  }
}

/* --print / --check / --pass on one file (a module or a script), through
 * the engine: parse and check, BindParams (--params), the passes. */
static bool check_module(Engine *e, const Cli *cli, Arena *arena, Module **m, uint32_t file,
                         ParseResult *r) {
  Module *base = module_new(arena);
  *m = engine_parse(e, base, arena, file, 0, NULL, r);
  module_free(base);
  if (!*m) return false;
  if (cli->params) {
    Module *bound = engine_bind_file(*m, arena, engine_diag(e), "main", cli->params, (Span){0},
                                     (Span){0}, (Span){0}, NULL);
    if (!bound) return false;
    module_free(*m), *m = bound;
  }
  if (!cli->passes) return true;
  Module *out = engine_passes(e, *m, arena, cli->passes);
  if (!out) return false;
  if (out != *m) module_free(*m), *m = out;
  return true;
}

/* --dot @f: the picture into -o (engine/draw.h). */
static bool draw_function(Engine *e, const Module *m, const Cli *cli) {
  DrawInfo info;
  char err[768];
  if (engine_draw_function(e, m, cli->dot, cli->output, NULL, &info, err, sizeof err)) return true;
  fprintf(stderr, "rly: error: %s\n", err);
  return false;
}

/* --check / --print / --pass on one file, with a fresh engine and
 * diagnostics per file; exit status 0 when it checks. */
static int check_file(const Cli *cli, const char *path) {
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  Engine *e = engine_new(&cli->engine, &d);
  bool ok = false;
  uint32_t file = load_source(&d, path);
  if (file) {
    Module *m = NULL;
    ParseResult r = {0};
    ok = check_module(e, cli, &arena, &m, file, &r);
    diag_render(&d, stderr, 0, use_color());
    if (ok && cli->dot) {
      ok = draw_function(e, m, cli);
    } else if (ok && cli->tvmscript) {
      print_tvmscript(m);
    } else if (ok && (cli->print || cli->passes)) {
      PrintOptions opt = {.types = cli->types, .header = true};
      char *text = print_module(m, opt);
      fputs(text, stdout);
      free(text);
      if (!cli->passes) print_items(&r, cli->types);
    }
    if (m) module_free(m);
  }
  engine_free(e);
  diag_free(&d);
  arena_free(&arena);
  return ok ? 0 : 1;
}

/* OUT.rly → OUT.npz (else OUT + ".npz"); malloc'd. */
static char *weights_path(const char *out) {
  size_t n = strlen(out);
  bool rly = n > 4 && strcmp(out + n - 4, ".rly") == 0;
  char *p = malloc(n + 5);
  if (!p) rly_oom();
  snprintf(p, n + 5, "%.*s.npz", (int)(rly ? n - 4 : n), out);
  return p;
}

/* The imported weights as an .npz file (keys: the parameter names). */
static bool write_weights(const OnnxWeights *w, const char *path) {
  char err[RT_ERR_LEN];
  if (engine_save_weights(w, path, err, sizeof err)) return true;
  fprintf(stderr, "rly: %s\n", err);
  return false;
}

static bool write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  bool ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "rly: cannot write '%s'\n", path);
  return ok;
}

/* --import FILE.onnx [--pass P] [-o OUT.rly]: the model's @main as text
 * (its weights parameters, TVM style), on stdout or in OUT.rly with the
 * weights in OUT.npz. */
static int import_model(const Cli *cli) {
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  Engine *e = engine_new(&cli->engine, &d);
  Module *base = module_new(&arena);
  OnnxWeights w;
  /* ONNX sequences and optionals are the prelude's List and Option */
  const Module *from = engine_load_prelude(e) ? engine_base(e) : base;
  Module *m = engine_import_onnx(e, from, &arena, cli->import, "main", false, (Span){0}, &w);
  if (m && cli->passes) {
    Module *out = engine_passes(e, m, &arena, cli->passes);
    if (out != m) module_free(m);
    m = out;
  }
  diag_render(&d, stderr, 0, use_color());
  bool ok = m != NULL;
  if (ok) {
    for (int i = 0; i < m->ndefs; i++) /* the model's definitions, not the prelude's */
      if (!engine_is_prelude_def(e, &m->defs[i])) module_add(base, m->defs[i]);
    char *text = print_module(base, (PrintOptions){.header = true});
    char *npz = cli->output ? weights_path(cli->output) : NULL;
    ok = cli->output ? write_text(cli->output, text) && write_weights(&w, npz)
                     : fputs(text, stdout) >= 0;
    free(npz);
    free(text);
  }
  if (m) module_free(m);
  module_free(base);
  engine_free(e);
  diag_free(&d);
  arena_free(&arena);
  return ok ? 0 : 1;
}

/* Runs the files and -e texts in order; the first error stops (exit 1). */
/* --params: @main's parameters become constants once @main is defined. */
static bool bind_params(Session *s, const char **params) {
  Module *b = engine_bind_file(session_module(s), &s->inputs, &s->diag, "main", *params, (Span){0},
                               (Span){0}, (Span){0}, NULL);
  session_render(s);
  if (b) engine_set_module(session_engine(s), b);
  *params = NULL;
  return b != NULL;
}

static int run_actions(Session *s, const Cli *cli, bool *quit) {
  const char *params_ = cli->params, **params = &params_;
  for (int i = 0; i < cli->nactions; i++) {
    const Action *a = &cli->actions[i];
    RunStatus st = a->kind == 'f' ? session_run_file(s, a->arg)
                                  : session_run(s, "<-e>", a->arg, strlen(a->arg), false);
    fflush(stdout);
    if (st == RUN_ERROR) return 1;
    if (st == RUN_QUIT) return *quit = true, 0;
    if (*params && module_func(session_module(s), "main") && !bind_params(s, params)) return 1;
  }
  if (*params) {
    fprintf(stderr, "rly: --params %s: no @main to bind\n", *params);
    return 1;
  }
  return 0;
}

static int run_session(Cli *cli) {
  bool tty = isatty(0);
  bool repl = cli->interactive || (cli->nactions == 0 && tty);
  if (cli->nactions == 0 && !repl) add_action(cli, 'f', "-");
  SessionOptions so = {.color = use_color(), .prelude = !cli->no_prelude, .engine = cli->engine};
  Session *s = session_new(so);
  s->profile = cli->profile;
  s->goes_on = repl; /* a script's error then says what it kept */
  bool quit = false;
  int status = run_actions(s, cli, &quit);
  if (repl && !quit) session_repl(s, tty && isatty(1));
  session_free(s);
  return status;
}

/* The session's program: FILE.onnx imported as @main (the `:import` text
 * written into imp, which must outlive the run), any other file loaded. */
static void add_model(Cli *cli, const char *file, char *imp, size_t n) {
  size_t len = strlen(file);
  snprintf(imp, n, ":import %s", file);
  if (len > 5 && strcmp(file + len - 5, ".onnx") == 0)
    add_action(cli, 'e', imp);
  else
    add_action(cli, 'f', file);
}

/* --tune [MINUTES] FILE: the file (an .onnx imported as @main), then
 * `:tune @main minutes=M`, as a session's actions. */
static int tune_session(Cli *cli) {
  char *end = NULL, cmd[600], imp[4200];
  double minutes = cli->nfiles == 2 ? strtod(cli->files[0], &end) : 10;
  if (cli->nfiles < 1 || cli->nfiles > 2 || (end && (*end || minutes <= 0))) {
    fputs("rly: --tune needs [MINUTES] FILE.rly|FILE.onnx\n", stderr);
    return 2;
  }
  cli->nactions = 0;
  add_model(cli, cli->files[cli->nfiles - 1], imp, sizeof imp);
  snprintf(cmd, sizeof cmd, ":tune @main minutes=%g", minutes);
  add_action(cli, 'e', cmd);
  return run_session(cli);
}

/* --emit-onnx OUT.onnx FILE [--entry @f]: the file (an .onnx imported as
 * @main; --params and --pass apply), then `:emit @f OUT.onnx`. */
static int emit_session(Cli *cli) {
  char cmd[4400], imp[4200];
  if (cli->nfiles != 1 || (cli->entry && cli->entry[0] != '@')) {
    fputs("rly: --emit-onnx needs OUT.onnx and one FILE.rly|FILE.onnx (--entry @f)\n", stderr);
    return 2;
  }
  cli->nactions = 0;
  add_model(cli, cli->files[0], imp, sizeof imp);
  char passes[4200];
  snprintf(passes, sizeof passes, ":pass %s", cli->passes ? cli->passes : "");
  for (char *c = passes; *c; c++) *c = *c == ',' ? ' ' : *c;
  if (cli->passes) add_action(cli, 'e', passes);
  snprintf(cmd, sizeof cmd, ":emit %s \"%s\"", cli->entry ? cli->entry : "@main", cli->emit_onnx);
  add_action(cli, 'e', cmd);
  return run_session(cli);
}

/* Batch modes (check, print, passes) run per file and stop at the first
 * failure; otherwise a session runs the actions and maybe the REPL. */
int main(int argc, char **argv) {
  Cli cli = {.engine = engine_options_default()};
  engine_options_from_env(&cli.engine); /* the only reading of RLY_* variables */
  int status = 0;
  bool parsed = parse_args(&cli, argc, argv);
  if (!parsed) {
    usage(stderr);
    status = 2;
  } else if (cli.help) {
    usage(stdout);
  } else if (cli.version) {
    printf("rly %s\n", RLY_VERSION);
  } else if (cli.ops) {
    status = repl_list_ops(cli.ops);
  } else if (cli.import) {
    status = import_model(&cli);
  } else if (cli.emit_onnx) {
    status = emit_session(&cli);
  } else if (cli.dot && !cli.output) {
    fputs("rly: --dot needs -o OUT.dot, OUT.svg or OUT.png\n", stderr), status = 2;
  } else if (cli.output && !cli.dot) {
    fputs("rly: -o goes with --import or --dot\n", stderr), usage(stderr), status = 2;
  } else if (cli.tune) {
    status = tune_session(&cli);
  } else if (cli.print || cli.check || cli.passes || cli.dot) {
    if (cli.nfiles == 0) usage(stderr), status = 2;
    for (int i = 0; i < cli.nfiles && status == 0; i++) status = check_file(&cli, cli.files[i]);
  } else {
    status = run_session(&cli);
  }
  free(cli.files);
  free(cli.actions);
  return status;
}
