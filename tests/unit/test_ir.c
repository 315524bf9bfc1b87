/* test_ir.c — unit tests of the IR printer, structural equality / hashing
 * and the TIR tables.  IR is built by hand through the ir.h constructors and
 * the printed text is checked exactly.  The million-binding let chain is
 * printed on a thread with a 1 MiB stack, as the no-recursion rule demands. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"
#include "ir/tir.h"
#include "ir/walk.h"
#include "ops/ops.h"
#include "tests/unit/check.h"

static Arena A;
static const Span S0 = {0};
static const PrintOptions PLAIN = {0};

/* ───────────────────────────── builders ───────────────────────────── */

static Var *mkvar(const char *name) { return var_new(&A, name, NULL, S0); }
static Expr *ev(Var *v) { return expr_var(&A, v, S0); }
static Expr *f32(double v) { return expr_scalar_f64(&A, DT_FLOAT32, v, S0); }
static Expr *let(Var *v, Expr *value, Expr *body) { return expr_let(&A, v, value, body, S0); }
static Expr *glob(const char *name) { return expr_global(&A, name, S0); }

static Expr *op(const char *name) { return ops_expr(&A, ops_lookup(name), S0); }

static Expr *call(const char *name, int n, Expr *a0, Expr *a1, Attrs *at) {
  Expr *args[2] = {a0, a1};
  return expr_call(&A, op(name), n, args, at, S0);
}

static Expr *call1(const char *name, Expr *a) { return call(name, 1, a, NULL, NULL); }
static Expr *call2(const char *name, Expr *a, Expr *b) { return call(name, 2, a, b, NULL); }

static Type *tensor_t(DType dt, int n, const int64_t *shape) {
  Dim d[8];
  for (int i = 0; i < n; i++) d[i].kind = DIM_CONST, d[i].value = shape[i], d[i].name = NULL;
  return type_tensor(&A, dt, n, d, S0);
}

static Function *mkfn(int n, Var **params, Expr *body) {
  Function *f = ARENA_NEW(&A, Function);
  f->nparams = n;
  f->params = ARENA_ARRAY(&A, Var *, n ? n : 1);
  for (int i = 0; i < n; i++) f->params[i] = params[i];
  f->body = body;
  return f;
}

static Expr *scalar(DType dt, int64_t v) { return expr_scalar_i64(&A, dt, v, S0); }
static Expr *scalar_f(DType dt, double v) { return expr_scalar_f64(&A, dt, v, S0); }

static AdtDef *list_adt(void) {
  AdtDef *adt = ARENA_NEW(&A, AdtDef);
  adt->name = "List";
  adt->ntparams = 1;
  adt->tparams = ARENA_ARRAY(&A, const char *, 1);
  adt->tparams[0] = "A";
  adt->nctors = 2;
  adt->ctors = ARENA_ARRAY(&A, CtorDef, 2);
  Type *fa = type_var(&A, "A", S0);
  adt->ctors[0].name = "Cons";
  adt->ctors[0].nfields = 2;
  adt->ctors[0].fields = ARENA_ARRAY(&A, Type *, 2);
  adt->ctors[0].fields[0] = fa;
  adt->ctors[0].fields[1] = type_adt(&A, "List", 1, &fa, S0);
  adt->ctors[1].name = "Nil";
  return adt;
}

static Expr *ctor(AdtDef *adt, int i) {
  Expr *e = expr_new(&A, EX_CTOR, S0);
  e->u.ctor.adt = adt, e->u.ctor.index = i;
  return e;
}

#define CHECK_PRINT(e, opt, expected)  \
  do {                                 \
    char *s_ = print_expr((e), (opt)); \
    CHECK_STREQ(s_, (expected));       \
    free(s_);                          \
  } while (0)

#define CHECK_TYPE(t, expected)  \
  do {                           \
    char *s_ = print_type(t);    \
    CHECK_STREQ(s_, (expected)); \
    free(s_);                    \
  } while (0)

/* ───────────────────────────── types ───────────────────────────── */

/* Every type form prints as the parser reads it (1-tuples, rank 0, `fn [A]`, Ref). */
static void test_types(void) {
  int64_t s13[] = {1, 3}, s3[] = {3};
  CHECK_TYPE(tensor_t(DT_FLOAT32, 2, s13), "Tensor[(1, 3), float32]");
  CHECK_TYPE(tensor_t(DT_INT64, 1, s3), "Tensor[(3), int64]");
  CHECK_TYPE(type_scalar(&A, DT_FLOAT32), "float32");
  Dim d[4] = {{DIM_ANY, 0, NULL}, {DIM_VAR, 0, "n"}, {DIM_META, 7, NULL}, {DIM_CONST, 784, NULL}};
  CHECK_TYPE(type_tensor(&A, DT_UINT8, 4, d, S0), "Tensor[(?, n, ?, 784), uint8]");
  Type *f = type_scalar(&A, DT_FLOAT32), *i = type_scalar(&A, DT_INT32);
  Type *two[2] = {f, i};
  CHECK_TYPE(type_tuple(&A, 2, two, S0), "(float32, int32)");
  CHECK_TYPE(type_tuple(&A, 1, two, S0), "(float32,)");
  CHECK_TYPE(type_unit(&A), "()");
  CHECK_TYPE(type_func(&A, 2, two, f, 0, NULL, S0), "fn (float32, int32) -> float32");
  Type *ta = type_var(&A, "A", S0);
  const char *tp[] = {"A"};
  CHECK_TYPE(type_func(&A, 1, &ta, ta, 1, tp, S0), "fn [A](A) -> A");
  CHECK_TYPE(type_adt(&A, "List", 1, &ta, S0), "List[A]");
  CHECK_TYPE(type_adt(&A, "T", 0, NULL, S0), "T");
  CHECK_TYPE(type_ref(&A, f, S0), "Ref[float32]");
  CHECK_TYPE(type_randstate(&A, S0), "RandState");
  CHECK_TYPE(type_incomplete(&A, 0, S0), "_");
  CHECK_TYPE(type_incomplete(&A, 12, S0), "_");
  StrBuf b = {0};
  print_dims_to(&b, 0, NULL);
  CHECK_STREQ(b.data, "()");
  sb_free(&b);
}

/* ──────────────────────────── literals ──────────────────────────── */

static void check_scalar(Expr *e, const char *expected) { CHECK_PRINT(e, PLAIN, expected); }

/* Scalar literals keep their dtype suffix and floats round-trip at every edge value. */
static void test_literals(void) {
  check_scalar(scalar(DT_INT32, 3), "3");
  check_scalar(scalar(DT_INT32, -7), "-7");
  check_scalar(scalar(DT_INT64, 3), "3i64");
  check_scalar(scalar(DT_INT8, -3), "-3i8");
  check_scalar(scalar(DT_INT16, 3), "3i16");
  check_scalar(scalar(DT_UINT8, 255), "255u8");
  check_scalar(scalar(DT_UINT16, 3), "3u16");
  check_scalar(scalar(DT_UINT32, 4294967295LL), "4294967295u32");
  check_scalar(scalar(DT_INT64, INT64_MIN), "-9223372036854775808i64");
  check_scalar(scalar(DT_INT64, INT64_MAX), "9223372036854775807i64");
  Tensor *u = tensor_new(&A, DT_UINT64, 0, NULL);
  tensor_set_u64(u, 0, UINT64_MAX);
  check_scalar(expr_const(&A, u, S0), "18446744073709551615u64");
  check_scalar(expr_scalar_bool(&A, true, S0), "True");
  check_scalar(expr_scalar_bool(&A, false, S0), "False");
  check_scalar(f32(1), "1f");
  check_scalar(f32(1.5), "1.5f");
  check_scalar(f32(-2), "-2f");
  check_scalar(f32(0.1), "0.1f");
  check_scalar(f32(1e-5), "1e-05f");
  check_scalar(f32(1e30), "1e+30f");
  /* FLT_MAX as numpy prints it: above FLT_MAX, but it rounds to it. */
  check_scalar(f32(3.4028234663852886e38), "3.4028235e+38f");
  check_scalar(f32(-3.4028234663852886e38), "-3.4028235e+38f");
  check_scalar(f32(3.4028232635611926e38), "3.4028233e+38f");
  check_scalar(f32(1.1754943508222875e-38), "1.1754944e-38f"); /* smallest normal */
  check_scalar(f32(1.401298464324817e-45), "1e-45f");          /* smallest denormal */
  check_scalar(f32(-0.0), "-0f");
  check_scalar(f32(INFINITY), "inff");
  check_scalar(f32(-INFINITY), "-inff");
  check_scalar(f32(NAN), "nanf");
  check_scalar(scalar_f(DT_FLOAT16, 0.1), "0.1f16");
  check_scalar(scalar_f(DT_FLOAT16, 1.5), "1.5f16");
  check_scalar(scalar_f(DT_FLOAT16, 65504), "65504f16");
  check_scalar(scalar_f(DT_FLOAT16, -65504), "-65504f16");
  check_scalar(scalar_f(DT_FLOAT16, 0x1p-14), "6.104e-05f16"); /* smallest normal */
  check_scalar(scalar_f(DT_FLOAT16, 0x1p-24), "6e-08f16");     /* smallest subnormal */
  check_scalar(scalar_f(DT_FLOAT16, 0x1p-6), "0.01563f16");    /* 0.01562 is the half below */
  check_scalar(scalar_f(DT_FLOAT64, DBL_MAX), "1.7976931348623157e+308f64");
  check_scalar(scalar_f(DT_FLOAT64, 0x1p-1074), "5e-324f64");
  check_scalar(scalar_f(DT_FLOAT16, INFINITY), "inff16");
  check_scalar(scalar_f(DT_FLOAT64, 2.5), "2.5f64");
  check_scalar(scalar_f(DT_FLOAT64, 0.1), "0.1f64");
  check_scalar(scalar_f(DT_FLOAT64, 1.0 / 3.0), "0.3333333333333333f64");
  check_scalar(scalar_f(DT_FLOAT64, NAN), "nanf64");
  check_scalar(scalar_f(DT_FLOAT64, -INFINITY), "-inff64");
  check_scalar(f32(16777216), "16777216f");

  int64_t s22[] = {2, 2}, s0[] = {0}, s20[] = {2, 0};
  Tensor *t = tensor_new(&A, DT_FLOAT32, 2, s22);
  for (int i = 0; i < 4; i++) tensor_set_f64(t, i, i + 1);
  check_scalar(expr_const(&A, t, S0), "[[1f, 2f], [3f, 4f]]");
  /* no elements: no literal has their element type; the call making them does */
  check_scalar(expr_const(&A, tensor_new(&A, DT_FLOAT32, 1, s0), S0),
               "zeros(shape=[0], dtype=\"float32\")");
  check_scalar(expr_const(&A, tensor_new(&A, DT_INT32, 2, s20), S0),
               "zeros(shape=[2, 0], dtype=\"int32\")");
  int64_t s3[] = {3};
  Tensor *ti = tensor_new(&A, DT_INT64, 1, s3);
  tensor_set_i64(ti, 2, -1);
  check_scalar(expr_const(&A, ti, S0), "[0i64, 0i64, -1i64]");

  StrBuf b = {0};
  print_string_to(&b, "a\"b\\c\nd\te\rf\x01g");
  CHECK_STREQ(b.data, "\"a\\\"b\\\\c\\nd\\te\\rf\x01g\"");
  sb_free(&b);
}

/* float_to_text then float_from_text gives v's bits back; counts failures. */
static int text_round_trip_fails(double v, DType dt) {
  char buf[64];
  double back;
  float_to_text(buf, sizeof buf, v, dt);
  if (float_from_text(buf, dt, &back) && memcmp(&back, &v, sizeof v) == 0) return 0;
  fprintf(stderr, "%s %.17g printed as %s, read back as %.17g\n", dtype_name(dt), v, buf, back);
  return 1;
}

/* Literal text (ir/tensor.h): every finite float16 and a sweep of float32
 * values print and read back to the same bits; reading rounds once, also
 * where going through a double would land on a tie and round again. */
static void test_float_text(void) {
  int fails = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    double v = half_to_float((uint16_t)h);
    if (isfinite(v)) fails += text_round_trip_fails(v, DT_FLOAT16);
  }
  for (uint64_t x = 0; x < 0x100000000ull && fails < 20; x += 65521) {
    float f;
    uint32_t b32 = (uint32_t)x;
    memcpy(&f, &b32, 4);
    if (isfinite(f)) fails += text_round_trip_fails(f, DT_FLOAT32);
  }
  CHECK(fails == 0);
  double v;
  CHECK(float_from_text("65519.999999999999999", DT_FLOAT16, &v) && v == 65504);
  CHECK(!float_from_text("65520", DT_FLOAT16, &v) && !float_from_text("-65520", DT_FLOAT16, &v));
  CHECK(float_from_text("1.00048828125", DT_FLOAT16, &v) && v == 1); /* the tie: to even */
  CHECK(float_from_text("1.00048828125000000001", DT_FLOAT16, &v) && v == 1 + 0x1p-10);
  CHECK(float_from_text("1.00146484374999999999", DT_FLOAT16, &v) && v == 1 + 0x1p-10);
  CHECK(float_from_text("2.98023223876953125e-8", DT_FLOAT16, &v) && v == 0); /* 2^-25 */
  CHECK(float_from_text("2.9802322387695313e-8", DT_FLOAT16, &v) && v == 0x1p-24);
  CHECK(float_from_text("1.00000005960464477539062501", DT_FLOAT32, &v) && v == 1 + 0x1p-23);
  CHECK(float_from_text("3.4028235e+38", DT_FLOAT32, &v) && v == FLT_MAX);
  CHECK(!float_from_text("3.4028236e+38", DT_FLOAT32, &v));
  CHECK(float_from_text("1.7976931348623158e308", DT_FLOAT64, &v) && v == DBL_MAX);
  CHECK(!float_from_text("1.8e308", DT_FLOAT64, &v));
}

/* Attribute values print nested lists, symbols, None, floats and escaped strings. */
static void test_attr_values(void) {
  StrBuf b = {0};
  AttrValue *items[3] = {attr_int(&A, 1, DT_INT32), attr_int(&A, -2, DT_INT64), NULL};
  AttrValue *inner = ARENA_NEW(&A, AttrValue);
  inner->kind = AV_LIST, inner->u.list.n = 2, inner->u.list.items = items;
  AttrValue *sym = ARENA_NEW(&A, AttrValue);
  sym->kind = AV_SYM, sym->u.s = "n";
  AttrValue *none = ARENA_NEW(&A, AttrValue);
  none->kind = AV_NONE;
  AttrValue *outer_items[5] = {inner, sym, none, attr_float(&A, 1e-5, DT_FLOAT32),
                               attr_bool(&A, true)};
  AttrValue *outer = ARENA_NEW(&A, AttrValue);
  outer->kind = AV_LIST, outer->u.list.n = 5, outer->u.list.items = outer_items;
  print_attr_value_to(&b, outer);
  CHECK_STREQ(b.data, "[[1, -2i64], n, None, 1e-05f, True]");
  sb_free(&b);
  print_attr_value_to(&b, attr_float(&A, 0.1, DT_FLOAT32)); /* a double: all digits kept */
  CHECK_STREQ(b.data, "0.1f");
  sb_free(&b);
  print_attr_value_to(&b, attr_float(&A, 0.5, DT_FLOAT64));
  CHECK_STREQ(b.data, "0.5f64");
  sb_free(&b);
  print_attr_value_to(&b, attr_str(&A, "NC\"HW"));
  CHECK_STREQ(b.data, "\"NC\\\"HW\"");
  sb_free(&b);
  AttrValue *ex = ARENA_NEW(&A, AttrValue);
  ex->kind = AV_EXPR, ex->u.expr = glob("f");
  print_attr_value_to(&b, ex);
  CHECK_STREQ(b.data, "@f");
  sb_free(&b);
}

/* ─────────────────────────── expressions ─────────────────────────── */

/* Op calls with attributes, call_tir callees, constructors and curried calls print right. */
static void test_calls(void) {
  Var *x = mkvar("x");
  Attrs *at = attrs_new(&A, 2);
  at->keys[0] = "units", at->vals[0] = attr_int(&A, 128, DT_INT32);
  at->keys[1] = "out_dtype", at->vals[1] = attr_str(&A, "float32");
  CHECK_PRINT(call("nn.dense", 2, ev(x), ev(x), at), PLAIN,
              "nn.dense(%x, %x, units=128, out_dtype=\"float32\")");
  Attrs *at1 = attrs_new(&A, 1);
  at1->keys[0] = "axis", at1->vals[0] = attr_int(&A, -1, DT_INT32);
  CHECK_PRINT(call("nn.softmax", 1, ev(x), NULL, at1), PLAIN, "nn.softmax(%x, axis=-1)");

  /* call_tir with a string callee, and with a prim global. */
  Var *a = mkvar("a"), *b2 = mkvar("b");
  Expr *pair[2] = {ev(a), ev(b2)};
  Expr *tup = expr_tuple(&A, 2, pair, S0);
  AttrValue *shp_items[2] = {attr_int(&A, 1, DT_INT32), attr_int(&A, 10, DT_INT32)};
  AttrValue *shp = ARENA_NEW(&A, AttrValue);
  shp->kind = AV_LIST, shp->u.list.n = 2, shp->u.list.items = shp_items;
  Attrs *ct = attrs_new(&A, 3);
  ct->keys[0] = "callee", ct->vals[0] = attr_str(&A, "env.linear");
  ct->keys[1] = "shape", ct->vals[1] = shp;
  ct->keys[2] = "dtype", ct->vals[2] = attr_str(&A, "float32");
  CHECK_PRINT(call("call_tir", 1, tup, NULL, ct), PLAIN,
              "call_tir(\"env.linear\", (%a, %b), shape=[1, 10], dtype=\"float32\")");
  Attrs *ct2 = attrs_new(&A, 2);
  ct2->keys[0] = "shape", ct2->vals[0] = shp;
  ct2->keys[1] = "dtype", ct2->vals[1] = attr_str(&A, "float32");
  CHECK_PRINT(call("call_tir", 2, glob("linear0"), tup, ct2), PLAIN,
              "call_tir(@linear0, (%a, %b), shape=[1, 10], dtype=\"float32\")");

  /* Constructors, global calls, curried calls, closures as callees. */
  AdtDef *list = list_adt();
  Expr *nil = expr_call(&A, ctor(list, 1), 0, NULL, NULL, S0);
  Expr *cons_args[2] = {f32(1), nil};
  CHECK_PRINT(nil, PLAIN, "Nil");
  CHECK_PRINT(expr_call(&A, ctor(list, 0), 2, cons_args, NULL, S0), PLAIN, "Cons(1f, Nil)");
  Expr *gx = expr_call(&A, glob("f"), 1, (Expr *[]){ev(x)}, NULL, S0);
  CHECK_PRINT(gx, PLAIN, "@f(%x)");
  CHECK_PRINT(expr_call(&A, gx, 1, (Expr *[]){f32(2)}, NULL, S0), PLAIN, "@f(%x)(2f)");
  Var *y = mkvar("y");
  Expr *clo = expr_fn(&A, mkfn(1, &y, ev(y)), S0);
  CHECK_PRINT(expr_call(&A, clo, 1, (Expr *[]){f32(2)}, NULL, S0), PLAIN,
              "(fn (%y) {\n  %y\n})(2f)");
  Attrs *noargs = attrs_new(&A, 1);
  noargs->keys[0] = "n", noargs->vals[0] = attr_int(&A, 5, DT_INT32);
  CHECK_PRINT(call("zeros", 0, NULL, NULL, noargs), PLAIN, "zeros(n=5)");
}

/* Tuples, projections (parenthesized when needed) and reference notation print right. */
static void test_tuples_refs(void) {
  Var *t = mkvar("t"), *r = mkvar("r"), *x = mkvar("x");
  CHECK_PRINT(expr_tuple(&A, 0, NULL, S0), PLAIN, "()");
  Expr *one[1] = {f32(1)};
  CHECK_PRINT(expr_tuple(&A, 1, one, S0), PLAIN, "(1f,)");
  Expr *two[2] = {f32(1), ev(x)};
  CHECK_PRINT(expr_tuple(&A, 2, two, S0), PLAIN, "(1f, %x)");
  CHECK_PRINT(expr_proj(&A, ev(t), 0, S0), PLAIN, "%t.0");
  CHECK_PRINT(expr_proj(&A, expr_proj(&A, ev(t), 0, S0), 1, S0), PLAIN, "(%t.0).1");
  CHECK_PRINT(expr_proj(&A, call1("split", ev(x)), 1, S0), PLAIN, "(split(%x)).1");
  CHECK_PRINT(expr_proj(&A, expr_tuple(&A, 2, two, S0), 1, S0), PLAIN, "(1f, %x).1");

  Expr *rn = expr_new(&A, EX_REF_NEW, S0);
  rn->u.ref_new.init = f32(0);
  CHECK_PRINT(rn, PLAIN, "ref(0f)");
  Expr *rr = expr_new(&A, EX_REF_READ, S0);
  rr->u.ref_read.ref = ev(r);
  CHECK_PRINT(rr, PLAIN, "%r^");
  Expr *rr2 = expr_new(&A, EX_REF_READ, S0);
  rr2->u.ref_read.ref = rn;
  CHECK_PRINT(rr2, PLAIN, "(ref(0f))^");
  Expr *rw = expr_new(&A, EX_REF_WRITE, S0);
  rw->u.ref_write.ref = ev(r), rw->u.ref_write.value = call2("add", rr, f32(1));
  CHECK_PRINT(rw, PLAIN, "(%r := add(%r^, 1f))");
  /* Sequencing and a typed let of a write (seed 001). */
  Var *anon = mkvar(NULL), *w = mkvar("ref_write");
  w->annot = type_unit(&A);
  Expr *rr3 = expr_new(&A, EX_REF_READ, S0);
  rr3->u.ref_read.ref = ev(r);
  CHECK_PRINT(let(anon, rw, rr3), PLAIN, "(%r := add(%r^, 1f));\n%r^");
  CHECK_PRINT(let(w, rw, ev(w)), PLAIN, "let %ref_write: () = (%r := add(%r^, 1f));\n%ref_write");
}

/* Let chains, graph temporaries renumbered from 0, let-valued lets and free_var print right. */
static void test_lets(void) {
  Var *x = mkvar("x"), *y = mkvar("y");
  Expr *e = let(x, f32(1), let(y, call2("add", ev(x), ev(x)), ev(y)));
  CHECK_PRINT(e, PLAIN, "let %x = 1f;\nlet %y = add(%x, %x);\n%y");
  PrintOptions ind = {.indent = 4};
  CHECK_PRINT(e, ind, "    let %x = 1f;\n    let %y = add(%x, %x);\n    %y");

  /* Graph temporaries are renumbered from 0 in text order. */
  Var *a = mkvar("a"), *g5 = mkvar("5"), *g9 = mkvar("9");
  g5->is_graph = g9->is_graph = true;
  Expr *g =
      let(g5, call2("add", ev(a), f32(1)), let(g9, call2("multiply", ev(g5), f32(2)), ev(g9)));
  CHECK_PRINT(g, PLAIN, "%0 = add(%a, 1f);\n%1 = multiply(%0, 2f);\n%1");

  /* A let whose value is a let: a parenthesized block. */
  Var *p = mkvar("p"), *q = mkvar("q");
  Expr *nested = let(p, let(q, f32(1), ev(q)), ev(p));
  CHECK_PRINT(nested, PLAIN, "let %p = (\n  let %q = 1f;\n  %q\n);\n%p");
  Var *g0 = mkvar("0");
  g0->is_graph = true;
  CHECK_PRINT(let(g0, let(q, f32(1), ev(q)), ev(g0)), PLAIN,
              "%0 = (\n  let %q = 1f;\n  %q\n);\n%0");
  CHECK_PRINT(call2("add", let(q, f32(1), ev(q)), f32(2)), PLAIN,
              "add((\n  let %q = 1f;\n  %q\n), 2f)");

  /* Annotations, free_var. */
  Var *t = mkvar("t");
  t->annot = type_scalar(&A, DT_FLOAT32);
  Expr *fv = expr_new(&A, EX_FREE_VAR, S0);
  Var *z = mkvar("z");
  z->annot = type_scalar(&A, DT_INT32);
  z->is_free = true;
  fv->u.free_var.var = z, fv->u.free_var.body = let(t, f32(1), ev(z));
  CHECK_PRINT(fv, PLAIN, "free_var %z: int32;\nlet %t: float32 = 1f;\n%z");
}

/* Anonymous, invalid and shadowed variable names print as unique valid names. */
static void test_names(void) {
  /* An anonymous var that is used gets %v; the free %v keeps its name. */
  Var *anon = mkvar(NULL), *v = mkvar("v");
  CHECK_PRINT(let(anon, f32(1), call2("add", ev(anon), ev(v))), PLAIN,
              "let %v1 = 1f;\nadd(%v1, %v)");
  Var *anon2 = mkvar(NULL), *anon3 = mkvar(NULL);
  CHECK_PRINT(let(anon2, f32(1), let(anon3, f32(2), call2("add", ev(anon2), ev(anon3)))), PLAIN,
              "let %v = 1f;\nlet %v1 = 2f;\nadd(%v, %v1)");
  /* Invalid names become valid unique ones. */
  Var *bad = mkvar("dense.bias"), *bad2 = mkvar("input:0"), *digit = mkvar("1x"),
      *empty = mkvar("");
  Expr *four[4] = {ev(bad), ev(bad2), ev(digit), ev(empty)};
  Expr *e =
      let(bad, f32(1),
          let(bad2, f32(2), let(digit, f32(3), let(empty, f32(4), expr_tuple(&A, 4, four, S0)))));
  CHECK_PRINT(e, PLAIN,
              "let %dense_bias = 1f;\nlet %input_0 = 2f;\nlet %v1x = 3f;\nlet %v = 4f;\n"
              "(%dense_bias, %input_0, %v1x, %v)");
  /* A let's var is in scope after its value: `let %x = add(%x, 1f)`. */
  Var *x1 = mkvar("x"), *x2 = mkvar("x");
  CHECK_PRINT(let(x1, f32(1), let(x2, call2("add", ev(x1), f32(1)), ev(x2))), PLAIN,
              "let %x = 1f;\nlet %x = add(%x, 1f);\n%x");
  /* Shadowing that changes nothing is kept verbatim... */
  Var *x3 = mkvar("x"), *x4 = mkvar("x");
  CHECK_PRINT(let(x3, f32(1), let(x4, f32(2), ev(x4))), PLAIN, "let %x = 1f;\nlet %x = 2f;\n%x");
  /* ...but a capture renames the inner binder. */
  Var *x5 = mkvar("x"), *x6 = mkvar("x");
  CHECK_PRINT(let(x5, f32(1), let(x6, f32(2), call2("add", ev(x5), ev(x6)))), PLAIN,
              "let %x = 1f;\nlet %x1 = 2f;\nadd(%x, %x1)");
  /* A free variable captured by a binder of the same name. */
  Var *free_y = mkvar("y"), *y2 = mkvar("y");
  CHECK_PRINT(let(y2, f32(1), call2("add", ev(free_y), ev(y2))), PLAIN,
              "let %y1 = 1f;\nadd(%y, %y1)");
}

/* if, match (total and partial, as a let value and an operand) and dataflow print right. */
static void test_control(void) {
  Var *c = mkvar("c"), *x = mkvar("x");
  Expr *iff = expr_if(&A, ev(c), f32(1), let(x, f32(2), ev(x)), S0);
  CHECK_PRINT(iff, PLAIN, "if (%c) {\n  1f\n} else {\n  let %x = 2f;\n  %x\n}");

  AdtDef *list = list_adt();
  Var *l = mkvar("l"), *h = mkvar("h"), *t = mkvar("t");
  Pattern *ph = ARENA_NEW(&A, Pattern), *pt = ARENA_NEW(&A, Pattern), *pc = ARENA_NEW(&A, Pattern);
  Pattern *pn = ARENA_NEW(&A, Pattern), *pw = ARENA_NEW(&A, Pattern),
          *ptup = ARENA_NEW(&A, Pattern);
  ph->kind = PAT_VAR, ph->u.var = h;
  pt->kind = PAT_VAR, pt->u.var = t;
  pc->kind = PAT_CTOR, pc->u.ctor.adt = list, pc->u.ctor.index = 0, pc->u.ctor.n = 2;
  pc->u.ctor.sub = ARENA_ARRAY(&A, Pattern *, 2);
  pc->u.ctor.sub[0] = ph, pc->u.ctor.sub[1] = pt;
  pn->kind = PAT_CTOR, pn->u.ctor.adt = list, pn->u.ctor.index = 1;
  pw->kind = PAT_WILD;
  ptup->kind = PAT_TUPLE, ptup->u.tuple.n = 1, ptup->u.tuple.sub = ARENA_ARRAY(&A, Pattern *, 1);
  ptup->u.tuple.sub[0] = pw;
  Expr *m = expr_new(&A, EX_MATCH, S0);
  m->u.match.scrut = ev(l);
  m->u.match.n = 3;
  m->u.match.clauses = ARENA_ARRAY(&A, MatchClause, 3);
  m->u.match.clauses[0] = (MatchClause){pc, ev(h)};
  m->u.match.clauses[1] = (MatchClause){pn, f32(0)};
  m->u.match.clauses[2] = (MatchClause){ptup, f32(1)};
  const char *mtext =
      "match (%l) {\n  Cons(%h, %t) => {\n    %h\n  },\n  Nil => {\n    0f\n  },\n"
      "  (_,) => {\n    1f\n  },\n}";
  CHECK_PRINT(m, PLAIN, mtext);
  m->u.match.partial = true;
  Var *r = mkvar("r");
  CHECK_PRINT(
      let(r, m, ev(r)), PLAIN,
      "let %r = match? (%l) {\n  Cons(%h, %t) => {\n    %h\n  },\n  Nil => {\n    0f\n  },\n"
      "  (_,) => {\n    1f\n  },\n};\n%r");
  m->u.match.n = 1;
  CHECK_PRINT(call1("negative", m), PLAIN,
              "negative((match? (%l) {\n  Cons(%h, %t) => {\n    %h\n  },\n}))");

  Expr *df = expr_new(&A, EX_DATAFLOW, S0);
  df->u.dataflow.body = call2("add", ev(x), ev(x));
  CHECK_PRINT(df, PLAIN, "dataflow {\n  add(%x, %x)\n}");
}

/* Closures and defs print with annotations, type params, attributes and ty comments. */
static void test_functions(void) {
  Var *x = mkvar("x");
  x->annot = type_scalar(&A, DT_FLOAT32);
  Function *f = mkfn(1, &x, call2("add", ev(x), f32(1)));
  f->ret = type_scalar(&A, DT_FLOAT32);
  Expr *fe = expr_fn(&A, f, S0);
  CHECK_PRINT(fe, PLAIN, "fn (%x: float32) -> float32 {\n  add(%x, 1f)\n}");
  /* With checked types: ty comments on params, calls, constants, the fn. */
  Type *ft = type_scalar(&A, DT_FLOAT32);
  fe->ty = type_func(&A, 1, &ft, ft, 0, NULL, S0);
  f->body->ty = ft;
  f->body->u.call.args[1]->ty = ft;
  PrintOptions typed = {.types = true};
  CHECK_PRINT(fe, typed,
              "fn (%x: float32 /* ty=float32 */) -> float32 {\n  add(%x, 1f /* ty=float32 */) /* "
              "ty=float32 */\n}"
              " /* ty=fn (float32) -> float32 */");
  /* Type parameters and attributes. */
  Var *a = mkvar("a");
  a->annot = type_var(&A, "A", S0);
  Function *g = mkfn(1, &a, ev(a));
  g->ntparams = 1;
  g->tparams = ARENA_ARRAY(&A, const char *, 1);
  g->tparams[0] = "A";
  g->ret = type_var(&A, "A", S0);
  g->attrs = attrs_new(&A, 1);
  g->attrs->keys[0] = "Primitive", g->attrs->vals[0] = attr_int(&A, 1, DT_INT32);
  CHECK_PRINT(expr_fn(&A, g, S0), PLAIN, "fn [A](%a: A, Primitive=1) -> A {\n  %a\n}");
  /* A definition, with the def's checked type on its params. */
  FuncDef d = {.name = "main", .fn = f};
  d.ty = fe->ty;
  StrBuf b = {0};
  print_func_def_to(&b, NULL, &d, typed);
  CHECK_STREQ(b.data,
              "def @main(%x: float32 /* ty=float32 */) -> float32 {\n"
              "  add(%x, 1f /* ty=float32 */) /* ty=float32 */\n}\n");
  sb_free(&b);
  Function *h = mkfn(0, NULL, expr_tuple(&A, 0, NULL, S0));
  FuncDef d2 = {.name = "unit", .fn = h};
  print_func_def_to(&b, NULL, &d2, PLAIN);
  CHECK_STREQ(b.data, "def @unit() {\n  ()\n}\n");
  sb_free(&b);
}

/* ─────────────────────────── DAG hoisting ─────────────────────────── */

static char *print_def(Function *f) {
  FuncDef d = {.name = "f", .fn = f};
  StrBuf b = {0};
  print_func_def_to(&b, NULL, &d, PLAIN);
  return sb_take(&b);
}

#define CHECK_DEF(f, expected)   \
  do {                           \
    char *s_ = print_def(f);     \
    CHECK_STREQ(s_, (expected)); \
    free(s_);                    \
  } while (0)

/* Shared subexpressions are hoisted once as `%N =` at the right scope, in dependency order. */
static void test_dag(void) {
  Var *x = mkvar("x"), *c = mkvar("c");
  Expr *s = call2("add", ev(x), f32(1));
  CHECK_DEF(mkfn(1, &x, call2("multiply", s, s)),
            "def @f(%x) {\n  %0 = add(%x, 1f);\n  multiply(%0, %0)\n}\n");
  /* Nested sharing: dependencies first, one counter. */
  Expr *t = call2("multiply", s, s);
  CHECK_DEF(mkfn(1, &x, call2("add", t, t)),
            "def @f(%x) {\n  %0 = add(%x, 1f);\n  %1 = multiply(%0, %0);\n  add(%1, %1)\n}\n");
  /* Uses in both branches: hoisted above the if. */
  Var *cx[2] = {c, x};
  Expr *iff = expr_if(&A, ev(c), s, call1("negative", s), S0);
  CHECK_DEF(mkfn(2, cx, iff),
            "def @f(%c, %x) {\n  %0 = add(%x, 1f);\n  if (%c) {\n    %0\n  } else {\n    "
            "negative(%0)\n  }\n}\n");
  /* Uses inside one branch only: hoisted inside it. */
  Expr *iff2 = expr_if(&A, ev(c), call2("multiply", s, s), ev(x), S0);
  CHECK_DEF(
      mkfn(2, cx, iff2),
      "def @f(%c, %x) {\n  if (%c) {\n    %0 = add(%x, 1f);\n    multiply(%0, %0)\n  } else {\n"
      "    %x\n  }\n}\n");
  /* A shared node after some bindings: placed before its first use. */
  Var *y = mkvar("y"), *z = mkvar("z");
  Expr *sy = call1("exp", ev(y));
  Expr *body = let(y, f32(2), let(z, call2("add", sy, f32(1)), call2("multiply", ev(z), sy)));
  CHECK_DEF(mkfn(1, &x, body),
            "def @f(%x) {\n  let %y = 2f;\n  %0 = exp(%y);\n  let %z = add(%0, 1f);\n  "
            "multiply(%z, %0)\n}\n");
  /* Graph temporaries and hoisted nodes share the counter. */
  Var *g = mkvar("7");
  g->is_graph = true;
  Expr *body2 = let(g, call1("exp", ev(x)),
                    call2("add", call2("multiply", ev(g), ev(g)), call2("multiply", ev(g), ev(g))));
  Expr *m = call2("multiply", ev(g), ev(g));
  body2 = let(g, call1("exp", ev(x)), call2("add", m, m));
  CHECK_DEF(mkfn(1, &x, body2),
            "def @f(%x) {\n  %0 = exp(%x);\n  %1 = multiply(%0, %0);\n  add(%1, %1)\n}\n");
  /* A shared let block and a shared closure. */
  Var *q = mkvar("q");
  Expr *blk = let(q, f32(1), ev(q));
  CHECK_DEF(mkfn(1, &x, call2("add", blk, blk)),
            "def @f(%x) {\n  %0 = (\n    let %q = 1f;\n    %q\n  );\n  add(%0, %0)\n}\n");
  Var *p = mkvar("p");
  Expr *clo = expr_fn(&A, mkfn(1, &p, call2("add", ev(p), ev(x))), S0);
  Expr *twice = expr_call(&A, clo, 1,
                          (Expr *[]){expr_call(&A, clo, 1, (Expr *[]){ev(x)}, NULL, S0)}, NULL, S0);
  CHECK_DEF(mkfn(1, &x, twice),
            "def @f(%x) {\n  %0 = fn (%p) {\n    add(%p, %x)\n  };\n  %0(%0(%x))\n}\n");
}

/* ─────────────────── a million bindings, 1 MiB stack ─────────────────── */

enum { DEEP_N = 1000000 };

typedef struct DeepJob {
  Expr *chain, *chain2;
  char *text;
  bool equal;
  uint64_t h1, h2;
} DeepJob;

static Expr *build_chain(Var *x0, Var ***vars_out) {
  Var **vars = malloc(sizeof *vars * (DEEP_N + 1));
  vars[0] = x0;
  for (int i = 1; i <= DEEP_N; i++) vars[i] = mkvar(arena_printf(&A, "x%d", i));
  Expr *e = ev(vars[DEEP_N]);
  for (int i = DEEP_N; i >= 1; i--) e = let(vars[i], call2("add", ev(vars[i - 1]), f32(1)), e);
  *vars_out = vars;
  return e;
}

static void *deep_worker(void *arg) {
  DeepJob *j = arg;
  j->text = print_expr(j->chain, PLAIN);
  j->equal = expr_equal(j->chain, j->chain2);
  j->h1 = expr_hash(j->chain), j->h2 = expr_hash(j->chain2);
  return NULL;
}

/* A million-binding chain prints, compares and hashes on a 1 MiB stack. */
static void test_deep(void) {
  Var *x0 = mkvar("x0"), **v1, **v2;
  DeepJob j = {0};
  j.chain = build_chain(x0, &v1);
  j.chain2 = build_chain(x0, &v2);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t th;
  clock_t t0 = clock();
  CHECK(pthread_create(&th, &attr, deep_worker, &j) == 0);
  pthread_join(th, NULL);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("deep: print + equal + 2 hashes of %d bindings: %.2fs\n", DEEP_N, secs);
  CHECK(j.text != NULL);
  if (j.text) {
    const char *tail = "let %x1000000 = add(%x999999, 1f);\n%x1000000";
    size_t n = strlen(j.text);
    CHECK(n > strlen(tail) && strcmp(j.text + n - strlen(tail), tail) == 0);
    CHECK(strncmp(j.text, "let %x1 = add(%x0, 1f);\nlet %x2 = add(%x1, 1f);\n", 48) == 0);
  }
  CHECK(j.equal);
  CHECK(j.h1 == j.h2);
  free(j.text);
  free(v1);
  free(v2);
  pthread_attr_destroy(&attr);
}

/* ───────────────────────────── modules ───────────────────────────── */

static PrimFunc *linear0(void);

/* A module's name tables are malloc'd (the nodes are in the arena). */
static void module_tables_free(Module *m) {
  strmap_free(&m->globals);
  strmap_free(&m->types);
  strmap_free(&m->ctors);
}

/* A module prints sorted with its header, and module equality ignores definition order. */
static void test_module(void) {
  Module *m = module_new(&A);
  module_add(m, (Def){.kind = DEF_ADT, .u.adt = list_adt()});
  AdtDef *ext = ARENA_NEW(&A, AdtDef);
  ext->name = "Handle", ext->is_extern = true;
  module_add(m, (Def){.kind = DEF_ADT, .u.adt = ext});
  StateGlobal *g = ARENA_NEW(&A, StateGlobal);
  g->name = "counter", g->type = type_scalar(&A, DT_INT32), g->init = scalar(DT_INT32, 0);
  module_add(m, (Def){.kind = DEF_GLOBAL, .u.global = g});
  Var *x = mkvar("x");
  FuncDef *mainf = ARENA_NEW(&A, FuncDef);
  mainf->name = "main", mainf->fn = mkfn(1, &x, call1("negative", ev(x)));
  module_add(m, (Def){.kind = DEF_FUNC, .u.func = mainf});
  Var *g0 = mkvar("0"), *y = mkvar("y");
  g0->is_graph = true;
  FuncDef *aux = ARENA_NEW(&A, FuncDef);
  aux->name = "aux", aux->fn = mkfn(1, &y, let(g0, call1("exp", ev(y)), ev(g0)));
  module_add(m, (Def){.kind = DEF_FUNC, .u.func = aux});
  module_add(m, (Def){.kind = DEF_PRIM, .u.prim = linear0()});
  PrintOptions hdr = {.header = true};
  char *s = print_module(m, hdr);
  CHECK_STREQ(s,
              "#[version = \"0.0.5\"]\n"
              "extern type Handle\n\n"
              "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n\n"
              "global @counter: int32 = 0;\n\n"
              "def @aux(%y) {\n  %0 = exp(%y);\n  %0\n}\n\n"
              "prim @linear0(%X: Buffer[(1, 784), float32], %W: Buffer[(128, 784), float32], "
              "%B: Buffer[(128), float32], %Z: Buffer[(1, 128), float32]) {\n"
              "  alloc %Y: Buffer[(1, 128), float32];\n"
              "  for %i, %j, %k in grid(1, 128, 784) {\n"
              "    block \"Y\" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {\n"
              "      init { %Y[%vi, %vj] = 0f; }\n"
              "      %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vj, %vk];\n"
              "    }\n"
              "  }\n"
              "  for %i, %j in grid(1, 128) {\n"
              "    block \"Z\" (spatial %vi = %i, spatial %vj = %j) {\n"
              "      %Z[%vi, %vj] = %Y[%vi, %vj] + %B[%vj];\n"
              "    }\n"
              "  }\n"
              "}\n\n"
              "def @main(%x) {\n  negative(%x)\n}\n");
  free(s);
  /* Module equality ignores definition order. */
  Module *m2 = module_new(&A);
  for (int i = m->ndefs - 1; i >= 0; i--) module_add(m2, m->defs[i]);
  CHECK(module_equal(m, m2));
  FuncDef *main2 = ARENA_NEW(&A, FuncDef);
  main2->name = "main", main2->fn = mkfn(1, &x, call1("exp", ev(x)));
  module_add(m2, (Def){.kind = DEF_FUNC, .u.func = main2});
  CHECK(!module_equal(m, m2));
  module_tables_free(m);
  module_tables_free(m2);
}

/* ─────────────────────────────── TIR ─────────────────────────────── */

static Buffer *buf(const char *name, int n, const int64_t *shape) {
  Buffer *b = ARENA_NEW(&A, Buffer);
  b->name = name, b->dtype = DT_FLOAT32, b->ndim = n, b->id = ir_fresh_id();
  b->dims = ARENA_ARRAY(&A, Dim, n);
  for (int i = 0; i < n; i++) b->dims[i].kind = DIM_CONST, b->dims[i].value = shape[i];
  return b;
}

static TirVar *tv(const char *name) {
  TirVar *v = ARENA_NEW(&A, TirVar);
  v->name = name, v->dtype = DT_INT32, v->id = ir_fresh_id();
  return v;
}

static PrimExpr *pe_new(PrimExprKind k, DType dt) {
  PrimExpr *e = ARENA_NEW(&A, PrimExpr);
  e->kind = k, e->dtype = dt;
  return e;
}

static PrimExpr *pint(int64_t v) {
  PrimExpr *e = pe_new(PE_INT, DT_INT32);
  e->u.i = v;
  return e;
}

static PrimExpr *pvar(TirVar *v) {
  PrimExpr *e = pe_new(PE_VAR, v->dtype);
  e->u.var = v;
  return e;
}

static PrimExpr *pbin(PrimBinOp op, PrimExpr *a, PrimExpr *b) {
  PrimExpr *e = pe_new(PE_BIN, a->dtype);
  e->u.bin.op = op, e->u.bin.a = a, e->u.bin.b = b;
  return e;
}

static PrimExpr *pload(Buffer *b, PrimExpr *i, PrimExpr *j) {
  PrimExpr *e = pe_new(PE_LOAD, b->dtype);
  e->u.load.buf = b, e->u.load.n = j ? 2 : 1;
  e->u.load.idx = ARENA_ARRAY(&A, PrimExpr *, 2);
  e->u.load.idx[0] = i, e->u.load.idx[1] = j;
  return e;
}

static Stmt *st_new(StmtKind k) {
  Stmt *s = ARENA_NEW(&A, Stmt);
  s->kind = k;
  return s;
}

static Stmt *store(Buffer *b, PrimExpr *i, PrimExpr *j, PrimExpr *v) {
  Stmt *s = st_new(ST_STORE);
  PrimExpr *l = pload(b, i, j);
  s->u.store.buf = b, s->u.store.n = l->u.load.n, s->u.store.idx = l->u.load.idx,
  s->u.store.value = v;
  return s;
}

static Stmt *seq(int n, Stmt **items) {
  Stmt *s = st_new(ST_SEQ);
  s->u.seq.n = n;
  s->u.seq.items = ARENA_ARRAY(&A, Stmt *, n);
  memcpy(s->u.seq.items, items, sizeof(Stmt *) * (size_t)n);
  return s;
}

static Stmt *grid(int n, TirVar **vars, const int64_t *ext, Stmt *body) {
  Stmt *s = st_new(ST_FOR);
  s->u.for_.loop = LOOP_GRID, s->u.for_.nvars = n, s->u.for_.body = body;
  s->u.for_.vars = ARENA_ARRAY(&A, TirVar *, n);
  s->u.for_.hi = ARENA_ARRAY(&A, PrimExpr *, n);
  for (int i = 0; i < n; i++) s->u.for_.vars[i] = vars[i], s->u.for_.hi[i] = pint(ext[i]);
  return s;
}

static Stmt *block(const char *name, int n, TirVar **iv, TirVar **loopv, const bool *reduce,
                   Stmt *init, Stmt *body) {
  Stmt *s = st_new(ST_BLOCK);
  s->u.block.name = name, s->u.block.niters = n, s->u.block.init = init, s->u.block.body = body;
  s->u.block.iters = ARENA_ARRAY(&A, IterVar, n);
  for (int i = 0; i < n; i++) s->u.block.iters[i] = (IterVar){reduce[i], iv[i], pvar(loopv[i])};
  return s;
}

static PrimExpr *pf32(double v) {
  PrimExpr *e = pe_new(PE_FLOAT, DT_FLOAT32);
  e->u.f = v;
  return e;
}

/* Builds text-format.md's @linear0 prim function by hand (a block with
 * init and reduction, then a bias add), the shared TIR fixture. */
static PrimFunc *linear0(void) {
  int64_t sx[] = {1, 784}, sw[] = {128, 784}, sb[] = {128}, sz[] = {1, 128};
  Buffer *X = buf("X", 2, sx), *W = buf("W", 2, sw), *B = buf("B", 1, sb), *Z = buf("Z", 2, sz);
  Buffer *Y = buf("Y", 2, sz);
  TirVar *i = tv("i"), *j = tv("j"), *k = tv("k"), *vi = tv("vi"), *vj = tv("vj"), *vk = tv("vk");
  Stmt *alloc = st_new(ST_ALLOC);
  alloc->u.alloc = Y;
  Stmt *init = store(Y, pvar(vi), pvar(vj), pf32(0));
  PrimExpr *prod = pbin(PB_MUL, pload(X, pvar(vi), pvar(vk)), pload(W, pvar(vj), pvar(vk)));
  Stmt *upd = store(Y, pvar(vi), pvar(vj), pbin(PB_ADD, pload(Y, pvar(vi), pvar(vj)), prod));
  TirVar *ivs[3] = {vi, vj, vk}, *lvs[3] = {i, j, k};
  bool red[3] = {false, false, true};
  int64_t e3[] = {1, 128, 784}, e2[] = {1, 128};
  Stmt *loop1 = grid(3, lvs, e3, block("Y", 3, ivs, lvs, red, init, upd));
  TirVar *i2 = tv("i"), *j2 = tv("j"), *vi2 = tv("vi"), *vj2 = tv("vj");
  TirVar *ivs2[2] = {vi2, vj2}, *lvs2[2] = {i2, j2};
  Stmt *zst = store(Z, pvar(vi2), pvar(vj2),
                    pbin(PB_ADD, pload(Y, pvar(vi2), pvar(vj2)), pload(B, pvar(vj2), NULL)));
  Stmt *loop2 = grid(2, lvs2, e2, block("Z", 2, ivs2, lvs2, red, NULL, zst));
  PrimFunc *f = ARENA_NEW(&A, PrimFunc);
  f->name = "linear0", f->nparams = 4;
  f->params = ARENA_ARRAY(&A, Buffer *, 4);
  f->params[0] = X, f->params[1] = W, f->params[2] = B, f->params[3] = Z;
  f->body = seq(3, (Stmt *[]){alloc, loop1, loop2});
  return f;
}

static char *print_pe(PrimExpr *e) {
  Buffer *o = buf("O", 1, (int64_t[]){1});
  PrimFunc f = {.name = "p", .nparams = 1, .params = &o};
  f.body = store(o, pint(0), NULL, e);
  StrBuf b = {0};
  print_prim_func_to(&b, &f);
  char *s = sb_take(&b);
  /* Keep only the stored expression. */
  char *start = strstr(s, "] = ") + 4, *end = strstr(start, ";\n}");
  *end = 0;
  char *r = strdup(start);
  free(s);
  return r;
}

#define CHECK_PE(e, expected)    \
  do {                           \
    char *s_ = print_pe(e);      \
    CHECK_STREQ(s_, (expected)); \
    free(s_);                    \
  } while (0)

/* prim @g(%O: Buffer[(4), float32]) { for %v in KIND(begin, 4) { %O[%v] = 0f; } };
 * begin < 0: no begin. */
static PrimFunc *one_loop(LoopKind kind, int64_t begin) {
  int64_t s4[] = {4};
  Buffer **o = ARENA_ARRAY(&A, Buffer *, 1);
  o[0] = buf("O", 1, s4);
  TirVar **v = ARENA_ARRAY(&A, TirVar *, 1);
  v[0] = tv("v");
  Stmt *loop = grid(1, v, s4, seq(1, (Stmt *[]){store(o[0], pvar(v[0]), NULL, pf32(0))}));
  loop->u.for_.loop = kind;
  if (begin >= 0) {
    loop->u.for_.lo = ARENA_ARRAY(&A, PrimExpr *, 1);
    loop->u.for_.lo[0] = pint(begin);
  }
  PrimFunc *f = ARENA_NEW(&A, PrimFunc);
  f->name = "g", f->nparams = 1, f->params = o, f->body = seq(1, (Stmt *[]){loop});
  return f;
}

static bool prints_loop(const PrimFunc *f, const char *loop_line) {
  StrBuf sb = {0};
  print_prim_func_to(&sb, f);
  bool ok = strstr(sb.data, loop_line) != NULL;
  if (!ok) fprintf(stderr, "  printed:\n%s", sb.data);
  sb_free(&sb);
  return ok;
}

/* kind(begin, end): the begin prints unless it is 0 (range always shows
 * one); a begin of 0 is the same IR as none, in equality and hashing. */
static void test_tir_loop_begin(void) {
  CHECK(prints_loop(one_loop(LOOP_VECTORIZED, 2), "for %v in vectorized(2, 4) {"));
  CHECK(prints_loop(one_loop(LOOP_PARALLEL, 0), "for %v in parallel(4) {"));
  CHECK(prints_loop(one_loop(LOOP_UNROLLED, -1), "for %v in unrolled(4) {"));
  CHECK(prints_loop(one_loop(LOOP_RANGE, 3), "for %v in range(3, 4) {"));
  CHECK(prints_loop(one_loop(LOOP_RANGE, -1), "for %v in range(0, 4) {"));
  PrimFunc *zero = one_loop(LOOP_PARALLEL, 0), *none = one_loop(LOOP_PARALLEL, -1);
  PrimFunc *two = one_loop(LOOP_PARALLEL, 2), *two2 = one_loop(LOOP_PARALLEL, 2);
  CHECK(prim_func_equal(zero, none) && prim_func_hash(zero) == prim_func_hash(none));
  CHECK(prim_func_equal(two, two2) && prim_func_hash(two) == prim_func_hash(two2));
  CHECK(!prim_func_equal(two, none) && prim_func_hash(two) != prim_func_hash(none));
  CHECK(!prim_func_equal(two, one_loop(LOOP_VECTORIZED, 2)));
}

/* TIR printing (minimal parentheses, every statement, attributes), the tables, and equality. */
static void test_tir(void) {
  TirVar *a = tv("a"), *b = tv("b"), *c = tv("c");
  CHECK_PE(pbin(PB_MUL, pbin(PB_ADD, pvar(a), pvar(b)), pvar(c)), "(%a + %b) * %c");
  CHECK_PE(pbin(PB_ADD, pvar(a), pbin(PB_MUL, pvar(b), pvar(c))), "%a + %b * %c");
  CHECK_PE(pbin(PB_SUB, pbin(PB_SUB, pvar(a), pvar(b)), pvar(c)), "%a - %b - %c");
  CHECK_PE(pbin(PB_SUB, pvar(a), pbin(PB_SUB, pvar(b), pvar(c))), "%a - (%b - %c)");
  CHECK_PE(pbin(PB_AND, pbin(PB_LT, pvar(a), pvar(b)), pbin(PB_OR, pvar(b), pvar(c))),
           "%a < %b && (%b || %c)");
  CHECK_PE(pbin(PB_SUB, pvar(a), pint(-3)), "%a - -3");
  PrimExpr *neg = pe_new(PE_NEG, DT_INT32), *not = pe_new(PE_NOT, DT_BOOL);
  neg->u.operand = pint(3);
  CHECK_PE(neg, "-(3)");
  neg->u.operand = pbin(PB_ADD, pvar(a), pvar(b));
  CHECK_PE(neg, "-(%a + %b)");
  neg->u.operand = pvar(a);
  CHECK_PE(neg, "-%a");
  not->u.operand = pbin(PB_LT, pvar(a), pvar(b));
  CHECK_PE(not, "!(%a < %b)");
  PrimExpr *mx = pe_new(PE_CALL, DT_FLOAT32);
  mx->u.call.fn = PI_MAX, mx->u.call.n = 2;
  mx->u.call.args = ARENA_ARRAY(&A, PrimExpr *, 2);
  mx->u.call.args[0] = pf32(0), mx->u.call.args[1] = pvar(a);
  CHECK_PE(mx, "max(0f, %a)");
  PrimExpr *cast = pe_new(PE_CAST, DT_FLOAT32);
  cast->u.cast.to = DT_FLOAT32, cast->u.cast.value = pbin(PB_MUL, pvar(a), pint(2));
  CHECK_PE(cast, "float32(%a * 2)");
  PrimExpr *i64 = pe_new(PE_INT, DT_INT64);
  i64->u.i = 3;
  CHECK_PE(i64, "3i64");
  PrimExpr *f64 = pe_new(PE_FLOAT, DT_FLOAT64);
  f64->u.f = 0.5;
  CHECK_PE(f64, "0.5f64");

  /* range loops, parallel, let, if/else, multi-statement init, attributes. */
  int64_t s4[] = {4};
  Buffer *o = buf("O", 1, s4);
  o->dims[0].kind = DIM_VAR, o->dims[0].name = "n";
  TirVar *i = tv("i"), *t = tv("t"), *vi = tv("vi");
  Stmt *letst = st_new(ST_LET);
  letst->u.let.var = t, letst->u.let.value = pbin(PB_MUL, pvar(i), pint(2));
  Stmt *ifst = st_new(ST_IF);
  ifst->u.if_.cond = pbin(PB_LT, pvar(t), pint(5));
  ifst->u.if_.then_ = seq(1, (Stmt *[]){store(o, pvar(i), NULL, pf32(1))});
  ifst->u.if_.else_ = seq(1, (Stmt *[]){store(o, pvar(i), NULL, pf32(2))});
  Stmt *range = st_new(ST_FOR);
  range->u.for_.loop = LOOP_RANGE, range->u.for_.nvars = 1, range->u.for_.vars = &i;
  range->u.for_.lo = ARENA_ARRAY(&A, PrimExpr *, 1);
  range->u.for_.hi = ARENA_ARRAY(&A, PrimExpr *, 1);
  range->u.for_.lo[0] = pint(0), range->u.for_.hi[0] = pint(4);
  range->u.for_.body = seq(2, (Stmt *[]){letst, ifst});
  Stmt *par = grid(1, &vi, s4, seq(1, (Stmt *[]){store(o, pvar(vi), NULL, pf32(0))}));
  par->u.for_.loop = LOOP_PARALLEL;
  Stmt *init2 =
      seq(2, (Stmt *[]){store(o, pint(0), NULL, pf32(0)), store(o, pint(1), NULL, pf32(0))});
  TirVar *bi = tv("bi");
  bool sp[1] = {false};
  Stmt *blk = block("B", 1, &bi, &vi, sp, init2, store(o, pvar(bi), NULL, pf32(3)));
  PrimFunc f = {.name = "misc", .nparams = 1, .params = &o};
  f.attrs = attrs_new(&A, 1);
  f.attrs->keys[0] = "tir.noalias", f.attrs->vals[0] = attr_bool(&A, true);
  f.body = seq(3, (Stmt *[]){range, par, grid(1, &vi, s4, blk)});
  StrBuf sb = {0};
  print_prim_func_to(&sb, &f);
  CHECK_STREQ(sb.data,
              "prim @misc(%O: Buffer[(n), float32], tir.noalias=True) {\n"
              "  for %i in range(0, 4) {\n"
              "    let %t = %i * 2;\n"
              "    if (%t < 5) {\n"
              "      %O[%i] = 1f;\n"
              "    } else {\n"
              "      %O[%i] = 2f;\n"
              "    }\n"
              "  }\n"
              "  for %vi in parallel(4) {\n"
              "    %O[%vi] = 0f;\n"
              "  }\n"
              "  for %vi in grid(4) {\n"
              "    block \"B\" (spatial %bi = %vi) {\n"
              "      init {\n"
              "        %O[0] = 0f;\n"
              "        %O[1] = 0f;\n"
              "      }\n"
              "      %O[%bi] = 3f;\n"
              "    }\n"
              "  }\n"
              "}\n");
  sb_free(&sb);

  /* Tables. */
  CHECK_STREQ(prim_binop_text(PB_LE), "<=");
  CHECK(prim_binop_prec(PB_MUL) > prim_binop_prec(PB_ADD));
  CHECK(prim_intrinsic_lookup("select") == PI_SELECT);
  CHECK(prim_intrinsic_arity(PI_SELECT) == 3);
  CHECK(prim_intrinsic_lookup("nope") == -1);
  CHECK_STREQ(prim_intrinsic_name(PI_CEIL), "ceil");
  CHECK_STREQ(loop_kind_name(LOOP_UNROLLED), "unrolled");
  CHECK_STREQ(stmt_kind_name(ST_ALLOC), "alloc");

  /* Equality: two independently built copies are alpha-equivalent. */
  PrimFunc *l1 = linear0(), *l2 = linear0();
  CHECK(prim_func_equal(l1, l2));
  CHECK(prim_func_hash(l1) == prim_func_hash(l2));
  l2->params[2]->dims[0].value = 64;
  CHECK(!prim_func_equal(l1, l2));
  CHECK(prim_func_hash(l1) != prim_func_hash(l2));
}

/* ───────────────────────── equality and hashing ───────────────────────── */

/* fn (%p: float32) { let %q = add(%p, c); multiply(%q, %q) } with fresh vars. */
static Function *sample_fn(const char *pn, const char *qn, double c) {
  Var *p = mkvar(pn), *q = mkvar(qn);
  p->annot = type_scalar(&A, DT_FLOAT32);
  return mkfn(1, &p, let(q, call2("add", ev(p), f32(c)), call2("multiply", ev(q), ev(q))));
}

/* Alpha-equivalence and hashing: binders, free vars, attributes, constants, DAGs, type params. */
static void test_equality(void) {
  Function *f1 = sample_fn("p", "q", 1), *f2 = sample_fn("a", "b", 1), *f3 = sample_fn("p", "q", 2);
  CHECK(func_equal(f1, f2));
  CHECK(func_hash(f1) == func_hash(f2));
  CHECK(!func_equal(f1, f3));
  CHECK(func_hash(f1) != func_hash(f3));
  Expr *e1 = expr_fn(&A, f1, S0), *e2 = expr_fn(&A, f2, S0);
  CHECK(expr_equal(e1, e2) && expr_hash(e1) == expr_hash(e2));
  /* Spans, checked types and graph-ness do not matter. */
  e2->ty = type_scalar(&A, DT_INT8);
  expr_set_span(e2, span_make(3, 1));
  f2->body->u.let.var->is_graph = true;
  CHECK(expr_equal(e1, e2) && expr_hash(e1) == expr_hash(e2));
  /* A different annotation does. */
  f2->params[0]->annot = type_scalar(&A, DT_FLOAT16);
  CHECK(!expr_equal(e1, e2));
  /* Free variables compare by identity. */
  Var *u1 = mkvar("u"), *u2 = mkvar("u");
  CHECK(expr_equal(ev(u1), ev(u1)));
  CHECK(!expr_equal(ev(u1), ev(u2)));
  CHECK(expr_hash(ev(u1)) != expr_hash(ev(u2)));
  /* Bound vs free. */
  Var *b1 = mkvar("b");
  CHECK(!expr_equal(let(b1, f32(1), ev(b1)), let(mkvar("b"), f32(1), ev(b1))));
  /* Swapped uses of two bound vars differ. */
  Var *x = mkvar("x"), *y = mkvar("y"), *x2 = mkvar("x"), *y2 = mkvar("y");
  Expr *sw1 = let(x, f32(1), let(y, f32(1), call2("subtract", ev(x), ev(y))));
  Expr *sw2 = let(x2, f32(1), let(y2, f32(1), call2("subtract", ev(y2), ev(x2))));
  CHECK(!expr_equal(sw1, sw2));
  CHECK(expr_hash(sw1) != expr_hash(sw2));
  /* Attributes, constants, ops. */
  Attrs *a1 = attrs_new(&A, 1), *a2 = attrs_new(&A, 1);
  a1->keys[0] = a2->keys[0] = "axis";
  a1->vals[0] = attr_int(&A, 1, DT_INT32), a2->vals[0] = attr_int(&A, 1, DT_INT64);
  Var *z = mkvar("z");
  CHECK(!expr_equal(call("sum", 1, ev(z), NULL, a1), call("sum", 1, ev(z), NULL, a2)));
  CHECK(expr_equal(call("sum", 1, ev(z), NULL, a1), call("sum", 1, ev(z), NULL, a1)));
  CHECK(!expr_equal(call1("exp", ev(z)), call1("log", ev(z))));
  CHECK(!expr_equal(f32(0.0), f32(-0.0)));
  /* A DAG equals its tree expansion, with equal hashes. */
  Expr *s = call2("add", ev(z), f32(1));
  Expr *dag = call2("multiply", s, s);
  Expr *tree = call2("multiply", call2("add", ev(z), f32(1)), call2("add", ev(z), f32(1)));
  CHECK(expr_equal(dag, tree) && expr_hash(dag) == expr_hash(tree));
  /* A deep DAG stays linear (2^60 paths). */
  Expr *d1 = ev(z), *d2 = ev(z);
  for (int i = 0; i < 60; i++) d1 = call2("add", d1, d1), d2 = call2("add", d2, d2);
  CHECK(expr_equal(d1, d2) && expr_hash(d1) == expr_hash(d2));
  /* Type parameters are alpha-renamed. */
  Type *ta = type_var(&A, "A", S0), *tb = type_var(&A, "B", S0);
  const char *pa[] = {"A"}, *pb[] = {"B"}, *pab[] = {"A", "B"};
  Type *fa = type_func(&A, 1, &ta, ta, 1, pa, S0), *fb = type_func(&A, 1, &tb, tb, 1, pb, S0);
  CHECK(type_equal(fa, fb) && type_hash(fa) == type_hash(fb));
  Type *fab = type_func(&A, 1, &ta, tb, 2, pab, S0), *fba = type_func(&A, 1, &ta, ta, 2, pab, S0);
  CHECK(!type_equal(fab, fba));
  CHECK(!type_equal(type_adt(&A, "A", 0, NULL, S0), ta));
  CHECK(type_equal(type_scalar(&A, DT_FLOAT32), type_scalar(&A, DT_FLOAT32)));
  CHECK(!type_equal(type_scalar(&A, DT_FLOAT32), type_scalar(&A, DT_FLOAT64)));
  /* Functions with type parameters. */
  Var *pa1 = mkvar("x"), *pb1 = mkvar("y");
  pa1->annot = ta, pb1->annot = tb;
  Function *ga = mkfn(1, &pa1, ev(pa1)), *gb = mkfn(1, &pb1, ev(pb1));
  ga->ntparams = gb->ntparams = 1;
  ga->tparams = pa, gb->tparams = pb;
  CHECK(func_equal(ga, gb) && func_hash(ga) == func_hash(gb));
}

/* Matches over separately built ADTs are equal up to renaming; partiality counts. */
static void test_match_equality(void) {
  AdtDef *l1 = list_adt(), *l2 = list_adt();
  Expr *m[2];
  for (int k = 0; k < 2; k++) {
    AdtDef *list = k ? l2 : l1;
    Var *s = mkvar("s"), *h = mkvar(k ? "hh" : "h");
    Pattern *ph = ARENA_NEW(&A, Pattern), *pw = ARENA_NEW(&A, Pattern),
            *pc = ARENA_NEW(&A, Pattern);
    ph->kind = PAT_VAR, ph->u.var = h;
    pw->kind = PAT_WILD;
    pc->kind = PAT_CTOR, pc->u.ctor.adt = list, pc->u.ctor.index = 0, pc->u.ctor.n = 2;
    pc->u.ctor.sub = ARENA_ARRAY(&A, Pattern *, 2);
    pc->u.ctor.sub[0] = ph, pc->u.ctor.sub[1] = pw;
    Expr *me = expr_new(&A, EX_MATCH, S0);
    me->u.match.scrut = ev(s), me->u.match.n = 1;
    me->u.match.clauses = ARENA_ARRAY(&A, MatchClause, 1);
    me->u.match.clauses[0] = (MatchClause){pc, ev(h)};
    m[k] = expr_fn(&A, mkfn(1, &s, me), S0);
  }
  CHECK(expr_equal(m[0], m[1]) && expr_hash(m[0]) == expr_hash(m[1]));
  m[1]->u.fn->body->u.match.partial = true;
  CHECK(!expr_equal(m[0], m[1]));
}

/* ─────────────────────────── walker (ir/walk.h) ─────────────────────────── */

static void count_node(void *n, Var *v) { (void)v, ++*(int *)n; }

static bool walk_kinds(void *ctx, Expr *e) {
  sb_printf(ctx, "%s ", expr_kind_name(e->kind));
  return e->kind != EX_FN; /* not into function bodies */
}

/* Children, roles, binders, rebuilding (sharing and copying) and walk order of Relay nodes. */
static void test_walk_relay(void) {
  Var *x = mkvar("x"), *y = mkvar("y"), *h = mkvar("h");
  Expr *c = call2("add", ev(x), f32(1));
  CHECK(expr_nchildren(c) == 3 && expr_child(c, 0)->kind == EX_OP &&
        expr_child(c, 2)->kind == EX_CONST);
  CHECK(expr_child_role(c, 1) == EXPR_OPERAND && !expr_attrs(c) && !expr_rest(c));
  /* Rebuilding shares an unchanged node and copies the argument array. */
  Expr *kids[3] = {expr_child(c, 0), expr_child(c, 1), expr_child(c, 2)};
  CHECK(expr_rebuild(&A, c, kids, 3) == c);
  kids[2] = f32(2);
  Expr *c2 = expr_rebuild(&A, c, kids, 3);
  CHECK(c2 != c && c2->u.call.args != c->u.call.args && c2->u.call.args[0] == c->u.call.args[0]);
  CHECK(expr_child(c, 2) != kids[2] && expr_child(c2, 2) == kids[2]);
  /* A let: value (operand), body (the rest); its variable in both. */
  Expr *l = let(y, c, ev(y));
  CHECK(expr_rest(l) == l->u.let.body && expr_child_role(l, 1) == EXPR_REST);
  int seen = 0;
  expr_binders(l, 0, count_node, &seen);
  CHECK(seen == 1);
  /* A match: clause bodies are blocks; pattern variables in their own clause. */
  Pattern *pv = ARENA_NEW(&A, Pattern), *pw = ARENA_NEW(&A, Pattern);
  pv->kind = PAT_VAR, pv->u.var = h, pw->kind = PAT_WILD;
  Expr *m = expr_new(&A, EX_MATCH, S0);
  m->u.match.scrut = ev(x), m->u.match.n = 2;
  m->u.match.clauses = ARENA_ARRAY(&A, MatchClause, 2);
  m->u.match.clauses[0] = (MatchClause){pv, ev(h)},
  m->u.match.clauses[1] = (MatchClause){pw, f32(0)};
  CHECK(expr_nchildren(m) == 3 && expr_child(m, 2) == m->u.match.clauses[1].body);
  CHECK(expr_child_role(m, 0) == EXPR_OPERAND && expr_child_role(m, 1) == EXPR_BLOCK);
  CHECK(expr_child_slot(m, 1) == &m->u.match.clauses[0].body);
  seen = 0, expr_binders(m, 1, count_node, &seen);
  CHECK(seen == 1);
  seen = 0, expr_binders(m, 2, count_node, &seen);
  CHECK(seen == 0);
  Expr *mk[3] = {ev(y), expr_child(m, 1), f32(3)};
  Expr *m2 = expr_rebuild(&A, m, mk, 3);
  CHECK(m2->u.match.clauses != m->u.match.clauses && m2->u.match.clauses[0].pat == pv);
  CHECK(m->u.match.clauses[1].body->kind == EX_CONST && m2->u.match.clauses[1].body == mk[2]);
  /* A function: a new Function, the old one untouched. */
  Expr *fe = expr_fn(&A, mkfn(1, &x, ev(x)), S0);
  Expr *nb = f32(4), *fe2 = expr_rebuild(&A, fe, &nb, 1);
  CHECK(fe2->u.fn != fe->u.fn && fe2->u.fn->body == nb && fe->u.fn->body->kind == EX_VAR);
  CHECK(fe2->u.fn->params == fe->u.fn->params && expr_child_role(fe, 0) == EXPR_BLOCK);
  /* Pre-order, source order, pruned where visit says so. */
  Expr *t = expr_tuple(&A, 3, (Expr *[]){l, fe, m}, S0);
  StrBuf b = {0};
  expr_walk(t, walk_kinds, &b);
  char *order = sb_take(&b);
  CHECK_STREQ(order, "tuple let call op var constant var function match var var constant ");
  free(order);
}

static bool count_expr(void *ctx, Expr *e) { return ++*(int *)ctx, true; }

static void count_tvar(void *n, TirVar *v) { (void)v, ++*(int *)n; }

static bool count_load(void *ctx, const PrimExpr *e) {
  if (e->kind == PE_LOAD) ++*(int *)ctx;
  return true;
}

/* The walk handles 200,000 bindings without recursion; TIR walks, children and binders. */
static void test_walk_deep_and_tir(void) {
  /* 200,000 bindings: the walk keeps its own stack. */
  Expr *e = f32(0);
  for (int i = 0; i < 200000; i++) e = let(mkvar("v"), f32(i), e);
  int n = 0;
  expr_walk(e, count_expr, &n);
  CHECK(n == 400001);
  /* TIR: linear0 has 5 loads; a grid's ends are its expressions, its begins NULL. */
  PrimFunc *f = linear0();
  n = 0;
  TirVisitor v = {NULL, count_load, &n};
  tir_walk(f->body, &v);
  CHECK(n == 5);
  const Stmt *loop = f->body->u.seq.items[1];
  PtrVec ex = {0}, st = {0};
  stmt_children(loop, &ex, &st);
  CHECK(ex.len == 6 && ex.items[0] == NULL && ex.items[3] == loop->u.for_.hi[0]);
  CHECK(st.len == 1 && st.items[0] == loop->u.for_.body);
  vec_free(&ex), vec_free(&st);
  n = 0;
  stmt_binders(loop, count_tvar, &n);
  CHECK(n == 3);
  PrimExpr *tmp[2];
  PrimExpr *const *kids = prim_expr_children(pbin(PB_ADD, pint(1), pint(2)), tmp, &n);
  CHECK(n == 2 && kids[1]->u.i == 2);
}

/* Runs every test on one shared arena; the exit status is the failure report. */
/* Nodes take only their kind's bytes; copies and parameter devices keep
 * what they hold. */
static void test_node_sizes(void) {
  CHECK(expr_size(EX_VAR) == 24 && expr_size(EX_CONST) == 24 && expr_size(EX_LET) == 40);
  CHECK(expr_size(EX_CALL) == 40 && expr_size(EX_MATCH) == sizeof(Expr));
  CHECK(sizeof(Var) == 24);
  Var *v = var_new(&A, "x", NULL, S0);
  /* The name is the Var's own: a copy, "" for none. */
  char buf[] = "abc";
  Var *named = var_new_n(&A, buf, 2, NULL, S0), *anon = var_new(&A, NULL, NULL, S0);
  buf[0] = 'z';
  CHECK(strcmp(named->name, "ab") == 0 && var_named(named) && !var_named(anon) && !anon->name[0]);
  Expr *use = expr_var(&A, v, S0), *c = expr_copy(&A, use);
  CHECK(c != use && c->kind == EX_VAR && c->u.var == v && expr_equal(c, use));
  Expr *args[1] = {use};
  Expr *call = expr_call(&A, expr_global(&A, "f", S0), 1, args, NULL, S0);
  Expr *cc = expr_copy(&A, call);
  /* A call's arguments follow it and are copied with it. */
  CHECK(expr_bytes(call) == 48 && (void *)call->u.call.args == (void *)((char *)call + 40));
  CHECK(cc->u.call.nargs == 1 && cc->u.call.args[0] == use &&
        cc->u.call.args != call->u.call.args && expr_equal(cc, call));
  CHECK(var_device(v) == NULL);
  AttrValue *dev = attr_int(&A, 1, DT_INT32);
  Var *w = var_new_device(&A, "w", NULL, S0, dev);
  CHECK(var_device(w) == dev && strcmp(w->name, "w") == 0 && w->id != v->id);
  /* The kind sits in the span's spare byte: setting either keeps the other. */
  Expr *m = expr_new(&A, EX_MATCH, span_make(123456, 0xfffffe));
  CHECK(m->kind == EX_MATCH && m->span.off == 123456 && m->span.len == 0xfffffe);
  expr_set_span(m, use->span);
  CHECK(m->kind == EX_MATCH && m->span.off == 0 && m->span.len == 0);
  expr_set_span(use, span_make(7, (uint64_t)1 << 30)); /* clamped, not wrapped */
  CHECK(use->kind == EX_VAR && use->span.off == 7 && use->span.len == SPAN_LEN_MAX);
  w->is_free = true, w->is_graph = true;
  var_set_span(w, span_make(9, 3));
  CHECK(w->has_device && w->is_free && w->is_graph && w->span.off == 9 && w->span.len == 3);
  CHECK(!v->is_free && !v->is_graph && !v->has_device);
}

int main(void) {
  arena_init(&A);
  test_types();
  test_literals();
  test_float_text();
  test_attr_values();
  test_calls();
  test_tuples_refs();
  test_lets();
  test_names();
  test_control();
  test_functions();
  test_dag();
  test_module();
  test_tir();
  test_tir_loop_begin();
  test_equality();
  test_match_equality();
  test_deep();
  test_walk_relay();
  test_walk_deep_and_tir();
  test_node_sizes();
  arena_free(&A);
  return check_report("test_ir");
}
