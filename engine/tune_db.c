/* tune_db.c — the tuning database's reader (engine/tune_db.h).  A record
 * starts at its `record ` or `kernel ` line, then `target: ` and
 * `gflops: `; a kernel record ends at its `knobs: ` line, a schedule
 * record at the closing `}` of its schedule block. */
#include "engine/tune_db.h"

#include <stdlib.h>
#include <string.h>

static bool starts(const char *line, const char *prefix) {
  return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* Starts a record of kind k whose head follows the 7-character keyword. */
static void begin(TuneRecord *r, TuneRecKind k, const char *line) {
  free(sb_take(&r->sched));
  *r = (TuneRecord){.kind = k};
  snprintf(r->head, sizeof r->head, "%s", line + 7);
}

/* Takes one line into r; true when it ends the record. */
static bool take_line(TuneRecord *r, const char *line) {
  if (starts(line, "record "))
    begin(r, TUNE_REC_SCHEDULE, line);
  else if (starts(line, "kernel "))
    begin(r, TUNE_REC_KNOBS, line);
  else if (!r->head[0])
    return false; /* outside a record */
  else if (starts(line, "target: "))
    snprintf(r->target, sizeof r->target, "%s", line + 8);
  else if (starts(line, "gflops: "))
    r->gflops = atof(line + 8);
  else if (r->kind == TUNE_REC_KNOBS && starts(line, "knobs: "))
    return snprintf(r->knobs, sizeof r->knobs, "%s", line + 7), true;
  else if (r->kind == TUNE_REC_SCHEDULE)
    return sb_printf(&r->sched, "%s\n", line), strcmp(line, "}") == 0;
  return false;
}

bool tune_db_next(FILE *fp, TuneRecord *r) {
  char line[4096];
  *r = (TuneRecord){0};
  while (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\n")] = 0;
    if (take_line(r, line)) return true;
  }
  free(sb_take(&r->sched));
  return false;
}

const char *tune_db_workload(const char *head) {
  const char *sp = strchr(head, ' ');
  return sp ? sp + 1 : "";
}
