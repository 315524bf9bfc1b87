/* sched_sample.c — schedule primitives: sample_perfect_tile, sample_categorical. */
#include "sched/sched_int.h"

bool sp_sample_perfect_tile(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`sample_perfect_tile` is not available yet");
}

bool sp_sample_categorical(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`sample_categorical` is not available yet");
}
