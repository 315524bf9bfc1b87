#!/usr/bin/env python3
"""dot_check.py RLY ROOT OUT: every function of every example is drawn with
`rly --dot` (before and after FuseOps) as .dot and as .svg; the .svg goes
through Graphviz's reader and layout in-process (so Graphviz accepts the DOT
text) and must parse as XML.  Then a generated 10,000-node function is drawn
as .dot, .svg and .png (the times are printed, not asserted: a busy machine
or the sanitizers slow them down; the subprocess timeout still bounds them).
Prints one line per failure and a summary."""
import glob
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

BIG_NODES = 10000


def draw(rly, src, fn, out, passes=None):
    cmd = [rly] + (["--pass", passes] if passes else []) + ["--dot", "@" + fn, src, "-o", out]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return r, time.monotonic() - t0


def check_svg(path):
    root = ET.parse(path).getroot()
    return root.tag.endswith("svg")


def big_program(path):
    with open(path, "w") as f:
        f.write("def @f(%x: Tensor[(4, 4), float32]) {\n  %0 = add(%x, 1f);\n")
        for i in range(1, BIG_NODES):
            op = f"multiply(%{i - 1}, %{i - 2})" if i % 3 == 0 else f"nn.relu(%{i - 1})"
            f.write(f"  %{i} = {op};\n")
        f.write(f"  %{BIG_NODES - 1}\n}}\n")


def main():
    rly, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    passed = failed = 0
    for src in sorted(glob.glob(os.path.join(root, "examples", "*.rly"))):
        if subprocess.run([rly, "--check", src], capture_output=True).returncode != 0:
            continue  # a script that needs its session (tensor files, :commands)
        fns = re.findall(r"^def @(\w+)", open(src).read(), re.M)
        for fn in fns:
            for passes in (None, "FuseOps"):
                base = os.path.join(out, f"{os.path.basename(src)}.{fn}.{passes or 'plain'}")
                ok = True
                for ext in ("dot", "svg"):
                    r, _ = draw(rly, src, fn, f"{base}.{ext}", passes)
                    if r.returncode != 0:
                        print(f"FAIL {src} @{fn} {passes or ''} .{ext}: {r.stderr.strip()}")
                        ok = False
                if ok and not check_svg(base + ".svg"):
                    print(f"FAIL {src} @{fn}: the .svg is not an SVG document")
                    ok = False
                passed += ok
                failed += not ok
    src = os.path.join(out, "big.rly")
    big_program(src)
    for ext in ("dot", "svg", "png"):
        r, secs = draw(rly, src, "f", os.path.join(out, "big." + ext))
        ok = r.returncode == 0
        if ext == "svg" and ok:
            ok = check_svg(os.path.join(out, "big.svg"))
        print(f"{'ok' if ok else 'FAIL'}: {BIG_NODES}-node function as .{ext} in {secs:.2f} s"
              + ("" if r.returncode == 0 else ": " + r.stderr.strip()))
        passed += ok
        failed += not ok
    print(f"dot: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
