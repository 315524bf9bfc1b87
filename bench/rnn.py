#!/usr/bin/python3
"""bench/rnn: LSTM and GRU layers in rly against PyTorch and ONNX Runtime,
in one run.

Models (torch.nn.LSTM / torch.nn.GRU, random weights, fixed seeds, float32;
the output sequence y is the result): a name gives the layer, then
T (time steps) x B (batch), input size I, hidden size H and layers L:
  lstm-large   T 50, B 1,  I 256, H 512, L 2   (latency: one sequence)
  lstm-batch   T 50, B 16, I 256, H 512, L 2
  lstm-wide    T 50, B 64, I 512, H 512, L 1
  lstm-small   T 100, B 1, I 128, H 128, L 1   (per-step overhead)
  lstm-long    T 200, B 4, I 64,  H 64,  L 1
  gru-batch    T 50, B 16, I 256, H 512, L 2
Each is exported to ONNX by torch.onnx.export (opset 13, the sequence
length fixed: rly writes the steps out) and run by:
  rly          `:import`, then `:time @main(%x) -n N` (the median per call,
               after a first call that compiles, also reported), jit mode,
               RLY_NUM_THREADS=T
  PyTorch      the module under torch.no_grad(), torch.set_num_threads(T)
  ORT          ONNX Runtime's CPU provider through onnxruntime-node
               (bench/ort_run.js; installed into bench/.ort when missing)
at T = 1 and 2 threads.  Prints medians in ms, the ratios rly/ORT and
rly/PyTorch (below 1: rly faster) and the max abs difference of rly's and
ORT's outputs from PyTorch's.  Timings are never asserted.
Usage: /usr/bin/python3 bench/rnn.py [path/to/rly] [--only NAME] [--threads 1,2] [--cpu]
(--cpu: CPU time per call instead of wall time, for a busy machine; compare at 1 thread)"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the ORT, PyTorch and rly timers are shared)

MODELS = [  # name, kind, T, B, I, H, L
    ("lstm-large", "lstm", 50, 1, 256, 512, 2),
    ("lstm-batch", "lstm", 50, 16, 256, 512, 2),
    ("lstm-wide", "lstm", 50, 64, 512, 512, 1),
    ("lstm-small", "lstm", 100, 1, 128, 128, 1),
    ("lstm-long", "lstm", 200, 4, 64, 64, 1),
    ("gru-batch", "gru", 50, 16, 256, 512, 2),
]


def rnn_module(torch, kind, i, h, layers):
    """The layer with its output sequence as the one result."""
    torch.manual_seed(0)
    rnn = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(i, h, num_layers=layers).eval()

    class Seq(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            return self.rnn(x)[0]

    return Seq().eval()


def main():
    args = cnn.arg_parser().parse_args()
    torch = cnn.start(args, "bench/rnn.py")
    ort_dir = cnn.ensure_ort()
    threads = [int(t) for t in args.threads.split(",")]
    models = [m for m in MODELS if not args.only or args.only in m[0]]
    cnn.print_head(args.rly, torch, f"{'model (T x B, I, H, L)':34s} {'thr':>3s} {'rly':>9s} {'first':>8s} "
                   f"{'ORT':>9s} {'PyTorch':>9s} {'rly/ORT':>8s} {'rly/PT':>7s} {'diff rly':>9s} "
                   f"{'diff ORT':>9s}")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        for name, kind, T, B, I, H, L in models:
            mod = rnn_module(torch, kind, I, H, L)
            x = rng.standard_normal((T, B, I)).astype(np.float32)
            xpath, onnx = cnn.save_case(torch, mod, x, d)
            label = f"{name} ({T}x{B}, {I}, {H}, {L})"
            for t in threads:
                rt, first, ot, pt, dr, do = cnn.measure(args.rly, torch, mod, x, onnx, xpath, t, d, ort_dir)
                print(f"{label:34s} {t:3d} {rt:9.3f} {first:8.1f} {ot:9.3f} {pt:9.3f} "
                      f"{rt / ot:8.2f} {rt / pt:7.2f} {dr:9.2e} {do:9.2e}", flush=True)


if __name__ == "__main__":
    main()
