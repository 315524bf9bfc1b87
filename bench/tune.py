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

Then the built-in kernels by their knobs: a fused conv2d of ResNet-50
(3x3, 64 channels, 56x56, bias and relu) and a dense of GPT-2's size
(128 x 768 by 3072 x 768, bias), each `:tune @KERNEL trials=T seed=1` in
one process, then the function timed untuned (RLY_TUNING_DB=0) and tuned
(the record applied) in another; and `rly --tune MINUTES` on a small CNN
exported from torchvision (random weights), the model's time before and
after as rly prints it.
Usage: /usr/bin/python3 bench/tune.py RLY [--trials 64] [--threads]
       [--knob-trials 32] [--minutes 2] [--cnn squeezenet1_1]"""
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


# ───────────────────────── the built-in kernels ─────────────────────────

CONV = """
def @main(%x: Tensor[(1, 64, 56, 56), float32], %w: Tensor[(64, 64, 3, 3), float32],
          %b: Tensor[(64, 1, 1), float32]) {
  nn.relu(add(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]), %b))
}
"""
DENSE = """
def @main(%x: Tensor[(128, 768), float32], %w: Tensor[(3072, 768), float32],
          %b: Tensor[(3072), float32]) {
  add(nn.dense(%x, %w), %b)
}
"""
KNOB_SCRIPT = """
:load {d}/m.rly
:bind @main {d}/w.npz
:load-tensor %x {d}/x.npy
let %y = @main(%x);
:kernels
"""


def rly_out(cmd, env, text=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, input=text)
    if r.returncode != 0:
        sys.exit("rly failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def knob_bench(rly, name, model, shapes, want_op, trials, env, d):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, shapes["x"]).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    np.savez(os.path.join(d, "w.npz"), **{k: rng.uniform(-0.1, 0.1, s).astype(np.float32)
                                          for k, s in shapes.items() if k != "x"})
    open(os.path.join(d, "m.rly"), "w").write(model)
    log = os.path.join(d, "knobs.txt")
    if os.path.exists(log):
        os.remove(log)
    base = [rly, "--tuning-log", log, "-i"]
    text = KNOB_SCRIPT.format(d=d)
    out = rly_out(base, dict(env, RLY_TUNING_DB="0"), text)
    kernel = next(k for k in re.findall(r"^@(\S+)", out, re.M) if want_op in k)
    cmd = base + ["(:tune @%s trials=%d seed=1)" % (kernel, trials)]
    t0 = time.time()
    out = rly_out(base, env, text + ":tune @%s trials=%d seed=1\n" % (kernel, trials))
    wall = time.time() - t0
    m = re.search(r"done: @\S+ ([0-9.]+) ms -> ([0-9.]+) ms \(([0-9.]+)x\)", out)
    knobs = re.search(r"knobs \{([^}]*)\} recorded|default knobs are the best", out)
    timed = text + ":time @main(%x) -n 20\n"
    untuned = medians_ms(rly_out(base, dict(env, RLY_TUNING_DB="0"), timed))[0]
    tuned = medians_ms(rly_out(base, dict(env, RLY_TUNING_DB="1"), timed))[0]
    print("%-14s @%s: %s ... (%.0f s)" % (name, kernel, " ".join(cmd[1:]), wall))
    print("  kernel  untuned %.3f ms, tuned %.3f ms (%sx), knobs {%s}" %
          (float(m.group(1)), float(m.group(2)), m.group(3), knobs.group(1) if knobs and knobs.group(1) else ""))
    print("  @main   untuned %.3f ms, tuned %.3f ms: %.2fx" % (untuned, tuned, untuned / tuned))


def model_bench(rly, cnn, minutes, env, d):
    path = os.path.join(d, cnn + ".onnx")
    code = ("import torch, torchvision; m = torchvision.models.%s(weights=None).eval(); "
            "torch.onnx.export(m, torch.randn(1, 3, 224, 224), %r, opset_version=13)" % (cnn, path))
    subprocess.run(["/usr/bin/python3", "-c", code], check=True, capture_output=True)
    cmd = [rly, "--tuning-log", os.path.join(d, "model.txt"), "--tune", str(minutes), path]
    t0 = time.time()
    out = rly_out(cmd, env)
    wall = time.time() - t0
    m = re.search(r"^model: ([0-9.]+) ms -> ([0-9.]+) ms \(([0-9.]+)x\), (\d+) trials", out, re.M)
    print("%-14s %s (%.0f s)" % (cnn, " ".join(cmd[1:]), wall))
    print("  model   before %s ms, after %s ms: %sx (%s trials)" % m.groups())
    for line in out.splitlines():
        if re.match(r"^@\S+ +\d+ +\d+ ", line) and not line.endswith("(default)"):
            print("   ", line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly")
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--threads", action="store_true")
    ap.add_argument("--knob-trials", type=int, default=32)
    ap.add_argument("--minutes", type=float, default=2)
    ap.add_argument("--cnn", default="squeezenet1_1")
    ap.add_argument("--only", choices=["schedules", "knobs", "model"])
    args = ap.parse_args()
    env = dict(os.environ)
    env["RLY_TUNING_DB"] = "0"
    if not args.threads:
        env["RLY_NUM_THREADS"] = "1"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print("cpu: %s; %s; %s, :tune trials=%d" % (cpu, "all threads" if args.threads else "one thread",
                                                 args.rly, args.trials))
    with tempfile.TemporaryDirectory() as d:
        if args.only in (None, "schedules"):
            run(args.rly, "matmul 512", MM, 512, False, args.trials, env, d)
            run(args.rly, "mm_relu 256", MM_RELU, 256, True, args.trials, env, d)
        if args.only in (None, "knobs"):
            knob_bench(args.rly, "resnet50 conv", CONV, {"x": (1, 64, 56, 56), "w": (64, 64, 3, 3), "b": (64, 1, 1)},
                       "conv2d", args.knob_trials, env, d)
            knob_bench(args.rly, "gpt2 dense", DENSE, {"x": (128, 768), "w": (3072, 768), "b": (3072,)},
                       "dense", args.knob_trials, env, d)
        if args.only in (None, "model"):
            model_bench(args.rly, args.cnn, args.minutes, env, d)


if __name__ == "__main__":
    main()
