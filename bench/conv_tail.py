#!/usr/bin/python3
"""bench/conv_tail: the long tail of CNN convolutions in rly against ONNX Runtime.

Cases (random weights, fixed seeds, batch 1, float32), each alone:
  resnext <shape>   each distinct grouped conv2d of torchvision's resnext50_32x4d
  regnetx <shape>   each distinct grouped conv2d of regnet_x_400mf
  effnet <shape>    each distinct depthwise conv2d of efficientnet_b0, with its
                    bias and SiLU (batch norm folded into the bias, as ONNX export does)
  shuffle <shape>   a ShuffleNetV2 block (stride 1 and 2): split, convs, concat,
                    channel shuffle
Each is exported by torch.onnx (opset 13) and timed as bench/cnn.py does
(its helpers: rly `:import` + `:time @main(%x) -n N`, ORT through
bench/ort_run.js, PyTorch), at 1 thread by default, in one run.  The table
gives medians in ms, rly/ORT and rly/PyTorch (< 1: rly faster), rly's and
ORT's GFLOP/s (convolutions: 2 * multiply-adds), and rly's max abs
difference from PyTorch.
Usage: /usr/bin/python3 bench/conv_tail.py [path/to/rly] [--only NAME] [--threads 1] [--cpu]"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the shared helpers: export, measure, print_head, ...)


def conv_flops(mod, shape):
    """2 * multiply-adds of a conv2d on an input of this shape."""
    kh, kw = mod.kernel_size
    oh = (shape[2] + 2 * mod.padding[0] - mod.dilation[0] * (kh - 1) - 1) // mod.stride[0] + 1
    ow = (shape[3] + 2 * mod.padding[1] - mod.dilation[1] * (kw - 1) - 1) // mod.stride[1] + 1
    return 2 * shape[0] * mod.out_channels * oh * ow * (mod.in_channels // mod.groups) * kh * kw


def tail_convs(torch, net, tag, keep, epilogue=None):
    """The distinct conv2ds of net that keep(mod) selects: (name, module,
    input shape, flops), each a fresh conv (then epilogue) with seeded weights."""
    seen, convs = set(), []

    def hook(mod, args, _out):
        shape = tuple(args[0].shape)
        key = (mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.groups, shape)
        if not keep(mod) or key in seen:
            return
        seen.add(key)
        name = (f"{tag} {mod.in_channels}->{mod.out_channels} g{mod.groups} "
                f"k{mod.kernel_size[0]} s{mod.stride[0]} @{shape[2]}")
        torch.manual_seed(len(convs))
        one = torch.nn.Conv2d(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride,
                              mod.padding, groups=mod.groups, bias=epilogue is not None)
        m = torch.nn.Sequential(one, epilogue()) if epilogue else one
        convs.append((name, m.eval(), shape, conv_flops(mod, shape)))

    hs = [m.register_forward_hook(hook) for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        net(torch.zeros(1, 3, 224, 224))
    for h in hs:
        h.remove()
    return convs


def shuffle_blocks(torch):
    """ShuffleNetV2 blocks of shufflenet_v2_x1_0's second stage (stride 2, then 1)."""
    from torchvision.models.shufflenetv2 import InvertedResidual
    out = []
    for cin, cout, stride, hw in ((24, 116, 2, 56), (116, 116, 1, 28)):
        torch.manual_seed(cin)
        blk = cnn.vision_model_init(torch, InvertedResidual(cin, cout, stride).eval())
        out.append((f"shuffle block {cin}->{cout} s{stride} @{hw}", blk, (1, cin, hw, hw), 0))
    return out


def cases(torch):
    grouped = lambda m: m.groups > 1 and m.groups != m.in_channels  # noqa: E731
    depthwise = lambda m: m.groups > 1 and m.groups == m.in_channels  # noqa: E731
    out = tail_convs(torch, cnn.vision_model(torch, "resnext50_32x4d"), "resnext", grouped)
    out += tail_convs(torch, cnn.vision_model(torch, "regnet_x_400mf"), "regnetx", grouped)
    out += tail_convs(torch, cnn.vision_model(torch, "efficientnet_b0"), "effnet", depthwise,
                      torch.nn.SiLU)
    return out + shuffle_blocks(torch)


def main():
    ap = cnn.arg_parser()
    ap.set_defaults(threads="1")
    args = ap.parse_args()
    torch = cnn.start(args, "bench/conv_tail.py", "python3-torch, python3-torchvision")
    ort_dir = cnn.ensure_ort()
    threads = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(0)
    todo = [c for c in cases(torch) if not args.only or args.only in c[0]]
    print("command: " + " ".join([sys.executable] + sys.argv))
    cnn.print_head(args.rly, torch, f"{'case':36s} {'thr':>3s} {'rly':>8s} {'ORT':>8s} "
                   f"{'PyTorch':>8s} {'rly/ORT':>7s} {'rly/PT':>6s} {'GF/s rly':>8s} "
                   f"{'GF/s ORT':>8s} {'diff rly':>9s}")
    with tempfile.TemporaryDirectory() as d:
        for name, mod, shape, flops in todo:
            x = rng.standard_normal(shape).astype(np.float32)
            xpath, onnx = cnn.save_case(torch, mod, x, d)
            for t in threads:
                rt, _, ot, pt, dr, _ = cnn.measure(args.rly, torch, mod, x, onnx, xpath, t, d,
                                                   ort_dir)
                gr = f"{flops / rt / 1e6:8.1f}" if flops else f"{'-':>8s}"
                go = f"{flops / ot / 1e6:8.1f}" if flops else f"{'-':>8s}"
                print(f"{name:36s} {t:3d} {rt:8.3f} {ot:8.3f} {pt:8.3f} {rt / ot:7.2f} "
                      f"{rt / pt:6.2f} {gr} {go} {dr:9.2e}", flush=True)


if __name__ == "__main__":
    main()
