# The TVMScript subset rly reads, most of it in one function (tvmscript_numpy.py
# runs it against numpy; features.test checks its translation).
from tvm.script import tir as T


@T.prim_func
def feats(A: T.Buffer[(8, 8), "float32"], B: T.Buffer((8,), "int64"),
          C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "feats", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    S = T.alloc_buffer([8], dtype="float32")
    for i in T.serial(8):
        for k in range(2, 8):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(S[vi])
                with T.init():
                    S[vi] = T.float32(0.0)
                S[vi] += A[vi, vk] * 0.5
    for i in T.parallel(8):
        for j in T.vectorized(8):
            with T.block("C"):
                vi = T.axis.S(8, i)
                vj = T.axis.spatial(8, j)
                T.where(vi * 8 + vj < 60 and not vj == 7)
                t: T.float32 = T.exp(A[vi, vj]) - S[vi]
                if vi % 2 == 0:
                    C[vi, vj] = T.if_then_else(t > T.float32(1), t, -t)
                elif vj >= 4:
                    C[vi, vj] = T.Cast("float32", T.truncdiv(B[vi], T.int64(2))) + T.float32(-1.5e-3)
                else:
                    C[vi, vj] = T.max(t, T.min(2.0, t ** 2))
    for u in T.unroll(4):
        with T.block("D"):
            vu = T.axis.spatial(4, u)
            C[7, vu + 4] = T.float32(vu // 2) * 2.0 + T.float32(B[vu + 1])
