"""More cases of mean_variance for its compute rule (ops/compute_misc.c),
run in tests/kernels_numpy.py's namespace after reduce.py (Case,
rand_float, norm_axes, float_variance, var_attrs come from there): longer
rows, every axis form (one, several, none, exclude, keepdims, unbiased) on
float32 and float64, each of which must run compiled.  The mean is held to
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


rm_base = GENERATORS["mean_variance"][0]


def rm_all(name):
    yield from rm_base(name)
    yield from rm_mean_variance(name)


GENERATORS["mean_variance"] = (rm_all, "mean_variance")
