"""mm_relu's inputs and expected output with numpy.
  gen DIR:            writes DIR/a.npy and DIR/b.npy (seeded, float32)
  check DIR NAME...:  compares each DIR/NAME.npy with maximum(a @ b, 0)
                      (relative 1e-5), prints `NAME: OK` or the worst error."""
import sys

import numpy as np

d = sys.argv[2]
if sys.argv[1] == "gen":
    rng = np.random.default_rng(7)
    np.save(f"{d}/a.npy", rng.uniform(-1, 1, (128, 128)).astype(np.float32))
    np.save(f"{d}/b.npy", rng.uniform(-1, 1, (128, 128)).astype(np.float32))
    sys.exit(0)
a, b = np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")
want = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
for name in sys.argv[3:]:
    got = np.load(f"{d}/{name}.npy")
    err = np.abs(got - want).max() / np.abs(want).max()
    ok = got.shape == want.shape and err < 1e-5 and (got > 0).sum() > 1000
    print(f"{name}: {'OK' if ok else f'MISMATCH {got.shape} {err}'}")
