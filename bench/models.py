#!/usr/bin/python3
"""bench/models: whole models in rly against numpy, in one run, as ratios.

  digits MLP   64-32-10 (examples/digits, the committed weights), batch 1, 64, 1797
  seed 002 MLP 784-128-10 (deterministic weights), batch 1, 64, 1797
  RNN          examples/dynamic.rly's cell over sequences of 16..1024 steps:
               the time per step must stay flat (cost linear in the length)

rly times each call with `:time EXPR -n N` (median per call, after a warm-up
call that compiles the kernels); numpy times the same function (`numpy_mlp`
of seed 002) with time.perf_counter, median of N calls.  Ratios > 1 mean
rly is faster.  Both use their defaults for threads (RLY_NUM_THREADS and
numpy's BLAS threads); set them to 1 for a one-thread comparison.
Usage: /usr/bin/python3 bench/models.py [path/to/rly]"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RLY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/rly")
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

MLP = """
def @mlp(%x: Tensor[(n, {i}), float32], %w0: Tensor[({h}, {i}), float32], %b0: Tensor[({h}), float32],
         %w1: Tensor[(10, {h}), float32], %b1: Tensor[(10), float32]) -> Tensor[(n, 10), float32] {{
  let %lv0 = nn.bias_add(nn.dense(%x, %w0), %b0);
  let %lv1 = nn.relu(%lv0);
  nn.bias_add(nn.dense(%lv1, %w1), %b1)
}}
:bind @mlp {weights}
"""


def numpy_mlp(data, w0, b0, w1, b1):
    lv0 = data @ w0.T + b0
    lv1 = np.maximum(lv0, 0)
    return lv1 @ w1.T + b1


def rly_times(script):
    """Runs a script of `:time` commands; the median seconds of each."""
    p = subprocess.run([RLY, "-"], input=script, capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, NO_COLOR="1"), timeout=900)
    if p.returncode != 0:
        sys.exit(f"rly failed:\n{p.stderr}")
    med = re.findall(r"runs?: min [\d.]+ (?:ns|us|ms|s)  median ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    return [float(v) * UNIT[u] for v, u in med]


def np_time(fn, n):
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def runs_for(batch):
    return 2000 if batch == 1 else 300 if batch <= 64 else 50


def bench_mlp(name, d, params, inputs, batches):
    wpath = os.path.join(d, f"{name}_w.npz")
    np.savez(wpath, **params)
    h, i = params["w0"].shape
    script = MLP.format(i=i, h=h, weights=wpath)
    for b in batches:
        xpath = os.path.join(d, f"{name}_x{b}.npy")
        np.save(xpath, inputs[:b])
        script += f":load-tensor %x{b} {xpath}\n:time @mlp(%x{b}) -n {runs_for(b)}\n"
    got = rly_times(script)
    for b, tr in zip(batches, got):
        x = inputs[:b]
        tn = np_time(lambda: numpy_mlp(x, **params), runs_for(b))
        print(f"{name:8s} batch {b:5d}: rly {tr * 1e6:9.1f} us, numpy {tn * 1e6:9.1f} us; "
              f"ratio {tn / tr:5.2f}x")


def bench_rnn(lengths):
    src = open(os.path.join(ROOT, "examples/dynamic.rly")).read()
    # the definitions and lets of the example, without its printed calls
    keep, cur, depth = [], None, 0
    for line in src.splitlines():
        if cur is None and not line.startswith(("def ", "let ")):
            continue
        cur = (cur or []) + [line]
        depth += line.count("{") - line.count("}")
        if cur[0].startswith("def "):
            done = depth == 0 and any("{" in l for l in cur)
        else:
            done = depth == 0 and line.rstrip().endswith(";")
        if done:
            keep += cur
            cur = None
    script = "\n".join(keep) + "\n"
    for n in lengths:
        script += f"let %s{n} = @sequence({n}i64);\n"
        script += f":time @rnn(%s{n}, %h0, %wx, %wh, 0i64) -n {max(5, 2000 // n)}\n"
    got = rly_times(script)
    base = got[0] / lengths[0]
    for n, t in zip(lengths, got):
        print(f"rnn      length {n:5d}: {t * 1e3:8.3f} ms, {t / n * 1e6:7.2f} us per step "
              f"({t / n / base:4.2f}x the per-step time at {lengths[0]})")


def main():
    data = np.load(os.path.join(ROOT, "examples/digits/test.npz"))["x"]
    digits = np.concatenate([data] * 4)[:1797]  # as many images as the whole data set
    dw = dict(np.load(os.path.join(ROOT, "examples/digits/weights.npz")))
    rng = np.random.default_rng(0)
    sw = {"w0": rng.normal(0, 0.05, (128, 784)).astype(np.float32),
          "b0": rng.normal(0, 0.05, 128).astype(np.float32),
          "w1": rng.normal(0, 0.05, (10, 128)).astype(np.float32),
          "b1": rng.normal(0, 0.05, 10).astype(np.float32)}
    images = rng.random((1797, 784), dtype=np.float32)
    print(f"threads: RLY_NUM_THREADS={os.environ.get('RLY_NUM_THREADS', 'default')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    with tempfile.TemporaryDirectory() as d:
        dx = digits / np.float32(16)  # @mlp has no input scaling: feed what the model sees
        bench_mlp("digits", d, dw, dx.astype(np.float32), [1, 64, 1797])
        bench_mlp("seed002", d, sw, images, [1, 64, 1797])
    bench_rnn([16, 64, 256, 1024])


if __name__ == "__main__":
    main()
