"""More cases of nn.batch_norm, nn.lrn, nn.cross_entropy(_with_logits) and
nn.nll_loss for their compute rules (lower/compute/compute_nn_norm.c,
compute_nn_loss.c), run in tests/kernels_numpy.py's namespace after nn.py
(Case, rand_float, attrs_text, nn_tol_case, nn_chan_shape, nn_extend come
from there).  Larger tensors than nn.py's (rows longer than a vector, many
groups), the channel axis first, last and negative, windows wider than the
axis, targets equal to ignore_index outside the classes, and one exact case:
batch_norm without center adds +0, so a -0 product gives +0.  The float
cases must run compiled (compiled=True).
"""


def nnl_batch_norm(op):
    for dt, shape, axis in [(np.float32, (3, 17, 9), 1), (np.float64, (2, 5, 4, 33), -1),
                            (np.float32, (40,), 0), (np.float64, (6, 2, 3), 0)]:
        x = rand_float(shape, dt, specials=False)
        C = shape[axis]
        g, b, m = (rand_float((C,), dt, specials=False) for _ in range(3))
        v = rand_float((C,), dt, specials=False, positive=True)
        sh = nn_chan_shape(x.ndim, axis)
        e32 = float(np.float32(1e-5))
        X, G, B, Mn, V = (a.astype(np.float64) for a in (x, g, b, m, v))
        y = (X - Mn.reshape(sh)) / np.sqrt(V.reshape(sh) + e32)
        ref = y * G.reshape(sh) + B.reshape(sh)
        bound = np.abs(y * G.reshape(sh)) + np.abs(B.reshape(sh)) + np.abs(X / np.sqrt(V.reshape(sh) + e32) *
                                                                        G.reshape(sh))
        c = Case(op, attrs_text(axis=axis, epsilon=1e-5), [x, g, b, m, v], [ref.astype(dt), m, v], "tol",
                 rtol=8 * float(np.finfo(dt).eps), scale=[bound, np.abs(m), np.abs(v)],
                 atol=float(np.finfo(dt).tiny), compiled=True)
        yield c
    # x equal to the mean, gamma -1, no center: (0 * -1) + 0 is +0
    x = np.array([[1.5, 2.0], [1.5, 2.0]], np.float32)
    m, g = np.array([1.5, 2.0], np.float32), np.array([-1.0, -1.0], np.float32)
    one = np.ones(2, np.float32)
    yield Case(op, attrs_text(axis=1, center=False), [x, g, one, m, one], [np.zeros((2, 2), np.float32), m, one],
               compiled=True)


def nnl_lrn(op):
    for dt, shape, axis, size in [(np.float32, (2, 7, 5, 11), 1, 5), (np.float64, (3, 4, 19), -1, 2),
                                  (np.float32, (2, 3, 4), 1, 9), (np.float64, (1, 6, 2, 2), 1, 1)]:
        x = rand_float(shape, dt, specials=False)
        bias, alpha, beta = 2.0, float(np.float32(1e-4)), 0.75
        X = np.moveaxis(x.astype(np.float64), axis, -1)
        n = X.shape[-1]
        sq = np.zeros_like(X)
        for c in range(n):
            lo, hi = max(0, c - size // 2), min(n, c - size // 2 + size)
            sq[..., c] = np.sum(X[..., lo:hi] ** 2, axis=-1)
        ref = np.moveaxis(X / (bias + alpha * sq / size) ** beta, -1, axis)
        c = nn_tol_case(op, attrs_text(size=size, axis=axis, bias=bias, alpha=alpha, beta=beta), [x], ref, dt,
                        np.abs(ref) + 1e-300)
        c.compiled = True
        yield c


def nnl_cross_entropy(op):
    for dt, shape in [(np.float32, (7, 33)), (np.float64, (16, 10)), (np.float32, (1, 1))]:
        c = cross_entropy_case(op, shape, dt)
        c.compiled = True
        yield c


def nnl_nll_loss(op):
    for dt, (N, C, rest), tdt, ignore in [(np.float32, (4, 9, (3, 5)), np.int64, -100),
                                          (np.float64, (5, 3, ()), np.int32, 1),
                                          (np.float32, (3, 4, (7,)), np.int8, 2),
                                          (np.float64, (2, 2, (2, 2, 2)), np.int64, 7)]:
        for red in ("mean", "sum", "none"):
            p = rand_float((N, C) + rest, dt, specials=False)
            t = RNG.integers(0, C, (N,) + rest).astype(tdt)
            t.reshape(-1)[::3] = ignore if np.iinfo(tdt).min <= ignore <= np.iinfo(tdt).max else 0
            w = rand_float((C,), dt, specials=False, positive=True)
            P, W = p.astype(np.float64), w.astype(np.float64)
            keep = t != ignore
            tc = np.where(keep, t, 0).astype(np.int64)
            pick = np.take_along_axis(P, np.expand_dims(tc, 1), axis=1)[:, 0]
            terms = np.where(keep, -pick * W[tc], 0.0)
            wsum = np.where(keep, W[tc], 0.0).sum()
            ref = terms if red == "none" else terms.sum() if red == "sum" else terms.sum() / wsum
            bound = np.abs(terms) if red == "none" else np.abs(terms).sum() / (1 if red == "sum" else wsum)
            attrs = 'reduction="%s", ignore_index=%d' % (red, ignore)
            c = nn_tol_case(op, attrs, [p, t, w], ref, dt, bound + 1e-300)
            c.compiled = True
            yield c


nn_extend("nn.batch_norm", nnl_batch_norm)
nn_extend("nn.lrn", nnl_lrn)
nn_extend("nn.cross_entropy", nnl_cross_entropy)
nn_extend("nn.cross_entropy_with_logits", nnl_cross_entropy)
nn_extend("nn.nll_loss", nnl_nll_loss)
