# image.py — numpy cases for the image ops: image.resize1d/2d/3d,
# dyn.image.resize2d, image.crop_and_resize, image.grid_sample,
# image.affine_grid.  Run in kernels_numpy.py's namespace (Case, gen, RNG,
# rand_float, attrs_text, ...).
#
# The references below are written from TVM's TOPI (python/tvm/topi/image):
# resize computes in float32 (parts TVM folds at compile time in float64,
# rounded once), grid_sample and affine_grid in the data's float type, with
# TOPI's operation order, so the kernels must agree exactly.  Where PyTorch
# has the same mode (interpolate, grid_sample, affine_grid), it is a second,
# independent reference, compared within a tolerance.

F32 = np.float32


def flist(vals):
    """A list attribute of floats, in rly's text format."""
    return "[" + ", ".join("%rf" % float(v) for v in vals) + "]"


def sat32(v):
    """float -> int32 as the kernels convert coordinates (saturating, NaN -> 0), as int64."""
    v = np.asarray(v, np.float64)
    v = np.where(np.isnan(v), 0.0, np.clip(v, -2.0 ** 31, 2.0 ** 31 - 1))
    return np.trunc(v).astype(np.int64)


def f32_to(v, dt):
    """float32 values to dt with rly's cast rules (truncate and saturate; NaN -> 0)."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return v.astype(dt)
    if dt.kind == "b":
        return v != 0
    info = np.iinfo(dt)
    w = np.where(np.isnan(v), 0.0, np.trunc(v.astype(np.float64)))
    return np.clip(w, info.min, info.max).astype(dt)


# ── resize: TOPI's get_inx, get_closest_index and the spline weights ──

COORDS = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
          "tf_crop_and_resize"]
ROUNDINGS = ["round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", ""]


def rs_coord(mode, n_in, n_out, st=0.0, en=0.0):
    fx = np.arange(n_out).astype(F32)
    if n_out == 0:
        return fx
    scale = F32(n_in / n_out)
    if mode in ("half_pixel", "pytorch_half_pixel"):
        if mode == "pytorch_half_pixel" and n_out <= 1:
            return np.zeros(n_out, F32)
        return (fx + F32(0.5)) * scale - F32(0.5)
    if mode == "align_corners":
        return F32((n_in - 1) / (n_out - 1)) * fx if n_out > 1 else np.zeros(n_out, F32)
    if mode == "asymmetric":
        return scale * fx
    if mode == "tf_half_pixel_for_nn":
        return (fx + F32(0.5)) * scale
    if n_out <= 1:
        return np.full(n_out, F32(0.5 * (st + en) * (n_in - 1)))
    return F32(st * (n_in - 1)) + fx * F32(en - st) * F32(n_in - 1) / F32(n_out - 1)


def rs_closest(c, rounding):
    if rounding == "round_prefer_floor":
        return sat32(np.ceil(c - F32(0.5)))
    if rounding == "round_prefer_ceil":
        return sat32(np.floor(c + F32(0.5)))
    if rounding == "floor":
        return sat32(np.floor(c + F32(1e-5)))
    if rounding == "ceil":
        return sat32(np.ceil(c - F32(1e-5)))
    return sat32(np.rint(c))


def cubic_w(alpha, t):
    a, t2 = F32(alpha), t * t
    t3 = t2 * t
    return [a * (t3 - F32(2) * t2 + t),
            F32(alpha + 2) * t3 - F32(3 + alpha) * t2 + F32(1),
            F32(-(alpha + 2)) * t3 + F32(3 + 2 * alpha) * t2 - a * t,
            F32(-alpha) * t3 + a * t2]


class RsSpec:
    def __init__(self, method="linear", coord="half_pixel", rounding="round", alpha=-0.5, exclude=0,
                 extrap=0.0):
        # cubic_alpha is written as a float32 literal (-0.6f): its value is float32's
        self.method, self.coord, self.alpha, self.exclude, self.extrap = method, coord, float(F32(alpha)), exclude, extrap
        self.rounding = rounding or ("round" if coord == "align_corners" else "floor")


def rs_taps(s, c, n_in):
    """(idx (n, T), w (n, T), outside (n,)) for coordinates c on an axis of n_in pixels."""
    outside = (c < 0) | (c > F32(n_in - 1)) if s.coord == "tf_crop_and_resize" else np.zeros(c.shape, bool)
    clampi = lambda i: np.clip(i, 0, n_in - 1)
    if s.method == "nearest_neighbor":
        return clampi(rs_closest(c, s.rounding))[:, None], np.ones((c.size, 1), F32), outside
    i0 = sat32(np.floor(c))
    if s.method == "linear":
        l = c - i0.astype(F32)
        return np.stack([clampi(i0), clampi(i0 + 1)], 1), np.stack([F32(1) - l, l], 1), outside
    w = cubic_w(s.alpha, c - np.floor(c))
    if s.exclude:
        for k in range(4):
            w[k] = np.where((i0 - 1 + k < 0) | (i0 + k > n_in), F32(0), w[k])
        tot = w[0] + w[1] + w[2] + w[3]
        w = [wk / tot for wk in w]
    return np.stack([clampi(i0 - 1 + k) for k in range(4)], 1), np.stack(w, 1), outside


def rs_axis(arr, axis, idx, w):
    """Samples arr (float32) along axis with taps idx/w of each output coordinate."""
    shape = [1] * arr.ndim
    shape[axis] = -1
    parts = [np.take(arr, idx[:, k], axis=axis) for k in range(idx.shape[1])]
    if len(parts) == 1:
        return parts[0]
    acc = parts[0] * w[:, 0].reshape(shape)
    for k in range(1, len(parts)):
        acc = acc + parts[k] * w[:, k].reshape(shape)
    return acc


CANON = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def to_canon(x, layout):
    return np.transpose(x, [layout.index(ch) for ch in CANON[len(layout) - 2]])


def from_canon(x, layout):
    canon = CANON[len(layout) - 2]
    return np.transpose(x, [canon.index(ch) for ch in layout])


def resize_ref(x, size, layout, s, roi=None, int_div=False, out_dtype=None):
    """TOPI's resize{1,2,3}d on x (any dtype) with layout; returns out_dtype (or x's)."""
    nsp = len(size)
    roi = roi or [0.0] * (2 * nsp)
    v = to_canon(x, layout).astype(F32)
    outside = np.zeros(v.shape[:2] + tuple(size), bool)
    for a in reversed(range(nsp)):
        n_in, n_out = v.shape[2 + a], size[a]
        c = rs_coord(s.coord, n_in, n_out, roi[a], roi[nsp + a])
        idx, w, out = rs_taps(s, c, n_in)
        ratio = n_out / n_in if n_in else 0.5
        if int_div and s.method == "nearest_neighbor" and s.coord == "asymmetric" and \
                ratio == math.floor(ratio) and not ratio > 1 / (1e-5 * n_in + 1e-5):
            idx = np.clip(np.arange(n_out) // int(ratio), 0, n_in - 1)[:, None]
        v = rs_axis(v, 2 + a, idx, w)
        oshape = [1] * outside.ndim
        oshape[2 + a] = -1
        outside = outside | out.reshape(oshape)
    v = np.where(outside, F32(s.extrap), v)
    return f32_to(from_canon(v, layout), out_dtype or x.dtype)


def rs_shape(layout, n, c, spatial):
    dims = {"N": n, "C": c}
    for ch, d in zip(CANON[len(spatial)][2:], spatial):
        dims[ch] = d
    return tuple(dims[ch] for ch in layout)


def rs_attrs(size, s, layout, roi=None, out_dtype=None, rounding=None):
    t = attrs_text(size=size, layout=layout, method=s.method, coordinate_transformation_mode=s.coord,
                   rounding_method=s.rounding if rounding is None else rounding, cubic_alpha=float(s.alpha),
                   cubic_exclude=s.exclude, extrapolation_value=float(s.extrap))
    if roi is not None:
        t += ", roi=" + flist(roi)
    if out_dtype:
        t += ', out_dtype="%s"' % out_dtype
    return t


LAYOUTS = {1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}


def rs_case(op, nsp, s, dt=np.float32, layout=None, size=None, spatial=None, roi=None, out_dtype=None,
            rounding=None, specials=False):
    layout = layout or LAYOUTS[nsp][0]
    spatial = spatial or [int(RNG.integers(1, 6)) for _ in range(nsp)]
    size = size or [int(RNG.integers(1, 8)) for _ in range(nsp)]
    shape = rs_shape(layout, int(RNG.integers(1, 3)), int(RNG.integers(1, 3)), spatial)
    x = rand_of(shape, dt, specials=specials) if np.dtype(dt).kind == "f" else rand_of(shape, dt)
    if s.coord == "tf_crop_and_resize" and roi is None:
        roi = [float(F32(v)) for v in RNG.uniform(-0.3, 0.5, nsp)] + \
              [float(F32(v)) for v in RNG.uniform(0.5, 1.3, nsp)]
    ref = resize_ref(x, size, layout, RsSpec(s.method, s.coord, s.rounding if rounding is None else rounding,
                                             s.alpha, s.exclude, s.extrap), roi, op == "image.resize2d",
                     out_dtype)
    return Case(op, rs_attrs(size, s, layout, roi, out_dtype, rounding), [x], [ref])


def torch_resize_cases(op, nsp):
    """PyTorch's interpolate where its modes are TVM's: linear/cubic with
    align_corners or half_pixel (cubic with alpha -0.75), nearest as
    asymmetric+floor, nearest-exact as tf_half_pixel_for_nn+floor."""
    try:
        import torch
        import torch.nn.functional as tf
    except ImportError:
        return
    lin = {1: "linear", 2: "bilinear", 3: "trilinear"}[nsp]
    modes = [(lin, True, "linear", "align_corners"), (lin, False, "linear", "half_pixel"),
             ("nearest", None, "nearest_neighbor", "asymmetric"),
             ("nearest-exact", None, "nearest_neighbor", "tf_half_pixel_for_nn")]
    if nsp == 2:
        modes += [("bicubic", True, "cubic", "align_corners"), ("bicubic", False, "cubic", "half_pixel")]
    for tmode, ac, method, coord in modes:
        for _ in range(2):
            spatial = [int(RNG.integers(2, 7)) for _ in range(nsp)]
            size = [int(RNG.integers(2, 9)) for _ in range(nsp)]
            x = rand_float((2, 3) + tuple(spatial), np.float32, specials=False)
            kw = {} if ac is None else {"align_corners": ac}
            ref = tf.interpolate(torch.from_numpy(x), size=tuple(size), mode=tmode, **kw).numpy()
            s = RsSpec(method, coord, "floor", -0.75 if method == "cubic" else -0.5)
            yield Case(op, rs_attrs(size, s, CANON[nsp]), [x], [ref], "tol", rtol=2e-6,
                       scale=[np.abs(x).max() * 4], atol=0.0)


@gen("image.resize1d", "image.resize2d", "image.resize3d")
def g_resize(op):
    nsp = int(op[-2])
    for method in ("nearest_neighbor", "linear", "cubic"):
        for coord in COORDS:
            yield rs_case(op, nsp, RsSpec(method, coord, "round"))
            yield rs_case(op, nsp, RsSpec(method, coord, "floor"), layout=LAYOUTS[nsp][1])
    for rounding in ROUNDINGS:
        for coord in ("half_pixel", "align_corners", "asymmetric"):
            yield rs_case(op, nsp, RsSpec("nearest_neighbor", coord, rounding))
    for alpha, exclude in ((-0.75, 0), (-0.5, 1), (-0.75, 1), (-0.6, 0)):
        for coord in ("half_pixel", "align_corners", "asymmetric"):
            yield rs_case(op, nsp, RsSpec("cubic", coord, alpha=alpha, exclude=exclude))
    for dt in (np.float16, np.float64, np.uint8, np.int32):
        yield rs_case(op, nsp, RsSpec("linear"), dt=dt)
        yield rs_case(op, nsp, RsSpec("cubic", "align_corners"), dt=dt)
    yield rs_case(op, nsp, RsSpec("linear"), dt=np.uint8, out_dtype="float32")
    yield rs_case(op, nsp, RsSpec("cubic"), out_dtype="int8")
    yield rs_case(op, nsp, RsSpec("linear", "tf_crop_and_resize", extrap=-7.5))
    yield rs_case(op, nsp, RsSpec("nearest_neighbor", "tf_crop_and_resize", extrap=2.0), size=[1] * nsp)
    yield rs_case(op, nsp, RsSpec("linear", "align_corners"), size=[1] * nsp)
    yield rs_case(op, nsp, RsSpec("linear"), specials=True)
    yield rs_case(op, nsp, RsSpec("linear"), size=[0] + [3] * (nsp - 1))
    yield rs_case(op, nsp, RsSpec("linear"), spatial=[1] * nsp, size=[4] * nsp)
    yield rs_case(op, nsp, RsSpec("nearest_neighbor", "asymmetric", "round"), spatial=[3] * nsp,
                  size=[6] * nsp)
    yield rs_case(op, nsp, RsSpec("nearest_neighbor", "asymmetric", "round"), spatial=[2] * nsp,
                  size=[8] * nsp)
    yield from torch_resize_cases(op, nsp)
    # errors the relation reports
    x = rand_float((1, 1) + (3,) * nsp, np.float32)
    sz = [2] * nsp
    yield Case(op, attrs_text(size=sz, method="bicubic"), [x], 'unknown method "bicubic"')
    yield Case(op, attrs_text(size=sz, coordinate_transformation_mode="half"), [x],
               'unknown coordinate_transformation_mode "half"')
    yield Case(op, attrs_text(size=sz, rounding_method="nearest"), [x], 'unknown rounding_method "nearest"')
    yield Case(op, attrs_text(size=sz) + ", roi=[0f, 1f, 0.5f]", [x], "attribute `roi` must have %d entries" % (2 * nsp))
    yield Case(op, attrs_text(size=sz + [2]), [x], "attribute `size` must list %d sizes" % nsp)
    yield Case(op, attrs_text(size=sz, layout=CANON[nsp] + "4c"), [x], "unsupported layout")
    yield Case(op, attrs_text(size=sz), [rand_float((1,) * (nsp + 1), np.float32)], "data must have rank %d" % (nsp + 2))
    yield Case(op, attrs_text(size=sz), [rand_float((1, 1) + (0,) * nsp, np.float32)], "cannot resize the empty axis")


@gen("dyn.image.resize2d")
def g_dyn_resize2d(op):
    for method in ("nearest_neighbor", "linear", "cubic"):
        for coord in COORDS:
            s = RsSpec(method, coord, "round")
            x = rand_float((1, 2, int(RNG.integers(1, 6)), int(RNG.integers(1, 6))), np.float32, specials=False)
            size = [int(RNG.integers(1, 8)), int(RNG.integers(1, 8))]
            roi = [float(F32(v)) for v in list(RNG.uniform(-0.3, 0.5, 2)) + list(RNG.uniform(0.5, 1.3, 2))]
            ref = resize_ref(x, size, "NCHW", s, roi if coord == "tf_crop_and_resize" else None)
            roi_t = np.array(roi if coord == "tf_crop_and_resize" else [0.0] * 4, np.float32)
            yield Case(op, rs_attrs([], s, "NCHW").replace("size=[], ", ""),
                       [x, np.array(size, np.int64), roi_t], [ref])
    # the integer-division form is the static op's only
    x = rand_float((1, 1, 3, 3), np.float32)
    s = RsSpec("nearest_neighbor", "asymmetric", "round")
    yield Case(op, rs_attrs([], s, "NHWC").replace("size=[], ", ""),
               [np.transpose(x, (0, 2, 3, 1)), np.array([6, 9], np.int32), np.zeros(4, np.float32)],
               [np.transpose(resize_ref(x, [6, 9], "NCHW", s), (0, 2, 3, 1))])
    yield Case(op, "", [x, np.array([2, 2, 2], np.int64), np.zeros(4, np.float32)], "size must have 2 entries (H, W), got 3")
    yield Case(op, "", [x, np.array([2, 2], np.float32), np.zeros(4, np.float32)], "size must be a 1-D integer tensor")
    yield Case(op, "", [x, np.array([2, -1], np.int64), np.zeros(4, np.float32)], "negative entry -1")


# ── crop_and_resize ──


def crop_ref(x, boxes, bix, crop, layout, method, extrap, out_dtype=None):
    s = RsSpec({"bilinear": "linear"}.get(method, method), "tf_crop_and_resize", "round", extrap=extrap)
    v = to_canon(x, layout).astype(F32)
    outs = []
    for b in range(boxes.shape[0]):
        img = v[bix[b]]
        outside = np.zeros((1,) + tuple(crop), bool)
        for a in (1, 0):
            n_in, n_out = img.shape[1 + a], crop[a]
            b0, b1 = F32(boxes[b, a]), F32(boxes[b, 2 + a])
            m = F32(n_in - 1)
            fx = np.arange(n_out).astype(F32)
            c = np.full(n_out, F32(0.5) * (b0 + b1) * m) if n_out <= 1 else \
                b0 * m + (m * (b1 - b0) / F32(n_out - 1)) * fx
            idx, w, out = rs_taps(s, c, n_in)
            img = rs_axis(img, 1 + a, idx, w)
            oshape = [1, 1, 1]
            oshape[1 + a] = -1
            outside = outside | out.reshape(oshape)
        outs.append(np.where(outside, F32(extrap), img))
    r = np.stack(outs) if outs else np.zeros((0, v.shape[1]) + tuple(crop), F32)
    return f32_to(from_canon(r, layout), out_dtype or x.dtype)


@gen("image.crop_and_resize")
def g_crop_and_resize(op):
    for method in ("bilinear", "nearest_neighbor", "linear", "cubic"):
        for layout in ("NCHW", "NHWC"):
            for crop in ([3, 4], [1, 5], [2, 1]):
                n = int(RNG.integers(1, 3))
                x = rand_of(rs_shape(layout, n, 2, [int(RNG.integers(1, 6)), int(RNG.integers(1, 6))]), np.float32,
                            specials=False)
                nb = int(RNG.integers(0, 4))
                boxes = np.concatenate([RNG.uniform(-0.2, 0.6, (nb, 2)), RNG.uniform(0.4, 1.2, (nb, 2))], 1).astype(F32)
                bix = RNG.integers(0, n, nb).astype(np.int32)
                extrap = float(RNG.choice([0.0, -1.5]))
                kw = dict(crop_size=crop, layout=layout, method=method, extrapolation_value=extrap)
                yield Case(op, attrs_text(**kw), [x, boxes, bix], [crop_ref(x, boxes, bix, crop, layout, method, extrap)])
    x = rand_float((2, 3, 4, 4), np.float32, specials=False)
    boxes = np.array([[np.nan, 0, 1, 1], [0, np.inf, 1, -np.inf], [1e30, -1e30, 2e30, 3], [0.5, 0.5, 0.5, 0.5]], F32)
    bix = np.array([0, 1, 1, 0], np.int32)
    for method in ("bilinear", "nearest_neighbor", "cubic"):  # coordinates NaN, infinite, huge
        yield Case(op, attrs_text(crop_size=[3, 3], method=method), [x, boxes, bix],
                   [crop_ref(x, boxes, bix, [3, 3], "NCHW", method, 0.0)])
    x = rand_of((2, 3, 4, 4), np.uint8)
    boxes = np.array([[0, 0, 1, 1], [0.25, 0.5, 0.75, 1.0]], F32)
    bix = np.array([1, 0], np.int64)
    yield Case(op, attrs_text(crop_size=[3, 3]), [x, boxes, bix], [crop_ref(x, boxes, bix, [3, 3], "NCHW", "bilinear", 0.0)])
    yield Case(op, attrs_text(crop_size=[3, 3], out_dtype="float32"), [x, boxes, bix],
               [crop_ref(x, boxes, bix, [3, 3], "NCHW", "bilinear", 0.0, np.float32)])
    yield Case(op, attrs_text(crop_size=[2, 2]), [x, boxes, np.array([0, 2], np.int32)],
               "box 1 has box index 2, out of range for a batch of 2")
    yield Case(op, attrs_text(crop_size=[2, 2], method="area"), [x, boxes, bix], 'unknown method "area"')
    yield Case(op, attrs_text(crop_size=[2, 2]), [x, boxes[:, :3], bix], "boxes must have shape (num_boxes, 4)")
    yield Case(op, attrs_text(crop_size=[2, 2]), [x, boxes, bix[:1]], "disagree")
    yield Case(op, attrs_text(crop_size=[2]), [x, boxes, bix], "attribute `crop_size` must list 2 sizes")
    yield Case(op, attrs_text(crop_size=[2, 2]), [x, boxes, bix.astype(np.float32)], "box_indices must be integers")


# ── grid_sample and affine_grid ──


def gs_unnorm(g, size, align, F):
    if align:
        return (g + F(1)) * F(size - 1) / F(2)
    return F(-0.5) + (g + F(1)) * F(size) / F(2)


def gs_clip(x, size, F):
    x = np.where(x > 0, x, F(0))
    return np.where(x < F(size - 1), x, F(size - 1))


def gs_reflect(x, size, corner, F):
    inr = (x >= corner) & (x <= F(size) + corner)
    if size == 0:
        return np.where(inr, x, corner)
    iac = np.abs(corner - x)
    times = sat32(iac) // size
    extra = iac - (times * size).astype(F)
    res = np.where(times % 2 == 0, extra + corner, F(size) - extra + corner)
    return np.where(inr, x, res).astype(F)


def gs_reflect_axis(x, size, align, F):
    return gs_reflect(x, size - 1, F(0), F) if align else gs_reflect(x, size, F(-0.5), F)


def gs_source(g, size, align, padding, F):
    x = gs_unnorm(g, size, align, F)
    if padding == "reflection":
        return gs_clip(gs_reflect_axis(x, size, align, F), size, F)
    if padding == "border":
        return gs_clip(x, size, F)
    return x


def gs_px(img, idx):
    """img (C, *dims); idx: one int array per dim, 0 outside."""
    ok = np.ones(idx[0].shape, bool)
    cl = []
    for i, d in zip(idx, img.shape[1:]):
        ok &= (i >= 0) & (i < d)
        cl.append(np.clip(i, 0, max(d - 1, 0)))
    return np.where(ok, img[(slice(None),) + tuple(cl)], img.dtype.type(0))


def gs_cubic1d(p, f, F):
    A = F(-0.75)
    w1 = lambda t: ((A + F(2)) * t - (A + F(3))) * t * t + F(1)
    w2 = lambda t: ((A * t - F(5) * A) * t + F(8) * A) * t - F(4) * A
    return p[0] * w2(f + F(1)) + p[1] * w1(f) + p[2] * w1(F(1) - f) + p[3] * w2(F(2) - f)


def gs_tap(i, size, align, padding, F):
    if padding == "border":
        return np.clip(i, 0, size - 1)
    if padding == "reflection":
        return sat32(gs_clip(gs_reflect_axis(i.astype(F), size, align, F), size, F))
    return i


def grid_sample_ref(x, grid, method, padding, align):
    F = np.float64 if x.dtype == np.float64 or grid.dtype == np.float64 else np.float32
    v, g = x.astype(F), grid.astype(F)
    nsp = x.ndim - 2
    out = []
    for n in range(x.shape[0]):
        img, dims = v[n], x.shape[2:]
        crd = [g[n, nsp - 1 - a] for a in range(nsp)]  # grid rows are (x, y[, z]); crd is ([z,] y, x)
        if method == "bicubic":
            y, xx = gs_unnorm(crd[0], dims[0], align, F), gs_unnorm(crd[1], dims[1], align, F)
            yf, xf = sat32(np.floor(y)), sat32(np.floor(xx))
            fy, fx = y - yf.astype(F), xx - xf.astype(F)
            rows = []
            for i in range(4):
                yi = gs_tap(yf - 1 + i, dims[0], align, padding, F)
                p = [gs_px(img, [yi, gs_tap(xf - 1 + j, dims[1], align, padding, F)]) for j in range(4)]
                rows.append(gs_cubic1d(p, fx, F))
            out.append(gs_cubic1d(rows, fy, F))
            continue
        src = [gs_source(crd[a], dims[a], align, padding, F) for a in range(nsp)]
        if method == "nearest":
            out.append(gs_px(img, [sat32(np.rint(s)) for s in src]))
            continue
        lo = [sat32(np.floor(s)) for s in src]
        d = [s - l.astype(F) for s, l in zip(src, lo)]
        e = [F(1) - dd for dd in d]
        if nsp == 2:
            (y0, x0), (dy, dx), (ey, ex) = lo, d, e
            out.append(gs_px(img, [y0, x0]) * ey * ex + gs_px(img, [y0, x0 + 1]) * ey * dx +
                       gs_px(img, [y0 + 1, x0]) * dy * ex + gs_px(img, [y0 + 1, x0 + 1]) * dy * dx)
        else:
            (z0, y0, x0), (dz, dy, dx), (ez, ey, ex) = lo, d, e
            P = lambda a, b, c: gs_px(img, [z0 + a, y0 + b, x0 + c])
            out.append(P(0, 0, 0) * ex * ey * ez + P(0, 0, 1) * dx * ey * ez + P(1, 1, 0) * ex * dy * dz +
                       P(1, 1, 1) * dx * dy * dz + P(0, 1, 0) * ex * dy * ez + P(1, 0, 1) * dx * ey * dz +
                       P(1, 0, 0) * ex * ey * dz + P(0, 1, 1) * dx * dy * ez)
    r = np.stack(out) if out else np.zeros((0, x.shape[1]) + grid.shape[2:], F)
    return r.astype(x.dtype)


def torch_grid_cases(op):
    try:
        import torch
        import torch.nn.functional as tf
    except ImportError:
        return
    for nsp, methods in ((2, ("bilinear", "nearest", "bicubic")), (3, ("bilinear", "nearest"))):
        for method in methods:
            for padding in ("zeros", "border", "reflection"):
                for align in (True, False):
                    x = rand_float((2, 2) + (3, 4, 5)[:nsp], np.float32, specials=False)
                    grid = RNG.uniform(-1.2, 1.2, (2, nsp) + (4, 3, 2)[:nsp]).astype(np.float32)
                    tg = torch.from_numpy(np.ascontiguousarray(np.moveaxis(grid, 1, -1)))
                    ref = tf.grid_sample(torch.from_numpy(x), tg, mode=method, padding_mode=padding,
                                         align_corners=align).numpy()
                    kw = dict(method=method, padding_mode=padding, align_corners=align,
                              layout="NCDHW" if nsp == 3 else "NCHW")
                    yield Case(op, attrs_text(**kw), [x, grid], [ref], "tol", rtol=1e-5,
                               scale=[np.abs(x).max() * 4], atol=0.0)


@gen("image.grid_sample")
def g_grid_sample(op):
    for nsp, methods in ((2, ("bilinear", "nearest", "bicubic")), (3, ("bilinear", "nearest"))):
        for method in methods:
            for padding in ("zeros", "border", "reflection"):
                for align in (True, False):
                    for dt in (np.float32, np.float64):
                        dims = tuple(int(RNG.integers(1, 6)) for _ in range(nsp))
                        x = rand_float((int(RNG.integers(1, 3)), 2) + dims, dt, specials=False)
                        gdims = tuple(int(RNG.integers(1, 5)) for _ in range(nsp))
                        grid = RNG.uniform(-2.5, 2.5, (x.shape[0], nsp) + gdims).astype(dt)
                        grid.reshape(-1)[:3] = [-1.0, 1.0, 0.0][:grid.size]
                        kw = dict(method=method, padding_mode=padding, align_corners=align,
                                  layout="NCDHW" if nsp == 3 else "NCHW")
                        yield Case(op, attrs_text(**kw), [x, grid], [grid_sample_ref(x, grid, method, padding, align)])
    x = rand_float((1, 3, 4, 4), np.float32, specials=False)  # grid values NaN, infinite, huge
    grid = np.array([[[[np.nan, np.inf], [-np.inf, 1e30]], [[0, -1e30], [np.nan, 3e9]]]], np.float32)
    x1, g1 = np.ones((1, 1, 1, 1), np.float32), np.array([[[[0.3]], [[-2.5]]]], np.float32)  # one pixel
    for method in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            kw = dict(method=method, padding_mode=padding)
            yield Case(op, attrs_text(**kw, align_corners=False), [x, grid],
                       [grid_sample_ref(x, grid, method, padding, False)])
            yield Case(op, attrs_text(**kw), [x1, g1], [grid_sample_ref(x1, g1, method, padding, True)])
    x = rand_float((1, 1, 1, 3), np.float16, specials=False)
    grid = RNG.uniform(-1.5, 1.5, (1, 2, 2, 2)).astype(np.float16)
    yield Case(op, attrs_text(padding_mode="reflection"), [x, grid], [grid_sample_ref(x, grid, "bilinear", "reflection", True)])
    yield from torch_grid_cases(op)
    x, grid = rand_float((1, 2, 3, 3), np.float32), rand_float((1, 2, 2, 2), np.float32)
    yield Case(op, attrs_text(method="area"), [x, grid], 'unknown method "area"')
    yield Case(op, attrs_text(padding_mode="wrap"), [x, grid], 'unknown padding_mode "wrap"')
    yield Case(op, attrs_text(layout="NHWC"), [x, grid], 'layout "NHWC" is not supported')
    yield Case(op, "", [x, rand_float((1, 3, 2, 2), np.float32)], "must have 2 coordinates in dim 1")
    yield Case(op, "", [x, rand_float((2, 2, 2, 2), np.float32)], "disagree")
    yield Case(op, attrs_text(layout="NCDHW", method="bicubic"), [rand_float((1, 1, 2, 2, 2), np.float32),
                                                                rand_float((1, 3, 1, 1, 1), np.float32)],
               'method "bicubic" needs 4-D data')
    yield Case(op, "", [rand_of((1, 2, 3, 3), np.int32), grid], "data must have a float dtype")


def affine_grid_ref(theta, h, w):
    """float16 computes in float32, as the kernel does."""
    F = np.float64 if theta.dtype == np.float64 else np.float32
    dt, theta = theta.dtype, theta.astype(F)
    ys, xs = F((2.0 - 1e-7) / (h - 1)), F((2.0 - 1e-7) / (w - 1))
    y = F(-1) + np.arange(h).astype(F) * ys
    x = F(-1) + np.arange(w).astype(F) * xs
    t = theta[:, :, :, None, None]
    return (t[:, :, 0] * x[None, None, None, :] + t[:, :, 1] * y[None, None, :, None] + t[:, :, 2]).astype(dt)


@gen("image.affine_grid")
def g_affine_grid(op):
    for dt in (np.float32, np.float64, np.float16):
        for _ in range(3):
            theta = rand_float((int(RNG.integers(1, 4)), 2, 3), dt, specials=False)
            h, w = int(RNG.integers(2, 7)), int(RNG.integers(2, 7))
            yield Case(op, attrs_text(target_shape=[h, w]), [theta], [affine_grid_ref(theta, h, w)])
    try:
        import torch
        import torch.nn.functional as tf
        theta = rand_float((2, 2, 3), np.float32, specials=False)
        ref = tf.affine_grid(torch.from_numpy(theta), (2, 1, 5, 7), align_corners=True).numpy()
        yield Case(op, attrs_text(target_shape=[5, 7]), [theta], [np.moveaxis(ref, -1, 1)], "tol", rtol=1e-6,
                   scale=[np.abs(theta).sum(axis=2).max() * 2], atol=0.0)
    except ImportError:
        pass
    theta = rand_float((1, 2, 3), np.float32)
    yield Case(op, attrs_text(target_shape=[1, 4]), [theta], "target_shape (1, 4) must be at least 2")
    yield Case(op, attrs_text(target_shape=[3]), [theta], "attribute `target_shape` must list 2 sizes")
    yield Case(op, attrs_text(target_shape=[3, 3]), [rand_float((1, 3, 3), np.float32)], "shape (batch, 2, 3)")


# ── grid_sample_grad: grid_sample's adjoints, against torch's autograd ──


def grid_grad_torch(x, grid, dy, method, padding, align):
    """(dx, dgrid) of torch's grid_sample at x, grid (rly's layout) for dy."""
    import torch
    import torch.nn.functional as tf
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(np.ascontiguousarray(np.moveaxis(grid, 1, -1))).requires_grad_()
    y = tf.grid_sample(tx, tg, mode=method, padding_mode=padding, align_corners=align)
    y.backward(torch.from_numpy(dy))
    return tx.grad.numpy(), np.ascontiguousarray(np.moveaxis(tg.grad.numpy(), -1, 1))


@gen("image.grid_sample_grad")
def g_grid_sample_grad(op):
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    for nsp in (2, 3):
        for method in ("bilinear", "nearest"):
            for padding in ("zeros", "border", "reflection"):
                for align in (True, False):
                    for dt in (np.float32, np.float64):
                        dims = tuple(int(RNG.integers(1, 6)) for _ in range(nsp))
                        x = rand_float((int(RNG.integers(1, 3)), 2) + dims, dt, specials=False)
                        gdims = tuple(int(RNG.integers(1, 4)) for _ in range(nsp))
                        grid = RNG.uniform(-2.5, 2.5, (x.shape[0], nsp) + gdims).astype(dt)
                        dy = rand_float(x.shape[:2] + gdims, dt, specials=False)
                        dx, dg = grid_grad_torch(x, grid, dy, method, padding, align)
                        kw = dict(method=method, padding_mode=padding, align_corners=align,
                                  layout="NCDHW" if nsp == 3 else "NCHW")
                        rtol = 1e-5 if dt == np.float32 else 1e-12
                        bound = np.abs(dy).sum()
                        yield Case(op, attrs_text(**kw), [dy, x, grid], [dx, dg], "tol", rtol=rtol, atol=0.0,
                                   scale=[bound, bound * np.abs(x).max() * max(dims) * 2])
    x, grid = rand_float((1, 2, 3, 3), np.float32), rand_float((1, 2, 2, 2), np.float32)
    dy = rand_float((1, 2, 2, 2), np.float32)
    yield Case(op, attrs_text(method="bicubic"), [dy, x, grid], 'method "bicubic" has no adjoint')
    yield Case(op, "", [dy[:, :, :1], x, grid], "the adjoint Tensor[(1, 2, 1, 2), float32] must have the type")
    yield Case(op, "", [dy.astype(np.float64), x, grid], "must have the type of the op's result")
    yield Case(op, attrs_text(padding_mode="wrap"), [dy, x, grid], 'unknown padding_mode "wrap"')
