#!/usr/bin/python3
"""cnn_numpy.py — the golden TVM v0.10 CNN (tests/lit/tvm/v010_cnn_batch_norm.rly)
run by rly in both execution modes against numpy.

Usage: /usr/bin/python3 tests/cnn_numpy.py PATH/TO/rly [-v]

The golden file is TVM's astext() of conv2d -> batch_norm (.0) -> relu ->
max_pool2d -> global_avg_pool2d -> batch_flatten -> dense -> bias_add (a
metadata constant) -> softmax.  Random inputs and weights (fixed seed) are
written to an .npz, a script loads them with :load-tensor and calls @main;
rly runs the golden file and the script in interp and in jit mode.  The
printed probabilities must match numpy's forward pass (float64, with the
bias decoded from the golden file's own metadata) within rtol 1e-5, and the
two modes must agree with each other within 1e-6.  The jit run must also
have compiled the convolution and the pools (its :kernels table lists
them; batch_norm, whose result is a tuple, stays with its kernel).
Prints "cnn: N passed, N failed" and exits non-zero on any failure."""
import base64
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

from tir_numpy import parse_value

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "lit", "tvm", "v010_cnn_batch_norm.rly")


def metadata_bias(path):
    """relay.Constant 0 of the golden file's #[metadata] section."""
    text = open(path).read()
    meta = json.loads(text[text.index("#[metadata]") + len("#[metadata]"):text.index("\n// CHECK")])
    raw = base64.b64decode(meta["b64ndarrays"][0])
    ndim = struct.unpack_from("<i", raw, 24)[0]
    shape = struct.unpack_from("<%dq" % ndim, raw, 32)
    off = 32 + 8 * ndim + 8
    return np.frombuffer(raw[off:], np.float32).reshape(shape)


def forward(p, bias):
    """numpy's forward pass in float64."""
    x, w = p["data"].astype(np.float64), p["conv_weight"].astype(np.float64)
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    y = np.zeros((1, 16, 32, 32))
    for a in range(3):
        for b in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, a:a + 32, b:b + 32], w[:, :, a, b])
    sh = (1, -1, 1, 1)
    y = (y - p["bn_moving_mean"].reshape(sh)) / np.sqrt(p["bn_moving_var"].reshape(sh) + float(np.float32(1e-5)))
    y = y * p["bn_gamma"].reshape(sh) + p["bn_beta"].reshape(sh)
    y = np.maximum(y, 0)
    y = y.reshape(1, 16, 16, 2, 16, 2).max(axis=(3, 5))
    y = y.mean(axis=(2, 3))
    y = y @ p["fc_weight"].astype(np.float64).T + bias.astype(np.float64)
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def params():
    r = np.random.default_rng(7)
    f32 = np.float32
    return {
        "data": r.standard_normal((1, 3, 32, 32)).astype(f32),
        "conv_weight": (r.standard_normal((16, 3, 3, 3)) * 0.3).astype(f32),
        "bn_gamma": (1 + 0.2 * r.standard_normal(16)).astype(f32),
        "bn_beta": (0.1 * r.standard_normal(16)).astype(f32),
        "bn_moving_mean": (0.2 * r.standard_normal(16)).astype(f32),
        "bn_moving_var": (0.5 + r.random(16)).astype(f32),
        "fc_weight": (r.standard_normal((10, 16)) * 0.5).astype(f32),
    }


def run(rly, script, mode):
    env = dict(os.environ, RLY_EXEC=mode, NO_COLOR="1")
    p = subprocess.run([rly, GOLDEN, script], capture_output=True, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    rly = args[0] if args else os.environ.get("RLY", "rly")
    verbose = "-v" in sys.argv
    p = params()
    want = forward(p, metadata_bias(GOLDEN))
    passed = failed = 0
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "cnn.npz")
        np.savez(npz, **p)
        script = os.path.join(tmp, "run.rly")
        with open(script, "w") as f:
            for k in p:
                f.write(":load-tensor %%%s %s %s\n" % (k, npz, k))
            f.write("@main(%s)\n:kernels\n" % ", ".join("%" + k for k in p))
        for mode in ("interp", "jit"):
            rc, out, err = run(rly, script, mode)
            lines = [l for l in out.splitlines() if l.startswith("[[")]
            msg = None
            if rc != 0 or len(lines) != 1:
                msg = "exit %d, %d values printed\n%s%s" % (rc, len(lines), out[-2000:], err[-2000:])
            else:
                got[mode] = np.array(parse_value(lines[0]), np.float64)
                bad = np.abs(got[mode] - want) > 1e-5 * np.abs(want) + 1e-7
                if got[mode].shape != want.shape or bad.any():
                    msg = "rly %r\n  numpy %r" % (got[mode].tolist(), want.tolist())
                elif mode == "jit" and not all(re.search(r"^@fused_nn_(contrib_)?%s\S* " % k, out, re.M)
                                               for k in ("conv2d", "max_pool2d", "global_avg_pool2d")):
                    msg = "the convolution or a pool was not compiled:\n" + out[-2000:]
            if msg:
                failed += 1
                print("FAIL cnn [%s]: %s" % (mode, msg))
            else:
                passed += 1
                if verbose:
                    print("ok   cnn [%s] %s" % (mode, got[mode].tolist()))
    if len(got) == 2:
        if np.abs(got["interp"] - got["jit"]).max() > 1e-6:
            failed += 1
            print("FAIL cnn: interp %r and jit %r differ" % (got["interp"].tolist(), got["jit"].tolist()))
        else:
            passed += 1
    print("cnn: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
