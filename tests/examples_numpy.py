#!/usr/bin/python3
"""examples_numpy.py — the examples' printed values against numpy.

Usage: /usr/bin/python3 tests/examples_numpy.py [PATH/TO/rly] [-v]
       (default: $RLY, else `rly` on PATH)

Each checked example runs in batch mode, once per execution mode
(RLY_EXEC=interp and RLY_EXEC=jit); every printed value (lines that are not
`defined ...` messages) is parsed and compared, in order, with a value numpy
computes from the same inputs.  Integers and exact float results must be
equal; results of transcendental functions (tanh) within a stated tolerance
(rtol 1e-5, atol 1e-6: libm and numpy may differ in the last place, and an
RNN carries the difference along; in jit mode dense products add in float32
like a BLAS, where the reference kernels add in float64, and float32 tanh is
TVM's fast_tanh, within 5e-7 of tanh).
Prints "examples: N passed, N failed" and exits non-zero on any failure."""
import os
import re
import subprocess
import sys

import numpy as np

from tir_numpy import parse_value  # the printed-value reader shared by the numpy checks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


VALUE_START = re.compile(r"[\[\-0-9]|\((?![a-z])|True|False|inf|nan")


def values(out):
    """Splits batch output into printed values (a value may span lines);
    other lines (`defined @f`, what `:bind` prints) are skipped."""
    vals, cur, depth = [], [], 0
    for line in out.splitlines():
        if not cur and not VALUE_START.match(line):
            continue
        cur.append(line)
        depth += line.count("[") + line.count("(") - line.count("]") - line.count(")")
        if depth == 0:
            vals.append(" ".join(cur))
            cur = []
    return vals


# ───────────────────────────── expectations ─────────────────────────────

def dynamic_expected():
    f32 = np.float32
    gray = np.arange(4, dtype=f32).reshape(1, 2, 2, 1)

    def middle(n):
        x = np.arange(n, dtype=f32)
        return x[n // 4:n - n // 4]

    wx = ((np.arange(32, dtype=f32) % 7) - 3).reshape(8, 4) * f32(0.125)
    wh = ((np.arange(64, dtype=f32) % 5) - 2).reshape(8, 8) * f32(0.0625)

    def rnn(length):
        xs = (((np.arange(length * 4, dtype=f32) % 9) - 4) * f32(0.25)).reshape(length, 4)
        h = np.zeros((1, 8), f32)
        for t in range(length):
            h = np.tanh(xs[t:t + 1] @ wx.T + h @ wh.T).astype(f32)
        return h

    return [
        (np.arange(5), "exact"), (np.arange(2), "exact"),
        (np.array([1, 2, 2, 3]), "exact"), (np.concatenate([gray] * 3, axis=3), "exact"),
        (np.array([1, 2, 2, 3]), "exact"),
        (np.arange(3, dtype=f32).reshape(3, 1), "exact"),
        (middle(8), "exact"), (middle(12), "exact"),
        (np.arange(3, dtype=f32).reshape(3, 1) + np.array([[0, 10]], f32), "exact"),
        (rnn(1), "tol"), (rnn(7), "tol"), (rnn(16), "tol"), (rnn(100), "tol"),
    ]


def digits_expected():
    """The accuracy of numpy's predictions (committed with the weights) on the
    test split, which rly's predictions must equal one for one."""
    t = np.load(os.path.join(ROOT, "examples/digits/test.npz"))
    hits = t["pred"] == t["y"]
    return [(np.float32(hits.sum()) / np.float32(len(hits)), "exact"), (hits.sum(), "exact"),
            (True, "exact")]


EXAMPLES = {
    "examples/dynamic.rly": dynamic_expected,
    "examples/digits.rly": digits_expected,
}


# ───────────────────────────── driver ─────────────────────────────

def run(rly, path, mode):
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    p = subprocess.run([rly, path], capture_output=True, text=True, cwd=ROOT, env=env,
                       timeout=600)
    return p.returncode, p.stdout, p.stderr


def compare(got, want, how):
    want = np.asarray(want)
    # read the printed value in numpy's dtype (shortest round-trip text), then widen both
    got = np.array(got, dtype=want.dtype).astype(np.float64)
    want = want.astype(np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, numpy {want.shape}"
    if how == "exact":
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    else:
        bad = np.abs(got - want) > 1e-5 * np.abs(want) + 1e-6
    if bad.any():
        i = np.argwhere(bad)[0]
        return f"at {tuple(i)}: rly {got[tuple(i)]!r}, numpy {want[tuple(i)]!r}"
    return None


def kernels_once(out, path):
    """`:kernels` rows (jit mode): no kernel compiled twice for a new length;
    the RNN step kernel served every length."""
    rows = re.findall(r"^@(\w+) .*?(\d+) +[\d.]+ ms$", out, re.M)
    names = [n for n, _ in rows]
    if "dynamic" not in path:
        return None
    if not rows:
        return "no :kernels rows"
    if len(set(names)) != len(names):
        return f"a kernel was compiled twice: {sorted(names)}"
    rnn = [int(c) for n, c in rows if re.match(r"fused_nn_dense_add_(fast_)?tanh", n)]
    if rnn != [1 + 7 + 16 + 100]:
        return f"the RNN step kernel ran {rnn} times, expected one kernel called 124 times"
    return None


def check(rly, path, expect, verbose):
    fails = 0
    for mode in ("interp", "jit"):
        rc, out, err = run(rly, path, mode)
        if rc != 0:
            print(f"FAIL {path} [{mode}]: exit {rc}\n{err}")
            fails += 1
            continue
        msg = kernels_once(out, path) if mode == "jit" else None
        if msg:
            print(f"FAIL {path} [{mode}]: {msg}")
            fails += 1
        vals = values(out)
        if len(vals) != len(expect):
            print(f"FAIL {path} [{mode}]: {len(vals)} values printed, {len(expect)} expected")
            fails += 1
            continue
        for k, (text, (want, how)) in enumerate(zip(vals, expect)):
            msg = compare(parse_value(text), want, how)
            if msg:
                print(f"FAIL {path} [{mode}] value {k + 1}: {msg}")
                fails += 1
            elif verbose:
                print(f"ok   {path} [{mode}] value {k + 1} ({how})")
    return fails


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    rly = args[0] if args else os.environ.get("RLY", "rly")
    verbose = "-v" in sys.argv
    passed = failed = 0
    for path, make in EXAMPLES.items():
        f = check(rly, path, make(), verbose)
        passed += f == 0
        failed += f != 0
    print(f"examples: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
