#!/usr/bin/python3
"""zoo_torch.py — bench/zoo.py's machinery on small networks, checked against PyTorch.

Usage: /usr/bin/python3 tests/zoo_torch.py PATH/TO/rly

Through bench/zoo.py's own functions (export, inputs, rly's run, the
comparison), on small versions of the zoo's networks:
  squeezenet1_1         torchvision's, random weights, at 1x3x64x64
  densenet121           the same at 1x3x32x32 (its dense blocks'
                        concatenate chains)
  transformer_enc       a 2-layer nn.TransformerEncoder (d=32, 4 heads) exported
                        once with a dynamic sequence axis, run at 5 and 12 tokens
  resnet50 / resnext50  (tvm text) bench/gen_tvm_text.py at one unit per stage,
                        1x3x32x32: rly `:load`s the Relay text and `:bind`s the
                        .npz; PyTorch runs the same network with the same weights
                        (ResNet-50 also with two units in stage 1: a residual sum
                        used by the next unit's batch norm and its add)
Each runs in both exec modes (jit and interp); every output element must
satisfy |rly - torch| <= ATOL + RTOL * |torch| with ONNX's runner's RTOL 1e-3
and ATOL 1e-5 (outputs are of order 1; float32 sums in another order than
PyTorch's differ by a few 1e-6 here).  The text models' files must have TVM's shape
(version line, typed parameters, batch_norm's TupleGetItem).  Exits 77
(skipped) without torch/torchvision/onnx."""
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
try:
    import onnx
    import torch
    import torchvision  # noqa: F401
except ImportError as e:  # test-only dependencies
    print(f"zoo_torch: skipped ({e}; install python3-torch python3-torchvision python3-onnx)")
    sys.exit(77)
import zoo  # noqa: E402  (bench/zoo.py)

RTOL, ATOL = 1e-3, 1e-5
UNITS = (1, 1, 1, 1)
UNITS2 = (2, 1, 1, 1)  # a unit whose residual sum feeds both the next bn and the next add


def models():
    return [
        zoo.Model("squeezenet1_1", "squeezenet", zoo.vision("squeezenet1_1"), [(1, 3, 64, 64)]),
        zoo.Model("densenet121", "densenet", zoo.vision("densenet121"), [(1, 3, 32, 32)]),
        zoo.Model("transformer_enc", "transformer", zoo.encoder(2, 32, 4, 64), [(1, 5, 32), (1, 12, 32)],
                  opset=17, dynamic=("x", 1)),
        zoo.Model("resnet50 (tvm text)", "tvm text", zoo.tvm_text("resnet50", UNITS), [(1, 3, 32, 32)],
                  text="resnet50", units=UNITS),
        zoo.Model("resnet50 (tvm text) 2-unit", "tvm text", zoo.tvm_text("resnet50", UNITS2),
                  [(1, 3, 32, 32)], text="resnet50", units=UNITS2),
        zoo.Model("resnext50 (tvm text)", "tvm text", zoo.tvm_text("resnext50", UNITS), [(1, 3, 32, 32)],
                  text="resnext50", units=UNITS),
    ]


def check_files(m, onnx_path):
    """The export's own properties: a dynamic axis kept; TVM's text shape."""
    errs = []
    if m.dynamic:
        dim = onnx.load(onnx_path).graph.input[0].type.tensor_type.shape.dim[m.dynamic[1]]
        if dim.dim_param != "seq":
            errs.append(f"{m.name}: input axis {m.dynamic[1]} is not dynamic ({dim})")
    if m.text:
        src = open(os.path.splitext(onnx_path)[0] + ".rly").read()
        for want in ('#[version = "0.0.5"]', "def @main(%data: Tensor[(1, 3, 32, 32), float32]",
                     "nn.batch_norm(", ".0 /* ty=Tensor[", "nn.global_avg_pool2d(", "nn.bias_add("):
            if want not in src:
                errs.append(f"{m.name}: the text has no {want!r}")
    return errs


def check_row(rly, m, mod, onnx_path, label, xpath, d):
    ref = zoo.torch_ref(torch, mod, np.load(xpath))
    errs = []
    for mode in ("jit", "interp"):
        try:
            y = zoo.rly_output(rly, m, onnx_path, xpath, mode, 1, d)[0].reshape(ref.shape)
        except RuntimeError as e:
            errs.append(f"{label} ({mode}): {e}")
            continue
        da, dr = zoo.diffs(y, ref)
        bad = int((np.abs(y - ref) > ATOL + RTOL * np.abs(ref)).sum())
        print(f"{label:24s} {mode:6s} max abs diff {da:.2e} (rel to max {dr:.2e}), {bad} elements out")
        if bad:
            errs.append(f"{label} ({mode}): {bad} elements beyond atol {ATOL} + rtol {RTOL}")
    return errs


def main():
    rly = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "rly")
    torch.set_grad_enabled(False)
    torch.set_num_threads(1)
    errs, rows = [], 0
    with tempfile.TemporaryDirectory() as d:
        for m in models():
            mod = m.build(torch)
            onnx_path = zoo.export(torch, m, mod, d)
            errs += check_files(m, onnx_path)
            for label, shape in m.rows():
                errs += check_row(rly, m, mod, onnx_path, label, zoo.model_input(d, label, shape), d)
                rows += 1
    for e in errs:
        print("FAIL:", e)
    print(f"zoo_torch: {rows} rows in 2 modes, {len(errs)} failures")
    sys.exit(1 if errs else 0)


if __name__ == "__main__":
    main()
