#!/usr/bin/python3
"""python_session.py — rly from Python, step by step (run it from the source
tree after `ninja -C build`: /usr/bin/python3 examples/python_session.py).

Each step is a cell as one would type it into a notebook: a session, a
function in Relay text, a call with numpy arrays, a pass and its printed
result, a torch tensor through DLPack, timing, and an error as Python sees
it."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import rly  # noqa: E402

# ── a session and a function ──
s = rly.Session()  # exec="interp" for the reference kernels only
s.load("""
def @mlp(%x: Tensor[(1, 64), float32], %w1: Tensor[(64, 32), float32],
         %w2: Tensor[(32, 10), float32]) {
  nn.softmax(nn.matmul(nn.relu(nn.matmul(%x, %w1)), %w2))
}
""")

# ── call it with numpy arrays: aligned arrays are read in place ──
rng = np.random.default_rng(0)
x = rly.aligned(rng.standard_normal((1, 64), np.float32))
w1 = rly.aligned(rng.standard_normal((64, 32), np.float32) * 0.1)
w2 = rly.aligned(rng.standard_normal((32, 10), np.float32) * 0.1)
p = s.run("@mlp", x, w1, w2)
print("probabilities:", np.round(p, 3), "sum", p.sum())

# ── the same numbers from numpy ──
h = np.maximum(x @ w1, 0) @ w2
ref = np.exp(h - h.max()) / np.exp(h - h.max()).sum()
print("max difference from numpy:", float(np.abs(p - ref).max()))

# ── a pass, and the module it leaves ──
s.pass_("FuseOps")
print(s.print().split("def @mlp")[1][:400])

# ── torch tensors go in through __dlpack__ ──
try:
    import torch
    print("from torch:", np.round(s.run("@mlp", torch.from_numpy(x), torch.from_numpy(w1),
                                        torch.from_numpy(w2)), 3))
except ImportError:
    pass

# ── timing: compiled on the first call, then measured ──
print("time:", s.time("@mlp", x, w1, w2, runs=200))

# ── an error is rly.Error, with rly's location and caret ──
try:
    s.load("def @bad(%x: Tensor[(2), float32]) { nn.relu(%x, %x) }")
except rly.Error as e:
    print(e)
