/* rt.h — run-time tensors: the values the interpreter and the kernels pass.
 *
 * An RtTensor is a reference-counted header (dtype, rank, int64 shape) over
 * a reference-counted RtBuffer holding contiguous row-major data, 64-byte
 * aligned.  Several tensors may share one buffer: reshape, squeeze,
 * expand_dims and batch_flatten return VIEWS (same buffer, same first
 * element, another shape) instead of copies.  Buffers are never written
 * after a kernel has produced them, so sharing is safe.
 *
 * Reference counts are plain (not atomic), and freed large buffers are kept
 * in a small cache for reuse (fresh pages cost a fault each): tensors
 * belong to one interpreter thread; worker threads see only data pointers.
 *
 * Allocation never aborts on a user-sized request: a size overflow, a size
 * that would take the tensor data alive (plus the buffers kept for reuse)
 * over the memory limit (rt_set_max_bytes; `:set max-memory`), or a failed
 * malloc is a returned error with a message such as "cannot allocate 1e+12
 * bytes: ...". */
#ifndef RLY_RT_H
#define RLY_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/tensor.h"

enum {
  RT_ALIGN = 64,    /* data alignment of every buffer */
  RT_ERR_LEN = 512, /* size of error message buffers */
};

/* The memory limit until one is set: 256 GiB.  Larger requests fail with a
 * message instead of asking malloc (which under ASan aborts).  Programs set
 * a fraction of the machine's memory (engine_options_default). */
#define RT_DEFAULT_MAX_BYTES ((size_t)1 << 38)

typedef struct RtCtx RtCtx;

typedef struct RtBuffer {
  int64_t refs;
  RtCtx *owner; /* the context whose memory count and free lists it belongs to */
  size_t nbytes;
  size_t cap;    /* bytes reserved for data (nbytes rounded up to RT_ALIGN) */
  void *data;    /* 64-byte aligned */
  bool borrowed; /* data owned by someone else (an IR constant's arena) */
} RtBuffer;

typedef struct RtTensor {
  int64_t refs;
  DType dtype;
  int ndim;
  int64_t numel;
  int64_t shape[TENSOR_MAX_RANK];
  RtBuffer *buf;
  void *data; /* == buf->data */
} RtTensor;

/* A new tensor with uninitialized data (refs = 1), or NULL with a message in
 * err (which may be NULL; errn bytes).  Negative dims are errors. */
RtTensor *rt_tensor_new(DType dt, int ndim, const int64_t *shape, char *err, size_t errn);
/* Same, zero-filled. */
RtTensor *rt_tensor_zeros(DType dt, int ndim, const int64_t *shape, char *err, size_t errn);
RtTensor *rt_tensor_retain(RtTensor *t);
void rt_tensor_release(RtTensor *t); /* NULL is fine */
/* A view of base's buffer with another shape of the same element count
 * (refs = 1; base's buffer is retained).  NULL with a message otherwise. */
RtTensor *rt_tensor_view(RtTensor *base, int ndim, const int64_t *shape, char *err, size_t errn);
bool rt_tensor_shares_buffer(const RtTensor *a, const RtTensor *b);
/* Hands t's data over to the caller without a copy when t alone holds it
 * (one reference to t and to its owned buffer, t's data at the buffer's
 * start): returns the allocation holding it, which the caller frees with
 * free(); the data is at RT_ALIGN bytes into it and leaves the run time's
 * memory count.  t becomes an empty tensor (shape (0)) of its dtype.  NULL,
 * t unchanged, when the data is shared, borrowed or a view. */
void *rt_tensor_steal(RtTensor *t);
size_t rt_tensor_nbytes(const RtTensor *t);

/* Conversions with IR constants.  from_ir copies; borrow_ir shares the
 * constant's data (valid while its arena lives; the tensor must not be
 * written); to_ir copies into the arena; as_ir is a non-owning Tensor header
 * over t (shape and data point into t), e.g. for type relations. */
RtTensor *rt_tensor_from_ir(const Tensor *t, char *err, size_t errn);
RtTensor *rt_tensor_borrow_ir(const Tensor *t, char *err, size_t errn);
Tensor *rt_tensor_to_ir(Arena *a, const RtTensor *t);
Tensor rt_tensor_as_ir(const RtTensor *t);

/* Element i, converted as C does (see tensor_get_*). */
double rt_get_f64(const RtTensor *t, int64_t i);
int64_t rt_get_i64(const RtTensor *t, int64_t i);

/* ── run-time contexts ──
 *
 * An RtCtx holds what used to be process-wide: the memory limit, the bytes
 * alive, the cache of freed buffers, the free lists, the compiled executor,
 * the interrupt flag and the step budget (rt/exec.h).  Each engine owns
 * one.  Passing it to every allocation would touch every kernel, so it is
 * a thread-local CURRENT context instead: the engine makes its context
 * current (rt_ctx_enter) on every entry, mirroring the rule that a session
 * is used by one thread at a time.  A thread that entered none uses the
 * process's default context (programs and tests without an engine).  A
 * buffer remembers its context: freeing it counts against that one, on any
 * thread (the pool's workers run with their caller's context). */
RtCtx *rt_ctx_new(void);
/* Frees ctx's caches; the context itself goes with its last buffer. */
void rt_ctx_free(RtCtx *ctx);
/* Makes ctx (NULL: the default) current on this thread; returns the
 * previous one (NULL when it was the default). */
RtCtx *rt_ctx_enter(RtCtx *ctx);
RtCtx *rt_ctx_current(void); /* never NULL */

/* The functions below act on the current context. */

/* Frees the buffers kept for reuse (they are reachable until then). */
void rt_cache_trim(void);

/* Frees the recycled small tensors and buffers (free lists of rt.c). */
void rt_pool_trim(void);

/* The memory limit (bytes) on the data of the tensors alive at once. */
void rt_set_max_bytes(size_t n);
size_t rt_max_bytes(void);
/* Called (on the allocating thread) when a request of `want` bytes is
 * refused by the memory limit, before the error is returned: a caller
 * that knows who holds the memory (the engine: session variables) notes
 * it for its report.  One hook at a time; NULL removes it. */
typedef void (*RtLimitHook)(void *ctx, size_t want);
void rt_set_limit_hook(RtLimitHook fn, void *ctx);
/* Bytes of tensor data allocated now (alive or kept for reuse). */
size_t rt_live_bytes(void);
/* The machine's physical memory in bytes (0 when unknown). */
size_t rt_physical_memory(void);
/* n bytes for a message: "512 bytes", "3.5 KiB", "1.2 GiB". */
const char *rt_bytes_str(char *buf, size_t n, double bytes);

/* IEEE binary16 from a double with one rounding (round half to even);
 * going through float would round twice.  ir/tensor.h's double_to_half. */
uint16_t rt_double_to_half(double d);

/* "(2, 3)" into buf. */
const char *rt_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);

#endif
