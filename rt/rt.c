/* rt.c — run-time tensors: allocation with checked sizes, reference
 * counting, views, conversions with IR constants.
 *
 * Invariants: t->data == t->buf->data; t->numel == product of t->shape;
 * t->numel * dtype_bytes(t->dtype) <= t->buf->nbytes <= t->buf->cap.  An
 * owned buffer is a single aligned allocation: the RtBuffer header padded
 * to RT_ALIGN bytes, then cap bytes of data.  A cached buffer has refs 0
 * and is referenced only by the cache. */
#include "rt/rt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/util.h"
#include "rt/rt_ctx.h"

/* The context of threads that entered none (rt.h); `current` is this
 * thread's. */
static RtCtx default_ctx = {.max_bytes = RT_DEFAULT_MAX_BYTES};
static _Thread_local RtCtx *current;

RtCtx *rt_ctx_current(void) { return current ? current : &default_ctx; }

RtCtx *rt_ctx_enter(RtCtx *ctx) {
  RtCtx *prev = current;
  current = ctx;
  return prev;
}

RtCtx *rt_ctx_new(void) {
  RtCtx *c = calloc(1, sizeof *c);
  if (!c) rly_oom();
  c->max_bytes = RT_DEFAULT_MAX_BYTES;
  return c;
}

void rt_ctx_free(RtCtx *ctx) {
  if (!ctx) return;
  RtCtx *prev = rt_ctx_enter(ctx);
  rt_cache_trim();
  rt_pool_trim();
  rt_ctx_enter(prev == ctx ? NULL : prev);
  if (ctx->nbufs)
    ctx->dead = true; /* tensors still alive: freed with the last (buffer_free) */
  else
    free(ctx);
}

void rt_set_max_bytes(size_t n) { rt_ctx_current()->max_bytes = n; }
void rt_set_limit_hook(RtLimitHook fn, void *ctx) {
  RtCtx *c = rt_ctx_current();
  c->limit_hook = fn, c->limit_ctx = ctx;
}

static void limit_hit(RtCtx *c, size_t want) {
  if (c->limit_hook) c->limit_hook(c->limit_ctx, want);
}
size_t rt_max_bytes(void) { return rt_ctx_current()->max_bytes; }
size_t rt_live_bytes(void) { return rt_ctx_current()->live_bytes; }

size_t rt_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
}

const char *rt_bytes_str(char *buf, size_t n, double bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, n, "%.0f bytes", bytes);
    return buf;
  }
  int u = -1;
  while (bytes >= 1024 && u < 5) bytes /= 1024, u++;
  snprintf(buf, n, "%.*f %s", bytes < 10 ? 1 : 0, bytes, units[u]);
  return buf;
}

/* A buffer's allocation is freed (an owned one's data leaves the count);
 * a dead context goes with its last buffer. */
static void buffer_free(RtBuffer *b) {
  RtCtx *c = b->owner;
  if (!b->borrowed) c->live_bytes -= b->cap;
  c->nbufs--;
  free(b);
  if (c->dead && !c->nbufs) free(c);
}

static void set_err(char *err, size_t errn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errn, const char *fmt, ...) {
  if (!err || !errn) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errn, fmt, ap);
  va_end(ap);
}

const char *rt_shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (k < n) snprintf(buf + k, n - k, ")");
  return buf;
}

/* Element count of a shape, or -1 on a negative dim or an overflow of the
 * byte size. */
static int64_t checked_numel(DType dt, int ndim, const int64_t *shape) {
  int64_t n = 1;
  bool zero = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (shape[i] == 0) zero = true;
  }
  if (zero) return 0;
  int64_t lim = INT64_MAX / dtype_bytes(dt);
  for (int i = 0; i < ndim; i++) {
    if (n > lim / shape[i]) return -1;
    n *= shape[i];
  }
  return n;
}

/* Freed buffers of at least CACHE_MIN bytes wait here (up to CACHE_MAX
 * bytes in all) for an allocation of the same padded size.  A model's
 * output is allocated on every call (GPT-2's logits: 321 MB); a fresh
 * allocation that size faults in 80,000 pages inside the kernel writing
 * it (175 ms of a 1.33 s product), a cached one none.  The cache is
 * given back before the memory limit would be passed. */
enum { CACHE_SLOTS = RT_CACHE_SLOTS, CACHE_MIN = 64 * 1024 };
#define CACHE_MAX ((size_t)1 << 30)

static RtBuffer *cache_take(RtCtx *c, size_t cap) {
  if (cap < CACHE_MIN) return NULL;
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (c->cache[i] && c->cache[i]->cap == cap) {
      RtBuffer *b = c->cache[i];
      c->cache[i] = NULL, c->cached_bytes -= cap;
      return b;
    }
  return NULL;
}

static bool cache_put(RtBuffer *b) {
  RtCtx *c = b->owner;
  if (c->dead || b->borrowed || b->cap < CACHE_MIN || c->cached_bytes + b->cap > CACHE_MAX)
    return false;
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (!c->cache[i]) {
      c->cache[i] = b, c->cached_bytes += b->cap;
      return true;
    }
  return false;
}

static void cache_trim(RtCtx *c) {
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (c->cache[i]) buffer_free(c->cache[i]), c->cache[i] = NULL;
  c->cached_bytes = 0;
}

void rt_cache_trim(void) { cache_trim(rt_ctx_current()); }

/* Small objects are recycled through free lists instead of malloc/free:
 * interpreting scalar code allocates and drops millions of tiny tensors.
 * Lists: tensor headers, borrowed-buffer headers, and owned buffers with
 * 64..256 data bytes (one list per size).  Each keeps at most POOL_MAX. */
enum { POOL_MAX = 1 << 16, SMALL_CAPS = RT_SMALL_CAPS };
typedef RtPool Pool;

static void *pool_take(Pool *p) {
  void *x = p->head;
  if (x) p->head = *(void **)x, p->n--;
  return x;
}

static bool pool_put(RtCtx *c, Pool *p, void *x) {
  if (c->dead || p->n >= POOL_MAX) return false;
  *(void **)x = p->head;
  p->head = x, p->n++;
  return true;
}

static Pool *small_pool_for(RtCtx *c, size_t cap) {
  return cap <= SMALL_CAPS * RT_ALIGN ? &c->small_pool[cap / RT_ALIGN - 1] : NULL;
}

void rt_pool_trim(void) {
  RtCtx *c = rt_ctx_current();
  void *x;
  while ((x = pool_take(&c->header_pool))) free(x);
  while ((x = pool_take(&c->borrowed_pool))) buffer_free(x);
  for (int i = 0; i < SMALL_CAPS; i++)
    while ((x = pool_take(&c->small_pool[i]))) buffer_free(x);
}

/* Whether cap more bytes keep the data under c's limit, after giving the
 * cached buffers back if that is what it takes. */
static bool within_limit(RtCtx *c, size_t cap) {
  if (cap <= c->max_bytes && c->live_bytes <= c->max_bytes - cap) return true;
  cache_trim(c);
  return cap <= c->max_bytes && c->live_bytes <= c->max_bytes - cap;
}

/* A buffer for nbytes: from a small-size pool or the cache when one fits,
 * else a fresh aligned allocation.  The size limit is checked first, so an
 * absurd shape is a clear error rather than an out-of-memory. */
static RtBuffer *buffer_alloc(size_t nbytes, char *err, size_t errn) {
  RtCtx *c = rt_ctx_current();
  size_t max_bytes = c->max_bytes;
  if (nbytes > max_bytes) {
    char lim[32];
    set_err(err, errn,
            "cannot allocate %g bytes: more than the memory limit (%s; :set max-memory SIZE)",
            (double)nbytes, rt_bytes_str(lim, sizeof lim, (double)max_bytes));
    limit_hit(c, nbytes);
    return NULL;
  }
  size_t cap = nbytes ? (nbytes + RT_ALIGN - 1) / RT_ALIGN * RT_ALIGN : RT_ALIGN;
  Pool *sp = small_pool_for(c, cap);
  RtBuffer *b = sp ? pool_take(sp) : cache_take(c, cap);
  if (!b && !within_limit(c, cap)) {
    char lim[32], live[32];
    set_err(err, errn,
            "cannot allocate %g bytes: the memory limit (%s) would be passed, %s being in use "
            "(:set max-memory SIZE)",
            (double)nbytes, rt_bytes_str(lim, sizeof lim, (double)max_bytes),
            rt_bytes_str(live, sizeof live, (double)c->live_bytes));
    limit_hit(c, nbytes);
    return NULL;
  }
  if (!b) {
    unsigned char *p = aligned_alloc(RT_ALIGN, RT_ALIGN + cap);
    if (!p) {
      set_err(err, errn, "cannot allocate %g bytes: out of memory", (double)nbytes);
      return NULL;
    }
    _Static_assert(sizeof(RtBuffer) <= RT_ALIGN, "RtBuffer header must fit its padding");
    b = (RtBuffer *)p;
    b->data = p + RT_ALIGN, b->cap = cap, b->owner = c;
    c->live_bytes += cap, c->nbufs++;
  }
  b->refs = 1, b->nbytes = nbytes, b->borrowed = false;
  return b;
}

static void buffer_release(RtBuffer *b) {
  /* Owned: header and data are one allocation; borrowed: only the header. */
  if (--b->refs > 0) return;
  RtCtx *c = b->owner;
  Pool *sp = b->borrowed ? &c->borrowed_pool : small_pool_for(c, b->cap);
  if (sp ? pool_put(c, sp, b) : cache_put(b)) return;
  buffer_free(b);
}

static RtTensor *header_new(DType dt, int ndim, const int64_t *shape, int64_t numel, char *err,
                            size_t errn) {
  RtTensor *t = pool_take(&rt_ctx_current()->header_pool);
  if (!t) t = malloc(sizeof *t);
  if (!t) {
    set_err(err, errn, "cannot allocate %g bytes: out of memory", (double)sizeof *t);
    return NULL;
  }
  t->refs = 1, t->dtype = dt, t->ndim = ndim, t->numel = numel, t->buf = NULL, t->data = NULL;
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  return t;
}

static bool check_shape(int ndim, const int64_t *shape, int64_t numel, char *err, size_t errn,
                        DType dt) {
  char s[256];
  if (ndim < 0 || ndim > TENSOR_MAX_RANK) {
    set_err(err, errn, "tensor rank %d is over the limit of %d", ndim, TENSOR_MAX_RANK);
    return false;
  }
  if (numel >= 0) return true;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      set_err(err, errn, "negative dimension in shape %s", rt_shape_str(s, sizeof s, ndim, shape));
      return false;
    }
  set_err(err, errn, "cannot allocate a %s tensor of shape %s: its size overflows", dtype_name(dt),
          rt_shape_str(s, sizeof s, ndim, shape));
  return false;
}

RtTensor *rt_tensor_new(DType dt, int ndim, const int64_t *shape, char *err, size_t errn) {
  int64_t numel = ndim >= 0 && ndim <= TENSOR_MAX_RANK ? checked_numel(dt, ndim, shape) : 0;
  if (!check_shape(ndim, shape, numel, err, errn, dt)) return NULL;
  RtBuffer *b = buffer_alloc((size_t)numel * (size_t)dtype_bytes(dt), err, errn);
  if (!b) return NULL;
  RtTensor *t = header_new(dt, ndim, shape, numel, err, errn);
  if (!t) {
    buffer_release(b);
    return NULL;
  }
  t->buf = b, t->data = b->data;
  return t;
}

RtTensor *rt_tensor_zeros(DType dt, int ndim, const int64_t *shape, char *err, size_t errn) {
  RtTensor *t = rt_tensor_new(dt, ndim, shape, err, errn);
  if (t) memset(t->data, 0, rt_tensor_nbytes(t));
  return t;
}

RtTensor *rt_tensor_retain(RtTensor *t) {
  if (t) t->refs++;
  return t;
}

void rt_tensor_release(RtTensor *t) {
  if (!t || --t->refs > 0) return;
  RtBuffer *b = t->buf;
  if (!pool_put(b->owner, &b->owner->header_pool, t)) free(t);
  buffer_release(b); /* may free its context (a dead one's last buffer) */
}

RtTensor *rt_tensor_view(RtTensor *base, int ndim, const int64_t *shape, char *err, size_t errn) {
  int64_t numel =
      ndim >= 0 && ndim <= TENSOR_MAX_RANK ? checked_numel(base->dtype, ndim, shape) : 0;
  if (!check_shape(ndim, shape, numel, err, errn, base->dtype)) return NULL;
  if (numel != base->numel) {
    char a[256], b[256];
    set_err(err, errn, "cannot view a tensor of shape %s as shape %s",
            rt_shape_str(a, sizeof a, base->ndim, base->shape),
            rt_shape_str(b, sizeof b, ndim, shape));
    return NULL;
  }
  RtTensor *t = header_new(base->dtype, ndim, shape, numel, err, errn);
  if (!t) return NULL;
  t->buf = base->buf, t->data = base->data;
  base->buf->refs++;
  return t;
}

bool rt_tensor_shares_buffer(const RtTensor *a, const RtTensor *b) { return a->buf == b->buf; }

void *rt_tensor_steal(RtTensor *t) {
  RtBuffer *b = t->buf, *empty;
  if (t->refs != 1 || b->refs != 1 || b->borrowed || t->data != b->data || !t->numel) return NULL;
  RtCtx *c = rt_ctx_enter(b->owner); /* the empty buffer is the same context's */
  empty = buffer_alloc(0, NULL, 0);
  rt_ctx_enter(c);
  if (!empty) return NULL;
  b->owner->live_bytes -= b->cap, b->owner->nbufs--; /* b leaves the run time */
  t->buf = empty, t->data = empty->data, t->numel = 0, t->ndim = 1, t->shape[0] = 0;
  return b;
}

size_t rt_tensor_nbytes(const RtTensor *t) {
  return (size_t)t->numel * (size_t)dtype_bytes(t->dtype);
}

RtTensor *rt_tensor_from_ir(const Tensor *t, char *err, size_t errn) {
  RtTensor *r = rt_tensor_new(t->dtype, t->ndim, t->shape, err, errn);
  if (r && r->numel) memcpy(r->data, t->data, rt_tensor_nbytes(r));
  return r;
}

RtTensor *rt_tensor_borrow_ir(const Tensor *t, char *err, size_t errn) {
  RLY_ASSERT(((uintptr_t)t->data & (RT_ALIGN - 1)) == 0);
  RtCtx *c = rt_ctx_current();
  RtBuffer *b = pool_take(&c->borrowed_pool);
  if (!b && (b = malloc(sizeof *b))) c->nbufs++;
  if (!b) {
    set_err(err, errn, "cannot allocate %g bytes: out of memory", (double)sizeof *b);
    return NULL;
  }
  b->refs = 1, b->nbytes = b->cap = tensor_nbytes(t), b->data = t->data, b->borrowed = true;
  b->owner = c;
  RtTensor *r = header_new(t->dtype, t->ndim, t->shape, t->numel, err, errn);
  if (!r) {
    if (!pool_put(c, &c->borrowed_pool, b)) buffer_free(b);
    return NULL;
  }
  r->buf = b, r->data = b->data;
  return r;
}

Tensor *rt_tensor_to_ir(Arena *a, const RtTensor *t) {
  Tensor *r = tensor_new(a, t->dtype, t->ndim, t->shape);
  if (t->numel) memcpy(r->data, t->data, rt_tensor_nbytes(t));
  return r;
}

Tensor rt_tensor_as_ir(const RtTensor *t) {
  Tensor r = {t->dtype, t->ndim, (int64_t *)t->shape, t->numel, t->data};
  return r;
}

double rt_get_f64(const RtTensor *t, int64_t i) {
  Tensor v = rt_tensor_as_ir(t);
  return tensor_get_f64(&v, i);
}

int64_t rt_get_i64(const RtTensor *t, int64_t i) {
  Tensor v = rt_tensor_as_ir(t);
  return tensor_get_i64(&v, i);
}

uint16_t rt_double_to_half(double d) { return double_to_half(d); }
