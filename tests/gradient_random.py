#!/usr/bin/python3
"""gradient_random.py — Gradient on random programs of the dynamic language,
and dropout's mask.

Usage: /usr/bin/python3 tests/gradient_random.py PATH/TO/rly [COUNT] [SEED] [-v]

1. COUNT random functions @f(%x, %y: Tensor[(3), float64], %n: int32) built
   from elementwise ops, `if` on the sign of a sum, let-bound closures
   (capturing the enclosing values), `match` on a list made with Cons,
   references (`ref`, `^`, `:=`), calls of a global helper and of a
   recursive global (@rpow: x^n); each goes through `:pass Gradient @f`, and
   @f_grad's gradients for %x and %y, in both execution modes, are compared
   with central differences of @f in the interpreter (h = 1e-6; rtol 1e-5,
   atol 1e-7); %n's gradient must be 0 (an integer gets zeros).
2. nn.dropout_train under Gradient: @f_grad's value is @f's, bit for bit (y
   and the new state), the adjoint is 1/keep exactly where y was kept and 0
   where it was dropped, and CheckKeyLinearity accepts the module (the key
   is split once: the mask is drawn in the forward step and reused).
Prints "random gradients: N passed, N failed"; exits non-zero on a failure.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

PRELUDE = """
def @helper(%a: Tensor[(3), float64]) -> Tensor[(3), float64] {
  tanh(multiply(%a, 0.7f64))
}
def @rpow(%k: int32, %a: Tensor[(3), float64]) -> Tensor[(3), float64] {
  if (%k <= 0) { ones_like(%a) } else { multiply(@rpow(%k - 1, %a), %a) }
}
"""


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.n = 0

    def fresh(self, base):
        self.n += 1
        return "%%%s%d" % (base, self.n)

    def expr(self, env, depth):
        r = self.rng
        if depth <= 0 or r.random() < 0.15:
            return r.choice(env)
        k = r.randrange(11)
        a = self.expr(env, depth - 1)
        if k == 0:
            return "tanh(%s)" % a
        if k == 1:
            return "sin(%s)" % a
        if k == 2:
            return "multiply(%s, %s)" % (a, self.expr(env, depth - 1))
        if k == 3:
            return "add(%s, %s)" % (a, self.expr(env, depth - 1))
        if k == 4:
            return "subtract(%s, multiply(%s, 0.5f64))" % (a, self.expr(env, depth - 1))
        if k == 5:
            b, c = self.expr(env, depth - 1), self.expr(env, depth - 1)
            return "if (less(sum(%s), 0f64)) { %s } else { %s }" % (a, b, c)
        if k == 6:
            u, f = self.fresh("u"), self.fresh("f")
            body = self.expr(env + [u], depth - 1)
            return "(let %s = fn (%s: Tensor[(3), float64]) { %s }; %s(%s))" % (
                f, u, body, f, a)
        if k == 7:
            rv = self.fresh("r")
            b = self.expr(env + ["%s^" % rv], depth - 1)
            return "(let %s = ref(%s); %s := %s; %s^)" % (rv, a, rv, b, rv)
        if k == 8:
            h, t = self.fresh("h"), self.fresh("t")
            b = self.expr(env, depth - 1)
            body = self.expr(env + [h], depth - 1)
            return ("match (Cons(%s, Cons(%s, Nil))) { Cons(%s, %s) => %s, Nil => %s }"
                    % (a, b, h, t, body, a))
        if k == 9:
            return "@helper(%s)" % a
        return "@rpow(%%n, %s)" % a

    def function(self):
        body = self.expr(["%x", "%y"], 4)
        return ("def @f(%%x: Tensor[(3), float64], %%y: Tensor[(3), float64], %%n: int32) {\n"
                "  sum(multiply(%s, [0.3f64, -1.1f64, 0.8f64]))\n}\n" % body)


def run(rly, text, mode, tmp):
    path = os.path.join(tmp, "case.rly")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    p = subprocess.run([rly, path], capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    return p.returncode, p.stdout + p.stderr


def scalars(text):
    return [float(m.group(1)) for m in re.finditer(r"^(-?[0-9.e+-]+)f64$", text, re.M)]


def lit(v):
    return "[%s]" % ", ".join("%rf64" % float(x) for x in v)


def check_program(rly, src, rng, tmp):
    x, y = rng.normal(0, 1, 3), rng.normal(0, 1, 3)
    n = int(rng.integers(0, 4))
    grad = PRELUDE + src + ":pass Gradient @f\n"
    grad += "let %%g = @f_grad(%s, %s, %d);\n" % (lit(x), lit(y), n)
    grad += "let %gx = %g.1.0;\nlet %gy = %g.1.1;\n:save %gx gx.npy\n:save %gy gy.npy\n%g.1.2\n"
    results = {}
    for mode in ("interp", "jit"):
        for f in ("gx.npy", "gy.npy"):
            if os.path.exists(os.path.join(tmp, f)):
                os.remove(os.path.join(tmp, f))
        rc, text = run(rly, grad, mode, tmp)
        if rc != 0 or not text.rstrip().endswith("\n0"):
            return "rly failed (%s):\n%s\n%s" % (mode, src, text[-3000:])
        results[mode] = [np.load(os.path.join(tmp, f)) for f in ("gx.npy", "gy.npy")]
    fd_src, points = PRELUDE + src, []
    for which in (0, 1):
        for j in range(3):
            for sgn in (1, -1):
                v = [x.copy(), y.copy()]
                h = 1e-6 * max(1.0, abs(v[which][j]))
                v[which][j] += sgn * h
                fd_src += "@f(%s, %s, %d)\n" % (lit(v[0]), lit(v[1]), n)
                points.append((which, j, sgn, h))
    rc, text = run(rly, fd_src, "interp", tmp)
    vals = scalars(text)
    if rc != 0 or len(vals) != len(points):
        return "finite differences failed:\n%s\n%s" % (src, text[-3000:])
    fd = [np.zeros(3), np.zeros(3)]
    for (which, j, sgn, h), v in zip(points, vals):
        fd[which][j] += sgn * v / (2 * h)
    for mode, (gx, gy) in results.items():
        for name, got, want in (("x", gx, fd[0]), ("y", gy, fd[1])):
            if not np.allclose(got, want, rtol=1e-5, atol=1e-7):
                return "d%s (%s) differs from central differences:\n%s\n got %s\n  fd %s" % (
                    name, mode, src, got, want)
    return None


DROPOUT = """
def @f(%x: Tensor[(256), float32], %k: RandState) {
  let %p = nn.dropout_train(%x, %k, rate=0.3f);
  (add(%p.0, 0f), %p.1)
}
:pass Gradient @f
:pass CheckKeyLinearity
:load-tensor %x in.npy
let %a = @f(%x, random.key(11));
let %b = @f_grad(%x, random.key(11));
let %ya = %a.0;
let %yb = %b.0.0;
let %dx = %b.1.0;
:save %ya ya.npy
:save %yb yb.npy
:save %dx dx.npy
%a.1
%b.0.1
"""


def check_dropout(rly, rng, tmp):
    x = rng.uniform(0.5, 2.0, 256).astype(np.float32)
    np.save(os.path.join(tmp, "in.npy"), x)
    out = {}
    for mode in ("interp", "jit"):
        rc, text = run(rly, DROPOUT, mode, tmp)
        if rc != 0:
            return "dropout (%s): rly failed:\n%s" % (mode, text[-3000:])
        if "CheckKeyLinearity: " in text and "no change" not in text:
            return "dropout (%s): a key is used twice:\n%s" % (mode, text[-3000:])
        keys = re.findall(r"^random\.wrap_key\(.*\)$", text, re.M)
        if len(keys) != 2 or keys[0] != keys[1]:
            return "dropout (%s): the new states differ: %s" % (mode, keys)
        ya, yb, dx = (np.load(os.path.join(tmp, f)) for f in ("ya.npy", "yb.npy", "dx.npy"))
        keep = np.float32(1) - np.float32(0.3)
        if not np.array_equal(ya, yb):
            return "dropout (%s): @f_grad's value differs from @f's" % mode
        kept = ya != 0
        if kept.all() or not kept.any():
            return "dropout (%s): the mask keeps %d of 256" % (mode, kept.sum())
        if not np.array_equal(dx != 0, kept) or not np.allclose(dx[kept], 1 / keep, rtol=1e-6):
            return "dropout (%s): the adjoint is not the forward mask / keep" % mode
        out[mode] = ya
    if not np.array_equal(out["interp"], out["jit"]):
        return "dropout: the two execution modes draw different masks"
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    rly = args[0]
    count = int(args[1]) if len(args) > 1 else 40
    seed = int(args[2]) if len(args) > 2 else 1
    verbose = "-v" in sys.argv
    gen = Gen(random.Random(seed))
    rng = np.random.default_rng(seed)
    failures, passed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        f = check_dropout(rly, rng, tmp)
        failures += [f] if f else []
        passed += not f
        for i in range(count):
            src = gen.function()
            f = check_program(rly, src, rng, tmp)
            if verbose:
                print("program %d: %s" % (i, "ok" if not f else "FAILED"))
            failures += [f] if f else []
            passed += not f
    for f in failures:
        print("FAIL", f)
    print("random gradients: %d passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
