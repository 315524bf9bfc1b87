#!/usr/bin/python3
"""gen_tvm_text: ResNet-50 and ResNeXt-50 (32x4d) written as Relay text the
way TVM v0.10's `mod.astext()` prints them, their weights (random, fixed
seed) in an .npz for `:bind @main` (BindParams), and the same network with
the same weights as a PyTorch module (for ONNX Runtime and the check).

  resnet50    TVM's relay.testing.resnet (pre-activation, "v2"): a batch norm
              without scale on the data, conv0 7x7/2, bn0, relu, max pool, the
              bottleneck units (bn-relu-conv three times, the stride on the
              first 1x1, a 1x1 shortcut from the first activation when the
              shape changes), bn1, relu, global average pool, batch_flatten,
              dense + bias_add (no softmax: its outputs would hide errors);
              the ImageNet stem at every input size (TVM takes a 3x3 conv0
              at 32x32 and below)
  resnext50   ResNeXt-50 32x4d in the same dialect (conv-bn-relu, the stride on
              the grouped 3x3, a conv+bn shortcut on each stage's first unit)

The text has TVM's shape: `#[version = "0.0.5"]`, `def @main(%data: Tensor[...],
%bn_data_gamma: ..., ...) -> Tensor[(1, 1000), float32] {`, one `%N = op(...)
/* ty=... */;` per call, `nn.batch_norm` then `%N.0`, attributes as TVM prints
them (non-default only: strides, padding with four numbers, groups, channels,
kernel_size).  Every weight is a parameter named as in the .npz.
Usage: /usr/bin/python3 bench/gen_tvm_text.py resnet50|resnext50 OUT.rly
         [--units 3,4,6,3] [--size 224] [--onnx OUT.onnx]
(writes OUT.rly, OUT.npz and, with --onnx, the PyTorch module's export)"""
import argparse
import os

import numpy as np

UNITS = (3, 4, 6, 3)
EPS = 2e-5


def ty(shape):
    return f"Tensor[({', '.join(map(str, shape))}), float32]"


class Text:
    """The Relay text backend: each op appends a `%N = ...;` line, draws the
    weights it names, and tracks shapes for the type annotations."""

    def __init__(self, seed=0):
        self.lines, self.n, self.shape = [], 0, {}
        self.params, self.rng = {}, np.random.default_rng(seed)

    def let(self, expr, shape, ann=None):
        v = f"%{self.n}"
        self.n += 1
        self.lines.append(f"  {v} = {expr} /* ty={ann or ty(shape)} */;")
        self.shape[v] = shape
        return v

    def param(self, name, arr):
        self.params[name] = arr.astype(np.float32)
        return f"%{name}"

    def conv(self, x, name, ch, k, stride=1, pad=0, groups=1):
        n, c, h, w = self.shape[x]
        fan = c // groups * k * k
        wt = self.param(f"{name}_weight", self.rng.standard_normal((ch, c // groups, k, k)) / np.sqrt(fan))
        attrs = ([f"strides=[{stride}, {stride}]"] if stride != 1 else []) + \
                ([f"padding=[{pad}, {pad}, {pad}, {pad}]"] if pad else []) + \
                ([f"groups={groups}"] if groups != 1 else []) + [f"channels={ch}", f"kernel_size=[{k}, {k}]"]
        out = (n, ch, (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1)
        return self.let(f"nn.conv2d({x}, {wt}, {', '.join(attrs)})", out)

    def bn(self, x, name, scale=True):
        c, r = self.shape[x][1], self.rng
        ps = [self.param(f"{name}_gamma", r.random(c) + 0.5), self.param(f"{name}_beta", r.standard_normal(c) * 0.1),
              self.param(f"{name}_moving_mean", r.standard_normal(c) * 0.1),
              self.param(f"{name}_moving_var", r.random(c) + 0.5)]
        attrs = f"epsilon={EPS:g}f" + ("" if scale else ", scale=False")
        t = self.let(f"nn.batch_norm({x}, {', '.join(ps)}, {attrs})", self.shape[x],
                     f"({ty(self.shape[x])}, {ty((c,))}, {ty((c,))})")
        return self.let(f"{t}.0", self.shape[x])

    def relu(self, x):
        return self.let(f"nn.relu({x})", self.shape[x])

    def add(self, a, b):
        return self.let(f"add({a}, {b})", self.shape[a])

    def max_pool(self, x):
        n, c, h, w = self.shape[x]
        out = (n, c, (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1)
        return self.let(f"nn.max_pool2d({x}, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])", out)

    def head(self, x, units):
        n, c = self.shape[x][:2]
        g = self.let(f"nn.global_avg_pool2d({x})", (n, c, 1, 1))
        f = self.let(f"nn.batch_flatten({g})", (n, c))
        wt = self.param("fc1_weight", self.rng.standard_normal((units, c)) / np.sqrt(c))
        b = self.param("fc1_bias", self.rng.standard_normal(units) * 0.1)
        d = self.let(f"nn.dense({f}, {wt}, units={units})", (n, units))
        return self.let(f"nn.bias_add({d}, {b})", (n, units))


class Torch:
    """The PyTorch backend: the same calls on tensors, weights by name."""

    def __init__(self, torch, weights):
        self.F, self.w = torch.nn.functional, weights

    def conv(self, x, name, ch, k, stride=1, pad=0, groups=1):
        return self.F.conv2d(x, self.w[f"{name}_weight"], None, stride, pad, 1, groups)

    def bn(self, x, name, scale=True):
        w = self.w
        return self.F.batch_norm(x, w[f"{name}_moving_mean"], w[f"{name}_moving_var"],
                                 w[f"{name}_gamma"] if scale else None, w[f"{name}_beta"], False, 0.0, EPS)

    def relu(self, x):
        return self.F.relu(x)

    def add(self, a, b):
        return a + b

    def max_pool(self, x):
        return self.F.max_pool2d(x, 3, 2, 1)

    def head(self, x, units):
        f = self.F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.F.linear(f, self.w["fc1_weight"], self.w["fc1_bias"])


def resnet_v2_unit(B, x, ch, stride, match, name):
    """TVM's residual_unit with bottle_neck=True."""
    a1 = B.relu(B.bn(x, f"{name}_bn1"))
    c1 = B.conv(a1, f"{name}_conv1", ch // 4, 1, stride)
    c2 = B.conv(B.relu(B.bn(c1, f"{name}_bn2")), f"{name}_conv2", ch // 4, 3, 1, 1)
    c3 = B.conv(B.relu(B.bn(c2, f"{name}_bn3")), f"{name}_conv3", ch, 1)
    short = x if match else B.conv(a1, f"{name}_sc", ch, 1, stride)
    return B.add(c3, short)


def resnet50(B, x, units=UNITS, classes=1000):
    """TVM's relay.testing.resnet.resnet for 50 layers (filter_list 64..2048)."""
    filters = (64, 256, 512, 1024, 2048)
    body = B.bn(x, "bn_data", scale=False)
    body = B.max_pool(B.relu(B.bn(B.conv(body, "conv0", filters[0], 7, 2, 3), "bn0")))
    for i, n in enumerate(units):
        body = resnet_v2_unit(B, body, filters[i + 1], 1 if i == 0 else 2, False, f"stage{i + 1}_unit1")
        for j in range(n - 1):
            body = resnet_v2_unit(B, body, filters[i + 1], 1, True, f"stage{i + 1}_unit{j + 2}")
    return B.head(B.relu(B.bn(body, "bn1")), classes)


def resnext_unit(B, x, width, out, stride, match, name, groups=32):
    """A ResNeXt bottleneck: 1x1, grouped 3x3 (the stride), 1x1, each with bn."""
    h = B.relu(B.bn(B.conv(x, f"{name}_conv1", width, 1), f"{name}_bn1"))
    h = B.relu(B.bn(B.conv(h, f"{name}_conv2", width, 3, stride, 1, groups), f"{name}_bn2"))
    h = B.bn(B.conv(h, f"{name}_conv3", out, 1), f"{name}_bn3")
    short = x if match else B.bn(B.conv(x, f"{name}_sc", out, 1, stride), f"{name}_sc_bn")
    return B.relu(B.add(h, short))


def resnext50(B, x, units=UNITS, classes=1000):
    """ResNeXt-50 32x4d: stage widths 128..1024, outputs 256..2048."""
    body = B.max_pool(B.relu(B.bn(B.conv(x, "conv0", 64, 7, 2, 3), "bn0")))
    for i, n in enumerate(units):
        width, out = 128 << i, 256 << i
        for j in range(n):
            body = resnext_unit(B, body, width, out, (1 if i == 0 else 2) if j == 0 else 1, j > 0,
                                f"stage{i + 1}_unit{j + 1}")
    return B.head(body, classes)


ARCHS = {"resnet50": resnet50, "resnext50": resnext50}


def text(arch, units=UNITS, size=224, seed=0):
    """(the module's text, its weights) for arch at a 1x3xSIZExSIZE input."""
    t = Text(seed)
    t.shape["%data"] = (1, 3, size, size)
    out = ARCHS[arch](t, "%data", units)
    params = [f"%data: {ty((1, 3, size, size))}"] + [f"%{k}: {ty(a.shape)}" for k, a in t.params.items()]
    body = "\n".join(t.lines)
    src = (f'#[version = "0.0.5"]\ndef @main({", ".join(params)}) -> {ty(t.shape[out])} {{\n'
           f"{body}\n  {out}\n}}\n")
    return src, t.params


def torch_module(torch, arch, weights, units=UNITS):
    """The network as a torch.nn.Module with these weights (as buffers)."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for k, a in weights.items():
                self.register_buffer(k, torch.from_numpy(a))

        def forward(self, x):
            return ARCHS[arch](Torch(torch, dict(self.named_buffers())), x, units)

    return Net().eval()


def write(arch, path, units=UNITS, size=224, onnx=None):
    """Writes the text to path and the weights to path's .npz (returned);
    with onnx, the PyTorch module's export (opset 13) too."""
    src, weights = text(arch, units, size)
    with open(path, "w") as f:
        f.write(src)
    npz = os.path.splitext(path)[0] + ".npz"
    np.savez(npz, **weights)
    if onnx:
        import torch
        x = torch.zeros(1, 3, size, size)
        torch.onnx.export(torch_module(torch, arch, weights, units), (x,), onnx, opset_version=13,
                          input_names=["data"], output_names=["y"])
    return npz


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("arch", choices=sorted(ARCHS))
    ap.add_argument("out")
    ap.add_argument("--units", default=",".join(map(str, UNITS)))
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--onnx")
    a = ap.parse_args()
    write(a.arch, a.out, tuple(int(u) for u in a.units.split(",")), a.size, a.onnx)


if __name__ == "__main__":
    main()
