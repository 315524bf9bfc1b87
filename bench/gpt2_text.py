"""gpt2_text: GPT-2 (bench/transformer.py's torch module) written as Relay
text in TVM v0.10's dialect, its weights in an .npz file for `:bind`.

The text is what a TVM user has after importing GPT-2: `take` for the
embeddings, layer norm as mean/subtract/power/mean/add/sqrt/divide/multiply/
add, `nn.dense` (weights (out, in)) plus `add` for each Linear, the heads by
reshape/transpose, `nn.batch_matmul(%q, %k, transpose_b=True)` for the
scores, the mask added after the scale, `nn.softmax`, the tanh GELU with
`power(%x, 3f)`, and the logits by `nn.dense` with the token embedding.
Every weight is a parameter of @main named as in the .npz, so
`:bind @main FILE.npz` (BindParams) makes them constants."""
import numpy as np


class Text:
    """A let chain: each line binds the next %N."""

    def __init__(self):
        self.lines, self.n = [], 0

    def let(self, expr):
        self.lines.append(f"  %{self.n} = {expr};")
        self.n += 1
        return f"%{self.n - 1}"


def layer_norm(t, x, g, b):
    m = t.let(f"mean({x}, axis=[-1], keepdims=True)")
    c = t.let(f"subtract({x}, {m})")
    p = t.let(f"power({c}, 2f)")
    v = t.let(f"mean({p}, axis=[-1], keepdims=True)")
    e = t.let(f"add({v}, 1e-05f)")
    s = t.let(f"sqrt({e})")
    n = t.let(f"divide({c}, {s})")
    return t.let(f"add({t.let(f'multiply({n}, {g})')}, {b})")


def linear(t, x, w, b):
    y = t.let(f"nn.dense({x}, {w}, units=None)")
    return t.let(f"add({y}, {b})")


def heads(t, x, B, S, H, dh):
    r = t.let(f"reshape({x}, newshape=[{B}, {S}, {H}, {dh}])")
    tr = t.let(f"transpose({r}, axes=[0, 2, 1, 3])")
    return t.let(f"reshape({tr}, newshape=[{B * H}, {S}, {dh}])")


def attention(t, a, l, B, S, d, H):
    """Causal self-attention of a (B*S, d): the projected result (B*S, d)."""
    dh = d // H
    y = linear(t, a, f"%qkv_w_{l}", f"%qkv_b_{l}")
    qkv = t.let(f"split({y}, indices_or_sections=[{d}, {2 * d}], axis=1)")
    q, k, v = (heads(t, t.let(f"{qkv}.{i}"), B, S, H, dh) for i in range(3))
    s = t.let(f"nn.batch_matmul({q}, {k}, transpose_b=True)")
    s = t.let(f"reshape({s}, newshape=[{B}, {H}, {S}, {S}])")
    s = t.let(f"multiply({s}, {1 / np.sqrt(dh):.8g}f)")
    p = t.let(f"nn.softmax({t.let(f'add({s}, %mask)')})")
    p = t.let(f"reshape({p}, newshape=[{B * H}, {S}, {S}])")
    o = t.let(f"nn.batch_matmul({p}, {v}, transpose_b=False)")
    o = t.let(f"reshape({o}, newshape=[{B}, {H}, {S}, {dh}])")
    o = t.let(f"transpose({o}, axes=[0, 2, 1, 3])")
    o = t.let(f"reshape({o}, newshape=[{B * S}, {d}])")
    return linear(t, o, f"%proj_w_{l}", f"%proj_b_{l}")


def gelu(t, h):
    """The tanh GELU: 0.5 h (1 + tanh(0.7978846 (h + 0.044715 h^3)))."""
    c = t.let(f"multiply({t.let(f'power({h}, 3f)')}, 0.044715f)")
    u = t.let(f"multiply({t.let(f'add({h}, {c})')}, 0.7978846f)")
    g = t.let(f"add({t.let(f'tanh({u})')}, 1f)")
    return t.let(f"multiply({t.let(f'multiply({h}, 0.5f)')}, {g})")


def block(t, x, l, B, S, d, H):
    """One pre-norm block on x (B*S, d); returns the new x."""
    a = layer_norm(t, x, f"%ln1_g_{l}", f"%ln1_b_{l}")
    x = t.let(f"add({x}, {attention(t, a, l, B, S, d, H)})")
    h = linear(t, layer_norm(t, x, f"%ln2_g_{l}", f"%ln2_b_{l}"), f"%fc_w_{l}", f"%fc_b_{l}")
    return t.let(f"add({x}, {linear(t, gelu(t, h), f'%out_w_{l}', f'%out_b_{l}')})")


def write(mod, batch, seq, heads_n, path, npz):
    """Writes mod (bench/transformer.py's GPT2) as Relay text to path, its weights to npz."""
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in mod.state_dict().items()}
    d, V = sd["wte.weight"].shape[1], sd["wte.weight"].shape[0]
    L = sum(1 for k in sd if k.endswith(".qkv.weight"))
    w = {"wte": sd["wte.weight"], "pos": sd["wpe.weight"][:seq], "mask": sd["mask"][:seq, :seq],
         "lnf_g": sd["ln.weight"], "lnf_b": sd["ln.bias"]}
    names = {"ln1_g": "ln1.weight", "ln1_b": "ln1.bias", "qkv_w": "qkv.weight", "qkv_b": "qkv.bias",
             "proj_w": "proj.weight", "proj_b": "proj.bias", "ln2_g": "ln2.weight", "ln2_b": "ln2.bias",
             "fc_w": "fc.weight", "fc_b": "fc.bias", "out_w": "out.weight", "out_b": "out.bias"}
    for l in range(L):
        for ours, theirs in names.items():
            w[f"{ours}_{l}"] = sd[f"blocks.{l}.{theirs}"]
    t = Text()
    i = t.let(f"reshape(%ids, newshape=[{batch * seq}])")
    e = t.let(f"reshape({t.let(f'take(%wte, {i}, axis=0)')}, newshape=[{batch}, {seq}, {d}])")
    x = t.let(f"reshape({t.let(f'add({e}, %pos)')}, newshape=[{batch * seq}, {d}])")
    for l in range(L):
        x = block(t, x, l, batch, seq, d, heads_n)
    z = t.let(f"nn.dense({layer_norm(t, x, '%lnf_g', '%lnf_b')}, %wte, units=None)")
    params = [f"%ids: Tensor[({batch}, {seq}), int64]"]
    params += [f"%{k}: Tensor[({', '.join(map(str, a.shape))}), float32]" for k, a in w.items()]
    with open(path, "w") as f:
        f.write('#[version = "0.0.5"]\n')
        f.write(f"def @main({', '.join(params)}) {{\n")
        f.write("\n".join(t.lines))
        f.write(f"\n  reshape({z}, newshape=[{batch}, {seq}, {V}])\n}}\n")
    np.savez(npz, **w)
