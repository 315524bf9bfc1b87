#!/usr/bin/env python3
"""op_examples — every op's example (its registry row's OpDef.example, the
one :doc shows) runs without an error in both exec modes.

Usage: op_examples.py RLY

`rly --list-ops=examples` prints each op's example after a `// NAME` line;
an op without one makes it fail.  The script runs as a whole in interp and
jit modes; on a failure each example runs alone to name every broken op.
"""
import subprocess
import sys


def run(rly, mode, text):
    r = subprocess.run([rly, "--exec", mode, "-"], input=text, capture_output=True, text=True,
                       timeout=600)
    out = r.stdout + r.stderr
    return r.returncode == 0 and "error:" not in out, out


def examples(rly):
    r = subprocess.run([rly, "--list-ops=examples"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("op_examples: `rly --list-ops=examples` failed:\n" + r.stderr)
    ops, name = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("// "):
            name = line[3:]
            ops[name] = []
        else:
            ops[name].append(line)
    return {k: "\n".join(v) + "\n" for k, v in ops.items()}


def main():
    rly = sys.argv[1]
    ops = examples(rly)
    n = int(subprocess.run([rly, "--list-ops"], capture_output=True, text=True).stdout
            .count("\n")) - 1
    if len(ops) != n or n < 200:
        sys.exit("op_examples: %d examples for %d ops" % (len(ops), n))
    bad = []
    for mode in ("interp", "jit"):
        ok, out = run(rly, mode, "".join(ops.values()))
        if ok:
            continue
        for name, text in ops.items():
            ok1, out1 = run(rly, mode, text)
            if not ok1:
                bad.append("%s (%s):\n%s" % (name, mode, out1))
        if not bad:
            bad.append("the examples together (%s):\n%s" % (mode, out))
    if bad:
        sys.exit("op_examples: examples that fail:\n" + "\n".join(bad))
    print("op_examples: %d examples ran in interp and jit modes" % len(ops))


main()
