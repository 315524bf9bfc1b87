#!/usr/bin/python3
"""jit_contract.py — the jit mode's multiply-add contraction, against numpy.

Usage: jit_contract.py RLY

A multiply-then-add of random float32 tensors, add(multiply(%a, %b), %c), run
in interp mode, in jit mode with contraction (the default), with
RLY_JIT_CONTRACT=0, and with `:set fp-contract off` after a contracted call
in the same session.  numpy computes the unfused a*b+c (two roundings) and
the fused one (the exact a*b, exact in float64, plus c, rounded once).
Contraction on: a good share of the elements differ from the unfused result,
and every element is the fused one (on a CPU with fused multiply-add, which
LLVM then uses; without, the unfused one); contraction off, and interp mode:
every element is the unfused one, bit for bit.
"""
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

N = 4096

SCRIPT = """\
:load-tensor %a a.npy
:load-tensor %b b.npy
:load-tensor %c c.npy
def @f(%a: Tensor[(N), float32], %b: Tensor[(N), float32], %c: Tensor[(N), float32]) {
  add(multiply(%a, %b), %c)
}
let %first = @f(%a, %b, %c);
:save %first first.npy
:set fp-contract off
let %second = @f(%a, %b, %c);
:save %second second.npy
""".replace("N", str(N))


def cpu_has_fma():
    if platform.machine() == "aarch64":
        return True
    with open("/proc/cpuinfo") as f:
        return any(l.startswith("flags") and " fma " in l + " " for l in f)


def run(rly, d, env):
    p = subprocess.run([rly, "fma.rly"], cwd=d, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NO_COLOR="1", **env))
    if p.returncode != 0:
        sys.exit(f"rly failed ({env}):\n{p.stdout}{p.stderr}")
    return np.load(os.path.join(d, "first.npy")), np.load(os.path.join(d, "second.npy"))


def main():
    rly = sys.argv[1]
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    unfused = a * b + c  # numpy float32: the product rounded, then the sum
    fused = (a.astype(np.float64) * b.astype(np.float64) + c).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        for n, x in zip("abc", (a, b, c)):
            np.save(os.path.join(d, n + ".npy"), x)
        with open(os.path.join(d, "fma.rly"), "w") as f:
            f.write(SCRIPT)
        interp, _ = run(rly, d, {"RLY_EXEC": "interp"})
        on, off_set = run(rly, d, {"RLY_EXEC": "jit"})
        off_env, _ = run(rly, d, {"RLY_EXEC": "jit", "RLY_JIT_CONTRACT": "0"})
    differ = np.count_nonzero(on.view(np.uint32) != unfused.view(np.uint32))
    print(f"contraction on: {differ} of {N} elements differ from the unfused a*b+c "
          f"({100 * differ / N:.1f}%)")
    fma = cpu_has_fma()
    checks = [
        ("interp mode is the unfused a*b+c", np.array_equal(interp, unfused)),
        ("contraction on changes some elements" if fma else "no fma on this CPU: nothing changes",
         differ > N // 20 if fma else differ == 0),
        ("contraction on is the fused a*b+c", np.array_equal(on, fused if fma else unfused)),
        ("RLY_JIT_CONTRACT=0 is the unfused a*b+c", np.array_equal(off_env, unfused)),
        (":set fp-contract off is the unfused a*b+c", np.array_equal(off_set, unfused)),
    ]
    bad = [name for name, ok in checks if not ok]
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
