/* tune_db.h — reading the tuning database (engine/tune.c writes it): one
 * reader for both kinds of record the file holds, a prim function's best
 * schedule (`record`, engine/tune.c) and a fused kernel's best knobs
 * (`kernel`, engine/tune_kernel.c). */
#ifndef RLY_ENGINE_TUNE_DB_H
#define RLY_ENGINE_TUNE_DB_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/util.h"

typedef enum { TUNE_REC_SCHEDULE, TUNE_REC_KNOBS } TuneRecKind;

/* One record read from the file. */
typedef struct TuneRecord {
  TuneRecKind kind;
  char head[4096]; /* "@name workload=... (...)" */
  char target[4096];
  double gflops;
  char knobs[4096]; /* TUNE_REC_KNOBS: the knobs' text */
  StrBuf sched;     /* TUNE_REC_SCHEDULE: `schedule @name { ... }` */
} TuneRecord;

/* The next record of fp, of either kind (r->sched then owns its text:
 * the caller frees it); false at the end. */
bool tune_db_next(FILE *fp, TuneRecord *r);
/* The workload part of a record's head (after "@name "). */
const char *tune_db_workload(const char *head);

#endif
