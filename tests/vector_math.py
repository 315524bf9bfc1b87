#!/usr/bin/python3
"""vector_math.py — the jit mode's vectorized float32 math (libmvec variants
under approx math, jit/codegen_expr.c) against numpy in float64.

For each function vectorized (log, sin, cos, log2, acos, atan, sinh, atanh)
the inputs are float32 values spread over the function's whole domain:
every 2039th bit pattern of both signs (all exponents, subnormals, zeros,
infinities), kept where the function is defined.  A Relay function applies
the op to the whole tensor in the jit mode; the result is saved and compared
with numpy's float64 result, in units in the last place of the float32
result (the error of the exact result, so a correctly rounded result is
within 0.5).  Bounds: 2 ulp, log 4 (libmvec's logf is within 3.8).  With
RLY_APPROX_MATH=0 the same kernels call libm one element at a time: within
2 ulp (glibc's scalar sinhf and atanhf are off by up to 1.6).  A prim function's optimized LLVM IR shows the vector variant calls
(and none with approx math off).

Usage: /usr/bin/python3 tests/vector_math.py [PATH/TO/rly]"""
import os
import subprocess
import sys
import tempfile

import numpy as np

RLY = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RLY", "rly")

# op: (numpy function, domain predicate, bound in ulp with approx math)
FUNCS = {
    "log": (np.log, lambda x: x >= 0, 4.0),
    "sin": (np.sin, lambda x: np.isfinite(x), 2.0),
    "cos": (np.cos, lambda x: np.isfinite(x), 2.0),
    "log2": (np.log2, lambda x: x >= 0, 2.0),
    "acos": (np.arccos, lambda x: np.abs(x) <= 1, 2.0),
    "atan": (np.arctan, lambda x: ~np.isnan(x), 2.0),
    "sinh": (np.sinh, lambda x: np.abs(x) < 89, 2.0),
    "atanh": (np.arctanh, lambda x: np.abs(x) < 1, 2.0),
}


def inputs():
    bits = np.arange(0, 1 << 32, 2039, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[~np.isnan(x)]


def ulp_error(got, ref):
    """|got - ref| in ulps of ref rounded to float32 (equal specials: 0)."""
    got = got.astype(np.float64)
    with np.errstate(all="ignore"):
        r32 = ref.astype(np.float32)
        fin = np.isfinite(r32) & np.isfinite(got)
        same = (got == ref) | (np.isnan(got) & np.isnan(ref)) | (np.isinf(got) & (got == r32))
        exp = np.frexp(np.where(r32 == 0, np.float32(1e-45), r32))[1].astype(np.int64)
        ulp = np.maximum(np.ldexp(1.0, exp - 24), 2.0 ** -149)
        err = np.where(fin, np.abs(got - ref) / ulp, np.where(same, 0.0, np.inf))
    return err


def run(op, x, d, env):
    xp, yp = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
    np.save(xp, x)
    script = (f"def @f(%x: Tensor[({x.size}), float32]) {{ {op}(%x) }}\n"
              f":load-tensor %x {xp}\nlet %y = @f(%x);\n:save %y {yp}\n")
    p = subprocess.run([RLY, "--exec", "jit", "-"], input=script, capture_output=True, text=True,
                       env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"rly failed on {op}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return np.load(yp)


def variant_calls(env):
    """The vector variant calls in a prim function's optimized IR."""
    script = ("prim @lg(%X: Buffer[(n), float32], %Y: Buffer[(n), float32]) {\n"
              "  for %i in vectorized(n) { %Y[%i] = log(%X[%i]); }\n}\n:dump llvm @lg\n")
    p = subprocess.run([RLY, "-"], input=script, capture_output=True, text=True, env=env,
                       timeout=600)
    return [l for l in p.stdout.splitlines() if "call" in l and "_ZGV" in l]


def main():
    failed = 0
    x0 = inputs()
    base = dict(os.environ, NO_COLOR="1")
    with tempfile.TemporaryDirectory() as d:
        base["XDG_CACHE_HOME"] = d
        for approx in (True, False):
            env = dict(base, RLY_APPROX_MATH="1" if approx else "0")
            for op, (ref_fn, domain, bound) in FUNCS.items():
                x = x0[domain(x0)]
                y = run(op, x, d, env)
                with np.errstate(all="ignore"):
                    ref = ref_fn(x.astype(np.float64))
                err = ulp_error(y, ref)
                worst = int(np.argmax(err))
                limit = bound if approx else 2.0
                ok = err[worst] <= limit
                failed += not ok
                print(f"{'approx' if approx else 'libm  '} {op:6s} {x.size:8d} values: max "
                      f"{err[worst]:.3f} ulp at {x[worst]!r} (bound {limit}) "
                      f"{'ok' if ok else 'FAILED'}")
            calls = variant_calls(env)
            if approx != bool(calls):
                failed += 1
                print(f"FAILED: approx={approx}: vector variant calls in the IR: {calls[:2]}")
    print(f"vector math: {'all passed' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
