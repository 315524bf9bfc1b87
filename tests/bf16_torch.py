#!/usr/bin/python3
"""bf16_torch.py — rly's bfloat16 against torch.bfloat16, in the jit and interp modes.

1. float32 → bfloat16 casts of every 4099th float32 bit pattern of both signs
   (all exponents: subnormals, zeros, infinities, NaNs) and of chosen values:
   ties to even in both directions, the largest finite value's tie (which
   overflows to inf), subnormal ties, -0.  The bits must equal torch's; a NaN
   must stay a NaN (torch's vectorized cast writes 0xffff, its scalar one
   0x7fc0: rly keeps the sign and upper payload with the quiet bit set).
2. bfloat16 → float32 (exact: the bits shifted up) and back.
3. float64 and int32 → bfloat16 rounded once (torch rounds float64 through
   float32, twice, so the reference here picks the nearer bfloat16 exactly).
4. Elementwise math on random bfloat16 tensors (every exponent, with
   specials): add, subtract, multiply, divide, sqrt, maximum, negative and
   a fused chain; each computed in float32 and rounded to bfloat16, as torch
   computes them on the CPU.  Bits must be equal (NaN: NaN).

bfloat16 tensors travel as .npy 2-byte void ('V2', rly's encoding), viewed
here as uint16 bits.

Usage: /usr/bin/python3 tests/bf16_torch.py [PATH/TO/rly]"""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
except ImportError as e:
    print(f"bf16_torch: skipped ({e})")
    sys.exit(77)

RLY = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RLY", "rly")
MODES = ("jit", "interp")


def torch_bits(t):
    """A bfloat16 torch tensor's bits as uint16."""
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


def is_nan_bits(b):
    return (b & 0x7FFF) > 0x7F80


def bf16_value(b):
    """The float64 value of bfloat16 bits (0x7f80 as 2^128: the rounding boundary)."""
    b = np.asarray(b, dtype=np.uint16)
    mag = (b & 0x7FFF).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        v = (mag << 16).view(np.float32).astype(np.float64)
    v = np.where(mag == 0x7F80, 2.0 ** 128, v)
    return np.where(b & 0x8000, -v, v)


def exact_bf16(d):
    """float64 values rounded once to bfloat16 (nearest, ties to even)."""
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(all="ignore"):
        f = np.abs(d).astype(np.float32)
    lo = (f.view(np.uint32) >> 16).astype(np.uint16)  # the truncated magnitude, then fixed below
    lo = np.where(bf16_value(lo) > np.abs(d), lo - 1, lo).astype(np.uint16)
    hi = (lo + 1).astype(np.uint16)
    mid = (bf16_value(lo) + bf16_value(hi)) / 2
    a = np.abs(d)
    up = (a > mid) | ((a == mid) & (lo & 1 == 1))
    mag = np.where(np.isinf(a), 0x7F80, np.where(up, hi, lo)).astype(np.uint16)
    mag = np.minimum(mag, 0x7F80).astype(np.uint16)
    out = np.where(np.signbit(d), mag | 0x8000, mag).astype(np.uint16)
    return np.where(np.isnan(d), 0x7FC0, out).astype(np.uint16)


def run(mode, d, script, arrays, outs):
    """Runs script with arrays saved as in.npz and returns the saved outputs."""
    np.savez(os.path.join(d, "in.npz"), **arrays)
    loads = "".join(f":load-tensor %{k} {os.path.join(d, 'in.npz')} {k}\n" for k in arrays)
    save = f":save {' '.join('%' + k for k in outs)} {os.path.join(d, 'out.npz')}\n"
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=os.path.join(d, "cache"))
    p = subprocess.run([RLY, "--exec", mode, "-"], input=loads + script + save, capture_output=True,
                       text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"rly ({mode}) failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    with np.load(os.path.join(d, "out.npz")) as z:
        return {k: z[k] for k in outs}


def bits_of(a):
    return a.view(np.uint16) if a.dtype == np.dtype("V2") else a


class Checker:
    def __init__(self):
        self.failed = 0

    def same_bits(self, what, got, want):
        got, want = bits_of(got), np.asarray(want, dtype=np.uint16)
        nan = is_nan_bits(want)
        bad = np.where(nan, ~is_nan_bits(got), got != want)
        if got.dtype != np.uint16 or got.shape != want.shape:
            bad = np.ones(want.shape, dtype=bool)
        n = int(np.count_nonzero(bad))
        self.failed += n > 0
        detail = ""
        if n:
            i = int(np.argmax(bad))
            detail = f": {n} differ, first at {i}: {got.ravel()[i]:#06x} != {want.ravel()[i]:#06x}"
        print(f"{what:48s} {want.size:8d} values {'ok' if not n else 'FAILED'}{detail}")


def cast_inputs():
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    chosen = np.array([0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x7F7F7FFF, 0x7F7F8000,
                       0xFF7F8000, 0x00008000, 0x00018000, 0x80008000, 0x007F8000, 0x007FFFFF,
                       0x00000001, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                       0x7F800001, 0x7FBFFFFF], dtype=np.uint32)
    return np.concatenate([chosen, bits]).view(np.float32)


def check_casts(c, d, mode):
    x = cast_inputs()
    wide = np.array([1 + 2.0 ** -8 + 2.0 ** -30, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8 - 2.0 ** -40,
                     3.3961775292304718e38, 3.39617752923047e38 * (1 - 2.0 ** -30), 1e300, -1e-300,
                     2.0 ** -133 * 1.5, 2.0 ** -134 + 2.0 ** -160, 2.0 ** -134, np.nan, -np.inf,
                     0.1, 1 / 3.0], dtype=np.float64)
    ints = np.array([257, 259, 65535, -65535, 16777217, 2 ** 31 - 1, -(2 ** 31), 0, 383, 385],
                    dtype=np.int32)
    n, m, k = x.size, wide.size, ints.size
    script = (f"def @c(%x: Tensor[({n}), float32], %w: Tensor[({m}), float64], %i: Tensor[({k}), int32]) {{\n"
              f"  %0 = cast(%x, dtype=\"bfloat16\");\n"
              f"  (%0, cast(%0, dtype=\"float32\"), cast(%w, dtype=\"bfloat16\"), cast(%i, dtype=\"bfloat16\"))\n}}\n"
              f"let %r = @c(%x, %w, %i);\nlet %b = %r.0;\nlet %f = %r.1;\nlet %bw = %r.2;\nlet %bi = %r.3;\n")
    got = run(mode, d, script, {"x": x, "w": wide, "i": ints}, ["b", "f", "bw", "bi"])
    ref = torch_bits(torch.from_numpy(x.copy()).to(torch.bfloat16))
    c.same_bits(f"{mode}: float32 -> bfloat16", got["b"], ref)
    back = (bits_of(got["b"]).astype(np.uint32) << 16).view(np.float32)
    ok = got["f"].dtype == np.float32 and np.array_equal(got["f"].view(np.uint32), back.view(np.uint32))
    c.failed += not ok
    print(f"{mode}: bfloat16 -> float32 exact{'':27s} {x.size:8d} values {'ok' if ok else 'FAILED'}")
    c.same_bits(f"{mode}: float64 -> bfloat16 (rounded once)", got["bw"], exact_bf16(wide))
    c.same_bits(f"{mode}: int32 -> bfloat16", got["bi"], exact_bf16(ints.astype(np.float64)))


def random_bf16(rng, n):
    """bfloat16 bits over every exponent with zeros, infinities, NaN and subnormals."""
    b = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    normalish = rng.integers(0x3C00, 0x4400, n).astype(np.uint16) | (rng.integers(0, 2, n) << 15).astype(np.uint16)
    b = np.where(rng.random(n) < 0.6, normalish, b).astype(np.uint16)
    b[:8] = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x7F7F, 0x3F80]
    return b


OPS = ["add(%a, %b)", "subtract(%a, %b)", "multiply(%a, %b)", "divide(%a, %b)", "sqrt(%a)",
       "maximum(%a, %b)", "negative(%a)", "multiply(add(%a, %b), subtract(%a, %b))"]


def torch_ops(a, b):
    return [a + b, a - b, a * b, a / b, torch.sqrt(a), torch.maximum(a, b), -a, (a + b) * (a - b)]


def check_math(c, d, mode):
    rng = np.random.default_rng(7)
    n = 4096
    a, b = random_bf16(rng, n), random_bf16(rng, n)
    ta = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    tb = torch.from_numpy(b.view(np.int16).copy()).view(torch.bfloat16)
    body = ", ".join(OPS)
    script = (f"def @m(%a: Tensor[({n}), bfloat16], %b: Tensor[({n}), bfloat16]) {{ ({body}) }}\n"
              f"let %r = @m(%a, %b);\n" + "".join(f"let %o{i} = %r.{i};\n" for i in range(len(OPS))))
    got = run(mode, d, script, {"a": a.view("V2"), "b": b.view("V2")}, [f"o{i}" for i in range(len(OPS))])
    for i, (op, want) in enumerate(zip(OPS, torch_ops(ta, tb))):
        c.same_bits(f"{mode}: {op}", got[f"o{i}"], torch_bits(want))


def main():
    c = Checker()
    with tempfile.TemporaryDirectory() as d:
        for mode in MODES:
            check_casts(c, d, mode)
            check_math(c, d, mode)
    print(f"bf16_torch: {'all passed' if not c.failed else f'{c.failed} failed'}")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
