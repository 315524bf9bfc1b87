#!/usr/bin/python3
"""bench/zoo: real networks, one or more per torchvision family, in rly
against ONNX Runtime and PyTorch: checked (rly's output against PyTorch's)
and timed, in one table.

Models (random weights, fixed seeds, nothing downloaded; batch 1, float32):
torchvision's classification families at 1x3x224x224 (inception_v3 at 299),
the video net r3d_18 at 1x3x8x112x112, a 6-layer nn.TransformerEncoder
(d=512, 8 heads, batch_first) exported with a dynamic sequence axis and run
at 64 and 200 tokens, a bidirectional LSTM, and ResNet-50 / ResNeXt-50 as
TVM v0.10's Relay text (bench/gen_tvm_text.py; `:load`, `:bind @main` the
weights; ORT and PyTorch run the same network built in PyTorch).  Each is
exported once to ONNX (opset 13, 17 where layer norm needs it) and cached in
bench/.zoo/ with its input (delete the folder after changing a model here).

For each model and thread count T (RLY_NUM_THREADS=T, torch.set_num_threads,
ORT's intra/inter-op threads):
  rly      `:import` (or `:load` + `:bind`), `:time @main(%x) -n N` in jit mode:
           the median, and the first call (compile; its kernel count) in an
           empty cache dir
  PyTorch  the module under torch.no_grad(), median of N calls after warm-up
  ORT      bench/ort_run.js (ONNX Runtime's CPU provider, in bench/.ort)
The table: ms per call, rly/ORT and rly/PyTorch (< 1: rly faster), xORT = ORT/rly (rly's speed
relative to ORT's), the cold
compile in s, kernels, and the max abs difference of rly's output from
PyTorch's and that over max |PyTorch's| ("rel"); the geometric means of the
ratios.  --interp also runs rly's interp mode once and prints its
differences.  Timings are never asserted.
Usage: /usr/bin/python3 bench/zoo.py [path/to/rly] [--list] [--only NAME[,NAME]]
         [--threads 1[,2]] [--interp] [--tuned MINUTES] [--profile K] [--no-time] [--cpu]
(--profile K: each row's K slowest kernels from `rly --profile` of a second
call; --no-time: the checks only)"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the shared bench helpers)
import gen_tvm_text  # noqa: E402

ROOT = cnn.ROOT
CACHE = os.path.join(ROOT, "bench", ".zoo")


class Model:
    """A network: build(torch) -> module; its input shapes (one per run
    length, all through one export), the ONNX opset and dynamic axes; text:
    a gen_tvm_text architecture the rly side loads as Relay text."""

    def __init__(self, name, family, build, shapes, opset=13, dynamic=None, text=None, units=None):
        self.name, self.family, self.build, self.shapes = name, family, build, shapes
        self.opset, self.dynamic, self.text, self.units = opset, dynamic, text, units

    def rows(self):
        """(row label, input shape) for each run length."""
        if len(self.shapes) == 1:
            return [(self.name, self.shapes[0])]
        return [(f"{self.name} s={s[self.dynamic[1]]}", s) for s in self.shapes]


def redraw_zeros(torch, mod):
    """Weights initialised to zero (ViT's head) drawn at random, so the
    output depends on the whole network and the check checks something."""
    g = torch.Generator().manual_seed(3)
    for sub in mod.modules():
        w = getattr(sub, "weight", None)
        if isinstance(sub, (torch.nn.Linear, torch.nn.Conv2d)) and not w.detach().any():
            w.data = torch.randn(w.shape, generator=g) / w[0].numel() ** 0.5
            if sub.bias is not None:
                sub.bias.data = torch.randn(sub.bias.shape, generator=g) * 0.1
    return mod


def vision(name):
    def build(torch):
        with warnings.catch_warnings():  # torchvision's notes on weight initialisation
            warnings.simplefilter("ignore")
            return redraw_zeros(torch, cnn.vision_model(torch, name))
    return build


def video(name):
    def build(torch):
        import torchvision
        torch.manual_seed(1)
        return cnn.vision_model_init(torch, getattr(torchvision.models.video, name)(weights=None).eval())
    return build


def encoder(layers=6, d=512, heads=8, ff=2048):
    def build(torch):
        torch.manual_seed(1)
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
    return build


def bilstm(inp=256, hidden=256):
    def build(torch):
        class BiLSTM(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(1)
                self.rnn = torch.nn.LSTM(inp, hidden, batch_first=True, bidirectional=True)

            def forward(self, x):
                return self.rnn(x)[0]
        return BiLSTM().eval()
    return build


def tvm_text(arch, units=gen_tvm_text.UNITS):
    def build(torch):
        _, weights = gen_tvm_text.text(arch, units)
        return gen_tvm_text.torch_module(torch, arch, weights, units)
    return build


IMG, V = [(1, 3, 224, 224)], [(1, 3, 8, 112, 112)]
MODELS = [
    Model("resnet50", "resnet", vision("resnet50"), IMG),
    Model("resnext50_32x4d", "resnext", vision("resnext50_32x4d"), IMG),
    Model("wide_resnet50_2", "wide_resnet", vision("wide_resnet50_2"), IMG),
    Model("regnet_x_400mf", "regnet", vision("regnet_x_400mf"), IMG),
    Model("regnet_y_400mf", "regnet", vision("regnet_y_400mf"), IMG),
    Model("densenet121", "densenet", vision("densenet121"), IMG),
    Model("inception_v3", "inception", vision("inception_v3"), [(1, 3, 299, 299)]),
    Model("googlenet", "googlenet", vision("googlenet"), IMG),
    Model("shufflenet_v2_x1_0", "shufflenet", vision("shufflenet_v2_x1_0"), IMG),
    Model("squeezenet1_1", "squeezenet", vision("squeezenet1_1"), IMG),
    Model("mobilenet_v3_large", "mobilenet", vision("mobilenet_v3_large"), IMG),
    Model("mnasnet1_0", "mnasnet", vision("mnasnet1_0"), IMG),
    Model("efficientnet_b0", "efficientnet", vision("efficientnet_b0"), IMG),
    Model("convnext_tiny", "convnext", vision("convnext_tiny"), IMG, opset=17),
    Model("vit_b_16", "vit", vision("vit_b_16"), IMG, opset=17),
    Model("vgg16", "vgg", vision("vgg16"), IMG),
    Model("r3d_18", "video", video("r3d_18"), V),
    Model("transformer_enc", "transformer", encoder(), [(1, 64, 512), (1, 200, 512)], opset=17,
          dynamic=("x", 1)),
    Model("bilstm", "rnn", bilstm(), [(1, 100, 256)]),
    Model("resnet50 (tvm text)", "tvm text", tvm_text("resnet50"), IMG, text="resnet50"),
    Model("resnext50 (tvm text)", "tvm text", tvm_text("resnext50"), IMG, text="resnext50"),
]


def slug(name):
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")


def export(torch, m, mod, folder):
    """The model's ONNX file (and text, weights for a text model) in folder,
    written unless there; the first shape is the one traced."""
    base = os.path.join(folder, slug(m.name))
    onnx = base + ".onnx"
    if m.text and not os.path.exists(base + ".rly"):
        gen_tvm_text.write(m.text, base + ".rly", m.units or gen_tvm_text.UNITS, m.shapes[0][-1], onnx)
    if os.path.exists(onnx):
        return onnx
    x = torch.zeros(m.shapes[0])
    dyn = {m.dynamic[0]: {m.dynamic[1]: "seq"}} if m.dynamic else None
    with warnings.catch_warnings(), torch.enable_grad():  # no fused fast paths without an ONNX form
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (x,), onnx + ".tmp", opset_version=m.opset, input_names=["x"],
                          output_names=["y"], dynamic_axes=dyn)
    os.replace(onnx + ".tmp", onnx)
    return onnx


def model_input(folder, label, shape):
    """A fixed random input for a row, saved as .npy (its path)."""
    path = os.path.join(folder, slug(label) + ".x.npy")
    if not os.path.exists(path):
        rng = np.random.default_rng(zlib.crc32(label.encode()))
        np.save(path, rng.standard_normal(shape).astype(np.float32))
    return path


def rly_script(m, onnx, xpath, ypath, runs):
    """The rly script: the model, the input, a :time (unless runs is 0), the output saved."""
    base = os.path.splitext(onnx)[0]
    s = f":load {base}.rly\n:bind @main {base}.npz\n" if m.text else f":import {onnx}\n"
    s += f":load-tensor %x {xpath}\n"
    if runs:
        s += f":time @main(%x) -n {runs}\n"
    return s + f"let %y = @main(%x);\n:save %y {ypath}\n"


def rly_env(threads, cache):
    return dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS=str(threads), XDG_CACHE_HOME=cache)


def rly_run(rly, script, mode, threads, cache, extra=(), timeout=7200):
    """Runs a script in the given exec mode; (returncode, stdout, stderr)."""
    p = subprocess.run([rly, "--exec", mode, *extra, "-"], input=script, capture_output=True, text=True,
                       env=rly_env(threads, cache), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def parse_time(out):
    """(median ms, first call ms, kernels compiled) from :time's output."""
    m = re.search(r"cpu time: median ([\d.]+) (ns|us|ms|s)\b" if cnn.CPU else
                  r"median ([\d.]+) (ns|us|ms|s)\b", out)
    f = re.search(r"first call: ([\d.]+) (ns|us|ms|s)\b(?: \(compiled (\d+) kernels?)?", out)
    med = float(m.group(1)) * cnn.UNIT[m.group(2)] if m else None
    first = float(f.group(1)) * cnn.UNIT[f.group(2)] if f else float("nan")
    kernels = int(f.group(3)) if f and f.group(3) else 0
    return med, first, kernels


def rly_output(rly, m, onnx, xpath, mode, threads, d, runs=0, extra=()):
    """rly on one input in a fresh cache dir: (output, median ms, first ms,
    kernels); raises RuntimeError with rly's messages when it fails."""
    ypath = os.path.join(d, f"y_{mode}.npy")
    cache = tempfile.mkdtemp(dir=d, prefix="cache")
    rc, out, err = rly_run(rly, rly_script(m, onnx, xpath, ypath, runs), mode, threads, cache, extra)
    shutil.rmtree(cache, ignore_errors=True)
    med, first, kernels = parse_time(out) if runs else (None, float("nan"), 0)
    if rc != 0 or not os.path.exists(ypath) or (runs and med is None):
        raise RuntimeError(f"rly ({mode}) failed:\n{out[-1500:]}\n{err[-1500:]}")
    y = np.load(ypath)
    os.unlink(ypath)
    return y, med, first, kernels


def diffs(y, ref):
    """(max abs difference, that over max |ref|)."""
    d = float(np.abs(y.reshape(ref.shape).astype(np.float64) - ref).max())
    return d, d / max(float(np.abs(ref).max()), 1e-30)


def torch_ref(torch, mod, x):
    with torch.no_grad():
        return mod(torch.from_numpy(x)).numpy().astype(np.float64)


def profile(rly, m, onnx, xpath, top, d):
    """`rly --profile` of a second call (the first compiles): its top
    kernels by time, printed under the row."""
    script = os.path.join(d, "profile.rly")
    body = rly_script(m, onnx, xpath, os.path.join(d, "y_profile.npy"), 0)
    with open(script, "w") as f:
        f.write(body.replace("let %y = @main(%x);", "let %w = @main(%x);\nlet %y = @main(%x);"))
    cache = tempfile.mkdtemp(dir=d, prefix="cache")
    p = subprocess.run([rly, "--exec", "jit", "--profile", script], capture_output=True, text=True,
                       env=rly_env(1, cache), timeout=7200)
    shutil.rmtree(cache, ignore_errors=True)
    last = p.stdout.split("profile of ")[-1].splitlines()
    rows = [l for l in last[2:] if l.startswith("@") or l.startswith("(")]
    kernels = sorted((l for l in rows if l.startswith("@")), key=lambda l: -float(l.split()[2]))
    for l in [last[1]] + kernels[:top] + [l for l in rows if l.startswith("(")]:
        print("    " + l)


def supports_tune(rly):
    p = subprocess.run([rly, "--help"], capture_output=True, text=True)
    return "--tune" in p.stdout


def tune(rly, m, onnx, xpath, minutes, log, d):
    """`rly --tune MINUTES` on a script that imports the model and calls it
    once, its records written to log."""
    script = os.path.join(d, "tune.rly")
    with open(script, "w") as f:
        f.write(rly_script(m, onnx, xpath, os.path.join(d, "y_tune.npy"), 0))
    p = subprocess.run([rly, "--tune", str(minutes), "--tuning-log", log, script], capture_output=True,
                       text=True, env=rly_env(1, d), timeout=int(minutes * 60 * 2 + 600))
    if p.returncode != 0:
        print(f"  (rly --tune failed on {m.name}: {p.stderr.strip()[-300:]})", flush=True)


def arg_parser():
    ap = argparse.ArgumentParser(description="real networks in rly against ONNX Runtime and PyTorch")
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--only", help="the models named (comma-separated; a row name or a model name)")
    ap.add_argument("--threads", default="1", help="thread counts, e.g. 1,2")
    ap.add_argument("--interp", action="store_true", help="also check rly's interp mode (slow)")
    ap.add_argument("--tuned", type=float, metavar="MINUTES", help="run `rly --tune MINUTES` on each model first")
    ap.add_argument("--cpu", action="store_true", help="compare CPU time per call, not wall time")
    ap.add_argument("--no-time", action="store_true", help="check only: one call in each mode, no timing")
    ap.add_argument("--profile", type=int, metavar="K", help="print each row's top K kernels (rly --profile)")
    ap.add_argument("--runs", type=int, help="timed calls per measurement (default: from PyTorch's time)")
    return ap


def selected(only):
    if not only:
        return MODELS
    names = [n.strip() for n in only.split(",")]
    out = [m for m in MODELS if m.name in names or slug(m.name) in names]
    missing = set(names) - {m.name for m in out} - {slug(m.name) for m in out}
    if missing:
        sys.exit(f"bench/zoo.py: unknown model(s) {', '.join(sorted(missing))} (--list lists them)")
    return out


HEAD = (f"{'model':24s} {'thr':>3s} {'rly ms':>9s} {'ORT ms':>9s} {'PT ms':>9s} {'rly/ORT':>7s} "
        f"{'rly/PT':>6s} {'xORT':>5s} {'cold s':>6s} {'kern':>4s} {'abs diff':>8s} {'rel':>8s}")


def measure(args, torch, ort_dir, m, mod, label, onnx, xpath, threads, d, extra):
    """One table row (printed); (rly/ORT, rly/PT) or None when rly failed."""
    x = np.load(xpath)
    pt, _ = cnn.torch_time(torch, mod, x, threads, 3)
    runs = args.runs or max(3, min(100, int(1500 / max(pt, 0.01))))
    pt, ref = cnn.torch_time(torch, mod, x, threads, runs)
    ref = ref.astype(np.float64)
    try:
        ot, _ = cnn.ort_time(ort_dir, onnx, xpath, threads, runs, d)
    except SystemExit as e:
        print(f"  (ORT failed on {label}: {str(e)[-300:]})")
        ot = float("nan")
    try:
        y, rt, first, kernels = rly_output(args.rly, m, onnx, xpath, "jit", threads, d, runs, extra)
    except RuntimeError as e:
        print(f"{label:24s} {threads:3d} FAILED\n{e}", flush=True)
        return None
    da, dr = diffs(y, ref)
    print(f"{label:24s} {threads:3d} {rt:9.2f} {ot:9.2f} {pt:9.2f} {rt / ot:7.2f} {rt / pt:6.2f} {ot / rt:5.2f} "
          f"{first / 1e3:6.1f} {kernels:4d} {da:8.1e} {dr:8.1e}", flush=True)
    return rt / ot, rt / pt


def check_interp(args, m, onnx, xpath, ref, label, d):
    try:
        y, *_ = rly_output(args.rly, m, onnx, xpath, "interp", 1, d)
    except RuntimeError as e:
        print(f"{label:24s} interp FAILED\n{e}", flush=True)
        return
    da, dr = diffs(y, ref)
    print(f"{label:24s} interp: abs diff {da:.1e}, rel {dr:.1e}", flush=True)


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def run_model(args, torch, ort_dir, m, threads, ratios, d):
    mod = m.build(torch)
    onnx = export(torch, m, mod, CACHE)
    extra = ()
    if args.tuned:
        log = os.path.join(CACHE, slug(m.name) + ".tuning.txt")
        tune(args.rly, m, onnx, model_input(CACHE, m.rows()[0][0], m.rows()[0][1]), args.tuned, log, d)
        extra = ("--tuning-log", log)
    for label, shape in m.rows():
        xpath = model_input(CACHE, label, shape)
        if args.no_time:
            ref = torch_ref(torch, mod, np.load(xpath))
            y, *_ = rly_output(args.rly, m, onnx, xpath, "jit", 1, d)
            print(f"{label:24s} jit: abs diff {diffs(y, ref)[0]:.1e}, rel {diffs(y, ref)[1]:.1e}", flush=True)
        else:
            for t in threads:
                r = measure(args, torch, ort_dir, m, mod, label, onnx, xpath, t, d, extra)
                if r:
                    ratios.setdefault(t, []).append(r)
        if args.profile:
            profile(args.rly, m, onnx, xpath, args.profile, d)
        if args.interp:
            check_interp(args, m, onnx, xpath, torch_ref(torch, mod, np.load(xpath)), label, d)


def main():
    args = arg_parser().parse_args()
    if args.list:
        for m in MODELS:
            print(f"{m.name:24s} {m.family:12s} {' '.join('x'.join(map(str, s)) for s in m.shapes)}")
        return
    models = selected(args.only)
    torch = cnn.start(args, "bench/zoo.py", "python3-torch, python3-torchvision, python3-onnx")
    torch.set_grad_enabled(False)
    ort_dir = None if args.no_time else cnn.ensure_ort()
    threads = [int(t) for t in args.threads.split(",")]
    if args.tuned and not supports_tune(args.rly):
        print(f"{args.rly} has no --tune: the models run untuned")
        args.tuned = None
    os.makedirs(CACHE, exist_ok=True)
    print("command: " + " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]))
    cnn.print_head(args.rly, torch, "model, mode: max abs difference from PyTorch, rel (over max |PyTorch|)"
                   if args.no_time else HEAD)
    ratios = {}
    with tempfile.TemporaryDirectory() as d:
        for m in models:
            try:
                run_model(args, torch, ort_dir, m, threads, ratios, d)
            except Exception as e:  # an export or a check that failed: the next model
                print(f"{m.name:24s} FAILED: {type(e).__name__}: {str(e)[-1500:]}", flush=True)
    for t, rs in sorted(ratios.items()):
        print(f"geometric mean at {t} thread(s), {len(rs)} rows: rly/ORT {geomean([r[0] for r in rs]):.2f}, "
              f"rly/PyTorch {geomean([r[1] for r in rs]):.2f}")


if __name__ == "__main__":
    main()
