# A prim function over a dynamic shape, as TVM writes it: handles matched
# to buffers whose shapes use a size variable.
from tvm.script import tir as T


@T.prim_func
def add(a: T.handle, C: T.Buffer((4,), "float32"), b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n, 4))
    for i, j in T.grid(n, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + C[vj]
