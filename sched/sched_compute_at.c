/* sched_compute_at.c — schedule primitives: compute_at, reverse_compute_at, compute_inline,
 * reverse_compute_inline. */
#include "sched/sched_int.h"

bool sp_compute_at(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`compute_at` is not available yet");
}

bool sp_reverse_compute_at(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`reverse_compute_at` is not available yet");
}

bool sp_compute_inline(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`compute_inline` is not available yet");
}

bool sp_reverse_compute_inline(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`reverse_compute_inline` is not available yet");
}
