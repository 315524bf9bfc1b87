/* rly.h — embedding rly in a C program: open a session, load Relay text or
 * a file, run passes by name, call a function with DLPack tensors and get
 * DLPack results, choose the exec mode, read the error text.
 *
 *   rly_session *s = rly_open(0);
 *   if (rly_load_text(s, "<my>", "def @f(%x: Tensor[(4), float32]) { exp(%x) }") != 0)
 *     fprintf(stderr, "%s", rly_error(s));
 *   DLManagedTensor *out;
 *   int n;
 *   rly_call(s, "f", &x, 1, &out, 1, &n);   // x: a DLTensor on the CPU
 *   ... out->dl_tensor ...; out->deleter(out);
 *   rly_close(s);
 *
 * Every function that can fail returns 0 on success and -1 on failure,
 * after which rly_error(s) holds the diagnostics as rly prints them
 * (`file:line:col: error: ...`, the source line, a caret).  Nothing here
 * exits or aborts on a user error.  A session is used by one thread at a
 * time; sessions on different threads run side by side, each with its own
 * settings (exec mode, memory limit, optimisation level), memory count and
 * kernels.  Compiled code is shared between sessions when the kernel's
 * text and options are equal.  The JIT is set up but LLVM is loaded only
 * on the first kernel. */
#ifndef RLY_H
#define RLY_H

#include <dlpack/dlpack.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rly_session rly_session;

typedef enum rly_exec {
  RLY_EXEC_JIT = 0,    /* pure tensor work fused, lowered to TIR and JIT-compiled (default) */
  RLY_EXEC_INTERP = 1, /* reference kernels and the TIR interpreter only */
} rly_exec;

enum {
  RLY_OPEN_NO_PRELUDE = 1, /* do not load the standard library (List, map, ...) */
  RLY_OPEN_ENV = 2,        /* take options from RLY_* environment variables, as rly does */
};

/* A new session (flags: RLY_OPEN_*), or NULL if out of memory. */
rly_session *rly_open(int flags);
void rly_close(rly_session *s);

int rly_set_exec(rly_session *s, rly_exec mode);
/* The session's memory limit: bytes of tensor data alive at once (default
 * RLY_MAX_MEMORY with RLY_OPEN_ENV, else 75% of the machine's memory); an
 * allocation past it fails with an error naming the limit. */
int rly_set_max_memory(rly_session *s, size_t bytes);
/* LLVM's optimisation level (0..3, default 2) for the kernels the session
 * compiles from now on. */
int rly_set_opt_level(rly_session *s, int level);

/* Adds the definitions of `text` (named `name` in messages) to the
 * session's module; top-level expressions in it are evaluated in order,
 * and `let %x = e;` binds a session variable that later loads and
 * rly_eval see.  A load is all or nothing: when any part of it fails (a
 * parse or type error, or an error while evaluating), the module and the
 * session variables are as before.  Definitions may replace the standard
 * library's (a program's own `type Option`): what depends on the replaced
 * ones is left out. */
int rly_load_text(rly_session *s, const char *name, const char *text);
int rly_load_file(rly_session *s, const char *path);

/* Imports the ONNX model at path as @func (NULL: @main), its weights bound
 * as constants, as `:import` does; a failed import changes nothing. */
int rly_import_onnx(rly_session *s, const char *path, const char *func);

/* Runs passes on the module, e.g. "EffectToState" or "ToANormalForm,FuseOps"
 * (the names of `rly --pass`); the result replaces the module. */
int rly_run_passes(rly_session *s, const char *names);

/* Calls @func on nargs CPU tensors (contiguous, row-major; int, uint,
 * float or bool dtypes).  An argument whose data is 64-byte aligned is read
 * in place, not copied (it must not change during the call; rly never
 * writes it); others are copied in.  The results (one per tensor of the
 * result: a tuple gives several) go to results[0..*nresults), each a
 * tensor the caller frees with its deleter: the run time's own buffer,
 * handed over without a copy, when nothing else in the session holds it
 * (64-byte aligned then), else a copy.  Fails when the result has more
 * than max_results tensors or is not made of tensors. */
int rly_call(rly_session *s, const char *func, const DLTensor *args, int nargs,
             DLManagedTensor **results, int max_results, int *nresults);

/* Evaluates an expression (session variables visible); *text gets its
 * printed value (free it). */
int rly_eval(rly_session *s, const char *expr, char **text);

/* The module as canonical text (free it). */
char *rly_print(rly_session *s);

/* How many kernels the JIT has compiled (or loaded from its disk cache)
 * for the session used last on this thread: 0 means nothing ran through
 * compiled code. */
int rly_kernel_count(void);

/* Frees what rly_print and rly_eval return (free() does the same). */
void rly_free(void *p);

/* The diagnostics of the last failure ("" after a success). */
const char *rly_error(const rly_session *s);

#ifdef __cplusplus
}
#endif

#endif
