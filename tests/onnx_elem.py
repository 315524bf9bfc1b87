#!/usr/bin/python3
"""onnx_elem.py — the elementwise, math and signal converters (frontend/onnx_elem.c)
on the forms ONNX's backend suite leaves out, in both execution modes.

Usage: /usr/bin/python3 tests/onnx_elem.py PATH/TO/rly

Writes one case per form (a one-node model and its inputs and outputs, laid
out as the backend suite lays out its cases; the outputs computed here with
numpy) into a temporary folder and runs tests/onnx_backend.py over it, every
case expected to pass in both modes: DFT with onesided, dft_length (cut and
zero-padded), complex input and another axis; STFT of a complex signal with
frame_length alone; windows in float64, symmetric; Mod both ways with
broadcasting; BitShift broadcast; Trilu without k; EyeLike off the diagonal
in another dtype; Shrink, Celu, Selu, Softsign, ThresholdedRelu with
attributes; the trigonometric ops at opset 17; LRN; MeanVarianceNormalization
over one axis; batched Det; IsInf of one sign.  Then the refusals: each must
fail naming the node and saying why.  Exits 77 (skipped) without numpy or
onnx."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    import onnx.mapping
    from onnx import helper, numpy_helper, TensorProto
except ImportError as e:
    print(f"onnx_elem: skipped ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(7)
F32, F64 = np.float32, np.float64


def model(op, inputs, outputs, attrs=None, inits=(), opset=17):
    """A one-node model: inputs/outputs are (name, array) pairs; inits are
    initializers (name, array) the node also reads."""
    def vi(name, a):
        return helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)], a.shape)
    names = [n for n, _ in inputs] + [n for n, _ in inits]
    node = helper.make_node(op, names, [n for n, _ in outputs], **(attrs or {}))
    g = helper.make_graph([node], op.lower(), [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def write_case(root, name, m, inputs, outputs):
    d = os.path.join(root, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, vals in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(vals):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def dft_ref(x, axis, length, onesided, inverse):
    sig = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    n = sig.shape[axis]
    if length < n:
        sig = np.take(sig, range(length), axis=axis)
    elif length > n:
        pad = [(0, 0)] * sig.ndim
        pad[axis] = (0, length - n)
        sig = np.pad(sig, pad)
    y = np.fft.ifft(sig, axis=axis) if inverse else np.fft.fft(sig, axis=axis)
    if onesided:
        y = np.take(y, range(length // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


def window_ref(a, size, periodic):
    n = np.arange(size)
    d = size if periodic else size - 1
    return a[0] - a[1] * np.cos(2 * np.pi * n / d) + a[2] * np.cos(4 * np.pi * n / d)


def stft_ref(x, step, length, onesided):
    sig = x[..., 0] + 1j * x[..., 1]
    nf = (x.shape[1] - length) // step + 1
    fr = np.stack([sig[:, f * step:f * step + length] for f in range(nf)], axis=1)
    y = np.fft.fft(fr, axis=-1)[..., :(length // 2 + 1 if onesided else length)]
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


def unary_cases():
    x = RNG.uniform(-0.9, 0.9, (3, 4)).astype(F32)
    for op, f in (("Acos", np.arccos), ("Asin", np.arcsin), ("Atan", np.arctan), ("Tan", np.tan),
                  ("Softsign", lambda v: v / (1 + np.abs(v)))):
        yield op.lower(), model(op, [("x", x)], [("y", f(x))]), [("x", x)], [("y", f(x))]


def activation_cases():
    x = RNG.uniform(-3, 3, (2, 5)).astype(F32)
    shrink = np.where(x < -1, x + 1.5, np.where(x > 1, x - 1.5, 0)).astype(F32)
    celu = (np.maximum(0, x) + np.minimum(0, 2 * (np.exp(x / 2) - 1))).astype(F32)
    selu = (0.5 * np.where(x > 0, x, 2 * (np.exp(x) - 1))).astype(F32)
    thr = np.where(x > 0.5, x, 0).astype(F32)
    for name, op, attrs, y in (("shrink_bias", "Shrink", {"lambd": 1.0, "bias": 1.5}, shrink),
                               ("celu_alpha2", "Celu", {"alpha": 2.0}, celu),
                               ("selu_opset17", "Selu", {"alpha": 2.0, "gamma": 0.5}, selu),
                               ("thresholdedrelu_half", "ThresholdedRelu", {"alpha": 0.5}, thr)):
        yield name, model(op, [("x", x)], [("y", y)], attrs), [("x", x)], [("y", y)]


def arith_cases():
    a = RNG.integers(-20, 20, (3, 4)).astype(np.int32)
    b = np.array([3, -4, 5, -7], np.int32)
    yield "mod_int_broadcast", model("Mod", [("a", a), ("b", b)], [("y", np.mod(a, b))]), \
        [("a", a), ("b", b)], [("y", np.mod(a, b))]
    fa, fb = RNG.uniform(-9, 9, (2, 3)).astype(F64), np.array([2.5, -1.5, 4.0], F64)
    y = np.fmod(fa, fb)
    yield "mod_fmod_broadcast", model("Mod", [("a", fa), ("b", fb)], [("y", y)], {"fmod": 1}), \
        [("a", fa), ("b", fb)], [("y", y)]
    u, s = RNG.integers(0, 255, (2, 3)).astype(np.uint8), np.array([1, 2, 7], np.uint8)
    yield "bitshift_broadcast", model("BitShift", [("x", u), ("s", s)], [("y", u >> s)], {"direction": "RIGHT"}), \
        [("x", u), ("s", s)], [("y", u >> s)]
    c = np.array([[1, -np.inf, np.inf, np.nan]], F32)
    yield "isinf_negative_only", model("IsInf", [("x", c)], [("y", np.isneginf(c))], {"detect_positive": 0}), \
        [("x", c)], [("y", np.isneginf(c))]


def matrix_cases():
    x = RNG.standard_normal((2, 3, 4)).astype(F32)
    yield "trilu_no_k", model("Trilu", [("x", x)], [("y", np.tril(x))], {"upper": 0}), [("x", x)], [("y", np.tril(x))]
    e = np.zeros((3, 5), np.int32)
    eye = np.eye(3, 5, k=-1, dtype=F64)
    yield "eyelike_k_dtype", model("EyeLike", [("x", e)], [("y", eye)], {"k": -1, "dtype": TensorProto.DOUBLE}), \
        [("x", e)], [("y", eye)]
    m = RNG.standard_normal((2, 3, 4, 4)).astype(F64)
    yield "det_batched", model("Det", [("x", m)], [("y", np.linalg.det(m))]), [("x", m)], [("y", np.linalg.det(m))]


def norm_cases():
    x = RNG.standard_normal((2, 7, 3, 3)).astype(F32)
    sq = np.pad(x * x, ((0, 0), (2, 2), (0, 0), (0, 0)))
    s = sum(sq[:, i:i + 7] for i in range(5))
    lrn = (x / (1.5 + 0.01 / 5 * s) ** 0.6).astype(F32)
    yield "lrn_size5", model("LRN", [("x", x)], [("y", lrn)], {"size": 5, "alpha": 0.01, "beta": 0.6, "bias": 1.5}), \
        [("x", x)], [("y", lrn)]
    mu, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    mvn = ((x - mu) / (np.sqrt(var) + 1e-9)).astype(F32)
    yield "mvn_axis1", model("MeanVarianceNormalization", [("x", x)], [("y", mvn)], {"axes": [1]}), \
        [("x", x)], [("y", mvn)]


def signal_cases():
    x = RNG.standard_normal((2, 8, 1)).astype(F32)
    y = dft_ref(x, 1, 6, True, False)
    yield "dft_onesided_cut", model("DFT", [("x", x)], [("y", y)], {"onesided": 1}, [("n", np.array(6, np.int64))]), \
        [("x", x)], [("y", y)]
    c = RNG.standard_normal((1, 5, 3, 2)).astype(F32)
    y = dft_ref(c, 1, 8, False, False)
    yield "dft_complex_padded", model("DFT", [("x", c)], [("y", y)], {"axis": 1}, [("n", np.array(8, np.int64))]), \
        [("x", c)], [("y", y)]
    y = dft_ref(c, 2, 3, False, True)
    yield "dft_inverse_axis2", model("DFT", [("x", c)], [("y", y)], {"axis": 2, "inverse": 1}), [("x", c)], [("y", y)]
    s = RNG.standard_normal((2, 20, 2)).astype(F32)
    step, length = np.array(3, np.int64), np.array(6, np.int64)
    y = stft_ref(s, 3, 6, False)
    m = model("STFT", [("s", s), ("step", step)], [("y", y)], {"onesided": 0})
    m.graph.node[0].input[:] = ["s", "step", "", "len"]
    m.graph.input.append(helper.make_tensor_value_info("len", TensorProto.INT64, []))
    yield "stft_complex_frame_length", m, [("s", s), ("step", step), ("len", length)], [("y", y)]
    n = np.array(9, np.int64)
    w = window_ref((0.42, 0.5, 0.08), 9, False)
    yield "blackman_symmetric_double", model("BlackmanWindow", [("n", n)], [("y", w)],
                                             {"periodic": 0, "output_datatype": TensorProto.DOUBLE}), \
        [("n", n)], [("y", w)]


def refusals():
    """(name, model, expected error text) of forms the importer refuses."""
    x = np.ones((2, 4, 3, 3), F32)
    yield "bernoulli", model("Bernoulli", [("x", x)], [("y", x)], opset=15), \
        "(Bernoulli): ai.onnx.Bernoulli (opset 15) draws random numbers"
    yield "lrn_even", model("LRN", [("x", x)], [("y", x)], {"size": 2}), "size 2 is not supported"
    yield "mod_float_fmod0", model("Mod", [("a", x), ("b", x)], [("y", x)]), \
        "fmod=0 on float32: the spec requires fmod=1 for floats"
    s = np.ones((1, 8, 1), F32)
    yield "dft_onesided_inverse", model("DFT", [("x", s)], [("y", s)], {"onesided": 1, "inverse": 1}), \
        "onesided with inverse is not supported"


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    rly = os.path.abspath(sys.argv[1])
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for gen in (unary_cases, activation_cases, arith_cases, matrix_cases, norm_cases, signal_cases):
            for name, m, ins, outs in gen():
                write_case(tmp, "test_" + name, m, ins, outs)
                names.append("node/test_" + name)
        with open(os.path.join(tmp, "expected"), "w") as f:
            f.write("\n".join(names) + "\n")
        r = subprocess.run([sys.executable, os.path.join(HERE, "onnx_backend.py"), rly, "--data", tmp,
                            "--suites", "node", "--expected", os.path.join(tmp, "expected"), "-v"],
                           capture_output=True, text=True)
        print(r.stdout + r.stderr)
        failed += r.returncode != 0
        for name, m, text in refusals():
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(m, path)
            r = subprocess.run([rly, "--import", path], capture_output=True, text=True)
            ok = r.returncode != 0 and text in r.stderr and "node #0" in r.stderr
            print(f"{'ok' if ok else 'FAIL'}   refused {name}: {r.stderr.strip().splitlines()[0] if r.stderr else ''}")
            failed += not ok
    print(f"onnx_elem: {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
