"""Cases of the nn family's ops added with the op set (run in
tests/kernels_numpy.py's namespace: Case, @gen, rand_float/rand_int/rand_of,
attrs_text, pads, conv_ref, pool_ref, out_size, softmax64, ref64 and the
RTOL_ tables come from there).

References are numpy computations written from TVM v0.10's definitions
(topi and SimplifyInference): convolutions and transposed convolutions in
float64 as sums of shifted slices, pools by window, normalizations with the
biased variance, upsampling coordinates in float32 step by step as TVM's
resize computes them (so nearest picks the same pixel and the
interpolations agree bit for bit), the block moves by TensorFlow's
reshape/transpose recipe.  nn.conv2d, nn.max_pool2d and nn.avg_pool2d get
more cases here (layouts, depthwise, 1x1, errors) through nn_extend().
"""


def nn_extend(op, extra):
    """Adds extra(op)'s cases after those of op's generator."""
    base = GENERATORS[op][0]

    def g(name):
        yield from base(name)
        yield from extra(name)
    GENERATORS[op] = (g, op)


def nn_tol_case(op, attrs, inputs, ref64_out, dt, bound, k=8):
    """A float case within k eps of the float64 result, scaled by bound."""
    return Case(op, attrs, inputs, [np.asarray(ref64_out).astype(dt)], "tol",
                rtol=k * float(np.finfo(dt).eps), scale=[bound], atol=float(np.finfo(dt).tiny))


def nn_pairs_text(key, pairs):
    return "%s=[%s]" % (key, ", ".join("[%d, %d]" % (int(a), int(b)) for a, b in pairs))


# ───────────────────────────── convolutions ─────────────────────────────

def nn_convnd_ref(x, w, s, lo, hi, d, groups):
    """N-d convolution (NC... data, OI... weight) in float64."""
    S = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(lo[i], hi[i]) for i in range(S)])
    N, C = x.shape[:2]
    O, cg = w.shape[:2]
    K = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - (d[i] * (K[i] - 1) + 1)) // s[i] + 1 for i in range(S)]
    out = np.zeros((N, O) + tuple(out_sp))
    og = O // groups
    for o in range(O):
        g = o // og
        for t in np.ndindex(*K):
            sl = tuple(slice(t[i] * d[i], t[i] * d[i] + s[i] * (out_sp[i] - 1) + 1, s[i]) for i in range(S))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[:, o] += np.tensordot(patch, w[(o, slice(None)) + t], axes=([1], [0]))
    return out


def nn_conv_transpose_ref(x, w, s, lo, hi, d, op, groups):
    """Transposed convolution, weight (C, O/groups, k...), float64: the full
    scatter (output_padding zeros at the end), then [lo, full - hi)."""
    S = x.ndim - 2
    N, C = x.shape[:2]
    og, K = w.shape[1], w.shape[2:]
    full = [s[i] * (x.shape[2 + i] - 1) + d[i] * (K[i] - 1) + 1 + op[i] for i in range(S)]
    out = np.zeros((N, og * groups) + tuple(full))
    cg = C // groups
    for c in range(C):
        g = c // cg
        for t in np.ndindex(*K):
            sl = tuple(slice(t[i] * d[i], t[i] * d[i] + s[i] * (x.shape[2 + i] - 1) + 1, s[i]) for i in range(S))
            contrib = x[:, c][:, None] * w[(c, slice(None)) + t].reshape((1, og) + (1,) * S)
            out[(slice(None), slice(g * og, (g + 1) * og)) + sl] += contrib
    return out[(slice(None), slice(None)) + tuple(slice(lo[i], full[i] - hi[i]) for i in range(S))]


def nn_window_params(S, R):
    k = [int(R.integers(1, 4)) for _ in range(S)]
    s = [int(R.integers(1, 3)) for _ in range(S)]
    d = [int(R.integers(1, 3)) for _ in range(S)]
    form = int(R.choice([1, S, 2 * S]))
    p = [int(v) for v in R.integers(0, 3, form)]
    lo = [p[0] if form == 1 else p[i] for i in range(S)]
    hi = [p[0] if form == 1 else p[i] if form == S else p[S + i] for i in range(S)]
    return k, s, d, p, lo, hi


@gen("nn.conv1d", "nn.conv3d")
def gnn_convnd(op):
    S = 1 if op == "nn.conv1d" else 3
    for dt in (np.float32, np.float64, np.float16, np.int8):
        for _ in range(4 if S == 1 else 2):
            groups = int(RNG.choice([1, 1, 2]))
            cg, og = int(RNG.integers(1, 3)), int(RNG.integers(1, 3))
            C, O = cg * groups, og * groups
            k, s, d, p, lo, hi = nn_window_params(S, RNG)
            sp = [int(RNG.integers(max(1, d[i] * (k[i] - 1) + 1 - lo[i] - hi[i]), 6 if S == 3 else 9))
                  for i in range(S)]
            x = rand_of((int(RNG.integers(1, 3)), C) + tuple(sp), dt, specials=False, lo=-4, hi=4)
            w = rand_of((O, cg) + tuple(k), dt, specials=False, lo=-4, hi=4)
            kw = dict(strides=s, padding=p, dilation=d, groups=groups)
            if RNG.random() < 0.5:
                kw.update(channels=O, kernel_size=k)
            if dt == np.int8:
                kw["out_dtype"] = "int32"
            ref = nn_convnd_ref(x.astype(np.float64), w.astype(np.float64), s, lo, hi, d, groups)
            if dt == np.int8:
                yield Case(op, attrs_text(**kw), [x, w], [ref.astype(np.int32)])
                continue
            bound = nn_convnd_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, lo, hi, d, groups)
            yield nn_tol_case(op, attrs_text(**kw), [x, w], ref, dt, bound, k=4)
    x, w = rand_float((1, 3) + (4,) * S, np.float32), rand_float((2, 2) + (3,) * S, np.float32)
    yield Case(op, "", [x, w], "input has 3 channels but weight")
    yield Case(op, attrs_text(kernel_size=[2] * S), [x, rand_float((2, 3) + (3,) * S, np.float32)],
               "kernel_size=")


def nn_conv2d_more(op):
    """Depthwise (groups = C, multiplier 2), asymmetric padding, 1x1, an
    unsupported (blocked) layout and a too-large window."""
    for dt in (np.float32, np.float64):
        x = rand_float((2, 4, 7, 6), dt, specials=False)
        w = rand_float((8, 1, 3, 3), dt, specials=False)
        p = [1, 0, 2, 1]
        ref = nn_convnd_ref(x.astype(np.float64), w.astype(np.float64), [2, 1], [1, 0], [2, 1], [1, 2], 4)
        bound = nn_convnd_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), [2, 1], [1, 0], [2, 1],
                           [1, 2], 4)
        yield nn_tol_case(op, attrs_text(strides=[2, 1], padding=p, dilation=[1, 2], groups=4, channels=8,
                                      kernel_size=[3, 3]), [x, w], ref, dt, bound, k=4)
        w1 = rand_float((5, 4, 1, 1), dt, specials=False)
        ref = nn_convnd_ref(x.astype(np.float64), w1.astype(np.float64), [1, 1], [0, 0], [0, 0], [1, 1], 1)
        bound = nn_convnd_ref(np.abs(x.astype(np.float64)), np.abs(w1.astype(np.float64)), [1, 1], [0, 0], [0, 0],
                           [1, 1], 1)
        yield nn_tol_case(op, "", [x, w1], ref, dt, bound, k=4)
    x = rand_float((1, 3, 4, 4), np.float32)
    yield Case(op, 'data_layout="NCHW16c"', [x, rand_float((3, 3, 3, 3), np.float32)], "not supported")
    yield Case(op, "", [x, rand_float((2, 3, 5, 5), np.float32)], "larger than the padded input")


nn_extend("nn.conv2d", nn_conv2d_more)


@gen("nn.conv1d_transpose", "nn.conv2d_transpose")
def gnn_conv_transpose(op):
    S = 1 if op == "nn.conv1d_transpose" else 2
    for dt in (np.float32, np.float64, np.float16, np.int8):
        for _ in range(4):
            groups = int(RNG.choice([1, 1, 2]))
            cg, og = int(RNG.integers(1, 3)), int(RNG.integers(1, 3))
            C = cg * groups
            k, s, d, p, lo, hi = nn_window_params(S, RNG)
            op_ = [int(RNG.integers(0, max(s[i], d[i]))) for i in range(S)]
            sp = [int(RNG.integers(1, 5)) for _ in range(S)]
            while any(s[i] * (sp[i] - 1) + d[i] * (k[i] - 1) + 1 + op_[i] - lo[i] - hi[i] < 0 for i in range(S)):
                sp = [v + 1 for v in sp]
            x = rand_of((int(RNG.integers(1, 3)), C) + tuple(sp), dt, specials=False, lo=-4, hi=4)
            w = rand_of((C, og) + tuple(k), dt, specials=False, lo=-4, hi=4)  # (C, O/groups, k)
            kw = dict(strides=s, padding=p, dilation=d, output_padding=op_, groups=groups)
            wt = w
            if S == 2:  # IOHW as written, or OIHW with the weight's first two axes swapped
                if RNG.random() < 0.5:
                    kw["kernel_layout"] = "IOHW"
                else:
                    wt = np.ascontiguousarray(np.swapaxes(w, 0, 1))
            if RNG.random() < 0.5:
                kw.update(channels=og * groups, kernel_size=k)
            if dt == np.int8:
                kw["out_dtype"] = "int32"
            ref = nn_conv_transpose_ref(x.astype(np.float64), w.astype(np.float64), s, lo, hi, d, op_, groups)
            if dt == np.int8:
                yield Case(op, attrs_text(**kw), [x, wt], [ref.astype(np.int32)])
                continue
            bound = nn_conv_transpose_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, lo, hi, d,
                                       op_, groups)
            yield nn_tol_case(op, attrs_text(**kw), [x, wt], ref, dt, bound, k=4)
    x = rand_float((1, 4) + (3,) * S, np.float32)
    yield Case(op, "", [x, rand_float((3, 2) + (2,) * S, np.float32)], "input channels")
    wshape = (4, 2) if S == 1 else (2, 4)  # the input channels: O in OIW, I in OIHW
    yield Case(op, attrs_text(strides=[2] * S, output_padding=[2] * S), [x, rand_float(wshape + (2,) * S, np.float32)],
               "output_padding")


# ───────────────────────────── pools ─────────────────────────────

def nn_poolnd_ref(x, k, s, d, lo, hi, ceil, is_max, include_pad, lowest):
    """Pools the last S axes of x (float64), TVM's rules."""
    S = len(k)
    sp = x.shape[x.ndim - S:]
    out_sp = [out_size(sp[i], k[i], s[i], d[i], lo[i], hi[i], ceil) for i in range(S)]
    out = np.zeros(x.shape[:x.ndim - S] + tuple(out_sp))
    for o in np.ndindex(*out_sp):
        pos = [[o[i] * s[i] - lo[i] + t * d[i] for t in range(k[i])] for i in range(S)]
        valid = [[q for q in pos[i] if 0 <= q < sp[i]] for i in range(S)]
        win = x[(Ellipsis,) + np.ix_(*valid)] if all(valid) else np.zeros(x.shape[:x.ndim - S] + (0,))
        win = win.reshape(x.shape[:x.ndim - S] + (-1,))
        if is_max:
            if not win.shape[-1]:
                out[(Ellipsis,) + o] = lowest
                continue
            m = np.max(win, axis=-1)
            pos0 = np.any((win == 0) & ~np.signbit(win), axis=-1)
            out[(Ellipsis,) + o] = np.where(m == 0, np.where(pos0, 0.0, -0.0), m)
        else:
            cnt = int(np.prod([sum(1 for q in pos[i] if q < sp[i] + hi[i]) for i in range(S)])) if include_pad \
                else win.shape[-1]
            out[(Ellipsis,) + o] = win.sum(axis=-1) / cnt if cnt else 0
    return out


@gen("nn.max_pool1d", "nn.avg_pool1d", "nn.max_pool3d", "nn.avg_pool3d")
def gnn_poolnd(op):
    S = 1 if "1d" in op else 3
    is_max = "max" in op
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(5 if S == 1 else 3):
            k, s, d, p, lo, hi = nn_window_params(S, RNG)
            lo = [min(v, k[i] // 2) for i, v in enumerate(lo)]
            hi = [min(v, k[i] // 2) for i, v in enumerate(hi)]
            p = lo + hi
            ceil = RNG.random() < 0.4
            sp = [int(RNG.integers(d[i] * (k[i] - 1) + 1, 6 if S == 3 else 9)) for i in range(S)]
            x = rand_of((1, 2) + tuple(sp), dt, specials=is_max)
            kw = dict(pool_size=k, strides=s, dilation=d, padding=p, ceil_mode=ceil)
            incl = False
            if not is_max:
                incl = RNG.random() < 0.5
                kw["count_include_pad"] = incl
            ref = nn_poolnd_ref(x.astype(np.float64), k, s, d, lo, hi, ceil, is_max, incl, float(np.finfo(dt).min))
            if is_max:
                yield Case(op, attrs_text(**kw), [x], [ref.astype(dt)])
            else:
                bound = nn_poolnd_ref(np.abs(x.astype(np.float64)), k, s, d, lo, hi, ceil, False, incl, 0)
                yield nn_tol_case(op, attrs_text(**kw), [x], ref, dt, bound, k=4)
    # channels-last layout
    layout = "NWC" if S == 1 else "NDHWC"
    x = rand_float((2,) + (5,) * S + (3,), np.float32, specials=False)
    xc = np.moveaxis(x, -1, 1)
    ref = nn_poolnd_ref(xc.astype(np.float64), [2] * S, [1] * S, [1] * S, [0] * S, [1] * S, False, is_max, False,
                     float(np.finfo(np.float32).min))
    kw = dict(pool_size=[2] * S, padding=[0] * S + [1] * S, layout=layout)
    yield nn_tol_case(op, attrs_text(**kw), [x], np.moveaxis(ref, 1, -1), np.float32,
                   np.moveaxis(np.abs(ref), 1, -1) + 1, k=4)
    yield Case(op, attrs_text(pool_size=[2] * S, layout="NCX" + "DHW"[3 - S:]), [x], "data must be")
    yield Case(op, attrs_text(pool_size=[0] * S), [xc], "`pool_size` values must be positive")


def nn_pool2d_nhwc(op):
    """nn.max_pool2d / avg_pool2d in NHWC and int8, through the generic layouts."""
    is_max = op == "nn.max_pool2d"
    x = rand_float((2, 6, 5, 3), np.float64, specials=is_max)
    xc = np.moveaxis(x, -1, 1)
    ref = nn_poolnd_ref(xc, [3, 2], [2, 1], [1, 1], [1, 0], [1, 0], True, is_max, True, float(np.finfo(np.float64).min))
    kw = dict(pool_size=[3, 2], strides=[2, 1], padding=[1, 0], layout="NHWC", ceil_mode=True)
    if not is_max:
        kw["count_include_pad"] = True
    if is_max:
        yield Case(op, attrs_text(**kw), [x], [np.moveaxis(ref, 1, -1)])
    else:
        bound = nn_poolnd_ref(np.abs(xc), [3, 2], [2, 1], [1, 1], [1, 0], [1, 0], True, False, True, 0)
        yield nn_tol_case(op, attrs_text(**kw), [x], np.moveaxis(ref, 1, -1), np.float64, np.moveaxis(bound, 1, -1))
    yield Case(op, attrs_text(pool_size=[2, 2], layout="NCHW", out_layout="NHWC"),
               [rand_float((1, 1, 4, 4), np.float32)], "out_layout NHWC differs")
    # the blocked layout AlterOpLayout gives a CNN's pools: NCHW4c (vectors along the block)
    x = rand_float((1, 8, 9, 7), np.float32, specials=is_max)
    ref = nn_poolnd_ref(x.astype(np.float64), [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, is_max,
                        False, float(np.finfo(np.float32).min))
    blk = lambda a: np.ascontiguousarray(a.reshape(1, 2, 4, *a.shape[2:]).transpose(0, 1, 3, 4, 2))
    kw = dict(pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout="NCHW4c")
    if is_max:
        yield Case(op, attrs_text(**kw), [blk(x)], [blk(ref).astype(np.float32)])
    else:
        bound = nn_poolnd_ref(np.abs(x.astype(np.float64)), [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False,
                              False, False, 0)
        yield nn_tol_case(op, attrs_text(**kw), [blk(x)], blk(ref), np.float32, blk(bound), k=4)


nn_extend("nn.max_pool2d", nn_pool2d_nhwc)
nn_extend("nn.avg_pool2d", nn_pool2d_nhwc)


def nn_adaptive_ref(x, oh, ow, is_max):
    N, C, H, W = x.shape
    out = np.zeros((N, C, oh, ow))
    for i in range(oh):
        h0, h1 = i * H // oh, -(-(i + 1) * H // oh)
        for j in range(ow):
            w0, w1 = j * W // ow, -(-(j + 1) * W // ow)
            win = x[:, :, h0:h1, w0:w1].reshape(N, C, -1)
            out[:, :, i, j] = win.max(axis=-1) if is_max else win.mean(axis=-1)
    return out


@gen("nn.global_max_pool2d", "nn.global_avg_pool2d", "nn.adaptive_max_pool2d", "nn.adaptive_avg_pool2d")
def gnn_adaptive(op):
    is_max = "max" in op
    glob = "global" in op
    for dt in (np.float32, np.float64, np.int32):
        for _ in range(3):
            H, W = int(RNG.integers(1, 9)), int(RNG.integers(1, 9))
            x = rand_of((int(RNG.integers(1, 3)), int(RNG.integers(1, 4)), H, W), dt, specials=False)
            if glob:
                oh, ow, attrs = 1, 1, ""
            else:
                form = int(RNG.integers(0, 3))
                oh, ow = (H, W) if form == 0 else (int(RNG.integers(1, 6)),) * 2
                if form == 2:
                    ow = int(RNG.integers(1, 6))
                attrs = "" if form == 0 else attrs_text(output_size=[oh] if form == 1 else [oh, ow])
            ref = nn_adaptive_ref(x.astype(np.float64), oh, ow, is_max)
            if is_max:
                yield Case(op, attrs, [x], [ref.astype(dt)])
            elif dt == np.int32:  # integer averages truncate
                sums = nn_adaptive_ref(x.astype(np.float64), oh, ow, False)
                yield Case(op, attrs, [x], [np.trunc(sums).astype(dt)])
            else:
                bound = nn_adaptive_ref(np.abs(x.astype(np.float64)), oh, ow, False)
                yield nn_tol_case(op, attrs, [x], ref, dt, bound)
    x = rand_float((1, 5, 6, 2), np.float32, specials=False)  # NHWC
    ref = nn_adaptive_ref(np.moveaxis(x, -1, 1).astype(np.float64), 1 if glob else 2, 1 if glob else 3, is_max)
    attrs = 'layout="NHWC"' if glob else 'output_size=[2, 3], layout="NHWC"'
    yield nn_tol_case(op, attrs, [x], np.moveaxis(ref, 1, -1), np.float32, np.abs(np.moveaxis(ref, 1, -1)) + 1)
    if not glob:
        yield Case(op, "output_size=[1, 2, 3]", [rand_float((1, 1, 2, 2), np.float32)], "at most 2 values")


# ───────────────────────────── pads ─────────────────────────────

@gen("nn.pad")
def gnn_pad(op):
    for dt in (np.float32, np.int8, np.float16, np.int64, np.bool_):
        for mode in ("constant", "edge", "reflect"):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
            pw = [(int(RNG.integers(0, n if mode == "reflect" else 3)),
                   int(RNG.integers(0, n if mode == "reflect" else 3))) for n in x.shape]
            v = np.array(2.7 if dt != np.bool_ else True, np.float64 if RNG.random() < 0.5 else np.int32)
            attrs = nn_pairs_text("pad_width", pw) + ("" if mode == "constant" and RNG.random() < 0.5
                                                   else ', pad_mode="%s"' % mode)
            if mode == "constant":
                fill = np.array(v).astype(np.float64)
                fill = fill.astype(dt) if dt in FLOATS or dt == np.bool_ else np.trunc(fill).astype(dt)
                ref = np.pad(x, pw, mode="constant", constant_values=fill)
            else:
                ref = np.pad(x, pw, mode=mode)
            yield Case(op, attrs, [x, v], [ref])
    x = rand_float((3, 4), np.float32)
    yield Case(op, nn_pairs_text("pad_width", [(-1, 2), (1, -2)]), [x, np.array(0, np.float32)],
               [np.pad(x, [(0, 2), (1, 0)])[1:, :-2]])
    yield Case(op, nn_pairs_text("pad_width", [(0, 0)]), [x, np.array(0, np.float32)], "pad_width has 1 pairs")
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (4, 0)]) + ', pad_mode="reflect"',
               [x, np.array(0, np.float32)], "needs more than 4 elements")
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (1, 0)]) + ', pad_mode="wrap"',
               [x, np.array(0, np.float32)], "pad_mode must be")
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (1, 0)]), [x, np.zeros(2, np.float32)], "must be a scalar")


@gen("nn.mirror_pad")
def gnn_mirror_pad(op):
    for dt in (np.float32, np.int16, np.float64):
        for mode in ("SYMMETRIC", "REFLECT"):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4, allow_empty=False), dt)
            lim = [n + 1 if mode == "SYMMETRIC" else n for n in x.shape]
            pw = [(int(RNG.integers(0, m)), int(RNG.integers(0, m))) for m in lim]
            attrs = nn_pairs_text("pad_width", pw) + ("" if mode == "SYMMETRIC" else ', mode="REFLECT"')
            yield Case(op, attrs, [x], [np.pad(x, pw, mode="symmetric" if mode == "SYMMETRIC" else "reflect")])
    x = rand_float((2, 3), np.float32)
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (4, 0)]), [x], "needs at least 4 elements")
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (-1, 0)]), [x], "non-negative")
    yield Case(op, nn_pairs_text("pad_width", [(0, 0), (1, 0)]) + ', mode="EDGE"', [x], "mode must be")


# ───────────────────────────── upsampling ─────────────────────────────

nn_F32 = np.float32


def nn_up_coord(ct, o, n, m):
    """float32 source coordinates of outputs o along a dim n -> m."""
    o = o.astype(nn_F32)
    scale = nn_F32(n) / nn_F32(m)
    if ct == "align_corners":
        return np.zeros_like(o) if m == 1 else (nn_F32(n) - nn_F32(1)) / (nn_F32(m) - nn_F32(1)) * o
    if ct == "half_pixel":
        return (o + nn_F32(0.5)) * scale - nn_F32(0.5)
    return scale * o


def nn_up_nearest(ct, n, m):
    o = np.arange(m)
    if ct == "asymmetric" and m % n == 0 and (m // n) <= 1 / (1e-5 * n + 1e-5):
        i = o // (m // n)
    else:
        v = nn_up_coord(ct, o, n, m)
        i = np.rint(v) if ct == "align_corners" else np.floor(v + nn_F32(1e-5))
    return np.clip(i.astype(np.int64), 0, n - 1)


def nn_cubic_w(t):
    a = nn_F32(-0.5)
    t2, t3 = t * t, t * t * t
    return [a * (t3 - nn_F32(2) * t2 + t), (a + nn_F32(2)) * t3 - (nn_F32(3) + a) * t2 + nn_F32(1),
            -(a + nn_F32(2)) * t3 + (nn_F32(3) + nn_F32(2) * a) * t2 - a * t, -a * t3 + a * t2]


def nn_upsample_ref(x, out_sp, method, ct):
    """x (N, C, spatial...) as TVM's resize computes it, in float32."""
    S = x.ndim - 2
    xf = x.astype(nn_F32)
    if method == "nearest_neighbor":
        idx = [nn_up_nearest(ct, x.shape[2 + i], out_sp[i]) for i in range(S)]
        return xf[(slice(None), slice(None)) + np.ix_(*idx)]
    taps = 2 if method != "bicubic" else 4
    los, fracs = [], []
    for i in range(S):
        v = nn_up_coord(ct, np.arange(out_sp[i]), x.shape[2 + i], out_sp[i])
        fl = np.floor(v)
        los.append(fl.astype(np.int64)), fracs.append((v - fl).astype(nn_F32))

    def rec(dim, sel):
        if dim == S:
            return xf[(slice(None), slice(None)) + np.ix_(*sel)]
        n = x.shape[2 + dim]
        shape = [1] * S
        shape[dim] = -1
        t = fracs[dim].reshape(shape)
        if taps == 2:
            a = rec(dim + 1, sel + [np.clip(los[dim], 0, n - 1)])
            b = rec(dim + 1, sel + [np.clip(los[dim] + 1, 0, n - 1)])
            return a * (nn_F32(1) - t) + b * t
        w = nn_cubic_w(t)
        s = None
        for k in range(4):
            v = rec(dim + 1, sel + [np.clip(los[dim] - 1 + k, 0, n - 1)])
            s = v * w[k] if s is None else s + v * w[k]
        return s

    return rec(0, [])


def nn_up_out(x, layout_perm, value, dt):
    """The float32 result in x's dtype (integers truncate)."""
    v = np.transpose(value, layout_perm)
    return v.astype(dt) if dt in FLOATS else np.trunc(v).astype(dt)


@gen("nn.upsampling", "nn.upsampling3d")
def gnn_upsampling(op):
    S = 2 if op == "nn.upsampling" else 3
    methods = ["nearest_neighbor", "bilinear", "bicubic"] if S == 2 else ["nearest_neighbor", "trilinear"]
    keys = ["scale_h", "scale_w"] if S == 2 else ["scale_d", "scale_h", "scale_w"]
    for dt in (np.float32, np.float64, np.float16, np.int32):
        for method in methods:
            for _ in range(2):
                sp = [int(RNG.integers(1, 5)) for _ in range(S)]
                scales = [float(RNG.choice([1.0, 2.0, 1.5, 0.5, 3.0, 2.5])) for _ in range(S)]
                out_sp = [int(np.rint(sp[i] * scales[i])) for i in range(S)]
                if min(out_sp) < 1:
                    scales = [2.0] * S
                    out_sp = [sp[i] * 2 for i in range(S)]
                x = rand_of((1, 2) + tuple(sp), dt, specials=False, lo=-50, hi=50, edges=False)
                kw = {keys[i]: scales[i] for i in range(S)}
                if method != "nearest_neighbor":
                    kw["method"] = method
                if S == 2:
                    align = RNG.random() < 0.5
                    ct = "align_corners" if align else "asymmetric"
                    if align:
                        kw["align_corners"] = True
                else:
                    ct = str(RNG.choice(["half_pixel", "align_corners", "asymmetric"]))
                    if ct != "half_pixel":
                        kw["coordinate_transformation_mode"] = ct
                perm = list(range(S + 2))
                nhwc = RNG.random() < 0.3
                xin = x
                if nhwc:  # channels last
                    kw["layout"] = "NHWC" if S == 2 else "NDHWC"
                    perm = [0] + list(range(2, S + 2)) + [1]
                    xin = np.ascontiguousarray(np.transpose(x, perm))
                ref = nn_upsample_ref(x, out_sp, method, ct)
                yield Case(op, attrs_text(**kw), [xin], [nn_up_out(x, perm, ref, dt)])
    x = rand_float((1, 1, 2, 2) + ((2,) if S == 3 else ()), np.float32)
    kw = {k: 2.0 for k in keys}
    yield Case(op, attrs_text(method="linear", **kw), [x], "method must be")
    yield Case(op, attrs_text(**dict(kw, **{keys[0]: -1.0})), [x], "must be positive")


# ───────────────────────── depth / space ─────────────────────────

def nn_d2s_ref(x, bs, mode):
    N, C, H, W = x.shape
    if mode == "DCR":
        y = x.reshape(N, bs, bs, C // (bs * bs), H, W).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(N, C // (bs * bs), bs, bs, H, W).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(N, C // (bs * bs), H * bs, W * bs)


def nn_s2d_ref(x, bs):
    N, C, H, W = x.shape
    y = x.reshape(N, C, H // bs, bs, W // bs, bs).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(N, C * bs * bs, H // bs, W // bs)


@gen("nn.depth_to_space", "nn.space_to_depth")
def gnn_subpixel(op):
    to_space = op == "nn.depth_to_space"
    for dt in (np.float32, np.int8, np.float64):
        for _ in range(4):
            bs = int(RNG.integers(1, 4))
            C = (bs * bs if to_space else 1) * int(RNG.integers(1, 3))
            H, W = (int(RNG.integers(1, 4)) * (1 if to_space else bs) for _ in range(2))
            x = rand_of((int(RNG.integers(1, 3)), C, H, W), dt)
            mode = str(RNG.choice(["DCR", "CRD"]))
            ref = nn_d2s_ref(x, bs, mode) if to_space else nn_s2d_ref(x, bs)
            kw = dict(block_size=bs)
            if to_space and mode == "CRD":
                kw["mode"] = "CRD"
            nhwc = RNG.random() < 0.4
            if nhwc:
                kw["layout"] = "NHWC"
                x, ref = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), ref.transpose(0, 2, 3, 1)
            yield Case(op, attrs_text(**kw), [x], [np.ascontiguousarray(ref)])
    x = rand_float((1, 3, 4, 4), np.float32)
    yield Case(op, "block_size=2", [x], "is not divisible by" if to_space else [nn_s2d_ref(x, 2)])
    yield Case(op, 'block_size=2, layout="NCWH"', [x], "layout must be NCHW or NHWC")
    yield Case(op, "block_size=0", [x], "block_size must be positive")
    if to_space:
        yield Case(op, 'mode="XYZ"', [x], "mode must be")
    else:
        yield Case(op, "block_size=3", [x], "is not divisible by 3")


def nn_s2b_ref(x, block, pads, value):
    M = len(block)
    xp = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - M), constant_values=value)
    N = x.shape[0]
    r = [N]
    for i in range(M):
        r += [xp.shape[1 + i] // block[i], block[i]]
    r += list(x.shape[1 + M:])
    y = xp.reshape(r)
    perm = [2 + 2 * i for i in range(M)] + [0] + [1 + 2 * i for i in range(M)] + \
        list(range(1 + 2 * M, len(r)))
    y = y.transpose(perm)
    return y.reshape([N * int(np.prod(block))] + [xp.shape[1 + i] // block[i] for i in range(M)] +
                     list(x.shape[1 + M:]))


def nn_b2s_ref(x, block, crops):
    M = len(block)
    N = x.shape[0] // int(np.prod(block))
    y = x.reshape(list(block) + [N] + list(x.shape[1:]))
    perm = [M]
    for i in range(M):
        perm += [M + 1 + i, i]
    perm += list(range(2 * M + 1, y.ndim))
    y = y.transpose(perm).reshape([N] + [x.shape[1 + i] * block[i] for i in range(M)] + list(x.shape[1 + M:]))
    sl = tuple(slice(crops[i][0], y.shape[1 + i] - crops[i][1]) for i in range(M))
    return y[(slice(None),) + sl]


@gen("nn.space_to_batch_nd", "nn.batch_to_space_nd")
def gnn_blocks(op):
    to_batch = op == "nn.space_to_batch_nd"
    for dt in (np.float32, np.int32, np.float16):
        for _ in range(4):
            M = int(RNG.integers(1, 3))
            block = [int(RNG.integers(1, 4)) for _ in range(M)]
            rest = [int(RNG.integers(1, 3)) for _ in range(int(RNG.integers(0, 2)))]
            N = int(RNG.integers(1, 3))
            if to_batch:
                pads = [(int(RNG.integers(0, 3)), 0) for _ in range(M)]
                sp = [block[i] * int(RNG.integers(1, 3)) for i in range(M)]
                pads = [(a, block[i] - (sp[i] + a) % block[i] if (sp[i] + a) % block[i] else 0)
                        for i, (a, _) in enumerate(pads)]
                x = rand_of([N] + sp + rest, dt)
                value = 1.5 if dt != np.int32 else 7.0
                kw = "block_shape=[%s], %s, pad_value=%rf" % (", ".join(map(str, block)),
                                                              nn_pairs_text("paddings", pads)[0:], value)
                ref = nn_s2b_ref(x, block, pads, np.array(value).astype(dt))
            else:
                sp = [int(RNG.integers(1, 4)) for _ in range(M)]
                crops = [(int(RNG.integers(0, 2)), int(RNG.integers(0, 2))) for _ in range(M)]
                crops = [(min(a, sp[i] * block[i] - 1), min(b, max(0, sp[i] * block[i] - 1 - a)))
                         for i, (a, b) in enumerate(crops)]
                x = rand_of([N * int(np.prod(block))] + sp + rest, dt)
                kw = "block_shape=[%s], %s" % (", ".join(map(str, block)), nn_pairs_text("crops", crops))
                ref = nn_b2s_ref(x, block, crops)
            yield Case(op, kw, [x], [np.ascontiguousarray(ref)])
    x = rand_float((2, 3, 4), np.float32)
    key = "paddings" if to_batch else "crops"
    yield Case(op, "block_shape=[2], " + nn_pairs_text(key, [(0, 0), (0, 0)]), [x], "has 2 pairs")
    yield Case(op, "block_shape=[2, 2, 2], " + nn_pairs_text(key, [(0, 0)] * 3), [x], "needs a rank above 3")
    if to_batch:
        yield Case(op, "block_shape=[2], " + nn_pairs_text(key, [(0, 0)]), [x], "is not divisible by 2")
    else:
        yield Case(op, "block_shape=[4], " + nn_pairs_text(key, [(0, 0)]), [x], "the batch 2 is not divisible by 4")


@gen("nn.dilate")
def gnn_dilate(op):
    for dt in (np.float32, np.int8, np.float64, np.bool_):
        for _ in range(3):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=4), dt)
            s = [int(RNG.integers(1, 4)) for _ in range(x.ndim)]
            v = -2.5 if dt in FLOATS else 1.0
            out = np.full(tuple((n - 1) * k + 1 if n else 0 for n, k in zip(x.shape, s)),
                          np.array(v).astype(dt) if dt in FLOATS or dt == np.bool_ else np.trunc(v).astype(dt), dt)
            out[tuple(slice(None, None, k) for k in s)] = x
            yield Case(op, attrs_text(strides=s, dilation_value=v), [x], [out])
    x = rand_float((2, 3), np.float32)
    yield Case(op, "", [x], [x])
    yield Case(op, attrs_text(strides=[2]), [x], "strides has 1 values")
    yield Case(op, attrs_text(strides=[0, 1]), [x], "strides must be positive")


# ───────────────────────────── normalizations ─────────────────────────────

def nn_chan_shape(ndim, axis):
    s = [1] * ndim
    s[axis] = -1
    return s


@gen("nn.batch_norm")
def gnn_batch_norm(op):
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(3):
            x = rand_float(rand_shape(rank=int(RNG.integers(1, 5)), maxdim=4, allow_empty=False), dt, specials=False)
            axis = int(RNG.integers(-x.ndim, x.ndim))
            C = x.shape[axis]
            g, b, m = (rand_float((C,), dt, specials=False) for _ in range(3))
            v = rand_float((C,), dt, specials=False, positive=True)
            center, scale, eps = RNG.random() < .8, RNG.random() < .8, float(RNG.choice([1e-5, 1e-3]))
            sh = nn_chan_shape(x.ndim, axis)
            e32 = float(np.float32(eps))  # the attribute is written as a float32 literal

            def f(xx, gg, bb, mm, vv):
                y = (xx - mm.reshape(sh)) / np.sqrt(vv.reshape(sh) + e32)
                return (y * gg.reshape(sh) if scale else y) + (bb.reshape(sh) if center else 0)
            X, G, B, Mn, V = (a.astype(np.float64) for a in (x, g, b, m, v))
            ref = f(X, G, B, Mn, V)
            bound = np.abs(f(X, G, 0 * B, Mn, V)) + np.abs(B.reshape(sh)) + np.abs(Mn.reshape(sh) / np.sqrt(
                V.reshape(sh) + e32) * (np.abs(G.reshape(sh)) if scale else 1))
            yield Case(op, attrs_text(axis=axis, epsilon=eps, center=center, scale=scale), [x, g, b, m, v],
                       [ref.astype(dt), m, v], "tol", rtol=8 * float(np.finfo(dt).eps),
                       scale=[bound, np.abs(m), np.abs(v)], atol=float(np.finfo(dt).tiny))
    x = rand_float((2, 3), np.float32)
    yield Case(op, "", [x] + [rand_float((2,), np.float32)] * 4, "gamma has shape (2) but data (2, 3) has 3")


def nn_groupwise_ref(x, axis, groups, keys_axes, g, b, eps, center, scale):
    """(x - mean) / sqrt(var + eps) over keys_axes of x reshaped for groups."""
    m = x.mean(axis=keys_axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=keys_axes, keepdims=True)
    return (x - m) / np.sqrt(v + float(np.float32(eps)))


@gen("nn.instance_norm", "nn.group_norm")
def gnn_instance_group_norm(op):
    grp = op == "nn.group_norm"
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(3):
            rank = int(RNG.integers(2, 5))
            x = rand_float(rand_shape(rank=rank, maxdim=4, allow_empty=False), dt, specials=False)
            axis = int(RNG.integers(0 if grp else 1, rank))
            G = 1
            if grp:
                G = int(RNG.integers(1, 3))
                shape = list(x.shape)
                shape[axis] = G * int(RNG.integers(1, 3))
                x = rand_float(tuple(shape), dt, specials=False)
            C = x.shape[axis]
            g, b = rand_float((C,), dt, specials=False), rand_float((C,), dt, specials=False)
            center, scale, eps = RNG.random() < .8, RNG.random() < .8, 1e-5
            X = x.astype(np.float64)
            if grp:  # (..., G, C/G, rest) reduced over C/G and the axes after
                xs = X.reshape(x.shape[:axis] + (G, C // G) + x.shape[axis + 1:])
                red = tuple(range(axis + 1, xs.ndim))
                y = nn_groupwise_ref(xs, axis, G, red, g, b, eps, center, scale).reshape(x.shape)
            else:
                red = tuple(i for i in range(1, x.ndim) if i != axis)
                y = nn_groupwise_ref(X, axis, 1, red, g, b, eps, center, scale) if red else np.zeros_like(X)
            sh = nn_chan_shape(x.ndim, axis)
            G64, B64 = g.astype(np.float64).reshape(sh), b.astype(np.float64).reshape(sh)
            ref = (y * G64 if scale else y) + (B64 if center else 0)
            bound = np.abs(y * G64 if scale else y) + np.abs(B64 if center else 0) + 1e-300
            kw = dict(axis=axis, epsilon=eps, center=center, scale=scale)
            if grp:
                kw = dict(num_groups=G, **kw)
            yield nn_tol_case(op, attrs_text(**kw), [x, g, b], ref, dt, bound, k=64)
    x = rand_float((2, 6, 3), np.float32)
    g = rand_float((6,), np.float32)
    if grp:
        yield Case(op, "num_groups=4", [x, g, g], "6 channels (axis 1 of (2, 6, 3)) are not divisible by num_groups=4")
        yield Case(op, "", [x, g, g], "num_groups must be positive")
    else:
        yield Case(op, "axis=2", [x, g, g], "gamma has shape (6) but data (2, 6, 3) has 3 at axis 2")


@gen("nn.l2_normalize")
def gnn_l2_normalize(op):
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(4):
            x = rand_float(rand_shape(rank=int(RNG.integers(1, 4)), maxdim=5, allow_empty=False), dt, specials=False)
            k = int(RNG.integers(1, x.ndim + 1))
            axes = sorted(RNG.choice(x.ndim, k, replace=False).tolist())
            axes = [a - x.ndim if RNG.random() < 0.3 else a for a in axes]
            eps = float(RNG.choice([1e-12, 10.0]))
            X = x.astype(np.float64)
            s = np.sum(X * X, axis=tuple(axes), keepdims=True)
            ref = X / np.sqrt(np.maximum(s, float(np.float32(eps))))
            yield nn_tol_case(op, "eps=%rf, axis=[%s]" % (eps, ", ".join(map(str, axes))), [x], ref, dt,
                           np.abs(ref) + 1e-300)
    x = rand_float((2, 3), np.float32)
    yield Case(op, "eps=1e-5f, axis=[1, -1]", [x], "axis 1 is repeated")
    yield Case(op, "axis=[1]", [x], "missing attribute `eps`")


@gen("nn.lrn")
def gnn_lrn(op):
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(3):
            x = rand_float((int(RNG.integers(1, 3)), int(RNG.integers(1, 7)), 2, 3), dt, specials=False)
            axis = int(RNG.choice([1, 3, -1]))
            size = int(RNG.choice([1, 3, 5, 2]))
            bias, alpha, beta = float(RNG.choice([2.0, 1.0])), float(RNG.choice([1e-4, 0.5])), 0.75
            X = np.moveaxis(x.astype(np.float64), axis, -1)
            n = X.shape[-1]
            bias, alpha, beta = (float(np.float32(v)) for v in (bias, alpha, beta))  # float32 literals
            sq = np.zeros_like(X)
            for c in range(n):
                lo, hi = max(0, c - size // 2), min(n, c - size // 2 + size)
                sq[..., c] = np.sum(X[..., lo:hi] ** 2, axis=-1)
            ref = np.moveaxis(X / (bias + alpha * sq / size) ** beta, -1, axis)
            yield nn_tol_case(op, attrs_text(size=size, axis=axis, bias=bias, alpha=alpha, beta=beta), [x], ref, dt,
                           np.abs(ref) + 1e-300)
    yield Case(op, "size=0", [rand_float((1, 2, 2, 2), np.float32)], "size must be positive")
    yield Case(op, "", [rand_int((1, 2, 2, 2), np.int32)], "must be a float tensor")


@gen("nn.prelu")
def gnn_prelu(op):
    for dt in (np.float32, np.float64, np.float16, np.int32, np.int8):
        for _ in range(3):
            x = rand_of(rand_shape(rank=int(RNG.integers(1, 5)), maxdim=4), dt, lo=-9, hi=9)
            axis = int(RNG.integers(-x.ndim, x.ndim)) if RNG.random() < 0.7 else 1 % x.ndim
            a = rand_of((x.shape[axis],), dt, specials=False, lo=-3, hi=3)
            attrs = "" if axis == 1 else attrs_text(axis=axis)
            if x.ndim == 1 and axis == 1 % x.ndim and axis != 1:
                attrs = attrs_text(axis=axis)
            with np.errstate(all="ignore"):
                ref = np.where(x > 0, x, x * a.reshape(nn_chan_shape(x.ndim, axis)))
            yield Case(op, attrs, [x, a], [ref.astype(dt)])
    yield Case(op, "", [rand_float((2, 3), np.float32), rand_float((2,), np.float32)],
               "alpha has shape (2) but data (2, 3) has 3 at axis 1")


def fast_softmax32(x, axis, lanes=16):
    """TVM's float32 fast_softmax step by step: the max (a NaN wins),
    e = fast_exp(x - max), e / sum; the float32 sum in 16 interleaved partials
    (element k in partial k mod 16, each in order: cumsum is sequential), added
    in partial order, as lower/compute/compute_nn.c's rule and the kernel take it."""
    F = np.float32
    x = np.moveaxis(np.asarray(x, F), axis, -1)
    n = x.shape[-1]
    with np.errstate(all="ignore"):
        m = np.where(np.isnan(x).any(-1, keepdims=True), F(np.nan),
                     x.max(-1, keepdims=True, initial=-np.inf))
        e = fast_exp32(x - m)
        s = np.zeros(x.shape[:-1] + (1,), F)
        for j in range(min(lanes, n)):
            s = s + np.cumsum(e[..., j::lanes], axis=-1, dtype=F)[..., -1:]
        return np.moveaxis(e / s, -1, axis).astype(F)


@gen("nn.fast_softmax")
def gnn_fast_softmax(op):
    """float32: TVM's approximation, bit for bit (and within 1e-6 of the exact
    softmax where no input is special); float64 and float16: the exact softmax."""
    for dt in FLOATS:
        for _ in range(3):
            specials = RNG.random() < 0.3
            x = rand_float(rand_shape(rank=int(RNG.integers(1, 4))), dt, specials=specials)
            axis = int(RNG.integers(-x.ndim, x.ndim))
            ref = ref64(lambda v: softmax64(v, axis, False), x, dt=dt)
            if dt != np.float32:
                yield Case(op, attrs_text(axis=axis), [x], [ref], "ulp", n=4)
                continue
            yield Case(op, attrs_text(axis=axis), [x], [fast_softmax32(x, axis)])
            if not specials:
                yield Case(op, attrs_text(axis=axis), [x], [ref], "tol", rtol=1e-6, scale=[1.0],
                           atol=1e-7)
    x = rand_float((7, 300), np.float32, specials=False, scale=30.0)
    yield Case(op, "", [x], [fast_softmax32(x, 1)])
    yield Case(op, "axis=2", [rand_float((2, 2), np.float32)], "axis 2 is out of range for rank 2")


# ───────────────────────────── losses ─────────────────────────────

def cross_entropy_case(op, shape, dt):
    """A cross entropy case on random operands of shape: predictions (positive
    and away from 0 unless they are logits) and targets, the float64 mean
    over the batch of -target * log(prediction) (or * logit) as reference."""
    logits = op.endswith("logits")
    x = rand_float(shape, dt, specials=False, positive=not logits, scale=1.0)
    if not logits:
        x = (x + dt(0.05)).astype(dt)
    y = rand_float(shape, dt, specials=False, positive=True, scale=1.0)
    X, Y = x.astype(np.float64), y.astype(np.float64)
    terms = (X if logits else np.log(X)) * Y
    return nn_tol_case(op, "", [x, y], -terms.sum() / shape[0], dt, np.abs(terms).sum() / shape[0] + 1e-300)


@gen("nn.cross_entropy", "nn.cross_entropy_with_logits")
def gnn_cross_entropy(op):
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(3):
            yield cross_entropy_case(op, (int(RNG.integers(1, 5)), int(RNG.integers(1, 6))), dt)
    yield Case(op, "", [rand_float((2, 3), np.float32), rand_float((2, 4), np.float32)], "differ in shape")
    yield Case(op, "", [rand_float((2, 3, 1), np.float32), rand_float((2, 3, 1), np.float32)], "must be 2-D")


@gen("nn.nll_loss")
def gnn_nll_loss(op):
    for dt in (np.float32, np.float64):
        for red in ("mean", "sum", "none"):
            for _ in range(2):
                N, C = int(RNG.integers(1, 4)), int(RNG.integers(1, 5))
                rest = tuple(int(RNG.integers(1, 3)) for _ in range(int(RNG.integers(0, 3))))
                p = rand_float((N, C) + rest, dt, specials=False)
                t = RNG.integers(0, C, (N,) + rest).astype(RNG.choice([np.int32, np.int64]))
                ignore = int(RNG.integers(-1, C))
                w = rand_float((C,), dt, specials=False, positive=True)
                P, W = p.astype(np.float64), w.astype(np.float64)
                pick = np.take_along_axis(P, np.expand_dims(t.astype(np.int64), 1), axis=1)[:, 0]
                keep = t != ignore
                terms = np.where(keep, -pick * W[t], 0.0)
                wsum = np.where(keep, W[t], 0.0).sum()
                ref = terms if red == "none" else terms.sum() if red == "sum" else terms.sum() / wsum
                bound = np.abs(terms) if red == "none" else np.abs(terms).sum() / (1 if red == "sum" else wsum)
                attrs = ('reduction="%s", ' % red if red != "mean" else "") + "ignore_index=%d" % ignore
                if red == "mean" and wsum == 0:
                    continue
                yield nn_tol_case(op, attrs, [p, t, w], ref, dt, bound + 1e-300)
    p, w = rand_float((2, 3), np.float32), rand_float((3,), np.float32, positive=True)
    yield Case(op, "ignore_index=-100", [p, np.array([0, 5], np.int64), w], "target 5 is out of range for 3 classes")
    yield Case(op, "", [p, np.array([0, 1], np.int64), w], "missing attribute `ignore_index`")
    yield Case(op, "ignore_index=0", [p, np.array([0, 1], np.float32), w], "targets must be integers")
    yield Case(op, 'reduction="avg", ignore_index=0', [p, np.array([0, 1], np.int32), w], "reduction must be")
    yield Case(op, "ignore_index=0", [p, np.array([0, 1], np.int32), rand_float((4,), np.float32)],
               "have 3 classes but weights have shape (4)")
