#!/usr/bin/python3
"""exec_modes.py — every example and every lit program runs in both
execution modes (RLY_EXEC=interp and RLY_EXEC=jit) and must agree.

Usage: exec_modes.py RLY SOURCE_ROOT

For each examples/*.rly and tests/lit/**/*.rly (except files whose RUN lines
expect rly to fail, and files with no RUN line invoking a plain `%rly %s`
script run), runs `rly FILE` in both modes and compares exit status and
stdout.  Outputs may differ only in floating-point numbers, and only within
a relative tolerance (dense products and reductions add in another order
when fused and lowered to TIR, a*b+c may be one fma); everything else must
be identical.

The jit run may not fall back to the reference path (RLY_JIT_REQUIRE=1: no
JIT, or a kernel that does not compile, is an error), and it ends with
`:kernels`: every example and every program of tests/lit/lower, but those
of NO_KERNELS, must have compiled at least one kernel, so that the two
modes cannot agree by both running the reference kernels.
"""
import os
import re
import subprocess
import sys

NUM = re.compile(r"-?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|inf|nan)f(?:16|64)?")
RTOL, ATOL = 2e-4, 1e-5


# Programs with nothing to compile: random ops on keys and state, lists;
# :dump alone (nothing runs).
NO_KERNELS = {"examples/effects.rly", "examples/lists.rly", "tests/lit/lower/dump.rly",
              "tests/lit/lower/qnn_dot_vnni.rly", "tests/lit/lower/qnn_dot_conv_vnni.rly"}


def run(rly, path, mode):
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    args = []
    if mode == "jit":
        env["RLY_JIT_REQUIRE"] = "1"
        args = ["-e", ":kernels"]
    try:
        p = subprocess.run([rly, path] + args, capture_output=True, env=env, timeout=120,
                           cwd=os.path.dirname(path))
    except subprocess.TimeoutExpired:
        return None, "timeout", ""
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def close(a, b):
    fa, fb = re.sub(r"f(16|64)?$", "", a), re.sub(r"f(16|64)?$", "", b)
    try:
        x, y = float(fa), float(fb)
    except ValueError:
        return a == b
    if x != x or y != y:
        return x != x and y != y
    if x == y:  # also equal infinities, whose difference is NaN
        return True
    return abs(x - y) <= ATOL + RTOL * max(abs(x), abs(y))


def same(a, b):
    if a == b:
        return True
    if NUM.sub("#", a) != NUM.sub("#", b):
        return False
    na, nb = NUM.findall(a), NUM.findall(b)
    return len(na) == len(nb) and all(close(x, y) for x, y in zip(na, nb))


# What `:kernels` prints differs between the modes by design (the kernels
# and the specialized copies, or a note that there are none): examples may
# end with it.
KERNEL_LINE = re.compile(r"^(@\w+ .* ms|kernel +signature .*|specialized \(.*|\(exec interp: .*\)|"
                         r"\(no kernels .*\))$")


def without_kernels(out):
    return "\n".join(l for l in out.splitlines() if not KERNEL_LINE.match(l))


def kernel_count(out):
    return len(re.findall(r"(?m)^@\w+ .* ms$", out or ""))


def must_compile(path, root):
    rel = os.path.relpath(path, root)
    return rel.startswith(("examples/", "tests/lit/lower/")) and rel not in NO_KERNELS


def wanted(path):
    with open(path, errors="replace") as f:
        text = f.read()
    runs = [l for l in text.splitlines() if "RUN:" in l]
    timed = re.search(r"^:(time|kernels|set exec)", text, re.M)
    if "/examples/" in path:
        return not timed  # examples/schedule.rly times each step: tests/lit/sched/example.test
    if "/lit/jit/" in path or timed:
        return False  # they print what differs between the modes by design
    if any("not %rly" in l for l in runs):
        return False
    return any(re.search(r"%rly\s+(?:--no-prelude\s+)?%s(\s|$)", l) for l in runs) or \
        "/inputs/" in path


def main():
    rly, root = sys.argv[1], sys.argv[2]
    files = sorted(os.path.join(root, "examples", f)
                   for f in os.listdir(os.path.join(root, "examples")) if f.endswith(".rly"))
    for d, _, fs in os.walk(os.path.join(root, "tests", "lit")):
        if "Output" in d:
            continue
        files += sorted(os.path.join(d, f) for f in fs if f.endswith(".rly"))
    bad = 0
    checked = compiled = 0
    for path in files:
        if not wanted(path):
            continue
        checked += 1
        ra, oa, ea = run(rly, path, "interp")
        rb, ob, eb = run(rly, path, "jit")
        kernels = kernel_count(ob)
        compiled += kernels > 0
        if must_compile(path, root) and not kernels:
            bad += 1
            print(f"FAIL {os.path.relpath(path, root)}: compiled no kernel in jit mode\n"
                  f"  jit stderr: {(eb or '')[:400]}")
            continue
        oa, ob = without_kernels(oa or ""), without_kernels(ob or "")
        # Under sanitizers: what jit mode adds (memory errors, UB in the
        # lowering code, leaks beyond those of interp mode) is a failure.
        if re.search(r"(?m)^.*(fuse_ops|lower_tir|compute_\w+|eval_interp|cmd_lower)\.c:\d+:\d+: runtime error|"
                     r"ERROR: AddressSanitizer", eb or "") or \
                (eb or "").count("leak of") > (ea or "").count("leak of"):
            bad += 1
            print(f"FAIL {os.path.relpath(path, root)}: sanitizer report in jit mode\n{eb[:2000]}")
            continue
        if ra != rb or not same(oa, ob):
            bad += 1
            print(f"FAIL {os.path.relpath(path, root)}: exit {ra} vs {rb}")
            la, lb = oa.splitlines(), ob.splitlines()
            for i in range(max(len(la), len(lb))):
                x = la[i] if i < len(la) else "<none>"
                y = lb[i] if i < len(lb) else "<none>"
                if not same(x, y):
                    print(f"  line {i + 1}:\n    interp: {x[:200]}\n    jit:    {y[:200]}")
                    break
            if eb:
                print("  jit stderr:", eb[:400])
    print(f"{checked} programs ({compiled} compiled kernels in jit mode), {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
