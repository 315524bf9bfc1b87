"""Compares the outputs of examples/relax_mlp.rly and examples/mlp.rly:
relax_mlp's result must equal mlp's TIR result exactly (same prims, same
weights) and its Relay-op result within 1e-5; prints OK."""
import re
import sys


def vectors(path):
    with open(path) as f:
        return [[float(x) for x in re.findall(r"-?[0-9.e-]+(?=f)", l)]
                for l in f if l.startswith("[[")]


relax, mlp = vectors(sys.argv[1]), vectors(sys.argv[2])
ok = len(relax) == 1 and len(mlp) == 2 and relax[0] == mlp[0] and len(relax[0]) == 10
ok = ok and all(abs(a - b) <= 1e-5 for a, b in zip(relax[0], mlp[1]))
print("OK" if ok else f"MISMATCH\n{relax}\n{mlp}")
