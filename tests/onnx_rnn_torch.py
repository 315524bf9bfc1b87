#!/usr/bin/python3
"""onnx_rnn_torch.py — the ONNX importer's LSTM, GRU and RNN against PyTorch.

Usage: /usr/bin/python3 tests/onnx_rnn_torch.py PATH/TO/rly [-v] [-k NAME]

torch.nn.LSTM, torch.nn.GRU and torch.nn.RNN (random weights, fixed seeds; input size 8,
hidden size 16, batch 2; 1 and 2 layers, bidirectional, with and without
initial states, batch_first; opsets 11 to 17) are exported with the
sequence axis dynamic (`dynamic_axes`; one model also with a dynamic
batch); two nodes with layout=1, which torch does not emit, are built with
onnx.helper from a batch_first module's weights, and four more (direction
reverse, GRU's linear_before_reset=0, no bias, other activations) with
random weights and a numpy reference written from the ONNX operator's
equations; each is imported ONCE into an rly session and run on sequences of
lengths 1, 3, 7 and 20 in both execution modes (`--exec jit` and
`--exec interp`).  Every output must match PyTorch's elementwise within
|rly - ref| <= 1e-5 + 1e-5 * |ref| (ref: torch, or numpy for those two).  In the jit mode `:kernels` is
read after the first length and after the last: no kernel may be added by
the new lengths (the loop's step kernels serve every length), and the
step's fused gate product (a kernel with nn.dense) and its fused gate math
(a kernel with the gates' strided_slice; not with a dynamic batch, whose
slices have no compiled kernel) must have run at least once per time step.  One model also goes through
`rly --import -o` (the loop printed as text and parsed back) and
`--params`.  Then every model with its sequence length fixed in the file
(lengths 1, 7 and 40: the importer writes the steps out instead of a
loop) is imported into one session per mode and checked the same way; the
40 steps may add at most STATIC_NEW_KERNELS kernels to those of the 7
(their projections and outputs: the steps share their kernels).  Prints the max error per model and mode and
"onnx_rnn_torch: N passed, N failed"; exits non-zero on any failure and
with 77 (skipped) when torch or onnx is not installed."""
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

try:
    import onnx  # noqa: F401  (torch.onnx.export needs it)
    import torch
    import torch.nn as nn
except ImportError as e:  # test-only dependencies (scripts/install-deps, make test)
    print(f"onnx_rnn_torch: skipped ({e}; install python3-torch python3-onnx)")
    sys.exit(77)

torch.set_grad_enabled(False)
warnings.filterwarnings("ignore")  # the exporter's notes on tracing
MODES = ("jit", "interp")
LENGTHS = (1, 3, 7, 20)
STATIC_LENGTHS = (1, 7, 40)
STATIC_NEW_KERNELS = 6
ATOL = RTOL = 1e-5
INPUT, HIDDEN, BATCH = 8, 16, 2


class Rnn(nn.Module):
    """An nn.LSTM, nn.GRU or nn.RNN whose outputs are a flat tuple (y, h[, c])."""

    def __init__(self, kind, states, **kw):
        super().__init__()
        self.lstm = kind == "lstm"
        self.states = states
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind](INPUT, HIDDEN, **kw)

    def forward(self, x, *s):
        if not self.states:
            y, st = self.rnn(x)
        else:
            y, st = self.rnn(x, (s[0], s[1]) if self.lstm else s[0])
        return (y,) + (tuple(st) if self.lstm else (st,))


# (name, kind, opset, initial states, dynamic batch, nn.LSTM/GRU keywords)
CASES = [
    ("lstm_1layer", "lstm", 13, False, False, {}),
    ("lstm_2layers_bidir_states", "lstm", 14, True, False, {"num_layers": 2, "bidirectional": True}),
    ("lstm_batch_first_states", "lstm", 11, True, False, {"batch_first": True}),
    ("lstm_dynamic_batch", "lstm", 17, False, True, {}),
    ("gru_1layer", "gru", 17, False, False, {}),
    ("gru_2layers_bidir_states", "gru", 13, True, False, {"num_layers": 2, "bidirectional": True}),
    ("gru_2layers_batch_first", "gru", 12, False, False, {"num_layers": 2, "batch_first": True}),
    ("lstm_layout1_bidir", "lstm", 14, True, False, {"layout": 1, "bidirectional": True}),
    ("gru_layout1", "gru", 14, True, False, {"layout": 1}),
    ("gru_reverse_lbr0_state", "gru", 14, True, False, {"direction": "reverse", "linear_before_reset": 0}),
    ("lstm_reverse_nobias", "lstm", 13, False, False, {"direction": "reverse", "bias": False}),
    ("lstm_bidir_activations", "lstm", 13, False, False,
     {"direction": "bidirectional", "activations": ["Sigmoid", "Relu", "Tanh", "Tanh", "Tanh", "Relu"]}),
    ("gru_activations_state", "gru", 11, True, False,
     {"direction": "forward", "linear_before_reset": 1, "activations": ["Relu", "Sigmoid"]}),
    # after the others, whose seeds follow their place in the list
    ("rnn_1layer", "rnn", 14, False, False, {}),
    ("rnn_2layers_bidir_states", "rnn", 13, True, False, {"num_layers": 2, "bidirectional": True}),
    ("rnn_relu_batch_first", "rnn", 14, False, False, {"nonlinearity": "relu", "batch_first": True}),
]


def make_case(i, name, kind, opset, states, dyn_batch, kw, folder):
    """Exports the model (or builds it with layout 1); returns (path,
    inputs(length, batch): numpy inputs, reference(inputs): outputs)."""
    if kw.get("layout") == 1:
        return layout1_case(i, name, kind, opset, kw, folder)
    if "direction" in kw:
        return numpy_case(i, name, kind, opset, kw, folder)
    torch.manual_seed(100 + i)
    mod = Rnn(kind, states, **kw).eval()
    for p in mod.parameters():  # weights of order 1, so the gates are not saturated
        p.data = torch.randn(p.shape) * 0.3
    bf = kw.get("batch_first", False)
    seq_ax, batch_ax = (1, 0) if bf else (0, 1)
    nstates = (2 if kind == "lstm" else 1) if states else 0
    xs = inputs_for(mod, 5, nstates, seed=1)
    names = ["x"] + [f"s{j}" for j in range(nstates)]
    dynamic = {"x": {seq_ax: "seq"}}
    if dyn_batch:
        dynamic["x"][batch_ax] = "batch"
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(mod, tuple(torch.from_numpy(x) for x in xs), path, opset_version=opset,
                      input_names=names, dynamic_axes=dynamic)
    return (path, lambda L, batch: inputs_for(mod, L, nstates, seed=2, batch=batch),
            lambda xs: [o.numpy() for o in mod(*(torch.from_numpy(x) for x in xs))])


def layout1_case(i, name, kind, opset, kw, folder):
    """An LSTM or GRU node with layout=1 (batch first everywhere), built with
    onnx.helper from a torch module's weights; the reference is the module
    with batch_first=True, its states transposed to (B, D, H)."""
    from onnx import TensorProto, helper
    torch.manual_seed(100 + i)
    bidir = kw.get("bidirectional", False)
    mod = Rnn(kind, True, batch_first=True, bidirectional=bidir).eval()
    for p in mod.parameters():
        p.data = torch.randn(p.shape) * 0.3
    lstm, nd = kind == "lstm", 2 if bidir else 1
    order = [0, 3, 1, 2] if lstm else [1, 0, 2]  # torch's gates (i f g o | r z n) as ONNX's (i o f c | z r h)

    def gates(t):
        t = t.numpy()
        return np.concatenate([t[g * HIDDEN:(g + 1) * HIDDEN] for g in order])

    sfx = ["_l0", "_l0_reverse"][:nd]
    w = np.stack([gates(getattr(mod.rnn, "weight_ih" + s)) for s in sfx])
    r = np.stack([gates(getattr(mod.rnn, "weight_hh" + s)) for s in sfx])
    b = np.stack([np.concatenate([gates(getattr(mod.rnn, "bias_ih" + s)), gates(getattr(mod.rnn, "bias_hh" + s))])
                  for s in sfx])
    states = ["h0", "c0"] if lstm else ["h0"]
    outs = ["Y", "Y_h", "Y_c"] if lstm else ["Y", "Y_h"]
    attrs = {"hidden_size": HIDDEN, "layout": 1, "direction": "bidirectional" if bidir else "forward"}
    if not lstm:
        attrs["linear_before_reset"] = 1
    node = helper.make_node(kind.upper(), ["X", "W", "R", "B", ""] + states, outs, name=name, **attrs)
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.flatten()) for n, a in (("W", w), ("R", r), ("B", b))]
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [BATCH, "seq", INPUT])] +
        [helper.make_tensor_value_info(s, TensorProto.FLOAT, [BATCH, nd, HIDDEN]) for s in states],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    path = os.path.join(folder, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)

    def inputs(L, batch):
        xs = inputs_for(mod, L, len(states), seed=2, batch=batch)
        return xs[:1] + [np.ascontiguousarray(s.transpose(1, 0, 2)) for s in xs[1:]]

    def reference(xs):
        ys = mod(*(torch.from_numpy(x) for x in xs[:1]),
                 *(torch.from_numpy(np.ascontiguousarray(s.transpose(1, 0, 2))) for s in xs[1:]))
        y = ys[0].numpy()
        return [y.reshape(y.shape[0], y.shape[1], nd, HIDDEN)] + [o.numpy().transpose(1, 0, 2) for o in ys[1:]]

    return path, inputs, reference


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTS = {"Sigmoid": sigmoid, "Tanh": np.tanh, "Relu": lambda v: np.maximum(v, 0)}


def numpy_rnn(kind, x, w, r, b, h0, c0, direction, lbr, acts=None):
    """ONNX LSTM / GRU (layout 0) in float64: Y, Y_h[, Y_c]; acts: the
    activations f, g[, h] of each direction by name (default Sigmoid, Tanh)."""
    lstm, nd, hid = kind == "lstm", w.shape[0], r.shape[2]
    g = 4 if lstm else 3
    per = 3 if lstm else 2
    acts = acts or ["Sigmoid", "Tanh", "Tanh"][:per] * nd
    x, w, r = x.astype(np.float64), w.astype(np.float64), r.astype(np.float64)
    b = np.zeros((nd, 2 * g * hid)) if b is None else b.astype(np.float64)
    ys, hs, cs = [], [], []
    for d in range(nd):
        h = np.zeros((x.shape[1], hid)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros_like(h) if c0 is None else c0[d].astype(np.float64)
        wb, rb = b[d, :g * hid], b[d, g * hid:]
        y = [None] * x.shape[0]
        steps = range(x.shape[0])
        fa, ga, ha = [ACTS[a] for a in (acts[d * per:(d + 1) * per] + ["Tanh"])[:3]]
        for t in (reversed(steps) if direction == "reverse" or d == 1 else steps):
            xw = x[t] @ w[d].T + wb
            part = lambda v, k: v[:, k * hid:(k + 1) * hid]  # noqa: E731
            if lstm:
                a = xw + h @ r[d].T + rb
                i, o, f, z = fa(part(a, 0)), fa(part(a, 1)), fa(part(a, 2)), ga(part(a, 3))
                c = f * c + i * z
                h = o * ha(c)
            else:
                hr = h @ r[d].T + rb
                z, rg = fa(part(xw, 0) + part(hr, 0)), fa(part(xw, 1) + part(hr, 1))
                rh = r[d][2 * hid:]
                n = ga(part(xw, 2) + (rg * part(hr, 2) if lbr else (rg * h) @ rh.T + rb[2 * hid:]))
                h = (1 - z) * n + z * h
            y[t] = h
        ys.append(np.stack(y)), hs.append(h), cs.append(c)
    outs = [np.stack(ys, 1), np.stack(hs)] + ([np.stack(cs)] if lstm else [])
    return [o.astype(np.float32) for o in outs]


def numpy_case(i, name, kind, opset, kw, folder):
    """A node built with onnx.helper from random weights (attributes torch
    does not emit); the reference is numpy_rnn."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(200 + i)
    lstm, g = kind == "lstm", 4 if kind == "lstm" else 3
    nd = 2 if kw["direction"] == "bidirectional" else 1
    w = (rng.standard_normal((nd, g * HIDDEN, INPUT)) * 0.3).astype(np.float32)
    r = (rng.standard_normal((nd, g * HIDDEN, HIDDEN)) * 0.3).astype(np.float32)
    b = None if kw.get("bias") is False else (rng.standard_normal((nd, 2 * g * HIDDEN)) * 0.3).astype(np.float32)
    states = (["h0", "c0"] if lstm else ["h0"]) if "linear_before_reset" in kw else []
    outs = ["Y", "Y_h", "Y_c"] if lstm else ["Y", "Y_h"]
    attrs = {"hidden_size": HIDDEN, "direction": kw["direction"]}
    if not lstm:
        attrs["linear_before_reset"] = kw.get("linear_before_reset", 0)
    if "activations" in kw:
        attrs["activations"] = kw["activations"]
    ins = ["X", "W", "R", "B" if b is not None else ""] + (["", *states] if states else [])
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.flatten())
             for n, a in (("W", w), ("R", r), ("B", b)) if a is not None]
    graph = helper.make_graph(
        [helper.make_node(kind.upper(), ins, outs, name=name, **attrs)], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["seq", BATCH, INPUT])] +
        [helper.make_tensor_value_info(s, TensorProto.FLOAT, [nd, BATCH, HIDDEN]) for s in states],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    path = os.path.join(folder, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)

    def inputs(L, batch):
        rs = np.random.default_rng(300 + L)
        xs = [rs.standard_normal((L, batch, INPUT)).astype(np.float32)]
        return xs + [(rs.standard_normal((nd, batch, HIDDEN)) * 0.5).astype(np.float32) for _ in states]

    def reference(xs):
        return numpy_rnn(kind, xs[0], w, r, b, xs[1] if len(xs) > 1 else None, xs[2] if len(xs) > 2 else None,
                         kw["direction"], attrs.get("linear_before_reset", 0), kw.get("activations"))

    return path, inputs, reference


def inputs_for(mod, length, nstates, seed, batch=BATCH):
    """The model's inputs for one sequence length (numpy arrays)."""
    rng = np.random.default_rng(seed * 1000 + length)
    rnn = mod.rnn
    shape = (batch, length, INPUT) if rnn.batch_first else (length, batch, INPUT)
    xs = [rng.standard_normal(shape).astype(np.float32)]
    nd = rnn.num_layers * (2 if rnn.bidirectional else 1)
    xs += [(rng.standard_normal((nd, batch, HIDDEN)) * 0.5).astype(np.float32) for _ in range(nstates)]
    return xs


def run_session(rly, name, path, mode, runs, folder, extra=()):
    """One rly process: the model imported once (or given by extra), then
    every run (inputs file, outputs file), with `:kernels` after the first
    run and after the last; returns (stdout, ok, message)."""
    lines = [] if extra else [f":import {path}"]
    for k, (inp, outp, n) in enumerate(runs):
        lines += [f":load-tensor %in{i} {inp} in{i}" for i in range(n)]
        lines += [f"let %y = @main({', '.join(f'%in{i}' for i in range(n))});", f":save %y {outp}"]
        if k in (0, len(runs) - 1):
            lines.append(":kernels")
    script = os.path.join(folder, f"{name}_{mode}{'_text' if extra else ''}.rly")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([rly, "--exec", mode, *extra, script], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return r.stdout, False, (r.stderr.strip() or r.stdout.strip())[-2000:]
    return r.stdout, True, ""


def kernel_tables(stdout):
    """The `:kernels` tables of a session: a list of {name: (signature, calls)}."""
    tables, cur = [], None
    for line in stdout.splitlines():
        if line.startswith("kernel ") and "signature" in line:
            cur = {}
            tables.append(cur)
        elif cur is not None and line.startswith("@"):
            m = re.match(r"(@\S+)\s+(.*?\))\s+->\s+(\S+)\s+.*?\s(\d+)\s+[\d.]+ ms$", line)
            if m:
                cur[m.group(1)] = (m.group(2) + " -> " + m.group(3), int(m.group(4)))
        elif cur is not None and not line.strip():
            cur = None
    return tables


def check_kernels(stdout, steps, gates):
    """No kernel added after the first length; a fused product (the step's
    h R^T: nn.dense, or nn.contrib_dense_pack once its weight is packed) and, when `gates`, a fused group of the gates' slices and
    elementwise math each called at least once per time step."""
    tables = kernel_tables(stdout)
    if len(tables) != 2:
        return f"expected 2 :kernels tables, got {len(tables)}"
    first, last = tables
    new = sorted(set(last) - set(first))
    if new:
        return f"kernels compiled for the new lengths: {', '.join(new)}"
    for op in ("nn_(contrib_)?dense", "strided_slice") if gates else ("nn_(contrib_)?dense",):
        step = [(k, c) for k, (sig, c) in last.items() if re.search(op, k)]
        if not step or max(c for _, c in step) < steps:
            return f"no {op} kernel ran {steps} times (have {step})"
    return None


def compare(outs, expected):
    worst = 0.0
    for i, (g, e) in enumerate(zip(outs, expected)):
        if g.shape != e.shape:
            return worst, f"output {i}: shape {g.shape}, expected {e.shape}"
        g64, e64 = g.astype(np.float64), e.astype(np.float64)
        same = (g64 == e64) | (np.isnan(g64) & np.isnan(e64))  # equal infinities (Relu grows) agree
        err = np.where(same, 0.0, np.abs(g64 - e64))
        worst = max(worst, float(err.max(initial=0)))
        bad = err > ATOL + RTOL * np.abs(e)
        if bad.any():
            k = np.unravel_index(np.argmax(err), err.shape)
            return worst, f"output {i}: max error {err[k]:.3g} at {k} (got {g[k]}, expected {e[k]})"
    return worst, None


def check_model(rly, i, case, folder, verbose):
    """Runs one model at every length in both modes; (passed, failed)."""
    name, kind, opset, states, dyn_batch, kw = case
    path, inputs, reference = make_case(i, name, kind, opset, states, dyn_batch, kw, folder)
    runs, refs = [], []
    for L in LENGTHS:
        batch = 3 if dyn_batch and L > 3 else BATCH  # a dynamic batch: another batch too
        xs = inputs(L, batch)
        inp = os.path.join(folder, f"{name}_{L}_in.npz")
        np.savez(inp, **{f"in{j}": x for j, x in enumerate(xs)})
        refs.append(reference(xs))
        runs.append((inp, os.path.join(folder, f"{name}_{L}_%s_out.npz"), len(xs)))
    passed = failed = 0
    variants = [(m, ()) for m in MODES]
    if name in ("lstm_2layers_bidir_states", "lstm_dynamic_batch"):  # the text and the weights file
        text = os.path.join(folder, name + ".rly")
        r = subprocess.run([rly, "--import", path, "-o", text], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name} [--import -o]: {r.stderr.strip()}")
            failed += 1
        else:
            variants.append(("jit", ("--params", text[:-4] + ".npz", text)))
    for mode, extra in variants:
        label = mode + (", --import -o text" if extra else "")
        tag = mode + ("_text" if extra else "")
        mruns = [(inp, outp % tag, n) for inp, outp, n in runs]
        stdout, ok, msg = run_session(rly, name, path, mode, mruns, folder, extra)
        worst = 0.0
        if ok:
            for L, (_, outp, _), ref in zip(LENGTHS, mruns, refs):
                got = np.load(outp)
                outs = [got[f"y_{j}"] for j in range(len(ref))]
                w, msg = compare(outs, ref)
                worst = max(worst, w)
                if msg:
                    msg = f"length {L}: {msg}"
                    break
        if ok and not msg and mode == "jit":
            # with a dynamic batch the gates' slices have no compiled kernel (yet)
            msg = check_kernels(stdout, sum(LENGTHS), gates=not dyn_batch and kind != "rnn")
        if msg:
            failed += 1
            print(f"FAIL {name} [{label}]: {msg}")
        else:
            passed += 1
            print(f"ok   {name} [{label}]: lengths {', '.join(map(str, LENGTHS))}, max error {worst:.3g}")
        if verbose:
            print(stdout)
    return passed, failed


def fixed_length(path, L, out):
    """The model at path with its inputs' `seq` dim fixed to L, saved as out."""
    m = onnx.load(path)
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param == "seq":
                d.Clear()
                d.dim_value = L
    onnx.save(m, out)


def check_static(rly, i, case, folder):
    """The model with a static sequence length, at each of STATIC_LENGTHS,
    in both modes; (passed, failed)."""
    name, kind, opset, states, dyn_batch, kw = case
    path, inputs, reference = make_case(i, name, kind, opset, states, dyn_batch, kw, folder)
    # a Relu activation lets the state grow without bound: past 20 steps
    # float32 overflows where the float64 reference does not
    lengths = (1, 7, 20) if "Relu" in kw.get("activations", ()) else STATIC_LENGTHS
    passed = failed = 0
    for mode in MODES:
        lines, outs, refs = [], [], []
        for L in lengths:
            fixed = os.path.join(folder, f"{name}_static{L}.onnx")
            fixed_length(path, L, fixed)
            xs = inputs(L, BATCH)
            inp = os.path.join(folder, f"{name}_static{L}_in.npz")
            np.savez(inp, **{f"in{j}": x for j, x in enumerate(xs)})
            refs.append(reference(xs))
            outs.append(os.path.join(folder, f"{name}_static{L}_{mode}_out.npz"))
            lines += [f":import {fixed}"] + [f":load-tensor %in{j} {inp} in{j}" for j in range(len(xs))]
            lines += [f"let %y = @main({', '.join(f'%in{j}' for j in range(len(xs)))});",
                      f":save %y {outs[-1]}", ":kernels"]
        script = os.path.join(folder, f"{name}_static_{mode}.rly")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([rly, "--exec", mode, script], capture_output=True, text=True, timeout=600)
        msg = None if r.returncode == 0 else (r.stderr.strip() or r.stdout.strip())[-2000:]
        worst = 0.0
        for L, outp, ref in zip(lengths, outs, refs):
            if msg:
                break
            got = np.load(outp)
            w, msg = compare([got[f"y_{j}"] for j in range(len(ref))], ref)
            worst = max(worst, w)
            msg = msg and f"length {L}: {msg}"
        if not msg and mode == "jit":
            tables = kernel_tables(r.stdout)
            new = len(tables[-1]) - len(tables[-2]) if len(tables) == len(lengths) else None
            if new is None:
                msg = f"expected {len(lengths)} :kernels tables, got {len(tables)}"
            elif new > STATIC_NEW_KERNELS:
                msg = f"{lengths[-1]} steps added {new} kernels (at most {STATIC_NEW_KERNELS})"
        label = f"{mode}, static length"
        if msg:
            failed += 1
            print(f"FAIL {name} [{label}]: {msg}")
        else:
            passed += 1
            print(f"ok   {name} [{label}]: lengths {', '.join(map(str, lengths))}, "
                  f"max error {worst:.3g}")
    return passed, failed


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    only = args[args.index("-k") + 1] if "-k" in args else None
    rly = os.path.abspath([a for a in args if not a.startswith("-") and a != only][0])
    start = time.time()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="onnx_rnn_") as folder:
        for i, case in enumerate(CASES):
            if only and only not in case[0]:
                continue
            p, f = check_model(rly, i, case, folder, verbose)
            passed, failed = passed + p, failed + f
            if not case[4]:  # a dynamic batch stays dynamic
                p, f = check_static(rly, i, case, folder)
                passed, failed = passed + p, failed + f
    print(f"tolerance: |rly - ref| <= {ATOL:g} + {RTOL:g} * |ref| (ref: PyTorch, or numpy)")
    print(f"time: {time.time() - start:.1f}s")
    print(f"onnx_rnn_torch: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
