"""Writes the small LSTM and GRU models of rnn.test into argv[1].

The files are encoded with a few lines of protobuf (no onnx package
needed): one good LSTM and GRU each, and one model per attribute value or
input the importer refuses."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import field, msg, node, tensor, value_info  # noqa: E402  (the shared encoder)


def rnn_model(op, gates, extra_inputs=(), opset=14, **attrs):
    """X (seq, 1, 2) with a dynamic seq, hidden size 3, one direction
    unless attrs say otherwise."""
    ndir = 2 if attrs.get("direction") == "bidirectional" else 1
    h, i = 3, 2
    rng = np.random.default_rng(0)
    inits = [tensor("W", rng.standard_normal((ndir, gates * h, i))),
             tensor("R", rng.standard_normal((ndir, gates * h, h))),
             tensor("B", rng.standard_normal((ndir, 2 * gates * h)))]
    inputs = [("X", ["seq", 1, i])] + list(extra_inputs)
    ins = ["X", "W", "R", "B"] + [v[0] for v in extra_inputs]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    nd = node(op, ins, outs, op.lower() + "0", hidden_size=h, **attrs)
    graph = msg(field(1, nd), field(2, "g"), *[field(5, t) for t in inits],
                *[field(11, value_info(*v)) for v in inputs],
                *[field(12, value_info(n, None, 0)) for n in outs])
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
        "lstm_seq_lens.onnx": rnn_model("LSTM", 4, extra_inputs=[("L", [1], 6)], direction="reverse"),
    }
    for name, data in models.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


main()
