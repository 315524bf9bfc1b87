/* test_typecheck.c — unit tests of the type checker and the TIR verifier:
 * small modules parsed from text, checked, and compared on the printed
 * types of their defs and on exact messages (with line:col). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"
#include "parser/parser.h"
#include "tests/unit/check.h"
#include "tests/unit/harness.h"
#include "types/types.h"

typedef struct Run {
  Arena arena;
  DiagCtx d;
  Module *m;
  bool parsed, ok;
} Run;

static Run *run(const char *src) {
  Run *r = calloc(1, sizeof *r);
  arena_init(&r->arena);
  diag_init(&r->d);
  uint32_t f = diag_add_source(&r->d, "t.rly", src, strlen(src));
  r->m = module_new(&r->arena);
  r->parsed = parse_module(r->m, &r->d, f);
  if (!r->parsed) {
    fprintf(stderr, "parse failed:\n%s\n", src);
    diag_render(&r->d, stderr, 0, false);
    return r;
  }
  r->ok = ty_check_module(r->m, &r->d);
  return r;
}

/* Modules have no destructor: their name tables are malloc'd. */
static void module_drop(Module *m) {
  strmap_free(&m->globals), strmap_free(&m->types), strmap_free(&m->ctors);
}

static void done(Run *r) {
  module_drop(r->m);
  diag_free(&r->d);
  arena_free(&r->arena);
  free(r);
}

/* The printed type of def @name (static buffer). */
static const char *def_ty(Run *r, const char *name) {
  static char buf[1024];
  FuncDef *f = r->parsed ? module_func(r->m, name) : NULL;
  if (!f || !f->ty) return "(none)";
  char *s = print_type(f->ty);
  snprintf(buf, sizeof buf, "%s", s);
  free(s);
  return buf;
}

/* "line:col: message" of the i-th diagnostic of a level (static buffer). */
static const char *diag_at(Run *r, DiagLevel level, int i) {
  return diag_at_level(&r->d, level, i);
}

static const char *err(Run *r) { return diag_at(r, DIAG_ERROR, 0); }
static const char *warn(Run *r) { return diag_at(r, DIAG_WARNING, 0); }

/* Checks that src type-checks and def @name prints as want. */
static void expect_type(const char *src, const char *name, const char *want) {
  Run *r = run(src);
  CHECK(r->ok);
  if (!r->ok && r->parsed) diag_render(&r->d, stderr, 0, false);
  CHECK_STREQ(def_ty(r, name), want);
  done(r);
}

/* Checks that src is rejected with `want` ("line:col: message") first. */
static void expect_error(const char *src, const char *want) {
  Run *r = run(src);
  CHECK(r->parsed && !r->ok);
  CHECK_STREQ(err(r), want);
  done(r);
}

/* ── basics ── */

static void test_basics(void) {
  expect_type("def @f(%x: Tensor[(2, 3), float32]) { %x }", "f",
              "fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]");
  expect_type("def @f(%x: float32, %y: int32) { (%x, %y).1 }", "f", "fn (float32, int32) -> int32");
  expect_type("def @f(%x: float32) { let %y = (%x, (%x,)); %y.1.0 }", "f",
              "fn (float32) -> float32");
  expect_type("def @f() { [[1f, 2f], [3f, 4f]] }", "f", "fn () -> Tensor[(2, 2), float32]");
  expect_type("def @f(%x) { %x }\ndef @main(%y: float32) { @f(%y) }", "f",
              "fn (float32) -> float32");
  expect_type("def @f(%x: (float32, bool)) { let %g = fn (%t: (float32, bool)) { %t.1 }; %g(%x) }",
              "f", "fn ((float32, bool)) -> bool");
  expect_type("def @f(%x: int64) { free_var %y: bool; (%y, %x) }", "f",
              "fn (int64) -> (bool, int64)");
  expect_type("def @f(%x: float32) { %x; (%x, %x) }", "f", "fn (float32) -> (float32, float32)");
  /* unconstrained: leftover metavariables print as _ */
  expect_type("def @f(%x) { %x }", "f", "fn (_) -> _");
}

/* Basic type errors give exact messages at line:col, and several defs give several errors. */
static void test_errors(void) {
  expect_error("def @f(%x: float32, %y: int32) {\n  (%x, %y).3\n}",
               "2:3: tuple index 3 is out of range for a tuple of 2 fields");
  expect_error("def @f(%x: float32) {\n  %x.0\n}",
               "2:3: cannot take field 0 of a non-tuple of type float32");
  expect_error("def @f(%x: float32) -> bool {\n  %x\n}",
               "2:3: @f: the body has type float32 but the return type is bool");
  expect_error("def @f(%x: float32) { let %y: bool = %x; %y }",
               "1:38: %y is annotated bool but the value has type float32");
  expect_error(
      "def @g(%a: Tensor[(3), float32]) { %a }\n"
      "def @f(%x: Tensor[(4), float32]) { @g(%x) }",
      "2:39: @g: argument 1 expects Tensor[(3), float32] but got Tensor[(4), float32]");
  expect_error("def @g(%a: float32) { %a }\ndef @f(%x: float32) { @g(%x, %x) }",
               "2:30: @g: expects 1 argument, got 2");
  expect_error("def @f(%x: float32) { %x(%x) }",
               "1:23: cannot call %x: it has type float32, not a function type");
  /* several errors, one per def */
  Run *r = run("def @a(%x: float32) -> bool { %x }\ndef @b(%x: int32) -> bool { %x }");
  CHECK(!r->ok);
  CHECK(r->d.nerrors == 2);
  done(r);
}

/* ── if, refs, state ── */

/* if branches join (to `?` when sizes differ); references and state globals type-check. */
static void test_if_refs(void) {
  expect_type("def @f(%c: bool, %x: float32) { if (%c) { %x } else { %x } }", "f",
              "fn (bool, float32) -> float32");
  expect_type(
      "def @f(%c: bool, %x: Tensor[(3), float32], %y: Tensor[(?), float32]) {"
      " if (%c) { %x } else { %y } }",
      "f", "fn (bool, Tensor[(3), float32], Tensor[(?), float32]) -> Tensor[(?), float32]");
  expect_error("def @f(%c: Tensor[(3), float32]) {\n  if (%c) { 1 } else { 2 }\n}",
               "2:7: if condition must be a bool scalar, got Tensor[(3), float32]");
  expect_error("def @f(%c: bool) {\n  if (%c) { 1 } else { 2f }\n}",
               "2:24: if branches have different types: int32 and float32");
  expect_type("def @f(%x: float32) { let %r = ref(%x); %r := 2f; %r^ }", "f",
              "fn (float32) -> float32");
  expect_error("def @f(%x: float32) {\n  let %r = ref(%x);\n  %r := True\n}",
               "3:9: the reference holds float32 but the value written has type bool");
  expect_error("def @f(%x: float32) {\n  %x^\n}",
               "2:3: cannot read through a non-reference of type float32");
  expect_type("def @f() { let %r = ref(@prng_state); %r^ }", "f", "fn () -> RandState");
  expect_type("def @f() { @prng_state }", "f", "fn () -> RandState");
  expect_type("global @g: Tensor[(2), float32] = [1f, 2f];\ndef @f() { ref(@g) }", "f",
              "fn () -> Ref[Tensor[(2), float32]]");
  expect_error(
      "global @g: Tensor[(3), float32] = [1f, 2f];",
      "1:35: @g: the initial value has type Tensor[(2), float32] but the global is declared "
      "Tensor[(3), float32]");
}

/* ── polymorphism and size variables ── */

/* Type parameters instantiate per call, size variables bind per call, mutual recursion. */
static void test_poly_sizes(void) {
  const char *id = "def @id[A](%x: A) -> A { %x }\n";
  char src[1024];
  snprintf(src, sizeof src, "%sdef @main(%%a: float32, %%b: bool) { (@id(%%a), @id(%%b)) }", id);
  expect_type(src, "main", "fn (float32, bool) -> (float32, bool)");
  expect_type(src, "id", "fn [A](A) -> A");
  expect_error("def @id[A](%x: A) -> A {\n  1f\n}",
               "2:3: @id: the body has type float32 but the return type is A");
  const char *g = "def @g(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] { %x }\n";
  snprintf(src, sizeof src, "%sdef @main(%%a: Tensor[(3, 4), float32]) { @g(%%a) }", g);
  expect_type(src, "main", "fn (Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32]");
  expect_type(src, "g", "fn (Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32]");
  snprintf(src, sizeof src, "%sdef @main(%%a: Tensor[(?, 4), float32]) { @g(%%a) }", g);
  expect_type(src, "main", "fn (Tensor[(?, 4), float32]) -> Tensor[(?, 4), float32]");
  expect_error(
      "def @h(%x: Tensor[(n), float32], %y: Tensor[(n), float32]) { %x }\n"
      "def @main(%a: Tensor[(3), float32], %b: Tensor[(4), float32]) { @h(%a, %b) }",
      "2:72: @h: size n is 3 for %x but 4 for %y");
  expect_error("def @f(%x: Tensor[(n), float32]) -> Tensor[(3), float32] {\n  %x\n}",
               "2:3: @f: the body has type Tensor[(n), float32] but the return type is Tensor[(3), "
               "float32]");
  /* mutual recursion with annotations */
  expect_type(
      "def @even(%x: int32, %c: bool) -> bool { if (%c) { @odd(%x, %c) } else { %c } }\n"
      "def @odd(%x, %c) { @even(%x, %c) }",
      "odd", "fn (int32, bool) -> bool");
}

/* ── ADTs and match ── */

static const char *list_adt = "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n";

/* ADT construction and matching, exhaustiveness witnesses, and ADT type errors. */
static void test_adts(void) {
  char src[2048];
  snprintf(src, sizeof src, "%sdef @f(%%x: float32) { Cons(%%x, Nil) }", list_adt);
  expect_type(src, "f", "fn (float32) -> List[float32]");
  snprintf(src, sizeof src,
           "%sdef @hd[A](%%l: List[A], %%d: A) -> A {\n  match (%%l) {\n    Cons(%%h, _) => %%h,\n"
           "    Nil => %%d,\n  }\n}\ndef @main(%%x: List[bool]) { @hd(%%x, True) }",
           list_adt);
  expect_type(src, "main", "fn (List[bool]) -> bool");
  Run *r = run(src);
  CHECK(r->ok && r->d.nwarnings == 0);
  done(r);
  snprintf(src, sizeof src,
           "%sdef @f(%%l: List[int32]) {\n  match (%%l) {\n    Cons(%%h, _) => %%h,\n  }\n}",
           list_adt);
  r = run(src);
  CHECK(r->ok);
  CHECK_STREQ(warn(r), "6:3: match is not exhaustive: Nil is not covered");
  done(r);
  snprintf(src, sizeof src,
           "%sdef @f(%%l: List[int32]) {\n  match (%%l) {\n    Cons(_, Nil) => 1,\n    Nil => 0,\n "
           " }\n}",
           list_adt);
  r = run(src);
  CHECK_STREQ(warn(r), "6:3: match is not exhaustive: Cons(_, Cons(_, _)) is not covered");
  done(r);
  snprintf(src, sizeof src,
           "%sdef @f(%%l: (List[int32], bool)) {\n  match? (%%l) {\n    (Nil, _) => 1,\n  }\n}",
           list_adt);
  r = run(src);
  CHECK(r->ok && r->d.nwarnings == 0);
  done(r);
  snprintf(src, sizeof src,
           "%sdef @f(%%l: (List[int32], List[int32])) {\n  match (%%l) {\n    (Nil, _) => 1,\n"
           "    (_, Nil) => 2,\n  }\n}",
           list_adt);
  r = run(src);
  CHECK_STREQ(warn(r), "6:3: match is not exhaustive: (Cons(_, _), Cons(_, _)) is not covered");
  done(r);
  snprintf(src, sizeof src, "%sdef @f(%%x: float32) {\n  Cons(%%x, Cons(1, Nil))\n}", list_adt);
  expect_error(src, "6:12: Cons: argument 2 expects List[float32] but got List[int32]");
  snprintf(src, sizeof src,
           "%sdef @f(%%l: List[int32]) {\n  match (%%l) {\n    Cons(%%h, _) => %%h,\n"
           "    Nil => 1f,\n  }\n}",
           list_adt);
  expect_error(src, "8:12: match clauses have different types: int32 and float32");
  snprintf(src, sizeof src, "%sdef @f(%%l: float32) {\n  match (%%l) {\n    Nil => 1,\n  }\n}",
           list_adt);
  expect_error(src, "7:5: pattern Nil has type List[_] but the value matched has type float32");
}

/* ── ops (need the op registry) ── */

static bool have_op(const char *name) { return ops_lookup(name) >= 0; }

/* Op relations in defs: broadcasting, arity, deferred relations, size variables through ops. */
static void test_ops(void) {
  if (!have_op("add") || !have_op("nn.dense")) {
    fprintf(stderr, "test_typecheck: ops not registered yet, op tests skipped\n");
    return;
  }
  expect_type("def @f(%a: Tensor[(2, 3), float32], %b: Tensor[(3), float32]) { add(%a, %b) }", "f",
              "fn (Tensor[(2, 3), float32], Tensor[(3), float32]) -> Tensor[(2, 3), float32]");
  expect_type("def @f(%a: Tensor[(2, 3), float32]) { %a + 1f }", "f",
              "fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]");
  expect_error("def @f(%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]) {\n  add(%a, %b)\n}",
               "2:3: add: shapes (2, 3) and (4) do not broadcast");
  expect_error(
      "def @f(%x: Tensor[(1, 4), float32], %w: Tensor[(2, 4), float32]) {\n"
      "  nn.dense(%x, %w, %w)\n}",
      "2:20: nn.dense: expects 2 arguments, got 3");
  /* deferred relation, solved after a caller fixes the argument type */
  expect_type("def @f(%x) { add(%x, 1f) }\ndef @main(%y: Tensor[(3), float32]) { @f(%y) }", "f",
              "fn (Tensor[(3), float32]) -> Tensor[(3), float32]");
  expect_type("def @f(%x) { let %t = (%x, %x); %t.0 }\ndef @main(%y: bool) { @f(%y) }", "f",
              "fn (bool) -> bool");
  /* size variables through an op */
  const char *mlp =
      "def @f(%x: Tensor[(n, 784), float32], %w: Tensor[(10, 784), float32]) "
      "-> Tensor[(n, 10), float32] { nn.dense(%x, %w) }\n";
  char src[1024];
  snprintf(src, sizeof src,
           "%sdef @main(%%x: Tensor[(4, 784), float32], %%w: Tensor[(10, 784), float32]) "
           "{ @f(%%x, %%w) }",
           mlp);
  expect_type(
      src, "main",
      "fn (Tensor[(4, 784), float32], Tensor[(10, 784), float32]) -> Tensor[(4, 10), float32]");
  /* unresolved at the end: partially typed, not an error */
  expect_type("def @f(%x) { add(%x, %x) }", "f", "fn (_) -> _");
}

/* ── dataflow ── */

static void test_dataflow(void) {
  expect_type("def @f(%x: float32) { dataflow { let %y = (%x, %x); %y.0 } }", "f",
              "fn (float32) -> float32");
  expect_error("def @f(%x: float32) {\n  dataflow {\n    let %r = ref(%x);\n    %x\n  }\n}",
               "3:14: dataflow blocks must be pure: creating a reference is not allowed");
  expect_error("def @f(%c: bool) {\n  dataflow { if (%c) { 1 } else { 2 } }\n}",
               "2:14: dataflow blocks must be pure: `if` is not allowed");
  expect_error(
      "def @g() { let %r = ref(@prng_state); %r^ }\n"
      "def @h() { @g() }\n"
      "def @f() {\n  dataflow { @h() }\n}",
      "4:14: dataflow blocks must be pure: calling effectful function @h is not allowed");
  expect_error("def @f() {\n  dataflow { @prng_state }\n}",
               "2:14: dataflow blocks must be pure: state global @prng_state is not allowed");
}

/* ── prim functions ── */

static const char *prim_1d(const char *stmt) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "prim @p(%%X: Buffer[(4), float32], %%Z: Buffer[(4), float32]) {\n"
           "  for %%i in range(0, 4) {\n"
           "    %s\n"
           "  }\n"
           "}\n",
           stmt);
  return buf;
}

/* A prim that loads a buffer nobody allocated (the parser cannot produce
 * one; a pass could). */
static void test_prim_unallocated(void) {
  Arena a;
  arena_init(&a);
  DiagCtx d;
  diag_init(&d);
  Module *m = module_new(&a);
  Span sp = {0};
  Dim four = {DIM_CONST, 4, NULL};
  Buffer *bs[3];
  const char *names[3] = {"X", "Z", "Y"};
  for (int i = 0; i < 3; i++) {
    bs[i] = ARENA_NEW(&a, Buffer);
    bs[i]->name = names[i], bs[i]->dtype = DT_FLOAT32, bs[i]->ndim = 1;
    bs[i]->dims = arena_memdup(&a, &four, sizeof four), bs[i]->id = ir_fresh_id();
  }
  PrimExpr *zero = ARENA_NEW(&a, PrimExpr);
  zero->kind = PE_INT, zero->dtype = DT_INT32;
  PrimExpr *load = ARENA_NEW(&a, PrimExpr);
  load->kind = PE_LOAD, load->dtype = DT_FLOAT32;
  load->u.load.buf = bs[2], load->u.load.n = 1, load->u.load.idx = &zero;
  Stmt *st = ARENA_NEW(&a, Stmt);
  st->kind = ST_STORE, st->u.store.buf = bs[1], st->u.store.n = 1, st->u.store.idx = &zero;
  st->u.store.value = load;
  Stmt *seq = ARENA_NEW(&a, Stmt);
  seq->kind = ST_SEQ, seq->u.seq.n = 1, seq->u.seq.items = &st;
  PrimFunc *f = ARENA_NEW(&a, PrimFunc);
  f->name = "p", f->nparams = 2, f->params = bs, f->body = seq, f->span = sp;
  CHECK(!tir_verify(m, f, &d));
  CHECK(d.n == 1 && strcmp(d.items[0].msg, "load of unallocated buffer %Y") == 0);
  module_drop(m);
  diag_free(&d);
  arena_free(&a);
}

/* A begin parses only in kind(begin, end) with one variable; a pass that
 * gives one to a grid (which cannot print it) is caught by the verifier. */
static void test_prim_loop_begin(void) {
  Run *r =
      run("prim @p(%X: Buffer[(4, 4), float32]) {\n"
          "  for %i, %j in grid(4, 4) { %X[%i, %j] = 0f; }\n"
          "  for %k in vectorized(1, 4) { %X[0, %k] = 1f; }\n"
          "}\n");
  CHECK(r->ok);
  PrimFunc *f = r->ok ? module_prim(r->m, "p") : NULL;
  if (f) {
    Stmt *g = f->body->u.seq.items[0], *v = f->body->u.seq.items[1];
    g->u.for_.lo = ARENA_ARRAY(&r->arena, PrimExpr *, 2);
    g->u.for_.lo[1] = v->u.for_.lo[0];
    CHECK(!tir_verify(r->m, f, &r->d));
    CHECK_STREQ(err(r), "3:24: a `grid` loop over 2 variables must start at 0");
  }
  done(r);
}

/* The TIR verifier accepts a valid prim function and reports each kind of mistake. */
static void test_prim(void) {
  const char *ok =
      "prim @relu(%X: Buffer[(1, 4), float32], %Y: Buffer[(1, 4), float32]) {\n"
      "  for %i, %j in grid(1, 4) {\n"
      "    block \"Y\" (spatial %vi = %i, spatial %vj = %j) {\n"
      "      %Y[%vi, %vj] = max(%X[%vi, %vj], 0f);\n"
      "    }\n"
      "  }\n"
      "}\n";
  Run *r = run(ok);
  CHECK(r->ok);
  if (!r->ok) diag_render(&r->d, stderr, 0, false);
  done(r);
  r = run(prim_1d("%Z[%i] = %X[%i] * 2f + float32(%i);"));
  CHECK(r->ok);
  done(r);
  expect_error(prim_1d("%Z[%i] = float64(%X[%i]);"),
               "3:14: store of float64 value into float32 buffer %Z");
  expect_error(prim_1d("%Z[%i] = %X[%i] + 1;"),
               "3:14: operands of + have different types: float32 and int32");
  expect_error(prim_1d("if (%i) { %Z[%i] = 0f; }"), "3:9: if condition must be bool, got int32");
  expect_error(prim_1d("%Z[%i] = exp(%i);"), "3:14: exp expects a float argument, got int32");
  expect_error(prim_1d("%Z[%X[%i]] = 0f;"),
               "3:8: index of buffer %Z must be an integer, got float32");
  expect_error(prim_1d("let %t = %i * 2; block \"b\" (spatial %v = %t) { %Z[%v] = 0f; }"),
               "3:46: block iteration variables must be bound to loop variables, not %t");
  test_prim_unallocated();
  test_prim_loop_begin();
}

/* ── closures, patterns, entry points ── */

/* Polymorphic and size-generic closures, tuple patterns, `?` annotations, nested dataflow. */
static void test_closures(void) {
  expect_type(
      "def @f(%a: float32, %b: bool) {\n"
      "  let %id = fn [T](%x: T) -> T { %x };\n"
      "  (%id(%a), %id(%b))\n"
      "}",
      "f", "fn (float32, bool) -> (float32, bool)");
  expect_type(
      "def @f(%a: Tensor[(3), float32]) {\n"
      "  let %g = fn (%x: Tensor[(k), float32]) -> Tensor[(k), float32] { %x };\n"
      "  %g(%a)\n"
      "}",
      "f", "fn (Tensor[(3), float32]) -> Tensor[(3), float32]");
  /* a closure mentioning the def's own size variable keeps it rigid */
  expect_type(
      "def @f(%a: Tensor[(n), float32]) {\n"
      "  let %g = fn (%x: Tensor[(n), float32]) { %x };\n"
      "  %g(%a)\n"
      "}",
      "f", "fn (Tensor[(n), float32]) -> Tensor[(n), float32]");
  expect_type(
      "def @f(%p: (float32, (bool, int32))) {\n"
      "  match (%p) {\n"
      "    (%a, (%b, _)) => (%b, %a),\n"
      "  }\n"
      "}",
      "f", "fn ((float32, (bool, int32))) -> (bool, float32)");
  expect_type(
      "def @f(%x: Tensor[(3), float32]) {\n"
      "  let %y: Tensor[(?), float32] = %x;\n"
      "  %y\n"
      "}",
      "f", "fn (Tensor[(3), float32]) -> Tensor[(?), float32]");
  expect_type("def @f(%x: float32) { dataflow { dataflow { (%x, %x) } } }", "f",
              "fn (float32) -> (float32, float32)");
}

/* ty_check_expr with a session variable, and ty_check_def on one def after the module. */
static void test_entry_points(void) {
  Run *r = run("def @g(%x: Tensor[(n, 2), float32]) -> Tensor[(n, 2), float32] { %x }");
  CHECK(r->ok);
  /* an expression checked against the module, a session variable */
  const char *src = "@g(%s)";
  uint32_t f = diag_add_source(&r->d, "expr", src, strlen(src));
  Dim dims[2] = {{DIM_CONST, 5, NULL}, {DIM_CONST, 2, NULL}};
  Span none = {0};
  Var *s = var_new(&r->arena, "s", type_tensor(&r->arena, DT_FLOAT32, 2, dims, none), none);
  ParseOptions po = {.nsession = 1, .session = &s};
  Expr *e = parse_expr(r->m, &r->d, f, &po);
  CHECK(e != NULL);
  Type *t = e ? ty_check_expr(r->m, e, &r->d) : NULL;
  char *ts = t ? print_type(t) : NULL;
  CHECK_STREQ(ts, "Tensor[(5, 2), float32]");
  free(ts);
  /* one def re-checked on its own */
  CHECK(ty_check_def(r->m, "g", &r->d));
  CHECK_STREQ(def_ty(r, "g"), "fn (Tensor[(n, 2), float32]) -> Tensor[(n, 2), float32]");
  CHECK(!ty_check_def(r->m, "nope", &r->d));
  done(r);
  /* a def checked after the module: callers' leftovers are fresh */
  r = run("def @h(%x) { %x }\ndef @k(%y: bool) { @h(%y) }");
  CHECK(r->ok);
  CHECK(ty_check_def(r->m, "k", &r->d));
  CHECK_STREQ(def_ty(r, "k"), "fn (bool) -> bool");
  done(r);
}

/* ── deep let chain on a 1 MiB stack ── */

enum { DEEP_N = 1000000 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parses and checks a DEEP_N-binding def (run on a small-stack thread); true when typed right. */
static void *deep_body(void *arg) {
  StrBuf b = {0};
  sb_puts(&b, "def @f(%x0: Tensor[(2, 3), float32]) {\n");
  for (int i = 1; i < DEEP_N; i++) sb_printf(&b, "  let %%x%d = add(%%x%d, 1f);\n", i, i - 1);
  sb_printf(&b, "  %%x%d\n}\n", DEEP_N - 1);
  Run *r = calloc(1, sizeof *r);
  arena_init(&r->arena);
  diag_init(&r->d);
  uint32_t f = diag_add_source(&r->d, "deep.rly", b.data, b.len);
  sb_free(&b);
  r->m = module_new(&r->arena);
  double t0 = now();
  r->parsed = parse_module(r->m, &r->d, f);
  double t1 = now();
  r->ok = r->parsed && ty_check_module(r->m, &r->d);
  double t2 = now();
  if (getenv("RLY_TIMING")) fprintf(stderr, "deep: parse %.3fs, check %.3fs\n", t1 - t0, t2 - t1);
  *(bool *)arg = r->ok && strcmp(def_ty(r, "f"),
                                 "fn (Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32]") == 0;
  done(r);
  return NULL;
}

static void test_deep(void) {
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 1 << 20);
  pthread_t th;
  bool ok = false;
  CHECK(pthread_create(&th, &at, deep_body, &ok) == 0);
  pthread_join(th, NULL);
  pthread_attr_destroy(&at);
  CHECK(ok);
}

int main(void) {
  test_basics();
  test_errors();
  test_if_refs();
  test_poly_sizes();
  test_adts();
  test_ops();
  test_dataflow();
  test_prim();
  test_closures();
  test_entry_points();
  test_deep();
  return check_report("test_typecheck");
}
