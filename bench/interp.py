#!/usr/bin/env python3
"""bench/interp: the interpreter against CPython, in one run, as ratios.

(a) a scalar loop of 1M iterations written as tail recursion with a ref
    counter, in rly and the same loop in CPython 3 (whole processes, wall
    clock), then the same in CPU time (user + sys of the child, which a
    loaded machine distorts less) and per iteration (the 1M run minus a
    1-iteration run, i.e. without start-up);
(b) start-up: `rly -e '1f'` against `python3 -c 1`.
Best of several runs each; ratios > 1 mean rly is faster.
Usage: bench/interp.py [path/to/rly]"""
import os
import resource
import subprocess
import sys
import tempfile
import time

RLY = sys.argv[1] if len(sys.argv) > 1 else "build/rly"
N = 1_000_000

RLY_LOOP_T = """
def @loop(%r: Ref[int64], %n: int64) -> int64 {
  if (%n == 0i64) { %r^ } else {
    %r := add(%r^, 1i64);
    @loop(%r, subtract(%n, 1i64))
  }
}
@loop(ref(0i64), %Ni64)
"""

PY_LOOP_T = """
class Ref:
    def __init__(self, v): self.v = v
def loop(r, n):
    while n != 0:          # the tail call, as CPython has no tail calls
        r.v = r.v + 1
        n = n - 1
    return r.v
print(loop(Ref(0), %N))
"""


CPU = {}  # command → best CPU time (user + sys) of the child, robust on a loaded machine


def best(cmd, reps, stdin=None):
    t_best = c_best = float("inf")
    out = None
    for _ in range(reps):
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, input=stdin)
        t = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr.decode()}")
        out = p.stdout.decode().strip().splitlines()[-1] if p.stdout.strip() else ""
        t_best = min(t_best, t)
        c_best = min(c_best, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime))
    CPU[tuple(cmd)] = c_best
    return t_best, out


def main():
    with tempfile.TemporaryDirectory() as d:
        def write(name, text, n):
            path = os.path.join(d, name)
            open(path, "w").write(text.replace("%N", str(n)))
            return path
        rf, rf1 = write("loop.rly", RLY_LOOP_T, N), write("loop1.rly", RLY_LOOP_T, 1)
        pf, pf1 = write("loop.py", PY_LOOP_T, N), write("loop1.py", PY_LOOP_T, 1)
        tr, outr = best([RLY, "--no-prelude", rf], 5)
        tp, outp = best([sys.executable, pf], 5)
        tr1, _ = best([RLY, "--no-prelude", rf1], 5)
        tp1, _ = best([sys.executable, pf1], 5)
        print(f"(a) 1M-iteration loop: rly {tr:.3f} s ({outr}), CPython {tp:.3f} s ({outp}); "
              f"rly/CPython speed ratio {tp / tr:.2f}x (goal >= 3x)")
        c = {k: CPU[tuple(v)] for k, v in (("r", [RLY, "--no-prelude", rf]),
                                           ("r1", [RLY, "--no-prelude", rf1]),
                                           ("p", [sys.executable, pf]),
                                           ("p1", [sys.executable, pf1]))}
        cr, cp = max(c["r"] - c["r1"], 1e-9) / N, max(c["p"] - c["p1"], 1e-9) / N
        print(f"    CPU time (user+sys): rly {c['r'] * 1e3:.0f} ms (start-up {c['r1'] * 1e3:.0f} ms, "
              f"{cr * 1e9:.1f} ns/iteration), CPython {c['p'] * 1e3:.0f} ms (start-up "
              f"{c['p1'] * 1e3:.0f} ms, {cp * 1e9:.1f} ns/iteration); whole-process ratio "
              f"{c['p'] / c['r']:.2f}x, per-iteration ratio {cp / cr:.2f}x")
        ts, _ = best([RLY, "-e", "1f"], 10)
        tq, _ = best([sys.executable, "-c", "1"], 10)
        print(f"(b) start-up: rly -e '1f' {ts * 1e3:.1f} ms, python3 -c 1 {tq * 1e3:.1f} ms; "
              f"ratio {tq / ts:.2f}x (goal > 1x)")


if __name__ == "__main__":
    main()
