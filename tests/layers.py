#!/usr/bin/env python3
"""layers.py ROOT: checks the include graph of the library's folders against
the layering the README describes: each folder includes only the folders
listed for it (so interp/ and jit/ never include each other and nothing
below parser/ includes it), repl/ never calls fusion or lowering (it
goes through engine/), and nothing outside ops/ compares or looks up an op
by a literal name, rt/ and jit/ never reach Relay's declarations (ir/ir.h);
and that docs/ARCHITECTURE.md agrees: a section per
folder whose "may include" is the folder's row below, and every source path
it names exists.  Prints one line per violation and a summary."""
import os
import re
import sys

# folder -> the folders it may include (besides itself)
ALLOWED = {
    "ir": set(),
    "rt": {"ir"},
    "io": {"ir", "rt"},
    # the op registry: the stages above (kernels/, lower/, ad/) attach their rules to
    # its ops by name, so ops/ names none of them
    "ops": {"ir"},
    "kernels": {"ir", "rt", "ops"},
    "parser": {"ir", "ops", "io"},  # io: the JSON reader of the metadata section
    "types": {"ir", "ops"},
    "passes": {"ir", "ops", "types", "kernels"},
    "ad": {"ir", "ops", "types", "passes"},
    "lower": {"ir", "ops", "types", "passes"},
    # schedules of prim functions: TIR rewrites, checked by the TIR verifier and
    # against the TIR interpreter; parser: the tensor intrinsics are rly text
    "sched": {"ir", "rt", "types", "parser"},
    "interp": {"ir", "rt", "ops", "kernels"},
    "jit": {"ir", "rt"},
    # model importers: build IR through the op registry, fold constants with the kernels
    "frontend": {"ir", "rt", "ops", "kernels"},
    "engine": {"ir", "rt", "io", "ops", "kernels", "parser", "types", "passes", "ad", "lower",
               "interp", "jit", "include", "frontend", "sched"},
    # repl/ reaches the other stages through engine/ (engine.h, options.h, inspect.h, draw.h)
    "repl": {"engine", "ir", "ops"},
}
# files that may include one folder more than their folder's row
EXTRA = {}
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


# folders that work on TIR alone: nothing they include reaches Relay's
# declarations (ir/ir.h), directly or through another header
TIR_ONLY = {"rt", "jit"}
RELAY = "ir/ir.h"


def includes_of(root, path):
    """The project headers path includes (paths from root)."""
    text = open(os.path.join(root, path), encoding="utf-8").read()
    return [inc if "/" in inc else os.path.join(os.path.dirname(path), inc)
            for inc in INCLUDE.findall(text)]


def reaches_relay(root, path):
    """The include chain from path to ir/ir.h, or None."""
    seen, stack = set(), [(path, [path])]
    while stack:
        p, chain = stack.pop()
        for inc in includes_of(root, p):
            if inc == RELAY:
                return chain + [inc]
            if inc not in seen and os.path.exists(os.path.join(root, inc)):
                seen.add(inc)
                stack.append((inc, chain + [inc]))
    return None


# docs/ARCHITECTURE.md: one "### `folder/`: ... (may include: a, b)" heading
# per folder of ALLOWED, naming exactly what ALLOWED allows
DOC = "docs/ARCHITECTURE.md"
DOC_HEADING = re.compile(r"^### `(\w+)/`:.*\(may include: ([^)]*)\)\s*$", re.M)
# a path the document names: a folder of the tree and a file name
DOC_PATH = re.compile(r"`((?:%s)/[\w/]+\.(?:c|h|py|in))`" % "|".join(
    ["ir", "rt", "io", "ops", "kernels", "parser", "types", "passes", "ad", "lower", "sched", "interp",
     "jit", "frontend", "engine", "repl", "tests", "bench", "scripts", "include", "lib",
     "examples"]))


def check_doc(root):
    """Problems of the architecture document against ALLOWED and the tree:
    a folder without its heading (or the reverse), a heading whose "may
    include" differs from ALLOWED, a named file that does not exist."""
    text = open(os.path.join(root, DOC), encoding="utf-8").read()
    out, seen = [], {}
    for folder, allows in DOC_HEADING.findall(text):
        named = set() if allows.strip() == "nothing" else {a.strip() for a in allows.split(",")}
        seen[folder] = named
    for folder, allowed in ALLOWED.items():
        if folder not in seen:
            out.append(f"{DOC}: no section for {folder}/")
        elif seen[folder] != allowed:
            out.append(f"{DOC}: {folder}/ may include {sorted(seen[folder])} there, "
                       f"{sorted(allowed)} in layers.py")
    out += [f"{DOC}: a section for {f}/, which layers.py does not know" for f in seen
            if f not in ALLOWED]
    for path in sorted(set(DOC_PATH.findall(text))):
        if not os.path.exists(os.path.join(root, path)):
            out.append(f"{DOC}: names {path}, which does not exist")
    return out


def main():
    root = sys.argv[1]
    bad = checked = 0
    for problem in check_doc(root):
        print(problem)
        bad += 1
    checked += 1
    for folder, allowed in ALLOWED.items():
        for name in sources(root, folder):
            text = open(os.path.join(root, folder, name), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                target = inc.split("/")[0] if "/" in inc else folder
                checked += 1
                extra = EXTRA.get(f"{folder}/{name}", set())
                if target != folder and target not in allowed | extra:
                    print(f"{folder}/{name}: includes {inc} ({folder}/ may include {sorted(allowed | extra)})")
                    bad += 1
            if folder != "ops" and not RULES.match(os.path.basename(name)):
                for m in OP_BY_NAME.finditer(text):
                    print(f"{folder}/{name}: {m.group(0)} (ask the op's registry row instead)")
                    bad += 1
            chain = reaches_relay(root, os.path.join(folder, name)) if folder in TIR_ONLY else None
            if chain:
                print(f"{folder}/{name}: reaches Relay's declarations: {' -> '.join(chain)}")
                bad += 1
            if folder == "repl":
                for m in REPL_FORBIDDEN.finditer(text):
                    print(f"repl/{name}: {m.group(0).strip()} (fusion and lowering go through engine/)")
                    bad += 1
    print(f"layers: {checked - bad} passed, {bad} failed")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
