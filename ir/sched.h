/* sched.h — a schedule as text: the steps TensorIR's primitives take on a
 * prim function (sched/ applies them), in rly's syntax:
 *
 *   schedule @mm_relu {
 *     let %Y = get_block("Y");
 *     let (%i, %j, %k) = get_loops(%Y);
 *     let (%j0, %j1) = split(%j, factors=[?, 4]);
 *     reorder(%j0, %k, %j1);
 *     reverse_compute_at(get_block("C"), %j0);
 *   }
 *
 * A step is a primitive's name, its arguments (positional, then `key=`
 * ones) and the names it binds (`let %x = ...` or `let (%a, %b) = ...`).
 * An argument is an integer, `?`, a float, a string, a `%name` bound by an
 * earlier step (or naming a loop of the function), a list, or a nested
 * step whose result it is.  The trace a prim function carries is the same
 * structure: what was applied, in order, with the names each step bound,
 * so printing it gives text that applies again to the same result. */
#ifndef RLY_SCHED_AST_H
#define RLY_SCHED_AST_H

#include "ir/span.h"
#include "ir/util.h"

typedef struct SchedStep SchedStep;

#define SCHED_ARG_KINDS(X)                \
  X(SA_INT, "integer")                    \
  X(SA_UNKNOWN, "`?`")                    \
  X(SA_FLOAT, "float")                    \
  X(SA_STR, "string")                     \
  X(SA_NAME, "name") /* %x */             \
  X(SA_LIST, "list") /* [a, b] */         \
  X(SA_STEP, "step") /* get_block("C") */ \
  X(SA_BOOL, "bool") /* True, False */

typedef enum SchedArgKind {
#define X(e, n) e,
  SCHED_ARG_KINDS(X)
#undef X
} SchedArgKind;

typedef struct SchedArg {
  SchedArgKind kind;
  const char *key; /* `key=value`, or NULL for a positional argument */
  Span span;
  union {
    int64_t i; /* SA_INT, SA_BOOL */
    double f;
    const char *s; /* SA_STR (the string's value), SA_NAME (without `%`) */
    struct {
      int n;
      struct SchedArg *items;
    } list;
    SchedStep *step;
  } u;
} SchedArg;

struct SchedStep {
  const char *prim; /* the primitive's name */
  int nargs;
  SchedArg *args;
  int nouts;
  const char **outs; /* names bound, without `%` */
  bool tuple_out;    /* `let (%a, ...) =` rather than `let %a =` */
  Span span;
};

typedef struct SchedTrace {
  const char *func; /* the prim function's name */
  int n;
  SchedStep **steps;
  Span span;
} SchedTrace;

const char *sched_arg_kind_name(SchedArgKind k);
/* `let (%a, %b) = split(%j, factors=[?, 4]);` */
void print_sched_step_to(StrBuf *b, const SchedStep *s);
/* The call alone: `split(%j, factors=[?, 4])`. */
void print_sched_call_to(StrBuf *b, const SchedStep *s);
/* `schedule @f {\n  step;\n ...}\n` */
void print_sched_trace_to(StrBuf *b, const SchedTrace *t);
/* The named argument `key`, or positional argument `pos` when there is no
 * such key (pos < 0: only by key); NULL when absent. */
const SchedArg *sched_arg(const SchedStep *s, int pos, const char *key);

#endif
