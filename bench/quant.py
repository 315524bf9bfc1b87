#!/usr/bin/python3
"""bench/quant: int8 products against their float32 originals, in one rly run.

(a) qnn.dense 256x1024 by 1024x1024, uint8 x int8 -> int32, against nn.dense
    of the same shapes in float32;
(b) a 3x3 qnn.conv2d 64 -> 64 channels on 56x56 (padding 1), uint8 x int8
    -> int32, against nn.conv2d of the same shapes in float32.
Each is `:time`d in the jit mode (compiled, all threads), min and median of
RUNS runs and the median CPU time per call; ratios > 1 mean the int8 kernel
is faster.  Rates count 2 ops
per multiply-add (int8 ops and float32 flops alike); the limit per core is
the CPU's: on Zen 5, 64 float32 flop/cycle, 256 int8 ops/cycle with
AVX512-VNNI (vpdpbusd: 4x float32's multiply-add rate).  Prints the CPU's
model and the vector features the kernels select on.
Usage: /usr/bin/python3 bench/quant.py [path/to/rly]"""
import os
import re
import subprocess
import sys
import tempfile

RLY = sys.argv[1] if len(sys.argv) > 1 else "build/rly"
RUNS = 30

CASES = [  # (name, multiply-adds, int8 def, float32 def, rly inputs)
    ("dense 256x1024 by 1024x1024", 256 * 1024 * 1024,
     """def @q(%x: Tensor[(256, 1024), uint8], %w: Tensor[(1024, 1024), int8]) {
  qnn.dense(%x, %w, 128, 3, 0.5f, 0.5f, units=1024, out_dtype="int32")
}""",
     """def @f(%x: Tensor[(256, 1024), float32], %w: Tensor[(1024, 1024), float32]) {
  nn.dense(%x, %w, units=1024)
}""", ([256, 1024], [1024, 1024])),
    ("conv2d 3x3 64->64 on 56x56", 56 * 56 * 64 * 64 * 9,
     """def @q(%x: Tensor[(1, 64, 56, 56), uint8], %w: Tensor[(64, 64, 3, 3), int8]) {
  qnn.conv2d(%x, %w, 128, 3, 0.5f, 0.5f, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3],
             out_dtype="int32")
}""",
     """def @f(%x: Tensor[(1, 64, 56, 56), float32], %w: Tensor[(64, 64, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3])
}""", ([1, 64, 56, 56], [64, 64, 3, 3])),
]


def script():
    out = []
    for i, (_, _, qdef, fdef, (xs, ws)) in enumerate(CASES):
        out.append(qdef.replace("@q", f"@q{i}") + "\n" + fdef.replace("@f", f"@f{i}") + "\n")
        out.append(f"let %xf{i} = random.uniform(random.key(1), shape={xs});\n"
                   f"let %wf{i} = random.uniform(random.key(2), shape={ws}, low=-1f);\n"
                   f"let %xq{i} = cast(%xf{i} * 255f, dtype=\"uint8\");\n"
                   f"let %wq{i} = cast(%wf{i} * 127f, dtype=\"int8\");\n"
                   f":time @q{i}(%xq{i}, %wq{i}) -n {RUNS}\n"
                   f":time @f{i}(%xf{i}, %wf{i}) -n {RUNS}\n")
    return "".join(out)


def to_ms(v, unit):
    return float(v) * {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}[unit]


def run():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "quant.rly")
        with open(path, "w") as f:
            f.write(script())
        env = dict(os.environ, RLY_EXEC="jit", NO_COLOR="1")
        p = subprocess.run([RLY, path], capture_output=True, text=True, env=env, timeout=1200)
    times = re.findall(r"runs?: min ([0-9.]+) (s|ms|us|ns)  median ([0-9.]+) (s|ms|us|ns)", p.stdout)
    cpu = re.findall(r"cpu time: median ([0-9.]+) (s|ms|us|ns) per call", p.stdout)
    if len(times) != 2 * len(CASES) or len(cpu) != len(times):
        sys.exit(f"no :time output:\n{p.stdout}\n{p.stderr}")
    return [(to_ms(a, u), to_ms(b, v), to_ms(*c)) for (a, u, b, v), c in zip(times, cpu)]


def cpu():
    model, flags = "?", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    used = [x for x in ("avx2", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16") if x in flags]
    return model, used


def main():
    model, used = cpu()
    print(f"CPU: {model}, {os.cpu_count()} threads; features: {' '.join(used)}")
    print("int8 products: vpdpbusd (AVX512-VNNI)" if "avx512_vnni" in used and
          os.environ.get("RLY_JIT_VNNI") != "0" else "int8 products: without VNNI")
    t = run()
    print(f"{'case':28} {'int8 min/median ms':>19} {'f32 min/median ms':>19} {'int8 GOP/s':>10} "
          f"{'f32 GFLOP/s':>11} {'ratio min':>9} {'ratio cpu':>9}")
    for i, (name, macs, *_) in enumerate(CASES):
        (qmin, qmed, qcpu), (fmin, fmed, fcpu) = t[2 * i], t[2 * i + 1]
        print(f"{name:28} {qmin:8.3f} /{qmed:8.3f} {fmin:8.3f} /{fmed:8.3f} "
              f"{2 * macs / qmin / 1e6:10.1f} {2 * macs / fmin / 1e6:11.1f} {fmin / qmin:8.2f}x {fcpu / qcpu:8.2f}x")
    print("ratio min: of the fastest runs; ratio cpu: of the median CPU time per call (all threads), "
          "less sensitive to other load on the machine")


if __name__ == "__main__":
    main()
