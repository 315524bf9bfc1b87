#!/usr/bin/env python3
"""dot_check.py RLY ROOT OUT: every function of every example is drawn with
`rly --dot` (before and after FuseOps) as .dot and as .svg; the .svg goes
through Graphviz's reader and layout in-process (so Graphviz accepts the DOT
text) and must parse as XML.  Then a generated 10,000-node function is drawn
as .dot, .svg and .png with `:dot`: it must say it chose the rows layout,
name the expected numbers of nodes and edges, and the .dot and .svg must
hold them, the .svg's nodes in at most GV_ROWS rows; a 500-node function
keeps dot's layout.  The rows layout must scale linearly, measured in
instructions (valgrind's cachegrind), not in time: drawing 4N nodes minus
drawing 2N may cost at most LINEAR_RATIO times 2N minus N.  Times are
printed, never asserted (a busy machine or the sanitizers slow them down;
under AddressSanitizer, which valgrind cannot run, the count is skipped and
says so).  Prints one line per failure and a summary."""
import glob
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

BIG_NODES = 10000
GV_ROWS, ROW_H = 60, 50  # the rows layout's rows and their height (engine/gv_render.c)
SCALE_NODES = (1000, 2000, 4000)  # all over the 800 nodes where the rows layout starts
LINEAR_RATIO = 2.6  # linear: 2; n log n about 2.2; quadratic: 4


def draw(rly, src, fn, out, passes=None):
    cmd = [rly] + (["--pass", passes] if passes else []) + ["--dot", "@" + fn, src, "-o", out]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return r, time.monotonic() - t0


def check_svg(path):
    root = ET.parse(path).getroot()
    return root.tag.endswith("svg")


def big_program(path, n=BIG_NODES):
    """A chain of n ops; returns the picture's (nodes, edges): the ops, %x,
    the constant and the result; each op's operands and the result's."""
    edges = 2
    with open(path, "w") as f:
        f.write("def @f(%x: Tensor[(4, 4), float32]) {\n  %0 = add(%x, 1f);\n")
        for i in range(1, n):
            op = f"multiply(%{i - 1}, %{i - 2})" if i % 3 == 0 else f"nn.relu(%{i - 1})"
            edges += 2 if i % 3 == 0 else 1
            f.write(f"  %{i} = {op};\n")
        f.write(f"  %{n - 1}\n}}\n")
    return n + 3, edges + 1


def draw_cmd(rly, src, out):
    """`:dot @f OUT` in a session: what it says, the time."""
    t0 = time.monotonic()
    r = subprocess.run([rly, src, "-e", f":dot @f {out}"], capture_output=True, text=True,
                       timeout=300)
    return r, time.monotonic() - t0


def svg_rows(path):
    """The .svg's node count and the number of distinct heights of their centres."""
    ns = "{http://www.w3.org/2000/svg}"
    nodes, rows = 0, set()
    for g in ET.parse(path).getroot().iter(ns + "g"):
        if g.get("class") != "node":
            continue
        nodes += 1
        ys = [float(t.get("y")) for t in g.iter(ns + "text")]  # the label's lines
        rows.add(round((min(ys) + max(ys)) / 2 / ROW_H))
    return nodes, len(rows)


def check_big(rly, out):
    """The 10,000-node function: the rows layout, and every node and edge."""
    src = os.path.join(out, "big.rly")
    nodes, edges = big_program(src)
    fails = []
    for ext in ("dot", "svg", "png"):
        path = os.path.join(out, "big." + ext)
        r, secs = draw_cmd(rly, src, path)
        laid = ext != "dot"  # a .dot file is text: no layout
        said = f"wrote {path}: @f, {nodes} nodes, {edges} edges" + \
            (", rows (neato -n) layout" if laid else "") + "\nnote: over 800 nodes: edges drawn " + \
            "without their types" + (", nodes placed in rows by depth (no clusters)" if laid else "")
        print(f"{BIG_NODES}-node function as .{ext} in {secs:.2f} s")
        if r.returncode != 0 or said + "\n" not in r.stdout:
            fails.append(f".{ext}: expected\n{said}\ngot:\n{r.stdout}{r.stderr}")
    text = open(os.path.join(out, "big.dot")).read()
    dot_nodes = len(re.findall(r"^  n\d+ \[", text, re.M))
    dot_edges = len(re.findall(r"^  n\d+ -> n\d+", text, re.M))
    if (dot_nodes, dot_edges) != (nodes, edges):
        fails.append(f".dot holds {dot_nodes} nodes and {dot_edges} edges, not {nodes} and {edges}")
    svg_nodes, rows = svg_rows(os.path.join(out, "big.svg"))
    print(f".svg: {svg_nodes} nodes in {rows} rows")
    if svg_nodes != nodes or rows > GV_ROWS:
        fails.append(f".svg holds {svg_nodes} nodes in {rows} rows, not {nodes} in at most {GV_ROWS}")
    small = os.path.join(out, "small.rly")
    nodes, edges = big_program(small, 500)
    r, _ = draw_cmd(rly, small, os.path.join(out, "small.svg"))
    if f"{nodes} nodes, {edges} edges, dot layout\n" not in r.stdout or "note:" in r.stdout:
        fails.append(f"a 500-node function: expected dot's layout, got: {r.stdout}{r.stderr}")
    return fails


def sanitized(rly):
    with open(rly, "rb") as f:
        return b"__asan_init" in f.read()


def instructions(rly, src, out):
    """Instructions run by `rly --dot @f SRC -o OUT` (cachegrind's I refs)."""
    r = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        "--cachegrind-out-file=/dev/null", rly, "--dot", "@f", src, "-o", out],
                       capture_output=True, text=True, timeout=600)
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"valgrind: {r.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def check_linear(rly, out):
    """Drawing the rows layout as .svg at N, 2N and 4N nodes: the cost of the
    second doubling over the first's (startup cancels out)."""
    if sanitized(rly):
        print("skipped: instruction counts (valgrind cannot run AddressSanitizer's binary)")
        return []
    if not shutil.which("valgrind"):
        return ["valgrind is not installed (make test-deps installs it)"]
    counts = []
    for n in SCALE_NODES:
        src = os.path.join(out, f"scale{n}.rly")
        big_program(src, n)
        counts.append(instructions(rly, src, os.path.join(out, f"scale{n}.svg")))
    ratio = (counts[2] - counts[1]) / (counts[1] - counts[0])
    print(f"rows layout: {', '.join(f'{n} nodes {c:,} instructions' for n, c in zip(SCALE_NODES, counts))}"
          f"; doubling costs {ratio:.2f}x the previous doubling")
    if ratio > LINEAR_RATIO:
        return [f"rows layout not linear: the second doubling costs {ratio:.2f}x the first "
                f"(at most {LINEAR_RATIO})"]
    return []


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
    for check in (check_big, check_linear):
        fails = check(rly, out)
        for f in fails:
            print(f"FAIL {check.__name__}: {f}")
        passed += not fails
        failed += bool(fails)
    print(f"dot: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
