"""make DIR: writes x.npy and w.npz (the weights %w, %d of inputs/small.rly,
seeded) into DIR.  check DIR NAME...: compares each DIR/NAME.npy with
numpy's result of inputs/small.rly's @main."""
import os
import sys

import numpy as np

d = sys.argv[2]
if sys.argv[1] == "make":
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(5)
    np.save(os.path.join(d, "x.npy"), rng.uniform(-1, 1, (8, 8, 8, 8)).astype(np.float32))
    np.savez(os.path.join(d, "w.npz"), w=rng.uniform(-0.3, 0.3, (16, 8, 3, 3)).astype(np.float32),
             d=rng.uniform(-0.1, 0.1, (16, 1024)).astype(np.float32))
else:
    x = np.load(os.path.join(d, "x.npy")).astype(np.float64)
    wz = np.load(os.path.join(d, "w.npz"))
    w, dw = wz["w"].astype(np.float64), wz["d"].astype(np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((8, 16, 8, 8))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
    want = np.maximum(y, 0).reshape(8, -1) @ dw.T + 1
    for name in sys.argv[3:]:
        got = np.load(os.path.join(d, name + ".npy"))
        ok = got.dtype == np.float32 and got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4)
        print("%s: %s" % (name, "matches numpy" if ok else "differs from numpy by %g" % np.abs(got - want).max()))
