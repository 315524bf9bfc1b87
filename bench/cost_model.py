#!/usr/bin/python3
"""bench/cost_model: what `:tune`'s cost model saves.

Each workload (prim functions: the 512^3 matmul of bench/sched_mm512.rly,
the course's mm_relu at 256, a 3x3 conv2d and a batch matmul) is tuned with
`:tune @f trials=K seed=S` with the cost model (the default) and with
`model=off` (random samples, then mutations of the fastest), the same seeds,
in one run.  Printed per workload and mode: the best GFLOP/s reached after
k measurements (median over the seeds), and the measurements each needs to
reach 90% of the best either mode found for that seed (median; "-" when it
never did).  One thread (RLY_NUM_THREADS=1); the tuning database is a
temporary file.  The runs are sequential (one process at a time).
Usage: /usr/bin/python3 bench/cost_model.py RLY [--trials 64] [--seeds 1,2]
       [--only NAME,...]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schedule import PRIM as MM_RELU  # noqa: E402

MM512 = """
prim @f(%A: Buffer[(512, 512), float32], %B: Buffer[(512, 512), float32],
        %C: Buffer[(512, 512), float32]) {
  for %i, %j, %k in grid(512, 512, 512) {
    block "C" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %C[%vi, %vj] = 0f; }
      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];
    }
  }
}
"""

# CHW (batch 1 left out: the reorder primitive takes at most 16 loops, and
# a 7-loop nest tiles into 18), 64 -> 64 channels, 3x3 over a 28x28 image
# padded to 30x30.
CONV = """
prim @f(%X: Buffer[(64, 30, 30), float32], %W: Buffer[(64, 64, 3, 3), float32],
        %Y: Buffer[(64, 28, 28), float32]) {
  for %k, %h, %w, %c, %r, %s in grid(64, 28, 28, 64, 3, 3) {
    block "Y" (spatial %vk = %k, spatial %vh = %h, spatial %vw = %w,
               reduce %vc = %c, reduce %vr = %r, reduce %vs = %s) {
      init { %Y[%vk, %vh, %vw] = 0f; }
      %Y[%vk, %vh, %vw] = %Y[%vk, %vh, %vw]
          + %X[%vc, %vh + %vr, %vw + %vs] * %W[%vk, %vc, %vr, %vs];
    }
  }
}
"""

BMM = """
prim @f(%A: Buffer[(8, 128, 128), float32], %B: Buffer[(8, 128, 128), float32],
        %C: Buffer[(8, 128, 128), float32]) {
  for %b, %i, %j, %k in grid(8, 128, 128, 128) {
    block "C" (spatial %vb = %b, spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %C[%vb, %vi, %vj] = 0f; }
      %C[%vb, %vi, %vj] = %C[%vb, %vi, %vj] + %A[%vb, %vi, %vk] * %B[%vb, %vk, %vj];
    }
  }
}
"""

WORKLOADS = [
    ("matmul512", MM512),
    ("mm_relu256", re.sub(r"\bN\b", "256", MM_RELU.replace("@mm_relu", "@f"))),
    ("conv2d3x3", CONV),
    ("bmm8x128", BMM),
]

TRIAL = re.compile(r"^\[(\d+)/\d+\] .*?([0-9.]+) GFLOP/s", re.M)


def tune(rly, prim, trials, seed, model, env, d):
    """The GFLOP/s of each measured trial (0 for a refused or wrong one) and the seconds spent."""
    path = os.path.join(d, "t.rly")
    with open(path, "w") as fp:
        fp.write(prim + "\n:tune @f trials=%d seed=%d model=%s\n" % (trials, seed, model))
    t0 = time.time()
    r = subprocess.run([rly, "--tuning-log", os.path.join(d, "tuning.txt"), path],
                       capture_output=True, text=True, env=env)
    wall = time.time() - t0
    if r.returncode != 0 or "WRONG" in r.stdout:
        sys.exit("rly failed:\n" + r.stdout + r.stderr)
    g = [0.0] * trials
    for line in r.stdout.splitlines():
        m = re.match(r"^\[(\d+)/\d+\] ", line)
        if m:
            v = re.search(r"  ([0-9.]+) GFLOP/s", line)
            g[int(m.group(1)) - 1] = float(v.group(1)) if v else 0.0
    return g, wall


def best_after(g, k):
    return max(g[:k]) if g[:k] else 0.0


def reach(g, target):
    for i in range(len(g)):
        if max(g[:i + 1]) >= target:
            return i + 1
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    env = dict(os.environ, RLY_TUNING_DB="0", RLY_NUM_THREADS="1")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("cpu: %s; one thread; %s :tune @f trials=%d seed=%s model=on|off"
          % (cpu, args.rly, args.trials, args.seeds))
    ks = [k for k in (8, 16, 24, 32, 48, 64, 96, 128) if k <= args.trials]
    print("%-11s %-5s %s  %9s %8s" % ("workload", "model", " ".join("best@%-4d" % k for k in ks),
                                      "to 90%", "seconds"))
    with tempfile.TemporaryDirectory() as d:
        for name, prim in WORKLOADS:
            if args.only and name not in args.only.split(","):
                continue
            runs = {m: [tune(args.rly, prim, args.trials, s, m, env, d) for s in seeds]
                    for m in ("on", "off")}
            for m in ("on", "off"):
                gs = [g for g, _ in runs[m]]
                bests = [statistics.median(best_after(g, k) for g in gs) for k in ks]
                to90 = []
                for i, g in enumerate(gs):
                    top = max(max(runs["on"][i][0]), max(runs["off"][i][0]))
                    to90.append(reach(g, 0.9 * top))
                got = [x for x in to90 if x is not None]
                r90 = "%d/%d seeds" % (len(got), len(to90)) if len(got) < len(to90) else ""
                med = "%g" % statistics.median(got) if got else "-"
                secs = statistics.median(w for _, w in runs[m])
                print("%-11s %-5s %s  %9s %8.1f %s" % (name, m, " ".join("%8.1f" % b for b in bests),
                                                        med, secs, r90))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
