#!/usr/bin/python3
"""session_random.py — random REPL sessions against a reference model of
what the session's module must be after every step.

Usage: session_random.py RLY [N_SESSIONS] [SEED] [STEPS]

Each session is a random sequence of steps typed at `rly -i`: definitions
of small functions (`def @fK(%x: float32) { add(@fJ(%x), 2f) }`, some
calling others, some without a parameter type), redefinitions that change
a parameter's dtype (rejected when a caller no longer checks), calls,
`:pass Gradient @fK`, calls of the derived `@fK_grad`, `:undo`, `:reset`
and `:load` of a script whose last item fails (what precedes it is kept).
The model (class Model) knows which definitions exist, their dtypes and
values, which derived definitions are stale, and what each :undo takes
back; every step's output is checked against it: a value, an accepted or
rejected definition (with the dependent it names), a rederivation, an
undo's label and removed names.  Sessions are separated by `:reset` and
run many to a process; a marker expression after each step splits the
output.  The process must exit 0 (no crash; under AddressSanitizer no
memory error and no leak).  Batches alternate between the two exec modes.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ["f%d" % i for i in range(5)]
MARK = 7770000  # marker values: MARK + step number, printed as an int32


def value_text(v, dt):
    return "%df" % v if dt == "float32" else "%d" % v


class Def:
    """A function as the model knows it: dtype (None: no annotation), the
    constant it adds, the function it calls (or None), a version bumped by
    every (re)definition (the text's identity), and a rev bumped by passes."""

    def __init__(self, dt, c, callee, version):
        self.dt, self.c, self.callee, self.version = dt, c, callee, version
        self.grad_of = None  # derived: (src, {dep: version}) for @src_grad


class Model:
    def __init__(self):
        self.defs = {}
        self.undo = []  # (label, snapshot)
        self.version = 0

    def snapshot(self):
        return {k: d for k, d in self.defs.items()}

    def push(self, label):
        self.undo.append((label, self.snapshot()))
        if len(self.undo) > 32:
            self.undo.pop(0)

    def value(self, name, x):
        d = self.defs[name]
        base = self.value(d.callee, x) if d.callee else x
        return base + d.c

    def reach(self, name):
        """name and what it calls, with their versions."""
        out = {}
        while name and name not in out:
            out[name] = self.defs[name].version
            name = self.defs[name].callee
        return out

    def callers(self, name):
        return [k for k, d in self.defs.items() if d.callee == name and d.grad_of is None]

    def stale(self, gname):
        d = self.defs.get(gname)
        if not d or not d.grad_of:
            return False
        return any(self.defs.get(n) is None or self.defs[n].version != v
                   for n, v in d.grad_of[1].items())

    def rederive(self, defined):
        """Derived definitions stale through a name in `defined`: rederived
        (True) or left stale (False), by grad name."""
        out = {}
        for g, d in sorted(self.defs.items()):
            if not d.grad_of or not self.stale(g):
                continue
            src, deps = d.grad_of
            if not (set(deps) & set(defined)) or src not in self.defs:
                continue
            if self.defs[src].dt is None:
                out[g] = False
                continue
            self.defs[g] = self.derive(src)
            out[g] = True
        return out

    def derive(self, src):
        self.version += 1
        d = Def(self.defs[src].dt, 0, None, self.defs[src].version)
        d.grad_of = (src, self.reach(src))
        return d


class Session:
    """Generates one session's steps as (input text, check function)."""

    def __init__(self, rng, model, tmp):
        self.rng, self.m, self.tmp = rng, model, tmp
        self.steps = []
        self.nload = 0

    def add(self, text, check):
        self.steps.append((text, check))

    # ── definitions ──

    def def_text(self, name, dt, c, callee):
        if dt is None:
            return "def @%s(%%x) { add(%%x, %s) }" % (name, value_text(c, "float32"))
        body = "@%s(%%x)" % callee if callee else "%x"
        return "def @%s(%%x: %s) { add(%s, %s) }" % (name, dt, body, value_text(c, dt))

    def cycle(self, name, callee):
        while callee:
            if callee == name:
                return True
            callee = self.m.defs[callee].callee if callee in self.m.defs else None
        return False

    def gen_def(self):
        m, rng = self.m, self.rng
        name = rng.choice(NAMES)
        c = rng.randint(1, 9)
        if name in m.defs and not m.callers(name) and rng.random() < 0.15:
            dt, callee = None, None
        else:
            dt = rng.choice(["float32", "float32", "int32"])
            cands = [k for k, d in m.defs.items() if d.grad_of is None and k != name
                     and d.dt is not None and not self.cycle(name, k)]
            callee = rng.choice(cands) if cands and rng.random() < 0.5 else None
        text = self.def_text(name, dt, c, callee)
        ok = True
        if callee and m.defs[callee].dt != dt:
            ok = False
        broken = [k for k in m.callers(name) if k != name and m.defs[k].dt != dt]
        if name in m.defs and broken:
            ok = False
        expect_rederived = {}
        if ok:
            m.push("the definition of @%s" % name)
            m.version += 1
            m.defs[name] = Def(dt, c, callee, m.version)
            expect_rederived = m.rederive([name])

        def check(out, name=name, ok=ok, broken=broken, red=expect_rederived, text=text):
            if not ok:
                expect("error:" in out, "rejected: " + text, out)
                for b in broken:
                    expect("`@%s` uses `@%s`" % (b, name) in out, "names dependent @" + b, out)
                return
            expect(re.search(r"^(re)?defined @%s\b" % name, out, re.M), "defined: " + text, out)
            for g, fine in red.items():
                if fine:
                    expect("rederived @%s (Gradient @%s)" % (g, g[:-5]) in out,
                           "rederived @" + g, out)
                else:
                    expect("`@%s` is stale" % g in out, "stale warning @" + g, out)
        self.add(text, check)

    # ── calls ──

    def gen_call(self):
        m, rng = self.m, self.rng
        name = rng.choice(NAMES + [n + "_grad" for n in NAMES])
        d = m.defs.get(name)
        dt = (d.dt or "float32") if d else "float32"
        x = rng.randint(-5, 5)
        text = "@%s(%s)" % (name, value_text(x, dt))
        if not d:
            want, err = None, "unknown global"
        elif d.grad_of and m.stale(name):
            want, err = None, "`@%s` is stale" % name
        elif d.grad_of:
            src = d.grad_of[0]
            one = "1f" if dt == "float32" else "0"
            want, err = "(%s, (%s,))" % (value_text(m.value(src, x), dt), one), None
        else:
            want, err = value_text(m.value(name, x), dt), None

        def check(out, want=want, err=err, text=text):
            if err:
                expect(err in out, "error %r for %s" % (err, text), out)
            else:
                expect(out.strip() == want, "%s = %s" % (text, want), out)
        self.add(text, check)

    # ── passes, undo, reset ──

    def gen_gradient(self):
        m = self.m
        name = self.rng.choice(NAMES)
        text = ":pass Gradient @%s" % name
        d, g = m.defs.get(name), name + "_grad"
        if not d or d.grad_of:
            kind = "error"
        elif d.dt is None:
            kind = "error"
        elif g in m.defs and m.defs[g].grad_of and not m.stale(g) and \
                m.defs[g].grad_of[0] == name:
            kind = "no change"
        else:
            kind = "kept"
            m.push(text)
            m.defs[g] = m.derive(name)

        def check(out, kind=kind, text=text):
            if kind == "error":
                expect("error:" in out, "rejected: " + text, out)
            elif kind == "kept":
                expect("kept (undo with :undo)" in out, "kept: " + text, out)
            else:
                expect("kept" not in out and "error" not in out, "no change: " + text, out)
        self.add(text, check)

    def gen_undo(self):
        m = self.m
        if not m.undo:
            self.add(":undo", lambda out: expect("nothing to undo" in out, ":undo of nothing", out))
            return
        label, snap = m.undo.pop()
        removed = sorted(set(m.defs) - set(snap))
        m.defs = snap

        def check(out, label=label, removed=removed):
            expect(out.startswith("undid %s" % label), "undid %s" % label, out)
            got = re.search(r"removed ([^;]*)", out)
            names = sorted(n.strip()[1:] for n in got.group(1).split(",")) if got else []
            expect(names == removed, "removed %s" % removed, out)
        self.add(":undo", check)

    def gen_reset(self):
        self.m.defs, self.m.undo = {}, []
        self.add(":reset", lambda out: expect("session reset" in out, ":reset", out))

    # ── :load of a script that fails at its end ──

    def gen_load(self):
        m, rng = self.m, self.rng
        lines, values, ndefs = [], [], []
        before = m.snapshot()
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(NAMES)
            if m.callers(name) or name in ndefs:
                continue
            dt = rng.choice(["float32", "int32"])
            c = rng.randint(1, 9)
            lines.append(self.def_text(name, dt, c, None))
            m.version += 1
            m.defs[name] = Def(dt, c, None, m.version)
            m.rederive([name])
            ndefs.append(name)
            x = rng.randint(-3, 3)
            lines.append("@%s(%s)" % (name, value_text(x, dt)))
            values.append(value_text(m.value(name, x), dt))
        lines.append("add(1f, True)")  # the error that stops it
        self.nload += 1
        path = os.path.join(self.tmp, "load%d_%d.rly" % (id(self), self.nload))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        after = m.snapshot()
        if ndefs:
            m.defs = before
            m.push(":load " + path)
            m.defs = after
        stop_line = len(lines)

        def check(out, values=values, stop=stop_line, path=path):
            got = [l for l in out.splitlines()
                   if re.fullmatch(r"-?\d+f?", l.strip())]
            expect(got == values, "load values %s" % values, out)
            expect("%s: stopped at line %d" % (path, stop) in out, "stopped at %d" % stop, out)
        self.add(":load " + path, check)

    def generate(self, nsteps):
        gens = [(self.gen_def, 30), (self.gen_call, 30), (self.gen_gradient, 10),
                (self.gen_undo, 12), (self.gen_load, 5), (self.gen_reset, 2)]
        fns = [g for g, w in gens for _ in range(w)]
        for _ in range(nsteps):
            self.rng.choice(fns)()
        self.gen_reset()


FAILURES = []


def expect(cond, what, out):
    if not cond:
        raise AssertionError("%s\n--- output ---\n%s" % (what, out))


def run_batch(rly, sessions, seed, exec_mode):
    """Runs the sessions' steps in one process; checks each step's output."""
    steps = [st for s in sessions for st in s.steps]
    text = []
    for i, (t, _) in enumerate(steps):
        text.append(t)
        text.append("%d" % (MARK + i))
    env = dict(os.environ, NO_COLOR="1", RLY_EXEC=exec_mode)
    # Under AddressSanitizer, a leak fails the run too (LLVM's own are suppressed).
    asan = re.sub(r"detect_leaks=\d", "", env.get("ASAN_OPTIONS", "")).strip(":")
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "detect_leaks=1"
    env["LSAN_OPTIONS"] = "suppressions=" + os.path.join(HERE, "lsan-jit.supp")
    p = subprocess.run([rly, "-i"], input="\n".join(text) + "\n", stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env, timeout=1800)
    out = p.stdout
    if p.returncode != 0:
        raise AssertionError("rly exited %d (seed %d)\n%s" % (p.returncode, seed, out[-3000:]))
    segs, cur, want = [], [], 0
    for line in out.splitlines():
        if line.strip() == "%d" % (MARK + want):
            segs.append("\n".join(cur))
            cur, want = [], want + 1
        else:
            cur.append(line)
    if len(segs) != len(steps):
        raise AssertionError("seed %d: %d of %d steps answered\n%s" % (
            seed, len(segs), len(steps), out[-3000:]))
    for i, ((t, check), seg) in enumerate(zip(steps, segs)):
        try:
            check(seg)
        except AssertionError as e:
            ctx = "\n".join(s[0] for s in steps[max(0, i - 12):i + 1])
            raise AssertionError("seed %d, step %d `%s`: %s\n--- the steps before ---\n%s" % (
                seed, i, t, e, ctx))


def main():
    rly = sys.argv[1]
    nsessions = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    nsteps = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    per_process = 50
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        for b in range(0, nsessions, per_process):
            rng = random.Random(seed * 100003 + b)
            model = Model()
            sessions = []
            for _ in range(min(per_process, nsessions - b)):
                s = Session(rng, model, tmp)
                s.generate(nsteps)
                sessions.append(s)
            mode = ["jit", "interp"][(b // per_process) % 2]
            run_batch(rly, sessions, seed * 100003 + b, mode)
            done += len(sessions)
    print("session_random: %d sessions of %d steps agree with the model" % (done, nsteps))
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
