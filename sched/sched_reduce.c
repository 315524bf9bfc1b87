/* sched_reduce.c — schedule primitives: decompose_reduction, rfactor, blockize, tensorize. */
#include "sched/sched_int.h"

bool sp_decompose_reduction(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`decompose_reduction` is not available yet");
}

bool sp_rfactor(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`rfactor` is not available yet");
}

bool sp_blockize(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`blockize` is not available yet");
}

bool sp_tensorize(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`tensorize` is not available yet");
}
