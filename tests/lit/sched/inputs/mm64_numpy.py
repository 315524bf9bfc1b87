"""make DIR: writes A.npy, B.npy (64x64 float32, seeded) into DIR.
check DIR NAME...: compares each DIR/NAME.npy with numpy's A @ B."""
import os
import sys

import numpy as np

d = sys.argv[2]
if sys.argv[1] == "make":
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(11)
    for name in ("A", "B"):
        np.save(os.path.join(d, name + ".npy"), rng.uniform(-1, 1, (64, 64)).astype(np.float32))
else:
    a, b = (np.load(os.path.join(d, n + ".npy")).astype(np.float64) for n in ("A", "B"))
    want = a @ b
    for name in sys.argv[3:]:
        got = np.load(os.path.join(d, name + ".npy"))
        ok = got.dtype == np.float32 and got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print("%s: %s" % (name, "matches numpy" if ok else "differs from numpy by %g" % np.abs(got - want).max()))
