/* test_graph_passes.c — unit tests of the graph passes (passes/graph.c):
 * FoldConstant, SimplifyInference and FoldScaleAxis.  Each rewrite's
 * printed result, the cases each pass must leave alone, the rewrites its
 * hook hears (and stopping), the values before and after (interpreter,
 * within stated tolerances), the conv → batch_norm → relu pipeline, and
 * million-binding chains on a 1 MiB stack. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "interp/interp.h"
#include "ops/ops.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "passes/rewrite.h"
#include "tests/unit/check.h"
#include "types/types.h"

typedef struct Run {
  Arena arena;
  DiagCtx d;
  Module *m;   /* the input */
  Module *out; /* after the passes (verified), or NULL */
  bool ok;
} Run;

/* Parses and checks src, then runs `passes` (a comma list) with verify on. */
static Run *run(const char *src, const char *passes) {
  Run *r = calloc(1, sizeof *r);
  arena_init(&r->arena);
  diag_init(&r->d);
  uint32_t f = diag_add_source(&r->d, "t.rly", src, strlen(src));
  r->m = module_new(&r->arena);
  if (!parse_module(r->m, &r->d, f) || !ty_check_module(r->m, &r->d)) {
    fprintf(stderr, "input rejected:\n%s\n", src);
    diag_render(&r->d, stderr, 0, false);
    return r;
  }
  PassOptions opt = pass_options_default();
  opt.verify = true;
  PassResult pr;
  r->ok = pass_pipeline(passes, r->m, &r->arena, &r->d, &opt, &pr);
  if (!r->ok) diag_render(&r->d, stderr, 0, false);
  r->out = pr.module;
  pass_result_free(&pr);
  return r;
}

static void done(Run *r) {
  if (r->out && r->out != r->m) module_free(r->out);
  module_free(r->m);
  diag_free(&r->d);
  arena_free(&r->arena);
  free(r);
}

/* The printed def @name of m (static buffer). */
static const char *def_text(Module *m, const char *name) {
  static char buf[16384];
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

/* The printed @main after the passes, or "(failed)". */
static const char *main_after(const char *src, const char *passes) {
  static char buf[16384];
  Run *r = run(src, passes);
  snprintf(buf, sizeof buf, "%s", r->ok ? def_text(r->out, "main") : "(failed)");
  done(r);
  return buf;
}

/* ───────────────────────────── values ───────────────────────────── */

enum { MAXV = 4096 };

static void flatten(const Value *v, double *out, int *n) {
  if (v->kind == V_TUPLE) {
    for (int i = 0; i < v->u.tuple.n; i++) flatten(v->u.tuple.fields[i], out, n);
    return;
  }
  if (v->kind != V_TENSOR) return;
  for (int64_t i = 0; i < v->u.tensor->numel && *n < MAXV; i++)
    out[(*n)++] = rt_get_f64(v->u.tensor, i);
}

/* The elements of `call` evaluated against m by the interpreter; -1 on errors. */
static int eval_values(Module *m, const char *call, double *out) {
  DiagCtx d;
  diag_init(&d);
  Interp *in = interp_new(&d);
  uint32_t f = diag_add_source(&d, "<call>", call, strlen(call));
  Expr *e = parse_expr(m, &d, f, NULL);
  int n = -1;
  Value *v = e && ty_check_expr(m, e, &d) ? interp_eval(in, m, e) : NULL;
  if (v) n = 0, flatten(v, out, &n);
  if (!v) diag_render(&d, stderr, 0, false);
  interp_free(in);
  diag_free(&d);
  return n;
}

/* `call` gives the same values before and after the passes, within
 * |a - b| <= atol + rtol * |a| elementwise, printing the first element that is not. */
static bool same_values(Run *r, const char *call, double rtol, double atol) {
  static double a[MAXV], b[MAXV];
  int na = eval_values(r->m, call, a), nb = r->out ? eval_values(r->out, call, b) : -2;
  if (na <= 0 || na != nb) {
    fprintf(stderr, "same_values: %d vs %d values for %s\n", na, nb, call);
    return false;
  }
  for (int i = 0; i < na; i++)
    if (!(fabs(a[i] - b[i]) <= atol + rtol * fabs(a[i]))) {
      fprintf(stderr, "same_values: element %d: %.9g vs %.9g for %s\n", i, a[i], b[i], call);
      return false;
    }
  return true;
}

/* The values stay within float32 rounding of a few operations. */
#define RTOL 1e-5
#define ATOL 1e-6

/* ───────────────────────────── FoldConstant ───────────────────────────── */

static void test_fold_basic(void) {
  /* calls on constants, a tuple result and its projection through a
   * temporary, a tuple argument, a let-bound constant inlined */
  CHECK_STREQ(main_after("def @main(%x: Tensor[(2), float32]) {\n"
                         "  %0 = add([1f, 2f], multiply(3f, [0.5f, 0.25f]));\n"
                         "  %1 = split([1f, 2f, 3f, 4f], indices_or_sections=2);\n"
                         "  let %c = [[1i64, 2i64]];\n"
                         "  %2 = concatenate((%c, %c));\n"
                         "  (add(%x, add(%0, %1.1)), %2, (%x, %0).1)\n"
                         "}\n",
                         "FoldConstant"),
              "def @main(%x: Tensor[(2), float32]) {\n"
              "  (add(%x, [5.5f, 6.75f]), [[1i64, 2i64], [1i64, 2i64]], [2.5f, 2.75f])\n"
              "}");
  /* static shapes fold without a kernel; `?` does not */
  CHECK_STREQ(main_after("def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(?), float32]) {\n"
                         "  (shape_of(%x), shape_of(%x, dtype=\"int64\"), ndarray_size(%x),\n"
                         "   shape_of(%y))\n"
                         "}\n",
                         "FoldConstant"),
              "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(?), float32]) {\n"
              "  ([2, 3], [2i64, 3i64], 6, shape_of(%y))\n"
              "}");
  /* batch_norm on constants: its tuple folds, and so does the projection */
  Run *r =
      run("def @main() {\n"
          "  %0 = nn.batch_norm([[1f, 2f], [3f, 4f]], [1f, 2f], [0f, 1f], [1f, 1f], [4f, 1f],"
          " epsilon=0f);\n"
          "  %0.0\n"
          "}\n",
          "FoldConstant");
  CHECK_STREQ(def_text(r->out, "main"), "def @main() {\n  [[0f, 3f], [1f, 7f]]\n}");
  CHECK(same_values(r, "@main()", 0, 0));
  done(r);
}

/* What FoldConstant leaves alone. */
static void test_fold_skips(void) {
  const char *src =
      "def @main(%x: Tensor[(2), float32]) {\n"
      "  %0 = zeros(shape=[2, 2], dtype=\"float32\");\n"
      "  %1 = full(1f, shape=[1025, 1024], dtype=\"float32\");\n"
      "  %2 = divide(1, 0);\n"
      "  %3 = random.uniform(random.key(0), shape=[2]);\n"
      "  %4 = nn.dropout_train([1f, 2f], random.key(1));\n"
      "  %5 = shape_of(7f);\n"
      "  (%0, %1, %2, %3, %4.0, %5)\n"
      "}\n";
  Run *r = run(src, "FoldConstant");
  CHECK(r->ok);
  CHECK(r->out && strcmp(def_text(r->m, "main"), def_text(r->out, "main")) == 0);
  done(r);
  /* a result as large as its largest argument folds, larger ones do not */
  CHECK_STREQ(main_after("def @main() {\n"
                         "  (broadcast_to([1f, 2f], shape=[2, 2]), full(1f, shape=[2], "
                         "dtype=\"float32\"))\n"
                         "}\n",
                         "FoldConstant"),
              "def @main() {\n  ([[1f, 2f], [1f, 2f]], [1f, 1f])\n}");
}

static bool record(void *user, const PassRewrite *rw) {
  StrBuf *b = user;
  sb_printf(b, "%s%s", b->len ? " " : "", rw->rule);
  return !strstr(b->data, "STOP");
}

typedef struct Stopper {
  int n, stop_at;
} Stopper;

static bool stop_at(void *user, const PassRewrite *rw) {
  (void)rw;
  Stopper *s = user;
  return ++s->n != s->stop_at;
}

/* The hook hears each rule in evaluation order; stopping leaves nothing. */
static void test_fold_hook(void) {
  const char *src =
      "def @main(%x: Tensor[(2), float32]) {\n"
      "  let %c = [1f, 2f];\n"
      "  %0 = (negative(%c), %x);\n"
      "  (add(%x, %0.0), shape_of(%x))\n"
      "}\n";
  Run *r = run(src, "FoldConstant");
  StrBuf heard = {0};
  PassHook hook = {record, &heard};
  Module *out = pass_run(pass_lookup("FoldConstant"), r->m, &r->arena, &r->d, &hook);
  CHECK(out != NULL);
  CHECK_STREQ(heard.data, "inline fold fold-proj fold-shape");
  if (out) module_free(out);
  sb_free(&heard);
  Stopper s = {0, 2};
  hook = (PassHook){stop_at, &s};
  CHECK(pass_run(pass_lookup("FoldConstant"), r->m, &r->arena, &r->d, &hook) == NULL);
  CHECK(s.n == 2 && r->d.nerrors == 0);
  done(r);
  /* the reference kernels need no engine: folding works in a bare program */
  CHECK_STREQ(main_after("def @main(%x: Tensor[(2), float32]) {\n"
                         "  (negative([1f]), shape_of(%x), ([1f], %x).0)\n"
                         "}\n",
                         "FoldConstant"),
              "def @main(%x: Tensor[(2), float32]) {\n  ([-1f], [2], [1f])\n}");
}

/* ───────────────────────────── SimplifyInference ───────────────────────────── */

static const char *bn_src =
    "def @main(%x: Tensor[(1, 2, 2, 2), float32], %g: Tensor[(2), float32],"
    " %b: Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
    "  %0 = nn.batch_norm(%x, %g, %b, %m, %v);\n"
    "  %1 = %0.0;\n"
    "  nn.relu(%1)\n"
    "}\n";

static const char *bn_args =
    "[[[[1f, -2f], [0.5f, 3f]], [[4f, 0f], [-1f, 2f]]]], [2f, 0.5f], [0.1f, -0.2f], [1f, 2f],"
    " [4f, 0.25f]";

static void test_simplify_batch_norm(void) {
  Run *r = run(bn_src, "SimplifyInference");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(1, 2, 2, 2), float32], %g: Tensor[(2), float32], %b: "
              "Tensor[(2), float32], %m: Tensor[(2), float32], %v: Tensor[(2), float32]) {\n"
              "  %0 = multiply(%x, expand_dims(multiply(divide(1f, sqrt(add(%v, 1e-05f))), "
              "%g), axis=1, num_newaxis=2));\n"
              "  %1 = add(%0, expand_dims(add(multiply(negative(%m), "
              "multiply(divide(1f, sqrt(add(%v, 1e-05f))), %g)), %b), axis=1, num_newaxis=2));\n"
              "  nn.relu(%1)\n"
              "}");
  char call[512];
  snprintf(call, sizeof call, "@main(%s)", bn_args);
  CHECK(same_values(r, call, RTOL, ATOL));
  done(r);
  /* NHWC (the channel axis last: no expand_dims), no scale, no center */
  CHECK_STREQ(main_after("def @main(%x: Tensor[(1, 2, 2), float32], %g: Tensor[(2), float32]) {\n"
                         "  nn.batch_norm(%x, %g, %g, %g, %g, axis=-1, epsilon=0.5f, "
                         "center=False, scale=False).0\n"
                         "}\n",
                         "SimplifyInference"),
              "def @main(%x: Tensor[(1, 2, 2), float32], %g: Tensor[(2), float32]) {\n"
              "  %0 = multiply(%x, divide(1f, sqrt(add(%g, 0.5f))));\n"
              "  add(%0, multiply(negative(%g), divide(1f, sqrt(add(%g, 0.5f)))))\n"
              "}");
}

/* The tuple used twice: atoms are copied and the call stays for `.1`; a
 * computed argument would be computed twice, so nothing changes. */
static void test_simplify_uses(void) {
  const char *atoms =
      "def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32]) {\n"
      "  %0 = nn.batch_norm(%x, %g, %g, %g, %g, epsilon=1f);\n"
      "  (%0.0, %0.1)\n"
      "}\n";
  Run *r = run(atoms, "SimplifyInference");
  const char *t = def_text(r->out, "main");
  CHECK(strstr(t, "nn.batch_norm(%x, %g, %g, %g, %g, epsilon=1f);") && strstr(t, "%0.1)"));
  CHECK(strstr(t, " = multiply(%x,") != NULL);
  CHECK(same_values(r, "@main([[1f, 2f]], [0.5f, 3f])", RTOL, ATOL));
  done(r);
  const char *computed =
      "def @main(%x: Tensor[(1, 2), float32], %g: Tensor[(2), float32]) {\n"
      "  %0 = nn.batch_norm(exp(%x), %g, %g, %g, %g, epsilon=1f);\n"
      "  (%0.0, %0.1)\n"
      "}\n";
  r = run(computed, "SimplifyInference");
  CHECK(r->ok && strcmp(def_text(r->m, "main"), def_text(r->out, "main")) == 0);
  done(r);
  /* dropout (one argument) is its input; the `.1` index is not rewritten */
  CHECK_STREQ(main_after("def @main(%x: Tensor[(3), float32]) {\n"
                         "  %0 = exp(%x);\n"
                         "  %1 = nn.dropout(%0, rate=0.3f);\n"
                         "  %2 = %1.0;\n"
                         "  (nn.relu(%2), nn.dropout(%x).1)\n"
                         "}\n",
                         "SimplifyInference"),
              "def @main(%x: Tensor[(3), float32]) {\n"
              "  %0 = exp(%x);\n"
              "  (nn.relu(%0), (nn.dropout(%x)).1)\n"
              "}");
}

/* layer_norm, instance_norm, group_norm and l2_normalize decomposed; the
 * same values as their kernels (which compute in float64) within RTOL. */
static void test_simplify_norms(void) {
  const char *src =
      "def @main(%x: Tensor[(2, 4, 3), float32], %g: Tensor[(4), float32],"
      " %h: Tensor[(3), float32]) {\n"
      "  (nn.layer_norm(%x, %h, %h),\n"
      "   nn.layer_norm(exp(%x), %g, %g, axis=1, center=False),\n"
      "   nn.instance_norm(%x, %g, %g, epsilon=0.001f),\n"
      "   nn.group_norm(%x, %g, %g, num_groups=2, scale=False),\n"
      "   nn.l2_normalize(%x, eps=0.01f, axis=[1, 2]))\n"
      "}\n";
  Run *r = run(src, "SimplifyInference");
  const char *t = def_text(r->out, "main");
  CHECK(r->ok && !strstr(t, "nn.layer_norm") && !strstr(t, "nn.instance_norm") &&
        !strstr(t, "nn.group_norm") && !strstr(t, "nn.l2_normalize"));
  /* exp(%x) is computed once, bound to a temporary */
  CHECK(strstr(t, "= exp(%x);") != NULL);
  const char *call =
      "@main([[[1f, 2f, 3f], [0.5f, -1f, 2f], [4f, 0f, 1f], [-2f, 1f, 0.25f]],"
      " [[0f, 1f, 0f], [3f, 3f, 1f], [1f, -1f, 2f], [0.5f, 0.5f, 8f]]],"
      " [1.5f, -0.5f, 2f, 1f], [0.25f, 1f, -1f])";
  CHECK(same_values(r, call, RTOL, ATOL));
  done(r);
}

/* ───────────────────────────── FoldScaleAxis ───────────────────────────── */

/* conv2d (2 → 2 channels, 1x1) and a scale S per output channel. */
#define CONV_HEAD                                    \
  "def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n" \
  "  %0 = nn.conv2d(%x, [[[[1f]], [[2f]]], [[[3f]], [[-1f]]]]);\n"
#define X_ARG "@main([[[[1f, -2f], [0.5f, 3f]], [[4f, 0f], [-1f, 2f]]]])"

static void test_fsa_backward(void) {
  Run *r = run(CONV_HEAD
               "  %1 = add(%0, [[[0.5f]], [[-0.5f]]]);\n"
               "  %2 = multiply(%1, [[[2f]], [[0.25f]]]);\n"
               "  nn.relu(%2)\n"
               "}\n",
               "FoldScaleAxis");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n"
              "  %0 = nn.conv2d(%x, multiply([[[[1f]], [[2f]]], [[[3f]], [[-1f]]]], "
              "reshape([[[2f]], [[0.25f]]], newshape=[2, 1, 1, 1])));\n"
              "  %1 = add(%0, multiply([[[0.5f]], [[-0.5f]]], [[[2f]], [[0.25f]]]));\n"
              "  nn.relu(%1)\n"
              "}");
  CHECK(same_values(r, X_ARG, RTOL, ATOL));
  done(r);
  /* through a relu, a positive scale (either operand order) */
  r = run(CONV_HEAD "  %1 = nn.relu(%0);\n  multiply([[[2f]], [[0.25f]]], %1)\n}\n",
          "FoldScaleAxis,FoldConstant");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n"
              "  %0 = nn.conv2d(%x, [[[[2f]], [[4f]]], [[[0.75f]], [[-0.25f]]]]);\n"
              "  nn.relu(%0)\n"
              "}");
  CHECK(same_values(r, X_ARG, RTOL, ATOL));
  done(r);
  /* a grouped conv: its output channels are the weight's O axis all the same */
  r =
      run("def @main(%x: Tensor[(1, 4, 2, 2), float32]) {\n"
          "  %0 = nn.conv2d(%x, [[[[1f]], [[2f]]], [[[3f]], [[-1f]]], [[[0.5f]], [[1f]]],"
          " [[[2f]], [[2f]]]], groups=2);\n"
          "  multiply(%0, [[[2f]], [[0.25f]], [[-1f]], [[3f]]])\n"
          "}\n",
          "FoldScaleAxis,FoldConstant");
  CHECK(r->ok && !strstr(def_text(r->out, "main"), "multiply"));
  CHECK(same_values(r,
                    "@main([[[[1f, -2f], [0.5f, 3f]], [[4f, 0f], [-1f, 2f]], [[1f, 1f], [2f, 2f]],"
                    " [[0f, -1f], [3f, 0.5f]]]])",
                    RTOL, ATOL));
  done(r);
  /* dense: the rows of the weight */
  r =
      run("def @main(%x: Tensor[(3, 2), float32]) {\n"
          "  multiply(nn.bias_add(nn.dense(%x, [[1f, 2f], [3f, 4f]]), [1f, -1f], axis=-1),"
          " [0.5f, 3f])\n"
          "}\n",
          "FoldScaleAxis,FoldConstant");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(3, 2), float32]) {\n"
              "  nn.bias_add(nn.dense(%x, [[0.5f, 1f], [9f, 12f]]), [0.5f, -3f], axis=-1)\n"
              "}");
  CHECK(same_values(r, "@main([[1f, 2f], [-1f, 0.5f], [3f, 3f]])", RTOL, ATOL));
  done(r);
}

/* What FoldScaleAxis must leave alone. */
static void test_fsa_guards(void) {
  const char *cases[] = {
      /* the conv's output is used twice */
      CONV_HEAD "  (multiply(%0, [[[2f]], [[3f]]]), %0)\n}\n",
      /* a relu and a scale that is not positive */
      CONV_HEAD "  multiply(nn.relu(%0), [[[2f]], [[-3f]]])\n}\n",
      /* a scale along another axis (the width) */
      CONV_HEAD "  multiply(%0, [2f, 3f])\n}\n",
      /* a scale computed from a temporary bound after the conv */
      CONV_HEAD "  %1 = exp([[[2f]], [[3f]]]);\n  multiply(%0, %1)\n}\n",
      /* forward into a grouped (not depthwise) conv */
      "def @main(%x: Tensor[(1, 4, 1, 1), float32]) {\n"
      "  nn.conv2d(multiply(%x, [[[1f]], [[2f]], [[3f]], [[4f]]]), "
      "ones(shape=[2, 2, 1, 1], dtype=\"float32\"), groups=2)\n}\n",
      /* forward into a depthwise conv with two outputs per channel */
      "def @main(%x: Tensor[(1, 2, 1, 1), float32]) {\n"
      "  nn.conv2d(multiply(%x, [[[1f]], [[2f]]]), "
      "ones(shape=[4, 1, 1, 1], dtype=\"float32\"), groups=2)\n}\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    Run *r = run(cases[i], "FoldScaleAxis");
    CHECK(r->ok && strcmp(def_text(r->m, "main"), def_text(r->out, "main")) == 0);
    if (!r->ok || strcmp(def_text(r->m, "main"), def_text(r->out, "main")) != 0)
      fprintf(stderr, "case %zu changed:\n%s\n", i, def_text(r->out, "main"));
    done(r);
  }
}

static void test_fsa_forward(void) {
  /* multiply → relu → conv: the scale goes onto the weight's input axis */
  Run *r =
      run("def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n"
          "  %0 = multiply(%x, [[[2f]], [[3f]]]);\n"
          "  %1 = nn.relu(%0);\n"
          "  nn.conv2d(%1, [[[[1f]], [[2f]]], [[[3f]], [[-1f]]]])\n"
          "}\n",
          "FoldScaleAxis,FoldConstant");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(1, 2, 2, 2), float32]) {\n"
              "  %0 = nn.relu(%x);\n"
              "  nn.conv2d(%0, [[[[2f]], [[6f]]], [[[6f]], [[-3f]]]])\n"
              "}");
  CHECK(same_values(r, X_ARG, RTOL, ATOL));
  done(r);
  /* depthwise: onto the output axis; dense: onto the columns */
  r =
      run("def @main(%x: Tensor[(1, 2, 2, 2), float32], %y: Tensor[(1, 2), float32]) {\n"
          "  (nn.conv2d(multiply(%x, [[[2f]], [[3f]]]), [[[[1f]]], [[[-1f]]]], groups=2),\n"
          "   nn.dense(multiply(%y, [2f, 3f]), [[1f, 1f], [0.5f, 2f]]))\n"
          "}\n",
          "FoldScaleAxis,FoldConstant");
  CHECK_STREQ(def_text(r->out, "main"),
              "def @main(%x: Tensor[(1, 2, 2, 2), float32], %y: Tensor[(1, 2), float32]) {\n"
              "  (nn.conv2d(%x, [[[[2f]]], [[[-3f]]]], groups=2), nn.dense(%y, [[2f, 3f], [1f, "
              "6f]]))\n"
              "}");
  CHECK(same_values(r, "@main([[[[1f, -2f], [0.5f, 3f]], [[4f, 0f], [-1f, 2f]]]], [[1f, -1f]])",
                    RTOL, ATOL));
  done(r);
}

/* conv → batch_norm → relu, twice, and a dense: SimplifyInference,
 * FoldConstant, FoldScaleAxis, FoldConstant leave convs with new weights,
 * adds and relus. */
static const char *cnn_src =
    "def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n"
    "  %0 = nn.conv2d(%x, [[[[1f, 0f], [0f, 1f]], [[0.5f, 0.5f], [-1f, 0f]]],"
    " [[[2f, 1f], [0f, 0f]], [[0f, 0f], [1f, 1f]]]], padding=[1, 1, 1, 1]);\n"
    "  %1 = nn.batch_norm(%0, [2f, 0.5f], [0.1f, -0.2f], [1f, 2f], [4f, 0.25f]);\n"
    "  %2 = %1.0;\n"
    "  %3 = nn.relu(%2);\n"
    "  %4 = nn.conv2d(%3, [[[[1f]], [[-1f]]], [[[0.5f]], [[2f]]]]);\n"
    "  %5 = nn.batch_norm(%4, [1f, 3f], [0f, 1f], [0.5f, -1f], [2f, 9f], epsilon=0.001f);\n"
    "  %6 = nn.relu(%5.0);\n"
    "  %7 = nn.batch_flatten(nn.global_avg_pool2d(%6));\n"
    "  nn.dense(%7, [[1f, 2f], [-1f, 1f], [0f, 3f]])\n"
    "}\n";

static void test_pipeline(void) {
  Run *r = run(cnn_src, "SimplifyInference,FoldConstant,FoldScaleAxis,FoldConstant");
  const char *t = def_text(r->out, "main");
  CHECK(r->ok && !strstr(t, "batch_norm") && !strstr(t, "multiply") && !strstr(t, "expand_dims"));
  /* each conv is followed by one add of a constant and the relu */
  CHECK(strstr(t, "%1 = add(%0, [[[") && strstr(t, "%2 = nn.relu(%1);"));
  CHECK(strstr(t, "%3 = nn.conv2d(%2, [[[[") && strstr(t, "%4 = nn.relu(add(%3, [[["));
  CHECK(same_values(r,
                    "@main([[[[1f, -2f, 0.5f], [3f, 4f, 0f], [-1f, 2f, 1f]],"
                    " [[0f, 1f, 2f], [-3f, 0.5f, 1f], [2f, 2f, -2f]]]])",
                    RTOL, ATOL));
  done(r);
}

/* ───────────────────────────── deep chains ───────────────────────────── */

enum { DEEP = 1000000 };

/* def @deep(%x) { %0 = add(start, 1f); %1 = add(%0, 1f); ... }: start is
 * the constant 0f or the parameter %x. */
static Module *deep_module(Arena *a, bool constant) {
  Module *m = module_new(a);
  Span sp = {0};
  Var *x = var_new(a, "x", type_scalar(a, DT_FLOAT32), sp);
  Expr *prev = constant ? expr_scalar_f64(a, DT_FLOAT32, 0, sp) : expr_var(a, x, sp);
  Var **vs = malloc(sizeof(Var *) * DEEP);
  Expr **vals = malloc(sizeof(Expr *) * DEEP);
  for (int i = 0; i < DEEP; i++) {
    Expr *args[2] = {prev, expr_scalar_f64(a, DT_FLOAT32, 1, sp)};
    vs[i] = rw_graph_var(a, sp);
    vals[i] = expr_call(a, ops_expr(a, ops_lookup("add"), sp), 2,
                        arena_memdup(a, args, sizeof args), NULL, sp);
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

/* The three passes over million-binding chains; run on a small-stack
 * thread.  The constant chain folds to one constant. */
static void *deep_thread(void *arg) {
  int *ok = arg;
  const char *names[] = {"FoldConstant", "SimplifyInference", "FoldScaleAxis"};
  *ok = 1;
  for (int c = 0; c < 2; c++) {
    Arena a;
    arena_init(&a);
    DiagCtx d;
    diag_init(&d);
    Module *m = deep_module(&a, c == 0);
    for (int i = 0; i < 3; i++) {
      Module *out = pass_run(pass_lookup(names[i]), m, &a, &d, NULL);
      if (!out) {
        *ok = 0;
        continue;
      }
      Expr *body = module_func(out, "deep")->fn->body;
      if (c == 0 && i == 0)
        *ok &= body->kind == EX_CONST && tensor_get_f64(body->u.konst.value, 0) == DEEP;
      module_free(out);
    }
    module_free(m);
    diag_free(&d);
    arena_free(&a);
  }
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
  test_fold_basic();
  test_fold_skips();
  test_fold_hook();
  test_simplify_batch_norm();
  test_simplify_uses();
  test_simplify_norms();
  test_fsa_backward();
  test_fsa_guards();
  test_fsa_forward();
  test_pipeline();
  test_deep();
  return check_report("test_graph_passes");
}
