# dyn.py — numpy cases for the dyn ops whose shape-giving argument is a
# tensor: dyn.tile, dyn.topk, dyn.one_hot, dyn.zeros, dyn.ones, dyn.squeeze,
# the reductions dyn.sum, dyn.mean, dyn.max, dyn.min, dyn.prod, dyn.logsumexp,
# dyn.expand_dims, dyn.split, dyn.cumsum,
# dyn.nn.pad (dyn.reshape, dyn.strided_slice, dyn.full and dyn.broadcast_to
# are with their static ops in kernels_numpy.py; dyn.image.resize2d is in
# image.py).  Run in kernels_numpy.py's namespace (Case, gen, RNG, ...).


@gen("dyn.tile")
def g_dyn_tile(op):
    for dt in (np.float32, np.int8, np.bool_, np.float16):
        for _ in range(3):
            x = rand_of(rand_shape(rank=int(RNG.integers(0, 4)), maxdim=3), dt)
            reps = [int(RNG.integers(1, 4)) for _ in range(int(RNG.integers(0, 5)))]
            rdt = RNG.choice([np.int32, np.int64])
            yield Case(op, "", [x, np.array(reps, rdt).reshape(-1)], [np.tile(x, reps)])
            if reps:  # constant repetitions: the type knows the result, the jit mode compiles it
                yield Case(op, "", [x, np.array(reps, rdt)], [np.tile(x, reps)], consts=[1],
                           compiled=dt not in (np.int8, np.float16))
    x = rand_float((2, 3), np.float32)
    yield Case(op, "", [x, np.array([2, 0], np.int64)], "reps must be positive")
    yield Case(op, "", [x, np.array([[2]], np.int64)], "reps must be a 1-D integer tensor")
    yield Case(op, "", [x, np.array([2.0], np.float32)], "reps must be a 1-D integer tensor")


def topk_ref(x, k, axis, asc, ret, idt=np.int32):
    """Stable order: ties keep their positions (ascending), or reversed positions
    from the end (descending), as argsort on the flipped array."""
    n = x.shape[axis]
    if asc:
        idx = np.argsort(x, axis=axis, kind="stable")
    else:
        idx = np.flip(n - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    if k >= 1:
        idx = np.take(idx, np.arange(k), axis=axis)
    vals = np.take_along_axis(x, idx, axis)
    return {"both": [vals, idx.astype(idt)], "values": [vals], "indices": [idx.astype(idt)]}[ret]


@gen("dyn.topk")
def g_dyn_topk(op):
    for dt in (np.float32, np.int32, np.float64, np.uint8):
        for ret in ("both", "values", "indices"):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=5, allow_empty=False), dt, lo=-3, hi=3)
            axis = int(RNG.integers(-x.ndim, x.ndim))
            k = int(RNG.integers(0, x.shape[axis] + 1))
            asc = bool(RNG.random() < 0.3)
            kt = np.array(k, np.int64) if RNG.random() < 0.5 else np.array([k], np.int32)
            kw = dict(axis=axis, ret_type=ret, is_ascend=asc)
            idt = np.int32
            if RNG.random() < 0.3:
                kw["dtype"], idt = "int64", np.int64
            yield Case(op, attrs_text(**kw), [x, kt], topk_ref(x, k, axis, asc, ret, idt))
    x = rand_float((2, 3), np.float32)
    yield Case(op, "", [x, np.array(4, np.int32)], "k 4 is larger than axis 1")
    yield Case(op, "", [x, np.array([1, 2], np.int32)], "k must be an integer scalar")
    yield Case(op, "", [x, np.array(1.0, np.float32)], "k must be an integer scalar")
    yield Case(op, 'ret_type="all"', [x, np.array(1, np.int32)], 'ret_type must be "both"')


@gen("dyn.one_hot")
def g_dyn_one_hot(op):
    for dt in (np.float32, np.int32, np.int8):
        for _ in range(3):
            ix = RNG.integers(-1, 5, rand_shape(rank=int(RNG.integers(0, 3)), maxdim=3)).astype(np.int32)
            depth, axis = int(RNG.integers(0, 6)), int(RNG.integers(-1, ix.ndim + 1))
            on, off = np.array(3, dt), np.array(-1, dt)
            at = ix.ndim if axis == -1 else axis
            hot = np.expand_dims(ix, at) == np.arange(depth).reshape([-1] + [1] * (ix.ndim - at))
            yield Case(op, attrs_text(axis=axis), [ix, on, off, np.array(depth, np.int64)],
                       [np.where(hot, on, off).astype(dt)])
            # a constant depth: the type knows it, and the jit mode compiles the op
            yield Case(op, attrs_text(axis=axis), [ix, on, off, np.array(depth, np.int64)],
                       [np.where(hot, on, off).astype(dt)], consts=[3], compiled=True)
    ix, on, off = np.array([0, 2], np.int32), np.array(1.0, np.float32), np.array(0.0, np.float32)
    yield Case(op, "", [ix, on, off, np.array(-1, np.int32)], "depth must not be negative")
    yield Case(op, "", [ix, on, off, np.array([3], np.int32)], "depth must be an integer scalar")
    yield Case(op, "axis=3", [ix, on, off, np.array(3, np.int32)], "axis 3 is out of range")


@gen("dyn.zeros", "dyn.ones")
def g_dyn_init(op):
    f = np.zeros if op == "dyn.zeros" else np.ones
    for dt in (np.float32, np.int8, np.bool_, np.float16, np.uint64):
        shape = rand_shape()
        yield Case(op, attrs_text(dtype=dname(dt)), [np.array(shape, np.int64).reshape(-1)], [f(shape, dt)])
    yield Case(op, "", [np.array([2, 3], np.int32)], [f((2, 3), np.float32)])
    yield Case(op, "", [np.zeros(0, np.int64)], [f((), np.float32)])  # a scalar: no run-time dim
    yield Case(op, "", [np.array([2, -3], np.int32)], "negative")
    yield Case(op, "", [np.array([[2]], np.int32)], "shape must be a 1-D integer tensor")


@gen("dyn.squeeze")
def g_dyn_squeeze(op):
    for shape in [(1, 3, 1), (1,), (2, 1, 1, 4), (1, 1)]:
        x = rand_of(shape, np.int16)
        ones = [i for i, d in enumerate(shape) if d == 1]
        for k in range(1, len(ones) + 1):
            axes = list(RNG.choice(ones, k, replace=False))
            axes = [a - len(shape) if RNG.random() < 0.4 else a for a in axes]
            yield Case(op, "", [x, np.array(axes, np.int64)], [np.squeeze(x, axis=tuple(axes))])
        yield Case(op, "", [x, np.zeros(0, np.int32)], [x])
    x = rand_float((1, 3, 1), np.float32)
    yield Case(op, "", [x, np.array([1], np.int32)], "axis 1 of (1, 3, 1) has size 3, not 1")
    yield Case(op, "", [x, np.array([0, -3], np.int32)], "axis 0 is listed twice")
    yield Case(op, "", [x, np.array([3], np.int32)], "axis 3 is out of range")
    yield Case(op, "", [x, np.zeros(4, np.int32)], "4 axes to remove from rank 3")


@gen("dyn.nn.pad")
def g_dyn_pad(op):
    for dt in (np.float32, np.int8, np.float16, np.int64):
        for mode in ("constant", "edge", "reflect"):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
            pw = [(int(RNG.integers(0, n if mode == "reflect" else 3)),
                   int(RNG.integers(0, n if mode == "reflect" else 3))) for n in x.shape]
            v = np.array(2.7, np.float32) if RNG.random() < 0.5 else np.array(-2, np.int32)
            fill = np.array(v).astype(np.float64)
            fill = fill.astype(dt) if dt in FLOATS else np.trunc(fill).astype(dt)
            ref = np.pad(x, pw, mode="constant", constant_values=fill) if mode == "constant" else np.pad(x, pw, mode=mode)
            pwt = np.array(pw, RNG.choice([np.int32, np.int64]))
            yield Case(op, attrs_text(pad_mode=mode), [x, pwt, v], [ref])
            # constant widths: the jit mode compiles the pad (a dtype its rule takes)
            yield Case(op, attrs_text(pad_mode=mode), [x, pwt, v], [ref], consts=[1],
                       compiled=dt in (np.float32, np.int64))
    x = rand_float((3, 4), np.float32)
    yield Case(op, "", [x, np.array([[-1, 2], [1, -2]], np.int64), np.array(0, np.float32)],
               [np.pad(x, [(0, 2), (1, 0)])[1:, :-2]])
    yield Case(op, "", [x, np.array([[0, 0]], np.int64), np.array(0, np.float32)], "pad_width must be integers of shape (2, 2)")
    yield Case(op, "", [x, np.array([[0, 0], [0, 0]], np.float32), np.array(0, np.float32)], "pad_width must be integers")
    yield Case(op, 'pad_mode="reflect"', [x, np.array([[0, 0], [4, 0]], np.int32), np.array(0, np.float32)],
               "reflect")
    yield Case(op, 'pad_mode="wrap"', [x, np.array([[0, 0], [1, 0]], np.int32), np.array(0, np.float32)],
               "pad_mode must be")
    yield Case(op, "", [x, np.array([[0, 0], [1, 0]], np.int32), np.zeros(2, np.float32)], "must be a scalar")


def dyn_axes_case(shape):
    """A distinct subset of shape's axes, some written negative."""
    k = int(RNG.integers(1, len(shape) + 1))
    axes = [int(a) for a in RNG.choice(len(shape), k, replace=False)]
    return [a - len(shape) if RNG.random() < 0.4 else a for a in axes]


def g_dyn_reduce(op):
    f = {"dyn.sum": np.sum, "dyn.max": np.max, "dyn.min": np.min, "dyn.prod": np.prod}[op]
    for dt in (np.int32, np.int64, np.int8):
        for keep in (False, True):
            x = rand_int(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt,
                         lo=-3, hi=3)
            axes = dyn_axes_case(x.shape)
            ref = f(x, axis=tuple(axes), keepdims=keep).astype(dt)
            yield Case(op, attrs_text(keepdims=keep), [x, np.array(axes, np.int64)], [ref])
    x = rand_int((2, 3), np.int32)
    yield Case(op, "", [x, np.array([2], np.int64)], "out of range")


for _op in ("dyn.sum", "dyn.max", "dyn.min", "dyn.prod"):
    gen(_op)(g_dyn_reduce)


@gen("dyn.mean")
def g_dyn_mean(op):
    for keep in (False, True):
        x = rand_int((3, 4, 2), np.int64, lo=-50, hi=50, edges=False).astype(np.float64)
        axes = dyn_axes_case(x.shape)
        ref = np.mean(x, axis=tuple(axes), keepdims=keep)
        yield Case(op, attrs_text(keepdims=keep), [x, np.array(axes, np.int32)], [ref], "tol",
                   rtol=1e-15, atol=0.0, scale=[np.full(ref.shape, 50.0)])


@gen("dyn.logsumexp")
def g_dyn_logsumexp(op):
    for keep in (False, True):
        x = rand_float((3, 4), np.float64, specials=False)
        axes = dyn_axes_case(x.shape)
        m = np.max(x, axis=tuple(axes), keepdims=True)
        ref = np.log(np.sum(np.exp(x - m), axis=tuple(axes), keepdims=True)) + m
        ref = ref if keep else np.squeeze(ref, axis=tuple(axes))
        yield Case(op, attrs_text(keepdims=keep), [x, np.array(axes, np.int64)], [ref], "tol",
                   rtol=1e-14, atol=0.0, scale=[np.abs(ref) + 1])


@gen("dyn.expand_dims")
def g_dyn_expand_dims(op):
    for shape in [(3,), (2, 4), (), (1, 2, 3)]:
        x = rand_of(shape, np.float32)
        for k in (1, 2):
            out = len(shape) + k
            axes = [int(a) for a in RNG.choice(out, k, replace=False)]
            axes = [a - out if RNG.random() < 0.4 else a for a in axes]
            yield Case(op, "", [x, np.array(axes, np.int64)], [np.expand_dims(x, tuple(axes))])
            # constant axes: the type knows the result, the jit mode compiles it (a reshape)
            yield Case(op, "", [x, np.array(axes, np.int64)], [np.expand_dims(x, tuple(axes))],
                       consts=[1], compiled=True)
    x = rand_float((2, 3), np.float32)
    yield Case(op, "", [x, np.array([0, -4], np.int64)], "axis 0 is listed twice")
    yield Case(op, "", [x, np.array([3], np.int64)], "out of range")


@gen("dyn.split")
def g_dyn_split(op):
    for dt in (np.float32, np.int16):
        for axis in (0, 1, -1):
            x = rand_of((5, 4), dt)
            n = x.shape[axis]
            cuts = sorted(int(c) for c in RNG.integers(0, n + 1, size=2))
            sizes = [cuts[0], cuts[1] - cuts[0], n - cuts[1]]
            ref = np.split(x, cuts, axis=axis)
            yield Case(op, attrs_text(axis=axis), [x, np.array(sizes, np.int64)], ref)
    x = rand_float((5,), np.float32)
    yield Case(op, "", [x, np.array([5], np.int32)], [x])
    yield Case(op, "", [x, np.array([2, 2], np.int64)], "sizes add up to 4, not the axis' 5")
    yield Case(op, "", [x, np.array([6, -1], np.int64)], "size -1 is negative")


@gen("dyn.cumsum")
def g_dyn_cumsum(op):
    for dt in (np.int32, np.int64):
        for rev in (False, True):
            for excl in (False, True):
                x = rand_int((3, 4), dt, lo=-9, hi=9)
                axis = int(RNG.integers(-2, 2))
                y = np.flip(x, axis) if rev else x
                r = np.cumsum(y, axis=axis, dtype=dt)
                if excl:
                    r = np.concatenate([np.zeros_like(np.take(r, [0], axis=axis)),
                                        np.delete(r, -1, axis=axis)], axis=axis)
                r = np.flip(r, axis) if rev else r
                yield Case(op, attrs_text(exclusive=excl, reverse=rev),
                           [x, np.array(axis, np.int64)], [np.ascontiguousarray(r)])
    yield Case(op, "", [rand_int((3,), np.int32), np.array(1, np.int64)], "out of range")
