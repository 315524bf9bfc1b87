#!/usr/bin/python3
"""bench/ab: two builds of rly against each other, in one run, as ratios —
the check that a change left speed alone (a refactoring) or what it gained.

Workloads (each `:time EXPR -n N` median per call, after a warm-up call):
  parse      a TVM CNN's text (tests/lit/tvm; whole process, --check)
  interp     a 200k-iteration scalar loop with a ref (the evaluator)
  mlp        examples/digits' MLP on its 450 test digits (fused JIT kernels)
  matmul     a 512^3 nn.matmul (the tiled, vectorized kernel)
  resnet18   bench/cnn.py's resnet18 through ONNX (needs python3-torch)
  startup    `rly -e 1f` (whole process)
The builds alternate, ROUNDS times; the figure is the median of each build's
rounds; ratio = B / A (below 1: B is faster).  One thread for both
(RLY_NUM_THREADS=1) unless --threads.
Usage: /usr/bin/python3 bench/ab.py RLY_A RLY_B [--rounds 5] [--no-torch]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

INTERP = """
def @loop(%r: Ref[int64], %n: int64) -> int64 {
  if (%n == 0i64) { %r^ } else {
    %r := add(%r^, 1i64);
    @loop(%r, subtract(%n, 1i64))
  }
}
:time @loop(ref(0i64), 200000i64) -n 5
"""

MATMUL = """
def @mm(%a: Tensor[(512, 512), float32], %b: Tensor[(512, 512), float32]) {{
  nn.matmul(%a, %b)
}}
:load-tensor %a {a}
:load-tensor %b {a}
:time @mm(%a, %b) -n 20
"""


def rly_time(rly, script, env):
    p = subprocess.run([rly, "-"], input=script, capture_output=True, text=True, env=env,
                       timeout=1800)
    m = re.search(r"median ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"{rly} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return float(m.group(1)) * UNIT[m.group(2)]


def process_time(argv, env, reps=5):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def workloads(d, torch_ok):
    a = os.path.join(d, "a.npy")
    np.save(a, np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32))
    digits = os.path.join(ROOT, "examples", "digits.rly")
    out = [("parse", lambda rly, env: process_time(
                [rly, "--check", os.path.join(ROOT, "tests/lit/tvm/v010_cnn_batch_norm.rly")], env)),
           ("startup", lambda rly, env: process_time([rly, "-e", "1f"], env)),
           ("interp", lambda rly, env: rly_time(rly, INTERP, env)),
           ("mlp", lambda rly, env: rly_time(rly, mlp_script(digits), env)),
           ("matmul", lambda rly, env: rly_time(rly, MATMUL.format(a=a), env))]
    if torch_ok:
        onnx, x = resnet(d)
        out.append(("resnet18", lambda rly, env: rly_time(
            rly, f":import {onnx}\n:load-tensor %x {x}\n:time @main(%x) -n 5\n", env)))
    return out


def mlp_script(digits):
    """examples/digits.rly binds @logits' weights and %x (the 450 test digits)."""
    return f":load {digits}\n:time @logits(%x) -n 50\n"


def resnet(d):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import torch
    import cnn
    onnx, x = os.path.join(d, "resnet18.onnx"), os.path.join(d, "x.npy")
    np.save(x, np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32))
    cnn.export(torch, cnn.vision_model(torch, "resnet18"), np.load(x), onnx)
    return onnx, x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS=args.threads, RLY_EXEC="jit")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"cpu: {cpu}; threads {args.threads}; A = {args.a}; B = {args.b}; rounds {args.rounds}")
    print(f"{'workload':10s} {'A':>10s} {'B':>10s} {'B/A':>6s}")
    with tempfile.TemporaryDirectory() as d:
        for name, run in workloads(d, not args.no_torch):
            ta, tb = [], []
            for _ in range(args.rounds):
                ta.append(run(os.path.abspath(args.a), env))
                tb.append(run(os.path.abspath(args.b), env))
            ma, mb = statistics.median(ta), statistics.median(tb)
            print(f"{name:10s} {ma * 1e3:8.3f}ms {mb * 1e3:8.3f}ms {mb / ma:6.3f}", flush=True)


if __name__ == "__main__":
    main()
