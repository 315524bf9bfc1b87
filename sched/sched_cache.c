/* sched_cache.c — schedule primitives: cache_read, cache_write, storage_align. */
#include "sched/sched_int.h"

bool sp_cache_read(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`cache_read` is not available yet");
}

bool sp_cache_write(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`cache_write` is not available yet");
}

bool sp_storage_align(Sched *s, const SchedStep *st, SchedVals *out) {
  (void)out;
  return sched_fail(s, st->span, "`storage_align` is not available yet");
}
