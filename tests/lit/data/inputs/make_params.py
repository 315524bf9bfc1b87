"""Writes the tensor files of the tests in this directory into argv[1]."""
import json
import os
import struct
import sys

import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
w = (np.arange(80, dtype=np.float32).reshape(10, 8) - 40) / 16
b = np.linspace(-1, 1, 10).astype(np.float32)
x = np.ones((1, 8), np.float32)
np.savez(os.path.join(d, "p.npz"), w=w, b=b)
np.savez_compressed(os.path.join(d, "pc.npz"), **{"%w": w, "b": b})
np.savez(os.path.join(d, "extra.npz"), w=w, c=b)
np.savez(os.path.join(d, "shape.npz"), w=w[:5], b=b)
np.savez(os.path.join(d, "dtype.npz"), w=w.astype(np.float64), b=b)
np.savez(os.path.join(d, "dup.npz"), w=w, **{"%w": w})
np.save(os.path.join(d, "x.npy"), x)
np.save(os.path.join(d, "big.npy"), np.arange(6, dtype=">i8").reshape(2, 3))
open(os.path.join(d, "expect.txt"), "w").write(repr((x @ w.T + b).tolist()))
# safetensors by hand: the same w and b
blobs = [w.tobytes(), b.tobytes()]
h = json.dumps({"__metadata__": {"format": "np"},
                "w": {"dtype": "F32", "shape": [10, 8], "data_offsets": [0, 320]},
                "b": {"dtype": "F32", "shape": [10], "data_offsets": [320, 360]}}).encode()
h += b" " * (-len(h) % 8)
open(os.path.join(d, "p.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
open(os.path.join(d, "broken.npz"), "wb").write(open(os.path.join(d, "p.npz"), "rb").read()[:100])
# PyTorch-style names
np.savez(os.path.join(d, "torch.npz"), **{"fc1.weight": w, "fc1_bias": b})
