#!/usr/bin/python3
"""fuse_random.py — random fused chains, lowered (RLY_EXEC=jit) against
the reference kernels (RLY_EXEC=interp).

Usage: fuse_random.py RLY [N_PROGRAMS] [SEED]

Builds N random functions: chains of elementwise, broadcast, injective,
reduction, softmax and dense ops and row normalizations (x against a
statistic of its last axes, which row fusion fuses) over random shapes (broadcasting against
extra inputs of rank <= the chain's, dims of size 1), some with `?` or
named size variables in their signatures, float32 or float64.  All of them
go into one script that calls each on deterministic random inputs; the
script runs in both modes and the printed results must agree (exactly
except for the float rounding of reassociated sums, see exec_modes.py).
Also checks, with `:dump tir`, that most functions did lower.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_modes import same  # noqa: E402

UNARY = ["tanh", "sigmoid", "negative", "abs", "nn.relu", "exp(tanh", "sqrt(abs",
         "clip", "nn.leaky_relu", "floor", "ceil", "sign", "rsqrt(add1"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "divide(.., add1",
          "where", "power(abs"]


class Gen:
    def __init__(self, rng, dt):
        self.rng, self.dt = rng, dt
        self.params = []  # (name, shape)
        self.lines = []
        self.n = 0

    def lit(self, v):
        return f"{v}f" if self.dt == "float32" else f"{v}f64"

    def new_param(self, shape):
        name = f"%a{len(self.params)}"
        self.params.append((name, list(shape)))
        return name

    def bind(self, text):
        v = f"%{self.n}"
        self.n += 1
        self.lines.append(f"  {v} = {text};")
        return v

    def unary(self, x):
        op = self.rng.choice(UNARY)
        if op == "exp(tanh":
            return self.bind(f"exp({self.bind(f'tanh({x})')})")
        if op == "sqrt(abs":
            return self.bind(f"sqrt({self.bind(f'abs({x})')})")
        if op == "rsqrt(add1":
            return self.bind(f"rsqrt({self.bind(f'add(abs({x}), {self.lit(1)})')})")
        if op == "clip":
            return self.bind(f"clip({x}, a_min=-0.5f, a_max=0.75f)")
        if op == "nn.leaky_relu":
            return self.bind(f"nn.leaky_relu({x}, alpha=0.1f)")
        return self.bind(f"{op}({x})")

    def bcast_shape(self, shape):
        k = self.rng.randint(0, len(shape))
        sub = list(shape[len(shape) - k:])
        return [1 if self.rng.random() < 0.3 else d for d in sub]

    def binary(self, x, shape):
        y = self.new_param(self.bcast_shape(shape))
        if self.rng.random() < 0.5:
            x, y = y, x
        op = self.rng.choice(BINARY)
        if op == "divide(.., add1":
            return self.bind(f"divide({x}, {self.bind(f'add(abs({y}), {self.lit(1)})')})")
        if op == "power(abs":
            return self.bind(f"power(abs({x}), {y})")
        if op == "where":
            return self.bind(f"where(greater({x}, {y}), {x}, multiply({y}, {self.lit(2)}))")
        return self.bind(f"{op}({x}, {y})")

    def row_norm(self, x, shape):
        """x against a statistic of its rows (its last k axes reduced, kept):
        FuseOps' row fusion makes the reduction and its consumer one group."""
        k = self.rng.randint(1, len(shape) - 1)
        axes = list(range(len(shape) - k, len(shape)))
        op = self.rng.choice(["sum", "mean", "max", "min"])
        m = self.bind(f"{op}({x}, axis={axes}, keepdims=True)")
        c = self.bind(f"subtract({x}, {m})")
        if self.rng.random() < 0.5:
            return c
        v = self.bind(f"mean({self.bind(f'multiply({c}, {c})')}, axis={axes}, keepdims=True)")
        return self.bind(f"divide({c}, {self.bind(f'sqrt(add({v}, {self.lit(1)}))')})")

    def step(self, x, shape):
        r = self.rng.random()
        if r < 0.3:
            return self.unary(x), shape
        if r < 0.6:
            return self.binary(x, shape), shape
        if r < 0.68 and len(shape) >= 2:
            return self.bind(f"nn.softmax({x}, axis={self.rng.randrange(len(shape))})"), shape
        if r < 0.76 and len(shape) >= 2:
            ax = self.rng.randrange(len(shape))
            keep = self.rng.random() < 0.5
            op = self.rng.choice(["sum", "mean", "max", "min"])
            v = self.bind(f"{op}({x}, axis=[{ax}], keepdims={'True' if keep else 'False'})")
            return v, shape[:ax] + ([1] if keep else []) + shape[ax + 1:]
        if r < 0.84 and len(shape) == 2:
            units = self.rng.randint(1, 20)
            w = self.new_param([units, shape[1]])
            b = self.new_param([units])
            d = self.bind(f"nn.dense({x}, {w})")
            return self.bind(f"nn.bias_add({d}, {b})"), [shape[0], units]
        if r < 0.86 and len(shape) == 3:
            n = self.rng.randint(1, 9)
            tb = self.rng.random() < 0.5
            y = self.new_param([self.rng.choice([1, shape[0]]), n, shape[2]] if tb else
                               [self.rng.choice([1, shape[0]]), shape[2], n])
            return (self.bind(f"nn.batch_matmul({x}, {y}, transpose_b={tb})"),
                    [shape[0], shape[1], n])
        if r < 0.86 and len(shape) == 2:
            n = self.rng.randint(1, 9)
            y = self.new_param([shape[1], n])
            return self.bind(f"nn.matmul({x}, {y})"), [shape[0], n]
        if r < 0.88 and len(shape) == 2 and shape[0] >= 2 and shape[1] >= 2:
            p = self.rng.randint(0, 1)
            c = self.rng.randint(1, 4)
            kh, kw = self.rng.randint(1, min(3, shape[0] + 2 * p)), self.rng.randint(1, min(3, shape[1] + 2 * p))
            w = self.new_param([c, 1, kh, kw])
            x4 = self.bind(f"reshape({x}, newshape=[1, 1, {shape[0]}, {shape[1]}])")
            v = self.bind(f"nn.conv2d({x4}, {w}, padding=[{p}, {p}])")
            oh, ow = shape[0] + 2 * p - kh + 1, shape[1] + 2 * p - kw + 1
            return self.bind(f"reshape({v}, newshape=[{c * oh}, {ow}])"), [c * oh, ow]
        if r < 0.92 and len(shape) >= 2:
            return self.row_norm(x, shape), shape
        if r < 0.94 and len(shape) >= 2:
            perm = list(range(len(shape)))
            self.rng.shuffle(perm)
            return (self.bind(f"transpose({x}, axes={perm})"), [shape[p] for p in perm])
        if r < 0.97 and len(shape) <= 3:
            e = self.bind(f"expand_dims({x}, axis=0)")
            return self.bind(f"squeeze({e}, axis=[0])"), shape
        flat = 1
        for d in shape:
            flat *= d
        return self.bind(f"reshape({x}, newshape=[{flat}])"), [flat]


def sig_dims(shape, style, first):
    """Named style: every dim equal to the first input's first dim is `n`
    (so the type checker unifies them); any style: the first input's first
    dim is `?`."""
    dims = [str(d) for d in shape]
    if style == "named":
        dims = ["n" if d == first else str(d) for d in shape]
    if dims and style == "any":
        dims[0] = "?"
    return "(" + ", ".join(dims) + ")"


def type_checks(rly, text):
    with tempfile.NamedTemporaryFile("w", suffix=".rly", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([rly, "--check", f.name], capture_output=True).returncode == 0
    finally:
        os.unlink(f.name)


def program(rng, k, rly=None):
    dt = rng.choice(["float32", "float32", "float64"])
    g = Gen(rng, dt)
    rank = rng.randint(1, 3)
    shape = [rng.randint(1, 7) for _ in range(rank)]
    x = g.new_param(shape)
    cur = x
    for _ in range(rng.randint(1, 6)):
        cur, shape = g.step(cur, shape)
    style = rng.choice(["const", "const", "named", "any"])
    first = g.params[0][1][0]
    if style == "named" and first < 2:
        style = "const"
    text = signature_and_body(g, k, dt, cur, style, first)
    if style != "const" and rly and not type_checks(rly, text):
        text = signature_and_body(g, k, dt, cur, "const", first)
    return text + call_text(g, k, dt)


def signature_and_body(g, k, dt, cur, style, first):
    params = []
    for i, (name, sh) in enumerate(g.params):
        st = style if i == 0 or style == "named" else "const"
        params.append(f"{name}: Tensor[{sig_dims(sh, st, first)}, {dt}]")
    body = "\n".join(g.lines) + f"\n  {cur}\n"
    return f"def @c{k}({', '.join(params)}) {{\n{body}}}\n"


def call_text(g, k, dt):
    args = []
    for i, (name, sh) in enumerate(g.params):
        dims = ", ".join(str(d) for d in sh)
        args.append(f"random.uniform(random.key({k * 100 + i}), shape=[{dims}], dtype=\"{dt}\", "
                    f"low={g.lit(-1.5)}, high={g.lit(1.5)})")
    return f"@c{k}({', '.join(args)})\n"


def run(rly, path, mode):
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    p = subprocess.run([rly, path], capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def main():
    rly = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    progs = [program(rng, k, rly) for k in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chains.rly")
        with open(path, "w") as f:
            f.write("".join(progs))
            f.write("".join(f":dump tir @c{k}\n" for k in range(n)))
        ra, oa, ea = run(rly, path, "interp")
        rb, ob, eb = run(rly, path, "jit")
    # Under sanitizers: memory errors, undefined behaviour, or leaks that
    # jit mode adds to interp mode's fail the test.
    mine = re.compile(r"(fuse_ops|lower_tir|compute_\w+|eval_interp|cmd_lower)\.c:\d+:\d+: runtime error")
    for err in (ea, eb):
        if mine.search(err) or "ERROR: AddressSanitizer" in err:
            print(err[:3000])
            return 1
    if eb.count("leak of") > ea.count("leak of"):
        print(eb[:3000])
        return 1
    if ra != 0 or rb != 0:
        print(f"exit {ra} (interp) / {rb} (jit)\n{ea[:2000]}\n{eb[:2000]}")
        return 1
    cut = oa.find("prim @")
    cut_b = ob.find("prim @")
    vals_a = oa[:cut if cut >= 0 else len(oa)]
    vals_b = ob[:cut_b if cut_b >= 0 else len(ob)]
    bad = 0
    blocks_a = vals_a.split("defined @")
    blocks_b = vals_b.split("defined @")
    for a, b in zip(blocks_a, blocks_b):
        if not same(a, b):
            bad += 1
            name = a.split(" ", 1)[0]
            k = int(name[1:]) if name[1:].isdigit() else -1
            print(f"MISMATCH @{name}\n--- program:\n{progs[k] if k >= 0 else ''}"
                  f"--- interp:\n{a[:1500]}\n--- jit:\n{b[:1500]}")
    if len(blocks_a) != len(blocks_b):
        bad += 1
        print("different number of results")
    kernels = ob.count("prim @fused")
    none = ob.count("has no fused kernels")
    print(f"{n} random chains, {bad} disagree; {kernels} kernels, {none} functions not lowered")
    if none > n // 3:
        print("too few functions lowered")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
