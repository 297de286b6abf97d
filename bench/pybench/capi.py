"""ctypes binding of libsolbench_pybench.so (bench/pybench_capi.cpp): the C++ harness, driven from Python.

The library links the libtorch of the PyTorch it was built with, so it is loaded after `import torch` (the
dynamic loader then binds it to the libtorch this process already has) and refused when this Python's torch is
another version: the two would not share PyTorch's current stream, which every case runs on.
"""
from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path

LIBRARY_NAME = "libsolbench_pybench.so"
OK, FAILED, UNSUPPORTED = 0, 1, 2  # the callbacks' return codes (pybench_capi.cpp)

SETUP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64),
                         ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_size_t)
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_size_t)


class LibraryError(RuntimeError):
    """The library cannot be found or loaded, or was built against another PyTorch; the message says which."""


def library_path(build_dir: str | os.PathLike) -> Path:
    """$SOLBENCH_PYBENCH_LIB, else BUILD_DIR/bench/libsolbench_pybench.so."""
    env = os.environ.get("SOLBENCH_PYBENCH_LIB")
    return Path(env) if env else Path(build_dir) / "bench" / LIBRARY_NAME


def write_message(buffer: int, size: int, text: str) -> None:
    """text into a C buffer of `size` bytes, cut to fit and NUL-terminated."""
    if not buffer or size <= 0:
        return
    data = text.encode("utf-8", "replace")[: size - 1] + b"\0"
    ctypes.memmove(buffer, data, len(data))


class Harness:
    """The loaded library. torch must be imported first (load() does)."""

    def __init__(self, path: Path):
        import torch  # noqa: F401  (the library's libtorch must be this process's)
        if not path.is_file():
            raise LibraryError(f"{path}: not found. It is built with PyTorch installed: cmake --preset release && "
                               f"cmake --build --preset release --target solbench_pybench (or pass --build-dir, or "
                               f"set SOLBENCH_PYBENCH_LIB)")
        try:
            self.lib = ctypes.CDLL(str(path))
        except OSError as e:
            raise LibraryError(f"{path}: cannot be loaded: {e}") from None
        lib = self.lib
        lib.solbench_pybench_torch_version.restype = ctypes.c_char_p
        lib.solbench_pybench_add_impl.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.solbench_pybench_add_context.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.solbench_pybench_counter.argtypes = [ctypes.c_char_p, ctypes.c_double]
        lib.solbench_pybench_shapes.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                                ctypes.POINTER(ctypes.c_size_t)]
        lib.solbench_pybench_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), SETUP, LAUNCH]
        self.torch_version = lib.solbench_pybench_torch_version().decode()
        self._callbacks = ()  # the ctypes callbacks, alive while the library may call them

    def check_torch(self, python_torch_version: str) -> None:
        """LibraryError unless this Python's torch is the version the library was built against."""
        if python_torch_version.split("+")[0] != self.torch_version:
            raise LibraryError(f"the library was built against libtorch {self.torch_version}, this Python has torch "
                               f"{python_torch_version}: rebuild it with this Python's PyTorch (cmake configures "
                               f"with torch.utils.cmake_prefix_path)")

    def add_impl(self, op: str, impl: str) -> None:
        msg = ctypes.create_string_buffer(512)
        if self.lib.solbench_pybench_add_impl(op.encode(), impl.encode(), msg, len(msg)) != OK:
            raise ValueError(f"{op}/{impl}: {msg.value.decode()}")

    def add_context(self, key: str, value: str) -> None:
        self.lib.solbench_pybench_add_context(key.encode(), value.encode())

    def counter(self, name: str, value: float) -> None:
        """A counter of the case being set up (only inside the setup callback)."""
        if self.lib.solbench_pybench_counter(name.encode(), float(value)) != OK:
            raise RuntimeError("solbench_pybench_counter outside a setup call")

    def shapes(self, spec: str) -> dict:
        """--shapes=SPEC as bench_torch reads it: {"rmsnorm": [...], "attention": [...]} (pybench_shapes.h);
        ValueError with the harness's reason for a malformed SPEC."""
        needed = ctypes.c_size_t(0)
        size = 1 << 16
        while True:
            buf = ctypes.create_string_buffer(size)
            rc = self.lib.solbench_pybench_shapes(spec.encode(), buf, size, ctypes.byref(needed))
            if rc != FAILED:
                break
            size = needed.value
        if rc == UNSUPPORTED:
            raise ValueError(buf.value.decode())
        return json.loads(buf.value.decode())

    def main(self, argv: list, setup, launch) -> int:
        """bench_main over argv (argv[0] the program's name) with the two callbacks (pybench_capi.cpp says what
        each returns); its exit status."""
        self._callbacks = (SETUP(setup), LAUNCH(launch))
        args = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
        return self.lib.solbench_pybench_main(len(argv), args, *self._callbacks)
