#!/usr/bin/python3
"""onnx_torch.py — the ONNX importer against PyTorch.

Usage: /usr/bin/python3 tests/onnx_torch.py PATH/TO/rly [-v] [-k NAME]

Small modules of each op family (random weights, fixed seeds) are exported
with torch.onnx.export to a temporary folder, plus a few graphs built with
onnx.helper for attributes PyTorch does not emit (auto_pad, Dropout's mask,
opset-10 Clip, ...), and torchvision's resnet18 and mobilenet_v2 (random
weights, weights=None: nothing is downloaded).  Models with dynamic axes
(named size variables) are exported at one length and run at another; a
case may also name the type `:type @main` must show (size variables kept
through shape arithmetic).  A TransformerEncoderLayer with a dynamic
sequence axis is imported once and run at several lengths, in the jit mode
with the same kernels for all of them.  Each model is imported with
`:import`, run on its inputs in both execution modes (`--exec jit` and
`--exec interp`) and its outputs saved with `:save`; they must match
PyTorch's (or numpy's, for the hand-built graphs) within the case's
tolerance: |rly - ref| <= atol + rtol * |ref| elementwise.  resnet18 also
goes through `rly --import -o` and `rly --params`.  Prints the max errors
and "onnx_torch: N passed, N failed"; exits non-zero on any failure and
with 77 (skipped) when torch or onnx is not installed."""
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

try:
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from onnx import TensorProto, helper
except ImportError as e:  # test-only dependencies (scripts/install-deps, make test)
    print(f"onnx_torch: skipped ({e}; install python3-torch python3-torchvision python3-onnx)")
    sys.exit(77)

torch.set_grad_enabled(False)
warnings.filterwarnings("ignore")  # the exporter's notes on tracing
MODES = ("jit", "interp")


class Case:
    """A model file, its inputs and its reference outputs."""

    def __init__(self, name, atol=1e-5, rtol=1e-5, types=None):
        self.name, self.atol, self.rtol = name, atol, rtol
        self.inputs, self.expected = [], []
        self.types = types  # text `:type @main` must show after the import


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ───────────────────────────── PyTorch modules ─────────────────────────────

class Fn(nn.Module):
    """A module from a function of its inputs (and of its own parameters)."""

    def __init__(self, f, **params):
        super().__init__()
        self.f = f
        for k, v in params.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self.f(self, *xs)


def torch_cases():
    """(name, module, inputs, opset, atol, rtol, dynamic axes, expected result types): one per
    op family."""
    torch.manual_seed(0)
    x4 = rand(2, 4, 9, 9, seed=1)
    x3 = rand(2, 5, 7, seed=2)
    m, c = [], []

    def add(name, mod, inputs, opset=13, atol=1e-5, rtol=1e-5, dynamic=None, types=None):
        m.append((name, mod.eval(), inputs, opset, atol, rtol, dynamic, types))

    # convolutions
    add("conv_groups_dilation", nn.Conv2d(4, 8, 3, stride=2, padding=(2, 1), dilation=2, groups=2), [x4], atol=1e-4)
    add("conv_depthwise_nobias", nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), [x4], atol=1e-4)
    add("conv1d", nn.Conv1d(5, 6, 3, stride=2, padding=1), [x3], atol=1e-4)
    add("conv_transpose", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1), [x4], atol=1e-4)
    add("conv_transpose_groups", nn.ConvTranspose2d(4, 4, 2, stride=2, groups=2), [x4], atol=1e-4)
    # 1-D: the weight is (C_in, C_out / groups, k); C_in != C_out
    add("conv_transpose1d", nn.ConvTranspose1d(5, 3, 3, stride=2, padding=1, output_padding=1), [x3], atol=1e-4)
    add("conv_transpose1d_groups", nn.ConvTranspose1d(4, 6, 3, stride=3, padding=2, output_padding=1,
                                                      dilation=2, groups=2), [rand(2, 4, 6, seed=37)], atol=1e-4)
    add("conv_transpose3d", nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1),
                                               output_padding=(1, 0, 0)), [rand(1, 2, 3, 4, 5, seed=38)], atol=1e-4)
    # Gemm, MatMul
    add("linear", nn.Linear(9, 5), [rand(3, 9, seed=3)], atol=1e-4)
    add("gemm_alpha_beta", Fn(lambda s, a, b, c: torch.addmm(c, a, b, beta=0.5, alpha=2.0)),
        [rand(3, 4, seed=4), rand(4, 5, seed=5), rand(3, 5, seed=6)], atol=1e-4)
    add("matmul_2d", Fn(lambda s, a, b: a @ b), [rand(3, 4, seed=7), rand(4, 6, seed=8)], atol=1e-4)
    add("matmul_batched_2d", Fn(lambda s, a, b: a @ b), [rand(2, 3, 4, 5, seed=9), rand(5, 6, seed=10)], atol=1e-4)
    add("matmul_broadcast", Fn(lambda s, a, b: a @ b), [rand(2, 1, 4, 5, seed=11), rand(3, 5, 6, seed=12)], atol=1e-4)
    add("matmul_vector", Fn(lambda s, a, b: (a @ b, b.transpose(-1, -2) @ a)),
        [rand(5, seed=13), rand(2, 5, 3, seed=14)], atol=1e-4)
    # elementwise arithmetic and math, with broadcasting
    a, b = rand(2, 3, 4, seed=15), rand(3, 1, seed=16)
    pos = np.abs(rand(2, 3, 4, seed=17)) + np.float32(0.5)
    add("arith", Fn(lambda s, a, b: (a + b, a - b, a * b, a / (b * b + 1))), [a, b])
    add("math", Fn(lambda s, p, a: (torch.sqrt(p), torch.exp(a), torch.log(p), torch.erf(a), torch.tanh(a),
                                    torch.sigmoid(a), torch.sin(a), torch.cos(a), -a, torch.abs(a),
                                    torch.reciprocal(p), torch.pow(p, 1.5), p ** a, torch.floor(a), torch.ceil(a))),
        [pos, a], atol=2e-5, rtol=2e-5)
    add("max_min_sum", Fn(lambda s, a, b: (torch.maximum(a, b), torch.minimum(a, b))), [a, b])
    # activations
    add("activations", Fn(lambda s, a: (F.relu(a), F.leaky_relu(a, 0.1), F.hardtanh(a, -0.5, 0.7), F.relu6(a * 4),
                                        F.hardsigmoid(a * 3), F.hardswish(a * 3), F.elu(a, 0.7), F.softplus(a),
                                        F.gelu(a), torch.clamp(a, min=0.2))), [a], atol=2e-5, rtol=2e-5)
    add("prelu", nn.PReLU(4, 0.2), [x4])
    # normalizations
    bn = nn.BatchNorm2d(4)
    bn.running_mean.copy_(torch.from_numpy(rand(4, seed=18)))
    bn.running_var.copy_(torch.from_numpy(np.abs(rand(4, seed=19)) + 0.5))
    bn.weight.data = torch.from_numpy(rand(4, seed=20))
    bn.bias.data = torch.from_numpy(rand(4, seed=21))
    add("batch_norm", bn, [x4], atol=1e-4)
    inorm = nn.InstanceNorm2d(4, affine=True)
    inorm.weight.data = torch.from_numpy(rand(4, seed=22))
    add("instance_norm", inorm, [x4], atol=1e-4)
    ln = nn.LayerNorm(7)
    ln.weight.data, ln.bias.data = torch.from_numpy(rand(7, seed=23)), torch.from_numpy(rand(7, seed=24))
    add("layer_norm_17", ln, [x3], opset=17, atol=1e-4)
    add("layer_norm_pattern_13", ln, [x3], opset=13, atol=1e-4)
    add("layer_norm_2axes_17", nn.LayerNorm([5, 7]), [x3], opset=17, atol=1e-4)
    # pools
    add("max_pool", nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [x4])
    add("max_pool_dilated", nn.MaxPool2d(2, stride=1, dilation=2), [x4])
    # MaxPool's Indices output (the exporter subtracts each plane's offset)
    add("max_pool_indices", nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True, return_indices=True), [x4])
    add("max_pool_indices_dilated", nn.MaxPool2d(2, stride=1, dilation=2, return_indices=True), [x4])
    add("max_pool1d_indices", nn.MaxPool1d(3, stride=2, padding=1, return_indices=True), [x3])
    add("avg_pool", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True), [x4])
    add("avg_pool_include_pad", nn.AvgPool2d(2, stride=2, padding=1), [x4])
    add("global_avg_pool", nn.AdaptiveAvgPool2d(1), [x4])
    add("max_pool1d", nn.MaxPool1d(2, stride=2), [x3])
    # shapes and data movement
    add("flatten_reshape", Fn(lambda s, x: (torch.flatten(x, 1), x.view(x.size(0), -1, 3), x.reshape(-1),
                                            torch.flatten(x, 2))), [x4])
    add("transpose_squeeze", Fn(lambda s, x: (x.permute(0, 2, 3, 1), x[:, :1].squeeze(1), x.unsqueeze(-1).unsqueeze(0),
                                              x.transpose(1, 2))), [x4])
    add("squeeze_unsqueeze_11", Fn(lambda s, x: (x[:, :1].squeeze(1), x.unsqueeze(2))), [x4], opset=11)
    add("concat_split", Fn(lambda s, x, y: (torch.cat([x, y, x], 1),) + torch.split(x, [1, 3], 1) + torch.chunk(y, 2, 2)),
        [x4, rand(2, 3, 9, 9, seed=25)])
    add("split_11", Fn(lambda s, x: torch.split(x, [2, 2], 1)), [x4], opset=11)
    add("slice", Fn(lambda s, x: (x[:, 1:3, ::2], x[..., -1], x[:, :, 2:-1, 1:], x[:, -3:], torch.flip(x, [2]))), [x4])
    add("gather", Fn(lambda s, x: (x[:, 2], x[:, :, torch.tensor([0, 4, -1])], torch.index_select(x, 3, torch.tensor([3, 1])))), [x4])
    add("expand_tile", Fn(lambda s, x: (x[:, :1].expand(2, 3, 9, 9), x.repeat(1, 2, 1, 1), x[0, 0].expand(2, 9, 9))), [x4])
    add("pad", Fn(lambda s, x: (F.pad(x, (1, 2, 0, 1), value=0.5), F.pad(x, (2, 1, 1, 2), mode="reflect"),
                                F.pad(x, (1, 1, 2, 0), mode="replicate"))), [x4])
    add("shape_arith", Fn(lambda s, x: (torch.zeros(x.shape[1:]) + x[0], torch.arange(x.shape[2]) * 2 + x[0, 0, 0],
                                        x.new_ones(x.size(0), x.size(3)) * x.size(1) + x[:, 0, 0])), [x4])
    add("round", Fn(lambda s, a: (torch.round(a * 2), torch.round(torch.arange(-6, 6) / 2.0 + a[0, 0, 0] * 0))), [a])
    add("where_compare", Fn(lambda s, a, b: (torch.where(a > b, a, b), (a == a.round()).float(), (a < b) & (a > 0),
                                             ~(a >= b), torch.where(a <= 0, 1.0, a))), [a, b])
    add("cast", Fn(lambda s, a: ((a * 3).to(torch.int32), (a * 3).long().float(), (a > 0).to(torch.float32))), [a])
    # reductions and softmax
    add("reduce", Fn(lambda s, x: (x.mean((2, 3)), x.sum(1, keepdim=True), x.amax(-1), x.amin((1, 2)), x.mean(),
                                   torch.argmax(x, 1), torch.argmin(x, -1, keepdim=True))), [x4], atol=1e-4)
    add("reduce_11", Fn(lambda s, x: (x.mean((2, 3)), x.sum(1, keepdim=True))), [x4], opset=11, atol=1e-4)
    add("softmax", Fn(lambda s, x: (F.softmax(x, 1), F.log_softmax(x, -1), F.softmax(x, 2))), [x3])
    add("softmax_11", Fn(lambda s, x: (F.softmax(x, 1), F.log_softmax(x, -1), F.softmax(x, 2))), [x3], opset=11)
    add("dropout_identity", nn.Sequential(nn.Dropout(0.5), nn.Identity()), [x3])
    # a dynamic batch (dim_param): size variables through conv and pooling, the flattening
    # Shape -> Gather -> Concat -> Reshape through shape_of and dyn.reshape; run at another batch
    cnn = nn.Sequential(nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 5, 3))
    add("dynamic_batch_cnn", Fn(lambda s, x: F.softmax(s.fc(s.cnn(x).view(x.size(0), -1)), -1),
                                cnn=cnn, fc=nn.Linear(5 * 2 * 2, 7)),
        [rand(3, 4, 9, 9, seed=26)], atol=1e-5, dynamic={"in0": {0: "batch"}})
    add("dynamic_seq_matmul", Fn(lambda s, x: (s.lin(x) @ x.transpose(1, 2), (x.unsqueeze(1) @ x.unsqueeze(1).transpose(2, 3))),
                                 lin=nn.Linear(6, 6)), [rand(2, 5, 6, seed=27)], atol=1e-4, dynamic={"in0": {1: "seq"}})
    # the dynamic-shape phase: a named sequence axis through shape arithmetic and the ops
    # that take shapes, repeats, pads and indices as run-time tensors
    xs = rand(1, 6, 64, seed=28)
    add("dyn_reshape_sizevar", Fn(lambda s, x: (x.view(x.size(0), x.size(1), 4, 16) * 2,
                                                x.reshape(x.size(1), 64) + 1, x.view(x.size(0), -1, 16))),
        [xs], dynamic={"in0": {1: "seq"}},
        types="-> (Tensor[(1, seq, 4, 16), float32], Tensor[(seq, 64), float32], Tensor[(1, ?, 16), float32])")
    add("dyn_reshape_two_vars", Fn(lambda s, x: (x.reshape(x.size(1), x.size(0), 8) + 1, x.reshape(x.size(0), 2, -1, 4),
                                                 x.reshape(x.size(0) * x.size(1), 8))),
        [rand(3, 6, 8, seed=33)], dynamic={"in0": {0: "b", 1: "seq"}},
        types="-> (Tensor[(?, ?, ?), float32], Tensor[(b, 2, seq, 4), float32], Tensor[(?, 8), float32])")
    small, seq = rand(1, 1, 8, seed=29), rand(1, 5, 8, seed=30)
    add("dyn_expand_tile", Fn(lambda s, a, y: (a.expand(y.shape) + y, a.expand_as(y), a.repeat(1, y.size(1), 2),
                                               a.expand(y.size(0), -1, -1))),
        [small, seq], dynamic={"in1": {1: "seq"}}, types="-> (Tensor[(?, seq, 8), float32]")
    add("dyn_pad", Fn(lambda s, y: (F.pad(y, (0, 0, y.size(1) - 2, 1), value=0.25),
                                    F.pad(y, (1, y.size(1) - 3), mode="replicate"))),
        [seq], dynamic={"in0": {1: "seq"}})
    add("dyn_slice", Fn(lambda s, y: (y[:, : y.size(1) - 1] * 2, y[:, y.size(1) // 2:, 2:7:2], y[:, 1:][:, :, : y.size(1)])),
        [seq], dynamic={"in0": {1: "seq"}})
    add("dyn_full_range", Fn(lambda s, y: (torch.zeros(y.shape) + y, y.new_ones(y.size(1), 3) * 2,
                                           torch.arange(y.size(1)) * 3, torch.arange(1, y.size(1) * 2, 2).float())),
        [seq], dynamic={"in0": {1: "seq"}})
    add("gather_runtime_indices", Fn(lambda s, x, i, j: (x[i], torch.index_select(x, 1, j), x[:, i[1]], x[i[2:]] * 2, x[:, j])),
        [rand(6, 5, seed=31), np.array([4, -1, 0, 2], dtype=np.int64), np.array([3, 1, 4], dtype=np.int64)])
    add("prelu_broadcast", Fn(lambda s, x: (s.p1(x), F.prelu(x[0, 0], s.w)), p1=nn.PReLU(1, 0.3),
                              w=nn.Parameter(torch.from_numpy(rand(9, seed=32)))), [x4])
    # indexing, resizing and vision (frontend/onnx_index.c): Resize with non-integer scales
    # (the coordinates follow the scale, not the sizes' ratio), sizes, every mode; GridSample
    # (opset 16) in every mode and padding; GatherElements, ScatterElements, NonZero.  (ONNX's
    # align_corners with scales divides by in * scale - 1, PyTorch by out - 1: integer scales here.)
    img = rand(2, 3, 5, 7, seed=34)
    add("interpolate_modes", Fn(lambda s, x: (
        F.interpolate(x, scale_factor=1.7, mode="nearest"),
        F.interpolate(x, scale_factor=(0.6, 1.3), mode="bilinear", align_corners=False),
        F.interpolate(x, scale_factor=3.0, mode="bilinear", align_corners=True),
        F.interpolate(x, size=(4, 11), mode="bicubic", align_corners=False),
        F.interpolate(x, size=(8, 10), mode="bicubic", align_corners=True),
        F.interpolate(x[:, :, 0], scale_factor=2.2, mode="linear"))), [img], atol=1e-4, rtol=1e-4)
    grid = np.random.default_rng(35).uniform(-1.2, 1.2, (2, 4, 6, 2)).astype(np.float32)
    add("grid_sample_modes", Fn(lambda s, x, g: tuple(
        F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac)
        for mode in ("bilinear", "nearest", "bicubic") for pad in ("zeros", "border", "reflection")
        for ac in (False, True))), [img, grid], opset=16, atol=1e-4, rtol=1e-4)
    idx = np.random.default_rng(36).integers(0, 7, (2, 3, 5, 4)).astype(np.int64)
    add("gather_scatter_elements", Fn(lambda s, x, i: (
        torch.gather(x, 3, i), torch.zeros(2, 3, 5, 7).scatter(3, i[..., :1], x[..., :1]),
        torch.zeros(2, 3, 5, 7).scatter_add(3, i, x[..., :4]), torch.nonzero(x > 0.5))),
        [img, idx], opset=16)
    return m


def export_torch(name, mod, inputs, opset, folder, dynamic=None):
    """Exports with the inputs; a model with dynamic axes is exported with
    inputs one shorter on each dynamic axis, so the run differs."""
    path = os.path.join(folder, name + ".onnx")
    xs = tuple(torch.from_numpy(x) for x in inputs)

    def shorter(i, x):
        for ax in (dynamic or {}).get(f"in{i}", {}):
            x = x.narrow(ax, 0, x.shape[ax] - 1)
        return x

    ex = tuple(shorter(i, x) for i, x in enumerate(xs))
    torch.onnx.export(mod, ex, path, opset_version=opset, dynamic_axes=dynamic,
                      input_names=[f"in{i}" for i in range(len(xs))])
    out = mod(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    return path, [o.numpy() for o in outs]


# ───────────────────────────── graphs built by hand ─────────────────────────────

def make_model(name, nodes, inputs, outputs, opset, inits=()):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape) for n, x in inputs],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
        list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def np_conv_same(x, w, upper):
    """Conv with stride 2 and auto_pad SAME_*: pad then torch's conv."""
    k, s, n = w.shape[-1], 2, x.shape[-1]
    out = -(-n // s)
    total = max(0, (out - 1) * s + k - n)
    lo = total // 2 if upper else total - total // 2
    xp = np.pad(x, ((0, 0), (0, 0), (lo, total - lo), (lo, total - lo)))
    return F.conv2d(torch.from_numpy(xp), torch.from_numpy(w), stride=s).numpy()


def conv_transpose_cases():
    """ConvTranspose with auto_pad SAME_* (output = input * stride) and with an
    output_shape beyond the windows' reach (zeros at the end, as output_padding)."""
    out = []
    x, w = rand(1, 3, 5, 4, seed=39), rand(3, 2, 3, 3, seed=40)
    winit = helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten())
    full = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2).numpy()  # (1, 2, 11, 9)
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], auto_pad=mode, strides=[2, 2])
        th, tw = full.shape[2] - 10, full.shape[3] - 8
        bh, bw = (th // 2, tw // 2) if mode == "SAME_UPPER" else (th - th // 2, tw - tw // 2)
        out.append((f"conv_transpose_{mode.lower()}", make_model("g", [node], [("x", x)], ["y"], 13, [winit]),
                    [x], [full[:, :, bh:bh + 10, bw:bw + 8]], 1e-4, 1e-5))
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], output_shape=[16, 10])
    ref = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=(3, 2), output_padding=(1, 1)).numpy()
    out.append(("conv_transpose_output_shape", make_model("g", [node], [("x", x)], ["y"], 13, [winit]), [x],
                [ref], 1e-4, 1e-5))
    return out


def typed_model(nodes, inputs, outputs, opset, inits):
    """A graph whose inputs keep their numpy dtypes; inits: (name, array)."""
    ty = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, ty[x.dtype], x.shape) for n, x in inputs],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
        [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def quant_cases():
    """Quantization with parameters per row, column and channel (numpy's
    arithmetic: rint rounds half to even, as ONNX does)."""
    import onnx.numpy_helper  # noqa: F401
    out, g = [], np.random.default_rng(41)
    a = g.integers(0, 256, (4, 5)).astype(np.uint8)
    b = g.integers(-128, 128, (5, 3)).astype(np.int8)
    azp, bzp = np.array([3, 250, 0, 128], np.uint8), np.array([-5, 0, 7], np.int8)
    ref = (a.astype(np.int32) - azp[:, None].astype(np.int32)) @ (b.astype(np.int32) - bzp.astype(np.int32))
    node = helper.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])
    out.append(("matmul_integer_per_row_column", typed_model([node], [("a", a)], ["y"], 13,
                                                             [("b", b), ("azp", azp), ("bzp", bzp)]),
                [a], [ref], 0, 0))
    x = g.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w = g.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    bias = g.integers(-1000, 1000, (3,)).astype(np.int32)
    xs, xzp = np.float32(0.05), np.uint8(120)
    ws, wzp = np.array([0.01, 0.02, 0.005], np.float32), np.array([0, 0, 0], np.int8)
    ys, yzp = np.float32(0.3), np.uint8(100)
    acc = F.conv2d(torch.from_numpy(x.astype(np.float64) - 120), torch.from_numpy(w.astype(np.float64)),
                   padding=1).numpy() + bias[None, :, None, None]
    m = (xs * ws / ys).astype(np.float32)[None, :, None, None]
    ref = np.clip(np.rint(acc.astype(np.float32) * m) + 100, 0, 255).astype(np.uint8)
    node = helper.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "B"], ["y"],
                            pads=[1, 1, 1, 1])
    inits = [("xs", np.array(xs)), ("xzp", np.array(xzp)), ("w", w), ("ws", ws), ("wzp", wzp),
             ("ys", np.array(ys)), ("yzp", np.array(yzp)), ("B", bias)]
    out.append(("qlinear_conv_per_channel", typed_model([node], [("x", x)], ["y"], 13, inits), [x], [ref], 0, 0))
    f = rand(3, 4, seed=42) * 3
    s, z = np.array([0.02, 0.05, 0.1], np.float32), np.array([-3, 0, 9], np.int8)
    ref = np.clip(np.rint(f / s[:, None]) + z[:, None], -128, 127).astype(np.int8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0)
    out.append(("quantize_linear_int8_axis0", typed_model([node], [("x", f)], ["y"], 13, [("s", s), ("z", z)]),
                [f], [ref], 0, 0))
    return out


def lstm_seq_lens_cases():
    """LSTM with peepholes and sequence_lens (states stop at each length, later
    outputs zeros), T static (the steps written out) and symbolic (the loop),
    against numpy written from the operator's equations."""
    g, T, B, I, H = np.random.default_rng(43), 4, 3, 5, 2
    x = g.standard_normal((T, B, I)).astype(np.float32)
    w, r = [g.standard_normal((1, 4 * H, k)).astype(np.float32) * 0.5 for k in (I, H)]
    bias, p = g.standard_normal((1, 8 * H)).astype(np.float32), g.standard_normal((1, 3 * H)).astype(np.float32)
    lens = np.array([4, 1, 2], np.int32)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h, c = np.zeros((B, H)), np.zeros((B, H))
    ys = []
    for t in range(T):
        gt = x[t] @ w[0].T + h @ r[0].T + bias[0, :4 * H] + bias[0, 4 * H:]
        gi, go, gf, gc = (gt[:, k * H:(k + 1) * H] for k in range(4))
        i, f = sig(gi + p[0, :H] * c), sig(gf + p[0, 2 * H:] * c)
        c1 = f * c + i * np.tanh(gc)
        h1 = sig(go + p[0, H:2 * H] * c1) * np.tanh(c1)
        live = (t < lens)[:, None]
        ys.append(np.where(live, h1, 0))
        h, c = np.where(live, h1, h), np.where(live, c1, c)
    ref = [np.stack(ys)[:, None].astype(np.float32), h[None].astype(np.float32), c[None].astype(np.float32)]
    node = helper.make_node("LSTM", ["x", "w", "r", "b", "lens", "", "", "p"], ["y", "yh", "yc"], hidden_size=H)
    out = []
    for name, tdim in (("lstm_peepholes_seq_lens", T), ("lstm_peepholes_seq_lens_loop", "T")):
        m = typed_model([node], [("x", x), ("lens", lens)], ["y", "yh", "yc"], 14,
                        [("w", w), ("r", r), ("b", bias), ("p", p)])
        m.graph.input[0].type.tensor_type.shape.dim[0].Clear()
        if isinstance(tdim, str):
            m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = tdim
        else:
            m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = tdim
        out.append((name, m, [x, lens], ref, 1e-5, 1e-5))
    return out


def hand_cases():
    """(name, model, inputs, expected outputs, atol, rtol)."""
    out = []
    x = rand(1, 2, 8, 8, seed=30)
    w = rand(3, 2, 3, 3, seed=31)
    winit = helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten())
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        node = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad=mode, strides=[2, 2])
        out.append((f"conv_{mode.lower()}", make_model("g", [node], [("x", x)], ["y"], 13, [winit]), [x],
                    [np_conv_same(x, w, mode == "SAME_UPPER")], 1e-4, 1e-5))
    out += conv_transpose_cases() + quant_cases() + lstm_seq_lens_cases()
    a = rand(3, 4, seed=32)
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"]),
             helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT)]
    out.append(("dropout_mask", make_model("g", nodes, [("x", a)], ["y", "m"], 13), [a], [a, np.ones_like(a)], 0, 0))
    out.append(("clip_10_attrs", make_model("g", [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)],
                                            [("x", a)], ["y"], 10), [a], [np.clip(a, -0.5, 0.25)], 0, 0))
    lo = helper.make_tensor("lo", TensorProto.FLOAT, [], [0.1])
    out.append(("clip_min_only", make_model("g", [helper.make_node("Clip", ["x", "lo"], ["y"])],
                                            [("x", a)], ["y"], 13, [lo]), [a], [np.maximum(a, np.float32(0.1))], 0, 0))
    ax = helper.make_tensor("ax", TensorProto.INT64, [2], [-1, 0])
    out.append(("unsqueeze_negative", make_model("g", [helper.make_node("Unsqueeze", ["x", "ax"], ["y"])],
                                                 [("x", a)], ["y"], 13, [ax]), [a], [a[None, :, :, None]], 0, 0))
    ix = helper.make_tensor("ix", TensorProto.INT64, [2, 2], [-1, 0, 2, -3])
    out.append(("gather_negative", make_model("g", [helper.make_node("Gather", ["x", "ix"], ["y"], axis=1)],
                                              [("x", a)], ["y"], 13, [ix]), [a],
                [np.take(a, np.array([[-1, 0], [2, -3]]) % 4, axis=1)], 0, 0))
    x3 = rand(2, 3, 4, seed=33)
    e = np.exp(x3.reshape(2, 12) - x3.reshape(2, 12).max(1, keepdims=True))
    out.append(("softmax_11_flatten", make_model("g", [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
                                                 [("x", x3)], ["y"], 11), [x3],
                [(e / e.sum(1, keepdims=True)).reshape(2, 3, 4)], 1e-6, 1e-5))
    sp = helper.make_tensor("sp", TensorProto.INT64, [3], [1, 2, 1])
    out.append(("split_input", make_model("g", [helper.make_node("Split", ["x", "sp"], ["y0", "y1", "y2"], axis=2)],
                                          [("x", x3)], ["y0", "y1", "y2"], 13, [sp]), [x3],
                [x3[:, :, :1], x3[:, :, 1:3], x3[:, :, 3:]], 0, 0))
    s1, s2 = rand(9, seed=34), rand(4, 1, 9, seed=35)  # slopes along the last axis, not per channel
    nodes = [helper.make_node("PRelu", ["x", "s1"], ["y1"]), helper.make_node("PRelu", ["x", "s2"], ["y2"])]
    inits = [helper.make_tensor("s1", TensorProto.FLOAT, s1.shape, s1.flatten()),
             helper.make_tensor("s2", TensorProto.FLOAT, s2.shape, s2.flatten())]
    x4 = rand(2, 4, 9, 9, seed=36)
    out.append(("prelu_broadcast_slopes", make_model("g", nodes, [("x", x4)], ["y1", "y2"], 13, inits), [x4],
                [np.where(x4 < 0, x4 * s1, x4), np.where(x4 < 0, x4 * s2, x4)], 0, 0))
    c = helper.make_node("Constant", [], ["c"], value_ints=[4, 3])
    r = helper.make_node("Reshape", ["x", "c"], ["y"])
    out.append(("constant_ints", make_model("g", [c, r], [("x", a)], ["y"], 13), [a], [a.reshape(4, 3)], 0, 0))
    return out


# ───────────────────────────── whole networks ─────────────────────────────

def vision_model(name):
    """A torchvision network with random weights; batch norm statistics and
    the classifier are drawn so the outputs are of order 1."""
    import torchvision
    torch.manual_seed(1)
    mod = getattr(torchvision.models, name)(weights=None).eval()
    g = torch.Generator().manual_seed(2)
    for sub in mod.modules():
        if isinstance(sub, nn.BatchNorm2d):
            n = sub.num_features
            sub.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            sub.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            sub.weight.data = torch.rand(n, generator=g) + 0.5
            sub.bias.data = torch.randn(n, generator=g) * 0.1
        if isinstance(sub, nn.Linear):
            sub.weight.data = torch.randn(sub.weight.shape, generator=g) * 0.05
    return mod


# ───────────────────────────── running rly ─────────────────────────────

def run_rly(rly, case, path, folder, mode, extra=()):
    """Imports the model, runs it on the case's inputs, returns the outputs
    (or raises with rly's message)."""
    np.savez(os.path.join(folder, case.name + "_in.npz"),
             **{f"in{i}": x for i, x in enumerate(case.inputs)})
    outp = os.path.join(folder, f"{case.name}_{mode}_out.npz")
    args = ", ".join(f"%in{i}" for i in range(len(case.inputs)))
    lines = [] if extra else [f":import {path}"] + ([":type @main"] if case.types else [])
    lines += [f":load-tensor %in{i} {folder}/{case.name}_in.npz in{i}" for i in range(len(case.inputs))]
    lines += [f"let %y = @main({args});", f":save %y {outp}"]
    script = os.path.join(folder, f"{case.name}_{mode}.rly")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([rly, "--exec", mode, *extra, script], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or r.stdout.strip())
    if case.types and case.types not in r.stdout:
        sig = [ln for ln in r.stdout.splitlines() if ln.startswith("fn (")]
        raise RuntimeError(f"@main's type should contain {case.types!r}, got {sig}")
    got = np.load(outp)
    if len(case.expected) == 1:
        return [got["y"]]
    return [got[f"y_{i}"] for i in range(len(case.expected))]


def compare(case, outs):
    """Max abs error (and relative to max |ref|); a message when off."""
    worst, rel = 0.0, 0.0
    for i, (g, e) in enumerate(zip(outs, case.expected)):
        e = np.asarray(e)
        if g.shape != e.shape:
            return None, None, f"output {i}: shape {g.shape}, expected {e.shape}"
        if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            if not np.array_equal(g.astype(e.dtype), e):
                return None, None, f"output {i}: integer values differ"
            continue
        err = np.abs(g.astype(np.float64) - e.astype(np.float64))
        worst = max(worst, float(err.max(initial=0)))
        rel = max(rel, float(err.max(initial=0)) / max(float(np.abs(e).max(initial=0)), 1e-30))
        bad = err > case.atol + case.rtol * np.abs(e)
        if bad.any():
            k = np.unravel_index(np.argmax(err), err.shape)
            return worst, rel, f"output {i}: max error {err[k]:.3g} at {k} (got {g[k]}, expected {e[k]})"
    return worst, rel, None


def walk_through(rly, folder):
    """examples/README.md's session: export_resnet18.py, :import, :pass
    FuseOps, run, :save; the logits must match PyTorch's."""
    d = os.path.join(folder, "walk")
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "examples", "onnx", "export_resnet18.py")
    r = subprocess.run([sys.executable, script, d], capture_output=True, text=True)
    if r.returncode != 0:
        return False, "export_resnet18.py failed: " + r.stderr.strip()[-500:]
    session = ":import resnet18.onnx\n:pass FuseOps\n:load-tensor %x x.npy\nlet %y = @main(%x);\n:save %y y.npy\n"
    r = subprocess.run([rly], input=session, capture_output=True, text=True, cwd=d, timeout=600)
    if r.returncode != 0 or "FuseOps: 24 rewrites" not in r.stdout:
        return False, f"the session failed: {r.stderr.strip()[-500:]}"
    y, e = np.load(os.path.join(d, "y.npy")), np.load(os.path.join(d, "expected.npy"))
    err = float(np.abs(y - e).max())
    ok = err <= 1e-4 * float(np.abs(e).max()) and y.argmax() == e.argmax()
    return ok, f"max error {err:.3g}"


TRANSFORMER_LENGTHS = (1, 5, 17, 64)
TRANSFORMER_ATOL = 2e-5  # absolute, on outputs of order 1 (layer-normed)


def kernel_listings(stdout):
    """The kernels each `:kernels` listing in stdout names, one list per listing."""
    listings = []
    for line in stdout.splitlines():
        if line.startswith("kernel ") and "signature" in line:
            listings.append([])
        elif listings and line.startswith("@"):
            listings[-1].append(line.split()[0])
    return listings


def transformer(rly, folder):
    """torch.nn.TransformerEncoderLayer (d_model 32, 4 heads, feed-forward 64, batch_first,
    dropout 0, eval mode, random weights) exported once with a dynamic sequence axis, imported
    once per execution mode and run on sequences of TRANSFORMER_LENGTHS: every output must match
    PyTorch's within TRANSFORMER_ATOL, @main's type must keep the size variable `seq`, and in the
    jit mode without shape specialization (`:set specialize 0`; tests/dynamic_torch.py runs the
    specialized copies) the kernels compiled for the first length must serve every other one
    (`:kernels` lists the same kernels after each length).  Yields (ok, message) per mode."""
    torch.manual_seed(3)
    mod = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    path = os.path.join(folder, "transformer.onnx")
    # PyTorch's fused inference kernel (which has no ONNX form) is used only without autograd
    with torch.enable_grad():
        torch.onnx.export(mod, (torch.from_numpy(rand(1, 3, 32, seed=50)),), path, opset_version=13,
                          input_names=["in0"], dynamic_axes={"in0": {1: "seq"}})
    xs = {f"x{n}": rand(1, n, 32, seed=50 + n) for n in TRANSFORMER_LENGTHS}
    inputs = os.path.join(folder, "transformer_in.npz")
    np.savez(inputs, **xs)
    for mode in MODES:
        lines = [":set specialize 0", f":import {path}", ":type @main"]
        for n in TRANSFORMER_LENGTHS:
            lines += [f":load-tensor %x{n} {inputs} x{n}", f"let %y{n} = @main(%x{n});",
                      f":save %y{n} {folder}/transformer_{mode}_{n}.npy", ":kernels"]
        script = os.path.join(folder, f"transformer_{mode}.rly")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([rly, "--exec", mode, script], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            yield False, f"[{mode}] rly failed: {(r.stderr.strip() or r.stdout.strip())[-800:]}"
            continue
        want = "fn (Tensor[(1, seq, 32), float32]) -> Tensor[(1, seq, 32), float32]"
        if want not in r.stdout:
            yield False, f"[{mode}] @main's type is not {want}"
            continue
        errs = []
        for n in TRANSFORMER_LENGTHS:
            ref = mod(torch.from_numpy(xs[f"x{n}"])).numpy()
            got = np.load(os.path.join(folder, f"transformer_{mode}_{n}.npy"))
            errs.append(float(np.abs(got - ref).max()) if got.shape == ref.shape else float("inf"))
        msg = f"[{mode}] lengths {TRANSFORMER_LENGTHS}: max errors " + ", ".join(f"{e:.3g}" for e in errs)
        ok = max(errs) <= TRANSFORMER_ATOL
        if mode == "jit":
            kl = kernel_listings(r.stdout)
            same = len(kl) == len(TRANSFORMER_LENGTHS) and kl[0] and all(k == kl[0] for k in kl)
            msg += f"; {len(kl[0]) if kl else 0} kernels for every length" if same else \
                f"; the kernels changed with the length: {[len(k) for k in kl]}"
            ok = ok and bool(same)
        yield ok, msg


def main():
    args = [a for a in sys.argv[1:]]
    verbose = "-v" in args
    only = args[args.index("-k") + 1] if "-k" in args else None
    rly = os.path.abspath([a for a in args if not a.startswith("-") and a != only][0])
    start = time.time()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="onnx_torch_") as folder:
        cases = []
        for name, mod, inputs, opset, atol, rtol, dynamic, types in torch_cases():
            if only and only not in name:
                continue
            c = Case(name, atol, rtol, types)
            c.inputs = inputs
            c.path, c.expected = export_torch(name, mod, inputs, opset, folder, dynamic)
            cases.append(c)
        for name, model, inputs, expected, atol, rtol in hand_cases():
            if only and only not in name:
                continue
            c = Case(name, atol, rtol)
            c.inputs, c.expected = inputs, expected
            c.path = os.path.join(folder, name + ".onnx")
            onnx.save(model, c.path)
            cases.append(c)
        for name in ("resnet18", "mobilenet_v2"):
            if only and only not in name:
                continue
            c = Case(name, atol=1e-4, rtol=1e-4)
            c.inputs = [rand(1, 3, 224, 224, seed=40)]
            c.path, c.expected = export_torch(name, vision_model(name), c.inputs, 13, folder)
            cases.append(c)
        print(f"exported {len(cases)} models in {time.time() - start:.1f}s")
        for c in cases:
            for mode in MODES:
                try:
                    worst, rel, msg = compare(c, run_rly(rly, c, c.path, folder, mode))
                except (RuntimeError, subprocess.TimeoutExpired, KeyError, OSError) as e:
                    worst, rel, msg = None, None, f"rly failed: {e}"
                if msg:
                    failed += 1
                    print(f"FAIL {c.name} [{mode}]: {msg}")
                else:
                    passed += 1
                    print(f"ok   {c.name} [{mode}]: max error {worst:.3g} ({rel:.3g} of max |ref|)")
            if c.name == "resnet18":  # the text and the weights file, run again
                rly_text = os.path.join(folder, "resnet18.rly")
                r = subprocess.run([rly, "--import", c.path, "-o", rly_text], capture_output=True, text=True)
                ok = r.returncode == 0 and open(rly_text).read().startswith('#[version = "0.0.5"]\ndef @main(%in0: ')
                if ok:
                    try:
                        worst, rel, msg = compare(c, run_rly(rly, c, c.path, folder, "jit",
                                                             ("--params", rly_text[:-4] + ".npz", rly_text)))
                    except RuntimeError as e:
                        msg = str(e)
                else:
                    msg = f"--import -o failed: {r.stderr.strip()}"
                if msg:
                    failed += 1
                    print(f"FAIL resnet18 [--import -o, --params]: {msg}")
                else:
                    passed += 1
                    print(f"ok   resnet18 [--import -o, --params]: max error {worst:.3g}")
        if not only or only in "transformer_dynamic_seq":
            for ok, msg in transformer(rly, folder):
                passed, failed = passed + ok, failed + (not ok)
                print(("ok   " if ok else "FAIL ") + "transformer_dynamic_seq " + msg)
        if not only or only in "walk-through":
            ok, msg = walk_through(rly, folder)
            passed, failed = passed + ok, failed + (not ok)
            print(("ok   " if ok else "FAIL ") + "examples/README.md walk-through: " + msg)
    print(f"time: {time.time() - start:.1f}s")
    print(f"onnx_torch: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
