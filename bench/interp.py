#!/usr/bin/env python3
"""bench/interp: the interpreter against CPython, in one run, as ratios.

(a) a scalar loop of 1M iterations written as tail recursion with a ref
    counter, in rly and the same loop in CPython 3;
(b) start-up: `rly -e '1f'` against `python3 -c 1`.
Best of several runs each; ratios > 1 mean rly is faster.
Usage: bench/interp.py [path/to/rly]"""
import os
import subprocess
import sys
import tempfile
import time

RLY = sys.argv[1] if len(sys.argv) > 1 else "build/rly"
N = 1_000_000

RLY_LOOP = """
def @loop(%r: Ref[int64], %n: int64) -> int64 {
  if (%n == 0i64) { %r^ } else {
    %r := add(%r^, 1i64);
    @loop(%r, subtract(%n, 1i64))
  }
}
@loop(ref(0i64), %Ni64)
""".replace("%N", str(N))

PY_LOOP = """
class Ref:
    def __init__(self, v): self.v = v
def loop(r, n):
    while n != 0:          # the tail call, as CPython has no tail calls
        r.v = r.v + 1
        n = n - 1
    return r.v
print(loop(Ref(0), %N))
""".replace("%N", str(N))


def best(cmd, reps, stdin=None):
    t_best = float("inf")
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, input=stdin)
        t = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr.decode()}")
        out = p.stdout.decode().strip().splitlines()[-1] if p.stdout.strip() else ""
        t_best = min(t_best, t)
    return t_best, out


def main():
    with tempfile.TemporaryDirectory() as d:
        rf = os.path.join(d, "loop.rly")
        pf = os.path.join(d, "loop.py")
        open(rf, "w").write(RLY_LOOP)
        open(pf, "w").write(PY_LOOP)
        tr, outr = best([RLY, "--no-prelude", rf], 3)
        tp, outp = best([sys.executable, pf], 3)
        print(f"(a) 1M-iteration loop: rly {tr:.3f} s ({outr}), CPython {tp:.3f} s ({outp}); "
              f"rly/CPython speed ratio {tp / tr:.2f}x (goal >= 3x)")
        ts, _ = best([RLY, "-e", "1f"], 10)
        tq, _ = best([sys.executable, "-c", "1"], 10)
        print(f"(b) start-up: rly -e '1f' {ts * 1e3:.1f} ms, python3 -c 1 {tq * 1e3:.1f} ms; "
              f"ratio {tq / ts:.2f}x (goal > 1x)")


if __name__ == "__main__":
    main()
