#!/usr/bin/python3
"""tvmscript_numpy.py — prim functions read as TVMScript, run against numpy.

Usage: /usr/bin/python3 tests/tvmscript_numpy.py [PATH/TO/rly] [SOURCE_ROOT]

Cases: the course's mm_relu (examples/mm_relu.py, as TVM prints it), the
same function printed back by `rly --print-tvmscript` and read again, the
same after the course's schedule (inputs/mm_relu_scheduled.py: split loops,
a root-level alloc, an init block, T.reads/T.writes), and
tests/lit/tvmscript/inputs/features.py (T.serial/range from a begin,
T.parallel, T.vectorized, T.unroll, T.axis.remap with a reduction,
T.where, if/elif/else, T.if_then_else, T.Cast, T.truncdiv, // on indices, **,
T.max/T.min,
T.exp).  Each runs in both execution modes (`--exec interp`: the TIR
interpreter; `--exec jit` with RLY_JIT_REQUIRE=1: compiled) on random inputs
written as .npy files, and its output (`:save`) is compared with a float64
numpy reference: |got - ref| <= 1e-5 * scale + 1e-6, scale |A|.|B| for the
product, |ref| + 1 otherwise.  Prints "tvmscript: N passed, N failed" and
exits non-zero on any failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def run_case(rly, src, fn, inputs, out_shape, mode, tmp):
    script = os.path.join(tmp, "run.rly")
    with open(script, "w") as f:
        names = []
        for k, a in enumerate(inputs):
            np.save(os.path.join(tmp, "in%d.npy" % k), a)
            f.write(":load-tensor %%a%d %s\n" % (k, os.path.join(tmp, "in%d.npy" % k)))
            names.append("%%a%d" % k)
        f.write('let %%c = call_tir(@%s, (%s,), shape=[%s], dtype="float32");\n'
                % (fn, ", ".join(names), ", ".join(map(str, out_shape))))
        f.write(":save %%c %s\n" % os.path.join(tmp, "out.npy"))
    env = dict(os.environ, XDG_CACHE_HOME=tmp, RLY_JIT_REQUIRE="1")
    p = subprocess.run([rly, "--exec", mode, src, script], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return np.load(os.path.join(tmp, "out.npy"))


def mm_relu_ref(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.maximum(a64 @ b64, 0), np.abs(a64) @ np.abs(b64)


def feats_ref(a, b):
    a64 = a.astype(np.float64)
    s = (a64[:, 2:8] * 0.5).sum(axis=1)
    t = np.exp(a64) - s[:, None]
    c = np.zeros((8, 8))
    for i in range(8):
        for j in range(8):
            if not (i * 8 + j < 60 and j != 7):
                continue
            if i % 2 == 0:
                c[i, j] = t[i, j] if t[i, j] > 1 else -t[i, j]
            elif j >= 4:
                c[i, j] = float(int(b[i] / 2)) - 0.0015  # truncating
            else:
                c[i, j] = max(t[i, j], min(2.0, t[i, j] ** 2))
    for u in range(4):
        c[7, u + 4] = (u // 2) * 2.0 + float(b[u + 1])
    return c, np.abs(c) + 1


def main():
    rly = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RLY", "rly")
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rng = np.random.default_rng(7)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        printed = os.path.join(tmp, "mm_printed.py")
        with open(printed, "w") as f:
            f.write(subprocess.run([rly, "--print-tvmscript", os.path.join(root, "examples/mm_relu.py")],
                                   capture_output=True, text=True, check=True).stdout)
        a = rng.standard_normal((128, 128)).astype(np.float32)
        b = rng.standard_normal((128, 128)).astype(np.float32)
        fa = rng.standard_normal((8, 8)).astype(np.float32)
        fb = rng.integers(-9, 9, size=8).astype(np.int64)
        cases = [("mm_relu", os.path.join(root, "examples/mm_relu.py"), "mm_relu", [a, b], (128, 128),
                  mm_relu_ref(a, b)),
                 ("mm_relu printed back", printed, "mm_relu", [a, b], (128, 128), mm_relu_ref(a, b)),
                 ("mm_relu scheduled", os.path.join(root, "tests/lit/tvmscript/inputs/mm_relu_scheduled.py"),
                  "mm_relu", [a, b], (128, 128), mm_relu_ref(a, b)),
                 ("features", os.path.join(root, "tests/lit/tvmscript/inputs/features.py"), "feats",
                  [fa, fb], (8, 8), feats_ref(fa, fb))]
        for name, src, fn, ins, shape, (ref, scale) in cases:
            for mode in ("interp", "jit"):
                try:
                    got = run_case(rly, src, fn, ins, shape, mode, tmp).astype(np.float64)
                    err = np.abs(got - ref) - (1e-5 * scale + 1e-6)
                    ok = got.shape == ref.shape and (err <= 0).all()
                    why = "" if ok else "max excess %g at %s" % (err.max(), np.unravel_index(err.argmax(), err.shape))
                except RuntimeError as e:
                    ok, why = False, str(e)
                passed += ok
                failed += not ok
                print("%s %s (%s)%s" % ("ok  " if ok else "FAIL", name, mode, "" if ok else ": " + why))
    print("tvmscript: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
