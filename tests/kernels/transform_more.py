"""More cases of one_hot for its compute rule (lower/compute/compute_misc.c), run in
tests/kernels_numpy.py's namespace (Case, RNG, attrs_text come from
there): every dtype of the values a buffer may have, index dtypes from
int8 to int64, negative indices and indices past the depth (no element is
hot), the new axis first, inside and last.  Each case must run
compiled."""


def tm_one_hot(op):
    for dt, idt, shape, depth, axis in [(np.float64, np.int64, (4, 3), 5, 0), (np.int8, np.int8, (2, 3, 2), 4, 1),
                                        (np.bool_, np.int32, (7,), 3, -1), (np.int64, np.int16, (2, 9), 6, 2),
                                        (np.uint8, np.int32, (3, 3), 2, 1), (np.float32, np.int32, (33,), 40, -1)]:
        ix = RNG.integers(-2, depth + 2, shape).astype(idt)
        on, off = np.array(1, dt), np.array(0, dt)
        if dt not in (np.bool_, np.uint8):
            on, off = np.array(7, dt), np.array(-3, dt)
        at = ix.ndim if axis == -1 else axis
        hot = np.expand_dims(ix, at) == np.arange(depth).reshape([-1] + [1] * (ix.ndim - at))
        yield Case(op, attrs_text(depth=depth, axis=axis), [ix, on, off], [np.where(hot, on, off).astype(dt)],
                   compiled=True)


tm_base = GENERATORS["one_hot"][0]


def tm_all(name):
    yield from tm_base(name)
    yield from tm_one_hot(name)


GENERATORS["one_hot"] = (tm_all, "one_hot")
