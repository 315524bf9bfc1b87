#!/usr/bin/python3
"""float_literals_numpy.py — float literals read and print losslessly, checked
against numpy and against exact rational arithmetic.

Usage: /usr/bin/python3 tests/float_literals_numpy.py [PATH/TO/rly] [-v]
       (default: $RLY, else `rly` on PATH)

Values: every finite float16; float32 and float64 edge values (max, -max,
smallest normal and subnormal, 0.1, 16777217, ...) and random bit patterns;
inf, -inf, nan (and -nan, as glibc and so TVM print a negative NaN) in each
dtype.
Each is written as numpy prints it (`str(np.float32(x))`: 3.4028235e+38,
65500.0 for float16's 65504) with the dtype's suffix.  Also texts at,
just above and just below the halfway points between neighbouring values,
where reading through a double rounds twice (1.00048828125000000001f16 must
give 1.0009765625, not 1).  The expected bits come from Fraction arithmetic
(round to nearest, ties to even), not from numpy's parser, which goes
through a double.

Checks, per dtype:
  read     `let %a = [texts]; :save %a a.npy`: the saved bits are the exact
           rounding of each text
  print    `rly --print`: each printed literal rounds back to the same bits,
           has no more significant digits than numpy's shortest repr (whole
           numbers like 65504 excepted), and printing is a fixed point
Prints "float literals: N passed, N failed" and exits non-zero on a failure.
"""
import decimal
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

# dtype: (suffix, significand bits, minimum normal exponent, maximum exponent, unsigned view)
FORMATS = {
    "float16": ("f16", 11, -14, 15, np.uint16),
    "float32": ("f", 24, -126, 127, np.uint32),
    "float64": ("f64", 53, -1022, 1023, np.uint64),
}
MAX_TEXT = 120  # the lexer takes numeric literals shorter than 128 characters
RLY = None
VERBOSE = False


# ───────────────────────── exact rounding ─────────────────────────

def round_exact(text, dt):
    """text (decimal) rounded once, to nearest even, to dt: a numpy scalar (inf on overflow)."""
    _, p, emin, emax, _ = FORMATS[dt]
    q = Fraction(text)
    a = abs(q)
    if a == 0:
        return np.array(-0.0 if text.lstrip().startswith("-") else 0.0).astype(dt)[()]
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2^e <= a < 2^(e+2)
    if Fraction(2) ** e > a:
        e -= 1
    if Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (max(e, emin) - (p - 1))
    r = round(a / ulp) * ulp  # Fraction rounding: half to even
    v = float("inf") if r >= Fraction(2) ** (emax + 1) else float(r)
    return np.array(-v if q < 0 else v).astype(dt)[()]


def bits(x, dt):
    return int(np.array(x, dtype=dt).view(FORMATS[dt][4])[()])


# ───────────────────────── the values ─────────────────────────

def finite(a):
    return a[np.isfinite(a)]


def edge_values(dt):
    """The extremes, numbers numpy users meet, and every power of two (above
    one, the gap to the next float is twice the gap below: the shortest
    text is not always the nearest decimal)."""
    t = np.dtype(dt).type
    fi = np.finfo(dt)
    with np.errstate(over="ignore"):
        vals = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                t(0.1), t(-0.1), t(16777217), t(1) / t(3), t(0), -t(0), t(1), t(65504)]
        vals += [np.nextafter(fi.max, t(0)), np.nextafter(fi.tiny, t(0)),
                 np.nextafter(fi.tiny, t(1))]
        lo, hi = int(np.log2(float(fi.smallest_subnormal))), int(fi.maxexp)
        vals += [t(2.0) ** k for k in range(lo, hi)] + [-t(2.0) ** k for k in range(lo, hi)]
    return finite(np.array(vals, dtype=dt))


def sample_values(dt, rng):
    uint = FORMATS[dt][4]
    if dt == "float16":
        return finite(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16))
    n = 20000 if dt == "float32" else 5000
    info = np.iinfo(uint)
    raw = rng.integers(0, int(info.max), size=n, dtype=uint, endpoint=True)
    return np.concatenate([edge_values(dt), finite(raw.view(dt))])


def exact_decimal(f):
    """The exact decimal text of a dyadic rational."""
    with decimal.localcontext() as ctx:
        ctx.prec = 2000
        return decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator)


# A literal is in range up to the dtype's largest finite value as printed
# (TVM rejects 65505f16, which would round to 65504); past it, an error.
LARGEST = {"float16": decimal.Decimal("65504"), "float32": decimal.Decimal("3.4028235e+38"),
           "float64": decimal.Decimal("1.7976931348623157e+308")}


def tie_texts(dt, rng, n):
    """Texts at and around halfway points between neighbours (where a double
    lands on the tie): exactly on it, and a hair above and below."""
    vals = sample_values(dt, rng)
    vals = vals[(vals != 0) & (np.abs(vals) > 1e-30) & (np.abs(vals) < 1e30)]  # short exact texts
    vals = np.concatenate([edge_values(dt), rng.choice(vals, size=min(n, len(vals)), replace=False)])
    out = []
    for v in vals[vals != 0]:
        nxt = Fraction(2) ** (FORMATS[dt][3] + 1) * int(np.sign(v))  # past the largest: overflow
        if np.abs(v) < np.finfo(dt).max:
            nxt = Fraction(float(np.nextafter(v, np.sign(v) * np.finfo(dt).max)))
        d = exact_decimal((Fraction(float(v)) + nxt) / 2)
        hair = abs(d) * decimal.Decimal("1e-35")
        with decimal.localcontext() as ctx:
            ctx.prec = 2000
            for x in (d, d + hair, d - hair):
                s = str(x.normalize())
                if len(s) <= MAX_TEXT and abs(decimal.Decimal(s)) <= LARGEST[dt]:
                    out.append(s)
    return out


# ───────────────────────── running rly ─────────────────────────

def run(args, text, tmp):
    path = os.path.join(tmp, "in.rly")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([RLY] + args + [path], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError("rly %s failed:\n%s%s" % (" ".join(args), r.stdout, r.stderr[:4000]))
    return r.stdout


def tensor_text(texts, suffix):
    return "[" + ",\n ".join(t + suffix for t in texts) + "]"


def read_bits(texts, dt, tmp):
    """What rly reads: the literals as a tensor saved to .npy."""
    npy = os.path.join(tmp, "a.npy")
    run([], "let %%a = %s;\n:save %%a %s\n" % (tensor_text(texts, FORMATS[dt][0]), npy), tmp)
    return np.load(npy).view(FORMATS[dt][4])


LIT = re.compile(r"(-?(?:[0-9.]+(?:e[-+]?[0-9]+)?|inf|nan))(f16|f64|f)\b")


def printed(texts, dt, tmp):
    src = "def @f() {\n  %s\n}\n" % tensor_text(texts, FORMATS[dt][0])
    out = run(["--print"], src, tmp)
    again = run(["--print"], out, tmp)
    return [m.group(1) for m in LIT.finditer(out)], out == again


def sig_digits(text):
    mant = re.split("[eE]", text.lstrip("-"))[0].replace(".", "").lstrip("0")
    return len(mant.rstrip("0")) if "." in text or "e" in text else None


# ───────────────────────── the checks ─────────────────────────

class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if self.failed <= 20 or VERBOSE:
                print("FAIL:", what)


def check_read(tally, dt, texts, tmp):
    got = read_bits(texts, dt, tmp)
    want = [bits(round_exact(t, dt), dt) for t in texts]
    bad = [(t, hex(g), hex(w)) for t, g, w in zip(texts, got.tolist(), want) if g != w]
    for t, g, w in bad[:20]:
        print("FAIL: %s: `%s%s` read as %s, rounds to %s" % (dt, t, FORMATS[dt][0], g, w))
    tally.check(len(got) == len(want) and not bad,
                "%s: %d of %d literals read wrongly" % (dt, len(bad), len(texts)))


def check_print(tally, dt, vals, tmp):
    texts = [str(v) for v in vals]  # numpy's shortest repr
    out, fixed = printed(texts, dt, tmp)
    tally.check(fixed, "%s: printing is not a fixed point" % dt)
    tally.check(len(out) == len(texts), "%s: %d literals printed for %d" % (dt, len(out), len(texts)))
    lossy = longer = 0
    for np_text, ours, v in zip(texts, out, vals):
        if bits(round_exact(ours, dt), dt) != bits(v, dt):
            lossy += 1
            if lossy <= 20:
                print("FAIL: %s: %s prints as %s, which reads back differently" % (dt, np_text, ours))
        n_ours, n_np = sig_digits(ours), sig_digits(np_text)
        if n_ours is not None and n_np is not None and n_ours > n_np:
            longer += 1
            if longer <= 20:
                print("FAIL: %s: %s printed with more digits than numpy's %s" % (dt, ours, np_text))
    tally.check(lossy == 0, "%s: %d values print lossily" % (dt, lossy))
    tally.check(longer == 0, "%s: %d values print longer than numpy" % (dt, longer))
    if VERBOSE:
        print("%s: %d values printed, e.g. %s" % (dt, len(out), ", ".join(out[:8])))


NONFINITE = ["inf", "-inf", "nan", "-nan"]  # -nan: how glibc (and so TVM) writes a negative NaN


def check_nonfinite(tally, dt):
    """Infinities and NaN: `inf`, `-inf`, `nan`, `-nan` with the dtype's
    suffix read as numpy's values, and print back as numpy spells them
    (str(np.float16(np.inf)) is inf) with the suffix, at a fixed point."""
    suffix = FORMATS[dt][0]
    with tempfile.TemporaryDirectory() as tmp:
        got = read_bits(NONFINITE, dt, tmp).view(dt)
        want = np.array([np.inf, -np.inf, np.nan, -np.nan], dtype=dt)
        same = [bool(np.isnan(w) and np.isnan(g)) or g == w for g, w in zip(got, want)]
        tally.check(len(got) == len(want) and all(same), "%s: %s read as %s" % (dt, NONFINITE, got))
        out, fixed = printed(NONFINITE, dt, tmp)
        tally.check(fixed, "%s: printing inf/nan is not a fixed point" % dt)
        np_texts = [str(v) for v in want]  # numpy drops a NaN's sign too
        tally.check(out == np_texts,
                    "%s: inf/nan print as %s, numpy as %s (suffix %s)" % (dt, out, np_texts, suffix))


def main():
    global RLY, VERBOSE
    args = [a for a in sys.argv[1:] if a != "-v"]
    VERBOSE = "-v" in sys.argv[1:]
    RLY = args[0] if args else os.environ.get("RLY", "rly")
    rng = np.random.default_rng(10)
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for dt in FORMATS:
            vals = sample_values(dt, rng)
            texts = [str(v) for v in vals] + tie_texts(dt, rng, 3000)
            for check, arg in ((check_read, texts), (check_print, vals)):
                try:
                    check(tally, dt, arg, tmp)
                except RuntimeError as e:  # rly rejected a literal or crashed
                    tally.check(False, "%s: %s" % (dt, e))
            try:
                check_nonfinite(tally, dt)
            except RuntimeError as e:
                tally.check(False, "%s: %s" % (dt, e))
    print("float literals: %d passed, %d failed" % (tally.passed, tally.failed))
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
