"""More cases of vision.roi_align for its compute rule (lower/compute/compute_vision.c),
run in tests/kernels_numpy.py's namespace after vision.py (Case, GENERATORS,
rand_float, attrs_text, roi_align_ref, rois_data come from there): float32
data with float64 rois (computed in float64), larger images and pooled
sizes with adaptive grids, fractional batch indices (truncated), and a
ROI with a grid too large after a valid one.  Each case but the error
must run compiled."""


def va_roi_align(op):
    for xdt, rdt in ((np.float32, np.float64), (np.float64, np.float32), (np.float32, np.float32)):
        for mode, layout, ratio in (("avg", "NCHW", 0), ("max", "NHWC", 3), ("avg", "NHWC", -1)):
            n, c, h, w = 3, 4, 13, 11
            x = rand_float((n, c, h, w) if layout == "NCHW" else (n, h, w, c), xdt, specials=False)
            rois = rois_data(6, n, h, w, rdt, 0.5)
            rois[:, 0] += np.array([0.25, 0.5, 0.75, 0.0, 0.9, 0.1], rdt)  # truncated to the image
            kw = dict(pooled_size=[4, 3], spatial_scale=0.5, sample_ratio=ratio, mode=mode, layout=layout)
            yield Case(op, attrs_text(**kw), [x, rois], [roi_align_ref(x, rois, 4, 3, 0.5, ratio, mode, layout)],
                       compiled=True)
    x = rand_float((2, 3, 4, 4), np.float32, specials=False)
    rois = np.array([[1, 0, 0, 2, 2], [0, 0, 0, 1e6, 1e6]], np.float32)
    yield Case(op, attrs_text(pooled_size=[2, 2], spatial_scale=1.0), [x, rois], "roi 1 needs a sampling grid of")


va_base = GENERATORS["vision.roi_align"][0]


def va_all(name):
    yield from va_base(name)
    yield from va_roi_align(name)


GENERATORS["vision.roi_align"] = (va_all, "vision.roi_align")
