#!/usr/bin/python3
"""conv3d_torch.py — nn.conv3d's compiled schedules against PyTorch.

Usage: /usr/bin/python3 tests/conv3d_torch.py PATH/TO/rly [-v]

Each case is a Relay function of float32 nn.conv3d with a fused epilogue
(bias and ReLU, a residual add, none), run on random operands in both
execution modes (`--exec jit`: the blocked 3-D schedule of
lower/compute/compute_conv_nd.c after AlterOpLayout's DHWIO weights;
`--exec interp`: the reference kernel) and compared with
torch.nn.functional.conv3d in float64: |rly - ref| <= TOL * (1 + bound),
bound being the same convolution of |x| and |w| (float32 sums' rounding
grows with it).
The shapes cover strides 1 and 2, padding, dilation, channel counts that
are not a multiple of the vector width, rows longer and shorter than a
register tile, and rows narrow enough for a tile to hold several.  Exits
non-zero on any failure, 77 when torch is missing."""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"conv3d_torch: skipped ({e}; install python3-torch)")
    sys.exit(77)

MODES = ("jit", "interp")
TOL = 4e-6

# name, input (N, C, D, H, W), weight (O, C, kd, kh, kw), stride, padding,
# dilation, epilogue (none, bias_relu, residual)
CASES = [
    ("stem", (1, 3, 4, 14, 14), (64, 3, 3, 7, 7), (1, 2, 2), (1, 3, 3), (1, 1, 1), "bias_relu"),
    ("odd_channels", (1, 20, 5, 9, 11), (24, 20, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1),
     "bias_relu"),
    ("stride2", (1, 16, 6, 10, 10), (32, 16, 3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), "bias_relu"),
    ("residual", (2, 32, 3, 7, 30), (32, 32, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1),
     "residual"),
    ("pointwise_s2", (1, 8, 4, 8, 8), (16, 8, 1, 1, 1), (2, 2, 2), (0, 0, 0), (1, 1, 1), "none"),
    ("rows_of_7", (1, 24, 2, 4, 7), (16, 24, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), "residual"),
    ("small", (1, 5, 4, 6, 3), (7, 5, 2, 3, 1), (1, 1, 2), (0, 2, 0), (2, 1, 1), "bias_relu"),
]


def out_shape(x, w, s, p, d):
    return (x[0], w[0]) + tuple((x[2 + i] + 2 * p[i] - d[i] * (w[2 + i] - 1) - 1) // s[i] + 1
                                for i in range(3))


def ints(v):
    return "[" + ", ".join(str(i) for i in v) + "]"


def ty(shape):
    return f"Tensor[({', '.join(str(i) for i in shape)}), float32]"


def relay(x, w, s, p, d, epi):
    """@f's text and its extra operand (bias or residual) shape."""
    y = out_shape(x, w, s, p, d)
    conv = f"nn.conv3d(%x, %w, strides={ints(s)}, padding={ints(p)}, dilation={ints(d)})"
    extra, body = None, conv
    if epi == "bias_relu":
        extra, body = (w[0],), f"nn.relu(nn.bias_add({conv}, %e))"
    elif epi == "residual":
        extra, body = y, f"nn.relu(add({conv}, %e))"
    params = f"%x: {ty(x)}, %w: {ty(w)}" + (f", %e: {ty(extra)}" if extra else "")
    return f"def @f({params}) {{\n  {body}\n}}\n", extra


def reference(xs, ws, es, s, p, d, epi):
    t = lambda a: torch.from_numpy(a.astype(np.float64))
    y = F.conv3d(t(xs), t(ws), stride=s, padding=p, dilation=d)
    if epi == "bias_relu":
        y = torch.relu(y + t(es).reshape(1, -1, 1, 1, 1))
    elif epi == "residual":
        y = torch.relu(y + t(es))
    return y.numpy()


def run(rly, d, name, text, arrays, mode):
    names = ["x", "w", "e"][:len(arrays)]
    script = text
    for n, a in zip(names, arrays):
        path = os.path.join(d, f"{name}_{n}.npy")
        np.save(path, a)
        script += f":load-tensor %{n} {path}\n"
    out = os.path.join(d, f"{name}_{mode}.npy")
    script += f"let %y = @f({', '.join('%' + n for n in names)});\n:save %y {out}\n"
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.run([rly, "--exec", mode, "-"], input=script, capture_output=True, text=True,
                       env=env, timeout=600)
    if p.returncode != 0 or not os.path.exists(out):
        return None, p.stdout + p.stderr
    return np.load(out), ""


def check(rly, d, case, verbose):
    name, x, w, s, p, dl, epi = case
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    text, extra = relay(x, w, s, p, dl, epi)
    arrays = [rng.standard_normal(x).astype(np.float32), rng.standard_normal(w).astype(np.float32)]
    if extra:
        arrays.append(rng.standard_normal(extra).astype(np.float32))
    ref = reference(*arrays, *([None] if not extra else []), s, p, dl, epi)
    mags = [np.abs(a) for a in arrays]
    bound = np.abs(reference(*mags, *([None] if not extra else []), s, p, dl, "none"))
    ok = True
    for mode in MODES:
        y, err = run(rly, d, name, text, arrays, mode)
        if y is None or y.shape != ref.shape:
            print(f"FAIL {name} [{mode}]: {err[-1500:] or y.shape}")
            ok = False
            continue
        e = float(np.max(np.abs(y - ref) / (1 + bound)))
        good = e <= TOL
        ok &= good
        if verbose or not good:
            print(f"{'ok  ' if good else 'FAIL'} {name} [{mode}]: max err / (1 + bound) {e:.2e}")
    return ok


def main():
    rly, verbose = sys.argv[1], "-v" in sys.argv[2:]
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        results = [check(rly, d, c, verbose) for c in CASES]
    passed = sum(results)
    print(f"conv3d_torch: {passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
