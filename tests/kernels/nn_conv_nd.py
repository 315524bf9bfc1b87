"""More cases of nn.conv1d, nn.conv3d, nn.conv1d_transpose and
nn.conv2d_transpose, and the cases of nn.conv3d_transpose, for their compute rule (lower/compute/compute_conv_nd.c), run in
tests/kernels_numpy.py's namespace after nn.py (Case, GENERATORS, rand_of,
attrs_text and nn_tol_case come from there).

Rows longer than a vector, strides and dilations that skip taps, padding
wider than the kernel, groups and depthwise, the weight layouts of each
op, and every dtype the rule takes: float32 and float64 (sums in float64),
int32, int64 and int8 / uint8 operands with an integer out_dtype (sums
wrapping in the result's dtype: the edge values make them wrap).  The
references here are direct loops over the plain layouts in the
accumulator's dtype (int64 wraps modulo 2**64, so narrowing it gives the
result's wrapping sum); the float ones are held to nn_tol_case's bound.
Every case must run compiled in the jit mode (compiled=True).
"""


def cnd_conv(x, w, s, lo, d, groups, out_sp, acc):
    """N-d convolution, NC... data and OI... weight, summed in acc."""
    S = x.ndim - 2
    N, C = x.shape[:2]
    O, cg = w.shape[:2]
    og = O // groups
    out = np.zeros((N, O) + tuple(out_sp), dtype=acc)
    xa, wa = x.astype(acc), w.astype(acc)
    for o in range(O):
        g = o // og
        for t in np.ndindex(*w.shape[2:]):
            for p in np.ndindex(*out_sp):
                q = [p[i] * s[i] - lo[i] + t[i] * d[i] for i in range(S)]
                if all(0 <= q[i] < x.shape[2 + i] for i in range(S)):
                    out[(slice(None), o) + p] += xa[(slice(None), slice(g * cg, (g + 1) * cg)) + tuple(q)] @ \
                        wa[(o, slice(None)) + t]
    return out


def cnd_transposed(x, w, s, lo, d, groups, out_sp, acc):
    """Transposed convolution, NC... data, weight (C, O/groups, k...),
    summed in acc: every input element scattered through every tap."""
    S = x.ndim - 2
    N, C = x.shape[:2]
    og = w.shape[1]
    cg = C // groups
    out = np.zeros((N, og * groups) + tuple(out_sp), dtype=acc)
    xa, wa = x.astype(acc), w.astype(acc)
    for c in range(C):
        g = c // cg
        for t in np.ndindex(*w.shape[2:]):
            for p in np.ndindex(*x.shape[2:]):
                q = [p[i] * s[i] - lo[i] + t[i] * d[i] for i in range(S)]
                if all(0 <= q[i] < out_sp[i] for i in range(S)):
                    out[(slice(None), slice(g * og, (g + 1) * og)) + tuple(q)] += \
                        xa[(slice(None), c) + p][:, None] * wa[(c, slice(None)) + t][None, :]
    return out


def cnd_out(n, k, s, lo, hi, d, transpose, op=0):
    if transpose:
        return s * (n - 1) + d * (k - 1) + 1 - lo - hi + op
    return (n + lo + hi - (d * (k - 1) + 1)) // s + 1


def cnd_operands(dt, xshape, wshape, wdt=None):
    if dt in (np.float32, np.float64):
        return rand_of(xshape, dt, specials=False), rand_of(wshape, dt, specials=False)
    return rand_of(xshape, dt), rand_of(wshape, wdt or dt)


def cnd_case(op, kw, x, w, ref_fn, s, lo, hi, d, groups, out_sp, out_dt, perm=None):
    """The case of plain operands (x, w as the reference takes them);
    perm: (data axes, weight axes) of other layouts, applied to the
    operands and the result."""
    xi, wi = x, w
    if perm:
        xi, wi = np.ascontiguousarray(x.transpose(perm[0])), np.ascontiguousarray(w.transpose(perm[1]))
    if np.dtype(out_dt).kind == "f":
        ref = ref_fn(x, w, s, lo, d, groups, out_sp, np.float64)
        bound = ref_fn(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), s, lo, d, groups, out_sp,
                       np.float64)
        if perm:
            ref, bound = ref.transpose(perm[0]), bound.transpose(perm[0])
        c = nn_tol_case(op, attrs_text(**kw), [xi, wi], ref, out_dt, bound, k=4)
    else:
        ref = ref_fn(x, w, s, lo, d, groups, out_sp, np.int64).astype(out_dt)
        c = Case(op, attrs_text(**kw), [xi, wi], [ref.transpose(perm[0]) if perm else ref])
    c.compiled = True
    return c


# (dtype, weight dtype, out_dtype): every operand dtype the rule takes
CND_DTYPES = [(np.float32, None, None), (np.float64, None, None), (np.int32, None, None),
              (np.int64, None, None), (np.int8, np.uint8, "int32"), (np.uint8, np.uint8, "int64")]


def cnd_convnd(op):
    S = 1 if op == "nn.conv1d" else 3
    # (N, C, spatial, O, k, strides, lo, hi, dilation, groups)
    shapes = [(3, 4, [37], 6, [5], [3], [4], [1], [2], 2),
              (2, 4, [19], 8, [3], [1], [1], [1], [1], 4),
              (1, 2, [3], 3, [4], [2], [5], [6], [1], 1)] if S == 1 else \
             [(2, 3, [5, 6, 7], 4, [2, 3, 2], [2, 1, 3], [1, 0, 1], [2, 0, 1], [1, 2, 1], 1),
              (1, 3, [3, 4, 9], 6, [1, 2, 3], [1, 1, 1], [0, 1, 0], [0, 1, 2], [1, 1, 2], 3)]
    for i, (dt, wdt, odt) in enumerate(CND_DTYPES):
        N, C, sp, O, k, s, lo, hi, d, g = shapes[i % len(shapes)]
        x, w = cnd_operands(dt, (N, C) + tuple(sp), (O, C // g) + tuple(k), wdt)
        out_sp = [cnd_out(sp[j], k[j], s[j], lo[j], hi[j], d[j], False) for j in range(S)]
        kw = dict(strides=s, padding=lo + hi, dilation=d, groups=g)
        if odt:
            kw["out_dtype"] = odt
        yield cnd_case(op, kw, x, w, cnd_conv, s, lo, hi, d, g, out_sp, np.dtype(odt or dt))
    # a layout with the channels last and the weight (O, spatial..., I)
    dl, kl = ("NWC", "OWI") if S == 1 else ("NDHWC", "ODHWI")
    xperm = [0] + list(range(2, 2 + S)) + [1]
    x, w = cnd_operands(np.float64, (2, 3) + (6,) * S, (4, 3) + (2,) * S)
    kw = dict(padding=[1] * S, data_layout=dl, kernel_layout=kl)
    yield cnd_case(op, kw, x, w, cnd_conv, [1] * S, [1] * S, [1] * S, [1] * S, 1, [7] * S, np.float64,
                   (xperm, xperm))


def cnd_conv_transpose(op):
    S = {"nn.conv1d_transpose": 1, "nn.conv2d_transpose": 2, "nn.conv3d_transpose": 3}[op]
    # (N, C, spatial, O/groups, k, strides, lo, hi, dilation, output_padding, groups)
    shapes = [(2, 4, [13], 3, [4], [3], [2], [1], [2], [1], 2),
              (1, 3, [9], 2, [3], [1], [0], [0], [1], [0], 1),
              (2, 4, [5], 1, [2], [2], [3], [3], [3], [2], 4)] if S == 1 else \
             [(2, 4, [5, 6], 3, [3, 2], [2, 3], [1, 0], [2, 1], [2, 1], [1, 2], 2),
              (1, 3, [4, 7], 2, [2, 4], [1, 2], [0, 2], [1, 0], [1, 1], [0, 1], 1),
              (1, 4, [3, 3], 1, [3, 3], [3, 2], [2, 1], [1, 2], [1, 2], [2, 1], 4)] if S == 2 else \
             [(1, 4, [3, 4, 2], 3, [2, 3, 2], [2, 1, 2], [1, 0, 0], [0, 1, 1], [1, 2, 1], [1, 0, 1], 2),
              (2, 3, [2, 3, 3], 2, [3, 2, 2], [1, 2, 1], [0, 1, 0], [1, 0, 0], [2, 1, 1], [0, 1, 0], 1)]
    for i, (dt, wdt, odt) in enumerate(CND_DTYPES):
        N, C, sp, og, k, s, lo, hi, d, opad, g = shapes[i % len(shapes)]
        x, w = cnd_operands(dt, (N, C) + tuple(sp), (C, og) + tuple(k), wdt)  # (C, O/groups, k)
        out_sp = [cnd_out(sp[j], k[j], s[j], lo[j], hi[j], d[j], True, opad[j]) for j in range(S)]
        kw = dict(strides=s, padding=lo + hi, dilation=d, output_padding=opad, groups=g)
        if odt:
            kw["out_dtype"] = odt
        # the weight as each layout holds it: (C, O/g, k) is OIW and IOHW
        other = i % 2 == 1
        if other:
            kw["kernel_layout"] = {1: "IOW", 2: "OIHW", 3: "OIDHW"}[S]
        elif S > 1:
            kw["kernel_layout"] = "IOHW" if S == 2 else "IODHW"
        wperm = [1, 0] + list(range(2, 2 + S)) if other else None
        c = cnd_case(op, kw, x, w, cnd_transposed, s, lo, hi, d, g, out_sp, np.dtype(odt or dt))
        if wperm:
            c.inputs[1] = np.ascontiguousarray(w.transpose(wperm))
        yield c


for _op in ("nn.conv1d", "nn.conv3d"):
    nn_extend(_op, cnd_convnd)
for _op in ("nn.conv1d_transpose", "nn.conv2d_transpose"):
    nn_extend(_op, cnd_conv_transpose)
GENERATORS["nn.conv3d_transpose"] = (cnd_conv_transpose, "nn.conv3d_transpose")
