#!/usr/bin/python3
"""conv_group_torch.py — grouped convolutions (and channel shuffles) against PyTorch.

Usage: /usr/bin/python3 tests/conv_group_torch.py PATH/TO/rly [-v]

Each case is a torch module (random weights, fixed seeds) exported with
torch.onnx.export (opset 13) and imported with `:import`, so its weights
are constants as in a network: a grouped conv2d (group widths 4, 8, 16,
32, 64, whose narrow groups rotate their inputs in registers; more output
than input channels per group, on block-diagonal weights; strides 1 and
2; padding; channel counts that are not a multiple of 16; a bias and a
ReLU after it), two grouped convolutions in a row,
and ShuffleNetV2's channel shuffle after a 1x1 convolution of 58
channels (kept NCHW: its blocks would be 2 channels wide).  rly runs each in both execution
modes (`--exec jit`: AlterOpLayout's blocked nn.contrib_conv2d_NCHWc and
its compiled schedule; `--exec interp`: the reference kernels) and the
outputs must match PyTorch's within rtol 1e-4 of the output's largest
magnitude.  In the jit mode `:kernels` must list a compiled
nn.contrib_conv2d_NCHWc kernel for every convolution case (the grouped
schedule, not the reference kernel's fallback).
Prints "conv_group_torch: N passed, N failed"; exits non-zero on any
failure, 77 (skipped) without torch."""
import os
import re
import subprocess
import sys
import tempfile
import warnings

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"conv_group_torch: skipped ({e})")
    sys.exit(77)


class Shuffle(nn.Module):
    """ShuffleNetV2's channel_shuffle after a 1x1 conv, and a concat split."""

    def __init__(self, c, groups):
        super().__init__()
        self.conv, self.g = nn.Conv2d(c, c, 1), groups

    def forward(self, x):
        y = self.conv(x)
        n, c, h, w = y.shape
        y = y.view(n, self.g, c // self.g, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
        a, b = y.chunk(2, dim=1)
        return torch.cat((a, torch.relu(b)), dim=1)


class SqueezeExcite(nn.Module):
    """A depthwise conv, a squeeze-and-excite scale, and the 1x1 projection
    after it (EfficientNet's block tail; its weight larger than the data)."""

    def __init__(self, c, out):
        super().__init__()
        self.dw = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, groups=c), nn.ReLU())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, 8, 1), nn.ReLU(),
                                nn.Conv2d(8, c, 1), nn.Sigmoid())
        self.proj = nn.Conv2d(c, out, 1)

    def forward(self, x):
        y = self.dw(x)
        return self.proj(y * self.se(y))


def grouped(cin, cout, groups, k=3, stride=1, pad=1, bias=True, relu=True):
    conv = nn.Conv2d(cin, cout, k, stride, pad, groups=groups, bias=bias)
    return nn.Sequential(conv, nn.ReLU()) if relu else conv


# (name, module factory, input shape); a name starting with "conv" must compile
# nn.contrib_conv2d_NCHWc kernels in the jit mode, one starting with "narrow" (58
# channels: no block near the vector width) an NCHW nn.conv2d kernel and no blocked one
CASES = [
    ("conv gw4 s1", lambda: grouped(64, 64, 16), (1, 64, 13, 13)),
    ("conv gw4 s2 nobias", lambda: grouped(128, 128, 32, stride=2, bias=False, relu=False),
     (1, 128, 15, 15)),
    ("conv gw8 s1", lambda: grouped(64, 64, 8), (1, 64, 10, 19)),
    ("conv gw8 104ch", lambda: grouped(104, 104, 13), (1, 104, 9, 9)),
    ("conv gw16 s2", lambda: grouped(96, 96, 6, stride=2), (1, 96, 14, 14)),
    ("conv gw32 s1", lambda: grouped(64, 64, 2), (1, 64, 8, 30)),
    ("conv gw64 s2", lambda: grouped(128, 128, 2, stride=2), (2, 128, 9, 9)),
    ("conv gw12 5x5", lambda: grouped(36, 72, 3, k=5, pad=2), (1, 36, 11, 11)),
    ("conv 4 in 8 out per group", lambda: grouped(24, 48, 6), (1, 24, 10, 10)),
    ("conv gw16 1x1", lambda: grouped(48, 48, 3, k=1, pad=0), (1, 48, 7, 7)),
    ("conv gw4 x2", lambda: nn.Sequential(grouped(32, 32, 8), grouped(32, 64, 8, stride=2)),
     (1, 32, 12, 12)),
    ("conv wide blocks 120 dw5x5",
     lambda: nn.Sequential(nn.Conv2d(24, 120, 1), nn.ReLU(), grouped(120, 120, 120, k=5, pad=2),
                           nn.Conv2d(120, 40, 1)), (1, 24, 14, 14)),
    ("conv wide blocks 200 dw s2", lambda: nn.Sequential(nn.Conv2d(16, 200, 1), grouped(
        200, 200, 200, stride=2)), (1, 16, 11, 11)),
    ("conv squeeze-excite", lambda: SqueezeExcite(192, 64), (1, 192, 3, 3)),
    ("narrow shuffle g2", lambda: Shuffle(58, 2), (1, 58, 6, 6)),
]


def export(mod, x, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (torch.from_numpy(x),), path, opset_version=13,
                          input_names=["x"], output_names=["y"])


def run(rly, onnx, xpath, mode, d):
    out = os.path.join(d, f"y_{mode}.npy")
    script = f":import {onnx}\n:load-tensor %x {xpath}\nlet %y = @main(%x);\n:save %y {out}\n:kernels\n"
    env = dict(os.environ, NO_COLOR="1")
    r = subprocess.run([rly, "--exec", mode, "-"], input=script, capture_output=True, text=True,
                       env=env, timeout=600)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError((r.stderr or r.stdout).strip()[-800:])
    return np.load(out), r.stdout


def check(rly, name, make, shape, d, verbose):
    torch.manual_seed(len(name))
    mod = make().eval()
    x = np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        ref = mod(torch.from_numpy(x)).numpy()
    onnx, xpath = os.path.join(d, "m.onnx"), os.path.join(d, "x.npy")
    np.save(xpath, x)
    export(mod, x, onnx)
    msgs = []
    for mode in ("jit", "interp"):
        y, out = run(rly, onnx, xpath, mode, d)
        err = float(np.abs(y.reshape(ref.shape) - ref).max())
        tol = 1e-4 * max(float(np.abs(ref).max()), 1.0)
        if verbose:
            print(f"  {name} {mode}: max error {err:.3g} (tolerance {tol:.3g})")
        if not err <= tol:
            msgs.append(f"{mode}: max error {err:.3g} > {tol:.3g}")
        if mode == "jit" and name.startswith("conv") and \
                not re.search(r"nn_contrib_conv2d_NCHWc\S*\s+(?!.*reference)", out):
            msgs.append("jit: no compiled nn.contrib_conv2d_NCHWc kernel in :kernels:\n" + out[-1500:])
        if mode == "jit" and name.startswith("narrow") and \
                ("NCHWc" in out or not re.search(r"@fused_nn_conv2d", out)):
            msgs.append("jit: the convolution should stay NCHW:\n" + out[-1500:])
    return msgs


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rly, verbose = sys.argv[1], "-v" in sys.argv
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        for name, make, shape in CASES:
            try:
                msgs = check(rly, name, make, shape, d, verbose)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                msgs = [str(e)]
            if msgs:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(msgs))
            else:
                passed += 1
    print(f"conv_group_torch: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
