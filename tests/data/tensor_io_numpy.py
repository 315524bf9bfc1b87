"""tensor_io_numpy.py — rly's tensor file readers and writers against numpy.

usage: tensor_io_numpy.py TENSOR_IO_TOOL TENSOR_IO_FUZZ [FUZZ_ITERATIONS]

1. Round trips: numpy writes .npy (every dtype rly has, big-endian,
   Fortran order, 0-d, empty, format versions 1.0/2.0/3.0), .npz (stored
   and deflated) and hand-made .safetensors (including BF16, kept as
   bfloat16 and written to .npy as 2-byte void); the tool reads
   each and writes .npz/.npy/.safetensors, which numpy (or a small reader
   here) reads back: shapes, dtypes and bytes must be equal.
2. A corpus of broken files: each must be rejected with exit status 1 and a
   message naming the file and the problem (never a crash).
3. The mutation fuzzer over the valid files (the C program; ASan in CI).
"""
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

TOOL, FUZZ = sys.argv[1], sys.argv[2]
ITERS = sys.argv[3] if len(sys.argv) > 3 else "3000"
failures = []


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True)


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def sample_arrays():
    rng = np.random.default_rng(7)
    arrs = {}
    for dt in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        info = np.iinfo(dt)
        arrs[dt] = rng.integers(info.min, info.max, size=(3, 4), dtype=dt, endpoint=True)
    for dt in ["float16", "float32", "float64"]:
        a = rng.standard_normal((2, 3, 5)).astype(dt)
        a.flat[0], a.flat[1], a.flat[2] = np.inf, -0.0, np.nan
        arrs[dt] = a
    arrs["bool"] = rng.integers(0, 2, size=(7,)).astype(bool)
    arrs["scalar"] = np.array(3.5, dtype=np.float32)
    arrs["empty"] = np.zeros((0, 3), dtype=np.int32)
    arrs["big_endian"] = np.arange(12, dtype=">f4").reshape(3, 4)
    arrs["big_endian_i8"] = np.arange(-6, 6, dtype=">i8").reshape(2, 6)
    arrs["fortran"] = np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    arrs["fortran2"] = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    return arrs


def same(a, b):
    """Equal shape, equal values as native little-endian C-order bytes."""
    a = np.array(a.astype(a.dtype.newbyteorder("=")), order="C")
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    codes = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "I16": "<i2", "I32": "<i4",
             "I64": "<i8", "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?",
             "BF16": "<u2"}
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        out[k] = np.frombuffer(data[8 + n + b:8 + n + e], dtype=codes[v["dtype"]]).reshape(v["shape"])
    return out


def write_safetensors(path, tensors, metadata=None, bf16=None):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    codes = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8", "int16": "I16",
             "int32": "I32", "int64": "I64", "uint8": "U8", "uint16": "U16", "uint32": "U32",
             "uint64": "U64", "bool": "BOOL"}
    for k, a in tensors.items():
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        code = codes[a.dtype.name]
        if bf16 and k in bf16:
            raw = (np.ascontiguousarray(a, dtype=np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
            code = "BF16"
        header[k] = {"dtype": code, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def check_npz_back(src_name, ours_npz, expect):
    got = np.load(ours_npz)
    if sorted(got.files) != sorted(expect):
        return fail(f"{src_name}: keys {sorted(got.files)} != {sorted(expect)}")
    for k, a in expect.items():
        if not same(a, got[k]):
            fail(f"{src_name}: entry {k} differs after our .npz: {a!r} vs {got[k]!r}")


def check_safetensors_back(src_name, ours_st, expect):
    got = read_safetensors(ours_st)
    for k, a in expect.items():
        if k not in got or not same(a, got[k]):
            fail(f"{src_name}: entry {k} differs after our .safetensors")


def roundtrips(d, arrs):
    for name, a in arrs.items():
        p = os.path.join(d, name + ".npy")
        np.save(p, a)
        r = run("convert", p, os.path.join(d, name + ".out.npy"))
        if r.returncode:
            fail(f"{name}.npy: {r.stderr}")
            continue
        if not same(a, np.load(os.path.join(d, name + ".out.npy"))):
            fail(f"{name}.npy: differs after our .npy")
    for version in [(1, 0), (2, 0), (3, 0)]:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arrs["float32"], version=version)
        p = os.path.join(d, "v%d.npy" % version[0])
        open(p, "wb").write(buf.getvalue())
        r = run("convert", p, p + ".npz")
        if r.returncode or not same(arrs["float32"], np.load(p + ".npz")["arr_0"]):
            fail(f"npy version {version}: {r.stderr}")
    for saver, tag in [(np.savez, "stored"), (np.savez_compressed, "deflated")]:
        p = os.path.join(d, tag + ".npz")
        saver(p, **arrs)
        for ext, check in [(".npz", check_npz_back), (".safetensors", check_safetensors_back)]:
            out = p + ext
            r = run("convert", p, out)
            if r.returncode:
                fail(f"{tag}.npz → {ext}: {r.stderr}")
            else:
                check(tag + ".npz", out, arrs)
    st = {k: v for k, v in arrs.items() if k not in ("big_endian", "big_endian_i8", "fortran", "fortran2")}
    p = os.path.join(d, "hand.safetensors")
    write_safetensors(p, st, metadata={"format": "pt", "note": "caf\u00e9 \\\" \u2603"})
    r = run("convert", p, p + ".npz")
    if r.returncode:
        fail(f"hand.safetensors: {r.stderr}")
    else:
        check_npz_back("hand.safetensors", p + ".npz", st)
    bf = {"w": np.array([[1.5, -2.0], [0.09375, 2.0 ** 100]], dtype=np.float32)}
    bits = (bf["w"].view(np.uint32) >> 16).astype("<u2")
    p = os.path.join(d, "bf16.safetensors")
    write_safetensors(p, bf, bf16={"w"})
    r = run("convert", p, p + ".npz")  # bfloat16 in .npy: 2-byte void, the bits
    got = np.load(p + ".npz")["w"] if not r.returncode else None
    if r.returncode or got.dtype != np.dtype("V2") or not np.array_equal(got.view("<u2"), bits):
        fail(f"bf16.safetensors → .npz: {r.stderr}")
    r = run("convert", p + ".npz", p + ".back.safetensors")
    if r.returncode or open(p + ".back.safetensors", "rb").read().count(b'"BF16"') != 1:
        fail(f"bf16 .npz → .safetensors: {r.stderr}")
    elif not np.array_equal(read_safetensors(p + ".back.safetensors")["w"], bits):
        fail("bf16 .npz → .safetensors: bits differ")
    # an empty archive; a zip written to a pipe (data descriptors, zip64 local headers)
    np.savez(os.path.join(d, "empty.npz"))
    r = run("list", os.path.join(d, "empty.npz"))
    if r.returncode or r.stdout:
        fail("empty.npz: " + r.stdout + r.stderr)
    # written again: an empty central directory (its buffer has no data)
    r = run("convert", os.path.join(d, "empty.npz"), os.path.join(d, "empty.out.npz"))
    if r.returncode or len(np.load(os.path.join(d, "empty.out.npz")).files) != 0:
        fail("empty.npz → .npz: " + r.stderr)
    p = os.path.join(d, "stream.npz")
    open(p, "wb").write(streamed_zip({"a": arrs["float32"], "b": arrs["int64"]}))
    r = run("convert", p, p + ".npz")
    if r.returncode:
        fail("stream.npz: " + r.stderr)
    else:
        check_npz_back("stream.npz", p + ".npz", {"a": arrs["float32"], "b": arrs["int64"]})
    r = run("list", os.path.join(d, "stored.npz"))
    if "float32 float32 (2, 3, 5)" not in r.stdout or "scalar float32 ()" not in r.stdout:
        fail("list: " + r.stdout + r.stderr)


class Pipe(io.RawIOBase):
    """A write-only stream without seek: zipfile then writes data descriptors."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def streamed_zip(arrays):
    pipe = Pipe()
    with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as z:
        for k, a in arrays.items():
            with z.open(k + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a)
    return bytes(pipe.data)


def good_npy():
    buf = io.BytesIO()
    np.save(buf, np.arange(6, dtype=np.float32).reshape(2, 3))
    return buf.getvalue()


def npy_with_header(h, data=b"\0" * 24, version=b"\x01\x00"):
    hb = h.encode("latin1")
    if version[0] == 1:
        return b"\x93NUMPY" + version + struct.pack("<H", len(hb)) + hb + data
    return b"\x93NUMPY" + version + struct.pack("<I", len(hb)) + hb + data


def good_npz(compressed=False):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, a=np.arange(6, dtype=np.float32),
                                                      b=np.ones((2, 2), dtype=np.int64))
    return buf.getvalue()


def st_bytes(header, data, raw_len=None):
    h = json.dumps(header).encode() if not isinstance(header, bytes) else header
    return struct.pack("<Q", len(h) if raw_len is None else raw_len) + h + data


def broken_files():
    """(name, bytes, words the message must contain)."""
    npy = good_npy()
    npz = good_npz()
    npzc = good_npz(True)
    eocd = npz.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", npz[eocd + 16:eocd + 20])[0]
    f32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    cases = [
        ("empty.npy", b"", "too short"),
        ("magic.npy", b"\x93NUMPX" + npy[6:], "not a tensor file"),
        ("trunc_pre.npy", npy[:9], "truncated"),
        ("version.npy", npy[:6] + b"\x04\x00" + npy[8:], "version 4.0"),
        ("hlen.npy", npy[:8] + b"\xff\xff" + npy[10:], "header length"),
        ("trunc_data.npy", npy[:-5], "truncated"),
        ("extra_data.npy", npy + b"\0\0\0\0", "after the data"),
        ("dtype.npy", npy_with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }"), "unsupported dtype '<c8'"),
        ("object.npy", npy_with_header("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }"), "unsupported dtype"),
        ("struct.npy", npy_with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }"), "structured"),
        ("dupkey.npy", npy_with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,), }"), "duplicate key 'descr'"),
        ("nokey.npy", npy_with_header("{'descr': '<f4', 'shape': (6,), }"), "missing key 'fortran_order'"),
        ("badkey.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}"), "unexpected key 'x'"),
        ("overflow.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"), "overflows"),
        ("huge.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000), }"), "truncated"),
        ("dimbig.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"), "too large"),
        ("negdim.npy", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), "non-negative"),
        ("unterminated.npy", npy_with_header("{'descr': '<f4"), "unterminated"),
        ("bool2.npy", npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", b"\x01\x02"), "not 0 or 1"),
        ("fortran_bad.npy", npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }"), "True or False"),
        ("zip_noeocd.npz", npz[:eocd], "end-of-central-directory"),
        ("zip_trunc.npz", npz[:len(npz) // 2], "end-of-central-directory"),
        ("zip_cdoff.npz", npz[:eocd + 16] + struct.pack("<I", len(npz) + 100) + npz[eocd + 20:], "outside the file"),
        ("zip_count.npz", npz[:eocd + 8] + struct.pack("<HH", 5000, 5000) + npz[eocd + 12:], "claims 5000 entries"),
        ("zip_local.npz", npz[:cd + 42] + struct.pack("<I", 0x7ffffff0) + npz[cd + 46:], "local header offset"),
        ("zip_crc.npz", npz[:cd + 16] + b"\0\0\0\0" + npz[cd + 20:], "CRC-32"),
        ("zip_method.npz", npz[:cd + 10] + b"\x0c\x00" + npz[cd + 12:], "compression method 12"),
        ("zip_sizes.npz", npz[:cd + 20] + struct.pack("<I", 10) + npz[cd + 24:], "stored entry"),
        ("zip_deflate.npz", npzc[:40] + b"\xff" * 20 + npzc[60:], "entry 'a'"),
        ("zip_dup.npz", dup_zip(), "duplicate entry 'a'"),
        ("zip_bomb.npz", bomb_zip(), "impossible"),
        ("zip_overlap.npz", overlap_zip(), "overlap"),
        ("zip_encrypted.npz", npz[:cd + 8] + b"\x01\x00" + npz[cd + 10:], "encrypted"),
        ("zip_inner.npz", inner_bad_zip(), "entry 'x': truncated"),
        ("st_short.safetensors", b"\x08\0\0\0", "too short"),
        ("st_hlen.safetensors", st_bytes({"a": f32}, b"\0" * 8, raw_len=1 << 40), "above the limit"),
        ("st_trunc.safetensors", st_bytes({"a": f32}, b"\0" * 8, raw_len=4000), "truncated"),
        ("st_json.safetensors", st_bytes(b'{"a": {"dtype": "F32", ', b""), "header"),
        ("st_range.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 800]}}, b"\0" * 8), "out of range"),
        ("st_back.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}}, b"\0" * 8), "out of range"),
        ("st_size.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8), "need 12"),
        ("st_overlap.safetensors", st_bytes({"a": f32, "b": f32}, b"\0" * 8), "overlap"),
        ("st_hole.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, b"\0" * 16), "hole"),
        ("st_tail.safetensors", st_bytes({"a": f32}, b"\0" * 12), "after the last"),
        ("st_dtype.safetensors", st_bytes({"a": {"dtype": "F8_E4M3", "shape": [8], "data_offsets": [0, 8]}}, b"\0" * 8), "unsupported dtype 'F8_E4M3'"),
        ("st_dupname.safetensors", st_bytes(b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}', b"\0" * 16), "duplicate tensor name 'a'"),
        ("st_dupfield.safetensors", st_bytes(b'{"a": {"dtype": "F32", "dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}', b"\0" * 8), "duplicate field 'dtype'"),
        ("st_missing.safetensors", st_bytes({"a": {"dtype": "F32", "data_offsets": [0, 8]}}, b"\0" * 8), "missing 'shape'"),
        ("st_float.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}}, b"\0" * 8), "integers"),
        ("st_overflow.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 4], "data_offsets": [0, 8]}}, b"\0" * 8), "overflows"),
        ("st_deep.safetensors", st_bytes(b'{"__metadata__": ' + b"[" * 100 + b"]" * 100 + b"}", b""), "nested too deeply"),
        ("st_rank.safetensors", st_bytes({"a": {"dtype": "F32", "shape": [1] * 40, "data_offsets": [0, 4]}}, b"\0" * 4), "too many values"),
    ]
    return cases


def zip_of(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def dup_zip():
    import warnings
    warnings.simplefilter("ignore")
    return zip_of([("a.npy", good_npy()), ("a.npy", good_npy())])


def inner_bad_zip():
    return zip_of([("x.npy", good_npy()[:-3])])


def bomb_zip():
    """A deflated entry whose declared size is far beyond what its data can expand to."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.npy", good_npy())
    b = bytearray(buf.getvalue())
    eocd = b.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", b[eocd + 16:eocd + 20])[0]
    b[cd + 24:cd + 28] = struct.pack("<I", 0xF0000000)
    return bytes(b)


def overlap_zip():
    """Two central entries pointing at the same local header."""
    b = bytearray(zip_of([("a.npy", good_npy()), ("b.npy", good_npy())]))
    eocd = b.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", b[eocd + 16:eocd + 20])[0]
    second = b.find(b"PK\x01\x02", cd + 4)
    b[second + 42:second + 46] = b[cd + 42:cd + 46]
    return bytes(b)


def broken(d):
    for name, data, words in broken_files():
        p = os.path.join(d, name)
        open(p, "wb").write(data)
        r = run("list", p)
        msg = r.stderr.strip()
        if r.returncode != 1 or p not in msg or words not in msg:
            fail(f"{name}: exit {r.returncode}, message {msg!r}, wanted {words!r}")


def fuzz(d):
    seeds = [os.path.join(d, f) for f in ["float32.npy", "fortran.npy", "big_endian.npy", "stored.npz",
                                        "deflated.npz", "hand.safetensors", "bf16.safetensors",
                                        "scalar.npy", "v2.npy", "stream.npz"]]
    r = subprocess.run([FUZZ, ITERS, "1", *seeds], capture_output=True, text=True)
    print(r.stdout.strip())
    if r.returncode:
        fail("fuzz: " + r.stderr[-3000:])


def main():
    with tempfile.TemporaryDirectory() as d:
        arrs = sample_arrays()
        roundtrips(d, arrs)
        broken(d)
        fuzz(d)
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("tensor_io: all checks passed")


main()
