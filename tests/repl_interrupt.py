#!/usr/bin/python3
"""repl_interrupt.py — Ctrl-C during long work returns to the prompt at once.

Usage: repl_interrupt.py [RLY]   (default: $RLY, else `rly` on PATH)

Starts rly on a pseudo-terminal (RLY_JIT_CACHE=0, so nothing comes from the
disk cache), defines a function and a variable, then interrupts
  (a) the JIT compile of a model of many distinct kernels (compiled ahead on
      the pool's threads),
  (b) a long-running compiled kernel (a large matrix product),
  (c) a long interpreter loop,
  (d) :load-tensor of a large .npy file,
  (e) :load of a large script (parsing, type checking) and a pass over it,
and then that rly exits cleanly (status 0) right after an interrupted compile,
and checks for each that "interrupted" and the prompt come back within
LIMIT seconds of the ^C (the aim is 0.2 s; the measured latency is printed)
and that the session still works: the function and the variable are still
there and a new evaluation gives the right value.  After (a) the model is
called again and must compile (or load what finished in the background) and
give its value.  Exits 1 on the first failed check."""
import os
import pty
import re
import select
import sys
import tempfile
import time

RLY = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RLY", "rly")
# A functional bound, not a timing one: far above the 0.2 s aim (the measured
# latency is printed; CI runs tests side by side on two cores), far below what
# each interrupted piece of work takes when it runs to its end.
LIMIT = 5.0
PROMPT = rb"rly> "


class Session:
    def __init__(self, home, **extra):
        env = dict(os.environ, HOME=home, TERM="xterm", INPUTRC="/dev/null", NO_COLOR="1",
                   RLY_JIT_CACHE="0", **extra)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(RLY, [RLY], env)
        self.buf = b""

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def read_some(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        self.buf += data
        return bool(data)

    def expect(self, pattern, timeout=60.0):
        deadline = time.time() + timeout
        rx = re.compile(pattern if isinstance(pattern, bytes) else pattern.encode(), re.S)
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.time()
            if left <= 0 or not self.read_some(left):
                if time.time() >= deadline:
                    raise TimeoutError(f"waited for {pattern!r}; output: {self.buf[-600:]!r}")

    def drain(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.read_some(max(0.0, end - time.time()))
        out, self.buf = self.buf, b""
        return out

    def run(self, line, want=None, timeout=60.0):
        self.send(line + "\r")
        if want:
            self.expect(want, timeout)
        self.expect(PROMPT, timeout)


failures = 0


def check(name, fn):
    global failures
    try:
        fn()
        print(f"ok   {name}")
    except Exception as e:
        failures += 1
        print(f"FAIL {name}: {e}")


def interrupt(s, what, started=0.7, limit=LIMIT):
    """Sends `what`, checks it is still running after `started` s, sends ^C
    and returns the seconds until the prompt is back (at most `limit`)."""
    s.send(what + "\r")
    out = s.drain(started)
    assert not re.search(PROMPT, out), f"finished before ^C: {out[-300:]!r}"
    t0 = time.time()
    s.send(b"\x03")
    s.expect(rb"interrupted", timeout=30)
    s.expect(PROMPT, timeout=30)
    took = time.time() - t0
    print(f"     (prompt back {1000 * took:.0f} ms after ^C)")
    assert took < limit, f"took {took:.3f} s"
    return took


def session_intact(s):
    s.run("@inc(%k)", rb"[\r\n]42\r\n")
    s.run("add(%k, 2)", rb"[\r\n]43\r\n")


def model(path, n):
    """n softmax layers with distinct constants: n kernels to compile."""
    lines = ["def @many(%x: Tensor[(64, 64), float32]) {"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  let %v{i} = nn.softmax(add({prev}, {i + 1}f), axis={i % 2});")
        prev = f"%v{i}"
    lines.append(f"  sum({prev})\n}}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def chain(path, n):
    """@big: a chain of n lets of nested adds (seconds to parse, check and
    put in A-normal form)."""
    with open(path, "w") as f:
        f.write("def @big(%x0: float32) {\n")
        for i in range(n):
            f.write(f"  let %x{i + 1} = add(add(%x{i}, 1f), 1f);\n")
        f.write(f"  %x{n}\n}}\n")


def write_npy(path, n):
    """A float32 (n, 1024, 1024) .npy of 1.5f (4n MiB)."""
    hdr = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({n}, 1024, 1024), }}"
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode())
        row = b"\x00\x00\xc0\x3f" * (1 << 20)
        for _ in range(n):
            f.write(row)


def main():
    home = tempfile.mkdtemp(prefix="rly-intr-")
    path = os.path.join(home, "many.rly")
    model(path, 80)
    s = Session(home)
    s.expect(PROMPT)
    s.run("def @inc(%n: int32) -> int32 { add(%n, 1) }", rb"defined @inc")
    s.run("let %k = 41;")
    s.run('let %x = ones(shape=[64, 64], dtype="float32");')
    s.run(f":load {path}", rb"loaded 1 function")

    def compile_():
        interrupt(s, "let %r = @many(%x);")
        s.run("%r", rb"unbound|error")  # no partial binding
        session_intact(s)
        # the model still runs: its kernels compile again or load what finished
        s.run("let %r = @many(%x);", timeout=120)
        s.run("%r", rb"[\r\n]64f\r\n")

    def kernel():
        s.run("def @mm(%a: Tensor[(4096, 4096), float32], %b: Tensor[(4096, 4096), float32]) "
              "{ nn.dense(%a, %b) }", rb"defined @mm")
        s.run('let %a = ones(shape=[4096, 4096], dtype="float32");')
        s.run("let %m = @mm(%a, %a);", timeout=300)  # compiles it
        interrupt(s, "let %m2 = @mm(@mm(@mm(@mm(@mm(@mm(%a, %a), %a), %a), %a), %a), %a);",
                  started=0.3)
        s.run("%m2", rb"unbound|error")  # no partial binding
        session_intact(s)

    def load_tensor():
        npy = os.path.join(home, "big.npy")
        write_npy(npy, 256)
        try:
            # Reading the just-written 1 GiB file competes for memory and I/O with
            # the tests beside it (6 s seen under load, 35-70 ms alone): the check
            # that matters is that nothing is bound after ^C.
            interrupt(s, f":load-tensor %t {npy}", started=0.3, limit=4 * LIMIT)
            s.run(":type %t", rb"unbound variable")  # nothing bound
            session_intact(s)
        finally:
            os.unlink(npy)

    def interp():
        interrupt(s, "@apply_n(fn (%i: int32) { add(%i, 1) }, 2000000000, 0)")
        session_intact(s)

    def parse_check_pass():
        big = os.path.join(home, "big.rly")
        chain(big, 600000)
        try:
            interrupt(s, f":load {big}", started=0.3)  # parsing or checking
            s.run(":type @big", rb"unknown global|error")  # nothing of it kept
            session_intact(s)
            s.run(f":load {big}", rb"loaded 1 function", timeout=300)
            interrupt(s, ":pass ToANormalForm @big", started=0.3)
            s.run(":undo", rb"undid :load")  # the pass left no undo step
            session_intact(s)
        finally:
            os.unlink(big)

    check("interrupt a JIT compile", compile_)
    check("interrupt a compiled kernel", kernel)
    check("interrupt the interpreter", interp)
    check("interrupt :load-tensor", load_tensor)
    check("interrupt parsing, checking and a pass", parse_check_pass)
    s.send(b"\x04")

    def exit_after_interrupted_compile():
        # compiles left running end before exit: a clean exit, status 0
        # (a sanitizer build: LLVM's own allocations left at exit are no failure)
        opts = os.environ.get("ASAN_OPTIONS", "")
        e = Session(home, ASAN_OPTIONS=(opts + ":" if opts else "") + "detect_leaks=0")
        e.expect(PROMPT)
        e.run('let %x = ones(shape=[64, 64], dtype="float32");')
        e.run(f":load {path}", rb"loaded 1 function")
        interrupt(e, "let %r = @many(%x);")
        e.send(b"\x04")
        end = time.time() + 60
        while time.time() < end:
            e.read_some(0.1)
            pid, status = os.waitpid(e.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                assert code == 0, f"exit status {code}: {e.buf[-300:]!r}"
                return
        raise TimeoutError("rly did not exit")

    check("exit after an interrupted compile", exit_after_interrupted_compile)
    sys.exit(1 if failures else 0)


main()
