#!/usr/bin/python3
"""kernels_numpy.py — differential test of the reference kernels against numpy.

Usage: /usr/bin/python3 tests/kernels_numpy.py PATH/TO/kernel_driver [-v] [--seed N] [--exec jit]
       [--only OP,OP...]

Generates cases for every op that has a kernel (random shapes with
broadcasting, empty dims, edge values: NaN, +-inf, -0, subnormals, integer
min/max, zero divisors), runs them all through the driver in batches (the
driver parses the attributes with rly's parser, runs the type relation and
the kernel), and compares with numpy:

  exact   same dtype and shape, same bits (floats: NaN where numpy has NaN,
          any payload; the sign of zero counts)
  ulp N   floats within N units in the last place of the reference, or
          within the dtype's smallest normal (subnormal noise); NaN and
          infinities exactly where the reference has them
  tol     |got - ref| <= rtol * scale + atol elementwise, where scale is a
          bound of the exact computation's magnitude (sum |x| for sums,
          |x|.|w| for products and convolutions)
  error   the driver must report an error containing the given text

Transcendental references are computed in float64 and rounded to the dtype.
Prints "kernels: N passed, N failed" and exits non-zero on any failure.

With --exec jit the same cases of every op with a TIR compute rule run
compiled instead (the driver lowers `op(...)` alone through the engine's jit
mode) and are held to the same expectations.  A case the rule declines (a
dtype it does not handle) is counted as not lowered; an op with a rule none
of whose cases lowers is a failure, so every rule is checked, and so is a
case made with compiled=True that does not lower (the quantized products
and the qnn ops: their rules must take every dtype and parameter form the
cases use).  A case's `consts` inputs are written into the compiled call
as tensor literals instead of parameters, so a dyn op sees a constant
shape argument (its type then has real dims, and its rule applies).
"""
import io
import math
import subprocess
import sys

import warnings

import re

import numpy as np

warnings.filterwarnings("ignore", category=RuntimeWarning)
ALL_INT = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
FLOATS = [np.float16, np.float32, np.float64]
NUMERIC = ALL_INT + FLOATS
ALL = [np.bool_] + NUMERIC
DT_NAME = {np.dtype(t): np.dtype(t).name for t in ALL}
# Ops without a kernel here (they come with the PRNG issue, or call_tir).
SKIP_OPS = {"call_tir", "nn.dropout_train"}

# Tolerances (see the module docstring).
ULP_TRANSCENDENTAL = {np.float16: 1, np.float32: 4, np.float64: 4}
RTOL_SUM = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}
RTOL_PRODUCT = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}


class Case:
    def __init__(self, op, attrs, inputs, expect, mode="exact", compiled=False, consts=(), **kw):
        self.op, self.attrs, self.inputs = op, attrs, [np.asarray(x) for x in inputs]
        self.expect = expect  # list of arrays, or an error substring
        self.mode, self.kw = mode, kw
        self.compiled = compiled  # --exec jit: the case must lower (not lowered is a failure)
        # --exec jit: the inputs at these positions are constants in the call (tensor
        # literals, so a dyn op's relation sees their values), not parameters
        self.consts = set(consts)


# ───────────────────────────── data generation ─────────────────────────────

RNG = np.random.default_rng(12345)


def rand_shape(rank=None, maxdim=5, allow_empty=True):
    if rank is None:
        rank = int(RNG.integers(0, 5))
    lo = 0 if allow_empty and RNG.random() < 0.08 else 1
    return tuple(int(RNG.integers(lo, maxdim + 1)) for _ in range(rank))


def bcast_pair(shape):
    """A shape that broadcasts to `shape` (some dims dropped or set to 1)."""
    s = list(shape[int(RNG.integers(0, len(shape) + 1)):]) if shape else []
    return tuple(1 if RNG.random() < 0.3 else d for d in s)


FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5]


def rand_float(shape, dt, scale=3.0, specials=True, positive=False):
    x = RNG.standard_normal(shape) * scale
    if positive:
        x = np.abs(x)
    x = x.astype(dt)
    if specials and x.size:
        k = int(RNG.integers(0, max(1, x.size // 3) + 1))
        idx = RNG.integers(0, x.size, k)
        sp = [v for v in FLOAT_SPECIALS if not positive or not v < 0]
        sp.append(np.finfo(dt).tiny / 4)  # a subnormal
        sp.append(float(np.finfo(dt).max))
        x.reshape(-1)[idx] = np.array(sp, dtype=np.float64)[RNG.integers(0, len(sp), k)].astype(dt)
    return x


def rand_int(shape, dt, lo=None, hi=None, edges=True):
    info = np.iinfo(dt)
    lo = max(info.min, -100) if lo is None else lo
    hi = min(info.max, 100) if hi is None else hi
    x = RNG.integers(lo, hi, shape, dtype=np.int64, endpoint=True).astype(dt) if dt != np.uint64 else \
        RNG.integers(max(lo, 0), hi, shape, dtype=np.uint64, endpoint=True)
    if edges and x.size:
        k = int(RNG.integers(0, max(1, x.size // 4) + 1))
        idx = RNG.integers(0, x.size, k)
        ev = np.array([info.min, info.max, 0, 1], dtype=dt)
        if info.min < 0:
            ev = np.concatenate([ev, np.array([-1], dtype=dt)])
        x.reshape(-1)[idx] = ev[RNG.integers(0, len(ev), k)]
    return x


def rand_of(shape, dt, **kw):
    dt = np.dtype(dt).type
    if dt == np.bool_:
        return RNG.random(shape) < 0.5
    if dt in FLOATS:
        return rand_float(shape, dt, **{k: v for k, v in kw.items() if k in ("scale", "specials", "positive")})
    return rand_int(shape, dt, **{k: v for k, v in kw.items() if k in ("lo", "hi", "edges")})


def dname(dt):
    return np.dtype(dt).name


def attrs_text(**kw):
    out = []
    for k, v in kw.items():
        if v is None:
            out.append(f"{k}=None")
        elif isinstance(v, bool):
            out.append(f"{k}={v}")
        elif isinstance(v, str):
            out.append(f'{k}="{v}"')
        elif isinstance(v, float):
            out.append(f"{k}={v!r}f" if np.isfinite(v) else f"{k}={'inff' if v > 0 else '-inff'}")
        elif isinstance(v, (list, tuple)):
            out.append(f"{k}=[{', '.join(str(int(x)) for x in v)}]")
        else:
            out.append(f"{k}={int(v)}")
    return ", ".join(out)


# ───────────────────────────── references ─────────────────────────────


def quiet(f):
    with np.errstate(all="ignore"):
        return f()


def trunc_div(a, b):
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        r = np.remainder(a, b)
        fix = (r != 0) & ((a < 0) != (b < 0))
        return (q + fix.astype(q.dtype)).astype(a.dtype)


def ref64(f, *xs, dt):
    """f on float64 copies of xs, rounded to dt."""
    with np.errstate(all="ignore"):
        return np.asarray(f(*[np.asarray(x, dtype=np.float64) for x in xs])).astype(dt)


def erf64(x):
    return np.vectorize(lambda v: math.erf(v) if not math.isnan(v) else math.nan, otypes=[np.float64])(x) \
        if x.size else x.astype(np.float64)


def sigmoid64(x):
    with np.errstate(all="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


# ───────────────────────────── generators ─────────────────────────────

GENERATORS = {}


def gen(*ops):
    def deco(f):
        for op in ops:
            GENERATORS[op] = (f, op)
        return f
    return deco


def zero_sign(op, a, b, ref):
    """Our rule for a zero result of maximum/minimum: -0 < +0."""
    a, b = np.broadcast_arrays(a, b)
    both = (a == 0) & (b == 0)
    neg = (np.signbit(a) & np.signbit(b)) if op == "maximum" else (np.signbit(a) | np.signbit(b))
    z = np.where(neg, -0.0, 0.0).astype(ref.dtype)
    return np.where(both, z, ref)


def no_zero(b):
    b = b.copy()
    b[b == 0] = 1
    return b


@gen("add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "maximum", "minimum")
def g_arith(op):
    np_f = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
            "minimum": np.minimum}
    for dt in NUMERIC:
        for _ in range(4):
            shape = rand_shape()
            sa, sb = (shape, bcast_pair(shape)) if RNG.random() < 0.5 else (bcast_pair(shape), shape)
            a, b = rand_of(sa, dt), rand_of(sb, dt)
            isint = dt not in FLOATS
            if op in ("divide", "floor_divide", "mod", "floor_mod") and isint:
                b = no_zero(b)
            if op in np_f:
                ref = quiet(lambda: np_f[op](a, b))
                if op in ("maximum", "minimum") and not isint:
                    ref = zero_sign(op, a, b, ref)
            elif op == "divide":
                ref = trunc_div(a, b) if isint else quiet(lambda: np.true_divide(a, b))
            elif op == "floor_divide":
                ref = quiet(lambda: np.floor_divide(a, b))
            elif op == "mod":
                ref = quiet(lambda: np.fmod(a, b))
            else:
                ref = quiet(lambda: np.remainder(a, b))
            yield Case(op, "", [a, b], [np.asarray(ref, dtype=dt)])
    if op in ("divide", "floor_divide", "mod", "floor_mod"):
        for dt in (np.int32, np.uint8, np.int64):
            yield Case(op, "", [np.array([1, 2, 3], dt), np.array([1, 0, 2], dt)],
                       f"{op}: integer division by zero")
        mn = np.iinfo(np.int32).min
        a, b = np.array([mn, mn, 7, -7], np.int32), np.array([-1, 1, -1, 2], np.int32)
        ref = {"divide": trunc_div(a, b), "floor_divide": quiet(lambda: np.floor_divide(a, b)),
               "mod": quiet(lambda: np.fmod(a, b)), "floor_mod": quiet(lambda: np.remainder(a, b))}[op]
        yield Case(op, "", [a, b], [ref.astype(np.int32)])


@gen("power")
def g_power(op):
    for dt in FLOATS:
        for _ in range(4):
            shape = rand_shape()
            a = rand_float(shape, dt, positive=True, scale=2)
            b = rand_float(bcast_pair(shape), dt, scale=2)
            yield Case(op, "", [a, b], [ref64(np.power, a, b, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
        a = rand_float((6,), dt, specials=False)
        b = np.array([2, 3, -1, 0, 1, -2], dt)
        yield Case(op, "", [a, b], [ref64(np.power, a, b, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
    for dt in ALL_INT:
        a = rand_int((3, 4), dt, edges=True)
        b = rand_int((4,), dt, lo=0, hi=9, edges=False)
        yield Case(op, "", [a, b], [quiet(lambda: np.power(a, b)).astype(dt)])
    a, b = np.array([1, -1, -1, 5, 2], np.int32), np.array([-3, -3, -2, -1, 40], np.int32)
    yield Case(op, "", [a, b], [np.array([1, -1, 1, 0, 0], np.int32)])
    yield Case(op, "", [np.array([0], np.int64), np.array([-1], np.int64)], "negative integer power")


@gen("logical_and", "logical_or", "logical_xor")
def g_logical(op):
    f = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}[op]
    for _ in range(6):
        shape = rand_shape()
        a, b = rand_of(shape, np.bool_), rand_of(bcast_pair(shape), np.bool_)
        yield Case(op, "", [a, b], [f(a, b)])


@gen("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
def g_compare(op):
    f = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
         "greater": np.greater, "greater_equal": np.greater_equal}[op]
    for dt in ALL:
        for _ in range(2):
            shape = rand_shape()
            a, b = rand_of(shape, dt), rand_of(bcast_pair(shape), dt)
            if RNG.random() < 0.5 and a.size and b.size:  # make some equal
                b = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)).copy()
                b.reshape(-1)[::2] = rand_of(b.reshape(-1)[::2].shape, dt)
            yield Case(op, "", [a, b], [f(a, b)])


EXACT_UNARY = {"negative": np.negative, "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
               "round": np.rint, "sign": np.sign, "sqrt": np.sqrt, "trunc": np.trunc, "copy": np.copy}
TRANS_UNARY = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": sigmoid64, "erf": erf64,
               "rsqrt": lambda x: 1 / np.sqrt(x), "log2": np.log2, "log10": np.log10, "sin": np.sin,
               "cos": np.cos, "tan": np.tan, "atan": np.arctan}


@gen("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
def g_bitwise(op):
    f = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
         "left_shift": np.left_shift, "right_shift": np.right_shift}[op]
    for dt in ALL_INT:
        shape = rand_shape()
        a = rand_of(shape, dt)
        bits = np.dtype(dt).itemsize * 8
        b = rand_of(bcast_pair(shape), dt, lo=0 if "shift" in op else None, hi=bits + 2 if "shift" in op else None)
        ref = quiet(lambda: f(a, b))
        if "shift" in op:  # numpy's rule: a count of at least the width gives 0 / the sign fill
            big = np.broadcast_to(b, ref.shape) >= bits
            neg = np.broadcast_to(a, ref.shape) < 0
            fill = np.where(neg, dt(-1) if dt in SIGNED else dt(0), dt(0)) if op == "right_shift" else dt(0)
            ref = np.where(big, np.asarray(fill, dtype=dt), ref)
        yield Case(op, "", [a, b], [np.asarray(ref).astype(dt)])


@gen("bitwise_not", "isnan", "isinf", "isfinite")
def g_bits_pred(op):
    f = {"bitwise_not": np.invert, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}[op]
    for dt in (ALL_INT + [np.bool_]) if op == "bitwise_not" else NUMERIC:
        x = rand_of(rand_shape(), dt)
        yield Case(op, "", [x], [f(x)])


@gen(*EXACT_UNARY)
def g_unary_exact(op):
    f = EXACT_UNARY[op]
    dts = FLOATS if op == "sqrt" else NUMERIC if op in ("floor", "ceil", "round", "abs", "negative", "trunc", "copy") \
        else FLOATS + SIGNED
    for dt in dts:
        for _ in range(3):
            x = rand_of(rand_shape(), dt, scale=5)
            if op == "sign" and dt in FLOATS:
                ref = np.where(x == 0, np.zeros_like(x), np.sign(x))  # sign(-0) is +0
            else:
                ref = quiet(lambda: f(x)) if dt in FLOATS or op in ("abs", "negative", "sign") else x
            yield Case(op, "", [x], [np.asarray(ref).astype(dt)])
    if op == "round":
        x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5000002], np.float32)
        yield Case(op, "", [x], [np.rint(x)])


@gen(*TRANS_UNARY)
def g_unary_trans(op):
    f = TRANS_UNARY[op]
    for dt in FLOATS:
        for _ in range(4):
            x = rand_float(rand_shape(maxdim=6), dt, scale=4, positive=op in ("log", "rsqrt") and RNG.random() < 0.7)
            yield Case(op, "", [x], [ref64(f, x, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])


@gen("logical_not")
def g_lnot(op):
    for _ in range(3):
        x = rand_of(rand_shape(), np.bool_)
        yield Case(op, "", [x], [np.logical_not(x)])


@gen("where")
def g_where(op):
    for dt in ALL:
        shape = rand_shape()
        c = rand_of(bcast_pair(shape), np.bool_)
        x, y = rand_of(shape, dt), rand_of(bcast_pair(shape), dt)
        yield Case(op, "", [c, x, y], [np.where(c, x, y)])
    c = np.array([0.0, np.nan, -0.0, 2.0], np.float32)
    x, y = np.array([1, 2, 3, 4], np.int8), np.array([9], np.int8)
    yield Case(op, "", [c, x, y], [np.where(c != 0, x, y)])


def castable(x, src, dst):
    """x with values every C compiler converts the same way into dst."""
    if src in FLOATS and dst not in FLOATS and dst != np.bool_:
        info = np.iinfo(dst)
        x = np.nan_to_num(x.astype(np.float64), nan=0, posinf=0, neginf=0)
        lo, hi = max(info.min, -1e15), min(info.max, 1e15)
        x = np.clip(np.trunc(x), lo / 2, hi / 2).astype(src)
    return x


@gen("cast")
def g_cast(op):
    for src in ALL:
        for dst in ALL:
            x = castable(rand_of(rand_shape(rank=1, maxdim=8), src), src, dst)
            yield Case(op, f'dtype="{dname(dst)}"', [x], [quiet(lambda: x.astype(dst))])
    # Our definitions where C and numpy leave it to the CPU: saturate, NaN -> 0.
    x = np.array([np.nan, 1e10, -1e10, 2.9, -2.9, np.inf, -np.inf], np.float32)
    yield Case(op, 'dtype="int32"', [x], [np.array([0, 2**31 - 1, -2**31, 2, -2, 2**31 - 1, -2**31], np.int32)])
    yield Case(op, 'dtype="uint8"', [x], [np.array([0, 255, 0, 2, 0, 255, 0], np.uint8)])
    x = np.array([1e300, -1e300, 2.0**63, -2.0**63, np.nan], np.float64)
    yield Case(op, 'dtype="int64"', [x], [np.array([2**63 - 1, -2**63, 2**63 - 1, -2**63, 0], np.int64)])
    yield Case(op, 'dtype="uint64"', [x], [np.array([2**64 - 1, 0, 2**63, 0, 0], np.uint64)])
    x = np.array([65519.99, 65520.0, 2.0**-25, 2.0**-25 * 1.0000001, -1e-30, 0.1, 1 + 2.0**-11 + 2.0**-30,
                  -(1 + 2.0**-11 + 2.0**-40), 2.0**-24 * (1.5 + 2.0**-30)], np.float64)
    yield Case(op, 'dtype="float16"', [x], [x.astype(np.float16)])


@gen("clip")
def g_clip(op):
    for dt in NUMERIC:
        x = rand_of(rand_shape(), dt)
        lo, hi = (-1.5, 2.25) if dt in FLOATS else (-3, 7) if dt in SIGNED else (3, 50)
        ref = np.minimum(np.maximum(x, dt(lo)), dt(hi)) if dt in FLOATS else np.clip(x, lo, hi).astype(dt)
        yield Case(op, attrs_text(a_min=float(lo), a_max=float(hi)), [x], [ref])


# ── reductions ──


def red_axes(ndim):
    """Random axis attribute: None, an int, or a list (maybe negative)."""
    r = RNG.random()
    if r < 0.25 or ndim == 0:
        return None
    if r < 0.5:
        return int(RNG.integers(-ndim, ndim))
    k = int(RNG.integers(0, ndim + 1))
    ax = sorted(RNG.choice(ndim, k, replace=False).tolist())
    return [a - ndim if RNG.random() < 0.3 else a for a in ax]


def norm_axes(axis, ndim, exclude):
    if axis is None:
        ax = list(range(ndim))
    else:
        ax = [a % ndim for a in (axis if isinstance(axis, list) else [axis])]
    if exclude and axis is not None:  # exclude applies to a given axis list only
        ax = [a for a in range(ndim) if a not in ax]
    return tuple(ax)


def red_attrs(axis, keepdims, exclude, extra=None):
    kw = {}
    if axis is not None:
        kw["axis"] = axis if isinstance(axis, list) else [axis]
    if keepdims:
        kw["keepdims"] = True
    if exclude:
        kw["exclude"] = True
    kw.update(extra or {})
    return attrs_text(**kw)


def moved(x, ax):
    """x with the reduced axes last, flattened into one: (kept..., n)."""
    kept = [a for a in range(x.ndim) if a not in ax]
    y = np.transpose(x, kept + list(ax))
    return y.reshape([x.shape[a] for a in kept] + [-1])


def keep(r, x, ax, keepdims):
    if keepdims:
        return r.reshape([1 if a in ax else x.shape[a] for a in range(x.ndim)])
    return r


def red_shape(x, ax, kd):
    return tuple(1 if a in ax else x.shape[a] for a in range(x.ndim) if kd or a not in ax)


def max_ref(op, x, ax, kd):
    """np.max/np.min, with our zero rule (-0 < +0) and empty inputs."""
    if x.size == 0:
        return np.empty(red_shape(x, ax, kd), x.dtype)
    r = np.asarray((np.max if op == "max" else np.min)(x, axis=ax, keepdims=True))
    if x.dtype.kind == "f":
        m = moved(x, ax)
        r0 = r.reshape(m.shape[:-1])
        z = (m == 0) & (~np.signbit(m) if op == "max" else np.signbit(m))
        fix = (r0 == 0) & np.any(z, axis=-1)
        r0 = np.where(fix, np.array(0.0 if op == "max" else -0.0, x.dtype), r0)
        r0 = np.where((r0 == 0) & ~fix, np.array(-0.0 if op == "max" else 0.0, x.dtype), r0)
        r = r0.reshape(r.shape)
    return r.reshape(red_shape(x, ax, kd))


@gen("sum", "mean", "max", "min", "prod")
def g_reduce(op):
    for dt in NUMERIC:
        for _ in range(4):
            x = rand_of(rand_shape(), dt, scale=2, specials=op in ("max", "min"), lo=-5, hi=5, edges=False)
            if op == "prod" and dt in FLOATS:
                x = (1 + 0.2 * x.astype(np.float64)).astype(dt)
            axis, kd, ex = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.2
            ax = norm_axes(axis, x.ndim, ex)
            n = int(np.prod([x.shape[a] for a in ax])) if ax else 1
            attrs = red_attrs(axis, kd, ex)
            if n == 0 and (op in ("max", "min") or (op == "mean" and dt not in FLOATS)):
                if np.prod([x.shape[a] for a in range(x.ndim) if a not in ax]) > 0:
                    yield Case(op, attrs, [x], "empty")
                continue
            if op in ("max", "min"):
                yield Case(op, attrs, [x], [max_ref(op, x, ax, kd)])
                continue
            if dt in FLOATS:
                x64 = x.astype(np.float64)
                ref = quiet(lambda: {"sum": np.sum, "mean": np.mean, "prod": np.prod}[op](x64, axis=ax, keepdims=kd))
                scale = np.sum(np.abs(x64), axis=ax, keepdims=kd) / (n if op == "mean" and n else 1)
                if op == "prod":
                    scale = np.abs(ref)
                rt = (RTOL_SUM if op != "prod" else RTOL_PRODUCT)[dt] * (1 + (op == "prod") * n)
                yield Case(op, attrs, [x], [np.asarray(ref).astype(dt)], "tol", rtol=rt,
                           scale=[np.asarray(scale)], atol=float(np.finfo(dt).tiny))
            else:
                s = quiet(lambda: np.sum(x, axis=ax, keepdims=kd, dtype=dt) if op != "prod"
                          else np.prod(x, axis=ax, keepdims=kd, dtype=dt))
                if op == "mean":  # the wrapped sum divided by the count, truncated
                    s = np.asarray(s).astype(object)
                    s = np.vectorize(lambda v: abs(v) // n * (1 if v >= 0 else -1), otypes=[object])(s) if s.size else s
                yield Case(op, attrs, [x], [np.asarray(s).astype(dt)])


@gen("all", "any")
def g_all_any(op):
    f = np.all if op == "all" else np.any
    for _ in range(6):
        x = RNG.random(rand_shape()) < (0.9 if op == "all" else 0.1)
        axis, kd, ex = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.2
        ax = norm_axes(axis, x.ndim, ex)
        yield Case(op, red_attrs(axis, kd, ex), [x], [np.asarray(f(x, axis=ax, keepdims=kd))])


@gen("logsumexp")
def g_logsumexp(op):
    for dt in FLOATS:
        for _ in range(3):
            x = rand_float(rand_shape(allow_empty=False), dt, specials=False)
            axis, kd = red_axes(x.ndim), RNG.random() < 0.3
            ax = norm_axes(axis, x.ndim, False)

            def lse(v, bound=False):
                m = np.max(v, axis=ax, keepdims=True)
                s = np.log(np.sum(np.exp(v - m), axis=ax, keepdims=True))
                n = np.prod([v.shape[a] for a in ax]) if ax else 1
                r = (np.abs(m) + np.abs(s) + n) if bound else s + m  # max + log(sum) may cancel
                return r if kd else np.squeeze(r, axis=ax)
            yield Case(op, red_attrs(axis, kd, False), [x], [ref64(lse, x, dt=dt)], "tol",
                       rtol=4 * float(np.finfo(dt).eps), scale=[lse(x.astype(np.float64), True)],
                       atol=float(np.finfo(dt).tiny))


@gen("argmax", "argmin")
def g_argreduce(op):
    for dt in NUMERIC:
        for _ in range(3):
            x = rand_of(rand_shape(allow_empty=False), dt, lo=-3, hi=3, edges=False)
            axis, kd, ex = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.2
            last = RNG.random() < 0.3
            ax = norm_axes(axis, x.ndim, ex)
            if not ax:
                continue
            m = moved(x, ax)
            f = np.argmax if op == "argmax" else np.argmin
            if last and not (dt in FLOATS and np.isnan(x).any()):
                r = m.shape[-1] - 1 - f(m[..., ::-1], axis=-1)
            else:
                last = last and not (dt in FLOATS and np.isnan(x).any())
                r = f(m, axis=-1)
            extra = {"select_last_index": True} if last else None
            yield Case(op, red_attrs(axis, kd, ex, extra), [x], [keep(np.asarray(r, np.int32), x, ax, kd)])
    x = np.array([[1, np.nan, 3, np.nan], [2, 2, 1, 1]], np.float32)
    f = np.argmax if op == "argmax" else np.argmin
    yield Case(op, "axis=[1]", [x], [f(x, axis=1).astype(np.int32)])


# ── nn ──


def mm_tol(a, b, ref, dt, out_dt):
    if np.dtype(out_dt).kind != "f":
        return {}
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return dict(mode="tol", rtol=RTOL_PRODUCT[np.dtype(out_dt).type] * 4, scale=[scale],
                atol=float(np.finfo(out_dt).tiny))


def matmul_ref(a, b, out_dt):
    if np.dtype(out_dt).kind == "f":
        return ref64(np.matmul, a, b, dt=out_dt)
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(out_dt)


def mm_case(op, attrs, ins, a, b, out_dt):
    ref = matmul_ref(a, b, out_dt)
    kw = mm_tol(a, b, ref, a.dtype, out_dt)
    mode = kw.pop("mode", "exact")
    return Case(op, attrs, ins, [ref], mode, **kw)


def mm_dtypes():
    return [(np.float32, None), (np.float64, None), (np.float16, None), (np.int8, np.int32),
            (np.int32, None), (np.uint8, np.uint16)]


@gen("nn.dense")
def g_dense(op):
    for dt, out in mm_dtypes():
        for _ in range(3):
            lead = rand_shape(rank=int(RNG.integers(1, 3)), maxdim=4)
            k, n = int(RNG.integers(1, 9)), int(RNG.integers(1, 7))
            x = rand_of(lead + (k,), dt, specials=False, lo=-5, hi=5)
            w = rand_of((n, k), dt, specials=False, lo=-5, hi=5)
            attrs = attrs_text(units=n, out_dtype=dname(out)) if out else attrs_text(units=n) if RNG.random() < .5 else ""
            yield mm_case(op, attrs, [x, w], x, w.T, out or dt)


@gen("nn.matmul")
def g_matmul(op):
    for dt, out in mm_dtypes():
        for ta in (False, True):
            for tb in (False, True):
                lead = rand_shape(rank=int(RNG.integers(0, 2)), maxdim=3, allow_empty=False)
                m, k, n = (int(RNG.integers(1, 6)) for _ in range(3))
                a = rand_of(lead + ((k, m) if ta else (m, k)), dt, specials=False, lo=-4, hi=4)
                b = rand_of((n, k) if tb else (k, n), dt, specials=False, lo=-4, hi=4)
                at = np.swapaxes(a, -1, -2) if ta else a
                bt = b.T if tb else b
                kw = dict(transpose_a=ta, transpose_b=tb)
                if out:
                    kw["out_dtype"] = dname(out)
                yield mm_case(op, attrs_text(**kw), [a, b], at, bt, out or dt)
    a, b = rand_float((4,), np.float32, specials=False), rand_float((4, 3), np.float32, specials=False)
    yield mm_case(op, "", [a, b], a, b, np.float32)


@gen("nn.batch_matmul")
def g_batch_matmul(op):
    for dt, out in mm_dtypes():
        for ta in (False, True):
            for tb in (False, True):
                B, m, k, n = (int(RNG.integers(1, 5)) for _ in range(4))
                ba, bb = (B, B) if RNG.random() < 0.6 else ((1, B) if RNG.random() < .5 else (B, 1))
                x = rand_of((ba,) + ((k, m) if ta else (m, k)), dt, specials=False, lo=-4, hi=4)
                y = rand_of((bb,) + ((n, k) if tb else (k, n)), dt, specials=False, lo=-4, hi=4)
                xt = np.swapaxes(x, 1, 2) if ta else x
                yt = np.swapaxes(y, 1, 2) if tb else y
                kw = dict(transpose_a=ta, transpose_b=tb)
                if out:
                    kw["out_dtype"] = dname(out)
                yield mm_case(op, attrs_text(**kw), [x, y], xt, yt, out or dt)


@gen("nn.bias_add")
def g_bias_add(op):
    for dt in NUMERIC:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 5))), dt)
        axis = int(RNG.integers(-x.ndim, x.ndim))
        b = rand_of((x.shape[axis],), dt)
        shp = [1] * x.ndim
        shp[axis] = x.shape[axis]
        yield Case(op, attrs_text(axis=axis), [x, b], [quiet(lambda: (x + b.reshape(shp)).astype(dt))])


@gen("nn.relu", "nn.leaky_relu")
def g_relu(op):
    for dt in FLOATS + SIGNED + [np.uint8]:
        x = rand_of(rand_shape(), dt)
        if op == "nn.relu":
            keep = (x > 0) | (np.isnan(x) if dt in FLOATS else False)
            yield Case(op, "", [x], [np.where(keep, x, dt(0))])
        elif dt in FLOATS:
            alpha = 0.125 if RNG.random() < 0.5 else 0.375
            yield Case(op, attrs_text(alpha=alpha), [x], [quiet(lambda: np.where(x > 0, x, x * dt(alpha)))])


def softmax64(x, axis, log):
    if x.size == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - m)
        s = np.sum(e, axis=axis, keepdims=True)
        return (x - m) - np.log(s) if log else e / s


@gen("nn.softmax", "nn.log_softmax")
def g_softmax(op):
    for dt in FLOATS:
        for _ in range(3):
            x = rand_float(rand_shape(rank=int(RNG.integers(1, 4))), dt, specials=RNG.random() < 0.3)
            axis = int(RNG.integers(-x.ndim, x.ndim))
            ref = ref64(lambda v: softmax64(v, axis, op == "nn.log_softmax"), x, dt=dt)
            attrs = "" if axis in (-1, x.ndim - 1) and RNG.random() < .3 else attrs_text(axis=axis)
            if op == "nn.softmax":
                yield Case(op, attrs, [x], [ref], "ulp", n=4)
                continue
            # log_softmax = (x - max) - log(sum): cancellation, so bound by the terms.
            with np.errstate(all="ignore"):
                x64 = x.astype(np.float64)
                m = np.max(x64, axis=axis, keepdims=True) if x.size else 0
                # the log of a sum of n exps: ~n roundings, absolute in the log
                scale = np.abs(x64 - m) + np.abs(np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True))) \
                    + x.shape[axis]
            yield Case(op, attrs, [x], [ref], "tol", rtol=4 * float(np.finfo(dt).eps), scale=[scale],
                       atol=float(np.finfo(dt).tiny))


@gen("nn.layer_norm")
def g_layer_norm(op):
    for dt in FLOATS:
        for _ in range(3):
            x = rand_float(rand_shape(rank=int(RNG.integers(1, 4)), allow_empty=False), dt, specials=False)
            axis = int(RNG.integers(-x.ndim, x.ndim))
            g, b = rand_float((x.shape[axis],), dt, specials=False), rand_float((x.shape[axis],), dt, specials=False)
            center, scale, eps = RNG.random() < .8, RNG.random() < .8, 1e-5

            def f(v, gg, bb):
                mu = v.mean(axis=axis, keepdims=True)
                var = ((v - mu) ** 2).mean(axis=axis, keepdims=True)
                shp = [1] * v.ndim
                shp[axis] = -1
                y = (v - mu) / np.sqrt(var + float(np.float32(eps)))
                return y * (gg.reshape(shp) if scale else 1) + (bb.reshape(shp) if center else 0)
            # y * gamma + beta cancels: bound the error by the terms' sizes.
            bound = ref64(lambda v, gg, bb: np.abs(f(v, gg, 0 * bb)) + np.abs(f(0 * v, 0 * gg, bb)), x, g, b,
                          dt=np.float64)
            yield Case(op, attrs_text(axis=axis, epsilon=eps, center=center, scale=scale), [x, g, b],
                       [ref64(f, x, g, b, dt=dt)], "tol", rtol=16 * float(np.finfo(dt).eps), scale=[bound],
                       atol=float(np.finfo(dt).tiny))


@gen("nn.batch_flatten")
def g_flatten(op):
    for dt in (np.float32, np.int8):
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 5)), allow_empty=False), dt)
        yield Case(op, "", [x], [x.reshape(x.shape[0], -1) if x.ndim != 1 else x.reshape(x.shape[0], 1)])


@gen("nn.dropout")
def g_dropout(op):
    x = rand_float((3, 4), np.float32)
    yield Case(op, "rate=0.25f", [x], [x, np.ones_like(x)])


def pads(p):
    return (p[0], p[0], p[0], p[0]) if len(p) == 1 else (p[0], p[1], p[0], p[1]) if len(p) == 2 else tuple(p)


def conv_ref(x, w, s, p, d, groups):
    t, l, b, r = pads(p)
    N, C, H, W = x.shape
    O, cg, KH, KW = w.shape
    xp = np.zeros((N, C, H + t + b, W + l + r))
    xp[:, :, t:t + H, l:l + W] = x
    OH = (H + t + b - (d[0] * (KH - 1) + 1)) // s[0] + 1
    OW = (W + l + r - (d[1] * (KW - 1) + 1)) // s[1] + 1
    out = np.zeros((N, O, OH, OW))
    og = O // groups
    for o in range(O):
        g = o // og
        for a in range(KH):
            for c in range(KW):
                patch = xp[:, g * cg:(g + 1) * cg, a * d[0]:a * d[0] + s[0] * (OH - 1) + 1:s[0],
                           c * d[1]:c * d[1] + s[1] * (OW - 1) + 1:s[1]]
                out[:, o] += np.tensordot(patch, w[o, :, a, c], axes=([1], [0]))
    return out


@gen("nn.conv2d")
def g_conv2d(op):
    for dt in (np.float32, np.float64, np.float16, np.int8):
        for _ in range(5):
            groups = int(RNG.choice([1, 1, 2, 3]))
            cg, og = int(RNG.integers(1, 3)), int(RNG.integers(1, 3))
            C, O = cg * groups, og * groups
            KH, KW = int(RNG.integers(1, 4)), int(RNG.integers(1, 4))
            s = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
            d = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
            p = [int(v) for v in RNG.integers(0, 3, int(RNG.choice([1, 2, 4])))]
            t, l, b, r = pads(p)
            H = int(RNG.integers(max(1, d[0] * (KH - 1) + 1 - t - b), 8))
            W = int(RNG.integers(max(1, d[1] * (KW - 1) + 1 - l - r), 8))
            x = rand_of((int(RNG.integers(1, 3)), C, H, W), dt, specials=False, lo=-4, hi=4)
            w = rand_of((O, cg, KH, KW), dt, specials=False, lo=-4, hi=4)
            out = np.int32 if dt == np.int8 else dt
            kw = dict(strides=s, padding=p, dilation=d, groups=groups)
            if out != dt:
                kw["out_dtype"] = dname(out)
            ref = conv_ref(x.astype(np.float64), w.astype(np.float64), s, p, d, groups)
            if out == np.int32:
                yield Case(op, attrs_text(**kw), [x, w], [ref.astype(np.int32)])
            else:
                scale = conv_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, p, d, groups)
                yield Case(op, attrs_text(**kw), [x, w], [ref.astype(dt)], "tol",
                           rtol=RTOL_PRODUCT[dt] * 4, scale=[scale], atol=float(np.finfo(dt).tiny))


def out_size(n, k, s, d, lo, hi, ceil):
    eff = d * (k - 1) + 1
    num = n + lo + hi - eff
    return (num + (s - 1 if ceil else 0)) // s + 1


def pool_ref(x, k, s, d, p, ceil, is_max, include_pad, lowest=-np.inf):
    t, l, b, r = pads(p)
    N, C, H, W = x.shape
    OH, OW = out_size(H, k[0], s[0], d[0], t, b, ceil), out_size(W, k[1], s[1], d[1], l, r, ceil)
    out = np.zeros((N, C, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            hs = [oh * s[0] - t + a * d[0] for a in range(k[0])]
            ws = [ow * s[1] - l + c * d[1] for c in range(k[1])]
            hv, wv = [h for h in hs if 0 <= h < H], [w for w in ws if 0 <= w < W]
            win = x[:, :, hv][:, :, :, wv].reshape(N, C, -1)
            if is_max:  # with our zero rule: -0 < +0
                if not win.shape[-1]:
                    out[:, :, oh, ow] = lowest
                    continue
                m = np.max(win, axis=-1)
                pos0 = np.any((win == 0) & ~np.signbit(win), axis=-1)
                out[:, :, oh, ow] = np.where(m == 0, np.where(pos0, 0.0, -0.0), m)
            else:
                cnt = (sum(1 for h in hs if h < H + b) * sum(1 for w in ws if w < W + r)) if include_pad \
                    else len(hv) * len(wv)
                out[:, :, oh, ow] = win.sum(axis=-1) / cnt if cnt else 0
    return out


@gen("nn.max_pool2d", "nn.avg_pool2d")
def g_pool(op):
    is_max = op == "nn.max_pool2d"
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(8):
            k = [int(RNG.integers(1, 4)), int(RNG.integers(1, 4))]
            s = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
            d = [int(RNG.integers(1, 3)), 1]
            p = [int(v) for v in RNG.integers(0, 2, int(RNG.choice([1, 2, 4])))]
            t, l, b, r = pads(p)
            p = [min(v, k[0] // 2 if i % 2 == 0 else k[1] // 2) for i, v in enumerate(p)] if len(p) == 4 else \
                [min(v, min(k) // 2) for v in p]
            ceil = RNG.random() < 0.4
            H, W = int(RNG.integers(d[0] * (k[0] - 1) + 1, 8)), int(RNG.integers(k[1], 8))
            x = rand_of((1, 2, H, W), dt, specials=is_max)
            kw = dict(pool_size=k, strides=s, dilation=d, padding=p, ceil_mode=ceil)
            incl = False
            if not is_max:
                incl = RNG.random() < 0.5
                kw["count_include_pad"] = incl
            ref = pool_ref(x.astype(np.float64), k, s, d, p, ceil, is_max, incl, float(np.finfo(dt).min))
            if is_max:
                yield Case(op, attrs_text(**kw), [x], [ref.astype(dt)])
            else:
                scale = pool_ref(np.abs(x.astype(np.float64)), k, s, d, p, ceil, False, incl)
                yield Case(op, attrs_text(**kw), [x], [ref.astype(dt)], "tol", rtol=4 * float(np.finfo(dt).eps),
                           scale=[scale], atol=float(np.finfo(dt).tiny))
    x = rand_int((1, 1, 5, 5), np.int32, lo=-9, hi=9, edges=False)
    ref = pool_ref(x.astype(np.float64), [2, 2], [2, 2], [1, 1], [1], True, is_max, True, -2.0**31)
    yield Case(op, attrs_text(pool_size=[2, 2], strides=[2, 2], padding=[1], ceil_mode=True,
                              **({} if is_max else {"count_include_pad": True})),
               [x], [np.trunc(ref).astype(np.int32)])


# ── transform ──


def tvm_reshape(shape, newshape):
    out, src, infer = [], 0, -1
    i = 0
    while i < len(newshape):
        v = newshape[i]
        if v > 0:
            out.append(v)
            src += 1
        elif v == 0:
            out.append(shape[src])
            src += 1
        elif v == -1:
            infer = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out.extend(shape[src:])
            src = len(shape)
        elif v == -3:
            out.append(shape[src] * shape[src + 1])
            src += 2
        elif v == -4:
            a, b = newshape[i + 1], newshape[i + 2]
            if a == -1:
                a = shape[src] // b
            if b == -1:
                b = shape[src] // a
            out += [a, b]
            src += 1
            i += 2
        i += 1
    if infer >= 0:
        out[infer] = int(np.prod(shape)) // int(np.prod(out))
    return tuple(out)


@gen("reshape", "dyn.reshape")
def g_reshape(op):
    specs = [((2, 3, 4), [0, -1]), ((2, 3, 4), [-1]), ((2, 3, 4), [4, 0, 2]), ((2, 3, 4), [-2]),
             ((2, 3, 4), [-3, 4]), ((2, 3, 4), [-4, 1, 2, -2]), ((6, 4), [-4, -1, 3, 4]),
             ((2, 3, 4), [2, -1, 2]), ((5,), [1, 5, 1]), ((), [1, 1]), ((0, 3), [3, -1]), ((1,), [])]
    for shape, ns in specs:
        x = rand_of(shape, np.float32)
        out = tvm_reshape(shape, ns)
        if op == "reshape":
            yield Case(op, attrs_text(newshape=ns), [x], [x.reshape(out)])
        elif all(v > 0 or v == -1 for v in ns):
            yield Case(op, "", [x, np.array(ns, np.int64)], [x.reshape(out)])


@gen("transpose")
def g_transpose(op):
    for dt in (np.float32, np.int8, np.float16, np.int64, np.bool_):
        x = rand_of(rand_shape(), dt)
        if RNG.random() < 0.3:
            yield Case(op, "", [x], [np.transpose(x)])
        else:
            axes = RNG.permutation(x.ndim).tolist()
            axes = [a - x.ndim if RNG.random() < 0.3 else a for a in axes]
            yield Case(op, attrs_text(axes=axes), [x], [np.transpose(x, axes)])


@gen("expand_dims")
def g_expand_dims(op):
    for _ in range(5):
        x = rand_of(rand_shape(), np.float32)
        axis, k = int(RNG.integers(-x.ndim - 1, x.ndim + 1)), int(RNG.integers(0, 3))
        at = axis if axis >= 0 else axis + x.ndim + 1
        out = x.shape[:at] + (1,) * k + x.shape[at:]
        yield Case(op, attrs_text(axis=axis, num_newaxis=k), [x], [x.reshape(out)])


@gen("squeeze")
def g_squeeze(op):
    for shape, dt in [((1, 3, 1), np.int16), ((1,), np.float32), ((2, 1, 1, 4), np.int64), ((3,), np.bool_),
                      ((1, 2, 1), np.float32)]:
        x = rand_of(shape, dt)
        yield Case(op, "", [x], [np.squeeze(x)])
        ones = [i for i, d in enumerate(shape) if d == 1]
        if ones:
            yield Case(op, attrs_text(axis=[ones[-1] - len(shape)]), [x], [np.squeeze(x, axis=ones[-1])])


@gen("concatenate", "stack")
def g_join(op):
    for dt in (np.float32, np.int8, np.float16, np.uint64, np.int64, np.float64, np.bool_):
        for _ in range(2):
            base = rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4)
            n = int(RNG.integers(1, 4))
            if op == "concatenate":
                axis = int(RNG.integers(-len(base), len(base)))
                xs = []
                for _ in range(n):
                    s = list(base)
                    s[axis] = int(RNG.integers(0, 4))
                    xs.append(rand_of(tuple(s), dt))
                yield Case(op, attrs_text(axis=axis), xs, [np.concatenate(xs, axis=axis)])
            else:
                axis = int(RNG.integers(-len(base) - 1, len(base) + 1))
                xs = [rand_of(base, dt) for _ in range(n)]
                yield Case(op, attrs_text(axis=axis), xs, [np.stack(xs, axis=axis)])


@gen("split")
def g_split(op):
    x = rand_of((6, 4, 3), np.float32)
    for sec, axis in [(3, 0), (2, 1), (1, 2), (3, -1)]:
        yield Case(op, attrs_text(indices_or_sections=sec, axis=axis), [x], np.split(x, sec, axis=axis))
    for idx, axis in [([1, 3], 0), ([0, 4], 1), ([2], -1), ([2, 2, 5], 0)]:
        yield Case(op, attrs_text(indices_or_sections=idx, axis=axis), [x], np.split(x, idx, axis=axis))


def slice_cases():
    for _ in range(30):
        shape = rand_shape(rank=int(RNG.integers(1, 4)), maxdim=6)
        k = int(RNG.integers(1, len(shape) + 1))
        begin, end, strides = [], [], []
        for i in range(k):
            n = shape[i]
            begin.append(int(RNG.integers(-n - 2, n + 3)))
            end.append(int(RNG.integers(-n - 2, n + 3)))
            strides.append(int(RNG.choice([1, 2, -1, -2, 3])))
        yield shape, begin, end, strides


@gen("strided_slice", "dyn.strided_slice")
def g_strided_slice(op):
    for shape, b, e, s in slice_cases():
        x = rand_of(shape, np.float32)
        ref = x[tuple(slice(bb, ee, ss) for bb, ee, ss in zip(b, e, s))]
        if op == "strided_slice":
            yield Case(op, attrs_text(begin=b, end=e, strides=s), [x], [ref])
        else:
            ins = [x, np.array(b, np.int64), np.array(e, np.int32), np.array(s, np.int64)]
            yield Case(op, "", ins, [ref])
            if len(b):  # constant begin, end and strides: the jit mode compiles the slice
                yield Case(op, "", ins, [ref], consts=[1, 2, 3], compiled=True)
    for _ in range(10):  # slice_mode="size": end is a length (-1: to the end); strides ignored
        shape = rand_shape(rank=int(RNG.integers(1, 4)), maxdim=6)
        x = rand_of(shape, np.int8)
        b = [int(RNG.integers(-n - 2, n + 3)) for n in shape]
        sz = [int(RNG.integers(-1, n + 2)) for n in shape]
        idx = []
        for n, bb, ss in zip(shape, b, sz):
            bb = min(max(bb + n if bb < 0 else bb, 0), n)
            idx.append(slice(bb, n if ss < 0 else min(bb + ss, n)))
        kw = dict(begin=b, end=sz, slice_mode="size")
        if op == "strided_slice":
            yield Case(op, attrs_text(**kw), [x], [x[tuple(idx)]])
        else:
            yield Case(op, attrs_text(slice_mode="size"), [x, np.array(b), np.array(sz)], [x[tuple(idx)]])
    for _ in range(6):  # axes: the entries apply to the listed axes
        shape = rand_shape(rank=3, maxdim=5)
        x = rand_of(shape, np.float16)
        axes = sorted(RNG.choice(3, int(RNG.integers(1, 4)), replace=False).tolist())
        b = [int(RNG.integers(-shape[a], shape[a] + 1)) for a in axes]
        e = [int(RNG.integers(-shape[a], shape[a] + 1)) for a in axes]
        s = [int(RNG.choice([1, -1, 2]))] * len(axes)
        idx = [slice(None)] * 3
        for a, bb, ee, ss in zip(axes, b, e, s):
            idx[a] = slice(bb, ee, ss)
        if op == "strided_slice":
            yield Case(op, attrs_text(begin=b, end=e, strides=s, axes=axes), [x], [x[tuple(idx)]])
    x = rand_of((5, 6), np.int32)
    if op == "strided_slice":
        yield Case(op, attrs_text(begin=[1, 2], end=[2, -1], slice_mode="size"), [x], [x[1:3, 2:]])
        yield Case(op, attrs_text(begin=[4], end=[-6], strides=[-1]), [x], [x[4::-1]])
        yield Case(op, attrs_text(begin=[1], end=[3], axes=[1]), [x], [x[:, 1:3]])
        yield Case(op, attrs_text(begin=[0, 5], end=[5, 0], strides=[2]), [x], [x[0:5:2, 5:0:2]])
        yield Case(op, attrs_text(begin=[3], end=[2147483647], strides=[1]), [x], [x[3:]])
    else:
        yield Case(op, "", [x, np.array([3, 1]), np.array([0, 5])], [x[3:0, 1:5]])


@gen("take")
def g_take(op):
    for dt in (np.float32, np.int8, np.float16):
        for mode in ("clip", "wrap", "fast"):
            for _ in range(3):
                x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), allow_empty=False), dt)
                none = RNG.random() < 0.25
                axis = None if none else int(RNG.integers(-x.ndim, x.ndim))
                n = x.size if none else x.shape[axis]
                ishape = rand_shape(rank=int(RNG.integers(0, 3)), maxdim=3)
                lo, hi = (-n, n - 1) if mode == "fast" else (-2 * n - 1, 2 * n + 1)
                ix = RNG.integers(lo, hi + 1, ishape).astype(RNG.choice([np.int32, np.int64]))
                kw = {"mode": mode}
                if axis is not None:
                    kw["axis"] = axis
                ref = np.take(x, ix, axis=axis, mode="raise" if mode == "fast" else mode)
                yield Case(op, attrs_text(**kw), [x, ix], [ref])
    x = rand_of((5, 2), np.float32)
    yield Case(op, 'axis=0, mode="fast"', [x, np.array([7], np.int32)],
               "take: index 7 is out of bounds for axis 0 with size 5")
    yield Case(op, 'axis=1, mode="fast"', [x, np.array([[0, -3]], np.int64)],
               "take: index -3 is out of bounds for axis 1 with size 2")
    # batch_dims: out[b, i, q] = x[b, idx[b, i], q]
    x = rand_of((2, 4, 3), np.float32)
    ix = RNG.integers(0, 4, (2, 5))
    ref = np.stack([np.take(x[bb], ix[bb], axis=0) for bb in range(2)])
    yield Case(op, attrs_text(axis=1, batch_dims=1), [x, ix], [ref])


@gen("broadcast_to", "dyn.broadcast_to")
def g_broadcast_to(op):
    for dt in (np.float32, np.bool_, np.int64):
        for _ in range(3):
            shape = rand_shape()
            x = rand_of(bcast_pair(shape), dt)
            if op == "broadcast_to":
                yield Case(op, attrs_text(shape=list(shape)), [x], [np.broadcast_to(x, shape)])
            else:
                yield Case(op, "", [x, np.array(shape, np.int64).reshape(-1)], [np.broadcast_to(x, shape)])
                # a constant shape: the type knows the result, the jit mode compiles it
                # (an empty shape has no literal: the driver passes it as an input)
                yield Case(op, "", [x, np.array(shape, np.int64).reshape(-1)],
                           [np.broadcast_to(x, shape)], consts=[1],
                           compiled=dt != np.bool_ and len(shape) > 0)


@gen("zeros", "ones")
def g_zeros(op):
    for dt in ALL:
        shape = rand_shape()
        f = np.zeros if op == "zeros" else np.ones
        yield Case(op, attrs_text(shape=list(shape), dtype=dname(dt)), [], [f(shape, dt)])
    yield Case(op, attrs_text(shape=[2]), [], [(np.zeros if op == "zeros" else np.ones)((2,), np.float32)])


@gen("zeros_like", "ones_like")
def g_like(op):
    for dt in ALL:
        x = rand_of(rand_shape(), dt)
        yield Case(op, "", [x], [(np.zeros_like if op == "zeros_like" else np.ones_like)(x)])


@gen("full", "dyn.full")
def g_full(op):
    for dt in ALL:
        for fdt in (np.float32, np.int32, np.float64):
            shape = rand_shape()
            v = np.array(RNG.standard_normal() * 5, fdt) if fdt != np.int32 else np.array(-3, fdt)
            ref = np.full(shape, v).astype(dt) if not (np.dtype(dt).kind in "iu" and np.dtype(fdt).kind == "f") \
                else np.full(shape, np.trunc(v)).astype(dt) if (np.dtype(dt).kind == "i" or v >= 0) else np.zeros(shape, dt)
            if op == "full":
                yield Case(op, attrs_text(shape=list(shape), dtype=dname(dt)), [v], [ref])
            else:
                yield Case(op, attrs_text(dtype=dname(dt)), [v, np.array(shape, np.int64).reshape(-1)], [ref])
    v = np.array(2.5, np.float16)
    if op == "full":
        yield Case(op, attrs_text(shape=[3]), [v], [np.full((3,), v)])


@gen("arange")
def g_arange(op):
    for dt in (np.float32, np.float64, np.int32, np.int64, np.float16, np.int8):
        for start, stop, step in [(0, 10, 1), (2, 11, 3), (10, 0, -2), (1.5, 4.0, 0.25), (5, 5, 1),
                                  (0.1, 1.0, 0.1), (-3, 3, 7), (3, -3, 1)]:
            if np.dtype(dt).kind != "f" and any(float(v) != int(v) for v in (start, stop, step)):
                continue
            sdt = np.float32 if isinstance(step, float) or isinstance(start, float) else np.int32
            a, b, c = (np.array(v, sdt) for v in (start, stop, step))
            n = max(0, math.ceil((float(b) - float(a)) / float(c))) if sdt == np.float32 else len(range(int(a), int(b), int(c)))
            with np.errstate(all="ignore"):
                ref = (dt(a) + dt(c) * np.arange(n).astype(dt)).astype(dt) if np.dtype(dt).kind == "f" else \
                    np.arange(int(a), int(b), int(c)).astype(dt)
            yield Case(op, attrs_text(dtype=dname(dt)), [a, b, c], [ref])
    yield Case(op, "", [np.array(0), np.array(3), np.array(0)], "step")


@gen("shape_of", "ndarray_size")
def g_shape_of(op):
    for dt, xdt in ((np.int32, np.float16), (np.int64, np.float32), (None, np.int32), (None, np.float16)):
        x = rand_of(rand_shape(), xdt)
        ref = np.array(x.shape, dt or np.int32) if op == "shape_of" else np.array(x.size, dt or np.int32)
        yield Case(op, attrs_text(dtype=dname(dt)) if dt else "", [x], [ref.reshape(-1) if op == "shape_of" else ref])


@gen("one_hot")
def g_one_hot(op):
    for dt in (np.float32, np.int32, np.int8):
        for _ in range(3):
            ix = RNG.integers(-1, 5, rand_shape(rank=int(RNG.integers(0, 3)), maxdim=3)).astype(np.int32)
            depth, axis = int(RNG.integers(0, 6)), int(RNG.integers(-1, ix.ndim + 1))
            on, off = np.array(3, dt), np.array(-1 if dt != np.uint8 else 0, dt)
            at = ix.ndim if axis == -1 else axis
            hot = np.expand_dims(ix, at) == np.arange(depth).reshape([-1] + [1] * (ix.ndim - at))
            yield Case(op, attrs_text(depth=depth, axis=axis), [ix, on, off], [np.where(hot, on, off).astype(dt)])


@gen("large")
def g_large(op):
    """A few larger tensors: many blocks per row, many rows, big reductions."""
    a, b = rand_float((37, 700), np.float32), rand_float((700,), np.float32)
    yield Case("add", "", [a, b], [a + b])
    c = rand_of((37, 1), np.bool_)
    yield Case("where", "", [c, a, b], [np.where(c, a, b)])
    yield Case("cast", 'dtype="float16"', [a], [a.astype(np.float16)])
    yield Case("exp", "", [a], [ref64(np.exp, a, dt=np.float32)], "ulp", n=4)
    x = rand_float((3, 2000), np.float32, specials=False)
    yield Case("sum", "axis=[1]", [x], [ref64(lambda v: v.sum(axis=1), x, dt=np.float32)], "tol",
               rtol=RTOL_SUM[np.float32], scale=[np.abs(x.astype(np.float64)).sum(axis=1)], atol=0.0)
    yield Case("sum", "axis=[0]", [x], [ref64(lambda v: v.sum(axis=0), x, dt=np.float32)], "tol",
               rtol=RTOL_SUM[np.float32], scale=[np.abs(x.astype(np.float64)).sum(axis=0)], atol=0.0)
    x, w = rand_float((20, 300), np.float32, specials=False), rand_float((50, 300), np.float32, specials=False)
    yield mm_case("nn.dense", "", [x, w], x, w.T, np.float32)
    t = rand_of((30, 20, 10), np.int16)
    yield Case("transpose", "axes=[2, 0, 1]", [t], [np.transpose(t, (2, 0, 1))])
    ix = RNG.integers(0, 20, (40, 3))
    yield Case("take", "axis=1", [t, ix], [np.take(t, ix, axis=1, mode="clip")])


# ───────────────────────────── driver I/O ─────────────────────────────


def npy_bytes(a):
    b = io.BytesIO()
    np.lib.format.write_array(b, np.array(a, order="C", copy=True), version=(1, 0), allow_pickle=False)
    return b.getvalue()


def encode(c):
    out = [b"CASE %s\nATTRS %s\nNIN %d\n" % (c.op.encode(), c.attrs.encode(), len(c.inputs))]
    for i, a in enumerate(c.inputs):
        d = npy_bytes(a)
        out.append(b"%s %d\n" % (b"CONST" if i in c.consts else b"NPY", len(d)) + d)
    return b"".join(out)


def run_driver(driver, cases, exec_args=()):
    """Runs the cases; a result per case: ("ok", [arrays]), ("err", msg) or
    ("nolower", None) (jit mode: the op call did not lower)."""
    p = subprocess.run([driver, *exec_args], input=b"".join(encode(c) for c in cases), capture_output=True)
    f = io.BytesIO(p.stdout)
    res = []
    while True:
        line = f.readline()
        if not line:
            break
        if line.startswith(b"ERR "):
            res.append(("err", line[4:].decode().strip()))
            continue
        if line.startswith(b"NOLOWER"):
            res.append(("nolower", line[8:].decode().strip()))
            continue
        n = int(line.split()[1])
        arrs = []
        for _ in range(n):
            size = int(f.readline().split()[1])
            arrs.append(np.lib.format.read_array(io.BytesIO(f.read(size))))
        res.append(("ok", arrs))
    err = p.stderr.decode(errors="replace")
    rc = p.returncode
    if "runtime error:" in err or "Sanitizer" in err:
        rc = rc or 1  # UBSan may report and continue: still a failure
    if rc != 0 or len(res) != len(cases):
        sys.stderr.write(err[-4000:])
    return res, rc


# ───────────────────────────── comparison ─────────────────────────────


def ordered(a):
    """Float bits mapped to integers whose difference counts ulps."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(it).astype(np.int64) if a.dtype.itemsize < 8 else a.view(it).astype(object)
    mask = (1 << (8 * a.dtype.itemsize - 1)) - 1
    return np.where(i < 0, -(i & mask), i)


def compare(c, got):
    if not isinstance(c.expect, list):
        return "expected an error containing %r, got a result" % c.expect
    if len(got) != len(c.expect):
        return "got %d outputs, expected %d" % (len(got), len(c.expect))
    for k, (g, e) in enumerate(zip(got, c.expect)):
        if e is None:
            continue
        e = np.asarray(e)
        if g.dtype != e.dtype or g.shape != e.shape:
            return "output %d: got %s%s, expected %s%s" % (k, g.dtype, g.shape, e.dtype, e.shape)
        msg = compare_values(c, k, g, e)
        if msg:
            return msg
    return None


def compare_values(c, k, g, e):
    if e.dtype.kind != "f":
        bad = g != e
    else:
        gn, en = np.isnan(g), np.isnan(e)
        bad = gn != en
        both = ~gn & ~en
        if c.mode == "exact":
            it = {2: np.uint16, 4: np.uint32, 8: np.uint64}[e.dtype.itemsize]
            bad |= both & (g.view(it) != e.view(it))
        elif c.mode == "ulp":
            inf = np.isinf(g) | np.isinf(e)
            bad |= both & inf & (g != e)
            fin = both & ~inf
            ulps = np.abs(ordered(g) - ordered(e))
            small = np.abs(g.astype(np.float64) - e.astype(np.float64)) <= np.finfo(e.dtype).tiny
            bad |= fin & (ulps > c.kw["n"]) & ~small
        else:
            scale = np.broadcast_to(np.asarray(c.kw["scale"][k], np.float64), e.shape)
            with np.errstate(all="ignore"):
                diff = np.abs(g.astype(np.float64) - e.astype(np.float64))
                lim = c.kw["rtol"] * scale + c.kw["atol"] + np.abs(e.astype(np.float64)) * np.finfo(e.dtype).eps
                inf = np.isinf(g) | np.isinf(e)
                bad |= both & ((inf & (g != e)) | (~inf & ~(diff <= lim)))
    if np.any(bad):
        i = tuple(int(v[0]) for v in np.nonzero(bad)) if e.ndim else ()
        return "output %d (%s): %d mismatches; first at %s: got %r, expected %r" % (
            k, c.mode, int(np.sum(bad)), i, g[i], e[i])
    return None


# ───────────────────────────── case files ─────────────────────────────
# More generators live in tests/kernels/<family>.py, one file per op family,
# so each family's cases are kept with each other.  They are run in this
# module's namespace: they use Case, the data generators, the tolerances and
# @gen from above as if written here.

# Cases a file adds to ops whose generators may live in another file:
# (op, extra) pairs, extra(op)'s cases run after those of op's generator
# once every file is loaded.
MORE_CASES = []


def chained(base, extra):
    def g(name):
        yield from base(name)
        yield from extra(name)
    return g


def load_case_files():
    import glob
    import os
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
    for path in sorted(glob.glob(os.path.join(here, "*.py"))):
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), globals())
    for op, extra in MORE_CASES:
        GENERATORS[op] = (chained(GENERATORS[op][0], extra), op)


def describe(c):
    ins = ", ".join("%s%s" % (a.dtype, a.shape) for a in c.inputs)
    return "%s(%s%s%s)" % (c.op, ins, ", " if c.attrs and ins else "", c.attrs)


def same_failure(op, got):
    """Whether a compiled kernel's run-time error (a bound or a zero divisor
    its code checks, in its own words) is reported as an op's: named by the
    op (or by the op of an identical group whose kernel it shares: unsigned
    floor_divide is divide's kernel), or, as before, by the kernel."""
    return re.match(r"[a-z_.0-9]+: ", got) is not None or got.startswith("@fused_")


def main():
    global RNG
    argv = sys.argv[1:]
    if "--seed" in argv:
        i = argv.index("--seed")
        RNG = np.random.default_rng(int(argv[i + 1]))
        del argv[i:i + 2]
    exec_args = ()
    if "--exec" in argv:
        i = argv.index("--exec")
        exec_args = ("--exec", argv[i + 1])
        del argv[i:i + 2]
    jit = exec_args == ("--exec", "jit")
    only = None
    if "--only" in argv:  # a comma-separated list of ops: their cases alone
        i = argv.index("--only")
        only = set(argv[i + 1].split(","))
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("-")]
    verbose = "-v" in argv
    if not args:
        print(__doc__)
        return 2
    driver = args[0]
    load_case_files()
    ops = [l.split() for l in subprocess.run([driver, "--ops"], capture_output=True, text=True,
                                             check=True).stdout.split("\n") if l]
    with_kernel = [o[0] for o in ops if o[1] == "1"]
    with_rule = {o[0] for o in ops if o[2] == "1"}
    cases, passed, failed = [], 0, 0
    if only is not None:
        with_kernel = [op for op in with_kernel if op in only]
    for op in with_kernel:
        if op not in GENERATORS:
            print("kernels: no numpy cases for op %s" % op)
            failed += 1
            continue
        f, name = GENERATORS[op]
        cases.extend(f(name))
    if only is None:
        cases.extend(g_large("large"))
    if jit:
        cases = [c for c in cases if c.op in with_rule]
    for op in GENERATORS:
        if op not in with_kernel and op != "large" and verbose:
            print("kernels: skipping %s (not registered)" % op)
    lowered, not_lowered, required = {}, {}, 0
    for lo in range(0, len(cases), 400):
        batch = cases[lo:lo + 400]
        res, rc = run_driver(driver, batch, exec_args)
        if rc != 0:
            print("FAIL driver exited with status %d on cases %d..%d" % (rc, lo, lo + len(batch) - 1))
            failed += 1
        for i, c in enumerate(batch):
            if i < len(res) and res[i][0] == "nolower":
                not_lowered[c.op] = not_lowered.get(c.op, 0) + 1
                if c.compiled:
                    failed += 1
                    print("FAIL %s must run compiled; not lowered: %s" % (describe(c), res[i][1]))
                elif verbose:
                    print("--   %s: not lowered: %s" % (describe(c), res[i][1]))
                continue
            if jit and i < len(res) and res[i][0] == "ok":
                lowered[c.op] = lowered.get(c.op, 0) + 1
                required += c.compiled
            if i >= len(res):
                msg = "driver crashed (exit %d) before this case" % rc
            elif res[i][0] == "err":
                # compiled code reports run-time errors (bounds, zero divisors) in its own
                # words, at the user's op: the same kind of failure is enough
                ok = isinstance(c.expect, str) and (c.expect in res[i][1] or
                                                    jit and same_failure(c.op, res[i][1]))
                msg = None if ok else "error: " + res[i][1]
            else:
                msg = compare(c, res[i][1])
            if msg:
                failed += 1
                if failed <= 40:
                    print("FAIL %s: %s" % (describe(c), msg))
            else:
                passed += 1
                if verbose:
                    print("ok   %s" % describe(c))
    if jit:
        for op in sorted(with_rule & set(with_kernel)):
            if not lowered.get(op):
                print("FAIL %s has a compute rule but none of its %d cases ran compiled" %
                      (op, not_lowered.get(op, 0)))
                failed += 1
        print("kernels (jit): %d ops with a compute rule and a kernel, %d of them checked compiled; "
              "%d cases ran compiled (%d of them required to), %d not lowered" %
              (len(with_rule & set(with_kernel)), len(lowered), sum(lowered.values()), required,
               sum(not_lowered.values())))
    print("kernels: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
