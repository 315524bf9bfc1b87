"""Cases of the elementwise family's ops added with the op set (run in
tests/kernels_numpy.py's namespace: Case, @gen, rand_float/rand_int/rand_of,
ULP_ and RTOL_ tables, trunc_div, ref64, erf64 come from there).

New generators: the inverse and hyperbolic trig functions, the fast_
functions (TVM's float32 approximations, emulated step by step in numpy
float32, and their accuracy against the exact functions), trunc_divide and
trunc_mod.  Ops
whose generators live in kernels_numpy.py (bitwise ops, shifts, floor_mod,
logical_xor, isnan/isinf/isfinite, trunc, copy, sin, cos, tan, atan, log2,
log10) get more cases here through extend(): the dtypes those leave out
(integers for float math, bool), negative shift counts, empty tensors and
the relations' errors.
"""


def extend(op, extra):
    """Adds extra(op)'s cases after those of op's generator."""
    base = GENERATORS[op][0]

    def g(name):
        yield from base(name)
        yield from extra(name)
    GENERATORS[op] = (g, op)


def cast_ref(v, dt):
    """float64 values converted as rly's cast: NaN -> 0, truncation toward 0,
    saturation at the dtype's range; bool is nonzero."""
    v = np.asarray(v, np.float64)
    if dt == np.bool_:
        return v != 0
    info = np.iinfo(dt)
    out = np.empty(v.shape, dt)
    flat, res = v.reshape(-1), out.reshape(-1)
    for i, x in enumerate(flat):
        if math.isnan(x):
            res[i] = 0
        elif x >= info.max:
            res[i] = info.max
        elif x <= info.min:
            res[i] = info.min
        else:
            res[i] = int(math.trunc(x))
    return out


def edge_floats(dt):
    """Every special value of a float dtype once: NaN, infinities, signed
    zeros, a subnormal, the extremes."""
    fi = np.finfo(dt)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, fi.tiny / 4, -fi.tiny / 4, float(fi.max),
                     -float(fi.max), 1.0, -1.0, 0.5, -0.5], np.float64).astype(dt)


# ── float math: the inverse and hyperbolic functions, the fast_ ones ──

DOMAIN_UNARY = {
    "asin": (np.arcsin, 1.2), "acos": (np.arccos, 1.2), "atanh": (np.arctanh, 1.2),
    "sinh": (np.sinh, 4.0), "cosh": (np.cosh, 4.0), "asinh": (np.arcsinh, 50.0),
    "acosh": (np.arccosh, 5.0),
}


@gen(*DOMAIN_UNARY)
def g_domain_unary(op):
    f, scale = DOMAIN_UNARY[op]
    for dt in FLOATS:
        for _ in range(4):
            x = rand_float(rand_shape(maxdim=6), dt, scale=scale / 2)
            if op == "acosh":
                x = np.abs(x).astype(dt) + dt(RNG.random() < .5)
            yield Case(op, "", [x], [ref64(f, x, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
        x = edge_floats(dt)
        yield Case(op, "", [x], [ref64(f, x, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
        yield Case(op, "", [np.zeros((2, 0, 3), dt)], [np.zeros((2, 0, 3), dt)])
    for dt in ALL_INT:  # computed in double, converted back with the cast rules
        x = rand_int((3, 4), dt, lo=-5 if dt in SIGNED else 0, hi=5, edges=False)
        with np.errstate(all="ignore"):
            yield Case(op, "", [x], [cast_ref(f(x.astype(np.float64)), dt)])


# ── fast_exp, fast_tanh, fast_erf: TVM's float32 approximations ──
# The constants of ops/fast_math.h; the same float32 operations in the same
# order, so on float32 (and float16, computed in float32 and rounded) the
# emulation is the expected result bit for bit.  float64 computes the exact
# functions.

FAST_EXP_P = [1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1,
              5.0000001201E-1]
FAST_TANH = (9.0, [-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                   5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03],
             [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03])
FAST_ERF = (4.0, [-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02],
            [-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
             -1.42647390514189e-02])


def fast_exp32(x):
    """Clamp, n = floor(x log2 e + 1/2), f = x - n ln 2, 1 + f + f^2 P(f), times 2^n from its
    exponent bits, max with x."""
    F = np.float32
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        c = np.maximum(np.minimum(x, F(88.3762626647950)), F(-88.3762626647949))
        n = np.floor(c * F(1.44269504088896341) + F(0.5))
        f = c - n * F(0.6931471805599453)
        y = F(FAST_EXP_P[0])
        for p in FAST_EXP_P[1:]:
            y = y * f + F(p)
        y = y * f * f + f + F(1)
        two_n = (np.nan_to_num(n + F(127)).astype(np.int32) << 23).view(F)
        return np.maximum(two_n * y, x)


def fast_rational32(x, clamp, P, Q):
    """x P(x^2) / Q(x^2) on x clamped to [-clamp, clamp], Horner from the highest degree."""
    F = np.float32
    x = np.asarray(x, F)
    with np.errstate(all="ignore"):
        x = np.maximum(np.minimum(x, F(clamp)), F(-clamp))
        x2 = x * x
        num, den = x2 * F(P[0]) + F(P[1]), x2 * F(Q[0]) + F(Q[1])
        for p in P[2:]:
            num = x2 * num + F(p)
        for q in Q[2:]:
            den = x2 * den + F(q)
        return x * num / den


# op: (the float32 approximation, the exact function, the valid range, the stated accuracy:
# relative error <= rtol * (1 + slope |x|), beyond the rounding of the exact result).
# fast_exp reduces its argument in float32 (n ln 2 is rounded), so its error grows with |x|:
# 1e-7 + 7e-8 |x| (1.7e-7 for |x| <= 1, 8e-7 at |x| = 10, 6.3e-6 at the ends); below -87.3 results leave
# float32's normal range (they flush to 0 from about -88), above 88.3 they overflow.
# fast_tanh and fast_erf stay within 5e-7 everywhere (their clamps are where float32 reaches +-1).
FAST = {
    "fast_exp": (fast_exp32, np.exp, (-87.3, 88.3), 1e-7, 0.7),
    "fast_tanh": (lambda x: fast_rational32(x, *FAST_TANH), np.tanh, (-12.0, 12.0), 5e-7, 0.0),
    "fast_erf": (lambda x: fast_rational32(x, *FAST_ERF), erf64, (-6.0, 6.0), 5e-7, 0.0),
}


@gen(*FAST)
def g_fast(op):
    approx, exact, (lo, hi), rtol, slope = FAST[op]
    for dt in FLOATS:
        for scale in (1.0, 4.0, 30.0):
            x = rand_float(rand_shape(maxdim=6), dt, scale=scale)
            if dt == np.float64:
                yield Case(op, "", [x], [ref64(exact, x, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
            else:
                yield Case(op, "", [x], [approx(x.astype(np.float32)).astype(dt)])
        x = edge_floats(dt)
        yield Case(op, "", [x], [ref64(exact, x, dt=dt)] if dt == np.float64 else
                   [approx(x.astype(np.float32)).astype(dt)], "ulp" if dt == np.float64 else "exact",
                   n=ULP_TRANSCENDENTAL[dt])
        yield Case(op, "", [np.zeros((2, 0, 3), dt)], [np.zeros((2, 0, 3), dt)])
    # The accuracy over the valid range, against the exact function in float64.
    x = np.concatenate([np.linspace(lo, hi, 4001), RNG.uniform(lo, hi, 2000), RNG.uniform(-1, 1, 1000),
                        [0.0, -0.0, 1e-30, -1e-30, 1e-40]]).astype(np.float32)
    e = ref64(exact, x, dt=np.float64)
    yield Case(op, "", [x], [e.astype(np.float32)], "tol", rtol=rtol,
               scale=[np.abs(e) * (1 + slope * np.abs(x.astype(np.float64)))],
               atol=float(np.finfo(np.float32).tiny))
    for dt in ALL_INT:  # computed in double, converted back with the cast rules
        x = rand_int((3, 4), dt, lo=-5 if dt in SIGNED else 0, hi=5, edges=False)
        with np.errstate(all="ignore"):
            yield Case(op, "", [x], [cast_ref(exact(x.astype(np.float64)), dt)])


def g_float_math_ints(op):
    """sin, cos, tan, atan, log2, log10 (generated for floats above) on
    integers: double, then the cast rules; and an empty tensor."""
    f = TRANS_UNARY[op]
    for dt in ALL_INT:
        x = rand_int((2, 5), dt, lo=-20 if dt in SIGNED else 0, hi=20, edges=False)
        with np.errstate(all="ignore"):
            yield Case(op, "", [x], [cast_ref(f(x.astype(np.float64)), dt)])
    for dt in FLOATS:
        x = edge_floats(dt)
        yield Case(op, "", [x], [ref64(f, x, dt=dt)], "ulp", n=ULP_TRANSCENDENTAL[dt])
    yield Case(op, "", [np.zeros((0, 4), np.float32)], [np.zeros((0, 4), np.float32)])


for _op in ("sin", "cos", "tan", "atan", "log2", "log10"):
    extend(_op, g_float_math_ints)


# ── trunc_divide, trunc_mod ──

def trunc_ref(op, a, b):
    if a.dtype.kind == "f":
        return quiet(lambda: np.trunc(np.true_divide(a, b)) if op == "trunc_divide" else np.fmod(a, b))
    return trunc_div(a, b) if op == "trunc_divide" else quiet(lambda: np.fmod(a, b))


@gen("trunc_divide", "trunc_mod")
def g_trunc_divmod(op):
    for dt in NUMERIC:
        for _ in range(4):
            shape = rand_shape()
            sa, sb = (shape, bcast_pair(shape)) if RNG.random() < 0.5 else (bcast_pair(shape), shape)
            a, b = rand_of(sa, dt), rand_of(sb, dt)
            if dt not in FLOATS:
                b = no_zero(b)
            yield Case(op, "", [a, b], [np.asarray(trunc_ref(op, a, b), dtype=dt)])
    for dt in FLOATS:  # zero divisors, infinities, NaN and signed zeros on both sides
        e = edge_floats(dt)
        a, b = np.repeat(e, e.size), np.tile(e, e.size)
        yield Case(op, "", [a, b], [np.asarray(trunc_ref(op, a, b), dtype=dt)])
    for dt in (np.int8, np.uint16, np.int64):
        yield Case(op, "", [np.array([1, 2, 3], dt), np.array([1, 0, 2], dt)],
                   f"{op}: integer division by zero")
    for dt in SIGNED:  # the minimum divided by -1 wraps; its remainder is 0
        mn = np.iinfo(dt).min
        a, b = np.array([mn, mn, 7, -7, mn], dt), np.array([-1, 1, -2, 2, 3], dt)
        yield Case(op, "", [a, b], [np.asarray(trunc_ref(op, a, b), dtype=dt)])
    yield Case(op, "", [np.zeros((0, 3), np.int32), np.ones((3,), np.int32)], [np.zeros((0, 3), np.int32)])
    yield Case(op, "", [np.ones((2,), np.float32), np.ones((2,), np.float64)], "dtypes float32 and float64 differ")
    yield Case(op, "", [np.ones((2,), np.int32), np.ones((3,), np.int32)], "do not broadcast")


# ── bitwise ops, shifts ──

def shift_ref(op, a, b):
    """numpy's shifts, with our rule for counts outside [0, bits): 0 for
    left shifts, the sign fill for right shifts."""
    dt = a.dtype.type
    bits = np.dtype(dt).itemsize * 8
    a, b = np.broadcast_arrays(a, b)
    out = np.zeros(a.shape, dt)
    for i in np.ndindex(a.shape):
        x, s = int(a[i]), int(b[i])
        if s < 0 or s >= bits:
            out[i] = (-1 if x < 0 else 0) if op == "right_shift" else 0
        elif op == "left_shift":
            out[i] = np.array((x << s) & ((1 << bits) - 1), np.uint64).astype(dt)  # wraps
        else:
            out[i] = x >> s
    return out


def g_bits_more(op):
    f = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}.get(op)
    if f:  # bool operands, and integer extremes
        a, b = rand_of((3, 4), np.bool_), rand_of((4,), np.bool_)
        yield Case(op, "", [a, b], [f(a, b)])
        for dt in ALL_INT:
            info = np.iinfo(dt)
            a = np.array([info.min, info.max, 0, 1, info.max], dt)
            b = np.array([info.max, info.min, info.max, info.min, 1], dt)
            yield Case(op, "", [a, b], [f(a, b)])
        yield Case(op, "", [np.ones(2, np.float32), np.ones(2, np.float32)],
                   f"{op}: argument 1 must be an integer or bool tensor, got float32")
    else:  # counts: negative, at and past the width, on every integer dtype
        for dt in ALL_INT:
            bits = np.dtype(dt).itemsize * 8
            a = rand_int((5, 1), dt)
            lo = -3 if dt in SIGNED else 0
            b = np.array([lo, 0, 1, bits - 1, bits, bits + 1, min(127, np.iinfo(dt).max)], np.int64).astype(dt)
            yield Case(op, "", [a, b], [shift_ref(op, a, b)])
        yield Case(op, "", [np.ones(2, np.bool_), np.ones(2, np.bool_)],
                   f"{op}: argument 1 must be an integer tensor, got bool")
        yield Case(op, "", [np.ones(2, np.int32), np.ones(2, np.float64)],
                   f"{op}: argument 2 must be an integer tensor, got float64")
    yield Case(op, "", [np.zeros((0,), np.int16), np.zeros((1,), np.int16)], [np.zeros((0,), np.int16)])


for _op in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    extend(_op, g_bits_more)


def g_not_pred_more(op):
    """bitwise_not's errors; the predicates on bool, integer extremes,
    every float special and empty tensors."""
    if op == "bitwise_not":
        for dt in ALL_INT:
            info = np.iinfo(dt)
            x = np.array([info.min, info.max, 0, 1], dt)
            yield Case(op, "", [x], [np.invert(x)])
        yield Case(op, "", [np.ones(2, np.float16)],
                   "bitwise_not: argument 1 must be an integer or bool tensor, got float16")
        return
    f = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}[op]
    for dt in FLOATS:
        x = edge_floats(dt)
        yield Case(op, "", [x], [f(x)])
    x = rand_of((2, 3), np.bool_)
    yield Case(op, "", [x], [f(x)])
    yield Case(op, "", [np.zeros((3, 0), np.float64)], [np.zeros((3, 0), np.bool_)])


for _op in ("bitwise_not", "isnan", "isinf", "isfinite"):
    extend(_op, g_not_pred_more)


# ── floor_mod, logical_xor, trunc, copy ──

def g_floor_mod_more(op):
    for dt in FLOATS:  # numpy's remainder: zero divisors, infinities, signed zeros
        e = edge_floats(dt)
        a, b = np.repeat(e, e.size), np.tile(e, e.size)
        yield Case(op, "", [a, b], [quiet(lambda: np.remainder(a, b)).astype(dt)])
    yield Case(op, "", [np.zeros((2, 0), np.float32), np.ones((1,), np.float32)], [np.zeros((2, 0), np.float32)])


extend("floor_mod", g_floor_mod_more)


def g_lxor_more(op):
    """logical_xor of numbers: (x != 0) != (y != 0) in the dtype (NaN is true)."""
    for dt in (np.float32, np.int8, np.uint32, np.float64):
        a, b = rand_of((4, 3), dt), rand_of((3,), dt)
        yield Case(op, "", [a, b], [np.logical_xor(a != 0, b != 0).astype(dt)])
    yield Case(op, "", [np.zeros((0, 2), np.bool_), np.ones((2,), np.bool_)], [np.zeros((0, 2), np.bool_)])


extend("logical_xor", g_lxor_more)


def g_exact_more(op):
    for dt in FLOATS:
        x = edge_floats(dt)
        yield Case(op, "", [x], [np.trunc(x) if op == "trunc" else x.copy()])
    for dt in ALL_INT:
        info = np.iinfo(dt)
        x = np.array([info.min, info.max, 0, 1], dt)
        yield Case(op, "", [x], [x.copy()])
    x = rand_of((3, 2), np.bool_)
    if op == "copy":
        yield Case(op, "", [x], [x.copy()])
    yield Case(op, "", [np.zeros((0,), np.float16)], [np.zeros((0,), np.float16)])


for _op in ("trunc", "copy"):
    extend(_op, g_exact_more)
