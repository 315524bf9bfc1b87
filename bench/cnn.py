#!/usr/bin/python3
"""bench/cnn: CNNs in rly against PyTorch and ONNX Runtime, in one run.

Models (random weights, fixed seeds, nothing downloaded; batch 1, float32):
  resnet18, mobilenet_v2, resnext50_32x4d, regnet_x_400mf, shufflenet_v2_x1_0
                           torchvision's networks on a 1x3x224x224 input
  conv <shape>             each distinct conv2d of ResNet-18 alone (no bias,
                           as in the network), on its input shape there

Each model is exported to ONNX by torch.onnx.export (opset 13) and run by:
  rly          `:import`, then `:time @main(%x) -n N` (the median per call,
               after a first call that compiles), jit mode, RLY_NUM_THREADS=T
  PyTorch      the module itself under torch.no_grad(), torch.set_num_threads(T),
               median of N calls after warm-up
  ORT          ONNX Runtime's CPU provider through onnxruntime-node
               (bench/ort_run.js: intra/inter-op threads T, median of N runs);
               installed into bench/.ort with `npm install --ignore-scripts
               onnxruntime-node` when missing
at T = 1 and 2 threads.  The table gives the medians in ms, the ratios
rly/ORT and rly/PyTorch (time over time: below 1 means rly is faster), and the
max abs difference of rly's and ORT's outputs from PyTorch's.  Timings are
never asserted.
Usage: /usr/bin/python3 bench/cnn.py [path/to/rly] [--only NAME] [--threads 1,2] [--cpu]
(--cpu: CPU time per call instead of wall time, for a busy machine; compare at 1 thread)"""
import argparse
import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_DIR = os.path.join(ROOT, "bench", ".ort")
UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def ensure_ort():
    """The folder holding node_modules/onnxruntime-node (npm installs it once)."""
    if os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        return ORT_DIR
    os.makedirs(ORT_DIR, exist_ok=True)
    print(f"installing onnxruntime-node into {ORT_DIR} ...", flush=True)
    subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                    "--prefix", ORT_DIR, "onnxruntime-node"], check=True)
    return ORT_DIR


def vision_model(torch, name):
    """A torchvision network with random weights; batch norm statistics drawn
    so activations stay of order 1 through the depth."""
    import torchvision
    torch.manual_seed(1)
    return vision_model_init(torch, getattr(torchvision.models, name)(weights=None).eval())


def vision_model_init(torch, mod):
    """mod with its batch norm statistics drawn (fixed seed)."""
    g = torch.Generator().manual_seed(2)
    for sub in mod.modules():
        if isinstance(sub, torch.nn.modules.batchnorm._BatchNorm):  # 1-, 2- and 3-D
            n = sub.num_features
            sub.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            sub.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            sub.weight.data = torch.rand(n, generator=g) + 0.5
            sub.bias.data = torch.randn(n, generator=g) * 0.1
    return mod


def resnet_convs(torch, resnet):
    """Each distinct conv2d of the network: (name, module, input shape)."""
    seen, convs = set(), []

    def hook(mod, args, _out):
        shape = tuple(args[0].shape)
        key = (mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, shape)
        if key in seen:
            return
        seen.add(key)
        name = (f"conv {mod.in_channels}->{mod.out_channels} k{mod.kernel_size[0]} "
                f"s{mod.stride[0]} @{shape[2]}")
        torch.manual_seed(len(convs))
        one = torch.nn.Conv2d(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride,
                              mod.padding, bias=False).eval()
        convs.append((name, one, shape))

    hs = [m.register_forward_hook(hook) for m in resnet.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        resnet(torch.zeros(1, 3, 224, 224))
    for h in hs:
        h.remove()
    return convs


def export(torch, mod, x, path, names=("x", "y")):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (torch.from_numpy(x),), path, opset_version=13,
                          input_names=[names[0]], output_names=[names[1]])


def save_case(torch, mod, x, d, name="model"):
    """x saved as d/x.npy and mod exported on it as d/NAME.onnx: (x path, onnx path)."""
    xpath, onnx = os.path.join(d, "x.npy"), os.path.join(d, f"{name}.onnx")
    np.save(xpath, x)
    export(torch, mod, x, onnx)
    return xpath, onnx


# --cpu: every timer reports the process's CPU time per call (all threads)
# instead of the wall time: on a machine other programs keep busy, the one-
# thread CPU times still compare (two threads' CPU time sums both threads).
CPU = False


def torch_run(torch, mod, x, threads, runs):
    torch.set_num_threads(threads)
    t = torch.from_numpy(x)
    with torch.no_grad():
        for _ in range(3):
            y = mod(t)
        ts, cs = [], []
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            y = mod(t)
            ts.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
    return statistics.median(cs if CPU else ts) * 1e3, y.numpy()


def torch_time(torch, mod, x, threads, runs):
    """PyTorch's median ms per call and its output, timed in a forked child:
    PyTorch's OpenMP threads keep spinning on a core long after a call
    returns (they made rly's 2-thread runs 40% slower), and they end with
    the child.  The parent keeps PyTorch to one thread (torch_main_setup)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = torch_run(torch, mod, x, threads, runs)
        except BaseException as e:  # handed to the parent
            res = e
        with os.fdopen(w, "wb") as f:
            pickle.dump(res, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        res = pickle.load(f)
    os.waitpid(pid, 0)
    if isinstance(res, BaseException):
        raise res
    return res


def torch_main_setup(torch):
    """No OpenMP threads in the bench's own process (see torch_time)."""
    torch.set_num_threads(1)


def start(args, who, packages="python3-torch"):
    """A bench's start: --cpu taken, PyTorch imported (the module returned)
    and kept to one thread in this process."""
    global CPU
    CPU = args.cpu
    try:
        import torch
    except ImportError:
        sys.exit(f"{who} needs PyTorch ({packages})")
    torch_main_setup(torch)
    return torch


def print_head(rly, torch, head):
    """The machine, the builds and the table's head."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"cpu: {cpu}, {os.cpu_count()} cores; rly {rly}; torch {torch.__version__}")
    print(f"times: median {'CPU ' if CPU else ''}ms per call; ratios: rly time / other time "
          "(< 1: rly faster); diff: max |out - PyTorch|")
    print(head)
    print("-" * len(head))


def ort_time(ort_dir, onnx, xpath, threads, runs, d):
    out = os.path.join(d, f"ort_{threads}.bin")
    p = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_run.js"), ort_dir, onnx, xpath,
                        str(threads), str(runs), out], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"ort_run.js failed:\n{p.stderr}")
    r = json.loads(p.stdout)
    ms = r["median_cpu_ms"] if CPU else r["median_ms"]
    return ms, np.fromfile(out, dtype=np.float32).reshape(r["output_shape"])


def rly_time(rly, onnx, xpath, threads, runs, d, first=None):
    """rly's median ms per call and its output; with first (a list), the
    first call's ms is appended to it."""
    ypath = os.path.join(d, f"rly_{threads}.npy")
    script = (f":import {onnx}\n:load-tensor %x {xpath}\n:time @main(%x) -n {runs}\n"
              f"let %y = @main(%x);\n:save %y {ypath}\n")
    env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS=str(threads), RLY_EXEC="jit")
    p = subprocess.run([rly, "--exec", "jit", "-"], input=script, capture_output=True, text=True,
                       env=env, timeout=3600)
    m = re.search(r"cpu time: median ([\d.]+) (ns|us|ms|s)\b" if CPU else
                  r"median ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"rly failed on {onnx}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    f = re.search(r"first call: ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    if first is not None:
        first.append(float(f.group(1)) * UNIT[f.group(2)] if f else float("nan"))
    return float(m.group(1)) * UNIT[m.group(2)], np.load(ypath)


def runs_for(ref_ms):
    return max(5, min(200, int(2000 / max(ref_ms, 0.01))))


def measure(rly, torch, mod, x, onnx, xpath, threads, d, ort_dir):
    """One model at one thread count: rly's, ORT's and PyTorch's medians
    (ms), rly's first call (ms), and the max abs differences of rly's and
    ORT's outputs from PyTorch's."""
    pt, ref = torch_time(torch, mod, x, threads, 5)
    runs = runs_for(pt)
    pt, ref = torch_time(torch, mod, x, threads, runs)
    ot, oy = ort_time(ort_dir, onnx, xpath, threads, runs, d)
    first = []
    rt, ry = rly_time(rly, onnx, xpath, threads, runs, d, first)
    dr = float(np.abs(ry.reshape(ref.shape) - ref).max())
    do = float(np.abs(oy.reshape(ref.shape) - ref).max())
    return rt, first[0], ot, pt, dr, do


def arg_parser():
    """The options every model bench takes: rly's path, --only, --threads, --cpu."""
    ap = argparse.ArgumentParser()
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--only", help="run the models whose name contains this")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cpu", action="store_true", help="compare CPU time per call, not wall time")
    return ap


def main():
    args = arg_parser().parse_args()
    torch = start(args, "bench/cnn.py", "python3-torch, python3-torchvision")
    ort_dir = ensure_ort()
    threads = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(0)
    resnet = vision_model(torch, "resnet18")
    models = [("resnet18", resnet, (1, 3, 224, 224)),
              ("mobilenet_v2", vision_model(torch, "mobilenet_v2"), (1, 3, 224, 224))]
    models += [(n, vision_model(torch, n), (1, 3, 224, 224))
               for n in ("resnext50_32x4d", "regnet_x_400mf", "shufflenet_v2_x1_0")]
    models += resnet_convs(torch, resnet)
    if args.only:
        models = [m for m in models if args.only in m[0]]
    print_head(args.rly, torch, f"{'model':28s} {'thr':>3s} {'rly':>9s} {'ORT':>9s} {'PyTorch':>9s} "
               f"{'rly/ORT':>8s} {'rly/PT':>7s} {'diff rly':>9s} {'diff ORT':>9s}")
    with tempfile.TemporaryDirectory() as d:
        for name, mod, shape in models:
            x = rng.standard_normal(shape).astype(np.float32)
            xpath, onnx = save_case(torch, mod, x, d)
            for t in threads:
                rt, _, ot, pt, dr, do = measure(args.rly, torch, mod, x, onnx, xpath, t, d, ort_dir)
                print(f"{name:28s} {t:3d} {rt:9.3f} {ot:9.3f} {pt:9.3f} {rt / ot:8.2f} "
                      f"{rt / pt:7.2f} {dr:9.2e} {do:9.2e}", flush=True)


if __name__ == "__main__":
    main()
