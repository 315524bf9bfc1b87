/* options.h — the engine's options, one row each (ENGINE_OPTIONS): the
 * EngineOptions field, its kind and C type, the values it takes, its
 * default, the environment variable that sets it, its `:set` name, its
 * command-line flag and its help.  Everything else is generated from the
 * rows: the struct, engine_options_default (the default texts parsed as
 * `:set` parses them), engine_options_from_env, the engine's rows of
 * `:set` and `:help set` (repl/settings.c), and the flags of `rly --help`
 * and getopt_long (repl/main.c).  Adding an option is one row here plus
 * what it controls (engine_set_options). */
#ifndef RLY_ENGINE_OPTIONS_H
#define RLY_ENGINE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(enum, name): the execution modes, in `:set exec` order. */
#define EXEC_MODES(X) \
  X(EXEC_JIT, "jit")  \
  X(EXEC_INTERP, "interp")

typedef enum ExecMode {
#define X(e, n) e,
  EXEC_MODES(X)
#undef X
} ExecMode;

#define EXEC_MODE_NAME(e, n) n,
#define OPT_EXEC_VALUES ((const char *const[]){EXEC_MODES(EXEC_MODE_NAME) NULL})
#define OPT_ON_OFF ((const char *const[]){"on", "off", NULL})
#define OPT_LEVELS ((const char *const[]){"O0", "O1", "O2", "O3", NULL})
#define OPT_PRNG ((const char *const[]){"partitionable", "original", NULL})

/* What an option's value is (and how `:set`, the environment and a flag
 * write it). */
typedef enum OptionKind {
  OPT_BOOL, /* on or off (true/false and 1/0 are accepted too) */
  OPT_INT,  /* an integer from min to max */
  OPT_ENUM, /* one of values: its index */
  OPT_TEXT, /* a word, such as a directory, or `off` (the empty string) */
  OPT_SIZE, /* a memory size in bytes: 512M, 4G, 50% (engine_parse_size) */
} OptionKind;

/* X(field, kind, C type, values (ENUM; on/off for BOOL), min, max (INT),
 *   default as `:set` takes it, environment variable or NULL, the
 *   variable's value that turns a BOOL from its default (NULL: the value
 *   is parsed as `:set` parses it; an unparsable one is ignored),
 *   `:set` name or NULL, command-line flag or NULL, help).
 * The rows with a `:set` name are listed in this order by `:set`. */
#define ENGINE_OPTIONS(X)                                                                         \
  X(print_limit, OPT_INT, int64_t, NULL, 1, INT64_MAX, "1000", NULL, NULL, "print-limit", NULL,   \
    "tensors with more than N elements print summarized")                                         \
  X(max_depth, OPT_INT, int64_t, NULL, 1, INT64_MAX, "100000", NULL, NULL, "max-depth", NULL,     \
    "limit on non-tail call depth (deep recursion)")                                              \
  X(max_memory, OPT_SIZE, int64_t, NULL, 1, INT64_MAX, "75%", "RLY_MAX_MEMORY", NULL,             \
    "max-memory", "max-memory",                                                                   \
    "limit on the tensor data alive at once: bytes, K/M/G/T, or N% of the memory")                \
  X(prng_original, OPT_ENUM, bool, OPT_PRNG, 0, 0, "partitionable", NULL, NULL, "prng", NULL,     \
    "JAX's PRNG mode for random ops")                                                             \
  X(exec, OPT_ENUM, ExecMode, OPT_EXEC_VALUES, 0, 0, "jit", "RLY_EXEC", NULL, "exec", "exec",     \
    "jit: fused, compiled kernels; interp: reference kernels only")                               \
  X(opt_level, OPT_ENUM, int, OPT_LEVELS, 0, 0, "O2", NULL, NULL, "opt", NULL,                    \
    "LLVM optimization level of kernels compiled from now on")                                    \
  X(approx_math, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_APPROX_MATH", "0", "approx-math",   \
    NULL, "jit: float32 exp/tanh/erf/softmax as TVM's fast_* approximations (FastMath)")          \
  X(print_after_all, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "off", NULL, NULL, "print-after-all",      \
    "print-after-all", "print the IR after each pass of a compile, :pass and :step, on stderr")   \
  X(fp_contract, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_JIT_CONTRACT", "0", "fp-contract",  \
    NULL, "jit: a*b+c in kernels may be one fused multiply-add, rounded once (off: as interp)")   \
  X(threads, OPT_INT, int, NULL, 0, 4096, "0", "RLY_NUM_THREADS", NULL, NULL, NULL,               \
    "kernel thread pool size; 0: one per core")                                                   \
  X(disk_cache, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_JIT_CACHE", "0", NULL, NULL,         \
    "keep compiled kernels on disk, in cache_dir")                                                \
  X(cache_dir, OPT_TEXT, char, NULL, 0, 0, "off", NULL, NULL, NULL, NULL,                         \
    "the disk cache: $XDG_CACHE_HOME/rly, else ~/.cache/rly; off with no home")                   \
  X(jit_module, OPT_TEXT, char, NULL, 0, 0, "off", "RLY_JIT_MODULE", NULL, NULL, NULL,            \
    "rly-jit.so to load; off: the one beside the executable")                                     \
  X(jit_require, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "off", "RLY_JIT_REQUIRE", "1", NULL, NULL,     \
    "jit mode may not fall back to the reference path (no JIT, a kernel that does not compile): " \
    "an error instead (the tests)")                                                               \
  X(fast_math, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_FAST_MATH", "0", NULL, NULL,          \
    "dense accumulates in its dtype (off: float64, exact)")                                       \
  X(fuse_max_depth, OPT_INT, int, NULL, 1, INT32_MAX, "256", "RLY_FUSE_MAX_DEPTH", NULL, NULL,    \
    NULL, "ops per fused group (TVM's 256)")                                                      \
  X(fast_path, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_FAST", "0", NULL, NULL,               \
    "the evaluator's scalar fast path")                                                           \
  X(fast_trace, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "off", "RLY_FAST", "trace", NULL, NULL,         \
    "report on stderr what runs on the scalar fast path")                                         \
  X(planned, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_PLAN", "0", NULL, NULL,                 \
    "dataflow functions run on the planned executor")                                             \
  X(specialize, OPT_INT, int, NULL, 0, 4096, "16", "RLY_SPECIALIZE", NULL, "specialize", NULL,    \
    "jit: copies of functions with ? dimensions kept, lowered per argument shape (LRU); 0: none") \
  X(verify_schedules, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "off", "RLY_VERIFY_SCHEDULES", "1", NULL, \
    NULL, "every schedule step's result compared with the unscheduled function's (:set verify)")  \
  X(tuning_db, OPT_BOOL, bool, OPT_ON_OFF, 0, 0, "on", "RLY_TUNING_DB", "0", NULL, NULL,          \
    "a prim function defined without a schedule gets the tuning database's for its workload")     \
  X(tuning_log, OPT_TEXT, char, NULL, 0, 0, "off", NULL, NULL, NULL, "tuning-log",                \
    "the tuning database :tune writes and definitions read (off: cache_dir/tuning.txt)")

/* The field of a row: text options are fixed-size strings. */
#define OPT_FIELD_OPT_BOOL(type, field) type field;
#define OPT_FIELD_OPT_INT(type, field) type field;
#define OPT_FIELD_OPT_ENUM(type, field) type field;
#define OPT_FIELD_OPT_SIZE(type, field) type field;
#define OPT_FIELD_OPT_TEXT(type, field) type field[512];

typedef struct EngineOptions {
#define X(field, kind, type, ...) OPT_FIELD_##kind(type, field)
  ENGINE_OPTIONS(X)
#undef X
} EngineOptions;

/* The rows' indices. */
typedef enum EngineOptionId {
#define X(field, ...) OPTION_##field,
  ENGINE_OPTIONS(X)
#undef X
      ENGINE_OPTION_COUNT
} EngineOptionId;

/* One row, as data. */
typedef struct OptionInfo {
  const char *field;
  OptionKind kind;
  const char *const *values; /* NULL-terminated */
  int64_t min, max;
  const char *def, *env, *env_value, *set, *flag, *help;
} OptionInfo;

const OptionInfo *engine_option_info(int i); /* NULL past the end */
/* A value as `:set` writes it, by the row's kind: *v gets 0/1, the
 * index of a word, the integer or the bytes (not for OPT_TEXT). */
bool option_parse(const OptionInfo *oi, const char *text, int64_t *v);
/* What a value must be ("on or off", "jit or interp", "a positive
 * integer", "a size such as 512M, 4G or 50%"), into buf. */
const char *option_describe(const OptionInfo *oi, char *buf, size_t n);
/* Option i's value in o (0 for OPT_TEXT), and setting it. */
int64_t engine_option_get(const EngineOptions *o, int i);
void engine_option_set(EngineOptions *o, int i, int64_t v);
/* OPT_TEXT rows: the text ("" for off). */
const char *engine_option_text(const EngineOptions *o, int i);
void engine_option_set_text(EngineOptions *o, int i, const char *v);
/* Option i from text as `:set` takes it (text options too: `off` is "");
 * false when the text is not a value of it (o unchanged). */
bool engine_option_parse(EngineOptions *o, int i, const char *text);

#endif
