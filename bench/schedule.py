#!/usr/bin/python3
"""bench/schedule: the course's mm_relu (TensorIR lecture) as a prim function,
unscheduled, after the course's schedule and after the best schedule written
in rly's schedule text, against rly's built-in nn.relu(nn.dense(A, B^T)) on the
same shapes and against numpy's maximum(A @ B, 0), in one run, as ratios.

Each figure is the median of `:time ... -n N` (rly) or of N timed calls
(numpy), after a warm-up call; GFLOP/s counts 2*N^3.  One thread everywhere
(RLY_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1) unless
--threads.  Every scheduled variant is first checked against numpy.
Usage: /usr/bin/python3 bench/schedule.py RLY [--sizes 128,1024] [--threads]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

PRIM = """
prim @mm_relu(%A: Buffer[(N, N), float32], %B: Buffer[(N, N), float32],
              %C: Buffer[(N, N), float32]) {
  alloc %Y: Buffer[(N, N), float32];
  for %i, %j, %k in grid(N, N, N) {
    block "Y" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %Y[%vi, %vj] = 0f; }
      %Y[%vi, %vj] = %Y[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];
    }
  }
  for %i, %j in grid(N, N) {
    block "C" (spatial %vi = %i, spatial %vj = %j) {
      %C[%vi, %vj] = max(%Y[%vi, %vj], 0f);
    }
  }
}
"""

# The course's steps: split j by 4, reorder, the ReLU under j0, the
# reduction's init decomposed, then the inner loop vectorized.
COURSE = """
schedule @mm_relu {
  let %Y = get_block("Y");
  let (%i, %j, %k) = get_loops(%Y);
  let (%j0, %j1) = split(%j, factors=[?, 4]);
  reorder(%j0, %k, %j1);
  reverse_compute_at(get_block("C"), %j0);
  decompose_reduction(%Y, %k);
  vectorize(%j1);
}
"""

# MR x NR register tiles (rows x vector lanes), a packed panel of B per
# column block (cache_read + compute_at: compacted to K x NR), the ReLU
# stored from the tile, the init hoisted out of the k loop.
BEST = """
schedule @mm_relu {
  let %Y = get_block("Y");
  let (%i, %j, %k) = get_loops(%Y);
  let (%j0, %j1) = split(%j, factors=[?, NR]);
  let (%i0, %i1) = split(%i, factors=[?, MR]);
  reorder(%j0, %i0, %k, %i1, %j1);
  let %C = get_block("C");
  reverse_compute_at(%C, %i0);
  let %Bp = cache_read(%Y, 1, "global");
  compute_at(%Bp, %j0);
  let %Yi = decompose_reduction(%Y, %k);
  unroll(%i1);
  vectorize(%j1);
  let (%c0, %c1, %ci, %cj) = get_loops(%C);
  vectorize(%cj);
  let (%b0, %bi, %bj) = get_loops(%Bp);
  vectorize(%bj);
  let (%y0, %y1, %yi, %yj) = get_loops(%Yi);
  vectorize(%yj);
  parallel(%j0);
}
"""

SCRIPT = """
{prim}
{schedule}
def @ref(%a: Tensor[(N, N), float32], %bt: Tensor[(N, N), float32]) {{
  nn.relu(nn.dense(%a, %bt))
}}
:load-tensor %a {d}/A.npy
:load-tensor %b {d}/B.npy
:load-tensor %bt {d}/BT.npy
let %c = call_tir(@mm_relu, (%a, %b), shape=[N, N], dtype="float32");
:save %c {d}/C.npy
:time @mm_relu -n {runs}
:time @ref(%a, %bt) -n {runs}
"""


def median_ms(text):
    m = re.findall(r"runs?: min .*? median ([0-9.]+) ?(ns|us|ms|s)\b", text)
    return [float(v) * UNIT[u] * 1e3 for v, u in m]


def run_rly(rly, n, schedule, runs, env, d):
    text = SCRIPT.format(prim=PRIM, schedule=schedule, d=d, runs=runs)
    for tail in (",", ")", "]"):
        text = text.replace("N" + tail, "%d" % n + tail)
    text = text.replace("NR", "32").replace("MR", "4" if n % 8 else "8")
    path = os.path.join(d, "mm.rly")
    open(path, "w").write(text)
    r = subprocess.run([rly, path], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("rly failed:\n" + r.stdout + r.stderr)
    t = median_ms(r.stdout)
    return t[0], t[1], np.load(os.path.join(d, "C.npy"))


def numpy_ms(a, b, runs):
    np.maximum(a @ b, 0)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        np.maximum(a @ b, 0)
        ts.append((time.perf_counter() - t0) * 1e3)
    return sorted(ts)[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly")
    ap.add_argument("--sizes", default="128,1024")
    ap.add_argument("--threads", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ)
    if not args.threads:
        for k in ("RLY_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            env[k] = os.environ[k] = "1"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("cpu: %s; %s; %s" % (cpu, "all threads" if args.threads else "one thread", args.rly))
    print("%-6s %-12s %10s %9s %8s %8s" % ("N", "variant", "ms", "GFLOP/s", "/builtin", "/numpy"))
    rng = np.random.default_rng(0)
    for n in [int(x) for x in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            for name, x in (("A", a), ("B", b), ("BT", np.ascontiguousarray(b.T))):
                np.save(os.path.join(d, name + ".npy"), x)
            want = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
            tnp = numpy_ms(a, b, 10)
            flop = 2.0 * n ** 3
            rows, builtin = [], None
            for name, sch, runs in (("unscheduled", "", 1 if n > 256 else 5), ("course", COURSE, 3),
                                    ("best", BEST, 10)):
                t, tref, c = run_rly(args.rly, n, sch, runs, env, d)
                if not np.allclose(c, want, rtol=1e-3, atol=1e-3):
                    sys.exit("%s at N=%d differs from numpy by %g" % (name, n, np.abs(c - want).max()))
                builtin = tref if builtin is None else min(builtin, tref)
                rows.append((name, t))
            rows.append(("builtin", builtin))
            rows.append(("numpy", tnp))
            for name, t in rows:
                print("%-6d %-12s %10.3f %9.1f %8.2f %8.2f" % (n, name, t, flop / t / 1e6, t / builtin, t / tnp))


if __name__ == "__main__":
    main()
