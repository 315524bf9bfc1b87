#!/usr/bin/env python3
"""REPL memory per input: a session evaluating 100,000 inputs `1f + 2f`
(rly -i, one input per line) must not keep each input's IR; its peak RSS
may grow only by the source text the session keeps for diagnostics.
Compared: 20,000 vs 100,000 inputs (5,000 vs 25,000 under ASan), interp mode (RLY_EXEC=interp; the jit
mode's lowering memory is the jit evaluator's business) and jit mode with a
looser bound.

Usage: repl_memory.py   (env RLY: the rly binary)"""
import os
import subprocess
import sys
import tempfile

RLY = os.environ.get("RLY", "rly")
# Bytes of peak RSS per extra input: the registered source (text, name,
# line table) is what a session keeps; the IR of an input is ~1-2 KB.
PER_INPUT = {"interp": 200, "jit": 1000}


def peak_rss_kb(n, mode):
    env = dict(os.environ, RLY_EXEC=mode)
    # AddressSanitizer keeps freed memory in quarantine: make it small.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1").lstrip(":")
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out:
        inp.write(b"1f + 2f\n" * n)
        inp.seek(0)
        p = subprocess.Popen([RLY, "-i", "--no-prelude"], stdin=inp, stdout=out,
                             stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        lines = out.read().decode().splitlines()
        ok = os.waitstatus_to_exitcode(status) == 0 and len(lines) == n and \
            all(l == "3f" for l in lines)
        return ok, ru.ru_maxrss, (lines[:3] if not ok else [])


def main():
    failed = 0
    with open(RLY, "rb") as f:
        asan = b"__asan_init" in f.read()
    small_n, big_n = (5_000, 25_000) if asan else (20_000, 100_000)  # ASan: ~1 ms per input
    for mode in ("interp", "jit"):
        ok1, small, o1 = peak_rss_kb(small_n, mode)
        ok2, big, o2 = peak_rss_kb(big_n, mode)
        per = (big - small) * 1024 / (big_n - small_n)
        # ASan: redzones around each kept source text and quarantined frees;
        # the plain build holds the real bound
        bound = PER_INPUT[mode] * (4 if asan else 1)
        good = ok1 and ok2 and per < bound
        print(f"{'ok  ' if good else 'FAIL'} {mode}: peak RSS {small / 1024:.1f} MB after {small_n} "
              f"inputs, {big / 1024:.1f} MB after {big_n} ({per:.0f} bytes per input, "
              f"bound {bound})")
        if not (ok1 and ok2):
            print("  wrong output:", o1 or o2)
        failed += not good
    print(f"repl_memory: {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
