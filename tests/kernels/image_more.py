"""More cases of image.crop_and_resize and dyn.image.resize2d for their
compute rules (lower/compute/compute_image_crop.c, compute_dyn_index.c), run in
tests/kernels_numpy.py's namespace after image.py (Case, RsSpec,
resize_ref, crop_ref, rs_shape, rs_attrs, F32 come from there).

crop_and_resize: every method and both layouts on float32, float64 and
int32 data, float64 boxes and int64 indices, crops larger than the image,
boxes partly and wholly outside it, and a box index outside the batch on a
box that samples nothing (an error in both modes: the kernel checks every
index first).  dyn.image.resize2d with a constant size (so the type knows
the result): every method and coordinate mode (tf_crop_and_resize with a
constant roi too), including nearest "asymmetric", which unlike
image.resize2d's never takes the integer-division form.
Each case the rules take must run compiled."""


def im_crop(op):
    for dt, bdt, idt in [(np.float32, np.float32, np.int32), (np.float64, np.float64, np.int64),
                         (np.int32, np.float32, np.int64)]:
        for method in ("bilinear", "nearest_neighbor", "cubic"):
            for layout in ("NCHW", "NHWC"):
                x = rand_of(rs_shape(layout, 3, 2, [5, 7]), dt, specials=False)
                boxes = np.array([[0.1, 0.2, 0.9, 0.6], [-0.5, -0.25, 1.5, 1.25], [0.3, 0.3, 0.3, 0.8],
                                  [1.5, 1.2, 2.0, 2.5]], bdt)
                bix = np.array([2, 0, 1, 2], idt)
                kw = dict(crop_size=[6, 9], layout=layout, method=method, extrapolation_value=-2.0)
                ref = crop_ref(x, boxes.astype(F32), bix, [6, 9], layout, method, -2.0)
                yield Case(op, attrs_text(**kw), [x, boxes, bix], [ref], compiled=True)
    x = rand_float((2, 3, 4, 4), np.float32)
    boxes = np.array([[0, 0, 1, 1], [2.0, 2.0, 3.0, 3.0]], F32)
    yield Case(op, attrs_text(crop_size=[2, 2]), [x, boxes, np.array([0, 5], np.int32)],
               "box 1 has box index 5, out of range for a batch of 2")


def im_dyn_resize2d(op):
    for method in ("nearest_neighbor", "linear", "cubic"):
        for coord in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"):
            s = RsSpec(method, coord, "round")
            x = rand_float((2, 3, 5, 4), np.float32, specials=False)
            size = [9, 3]
            yield Case(op, rs_attrs([], s, "NCHW").replace("size=[], ", ""),
                       [x, np.array(size, np.int64), np.zeros(4, np.float32)],
                       [resize_ref(x, size, "NCHW", s)], consts=[1], compiled=True)
    for method in ("nearest_neighbor", "linear", "cubic"):  # a constant roi gives the crop's coordinates
        s = RsSpec(method, "tf_crop_and_resize", "round", extrap=-3.5)
        x = rand_float((2, 3, 5, 4), np.float32, specials=False)
        roi = [float(F32(v)) for v in (-0.25, 0.125, 0.8, 1.3)]
        yield Case(op, rs_attrs([], s, "NCHW").replace("size=[], ", ""),
                   [x, np.array([6, 7], np.int64), np.array(roi, np.float32)],
                   [resize_ref(x, [6, 7], "NCHW", s, roi)], consts=[1, 2], compiled=True)
    x = rand_float((1, 1, 3, 3), np.float32)
    s = RsSpec("nearest_neighbor", "asymmetric", "round")
    yield Case(op, rs_attrs([], s, "NHWC").replace("size=[], ", ""),
               [np.transpose(x, (0, 2, 3, 1)), np.array([6, 9], np.int32), np.zeros(4, np.float32)],
               [np.transpose(resize_ref(x, [6, 9], "NCHW", s), (0, 2, 3, 1))], consts=[1], compiled=True)


def im_extend(op, extra):
    base = GENERATORS[op][0]

    def g(name):
        yield from base(name)
        yield from extra(name)
    GENERATORS[op] = (g, op)


im_extend("image.crop_and_resize", im_crop)
im_extend("dyn.image.resize2d", im_dyn_resize2d)
