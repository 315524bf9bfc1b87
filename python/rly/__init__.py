"""rly from Python: a session over the C API of include/rly.h, through ctypes.

    import numpy as np, rly
    s = rly.Session()
    s.load('def @f(%x: Tensor[(2, 3), float32]) { exp(%x) }')
    y = s.run("@f", np.ones((2, 3), np.float32))     # a numpy array

Tensors go in and out through DLPack without copies: an argument whose data
is 64-byte aligned (rly.empty / rly.aligned make such arrays; torch tensors
and anything with __dlpack__ are taken as they are) is read in place, and a
result is the run time's own buffer handed over to a (writeable) numpy array.  Errors are
rly.Error, whose text is rly's diagnostic (file:line:col, the source line,
a caret).

librly.so is found at $RLY_LIBRARY, beside this package, or in the build
tree (build/python/librly.so from the source tree's top); the JIT's module
rly-jit.so at $RLY_JIT_MODULE or beside librly.so's build tree
(build/jit/rly-jit.so).
"""

import ctypes
import os
import time as _time

import numpy as np

__all__ = ["Session", "Error", "empty", "aligned"]

ALIGN = 64  # the run time's buffer alignment: arguments aligned so are not copied


class Error(Exception):
    """A failure reported by rly; str(e) is its diagnostic text."""


# ───────────────────────────── DLPack structs ─────────────────────────────

class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                     ("deleter", _DELETER)]

_KDLCPU = 1
_CODES = {"i": 0, "u": 1, "f": 2, "b": 1}  # DLPack 0.6 has no bool code: uint8
_KINDS = {0: "i", 1: "u", 2: "f"}


# ───────────────────────────── the library ─────────────────────────────

def _library_path():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("RLY_LIBRARY", ""), os.path.join(here, "librly.so"),
                  os.path.join(here, "..", "..", "build", "python", "librly.so")]
    for c in candidates:
        if c and os.path.exists(c):
            return os.path.abspath(c)
    raise ImportError("librly.so not found (set RLY_LIBRARY, or build with `ninja -C build`)")


def _find_jit_module(lib):
    if os.environ.get("RLY_JIT_MODULE"):
        return
    jit = os.path.join(os.path.dirname(lib), "..", "jit", "rly-jit.so")
    if os.path.exists(jit):
        os.environ["RLY_JIT_MODULE"] = os.path.abspath(jit)


def _load():
    path = _library_path()
    _find_jit_module(path)
    lib = ctypes.CDLL(path)
    sess, c_char_p, c_int = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    sigs = {
        "rly_open": (sess, [c_int]),
        "rly_close": (None, [sess]),
        "rly_set_exec": (c_int, [sess, c_int]),
        "rly_set_opt_level": (c_int, [sess, c_int]),
        "rly_set_max_memory": (c_int, [sess, ctypes.c_size_t]),
        "rly_load_text": (c_int, [sess, c_char_p, c_char_p]),
        "rly_load_file": (c_int, [sess, c_char_p]),
        "rly_import_onnx": (c_int, [sess, c_char_p, c_char_p]),
        "rly_run_passes": (c_int, [sess, c_char_p]),
        "rly_call": (c_int, [sess, c_char_p, ctypes.POINTER(_DLTensor), c_int,
                             ctypes.POINTER(ctypes.POINTER(_Managed)), c_int,
                             ctypes.POINTER(c_int)]),
        "rly_eval": (c_int, [sess, c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
        "rly_print": (ctypes.c_void_p, [sess]),
        "rly_free": (None, [ctypes.c_void_p]),
        "rly_error": (c_char_p, [sess]),
        "rly_kernel_count": (c_int, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_lib = _load()

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
# the same function on a raw PyObject pointer, as a capsule destructor gets it
_raw_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_NAME = b"dltensor"


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """A capsule nobody consumed (still named "dltensor") frees its tensor."""
    if _api.PyCapsule_IsValid(capsule, _NAME):
        m = ctypes.cast(_raw_pointer(capsule, _NAME), ctypes.POINTER(_Managed))
        m.contents.deleter(m)


class _Result:
    """One result tensor of rly_call, handed to numpy through DLPack."""

    def __init__(self, managed):
        self._m = managed

    def __dlpack_device__(self):
        return (_KDLCPU, 0)

    def __dlpack__(self, stream=None):
        m, self._m = self._m, None
        if m is None:
            raise Error("a result tensor can be taken only once")
        return _api.PyCapsule_New(ctypes.cast(m, ctypes.c_void_p), _NAME,
                                  ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    def __del__(self):
        if getattr(self, "_m", None):
            self._m.contents.deleter(self._m)


def _array(result):
    """A writeable numpy array over a result's data, without a copy; the
    tensor is freed with the array (np.from_dlpack would give a read-only
    one)."""
    dl = result._m.contents.dl_tensor
    if dl.dtype.code not in _KINDS or dl.dtype.lanes != 1:
        raise Error(f"a result of DLPack dtype code {dl.dtype.code} has no numpy dtype")
    dtype = np.dtype(f"{_KINDS[dl.dtype.code]}{dl.dtype.bits // 8}")
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = (ctypes.c_uint8 * n).from_address(dl.data + dl.byte_offset) if n else bytearray()
    if n:
        buf._owner = result  # freed when the last array over buf goes
    return np.frombuffer(buf, dtype).reshape(shape)


# ───────────────────────────── tensors in ─────────────────────────────

def empty(shape, dtype=np.float32):
    """An uninitialised numpy array whose data is 64-byte aligned (not copied by run)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(n + ALIGN, np.uint8)
    off = (-raw.ctypes.data) % ALIGN
    return raw[off:off + n].view(dtype).reshape(shape)


def aligned(a):
    """a itself when it is C-contiguous and 64-byte aligned, else an aligned copy."""
    a = np.asarray(a)
    if a.flags.c_contiguous and a.ctypes.data % ALIGN == 0:
        return a
    out = empty(a.shape, a.dtype)
    out[...] = a
    return out


def _numpy_tensor(a, keep):
    """A DLTensor over a numpy array (contiguous; a copy made contiguous if not)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind not in _CODES:
        raise Error(f"dtype {a.dtype} is not an int, uint, float or bool dtype")
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    keep.extend([a, shape])
    bits = 8 * a.dtype.itemsize
    return _DLTensor(a.ctypes.data, _Device(_KDLCPU, 0), a.ndim,
                     _DType(_CODES[a.dtype.kind], bits, 1), shape, None, 0)


def _dlpack_tensor(x, keep):
    """The DLTensor of an object with __dlpack__ (the capsule kept alive for the call)."""
    cap = x.__dlpack__()
    keep.append(cap)
    ptr = _api.PyCapsule_GetPointer(cap, _NAME)
    return ctypes.cast(ptr, ctypes.POINTER(_Managed)).contents.dl_tensor


def _tensor(x, keep):
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return _numpy_tensor(np.asarray(x), keep)
    return _dlpack_tensor(x, keep)


# ───────────────────────────── the session ─────────────────────────────

_EXEC = {"jit": 0, "interp": 1}


class Session:
    """An rly session: a module of definitions, session variables, compiled kernels."""

    def __init__(self, exec="jit", prelude=True, env=False):
        flags = (0 if prelude else 1) | (2 if env else 0)
        self._s = _lib.rly_open(flags)
        if not self._s:
            raise MemoryError("rly_open")
        self._max_memory = None
        self.exec = exec

    def close(self):
        if self._s:
            _lib.rly_close(self._s)
            self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _check(self, rc):
        if rc != 0:
            raise Error(_lib.rly_error(self._s).decode(errors="replace").rstrip("\n"))

    @property
    def exec(self):
        return self._exec

    @exec.setter
    def exec(self, mode):
        if mode not in _EXEC:
            raise ValueError(f"exec mode {mode!r} is not 'jit' or 'interp'")
        self._check(_lib.rly_set_exec(self._s, _EXEC[mode]))
        self._exec = mode

    @property
    def max_memory(self):
        return self._max_memory

    @max_memory.setter
    def max_memory(self, nbytes):
        """The session's limit on tensor data alive at once (rly's `:set max-memory`)."""
        self._check(_lib.rly_set_max_memory(self._s, int(nbytes)))
        self._max_memory = int(nbytes)

    def load(self, src, name=None):
        """Relay text, or a path: a .rly file, or an .onnx model imported as @main (or name)."""
        if isinstance(src, os.PathLike) or (isinstance(src, str) and "\n" not in src
                                            and os.path.exists(src)):
            path = os.fspath(src)
            if path.endswith(".onnx"):
                return self.import_onnx(path, name)
            return self._check(_lib.rly_load_file(self._s, path.encode()))
        self._check(_lib.rly_load_text(self._s, (name or "<python>").encode(), src.encode()))

    def import_onnx(self, path, name=None):
        """The ONNX model at path as @name (default @main), its weights bound."""
        self._check(_lib.rly_import_onnx(self._s, os.fspath(path).encode(),
                                         name.lstrip("@").encode() if name else None))

    def pass_(self, names):
        """Runs passes by name ("FuseOps", "EffectToState,ToANormalForm", ...)."""
        self._check(_lib.rly_run_passes(self._s, names.encode()))

    def print(self):
        """The module as canonical text."""
        p = _lib.rly_print(self._s)
        try:
            return ctypes.string_at(p).decode()
        finally:
            _lib.rly_free(p)

    def eval(self, expr):
        """Evaluates an expression; its printed value."""
        out = ctypes.c_void_p()
        self._check(_lib.rly_eval(self._s, expr.encode(), ctypes.byref(out)))
        try:
            return ctypes.string_at(out.value).decode()
        finally:
            _lib.rly_free(out.value)

    def run(self, func, *args, max_results=64):
        """Calls @func on tensors; one numpy array, or a tuple for a tuple result."""
        keep = []
        ts = (_DLTensor * max(len(args), 1))(*[_tensor(a, keep) for a in args])
        outs = (ctypes.POINTER(_Managed) * max_results)()
        n = ctypes.c_int()
        self._check(_lib.rly_call(self._s, func.lstrip("@").encode(), ts, len(args), outs,
                                  max_results, ctypes.byref(n)))
        arrays = tuple(_array(_Result(outs[i])) for i in range(n.value))
        return arrays[0] if n.value == 1 else arrays

    def time(self, func, *args, runs=None, seconds=1.0):
        """Times calls of @func: a dict of the median, min and mean in ms and the runs made."""
        args = [aligned(a) if isinstance(a, np.ndarray) else a for a in args]
        self.run(func, *args)  # compiles on first use
        times = []
        end = _time.perf_counter() + seconds
        while (runs is None and (_time.perf_counter() < end or len(times) < 3)) or \
                (runs is not None and len(times) < runs):
            t0 = _time.perf_counter()
            self.run(func, *args)
            times.append((_time.perf_counter() - t0) * 1e3)
        times.sort()
        return {"median_ms": times[len(times) // 2], "min_ms": times[0],
                "mean_ms": sum(times) / len(times), "runs": len(times)}

    @staticmethod
    def kernel_count():
        """Kernels the JIT compiled (or loaded from its cache) for the last session used."""
        return _lib.rly_kernel_count()
