/* sched_sample.c — the sampling primitives a search uses:
 * sample_perfect_tile(loop, n, max_innermost_factor) gives n factors whose
 * product is the loop's extent (the innermost at most the limit), and
 * sample_categorical(candidates, probs) one candidate.  The draw comes from
 * the schedule's seeded state; the step as recorded gets `decision=`, so
 * the trace replays to the same choice (a decision given in the text is
 * checked and used). */
#include <string.h>

#include "sched/sched_int.h"

static uint64_t draw(Sched *s) {
  s->rng ^= s->rng << 13, s->rng ^= s->rng >> 7, s->rng ^= s->rng << 17;
  return s->rng;
}

/* The recorded step: the original's arguments and `decision=` (replacing one). */
static void record_decision(Sched *s, const SchedStep *st, SchedArg decision) {
  SchedArg *args = arena_alloc(s->a, sizeof(SchedArg) * (size_t)(st->nargs + 1));
  int n = 0;
  for (int i = 0; i < st->nargs; i++)
    if (!st->args[i].key || strcmp(st->args[i].key, "decision") != 0) args[n++] = st->args[i];
  decision.key = "decision";
  args[n++] = decision;
  *s->record = *st;
  s->record->args = args, s->record->nargs = n;
}

/* ───────────────────────── sample_perfect_tile ───────────────────────── */

/* Draws n factors of e (each a divisor of what is left), the innermost at
 * most maxin (0: no limit). */
static void draw_tile(Sched *s, int64_t e, int n, int64_t maxin, int64_t *f) {
  int64_t left = e;
  for (int i = n - 1; i > 0; i--) {
    int64_t divs[256];
    int nd = 0;
    for (int64_t d = 1; d <= left && nd < 256; d++)
      if (left % d == 0 && (i != n - 1 || !maxin || d <= maxin)) divs[nd++] = d;
    f[i] = divs[draw(s) % (uint64_t)nd];
    left /= f[i];
  }
  f[0] = left;
}

static bool check_tile(Sched *s, const SchedArg *a, const int64_t *f, int n, int64_t e,
                       int64_t maxin) {
  int64_t prod = 1;
  for (int i = 0; i < n; i++) {
    if (f[i] <= 0) return sched_fail(s, a->span, "a decision's factors are positive");
    prod *= f[i];
  }
  if (prod != e)
    return sched_fail(s, a->span, "the decision's product %lld is not the loop's extent %lld",
                      (long long)prod, (long long)e);
  if (maxin && f[n - 1] > maxin)
    return sched_fail(s, a->span, "the innermost factor %lld is over max_innermost_factor %lld",
                      (long long)f[n - 1], (long long)maxin);
  return true;
}

static SchedArg int_list(Sched *s, const int64_t *v, int n, Span sp) {
  SchedArg l = {.kind = SA_LIST, .span = sp};
  l.u.list.n = n;
  l.u.list.items = arena_alloc(s->a, sizeof(SchedArg) * (size_t)n);
  for (int i = 0; i < n; i++)
    l.u.list.items[i] = (SchedArg){.kind = SA_INT, .span = sp, .u.i = v[i]};
  return l;
}

bool sp_sample_perfect_tile(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *la = sched_need(s, st, 0, "loop", "a loop");
  const SchedArg *na = la ? sched_need(s, st, 1, "n", "n=N") : NULL;
  const SchedArg *ma = sched_arg(st, 2, "max_innermost_factor");
  const SchedArg *da = sched_arg(st, -1, "decision");
  TirVar *v;
  SPath p;
  int64_t n, maxin = 0, f[SCHED_MAX_VALS];
  if (!na || !sched_arg_loop(s, la, &v) || !sched_need_loop(s, v, la->span, &p) ||
      !sched_arg_int(s, na, &n) || (ma && !sched_arg_int(s, ma, &maxin)))
    return false;
  if (n < 1 || n > SCHED_MAX_VALS)
    return sched_fail(s, na->span, "n is from 1 to %d", SCHED_MAX_VALS);
  int64_t e = sched_loop_extent(p.node[p.n - 1]);
  if (e < 1 || tir_for_lo(p.node[p.n - 1], 0))
    return sched_fail(s, la->span, "the loop needs a constant extent starting at 0");
  int nd;
  if (da) {
    if (!sched_arg_ints(s, da, f, SCHED_MAX_VALS, &nd)) return false;
    if (nd != n)
      return sched_fail(s, da->span, "the decision has %d factors, n is %lld", nd, (long long)n);
    if (!check_tile(s, da, f, (int)n, e, maxin)) return false;
  } else {
    draw_tile(s, e, (int)n, maxin, f);
  }
  record_decision(s, st, int_list(s, f, (int)n, st->span));
  for (int i = 0; i < n; i++) out->v[out->n++] = (Handle){.kind = H_INT, .i = f[i]};
  return true;
}

/* ───────────────────────── sample_categorical ───────────────────────── */

bool sp_sample_categorical(Sched *s, const SchedStep *st, SchedVals *out) {
  const SchedArg *ca = sched_need(s, st, 0, "candidates", "candidates=[...]");
  const SchedArg *pa = ca ? sched_need(s, st, 1, "probs", "probs=[...]") : NULL;
  const SchedArg *da = sched_arg(st, -1, "decision");
  int64_t c[SCHED_MAX_VALS];
  int nc;
  if (!pa || !sched_arg_ints(s, ca, c, SCHED_MAX_VALS, &nc)) return false;
  if (pa->kind != SA_LIST || pa->u.list.n != nc || !nc)
    return sched_fail(s, pa->span, "probs needs one probability per candidate");
  double total = 0, p[SCHED_MAX_VALS];
  for (int i = 0; i < nc; i++) {
    const SchedArg *x = &pa->u.list.items[i];
    p[i] = x->kind == SA_FLOAT ? x->u.f : x->kind == SA_INT ? (double)x->u.i : -1;
    if (p[i] < 0) return sched_fail(s, x->span, "a probability is a number, at least 0");
    total += p[i];
  }
  if (total <= 0) return sched_fail(s, pa->span, "the probabilities sum to 0");
  int64_t k = 0;
  if (da && !sched_arg_int(s, da, &k)) return false;
  if (da && (k < 0 || k >= nc))
    return sched_fail(s, da->span, "the decision is a candidate's index, 0 to %d", nc - 1);
  if (!da) {
    double r = (double)(draw(s) >> 11) / 9007199254740992.0 * total;
    for (k = 0; k < nc - 1 && r >= p[k]; k++) r -= p[k];
  }
  record_decision(s, st, (SchedArg){.kind = SA_INT, .span = st->span, .u.i = k});
  out->v[out->n++] = (Handle){.kind = H_INT, .i = c[k]};
  return true;
}
