#!/usr/bin/python3
"""sched_reduce_numpy.py — scheduled prim functions against numpy, through the CLI.

Usage: /usr/bin/python3 tests/sched_reduce_numpy.py [PATH/TO/rly] [-v]

Each case is a prim function with a schedule using the reduction and block
primitives (decompose_reduction, rfactor, blockize, tensorize), called
through `call_tir` on random tensor literals, in both execution modes
(RLY_EXEC=interp: the TIR interpreter; RLY_EXEC=jit: the LLVM JIT), and
compared with numpy's result (float64 reference, relative tolerance 1e-4
of the |x|.|w| scale: rfactor and tensorize reassociate sums).
Prints "sched_reduce: N passed, N failed" and exits non-zero on a failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tir_numpy import parse_value, tensor_lit  # noqa: E402

MM = """prim @mm(%A: Buffer[(M, K), float32], %B: Buffer[(K, N), float32],
        %C: Buffer[(M, N), float32]) {
  for %i, %j, %k in grid(M, N, K) {
    block "C" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %C[%vi, %vj] = 0f; }
      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];
    }
  }
}
"""

MM_RELU = """prim @mm_relu(%A: Buffer[(32, 32), float32], %B: Buffer[(32, 32), float32],
              %C: Buffer[(32, 32), float32]) {
  alloc %Y: Buffer[(32, 32), float32];
  for %i, %j, %k in grid(32, 32, 32) {
    block "Y" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {
      init { %Y[%vi, %vj] = 0f; }
      %Y[%vi, %vj] = %Y[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj];
    }
  }
  for %i, %j in grid(32, 32) {
    block "C" (spatial %vi = %i, spatial %vj = %j) {
      %C[%vi, %vj] = max(%Y[%vi, %vj], 0f);
    }
  }
}
schedule @mm_relu {
  let (%i, %j, %k) = get_loops(get_block("Y"));
  let (%j0, %j1) = split(%j, factors=[?, 4]);
  reorder(%j0, %k, %j1);
  let %init = decompose_reduction(get_block("Y"), %k);
  vectorize(%j1);
  let (%ii, %jj, %jinit) = get_loops(%init);
  vectorize(%jinit);
}
"""

ROWRED = """prim @rowred(%A: Buffer[(8, 16, 16), float32], %B: Buffer[(8), float32]) {
  for %ii, %i, %j in grid(8, 16, 16) {
    block "B" (spatial %vii = %ii, reduce %vi = %i, reduce %vj = %j) {
      init { %B[%vii] = INIT; }
      %B[%vii] = COMBINE;
    }
  }
}
schedule @rowred {
  let (%ii, %i, %j) = get_loops(get_block("B"));
  let (%j0, %j1) = split(%j, factors=[4, 4]);
  let %rf = rfactor(%j1, AXIS);
  let (%a, %b, %c, %d) = get_loops(%rf);
  reorder(%d, %a);
  parallel(%d);
}
"""


def mm(m, n, k, schedule):
    text = MM.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
    return text + "schedule @mm {\n" + schedule + "}\n"


TILE = """  let (%i, %j, %k) = get_loops(get_block("C"));
  let (%i0, %i1) = split(%i, factors=[?, R]);
  let (%j0, %j1) = split(%j, factors=[?, W]);
  let (%k0, %k1) = split(%k, factors=[?, D]);
  reorder(%i0, %j0, %k0, %i1, %j1, %k1);
  decompose_reduction(get_block("C"), %k0);
"""


def tiled(r, w, d, tail):
    return TILE.replace("R", str(r)).replace("W", str(w)).replace("D", str(d)) + tail


def cases(rng):
    def mat(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    a, b = mat(32, 32), mat(32, 32)
    yield "decompose_reduction mm_relu", MM_RELU, "mm_relu", [a, b], (32, 32), \
        np.maximum(a.astype(np.float64) @ b, 0), np.abs(a) @ np.abs(b)
    a, b = mat(16, 48), mat(48, 64)
    yield "tensorize mma_4x16x16_f32", mm(16, 64, 48, tiled(4, 16, 16, """
  tensorize(%i1, "mma_4x16x16_f32");
""")), "mm", [a, b], (16, 64), a.astype(np.float64) @ b, np.abs(a) @ np.abs(b)
    a, b = mat(16, 32), mat(32, 64)
    yield "tensorize mma_8x32x16_f32 on a block", mm(16, 64, 32, tiled(8, 32, 16, """
  let %o = blockize(%i1);
  tensorize(%o, "mma_8x32x16_f32");
""")), "mm", [a, b], (16, 64), a.astype(np.float64) @ b, np.abs(a) @ np.abs(b)
    a, b = mat(8, 32), mat(32, 32)
    yield "tensorize with the init in the outer block", mm(8, 32, 32, """
  let (%i, %j, %k) = get_loops(get_block("C"));
  let (%i0, %i1) = split(%i, factors=[?, 4]);
  let (%j0, %j1) = split(%j, factors=[?, 16]);
  let (%k0, %k1) = split(%k, factors=[?, 16]);
  reorder(%i0, %j0, %k0, %i1, %j1, %k1);
  tensorize(%i1, "mma_4x16x16_f32");
"""), "mm", [a, b], (8, 32), a.astype(np.float64) @ b, np.abs(a) @ np.abs(b)
    a, b = mat(4, 32), mat(32, 8)
    yield "tensorize dot_product_16_f32", mm(4, 8, 32, tiled(1, 1, 16, """
  tensorize(%k1, "dot_product_16_f32");
""")), "mm", [a, b], (4, 8), a.astype(np.float64) @ b, np.abs(a) @ np.abs(b)
    a, b = mat(16, 32), mat(32, 32)
    yield "blockize with the init", mm(16, 32, 32, """
  let (%i, %j, %k) = get_loops(get_block("C"));
  let (%k0, %k1) = split(%k, factors=[?, 8]);
  let (%j0, %j1) = split(%j, factors=[?, 8]);
  reorder(%j0, %k0, %j1, %k1);
  blockize(%j1);
"""), "mm", [a, b], (16, 32), a.astype(np.float64) @ b, np.abs(a) @ np.abs(b)
    x = mat(8, 16, 16)
    for name, init, comb, ref in [("sum", "0f", "%B[%vii] + %A[%vii, %vi, %vj]", np.sum),
                                  ("max", "-inff", "max(%B[%vii], %A[%vii, %vi, %vj])", np.max),
                                  ("min", "inff", "min(%A[%vii, %vi, %vj], %B[%vii])", np.min)]:
        for axis in (0, -1):
            text = ROWRED.replace("INIT", init).replace("COMBINE", comb).replace("AXIS", str(axis))
            scale = np.abs(x).sum(axis=(1, 2)) if name == "sum" else np.abs(ref(x, axis=(1, 2)))
            yield f"rfactor {name} axis {axis}", text, "rowred", [x], (8,), \
                ref(x.astype(np.float64), axis=(1, 2)), scale


def script(text, callee, inputs, shape):
    ins = "".join(tensor_lit(v) + ", " for v in inputs)
    return (":set print-limit 100000000\n" + text + "\n" +
            f'call_tir(@{callee}, ({ins}), shape={list(shape)}, dtype="float32")\n')


def run(rly, path, mode, tmp):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), RLY_EXEC=mode,
               RLY_VERIFY_SCHEDULES="1")
    p = subprocess.run([rly, path], capture_output=True, text=True, timeout=300, env=env)
    if p.returncode != 0 or "error" in p.stderr:
        return None, f"rly failed ({p.returncode}):\n{p.stderr}{p.stdout[-2000:]}"
    lines = p.stdout.splitlines()
    start = max((i + 1 for i, l in enumerate(lines) if l.startswith("defined ")), default=0)
    text = "\n".join(l for l in lines[start:] if not l.startswith("print-limit"))
    text = "\n".join(l for l in text.splitlines() if l.startswith(("[", " ")) or l[:1].isdigit()
                     or l.startswith("-"))
    try:
        return np.array(parse_value(text), dtype=np.float64), None
    except Exception as e:  # a value that does not parse is a failure too
        return None, f"cannot read the output ({e}):\n{p.stdout[-2000:]}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    rly = args[0] if args else os.environ.get("RLY", "rly")
    rng = np.random.default_rng(7)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, text, callee, inputs, shape, expect, scale) in enumerate(cases(rng)):
            path = os.path.join(tmp, f"case{i}.rly")
            with open(path, "w") as f:
                f.write(script(text, callee, inputs, shape))
            for mode in ("interp", "jit"):
                got, err = run(rly, path, mode, tmp)
                if err is None and got.shape != expect.shape:
                    err = f"shape {got.shape}, expected {expect.shape}"
                if err is None:
                    bad = np.abs(got - expect) > 1e-4 * scale + 1e-6
                    if bad.any():
                        idx = tuple(np.argwhere(bad)[0])
                        err = f"at {idx}: got {got[idx]!r}, expected {expect[idx]!r}"
                if err:
                    failed += 1
                    print(f"FAIL {name} [{mode}]: {err}")
                else:
                    passed += 1
                    if verbose:
                        print(f"ok   {name} [{mode}]")
    print(f"sched_reduce: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
