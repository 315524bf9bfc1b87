#!/usr/bin/python3
"""bench/compile_passes: what an LLVM pass pipeline saves and changes,
against LLVM's default<O2>, on real networks' kernels.

For each model (the ONNX files bench/zoo.py caches in bench/.zoo; run
zoo.py once first) rly runs twice with empty disk caches, once as it is and
once with RLY_JIT_PASSES=PIPELINE: `:import`, one call (compiles every
kernel), `:kernels --compile`, `:dump asm @main`.  The table gives per run
the CPU ms of the passes and of emission per compiled kernel (what
`:kernels --compile` reports) and how many kernels' machine code is byte for
byte that of default<O2> (those cannot be slower or compute other values;
the others need bench/zoo.py --cpu to judge).  Timings are never asserted.
Usage: /usr/bin/python3 bench/compile_passes.py PIPELINE [RLY] [--only NAME[,NAME]]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "bench", ".zoo")
MODELS = ["densenet121", "resnet50", "mobilenet_v3_large", "inception_v3"]


def run(rly, name, pipeline):
    """rly's stdout for the model, with RLY_JIT_PASSES=pipeline if given."""
    script = (f":import {ZOO}/{name}.onnx\n:load-tensor %x {ZOO}/{name}.x.npy\n"
              ":time @main(%x) -n 1\n:kernels --compile\n:dump asm @main\n")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS="1", XDG_CACHE_HOME=cache)
        env.pop("RLY_JIT_PASSES", None)
        if pipeline:
            env["RLY_JIT_PASSES"] = pipeline
        p = subprocess.run([rly, "--exec", "jit", "-"], input=script, capture_output=True,
                           text=True, env=env, timeout=3600)
    if "CPU ms:" not in p.stdout:
        sys.exit(f"rly failed on {name}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout


def per_kernel(out):
    """(passes, emit) CPU ms per compiled kernel from `:kernels --compile`."""
    m = re.search(r"^(\d+) kernels: (\d+) compiled", out, re.M)
    c = re.search(r"^CPU ms: codegen [\d.]+, passes ([\d.]+), emit ([\d.]+)", out, re.M)
    n = max(int(m.group(2)), 1)
    return float(c.group(1)) / n, float(c.group(2)) / n


def kernels_asm(out):
    """The assembly of each kernel, by its name (`.file "name"` opens one)."""
    asm = out[out.find("\t.file"):]
    parts = re.split(r'^\t\.file\t"([^"]+)"\n', asm, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pipeline", help="LLVM pass pipeline text, e.g. 'default<O1>'")
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args()
    models = args.only.split(",") if args.only else MODELS
    print(f"pipeline: {args.pipeline}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'model':20s} {'kernels':>8s} {'O2 passes':>10s} {'O2 emit':>8s} "
          f"{'passes':>7s} {'emit':>7s} {'same code':>10s}")
    for name in models:
        if not os.path.exists(f"{ZOO}/{name}.onnx"):
            print(f"{name:20s} (not in bench/.zoo: run bench/zoo.py --only {name} first)")
            continue
        base, new = run(args.rly, name, None), run(args.rly, name, args.pipeline)
        (bp, be), (np_, ne) = per_kernel(base), per_kernel(new)
        a, b = kernels_asm(base), kernels_asm(new)
        same = sum(1 for k in a if b.get(k) == a[k])
        print(f"{name:20s} {len(a):8d} {bp:10.1f} {be:8.1f} {np_:7.1f} {ne:7.1f} "
              f"{same:5d}/{len(a):<4d}", flush=True)


if __name__ == "__main__":
    main()
