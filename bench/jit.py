#!/usr/bin/python3
"""bench/jit: the LLVM JIT for TIR prim functions, each against its peer in one run.

(a) a fused elementwise chain of 5 ops, C = max(A*B + A, 0) * 0.5 - B, over
    16M float32: a prim function through call_tir (`:time`, one thread and
    all threads) against numpy evaluating the same expression and against
    the same loop in C compiled with `cc -O3 -march=native`;
(b) a 1024^3 float32 matmul, hand-tiled TIR (8x32 register block, vectorized)
    against numpy's matmul (OpenBLAS where numpy has it), one thread each;
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

MATMUL_PRIM = """
prim @mm(%A: Buffer[(1024, 1024), float32], %B: Buffer[(1024, 1024), float32],
         %C: Buffer[(1024, 1024), float32]) {
  for %i0 in range(0, 128) {
    for %j0 in range(0, 32) {
      alloc %acc: Buffer[(8, 32), float32];
      for %k in range(0, 1024) {
        for %ii in unrolled(8) {
          for %jj in vectorized(32) {
            %acc[%ii, %jj] = %acc[%ii, %jj] + %A[%i0 * 8 + %ii, %k] * %B[%k, %j0 * 32 + %jj];
          }
        }
      }
      for %ii in unrolled(8) {
        for %jj in vectorized(32) {
          %C[%i0 * 8 + %ii, %j0 * 32 + %jj] = %acc[%ii, %jj];
        }
      }
    }
  }
}
let %x = random.uniform(random.key(1), shape=[1024, 1024]);
let %y = random.uniform(random.key(2), shape=[1024, 1024]);
:time call_tir(@mm, (%x, %y), shape=[1024, 1024], dtype="float32") -n 5
:kernels
"""


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
    """The BLAS numpy links (Debian's numpy may use the reference libblas, not OpenBLAS)."""
    try:
        import numpy.__config__ as cfg
        info = cfg.get_info("openblas_info") if hasattr(cfg, "get_info") else {}
        return "OpenBLAS" if info else "its BLAS"
    except Exception:
        return "its BLAS"


def numpy_matmul():
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    code = ("import numpy as np, time, statistics\n"
            "a = np.random.rand(1024, 1024).astype(np.float32)\n"
            "b = np.random.rand(1024, 1024).astype(np.float32)\n"
            "a @ b\n"
            "ts = []\n"
            "for _ in range(5):\n"
            "    t0 = time.perf_counter(); a @ b; ts.append((time.perf_counter() - t0) * 1e3)\n"
            "print(statistics.median(ts))\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return float(p.stdout)


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
    _, t_mm = rly_time(MATMUL_PRIM, one)
    t_bl = numpy_matmul()
    gf = 2 * 1024 ** 3 / 1e6
    print("(b) 1024^3 float32 matmul, one thread:")
    print(f"    rly tiled TIR (kernel)     {t_mm:8.2f} ms  {gf / t_mm:6.1f} GFLOP/s")
    print(f"    numpy @ ({blas_name()})  {t_bl:8.2f} ms  {gf / t_bl:6.1f} GFLOP/s   "
          f"rly/numpy: {t_bl / t_mm:.2f}x")
    cold, warm = compile_latency()
    print("(c) compile latency per kernel (median of 16):")
    print(f"    cold {cold:.2f} ms, warm disk cache {warm:.2f} ms")


if __name__ == "__main__":
    main()
