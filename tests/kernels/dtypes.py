"""Cases of every dtype on edge values that must run compiled (run in
tests/kernels_numpy.py's namespace: Case, @gen, the dtype lists, trunc_div,
ref64, zero_sign and quiet come from there).

The elementwise, broadcast, injective and reduction rules take every dtype
rly has: bool, int8/16/32/64, uint8/16/32/64, float16/32/64.  Each case
here is made with compiled=True, so with --exec jit it fails unless the
call lowers and runs compiled; without --exec it checks the reference
kernels on the same values.  numpy is the reference:

- integers wrap at their width (add, multiply and negative of the extremes,
  the minimum divided by -1, sums and products of reductions and scans);
  unsigned dtypes divide, compare and shift as unsigned (the largest value
  is not -1);
- shifts by a negative count or by at least the width give 0, or the sign
  fill for a right shift: numpy's definition (TVM leaves them undefined);
- float16 computes in float32 and rounds each op's result to half (and each
  step of a scan), as numpy does; the values include subnormals, the
  largest half (whose sum with itself overflows to inf), infinities, NaN and
  signed zeros;
- float to integer casts truncate and saturate, NaN gives 0 (rly's rule
  where numpy leaves it to the CPU), so those references are computed here.

The binary ops take every pair of a dtype's edge values (a column against a
row, which also broadcasts); a rank-0 constant operand of each dtype checks
constants as operands (a literal in the compiled call).
"""


def dt_add_cases(op, extra):
    """Adds extra(op)'s cases after those of op's generator (MORE_CASES:
    cast_like's and reinterpret's live in a later file)."""
    MORE_CASES.append((op, extra))


def dt_int_edges(dt, nonzero=False):
    """A dtype's extremes, its neighbours and a few small values (no 0 when
    nonzero: divisors)."""
    info = np.iinfo(dt)
    v = [int(info.min), int(info.max), 0, 1, 2, 5, 100, int(info.max) // 3]
    v += [-1, -2, -7, int(info.min) + 1] if info.min < 0 else [int(info.max) - 1]
    return np.array([x for x in v if not (nonzero and x == 0)], dtype=dt)


DT_HALF_EDGES = [0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, 2.0**-24, -(2.0**-24), 2.0**-14, 0.1, 3.5,
                 -2.5, 1000.0, 2049.0, np.inf, -np.inf, np.nan]


def dt_float_edges(dt):
    fi = np.finfo(dt)
    v = DT_HALF_EDGES + [float(fi.max), fi.tiny / 4, -7.25]
    return np.array(v, np.float64).astype(dt)


def dt_edges(dt, nonzero=False):
    if dt == np.bool_:
        return np.array([False, True])
    return dt_float_edges(dt) if dt in FLOATS else dt_int_edges(dt, nonzero)


def dt_pairs(dt, nonzero=False):
    """Every pair of edge values: a column and a row."""
    return dt_edges(dt).reshape(-1, 1), dt_edges(dt, nonzero)


DT_ARITH = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
            "minimum": np.minimum, "floor_divide": np.floor_divide, "mod": np.fmod,
            "floor_mod": np.remainder, "divide": None}


def dt_arith_cases(op):
    for dt in NUMERIC:
        division = op in ("divide", "floor_divide", "mod", "floor_mod")
        a, b = dt_pairs(dt, nonzero=division and dt not in FLOATS)
        if op == "divide":
            ref = trunc_div(a, b) if dt not in FLOATS else quiet(lambda: np.true_divide(a, b))
        else:
            ref = quiet(lambda: DT_ARITH[op](a, b))
            if op in ("maximum", "minimum") and dt in FLOATS:
                ref = zero_sign(op, a, b, ref)
        yield Case(op, "", [a, b], [np.asarray(ref, dtype=dt)], compiled=True)


def dt_compare_cases(op):
    f = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
         "greater": np.greater, "greater_equal": np.greater_equal}[op]
    for dt in ALL:
        a, b = dt_pairs(dt)
        yield Case(op, "", [a, b], [f(a, b)], compiled=True)


def dt_bitwise_cases(op):
    f = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}[op]
    for dt in ALL_INT + [np.bool_]:
        a, b = dt_pairs(dt)
        yield Case(op, "", [a, b], [f(a, b)], compiled=True)


def dt_shift_ref(op, x, s, dt):
    """numpy's shift of one element (Python ints): a count outside [0, bits)
    gives 0, or the sign fill for right_shift."""
    bits = np.dtype(dt).itemsize * 8
    if s < 0 or s >= bits:
        return -1 if op == "right_shift" and x < 0 else 0
    if op == "right_shift":
        return x >> s
    r = (x << s) & ((1 << bits) - 1)
    return r - (1 << bits) if np.iinfo(dt).min < 0 and r >= 1 << (bits - 1) else r


def dt_shift_cases(op):
    for dt in ALL_INT:
        bits = np.dtype(dt).itemsize * 8
        counts = [0, 1, 3, bits - 1, bits, bits + 1] + ([-1, -bits] if dt in SIGNED else [])
        x, s = dt_int_edges(dt).reshape(-1, 1), np.array(counts, dt)
        ref = np.array([[dt_shift_ref(op, int(a), int(c), dt) for c in s] for a in x[:, 0]], dtype=object)
        yield Case(op, "", [x, s], [ref.astype(dt)], compiled=True)


def dt_unary_int_cases(op):
    f = {"negative": np.negative, "abs": np.abs, "bitwise_not": np.invert, "sign": np.sign}[op]
    for dt in ALL_INT:
        if op == "sign" and dt not in SIGNED:
            continue
        x = dt_int_edges(dt).reshape(3, -1)
        yield Case(op, "", [x], [quiet(lambda: f(x)).astype(dt)], compiled=True)


DT_HALF_EXACT = {"negative": np.negative, "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
              "trunc": np.trunc, "sqrt": np.sqrt, "isnan": np.isnan, "isinf": np.isinf,
              "isfinite": np.isfinite, "sign": None}
DT_HALF_TRANS = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": sigmoid64, "erf": erf64,
              "sin": np.sin, "rsqrt": lambda v: 1 / np.sqrt(v)}


def dt_half_unary_cases(op):
    x = np.concatenate([dt_float_edges(np.float16), np.linspace(-12, 12, 23).astype(np.float16)])
    if op in DT_HALF_TRANS:
        yield Case(op, "", [x], [ref64(DT_HALF_TRANS[op], x, dt=np.float16)], "ulp", n=1, compiled=True)
        return
    if op == "sign":
        ref = np.where(x == 0, np.zeros_like(x), np.sign(x))  # sign(-0) is +0
    else:
        ref = quiet(lambda: DT_HALF_EXACT[op](x))
    yield Case(op, "", [x], [ref], compiled=True)


def dt_sat_cast(x, dst):
    """rly's cast of floats to an integer dtype: truncation, saturation,
    NaN to 0."""
    info = np.iinfo(dst)
    out = []
    for v in np.asarray(x, np.float64).reshape(-1):
        out.append(0 if math.isnan(v) else int(info.max) if v >= int(info.max) else
                   int(info.min) if v <= int(info.min) else int(math.trunc(v)))
    return np.array(out, dtype=object).reshape(np.shape(x)).astype(dst)


def dt_cast_ref(x, src, dst):
    if dst == np.bool_:
        return x != 0
    if src in FLOATS and dst not in FLOATS:
        return dt_sat_cast(x, dst)
    return quiet(lambda: x.astype(dst))


def dt_cast_cases(op):
    for src in ALL:
        x = dt_edges(src)
        for dst in ALL:
            yield Case(op, f'dtype="{dname(dst)}"', [x], [dt_cast_ref(x, src, dst)], compiled=True)


def dt_cast_like_cases(op):
    for src in ALL:
        x = dt_edges(src)
        for dst in (np.bool_, np.uint8, np.int16, np.uint32, np.int64, np.uint64, np.float16, np.float64):
            yield Case(op, "", [x, np.zeros((2,), dst)], [dt_cast_ref(x, src, dst)], compiled=True)


DT_SAME_SIZE = [(np.int8, np.uint8), (np.uint8, np.int8), (np.int16, np.float16), (np.float16, np.uint16),
             (np.uint16, np.int16), (np.int32, np.float32), (np.float32, np.uint32), (np.uint32, np.int32),
             (np.int64, np.float64), (np.float64, np.uint64), (np.uint64, np.int64)]


def dt_reinterpret_cases(op):
    for src, dst in DT_SAME_SIZE:
        x = dt_edges(src)
        if src in FLOATS:
            x = x[~np.isnan(x)]  # a NaN's payload is not kept by every path
        yield Case(op, f'dtype="{dname(dst)}"', [x], [x.view(dst)], compiled=True)


def dt_where_cases(op):
    for dt in ALL:
        x = dt_edges(dt)
        c = np.arange(x.size) % 3 == 0
        y = x[::-1].copy()
        yield Case(op, "", [c, x, y], [np.where(c, x, y)], compiled=True)


def dt_clip_bound(v, dt):
    return dt(v) if dt in FLOATS else dt_sat_cast(np.array([v]), dt)[0]


def dt_clip_cases(op):
    for dt in NUMERIC:
        x = dt_edges(dt)
        for lo, hi in ((-3.0, 7.5), (2.0, 300.0), (-2.0**100, 2.0**100)):
            ref = np.minimum(np.maximum(x, dt_clip_bound(lo, dt)), dt_clip_bound(hi, dt))
            if dt in FLOATS:
                ref = np.where(np.isnan(x), x, ref)
            yield Case(op, attrs_text(a_min=lo, a_max=hi), [x], [ref.astype(dt)], compiled=True)


def dt_reduce_cases(op):
    for dt in NUMERIC:
        a, b = dt_pairs(dt)
        if dt in FLOATS:
            x = np.broadcast_to(a, (a.shape[0], b.size)).copy()
            if op in ("sum", "prod"):  # exact in any order: small integers, powers of two
                cycle = [1, -1, 2, -2, 1, 0.5, 1] if op == "prod" else [-3, -2, -1, 0, 1, 2, 3]
                x = np.resize(np.array(cycle, np.float64), x.shape).astype(dt)
        else:
            x = quiet(lambda: np.add(a, b))
        if op == "argmax":
            yield Case(op, "axis=[1]", [x], [np.argmax(x, axis=1).astype(np.int32)], compiled=True)
            continue
        f = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[op]
        kw = {"dtype": dt} if op in ("sum", "prod") else {}
        for axis in (0, 1):
            yield Case(op, "axis=[%d]" % axis, [x], [quiet(lambda: f(x, axis=axis, **kw)).astype(dt)],
                       compiled=True)


def dt_scan_cases(op):
    """Running sums and products wrap (integers) or round each step to
    half (float16), as numpy's cumsum(dtype=...) does."""
    f = {"cumsum": np.cumsum, "cumprod": np.cumprod}[op]
    for dt in NUMERIC:
        a, b = dt_pairs(dt)
        x = quiet(lambda: np.add(a, b)) if dt not in FLOATS else \
            np.resize(np.array([0.1, 2049, -3.5, 1e-7, 7, -0.25, 65504], np.float64), (4, 7)).astype(dt)
        for axis in (0, 1):
            yield Case(op, "axis=%d" % axis, [x], [quiet(lambda: f(x, axis=axis, dtype=dt))], compiled=True)


def dt_const_cases(op):
    """A rank-0 constant of every dtype as an operand (a literal in the call)."""
    for dt in ALL:
        x = dt_edges(dt)
        if dt == np.bool_:
            if op == "add":
                continue
            for c in (True, False):
                yield Case(op, "", [x, np.array(c)], [np.maximum(x, c)], consts=[1], compiled=True)
            continue
        vals = [dt_edges(dt)[1], dt_edges(dt)[0]] + ([np.nan, 2.0**-24] if dt in FLOATS else [])
        for c in vals:
            c = np.array(c, dtype=dt)
            ref = quiet(lambda: np.add(x, c) if op == "add" else np.maximum(x, c))
            if op == "maximum" and dt in FLOATS:
                ref = zero_sign(op, x, c, ref)
            yield Case(op, "", [x, c], [np.asarray(ref, dtype=dt)], consts=[1], compiled=True)


def dt_float_math_int_cases(op):
    """Float math on integers: computed in float64, converted back by the
    cast rules."""
    f = {"exp": np.exp, "sqrt": np.sqrt}[op]
    for dt in ALL_INT:
        x = dt_int_edges(dt)
        yield Case(op, "", [x], [dt_sat_cast(quiet(lambda: f(x.astype(np.float64))), dt)], compiled=True)


for _dt_op in DT_ARITH:
    dt_add_cases(_dt_op, dt_arith_cases)
for _dt_op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    dt_add_cases(_dt_op, dt_compare_cases)
for _dt_op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    dt_add_cases(_dt_op, dt_bitwise_cases)
for _dt_op in ("left_shift", "right_shift"):
    dt_add_cases(_dt_op, dt_shift_cases)
for _dt_op in ("negative", "abs", "bitwise_not", "sign"):
    dt_add_cases(_dt_op, dt_unary_int_cases)
for _dt_op in list(DT_HALF_EXACT) + list(DT_HALF_TRANS):
    dt_add_cases(_dt_op, dt_half_unary_cases)
for _dt_op in ("sum", "prod", "max", "min", "argmax"):
    dt_add_cases(_dt_op, dt_reduce_cases)
for _dt_op in ("add", "maximum"):
    dt_add_cases(_dt_op, dt_const_cases)
for _dt_op in ("exp", "sqrt"):
    dt_add_cases(_dt_op, dt_float_math_int_cases)
for _dt_op in ("cumsum", "cumprod"):
    dt_add_cases(_dt_op, dt_scan_cases)
dt_add_cases("cast", dt_cast_cases)
dt_add_cases("cast_like", dt_cast_like_cases)
dt_add_cases("reinterpret", dt_reinterpret_cases)
dt_add_cases("where", dt_where_cases)
dt_add_cases("clip", dt_clip_cases)
