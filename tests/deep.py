#!/usr/bin/env python3
"""Deep programs: a generated 1,000,000-binding let chain (and a long
sequence and graph-binding chain) must parse, type-check and print without
overflowing the stack.  Runs with a deliberately small stack (ulimit -s 1024)
so any recursion on the chain length fails loudly."""
import os
import resource
import subprocess
import sys
import tempfile

RLY = os.environ.get("RLY", "rly")
N = int(os.environ.get("RLY_DEEP_N", "1000000"))


def small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def gen_let_chain(f, n):
    f.write('#[version = "0.0.5"]\ndef @main(%x0: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n')
    for i in range(1, n + 1):
        f.write(f"  let %x{i} = add(%x{i-1}, 1f);\n")
    f.write(f"  %x{n}\n}}\n")


def gen_graph_chain(f, n):
    f.write('def @main(%x: float32) {\n  %0 = add(%x, 1f);\n')
    for i in range(1, n):
        f.write(f"  %{i} = multiply(%{i-1}, 2f);\n")
    f.write(f"  %{n-1}\n}}\n")


def run(path, *args):
    p = subprocess.run([RLY, *args, path], capture_output=True, preexec_fn=small_stack, timeout=600)
    return p


def main():
    failed = passed = 0
    with tempfile.TemporaryDirectory() as d:
        for name, gen, n in (("let", gen_let_chain, N), ("graph", gen_graph_chain, N // 2)):
            path = os.path.join(d, name + ".rly")
            with open(path, "w") as f:
                gen(f, n)
            p = run(path, "--check")
            if p.returncode != 0:
                failed += 1
                print(f"FAIL {name} chain of {n}: --check exit {p.returncode}\n{p.stderr.decode()[-2000:]}")
                continue
            p = run(path, "--print", "--types")
            out = p.stdout.decode()
            ok = p.returncode == 0 and out.count("\n") >= n
            if name == "let":
                last = [l for l in out.splitlines() if l.strip().startswith(f"let %x{n} =")]
                ok = ok and len(last) == 1 and f"add(%x{n-1}, 1f" in last[0] \
                    and last[0].rstrip().endswith("/* ty=Tensor[(2, 3), float32] */;")
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {name} chain of {n}: --print exit {p.returncode}\n{p.stderr.decode()[-2000:]}")
    print(f"deep: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
