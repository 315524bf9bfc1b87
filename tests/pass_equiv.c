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
 *   pass_equiv [NPROGRAMS [NSEEDS [FIRST]]]   (defaults 200 4 1)
 * prints "pass_equiv: N passed, N failed"; with -v the failing program. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "passes/passes.h"

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

int main(int argc, char **argv) {
  int argi = 1;
  if (argi < argc && strcmp(argv[argi], "-v") == 0) verbose = 1, argi++;
  int nprog = argi < argc ? atoi(argv[argi++]) : 200;
  int nseeds = argi < argc ? atoi(argv[argi++]) : 4;
  uint64_t first = argi < argc ? strtoull(argv[argi++], NULL, 10) : 1;
  if (getenv("PASS_EQUIV_PRINT")) {
    char *p = generate(first);
    fputs(p, stdout);
    free(p);
    return 0;
  }
  for (int i = 0; i < nprog; i++) check_program(first + (uint64_t)i, nseeds);
  printf("pass_equiv: %d passed, %d failed\n", npassed, nfailed);
  return nfailed != 0;
}
