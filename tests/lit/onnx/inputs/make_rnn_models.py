"""Writes the small LSTM and GRU models of rnn.test into argv[1].

The files are encoded with a few lines of protobuf (no onnx package
needed): one good LSTM and GRU each, and one model per attribute value or
input the importer refuses."""
import os
import struct
import sys

import numpy as np

FLOAT = 1


def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, value):
    """One field: int → varint, float → fixed32, bytes/str → length-delimited."""
    if isinstance(value, (bool, int)):
        return varint(num << 3) + varint(value)
    if isinstance(value, float):
        return varint(num << 3 | 5) + struct.pack("<f", value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def msg(*fields):
    return b"".join(fields)


def tensor(name, array):
    a = np.asarray(array, dtype=np.float32)
    return msg(*[field(1, d) for d in a.shape], field(2, FLOAT), field(8, name), field(9, a.tobytes()))


def value_info(name, shape):
    dims = b"".join(field(1, msg(field(1, d) if isinstance(d, int) else field(2, d))) for d in shape)
    return msg(field(1, name), field(2, msg(field(1, msg(field(1, FLOAT), field(2, dims))))))


def attr(name, value):
    """AttributeProto: float, int, string, or a list of floats or strings."""
    if isinstance(value, list) and isinstance(value[0], float):
        return msg(field(1, name), *[field(7, v) for v in value], field(20, 6))
    if isinstance(value, float):
        return msg(field(1, name), field(2, value), field(20, 1))
    if isinstance(value, int):
        return msg(field(1, name), field(3, value), field(20, 2))
    if isinstance(value, str):
        return msg(field(1, name), field(4, value), field(20, 3))
    return msg(field(1, name), *[field(9, v) for v in value], field(20, 8))


def node(op, inputs, outputs, name, **attrs):
    parts = [field(1, i) for i in inputs] + [field(2, o) for o in outputs]
    parts += [field(3, name), field(4, op)] + [field(5, attr(k, v)) for k, v in attrs.items()]
    return msg(*parts)


def rnn_model(op, gates, extra_inputs=(), opset=14, **attrs):
    """X (seq, 1, 2) with a dynamic seq, hidden size 3, one direction
    unless attrs say otherwise."""
    ndir = 2 if attrs.get("direction") == "bidirectional" else 1
    h, i = 3, 2
    rng = np.random.default_rng(0)
    inits = [tensor("W", rng.standard_normal((ndir, gates * h, i))),
             tensor("R", rng.standard_normal((ndir, gates * h, h))),
             tensor("B", rng.standard_normal((ndir, 2 * gates * h)))]
    inputs = [("X", ["seq", 1, i])] + [(n, s) for n, s in extra_inputs]
    ins = ["X", "W", "R", "B"] + [n for n, _ in extra_inputs]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    nd = node(op, ins, outs, op.lower() + "0", hidden_size=h, **attrs)
    graph = msg(field(1, nd), field(2, "g"), *[field(5, t) for t in inits],
                *[field(11, value_info(*v)) for v in inputs],
                *[field(12, value_info(n, [])) for n in outs])
    return msg(field(1, 8), field(2, "make_rnn_models.py"), field(7, graph),
               field(8, msg(field(1, ""), field(2, opset))))


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    models = {
        "lstm.onnx": rnn_model("LSTM", 4),
        "gru_bidir.onnx": rnn_model("GRU", 3, direction="bidirectional", linear_before_reset=1),
        "lstm_default_acts.onnx": rnn_model("LSTM", 4, activations=["Sigmoid", "Tanh", "Tanh"]),
        "lstm_clip.onnx": rnn_model("LSTM", 4, clip=0.5),
        "lstm_layout.onnx": rnn_model("LSTM", 4, layout=2),
        "lstm_input_forget.onnx": rnn_model("LSTM", 4, input_forget=1),
        "gru_hard_sigmoid.onnx": rnn_model("GRU", 3, activations=["HardSigmoid", "Tanh"]),
        "lstm_two_acts.onnx": rnn_model("LSTM", 4, activations=["Sigmoid", "Tanh"]),
        "gru_alpha.onnx": rnn_model("GRU", 3, activation_alpha=[0.5, 0.25]),
        "lstm_direction.onnx": rnn_model("LSTM", 4, direction="sideways"),
        "lstm_seq_lens.onnx": rnn_model("LSTM", 4, extra_inputs=[("L", [1])]),
    }
    for name, data in models.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


main()
