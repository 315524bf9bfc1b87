#!/usr/bin/python3
"""gradient_torch.py — every op gradient of the registry against central
finite differences (float64) and against PyTorch's autograd.

Usage: /usr/bin/python3 tests/gradient_torch.py PATH/TO/rly [-v] [--only NAME,...]

For each case, an rly function of float64 inputs
    def @f(%a, %b, ..., %r) { sum(multiply(EXPR, %r)) }
(%r a random weight of EXPR's shape, so every output element counts) goes
through `:pass Gradient @f`; @f_grad runs on random inputs in both execution
modes and its gradients are compared with
  * torch.autograd on the same function in float64 (rtol 1e-9, atol 1e-12),
  * central differences of rly's own @f in the interpreter (h = 1e-6 · max(1, |x|);
    rtol 1e-5, atol 1e-7).
A case may loosen these (F32 below: ops computing in float32).
Inputs are drawn away from the ops' kinks (relu at 0, abs at 0, clip's bounds,
ties of max/min).  Every op with a gradient rule in the registry
(`rly --list-ops`: yes, or zero for an op constant almost everywhere in its
float operands) must have a case here, so a new rule cannot go untested; a
zero op's case differentiates a function through it.
Prints "gradients: N passed, N failed" and exits non-zero on any failure.
"""
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

F = torch.nn.functional


def T(*shape):
    return ("t", shape)


def POS(*shape):  # positive, away from 0
    return ("pos", shape)


def AWAY(*shape):  # |x| >= 0.2
    return ("away", shape)


def ZERO1(*shape):  # one element 0
    return ("zero1", shape)


def ZEROS(*shape):  # normal, every third element (from the second) exactly 0
    return ("zeros", shape)


def SMALL(*shape):  # |x| <= 0.8
    return ("small", shape)


def PROB(*shape):  # rows of probabilities
    return ("prob", shape)


def CONST(value):  # a non-differentiated input, written into the function
    return ("const", value)


def draw(kind, shape, rng):
    return np.asarray(draw_values(kind, shape, rng), dtype=np.float64)


def draw_values(kind, shape, rng):
    if kind == "t":
        return rng.normal(0, 1, shape)
    if kind == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if kind == "zero1":  # normal, its first element exactly 0
        x = rng.normal(0, 1, shape)
        x.flat[0] = 0
        return x
    if kind == "zeros":
        x = rng.normal(0, 1, shape)
        x.flat[1::3] = 0
        return x
    if kind == "away":
        return rng.choice([-1, 1], shape) * rng.uniform(0.2, 1.5, shape)
    if kind == "small":
        return rng.uniform(-0.8, 0.8, shape)
    if kind == "prob":
        x = rng.uniform(0.1, 1.0, shape)
        return x / x.sum(axis=-1, keepdims=True)
    raise ValueError(kind)


def nll(t, reduction="mean", ignore=-100):
    """nn.nll_loss with targets t, differentiable in the weights too (torch's is not)."""
    def f(a, w):
        t_ = torch.tensor(t)
        valid = t_ != ignore
        tc = torch.where(valid, t_, torch.zeros_like(t_))
        wt = w[tc] * valid
        loss = -a.gather(1, tc.unsqueeze(1)).squeeze(1) * wt
        if reduction == "none":
            return loss
        return loss.sum() / (wt.sum() if reduction == "mean" else 1)
    return f


def np_pad(pw, mode):
    """numpy's padding modes (edge, reflect, symmetric) as gathers along each axis."""
    def f(a):
        for axis, (lo, hi) in enumerate(pw):
            idx = np.pad(np.arange(a.shape[axis]), (lo, hi), mode=mode)
            a = a.index_select(axis, torch.tensor(idx))
        return a
    return f


def pad_const(pads):
    return lambda a, b: F.pad(a, pads) + b * F.pad(torch.zeros_like(a), pads, value=1.0)


def d2s(bs, crd):
    def f(a):
        n, c, h, w = a.shape
        if crd:
            return a.reshape(n, c // bs ** 2, bs, bs, h, w).permute(0, 1, 4, 2, 5, 3) \
                .reshape(n, c // bs ** 2, h * bs, w * bs)
        return a.reshape(n, bs, bs, c // bs ** 2, h, w).permute(0, 3, 4, 1, 5, 2) \
            .reshape(n, c // bs ** 2, h * bs, w * bs)
    return f


def s2d(bs):
    def f(a):
        n, c, h, w = a.shape
        return a.reshape(n, c, h // bs, bs, w // bs, bs).permute(0, 3, 5, 1, 2, 4) \
            .reshape(n, bs * bs * c, h // bs, w // bs)
    return f


def dilated(strides):
    def f(a):
        shape = [(d - 1) * s + 1 for d, s in zip(a.shape, strides)]
        out = a.new_zeros(shape)
        out[tuple(slice(None, None, s) for s in strides)] = a
        return out
    return f


def np_slice(*slices):
    """a[slices] (numpy's, negative steps too) as gathers."""
    def f(a):
        for axis, sl in enumerate(slices):
            a = a.index_select(axis, torch.tensor(np.arange(a.shape[axis])[sl].copy()))
        return a
    return f


def rev_seq(lengths):
    def f(a):
        idx = np.array([list(range(n - 1, -1, -1)) + list(range(n, a.shape[1])) for n in lengths])
        return a.gather(1, torch.tensor(idx))
    return f


def same(expr):
    """A function through op expression `expr` of %a whose result does not
    change the value: where(all(expr == expr), %a, %b)."""
    return "where(all(equal(%s, %s)), %%a, %%b)" % (expr, expr)


def crop_resize(boxes, ind, ch, cw):
    """image.crop_and_resize (bilinear, boxes inside the image) by grid_sample."""
    def f(a):
        out = []
        for (y1, x1, y2, x2), i in zip(boxes, ind):
            ys = 2 * (y1 + torch.arange(ch, dtype=a.dtype) * (y2 - y1) / (ch - 1)) - 1
            xs = 2 * (x1 + torch.arange(cw, dtype=a.dtype) * (x2 - x1) / (cw - 1)) - 1
            gy, gx = torch.meshgrid(ys, xs, indexing="ij")
            grid = torch.stack((gx, gy), -1)[None]
            out.append(F.grid_sample(a[i:i + 1], grid, align_corners=True))
        return torch.cat(out)
    return f


def scatter_last(axis, idx):
    """scatter along axis, written update by update in row-major order, so the
    last of several at one position stays (rly's kernel; only it gets dy)."""
    def f(a, b):
        out = a.clone()
        for u in np.ndindex(*np.shape(idx)):
            pos = list(u)
            pos[axis] = idx[u[0]][u[1]] if len(u) == 2 else idx[u[0]]
            out[tuple(pos)] = b[u]
        return out
    return f


def scatter_nd_last(idx):
    """scatter_nd with mode update, index tuple by index tuple (the last stays)."""
    def f(a, b):
        out = a.clone()
        idx_ = np.asarray(idx)
        for y in range(idx_.shape[1]):
            out[tuple(int(v) for v in idx_[:, y])] = b[y]
        return out
    return f


def grid_sample_t(method, padding, align, nsp=2, scale=1.7):
    """image.grid_sample with rly's grid layout (N, 2|3, ...), the grid scaled by `scale`."""
    def f(a, b):
        g = (b * scale).permute(0, *range(2, 2 + nsp), 1)
        return F.grid_sample(a, g, mode=method, padding_mode=padding, align_corners=align)
    return f


def roi_bilinear(img, y, x):
    """TVM's (and torchvision's) bilinear sample of img (C, H, W) at (y, x)."""
    _, h, w = img.shape
    if y < -1 or x < -1 or y > h or x > w:
        return img.new_zeros(img.shape[0])
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    ly, lx = y - y0, x - x0
    v = img.new_zeros(img.shape[0])
    for yp, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xp, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yp < h and 0 <= xp < w:
                v = v + wy * wx * img[:, yp, xp]
    return v


def roi_align_t(rois, ph, pw, scale, ratio, mode="avg", layout="NCHW"):
    """vision.roi_align (aligned=False, as torchvision's) in torch ops."""
    def f(a):
        x = a if layout == "NCHW" else a.permute(0, 3, 1, 2)
        out = []
        for r in rois:
            b, sw, sh, ew, eh = r[0], r[1] * scale, r[2] * scale, r[3] * scale, r[4] * scale
            rh, rw = max(eh - sh, 1.0), max(ew - sw, 1.0)
            bh, bw = rh / ph, rw / pw
            gh = ratio if ratio > 0 else int(math.ceil(rh / ph))
            gw = ratio if ratio > 0 else int(math.ceil(rw / pw))
            bins = []
            for py in range(ph):
                for px in range(pw):
                    smp = torch.stack([roi_bilinear(x[int(b)], sh + py * bh + (iy + 0.5) * bh / gh,
                                                    sw + px * bw + (ix + 0.5) * bw / gw)
                                       for iy in range(gh) for ix in range(gw)])
                    bins.append(smp.mean(0) if mode == "avg" else smp.max(0).values)
            out.append(torch.stack(bins, 1).reshape(-1, ph, pw))
        y = torch.stack(out)
        return y if layout == "NCHW" else y.permute(0, 2, 3, 1)
    return f


def box_iou(a, b):
    al, at, ar, ab = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    bl, bt, br, bb = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    w, h = max(0.0, min(ar, br) - max(al, bl)), max(0.0, min(ab, bb) - max(at, bt))
    u = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - w * h
    return 0.0 if u <= 0 else w * h / u


def nms_rows(d, vc, thr):
    """TVM's non_max_suppression (force_suppress, score column 1, boxes from column 2, no top_k)
    of one batch entry's rows d: the source row of each result row, -1 for a row of -1s."""
    order = sorted(range(vc), key=lambda j: -d[j][1])
    src = list(order) + [-1] * (len(d) - vc)
    for j in range(vc):
        if d[src[j]][1] > 0 and any(src[q] >= 0 and d[src[q]][1] > 0 and
                                    box_iou(d[src[j]][2:6], d[src[q]][2:6]) >= thr
                                    for q in range(j)):
            src[j] = -1
    return src


def rows_from(a, src):
    """a's rows (batch entry 0) at src, -1 rows where src is -1."""
    rows = [a[0, j] if j >= 0 else -torch.ones_like(a[0, 0]) for j in src]
    return torch.stack(rows)[None]


def nms_t(vc, thr):
    def f(a):
        return rows_from(a, nms_rows(a.detach().numpy()[0], vc, thr))
    return f


def valid_rows(a, thr):
    """vision.get_valid_counts' rows: those with a score (column 1) above thr and a class id
    (column 0) not negative, in order."""
    d = a.detach().numpy()[0]
    keep = [j for j in range(len(d)) if d[j][1] > thr and d[j][0] >= 0]
    return keep + [-1] * (len(d) - len(keep))


def nms_after_valid(score_thr, iou_thr):
    """get_valid_counts then non_max_suppression on its rows."""
    def f(a):
        keep = valid_rows(a, score_thr)
        moved = rows_from(a, keep)
        src = nms_rows(moved.detach().numpy()[0], sum(j >= 0 for j in keep), iou_thr)
        return rows_from(moved, src)
    return f


def mm(ta, tb):
    return lambda a, b: (a.T if ta else a) @ (b.T if tb else b)


# The resampling ops compute in float32 whatever the dtype (as TVM's TOPI does; affine_grid's
# grid coordinates and qnn.dequantize's scales are float32 too): their
# cases compare with torch within float32's precision, and since they are linear, central
# differences with a large step are exact up to that rounding.
F32 = dict(h=0.1, rtol=1e-5, atol=1e-6, fd_rtol=1e-4, fd_atol=1e-5)

# (case name, rly op name, rly expression over %a, %b, ..., inputs, torch function[,
# tolerances])
CASES = [
    ("add", "add", "add(%a, %b)", [T(2, 3), T(3)], lambda a, b: a + b),
    ("add_bcast", "add", "add(%a, %b)", [T(2, 1), T(1, 3)], lambda a, b: a + b),
    ("subtract", "subtract", "subtract(%a, %b)", [T(4, 3), T(4, 1)], lambda a, b: a - b),
    ("multiply", "multiply", "multiply(%a, %b)", [T(2, 3), T(2, 3)], lambda a, b: a * b),
    ("divide", "divide", "divide(%a, %b)", [T(2, 3), POS(3)], lambda a, b: a / b),
    ("power", "power", "power(%a, %b)", [POS(2, 3), T(2, 3)], torch.pow),
    ("maximum", "maximum", "maximum(%a, %b)", [T(2, 3), T(2, 3)], torch.maximum),
    ("minimum", "minimum", "minimum(%a, %b)", [T(2, 3), T(3)], torch.minimum),
    ("floor_divide", "floor_divide", "add(floor_divide(%a, 0.7f64), %a)", [AWAY(5)],
     lambda a: torch.floor(a / 0.7) + a),
    ("trunc_divide", "trunc_divide", "add(trunc_divide(%a, 0.7f64), %a)", [AWAY(5)],
     lambda a: torch.trunc(a / 0.7) + a),
    ("mod", "mod", "mod(%a, %b)", [T(2, 4), AWAY(4)], torch.fmod),
    ("trunc_mod", "trunc_mod", "trunc_mod(%a, %b)", [T(5), AWAY(5)], torch.fmod),
    ("floor_mod", "floor_mod", "floor_mod(%a, %b)", [T(3, 2), AWAY(3, 1)], torch.remainder),
    ("where", "where", "where(greater(%a, 0f64), %a, %b)", [AWAY(2, 3), T(3)],
     lambda a, b: torch.where(a > 0, a, b)),
    ("negative", "negative", "negative(%a)", [T(2, 3)], torch.neg),
    ("abs", "abs", "abs(%a)", [AWAY(2, 3)], torch.abs),
    ("exp", "exp", "exp(%a)", [T(2, 3)], torch.exp),
    ("log", "log", "log(%a)", [POS(2, 3)], torch.log),
    ("log2", "log2", "log2(%a)", [POS(4)], torch.log2),
    ("log10", "log10", "log10(%a)", [POS(4)], torch.log10),
    ("sqrt", "sqrt", "sqrt(%a)", [POS(2, 3)], torch.sqrt),
    ("rsqrt", "rsqrt", "rsqrt(%a)", [POS(2, 3)], torch.rsqrt),
    ("tanh", "tanh", "tanh(%a)", [T(2, 3)], torch.tanh),
    ("sigmoid", "sigmoid", "sigmoid(%a)", [T(2, 3)], torch.sigmoid),
    ("erf", "erf", "erf(%a)", [T(2, 3)], torch.erf),
    ("sin", "sin", "sin(%a)", [T(5)], torch.sin),
    ("cos", "cos", "cos(%a)", [T(5)], torch.cos),
    ("tan", "tan", "tan(%a)", [SMALL(5)], torch.tan),
    ("sinh", "sinh", "sinh(%a)", [T(5)], torch.sinh),
    ("cosh", "cosh", "cosh(%a)", [T(5)], torch.cosh),
    ("asin", "asin", "asin(%a)", [SMALL(5)], torch.asin),
    ("acos", "acos", "acos(%a)", [SMALL(5)], torch.acos),
    ("atan", "atan", "atan(%a)", [T(5)], torch.atan),
    ("asinh", "asinh", "asinh(%a)", [T(5)], torch.asinh),
    ("acosh", "acosh", "acosh(add(%a, 1f64))", [POS(5)], lambda a: torch.acosh(a + 1)),
    ("atanh", "atanh", "atanh(%a)", [SMALL(5)], torch.atanh),
    ("fast_exp", "fast_exp", "fast_exp(%a)", [T(5)], torch.exp),
    ("fast_tanh", "fast_tanh", "fast_tanh(%a)", [T(5)], torch.tanh),
    ("fast_erf", "fast_erf", "fast_erf(%a)", [T(5)], torch.erf),
    ("floor", "floor", "add(floor(%a), %a)", [AWAY(5)], lambda a: torch.floor(a) + a),
    ("ceil", "ceil", "add(ceil(%a), %a)", [AWAY(5)], lambda a: torch.ceil(a) + a),
    ("round", "round", "add(round(%a), %a)", [AWAY(5)], lambda a: torch.round(a) + a),
    ("trunc", "trunc", "add(trunc(%a), %a)", [AWAY(5)], lambda a: torch.trunc(a) + a),
    ("sign", "sign", "multiply(sign(%a), %a)", [AWAY(5)], lambda a: torch.sign(a) * a),
    ("copy", "copy", "copy(%a)", [T(5)], lambda a: a.clone()),
    ("cast", "cast", "cast(%a, dtype=\"float64\")", [T(5)], lambda a: a),
    ("relu", "nn.relu", "nn.relu(%a)", [AWAY(2, 3)], torch.relu),
    ("leaky_relu", "nn.leaky_relu", "nn.leaky_relu(%a, alpha=0.25f)", [AWAY(2, 3)],
     lambda a: F.leaky_relu(a, 0.25)),
    ("clip", "clip", "clip(%a, a_min=-0.5f, a_max=0.7f)", [T(8)],
     lambda a: torch.clamp(a, -0.5, 0.7)),
    ("dense", "nn.dense", "nn.dense(%a, %b)", [T(4, 3), T(5, 3)], lambda a, b: a @ b.T),
    ("matmul", "nn.matmul", "nn.matmul(%a, %b)", [T(4, 3), T(3, 5)], mm(False, False)),
    ("matmul_ta", "nn.matmul", "nn.matmul(%a, %b, transpose_a=True)", [T(3, 4), T(3, 5)],
     mm(True, False)),
    ("matmul_tb", "nn.matmul", "nn.matmul(%a, %b, transpose_b=True)", [T(4, 3), T(5, 3)],
     mm(False, True)),
    ("matmul_tab", "nn.matmul", "nn.matmul(%a, %b, transpose_a=True, transpose_b=True)",
     [T(3, 4), T(5, 3)], mm(True, True)),
    ("conv2d", "nn.conv2d", "nn.conv2d(%a, %b, padding=[1, 1])", [T(2, 3, 5, 5), T(4, 3, 3, 3)],
     lambda a, b: F.conv2d(a, b, padding=1)),
    ("conv2d_stride", "nn.conv2d", "nn.conv2d(%a, %b, strides=[2, 2], padding=[1, 0, 1, 2])",
     [T(1, 2, 7, 6), T(3, 2, 3, 2)], lambda a, b: F.conv2d(F.pad(a, (0, 2, 1, 1)), b, stride=2)),
    ("conv2d_dilation", "nn.conv2d", "nn.conv2d(%a, %b, dilation=[2, 1])",
     [T(1, 2, 6, 5), T(2, 2, 2, 2)], lambda a, b: F.conv2d(a, b, dilation=(2, 1))),
    ("batch_matmul", "nn.batch_matmul", "nn.batch_matmul(%a, %b)", [T(2, 3, 4), T(2, 4, 5)],
     lambda a, b: a @ b),
    ("batch_matmul_tb", "nn.batch_matmul", "nn.batch_matmul(%a, %b, transpose_b=True)",
     [T(2, 3, 4), T(2, 5, 4)], lambda a, b: a @ b.transpose(1, 2)),
    ("batch_matmul_ta_bcast", "nn.batch_matmul", "nn.batch_matmul(%a, %b, transpose_a=True)",
     [T(1, 4, 3), T(2, 4, 5)], lambda a, b: a.transpose(1, 2) @ b),
    ("batch_matmul_tab_bcast", "nn.batch_matmul",
     "nn.batch_matmul(%a, %b, transpose_a=True, transpose_b=True)", [T(3, 4, 2), T(1, 5, 4)],
     lambda a, b: a.transpose(1, 2) @ b.transpose(1, 2)),
    ("dense_pack", "nn.contrib_dense_pack", "nn.contrib_dense_pack(%a, %b)",
     [T(3, 4), T(2, 4, 3)], lambda a, b: a @ b.permute(0, 2, 1).reshape(6, 4).T),
    ("prelu", "nn.prelu", "nn.prelu(%a, %b)", [AWAY(2, 3, 4), T(3)], F.prelu),
    ("prelu_last", "nn.prelu", "nn.prelu(%a, %b, axis=-1)", [AWAY(2, 3), T(3)],
     lambda a, b: torch.where(a > 0, a, a * b)),
    ("instance_norm", "nn.instance_norm", "nn.instance_norm(%a, %b, %c)",
     [T(2, 3, 4, 5), T(3), T(3)], lambda a, b, c: F.instance_norm(a, weight=b, bias=c, eps=1e-5)),
    ("instance_norm_last", "nn.instance_norm",
     "nn.instance_norm(%a, %b, %c, axis=-1, epsilon=0.25f, center=False)",
     [T(2, 5, 3), T(3), T(3)],
     lambda a, b, c: F.instance_norm(a.transpose(1, 2), weight=b, eps=0.25).transpose(1, 2)
     + 0 * c.sum()),
    ("group_norm", "nn.group_norm", "nn.group_norm(%a, %b, %c, num_groups=2)",
     [T(2, 4, 3, 2), T(4), T(4)], lambda a, b, c: F.group_norm(a, 2, b, c, eps=1e-5)),
    ("group_norm_plain", "nn.group_norm",
     "nn.group_norm(%a, %b, %c, num_groups=3, scale=False, center=False)", [T(2, 6, 5), T(6), T(6)],
     lambda a, b, c: F.group_norm(a, 3, eps=1e-5) + 0 * (b + c).sum()),
    ("batch_norm", "nn.batch_norm", "%0 = nn.batch_norm(%a, %b, %c, %d, %e); %0.0",
     [T(2, 3, 4, 2), T(3), T(3), T(3), POS(3)],
     lambda a, b, c, d, e: (a - d.view(1, -1, 1, 1)) / torch.sqrt(e.view(1, -1, 1, 1) + 1e-5)
     * b.view(1, -1, 1, 1) + c.view(1, -1, 1, 1)),
    ("batch_norm_fields", "nn.batch_norm",
     "%0 = nn.batch_norm(%a, %b, %c, %d, %e, axis=2, epsilon=0.5f, center=False, scale=False); "
     "add(%0.0, multiply(%0.1, %0.2))", [T(2, 4, 3), T(3), T(3), T(3), POS(3)],
     lambda a, b, c, d, e: (a - d) / torch.sqrt(e + 0.5) + d * e + 0 * (b + c).sum()),
    ("l2_normalize", "nn.l2_normalize", "nn.l2_normalize(%a, eps=1e-10f, axis=[1])", [T(3, 4)],
     lambda a: a / torch.sqrt(torch.clamp((a * a).sum(1, keepdim=True), min=float(np.float32(1e-10))))),
    ("l2_normalize_eps", "nn.l2_normalize", "nn.l2_normalize(%a, eps=0.25f, axis=[0, 2])",
     [SMALL(2, 4, 1)], lambda a: a / torch.sqrt(torch.clamp((a * a).sum((0, 2), keepdim=True), min=0.25))),
    ("lrn", "nn.lrn", "nn.lrn(%a, size=3, alpha=0.5f, beta=0.75f, bias=1f)", [T(2, 5, 3)],
     lambda a: F.local_response_norm(a, 3, alpha=0.5, beta=0.75, k=1.0)),
    ("lrn_even_axis2", "nn.lrn", "nn.lrn(%a, size=4, axis=2, alpha=0.25f, beta=0.5f, bias=2f)",
     [T(2, 3, 6)],
     lambda a: F.local_response_norm(a.transpose(1, 2), 4, alpha=0.25, beta=0.5, k=2.0)
     .transpose(1, 2)),
    ("nll_loss", "nn.nll_loss", "nn.nll_loss(%a, [1, 0, 2, 1], %b, ignore_index=-100)",
     [T(4, 3), POS(3)], nll([1, 0, 2, 1])),
    ("nll_loss_ignore", "nn.nll_loss",
     "nn.nll_loss(%a, [[1, 0, 2], [0, 2, 2]], %b, ignore_index=0)", [T(2, 3, 3), POS(3)],
     nll([[1, 0, 2], [0, 2, 2]], ignore=0)),
    ("nll_loss_sum", "nn.nll_loss",
     "nn.nll_loss(%a, [1, 0, 2], %b, reduction=\"sum\", ignore_index=2)", [T(3, 4), POS(4)],
     nll([1, 0, 2], "sum", 2)),
    ("nll_loss_none", "nn.nll_loss",
     "nn.nll_loss(%a, [[3, 0], [1, 1]], %b, reduction=\"none\", ignore_index=-1)",
     [T(2, 4, 2), POS(4)],
     nll([[3, 0], [1, 1]], "none", -1)),
    ("conv2d_groups", "nn.conv2d", "nn.conv2d(%a, %b, padding=[1, 1], groups=2, strides=[2, 1])",
     [T(1, 4, 5, 6), T(6, 2, 3, 3)], lambda a, b: F.conv2d(a, b, padding=1, groups=2, stride=(2, 1))),
    ("conv2d_depthwise", "nn.conv2d", "nn.conv2d(%a, %b, padding=[0, 1, 1, 0], groups=3)",
     [T(2, 3, 5, 4), T(3, 1, 2, 3)], lambda a, b: F.conv2d(F.pad(a, (1, 0, 0, 1)), b, groups=3)),
    ("conv2d_nhwc", "nn.conv2d",
     "nn.conv2d(%a, %b, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
     [T(1, 5, 4, 2), T(3, 3, 2, 4)],
     lambda a, b: F.conv2d(a.permute(0, 3, 1, 2), b.permute(3, 2, 0, 1), padding=1)
     .permute(0, 2, 3, 1)),
    ("conv2d_nchwc", "nn.contrib_conv2d_NCHWc",
     "nn.contrib_conv2d_NCHWc(%a, %b, padding=[1, 1], strides=[2, 1], channels=4, "
     "kernel_size=[3, 3], data_layout=\"NCHW2c\", kernel_layout=\"OIHW2i2o\", "
     "out_layout=\"NCHW2c\")", [T(1, 2, 5, 4, 2), T(2, 2, 3, 3, 2, 2)],
     lambda a, b: F.conv2d(a.permute(0, 1, 4, 2, 3).reshape(1, 4, 5, 4),
                           b.permute(0, 5, 1, 4, 2, 3).reshape(4, 4, 3, 3), padding=1,
                           stride=(2, 1)).reshape(1, 2, 2, 3, 4).permute(0, 1, 3, 4, 2)),
    ("conv2d_nchwc_depthwise", "nn.contrib_conv2d_NCHWc",
     "nn.contrib_conv2d_NCHWc(%a, %b, groups=4, channels=4, kernel_size=[2, 2], "
     "data_layout=\"NCHW2c\", kernel_layout=\"OIHW1i2o\")", [T(1, 2, 3, 3, 2), T(2, 1, 2, 2, 1, 2)],
     lambda a, b: F.conv2d(a.permute(0, 1, 4, 2, 3).reshape(1, 4, 3, 3),
                           b.permute(0, 5, 1, 4, 2, 3).reshape(4, 1, 2, 2), groups=4)
     .reshape(1, 2, 2, 2, 2).permute(0, 1, 3, 4, 2)),
    ("conv1d", "nn.conv1d", "nn.conv1d(%a, %b, strides=[2], padding=[1, 2], dilation=[2])",
     [T(2, 3, 11), T(4, 3, 3)], lambda a, b: F.conv1d(F.pad(a, (1, 2)), b, stride=2, dilation=2)),
    ("conv1d_groups", "nn.conv1d", "nn.conv1d(%a, %b, padding=[1], groups=3)",
     [T(1, 6, 7), T(9, 2, 3)], lambda a, b: F.conv1d(a, b, padding=1, groups=3)),
    ("conv1d_nwc", "nn.conv1d", "nn.conv1d(%a, %b, data_layout=\"NWC\", kernel_layout=\"WIO\")",
     [T(2, 7, 3), T(3, 3, 4)],
     lambda a, b: F.conv1d(a.transpose(1, 2), b.permute(2, 1, 0)).transpose(1, 2)),
    ("conv3d", "nn.conv3d",
     "nn.conv3d(%a, %b, strides=[2, 1, 2], padding=[1, 0, 1], dilation=[1, 2, 1])",
     [T(1, 2, 5, 5, 5), T(3, 2, 2, 2, 2)],
     lambda a, b: F.conv3d(a, b, stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1))),
    ("conv3d_groups", "nn.conv3d", "nn.conv3d(%a, %b, padding=[1, 1, 1], groups=2)",
     [T(1, 4, 3, 4, 3), T(2, 2, 3, 3, 3)], lambda a, b: F.conv3d(a, b, padding=1, groups=2)),
    ("conv2d_transpose", "nn.conv2d_transpose",
     "nn.conv2d_transpose(%a, %b, strides=[2, 2], padding=[1, 1], output_padding=[1, 1], "
     "kernel_layout=\"IOHW\")", [T(1, 3, 4, 5), T(3, 2, 3, 3)],
     lambda a, b: F.conv_transpose2d(a, b, stride=2, padding=1, output_padding=1)),
    ("conv2d_transpose_oihw", "nn.conv2d_transpose",
     "nn.conv2d_transpose(%a, %b, padding=[0, 1], dilation=[2, 1])", [T(2, 3, 4, 3), T(2, 3, 3, 2)],
     lambda a, b: F.conv_transpose2d(a, b.transpose(0, 1), padding=(0, 1), dilation=(2, 1))),
    ("conv2d_transpose_groups", "nn.conv2d_transpose",
     "nn.conv2d_transpose(%a, %b, strides=[2, 2], groups=2, kernel_layout=\"IOHW\")",
     [T(1, 4, 3, 3), T(4, 3, 2, 2)], lambda a, b: F.conv_transpose2d(a, b, stride=2, groups=2)),
    ("conv1d_transpose", "nn.conv1d_transpose",
     "nn.conv1d_transpose(%a, %b, strides=[3], padding=[2], output_padding=[1])",
     [T(2, 3, 5), T(3, 2, 4)],
     lambda a, b: F.conv_transpose1d(a, b, stride=3, padding=2, output_padding=1)),
    ("max_pool2d", "nn.max_pool2d", "nn.max_pool2d(%a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
     [T(1, 2, 7, 6)], lambda a: F.max_pool2d(a, 3, 2, 1)),
    ("max_pool2d_ceil", "nn.max_pool2d",
     "nn.max_pool2d(%a, pool_size=[2, 2], strides=[2, 2], ceil_mode=True)", [T(1, 1, 5, 7)],
     lambda a: F.max_pool2d(a, 2, 2, ceil_mode=True)),
    ("max_pool2d_dilation", "nn.max_pool2d",
     "nn.max_pool2d(%a, pool_size=[2, 3], dilation=[2, 1], padding=[0, 1, 1, 0])",
     [T(1, 2, 5, 5)],
     lambda a: F.max_pool2d(F.pad(a, (1, 0, 0, 1), value=-float("inf")), (2, 3), 1,
                            dilation=(2, 1))),
    ("max_pool2d_nhwc", "nn.max_pool2d",
     "nn.max_pool2d(%a, pool_size=[2, 2], layout=\"NHWC\")", [T(1, 5, 4, 2)],
     lambda a: F.max_pool2d(a.permute(0, 3, 1, 2), 2, 1).permute(0, 2, 3, 1)),
    ("max_pool2d_ties", "nn.max_pool2d",  # every element twice along W: ties in each window
     "nn.max_pool2d(reshape(broadcast_to(%a, shape=[1, 1, 3, 4, 2]), newshape=[1, 1, 3, 8]), "
     "pool_size=[2, 3])", [T(1, 1, 3, 4, 1)],
     lambda a: F.max_pool2d(a.expand(1, 1, 3, 4, 2).reshape(1, 1, 3, 8), (2, 3), 1)),
    ("max_pool1d", "nn.max_pool1d", "nn.max_pool1d(%a, pool_size=[3], strides=[2], padding=[1])",
     [T(2, 3, 9)], lambda a: F.max_pool1d(a, 3, 2, 1)),
    ("max_pool3d", "nn.max_pool3d",
     "nn.max_pool3d(%a, pool_size=[2, 2, 2], strides=[2, 1, 2], padding=[0, 1, 0])",
     [T(1, 2, 4, 5, 4)], lambda a: F.max_pool3d(a, 2, (2, 1, 2), (0, 1, 0))),
    ("avg_pool2d", "nn.avg_pool2d", "nn.avg_pool2d(%a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
     [T(1, 2, 7, 6)], lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False)),
    ("avg_pool2d_incl_ceil", "nn.avg_pool2d",
     "nn.avg_pool2d(%a, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=True, "
     "count_include_pad=True)", [T(1, 1, 6, 6)],
     lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=True)),
    ("avg_pool2d_ceil", "nn.avg_pool2d",
     "nn.avg_pool2d(%a, pool_size=[2, 3], strides=[2, 2], ceil_mode=True)", [T(1, 2, 5, 6)],
     lambda a: F.avg_pool2d(a, (2, 3), 2, ceil_mode=True)),
    ("avg_pool2d_dilation", "nn.avg_pool2d",
     "nn.avg_pool2d(%a, pool_size=[2, 2], dilation=[2, 1], layout=\"NHWC\")", [T(1, 5, 4, 2)],
     lambda a: F.conv2d(a.permute(0, 3, 1, 2), torch.full((2, 1, 2, 2), 0.25, dtype=a.dtype),
                        dilation=(2, 1), groups=2).permute(0, 2, 3, 1)),
    ("avg_pool1d", "nn.avg_pool1d",
     "nn.avg_pool1d(%a, pool_size=[3], strides=[2], padding=[1], count_include_pad=True)",
     [T(2, 3, 8)], lambda a: F.avg_pool1d(a, 3, 2, 1, count_include_pad=True)),
    ("avg_pool3d", "nn.avg_pool3d",
     "nn.avg_pool3d(%a, pool_size=[2, 3, 2], strides=[1, 2, 2], padding=[1, 1, 0])",
     [T(1, 2, 3, 5, 4)], lambda a: F.avg_pool3d(a, (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                                count_include_pad=False)),
    ("adaptive_avg_pool2d", "nn.adaptive_avg_pool2d",
     "nn.adaptive_avg_pool2d(%a, output_size=[3, 2])", [T(1, 2, 7, 5)],
     lambda a: F.adaptive_avg_pool2d(a, (3, 2))),
    ("adaptive_avg_pool2d_nhwc", "nn.adaptive_avg_pool2d",
     "nn.adaptive_avg_pool2d(%a, output_size=[4], layout=\"NHWC\")", [T(2, 6, 5, 3)],
     lambda a: F.adaptive_avg_pool2d(a.permute(0, 3, 1, 2), 4).permute(0, 2, 3, 1)),
    ("adaptive_max_pool2d", "nn.adaptive_max_pool2d",
     "nn.adaptive_max_pool2d(%a, output_size=[2, 3])", [T(2, 1, 5, 7)],
     lambda a: F.adaptive_max_pool2d(a, (2, 3))),
    ("adaptive_max_pool2d_ties", "nn.adaptive_max_pool2d",
     "nn.adaptive_max_pool2d(reshape(broadcast_to(%a, shape=[1, 5, 2, 2, 2]), "
     "newshape=[1, 5, 4, 2]), output_size=[3, 3], layout=\"NHWC\")", [T(1, 5, 2, 1, 2)],
     lambda a: F.adaptive_max_pool2d(a.expand(1, 5, 2, 2, 2).reshape(1, 5, 4, 2)
                                     .permute(0, 3, 1, 2), 3).permute(0, 2, 3, 1)),
    ("pad", "nn.pad", "nn.pad(%a, %b, pad_width=[[0, 0], [1, 2], [2, 0]])", [T(2, 3, 2), T()],
     pad_const((2, 0, 1, 2))),
    ("pad_edge", "nn.pad", "nn.pad(%a, 0f64, pad_width=[[1, 0], [0, 0], [2, 3]], pad_mode=\"edge\")",
     [T(2, 3, 2)], np_pad([[1, 0], [0, 0], [2, 3]], "edge")),
    ("pad_reflect", "nn.pad",
     "nn.pad(%a, 0f64, pad_width=[[0, 0], [2, 1], [1, 2]], pad_mode=\"reflect\")", [T(2, 4, 3)],
     np_pad([[0, 0], [2, 1], [1, 2]], "reflect")),
    ("dyn.nn.pad", "dyn.nn.pad", "dyn.nn.pad(%a, [[0, 0], [1, 2]], %b)", [T(2, 3), T()],
     pad_const((1, 2, 0, 0))),
    ("dyn.nn.pad_edge", "dyn.nn.pad", "dyn.nn.pad(%a, [[2, 1], [0, 1]], 0f64, pad_mode=\"edge\")",
     [T(2, 3)], np_pad([[2, 1], [0, 1]], "edge")),
    ("mirror_pad", "nn.mirror_pad", "nn.mirror_pad(%a, pad_width=[[1, 2], [0, 0], [3, 1]])",
     [T(3, 2, 4)], np_pad([[1, 2], [0, 0], [3, 1]], "symmetric")),
    ("mirror_pad_reflect", "nn.mirror_pad",
     "nn.mirror_pad(%a, pad_width=[[2, 1], [1, 1]], mode=\"REFLECT\")", [T(4, 3)],
     np_pad([[2, 1], [1, 1]], "reflect")),
    ("depth_to_space", "nn.depth_to_space", "nn.depth_to_space(%a, block_size=2)", [T(1, 8, 2, 3)],
     d2s(2, False)),
    ("depth_to_space_crd", "nn.depth_to_space", "nn.depth_to_space(%a, block_size=2, mode=\"CRD\")",
     [T(2, 8, 3, 2)], d2s(2, True)),
    ("depth_to_space_nhwc_crd", "nn.depth_to_space",
     "nn.depth_to_space(%a, block_size=3, mode=\"CRD\", layout=\"NHWC\")", [T(1, 2, 2, 18)],
     lambda a: d2s(3, True)(a.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)),
    ("space_to_depth", "nn.space_to_depth", "nn.space_to_depth(%a, block_size=2)", [T(2, 3, 4, 6)],
     s2d(2)),
    ("space_to_depth_nhwc", "nn.space_to_depth",
     "nn.space_to_depth(%a, block_size=2, layout=\"NHWC\")", [T(1, 4, 2, 3)],
     lambda a: s2d(2)(a.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)),
    ("space_to_batch_nd", "nn.space_to_batch_nd",
     "nn.space_to_batch_nd(%a, block_shape=[2, 3], paddings=[[1, 0], [0, 2]])", [T(2, 3, 4, 2)],
     lambda a: F.pad(a, (0, 0, 0, 2, 1, 0)).reshape(2, 2, 2, 2, 3, 2).permute(2, 4, 0, 1, 3, 5)
     .reshape(12, 2, 2, 2)),
    ("batch_to_space_nd", "nn.batch_to_space_nd",
     "nn.batch_to_space_nd(%a, block_shape=[2, 2], crops=[[1, 0], [0, 1]])", [T(8, 2, 3, 1)],
     lambda a: a.reshape(2, 2, 2, 2, 3, 1).permute(2, 3, 0, 4, 1, 5).reshape(2, 4, 6, 1)
     [:, 1:, :5]),
    ("resize2d", "image.resize2d", "image.resize2d(%a, size=[5, 3])", [T(1, 2, 3, 4)],
     lambda a: F.interpolate(a, size=(5, 3), mode="bilinear", align_corners=False), F32),
    ("resize2d_nearest_nhwc", "image.resize2d",
     "image.resize2d(%a, size=[6, 2], layout=\"NHWC\", method=\"nearest_neighbor\", "
     "coordinate_transformation_mode=\"asymmetric\", rounding_method=\"floor\")", [T(2, 3, 4, 2)],
     lambda a: F.interpolate(a.permute(0, 3, 1, 2), size=(6, 2), mode="nearest")
     .permute(0, 2, 3, 1), F32),
    ("resize2d_cubic", "image.resize2d",
     "image.resize2d(%a, size=[4, 5], method=\"cubic\", cubic_alpha=-0.75f)", [T(1, 1, 3, 3)],
     lambda a: F.interpolate(a, size=(4, 5), mode="bicubic", align_corners=False), F32),
    ("resize1d", "image.resize1d",
     "image.resize1d(%a, size=[7], coordinate_transformation_mode=\"align_corners\")",
     [T(2, 2, 4)], lambda a: F.interpolate(a, size=7, mode="linear", align_corners=True), F32),
    ("resize3d", "image.resize3d", "image.resize3d(%a, size=[3, 4, 2])", [T(1, 2, 2, 3, 3)],
     lambda a: F.interpolate(a, size=(3, 4, 2), mode="trilinear", align_corners=False), F32),
    ("dyn.image.resize2d", "dyn.image.resize2d", "dyn.image.resize2d(%a, [4, 6], [0f, 0f, 1f, 1f])",
     [T(1, 2, 3, 3)], lambda a: F.interpolate(a, size=(4, 6), mode="bilinear", align_corners=False),
     F32),
    ("upsampling", "nn.upsampling", "nn.upsampling(%a, scale_h=2f, scale_w=3f)", [T(1, 2, 3, 2)],
     lambda a: F.interpolate(a, scale_factor=(2, 3), mode="nearest"), F32),
    ("upsampling_bilinear", "nn.upsampling",
     "nn.upsampling(%a, scale_h=2f, scale_w=1.5f, method=\"bilinear\", align_corners=True)",
     [T(1, 1, 3, 4)], lambda a: F.interpolate(a, size=(6, 6), mode="bilinear", align_corners=True),
     F32),
    ("upsampling3d", "nn.upsampling3d",
     "nn.upsampling3d(%a, scale_d=2f, scale_h=1f, scale_w=2f, method=\"trilinear\")",
     [T(1, 2, 2, 3, 2)],
     lambda a: F.interpolate(a, scale_factor=(2, 1, 2), mode="trilinear", align_corners=False), F32),
    ("crop_and_resize", "image.crop_and_resize",
     "image.crop_and_resize(%a, [[0.25f, 0f, 0.75f, 0.5f], [0f, 0.125f, 1f, 1f], "
     "[0.5f, 0.25f, 0.75f, 0.75f]], [1, 0, 1], crop_size=[3, 2])", [T(2, 2, 4, 5)],
     crop_resize([(0.25, 0, 0.75, 0.5), (0, 0.125, 1, 1), (0.5, 0.25, 0.75, 0.75)], [1, 0, 1], 3, 2),
     F32),
] + [
    ("grid_sample_%s_%s_%s" % (m, p, "ac" if ac else "noac"), "image.grid_sample",
     "image.grid_sample(%%a, multiply(%%b, 1.7f64), method=\"%s\", padding_mode=\"%s\", "
     "align_corners=%s)" % (m, p, ac), [T(2, 2, 4, 5), T(2, 2, 3, 4)], grid_sample_t(m, p, ac))
    for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
    for ac in (True, False)
] + [
    ("grid_sample_3d_%s_%s" % (m, p), "image.grid_sample",
     "image.grid_sample(%%a, multiply(%%b, 1.7f64), method=\"%s\", padding_mode=\"%s\", "
     "layout=\"NCDHW\", align_corners=%s)" % (m, p, ac), [T(1, 2, 3, 4, 3), T(1, 3, 2, 2, 3)],
     grid_sample_t(m, p, ac, nsp=3))
    for m, p, ac in (("bilinear", "zeros", False), ("bilinear", "border", True),
                     ("bilinear", "reflection", False), ("nearest", "reflection", True))
] + [
    ("grid_sample_far", "image.grid_sample",
     "image.grid_sample(%a, multiply(%b, 4f64), padding_mode=\"reflection\", align_corners=False)",
     [T(1, 1, 3, 4), T(1, 2, 3, 3)], grid_sample_t("bilinear", "reflection", False, scale=4.0)),
    ("roi_align", "vision.roi_align",
     "vision.roi_align(%a, [[0f64, 0.7f64, 1.3f64, 6.1f64, 8.2f64], [1f64, -1.5f64, 2.2f64, "
     "4.4f64, 3.1f64], [1f64, 3.3f64, 0.4f64, 3.9f64, 1.1f64]], pooled_size=[2, 3], "
     "spatial_scale=0.5f, sample_ratio=2)", [T(2, 2, 5, 4)],
     roi_align_t([[0, 0.7, 1.3, 6.1, 8.2], [1, -1.5, 2.2, 4.4, 3.1], [1, 3.3, 0.4, 3.9, 1.1]],
                 2, 3, 0.5, 2)),
    ("roi_align_adaptive", "vision.roi_align",
     "vision.roi_align(%a, [[0f64, 0.2f64, 0.5f64, 4.6f64, 3.7f64], [0f64, 2.5f64, 1.5f64, "
     "3f64, 2f64]], pooled_size=[2, 2], spatial_scale=1f)", [T(1, 3, 5, 6)],
     roi_align_t([[0, 0.2, 0.5, 4.6, 3.7], [0, 2.5, 1.5, 3, 2]], 2, 2, 1.0, -1)),
    ("roi_align_max_nhwc", "vision.roi_align",
     "vision.roi_align(%a, [[0f64, 0.3f64, 0.6f64, 3.8f64, 4.1f64]], pooled_size=[2, 2], "
     "spatial_scale=1f, sample_ratio=2, mode=\"max\", layout=\"NHWC\")", [T(1, 5, 5, 2)],
     roi_align_t([[0, 0.3, 0.6, 3.8, 4.1]], 2, 2, 1.0, 2, "max", "NHWC")),
    ("get_valid_counts", "vision.get_valid_counts", "vision.get_valid_counts(%a, 1.2f64).1",
     [POS(1, 6, 6)], lambda a: rows_from(a, valid_rows(a, 1.2))),
    ("non_max_suppression", "vision.non_max_suppression",
     "vision.non_max_suppression(%a, [5], [[0, 1, 2, 3, 4, 5]], -1, 0.3f64, "
     "return_indices=False, force_suppress=True)", [POS(1, 6, 6)], nms_t(5, 0.3)),
    ("nms_after_valid_counts", "vision.non_max_suppression",
     "let %v = vision.get_valid_counts(%a, 1f64); vision.non_max_suppression(%v.1, %v.0, %v.2, "
     "-1, 0.3f64, return_indices=False, force_suppress=True)", [POS(1, 6, 6)],
     nms_after_valid(1.0, 0.3)),
    ("arange", "arange", "arange(%a, add(%b, 5f64), %c, dtype=\"float64\")", [T(), T(), POS()],
     lambda a, b, c: a + torch.arange(int(math.ceil(float((b + 5 - a) / c))), dtype=a.dtype) * c
     + 0 * b),
    ("unique", "unique", "unique(concatenate((%a, %a))).0", [T(5)],
     lambda a: torch.cat((torch.sort(a).values, torch.zeros_like(a)))),
    ("unique_unsorted", "unique", "unique(concatenate((%a, %a)), sorted=False).0", [T(4)],
     lambda a: torch.cat((a, torch.zeros_like(a)))),
] + [
    ("affine_grid", "image.affine_grid", "image.affine_grid(%a, target_shape=[3, 4])", [T(2, 2, 3)],
     lambda a: F.affine_grid(a, (2, 1, 3, 4), align_corners=True).permute(0, 3, 1, 2), F32),
    ("dequantize", "qnn.dequantize",
     "cast(qnn.dequantize(cast([[3, -2, 0], [1, 5, -7]], dtype=\"int8\"), "
     "cast(%a, dtype=\"float32\"), 1), dtype=\"float64\")", [T()],
     lambda a: (torch.tensor([[3, -2, 0], [1, 5, -7]]) - 1).double() * a, F32),
    ("dequantize_channels", "qnn.dequantize",
     "cast(qnn.dequantize(cast([[3, -2], [1, 5], [0, 4]], dtype=\"int32\"), "
     "cast(%a, dtype=\"float32\"), 0, axis=0), dtype=\"float64\")", [T(3)],
     lambda a: torch.tensor([[3, -2], [1, 5], [0, 4]]).double() * a[:, None], F32),
    ("dilate", "nn.dilate", "nn.dilate(%a, strides=[1, 2, 3])", [T(2, 3, 2)], dilated([1, 2, 3])),
    ("global_avg_pool2d", "nn.global_avg_pool2d", "nn.global_avg_pool2d(%a)", [T(2, 3, 4, 5)],
     lambda a: a.mean((2, 3), keepdim=True)),
    ("global_avg_pool2d_nhwc", "nn.global_avg_pool2d", "nn.global_avg_pool2d(%a, layout=\"NHWC\")",
     [T(2, 4, 5, 3)], lambda a: a.mean((1, 2), keepdim=True)),
    ("global_max_pool2d", "nn.global_max_pool2d", "nn.global_max_pool2d(%a)", [T(2, 3, 4, 5)],
     lambda a: a.amax((2, 3), keepdim=True)),
    ("layer_norm", "nn.layer_norm", "nn.layer_norm(%a, %b, %c)", [T(3, 5), T(5), T(5)],
     lambda a, b, c: F.layer_norm(a, (5,), b, c, eps=1e-5)),
    ("layer_norm_axis1", "nn.layer_norm", "nn.layer_norm(%a, %b, %c, axis=1, epsilon=0.0078125f)",
     [T(2, 4, 3), T(4), T(4)],
     lambda a, b, c: F.layer_norm(a.transpose(1, 2), (4,), b, c, eps=0.0078125).transpose(1, 2)),
    ("layer_norm_plain", "nn.layer_norm", "nn.layer_norm(%a, %b, %c, center=False, scale=False)",
     [T(2, 6), T(6), T(6)], lambda a, b, c: F.layer_norm(a, (6,), eps=1e-5) + 0 * (b + c).sum()),
    ("bias_add", "nn.bias_add", "nn.bias_add(%a, %b)", [T(2, 3, 2), T(3)],
     lambda a, b: a + b.reshape(1, 3, 1)),
    ("bias_add_last", "nn.bias_add", "nn.bias_add(%a, %b, axis=-1)", [T(2, 3), T(3)],
     lambda a, b: a + b),
    ("softmax", "nn.softmax", "nn.softmax(%a)", [T(2, 4)], lambda a: torch.softmax(a, -1)),
    ("softmax_axis0", "nn.softmax", "nn.softmax(%a, axis=0)", [T(3, 2)],
     lambda a: torch.softmax(a, 0)),
    ("fast_softmax", "nn.fast_softmax", "nn.fast_softmax(%a)", [T(2, 4)],
     lambda a: torch.softmax(a, -1)),
    ("log_softmax", "nn.log_softmax", "nn.log_softmax(%a)", [T(2, 4)],
     lambda a: torch.log_softmax(a, -1)),
    ("sum", "sum", "sum(%a, axis=[1])", [T(2, 3, 2)], lambda a: a.sum(1)),
    ("sum_all", "sum", "multiply(sum(%a), %a)", [T(2, 3)], lambda a: a.sum() * a),
    ("sum_keep", "sum", "sum(%a, axis=[0, 2], keepdims=True)", [T(2, 3, 2)],
     lambda a: a.sum((0, 2), keepdim=True)),
    ("sum_exclude", "sum", "sum(%a, axis=[1], exclude=True)", [T(2, 3, 2)],
     lambda a: a.sum((0, 2))),
    ("mean", "mean", "mean(%a, axis=[-1])", [T(2, 3)], lambda a: a.mean(-1)),
    ("max", "max", "max(%a, axis=[1])", [T(3, 4)], lambda a: a.max(1).values),
    ("min", "min", "min(%a, axis=[0])", [T(3, 4)], lambda a: a.min(0).values),
    ("prod", "prod", "prod(%a, axis=[1])", [T(2, 3, 4)], lambda a: a.prod(1)),
    ("prod_keep", "prod", "prod(%a, axis=[0, 2], keepdims=True)", [T(2, 3, 2)],
     lambda a: a.prod(2, keepdim=True).prod(0, keepdim=True)),
    ("prod_all_zero", "prod", "prod(%a)", [ZERO1(2, 3)], torch.prod),
    ("prod_exclude_zero", "prod", "prod(%a, axis=[0], exclude=True)", [ZERO1(3, 4)],
     lambda a: a.prod(1)),
    ("logsumexp", "logsumexp", "logsumexp(%a, axis=[1])", [T(3, 4)],
     lambda a: torch.logsumexp(a, 1)),
    ("logsumexp_keep", "logsumexp", "logsumexp(%a, axis=[0, 2], keepdims=True)", [T(2, 3, 2)],
     lambda a: torch.logsumexp(a, (0, 2), keepdim=True)),
    ("variance", "variance", "variance(%a, axis=[1])", [T(3, 5)],
     lambda a: a.var(1, unbiased=False)),
    ("variance_unbiased", "variance", "variance(%a, axis=[1], exclude=True, unbiased=True)",
     [T(2, 3, 4)], lambda a: a.var((0, 2), unbiased=True)),
    ("variance_mean", "variance", "variance(%a, %b, axis=[1], keepdims=True)", [T(3, 5), T(3, 1)],
     lambda a, b: ((a - b) ** 2).mean(1, keepdim=True)),
    ("variance_own_mean", "variance", "variance(%a, mean(%a, axis=[0], keepdims=True), axis=[0])",
     [T(4, 3)], lambda a: a.var(0, unbiased=False)),
    ("std", "std", "std(%a, axis=[0, 2], unbiased=True)", [T(2, 3, 4)],
     lambda a: a.std((0, 2), unbiased=True)),
    ("std_all", "std", "std(%a)", [T(3, 4)], lambda a: a.std(unbiased=False)),
    ("mean_variance", "mean_variance",
     "%0 = mean_variance(%a, axis=[1]); add(%0.0, multiply(%0.1, 2f64))", [T(3, 4)],
     lambda a: a.mean(1) + 2 * a.var(1, unbiased=False)),
    ("mean_variance_var", "mean_variance",
     "%0 = mean_variance(%a, axis=[0], keepdims=True, unbiased=True); %0.1", [T(4, 3)],
     lambda a: a.var(0, keepdim=True, unbiased=True)),
    ("mean_variance_mean", "mean_variance", "%0 = mean_variance(%a); %0.0", [T(2, 3)],
     lambda a: a.mean()),
    ("cumsum", "cumsum", "cumsum(%a, axis=1)", [T(3, 4)], lambda a: a.cumsum(1)),
    ("cumsum_exclusive", "cumsum", "cumsum(%a, axis=0, exclusive=True)", [T(4, 2)],
     lambda a: a.cumsum(0) - a),
    ("cumsum_flat", "cumsum", "cumsum(%a)", [T(2, 3)], lambda a: a.reshape(-1).cumsum(0)),
    ("cumprod", "cumprod", "cumprod(%a, axis=-1)", [POS(3, 4)], lambda a: a.cumprod(-1)),
    ("cumprod_exclusive", "cumprod", "cumprod(%a, axis=0, exclusive=True)", [AWAY(4, 2)],
     lambda a: torch.cat((torch.ones(1, 2, dtype=a.dtype), a.cumprod(0)[:-1]), 0)),
    ("cumprod_flat", "cumprod", "cumprod(%a)", [POS(2, 3)], lambda a: a.reshape(-1).cumprod(0)),
    ("cumprod_zeros", "cumprod", "cumprod(%a, axis=-1)", [ZEROS(3, 4)], lambda a: a.cumprod(-1)),
    ("cumprod_zeros_axis0", "cumprod", "cumprod(%a, axis=0)", [ZEROS(4, 3)],
     lambda a: a.cumprod(0)),
    ("cumprod_zeros_exclusive", "cumprod", "cumprod(%a, axis=1, exclusive=True)", [ZEROS(2, 5)],
     lambda a: torch.cat((torch.ones(2, 1, dtype=a.dtype), a.cumprod(1)[:, :-1]), 1)),
    ("cumprod_zeros_flat", "cumprod", "cumprod(%a)", [ZEROS(2, 4)],
     lambda a: a.reshape(-1).cumprod(0)),
    ("cumprod_zeros_dtype", "cumprod", "cumprod(cast(%a, dtype=\"float32\"), axis=1, dtype=\"float64\")",
     [ZEROS(2, 4)], lambda a: a.float().double().cumprod(1),
     dict(h=1e-3, rtol=1e-6, atol=1e-6, fd_rtol=1e-3, fd_atol=1e-4)),
    ("argmax", "argmax", "take(%a, argmax(%a))", [T(5)], lambda a: a.max()),
    ("argmin", "argmin", "multiply(cast(argmin(%a, axis=[1]), dtype=\"float64\"), %b)",
     [T(2, 4), T(2)], lambda a, b: a.argmin(1).double() * b + 0 * a.sum()),
    ("all", "all", "where(all(greater(%a, 0f64)), %a, %b)", [T(3), T(3)],
     lambda a, b: torch.where((a > 0).all(), a, b)),
    ("any", "any", "where(any(greater(%a, 0f64), axis=[0]), %a, %b)", [T(3), T(3)],
     lambda a, b: torch.where((a > 0).any(0), a, b)),
    ("reshape", "reshape", "reshape(%a, newshape=[3, 2])", [T(2, 3)], lambda a: a.reshape(3, 2)),
    ("transpose", "transpose", "transpose(%a, axes=[1, 2, 0])", [T(2, 3, 4)],
     lambda a: a.permute(1, 2, 0)),
    ("transpose_rev", "transpose", "transpose(%a)", [T(2, 3)], lambda a: a.T),
    ("expand_dims", "expand_dims", "expand_dims(%a, axis=1)", [T(2, 3)],
     lambda a: a.unsqueeze(1)),
    ("squeeze", "squeeze", "squeeze(%a, axis=[1])", [T(2, 1, 3)], lambda a: a.squeeze(1)),
    ("batch_flatten", "nn.batch_flatten", "nn.batch_flatten(%a)", [T(2, 3, 2)],
     lambda a: a.reshape(2, 6)),
    ("broadcast_to", "broadcast_to", "broadcast_to(%a, shape=[4, 3])", [T(1, 3)],
     lambda a: a.expand(4, 3)),
    ("broadcast_to_like", "broadcast_to_like", "broadcast_to_like(%a, %b)", [T(3), T(2, 3)],
     lambda a, b: a.expand(2, 3) + 0 * b),
    ("collapse_sum_like", "collapse_sum_like", "collapse_sum_like(%a, %b)", [T(2, 3), T(3)],
     lambda a, b: a.sum(0) + 0 * b),
    ("reshape_like", "reshape_like", "reshape_like(%a, %b)", [T(2, 3), T(3, 2)],
     lambda a, b: a.reshape(3, 2) + 0 * b),
    ("take", "take", "take(%a, [2, 0, 2, 1], axis=0)", [T(3, 2)],
     lambda a: a[torch.tensor([2, 0, 2, 1])]),
    ("take_axis1", "take", "take(%a, [[2, 0], [1, 1], [0, 3]], axis=1)", [T(2, 4, 3)],
     lambda a: a[:, torch.tensor([[2, 0], [1, 1], [0, 3]])]),
    ("take_axis_last", "take", "take(%a, [1, 0, 1], axis=-1)", [T(2, 3, 2)],
     lambda a: a[:, :, torch.tensor([1, 0, 1])]),
    ("take_flat", "take", "take(%a, [[5, 0], [2, 5]])", [T(2, 3)],
     lambda a: a.reshape(-1)[torch.tensor([[5, 0], [2, 5]])]),
    ("concatenate", "concatenate", "concatenate((%a, %b), axis=1)", [T(2, 3), T(2, 1)],
     lambda a, b: torch.cat((a, b), 1)),
    ("split", "split",
     "%0 = split(%a, indices_or_sections=[1, 3], axis=1); "
     "concatenate((multiply(%0.2, 3f64), %0.0), axis=1)", [T(2, 5)],
     lambda a: torch.cat((a[:, 3:] * 3, a[:, :1]), 1)),
    ("cross_entropy", "nn.cross_entropy", "nn.cross_entropy(%a, %b)", [PROB(3, 4), PROB(3, 4)],
     lambda a, b: -(torch.log(a) * b).sum() / 3),
    ("cross_entropy_with_logits", "nn.cross_entropy_with_logits",
     "nn.cross_entropy_with_logits(%a, %b)", [T(3, 4), PROB(3, 4)],
     lambda a, b: -(a * b).sum() / 3),
    ("zeros_like", "zeros_like", "add(zeros_like(%a), %a)", [T(3)], lambda a: a),
    ("ones_like", "ones_like", "multiply(ones_like(%a), %a)", [T(3)], lambda a: a),
    ("full_like", "full_like", "add(full_like(%a, 2f64), %a)", [T(3)], lambda a: a + 2),
    ("full_like_fill", "full_like", "multiply(full_like(%a, %b), %a)", [T(3), T()],
     lambda a, b: a * b),
    ("full", "full", "multiply(full(%b, shape=[2, 3], dtype=\"float64\"), %a)", [T(2, 3), T()],
     lambda a, b: a * b),
    ("dyn.full", "dyn.full", "multiply(dyn.full(%b, [2, 3], dtype=\"float64\"), %a)",
     [T(2, 3), T()], lambda a, b: a * b),
    ("stack", "stack", "stack((%a, %b), axis=1)", [T(2, 3), T(2, 3)],
     lambda a, b: torch.stack((a, b), 1)),
    ("stack_last", "stack", "stack((%a, %b, %a), axis=-1)", [T(2), T(2)],
     lambda a, b: torch.stack((a, b, a), -1)),
    ("strided_slice", "strided_slice", "strided_slice(%a, begin=[1, 0], end=[4, 3], strides=[2, 1])",
     [T(5, 4)], lambda a: a[1:4:2, 0:3]),
    ("strided_slice_neg", "strided_slice",
     "strided_slice(%a, begin=[-1, 3], end=[-6, 0], strides=[-2, -1])", [T(5, 4)],
     np_slice(slice(-1, -6, -2), slice(3, 0, -1))),
    ("strided_slice_axes", "strided_slice", "strided_slice(%a, begin=[1], end=[30], axes=[2])",
     [T(2, 3, 4)], lambda a: a[:, :, 1:]),
    ("strided_slice_size", "strided_slice",
     "strided_slice(%a, begin=[1, 0], end=[2, -1], slice_mode=\"size\")", [T(4, 3)],
     lambda a: a[1:3, 0:]),
    ("dyn.strided_slice", "dyn.strided_slice", "dyn.strided_slice(%a, [4, 0], [0, 3], [-2, 1])",
     [T(5, 4)], np_slice(slice(4, 0, -2), slice(0, 3))),
    ("slice_like", "slice_like", "slice_like(%a, %b, axes=[1])", [T(3, 5), T(3, 2)],
     lambda a, b: a[:, :2] + 0 * b.sum()),
    ("layout_transform", "layout_transform",
     "layout_transform(%a, src_layout=\"NCHW\", dst_layout=\"NHWC\")", [T(1, 2, 3, 4)],
     lambda a: a.permute(0, 2, 3, 1)),
    ("layout_transform_blocked", "layout_transform",
     "layout_transform(%a, src_layout=\"NCHW\", dst_layout=\"NCHW2c\")", [T(1, 4, 2, 3)],
     lambda a: a.reshape(1, 2, 2, 2, 3).permute(0, 1, 3, 4, 2)),
    ("tile", "tile", "tile(%a, reps=[2, 1, 3])", [T(2, 3)], lambda a: a.repeat(2, 1, 3)),
    ("tile_short", "tile", "tile(%a, reps=[2])", [T(2, 3)], lambda a: a.repeat(1, 2)),
    ("dyn.tile", "dyn.tile", "dyn.tile(%a, [3, 1, 2])", [T(2, 2)], lambda a: a.repeat(3, 1, 2)),
    ("repeat", "repeat", "repeat(%a, repeats=3, axis=1)", [T(2, 3)],
     lambda a: a.repeat_interleave(3, 1)),
    ("repeat_neg", "repeat", "repeat(%a, repeats=2, axis=-3)", [T(2, 1, 3)],
     lambda a: a.repeat_interleave(2, 0)),
    ("reverse", "reverse", "reverse(%a, axis=1)", [T(2, 3)], lambda a: a.flip(1)),
    ("reverse_sequence", "reverse_sequence", "reverse_sequence(%a, [1, 3, 2], seq_axis=1, batch_axis=0)",
     [T(3, 4)], rev_seq([1, 3, 2])),
    ("sequence_mask", "sequence_mask", "sequence_mask(%a, [1, 3], mask_value=-2f, axis=0)",
     [T(4, 2, 3)],
     lambda a: torch.where((torch.arange(4)[:, None] < torch.tensor([1, 3])[None, :])[:, :, None],
                           a, torch.tensor(-2.0, dtype=a.dtype))),
    ("sequence_mask_axis1", "sequence_mask", "sequence_mask(%a, [2, 0, 3], axis=1)", [T(3, 4)],
     lambda a: a * (torch.arange(4)[None, :] < torch.tensor([2, 0, 3])[:, None])),
    ("trilu", "trilu", "trilu(%a, 1, upper=False)", [T(3, 4)], lambda a: torch.tril(a, 1)),
    ("trilu_upper", "trilu", "trilu(%a, -1)", [T(2, 3, 3)], lambda a: torch.triu(a, -1)),
    ("cast_like", "cast_like", "cast_like(%a, %b)", [T(3), T(2)], lambda a, b: a + 0 * b.sum()),
    ("meshgrid", "meshgrid", "%0 = meshgrid((%a, %b)); add(%0.0, multiply(%0.1, 2f64))",
     [T(3), T(2)], lambda a, b: (lambda g: g[0] + 2 * g[1])(torch.meshgrid(a, b, indexing="ij"))),
    ("meshgrid_xy", "meshgrid",
     "%0 = meshgrid((%a, %b, %c), indexing=\"xy\"); multiply(%0.0, %0.2)", [T(2), T(3), T(4)],
     lambda a, b, c: (lambda g: g[0] * g[2])(torch.meshgrid(a, b, c, indexing="xy"))
     + 0 * b.sum()),
    ("one_hot", "one_hot", "one_hot([1, 0, 2], %a, %b, depth=4)", [T(), T()],
     lambda a, b: (lambda h: a * h + b * (1 - h))(F.one_hot(torch.tensor([1, 0, 2]), 4))),
    ("one_hot_axis0", "one_hot", "one_hot([[1, 3], [0, 0]], %a, %b, depth=4, axis=0)", [T(), T()],
     lambda a, b: (lambda h: a * h + b * (1 - h))(F.one_hot(torch.tensor([[1, 3], [0, 0]]), 4)
                                                   .permute(2, 0, 1))),
    ("dyn.one_hot", "dyn.one_hot", "dyn.one_hot([2, 0], %a, %b, 3)", [T(), T()],
     lambda a, b: (lambda h: a * h + b * (1 - h))(F.one_hot(torch.tensor([2, 0]), 3))),
    ("gather", "gather", "gather(%a, [[0, 2], [1, 1]], axis=1)", [T(2, 3)],
     lambda a: torch.gather(a, 1, torch.tensor([[0, 2], [1, 1]]))),
    ("gather_axis0", "gather", "gather(%a, [[1, 0, 1, 1]], axis=0)", [T(3, 4)],
     lambda a: torch.gather(a, 0, torch.tensor([[1, 0, 1, 1]]))),
    ("gather_nd", "gather_nd", "gather_nd(%a, [[0, 1, 0], [2, 0, 2]])", [T(2, 3, 4)],
     lambda a: a[torch.tensor([0, 1, 0]), torch.tensor([2, 0, 2])]),
    ("scatter", "scatter", "scatter(%a, [[1, 0, 2]], %b, axis=0)", [T(3, 3), T(1, 3)],
     lambda a, b: a.scatter(0, torch.tensor([[1, 0, 2]]), b)),
    ("scatter_dup", "scatter", "scatter(%a, [[1, 0, 1], [1, 2, 1]], %b, axis=0)",
     [T(3, 3), T(2, 3)], scatter_last(0, [[1, 0, 1], [1, 2, 1]])),
    ("scatter_dup_axis1", "scatter", "scatter(%a, [[2, 2], [0, 0]], %b, axis=1)",
     [T(2, 3), T(2, 2)], scatter_last(1, [[2, 2], [0, 0]])),
    ("scatter_add", "scatter_add", "scatter_add(%a, [[1, 1], [0, 1]], %b, axis=1)",
     [T(2, 3), T(2, 2)], lambda a, b: a.scatter_add(1, torch.tensor([[1, 1], [0, 1]]), b)),
    ("scatter_nd", "scatter_nd", "scatter_nd(%a, [[0, 2]], %b, mode=\"update\")",
     [T(3, 4), T(2, 4)], lambda a, b: a.index_put((torch.tensor([0, 2]),), b)),
    ("scatter_nd_dup", "scatter_nd", "scatter_nd(%a, [[0, 2, 0]], %b, mode=\"update\")",
     [T(3, 4), T(3, 4)], scatter_nd_last([[0, 2, 0]])),
    ("scatter_nd_dup2", "scatter_nd",
     "scatter_nd(%a, [[0, 1, 0, 1], [1, 2, 1, 2]], %b, mode=\"update\")", [T(2, 3), T(4)],
     scatter_nd_last([[0, 1, 0, 1], [1, 2, 1, 2]])),
    ("scatter_nd_add", "scatter_nd", "scatter_nd(%a, [[0, 0, 1], [1, 1, 2]], %b, mode=\"add\")",
     [T(2, 3), T(3)],
     lambda a, b: a.index_put((torch.tensor([0, 0, 1]), torch.tensor([1, 1, 2])), b,
                              accumulate=True)),
    ("sparse_to_dense", "sparse_to_dense",
     "sparse_to_dense([[0, 1], [2, 0], [1, 1]], %a, %b, output_shape=[3, 2])", [T(3), T()],
     lambda a, b: b + torch.zeros(3, 2, dtype=a.dtype).index_put(
         (torch.tensor([0, 2, 1]), torch.tensor([1, 0, 1])), a - b)),
    ("sparse_to_dense_1d", "sparse_to_dense", "sparse_to_dense([3, 0], %a, %b, output_shape=[5])",
     [T(), T()], lambda a, b: b + torch.zeros(5, dtype=a.dtype).index_put(
         (torch.tensor([3, 0]),), (a - b).expand(2))),
    ("adv_index", "adv_index", "adv_index((%a, [0, 2, 0], [1, 1, 1]))", [T(3, 2, 4)],
     lambda a: a[torch.tensor([0, 2, 0]), torch.tensor([1, 1, 1])]),
    ("adv_index_bcast", "adv_index", "adv_index((%a, [[0], [2]], [1, 0, 1]))", [T(3, 2)],
     lambda a: a[torch.tensor([[0], [2]]), torch.tensor([1, 0, 1])]),
    ("einsum", "einsum", "einsum((%a, %b), equation=\"ij,jk->ik\")", [T(2, 3), T(3, 4)],
     lambda a, b: torch.einsum("ij,jk->ik", a, b)),
    ("einsum_batch", "einsum", "einsum((%a, %b), equation=\"bij,bkj->bik\")",
     [T(2, 3, 4), T(2, 5, 4)], lambda a, b: torch.einsum("bij,bkj->bik", a, b)),
    ("einsum_own", "einsum", "einsum((%a, %b, %c), equation=\"ij,k,jl\")", [T(2, 3), T(4), T(3, 2)],
     lambda a, b, c: torch.einsum("ij,k,jl", a, b, c)),
    ("sort", "sort", "sort(%a, axis=1)", [T(3, 4)], lambda a: torch.sort(a, 1).values),
    ("sort_desc", "sort", "sort(%a, axis=0, is_ascend=False)", [T(3, 2)],
     lambda a: torch.sort(a, 0, descending=True).values),
    ("topk", "topk", "%0 = topk(%a, k=2, axis=1); %0.0", [T(3, 4)],
     lambda a: torch.topk(a, 2, 1).values),
    ("topk_values", "topk", "topk(%a, k=3, axis=0, ret_type=\"values\", is_ascend=True)",
     [T(4, 2)], lambda a: torch.topk(a, 3, 0, largest=False).values),
    ("dyn.topk", "dyn.topk", "%0 = dyn.topk(%a, 2); %0.0", [T(2, 4)],
     lambda a: torch.topk(a, 2, -1).values),
    ("dyn.topk_values", "dyn.topk", "dyn.topk(%a, 3, axis=0, ret_type=\"values\")", [T(4, 2)],
     lambda a: torch.topk(a, 3, 0).values),
    ("on_device", "on_device", "on_device(%a)", [T(3)], lambda a: a),
    ("device_copy", "device_copy", "device_copy(%a)", [T(3)], lambda a: a),
    ("dyn.reshape", "dyn.reshape", "dyn.reshape(%a, [3, 2])", [T(2, 3)], lambda a: a.reshape(3, 2)),
    ("dyn.squeeze", "dyn.squeeze", "dyn.squeeze(%a, [1])", [T(2, 1, 3)], lambda a: a.squeeze(1)),
    ("dyn.expand_dims", "dyn.expand_dims", "dyn.expand_dims(%a, [0, -1])", [T(2, 3)],
     lambda a: a.unsqueeze(0).unsqueeze(-1)),
    ("dyn.broadcast_to", "dyn.broadcast_to", "dyn.broadcast_to(%a, [2, 3])", [T(1, 3)],
     lambda a: a.expand(2, 3)),
] + [  # ops whose result is constant almost everywhere: differentiated through
    (op, op, "where(%s(%%a, %%b), %%a, %%b)" % op, [T(6), T(6)],
     lambda a, b, f=f: torch.where(f(a, b), a, b))
    for op, f in [("equal", torch.eq), ("not_equal", torch.ne), ("less", torch.lt),
                  ("less_equal", torch.le), ("greater", torch.gt), ("greater_equal", torch.ge)]
] + [
    (op, op, "where(%s(greater(%%a, 0f64), less(%%b, 0f64)), %%a, %%b)" % op, [T(6), T(6)],
     lambda a, b, f=f: torch.where(f(a > 0, b < 0), a, b))
    for op, f in [("logical_and", torch.logical_and), ("logical_or", torch.logical_or),
                  ("logical_xor", torch.logical_xor)]
] + [
    (op, op, "multiply(cast(%s(cast(%%a, dtype=\"int32\"), 3), dtype=\"float64\"), %%a)" % op,
     [AWAY(6)], lambda a, f=f: f(a.to(torch.int32), 3).double() * a)
    for op, f in [("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or),
                  ("bitwise_xor", torch.bitwise_xor), ("left_shift", torch.bitwise_left_shift),
                  ("right_shift", torch.bitwise_right_shift)]
] + [
    ("bitwise_not", "bitwise_not",
     "multiply(cast(bitwise_not(cast(%a, dtype=\"int32\")), dtype=\"float64\"), %a)",
     [AWAY(6)], lambda a: torch.bitwise_not(a.to(torch.int32)).double() * a),
    ("logical_not", "logical_not", "where(logical_not(greater(%a, 0f64)), %a, %b)",
     [T(6), T(6)], lambda a, b: torch.where(a <= 0, a, b)),
    ("isnan", "isnan", "where(isnan(%a), %b, %a)", [T(4), T(4)], lambda a, b: a + 0 * b),
    ("isinf", "isinf", "where(isinf(%a), %b, %a)", [T(4), T(4)], lambda a, b: a + 0 * b),
    ("isfinite", "isfinite", "where(isfinite(%a), %a, %b)", [T(4), T(4)],
     lambda a, b: a + 0 * b),
    ("zeros", "zeros", "add(zeros(shape=[4], dtype=\"float64\"), %a)", [T(4)], lambda a: a),
    ("ones", "ones", "multiply(ones(shape=[4], dtype=\"float64\"), %a)", [T(4)], lambda a: a),
    ("dyn.zeros", "dyn.zeros", "add(dyn.zeros([4], dtype=\"float64\"), %a)", [T(4)],
     lambda a: a),
    ("dyn.ones", "dyn.ones", "multiply(dyn.ones([4], dtype=\"float64\"), %a)", [T(4)],
     lambda a: a),
    ("shape_of", "shape_of", "multiply(cast(shape_of(%a), dtype=\"float64\"), %a)", [T(3)],
     lambda a: 3 * a),
    ("argsort", "argsort", same("argsort(%a)"), [T(4), T(4)], lambda a, b: a + 0 * b),
    ("searchsorted", "searchsorted", same("searchsorted([-1f64, 0f64, 1f64], %a)"), [T(4), T(4)],
     lambda a, b: a + 0 * b),
    ("unravel_index", "unravel_index", same("unravel_index(cast(%a, dtype=\"int32\"), [2, 3])"),
     [POS(4), T(4)], lambda a, b: a + 0 * b),
    ("reinterpret", "reinterpret", same("reinterpret(%a, dtype=\"int64\")"), [T(4), T(4)],
     lambda a, b: a + 0 * b),
    ("qnn.quantize", "qnn.quantize", same("qnn.quantize(cast(%a, dtype=\"float32\"), 0.5f, 0)"),
     [T(4), T(4)], lambda a, b: a + 0 * b),
    ("qnn.requantize", "qnn.requantize",
     same("qnn.requantize(cast(%a, dtype=\"int32\"), 0.5f, 0, 0.25f, 0)"), [T(4), T(4)],
     lambda a, b: a + 0 * b),
    ("fixed_point_multiply", "fixed_point_multiply",
     same("fixed_point_multiply(cast(%a, dtype=\"int32\"), multiplier=1073741824, shift=0)"),
     [T(4), T(4)], lambda a, b: a + 0 * b),
    ("qnn.add", "qnn.add",
     same("qnn.add(cast(%a, dtype=\"int8\"), cast(%a, dtype=\"int8\"), 0.5f, 0, 0.5f, 0, 0.5f, 0)"),
     [T(4), T(4)], lambda a, b: a + 0 * b),
    ("qnn.mul", "qnn.mul",
     same("qnn.mul(cast(%a, dtype=\"int8\"), cast(%a, dtype=\"int8\"), 0.5f, 0, 0.5f, 0, 1f, 0)"),
     [T(4), T(4)], lambda a, b: a + 0 * b),
    ("qnn.dense", "qnn.dense",
     same("qnn.dense(cast(reshape(%a, newshape=[2, 2]), dtype=\"int8\"), "
          "cast(reshape(%a, newshape=[2, 2]), dtype=\"int8\"), 0, 0, 0.5f, 0.5f, units=2)"),
     [T(4), T(4)], lambda a, b: a + 0 * b),
    ("qnn.conv2d", "qnn.conv2d",
     same("qnn.conv2d(cast(reshape(%a, newshape=[1, 1, 2, 2]), dtype=\"int8\"), "
          "cast(reshape(%a, newshape=[1, 1, 2, 2]), dtype=\"int8\"), 0, 0, 0.5f, 0.5f, "
          "channels=1, kernel_size=[2, 2])"), [T(4), T(4)], lambda a, b: a + 0 * b),
    ("vision.multibox_prior", "vision.multibox_prior",
     same("vision.multibox_prior(reshape(%a, newshape=[1, 1, 2, 2]))"), [T(4), T(4)],
     lambda a, b: a + 0 * b),
] + [
    (op, op, same(e), [T(4), T(4)], lambda a, b: a + 0 * b) for op, e in [
        ("random.key", "random.key_data(random.key(1))"),
        ("random.split", "random.key_data(random.split(random.key(1)).0)"),
        ("random.fold_in", "random.key_data(random.fold_in(random.key(1), 3))"),
        ("random.bits", "random.bits(random.key(1), shape=[2])"),
        ("random.uniform", "random.uniform(random.key(1), shape=[2])"),
        ("random.normal", "random.normal(random.key(1), shape=[2])"),
        ("random.bernoulli", "random.bernoulli(random.key(1), sigmoid(%a), shape=[4])"),
        ("random.key_data", "random.key_data(random.key(2))"),
        ("random.wrap_key", "random.key_data(random.wrap_key(cast([1, 2], dtype=\"uint32\")))"),
    ]
] + [
    ("ndarray_size", "ndarray_size",
     "multiply(cast(ndarray_size(%a), dtype=\"float64\"), %a)", [T(2, 3)], lambda a: 6 * a),
]
# nn.dropout and nn.dropout_train take keys: their mask is checked by tests/lit/passes.


def rly_type(x):
    return "Tensor[(%s), float64]" % ", ".join(str(d) for d in x.shape)


def fmt_scalar_lines(out):
    """The printed float64 scalars of rly's output, in order."""
    return [float(m.group(1)) for m in re.finditer(r"^(-?[0-9.e+-]+|-?inf|nan)f64$", out, re.M)]


def run(rly, script, mode, cwd):
    path = os.path.join(cwd, "case.rly")
    with open(path, "w") as f:
        f.write(script)
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    p = subprocess.run([rly, path], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    return p.returncode, p.stdout + p.stderr


def check_case(rly, case, rng, tmp, verbose):
    name, _, expr, specs, fn = case[:5]
    opts = case[5] if len(case) > 5 else {}
    xs = [draw(k, s, rng) for k, s in specs]
    with torch.no_grad():
        out = fn(*[torch.tensor(x) for x in xs]).numpy()
    r = rng.normal(0, 1, out.shape)
    names = [chr(ord("a") + i) for i in range(len(xs))]
    inputs = dict(zip(names, xs), r=r)
    params = ", ".join("%%%s: %s" % (n, rly_type(x)) for n, x in list(zip(names, xs)) + [("r", r)])
    pre, _, final = expr.rpartition(";")
    head = "def @f(%s) {\n  %s\n  let %%out = %s;\n  sum(multiply(%%out, %%r))\n}\n" % (
        params, pre + ";" if pre else "", final.strip())
    # torch autograd, float64
    tx = [torch.tensor(x, requires_grad=True) for x in xs]
    (fn(*tx) * torch.tensor(r)).sum().backward()
    want = [t.grad.numpy() for t in tx]
    # perturbed inputs for central differences
    fd_inputs, fd_lines = {}, []
    for i, x in enumerate(xs):
        for j in range(x.size):
            h = opts.get("h", 1e-6) * max(1.0, abs(x.flat[j]))
            for sgn in (1, -1):
                y = x.copy()
                y.flat[j] += sgn * h
                key = "%s_%d_%s" % (names[i], j, "p" if sgn > 0 else "m")
                fd_inputs[key] = y
                fd_lines.append((i, j, sgn, h, key))
    np.savez(os.path.join(tmp, "in.npz"), **inputs)
    np.savez(os.path.join(tmp, "fd.npz"), **fd_inputs)
    load = "".join(":load-tensor %%%s in.npz %s\n" % (n, n) for n in names + ["r"])
    args = ", ".join("%" + n for n in names + ["r"])
    grad_script = head + ":pass Gradient @f\n" + load + "let %%g = @f_grad(%s);\n" % args
    for i, n in enumerate(names):
        grad_script += "let %%g%d = %%g.1.%d;\n:save %%g%d g%d.npy\n" % (i, i, i, i)
    failures = []
    for mode in ("interp", "jit"):
        for i in range(len(names)):
            p = os.path.join(tmp, "g%d.npy" % i)
            if os.path.exists(p):
                os.remove(p)
        rc, text = run(rly, grad_script, mode, tmp)
        if rc != 0:
            return ["%s (%s): rly failed:\n%s" % (name, mode, text[-2000:])]
        for i, n in enumerate(names):
            got = np.load(os.path.join(tmp, "g%d.npy" % i))
            if got.shape != want[i].shape or not np.allclose(
                    got, want[i], rtol=opts.get("rtol", 1e-9), atol=opts.get("atol", 1e-12)):
                failures.append("%s (%s): d%s differs from torch:\n got %s\nwant %s"
                                % (name, mode, n, got, want[i]))
    # central differences of rly's @f
    fd_script = head + load
    for (i, j, sgn, h, key) in fd_lines:
        call = ", ".join("%q" if k == i else "%" + names[k] for k in range(len(names)))
        fd_script += ":load-tensor %%q fd.npz %s\n@f(%s, %%r)\n" % (key, call)
    rc, text = run(rly, fd_script, "interp", tmp)
    vals = fmt_scalar_lines(text)
    if rc != 0 or len(vals) != len(fd_lines):
        return failures + ["%s: finite differences: rly gave %d values for %d evaluations:\n%s"
                           % (name, len(vals), len(fd_lines), text[-2000:])]
    fd = [np.zeros_like(x) for x in xs]
    for (i, j, sgn, h, key), v in zip(fd_lines, vals):
        fd[i].flat[j] += sgn * v / (2 * h)
    rly_grads = [np.load(os.path.join(tmp, "g%d.npy" % i)) for i in range(len(names))]
    for i, n in enumerate(names):
        if not np.allclose(rly_grads[i], fd[i], rtol=opts.get("fd_rtol", 1e-5),
                           atol=opts.get("fd_atol", 1e-7)):
            failures.append("%s: d%s differs from central differences:\n got %s\n  fd %s"
                            % (name, n, rly_grads[i], fd[i]))
    if verbose:
        print("%-28s %s" % (name, "ok" if not failures else "FAILED"))
    return failures


def ops_with_gradients(rly):
    out = subprocess.run([rly, "--list-ops"], capture_output=True, text=True, check=True).stdout
    ops = []
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[-1] in ("yes", "zero") and not line.startswith("op"):
            ops.append(cols[0])
    return ops


def main():
    rly = sys.argv[1]
    verbose = "-v" in sys.argv
    only = None
    if "--only" in sys.argv:
        only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    rng = np.random.default_rng(7)
    failures, passed = [], 0
    covered = {c[1] for c in CASES} | {"nn.dropout", "nn.dropout_train"}
    missing = [op for op in ops_with_gradients(rly) if op not in covered]
    if missing and not only:
        failures.append("ops with a gradient rule but no case here: %s" % ", ".join(missing))
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            if only and case[0] not in only:
                continue
            f = check_case(rly, case, rng, tmp, verbose)
            failures += f
            passed += not f
    for f in failures:
        print("FAIL", f)
    print("gradients: %d passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
