"""Cases of convolutions in the layouts TensorFlow and TFLite models print
(NHWC data with HWIO, OHWI or HWOI weights; NWC and NDHWC for conv1d and
conv3d), run in tests/kernels_numpy.py's namespace (Case, GENERATORS,
conv_ref, rand_of, attrs_text come from there; nn_convnd_ref from nn.py).

References are the float64 NCHW / OIHW convolutions of the operands put
back in the plain order, the result then put in the data's layout: a
layout's array is the plain one transposed by the position of each of its
letters in the plain layout ("HWIO" of an OIHW weight: axes (2, 3, 1, 0)).
Float cases are held to the tolerance of the plain cases; int8 operands
with out_dtype int32 are exact.
"""


def cl_perm(plain, layout):
    return [plain.index(ch) for ch in layout]


def cl_to(a, plain, layout):
    return np.ascontiguousarray(a.transpose(cl_perm(plain, layout)))


def cl_case(op, kw, x, w, dl, kl, ref, bound, dt):
    """The case of plain operands x, w and result ref in layouts dl, kl."""
    plain_d = "NC" + "DHW"[3 - (x.ndim - 2):]
    plain_k = "OI" + "DHW"[3 - (x.ndim - 2):]
    kw = dict(kw, data_layout=dl, kernel_layout=kl)
    ins = [cl_to(x, plain_d, dl), cl_to(w, plain_k, kl)]
    if dt == np.int8:
        kw["out_dtype"] = "int32"
        return Case(op, attrs_text(**kw), ins, [cl_to(ref, plain_d, dl).astype(np.int32)])
    return Case(op, attrs_text(**kw), ins, [cl_to(ref, plain_d, dl).astype(dt)], "tol",
                rtol=RTOL_PRODUCT[dt] * 4, scale=[cl_to(bound, plain_d, dl)],
                atol=float(np.finfo(dt).tiny))


def cl_conv2d(op):
    """NHWC data with each weight layout: groups 1 (the jit's blocked
    schedule), 2 (its general rule), depthwise; strides, padding,
    dilation; int8 to int32."""
    for dt in (np.float32, np.float64, np.int8):
        for kl in ("HWIO", "OHWI", "HWOI", "OIHW"):
            for N, C, H, W, O, KH, KW, s, p, d, g in [
                    (2, 3, 7, 6, 5, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
                    (1, 4, 9, 8, 6, 3, 2, [2, 1], [0, 1, 2, 1], [1, 2], 2),
                    (1, 6, 6, 7, 6, 3, 3, [1, 2], [1, 1, 1, 1], [1, 1], 6),
                    (1, 17, 5, 5, 20, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1)]:
                x = rand_of((N, C, H, W), dt, specials=False, lo=-4, hi=4)
                w = rand_of((O, C // g, KH, KW), dt, specials=False, lo=-4, hi=4)
                ref = conv_ref(x.astype(np.float64), w.astype(np.float64), s, p, d, g)
                bound = conv_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, p, d, g)
                kw = dict(strides=s, padding=p, dilation=d, groups=g, channels=O, kernel_size=[KH, KW])
                yield cl_case(op, kw, x, w, "NHWC", kl, ref, bound, dt)
    x = rand_float((1, 4, 4, 3), np.float32)
    yield Case(op, 'data_layout="NHWC", kernel_layout="HWIO"', [x, rand_float((3, 3, 2, 5), np.float32)],
               "input has 3 channels but weight")
    yield Case(op, 'data_layout="NCHW4c"', [x, rand_float((3, 3, 3, 3), np.float32)],
               "data_layout NCHW4c is not supported")
    yield Case(op, 'data_layout="NHWC", kernel_layout="HWI"', [x, rand_float((3, 3, 3, 3), np.float32)],
               "kernel_layout HWI is not supported")
    yield Case(op, 'data_layout="NHWC", out_layout="NCHW"', [x, rand_float((3, 3, 3, 3), np.float32)],
               "out_layout NCHW differs")


def cl_convnd(op):
    """conv1d in NWC with WIO weights, conv3d in NDHWC with DHWIO."""
    S = 1 if op == "nn.conv1d" else 3
    dl, kl = ("NWC", "WIO") if S == 1 else ("NDHWC", "DHWIO")
    for dt in (np.float32, np.int8):
        x = rand_of((2, 4) + (5,) * S, dt, specials=False, lo=-4, hi=4)
        w = rand_of((3, 4) + (2,) * S, dt, specials=False, lo=-4, hi=4)
        one, pad = [1] * S, [1] * S
        ref = nn_convnd_ref(x.astype(np.float64), w.astype(np.float64), one, pad, pad, one, 1)
        bound = nn_convnd_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), one, pad, pad, one, 1)
        yield cl_case(op, dict(padding=pad), x, w, dl, kl, ref, bound, dt)


def cl_extend(op, extra):
    base = GENERATORS[op][0]

    def g(name):
        yield from base(name)
        yield from extra(name)
    GENERATORS[op] = (g, op)


cl_extend("nn.conv2d", cl_conv2d)
cl_extend("nn.conv1d", cl_convnd)
cl_extend("nn.conv3d", cl_convnd)
