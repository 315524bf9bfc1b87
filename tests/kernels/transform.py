# tests/kernels/transform.py — numpy cases for the transform_shape,
# transform_index and algorithm families (ops/transform_shape.c,
# ops/transform_index.c, ops/algorithm.c).  Run in tests/kernels_numpy.py's
# namespace: Case, @gen, rand_of, rand_shape, attrs_text, the dtype lists.
#
# References are numpy's functions where they define the op (tile, repeat,
# flip, triu, take_along_axis, fancy indexing, meshgrid, einsum, stable
# argsort, searchsorted) and plain loops where TVM's semantics differ from
# any numpy function (reverse_sequence, sequence_mask, scatters in update
# order, sparse_to_dense skipping outside coordinates, layout_transform's
# zero padding, unique's fixed-size outputs).


def idx_dtypes(signed_only=False):
    return [np.int32, np.int64, np.int8] + ([] if signed_only else [np.uint8])


def rand_index(shape, n, dt, allow_neg=True):
    lo = -n if allow_neg and np.dtype(dt).kind == "i" else 0
    return RNG.integers(lo, max(n, 1), shape).astype(dt) if n else np.zeros(shape, dt)


# ─────────────────────────── transform_shape ───────────────────────────


def factor_shape(total, rank):
    """A random shape of `rank` dims with product `total`."""
    dims = [1] * rank
    for p in [2, 3, 5, 7]:
        while total % p == 0 and rank:
            total //= p
            dims[int(RNG.integers(0, rank))] *= p
    if rank:
        dims[int(RNG.integers(0, rank))] *= total
    return dims


@gen("reshape_like")
def g_reshape_like(op):
    for i, dt in enumerate(ALL):
        s = list(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4))
        n = len(s)
        lb = int(RNG.integers(0, n + 1))
        le = int(RNG.integers(lb, n + 1))
        part = int(np.prod(s[lb:le]))
        mid = factor_shape(part, int(RNG.integers(1, 3))) if part else [0]
        pre, post = [int(v) for v in RNG.integers(1, 4, int(RNG.integers(0, 2)))], [2]
        like = np.zeros(pre + mid + post, np.int8 if i % 2 else np.int32)
        x = rand_of(tuple(s), dt)
        out = tuple(s[:lb]) + tuple(mid) + tuple(s[le:])
        kw = dict(lhs_begin=lb - n if lb < n and RNG.random() < .3 else lb, rhs_begin=len(pre),
                  rhs_end=len(pre) + len(mid) - like.ndim)
        if le != n or RNG.random() < .5:
            kw["lhs_end"] = le
        yield Case(op, attrs_text(**kw), [x, like], [x.reshape(out)])
    yield Case(op, "", [np.zeros((2, 3), np.float32), np.zeros((4,), np.int8)], "element counts differ")
    yield Case(op, "lhs_begin=3", [np.zeros((2, 3), np.float32), np.zeros((6,))], "lhs_begin 3 is out of range")


@gen("broadcast_to_like")
def g_broadcast_to_like(op):
    for dt in ALL:
        shape = rand_shape()
        x, like = rand_of(bcast_pair(shape), dt), np.zeros(shape, dt)
        yield Case(op, "", [x, like], [np.broadcast_to(x, shape)])
    yield Case(op, "", [np.zeros((3,), np.float32), np.zeros((2, 4), np.float32)], "cannot broadcast (3) to (2, 4)")
    yield Case(op, "", [np.zeros((3,), np.float32), np.zeros((3,), np.int32)], "dtype float32 but broadcast_type has int32")


@gen("collapse_sum_like")
def g_collapse_sum_like(op):
    for dt in NUMERIC:
        for _ in range(3):
            shape = rand_shape()
            small = bcast_pair(shape)
            x = rand_of(shape, dt, specials=False, lo=-20, hi=20)
            lead = len(shape) - len(small)
            axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(small) if d == 1 and shape[lead + i] != 1)
            like = np.zeros(small, dt)
            if dt in FLOATS:
                x64 = x.astype(np.float64)
                ref = x64.sum(axis=axes, keepdims=True).reshape(-1)
                scale = np.abs(x64).sum(axis=axes, keepdims=True).reshape(small)
                yield Case(op, "", [x, like], [ref.reshape(small).astype(dt)], "tol", rtol=RTOL_SUM[dt],
                           scale=[scale], atol=0.0)
            else:
                acc = np.uint64 if np.dtype(dt).kind == "u" else np.int64
                ref = quiet(lambda: x.astype(acc).sum(axis=axes, keepdims=True, dtype=acc))
                yield Case(op, "", [x, like], [ref.reshape(small).astype(dt)])
    yield Case(op, "", [np.zeros((2, 3), np.float32), np.zeros((2,), np.float32)], "cannot collapse (2, 3) to (2)")
    yield Case(op, "", [np.zeros((2,), np.bool_), np.zeros((1,), np.bool_)], "cannot sum bool")


@gen("full_like")
def g_full_like(op):
    fills = [np.array(2.5, np.float32), np.array(-3, np.int32), np.array(True), np.array(7, np.uint8)]
    for dt in ALL:
        for v in fills:
            x = rand_of(rand_shape(), dt)
            if np.dtype(dt).kind == "u" and v < 0:
                ref = np.full(x.shape, v.astype(np.int64)).astype(dt)  # wraps, as a C cast
            else:
                ref = np.full(x.shape, v).astype(dt)
            yield Case(op, "", [x, v], [ref])
    yield Case(op, "", [np.zeros(2, np.float32), np.zeros(2, np.float32)], "fill_value must be a scalar")


@gen("cast_like")
def g_cast_like(op):
    for src in ALL:
        for dst in [ALL[int(i)] for i in RNG.choice(len(ALL), 4, replace=False)]:
            x = castable(rand_of(rand_shape(rank=int(RNG.integers(0, 3)), maxdim=6), src), src, dst)
            yield Case(op, "", [x, np.zeros((2,), dst)], [quiet(lambda: x.astype(dst))])


@gen("reinterpret")
def g_reinterpret(op):
    groups = [[np.int8, np.uint8], [np.int16, np.uint16, np.float16], [np.int32, np.uint32, np.float32],
              [np.int64, np.uint64, np.float64]]
    for grp in groups:
        for src in grp:
            for dst in grp:
                x = rand_of(rand_shape(), src)
                yield Case(op, attrs_text(dtype=dname(dst)), [x], [x.view(dst)])
    yield Case(op, 'dtype="float32"', [np.zeros(2, np.int16)], "int16 (16 bits) as float32 (32 bits)")
    yield Case(op, 'dtype="uint8"', [np.zeros(2, np.bool_)], "bool has no bit pattern")


@gen("slice_like")
def g_slice_like(op):
    for dt in ALL:
        for ldt in (np.int8, np.float32):
            shape = rand_shape(rank=int(RNG.integers(1, 4)))
            like = tuple(int(RNG.integers(0, d + 1)) for d in shape)[:int(RNG.integers(1, len(shape) + 1))]
            x = rand_of(shape, dt)
            if RNG.random() < .5:
                idx = tuple(slice(0, d) for d in like)
                extra = (1,) * int(RNG.integers(0, 2)) if len(like) == len(shape) else ()  # ignored dims
                yield Case(op, "", [x, np.zeros(like + extra, ldt)], [x[idx]])
            else:
                axes = sorted(RNG.choice(len(like), int(RNG.integers(1, len(like) + 1)), replace=False).tolist())
                idx = [slice(None)] * len(shape)
                for a in axes:
                    idx[a] = slice(0, like[a])
                axes = [a - len(shape) if RNG.random() < .3 else a for a in axes]
                yield Case(op, attrs_text(axes=axes), [x, np.zeros(like, ldt)], [x[tuple(idx)]])
    x = np.zeros((2, 3), np.float32)
    yield Case(op, "", [x, np.zeros((2, 4))], "larger than the data's")
    yield Case(op, "axes=[1]", [x, np.zeros((2,))], "axis 1 is past the rank 1")


def nchw_to_split(x, f):
    """NCHW → NCHW{f}c, C padded with zeros to a multiple of f."""
    n, c, h, w = x.shape
    cp = -(-c // f) * f
    xp = np.zeros((n, cp, h, w), x.dtype)
    xp[:, :c] = x
    return xp.reshape(n, cp // f, f, h, w).transpose(0, 1, 3, 4, 2)


def split_to_nchw(x):
    n, co, h, w, f = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, co * f, h, w)


@gen("layout_transform")
def g_layout_transform(op):
    for dt in ALL:
        n, c, h, w = (int(RNG.integers(1, 3)), int(RNG.integers(1, 9)), int(RNG.integers(1, 4)),
                      int(RNG.integers(1, 4)))
        x = rand_of((n, c, h, w), dt)
        f, g = int(RNG.choice([2, 4, 8])), int(RNG.choice([2, 3, 4]))
        cases = [("NCHW", "NHWC", x, x.transpose(0, 2, 3, 1)),
                 ("NHWC", "NCHW", x.transpose(0, 2, 3, 1), x),
                 ("NCHW", "NCHW%dc" % f, x, nchw_to_split(x, f)),
                 ("NCHW%dc" % f, "NCHW", nchw_to_split(x, f), split_to_nchw(nchw_to_split(x, f))),
                 ("NCHW%dc" % f, "NCHW%dc" % g, nchw_to_split(x, f), nchw_to_split(split_to_nchw(nchw_to_split(x, f)), g)),
                 ("NHWC", "NCHW%dc" % g, x.transpose(0, 2, 3, 1), nchw_to_split(x, g)),
                 ("NCHW%dc" % f, "NHWC", nchw_to_split(x, f), split_to_nchw(nchw_to_split(x, f)).transpose(0, 2, 3, 1)),
                 ("NCHW", "CNWH", x, x.transpose(1, 0, 3, 2)),
                 ("NCHW", "NCHW", x, x)]
        for src, dst, a, ref in cases:
            yield Case(op, attrs_text(src_layout=src, dst_layout=dst), [a], [ref])
    x = np.zeros((1, 2, 3, 4), np.float32)
    yield Case(op, 'src_layout="NCHW", dst_layout="NHW"', [x], "axis C is only in src_layout")
    yield Case(op, 'src_layout="NCH", dst_layout="NHC"', [x], "src_layout \"NCH\" has 3 axes")
    yield Case(op, 'src_layout="NCHW", dst_layout="NCHW4"', [x], "it ends with a factor")
    yield Case(op, 'src_layout="NCHW", dst_layout="NHW4c"', [x], "a lowercase axis has no uppercase axis")
    yield Case(op, 'src_layout="NCHW", dst_layout="NCHWc"', [x], "a lowercase axis needs a positive factor")
    yield Case(op, 'src_layout="NCHW", dst_layout="NCHWN"', [x], "an axis appears twice")
    yield Case(op, 'src_layout="NCHW2c", dst_layout="NCHW"', [np.zeros((1, 2, 3, 4, 3), np.float32)],
               "splits it by 2")


@gen("tile")
def g_tile(op):
    for dt in ALL:
        for _ in range(2):
            x = rand_of(rand_shape(rank=int(RNG.integers(0, 4)), maxdim=3), dt)
            reps = [int(v) for v in RNG.integers(1, 4, int(RNG.integers(1, 4)))]
            yield Case(op, attrs_text(reps=reps), [x], [np.tile(x, reps)])
    yield Case(op, "reps=[2, 0]", [np.zeros((2, 2), np.float32)], "tile: reps must be positive, got 0 at position 1")


@gen("repeat")
def g_repeat(op):
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 4))), dt)
        axis, r = int(RNG.integers(-x.ndim, x.ndim)), int(RNG.integers(1, 4))
        yield Case(op, attrs_text(repeats=r, axis=axis), [x], [np.repeat(x, r, axis=axis)])
    yield Case(op, "repeats=0, axis=0", [np.zeros(2, np.float32)], "repeats must be at least 1, got 0")
    yield Case(op, "repeats=2", [np.zeros(2, np.float32)], "attribute `axis` is required")
    yield Case(op, "repeats=2, axis=1", [np.zeros(2, np.float32)], "axis 1 is out of range for rank 1")


@gen("reverse")
def g_reverse(op):
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 4))), dt)
        axis = int(RNG.integers(-x.ndim, x.ndim))
        yield Case(op, attrs_text(axis=axis), [x], [np.flip(x, axis)])
    yield Case(op, "", [np.zeros(2, np.float32)], "attribute `axis` is required")


def reverse_sequence_ref(x, lens, s, b):
    out = x.copy()
    n = x.shape[s]
    for idx in np.ndindex(*x.shape):
        ln, i = int(lens[idx[b]]), idx[s]
        if ln > 1 and i < ln:
            j = list(idx)
            j[s] = n - 1 - i if ln > n else ln - 1 - i
            out[idx] = x[tuple(j)]
    return out


@gen("reverse_sequence")
def g_reverse_sequence(op):
    for dt in ALL:
        for ldt in (np.int32, np.int64, np.int8):
            x = rand_of(rand_shape(rank=int(RNG.integers(2, 4)), maxdim=4), dt)
            s, b = (int(v) for v in RNG.choice(x.ndim, 2, replace=False))
            lens = RNG.integers(-1, x.shape[s] + 3, x.shape[b]).astype(ldt)
            kw = dict(seq_axis=s - x.ndim if RNG.random() < .3 else s, batch_axis=b)
            yield Case(op, attrs_text(**kw), [x, lens], [reverse_sequence_ref(x, lens, s, b)])
    x = np.zeros((2, 3), np.float32)
    yield Case(op, "", [x, np.zeros(3, np.int32)], "does not match batch axis 0")
    yield Case(op, "", [x, np.zeros(2, np.uint8)], "seq_lengths must be signed integers, got uint8")
    yield Case(op, "", [x, np.zeros((2, 1), np.int32)], "seq_lengths must be 1-D")


@gen("sequence_mask")
def g_sequence_mask(op):
    for dt in ALL:
        for ldt in (np.int32, np.float32, np.int64):
            x = rand_of(rand_shape(rank=int(RNG.integers(2, 4)), maxdim=4), dt)
            axis = int(RNG.integers(0, 2))
            n, nb = x.shape[axis], x.shape[1 - axis]
            lens = (RNG.integers(-1, n + 2, nb) + (0.5 * (RNG.random(nb) < .3) if ldt == np.float32 else 0)).astype(ldt)
            mv = -3.0 if np.dtype(dt).kind in "if" else 7.0 if np.dtype(dt).kind == "u" else 1.0
            if dt in FLOATS:
                mv = -1.5
            pos = np.arange(n).reshape([n if i == axis else 1 for i in range(x.ndim)])
            ln = lens.reshape([nb if i == 1 - axis else 1 for i in range(x.ndim)])
            ref = np.where(pos >= ln, np.array(mv).astype(dt), x)
            kw = dict(mask_value=mv) if mv != 0 else {}
            if axis or RNG.random() < .5:
                kw["axis"] = axis
            yield Case(op, attrs_text(**kw), [x, lens], [ref])
    yield Case(op, "axis=2", [np.zeros((2, 3), np.float32), np.zeros(3, np.int32)], "axis must be 0 or 1, got 2")
    yield Case(op, "", [np.zeros((2, 3), np.float32), np.zeros(2, np.int32)], "valid_length (2) must be 1-D")


@gen("meshgrid")
def g_meshgrid(op):
    for dt in ALL:
        for ix in ("ij", "xy"):
            xs = [rand_of(rand_shape(rank=int(RNG.integers(0, 2)), maxdim=4), dt)
                  for _ in range(int(RNG.integers(1, 4)))]
            ref = np.meshgrid(*[x.reshape(-1) for x in xs], indexing=ix)
            yield Case(op, attrs_text(indexing=ix) if ix == "xy" or RNG.random() < .5 else "", xs, list(ref))
    yield Case(op, 'indexing="ab"', [np.zeros(2, np.float32)], 'indexing must be "ij" or "xy"')
    yield Case(op, "", [np.zeros(2, np.float32), np.zeros(2, np.int32)], "field 1 has dtype int32")
    yield Case(op, "", [np.zeros((2, 2), np.float32)], "field 0 must be a scalar or a 1-D tensor")


@gen("trilu")
def g_trilu(op):
    for dt in ALL:
        for upper in (True, False):
            x = rand_of(rand_shape(rank=int(RNG.integers(2, 4)), maxdim=5), dt)
            k = np.array(int(RNG.integers(-3, 4)), RNG.choice([np.int32, np.int64]))
            ref = np.triu(x, int(k)) if upper else np.tril(x, int(k))
            yield Case(op, "" if upper and RNG.random() < .5 else attrs_text(upper=upper), [x, k], [ref])
    yield Case(op, "", [np.zeros(3, np.float32), np.array(0)], "data must have rank at least 2")
    yield Case(op, "", [np.zeros((3, 3), np.float32), np.array([0])], "k must be a scalar")
    yield Case(op, "", [np.zeros((3, 3), np.float32), np.array(0.5, np.float32)], "k must be integers")


# ─────────────────────────── transform_index ───────────────────────────


@gen("gather")
def g_gather(op):
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), allow_empty=False), dt)
        axis = int(RNG.integers(-x.ndim, x.ndim))
        ishape = list(x.shape)
        ishape[axis] = int(RNG.integers(1, 5))
        ix = rand_index(ishape, x.shape[axis], RNG.choice(idx_dtypes(True)))
        yield Case(op, attrs_text(axis=axis), [x, ix], [np.take_along_axis(x, ix.astype(np.int64), axis)])
    x = rand_of((2, 0, 3), np.float32)
    yield Case(op, "axis=2", [x, np.zeros((2, 0, 1), np.int32)], [np.zeros((2, 0, 1), np.float32)])
    x = rand_of((2, 3), np.float32)
    yield Case(op, "axis=1", [x, np.array([[0], [3]], np.int32)], "gather: index 3 is out of bounds for axis 1 with size 3")
    yield Case(op, "axis=0", [x, np.array([[-3, 0, 0]], np.int64)], "gather: index -3 is out of bounds for axis 0 with size 2")
    yield Case(op, "axis=0", [x, np.zeros((1, 3), np.uint8)], "indices must be signed integers, got uint8")
    yield Case(op, "axis=0", [x, np.zeros((1, 2), np.int32)], "differ at axis 1")
    yield Case(op, "", [x, np.zeros((1, 3), np.int32)], "attribute `axis` is required")


def gather_nd_ref(x, ix, b):
    if b == 0:
        m = ix.shape[0]
        if m == 0:
            return np.broadcast_to(x, ix.shape[1:] + x.shape).copy()
        return x[tuple(ix.astype(np.int64))]
    return np.stack([gather_nd_ref(x[i], ix[:, i], b - 1) for i in range(x.shape[0])])


@gen("gather_nd")
def g_gather_nd(op):
    for dt in ALL:
        for b in (0, 0, 1):
            x = rand_of(rand_shape(rank=int(RNG.integers(1 + b, 4)), maxdim=4, allow_empty=False), dt)
            m = int(RNG.integers(1, x.ndim - b + 1))
            y = (x.shape[:b] if b else ()) + rand_shape(rank=int(RNG.integers(0, 3)), maxdim=3)
            idt = RNG.choice(idx_dtypes())
            ix = np.stack([rand_index(y, x.shape[b + j], idt) for j in range(m)])
            yield Case(op, attrs_text(batch_dims=b) if b else "", [x, ix], [gather_nd_ref(x, ix, b)])
    x = rand_of((3, 4), np.float32)
    yield Case(op, "", [x, np.zeros((0, 2), np.int32)], [gather_nd_ref(x, np.zeros((0, 2), np.int32), 0)])
    yield Case(op, "", [x, np.array([[1], [4]], np.int32)], "gather_nd: index 4 is out of bounds for axis 1 with size 4")
    yield Case(op, "", [x, np.zeros((3, 1), np.int32)], "index 3 axes after 0 batch dims")
    yield Case(op, "index_rank=2", [x, np.zeros((1, 1), np.int32)], "index_rank 2 does not match")
    yield Case(op, "", [x, np.zeros((1,), np.float32)], "indices must be integers, got float32")


def scatter_ref(x, ix, up, axis, add):
    out = x.copy()
    n = x.shape[axis]
    for u in np.ndindex(*up.shape):
        pos = list(u)
        k = int(ix[u])
        pos[axis] = k + n if k < 0 else k
        out[tuple(pos)] = quiet(lambda: out[tuple(pos)] + up[u]) if add else up[u]
    return out


@gen("scatter", "scatter_add")
def g_scatter(op):
    add = op == "scatter_add"
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
        axis = int(RNG.integers(-x.ndim, x.ndim))
        ishape = tuple(int(RNG.integers(0, d + 1)) for d in x.shape)
        ishape = tuple(int(RNG.integers(1, 6)) if i == axis % x.ndim else d for i, d in enumerate(ishape))
        ix = rand_index(ishape, x.shape[axis], RNG.choice(idx_dtypes(True)))
        up = rand_of(ishape, dt)
        yield Case(op, attrs_text(axis=axis) if axis or RNG.random() < .5 else "", [x, ix, up],
                   [scatter_ref(x, ix, up, axis, add)])
    x = np.zeros((3,), np.float32)
    yield Case(op, "", [x, np.array([3]), np.ones(1, np.float32)], "%s: index 3 is out of bounds for axis 0 with size 3" % op)
    yield Case(op, "", [x, np.array([0, 1]), np.ones(1, np.float32)], "must have the same shape")
    yield Case(op, "", [x, np.array([0]), np.ones(1, np.int32)], "data has dtype float32 but updates has int32")
    yield Case(op, "", [x, np.array([0.0]), np.ones(1, np.float32)], "indices must be integers")


def scatter_nd_ref(x, ix, up, add, mul=False):
    out = x.copy()
    m = ix.shape[0]
    for y in np.ndindex(*ix.shape[1:]):
        pos = tuple(int(ix[(j,) + y]) for j in range(m))
        pos = tuple(p + x.shape[j] if p < 0 else p for j, p in enumerate(pos))
        if add:
            out[pos] = quiet(lambda: out[pos] + up[y])
        elif mul:
            out[pos] = quiet(lambda: out[pos] * up[y])
        else:
            out[pos] = up[y]
    return out


@gen("scatter_nd")
def g_scatter_nd(op):
    for dt in ALL:
        for mode in ("update", "add", "mul"):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
            m = int(RNG.integers(1, x.ndim + 1))
            y = rand_shape(rank=int(RNG.integers(1, 3)), maxdim=4)
            ix = np.stack([rand_index(y, x.shape[j], np.int64) for j in range(m)]).astype(
                RNG.choice([np.int32, np.int64]))
            up = rand_of(y + x.shape[m:], dt)
            yield Case(op, attrs_text(mode=mode), [x, ix, up], [scatter_nd_ref(x, ix, up, mode == "add", mode == "mul")])
    x = np.zeros((3, 2), np.float32)
    yield Case(op, 'mode="update"', [x, np.array([[5]]), np.ones((1, 2), np.float32)],
               "scatter_nd: index 5 is out of bounds for axis 0 with size 3")
    yield Case(op, 'mode="max"', [x, np.array([[0]]), np.ones((1, 2), np.float32)],
               'mode must be "update", "add" or "mul"')
    yield Case(op, 'mode="add"', [x, np.array([[0]]), np.ones((1, 3), np.float32)], "updates (1, 3) must have shape (1, 2)")
    yield Case(op, "", [x, np.array([[0]]), np.ones((1, 2), np.float32)], "missing attribute `mode`")


def sparse_to_dense_ref(si, sv, dv, shape):
    out = np.full(shape, dv, dv.dtype)
    rows = si.reshape(-1, 1) if si.ndim < 2 else si
    for j in range(rows.shape[0]):
        c = [int(v) for v in rows[j]]
        if all(0 <= v < shape[d] for d, v in enumerate(c)):
            out[tuple(c)] = sv if sv.ndim == 0 else sv[j]
    return out


@gen("sparse_to_dense")
def g_sparse_to_dense(op):
    for dt in ALL:
        shape = [int(v) for v in RNG.integers(1, 5, int(RNG.integers(1, 4)))]
        rank = int(RNG.choice([0, 1, 2])) if len(shape) > 0 else 0
        n = 1 if rank == 0 else int(RNG.integers(0, 6))
        k = len(shape) if rank == 2 and RNG.random() < .7 else 1
        if rank < 2:
            k = 1
        si = RNG.integers(-1, max(shape) + 1, (n, k)).astype(RNG.choice([np.int32, np.int64]))
        si = si.reshape(()) if rank == 0 else si.reshape(n) if rank == 1 else si
        sv = rand_of((n,) if rank and RNG.random() < .8 else (), dt)
        dv = rand_of((), dt)
        yield Case(op, attrs_text(output_shape=shape), [si, sv, dv], [sparse_to_dense_ref(si, sv, dv, shape)])
    yield Case(op, "output_shape=[3]", [np.array([0]), np.ones(1, np.float32), np.array(0, np.int32)],
               "sparse_values has dtype float32 but default_value has int32")
    yield Case(op, "output_shape=[3]", [np.zeros((1, 2), np.int32), np.ones(1, np.float32), np.array(0, np.float32)],
               "give 2 coordinates but output_shape has rank 1")
    yield Case(op, "output_shape=[3]", [np.zeros(2, np.int32), np.ones(3, np.float32), np.array(0, np.float32)],
               "must have one value per index")


def unravel_ref(ix, shape):
    flat = ix.reshape(-1).astype(object)
    out = np.zeros((len(shape), flat.size), np.int64)
    for j, c in enumerate(flat):
        c = int(c)
        for d in range(len(shape) - 1, -1, -1):
            out[d, j] = c % int(shape[d])
            c //= int(shape[d])
    return out.reshape((len(shape),) + ix.shape).astype(ix.dtype)


@gen("unravel_index")
def g_unravel_index(op):
    for dt in ALL_INT:
        for sdt in (np.int32, np.int64):
            shape = np.array(RNG.integers(1, 6, int(RNG.integers(1, 4))), sdt)
            size = int(np.prod(shape))
            rank = int(RNG.integers(0, 2))
            ix = RNG.integers(0, min(size, 127), (int(RNG.integers(0, 6)),) if rank else ()).astype(dt)
            yield Case(op, "", [ix, shape], [unravel_ref(ix, shape)])
    ix = np.array([22, 41, 37], np.int64)
    yield Case(op, "", [ix, np.array([7, 6])], [np.array(np.unravel_index(ix, (7, 6)))])
    ix = np.array([-1, 50, -43], np.int32)  # outside the shape: floor division and modulo
    yield Case(op, "", [ix, np.array([7, 6])], [unravel_ref(ix, [7, 6])])
    yield Case(op, "", [np.array([3]), np.array([2, 0])], "shape has a zero at position 1")
    yield Case(op, "", [np.zeros((2, 2), np.int32), np.array([2, 2])], "indices must be a scalar or 1-D")
    yield Case(op, "", [np.zeros(2, np.float32), np.array([2, 2])], "indices must be integers")


@gen("argwhere")
def g_argwhere(op):
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(0, 4)), maxdim=4), dt)
        yield Case(op, "", [x], [np.argwhere(x).astype(np.int32)])


@gen("adv_index")
def g_adv_index(op):
    for dt in ALL:
        x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
        k = int(RNG.integers(1, x.ndim + 1))
        bshape = rand_shape(rank=int(RNG.integers(0, 3)), maxdim=3)
        ixs = [rand_index(bcast_pair(bshape), x.shape[i], RNG.choice(idx_dtypes())) for i in range(k)]
        yield Case(op, "", [x] + ixs, [x[tuple(i.astype(np.int64) for i in ixs)]])
    x = rand_of((3, 2), np.float32)
    yield Case(op, "", [x, np.array([0, 5])], "adv_index: index 5 is out of bounds for axis 0 with size 3")
    yield Case(op, "", [x, np.array([0]), np.array([0]), np.array([0])], "3 indices for data (3, 2)")
    yield Case(op, "", [x, np.array([True])], "index 0 must be integers, got bool")
    yield Case(op, "", [x, np.array([0, 1]), np.array([0, 1, 1])], "do not broadcast")


# ─────────────────────────────── algorithm ───────────────────────────────


def argsort_ref(x, axis, asc):
    if asc:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    a = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - a, axis)


def sort_input(dt, shape):
    x = rand_of(shape, dt, lo=-4, hi=4)  # small range: many ties
    if dt in FLOATS and x.size:
        x.reshape(-1)[RNG.integers(0, x.size, max(1, x.size // 5))] = -0.0
    return x


@gen("argsort", "sort")
def g_argsort(op):
    for dt in ALL:
        for asc in (True, False):
            x = sort_input(dt, rand_shape(rank=int(RNG.integers(1, 4)), maxdim=6))
            axis = int(RNG.integers(-x.ndim, x.ndim))
            idx = argsort_ref(x, axis, asc)
            kw = {"axis": axis}
            if not asc:
                kw["is_ascend"] = False
            if op == "sort":
                yield Case(op, attrs_text(**kw), [x], [np.take_along_axis(x, idx, axis)])
                continue
            odt = RNG.choice([np.int32, np.int64, np.float32])
            if odt != np.int32 or RNG.random() < .5:
                kw["dtype"] = dname(odt)
            yield Case(op, attrs_text(**kw), [x], [idx.astype(odt)])
    yield Case(op, "axis=1", [np.zeros(3, np.float32)], "axis 1 is out of range for rank 1")
    if op == "argsort":
        yield Case(op, 'dtype="bool"', [np.zeros(3, np.float32)], "dtype must be a number type, got bool")


@gen("topk")
def g_topk(op):
    for dt in ALL:
        for ret in ("both", "values", "indices"):
            x = sort_input(dt, rand_shape(rank=int(RNG.integers(1, 4)), maxdim=6, allow_empty=False))
            axis = int(RNG.integers(-x.ndim, x.ndim))
            n = x.shape[axis]
            k = int(RNG.integers(0, n + 1))
            asc = RNG.random() < .3
            idx = argsort_ref(x, axis, asc)
            if k >= 1:
                idx = np.take(idx, np.arange(k), axis=axis)
            vals = np.take_along_axis(x, idx, axis)
            kw = dict(k=k, axis=axis, ret_type=ret)
            if asc:
                kw["is_ascend"] = True
            outs = {"both": [vals, idx.astype(np.int32)], "values": [vals], "indices": [idx.astype(np.int32)]}[ret]
            yield Case(op, attrs_text(**kw), [x], outs)
    yield Case(op, "k=4", [np.zeros(3, np.float32)], "topk: k 4 is larger than axis 0 of (3)")
    yield Case(op, 'k=1, ret_type="all"', [np.zeros(3, np.float32)], 'ret_type must be "both", "values" or "indices"')
    yield Case(op, "", [np.zeros(3, np.float32)], "missing attribute `k`")


@gen("searchsorted")
def g_searchsorted(op):
    for dt in ALL:
        for right in (False, True):
            side, n, m = "right" if right else "left", int(RNG.integers(0, 7)), int(RNG.integers(1, 5))
            if RNG.random() < .5:  # one sequence for values of any shape
                s = np.sort(rand_of((n,), dt, lo=-5, hi=5))
                v = rand_of(rand_shape(rank=int(RNG.integers(1, 3)), maxdim=4), dt, lo=-6, hi=6)
                ref = np.searchsorted(s, v, side=side)
            else:  # a sequence per row of values
                lead = rand_shape(rank=int(RNG.integers(1, 3)), maxdim=3)
                s = np.sort(rand_of(lead + (n,), dt, lo=-5, hi=5), axis=-1)
                v = rand_of(lead + (m,), dt, lo=-6, hi=6)
                rows = int(np.prod(lead))
                rs, rv = s.reshape(rows, n), v.reshape(rows, m)
                ref = np.array([np.searchsorted(rs[r], rv[r], side=side) for r in range(rv.shape[0])],
                               np.int64).reshape(v.shape)
            odt = np.int64 if RNG.random() < .3 else np.int32
            kw = {}
            if right:
                kw["right"] = True
            if odt == np.int64:
                kw["dtype"] = "int64"
            yield Case(op, attrs_text(**kw), [s, v], [np.asarray(ref).astype(odt)])
    yield Case(op, "", [np.zeros(3, np.float32), np.zeros(2, np.int32)], "sorted_sequence has dtype float32 but values has int32")
    yield Case(op, "", [np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)], "must agree on all but the last axis")
    yield Case(op, "", [np.zeros(3, np.float32), np.zeros((), np.float32)], "must have rank >= 1")


def unique_ref(x, is_sorted, counts):
    n = x.size
    idx = np.argsort(x, kind="stable")
    starts = [i for i in range(n) if i == 0 or not x[idx[i]] == x[idx[i - 1]]]
    ng = len(starts)
    first = [int(idx[s]) for s in starts]
    sizes = [(starts[g + 1] if g + 1 < ng else n) - starts[g] for g in range(ng)]
    order = list(range(ng)) if is_sorted else sorted(range(ng), key=lambda g: first[g])
    rank = {g: r for r, g in enumerate(order)}
    u, ind, cnt = np.zeros(n, x.dtype), np.full(n, n, np.int32), np.zeros(n, np.int32)
    inv = np.zeros(n, np.int32)
    for g in range(ng):
        u[rank[g]] = x[first[g]]
        ind[rank[g]], cnt[rank[g]] = first[g], sizes[g]
        for i in idx[starts[g]:starts[g] + sizes[g]]:
            inv[i] = rank[g]
    outs = [u, ind, inv, np.array([ng], np.int32)]
    return outs + [cnt] if counts else outs


@gen("unique")
def g_unique(op):
    for dt in ALL:
        for is_sorted in (True, False):
            x = sort_input(dt, (int(RNG.integers(0, 12)),))
            counts = RNG.random() < .5
            if not np.isnan(x.astype(np.float64)).any() and x.size:
                assert np.array_equal(unique_ref(x, True, False)[0][:len(np.unique(x))], np.unique(x))
            kw = {}
            if not is_sorted:
                kw["sorted"] = False
            if counts:
                kw["return_counts"] = True
            yield Case(op, attrs_text(**kw), [x], unique_ref(x, is_sorted, counts))
    x = np.array([4, 5, 1, 2, 3, 3, 4, 5], np.int32)  # TVM's documented examples
    yield Case(op, "sorted=False, return_counts=True", [x],
               [np.array([4, 5, 1, 2, 3, 0, 0, 0], np.int32), np.array([0, 1, 2, 3, 4, 8, 8, 8], np.int32),
                np.array([0, 1, 2, 3, 4, 4, 0, 1], np.int32), np.array([5], np.int32),
                np.array([2, 2, 1, 1, 2, 0, 0, 0], np.int32)])
    yield Case(op, "", [x], [np.array([1, 2, 3, 4, 5, 0, 0, 0], np.int32), np.array([2, 3, 4, 0, 1, 8, 8, 8], np.int32),
                            np.array([3, 4, 0, 1, 2, 2, 3, 4], np.int32), np.array([5], np.int32)])
    for dt in (np.int32, np.float32):  # 2-D: unique rows, lexicographic (np.unique axis=0)
        x = RNG.integers(0, 2, (7, 3)).astype(dt)
        u, ind, inv, cnt = np.unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True)
        ng, n = len(u), len(x)
        pad = lambda a, v: np.concatenate([a, np.full((n - ng,) + a.shape[1:], v, a.dtype)])
        yield Case(op, "return_counts=True", [x],
                   [pad(u, 0), pad(ind.astype(np.int32), n), inv.reshape(-1).astype(np.int32),
                    np.array([ng], np.int32), pad(cnt.astype(np.int32), 0)])
    yield Case(op, "", [np.zeros((2, 2, 2), np.int32)], "unique: data must be 1-D (or 2-D: unique rows), got (2, 2, 2)")


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->ji", [(3, 2)]), ("ii->i", [(3, 3)]), ("ii", [(4, 4)]),
           ("i,i", [(5,), (5,)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
           ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]), ("i,j->ij", [(3,), (2,)]), ("ijk->", [(2, 3, 2)]),
           ("ji", [(2, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("i...->...", [(3, 2, 2)]),
           ("ij,jk", [(2, 0), (0, 3)]), ("Ab,bC->AC", [(2, 3), (3, 2)])]


@gen("einsum")
def g_einsum(op):
    for dt in NUMERIC:
        for eq, shapes in EINSUMS:
            xs = [rand_of(s, dt, specials=False, lo=-4, hi=4) for s in shapes]
            if dt in FLOATS:
                ref = np.einsum(eq, *[x.astype(np.float64) for x in xs])
                scale = np.einsum(eq, *[np.abs(x.astype(np.float64)) for x in xs])
                yield Case(op, attrs_text(equation=eq), xs, [np.asarray(ref).astype(dt)], "tol",
                           rtol=RTOL_PRODUCT[dt] * 4, scale=[np.asarray(scale)], atol=float(np.finfo(dt).tiny))
            else:
                acc = np.uint64 if np.dtype(dt).kind == "u" else np.int64
                ref = quiet(lambda: np.einsum(eq, *[x.astype(acc) for x in xs]))
                yield Case(op, attrs_text(equation=eq), xs, [np.asarray(ref).astype(dt)])
    a, b = np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32)
    yield Case(op, 'equation="ij,jk->ik"', [a, b], "einsum: label j has sizes 3 and 4")
    yield Case(op, 'equation="ij,jk->ik"', [a, b.astype(np.int32)], "field 1 has dtype int32")
    yield Case(op, 'equation="ij->k"', [a], "label k of the output is not among the inputs' labels")
    yield Case(op, 'equation="ijk->i"', [a], "operand 0 has rank 2 but its term")
    yield Case(op, 'equation="i-j"', [a], "invalid equation")
    yield Case(op, 'equation="ij,jk"', [a], "has 2 operands but 1 tensors are given")
    yield Case(op, 'equation="...j->j"', [np.zeros((2, 3, 4), np.float32)], '"..." in the inputs stands for dims')
    yield Case(op, 'equation="i->i"', [np.zeros(2, np.bool_)], "bool tensors are not supported")


@gen("check")
def g_check(op):
    """data itself where no element of cond is true, else the error with the message."""
    for dt in ALL:
        x = rand_of(rand_shape(), dt)
        for cshape in [(), (3,), (2, 1)]:
            yield Case(op, 'message="never"', [x, np.zeros(cshape, bool)], [x])
    cond = np.array([False, True, False])
    yield Case(op, 'message="ratio above 0"', [np.ones((2,), np.float32), cond], "ratio above 0")
    yield Case(op, 'message="m"', [np.ones((2,), np.float32), np.zeros((0,), bool)], [np.ones((2,), np.float32)])
