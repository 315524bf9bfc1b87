#!/usr/bin/env python3
"""layers.py ROOT: checks the include graph of the library's folders against
the layering the README describes: each folder includes only the folders
listed for it (so interp/ and jit/ never include each other and nothing
below parser/ includes it), repl/ never calls fusion or lowering (it
goes through engine/), and nothing outside ops/ compares or looks up an op
by a literal name.  Prints one line per violation and a summary."""
import os
import re
import sys

# folder -> the folders it may include (besides itself)
ALLOWED = {
    "ir": set(),
    "rt": {"ir"},
    "io": {"ir", "rt"},
    "ops": {"ir"},
    "kernels": {"ir", "rt", "ops"},
    "parser": {"ir", "ops"},
    "types": {"ir", "ops"},
    "passes": {"ir", "ops", "types", "kernels"},
    "ad": {"ir", "ops", "types", "passes"},
    "lower": {"ir", "ops", "types", "passes"},
    "interp": {"ir", "rt", "ops", "kernels"},
    "jit": {"ir", "rt"},
    # model importers: build IR through the op registry, fold constants with the kernels
    "frontend": {"ir", "rt", "ops", "kernels"},
    "engine": {"ir", "rt", "io", "ops", "kernels", "parser", "types", "passes", "ad", "lower",
               "interp", "jit", "include", "frontend"},
    "repl": {"ir", "rt", "io", "ops", "kernels", "parser", "types", "passes", "interp", "jit",
             "engine", "frontend"},
}
# what repl/ must not name: fusion and lowering belong to the engine
REPL_FORBIDDEN = re.compile(r'#include "passes/lower\.h"|\b(fuse_function|fuse_expr|lower_function|lower_expr|lower_new)\s*\(')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# outside ops/, code asks an op's registry row (flags, cost, compute rule) or
# uses its index, never its name: no op name compared or looked up literally
OP_BY_NAME = re.compile(r'strcmp\([^;]*u\.op\.name|ops_lookup\("|"call_tir"')


# the per-op rule files of the stages above ops/ (gradient and compute rules)
# are keyed by op name by nature
RULES = re.compile(r"(grad_rules|compute_)")


def sources(root, folder):
    """The .c and .h files under root/folder, subfolders included (their paths
    relative to the folder)."""
    out = []
    for dirpath, _dirs, names in os.walk(os.path.join(root, folder)):
        rel = os.path.relpath(dirpath, os.path.join(root, folder))
        out += [os.path.normpath(os.path.join(rel, n)) for n in names if n.endswith((".c", ".h"))]
    return sorted(out)


def main():
    root = sys.argv[1]
    bad = checked = 0
    for folder, allowed in ALLOWED.items():
        for name in sources(root, folder):
            text = open(os.path.join(root, folder, name), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                target = inc.split("/")[0] if "/" in inc else folder
                checked += 1
                if target != folder and target not in allowed:
                    print(f"{folder}/{name}: includes {inc} ({folder}/ may include {sorted(allowed)})")
                    bad += 1
            if folder != "ops" and not RULES.match(os.path.basename(name)):
                for m in OP_BY_NAME.finditer(text):
                    print(f"{folder}/{name}: {m.group(0)} (ask the op's registry row instead)")
                    bad += 1
            if folder == "repl":
                for m in REPL_FORBIDDEN.finditer(text):
                    print(f"repl/{name}: {m.group(0).strip()} (fusion and lowering go through engine/)")
                    bad += 1
    print(f"layers: {checked - bad} passed, {bad} failed")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
