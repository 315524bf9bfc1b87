/* value.c — the heap of run-time values and its mark-and-sweep collector.
 *
 * Every Value is malloc'd with its child array inline and linked into one
 * list.  Collection runs only at the machine's safe points (eval.c), where
 * every live value is reachable from a root: the machine's slot and value
 * stacks, the value being returned, session variables and state-global
 * cells.  Marking uses an explicit stack, so a million-element list is
 * fine; cycles through references are collected like anything else.
 * Tensor bytes count toward the next collection, so loops that allocate
 * big tensors run in bounded memory.  The minimum collection interval is
 * small (8192 objects) so the garbage of a scalar loop stays in cache.
 * Roots also include the fast path's registers (fast.c) and the cached
 * constants and def closures (Interp.consts).  interp_value_buffers walks
 * one value the same way for the tensor data it holds (`:bindings`). */
#include <stdlib.h>
#include <string.h>

#include "interp/interp_int.h"

enum { GC_MIN_OBJECTS = 1 << 13, POOL_CLASSES = 5 };
_Static_assert(POOL_CLASSES == sizeof((Interp *)0)->value_pool / sizeof(Value *),
               "Interp.value_pool has one list per class");

/* Freed values with up to POOL_CLASSES-1 children are kept on per-size free
 * lists (the interpreter's value_pool, linked through gc_next) and reused: a
 * loop that allocates and drops small values then costs no malloc/free per
 * iteration.  Per interpreter, so two engines share nothing here. */

static int pool_class(const Value *v) {
  Value **kids;
  int n = value_children(v, &kids);
  return v->kind == V_REF ? 0 : n;
}
#define GC_MIN_BYTES ((size_t)32 << 20)

/* Allocates a zeroed value with its child array inline (small sizes come
 * from a free-list pool) and links it into the heap; it only requests a
 * collection, which happens at the next safe point. */
Value *value_new(Interp *in, ValueKind kind, int nchildren) {
  size_t extra = sizeof(Value *) * (size_t)(nchildren > 0 ? nchildren : 0);
  Value *v;
  Value **pool = in->value_pool;
  if (nchildren < POOL_CLASSES && pool[nchildren]) {
    v = pool[nchildren];
    pool[nchildren] = v->gc_next;
    memset(v, 0, sizeof(Value) + extra);
  } else {
    v = calloc(1, sizeof(Value) + extra);
    if (!v) rly_oom();
  }
  v->kind = kind;
  Value **kids = (Value **)(v + 1);
  switch (kind) {
    case V_TUPLE:
      v->u.tuple.n = nchildren, v->u.tuple.fields = kids;
      break;
    case V_CLOSURE:
      v->u.closure.ncap = nchildren, v->u.closure.cap = kids;
      break;
    case V_ADT:
      v->u.adt.n = nchildren, v->u.adt.fields = kids;
      break;
    default:
      break;
  }
  v->gc_next = in->heap;
  in->heap = v;
  in->nobjects++;
  if (++in->nsince_gc > in->gc_threshold) in->gc_wanted = true;
  return v;
}

Value *interp_value_tensor(Interp *in, RtTensor *t) { return value_tensor(in, t); }

Value *value_tensor(Interp *in, RtTensor *t) {
  Value *v = value_new(in, V_TENSOR, 0);
  v->u.tensor = t;
  in->bytes_since_gc += rt_tensor_nbytes(t);
  size_t limit = in->live_bytes * 2 > GC_MIN_BYTES ? in->live_bytes * 2 : GC_MIN_BYTES;
  if (in->bytes_since_gc > limit) in->gc_wanted = true;
  return v;
}

Value *value_unit(Interp *in) { return value_new(in, V_TUPLE, 0); }

int value_children(const Value *v, Value ***out) {
  switch (v->kind) {
    case V_TUPLE:
      *out = v->u.tuple.fields;
      return v->u.tuple.n;
    case V_CLOSURE:
      *out = v->u.closure.cap;
      return v->u.closure.ncap;
    case V_ADT:
      *out = v->u.adt.fields;
      return v->u.adt.n;
    case V_REF:
      *out = (Value **)&v->u.ref.cell;
      return 1;
    default:
      *out = NULL;
      return 0;
  }
}

static void mark(Interp *in, Value *root, uint32_t epoch) {
  if (!root || root->mark == epoch) return;
  root->mark = epoch;
  vec_push(&in->mark_stack, root);
  while (in->mark_stack.len) {
    Value *v = vec_pop(&in->mark_stack);
    Value **kids;
    int n = value_children(v, &kids);
    for (int i = 0; i < n; i++)
      if (kids[i] && kids[i]->mark != epoch) {
        kids[i]->mark = epoch;
        vec_push(&in->mark_stack, kids[i]);
      }
  }
}

static void mark_array(Interp *in, Value **a, size_t n, uint32_t epoch) {
  for (size_t i = 0; i < n; i++) mark(in, a[i], epoch);
}

static void mark_roots(Interp *in, uint32_t epoch) {
  mark_array(in, in->slots, in->nslots_used, epoch);
  mark_array(in, in->vals, in->nvals, epoch);
  mark(in, in->current, epoch);
  fast_mark_roots(in, mark, epoch);
  for (size_t i = 0; i < in->consts.cap; i++)
    if (in->consts.keys[i]) mark(in, (Value *)(uintptr_t)in->consts.vals[i], epoch);
  for (size_t i = 0; i < in->nsession; i++) mark(in, in->session[i].value, epoch);
  for (size_t i = 0; i < in->globals.cap; i++)
    if (in->globals.keys[i]) mark(in, in->globals.vals[i], epoch);
}

static void free_value(Interp *in, Value *v) {
  if (v->kind == V_TENSOR) rt_tensor_release(v->u.tensor);
  int c = pool_class(v);
  if (c < POOL_CLASSES) {
    v->gc_next = in->value_pool[c];
    in->value_pool[c] = v;
  } else {
    free(v);
  }
}

static void pool_drain(Interp *in) {
  Value **pool = in->value_pool;
  for (int c = 0; c < POOL_CLASSES; c++)
    while (pool[c]) {
      Value *v = pool[c];
      pool[c] = v->gc_next;
      free(v);
    }
}

/* Mark and sweep.  Marks use a fresh epoch number, so nothing is cleared
 * between collections; the next threshold is twice the live count, which
 * keeps collection cost proportional to allocation. */
static uint32_t next_epoch(Interp *in) { return ++in->gc_epoch ? in->gc_epoch : ++in->gc_epoch; }

size_t gc_collect(Interp *in) {
  uint32_t epoch = next_epoch(in);
  mark_roots(in, epoch);
  Value **link = &in->heap;
  size_t live = 0, live_bytes = 0;
  while (*link) {
    Value *v = *link;
    if (v->mark == epoch) {
      live++;
      if (v->kind == V_TENSOR) live_bytes += rt_tensor_nbytes(v->u.tensor);
      link = &v->gc_next;
    } else {
      *link = v->gc_next;
      free_value(in, v);
    }
  }
  in->nobjects = live;
  in->live_bytes = live_bytes;
  in->nsince_gc = in->bytes_since_gc = 0;
  in->gc_threshold = live * 2 > GC_MIN_OBJECTS ? live * 2 : GC_MIN_OBJECTS;
  in->gc_wanted = false;
  return live;
}

void interp_values_reached(Interp *in, Value *const *vs, int n, bool *reached) {
  uint32_t epoch = next_epoch(in);
  mark_roots(in, epoch);
  for (int i = 0; i < n; i++) reached[i] = vs[i]->mark == epoch;
}

void gc_free_all(Interp *in) {
  Value *v = in->heap;
  while (v) {
    Value *next = v->gc_next;
    free_value(in, v);
    v = next;
  }
  in->heap = NULL;
  in->nobjects = 0;
  pool_drain(in);
  vec_free(&in->mark_stack);
}

/* ───────────────────────── what a value holds ───────────────────────── */

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
  return x < y ? -1 : x > y;
}

static void push_buffer(PtrVec *out, const Value *v) {
  if (v->kind == V_TENSOR) vec_push(out, v->u.tensor->buf);
}

/* Marks with an epoch of its own (collections take fresh ones), so a
 * cycle through a reference is walked once; views of one buffer give it
 * once (sorted, then duplicates dropped). */
void interp_value_buffers(Interp *in, Value *v, PtrVec *out) {
  size_t from = out->len;
  uint32_t epoch = next_epoch(in);
  if (!v) return;
  v->mark = epoch;
  vec_push(&in->mark_stack, v);
  while (in->mark_stack.len) {
    Value *x = vec_pop(&in->mark_stack), **kids;
    push_buffer(out, x);
    int n = value_children(x, &kids);
    for (int i = 0; i < n; i++)
      if (kids[i] && kids[i]->mark != epoch)
        kids[i]->mark = epoch, vec_push(&in->mark_stack, kids[i]);
  }
  size_t n = out->len - from, k = 0;
  if (n > 1) qsort(out->items + from, n, sizeof(void *), cmp_ptr);
  for (size_t i = 0; i < n; i++)
    if (!k || out->items[from + i] != out->items[from + k - 1])
      out->items[from + k++] = out->items[from + i];
  out->len = from + k;
}

size_t interp_value_bytes(Interp *in, Value *v) {
  PtrVec bufs = {0};
  interp_value_buffers(in, v, &bufs);
  size_t bytes = 0;
  for (size_t i = 0; i < bufs.len; i++) bytes += ((RtBuffer *)bufs.items[i])->nbytes;
  vec_free(&bufs);
  return bytes;
}

Value *interp_bound(Interp *in, const Var *var) {
  for (size_t i = 0; i < in->nsession; i++)
    if (in->session[i].var == var) return in->session[i].value;
  return NULL;
}
