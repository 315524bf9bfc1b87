/* cmd_jit.c — the JIT's commands: `:kernels`, `:dump tir|llvm|asm @f`,
 * `:time EXPR [-n N]` and `:set opt O0..O3` (jit/jit.h).
 *
 * :time evaluates through the session's Evaluator (repl_eval) exactly as
 * an input would: once as a warm-up (its time, with the compile time of
 * the kernels it compiled, on its own line), then N times or for about a
 * second; it prints min, median and max per call, a warning when the max
 * is over 4× the min, and GFLOP/s and GB/s at the median: the flops and
 * bytes of the kernels the warm-up call ran, as :profile counts them (a
 * call of @f sums its kernels), or, when no kernel reported, a rough cost
 * of a top-level op call (2 flops per multiply-add, one per element of an
 * elementwise op, bytes of operands and result). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/inspect.h"
#include "engine/schedule.h"
#include "ir/tir.h"
#include "ops/ops.h"
#include "repl/repl.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ───────────────────────── :kernels ───────────────────────── */

/* The shape-specialized copies of functions with `?` dimensions, most
 * recently used first. */
static void print_specializations(Engine *e) {
  int n = engine_spec_count(e);
  if (n == 0) return;
  printf("specialized (%d, at most %d: :set specialize)  shapes  calls  built in\n", n,
         engine_options(e)->specialize);
  for (int i = 0; i < n; i++) {
    EngineSpecInfo si;
    if (engine_spec_info(e, i, &si))
      printf("@%s  %s  %llu  %.1f ms\n", si.name, si.shapes, (unsigned long long)si.calls,
             si.build_ms);
  }
}

/* The widest kernel name (with its @) and signature of the table. */
static void kernel_widths(int n, int *wn, int *ws) {
  *wn = 6, *ws = 9;
  for (int i = 0; i < n; i++) {
    JitKernelInfo k;
    if (!engine_jit_kernel_info(i, &k)) continue;
    int ln = (int)strlen(k.name) + 1, ls = (int)strlen(k.signature);
    *wn = ln > *wn ? ln : *wn, *ws = ls > *ws ? ls : *ws;
  }
}

/* The compile column: the time, the disk cache's load, or the earlier
 * kernel whose code this one runs (identical TIR is compiled once). */
static void compile_cell(const JitKernelInfo *k, char *buf, size_t n) {
  JitKernelInfo first;
  if (k->first && engine_jit_kernel_info(k->first - 1, &first))
    snprintf(buf, n, "= @%s", first.name);
  else if (k->from_disk)
    snprintf(buf, n, "(disk) %.1f ms", k->load_ms);
  else
    snprintf(buf, n, "%.1f ms", k->compile_ms);
}

static void list_kernels(Engine *e, int n) {
  int wn, ws;
  kernel_widths(n, &wn, &ws);
  printf("%-*s  %-*s %14s %8s %11s\n", wn, "kernel", ws, "signature", "compile", "calls", "total");
  for (int i = 0; i < n; i++) {
    JitKernelInfo k;
    if (!engine_jit_kernel_info(i, &k)) continue;
    char compile[160];
    compile_cell(&k, compile, sizeof compile);
    printf("@%-*s  %-*s %14s %8llu %8.3f ms", wn - 1, k.name, ws, k.signature, compile,
           (unsigned long long)k.calls, k.total_ms);
    const PrimFunc *f = engine_kernel(e, k.name);
    const AttrValue *kn = f && f->attrs ? attrs_get(f->attrs, "knobs") : NULL;
    if (kn && kn->kind == AV_STR) printf("  tuned {%s}", kn->u.s); /* the tuning database's knobs */
    putchar('\n');
  }
}

/* Totals of `:kernels --compile`. */
typedef struct CompileSums {
  int kernels, compiled, shared, disk;
  double codegen, passes, emit, load, wall;
} CompileSums;

static void compile_row(const JitKernelInfo *k, int wn, CompileSums *t) {
  const JitCompileStats *st = &k->st;
  t->kernels++;
  if (k->first) {
    JitKernelInfo f;
    t->shared++;
    if (engine_jit_kernel_info(k->first - 1, &f))
      printf("@%-*s  = @%s (the same TIR: compiled once)\n", wn - 1, k->name, f.name);
    return;
  }
  if (k->from_disk) {
    t->disk++, t->load += k->load_ms, t->wall += k->load_ms;
    printf("@%-*s  (disk) %46s %7.1f %8.1f\n", wn - 1, k->name, "", k->load_ms, k->load_ms);
    return;
  }
  double wall = k->compile_ms + k->load_ms;
  t->compiled++, t->codegen += st->codegen_ms, t->passes += st->opt_ms, t->emit += st->emit_ms;
  t->load += k->load_ms, t->wall += wall;
  printf("@%-*s  %7d %7d %7zu %7.1f %7.1f %7.1f %7.1f %8.1f\n", wn - 1, k->name, st->ir_before,
         st->ir_after, st->obj_bytes, st->codegen_ms, st->opt_ms, st->emit_ms, k->load_ms, wall);
}

/* `:kernels --compile`: where each kernel's compile went. */
static void compile_stats(int n) {
  int wn, ws;
  kernel_widths(n, &wn, &ws);
  printf("%-*s  %7s %7s %7s %7s %7s %7s %7s %8s\n", wn, "kernel", "IR in", "IR out", "bytes",
         "codegen", "passes", "emit", "load", "wall ms");
  CompileSums t = {0};
  for (int i = 0; i < n; i++) {
    JitKernelInfo k;
    if (engine_jit_kernel_info(i, &k)) compile_row(&k, wn, &t);
  }
  double cpu = t.codegen + t.passes + t.emit;
  printf("%d kernels: %d compiled, %d identical to an earlier one, %d from the disk cache\n",
         t.kernels, t.compiled, t.shared, t.disk);
  printf(
      "CPU ms: codegen %.1f, passes %.1f, emit %.1f: %.1f (%.1f a compiled kernel); "
      "load %.1f ms\n",
      t.codegen, t.passes, t.emit, cpu, t.compiled ? cpu / t.compiled : 0.0, t.load);
  const char *p = engine_jit_passes();
  if (p && *p) printf("LLVM passes: %s (RLY_JIT_PASSES)\n", p);
}

/* `:kernels [--compile]`: a table of the compiled kernels (signature,
 * compile or disk load time, calls, total run time), or where their
 * compiles' time went, or why there are none. */
RunStatus repl_cmd_kernels(Session *s, const char *args, Span where) {
  bool stats = strcmp(args, "--compile") == 0;
  if (*args && !stats) {
    session_error(s, where, "`:kernels` or `:kernels --compile`", "unknown option `%s`", args);
    return RUN_ERROR;
  }
  if (engine_options(session_engine(s))->exec != EXEC_JIT)
    puts("(exec interp: call_tir runs on the TIR interpreter)");
  int n = engine_jit_kernel_count();
  if (n == 0 && engine_jit_unavailable()) {
    printf("JIT unavailable: %s; call_tir runs on the TIR interpreter\n", engine_jit_unavailable());
    return RUN_OK;
  }
  if (n == 0) {
    puts("(no kernels compiled yet)");
    return RUN_OK;
  }
  if (stats)
    compile_stats(n);
  else
    list_kernels(session_engine(s), n);
  print_specializations(session_engine(s));
  return RUN_OK;
}

/* ───────────────────────── :dump ───────────────────────── */

/* `:dump tir|llvm|asm NAME`: NAME is a function, a prim function or a
 * kernel (cmd_lower.c resolves it); llvm and asm come from the JIT. */
RunStatus repl_cmd_dump(Session *s, const char *args, Span where) {
  size_t k = strcspn(args, " \t");
  const char *rest = args + k + strspn(args + k, " \t");
  Span rest_sp = span_make(where.off + (uint32_t)(rest - args), strlen(rest));
  if (k == 3 && strncmp(args, "tir", 3) == 0) return repl_dump_tir(s, rest, rest_sp);
  bool llvm = k == 4 && strncmp(args, "llvm", 4) == 0, as = k == 3 && strncmp(args, "asm", 3) == 0;
  if (!llvm && !as) {
    session_error(s, where, "`:dump tir @f`, `:dump llvm @p` or `:dump asm @p`",
                  "`:dump` needs tir, llvm or asm");
    return RUN_ERROR;
  }
  PtrVec ps;
  bool func, ok = true;
  if (!repl_dump_prims(s, rest, rest_sp.len ? rest_sp : where, &ps, &func)) return RUN_ERROR;
  for (size_t i = 0; ok && i < ps.len; i++) {
    StrBuf b = {0};
    char err[RT_ERR_LEN];
    ok = engine_jit_dump(ps.items[i], llvm ? "llvm" : "asm", &b, err, sizeof err);
    if (ok)
      fputs(b.data ? b.data : "", stdout);
    else
      session_error(s, rest_sp, NULL, "%s", err);
    sb_free(&b);
  }
  vec_free(&ps);
  return ok ? RUN_OK : RUN_ERROR;
}

/* ───────────────────────── :time: cost ───────────────────────── */

typedef struct Cost {
  double flops, bytes; /* 0: unknown */
} Cost;

static bool static_numel(const Type *t, double *n, double *bytes) {
  if (!t || t->kind != TY_TENSOR) return false;
  double e = 1;
  for (int d = 0; d < t->u.tensor.ndim; d++) {
    if (t->u.tensor.dims[d].kind != DIM_CONST) return false;
    e *= (double)t->u.tensor.dims[d].value;
  }
  *n = e, *bytes = e * dtype_bytes(t->u.tensor.dtype);
  return true;
}

static double dim_of(const Type *t, int d) {
  if (!t || t->kind != TY_TENSOR || d >= t->u.tensor.ndim || d < -t->u.tensor.ndim) return 0;
  if (d < 0) d += t->u.tensor.ndim;
  const Dim *x = &t->u.tensor.dims[d];
  return x->kind == DIM_CONST ? (double)x->value : 0;
}

/* The multiply-adds of a contraction op, by its row's cost kind (0 if
 * not one, or unknown). */
static double macs(OpCost k, Expr *const *args, int nargs, const Type *out) {
  const Type *a = nargs > 0 ? args[0]->ty : NULL, *b = nargs > 1 ? args[1]->ty : NULL;
  double on, ob;
  if (!static_numel(out, &on, &ob)) return 0;
  if (k == OPCOST_MATMUL) return on * dim_of(a, -1);
  if (k == OPCOST_CONV2D) /* out elements × Cin/groups × kh × kw (OIHW weights) */
    return on * dim_of(b, 1) * dim_of(b, 2) * dim_of(b, 3);
  return 0;
}

/* A rough cost of a top-level op call for `:time`: bytes moved (operands
 * and result, when their sizes are static) and flops (2 per multiply-add,
 * or one per element of an elementwise op); zero when unknown. */
static Cost cost_of(const Expr *e) {
  Cost c = {0, 0};
  if (!e || e->kind != EX_CALL || !e->u.call.fn || e->u.call.fn->kind != EX_OP) return c;
  const OpDef *op = ops_get(e->u.call.fn->u.op.index);
  double n, bytes, total = 0;
  if (!op) return c;
  if (!static_numel(e->ty, &n, &bytes)) return c;
  total = bytes;
  for (int i = 0; i < e->u.call.nargs; i++) {
    const Expr *a = e->u.call.args[i];
    if (a->kind == EX_TUPLE)
      for (int j = 0; j < a->u.tuple.n; j++) {
        double fn, fb;
        if (static_numel(a->u.tuple.fields[j]->ty, &fn, &fb)) total += fb;
      }
    else if (a->ty && a->ty->kind == TY_TENSOR) {
      double fn, fb;
      if (static_numel(a->ty, &fn, &fb)) total += fb;
    }
  }
  c.bytes = total;
  double m = macs(op->cost, e->u.call.args, e->u.call.nargs, e->ty);
  if (m > 0)
    c.flops = 2 * m;
  else if (op->cost == OPCOST_ELEMWISE)
    c.flops = n;
  return c;
}

/* ───────────────────────── :time ───────────────────────── */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void print_ms(const char *label, double ms) {
  if (ms < 1)
    printf("%s%.1f us", label, ms * 1e3);
  else
    printf("%s%.3f ms", label, ms);
}

/* Splits "EXPR -n N": the length of EXPR, and N (0 = about a second). */
static bool split_n(const char *args, size_t *elen, long *n) {
  *elen = strlen(args), *n = 0;
  const char *p = strstr(args, " -n");
  while (p && strstr(p + 1, " -n")) p = strstr(p + 1, " -n");
  if (!p) return true;
  char *end;
  long v = strtol(p + 3, &end, 10);
  while (*end == ' ' || *end == '\t') end++;
  if (*end || v < 1) return false;
  *elen = (size_t)(p - args), *n = v;
  return true;
}

/* One evaluation, without formatting the value (not part of the cost).
 * The previous runs' values are collected first, untimed: freed buffers are
 * then reused warm, as a reference-counted runtime would, instead of each
 * run paying page faults on fresh memory until the collector runs. */
static bool eval_once(Session *s, Module *view, Expr *e, double *ms, double *cpu) {
  repl_eval_collect(s->ev);
  double t0 = now_ms(), c0 = cpu_ms();
  repl_in_eval = 1;
  bool ok = repl_eval(s->ev, view, e, NULL, NULL);
  repl_in_eval = 0;
  *ms = now_ms() - t0;
  if (cpu) *cpu = cpu_ms() - c0;
  if (!ok) session_render(s);
  return ok;
}

static void first_call(double ms, int k0) {
  double compile = 0;
  int fresh = 0, disk = 0;
  for (int i = k0; i < engine_jit_kernel_count(); i++) {
    JitKernelInfo k;
    if (!engine_jit_kernel_info(i, &k) || k.first) continue; /* identical code: compiled once */
    compile += k.compile_ms, fresh += !k.from_disk, disk += k.from_disk;
  }
  print_ms("first call: ", ms);
  if (fresh || disk) {
    printf(" (compiled %d kernel%s in %.1f ms", fresh, fresh == 1 ? "" : "s", compile);
    if (disk) printf(", %d from the disk cache", disk);
    putchar(')');
  }
  putchar('\n');
}

static double median_of(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* The runs' times; cpu: the process's CPU time per run (all threads), which
 * other programs on a busy machine do not inflate as they do wall time. */
static void report(double *t, double *cpu, int n, Cost c) {
  double med = median_of(t, n), mn = t[0], mx = t[n - 1];
  printf("%d run%s: ", n, n == 1 ? "" : "s");
  print_ms("min ", mn), print_ms("  median ", med), print_ms("  max ", mx);
  puts(" per call");
  print_ms("cpu time: median ", median_of(cpu, n));
  puts(" per call (all threads)");
  if (mx > 4 * mn)
    printf("warning: the slowest run took %.1fx the fastest (a busy machine?)\n", mx / mn);
  if (med > 0 && (c.flops > 0 || c.bytes > 0)) {
    if (c.flops > 0) printf("%.3g GFLOP/s", c.flops / (med * 1e6));
    if (c.bytes > 0) printf("%s%.3g GB/s", c.flops > 0 ? ", " : "", c.bytes / (med * 1e6));
    puts(" at the median");
  }
}

/* One timed run of what :time measures (false: it failed, already said). */
typedef bool (*RunOnce)(void *ctx, double *ms, double *cpu);

/* N runs, or as many as fit in about a second (at least 3), then the
 * report; false when a run failed. */
static bool time_runs(long n, RunOnce run, void *ctx, Cost c) {
  int cap = n > 0 ? (int)n : 1024, count = 0;
  double *t = malloc(sizeof *t * (size_t)cap), *cpu = malloc(sizeof *cpu * (size_t)cap), spent = 0;
  if (!t || !cpu) rly_oom();
  bool ok = true;
  while (ok && (n > 0 ? count < n : (spent < 1000 && count < 1000000) || count < 3)) {
    if (count == cap) {
      cap *= 2;
      t = realloc(t, sizeof *t * (size_t)cap), cpu = realloc(cpu, sizeof *cpu * (size_t)cap);
      if (!t || !cpu) rly_oom();
    }
    ok = run(ctx, &t[count], &cpu[count]);
    spent += t[count++];
    if (repl_interrupted) break;
  }
  if (ok && count > 0) report(t, cpu, count, c);
  free(t), free(cpu);
  return ok;
}

/* `:time @f` of a prim function: on random inputs (a schedule's steps are
 * timed so), jit or interp as exec says. */
typedef struct PrimTiming {
  PrimRun *r;
  const char *name;
} PrimTiming;

static bool prim_once(void *ctx, double *ms, double *cpu) {
  PrimTiming *pt = ctx;
  char err[512];
  double w0 = now_ms(), c0 = cpu_ms();
  bool ok = engine_prim_run(pt->r, err, sizeof err);
  *ms = now_ms() - w0, *cpu = cpu_ms() - c0;
  if (!ok) fprintf(stderr, "error: @%s: %s\n", pt->name, err);
  return ok;
}

static RunStatus time_prim(Session *s, const PrimFunc *f, long n) {
  char err[512];
  int k0 = engine_jit_kernel_count();
  double t0 = now_ms();
  PrimRun *r = engine_prim_run_new(session_engine(s), f, err, sizeof err);
  bool ok = r && engine_prim_run(r, err, sizeof err);
  if (!ok) fprintf(stderr, "error: @%s: %s\n", f->name, err);
  if (ok) {
    first_call(now_ms() - t0, k0);
    printf("(@%s on random inputs)\n", f->name);
    PrimTiming pt = {r, f->name};
    ok = time_runs(n, prim_once, &pt, (Cost){engine_prim_run_flops(r), engine_prim_run_bytes(r)});
  }
  engine_prim_run_free(r);
  return ok ? RUN_OK : RUN_ERROR;
}

typedef struct ExprTiming {
  Session *s;
  Module *view;
  Expr *e;
} ExprTiming;

static bool expr_once(void *ctx, double *ms, double *cpu) {
  ExprTiming *et = ctx;
  return eval_once(et->s, et->view, et->e, ms, cpu);
}

/* `:time EXPR [-n N]`: the first run is reported apart (it may compile),
 * then N runs, or as many as fit in about a second (at least 3). */
RunStatus repl_cmd_time(Session *s, const char *args, Span where) {
  size_t elen;
  long n;
  if (!*args || !split_n(args, &elen, &n)) {
    session_error(s, where, "e.g. `:time nn.dense(%x, %w) -n 100`", "`:time` needs EXPR [-n N]");
    return RUN_ERROR;
  }
  char name[256];
  if (args[0] == '@' && elen < sizeof name && strcspn(args, " \t") >= elen) {
    snprintf(name, sizeof name, "%.*s", (int)elen - 1, args + 1);
    const PrimFunc *f = module_prim(session_module(s), name);
    if (f) return time_prim(s, f, n);
  }
  Span esp = span_make(where.off, elen);
  Module view; /* the input's IR stays (values may borrow its constants) */
  Expr *e = session_parse_expr(s, esp, &s->inputs, &view);
  if (!e) return RUN_ERROR;
  int k0 = engine_jit_kernel_count();
  double ms;
  Profile *p = profile_start(); /* the cost of a call: its kernels' flops and bytes */
  bool ok = eval_once(s, &view, e, &ms, NULL);
  profile_stop(p);
  if (ok) first_call(ms, k0);
  Cost c = cost_of(e);
  if (p) profile_totals(p, &c.flops, &c.bytes);
  if (c.flops <= 0 && c.bytes <= 0) c = cost_of(e);
  profile_free(p);
  ExprTiming et = {s, &view, e};
  if (ok) ok = time_runs(n, expr_once, &et, c);
  return ok ? RUN_OK : RUN_ERROR;
}

/* ───────────────────────── :profile ───────────────────────── */

/* The table of one evaluation, headed by where it came from (rly
 * --profile) or by the expression's text (:profile). */
void repl_print_profile(Session *s, Profile *p, Span where) {
  if (!p) return;
  uint32_t off, line = 0, col = 0;
  const SourceFile *src = diag_span_source(&s->diag, where, &off);
  diag_line_col(&s->diag, where, &line, &col);
  printf("profile of %s:%u:%u:\n", src ? src->name : "?", line, col);
  profile_print(p, stdout);
  repl_keep_profile(s, p);
}

void repl_keep_profile(Session *s, Profile *p) {
  profile_free(s->last_profile);
  s->last_profile = p;
}

/* `:profile EXPR`: one evaluation (values of earlier runs collected first,
 * untimed, as :time does), counted kernel by kernel. */
RunStatus repl_cmd_profile(Session *s, const char *args, Span where) {
  if (!*args) {
    session_error(s, where, "e.g. `:profile @main(%x)`", "`:profile` needs an expression");
    return RUN_ERROR;
  }
  Module view;
  Expr *e = session_parse_expr(s, where, &s->inputs, &view);
  if (!e) return RUN_ERROR;
  repl_eval_collect(s->ev);
  Profile *p = profile_start();
  if (!p) {
    session_error(s, where, NULL, "a profile is already running");
    return RUN_ERROR;
  }
  repl_in_eval = 1;
  bool ok = repl_eval(s->ev, &view, e, NULL, NULL);
  repl_in_eval = 0;
  profile_stop(p);
  if (!ok) {
    profile_free(p);
    session_render(s);
    return RUN_ERROR;
  }
  profile_print(p, stdout);
  repl_keep_profile(s, p);
  return RUN_OK;
}
