#!/usr/bin/python3
"""repl_tty.py — the REPL's terminal behaviours, driven through a pseudo-terminal.

Usage: repl_tty.py [RLY]   (default: $RLY, else `rly` on PATH)

Checks: banner, prompts `rly> ` / `...> `, multi-line input, Ctrl-C clearing the
line (also at a continuation prompt), Ctrl-C stopping an evaluation quickly and
returning to the prompt, Tab completion (also a setting's values and @functions
after a pass name), bracketed paste, colours only without NO_COLOR, Ctrl-D
exiting with status 0, and the history file (~/.rly_history, mode 0600, a
multi-line input recalled whole in the next session).  HOME is a
temporary directory.  Exits 1 on the first failed check."""
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import stat
import struct
import sys
import tempfile
import termios
import time

RLY = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RLY", "rly")
failures = 0


class Session:
    def __init__(self, home, color=False):
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)}
        env.update(HOME=home, TERM="xterm", INPUTRC="/dev/null")
        if not color:
            env["NO_COLOR"] = "1"
        self.home = home
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(RLY, [RLY], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
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

    def expect(self, pattern, timeout=10.0):
        """Waits for pattern (bytes regex) in the output; consumes up to its end."""
        deadline = time.time() + timeout
        rx = re.compile(pattern if isinstance(pattern, bytes) else pattern.encode(), re.S)
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.time()
            if left <= 0 or not self.read_some(left):
                if time.time() >= deadline or not self.alive():
                    raise TimeoutError(f"waited for {pattern!r}; output: {self.buf[-800:]!r}")

    def quiet_for(self, seconds):
        """Returns what arrived within `seconds` (consumed)."""
        end = time.time() + seconds
        while time.time() < end:
            self.read_some(max(0.0, end - time.time()))
        out, self.buf = self.buf, b""
        return out

    def alive(self):
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            return pid == 0
        except ChildProcessError:
            return False

    def wait_exit(self, timeout=10.0):
        end = time.time() + timeout
        while time.time() < end:
            try:
                self.read_some(0.05)
            except OSError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise TimeoutError("rly did not exit")


def check(name, fn):
    global failures
    try:
        fn()
        print(f"ok   {name}")
    except Exception as e:  # a failed check, a timeout: report and go on
        failures += 1
        print(f"FAIL {name}: {e}")


PROMPT = rb"rly> "
MORE = rb"\.\.\.> "


def first_session(home):
    s = Session(home)

    def banner():
        s.expect(rb"rly 0\.1 \xc2\xb7 LLVM 19\.\d+ \xc2\xb7 [^\r\n]* \xc2\xb7 :help for commands")
        s.expect(PROMPT)

    def multiline():
        s.send("def @f(%x: float32) {\r")
        s.expect(MORE)
        s.send("  add(%x, 1f)\r")
        s.expect(MORE)
        s.send("}\r")
        s.expect(rb"defined @f : fn \(float32\) -> float32")
        s.expect(PROMPT)
        s.send("@f(1f)\r")
        s.expect(rb"[\r\n]2f\r\n")
        s.expect(PROMPT)

    def ctrl_c_clears_line():
        s.send("this is not rly")
        s.expect(b"not rly")
        s.send(b"\x03")
        s.expect(PROMPT)
        s.send("3f\r")
        s.expect(rb"[\r\n]3f\r\n")
        s.expect(PROMPT)

    def ctrl_c_at_continuation():
        s.send("def @g(%x: float32) {\r")
        s.expect(MORE)
        s.send(b"\x03")
        s.expect(PROMPT)
        s.send("4f\r")
        out = s.expect(rb"\r\n(.*?)[\r\n]4f\r\n").group(1)
        assert b"error" not in out, out
        s.expect(PROMPT)

    def interrupt_running(what):
        """Sends `what`, checks it is still running, Ctrl-C, and times the stop."""
        s.send(what + "\r")
        time.sleep(0.5)
        assert not re.search(PROMPT, s.quiet_for(0.1)), "the evaluation finished too early to test"
        t0 = time.time()
        s.send(b"\x03")
        s.expect(rb"interrupted")
        took = time.time() - t0
        s.expect(PROMPT)
        assert took < 0.25, f"took {took:.3f} s to stop (the aim is 0.1 s)"
        print(f"     (stopped {1000 * took:.0f} ms after Ctrl-C)")

    def ctrl_c_stops_evaluation():
        interrupt_running("@apply_n(fn (%i: int32) { add(%i, 1) }, 2000000000, 0)")
        s.send("5f\r")
        s.expect(rb"[\r\n]5f\r\n")
        s.expect(PROMPT)

    def ctrl_c_stops_a_prim_function():
        # A long loop inside a TIR prim function (call_tir) polls for Ctrl-C too.
        s.send("prim @spin(%X: Buffer[(1), float32], %Y: Buffer[(1), float32]) { "
               "for %i, %j in grid(100000, 100000) { %Y[0] = %Y[0] + %X[0]; } }\r")
        s.expect(PROMPT)
        interrupt_running("call_tir(@spin, ([1f],), shape=[1], dtype=\"float32\")")

    def completion():
        s.send(":ty\t")
        s.expect(rb":type ")
        s.send("@ran\t")
        s.expect(rb"@ran\x07?ge")
        s.send("\r")
        s.expect(rb"fn \(int32\) -> List\[int32\]")
        s.expect(PROMPT)
        s.send("nn.softm\t")
        s.expect(rb"nn\.softmax")
        s.send("([1f, 2f], ax\t")
        s.expect(rb"axis=")
        s.send("0)\r")
        s.expect(rb"\[0\.26\d*f, 0\.73\d*f\]")
        s.expect(PROMPT)

    def complete_vars_and_files():
        s.send("let %weights = [1f, 2f];\r")
        s.expect(PROMPT)
        s.send("%wei\t")
        s.expect(rb"%weights")
        s.send("\r")
        s.expect(rb"[\r\n]\[1f, 2f\]\r\n")
        s.expect(PROMPT)
        with open(os.path.join(s.home, "script_to_load.rly"), "w") as f:
            f.write("def @loaded(%x: float32) { %x }\n")
        s.send(f":load {s.home}/script_to_l\t")
        s.expect(rb"script_to_load\.rly")
        s.send("\r")
        s.expect(rb"loaded 1 function: @loaded")
        s.expect(PROMPT)

    def ctrl_d_at_continuation():
        s.send("add(1f,\r")
        s.expect(MORE)
        s.send(b"\x04")
        s.expect(rb"error: expected an expression, found end of input")
        s.expect(PROMPT)
        assert s.alive(), "rly exited"

    def bracketed_paste():
        s.send(b"\x1b[200~def @h(%x: float32) {\n  multiply(%x, 2f)\n}\x1b[201~")
        out = s.quiet_for(0.5)
        assert b"defined" not in out, f"the paste ran before Enter: {out!r}"
        s.send("\r")
        s.expect(rb"defined @h : fn \(float32\) -> float32")
        s.expect(PROMPT)

    def errors_keep_going():
        s.send("add(1f, 2)\r")
        s.expect(rb"<repl:\d+>:1:1: error: add: dtypes float32 and int32 differ")
        s.expect(PROMPT)
        s.send("@h(3f)\r")
        s.expect(rb"[\r\n]6f\r\n")
        s.expect(PROMPT)

    def last_is_multiline():
        s.send("def @k(%x: float32) {\r")
        s.expect(MORE)
        s.send("  subtract(%x, 1f)\r")
        s.expect(MORE)
        s.send("}\r")
        s.expect(rb"defined @k")
        s.expect(PROMPT)

    def ctrl_d_exits():
        s.send(b"\x04")
        code = s.wait_exit()
        assert code == 0, f"exit status {code}"

    for name, fn in [("banner and prompt", banner), ("multi-line input", multiline),
                     ("Ctrl-C clears the line", ctrl_c_clears_line),
                     ("Ctrl-C at a continuation prompt", ctrl_c_at_continuation),
                     ("Ctrl-C stops an evaluation", ctrl_c_stops_evaluation),
                     ("Ctrl-C stops a prim function", ctrl_c_stops_a_prim_function),
                     ("Tab completion", completion),
                     ("Tab completion of variables and file names", complete_vars_and_files),
                     ("Ctrl-D at a continuation prompt runs the input", ctrl_d_at_continuation),
                     ("bracketed paste", bracketed_paste),
                     ("errors leave the session usable", errors_keep_going),
                     ("a multi-line input", last_is_multiline), ("Ctrl-D exits", ctrl_d_exits)]:
        check(name, fn)
        if not s.alive() and fn is not ctrl_d_exits:
            check("rly is still running", lambda: (_ for _ in ()).throw(RuntimeError("rly exited")))
            break


def completion_checks(home):
    """Completion from the settings and commands tables, in a fresh session."""
    s = Session(home)
    s.expect(PROMPT)

    def set_values():
        # A setting's own values (exec: jit|interp, not on|off).
        s.send(":set exec \t\t")
        out = s.expect(rb"(?s)(.*?)rly> :set exec ").group(1)
        words = out.split()
        assert b"jit" in words and b"interp" in words, out
        assert b"on" not in words and b"off" not in words, out
        s.send("i\t")
        s.expect(rb"interp ")
        s.send("\r")
        s.expect(PROMPT)
        s.send(":set ex\t")
        s.expect(rb":set exec ")
        s.send("\r")
        s.expect(rb"exec interp  \(default jit\)")
        s.expect(PROMPT)

    def pass_functions():
        # After a pass name: the user's @functions (the prelude's are left
        # out, so the only one completes whole).
        s.send("def @only_mine(%x: float32) { add(%x, 1f) }\r")
        s.expect(rb"defined @only_mine")
        s.expect(PROMPT)
        s.send(":pass Fuse\t")
        s.expect(rb":pass FuseOps ")
        s.send("@\t")
        s.expect(rb"@only_mine ")
        s.send("\r")
        s.expect(rb"FuseOps @only_mine: 1 rewrite; kept")
        s.expect(PROMPT)

    def doc_ops():
        # After :doc, op names (a unique prefix completes whole).
        s.send(":doc nn.batch_fl\t")
        s.expect(rb":doc nn.batch_flatten ")
        s.send("\r")
        s.expect(rb"nn.batch_flatten\(x\)")
        s.expect(PROMPT)

    check("Tab completes a setting's values", set_values)
    check("Tab completes @functions after a pass name", pass_functions)
    check("Tab completes op names after :doc", doc_ops)
    s.send(b"\x04")
    s.wait_exit()


def history_checks(home):
    path = os.path.join(home, ".rly_history")

    def mode_0600():
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o600, oct(stat.S_IMODE(st.st_mode))

    def recalled_whole():
        s = Session(home)
        s.expect(PROMPT)
        s.send(b"\x1b[A")  # Up: the last input, all three lines of it
        s.send("\r")
        s.expect(rb"defined @k : fn \(float32\) -> float32")
        s.expect(PROMPT)
        s.send(":quit\r")
        assert s.wait_exit() == 0

    check("history file mode 0600", mode_0600)
    check("a multi-line input is one history entry", recalled_whole)


def color_checks(home):
    def colored():
        s = Session(home, color=True)
        s.expect(rb"\x1b\[1;32mrly>")
        s.send("add(1f, 2)\r")
        s.expect(rb"\x1b\[1;31merror")
        s.expect(rb"rly>")
        s.send(b"\x04")
        s.wait_exit()

    def not_with_no_color():
        s = Session(home)
        s.expect(PROMPT)
        s.send("add(1f, 2)\r")
        s.expect(rb"error: add")
        s.expect(PROMPT)
        s.send(b"\x04")
        s.wait_exit()
        assert b"\x1b[1;3" not in s.buf

    check("colours on a terminal", colored)
    check("no colours with NO_COLOR", not_with_no_color)


def main():
    home = tempfile.mkdtemp(prefix="rly-tty-")
    try:
        first_session(home)
        history_checks(home)
        completion_checks(home)  # after history_checks: it recalls first_session's last input
        color_checks(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("all passed" if not failures else f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
