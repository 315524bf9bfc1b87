#!/usr/bin/python3
"""bench/video: a video network's 3-D convolutions in rly against PyTorch and
ONNX Runtime, in one run (bench/cnn.py's export, timers and table).

Models (random weights, fixed seeds, nothing downloaded; batch 1, float32):
  r3d_18 16x112   torchvision.models.video.r3d_18 on a 1x3x16x112x112 clip
  r3d_18 8x112    the same on 8 frames (half the time)
  conv3d <shape>  each distinct nn.Conv3d of r3d_18 (16 frames) alone, on its
                  input shape there; the table adds rly's GFLOP/s
Usage: /usr/bin/python3 bench/video.py [path/to/rly] [--only NAME] [--threads 1] [--cpu]"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402


def r3d_18(torch):
    """r3d_18 with random weights; batch norm statistics drawn so activations
    stay of order 1 through the depth (as cnn.vision_model's)."""
    import torchvision
    torch.manual_seed(1)
    return cnn.vision_model_init(torch, torchvision.models.video.r3d_18(weights=None).eval())


def conv3d_layers(torch, net, shape):
    """Each distinct Conv3d of the network: (name, module, input shape, GFLOP)."""
    seen, convs = set(), []

    def hook(mod, args, out):
        x = tuple(args[0].shape)
        key = (mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, x)
        if key in seen:
            return
        seen.add(key)
        k = mod.kernel_size
        flop = 2 * out.numel() * mod.in_channels * k[0] * k[1] * k[2] / 1e9
        name = (f"conv3d {mod.in_channels}>{mod.out_channels} k{''.join(map(str, k))} "
                f"s{''.join(map(str, mod.stride))} {x[2]}x{x[3]}")
        convs.append((name, mod, x, flop))

    hooks = [m.register_forward_hook(hook) for m in net.modules() if isinstance(m, torch.nn.Conv3d)]
    with torch.no_grad():
        net(torch.zeros(shape))
    for h in hooks:
        h.remove()
    return convs


def main():
    args = cnn.arg_parser().parse_args()
    torch = cnn.start(args, "bench/video.py", "python3-torch, python3-torchvision")
    ort_dir = cnn.ensure_ort()
    threads = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(0)
    net = r3d_18(torch)
    models = [("r3d_18 16x112", net, (1, 3, 16, 112, 112), None),
              ("r3d_18 8x112", net, (1, 3, 8, 112, 112), None)]
    models += conv3d_layers(torch, net, (1, 3, 16, 112, 112))
    if args.only:
        models = [m for m in models if args.only in m[0]]
    cnn.print_head(args.rly, torch, f"{'model':34s} {'thr':>3s} {'rly':>9s} {'ORT':>9s} {'PyTorch':>9s} "
                   f"{'rly/ORT':>8s} {'rly/PT':>7s} {'GFLOP/s':>8s} {'diff rly':>9s} {'diff ORT':>9s}")
    with tempfile.TemporaryDirectory() as d:
        for name, mod, shape, gflop in models:
            x = rng.standard_normal(shape).astype(np.float32)
            xpath, onnx = cnn.save_case(torch, mod, x, d)
            for t in threads:
                rt, _, ot, pt, dr, do = cnn.measure(args.rly, torch, mod, x, onnx, xpath, t, d, ort_dir)
                rate = f"{gflop / rt * 1e3:8.1f}" if gflop else f"{'':8s}"
                print(f"{name:34s} {t:3d} {rt:9.3f} {ot:9.3f} {pt:9.3f} {rt / ot:8.2f} "
                      f"{rt / pt:7.2f} {rate} {dr:9.2e} {do:9.2e}", flush=True)


if __name__ == "__main__":
    main()
