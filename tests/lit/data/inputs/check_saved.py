"""Reads what files.test saved with numpy and compares with the inputs."""
import json
import os
import struct
import sys

import numpy as np

d = sys.argv[1]
p = np.load(os.path.join(d, "p.npz"))
w, b = p["w"], p["b"]
big = np.load(os.path.join(d, "big.npy"))


def ok(a, e):
    return "ok" if a.dtype == e.dtype and a.shape == e.shape and np.array_equal(a, e) else f"BAD {a!r}"


a = np.load(os.path.join(d, "w.npy"))
print("w.npy", a.dtype, a.shape, ok(a, w))
z = np.load(os.path.join(d, "out.npz"))
for k, e in [("w", w), ("b", b), ("big", big.astype(np.int64))]:
    print("out.npz", k, z[k].dtype, z[k].shape, ok(z[k], e))
raw = open(os.path.join(d, "t.safetensors"), "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
h = json.loads(raw[8:8 + n])
codes = {"F32": "<f4", "BOOL": "?"}
for k, e in [("t_0", b), ("t_1", b * 2), ("t_2", np.array(True))]:
    s, t = h[k]["data_offsets"]
    a = np.frombuffer(raw[8 + n + s:8 + n + t], dtype=codes[h[k]["dtype"]]).reshape(h[k]["shape"])
    print("t.safetensors", k, h[k]["dtype"], h[k]["shape"], ok(a, e))
