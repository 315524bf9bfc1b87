#!/usr/bin/python3
"""bench/transformer: a GPT-2-sized decoder in rly against PyTorch and ONNX
Runtime, in one run.

The model (random weights, fixed seed, nothing downloaded) is GPT-2 small's
structure written out in PyTorch: token and position embeddings (`take`),
L blocks of pre-norm layer norm, causal multi-head self-attention (one
Linear for q, k and v, split, heads by reshape/transpose, batch_matmul,
scale, mask, softmax) and a tanh-GELU MLP, a final layer norm and the logits
by the embedding's transpose.  Defaults are GPT-2 small (12 layers, d=768,
12 heads, 3072 hidden, vocabulary 50257) on 8 sequences of 32 tokens;
`--batch 50` is the size the transformer issue measures.

The model is exported to ONNX by torch.onnx.export (opset 13) and run by:
  rly          `:import`, `:time @main(%x) -n N` (median per call, after the
               first call, which is reported too), jit mode, RLY_NUM_THREADS=T
  PyTorch      the module under torch.no_grad(), torch.set_num_threads(T)
  ORT          ONNX Runtime's CPU provider through onnxruntime-node
               (bench/ort_run.js; installed into bench/.ort when missing)
at T = 1 and 2 threads.  Prints medians in ms, the ratios rly/ORT and
rly/PyTorch (below 1: rly faster) and the largest relative difference of
rly's and ORT's logits from PyTorch's.  Timings are never asserted.
Usage: /usr/bin/python3 bench/transformer.py [path/to/rly] [--layers L] [--batch B]
       [--seq S] [--threads 1,2] [--runs N]"""
import argparse
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the ORT and PyTorch timers are shared)

ROOT = cnn.ROOT


def gpt2(torch, layers, d, heads, hidden, vocab, ctx):
    """GPT-2's decoder as a torch module: ids (B, S) int64 -> logits (B, S, vocab)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, hidden), nn.Linear(hidden, d)

        def forward(self, x, mask):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.reshape(b, s, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            att = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d // heads))
            att = F.softmax(att + mask, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            h = self.fc(self.ln2(x))
            h = 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * torch.pow(h, 3.0))))
            return x + self.out(h)

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            # the causal mask of the longest sequence (-1e4 above the diagonal)
            self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), -1e4), diagonal=1))

        def forward(self, ids):
            s = ids.shape[1]
            pos = torch.arange(s)
            mask = self.mask[:s, :s]
            x = self.wte(ids) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x, mask)
            return torch.matmul(self.ln(x), self.wte.weight.t())

    torch.manual_seed(0)
    mod = GPT2().eval()
    with torch.no_grad():
        for p in mod.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)
    return mod


def rel_diff(a, ref):
    return float(np.abs(a.reshape(ref.shape) - ref).max() / max(np.abs(ref).max(), 1e-30))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("bench/transformer.py needs PyTorch (python3-torch)")
    ort_dir = cnn.ensure_ort()
    mod = gpt2(torch, args.layers, 768, 12, 3072, 50257, args.seq)
    ids = np.random.default_rng(0).integers(0, 50257, (args.batch, args.seq)).astype(np.int64)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"cpu: {cpu}, {os.cpu_count()} cores; rly {args.rly}; torch {torch.__version__}")
    print(f"model: GPT-2 structure, {args.layers} layers, d=768, 12 heads, on "
          f"{args.batch} x {args.seq} tokens; {args.runs} timed runs each")
    print("times: median ms per call; ratios: rly time / other time (< 1: rly faster); "
          "diff: max |logits - PyTorch's| / max |PyTorch's|")
    head = (f"{'thr':>3s} {'rly':>9s} {'rly 1st':>9s} {'ORT':>9s} {'PyTorch':>9s} "
            f"{'rly/ORT':>8s} {'rly/PT':>7s} {'diff rly':>9s} {'diff ORT':>9s}")
    print(head)
    print("-" * len(head))
    with tempfile.TemporaryDirectory() as d:
        xpath, onnx = os.path.join(d, "ids.npy"), os.path.join(d, "gpt2.onnx")
        np.save(xpath, ids)
        cnn.export(torch, mod, ids, onnx, ("ids", "logits"))
        for t in [int(x) for x in args.threads.split(",")]:
            pt, ref = cnn.torch_time(torch, mod, ids, t, args.runs)
            ot, oy = cnn.ort_time(ort_dir, onnx, xpath, t, args.runs, d)
            firsts = []
            rt, ry = cnn.rly_time(args.rly, onnx, xpath, t, args.runs, d, firsts)
            first = firsts[0]
            print(f"{t:3d} {rt:9.1f} {first:9.1f} {ot:9.1f} {pt:9.1f} {rt / ot:8.2f} "
                  f"{rt / pt:7.2f} {rel_diff(ry, ref):9.2e} {rel_diff(oy, ref):9.2e}", flush=True)


if __name__ == "__main__":
    main()
