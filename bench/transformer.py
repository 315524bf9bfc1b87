#!/usr/bin/python3
"""bench/transformer: GPT-2- and BERT-sized transformers in rly against PyTorch
and ONNX Runtime, in one run.

The models (random weights, fixed seed, nothing downloaded) are written out
in PyTorch:
  gpt2   GPT-2 small's decoder: token and position embeddings (`take`), 12
         pre-norm blocks of causal multi-head self-attention (one Linear for
         q, k and v, split, heads by reshape/transpose, batch_matmul, scale,
         mask, softmax) and a tanh-GELU MLP, a final layer norm and the
         logits by the embedding's transpose (vocabulary 50257); by default
         on 50 sequences of 32 tokens (the size the transformer issue names);
  bert   a BERT-base-sized encoder: embeddings and their layer norm, 12
         post-norm blocks of bidirectional attention and an erf-GELU MLP
         (d=768, 12 heads, 3072 hidden); the hidden states are the output;
         one sequence each of 32, 128 and 512 tokens;
  encoder  torch.nn.TransformerEncoder: 6 post-norm layers of d=512, 8 heads,
         2048 hidden, batch_first, on float32 inputs (1, S, 512) for S in 16,
         64, 200 and 512, exported twice (opset 14): once with a dynamic
         sequence axis (one model for every S: rly runs it on copies
         specialized per length) and once per S with S fixed; rows `dyn` and
         `static`, then rly's dynamic/static ratio per S (ORT's is on the
         dynamic model, its own static row on the fixed one).
Each is exported to ONNX by torch.onnx.export (opset 13 unless said) and run by:
  rly          `:import`, `:time @main(%x) -n N` (median per call, after the
               first call, which is reported too), jit mode, RLY_NUM_THREADS=T
  PyTorch      the module under torch.no_grad(), torch.set_num_threads(T)
  ORT          ONNX Runtime's CPU provider through onnxruntime-node
               (bench/ort_run.js; installed into bench/.ort when missing)
at T = 1 and 2 threads.  Prints medians in ms, the ratios rly/ORT and
rly/PyTorch (below 1: rly faster) and the largest relative difference of
rly's and ORT's outputs from PyTorch's.  Timings are never asserted.
Usage: /usr/bin/python3 bench/transformer.py [path/to/rly] [--models gpt2,bert,encoder]
       [--layers L] [--batch B] [--seq S] [--bert-seqs 32,128,512]
       [--encoder-seqs 16,64,200,512] [--threads 1,2]
       [--runs N] [--cpu]"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnn  # noqa: E402  (the ORT and PyTorch timers are shared)
import gpt2_text  # noqa: E402

ROOT = cnn.ROOT


def block_layers(blk, nn, d, hidden):
    """A transformer block's layers: two layer norms, the q/k/v and output projections, the MLP."""
    blk.ln1, blk.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
    blk.qkv, blk.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
    blk.fc, blk.out = nn.Linear(d, hidden), nn.Linear(hidden, d)


def gpt2(torch, layers, d, heads, hidden, vocab, ctx):
    """GPT-2's decoder as a torch module: ids (B, S) int64 -> logits (B, S, vocab)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            block_layers(self, nn, d, hidden)

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


def bert(torch, layers, d, heads, hidden, vocab, ctx):
    """A BERT-base-sized encoder as a torch module: ids (B, S) int64 -> hidden states (B, S, d)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            block_layers(self, nn, d, hidden)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (t.reshape(b, s, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            att = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d // heads))
            y = torch.matmul(F.softmax(att, dim=-1), v).transpose(1, 2).reshape(b, s, d)
            x = self.ln1(x + self.proj(y))
            return self.ln2(x + self.out(F.gelu(self.fc(x))))

    class BERT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.ln = nn.LayerNorm(d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))

        def forward(self, ids):
            x = self.ln(self.wte(ids) + self.wpe(torch.arange(ids.shape[1])))
            for blk in self.blocks:
                x = blk(x)
            return x

    torch.manual_seed(1)
    mod = BERT().eval()
    with torch.no_grad():
        for p in mod.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)
    return mod


def encoder(torch, layers):
    """nn.TransformerEncoder (d=512, 8 heads, 2048 hidden, post-norm, batch_first, dropout 0)."""
    nn = torch.nn
    torch.manual_seed(2)
    layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


def export_encoder(torch, mod, seq, path, dynamic):
    import warnings
    x = torch.randn(1, seq, 512)
    axes = {"x": {1: "seq"}, "y": {1: "seq"}} if dynamic else None
    # PyTorch's fused inference path (no ONNX form) is taken only without autograd
    with warnings.catch_warnings(), torch.enable_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (x,), path, opset_version=14, input_names=["x"],
                          output_names=["y"], dynamic_axes=axes)


def row(label, t, rt, first, ot, pt, ry, oy, ref):
    print(f"{label:13s} {t:3d} {rt:9.1f} {first:9.1f} {ot:9.1f} {pt:9.1f} {rt / ot:8.2f} "
          f"{rt / pt:7.2f} {rel_diff(ry, ref):9.2e} {rel_diff(oy, ref):9.2e}", flush=True)


def run_encoder(torch, args, ort_dir, threads):
    """The encoder at every length of --encoder-seqs: the dynamic model (exported once) and a
    static export per length, each in rly and ORT, PyTorch once per length."""
    mod = encoder(torch, args.encoder_layers)
    with tempfile.TemporaryDirectory() as d:
        dyn = os.path.join(d, "encoder_dyn.onnx")
        export_encoder(torch, mod, 8, dyn, True)
        for seq in map(int, args.encoder_seqs.split(",")):
            x = np.random.default_rng(seq).standard_normal((1, seq, 512)).astype(np.float32)
            xpath, static = os.path.join(d, "x.npy"), os.path.join(d, f"encoder_{seq}.onnx")
            np.save(xpath, x)
            export_encoder(torch, mod, seq, static, False)
            for t in threads:
                pt, ref = cnn.torch_time(torch, mod, x, t, args.runs)
                times = {}
                for kind, onnx in (("dyn", dyn), ("static", static)):
                    ot, oy = cnn.ort_time(ort_dir, onnx, xpath, t, args.runs, d)
                    first = []
                    rt, ry = cnn.rly_time(args.rly, onnx, xpath, t, args.runs, d, first)
                    times[kind] = (rt, ot)
                    row(f"enc {kind} {seq}", t, rt, first[0], ot, pt, ry, oy, ref)
                (rd, od), (rs, os_) = times["dyn"], times["static"]
                print(f"{'':13s} {t:3d} encoder 1x{seq}: rly dynamic/static {rd / rs:.2f}, "
                      f"ORT dynamic/static {od / os_:.2f}, rly dynamic / ORT dynamic {rd / od:.2f}",
                      flush=True)


def rel_diff(a, ref):
    return float(np.abs(a.reshape(ref.shape) - ref).max() / max(np.abs(ref).max(), 1e-30))


def configs(args):
    """(label, builder, batch, seq) for every model asked for."""
    out = []
    for m in args.models.split(","):
        if m == "encoder":
            continue  # run_encoder
        if m == "gpt2":
            out.append((f"gpt2 {args.batch}x{args.seq}", gpt2, args.batch, args.seq, 50257))
        elif m == "bert":
            out += [(f"bert 1x{s}", bert, 1, s, 30522) for s in map(int, args.bert_seqs.split(","))]
        else:
            sys.exit(f"bench/transformer.py: unknown model {m} (gpt2, bert, encoder)")
    return out


def rly_text_time(rly, text, npz, xpath, threads, runs, d, first):
    """rly on the model as Relay text (`:load`, `:bind @main` the weights):
    the median ms per call (CPU ms with --cpu) and the output."""
    ypath = os.path.join(d, f"rly_text_{threads}.npy")
    script = (f":load {text}\n:bind @main {npz}\n:load-tensor %x {xpath}\n"
              f":time @main(%x) -n {runs}\nlet %y = @main(%x);\n:save %y {ypath}\n")
    env = dict(os.environ, NO_COLOR="1", RLY_NUM_THREADS=str(threads))
    p = subprocess.run([rly, "--exec", "jit", "-"], input=script, capture_output=True, text=True,
                       env=env, timeout=3600)
    m = re.search(r"cpu time: median ([\d.]+) (ns|us|ms|s)\b" if cnn.CPU else
                  r"median ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"rly failed on {text}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    f = re.search(r"first call: ([\d.]+) (ns|us|ms|s)\b", p.stdout)
    first.append(float(f.group(1)) * cnn.UNIT[f.group(2)] if f else float("nan"))
    return float(m.group(1)) * cnn.UNIT[m.group(2)], np.load(ypath)


def run_one(torch, args, ort_dir, cfg, d, threads):
    label, build, batch, seq, vocab = cfg
    mod = build(torch, args.layers, 768, 12, 3072, vocab, seq)
    ids = np.random.default_rng(0).integers(0, vocab, (batch, seq)).astype(np.int64)
    xpath, onnx = os.path.join(d, "ids.npy"), os.path.join(d, "model.onnx")
    np.save(xpath, ids)
    cnn.export(torch, mod, ids, onnx, ("ids", "out"))
    text, npz = os.path.join(d, "model.rly"), os.path.join(d, "weights.npz")
    as_text = build is gpt2 and not args.no_text
    if as_text:
        gpt2_text.write(mod, batch, seq, 12, text, npz)
    for t in threads:
        pt, ref = cnn.torch_time(torch, mod, ids, t, args.runs)
        ot, oy = cnn.ort_time(ort_dir, onnx, xpath, t, args.runs, d)
        runs = [("", cnn.rly_time, onnx)]
        if as_text:
            runs.append((" text", lambda r, m, x, th, n, dd, fs: rly_text_time(r, text, npz, x, th, n,
                                                                              dd, fs), text))
        for suffix, timer, model in runs:
            firsts = []
            rt, ry = timer(args.rly, model, xpath, t, args.runs, d, firsts)
            print(f"{label + suffix:13s} {t:3d} {rt:9.1f} {firsts[0]:9.1f} {ot:9.1f} {pt:9.1f} "
                  f"{rt / ot:8.2f} {rt / pt:7.2f} {rel_diff(ry, ref):9.2e} {rel_diff(oy, ref):9.2e}",
                  flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rly", nargs="?", default=os.path.join(ROOT, "build", "rly"))
    ap.add_argument("--models", default="gpt2,bert,encoder")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--bert-seqs", default="32,128,512")
    ap.add_argument("--encoder-seqs", default="16,64,200,512")
    ap.add_argument("--encoder-layers", type=int, default=6)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-text", action="store_true", help="GPT-2 only through ONNX, not as Relay text")
    ap.add_argument("--cpu", action="store_true", help="compare CPU time per call, not wall time")
    args = ap.parse_args()
    torch = cnn.start(args, "bench/transformer.py")
    ort_dir = cnn.ensure_ort()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"cpu: {cpu}, {os.cpu_count()} cores; rly {args.rly}; torch {torch.__version__}")
    print(f"models: gpt2/bert {args.layers} layers, d=768, 12 heads, 3072 hidden; encoder "
          f"{args.encoder_layers} layers, d=512, 8 heads, 2048 hidden; {args.runs} timed runs each")
    print(f"times: median {'CPU ' if args.cpu else ''}ms per call; ratios: rly time / other time "
          "(< 1: rly faster); diff: max |output - PyTorch's| / max |PyTorch's|")
    head = (f"{'model':13s} {'thr':>3s} {'rly':>9s} {'rly 1st':>9s} {'ORT':>9s} {'PyTorch':>9s} "
            f"{'rly/ORT':>8s} {'rly/PT':>7s} {'diff rly':>9s} {'diff ORT':>9s}")
    print(head)
    print("-" * len(head))
    threads = [int(x) for x in args.threads.split(",")]
    for cfg in configs(args):
        with tempfile.TemporaryDirectory() as d:
            run_one(torch, args, ort_dir, cfg, d, threads)
    if "encoder" in args.models.split(","):
        run_encoder(torch, args, ort_dir, threads)


if __name__ == "__main__":
    main()
