#!/usr/bin/python3
"""bench/jit: the LLVM JIT for TIR prim functions, each against its peer in one run.

(a) a fused elementwise chain of 5 ops, C = max(A*B + A, 0) * 0.5 - B, over
    16M float32: a prim function through call_tir (`:time`, one thread and
    all threads) against numpy evaluating the same expression and against
    the same loop in C compiled with `cc -O3 -march=native`;
(b) nn.dense 256x784 by 128 and a 1024^3 nn.matmul, lowered by FuseOps and
    LowerToTIR (weights packed per call, register-tiled, vectorized), against
    numpy (OpenBLAS with libopenblas0-pthread), one thread each;
(c) compile latency: median ms per kernel for 16 distinct kernels cold, and
    loaded from a warm disk cache.
Ratios > 1 mean rly is faster.  Medians of several runs.
Usage: /usr/bin/python3 bench/jit.py [path/to/rly]"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

RLY = sys.argv[1] if len(sys.argv) > 1 else "build/rly"
N = 16 * 1024 * 1024
RUNS = 10

CHAIN_PRIM = """
prim @chain(%A: Buffer[(n), float32], %B: Buffer[(n), float32], %C: Buffer[(n), float32]) {
  for %i in LOOP(n) {
    %C[%i] = max(%A[%i] * %B[%i] + %A[%i], 0f) * 0.5f - %B[%i];
  }
}
let %a = random.uniform(random.key(1), shape=[N]);
let %b = random.uniform(random.key(2), shape=[N]);
:time call_tir(@chain, (%a, %b), shape=[N], dtype="float32") -n RUNS
:kernels
"""

C_CHAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static void chain(const float *restrict a, const float *restrict b, float *restrict c, long n) {
  for (long i = 0; i < n; i++) {
    float t = a[i] * b[i] + a[i];
    c[i] = (t > 0.0f ? t : 0.0f) * 0.5f - b[i];
  }
}
static int cmp(const void *x, const void *y) {
  double p = *(const double *)x, q = *(const double *)y;
  return p < q ? -1 : p > q;
}
int main(void) {
  long n = NN;
  float *a = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4);
  for (long i = 0; i < n; i++) a[i] = (float)(i % 1000) / 1000.0f, b[i] = (float)(i % 777) / 777.0f;
  double t[RUNS], u[RUNS];
  float *out = aligned_alloc(64, n * 4);
  for (long i = 0; i < n; i++) out[i] = 0;
  for (int r = 0; r < RUNS; r++) {
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    chain(a, b, out, n); /* the loop alone, into memory already touched */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    float *c = malloc(n * 4); /* a fresh output each call, like numpy and call_tir */
    chain(a, b, c, n);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    t[r] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    u[r] = (t2.tv_sec - t1.tv_sec) * 1e3 + (t2.tv_nsec - t1.tv_nsec) / 1e6;
    volatile float sink = c[n / 2] + out[n / 3];
    (void)sink;
    free(c);
  }
  qsort(t, RUNS, sizeof t[0], cmp);
  qsort(u, RUNS, sizeof u[0], cmp);
  printf("%.4f %.4f\n", t[RUNS / 2], u[RUNS / 2]);
  return 0;
}
"""

PRODUCTS = [  # (name, rly expression over %a, %b, numpy expression over a, b, a's shape, b's shape)
    ("nn.dense 256x784 by 128", "nn.dense(%a, %b)", "a @ b.T", (256, 784), (128, 784)),
    ("nn.matmul 1024^3", "nn.matmul(%a, %b)", "a @ b", (1024, 1024), (1024, 1024)),
]


def products_script():
    """`:time` of each product, lowered by FuseOps + LowerToTIR and compiled."""
    out = []
    for _, expr, _, sa, sb in PRODUCTS:
        out.append(f"let %a = random.uniform(random.key(1), shape={list(sa)});\n"
                   f"let %b = random.uniform(random.key(2), shape={list(sb)});\n"
                   f":time {expr} -n {5 if sa[0] >= 1024 else 200}\n")
    return "".join(out)


def rly_products():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.rly")
        open(path, "w").write(products_script())
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "cache"), RLY_NUM_THREADS="1")
        p = subprocess.run([RLY, path], capture_output=True, text=True, env=env, timeout=600)
        if p.returncode != 0:
            sys.exit(f"rly failed:\n{p.stderr}")
        med = re.findall(r"runs?: min [0-9.]+ (?:ns|us|ms|s)  median ([0-9.]+) (ms|us)", p.stdout)
        return [float(v) / (1000 if u == "us" else 1) for v, u in med]


def rly_time(script, env_extra):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "b.rly")
        open(path, "w").write(script)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "cache"), **env_extra)
        p = subprocess.run([RLY, path], capture_output=True, text=True, env=env, timeout=600)
        if p.returncode != 0:
            sys.exit(f"rly failed:\n{p.stderr}")
        m = re.search(r"median ([0-9.]+) (ms|us)", p.stdout)
        k = re.search(r"^@\w+ .* (\d+) +([0-9.]+) ms$", p.stdout, re.M)
        if not m or not k:
            sys.exit(f"no :time output:\n{p.stdout}")
        # end to end per call, and the kernel alone (:kernels: total / calls)
        return float(m.group(1)) / (1000 if m.group(2) == "us" else 1), float(k.group(2)) / int(k.group(1))


def kernel_alone(loop, threads):
    """The kernel alone on warm buffers (bench/jit_kernel beside rly)."""
    exe = os.path.join(os.path.dirname(os.path.abspath(RLY)), "bench", "jit_kernel")
    prim = CHAIN_PRIM.split("let")[0].replace("LOOP", loop)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.rly")
        open(path, "w").write(prim)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "cache"), RLY_NUM_THREADS=str(threads))
        p = subprocess.run([exe, path, str(N), str(RUNS)], capture_output=True, text=True, env=env)
        return float(p.stdout) if p.returncode == 0 else float("nan")


def numpy_chain():
    rng = np.random.default_rng(0)
    a = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        c = np.maximum(a * b + a, np.float32(0)) * np.float32(0.5) - b
        ts.append((time.perf_counter() - t0) * 1e3)
    del c
    return statistics.median(ts)


def c_chain():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "chain.c")
        exe = os.path.join(d, "chain")
        open(src, "w").write(C_CHAIN.replace("NN", str(N)).replace("RUNS", str(RUNS)))
        subprocess.run(["cc", "-O3", "-march=native", "-std=gnu11", src, "-o", exe], check=True)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
        return float(out[0]), float(out[1])


def blas_name():
    """The BLAS behind numpy: Debian's numpy links libblas.so.3, which the
    alternatives system points at OpenBLAS once libopenblas0-pthread is in."""
    link = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
    target = os.path.realpath(link) if os.path.exists(link) else ""
    return "OpenBLAS" if "openblas" in target else "its BLAS"


def numpy_products():
    """numpy on one thread (OPENBLAS_NUM_THREADS=1 before numpy loads BLAS)."""
    code = ("import numpy as np, time, statistics\n"
            "for ea, sa, sb in %r:\n"
            "    a = np.random.rand(*sa).astype(np.float32)\n"
            "    b = np.random.rand(*sb).astype(np.float32)\n"
            "    f = eval('lambda a, b: ' + ea)\n"
            "    f(a, b)\n"
            "    ts = []\n"
            "    for _ in range(5 if sa[0] >= 1024 else 200):\n"
            "        t0 = time.perf_counter(); f(a, b); ts.append((time.perf_counter() - t0) * 1e3)\n"
            "    print(statistics.median(ts))\n") % ([(e, sa, sb) for _, _, e, sa, sb in PRODUCTS],)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return [float(x) for x in p.stdout.split()]


def compile_latency():
    prims, calls = [], []
    for k in range(16):
        prims.append(CHAIN_PRIM.split("let")[0].replace("LOOP", "vectorized")
                     .replace("@chain", f"@k{k}").replace("0.5f", f"{k + 2}f"))
        calls.append(f"call_tir(@k{k}, ([1f, 2f], [3f, 4f]), shape=[2], dtype=\"float32\")")
    script = "\n".join(prims + calls) + "\n:kernels\n"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.rly")
        open(path, "w").write(script)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(d, "cache"))
        out = []
        for _ in range(2):
            p = subprocess.run([RLY, path], capture_output=True, text=True, env=env, timeout=600)
            rows = re.findall(r"^@k\d+ .*?(\(disk\) )?([0-9.]+) ms +\d+", p.stdout, re.M)
            out.append([float(ms) for _, ms in rows])
        return statistics.median(out[0]), statistics.median(out[1])


def main():
    mt = {"RLY_NUM_THREADS": str(os.cpu_count() or 1)}
    one = {"RLY_NUM_THREADS": "1"}
    base = CHAIN_PRIM.replace("N]", f"{N}]").replace("RUNS", str(RUNS))
    e_vec, _ = rly_time(base.replace("LOOP", "vectorized"), one)
    e_par, _ = rly_time(base.replace("LOOP", "parallel"), mt)
    k_vec = kernel_alone("vectorized", 1)
    k_par = kernel_alone("parallel", mt["RLY_NUM_THREADS"])
    t_np = numpy_chain()
    c_loop, c_fresh = c_chain()
    print(f"(a) 5-op elementwise chain over 16M float32 (median of {RUNS}); 'call' = `:time` of a")
    print("    call_tir (a fresh output each time), 'kernel' = the compiled loop alone on warm buffers:")
    print(f"    rly vectorized, 1 thread   call {e_vec:8.2f} ms   kernel {k_vec:8.2f} ms")
    print(f"    rly parallel, {mt['RLY_NUM_THREADS']} threads    call {e_par:8.2f} ms   kernel {k_par:8.2f} ms")
    print(f"    numpy                           {t_np:8.2f} ms   rly/numpy: call {t_np / e_vec:.2f}x, "
          f"kernel {t_np / k_vec:.2f}x (1 thread)")
    print(f"    C -O3 -march=native        call {c_fresh:8.2f} ms   loop   {c_loop:8.2f} ms   "
          f"rly/C: call {c_fresh / e_vec:.2f}x, kernel/loop {c_loop / k_vec:.2f}x")
    t_rly, t_np = rly_products(), numpy_products()
    print(f"(b) products through FuseOps + lowering (packed, register-tiled), one thread, "
          f"against numpy ({blas_name()}):")
    for (name, _, _, sa, sb), tr, tn in zip(PRODUCTS, t_rly, t_np):
        gf = 2 * sa[0] * sa[1] * sb[0 if name.startswith("nn.dense") else 1] / 1e6
        print(f"    {name:24s} rly {tr:8.3f} ms {gf / tr:6.1f} GFLOP/s   numpy {tn:8.3f} ms "
              f"{gf / tn:6.1f} GFLOP/s   rly/numpy {tn / tr:.2f}x")
    cold, warm = compile_latency()
    print("(c) compile latency per kernel (median of 16):")
    print(f"    cold {cold:.2f} ms, warm disk cache {warm:.2f} ms")


if __name__ == "__main__":
    main()
