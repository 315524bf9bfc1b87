/* test_passes.c — unit tests of the pass manager (passes/pass.h) and its
 * passes: EffectToState on the seed 001 programs (exact printed output and
 * alpha-equivalence with the seed's own rewritten text), on closures,
 * recursion, match and a second global; ToANormalForm and
 * ToBasicBlockNormalForm on small programs; key linearity; the manager's
 * lookup, diff, hook (stop), scopes, rewrite formatting and verifier; and
 * million-binding chains on a 1 MiB stack. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "tests/unit/check.h"
#include "tests/unit/harness.h"
#include "types/types.h"

typedef struct Run {
  Arena arena;
  DiagCtx d;
  Module *m;   /* the input */
  Module *out; /* after the passes, or NULL */
  char *diff;
  bool ok;
} Run;

/* Parses and checks src, then runs `passes` (a comma list; NULL: none). */
static Run *run(const char *src, const char *passes) {
  Run *r = calloc(1, sizeof *r);
  arena_init(&r->arena);
  diag_init(&r->d);
  uint32_t f = diag_add_source(&r->d, "t.rly", src, strlen(src));
  r->m = module_new(&r->arena);
  if (!parse_script(r->m, &r->d, f, NULL).ok || !ty_check_module(r->m, &r->d)) {
    fprintf(stderr, "input rejected:\n%s\n", src);
    diag_render(&r->d, stderr, 0, false);
    return r;
  }
  if (!passes) return r->ok = true, r;
  PassOptions opt = pass_options_default();
  opt.verify = true;
  PassResult pr;
  r->ok = pass_pipeline(passes, r->m, &r->arena, &r->d, &opt, &pr);
  r->out = pr.module;
  r->diff = pr.diff ? strdup(pr.diff) : NULL;
  pass_result_free(&pr);
  return r;
}

static void done(Run *r) {
  if (r->out) module_free(r->out);
  module_free(r->m);
  free(r->diff);
  diag_free(&r->d);
  arena_free(&r->arena);
  free(r);
}

/* The printed def @name of m (static buffer). */
static const char *def_text(Module *m, const char *name) {
  static char buf[8192];
  FuncDef *f = m ? module_func(m, name) : NULL;
  if (!f) return "(none)";
  StrBuf b = {0};
  PrintOptions opt = {0};
  print_func_def_to(&b, m, f, opt);
  while (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = 0;
  snprintf(buf, sizeof buf, "%s", b.data);
  sb_free(&b);
  return buf;
}

/* "line:col: message" of the i-th diagnostic of a level (static buffer). */
static const char *diag_at(Run *r, DiagLevel level, int i) {
  return diag_at_level(&r->d, level, i);
}

/* print → parse → print is a fixed point for the pass output. */
static bool round_trips(Module *m) {
  PrintOptions opt = {.header = true};
  char *p1 = print_module(m, opt);
  Arena a;
  arena_init(&a);
  DiagCtx d;
  diag_init(&d);
  Module *m2 = module_new(&a);
  bool ok = parse_module(m2, &d, diag_add_source(&d, "p1", p1, strlen(p1)));
  char *p2 = ok ? print_module(m2, opt) : NULL;
  ok = ok && strcmp(p1, p2) == 0;
  if (!ok) fprintf(stderr, "round trip failed:\n%s\n---\n%s\n", p1, p2 ? p2 : "(parse error)");
  free(p1);
  free(p2);
  module_free(m2);
  diag_free(&d);
  arena_free(&a);
  return ok;
}

/* Counts EX_GLOBAL nodes naming a state global in every def. */
typedef struct StateRefs {
  Module *m;
  int n;
} StateRefs;

static bool count_state(void *ctx, Expr *e) {
  StateRefs *s = ctx;
  if (e->kind == EX_GLOBAL && module_state_global(s->m, e->u.global.name)) s->n++;
  return true;
}

static int state_refs(Module *m) {
  StateRefs s = {m, 0};
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i].kind == DEF_FUNC) expr_walk(m->defs[i].u.func->fn->body, count_state, &s);
  return s.n;
}

/* ───────────────────────────── EffectToState ───────────────────────────── */

static const char *seed001 =
    "def @func1(%x: Tensor[(4), float32]) {\n"
    "  %0 = ref(@prng_state);\n"
    "  %1 = %0^;\n"
    "  %2 = nn.dropout_train(%x, %1, rate=0.7f);\n"
    "  %3 = %2.1;\n"
    "  let %ref_write: () = (%0 := %3);\n"
    "  %2.0\n"
    "}\n"
    "def @long_func(%x: Tensor[(4), float32]) {\n"
    "  %0 = ref(@prng_state);\n"
    "  %1 = %0^;\n"
    "  %2 = nn.dropout_train(%x, %1, rate=0.7f);\n"
    "  %3 = %2.1;\n"
    "  %4 = (\n"
    "    let %ref_write1: () = (%0 := %3);\n"
    "    %2.0\n"
    "  );\n"
    "  %5 = %0^;\n"
    "  %6 = nn.dropout_train(%4, %5, rate=0.1f);\n"
    "  %7 = %6.1;\n"
    "  let %ref_write: () = (%0 := %7);\n"
    "  %6.0\n"
    "}\n"
    "def @func2(%c: bool, %x: Tensor[(4), float32], %y: Tensor[(4), float32]) {\n"
    "  if (%c) {\n"
    "    add(%x, %y)\n"
    "  } else {\n"
    "    @func1(%y)\n"
    "  }\n"
    "}\n";

/* The seed's rewritten programs (its `(%6.1, %6.0)` slip fixed). */
static const char *seed001_expected =
    "def @func1(%x: Tensor[(4), float32], %state: RandState) {\n"
    "  %2 = nn.dropout_train(%x, %state, rate=0.7f);\n"
    "  (%2.0, %2.1)\n"
    "}\n"
    "def @long_func(%x: Tensor[(4), float32], %state: RandState) {\n"
    "  %2 = nn.dropout_train(%x, %state, rate=0.7f);\n"
    "  %3 = %2.1;\n"
    "  %4 = %2.0;\n"
    "  %6 = nn.dropout_train(%4, %3, rate=0.1f);\n"
    "  (%6.0, %6.1)\n"
    "}\n"
    "def @func2(%c: bool, %x: Tensor[(4), float32], %y: Tensor[(4), float32], %state: RandState) "
    "{\n"
    "  if (%c) {\n"
    "    (add(%x, %y), %state)\n"
    "  } else {\n"
    "    @func1(%y, %state)\n"
    "  }\n"
    "}\n";

/* EffectToState on seed 001: exact output, alpha-equal to the seed's text, input untouched. */
static void test_seed001(void) {
  Run *r = run(seed001, "EffectToState");
  CHECK(r->ok);
  if (!r->ok) {
    done(r);
    return;
  }
  CHECK_STREQ(def_text(r->out, "func1"),
              "def @func1(%x: Tensor[(4), float32], %state: RandState) {\n"
              "  %0 = nn.dropout_train(%x, %state, rate=0.7f);\n"
              "  (%0.0, %0.1)\n"
              "}");
  CHECK_STREQ(def_text(r->out, "long_func"),
              "def @long_func(%x: Tensor[(4), float32], %state: RandState) {\n"
              "  %0 = nn.dropout_train(%x, %state, rate=0.7f);\n"
              "  %1 = %0.1;\n"
              "  %2 = %0.0;\n"
              "  %3 = nn.dropout_train(%2, %1, rate=0.1f);\n"
              "  (%3.0, %3.1)\n"
              "}");
  CHECK_STREQ(def_text(r->out, "func2"),
              "def @func2(%c: bool, %x: Tensor[(4), float32], %y: Tensor[(4), float32], "
              "%state: RandState) {\n"
              "  if (%c) {\n"
              "    (add(%x, %y), %state)\n"
              "  } else {\n"
              "    @func1(%y, %state)\n"
              "  }\n"
              "}");
  CHECK(state_refs(r->out) == 0);
  CHECK(round_trips(r->out));
  CHECK(module_func(r->out, "func1")->ty != NULL); /* the pipeline type-checked it */
  Run *want = run(seed001_expected, NULL);
  const char *names[] = {"func1", "long_func", "func2"};
  for (int i = 0; i < 3; i++)
    CHECK(func_equal(module_func(r->out, names[i])->fn, module_func(want->m, names[i])->fn));
  CHECK(module_func(r->m, "func1")->fn->nparams == 1); /* the input is untouched */
  done(want);
  done(r);
}

/* A stateful closure takes and returns the state; a pure def is shared unchanged. */
static void test_effect_closures(void) {
  Run *r =
      run("def @pure(%x: float32) { add(%x, 1f) }\n"
          "def @f(%x: Tensor[(4), float32]) {\n"
          "  let %g = fn (%y: Tensor[(4), float32]) {\n"
          "    let %r = ref(@prng_state);\n"
          "    let %s = random.split(%r^);\n"
          "    %r := %s.0;\n"
          "    add(%y, random.uniform(%s.1, shape=[4], dtype=\"float32\"))\n"
          "  };\n"
          "  %g(%g(%x))\n"
          "}\n",
          "EffectToState");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "f"),
              "def @f(%x: Tensor[(4), float32], %state: RandState) {\n"
              "  let %g = fn (%y: Tensor[(4), float32], %state: RandState) {\n"
              "    let %s = random.split(%state);\n"
              "    (add(%y, random.uniform(%s.1, shape=[4], dtype=\"float32\")), %s.0)\n"
              "  };\n"
              "  %0 = %g(%x, %state);\n"
              "  %g(%0.0, %0.1)\n"
              "}");
  CHECK(module_func(r->out, "pure") == module_func(r->m, "pure")); /* left alone */
  done(r);
}

/* Mutually recursive defs both thread the state, and tail calls stay tail calls. */
static void test_effect_recursion(void) {
  Run *r =
      run("def @even(%x: Tensor[(4), float32], %n: int32) -> Tensor[(4), float32] {\n"
          "  if (greater(%n, 0)) { @odd(%x, subtract(%n, 1)) } else { %x }\n"
          "}\n"
          "def @odd(%x: Tensor[(4), float32], %n: int32) -> Tensor[(4), float32] {\n"
          "  let %r = ref(@prng_state);\n"
          "  let %d = nn.dropout_train(%x, %r^, rate=0.5f);\n"
          "  %r := %d.1;\n"
          "  @even(%d.0, %n)\n"
          "}\n",
          "EffectToState");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "even"),
              "def @even(%x: Tensor[(4), float32], %n: int32, %state: RandState) -> "
              "(Tensor[(4), float32], RandState) {\n"
              "  if (greater(%n, 0)) {\n"
              "    @odd(%x, subtract(%n, 1), %state)\n"
              "  } else {\n"
              "    (%x, %state)\n"
              "  }\n"
              "}");
  CHECK_STREQ(def_text(r->out, "odd"),
              "def @odd(%x: Tensor[(4), float32], %n: int32, %state: RandState) -> "
              "(Tensor[(4), float32], RandState) {\n"
              "  let %d = nn.dropout_train(%x, %state, rate=0.5f);\n"
              "  @even(%d.0, %n, %d.1)\n"
              "}");
  done(r);
}

/* A user state global is threaded through match clauses and sequential calls. */
static void test_effect_match_and_globals(void) {
  Run *r =
      run("global @count: int32 = 0;\n"
          "type T { A, B(int32) }\n"
          "def @bump(%t: T) -> int32 {\n"
          "  let %c = ref(@count);\n"
          "  match (%t) {\n"
          "    A => 0,\n"
          "    B(%k) => { %c := add(%c^, %k); %c^ },\n"
          "  }\n"
          "}\n"
          "def @main() { (@bump(A), @bump(B(2)), @count) }\n",
          "EffectToState");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "bump"),
              "def @bump(%t: T, %count: int32) -> (int32, int32) {\n"
              "  match (%t) {\n"
              "    A => {\n"
              "      (0, %count)\n"
              "    },\n"
              "    B(%k) => {\n"
              "      let %count = add(%count, %k);\n"
              "      (%count, %count)\n"
              "    },\n"
              "  }\n"
              "}");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%count: int32) {\n"
              "  %0 = @bump(A, %count);\n"
              "  %1 = @bump(B(2), %0.1);\n"
              "  ((%0.0, %1.0, %1.1), %1.1)\n"
              "}");
  CHECK(state_refs(r->out) == 0);
  done(r);
}

/* A state reference passed as a value and a stateful closure in a tuple are errors. */
static void test_effect_errors(void) {
  Run *r =
      run("def @g(%r: Ref[RandState]) { %r^ }\n"
          "def @f() { let %r = ref(@prng_state); @g(%r) }\n",
          "EffectToState");
  CHECK(!r->ok);
  CHECK_STREQ(diag_at(r, DIAG_ERROR, 0),
              "2:42: EffectToState: %r is a reference to @prng_state; it can only be read (%r^), "
              "written (%r := v) or captured here, not passed on as a value");
  done(r);
  r =
      run("def @f(%x: Tensor[(4), float32]) {\n"
          "  let %g = fn (%y: Tensor[(4), float32]) { nn.dropout(%y, @prng_state, rate=0.5f) };\n"
          "  let %t = (%g, 1);\n"
          "  %t.0(%x)\n"
          "}\n",
          "EffectToState");
  CHECK(!r->ok);
  CHECK_STREQ(
      diag_at(r, DIAG_ERROR, 0),
      "3:13: EffectToState: a function value that uses @prng_state is stored in a tuple here");
  done(r);
}

/* A def used as a value where stateful closures flow gets a wrapper. */
static void test_effect_wrap(void) {
  Run *r =
      run("def @apply(%f: fn (float32) -> float32, %x: float32) { %f(%x) }\n"
          "def @inc(%x: float32) { add(%x, 1f) }\n"
          "def @main(%x: float32) {\n"
          "  let %g = fn (%y: float32) { let %k = @prng_state; %y };\n"
          "  (@apply(%g, %x), @apply(@inc, %x))\n"
          "}\n",
          "EffectToState");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "apply"),
              "def @apply(%f: fn (float32, RandState) -> (float32, RandState), %x: float32, "
              "%state: RandState) {\n"
              "  %f(%x, %state)\n"
              "}");
  CHECK(strstr(def_text(r->out, "main"),
               "@apply(fn (%x, %state: RandState) {\n"
               "    (@inc(%x), %state)\n"
               "  }, %x, %0.1)") != NULL);
  CHECK(module_func(r->out, "inc") == module_func(r->m, "inc"));
  done(r);
}

/* ───────────────────────────── normal forms ───────────────────────────── */

static const char *nested =
    "def @f(%c: bool, %x: float32, %y: float32) {\n"
    "  let %a = add(multiply(%x, %y), if (%c) { %x } else { let %t = negative(%y); %t });\n"
    "  let %b = (let %u = add(%a, 1f); multiply(%u, %u));\n"
    "  (%a, %b)\n"
    "}\n";

/* ToANormalForm binds every non-atom, reading a state global included. */
static void test_anf(void) {
  Run *r = run(nested, "ToANormalForm");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "f"),
              "def @f(%c: bool, %x: float32, %y: float32) {\n"
              "  %0 = multiply(%x, %y);\n"
              "  %1 = if (%c) {\n"
              "    %x\n"
              "  } else {\n"
              "    let %t = negative(%y);\n"
              "    %t\n"
              "  };\n"
              "  let %a = add(%0, %1);\n"
              "  let %u = add(%a, 1f);\n"
              "  let %b = multiply(%u, %u);\n"
              "  %2 = (%a, %b);\n"
              "  %2\n"
              "}");
  CHECK(round_trips(r->out));
  done(r);
  /* Reading a state global is not an atom; ref(@g) keeps its operand. */
  r =
      run("def @f(%x: Tensor[(4), float32]) {\n"
          "  %0 = ref(@prng_state);\n"
          "  nn.dropout_train(%x, @prng_state, rate=0.5f).0\n"
          "}\n",
          "ToANormalForm");
  CHECK(r->ok);
  CHECK_STREQ(def_text(r->out, "f"),
              "def @f(%x: Tensor[(4), float32]) {\n"
              "  %0 = ref(@prng_state);\n"
              "  %1 = @prng_state;\n"
              "  %2 = nn.dropout_train(%x, %1, rate=0.5f);\n"
              "  %3 = %2.0;\n"
              "  %3\n"
              "}");
  done(r);
}

/* ToBasicBlockNormalForm binds only what must keep its order; flat code is shared. */
static void test_bbnf(void) {
  Run *r =
      run("def @g(%x: float32) { negative(%x) }\n"
          "def @f(%c: bool, %x: float32, %y: float32) {\n"
          "  let %a = add(multiply(%x, %y), if (%c) { %x } else { let %t = negative(%y); %t });\n"
          "  let %b = (let %u = add(@g(%a), if (%c) { %y } else { %x }); multiply(%u, %u));\n"
          "  (%a, %b)\n"
          "}\n",
          "ToBasicBlockNormalForm");
  CHECK(r->ok);
  /* multiply is pure and stays nested; the call of @g must still run
   * before the if, so it is bound first. */
  CHECK_STREQ(def_text(r->out, "f"),
              "def @f(%c: bool, %x: float32, %y: float32) {\n"
              "  %0 = if (%c) {\n"
              "    %x\n"
              "  } else {\n"
              "    let %t = negative(%y);\n"
              "    %t\n"
              "  };\n"
              "  let %a = add(multiply(%x, %y), %0);\n"
              "  %1 = @g(%a);\n"
              "  %2 = if (%c) {\n"
              "    %y\n"
              "  } else {\n"
              "    %x\n"
              "  };\n"
              "  let %u = add(%1, %2);\n"
              "  let %b = multiply(%u, %u);\n"
              "  (%a, %b)\n"
              "}");
  done(r);
  /* Already flat: nothing changes, and the def is shared. */
  r = run("def @g(%x: float32) { let %y = nn.relu(negative(%x)); add(%y, %y) }\n",
          "ToBasicBlockNormalForm");
  CHECK(r->ok);
  CHECK_STREQ(r->diff, "no change\n");
  CHECK(module_func(r->out, "g") == module_func(r->m, "g"));
  done(r);
}

/* ───────────────────────────── linearity ───────────────────────────── */

static const char *keys =
    "def @eat(%k: RandState) { random.uniform(%k, shape=[2], dtype=\"float32\") }\n"
    "def @ok(%c: bool, %k: RandState) {\n"
    "  let %s = random.split(%k);\n"
    "  let %a = if (%c) { @eat(%s.0) } else { random.normal(%s.0, shape=[2], dtype=\"float32\") "
    "};\n"
    "  (%a, random.fold_in(%s.1, 1), random.fold_in(%s.1, 2), @eat(%s.1))\n"
    "}\n";

/* CheckKeyLinearity: a key used twice is an error with a note, a warning in the checker. */
static void test_linearity(void) {
  Run *r = run(keys, "CheckKeyLinearity");
  CHECK(r->ok);
  CHECK_STREQ(r->diff, "no change\n");
  done(r);
  r =
      run("def @eat(%k: RandState) { random.uniform(%k, shape=[2], dtype=\"float32\") }\n"
          "def @bad(%k: RandState) {\n"
          "  let %t = (%k, %k);\n"
          "  let %a = @eat(%t.0);\n"
          "  (%a, random.split(%t.1))\n"
          "}\n",
          "CheckKeyLinearity");
  CHECK(!r->ok);
  CHECK_STREQ(diag_at(r, DIAG_ERROR, 0),
              "5:21: %k is used twice: a RandState key may be used once");
  CHECK_STREQ(diag_at(r, DIAG_NOTE, 0), "4:17: first used here");
  done(r);
  /* As a warning (the type checker's use). */
  r =
      run("def @f(%x: Tensor[(4), float32]) {\n"
          "  %0 = ref(@prng_state);\n"
          "  %1 = nn.dropout_train(%x, %0^, rate=0.5f);\n"
          "  nn.dropout_train(%1.0, %0^, rate=0.5f)\n"
          "}\n",
          NULL);
  CHECK(!ty_check_key_linearity(r->m, &r->d, false));
  CHECK(r->d.nerrors == 0);
  CHECK_STREQ(diag_at(r, DIAG_WARNING, 0),
              "4:26: the value of @prng_state is used twice: a RandState key may be used once");
  done(r);
}

/* ───────────────────────────── the manager ───────────────────────────── */

typedef struct Seen {
  StrBuf rules;
  int stop_after;
  int n;
} Seen;

static bool record(void *user, const PassRewrite *rw) {
  Seen *s = user;
  sb_printf(&s->rules, "%s%s", s->n ? " " : "", rw->rule);
  return ++s->n != s->stop_after;
}

/* The pass table, lookup, unknown passes, the diff, and the hook's order and stop. */
static void test_manager(void) {
  CHECK(pass_count() == 14);
  CHECK(pass_lookup("effecttostate") == pass_lookup("EffectToState"));
  CHECK(pass_lookup("Nope") == NULL);
  for (int i = 0; i < pass_count(); i++) CHECK(pass_get(i)->doc && pass_get(i)->must_typecheck);

  Run *r = run("def @f(%x: float32) { %x }\n", "ToANormalForm,Nope");
  CHECK(!r->ok);
  CHECK_STREQ(diag_at(r, DIAG_ERROR, 0), "0:0: unknown pass `Nope`");
  done(r);

  r = run(seed001, "EffectToState");
  CHECK(r->ok && strstr(r->diff,
                        "--- @func1\n+++ @func1\n@@ -1,8 +1,4 @@\n"
                        "-def @func1(%x: Tensor[(4), float32]) {\n"
                        "-  %0 = ref(@prng_state);\n") != NULL);
  done(r);

  /* The hook sees every rewrite in order; stopping yields NULL. */
  r = run(seed001, NULL);
  Seen s = {.stop_after = -1};
  PassHook hook = {record, &s};
  const PassDef *p = pass_lookup("EffectToState");
  Module *out = pass_run(p, r->m, &r->arena, &r->d, &hook);
  CHECK(out != NULL);
  CHECK(strncmp(s.rules.data,
                "state-param drop-ref read-state write-state return-state state-param", 68) == 0);
  module_free(out);
  sb_free(&s.rules);
  Seen s2 = {.stop_after = 2};
  hook.user = &s2;
  CHECK(pass_run(p, r->m, &r->arena, &r->d, &hook) == NULL);
  CHECK(s2.n == 2);
  CHECK(r->d.nerrors == 0);
  sb_free(&s2.rules);
  done(r);
}

/* ── scopes (`:pass NAME @f`, the prelude left out) ── */

static bool only_named(void *user, const Def *d) {
  return d->kind == DEF_FUNC && strcmp(d->u.func->name, (const char *)user) == 0;
}

/* The functions the hook heard of, "@a @a @b". */
static bool record_func(void *user, const PassRewrite *rw) {
  StrBuf *b = user;
  sb_printf(b, "%s%s", b->len ? " " : "", rw->func ? rw->func : "-");
  return true;
}

static PassResult scoped(Run *r, const char *names, const char *only, StrBuf *heard) {
  PassScope scope = {only_named, (void *)only, NULL};
  PassHook hook = {record_func, heard};
  PassOptions opt = pass_options_default();
  opt.scope = &scope;
  opt.hook = &hook;
  PassResult pr;
  CHECK(pass_pipeline(names, r->m, &r->arena, &r->d, &opt, &pr));
  return pr;
}

/* A function-local pass rewrites only the scope; a whole-module one
 * rewrites what it must but reports and diffs only the scope. */
static void test_scope(void) {
  CHECK(pass_lookup("FuseOps")->local && !pass_lookup("EffectToState")->local);
  Run *r =
      run("def @a(%x: float32) { exp(add(%x, 1f)) }\n"
          "def @b(%x: float32) { exp(add(%x, 2f)) }\n",
          NULL);
  StrBuf heard = {0};
  PassResult pr = scoped(r, "FuseOps", "b", &heard);
  CHECK_STREQ(heard.data, "@b");
  CHECK(module_func(pr.module, "a") == module_func(r->m, "a"));
  CHECK(module_func(pr.module, "b") != module_func(r->m, "b"));
  CHECK(strstr(pr.diff, "--- @b") && !strstr(pr.diff, "--- @a"));
  CHECK(pr.outside == NULL && pr.changed);
  module_free(pr.module);
  pass_result_free(&pr);
  sb_free(&heard);
  done(r);

  r = run(seed001, NULL);
  pr = scoped(r, "EffectToState", "func2", &heard);
  CHECK(heard.data && !strstr(heard.data, "@func1") && strstr(heard.data, "@func2"));
  CHECK(module_func(pr.module, "func1") != module_func(r->m, "func1")); /* rewritten anyway */
  CHECK(strstr(pr.diff, "--- @func2") && !strstr(pr.diff, "--- @func1"));
  CHECK_STREQ(pr.outside, "@func1 @long_func");
  module_free(pr.module);
  pass_result_free(&pr);
  sb_free(&heard);
  done(r);
}

/* One read-state rewrite of @func1, as :step prints it. */
typedef struct Fmt {
  DiagCtx *d;
  char *text;
} Fmt;

static bool grab(void *user, const PassRewrite *rw) {
  Fmt *f = user;
  if (f->text || strcmp(rw->rule, "read-state") != 0) return true;
  f->text = pass_rewrite_format(rw, f->d, 5);
  return true;
}

static void test_format(void) {
  Run *r = run(seed001, NULL);
  Fmt f = {&r->d, NULL};
  PassHook hook = {grab, &f};
  Module *out = pass_run(pass_lookup("EffectToState"), r->m, &r->arena, &r->d, &hook);
  CHECK_STREQ(f.text, "[read-state] in @func1 at t.rly:3:8\n  before: %0^\n  after:  %state\n");
  free(f.text);
  module_free(out);
  done(r);
}

/* The verifier names what is wrong: a variable used outside its scope. */
static void test_verify(void) {
  Run *r = run("def @f(%x: float32) { let %y = %x; %y }\n", NULL);
  FuncDef *fd = module_func(r->m, "f");
  Var *stray = var_new(&r->arena, "z", type_scalar(&r->arena, DT_FLOAT32), fd->span);
  Expr *body = fd->fn->body;
  body->u.let.body = expr_var(&r->arena, stray, body->u.let.body->span);
  CHECK(!pass_verify(r->m, &r->d));
  CHECK(r->d.nerrors > 0);
  done(r);
}

/* ───────────────────────────── deep chains ───────────────────────────── */

enum { DEEP = 1000000 };

/* def @deep(%x) { %0 = @inc(%x); %1 = @inc(%0); ... } with a stateful @inc. */
static Module *deep_module(Arena *a, DiagCtx *d) {
  const char *src =
      "def @inc(%y: float32) {\n"
      "  let %r = ref(@prng_state);\n"
      "  %r := random.split(%r^).0;\n"
      "  add(%y, 1f)\n"
      "}\n";
  Module *m = module_new(a);
  if (!parse_module(m, d, diag_add_source(d, "deep", src, strlen(src)))) return m;
  Span sp = {0};
  Var *x = var_new(a, "x", type_scalar(a, DT_FLOAT32), sp);
  Var **vs = malloc(sizeof(Var *) * DEEP);
  Expr **vals = malloc(sizeof(Expr *) * DEEP);
  Expr *prev = expr_var(a, x, sp);
  for (int i = 0; i < DEEP; i++) {
    vs[i] = rw_graph_var(a, sp);
    vals[i] = expr_call(a, expr_global(a, "inc", sp), 1, &prev, NULL, sp);
    prev = expr_var(a, vs[i], sp);
  }
  Expr *body = prev;
  for (int i = DEEP; i-- > 0;) body = expr_let(a, vs[i], vals[i], body, sp);
  free(vs);
  free(vals);
  Function *f = ARENA_NEW(a, Function);
  f->nparams = 1, f->params = ARENA_ARRAY(a, Var *, 1), f->params[0] = x, f->body = body;
  FuncDef *fd = ARENA_NEW(a, FuncDef);
  fd->name = "deep", fd->fn = f;
  module_add(m, (Def){.kind = DEF_FUNC, .u.func = fd});
  return m;
}

/* Runs three passes over a million-binding module; run on a small-stack thread. */
static void *deep_thread(void *arg) {
  int *ok = arg;
  Arena a;
  arena_init(&a);
  DiagCtx d;
  diag_init(&d);
  Module *m = deep_module(&a, &d);
  const char *names[] = {"ToANormalForm", "ToBasicBlockNormalForm", "EffectToState"};
  *ok = d.nerrors == 0;
  for (int i = 0; i < 3; i++) {
    Module *out = pass_run(pass_lookup(names[i]), m, &a, &d, NULL);
    if (!out)
      *ok = 0;
    else
      module_free(out);
  }
  module_free(m);
  diag_free(&d);
  arena_free(&a);
  return NULL;
}

static void test_deep(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t t;
  int ok = 0;
  CHECK(pthread_create(&t, &attr, deep_thread, &ok) == 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  CHECK(ok);
}

int main(void) {
  test_seed001();
  test_effect_closures();
  test_effect_recursion();
  test_effect_match_and_globals();
  test_effect_errors();
  test_effect_wrap();
  test_anf();
  test_bbnf();
  test_linearity();
  test_manager();
  test_scope();
  test_format();
  test_verify();
  test_deep();
  return check_report("test_passes");
}
