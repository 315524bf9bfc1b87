#!/usr/bin/env python3
"""The session's workspace in bounded memory: rebinding a 200 MB tensor
(`let %huge = zeros(...)`) 20 times under `:set max-memory 1G` succeeds, at
the prompt (rly -i) and in a loaded file, and the peak RSS after 20
rebindings is that after 5 (the old value is freed, not kept until the
collector's next turn); `:del %huge` says it freed the 200 MB.

Usage: workspace_memory.py   (env RLY: the rly binary)"""
import os
import subprocess
import sys
import tempfile

RLY = os.environ.get("RLY", "rly")
MB = 1 << 20
ELEMS = 50_000_000  # float32: 200 MB
LET = f'let %huge = zeros(shape=[{ELEMS}], dtype="float32");\n'


def script(n):
    return ":set max-memory 1G\n" + LET * n + "sum(%huge)\n:del %huge\n"


def run(n, as_file):
    env = dict(os.environ, RLY_EXEC="interp")
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1").lstrip(":")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rebind.rly")
        with open(path, "w") as f:
            f.write(script(n))
        args = [RLY, path] if as_file else [RLY, "-i"]
        with open(path) as inp, tempfile.TemporaryFile() as out:
            p = subprocess.Popen(args, stdin=None if as_file else inp, stdout=out,
                                 stderr=subprocess.STDOUT, env=env)
            _, status, ru = os.wait4(p.pid, 0)
            out.seek(0)
            text = out.read().decode()
    ok = os.waitstatus_to_exitcode(status) == 0 and "error" not in text and \
        text.splitlines()[:1] == ["0f"] and "deleted %huge (freed 191 MiB)" in text
    return ok, ru.ru_maxrss * 1024, text


def main():
    failed = 0
    with open(RLY, "rb") as f:
        asan = b"__asan_init" in f.read()
    cap = (900 if asan else 700) * MB  # ASan: its shadow and allocator's own memory
    for as_file in (False, True):
        mode = "file" if as_file else "prompt"
        ok5, peak5, t5 = run(5, as_file)
        ok20, peak20, t20 = run(20, as_file)
        # one value bound and the next being made: 2 x 200 MB, plus the
        # freed buffer kept for reuse and the program itself
        good = ok5 and ok20 and peak20 < peak5 + 32 * MB and peak20 < cap
        print(f"{'ok  ' if good else 'FAIL'} {mode}: 20 rebindings of 200 MB under 1G: peak RSS "
              f"{peak5 / MB:.0f} MB after 5, {peak20 / MB:.0f} MB after 20 (bounds: +32 MB, "
              f"{cap // MB} MB)")
        if not (ok5 and ok20):
            print("  output:", (t20 if ok5 else t5)[:600])
        failed += not good
    print(f"workspace_memory: {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
