#!/usr/bin/env python3
"""Long loops run in constant space: bench/interp's tail-recursive loop with
a ref counter for 10,000,000 iterations (and a loop allocating a fresh ref
every iteration, so the collector must run inside compiled code) gives the
right result, and the peak RSS stays under 100 MB and does not grow with
the iteration count (1M vs 10M).  The generic machine (RLY_FAST=0) is held
to the same bound on shorter loops.  At a terminal, Ctrl-C stops a compiled
loop.

Usage: long_loop.py   (env RLY: the rly binary)"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

RLY = os.environ.get("RLY", "rly")
LIMIT_MB = 100
GROWTH_MB = 8

COUNTER = """
def @loop(%r: Ref[int64], %n: int64) -> int64 {
  if (%n == 0i64) { %r^ } else {
    %r := add(%r^, 1i64);
    @loop(%r, subtract(%n, 1i64))
  }
}
@loop(ref(0i64), %Ni64)
"""

FRESH_REFS = """
def @loop(%n: int64, %acc: int64) -> int64 {
  if (%n == 0i64) { %acc } else {
    let %r = ref(%acc);
    %r := add(%r^, 2i64);
    @loop(subtract(%n, 1i64), %r^)
  }
}
@loop(%Ni64, 0i64)
"""


def measure(d, name, src, n, fast):
    """Exit code, last output line, stderr, peak RSS (MB) of one run."""
    path = os.path.join(d, f"{name}_{n}.rly")
    with open(path, "w") as f:
        f.write(src.replace("%N", str(n)))
    env = dict(os.environ, RLY_FAST="1" if fast else "0")
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        p = subprocess.Popen([RLY, "--no-prelude", path], stdout=o, stderr=e, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        o.seek(0), e.seek(0)
        out = o.read().decode().strip().splitlines()
        return (os.waitstatus_to_exitcode(status), out[-1] if out else "", e.read().decode(),
                ru.ru_maxrss / 1024)


def read_until(fd, pat, timeout):
    buf, end = b"", time.time() + timeout
    while time.time() < end and pat not in buf:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return buf


def ctrl_c_stops_compiled_loop():
    """At a terminal, Ctrl-C stops a loop running on the fast path (it polls
    every 1024 calls); the bound is loose for loaded machines."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["NO_COLOR"] = "1"
        os.execv(RLY, [RLY, "--no-prelude"])
    try:
        read_until(fd, b"rly> ", 30)
        os.write(fd, COUNTER.split("@loop(ref")[0].replace("\n", " ").encode() + b"\n")
        read_until(fd, b"rly> ", 30)
        os.write(fd, b"@loop(ref(0i64), 100000000000i64)\n")
        time.sleep(0.5)
        t0 = time.time()
        os.write(fd, b"\x03")
        out = read_until(fd, b"interrupted", 10)
        took = time.time() - t0
        os.write(fd, b":quit\n")
        ok = b"interrupted" in out and took < 1.0
        print(f"{'ok  ' if ok else 'FAIL'} Ctrl-C stopped the compiled loop after {took * 1000:.0f} ms")
        return ok
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def main():
    global LIMIT_MB
    with open(RLY, "rb") as f:
        if b"__asan_init" in f.read():
            LIMIT_MB = 400  # AddressSanitizer's shadow memory and quarantine
    failed = 0
    cases = [("counter", COUNTER, 1, 1_000_000, 10_000_000, True),
             ("fresh_refs", FRESH_REFS, 2, 1_000_000, 10_000_000, True),
             ("counter_generic", COUNTER, 1, 100_000, 1_000_000, False),
             ("fresh_refs_generic", FRESH_REFS, 2, 100_000, 1_000_000, False)]
    with tempfile.TemporaryDirectory() as d:
        for name, src, step, small, big, fast in cases:
            rss = []
            for n in (small, big):
                rc, last, err, mb = measure(d, name, src, n, fast)
                want = f"{n * step}i64"
                ok = rc == 0 and last == want and mb < LIMIT_MB
                print(f"{'ok  ' if ok else 'FAIL'} {name} n={n}: {last!r} (want {want!r}), "
                      f"exit {rc}, peak RSS {mb:.1f} MB")
                if not ok:
                    failed += 1
                    print(err[-2000:])
                rss.append(mb)
            if rss[1] > rss[0] + GROWTH_MB:
                failed += 1
                print(f"FAIL {name}: peak RSS grows with N: {rss[0]:.1f} MB -> {rss[1]:.1f} MB")
    failed += not ctrl_c_stops_compiled_loop()
    print(f"long_loop: {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
