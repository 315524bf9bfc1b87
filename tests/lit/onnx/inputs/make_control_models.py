#!/usr/bin/python3
"""make_control_models.py DIR: ONNX models with If and Loop (built with
onnx.helper) for control.test, their inputs (DIR/in.npz) and the outputs
numpy computes for them (DIR/want.npz).
make_control_models.py --check DIR GOT.npz: compares rly's outputs with
numpy's, printing `ok NAME` per output or why not."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def const(name, value):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", I64 if np.asarray(value).dtype == np.int64 else F,
        np.asarray(value).shape, np.asarray(value).ravel().tolist()))


def save(graph, path, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def if_model(d):
    """y = x + 1 when c, else x concatenated with itself times 2 (the
    branches' shapes differ: (3) and (6))."""
    then = helper.make_graph([const("one", np.float32(1)), helper.make_node("Add", ["x", "one"], ["t"])],
                             "then", [], [helper.make_tensor_value_info("t", F, [3])])
    els = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["xx"], axis=0),
                             const("two", np.float32(2)), helper.make_node("Mul", ["xx", "two"], ["e"])],
                            "else", [], [helper.make_tensor_value_info("e", F, [6])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=els)], "if",
                          [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [3])],
                          [helper.make_tensor_value_info("y", F, ["n"])])
    save(g, f"{d}/if.onnx")


def loop_model(d):
    """At most M steps while the body's condition holds (acc[0] < 20):
    acc += x * i; grow = concat(grow, x) (a loop-carried value whose shape
    changes); the scan output stacks acc at each step."""
    body = helper.make_graph([
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x", "fi"], ["xi"]),
        helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
        helper.make_node("Concat", ["grow", "x"], ["grow_out"], axis=0),
        const("limit", np.float32(20)), const("zero", np.array([0], np.int64)),
        helper.make_node("Gather", ["acc_out", "zero"], ["first"], axis=0),
        helper.make_node("Less", ["first", "limit"], ["lt"]),
        helper.make_node("Squeeze", ["lt", "zero"], ["cond_out"]),
        helper.make_node("Identity", ["acc_out"], ["scan"]),
    ], "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", B, []),
                helper.make_tensor_value_info("acc", F, [2]), helper.make_tensor_value_info("grow", F, ["n"])],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("acc_out", F, [2]),
         helper.make_tensor_value_info("grow_out", F, ["n"]), helper.make_tensor_value_info("scan", F, [2])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "c", "acc0", "x"], ["acc", "grow", "scans"], body=body)],
                          "loop", [helper.make_tensor_value_info("M", I64, []), helper.make_tensor_value_info("c", B, []),
                                   helper.make_tensor_value_info("acc0", F, [2]),
                                   helper.make_tensor_value_info("x", F, [2])],
                          [helper.make_tensor_value_info("acc", F, [2]), helper.make_tensor_value_info("grow", F, ["n"]),
                           helper.make_tensor_value_info("scans", F, ["k", 2])])
    save(g, f"{d}/loop.onnx")


def scan_model(d):
    """Scan over the columns of x (scan_input_axes 1), last first; the
    running sums stacked in reverse (scan_output_directions 1)."""
    body = helper.make_graph([helper.make_node("Add", ["s", "col"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y"])], "body",
                             [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("col", F, [2])],
                             [helper.make_tensor_value_info("s_out", F, [2]), helper.make_tensor_value_info("y", F, [2])])
    g = helper.make_graph([helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                                            scan_input_axes=[1], scan_input_directions=[1],
                                            scan_output_directions=[1])], "scan",
                          [helper.make_tensor_value_info("s0", F, [2]), helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("ys", F, [3, 2])])
    save(g, f"{d}/scan.onnx", opset=11)


def seq_model(d):
    """A sequence of tensors of different shapes: its length and its last
    element (position -1)."""
    g = helper.make_graph([helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                           helper.make_node("SequenceLength", ["s"], ["n"]),
                           const("pos", np.array(-1, np.int64)),
                           helper.make_node("SequenceAt", ["s", "pos"], ["last"])], "seq",
                          [helper.make_tensor_value_info("a", F, [2]), helper.make_tensor_value_info("b", F, [3])],
                          [helper.make_tensor_value_info("n", I64, []), helper.make_tensor_value_info("last", F, ["k"])])
    save(g, f"{d}/seq.onnx", opset=12)


def seq_rank_model(d):
    """A vector inserted into a sequence declared of scalars: only an empty
    one can take it (a List's elements share one rank)."""
    s = helper.make_tensor_sequence_value_info("s", F, [])
    g = helper.make_graph([helper.make_node("SequenceInsert", ["s", "x"], ["t"]),
                           helper.make_node("SequenceLength", ["t"], ["n"]),
                           const("pos", np.array(-1, np.int64)),
                           helper.make_node("SequenceAt", ["t", "pos"], ["last"])], "seq_rank",
                          [s, helper.make_tensor_value_info("x", F, [3])],
                          [helper.make_tensor_value_info("n", I64, []), helper.make_tensor_value_info("last", F, [3])])
    save(g, f"{d}/seq_rank.onnx", opset=13)
    # a loop-carried optional sequence that the body turns into a sequence
    opt = helper.make_optional_type_proto(helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [])))
    body = helper.make_graph([helper.make_node("Identity", ["cond"], ["cond_out"]),
                              helper.make_node("OptionalGetElement", ["o"], ["s_out"])], "body",
                             [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", B, []),
                              helper.make_value_info("o", opt)],
                             [helper.make_tensor_value_info("cond_out", B, []),
                              helper.make_tensor_sequence_value_info("s_out", F, [])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "o0"], ["s"], body=body)], "loop_option",
                          [helper.make_tensor_value_info("M", I64, []), helper.make_value_info("o0", opt)],
                          [helper.make_tensor_sequence_value_info("s", F, [])])
    save(g, f"{d}/loop_option.onnx", opset=16)


def scan8_models(d):
    """Scan at opset 8: a batch axis first, the scan axis second, read
    backwards (directions [1]); sequence_lens shorter than the scan."""
    body = helper.make_graph([helper.make_node("Add", ["s", "col"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y"])], "body",
                             [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("col", F, [2])],
                             [helper.make_tensor_value_info("s_out", F, [2]), helper.make_tensor_value_info("y", F, [2])])
    for name, lens, inits in [("scan8", "", []),
                              ("scan8_lens", "lens", [helper.make_tensor("lens", TensorProto.INT32, [2], [3, 2])])]:
        g = helper.make_graph([helper.make_node("Scan", [lens, "s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                                                directions=[1])], name,
                              [helper.make_tensor_value_info("s0", F, [2, 2]), helper.make_tensor_value_info("x", F, [2, 3, 2])],
                              [helper.make_tensor_value_info("s", F, [2, 2]), helper.make_tensor_value_info("ys", F, [2, 3, 2])],
                              inits)
        save(g, f"{d}/{name}.onnx", opset=8)


def bad_models(d):
    """A Loop with neither a trip count nor a condition; a body with an op
    rly does not import."""
    body = helper.make_graph([helper.make_node("Identity", ["cond"], ["cond_out"]),
                              helper.make_node("Identity", ["v"], ["v_out"])], "body",
                             [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", B, []),
                              helper.make_tensor_value_info("v", F, [2])],
                             [helper.make_tensor_value_info("cond_out", B, []),
                              helper.make_tensor_value_info("v_out", F, [2])])
    g = helper.make_graph([helper.make_node("Loop", ["", "", "x"], ["y"], body=body)], "forever",
                          [helper.make_tensor_value_info("x", F, [2])], [helper.make_tensor_value_info("y", F, [2])])
    save(g, f"{d}/forever.onnx")
    body.node[1].op_type = "Frobnicate"
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)], "unknown_op",
                          [helper.make_tensor_value_info("M", I64, []), helper.make_tensor_value_info("x", F, [2])],
                          [helper.make_tensor_value_info("y", F, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, f"{d}/unknown_op.onnx")


RUN_SCRIPT = """\
:import if.onnx as @if
:import loop.onnx as @loop
:load-tensor %x in.npz x
:load-tensor %acc0 in.npz acc0
:load-tensor %x3 in.npz x3
:import scan.onnx as @scan
:load-tensor %xs in.npz xs
let %sc = @scan(%acc0, %xs);
let %scan_s = %sc.0;
let %scan_ys = %sc.1;
let %if_1 = @if(True, %x3);
let %if_0 = @if(False, %x3);
let %r0 = @loop(0i64, True, %acc0, %x);
let %r2 = @loop(2i64, True, %acc0, %x);
let %r10 = @loop(10i64, True, %acc0, %x);
""" + "".join(f"let %loop{m}_{k} = %r{m}.{i};\n" for m in (0, 2, 10)
              for i, k in enumerate(("acc", "grow", "scans"))) + \
    ":save %if_1 %if_0 %scan_s %scan_ys " + " ".join(f"%loop{m}_{k}" for m in (0, 2, 10) for k in ("acc", "grow", "scans")) + \
    " got.npz\n"


def reference(ins):
    want = {}
    for c in (True, False):
        x = ins["x3"]
        want[f"if_{int(c)}"] = x + 1 if c else np.concatenate([x, x]) * 2
    s, ys = ins["acc0"], []
    for c in reversed(range(3)):
        s = s + ins["xs"][:, c]
        ys.insert(0, s)
    want["scan_s"], want["scan_ys"] = s, np.stack(ys)
    for m in (0, 2, 10):
        acc, grow, scans, i, cond = ins["acc0"].copy(), ins["x"].copy(), [], 0, True
        while i < m and cond:
            acc = acc + ins["x"] * np.float32(i)
            grow = np.concatenate([grow, ins["x"]])
            scans.append(acc)
            cond = bool(acc[0] < 20)
            i += 1
        want[f"loop{m}_acc"], want[f"loop{m}_grow"] = acc, grow
        want[f"loop{m}_scans"] = np.stack(scans) if scans else np.zeros((0, 2), np.float32)
    return want


def main():
    if sys.argv[1] == "--check":
        want, got = np.load(f"{sys.argv[2]}/want.npz"), np.load(sys.argv[3])
        for k in want.files:
            g, w = got[k], want[k]
            ok = g.dtype == w.dtype and g.shape == w.shape and np.allclose(g, w, rtol=1e-5)
            print(f"ok {k}" if ok else f"MISMATCH {k}: got {g.dtype}{g.shape} {g}, want {w.dtype}{w.shape} {w}")
        return
    d = sys.argv[1]
    if_model(d), loop_model(d), scan_model(d), seq_model(d), seq_rank_model(d), scan8_models(d), bad_models(d)
    ins = {"x": np.array([1.5, -2], np.float32), "acc0": np.array([1, 2], np.float32),
           "x3": np.array([0.5, -1, 3], np.float32), "xs": np.array([[1, 2, 4], [8, 16, 32]], np.float32)}
    np.savez(f"{d}/in.npz", **ins)
    np.savez(f"{d}/want.npz", **reference(ins))
    with open(f"{d}/run.rly", "w") as f:
        f.write(RUN_SCRIPT)


if __name__ == "__main__":
    main()
