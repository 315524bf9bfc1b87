#!/usr/bin/env python3
"""The interpreter's scalar fast path (interp/fast.c) against the generic
machine: random scalar programs (every integer and float dtype and bool, the
elementwise ops of the registry; wrap-around, integer division by zero, NaN and infinities, comparisons,
casts, if, let, refs incl. ref(@state_global), tail loops, non-tail
recursion, calls between functions, mutual recursion, a function that
falls back to the generic machine) run with RLY_FAST=trace and RLY_FAST=0;
stdout, stderr and the exit code must be identical.  The trace lines also
prove the fast path was taken: most generated functions must compile.

Usage: fast_equiv.py [N_PROGRAMS] [SEED]   (env RLY: the rly binary)"""
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

RLY = os.environ.get("RLY", "rly")

INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
UINTS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
FLOATS = ["float16", "float32", "float64"]
DTYPES = list(INTS) + list(UINTS) + FLOATS + ["bool"]
SUFFIX = {"int8": "i8", "int16": "i16", "int32": "", "int64": "i64", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "float32": "f", "float64": "f64"}

ARITH = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "maximum", "minimum",
         "power"]
CMP = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "equal": "==",
         "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
         "greater_equal": ">="}
LOGICAL = ["logical_and", "logical_or"]
INT_UNARY = ["negative", "abs", "sign", "floor"]
FLOAT_UNARY = ["negative", "abs", "sign", "floor", "ceil", "round", "exp", "log", "sqrt",
               "tanh", "sigmoid", "rsqrt", "erf"]


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.funcs = []  # (name, parameter dtypes, result dtype) defined so far

    def lit(self, dt):
        r = self.r
        if dt == "bool":
            return r.choice(["True", "False"])
        if dt in INTS or dt in UINTS:
            bits = INTS.get(dt) or UINTS[dt]
            hi = (1 << (bits - 1)) - 1 if dt in INTS else (1 << bits) - 1
            v = r.choice([0, 1, 2, 3, 7, 100, hi, hi - 1, r.randint(0, min(hi, 1000))])
            v = min(v, hi)
            s = f"{v}{SUFFIX[dt]}"
            if dt in INTS and r.random() < 0.3:
                return f"negative({s})"
            return s
        v = r.choice(["0", "1", "2.5", "0.1", "1e30", "3", "1e-7", "65504", "inf", "nan"])
        if dt == "float16" and v == "1e30":
            v = "60000"
        if v == "inf":
            s = "inff"
        elif v == "nan":
            s = "nanf"
        else:
            return f"{v}{SUFFIX[dt]}" if r.random() < 0.8 else f"negative({v}{SUFFIX[dt]})"
        return s if dt == "float32" else f'cast({s}, dtype="{dt}")'

    def expr(self, dt, depth, env):
        """An expression of dtype dt; env: list of (name, dtype)."""
        r = self.r
        vs = [n for n, t in env if t == dt]
        if depth <= 0 or r.random() < 0.15:
            if vs and r.random() < 0.7:
                return r.choice(vs)
            return self.lit(dt)
        k = r.random()
        d = depth - 1
        callable_ = [f for f in self.funcs if f[2] == dt]
        if callable_ and r.random() < 0.3:
            name, pts, _ = r.choice(callable_)
            return f"{name}({', '.join(self.expr(t, d, env) for t in pts)})"
        if dt == "bool":
            if k < 0.45:
                t = r.choice(DTYPES[:-1])
                op = r.choice(CMP)
                a, b = self.expr(t, d, env), self.expr(t, d, env)
                return f"({a} {INFIX[op]} {b})" if r.random() < 0.5 else f"{op}({a}, {b})"
            if k < 0.65:
                return f"{r.choice(LOGICAL)}({self.expr('bool', d, env)}, {self.expr('bool', d, env)})"
            if k < 0.75:
                return f"logical_not({self.expr('bool', d, env)})"
        is_float = dt in FLOATS
        if k < 0.45 and dt != "bool":
            op = r.choice(ARITH)
            a, b = self.expr(dt, d, env), self.expr(dt, d, env)
            if op in INFIX and r.random() < 0.5:
                return f"({a} {INFIX[op]} {b})"
            return f"{op}({a}, {b})"
        if k < 0.65 and dt != "bool":
            ops = FLOAT_UNARY if is_float else INT_UNARY
            return f"{r.choice(ops)}({self.expr(dt, d, env)})"
        if k < 0.78:
            t = r.choice(DTYPES)
            return f'cast({self.expr(t, d, env)}, dtype="{dt}")'
        if k < 0.9:
            return (f"if ({self.expr('bool', d, env)}) {{ {self.expr(dt, d, env)} }} "
                    f"else {{ {self.expr(dt, d, env)} }}")
        name = f"%v{r.randint(0, 10**6)}"
        t = r.choice(DTYPES)
        val = self.expr(t, d, env)
        return self.let_expr(name, t, val, dt, d, env)

    def let_expr(self, name, t, val, dt, d, env):
        # A let can only start a body: wrap it in an if whose both branches
        # are the same block.
        body = self.expr(dt, d, env + [(name, t)])
        blk = f"let {name}: {t} = {val}; {body}"
        return f"if (True) {{ {blk} }} else {{ {blk} }}"

    def program(self, idx):
        r = self.r
        out = ['#[version = "0.0.5"]']
        calls = []
        nf = r.randint(1, 3)
        for fi in range(nf):
            params = [(f"%p{j}", r.choice(DTYPES)) for j in range(r.randint(1, 3))]
            rt = r.choice(DTYPES)
            body = self.expr(rt, r.randint(1, 4), params)
            ps = ", ".join(f"{n}: {t}" for n, t in params)
            out.append(f"def @f{fi}({ps}) -> {rt} {{ {body} }}")
            self.funcs.append((f"@f{fi}", [t for _, t in params], rt))
            for _ in range(r.randint(1, 3)):
                calls.append(f"@f{fi}({', '.join(self.lit(t) for _, t in params)})")
        # a tail loop accumulating into a ref
        t = r.choice(DTYPES)
        env = [("%n", "int32"), ("%acc", t)]
        step = self.expr(t, r.randint(1, 3), env)
        out.append(f"def @loop(%r: Ref[{t}], %n: int32) -> {t} {{\n"
                   f"  if (%n <= 0) {{ %r^ }} else {{\n    let %acc: {t} = %r^;\n"
                   f"    %r := {step};\n    @loop(%r, %n - 1)\n  }}\n}}")
        calls.append(f"@loop(ref({self.lit(t)}), {r.randint(0, 300)})")
        # non-tail recursion calling the other functions
        t2 = r.choice([d for d in DTYPES if d != "bool"])
        env = [("%n", "int32"), ("%x", t2)]
        e = self.expr(t2, 2, env)
        out.append(f"def @rec(%x: {t2}, %n: int32) -> {t2} {{\n"
                   f"  if (%n <= 0) {{ %x }} else {{ add(@rec({e}, %n - 1), %x) }}\n}}")
        calls.append(f"@rec({self.lit(t2)}, {r.randint(0, 50)})")
        # a state global aliased through ref(@g)
        if idx % 3 == 0:
            out.append("global @g: int64 = 5i64;")
            out.append("def @bump(%r: Ref[int64], %k: int64) -> int64 {\n"
                       "  %r := add(%r^, %k); %r^\n}")
            calls.append("@bump(ref(@g), 7i64)")
            calls.append("@g")
            calls.append("let %q = ref(@g); @bump(%q, 1i64); (%q^, @g)")
        # fallback: a tuple makes @tup and its caller run on the generic path;
        # mutual recursion between compiled functions
        if idx % 4 == 1:
            out.append("def @tup(%x: int32) -> int32 { let %t = (%x, %x); %t.1 }")
            out.append("def @usetup(%x: int32) -> int32 { @tup(%x) * 3 }")
            out.append("def @even(%n: int32) -> bool { if (%n == 0) { True } else { @odd(%n - 1) } }")
            out.append("def @odd(%n: int32) -> bool { if (%n == 0) { False } else { @even(%n - 1) } }")
            calls += ["@usetup(7)", f"@even({r.randint(0, 1000)})", "@odd(0)"]
        r.shuffle(calls)
        return "\n".join(out + calls) + "\n"


def run(path, fast):
    env = dict(os.environ, RLY_FAST="trace" if fast else "0", NO_COLOR="1")
    p = subprocess.run([RLY, "--no-prelude", path], capture_output=True, env=env, timeout=120)
    err = p.stderr.decode()
    trace = [l for l in err.splitlines() if l.startswith("fast: ")]
    err = "\n".join(l for l in err.splitlines() if not l.startswith("fast: "))
    return p.returncode, p.stdout.decode(), err, trace


def check(args):
    i, seed, d = args
    src = Gen(random.Random(seed * 100003 + i)).program(i)
    path = os.path.join(d, f"p{i}.rly")
    with open(path, "w") as f:
        f.write(src)
    a, b = run(path, True), run(path, False)
    return i, src, a, b


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    failed = compiled = refused = 0
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(max_workers=4) as ex:
        for i, src, a, b in ex.map(check, [(i, seed, d) for i in range(n)]):
            compiled += sum(l.endswith("compiled") for l in a[3])
            refused += sum(l.endswith("refused") for l in a[3])
            sanitizer = any(m in a[2] + b[2] for m in ("runtime error:", "AddressSanitizer"))
            if a[:3] != b[:3] or sanitizer:
                failed += 1
                if failed <= 3:
                    print(f"FAIL program {i} (seed {seed}):\n{src}\n-- fast (exit {a[0]}):\n"
                          f"{a[1]}{a[2]}\n-- generic (exit {b[0]}):\n{b[1]}{b[2]}\n")
    print(f"fast_equiv: {n - failed} of {n} programs agree; fast path compiled {compiled} "
          f"functions, refused {refused}")
    if compiled < n:
        print("FAIL: the fast path compiled too few functions")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
