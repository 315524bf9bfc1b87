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
 * at the first); bad usage is 2.  The option table below is the single
 * source of truth for parsing and --help.  --print and --check read one
 * module or script alone (no prelude). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/draw.h"
#include "io/tensor_io.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/tir.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "repl/repl.h"
#include "types/types.h"

/* What to run, in command-line order: a file ('f') or -e text ('e'). */
typedef struct Action {
  char kind;
  const char *arg;
} Action;

typedef struct Cli {
  bool print, types, check, help, version, interactive, no_prelude, profile, print_after_all;
  const char *passes; /* --pass NAME[,NAME…]: run passes, print the module */
  const char *params; /* --params FILE: BindParams of @main (cmd_data.c) */
  const char *import; /* --import FILE.onnx: print the model's module */
  const char *output; /* -o FILE: where --import writes (weights beside it), or --dot */
  const char *dot;    /* --dot @f: draw @f's dataflow graph into -o (engine/draw.h) */
  const char *ops;    /* --list-ops[=FORMAT]: print the op table (op_table.c) */
  int nfiles;
  const char **files;
  int nactions;
  Action *actions;
  EngineOptions engine; /* the environment, then --exec and --max-memory */
} Cli;

/* X(flag, field, help) */
#define CLI_FLAGS(X)                                                                            \
  X("--print", print, "parse, type-check and print the canonical text")                         \
  X("--types", types, "with --print: annotate expressions with /* ty=... */")                   \
  X("--check", check, "parse and type-check only (exit 1 on errors)")                           \
  X("--help", help, "show this help")                                                           \
  X("--version", version, "show the version")                                                   \
  X("-i", interactive, "run the REPL (after any FILE / -e), even if stdin is not a terminal")   \
  X("--no-prelude", no_prelude, "do not load the standard library (lib/prelude.rly)")           \
  X("--profile", profile, "print a per-kernel profile of every expression and let scripts run") \
  X("--print-after-all", print_after_all,                                                       \
    "print the IR after each pass of a compile or of --pass on stderr")

static void usage(FILE *f) {
  fputs("usage: rly [options] [FILE.rly | -] …\n\noptions:\n", f);
#define X(flag, field, text) fprintf(f, "  %-10s %s\n", flag, text);
  CLI_FLAGS(X)
#undef X
  fprintf(f, "  %-10s %s\n", "-e TEXT", "run TEXT as a script (defs, expressions, :commands)");
  fprintf(f, "  %-10s %s\n", "--pass P[,P…]",
          "run the passes on FILE and print the resulting module (like mlir-opt; "
          "Gradient=@f names the function Gradient differentiates)");
  fprintf(f, "  %-10s %s\n", "--params FILE",
          "bind @main's parameters named in FILE (.npz/.safetensors) as constants");
  fprintf(f, "  %-10s %s\n", "--import M.onnx",
          "print an ONNX model as a module (@main; weights stay parameters)");
  fprintf(f, "  %-10s %s\n", "-o OUT.rly",
          "with --import: write the text to OUT.rly and the weights to OUT.npz");
  fprintf(f, "  %-10s %s\n", "--dot @f",
          "draw @f's dataflow graph (after --pass, if any) into -o OUT.dot|svg|png");
  fprintf(f, "  %-10s %s\n", "--list-ops[=F]",
          "list every op: family, pattern, kernel, compute rule (F: text, markdown)");
  fprintf(f, "  %-10s %s\n", "--exec M",
          "jit (default: fused kernels, compiled) or interp (reference kernels); as RLY_EXEC");
  fprintf(f, "  %-10s %s\n", "--max-memory SIZE",
          "limit on the tensor data alive at once (512M, 4G, 50%; default 75%); as "
          "RLY_MAX_MEMORY");
  fputs("\nWith no option, each FILE is run as a script.\n", f);
  fputs("With no FILE and no -e: the REPL if stdin is a terminal, else stdin is a script.\n", f);
}

static void add_action(Cli *cli, char kind, const char *arg) {
  cli->actions[cli->nactions].kind = kind;
  cli->actions[cli->nactions++].arg = arg;
}

/* The command line: -e and file arguments are kept in order as actions,
 * options with values accept `--opt v` and `--opt=v`, flags come from
 * CLI_FLAGS. */
static bool parse_args(Cli *cli, int argc, char **argv) {
  cli->files = calloc((size_t)argc, sizeof(char *));
  cli->actions = calloc((size_t)argc, sizeof(Action));
  if (!cli->files || !cli->actions) rly_oom();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool known = false;
    if (strcmp(a, "-e") == 0) {
      if (i + 1 == argc) {
        fputs("rly: -e needs an argument\n", stderr);
        return false;
      }
      add_action(cli, 'e', argv[++i]);
      continue;
    }
    if (strcmp(a, "--pass") == 0 || strncmp(a, "--pass=", 7) == 0) {
      if (a[6] == '=')
        cli->passes = a + 7;
      else if (i + 1 < argc)
        cli->passes = argv[++i];
      if (!cli->passes || !*cli->passes) {
        fputs("rly: --pass needs pass names (see :passes in the REPL)\n", stderr);
        return false;
      }
      continue;
    }
    if (strcmp(a, "--params") == 0 || strncmp(a, "--params=", 9) == 0) {
      if (a[8] == '=')
        cli->params = a + 9;
      else if (i + 1 < argc)
        cli->params = argv[++i];
      if (!cli->params || !*cli->params) {
        fputs("rly: --params needs a tensor file (.npz, .safetensors)\n", stderr);
        return false;
      }
      continue;
    }
    if (strcmp(a, "--import") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--dot") == 0) {
      if (i + 1 == argc || !*argv[i + 1]) {
        fprintf(stderr, "rly: %s needs %s\n", a, a[2] == 'd' ? "a function (@f)" : "a file");
        return false;
      }
      *(a[1] == 'o' ? &cli->output : a[2] == 'd' ? &cli->dot : &cli->import) = argv[++i];
      continue;
    }
    if (strcmp(a, "--list-ops") == 0 || strncmp(a, "--list-ops=", 11) == 0) {
      cli->ops = a[10] == '=' ? a + 11 : "text";
      continue;
    }
    if (strcmp(a, "--exec") == 0 || strncmp(a, "--exec=", 7) == 0) {
      const char *mode = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : "";
      if (strcmp(mode, "interp") != 0 && strcmp(mode, "jit") != 0) {
        fputs("rly: --exec needs `interp` or `jit`\n", stderr);
        return false;
      }
      cli->engine.exec = strcmp(mode, "jit") == 0 ? EXEC_JIT : EXEC_INTERP;
      continue;
    }
    if (strcmp(a, "--max-memory") == 0 || strncmp(a, "--max-memory=", 13) == 0) {
      const char *size = a[12] == '=' ? a + 13 : i + 1 < argc ? argv[++i] : "";
      if (!engine_parse_size(size, &cli->engine.max_memory)) {
        fprintf(stderr, "rly: --max-memory needs a size such as 512M, 4G or 50%%, not '%s'\n",
                size);
        return false;
      }
      continue;
    }
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
    add_action(cli, 'f', a);
  }
  return true;
}

static bool use_color(void) { return isatty(2) && !getenv("NO_COLOR"); }

/* Registers a file as a source; prints an error and returns 0 if unreadable. */
static uint32_t load_source(DiagCtx *d, const char *path) {
  uint32_t file = diag_add_file(d, path);
  if (!file) fprintf(stderr, "rly: cannot read '%s'\n", path);
  return file;
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
    Module *bound = repl_bind_file(*m, arena, engine_diag(e), "main", cli->params, (Span){0});
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
  TioFile f = {0};
  char err[RT_ERR_LEN];
  bool ok = true;
  for (int i = 0; i < w->n && ok; i++) {
    RtTensor *t = rt_tensor_from_ir(w->values[i], err, sizeof err);
    ok = t && tio_add(&f, w->names[i], t, err, sizeof err);
    rt_tensor_release(t);
  }
  ok = ok && tio_save(path, TIO_NPZ, &f, err, sizeof err);
  if (!ok) fprintf(stderr, "rly: %s\n", err);
  tio_file_free(&f);
  return ok;
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
  Module *m = engine_import_onnx(e, base, &arena, cli->import, "main", false, (Span){0}, &w);
  if (m && cli->passes) {
    Module *out = engine_passes(e, m, &arena, cli->passes);
    if (out != m) module_free(m);
    m = out;
  }
  diag_render(&d, stderr, 0, use_color());
  bool ok = m != NULL;
  if (ok) {
    char *text = print_module(m, (PrintOptions){.header = true});
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
  Module *b = repl_bind_file(session_module(s), &s->inputs, &s->diag, "main", *params, (Span){0});
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

/* Batch modes (check, print, passes) run per file and stop at the first
 * failure; otherwise a session runs the actions and maybe the REPL. */
int main(int argc, char **argv) {
  Cli cli = {.engine = engine_options_default()};
  engine_options_from_env(&cli.engine); /* the only reading of RLY_* variables */
  int status = 0;
  bool parsed = parse_args(&cli, argc, argv);
  cli.engine.print_after_all |= cli.print_after_all;
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
  } else if (cli.dot && !cli.output) {
    fputs("rly: --dot needs -o OUT.dot, OUT.svg or OUT.png\n", stderr), status = 2;
  } else if (cli.output && !cli.dot) {
    fputs("rly: -o goes with --import or --dot\n", stderr), usage(stderr), status = 2;
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
