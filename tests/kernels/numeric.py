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


def stft_ref(x, step, w, onesided):
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    sig = x64[..., 0] + (1j * x64[..., 1] if x.shape[2] == 2 else 0)
    n = len(w)
    nf = (x.shape[1] - n) // step + 1
    nk = n // 2 + 1 if onesided else n
    fr = np.stack([sig[:, f * step:f * step + n] * w64 for f in range(nf)], axis=1)
    spec = np.fft.fft(fr, axis=-1)[..., :nk] if nf else np.zeros((x.shape[0], 0, nk), complex)
    scale = np.sum(np.abs(fr), axis=-1, keepdims=True) * np.ones(spec.shape) if nf else np.ones(spec.shape)
    out = np.stack([spec.real, spec.imag], axis=-1)
    return out, np.stack([scale, scale], axis=-1)


@gen("signal.stft")
def g_stft(op):
    for dt in (np.float32, np.float64):
        for (b, t, c, step, n, one) in [(1, 16, 1, 4, 8, True), (2, 20, 2, 3, 5, False), (1, 9, 1, 1, 9, True),
                                        (3, 12, 2, 5, 4, True), (0, 8, 1, 2, 4, True)]:
            x = rand_float((b, t, c), dt, specials=False, scale=1.0)
            w = rand_float((n,), dt, specials=False, scale=1.0)
            ref, scale = stft_ref(x, step, w, one)
            yield Case(op, "onesided=%s" % one, [x, np.array(step, np.int64), w], [ref.astype(dt)], "tol",
                       rtol=64 * float(np.finfo(dt).eps), scale=[scale], atol=float(np.finfo(dt).tiny))
    x = np.ones((1, 4, 1), np.float32)
    yield Case(op, "", [x, np.array(2, np.int64), np.ones(5, np.float32)], "is not in [1, 4]")
    yield Case(op, "", [x, np.array(0, np.int64), np.ones(2, np.float32)], "frame_step must be positive")
    yield Case(op, "", [np.ones((1, 4, 3), np.float32), np.array(1, np.int64), np.ones(2, np.float32)],
               "signal must be a float tensor [batch, length, 1 or 2]")


def mel_ref(nmel, dft, rate, lo, hi):
    """ONNX's MelWeightMatrix: nmel + 2 edges evenly spaced in mels (the range
    split in nmel + 2 steps), floored to DFT bins; band i a triangle from
    edge i up to 1 at edge i + 1 and down to edge i + 2."""
    mel = lambda hz: 2595 * np.log10(1 + hz / 700)
    step = (mel(hi) - mel(lo)) / (nmel + 2)
    hz = 700 * (10 ** ((np.arange(nmel + 2) * step + mel(lo)) / 2595) - 1)
    edge = np.floor((dft + 1) * hz / rate).astype(int)
    out = np.zeros((dft // 2 + 1, nmel))
    for i in range(nmel):
        l, c, h = edge[i:i + 3]
        if c == l:
            out[c, i] = 1
        for j in range(l, c + 1 if c > l else l):
            out[j, i] = (j - l) / (c - l)
        for j in range(c, h):
            out[j, i] = (h - j) / (h - c)
    return out


@gen("signal.mel_weight_matrix")
def g_mel(op):
    for nmel, dft, rate, lo, hi, dt in [(8, 16, 8192, 0.0, 4096.0, "float32"), (10, 64, 16000, 20.0, 7000.0, "float64"),
                                        (4, 512, 22050, 300.0, 8000.0, "float32"), (6, 128, 8000, 0.0, 3999.0, "int32")]:
        ins = [np.array(nmel, np.int32), np.array(dft, np.int64), np.array(rate, np.int32),
               np.array(lo, np.float32), np.array(hi, np.float32)]
        ref = mel_ref(nmel, dft, rate, np.float32(lo).astype(np.float64), np.float32(hi).astype(np.float64))
        yield Case(op, 'dtype="%s"' % dt, ins, [ref.astype(dt)])
    bad = [np.array(4, np.int32), np.array(16, np.int32), np.array(100, np.int32), np.array(0, np.float32),
           np.array(4096, np.float32)]
    yield Case(op, "", bad, "fall outside the 9 bins")
    yield Case(op, "", [np.array(0, np.int32)] + bad[1:], "num_mel_bins must be positive")
