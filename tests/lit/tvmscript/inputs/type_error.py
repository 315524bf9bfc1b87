from tvm.script import tir as T


@T.prim_func
def bad(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
