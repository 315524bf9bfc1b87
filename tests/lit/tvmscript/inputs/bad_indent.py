from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        with T.block("A"):
            vi = T.axis.spatial(4, i)
          A[vi] = T.float32(1)
