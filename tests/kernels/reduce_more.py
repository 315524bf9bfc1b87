"""More cases of mean_variance for its compute rule (lower/compute/compute_misc.c),
run in tests/kernels_numpy.py's namespace after reduce.py (Case,
rand_float, rand_int, norm_axes, moved, red_shape, float_variance,
int_variance, wrap_int, var_attrs come from there): longer rows, every
axis form (one, several, none, exclude, keepdims, unbiased) on float32 and
float64 and on every integer dtype the rule takes (int8 to int64, uint8;
exact), each of which must run compiled.  The mean is held to
a bound of its sum's rounding (the mean of |x|), the variance to its own
magnitude (a sum of squares)."""


def rm_mean_variance(op):
    for dt in (np.float32, np.float64):
        x = rand_float((3, 4, 37), dt, specials=False)
        for axis, kd, ex, ub in [([2], False, False, False), ([0, 2], True, False, True), (None, False, False, False),
                                 ([1], False, True, False), ([-1, -3], True, True, True)]:
            ax = tuple(sorted(norm_axes(axis, x.ndim, ex)))
            v, m = float_variance(x, ax, kd, int(ub))
            # the mean's sum cancels: its error is relative to the mean of |x|
            _, mabs = float_variance(np.abs(x), ax, kd, int(ub))
            yield Case(op, var_attrs(axis, kd, ex, ub), [x], [np.asarray(m).astype(dt), np.asarray(v).astype(dt)],
                       "tol", rtol=4 * float(np.finfo(dt).eps), scale=[mabs, np.abs(v)],
                       atol=float(np.finfo(dt).tiny), compiled=True)


def rm_int_mean_variance(op):
    """TVM's integer arithmetic (reduce.py's int_variance): edge values make
    the sums and squares wrap in the dtype."""
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8):
        x = rand_int((3, 5, 17), dt)
        for axis, kd, ex, ub in [([2], False, False, False), ([0, 2], True, False, True), (None, False, False, True),
                                 ([1], True, True, False)]:
            ax = tuple(sorted(norm_axes(axis, x.ndim, ex)))
            rows = moved(x, ax).reshape(-1, int(np.prod([x.shape[a] for a in ax])))
            res = [int_variance(r, dt, int(ub)) for r in rows]
            shape = red_shape(x, ax, kd)
            v = np.array([wrap_int(r[0], dt) for r in res], dtype=object).reshape(shape).astype(dt)
            m = np.array([r[1] for r in res], dtype=object).reshape(shape).astype(dt)
            yield Case(op, var_attrs(axis, kd, ex, ub), [x], [m, v], compiled=True)


rm_base = GENERATORS["mean_variance"][0]


def rm_all(name):
    yield from rm_base(name)
    yield from rm_mean_variance(name)
    yield from rm_int_mean_variance(name)


GENERATORS["mean_variance"] = (rm_all, "mean_variance")
