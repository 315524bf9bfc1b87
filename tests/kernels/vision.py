# vision.py — numpy cases for the vision ops: vision.get_valid_counts,
# vision.non_max_suppression, vision.roi_align, vision.multibox_prior.
# Run in kernels_numpy.py's namespace (Case, gen, RNG, rand_float,
# attrs_text, ...; image.py's helpers F32, flist, sat32 are loaded before).
#
# The references are written from TVM's TOPI (python/tvm/topi/vision):
# loops over boxes as the hybrid scripts walk them, arithmetic in the
# data's float type.  torchvision (when installed) is a second reference
# for non_max_suppression (torchvision.ops.nms) and roi_align (avg mode).


def valid_counts_ref(d, thr, si, ii):
    b, n, k = d.shape
    cnt = np.zeros(b, np.int32)
    out = np.full(d.shape, -1, d.dtype)
    ix = np.full((b, n), -1, np.int32)
    for i in range(b):
        for j in range(n):
            if d[i, j, si] > thr and (ii < 0 or d[i, j, ii] >= 0):
                out[i, cnt[i]] = d[i, j]
                ix[i, cnt[i]] = j
                cnt[i] += 1
    return [cnt, out, ix]


def boxes_data(b, n, k, dt=np.float32, ids=2, cs=2, si=1, ii=0):
    """Random detection rows: class id, score, corners (some flipped)."""
    d = RNG.uniform(-1, 1, (b, n, k)).astype(dt)
    if ii >= 0:
        d[:, :, ii] = RNG.integers(-1, ids, (b, n))
    d[:, :, si] = RNG.uniform(-0.3, 1.0, (b, n))
    xy = RNG.uniform(0, 10, (b, n, 2))
    wh = RNG.uniform(0.5, 6, (b, n, 2))
    corners = np.concatenate([xy, xy + wh], 2)
    flip = RNG.random((b, n)) < 0.2
    corners[flip] = corners[flip][:, [2, 3, 0, 1]]
    d[:, :, cs:cs + 4] = corners
    return d


@gen("vision.get_valid_counts")
def g_valid_counts(op):
    for dt in (np.float32, np.float64, np.float16):
        for si, ii, cs, k in ((1, 0, 2, 6), (0, -1, 1, 5), (5, 0, 1, 6)):
            d = boxes_data(int(RNG.integers(1, 3)), int(RNG.integers(0, 7)), k, dt, cs=cs, si=si, ii=ii)
            thr = np.array(RNG.choice([0.0, 0.3, -0.5]), np.float32)
            yield Case(op, attrs_text(score_index=si, id_index=ii), [d, thr], valid_counts_ref(d, thr, si, ii))
    d = boxes_data(1, 3, 6)
    yield Case(op, attrs_text(score_index=6), [d, np.array(0, np.float32)], "score_index 6 is out of range for boxes of 6 values")
    yield Case(op, attrs_text(id_index=7), [d, np.array(0, np.float32)], "id_index 7 is out of range")
    yield Case(op, "", [d[0], np.array(0, np.float32)], "data must be 3-D")
    yield Case(op, "", [d, np.array([0], np.float32)], "score_threshold must be a scalar")


def iou_ref(a, b, F):
    al, at, ar, ab = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bl, bt, br, bb = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    w = max(F(0), min(ar, br) - max(al, bl))
    h = max(F(0), min(ab, bb) - max(at, bt))
    area = h * w
    u = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - area
    return F(0) if u <= 0 else area / u


def nms_ref(d, vc, ix, max_out, thr, force=False, top_k=-1, cs=2, si=1, ii=0, ret_ix=True, bottom=False):
    """TOPI's hybrid_nms and the rearranging that follows, literally."""
    F = np.float64 if d.dtype == np.float64 else np.float32
    b, n, k = d.shape
    dd = d.astype(F)
    out = np.full((b, n, k), -1, F)
    bi = np.full((b, n), -1, np.int64)
    for i in range(b):
        v = int(vc[i])
        if thr > 0 and v > 0:
            order = sorted(range(v), key=lambda j: -float(dd[i, j, si]))
            order += list(range(v, n))
            nkeep = top_k if 0 < top_k < v else v
            for j in range(nkeep):
                out[i, j], bi[i, j] = dd[i, order[j]], order[j]
            nvalid = 0
            for j in range(v):
                if nvalid == max_out:
                    out[i, j], bi[i, j] = -1, -1
                elif out[i, j, si] > 0:
                    ok = True
                    for q in range(j):
                        if ok and out[i, q, si] > 0 and (ii < 0 or out[i, q, ii] >= 0) and \
                                (force or ii < 0 or out[i, j, ii] == out[i, q, ii]):
                            if iou_ref([F(t) for t in out[i, j, cs:cs + 4]], [F(t) for t in out[i, q, cs:cs + 4]], F) >= F(thr):
                                ok = False
                    if not ok:
                        out[i, j], bi[i, j] = -1, -1
                    else:
                        nvalid += 1
        elif not thr > 0:
            out[i, :v], bi[i, :v] = dd[i, :v], np.arange(v)
    if ret_ix:
        res, cnt = np.full((b, n), -1, np.int32), np.zeros((b, 1), np.int32)
        for i in range(b):
            vi = 0
            for j in range(n):
                t = int(bi[i, j])
                if t >= 0:
                    t = int(ix[i, t])
                if t >= 0 and vi < n:
                    res[i, vi], vi = t, vi + 1
                if (t > n or t < -n) and vi < n:
                    res[i, vi], vi = 0, vi + 1
            cnt[i, 0] = vi
        return [res, cnt]
    if bottom:
        rows = np.full((b, n, k), -1, F)
        for i in range(b):
            vi = 0
            for j in range(n):
                if out[i, j, 0] >= 0:
                    rows[i, vi], vi = out[i, j], vi + 1
        out = rows
    return [out.astype(d.dtype)]


def nms_case(op, b, n, dt=np.float32, thr=0.5, max_out=-1, valid=None, **kw):
    cs, si, ii = kw.get("cs", 2), kw.get("si", 1), kw.get("ii", 0)
    d = boxes_data(b, n, 6 if ii >= 0 else 5, dt, cs=cs, si=si, ii=ii)
    vc = np.array(valid if valid is not None else RNG.integers(0, n + 1, b), np.int32)
    ix = np.stack([RNG.permutation(n) for _ in range(b)]).astype(np.int32) if n else np.zeros((b, 0), np.int32)
    attrs = dict(force_suppress=kw.get("force", False), top_k=kw.get("top_k", -1), coord_start=cs,
                 score_index=si, id_index=ii, return_indices=kw.get("ret_ix", True),
                 invalid_to_bottom=kw.get("bottom", False))
    ref = nms_ref(d, vc, ix, max_out, F32(thr), **{a: kw[a] for a in kw})
    return Case(op, attrs_text(**attrs), [d, vc, ix, np.array(max_out, np.int32), np.array(thr, np.float32)], ref)


def torchvision_nms_cases(op):
    try:
        import torch
        import torchvision
    except ImportError:
        return
    for n in (5, 12, 30):
        xy = RNG.uniform(0, 10, (n, 2))
        boxes = np.concatenate([xy, xy + RNG.uniform(1, 5, (n, 2))], 1).astype(np.float32)
        scores = RNG.uniform(0.05, 1, n).astype(np.float32)
        keep = torchvision.ops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.4).numpy()
        d = np.concatenate([scores[:, None], boxes], 1)[None]
        ref = np.full((1, n), -1, np.int32)
        ref[0, :len(keep)] = keep
        yield Case(op, attrs_text(force_suppress=True, coord_start=1, score_index=0, id_index=-1),
                   [d, np.array([n], np.int32), np.arange(n, dtype=np.int32)[None], np.array(-1, np.int32),
                    np.array(0.4, np.float32)], [ref, np.array([[len(keep)]], np.int32)])


@gen("vision.non_max_suppression")
def g_nms(op):
    for dt in (np.float32, np.float64):
        for thr in (0.5, 0.2, 0.0):
            for force in (False, True):
                yield nms_case(op, 2, int(RNG.integers(0, 9)), dt, thr=thr, force=force)
        yield nms_case(op, 1, 8, dt, top_k=3, valid=[8])
        yield nms_case(op, 2, 8, dt, max_out=2)
        yield nms_case(op, 2, 8, dt, max_out=0)
        yield nms_case(op, 2, 7, dt, ii=-1, si=0, cs=1)
        yield nms_case(op, 2, 7, dt, ret_ix=False)
        yield nms_case(op, 2, 7, dt, ret_ix=False, bottom=True)
        yield nms_case(op, 2, 7, dt, ret_ix=False, thr=0.0)
    yield from torchvision_nms_cases(op)
    # NaN scores are not positive (the rows stay); an empty batch; odd `indices` entries
    d = np.full((1, 3, 6), np.nan, np.float32)
    args = [np.array([3], np.int32), np.array([[0, 1, 2]], np.int32), np.array(-1, np.int32), np.array(0.5, np.float32)]
    yield Case(op, "", [d] + args, nms_ref(d, args[0], args[1], -1, F32(0.5)))
    d = np.zeros((0, 3, 6), np.float32)
    args = [np.zeros(0, np.int32), np.zeros((0, 3), np.int32), np.array(-1, np.int32), np.array(0.5, np.float32)]
    yield Case(op, "", [d] + args, nms_ref(d, args[0], args[1], -1, F32(0.5)))
    d = np.zeros((1, 3, 6), np.float32)
    args = [np.array([2], np.int32), np.array([[99, -99, 7]], np.int32), np.array(-1, np.int32), np.array(0, np.float32)]
    yield Case(op, "", [d] + args, nms_ref(d, args[0], args[1], -1, F32(0)))
    d = boxes_data(1, 4, 6)
    args = lambda **a: [a.get("d", d), a.get("vc", np.array([4], np.int32)), a.get("ix", np.zeros((1, 4), np.int32)),
                        np.array(-1, np.int32), a.get("thr", np.array(0.5, np.float32))]
    yield Case(op, "", args(vc=np.array([5], np.int32)), "valid_count 5 of batch entry 0 is outside [0, 4]")
    yield Case(op, attrs_text(coord_start=3), args(), "coord_start 3 is out of range for boxes of 6 values")
    yield Case(op, "", args(ix=np.zeros((1, 3), np.int32)), "disagree")
    yield Case(op, "", args(thr=np.array([0.5], np.float32)), "iou_threshold must be a scalar")
    yield Case(op, "", args(vc=np.array([4.0], np.float32)), "valid_count must have an integer dtype")


def tmax(a, b):
    """TVM's max: a > b ? a : b (a NaN first operand gives b)."""
    return a if a > b else b


def tmin(a, b):
    return a if a < b else b


def roi_align_ref(x, rois, ph, pw, scale, ratio, mode, layout):
    F = np.float64 if x.dtype == np.float64 or rois.dtype == np.float64 else np.float32
    v = (x if layout == "NCHW" else np.transpose(x, (0, 3, 1, 2))).astype(F)
    _, c, h, w = v.shape
    out = np.zeros((rois.shape[0], c, ph, pw), F)

    def sample(img, y, xx):
        if y < F(-1) or xx < F(-1) or y > F(h) or xx > F(w):
            return np.zeros(c, F)
        y = tmin(tmax(y, F(0)), F(h - 1))
        xx = tmin(tmax(xx, F(0)), F(w - 1))
        y0, x0 = int(np.floor(y)), int(np.floor(xx))
        wyh, wxh = y - F(y0), xx - F(x0)
        val = None
        for wx, xp in ((F(1) - wxh, x0), (wxh, x0 + 1)):
            for wy, yp in ((F(1) - wyh, y0), (wyh, y0 + 1)):
                t = wx * wy * img[:, yp, xp] if 0 <= yp <= h - 1 and 0 <= xp <= w - 1 else np.zeros(c, F)
                val = t if val is None else val + t
        return val

    for r in range(rois.shape[0]):
        ro = rois[r].astype(F)
        img = v[int(ro[0])]
        sw, sh, ew, eh = ro[1] * F(scale), ro[2] * F(scale), ro[3] * F(scale), ro[4] * F(scale)
        rh, rw = tmax(eh - sh, F(1)), tmax(ew - sw, F(1))
        bh, bw = rh / F(ph), rw / F(pw)
        gh = ratio if ratio > 0 else int(np.ceil(rh / F(ph)))
        gw = ratio if ratio > 0 else int(np.ceil(rw / F(pw)))
        cnt = F(gh * gw)
        for py in range(ph):
            for px in range(pw):
                acc = np.zeros(c, F) if mode == "avg" else np.full(c, -np.finfo(F).max, F)
                ys, xs = sh + F(py) * bh, sw + F(px) * bw
                for iy in range(gh):
                    for ixx in range(gw):
                        s = sample(img, ys + (F(iy) + F(0.5)) * bh / F(gh), xs + (F(ixx) + F(0.5)) * bw / F(gw))
                        acc = acc + s / cnt if mode == "avg" else np.where(acc > s, acc, s)
                out[r, :, py, px] = acc
    if layout == "NHWC":
        out = np.transpose(out, (0, 2, 3, 1))
    return out.astype(x.dtype)


def rois_data(nr, n, h, w, dt=np.float32, scale=1.0):
    xy = RNG.uniform(-2, max(w, h), (nr, 2))
    wh = RNG.uniform(-1, max(w, h), (nr, 2))
    r = np.concatenate([RNG.integers(0, n, (nr, 1)), xy, xy + wh], 1) / np.array([1, scale, scale, scale, scale])
    return r.astype(dt)


def roi_setups(scales, min_rois):
    """Random roi_align calls over dtypes, modes, layouts and sample ratios:
    (x, rois as float64, the attributes as a dict)."""
    for dt in (np.float32, np.float64):
        for mode in ("avg", "max"):
            for layout in ("NCHW", "NHWC"):
                for ratio in (-1, 2):
                    n, c, h, w = int(RNG.integers(1, 3)), 2, int(RNG.integers(2, 8)), int(RNG.integers(2, 8))
                    x = rand_float((n, c, h, w) if layout == "NCHW" else (n, h, w, c), dt, specials=False)
                    scale = float(RNG.choice(scales))
                    rois = rois_data(int(RNG.integers(min_rois, 4)), n, h, w, np.float64, scale)
                    ph, pw = int(RNG.integers(1, 4)), int(RNG.integers(1, 4))
                    yield x, rois, dict(pooled_size=[ph, pw], spatial_scale=scale, sample_ratio=ratio, mode=mode,
                                        layout=layout)


def roi_ref_args(kw):
    return (kw["pooled_size"][0], kw["pooled_size"][1], kw["spatial_scale"], kw["sample_ratio"], kw["mode"],
            kw["layout"])


@gen("vision.roi_align")
def g_roi_align(op):
    for x, rois, kw in roi_setups([1.0, 0.5, 0.25], 0):
        rois = rois.astype(x.dtype)
        yield Case(op, attrs_text(**kw), [x, rois], [roi_align_ref(x, rois, *roi_ref_args(kw))])
    try:
        import torch
        import torchvision
        for ratio, aligned in ((-1, False), (2, False), (0, False), (2, True), (0, True)):
            x = rand_float((2, 3, 9, 7), np.float32, specials=False)
            rois = rois_data(5, 2, 9, 7, np.float32, 0.5)
            ref = torchvision.ops.roi_align(torch.from_numpy(x), torch.from_numpy(rois), (3, 2), 0.5, ratio,
                                            aligned=aligned).numpy()
            kw = dict(pooled_size=[3, 2], spatial_scale=0.5, sample_ratio=ratio, aligned=aligned)
            yield Case(op, attrs_text(**kw), [x, rois], [ref], "tol", rtol=1e-5, scale=[np.abs(x).max()], atol=0.0)
    except ImportError:
        pass
    x = rand_float((2, 3, 4, 4), np.float32, specials=False)  # NaN and far-away ROIs, no ROIs
    rois = np.array([[0, np.nan, 0, 3, 3], [1, -1e9, -1e9, -1e9 + 1, -1e9]], np.float32)
    for mode in ("avg", "max"):
        yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0, sample_ratio=2, mode=mode), [x, rois],
                   [roi_align_ref(x, rois, 2, 2, 1.0, 2, mode, "NCHW")])
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [x, np.zeros((0, 5), np.float32)],
               [np.zeros((0, 3, 2, 2), np.float32)])
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [x, np.array([[1, 0, 0, np.inf, 2]], np.float32)],
               "roi 0 needs a sampling grid of")
    x = rand_float((1, 2, 4, 4), np.float32)
    rois = np.array([[1, 0, 0, 2, 2]], np.float32)
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [x, rois],
               "roi 0 has batch index 1, out of range for a batch of 1")
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0, mode="sum"), [x, rois], 'unknown mode "sum"')
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0, layout="CHWN"), [x, rois], 'unknown layout "CHWN"')
    yield Case(op, attrs_text(pooled_size=[2], spatial_scale=1.0), [x, rois], "pooled_size` must list 2 sizes")
    yield Case(op, attrs_text(pooled_size=[2, 2]), [x, rois], "missing attribute `spatial_scale`")
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [x, rois[:, :4]], "rois must have shape (num_rois, 5)")


def multibox_prior_ref(x, sizes, ratios, steps, offsets, clip):
    """The attributes are float32 literals (0.3f): their values are float32's."""
    sizes, ratios, steps, offsets = ([float(F32(v)) for v in a] for a in (sizes, ratios, steps, offsets))
    h, w = x.shape[2], x.shape[3]
    ns, nr = len(sizes), len(ratios)
    sh = F32(steps[0]) if steps[0] > 0 else F32(1.0 / h)
    sw = F32(steps[1]) if steps[1] > 0 else F32(1.0 / w)
    out = np.zeros((1, h * w * (ns + nr - 1), 4), F32)
    for i in range(h):
        cy = (F32(i) + F32(offsets[0])) * sh
        for j in range(w):
            cx = (F32(j) + F32(offsets[1])) * sw
            for k in range(ns + nr - 1):
                if k < ns:
                    hw, hh = F32(sizes[k] * h / w / 2.0), F32(sizes[k] / 2.0)
                else:
                    sq = np.sqrt(F32(ratios[k - ns + 1]))
                    hw = F32(sizes[0] * h / w) * sq / F32(2)
                    hh = F32(sizes[0]) / sq / F32(2)
                out[0, (i * w + j) * (ns + nr - 1) + k] = [cx - hw, cy - hh, cx + hw, cy + hh]
    if clip:
        out = np.where(out > 0, np.where(out < 1, out, F32(1)), F32(0))
    return out.astype(x.dtype)


@gen("vision.multibox_prior")
def g_multibox_prior(op):
    for sizes, ratios, steps, offsets, clip in (([1.0], [1.0], [-1.0, -1.0], [0.5, 0.5], False),
                                                ([0.3, 0.2, 0.1], [1.0, 2.0, 0.5], [-1.0, -1.0], [0.5, 0.5], True),
                                                ([0.5], [1.0, 3.0], [0.1, 0.2], [0.3, 0.7], False),
                                                ([0.2, 0.35], [2.0], [0.25, -1.0], [0.0, 1.0], True)):
        for dt in (np.float32, np.float64, np.float16):
            x = np.zeros((int(RNG.integers(1, 3)), 3, int(RNG.integers(1, 6)), int(RNG.integers(1, 6))), dt)
            a = "sizes=%s, ratios=%s, steps=%s, offsets=%s, clip=%s" % (flist(sizes), flist(ratios), flist(steps),
                                                                        flist(offsets), clip)
            yield Case(op, a, [x], [multibox_prior_ref(x, sizes, ratios, steps, offsets, clip)])
    x = np.zeros((1, 1, 2, 2), np.float32)
    yield Case(op, "", [x], [multibox_prior_ref(x, [1.0], [1.0], [-1.0, -1.0], [0.5, 0.5], False)])
    yield Case(op, "sizes=[0.5f, 0.2f]", [x], [multibox_prior_ref(x, [0.5, 0.2], [1.0], [-1.0, -1.0], [0.5, 0.5], False)])
    yield Case(op, "steps=[0.5f]", [x], "steps must have 2 entries (y, x), got 1")
    yield Case(op, "ratios=[]", [x], "ratios must not be empty")
    yield Case(op, 'sizes="big"', [x], "attribute `sizes` must be a list of numbers")
    yield Case(op, "", [np.zeros((1, 2, 2), np.float32)], "data must be a 4-D float tensor")


def roi_align_grad_ref(dy, x, rois, ph, pw, scale, ratio, mode, layout):
    """roi_align's adjoint of x, in float64: each bin's dy to its samples' pixels by their
    bilinear weights, shared equally (avg) or all to the last of the equal maxima (max)."""
    v = (x if layout == "NCHW" else np.transpose(x, (0, 3, 1, 2))).astype(np.float64)
    d = (dy if layout == "NCHW" else np.transpose(dy, (0, 3, 1, 2))).astype(np.float64)
    _, c, h, w = v.shape
    dx = np.zeros_like(v)

    def taps(y, xx):
        """[(weight, yp, xp)] of the pixels a sample reads."""
        if y < -1 or xx < -1 or y > h or xx > w:
            return []
        y, xx = min(max(y, 0.0), h - 1.0), min(max(xx, 0.0), w - 1.0)
        y0, x0 = int(np.floor(y)), int(np.floor(xx))
        return [(wy * wx, yp, xp) for wy, yp in ((1 - (y - y0), y0), (y - y0, y0 + 1))
                for wx, xp in ((1 - (xx - x0), x0), (xx - x0, x0 + 1)) if yp <= h - 1 and xp <= w - 1]

    for r in range(rois.shape[0]):
        ro = rois[r].astype(np.float64)
        b = int(ro[0])
        sw, sh, ew, eh = (ro[1:] * scale)
        rh, rw = max(eh - sh, 1.0), max(ew - sw, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else int(np.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(np.ceil(rw / pw))
        for py in range(ph):
            for px in range(pw):
                pts = [taps(sh + py * bh + (iy + 0.5) * bh / gh, sw + px * bw + (ix + 0.5) * bw / gw)
                       for iy in range(gh) for ix in range(gw)]
                for ch in range(c):
                    g = d[r, ch, py, px]
                    if mode == "avg":
                        for t in pts:
                            for wt, yp, xp in t:
                                dx[b, ch, yp, xp] += wt * g / len(pts)
                        continue
                    vals = [sum(wt * v[b, ch, yp, xp] for wt, yp, xp in t) for t in pts]
                    best = max(i for i in range(len(vals)) if vals[i] == max(vals))
                    for wt, yp, xp in pts[best]:
                        dx[b, ch, yp, xp] += wt * g
    if layout == "NHWC":
        dx = np.transpose(dx, (0, 2, 3, 1))
    return dx.astype(x.dtype)


@gen("vision.roi_align_grad")
def g_roi_align_grad(op):
    for x, rois, kw in roi_setups([1.0, 0.5], 1):
        rois, (ph, pw), c = rois.astype(x.dtype), kw["pooled_size"], 2
        dy = rand_float((len(rois), c, ph, pw) if kw["layout"] == "NCHW" else (len(rois), ph, pw, c), x.dtype,
                        specials=False)
        yield Case(op, attrs_text(**kw), [dy, x, rois], [roi_align_grad_ref(dy, x, rois, *roi_ref_args(kw))],
                   "tol", rtol=1e-5 if x.dtype == np.float32 else 1e-12, atol=0.0, scale=[np.abs(dy).sum()])
    x = rand_float((1, 2, 4, 4), np.float32, specials=False)
    rois = np.array([[0, 0.5, 0.5, 2.5, 3]], np.float32)
    dy = rand_float((1, 2, 2, 2), np.float32, specials=False)
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [dy[:, :1], x, rois],
               "must have the type of the op's result")
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [dy, x, np.array([[3, 0, 0, 2, 2]], np.float32)],
               "roi 0 has batch index 3, out of range for a batch of 1")
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [dy, x, np.zeros((0, 5), np.float32)],
               "must have the type of the op's result")
