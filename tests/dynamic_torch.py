#!/usr/bin/python3
"""tests/dynamic_torch: functions with `?` dimensions run on shape-specialized
copies (engine/specialize.c) and give PyTorch's values.

Models (random weights, eval mode, dropout 0), exported to ONNX with dynamic
axes and imported once per execution mode:
  encoder   torch.nn.TransformerEncoder, 2 layers of d_model 32, 4 heads,
            feed-forward 64, batch_first, a dynamic sequence axis (opset 14);
  encoder2  the same with a dynamic batch axis too (two size variables).
Each runs on LENGTHS (1, primes, lengths that are not multiples of a tile,
one length again) in the jit mode (specialization on, the default) and the
interp mode; every output must match PyTorch's within ATOL, and in the jit
mode `:kernels` must list one specialized copy of @main per distinct shape,
the repeated length's with two calls.
Usage: tests/dynamic_torch.py path/to/rly [-v]"""
import os
import re
import subprocess
import sys
import tempfile
import warnings

import numpy as np

try:
    import torch
    from torch import nn
except ImportError:
    print("dynamic_torch: PyTorch is not installed (python3-torch): skipped")
    sys.exit(77)

LENGTHS = (1, 2, 7, 13, 16, 31, 64, 7)
ATOL = 3e-5  # absolute, on outputs of order 1 (layer-normed)
MODES = ("jit", "interp")


def encoder():
    torch.manual_seed(5)
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()


def export(mod, path, axes):
    x = torch.randn(2 if 0 in axes else 1, 5, 32)
    # PyTorch's fused inference kernel (no ONNX form) is used only without autograd
    with warnings.catch_warnings(), torch.enable_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (x,), path, opset_version=14, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": axes, "y": axes})


def inputs(batch, folder, name):
    rng = np.random.default_rng(7)
    xs = {f"x{i}": rng.standard_normal((batch(i), n, 32)).astype(np.float32)
          for i, n in enumerate(LENGTHS)}
    path = os.path.join(folder, f"{name}_in.npz")
    np.savez(path, **xs)
    return xs, path


def script(onnx, npz, folder, name, mode):
    lines = [f":import {onnx}"]
    for i in range(len(LENGTHS)):
        lines += [f":load-tensor %x {npz} x{i}", "let %y = @main(%x);",
                  f":save %y {folder}/{name}_{mode}_{i}.npy"]
    lines.append(":kernels")
    path = os.path.join(folder, f"{name}_{mode}.rly")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def copies(stdout):
    """`:kernels`' specialized copies of @main: shapes → calls."""
    rows = stdout.split("specialized (", 1)[1].splitlines()[1:] if "specialized (" in stdout else []
    out = {}
    for row in rows:
        m = re.match(r"@main  (.*)  (\d+)  [\d.]+ ms$", row)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def check_copies(stdout, xs):
    want = {}
    for i in range(len(LENGTHS)):
        shape = xs[f"x{i}"].shape
        key = "(" + ", ".join(map(str, shape)) + ") float32"
        want[key] = want.get(key, 0) + 1
    got = copies(stdout)
    if got != want:
        return False, f"specialized copies {got}, expected {want}"
    return True, f"{len(got)} specialized copies"


def run(rly, name, mod, axes, batch, folder):
    onnx = os.path.join(folder, f"{name}.onnx")
    export(mod, onnx, axes)
    xs, npz = inputs(batch, folder, name)
    for mode in MODES:
        r = subprocess.run([rly, "--exec", mode, script(onnx, npz, folder, name, mode)],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            yield False, f"{name} [{mode}] rly failed: {(r.stderr or r.stdout)[-800:]}"
            continue
        errs = []
        with torch.no_grad():
            for i in range(len(LENGTHS)):
                ref = mod(torch.from_numpy(xs[f"x{i}"])).numpy()
                got = np.load(os.path.join(folder, f"{name}_{mode}_{i}.npy"))
                errs.append(float(np.abs(got - ref).max()) if got.shape == ref.shape else np.inf)
        ok, msg = max(errs) <= ATOL, f"lengths {LENGTHS}: max error {max(errs):.3g}"
        if mode == "jit":
            cok, cmsg = check_copies(r.stdout, xs)
            ok, msg = ok and cok, msg + "; " + cmsg
        yield ok, f"{name} [{mode}] {msg}"


def main():
    rly = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    mod = encoder()
    models = [("encoder", {1: "seq"}, lambda i: 1),
              ("encoder2", {0: "batch", 1: "seq"}, lambda i: 1 + i % 3)]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="dynamic_torch_") as folder:
        for name, axes, batch in models:
            for ok, msg in run(rly, name, mod, axes, batch, folder):
                print(("ok   " if ok else "FAIL ") + msg, flush=True)
                failed += not ok
    print(f"dynamic_torch: {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
