/* pass_equiv.c — equivalence of EffectToState, ToANormalForm and
 * ToBasicBlockNormalForm, tested on random programs.
 *
 * A generator (seeded splitmix64) writes well-typed programs with state:
 * defs calling each other (forward calls always, any call guarded by a
 * counter %n > 0, so recursion and mutual recursion end), ifs on bool
 * scalars computed from data, closures (called twice, passed to @apply,
 * recursive through their own let, returned by a def),
 * a match on an ADT, tuples, nested lets, nn.dropout_train / random.split /
 * random.uniform on @prng_state in the A1 style of seed 001, direct reads of
 * @prng_state, and a second state global @counter.  For each program and
 * each of several seeds:
 *   original   @main(X) with @prng_state = random.key(seed), @counter = 1f
 *              → value V, final states K, C
 *   EffectToState  @main(X, random.key(seed), 1f) → (V, K, C) exactly
 *   ToANormalForm, ToBasicBlockNormalForm, and each followed by
 *   EffectToState → the same V, K, C
 * Values are compared as printed by the interpreter (floats print
 * shortest-round-trip, so equal text is equal bits).  Every pass result must
 * also pass pass_verify.
 *
 * A second generator writes CNN-shaped programs for the inference passes
 * (cnn_* below): conv2d → batch_norm → relu blocks, dense, and the values of
 * @main before and after each pipeline of SimplifyInference, FoldConstant
 * and FoldScaleAxis, in both execution modes, within stated tolerances.
 *
 *   pass_equiv [NPROGRAMS [NSEEDS [FIRST [NCNN]]]]   (defaults 200 4 1 24)
 * prints "pass_equiv: N passed, N failed"; with -v the failing program. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "interp/interp.h"
#include "jit/jit.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "types/types.h"

/* ───────────────────────────── generator ───────────────────────────── */

typedef struct Gen {
  uint64_t s;
  StrBuf b;
  int ndefs, cur, id;
} Gen;

static uint64_t next(Gen *g) {
  uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int pick(Gen *g, int n) { return (int)(next(g) % (uint64_t)n); }

static const char *T4 = "Tensor[(4), float32]";

static void expr(Gen *g, const char *x, int depth);

static void gen_pure(Gen *g, const char *x) {
  switch (pick(g, 4)) {
    case 0:
      sb_printf(&g->b, "tanh(%%%s)", x);
      break;
    case 1:
      sb_printf(&g->b, "multiply(%%%s, 0.5f)", x);
      break;
    case 2:
      sb_printf(&g->b, "nn.relu(%%%s)", x);
      break;
    default:
      sb_printf(&g->b, "add(%%%s, %%%s)", x, x);
      break;
  }
}

static void gen_dropout(Gen *g, const char *x) {
  int k = g->id++;
  sb_printf(&g->b,
            "(let %%r%d = ref(@prng_state); let %%s%d = nn.dropout_train(%%%s, %%r%d^, rate=0.5f); "
            "%%r%d := %%s%d.1; %%s%d.0)",
            k, k, x, k, k, k, k);
}

static void gen_uniform(Gen *g, const char *x) {
  int k = g->id++;
  sb_printf(&g->b,
            "(let %%r%d = ref(@prng_state); let %%k%d = random.split(%%r%d^); %%r%d := %%k%d.0; "
            "add(%%%s, random.uniform(%%k%d.1, shape=[4], dtype=\"float32\")))",
            k, k, k, k, k, x, k);
}

static void gen_counter(Gen *g, const char *x) {
  int k = g->id++;
  sb_printf(&g->b, "(let %%c%d = ref(@counter); %%c%d := add(%%c%d^, 1f); add(%%%s, %%c%d^))", k, k,
            k, x, k);
}

static void gen_call(Gen *g, const char *x, bool guarded) {
  int j = guarded ? pick(g, g->ndefs) : g->cur + 1 + pick(g, g->ndefs - g->cur - 1);
  if (guarded)
    sb_printf(&g->b, "if (greater(%%n, 0)) { @f%d(%%%s, subtract(%%n, 1)) } else { %%%s }", j, x,
              x);
  else
    sb_printf(&g->b, "@f%d(%%%s, subtract(%%n, 1))", j, x);
}

static void gen_if(Gen *g, const char *x, int depth) {
  sb_printf(&g->b, "if (greater(sum(%%%s), 0f)) { ", x);
  expr(g, x, depth - 1);
  sb_puts(&g->b, " } else { ");
  expr(g, x, depth - 1);
  sb_puts(&g->b, " }");
}

static void gen_closure(Gen *g, const char *x, int depth) {
  int k = g->id++;
  char y[32];
  snprintf(y, sizeof y, "y%d", k);
  sb_printf(&g->b, "(let %%fn%d = fn (%%%s: %s) { ", k, y, T4);
  expr(g, y, depth - 1);
  if (pick(g, 2))
    sb_printf(&g->b, " }; %%fn%d(%%fn%d(%%%s)))", k, k, x);
  else
    sb_printf(&g->b, " }; @apply(%%fn%d, %%%s))", k, x);
}

/* A recursive closure: applies a body %i times. */
static void gen_rec_closure(Gen *g, const char *x, int depth) {
  int k = g->id++;
  char v[32];
  snprintf(v, sizeof v, "w%d", k);
  sb_printf(&g->b,
            "(let %%rf%d = fn (%%%s: %s, %%i%d: int32) -> %s { if (greater(%%i%d, 0)) { %%rf%d(", k,
            v, T4, k, T4, k, k);
  expr(g, v, depth - 1);
  sb_printf(&g->b, ", subtract(%%i%d, 1)) } else { %%%s } }; %%rf%d(%%%s, %d))", k, v, k, x,
            1 + pick(g, 2));
}

static void gen_match(Gen *g, const char *x, int depth) {
  int k = g->id++;
  char z[32];
  snprintf(z, sizeof z, "z%d", k);
  sb_printf(&g->b, "match (if (greater(sum(%%%s), 0f)) { SelA } else { SelB(%%%s) }) { SelA => ", x,
            x);
  expr(g, x, depth - 1);
  sb_printf(&g->b, ", SelB(%%%s) => ", z);
  expr(g, z, depth - 1);
  sb_puts(&g->b, " }");
}

static void gen_tuple(Gen *g, const char *x, int depth) {
  int k = g->id++;
  sb_printf(&g->b, "(let %%p%d = (%%%s, ", k, x);
  expr(g, x, depth - 1);
  sb_printf(&g->b, "); add(%%p%d.0, %%p%d.1))", k, k);
}

static void gen_nested(Gen *g, const char *x, int depth) {
  int k = g->id++;
  sb_printf(&g->b, "(let %%q%d = ", k);
  expr(g, x, depth - 1);
  sb_printf(&g->b, "; multiply(%%q%d, 0.5f))", k);
}

/* A Tensor[(4), float32] expression over %x. */
static void expr(Gen *g, const char *x, int depth) {
  int n = depth <= 0 ? 6 : 18;
  switch (pick(g, n)) {
    case 0:
    case 1:
      gen_pure(g, x);
      return;
    case 2:
      gen_dropout(g, x);
      return;
    case 3:
      gen_uniform(g, x);
      return;
    case 4:
      gen_counter(g, x);
      return;
    case 5:
      sb_printf(&g->b, "add(%%%s, random.normal(@prng_state, shape=[4], dtype=\"float32\"))", x);
      return;
    case 6:
      gen_call(g, x, true);
      return;
    case 7:
      if (g->cur + 1 < g->ndefs)
        gen_call(g, x, false);
      else
        gen_call(g, x, true);
      return;
    case 8:
      gen_if(g, x, depth);
      return;
    case 9:
      gen_closure(g, x, depth);
      return;
    case 10:
      gen_match(g, x, depth);
      return;
    case 11:
      gen_tuple(g, x, depth);
      return;
    case 12:
      gen_nested(g, x, depth);
      return;
    case 13:
      sb_printf(&g->b, "@apply(@g%d, %%%s)", pick(g, 2), x);
      return;
    case 15: /* two effects as operands: evaluation order matters */
      sb_puts(&g->b, "add(");
      expr(g, x, depth - 1);
      sb_puts(&g->b, ", ");
      expr(g, x, depth - 1);
      sb_puts(&g->b, ")");
      return;
    case 14:
      if (pick(g, 2))
        gen_rec_closure(g, x, depth);
      else
        sb_printf(&g->b, "@scale(%s)(%%%s)", pick(g, 2) ? "0.5f" : "2f", x);
      return;
    default:
      gen_pure(g, x);
      return;
  }
}

static void gen_def(Gen *g, int i) {
  g->cur = i;
  sb_printf(&g->b, "def @f%d(%%x: %s, %%n: int32) -> %s {\n", i, T4, T4);
  int nstmt = 1 + pick(g, 4);
  char prev[32] = "x";
  for (int s = 0; s < nstmt; s++) {
    int k = g->id++;
    sb_printf(&g->b, "  let %%v%d = ", k);
    expr(g, prev, 2);
    sb_puts(&g->b, ";\n");
    snprintf(prev, sizeof prev, "v%d", k);
  }
  sb_printf(&g->b, "  %%%s\n}\n\n", prev);
}

static const char *prologue =
    "global @counter: float32 = 1f;\n"
    "type Sel { SelA, SelB(Tensor[(4), float32]) }\n"
    "def @apply(%f: fn (Tensor[(4), float32]) -> Tensor[(4), float32], %x: Tensor[(4), float32]) "
    "{\n"
    "  %f(%x)\n}\n"
    "def @g0(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
    "  %0 = ref(@prng_state);\n  %1 = nn.dropout_train(%x, %0^, rate=0.25f);\n"
    "  %0 := %1.1;\n  %1.0\n}\n"
    "def @g1(%x: Tensor[(4), float32]) -> Tensor[(4), float32] { multiply(%x, 3f) }\n"
    "def @scale(%s: float32) -> fn (Tensor[(4), float32]) -> Tensor[(4), float32] {\n"
    "  fn (%y: Tensor[(4), float32]) {\n"
    "    let %r = ref(@prng_state);\n"
    "    let %d = nn.dropout_train(multiply(%y, %s), %r^, rate=0.5f);\n"
    "    %r := %d.1;\n"
    "    %d.0\n"
    "  }\n"
    "}\n\n";

static char *generate(uint64_t seed) {
  Gen g = {.s = seed * 0x2545f4914f6cdd1dull + 7};
  g.ndefs = 1 + pick(&g, 5);
  sb_puts(&g.b, prologue);
  for (int i = 0; i < g.ndefs; i++) gen_def(&g, i);
  sb_printf(&g.b, "def @main(%%x: %s) {\n  @f0(%%x, %d)\n}\n", T4, 1 + pick(&g, 3));
  return sb_take(&g.b);
}

/* ───────────────────────────── running ───────────────────────────── */

typedef struct Outcome {
  char *value, *key, *counter; /* malloc'd texts; NULL: failed */
} Outcome;

static void outcome_free(Outcome *o) {
  free(o->value);
  free(o->key);
  free(o->counter);
  memset(o, 0, sizeof *o);
}

static Value *eval_text(Interp *in, Module *m, DiagCtx *d, const char *text) {
  uint32_t f = diag_add_source(d, "<equiv>", text, strlen(text));
  Expr *e = parse_expr(m, d, f, NULL);
  if (!e || !ty_check_expr(m, e, d)) return NULL;
  return interp_eval(in, m, e);
}

static const char *X = "[0.5f, -1f, 2f, 0.25f]";

/* The original: states through the globals. */
static bool run_global(Module *m, DiagCtx *d, uint64_t seed, Outcome *o) {
  Interp *in = interp_new(d);
  char buf[256];
  snprintf(buf, sizeof buf, "ref_write(ref(@prng_state), random.key(%" PRIu64 "i64))", seed);
  bool ok = eval_text(in, m, d, buf) && eval_text(in, m, d, "ref_write(ref(@counter), 1f)");
  snprintf(buf, sizeof buf, "@main(%s)", X);
  Value *v = ok ? eval_text(in, m, d, buf) : NULL;
  if (v) o->value = interp_format(in, v);
  if (v && (v = eval_text(in, m, d, "@prng_state"))) o->key = interp_format(in, v);
  if (v && (v = eval_text(in, m, d, "@counter"))) o->counter = interp_format(in, v);
  interp_free(in);
  return o->counter != NULL;
}

/* After EffectToState: @main(X, states...) → (value, states...) for the
 * states @main threads (a state it does not thread keeps its start value). */
static bool run_threaded(Module *m, DiagCtx *d, uint64_t seed, Outcome *o) {
  Interp *in = interp_new(d);
  const Function *fn = module_func(m, "main")->fn;
  StrBuf call = {0};
  sb_printf(&call, "@main(%s", X);
  int which[2] = {-1, -1}; /* field of the result holding the key / the counter */
  for (int i = 1; i < fn->nparams; i++) {
    bool key = fn->params[i]->annot && fn->params[i]->annot->kind == TY_RANDSTATE;
    which[key ? 0 : 1] = i;
    if (key)
      sb_printf(&call, ", random.key(%" PRIu64 "i64)", seed);
    else
      sb_puts(&call, ", 1f");
  }
  sb_puts(&call, ")");
  Value *v = eval_text(in, m, d, call.data);
  sb_free(&call);
  bool tuple = fn->nparams > 1;
  bool ok = v && (!tuple || (v->kind == V_TUPLE && v->u.tuple.n == fn->nparams));
  if (ok) {
    char buf[64];
    o->value = interp_format(in, tuple ? v->u.tuple.fields[0] : v);
    snprintf(buf, sizeof buf, "random.wrap_key([%uu32, %uu32])", (unsigned)(seed >> 32),
             (unsigned)seed);
    o->key = which[0] > 0 ? interp_format(in, v->u.tuple.fields[which[0]]) : strdup(buf);
    o->counter = which[1] > 0 ? interp_format(in, v->u.tuple.fields[which[1]]) : strdup("1f");
  }
  interp_free(in);
  return ok;
}

static bool same(const Outcome *a, const Outcome *b) {
  return a->value && b->value && strcmp(a->value, b->value) == 0 && strcmp(a->key, b->key) == 0 &&
         strcmp(a->counter, b->counter) == 0;
}

typedef struct Variant {
  const char *passes;
  bool threaded; /* ends with EffectToState */
} Variant;

static const Variant variants[] = {
    {"EffectToState", true},
    {"ToANormalForm", false},
    {"ToBasicBlockNormalForm", false},
    {"ToANormalForm,EffectToState", true},
    {"ToBasicBlockNormalForm,EffectToState", true},
    {"EffectToState,ToANormalForm", true},
};
enum { NVARIANTS = sizeof variants / sizeof variants[0] };

static int verbose;
static int npassed, nfailed;

static void report_failure(const char *what, const char *prog, const Variant *v, uint64_t seed,
                           const Outcome *want, const Outcome *got, DiagCtx *d) {
  nfailed++;
  fprintf(stderr, "pass_equiv: %s [%s] seed %" PRIu64 "\n", what, v ? v->passes : "-", seed);
  if (want && got) {
    fprintf(stderr, "  want %s | %s | %s\n  got  %s | %s | %s\n", want->value, want->key,
            want->counter, got->value ? got->value : "?", got->key ? got->key : "?",
            got->counter ? got->counter : "?");
  }
  diag_render(d, stderr, 0, false);
  if (verbose) fprintf(stderr, "%s\n", prog);
}

/* Runs every variant's passes (verified); false after a report. */
static bool make_variants(Module *m, Arena *a, DiagCtx *d, const char *prog, uint64_t pseed,
                          Module **out) {
  for (int v = 0; v < NVARIANTS; v++) {
    PassOptions opt = pass_options_default();
    opt.verify = true;
    PassResult r;
    bool ok = pass_pipeline(variants[v].passes, m, a, d, &opt, &r);
    out[v] = r.module;
    pass_result_free(&r);
    if (!ok) {
      report_failure("pass failed", prog, &variants[v], pseed, NULL, NULL, d);
      return false;
    }
  }
  return true;
}

/* One seed: the original's outcome against every variant's. */
static bool check_seed(Module *m, Module **out, DiagCtx *d, const char *prog, uint64_t seed) {
  Outcome want = {0};
  bool ok = run_global(m, d, seed, &want);
  if (!ok) report_failure("original did not run", prog, NULL, seed, NULL, NULL, d);
  for (int v = 0; v < NVARIANTS && ok; v++) {
    Outcome got = {0};
    size_t mark = d->n;
    bool ran = variants[v].threaded ? run_threaded(out[v], d, seed, &got)
                                    : run_global(out[v], d, seed, &got);
    if (ran && same(&want, &got) && d->n == mark)
      npassed++;
    else
      report_failure("different result", prog, &variants[v], seed, &want, &got, d);
    outcome_free(&got);
  }
  outcome_free(&want);
  diag_clear(d);
  return ok;
}

/* One program: the original against every variant, for every seed. */
static void check_program(uint64_t pseed, int nseeds) {
  char *prog = generate(pseed);
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Module *m = module_new(&a);
  Module *out[NVARIANTS] = {0};
  uint32_t f = diag_add_source(&d, "<generated>", prog, strlen(prog));
  bool ok = parse_module(m, &d, f) && ty_check_module(m, &d);
  if (!ok) report_failure("generated program rejected", prog, NULL, pseed, NULL, NULL, &d);
  ok = ok && make_variants(m, &a, &d, prog, pseed, out);
  for (int s = 0; s < nseeds && ok; s++)
    ok = check_seed(m, out, &d, prog, pseed * 1000 + (uint64_t)s);
  for (int v = 0; v < NVARIANTS; v++) module_free(out[v]);
  module_free(m);
  arena_free(&a);
  diag_free(&d);
  free(prog);
}

/* ───────────────────────────── CNN programs ───────────────────────────── */

/* Random float32 literals in [lo, hi), as exact text ("%.9g" reads back to
 * the same float). */
static double uniform(Gen *g, double lo, double hi) {
  return lo + (hi - lo) * (double)(next(g) >> 11) / 9007199254740992.0;
}

static void put_float(Gen *g, double v) { sb_printf(&g->b, "%.9gf", (double)(float)v); }

/* A tensor literal of the given shape with elements in [lo, hi). */
static void put_tensor(Gen *g, int ndim, const int *shape, double lo, double hi) {
  if (ndim == 0) {
    put_float(g, uniform(g, lo, hi));
    return;
  }
  sb_putc(&g->b, '[');
  for (int i = 0; i < shape[0]; i++) {
    if (i) sb_puts(&g->b, ", ");
    put_tensor(g, ndim - 1, shape + 1, lo, hi);
  }
  sb_putc(&g->b, ']');
}

static void put_vector(Gen *g, int n, double lo, double hi) { put_tensor(g, 1, &n, lo, hi); }

typedef struct Cnn {
  Gen g;
  int n, c, h, w; /* the current activation's shape (NCHW) */
  int id;
  bool scaled_input; /* the activation is the input's scale (used once, so it folds) */
} Cnn;

/* `%K = nn.batch_norm(x, ...);` with random statistics; the result is
 * %K.0 (written to out). */
static void cnn_batch_norm(Cnn *c, const char *x, int channels, int axis, char *out) {
  Gen *g = &c->g;
  int k = c->id++;
  sb_printf(&g->b, "  %%%d = nn.batch_norm(%s, ", k, x);
  put_vector(g, channels, 0.5, 1.5); /* gamma */
  sb_puts(&g->b, ", ");
  put_vector(g, channels, -1, 1); /* beta */
  sb_puts(&g->b, ", ");
  put_vector(g, channels, -1, 1); /* moving mean */
  sb_puts(&g->b, ", ");
  put_vector(g, channels, 0.5, 2); /* moving var */
  sb_printf(&g->b, ", axis=%d", axis);
  if (pick(g, 2)) sb_puts(&g->b, ", epsilon=0.001f");
  if (!pick(g, 4)) sb_puts(&g->b, ", center=False");
  if (!pick(g, 4)) sb_puts(&g->b, ", scale=False");
  sb_puts(&g->b, ");\n");
  sprintf(out, "%%%d.0", k);
}

/* One block on the activation `x`: conv2d (1x1 or 3x3, stride 1 or 2,
 * maybe depthwise, maybe with a bias), batch_norm, relu, maybe a dropout
 * and a residual add.  The block's result is written to x. */
static void cnn_block(Cnn *c, char *x) {
  Gen *g = &c->g;
  int k3 = pick(g, 2), stride = 1 + (c->h > 3 && !pick(g, 3)), pad = k3;
  bool depthwise = c->c > 1 && !pick(g, 4);
  int co = depthwise ? c->c : 1 + pick(g, 4), ks = k3 ? 3 : 1;
  int wshape[4] = {co, depthwise ? 1 : c->c, ks, ks};
  int k = c->id++;
  sb_printf(&g->b, "  %%%d = nn.conv2d(%s, ", k, x);
  put_tensor(g, 4, wshape, -1, 1);
  sb_printf(&g->b, ", strides=[%d, %d], padding=[%d, %d, %d, %d]", stride, stride, pad, pad, pad,
            pad);
  if (depthwise) sb_printf(&g->b, ", groups=%d", co);
  sb_printf(&g->b, ", channels=%d, kernel_size=[%d, %d]);\n", co, ks, ks);
  char y[64];
  sprintf(y, "%%%d", k);
  if (!pick(g, 3)) {
    int b = c->id++;
    sb_printf(&g->b, "  %%%d = nn.bias_add(%s, ", b, y);
    put_vector(g, co, -1, 1);
    sb_puts(&g->b, ");\n");
    sprintf(y, "%%%d", b);
  }
  char bn[64];
  cnn_batch_norm(c, y, co, 1, bn);
  bool residual = co == c->c && stride == 1 && !c->scaled_input && !pick(g, 2);
  int r = c->id++;
  sb_printf(&g->b, "  %%%d = nn.relu(%s);\n", r, bn);
  if (residual) {
    int a = c->id++;
    sb_printf(&g->b, "  %%%d = nn.relu(add(%%%d, %s));\n", a, r, x), r = a;
  }
  if (!pick(g, 4)) {
    int d = c->id++;
    sb_printf(&g->b, "  %%%d = nn.dropout(%%%d);\n", d, r);
    sprintf(x, "%%%d.0", d);
  } else {
    sprintf(x, "%%%d", r);
  }
  c->c = co, c->h = (c->h + 2 * pad - ks) / stride + 1, c->w = (c->w + 2 * pad - ks) / stride + 1;
  c->scaled_input = false;
}

/* @main(%x): an input scale, 1 to 3 blocks, global pooling, dense, a 1-D
 * batch_norm and a relu.  *call gets a call of @main on random data. */
static char *cnn_generate(uint64_t seed, char **call) {
  Cnn c = {.g = {.s = seed * 0x9e3779b97f4a7c15ull + 11}};
  Gen *g = &c.g;
  c.n = 1 + pick(g, 2), c.c = 1 + pick(g, 3), c.h = 3 + pick(g, 4), c.w = 3 + pick(g, 4);
  int xshape[4] = {c.n, c.c, c.h, c.w};
  sb_printf(&g->b, "def @main(%%x: Tensor[(%d, %d, %d, %d), float32]) {\n", c.n, c.c, c.h, c.w);
  char x[64] = "%x";
  if (pick(g, 2)) { /* a positive per-channel input scale (FoldScaleAxis forward) */
    sb_printf(&g->b, "  %%%d = multiply(%%x, ", c.id);
    int sshape[3] = {c.c, 1, 1};
    put_tensor(g, 3, sshape, 0.5, 2);
    sb_puts(&g->b, ");\n");
    sprintf(x, "%%%d", c.id++);
    c.scaled_input = true;
  }
  for (int nb = 1 + pick(g, 3); nb > 0; nb--) cnn_block(&c, x);
  int units = 2 + pick(g, 4), wshape[2] = {units, c.c}, k = c.id++;
  sb_printf(&g->b, "  %%%d = nn.batch_flatten(nn.global_avg_pool2d(%s));\n", k, x);
  sb_printf(&g->b, "  %%%d = nn.dense(%%%d, ", k + 1, k);
  c.id++;
  put_tensor(g, 2, wshape, -1, 1);
  sb_puts(&g->b, ");\n");
  char d[64], bn[64];
  sprintf(d, "%%%d", k + 1);
  cnn_batch_norm(&c, d, units, 1, bn);
  sb_printf(&g->b, "  nn.relu(%s)\n}\n", bn);
  char *prog = sb_take(&g->b); /* then the input's values, from the same stream */
  sb_puts(&g->b, "@main(");
  put_tensor(g, 4, xshape, -2, 2);
  sb_puts(&g->b, ")");
  *call = sb_take(&g->b);
  return prog;
}

/* The pipelines checked, and whether all their multiplies and
 * normalizations are gone at the end (every scale in these programs can
 * be folded). */
typedef struct CnnVariant {
  const char *passes;
  bool folded;
} CnnVariant;

static const CnnVariant cnn_variants[] = {
    {"SimplifyInference", false},
    {"FoldConstant", false},
    {"SimplifyInference,FoldConstant", false},
    {"SimplifyInference,FoldConstant,FoldScaleAxis", false},
    {"SimplifyInference,FoldConstant,FoldScaleAxis,FoldConstant", true},
    {"SimplifyInference,FoldScaleAxis,FoldConstant", true},
};
enum { NCNN_VARIANTS = sizeof cnn_variants / sizeof cnn_variants[0] };

/* Tolerances: each element within CNN_RTOL of the reference (interp mode,
 * the program as written: batch_norm's kernel computes in float64) plus
 * CNN_ATOL times the largest magnitude of the output (folding reorders the
 * float32 roundings of scale and shift, and jit mode fuses and contracts).
 * Over 200 programs the largest error seen was about a tenth of this. */
#define CNN_RTOL 2e-5
#define CNN_ATOL 2e-6

enum { CNN_MAXV = 64 };

/* @main's values (a tensor), evaluated by engine e in its mode; the count
 * or -1 after diagnostics. */
static int cnn_eval(Engine *e, Module *m, DiagCtx *d, const char *call, double *out) {
  uint32_t f = diag_add_source(d, "<cnn call>", call, strlen(call));
  Expr *x = parse_expr(m, d, f, NULL);
  Value *v = x && ty_check_expr(m, x, d) ? engine_eval(e, m, x, NULL) : NULL;
  if (!v || v->kind != V_TENSOR || v->u.tensor->numel > CNN_MAXV) return -1;
  for (int64_t i = 0; i < v->u.tensor->numel; i++) out[i] = rt_get_f64(v->u.tensor, i);
  return (int)v->u.tensor->numel;
}

static bool cnn_close(const double *want, const double *got, int n, double *worst) {
  double scale = 0;
  for (int i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
  bool ok = true;
  for (int i = 0; i < n; i++) {
    double err = fabs(want[i] - got[i]), tol = CNN_RTOL * fabs(want[i]) + CNN_ATOL * scale;
    *worst = fmax(*worst, err / (tol > 0 ? tol : 1));
    ok &= err <= tol;
  }
  return ok;
}

static bool has_text(const Module *m, const char *needle) {
  char *t = print_module(m, (PrintOptions){0});
  bool has = strstr(t, needle) != NULL;
  free(t);
  return has;
}

static double cnn_worst; /* the largest error seen, in units of the tolerance */

/* One variant of one program in both modes against the reference. */
static void cnn_check_variant(Module *m, Arena *a, DiagCtx *d, Engine **eng, const char *prog,
                              const char *call, const double *want, int n, int v) {
  PassOptions opt = pass_options_default();
  opt.verify = true;
  PassResult r;
  bool ok = pass_pipeline(cnn_variants[v].passes, m, a, d, &opt, &r);
  Module *out = r.module;
  pass_result_free(&r);
  if (ok && cnn_variants[v].folded && (has_text(out, "batch_norm") || has_text(out, "multiply")))
    ok = false,
    fprintf(stderr, "pass_equiv: cnn [%s]: not everything folded\n", cnn_variants[v].passes);
  for (int mode = 0; ok && mode < 2; mode++) {
    double got[CNN_MAXV];
    int k = cnn_eval(eng[mode], out, d, call, got);
    if (k == n && cnn_close(want, got, n, &cnn_worst)) {
      npassed++;
      continue;
    }
    fprintf(stderr, "pass_equiv: cnn [%s] %s mode: different values\n", cnn_variants[v].passes,
            mode ? "jit" : "interp");
    for (int i = 0; i < n && i < k; i++) fprintf(stderr, "  %.9g vs %.9g\n", want[i], got[i]);
    ok = false;
  }
  if (!ok) {
    nfailed++;
    diag_render(d, stderr, 0, false);
    if (verbose) fprintf(stderr, "%s\n", prog);
  }
  if (out && out != m) module_free(out);
  diag_clear(d);
}

/* Engines for interp and jit mode (no disk cache, one thread), shared by
 * the programs (an engine and the JIT cache what they ran by node address,
 * so every program's IR lives until the engines go). */
static void cnn_engines(Engine **eng, DiagCtx *d, bool make) {
  for (int mode = 0; mode < 2; mode++) {
    if (!make) {
      engine_free(eng[mode]);
      continue;
    }
    EngineOptions o = engine_options_default();
    o.exec = mode ? EXEC_JIT : EXEC_INTERP;
    o.disk_cache = false;
    o.threads = 1;
    eng[mode] = engine_new(&o, d);
  }
}

/* One CNN program (its IR in a, diagnostics in d): the reference, then
 * every variant in both modes. */
static void cnn_check_program(uint64_t seed, Engine **eng, Arena *a, DiagCtx *d) {
  char *call;
  char *prog = cnn_generate(seed, &call);
  Module *m = module_new(a);
  double want[CNN_MAXV];
  uint32_t f = diag_add_source(d, "<cnn>", prog, strlen(prog));
  bool ok = parse_module(m, d, f) && ty_check_module(m, d);
  int n = ok ? cnn_eval(eng[0], m, d, call, want) : -1;
  if (n <= 0) {
    nfailed++;
    fprintf(stderr, "pass_equiv: cnn program %" PRIu64 " did not run\n", seed);
    diag_render(d, stderr, 0, false);
    if (verbose) fprintf(stderr, "%s\n", prog);
  }
  for (int v = 0; n > 0 && v < NCNN_VARIANTS; v++)
    cnn_check_variant(m, a, d, eng, prog, call, want, n, v);
  module_free(m);
  free(prog);
  free(call);
}

static void cnn_check(uint64_t first, int count) {
  DiagCtx d;
  diag_init(&d);
  Arena a;
  arena_init(&a);
  Engine *eng[2];
  cnn_engines(eng, &d, true);
  for (int i = 0; i < count; i++) cnn_check_program(first + (uint64_t)i, eng, &a, &d);
  if (count && jit_module_found() && jit_kernel_count() == 0) {
    nfailed++;
    fprintf(stderr, "pass_equiv: cnn: jit mode compiled no kernel\n");
  }
  cnn_engines(eng, &d, false);
  arena_free(&a);
  diag_free(&d);
  printf("pass_equiv: cnn: %d programs, largest error %.3g of the tolerance\n", count, cnn_worst);
}

int main(int argc, char **argv) {
  int argi = 1;
  if (argi < argc && strcmp(argv[argi], "-v") == 0) verbose = 1, argi++;
  int nprog = argi < argc ? atoi(argv[argi++]) : 200;
  int nseeds = argi < argc ? atoi(argv[argi++]) : 4;
  uint64_t first = argi < argc ? strtoull(argv[argi++], NULL, 10) : 1;
  int ncnn = argi < argc ? atoi(argv[argi++]) : 24;
  if (getenv("PASS_EQUIV_PRINT")) {
    char *call = NULL;
    char *p = strcmp(getenv("PASS_EQUIV_PRINT"), "cnn") == 0 ? cnn_generate(first, &call)
                                                             : generate(first);
    fputs(p, stdout);
    if (call) printf("%s\n", call);
    free(p);
    free(call);
    return 0;
  }
  for (int i = 0; i < nprog; i++) check_program(first + (uint64_t)i, nseeds);
  cnn_check(first, ncnn);
  printf("pass_equiv: %d passed, %d failed\n", npassed, nfailed);
  return nfailed != 0;
}
