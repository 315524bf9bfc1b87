"""Writes the models of old_opsets.test into argv[1], each with its input
x.npy and numpy's result (NAME.expected.npy, NAME.mask.npy for a second
output): forms of ops from opsets before 9, as PyTorch's first exporters
wrote them.

  add_axis.onnx    opset 6: Add with broadcast=1 aligned at axis=1, and Sum
  reshape_v1.onnx  opset 1: Reshape's shape attribute, Concat without axis
                   (1), Pad's paddings and value, Cast's `to` as a name
  tile_v1.onnx     opset 1: Tile's tiles and axis inputs
  bn_spatial.onnx  opset 6: BatchNormalization with spatial=0 and is_test=1,
                   Dropout with is_test=1 and its mask (of the input's type)

The models are encoded with make_models.py's few lines of protobuf (no onnx
package needed)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import model, node, tensor, write  # noqa: E402  (the shared encoder)


def add_axis(d, x):
    b = np.array([1.0, -2.0, 0.5], np.float32)
    nodes = [node("Add", ["x", "b"], ["s"], "add0", broadcast=1, axis=1),
             node("Sum", ["s", "x"], ["y"], "sum0")]
    write(d, "add_axis.onnx", model(nodes, [("x", [2, 3, 4])], ["y"], [tensor("b", b)], opset=6))
    return (x + b[None, :, None]) + x


def reshape_v1(d, x):
    nodes = [node("Reshape", ["x"], ["r"], "reshape0", shape=[2, -1]),
             node("Concat", ["r", "r"], ["c"], "concat0"),
             node("Pad", ["c"], ["p"], "pad0", paddings=[0, 1, 1, 0], value=1.5),
             node("Cast", ["p"], ["y"], "cast0", to="DOUBLE")]
    write(d, "reshape_v1.onnx", model(nodes, [("x", [2, 3, 4])], ["y"], opset=1))
    r = x.reshape(2, -1)
    c = np.concatenate([r, r], axis=1)
    return np.pad(c, [(0, 1), (1, 0)], constant_values=1.5).astype(np.float64)


def tile_v1(d, x):
    inits = [tensor("tiles", np.array(2, np.int64)), tensor("axis", np.array(1, np.int64))]
    nodes = [node("Tile", ["x", "tiles", "axis"], ["y"], "tile0")]
    write(d, "tile_v1.onnx", model(nodes, [("x", [2, 3, 4])], ["y"], inits, opset=1))
    return np.concatenate([x, x], axis=1)


def bn_spatial(d, x):
    rng = np.random.default_rng(1)
    scale, bias, mean = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    inits = [tensor(n, v) for n, v in zip(["scale", "bias", "mean", "var"], [scale, bias, mean, var])]
    nodes = [node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["n"], "bn0",
                  spatial=0, is_test=1, epsilon=1e-3),
             node("Dropout", ["n"], ["y", "mask"], "drop0", is_test=1, ratio=0.5)]
    write(d, "bn_spatial.onnx", model(nodes, [("x", [2, 3, 4])], ["y", "mask"], inits, opset=6))
    y = (x - mean) / np.sqrt(var + np.float32(1e-3)) * scale + bias
    np.save(os.path.join(d, "bn_spatial.mask.npy"), np.ones_like(x))
    return y.astype(np.float32)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    for make in (add_axis, reshape_v1, tile_v1, bn_spatial):
        np.save(os.path.join(d, make.__name__ + ".expected.npy"), make(d, x))


main()
