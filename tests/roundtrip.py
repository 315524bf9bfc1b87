#!/usr/bin/env python3
"""Round trip over every .rly file in the repository.

For each file that rly accepts, print it (p1), print p1 again (p2), and
require p1 == p2 (printing is a fixed point).  Also print with types and
require that text to read back to p1.  Files that are meant to fail carry a
RUN line with `not %rly`; every other file must be accepted.  Scripts whose
`:` commands create names or change signatures (`:bind`, `:load-tensor`,
`:extern`, `:pass Gradient`, which defines @f_grad) are skipped: `--print` reads a script without running its
commands, so the rest of such a script cannot type-check on its own.
"""
import os
import subprocess
import sys
import tempfile

RLY = os.environ.get("RLY", "rly")
SKIP_DIRS = {".git", "build", "build-asan", "build-san", "node_modules"}


def rly_print(text, types=False):
    args = [RLY, "--print"] + (["--types"] if types else []) + ["-"]
    p = subprocess.run(args, input=text.encode(), capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def expected_to_fail(text):
    return any(l.lstrip().startswith("// RUN:") and "not %rly" in l for l in text.splitlines())


BINDING_COMMANDS = (":bind", ":load-tensor", ":extern", ":pass Gradient", ":step Gradient")


def needs_commands(text):
    return any(l.lstrip().startswith(BINDING_COMMANDS) for l in text.splitlines())


def check(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    if needs_commands(text):
        return "skip"
    rc, p1, err = rly_print(text)
    if rc != 0:
        if expected_to_fail(text):
            return None
        return f"{path}: rejected:\n{err}"
    rc, p2, err = rly_print(p1)
    if rc != 0:
        return f"{path}: printed text does not parse:\n{err}\n--- printed ---\n{p1}"
    if p1 != p2:
        return f"{path}: print is not a fixed point\n--- p1 ---\n{p1}\n--- p2 ---\n{p2}"
    rc, pt, err = rly_print(p1, types=True)
    if rc != 0:
        return f"{path}: --types failed:\n{err}"
    rc, p3, err = rly_print(pt)
    if rc != 0 or p3 != p1:
        return f"{path}: text with types does not read back:\n{err}\n--- typed ---\n{pt}\n--- reprinted ---\n{p3}"
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".rly")]
    failed = 0
    checked = skipped = 0
    for f in files:
        msg = check(f)
        if msg is None:
            checked += 1
        elif msg == "skip":
            skipped += 1
        else:
            failed += 1
            print("FAIL", msg)
    print(f"roundtrip: {checked} passed, {failed} failed, {skipped} skipped (scripts with :bind etc.)")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
