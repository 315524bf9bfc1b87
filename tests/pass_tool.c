/* pass_tool.c — a small driver for the pass golden tests (tests/lit/passes):
 * parse → type-check → run passes → print, like `rly --pass` will.  A
 * script's top-level expressions and `:` commands are ignored.
 *
 *   pass_tool [--verify] [--types] [--diff] [--step] [--warn-keys] PASSES FILE
 *
 * PASSES is a comma list (EffectToState,ToANormalForm).  Prints the
 * resulting module (or with --diff the diff, with --step every rewrite
 * followed by the module); diagnostics go to stderr and the exit status is 1
 * on errors.  --warn-keys runs the key-linearity check as warnings first.
 * FILE may be "-" for stdin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "passes/pass.h"
#include "types/types.h"

typedef struct StepCtx {
  DiagCtx *d;
} StepCtx;

static bool print_step(void *user, const PassRewrite *rw) {
  StepCtx *s = user;
  char *t = pass_rewrite_format(rw, s->d, 12);
  fputs(t, stdout);
  free(t);
  return true;
}

typedef struct Flags {
  bool verify, types, diff, step, warn_keys;
  const char *passes, *file;
} Flags;

static bool parse_flags(int argc, char **argv, Flags *f) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--verify") == 0)
      f->verify = true;
    else if (strcmp(a, "--types") == 0)
      f->types = true;
    else if (strcmp(a, "--diff") == 0)
      f->diff = true;
    else if (strcmp(a, "--step") == 0)
      f->step = true;
    else if (strcmp(a, "--warn-keys") == 0)
      f->warn_keys = true;
    else if (!f->passes)
      f->passes = a;
    else if (!f->file)
      f->file = a;
    else
      return false;
  }
  return f->passes && f->file;
}

/* Parses and checks the file, runs the pass list (with the verifier and
 * step hook if asked), and prints the result module or its diff. */
static int run(const Flags *fl, DiagCtx *d, Arena *a) {
  size_t len;
  char *text = read_whole_file(fl->file, &len);
  if (!text) {
    fprintf(stderr, "pass_tool: cannot read %s\n", fl->file);
    return 1;
  }
  uint32_t file = diag_add_source(d, strcmp(fl->file, "-") == 0 ? "<stdin>" : fl->file, text, len);
  free(text);
  Module *m = module_new(a);
  ParseResult pr = parse_script(m, d, file, NULL); /* expressions and commands are ignored */
  if (!pr.ok || !ty_check_module(m, d)) {
    module_free(m);
    return 1;
  }
  if (fl->warn_keys) ty_check_key_linearity(m, d, false);
  StepCtx sc = {d};
  PassHook hook = {print_step, &sc};
  PassOptions opt = pass_options_default();
  opt.verify = fl->verify;
  opt.hook = fl->step ? &hook : NULL;
  PassResult r;
  bool ok = pass_pipeline(fl->passes, m, a, d, &opt, &r);
  if (ok) {
    PrintOptions po = {.types = fl->types, .header = true};
    char *s = fl->diff ? NULL : print_module(r.module, po);
    fputs(fl->diff ? r.diff : s, stdout);
    free(s);
  }
  if (r.module) module_free(r.module);
  pass_result_free(&r);
  module_free(m);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  Flags fl = {0};
  if (!parse_flags(argc, argv, &fl)) {
    fprintf(stderr,
            "usage: pass_tool [--verify] [--types] [--diff] [--step] [--warn-keys] PASSES FILE\n");
    return 2;
  }
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  int rc = run(&fl, &d, &a);
  diag_render(&d, stderr, 0, false);
  diag_free(&d);
  arena_free(&a);
  return rc;
}
