"""Cases of quantized arithmetic (run in tests/kernels_numpy.py's namespace):
nn.conv2d, nn.dense, nn.matmul and nn.batch_matmul of int8 and uint8
operands with out_dtype int32, fixed_point_multiply and QNN's core ops.

The references follow TVM's definitions, written with numpy's integer
arithmetic: a fixed-point product x * m * 2^(s - 31) adds 2^(r - 1) (and,
rounding TONEAREST, one less for negative products) before an arithmetic
shift right by r = 31 + max(-s, 0); a scale ratio becomes m, s through
frexp with the significand rounded half away from zero; quantize rounds
half to even (np.rint) and clips.  All cases are exact, and with --exec jit
every one must run compiled (QCase): the integer products and the qnn ops
have compute rules for all of them.
"""


def QCase(*args, **kw):
    return Case(*args, compiled=True, **kw)


def q_fpm(x, m, s, nearest=False):
    x = np.asarray(x, np.int64)
    ls, rs = max(s, 0), min(max(-s, 0) + 31, 63)
    v = (x << ls) * np.int64(m)
    rnd = np.where((v < 0) & nearest, (1 << (rs - 1)) - 1, 1 << (rs - 1))
    return ((v + rnd) >> rs).astype(np.int32)


def q_mshift(ratio):
    if ratio == 0:
        return 0, 0
    f, e = math.frexp(ratio)
    q = math.floor(abs(f) * 2 ** 31 + 0.5) * (1 if f > 0 else -1)
    if q == 2 ** 31:
        q, e = q // 2, e + 1
    return q, e


def q_range(dt):
    i = np.iinfo(dt)
    return int(i.min), int(i.max)


def q_requantize(x, in_s, in_z, out_s, out_z, dt, nearest=False):
    m, s = q_mshift(float(np.float32(in_s)) / float(np.float32(out_s)))
    v = q_fpm(np.asarray(x, np.int64) - in_z, m, s, nearest).astype(np.int64) + out_z
    return np.clip(v, *q_range(dt)).astype(dt)


def q_scalars(*vals):
    return [np.array(v, np.float32 if isinstance(v, float) else np.int32) for v in vals]


@gen("fixed_point_multiply")
def g_fixed_point_multiply(op):
    x = RNG.integers(-2 ** 20, 2 ** 20, (3, 17)).astype(np.int32)
    x[0, :4] = [-6, -2, 2, 6]  # ties
    for m, s in [(1 << 30, -1), (1 << 30, -2), (1518500250, 0), (1518500250, 3), (2147483647, -9),
                 (1073741824, 1), (-1073741824, -1)]:
        yield QCase(op, attrs_text(multiplier=m, shift=s), [x], [q_fpm(x, m, s)])
    yield QCase(op, attrs_text(multiplier=1, shift=0), [x.astype(np.int8)], "must be int32")


@gen("qnn.quantize")
def g_quantize(op):
    x = (RNG.standard_normal((4, 5)) * 40).astype(np.float32)
    x[0] = [-1.25, -0.75, 0.25, 0.75, 2.5]  # ties at scale 0.5: half to even
    for dt, scale, zp in [(np.int8, 0.5, 3), (np.uint8, 0.25, 128), (np.int32, 0.1, -7)]:
        ref = np.clip(np.rint(x / np.float32(scale)).astype(np.int64) + zp, *q_range(dt)).astype(dt)
        yield QCase(op, attrs_text(out_dtype=np.dtype(dt).name), [x] + q_scalars(scale, zp), [ref])
    sc, zs = np.array([0.5, 1.0, 0.25, 2.0, 0.125], np.float32), np.array([0, 1, -2, 3, 4], np.int32)
    ref = np.clip(np.rint(x / sc).astype(np.int64) + zs, -128, 127).astype(np.int8)
    yield QCase(op, attrs_text(axis=1), [x, sc, zs], [ref])
    yield QCase(op, attrs_text(out_dtype="float32"), [x] + q_scalars(0.5, 0), "out_dtype must be")
    yield QCase(op, "", [x, np.array(0.5, np.float64), np.array(0, np.int32)], "output_scale must be")


@gen("qnn.dequantize")
def g_dequantize(op):
    for dt in (np.int8, np.uint8, np.int32):
        lo, hi = q_range(dt) if dt != np.int32 else (-1000, 1000)
        x = RNG.integers(lo, hi + 1, (3, 4)).astype(dt)
        ref = (x.astype(np.int32) - np.int32(5)).astype(np.float32) * np.float32(0.37)
        yield QCase(op, "", [x] + q_scalars(0.37, 5), [ref])
    x = RNG.integers(-128, 128, (2, 3)).astype(np.int8)
    sc, zs = np.array([0.5, 0.1, 2.0], np.float32), np.array([1, 0, -1], np.int32)
    yield QCase(op, attrs_text(axis=-1), [x, sc, zs], [(x.astype(np.int32) - zs).astype(np.float32) * sc])
    yield QCase(op, "", [x.astype(np.float32)] + q_scalars(0.5, 0), "data must be")


@gen("qnn.requantize")
def g_requantize(op):
    x = RNG.integers(-3000, 3000, (4, 6)).astype(np.int32)
    x[0] = [-6, -2, 2, 6, -10, 10]  # ties at 0.25
    for in_s, in_z, out_s, out_z, dt, rnd in [(0.25, 0, 1.0, 2, np.int8, None), (0.25, 0, 1.0, 2, np.int8, "UPWARD"),
                                              (0.25, 0, 1.0, 2, np.int8, "TONEAREST"),
                                              (0.0123, 3, 0.5, 128, np.uint8, "UPWARD"),
                                              (0.7, -4, 0.3, 0, np.int32, "TONEAREST"),
                                              (0.5, 0, 0.5, 1, np.int16, None)]:
        kw = dict(out_dtype=np.dtype(dt).name)
        if rnd:
            kw["rounding"] = rnd
        ref = q_requantize(x, in_s, in_z, out_s, out_z, dt, rnd == "TONEAREST")
        yield QCase(op, attrs_text(**kw), [x] + q_scalars(in_s, in_z, out_s, out_z), [ref])
    x8 = RNG.integers(-128, 128, (3, 4)).astype(np.int8)
    ref = q_requantize(x8, 0.1, 1, 0.05, 128, np.uint8)
    yield QCase(op, attrs_text(out_dtype="uint8"), [x8] + q_scalars(0.1, 1, 0.05, 128), [ref])
    ins = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    ref = np.stack([q_requantize(x8[:, c], ins[c], 1, 0.05, 0, np.int8) for c in range(4)], axis=1)
    yield QCase(op, attrs_text(axis=1), [x8, ins, np.array(1, np.int32)] + q_scalars(0.05, 0), [ref])
    yield QCase(op, attrs_text(rounding="DOWN"), [x] + q_scalars(0.25, 0, 1.0, 2), "rounding must be")


def q_conv_cases(op):
    for xd, wd in [(np.uint8, np.int8), (np.int8, np.uint8), (np.int8, np.int8)]:
        x = rand_of((1, 3, 6, 5), xd)
        w = rand_of((4, 3, 3, 3), wd)
        ref = conv_ref(x.astype(np.float64), w.astype(np.float64), [1, 1], [1, 1, 1, 1], [1, 1], 1)
        yield QCase(op, attrs_text(padding=[1, 1, 1, 1], out_dtype="int32"), [x, w], [ref.astype(np.int32)])
    x, w = rand_of((1, 3, 6, 5), np.uint8), rand_of((4, 3, 3, 3), np.int8)
    yield QCase(op, "", [x, w], "dtypes uint8 and int8 differ")


def q_products(op):
    for xd, wd in [(np.uint8, np.int8), (np.int8, np.uint8)]:
        a = rand_of((2, 5, 7) if op == "nn.batch_matmul" else (5, 7), xd)
        b = rand_of((2, 4, 7) if op == "nn.batch_matmul" else (4, 7), wd)
        if op == "nn.matmul":
            b = np.ascontiguousarray(b.T)
            ref = a.astype(np.int64) @ b.astype(np.int64)
        elif op == "nn.batch_matmul":
            ref = a.astype(np.int64) @ np.swapaxes(b, 1, 2).astype(np.int64)
        else:
            ref = a.astype(np.int64) @ b.T.astype(np.int64)
        kw = dict(transpose_b=True) if op == "nn.batch_matmul" else {}
        yield QCase(op, attrs_text(out_dtype="int32", **kw), [a, b], [ref.astype(np.int32)])
    yield QCase(op, attrs_text(**kw), [a, b], "need out_dtype")


for _op, _extra in [("nn.conv2d", q_conv_cases), ("nn.dense", q_products), ("nn.matmul", q_products),
                    ("nn.batch_matmul", q_products)]:
    cl_extend(_op, _extra)


@gen("qnn.conv2d")
def g_qnn_conv2d(op):
    for xd, wd, xz, wz in [(np.uint8, np.int8, 128, 0), (np.int8, np.int8, -3, 2), (np.uint8, np.uint8, 7, 120)]:
        x, w = rand_of((2, 3, 6, 5), xd), rand_of((4, 3, 3, 3), wd)
        xs = x.astype(np.float64) - xz
        for wzs in (np.array(wz, np.int32), np.array([wz, wz + 1, wz - 1, 0], np.int32)):
            ws = w.astype(np.float64) - wzs.reshape(-1, 1, 1, 1)
            ref = conv_ref(xs, ws, [2, 1], [1, 1, 1, 1], [1, 1], 1).astype(np.int32)
            ins = [x, w, np.array(xz, np.int32), wzs, np.array(0.5, np.float32),
                   np.full(wzs.shape, 0.25, np.float32)]
            yield QCase(op, attrs_text(strides=[2, 1], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3],
                                      out_dtype="int32"), ins, [ref])
    # NHWC / HWIO, as TFLite models print it
    ref = conv_ref(x.astype(np.float64) - 7, w.astype(np.float64) - 120, [1, 1], [0, 0, 0, 0], [1, 1], 1)
    ins = [np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(w.transpose(2, 3, 1, 0))] + \
        q_scalars(7, 120, 0.5, 0.25)
    yield QCase(op, attrs_text(data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32"), ins,
               [np.ascontiguousarray(ref.transpose(0, 2, 3, 1)).astype(np.int32)])
    # Shapes of the byte dot-product schedule (compute_qnn_dot_conv.c, on AVX512-VNNI hosts): input
    # channels not a multiple of 4, output channels not a multiple of 32, padding (the data's zero
    # point), strides and dilation, output columns not a multiple of the tile's, 16 or more
    # columns at stride 1 (the output columns in the vector lanes); extreme bytes.  (Padding by
    # a zero point known only at run time, as here, keeps the widened rule.)
    for (n, c, h, wd, o), xd, xz, stride, dil, pad in [((1, 5, 9, 11, 37), np.uint8, 128, 1, 1, 1),
                                                       ((2, 8, 7, 9, 16), np.int8, -5, 2, 1, 2),
                                                       ((1, 3, 10, 10, 33), np.int8, 0, 1, 2, 0),
                                                       ((1, 64, 12, 14, 64), np.uint8, 3, 1, 1, 1),
                                                       ((1, 6, 5, 37, 20), np.int8, 2, 1, 1, 0),
                                                       ((2, 4, 6, 40, 16), np.uint8, 0, 1, 2, 0)]:
        x, w = rand_of((n, c, h, wd), xd), rand_of((o, c, 3, 3), np.int8)
        x[0, 0, 0, :2], w[0, 0, 0, :2] = np.iinfo(xd).min, -128
        x[-1, -1, -1, -1], w[-1, -1, -1, -1] = np.iinfo(xd).max, 127
        wz = RNG.integers(-4, 5, o).astype(np.int32)
        ref = conv_ref(x.astype(np.float64) - xz, w.astype(np.float64) - wz.reshape(-1, 1, 1, 1), [stride] * 2,
                       [pad] * 4, [dil] * 2, 1).astype(np.int32)
        ins = [x, w, np.array(xz, np.int32), wz, np.array(0.5, np.float32), np.full(o, 0.25, np.float32)]
        yield QCase(op, attrs_text(strides=[stride] * 2, padding=[pad] * 4, dilation=[dil] * 2, channels=o,
                                   kernel_size=[3, 3], out_dtype="int32"), ins, [ref])
    yield QCase(op, attrs_text(out_dtype="int32"), [x.astype(np.float32), w] + q_scalars(0, 0, 0.5, 0.25),
               "data must be")


@gen("qnn.dense")
def g_qnn_dense(op):
    x, w = rand_of((3, 6), np.uint8), rand_of((5, 6), np.int8)
    for wz in (np.array(1, np.int32), np.arange(5, dtype=np.int32) - 2):
        ref = (x.astype(np.int64) - 128) @ (w.astype(np.int64) - wz.reshape(-1, 1)).T
        ins = [x, w, np.array(128, np.int32), wz, np.array(0.5, np.float32), np.full(wz.shape, 0.1, np.float32)]
        yield QCase(op, attrs_text(units=5, out_dtype="int32"), ins, [ref.astype(np.int32)])
    yield QCase(op, attrs_text(units=5), [x, w] + q_scalars(0, 0, 0.5, 0.1) [:2] + [np.array([1, 2], np.int32),
               np.array(0.1, np.float32)], "input_scale must be")
    # Sizes of the byte dot-product schedule (compute_qnn_dot.c, on AVX512-VNNI hosts): K not a
    # multiple of 4, N not a multiple of 16 or of the 32-column panels, rows not a multiple of the
    # tile's; uint8 and int8 data (the +128 shift), zero points 0 and not, scalar and per channel;
    # extreme bytes so every product's sign and the padding show.
    for (m, n, k), xd, xz, per_channel in [((7, 37, 13), np.uint8, 128, True), ((13, 16, 8), np.int8, -3, False),
                                           ((1, 5, 3), np.int8, 0, False), ((20, 70, 67), np.uint8, 0, True),
                                           ((64, 64, 64), np.int8, 5, True)]:
        x, w = rand_of((m, k), xd), rand_of((n, k), np.int8)
        x[0, :2], w[0, :2] = np.iinfo(xd).min, -128
        x[-1, -1], w[-1, -1] = np.iinfo(xd).max, 127
        wz = (RNG.integers(-4, 5, n) if per_channel else np.array(2)).astype(np.int32)
        ref = (x.astype(np.int64) - xz) @ (w.astype(np.int64) - wz.reshape(-1, 1)).T
        ins = [x, w, np.array(xz, np.int32), wz, np.array(0.5, np.float32), np.full(wz.shape, 0.1, np.float32)]
        yield QCase(op, attrs_text(units=n, out_dtype="int32"), ins, [ref.astype(np.int32)])


def q_binary_ref(a, b, p, mul):
    a_s, a_z, b_s, b_z, o_s, o_z = p
    dt = a.dtype.type
    if mul:
        prod = ((a.astype(np.int64) - a_z) * (b.astype(np.int64) - b_z)).astype(np.int32)
        return q_requantize(prod, np.float32(a_s) * np.float32(b_s), 0, o_s, o_z, dt)
    ra = q_requantize(a, a_s, a_z, o_s, o_z, np.int32).astype(np.int64)
    rb = q_requantize(b, b_s, b_z, o_s, o_z, np.int32).astype(np.int64)
    return np.clip(ra + rb - o_z, *q_range(dt)).astype(dt)


@gen("qnn.add", "qnn.mul")
def g_qnn_binary(op):
    mul = op == "qnn.mul"
    for dt, shapes, p in [(np.int8, ((3, 4), (3, 4)), (0.1, 2, 0.2, -3, 0.15, 1)),
                          (np.uint8, ((2, 3, 4), (4,)), (0.05, 128, 0.05, 128, 0.1, 120)),
                          (np.uint8, ((3, 1), (1, 5)), (0.02, 100, 0.03, 110, 0.5, 128)),
                          (np.int8, ((4,), (4,)), (0.1, 0, 0.1, 0, 0.1, 0))]:
        a, b = rand_of(shapes[0], dt), rand_of(shapes[1], dt)
        yield QCase(op, "", [a, b] + q_scalars(*p), [q_binary_ref(a, b, p, mul)])
    yield QCase(op, "", [a, b.astype(np.uint8)] + q_scalars(*p), "dtypes int8 and uint8 differ")
