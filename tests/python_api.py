#!/usr/bin/python3
"""python_api.py — `import rly` (python/rly/__init__.py over librly.so).

Usage: /usr/bin/python3 tests/python_api.py PATH/TO/librly.so

Checks, in both exec modes: results against numpy (one result, a tuple, a
result that repeats a tensor); errors as rly.Error with rly's located text,
after which the session goes on; arguments read in place when aligned (a
16 MiB argument under an 8 MiB memory limit runs; the same data one float
off alignment is copied, and the copy hits the limit); results handed over
without a copy (the DLPack tensor owns the run time's buffer) unless the
session still holds them; torch tensors in through __dlpack__; passes and
printing; an ONNX model imported and run; time(). Exits 77 (skipped)
without numpy."""
import ctypes
import os
import sys
import tempfile

try:
    import numpy as np
except ImportError as e:
    print(f"python_api: skipped ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["RLY_LIBRARY"] = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import rly  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def raises(fn, *want):
    """The rly.Error fn raises (each of want in its text), or None."""
    try:
        fn()
    except rly.Error as e:
        return all(w in str(e) for w in want)
    return False


PROGRAM = """
def @mlp(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 3), float32]) {
  nn.relu(nn.matmul(%x, %w))
}
def @two(%x: Tensor[(5), float32]) {
  let %y = add(%x, 1f);
  (%y, %y, multiply(%y, 2f))
}
def @total(%x: Tensor[(4194304), float32]) { sum(%x) }
"""


def values(s, mode):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 8), np.float32), rng.standard_normal((8, 3), np.float32)
    got = s.run("@mlp", x, w)
    want = np.maximum(x @ w, 0)
    check(got.shape == (4, 3) and got.dtype == np.float32 and np.allclose(got, want, 1e-5, 1e-5),
          f"{mode}: @mlp equals numpy")
    v = np.arange(5, dtype=np.float32)
    a, b, c = s.run("@two", v)
    check(np.array_equal(a, v + 1) and np.array_equal(b, v + 1) and np.array_equal(c, 2 * (v + 1)),
          f"{mode}: a tuple result, its repeated tensor given twice")
    a[0] = 100
    check(b[0] == 1, f"{mode}: a repeated tensor comes back as two arrays, not one buffer")


def errors(s, mode):
    check(raises(lambda: s.load("def @bad(%x) { foo(%x) }"), "<python>:1:16: error:",
                 "unknown operator `foo`", "^"), f"{mode}: a load error is rly.Error, located")
    check(raises(lambda: s.run("@nope"), "no function @nope"), f"{mode}: unknown function")
    check(raises(lambda: s.run("@mlp", np.ones((3, 3), np.float32), np.ones((8, 3), np.float32))),
          f"{mode}: a call of the wrong type is rly.Error")
    check(raises(lambda: s.pass_("NoSuchPass"), "NoSuchPass"), f"{mode}: an unknown pass")
    got = s.run("@two", np.zeros(5, np.float32))[2]
    check(np.array_equal(got, np.full(5, 2, np.float32)), f"{mode}: the session goes on")


def in_place(s, mode):
    s.max_memory = 8 << 20
    x = rly.empty((4 << 20,), np.float32)
    x[:] = 0.5
    check(s.run("@total", x) == np.float32(2 << 20), f"{mode}: an aligned 16 MiB argument "
          "under an 8 MiB limit is read in place")
    raw = rly.empty(((4 << 20) + 16,), np.float32)
    off = raw[1:1 + (4 << 20)]
    off[:] = 0.5
    check(off.ctypes.data % rly.ALIGN != 0 and
          raises(lambda: s.run("@total", off), "memory limit"),
          f"{mode}: the same argument off alignment is copied (and the copy hits the limit)")
    s.max_memory = 1 << 34


def handed_over(s, mode):
    """The DLPack tensors rly_call returns: the run time's buffer (manager_ctx set) or a copy."""
    lib = rly._lib
    x = rly.aligned(np.arange(5, dtype=np.float32))
    keep = []
    arg = (rly._DLTensor * 1)(rly._tensor(x, keep))
    outs = (ctypes.POINTER(rly._Managed) * 4)()
    n = ctypes.c_int()
    rc = lib.rly_call(s._s, b"two", arg, 1, outs, 4, ctypes.byref(n))
    check(rc == 0 and n.value == 3, f"{mode}: rly_call returns three tensors")
    owned = [bool(outs[i].contents.manager_ctx) for i in range(n.value)]
    check(owned == [False, False, True],
          f"{mode}: a result handed over without a copy, a repeated one copied ({owned})")
    aligned_data = all(outs[i].contents.dl_tensor.data % rly.ALIGN == 0 for i in range(n.value))
    check(aligned_data, f"{mode}: result data is 64-byte aligned")
    for i in range(n.value):
        outs[i].contents.deleter(outs[i])


def torch_in(s, mode):
    try:
        import torch
    except ImportError:
        print("skip torch (not importable)")
        return
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    got = s.run("@mlp", x, w)
    check(np.allclose(got, torch.relu(x @ w).numpy(), 1e-5, 1e-5),
          f"{mode}: torch tensors in through __dlpack__")


def passes_and_print(mode):
    with rly.Session(exec=mode) as s:
        s.load(PROGRAM)
        s.pass_("FuseOps")
        text = s.print()
        check("Primitive=1" in text and "def @mlp" in text, f"{mode}: FuseOps, then print()")
        x, w = np.ones((4, 8), np.float32), np.ones((8, 3), np.float32)
        check(np.array_equal(s.run("@mlp", x, w), np.full((4, 3), 8, np.float32)),
              f"{mode}: runs after the pass")
        check(s.eval("add(1, 2)") == "3", f"{mode}: eval")


def onnx_model(mode):
    try:
        import onnx
        from onnx import helper, TensorProto, numpy_helper
    except ImportError:
        print("skip onnx (not importable)")
        return
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        with rly.Session(exec=mode) as s:
            s.load(path)
            x = np.array([[1, -2, 3], [-1, 0, 1]], np.float32)
            check(np.array_equal(s.run("@main", x), np.maximum(x @ w, 0)),
                  f"{mode}: an ONNX model imported and run")
            bad = os.path.join(d, "bad.onnx")
            with open(bad, "wb") as f:
                f.write(b"not a model")
            check(raises(lambda: s.load(bad), "bad.onnx"), f"{mode}: a bad model is rly.Error")


def timing(s, mode):
    t = s.time("@two", np.zeros(5, np.float32), runs=5)
    check(t["runs"] == 5 and t["min_ms"] <= t["median_ms"], f"{mode}: time() makes its runs")


def example():
    """examples/python_session.py runs and agrees with numpy."""
    import subprocess
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "examples", "python_session.py")],
                       capture_output=True, text=True, timeout=300)
    diff = [float(l.split(":")[1]) for l in r.stdout.splitlines()
            if l.startswith("max difference from numpy:")]
    check(r.returncode == 0 and diff and diff[0] < 1e-5 and "error: nn.relu" in r.stdout,
          f"examples/python_session.py runs ({r.returncode}{r.stderr[-300:]})")


def main():
    for mode in ("jit", "interp"):
        with rly.Session(exec=mode) as s:
            s.load(PROGRAM)
            values(s, mode)
            errors(s, mode)
            in_place(s, mode)
            handed_over(s, mode)
            torch_in(s, mode)
            timing(s, mode)
        passes_and_print(mode)
        onnx_model(mode)
    example()
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
