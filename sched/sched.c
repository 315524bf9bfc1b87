/* sched.c — applying a schedule: the state (sched_int.h), the names its
 * steps bind, reading arguments, dispatch through SCHED_PRIMS, and the
 * entry points of sched.h.  Each step is applied to the current function;
 * the function is type-checked again after every step (tir_verify) so a
 * primitive's bug shows as an error, not as wrong code. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/tir_walk.h"
#include "parser/parser.h"
#include "sched/sched_int.h"
#include "types/types.h"

static const SchedPrimInfo prims[] = {
#define X(name, args, help) {#name, args, help},
    SCHED_PRIMS(X)
#undef X
};
static const SchedPrimFn prim_fns[] = {
#define X(name, args, help) sp_##name,
    SCHED_PRIMS(X)
#undef X
};
enum { NPRIMS = sizeof prims / sizeof prims[0] };

int sched_prim_count(void) { return NPRIMS; }
const SchedPrimInfo *sched_prim_info(int i) { return i >= 0 && i < NPRIMS ? &prims[i] : NULL; }

static int prim_index(const char *name) {
  for (int i = 0; i < NPRIMS; i++)
    if (strcmp(prims[i].name, name) == 0) return i;
  return -1;
}

/* ───────────────────────── errors ───────────────────────── */

bool sched_fail(Sched *s, Span where, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  diag_error(s->d, where, "%s", buf);
  return false;
}

void sched_note(Sched *s, Span where, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  diag_note(s->d, where, "%s", buf);
}

/* ───────────────────────── arguments ───────────────────────── */

const SchedArg *sched_need(Sched *s, const SchedStep *st, int pos, const char *key,
                           const char *what) {
  const SchedArg *a = sched_arg(st, pos, key);
  if (!a) sched_fail(s, st->span, "`%s` needs %s", st->prim, what);
  return a;
}

static bool apply_call(Sched *s, const SchedStep *st, SchedVals *out);

/* The loop whose variable is named `name` in the current function: true
 * when exactly one is (*out: one of them, or NULL). */
static bool loop_by_name(Sched *s, const char *name, TirVar **out) {
  PtrVec todo = {0};
  int n = 0;
  *out = NULL;
  vec_push(&todo, s->f->body);
  while (todo.len) {
    Stmt *x = todo.items[--todo.len];
    if (!x) continue;
    if (x->kind == ST_FOR && strcmp(x->u.for_.vars[0]->name, name) == 0)
      *out = x->u.for_.vars[0], n++;
    stmt_children(x, NULL, &todo);
  }
  vec_free(&todo);
  return n == 1;
}

bool sched_eval_arg(Sched *s, const SchedArg *a, Handle *out) {
  if (a->kind == SA_STR) {
    *out = (Handle){.kind = H_BLOCK, .block = a->u.s};
    return true;
  }
  if (a->kind == SA_INT) {
    *out = (Handle){.kind = H_INT, .i = a->u.i};
    return true;
  }
  if (a->kind == SA_STEP) {
    SchedVals v = {0};
    if (!apply_call(s, a->u.step, &v)) return false;
    if (v.n != 1)
      return sched_fail(s, a->span, "`%s` gives %d values here, where one is needed",
                        a->u.step->prim, v.n);
    *out = v.v[0];
    return true;
  }
  if (a->kind != SA_NAME)
    return sched_fail(s, a->span, "expected a block, a loop or a name, found %s",
                      sched_arg_kind_name(a->kind));
  const Handle *h = strmap_get(&s->env, a->u.s);
  if (h) {
    *out = *h;
    return true;
  }
  TirVar *v;
  if (loop_by_name(s, a->u.s, &v)) {
    *out = (Handle){.kind = H_LOOP, .loop = v};
    return true;
  }
  if (v)
    return sched_fail(s, a->span, "several loops are named `%%%s`: bind one with a `let`", a->u.s);
  return sched_fail(s, a->span, "`%%%s` names no loop of `@%s` and no earlier step's result",
                    a->u.s, s->f->name);
}

static const char *const handle_names[] = {"a block", "a loop", "an integer"};

static bool arg_kind(Sched *s, const SchedArg *a, Handle *h, HandleKind want) {
  if (!sched_eval_arg(s, a, h)) return false;
  if (h->kind == want) return true;
  return sched_fail(s, a->span, "expected %s here, found %s", handle_names[want],
                    handle_names[h->kind]);
}

bool sched_arg_block(Sched *s, const SchedArg *a, const char **name) {
  Handle h;
  if (!arg_kind(s, a, &h, H_BLOCK)) return false;
  *name = h.block;
  return true;
}

bool sched_arg_loop(Sched *s, const SchedArg *a, TirVar **loop) {
  Handle h;
  if (!arg_kind(s, a, &h, H_LOOP)) return false;
  *loop = h.loop;
  return true;
}

bool sched_arg_int(Sched *s, const SchedArg *a, int64_t *v) {
  Handle h;
  if (a->kind == SA_BOOL) {
    *v = a->u.i;
    return true;
  }
  if (!arg_kind(s, a, &h, H_INT)) return false;
  *v = h.i;
  return true;
}

bool sched_arg_str(Sched *s, const SchedArg *a, const char **v) {
  if (a->kind != SA_STR)
    return sched_fail(s, a->span, "expected a string, found %s", sched_arg_kind_name(a->kind));
  *v = a->u.s;
  return true;
}

bool sched_arg_ints(Sched *s, const SchedArg *a, int64_t *v, int max, int *n) {
  if (a->kind != SA_LIST)
    return sched_fail(s, a->span, "expected a list like [?, 4], found %s",
                      sched_arg_kind_name(a->kind));
  if (a->u.list.n > max) return sched_fail(s, a->span, "at most %d values", max);
  for (int i = 0; i < a->u.list.n; i++) {
    const SchedArg *x = &a->u.list.items[i];
    if (x->kind == SA_UNKNOWN)
      v[i] = -1;
    else if (!sched_arg_int(s, x, &v[i]))
      return false;
  }
  *n = a->u.list.n;
  return true;
}

/* ───────────────────────── steps ───────────────────────── */

static bool apply_call(Sched *s, const SchedStep *st, SchedVals *out) {
  int i = prim_index(st->prim);
  if (i < 0) {
    sched_fail(s, st->span, "unknown schedule primitive `%s`", st->prim);
    int best = -1, bd = 1 + (int)strlen(st->prim) / 3; /* a third may differ */
    for (int j = 0; j < NPRIMS; j++) {
      int dist = parse_edit_distance(prims[j].name, st->prim);
      if (dist < bd) best = j, bd = dist;
    }
    if (best >= 0) {
      diag_hint(s->d, "did you mean `%s`?", prims[best].name);
      return false;
    }
    diag_hint(s->d, "`:help sched` lists the primitives");
    return false;
  }
  *out = (SchedVals){0};
  return prim_fns[i](s, st, out);
}

static bool bind_outs(Sched *s, const SchedStep *st, const SchedVals *v) {
  if (!st->nouts) return true;
  if (st->nouts != v->n)
    return sched_fail(s, st->span, "`%s` gives %d value%s, the `let` names %d", st->prim, v->n,
                      v->n == 1 ? "" : "s", st->nouts);
  for (int i = 0; i < v->n; i++) {
    Handle *h = ARENA_NEW(s->a, Handle);
    *h = v->v[i];
    strmap_put(&s->env, st->outs[i], h);
  }
  return true;
}

/* Applies one step; on success the current function has changed (or not,
 * for the finding primitives) and it type-checks. */
static bool apply_step(Sched *s, const SchedStep *st) {
  SchedVals v;
  s->step = st;
  s->record = ARENA_NEW(s->a, SchedStep);
  *s->record = *st;
  Stmt *before = s->f->body;
  if (!apply_call(s, st, &v) || !bind_outs(s, st, &v)) {
    s->f->body = before;
    return false;
  }
  if (s->f->body != before && !tir_verify(NULL, s->f, s->d)) {
    sched_note(s, st->span, "the function `%s` made does not check (a bug of the primitive)",
               st->prim);
    s->f->body = before;
    return false;
  }
  return true;
}

static void sched_init(Sched *s, Arena *a, const PrimFunc *f, DiagCtx *d, const SchedOptions *o) {
  *s = (Sched){.a = a, .d = d, .rng = (o ? o->seed : 0) * 0x9E3779B97F4A7C15ull + 1};
  s->f = ARENA_NEW(a, PrimFunc);
  *s->f = *f;
  s->f->trace = NULL, s->f->unscheduled = NULL, s->f->lowered = NULL;
  s->f->body = sched_normalize(s, f->body);
}

/* Replays steps[0..n) on s; appends each applied step (as recorded) to out. */
static bool replay(Sched *s, SchedStep *const *steps, int n, PtrVec *out) {
  for (int i = 0; i < n; i++) {
    if (!apply_step(s, steps[i])) return false;
    vec_push(out, s->record);
  }
  return true;
}

/* The function as it runs: the scheduled one with its buffers compacted
 * (NULL when compaction changes nothing). */
static const PrimFunc *lowered(Sched *s) {
  Stmt *scheduled = s->f->body;
  sched_compact(s);
  if (s->f->body == scheduled) return NULL;
  PrimFunc *low = ARENA_NEW(s->a, PrimFunc);
  *low = *s->f;
  s->f->body = scheduled;
  return low;
}

static PrimFunc *finish(Sched *s, const PrimFunc *orig, PtrVec *steps, Span sp) {
  s->f->lowered = steps->len ? lowered(s) : NULL;
  SchedTrace *t = ARENA_NEW(s->a, SchedTrace);
  t->func = orig->name, t->n = (int)steps->len, t->span = sp;
  t->steps = (SchedStep **)vec_finish(steps, s->a);
  s->f->trace = t;
  s->f->unscheduled = orig;
  strmap_free(&s->env);
  return s->f;
}

static const PrimFunc *original(const PrimFunc *f) {
  if (f->unscheduled) return f->unscheduled;
  PrimFunc *o = (PrimFunc *)f; /* pending: the function itself, without its trace */
  return o;
}

PrimFunc *sched_apply_trace(Arena *a, const PrimFunc *f, DiagCtx *d, const SchedOptions *o) {
  const PrimFunc *orig = original(f);
  PrimFunc *plain = ARENA_NEW(a, PrimFunc);
  *plain = *orig;
  plain->trace = NULL, plain->unscheduled = NULL;
  Sched s;
  sched_init(&s, a, plain, d, o);
  PtrVec steps = {0};
  if (f->trace && !replay(&s, f->trace->steps, f->trace->n, &steps)) {
    vec_free(&steps);
    strmap_free(&s.env);
    return NULL;
  }
  return finish(&s, plain, &steps, f->trace ? f->trace->span : f->span);
}

PrimFunc *sched_apply_step(Arena *a, const PrimFunc *f, const SchedStep *st, DiagCtx *d,
                           const SchedOptions *o) {
  const PrimFunc *orig = f->unscheduled ? f->unscheduled : f;
  Sched s;
  sched_init(&s, a, orig, d, o);
  PtrVec steps = {0};
  bool ok = (!f->trace || !f->unscheduled || replay(&s, f->trace->steps, f->trace->n, &steps)) &&
            apply_step(&s, st);
  if (ok) vec_push(&steps, s.record);
  if (!ok) {
    vec_free(&steps);
    strmap_free(&s.env);
    return NULL;
  }
  return finish(&s, orig, &steps, st->span);
}

PrimFunc *sched_prefix(Arena *a, const PrimFunc *f, int k, DiagCtx *d, const SchedOptions *o) {
  const PrimFunc *orig = f->unscheduled ? f->unscheduled : f;
  Sched s;
  sched_init(&s, a, orig, d, o);
  PtrVec steps = {0};
  int n = f->trace ? f->trace->n : 0;
  if (k > n) k = n;
  if (k > 0 && !replay(&s, f->trace->steps, k, &steps)) {
    vec_free(&steps);
    strmap_free(&s.env);
    return NULL;
  }
  return finish(&s, orig, &steps, f->span);
}
