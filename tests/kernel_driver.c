/* kernel_driver.c — runs reference kernels on test cases read from stdin
 * and writes the results to stdout, for tests/kernels_numpy.py.
 *
 * Input: a sequence of cases, each
 *   CASE <op>\n
 *   ATTRS <attributes as rly text, e.g. axis=[1], keepdims=True>\n
 *   NIN <n>\n
 *   n times: NPY <bytes>\n<a .npy file of that many bytes>
 * Output, per case:
 *   OK <nout>\n then nout times NPY <bytes>\n<.npy bytes>
 *   or ERR <message>\n
 * The attributes are parsed by the real parser from
 * `fn (%a0, ...) { op(%a0, ..., ATTRS) }` (a tuple argument for ops that
 * take one), then the op runs through kernels_infer_and_run: the type
 * relation computes the output shapes, the kernel the values.
 *
 * An input may come as `CONST <bytes>` instead of `NPY <bytes>`: in the
 * jit mode it is written into the call as a tensor literal (a constant, so
 * a dyn op's type relation sees its value) instead of being a parameter;
 * the interp mode runs it as any input.
 *
 * `--exec jit` runs each case compiled instead: the text
 * `def @k(%a0: Tensor[shape, dtype], ...) { op(...) }` goes through the
 * engine in its jit mode (FuseOps, lowering by the op's TIR compute rule,
 * the LLVM JIT; contraction off, as the reference kernels round each
 * step).  A case whose call does not lower (a dtype or attribute the rule
 * declines) is answered `NOLOWER <why>\n` instead of running on its kernel, so
 * an OK reply always comes from compiled code.
 *
 * The .npy support is minimal: version 1/2 headers, little-endian or
 * byte-sized dtypes, C order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "ir/diag.h"
#include "ir/walk.h"
#include "kernels/kernels.h"
#include "lower/compute/compute.h"
#include "lower/lower.h"
#include "parser/parser.h"
#include "types/types.h"

enum { MAX_IO = 64 };

/* npy descr ↔ dtype. */
static const char *const npy_descr[DT_COUNT] = {
    [DT_BOOL] = "|b1",   [DT_INT8] = "|i1",    [DT_INT16] = "<i2",   [DT_INT32] = "<i4",
    [DT_INT64] = "<i8",  [DT_UINT8] = "|u1",   [DT_UINT16] = "<u2",  [DT_UINT32] = "<u4",
    [DT_UINT64] = "<u8", [DT_FLOAT16] = "<f2", [DT_FLOAT32] = "<f4", [DT_FLOAT64] = "<f8",
};

static DType descr_dtype(const char *d) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strcmp(npy_descr[i], d) == 0) return (DType)i;
  return DT_INVALID;
}

/* Parses a .npy image into a tensor; NULL with a message in err. */
static RtTensor *npy_read(const unsigned char *p, size_t n, char *err, size_t errn) {
  if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0) return snprintf(err, errn, "not an npy file"), NULL;
  size_t hl = p[6] == 1 ? (size_t)(p[8] | p[9] << 8)
                        : (size_t)(p[8] | p[9] << 8 | p[10] << 16 | (size_t)p[11] << 24);
  size_t hs = p[6] == 1 ? 10 : 12;
  if (hs + hl > n) return snprintf(err, errn, "truncated npy header"), NULL;
  char *h = malloc(hl + 1);
  memcpy(h, p + hs, hl), h[hl] = 0;
  char descr[16] = {0};
  const char *d = strstr(h, "'descr': '"), *s = strstr(h, "'shape': (");
  if (d) sscanf(d + 10, "%15[^']", descr);
  DType dt = descr_dtype(descr);
  if (!d || !s || dt == DT_INVALID || strstr(h, "'fortran_order': True")) {
    free(h);
    return snprintf(err, errn, "unsupported npy header"), NULL;
  }
  int64_t shape[TENSOR_MAX_RANK];
  int nd = 0;
  for (const char *q = s + 10; *q && *q != ')';) {
    char *end;
    long long v = strtoll(q, &end, 10);
    if (end == q)
      q++;
    else if (nd < TENSOR_MAX_RANK)
      shape[nd++] = v, q = end;
  }
  free(h);
  RtTensor *t = rt_tensor_new(dt, nd, shape, err, errn);
  if (!t) return NULL;
  if (hs + hl + rt_tensor_nbytes(t) > n) {
    rt_tensor_release(t);
    return snprintf(err, errn, "truncated npy data"), NULL;
  }
  if (t->numel) memcpy(t->data, p + hs + hl, rt_tensor_nbytes(t));
  return t;
}

static void npy_write(FILE *f, const RtTensor *t) {
  char h[512];
  int k = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_descr[t->dtype]);
  for (int i = 0; i < t->ndim; i++)
    k += snprintf(h + k, sizeof h - (size_t)k, "%lld,%s", (long long)t->shape[i],
                  i + 1 < t->ndim ? " " : "");
  k += snprintf(h + k, sizeof h - (size_t)k, "), }");
  int total = 10 + k + 1, pad = (64 - total % 64) % 64;
  int hl = k + pad + 1;
  fprintf(f, "NPY %zu\n", (size_t)(10 + hl) + rt_tensor_nbytes(t));
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(hl & 255, f), fputc(hl >> 8, f);
  fwrite(h, 1, (size_t)k, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(t->data, 1, rt_tensor_nbytes(t), f);
}

/* Reads "<word> <rest>\n" for one of the n words (*which: its index); the
 * rest (malloc'd) into *rest. */
static bool read_line_of(const char *const *words, int n, int *which, char **rest) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t len = getline(&line, &cap, stdin);
  for (int w = 0; len >= 0 && w < n; w++) {
    size_t wl = strlen(words[w]);
    if (strncmp(line, words[w], wl) != 0 || (line[wl] != ' ' && line[wl] != '\n')) continue;
    if (len > 0 && line[len - 1] == '\n') line[len - 1] = 0;
    *rest = strdup(line[wl] ? line + wl + 1 : "");
    *which = w;
    free(line);
    return true;
  }
  free(line);
  return false;
}

static bool read_line(const char *word, char **rest) {
  int which;
  return read_line_of(&word, 1, &which, rest);
}

/* The attributes of `op(args, ATTRS)`, parsed into a's module arena. */
static const Attrs *parse_attrs(Module *m, DiagCtx *d, const char *op, int nin, bool tuple,
                                const char *attrs, char *err, size_t errn) {
  StrBuf b = {0};
  sb_puts(&b, "fn (");
  for (int i = 0; i < nin; i++) sb_printf(&b, "%s%%a%d", i ? ", " : "", i);
  sb_printf(&b, ") { %s(%s", op, tuple ? "(" : "");
  for (int i = 0; i < nin; i++) sb_printf(&b, "%s%%a%d", i ? ", " : "", i);
  if (tuple) sb_puts(&b, nin == 1 ? ",)" : ")");
  if (attrs[0]) sb_printf(&b, "%s%s", nin ? ", " : "", attrs);
  sb_puts(&b, ") }");
  uint32_t file = diag_add_source(d, "<case>", b.data, b.len);
  sb_free(&b);
  Expr *e = parse_expr(m, d, file, NULL);
  if (!e || e->kind != EX_FN || e->u.fn->body->kind != EX_CALL) {
    snprintf(err, errn, "cannot parse the attributes `%s`%s%s", attrs, d->n ? ": " : "",
             d->n ? d->items[0].msg : "");
    diag_clear(d);
    return NULL;
  }
  return e->u.fn->body->u.call.attrs;
}

/* One module and diagnostics context for the whole run; each case's nodes
 * are dropped after it (arena mark), its source text stays registered. */
static void run_case(KernelCtx *kx, Module *m, DiagCtx *d, const char *op, const char *attrs,
                     int nin, RtTensor **in) {
  ArenaMark mark = arena_mark(m->arena);
  char err[RT_ERR_LEN];
  int k = ops_lookup(op); /* the case names its op; the kernel is found by its index */
  const Attrs *at =
      parse_attrs(m, d, op, nin, ops_has_flag(k, OP_TUPLE_ARG), attrs, err, sizeof err);
  RtTensor *out[MAX_IO];
  int nout = 0;
  if (!at && attrs[0]) {
    printf("ERR %s\n", err);
  } else if (k < 0) {
    printf("ERR unknown op `%s`\n", op);
  } else if (!kernels_infer_and_run(kx, k, nin, in, at, MAX_IO, &nout, out)) {
    printf("ERR %s\n", kx->err);
  } else {
    printf("OK %d\n", nout);
    for (int i = 0; i < nout; i++) npy_write(stdout, out[i]), rt_tensor_release(out[i]);
  }
  diag_clear(d);
  arena_release(m->arena, mark);
}

/* ───────────────────────────── jit mode ───────────────────────────── */

typedef struct JitRun {
  Engine *e;
  DiagCtx *d;
  Arena arena; /* every case's module: the engine caches lowered definitions by
                  pointer, so nothing it saw is freed before the end */
  Module *base;
} JitRun;

static void jit_run_init(JitRun *j, DiagCtx *d) {
  EngineOptions o = engine_options_default();
  o.exec = EXEC_JIT;
  o.fp_contract = false;
  o.approx_math = false; /* each op's own rule: FastMath would turn exp into fast_exp */
  o.disk_cache = getenv("XDG_CACHE_HOME") != NULL; /* the tests' own cache dir only */
  if (o.disk_cache) snprintf(o.cache_dir, sizeof o.cache_dir, "%s/rly", getenv("XDG_CACHE_HOME"));
  j->d = d;
  j->e = engine_new(&o, d);
  arena_init(&j->arena);
  j->base = module_new(&j->arena);
}

static void jit_run_free(JitRun *j) {
  engine_free(j->e);
  module_free(j->base);
  arena_free(&j->arena);
}

/* The literal suffix of an integer or float dtype ("" for int32), or NULL. */
static const char *literal_suffix(DType dt) {
  static const char *const sfx[DT_COUNT] = {
      [DT_INT8] = "i8",     [DT_INT16] = "i16",  [DT_INT32] = "",      [DT_INT64] = "i64",
      [DT_UINT8] = "u8",    [DT_UINT16] = "u16", [DT_UINT32] = "u32",  [DT_UINT64] = "u64",
      [DT_FLOAT16] = "f16", [DT_FLOAT32] = "f",  [DT_FLOAT64] = "f64",
  };
  return dt >= 0 && dt < DT_COUNT ? sfx[dt] : NULL;
}

/* t's elements from flat index *k on, as nested lists from dim d. */
static void literal_dims(StrBuf *b, const RtTensor *t, int d, int64_t *k, const char *sfx) {
  if (d == t->ndim) {
    int64_t v = rt_get_i64(t, *k);
    if (dtype_is_float(t->dtype))
      sb_printf(b, "%.17g%s", rt_get_f64(t, *k), sfx);
    else if (t->dtype == DT_BOOL)
      sb_puts(b, v ? "True" : "False");
    else if (dtype_class(t->dtype) == 'u') /* uint64 above INT64_MAX is read as its bits */
      sb_printf(b, "%llu%s", (unsigned long long)v, sfx);
    else
      sb_printf(b, "%lld%s", (long long)v, sfx);
    ++*k;
    return;
  }
  sb_putc(b, '[');
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (i) sb_puts(b, ", ");
    literal_dims(b, t, d + 1, k, sfx);
  }
  sb_putc(b, ']');
}

/* A constant input as a tensor literal (`3i64`, `[[0, 1], [2, 3]]`). */
static void literal_text(StrBuf *b, const RtTensor *t) {
  const char *sfx = literal_suffix(t->dtype);
  int64_t k = 0;
  literal_dims(b, t, 0, &k, sfx ? sfx : "");
}

/* `def @k(%a0: T0, ...) { op(%a0, ..., attrs) }` with each input's type;
 * a constant input (cst[i]) is a literal in the call instead. */
static void case_text(StrBuf *b, const char *op, bool tuple, const char *attrs, int nin,
                      RtTensor **in, const bool *cst) {
  sb_puts(b, "def @k(");
  for (int i = 0, first = 1; i < nin; i++) {
    if (cst[i]) continue;
    sb_printf(b, "%s%%a%d: Tensor[(", first ? "" : ", ", i);
    first = 0;
    for (int d = 0; d < in[i]->ndim; d++)
      sb_printf(b, "%s%lld", d ? ", " : "", (long long)in[i]->shape[d]);
    sb_printf(b, "%s), %s]", in[i]->ndim == 1 ? "," : "", dtype_name(in[i]->dtype));
  }
  sb_printf(b, ") { %s(%s", op, tuple ? "(" : "");
  for (int i = 0; i < nin; i++) {
    if (i) sb_puts(b, ", ");
    if (cst[i])
      literal_text(b, in[i]);
    else
      sb_printf(b, "%%a%d", i);
  }
  if (tuple) sb_puts(b, nin == 1 ? ",)" : ")");
  if (attrs[0]) sb_printf(b, "%s%s", nin ? ", " : "", attrs);
  sb_puts(b, ") }");
}

static bool find_call_tir(void *ctx, Expr *e) {
  if (e->kind == EX_OP && ops_has_flag(e->u.op.index, OP_CALL_TIR)) *(bool *)ctx = true;
  return !*(bool *)ctx;
}

/* Does @k run compiled: does its lowered body call a prim function? */
static bool lowered(JitRun *j, Module *m) {
  Module *lm = engine_lowered(j->e, m, NULL);
  FuncDef *f = lm ? module_func(lm, "k") : NULL;
  bool found = false;
  if (f) expr_walk(f->fn->body, find_call_tir, &found);
  return found;
}

static bool find_fn(void *ctx, Expr *e) {
  if (e->kind == EX_FN && !*(Expr **)ctx) *(Expr **)ctx = e;
  return !*(Expr **)ctx;
}

/* Why @k does not lower: its fused function handed to the lowering alone
 * (the engine keeps the reason to itself). */
static const char *why_not_lowered(JitRun *j, Module *m) {
  FuseOptions o = fuse_options_default();
  o.need_compute = true;
  Function *f = fuse_function(&j->arena, m, module_func(m, "k")->fn, &o, NULL);
  Expr *prim = NULL;
  expr_walk(f->body, find_fn, &prim);
  if (!prim) return "not fused (no compute rule)";
  Lowerer *lw = lower_new(&j->arena, NULL, NULL);
  const char *why = "lowered alone";
  if (!lower_primitive(lw, prim->u.fn, &why) && !why) why = "no reason given";
  why = arena_strdup(&j->arena, why);
  lower_free(lw);
  return why;
}

/* `@k(%arg0, ...)` with each variable bound to its input (the inputs
 * that are not constants); *nvars: how many. */
static Expr *bound_call(JitRun *j, int nin, RtTensor **in, const bool *cst, Var **vars,
                        int *nvars) {
  Arena *a = &j->arena;
  Span none = {0};
  Expr **args = ARENA_ARRAY(a, Expr *, nin + 1);
  int n = 0;
  for (int k = 0; k < nin; k++) {
    if (cst[k]) continue;
    const RtTensor *t = in[k];
    Dim dims[TENSOR_MAX_RANK];
    for (int d = 0; d < t->ndim; d++) dims[d] = (Dim){.kind = DIM_CONST, .value = t->shape[d]};
    vars[n] = var_new(a, "arg", type_tensor(a, t->dtype, t->ndim, dims, none), none);
    args[n] = expr_var(a, vars[n], none);
    Interp *ip = engine_interp(j->e);
    interp_bind(ip, vars[n++], interp_value_tensor(ip, rt_tensor_retain(in[k])));
  }
  *nvars = n;
  return expr_call(a, expr_global(a, "k", none), n, args, NULL, none);
}

/* Writes the value's tensors as an OK reply; false when it is not made of tensors. */
static bool reply_value(const Value *v) {
  int n = v->kind == V_TENSOR ? 1 : v->kind == V_TUPLE ? v->u.tuple.n : -1;
  for (int i = 0; v->kind == V_TUPLE && i < n; i++)
    if (v->u.tuple.fields[i]->kind != V_TENSOR) n = -1;
  if (n < 0) return false;
  printf("OK %d\n", n);
  for (int i = 0; i < n; i++)
    npy_write(stdout, (v->kind == V_TENSOR ? v : v->u.tuple.fields[i])->u.tensor);
  return true;
}

static void reply_diag(DiagCtx *d, const char *what) {
  printf("ERR %s\n", d->n ? d->items[0].msg : what);
}

/* One case through the engine's jit mode (see the top of the file). */
static void run_case_jit(JitRun *j, const char *op, const char *attrs, int nin, RtTensor **in,
                         const bool *cst) {
  int k = ops_lookup(op);
  if (k < 0) {
    printf("ERR unknown op `%s`\n", op);
    return;
  }
  /* an empty tensor has no literal (`[]` names no dtype): it stays an input */
  bool lit[MAX_IO];
  for (int i = 0; i < nin; i++) lit[i] = cst[i] && in[i]->numel > 0;
  StrBuf b = {0};
  case_text(&b, op, ops_has_flag(k, OP_TUPLE_ARG), attrs, nin, in, lit);
  uint32_t file = diag_add_source(j->d, "<case>", b.data, b.len);
  sb_free(&b);
  ParseResult items;
  Module *m = engine_parse(j->e, j->base, &j->arena, file, 0, NULL, &items);
  if (!m) {
    reply_diag(j->d, "the case does not check");
  } else if (!lowered(j, m)) {
    printf("NOLOWER %s\n", why_not_lowered(j, m));
  } else {
    Var *vars[MAX_IO];
    int nvars = 0;
    Expr *call = bound_call(j, nin, in, lit, vars, &nvars);
    Value *v = ty_check_expr(m, call, j->d) ? engine_eval(j->e, m, call, NULL) : NULL;
    if (!v)
      reply_diag(j->d, "the call failed");
    else if (!reply_value(v))
      printf("ERR the result is not made of tensors\n");
    for (int i = 0; i < nvars; i++) engine_unbind(j->e, vars[i]);
  }
  diag_clear(j->d);
}

/* Reads one case's inputs (cst[i]: input i came as CONST); false at a
 * malformed case. */
static bool read_inputs(int nin, RtTensor **in, bool *cst, char *err, size_t errn) {
  for (int i = 0; i < nin; i++) {
    char *rest;
    static const char *const words[] = {"NPY", "CONST"};
    int which;
    if (!read_line_of(words, 2, &which, &rest))
      return snprintf(err, errn, "expected NPY or CONST"), false;
    cst[i] = which == 1;
    size_t n = strtoull(rest, NULL, 10);
    free(rest);
    unsigned char *buf = malloc(n ? n : 1);
    if (fread(buf, 1, n, stdin) != n) return free(buf), snprintf(err, errn, "short npy"), false;
    in[i] = npy_read(buf, n, err, errn);
    free(buf);
    if (!in[i]) return false;
  }
  return true;
}

/* `--ops`: one line per registered op: its name, whether it has a kernel
 * and whether it has a TIR compute rule. */
static int list_ops(void) {
  for (int i = 0; i < ops_count(); i++) {
    const OpDef *d = ops_get(i);
    printf("%s %d %d\n", d->name, kernels_get(i) != NULL, compute_rule(i) != NULL);
  }
  return 0;
}

/* Reads and runs cases until end of input (`--ops` lists the ops instead,
 * `--exec jit` compiles them); a malformed case ends the driver with status
 * 2, an op's error is an ERR reply and the driver goes on. */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--ops") == 0) return list_ops();
  bool jit = argc > 2 && strcmp(argv[1], "--exec") == 0 && strcmp(argv[2], "jit") == 0;
  KernelCtx kx;
  kernel_ctx_init(&kx);
  Arena arena;
  arena_init(&arena);
  Module *m = module_new(&arena);
  DiagCtx d;
  diag_init(&d);
  JitRun j = {0};
  if (jit) jit_run_init(&j, &d);
  char *op;
  while (read_line("CASE", &op)) {
    char *attrs, *nins, err[RT_ERR_LEN] = "";
    if (!read_line("ATTRS", &attrs)) return fprintf(stderr, "kernel_driver: expected ATTRS\n"), 2;
    if (!read_line("NIN", &nins)) return fprintf(stderr, "kernel_driver: expected NIN\n"), 2;
    int nin = atoi(nins);
    RtTensor *in[MAX_IO] = {0};
    bool cst[MAX_IO] = {0};
    if (nin < 0 || nin > MAX_IO || !read_inputs(nin, in, cst, err, sizeof err))
      return fprintf(stderr, "kernel_driver: bad case %s: %s\n", op, err), 2;
    if (jit)
      run_case_jit(&j, op, attrs, nin, in, cst);
    else
      run_case(&kx, m, &d, op, attrs, nin, in);
    for (int i = 0; i < nin; i++) rt_tensor_release(in[i]);
    free(op), free(attrs), free(nins);
    fflush(stdout);
  }
  if (jit) jit_run_free(&j);
  kernel_ctx_free(&kx);
  rt_cache_trim();
  diag_free(&d);
  strmap_free(&m->globals), strmap_free(&m->types), strmap_free(&m->ctors);
  arena_free(&arena);
  return 0;
}
