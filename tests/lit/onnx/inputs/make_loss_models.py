"""Writes the small models of losses.test into argv[1]: losses, the
reductions built from sums, CumSum, and ops whose axes, split sizes or axis
are graph inputs known only at run time.

Encoded with the shared few lines of protobuf (no onnx package needed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import model, node, value_info, write, INT64  # noqa: E402,F401


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    i64 = lambda name, shape: (name, shape, INT64)  # noqa: E731
    models = {
        "reduce_sum_axes.onnx": model(
            [node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
            [("x", [2, 3]), i64("axes", [1])], ["y"]),
        "unsqueeze_axes.onnx": model(
            [node("Unsqueeze", ["x", "axes"], ["y"])], [("x", [2]), i64("axes", [2])], ["y"]),
        "squeeze_axes.onnx": model(
            [node("Squeeze", ["x", "axes"], ["y"])], [("x", [1, 2, 1]), i64("axes", [1])], ["y"]),
        "split_sizes.onnx": model(
            [node("Split", ["x", "split"], ["a", "b"])], [("x", [5]), i64("split", [2])],
            ["a", "b"]),
        "slice_axes.onnx": model(
            [node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
            [("x", [3, 4]), i64("starts", [1]), i64("ends", [1]), i64("axes", [1]),
             i64("steps", [1])], ["y"]),
        "cumsum_axis.onnx": model(
            [node("CumSum", ["x", "axis"], ["y"], exclusive=1, reverse=1)],
            [("x", [2, 3]), i64("axis", [])], ["y"]),
        "lse_axes.onnx": model(
            [node("ReduceLogSumExp", ["x", "axes"], ["y"], keepdims=1)],
            [("x", [2, 2]), i64("axes", [1])], ["y"], opset=18),
        "l1_noop.onnx": model(
            [node("ReduceL1", ["x"], ["y"], noop_with_empty_axes=1)], [("x", [2, 2])], ["y"],
            opset=18),
        "nll.onnx": model(
            [node("NegativeLogLikelihoodLoss", ["p", "t", "w"], ["y"], reduction="mean")],
            [("p", [2, 2]), i64("t", [2]), ("w", [2])], ["y"]),
        "sce.onnx": model(
            [node("SoftmaxCrossEntropyLoss", ["s", "t"], ["y", "logp"], ignore_index=1)],
            [("s", [2, 3]), i64("t", [2])], ["y", "logp"]),
    }
    for name, data in models.items():
        write(d, name, data)


if __name__ == "__main__":
    main()
