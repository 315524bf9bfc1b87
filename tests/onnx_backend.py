#!/usr/bin/python3
"""onnx_backend.py — ONNX's own backend test suite (Debian's libonnx-testdata).

Usage: /usr/bin/python3 tests/onnx_backend.py PATH/TO/rly [options]

  --data DIR        the suite's root (default /usr/share/libonnx-testdata/data)
  --suites A,B      suites to run (default node,pytorch-converted,pytorch-operator,simple)
  -k SUBSTR         only cases whose name contains SUBSTR (repeatable)
  --modes M,M       execution modes (default jit,interp)
  --stride N        every Nth case only (the sanitizer build runs a sample)
  --jobs N          cases run at once (default: the number of cores)
  --expected FILE   the cases expected to pass in every mode (default
                    tests/onnx_backend.expected); any of them failing fails the run
  --update          rewrite FILE with the cases that passed in every mode
  --reasons         a histogram of the first error line of the refused cases
  -v                one line per case

Each case is a folder with model.onnx and test_data_set_0/{input,output}_K.pb.
The inputs (the graph inputs that are not initializers, in order) are written to
an .npz file, and the model is run by `rly --exec MODE` on a script of
`:import`, `:load-tensor`, a call of @main and `:save` of every output.  A
sequence input is passed as the prelude's List of its tensors (through a function
whose parameters have `?` dims, so elements may differ in shape), an optional as
its Option; a sequence output is saved as its length and its elements, an
optional as whether it holds a value and the value.  A case passes as ONNX's
runner (onnx.backend.test.runner) judges: every output present, the same dtype
and shape, and assert_allclose(rtol=1e-3, atol=1e-7); a sequence element by
element, an optional by presence, then value.

A case listed in ERRATA (a model without an attribute its expected outputs
were computed with) is run on a copy of its model with the attribute added;
one listed in SHAPE_ERRATA (a graph input declared with a shape its data file
does not have) on a copy whose declaration is the data's shape.

bfloat16 tensors: numpy has no bfloat16, and onnx.numpy_helper gives their
bits as uint16.  Inputs are passed to rly as 2-byte void ('V2', which rly
reads as bfloat16); rly saves bfloat16 outputs as 'V2' too, and their bits
are compared as ONNX's runner compares what numpy_helper gives, with
assert_allclose(rtol=1e-3, atol=1e-7) on the uint16 bits.  (The suite's
FLOAT_to_BFLOAT16 outputs were made by truncating float32 bits; rly rounds to
nearest even, as torch and the ONNX reference implementation do, which can
differ from them by one unit in the last place, within that tolerance.)

Outcomes: pass; refused (rly reported an error, e.g. an op it does not import);
wrong (it ran and an output differs: wrong values, dtype or shape); crash (a
signal or a sanitizer report); timeout.  The run fails when a case listed in
the expected file does not pass, or on any wrong, crash or timeout outcome.
Exits 77 (skipped) when numpy, onnx or the suite is not installed."""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as e:  # test-only dependencies (scripts/install-deps, make test)
    print(f"onnx_backend: skipped ({e}; install python3-onnx python3-numpy)")
    sys.exit(77)

SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
# Models that lack an attribute their expected outputs were computed with
# (case -> op, attribute, value): the runner adds it, as newer ONNX releases'
# test data does.  test_adam_multiple's outputs use epsilon=1e-2, but its node
# has none, so the spec's default 1e-6 applies (onnx/onnx#7749).
ERRATA = {"node/test_adam_multiple": ("Adam", "epsilon", 1e-2)}
# Graph inputs whose declared shape their data lacks (case -> input): the
# CastLike BFLOAT16 cases declare `like` (3, 4) and hold one element.
SHAPE_ERRATA = {f"node/test_castlike_{c}{x}": "like" for c in ("FLOAT_to_BFLOAT16", "BFLOAT16_to_FLOAT")
                for x in ("", "_expanded")}
BFLOAT16 = 16  # TensorProto.BFLOAT16
HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120


class Case:
    def __init__(self, suite, folder):
        self.suite, self.folder = suite, folder
        self.name = f"{suite}/{os.path.basename(folder)}"
        self.model = os.path.join(folder, "model.onnx")
        self.data = os.path.join(folder, "test_data_set_0")


def list_cases(root, suites, keys, stride):
    cases = []
    for s in suites:
        d = os.path.join(root, s)
        if not os.path.isdir(d):
            continue
        for n in sorted(os.listdir(d)):
            c = Case(s, os.path.join(d, n))
            if os.path.exists(c.model) and os.path.isdir(c.data):
                if not keys or any(k in c.name for k in keys):
                    cases.append(c)
    return cases[::stride]


def value_kind(vi):
    """'tensor', 'sequence', 'optional' or 'map' of a graph input/output."""
    k = vi.type.WhichOneof("value")
    return {"tensor_type": "tensor", "sequence_type": "sequence", "optional_type": "optional",
            "map_type": "map", "sparse_tensor_type": "sparse"}.get(k, "tensor" if k is None else k)


def load_pb(path, kind):
    proto = {"sequence": onnx.SequenceProto, "optional": onnx.OptionalProto}.get(kind, onnx.TensorProto)()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    if kind == "sequence":
        return [numpy_helper.to_array(t) for t in proto.tensor_values]
    if kind == "optional":
        return numpy_helper.to_optional(proto) if hasattr(numpy_helper, "to_optional") else None
    return numpy_helper.to_array(proto)


def data_files(case, prefix):
    files = [f for f in os.listdir(case.data) if re.fullmatch(prefix + r"_\d+\.pb", f)]
    return [os.path.join(case.data, f) for f in sorted(files, key=lambda f: int(f[len(prefix) + 1:-3]))]


def input_expr(name, value, kind, arrays):
    """The rly expression of an input value (its tensors into arrays): a tensor
    variable, a sequence as the prelude's List (Cons(%a, Cons(%b, Nil))), an
    optional as its Option (Some(...) or None)."""
    if kind == "optional":
        if value is None:
            return "None"
        return f"Some({input_expr(name, value, 'sequence' if isinstance(value, list) else 'tensor', arrays)})"
    if kind == "sequence":  # elements of any shape: given to a function typed Tensor[(?, ...)]
        params, args, expr = [], [], "Nil"
        for k, v in enumerate(value):
            args.append(input_expr(f"{name}_{k}", v, "tensor", arrays))
            dims = ", ".join("?" * v.ndim)
            params.append(f"%x{k}: " + (f"Tensor[({dims}), {v.dtype.name}]" if v.ndim else v.dtype.name))
        for k in reversed(range(len(value))):
            expr = f"Cons(%x{k}, {expr})"
        return f"fn ({', '.join(params)}) {{ {expr} }}({', '.join(args)})" if value else "Nil"
    if value.dtype == object:
        raise ValueError("a string input")
    arrays[name] = value
    return f"%{name}"


def output_lines(var, expected, key):
    """Script lines saving the output held by `var` under keys starting with
    `key`: a tensor as itself; a sequence's length (key_n) and the elements
    expected (key_K); an optional's presence (key_has) and its value."""
    if isinstance(expected, list):
        lines = [f"let %{key}_n = @length({var});"]
        for k, e in enumerate(expected):
            lines += [f"let %{key}_s{k} = @nth({var}, {k});"]
            lines += output_lines(f"%{key}_s{k}", e, f"{key}_{k}")
        return lines
    if isinstance(expected, Absent):
        return [f"let %{key}_has = match ({var}) {{ Some(_) => True, None => False }};"]
    if isinstance(expected, Present):
        return [f"let %{key}_has = match ({var}) {{ Some(_) => True, None => False }};",
                f"let %{key}_v = match? ({var}) {{ Some(%x) => %x }};"] + \
            output_lines(f"%{key}_v", expected.value, f"{key}_v")
    return [f"let %{key} = {var};"]


def saved_keys(expected, key):
    if isinstance(expected, list):
        return [f"{key}_n"] + [k for i, e in enumerate(expected) for k in saved_keys(e, f"{key}_{i}")]
    if isinstance(expected, Absent):
        return [f"{key}_has"]
    if isinstance(expected, Present):
        return [f"{key}_has"] + saved_keys(expected.value, f"{key}_v")
    return [key]


class Absent:
    """An optional output expected empty."""


class Present:
    """An optional output expected to hold value."""
    def __init__(self, value):
        self.value = value


def expected_value(vi, value):
    """The expected value of an output, optionals marked Absent / Present."""
    if value_kind(vi) == "optional":
        return Absent() if value is None else Present(value)
    return value


def read_saved(z, expected, key):
    """What rly saved for an output, in the form of the expected value (a
    sequence of another length is a Seq of the elements that were saved)."""
    if isinstance(expected, list):
        n = int(z[f"{key}_n"])
        return Seq(n, [read_saved(z, e, f"{key}_{i}") for i, e in enumerate(expected[:n])])
    if isinstance(expected, (Absent, Present)):
        if not bool(z[f"{key}_has"]):
            return Absent()
        return Present(read_saved(z, expected.value, f"{key}_v") if isinstance(expected, Present) else None)
    return z[key]


class Seq(list):
    def __init__(self, n, items):
        super().__init__(items)
        self.n = n


def corrected_model(case, model, tmp, data):
    """The model's path, or that of a copy with its ERRATA attribute added or
    its SHAPE_ERRATA input declared with the shape of its data (by name)."""
    if case.name not in ERRATA and case.name not in SHAPE_ERRATA:
        return case.model
    if case.name in ERRATA:
        op, name, value = ERRATA[case.name]
        for n in model.graph.node:
            if n.op_type == op and not any(a.name == name for a in n.attribute):
                n.attribute.append(onnx.helper.make_attribute(name, value))
    for vi in model.graph.input:
        if vi.name == SHAPE_ERRATA.get(case.name) and vi.name in data:
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for d in data[vi.name].shape:
                dims.add().dim_value = d
    path = os.path.join(tmp, "model.onnx")
    onnx.save(model, path)
    return path


def prepare(case, tmp):
    """The rly script of the case and its expected outputs, or (None, reason)."""
    model = onnx.load(case.model, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    in_files, out_files = data_files(case, "input"), data_files(case, "output")
    if len(in_files) > len(inputs) or len(out_files) != len(model.graph.output):
        return None, "runner: the data files do not match the graph's inputs and outputs"
    arrays, args, data = {}, [], {}
    for i, (vi, f) in enumerate(zip(inputs, in_files)):
        kind = value_kind(vi)
        if kind not in ("tensor", "sequence", "optional"):
            return None, f"runner: a {kind} input"
        value = load_pb(f, kind)
        if kind == "tensor" and vi.type.tensor_type.elem_type == BFLOAT16:
            value = value.view("V2")  # the bits, which rly reads as bfloat16
        data[vi.name] = value
        try:
            args.append(input_expr(f"in{i}", value, kind, arrays))
        except ValueError as e:
            return None, f"runner: {e}"
    model_path = corrected_model(case, model, tmp, data)
    expected = []
    for vi, f in zip(model.graph.output, out_files):
        kind = value_kind(vi)
        if kind not in ("tensor", "sequence", "optional"):
            return None, f"runner: a {kind} output"
        expected.append(expected_value(vi, load_pb(f, kind)))
    npz = os.path.join(tmp, "in.npz")
    np.savez(npz, **arrays)
    lines = [f":import {model_path}"]
    lines += [f":load-tensor %{k} {npz} {k}" for k in arrays]
    lines.append(f"let %y = @main({', '.join(args)});")
    keys = []
    for i, e in enumerate(expected):
        lines += output_lines("%y" if len(expected) == 1 else f"%y.{i}", e, f"o{i}")
        keys += saved_keys(e, f"o{i}")
    lines.append(f":save {' '.join('%' + k for k in keys)} {os.path.join(tmp, 'out.npz')}")
    return "\n".join(lines) + "\n", expected


def first_error(text):
    for line in text.splitlines():
        m = re.search(r"error: (.*)", line)
        if m:  # without the model's path
            return re.sub(r"^\S*model\.onnx: ", "", m.group(1).strip())
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0].strip() if lines else "no message"


def compare_value(e, g, where):
    """None when g matches e as ONNX's runner checks (a sequence element by
    element, an optional by presence then value), else why not."""
    if isinstance(e, list):
        if g.n != len(e):
            return f"{where}: a sequence of {g.n} elements, expected {len(e)}"
        for k, (ek, gk) in enumerate(zip(e, g)):
            why = compare_value(ek, gk, f"{where}[{k}]")
            if why:
                return why
        return None
    if isinstance(e, (Absent, Present)):
        if isinstance(e, Absent) != isinstance(g, Absent):
            return f"{where}: an optional {'with' if isinstance(g, Present) else 'without'} a value"
        return compare_value(e.value, g.value, where) if isinstance(e, Present) else None
    if g.dtype == np.dtype("V2") and e.dtype == np.uint16:  # bfloat16: its bits, as ONNX compares them
        g = g.view(np.uint16)
        try:
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-7)
            return None if g.shape == e.shape else f"{where}: shape {g.shape}, expected {e.shape}"
        except AssertionError:
            return f"{where}: bfloat16 bits differ"
    if g.dtype != e.dtype:
        return f"{where}: dtype {g.dtype}, expected {e.dtype}"
    if g.shape != e.shape:
        return f"{where}: shape {g.shape}, expected {e.shape}"
    if e.dtype.kind in "fc":
        try:
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-7)
        except AssertionError:
            err = np.nanmax(np.abs(g.astype(np.float64) - e.astype(np.float64))) if e.size else 0
            return f"{where}: values differ (max error {err:.3g})"
    elif not np.array_equal(g, e):
        return f"{where}: values differ"
    return None


def compare(expected, got):
    """None when every output matches as ONNX's runner checks, else why not."""
    if len(got) != len(expected):
        return f"{len(got)} outputs saved, {len(expected)} expected"
    for i, (e, g) in enumerate(zip(expected, got)):
        why = compare_value(e, g, f"output {i}")
        if why:
            return why
    return None


def run_case(rly, case, mode):
    """(outcome, detail) of one case in one mode."""
    with tempfile.TemporaryDirectory(prefix="rly-onnx-") as tmp:
        try:
            script, expected = prepare(case, tmp)
        except Exception as e:  # a data file the runner cannot read
            return "refused", f"runner: {type(e).__name__}: {e}"
        if script is None:
            return "refused", expected
        path = os.path.join(tmp, "case.rly")
        with open(path, "w") as f:
            f.write(script)
        try:
            r = subprocess.run([rly, "--exec", mode, path], capture_output=True, text=True,
                               timeout=TIMEOUT, cwd=tmp)
        except subprocess.TimeoutExpired:
            return "timeout", f"over {TIMEOUT} s"
        err = r.stderr
        if r.returncode < 0 or "Sanitizer" in err or "runtime error:" in err:
            return "crash", (f"signal {-r.returncode}" if r.returncode < 0 else "sanitizer report") + \
                f": {err[-1500:]}"
        out = os.path.join(tmp, "out.npz")
        if r.returncode != 0 or not os.path.exists(out):
            return "refused", first_error(err or r.stdout)
        with np.load(out) as z:
            got = [read_saved(z, e, f"o{i}") for i, e in enumerate(expected)]
        why = compare(expected, got)
        return ("wrong", why) if why else ("pass", "")


def read_expected(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rly")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--suites", default=",".join(SUITES))
    ap.add_argument("-k", action="append", default=[])
    ap.add_argument("--modes", default="jit,interp")
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--expected", default=os.path.join(HERE, "onnx_backend.expected"))
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--reasons", action="store_true")
    ap.add_argument("-v", action="store_true")
    o = ap.parse_args()
    o.rly = os.path.abspath(o.rly)
    if not os.path.isdir(o.data):
        print(f"onnx_backend: skipped ({o.data} is missing; install libonnx-testdata)")
        sys.exit(77)
    suites, modes = o.suites.split(","), o.modes.split(",")
    cases = list_cases(o.data, suites, o.k, o.stride)
    jobs = [(c, m) for c in cases for m in modes]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as pool:
        futs = {pool.submit(run_case, o.rly, c, m): (c, m) for c, m in jobs}
        for f in concurrent.futures.as_completed(futs):
            c, m = futs[f]
            results[c.name, m] = f.result()
            if o.v:
                outcome, detail = results[c.name, m]
                print(f"{outcome:8} {m:6} {c.name}  {detail.splitlines()[0] if detail else ''}", flush=True)
    report(o, cases, modes, results)


def report(o, cases, modes, results):
    table = collections.defaultdict(collections.Counter)
    for c in cases:
        for m in modes:
            table[c.suite, m][results[c.name, m][0]] += 1
    print(f"{'suite':20} {'mode':6} {'cases':>6} {'pass':>6} {'refused':>8} {'wrong':>6} {'crash':>6} {'timeout':>8}")
    for s in sorted({c.suite for c in cases}):
        for m in modes:
            t = table[s, m]
            print(f"{s:20} {m:6} {sum(t.values()):6} {t['pass']:6} {t['refused']:8} {t['wrong']:6} "
                  f"{t['crash']:6} {t['timeout']:8}")
    passed_all = {c.name for c in cases if all(results[c.name, m][0] == "pass" for m in modes)}
    bad = [(c.name, m, *results[c.name, m]) for c in cases for m in modes
           if results[c.name, m][0] in ("wrong", "crash", "timeout")]
    for name, m, outcome, detail in bad:
        print(f"{outcome.upper()} {m} {name}: {detail}")
    if o.reasons:
        hist, ops = collections.Counter(), collections.Counter()
        for c in cases:
            outcome, why = results[c.name, modes[0]]
            if outcome != "refused":
                continue
            why = re.sub(r" ?\(?node #\d+( '[^']*')?\)?,?", "", why)
            missing = re.findall(r"\b(ai\.onnx[\w.]*\.\w+|ai\.onnx\.\w+)", why) if "not supported:" in why else []
            ops.update(set(missing))
            hist["an op is not supported" if missing else why[:110]] += 1
        print("refused cases by reason (first mode):")
        for why, n in hist.most_common():
            print(f"{n:5}  {why}")
        print("ops not imported (cases needing each):")
        print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common()))
    expected = read_expected(o.expected)
    run_names = {c.name for c in cases}
    lost = sorted(n for n in expected & run_names if n not in passed_all)
    new = sorted(passed_all - expected)
    for n in lost:
        print(f"REGRESSION {n}: " + "; ".join(f"{m}: {results[n, m][0]} {results[n, m][1][:200]}" for m in modes))
    if new and not o.update:
        print(f"{len(new)} cases pass that {os.path.basename(o.expected)} does not list "
              "(--update adds them): " + " ".join(new[:20]) + (" ..." if len(new) > 20 else ""))
    if o.update:
        keep = sorted((expected - run_names) | passed_all)
        with open(o.expected, "w") as f:
            f.write("# ONNX backend cases (libonnx-testdata) that pass in every execution mode;\n"
                    "# tests/onnx_backend.py fails when one of them does not.\n")
            f.write("\n".join(keep) + "\n")
        print(f"wrote {len(keep)} cases to {o.expected}")
    print(f"onnx_backend: {len(passed_all)} of {len(cases)} cases pass in every mode "
          f"({', '.join(modes)}); {len(lost)} regressions, {len(bad)} wrong/crash/timeout")
    sys.exit(1 if lost or bad else 0)


if __name__ == "__main__":
    main()
