/* profile.c — the per-kernel profile of one evaluation (profile.h).
 *
 * Rows are keyed by kernel name (a JIT kernel's prim function name, or a
 * reference kernel's op); the hooks add to them.  A JIT kernel's flops are
 * counted on its TIR once per (prim function, sizes) and reused while the
 * sizes stay the same, so a profiled loop of calls does not walk the TIR
 * each time.  Loop extents that depend on outer loop variables (a partial
 * last tile: min(NR, n - jo * NR)) are evaluated with the outer variables
 * at their begin, which counts a partial tile as a full one: a slight
 * overestimate, never a guess about unknown work (an extent that cannot be
 * evaluated makes the kernel's flops unknown, shown as `-`). */
#include "engine/profile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/tir.h"
#include "jit/jit.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

enum { PROFILE_SIZES = 16, ENV_MAX = 64, NAME_MAX_SHOWN = 56 };

typedef struct Row {
  char *name;
  bool reference; /* a reference kernel (interp/), not a JIT kernel */
  uint64_t calls;
  double ms, flops, bytes;
  bool flops_unknown;
  /* the last flop count of a JIT kernel, for these sizes */
  const PrimFunc *f;
  int nsizes;
  int64_t sizes[PROFILE_SIZES];
  double f_flops; /* < 0: unknown */
} Row;

struct Profile {
  Row *rows;
  int n, cap;
  double t0, total_ms, compile_ms;
  int kernels0, compiled; /* jit_kernel_count at the start; kernels compiled since */
  bool running;
};

/* The profile running on this thread (one at a time): thread-local like
 * the hooks it installs (kernels' run hook, the current JIT context's),
 * since an engine runs on one thread at a time. */
static _Thread_local Profile *active;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static Row *row_for(Profile *p, const char *name, bool reference) {
  for (int i = 0; i < p->n; i++)
    if (p->rows[i].reference == reference && strcmp(p->rows[i].name, name) == 0) return &p->rows[i];
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 16;
    p->rows = realloc(p->rows, sizeof *p->rows * (size_t)p->cap);
    if (!p->rows) rly_oom();
  }
  Row *r = &p->rows[p->n++];
  memset(r, 0, sizeof *r);
  r->name = strdup(name);
  if (!r->name) rly_oom();
  r->reference = reference;
  return r;
}

/* ───────────────────────── flops on the TIR ───────────────────────── */

typedef struct Env {
  const PrimFunc *f;
  const int64_t *sizes;
  const TirVar *var[ENV_MAX];
  int64_t val[ENV_MAX];
  int n;
  bool ok; /* false once an extent could not be evaluated */
} Env;

static bool lookup(const Env *E, const TirVar *v, int64_t *out) {
  for (int i = E->n; i-- > 0;)
    if (E->var[i] == v) return *out = E->val[i], true;
  for (int i = 0; i < E->f->nsizevars; i++) /* by pointer, else by name */
    if (E->f->sizevars[i] == v || (v->is_size && strcmp(E->f->sizevars[i]->name, v->name) == 0))
      return *out = E->sizes[i], true;
  return false;
}

static void push(Env *E, const TirVar *v, int64_t x) {
  if (E->n == ENV_MAX) {
    E->ok = false;
    return;
  }
  E->var[E->n] = v, E->val[E->n++] = x;
}

static bool eval_bin(PrimBinOp op, int64_t a, int64_t b, int64_t *out) {
  switch (op) {
    case PB_ADD:
      return *out = a + b, true;
    case PB_SUB:
      return *out = a - b, true;
    case PB_MUL:
      return *out = a * b, true;
    case PB_DIV:
      return b ? (*out = a / b, true) : false;
    case PB_MOD:
      return b ? (*out = a % b, true) : false;
    case PB_LT:
      return *out = a < b, true;
    case PB_LE:
      return *out = a <= b, true;
    case PB_GT:
      return *out = a > b, true;
    case PB_GE:
      return *out = a >= b, true;
    case PB_EQ:
      return *out = a == b, true;
    case PB_NE:
      return *out = a != b, true;
    case PB_AND:
      return *out = a && b, true;
    case PB_OR:
      return *out = a || b, true;
  }
  return false;
}

/* An integer expression of constants, size variables and the loop and let
 * variables in scope. */
static bool eval_int(const Env *E, const PrimExpr *e, int64_t *out) {
  int64_t a, b;
  switch (e->kind) {
    case PE_INT:
      return *out = e->u.i, true;
    case PE_VAR:
      return lookup(E, e->u.var, out);
    case PE_CAST:
      return dtype_is_float(e->u.cast.to) ? false : eval_int(E, e->u.cast.value, out);
    case PE_BIN:
      return eval_int(E, e->u.bin.a, &a) && eval_int(E, e->u.bin.b, &b) &&
             eval_bin(e->u.bin.op, a, b, out);
    case PE_CALL:
      if ((e->u.call.fn != PI_MIN && e->u.call.fn != PI_MAX) || e->u.call.n != 2) return false;
      if (!eval_int(E, e->u.call.args[0], &a) || !eval_int(E, e->u.call.args[1], &b)) return false;
      *out = e->u.call.fn == PI_MIN ? (a < b ? a : b) : (a > b ? a : b);
      return true;
    default:
      return false;
  }
}

/* Float arithmetic in e: one per +, -, *, / and negation of floats and one
 * per float intrinsic (exp, max, ...); loads, casts and index arithmetic
 * count nothing. */
static double expr_flops(const PrimExpr *e) {
  switch (e->kind) {
    case PE_BIN: {
      bool arith = e->u.bin.op <= PB_MOD && dtype_is_float(e->u.bin.a->dtype);
      return arith + expr_flops(e->u.bin.a) + expr_flops(e->u.bin.b);
    }
    case PE_NEG:
      return dtype_is_float(e->dtype) + expr_flops(e->u.operand);
    case PE_NOT:
      return expr_flops(e->u.operand);
    case PE_CAST:
      return expr_flops(e->u.cast.value);
    case PE_CALL: {
      double n = e->u.call.fn != PI_SELECT && dtype_is_float(e->dtype);
      for (int i = 0; i < e->u.call.n; i++) n += expr_flops(e->u.call.args[i]);
      return n;
    }
    default:
      return 0;
  }
}

static double stmt_flops(Env *E, const Stmt *s);

/* A loop: its trip count times its body's flops, the variables bound to
 * their begin while the body is counted. */
static double for_flops(Env *E, const Stmt *s) {
  double trips = 1;
  int n0 = E->n;
  for (int i = 0; i < s->u.for_.nvars; i++) {
    const PrimExpr *lo = tir_for_lo(s, i);
    int64_t b = 0, h;
    if ((lo && !eval_int(E, lo, &b)) || !eval_int(E, s->u.for_.hi[i], &h)) {
      E->ok = false;
      return 0;
    }
    trips *= h > b ? (double)(h - b) : 0;
    push(E, s->u.for_.vars[i], b);
  }
  double body = trips > 0 ? stmt_flops(E, s->u.for_.body) : 0;
  E->n = n0;
  return trips * body;
}

/* Flops of one execution of s.  An `if` counts its costlier branch. */
static double stmt_flops(Env *E, const Stmt *s) {
  if (!s || !E->ok) return 0;
  switch (s->kind) {
    case ST_SEQ: {
      double n = 0;
      int n0 = E->n; /* lets bind to the end of their sequence */
      for (int i = 0; i < s->u.seq.n; i++) n += stmt_flops(E, s->u.seq.items[i]);
      E->n = n0;
      return n;
    }
    case ST_FOR:
      return for_flops(E, s);
    case ST_BLOCK: {
      int n0 = E->n;
      for (int i = 0; i < s->u.block.niters; i++) {
        int64_t v = 0;
        const IterVar *it = &s->u.block.iters[i];
        if (it->binding) eval_int(E, it->binding, &v);
        push(E, it->var, v);
      }
      double n = stmt_flops(E, s->u.block.body);
      E->n = n0;
      return n;
    }
    case ST_STORE:
      return expr_flops(s->u.store.value);
    case ST_LET: {
      int64_t v = 0;
      if (eval_int(E, s->u.let.value, &v)) push(E, s->u.let.var, v);
      return expr_flops(s->u.let.value);
    }
    case ST_IF: {
      double a = stmt_flops(E, s->u.if_.then_), b = stmt_flops(E, s->u.if_.else_);
      return a > b ? a : b;
    }
    default:
      return 0;
  }
}

double profile_prim_flops(const PrimFunc *f, const int64_t *sizes) {
  Env E = {.f = f, .sizes = sizes, .ok = true};
  double n = stmt_flops(&E, f->body);
  return E.ok ? n : -1;
}

/* ───────────────────────── the hooks ───────────────────────── */

static double nbytes(RtTensor *const *t, int n) {
  double b = 0;
  for (int i = 0; i < n; i++) b += (double)rt_tensor_nbytes(t[i]);
  return b;
}

static void add_flops(Row *r, double flops) {
  if (flops < 0)
    r->flops_unknown = true;
  else
    r->flops += flops;
}

/* A JIT kernel ran: its flops for these sizes (cached while they repeat). */
static void on_jit(void *user, const PrimFunc *f, const char *name, const int64_t *sizes,
                   RtTensor *const *args, int n, double ms) {
  Row *r = row_for(user, name, false);
  r->calls++, r->ms += ms, r->bytes += nbytes(args, n);
  int ns = f ? f->nsizevars : 0;
  bool same = f && r->f == f && r->nsizes == ns && ns <= PROFILE_SIZES &&
              memcmp(r->sizes, sizes, sizeof *sizes * (size_t)ns) == 0;
  if (!same && f) {
    r->f = f, r->nsizes = ns, r->f_flops = profile_prim_flops(f, sizes);
    if (ns <= PROFILE_SIZES)
      memcpy(r->sizes, sizes, sizeof *sizes * (size_t)ns);
    else
      r->f = NULL; /* too many sizes to remember: count again next time */
  }
  add_flops(r, f ? r->f_flops : -1);
}

static double dim(const RtTensor *t, int d) {
  if (d < 0) d += t->ndim;
  return d >= 0 && d < t->ndim ? (double)t->shape[d] : 0;
}

/* A reference kernel ran: flops from its op's cost kind. */
static void on_reference(void *user, int op, int nin, RtTensor *const *in, int nout,
                         RtTensor *const *out, double ms) {
  const OpDef *d = ops_get(op);
  char name[128];
  snprintf(name, sizeof name, "%s (reference)", d ? d->name : "?");
  Row *r = row_for(user, name, true);
  r->calls++, r->ms += ms, r->bytes += nbytes(in, nin) + nbytes(out, nout);
  double on = nout > 0 ? (double)out[0]->numel : 0, flops = -1;
  OpCost k = d ? d->cost : OPCOST_NONE;
  if (k == OPCOST_ELEMWISE && nout > 0) flops = on;
  if (k == OPCOST_MATMUL && nin > 1 && nout > 0) flops = 2 * on * dim(in[0], -1);
  if (k == OPCOST_CONV2D && nin > 1 && nout > 0 && in[1]->ndim == 4)
    flops = 2 * on * dim(in[1], 1) * dim(in[1], 2) * dim(in[1], 3);
  add_flops(r, flops);
}

/* ───────────────────────── start, stop ───────────────────────── */

Profile *profile_start(void) {
  if (active) return NULL;
  Profile *p = calloc(1, sizeof *p);
  if (!p) rly_oom();
  p->kernels0 = jit_kernel_count();
  p->running = true;
  active = p;
  jit_set_run_hook(on_jit, p);
  kernels_set_run_hook(on_reference, p);
  p->t0 = now_ms();
  return p;
}

/* Compiling: the kernels added to the JIT's table since the start. */
void profile_stop(Profile *p) {
  if (!p || !p->running) return;
  p->total_ms = now_ms() - p->t0;
  jit_set_run_hook(NULL, NULL);
  kernels_set_run_hook(NULL, NULL);
  p->running = false;
  active = NULL;
  for (int i = p->kernels0; i < jit_kernel_count(); i++) {
    JitKernelInfo k;
    if (!jit_kernel_info(i, &k) || k.first) continue; /* identical TIR: compiled once */
    p->compile_ms += k.from_disk ? k.load_ms : k.compile_ms;
    p->compiled++;
  }
}

void profile_free(Profile *p) {
  if (!p) return;
  profile_stop(p);
  for (int i = 0; i < p->n; i++) free(p->rows[i].name);
  free(p->rows);
  free(p);
}

/* ───────────────────────── the table ───────────────────────── */

static int by_time(const void *a, const void *b) {
  const Row *x = a, *y = b;
  return x->ms > y->ms ? -1 : x->ms < y->ms;
}

static void rate(FILE *out, double amount, double ms, bool unknown) {
  if (unknown || amount <= 0 || ms <= 0)
    fprintf(out, " %9s", "-");
  else
    fprintf(out, " %9.2f", amount / (ms * 1e6));
}

static void line(FILE *out, int w, const char *name, const char *calls, double ms, double total) {
  int len = (int)strlen(name);
  if (len > w)
    fprintf(out, "%.*s...", w - 3, name);
  else
    fprintf(out, "%-*s", w, name);
  fprintf(out, " %7s %11.3f ms %6.1f%%", calls, ms, total > 0 ? 100 * ms / total : 0);
}

void profile_print(const Profile *p, FILE *out) {
  Row *rows = malloc(sizeof *rows * (size_t)(p->n + 1));
  if (!rows) rly_oom();
  if (p->n) memcpy(rows, p->rows, sizeof *rows * (size_t)p->n);
  qsort(rows, (size_t)p->n, sizeof *rows, by_time);
  int w = 38;
  double in_kernels = 0;
  for (int i = 0; i < p->n; i++) {
    int len = (int)strlen(rows[i].name) + !rows[i].reference;
    w = len > w ? (len > NAME_MAX_SHOWN ? NAME_MAX_SHOWN : len) : w;
    in_kernels += rows[i].ms;
  }
  double outside = p->total_ms - in_kernels - p->compile_ms;
  if (outside < 0) outside = 0;
  double total = in_kernels + p->compile_ms + outside;
  fprintf(out, "%-*s %7s %14s %7s %9s %9s\n", w, "kernel", "calls", "time", "share", "GFLOP/s",
          "GB/s");
  for (int i = 0; i < p->n; i++) {
    const Row *r = &rows[i];
    char name[512], calls[32];
    snprintf(name, sizeof name, "%s%s", r->reference ? "" : "@", r->name);
    snprintf(calls, sizeof calls, "%llu", (unsigned long long)r->calls);
    line(out, w, name, calls, r->ms, total);
    rate(out, r->flops, r->ms, r->flops_unknown);
    rate(out, r->bytes, r->ms, false);
    fputc('\n', out);
  }
  if (p->compiled) {
    char name[64];
    snprintf(name, sizeof name, "(compiling %d kernel%s)", p->compiled,
             p->compiled == 1 ? "" : "s");
    line(out, w, name, "", p->compile_ms, total);
    fputc('\n', out);
  }
  line(out, w, "(outside kernels: evaluator, dispatch)", "", outside, total);
  fputc('\n', out);
  line(out, w, "total", "", total, total);
  fputc('\n', out);
  free(rows);
}

/* ───────────────────────── for pictures ───────────────────────── */

double profile_kernels_ms(const Profile *p) {
  double ms = 0;
  for (int i = 0; p && i < p->n; i++) ms += p->rows[i].ms;
  return ms;
}

void profile_totals(const Profile *p, double *flops, double *bytes) {
  *flops = *bytes = 0;
  for (int i = 0; p && i < p->n; i++) {
    if (!p->rows[i].flops_unknown) *flops += p->rows[i].flops;
    *bytes += p->rows[i].bytes;
  }
}

double profile_share(const Profile *p, const char *name, bool reference, double *ms) {
  double total = profile_kernels_ms(p);
  char row[160]; /* a reference kernel's row is "OP (reference)" (on_reference) */
  snprintf(row, sizeof row, reference ? "%s (reference)" : "%s", name ? name : "");
  for (int i = 0; p && name && i < p->n; i++)
    if (p->rows[i].reference == reference && strcmp(p->rows[i].name, row) == 0) {
      if (ms) *ms = p->rows[i].ms;
      return total > 0 ? p->rows[i].ms / total : 0;
    }
  return -1;
}
