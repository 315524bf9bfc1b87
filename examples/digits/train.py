#!/usr/bin/env python3
"""examples/digits/train.py: trains the small MLP that examples/digits.rly runs.

Data: the handwritten digits (1797 images of 8x8 pixels, values 0..16) that
Debian's python3-sklearn ships as sklearn/datasets/data/digits.csv.gz; only
the CSV is read, the model is plain numpy.  A fixed shuffle puts 1347 images
in the training split and 450 in the test split.

Model: x/16 -> dense(64 -> 32) -> relu -> dense(32 -> 10), trained with full-batch
Adam on softmax cross-entropy.  Weights are stored as Relay's nn.dense
expects them (units x in).

Writes (committed, so nothing needs sklearn afterwards):
  weights.npz  w0 (32, 64), b0 (32), w1 (10, 32), b1 (10)   float32
  test.npz     x (450, 64) float32 pixels, y (450) int64 labels,
               pred (450) int64: numpy's predictions with these weights
  train.npz    x (1347, 64) float32 pixels, y (1347) int64 labels: the
               training split (examples/train_digits.rly trains on it)
and prints numpy's test accuracy.
Usage: /usr/bin/python3 examples/digits/train.py [digits.csv.gz]"""
import gzip
import os
import sys

import numpy as np

CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with gzip.open(path, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return rows[:, :64], rows[:, 64].astype(np.int64)


def forward(p, x):
    h = np.maximum(x / np.float32(16) @ p["w0"].T + p["b0"], 0)
    return h, h @ p["w1"].T + p["b1"]


def grads(p, x, y):
    h, logits = forward(p, x)
    z = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    prob[np.arange(len(y)), y] -= 1
    d = prob / len(y)
    dh = (d @ p["w1"]) * (h > 0)
    xs = x / np.float32(16)
    return {"w1": d.T @ h, "b1": d.sum(0), "w0": dh.T @ xs, "b0": dh.sum(0)}


def train(x, y, steps=600, lr=0.01):
    rng = np.random.default_rng(0)
    p = {"w0": rng.normal(0, 0.2, (32, 64)), "b0": np.zeros(32),
         "w1": rng.normal(0, 0.2, (10, 32)), "b1": np.zeros(10)}
    p = {k: v.astype(np.float32) for k, v in p.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v2 = {k: np.zeros_like(v) for k, v in p.items()}
    for t in range(1, steps + 1):
        g = grads(p, x, y)
        for k in p:
            m[k] = 0.9 * m[k] + 0.1 * g[k]
            v2[k] = 0.999 * v2[k] + 0.001 * g[k] ** 2
            mh, vh = m[k] / (1 - 0.9 ** t), v2[k] / (1 - 0.999 ** t)
            p[k] = (p[k] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
    return p


def main():
    x, y = load(sys.argv[1] if len(sys.argv) > 1 else CSV)
    order = np.random.default_rng(42).permutation(len(y))
    test, tr = order[:450], order[450:]
    p = train(x[tr], y[tr])
    _, logits = forward(p, x[test])
    pred = logits.argmax(axis=1).astype(np.int64)
    acc = float((pred == y[test]).mean())
    np.savez(os.path.join(HERE, "weights.npz"), **p)
    np.savez_compressed(os.path.join(HERE, "test.npz"), x=x[test], y=y[test], pred=pred)
    np.savez_compressed(os.path.join(HERE, "train.npz"), x=x[tr], y=y[tr])
    print(f"numpy test accuracy: {acc:.4f} ({int((pred == y[test]).sum())}/{len(test)})")


if __name__ == "__main__":
    main()
