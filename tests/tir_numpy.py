#!/usr/bin/python3
"""tir_numpy.py — the TIR reference interpreter against numpy, through the CLI.

Usage: /usr/bin/python3 tests/tir_numpy.py [PATH/TO/rly] [-v] [--seed N]
       (default: $RLY, else `rly` on PATH)

Each case is a prim function, random inputs and a numpy reference.  The
case becomes a script (the prim, then one `call_tir` on tensor literals),
runs with `rly`, and the printed value is compared:

  exact   same values bit for bit (the reference emulates the prim's float32
          operation order: a sequential sum adds one rounded product at a
          time, which numpy float32 arrays do exactly when looped over k)
  tol     |got - ref| <= rtol * scale + atol, where scale is |ref| or a
          bound of the exact computation's magnitude (|x|.|w| for products);
          references in float64 (transcendentals: libm and numpy may differ
          in the last place)

Cases: the seed 002 lecture's linear0, relu0 and linear1 at full size, the
whole MLP, matmul and transpose with size variables, a softmax with alloc
buffers and reductions, a padded 1-D convolution (select), integer
division and casts, reinterpret (bit casts), float64 intrinsics, several outputs, loops from a
begin (a stencil over the interior, a reduction over the second half).
Every case runs in three modes: `interp` (RLY_EXEC=interp, the TIR
interpreter), `jit` (the LLVM JIT with contraction off, RLY_JIT_CONTRACT=0:
held to the same exact/tol rule) and `jit-fma` (the JIT's default, a*b+c may
become one fma: exact cases are compared with rtol 1e-5 of the |x|.|w|
scale instead, about k ulps for k-term sums).  The JIT's disk cache goes to
a temporary XDG_CACHE_HOME.
Prints "tir: N passed, N failed" and exits non-zero on any failure.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SUFFIX = {"float32": "f", "float64": "f64", "float16": "f16", "int32": "", "int64": "i64",
          "int8": "i8", "uint8": "u8", "bool": ""}


# ───────────────────────────── literals ─────────────────────────────

def scalar_lit(x, dt):
    if dt == "bool":
        return "True" if x else "False"
    if dt.startswith("float"):
        v = float(x)
        if np.isnan(v):
            return "nan" + SUFFIX[dt]
        if np.isinf(v):
            return ("-inf" if v < 0 else "inf") + SUFFIX[dt]
        return repr(v) + SUFFIX[dt]  # the exact value: it reads back to the same element
    return str(int(x)) + SUFFIX[dt]


def tensor_lit(a):
    dt = a.dtype.name
    if a.ndim == 0:
        return scalar_lit(a[()], dt)
    return "[" + ", ".join(tensor_lit(x) for x in a) + "]"


TOKEN = re.compile(r"(-?)(inf|nan|\d+(?:\.\d*)?(?:e[-+]?\d+)?)"
                   r"(f16|f64|f|i64|i32|i16|i8|u8|u16|u32|u64)?|True|False")


def parse_value(text):
    """A printed value (tensor literals, tuples) as nested Python lists."""
    def repl(m):
        if m.group(0) in ("True", "False"):
            return m.group(0)
        sign, num = m.group(1), m.group(2)
        if num in ("inf", "nan"):
            return f"float('{sign}{num}')"
        return sign + num
    return eval(TOKEN.sub(repl, text), {"__builtins__": {"float": float}})


# ───────────────────────────── cases ─────────────────────────────

class Case:
    def __init__(self, name, prims, inputs, shapes, dtypes, expect, mode="exact", rtol=0.0,
                 atol=0.0, callee=None, scale=None):
        self.name, self.prims, self.inputs = name, prims, inputs
        self.shapes, self.dtypes, self.expect = shapes, dtypes, expect
        self.mode, self.rtol, self.atol = mode, rtol, atol
        self.scale = scale  # tol: the bound is rtol * scale (default |expected|) + atol
        self.callee = callee or name

    def script(self):
        ins = "".join(tensor_lit(x) + ", " for x in self.inputs)
        if len(self.shapes) == 1:
            shape, dtype = str(list(self.shapes[0])), f'"{self.dtypes[0]}"'
        else:
            shape = "[" + ", ".join(str(list(s)) for s in self.shapes) + "]"
            dtype = "[" + ", ".join(f'"{d}"' for d in self.dtypes) + "]"
        return (":set print-limit 100000000\n" + self.prims + "\n" +
                f"call_tir(@{self.callee}, ({ins}), shape={shape}, dtype={dtype})\n")


def f32(a):
    return np.asarray(a, dtype=np.float32)


def seq_matmul(x, w_t):
    """x @ w_t in float32, one rounded product added at a time (k ascending)."""
    acc = np.zeros((x.shape[0], w_t.shape[1]), dtype=np.float32)
    for k in range(x.shape[1]):
        acc = acc + x[:, k:k + 1] * w_t[k:k + 1, :]
    return acc


LINEAR = """prim @{name}(%X: Buffer[(1, {k}), float32], %W: Buffer[({m}, {k}), float32],
              %B: Buffer[({m}), float32], %Z: Buffer[(1, {m}), float32]) {{
  alloc %Y: Buffer[(1, {m}), float32];
  for %i, %j, %k in grid(1, {m}, {k}) {{
    block "Y" (spatial %vi = %i, spatial %vj = %j, reduce %vk = %k) {{
      init {{ %Y[%vi, %vj] = 0f; }}
      %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vj, %vk];
    }}
  }}
  for %i, %j in grid(1, {m}) {{
    block "Z" (spatial %vi = %i, spatial %vj = %j) {{
      %Z[%vi, %vj] = %Y[%vi, %vj] + %B[%vj];
    }}
  }}
}}
"""

RELU = """prim @relu0(%X: Buffer[(1, 128), float32], %Y: Buffer[(1, 128), float32]) {
  for %i, %j in grid(1, 128) {
    block "Y" (spatial %vi = %i, spatial %vj = %j) {
      %Y[%vi, %vj] = max(%X[%vi, %vj], 0f);
    }
  }
}
"""

MATMUL = """prim @matmul(%A: Buffer[(n, k), float32], %B: Buffer[(k, m), float32],
             %C: Buffer[(n, m), float32]) {
  for %i, %j, %r in grid(n, m, k) {
    block "C" (spatial %vi = %i, spatial %vj = %j, reduce %vr = %r) {
      init { %C[%vi, %vj] = 0f; }
      %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vr] * %B[%vr, %vj];
    }
  }
}
"""

TRANSPOSE = """prim @transpose(%A: Buffer[(n, m), float32], %B: Buffer[(m, n), float32]) {
  for %i, %j in parallel(m, n) {
    %B[%i, %j] = %A[%j, %i];
  }
}
"""

SOFTMAX = """prim @softmax(%X: Buffer[(n, m), float32], %Y: Buffer[(n, m), float32]) {
  alloc %M: Buffer[(n), float32];
  alloc %E: Buffer[(n, m), float32];
  alloc %S: Buffer[(n), float32];
  for %i, %j in grid(n, m) {
    block "max" (spatial %vi = %i, reduce %vj = %j) {
      init { %M[%vi] = -inff; }
      %M[%vi] = max(%M[%vi], %X[%vi, %vj]);
    }
  }
  for %i, %j in grid(n, m) {
    %E[%i, %j] = exp(%X[%i, %j] - %M[%i]);
  }
  for %i, %j in grid(n, m) {
    block "sum" (spatial %vi = %i, reduce %vj = %j) {
      init { %S[%vi] = 0f; }
      %S[%vi] = %S[%vi] + %E[%vi, %vj];
    }
  }
  for %i in grid(n) {
    for %j in vectorized(m) {
      %Y[%i, %j] = %E[%i, %j] / %S[%i];
    }
  }
}
"""

CONV1D = """prim @conv1d(%X: Buffer[(n), float32], %W: Buffer[(3), float32],
             %Y: Buffer[(n), float32]) {
  for %i, %k in grid(n, 3) {
    block "Y" (spatial %vi = %i, reduce %vk = %k) {
      init { %Y[%vi] = 0f; }
      let %p = %vi + %vk - 1;
      %Y[%vi] = %Y[%vi] + select(%p >= 0 && %p < n, %X[%p], 0f) * %W[%vk];
    }
  }
}
"""

INTS = """prim @ints(%A: Buffer[(n), int32], %B: Buffer[(n), int32], %F: Buffer[(n), float32],
           %Q: Buffer[(4, n), int32]) {
  for %i in grid(n) {
    %Q[0, %i] = %A[%i] / %B[%i];
    %Q[1, %i] = %A[%i] % %B[%i];
    %Q[2, %i] = int32(%F[%i]);
    %Q[3, %i] = int32(uint8(%A[%i])) + abs(%B[%i]);
  }
}
"""

BITS = """prim @bits(%F: Buffer[(n), float32], %D: Buffer[(n), float64], %Q: Buffer[(3, n), int32],
           %R: Buffer[(n), float32]) {
  for %i in grid(n) {
    %Q[0, %i] = reinterpret[int32](%F[%i]);
    %Q[1, %i] = int32(shift_right(reinterpret[int64](%D[%i]), 32i64));
    %Q[2, %i] = int32(shift_right(reinterpret[uint32](%F[%i]), 23u32));
    %R[%i] = reinterpret[float32](%Q[0, %i] + 1);
  }
}
"""

F64 = """prim @f64(%X: Buffer[(n), float64], %Y: Buffer[(5, n), float64]) {
  for %i in unrolled(n) {
    %Y[0, %i] = sigmoid(%X[%i]);
    %Y[1, %i] = tanh(%X[%i]);
    %Y[2, %i] = sqrt(abs(%X[%i]));
    %Y[3, %i] = pow(abs(%X[%i]), 0.75f64);
    %Y[4, %i] = float64(float32(%X[%i]));
  }
}
"""

MOMENTS = """prim @moments(%X: Buffer[(n), float32], %Mean: Buffer[(1), float32],
              %Sq: Buffer[(1), float32], %Cnt: Buffer[(1), int64]) {
  for %i in range(0, n) {
    block "m" (reduce %vi = %i) {
      init { %Mean[0] = 0f; %Sq[0] = 0f; %Cnt[0] = 0i64; }
      %Mean[0] = %Mean[0] + %X[%vi];
      %Sq[0] = %Sq[0] + %X[%vi] * %X[%vi];
      %Cnt[0] = %Cnt[0] + 1i64;
    }
  }
  if (%Cnt[0] > 0i64) { %Mean[0] = %Mean[0] / float32(%Cnt[0]); }
}
"""

# Loops from a begin (TVMScript's kind(begin, end)): the border of %Y is
# never written (outputs start zeroed); the reduction's init runs at m / 2.
STENCIL = """prim @stencil(%X: Buffer[(n, m), float32], %Y: Buffer[(n, m), float32]) {
  for %i in parallel(1, n - 1) {
    for %j in vectorized(1, m - 1) {
      %Y[%i, %j] = %X[%i - 1, %j] + %X[%i + 1, %j] + %X[%i, %j - 1] + %X[%i, %j + 1] - 4f * %X[%i, %j];
    }
  }
}
"""

TAIL_SUM = """prim @tail_sum(%X: Buffer[(n, m), float32], %R: Buffer[(n), float32]) {
  for %i in parallel(n) {
    for %k in unrolled(m / 2, m) {
      block "R" (spatial %vi = %i, reduce %vk = %k) {
        init { %R[%vi] = 1f; }
        %R[%vi] = %R[%vi] + %X[%vi, %vk];
      }
    }
  }
}
"""


def stencil_ref(x):
    """The interior's Laplacian in float32, in the prim's operation order."""
    y = np.zeros_like(x)
    c = x[1:-1, 1:-1]
    y[1:-1, 1:-1] = x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - np.float32(4) * c
    scale = np.zeros_like(x, dtype=np.float64)
    scale[1:-1, 1:-1] = (np.abs(x[:-2, 1:-1]) + np.abs(x[2:, 1:-1]) + np.abs(x[1:-1, :-2]) +
                         np.abs(x[1:-1, 2:]) + 4 * np.abs(c))
    return y, scale


def loop_begin_cases(rng):
    out = []
    for n, m in [(6, 11), (2, 3), (33, 20)]:
        x = f32(rng.standard_normal((n, m)))
        y, scale = stencil_ref(x)
        out.append(Case(f"stencil_{n}x{m}", STENCIL, [x], [(n, m)], ["float32"], [y],
                        callee="stencil", scale=scale))
    for n, m in [(3, 7), (5, 1), (4, 16)]:
        x = f32(rng.standard_normal((n, m)))
        acc = np.full(n, 1, dtype=np.float32)
        for k in range(m // 2, m):
            acc = acc + x[:, k]
        out.append(Case(f"tail_sum_{n}x{m}", TAIL_SUM, [x], [(n,)], ["float32"], [acc],
                        callee="tail_sum"))
    return out


def seq_sum(x):
    acc = np.zeros(x.shape[:-1], dtype=x.dtype)
    for j in range(x.shape[-1]):
        acc = acc + x[..., j]
    return acc


def trunc_div(a, b):
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.where((a < 0) != (b < 0), -q, q)).astype(np.int32)


def cases(rng):
    out = []
    # Seed 002 at full size.
    x, w0 = f32(rng.random((1, 784))), f32(rng.uniform(-.1, .1, (128, 784)))
    b0 = f32(rng.uniform(-.1, .1, 128))
    w1, b1 = f32(rng.uniform(-.1, .1, (10, 128))), f32(rng.uniform(-.1, .1, 10))
    lin0 = LINEAR.format(name="linear0", k=784, m=128)
    lin1 = LINEAR.format(name="linear1", k=128, m=10)
    z0 = seq_matmul(x, w0.T) + b0
    out.append(Case("linear0", lin0, [x, w0, b0], [(1, 128)], ["float32"], [z0]))
    out.append(Case("linear0_f64", lin0, [x, w0, b0], [(1, 128)], ["float32"],
                    [x.astype(np.float64) @ w0.T.astype(np.float64) + b0], mode="tol", rtol=1e-5,
                    callee="linear0", scale=np.abs(x) @ np.abs(w0).T + np.abs(b0)))
    z1 = np.maximum(z0, np.float32(0))
    out.append(Case("relu0", RELU, [z0], [(1, 128)], ["float32"], [z1]))
    out.append(Case("linear1", lin1, [z1, w1, b1], [(1, 10)], ["float32"],
                    [seq_matmul(z1, w1.T) + b1]))
    # Size variables at a few shapes.
    for n, k, m in [(3, 5, 4), (1, 1, 1), (7, 33, 2)]:
        a, b = f32(rng.standard_normal((n, k))), f32(rng.standard_normal((k, m)))
        out.append(Case(f"matmul_{n}x{k}x{m}", MATMUL, [a, b], [(n, m)], ["float32"],
                        [seq_matmul(a, b)], callee="matmul"))
    for n, m in [(3, 5), (1, 7), (16, 16)]:
        a = f32(rng.standard_normal((n, m)))
        out.append(Case(f"transpose_{n}x{m}", TRANSPOSE, [a], [(m, n)], ["float32"], [a.T.copy()],
                        callee="transpose"))
    xs = f32(rng.standard_normal((4, 9)) * 3)
    e = np.exp((xs - xs.max(axis=1, keepdims=True)).astype(np.float64))
    out.append(Case("softmax", SOFTMAX, [xs], [(4, 9)], ["float32"],
                    [e / e.sum(axis=1, keepdims=True)], mode="tol", rtol=1e-6, atol=1e-7))
    xc, wc = f32(rng.standard_normal(10)), f32(rng.standard_normal(3))
    pad = np.concatenate([[np.float32(0)], xc, [np.float32(0)]]).astype(np.float32)
    ref = np.zeros(10, dtype=np.float32)
    for kk in range(3):
        ref = ref + pad[kk:kk + 10] * wc[kk]
    out.append(Case("conv1d", CONV1D, [xc, wc], [(10,)], ["float32"], [ref]))
    a = rng.integers(-1000, 1000, 12).astype(np.int32)
    b = rng.integers(1, 50, 12).astype(np.int32) * rng.choice([-1, 1], 12).astype(np.int32)
    fl = f32(rng.uniform(-100, 100, 12))
    q = np.stack([trunc_div(a, b), (a - trunc_div(a, b) * b).astype(np.int32),
                  np.trunc(fl).astype(np.int32), (a.astype(np.uint8).astype(np.int32) + np.abs(b))])
    out.append(Case("ints", INTS, [a, b, fl], [(4, 12)], ["int32"], [q]))
    fb = np.concatenate([f32(rng.standard_normal(6) * 100), f32([0.0, -0.0, 1e38, -1e-38, 1e-40, -2.5])])
    db = np.concatenate([rng.standard_normal(6) * 1e10, [0.0, -0.0, np.inf, -1.0, 5e-324, 2.0]])
    qb = np.stack([fb.view(np.int32), (db.view(np.int64) >> 32).astype(np.int32),
                   (fb.view(np.uint32) >> 23).astype(np.int32)])
    out.append(Case("reinterpret", BITS, [fb, db], [(3, 12), (12,)], ["int32", "float32"],
                    [qb, (fb.view(np.int32) + 1).view(np.float32)], callee="bits"))
    xd = rng.standard_normal(8)
    yd = np.stack([1 / (1 + np.exp(-xd)), np.tanh(xd), np.sqrt(np.abs(xd)), np.abs(xd) ** 0.75,
                   xd.astype(np.float32).astype(np.float64)])
    out.append(Case("f64", F64, [xd], [(5, 8)], ["float64"], [yd], mode="tol", rtol=4e-16))
    xm = f32(rng.standard_normal(11))
    out.append(Case("moments", MOMENTS, [xm], [(1,), (1,), (1,)], ["float32", "float32", "int64"],
                    [f32([seq_sum(xm) / np.float32(11)]), f32([seq_sum(xm * xm)]), np.array([11])]))
    return out + loop_begin_cases(rng)


# ───────────────────────────── running ─────────────────────────────

MODES = {"interp": {"RLY_EXEC": "interp"},
         "jit": {"RLY_EXEC": "jit", "RLY_JIT_CONTRACT": "0"},
         "jit-fma": {"RLY_EXEC": "jit"}}


def compare(case, got, fma=False):
    vals = got if len(case.expect) > 1 else [got]
    if len(vals) != len(case.expect):
        return f"expected {len(case.expect)} outputs, got {len(vals)}"
    for i, (g, want) in enumerate(zip(vals, case.expect)):
        # the printed shortest text reads back exactly in the output's dtype
        g = np.asarray(g, dtype=np.dtype(case.dtypes[i])).astype(np.float64)
        want = np.asarray(want)
        if g.shape != want.shape:
            return f"output {i}: shape {g.shape}, expected {want.shape}"
        w = want.astype(np.float64)
        if case.mode == "exact" and fma:
            scale = np.abs(w) if case.scale is None else case.scale
            bad = ~((np.abs(g - w) <= 1e-5 * scale + 1e-6) | (np.isnan(g) & np.isnan(w)))
        elif case.mode == "exact":
            bad = ~((g == w) | (np.isnan(g) & np.isnan(w)))
        else:
            scale = np.abs(w) if case.scale is None else case.scale
            bad = ~(np.abs(g - w) <= case.rtol * scale + case.atol)
        if bad.any():
            idx = tuple(np.argwhere(bad)[0])
            return (f"output {i} at {idx}: got {g[idx]!r}, expected {w[idx]!r} "
                    f"({int(bad.sum())} differ)")
    return None


def run_case(rly, case, tmp, mode="interp"):
    path = os.path.join(tmp, case.name + ".rly")
    with open(path, "w") as f:
        f.write(case.script())
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), **MODES[mode])
    if "RLY_JIT_CONTRACT" not in MODES[mode]:
        env.pop("RLY_JIT_CONTRACT", None)
    p = subprocess.run([rly, path], capture_output=True, text=True, timeout=300, env=env)
    if p.returncode != 0:
        return f"rly failed ({p.returncode}):\n{p.stderr}"
    lines = p.stdout.splitlines()
    start = max((i + 1 for i, l in enumerate(lines) if l.startswith("defined ")), default=0)
    text = "\n".join(l for l in lines[start:] if not l.startswith("print-limit"))
    try:
        return compare(case, parse_value(text), fma=mode == "jit-fma")
    except Exception as e:  # a value that does not parse is a failure too
        return f"cannot read the output ({e}):\n{text[:500]}"


def main():
    args = [a for a in sys.argv[1:]]
    verbose = "-v" in args
    seed = 2024
    if "--seed" in args:
        seed = int(args[args.index("--seed") + 1])
        del args[args.index("--seed"):args.index("--seed") + 2]
    args = [a for a in args if a != "-v"]
    rly = args[0] if args else os.environ.get("RLY", "rly")
    rng = np.random.default_rng(seed)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(rng):
            for mode in MODES:
                msg = run_case(rly, case, tmp, mode)
                if msg is None:
                    passed += 1
                    if verbose:
                        print(f"ok   {case.name} ({mode})")
                else:
                    failed += 1
                    print(f"FAIL {case.name} ({mode}): {msg}")
    print(f"tir: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
