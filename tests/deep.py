#!/usr/bin/env python3
"""Deep programs: a generated 1,000,000-binding let chain (and a long
sequence and graph-binding chain) must parse, type-check and print without
overflowing the stack.  Runs with a deliberately small stack (ulimit -s 1024)
so any recursion on the chain length fails loudly.

Then nesting: calls, tuples, closures and `if`s nested as deep as the parser
allows go through the type checker, the printer (with types), the passes
and the evaluator; nesting past the parser's limit is an error naming it;
and let chains that grow a type one level per binding, or double it, stop
at the type checker's named limits instead of overflowing the stack of
every routine that walks types (or taking exponential time).  Last, a
script of 400 parts between command lines runs in memory near its own
size."""
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


NEST = 190  # under the parser's nesting limit (200 levels, parser/parse_priv.h)


def gen_nest_call(f, d):
    f.write("def @main(%x: float32) -> float32 {\n  " + "add(" * d + "%x" + ", 1f)" * d + "\n}\n@main(0f)\n")


def gen_nest_tuple(f, d):
    f.write("def @main(%x: float32) {\n  " + "(" * d + "%x" + ",)" * d + "\n}\n@main(0f)\n")


def gen_nest_fn(f, d):
    body = "%x"
    for _ in range(d // 2):
        body = f"fn () {{ {body} }}"
    f.write("def @main(%x: float32) {\n  let %f = " + body + ";\n  %f" + "()" * (d // 2) + "\n}\n@main(1f)\n")


def gen_nest_if(f, d):
    body = "%x"
    for i in range(d // 2 - 1):
        body = f"if (less(%x, {i}f)) {{ {body} }} else {{ add(%x, 1f) }}"
    f.write("def @main(%x: float32) -> float32 {\n  " + body + "\n}\n@main(0f)\n")


def gen_tuple_chain(f, n):
    f.write("def @main(%x0: float32) {\n")
    for i in range(1, n + 1):
        f.write(f"  let %x{i} = (%x{i-1},);\n")
    f.write(f"  %x{n}\n}}\n")


def gen_double_chain(f, n):
    f.write("def @main(%x0: float32) {\n")
    for i in range(1, n + 1):
        f.write(f"  let %x{i} = (%x{i-1}, %x{i-1});\n")
    f.write(f"  %x{n}\n}}\n")


def gen_fn_chain(f, n):
    f.write("def @main(%x0: float32) {\n")
    for i in range(1, n + 1):
        f.write(f"  let %x{i} = fn () {{ %x{i-1} }};\n")
    f.write(f"  %x{n}\n}}\n")


PASSES = "ToANormalForm,ToBasicBlockNormalForm,EffectToState,FuseOps"


def nesting(d):
    """Programs nested as deep as the parser allows: every stage works."""
    failed = passed = 0
    cases = (("call", gen_nest_call, "190f"), ("tuple", gen_nest_tuple, "(" * NEST + "0f" + ",)" * NEST),
             ("fn", gen_nest_fn, "1f"), ("if", gen_nest_if, "1f"))
    for name, gen, value in cases:
        path = os.path.join(d, f"nest_{name}.rly")
        with open(path, "w") as f:
            gen(f, NEST)
        for args, want in ((["--check"], None), (["--print", "--types"], "/* ty="),
                           (["--pass", PASSES], "def @main"), ([], value)):
            p = run(path, *args)
            out = p.stdout.decode()
            last = out.strip().splitlines()[-1] if out.strip() else ""
            if p.returncode == 0 and (want is None or (want in out if args else last == want)):
                passed += 1
            else:
                failed += 1
                print(f"FAIL nested {name} {' '.join(args)}: exit {p.returncode}\n{p.stderr.decode()[-2000:]}")
    path = os.path.join(d, "too_deep.rly")
    with open(path, "w") as f:
        gen_nest_call(f, 300)
    p = run(path, "--check")
    if p.returncode == 1 and "nesting is too deep (the limit is 200 levels)" in p.stderr.decode():
        passed += 1
    else:
        failed += 1
        print(f"FAIL nesting past the limit: exit {p.returncode}\n{p.stderr.decode()[-2000:]}")
    return passed, failed


def type_limits(d):
    """Let chains whose types grow: the type checker's limits, named."""
    failed = passed = 0
    cases = (("tuple", gen_tuple_chain, 100000, "is nested more than 256 levels deep"),
             ("fn", gen_fn_chain, 100000, "is nested more than 256 levels deep"),
             ("double", gen_double_chain, 40, "has more than 100000 parts"))
    for name, gen, n, want in cases:
        path = os.path.join(d, f"grow_{name}.rly")
        with open(path, "w") as f:
            gen(f, n)
        for args in (["--check"], ["--print", "--types"], []):
            p = run(path, *args)
            err = p.stderr.decode()
            if p.returncode == 1 and want in err and "(the limit of a type)" in err:
                passed += 1
            else:
                failed += 1
                print(f"FAIL growing {name} type {' '.join(args)}: exit {p.returncode}\n{err[-2000:]}")
    # Just under the depth limit, every stage works on the small stack.
    for name, gen in (("tuple", gen_tuple_chain), ("fn", gen_fn_chain)):
        path = os.path.join(d, f"under_{name}.rly")
        with open(path, "w") as f:
            gen(f, 250)
        for args in (["--check"], ["--print", "--types"], ["--pass", PASSES]):
            p = run(path, *args)
            if p.returncode == 0 and (args[0] == "--check" or "%x250" in p.stdout.decode()):
                passed += 1
            else:
                failed += 1
                print(f"FAIL a type 250 levels deep ({name}) {' '.join(args)}: exit {p.returncode}\n"
                      f"{p.stderr.decode()[-2000:]}")
    return passed, failed


SCRIPT_PARTS, PART_LETS = 400, 500


def gen_script_parts(f):
    """A script of many parts: a def, then a command line about it."""
    for k in range(SCRIPT_PARTS):
        f.write(f"def @f{k}(%x0: float32) -> float32 {{\n")
        for i in range(1, PART_LETS + 1):
            f.write(f"  let %x{i} = add(%x{i-1}, 1f);\n")
        f.write(f"  %x{PART_LETS}\n}}\n:type @f{k}\n")


def run_peak(args, out_path):
    """Exit code and peak RSS (KiB) of one child, its output in out_path."""
    with open(out_path, "wb") as out:
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                small_stack()
                os.execvp(args[0], args)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss


def script_parts(d):
    """Each part of a script between command lines is parsed in place:
    memory stays near the script's own size, not a copy of it per part."""
    path, out = os.path.join(d, "parts.rly"), os.path.join(d, "parts.out")
    with open(path, "w") as f:
        gen_script_parts(f)
    size_kib = os.path.getsize(path) // 1024
    code, peak = run_peak([RLY, path], out)
    with open(out, "rb") as f:
        text = f.read().decode()
    typed = text.count("fn (float32) -> float32")
    limit = 16 * size_kib + 128 * 1024
    if code == 0 and typed == 2 * SCRIPT_PARTS and peak < limit:
        return 1, 0
    print(f"FAIL script of {SCRIPT_PARTS} parts ({size_kib} KiB): exit {code}, {typed} types "
          f"printed, peak {peak} KiB (limit {limit})\n{text[-2000:]}")
    return 0, 1


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
        for part in (nesting, type_limits, script_parts):
            p, f = part(d)
            passed, failed = passed + p, failed + f
    print(f"deep: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
