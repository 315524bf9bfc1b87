"""Writes the ONNX models of index.test into argv[1] (onnx.helper): Resize
forms the backend suite lacks (opset 18 axes and keep_aspect_ratio_policy,
scales known only at run time, antialias), ScatterND's mul reduction,
ScatterElements' (refused), MaxUnpool with a constant output_shape
and NonZero."""
import os
import sys

from onnx import TensorProto, helper, save

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def model(path, node, inputs, outputs, inits=(), opset=18):
    g = helper.make_graph([node], "g", inputs, outputs, list(inits))
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
sizes = helper.make_tensor("sizes", I64, [2], [3, 2])
model(os.path.join(out, "resize_axes.onnx"),
      helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", axes=[2, 3],
                       keep_aspect_ratio_policy="not_larger"),
      [vi("x", F, [1, 1, 2, 4])], [vi("y", F, None)], [sizes])
model(os.path.join(out, "resize_runtime_scales.onnx"),
      helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"),
      [vi("x", F, [2, 1, 2, 2]), vi("scales", F, [4])], [vi("y", F, None)], opset=13)
scales = helper.make_tensor("scales", F, [4], [1, 1, 2, 2])
model(os.path.join(out, "resize_antialias.onnx"),
      helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", antialias=1),
      [vi("x", F, [1, 1, 2, 2])], [vi("y", F, None)], [scales])
model(os.path.join(out, "scatternd_mul.onnx"),
      helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="mul"),
      [vi("x", F, [4]), vi("i", I64, [2, 1]), vi("u", F, [2])], [vi("y", F, [4])], opset=16)
model(os.path.join(out, "scatter_elements_mul.onnx"),
      helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], reduction="mul"),
      [vi("x", F, [4]), vi("i", I64, [1]), vi("u", F, [1])], [vi("y", F, [4])], opset=16)
unpool_shape = helper.make_tensor("os", I64, [4], [1, 1, 5, 5])
model(os.path.join(out, "max_unpool_shape.onnx"),
      helper.make_node("MaxUnpool", ["x", "i", "os"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
      [vi("x", F, [1, 1, 2, 2]), vi("i", I64, [1, 1, 2, 2])], [vi("y", F, None)], [unpool_shape], opset=11)
model(os.path.join(out, "nonzero.onnx"), helper.make_node("NonZero", ["x"], ["y"]),
      [vi("x", F, [2, 2])], [vi("y", I64, None)], opset=13)
