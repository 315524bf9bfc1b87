/* parse.c — bench/parse: parse and type-check throughput on generated
 * modules of 10k, 100k and 1M bindings.  Prints MB/s and bindings/s for
 * parsing and for type checking, and the cost per binding relative to the
 * smallest size (1.00 everywhere means linear scaling).  Best of 3 runs.
 *
 * Then the peer: tests/deep.py's 1,000,000-binding let chain, checked by
 * `rly --check` (the executable beside bench/, a child process), against
 * the same program in C under `clang -fsyntax-only` (clang-19, else clang).
 * Both are whole processes reading a file, run in turns: the CPU time
 * (user + system, best of 3) and the
 * peak resident memory (ru_maxrss) per source byte, and the two ratios
 * clang/rly (time: > 1 means rly is faster; memory: > 1 means rly uses
 * less per byte).  Without a clang the peer's columns say so.  Last, where
 * rly's peak goes: the chain parsed and checked in this process, each part
 * of it (source, nodes by kind, variables, types) per binding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "ir/walk.h"
#include "parser/lexer.h"
#include "parser/parser.h"
#include "types/types.h"

/* Times are CPU seconds (the process's, or a child's user + system time):
 * on a shared machine the wall clock measures the neighbours too. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_secs(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

/* A chain of typical bindings over a (4, 8) activation. */
static char *gen_module(long n, size_t *len) {
  StrBuf b = {0};
  sb_puts(&b,
          "#[version = \"0.0.5\"]\n"
          "def @main(%x0: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32],\n"
          "          %b: Tensor[(8), float32]) -> Tensor[(4, 8), float32] {\n");
  static const char *const forms[] = {
      "  let %%x%ld = nn.dense(%%x%ld, %%w, units=8);\n",
      "  let %%x%ld = nn.bias_add(%%x%ld, %%b);\n",
      "  let %%x%ld = nn.relu(%%x%ld) /* ty=Tensor[(4, 8), float32] */;\n",
      "  let %%x%ld = multiply(%%x%ld, 0.5f);\n",
      "  let %%x%ld: Tensor[(4, 8), float32] = add(%%x%ld, 1f);\n",
  };
  for (long i = 1; i <= n; i++) sb_printf(&b, forms[i % 5], i, i - 1);
  sb_printf(&b, "  %%x%ld\n}\n", n);
  *len = b.len;
  return sb_take(&b);
}

typedef struct Timing {
  double parse, check;
} Timing;

/* Times parse_module and ty_check_module on one fresh module; any error
 * aborts, since a bench of a failing parse would measure nothing useful. */
static Timing run_once(const char *text, size_t len) {
  Timing t = {0, 0};
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  uint32_t file = diag_add_source(&d, "<bench>", text, len);
  Module *m = module_new(&arena);
  double t0 = now();
  bool ok = parse_module(m, &d, file);
  double t1 = now();
  ok = ok && ty_check_module(m, &d);
  double t2 = now();
  if (!ok) {
    diag_render(&d, stderr, 0, false);
    exit(1);
  }
  t.parse = t1 - t0, t.check = t2 - t1;
  diag_free(&d);
  arena_free(&arena);
  return t;
}

/* ───────────────────────── the peer: clang ───────────────────────── */

enum { PEER_BINDINGS = 1000000, PEER_REPS = 3 };

/* tests/deep.py's let chain, and the same program in C: a value type, a
 * function add, one local per binding. */
static void write_let_chain(const char *path, long n, bool c) {
  FILE *f = fopen(path, "w");
  if (!f) perror(path), exit(1);
  if (c)
    fputs("typedef struct { float d[2][3]; } T;\nT add(T a, float b);\nT f(T x0) {\n", f);
  else
    fputs(
        "#[version = \"0.0.5\"]\ndef @main(%x0: Tensor[(2, 3), float32]) -> "
        "Tensor[(2, 3), float32] {\n",
        f);
  for (long i = 1; i <= n; i++)
    fprintf(f, c ? "  T x%ld = add(x%ld, 1.0f);\n" : "  let %%x%ld = add(%%x%ld, 1f);\n", i, i - 1);
  fprintf(f, c ? "  return x%ld;\n}\n" : "  %%x%ld\n}\n", n);
  fclose(f);
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

typedef struct Run {
  double secs; /* best of the runs */
  double peak; /* peak resident bytes of that kind of process */
  bool ok;
} Run;

/* Runs argv as a child (stdout and stderr to /dev/null) once more into r:
 * the best wall time and the largest peak RSS; ok while every run exits 0.
 * The child's ru_maxrss includes what its fork of this process held before
 * exec (Linux keeps the larger of the two), so the children run first,
 * while this process is small (main). */
static void run_child(char *const argv[], Run *r) {
  if (!r->ok) return;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
    r->ok = false;
    return;
  }
  double t = tv_secs(ru.ru_utime) + tv_secs(ru.ru_stime);
  r->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (t < r->secs) r->secs = t;
  if ((double)ru.ru_maxrss * 1024 > r->peak) r->peak = (double)ru.ru_maxrss * 1024;
}

/* The first of clang-19 and clang that runs, or NULL. */
static const char *find_clang(void) {
  static const char *const names[] = {"clang-19", "clang"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *argv[] = {(char *)names[i], "--version", NULL};
    Run r = {1e9, 0, true};
    run_child(argv, &r);
    if (r.ok) return names[i];
  }
  return NULL;
}

/* The rly executable: RLY, else ../rly beside this program's directory. */
static const char *rly_path(const char *argv0) {
  static char path[4096];
  const char *env = getenv("RLY");
  if (env) return env;
  const char *slash = strrchr(argv0, '/');
  int dir = slash ? (int)(slash - argv0) : 1;
  snprintf(path, sizeof path, "%.*s/../rly", dir, slash ? argv0 : ".");
  return path;
}

/* ───────────────────── where the memory goes ───────────────────── */

/* What the checked program holds, by part, counted once per distinct
 * object (an op node, a scalar's tensor and a type are shared). */
typedef struct Parts {
  U64Map seen;
  long nodes[EX_DATAFLOW + 1];
  double node_bytes[EX_DATAFLOW + 1];
  long vars, types, tensors;
  double var_bytes, type_bytes, tensor_bytes;
} Parts;

static double round8(size_t n) { return (double)((n + 7) & ~(size_t)7); }

static void count_type(Parts *p, const Type *t) {
  if (!t || !u64map_insert(&p->seen, PTR_KEY(t))) return;
  p->types++;
  p->type_bytes += sizeof(Type);
  if (t->kind == TY_TENSOR) p->type_bytes += round8(sizeof(Dim) * (size_t)t->u.tensor.ndim);
}

static void count_var(Parts *p, const Var *v) {
  if (!u64map_insert(&p->seen, PTR_KEY(v))) return;
  p->vars++;
  p->var_bytes += round8(sizeof(Var) + strlen(v->name) + 1);
}

static void count_node(Parts *p, const Expr *e) {
  p->nodes[e->kind]++;
  p->node_bytes[e->kind] += round8(expr_bytes(e));
  count_type(p, e->ty);
  if (e->kind == EX_VAR) count_var(p, e->u.var);
  if (e->kind == EX_LET) count_var(p, e->u.let.var);
  if (e->kind == EX_CONST && u64map_insert(&p->seen, PTR_KEY(e->u.konst.value))) {
    p->tensors++;
    p->tensor_bytes += sizeof(Tensor) + round8(tensor_nbytes(e->u.konst.value));
  }
}

/* Every distinct node under root (no recursion on the chain's length). */
static void count_expr(Parts *p, Expr *root) {
  PtrVec stack = {0};
  vec_push(&stack, root);
  while (stack.len) {
    Expr *e = vec_pop(&stack);
    if (!u64map_insert(&p->seen, PTR_KEY(e))) continue;
    count_node(p, e);
    for (int i = 0; i < expr_nchildren(e); i++) vec_push(&stack, expr_child(e, i));
  }
  vec_free(&stack);
}

static void print_part(const char *what, long n, double bytes, long bindings) {
  printf("  %-26s %9ld %8.1f MiB %7.1f bytes/binding\n", what, n, bytes / 1048576.0,
         bytes / (double)bindings);
}

/* The peer's let chain, parsed and checked here as rly --check does: each
 * part of the checked program per binding.  The source is mapped and
 * leaves memory behind the lexer (ir/util.h): at most the lexer's window
 * of it is resident (an upper bound, LEX_WINDOW).  The rest of rly
 * --check's peak (peak, bytes) is what lives only while parsing (the
 * scope: 24 bytes a binding), the standard library's module and the
 * program image. */
enum { LEX_WINDOW = LEX_RELEASE_STEP + LEX_KEEP };

static void breakdown(const char *path, long bindings, double peak) {
  FileText ft;
  if (!file_text_read(path, &ft)) perror(path), exit(1);
  size_t len = ft.len;
  bool mapped = ft.map_len > 0;
  Arena arena;
  arena_init(&arena);
  DiagCtx d;
  diag_init(&d);
  Module *m = module_new(&arena);
  if (!parse_module(m, &d, diag_take_file(&d, path, &ft)) || !ty_check_module(m, &d))
    diag_render(&d, stderr, 0, false), exit(1);
  Parts p = {0};
  count_expr(&p, module_func(m, "main")->fn->body);
  printf("\nwhere rly --check's peak goes, per binding of the let chain:\n");
  double source = mapped && len > LEX_WINDOW ? LEX_WINDOW : (double)len;
  print_part(mapped ? "source text (mapped; window)" : "source text", 1, source, bindings);
  double total = source;
  for (int k = 0; k <= EX_DATAFLOW; k++) {
    if (!p.nodes[k]) continue;
    char what[64];
    snprintf(what, sizeof what, "Expr %s (%zu bytes%s)", expr_kind_name((ExprKind)k),
             expr_size((ExprKind)k), k == EX_CALL ? " + 8 an argument" : "");
    print_part(what, p.nodes[k], p.node_bytes[k], bindings);
    total += p.node_bytes[k];
  }
  print_part("Var (24 bytes and its name)", p.vars, p.var_bytes, bindings);
  print_part("checked types", p.types, p.type_bytes, bindings);
  print_part("constant tensors", p.tensors, p.tensor_bytes, bindings);
  total += p.var_bytes + p.type_bytes + p.tensor_bytes;
  print_part("the rest of the peak", 0, peak - total, bindings);
  u64map_free(&p.seen);
  module_free(m);
  diag_free(&d);
  arena_free(&arena);
}

static void print_run(const char *who, const Run *r, long bytes) {
  printf("  %-22s %8.2f s CPU %10.1f MiB %8.1f bytes/source byte\n", who, r->secs,
         r->peak / 1048576.0, r->peak / (double)bytes);
}

static void peer(const char *argv0) {
  char dir[] = "/tmp/rly-bench-parse-XXXXXX", rly_file[64], c_file[64];
  if (!mkdtemp(dir)) perror("mkdtemp"), exit(1);
  snprintf(rly_file, sizeof rly_file, "%s/let.rly", dir);
  snprintf(c_file, sizeof c_file, "%s/let.c", dir);
  write_let_chain(rly_file, PEER_BINDINGS, false);
  write_let_chain(c_file, PEER_BINDINGS, true);
  long rly_bytes = file_size(rly_file), c_bytes = file_size(c_file);
  printf("%d-binding let chain (tests/deep.py), whole process, best of %d (alternating):\n",
         PEER_BINDINGS, PEER_REPS);
  const char *clang = find_clang();
  char *rly_argv[] = {(char *)rly_path(argv0), "--check", rly_file, NULL};
  char *c_argv[] = {(char *)clang, "-fsyntax-only", c_file, NULL};
  Run r = {1e9, 0, true}, c = {1e9, 0, clang != NULL};
  for (int i = 0; i < PEER_REPS; i++) run_child(rly_argv, &r), run_child(c_argv, &c);
  if (!r.ok) fprintf(stderr, "bench/parse: %s --check failed\n", rly_argv[0]), exit(1);
  print_run("rly --check", &r, rly_bytes);
  char who[64];
  snprintf(who, sizeof who, "%s -fsyntax-only", clang ? clang : "clang");
  if (c.ok) {
    print_run(who, &c, c_bytes);
    printf("  clang/rly: time %.2fx, memory per source byte %.2fx\n", c.secs / r.secs,
           (c.peak / (double)c_bytes) / (r.peak / (double)rly_bytes));
  } else {
    printf("  %s: %s, no ratio against clang\n", who, clang ? "failed" : "not found");
  }
  breakdown(rly_file, PEER_BINDINGS, r.peak);
  unlink(rly_file), unlink(c_file), rmdir(dir);
}

/* One row per size (argv[1] limits how many), best of 3 runs each; the
 * last columns compare the time per binding with the smallest size. */
int main(int argc, char **argv) {
  long sizes[] = {10000, 100000, 1000000};
  int nsizes = argc > 1 ? atoi(argv[1]) : 3;
  if (nsizes < 1 || nsizes > 3) nsizes = 3;
  double base_parse = 0, base_check = 0;
  if (nsizes == 3) peer(argv[0]); /* first: see run_child */
  printf("\n%-10s %9s %11s %14s %11s %14s %10s %10s\n", "bindings", "MB", "parse MB/s",
         "parse bind/s", "check MB/s", "check bind/s", "parse/bnd", "check/bnd");
  for (int s = 0; s < nsizes; s++) {
    size_t len;
    char *text = gen_module(sizes[s], &len);
    Timing best = {1e9, 1e9};
    for (int rep = 0; rep < 3; rep++) {
      Timing t = run_once(text, len);
      if (t.parse < best.parse) best.parse = t.parse;
      if (t.check < best.check) best.check = t.check;
    }
    double mb = (double)len / 1e6;
    double pp = best.parse / (double)sizes[s], pc = best.check / (double)sizes[s];
    if (s == 0) base_parse = pp, base_check = pc;
    printf("%-10ld %9.1f %11.1f %14.0f %11.1f %14.0f %9.2fx %9.2fx\n", sizes[s], mb,
           mb / best.parse, (double)sizes[s] / best.parse, mb / best.check,
           (double)sizes[s] / best.check, pp / base_parse, pc / base_check);
    free(text);
  }
  printf("(last two columns: time per binding relative to 10k bindings; 1.00x = linear)\n");
  return 0;
}
