"""More cases of nn.dense, nn.matmul and nn.batch_matmul for the compiled
blocked schedule (lower/compute/compute_nn.c; run in tests/kernels_numpy.py's
namespace after nn.py: nn_extend, mm_case, rand_float, attrs_text come from
there): row counts that leave a partial last block of register-tile rows
(clamped), column counts that leave a partial last panel, enough panels for
the panel-parallel partition (and few for the row-parallel one), many
panels with a partial last one, batches
with and without a broadcast operand.  References are numpy products in
float64 with mm_case's tolerance."""


def nn_dense_extra(op):
    for dt in (np.float32, np.float64):
        for m, k, n in ((13, 40, 130), (7, 33, 200), (64, 50, 128), (17, 20, 40), (5, 9, 300),
                        (13, 24, 1100), (9, 16, 2100)):
            x = rand_float((m, k), dt, specials=False)
            w = rand_float((n, k), dt, specials=False)
            yield mm_case(op, "", [x, w], x, w.T, dt)


def nn_matmul_extra(op):
    for ta, tb in ((False, False), (True, True)):
        a = rand_float((16, 11) if ta else (11, 16), np.float32, specials=False)
        b = rand_float((140, 16) if tb else (16, 140), np.float32, specials=False)
        at, bt = (a.T if ta else a), (b.T if tb else b)
        yield mm_case(op, attrs_text(transpose_a=ta, transpose_b=tb), [a, b], at, bt, np.float32)


def nn_batch_matmul_extra(op):
    for bb in (3, 1):
        x = rand_float((3, 9, 12), np.float32, specials=False)
        y = rand_float((bb, 150, 12), np.float32, specials=False)
        yield mm_case(op, attrs_text(transpose_a=False, transpose_b=True), [x, y], x,
                      np.swapaxes(y, 1, 2), np.float32)


nn_extend("nn.dense", nn_dense_extra)
nn_extend("nn.matmul", nn_matmul_extra)
nn_extend("nn.batch_matmul", nn_batch_matmul_extra)


def pack_panels(w, n):
    """w (N, K) as nn.contrib_dense_pack's panels (ceil(N / n), K, n), zero past N."""
    big, k = w.shape
    nb = (big + n - 1) // n
    p = np.zeros((nb * n, k), w.dtype)
    p[:big] = w
    return np.ascontiguousarray(p.reshape(nb, n, k).transpose(0, 2, 1))


@gen("nn.contrib_dense_pack")
def g_dense_pack(op):
    """Panels of the widths the compiled rule takes on AVX-512 and AVX2 (two
    vector registers: 32 and 16 float32, 16 and 8 float64) and others (the
    reference kernel), partial last panels, few rows (a row at a time up to
    2, a register tile of all of them from 3: 3, 4 and 16 rows take tiles of
    3, 4 and 8 rows) and many, N-d data."""
    for dt, widths in ((np.float32, (32, 16, 4)), (np.float64, (16, 8))):
        for n in widths:
            for m, k, big in ((1, 40, 70), (2, 9, 40), (3, 33, 64), (4, 20, 64), (13, 50, 130),
                              (16, 24, 70), (40, 7, 33)):
                x = rand_float((m, k), dt, specials=False)
                w = rand_float((big, k), dt, specials=False)
                yield mm_case(op, attrs_text(units=big, weight_layout=f"NC{n}n"),
                              [x, pack_panels(w, n)], x, w.T, dt)
    x = rand_float((2, 5, 24), np.float32, specials=False)
    w = rand_float((40, 24), np.float32, specials=False)
    a = x.reshape(10, 24)
    ref = matmul_ref(a, w.T, np.float32)
    kw = mm_tol(a, w.T, ref, np.float32, np.float32)
    kw["scale"] = [kw["scale"][0].reshape(2, 5, 40)]
    mode = kw.pop("mode", "exact")
    yield Case(op, attrs_text(units=40), [x, pack_panels(w, 32)], [ref.reshape(2, 5, 40)], mode,
               **kw)
