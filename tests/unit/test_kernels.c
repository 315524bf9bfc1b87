/* test_kernels.c — unit tests of run-time tensors and the kernel table:
 * reference counts, views sharing buffers, allocation failures as errors,
 * run-time kernel errors with their messages, and that every registered op
 * (except the PRNG ops and call_tir) has a kernel.  Values against numpy
 * are tested by tests/kernels_numpy.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"
#include "kernels/kernels.h"
#include "tests/unit/check.h"

static Arena A;

/* ── helpers ── */

static RtTensor *tensor_f32(int ndim, const int64_t *shape, const float *vals) {
  RtTensor *t = rt_tensor_new(DT_FLOAT32, ndim, shape, NULL, 0);
  if (t && vals) memcpy(t->data, vals, rt_tensor_nbytes(t));
  return t;
}

static RtTensor *tensor_i32(int ndim, const int64_t *shape, const int32_t *vals) {
  RtTensor *t = rt_tensor_new(DT_INT32, ndim, shape, NULL, 0);
  if (t && vals) memcpy(t->data, vals, rt_tensor_nbytes(t));
  return t;
}

static AttrValue *int_list(int n, const int64_t *v) {
  AttrValue *l = ARENA_NEW(&A, AttrValue);
  l->kind = AV_LIST;
  l->u.list.n = n;
  l->u.list.items = ARENA_ARRAY(&A, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) l->u.list.items[i] = attr_int(&A, v[i], DT_INT32);
  return l;
}

/* Attributes from (key, value) pairs. */
static Attrs *attrs1(const char *k, AttrValue *v) {
  Attrs *a = attrs_new(&A, 1);
  a->keys[0] = k, a->vals[0] = v;
  return a;
}

static Attrs *attrs2(const char *k1, AttrValue *v1, const char *k2, AttrValue *v2) {
  Attrs *a = attrs_new(&A, 2);
  a->keys[0] = k1, a->vals[0] = v1, a->keys[1] = k2, a->vals[1] = v2;
  return a;
}

/* Runs op with one output expected; NULL on failure (message in kx->err). */
static RtTensor *run1(KernelCtx *kx, const char *op, int nin, RtTensor **in, const Attrs *attrs) {
  RtTensor *out[4];
  int n = 0;
  if (!kernels_infer_and_run(kx, ops_lookup(op), nin, in, attrs, 4, &n, out)) return NULL;
  CHECK(n == 1);
  for (int i = 1; i < n; i++) rt_tensor_release(out[i]);
  return out[0];
}

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* ── run-time tensors ── */

/* Reference counts, 64-byte alignment, zero fill, scalars and empty tensors. */
static void test_refcounts(void) {
  int64_t shape[2] = {2, 3};
  RtTensor *t = rt_tensor_zeros(DT_FLOAT32, 2, shape, NULL, 0);
  CHECK(t && t->refs == 1 && t->numel == 6 && t->buf->refs == 1);
  CHECK(((uintptr_t)t->data & 63) == 0);
  CHECK(((float *)t->data)[5] == 0);
  CHECK(rt_tensor_retain(t) == t && t->refs == 2);
  rt_tensor_release(t);
  CHECK(t->refs == 1);
  rt_tensor_release(t);
  rt_tensor_release(NULL);

  RtTensor *s = rt_tensor_new(DT_INT64, 0, NULL, NULL, 0); /* a scalar */
  CHECK(s && s->numel == 1 && rt_tensor_nbytes(s) == 8);
  rt_tensor_release(s);
  int64_t empty[2] = {0, 5};
  RtTensor *e = rt_tensor_new(DT_FLOAT16, 2, empty, NULL, 0);
  CHECK(e && e->numel == 0 && e->data && ((uintptr_t)e->data & 63) == 0);
  rt_tensor_release(e);
}

static void test_views(void) {
  int64_t shape[2] = {2, 3}, flat[1] = {6}, bad[1] = {5};
  float v[6] = {1, 2, 3, 4, 5, 6};
  RtTensor *t = tensor_f32(2, shape, v);
  char err[RT_ERR_LEN];
  RtTensor *w = rt_tensor_view(t, 1, flat, err, sizeof err);
  CHECK(w && rt_tensor_shares_buffer(t, w) && w->data == t->data && t->buf->refs == 2);
  CHECK(!rt_tensor_view(t, 1, bad, err, sizeof err));
  CHECK_STREQ(err, "cannot view a tensor of shape (2, 3) as shape (5)");
  rt_tensor_release(t); /* the view keeps the buffer alive */
  CHECK(w->buf->refs == 1 && ((float *)w->data)[5] == 6);
  rt_tensor_release(w);
}

static void test_buffer_cache(void) {
  int64_t big[1] = {100000};
  RtTensor *a = rt_tensor_new(DT_FLOAT32, 1, big, NULL, 0);
  void *p = a->data;
  rt_tensor_release(a); /* large: kept for reuse */
  RtTensor *b = rt_tensor_new(DT_INT32, 1, big, NULL, 0);
  CHECK(b && b->data == p && b->refs == 1 && b->buf->refs == 1 && b->buf->nbytes == 400000);
  int64_t other[1] = {100001};
  RtTensor *c = rt_tensor_new(DT_FLOAT32, 1, other, NULL, 0);
  CHECK(c && c->data != p);
  rt_tensor_release(b), rt_tensor_release(c);
  rt_cache_trim();
}

/* Huge, overflowing, negative and over-limit shapes are errors with messages, also in kernels. */
static void test_alloc_failure(void) {
  char err[RT_ERR_LEN];
  int64_t huge[2] = {250000, 1000000}; /* 1e12 bytes of float32 */
  CHECK(!rt_tensor_new(DT_FLOAT32, 2, huge, err, sizeof err));
  CHECK(starts_with(err, "cannot allocate 1e+12 bytes"));
  int64_t over[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 4};
  CHECK(!rt_tensor_new(DT_FLOAT64, 3, over, err, sizeof err));
  CHECK_STREQ(err,
              "cannot allocate a float64 tensor of shape (1099511627776, 1099511627776, 4): its "
              "size overflows");
  int64_t neg[2] = {3, -1};
  CHECK(!rt_tensor_new(DT_INT8, 2, neg, err, sizeof err));
  CHECK_STREQ(err, "negative dimension in shape (3, -1)");
  CHECK(!rt_tensor_new(DT_INT8, TENSOR_MAX_RANK + 1, neg, err, sizeof err));
  CHECK(starts_with(err, "tensor rank 33 is over the limit"));
  size_t old = rt_max_bytes();
  rt_set_max_bytes(1000);
  int64_t small[1] = {300};
  CHECK(!rt_tensor_new(DT_INT32, 1, small, err, sizeof err));
  CHECK_STREQ(err,
              "cannot allocate 1200 bytes: more than the memory limit (1000 bytes; :set "
              "max-memory SIZE)");
  CHECK(!rt_tensor_new(DT_INT32, 1, small, NULL, 0)); /* no message buffer: still fine */
  rt_set_max_bytes(old);

  /* The limit is on the data alive at once: a second tensor that would
   * pass it fails, and fits again once the first is released. */
  rt_cache_trim(), rt_pool_trim();
  size_t base = rt_live_bytes();
  rt_set_max_bytes(base + 200000);
  int64_t part[1] = {30000}; /* 120000 bytes */
  RtTensor *first = rt_tensor_new(DT_INT32, 1, part, err, sizeof err);
  CHECK(first != NULL);
  CHECK(rt_live_bytes() >= base + 120000);
  CHECK(!rt_tensor_new(DT_INT32, 1, part, err, sizeof err));
  CHECK(starts_with(err, "cannot allocate 120000 bytes: the memory limit ("));
  CHECK(strstr(err, "being in use (:set max-memory SIZE)") != NULL);
  rt_tensor_release(first); /* its buffer waits in the cache, still counted, for reuse */
  RtTensor *second = rt_tensor_new(DT_INT32, 1, part, err, sizeof err);
  CHECK(second != NULL);
  rt_tensor_release(second);
  rt_set_max_bytes(old);

  /* A kernel whose output is too large reports the allocation error. */
  KernelCtx kx;
  kernel_ctx_init(&kx);
  int64_t shp[2] = {250000, 1000000};
  Attrs *a = attrs1("shape", int_list(2, shp));
  CHECK(!run1(&kx, "zeros", 0, NULL, a));
  CHECK(starts_with(kx.err, "cannot allocate 1e+12 bytes"));
  kernel_ctx_free(&kx);
}

static void test_ir_conversion(void) {
  int64_t shape[2] = {2, 2};
  Tensor *c = tensor_new(&A, DT_INT16, 2, shape);
  for (int i = 0; i < 4; i++) tensor_set_i64(c, i, i * 10 - 5);
  RtTensor *r = rt_tensor_from_ir(c, NULL, 0);
  CHECK(r && r->dtype == DT_INT16 && r->ndim == 2 && rt_get_i64(r, 3) == 25 && r->data != c->data);
  Tensor *back = rt_tensor_to_ir(&A, r);
  CHECK(tensor_equal(back, c));
  RtTensor *b = rt_tensor_borrow_ir(c, NULL, 0);
  CHECK(b && b->data == c->data && b->buf->borrowed && rt_get_f64(b, 0) == -5);
  Tensor view = rt_tensor_as_ir(r);
  CHECK(view.data == r->data && view.numel == 4 && tensor_equal(&view, c));
  rt_tensor_release(r);
  rt_tensor_release(b);
}

/* A context counts only the data it owns: borrowing an IR constant's data
 * and freeing it leave the count as it was; two contexts count apart. */
static void test_ctx_counts(void) {
  int64_t shape[1] = {3};
  Tensor *c = tensor_new(&A, DT_FLOAT32, 1, shape);
  RtCtx *x = rt_ctx_new(), *prev = rt_ctx_enter(x);
  rt_set_max_bytes(1 << 20);
  for (int i = 0; i < 3; i++) {
    rt_tensor_release(rt_tensor_borrow_ir(c, NULL, 0));
    rt_pool_trim();
  }
  CHECK(rt_live_bytes() == 0);
  RtTensor *t = rt_tensor_new(DT_FLOAT32, 1, shape, NULL, 0);
  CHECK(t && rt_live_bytes() == RT_ALIGN && rt_max_bytes() == 1 << 20);
  rt_ctx_enter(prev);
  CHECK(rt_max_bytes() != 1 << 20); /* the other context's limit */
  rt_tensor_release(t);             /* counted against its own context, from any */
  rt_ctx_enter(x);
  CHECK(rt_live_bytes() == RT_ALIGN); /* kept in x's free list */
  rt_pool_trim();
  CHECK(rt_live_bytes() == 0);
  rt_ctx_enter(prev);
  rt_ctx_free(x);
}

/* float16 rounding from double agrees with the float version on floats,
 * and rounds once on doubles. */
static void test_half(void) {
  uint32_t seed = 1;
  int bad = 0;
  for (int i = 0; i < 200000; i++) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t bits = seed;
    float f;
    memcpy(&f, &bits, 4);
    if (rt_double_to_half(f) != float_to_half(f) && !isnan(f)) bad++;
  }
  CHECK(bad == 0);
  CHECK(rt_double_to_half(1 + 0x1p-11 + 0x1p-30) == 0x3c01); /* above the tie: up */
  CHECK(rt_double_to_half(1 + 0x1p-11) == 0x3c00);           /* the tie: to even */
  CHECK(rt_double_to_half(65520.0) == 0x7c00 && rt_double_to_half(65519.99) == 0x7bff);
  CHECK(rt_double_to_half(0x1p-25) == 0 && rt_double_to_half(0x1.000001p-25) == 1);
  CHECK(rt_double_to_half(-0.0) == 0x8000 && (rt_double_to_half(NAN) & 0x7c00) == 0x7c00);
}

/* ── kernels ── */

/* Every registered op runs in the interpreter with every argument count its
 * row allows: by its kernel (registered at its registry index, under its
 * own name), or call_tir, the ops on keys, the device annotations (identity)
 * and the VM's memory ops by their own runners (interp/vm_ops.c). */
static void test_every_op_has_a_kernel(void) {
  int missing = 0;
  for (int i = 0; i < ops_count(); i++) {
    const OpDef *d = ops_get(i);
    const KernelDef *k = kernels_get(i);
    CHECK(!k || strcmp(k->name, d->name) == 0);
    int hi = d->max_args < 0 ? d->min_args : d->max_args;
    for (int n = d->min_args; n <= hi; n++) {
      if (k || random_handles(i, n) || (d->flags & (OP_CALL_TIR | OP_IDENTITY | OP_OWN_RUNNER)))
        continue;
      fprintf(stderr, "no kernel for op %s with %d arguments\n", d->name, n);
      missing++;
    }
  }
  CHECK(missing == 0);
  CHECK(ops_count() > 50);
  CHECK(!kernels_get(-1) && !kernels_get(ops_count()));
}

/* Shape-only ops return views sharing the buffer, copy into a given output, outlive the base. */
static void test_view_ops(void) {
  KernelCtx kx;
  kernel_ctx_init(&kx);
  int64_t shape[3] = {2, 1, 3}, ns[2] = {3, -1}, ax[1] = {1};
  float v[6] = {1, 2, 3, 4, 5, 6};
  RtTensor *x = tensor_f32(3, shape, v);
  RtTensor *r = run1(&kx, "reshape", 1, &x, attrs1("newshape", int_list(2, ns)));
  CHECK(r && r->ndim == 2 && r->shape[0] == 3 && r->shape[1] == 2 && rt_tensor_shares_buffer(r, x));
  RtTensor *s = run1(&kx, "squeeze", 1, &x, attrs1("axis", int_list(1, ax)));
  CHECK(s && s->ndim == 2 && rt_tensor_shares_buffer(s, x));
  RtTensor *e = run1(&kx, "expand_dims", 1, &x, attrs1("axis", attr_int(&A, 0, DT_INT32)));
  CHECK(e && e->ndim == 4 && e->shape[0] == 1 && rt_tensor_shares_buffer(e, x));
  RtTensor *f = run1(&kx, "nn.batch_flatten", 1, &x, NULL);
  CHECK(f && f->ndim == 2 && f->shape[1] == 3 && rt_tensor_shares_buffer(f, x));
  int64_t nsv[1] = {6};
  int64_t one[1] = {1};
  RtTensor *shp = rt_tensor_new(DT_INT64, 1, one, NULL, 0);
  memcpy(shp->data, nsv, 8);
  RtTensor *dyn_in[2] = {x, shp};
  RtTensor *d = run1(&kx, "dyn.reshape", 2, dyn_in, NULL);
  CHECK(d && d->ndim == 1 && d->shape[0] == 6 && rt_tensor_shares_buffer(d, x));
  CHECK(x->buf->refs == 6);
  /* Called with its own output, a view kernel copies. */
  int64_t six[1] = {6};
  RtTensor *own = rt_tensor_zeros(DT_FLOAT32, 1, six, NULL, 0);
  RtTensor *outs[1] = {own};
  CHECK(kernels_run(&kx, ops_lookup("reshape"), 1, &x, attrs1("newshape", int_list(1, six)), 1,
                    outs));
  CHECK(((float *)own->data)[4] == 5 && !rt_tensor_shares_buffer(own, x));
  rt_tensor_release(x); /* views outlive their base */
  CHECK(((float *)d->data)[5] == 6);
  RtTensor *all[] = {r, s, e, f, d, own, shp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rt_tensor_release(all[i]);
  kernel_ctx_free(&kx);
}

/* Run-time kernel errors: division by zero, take out of bounds, empty max, too many outputs. */
static void test_errors(void) {
  KernelCtx kx;
  kernel_ctx_init(&kx);
  int64_t three[1] = {3}, five[1] = {5}, one[1] = {1};
  int32_t a[3] = {7, 8, 9}, z[3] = {1, 0, 2};
  RtTensor *in[2] = {tensor_i32(1, three, a), tensor_i32(1, three, z)};
  CHECK(!run1(&kx, "floor_divide", 2, in, NULL));
  CHECK_STREQ(kx.err, "floor_divide: integer division by zero");
  CHECK(!run1(&kx, "divide", 2, in, NULL));
  CHECK_STREQ(kx.err, "divide: integer division by zero");
  CHECK(!run1(&kx, "mod", 2, in, NULL));
  CHECK_STREQ(kx.err, "mod: integer division by zero");

  float data[5] = {0, 1, 2, 3, 4};
  int32_t idx[1] = {7};
  RtTensor *tk[2] = {tensor_f32(1, five, data), tensor_i32(1, one, idx)};
  Attrs *fast = attrs2("axis", attr_int(&A, 0, DT_INT32), "mode", attr_str(&A, "fast"));
  CHECK(!run1(&kx, "take", 2, tk, fast));
  CHECK_STREQ(kx.err, "take: index 7 is out of bounds for axis 0 with size 5");
  RtTensor *clip = run1(&kx, "take", 2, tk, attrs1("mode", attr_str(&A, "clip")));
  CHECK(clip && ((float *)clip->data)[0] == 4);
  rt_tensor_release(clip);

  /* A relation's message comes through; so does an unknown op. */
  RtTensor *mix[2] = {in[0], tk[0]};
  CHECK(!run1(&kx, "add", 2, mix, NULL));
  CHECK_STREQ(kx.err, "add: dtypes int32 and float32 differ");
  RtTensor *sh[2] = {in[0], tk[0]};
  CHECK(!run1(&kx, "maximum", 2, sh, NULL));
  CHECK(!run1(&kx, "no.such.op", 1, in, NULL));
  CHECK_STREQ(kx.err, "no op with registry index -1");

  /* max over an empty axis has no value. */
  int64_t empty[2] = {2, 0};
  RtTensor *e = rt_tensor_new(DT_FLOAT32, 2, empty, NULL, 0);
  CHECK(!run1(&kx, "max", 1, &e, attrs1("axis", attr_int(&A, 1, DT_INT32))));
  CHECK(strstr(kx.err, "empty") != NULL);
  RtTensor *s = run1(&kx, "sum", 1, &e, attrs1("axis", attr_int(&A, 1, DT_INT32)));
  CHECK(s && s->numel == 2 && ((float *)s->data)[1] == 0);

  /* Too many outputs for the caller's array. */
  RtTensor *outs[2];
  int n;
  Attrs *sec = attrs1("indices_or_sections", attr_int(&A, 5, DT_INT32));
  CHECK(!kernels_infer_and_run(&kx, ops_lookup("split"), 1, &tk[0], sec, 2, &n, outs));
  CHECK(n == 0 && strstr(kx.err, "outputs") != NULL);
  CHECK(kernels_infer_and_run(&kx, ops_lookup("nn.dropout"), 1, &tk[0], NULL, 2, &n, outs) &&
        n == 2);
  CHECK(((float *)outs[0]->data)[3] == 3 && ((float *)outs[1]->data)[3] == 1);
  rt_tensor_release(outs[0]), rt_tensor_release(outs[1]);

  RtTensor *all[] = {in[0], in[1], tk[0], tk[1], e, s};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rt_tensor_release(all[i]);
  kernel_ctx_free(&kx);
}

/* Values that must not be C undefined behaviour (UBSan watches). */
static void test_no_ub(void) {
  KernelCtx kx;
  kernel_ctx_init(&kx);
  int64_t four[1] = {4};
  int32_t a[4] = {INT32_MIN, INT32_MIN, INT32_MAX, -7}, b[4] = {-1, 40, 2, -1};
  RtTensor *in[2] = {tensor_i32(1, four, a), tensor_i32(1, four, b)};
  const char *ops[] = {"divide",   "floor_divide", "mod",      "multiply", "add",
                       "subtract", "power",        "negative", "abs"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    RtTensor *r = run1(&kx, ops[i], i < 7 ? 2 : 1, in, NULL);
    CHECK(r != NULL);
    if (i == 0) CHECK(((int32_t *)r->data)[0] == INT32_MIN && ((int32_t *)r->data)[3] == 7);
    if (i == 2) CHECK(((int32_t *)r->data)[0] == 0);
    rt_tensor_release(r);
  }
  float f[4] = {NAN, 1e30f, -1e30f, INFINITY};
  RtTensor *x = tensor_f32(1, four, f);
  static const char *const targets[] = {"int8",  "uint8",  "int32", "uint32",
                                        "int64", "uint64", "bool",  "float16"};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    RtTensor *r = run1(&kx, "cast", 1, &x, attrs1("dtype", attr_str(&A, targets[i])));
    CHECK(r != NULL);
    if (i == 2) CHECK(((int32_t *)r->data)[0] == 0 && ((int32_t *)r->data)[1] == INT32_MAX);
    rt_tensor_release(r);
  }
  rt_tensor_release(in[0]), rt_tensor_release(in[1]), rt_tensor_release(x);
  kernel_ctx_free(&kx);
}

int main(void) {
  arena_init(&A);
  test_refcounts();
  test_views();
  test_buffer_cache();
  test_alloc_failure();
  test_ir_conversion();
  test_ctx_counts();
  test_half();
  test_every_op_has_a_kernel();
  test_view_ops();
  test_errors();
  test_no_ub();
  arena_free(&A);
  rt_cache_trim();
  return check_report("test_kernels");
}
