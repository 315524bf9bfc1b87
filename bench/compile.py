#!/usr/bin/python3
"""bench/compile: how long rly takes to compile a whole model cold, and that
its kernels lost no speed.

Models (torchvision, random weights, batch 1, float32, exported by
torch.onnx as bench/cnn.py does): resnet18, resnet50, densenet121, googlenet,
inception_v3 (299x299), mobilenet_v2.  Each rly build given runs, per model,
with an empty disk cache (XDG_CACHE_HOME a fresh directory) and
RLY_NUM_THREADS=T: `:import`, `:time @main(%x) -n N` (the first call
compiles every kernel; then the median per call), `:kernels --compile`
where the build has it.  The table gives per build:
  cold     the first call's wall time (compiles + one run), ms
  cpu      the process's CPU time for the whole script (all threads), s:
           what a loaded machine does not inflate
  kernels  the kernels the model ran / the distinct ones compiled (identical
           TIR compiled once; a build without `:kernels --compile`: all)
  per k    compile CPU ms per compiled kernel (`:kernels --compile`'s
           codegen + passes + emit), where the build reports it
  call     the steady-state median ms per call, wall and CPU (all threads: a
           loaded machine inflates the wall time, not this)
and the ratios new/old of cold, cpu and call CPU.  Timings are never asserted.
Usage: /usr/bin/python3 bench/compile.py [NEW_RLY] [--old OLD_RLY] [--only NAME]
       [--threads T] [--runs N]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the models and their export)

import numpy as np  # noqa: E402

ROOT = cnn.ROOT
MODELS = [("resnet18", 224), ("resnet50", 224), ("densenet121", 224), ("googlenet", 224),
          ("inception_v3", 299), ("mobilenet_v2", 224)]


def model(torch, name):
    """cnn.vision_model, with the auxiliary heads of GoogLeNet and
    Inception-v3 left out (inference graphs)."""
    if name not in ("googlenet", "inception_v3"):
        return cnn.vision_model(torch, name)
    import torchvision
    real = getattr(torchvision.models, name)

    def plain(**kw):
        return real(aux_logits=False, init_weights=False, **kw)
    setattr(torchvision.models, name, plain)
    try:
        return cnn.vision_model(torch, name)
    finally:
        setattr(torchvision.models, name, real)


def run_rly(rly, onnx, xpath, threads, runs):
    """One cold run of rly: its stdout and the CPU seconds it used."""
    script = (f":import {onnx}\n:load-tensor %x {xpath}\n:time @main(%x) -n {runs}\n"
              ":kernels --compile\n")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS=str(threads), RLY_EXEC="jit",
                   XDG_CACHE_HOME=cache)
        r0 = os.times()
        p = subprocess.run([rly, "--exec", "jit", "-"], input=script, capture_output=True,
                           text=True, env=env, timeout=3600)
        r1 = os.times()
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    if "median" not in p.stdout:
        sys.exit(f"rly failed on {onnx}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout, cpu


def ms_of(pattern, text):
    m = re.search(pattern + r" ([\d.]+) (ns|us|ms|s)\b", text)
    return float(m.group(1)) * cnn.UNIT[m.group(2)] if m else float("nan")


def parse(out, cpu):
    """cold ms, cpu s, kernels, distinct, CPU ms per compiled kernel, call ms
    (wall), call ms (CPU)."""
    cold, call = ms_of(r"first call:", out), ms_of(r"runs: min [\d.]+ \w+ +median", out)
    call_cpu = ms_of(r"cpu time: median", out)
    m = re.search(r"^(\d+) kernels: (\d+) compiled, (\d+) identical", out, re.M)
    c = re.search(r"^CPU ms: .*\(([\d.]+) a compiled kernel\)", out, re.M)
    if m:
        kernels, distinct = int(m.group(1)), int(m.group(1)) - int(m.group(3))
    else:  # a build without :kernels --compile: count the :kernels rows
        kernels = distinct = len(re.findall(r"^@\w+ +\(", out, re.M))
    per = float(c.group(1)) if c else float("nan")
    return cold, cpu, kernels, distinct, per, call, call_cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--old", help="a build to compare with (e.g. the main branch's)")
    ap.add_argument("--only", help="the models whose name contains this")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    torch = cnn.start(argparse.Namespace(cpu=False), "bench/compile.py",
                      "python3-torch, python3-torchvision")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"cpu: {cpu}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    print("command: " + " ".join([sys.executable] + sys.argv))
    builds = [("new", args.rly)] + ([("old", args.old)] if args.old else [])
    for tag, path in builds:
        print(f"{tag}: {path}")
    head = f"{'model':14s} {'build':5s} {'cold ms':>9s} {'cpu s':>7s} {'kernels':>9s} " \
           f"{'per k':>7s} {'call ms':>9s} {'call cpu':>9s}"
    ratios = f" {'cold n/o':>9s} {'cpu n/o':>8s} {'call cpu n/o':>12s}"
    print(head + (ratios if args.old else ""))
    print("-" * (len(head) + (len(ratios) if args.old else 0)))
    models = [m for m in MODELS if not args.only or args.only in m[0]]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        for name, side in models:
            x = rng.standard_normal((1, 3, side, side)).astype(np.float32)
            xpath, onnx = cnn.save_case(torch, model(torch, name), x, d, name)
            rows = [parse(*run_rly(path, onnx, xpath, args.threads, args.runs))
                    for _, path in builds]
            for (tag, _), (cold, cs, k, dk, per, call, ccpu) in zip(builds, rows):
                line = (f"{name:14s} {tag:5s} {cold:9.1f} {cs:7.2f} {f'{k}/{dk}':>9s} "
                        f"{per:7.1f} {call:9.3f} {ccpu:9.3f}")
                if args.old and tag == "new":
                    o = rows[1]
                    line += f" {cold / o[0]:9.2f} {cs / o[1]:8.2f} {ccpu / o[6]:12.2f}"
                print(line, flush=True)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"({time.time() - t0:.0f} s)")
