#!/usr/bin/python3
"""bench/tune: `:tune` against the function as written and the built-in op.

A hand-written 512x512x512 matmul prim function and the course's mm_relu at
256, each timed unscheduled, after `:tune @f trials=64` (its best schedule,
found by measurement in the same process) and as rly's built-in
nn.dense (nn.relu(nn.dense(...)) for mm_relu) on the same shapes, in one
run, as ratios; the tuned function's result is checked against numpy.
Each figure is the median of `:time ... -n N`; GFLOP/s counts 2*N^3.  One
thread (RLY_NUM_THREADS=1) unless --threads.  The tuning database is a
temporary file (--tuning-log), so nothing is recorded in the user's cache.
Usage: /usr/bin/python3 bench/tune.py RLY [--trials 64] [--threads]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

MM = """
prim @f(%A: Buffer[(N, N), float32], %B: Buffer[(N, N), float32],
        %C: Buffer[(N, N), float32]) {
  for %i, %j, %k in grid(N, N, N) {
    block "C" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %C[%vi, %vj] = 0f; }
      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];
    }
  }
}
def @ref(%a: Tensor[(N, N), float32], %bt: Tensor[(N, N), float32]) { nn.dense(%a, %bt) }
"""

# The course's mm_relu, shared with bench/schedule.py, as @f.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schedule import PRIM as MM_RELU_PRIM  # noqa: E402

MM_RELU = MM_RELU_PRIM.replace("@mm_relu", "@f") + (
    "def @ref(%a: Tensor[(N, N), float32], %bt: Tensor[(N, N), float32]) "
    "{ nn.relu(nn.dense(%a, %bt)) }\n")

SCRIPT = """
{prim}
:load-tensor %a {d}/A.npy
:load-tensor %b {d}/B.npy
:load-tensor %bt {d}/BT.npy
:time @f -n {slow}
:tune @f trials={trials} seed=1
:time @f -n 10
let %c = call_tir(@f, (%a, %b), shape=[N, N], dtype="float32");
:save %c {d}/C.npy
:time @ref(%a, %bt) -n 10
"""


def medians_ms(text):
    return [float(v) * UNIT[u] * 1e3 for v, u in re.findall(r"runs?: min .*? median ([0-9.]+) ?(ns|us|ms|s)\b", text)]


def run(rly, name, prim, n, relu, trials, env, d):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    for k, x in (("A", a), ("B", b), ("BT", np.ascontiguousarray(b.T))):
        np.save(os.path.join(d, k + ".npy"), x)
    text = SCRIPT.format(prim=prim, d=d, trials=trials, slow=1 if n > 256 else 3)
    text = re.sub(r"\bN\b", str(n), text)
    path = os.path.join(d, "t.rly")
    open(path, "w").write(text)
    cmd = [rly, "--tuning-log", os.path.join(d, "tuning.txt"), path]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit("rly failed:\n" + r.stdout + r.stderr)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if relu:
        want = np.maximum(want, 0)
    got = np.load(os.path.join(d, "C.npy"))
    if not np.allclose(got, want, rtol=1e-3, atol=1e-3):
        sys.exit("%s: the tuned function differs from numpy by %g" % (name, np.abs(got - want).max()))
    un, tuned, builtin = medians_ms(r.stdout)
    flop = 2.0 * n ** 3
    print("%-14s %s" % (name, " ".join(cmd[1:3]) + " ... (%.0f s in all)" % wall))
    for label, t in (("unscheduled", un), ("tuned", tuned), ("builtin", builtin)):
        print("  %-12s %10.3f ms %8.1f GFLOP/s %9.2fx builtin" % (label, t, flop / t / 1e6, t / builtin))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--threads", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ)
    env["RLY_TUNING_DB"] = "0"
    if not args.threads:
        env["RLY_NUM_THREADS"] = "1"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("cpu: %s; %s; %s, :tune trials=%d" % (cpu, "all threads" if args.threads else "one thread",
                                                 args.rly, args.trials))
    with tempfile.TemporaryDirectory() as d:
        run(args.rly, "matmul 512", MM, 512, False, args.trials, env, d)
        run(args.rly, "mm_relu 256", MM_RELU, 256, True, args.trials, env, d)


if __name__ == "__main__":
    main()
