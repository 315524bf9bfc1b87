#!/usr/bin/python3
"""bench/train.py — training time per epoch: rly against PyTorch on one thread.

Usage: /usr/bin/python3 bench/train.py PATH/TO/rly [EPOCHS]

The model, data, optimizer and batch size of examples/train_digits.rly: the
64-32-10 MLP on the digits training split (1347 images; 21 shuffled batches
of 64 per epoch), dropout 0.1 on the hidden layer, Adam (lr 0.01), softmax
cross-entropy.  rly runs the example's @epoch (a Gradient-made @loss_grad
and lib/optim.rly's @adam per batch, the shuffle included) with
`:time @epoch(...) -n EPOCHS` (median per call after a warm-up call that
compiles the kernels, RLY_NUM_THREADS=1); PyTorch runs the same epoch
(torch.randperm shuffle, nn.Linear layers, F.dropout, torch.optim.Adam,
F.cross_entropy, loss.backward) with torch.set_num_threads(1), median of
EPOCHS epochs after one warm-up epoch.  Prints both and the ratio PyTorch /
rly (> 1: rly is faster).
"""
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def rly_epoch(rly, epochs):
    """The median seconds of one @epoch call of examples/train_digits.rly."""
    with open(os.path.join(ROOT, "examples", "train_digits.rly")) as f:
        text = f.read()
    script = text[: text.index("let %p0")] + (
        "let %p0 = @init(random.key(1));\n"
        "let %z = zeros(shape=[2410], dtype=\"float32\");\n"
        "let %onehot = one_hot(%y, 1f, 0f, depth=10);\n"
        f":time @epoch((%p0, %z, %z, 0f, @prng_state), %x, %onehot) -n {epochs}\n")
    env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS="1")
    p = subprocess.run([rly, "-"], input=script, capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=900)
    med = re.findall(r"runs?: min [\d.]+ (?:ns|us|ms|s)  median ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    if p.returncode != 0 or not med:
        sys.exit(f"rly failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    v, u = med[-1]
    return float(v) * UNIT[u]


def torch_epoch(epochs):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    d = np.load(os.path.join(ROOT, "examples", "digits", "train.npz"))
    x = torch.tensor(d["x"]) / 16
    y = torch.tensor(d["y"])
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(32, 10))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def epoch():
        order = torch.randperm(len(y))[:1344].reshape(21, 64)
        for idx in order:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()

    epoch()
    ts = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        epoch()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    rly = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    tr = rly_epoch(rly, epochs)
    tt = torch_epoch(epochs)
    print(f"digits MLP 64-32-10, 21 batches of 64, Adam, dropout 0.1, 1 thread, median of {epochs}")
    print(f"  rly     {tr * 1e3:8.3f} ms per epoch")
    print(f"  PyTorch {tt * 1e3:8.3f} ms per epoch")
    print(f"  ratio (PyTorch / rly): {tt / tr:.2f}x")


if __name__ == "__main__":
    main()
