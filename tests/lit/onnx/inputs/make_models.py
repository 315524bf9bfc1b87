"""Writes the small ONNX models of the tests in this directory into argv[1].

The files are encoded here with a few lines of protobuf (no onnx package
needed): a good model, and one bad model per error the importer reports."""
import os
import struct
import sys

import numpy as np


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
    if isinstance(value, bool) or isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, float):
        return varint(num << 3 | 5) + struct.pack("<f", value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def msg(*fields):
    return b"".join(fields)


FLOAT, INT64 = 1, 7


def tensor(name, array, external=None):
    """TensorProto: int64 data stays int64, anything else is float32."""
    a = np.asarray(array)
    dt = INT64 if a.dtype == np.int64 else FLOAT
    if dt == FLOAT:
        a = a.astype(np.float32)
    parts = [field(1, d) for d in a.shape] + [field(2, dt), field(8, name)]
    if external:
        parts += [field(13, msg(field(1, "location"), field(2, external))), field(14, 1)]
    else:
        parts.append(field(9, a.tobytes()))
    return msg(*parts)


def tensor_bool(name, value):
    """A bool scalar TensorProto (raw data)."""
    return msg(field(2, 9), field(8, name), field(9, bytes([int(value)])))


def value_info(name, shape, elem=FLOAT):
    """A tensor's ValueInfoProto; shape None declares no shape (rank unknown)."""
    if shape is None:
        return msg(field(1, name), field(2, msg(field(1, msg(field(1, elem))))))
    dims = b"".join(field(1, msg(field(1, d) if isinstance(d, int) else field(2, d))) for d in shape)
    return msg(field(1, name), field(2, msg(field(1, msg(field(1, elem), field(2, dims))))))


def attr(name, value):
    """AttributeProto: float, int, string, or a list of floats, strings or ints."""
    if isinstance(value, list) and value and isinstance(value[0], float):
        return msg(field(1, name), *[field(7, v) for v in value], field(20, 6))
    if isinstance(value, list) and value and isinstance(value[0], str):
        return msg(field(1, name), *[field(9, v) for v in value], field(20, 8))
    if isinstance(value, float):
        return msg(field(1, name), field(2, value), field(20, 1))
    if isinstance(value, int):
        return msg(field(1, name), field(3, value), field(20, 2))
    if isinstance(value, str):
        return msg(field(1, name), field(4, value), field(20, 3))
    return msg(field(1, name), *[field(8, v) for v in value], field(20, 7))


def node(op, inputs, outputs, name="", domain="", **attrs):
    parts = [field(1, i) for i in inputs] + [field(2, o) for o in outputs]
    parts += [field(3, name), field(4, op)] + [field(5, attr(k, v)) for k, v in attrs.items()]
    if domain:
        parts.append(field(7, domain))
    return msg(*parts)


def model(nodes, inputs, outputs, inits=(), opset=13, value_infos=(), imports=None):
    """outputs: names (no type declared) or (name, shape[, elem]) tuples;
    imports: [(domain, version)] instead of the default domain's opset."""
    outs = [value_info(*o) if isinstance(o, tuple) else value_info(o, None, 0) for o in outputs]
    graph = msg(*[field(1, n) for n in nodes], field(2, "g"), *[field(5, t) for t in inits],
                *[field(11, value_info(*i)) for i in inputs], *[field(12, o) for o in outs],
                *[field(13, value_info(*v)) for v in value_infos])
    imports = imports if imports is not None else [("", opset)]
    return msg(field(1, 8), field(2, "make_models.py"), field(7, graph),
               *[field(8, msg(field(1, dom), field(2, v))) for dom, v in imports])


def write(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    c = np.array([1.0, -2.0, 3.0, -4.0], np.float32)
    good = model([node("Add", ["x", "c"], ["s"], "add0"), node("Relu", ["s"], ["y"], "relu0")],
                 [("x", [1, 4])], ["y"], [tensor("c", c)])
    write(d, "good.onnx", good)
    write(d, "truncated.onnx", good[: len(good) // 2])
    write(d, "text.onnx", b"this is not a model\n")
    write(d, "no_graph.onnx", msg(field(1, 8), field(8, msg(field(2, 13)))))
    write(d, "new_opset.onnx", model([node("Relu", ["x"], ["y"])], [("x", [4])], ["y"], opset=19))
    write(d, "erf_opset7.onnx", model([node("Erf", ["x"], ["y"], "erf0")], [("x", [4])], ["y"], opset=7))
    training = [node("Gradient", ["x"], ["y"], "", "ai.onnx.preview.training", xs=["x"], y="x")]
    write(d, "training_only.onnx", model(training, [(n, [4]) for n in "rtxgh"], ["y"],
                                         imports=[("ai.onnx.preview.training", 1)]))
    write(d, "no_default_opset.onnx", model([node("Relu", ["x"], ["y"])], [("x", [4])], ["y"],
                                            imports=[("com.example", 1)]))
    write(d, "add_no_broadcast.onnx", model([node("Add", ["x", "z"], ["y"], "add0")],
                                            [("x", [2, 3]), ("z", [3])], ["y"], opset=6))
    write(d, "dropout_is_test0.onnx", model([node("Dropout", ["x"], ["y"], "drop0")],
                                            [("x", [4])], ["y"], opset=6))
    unknown = [node("Relu", ["x"], ["a"], "r"), node("Foo", ["a"], ["b"], "foo1", "com.example"),
               node("Bar", ["b"], ["c"], "bar1"), node("Foo", ["c"], ["d"], "foo2", "com.example"),
               node("FancyOp", ["d"], ["y"])]
    write(d, "unknown_ops.onnx", model(unknown, [("x", [4])], ["y"]))
    w = tensor("w", np.ones((2, 1, 3, 3), np.float32))
    write(d, "bad_auto_pad.onnx", model([node("Conv", ["x", "w"], ["y"], "conv0", auto_pad="MIDDLE")],
                                        [("x", [1, 1, 4, 4])], ["y"], [w]))
    pads = tensor("pads", np.array([0, 1, 0, 1], np.int64))
    write(d, "bad_pad_mode.onnx", model([node("Relu", ["x"], ["r"]), node("Pad", ["r", "pads"], ["y"], mode="wrap")],
                                        [("x", [2, 3])], ["y"], [pads]))
    write(d, "external_missing.onnx", model([node("Add", ["x", "w"], ["y"], "add0")], [("x", [4])], ["y"],
                                            [tensor("w", c, external="weights.bin")]))
    write(d, "external.onnx", model([node("Add", ["x", "w"], ["y"], "add0")], [("x", [4])], ["y"],
                                    [tensor("w", c, external="external.bin")]))
    write(d, "external.bin", c.tobytes())
    write(d, "undefined_input.onnx", model([node("Add", ["x", "zz"], ["y"], "add0")], [("x", [4])], ["y"]))
    write(d, "runtime_shape.onnx", model([node("Reshape", ["x", "s"], ["y"], "reshape0")],
                                         [("x", [2, 3]), ("s", [2], INT64)], ["y"]))
    write(d, "runtime_repeats.onnx", model([node("Tile", ["x", "r"], ["y"], "tile0")],
                                           [("x", [2, 3]), ("r", [2], INT64)], ["y"]))
    write(d, "runtime_repeats_rank.onnx", model([node("Tile", ["x", "r"], ["y"], "tile0")],
                                                [("x", [2, 3]), ("r", [3], INT64)], ["y"]))
    write(d, "runtime_expand.onnx", model([node("Expand", ["x", "s"], ["y"], "expand0")],
                                          [("x", [1, 3]), ("s", [2], INT64)], ["y"]))
    write(d, "runtime_expand_rank.onnx", model([node("Expand", ["x", "s"], ["y"], "expand0")],
                                               [("x", [1, 3]), ("s", ["n"], INT64)], ["y"]))
    write(d, "runtime_pads_axes.onnx", model([node("Pad", ["x", "p", "", "a"], ["y"], "pad0")],
                                             [("x", [2, 3]), ("p", [2], INT64), ("a", [1], INT64)], ["y"],
                                             opset=18))
    relu = [node("Relu", ["x"], ["r"], "relu0"), node("Neg", ["r"], ["y"], "neg0")]
    for name, out, vis in [("declared_dim", ("y", [2, 4]), []), ("declared_rank", ("y", [6]), []),
                           ("declared_dtype", ("y", [2, 3], INT64), []), ("declared_sym", ("y", ["N", 3]), []),
                           ("declared_value_info", "y", [("r", [2, 3], INT64)])]:
        write(d, name + ".onnx", model(relu, [("x", [2, 3])], [out], value_infos=vis))
    drop = [node("Dropout", ["x", "r", "t"], ["y", "m"], "drop0")]
    write(d, "dropout_runtime.onnx", model(drop, [("x", [3]), ("r", []), ("t", [], 9)], ["y", "m"]))
    write(d, "dropout_training.onnx", model(drop, [("x", [3])], ["y", "m"],
                                            [tensor("r", np.float32(0.25)), tensor_bool("t", True)]))
    write(d, "ill_typed.onnx", model([node("Add", ["x", "z"], ["y"], "add0")], [("x", [2, 3]), ("z", [4])], ["y"]))
    write(d, "empty_required.onnx", model([node("Pad", ["", "a"], ["y"], "pad0")],
                                          [("x", [2, 3]), ("a", [1], INT64)], ["y"]))
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((32, 3, 3, 3)), rng.standard_normal((32, 32, 1, 1))
    write(d, "convnet2d.onnx", model([node("Conv", ["x", "w1"], ["a"], "conv0", pads=[1, 1, 1, 1]),
                                      node("Relu", ["a"], ["r"], "relu0"),
                                      node("Conv", ["r", "w2"], ["y"], "conv1")],
                                     [("x", [1, 3, 8, 8])], ["y"], [tensor("w1", w1), tensor("w2", w2)]))
    v1, v2 = rng.standard_normal((16, 3, 3, 3, 3)), rng.standard_normal((32, 16, 1, 1, 1))
    write(d, "convnet3d.onnx", model([node("Conv", ["x", "v1"], ["a"], "conv0", pads=[1, 1, 1, 1, 1, 1]),
                                      node("Relu", ["a"], ["r"], "relu0"),
                                      node("Conv", ["r", "v2"], ["y"], "conv1", strides=[2, 2, 2])],
                                     [("x", [1, 3, 4, 8, 8])], ["y"], [tensor("v1", v1), tensor("v2", v2)]))
    huge = msg(field(1, 1 << 20), field(1, 1 << 20), field(2, FLOAT), field(8, "w"), field(9, b"\0" * 4))
    write(d, "huge_shape.onnx", model([node("Add", ["x", "w"], ["y"], "add0")], [("x", [4])], ["y"], [huge]))
    # empty strings: protobuf leaves their bytes NULL (a fuzz finding, tests/fuzz/regress/onnx)
    write(d, "empty_pad_mode.onnx", model([node("Pad", ["x", "pads"], ["y"], mode="")],
                                          [("x", [2, 3])], ["y"], [pads]))
    wr = [tensor(n, np.ones((1, 3, 1), np.float32)) for n in ("w", "r")]
    write(d, "empty_activation.onnx", model([node("GRU", ["x", "w", "r"], ["y"], hidden_size=1,
                                                  activations=["", "Tanh"])],
                                            [("x", [2, 1, 1])], ["y"], wr))
    write(d, "size_vars.onnx", model([node("Relu", ["x"], ["y"])], [("x", ["batch", 4])], ["y"]))
    # Gradient (ai.onnx.preview.training) of y = sum(tanh(x @ w)^2), tests/lit/onnx/gradient.test
    both = [("", 13), ("ai.onnx.preview.training", 1)]
    mlp = [node("MatMul", ["x", "w"], ["h"], "mm0"), node("Tanh", ["h"], ["t"], "tanh0"),
           node("Mul", ["t", "t"], ["s"], "sq0"), node("ReduceSum", ["s"], ["y"], "sum0", keepdims=0),
           node("Neg", ["x"], ["unused"], "neg0")]
    xw = [("x", [2, 3]), ("w", [3, 2])]

    def gradient(inputs, outputs, **attrs):
        return node("Gradient", inputs, outputs, "grad0", "ai.onnx.preview.training", **attrs)

    write(d, "grad_mlp.onnx", model(mlp + [gradient(["x", "w"], ["dx", "dw"], xs=["x", "w"], y="y")],
                                    xw, ["y", "dx", "dw"], imports=both))
    write(d, "grad_inner.onnx", model(mlp + [gradient(["h"], ["dh"], xs=["h"], y="y")],
                                      xw, ["dh"], imports=both))
    write(d, "grad_zs.onnx", model(mlp + [gradient(["x", "w"], ["dx"], xs=["x"], zs=["w"], y="y")],
                                   xw, ["dx"], imports=both))
    write(d, "grad_det.onnx", model([node("Det", ["x"], ["y"], "det0"), gradient(["x"], ["dx"], xs=["x"], y="y")],
                                    [("x", [2, 2])], ["dx"], imports=both))
    wc = tensor("wc", np.array([[0.5, -1, 2], [3, 0.25, -4]], np.float32))
    capture = [node("Mul", ["x", "wc"], ["m"], "mul0"), node("ReduceSum", ["m"], ["y"], "sum0", keepdims=0)]
    write(d, "grad_capture.onnx", model(capture + [gradient(["x"], ["dx"], xs=["x"], y="y")],
                                        [("x", [2, 3])], ["dx"], [wc], imports=both))
    write(d, "grad_count.onnx", model(mlp + [gradient(["x", "w"], ["dx"], xs=["x"], y="y")],
                                      xw, ["dx"], imports=both))


if __name__ == "__main__":
    main()
