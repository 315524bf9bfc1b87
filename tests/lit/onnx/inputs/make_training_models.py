"""Writes the small models of training.test into argv[1]: the optimizers of
the ai.onnx.preview.training domain (Adagrad, Adam, Momentum), with R and T
graph inputs, and the forms the importer refuses.

Encoded with the shared few lines of protobuf (no onnx package needed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import model, node, write, INT64  # noqa: E402

DOMAIN = "ai.onnx.preview.training"
IMPORTS = [(DOMAIN, 1), ("", 13)]


def optimizer(op, names, outputs, shapes, **attrs):
    """A model of one optimizer node: scalar R (float) and T (int64), then
    the tensors `names` of the given shapes."""
    inputs = [("r", []), ("t", [], INT64)] + [(n, s) for n, s in zip(names, shapes)]
    return model([node(op, ["r", "t"] + names, outputs, op.lower() + "0", DOMAIN, **attrs)],
                 inputs, outputs, imports=IMPORTS)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    models = {
        # two tensors: X1, X2, G1, G2, V1, V2, H1, H2; epsilon left at its default
        "adam.onnx": optimizer("Adam", ["x1", "x2", "g1", "g2", "v1", "v2", "h1", "h2"],
                               ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n"],
                               [[2], [1]] * 4, alpha=0.9, beta=0.99, norm_coefficient=0.1,
                               norm_coefficient_post=0.01),
        "adagrad.onnx": optimizer("Adagrad", ["x", "g", "h"], ["xn", "hn"], [[2]] * 3,
                                  decay_factor=0.5, epsilon=0.01),
        "nesterov.onnx": optimizer("Momentum", ["x", "g", "v"], ["xn", "vn"], [[2]] * 3,
                                   alpha=0.9, beta=0.5, norm_coefficient=0.0, mode="nesterov"),
        "momentum_no_mode.onnx": optimizer("Momentum", ["x", "g", "v"], ["xn", "vn"], [[2]] * 3,
                                           alpha=0.9, beta=0.5, norm_coefficient=0.0),
        "momentum_bad_mode.onnx": optimizer("Momentum", ["x", "g", "v"], ["xn", "vn"], [[2]] * 3,
                                            alpha=0.9, beta=0.5, norm_coefficient=0.0,
                                            mode="heavy"),
        "adam_count.onnx": optimizer("Adam", ["x", "g", "v", "h", "y"], ["xn"], [[2]] * 5),
        "adagrad_r_vector.onnx": model(
            [node("Adagrad", ["r", "t", "x", "g", "h"], ["xn", "hn"], "adagrad0", DOMAIN)],
            [("r", [1]), ("t", [], INT64), ("x", [2]), ("g", [2]), ("h", [2])], ["xn", "hn"],
            imports=IMPORTS),
    }
    for name, data in models.items():
        write(d, name, data)


if __name__ == "__main__":
    main()
