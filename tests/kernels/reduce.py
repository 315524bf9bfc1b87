"""Cases of the reduction family's ops added with the op set (run in
tests/kernels_numpy.py's namespace: Case, @gen, red_axes, norm_axes,
red_attrs, moved, red_shape and the data generators come from there).

New generators: variance, std and mean_variance (floats against float64
numpy, integers against TVM's wrapping arithmetic written out in Python),
cumsum and cumprod (numpy's cumsum/cumprod with dtype=..., bit for bit).
all, any and logsumexp (generated in kernels_numpy.py on bool and float
data) get more cases through extend(): every dtype, NaN, empty reductions,
exclude, and the relations' errors.
"""


def wrap_int(v, dt):
    """Python int v wrapped into dtype dt's range."""
    info = np.iinfo(dt)
    span = 1 << (8 * np.dtype(dt).itemsize)
    return (v - int(info.min)) % span + int(info.min)


def tdiv(a, b):
    """C's truncating division of Python ints."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_variance(row, dt, ddof, mean=None):
    """TVM's integer variance of one row: the truncated mean of the wrapped
    sum, then wrapped differences, squares and sum, divided truncating.
    None when the count is 0 (the kernel's error)."""
    n = len(row)
    count = max(n - ddof, 0)
    if count == 0 or (mean is None and n == 0):
        return None, None
    vals = [int(v) for v in row]
    m = [tdiv(wrap_int(sum(vals), dt), n)] * n if mean is None else [int(v) for v in mean]
    ss = 0
    for v, mv in zip(vals, m):
        d = wrap_int(v - mv, dt)
        ss += wrap_int(d * d, dt)
    return tdiv(wrap_int(ss, dt), count), m[0] if n else 0


def var_attrs(axis, kd, ex, unbiased):
    return red_attrs(axis, kd, ex, {"unbiased": True} if unbiased else None)


def float_variance(x, ax, kd, ddof, mean=None):
    """float64 variance over axes ax, as the kernel computes it (sum of
    squares of x - mean over max(n - ddof, 0)); the mean used."""
    x64 = x.astype(np.float64)
    n = int(np.prod([x.shape[a] for a in ax])) if ax else 1
    with np.errstate(all="ignore"):
        m = np.sum(x64, axis=ax, keepdims=True) / n if mean is None else mean.astype(np.float64)
        ss = np.sum((x64 - m) ** 2, axis=ax, keepdims=kd)
        v = ss / max(n - ddof, 0)
    if mean is None and not kd:
        m = m.reshape(red_shape(x, ax, False))
    return v, m


def stat_case(op, attrs, ins, v, m, dt):
    """The case for variance / std / mean_variance from float64 results:
    within a few units of the dtype's rounding."""
    outs = {"variance": [v], "std": [np.sqrt(v)], "mean_variance": [m, v]}[op]
    outs = [np.asarray(o).astype(dt) for o in outs]
    scale = [np.abs(np.asarray(o, np.float64)) for o in outs]
    return Case(op, attrs, ins, outs, "tol", rtol=4 * float(np.finfo(dt).eps), scale=scale,
                atol=float(np.finfo(dt).tiny))


@gen("variance", "std", "mean_variance")
def g_variance(op):
    for dt in FLOATS:
        for _ in range(4):
            x = rand_float(rand_shape(), dt, scale=3, specials=RNG.random() < 0.3)
            axis, kd, ex, ub = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.2, RNG.random() < 0.4
            ax = norm_axes(axis, x.ndim, ex)
            v, m = float_variance(x, ax, kd, int(ub))
            yield stat_case(op, var_attrs(axis, kd, ex, ub), [x], v, m, dt)
    for dt in ALL_INT:  # TVM's arithmetic: wrapping in the dtype, truncating divisions
        for _ in range(3):
            x = rand_int(rand_shape(allow_empty=False, maxdim=4), dt, lo=-6 if dt in SIGNED else 0, hi=12,
                         edges=RNG.random() < 0.3)
            axis, kd, ex, ub = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.2, RNG.random() < 0.3
            ax = norm_axes(axis, x.ndim, ex)
            rows = moved(x, ax).reshape(-1, int(np.prod([x.shape[a] for a in ax])) if ax else 1)
            res = [int_variance(r, dt, int(ub)) for r in rows]
            attrs = var_attrs(axis, kd, ex, ub)
            if any(v is None for v, _ in res):
                yield Case(op, attrs, [x], "integer division by zero")
                continue
            shape = red_shape(x, ax, kd)
            v = np.array([wrap_int(r[0], dt) for r in res], dtype=object).reshape(shape)
            m = np.array([r[1] for r in res], dtype=object).reshape(shape).astype(dt)
            if op == "std":
                out = [cast_ref(np.sqrt(v.astype(np.float64)), dt)]
            else:
                out = [v.astype(dt)] if op == "variance" else [m, v.astype(dt)]
            yield Case(op, attrs, [x], out)
    # Empty reductions: NaN for floats (numpy's), an error for integers; one
    # element with unbiased=True: NaN.
    x = np.zeros((2, 0), np.float32)
    v, m = float_variance(x, (1,), False, 0)
    yield stat_case(op, "axis=[1]", [x], v, m, np.float32)
    x = rand_float((3, 1), np.float64, specials=False)
    v, m = float_variance(x, (1,), True, 1)
    yield stat_case(op, "axis=[1], keepdims=True, unbiased=True", [x], v, m, np.float64)
    yield Case(op, "axis=[1]", [np.zeros((2, 0), np.int32)], "integer division by zero")
    yield Case(op, "", [np.ones((2, 2), np.bool_)], f"{op}: expects a numeric tensor, got bool")
    yield Case(op, "axis=[2]", [np.ones((2, 2), np.float32)], f"{op}: axis 2 is out of range for rank 2")
    yield Case(op, "axis=[0, -2]", [np.ones((2, 2), np.float32)], f"{op}: axis 0 is listed twice")
    yield Case(op, 'unbiased="yes"', [np.ones((2, 2), np.float32)], "unbiased")
    if op != "variance":
        return
    # The two-argument form: the mean given (with keepdims, or of the data's shape).
    for dt in (np.float32, np.float64, np.float16):
        x = rand_float((3, 4, 2), dt, specials=False)
        axis = [1]
        mk = np.mean(x.astype(np.float64), axis=1, keepdims=True).astype(dt)
        v, _ = float_variance(x, (1,), False, 0, mean=mk)
        yield stat_case(op, red_attrs(axis, False, False), [x, mk], v, None, dt)
        full = rand_float((3, 4, 2), dt, specials=False)
        v, _ = float_variance(x, (0, 2), True, 1, mean=full)
        yield stat_case(op, var_attrs([0, 2], True, False, True), [x, full], v, None, dt)
    x = rand_int((4, 3), np.int16, lo=-9, hi=9, edges=False)
    mk = rand_int((1, 3), np.int16, lo=-3, hi=3, edges=False)
    res = [int_variance(x[:, j], np.int16, 0, mean=[mk[0, j]] * 4)[0] for j in range(3)]
    yield Case(op, "axis=[0]", [x, mk], [np.array(res, dtype=object).astype(np.int16)])
    x = np.ones((2, 3), np.float32)
    yield Case(op, "axis=[1]", [x, np.ones((2, 3), np.float64)], "the mean's dtype float64 differs from the data's float32")
    yield Case(op, "axis=[1]", [x, np.ones((3,), np.float32)], "the mean's shape (3) does not broadcast to the data's (2, 3)")
    yield Case(op, "axis=[1]", [x, np.ones((2, 2), np.float32)], "the mean's shape (2, 2) does not broadcast")


# ── cumsum, cumprod ──

def scan_ref(op, x, axis, dt, exclusive):
    """numpy's cumsum / cumprod in dtype dt (x converted first); exclusive
    shifts by one, starting from 0 / 1."""
    f = np.cumsum if op == "cumsum" else np.cumprod
    xc = x.astype(dt)
    if axis is None:
        xc, axis = xc.reshape(-1), 0
    with np.errstate(all="ignore"):
        r = f(xc, axis=axis, dtype=dt)
    if exclusive and r.size:
        ident = np.full_like(np.take(r, [0], axis=axis), 0 if op == "cumsum" else 1)
        r = np.concatenate([ident, np.delete(r, -1, axis=axis)], axis=axis)
    return np.asarray(r, dt)


def scan_data(shape, dt):
    """Values whose running products stay representable (or wrap, for integers)."""
    if dt == np.bool_:
        return RNG.random(shape) < 0.7
    if dt in FLOATS:
        return (1 + 0.5 * rand_float(shape, dt, scale=1, specials=RNG.random() < 0.3).astype(np.float64)).astype(dt)
    return rand_int(shape, dt, lo=-3 if dt in SIGNED else 0, hi=4, edges=RNG.random() < 0.3)


@gen("cumsum", "cumprod")
def g_scan(op):
    for dt in ALL:
        for _ in range(4):
            x = scan_data(rand_shape(), dt)
            axis = None if RNG.random() < 0.3 or x.ndim == 0 else int(RNG.integers(-x.ndim, x.ndim))
            excl = RNG.random() < 0.4
            kw = {} if axis is None else {"axis": axis}
            if excl:
                kw["exclusive"] = True
            yield Case(op, attrs_text(**kw), [x], [scan_ref(op, x, axis, dt, excl)])
    # The dtype attribute: converted first, then accumulated in it.
    for src, dst in ((np.int8, np.int32), (np.uint8, np.int64), (np.bool_, np.int32), (np.int32, np.float32),
                     (np.float32, np.float64), (np.float64, np.float16), (np.int16, np.int8), (np.float32, np.int32)):
        x = castable(scan_data((3, 5), src), src, dst)
        yield Case(op, attrs_text(axis=1, dtype=dname(dst)), [x], [scan_ref(op, x, 1, dst, False)])
    # Integers wrapping, float overflow to inf, NaN, empty dims, scalars.
    x = np.array([100, 100, 100, -128, 127], np.int8)
    yield Case(op, "", [x], [scan_ref(op, x, None, np.int8, False)])
    x = np.array([3e38, 3e38, -np.inf, np.nan, 1.0], np.float32)
    yield Case(op, "axis=0", [x], [scan_ref(op, x, 0, np.float32, False)])
    x = np.array([60000.0, 1000.0, -0.0, 2.0 ** -24, 3.0], np.float16)
    yield Case(op, "axis=0, exclusive=True", [x], [scan_ref(op, x, 0, np.float16, True)])
    x = np.zeros((2, 0, 3), np.float32)
    yield Case(op, "axis=1", [x], [x.copy()])
    yield Case(op, "", [x], [np.zeros((0,), np.float32)])
    x = np.array(4.5, np.float64)
    yield Case(op, "", [x], [np.array([4.5])])
    yield Case(op, "exclusive=True", [x], [np.array([0.0 if op == "cumsum" else 1.0])])
    yield Case(op, "axis=2", [np.ones((2, 2), np.int32)], f"{op}: axis 2 is out of range for rank 2")
    yield Case(op, "axis=0", [np.array(1, np.int32)], f"{op}: axis 0 is out of range for rank 0")
    yield Case(op, 'dtype="flaot32"', [np.ones((2,), np.int32)], f"{op}: unknown dtype `flaot32`")


# ── all, any, logsumexp: more dtypes and edges ──

def g_all_any_more(op):
    """all/any of numbers: x != 0 (NaN is true), 0 or 1 in the dtype."""
    f = np.all if op == "all" else np.any
    for dt in NUMERIC:
        x = rand_of(rand_shape(), dt)
        if dt not in FLOATS:
            x = np.where(RNG.random(x.shape) < (0.85 if op == "all" else 0.15), x, 0).astype(dt)
        axis, kd, ex = red_axes(x.ndim), RNG.random() < 0.3, RNG.random() < 0.3
        ax = norm_axes(axis, x.ndim, ex)
        yield Case(op, red_attrs(axis, kd, ex), [x], [np.asarray(f(x != 0, axis=ax, keepdims=kd)).astype(dt)])
    x = np.array([[np.nan, 0.0], [-0.0, 0.0]], np.float32)
    yield Case(op, "axis=[1]", [x], [f(x != 0, axis=1).astype(np.float32)])
    x = np.zeros((3, 0), np.bool_)
    yield Case(op, "axis=[1]", [x], [f(x, axis=1)])
    yield Case(op, "axis=[3]", [np.ones((2,), np.bool_)], f"{op}: axis 3 is out of range for rank 1")


for _op in ("all", "any"):
    extend(_op, g_all_any_more)


def g_lse_more(op):
    """logsumexp: NaN and infinities are their own result, an empty
    reduction is -inf; integers in double, converted back."""
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 0.0]],
                 np.float32)
    ref = np.array([np.nan, np.inf, -np.inf, math.log(2.0)], np.float32)
    yield Case(op, "axis=[1]", [x], [ref], "ulp", n=1)
    yield Case(op, "axis=[1]", [np.zeros((2, 0), np.float64)], [np.full((2,), -np.inf)])
    for dt in (np.int32, np.int8, np.uint16):
        x = rand_int((3, 4), dt, lo=0, hi=6, edges=False)
        with np.errstate(all="ignore"):
            r = np.log(np.sum(np.exp(x.astype(np.float64)), axis=1))
        yield Case(op, "axis=[1]", [x], [cast_ref(r, dt)])


extend("logsumexp", g_lse_more)
