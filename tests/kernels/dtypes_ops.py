"""Cases of the windowed, product and statistics ops on the dtypes beyond
float32/64 and int32/64, made with compiled=True: with --exec jit they fail
unless the call lowers (run in tests/kernels_numpy.py's namespace, after
tests/kernels/dtypes.py; nn.py's and image.py's references are looked up
when the cases are made).

- pools of every integer dtype and float16: max exact (NaN wins, -0 < +0,
  an empty window the dtype's lowest), averages summed in float64 or int64
  and divided (integers truncate), float16 rounded once;
- resizes of uint8, int8, int16, uint16 and float16 images: read as
  float32, the result cast back (integers truncate and saturate);
- products and convolutions of float16 (summed in float64, rounded once:
  the operands here make every sum exact, with infinities, NaN and a sum
  past 65504) and of integer operands with an integer out_dtype (wrapping
  in it: uint8 by uint8 into uint16, int8 into int32, uint32 into uint32);
- integer power (wrapping; a negative exponent as trunc(1 / x^-e), 0 to
  one an error);
- float16 grid_sample and affine_grid (computed in float32, as the
  kernels: image.py's float16 cases);
- variance, std and logsumexp of integers (TVM's wrapping integer
  variance, logsumexp in float64 truncated and saturated), of float16
  (float64 sums, logsumexp rounded to float32 then half), float16
  batch_norm and collapse_sum_like.
"""

DTO_RNG = np.random.default_rng(14)


def dto_add_cases(op, extra):
    """dt_add_cases with extra's data drawn from this file's own generator,
    so the cases of the other files keep their values."""
    def g(name):
        global RNG
        saved, RNG = RNG, DTO_RNG
        try:
            cases = list(extra(name))
        finally:
            RNG = saved
        yield from cases
    dt_add_cases(op, g)


DTO_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def dto_compiled(cases):
    for c in cases:
        c.compiled = True
        yield c


def dto_data(shape, dt, specials=True):
    """Values of dt: integers with their extremes (64-bit ones small, so
    float64 references stay exact), float16 with its specials."""
    if dt in FLOATS:
        return rand_float(shape, dt, specials=specials)
    return rand_int(shape, dt, edges=np.dtype(dt).itemsize < 8)


def dto_int_avg(ref):
    return np.trunc(ref)


def dto_pool_cases(op):
    S = int(op[-2])
    is_max = "max" in op
    for dt in DTO_INTS + [np.float16]:
        k, s, d, p, lo, hi = nn_window_params(S, RNG)
        lo = [min(v, k[i] // 2) for i, v in enumerate(lo)]
        hi = [min(v, k[i] // 2) for i, v in enumerate(hi)]
        sp = [int(RNG.integers(d[i] * (k[i] - 1) + 1, 7 if S == 3 else 9)) for i in range(S)]
        x = dto_data((1, 2) + tuple(sp), dt)
        kw = dict(pool_size=k, strides=s, dilation=d, padding=lo + hi, ceil_mode=RNG.random() < 0.4)
        incl = False if is_max else bool(RNG.random() < 0.5)
        if not is_max:
            kw["count_include_pad"] = incl
        low = float(np.finfo(dt).min) if dt in FLOATS else float(np.iinfo(dt).min)
        ref = nn_poolnd_ref(x.astype(np.float64), k, s, d, lo, hi, kw["ceil_mode"], is_max, incl, low)
        if not is_max and dt not in FLOATS:
            ref = dto_int_avg(ref)
        yield Case(op, attrs_text(**kw), [x], [ref.astype(np.int64).astype(dt) if dt not in FLOATS
                                               else ref.astype(dt)], compiled=True)
    if S == 2:  # channels last: vectors of accumulators along C
        for dt in (np.int8, np.uint8, np.float16):
            x = dto_data((2, 5, 6, 3), dt)
            xc = np.moveaxis(x, -1, 1).astype(np.float64)
            ref = nn_poolnd_ref(xc, [3, 2], [2, 1], [1, 1], [1, 0], [1, 0], True, is_max, False, 0.0)
            ref = np.moveaxis(ref if is_max or dt in FLOATS else dto_int_avg(ref), 1, -1)
            kw = dict(pool_size=[3, 2], strides=[2, 1], padding=[1, 0], layout="NHWC", ceil_mode=True)
            yield Case(op, attrs_text(**kw), [x], [ref.astype(dt)], compiled=True)


def dto_plane_pool_cases(op):
    is_max = "max" in op
    for dt in (np.int8, np.uint8, np.uint16, np.uint64, np.float16):
        x = dto_data((2, 3, 5, 4), dt)
        oh, ow, attrs = (1, 1, "") if "global" in op else (2, 3, attrs_text(output_size=[2, 3]))
        ref = nn_adaptive_ref(x.astype(np.float64), oh, ow, is_max)
        if is_max or dt in FLOATS:
            yield Case(op, attrs, [x], [ref.astype(dt)], compiled=True)
        else:
            yield Case(op, attrs, [x], [dto_int_avg(ref).astype(np.int64).astype(dt)], compiled=True)


def dto_resize_cases(op):
    nsp = int(op[-2])
    for dt in (np.uint8, np.int8, np.int16, np.uint16, np.float16):
        for method, coord in (("nearest_neighbor", "asymmetric"), ("linear", "half_pixel"),
                              ("cubic", "align_corners")):
            yield from dto_compiled([rs_case(op, nsp, RsSpec(method, coord, "round"), dt=dt,
                                             specials=dt == np.float16)])
        yield from dto_compiled([rs_case(op, nsp, RsSpec("linear"), dt=dt, layout=LAYOUTS[nsp][1])])
    yield from dto_compiled([rs_case(op, nsp, RsSpec("linear"), dt=np.float32, out_dtype="uint8"),
                             rs_case(op, nsp, RsSpec("cubic"), dt=np.uint8, out_dtype="float16")])


def dto_half_operand(shape, big=False, specials=True):
    """float16 values whose products and short sums are exact in float64:
    quarters in [-8, 8], a few infinities and NaN; big: values whose sums
    pass 65504."""
    x = RNG.integers(-32, 33, shape).astype(np.float64) / 4
    if big:
        x = np.full(shape, 300.0)
    elif x.size > 3 and specials:
        x.reshape(-1)[RNG.integers(0, x.size, 2)] = [np.inf, np.nan]
    return x.astype(np.float16)


def dto_product_ref(a, b, out):
    """a @ b of integers wrapped into out (numpy's int64 products and sums
    wrap modulo 2^64), or of float16 in float64 rounded once."""
    if out == np.float16:
        return quiet(lambda: np.matmul(a.astype(np.float64), b.astype(np.float64))).astype(np.float16)
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(out)


DTO_INT_PRODUCTS = [(np.uint8, np.uint8, np.uint16), (np.int8, np.int8, np.int32), (np.uint8, np.int8, np.int32),
                    (np.int16, np.int16, np.int64), (np.uint32, np.uint32, np.uint32), (np.int8, np.int8, np.int8)]


def dto_product_operands():
    yield np.float16, np.float16, np.float16, False
    yield np.float16, np.float16, np.float16, True
    for a, b, out in DTO_INT_PRODUCTS:
        yield a, b, out, False


def dto_operand(shape, dt, big, specials=True):
    """An operand of a product; integers with their extremes (32-bit ones
    small in convolutions, whose reference sums in float64)."""
    if dt == np.float16:
        return dto_half_operand(shape, big, specials)
    return rand_int(shape, dt, edges=specials or np.dtype(dt).itemsize < 4)


def dto_out_attr(a, out):
    return {} if a == np.float16 else {"out_dtype": dname(out)}


def dto_dense_cases(op):
    for a, b, out, big in dto_product_operands():
        M, K, N = int(RNG.integers(1, 9)), int(RNG.integers(1, 20)), int(RNG.integers(1, 20))
        x, w = dto_operand((M, K), a, big), dto_operand((N, K), b, big)
        if op == "nn.dense":
            attrs = attrs_text(units=N, **dto_out_attr(a, out))
            yield Case(op, attrs, [x, w], [dto_product_ref(x, w.T, out)], compiled=True)
        elif op == "nn.matmul":
            attrs = attrs_text(transpose_a=False, transpose_b=True, **dto_out_attr(a, out))
            yield Case(op, attrs, [x, w], [dto_product_ref(x, w.T, out)], compiled=True)
        else:
            B = int(RNG.integers(1, 4))
            xb, wb = dto_operand((B, M, K), a, big), dto_operand((B, N, K), b, big)
            attrs = attrs_text(transpose_a=False, transpose_b=True, **dto_out_attr(a, out))
            yield Case(op, attrs, [xb, wb], [dto_product_ref(xb, np.swapaxes(wb, 1, 2), out)], compiled=True)


def dto_conv2d_cases(op):
    for a, b, out, big in dto_product_operands():
        groups = int(RNG.choice([1, 2]))
        C, O = 2 * groups, 2 * groups
        x = dto_operand((1, C, int(RNG.integers(3, 7)), int(RNG.integers(3, 7))), a, big, a == np.float16)
        w = dto_operand((O, C // groups, 3, 2), b, big, specials=False)  # the padding is no value
        ref = nn_convnd_ref(x.astype(np.float64), w.astype(np.float64), [1, 2], [1, 0], [1, 1], [1, 1], groups)
        ref = quiet(lambda: ref.astype(np.float16)) if out == np.float16 else ref.astype(np.int64).astype(out)
        attrs = attrs_text(padding=[1, 0, 1, 1], strides=[1, 2], groups=groups, **dto_out_attr(a, out))
        yield Case(op, attrs, [x, w], [ref], compiled=True)


def dto_wrap(v, dt):
    """A Python int wrapped into dt."""
    return int(np.array([v & 0xFFFFFFFFFFFFFFFF], np.uint64).astype(dt)[0])


def dto_int_var(row, dt, ddof, std):
    """TVM's integer variance of one row (the kernel's arithmetic)."""
    n = len(row)
    xs = [int(v) for v in row]
    m = dto_trunc(dto_wrap(sum(xs), dt), n)
    ss = 0
    for v in xs:
        d = dto_wrap(v - m, dt)
        ss += dto_wrap(d * d, dt)
    var = dto_trunc(dto_wrap(ss, dt), n - ddof)
    return dt_sat_cast(np.array([math.sqrt(var) if var >= 0 else math.nan]), dt)[0] if std else var


def dto_trunc(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def dto_lse(row):
    """logsumexp in float64 in the kernel's order."""
    vals = [float(v) for v in row]
    m = max(vals) if vals else -math.inf
    if math.isnan(m) or math.isinf(m):
        return m
    s = 0.0
    for v in vals:
        s += math.exp(v - m)
    return math.log(s) + m


def dto_half_var(row, ddof, std):
    vals = [float(v) for v in row]
    s = 0.0
    for v in vals:
        s += v
    m = s / len(vals)
    ss = 0.0
    for v in vals:
        ss += (v - m) * (v - m)
    var = quiet(lambda: np.float64(ss) / np.float64(max(len(vals) - ddof, 0)))
    return np.sqrt(var) if std else var


def dto_stats_cases(op):
    for dt in DTO_INTS + [np.float16]:
        x = rand_int((3, 6), dt) if dt in DTO_INTS else rand_float((3, 6), dt, scale=20, specials=op == "logsumexp")
        for unbiased in ((False,) if op == "logsumexp" else (False, True)):
            attrs = attrs_text(axis=[1]) if op == "logsumexp" else attrs_text(axis=[1], unbiased=unbiased)
            if op == "logsumexp":
                r = [dto_lse(row) for row in x]
                ref = np.array(r, np.float32).astype(np.float16) if dt == np.float16 else dt_sat_cast(np.array(r), dt)
            elif dt == np.float16:
                ref = np.array([dto_half_var(row, unbiased, op == "std") for row in x]).astype(np.float16)
            else:
                ref = np.array([dto_int_var(row, dt, unbiased, op == "std") for row in x], dtype=object).astype(dt)
            yield Case(op, attrs, [x], [ref], compiled=True)


def dto_ipow(x, e, dt):
    """The kernel's integer power of one element: x^e wrapped in dt; a
    negative exponent trunc(1 / x^-e)."""
    if e >= 0:
        return dto_wrap(pow(x, e, 1 << 64), dt)
    return 1 if x == 1 else (-1 if e % 2 else 1) if x == -1 else 0


def dto_power_cases(op):
    """Integer power on edge values: exponents past the width (wrapping,
    an odd base keeps every bit), negative exponents of 1, -1 and others."""
    for dt in DTO_INTS:
        x = dt_int_edges(dt)
        x = x[x != 0] if dt in SIGNED else x
        es = [0, 1, 2, 3, 7, 8, 31, 63, 64, int(np.iinfo(dt).max)] + ([-1, -2, -7] if dt in SIGNED else [])
        e = np.array([v for v in es if np.iinfo(dt).min <= v <= np.iinfo(dt).max], dt)
        ref = np.array([[dto_ipow(int(a), int(b), dt) for b in e] for a in x], dtype=object)
        yield Case(op, "", [x.reshape(-1, 1), e], [ref.astype(dt)], compiled=True)
    x, e = np.array([0, 3], np.int16), np.array([-1, 2], np.int16)
    yield Case(op, "", [x, e], "negative integer power", compiled=True)


def dto_wide_unsigned_cases(op):
    """uint64 and uint32 values past the signed range: unsigned divisions
    of the sums (mean_variance's mean too)."""
    for dt in (np.uint64, np.uint32):
        top = np.iinfo(dt).max
        x = np.array([[top, top - 5, 2, 7], [top // 2 + 9, top - 1, top - 3, 1]], dt)
        var = np.array([dto_int_var(r, dt, 0, False) for r in x], dtype=object).astype(dt)
        if op == "variance":
            yield Case(op, attrs_text(axis=[1]), [x], [var], compiled=True)
        else:
            mean = np.array([dto_wrap(sum(int(v) for v in r), dt) // 4 for r in x], dtype=object).astype(dt)
            yield Case(op, attrs_text(axis=[1]), [x], [mean, var], compiled=True)


def dto_half_of(gen_name):
    """The float16 cases of another file's generator (named: that file is
    loaded later; drawn again from this file's generator), required to run
    compiled."""
    def g(op):
        for c in globals()[gen_name](op):
            if c.inputs and c.inputs[0].dtype == np.float16 and not isinstance(c.expect, str):
                c.compiled = True
                yield c
    return g


def dto_batch_norm_cases(op):
    x = rand_float((2, 3, 4), np.float16, specials=True)
    g, b, m = (rand_float((3,), np.float16, specials=False) for _ in range(3))
    v = rand_float((3,), np.float16, specials=False, positive=True)
    e32 = float(np.float32(1e-3))
    X, G, B, Mn, V = (a.astype(np.float64).reshape(-1, 1) if a.ndim == 1 else a.astype(np.float64)
                      for a in (x, g, b, m, v))
    ref = quiet(lambda: ((X - Mn) / np.sqrt(V + e32) * G + B).astype(np.float16))
    yield Case(op, attrs_text(axis=1, epsilon=1e-3), [x, g, b, m, v], [ref, m, v], compiled=True)


def dto_collapse_cases(op):
    x = dto_half_operand((3, 4, 5))
    x[0, 0, :] = np.float16(40000)  # its sum overflows to inf
    for like in ((4, 1), (5,), (3, 1, 1)):
        ref = quiet(lambda: np.sum(x.astype(np.float64), axis=tuple(a for a in range(3)
                    if a < 3 - len(like) or (like[a - 3 + len(like)] == 1 and x.shape[a] != 1)),
                    keepdims=False).reshape(like).astype(np.float16))
        yield Case(op, "", [x, np.zeros(like, np.float16)], [ref], compiled=True)


for _dto_op in ("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
                "nn.avg_pool3d"):
    dto_add_cases(_dto_op, dto_pool_cases)
for _dto_op in ("nn.global_max_pool2d", "nn.global_avg_pool2d", "nn.adaptive_max_pool2d",
                "nn.adaptive_avg_pool2d"):
    dto_add_cases(_dto_op, dto_plane_pool_cases)
for _dto_op in ("image.resize1d", "image.resize2d", "image.resize3d"):
    dto_add_cases(_dto_op, dto_resize_cases)
for _dto_op in ("nn.dense", "nn.matmul", "nn.batch_matmul"):
    dto_add_cases(_dto_op, dto_dense_cases)
for _dto_op in ("variance", "std", "logsumexp"):
    dto_add_cases(_dto_op, dto_stats_cases)
dto_add_cases("nn.conv2d", dto_conv2d_cases)
dto_add_cases("image.grid_sample", dto_half_of("g_grid_sample"))
dto_add_cases("image.affine_grid", dto_half_of("g_affine_grid"))
dto_add_cases("variance", dto_wide_unsigned_cases)
dto_add_cases("mean_variance", dto_wide_unsigned_cases)
dto_add_cases("power", dto_power_cases)
dto_add_cases("nn.batch_norm", dto_batch_norm_cases)
dto_add_cases("collapse_sum_like", dto_collapse_cases)
