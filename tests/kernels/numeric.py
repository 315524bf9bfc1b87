"""Cases of the numeric family (ops/numeric.c), run in tests/kernels_numpy.py's
namespace (Case, gen, rand_float, RNG, FLOATS come from there): det against
numpy.linalg.det in float64 over batches, sizes 0 to 6 and singular
matrices, held to a bound of the determinant's rounding (the product of
the rows' norms, Hadamard's bound)."""


def det_case(x, dt):
    x = x.astype(dt)
    x64 = x.astype(np.float64)
    ref = np.linalg.det(x64) if x64.shape[-1] else np.ones(x64.shape[:-2])
    scale = np.prod(np.linalg.norm(x64, axis=-1), axis=-1) if x64.shape[-1] else np.ones(x64.shape[:-2])
    eps = float(np.finfo(dt).eps)
    n = x.shape[-1]
    return Case("det", "", [x], [np.asarray(ref).astype(dt)], "tol", rtol=8 * (n + 1) * eps,
                scale=[np.asarray(scale)], atol=float(np.finfo(dt).tiny))


@gen("det")
def g_det(op):
    for dt in FLOATS:
        for n in range(0, 7):
            batch = [(), (3,), (2, 0), (2, 3)][int(RNG.integers(0, 4))]
            yield det_case(rand_float(batch + (n, n), dt, specials=False, scale=1.0), dt)
    sing = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 5]], np.float32)  # two rows dependent
    yield Case("det", "", [sing], [np.array(0, np.float32)])
    perm = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], np.float64)  # an even permutation
    yield Case("det", "", [perm], [np.array(1, np.float64)])
    yield Case("det", "", [np.ones((2, 3), np.float32)], "det: the matrices must be square")
    yield Case("det", "", [np.ones((2, 2), np.int32)], "det: x must be a float tensor")
