"""More cases of einsum for its compute rule (lower/compute/compute_einsum.c), run in
tests/kernels_numpy.py's namespace after transform.py (Case, GENERATORS,
rand_of, attrs_text, quiet, RTOL_PRODUCT come from there): longer rows and
sums, a summed label first seen in a later operand, diagonals of one and
of two operands (a label three times in a term, a label in a term twice
and in another), ellipses broadcasting a dim of 1 against another
operand's (implicit and explicit outputs), the result's axes in another
order than the inputs', three and four operands, on every dtype the rule
takes (float32, float64; int8 to int64 and uint8 summing modulo 2**64 and
narrowed, as the kernel does).  Each case must run compiled."""

TE_EINSUMS = [("ij,jk->ik", [(5, 37), (37, 9)]), ("ij,kj->ki", [(4, 6), (3, 6)]),
              ("iii->i", [(3, 3, 3)]), ("ii,i->i", [(4, 4), (4,)]), ("ij,ji", [(3, 5), (5, 3)]),
              ("...j,j", [(2, 1, 3, 4), (4,)]), ("b...k,...kn->b...n", [(2, 3, 1, 5), (4, 5, 2)]),
              ("a...,...->...a", [(2, 3, 1), (4,)]), ("kji,ik->jk", [(2, 3, 4), (4, 2)]),
              ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 2)]), ("i,j,k->kji", [(2,), (3,), (4,)]),
              ("Aa,aA", [(3, 3), (3, 3)])]


def te_einsum(op):
    for dt in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8):
        for eq, shapes in TE_EINSUMS:
            xs = [rand_of(s, dt, specials=False, lo=-4, hi=4) for s in shapes]
            if dt in (np.float32, np.float64):
                ref = np.einsum(eq, *[x.astype(np.float64) for x in xs])
                scale = np.einsum(eq, *[np.abs(x.astype(np.float64)) for x in xs])
                yield Case(op, attrs_text(equation=eq), xs, [np.asarray(ref).astype(dt)], "tol",
                           rtol=RTOL_PRODUCT[dt] * 4, scale=[np.asarray(scale)], atol=float(np.finfo(dt).tiny),
                           compiled=True)
            else:
                acc = np.uint64 if np.dtype(dt).kind == "u" else np.int64
                ref = quiet(lambda: np.einsum(eq, *[x.astype(acc) for x in xs]))
                yield Case(op, attrs_text(equation=eq), xs, [np.asarray(ref).astype(dt)], compiled=True)


te_base = GENERATORS["einsum"][0]


def te_all(name):
    yield from te_base(name)
    yield from te_einsum(name)


GENERATORS["einsum"] = (te_all, "einsum")
