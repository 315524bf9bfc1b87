"""Cases of the blocked convolution nn.contrib_conv2d_NCHWc and more cases of
nn.conv2d for its blocked schedule (run in tests/kernels_numpy.py's
namespace: Case, @gen, rand_float, attrs_text, GENERATORS come from there).

References are float64 numpy convolutions (a sum of shifted slices) of the
unblocked operands, blocked afterwards: data NCHW -> NCHW<c>c is
x.reshape(N, C/c, c, H, W).transpose(0, 1, 3, 4, 2), weights OIHW ->
OIHW<i>i<o>o is w.reshape(O/o, o, C/i, i, KH, KW).transpose(0, 2, 4, 5, 3, 1).

Tolerance: the compiled kernels accumulate in the operands' dtype (float32
sums of n = C/groups * KH * KW products, in another order than the reference
kernel's float64 sums), so a result may be off by the worst-case bound of a
float sum of n terms, (n + 1) * eps * sum |x| |w| (bound: the convolution of
|x| and |w|); the reference kernel is far closer than that.
"""


def cb_conv_ref(x, w, s, p, d, groups):
    """NCHW / OIHW convolution in float64; p = [top, left, bottom, right]."""
    N, C, H, W = x.shape
    O, cg, KH, KW = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])])
    OH = (xp.shape[2] - (d[0] * (KH - 1) + 1)) // s[0] + 1
    OW = (xp.shape[3] - (d[1] * (KW - 1) + 1)) // s[1] + 1
    out = np.zeros((N, O, OH, OW))
    og = O // groups
    for a in range(KH):
        for b in range(KW):
            patch = xp[:, :, a * d[0]:a * d[0] + s[0] * (OH - 1) + 1:s[0],
                       b * d[1]:b * d[1] + s[1] * (OW - 1) + 1:s[1]]
            for g in range(groups):
                xs = patch[:, g * cg:(g + 1) * cg]
                ws = w[g * og:(g + 1) * og, :, a, b]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", xs, ws)
    return out


def cb_block_data(x, c):
    N, C, H, W = x.shape
    return np.ascontiguousarray(x.reshape(N, C // c, c, H, W).transpose(0, 1, 3, 4, 2))


def cb_block_weight(w, i, o):
    O, I, KH, KW = w.shape
    return np.ascontiguousarray(w.reshape(O // o, o, I // i, i, KH, KW).transpose(0, 2, 4, 5, 3, 1))


def cb_tol(op, attrs, inputs, ref, bound, dt, terms):
    eps = float(np.finfo(dt).eps)
    return Case(op, attrs, inputs, [np.asarray(ref).astype(dt)], "tol", rtol=(terms + 1) * eps,
                scale=[bound], atol=float(np.finfo(dt).tiny))


# (N, C, H, W, O, KH, KW, strides, padding, dilation, groups, cb, ib, ob)
CB_SHAPES = [
    (1, 16, 9, 9, 32, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, 16, 16, 16),  # 3x3, padded
    (2, 8, 10, 17, 16, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 1, 8, 8, 16),  # strided, leftover tile
    (1, 16, 12, 12, 16, 3, 3, [1, 1], [2, 2, 2, 2], [2, 2], 1, 16, 4, 8),  # dilated, ib != cb
    (1, 32, 7, 7, 16, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1, 16, 16, 16),  # 1x1 (a product)
    (1, 3, 11, 11, 16, 7, 7, [2, 2], [3, 3, 3, 3], [1, 1], 1, 3, 3, 16),  # first layer, 3 channels
    (1, 16, 9, 8, 16, 3, 3, [1, 1], [1, 0, 2, 1], [1, 1], 16, 16, 1, 16),  # depthwise, asymmetric
    (1, 32, 14, 14, 32, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 32, 8, 1, 8),  # depthwise, strided
    # 3x3, stride 1, padding 1 with more 2x2 tiles than channels: the Winograd F(2x2, 3x3) schedule
    (1, 16, 10, 12, 32, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, 16, 16, 16),
    (2, 8, 8, 30, 16, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1, 8, 8, 16),  # a leftover register tile
    # depthwise on rows of several tiles: interior tiles read the input in place, edge tiles guarded
    (1, 16, 5, 45, 16, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 16, 16, 1, 16),
    (1, 16, 9, 61, 16, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 16, 16, 1, 16),
    (1, 16, 7, 50, 16, 5, 5, [1, 2], [2, 1, 2, 3], [1, 2], 16, 16, 1, 16),
    # an output block wider than a vector register (AlterOpLayout's 24 channels with AVX-512):
    # lanes in loops of one register each, a narrower tile
    (1, 32, 6, 21, 24, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1, 16, 16, 24),
    (1, 24, 7, 9, 48, 3, 3, [2, 1], [1, 1, 1, 1], [1, 1], 1, 24, 24, 24),
    # grouped: blocks of several whole groups (block-diagonal weights), a group over whole blocks,
    # the data's block other than the weight's input block, 8-lane blocks of 104 channels
    (1, 32, 9, 9, 32, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 8, 16, 4, 16),
    (1, 64, 11, 11, 64, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 2, 16, 16, 16),
    (1, 48, 7, 13, 48, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 3, 8, 16, 16),
    (2, 104, 6, 6, 104, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 13, 8, 8, 8),
    (1, 24, 8, 8, 48, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 6, 8, 4, 16),
]


@gen("nn.contrib_conv2d_NCHWc")
def g_conv2d_nchwc(op):
    for dt in (np.float32, np.float64):
        for N, C, H, W, O, KH, KW, s, p, d, g, cb, ib, ob in CB_SHAPES:
            x = rand_float((N, C, H, W), dt, specials=False)
            w = rand_float((O, C // g, KH, KW), dt, specials=False)
            ref = cb_conv_ref(x.astype(np.float64), w.astype(np.float64), s, p, d, g)
            bound = cb_conv_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, p, d, g)
            attrs = attrs_text(strides=s, padding=p, dilation=d, groups=g, channels=O,
                               kernel_size=[KH, KW], data_layout="NCHW%dc" % cb,
                               kernel_layout="OIHW%di%do" % (ib, ob), out_layout="NCHW%dc" % ob)
            yield cb_tol(op, attrs, [cb_block_data(x, cb), cb_block_weight(w, ib, ob)],
                         cb_block_data(ref, ob), cb_block_data(bound, ob), dt, C // g * KH * KW)
    x = cb_block_data(rand_float((1, 16, 5, 5), np.float32), 16)
    w = cb_block_weight(rand_float((16, 16, 3, 3), np.float32), 16, 16)
    yield Case(op, 'data_layout="NCHW"', [x, w], "data_layout NCHW is not NCHW<n>c")
    yield Case(op, 'kernel_layout="OIHW16o16i"', [x, w], "is not OIHW<n>i<m>o")
    yield Case(op, 'data_layout="NCHW8c"', [x, w], "the channel block of")
    yield Case(op, 'out_layout="NCHW8c"', [x, w], "out_layout NCHW8c is not NCHW16c")
    yield Case(op, 'groups=2', [x, w], "groups=2 needs data channels and output channels")
    yield Case(op, '', [x, cb_block_weight(rand_float((16, 32, 3, 3), np.float32), 16, 16)],
               "has 16 channels but weight")
    yield Case(op, 'channels=32', [x, w], "channels=32 but the weight")
    # the layout_transform of weights the AlterOpLayout pass folds
    wp = rand_float((32, 8, 3, 3), np.float32)
    yield Case("layout_transform", attrs_text(src_layout="OIHW", dst_layout="OIHW4i16o"), [wp],
               [cb_block_weight(wp, 4, 16)])
    yield Case("layout_transform", attrs_text(src_layout="OIHW4i16o", dst_layout="OIHW"),
               [cb_block_weight(wp, 4, 16)], [wp])


def cb_conv2d_more(op):
    """nn.conv2d shapes for its blocked schedule in the jit mode: channel
    counts that are not a multiple of the vector width (a partial last
    block), rows longer than a tile and with a leftover tile, strides,
    dilation, 1x1, depthwise with a partial block, batch 2."""
    for dt in (np.float32, np.float64):
        for N, C, H, W, O, KH, KW, s, p, d, g in [
                (2, 5, 9, 31, 20, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
                (1, 24, 15, 15, 24, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 24),
                (1, 20, 10, 10, 20, 3, 3, [1, 1], [2, 2, 2, 2], [2, 2], 20),
                (1, 40, 6, 19, 36, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1),
                (1, 8, 13, 13, 16, 5, 3, [2, 1], [0, 1, 2, 1], [1, 2], 1),
                (1, 64, 9, 17, 64, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 16),  # grouped, 4 per group
                (1, 40, 8, 8, 40, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 5),  # 8 per group, 40 lanes
                (1, 36, 7, 7, 72, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 3)]:  # 12 in, 24 out
            x = rand_float((N, C, H, W), dt, specials=False)
            w = rand_float((O, C // g, KH, KW), dt, specials=False)
            ref = cb_conv_ref(x.astype(np.float64), w.astype(np.float64), s, p, d, g)
            bound = cb_conv_ref(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, p, d, g)
            attrs = attrs_text(strides=s, padding=p, dilation=d, groups=g)
            yield cb_tol(op, attrs, [x, w], ref, bound, dt, C // g * KH * KW)


cb_base = GENERATORS["nn.conv2d"][0]


def cb_conv2d_all(name):
    yield from cb_base(name)
    yield from cb_conv2d_more(name)


GENERATORS["nn.conv2d"] = (cb_conv2d_all, "nn.conv2d")
