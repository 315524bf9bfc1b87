/* tir_interp.h — the reference interpreter of TIR prim functions
 * (text-format.md B.5): every prim function runs without LLVM, so the JIT
 * can be compared against it.
 *
 * A PrimFunc is compiled once into a tree of closures (function pointer +
 * operands, scalar variables in numbered registers) and then run on
 * run-time tensors: the parameters in order, inputs then outputs
 * (destination passing).  Outputs are written in place.
 *
 * Semantics (the JIT must agree):
 *  - Buffer parameters bind to tensors: rank, dtype and constant dims must
 *    match; size variables bind on first use and must agree afterwards.
 *  - Loops of every kind (range, grid, parallel, vectorized, unrolled) run
 *    sequentially in order, from their begin (0 unless given, as in
 *    `parallel(begin, end)`) up to end, excluded; bounds are evaluated once,
 *    on entry; begin >= end runs nothing; a negative begin is allowed.
 *  - A block binds its iteration variables, then runs `init` when every
 *    loop variable used by a `reduce` binding is at its loop's first value,
 *    its begin (for `reduce %vk = %k` over range(0, n) or grid(n): when
 *    %vk == 0, as TVM's LowerInitBlock; over range(2, n) or
 *    unrolled(2, n): when %k == 2).  A block without reduce variables
 *    always runs its init.
 *  - `alloc` buffers are zero-filled each time the statement runs and
 *    freed when the function returns; fresh outputs given by call_tir are
 *    zero-filled too, so results never depend on garbage.
 *  - Every load and store is bounds checked: an error names the buffer, the
 *    dimension and the index, at the load's (or store's) span.
 *  - Integers are kept at their dtype's width (two's complement wrap).
 *    `/` and `%` on integers truncate toward zero (C, LLVM sdiv/srem;
 *    udiv/urem for unsigned); division by zero is an error.  `%` on floats
 *    is fmod.  `&&`, `||` and `select` evaluate lazily (a load in the
 *    branch not taken is not checked).
 *  - Float arithmetic happens in the operands' dtype (float32 in float;
 *    float16 computed in double and rounded once to half).  max/min
 *    propagate NaN.  A float cast to an integer truncates toward zero and
 *    saturates at the dtype's range (NaN gives 0).
 *
 * User errors (binding mismatches, bounds, division by zero, allocation
 * failures) come back as a TirError (rt/exec.h). */
#ifndef RLY_TIR_INTERP_H
#define RLY_TIR_INTERP_H

#include <stdbool.h>

#include "ir/tir.h"
#include "rt/exec.h"
#include "rt/rt.h"

typedef struct TirProgram TirProgram; /* a compiled prim function */
typedef struct TirCache TirCache;     /* compiled programs by PrimFunc pointer */

TirCache *tir_interp_cache_new(void);
void tir_interp_cache_free(TirCache *c); /* NULL is fine */

/* The compiled form of f (once per PrimFunc pointer; f must outlive the
 * cache).  NULL with err filled if f is malformed in a way the verifier
 * would have reported (operand types that do not agree, unknown buffers). */
const TirProgram *tir_interp_compile(TirCache *c, const PrimFunc *f, TirError *err);

/* Whether the program stores into parameter i (a caller passing a shared,
 * immutable tensor there must pass a copy). */
bool tir_interp_writes_param(const TirProgram *p, int i);

/* Runs p on args[0..n) (n must equal the parameter count). */
bool tir_interp_run(const TirProgram *p, RtTensor **args, int n, TirError *err);

/* Compiles (uncached) and runs f: for tests and one-off comparisons. */
bool tir_interp_run_func(const PrimFunc *f, RtTensor **args, int n, TirError *err);

/* Binds f's size variables from the shapes of the first n parameters'
 * tensors (n may be less than the parameter count: call_tir binds the
 * inputs before it allocates the outputs).  vals[i] / known[i] are for
 * f->sizevars[i].  Checks rank, dtype and constant dims of those
 * parameters too.  False with err on a mismatch. */
bool tir_interp_bind_sizes(const PrimFunc *f, RtTensor *const *args, int n, int64_t *vals,
                           bool *known, TirError *err);

/* "%X: Buffer[(n, 4), float32]" into buf. */
const char *tir_interp_buffer_str(char *buf, size_t len, const Buffer *b);

#endif
