#!/usr/bin/python3
"""onnx_export.py — rly's ONNX export (frontend/onnx_export.c) against ONNX
Runtime.

Usage: /usr/bin/python3 tests/onnx_export.py PATH/TO/rly [-v]

Models built here (random weights, fixed seeds): an MLP with a dynamic
batch axis, a small CNN (grouped, strided, dilated, padded convolution,
batch norm, relu, max and average pooling, global pooling, flatten, dense),
two functions of the other ops with tuple results (one's parameters named
like the graph names the export makes up: c0, output), and a model exported from
PyTorch with torch.onnx (conv, batch norm, relu, maxpool, global pool,
flatten, linear), imported into rly, once as it is and once after the
inference passes and FuseOps (its groups inlined).  Each goes through `rly --emit-onnx`; the file must pass
onnx.checker.check_model, run in ONNX Runtime (node, tests/ort_run.js) to
rly's own outputs on the same inputs, and, imported back into rly, give
them again in both exec modes (|a - b| <= atol + rtol * |b|, rtol 1e-4).
Functions with a reference or a match must be refused with a located error
and no file written, as must an op with no ONNX form.  Last,
examples/train_digits.rly's trained model is exported and ONNX Runtime's
predictions on the test split must be rly's.  Prints
"onnx_export: N passed, N failed"; exits 1 on a failure and 77 (skipped)
when onnx, torch or ONNX Runtime (npm) is not to be had."""
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

import numpy as np

try:
    import onnx
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"onnx_export: skipped ({e}; install python3-torch python3-onnx)")
    sys.exit(77)

ROOT = os.environ.get("RLY_SOURCE_ROOT", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
MODES = ("jit", "interp")
RTOL, ATOL = 1e-4, 1e-5
warnings.filterwarnings("ignore")
torch.set_grad_enabled(False)


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def ort_dir():
    """node_modules/onnxruntime-node's folder (installed once by npm), or None."""
    try:
        import cnn
        return cnn.ensure_ort()
    except Exception as e:  # no npm, no registry
        print(f"onnx_export: cannot install onnxruntime-node: {e}")
        return None


# ───────────────────────────── the models ─────────────────────────────

MLP = """
def @main(%x: Tensor[(n, 16), float32], %w1: Tensor[(32, 16), float32], %b1: Tensor[(32), float32],
          %w2: Tensor[(10, 32), float32], %b2: Tensor[(10), float32]) {
  %0 = nn.dense(%x, %w1);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2);
  %4 = nn.bias_add(%3, %b2);
  nn.softmax(%4)
}
"""

CNN = """
def @main(%x: Tensor[(2, 4, 12, 12), float32], %w: Tensor[(8, 2, 3, 3), float32],
          %g: Tensor[(8), float32], %be: Tensor[(8), float32], %mu: Tensor[(8), float32],
          %var: Tensor[(8), float32], %w2: Tensor[(6, 8, 1, 1), float32], %b2: Tensor[(6), float32],
          %wd: Tensor[(5, 6), float32], %bd: Tensor[(5), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[1, 1], padding=[2, 1, 1, 2], dilation=[2, 1], groups=2);
  %1 = nn.batch_norm(%0, %g, %be, %mu, %var, epsilon=1e-3f);
  %2 = nn.relu(%1.0);
  %3 = nn.max_pool2d(%2, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True);
  %4 = nn.conv2d(%3, %w2, strides=[2, 2]);
  %5 = nn.bias_add(%4, %b2);
  %6 = nn.avg_pool2d(%5, pool_size=[2, 2], strides=[1, 1], padding=[1, 1], count_include_pad=True);
  %7 = nn.global_avg_pool2d(%6);
  %8 = nn.batch_flatten(%7);
  %9 = nn.dense(%8, %wd);
  nn.bias_add(%9, %bd)
}
"""

MISC = """
def @main(%a: Tensor[(2, 3, 4), float32], %c0: Tensor[(3, 1), float32], %output: Tensor[(2, 4, 5), float32]) {
  %0 = add(%a, %c0);
  %1 = subtract(%0, multiply(%a, %c0));
  %2 = divide(%1, add(multiply(%c0, %c0), 1f));
  %3 = maximum(%2, minimum(%a, 0.5f));
  %4 = clip(%3, a_min=-0.7f, a_max=0.9f);
  %5 = concatenate((sigmoid(%4), tanh(%a), exp(%c0 * %a)), axis=1);
  %6 = transpose(%5, axes=[0, 2, 1]);
  %7 = reshape(%6, newshape=[0, -1]);
  %8 = expand_dims(mean(%a, axis=[1], keepdims=False), axis=1);
  %9 = squeeze(%8, axis=[1]);
  %10 = sum(%a, axis=[1], exclude=True, keepdims=True);
  %11 = nn.batch_matmul(%a, %output);
  %12 = nn.log_softmax(%7, axis=1);
  %13 = cast(cast(%9, dtype="int32"), dtype="float32");
  %14 = nn.leaky_relu(%11, alpha=0.1f);
  (%12, %13, %10, %14, nn.matmul(%9, transpose(%9)))
}
"""

UNARY = """
def @main(%a: Tensor[(2, 3, 4), float32], %x: Tensor[(2, 3, 5, 5), float32]) {
  %0 = add(abs(%a), 0.5f);
  (power(%0, %a), log(%0), sqrt(%0), negative(%a), erf(%a), copy(%a), nn.global_max_pool2d(%x),
   max(%a, axis=[2]), min(%a, axis=[0, 2], keepdims=True), prod(%0), argmin(%a, axis=[1]),
   argmax(%x, axis=[-1], keepdims=True))
}
"""

REFUSED = {
    "ref": ("def @main(%x: Tensor[(3), float32]) {\n  let %r = ref(%x);\n  %r^\n}\n",
            r":2:\d+: error: ONNX export: a reference"),
    "match": ("def @main(%x: Tensor[(3), float32]) {\n"
              "  match (Some(%x)) {\n    Some(%h) => add(%h, %x),\n    None => %x,\n  }\n}\n",
              r":2:\d+: error: ONNX export: a match"),
    "op": ("def @main(%x: Tensor[(3), float32]) {\n  sin(%x)\n}\n",
           r":2:\d+: error: ONNX export: op `sin` has no ONNX translation"),
}


def unary_case():
    return "unary", UNARY, {}, [rand(2, 3, 4, seed=20), rand(2, 3, 5, 5, seed=21)]


def mlp_case():
    w = {"w1": rand(32, 16, seed=1, scale=0.3), "b1": rand(32, seed=2), "w2": rand(10, 32, seed=3, scale=0.3),
         "b2": rand(10, seed=4)}
    return "mlp", MLP, w, [rand(5, 16, seed=5)]


def cnn_case():
    w = {"w": rand(8, 2, 3, 3, seed=6, scale=0.4), "g": rand(8, seed=7) + 1, "be": rand(8, seed=8),
         "mu": rand(8, seed=9, scale=0.1), "var": np.abs(rand(8, seed=10)) + 0.5,
         "w2": rand(6, 8, 1, 1, seed=11, scale=0.4), "b2": rand(6, seed=12), "wd": rand(5, 6, seed=13),
         "bd": rand(5, seed=14)}
    return "cnn", CNN, w, [rand(2, 4, 12, 12, seed=15)]


def misc_case():
    return "misc", MISC, {}, [rand(2, 3, 4, seed=16), rand(3, 1, seed=17), rand(2, 4, 5, seed=18)]


class TorchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 12, 3, stride=2, groups=4), nn.BatchNorm2d(12), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(12, 7))

    def forward(self, x):
        return self.body(x)


class DeepNet(nn.Module):
    """16 conv-bn-relu blocks: after FuseOps, many groups called with constants."""

    def __init__(self):
        super().__init__()
        blocks = [m for _ in range(16) for m in (nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())]
        self.body = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

    def forward(self, x):
        return self.body(x)


def torch_model(folder, cls=TorchNet, name="torchnet", shape=(2, 3, 16, 16)):
    torch.manual_seed(3)
    net = cls().eval()
    g = torch.Generator().manual_seed(4)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    x = rand(*shape, seed=19)
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(net, torch.from_numpy(x), path, opset_version=13, input_names=["x"],
                      dynamic_axes={"x": {0: "batch"}})
    return path, x, net(torch.from_numpy(x)).numpy()


# ───────────────────────────── running ─────────────────────────────

def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def rly_outputs(rly, folder, tag, load, inputs, mode, nout):
    """Runs @main (after the `load` lines) on inputs with rly in mode; its outputs."""
    np.savez(os.path.join(folder, f"{tag}_in.npz"), **{f"in{i}": x for i, x in enumerate(inputs)})
    outp = os.path.join(folder, f"{tag}_{mode}_out.npz")
    args = ", ".join(f"%in{i}" for i in range(len(inputs)))
    lines = list(load) + [f":load-tensor %in{i} {folder}/{tag}_in.npz in{i}" for i in range(len(inputs))]
    lines += [f"let %y = @main({args});", f":save %y {outp}"]
    script = os.path.join(folder, f"{tag}_{mode}.rly")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = run([rly, "--exec", mode, script])
    if r.returncode != 0:
        raise RuntimeError(f"rly ({mode}): " + (r.stderr.strip() or r.stdout.strip()))
    got = np.load(outp)
    return [got["y"]] if nout == 1 else [got[f"y_{i}"] for i in range(nout)]


def ort_outputs(ort, model, folder, inputs):
    files = []
    for i, x in enumerate(inputs):
        files.append(os.path.join(folder, f"ort_in{i}.npy"))
        np.save(files[-1], x)
    r = run(["node", os.path.join(ROOT, "tests", "ort_run.js"), ort, model, folder, *files])
    if r.returncode != 0:
        raise RuntimeError("ONNX Runtime: " + r.stderr.strip())
    outs = []
    for i, o in enumerate(json.loads(r.stdout.strip().splitlines()[-1])):
        dt = {"float32": np.float32, "int64": np.int64, "int32": np.int32}[o["type"]]
        outs.append(np.fromfile(os.path.join(folder, f"out{i}.bin"), dtype=dt).reshape(o["dims"]))
    return outs


def close(what, got, want):
    if len(got) != len(want):
        return f"{what}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"{what}: output {i} has shape {g.shape}, expected {w.shape}"
        if not np.all(np.abs(g - w) <= ATOL + RTOL * np.abs(w)):
            return f"{what}: output {i} off by {np.max(np.abs(g - w)):.3g}"
    return None


def export(rly, folder, tag, source, extra=()):
    out = os.path.join(folder, f"{tag}.onnx")
    r = run([rly, *extra, "--emit-onnx", out, source])
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError("rly --emit-onnx: " + (r.stderr.strip() or r.stdout.strip()))
    if "as ONNX (opset 13)" not in r.stdout:
        raise RuntimeError(f"rly --emit-onnx said {r.stdout.strip()!r}, expected opset 13")
    onnx.checker.check_model(onnx.load(out), full_check=True)
    return out


def check_model(rly, ort, folder, tag, source, inputs, load, extra=(), want=None):
    """Exports source, runs the file in ORT and in rly; all against rly's
    own outputs (and want, a framework's, when given)."""
    model = export(rly, folder, tag, source, extra)
    nout = len(onnx.load(model).graph.output)
    ref = rly_outputs(rly, folder, tag + "_src", load, inputs, "jit", nout)
    errs = [close("rly vs PyTorch", ref, want)] if want is not None else []
    errs.append(close("ONNX Runtime vs rly", ort_outputs(ort, model, folder, inputs), ref))
    for mode in MODES:
        back = rly_outputs(rly, folder, tag + "_back", [f":import {model}"], inputs, mode, nout)
        errs.append(close(f"re-imported ({mode}) vs rly", back, ref))
    return [e for e in errs if e]


def text_case(rly, ort, folder, case):
    tag, text, weights, inputs = case
    src = os.path.join(folder, tag + ".rly")
    with open(src, "w") as f:
        f.write(text)
    load = [f":load {src}"]
    extra = ()
    if weights:
        npz = os.path.join(folder, tag + "_w.npz")
        np.savez(npz, **weights)
        load.append(f":bind @main {npz}")
        extra = ("--params", npz)
    return check_model(rly, ort, folder, tag, src, inputs, load, extra)


def digits(rly, ort, folder):
    """examples/train_digits.rly's trained MLP, its weights bound into
    @predict, exported: ONNX Runtime's predictions on the test split must be
    rly's, and score the same."""
    ex = os.path.join(ROOT, "examples")
    p, model, pred = (os.path.join(folder, n) for n in ("digits_p.npz", "digits.onnx", "digits_pred.npy"))
    r = run([rly, os.path.join(ex, "train_digits.rly"), "-e", "let %p = %trained.0;", "-e", f":save %p {p}",
             "-e", f":bind @predict {p}", "-e", f":emit @predict {model}", "-e", "let %pred = @predict(%xt);",
             "-e", f":save %pred {pred}"])
    if r.returncode != 0:
        return ["rly: " + (r.stderr.strip() or r.stdout.strip())]
    onnx.checker.check_model(onnx.load(model), full_check=True)
    test = np.load(os.path.join(ex, "digits", "test.npz"))
    got, want = ort_outputs(ort, model, folder, [test["x"]])[0], np.load(pred)
    acc = float(np.mean(got == test["y"]))
    print(f"digits: ONNX Runtime's test accuracy {acc:.4f}, rly's {float(np.mean(want == test['y'])):.4f}")
    errs = [] if np.array_equal(got, want) else [f"{int(np.sum(got != want))} predictions differ from rly's"]
    return errs + ([] if acc >= 0.97 else [f"accuracy {acc:.4f} below 0.97"])


def refusal(rly, folder, name):
    text, pattern = REFUSED[name]
    src, out = os.path.join(folder, f"bad_{name}.rly"), os.path.join(folder, f"bad_{name}.onnx")
    with open(src, "w") as f:
        f.write(text)
    r = run([rly, "--emit-onnx", out, src])
    errs = []
    if r.returncode == 0:
        errs.append("exit status 0")
    if not re.search(re.escape(src) + pattern, r.stderr):
        errs.append(f"stderr lacks {pattern!r}: {r.stderr.strip()!r}")
    if "is not written" not in r.stderr:
        errs.append("no note that nothing was written")
    if os.path.exists(out):
        errs.append(f"{out} was written")
    return errs


def main():
    rly = sys.argv[1]
    verbose = "-v" in sys.argv
    ort = ort_dir()
    if not ort:
        print("onnx_export: skipped (ONNX Runtime cannot be installed: npm install onnxruntime-node failed)")
        sys.exit(77)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as folder:
        tp, tx, tref = torch_model(folder)
        inference = ("--pass", "SimplifyInference,FoldConstant,FoldScaleAxis,FoldConstant,FuseOps")
        cases = [(c()[0], lambda c=c: text_case(rly, ort, folder, c())) for c in (mlp_case, cnn_case, misc_case, unary_case)]
        cases += [("torch", lambda: check_model(rly, ort, folder, "torch", tp, [tx], [f":import {tp}"], want=[tref])),
                  ("torch_inference_passes",
                   lambda: check_model(rly, ort, folder, "torch_inf", tp, [tx], [f":import {tp}"], inference,
                                       want=[tref]))]
        dp, dx, dref = torch_model(folder, DeepNet, "deepnet", (2, 4, 8, 8))
        cases += [("torch_deep_fused", lambda: check_model(rly, ort, folder, "deep", dp, [dx], [f":import {dp}"],
                                                           inference, want=[dref]))]
        cases += [("train_digits", lambda: digits(rly, ort, folder))]
        cases += [(f"refuse_{n}", lambda n=n: refusal(rly, folder, n)) for n in REFUSED]
        for name, fn in cases:
            try:
                errs = fn()
            except Exception as e:  # a failed step: rly's or ORT's message
                errs = [str(e)]
            if errs:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(errs))
            else:
                passed += 1
                if verbose:
                    print(f"ok   {name}")
    print(f"onnx_export: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
